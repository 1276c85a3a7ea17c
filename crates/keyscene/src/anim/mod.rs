//! Animation: tracks of keys, and the evaluator that poses a [`Scene`] at a time.
//!
//! # Time
//! Key times are **frames of the animation's clock** ([`Animation::fps`] frames per second),
//! stored as `f64` so fractional keys (FBX KTime, glTF seconds) are exact enough:
//! an FBX KTime `t` is frame `t · fps / 46_186_158_000`. [`Time`] names which unit a caller
//! means, so `Time::Seconds(1.0)` and `Time::Frame(30.0)` agree on a 30 fps clock.
//!
//! # Tracks
//! A [`Track`] holds keys sorted by time (equal times allowed: 3DS files repeat frames).
//! Each key says how the curve leaves it ([`Interpolation`]): held (step), straight (linear),
//! a Kochanek–Bartels spline ([`Tcb`], tangents from the neighbours as 3D Studio computes them),
//! or a cubic Hermite with stored tangents (glTF `CUBICSPLINE`, 3DA `BEZIER`).
//!
//! # Evaluation
//! [`Scene::evaluate`] samples one animation at one time and returns a [`Pose`]: every node's
//! local and world matrix, visibility, and the animated camera/light values. Rotation tracks
//! have their own type, [`RotationTrack`], because 3DS rotation keys are relative axis-angle
//! turns that only become orientations when accumulated (seed 000, "Tracks"). A value that
//! several FBX animation layers blend is kept as its layers ([`ChannelTarget::Layered`],
//! [`layers`]) and blended at the asked time. Animated material properties are evaluated
//! apart from the pose, by [`Scene::material_at`] ([`material`]).

pub mod curve;
pub mod hermite;
pub mod keep;
pub mod layers;
pub mod material;
pub mod partial;
pub mod posing;
pub mod resample;
pub mod tcb;
pub mod user_props;

/// The animation data types live in the scene model ([`crate::scene::animation`], which says
/// why); they are the same types under both paths.
pub use crate::scene::animation::{
    Animation, AxisAngle, Channel, ChannelTarget, Extrapolation, Interpolation, Key,
    MaterialChannel, MaterialProperty, MaterialValue, RotationTrack, Tcb, Track,
};
pub use curve::{CycleMode, MORPH_WEIGHT_PROPERTY};
pub use layers::{BlendMode, LayerBlend, LayerContribution, LayeredValue};
pub use partial::{Motion, PartialPose};
pub use posing::{AnimationChoice, PoseError, PoseOptions, PoseWarning};
pub use tcb::{hermite, tcb_tangents};

use glam::{DMat4, DQuat, DVec3};

use crate::scene::{EulerOrder, NodeId, NodeKind, Scene};

/// A point on an animation's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Time {
    /// A frame of the animation's clock (fractional allowed).
    Frame(f64),
    /// Seconds from frame 0.
    Seconds(f64),
}

impl Time {
    /// This time in frames at `fps` frames per second.
    pub fn to_frame(self, fps: f64) -> f64 {
        match self {
            Time::Frame(f) => f,
            Time::Seconds(s) => s * fps,
        }
    }
}

/// The frame rate 3D Studio's keyframer runs at; 3DS files store no rate of their own.
pub const THREE_DS_FPS: f64 = 30.0;

impl Animation {
    /// A copy whose tracks all hold their end keys outside their key range
    /// ([`Extrapolation::Constant`] before and after): what ufbx evaluates with
    /// `UFBX_EVALUATE_FLAG_NO_EXTRAPOLATION`, and what the FBX references marked
    /// `no_extrapolation` expect ("evaluate without curve extrapolation").
    pub fn without_extrapolation(&self) -> Animation {
        fn hold<T>(t: &mut Track<T>) {
            t.before = Extrapolation::Constant;
            t.after = Extrapolation::Constant;
        }
        let mut a = self.clone();
        for ch in &mut a.channels {
            match &mut ch.target {
                ChannelTarget::Translation(t)
                | ChannelTarget::Scale(t)
                | ChannelTarget::Color(t) => hold(t),
                ChannelTarget::Rotation(RotationTrack::Quat(t)) => hold(t),
                ChannelTarget::Rotation(RotationTrack::Relative(t)) => hold(t),
                ChannelTarget::Rotation(RotationTrack::Euler { xyz: c, .. })
                | ChannelTarget::TranslationXyz(c)
                | ChannelTarget::ScaleXyz(c) => c.iter_mut().flatten().for_each(hold),
                ChannelTarget::Hidden(t) => hold(t),
                ChannelTarget::Morph(t) => hold(t),
                ChannelTarget::Fov(t)
                | ChannelTarget::Roll(t)
                | ChannelTarget::Hotspot(t)
                | ChannelTarget::Falloff(t)
                | ChannelTarget::Property { track: t, .. } => hold(t),
                ChannelTarget::Layered(b) => b.tracks_mut().for_each(hold),
            }
        }
        a
    }
}

impl ChannelTarget {
    /// Writes this channel's value at `frame` into `p` when it drives a part of the local
    /// transform (translation, rotation, scale, whole or per component) and returns `true`;
    /// returns `false` for every other channel, leaving `p` alone. Parts a track has no key
    /// for keep their value. [`Scene::evaluate`] and exporters that resample local transforms
    /// (3DA) both sample through this.
    pub fn apply_to_transform(&self, p: &mut crate::scene::Transform, frame: f64) -> bool {
        self.apply_near(p, frame, None)
    }

    /// [`ChannelTarget::apply_to_transform`] with each track's key search starting at its
    /// cursor (`cursors[k]` for component `k`, or for the one track: [`tcb::KeyCursor`], the
    /// same values).
    fn apply_near(
        &self,
        p: &mut crate::scene::Transform,
        frame: f64,
        cursors: Option<&[tcb::KeyCursor; 3]>,
    ) -> bool {
        let cursor = |k: usize| cursors.map(|c| &c[k]);
        let per_component = |c: &[Option<Track<f64>>; 3], v: &mut DVec3| {
            for (k, t) in c.iter().enumerate() {
                if let Some(x) = t.as_ref().and_then(|t| sample_vector(t, frame, cursor(k))) {
                    v[k] = x;
                }
            }
        };
        match self {
            ChannelTarget::Translation(t) => {
                if let Some(v) = sample_vector(t, frame, cursor(0)) {
                    p.translation = v;
                }
            }
            ChannelTarget::Rotation(r) => {
                if let Some(q) = r.sample_near(frame, cursors) {
                    p.rotation = q;
                }
            }
            ChannelTarget::Scale(t) => {
                if let Some(v) = sample_vector(t, frame, cursor(0)) {
                    p.scale = v;
                }
            }
            ChannelTarget::TranslationXyz(c) => per_component(c, &mut p.translation),
            ChannelTarget::ScaleXyz(c) => per_component(c, &mut p.scale),
            ChannelTarget::Layered(b) => match b.value {
                LayeredValue::Translation => p.translation = b.sample(frame),
                LayeredValue::Scale => p.scale = b.sample(frame),
                LayeredValue::Rotation { .. } => {
                    if let Some(q) = b.sample_rotation(frame) {
                        p.rotation = q;
                    }
                }
                LayeredValue::Property(_) => return false,
            },
            _ => return false,
        }
        true
    }

