//! glTF document → [`Scene`], on the `gltf` crate (which parses and validates the JSON and the
//! GLB container); buffers are resolved here.

use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3, Vec2, Vec3, Vec4};

use super::{accessors, base64, warning, Error, DEFAULT_READ_FPS};
use crate::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, RotationTrack, Track};
use crate::scene::{
    Attribute, AxisSystem, Camera, FovAxis, Light, LightKind, MapSlot, Material, Mesh, Metadata,
    Node, NodeKind, Scene, TextureMap, Transform, Units, UvSet, UvTransform, Warning, WrapMode,
};
use crate::ReadOptions;

/// glTF-specific reading choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GltfReadOptions {
    /// Frames per second given to every animation: a glTF key at `t` seconds becomes frame
    /// `t · fps`. Default [`DEFAULT_READ_FPS`] (30, 3D Studio's rate).
    pub fps: f64,
}

impl Default for GltfReadOptions {
    fn default() -> Self {
        GltfReadOptions { fps: DEFAULT_READ_FPS }
    }
}

/// Reads a `.glb` or `.gltf` file with [`GltfReadOptions::default`] (30 fps).
pub fn read(bytes: &[u8], opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), Error> {
    read_with(bytes, opts, &GltfReadOptions::default())
}

/// Reads a `.glb` or `.gltf` file into a scene.
///
/// External buffers and images are found relative to `opts.base_dir` (a `.gltf` with external
/// buffers and no `base_dir` is an error); `data:` URIs are decoded. The scene is +Y up,
/// metres, right-handed (`meta.axes`, `meta.units`), `meta.format` = `"gltf"`.
///
/// What becomes what: every glTF node is a scene node (TRS or matrix → translation, rotation,
/// scale), named by `name` unless keyscene's extras restore a source name/instance; a mesh's
/// primitives (triangles, strips and fans) are merged into one [`Mesh`] with one material slot
/// per glTF material, POSITION/NORMAL/TEXCOORD_n (V flipped back up)/COLOR_0 per vertex;
/// perspective cameras keep `yfov` as a vertical FOV; KHR_lights_punctual lights become
/// lights (cone half angles → full hotspot/falloff degrees); animation channels become tracks
/// with key frame `t · fps` (snapped to a whole frame within f32 rounding): LINEAR → linear keys (slerp for rotations), STEP → step keys,
/// CUBICSPLINE → Hermite keys with tangents turned from per second to per frame (÷ fps;
/// the evaluator uses them for translation and scale and slerps rotation keys).
/// Skins become [`Skin`](crate::scene::Skin)s on the mesh (a mesh shown with two skins is
/// copied), influences from every `JOINTS_n`/`WEIGHTS_n` pair; morph targets become
/// [`MorphTarget`](crate::scene::MorphTarget)s named by the mesh's `extras.targetNames`, with
/// the mesh's `weights` as defaults; weight channels become `DeformPercent#k` property tracks
/// in percent. The writer's `_KEYSCENE_VERTEX` restores the source vertex order of all of them.
///
/// Errors: [`Error::Limit`] past `opts.limits`; [`Error::Invalid`] (with the JSON place) for
/// a document the `gltf` crate refuses, a buffer shorter than it declares, a node with two
/// parents or a cycle, a skin or animation channel whose accessors fail the checks of
/// `docs/gltf.md` ("Reading files from elsewhere"). A primitive or vertex attribute whose
/// accessor fails them is left out with a warning instead.
///
/// A document whose JSON stops early is "truncated at byte N" (N: the file's length for a
/// `.gltf`, the JSON chunk's end for a GLB), with what it was inside; other JSON errors name
/// their line and column.
pub fn read_with(
    bytes: &[u8],
    opts: &ReadOptions,
    gopts: &GltfReadOptions,
) -> Result<(Scene, Vec<Warning>), Error> {
    if bytes.len() as u64 > opts.limits.max_bytes {
        return Err(Error::Limit {
            place: "file".into(),
            message: format!("{} bytes exceed the limit of {}", bytes.len(), opts.limits.max_bytes),
        });
    }
    let fps = if gopts.fps.is_finite() && gopts.fps > 0.0 { gopts.fps } else { DEFAULT_READ_FPS };
    let (json, blob) = if bytes.starts_with(b"glTF") {
        let (json, bin) = super::glb::split(bytes)?;
        (json, bin.map(<[u8]>::to_vec))
    } else {
        (bytes, None)
    };
    let invalid_doc =
        |e: gltf::Error| Error::Invalid { place: "document".into(), message: e.to_string() };
    // Where the JSON starts in the file: after the GLB header and JSON chunk header.
    let json_start = if bytes.starts_with(b"glTF") { 20 } else { 0 };
    let root = gltf::Gltf::from_slice_without_validation(json)
        .map_err(|e| json_error(e, json.len() as u64, json_start))?
        .document
        .into_json();
    // gltf-json 1.4's validation looks up each primitive's POSITION accessor before checking
    // that the index exists (it panicked on such a file, found by fuzzing): check it first.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let pos = gltf_json::validation::Checked::Valid(gltf::Semantic::Positions);
            if let Some(i) = prim.attributes.get(&pos).filter(|i| i.value() >= root.accessors.len())
            {
                return Err(Error::Invalid {
                    place: format!("meshes[{m}] › primitives[{p}]"),
                    message: format!(
                        "POSITION names accessor {} of {}",
                        i.value(),
                        root.accessors.len()
                    ),
                });
            }
        }
    }
    let document = gltf::Document::from_json(root).map_err(invalid_doc)?;
    let doc = &document;
    let mut warnings = Vec::new();
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in doc.buffers() {
        let place = format!("buffers[{}]", b.index());
        let data = match b.source() {
            gltf::buffer::Source::Bin => blob.clone().ok_or_else(|| Error::Invalid {
                place: place.clone(),
                message: "GLB has no BIN chunk".into(),
            })?,
            gltf::buffer::Source::Uri(uri) => load_uri(uri, opts, &place)?,
        };
        if data.len() < b.length() {
            return Err(Error::Invalid {
                place,
                message: format!("declares {} bytes but has {}", b.length(), data.len()),
            });
        }
        buffers.push(data);
    }
    // Every buffer view lies inside its buffer (glTF 2.0 §3.6.1), whether or not an accessor
    // this reader uses names it (image views are not read here): one that does not is a
    // warning, and an accessor reading it is refused as before.
    for v in doc.views() {
        let len = buffers.get(v.buffer().index()).map_or(0, Vec::len);
        if v.offset().checked_add(v.length()).is_none_or(|end| end > len) {
            warnings.push(warning(
                &format!("bufferViews[{}]", v.index()),
                format!(
                    "byteOffset {} + byteLength {} is past its buffer's {len} bytes",
                    v.offset(),
                    v.length()
                ),
            ));
        }
    }
    let max = opts.limits.max_elements;
    let check = |place: &str, n: usize| -> Result<(), Error> {
        if n as u64 > max {
            return Err(Error::Limit {
                place: place.into(),
                message: format!("{n} elements exceed the limit of {max}"),
            });
        }
        Ok(())
    };
    check("nodes", doc.nodes().len())?;
    check("accessors", doc.accessors().len())?;

    let mut scene = Scene {
        meta: Metadata {
            format: "gltf".into(),
            version: Some(2),
            units: Units::Metres(1.0),
            axes: AxisSystem::Y_UP_RIGHT_HANDED,
            frame_rate: Some(fps),
            frame_range: None,
            properties: doc
                .as_json()
                .asset
                .generator
                .iter()
                .map(|g| ("generator".to_string(), g.clone()))
                .collect(),
        },
        ..Scene::default()
    };
    for m in doc.materials() {
        scene.materials.push(material(&m, opts.base_dir.as_deref()));
    }
    for c in doc.cameras() {
        scene.cameras.push(camera(&c, &mut warnings));
    }
    if let Some(lights) = doc.lights() {
        for l in lights {
            scene.lights.push(light(&l));
        }
    }
    let mut mesh_of: Vec<Option<usize>> = Vec::new();
    // Per glTF mesh: its vertices' raw influences (joint slot, weight), when skinned.
    let mut influences_of: Vec<Option<Influences>> = Vec::new();
    for m in doc.meshes() {
        let mesh = mesh(&m, &buffers, &scene.materials, max, &mut warnings)?;
        let (mesh, influences) = match mesh {
            Some((mesh, inf)) => (Some(mesh), inf),
            None => (None, None),
        };
        influences_of.push(influences);
        mesh_of.push(mesh.map(|mesh| {
            scene.meshes.push(mesh);
            scene.meshes.len() - 1
        }));
    }
    // (glTF mesh, glTF skin) → scene mesh, for meshes shown with a skin.
    let mut skinned: std::collections::HashMap<(usize, usize), usize> = Default::default();

    let mut parent: Vec<Option<usize>> = vec![None; doc.nodes().len()];
    for node in doc.nodes() {
        let i = node.index();
        let place = format!("nodes[{i}]");
        let kind = if let Some(c) = node.camera() {
            NodeKind::Camera(c.index())
        } else if let Some(l) = node.light() {
            NodeKind::Light(l.index())
        } else if node.mesh().is_some() {
            NodeKind::Mesh
        } else {
            NodeKind::Null
        };
        let mut n = Node::new(node.name().unwrap_or(""), kind);
        let (t, r, s) = node.transform().decomposed();
        let rotation = DQuat::from_array(r.map(f64::from));
        n.transform = Transform {
            translation: DVec3::from_array(t.map(f64::from)),
            rotation: if rotation.length_squared() > 0.0 {
                rotation.normalize()
            } else {
                DQuat::IDENTITY
            },
            scale: DVec3::from_array(s.map(f64::from)),
        };
        n.mesh = node.mesh().and_then(|m| mesh_of.get(m.index()).copied().flatten());
        if let (Some(gm), Some(gs), Some(m)) = (node.mesh(), node.skin(), n.mesh) {
            let key = (gm.index(), gs.index());
            if let Some(&sm) = skinned.get(&key) {
                n.mesh = Some(sm);
            } else if let Some(inf) = influences_of.get(gm.index()).cloned().flatten() {
                let skin = skin(&gs, &buffers, inf, doc.nodes().len(), &mut warnings)?;
                // A mesh shown with two skins is copied, as the model keeps the skin on it.
                let sm = if scene.meshes[m].skin.is_some() {
                    scene.meshes.push(scene.meshes[m].clone());
                    scene.meshes.len() - 1
                } else {
                    m
                };
                scene.meshes[sm].skin = Some(scene.skins.len());
                scene.skins.push(skin);
                skinned.insert(key, sm);
                n.mesh = Some(sm);
            }
        }
        if let Some(extras) = node.extras() {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(extras.get()) {
                let k = &v["keyscene"];
                if let Some(name) = k["name"].as_str() {
                    n.name = name.into();
                }
                if let Some(instance) = k["instance"].as_str() {
                    n.instance = instance.into();
                }
                n.hidden = k["hidden"].as_bool().unwrap_or(false);
            }
        }
        for c in node.children() {
            let c = c.index();
            if parent[c].is_some() || c == i {
                return Err(Error::Invalid {
                    place,
                    message: format!("node {c} has more than one parent"),
                });
            }
            parent[c] = Some(i);
            n.children.push(c);
        }
        scene.nodes.push(n);
    }
    for (i, p) in parent.iter().enumerate() {
        scene.nodes[i].parent = *p;
        if p.is_none() {
            scene.roots.push(i);
        }
    }
    scene
        .validate()
        .map_err(|e| Error::Invalid { place: "nodes".into(), message: e.to_string() })?;

    let node_targets: Vec<usize> = scene
        .nodes
        .iter()
        .map(|n| n.mesh.map_or(0, |m| scene.meshes[m].morph_targets.len()))
        .collect();
    for a in doc.animations() {
        let anim = animation(&a, doc.as_json(), &buffers, fps, max, &node_targets, &mut warnings)?;
        if anim.channels.is_empty() {
            continue;
        }
        let range = anim.frame_range;
        scene.meta.frame_range = Some(match scene.meta.frame_range {
            Some((lo, hi)) => (lo.min(range.0), hi.max(range.1)),
            None => range,
        });
        scene.animations.push(anim);
    }
    Ok((scene, warnings))
}

