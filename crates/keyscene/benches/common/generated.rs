//! Generated scenes whose size is one number (issue #16 goal 2: the cost of a conversion grows
//! linearly with what grows): a chain of nodes (depth), sibling nodes under one root (width),
//! a long animation (frames) and one large mesh (triangles). Built in memory, nothing
//! committed; a bench that needs a file writes the scene with keyscene's own writers.

use glam::{DQuat, DVec3, Vec2, Vec3};
use keyscene::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, RotationTrack, Track};
use keyscene::scene::{Attribute, InheritType, Mapping, Mesh, Node, NodeKind, Scene, UvSet};

fn key<T>(frame: f64, value: T) -> Key<T> {
    Key { frame, value, interpolation: Interpolation::Linear }
}

/// A chain of `n` null nodes, each 1 unit along +X from its parent and inheriting by
/// `inherit`, with the root's translation keyed linearly over 100 frames and the last node's
/// keyed with a TCB curve (so writers sample it): what grows is the hierarchy's depth only.
/// At rest the last node's world translation is `(n − 1, 0, 0)`.
pub fn chain(n: usize, inherit: InheritType) -> Scene {
    let mut s = Scene::default();
    for i in 0..n {
        let mut node = Node::new(format!("n{i}"), NodeKind::Null);
        node.transform.translation = if i == 0 { DVec3::ZERO } else { DVec3::X };
        node.inherit = inherit;
        s.nodes.push(node);
        s.attach(i, i.checked_sub(1));
    }
    let mut tcb = Track::new(vec![key(0.0, DVec3::X), key(50.0, DVec3::Y), key(100.0, DVec3::X)]);
    for k in &mut tcb.keys {
        k.interpolation = Interpolation::Tcb(Default::default());
    }
    s.animations.push(Animation {
        name: "chain".into(),
        fps: 30.0,
        frame_range: (0.0, 100.0),
        channels: vec![
            Channel {
                node: 0,
                target: ChannelTarget::Translation(Track::new(vec![
                    key(0.0, DVec3::ZERO),
                    key(100.0, DVec3::new(0.0, 10.0, 0.0)),
                ])),
            },
            Channel { node: n - 1, target: ChannelTarget::Translation(tcb) },
        ],
    });
    s
}

/// A root with `n` null children side by side along +X, each with its own linear
/// translation track (two keys over 100 frames): nodes and channels grow together, the depth
/// stays 2.
pub fn siblings(n: usize) -> Scene {
    let mut s = Scene::default();
    s.nodes.push(Node::new("root", NodeKind::Null));
    s.attach(0, None);
    let mut channels = Vec::with_capacity(n);
    for i in 1..=n {
        let mut node = Node::new(format!("s{i}"), NodeKind::Null);
        let at = DVec3::new(i as f64, 0.0, 0.0);
        node.transform.translation = at;
        s.nodes.push(node);
        s.attach(i, Some(0));
        let track = Track::new(vec![key(0.0, at), key(100.0, at + DVec3::Y)]);
        channels.push(Channel { node: i, target: ChannelTarget::Translation(track) });
    }
    s.animations.push(Animation {
        name: "siblings".into(),
        fps: 30.0,
        frame_range: (0.0, 100.0),
        channels,
    });
    s
}

/// One null node animated over `frames` frames (frames 0 to `frames`): a linear translation
/// key and a rotation key on every frame, and a child whose translation is a TCB curve of
/// one key every 10 frames (no exact form in glTF: resampled over the whole range).
pub fn long_animation(frames: usize) -> Scene {
    let mut s = Scene::default();
    s.nodes.push(Node::new("mover", NodeKind::Null));
    s.attach(0, None);
    s.nodes.push(Node::new("follower", NodeKind::Null));
    s.attach(1, Some(0));
    let f = |i: usize| i as f64;
    let translation = (0..=frames).map(|i| key(f(i), DVec3::new((f(i) * 0.1).sin(), 0.0, 0.0)));
    let rotation = (0..=frames).map(|i| key(f(i), DQuat::from_rotation_y(f(i) * 0.05)));
    let mut tcb: Track<DVec3> = Track::new(
        (0..=frames / 10)
            .map(|i| key(f(i * 10), DVec3::new(0.0, (f(i) * 0.7).cos(), 1.0)))
            .collect(),
    );
    for k in &mut tcb.keys {
        k.interpolation = Interpolation::Tcb(Default::default());
    }
    s.animations.push(Animation {
        name: "long".into(),
        fps: 30.0,
        frame_range: (0.0, f(frames)),
        channels: vec![
            Channel {
                node: 0,
                target: ChannelTarget::Translation(Track::new(translation.collect())),
            },
            Channel {
                node: 0,
                target: ChannelTarget::Rotation(RotationTrack::Quat(Track::new(
                    rotation.collect(),
                ))),
            },
            Channel { node: 1, target: ChannelTarget::Translation(tcb) },
        ],
    });
    s
}

/// One node with a grid mesh of at least `triangles` triangles (a square grid of quads, each
/// split in two), per-vertex normals (+Z) and UVs; no animation.
pub fn grid_mesh(triangles: usize) -> Scene {
    let side = ((triangles as f64 / 2.0).sqrt().ceil() as usize).max(1);
    let verts = side + 1;
    let mut mesh = Mesh { name: "grid".into(), ..Mesh::default() };
    let mut uvs = Vec::with_capacity(verts * verts);
    for y in 0..verts {
        for x in 0..verts {
            mesh.positions.push(DVec3::new(x as f64, y as f64, 0.0));
            uvs.push(Vec2::new(x as f32 / side as f32, y as f32 / side as f32));
        }
    }
    mesh.polygon_starts.push(0);
    for y in 0..side {
        for x in 0..side {
            let v = |dx: usize, dy: usize| ((y + dy) * verts + x + dx) as u32;
            for tri in [[v(0, 0), v(1, 0), v(1, 1)], [v(0, 0), v(1, 1), v(0, 1)]] {
                mesh.corner_vertices.extend_from_slice(&tri);
                mesh.polygon_starts.push(mesh.corner_vertices.len() as u32);
            }
        }
    }
    mesh.normals =
        Some(Attribute { values: vec![Vec3::Z; verts * verts], mapping: Mapping::PerVertex });
    mesh.uv_sets.push(UvSet {
        name: "map1".into(),
        uvs: Attribute { values: uvs, mapping: Mapping::PerVertex },
    });
    let mut s = Scene::default();
    s.meshes.push(mesh);
    let mut node = Node::new("grid", NodeKind::Mesh);
    node.mesh = Some(0);
    s.nodes.push(node);
    s.attach(0, None);
    s
}
