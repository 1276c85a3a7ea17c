//! Between the grid's samples: a target whose glTF TRS is not its own (FBX pivots and
//! pre/post rotations, a non-`RSrs` inherit type, an aim helper) is sampled on the shared
//! grid of half frames ([`super::sampling`]); here its samples are refined where the LINEAR
//! chords between them stray from the evaluated local transform — a fast turn or an S-bend
//! inside half a frame — by the library's adaptive sampler ([`resample::adaptive_from`]), so
//! the written curve is within the tolerance between grid samples too, as the per-channel
//! sampler of own-TRS targets is.

use glam::{DQuat, DVec3};

use super::channels::THIN_SHARE;
use super::nodes::decompose;
use super::sampling::partial_local;
use super::Helper;
use crate::anim::resample::{self, Curve, Positions, Rotations, Scales, SlerpChord};
use crate::anim::{ChannelTarget, PartialPose};
use crate::scene::Scene;

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
/// ([`resample::turn_seeds`]) of the rotation channels of its node and every ancestor, whose
/// turns all move its glTF local transform, so that a whole turn between two grid samples
/// cannot hide from the error test.
pub(super) fn turn_cuts(
    scene: &Scene,
    helpers: &[Helper],
    channels: &[Vec<&ChannelTarget>],
    k: usize,
    range: (f64, f64),
) -> Vec<f64> {
    let n = scene.nodes.len();
    let mut at = Some(if k < n { k } else { helpers[k - n].node });
    let mut cuts = Vec::new();
    let mut depth = 0;
    while let Some(i) = at.filter(|_| depth <= n) {
        for c in channels.get(i).map_or(&[][..], Vec::as_slice) {
            if let ChannelTarget::Rotation(r) = c {
                cuts.extend(resample::turn_seeds(r, range, resample::ADAPTIVE_BUDGET / 2));
            }
        }
        at = scene.nodes[i].parent;
        depth += 1;
    }
    cuts
}

/// Target `k`'s grid samples (`frames`, sorted, and the parts at each) refined by
/// [`resample::adaptive_from`] with [`TrsParts`] to `(1 − THIN_SHARE) ×`
/// [`resample::TOLERANCE`] × `size` (the thinning that follows takes the rest), from the grid
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
    (size, tsize): (f64, f64),
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
    let tol = (1.0 - THIN_SHARE) * resample::TOLERANCE * size;
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
}
