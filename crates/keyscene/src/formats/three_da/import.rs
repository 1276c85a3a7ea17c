//! [`File`] → [`Scene`] (issue #4 §3). The only module of this format that knows both sides.
//!
//! - Entities become nodes in file order (node `i` is entity `i`): `ANIM_MESH_3DA` and
//!   `ANIM_MESH_SKINNED_3DA` → [`NodeKind::Mesh`], `ANIM_HELPER_3DA` → [`NodeKind::Null`],
//!   `ANIM_BONE_3DA` → [`NodeKind::Bone`]; `parent_idx` links them.
//! - An entity's surfaces become **one mesh** whose streams are the surfaces' streams one after
//!   the other and whose triangles are the lists' (the strips repeat them). Each distinct
//!   `material_idx` is one material slot. Streams: normals per vertex, UV channels 0..3 as
//!   UV sets `uv0`..`uv3`, the lightmap channel as a set named `lightmap`, colours (`RGBA_c`
//!   bytes R, G, B, A in memory order) ÷ 255. A stream present on only some surfaces is filled
//!   with zeros on the others.
//! - Materials: the table's name, colours (ambient, diffuse, specular RGB) and map names.
//! - Tracks become one animation at 30 fps (3DA stores no rate; 3ds Max's default), range
//!   `0 ..= m_iFrames − 1`: LINEAR → [`Interpolation::Linear`]; TCB 1D/3D → Hermite with the
//!   per-frame tangent = stored tangent ÷ segment length; TCB 4D → squad keys with the
//!   stored control quaternions ([`Interpolation::Squad`]);
//!   BEZIER → Hermite as stored (already per frame); EULER → a scene Euler track (see
//!   `euler_track`: axes and signs as the seed's code, order from `m_aRotOrder`; resampled
//!   with a warning when `m_aRotOrder` is not a permutation). The rest transform of each node is its tracks' value at frame 0.
//! - Blend streams of skinned meshes become a [`Skin`] whose bind pose is the entities'
//!   `bone_init_tm` (or the first frame when they are all identity, with a warning;
//!   docs/3da.md, "Skinning").

use glam::{DMat4, DQuat, DVec3, Vec2, Vec3, Vec4};

use super::layout::{
    entity_type, name_str, BezierKey, KeyRecord, LinearKey, TcbKey, Value, MAP_CHANNELS,
    VERTEX_WEIGHT_SCALE,
};
use super::model::{File, FloatTrack, KeyTrack, Quat, RotTrack, VecTrack};
use crate::anim::{
    Animation, Channel, ChannelTarget, Interpolation, Key, RotationTrack, Track, THREE_DS_FPS,
};
use crate::quoting::quoted;
use crate::scene::{
    Attribute, EulerOrder, Mapping, Material, Mesh, Node, NodeKind, Scene, Skin, SkinJoint, UvSet,
    Warning,
};