/// The bytes of a buffer URI: a `data:` URI decoded, else a file under `opts.base_dir`.
fn load_uri(uri: &str, opts: &ReadOptions, place: &str) -> Result<Vec<u8>, Error> {
    let invalid =
        |message: String| Error::Invalid { place: format!("{place} \"{}\"", short(uri)), message };
    if let Some(data) = base64::decode_data_uri(uri) {
        return data.ok_or_else(|| invalid("data URI is not valid base64".into()));
    }
    let Some(dir) = &opts.base_dir else {
        return Err(invalid("external buffer, but no base folder to resolve it in".into()));
    };
    let path = dir.join(percent_decode(uri));
    let len =
        std::fs::metadata(&path).map_err(|e| invalid(format!("{}: {e}", path.display())))?.len();
    if len > opts.limits.max_bytes {
        return Err(Error::Limit {
            place: place.into(),
            message: format!(
                "{} is {len} bytes, over the limit of {}",
                path.display(),
                opts.limits.max_bytes
            ),
        });
    }
    std::fs::read(&path).map_err(|e| invalid(format!("{}: {e}", path.display())))
}

fn short(uri: &str) -> String {
    if uri.len() > 40 {
        format!("{}…", &uri[..uri.char_indices().nth(40).map(|(i, _)| i).unwrap_or(uri.len())])
    } else {
        uri.to_string()
    }
}

