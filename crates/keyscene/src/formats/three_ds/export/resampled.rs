//! The resampled pass: any source keyed on every integer 3DS frame (30 fps; frame `f` is source
//! time `f / 30` s, shifted to start at 0), local T·R·S per object node, cameras, lights and
//! their targets as roots keyed in world space.

use glam::{DMat4, DVec3};

use super::super::chunks::{id, KeyChunk, KeyValue};
use super::super::import::{NODE_HIDDEN, NO_PARENT};
use super::cameras_lights::{
    aim_point, aim_point_of, camera_object, horizontal_fov, light_object, roll_degrees,
};
use super::meshes::mirror_fix;
use super::tracks::{keyed, local_against, rotation_keys, TrsSeries};
use super::{f3, Builder, NodeOut, ObjOut, WriteError, WriteOptions, MAX_OBJECT_NAME};
use crate::anim::{ChannelTarget, PartialPose, Pose, Time, THREE_DS_FPS};
use crate::quoting::quoted;
use crate::scene::{LightKind, NodeKind, Scene};

/// The written frames and what is sampled there: the scene fully posed at the first frame
/// (meshes, the scene's sphere, and every value no channel moves), and per written node some
/// channel can move its values at every frame, sampled frame by frame from one
/// [`PartialPose`] (bit for bit what [`Scene::evaluate`] gives, `anim::partial`, "Exactness").
struct Sampling {
    /// Source frames in 3DS frames (30 fps), before the shift.
    frames: Vec<f64>,
    /// Added to a source frame to give the keyframer frame (keyframer frames start at 0).
    shift: f64,
    /// The scene posed at `frames[0]`.
    first: Pose,
    /// Per scene node written as an object node whose local matrix (against its written parent)
    /// can change: its T, R, S at every frame.
    trs: Vec<Option<TrsSeries>>,
    /// Per camera or light node whose world matrix or aim point can change: both at every
    /// frame.
    views: Vec<Option<Vec<(DMat4, DVec3)>>>,
    /// Per camera with FOV channels: its FOV in degrees at every frame.
    fovs: Vec<Option<Vec<f64>>>,
}

impl Sampling {
    /// The keyframer frame of sample `k`.
    fn key_frame(&self, k: usize) -> i32 {
        (self.frames[k] + self.shift) as i32
    }

    /// Position keys of points `vals` (one per frame, or one held at every frame).
    fn pos_track(&self, vals: &[DVec3]) -> Vec<KeyChunk> {
        keyed(vals, |v| KeyValue::Vector(f3(*v)), |k| self.key_frame(k))
    }

    /// A value no channel moves, as samples: one when it is finite (the writers' "never
    /// changes" tests then see one value, as they saw equal values at every frame), else the
    /// value at every frame (a NaN never equals itself, so it was keyed at every frame).
    fn held<T: Clone>(&self, v: T, finite: bool) -> Vec<T> {
        if finite {
            vec![v]
        } else {
            vec![v; self.frames.len()]
        }
    }

    /// Camera or light node `i`'s world matrix and aim point (`target` or 100 units along its
    /// view axis) at every frame.
    fn view(&mut self, i: usize, target: Option<usize>) -> Vec<(DMat4, DVec3)> {
        if let Some(v) = self.views[i].take() {
            return v;
        }
        let (w, a) = (self.first.world[i], aim_point(&self.first, i, target));
        self.held((w, a), w.is_finite() && a.is_finite())
    }

    /// Object node `i`'s local T, R, S against written parent `parent` at every frame.
    fn object_trs(&mut self, i: usize, parent: Option<usize>) -> TrsSeries {
        if let Some(t) = self.trs[i].take() {
            return t;
        }
        let mut one = TrsSeries::default();
        let p = &self.first;
        one.push(local_against(parent.map(|q| p.world[q]), p.world[i], || p.local[i]));
        let finite = one.ts[0].is_finite() && one.rs[0].is_finite() && one.ss[0].is_finite();
        if !finite {
            let n = self.frames.len();
            one.ts = vec![one.ts[0]; n];
            one.rs = vec![one.rs[0]; n];
            one.ss = vec![one.ss[0]; n];
        }
        one
    }
}

