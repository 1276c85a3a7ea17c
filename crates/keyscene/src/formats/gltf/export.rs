//! [`Scene`] → glTF document and buffer. The conventions are documented on the module
//! [`super`]; this file implements them.

use std::collections::HashMap;
use std::path::Path;

use glam::{DMat3, DMat4, DQuat, DVec3};
use gltf_json as json;
use json::animation::Interpolation;
use json::texture::WrappingMode;
use json::validation::{Checked::Valid, USize64};

use super::deform;
use super::geometry::{self, Primitive};
use super::{warning, Container, Error, ExternalImage, GltfFile, WriteOptions};
use super::{ASSUMED_ASPECT, AXIS_ROOT_NAME, DEFAULT_ZNEAR, JOINT_ROOT_NAME};
use crate::anim::hermite::{self, HermiteKey, Segment};
use crate::anim::{self, ChannelTarget, PartialPose, Pose, RotationTrack, Time, THREE_DS_FPS};
use crate::scene::{
    Axis, AxisSystem, FovAxis, LightKind, MapSlot, NodeKind, Scene, Transform, Warning,
};

/// A glTF accessor index.
type Accessor = json::Index<json::Accessor>;

/// Converts `scene` to glTF in memory (see the module docs for every conversion rule).
///
/// Fails only when the result cannot be represented (a GLB over 4 GiB) or serialised; what is
/// converted inexactly or left out is reported in [`GltfFile::warnings`].
pub fn write(scene: &Scene, opts: &WriteOptions) -> Result<GltfFile, Error> {
    scene.validate().map_err(|e| Error::Write(format!("inconsistent scene: {e}")))?;
    let mut out = Out::new(opts.container.clone());
    out.influence_sets = opts.max_influences.max(1).div_ceil(4);
    out.embed = opts.embed;
    out.root.asset.generator = Some(format!("keyscene {}", env!("CARGO_PKG_VERSION")));

    let axes = opts.source_axes.unwrap_or(scene.meta.axes);
    let axis = if opts.convert_axes { axis_rotation(axes, &mut out.warnings) } else { None };
    let metres = opts
        .source_metres_per_unit
        .filter(|m| m.is_finite() && *m > 0.0)
        .unwrap_or_else(|| scene.meta.units.metres());
    let unit_scale = (opts.convert_axes && metres.is_finite() && metres > 0.0 && metres != 1.0)
        .then_some(metres);
    let axis = match (axis, unit_scale) {
        (None, Some(_)) => Some(DQuat::IDENTITY),
        (a, _) => a,
    };
    // glTF wants a skin's joints under one root: when some skin's joints (with its mesh node)
    // are in separate trees and there is no axis root, an identity root node joins them.
    let joint_root = axis.is_none()
        && scene.nodes.iter().enumerate().any(|(i, node)| {
            let Some(skin) = node.mesh.and_then(|m| skin_of(scene, &scene.meshes[m])) else {
                return false;
            };
            let mut nodes: Vec<usize> =
                skin.joints.iter().map(|j| j.node).filter(|&j| j < scene.nodes.len()).collect();
            nodes.push(i);
            common_ancestor(scene, &nodes).is_none()
        });
    let base = usize::from(axis.is_some() || joint_root);
    if let Some(q) = axis {
        let mut root = json::Node { name: Some(AXIS_ROOT_NAME.into()), ..Default::default() };
        set_trs(&mut root, DVec3::ZERO, q, DVec3::splat(unit_scale.unwrap_or(1.0)));
        out.root.nodes.push(root);
    } else if joint_root {
        out.root
            .nodes
            .push(json::Node { name: Some(JOINT_ROOT_NAME.into()), ..Default::default() });
    }

    let anim0 = (!scene.animations.is_empty()).then_some(0);
    let rest_frame = scene.animations.first().map(|a| a.frame_range.0.max(0.0)).unwrap_or(0.0);
    let rest = scene.evaluate(anim0, Time::Frame(rest_frame));
    let rest_unaimed = unaimed_world(scene, &rest);
    let rest_local = gltf_locals(scene, &rest, &rest_unaimed);
    // The nodes' glTF TRS at rest: their own parts where glTF's local is the scene's.
    let rest_channels = anim::channels_by_node(scene, anim0);
    let direct = direct_nodes(scene);
    let rest_trs: Vec<(DVec3, DQuat, DVec3)> = (0..scene.nodes.len())
        .map(|i| {
            direct[i]
                .then(|| anim::node_parts(scene, i, &rest_channels[i], rest_frame))
                .flatten()
                .unwrap_or_else(|| decompose(rest_local[i]))
        })
        .collect();

    // glTF node order: [axis root], the scene's nodes in order, then the aim helpers.
    let n = scene.nodes.len();
    let mut children: Vec<Vec<json::Index<json::Node>>> = vec![Vec::new(); n];
    let mut helpers: Vec<Helper> = Vec::new();
    let mut helper_nodes: Vec<json::Node> = Vec::new();
    // One glTF mesh per (scene mesh, geometry transform bits).
    let mut meshes: HashMap<(usize, [u64; 16]), Option<json::Index<json::Mesh>>> = HashMap::new();
    // Scene nodes carrying a glTF mesh, with that mesh.
    let mut mesh_nodes: Vec<(usize, json::Index<json::Mesh>)> = Vec::new();
    for (i, node) in scene.nodes.iter().enumerate() {
        let (t, r, s) = rest_trs[i];
        let mut g =
            json::Node { name: Some(gltf_name(&node.name, &node.instance)), ..Default::default() };
        set_trs(&mut g, t, r, s);
        if let Some(m) = node.mesh {
            let key = (m, node.geometry_transform().to_cols_array().map(f64::to_bits));
            let index = match meshes.get(&key) {
                Some(&ix) => ix,
                None => {
                    let ix = out.mesh(scene, m, node.geometry_transform(), &node.name);
                    meshes.insert(key, ix);
                    ix
                }
            };
            g.mesh = index;
            if let Some(ix) = index {
                mesh_nodes.push((i, ix));
                let targets = &scene.meshes[m].morph_targets;
                let weights = &rest.morph_weights[m];
                if weights.iter().zip(targets).any(|(w, t)| *w != t.default_weight) {
                    let w = deform::gltf_weights(&scene.meshes[m], weights);
                    g.weights = Some(w.iter().map(|&w| w as f32).collect());
                }
            }
        }
        let aim_target = match node.kind {
            NodeKind::Camera(c) => scene.cameras[c].target,
            NodeKind::Light(l) => scene.lights[l].target,
            _ => None,
        };
        // The node that carries the camera/light: the helper when aimed, else the node.
        let holder = if aim_target.is_some() {
            let index = json::Index::new((base + n + helper_nodes.len()) as u32);
            let mut helper =
                json::Node { name: Some(format!("{} aim", node.name)), ..Default::default() };
            let (t, r, s) = decompose(rest_unaimed[i].inverse() * rest.world[i]);
            set_trs(&mut helper, t, r, s);
            helper_nodes.push(helper);
            children[i].push(index);
            helpers.push(Helper { node: i, index });
            helper_nodes.last_mut()
        } else {
            None
        }
        .unwrap_or(&mut g);
        match node.kind {
            NodeKind::Camera(c) => holder.camera = Some(out.camera(scene, c)),
            NodeKind::Light(l) => {
                if let Some(light) = out.light(scene, l) {
                    holder.extensions = Some(json::extensions::scene::Node {
                        khr_lights_punctual: Some(
                            json::extensions::scene::khr_lights_punctual::KhrLightsPunctual {
                                light,
                            },
                        ),
                        ..Default::default()
                    });
                }
            }
            NodeKind::Ambient => {
                out.warnings.push(warning(
                    format!("node \"{}\"", node.name),
                    "ambient light left out: glTF has no ambient light",
                ));
            }
            _ => {}
        }
        g.extras = node_extras(&node.name, &node.instance, node.hidden);
        out.root.nodes.push(g);
    }
    out.root.nodes.extend(helper_nodes);
    for &(i, mesh) in &mesh_nodes {
        if let Some(skin) = out.skin(scene, i, mesh, base) {
            out.root.nodes[base + i].skin = Some(skin);
        }
    }
    for (i, node) in scene.nodes.iter().enumerate() {
        let mut list: Vec<_> =
            node.children.iter().map(|&c| json::Index::new((base + c) as u32)).collect();
        list.extend(children[i].iter().copied());
        if !list.is_empty() {
            out.root.nodes[base + i].children = Some(list);
        }
    }
    let roots: Vec<_> = scene.roots.iter().map(|&r| json::Index::new((base + r) as u32)).collect();
    let scene_nodes = if base == 1 {
        if !roots.is_empty() {
            out.root.nodes[0].children = Some(roots);
        }
        vec![json::Index::new(0)]
    } else {
        roots
    };
    // A glTF scene needs at least one node: an empty scene gets none.
    if !scene_nodes.is_empty() {
        out.root.scenes.push(json::Scene {
            extensions: None,
            extras: Default::default(),
            name: None,
            nodes: scene_nodes,
        });
        out.root.scene = Some(json::Index::new(0));
    }

    if opts.animations {
        let morph_nodes: Vec<(usize, usize)> = mesh_nodes
            .iter()
            .filter_map(|&(i, _)| scene.nodes[i].mesh.map(|m| (i, m)))
            .filter(|&(_, m)| !scene.meshes[m].morph_targets.is_empty())
            .collect();
        let ctx = AnimContext {
            base,
            rest: &rest,
            rest_trs: &rest_trs,
            rest_unaimed: &rest_unaimed,
            helpers: &helpers,
            morph_nodes: &morph_nodes,
        };
        for a in 0..scene.animations.len() {
            if opts.only_animation.is_none_or(|only| only == a) {
                out.animation(scene, a, &ctx, opts.resample_fps);
            }
        }
    }
    out.finish()
}

/// Writes `scene` to `path` as `.glb` or `.gltf` (by extension, overriding
/// `opts.container`), atomically: each file goes to a temporary file that is renamed into
/// place. For `.gltf` the buffer `<stem>.bin` and the referenced images are written beside it
/// first, the `.gltf` last. Returns the conversion warnings.
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Vec<Warning>, crate::Error> {
    let mut opts = opts.clone();
    opts.container = super::container_for(path);
    let file = write(scene, &opts)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let put = |dest: &Path, bytes: &[u8]| {
        crate::write_atomically::<crate::Error>(dest, |w| {
            w.write_all(bytes).map_err(|source| crate::Error::Io { path: dest.into(), source })
        })
    };
    if let Some((_, bin)) = &file.bin {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scene");
        put(&dir.join(format!("{stem}.bin")), bin)?;
    }
    if opts.copy_textures {
        let mut images = Vec::new();
        for img in &file.images {
            let dest = dir.join(&img.file_name);
            let bytes: std::sync::Arc<[u8]> = match &img.bytes {
                Some(b) => b.clone(),
                None => {
                    let same = match (dest.canonicalize(), img.source.canonicalize()) {
                        (Ok(a), Ok(b)) => a == b,
                        _ => false,
                    };
                    if same {
                        continue;
                    }
                    std::fs::read(&img.source)
                        .map_err(|source| crate::Error::Io { path: img.source.clone(), source })?
                        .into()
                }
            };
            images.push(crate::output::Companion {
                path: dest,
                bytes,
                what: format!("the image {}", img.file_name),
            });
        }
        let source = opts.source.clone().unwrap_or_else(|| crate::output::source_name(path));
        crate::output::write_companions(&images, &source)?;
    }
    put(path, &file.main)?;
    Ok(file.warnings)
}