/// Decodes `%XX` escapes (RFC 3986); malformed escapes are kept as they are.
fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&uri[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The material, with the writer's mapping inverted: baseColor → diffuse and transparency,
/// roughness → shininess (`1 − roughness`), emissive → self-illumination relative to diffuse.
fn material(m: &gltf::Material, base_dir: Option<&Path>) -> Material {
    let pbr = m.pbr_metallic_roughness();
    let c = pbr.base_color_factor();
    let diffuse = Vec3::new(c[0], c[1], c[2]);
    let emissive = Vec3::from_array(m.emissive_factor());
    let self_illumination = if diffuse.max_element() > 0.0 {
        (emissive.max_element() / diffuse.max_element()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut maps = Vec::new();
    if let Some(info) = pbr.base_color_texture() {
        maps.push(texture_map(MapSlot::Diffuse, &info.texture(), uv_transform(&info), base_dir));
    }
    if let Some(info) = m.emissive_texture() {
        maps.push(texture_map(MapSlot::Emissive, &info.texture(), uv_transform(&info), base_dir));
    }
    if let Some(n) = m.normal_texture() {
        maps.push(texture_map(MapSlot::Bump, &n.texture(), UvTransform::default(), base_dir));
    }
    Material {
        name: m.name().unwrap_or("").to_string(),
        diffuse,
        transparency: 1.0 - c[3],
        shininess: 1.0 - pbr.roughness_factor(),
        self_illumination,
        two_sided: m.double_sided(),
        maps,
        ..Material::default()
    }
}

/// A map's UV transform from its KHR_texture_transform: the writer's mapping (export.rs
/// `texture_info`) inverted.
fn uv_transform(info: &gltf::texture::Info) -> UvTransform {
    info.texture_transform().map_or(UvTransform::default(), |t| {
        let th = -f64::from(t.rotation());
        let [sx, sy] = t.scale();
        let [ox, oy] = t.offset().map(f64::from);
        let sy64 = f64::from(sy);
        UvTransform {
            scale: Vec2::new(sx, sy),
            offset: Vec2::new((ox + sy64 * th.sin()) as f32, (1.0 - oy - sy64 * th.cos()) as f32),
            rotation_degrees: th.to_degrees() as f32,
        }
    })
}

/// A texture map of `slot` for a glTF texture: the image's file (URI, or the image's name when
/// embedded), the sampler's wrapS/wrapT as [`TextureMap::wrap`], and its wrap mode as 3DS
/// tiling bits (`export.rs` `wrap_mode` inverted: CLAMP_TO_EDGE → no tile 0x10,
/// MIRRORED_REPEAT → mirror 0x2; wrapS decides).
fn texture_map(
    slot: MapSlot,
    tex: &gltf::Texture,
    uv_transform: UvTransform,
    base_dir: Option<&Path>,
) -> TextureMap {
    let image = tex.source();
    let (file, resolved) = match image.source() {
        gltf::image::Source::Uri { uri, .. } if !uri.starts_with("data:") => {
            let file = percent_decode(uri);
            let resolved = base_dir.and_then(|d| resolve(d, &file));
            (file, resolved)
        }
        _ => (
            image.name().map(str::to_string).unwrap_or_else(|| format!("image{}", image.index())),
            None,
        ),
    };
    use gltf::texture::WrappingMode as W;
    let sampler = tex.sampler();
    let flags = match sampler.wrap_s() {
        W::ClampToEdge => 0x10,
        W::MirroredRepeat => 0x2,
        W::Repeat => 0,
    };
    let wrap = [sampler.wrap_s(), sampler.wrap_t()].map(|w| match w {
        W::ClampToEdge => WrapMode::Clamp,
        W::MirroredRepeat => WrapMode::Mirror,
        W::Repeat => WrapMode::Repeat,
    });
    TextureMap { slot, file, resolved, embedded: None, strength: 1.0, uv_transform, flags, wrap }
}

/// `dir/file`, or the entry of `dir` whose name matches `file` case-insensitively.
fn resolve(dir: &Path, file: &str) -> Option<PathBuf> {
    let direct = dir.join(file);
    if direct.is_file() {
        return Some(direct);
    }
    let (sub, name) = match file.rsplit_once('/') {
        Some((s, n)) => (dir.join(s), n),
        None => (dir.to_path_buf(), file),
    };
    std::fs::read_dir(sub).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.eq_ignore_ascii_case(name))
    })
}

