//! Between the grid's samples: a target whose glTF TRS is not its own (FBX pivots and
//! pre/post rotations, a non-`RSrs` inherit type, an aim helper) is sampled on the shared
//! grid of half frames ([`super::sampling`]); here its samples are refined where the LINEAR
//! chords between them stray from the evaluated local transform — a fast turn or an S-bend
//! inside half a frame — by the library's adaptive sampler ([`resample::adaptive_from`]), so
//! the written curve is within the tolerance between grid samples too, as the per-channel
//! sampler of own-TRS targets is. Morph weights, on the same grid, are refined the same way
//! ([`refine_weights`]).

use glam::{DQuat, DVec3};

use super::channels::THIN_SHARE;
use super::nodes::decompose;
use super::sampling::partial_local;
use super::Helper;
use crate::anim::resample::{self, Curve, Positions, Rotations, Scales, SlerpChord};
use crate::anim::{ChannelTarget, PartialPose};
use crate::formats::gltf::deform;
use crate::scene::{Mesh, Scene};

/// A glTF local transform as written: translation, rotation (unit quaternion), scale.
pub(super) type Trs = (DVec3, DQuat, DVec3);

/// glTF's LINEAR sampler on all three paths at once — translation and scale lerped, rotation
/// slerped the short way — measured as the per-part samplers measure each part, on one scale:
/// the largest of the translation's distance × `size / reach` (a translation's tolerance is
/// relative to the farthest it reaches, as in the per-channel sampler), the rotation's and the
/// scale's effect on a point at distance `size` ([`Rotations`], [`Scales`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct TrsParts {
    /// The scene size (scene units).
    pub(super) size: f64,
    /// The larger of the scene size in the translation's units and the largest coordinate
    /// the translation reaches at its samples.
    pub(super) reach: f64,
}

impl Curve<Trs> for TrsParts {
    type Chord = ((DVec3, DVec3), SlerpChord, (DVec3, DVec3));
    fn chord(&self, a: Trs, b: Trs) -> Self::Chord {
        let r = Rotations { size: self.size };
        (Positions.chord(a.0, b.0), r.chord(a.1, b.1), Scales { size: self.size }.chord(a.2, b.2))
    }
    fn at(&self, (t, r, s): &Self::Chord, f: f64) -> Trs {
        (Positions.at(t, f), r.at(f), Scales { size: self.size }.at(s, f))
    }
    fn error(&self, w: Trs, s: Trs) -> f64 {
        let t = Positions.error(w.0, s.0) * self.size / self.reach;
        let r = Rotations { size: self.size }.error(w.1, s.1);
        let sc = Scales { size: self.size }.error(w.2, s.2);
        // A NaN part makes the whole error NaN (within the tolerance, as `adaptive` counts a
        // value that has nothing to follow), never hidden by a `max` of the others.
        if t.is_nan() || r.is_nan() || sc.is_nan() {
            f64::NAN
        } else {
            t.max(r).max(sc)
        }
    }
    fn joinable(&self, a: Trs, b: Trs) -> bool {
        Rotations { size: self.size }.joinable(a.1, b.1)
    }
}

/// The seeds of target `k` (scene nodes, then aim helpers) beyond the grid: the turn cuts
/// of the rotation channels of its node and every ancestor ([`resample::ancestry_turn_seeds`]),
/// whose turns all move its glTF local transform.
pub(super) fn turn_cuts(
    scene: &Scene,
    helpers: &[Helper],
    channels: &[Vec<&ChannelTarget>],
    k: usize,
    range: (f64, f64),
) -> Vec<f64> {
    let n = scene.nodes.len();
    let node = if k < n { k } else { helpers[k - n].node };
    resample::ancestry_turn_seeds(scene, channels, node, range, false)
}