    /// What [`ChannelTarget::apply_to_transform`] needs prepared to sample this channel at
    /// many frames: a 3DS relative rotation's keys accumulated once, and a key cursor per
    /// track of the local transform (each sample's key search starts where the last one
    /// ended).
    pub fn sampler(&self) -> ChannelSampler<'_> {
        let relative = match self {
            ChannelTarget::Rotation(RotationTrack::Relative(t)) => Some(tcb::Accumulated::new(t)),
            _ => None,
        };
        let one = |c: tcb::KeyCursor| [c, Default::default(), Default::default()];
        let each = |xyz: &[Option<Track<f64>>; 3]| {
            xyz.each_ref()
                .map(|t| t.as_ref().map(tcb::KeyCursor::with_tangents).unwrap_or_default())
        };
        let cursors = match self {
            ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
                one(tcb::KeyCursor::with_tangents(t))
            }
            ChannelTarget::Rotation(RotationTrack::Quat(t)) => one(tcb::KeyCursor::new(t)),
            ChannelTarget::Rotation(RotationTrack::Relative(t)) => one(tcb::KeyCursor::new(t)),
            ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. })
            | ChannelTarget::TranslationXyz(xyz)
            | ChannelTarget::ScaleXyz(xyz) => each(xyz),
            _ => Default::default(),
        };
        ChannelSampler { target: self, relative, cursors }
    }

    /// `true` for a [`ChannelTarget::Property`] that animates one of a node's FBX pivots
    /// (`PreRotation|X`, `PostRotation|…`, `RotationOffset|…`, `RotationPivot|…`,
    /// `ScalingOffset|…`, `ScalingPivot|…`; see [`Scene::evaluate`]): writers that keep a
    /// node's T/R/S curves must bake such a node instead, as they do static pivots.
    pub fn drives_pivots(&self) -> bool {
        self.property_name().is_some_and(|name| pivot_component(name).is_some())
    }

    /// The property's name for a [`ChannelTarget::Property`] or a layered one
    /// ([`LayeredValue::Property`]); `None` for every other channel.
    pub fn property_name(&self) -> Option<&str> {
        match self {
            ChannelTarget::Property { name, .. } => Some(name),
            ChannelTarget::Layered(b) => match &b.value {
                LayeredValue::Property(name) => Some(name),
                _ => None,
            },
            _ => None,
        }
    }

    /// The property's name and value at `frame` for a [`ChannelTarget::Property`] (`None`
    /// when its track has no keys) or a layered one; `None` for every other channel.
    pub fn sample_property(&self, frame: f64) -> Option<(&str, f64)> {
        match self {
            ChannelTarget::Property { name, track } => track.sample(frame).map(|v| (&**name, v)),
            ChannelTarget::Layered(b) => match &b.value {
                LayeredValue::Property(name) => Some((name, b.sample(frame).x)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The track's name as the CLI shows it (`translation`, `rotation`, …).
    pub fn name(&self) -> &'static str {
        match self {
            ChannelTarget::Translation(_) => "translation",
            ChannelTarget::Rotation(_) => "rotation",
            ChannelTarget::Scale(_) => "scale",
            ChannelTarget::Hidden(_) => "hidden",
            ChannelTarget::Morph(_) => "morph",
            ChannelTarget::Fov(_) => "fov",
            ChannelTarget::Roll(_) => "roll",
            ChannelTarget::Color(_) => "color",
            ChannelTarget::Hotspot(_) => "hotspot",
            ChannelTarget::Falloff(_) => "falloff",
            ChannelTarget::TranslationXyz(_) => "translation",
            ChannelTarget::ScaleXyz(_) => "scale",
            ChannelTarget::Property { .. } => "property",
            ChannelTarget::Layered(b) => match b.value {
                LayeredValue::Translation => "layered translation",
                LayeredValue::Rotation { .. } => "layered rotation",
                LayeredValue::Scale => "layered scale",
                LayeredValue::Property(_) => "layered property",
            },
        }
    }

    /// Number of keys in the track: of a per-component track, the most any component has; of
    /// a [`ChannelTarget::Layered`] one, the distinct key frames over all its layers' curves
    /// and weight tracks.
    pub fn key_count(&self) -> usize {
        match self {
            ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
                t.keys.len()
            }
            ChannelTarget::Rotation(r) => r.key_count(),
            ChannelTarget::Hidden(t) => t.keys.len(),
            ChannelTarget::Morph(t) => t.keys.len(),
            ChannelTarget::Fov(t)
            | ChannelTarget::Roll(t)
            | ChannelTarget::Hotspot(t)
            | ChannelTarget::Falloff(t) => t.keys.len(),
            ChannelTarget::TranslationXyz(c) | ChannelTarget::ScaleXyz(c) => {
                c.iter().flatten().map(|t| t.keys.len()).max().unwrap_or(0)
            }
            ChannelTarget::Property { track, .. } => track.keys.len(),
            ChannelTarget::Layered(b) => b.key_frames().len(),
        }
    }
}

/// A channel prepared for sampling at many frames ([`ChannelTarget::sampler`]): the same
/// values as the channel's own methods, bit for bit, without redoing per sample what does not
/// depend on the time (a 3DS relative rotation track's accumulated keys, a TCB track's key
/// tangents) and with each track's key search starting at the segment of its last sample (so
/// sampling frames in order, or near each other, costs no binary search; any order gives the
/// same values).
#[derive(Debug, Clone)]
pub struct ChannelSampler<'a> {
    target: &'a ChannelTarget,
    relative: Option<tcb::Accumulated>,
    /// Per track of the local transform, its key cursor (component `k` of a per-component
    /// channel at `k`, a channel of one track at 0).
    cursors: [tcb::KeyCursor; 3],
}

impl ChannelSampler<'_> {
    /// The channel.
    pub fn target(&self) -> &ChannelTarget {
        self.target
    }

    /// [`ChannelTarget::apply_to_transform`] of the channel.
    pub fn apply_to_transform(&self, p: &mut crate::scene::Transform, frame: f64) -> bool {
        match (self.target, &self.relative) {
            (ChannelTarget::Rotation(RotationTrack::Relative(t)), Some(abs)) => {
                if let Some(q) = tcb::sample_accumulated(t, abs, frame, Some(&self.cursors[0])) {
                    p.rotation = q;
                }
                true
            }
            _ => self.target.apply_near(p, frame, Some(&self.cursors)),
        }
    }
}

/// The scene posed at one time: everything [`Scene::evaluate`] computes.
#[derive(Debug, Clone)]
pub struct Pose {
    /// The frame that was evaluated, in the animation's clock.
    pub frame: f64,
    /// The same time in seconds (`frame ÷ fps`): the clock of geometry caches.
    pub seconds: f64,
    /// Local matrix of every node (parent frame ← node frame).
    pub local: Vec<DMat4>,
    /// World matrix of every node (world ← node frame). Camera and spotlight nodes with a target
    /// are turned to look at it (see [`Scene::evaluate`]).
    pub world: Vec<DMat4>,
    /// Whether every node is hidden at this time.
    pub hidden: Vec<bool>,
    /// The mesh every node shows at this time (morph tracks switch it).
    pub mesh: Vec<Option<usize>>,
    /// Camera field of view in degrees, per camera in `Scene::cameras`.
    pub camera_fov: Vec<f64>,
    /// Camera roll in degrees, per camera.
    pub camera_roll: Vec<f64>,
    /// Light colour (linear RGB 0–1) per light in `Scene::lights`: [`Light::color`], replaced
    /// by a colour track (3DS `COL_TRACK_TAG`) or FBX `Color|X`/`|Y`/`|Z` curves on the light's
    /// node.
    ///
    /// [`Light::color`]: crate::scene::Light::color
    pub light_color: Vec<DVec3>,
    /// Light intensity multiplier per light: [`Light::intensity`](crate::scene::Light), or an
    /// FBX `Intensity` curve ÷ 100 (ufbx `ufbxi_update_light`).
    pub light_intensity: Vec<f64>,
    /// Spot hotspot (inner cone) full angle in degrees per light: 3DS `HOT_TRACK_TAG`, FBX
    /// `InnerAngle` (or the 6.1 `HotSpot`) curves.
    pub light_hotspot: Vec<f64>,
    /// Spot falloff (outer cone) full angle in degrees per light: 3DS `FALL_TRACK_TAG`, FBX
    /// `OuterAngle` (or the 6.1 `Cone angle`/`ConeAngle`) curves.
    pub light_falloff: Vec<f64>,
    /// Morph target weights (0–1) per mesh in `Scene::meshes`, one per
    /// [`MorphTarget`](crate::scene::MorphTarget): the targets' default weights, overridden by
    /// [`morph weight properties`](curve::morph_weight_property) (percent) animated on a node
    /// that shows the mesh.
    pub morph_weights: Vec<Vec<f64>>,
    /// Per node, the world-space matrix that moves the joints of the skinned mesh the node
    /// shows, for that node only, before they skin it ([`Pose::follow_skinned_nodes`]); empty
    /// or `None`: the joints as they are posed.
    pub skin_follow: Vec<Option<DMat4>>,
}

impl Pose {
    /// Pre-multiplies every world matrix by `m`: the whole posed scene, skinned and
    /// blend-shaped meshes included, moves by `m` (e.g. an axis/unit conversion from
    /// [`Scene::axis_unit_conversion`]). Local matrices are unchanged; the
    /// [`Pose::skin_follow`] matrices are re-expressed in the moved world (`m · F · m⁻¹`, or
    /// dropped when `m` is singular).
    pub fn transform_world(&mut self, m: DMat4) {
        for w in &mut self.world {
            *w = m * *w;
        }
        let inverse = (m.determinant() != 0.0).then(|| m.inverse());
        for f in self.skin_follow.iter_mut() {
            *f = f.zip(inverse).map(|(f, inv)| m * f * inv);
        }
    }

    /// Poses the scene from a stored bind pose: every node `bind` lists is placed at its stored
    /// world matrix, every other node under its (re-placed) parent by its own local matrix — what
    /// ufbx does with the pose's matrices as `transform_overrides`, and what a DCC shows after
    /// "go to bind pose". Skinned meshes then show their bind-time shape when the pose lists
    /// their bones. Node ids past the pose's node count are ignored.
    pub fn apply_bind_pose(&mut self, scene: &Scene, bind: &crate::scene::BindPose) {
        for id in scene.depth_first() {
            if id >= self.world.len() {
                continue;
            }
            self.world[id] = match (bind.matrix(id), scene.nodes[id].parent) {
                (Some(m), _) => m,
                (None, Some(p)) => self.world[p] * self.local[id],
                (None, None) => self.local[id],
            };
        }
    }