fn camera(c: &gltf::Camera, warnings: &mut Vec<Warning>) -> Camera {
    let name = c.name().unwrap_or("").to_string();
    match c.projection() {
        gltf::camera::Projection::Perspective(p) => Camera {
            name,
            target: None,
            fov_degrees: f64::from(p.yfov()).to_degrees(),
            fov_axis: FovAxis::Vertical,
            roll_degrees: 0.0,
            near: Some(f64::from(p.znear())),
            far: p.zfar().map(f64::from),
            aspect: p.aspect_ratio().map(f64::from),
        },
        gltf::camera::Projection::Orthographic(o) => {
            warnings.push(warning(
                format!("cameras[{}]", c.index()),
                "orthographic camera read as a perspective camera (the model has no orthographic cameras)",
            ));
            Camera {
                name,
                target: None,
                fov_degrees: 45.0,
                fov_axis: FovAxis::Vertical,
                roll_degrees: 0.0,
                near: Some(f64::from(o.znear())),
                far: Some(f64::from(o.zfar())),
                aspect: None,
            }
        }
    }
}

fn light(l: &gltf::khr_lights_punctual::Light) -> Light {
    use gltf::khr_lights_punctual::Kind;
    let (kind, hotspot, falloff) = match l.kind() {
        Kind::Directional => (LightKind::Directional, 0.0, 0.0),
        Kind::Point => (LightKind::Point, 0.0, 0.0),
        Kind::Spot { inner_cone_angle, outer_cone_angle } => (
            LightKind::Spot,
            2.0 * f64::from(inner_cone_angle).to_degrees(),
            2.0 * f64::from(outer_cone_angle).to_degrees(),
        ),
    };
    Light {
        name: l.name().unwrap_or("").to_string(),
        kind,
        color: Vec3::from_array(l.color()),
        intensity: f64::from(l.intensity()),
        hotspot_degrees: hotspot,
        falloff_degrees: falloff,
        attenuation: l.range().map(|r| (0.0, f64::from(r))),
        on: true,
        target: None,
        roll_degrees: 0.0,
    }
}

/// Per-vertex skin influences of a mesh: (joint slot in the node's skin, weight).
type Influences = Vec<Vec<(u32, f32)>>;

/// The scene skin for glTF skin `s` over a mesh's per-vertex `influences`: joints are glTF
/// node indices (the reader keeps glTF's node order) with their inverse bind matrices
/// (identity when the skin has none), which are the model's
/// [`SkinJoint::inverse_bind`](crate::scene::SkinJoint::inverse_bind): glTF ignores the mesh
/// node's transform in skinning, as the model's formula (bone world · inverse bind · mesh
/// position) does. Influences on a joint slot past the list are dropped with a warning.
fn skin(
    s: &gltf::Skin,
    buffers: &[Vec<u8>],
    mut influences: Influences,
    node_count: usize,
    warnings: &mut Vec<Warning>,
) -> Result<crate::scene::Skin, Error> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    let place = format!("skins[{}]", s.index());
    if let Some(acc) = s.inverse_bind_matrices() {
        accessors::check(&acc, buffers, &accessors::MAT4_FLOAT)
            .map_err(|message| Error::Invalid { place: place.clone(), message })?;
    }
    let ibm: Vec<glam::DMat4> = match s.reader(get).read_inverse_bind_matrices() {
        Some(it) => {
            it.take(node_count + 1).map(|m| glam::Mat4::from_cols_array_2d(&m).as_dmat4()).collect()
        }
        None => Vec::new(),
    };
    let joints: Vec<crate::scene::SkinJoint> = s
        .joints()
        .enumerate()
        .map(|(k, j)| crate::scene::SkinJoint {
            node: j.index(),
            inverse_bind: ibm.get(k).copied().unwrap_or(glam::DMat4::IDENTITY),
        })
        .collect();
    if !ibm.is_empty() && ibm.len() < joints.len() {
        return Err(Error::Invalid {
            place,
            message: format!("{} inverse bind matrices for {} joints", ibm.len(), joints.len()),
        });
    }
    let mut dropped = 0;
    for v in &mut influences {
        let before = v.len();
        v.retain(|&(j, _)| (j as usize) < joints.len());
        dropped += before - v.len();
    }
    if dropped > 0 {
        warnings.push(warning(place, format!("{dropped} influences name no joint: dropped")));
    }
    Ok(crate::scene::Skin { joints, influences, dq_weights: Vec::new() })
}

