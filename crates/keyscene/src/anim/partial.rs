//! What can move, and posing one node at a time.
//!
//! [`Scene::evaluate`] poses the whole scene at one time: every channel sampled, every node's
//! local and world matrix made. A writer that resamples a few targets over thousands of frames
//! (a 3DS camera's aim, one FBX node with pivots) needs much less: the nodes that can move at
//! all ([`Motion`]), and, per frame, the world matrix of a node and of what it depends on
//! ([`PartialPose`]). Both writers that resample (glTF, 3DA) use these two, so they agree on
//! what moves a node.
//!
//! # What moves a node
//! A node's **local** matrix changes over an animation when a channel on it drives a part of
//! its transform ([`ChannelTarget::apply_to_transform`]) or an FBX pivot property
//! ([`ChannelTarget::drives_pivots`]). Its **unaimed** world matrix ([`Scene::compose_world`])
//! changes when its local matrix or an ancestor's does. A camera's or spotlight's **world**
//! matrix (what [`Scene::evaluate`] returns: turned to look at its target) changes when its
//! unaimed world matrix does, when its target's position does (the target's world matrix), or
//! when its roll is animated (a `Roll` channel or an FBX `Roll` curve on a camera). A mesh's
//! **morph weights** change when a morph-weight property (`DeformPercent#k`) is animated on a
//! node that shows the mesh. Hidden, field-of-view, colour and cone tracks move nothing. The
//! scene model has no constraints; targets are its only cross-links.
//!
//! # Exactness
//! [`PartialPose`] computes every value with the same operations in the same order as
//! [`Scene::evaluate`] and [`Scene::compose_world`], so its matrices are bit for bit theirs
//! (the unit tests compare them); writers that switched to it write byte-identical files.

use glam::{DMat4, DVec3};

use super::{curve, pivot_component, set_pivot_component, ChannelTarget};
use crate::scene::{EulerOrder, InheritType, NodeId, NodeKind, Scene, Transform};

/// Which parts of a scene can change over one animation (see the module docs, "What moves a
/// node"). Conservative: `true` says "may change", `false` "is the same at every time".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Motion {
    /// Per node: its local matrix (its own T, R, S and pivots).
    pub local: Vec<bool>,
    /// Per node: its world matrix without camera/light aiming ([`Scene::compose_world`]):
    /// its local matrix or an ancestor's.
    pub unaimed: Vec<bool>,
    /// Per node: its world matrix as [`Scene::evaluate`] returns it (aimed cameras and
    /// spotlights: also their target's position and their roll).
    pub world: Vec<bool>,
    /// Per mesh of [`Scene::meshes`]: its morph target weights.
    pub morph: Vec<bool>,
}

/// The aim target of node `id` as [`Scene::evaluate`] uses it: a camera's or light's
/// target, when it is a node of the scene.
fn aim_target(scene: &Scene, id: NodeId) -> Option<NodeId> {
    let n = scene.nodes.len();
    match scene.nodes[id].kind {
        NodeKind::Camera(c) => scene.cameras.get(c)?.target,
        NodeKind::Light(l) => scene.lights.get(l)?.target,
        _ => None,
    }
    .filter(|&t| t < n)
}

/// Whether the channel can change its node's local matrix.
fn drives_local(target: &ChannelTarget) -> bool {
    match target {
        ChannelTarget::Translation(_)
        | ChannelTarget::Rotation(_)
        | ChannelTarget::Scale(_)
        | ChannelTarget::TranslationXyz(_)
        | ChannelTarget::ScaleXyz(_) => true,
        ChannelTarget::Layered(b) => b.transform_part().is_some() || target.drives_pivots(),
        ChannelTarget::Property { .. } => target.drives_pivots(),
        _ => false,
    }
}

/// Whether the channel sets the camera roll of a camera node.
fn drives_roll(target: &ChannelTarget) -> bool {
    matches!(target, ChannelTarget::Roll(_)) || target.property_name() == Some("Roll")
}

/// The morph target a channel's property animates when it is a morph weight
/// ([`curve::morph_target_of`]) and not one of the names [`Scene::evaluate`] reads first.
fn morph_property(target: &ChannelTarget) -> Option<usize> {
    let name = target.property_name()?;
    if pivot_component(name).is_some() || name == "Visibility" {
        return None;
    }
    curve::morph_target_of(name)
}

