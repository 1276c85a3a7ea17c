//! The node pass: the scene at rest, the axis or joint root, one glTF node per scene node (in
//! scene order, after the root) and a helper node for each aimed camera or light (after them),
//! with their meshes, skins, cameras and lights attached; then the scene's root list.

use std::collections::HashMap;

use glam::{DMat3, DMat4, DQuat, DVec3};
use gltf_json as json;

use super::ahead::{Ahead, MeshKey};
use super::names::{gltf_name, node_extras};
use super::skins::{common_ancestor, skin_of};
use super::{Helper, Out};
use crate::anim::{self, keep, Pose, Time};
use crate::formats::gltf::{deform, warning, WriteOptions, AXIS_ROOT_NAME, JOINT_ROOT_NAME};
use crate::scene::{Axis, AxisSystem, NodeKind, Scene, Warning};

/// The scene at rest: the first animation at its first frame (not before 0), or the
/// unanimated scene, as the node pass writes it.
pub(super) struct Rest {
    /// The scene evaluated in its first animation (if any) at [`Rest::frame`].
    pub(super) pose: Pose,
    /// The frame of the rest pose: the first animation's first frame, not below 0.
    pub(super) frame: f64,
    /// Every node's world matrix without camera/light aiming ([`unaimed_world`]).
    pub(super) unaimed: Vec<DMat4>,
    /// Every scene node's glTF translation, rotation and scale at rest.
    pub(super) trs: Vec<(DVec3, DQuat, DVec3)>,
}

impl Rest {
    /// Evaluates the rest pose; a node's TRS is its own parts where glTF's local is the
    /// scene's ([`own_trs_nodes`]), else its decomposed glTF local matrix.
    pub(super) fn new(scene: &Scene) -> Rest {
        let anim0 = (!scene.animations.is_empty()).then_some(0);
        let rest_frame = scene.animations.first().map(|a| a.frame_range.0.max(0.0)).unwrap_or(0.0);
        let pose = scene.evaluate(anim0, Time::Frame(rest_frame));
        let unaimed = unaimed_world(scene, &pose);
        let local = gltf_locals(scene, &pose, &unaimed);
        let channels = anim::channels_by_node(scene, anim0);
        let direct = own_trs_nodes(scene);
        let trs = (0..scene.nodes.len())
            .map(|i| {
                direct[i]
                    .then(|| anim::node_parts(scene, i, &channels[i], rest_frame))
                    .flatten()
                    .unwrap_or_else(|| decompose(local[i]))
            })
            .collect();
        Rest { pose, frame: rest_frame, unaimed, trs }
    }
}

/// What the node pass leaves for the animation pass.
pub(super) struct Written {
    /// The aim helpers, in glTF node order.
    pub(super) helpers: Vec<Helper>,
    /// Scene nodes carrying a glTF mesh, with that mesh.
    pub(super) mesh_nodes: Vec<(usize, json::Index<json::Mesh>)>,
}

/// One glTF mesh per (scene mesh, geometry transform bits); `None`: the mesh was left out.
type MeshCache = HashMap<MeshKey, Option<json::Index<json::Mesh>>>;

impl Out {
    /// Pushes the axis root (the axis and unit conversion, when `opts` asks for one that is
    /// not the identity) or the joint root, and returns the glTF index of scene node 0: 1
    /// with a root, else 0.
    pub(super) fn root_node(&mut self, scene: &Scene, opts: &WriteOptions) -> usize {
        let axes = opts.source_axes.unwrap_or(scene.meta.axes);
        let axis = if opts.convert_axes { axis_rotation(axes, &mut self.warnings) } else { None };
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
        let joint_root = axis.is_none() && needs_joint_root(scene);
        if let Some(q) = axis {
            let mut root = json::Node { name: Some(AXIS_ROOT_NAME.into()), ..Default::default() };
            set_trs(&mut root, DVec3::ZERO, q, DVec3::splat(unit_scale.unwrap_or(1.0)));
            self.root.nodes.push(root);
        } else if joint_root {
            self.root
                .nodes
                .push(json::Node { name: Some(JOINT_ROOT_NAME.into()), ..Default::default() });
        }
        usize::from(axis.is_some() || joint_root)
    }

