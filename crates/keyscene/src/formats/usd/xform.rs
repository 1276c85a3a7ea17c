//! Node transforms: one `xformOp:transform` per node prim, its local matrix relative to the
//! parent prim — the node's own local matrix (pivots and pre/post rotations included) where
//! the node inherits `RSrs` and neither it nor its parent is aimed, else
//! `parent world⁻¹ · world` (other inherit types, aimed cameras and lights), so every prim
//! lands where the evaluator places the node — with time samples where it moves.
//!
//! A moving node whose samples are all translation · rotation · scale is written as
//! `xformOp:translate`, `xformOp:orient` (`quatd`) and `xformOp:scale`, which USD interpolates
//! linearly and by slerp ([`TrsChord`]): far fewer samples than a matrix needs for a turn;
//! a still node, or one whose local matrix shears, keeps one `xformOp:transform`.
//!
//! USD interpolates a `matrix4d` time sample linearly, component by component. The samples
//! are taken by the library's adaptive, error-bounded sampler ([`resample::adaptive`]): seeds
//! at every frame and every source key ([`keep::sample_frames`]; a linear or stepped key
//! segment then needs nothing more), key segments of rotation channels cut by their turn
//! ([`resample::turn_seeds`]), split where the component-wise chord strays more than the
//! tolerance from the evaluated local matrix ([`MatrixChord`]), then thinned
//! ([`resample::thin`]).

use glam::{DMat4, DQuat, DVec3, DVec4};

use crate::anim::resample::Curve;
use crate::anim::{keep, resample, ChannelTarget, PartialPose};
use crate::scene::{InheritType, NodeKind, Scene};

/// The written timeline of one animation.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The animation written (`None`: the rest pose, no time samples).
    pub animation: Option<usize>,
    /// Written frames `(start, end)` ([`keep::written_range`]): the stage's
    /// `startTimeCode`/`endTimeCode`.
    pub range: (f64, f64),
    /// The animation's frame rate: the stage's `timeCodesPerSecond`.
    pub fps: f64,
    /// Every frame and every key frame in the range ([`keep::sample_frames`] at step 1), sorted,
    /// instants closer than [`resample::MERGE`] taken once.
    pub grid: Vec<f64>,
    /// The scene size ([`resample::scene_size`] of the first frame's pose).
    pub size: f64,
    /// The error bound relative to the scene size ([`super::WriteOptions::tolerance`]).
    pub relative: f64,
}

impl Timeline {
    /// The tolerance of each sampled curve (scene units): a quarter of
    /// [`Timeline::relative`] × the size, so that a node's error and its parents' together
    /// stay within the tolerance.
    pub fn tol(&self) -> f64 {
        self.relative * self.size / 4.0
    }

    /// The timeline of animation `animation` of `scene` (`None` or past the end: none), with
    /// the error bound `relative` to the scene size ([`super::WriteOptions::tolerance`]).
    pub fn new(scene: &Scene, animation: Option<usize>, relative: f64) -> Timeline {
        let anim = animation.and_then(|a| scene.animations.get(a));
        let fps = scene.frame_rate(animation);
        let (range, grid) = match anim {
            Some(anim) => {
                let keys: Vec<Vec<f64>> =
                    anim.channels.iter().flat_map(|c| keep::key_frames(&c.target)).collect();
                let range = keep::written_range(anim.frame_range, &keys);
                let anchor = if anim.frame_range.0.is_finite() {
                    anim.frame_range.0.min(range.0)
                } else {
                    range.0
                };
                // One seed per instant: keys of many curves share frames.
                let mut grid = keep::sample_frames(range, anchor, 1.0, &keys);
                grid.sort_by(f64::total_cmp);
                grid.dedup_by(|b, a| *b - *a < resample::MERGE);
                (range, grid)
            }
            None => ((0.0, 0.0), vec![0.0]),
        };
        let animation = anim.and(animation);
        let world = scene.evaluate(animation, crate::anim::Time::Frame(range.0)).world;
        let size = resample::scene_size(scene, &world);
        Timeline { animation, range, fps, grid, size, relative }
    }
}