    /// Makes every skinned mesh follow its own node's movement since binding, as Maya and the
    /// FBX SDK show it (ufbx's tests call it `transform_skin`): for each node showing a skinned
    /// mesh, with `bind` the node's world matrix in the first of `bind_poses` that lists it —
    /// or, for a node none lists (an instance of the mesh beside the one Maya's `BindPose`
    /// names), the mesh's world matrix at bind as its skin stores it
    /// ([`Skin::mesh_bind`](crate::scene::Skin::mesh_bind), ufbx's cluster
    /// `bind_to_world · mesh_node_to_bone`) — the skin's joints are moved by `F = mesh_to_world · bind⁻¹` for that node
    /// ([`Pose::skin_follow`]), so its skinned positions ([`Pose::world_positions`]) and
    /// normals come out mapped once more by `F` — the same positions as
    /// [`Pose::world_positions_following_node`] for weighted vertices, but for writers that
    /// take a `Pose`. Each node has its own `F`: instances of one skinned mesh under
    /// differently placed nodes, and meshes sharing joints, each follow their own node; the
    /// joints' world matrices, and nodes parented under them, do not move. Returns the skinned
    /// mesh nodes that have no such matrix, or a singular one (left as they were).
    pub fn follow_skinned_nodes(
        &mut self,
        scene: &Scene,
        bind_poses: &[crate::scene::BindPose],
    ) -> Vec<NodeId> {
        let mut missing = Vec::new();
        for node in 0..scene.nodes.len() {
            let Some(skin) = self
                .mesh
                .get(node)
                .copied()
                .flatten()
                .and_then(|m| scene.meshes.get(m))
                .and_then(|m| m.skin)
            else {
                continue;
            };
            let Some(stored) = scene.skins.get(skin) else { continue };
            let listed = bind_poses.iter().find_map(|p| p.matrix(node));
            let Some(bind) = listed.or(stored.mesh_bind).filter(|b| b.determinant() != 0.0) else {
                missing.push(node);
                continue;
            };
            let m = self.mesh_to_world(scene, node) * bind.inverse();
            self.skin_follow.resize(scene.nodes.len(), None);
            self.skin_follow[node] = Some(m);
        }
        missing
    }

    /// The positions mesh `mesh`'s geometry cache gives at [`Pose::seconds`], in the mesh's
    /// frame; `None` when it has no cache or the cache lacks data for every vertex
    /// ([`GeometryCache::sample`](crate::scene::GeometryCache::sample)).
    pub fn cached_positions(&self, scene: &Scene, mesh: usize) -> Option<Vec<DVec3>> {
        let m = scene.meshes.get(mesh)?;
        let cache = scene.geometry_caches.get(m.geometry_cache?)?;
        cache.sample(self.seconds, m.positions.len())
    }

    /// The matrix that takes node `node`'s mesh positions to world space:
    /// `world[node] · geometry_transform`.
    pub fn mesh_to_world(&self, scene: &Scene, node: NodeId) -> DMat4 {
        self.world[node] * scene.nodes[node].geometry_transform()
    }

    /// [`Pose::world_positions`] for a skinned mesh whose node was moved after the skin was
    /// bound, shown as Maya and the FBX SDK show it ("skin follows its node"): the skinned
    /// positions are further mapped by `mesh_to_world · bind⁻¹`, where `bind` is the mesh
    /// node's world matrix in the bind pose (FBX `BindPose`), so the node's own movement since
    /// binding applies on top of the bones'. ufbx calls this `transform_skin` in its tests.
    /// Meshes without a skin are returned as by [`Pose::world_positions`].
    pub fn world_positions_following_node(
        &self,
        scene: &Scene,
        node: NodeId,
        bind: DMat4,
    ) -> Vec<DVec3> {
        let positions = self.world_positions(scene, node);
        let skinned =
            self.mesh[node].and_then(|m| scene.meshes.get(m)).is_some_and(|m| m.skin.is_some());
        if !skinned || bind.determinant() == 0.0 {
            return positions;
        }
        let m = self.mesh_to_world(scene, node) * bind.inverse();
        positions.into_iter().map(|p| m.transform_point3(p)).collect()
    }

    /// World-space positions of the mesh node `node` shows at this pose, in the mesh's vertex
    /// order, deformed; empty when the node has no mesh.
    ///
    /// 1. **Blend shapes**: `p = p₀ + Σₖ wₖ · vᵢ · Δₖ` over the mesh's morph targets with their
    ///    weights in [`Pose::morph_weights`] (targets of weight 0 are skipped) and the
    ///    target's per-vertex weight `vᵢ` ([`MorphTarget::vertex_weights`](crate::scene::MorphTarget::vertex_weights), 1 when absent).
    /// 2. **Skinning** (when the mesh has a [`Skin`](crate::scene::Skin)), linear blend as
    ///    ufbx evaluates it: `world = (Σⱼ wⱼ · W(boneⱼ) · inverse_bindⱼ · G) · p` with `G` the
    ///    node's [`geometry_transform`](crate::scene::Node::geometry_transform) (the inverse
    ///    bind matrix maps the mesh *node's* frame into the bone's), the matrix sum
    ///    divided by `Σⱼ wⱼ` when that differs from 1 by more than 1e-6 (weights renormalised);
    ///    a vertex with no positive total weight is placed by [`Pose::mesh_to_world`], as are
    ///    all vertices of a mesh without a skin. Vertices with a dual-quaternion share `d`
    ///    ([`Skin::dq_weights`](crate::scene::Skin::dq_weights)) use `(1 − d)·M_linear + d·M_dq`,
    ///    `M_dq` built as ufbx does: each joint matrix split into scale `s`, rotation `r` (flipped
    ///    to the first joint's hemisphere) and translation `t`; `q₀ = Σ w·r`,
    ///    `qₑ = Σ w·(t/2, 0)·r`, `S = Σ w·s` (divided by the total weight when it is not 1); the
    ///    rotation is `q₀/|q₀|`, the translation `2·vec(qₑ·q₀*)/|q₀|²`, the scale `S`.
    ///
    /// A mesh with neither deformation takes the fast path: one matrix for all vertices.
    ///
    /// A mesh with a [`GeometryCache`](crate::scene::GeometryCache) that has data for all its
    /// vertices at [`Pose::seconds`] shows the cached positions placed by
    /// [`Pose::mesh_to_world`] instead, without blend shapes or skin (ufbx `evaluate_caches`).
    pub fn world_positions(&self, scene: &Scene, node: NodeId) -> Vec<DVec3> {
        let Some(m) = self.mesh[node] else { return Vec::new() };
        let mesh = &scene.meshes[m];
        let to_world = self.mesh_to_world(scene, node);
        if let Some(cached) = self.cached_positions(scene, m) {
            return cached.iter().map(|&p| to_world.transform_point3(p)).collect();
        }
        let weights = self.morph_weights.get(m).map(Vec::as_slice).unwrap_or(&[]);
        let morphing = weights.iter().any(|&w| w != 0.0);
        let skin = mesh.skin.and_then(|s| scene.skins.get(s));
        if !morphing && skin.is_none() {
            return mesh.positions.iter().map(|&p| to_world.transform_point3(p)).collect();
        }
        let mut positions = mesh.positions.clone();
        for (target, &w) in mesh.morph_targets.iter().zip(weights) {
            if w == 0.0 {
                continue;
            }
            if target.inbetweens.is_empty() {
                for (p, d) in positions.iter_mut().zip(target.weighted_deltas(None).iter()) {
                    // A vertex the shape does not move is left alone, whatever the weight (a
                    // NaN weight from a broken file then spoils only the shape's own
                    // vertices, as ufbx, whose shapes list offsets per moved vertex only).
                    if *d != DVec3::ZERO {
                        *p += *d * w;
                    }
                }
                continue;
            }
            let mut levels: Vec<f64> = target.inbetweens.iter().map(|s| s.0).collect();
            levels.push(1.0);
            for (k, e) in inbetween_weights(w, &levels).into_iter().enumerate() {
                if e == 0.0 {
                    continue;
                }
                let shape = (k < target.inbetweens.len()).then_some(k);
                for (p, d) in positions.iter_mut().zip(target.weighted_deltas(shape).iter()) {
                    if *d != DVec3::ZERO {
                        *p += *d * e;
                    }
                }
            }
        }
        let Some(skin) = skin else {
            return positions.iter().map(|&p| to_world.transform_point3(p)).collect();
        };
        let eval = SkinMatrices::new(self, scene, node, skin, to_world);
        positions.iter().enumerate().map(|(i, &p)| eval.at(i).transform_point3(p)).collect()
    }