/// Builds a scene from a parsed 3DA file. Never fails: what the scene model cannot hold is
/// reported in the returned warnings.
pub fn import(file: &File) -> (Scene, Vec<Warning>) {
    let mut warnings = Vec::new();
    let mut scene = Scene::default();
    scene.meta.format = "3da".into();
    scene.meta.version = Some(super::layout::FILE_VERSION);
    scene.meta.axes = crate::scene::AxisSystem::Z_UP_RIGHT_HANDED;
    let last_frame = f64::from(file.frames.saturating_sub(1));
    scene.meta.frame_range = Some((0.0, last_frame));
    scene.materials = file
        .materials
        .iter()
        .map(|m| Material {
            name: name_str(&m.name),
            ambient: Vec3::new(m.ambient[0], m.ambient[1], m.ambient[2]),
            diffuse: Vec3::new(m.diffuse[0], m.diffuse[1], m.diffuse[2]),
            specular: Vec3::new(m.specular[0], m.specular[1], m.specular[2]),
            maps: (0..usize::try_from(m.num_maps).unwrap_or(0).min(MAP_CHANNELS))
                .map(|c| crate::scene::TextureMap {
                    slot: crate::scene::MapSlot::Diffuse,
                    file: name_str(&m.map_name[c]),
                    resolved: None,
                    embedded: None,
                    strength: 1.0,
                    uv_transform: Default::default(),
                    flags: 0,
                    wrap: Default::default(),
                })
                .collect(),
            ..Material::default()
        })
        .collect();
    let mut anim = Animation {
        name: String::new(),
        fps: THREE_DS_FPS,
        frame_range: (0.0, last_frame),
        channels: Vec::new(),
    };
    let n = file.entities.len();
    for (i, e) in file.entities.iter().enumerate() {
        let name = name_str(&e.name);
        let kind = match e.type_id {
            entity_type::MESH | entity_type::MESH_SKINNED => NodeKind::Mesh,
            entity_type::BONE => NodeKind::Bone,
            _ => NodeKind::Null,
        };
        let mut node = Node::new(name.clone(), kind);
        if matches!(node.kind, NodeKind::Mesh) {
            node.mesh = Some(scene.meshes.len());
            scene.meshes.push(mesh(file, i, &name));
        }
        let parent = usize::from(e.parent_idx);
        let parent = (e.parent_idx != super::layout::NO_PARENT && parent < i).then_some(parent);
        scene.nodes.push(node);
        scene.attach(i, parent);
        if let Some(t) = &e.position {
            let track = vec_track(t);
            if let Some(v) = track.sample(0.0) {
                scene.nodes[i].transform.translation = v;
            }
            anim.channels.push(Channel { node: i, target: ChannelTarget::Translation(track) });
        }
        if let Some(t) = &e.rotation {
            let track = rot_track(t, &name, &mut warnings);
            if let Some(q) = track.sample(0.0) {
                scene.nodes[i].transform.rotation = q;
            }
            anim.channels.push(Channel { node: i, target: ChannelTarget::Rotation(track) });
        }
        if let Some(t) = &e.scale {
            let track = vec_track(t);
            if let Some(v) = track.sample(0.0) {
                scene.nodes[i].transform.scale = v;
            }
            anim.channels.push(Channel { node: i, target: ChannelTarget::Scale(track) });
        }
    }
    debug_assert_eq!(scene.nodes.len(), n);
    if !anim.channels.is_empty() {
        scene.animations.push(anim);
    }
    skins(file, &mut scene, &mut warnings);
    (scene, warnings)
}

/// Skins from the blend streams of `ANIM_MESH_SKINNED_3DA` entities: the joints are the
/// entities the stream names (node `i` is entity `i`), each vertex's influences its non-zero
/// weights ÷ 32768. The bind pose is in `bone_init_tm` (docs/3da.md, "Skinning"):
/// `inverse_bind = B(joint)⁻¹ · B(mesh)`, `B` an entity's `bone_init_tm` read as
/// `DMat4::from_cols_array` (row-major, row vectors, translation at 12..15). When the mesh
/// and all its joints hold identity (the seed's files) the first frame is the bind pose
/// instead, `B = world` at frame 0, with a warning.
fn skins(file: &File, scene: &mut Scene, warnings: &mut Vec<Warning>) {
    let pose = scene.evaluate(Some(0), crate::anim::Time::Frame(0.0));
    for (i, e) in file.entities.iter().enumerate() {
        if e.type_id != entity_type::MESH_SKINNED {
            continue;
        }
        let Some(m) = scene.nodes[i].mesh else { continue };
        let mut joints: Vec<usize> = Vec::new();
        let mut influences: Vec<Vec<(u32, f32)>> = Vec::new();
        for s in &e.surfaces {
            let n = s.s_size as usize;
            match &s.blending {
                Some(b) => {
                    for v in b {
                        let mut inf = Vec::new();
                        for (&bone, &w) in v.bone_idx.iter().zip(&v.weight) {
                            let bone = usize::from(bone);
                            if w == 0 || bone >= scene.nodes.len() {
                                continue;
                            }
                            let j = match joints.iter().position(|&x| x == bone) {
                                Some(j) => j,
                                None => {
                                    joints.push(bone);
                                    joints.len() - 1
                                }
                            };
                            inf.push((j as u32, f32::from(w) / VERTEX_WEIGHT_SCALE as f32));
                        }
                        influences.push(inf);
                    }
                }
                None => influences.extend(std::iter::repeat_with(Vec::new).take(n)),
            }
        }
        // Bind matrices from `bone_init_tm` (the exporter's convention), unless the mesh and
        // all its joints hold the seed's identity or one is not invertible.
        let init = |e: usize| DMat4::from_cols_array(&file.entities[e].bone_init_tm.map(f64::from));
        let stored =
            std::iter::once(i).chain(joints.iter().copied()).any(|e| init(e) != DMat4::IDENTITY)
                && std::iter::once(i)
                    .chain(joints.iter().copied())
                    .all(|e| init(e).is_finite() && init(e).determinant().abs() > 1e-300);
        if !stored {
            warnings.push(warn(
                &scene.nodes[i].name,
                "no bind pose in bone_init_tm (identity, as the seed writes it): the first frame is taken as bind pose".into(),
            ));
        }
        let bind_of = |e: usize| if stored { init(e) } else { pose.world[e] };
        let mesh_bind = bind_of(i);
        scene.skins.push(Skin {
            joints: joints
                .iter()
                .map(|&node| SkinJoint { node, inverse_bind: bind_of(node).inverse() * mesh_bind })
                .collect(),
            influences,
            dq_weights: Vec::new(),
            mesh_bind: None,
        });
        scene.meshes[m].skin = Some(scene.skins.len() - 1);
    }
}