/// Integers below 2^24 are exact in f32: the limit for `_KEYSCENE_VERTEX` values.
const MAX_EXACT_F32_INT: u32 = 1 << 24;

/// How far before a jump (two keys on one frame) an extra sample is taken, as a fraction of
/// the sampling step.
const JUMP_LEAD: f64 = 1e-3;

/// How close to a key (or the animation's first or last frame) a resampling grid sample may
/// be, as a fraction of the sampling step, before it is left out: closer than this the pair
/// adds nothing to the curve (the segment between them is shorter than any frame a player
/// shows) and only crowds the key. Far below [`JUMP_LEAD`], so the sample before a jump stays.
const SAMPLE_MERGE: f64 = 1e-4;

/// A helper node carrying an aimed camera or light: `index` in glTF, for scene node `node`.
struct Helper {
    node: usize,
    index: json::Index<json::Node>,
}

/// What the animation writer needs from the node pass.
struct AnimContext<'a> {
    /// glTF index of scene node 0 (1 with the axis root).
    base: usize,
    rest: &'a Pose,
    /// Every scene node's glTF translation, rotation and scale at rest.
    rest_trs: &'a [(DVec3, DQuat, DVec3)],
    rest_unaimed: &'a [DMat4],
    helpers: &'a [Helper],
    /// (scene node, scene mesh) of every node showing a mesh with morph targets.
    morph_nodes: &'a [(usize, usize)],
}

/// What the skin pass needs to know about a written glTF mesh.
#[derive(Debug, Clone, Copy)]
struct MeshInfo {
    /// Some vertex is bound to the extra mesh-node joint (see [`deform::influences`]).
    self_joint: bool,
}

/// Where a texture's image comes from: a file beside the scene, or bytes the scene carries
/// (keyed by their shared allocation, so maps sharing one embedded image share one glTF image).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ImageKey {
    File(std::path::PathBuf),
    Embedded(usize),
}

/// The document being built, its binary buffer and caches.
struct Out {
    root: json::Root,
    bin: Vec<u8>,
    container: Container,
    warnings: Vec<Warning>,
    /// Written materials by (scene material, whether the primitive has `TEXCOORD_0`): a
    /// material's textures are bound only on primitives that carry the UV set they read.
    materials: HashMap<(usize, bool), json::Index<json::Material>>,
    /// Textures by image and wrapS/wrapT (GL enums) (`None`: the image could not be used).
    textures: HashMap<(ImageKey, [u32; 2]), Option<json::Index<json::Texture>>>,
    /// Images by source, shared by textures that differ in sampler only.
    images_by_path: HashMap<ImageKey, json::Index<json::Image>>,
    /// Samplers by wrapS/wrapT (GL enums; REPEAT both ways, glTF's default, needs none).
    samplers: HashMap<[u32; 2], json::Index<json::texture::Sampler>>,
    images: Vec<ExternalImage>,
    /// `JOINTS_n`/`WEIGHTS_n` sets per skinned vertex.
    influence_sets: usize,
    /// Per written glTF mesh (by index).
    mesh_info: HashMap<u32, MeshInfo>,
    /// `.gltf` only: buffer as a data URI, images inside it.
    embed: bool,
}

impl Out {
    fn new(container: Container) -> Out {
        Out {
            root: json::Root::default(),
            bin: Vec::new(),
            container,
            warnings: Vec::new(),
            materials: HashMap::new(),
            textures: HashMap::new(),
            images_by_path: HashMap::new(),
            samplers: HashMap::new(),
            images: Vec::new(),
            influence_sets: 1,
            mesh_info: HashMap::new(),
            embed: false,
        }
    }

    /// Appends `bytes` to the buffer (4-byte aligned) as a new buffer view.
    fn view(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        json::Index::push(
            &mut self.root.buffer_views,
            json::buffer::View {
                buffer: json::Index::new(0),
                byte_length: USize64(bytes.len() as u64),
                byte_offset: Some(USize64(offset as u64)),
                byte_stride: None,
                name: None,
                target: target.map(Valid),
                extensions: None,
                extras: Default::default(),
            },
        )
    }

    /// A float accessor of `N`-component elements, with min/max when asked.
    fn floats<const N: usize>(
        &mut self,
        data: &[[f32; N]],
        type_: json::accessor::Type,
        target: Option<json::buffer::Target>,
        min_max: bool,
    ) -> json::Index<json::Accessor> {
        let bytes: Vec<u8> = data.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.view(&bytes, target);
        let (min, max) = if min_max {
            let mut lo = [f32::INFINITY; N];
            let mut hi = [f32::NEG_INFINITY; N];
            for v in data {
                for k in 0..N {
                    lo[k] = lo[k].min(v[k]);
                    hi[k] = hi[k].max(v[k]);
                }
            }
            (Some(json::Value::from(lo.to_vec())), Some(json::Value::from(hi.to_vec())))
        } else {
            (None, None)
        };
        self.accessor(view, data.len(), json::accessor::ComponentType::F32, type_, min, max)
    }

    /// An index accessor: u16 when every index fits below u16's primitive-restart value.
    fn indices(&mut self, indices: &[u32], vertex_count: usize) -> json::Index<json::Accessor> {
        let target = Some(json::buffer::Target::ElementArrayBuffer);
        let (view, ct) = if vertex_count < usize::from(u16::MAX) {
            let bytes: Vec<u8> = indices.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect();
            (self.view(&bytes, target), json::accessor::ComponentType::U16)
        } else {
            let bytes: Vec<u8> = indices.iter().flat_map(|&i| i.to_le_bytes()).collect();
            (self.view(&bytes, target), json::accessor::ComponentType::U32)
        };
        self.accessor(view, indices.len(), ct, json::accessor::Type::Scalar, None, None)
    }

    fn accessor(
        &mut self,
        view: json::Index<json::buffer::View>,
        count: usize,
        ct: json::accessor::ComponentType,
        type_: json::accessor::Type,
        min: Option<json::Value>,
        max: Option<json::Value>,
    ) -> json::Index<json::Accessor> {
        json::Index::push(
            &mut self.root.accessors,
            json::Accessor {
                buffer_view: Some(view),
                byte_offset: None,
                count: USize64(count as u64),
                component_type: Valid(json::accessor::GenericComponentType(ct)),
                extensions: None,
                extras: Default::default(),
                type_: Valid(type_),
                min,
                max,
                name: None,
                normalized: false,
                sparse: None,
            },
        )
    }

    /// The glTF mesh for scene mesh `m` baked through `bake`; `None` when it has no triangles.
    fn mesh(
        &mut self,
        scene: &Scene,
        m: usize,
        bake: DMat4,
        node: &str,
    ) -> Option<json::Index<json::Mesh>> {
        let mesh = &scene.meshes[m];
        let (mut prims, bad) = geometry::primitives(mesh, bake);
        for p in &mut prims {
            let normal_mapped = self
                .primitive_material(scene, mesh, p.material_slot, !p.uvs.is_empty())
                .is_some_and(|ix| self.root.materials[ix.value()].normal_texture.is_some());
            // Source tangents are written whether or not a normal map needs them.
            if normal_mapped || p.tangents.is_some() {
                geometry::add_tangents(p);
            }
        }
        let place = format!("node \"{node}\" › mesh \"{}\"", mesh.name);
        if bad > 0 {
            self.warnings.push(warning(&place, format!("{bad} non-finite numbers written as 0")));
        }
        if mesh.geometry_cache.is_some() {
            self.warnings.push(warning(
                &place,
                "geometry cache not written (docs/gltf.md, \"Geometry caches\"): the mesh is \
                 written undeformed by it",
            ));
        }
        if prims.is_empty() {
            self.warnings.push(warning(place, "mesh has no triangles: left out"));
            return None;
        }
        let mut primitives: Vec<json::mesh::Primitive> =
            prims.iter().map(|p| self.primitive(scene, mesh, p)).collect();
        let skin = skin_of(scene, mesh);
        let mut info = MeshInfo { self_joint: false };
        if let Some(skin) = skin {
            let mut truncated = 0;
            for (p, g) in prims.iter().zip(&mut primitives) {
                let inf = deform::influences(skin, p, self.influence_sets, scene.nodes.len());
                truncated += inf.truncated;
                info.self_joint |= inf.self_joint;
                self.influence_attributes(&inf, g);
            }
            if truncated > 0 {
                self.warnings.push(warning(
                    &place,
                    format!(
                        "{truncated} vertices have more than {} joint influences: the weakest \
                         were dropped and the rest renormalised (raise max_influences to keep them)",
                        4 * self.influence_sets
                    ),
                ));
            }
        }
        let layout = deform::target_layout(mesh);
        let mut weights = None;
        if !layout.is_empty() {
            for (p, g) in prims.iter().zip(&mut primitives) {
                let data: Vec<deform::TargetData> =
                    layout.iter().map(|&t| deform::target_data(mesh, t, p, bake)).collect();
                let with_normals = data.iter().any(|d| d.normals.is_some());
                let targets = data
                    .iter()
                    .map(|d| {
                        use json::accessor::Type;
                        let vb = Some(json::buffer::Target::ArrayBuffer);
                        let positions = Some(self.floats(&d.positions, Type::Vec3, vb, true));
                        let normals = with_normals.then(|| {
                            let zero = vec![[0.0; 3]; d.positions.len()];
                            self.floats(d.normals.as_ref().unwrap_or(&zero), Type::Vec3, vb, false)
                        });
                        json::mesh::MorphTarget { positions, normals, tangents: None }
                    })
                    .collect();
                g.targets = Some(targets);
            }
            let defaults: Vec<f64> = mesh.morph_targets.iter().map(|t| t.default_weight).collect();
            weights =
                Some(deform::gltf_weights(mesh, &defaults).into_iter().map(|w| w as f32).collect());
            if mesh.morph_targets.iter().any(|t| !t.inbetweens.is_empty()) {
                self.warnings.push(warning(
                    &place,
                    "in-between shapes written as targets of their own whose weights follow the \
                     channel weight piecewise linearly: exact at every animation sample",
                ));
            }
        }
        let names: Vec<String> = layout.iter().map(|&t| deform::target_name(mesh, t)).collect();
        let extras = (!names.is_empty())
            .then(|| {
                let v = serde_json::json!({ "targetNames": names });
                serde_json::value::RawValue::from_string(v.to_string()).ok()
            })
            .flatten();
        let ix = json::Index::push(
            &mut self.root.meshes,
            json::Mesh {
                extensions: None,
                extras,
                name: Some(mesh.name.clone()),
                primitives,
                weights,
            },
        );
        self.mesh_info.insert(ix.value() as u32, info);
        Some(ix)
    }