    /// World-space unit normals of the mesh node `node` shows at this pose, one per polygon
    /// corner (indexed like [`Mesh::corner_vertices`](crate::scene::Mesh::corner_vertices)),
    /// deformed with the same weights as [`Pose::world_positions`]; `None` when the node has
    /// no mesh or the mesh stores no normals.
    ///
    /// Each corner's stored normal, plus `Σₖ wₖ · vᵢ · Δnₖ` of the morph targets that carry
    /// normal deltas ([`MorphTarget::normal_deltas`](crate::scene::MorphTarget::normal_deltas);
    /// in-between shapes carry none and add nothing), is carried by the inverse transpose of
    /// its vertex's skinning matrix — the matrix [`Pose::world_positions`] applies to that
    /// vertex (linear or dual-quaternion blend, renormalised weights), which is how ufbx
    /// deforms normals with `ufbx_get_skin_vertex_matrix`, [`Pose::mesh_to_world`] for
    /// vertices without weights — or, for meshes without a skin and geometry-cached meshes, of
    /// ufbx's "compatible" normal matrix: the node's world matrix times only the rotation of
    /// its geometric transform (`ufbx_get_compatible_matrix_for_normals`; a geometric scale
    /// does not bend normals); then normalised (a zero result stays zero). Every posed output
    /// takes its normals from here: `sample`, `render`, `view`, the posed OBJ and the Python
    /// `Pose.world_normals`.
    pub fn world_corner_normals(&self, scene: &Scene, node: NodeId) -> Option<Vec<DVec3>> {
        let m = self.mesh[node]?;
        let mesh = &scene.meshes[m];
        let normals = mesh.normals.as_ref()?;
        let to_world = self.mesh_to_world(scene, node);
        let cached = self.cached_positions(scene, m).is_some();
        let weights = self.morph_weights.get(m).map(Vec::as_slice).unwrap_or(&[]);
        let mut deltas = vec![DVec3::ZERO; if cached { 0 } else { mesh.positions.len() }];
        for (target, &w) in mesh.morph_targets.iter().zip(weights) {
            let Some(d) = target.normal_deltas.as_ref().filter(|_| w != 0.0 && !cached) else {
                continue;
            };
            for (i, (acc, d)) in deltas.iter_mut().zip(d).enumerate() {
                let vw = target.vertex_weights.get(i).copied().unwrap_or(1.0);
                *acc += d.as_dvec3() * (w * vw);
            }
        }
        let skin = mesh.skin.and_then(|s| scene.skins.get(s)).filter(|_| !cached);
        let eval = skin.map(|skin| SkinMatrices::new(self, scene, node, skin, to_world));
        // Rigid: ufbx's "compatible" normal matrix (`ufbx_get_compatible_matrix_for_normals`):
        // the node's world matrix times only the *rotation* of its geometric transform, so a
        // geometric scale or squish does not bend the normals (the references of ufbx's
        // `synthetic_geometric_squish`/`_transform` tests expect it; the OBJ writer used it).
        let (_, geometric_rotation, _) =
            scene.nodes[node].geometry_transform().to_scale_rotation_translation();
        let rigid = crate::scene::geometry::normal_matrix(
            self.world[node] * DMat4::from_quat(geometric_rotation),
        );
        let mut out = vec![DVec3::ZERO; mesh.corner_vertices.len()];
        for p in 0..mesh.polygon_count() {
            for c in mesh.polygon_corners(p) {
                let v = mesh.corner_vertices[c];
                let Some(n) = normals.get(v, c, p) else { continue };
                let n = n.as_dvec3() + deltas.get(v as usize).copied().unwrap_or(DVec3::ZERO);
                let nm = match &eval {
                    Some(e) => crate::scene::geometry::normal_matrix(e.at(v as usize)),
                    None => rigid,
                };
                out[c] = (nm * n).normalize_or_zero();
            }
        }
        Some(out)
    }
}

/// The per-vertex skinning matrices of one skinned mesh node at a pose
/// ([`Pose::world_positions`] documents the blend).
struct SkinMatrices<'s> {
    skin: &'s crate::scene::Skin,
    /// `W(bone) · inverse_bind · G` per joint (`None`: the joint's node is missing).
    joint_matrices: Vec<Option<DMat4>>,
    /// Scale, rotation and translation of each joint matrix (dual-quaternion skins only).
    joint_srt: Vec<Option<(DVec3, DQuat, DVec3)>>,
    /// The matrix of vertices without a positive total weight: `mesh_to_world`.
    fallback: DMat4,
}

impl<'s> SkinMatrices<'s> {
    fn new(
        pose: &Pose,
        scene: &Scene,
        node: NodeId,
        skin: &'s crate::scene::Skin,
        fallback: DMat4,
    ) -> Self {
        let geometry = scene.nodes[node].geometry_transform();
        let follow = pose.skin_follow.get(node).copied().flatten();
        let joint_matrices: Vec<Option<DMat4>> = skin
            .joints
            .iter()
            .map(|j| {
                let w = *pose.world.get(j.node)?;
                let w = follow.map_or(w, |f| f * w);
                Some(w * j.inverse_bind * geometry)
            })
            .collect();
        // Rotation, translation and scale of every joint matrix, for dual quaternion skinning.
        let joint_srt: Vec<Option<(DVec3, DQuat, DVec3)>> = if skin.dq_weights.is_empty() {
            Vec::new()
        } else {
            joint_matrices.iter().map(|m| m.map(|m| m.to_scale_rotation_translation())).collect()
        };
        SkinMatrices { skin, joint_matrices, joint_srt, fallback }
    }

    /// The skinning matrix of vertex `i`.
    fn at(&self, i: usize) -> DMat4 {
        let (skin, joint_matrices, joint_srt) = (self.skin, &self.joint_matrices, &self.joint_srt);
        let influences = skin.influences.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let dq = skin.dq_weights.get(i).map_or(0.0, |&d| f64::from(d));
        let mut sum = DMat4::ZERO;
        let mut total = 0.0f64;
        let (mut q0, mut qe, mut qs) = (
            DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            DVec3::ZERO,
        );
        let mut first: Option<DQuat> = None;
        for &(j, w) in influences {
            let Some(Some(mj)) = joint_matrices.get(j as usize) else { continue };
            let w = f64::from(w);
            total += w;
            if dq > 0.0 {
                if let Some(Some((s, r, t))) = joint_srt.get(j as usize) {
                    let f = *first.get_or_insert(*r);
                    let r = if f.dot(*r) < 0.0 { -*r } else { *r };
                    let e = DQuat::from_xyzw(0.5 * t.x, 0.5 * t.y, 0.5 * t.z, 0.0) * r;
                    q0 += r * w;
                    qe += e * w;
                    qs += *s * w;
                }
            }
            if dq < 1.0 {
                sum += *mj * ((1.0 - dq) * w);
            }
        }
        if total.is_nan() || total <= 0.0 {
            return self.fallback;
        }
        if (total - 1.0).abs() > 1e-6 {
            let r = 1.0 / total;
            sum *= r;
            q0 *= r;
            qe *= r;
            qs *= r;
        }
        if dq > 0.0 {
            let len2 = q0.length_squared();
            let t = (qe * q0.conjugate()).xyz() * (2.0 / len2);
            let m = DMat4::from_scale_rotation_translation(qs, q0 * (1.0 / len2.sqrt()), t);
            sum = if dq < 1.0 { sum + m * dq } else { m };
        }
        sum
    }
}

/// How much of each shape of a blend-shape channel with in-betweens applies at channel
/// weight `w`: `levels` are the weights at which the shapes apply in full, sorted. As ufbx
/// (`ufbxi_update_blend_channel`): the shapes — with an implicit empty shape at weight 0 — on
/// the side of 0 that `w` lies on are walked outwards until one lies beyond `w`; `w` then
/// blends linearly between that shape and the one before it (`1 − t` and `t`,
/// `t = (w − before) / (after − before)`; beyond the last shape `t` exceeds 1 and the blend
/// extrapolates). All other shapes get 0.
pub fn inbetween_weights(w: f64, levels: &[f64]) -> Vec<f64> {
    let n = levels.len();
    let mut eff = vec![0.0; n];
    // `None` stands for the empty shape at weight 0.
    let level = |k: Option<usize>| k.map_or(0.0, |k| levels[k]);
    let last_negative = levels.iter().rposition(|&l| l < 0.0);
    let (mut prev, mut next): (Option<usize>, Option<usize>) = (None, None);
    if w > 0.0 {
        let start = last_negative.map_or(0, |k| k + 1);
        if let Some(k) = last_negative {
            prev = Some(k);
        }
        for (i, &l) in levels.iter().enumerate().skip(start) {
            prev = next;
            next = Some(i);
            if l > w {
                break;
            }
        }
    } else {
        let first_positive = last_negative.map_or(0, |k| k + 1);
        if first_positive < n {
            prev = Some(first_positive);
        }
        if let Some(k) = last_negative {
            for i in (0..=k).rev() {
                prev = next;
                next = Some(i);
                if levels[i] < w {
                    break;
                }
            }
        }
    }
    let delta = level(next) - level(prev);
    if delta != 0.0 {
        let t = (w - level(prev)) / delta;
        if let Some(p) = prev {
            eff[p] = 1.0 - t;
        }
        if let Some(q) = next {
            eff[q] = t;
        }
    }
    eff
}

