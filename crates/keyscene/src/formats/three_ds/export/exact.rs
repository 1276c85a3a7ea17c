//! The exact pass: a scene read from 3DS written as it was read (stored points, `MESH_MATRIX`,
//! pivots, node flags, every track's keys with their TCB/ease parameters and track flags).

use glam::{DMat4, DVec3};

use super::super::chunks::{id, KeyChunk, KeyValue};
use super::super::import::NODE_HIDDEN;
use super::cameras_lights::{camera_object, light_object};
use super::tracks::{clamp_frame, key, relative_value, vector_track};
use super::{f3, Builder, NodeOut, ObjOut, WriteError, MAX_OBJECT_NAME};
use crate::anim::{ChannelTarget, Pose, RotationTrack, Time};
use crate::scene::{LightKind, Node, NodeKind, Scene};

/// Track tags and their (track flags, keys), in the order 3D Studio writes them.
type Tracks = Vec<(u16, u16, Vec<KeyChunk>)>;

impl Builder {
    /// A 3DS source written as it was read.
    pub(super) fn exact(&mut self, scene: &Scene, anim: Option<usize>) -> Result<(), WriteError> {
        let a = anim.map(|a| &scene.animations[a]);
        let range = a.map(|a| a.frame_range).or(scene.meta.frame_range).unwrap_or((0.0, 0.0));
        let start = clamp_frame(range.0);
        self.segment = (start, clamp_frame(range.1));
        // Objects: one per scene mesh, stored points and MESH_MATRIX.
        let mut mesh_names: Vec<Vec<String>> = Vec::new();
        for mesh in &scene.meshes {
            let m = mesh.source_matrix.unwrap_or(DMat4::IDENTITY);
            mesh_names.push(self.add_mesh(&mesh.name, mesh, &mesh.positions, m));
        }
        let order = scene.depth_first();
        let mut number = vec![usize::MAX; scene.nodes.len()];
        for (k, &i) in order.iter().enumerate() {
            number[i] = k;
        }
        let rest = scene.evaluate(None, Time::Frame(range.0));
        // Each node's channel targets, gathered once (a scan of all channels per node was
        // quadratic in the animated nodes).
        let mut targets_of = crate::anim::channels_by_node(scene, anim);
        let mut morph_dropped = 0;
        for &i in &order {
            let node = &scene.nodes[i];
            let (tag, name) = self.exact_object(scene, i, &rest, &mesh_names);
            let mut out = self.exact_node(node, tag, name, node.parent.map(|p| number[p]));
            out.source = Some(i);
            let channels = std::mem::take(&mut targets_of[i]);
            out.tracks = exact_tracks(node, tag, &channels, start, &mesh_names, &mut morph_dropped);
            self.nodes.push(out);
        }
        if morph_dropped > 0 {
            self.report.dropped.push(format!("{morph_dropped} morph keys naming no mesh"));
        }
        Ok(())
    }

    /// The node chunk tag and keyframer name of node `i`; cameras and lights get their
    /// editor object here (placed as at the start, `rest`).
    fn exact_object(
        &mut self,
        scene: &Scene,
        i: usize,
        rest: &Pose,
        mesh_names: &[Vec<String>],
    ) -> (u16, String) {
        let node = &scene.nodes[i];
        match node.kind {
            NodeKind::Camera(c) => {
                let target = scene.cameras[c].target.map(|t| rest.world[t].w_axis.truncate());
                let pos = rest.world[i].w_axis.truncate();
                let n = self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
                let roll = scene.cameras[c].roll_degrees;
                let cam = camera_object(scene, c, pos, target.unwrap_or(pos + DVec3::Y), roll);
                self.objects.push((n.clone(), ObjOut::Camera(cam)));
                self.report.cameras += 1;
                (id::CAMERA_NODE_TAG, n)
            }
            NodeKind::Light(l) => {
                let target = scene.lights[l].target.map(|t| rest.world[t].w_axis.truncate());
                let pos = rest.world[i].w_axis.truncate();
                let n = self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
                let spot = scene.lights[l].kind == LightKind::Spot;
                let light = light_object(scene, l, pos, target.filter(|_| spot));
                self.objects.push((n.clone(), ObjOut::Light(light)));
                self.report.lights += 1;
                (if spot { id::SPOTLIGHT_NODE_TAG } else { id::LIGHT_NODE_TAG }, n)
            }
            NodeKind::CameraTarget { camera } => (
                id::TARGET_NODE_TAG,
                self.target_name(camera.map(|c| &scene.nodes[c].name), &node.name),
            ),
            NodeKind::LightTarget { light } => (
                id::L_TARGET_NODE_TAG,
                self.target_name(light.map(|c| &scene.nodes[c].name), &node.name),
            ),
            NodeKind::Ambient => (id::AMBIENT_NODE_TAG, "$AMBIENT$".to_string()),
            _ => match node.mesh {
                Some(m) => (id::OBJECT_NODE_TAG, mesh_names[m][0].clone()),
                None => (id::OBJECT_NODE_TAG, "$$$DUMMY".to_string()),
            },
        }
    }