impl Scene {
    /// What can move over animation `animation` (index into [`Scene::animations`]; `None` or
    /// past the end: nothing moves), see [`Motion`]. For a valid scene ([`Scene::validate`]);
    /// a node in a parent cycle counts as moving.
    pub fn motion(&self, animation: Option<usize>) -> Motion {
        let n = self.nodes.len();
        let mut local = vec![false; n];
        let mut roll = vec![false; n];
        let mut morph = vec![false; self.meshes.len()];
        for ch in animation.and_then(|a| self.animations.get(a)).map_or(&[][..], |a| &a.channels) {
            let Some(node) = self.nodes.get(ch.node) else { continue };
            local[ch.node] |= drives_local(&ch.target);
            roll[ch.node] |= matches!(node.kind, NodeKind::Camera(_)) && drives_roll(&ch.target);
            if let (Some(_), Some(m)) = (morph_property(&ch.target), node.mesh) {
                if let Some(w) = morph.get_mut(m) {
                    *w = true;
                }
            }
        }
        // Unaimed: the local matrix or an ancestor's, parents first.
        let mut unaimed = local.clone();
        let mut seen = vec![false; n];
        for id in self.depth_first() {
            if let Some(s) = seen.get_mut(id) {
                *s = true;
            }
            if let Some(p) = self.nodes[id].parent.filter(|&p| p < n) {
                unaimed[id] |= unaimed[p];
            }
        }
        for (u, s) in unaimed.iter_mut().zip(&seen) {
            *u |= !s;
        }
        // A camera's roll animated by a channel on another node showing the same camera.
        let mut camera_roll = vec![false; self.cameras.len()];
        for (id, node) in self.nodes.iter().enumerate() {
            if let (NodeKind::Camera(c), true) = (&node.kind, roll[id]) {
                if let Some(r) = camera_roll.get_mut(*c) {
                    *r = true;
                }
            }
        }
        // An aimed node looks at its target's world position: aimed already when the target
        // comes first in node order, as `Scene::evaluate` aims in that order.
        let mut world = unaimed.clone();
        for id in 0..n {
            let Some(t) = aim_target(self, id) else { continue };
            let rolls = match self.nodes[id].kind {
                NodeKind::Camera(c) => camera_roll.get(c).copied().unwrap_or(false),
                _ => false,
            };
            let target = if t < id { world[t] } else { unaimed[t] };
            world[id] |= rolls || target;
        }
        Motion { local, unaimed, world, morph }
    }
}

/// Per-node values of one frame, valid while `stamp` equals the pose's.
#[derive(Debug, Clone, Copy)]
struct WorldCache {
    stamp: u32,
    world: DMat4,
    unscaled: DMat4,
    inherit_scale: DVec3,
    scale_source: Option<NodeId>,
}

/// A scene posed lazily at one frame of one animation, one node at a time: asking for a node's
/// world matrix evaluates that node's channels and its ancestors' only, each once per frame
/// (cached until the next [`PartialPose::set_frame`]). Every value equals what
/// [`Scene::evaluate`] (and [`Scene::compose_world`]) returns at the same time, bit for bit
/// (module docs, "Exactness").
///
/// Node ids past the scene's nodes are not asked for (the accessors panic on them, as indexing
/// a [`super::Pose`] would); a node in a parent cycle (an invalid scene) gets the identity world
/// matrix, as [`Scene::compose_world`] leaves unreachable nodes.
#[derive(Debug)]
pub struct PartialPose<'s> {
    scene: &'s Scene,
    anim: Option<&'s super::Animation>,
    /// Per node: indices of its channels in the animation, in animation order.
    channels: Vec<Vec<u32>>,
    /// Per channel of the animation: the channel prepared for sampling many frames.
    samplers: Vec<super::ChannelSampler<'s>>,
    /// Per camera: the channels that set its roll, in animation order.
    roll_channels: Vec<Vec<u32>>,
    /// Per mesh: the channels that set one of its morph weights, in animation order.
    morph_channels: Vec<Vec<u32>>,
    /// Nodes reachable from the roots (others keep the identity world matrix).
    reachable: Vec<bool>,
    /// Whether a node inherits from its parent other than its whole matrix (an inherit type
    /// other than `RSrs`): only then are the unscaled world matrices and inherited scales of
    /// [`WorldCache`] needed (3DS scenes and most FBX ones need neither, and decomposing every
    /// local matrix for them was a tenth of sampling an aimed camera's helper).
    split_scale: bool,
    up: DVec3,
    frame: f64,
    stamp: u32,
    locals: Vec<(u32, Transform, DMat4)>,
    worlds: Vec<WorldCache>,
    aimed: Vec<(u32, DMat4)>,
}