/// Samples a vector (or scalar) track at `frame`; `None` when it has no key: outside the keys
/// by [`curve`]'s extrapolation rules, inside them by [`tcb`]'s spline rules. (It lives here,
/// above both, so that `curve` reads `tcb` and `tcb` reads neither.)
/// The key search starts at `cursor` when there is one ([`tcb::KeyCursor`]: the same value).
fn sample_vector<V: tcb::Vector>(
    track: &Track<V>,
    frame: f64,
    cursor: Option<&tcb::KeyCursor>,
) -> Option<V> {
    track.keys.first()?;
    if let Some(v) = curve::extrapolate(track, frame, cursor) {
        return Some(v);
    }
    tcb::sample_inside(track, frame, cursor)
}

impl Track<DVec3> {
    /// The value at `frame` (see [`tcb`] for the spline rules).
    pub fn sample(&self, frame: f64) -> Option<DVec3> {
        sample_vector(self, frame, None)
    }
}

impl Track<f64> {
    /// The value at `frame`.
    pub fn sample(&self, frame: f64) -> Option<f64> {
        sample_vector(self, frame, None)
    }
}

impl<T: Copy> Track<T>
where
    T: PartialEq,
{
    /// The held value at `frame`: the last key at or before it (the first key before the
    /// first). For step tracks: hide, morph.
    pub fn sample_step(&self, frame: f64) -> Option<T> {
        let first = self.keys.first()?;
        let mut v = first.value;
        for k in &self.keys {
            if k.frame <= frame {
                v = k.value;
            } else {
                break;
            }
        }
        Some(v)
    }
}

impl RotationTrack {
    /// The orientation at `frame`.
    pub fn sample(&self, frame: f64) -> Option<DQuat> {
        self.sample_near(frame, None)
    }

    /// [`RotationTrack::sample`] with each track's key search starting at its cursor
    /// (`cursors[k]` for Euler component `k`, `cursors[0]` for a quaternion or relative track).
    fn sample_near(&self, frame: f64, cursors: Option<&[tcb::KeyCursor; 3]>) -> Option<DQuat> {
        let cursor = |k: usize| cursors.map(|c| &c[k]);
        match self {
            RotationTrack::Quat(t) => tcb::sample_quat(t, frame, cursor(0)),
            RotationTrack::Relative(t) => tcb::sample_relative(t, frame),
            RotationTrack::Euler { order, rest, xyz } => {
                let mut a = *rest;
                for (k, t) in xyz.iter().enumerate() {
                    if let Some(v) = t.as_ref().and_then(|t| sample_vector(t, frame, cursor(k))) {
                        a[k] = v;
                    }
                }
                Some(order.to_quat(a))
            }
        }
    }
}

/// The pivot property and component (0–2) a [`ChannelTarget::Property`] name animates
/// (`PreRotation|Y` → (`PreRotation`, 1)), see [`Scene::evaluate`].
fn pivot_component(name: &str) -> Option<(&str, usize)> {
    let (part, axis) = name.split_once('|')?;
    let c = ["X", "Y", "Z"].iter().position(|&a| a == axis)?;
    matches!(
        part,
        "PreRotation"
            | "PostRotation"
            | "RotationOffset"
            | "RotationPivot"
            | "ScalingOffset"
            | "ScalingPivot"
    )
    .then_some((part, c))
}

/// Sets component `c` of the FBX pivot property `part` (as [`pivot_component`] names it) in
/// `pv` to `v`; `true` when the part is a pre- or post-rotation (the rotation must be rebuilt).
fn set_pivot_component(pv: &mut crate::scene::Pivots, part: &str, c: usize, v: f64) -> bool {
    match part {
        "PreRotation" => pv.pre_rotation_degrees[c] = v,
        "PostRotation" => pv.post_rotation_degrees[c] = v,
        "RotationOffset" => pv.rotation_offset[c] = v,
        "RotationPivot" => pv.rotation_pivot[c] = v,
        "ScalingOffset" => pv.scaling_offset[c] = v,
        _ => pv.scaling_pivot[c] = v,
    }
    matches!(part, "PreRotation" | "PostRotation")
}

/// The channels of animation `animation` (index into [`Scene::animations`]; `None` or out of
/// range: none) per scene node, in animation order — what the writers sample a node from.
pub fn channels_by_node(scene: &Scene, animation: Option<usize>) -> Vec<Vec<&ChannelTarget>> {
    let mut out = vec![Vec::new(); scene.nodes.len()];
    let channels = animation.and_then(|a| scene.animations.get(a)).map_or(&[][..], |a| &a.channels);
    for ch in channels {
        if let Some(list) = out.get_mut(ch.node) {
            list.push(&ch.target);
        }
    }
    out
}

/// Node `node`'s translation, rotation (unit) and scale at `frame` as the evaluator builds them
/// from `channels` (its channels, [`channels_by_node`]) over its rest transform; `None` when a
/// part is not finite (a writer decomposes the matrix instead, which cleans it).
pub fn node_parts(
    scene: &Scene,
    node: NodeId,
    channels: &[&ChannelTarget],
    frame: f64,
) -> Option<(DVec3, DQuat, DVec3)> {
    let mut p = scene.nodes[node].transform;
    for c in channels {
        c.apply_to_transform(&mut p, frame);
    }
    let r = p.rotation.normalize();
    (p.translation.is_finite() && r.is_finite() && p.scale.is_finite()).then_some((
        p.translation,
        r,
        p.scale,
    ))
}

impl Scene {
    /// Poses the scene: samples animation `animation` (index into [`Scene::animations`];
    /// `None` or an index past the end poses the rest transforms) at `time`, then composes every
    /// node's world matrix from the roots down.
    ///
    /// A node's local matrix is `T · R · S` from its channels, falling back to its rest
    /// [`Node::transform`](crate::scene::Node::transform) for parts without a track. A camera
    /// with a target (and a spotlight with one) is turned so its −Z axis points at the target's
    /// world position, +Y towards the world up (+Z for Z-up sources, as 3D Studio's cameras) and
    /// turned by its roll about the view axis; a camera exactly on its target keeps the unturned
    /// orientation.
    ///
    /// FBX pivot properties animate too, as ufbx evaluates them: [`ChannelTarget::Property`]
    /// channels named `PreRotation|X` (`|Y`, `|Z`, and the same for `PostRotation`,
    /// `RotationOffset`, `RotationPivot`, `ScalingOffset`, `ScalingPivot`) replace that
    /// component of the node's [`Pivots`](crate::scene::Pivots) (pre/post rotations as XYZ
    /// Euler degrees, the others in scene units) before its local matrix is made.
    ///
    /// Light colour, intensity and cone ([`Pose::light_color`] …) follow their 3DS tracks and
    /// the FBX light properties ufbx reads (`Color`, `Intensity`, `InnerAngle`/`HotSpot`,
    /// `OuterAngle`/`Cone angle`); an FBX `Roll` curve on a camera node sets
    /// [`Pose::camera_roll`].
    ///
    /// A [`ChannelTarget::Layered`] channel blends its layers at exactly this time ([`layers`])
    /// and then acts as the plain channel of its value (translation, rotation, scale, or the
    /// named property as above).
    pub fn evaluate(&self, animation: Option<usize>, time: Time) -> Pose {
        self.evaluate_animation(animation.and_then(|i| self.animations.get(i)), time)
    }

    /// [`Scene::evaluate`] with the animation given itself rather than by index (`None`: the
    /// rest transforms): an animation derived from one of the scene's, such as
    /// [`Animation::without_extrapolation`], poses the scene without being stored in it.
    pub fn evaluate_animation(&self, anim: Option<&Animation>, time: Time) -> Pose {
        let fps = anim.map(|a| a.fps).unwrap_or(THREE_DS_FPS);
        let frame = time.to_frame(fps);
        let mut parts: Vec<_> = self.nodes.iter().map(|node| node.transform).collect();
        let mut a = Animated::rest(self);
        if let Some(anim) = anim {
            for ch in &anim.channels {
                let Some(p) = parts.get_mut(ch.node) else { continue };
                if ch.target.apply_to_transform(p, frame) {
                    continue;
                }
                a.apply(self, ch, frame);
            }
        }
        let local = self.local_matrices(&parts, std::mem::take(&mut a.pivots));
        let world = self.aimed_world(&local, &a.camera_roll);
        a.into_pose(frame, frame / fps, local, world)
    }

    /// [`Scene::evaluate_animation`] without the matrices: what the channels set besides the
    /// nodes' transforms (hidden states, shown meshes, camera field of view and roll, light
    /// colour, intensity and cone, morph weights) at `time`, bit for bit the values
    /// `evaluate_animation` returns; [`Pose::local`] and [`Pose::world`] are empty, and the
    /// channels of transform parts are not sampled. For a writer that samples a camera's,
    /// light's or mesh's parameters at many times (a whole pose costs every node's matrices).
    pub fn evaluate_values(&self, anim: Option<&Animation>, time: Time) -> Pose {
        let fps = anim.map(|a| a.fps).unwrap_or(THREE_DS_FPS);
        let frame = time.to_frame(fps);
        let mut a = Animated::rest(self);
        for ch in anim.map_or(&[][..], |a| &a.channels) {
            let part = match &ch.target {
                ChannelTarget::Translation(_)
                | ChannelTarget::Rotation(_)
                | ChannelTarget::Scale(_)
                | ChannelTarget::TranslationXyz(_)
                | ChannelTarget::ScaleXyz(_) => true,
                ChannelTarget::Layered(b) => b.transform_part().is_some(),
                _ => false,
            };
            if !part && ch.node < self.nodes.len() {
                a.apply(self, ch, frame);
            }
        }
        a.into_pose(frame, frame / fps, Vec::new(), Vec::new())
    }
}