/// Merges a glTF mesh's triangle primitives into one [`Mesh`] (with its morph targets) and
/// the vertices' skin influences (`JOINTS_n`/`WEIGHTS_n`, zero weights left out) when it has
/// them; `None` when it has no triangles.
fn mesh(
    m: &gltf::Mesh,
    buffers: &[Vec<u8>],
    materials: &[Material],
    max: u64,
    warnings: &mut Vec<Warning>,
) -> Result<Option<(Mesh, Option<Influences>)>, Error> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    use gltf::mesh::Mode;
    let mut out = Mesh {
        name: m.name().unwrap_or("").to_string(),
        polygon_starts: vec![0],
        ..Mesh::default()
    };
    let mut normals: Vec<Vec3> = Vec::new();
    let mut all_normals = true;
    // TANGENT (xyz, w = handedness) while every primitive has it.
    let mut tangents: Vec<[f32; 4]> = Vec::new();
    let mut all_tangents = true;
    let mut uv_sets: Vec<Vec<Vec2>> = Vec::new();
    let mut colors: Option<Vec<Vec4>> = None;
    let mut polygon_materials = Vec::new();
    // Source vertex index per merged vertex, while every primitive has them.
    let mut source_ids: Option<Vec<u32>> = Some(Vec::new());
    let mut influences: Option<Influences> = None;
    let mut targets: Vec<(Vec<DVec3>, Option<Vec<Vec3>>)> = Vec::new();
    for prim in m.primitives() {
        let place = format!("meshes[{}] › primitives[{}]", m.index(), prim.index());
        let too_many = |n: usize| Error::Limit {
            place: place.clone(),
            message: format!("{n} elements exceed the limit of {max}"),
        };
        let mode = prim.mode();
        if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
            warnings.push(warning(
                &place,
                format!("{} primitive left out: only triangles are read", mode_name(mode)),
            ));
            continue;
        }
        // Every accessor is checked before the `gltf` crate reads it (see `accessors`):
        // POSITION and indices must be readable, other attributes are left out when not.
        let Some(pos_acc) = prim.get(&gltf::Semantic::Positions) else {
            warnings.push(warning(&place, "primitive without POSITION left out"));
            continue;
        };
        if let Err(e) = accessors::check(&pos_acc, buffers, &accessors::VEC3_FLOAT) {
            warnings.push(warning(&place, format!("POSITION {e}: primitive left out")));
            continue;
        }
        if let Some(Err(e)) =
            prim.indices().map(|a| accessors::check(&a, buffers, &accessors::INDICES))
        {
            warnings.push(warning(&place, format!("indices {e}: primitive left out")));
            continue;
        }
        let vertex_count = pos_acc.count();
        // Whether a vertex attribute may be read: its type and bounds, and one element per
        // vertex (glTF 2.0 §3.7.2.1); a warning when not.
        let mut usable = |acc: Option<gltf::Accessor>, allowed: &accessors::Allowed, what: &str| {
            let acc = acc?;
            let r = accessors::check(&acc, buffers, allowed).and_then(|()| {
                if acc.count() == vertex_count {
                    Ok(())
                } else {
                    Err(format!(
                        "accessors[{}]: {} elements for {vertex_count} vertices",
                        acc.index(),
                        acc.count()
                    ))
                }
            });
            match r {
                Ok(()) => Some(()),
                Err(e) => {
                    warnings.push(warning(&place, format!("{what} {e}: left out")));
                    None
                }
            }
        };
        use gltf::Semantic as Sem;
        let ok_normals = usable(prim.get(&Sem::Normals), &accessors::VEC3_FLOAT, "NORMAL");
        let ok_tangents = usable(prim.get(&Sem::Tangents), &accessors::VEC4_FLOAT, "TANGENT");
        let mut uv_count = 0;
        while prim.get(&Sem::TexCoords(uv_count)).is_some() {
            let a = prim.get(&Sem::TexCoords(uv_count));
            if usable(a, &accessors::TEXCOORD, &format!("TEXCOORD_{uv_count}")).is_none() {
                break;
            }
            uv_count += 1;
        }
        let ok_colors = usable(prim.get(&Sem::Colors(0)), &accessors::COLOR, "COLOR_0");
        let mut joint_sets = 0;
        while let (Some(j), Some(w)) =
            (prim.get(&Sem::Joints(joint_sets)), prim.get(&Sem::Weights(joint_sets)))
        {
            let set = joint_sets;
            if usable(Some(j), &accessors::JOINTS, &format!("JOINTS_{set}")).is_none()
                || usable(Some(w), &accessors::WEIGHTS, &format!("WEIGHTS_{set}")).is_none()
            {
                break;
            }
            joint_sets += 1;
        }
        let semantic = gltf::Semantic::Extras(super::SOURCE_VERTEX_ATTRIBUTE[1..].to_string());
        let ok_ids = usable(prim.get(&semantic), &accessors::SCALAR_FLOAT, "_KEYSCENE_VERTEX");
        // Per morph target: whether its POSITION and NORMAL deltas may be read.
        let target_ok: Vec<(bool, bool)> = prim
            .morph_targets()
            .enumerate()
            .map(|(t, mt)| {
                let p = usable(
                    mt.positions(),
                    &accessors::VEC3_FLOAT,
                    &format!("targets[{t}] POSITION"),
                );
                let n =
                    usable(mt.normals(), &accessors::VEC3_FLOAT, &format!("targets[{t}] NORMAL"));
                (p.is_some(), n.is_some())
            })
            .collect();
        let reader = prim.reader(get);
        let Some(pos) = reader.read_positions() else {
            warnings.push(warning(&place, "primitive without POSITION left out"));
            continue;
        };
        if pos.len() as u64 > max {
            return Err(too_many(pos.len()));
        }
        let base = out.positions.len() as u32;
        let count = pos.len();
        let ids = prim
            .get(&semantic)
            .filter(|_| ok_ids.is_some())
            .and_then(|a| gltf::accessor::Iter::<f32>::new(a, get))
            .map(|it| {
                it.map(|f| if f >= 0.0 && f.fract() == 0.0 { f as u32 } else { u32::MAX })
                    .collect::<Vec<_>>()
            });
        source_ids = match (source_ids, ids) {
            (Some(mut all), Some(ids)) => {
                all.extend(ids);
                Some(all)
            }
            _ => None,
        };
        out.positions.extend(pos.map(|p| DVec3::from_array(p.map(f64::from))));
        let indices: Vec<u32> = match reader.read_indices() {
            Some(ix) => {
                let ix = ix.into_u32();
                if ix.len() as u64 > max {
                    return Err(too_many(ix.len()));
                }
                ix.collect()
            }
            None => (0..count as u32).collect(),
        };
        if let Some(&bad) = indices.iter().find(|&&i| i as usize >= count) {
            return Err(Error::Invalid {
                place,
                message: format!("index {bad} past the {count} vertices"),
            });
        }
        let tris: Vec<[u32; 3]> = match mode {
            Mode::Triangles => indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect(),
            Mode::TriangleStrip => (2..indices.len())
                .map(|k| {
                    if k % 2 == 0 {
                        [indices[k - 2], indices[k - 1], indices[k]]
                    } else {
                        [indices[k - 1], indices[k - 2], indices[k]]
                    }
                })
                .collect(),
            _ => (2..indices.len()).map(|k| [indices[0], indices[k - 1], indices[k]]).collect(),
        };
        let slot = match prim.material().index() {
            Some(mi) if mi < materials.len() => {
                let slot = match out.material_slots.iter().position(|&s| s == Some(mi)) {
                    Some(s) => s,
                    None => {
                        out.material_slots.push(Some(mi));
                        out.material_slots.len() - 1
                    }
                };
                slot as u32
            }
            _ => Mesh::NO_MATERIAL,
        };
        for t in &tris {
            out.corner_vertices.extend(t.iter().map(|&v| base + v));
            out.polygon_starts.push(out.corner_vertices.len() as u32);
            polygon_materials.push(slot);
        }
        match ok_normals.and_then(|()| reader.read_normals()) {
            Some(n) if all_normals => normals.extend(n.take(count).map(Vec3::from_array)),
            _ => all_normals = false,
        }
        match ok_tangents.and_then(|()| reader.read_tangents()) {
            Some(t) if all_tangents => tangents.extend(t.take(count)),
            _ => all_tangents = false,
        }
        let mut set = 0;
        while let Some(uv) = (set < uv_count).then(|| reader.read_tex_coords(set)).flatten() {
            let uv: Vec<Vec2> =
                uv.into_f32().take(count).map(|[u, v]| Vec2::new(u, 1.0 - v)).collect();
            if uv_sets.len() <= set as usize {
                uv_sets.push(vec![Vec2::ZERO; base as usize]);
            }
            let s = &mut uv_sets[set as usize];
            s.resize(base as usize, Vec2::ZERO);
            s.extend(uv);
            set += 1;
        }
        if let Some(c) = ok_colors.and_then(|()| reader.read_colors(0)) {
            let dst = colors.get_or_insert_with(|| vec![Vec4::ONE; base as usize]);
            dst.resize(base as usize, Vec4::ONE);
            dst.extend(c.into_rgba_f32().take(count).map(Vec4::from_array));
        }
        let mut set = 0;
        while set < joint_sets {
            let (Some(j), Some(w)) = (reader.read_joints(set), reader.read_weights(set)) else {
                break;
            };
            let dst = influences.get_or_insert_with(Vec::new);
            dst.resize(base as usize + count, Vec::new());
            for (k, (j, w)) in j.into_u16().zip(w.into_f32()).take(count).enumerate() {
                for (j, w) in j.into_iter().zip(w) {
                    if w > 0.0 && w.is_finite() {
                        dst[base as usize + k].push((u32::from(j), w));
                    }
                }
            }
            set += 1;
        }
        // Read target by target (not with the crate's `read_morph_targets`, which builds
        // every target's readers, checked or not).
        for (t, mt) in prim.morph_targets().enumerate() {
            let (p_ok, n_ok) = target_ok.get(t).copied().unwrap_or((false, false));
            let read = |a: Option<gltf::Accessor<'_>>, ok: bool| {
                a.filter(|_| ok).and_then(|a| gltf::accessor::Iter::<[f32; 3]>::new(a, get))
            };
            let (p, n) = (read(mt.positions(), p_ok), read(mt.normals(), n_ok));
            if (t as u64 + 1).saturating_mul(out.positions.len() as u64) > max {
                return Err(too_many((t + 1) * out.positions.len()));
            }
            if targets.len() <= t {
                targets.push((Vec::new(), None));
            }
            let (dp, dn) = &mut targets[t];
            dp.resize(base as usize, DVec3::ZERO);
            if let Some(p) = p {
                dp.extend(p.take(count).map(vec3));
            }
            if let Some(n) = n {
                let dn = dn.get_or_insert_with(Vec::new);
                dn.resize(base as usize, Vec3::ZERO);
                dn.extend(n.take(count).map(Vec3::from_array));
            }
        }
    }
    if out.polygon_count() == 0 {
        return Ok(None);
    }
    let n = out.positions.len();
    if all_normals && normals.len() == n {
        // glTF TANGENT.w is the bitangent's side: B = cross(N, T) · w (glTF 2.0 §3.7.2.1).
        if all_tangents && tangents.len() == n {
            let t: Vec<Vec3> = tangents.iter().map(|&[x, y, z, _]| Vec3::new(x, y, z)).collect();
            let b = tangents.iter().zip(&normals).zip(&t).map(|((&[.., w], n), t)| n.cross(*t) * w);
            out.binormals =
                Some(Attribute { values: b.collect(), mapping: crate::scene::Mapping::PerVertex });
            out.tangents = Some(Attribute { values: t, mapping: crate::scene::Mapping::PerVertex });
        }
        out.normals =
            Some(Attribute { values: normals, mapping: crate::scene::Mapping::PerVertex });
    }
    out.uv_sets = uv_sets
        .into_iter()
        .map(|mut values| {
            values.resize(n, Vec2::ZERO);
            UvSet {
                name: String::new(),
                uvs: Attribute { values, mapping: crate::scene::Mapping::PerVertex },
            }
        })
        .collect();
    out.colors = colors.map(|mut values| {
        values.resize(n, Vec4::ONE);
        Attribute { values, mapping: crate::scene::Mapping::PerVertex }
    });
    out.polygon_materials = polygon_materials;
    let defaults = m.weights().unwrap_or(&[]);
    let names: Vec<String> = m
        .extras()
        .as_ref()
        .and_then(|e| serde_json::from_str::<serde_json::Value>(e.get()).ok())
        .and_then(|v| {
            let names = v["targetNames"].as_array()?.clone();
            Some(names.iter().map(|n| n.as_str().unwrap_or("").to_string()).collect())
        })
        .unwrap_or_default();
    out.morph_targets = targets
        .into_iter()
        .enumerate()
        .map(|(k, (mut dp, dn))| {
            dp.resize(n, DVec3::ZERO);
            crate::scene::MorphTarget {
                name: names.get(k).cloned().unwrap_or_else(|| format!("target {k}")),
                position_deltas: dp,
                normal_deltas: dn.map(|mut d| {
                    d.resize(n, Vec3::ZERO);
                    d
                }),
                default_weight: defaults.get(k).map_or(0.0, |&w| f64::from(w)),
                inbetweens: Vec::new(),
                vertex_weights: Vec::new(),
            }
        })
        .collect();
    if let Some(inf) = &mut influences {
        inf.resize(n, Vec::new());
    }
    if let Some(ids) = source_ids.filter(|ids| ids.len() == n) {
        restore_source_vertices(&mut out, &mut influences, &ids);
    }
    Ok(Some((out, influences)))
}