impl<'s> PartialPose<'s> {
    /// A pose of `scene` under animation `animation` (index into [`Scene::animations`];
    /// `None` or past the end poses the rest transforms, as [`Scene::evaluate`]), at the
    /// animation's frame 0 until [`PartialPose::set_frame`].
    pub fn new(scene: &'s Scene, animation: Option<usize>) -> PartialPose<'s> {
        let anim = animation.and_then(|a| scene.animations.get(a));
        let n = scene.nodes.len();
        let mut channels = vec![Vec::new(); n];
        let mut roll_channels = vec![Vec::new(); scene.cameras.len()];
        let mut morph_channels = vec![Vec::new(); scene.meshes.len()];
        for (i, ch) in anim.map_or(&[][..], |a| &a.channels).iter().enumerate() {
            let Some(node) = scene.nodes.get(ch.node) else { continue };
            let i = i as u32;
            channels[ch.node].push(i);
            if let NodeKind::Camera(c) = node.kind {
                if drives_roll(&ch.target) {
                    if let Some(list) = roll_channels.get_mut(c) {
                        list.push(i);
                    }
                }
            }
            if let (Some(_), Some(m)) = (morph_property(&ch.target), node.mesh) {
                if let Some(list) = morph_channels.get_mut(m) {
                    list.push(i);
                }
            }
        }
        let mut reachable = vec![false; n];
        for id in scene.depth_first() {
            if let Some(r) = reachable.get_mut(id) {
                *r = true;
            }
        }
        let up = match scene.meta.axes.up {
            crate::scene::Axis::PosZ | crate::scene::Axis::NegZ => DVec3::Z,
            crate::scene::Axis::PosX | crate::scene::Axis::NegX => DVec3::X,
            _ => DVec3::Y,
        };
        let split_scale =
            scene.nodes.iter().any(|n| n.parent.is_some() && n.inherit != InheritType::RSrs);
        PartialPose {
            scene,
            anim,
            channels,
            samplers: anim
                .map_or(&[][..], |a| &a.channels)
                .iter()
                .map(|c| c.target.sampler())
                .collect(),
            roll_channels,
            morph_channels,
            reachable,
            split_scale,
            up,
            frame: 0.0,
            stamp: 1,
            locals: Vec::new(),
            worlds: Vec::new(),
            aimed: Vec::new(),
        }
    }

    /// Moves the pose to `frame` of the animation's clock (what [`super::Time::Frame`] means
    /// to [`Scene::evaluate`]); every cached value is dropped, unless `frame` is the frame the
    /// pose is at (the same bits): then what is cached stays valid and is kept (a writer that
    /// sets the frame before each node's query then costs one pass over a deep hierarchy,
    /// not one per node: `synthetic_id_collision_7500_ascii`'s 10,000-node chain).
    pub fn set_frame(&mut self, frame: f64) {
        if frame.to_bits() == self.frame.to_bits() {
            return;
        }
        self.frame = frame;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // After 2³² frames: clear the stamps rather than mistake an old value for new.
            self.locals.iter_mut().for_each(|l| l.0 = 0);
            self.worlds.iter_mut().for_each(|w| w.stamp = 0);
            self.aimed.iter_mut().for_each(|a| a.0 = 0);
            self.stamp = 1;
        }
    }

    /// The frame the pose is at.
    pub fn frame(&self) -> f64 {
        self.frame
    }