fn warn(place: &str, message: String) -> Warning {
    Warning { offset: None, place: format!("3da entity {place}", place = quoted(&place)), message }
}

fn v3(v: [f32; 3]) -> DVec3 {
    DVec3::new(v[0].into(), v[1].into(), v[2].into())
}

fn q4(q: Quat) -> DQuat {
    DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into())
}

/// The mesh of entity `e`: its surfaces concatenated.
fn mesh(file: &File, e: usize, name: &str) -> Mesh {
    let surfaces = &file.entities[e].surfaces;
    let mut m = Mesh { name: name.into(), polygon_starts: vec![0], ..Mesh::default() };
    let has = |f: &dyn Fn(&super::model::Surface) -> bool| surfaces.iter().any(f);
    let mut normals = has(&|s| s.normal.is_some()).then(Vec::new);
    let mut colors = has(&|s| s.color.is_some()).then(Vec::new);
    let mut uvs: Vec<Option<Vec<Vec2>>> =
        (0..MAP_CHANNELS).map(|c| has(&|s| s.texcoord[c].is_some()).then(Vec::new)).collect();
    let mut light = has(&|s| s.lightmap.is_some()).then(Vec::new);
    let mut slots: Vec<i32> = Vec::new();
    for s in surfaces {
        let base = m.positions.len() as u32;
        let n = s.s_size as usize;
        match &s.xyz {
            Some(p) => m.positions.extend(p.iter().map(|&v| v3(v))),
            None => m.positions.extend(std::iter::repeat_n(DVec3::ZERO, n)),
        }
        if let Some(out) = &mut normals {
            match &s.normal {
                Some(v) => out.extend(v.iter().map(|&v| Vec3::from(v))),
                None => out.extend(std::iter::repeat_n(Vec3::ZERO, n)),
            }
        }
        if let Some(out) = &mut colors {
            match &s.color {
                Some(v) => out.extend(
                    v.iter()
                        .map(|&c| Vec4::from_array(c.to_le_bytes().map(|b| f32::from(b) / 255.0))),
                ),
                None => out.extend(std::iter::repeat_n(Vec4::ONE, n)),
            }
        }
        for (c, out) in uvs.iter_mut().enumerate() {
            if let Some(out) = out {
                match &s.texcoord[c] {
                    Some(v) => out.extend(v.iter().map(|&v| Vec2::from(v))),
                    None => out.extend(std::iter::repeat_n(Vec2::ZERO, n)),
                }
            }
        }
        if let Some(out) = &mut light {
            match &s.lightmap {
                Some(v) => out.extend(v.iter().map(|&v| Vec2::from(v))),
                None => out.extend(std::iter::repeat_n(Vec2::ZERO, n)),
            }
        }
        let slot = match slots.iter().position(|&x| x == s.material_idx) {
            Some(k) => k,
            None => {
                slots.push(s.material_idx);
                slots.len() - 1
            }
        } as u32;
        for t in s.tri_list.chunks_exact(3) {
            m.corner_vertices.extend(t.iter().map(|&i| base + u32::from(i)));
            m.polygon_starts.push(m.corner_vertices.len() as u32);
            m.polygon_materials.push(slot);
        }
    }
    m.material_slots = slots
        .iter()
        .map(|&k| usize::try_from(k).ok().filter(|&k| k < file.materials.len()))
        .collect();
    m.normals = normals.map(per_vertex);
    m.colors = colors.map(per_vertex);
    for (c, v) in uvs.into_iter().enumerate() {
        if let Some(v) = v {
            m.uv_sets.push(UvSet { name: format!("uv{c}"), uvs: per_vertex(v) });
        }
    }
    if let Some(v) = light {
        m.uv_sets.push(UvSet { name: "lightmap".into(), uvs: per_vertex(v) });
    }
    m
}