    /// Pushes a glTF node per scene node (glTF index `base + i`) and the aim helpers after
    /// them, with meshes (but those of nodes `left_out` marks, with a warning), cameras,
    /// lights, skins and children.
    pub(super) fn nodes(
        &mut self,
        scene: &Scene,
        base: usize,
        rest: &Rest,
        left_out: &[bool],
    ) -> Written {
        let n = scene.nodes.len();
        let mut children: Vec<Vec<json::Index<json::Node>>> = vec![Vec::new(); n];
        let mut helpers: Vec<Helper> = Vec::new();
        let mut helper_nodes: Vec<json::Node> = Vec::new();
        let mut meshes = MeshCache::new();
        let mut ahead = Ahead::new(scene, left_out);
        let mut mesh_nodes: Vec<(usize, json::Index<json::Mesh>)> = Vec::new();
        for (i, node) in scene.nodes.iter().enumerate() {
            let (t, r, s) = rest.trs[i];
            let mut g = json::Node {
                name: Some(gltf_name(&node.name, &node.instance)),
                ..Default::default()
            };
            set_trs(&mut g, t, r, s);
            if left_out[i] {
                let what = "mesh hidden throughout: left out (--visible-only)";
                self.warnings.push(warning(format!("node \"{}\"", node.name), what));
            } else if let Some(ix) =
                self.node_mesh(scene, i, &rest.pose, &mut meshes, &mut ahead, &mut g)
            {
                mesh_nodes.push((i, ix));
            }
            let aim_target = match node.kind {
                NodeKind::Camera(c) => scene.cameras[c].target,
                NodeKind::Light(l) => scene.lights[l].target,
                _ => None,
            };
            // The node that carries the camera/light: the helper when aimed or turned from
            // FBX's axes, else the node.
            let turn = fbx_axes_turn(scene, i);
            let holder = if aim_target.is_some() || turn.is_some() {
                let turn = turn.unwrap_or(glam::DMat4::IDENTITY);
                let index = json::Index::new((base + n + helper_nodes.len()) as u32);
                let mut helper = json::Node {
                    name: Some(format!(
                        "{} {}",
                        node.name,
                        if aim_target.is_some() { "aim" } else { "axes" }
                    )),
                    ..Default::default()
                };
                let (t, r, s) = decompose(rest.unaimed[i].inverse() * rest.pose.world[i] * turn);
                set_trs(&mut helper, t, r, s);
                helper_nodes.push(helper);
                children[i].push(index);
                helpers.push(Helper { node: i, index, turn });
                helper_nodes.last_mut()
            } else {
                None
            }
            .unwrap_or(&mut g);
            self.node_object(scene, i, holder);
            let (extras, left_out) = node_extras(node);
            g.extras = extras;
            self.user_property_warnings(scene, i, &left_out);
            self.root.nodes.push(g);
        }
        self.root.nodes.extend(helper_nodes);
        for &(i, mesh) in &mesh_nodes {
            if let Some(skin) = self.skin(scene, i, mesh, base) {
                self.root.nodes[base + i].skin = Some(skin);
            }
        }
        for (i, node) in scene.nodes.iter().enumerate() {
            let mut list: Vec<_> =
                node.children.iter().map(|&c| json::Index::new((base + c) as u32)).collect();
            list.extend(children[i].iter().copied());
            if !list.is_empty() {
                self.root.nodes[base + i].children = Some(list);
            }
        }
        Written { helpers, mesh_nodes }
    }

    /// Sets `g`'s mesh to node `i`'s (written on first use for its mesh and geometry
    /// transform) and its morph weights where they differ from the mesh's defaults at rest;
    /// returns the mesh.
    fn node_mesh(
        &mut self,
        scene: &Scene,
        i: usize,
        rest: &Pose,
        meshes: &mut MeshCache,
        ahead: &mut Ahead,
        g: &mut json::Node,
    ) -> Option<json::Index<json::Mesh>> {
        let node = &scene.nodes[i];
        let (key, bake) = super::ahead::mesh_key(node)?;
        let m = key.0;
        let index = match meshes.get(&key) {
            Some(&ix) => ix,
            None => {
                let built = ahead.take(scene, key, bake);
                let ix = self.mesh(scene, m, bake, &node.name, built);
                meshes.insert(key, ix);
                ix
            }
        };
        g.mesh = index;
        let ix = index?;
        let targets = &scene.meshes[m].morph_targets;
        let weights = &rest.morph_weights[m];
        if weights.iter().zip(targets).any(|(w, t)| *w != t.default_weight) {
            let w = deform::gltf_weights(&scene.meshes[m], weights);
            g.weights = Some(w.iter().map(|&w| w as f32).collect());
        }
        Some(ix)
    }