    /// Adds `JOINTS_n`/`WEIGHTS_n` to a primitive: joints as unsigned bytes when every index
    /// fits, else unsigned shorts.
    fn influence_attributes(&mut self, inf: &deform::Influences, g: &mut json::mesh::Primitive) {
        use json::accessor::{ComponentType, Type};
        use json::mesh::Semantic;
        let vb = Some(json::buffer::Target::ArrayBuffer);
        let small = inf.joints.iter().flatten().flatten().all(|&j| j <= 255);
        for (set, (joints, weights)) in inf.joints.iter().zip(&inf.weights).enumerate() {
            let (bytes, ct): (Vec<u8>, _) = if small {
                (joints.iter().flatten().map(|&j| j as u8).collect(), ComponentType::U8)
            } else {
                (
                    joints.iter().flatten().flat_map(|j| j.to_le_bytes()).collect(),
                    ComponentType::U16,
                )
            };
            let view = self.view(&bytes, vb);
            let j = self.accessor(view, joints.len(), ct, Type::Vec4, None, None);
            g.attributes.insert(Valid(Semantic::Joints(set as u32)), j);
            let w = self.floats(weights, Type::Vec4, vb, false);
            g.attributes.insert(Valid(Semantic::Weights(set as u32)), w);
        }
    }