fn per_vertex<T>(values: Vec<T>) -> Attribute<T> {
    Attribute { values, mapping: Mapping::PerVertex }
}

/// The per-frame tangents of TCB key `i`: stored tangents ÷ the length of the segment they
/// belong to (`in` to the one before, `out` to the one after).
fn tcb_per_frame<V: Value>(keys: &[TcbKey<V>], i: usize) -> (f64, f64) {
    let len = |a: usize, b: usize| (keys[b].frame() - keys[a].frame()).max(1) as f64;
    let din = if i > 0 { len(i - 1, i) } else { 1.0 };
    let dout = if i + 1 < keys.len() { len(i, i + 1) } else { 1.0 };
    (din, dout)
}

/// Scene keys from the keys of a TCB, LINEAR or BEZIER track of any dimension, each stored
/// value turned by `conv` (widening, and for EULER sub-tracks the seed's sign): LINEAR →
/// linear; TCB → Hermite with per-frame tangents ([`tcb_per_frame`]); BEZIER → Hermite as
/// stored (already per frame).
trait SceneKeys<V: Value> {
    fn scene_keys<O>(&self, conv: impl Fn(V) -> O) -> Vec<Key<O>>
    where
        O: std::ops::Div<f64, Output = O>;
}

impl<V: Value> SceneKeys<V> for [LinearKey<V>] {
    fn scene_keys<O>(&self, conv: impl Fn(V) -> O) -> Vec<Key<O>> {
        self.iter()
            .map(|k| Key {
                frame: k.frame() as f64,
                value: conv(k.value),
                interpolation: Interpolation::Linear,
            })
            .collect()
    }
}

impl<V: Value> SceneKeys<V> for [TcbKey<V>] {
    fn scene_keys<O>(&self, conv: impl Fn(V) -> O) -> Vec<Key<O>>
    where
        O: std::ops::Div<f64, Output = O>,
    {
        (0..self.len())
            .map(|i| {
                let (din, dout) = tcb_per_frame(self, i);
                Key {
                    frame: self[i].frame() as f64,
                    value: conv(self[i].value),
                    interpolation: Interpolation::Hermite {
                        in_tangent: conv(self[i].in_tan) / din,
                        out_tangent: conv(self[i].out_tan) / dout,
                    },
                }
            })
            .collect()
    }
}

impl<V: Value> SceneKeys<V> for [BezierKey<V>] {
    fn scene_keys<O>(&self, conv: impl Fn(V) -> O) -> Vec<Key<O>> {
        self.iter()
            .map(|k| Key {
                frame: k.frame() as f64,
                value: conv(k.value),
                interpolation: Interpolation::Hermite {
                    in_tangent: conv(k.in_tan),
                    out_tangent: conv(k.out_tan),
                },
            })
            .collect()
    }
}

fn vec_track(t: &VecTrack) -> Track<DVec3> {
    Track::new(match t {
        VecTrack::Linear(k) => k.keys.scene_keys(v3),
        VecTrack::Tcb(k) => k.keys.scene_keys(v3),
        VecTrack::Bezier(k) => k.keys.scene_keys(v3),
    })
}

fn quat_keys<K: KeyRecord<V = Quat>>(
    k: &KeyTrack<K>,
    f: impl Fn(&K) -> (DQuat, Interpolation<DQuat>),
) -> Track<DQuat> {
    Track::new(
        k.keys
            .iter()
            .map(|key| {
                let (value, interpolation) = f(key);
                Key { frame: key.frame() as f64, value, interpolation }
            })
            .collect(),
    )
}

fn rot_track(t: &RotTrack, name: &str, warnings: &mut Vec<Warning>) -> RotationTrack {
    RotationTrack::Quat(match t {
        RotTrack::Linear(k) => quat_keys(k, |k| (q4(k.value), Interpolation::Linear)),
        RotTrack::Tcb(k) => quat_keys(k, |k| {
            (
                q4(k.value),
                Interpolation::Squad { in_control: q4(k.in_tan), out_control: q4(k.out_tan) },
            )
        }),
        RotTrack::Euler(e) => return euler_track(e, name, warnings),
    })
}