impl Animated {
    /// The pose of these values with matrices `local` and `world`.
    fn into_pose(self, frame: f64, seconds: f64, local: Vec<DMat4>, world: Vec<DMat4>) -> Pose {
        Pose {
            frame,
            seconds,
            local,
            world,
            hidden: self.hidden,
            mesh: self.mesh,
            camera_fov: self.camera_fov,
            camera_roll: self.camera_roll,
            light_color: self.light_color,
            light_intensity: self.light_intensity,
            light_hotspot: self.light_hotspot,
            light_falloff: self.light_falloff,
            morph_weights: self.morph_weights,
            skin_follow: Vec::new(),
        }
    }
}

impl Scene {
    /// Local matrices of the nodes from their transform parts at this time, through their
    /// pivots; a node with animated pivot properties (`pivots`: node, pivots at this time,
    /// rotations changed) uses those.
    fn local_matrices(
        &self,
        parts: &[crate::scene::Transform],
        pivots: Vec<(NodeId, crate::scene::Pivots, bool)>,
    ) -> Vec<DMat4> {
        let mut local: Vec<DMat4> = parts
            .iter()
            .zip(&self.nodes)
            .map(|(p, node)| match &node.pivots {
                Some(pv) => pv.matrix(p.translation, p.rotation, p.scale),
                None => p.matrix(),
            })
            .collect();
        for (node, mut pv, rotated) in pivots {
            if rotated {
                let rad = std::f64::consts::PI / 180.0;
                pv.pre_rotation = EulerOrder::Xyz.to_quat(pv.pre_rotation_degrees * rad);
                pv.post_rotation = EulerOrder::Xyz.to_quat(pv.post_rotation_degrees * rad);
            }
            let p = &parts[node];
            local[node] = pv.matrix(p.translation, p.rotation, p.scale);
        }
        local
    }

    /// World matrices from `local`, cameras and lights with a target node aimed at it (about
    /// the scene's up axis, rolled by `camera_roll` or the light's roll).
    fn aimed_world(&self, local: &[DMat4], camera_roll: &[f64]) -> Vec<DMat4> {
        let n = self.nodes.len();
        let mut world = self.compose_world(local);
        let up = match self.meta.axes.up {
            crate::scene::Axis::PosZ | crate::scene::Axis::NegZ => DVec3::Z,
            crate::scene::Axis::PosX | crate::scene::Axis::NegX => DVec3::X,
            _ => DVec3::Y,
        };
        for (id, node) in self.nodes.iter().enumerate() {
            let (target, roll) = match node.kind {
                NodeKind::Camera(c) => (self.cameras[c].target, camera_roll[c]),
                NodeKind::Light(l) => (self.lights[l].target, self.lights[l].roll_degrees),
                _ => continue,
            };
            let Some(t) = target.filter(|&t| t < n) else { continue };
            world[id] = aim(world[id], world[t].w_axis.truncate(), up, roll);
        }
        world
    }
}

/// What an animation's channels set at one time besides the nodes' transform parts, each
/// starting from the scene's own value ([`Scene::evaluate_animation`]).
struct Animated {
    hidden: Vec<bool>,
    mesh: Vec<Option<usize>>,
    camera_fov: Vec<f64>,
    camera_roll: Vec<f64>,
    light_color: Vec<DVec3>,
    light_intensity: Vec<f64>,
    light_hotspot: Vec<f64>,
    light_falloff: Vec<f64>,
    morph_weights: Vec<Vec<f64>>,
    /// Nodes with animated pivot properties: (node, pivots at this time, rotations changed).
    pivots: Vec<(NodeId, crate::scene::Pivots, bool)>,
}

impl Animated {
    /// The scene's own values: nothing animated yet.
    fn rest(scene: &Scene) -> Self {
        Animated {
            hidden: scene.nodes.iter().map(|node| node.hidden).collect(),
            mesh: scene.nodes.iter().map(|node| node.mesh).collect(),
            camera_fov: scene.cameras.iter().map(|c| c.fov_degrees).collect(),
            camera_roll: scene.cameras.iter().map(|c| c.roll_degrees).collect(),
            light_color: scene.lights.iter().map(|l| l.color.as_dvec3()).collect(),
            light_intensity: scene.lights.iter().map(|l| l.intensity).collect(),
            light_hotspot: scene.lights.iter().map(|l| l.hotspot_degrees).collect(),
            light_falloff: scene.lights.iter().map(|l| l.falloff_degrees).collect(),
            morph_weights: scene
                .meshes
                .iter()
                .map(|m| m.morph_targets.iter().map(|t| t.default_weight).collect())
                .collect(),
            pivots: Vec::new(),
        }
    }

    /// Channel `ch` (not a transform part's, and of a node of the scene) at `frame`: one
    /// match arm per target.
    fn apply(&mut self, scene: &Scene, ch: &Channel, frame: f64) {
        match &ch.target {
            ChannelTarget::Hidden(t) => {
                if let Some(h) = t.sample_step(frame) {
                    self.hidden[ch.node] = h;
                }
            }
            ChannelTarget::Morph(t) => {
                if let Some(m) = t.sample_step(frame) {
                    if m < scene.meshes.len() {
                        self.mesh[ch.node] = Some(m);
                    }
                }
            }
            ChannelTarget::Fov(t) => {
                if let (NodeKind::Camera(c), Some(v)) =
                    (&scene.nodes[ch.node].kind, t.sample(frame))
                {
                    self.camera_fov[*c] = v;
                }
            }
            ChannelTarget::Roll(t) => {
                if let (NodeKind::Camera(c), Some(v)) =
                    (&scene.nodes[ch.node].kind, t.sample(frame))
                {
                    self.camera_roll[*c] = v;
                }
            }
            ChannelTarget::Color(t) => {
                if let (NodeKind::Light(l), Some(v)) = (&scene.nodes[ch.node].kind, t.sample(frame))
                {
                    self.light_color[*l] = v;
                }
            }
            ChannelTarget::Hotspot(t) | ChannelTarget::Falloff(t) => {
                if let (NodeKind::Light(l), Some(v)) = (&scene.nodes[ch.node].kind, t.sample(frame))
                {
                    match ch.target {
                        ChannelTarget::Hotspot(_) => self.light_hotspot[*l] = v,
                        _ => self.light_falloff[*l] = v,
                    }
                }
            }
            ChannelTarget::Property { .. } | ChannelTarget::Layered(_) => {
                let Some((name, v)) = ch.target.sample_property(frame) else { return };
                self.apply_property(scene, ch.node, name, v);
            }
            ChannelTarget::Translation(_)
            | ChannelTarget::Rotation(_)
            | ChannelTarget::Scale(_)
            | ChannelTarget::TranslationXyz(_)
            | ChannelTarget::ScaleXyz(_) => {}
        }
    }

    /// Named property `name` of node `node` at value `v`: light and camera properties (ufbx's
    /// names), pivot components, `Visibility`, morph target weights.
    fn apply_property(&mut self, scene: &Scene, node: NodeId, name: &str, v: f64) {
        if let NodeKind::Light(l) = scene.nodes[node].kind {
            // ufbx `ufbxi_update_light`'s property names.
            match name {
                "Color|X" => self.light_color[l].x = v,
                "Color|Y" => self.light_color[l].y = v,
                "Color|Z" => self.light_color[l].z = v,
                "Intensity" => self.light_intensity[l] = v / 100.0,
                "InnerAngle" | "HotSpot" => self.light_hotspot[l] = v,
                "OuterAngle" | "Cone angle" | "ConeAngle" => self.light_falloff[l] = v,
                _ => {}
            }
        }
        if let (NodeKind::Camera(c), "Roll") = (&scene.nodes[node].kind, name) {
            self.camera_roll[*c] = v;
        }
        if let Some((part, c)) = pivot_component(name) {
            let i = match self.pivots.iter().position(|o| o.0 == node) {
                Some(i) => i,
                None => {
                    let pv = scene.nodes[node].pivots.as_deref().copied();
                    self.pivots.push((node, pv.unwrap_or_default(), false));
                    self.pivots.len() - 1
                }
            };
            let (_, pv, rotated) = &mut self.pivots[i];
            *rotated |= set_pivot_component(pv, part, c, v);
        } else if name == "Visibility" {
            self.hidden[node] = visibility_hides(v);
        } else {
            let Some(k) = curve::morph_target_of(name) else { return };
            let Some(m) = scene.nodes[node].mesh else { return };
            if let Some(w) = self.morph_weights.get_mut(m).and_then(|w| w.get_mut(k)) {
                *w = v / 100.0;
            }
        }
    }
}