/// A node prim's transform.
#[derive(Debug, Clone)]
pub struct NodeXform {
    /// Sample frames (one frame, the range's start, for a node that does not move).
    pub frames: Vec<f64>,
    /// The local matrix at each frame (parent prim's frame ← node's), or the world matrix
    /// when [`NodeXform::reset`] is set.
    pub values: Vec<DMat4>,
    /// The parent's world matrix cannot be inverted at some sample (a scale of 0): the prim
    /// resets the transform stack (`!resetXformStack!`) and holds its world matrix.
    pub reset: bool,
    /// The sampler's budget stopped before the tolerance was met.
    pub capped: bool,
    /// The samples are written as `xformOp:translate`, `xformOp:orient` and `xformOp:scale`
    /// ([`trs`] of each value; USD slerps the orientation) instead of one
    /// `xformOp:transform`: a moving node whose every sample is a translation · rotation ·
    /// scale ([`TrsChord`]).
    pub trs: bool,
}

/// Translation, rotation and scale of `m` (glam's decomposition: a negative determinant
/// negates the X scale).
pub fn trs(m: &DMat4) -> (DVec3, DQuat, DVec3) {
    let (s, r, t) = m.to_scale_rotation_translation();
    (t, r, s)
}

/// USD's interpolation of `xformOp:translate`, `xformOp:orient` and `xformOp:scale` time
/// samples (translation and scale linear, orientation by `GfSlerp`, the short way), measured
/// as [`MatrixChord`] measures the composed matrices.
#[derive(Debug, Clone, Copy)]
pub struct TrsChord {
    /// The scene size (scene units).
    pub size: f64,
}

impl resample::Curve<DMat4> for TrsChord {
    /// The translations and scales at both ends, and the rotations' slerp with its angle
    /// worked out once ([`resample::SlerpChord`]: glam's slerp bit for bit).
    type Chord = ((DVec3, DVec3), resample::SlerpChord, (DVec3, DVec3));
    fn chord(&self, a: DMat4, b: DMat4) -> Self::Chord {
        let ((ta, ra, sa), (tb, rb, sb)) = (trs(&a), trs(&b));
        ((ta, tb), resample::SlerpChord::new(ra, rb), (sa, sb))
    }
    fn at(&self, &(t, r, sc): &Self::Chord, s: f64) -> DMat4 {
        DMat4::from_scale_rotation_translation(sc.0.lerp(sc.1, s), r.at(s), t.0.lerp(t.1, s))
    }
    fn error(&self, w: DMat4, s: DMat4) -> f64 {
        MatrixChord { size: self.size }.error(w, s)
    }
}

/// Linear interpolation of matrices component by component, as USD interpolates `matrix4d`
/// time samples; the error is the distance of the translations plus the largest distance of
/// a basis vector times the scene size (a point at the scene's radius moves at most that).
#[derive(Debug, Clone, Copy)]
pub struct MatrixChord {
    /// The scene size (scene units).
    pub size: f64,
}

impl resample::Curve<DMat4> for MatrixChord {
    type Chord = (DMat4, DMat4);
    fn chord(&self, a: DMat4, b: DMat4) -> (DMat4, DMat4) {
        (a, b)
    }
    fn at(&self, &(a, b): &(DMat4, DMat4), s: f64) -> DMat4 {
        a * (1.0 - s) + b * s
    }
    fn error(&self, w: DMat4, s: DMat4) -> f64 {
        let d = |i: usize| (w.col(i) - s.col(i)).truncate().length();
        let basis = d(0).max(d(1)).max(d(2));
        let e = d(3) + self.size * basis;
        // A projective row (never written by the evaluator) counts in full.
        let row = DVec4::new(
            w.x_axis.w - s.x_axis.w,
            w.y_axis.w - s.y_axis.w,
            w.z_axis.w - s.z_axis.w,
            w.w_axis.w - s.w_axis.w,
        );
        if e.is_nan() {
            f64::INFINITY
        } else {
            e + row.length() * self.size
        }
    }
}