/// A 1D track as a scene track, every value and tangent multiplied by `sign`.
fn float_track(t: &FloatTrack, sign: f64) -> Track<f64> {
    let conv = |v: f32| sign * f64::from(v);
    Track::new(match t {
        FloatTrack::Linear(k) => k.keys.scene_keys(conv),
        FloatTrack::Tcb(k) => k.keys.scene_keys(conv),
        FloatTrack::Bezier(k) => k.keys.scene_keys(conv),
    })
}

/// An EULER track as a scene Euler track. The seed composes `rot[0] · rot[1] · rot[2]` where
/// `rot[i]` turns the X, Y or Z sub-track's angle about the axis `m_aRotOrder[i]` names
/// (0 yaw → +Z with −angle, 1 roll → +Y with +angle, 2 pitch → +X with −angle, in the file's
/// 3ds Max axes; docs/3da.md, "Axes and EULER rotation"). So sub-track `i` becomes the scene's angle about that
/// axis (negated for yaw and pitch), and the scene order applies `rot[2]` first. A
/// `m_aRotOrder` that is not a permutation of 0, 1, 2 cannot be an [`EulerOrder`]: it is
/// resampled at every frame from the first to the last key instead, with a warning.
fn euler_track(
    e: &super::model::EulerTrack,
    name: &str,
    warnings: &mut Vec<Warning>,
) -> RotationTrack {
    let axis = |o: u32| match o {
        0 => Some((2usize, -1.0)),
        1 => Some((1, 1.0)),
        2 => Some((0, -1.0)),
        _ => None,
    };
    let subs = [&e.x, &e.y, &e.z];
    let mapped: Option<Vec<(usize, f64)>> = e.rot_order.iter().map(|&o| axis(o)).collect();
    if let Some(m) = mapped.filter(|m| m[0].0 != m[1].0 && m[1].0 != m[2].0 && m[0].0 != m[2].0) {
        // Applied first is rot[2], then rot[1], then rot[0].
        let order = match [m[2].0, m[1].0, m[0].0] {
            [0, 1, 2] => EulerOrder::Xyz,
            [0, 2, 1] => EulerOrder::Xzy,
            [1, 2, 0] => EulerOrder::Yzx,
            [1, 0, 2] => EulerOrder::Yxz,
            [2, 0, 1] => EulerOrder::Zxy,
            _ => EulerOrder::Zyx,
        };
        let mut xyz: [Option<Track<f64>>; 3] = [None, None, None];
        for (i, &(a, sign)) in m.iter().enumerate() {
            xyz[a] = Some(float_track(subs[i], sign));
        }
        return RotationTrack::Euler { order, rest: DVec3::ZERO, xyz };
    }
    let frames: Vec<i64> = subs.iter().flat_map(|t| t.frames()).collect();
    let (lo, hi) =
        (frames.iter().copied().min().unwrap_or(0), frames.iter().copied().max().unwrap_or(0));
    warnings.push(warn(
        name,
        format!("EULER m_aRotOrder {:?} is not a permutation of 0, 1, 2: resampled at every frame {lo}..={hi}", e.rot_order),
    ));
    let keys = (lo..=hi)
        .filter_map(|f| {
            let q = e.sample(f as f64)?;
            Some(Key {
                frame: f as f64,
                value: q.normalize(),
                interpolation: Interpolation::Linear,
            })
        })
        .collect();
    RotationTrack::Quat(Track::new(keys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::three_da::layout::{LinearKey, Material as Mat};
    use crate::formats::three_da::model::{Entity, Surface};

    #[test]
    fn tcb_tangents_become_per_frame_and_sample_like_the_file() {
        // TCB 3D, keys at 0 and 4, out-tangent of key 0 = (4,0,0) per unit of u: a straight
        // line from 0 to 4 when the in-tangent of key 1 is also (4,0,0). Frame 1 → x = 1.
        let k = |frame, x: f32| TcbKey {
            frame,
            value: [x, 0.0, 0.0],
            in_tan: [4.0, 0.0, 0.0],
            out_tan: [4.0, 0.0, 0.0],
            ..TcbKey::default()
        };
        let t = VecTrack::Tcb(KeyTrack { current: [0.0; 3], keys: vec![k(0, 0.0), k(4, 4.0)] });
        let scene_track = vec_track(&t);
        for f in [0.5, 1.0, 2.5, 3.0] {
            assert!((scene_track.sample(f).unwrap() - t.sample(f).unwrap()).length() < 1e-9);
        }
        assert!((scene_track.sample(1.0).unwrap().x - 1.0).abs() < 1e-9);
    }

    #[test]
    fn tcb_quat_controls_sample_like_the_file() {
        let h = std::f32::consts::FRAC_PI_8;
        let q = |a: f32| [0.0, 0.0, a.sin(), a.cos()];
        let k =
            |frame, v, c| TcbKey { frame, value: v, in_tan: c, out_tan: c, ..TcbKey::default() };
        let t = RotTrack::Tcb(KeyTrack {
            current: q(0.0),
            keys: vec![k(0, q(0.0), q(0.3 * h)), k(6, q(2.0 * h), q(1.2 * h))],
        });
        let mut w = Vec::new();
        let ours = rot_track(&t, "x", &mut w);
        for f in [1.0, 2.5, 5.0] {
            let (a, b) = (ours.sample(f).unwrap(), t.sample(f).unwrap());
            assert!(a.abs_diff_eq(b, 1e-6) || a.abs_diff_eq(-b, 1e-6), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn euler_tracks_sample_like_the_file_in_every_order() {
        use crate::formats::three_da::model::EulerTrack;
        let lin = |a: f32, b: f32| {
            FloatTrack::Linear(KeyTrack {
                current: a,
                keys: vec![LinearKey { frame: 0, value: a }, LinearKey { frame: 10, value: b }],
            })
        };
        let k = |frame, value: f32| TcbKey {
            frame,
            value,
            in_tan: 0.3f32,
            out_tan: -0.2,
            ..TcbKey::default()
        };
        let tcb = FloatTrack::Tcb(KeyTrack { current: 0.1, keys: vec![k(0, 0.1), k(10, 0.9)] });
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0], [0, 0, 1]] {
            let e = EulerTrack {
                num_keys: 2,
                x: lin(0.3, -1.2),
                y: tcb.clone(),
                z: lin(-0.7, 2.0),
                rot_order: order,
                current: [0.0, 0.0, 0.0, 1.0],
            };
            let mut w = Vec::new();
            let ours = euler_track(&e, "e", &mut w);
            // Not a permutation ([0, 0, 1]): resampled, exact at integer frames only.
            let frames: &[f64] =
                if order == [0, 0, 1] { &[0.0, 7.0, 10.0] } else { &[0.0, 2.5, 7.0, 10.0] };
            for &f in frames {
                let (a, b) = (ours.sample(f).unwrap(), e.sample(f).unwrap().normalize());
                assert!(
                    a.abs_diff_eq(b, 1e-6) || a.abs_diff_eq(-b, 1e-6),
                    "order {order:?} frame {f}: {a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn surfaces_become_one_mesh_with_a_slot_per_material() {
        let mut file = File { materials: vec![Mat::default(), Mat::default()], ..File::default() };
        let mut e = Entity::new(entity_type::MESH, "m");
        let surf = |mat, x: f32| Surface {
            material_idx: mat,
            tri_list: vec![0, 1, 2],
            s_size: 3,
            xyz: Some(vec![[x, 0.0, 0.0], [x, 1.0, 0.0], [x, 0.0, 1.0]]),
            ..Surface::default()
        };
        e.surfaces = vec![surf(1, 0.0), surf(0, 5.0)];
        e.position = Some(VecTrack::Linear(KeyTrack {
            current: [0.0; 3],
            keys: vec![LinearKey { frame: 0, value: [1.0, 2.0, 3.0] }],
        }));
        file.entities.push(e);
        let (scene, _) = import(&file);
        let m = &scene.meshes[0];
        assert_eq!(m.positions.len(), 6);
        assert_eq!(m.polygon(1), &[3, 4, 5]);
        assert_eq!(m.material_slots, vec![Some(1), Some(0)]);
        assert_eq!(m.polygon_materials, vec![0, 1]);
        assert_eq!(scene.nodes[0].transform.translation, DVec3::new(1.0, 2.0, 3.0));
    }
}