    /// Node `id`'s translation, rotation and scale: its rest transform with its transform
    /// channels applied in animation order ([`ChannelTarget::apply_to_transform`]), pivots not
    /// included.
    pub fn parts(&mut self, id: NodeId) -> Transform {
        self.ensure_local(id);
        self.locals[id].1
    }

    /// Node `id`'s local matrix ([`super::Pose::local`]): its parts through its pivots (FBX
    /// pivot properties animated as [`Scene::evaluate`] says).
    pub fn local(&mut self, id: NodeId) -> DMat4 {
        self.ensure_local(id);
        self.locals[id].2
    }

    /// Node `id`'s world matrix without camera/light aiming, which its children inherit
    /// ([`Scene::compose_world`] of the local matrices).
    pub fn unaimed_world(&mut self, id: NodeId) -> DMat4 {
        self.ensure_world(id);
        self.worlds[id].world
    }

    /// Node `id`'s world matrix as [`super::Pose::world`] has it: cameras and spotlights with a
    /// target turned to look at it.
    pub fn world(&mut self, id: NodeId) -> DMat4 {
        if aim_target(self.scene, id).is_none() {
            return self.unaimed_world(id);
        }
        if self.aimed.is_empty() {
            self.aimed = vec![(0, DMat4::IDENTITY); self.scene.nodes.len()];
        }
        if self.aimed[id].0 == self.stamp {
            return self.aimed[id].1;
        }
        // `Scene::evaluate` aims in node order, so a target with a lower id is already aimed
        // when a node looks at it: the chain of such targets (ids strictly falling) is aimed
        // from its end back.
        let mut chain = vec![id];
        let mut at = id;
        while let Some(t) = aim_target(self.scene, at).filter(|&t| t < at) {
            if aim_target(self.scene, t).is_none() || self.aimed[t].0 == self.stamp {
                break;
            }
            chain.push(t);
            at = t;
        }
        for &node in chain.iter().rev() {
            let t = aim_target(self.scene, node).expect("chained nodes have targets");
            let target = if t < node { self.world(t) } else { self.unaimed_world(t) };
            let roll = match self.scene.nodes[node].kind {
                NodeKind::Camera(c) => self.camera_roll(c),
                NodeKind::Light(l) => self.scene.lights[l].roll_degrees,
                _ => 0.0,
            };
            let m = super::aim(self.unaimed_world(node), target.w_axis.truncate(), self.up, roll);
            self.aimed[node] = (self.stamp, m);
        }
        self.aimed[id].1
    }

    /// Camera `c`'s roll in degrees ([`super::Pose::camera_roll`]).
    pub fn camera_roll(&self, c: usize) -> f64 {
        let mut roll = self.scene.cameras[c].roll_degrees;
        let Some(anim) = self.anim else { return roll };
        for &i in &self.roll_channels[c] {
            let target = &anim.channels[i as usize].target;
            let v = match target {
                ChannelTarget::Roll(t) => t.sample(self.frame),
                _ => target.sample_property(self.frame).map(|(_, v)| v),
            };
            if let Some(v) = v {
                roll = v;
            }
        }
        roll
    }

    /// Mesh `m`'s morph target weights ([`super::Pose::morph_weights`]).
    pub fn morph_weights(&self, m: usize) -> Vec<f64> {
        let mesh = &self.scene.meshes[m];
        let mut w: Vec<f64> = mesh.morph_targets.iter().map(|t| t.default_weight).collect();
        let Some(anim) = self.anim else { return w };
        for &i in &self.morph_channels[m] {
            let target = &anim.channels[i as usize].target;
            let Some((name, v)) = target.sample_property(self.frame) else { continue };
            let Some(k) = curve::morph_target_of(name) else { continue };
            if let Some(x) = w.get_mut(k) {
                *x = v / 100.0;
            }
        }
        w
    }