/// Whether node `k` is aimed at a target (a camera or light with one): its world matrix is
/// turned after its parent's, which its children do not inherit.
fn aimed(scene: &Scene, k: usize) -> bool {
    let n = scene.nodes.len();
    match scene.nodes[k].kind {
        NodeKind::Camera(c) => scene.cameras.get(c).and_then(|c| c.target).is_some_and(|t| t < n),
        NodeKind::Light(l) => scene.lights.get(l).and_then(|l| l.target).is_some_and(|t| t < n),
        _ => false,
    }
}

/// Whether node `k`'s prim matrix is its own local matrix ([`PartialPose::local`]): it
/// inherits `RSrs` (world = parent world · local), neither it nor its parent is aimed. Its
/// samples then need no ancestor (a deep hierarchy costs linear time), and it moves only when
/// its own channels move it.
fn own_local(scene: &Scene, k: usize) -> bool {
    scene.nodes[k].inherit == InheritType::RSrs
        && !aimed(scene, k)
        && scene.nodes[k].parent.is_none_or(|p| !aimed(scene, p))
}

/// Every node's transform over `line`, in node order.
pub fn node_xforms(scene: &Scene, line: &Timeline) -> Vec<NodeXform> {
    let n = scene.nodes.len();
    let mut pose = PartialPose::new(scene, line.animation);
    let motion = scene.motion(line.animation);
    let channels = crate::anim::channels_by_node(scene, line.animation);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let parent = scene.nodes[k].parent;
        let own = own_local(scene, k);
        let varies = line.animation.is_some()
            && if own {
                motion.local[k]
            } else {
                motion.world[k] || parent.is_some_and(|p| motion.world[p])
            };
        let local = |pose: &mut PartialPose, f: f64, reset: bool| {
            pose.set_frame(f);
            if own && !reset {
                return pose.local(k);
            }
            let w = pose.world(k);
            match parent {
                Some(p) if !reset => pose.world(p).inverse() * w,
                _ => w,
            }
        };
        let finite = |m: &DMat4| m.is_finite();
        if !varies {
            let f = line.range.0;
            let mut m = local(&mut pose, f, false);
            let reset = !finite(&m);
            if reset {
                m = local(&mut pose, f, true);
            }
            let x =
                NodeXform { frames: vec![f], values: vec![m], reset, capped: false, trs: false };
            out.push(x);
            continue;
        }
        let seeds = seeds(scene, k, &channels, line, own);
        let matrix = MatrixChord { size: line.size };
        let split = TrsChord { size: line.size };
        // A sample `trs` does not reproduce within this (shear) keeps the matrix op.
        let exact = |m: &DMat4| {
            let (t, r, s) = trs(m);
            matrix.error(*m, DMat4::from_scale_rotation_translation(s, r, t)) <= line.tol() * 1e-3
        };
        // Every local matrix the TRS pass evaluates, for the matrix pass after it (a shear):
        // that one asks for the same seeds and many of the same middles.
        let mut seen: Vec<(f64, DMat4)> = Vec::new();
        let budget = resample::ADAPTIVE_BUDGET;
        let first = |f: f64| {
            let m = local(&mut pose, f, false);
            seen.push((f, m));
            m
        };
        let s = resample::adaptive(&seeds, first, &split, line.tol(), budget);
        let mut s = resample::thin(s, &split, line.tol() * 1e-3);
        let reset = !s.values.iter().all(finite);
        let as_trs = !reset && s.values.iter().all(exact);
        if !as_trs {
            seen.sort_by(|a, b| a.0.total_cmp(&b.0));
            let again = |f: f64| match seen.binary_search_by(|x| x.0.total_cmp(&f)) {
                Ok(i) if !reset => seen[i].1,
                _ => local(&mut pose, f, reset),
            };
            let m = resample::adaptive(&seeds, again, &matrix, line.tol(), budget);
            s = resample::thin(m, &matrix, line.tol() * 1e-3);
        }
        if s.values.iter().all(|v| *v == s.values[0]) {
            // "May move" was conservative: one value.
            s.frames.truncate(1);
            s.values.truncate(1);
        }
        let trs = as_trs && s.values.len() > 1;
        out.push(NodeXform { frames: s.frames, values: s.values, reset, capped: s.capped, trs });
    }
    out
}