/// Renumbers the merged glTF vertices of `mesh` by their source indices `ids` (the writer's
/// [`super::SOURCE_VERTEX_ATTRIBUTE`]), so positions come back in the source's vertex order;
/// normals, tangents, binormals, UVs and colours become per-corner, as glTF's split vertices
/// carried them. Leaves
/// the mesh alone when an id is invalid or the ids would ask for more than twice the vertices
/// present (a hostile file must not make it allocate).
fn restore_source_vertices(mesh: &mut Mesh, influences: &mut Option<Influences>, ids: &[u32]) {
    let Some(&max_id) = ids.iter().max() else { return };
    if max_id == u32::MAX || max_id as usize >= 2 * ids.len() + 16 {
        return;
    }
    fn renumber<T: Clone + Default>(values: &[T], ids: &[u32], len: usize) -> Vec<T> {
        let mut out = vec![T::default(); len];
        for (v, &id) in ids.iter().enumerate() {
            if let Some(x) = values.get(v) {
                out[id as usize] = x.clone();
            }
        }
        out
    }
    let len = max_id as usize + 1;
    let positions = renumber(&mesh.positions, ids, len);
    if let Some(inf) = influences {
        *inf = renumber(inf, ids, len);
    }
    for t in &mut mesh.morph_targets {
        t.position_deltas = renumber(&t.position_deltas, ids, len);
        if let Some(n) = &mut t.normal_deltas {
            *n = renumber(n, ids, len);
        }
    }
    let corners: Vec<usize> = mesh.corner_vertices.iter().map(|&v| v as usize).collect();
    fn per_corner<T: Copy>(a: &mut Attribute<T>, corners: &[usize]) {
        a.values = corners.iter().map(|&v| a.values[v]).collect();
        a.mapping = crate::scene::Mapping::PerCorner;
    }
    for a in [&mut mesh.normals, &mut mesh.tangents, &mut mesh.binormals].into_iter().flatten() {
        per_corner(a, &corners);
    }
    for set in &mut mesh.uv_sets {
        per_corner(&mut set.uvs, &corners);
    }
    if let Some(a) = &mut mesh.colors {
        per_corner(a, &corners);
    }
    mesh.corner_vertices = corners.iter().map(|&v| ids[v]).collect();
    mesh.positions = positions;
}