    fn ensure_local(&mut self, id: NodeId) {
        if self.locals.is_empty() {
            let n = self.scene.nodes.len();
            self.locals = vec![(0, Transform::IDENTITY, DMat4::IDENTITY); n];
        }
        if self.locals[id].0 == self.stamp {
            return;
        }
        let node = &self.scene.nodes[id];
        let mut p = node.transform;
        // Animated pivots: the pivots at this time, and whether a rotation among them changed.
        let mut pivots: Option<(crate::scene::Pivots, bool)> = None;
        if self.anim.is_some() {
            for &i in &self.channels[id] {
                let sampler = &self.samplers[i as usize];
                let target = sampler.target();
                if sampler.apply_to_transform(&mut p, self.frame) {
                    continue;
                }
                let (ChannelTarget::Property { .. } | ChannelTarget::Layered(_)) = target else {
                    continue;
                };
                let Some((name, v)) = target.sample_property(self.frame) else { continue };
                let Some((part, c)) = pivot_component(name) else { continue };
                let (pv, rotated) = pivots.get_or_insert_with(|| {
                    (node.pivots.as_deref().copied().unwrap_or_default(), false)
                });
                *rotated |= set_pivot_component(pv, part, c, v);
            }
        }
        let local = match (pivots, &node.pivots) {
            (Some((mut pv, rotated)), _) => {
                if rotated {
                    let rad = std::f64::consts::PI / 180.0;
                    pv.pre_rotation = EulerOrder::Xyz.to_quat(pv.pre_rotation_degrees * rad);
                    pv.post_rotation = EulerOrder::Xyz.to_quat(pv.post_rotation_degrees * rad);
                }
                pv.matrix(p.translation, p.rotation, p.scale)
            }
            (None, Some(pv)) => pv.matrix(p.translation, p.rotation, p.scale),
            (None, None) => p.matrix(),
        };
        self.locals[id] = (self.stamp, p, local);
    }

