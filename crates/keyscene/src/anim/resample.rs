//! Adaptive, error-bounded resampling (issue 16, goal 3): the samples a writer takes of a
//! channel that has no exact form in its file format, so that the format's own interpolation
//! between them (LINEAR vectors, slerped quaternions) stays within a tolerance of the source
//! curve at **every** time, not only at integer frames.
//!
//! 1. **Seeds** ([`seed_frames`]): both ends of the written range, every key inside it, and
//!    the instant [`keep::JUMP_LEAD`] frames before every jump (two keys of one track on one
//!    frame), so a linear curve comes out exact with its keys alone and a jump stays a jump.
//!    Seeds closer than [`MERGE`] frames are one sample (never a sample crowding a key: a
//!    key at 0.99999 and a sample at 1 would be 1e-5 frames apart, which `f32` seconds
//!    cannot keep apart at every time).
//! 2. **Error test** ([`adaptive`]): between two neighbouring samples the written
//!    interpolation is compared with the source curve at a quarter, half and three quarters of
//!    the interval; past the tolerance the interval is split at its middle and both halves are
//!    tested again, the interval with the largest error first, down to [`MIN_SPAN`] frames.
//!    Where the curve is straight no sample is added; a relative 3DS rotation of a full turn
//!    between two keys (two nearly equal absolute quaternions) is off by half a turn at the
//!    middle and is split until every interval turns less than the tolerance, so it spins.
//! 3. **Bound**: at most `budget` samples per channel ([`ADAPTIVE_BUDGET`] for the writers);
//!    past it the intervals left keep their chords and [`Sampled::capped`] says so (the writer
//!    warns).
//!
//! The error measures are the writer's: [`vec3_error`] (a position's distance),
//! [`scale_error`] and [`rotation_error`] (a scale's or rotation's effect on a point at the
//! scene's radius, [`scene_size`]), against [`TOLERANCE`] × the scene size.
//!
//! **No writer uses it yet.** Wired into the glTF writer, the corpus check of every resampled
//! channel at quarter and half frames passed on 24 of the 25 3DS/PRJ files and failed on
//! `secondreality/CITY.3DS`: its `HeliRotor` turns a whole number of times between test
//! points, so the quarter/half/three-quarter test sees no error and never splits the interval
//! (217 units off at frame 2090.25, tolerance 0.38). The writers keep their per-frame grid
//! (`anim::keep::resample_frames`) until the error test also bounds the turn per interval.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::{DMat4, DQuat, DVec3};

use crate::anim::keep;
use crate::scene::Scene;

/// The tolerance relative to the scene size ([`scene_size`]): 1e-4, the corpus checks'
/// tolerance (issue 16, goal 3).
pub const TOLERANCE: f64 = 1e-4;

/// Seeds (keys, range ends) closer than this many frames are one sample: well below any
/// frame a player shows, and above `f32` seconds' resolution for the first ~10⁴ s at 30 fps.
pub const MERGE: f64 = 1e-4;

/// The shortest interval (frames) the error test splits: 1/64 frame. A step the keys do not
/// mark as a jump is kept within this much time of its frame.
pub const MIN_SPAN: f64 = 1.0 / 64.0;

/// Most samples of one adaptively resampled channel in the writers: 2²⁰ (a channel of a
/// 100,000-frame animation gets ten samples a frame before it is capped).
pub const ADAPTIVE_BUDGET: usize = 1 << 20;

/// One channel's samples: sorted, strictly increasing frames and the source's value at each.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled<V> {
    /// Sample frames, strictly increasing, within the seeds' range.
    pub frames: Vec<f64>,
    /// The source value at each frame.
    pub values: Vec<V>,
    /// Whether the budget stopped the subdivision before every interval was within the
    /// tolerance.
    pub capped: bool,
}