/// One animation. Weight channels become one
/// [`morph weight property`](crate::anim::curve::morph_weight_property) track per target of the
/// node's mesh (`node_targets[node]` of them), in percent (× 100) as FBX `DeformPercent`.
fn animation(
    a: &gltf::Animation,
    root: &gltf_json::Root,
    buffers: &[Vec<u8>],
    fps: f64,
    max: u64,
    node_targets: &[usize],
    warnings: &mut Vec<Warning>,
) -> Result<Animation, Error> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    use gltf::animation::util::ReadOutputs;
    let mut out = Animation {
        name: a.name().unwrap_or("").to_string(),
        fps,
        frame_range: (0.0, 0.0),
        channels: Vec::new(),
    };
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let json = &root.animations[a.index()];
    for ch in a.channels() {
        let place = format!("animations[{}] › channels[{}]", a.index(), ch.index());
        let invalid = |message: String| Error::Invalid { place: place.clone(), message };
        // gltf-json 1.4 does not validate channel targets (its `Animation` checks only the
        // sampler indices), and the crate's `Target::node`/`property` unwrap them.
        let Some(tj) = json.channels.get(ch.index()).map(|c| &c.target) else {
            return Err(invalid("channel missing from the JSON".into()));
        };
        let node = tj.node.value();
        if node >= node_targets.len() {
            return Err(invalid(format!(
                "target node {node} is past the {} nodes",
                node_targets.len()
            )));
        }
        let gltf_json::validation::Checked::Valid(property) = tj.path else {
            return Err(invalid("target path is not one glTF 2.0 defines".into()));
        };
        let sampler = ch.sampler();
        accessors::check(&sampler.input(), buffers, &accessors::SCALAR_FLOAT)
            .map_err(|e| invalid(format!("input {e}")))?;
        use gltf::animation::Property as P;
        let allowed = match property {
            P::Translation | P::Scale => &accessors::VEC3_FLOAT,
            P::Rotation => &accessors::ROTATION,
            P::MorphTargetWeights => &accessors::MORPH_WEIGHTS,
        };
        accessors::check(&sampler.output(), buffers, allowed)
            .map_err(|e| invalid(format!("output {e}")))?;
        let reader = ch.reader(get);
        let inputs: Vec<f64> = match reader.read_inputs() {
            Some(i) if i.len() as u64 > max => {
                return Err(Error::Limit {
                    place,
                    message: format!("{} keys exceed the limit of {max}", i.len()),
                })
            }
            Some(i) => i.map(|t| f64::from(t) * fps).collect(),
            None => return Err(invalid("input accessor cannot be read".into())),
        };
        // glTF 2.0 §3.11: the times, as stored, strictly increase. Snapping them to whole frames
        // comes after that check and never merges two keys (`snap_frames`).
        if inputs.windows(2).any(|w| w[0] >= w[1]) || inputs.iter().any(|t| !t.is_finite()) {
            return Err(invalid("key times are not strictly increasing".into()));
        }
        let inputs = snap_frames(inputs);
        let interp = ch.sampler().interpolation();
        let target = match reader.read_outputs() {
            Some(ReadOutputs::Translations(v)) => ChannelTarget::Translation(track(
                &inputs,
                v.map(vec3).collect(),
                interp,
                fps,
                &invalid,
            )?),
            Some(ReadOutputs::Scales(v)) => {
                ChannelTarget::Scale(track(&inputs, v.map(vec3).collect(), interp, fps, &invalid)?)
            }
            Some(ReadOutputs::Rotations(r)) => {
                let values: Vec<DQuat> =
                    r.into_f32().map(|q| DQuat::from_array(q.map(f64::from))).collect();
                let mut t = track(&inputs, values, interp, fps, &invalid)?;
                for k in &mut t.keys {
                    if k.value.length_squared() > 0.0 {
                        k.value = k.value.normalize();
                    }
                }
                ChannelTarget::Rotation(RotationTrack::Quat(t))
            }
            Some(ReadOutputs::MorphTargetWeights(w)) => {
                let k = node_targets.get(node).copied().unwrap_or(0);
                let values: Vec<f64> = w.into_f32().map(|w| f64::from(w) * 100.0).collect();
                if k == 0 || values.len() % k != 0 {
                    warnings.push(warning(
                        place,
                        format!(
                            "{} weights for a mesh with {k} morph targets: channel left out",
                            values.len()
                        ),
                    ));
                    continue;
                }
                for t in 0..k {
                    let vt: Vec<f64> = values.iter().skip(t).step_by(k).copied().collect();
                    let track = track(&inputs, vt, interp, fps, &invalid)?;
                    out.channels.push(Channel {
                        node,
                        target: ChannelTarget::Property {
                            name: crate::anim::curve::morph_weight_property(t),
                            track,
                        },
                    });
                }
                if let (Some(&f), Some(&l)) = (inputs.first(), inputs.last()) {
                    lo = lo.min(f);
                    hi = hi.max(l);
                }
                continue;
            }
            None => return Err(invalid("output accessor cannot be read".into())),
        };
        if let (Some(&f), Some(&l)) = (inputs.first(), inputs.last()) {
            lo = lo.min(f);
            hi = hi.max(l);
        }
        out.channels.push(Channel { node, target });
    }
    if lo.is_finite() {
        out.frame_range = (lo, hi);
    }
    Ok(out)
}