    fn ensure_world(&mut self, id: NodeId) {
        let n = self.scene.nodes.len();
        if self.worlds.is_empty() {
            let empty = WorldCache {
                stamp: 0,
                world: DMat4::IDENTITY,
                unscaled: DMat4::IDENTITY,
                inherit_scale: DVec3::ONE,
                scale_source: None,
            };
            self.worlds = vec![empty; n];
        }
        if self.worlds[id].stamp == self.stamp {
            return;
        }
        if !self.reachable[id] {
            // Not composed by `Scene::compose_world`: identity, as it leaves such nodes.
            self.worlds[id] = WorldCache {
                stamp: self.stamp,
                world: DMat4::IDENTITY,
                unscaled: DMat4::IDENTITY,
                inherit_scale: DVec3::ONE,
                scale_source: None,
            };
            return;
        }
        // The node and its ancestors not yet composed at this frame, nearest first.
        let mut chain = vec![id];
        let mut at = id;
        while let Some(p) = self.scene.nodes[at].parent.filter(|&p| p < n) {
            if self.worlds[p].stamp == self.stamp || chain.len() > n {
                break;
            }
            chain.push(p);
            at = p;
        }
        for &node in chain.iter().rev() {
            let local = self.local(node);
            let parent = self.scene.nodes[node].parent.filter(|&p| p < n);
            if !self.split_scale {
                // Every node inherits its parent's whole matrix (`RSrs` below).
                let world = match parent {
                    None => local,
                    Some(p) => self.worlds[p].world * local,
                };
                self.worlds[node] = WorldCache {
                    stamp: self.stamp,
                    world,
                    unscaled: DMat4::IDENTITY,
                    inherit_scale: DVec3::ONE,
                    scale_source: None,
                };
                continue;
            }
            let (s, r, t) = local.to_scale_rotation_translation();
            let mode =
                if parent.is_some() { self.scene.nodes[node].inherit } else { InheritType::RSrs };
            let c = match (parent, mode) {
                (None, _) => WorldCache {
                    stamp: self.stamp,
                    world: local,
                    unscaled: DMat4::from_rotation_translation(r, t),
                    inherit_scale: s,
                    scale_source: None,
                },
                (Some(p), InheritType::RSrs) => {
                    let pw = self.worlds[p].world;
                    WorldCache {
                        stamp: self.stamp,
                        world: pw * local,
                        unscaled: pw * DMat4::from_rotation_translation(r, t),
                        inherit_scale: s,
                        scale_source: None,
                    }
                }
                (Some(p), _) => {
                    let parent = self.worlds[p];
                    let scale_source =
                        if mode == InheritType::RrSs { Some(p) } else { parent.scale_source };
                    let ps = scale_source.map_or(DVec3::ONE, |q| self.worlds[q].inherit_scale);
                    let s2 = s * ps;
                    let t2 = t * parent.inherit_scale;
                    WorldCache {
                        stamp: self.stamp,
                        world: parent.unscaled * DMat4::from_scale_rotation_translation(s2, r, t2),
                        unscaled: parent.unscaled * DMat4::from_rotation_translation(r, t2),
                        inherit_scale: s2,
                        scale_source,
                    }
                }
            };
            self.worlds[node] = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{
        Animation, AxisAngle, Channel, Interpolation, Key, RotationTrack, Time, Track,
    };
    use crate::scene::{Axis, Camera, FovAxis, Light, LightKind, Mesh, MorphTarget, Node, Pivots};
    use glam::{DQuat, Vec3};

    fn linear<V: Copy>(keys: &[(f64, V)]) -> Track<V> {
        Track::new(
            keys.iter()
                .map(|&(frame, value)| Key { frame, value, interpolation: Interpolation::Linear })
                .collect(),
        )
    }

    fn camera(target: NodeId) -> Camera {
        Camera {
            target: Some(target),
            roll_degrees: 5.0,
            ..Camera::new("cam", 45.0, FovAxis::Horizontal)
        }
    }

    /// Every case the evaluator has: pivots animated (pre-rotation and offsets), the three
    /// inherit types under scaled parents, a camera aimed at a moving node with an animated
    /// roll, a camera aimed at that (aimed, lower-id) camera, a rolled spotlight, a morph
    /// weight, and tracks that move nothing (hidden, field of view).
    fn scene() -> Scene {
        let mut s = Scene::default();
        s.meta.axes.up = Axis::PosZ;
        let kinds = [
            NodeKind::Null,
            NodeKind::Null,
            NodeKind::Bone,
            NodeKind::Null,
            NodeKind::Camera(0),
            NodeKind::Camera(1),
            NodeKind::Light(0),
            NodeKind::Mesh,
            NodeKind::Null,
        ];
        let parents = [None, Some(0), Some(1), Some(2), Some(0), None, Some(3), Some(3), None];
        for (i, kind) in kinds.into_iter().enumerate() {
            let mut node = Node::new(format!("n{i}"), kind);
            node.transform.translation = DVec3::new(1.0 + i as f64, 0.5, -0.25 * i as f64);
            node.transform.rotation = DQuat::from_rotation_z(0.1 * i as f64);
            node.transform.scale = DVec3::new(1.0, 1.5, 0.5 + 0.25 * i as f64);
            s.nodes.push(node);
            s.attach(i, parents[i]);
        }
        s.nodes[0].pivots = Some(Box::new(Pivots {
            rotation_pivot: DVec3::new(0.5, 0.0, 1.0),
            scaling_offset: DVec3::new(0.0, 0.25, 0.0),
            ..Pivots::default()
        }));
        s.nodes[1].inherit = InheritType::RrSs;
        s.nodes[2].inherit = InheritType::Rrs;
        s.nodes[3].inherit = InheritType::RrSs;
        s.cameras.push(camera(2));
        s.cameras.push(camera(4));
        s.lights.push(Light {
            name: "spot".into(),
            kind: LightKind::Spot,
            color: Vec3::ONE,
            intensity: 1.0,
            hotspot_degrees: 20.0,
            falloff_degrees: 30.0,
            attenuation: None,
            on: true,
            target: Some(8),
            roll_degrees: 10.0,
        });
        let mut mesh = Mesh { name: "m".into(), ..Mesh::default() };
        for k in 0..2 {
            mesh.morph_targets.push(MorphTarget {
                name: format!("t{k}"),
                position_deltas: Vec::new(),
                normal_deltas: None,
                default_weight: 0.25,
                inbetweens: Vec::new(),
                vertex_weights: Vec::new(),
            });
        }
        s.meshes.push(mesh);
        s.nodes[7].mesh = Some(0);
        let property = |node: NodeId, name: &str, keys: &[(f64, f64)]| Channel {
            node,
            target: ChannelTarget::Property { name: name.into(), track: linear(keys) },
        };
        s.animations.push(Animation {
            name: "a".into(),
            fps: 24.0,
            frame_range: (0.0, 10.0),
            channels: vec![
                Channel {
                    node: 0,
                    target: ChannelTarget::Translation(linear(&[
                        (0.0, DVec3::ZERO),
                        (10.0, DVec3::new(3.0, -1.0, 2.0)),
                    ])),
                },
                property(0, "PreRotation|Y", &[(0.0, 0.0), (10.0, 40.0)]),
                property(0, "RotationOffset|X", &[(0.0, 0.0), (10.0, 2.0)]),
                Channel {
                    node: 1,
                    target: ChannelTarget::Scale(linear(&[
                        (0.0, DVec3::ONE),
                        (10.0, DVec3::new(2.0, 0.5, 3.0)),
                    ])),
                },
                Channel {
                    node: 2,
                    target: ChannelTarget::Rotation(RotationTrack::Quat(linear(&[
                        (0.0, DQuat::IDENTITY),
                        (10.0, DQuat::from_rotation_x(1.0)),
                    ]))),
                },
                Channel { node: 3, target: ChannelTarget::Hidden(linear(&[(0.0, false)])) },
                Channel {
                    node: 4,
                    target: ChannelTarget::Roll(linear(&[(0.0, 0.0), (10.0, 30.0)])),
                },
                Channel {
                    node: 5,
                    target: ChannelTarget::Fov(linear(&[(0.0, 30.0), (10.0, 60.0)])),
                },
                property(7, "DeformPercent#1", &[(0.0, 0.0), (10.0, 100.0)]),
                Channel {
                    node: 8,
                    target: ChannelTarget::Rotation(RotationTrack::Relative(Track::new(
                        [(0.0, 0.0), (4.0, 1.5), (9.0, 2.5)]
                            .iter()
                            .map(|&(frame, angle)| Key {
                                frame,
                                value: AxisAngle { angle, axis: DVec3::new(0.0, 0.6, 0.8) },
                                interpolation: Interpolation::Tcb(Default::default()),
                            })
                            .collect(),
                    ))),
                },
                property(7, "Visibility", &[(0.0, 1.0)]),
            ],
        });
        s.validate().expect("a valid scene");
        s
    }

    fn bits(m: DMat4) -> [u64; 16] {
        m.to_cols_array().map(f64::to_bits)
    }

    #[test]
    fn partial_pose_equals_the_full_evaluation_bit_for_bit() {
        // The scene as it is (three nodes inherit other than `RSrs`) and with every node
        // inheriting its parent's whole matrix (the pose then keeps no unscaled matrices).
        let mut whole = scene();
        whole.nodes.iter_mut().for_each(|n| n.inherit = InheritType::RSrs);
        assert!(!PartialPose::new(&whole, Some(0)).split_scale);
        for s in [whole, scene()] {
            equals_the_full_evaluation(&s);
        }
    }

    /// The assertions of [`partial_pose_equals_the_full_evaluation_bit_for_bit`] on `s`.
    fn equals_the_full_evaluation(s: &Scene) {
        let mut pose = PartialPose::new(s, Some(0));
        for frame in [0.0, 2.5, 7.0, 10.0, 12.0, 2.5] {
            let full = s.evaluate(Some(0), Time::Frame(frame));
            let unaimed = s.compose_world(&full.local);
            pose.set_frame(frame);
            // Worlds first, in reverse order (children before parents, an aimed camera before
            // what it looks at): the cache fills in any order.
            for id in (0..s.nodes.len()).rev() {
                assert_eq!(bits(pose.world(id)), bits(full.world[id]), "world {id} at {frame}");
            }
            for (id, &u) in unaimed.iter().enumerate() {
                assert_eq!(bits(pose.local(id)), bits(full.local[id]), "local {id} at {frame}");
                assert_eq!(bits(pose.unaimed_world(id)), bits(u), "unaimed {id}");
            }
            for c in 0..s.cameras.len() {
                assert_eq!(pose.camera_roll(c).to_bits(), full.camera_roll[c].to_bits());
            }
            assert_eq!(pose.morph_weights(0), full.morph_weights[0]);
            // One node alone, on a fresh pose: the aim chain 5 → 4 → 2 resolved from nothing.
            let mut alone = PartialPose::new(s, Some(0));
            alone.set_frame(frame);
            assert_eq!(bits(alone.world(5)), bits(full.world[5]), "camera 5 alone at {frame}");
        }
        // Hand-computed facts behind the comparison, at frame 10: the root's origin is FBX's
        // `T + Roff + Rp + R·(−Rp + Soff)` with T = (3, −1, 2) (keyed), Roff = (2, 0, 0)
        // (keyed), Rp = (0.5, 0, 1), Soff = (0, 0.25, 0) and R its pre-rotation of 40° about
        // Y (its own rotation is the identity); the roll is 30° and the morph weight 1.
        pose.set_frame(10.0);
        let origin = pose.world(0).w_axis.truncate();
        let (sin, cos) = 40f64.to_radians().sin_cos();
        let v = DVec3::new(-0.5, 0.25, -1.0);
        let turned = DVec3::new(cos * v.x + sin * v.z, v.y, -sin * v.x + cos * v.z);
        let expected = DVec3::new(3.0 + 2.0 + 0.5, -1.0, 2.0 + 1.0) + turned;
        assert!((origin - expected).length() < 1e-9, "{origin} vs {expected}");
        assert_eq!(pose.camera_roll(0), 30.0);
        assert_eq!(pose.morph_weights(0), vec![0.25, 1.0]);
    }

    #[test]
    fn values_without_matrices_equal_the_full_evaluation() {
        let s = scene();
        let anim = s.animations.first();
        for frame in [0.0, 2.5, 5.0, 10.0, 12.0] {
            let full = s.evaluate_animation(anim, Time::Frame(frame));
            let v = s.evaluate_values(anim, Time::Frame(frame));
            assert!(v.local.is_empty() && v.world.is_empty());
            assert_eq!(v.hidden, full.hidden, "at {frame}");
            assert_eq!(v.mesh, full.mesh);
            let f = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(f(&v.camera_fov), f(&full.camera_fov));
            assert_eq!(f(&v.camera_roll), f(&full.camera_roll));
            assert_eq!(v.light_color, full.light_color);
            assert_eq!(f(&v.light_intensity), f(&full.light_intensity));
            assert_eq!(f(&v.light_hotspot), f(&full.light_hotspot));
            assert_eq!(f(&v.light_falloff), f(&full.light_falloff));
            assert_eq!(v.morph_weights, full.morph_weights);
        }
        // By hand: node 5's field of view keyed linearly 30° → 60° over frames 0–10 is 45° at
        // frame 5, and node 3 stays shown by its one hide key (false).
        let v = s.evaluate_values(anim, Time::Frame(5.0));
        let NodeKind::Camera(c) = s.nodes[5].kind else { panic!("node 5 is a camera") };
        assert_eq!(v.camera_fov[c], 45.0);
        assert!(!v.hidden[3]);
    }

    #[test]
    fn motion_says_what_each_channel_and_link_moves() {
        let mut s = scene();
        let m = s.motion(Some(0));
        // Own channels on 0, 1, 2 and 8; 3 only hides, but its ancestors move.
        assert_eq!(m.local, [true, true, true, false, false, false, false, false, true]);
        assert_eq!(m.unaimed, [true, true, true, true, true, false, true, true, true]);
        // Camera 5 is a still root whose fov is keyed, but it looks at camera 4, which moves.
        assert_eq!(m.world, [true; 9]);
        assert_eq!(m.morph, [true]);
        // Without the transform channels nothing moves but camera 4's roll: it turns camera 4
        // and hence the aimed camera 5 looking at it (not its position, but the evaluator
        // reads the aimed matrix) — and nothing else.
        s.animations[0].channels.retain(|c| !drives_local(&c.target));
        let m = s.motion(Some(0));
        assert!(m.local.iter().all(|&x| !x));
        assert!(m.unaimed.iter().all(|&x| !x));
        assert_eq!(m.world, [false, false, false, false, true, true, false, false, false]);
        // No animation: nothing moves.
        let m = s.motion(None);
        assert!(m.world.iter().chain(&m.morph).all(|&x| !x));
    }
}