/// Whether node `i` is written as an object node (a mesh or dummy), not with a camera or light.
fn is_object(scene: &Scene, i: usize) -> bool {
    !matches!(
        scene.nodes[i].kind,
        NodeKind::Camera(_)
            | NodeKind::CameraTarget { .. }
            | NodeKind::Light(_)
            | NodeKind::LightTarget { .. }
            | NodeKind::Ambient
    )
}

/// The written parent of node `i`: its nearest ancestor written as an object node.
fn object_parent(scene: &Scene, i: usize) -> Option<usize> {
    let mut p = scene.nodes[i].parent;
    while let Some(q) = p {
        if is_object(scene, q) {
            return Some(q);
        }
        p = scene.nodes[q].parent;
    }
    None
}

/// The keyframer nodes the resampled pass writes for the scene's nodes, before meshes are split
/// at 65,535 vertices (each split part is one more): a camera and its target 2, a light 1 (a
/// spotlight, or a directional light written as one, 2 with its target), an ambient light and
/// a camera's or light's own target node 0, any other node 1.
fn node_count(scene: &Scene) -> usize {
    scene
        .nodes
        .iter()
        .map(|n| match n.kind {
            NodeKind::Camera(_) => 2,
            NodeKind::Light(l) => match scene.lights.get(l).map(|l| l.kind) {
                Some(LightKind::Spot | LightKind::Directional) => 2,
                _ => 1,
            },
            NodeKind::CameraTarget { camera: Some(_) }
            | NodeKind::LightTarget { light: Some(_) }
            | NodeKind::Ambient => 0,
            _ => 1,
        })
        .sum()
}

/// A directional light is written this many scene radii from the scene's centre.
const FAR_RADII: f64 = 100.0;
/// Its hotspot cone holds a sphere of this many scene radii about the centre …
const HOTSPOT_RADII: f64 = 1.25;
/// … and its falloff cone one of this many.
const FALLOFF_RADII: f64 = 1.5;