impl Scene {
    /// World matrices from local ones, parents first, by each node's
    /// [`InheritType`](crate::scene::InheritType), as ufbx `ufbxi_update_node` composes them.
    ///
    /// Every node keeps, besides its world matrix `W`, an *unscaled* world matrix `U` (its
    /// world matrix without its own scale) and an *inherited scale* `s`. With the local matrix
    /// split into translation `t`, rotation `r` and scale `S`:
    ///
    /// - `RSrs` (the usual case; roots always): `W = W_parent · local`,
    ///   `U = W_parent · T(t)·R(r)`, `s = S`.
    /// - `RrSs` and `Rrs`: `S' = S ∘ s_scale-source`, `t' = t ∘ s_parent` (component-wise), then
    ///   `W = U_parent · T(t')·R(r)·S(S')`, `U = U_parent · T(t')·R(r)`, `s = S'` — the parent's
    ///   rotation and placement apply, its scale only component-wise (no shear). The scale
    ///   source of an `RrSs` node is its parent; of an `Rrs` node its parent's scale source, so
    ///   an `Rrs` node ignores the scale of its immediate parent (Maya's segment scale
    ///   compensation) but still inherits what that parent inherited from further up. A node
    ///   without a scale source uses 1.
    pub fn compose_world(&self, local: &[DMat4]) -> Vec<DMat4> {
        use crate::scene::InheritType;
        let n = self.nodes.len();
        let mut world = vec![DMat4::IDENTITY; n];
        let mut unscaled = vec![DMat4::IDENTITY; n];
        let mut inherit_scale = vec![DVec3::ONE; n];
        let mut scale_source: Vec<Option<NodeId>> = vec![None; n];
        for id in self.depth_first() {
            let (s, r, t) = local[id].to_scale_rotation_translation();
            let parent = self.nodes[id].parent.filter(|&p| p < n);
            let mode = if parent.is_some() { self.nodes[id].inherit } else { InheritType::RSrs };
            match (parent, mode) {
                (None, _) => {
                    world[id] = local[id];
                    unscaled[id] = DMat4::from_rotation_translation(r, t);
                    inherit_scale[id] = s;
                }
                (Some(p), InheritType::RSrs) => {
                    world[id] = world[p] * local[id];
                    unscaled[id] = world[p] * DMat4::from_rotation_translation(r, t);
                    inherit_scale[id] = s;
                }
                (Some(p), _) => {
                    scale_source[id] =
                        if mode == InheritType::RrSs { Some(p) } else { scale_source[p] };
                    let ps = scale_source[id].map_or(DVec3::ONE, |q| inherit_scale[q]);
                    let s2 = s * ps;
                    let t2 = t * inherit_scale[p];
                    world[id] = unscaled[p] * DMat4::from_scale_rotation_translation(s2, r, t2);
                    unscaled[id] = unscaled[p] * DMat4::from_rotation_translation(r, t2);
                    inherit_scale[id] = s2;
                }
            }
        }
        world
    }
}

/// Turns a camera-like frame at `m`'s origin so −Z looks at `target`, +Y leans to `up`, then
/// rolls it by `roll_degrees` about the view axis (positive: counter-clockwise seen from behind
/// the camera). Keeps `m` when the target is at the origin or straight along `up`.
fn aim(m: DMat4, target: DVec3, up: DVec3, roll_degrees: f64) -> DMat4 {
    let eye = m.w_axis.truncate();
    let dir = target - eye;
    if dir.length_squared() < 1e-24 {
        return m;
    }
    let back = -dir.normalize();
    let mut side = up.cross(back);
    if side.length_squared() < 1e-24 {
        side = DVec3::X.cross(back);
        if side.length_squared() < 1e-24 {
            return m;
        }
    }
    let side = side.normalize();
    let upv = back.cross(side);
    let look =
        DMat4::from_cols(side.extend(0.0), upv.extend(0.0), back.extend(0.0), eye.extend(1.0));
    look * DMat4::from_rotation_z(-roll_degrees.to_radians())
}

/// Whether an FBX `Visibility` value hides its node: ufbx sets `node->visible` to the value
/// truncated to an integer (`ufbxi_f64_to_i64`) being non-zero, so values of magnitude below 1
/// (0, 0.5, −0.9) hide and everything else shows — 1, −2, infinities, and NaN (which ufbx's
/// conversion turns into `INT64_MIN`). Values within [`VISIBILITY_ROUNDING`] below 1 count as
/// 1: a cubic segment between keys of 1 evaluates to 1 − 2⁻⁵³ or so by rounding
/// (`ufbx/maya_slime_7500_*`, `Slime_002:Ctrl_middle` near 0.7667 s), where ufbx's own
/// rounding lands on 1 and shows the node.
pub(crate) fn visibility_hides(v: f64) -> bool {
    v.abs() < 1.0 - VISIBILITY_ROUNDING
}