/// Target `k`'s grid samples (`frames`, sorted, and the parts at each) refined by
/// [`resample::adaptive_from`] with [`TrsParts`] to `(1 − THIN_SHARE) × tolerance × size`
/// (`tolerance`: [`crate::formats::gltf::WriteOptions::tolerance`]; the thinning that follows
/// takes the rest), from the grid
/// samples and the `cuts` (evaluated here) as seeds; new samples come from `pose`
/// ([`partial_local`]). `tsize`: the scene size in the translation's units. Returns the
/// frames, the parts (rotations in one hemisphere after another) and whether the budget
/// capped the splitting.
#[allow(clippy::type_complexity)]
pub(super) fn refine(
    scene: &Scene,
    helpers: &[Helper],
    pose: &mut PartialPose,
    k: usize,
    (frames, (tr, ro, sc)): (&[f64], (Vec<DVec3>, Vec<DQuat>, Vec<DVec3>)),
    mut cuts: Vec<f64>,
    (size, tsize, tolerance): (f64, f64, f64),
) -> (Vec<f64>, (Vec<DVec3>, Vec<DQuat>, Vec<DVec3>), bool) {
    let mut at = |f: f64| {
        pose.set_frame(f);
        decompose(partial_local(scene, pose, helpers, k))
    };
    let grid = frames.iter().zip(tr).zip(ro).zip(sc).map(|(((&f, t), r), s)| (f, (t, r, s)));
    let mut points: Vec<(f64, Trs)> = grid.collect();
    cuts.retain(|c| {
        let j = points.partition_point(|p| p.0 < *c);
        let near = |i: usize| points.get(i).is_some_and(|p| (p.0 - c).abs() < resample::MERGE);
        !(near(j) || j > 0 && near(j - 1))
    });
    if !cuts.is_empty() {
        points.extend(cuts.iter().map(|&c| (c, at(c))));
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let reach = points
        .iter()
        .map(|p| p.1 .0.abs().max_element())
        .filter(|r| r.is_finite())
        .fold(tsize, f64::max);
    let curve = TrsParts { size, reach: if reach > 0.0 { reach } else { 1.0 } };
    let tol = (1.0 - THIN_SHARE) * tolerance * size;
    let s = resample::adaptive_from(points, at, &curve, tol, resample::ADAPTIVE_BUDGET);
    let (mut tr, mut ro, mut sc) = (Vec::new(), Vec::new(), Vec::new());
    for (t, r, sv) in s.values {
        tr.push(t);
        ro.push(r);
        sc.push(sv);
    }
    resample::same_hemisphere(&mut ro);
    (s.frames, (tr, ro, sc), s.capped)
}

/// How far each glTF morph target of `mesh` ([`deform::target_layout`] order) moves a vertex
/// at weight 1, in world units: its largest weighted offset ([`crate::scene::MorphTarget::weighted_deltas`])
/// times `scale`, the largest axis scale of the node's world matrix at rest. A weight error
/// `δ` on that target moves a vertex at most `δ ×` this.
pub(super) fn target_reach(mesh: &Mesh, scale: f64) -> Vec<f64> {
    deform::target_layout(mesh)
        .into_iter()
        .map(|s| {
            let d = mesh.morph_targets[s.target].weighted_deltas(s.shape);
            let most = d.iter().map(|v| v.length()).filter(|l| l.is_finite()).fold(0.0, f64::max);
            most * scale
        })
        .collect()
}

/// A morph node's glTF weights on the grid (`frames`, sorted; `weights`: `reach.len()` per
/// frame) refined where glTF's LINEAR interpolation strays from the source's weights
/// (`at(frame)`, [`deform::gltf_weights`] of the evaluated pose) by more than `tol` (scene
/// units): the error of an instant is `Σ |written − source| × reach` over the targets (each
/// target's [`target_reach`]). An interval is tested at its middle (grid intervals are half
/// frames, [`resample::SHORT_SPAN`] or less) and split there while longer than twice
/// [`resample::min_span`], at most [`resample::ADAPTIVE_BUDGET`] samples in all. Returns the
/// frames, the weights (as written, `f32`) and whether the budget stopped a split.
pub(super) fn refine_weights(
    at: &mut impl FnMut(f64) -> Vec<f64>,
    frames: &[f64],
    weights: &[f32],
    reach: &[f64],
    tol: f64,
) -> (Vec<f64>, Vec<f32>, bool) {
    let n = reach.len();
    if n == 0 || weights.len() != frames.len() * n {
        return (frames.to_vec(), weights.to_vec(), false);
    }
    let mut out: Vec<(f64, Vec<f64>)> = Vec::with_capacity(frames.len());
    let mut budget = resample::ADAPTIVE_BUDGET.saturating_sub(frames.len());
    let mut capped = false;
    for (i, &f) in frames.iter().enumerate() {
        let w: Vec<f64> = weights[i * n..(i + 1) * n].iter().map(|&x| f64::from(x)).collect();
        if let Some(prev) = out.last().cloned() {
            let mut split = Split { at: &mut *at, reach, tol, budget: &mut budget, capped: false };
            split.between(prev, (f, w.clone()), &mut out);
            capped |= split.capped;
        }
        out.push((f, w));
    }
    let frames = out.iter().map(|p| p.0).collect();
    let weights = out.iter().flat_map(|p| p.1.iter().map(|&w| w as f32)).collect();
    (frames, weights, capped)
}

/// The recursive split of [`refine_weights`].
struct Split<'a, F> {
    at: &'a mut F,
    reach: &'a [f64],
    tol: f64,
    budget: &'a mut usize,
    capped: bool,
}