/// The seeds of node `k`: the timeline's grid and the turn cuts of the rotation channels of
/// the node (`own`: its prim matrix is its own local matrix) or of it and its ancestors.
fn seeds(
    scene: &Scene,
    k: usize,
    channels: &[Vec<&ChannelTarget>],
    line: &Timeline,
    own: bool,
) -> Vec<f64> {
    let mut seeds = line.grid.clone();
    seeds.extend(resample::ancestry_turn_seeds(scene, channels, k, line.range, own));
    seeds.sort_by(f64::total_cmp);
    seeds.dedup_by(|b, a| *b - *a < resample::MERGE);
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::animation::{Animation, Channel, Interpolation, Key, Track};
    use crate::scene::{Node, NodeKind};
    use glam::DVec3;

    /// One root node translated linearly from (0,0,0) at frame 5 to (10,0,0) at frame 25,
    /// an animation of 24 fps over frames 5–20 (the key at 25 lies past the range's end).
    fn linear_scene() -> Scene {
        let mut s = Scene::default();
        s.nodes.push(Node::new("a", NodeKind::Null));
        s.attach(0, None);
        let key = |frame, x| Key {
            frame,
            value: DVec3::new(x, 0.0, 0.0),
            interpolation: Interpolation::Linear,
        };
        s.animations.push(Animation {
            name: "take".into(),
            fps: 24.0,
            frame_range: (5.0, 20.0),
            channels: vec![Channel {
                node: 0,
                target: ChannelTarget::Translation(Track::new(vec![
                    key(5.0, 0.0),
                    key(25.0, 10.0),
                ])),
            }],
        });
        s
    }

    #[test]
    fn time_codes_are_frames_from_the_range_to_the_last_key() {
        let line = Timeline::new(&linear_scene(), Some(0), resample::TOLERANCE);
        assert_eq!(line.fps, 24.0);
        // Written from the range's start to the later of its end and the last key.
        assert_eq!(line.range, (5.0, 25.0));
        assert_eq!(line.grid.first(), Some(&5.0));
        assert_eq!(line.grid.last(), Some(&25.0));
        assert!(line.grid.contains(&12.0));
    }

    #[test]
    fn a_linear_key_segment_keeps_its_two_keys() {
        let scene = linear_scene();
        let line = Timeline::new(&scene, Some(0), resample::TOLERANCE);
        let x = &node_xforms(&scene, &line)[0];
        assert!(!x.reset && !x.capped);
        assert_eq!(x.frames, [5.0, 25.0]);
        assert_eq!(x.values[0].w_axis.truncate(), DVec3::ZERO);
        assert_eq!(x.values[1].w_axis.truncate(), DVec3::new(10.0, 0.0, 0.0));
    }

    #[test]
    fn a_turning_node_is_sampled_within_the_tolerance_between_samples() {
        let mut scene = linear_scene();
        let q = |frame: f64, turns: f64| Key {
            frame,
            value: glam::DQuat::from_rotation_z(turns * std::f64::consts::TAU),
            interpolation: Interpolation::Linear,
        };
        scene.animations[0].channels.push(Channel {
            node: 0,
            target: ChannelTarget::Rotation(crate::anim::RotationTrack::Quat(Track::new(vec![
                q(5.0, 0.0),
                q(25.0, 0.25),
            ]))),
        });
        let line = Timeline::new(&scene, Some(0), resample::TOLERANCE);
        let x = &node_xforms(&scene, &line)[0];
        // Linear translation and a linear (slerped) quarter turn: translate/orient ops, whose
        // lerp and slerp reproduce the two keys exactly — where a matrix op needs many samples.
        assert!(x.trs);
        assert_eq!(x.frames, [5.0, 25.0]);
        let curve = TrsChord { size: line.size };
        for q in 1..8 {
            let f = 5.0 + 20.0 * q as f64 / 8.0;
            let want = scene.evaluate(Some(0), crate::anim::Time::Frame(f)).world[0];
            let got = curve.at(&curve.chord(x.values[0], x.values[1]), q as f64 / 8.0);
            assert!(curve.error(got, want) <= line.tol() * 1e-6, "at frame {f}");
        }
        // The same samples as one matrix op stray: a turn is not linear component by component.
        let m = MatrixChord { size: line.size };
        let mid = m.at(&m.chord(x.values[0], x.values[1]), 0.5);
        let want = scene.evaluate(Some(0), crate::anim::Time::Frame(15.0)).world[0];
        assert!(m.error(mid, want) > line.tol());
    }

    /// One root node on a cubic Hermite path (x from 0 to 10 over frames 5–25, leaving at 3
    /// units a frame, arriving at −1), written at the bound `relative`: its samples, and the
    /// largest distance between USD's interpolation of them and the evaluated position at
    /// every quarter frame (the hand-made curve's own values, through the evaluator).
    fn hermite_at(relative: f64) -> (usize, f64, f64) {
        let mut scene = linear_scene();
        let key = |frame, x, t_in, t_out| Key {
            frame,
            value: DVec3::new(x, 0.0, 0.0),
            interpolation: Interpolation::Hermite {
                in_tangent: DVec3::new(t_in, 0.0, 0.0),
                out_tangent: DVec3::new(t_out, 0.0, 0.0),
            },
        };
        scene.animations[0].channels[0].target = ChannelTarget::Translation(Track::new(vec![
            key(5.0, 0.0, 0.0, 3.0),
            key(25.0, 10.0, -1.0, 0.0),
        ]));
        let line = Timeline::new(&scene, Some(0), relative);
        let x = &node_xforms(&scene, &line)[0];
        assert!(!x.capped);
        let mut worst = 0.0f64;
        for q in 0..=80 {
            let f = 5.0 + q as f64 / 4.0;
            let i = x.frames.partition_point(|&s| s <= f).clamp(1, x.frames.len() - 1);
            let (fa, fb) = (x.frames[i - 1], x.frames[i]);
            let u = ((f - fa) / (fb - fa)).clamp(0.0, 1.0);
            let got = x.values[i - 1].w_axis.lerp(x.values[i].w_axis, u).truncate();
            let want = scene.evaluate(Some(0), crate::anim::Time::Frame(f)).world[0];
            worst = worst.max((got - want.w_axis.truncate()).length());
        }
        (x.frames.len(), worst, relative * line.size)
    }

    #[test]
    fn the_tolerance_bounds_the_written_path_and_a_larger_one_writes_fewer_samples() {
        let (fine, fine_err, fine_bound) = hermite_at(resample::TOLERANCE);
        let (coarse, coarse_err, coarse_bound) = hermite_at(1e-2);
        assert!(fine_err <= fine_bound, "{fine_err} > {fine_bound}");
        assert!(coarse_err <= coarse_bound, "{coarse_err} > {coarse_bound}");
        // A cubic's chord error shrinks with the square of the interval: 100× the bound
        // needs about a tenth of the samples.
        assert!(coarse * 4 < fine, "{coarse} samples at 1e-2, {fine} at 1e-4");
        assert!(coarse >= 3, "a curve is not one chord");
    }
}