/// How far below 1 a `Visibility` value may fall by rounding and still show its node
/// ([`visibility_hides`]).
const VISIBILITY_ROUNDING: f64 = 1e-9;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Node, Scene};

    #[test]
    fn samplers_with_key_cursors_can_still_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<ChannelSampler<'static>>();
        shared::<PartialPose<'static>>();
    }

    #[test]
    fn seconds_and_frames_agree_at_thirty_fps() {
        assert_eq!(Time::Seconds(2.0).to_frame(30.0), 60.0);
        assert_eq!(Time::Frame(7.5).to_frame(30.0), 7.5);
    }

    #[test]
    fn child_world_is_parent_world_times_local() {
        let mut s = Scene::default();
        s.nodes.push(Node::new("a", NodeKind::Null));
        s.nodes.push(Node::new("b", NodeKind::Null));
        s.attach(0, None);
        s.attach(1, Some(0));
        s.nodes[0].transform.translation = DVec3::new(10.0, 0.0, 0.0);
        s.nodes[1].transform.translation = DVec3::new(0.0, 5.0, 0.0);
        let pose = s.evaluate(None, Time::Frame(0.0));
        assert_eq!(pose.world[1].w_axis.truncate(), DVec3::new(10.0, 5.0, 0.0));
    }

    /// A one-vertex mesh at (1, 0, 0) on node 2, skinned to bones 0 and 1.
    fn two_bone_scene(weights: Vec<(u32, f32)>) -> Scene {
        use crate::scene::{Mesh, Skin, SkinJoint};
        let mut s = Scene::default();
        for name in ["bone0", "bone1", "mesh"] {
            s.nodes.push(Node::new(name, NodeKind::Null));
        }
        for i in 0..3 {
            s.attach(i, None);
        }
        s.nodes[2].kind = NodeKind::Mesh;
        s.nodes[2].mesh = Some(0);
        s.meshes.push(Mesh { positions: vec![DVec3::X], skin: Some(0), ..Mesh::default() });
        // Bone 1 was bound at (0, 1, 0): its inverse bind moves points back by −Y.
        s.skins.push(Skin {
            joints: vec![
                SkinJoint { node: 0, inverse_bind: DMat4::IDENTITY },
                SkinJoint { node: 1, inverse_bind: DMat4::from_translation(DVec3::NEG_Y) },
            ],
            influences: vec![weights],
            dq_weights: Vec::new(),
            mesh_bind: None,
        });
        s
    }

    #[test]
    fn linear_blend_skinning_of_two_bones() {
        let mut s = two_bone_scene(vec![(0, 0.25), (1, 0.75)]);
        // Bone 0 stays; bone 1 now sits at (0, 1, 0) turned 90° about Z.
        s.nodes[1].transform.translation = DVec3::Y;
        s.nodes[1].transform.rotation = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        let pose = s.evaluate(None, Time::Frame(0.0));
        // Bone 0 keeps (1, 0, 0). Bone 1: (1, 0, 0) − Y = (1, −1, 0), turned: (1, 1, 0), moved
        // up: (1, 2, 0). Blend: 0.25·(1, 0, 0) + 0.75·(1, 2, 0) = (1, 1.5, 0).
        let p = pose.world_positions(&s, 2);
        assert!((p[0] - DVec3::new(1.0, 1.5, 0.0)).length() < 1e-12, "{p:?}");
    }

    #[test]
    fn skin_weights_are_renormalised_and_unweighted_vertices_follow_the_node() {
        let mut s = two_bone_scene(vec![(0, 1.0), (1, 3.0)]);
        s.nodes[1].transform.translation = DVec3::new(0.0, 1.0, 2.0);
        let pose = s.evaluate(None, Time::Frame(0.0));
        // Weights 1 and 3 → ¼ and ¾: bone 1 gives (1, 0, 2); blend (1, 0, 1.5).
        let p = pose.world_positions(&s, 2);
        assert!((p[0] - DVec3::new(1.0, 0.0, 1.5)).length() < 1e-12, "{p:?}");
        let mut s = two_bone_scene(vec![]);
        s.nodes[2].transform.translation = DVec3::new(0.0, 0.0, 5.0);
        let pose = s.evaluate(None, Time::Frame(0.0));
        assert_eq!(pose.world_positions(&s, 2), vec![DVec3::new(1.0, 0.0, 5.0)]);
    }

    #[test]
    fn deform_percent_drives_blend_shapes_before_skinning() {
        use crate::scene::MorphTarget;
        let mut s = two_bone_scene(vec![(0, 1.0)]);
        s.meshes[0].morph_targets.push(MorphTarget {
            name: "up".into(),
            position_deltas: vec![DVec3::new(0.0, 4.0, 0.0)],
            normal_deltas: None,
            default_weight: 0.0,
            inbetweens: Vec::new(),
            vertex_weights: Vec::new(),
        });
        s.nodes[0].transform.translation = DVec3::Z;
        let track = Track::new(vec![
            Key { frame: 0.0, value: 0.0, interpolation: Interpolation::Linear },
            Key { frame: 10.0, value: 100.0, interpolation: Interpolation::Linear },
        ]);
        s.animations.push(Animation {
            name: "a".into(),
            fps: 10.0,
            frame_range: (0.0, 10.0),
            channels: vec![Channel {
                node: 2,
                target: ChannelTarget::Property { name: curve::morph_weight_property(0), track },
            }],
        });
        let pose = s.evaluate(Some(0), Time::Frame(2.5));
        assert_eq!(pose.morph_weights, vec![vec![0.25]]);
        // (1, 0, 0) + 0.25·(0, 4, 0) = (1, 1, 0), then bone 0 moved by +Z.
        assert_eq!(pose.world_positions(&s, 2), vec![DVec3::new(1.0, 1.0, 1.0)]);
    }

    #[test]
    fn an_animated_fbx_visibility_hides_below_one() {
        let mut s = Scene::default();
        s.nodes.push(Node::new("a", NodeKind::Null));
        s.attach(0, None);
        let track = Track::new(vec![
            Key { frame: 0.0, value: 1.0, interpolation: Interpolation::Linear },
            Key { frame: 10.0, value: 0.0, interpolation: Interpolation::Linear },
        ]);
        s.animations.push(Animation {
            name: "a".into(),
            fps: 10.0,
            frame_range: (0.0, 10.0),
            channels: vec![Channel {
                node: 0,
                target: ChannelTarget::Property { name: "Visibility".into(), track },
            }],
        });
        assert!(!s.evaluate(Some(0), Time::Frame(0.0)).hidden[0]);
        assert!(s.evaluate(Some(0), Time::Frame(1.0)).hidden[0]);
    }

    #[test]
    fn animated_pre_rotation_and_rotation_pivot_enter_the_local_matrix() {
        // Seed 003 local matrix T · Roff · Rp · Rpre · R · Rpost⁻¹ · Rp⁻¹ · …, with R = 0 and
        // PreRotation Y going 0 → 90° over frames 0–10 (45° at frame 5) about a rotation pivot
        // animated from x = 0 to x = 2 (1 at frame 5): the node's origin (0, 0, 0) goes to
        // Rp + Rpre · (−Rp) = (1, 0, 0) + (−cos 45°, 0, sin 45°), its X axis to
        // (cos 45°, 0, −sin 45°).
        let mut s = Scene::default();
        s.nodes.push(Node::new("a", NodeKind::Null));
        s.attach(0, None);
        let ramp = |to: f64| {
            Track::new(vec![
                Key { frame: 0.0, value: 0.0, interpolation: Interpolation::Linear },
                Key { frame: 10.0, value: to, interpolation: Interpolation::Linear },
            ])
        };
        let prop = |name: &str, track| Channel {
            node: 0,
            target: ChannelTarget::Property { name: name.into(), track },
        };
        s.animations.push(Animation {
            name: "a".into(),
            fps: 10.0,
            frame_range: (0.0, 10.0),
            channels: vec![prop("PreRotation|Y", ramp(90.0)), prop("RotationPivot|X", ramp(2.0))],
        });
        let w = s.evaluate(Some(0), Time::Frame(5.0)).world[0];
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let origin = w.w_axis.truncate();
        let x = w.x_axis.truncate();
        assert!((origin - DVec3::new(1.0 - h, 0.0, h)).length() < 1e-12, "{origin}");
        assert!((x - DVec3::new(h, 0.0, -h)).length() < 1e-12, "{x}");
        // At rest (no animation) the node stays the identity.
        assert_eq!(s.evaluate(None, Time::Frame(5.0)).world[0], DMat4::IDENTITY);
    }

    #[test]
    fn inherit_modes_compose_scale_as_ufbx() {
        use crate::scene::InheritType;
        // Parent scaled (2, 1, 1) and turned 90° about Z; child one unit along its parent's X
        // with scale (1, 3, 1).
        let mut s = Scene::default();
        s.nodes.push(Node::new("p", NodeKind::Null));
        s.nodes.push(Node::new("c", NodeKind::Null));
        s.attach(0, None);
        s.attach(1, Some(0));
        s.nodes[0].transform.scale = DVec3::new(2.0, 1.0, 1.0);
        s.nodes[0].transform.rotation = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        s.nodes[1].transform.translation = DVec3::X;
        s.nodes[1].transform.scale = DVec3::new(1.0, 3.0, 1.0);
        let near = |a: DMat4, b: DMat4| a.abs_diff_eq(b, 1e-12);
        // RSrs: the plain product; the child's origin at the parent's X axis, scaled: (0, 2, 0).
        let w = s.evaluate(None, Time::Frame(0.0)).world[1];
        assert!(near(
            w,
            s.evaluate(None, Time::Frame(0.0)).world[0] * s.nodes[1].transform.matrix()
        ));
        assert!((w.w_axis.truncate() - DVec3::new(0.0, 2.0, 0.0)).length() < 1e-12);
        // RrSs: same origin, scale (2, 3, 1) component-wise, then the parent's rotation.
        s.nodes[1].inherit = InheritType::RrSs;
        let w = s.evaluate(None, Time::Frame(0.0)).world[1];
        let r = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        assert!(near(
            w,
            DMat4::from_scale_rotation_translation(
                DVec3::new(2.0, 3.0, 1.0),
                r,
                DVec3::new(0.0, 2.0, 0.0)
            )
        ));
        // Rrs: the parent's scale moves the origin but does not scale the child.
        s.nodes[1].inherit = InheritType::Rrs;
        let w = s.evaluate(None, Time::Frame(0.0)).world[1];
        assert!(near(
            w,
            DMat4::from_scale_rotation_translation(
                DVec3::new(1.0, 3.0, 1.0),
                r,
                DVec3::new(0.0, 2.0, 0.0)
            )
        ));
    }

    #[test]
    fn dual_quaternion_skinning_keeps_lengths() {
        let mut s = two_bone_scene(vec![(0, 0.5), (1, 0.5)]);
        s.skins[0].joints[1].inverse_bind = DMat4::IDENTITY;
        s.nodes[1].transform.rotation = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        let pose = s.evaluate(None, Time::Frame(0.0));
        // Linear: the average of (1, 0, 0) and (0, 1, 0).
        assert!((pose.world_positions(&s, 2)[0] - DVec3::new(0.5, 0.5, 0.0)).length() < 1e-12);
        // Dual quaternion: halfway rotation, 45° about Z.
        s.skins[0].dq_weights = vec![1.0];
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((pose.world_positions(&s, 2)[0] - DVec3::new(h, h, 0.0)).length() < 1e-12);
        // Half and half: the mean of both.
        s.skins[0].dq_weights = vec![0.5];
        let mid = (DVec3::new(0.5, 0.5, 0.0) + DVec3::new(h, h, 0.0)) * 0.5;
        assert!((pose.world_positions(&s, 2)[0] - mid).length() < 1e-12);
    }

    #[test]
    fn inbetween_shapes_blend_piecewise_linearly() {
        // Shapes full at 0.5 and 1.0.
        assert_eq!(inbetween_weights(0.25, &[0.5, 1.0]), vec![0.5, 0.0]);
        assert_eq!(inbetween_weights(0.5, &[0.5, 1.0]), vec![1.0, 0.0]);
        assert_eq!(inbetween_weights(0.75, &[0.5, 1.0]), vec![0.5, 0.5]);
        assert_eq!(inbetween_weights(1.0, &[0.5, 1.0]), vec![0.0, 1.0]);
        // Beyond the last shape: extrapolates from the last two.
        assert_eq!(inbetween_weights(1.5, &[0.5, 1.0]), vec![-1.0, 2.0]);
        assert_eq!(inbetween_weights(0.0, &[0.5, 1.0]), vec![0.0, 0.0]);
        // A plain target behaves linearly.
        assert_eq!(inbetween_weights(0.3, &[1.0]), vec![0.3]);
    }

    #[test]
    fn aimed_camera_looks_down_minus_z_at_its_target() {
        let m = DMat4::from_translation(DVec3::new(0.0, -10.0, 0.0));
        let a = aim(m, DVec3::ZERO, DVec3::Z, 0.0);
        // −Z of the camera points from (0,−10,0) towards the origin: +Y in world.
        let view = -a.z_axis.truncate();
        assert!((view - DVec3::Y).length() < 1e-12);
        // +Y of the camera is world up (+Z).
        assert!((a.y_axis.truncate() - DVec3::Z).length() < 1e-12);
    }
}