/// The seed frames of a channel resampled over `range = (start, end)` (frames, `start ≤ end`)
/// whose source tracks have the key frames `tracks` (each in key order): `start`, `end`, every
/// key within the range and, for two keys of one track on one frame `f`, the frame
/// `f − JUMP_LEAD` (when inside the range). Sorted; seeds closer than [`MERGE`] to the one
/// before are left out, except `end`, which replaces the seed before it. Non-finite frames are
/// ignored; a non-finite range gives no seeds.
pub fn seed_frames<'k>(range: (f64, f64), tracks: impl IntoIterator<Item = &'k [f64]>) -> Vec<f64> {
    let (start, end) = range;
    if !(start.is_finite() && end.is_finite()) || end < start {
        return Vec::new();
    }
    let mut seeds = vec![start, end];
    let inside = |f: f64| f >= start && f <= end;
    for keys in tracks {
        seeds.extend(keys.iter().copied().filter(|&f| inside(f)));
        for w in keys.windows(2).filter(|w| w[0] == w[1]) {
            let lead = w[0] - keep::JUMP_LEAD;
            if lead > start && w[0] <= end {
                seeds.push(lead);
            }
        }
    }
    seeds.sort_by(f64::total_cmp);
    let mut out: Vec<f64> = Vec::with_capacity(seeds.len());
    for f in seeds {
        match out.last_mut() {
            Some(last) if f - *last < MERGE => {
                if f == end && out.len() > 1 {
                    *out.last_mut().expect("non-empty") = end;
                }
            }
            _ => out.push(f),
        }
    }
    out
}

/// One interval waiting to be split, ordered by its error.
struct Interval<V> {
    error: f64,
    a: (f64, V),
    b: (f64, V),
    /// The source value at the middle (tested already).
    mid: V,
}

impl<V> PartialEq for Interval<V> {
    fn eq(&self, other: &Self) -> bool {
        self.error.total_cmp(&other.error) == Ordering::Equal
    }
}
impl<V> Eq for Interval<V> {}
impl<V> PartialOrd for Interval<V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<V> Ord for Interval<V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.error.total_cmp(&other.error)
    }
}

/// Samples a channel adaptively (module docs): the source value `source(frame)` at every seed
/// ([`seed_frames`], sorted), then more where `between(a, b, s)` — the written interpolation
/// at fraction `s ∈ [0, 1]` of the way from sample value `a` to `b` — differs from the source
/// by more than `tol` by the measure `error(written, source)` at a quarter, half or three
/// quarters of an interval. Intervals shorter than `2 × MIN_SPAN` are not split; at most
/// `budget` samples (never fewer than the seeds) are taken. A non-finite error counts as
/// within the tolerance (the curve has no value there to follow).
pub fn adaptive<V: Copy>(
    seeds: &[f64],
    mut source: impl FnMut(f64) -> V,
    between: impl Fn(V, V, f64) -> V,
    error: impl Fn(V, V) -> f64,
    tol: f64,
    budget: usize,
) -> Sampled<V> {
    let mut points: Vec<(f64, V)> = seeds.iter().map(|&f| (f, source(f))).collect();
    let mut heap = BinaryHeap::new();
    let test = |a: (f64, V), b: (f64, V), source: &mut dyn FnMut(f64) -> V| {
        let span = b.0 - a.0;
        if !(span >= 2.0 * MIN_SPAN) {
            return None;
        }
        let mut worst = 0.0f64;
        let mut mid = a.1;
        for s in [0.5, 0.25, 0.75] {
            let v = source(a.0 + s * span);
            if s == 0.5 {
                mid = v;
            }
            let e = error(between(a.1, b.1, s), v);
            worst = worst.max(if e.is_finite() { e } else { 0.0 });
        }
        (worst > tol).then_some(Interval { error: worst, a, b, mid })
    };
    for w in points.windows(2) {
        if let Some(iv) = test(w[0], w[1], &mut source) {
            heap.push(iv);
        }
    }
    let mut capped = false;
    while let Some(iv) = heap.pop() {
        if points.len() >= budget {
            capped = true;
            break;
        }
        let m = (0.5 * (iv.a.0 + iv.b.0), iv.mid);
        points.push(m);
        for (a, b) in [(iv.a, m), (m, iv.b)] {
            if let Some(child) = test(a, b, &mut source) {
                heap.push(child);
            }
        }
    }
    points.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (frames, values) = points.into_iter().unzip();
    Sampled { frames, values, capped }
}

/// Linear interpolation of vectors (glTF LINEAR translation and scale, 3DA linear keys).
pub fn lerp3(a: DVec3, b: DVec3, s: f64) -> DVec3 {
    a.lerp(b, s)
}

/// Spherical linear interpolation the short way (glTF LINEAR rotation: the writer puts each
/// sample in the hemisphere of the one before).
pub fn slerp(a: DQuat, b: DQuat, s: f64) -> DQuat {
    a.slerp(b, s)
}

/// The distance between two positions (scene units).
pub fn vec3_error(a: DVec3, b: DVec3) -> f64 {
    (a - b).length()
}