impl<F: FnMut(f64) -> Vec<f64>> Split<'_, F> {
    /// Pushes onto `out` the samples needed strictly between `a` and `b`, in frame order.
    /// Each level halves the interval and stops at `2 × min_span`, so the depth is bounded.
    fn between(&mut self, a: (f64, Vec<f64>), b: (f64, Vec<f64>), out: &mut Vec<(f64, Vec<f64>)>) {
        let span = b.0 - a.0;
        if span.is_nan() || span < 2.0 * resample::min_span(a.0.abs().max(b.0.abs())) {
            return;
        }
        let m = 0.5 * (a.0 + b.0);
        let src = (self.at)(m);
        let err: f64 = (0..self.reach.len())
            .map(|j| {
                let (x, y) =
                    (a.1.get(j).copied().unwrap_or(0.0), b.1.get(j).copied().unwrap_or(0.0));
                let s = src.get(j).copied().unwrap_or(0.0);
                (0.5 * (x + y) - s).abs() * self.reach[j]
            })
            .sum();
        // A NaN error (no value to follow) is within the tolerance, as `adaptive` counts it.
        if err.is_nan() || err <= self.tol {
            return;
        }
        if *self.budget == 0 {
            self.capped = true;
            return;
        }
        *self.budget -= 1;
        let mid = (m, src);
        self.between(a, mid.clone(), out);
        out.push(mid.clone());
        self.between(mid, b, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quarter turn about Z in one chord: at its middle the slerp is 45°, and a source 10°
    /// off there is (hand-computed) `size · 2 sin(5°)` away; a translation error of 1 at
    /// reach 10 and size 2 counts 1 · 2 / 10.
    #[test]
    fn the_error_is_the_largest_part_on_one_scale() {
        let c = TrsParts { size: 2.0, reach: 10.0 };
        let a = (DVec3::ZERO, DQuat::IDENTITY, DVec3::ONE);
        let b = (DVec3::new(2.0, 0.0, 0.0), DQuat::from_rotation_z(90f64.to_radians()), DVec3::ONE);
        let mid = c.at(&c.chord(a, b), 0.5);
        assert!((mid.0.x - 1.0).abs() < 1e-12);
        assert!(mid.1.angle_between(DQuat::from_rotation_z(45f64.to_radians())) < 1e-12);
        let off =
            (DVec3::new(1.0, 0.0, 0.0), DQuat::from_rotation_z(55f64.to_radians()), DVec3::ONE);
        let want = 2.0 * 2.0 * (5f64.to_radians()).sin();
        assert!((c.error(mid, off) - want).abs() < 1e-9, "{}", c.error(mid, off));
        let moved = (DVec3::new(2.0, 0.0, 0.0), mid.1, DVec3::ONE);
        assert!((c.error(mid, moved) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn a_nan_part_is_no_error_to_split_on() {
        let c = TrsParts { size: 1.0, reach: 1.0 };
        let a = (DVec3::ZERO, DQuat::IDENTITY, DVec3::ONE);
        let nan = (DVec3::NAN, DQuat::IDENTITY, DVec3::ONE);
        assert!(c.error(a, nan).is_nan());
    }

    /// A weight that rises as `f²` over frames 0–1 on a grid of 0, 0.5, 1: the chord of each
    /// half strays `1/16` at its middle; with reach 1 and tolerance 0.01 (hand-computed:
    /// a span `h` strays `h²/4`), halves are split until `h²/4 ≤ 0.01`, i.e. down to `h = 1/8`.
    #[test]
    fn weights_are_split_until_the_chord_is_within_the_tolerance() {
        let mut at = |f: f64| vec![f * f];
        let (frames, w, capped) =
            refine_weights(&mut at, &[0.0, 0.5, 1.0], &[0.0, 0.25, 1.0], &[1.0], 0.01);
        assert!(!capped);
        let want: Vec<f64> = (0..=8).map(|k| k as f64 / 8.0).collect();
        assert_eq!(frames, want);
        for (f, w) in frames.iter().zip(&w) {
            assert!((f64::from(*w) - f * f).abs() < 1e-7);
        }
    }

    #[test]
    fn linear_weights_keep_the_grid() {
        let mut at = |f: f64| vec![f, 1.0 - f];
        let (frames, _, _) = refine_weights(
            &mut at,
            &[0.0, 0.5, 1.0],
            &[0.0, 1.0, 0.5, 0.5, 1.0, 0.0],
            &[3.0, 3.0],
            1e-9,
        );
        assert_eq!(frames, vec![0.0, 0.5, 1.0]);
    }
}