/// The centre and radius (half the diagonal, at least 1) of the box around every mesh
/// vertex of `scene` in `pose`; the origin and 1 without finite vertices.
fn scene_sphere(scene: &Scene, pose: &Pose) -> (DVec3, f64) {
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for k in 0..scene.nodes.len() {
        if pose.mesh[k].is_none() {
            continue;
        }
        for p in pose.world_positions(scene, k).into_iter().filter(|p| p.is_finite()) {
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return (DVec3::ZERO, 1.0);
    }
    ((lo + hi) / 2.0, ((hi - lo).length() / 2.0).max(1.0))
}

/// What the resampled pass could not carry over, counted for the report.
#[derive(Default)]
struct Dropped {
    skinned: usize,
    morphed: usize,
    ambient: usize,
    directional: usize,
}

/// The first and last integer 3DS frame covering `anim`'s range in seconds (0, 0 without an
/// animation or with a range that is not finite).
fn frame_span(anim: Option<&crate::anim::Animation>) -> (f64, f64) {
    let Some(a) = anim else { return (0.0, 0.0) };
    let fps = if a.fps.is_finite() && a.fps > 0.0 { a.fps } else { THREE_DS_FPS };
    let (s0, s1) = (a.frame_range.0 / fps, a.frame_range.1 / fps);
    if !(s0.is_finite() && s1.is_finite()) || s1 < s0 {
        return (0.0, 0.0);
    }
    let first = (s0 * THREE_DS_FPS - 1e-6).floor();
    (first, (s1 * THREE_DS_FPS + 1e-6).ceil().max(first))
}

impl Builder {
    /// Any source, resampled on integer 3DS frames.
    pub(super) fn resampled(
        &mut self,
        scene: &Scene,
        anim: Option<usize>,
        opts: &WriteOptions,
    ) -> Result<(), WriteError> {
        let mut s = self.sampling(scene, anim, opts)?;
        let mut number = vec![usize::MAX; scene.nodes.len()];
        let mut dropped = Dropped::default();
        for i in scene.depth_first() {
            match scene.nodes[i].kind {
                // Written with their camera or light.
                NodeKind::CameraTarget { camera: Some(_) }
                | NodeKind::LightTarget { light: Some(_) } => {}
                NodeKind::Ambient => dropped.ambient += 1,
                NodeKind::Camera(c) => self.resampled_camera(scene, &mut s, i, c, &mut number),
                NodeKind::Light(l) => {
                    if scene.lights[l].kind == LightKind::Directional {
                        dropped.directional += 1;
                    }
                    self.resampled_light(scene, &mut s, i, l, &mut number);
                }
                _ => {
                    let parent = object_parent(scene, i);
                    self.resampled_object(scene, &mut s, i, parent, &mut number, &mut dropped)
                }
            }
        }
        self.report_dropped(&dropped);
        Ok(())
    }

    /// The frames to key (checked against `opts.max_frames`, and the nodes to write against
    /// what `NODE_ID` can number, before anything is sampled) and the values sampled there;
    /// sets the segment and the frame shift.
    fn sampling(
        &mut self,
        scene: &Scene,
        anim: Option<usize>,
        opts: &WriteOptions,
    ) -> Result<Sampling, WriteError> {
        let a = anim.map(|a| &scene.animations[a]);
        let (f0, f1) = frame_span(a);
        let count = f1 - f0 + 1.0;
        if count > opts.max_frames as f64 {
            return Err(WriteError {
                place: format!("animation {}", quoted(a.map_or("", |a| a.name.as_str()))),
                what: format!(
                    "spans {count} keyframer frames at 30 fps, more than the limit {}",
                    opts.max_frames
                ),
            });
        }
        let nodes = node_count(scene);
        if nodes >= NO_PARENT as usize {
            return Err(WriteError {
                place: "KFDATA".into(),
                what: format!(
                    "{nodes} keyframer nodes (or more), more than NODE_ID (u16) can number"
                ),
            });
        }
        // 3DS frames are stored from 0 (KFSEG is unsigned): an animation starting before
        // 0 s is shifted.
        let shift = if f0 < 0.0 { -f0 } else { 0.0 };
        if shift > 0.0 {
            self.report.dropped.push(format!(
                "the animation starts at {:.4} s: frames shifted by {shift} so that it starts at frame 0",
                f0 / THREE_DS_FPS
            ));
        }
        let frames: Vec<f64> = (0..count as usize).map(|k| f0 + k as f64).collect();
        self.segment = ((f0 + shift) as i32, (f1 + shift) as i32);
        self.report.frame_shift = shift as i32;
        // The animation's clock at 3DS frame `f`, as `Scene::evaluate` converts the time.
        let clock = |f: f64| a.map_or(0.0, |a| Time::Seconds(f / THREE_DS_FPS).to_frame(a.fps));
        let first = match anim {
            Some(ai) => scene.evaluate(Some(ai), Time::Seconds(frames[0] / THREE_DS_FPS)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let n = scene.nodes.len();
        let mut s = Sampling {
            shift,
            first,
            trs: (0..n).map(|_| None).collect(),
            views: vec![None; n],
            fovs: vec![None; scene.cameras.len()],
            frames,
        };
        let Some(a) = a else { return Ok(s) };
        let motion = scene.motion(anim);
        let moves = |i: Option<usize>| i.is_some_and(|i| motion.world[i]);
        let mut objects = Vec::new();
        let mut views = Vec::new();
        for (i, node) in scene.nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Camera(c) => {
                    let t = scene.cameras.get(c).and_then(|c| c.target);
                    if moves(Some(i)) || moves(t) {
                        views.push((i, t));
                    }
                }
                NodeKind::Light(l) => {
                    let t = scene.lights.get(l).and_then(|l| l.target);
                    if moves(Some(i)) || moves(t) {
                        views.push((i, t));
                    }
                }
                // Written with their camera or light, or not at all.
                NodeKind::CameraTarget { camera: Some(_) }
                | NodeKind::LightTarget { light: Some(_) }
                | NodeKind::Ambient => {}
                // Written as object nodes (a target without its camera or light too).
                _ => {
                    let q = object_parent(scene, i);
                    if motion.unaimed[i] || q.is_some_and(|q| motion.unaimed[q]) {
                        objects.push((i, q));
                    }
                }
            }
        }
        // Per camera: its FOV channels (`Scene::evaluate` reads them in animation order).
        let mut fov_channels = vec![Vec::new(); scene.cameras.len()];
        for ch in &a.channels {
            if let (Some(&NodeKind::Camera(c)), ChannelTarget::Fov(t)) =
                (scene.nodes.get(ch.node).map(|n| &n.kind), &ch.target)
            {
                if let Some(list) = fov_channels.get_mut(c) {
                    list.push(t);
                }
            }
        }
        let sample_fovs = fov_channels.iter().any(|l| !l.is_empty());
        if objects.is_empty() && views.is_empty() && !sample_fovs {
            return Ok(s);
        }
        let frame_count = s.frames.len();
        for &(i, _) in &objects {
            s.trs[i] = Some(TrsSeries::with_capacity(frame_count));
        }
        for &(i, _) in &views {
            s.views[i] = Some(Vec::with_capacity(frame_count));
        }
        for (c, list) in fov_channels.iter().enumerate() {
            if !list.is_empty() {
                s.fovs[c] = Some(Vec::with_capacity(frame_count));
            }
        }
        let mut pose = PartialPose::new(scene, anim);
        for k in 0..frame_count {
            let frame = clock(s.frames[k]);
            pose.set_frame(frame);
            for &(i, q) in &objects {
                let parent_world = q.map(|q| pose.world(q));
                let world = pose.world(i);
                let local = local_against(parent_world, world, || pose.local(i));
                s.trs[i].as_mut().expect("made above").push(local);
            }
            for &(i, t) in &views {
                let world = pose.world(i);
                let aim = aim_point_of(world, t.map(|t| pose.world(t)));
                s.views[i].as_mut().expect("made above").push((world, aim));
            }
            for (c, list) in fov_channels.iter().enumerate() {
                let Some(out) = s.fovs[c].as_mut() else { continue };
                let mut fov = scene.cameras[c].fov_degrees;
                for t in list {
                    if let Some(v) = t.sample(frame) {
                        fov = v;
                    }
                }
                out.push(fov);
            }
        }
        Ok(s)
    }

    /// Camera node `i` (camera `c`) and its target as root nodes keyed in world space, with
    /// FOV (horizontal) and roll tracks.
    fn resampled_camera(
        &mut self,
        scene: &Scene,
        s: &mut Sampling,
        i: usize,
        c: usize,
        number: &mut [usize],
    ) {
        let node = &scene.nodes[i];
        let cam_target = scene.cameras[c].target;
        let views = s.view(i, cam_target);
        // The roll that shows the source camera's own orientation about its view axis,
        // unwrapped so that consecutive keys never jump by a turn.
        let mut rolls: Vec<f64> = Vec::with_capacity(views.len());
        for &(w, target) in &views {
            let r = roll_degrees(w, target);
            let prev = rolls.last().copied().unwrap_or(r);
            rolls.push(r + 360.0 * ((prev - r) / 360.0).round());
        }
        let pos: Vec<DVec3> = views.iter().map(|(w, _)| w.w_axis.truncate()).collect();
        let targets: Vec<DVec3> = views.iter().map(|v| v.1).collect();
        let name = self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
        let cam = camera_object(scene, c, pos[0], targets[0], rolls[0]);
        self.objects.push((name.clone(), ObjOut::Camera(cam)));
        self.report.cameras += 1;
        let mut out = NodeOut::new(id::CAMERA_NODE_TAG, name.clone(), None);
        out.source = Some(i);
        out.tracks.push((id::POS_TRACK_TAG, 0, s.pos_track(&pos)));
        let cam = &scene.cameras[c];
        let horizontal = |f: f64| horizontal_fov(f, cam.fov_axis, cam.aspect);
        let fovs: Vec<f64> = match s.fovs[c].take() {
            Some(f) => f.into_iter().map(horizontal).collect(),
            None => {
                let f = horizontal(s.first.camera_fov[c]);
                s.held(f, f.is_finite())
            }
        };
        let scalar = |v: &f64| KeyValue::Scalar(*v as f32);
        out.tracks.push((id::FOV_TRACK_TAG, 0, keyed(&fovs, scalar, |k| s.key_frame(k))));
        out.tracks.push((id::ROLL_TRACK_TAG, 0, keyed(&rolls, scalar, |k| s.key_frame(k))));
        number[i] = self.nodes.len();
        self.nodes.push(out);
        let mut t = NodeOut::new(id::TARGET_NODE_TAG, name, None);
        t.source = cam_target;
        t.tracks.push((id::POS_TRACK_TAG, 0, s.pos_track(&targets)));
        if let Some(ti) = cam_target {
            number[ti] = self.nodes.len();
        }
        self.nodes.push(t);
        if cam_target.is_none() {
            self.report.dropped.push(format!(
                "camera {} has no target: one written 100 units along its view axis",
                quoted(&node.name)
            ));
        }
        self.report.resampled_nodes += 1;
    }

    /// Light node `i` (light `l`) as a root node keyed in world space; a spotlight (or a
    /// directional light, written as one) with its target.
    fn resampled_light(
        &mut self,
        scene: &Scene,
        s: &mut Sampling,
        i: usize,
        l: usize,
        number: &mut [usize],
    ) {
        let node = &scene.nodes[i];
        let light = &scene.lights[l];
        let spot = matches!(light.kind, LightKind::Spot | LightKind::Directional);
        let views = s.view(i, light.target);
        // A directional light: far back along its direction from the scene's centre, aimed at
        // the centre (docs/3ds.md, "Directional lights").
        let far = (light.kind == LightKind::Directional).then(|| scene_sphere(scene, &s.first));
        let place = |&(w, aim): &(DMat4, DVec3)| {
            let at = w.w_axis.truncate();
            match far {
                Some((centre, radius)) => {
                    let dir = (aim - at).normalize_or(-DVec3::Z);
                    (centre - dir * (FAR_RADII * radius), centre)
                }
                None => (at, aim),
            }
        };
        let (pos, targets): (Vec<DVec3>, Vec<DVec3>) = views.iter().map(place).unzip();
        let name = self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
        let mut obj = light_object(scene, l, pos[0], spot.then_some(targets[0]));
        if far.is_some() {
            let cone = |radii: f64| 2.0 * (radii / FAR_RADII).atan().to_degrees();
            obj = obj.with_cone(cone(HOTSPOT_RADII), cone(FALLOFF_RADII));
        }
        self.objects.push((name.clone(), ObjOut::Light(obj)));
        self.report.lights += 1;
        let tag = if spot { id::SPOTLIGHT_NODE_TAG } else { id::LIGHT_NODE_TAG };
        let mut out = NodeOut::new(tag, name.clone(), None);
        out.source = Some(i);
        out.tracks.push((id::POS_TRACK_TAG, 0, s.pos_track(&pos)));
        number[i] = self.nodes.len();
        self.nodes.push(out);
        if spot {
            let lt = light.target;
            let mut t = NodeOut::new(id::L_TARGET_NODE_TAG, name, None);
            t.source = lt;
            t.tracks.push((id::POS_TRACK_TAG, 0, s.pos_track(&targets)));
            if let Some(ti) = lt {
                number[ti] = self.nodes.len();
            }
            self.nodes.push(t);
        }
        self.report.resampled_nodes += 1;
    }

    /// Object node `i` (mesh or dummy) under written node `parent`, with local POS, ROT and
    /// SCL tracks; the other parts of a split mesh follow it with the same tracks.
    fn resampled_object(
        &mut self,
        scene: &Scene,
        s: &mut Sampling,
        i: usize,
        parent: Option<usize>,
        number: &mut [usize],
        dropped: &mut Dropped,
    ) {
        let node = &scene.nodes[i];
        let (name, extra_parts) = match s.first.mesh[i].or(node.mesh) {
            Some(m) => {
                let names = self.resampled_mesh(scene, &s.first, i, m, dropped);
                (names[0].clone(), names[1..].to_vec())
            }
            None => ("$$$DUMMY".to_string(), Vec::new()),
        };
        let mut out = NodeOut::new(id::OBJECT_NODE_TAG, name.clone(), parent.map(|p| number[p]));
        out.source = Some(i);
        if name == "$$$DUMMY" {
            out.instance =
                Some(self.names.unique("instance", &node.name, MAX_OBJECT_NAME, &mut self.report));
            out.bound_box = Some(([-1.0; 3], [1.0; 3]));
        }
        if node.hidden {
            out.flags[0] |= NODE_HIDDEN;
        }
        let TrsSeries { ts, rs, ss, sheared } = s.object_trs(i, parent);
        if sheared {
            self.report.sheared += 1;
        }
        let moving = ts.len() > 1
            && (ts.iter().any(|t| !t.abs_diff_eq(ts[0], 0.0))
                || rs.iter().any(|r| !r.abs_diff_eq(rs[0], 0.0))
                || ss.iter().any(|s| !s.abs_diff_eq(ss[0], 0.0)));
        if moving {
            self.report.resampled_nodes += 1;
        }
        let vector = |v: &DVec3| KeyValue::Vector(f3(*v));
        out.tracks.push((id::POS_TRACK_TAG, 0, keyed(&ts, vector, |k| s.key_frame(k))));
        out.tracks.push((id::ROT_TRACK_TAG, 0, rotation_keys(&rs, |k| s.key_frame(k))));
        out.tracks.push((id::SCL_TRACK_TAG, 0, keyed(&ss, vector, |k| s.key_frame(k))));
        number[i] = self.nodes.len();
        let tracks = out.tracks.clone();
        self.nodes.push(out);
        for extra in extra_parts {
            let mut o = NodeOut::new(id::OBJECT_NODE_TAG, extra, parent.map(|p| number[p]));
            o.tracks = tracks.clone();
            o.source = Some(i);
            self.nodes.push(o);
        }
    }

    /// The mesh objects of node `i` showing mesh `m`: the world-space points at the first
    /// frame (`first`) with the node's world matrix then as `MESH_MATRIX` (lib3ds' mirror
    /// correction applied for a mirroring one), or, when that matrix is singular, the points
    /// in the node's frame with an identity matrix. Returns the written object names.
    fn resampled_mesh(
        &mut self,
        scene: &Scene,
        first: &Pose,
        i: usize,
        m: usize,
        dropped: &mut Dropped,
    ) -> Vec<String> {
        let node = &scene.nodes[i];
        let mesh = &scene.meshes[m];
        if mesh.skin.is_some() {
            dropped.skinned += 1;
        }
        if !mesh.morph_targets.is_empty() || mesh.geometry_cache.is_some() {
            dropped.morphed += 1;
        }
        let w0 = first.world[i];
        let (matrix, points) = if w0.is_finite() && w0.determinant().abs() > 1e-300 {
            let fix = mirror_fix(w0);
            let world = first.world_positions(scene, i);
            (w0, world.iter().map(|&p| fix.transform_point3(p)).collect::<Vec<_>>())
        } else {
            let g = node.geometry_transform();
            (DMat4::IDENTITY, mesh.positions.iter().map(|&p| g.transform_point3(p)).collect())
        };
        self.add_mesh(&node.name, mesh, &points, matrix)
    }

    /// The report lines for what the pass could not carry over.
    fn report_dropped(&mut self, d: &Dropped) {
        let (skinned, morphed, ambient, directional) =
            (d.skinned, d.morphed, d.ambient, d.directional);
        if skinned > 0 {
            self.report.dropped.push(format!(
                "{skinned} skins: meshes written posed at the first frame, moving with their node only"
            ));
        }
        if morphed > 0 {
            self.report.dropped.push(format!(
                "{morphed} meshes' blend shapes or caches: written as posed at the first frame"
            ));
        }
        if ambient > 0 {
            self.report.dropped.push(format!("{ambient} ambient nodes"));
        }
        if directional > 0 {
            self.report.dropped.push(format!(
                "{directional} directional lights written as spotlights {FAR_RADII} scene radii back along their direction from the scene's centre (3DS has no parallel light)"
            ));
        }
    }
}