/// How far two scales put a point at distance `size` from the origin apart:
/// `size × |a − b|` (largest component).
pub fn scale_error(a: DVec3, b: DVec3, size: f64) -> f64 {
    (a - b).abs().max_element() * size
}

/// How far two rotations put a point at distance `size` from the origin apart, at most:
/// `size × 2 sin(θ / 2)` for the angle θ between them (either sign of a quaternion is the
/// same rotation). Non-unit quaternions are normalized first.
pub fn rotation_error(a: DQuat, b: DQuat, size: f64) -> f64 {
    let (a, b) = (a.normalize(), b.normalize());
    // |q_a − (±q_b)| = 2 sin(θ / 4); the chord of θ is 2 sin(θ / 2).
    let d = (a - b).length().min((a + b).length());
    let quarter = (0.5 * d).clamp(0.0, 1.0).asin();
    size * 2.0 * (2.0 * quarter).sin()
}

/// The scene size the tolerance is relative to: the largest absolute coordinate of the node
/// origins and of the mesh bounding boxes' corners (in `world` placement: one world matrix per
/// node, e.g. the writer's rest pose), or 1 when that is zero or not finite.
pub fn scene_size(scene: &Scene, world: &[DMat4]) -> f64 {
    let mut boxes: Vec<Option<(DVec3, DVec3)>> = vec![None; scene.meshes.len()];
    let mut size = 0.0f64;
    let mut take = |p: DVec3| {
        let m = p.abs().max_element();
        if m.is_finite() {
            size = size.max(m);
        }
    };
    for (i, node) in scene.nodes.iter().enumerate() {
        let Some(w) = world.get(i) else { break };
        take(w.col(3).truncate());
        let Some(m) = node.mesh.filter(|&m| m < scene.meshes.len()) else { continue };
        let bb = *boxes[m].get_or_insert_with(|| {
            let p = &scene.meshes[m].positions;
            let lo = p.iter().fold(DVec3::splat(f64::INFINITY), |a, &b| a.min(b));
            let hi = p.iter().fold(DVec3::splat(f64::NEG_INFINITY), |a, &b| a.max(b));
            (lo, hi)
        });
        if !(bb.0.is_finite() && bb.1.is_finite()) {
            continue;
        }
        let g = *w * node.geometry_transform();
        for c in 0..8 {
            let pick = |bit: usize, lo: f64, hi: f64| if c & bit == 0 { lo } else { hi };
            let p = DVec3::new(
                pick(1, bb.0.x, bb.1.x),
                pick(2, bb.0.y, bb.1.y),
                pick(4, bb.0.z, bb.1.z),
            );
            take(g.transform_point3(p));
        }
    }
    if size > 0.0 && size.is_finite() {
        size
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(f: f64) -> DVec3 {
        DVec3::new(2.0 * f, -f, 0.5)
    }

    #[test]
    fn a_straight_line_needs_only_its_ends() {
        let seeds = seed_frames((0.0, 100.0), []);
        assert_eq!(seeds, [0.0, 100.0]);
        let s = adaptive(&seeds, line, lerp3, vec3_error, 1e-4, ADAPTIVE_BUDGET);
        assert_eq!(s.frames, [0.0, 100.0]);
        assert_eq!(s.values, [line(0.0), line(100.0)]);
        assert!(!s.capped);
    }

    #[test]
    fn a_sine_gets_samples_until_every_chord_is_within_the_tolerance() {
        // sin over one period of 100 frames, amplitude 1: a chord of length h frames strays
        // by about (2π/100)² h² / 8 at its middle (curvature ≤ (2π/100)²), so tol 1e-4 needs
        // h ≤ √(8e-4) × 100 / 2π ≈ 0.45 frames: ~220 intervals, and more than 100.
        let w = std::f64::consts::TAU / 100.0;
        let sine = |f: f64| DVec3::new((w * f).sin(), 0.0, 0.0);
        let seeds = seed_frames((0.0, 100.0), []);
        let s = adaptive(&seeds, sine, lerp3, vec3_error, 1e-4, ADAPTIVE_BUDGET);
        assert!(s.frames.len() > 100 && s.frames.len() < 1000, "{}", s.frames.len());
        assert!(s.frames.windows(2).all(|p| p[0] < p[1]));
        // At every hundredth of a frame the chord is within the tolerance (plus a margin for
        // points between the tested quarters: the sine's chord error is within 1.01 tol).
        for i in 0..=10_000 {
            let f = i as f64 / 100.0;
            let j = s.frames.partition_point(|&x| x <= f).clamp(1, s.frames.len() - 1);
            let (a, b) = (s.frames[j - 1], s.frames[j]);
            let v = lerp3(s.values[j - 1], s.values[j], (f - a) / (b - a));
            assert!((v.x - (w * f).sin()).abs() <= 1.01e-4, "frame {f}");
        }
        // Where the sine is nearly straight (around its zero at 50) the samples are sparser
        // than at its peak (25).
        let near = |c: f64| s.frames.iter().filter(|&&f| (f - c).abs() < 5.0).count();
        assert!(near(50.0) < near(25.0), "{} {}", near(50.0), near(25.0));
    }

    #[test]
    fn a_full_turn_between_two_keys_comes_out_spinning() {
        // A 3DS relative rotation of 350° about Z between keys 0 and 10: the absolute
        // quaternions at the keys are 10° apart, slerp would turn back 10° the short way.
        let spin = |f: f64| DQuat::from_rotation_z((350.0f64).to_radians() * f / 10.0);
        let seeds = seed_frames((0.0, 10.0), [&[0.0, 10.0][..]]);
        let size = 1.0;
        let s = adaptive(&seeds, spin, slerp, |a, b| rotation_error(a, b, size), 1e-4, 1 << 16);
        assert!(!s.capped);
        // Consecutive samples turn less than 180° (so each slerp goes the source's way) and
        // the written curve, put in one hemisphere after another, ends having turned 350°.
        let mut turned = 0.0;
        for p in s.values.windows(2) {
            let step = p[0].angle_between(p[1]);
            assert!(step < std::f64::consts::PI, "{step}");
            turned += step;
        }
        assert!((turned - 350f64.to_radians()).abs() < 1e-6, "{}", turned.to_degrees());
        for i in 0..=1000 {
            let f = i as f64 / 100.0;
            let j = s.frames.partition_point(|&x| x <= f).clamp(1, s.frames.len() - 1);
            let (a, b) = (s.frames[j - 1], s.frames[j]);
            let q = slerp(s.values[j - 1], s.values[j], (f - a) / (b - a));
            assert!(rotation_error(q, spin(f), size) <= 1.01e-4, "frame {f}");
        }
    }

    #[test]
    fn seeds_take_keys_and_jump_leads_and_never_crowd_a_key() {
        // The 2013 3ds Max export of issue 16: keys at 0.99999 and 359.00001 in 0..360.
        let keys = [0.99999, 359.00001];
        assert_eq!(seed_frames((0.0, 360.0), [&keys[..]]), [0.0, 0.99999, 359.00001, 360.0]);
        // A jump at 5 gets 5 − JUMP_LEAD; a key 1e-5 past the start and one 1e-5 before the
        // end merge into the range ends; keys outside the range are left out.
        let keys = [0.00001, 5.0, 5.0, 9.99999, 12.0];
        let got = seed_frames((0.0, 10.0), [&keys[..]]);
        assert_eq!(got, [0.0, 5.0 - keep::JUMP_LEAD, 5.0, 10.0]);
        assert!(seed_frames((1.0, f64::NAN), [&keys[..]]).is_empty());
    }

    #[test]
    fn the_budget_bounds_the_samples_and_says_so() {
        let sine = |f: f64| DVec3::new(f.sin(), 0.0, 0.0);
        let seeds = seed_frames((0.0, 1000.0), []);
        let s = adaptive(&seeds, sine, lerp3, vec3_error, 1e-9, 50);
        assert_eq!(s.frames.len(), 50);
        assert!(s.capped);
        // Nothing to follow (NaN) adds no samples.
        let s = adaptive(&seeds, |_| DVec3::NAN, lerp3, vec3_error, 1e-9, 50);
        assert_eq!((s.frames.len(), s.capped), (2, false));
    }

    #[test]
    fn error_measures_are_distances_at_the_scene_radius() {
        let z90 = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        // 90° moves a point at radius 2 by the chord 2 × √2.
        assert!((rotation_error(DQuat::IDENTITY, z90, 2.0) - 2.0 * 2f64.sqrt()).abs() < 1e-12);
        assert!(rotation_error(z90, -z90, 1.0) < 1e-12);
        assert_eq!(scale_error(DVec3::ONE, DVec3::new(1.0, 1.5, 1.0), 4.0), 2.0);
        assert_eq!(vec3_error(DVec3::ZERO, DVec3::new(3.0, 4.0, 0.0)), 5.0);
    }
}