/// A key time in frames, snapped to the nearest whole frame when within f32 rounding of it
/// (glTF stores seconds as f32, so frame 20 at 30 fps reads back as 20.0000006).
fn snap_frame(frame: f64) -> f64 {
    let r = frame.round();
    if (frame - r).abs() <= 1e-6 * r.abs().max(1.0) {
        r
    } else {
        frame
    }
}

/// Strictly increasing key frames, each snapped ([`snap_frame`]) unless that would bring it
/// to or past its neighbour: keys 1 µs apart (a sample beside a key at frame 0.99999, as a 2013
/// 3ds Max export has) stay two keys.
fn snap_frames(mut frames: Vec<f64>) -> Vec<f64> {
    for k in 0..frames.len() {
        let s = snap_frame(frames[k]);
        let after_prev = k == 0 || s > frames[k - 1];
        let before_next = frames.get(k + 1).is_none_or(|&n| s < n);
        if after_prev && before_next {
            frames[k] = s;
        }
    }
    frames
}

fn vec3(v: [f32; 3]) -> DVec3 {
    DVec3::from_array(v.map(f64::from))
}

/// Keys at `frames` from glTF sampler outputs. CUBICSPLINE outputs are (in-tangent, value,
/// out-tangent) triples with tangents per second: divided by `fps` to per frame.
fn track<T>(
    frames: &[f64],
    values: Vec<T>,
    interp: gltf::animation::Interpolation,
    fps: f64,
    invalid: &dyn Fn(String) -> Error,
) -> Result<Track<T>, Error>
where
    T: Copy + std::ops::Mul<f64, Output = T>,
{
    use gltf::animation::Interpolation as I;
    let per_key = if interp == I::CubicSpline { 3 } else { 1 };
    if values.len() != frames.len() * per_key {
        return Err(invalid(format!(
            "{} outputs for {} inputs ({per_key} per key expected)",
            values.len(),
            frames.len()
        )));
    }
    let keys = frames
        .iter()
        .enumerate()
        .map(|(k, &frame)| match interp {
            I::Linear => Key { frame, value: values[k], interpolation: Interpolation::Linear },
            I::Step => Key { frame, value: values[k], interpolation: Interpolation::Step },
            I::CubicSpline => Key {
                frame,
                value: values[3 * k + 1],
                interpolation: Interpolation::Hermite {
                    in_tangent: values[3 * k] * (1.0 / fps),
                    out_tangent: values[3 * k + 2] * (1.0 / fps),
                },
            },
        })
        .collect();
    Ok(Track::new(keys))
}

/// A JSON document that could not be read, in words: truncation (serde_json's "EOF while
/// parsing a string") as `the file is truncated at byte N: the JSON ends inside a string (line
/// L, column C)`; `json_start` is the document's offset in the file.
fn json_error(e: gltf::Error, json_len: u64, json_start: u64) -> Error {
    let gltf::Error::Deserialize(se) = &e else {
        return Error::Invalid { place: "document".into(), message: e.to_string() };
    };
    let (line, column) = (se.line(), se.column());
    let text = se.to_string();
    // serde_json words its messages "<what> at line L column C"; keep <what>.
    let what = text.rsplit_once(" at line ").map_or(text.as_str(), |(w, _)| w);
    let message = if se.classify() == serde_json::error::Category::Eof {
        let inside = what.strip_prefix("EOF while parsing ").unwrap_or("a value");
        let end = json_start + json_len;
        if json_start == 0 {
            format!(
                "the file is truncated at byte {end}: the JSON ends inside {inside} (line {line}, \
                 column {column})"
            )
        } else {
            format!(
                "the JSON chunk is truncated at byte {end}: it ends inside {inside} (line {line}, \
                 column {column})"
            )
        }
    } else {
        format!("not valid glTF JSON at line {line}, column {column}: {what}")
    };
    Error::Invalid { place: "document".into(), message }
}

/// A primitive `mode` as glTF 2.0 §5.24.3 spells it, with its code (`LINE_STRIP (3)`).
fn mode_name(mode: gltf::mesh::Mode) -> &'static str {
    use gltf::mesh::Mode;
    match mode {
        Mode::Points => "POINTS (0)",
        Mode::Lines => "LINES (1)",
        Mode::LineLoop => "LINE_LOOP (2)",
        Mode::LineStrip => "LINE_STRIP (3)",
        Mode::Triangles => "TRIANGLES (4)",
        Mode::TriangleStrip => "TRIANGLE_STRIP (5)",
        Mode::TriangleFan => "TRIANGLE_FAN (6)",
    }
}