    /// Attaches node `i`'s camera or light to `holder` (the node, or its aim helper); an
    /// ambient light is left out with a warning.
    fn node_object(&mut self, scene: &Scene, i: usize, holder: &mut json::Node) {
        let node = &scene.nodes[i];
        match node.kind {
            NodeKind::Camera(c) => holder.camera = Some(self.camera(scene, c)),
            NodeKind::Light(l) => {
                if let Some(light) = self.light(scene, l) {
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
                self.warnings.push(warning(
                    format!("node \"{}\"", node.name),
                    "ambient light left out: glTF has no ambient light",
                ));
            }
            _ => {}
        }
    }

    /// Pushes the glTF scene: the root node, else the scene's roots. A glTF scene needs at
    /// least one node: an empty scene gets none.
    pub(super) fn scene(&mut self, scene: &Scene, base: usize) {
        let roots: Vec<_> =
            scene.roots.iter().map(|&r| json::Index::new((base + r) as u32)).collect();
        let scene_nodes = if base == 1 {
            if !roots.is_empty() {
                self.root.nodes[0].children = Some(roots);
            }
            vec![json::Index::new(0)]
        } else {
            roots
        };
        if !scene_nodes.is_empty() {
            self.root.scenes.push(json::Scene {
                extensions: None,
                extras: Default::default(),
                name: None,
                nodes: scene_nodes,
            });
            self.root.scene = Some(json::Index::new(0));
        }
    }
}

/// glTF wants a skin's joints under one root: true when some skin's joints (with its mesh
/// node) are in separate trees, so that (without an axis root) an identity root node joins
/// them.
fn needs_joint_root(scene: &Scene) -> bool {
    scene.nodes.iter().enumerate().any(|(i, node)| {
        let Some(skin) = node.mesh.and_then(|m| skin_of(scene, &scene.meshes[m])) else {
            return false;
        };
        let mut nodes: Vec<usize> =
            skin.joints.iter().map(|j| j.node).filter(|&j| j < scene.nodes.len()).collect();
        nodes.push(i);
        common_ancestor(scene, &nodes).is_none()
    })
}

/// Per scene node: is its glTF local matrix its own `T·R·S` ([`gltf_locals`] leaves it as the
/// pose's local matrix, and that is `T·R·S` of the parts)? [`keep::own_trs_nodes`] over every
/// animation (the rest pose is shared by all of them): such nodes' glTF translation, rotation
/// and scale are the source's parts, so their channels can be written from the source keys.
pub(super) fn own_trs_nodes(scene: &Scene) -> Vec<bool> {
    keep::own_trs_nodes(scene, scene.animations.iter().flat_map(|a| &a.channels))
}

/// Every node's world matrix *without* camera/light aiming ([`Scene::compose_world`] of the
/// local matrices, inherit types included), which is what the evaluator's children of an aimed
/// node inherit.
pub(super) fn unaimed_world(scene: &Scene, pose: &Pose) -> Vec<DMat4> {
    scene.compose_world(&pose.local)
}

/// Node `i`'s local matrix in glTF ([`gltf_locals`] for one node).
pub(super) fn gltf_local(scene: &Scene, pose: &Pose, unaimed: &[DMat4], i: usize) -> DMat4 {
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
pub(super) fn decompose(m: DMat4) -> (DVec3, DQuat, DVec3) {
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

pub(super) fn quat_f32(q: DQuat) -> [f32; 4] {
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

/// The turn from an FBX scene's camera or light axes to glTF's, for node `i`: FBX cameras look
/// down the node's +X with +Y up and lights shine down its −Y (docs/fbx.md, "Axes"; keyscene
/// keeps FBX's axes on FBX scenes, `render::View::from_camera`), glTF's down −Z with +Y up. The
/// camera or light then sits on a child helper with this local rotation: 90° about −Y for
/// cameras (−Z → +X, +Y → +Y), 90° about −X for lights (−Z → −Y). `None` for other nodes,
/// ambient lights and scenes of other formats.
pub(super) fn fbx_axes_turn(scene: &Scene, i: usize) -> Option<glam::DMat4> {
    use crate::scene::LightKind;
    if scene.meta.format != "fbx" {
        return None;
    }
    let quarter = -std::f64::consts::FRAC_PI_2;
    match scene.nodes[i].kind {
        NodeKind::Camera(c) if c < scene.cameras.len() => {
            Some(glam::DMat4::from_rotation_y(quarter))
        }
        NodeKind::Light(l) if scene.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient) => {
            Some(glam::DMat4::from_rotation_x(quarter))
        }
        _ => None,
    }
}