    /// The node chunk of `node` without tracks: instance name (a dummy's own name when it has
    /// none), the stored flags with the hidden bit as the node is, pivot, box, morph smoothing.
    fn exact_node(
        &mut self,
        node: &Node,
        tag: u16,
        name: String,
        parent: Option<usize>,
    ) -> NodeOut {
        let mut out = NodeOut::new(tag, name, parent);
        out.instance = (!node.instance.is_empty())
            .then(|| node.instance.chars().filter(|c| c.is_ascii() && *c != '\0').collect());
        if out.name == "$$$DUMMY" && out.instance.is_none() {
            out.instance =
                Some(self.names.unique("instance", &node.name, MAX_OBJECT_NAME, &mut self.report));
        }
        if let Some(s) = node.source.three_ds.as_deref() {
            out.flags = s.flags;
            if tag == id::OBJECT_NODE_TAG {
                out.pivot = Some(f3(s.pivot));
                out.bound_box = s.bound_box.map(|(a, b)| (f3(a), f3(b)));
                out.morph_smooth = s.morph_smooth;
            }
        }
        if node.hidden {
            out.flags[0] |= NODE_HIDDEN;
        } else {
            out.flags[0] &= !NODE_HIDDEN;
        }
        out
    }
}

/// The tracks of `node` (chunk `tag`) from its `channels`, in the order 3D Studio writes them:
/// POS (nodes with a position), ROT and SCL (object nodes; a missing one keyed at `start` with
/// the rest transform), then FOV, ROLL, COL, HOT, FALL, HIDE (absolute states back to toggles)
/// and MORPH (keys naming a written mesh; the others are counted in `morph_dropped`).
fn exact_tracks(
    node: &Node,
    tag: u16,
    channels: &[&ChannelTarget],
    start: i32,
    mesh_names: &[Vec<String>],
    morph_dropped: &mut usize,
) -> Tracks {
    let mut tracks = Tracks::new();
    let find = |pick: fn(&ChannelTarget) -> bool| channels.iter().copied().find(|c| pick(c));
    let t = node.transform;
    let has_pos = matches!(
        tag,
        id::OBJECT_NODE_TAG
            | id::CAMERA_NODE_TAG
            | id::TARGET_NODE_TAG
            | id::LIGHT_NODE_TAG
            | id::SPOTLIGHT_NODE_TAG
            | id::L_TARGET_NODE_TAG
    );
    if has_pos {
        let tr = match find(|c| matches!(c, ChannelTarget::Translation(_))) {
            Some(ChannelTarget::Translation(tr)) => vector_track(tr, |v| KeyValue::Vector(f3(*v))),
            _ => (0, vec![key(start, KeyValue::Vector(f3(t.translation)))]),
        };
        tracks.push((id::POS_TRACK_TAG, tr.0, tr.1));
    }
    if tag == id::OBJECT_NODE_TAG {
        let rt = match find(|c| matches!(c, ChannelTarget::Rotation(_))) {
            Some(ChannelTarget::Rotation(RotationTrack::Relative(r))) => {
                vector_track(r, |v| KeyValue::AxisAngle(v.angle as f32, f3(v.axis)))
            }
            _ => (0, vec![key(start, relative_value(t.rotation))]),
        };
        tracks.push((id::ROT_TRACK_TAG, rt.0, rt.1));
        let st = match find(|c| matches!(c, ChannelTarget::Scale(_))) {
            Some(ChannelTarget::Scale(s)) => vector_track(s, |v| KeyValue::Vector(f3(*v))),
            _ => (0, vec![key(start, KeyValue::Vector(f3(t.scale)))]),
        };
        tracks.push((id::SCL_TRACK_TAG, st.0, st.1));
    }
    for c in channels {
        let scalar = |v: &f64| KeyValue::Scalar(*v as f32);
        let (tag, tr) = match c {
            ChannelTarget::Fov(x) => (id::FOV_TRACK_TAG, vector_track(x, scalar)),
            ChannelTarget::Roll(x) => (id::ROLL_TRACK_TAG, vector_track(x, scalar)),
            ChannelTarget::Color(x) => {
                (id::COL_TRACK_TAG, vector_track(x, |v| KeyValue::Vector(f3(*v))))
            }
            ChannelTarget::Hotspot(x) => (id::HOT_TRACK_TAG, vector_track(x, scalar)),
            ChannelTarget::Falloff(x) => (id::FALL_TRACK_TAG, vector_track(x, scalar)),
            ChannelTarget::Hidden(h) => {
                // Absolute states back to toggles: a key wherever the state changes.
                let mut state = node.hidden;
                let mut keys = Vec::new();
                for k in &h.keys {
                    if k.value != state {
                        state = k.value;
                        keys.push(key(clamp_frame(k.frame), KeyValue::None));
                    }
                }
                (id::HIDE_TRACK_TAG, (h.flags, keys))
            }
            ChannelTarget::Morph(m) => {
                let keys: Vec<KeyChunk> = m
                    .keys
                    .iter()
                    .filter_map(|k| {
                        mesh_names
                            .get(k.value)
                            .map(|n| key(clamp_frame(k.frame), KeyValue::Name(n[0].clone())))
                    })
                    .collect();
                *morph_dropped += m.keys.len() - keys.len();
                (id::MORPH_TRACK_TAG, (m.flags, keys))
            }
            _ => continue,
        };
        if !tr.1.is_empty() {
            tracks.push((tag, tr.0, tr.1));
        }
    }
    tracks
}