    /// The glTF skin of scene node `i` showing the skinned glTF mesh `mesh` (see the module
    /// docs); `None` when the node's mesh has no usable skin.
    fn skin(
        &mut self,
        scene: &Scene,
        i: usize,
        mesh: json::Index<json::Mesh>,
        base: usize,
    ) -> Option<json::Index<json::Skin>> {
        let node = &scene.nodes[i];
        let skin = skin_of(scene, &scene.meshes[node.mesh?])?;
        let info = self.mesh_info.get(&(mesh.value() as u32)).copied()?;
        let place = format!("node \"{}\" › skin", node.name);
        let mut joints: Vec<usize> = Vec::with_capacity(skin.joints.len() + 1);
        let mut ibm: Vec<[f32; 16]> = Vec::with_capacity(skin.joints.len() + 1);
        let mut bad = 0;
        let mut projective = 0;
        for j in &skin.joints {
            let mut m = j.inverse_bind.to_cols_array();
            if j.node < scene.nodes.len() && m.iter().all(|x| x.is_finite()) {
                // glTF wants affine matrices, last row exactly (0, 0, 0, 1).
                let scale = m.iter().fold(1.0f64, |a, x| a.max(x.abs()));
                if [m[3], m[7], m[11], m[15] - 1.0].iter().any(|x| x.abs() > 1e-9 * scale) {
                    projective += 1;
                }
                (m[3], m[7], m[11], m[15]) = (0.0, 0.0, 0.0, 1.0);
                joints.push(j.node);
                ibm.push(m.map(|x| x as f32));
            } else {
                // Keeps the joint numbering: the vertex follows the mesh node instead.
                bad += 1;
                joints.push(i);
                ibm.push(DMat4::IDENTITY.to_cols_array().map(|x| x as f32));
            }
        }
        if info.self_joint {
            joints.push(i);
            ibm.push(DMat4::IDENTITY.to_cols_array().map(|x| x as f32));
        }
        if bad > 0 {
            self.warnings.push(warning(
                &place,
                format!("{bad} joints name no node or have a non-finite bind matrix: their vertices follow the mesh node"),
            ));
        }
        if projective > 0 {
            self.warnings.push(warning(
                &place,
                format!("{projective} inverse bind matrices are not affine: last row written as (0, 0, 0, 1)"),
            ));
        }
        if skin.dq_weights.iter().any(|&d| d > 0.0) {
            self.warnings.push(warning(
                &place,
                "dual-quaternion skinning written as linear blend skinning (glTF has only linear)",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        if !joints.iter().all(|j| seen.insert(*j)) {
            self.warnings.push(warning(
                &place,
                "a node is listed twice among the joints (glTF wants each once)",
            ));
        }
        let view = {
            let bytes: Vec<u8> = ibm.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
            self.view(&bytes, None)
        };
        let ibm = self.accessor(
            view,
            ibm.len(),
            json::accessor::ComponentType::F32,
            json::accessor::Type::Mat4,
            None,
            None,
        );
        let skeleton = common_ancestor(scene, &joints)
            .map(|a| base + a)
            .or((base == 1).then_some(0))
            .map(|a| json::Index::new(a as u32));
        if skeleton.is_none() {
            self.warnings.push(warning(
                &place,
                "joints share no ancestor: glTF wants a common root (write with a root node)",
            ));
        }
        Some(json::Index::push(
            &mut self.root.skins,
            json::Skin {
                extensions: None,
                extras: Default::default(),
                inverse_bind_matrices: Some(ibm),
                joints: joints.iter().map(|&j| json::Index::new((base + j) as u32)).collect(),
                name: Some(node.name.clone()),
                skeleton,
            },
        ))
    }

    fn primitive(
        &mut self,
        scene: &Scene,
        mesh: &crate::scene::Mesh,
        p: &Primitive,
    ) -> json::mesh::Primitive {
        use json::accessor::Type;
        use json::mesh::Semantic;
        let vb = Some(json::buffer::Target::ArrayBuffer);
        let mut attributes = std::collections::BTreeMap::new();
        attributes
            .insert(Valid(Semantic::Positions), self.floats(&p.positions, Type::Vec3, vb, true));
        attributes.insert(Valid(Semantic::Normals), self.floats(&p.normals, Type::Vec3, vb, false));
        for (set, uvs) in p.uvs.iter().enumerate() {
            attributes.insert(
                Valid(Semantic::TexCoords(set as u32)),
                self.floats(uvs, Type::Vec2, vb, false),
            );
        }
        if let Some(colors) = &p.colors {
            attributes
                .insert(Valid(Semantic::Colors(0)), self.floats(colors, Type::Vec4, vb, false));
        }
        if let Some(tangents) = &p.tangents {
            attributes
                .insert(Valid(Semantic::Tangents), self.floats(tangents, Type::Vec4, vb, false));
        }
        if p.source_vertices.iter().all(|&v| v < MAX_EXACT_F32_INT) {
            let ids: Vec<[f32; 1]> = p.source_vertices.iter().map(|&v| [v as f32]).collect();
            let semantic = Semantic::Extras(super::SOURCE_VERTEX_ATTRIBUTE[1..].to_string());
            attributes.insert(Valid(semantic), self.floats(&ids, Type::Scalar, vb, false));
        }
        let indices = Some(self.indices(&p.indices, p.positions.len()));
        let material = self.primitive_material(scene, mesh, p.material_slot, !p.uvs.is_empty());
        json::mesh::Primitive {
            attributes,
            extensions: None,
            extras: Default::default(),
            indices,
            material,
            mode: Valid(json::mesh::Mode::Triangles),
            targets: None,
        }
    }

    /// The glTF material of a mesh's material slot (written on first use), if the slot names
    /// one the scene has. `has_uvs`: the primitive has `TEXCOORD_0`, which every texture the
    /// writer binds reads (glTF 2.0 §3.9.2: a `texCoord` must name an attribute of the
    /// primitive); without it the material is written without its textures.
    fn primitive_material(
        &mut self,
        scene: &Scene,
        mesh: &crate::scene::Mesh,
        slot: u32,
        has_uvs: bool,
    ) -> Option<json::Index<json::Material>> {
        mesh.material_slots
            .get(slot as usize)
            .copied()
            .flatten()
            .filter(|&m| m < scene.materials.len())
            .map(|m| self.material(scene, m, has_uvs))
    }

    fn material(&mut self, scene: &Scene, m: usize, has_uvs: bool) -> json::Index<json::Material> {
        if let Some(&ix) = self.materials.get(&(m, has_uvs)) {
            return ix;
        }
        let mat = &scene.materials[m];
        let clamp = |x: f32| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
        let alpha = clamp(1.0 - mat.transparency);
        let d = mat.effective_diffuse().to_array().map(clamp);
        // Clamping is not silent (issue 12 §3, "Values that cannot be right").
        let raw = mat.effective_diffuse().to_array();
        if raw.iter().any(|&x| !(0.0..=1.0).contains(&x)) {
            self.warnings.push(warning(
                format!("material \"{}\"", mat.name),
                format!(
                    "diffuse colour ({}, {}, {}) outside 0..1: baseColorFactor clamped to \
                     ({}, {}, {}), non-finite components to 0",
                    raw[0], raw[1], raw[2], d[0], d[1], d[2]
                ),
            ));
        }
        let textured = [MapSlot::Diffuse, MapSlot::Emissive, MapSlot::Bump];
        let maps: &[crate::scene::TextureMap] = if has_uvs {
            &mat.maps
        } else {
            if mat.maps.iter().any(|t| textured.contains(&t.slot)) {
                self.warnings.push(warning(
                    format!("material \"{}\"", mat.name),
                    "used on a mesh without UVs: written there without its textures",
                ));
            }
            &[]
        };
        let base_color_texture = self.texture_info(&mat.name, maps, MapSlot::Diffuse);
        let emissive_texture = self.texture_info(&mat.name, maps, MapSlot::Emissive);
        let normal_texture = self.texture_info(&mat.name, maps, MapSlot::Bump).map(|info| {
            json::material::NormalTexture {
                index: info.index,
                scale: 1.0,
                tex_coord: info.tex_coord,
                extensions: info
                    .extensions
                    .map(|e| json::extensions::material::NormalTexture { others: e.others }),
                extras: Default::default(),
            }
        });
        let g = json::Material {
            alpha_mode: Valid(if alpha < 1.0 {
                json::material::AlphaMode::Blend
            } else {
                json::material::AlphaMode::Opaque
            }),
            double_sided: mat.two_sided,
            name: Some(mat.name.clone()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor([d[0], d[1], d[2], alpha]),
                base_color_texture,
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(clamp(1.0 - mat.shininess)),
                ..Default::default()
            },
            emissive_factor: json::material::EmissiveFactor(if emissive_texture.is_some() {
                [1.0; 3]
            } else {
                d.map(|c| clamp(c * clamp(mat.self_illumination)))
            }),
            emissive_texture,
            normal_texture,
            ..Default::default()
        };
        let ix = json::Index::push(&mut self.root.materials, g);
        self.materials.insert((m, has_uvs), ix);
        ix
    }

    /// The texture reference for the first map of `slot`, with KHR_texture_transform when the
    /// map's [`UvTransform`](crate::scene::UvTransform) is not the identity.
    ///
    /// The model's transform `uv' = o + R(θ)·(s ∘ uv)` works on V-up coordinates, glTF's on
    /// the V-down ones the writer stores (`g = (u, 1 − v)`). Substituting gives
    /// `g' = offset + R(−θ)·(s ∘ g)` with `offset = (oᵤ − s_v·sin θ, 1 − o_v − s_v·cos θ)`:
    /// KHR_texture_transform's rotation `−θ` (its `R` is counter-clockwise in V-down space),
    /// scale `s` unchanged.
    fn texture_info(
        &mut self,
        material: &str,
        maps: &[crate::scene::TextureMap],
        slot: MapSlot,
    ) -> Option<json::texture::Info> {
        let map = maps.iter().find(|t| t.slot == slot)?;
        let index = self.texture(material, map)?;
        let t = map.uv_transform;
        let extensions = (t != crate::scene::UvTransform::default()
            && t.scale.is_finite()
            && t.offset.is_finite()
            && t.rotation_degrees.is_finite())
        .then(|| {
            use json::extensions::texture as ext;
            let th = f64::from(t.rotation_degrees).to_radians();
            let (o, sc) = (t.offset.as_dvec2(), t.scale.as_dvec2());
            let offset = [o.x - sc.y * th.sin(), 1.0 - o.y - sc.y * th.cos()];
            let used = "KHR_texture_transform".to_string();
            if !self.root.extensions_used.contains(&used) {
                self.root.extensions_used.push(used);
            }
            // Written through `others`: gltf-json's own struct serialises an absent `texCoord`
            // as null, which the validator rejects.
            let mut others = serde_json::Map::new();
            others.insert(
                "KHR_texture_transform".into(),
                serde_json::json!({
                    "offset": offset.map(|x| x as f32),
                    "rotation": -th as f32,
                    "scale": t.scale.to_array(),
                }),
            );
            ext::Info { texture_transform: None, others }
        });
        Some(json::texture::Info { index, tex_coord: 0, extensions, extras: Default::default() })
    }

    /// The texture for a map whose image the scene carries ([`TextureMap::embedded`], always
    /// written into the buffer) or whose file was found (embedded in GLB, referenced by a
    /// `.gltf`).
    ///
    /// [`TextureMap::embedded`]: crate::scene::TextureMap::embedded
    fn texture(
        &mut self,
        material: &str,
        map: &crate::scene::TextureMap,
    ) -> Option<json::Index<json::Texture>> {
        let place = format!("material \"{material}\" › map \"{}\"", map.file);
        let image = match (&map.embedded, &map.resolved) {
            (Some(bytes), _) => ImageKey::Embedded(bytes.as_ptr() as usize),
            (None, Some(path)) => ImageKey::File(path.clone()),
            (None, None) => {
                self.warnings.push(warning(place, "texture file not found: left out"));
                return None;
            }
        };
        let wrap = wrap_modes(map);
        let key = (image.clone(), wrap.map(|w| w.as_gl_enum()));
        if let Some(&ix) = self.textures.get(&key) {
            return ix;
        }
        if self.textures.iter().any(|((p, _), ix)| *p == image && ix.is_none()) {
            return None;
        }
        let base_name = |f: &str| f.rsplit(['/', '\\']).next().unwrap_or(f).to_string();
        let file_name = match &map.resolved {
            Some(path) if map.embedded.is_none() => path
                .file_name()
                .and_then(|n| n.to_str())
                .map_or_else(|| map.file.clone(), str::to_string),
            _ => base_name(&map.file),
        };
        let source = match self.images_by_path.get(&image) {
            Some(&ix) => ix,
            None => {
                let bytes: std::borrow::Cow<'_, [u8]> = match (&map.embedded, &image) {
                    (Some(bytes), _) => std::borrow::Cow::Borrowed(&bytes[..]),
                    (None, ImageKey::File(path)) => match std::fs::read(path) {
                        Ok(b) => std::borrow::Cow::Owned(b),
                        Err(e) => {
                            self.warnings
                                .push(warning(place, format!("{}: {e}: left out", path.display())));
                            self.textures.insert(key, None);
                            return None;
                        }
                    },
                    (None, ImageKey::Embedded(_)) => return None,
                };
                // A `.gltf` refers to a found file by name unless told to embed; everything
                // else goes into the buffer.
                let external = match &image {
                    ImageKey::File(path) if !self.embed && self.container != Container::Glb => {
                        Some(path.clone())
                    }
                    _ => None,
                };
                // glTF allows PNG and JPEG only: other images the `image` crate decodes
                // (TGA, BMP: what `render` reads) are transcoded to PNG, named `<stem>.png`.
                let mut file_name = file_name.clone();
                let mut transcoded = None;
                let (bytes, mime) = match image_mime(&bytes) {
                    Some(mime) => (bytes, mime),
                    None => match to_png(&bytes, &file_name) {
                        Some(png) => {
                            let stem = match file_name.rfind('.') {
                                Some(i) if i > 0 => &file_name[..i],
                                _ => &file_name[..],
                            };
                            let png_name = format!("{stem}.png");
                            self.warnings.push(warning(
                                place,
                                format!(
                                    "{file_name} transcoded to PNG as {png_name} (glTF allows PNG and JPEG images only)"
                                ),
                            ));
                            file_name = png_name;
                            let png: std::sync::Arc<[u8]> = png.into();
                            transcoded = Some(png.clone());
                            (std::borrow::Cow::Owned(png.to_vec()), "image/png")
                        }
                        None => {
                            self.warnings.push(warning(
                                place,
                                format!(
                                    "{file_name} is not PNG or JPEG, the only images glTF allows, nor an image keyscene can transcode (TGA, BMP): left out"
                                ),
                            ));
                            self.textures.insert(key, None);
                            return None;
                        }
                    },
                };
                let image_json = match external {
                    None => json::Image {
                        buffer_view: Some(self.view(&bytes, None)),
                        mime_type: Some(json::image::MimeType(mime.into())),
                        name: Some(file_name.clone()),
                        uri: None,
                        extensions: None,
                        extras: Default::default(),
                    },
                    Some(path) => {
                        let uri = uri_encode(&file_name);
                        self.images.push(ExternalImage {
                            uri: uri.clone(),
                            file_name: file_name.clone(),
                            source: path,
                            bytes: transcoded,
                        });
                        json::Image {
                            buffer_view: None,
                            mime_type: None,
                            name: Some(file_name.clone()),
                            uri: Some(uri),
                            extensions: None,
                            extras: Default::default(),
                        }
                    }
                };
                let ix = json::Index::push(&mut self.root.images, image_json);
                self.images_by_path.insert(image.clone(), ix);
                ix
            }
        };
        let sampler = (wrap != [WrappingMode::Repeat; 2]).then(|| {
            *self.samplers.entry(wrap.map(|w| w.as_gl_enum())).or_insert_with(|| {
                json::Index::push(
                    &mut self.root.samplers,
                    json::texture::Sampler {
                        wrap_s: Valid(wrap[0]),
                        wrap_t: Valid(wrap[1]),
                        ..Default::default()
                    },
                )
            })
        });
        let tex = json::Index::push(
            &mut self.root.textures,
            json::Texture {
                name: Some(file_name),
                sampler,
                source,
                extensions: None,
                extras: Default::default(),
            },
        );
        self.textures.insert(key, Some(tex));
        Some(tex)
    }

    fn camera(&mut self, scene: &Scene, c: usize) -> json::Index<json::Camera> {
        let cam = &scene.cameras[c];
        let aspect = cam.aspect.filter(|a| a.is_finite() && *a > 0.0).unwrap_or(ASSUMED_ASPECT);
        let mut fov = cam.fov_degrees;
        if !(fov.is_finite() && fov > 0.0 && fov < 180.0) {
            self.warnings.push(warning(
                format!("camera \"{}\"", cam.name),
                format!("FOV {fov}° written as 45°"),
            ));
            fov = 45.0;
        }
        let half = (fov / 2.0).to_radians();
        let yfov = match cam.fov_axis {
            FovAxis::Horizontal => 2.0 * (half.tan() / aspect).atan(),
            FovAxis::Vertical => 2.0 * half,
        };
        let znear = cam.near.filter(|n| n.is_finite() && *n > 0.0).unwrap_or(DEFAULT_ZNEAR);
        let zfar = cam.far.filter(|f| f.is_finite() && *f > znear).map(|f| f as f32);
        json::Index::push(
            &mut self.root.cameras,
            json::Camera {
                name: Some(cam.name.clone()),
                orthographic: None,
                perspective: Some(json::camera::Perspective {
                    aspect_ratio: Some(aspect as f32),
                    yfov: yfov as f32,
                    zfar,
                    znear: znear as f32,
                    extensions: None,
                    extras: Default::default(),
                }),
                type_: Valid(json::camera::Type::Perspective),
                extensions: None,
                extras: Default::default(),
            },
        )
    }

    fn light(
        &mut self,
        scene: &Scene,
        l: usize,
    ) -> Option<json::Index<json::extensions::scene::khr_lights_punctual::Light>> {
        use json::extensions::scene::khr_lights_punctual as khr;
        let light = &scene.lights[l];
        let type_ = match light.kind {
            LightKind::Point => khr::Type::Point,
            LightKind::Spot => khr::Type::Spot,
            LightKind::Directional => khr::Type::Directional,
            LightKind::Ambient => {
                self.warnings.push(warning(
                    format!("light \"{}\"", light.name),
                    "ambient light left out: glTF has no ambient light",
                ));
                return None;
            }
        };
        let spot = (light.kind == LightKind::Spot).then(|| {
            // Just under π/2: f32(π/2) rounds above it and the validator rejects that.
            let quarter = std::f64::consts::FRAC_PI_2 - 1e-6;
            let fin = |x: f64| if x.is_finite() { x } else { 0.0 };
            let outer = (fin(light.falloff_degrees) / 2.0).to_radians().clamp(1e-4, quarter);
            let inner = (fin(light.hotspot_degrees) / 2.0).to_radians().clamp(0.0, outer * 0.999);
            khr::Spot { inner_cone_angle: inner as f32, outer_cone_angle: outer as f32 }
        });
        let range = light
            .attenuation
            .map(|(_, outer)| outer)
            .filter(|r| r.is_finite() && *r > 0.0)
            .filter(|_| light.kind != LightKind::Directional)
            .map(|r| r as f32);
        let intensity =
            if light.on && light.intensity.is_finite() { light.intensity.max(0.0) } else { 0.0 };
        let ext = self.root.extensions.get_or_insert_with(Default::default);
        let lights = &mut ext.khr_lights_punctual.get_or_insert_with(Default::default).lights;
        let ix = json::Index::push(
            lights,
            khr::Light {
                color: light.color.to_array().map(|c| if c.is_finite() { c.max(0.0) } else { 0.0 }),
                extensions: None,
                extras: Default::default(),
                intensity: intensity as f32,
                name: Some(light.name.clone()),
                range,
                spot,
                type_: Valid(type_),
            },
        );
        let used = "KHR_lights_punctual".to_string();
        if !self.root.extensions_used.contains(&used) {
            self.root.extensions_used.push(used);
        }
        Some(ix)
    }

    /// Writes animation `a`: channels from the source keys where glTF holds them exactly,
    /// else resampled LINEAR channels; everything resampled with `resample_fps` (see the
    /// module docs).
    fn animation(&mut self, scene: &Scene, a: usize, ctx: &AnimContext, resample_fps: Option<f64>) {
        let AnimContext { base, rest, rest_trs, rest_unaimed, helpers, morph_nodes } = *ctx;
        let anim = &scene.animations[a];
        let place = format!("animation {a} \"{}\"", anim.name);
        self.unsupported_channels(scene, a, &place);
        let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { THREE_DS_FPS };
        let step =
            resample_fps.filter(|r| r.is_finite() && *r > 0.0).map(|r| fps / r).unwrap_or(1.0);
        let start = if anim.frame_range.0.is_finite() { anim.frame_range.0.max(0.0) } else { 0.0 };
        let keys: Vec<Vec<f64>> =
            anim.channels.iter().flat_map(|c| key_frames(&c.target)).collect();
        let last_key =
            keys.iter().filter_map(|k| k.last().copied()).fold(f64::NEG_INFINITY, f64::max);
        let mut end = if anim.frame_range.1.is_finite() { anim.frame_range.1 } else { start };
        end = end.max(last_key).max(start);
        // The sampling grid runs from the animation's first frame (keys before frame 0 keep
        // their phase), from `start` on; every key in range is a sample too, so linear curves
        // come out exact.
        let anchor =
            if anim.frame_range.0.is_finite() { anim.frame_range.0.min(start) } else { start };
        let mut grid = Vec::new();
        let mut k = ((start - anchor) / step).ceil().max(0.0) as u64;
        loop {
            let f = anchor + k as f64 * step;
            if f >= end - 1e-9 * step || grid.len() >= 10_000_000 {
                break;
            }
            grid.push(f);
            k += 1;
        }
        let mut frames = vec![start, end];
        for k in &keys {
            frames.extend(k.iter().copied().filter(|&f| f >= start && f <= end));
        }
        // Samples never crowd a key: a grid sample closer than `SAMPLE_MERGE` steps to a key
        // (or the first or last frame) is left out, the key kept (keys at frames 0.99999 and
        // 359.00001 get no samples at 1 and 359 a microsecond away).
        frames.sort_by(f64::total_cmp);
        let merge = SAMPLE_MERGE * step;
        grid.retain(|&f| {
            let i = frames.partition_point(|&k| k < f);
            let near = |j: usize| frames.get(j).is_some_and(|&k| k != f && (k - f).abs() < merge);
            !(near(i) || (i > 0 && near(i - 1)))
        });
        frames.extend(grid);
        // Two keys on one frame make the curve jump there: sample just before the jump too, so
        // the linear segment leading to it stays on the curve.
        let before = JUMP_LEAD * step;
        for k in &keys {
            for w in k.windows(2).filter(|w| w[0] == w[1]) {
                if w[0] - before > start && w[0] <= end {
                    frames.push(w[0] - before);
                }
            }
        }
        frames.sort_by(f64::total_cmp);
        let mut times: Vec<f32> = Vec::with_capacity(frames.len());
        let mut kept = Vec::with_capacity(frames.len());
        for f in frames {
            let t = (f / fps) as f32;
            if times.last().is_none_or(|&l| t > l) {
                times.push(t);
                kept.push(f);
            }
        }
        // Targets: every scene node, then every aim helper.
        let targets = scene.nodes.len() + helpers.len();
        let node_channels = anim::channels_by_node(scene, Some(a));
        let direct = direct_nodes(scene);
        // Samples are taken per target, not per scene: a node whose glTF TRS is its own
        // (`direct`) is sampled from its own channels alone ([`node_samples`]); only the other
        // nodes, the aim helpers and the morph weights need the evaluated scene at each frame.
        // A pose target whose glTF local cannot change over the animation (no channel on it,
        // its ancestors or, for a helper, its aim target: [`varying_targets`]) holds its value
        // at the first sample; so does a morph node whose mesh no channel drives.
        let (varies, morph_varies) = varying_targets(scene, a, helpers, morph_nodes);
        let pose_targets: Vec<usize> =
            (0..targets).filter(|&k| k >= direct.len() || !direct[k]).collect();
        let rests: Vec<(DVec3, DQuat, DVec3)> = rest_trs
            .iter()
            .copied()
            .chain(
                helpers
                    .iter()
                    .map(|h| decompose(rest_unaimed[h.node].inverse() * rest.world[h.node])),
            )
            .collect();
        let mut tr: Vec<Vec<DVec3>> = vec![Vec::new(); targets];
        let mut ro: Vec<Vec<DQuat>> = vec![Vec::new(); targets];
        let mut sc: Vec<Vec<DVec3>> = vec![Vec::new(); targets];
        let pose_local = |pose: &Pose, unaimed: &[DMat4], k: usize| {
            if k < scene.nodes.len() {
                gltf_local(scene, pose, unaimed, k)
            } else {
                let h = &helpers[k - scene.nodes.len()];
                unaimed[h.node].inverse() * pose.world[h.node]
            }
        };
        let morph_sample = |pose: &Pose, m: usize, out: &mut Vec<f32>| {
            let w = deform::gltf_weights(&scene.meshes[m], &pose.morph_weights[m]);
            out.extend(w.iter().map(|&w| if w.is_finite() { w as f32 } else { 0.0 }));
        };
        // Per morph node: glTF target weights, sample after sample.
        let mut mw: Vec<Vec<f32>> = vec![Vec::new(); morph_nodes.len()];
        if let Some(&first) =
            kept.first().filter(|_| !pose_targets.is_empty() || !morph_nodes.is_empty())
        {
            let pose = scene.evaluate(Some(a), Time::Frame(first));
            let unaimed = unaimed_world(scene, &pose);
            for &k in pose_targets.iter().filter(|&&k| !varies[k]) {
                let value = decompose(pose_local(&pose, &unaimed, k));
                hold_sample(&mut tr[k], &mut ro[k], &mut sc[k], value, rests[k], kept.len());
            }
            for (k, &(_, m)) in morph_nodes.iter().enumerate().filter(|&(k, _)| !morph_varies[k]) {
                let mut w = Vec::new();
                morph_sample(&pose, m, &mut w);
                mw[k] = w.repeat(kept.len());
            }
        }
        let moving: Vec<usize> = pose_targets.iter().copied().filter(|&k| varies[k]).collect();
        if !moving.is_empty() || morph_varies.iter().any(|&v| v) {
            for &k in &moving {
                tr[k].reserve(kept.len());
                ro[k].reserve(kept.len());
                sc[k].reserve(kept.len());
            }
            // Per frame, only the moving targets and what they depend on are posed.
            let mut pose = PartialPose::new(scene, Some(a));
            for &f in &kept {
                pose.set_frame(f);
                for (k, &(_, m)) in morph_nodes.iter().enumerate().filter(|&(k, _)| morph_varies[k])
                {
                    let w = deform::gltf_weights(&scene.meshes[m], &pose.morph_weights(m));
                    mw[k].extend(w.iter().map(|&w| if w.is_finite() { w as f32 } else { 0.0 }));
                }
                for &k in &moving {
                    let value = decompose(partial_local(scene, &mut pose, helpers, k));
                    push_sample(&mut tr[k], &mut ro[k], &mut sc[k], value);
                }
            }
        }
        let node_index = |k: usize| {
            if k < scene.nodes.len() {
                json::Index::new((base + k) as u32)
            } else {
                helpers[k - scene.nodes.len()].index
            }
        };
        let mut input = None;
        let mut channels = Vec::new();
        let mut samplers: Vec<json::animation::Sampler> = Vec::new();
        use json::animation::Property;
        // (target, path, sampler input — `None`: the shared resampling grid —, interpolation,
        // output).
        let mut outputs: Vec<(usize, Property, Option<Accessor>, Interpolation, Accessor)> =
            Vec::new();
        let resampled = |output| (None, Interpolation::Linear, output);
        let mut keyed_inputs: HashMap<Vec<u32>, Accessor> = HashMap::new();
        let start_end = (start, end);
        for k in 0..targets {
            let (rt, rr, rs) = rests[k];
            let v3 = |v: DVec3| v.as_vec3().to_array();
            if k < direct.len() && direct[k] {
                node_samples(
                    scene,
                    k,
                    &node_channels[k],
                    &kept,
                    (rt, rr, rs),
                    &mut tr[k],
                    &mut ro[k],
                    &mut sc[k],
                );
            }
            let moves_t = tr[k].iter().any(|&t| v3(t) != v3(rt));
            let moves_r =
                ro[k].iter().any(|&r| quat_f32(r) != quat_f32(rr) && quat_f32(-r) != quat_f32(rr));
            let moves_s = sc[k].iter().any(|&s| v3(s) != v3(rs));
            // Source keys only for nodes whose glTF TRS is their own, unless resampling was
            // asked for.
            let keyed = resample_fps.is_none() && k < direct.len() && direct[k];
            let channels: &[&ChannelTarget] = if keyed { &node_channels[k] } else { &[] };
            let transform = scene.nodes.get(k).map_or(Transform::IDENTITY, |n| n.transform);
            // A translation or scale channel: from the source keys where they convert, else
            // the samples.
            let vec3_channel = |this: &mut Self,
                                keyed_inputs: &mut HashMap<Vec<u32>, Accessor>,
                                is_scale: bool,
                                rest: DVec3,
                                samples: &[DVec3]| {
                match keyed.then(|| keyed_vec3(channels, is_scale, rest, start_end, fps)).flatten()
                {
                    Some(keys) => this.keyed(&keys, keyed_inputs),
                    None => {
                        let data: Vec<[f32; 3]> = samples.iter().map(|&v| v3(v)).collect();
                        resampled(this.floats(&data, json::accessor::Type::Vec3, None, false))
                    }
                }
            };
            if moves_t {
                let (input, interp, output) =
                    vec3_channel(self, &mut keyed_inputs, false, transform.translation, &tr[k]);
                outputs.push((k, Property::Translation, input, interp, output));
            }
            if moves_r {
                let (input, interp, output) =
                    match keyed.then(|| keyed_rotation(channels, start_end, fps)).flatten() {
                        Some(keys) => self.keyed(&keys, &mut keyed_inputs),
                        None => {
                            let data: Vec<[f32; 4]> = ro[k].iter().map(|&r| quat_f32(r)).collect();
                            resampled(self.floats(&data, json::accessor::Type::Vec4, None, false))
                        }
                    };
                outputs.push((k, Property::Rotation, input, interp, output));
            }
            if moves_s {
                let (input, interp, output) =
                    vec3_channel(self, &mut keyed_inputs, true, transform.scale, &sc[k]);
                outputs.push((k, Property::Scale, input, interp, output));
            }
        }
        for (k, &(i, m)) in morph_nodes.iter().enumerate() {
            let rest: Vec<f32> = deform::gltf_weights(&scene.meshes[m], &rest.morph_weights[m])
                .iter()
                .map(|&w| w as f32)
                .collect();
            let n = rest.len().max(1);
            if mw[k].chunks(n).all(|c| c == rest.as_slice()) {
                continue;
            }
            let data: Vec<[f32; 1]> = mw[k].iter().map(|&w| [w]).collect();
            let output = self.floats(&data, json::accessor::Type::Scalar, None, false);
            outputs.push((i, Property::MorphTargetWeights, None, Interpolation::Linear, output));
        }
        for (k, path, own_input, interpolation, output) in outputs {
            let input = match own_input {
                Some(input) => input,
                None => *input.get_or_insert_with(|| {
                    let data: Vec<[f32; 1]> = times.iter().map(|&t| [t]).collect();
                    self.floats(&data, json::accessor::Type::Scalar, None, true)
                }),
            };
            let sampler = json::Index::push(
                &mut samplers,
                json::animation::Sampler {
                    extensions: None,
                    extras: Default::default(),
                    input,
                    interpolation: Valid(interpolation),
                    output,
                },
            );
            channels.push(json::animation::Channel {
                sampler,
                target: json::animation::Target {
                    extensions: None,
                    extras: Default::default(),
                    node: node_index(k),
                    path: Valid(path),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        if channels.is_empty() {
            return;
        }
        self.root.animations.push(json::Animation {
            extensions: None,
            extras: Default::default(),
            channels,
            name: Some(if anim.name.is_empty() {
                format!("animation {a}")
            } else {
                anim.name.clone()
            }),
            samplers,
        });
    }

    /// Writes a keyed sampler's output accessor, and its input accessor unless `inputs` (the
    /// animation's keyed inputs by their times' bits) has one with the same times; returns
    /// (input, interpolation, output).
    fn keyed<const N: usize>(
        &mut self,
        keyed: &Keyed<N>,
        inputs: &mut HashMap<Vec<u32>, Accessor>,
    ) -> (Option<Accessor>, Interpolation, Accessor) {
        let bits: Vec<u32> = keyed.times.iter().map(|t| t.to_bits()).collect();
        let input = match inputs.get(&bits) {
            Some(&input) => input,
            None => {
                let times: Vec<[f32; 1]> = keyed.times.iter().map(|&t| [t]).collect();
                let input = self.floats(&times, json::accessor::Type::Scalar, None, true);
                inputs.insert(bits, input);
                input
            }
        };
        let kind = if N == 4 { json::accessor::Type::Vec4 } else { json::accessor::Type::Vec3 };
        let output = self.floats(&keyed.values, kind, None, false);
        (Some(input), keyed.interpolation, output)
    }

    /// Warns about animated values glTF (core) cannot carry.
    fn unsupported_channels(&mut self, scene: &Scene, a: usize, place: &str) {
        let mut seen: Vec<&'static str> = Vec::new();
        for ch in &scene.animations[a].channels {
            let what = match &ch.target {
                ChannelTarget::Hidden(t)
                    if t.keys.iter().any(|k| k.value != scene.nodes[ch.node].hidden) =>
                {
                    "visibility (hide) tracks are not animated"
                }
                ChannelTarget::Morph(t)
                    if t.keys.iter().any(|k| Some(k.value) != scene.nodes[ch.node].mesh) =>
                {
                    "morph tracks (mesh switches) are not animated: nodes show their rest mesh"
                }
                ChannelTarget::Fov(t) if t.is_animated() => "camera FOV tracks are not animated",
                // Morph weights are written; animated pivots are baked into the resampled
                // node's transform.
                ChannelTarget::Property { .. } | ChannelTarget::Layered(_)
                    if ch.target.property_name().is_some_and(|name| {
                        crate::anim::curve::morph_target_of(name).is_some()
                            || ch.target.drives_pivots()
                    }) =>
                {
                    continue
                }
                ChannelTarget::Property { .. } | ChannelTarget::Layered(_)
                    if ch.target.property_name().is_some() && ch.target.key_count() > 1 =>
                {
                    "property tracks (FBX Visibility, Intensity …) other than morph weights are \
                     not animated"
                }
                ChannelTarget::Roll(_) => continue,
                ChannelTarget::Color(_) | ChannelTarget::Hotspot(_) | ChannelTarget::Falloff(_)
                    if ch.target.key_count() > 1 =>
                {
                    "light colour/cone tracks are not animated"
                }
                _ => continue,
            };
            if !seen.contains(&what) {
                seen.push(what);
                self.warnings.push(warning(place, what));
            }
        }
    }

    fn finish(mut self) -> Result<GltfFile, Error> {
        if !self.bin.is_empty() {
            self.bin.resize(self.bin.len().next_multiple_of(4), 0);
            let uri = match &self.container {
                Container::Glb => None,
                Container::Gltf { .. } if self.embed => Some(format!(
                    "data:application/octet-stream;base64,{}",
                    super::base64::encode(&self.bin)
                )),
                Container::Gltf { bin_uri } => Some(bin_uri.clone()),
            };
            self.root.buffers.push(json::Buffer {
                byte_length: USize64(self.bin.len() as u64),
                name: None,
                uri,
                extensions: None,
                extras: Default::default(),
            });
        }
        let ser = |e: serde_json::Error| Error::Write(format!("JSON: {e}"));
        match self.container {
            Container::Glb => {
                let json = serde_json::to_vec(&self.root).map_err(ser)?;
                Ok(GltfFile {
                    main: super::glb::to_glb(&json, &self.bin)?,
                    bin: None,
                    images: Vec::new(),
                    warnings: self.warnings,
                })
            }
            Container::Gltf { bin_uri } => Ok(GltfFile {
                main: serde_json::to_vec_pretty(&self.root).map_err(ser)?,
                bin: (!self.bin.is_empty() && !self.embed).then_some((bin_uri, self.bin)),
                images: self.images,
                warnings: self.warnings,
            }),
        }
    }
}

/// One node part's source keys as a glTF sampler (see the module docs, **Animation**).
struct Keyed<const N: usize> {
    interpolation: Interpolation,
    /// Key times in seconds, strictly increasing, from 0 on.
    times: Vec<f32>,
    /// One value per key; for CUBICSPLINE (in-tangent, value, out-tangent) per key, tangents
    /// in value units per **second** (glTF 2.0 Appendix C).
    values: Vec<[f32; N]>,
}

/// Per scene node: is its glTF local matrix its own `T·R·S` ([`gltf_locals`] leaves it as the
/// pose's local matrix, and that is `T·R·S` of the parts)? Yes when it has no FBX pivots or
/// pre/post-rotation, none animated in any animation either
/// ([`ChannelTarget::drives_pivots`]), and it is a root or has inherit type `RSrs`. Such nodes'
/// glTF translation, rotation and scale are the source's parts, so their channels can be
/// written from the source keys.
fn direct_nodes(scene: &Scene) -> Vec<bool> {
    let mut direct: Vec<bool> = scene
        .nodes
        .iter()
        .map(|n| {
            n.pivots.is_none()
                && (n.parent.is_none() || n.inherit == crate::scene::InheritType::RSrs)
        })
        .collect();
    for c in scene.animations.iter().flat_map(|a| &a.channels) {
        if c.target.drives_pivots() {
            if let Some(d) = direct.get_mut(c.node) {
                *d = false;
            }
        }
    }
    direct
}

/// A node's translation (`scale` false) or scale curve from its channels as a glTF sampler
/// over the frames `range` (the written animation's first and last frame), when exactly one
/// channel drives the part and its keys have an exact Hermite form ([`hermite`]); components
/// without a track hold `rest` (the node's rest part, as in the evaluator). `None`: resample.
fn keyed_vec3(
    channels: &[&ChannelTarget],
    scale: bool,
    rest: DVec3,
    range: (f64, f64),
    fps: f64,
) -> Option<Keyed<3>> {
    let (lo, hi) = range;
    let mut found = None;
    for c in channels {
        let hit = match (c, scale) {
            (ChannelTarget::Translation(t), false) | (ChannelTarget::Scale(t), true) => {
                Some((Some(t), None))
            }
            (ChannelTarget::TranslationXyz(x), false) | (ChannelTarget::ScaleXyz(x), true) => {
                Some((None, Some(x)))
            }
            // Layers blended at the asked time have no key form: resampled.
            (ChannelTarget::Layered(b), _)
                if b.transform_part() == Some(if scale { 2 } else { 0 }) =>
            {
                return None
            }
            _ => None,
        };
        if hit.is_some() {
            if found.is_some() {
                return None;
            }
            found = hit;
        }
    }
    let keys = match found? {
        (Some(t), _) => hermite::cover(t, hermite::hermite_keys(t)?, lo, hi)?,
        (None, Some(xyz)) => {
            let mut parts: [Option<Vec<HermiteKey<f64>>>; 3] = [None, None, None];
            for (part, t) in parts.iter_mut().zip(xyz) {
                let Some(t) = t.as_ref().filter(|t| !t.keys.is_empty()) else { continue };
                *part = Some(hermite::cover(t, hermite::hermite_keys(t)?, lo, hi)?);
            }
            hermite::merge_xyz(
                [parts[0].as_deref(), parts[1].as_deref(), parts[2].as_deref()],
                rest,
            )?
        }
        (None, None) => return None,
    };
    let mut keys = hermite::clip(&keys, lo, f64::INFINITY);
    // A held last key is repeated at the animation's end, so that clients that take a clip's
    // length from its last key time (three.js) play the whole animation.
    if let Some(last) = keys.last_mut().filter(|k| k.frame < hi) {
        last.segment = Segment::Linear;
        last.out_slope = DVec3::ZERO;
        let held = HermiteKey { frame: hi, in_slope: DVec3::ZERO, ..*last };
        keys.push(held);
    }
    // The sampler kind: segments that do not move fit any kind.
    let (mut step, mut linear, mut cubic) = (false, false, false);
    for w in keys.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let flat = a.value == b.value
            && (a.segment != Segment::Cubic
                || (a.out_slope == DVec3::ZERO && b.in_slope == DVec3::ZERO));
        match a.segment {
            _ if flat => {}
            Segment::Step => step = true,
            Segment::Linear => linear = true,
            Segment::Cubic => cubic = true,
        }
    }
    let interpolation = match (step, linear || cubic) {
        (true, true) => return None,
        (true, false) => Interpolation::Step,
        (false, _) if cubic => Interpolation::CubicSpline,
        (false, _) => Interpolation::Linear,
    };
    let times = key_times(keys.iter().map(|k| k.frame), fps)?;
    let f3 = |v: DVec3| {
        let v = v.as_vec3();
        v.is_finite().then(|| v.to_array())
    };
    let mut values = Vec::with_capacity(keys.len() * 3);
    if interpolation == Interpolation::CubicSpline {
        // Per segment: the leaving slope of its first key and the arriving slope of its last,
        // per frame; a linear segment's are its chord's, a (flat) step's 0.
        let n = keys.len();
        let mut s_in = vec![DVec3::ZERO; n];
        let mut s_out = vec![DVec3::ZERO; n];
        for j in 0..n - 1 {
            let (a, b) = (&keys[j], &keys[j + 1]);
            let (o, i) = match a.segment {
                Segment::Cubic => (a.out_slope, b.in_slope),
                Segment::Linear => {
                    let chord = (b.value - a.value) / (b.frame - a.frame);
                    (chord, chord)
                }
                Segment::Step => (DVec3::ZERO, DVec3::ZERO),
            };
            s_out[j] = o;
            s_in[j + 1] = i;
        }
        for (j, k) in keys.iter().enumerate() {
            values.push(f3(s_in[j] * fps)?);
            values.push(f3(k.value)?);
            values.push(f3(s_out[j] * fps)?);
        }
    } else {
        for k in &keys {
            values.push(f3(k.value)?);
        }
    }
    Some(Keyed { interpolation, times, values })
}

/// A node's rotation from its channels as a glTF sampler from frame `range.0` on, when exactly
/// one channel drives it and it is a quaternion track the evaluator slerps (LINEAR; glam's
/// slerp takes the short way, as glTF's does) or steps (STEP) throughout; keys are kept in one
/// hemisphere (the same curve, as both take the short way). Euler, 3DS relative and squad
/// tracks: `None` (resampled).
fn keyed_rotation(channels: &[&ChannelTarget], range: (f64, f64), fps: f64) -> Option<Keyed<4>> {
    use crate::anim::{Extrapolation, Interpolation as Kind};
    let mut found = None;
    for c in channels {
        if let ChannelTarget::Rotation(r) = c {
            if found.is_some() {
                return None;
            }
            found = Some(r);
        }
        if let ChannelTarget::Layered(b) = c {
            if b.transform_part() == Some(1) {
                return None;
            }
        }
    }
    let RotationTrack::Quat(track) = found? else { return None };
    let keys = &track.keys;
    if keys.is_empty()
        || keys
            .windows(2)
            .any(|w| w[0].frame.partial_cmp(&w[1].frame) != Some(std::cmp::Ordering::Less))
        || !keys.iter().all(|k| k.frame.is_finite() && k.value.is_finite())
    {
        return None;
    }
    // The sampler reads the keys as holding their ends (glTF clamps).
    if keys.len() > 1
        && (track.before == Extrapolation::HoldLast || track.after == Extrapolation::Repeat)
    {
        return None;
    }
    let (mut step, mut slerp) = (false, false);
    for w in keys.windows(2) {
        match w[0].interpolation {
            _ if w[0].value == w[1].value => {}
            Kind::Step => step = true,
            Kind::Linear | Kind::Hermite { .. } | Kind::Bezier { .. } | Kind::Tcb(_) => {
                slerp = true
            }
            Kind::StepNext | Kind::Squad { .. } => return None,
        }
    }
    let interpolation = match (step, slerp) {
        (true, true) => return None,
        (true, false) => Interpolation::Step,
        (false, _) => Interpolation::Linear,
    };
    // Cut at the first written frame: a key there with the track's value.
    let lo = range.0;
    let i = keys.partition_point(|k| k.frame < lo);
    let mut kept: Vec<(f64, DQuat)> = Vec::with_capacity(keys.len() - i + 1);
    if i > 0 && keys.get(i).is_none_or(|k| k.frame > lo) {
        kept.push((lo, crate::anim::tcb::sample_quat(track, lo)?));
    }
    kept.extend(keys[i..].iter().map(|k| (k.frame, k.value)));
    // The last key held to the animation's end (as for translation and scale).
    if let Some(&(_, q)) = kept.last().filter(|k| k.0 < range.1) {
        kept.push((range.1, q));
    }
    let times = key_times(kept.iter().map(|k| k.0), fps)?;
    let mut values = Vec::with_capacity(kept.len());
    let mut prev: Option<DQuat> = None;
    for &(_, q) in &kept {
        let q = q.normalize();
        let q = match prev {
            Some(p) if p.dot(q) < 0.0 => -q,
            _ => q,
        };
        prev = Some(q);
        values.push(quat_f32(q));
    }
    values.iter().all(|q| q.iter().all(|c| c.is_finite())).then_some(Keyed {
        interpolation,
        times,
        values,
    })
}

/// Key frames as glTF times (seconds, f32); `None` when two of them fall on one f32 time or a
/// time is not finite.
fn key_times(frames: impl Iterator<Item = f64>, fps: f64) -> Option<Vec<f32>> {
    let mut out: Vec<f32> = Vec::new();
    for f in frames {
        let t = (f / fps) as f32;
        if !t.is_finite() || t < 0.0 || out.last().is_some_and(|&l| t <= l) {
            return None;
        }
        out.push(t);
    }
    Some(out)
}

/// The key frames of a channel's tracks, one list per track in key order (a channel animated
/// per component has up to three).
fn key_frames(target: &ChannelTarget) -> Vec<Vec<f64>> {
    use crate::anim::{RotationTrack, Track};
    fn frames<T>(t: &Track<T>) -> Vec<f64> {
        t.keys.iter().map(|k| k.frame).filter(|f| f.is_finite()).collect()
    }
    fn each(tracks: &[Option<Track<f64>>; 3]) -> Vec<Vec<f64>> {
        tracks.iter().flatten().map(frames).collect()
    }
    match target {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
            vec![frames(t)]
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => vec![frames(t)],
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => vec![frames(t)],
        ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. }) => each(xyz),
        ChannelTarget::TranslationXyz(c) | ChannelTarget::ScaleXyz(c) => each(c),
        ChannelTarget::Hidden(t) => vec![frames(t)],
        ChannelTarget::Morph(t) => vec![frames(t)],
        ChannelTarget::Fov(t)
        | ChannelTarget::Roll(t)
        | ChannelTarget::Hotspot(t)
        | ChannelTarget::Falloff(t) => {
            vec![frames(t)]
        }
        ChannelTarget::Property { track, .. } => vec![frames(track)],
        ChannelTarget::Layered(b) => b.tracks().map(frames).collect(),
    }
}

/// Every node's world matrix *without* camera/light aiming ([`Scene::compose_world`] of the
/// local matrices, inherit types included), which is what the evaluator's children of an aimed
/// node inherit.
fn unaimed_world(scene: &Scene, pose: &Pose) -> Vec<DMat4> {
    scene.compose_world(&pose.local)
}

/// Appends one sample to a target's translation, rotation and scale samples, the rotation
/// flipped to the hemisphere of the previous one (so LINEAR slerps the short way).
fn push_sample(
    tr: &mut Vec<DVec3>,
    ro: &mut Vec<DQuat>,
    sc: &mut Vec<DVec3>,
    (t, r, s): (DVec3, DQuat, DVec3),
) {
    tr.push(t);
    let r = match ro.last() {
        Some(prev) if prev.dot(r) < 0.0 => -r,
        _ => r,
    };
    ro.push(r);
    sc.push(s);
}

/// `len` samples of one held `value`, or none when it equals `rest` as written (f32; a
/// rotation or its negation), since nothing is written for a part that does not move.
fn hold_sample(
    tr: &mut Vec<DVec3>,
    ro: &mut Vec<DQuat>,
    sc: &mut Vec<DVec3>,
    (t, r, s): (DVec3, DQuat, DVec3),
    rest: (DVec3, DQuat, DVec3),
    len: usize,
) {
    let v3 = |v: DVec3| v.as_vec3().to_array();
    let same_r = quat_f32(r) == quat_f32(rest.1) || quat_f32(-r) == quat_f32(rest.1);
    if v3(t) == v3(rest.0) && same_r && v3(s) == v3(rest.2) {
        return;
    }
    tr.resize(len, t);
    ro.resize(len, r);
    sc.resize(len, s);
}

/// Which animation targets (scene nodes, then aim helpers) may change over animation `a`, and
/// which morph nodes' weights may, by [`Scene::motion`]: a node's glTF local when its unaimed
/// world matrix may change (a glTF local of a non-`RSrs` node is made from its ancestors'
/// world matrices); a helper's when its node's aimed world matrix may (its node, its aim
/// target, their ancestors or its roll); a morph node's when its mesh's weights may.
/// Conservative: "may change" is all it says.
fn varying_targets(
    scene: &Scene,
    a: usize,
    helpers: &[Helper],
    morph_nodes: &[(usize, usize)],
) -> (Vec<bool>, Vec<bool>) {
    let motion = scene.motion(Some(a));
    let mut varies = motion.unaimed;
    varies.extend(helpers.iter().map(|h| motion.world[h.node]));
    let morph =
        morph_nodes.iter().map(|&(_, m)| motion.morph.get(m).copied().unwrap_or(true)).collect();
    (varies, morph)
}

/// Target `k`'s glTF local matrix (scene nodes, then aim helpers) from a partial pose: what
/// [`gltf_local`] (and, for a helper, `unaimed⁻¹ · world` of its node) makes of the full pose.
fn partial_local(scene: &Scene, pose: &mut PartialPose, helpers: &[Helper], k: usize) -> DMat4 {
    use crate::scene::InheritType;
    let n = scene.nodes.len();
    if k >= n {
        let h = helpers[k - n].node;
        return pose.unaimed_world(h).inverse() * pose.world(h);
    }
    match scene.nodes[k].parent {
        Some(p) if scene.nodes[k].inherit != InheritType::RSrs => {
            pose.unaimed_world(p).inverse() * pose.unaimed_world(k)
        }
        _ => pose.local(k),
    }
}

/// The samples at `frames` of a node whose glTF TRS is its own ([`direct_nodes`]), from its
/// own `channels` alone (what [`Scene::evaluate`] makes of them: the pose's local matrix of
/// such a node is `T·R·S` of its parts); a part that is not finite comes from the decomposed
/// matrix, as [`anim::node_parts`] says. A node without channels holds one value: when it equals
/// `rest` (as f32, what is written) no samples are made at all, since nothing is written for
/// a part that does not move.
#[allow(clippy::too_many_arguments)]
fn node_samples(
    scene: &Scene,
    k: usize,
    channels: &[&ChannelTarget],
    frames: &[f64],
    rest: (DVec3, DQuat, DVec3),
    tr: &mut Vec<DVec3>,
    ro: &mut Vec<DQuat>,
    sc: &mut Vec<DVec3>,
) {
    // What `anim::node_parts` does, with each channel prepared once for all frames.
    let samplers: Vec<_> = channels.iter().map(|c| c.sampler()).collect();
    let at = |f: f64| {
        let mut p = scene.nodes[k].transform;
        for c in &samplers {
            c.apply_to_transform(&mut p, f);
        }
        let r = p.rotation.normalize();
        if p.translation.is_finite() && r.is_finite() && p.scale.is_finite() {
            (p.translation, r, p.scale)
        } else {
            decompose(p.matrix())
        }
    };
    if channels.is_empty() {
        if let Some(&f) = frames.first() {
            hold_sample(tr, ro, sc, at(f), rest, frames.len());
        }
        return;
    }
    tr.reserve(frames.len());
    ro.reserve(frames.len());
    sc.reserve(frames.len());
    for &f in frames {
        push_sample(tr, ro, sc, at(f));
    }
}

/// Node `i`'s local matrix in glTF ([`gltf_locals`] for one node).
fn gltf_local(scene: &Scene, pose: &Pose, unaimed: &[DMat4], i: usize) -> DMat4 {
    use crate::scene::InheritType;
    match scene.nodes[i].parent {
        Some(p) if scene.nodes[i].inherit != InheritType::RSrs => unaimed[p].inverse() * unaimed[i],
        _ => pose.local[i],
    }
}

/// The local matrix every node gets in glTF, where a child always inherits its parent's full
/// matrix: the pose's local matrix for FBX `RSrs` nodes and roots, else
/// `unaimed[parent]⁻¹ · unaimed[node]`, so the world matrix is the evaluator's whatever the
/// node's [`InheritType`](crate::scene::InheritType).
fn gltf_locals(scene: &Scene, pose: &Pose, unaimed: &[DMat4]) -> Vec<DMat4> {
    (0..scene.nodes.len()).map(|i| gltf_local(scene, pose, unaimed, i)).collect()
}

/// The skin deforming `mesh`, when it has one with joints.
fn skin_of<'s>(scene: &'s Scene, mesh: &crate::scene::Mesh) -> Option<&'s crate::scene::Skin> {
    mesh.skin.and_then(|s| scene.skins.get(s)).filter(|s| !s.joints.is_empty())
}

/// The deepest node that is each of `nodes` or one of its ancestors, if they share one.
fn common_ancestor(scene: &Scene, nodes: &[usize]) -> Option<usize> {
    let chain = |mut n: usize| {
        let mut c = vec![n];
        while let Some(p) = scene.nodes[n].parent {
            if c.len() > scene.nodes.len() {
                break;
            }
            c.push(p);
            n = p;
        }
        c.reverse();
        c
    };
    let mut common = chain(*nodes.first()?);
    for &n in &nodes[1..] {
        let c = chain(n);
        let k = common.iter().zip(&c).take_while(|(a, b)| a == b).count();
        common.truncate(k);
    }
    common.last().copied()
}

/// The unit vector of a signed axis.
fn axis_vector(a: Axis) -> DVec3 {
    match a {
        Axis::PosX => DVec3::X,
        Axis::NegX => DVec3::NEG_X,
        Axis::PosY => DVec3::Y,
        Axis::NegY => DVec3::NEG_Y,
        Axis::PosZ => DVec3::Z,
        Axis::NegZ => DVec3::NEG_Z,
    }
}

/// The rotation taking `axes` to glTF's (+Y up, +Z front, right-handed), `None` when it is the
/// identity or impossible (left-handed, or up parallel to front: a warning says so).
pub(crate) fn axis_rotation(axes: AxisSystem, warnings: &mut Vec<Warning>) -> Option<DQuat> {
    let up = axis_vector(axes.up);
    let front = axis_vector(axes.front);
    if !axes.right_handed || up.dot(front) != 0.0 {
        warnings.push(warning(
            "scene axes",
            format!("{axes} cannot be turned into glTF's axes by a rotation: written unconverted"),
        ));
        return None;
    }
    // Rows side, up, front: maps side → +X, up → +Y, front → +Z.
    let m = DMat3::from_cols(up.cross(front), up, front).transpose();
    let q = DQuat::from_mat3(&m).normalize();
    (q.angle_between(DQuat::IDENTITY) > 1e-12).then_some(q)
}

/// Splits an affine matrix into translation, unit rotation and scale with `m ≈ T·R·S`.
/// A negative determinant puts the mirror into scale x. A zero-length axis (scale 0) keeps a
/// rotation completed from the other axes (or identity), never NaN; non-finite translation or
/// scale parts become 0 and 1.
pub(crate) fn decompose(m: DMat4) -> (DVec3, DQuat, DVec3) {
    let t = m.w_axis.truncate();
    let mut cols = [m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate()];
    let mut s = DVec3::new(cols[0].length(), cols[1].length(), cols[2].length());
    if DMat3::from_cols(cols[0], cols[1], cols[2]).determinant() < 0.0 {
        s.x = -s.x;
    }
    let tiny = 1e-12 * (1.0 + s.abs().max_element());
    let ok: Vec<bool> = (0..3).map(|k| s[k].abs() > tiny).collect();
    for k in 0..3 {
        if ok[k] {
            cols[k] /= s[k];
        }
    }
    let r = match ok.iter().filter(|&&b| b).count() {
        3 => DMat3::from_cols(cols[0], cols[1], cols[2]),
        2 => {
            let z = ok.iter().position(|&b| !b).unwrap();
            let (a, b) = ((z + 1) % 3, (z + 2) % 3);
            cols[z] = cols[a].cross(cols[b]).normalize_or_zero();
            DMat3::from_cols(cols[0], cols[1], cols[2])
        }
        1 => {
            let a = ok.iter().position(|&b| b).unwrap();
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            cols[b] = cols[a].any_orthonormal_vector();
            cols[c] = cols[a].cross(cols[b]);
            DMat3::from_cols(cols[0], cols[1], cols[2])
        }
        _ => DMat3::IDENTITY,
    };
    let mut q = DQuat::from_mat3(&r);
    if !q.is_finite() || q.length_squared() < 1e-24 {
        q = DQuat::IDENTITY;
    }
    // glTF JSON cannot hold NaN or infinity: a broken matrix becomes the identity's parts.
    let t = if t.is_finite() { t } else { DVec3::ZERO };
    let s = if s.is_finite() { s } else { DVec3::ONE };
    (t, q.normalize(), s)
}

fn quat_f32(q: DQuat) -> [f32; 4] {
    let q = q.normalize();
    q.as_quat().normalize().to_array()
}

fn set_trs(g: &mut json::Node, t: DVec3, r: DQuat, s: DVec3) {
    if t != DVec3::ZERO {
        g.translation = Some(t.as_vec3().to_array());
    }
    if r.angle_between(DQuat::IDENTITY) > 1e-12 {
        g.rotation = Some(json::scene::UnitQuaternion(quat_f32(r)));
    }
    if s != DVec3::ONE {
        g.scale = Some(s.as_vec3().to_array());
    }
}

/// The glTF name of a scene node: the instance name for a 3DS `$$$DUMMY` that has one, else
/// the node's name.
fn gltf_name(name: &str, instance: &str) -> String {
    if name == "$$$DUMMY" && !instance.is_empty() {
        instance.to_string()
    } else {
        name.to_string()
    }
}

/// `{"keyscene": {...}}` extras keeping the source name/instance (where the glTF name differs
/// or an instance exists) and the hidden-at-rest flag; `None` when nothing needs keeping.
fn node_extras(name: &str, instance: &str, hidden: bool) -> json::extras::Extras {
    let mut obj = serde_json::Map::new();
    if gltf_name(name, instance) != name || !instance.is_empty() {
        obj.insert("name".into(), name.into());
        obj.insert("instance".into(), instance.into());
    }
    if hidden {
        obj.insert("hidden".into(), true.into());
    }
    if obj.is_empty() {
        return None;
    }
    let value = serde_json::json!({ "keyscene": obj });
    serde_json::value::RawValue::from_string(value.to_string()).ok()
}

/// `MAT_MAP_TILING` bit: mirror the map at every repeat (lib3ds `LIB3DS_TEXTURE_MIRROR`).
const TILING_MIRROR: u16 = 0x0002;
/// `MAT_MAP_TILING` bit: show the map once, no repeat (lib3ds `LIB3DS_TEXTURE_NO_TILE`).
const TILING_NO_TILE: u16 = 0x0010;

/// The glTF wrap mode (both S and T) for a map's 3DS `MAT_MAP_TILING` bits (lib3ds
/// `Lib3dsTextureMapFlags`): no tiling → CLAMP_TO_EDGE (also with mirror: glTF has no
/// mirror-once mode), mirror → MIRRORED_REPEAT, else REPEAT. FBX, 3DA and glTF sources store
/// 0, REPEAT (FBX and glTF keep their per-axis modes in `TextureMap::wrap`). Decal (bit 0x1) and the colour bits have no sampler counterpart.
pub(crate) fn wrap_mode(flags: u16) -> WrappingMode {
    if flags & TILING_NO_TILE != 0 {
        WrappingMode::ClampToEdge
    } else if flags & TILING_MIRROR != 0 {
        WrappingMode::MirroredRepeat
    } else {
        WrappingMode::Repeat
    }
}

/// The glTF wrapS/wrapT of `map`: its per-axis [`TextureMap::wrap`] (FBX, glTF sources), or,
/// when both are REPEAT, [`wrap_mode`] of its 3DS tiling bits for both.
fn wrap_modes(map: &crate::scene::TextureMap) -> [WrappingMode; 2] {
    use crate::scene::WrapMode;
    if map.wrap == [WrapMode::Repeat; 2] {
        return [wrap_mode(map.flags); 2];
    }
    map.wrap.map(|w| match w {
        WrapMode::Repeat => WrappingMode::Repeat,
        WrapMode::Clamp => WrappingMode::ClampToEdge,
        WrapMode::Mirror => WrappingMode::MirroredRepeat,
    })
}

/// `image/png` or `image/jpeg` from the file's signature, else `None`.
/// `bytes` (an image the `image` crate decodes: TGA, BMP — the formats `render` reads) re-encoded
/// as PNG; `None` when it cannot be decoded. The format is recognised from the bytes, else from
/// `file_name`'s extension (TGA has no signature). Decoding is bounded: at most 16384 texels a
/// side and 512 MiB.
fn to_png(bytes: &[u8], file_name: &str) -> Option<Vec<u8>> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes));
    if let Ok(format) = image::ImageFormat::from_path(file_name) {
        reader.set_format(format);
    }
    let mut reader = reader.with_guessed_format().ok()?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(16384);
    limits.max_image_height = Some(16384);
    limits.max_alloc = Some(512 << 20);
    reader.limits(limits);
    let img = reader.decode().ok()?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters, for file names in URIs.
pub(crate) fn uri_encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
