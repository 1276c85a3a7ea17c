//! Adaptive, error-bounded resampling (issue 16, goal 3): the samples a writer takes of a
//! channel that has no exact form in its file format, so that the format's own interpolation
//! between them (LINEAR vectors, slerped quaternions) stays within a tolerance of the source
//! curve at **every** time, not only at integer frames.
//!
//! 1. **Seeds**: both ends of the written range, every key inside it, and the instant
//!    [`keep::JUMP_LEAD`] frames before every jump (two keys of one track on one frame), so a
//!    linear curve comes out exact with its keys alone and a jump stays a jump
//!    ([`seed_frames`]: seeds closer than [`MERGE`] frames are one sample, never a sample
//!    crowding a key). The glTF writer also seeds every source frame (`keep::sample_frames`,
//!    which merges a frame with a key closer than `keep::SAMPLE_MERGE`), so that the written
//!    curve passes through the source wherever a frame-based tool (Blender, FBX2glTF, the
//!    ufbx frame references) looks at it.
//! 2. **Turns** ([`turn_seeds`]): the error test compares values, and a rotation
//!    that turns a whole number of times between two test points looks still to it (a 3DS
//!    relative key of several turns: `secondreality/CITY.3DS`'s `HeliRotor` was 217 units off
//!    at frame 2090.25 against a tolerance of 0.38 without this rule). So a rotation channel's
//!    key segments get seeds at most [`MAX_TURN`] of turn apart (by the turn their keys make);
//!    the error test refines from there.
//! 3. **Error test** ([`adaptive`]): between two neighbouring samples the written
//!    interpolation is compared with the source curve at a quarter, half and three quarters of
//!    the interval (at its middle only for an interval of at most [`SHORT_SPAN`] frame); past
//!    the tolerance the interval is split at its middle and both halves are
//!    tested again, down to [`min_span`] frames.
//!    At most `budget` samples per channel ([`ADAPTIVE_BUDGET`] for the writers): the
//!    intervals with the largest errors are split first, the ones left past the budget keep
//!    their chords and [`Sampled::capped`] says so (the writer warns).
//! 4. **Thinning** ([`thin`]): samples the chord of their neighbours reproduces to a small
//!    `eps` (below `f32` precision) are left out, so a straight or still stretch keeps only its
//!    ends and the seeds of step 1 cost nothing in the file where the curve does not bend.
//!
//! The error measures are the writer's: [`vec3_error`] (a position's distance),
//! [`scale_error`] and [`rotation_error`] (a scale's or rotation's effect on a point at the
//! scene's radius, [`scene_size`]), against [`TOLERANCE`] × the scene size.
//!
//! The glTF writer resamples each channel of a node whose glTF TRS is its own with it. Nodes
//! whose glTF local matrix is made from the composed pose (pivots, non-`RSrs` inheritance,
//! aim helpers) and morph weights stay on the per-frame grid: one partial pose per frame
//! serves them all, where a per-target sampler would pose every target's ancestry at every
//! one of its samples (quadratic in the depth of a chain). The 3DA writer's keys are whole
//! frames: it keeps its grid (`anim::keep::resample_frames`, exact at every frame) and shares
//! the last step, [`thin`].

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::{DMat4, DQuat, DVec3};

use crate::anim::keep;
use crate::anim::{ChannelTarget, RotationTrack, Track};
use crate::scene::Scene;

/// The tolerance relative to the scene size ([`scene_size`]): 1e-4, the corpus checks'
/// tolerance (issue 16, goal 3).
pub const TOLERANCE: f64 = 1e-4;

/// Whether `r` can be a writer's tolerance relative to the scene size (glTF's and USD's
/// `tolerance`, CLI `--tolerance`): a number above 0 and at most 1. Errors: the message
/// `tolerance R: expected …`, in words, for the caller to wrap.
pub fn check_tolerance(r: f64) -> Result<f64, String> {
    if r > 0.0 && r <= 1.0 {
        Ok(r)
    } else {
        Err(format!(
            "tolerance {r}: expected a number above 0 and at most 1 (relative to the scene size)"
        ))
    }
}

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

/// Where a channel's value can bend ([`channel_span`]): what decides where a writer needs
/// seeds at every frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Span {
    /// The value never changes (no track has two keys).
    Still,
    /// The value bends only within these frames (first and last key): outside them it holds
    /// or goes on in a straight line (constant or keep-slope extrapolation).
    Within(f64, f64),
    /// The value may bend anywhere (it repeats or cycles outside its keys, or layers blend it).
    Anywhere,
}

impl Span {
    /// Where either of two channels' values can bend.
    pub fn join(self, other: Span) -> Span {
        match (self, other) {
            (Span::Still, s) | (s, Span::Still) => s,
            (Span::Anywhere, _) | (_, Span::Anywhere) => Span::Anywhere,
            (Span::Within(a, b), Span::Within(c, d)) => Span::Within(a.min(c), b.max(d)),
        }
    }
}

/// Where `target`'s value can bend: [`Span::Still`] when none of its tracks has two keys (a
/// track of one key holds it, or goes on from it in a straight line), [`Span::Within`] its
/// keys when no track repeats or cycles outside them (3DS repeat, FBX `R`/`A`/`M`),
/// [`Span::Anywhere`] otherwise and for values FBX animation layers blend.
pub fn channel_span(target: &ChannelTarget) -> Span {
    use crate::anim::Extrapolation;
    fn track<T>(t: &Track<T>) -> Span {
        let cycles =
            |e: Extrapolation| matches!(e, Extrapolation::Repeat | Extrapolation::Cycle { .. });
        match (t.keys.first(), t.keys.last()) {
            (Some(a), Some(b)) if t.keys.len() > 1 => {
                if cycles(t.before)
                    || cycles(t.after)
                    || !(a.frame.is_finite() && b.frame.is_finite())
                {
                    Span::Anywhere
                } else {
                    Span::Within(a.frame, b.frame)
                }
            }
            _ => Span::Still,
        }
    }
    let each = |xyz: &[Option<Track<f64>>; 3]| {
        xyz.iter().flatten().map(track).fold(Span::Still, Span::join)
    };
    match target {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
            track(t)
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => track(t),
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => track(t),
        ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. }) => each(xyz),
        ChannelTarget::TranslationXyz(xyz) | ChannelTarget::ScaleXyz(xyz) => each(xyz),
        ChannelTarget::Hidden(t) => track(t),
        ChannelTarget::Morph(t) => track(t),
        ChannelTarget::Fov(t)
        | ChannelTarget::Roll(t)
        | ChannelTarget::Hotspot(t)
        | ChannelTarget::Falloff(t) => track(t),
        ChannelTarget::Property { track: t, .. } => track(t),
        ChannelTarget::Layered(_) => Span::Anywhere,
    }
}

/// Where `target`'s value can bend, as sorted, disjoint frame intervals (each its first and
/// last frame): the key segments of its tracks that do not hold a value, merged where they
/// touch. A segment that leaves its key with [`Interpolation::Step`](crate::anim::Interpolation::Step) or
/// [`Interpolation::StepNext`](crate::anim::Interpolation::StepNext) holds a value between its keys (it jumps at a key, where the
/// writers seed already), so it adds none; neither does a track of one key. `None` where the
/// value can bend anywhere: a track that repeats or cycles outside its keys (3DS repeat, FBX
/// `R`/`A`/`M`) or has a key at a non-finite frame, and values FBX animation layers blend.
/// [`channel_span`] is the hull of these intervals; a stepped track of keys spread over ten
/// million frames (`maya_huge_stepped_tangents`) bends nowhere, where its hull asked for
/// seeds across the whole range.
pub fn bending_intervals(target: &ChannelTarget) -> Option<Vec<(f64, f64)>> {
    use crate::anim::{Extrapolation, Interpolation};
    fn track<T>(t: &Track<T>, out: &mut Vec<(f64, f64)>) -> Option<()> {
        let cycles =
            |e: Extrapolation| matches!(e, Extrapolation::Repeat | Extrapolation::Cycle { .. });
        if t.keys.len() < 2 {
            return Some(());
        }
        let ends = t.keys.first().zip(t.keys.last());
        if cycles(t.before)
            || cycles(t.after)
            || ends.is_none_or(|(a, b)| !(a.frame.is_finite() && b.frame.is_finite()))
        {
            return None;
        }
        for w in t.keys.windows(2) {
            let holds = matches!(w[0].interpolation, Interpolation::Step | Interpolation::StepNext);
            if !holds && w[1].frame > w[0].frame {
                out.push((w[0].frame, w[1].frame));
            }
        }
        Some(())
    }
    let mut out = Vec::new();
    let each = |xyz: &[Option<Track<f64>>; 3], out: &mut Vec<(f64, f64)>| {
        xyz.iter().flatten().try_for_each(|t| track(t, out))
    };
    match target {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
            track(t, &mut out)
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => track(t, &mut out),
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => track(t, &mut out),
        ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. }) => each(xyz, &mut out),
        ChannelTarget::TranslationXyz(xyz) | ChannelTarget::ScaleXyz(xyz) => each(xyz, &mut out),
        ChannelTarget::Hidden(t) => track(t, &mut out),
        ChannelTarget::Morph(t) => track(t, &mut out),
        ChannelTarget::Fov(t)
        | ChannelTarget::Roll(t)
        | ChannelTarget::Hotspot(t)
        | ChannelTarget::Falloff(t) => track(t, &mut out),
        ChannelTarget::Property { track: t, .. } => track(t, &mut out),
        ChannelTarget::Layered(_) => None,
    }?;
    Some(merge_intervals(out))
}

/// Where `target`'s value holds, as sorted, disjoint **open** frame intervals: strictly
/// inside them every frame gives the same value (bit for bit), so a writer sampling them may
/// take one sample for all. A track holds inside a segment that leaves its key with
/// [`Interpolation::Step`](crate::anim::Interpolation::Step) or [`Interpolation::StepNext`](crate::anim::Interpolation::StepNext), before its first key when it
/// extrapolates with [`Extrapolation::Constant`](crate::anim::Extrapolation::Constant) or [`Extrapolation::HoldLast`](crate::anim::Extrapolation::HoldLast) (the first or
/// the last key's value) and after its last key with [`Extrapolation::Constant`](crate::anim::Extrapolation::Constant); a track of
/// no keys holds everywhere. A value of several tracks (per-component curves) holds where all
/// of them do. Layered blends ([`ChannelTarget::Layered`]) never hold. Frames are the
/// animation's clock; intervals may be unbounded (`±∞`).
pub fn held_intervals(target: &ChannelTarget) -> Vec<(f64, f64)> {
    use crate::anim::{Extrapolation, Interpolation};
    const ALL: (f64, f64) = (f64::NEG_INFINITY, f64::INFINITY);
    fn track<T>(t: &Track<T>) -> Vec<(f64, f64)> {
        let (Some(first), Some(last)) = (t.keys.first(), t.keys.last()) else {
            return vec![ALL];
        };
        if !t.keys.iter().all(|k| k.frame.is_finite()) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if matches!(t.before, Extrapolation::Constant | Extrapolation::HoldLast) {
            out.push((f64::NEG_INFINITY, first.frame));
        }
        for w in t.keys.windows(2) {
            let holds = matches!(w[0].interpolation, Interpolation::Step | Interpolation::StepNext);
            if holds && w[1].frame > w[0].frame {
                out.push((w[0].frame, w[1].frame));
            }
        }
        if matches!(t.after, Extrapolation::Constant) {
            out.push((last.frame, f64::INFINITY));
        }
        out
    }
    let each = |xyz: &[Option<Track<f64>>; 3]| {
        xyz.iter().flatten().map(track).fold(vec![ALL], |a, b| intersect_intervals(&a, &b))
    };
    match target {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
            track(t)
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => track(t),
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => track(t),
        ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. }) => each(xyz),
        ChannelTarget::TranslationXyz(xyz) | ChannelTarget::ScaleXyz(xyz) => each(xyz),
        ChannelTarget::Hidden(t) => track(t),
        ChannelTarget::Morph(t) => track(t),
        ChannelTarget::Fov(t)
        | ChannelTarget::Roll(t)
        | ChannelTarget::Hotspot(t)
        | ChannelTarget::Falloff(t) => track(t),
        ChannelTarget::Property { track: t, .. } => track(t),
        ChannelTarget::Layered(_) => Vec::new(),
    }
}

/// The intervals where both sorted, disjoint interval lists `a` and `b` hold (each interval
/// open, as [`held_intervals`] gives them).
pub fn intersect_intervals(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if lo < hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Whether frames `a` ≤ `b` lie strictly inside one interval of `held` (sorted, disjoint,
/// open: [`held_intervals`]), so a value that holds there is the same at both.
pub fn both_held(held: &[(f64, f64)], a: f64, b: f64) -> bool {
    let i = held.partition_point(|h| h.1 <= a);
    held.get(i).is_some_and(|&(lo, hi)| lo < a && b < hi)
}

/// `intervals` sorted and merged where they overlap or touch.
pub fn merge_intervals(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(intervals.len());
    for (a, b) in intervals {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The most a rotation channel's seeds turn between them before the error test (radians):
/// an eighth of a turn, so that the quarter, half and three-quarter points see every turn and
/// a TCB segment's overshoot has room within the interval.
pub const MAX_TURN: f64 = std::f64::consts::FRAC_PI_4;

/// Extra seed frames within `range` for a rotation channel, so that between two seeds the
/// rotation's keys turn at most [`MAX_TURN`]: every key segment (two keys of one track) that
/// turns θ is cut into ⌈θ / MAX_TURN⌉ equal pieces. The turn of a segment is estimated from its
/// keys: a 3DS relative key's own angle (its turn from the key before, whole turns included),
/// the angle between two absolute quaternion keys, or the change of an Euler component
/// (radians; each component's segments cut on their own). Outside the keys, a track that
/// repeats or cycles (3DS repeat, FBX `R`/`A`/`M` extrapolation) has its cuts repeated in every
/// cycle within the range (mirrored in the backward cycles of `M`). The estimate is of the
/// keys' chords; a TCB or Bézier segment's overshoot is what [`MAX_TURN`]'s margin is for. At
/// most `budget` seeds (the rest are left out); unsorted.
pub fn turn_seeds(track: &RotationTrack, range: (f64, f64), budget: usize) -> Vec<f64> {
    let mut out = Vec::new();
    match track {
        RotationTrack::Relative(t) => {
            segment_cuts(t, |_, b| b.angle.abs(), range, budget, &mut out)
        }
        RotationTrack::Quat(t) => {
            let angle =
                |a: &DQuat, b: &DQuat| 2.0 * a.normalize().dot(b.normalize()).abs().min(1.0).acos();
            segment_cuts(t, angle, range, budget, &mut out)
        }
        RotationTrack::Euler { xyz, .. } => {
            for t in xyz.iter().flatten() {
                segment_cuts(t, |a, b| (b - a).abs(), range, budget, &mut out);
            }
        }
    }
    out
}

/// The [`turn_seeds`] of the rotation channels of node `k` and, unless `own_only`, of every
/// ancestor (`channels`: [`crate::anim::channels_by_node`]), over `range`: what a writer
/// seeds a node's sampler with when its written transform turns with its ancestors' turns
/// (a matrix relative to a parent that is not the node's own, an aim helper), so that a
/// whole turn between two seeds cannot hide from the error test. Unsorted; the walk stops
/// after as many steps as there are nodes (a cycle in the parents is not followed).
pub fn ancestry_turn_seeds(
    scene: &crate::scene::Scene,
    channels: &[Vec<&ChannelTarget>],
    k: usize,
    range: (f64, f64),
    own_only: bool,
) -> Vec<f64> {
    let mut seeds = Vec::new();
    let mut at = Some(k);
    let mut depth = 0;
    while let Some(i) = at {
        for c in channels.get(i).map_or(&[][..], Vec::as_slice) {
            if let ChannelTarget::Rotation(r) = c {
                seeds.extend(turn_seeds(r, range, ADAPTIVE_BUDGET / 2));
            }
        }
        at = if own_only { None } else { scene.nodes.get(i).and_then(|n| n.parent) };
        depth += 1;
        if depth > scene.nodes.len() {
            break;
        }
    }
    seeds
}

/// The cuts of [`turn_seeds`] for one track whose segments turn `turn(a, b)` radians.
fn segment_cuts<T>(
    t: &Track<T>,
    turn: impl Fn(&T, &T) -> f64,
    (lo, hi): (f64, f64),
    budget: usize,
    out: &mut Vec<f64>,
) {
    use crate::anim::{CycleMode, Extrapolation};
    let (Some(first), Some(last)) = (t.keys.first(), t.keys.last()) else { return };
    let (k0, period) = (first.frame, last.frame - first.frame);
    // The cuts within the keyed span, as offsets from its first key.
    let mut cuts = Vec::new();
    for w in t.keys.windows(2) {
        let (a, b) = (w[0].frame, w[1].frame);
        let theta = turn(&w[0].value, &w[1].value);
        if !(b > a && theta.is_finite() && a.is_finite() && b.is_finite()) {
            continue;
        }
        let n = (theta / MAX_TURN).ceil().min(budget as f64) as usize;
        cuts.extend((1..n).map(|i| a - k0 + (b - a) * i as f64 / n as f64));
        if cuts.len() >= budget {
            break;
        }
    }
    if cuts.is_empty() || !(lo.is_finite() && hi.is_finite() && k0.is_finite()) {
        return;
    }
    let cycles =
        |e: Extrapolation| matches!(e, Extrapolation::Repeat | Extrapolation::Cycle { .. });
    let mirror =
        |e: Extrapolation| matches!(e, Extrapolation::Cycle { mode: CycleMode::Mirror, .. });
    let (first_cycle, last_cycle) = if period > 0.0 {
        let before = if cycles(t.before) { ((lo - k0) / period).floor().min(0.0) } else { 0.0 };
        let after = if cycles(t.after) { ((hi - k0) / period).floor().max(0.0) } else { 0.0 };
        (before, after)
    } else {
        (0.0, 0.0)
    };
    let mut c = first_cycle;
    let mut steps = 0usize;
    while c <= last_cycle && out.len() < budget && steps < budget {
        let mirrored = c != 0.0
            && (c.abs() as u64) % 2 == 1
            && mirror(if c < 0.0 { t.before } else { t.after });
        for &s in &cuts {
            let f = k0 + c * period + if mirrored { period - s } else { s };
            if f > lo && f < hi && out.len() < budget {
                out.push(f);
            }
        }
        c += 1.0;
        steps += 1;
    }
}

/// Intervals of at most this many frames (1) are tested at their middle only: the writers seed
/// every frame and key where a curve bends, so such an interval lies inside one smooth
/// segment of the source, whose chord strays most near its middle. Longer intervals are
/// tested at a quarter, half and three quarters.
pub const SHORT_SPAN: f64 = 1.0;

/// The shortest interval (frames) the error test splits near frame `f`: [`MIN_SPAN`], or
/// four `f32` steps at `f` when that is longer (`4 × f32::EPSILON × |f|`), so that the halves of
/// a split stay distinct times when written as `f32` frames or seconds (at frame 3,000,000 that
/// is 1.4 frames: a step there becomes a ramp of that length rather than two samples on one
/// time, of which a writer would drop one).
pub fn min_span(f: f64) -> f64 {
    MIN_SPAN.max(4.0 * f64::from(f32::EPSILON) * f.abs())
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
/// ([`seed_frames`], sorted), then more where the written interpolation `curve` between two
/// samples differs from the source by more than `tol` (by [`Curve::error`]) at a quarter, half
/// or three quarters of an interval (the half only for intervals of at most [`SHORT_SPAN`]
/// frames). Intervals shorter than `2 ×` [`min_span`] are not split; at most
/// `budget` samples (never fewer than the seeds) are taken. A non-finite error counts as
/// within the tolerance (the curve has no value there to follow).
pub fn adaptive<V: Copy, C: Curve<V>>(
    seeds: &[f64],
    mut source: impl FnMut(f64) -> V,
    curve: &C,
    tol: f64,
    budget: usize,
) -> Sampled<V> {
    let points = seeds.iter().map(|&f| (f, source(f))).collect();
    adaptive_from(points, source, curve, tol, budget)
}

/// [`adaptive`] from seeds already evaluated: `points` are the seeds with the source's value
/// at each (sorted by frame), for a writer that looks at the seed values first (the glTF
/// writer measures how far a translation reaches).
///
/// Which intervals are split does not depend on the order they are tested in, and neither do
/// the samples, unless the budget stops the splitting. So they are split depth first in frame
/// order (every source sample near the one before, where the key cursors of
/// [`crate::anim::ChannelSampler`] find their segment at once, and no heap), and only a
/// channel that reaches the budget is split again, largest error first, for the samples the
/// budget keeps.
pub fn adaptive_from<V: Copy, C: Curve<V>>(
    points: Vec<(f64, V)>,
    mut source: impl FnMut(f64) -> V,
    curve: &C,
    tol: f64,
    budget: usize,
) -> Sampled<V> {
    let (mut points, capped) = match split_in_order(&points, &mut source, curve, tol, budget) {
        Some(all) => (all, false),
        None => split_by_error(points, &mut source, curve, tol, budget),
    };
    // Split in order, sorted seeds come out sorted: no sort (and no scratch buffer) then.
    if !points.is_sorted_by(|x, y| x.0.total_cmp(&y.0).is_le()) {
        points.sort_by(|x, y| x.0.total_cmp(&y.0));
    }
    let (frames, values) = points.into_iter().unzip();
    Sampled { frames, values, capped }
}

/// The error test of [`adaptive`] for the interval from sample `a` to `b`: the interval to
/// split, with its error and the source's value at its middle, or `None` when it is within
/// `tol` or too short to split. With `exact` false the error is only compared with `tol`
/// ([`Curve::error_above`], [`Curve::middle_within`]: the same intervals are split, and the
/// error returned is at least `tol` but not the worst one), as depth-first splitting needs;
/// the largest-first splitting of a capped channel orders intervals by their exact error.
fn test_interval<V: Copy, C: Curve<V>>(
    a: (f64, V),
    b: (f64, V),
    source: &mut impl FnMut(f64) -> V,
    (curve, tol, exact): (&C, f64, bool),
) -> Option<Interval<V>> {
    let span = b.0 - a.0;
    if span.is_nan() || span < 2.0 * min_span(a.0.abs().max(b.0.abs())) {
        return None;
    }
    // The chord is made when a test needs it: a middle within the tolerance by
    // `Curve::middle_within` needs none.
    let mut chord = None;
    let mut worst = 0.0f64;
    let mut mid = a.1;
    let at: &[f64] = if span <= SHORT_SPAN { &[0.5] } else { &[0.5, 0.25, 0.75] };
    for &s in at {
        let v = source(a.0 + s * span);
        if s == 0.5 {
            mid = v;
            if !exact && curve.middle_within(a.1, b.1, v, tol) {
                continue;
            }
        }
        let chord = chord.get_or_insert_with(|| curve.chord(a.1, b.1));
        let e = if exact {
            curve.error(curve.at(chord, s), v)
        } else {
            curve.error_above(curve.at(chord, s), v, tol)
        };
        worst = worst.max(if e.is_finite() { e } else { 0.0 });
    }
    (worst > tol).then_some(Interval { error: worst, a, b, mid })
}

/// The seeds `points` and every middle [`test_interval`] asks for, split depth first in
/// frame order (an interval's first half, its middle, then its second half); `None` when a
/// split would find `budget` samples already taken (then the budget decides which splits are
/// made: [`split_by_error`]).
fn split_in_order<V: Copy, C: Curve<V>>(
    points: &[(f64, V)],
    source: &mut impl FnMut(f64) -> V,
    curve: &C,
    tol: f64,
    budget: usize,
) -> Option<Vec<(f64, V)>> {
    enum Step<V> {
        Split(Interval<V>),
        Take((f64, V)),
    }
    let mut out = Vec::with_capacity(points.len());
    let mut taken = points.len();
    let mut stack = Vec::new();
    for w in points.windows(2) {
        out.push(w[0]);
        if let Some(iv) = test_interval(w[0], w[1], source, (curve, tol, false)) {
            stack.push(Step::Split(iv));
        }
        while let Some(step) = stack.pop() {
            let iv = match step {
                Step::Take(p) => {
                    out.push(p);
                    continue;
                }
                Step::Split(iv) => iv,
            };
            if taken >= budget {
                return None;
            }
            taken += 1;
            let m = (0.5 * (iv.a.0 + iv.b.0), iv.mid);
            let first = test_interval(iv.a, m, source, (curve, tol, false));
            if let Some(second) = test_interval(m, iv.b, source, (curve, tol, false)) {
                stack.push(Step::Split(second));
            }
            stack.push(Step::Take(m));
            if let Some(first) = first {
                stack.push(Step::Split(first));
            }
        }
    }
    out.extend(points.last());
    Some(out)
}

/// The seeds `points` and the middles [`test_interval`] asks for, the interval with the
/// largest error split first, until `budget` samples are taken (unsorted), and whether the
/// budget stopped it.
fn split_by_error<V: Copy, C: Curve<V>>(
    mut points: Vec<(f64, V)>,
    source: &mut impl FnMut(f64) -> V,
    curve: &C,
    tol: f64,
    budget: usize,
) -> (Vec<(f64, V)>, bool) {
    let mut heap = BinaryHeap::new();
    for w in points.windows(2) {
        if let Some(iv) = test_interval(w[0], w[1], source, (curve, tol, true)) {
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
            if let Some(child) = test_interval(a, b, source, (curve, tol, true)) {
                heap.push(child);
            }
        }
    }
    (points, capped)
}

/// Most error tests [`thin`] makes per sample (2⁶). Past it the intervals not yet settled
/// keep all their samples, so no curve makes thinning cost more than this many tests a sample.
pub const THIN_WORK: usize = 64;

/// `sampled` without the samples the written interpolation reproduces (Douglas–Peucker, with
/// the writer's interpolation and error measure, `curve`): for an interval of kept samples
/// `a`, `b` the sample between them farthest (by [`Curve::error`]) from the chord of `a` and
/// `b` at its time is kept when it is farther than `eps`, or when [`Curve::joinable`] refuses
/// the interval (a rotation's: more than a quarter turn, where slerp could go the other way
/// round; then the middle sample is kept), and both halves are thinned
/// the same way; else every sample between them is left out. The first and last sample stay.
/// With `eps` below the `f32` precision of the values this keeps every sample's value as
/// written, and so the curve within the tolerance it was sampled to (plus `eps`), with only
/// the samples a bend needs: a straight or still stretch keeps its ends. At most
/// [`THIN_WORK`] tests per sample (past it the rest is kept).
pub fn thin<V: Copy, C: Curve<V>>(sampled: Sampled<V>, curve: &C, eps: f64) -> Sampled<V> {
    let Sampled { frames, values, capped } = sampled;
    let n = frames.len();
    if n < 3 {
        return Sampled { frames, values, capped };
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    let mut work = THIN_WORK.saturating_mul(n);
    let mut stack = vec![(0usize, n - 1)];
    while let Some((a, b)) = stack.pop() {
        if b - a < 2 {
            continue;
        }
        let split = if b - a - 1 > work {
            None
        } else if !curve.joinable(values[a], values[b])
            || frames[b].partial_cmp(&frames[a]) != Some(Ordering::Greater)
        {
            Some((a + b) / 2)
        } else {
            work -= b - a - 1;
            let (fa, fb) = (frames[a], frames[b]);
            let chord = curve.chord(values[a], values[b]);
            let (mut worst, mut at) = (eps, None);
            for j in a + 1..b {
                let s = (frames[j] - fa) / (fb - fa);
                let e = curve.error_above(curve.at(&chord, s), values[j], worst);
                // A sample whose error is not a number is kept.
                if e.is_nan() || e > worst {
                    worst = if e.is_nan() { f64::INFINITY } else { e };
                    at = Some(j);
                }
            }
            match at {
                None => continue,
                Some(j) => Some(j),
            }
        };
        match split {
            Some(j) => {
                keep[j] = true;
                stack.push((a, j));
                stack.push((j, b));
            }
            // Out of work: the interval keeps its samples.
            None => keep[a..=b].iter_mut().for_each(|k| *k = true),
        }
    }
    let (frames, values) =
        frames.into_iter().zip(values).zip(keep).filter_map(|(fv, k)| k.then_some(fv)).unzip();
    Sampled { frames, values, capped }
}

/// How a writer's keys interpolate between two samples and how far apart two values are: what
/// [`adaptive`] tests and [`thin`] keeps to. A chord (`Chord`) is made once for two samples and
/// evaluated at many fractions, so the part of the interpolation that depends only on its ends
/// (a slerp's angle) is worked out once.
pub trait Curve<V: Copy> {
    /// The interpolation from one sample to the next, ready to evaluate.
    type Chord;
    /// The chord from sample value `a` to `b`.
    fn chord(&self, a: V, b: V) -> Self::Chord;
    /// The written value at fraction `s ∈ [0, 1]` of the way along `chord`.
    fn at(&self, chord: &Self::Chord, s: f64) -> V;
    /// How far the written value `written` is from the source value `source` (scene units).
    fn error(&self, written: V, source: V) -> f64;
    /// [`Curve::error`] when it may be more than `bound`; otherwise any value at most
    /// `bound`, for a measure that can tell cheaply (default: the error). [`thin`] asks this
    /// of every sample against the largest error so far, and only a larger one matters.
    fn error_above(&self, written: V, source: V, bound: f64) -> f64 {
        let _ = bound;
        self.error(written, source)
    }
    /// `true` only when the written value at the middle of the chord from `a` to `b` is
    /// within `bound` of `source`, [`Curve::error_above`]`(at(chord(a, b), 0.5), source,
    /// bound) ≤ bound`, by a test cheaper than making the chord; `false` when unsure
    /// (default: always unsure).
    fn middle_within(&self, a: V, b: V, source: V, bound: f64) -> bool {
        let _ = (a, b, source, bound);
        false
    }
    /// Whether two samples may be joined by one chord (default: always).
    fn joinable(&self, _a: V, _b: V) -> bool {
        true
    }
}

/// Positions (glTF LINEAR translation, 3DA linear position keys): linear interpolation,
/// error the distance ([`vec3_error`]).
#[derive(Debug, Clone, Copy)]
pub struct Positions;

/// Scales (glTF LINEAR scale): linear interpolation, error the scale's effect on a point at
/// distance `size` from the origin ([`scale_error`]).
#[derive(Debug, Clone, Copy)]
pub struct Scales {
    /// The scene size (scene units, [`scene_size`]).
    pub size: f64,
}

/// Rotations (glTF LINEAR rotation, 3DA linear rotation keys): unit quaternions slerped the
/// short way ([`slerp`]), error the rotation's effect on a point at distance `size` from the
/// origin ([`rotation_error`]); two samples are joinable when they are at most a quarter turn
/// apart (a chord past a half turn would go the other way round, and a quarter keeps well
/// clear of it).
#[derive(Debug, Clone, Copy)]
pub struct Rotations {
    /// The scene size (scene units, [`scene_size`]; 1 for a unit sphere).
    pub size: f64,
}

/// The error measure of a vector channel written LINEAR: every [`VectorMeasure`] is a
/// [`Curve`] of lerped chords ([`lerp3`]) that differs only in how it measures.
pub trait VectorMeasure {
    /// How far the written vector `written` is from the source value `source` (scene units).
    fn error(&self, written: DVec3, source: DVec3) -> f64;
}

impl VectorMeasure for Positions {
    fn error(&self, written: DVec3, source: DVec3) -> f64 {
        vec3_error(written, source)
    }
}

impl VectorMeasure for Scales {
    fn error(&self, written: DVec3, source: DVec3) -> f64 {
        scale_error(written, source, self.size)
    }
}

impl<M: VectorMeasure> Curve<DVec3> for M {
    type Chord = (DVec3, DVec3);
    fn chord(&self, a: DVec3, b: DVec3) -> (DVec3, DVec3) {
        (a, b)
    }
    fn at(&self, &(a, b): &(DVec3, DVec3), s: f64) -> DVec3 {
        lerp3(a, b, s)
    }
    fn error(&self, written: DVec3, source: DVec3) -> f64 {
        VectorMeasure::error(self, written, source)
    }
}

impl Curve<DQuat> for Rotations {
    type Chord = SlerpChord;
    fn chord(&self, a: DQuat, b: DQuat) -> SlerpChord {
        SlerpChord::new(a, b)
    }
    fn at(&self, chord: &SlerpChord, s: f64) -> DQuat {
        chord.at(s)
    }
    fn error(&self, written: DQuat, source: DQuat) -> f64 {
        rotation_error(written, source, self.size)
    }
    /// The measure `size × 2 sin(2 asin(d / 2))` of the `chord_distance` `d` is
    /// `2 size × d √(1 − d²/4)`, at most `2 size × d`. glibc's `asin` and `sin` are within
    /// about an ulp (its manual's table of errors: 1 each on x86_64), and `d` is 0 or far
    /// above the subnormals (it is a square root), so the computed measure is within a few
    /// ulps of that bound. When `2 size × d`, a normal number raised by 1e-12 (thousands of
    /// ulps), is still at most `bound`, the measure is too, and its `asin` and `sin` are left
    /// out.
    fn error_above(&self, written: DQuat, source: DQuat, bound: f64) -> f64 {
        let d = chord_distance(written, source);
        let most = 2.0 * self.size * d;
        if most >= f64::MIN_POSITIVE && most * (1.0 + 1e-12) <= bound {
            return bound;
        }
        error_of_distance(d, self.size)
    }
    /// The middle of a [`SlerpChord`] is `(a + b′)·k` for a scalar `k > 0` (`b′` is `b` in the
    /// hemisphere of `a`, as the chord takes it: the slerp's two sines are equal there), and
    /// `chord_distance` normalizes what it compares, so the middle's distance to `source` is
    /// that of `a + b′`, with no arc cosine or sine. The two differ only by the rounding of
    /// the slerp (a few ulps of a unit quaternion); `MIDDLE_SLACK` (1e-10) more than covers it, so
    /// the bound [`Curve::error_above`] tests first (`2 size × d`, with its 1e-12 margin)
    /// passes for the chord's middle whenever it passes here.
    fn middle_within(&self, a: DQuat, b: DQuat, source: DQuat, bound: f64) -> bool {
        let b = if a.dot(b) < 0.0 { -b } else { b };
        let most = 2.0 * self.size * (chord_distance(a + b, source) + MIDDLE_SLACK);
        most * (1.0 + 1e-12) <= bound
    }
    fn joinable(&self, a: DQuat, b: DQuat) -> bool {
        a.angle_between(b) <= std::f64::consts::FRAC_PI_2
    }
}

/// What [`Rotations`]' [`Curve::middle_within`] adds to the [`chord_distance`] of a chord's
/// middle it works out without the slerp: 1e-10, far above the slerp's rounding (a few ulps
/// of a unit quaternion, ~1e-15) and far below the distances the writers' tolerances allow
/// (~1e-5: a test that close to the tolerance takes the exact path).
const MIDDLE_SLACK: f64 = 1e-10;

/// A slerp from `a` to `b` the short way with its angle worked out once: [`SlerpChord::at`]
/// gives glam's `DQuat::slerp(a, b, s)` bit for bit (the same operations in the same order)
/// with two sines a point instead of an arc cosine and three sines.
#[derive(Debug, Clone, Copy)]
pub struct SlerpChord {
    a: DQuat,
    /// `b`, negated when it is in the other hemisphere from `a`.
    b: DQuat,
    /// The angle between `a` and `b` (radians; half the rotation angle), or `None` where the
    /// two are so close that slerp is a normalized lerp (glam's threshold, `1 − ε`).
    theta: Option<(f64, f64)>,
}

impl SlerpChord {
    /// The chord from unit quaternion `a` to `b`.
    pub fn new(a: DQuat, b: DQuat) -> SlerpChord {
        let mut dot = a.dot(b);
        let mut b = b;
        if dot < 0.0 {
            b = -b;
            dot = -dot;
        }
        let theta = if dot > 1.0 - f64::EPSILON {
            None
        } else {
            let theta = dot.clamp(-1.0, 1.0).acos();
            Some((theta, 1.0 / theta.sin()))
        };
        SlerpChord { a, b, theta }
    }

    /// The rotation at fraction `s` of the way from `a` to `b`. At the middle (`s` = 0.5, what
    /// the error test of [`adaptive`] asks of short intervals) both sines have one argument,
    /// so one is taken.
    pub fn at(&self, s: f64) -> DQuat {
        match self.theta {
            None => (self.a * (1.0 - s) + self.b * s).normalize(),
            Some((theta, inv_sin)) => {
                let (x1, x2) = (theta * (1.0 - s), theta * s);
                let s1 = x1.sin();
                let s2 = if x2.to_bits() == x1.to_bits() { s1 } else { x2.sin() };
                ((self.a * s1) + (self.b * s2)) * inv_sin
            }
        }
    }
}

/// Puts each quaternion in the hemisphere of the one before (negates it when their dot product
/// is negative): the same rotations, in the signs a LINEAR slerp the short way between
/// neighbours needs.
pub fn same_hemisphere(quats: &mut [DQuat]) {
    for j in 1..quats.len() {
        if quats[j - 1].dot(quats[j]) < 0.0 {
            quats[j] = -quats[j];
        }
    }
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
    error_of_distance(chord_distance(a, b), size)
}

/// `|q_a − (±q_b)|` of the normalized quaternions, the nearer sign: `2 sin(θ / 4)` for the
/// angle θ between the rotations.
fn chord_distance(a: DQuat, b: DQuat) -> f64 {
    let (a, b) = (a.normalize(), b.normalize());
    // One square root of the smaller square: the root is correctly rounded, so it keeps the
    // order (and the bits of the smaller root).
    (a - b).length_squared().min((a + b).length_squared()).sqrt()
}

/// [`rotation_error`] from the [`chord_distance`] `d` of the two rotations: the chord of θ,
/// `2 sin(θ / 2)`, at distance `size`.
fn error_of_distance(d: f64, size: f64) -> f64 {
    let quarter = (0.5 * d).clamp(0.0, 1.0).asin();
    size * 2.0 * (2.0 * quarter).sin()
}

/// The scene size the tolerance is relative to: the largest absolute coordinate of the mesh
/// bounding boxes' corners in `world` placement (one world matrix per node, e.g. the writer's
/// rest pose); the node origins count only in a scene without mesh geometry (a camera or light
/// far off, as 3ds Max scenes have, would otherwise loosen the tolerance of the geometry one
/// sees). 1 when that is zero or not finite.
pub fn scene_size(scene: &Scene, world: &[DMat4]) -> f64 {
    let mut boxes: Vec<Option<(DVec3, DVec3)>> = vec![None; scene.meshes.len()];
    let (mut size, mut origins) = (0.0f64, 0.0f64);
    let largest = |p: DVec3| {
        let m = p.abs().max_element();
        if m.is_finite() {
            m
        } else {
            0.0
        }
    };
    for (i, node) in scene.nodes.iter().enumerate() {
        let Some(w) = world.get(i) else { break };
        origins = origins.max(largest(w.col(3).truncate()));
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
            size = size.max(largest(g.transform_point3(p)));
        }
    }
    let size = if size > 0.0 { size } else { origins };
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
        let s = adaptive(&seeds, line, &Positions, 1e-4, ADAPTIVE_BUDGET);
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
        let s = adaptive(&seeds, sine, &Positions, 1e-4, ADAPTIVE_BUDGET);
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
    fn splitting_in_frame_order_takes_the_samples_of_splitting_by_error() {
        // A sine over one period of 100 frames, split by error (the heap, the order the
        // budget needs) and depth first in frame order: the same samples, the second sorted.
        let w = std::f64::consts::TAU / 100.0;
        let mut sine = |f: f64| DVec3::new((w * f).sin(), 0.5 * (3.0 * w * f).cos(), 0.0);
        let seeds: Vec<(f64, DVec3)> =
            seed_frames((0.0, 100.0), []).iter().map(|&f| (f, sine(f))).collect();
        let (mut by_error, capped) =
            split_by_error(seeds.clone(), &mut sine, &Positions, 1e-4, 1 << 16);
        by_error.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert!(!capped && by_error.len() > 100, "{}", by_error.len());
        let in_order = split_in_order(&seeds, &mut sine, &Positions, 1e-4, 1 << 16).unwrap();
        assert_eq!(in_order, by_error);
        // A budget of all those samples suffices; one fewer sends the channel to the heap,
        // whose samples `adaptive_from` then gives.
        let n = in_order.len();
        assert!(split_in_order(&seeds, &mut sine, &Positions, 1e-4, n).is_some());
        assert!(split_in_order(&seeds, &mut sine, &Positions, 1e-4, n - 1).is_none());
        let s = adaptive_from(seeds.clone(), sine, &Positions, 1e-4, 50);
        let (mut heap, capped) = split_by_error(seeds, &mut sine, &Positions, 1e-4, 50);
        heap.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert!(s.capped && capped);
        assert_eq!(s.frames, heap.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(s.values, heap.iter().map(|p| p.1).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_turn_between_two_keys_comes_out_spinning() {
        // A 3DS relative rotation of 350° about Z between keys 0 and 10: the absolute
        // quaternions at the keys are 10° apart, slerp would turn back 10° the short way.
        let spin = |f: f64| DQuat::from_rotation_z((350.0f64).to_radians() * f / 10.0);
        let seeds = seed_frames((0.0, 10.0), [&[0.0, 10.0][..]]);
        let size = 1.0;
        let s = adaptive(&seeds, spin, &Rotations { size }, 1e-4, 1 << 16);
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

    /// The seeds of a channel with these extra seeds, sorted, without repeats.
    fn with(seeds: &[f64], extra: Vec<f64>) -> Vec<f64> {
        let mut all: Vec<f64> = seeds.iter().copied().chain(extra).collect();
        all.sort_by(f64::total_cmp);
        all.dedup();
        all
    }

    #[test]
    fn whole_turns_between_keys_are_seen_once_the_key_segments_are_cut_by_their_turn() {
        use crate::anim::{AxisAngle, Extrapolation, Interpolation, Key};
        // Four whole turns about Z between frames 0 and 12 (a spinning rotor): the source is
        // the identity at 0, 3, 6, 9 and 12, so the quarter, half and three-quarter points
        // of [0, 12] all agree with the chord and the value test alone never splits it.
        let spin = |f: f64| DQuat::from_rotation_z(std::f64::consts::TAU * f / 3.0);
        let seeds = seed_frames((0.0, 12.0), [&[0.0, 12.0][..]]);
        let key = |frame: f64, angle: f64| Key {
            frame,
            value: AxisAngle { angle, axis: DVec3::Z },
            interpolation: Interpolation::Linear,
        };
        let mut track = Track::new(vec![key(0.0, 0.0), key(12.0, 4.0 * std::f64::consts::TAU)]);
        // 8π in eighths of a turn: 32 pieces of 3/8 frame (hand computed).
        let cut = turn_seeds(&RotationTrack::Relative(track.clone()), (0.0, 12.0), 1 << 16);
        let all = with(&seeds, cut);
        assert_eq!(all.len(), 33);
        assert!(all.windows(2).all(|w| (w[1] - w[0] - 0.375).abs() < 1e-12));
        let size = 1.0;
        let s = adaptive(&all, spin, &Rotations { size }, 1e-4, 1 << 16);
        let mut turned = 0.0;
        for p in s.values.windows(2) {
            turned += p[0].angle_between(p[1]);
        }
        assert!((turned - 4.0 * std::f64::consts::TAU).abs() < 1e-6, "{}", turned.to_degrees());
        // Without the cuts the four turns are lost: two samples, no turn at all.
        let lost = adaptive(&seeds, spin, &Rotations { size }, 1e-4, 1 << 16);
        assert_eq!(lost.frames, [0.0, 12.0]);
        // A repeating track is cut in every cycle of the range: 31 cuts in each of two.
        track.after = Extrapolation::Repeat;
        let cut = turn_seeds(&RotationTrack::Relative(track.clone()), (0.0, 24.0), 1 << 16);
        assert_eq!(cut.len(), 62);
        assert!(cut.iter().any(|&f| (f - 12.375).abs() < 1e-12));
        // Held ends get no cuts outside the keys; the budget bounds the cuts.
        track.after = Extrapolation::Constant;
        let cut = turn_seeds(&RotationTrack::Relative(track.clone()), (0.0, 24.0), 1 << 16);
        assert_eq!(cut.len(), 31);
        let few = turn_seeds(&RotationTrack::Relative(track), (0.0, 24.0), 5).len();
        assert!(few > 0 && few <= 5, "{few}");
    }

    #[test]
    fn the_scene_size_is_the_geometry_s_unless_there_is_none() {
        use crate::scene::{Mesh, Node, NodeKind};
        let mut scene = Scene::default();
        scene.meshes.push(Mesh { positions: vec![DVec3::ZERO, DVec3::ONE], ..Default::default() });
        let mut shown = Node::new("cube", NodeKind::Mesh);
        shown.mesh = Some(0);
        scene.nodes.push(shown);
        scene.nodes.push(Node::new("camera", NodeKind::Null));
        // The cube's box (0..1) moved by 2 along X reaches x = 3; the camera stands at 100.
        let world =
            [DMat4::from_translation(DVec3::X * 2.0), DMat4::from_translation(DVec3::X * 100.0)];
        assert_eq!(scene_size(&scene, &world), 3.0);
        scene.nodes[0].mesh = None;
        assert_eq!(scene_size(&scene, &world), 100.0);
        assert_eq!(scene_size(&Scene::default(), &[]), 1.0);
    }

    #[test]
    fn thinning_leaves_a_line_its_ends_and_a_bend_its_corner() {
        // 0, 1, …, 10 on a line: only the ends are needed.
        let frames: Vec<f64> = (0..=10).map(f64::from).collect();
        let line_values: Vec<DVec3> = frames.iter().map(|&f| line(f)).collect();
        let s = Sampled { frames: frames.clone(), values: line_values, capped: false };
        let t = thin(s, &Positions, 1e-9);
        assert_eq!(t.frames, [0.0, 10.0]);
        // |f − 5|: a corner at 5, straight on both sides (hand computed).
        let vee: Vec<DVec3> = frames.iter().map(|&f| DVec3::X * (f - 5.0).abs()).collect();
        let s = Sampled { frames: frames.clone(), values: vee, capped: false };
        let t = thin(s, &Positions, 1e-9);
        assert_eq!(t.frames, [0.0, 5.0, 10.0]);
        // A sample off the chord by less than eps goes, by more it stays.
        let mut bump: Vec<DVec3> = frames.iter().map(|&f| line(f)).collect();
        bump[3].z += 1e-10;
        bump[7].z += 1e-3;
        let s = Sampled { frames, values: bump, capped: false };
        let t = thin(s, &Positions, 1e-9);
        assert_eq!(t.frames, [0.0, 6.0, 7.0, 8.0, 10.0]);
    }

    #[test]
    fn a_long_straight_stretch_thins_to_its_ends() {
        // 10,001 samples on a line: one test each.
        let frames: Vec<f64> = (0..=10_000).map(f64::from).collect();
        let values: Vec<DVec3> = frames.iter().map(|&f| line(f)).collect();
        let t = thin(Sampled { frames, values, capped: false }, &Positions, 1e-9);
        assert_eq!(t.frames, [0.0, 10_000.0]);
    }

    #[test]
    fn thinning_keeps_a_spin_in_intervals_the_rotation_can_join() {
        // A steady spin of 29° a frame over 12 frames lies on every chord; joining at most a
        // quarter turn (3 frames: 87°, 4 frames: 116°) keeps a sample every third frame.
        let frames: Vec<f64> = (0..=12).map(f64::from).collect();
        let values: Vec<DQuat> =
            frames.iter().map(|&f| DQuat::from_rotation_z(f * 29f64.to_radians())).collect();
        let s = Sampled { frames, values, capped: false };
        let t = thin(s, &Rotations { size: 1.0 }, 1e-9);
        assert_eq!(t.frames, [0.0, 3.0, 6.0, 9.0, 12.0]);
    }

    /// Keys at 0 (linear), 10 (step), 20 (step-next), 30 (linear), 40: the value bends on
    /// 0..10 and 30..40 only; an Euler track whose other component is linear on 5..15 joins
    /// 0..15; a cycling track, or a layered blend, bends anywhere.
    #[test]
    fn stepped_segments_do_not_bend() {
        use crate::anim::{Extrapolation, Interpolation, Key};
        let key = |frame: f64, interpolation: Interpolation<f64>| Key {
            frame,
            value: frame,
            interpolation,
        };
        let t = Track::new(vec![
            key(0.0, Interpolation::Linear),
            key(10.0, Interpolation::Step),
            key(20.0, Interpolation::StepNext),
            key(30.0, Interpolation::Linear),
            key(40.0, Interpolation::Linear),
        ]);
        let x = ChannelTarget::TranslationXyz([Some(t.clone()), None, None]);
        assert_eq!(bending_intervals(&x), Some(vec![(0.0, 10.0), (30.0, 40.0)]));
        let y = Track::new(vec![key(5.0, Interpolation::Linear), key(15.0, Interpolation::Linear)]);
        let both = ChannelTarget::TranslationXyz([Some(t.clone()), Some(y), None]);
        assert_eq!(bending_intervals(&both), Some(vec![(0.0, 15.0), (30.0, 40.0)]));
        let mut cyc = t;
        cyc.after = Extrapolation::Repeat;
        assert_eq!(
            bending_intervals(&ChannelTarget::TranslationXyz([Some(cyc), None, None])),
            None
        );
        let one = Track::new(vec![key(3.0, Interpolation::Linear)]);
        assert_eq!(
            bending_intervals(&ChannelTarget::TranslationXyz([Some(one), None, None])),
            Some(vec![])
        );
    }

    /// Keys at 0 (linear), 10 (step), 20 (linear), 30 with constant extrapolation: the value
    /// holds before 0, inside 10..20 and after 30; with a second component that steps at 15 it
    /// holds only where both do; keep-slope extrapolation does not hold.
    #[test]
    fn held_intervals_are_step_segments_and_constant_ends() {
        use crate::anim::{Extrapolation, Interpolation, Key};
        let key = |frame: f64, interpolation: Interpolation<f64>| Key {
            frame,
            value: frame,
            interpolation,
        };
        let inf = f64::INFINITY;
        let x = Track::new(vec![
            key(0.0, Interpolation::Linear),
            key(10.0, Interpolation::Step),
            key(20.0, Interpolation::Linear),
            key(30.0, Interpolation::Linear),
        ]);
        let one = ChannelTarget::TranslationXyz([Some(x.clone()), None, None]);
        let held = held_intervals(&one);
        assert_eq!(held, vec![(-inf, 0.0), (10.0, 20.0), (30.0, inf)]);
        assert!(both_held(&held, 11.0, 19.5));
        assert!(!both_held(&held, 10.0, 12.0), "the interval is open");
        assert!(!both_held(&held, 19.0, 21.0));
        assert!(both_held(&held, 31.0, 1e9));
        let y = Track::new(vec![key(15.0, Interpolation::Step), key(30.0, Interpolation::Linear)]);
        let two = ChannelTarget::TranslationXyz([Some(x.clone()), Some(y), None]);
        // y holds before its first key, on its step 15..30 and after: the jump at 15 splits
        // x's step.
        let want = vec![(-inf, 0.0), (10.0, 15.0), (15.0, 20.0), (30.0, inf)];
        assert_eq!(held_intervals(&two), want);
        let mut slope = x;
        slope.after = Extrapolation::Slope;
        let held = held_intervals(&ChannelTarget::TranslationXyz([Some(slope), None, None]));
        assert_eq!(held, vec![(-inf, 0.0), (10.0, 20.0)]);
    }

    #[test]
    fn a_channel_bends_only_between_its_keys_unless_it_cycles() {
        use crate::anim::{Extrapolation, Interpolation, Key};
        let key = |frame: f64| Key {
            frame,
            value: DVec3::X * frame,
            interpolation: Interpolation::Linear,
        };
        let one = ChannelTarget::Translation(Track::new(vec![key(3.0)]));
        assert_eq!(channel_span(&one), Span::Still);
        let mut t = Track::new(vec![key(3.0), key(7.0)]);
        assert_eq!(channel_span(&ChannelTarget::Translation(t.clone())), Span::Within(3.0, 7.0));
        t.after = Extrapolation::Repeat;
        assert_eq!(channel_span(&ChannelTarget::Translation(t)), Span::Anywhere);
        assert_eq!(Span::Within(3.0, 7.0).join(Span::Within(1.0, 4.0)), Span::Within(1.0, 7.0));
        assert_eq!(Span::Still.join(Span::Within(1.0, 4.0)), Span::Within(1.0, 4.0));
        assert_eq!(Span::Anywhere.join(Span::Still), Span::Anywhere);
    }

    #[test]
    fn splits_stop_where_f32_times_could_not_keep_the_halves_apart() {
        assert_eq!(min_span(0.0), MIN_SPAN);
        assert_eq!(min_span(-10.0), MIN_SPAN);
        // 4 × 2⁻²³ × 3,000,000 = 1.430511474609375 frames (hand computed).
        assert_eq!(min_span(3.0e6), 1.430511474609375);
        // A step at frame 3,000,000 in a range starting there: no split below that length.
        let step = |f: f64| DVec3::X * if f < 3.0e6 + 500.0 { 0.0 } else { 1.0 };
        let s = adaptive(&[3.0e6, 3.0e6 + 1000.0], step, &Positions, 1e-4, 1 << 16);
        assert!(s.frames.windows(2).all(|w| w[1] - w[0] >= min_span(w[1])), "{:?}", s.frames);
        assert!(s.frames.windows(2).all(|w| (w[0] as f32) < (w[1] as f32)));
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
        let s = adaptive(&seeds, sine, &Positions, 1e-9, 50);
        assert_eq!(s.frames.len(), 50);
        assert!(s.capped);
        // Nothing to follow (NaN) adds no samples.
        let s = adaptive(&seeds, |_| DVec3::NAN, &Positions, 1e-9, 50);
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

    #[test]
    fn slerp_chord_is_glam_slerp_bit_for_bit() {
        // glam's `DQuat::slerp` is the reference (the chord only moves its angle out of the
        // loop): far apart, other hemisphere, and so close that slerp is a normalized lerp.
        let a = DQuat::from_rotation_z(0.3);
        let cases = [
            DQuat::from_rotation_x(2.0),
            -DQuat::from_euler(glam::EulerRot::XYZ, 0.2, -1.1, 0.7),
            DQuat::from_rotation_z(0.3 + 1e-9),
            a,
        ];
        for b in cases {
            let chord = SlerpChord::new(a, b);
            for s in [0.0, 0.125, 1.0 / 3.0, 0.5, 0.9, 1.0] {
                assert_eq!(chord.at(s).to_array(), a.slerp(b, s).to_array(), "{b:?} at {s}");
            }
        }
    }

    #[test]
    fn rotation_error_s_one_root_has_the_bits_of_the_smaller_of_two() {
        // The two-root form the measure had: the root of the smaller square is the smaller
        // root, bit for bit, for near, far, opposite, equal and non-finite pairs.
        let two_roots = |a: DQuat, b: DQuat, size: f64| {
            let (a, b) = (a.normalize(), b.normalize());
            let d = (a - b).length().min((a + b).length());
            size * 2.0 * (2.0 * (0.5 * d).clamp(0.0, 1.0).asin()).sin()
        };
        let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.2, -1.1, 0.7);
        let others = [
            q,
            -q,
            DQuat::from_rotation_z(0.3),
            DQuat::from_rotation_x(2.0),
            q * DQuat::from_rotation_y(1e-9),
            -(q * DQuat::from_rotation_y(3.0)),
            DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0),
        ];
        for b in others {
            for size in [1.0, 37.5] {
                let (one, two) = (rotation_error(q, b, size), two_roots(q, b, size));
                let same = one.to_bits() == two.to_bits() || (one.is_nan() && two.is_nan());
                assert!(same, "{b:?}: {one} {two}");
            }
        }
    }

    /// Numbers in [0, 1) from a 64-bit linear congruential generator (Knuth's MMIX
    /// constants) seeded with `seed`: the same sequence on every run.
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn a_rotation_error_is_left_out_only_when_it_is_within_the_bound() {
        // Pairs from far apart to 1e-9 rad, and bounds just under, at and over the measure:
        // `error_above` gives the measure's bits, or a value at most a bound the measure is
        // within too.
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        let mut skipped = 0;
        for i in 0..4000 {
            let euler = |r: f64| r * std::f64::consts::TAU - std::f64::consts::PI;
            let a =
                DQuat::from_euler(glam::EulerRot::XYZ, euler(next()), euler(next()), euler(next()));
            let turn = 10f64.powf(-9.0 * next()) * if i % 2 == 0 { 1.0 } else { 3.0 };
            let axis = DVec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize();
            let b = match i % 4 {
                0 => -a * DQuat::from_axis_angle(axis, turn),
                1 => DQuat::from_euler(glam::EulerRot::XYZ, euler(next()), euler(next()), 0.3),
                _ => a * DQuat::from_axis_angle(axis, turn),
            };
            for size in [1.0, 1e-3, 250.0] {
                let curve = Rotations { size };
                let exact = rotation_error(a, b, size);
                let d = 2.0 * size * chord_distance(a, b);
                let below = f64::from_bits(exact.to_bits().saturating_sub(1));
                let bounds = [exact, below, exact * (1.0 - 1e-13), d, d * (1.0 + 1e-12)];
                for bound in bounds.into_iter().chain([d * (1.0 + 2e-12), 2.0 * d, 0.5 * d]) {
                    let got = curve.error_above(a, b, bound);
                    if got.to_bits() != exact.to_bits() {
                        assert!(got <= bound && exact <= bound, "{a:?} {b:?} {size} {bound}");
                        skipped += 1;
                    }
                }
            }
        }
        assert!(skipped > 10_000, "{skipped}");
        // A NaN is never left out.
        let nan = DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0);
        assert!(Rotations { size: 1.0 }.error_above(nan, DQuat::IDENTITY, 1.0).is_nan());
    }

    #[test]
    fn a_chord_s_middle_is_within_the_bound_only_when_its_slerp_is() {
        // Chords from 1e-9 rad to a quarter turn, sources around the middle at distances just
        // under, at and over the bound: whenever `middle_within` says yes, the error of the
        // slerp's middle (what the error test measures otherwise) is within the bound.
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        let (mut yes, mut no) = (0, 0);
        for i in 0..3000 {
            let euler = |r: f64| r * std::f64::consts::TAU - std::f64::consts::PI;
            let a =
                DQuat::from_euler(glam::EulerRot::XYZ, euler(next()), euler(next()), euler(next()));
            let axis = DVec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize();
            let turn = std::f64::consts::FRAC_PI_2 * 10f64.powf(-9.0 * next());
            let b = a * DQuat::from_axis_angle(axis, turn);
            // The other sign of `b` is the same rotation: the chord flips it back.
            let b = if i % 3 == 0 { -b } else { b };
            let off = DVec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize();
            let v = SlerpChord::new(a, b).at(0.5) * DQuat::from_axis_angle(off, 1e-4 * next());
            for size in [1.0, 1e-3, 250.0] {
                let curve = Rotations { size };
                let e = curve.error(SlerpChord::new(a, b).at(0.5), v);
                for bound in [e * (1.0 - 1e-9), e, e * (1.0 + 1e-9), e * 1.01, 2.0 * e + 1e-300] {
                    if curve.middle_within(a, b, v, bound) {
                        let got = curve.error_above(SlerpChord::new(a, b).at(0.5), v, bound);
                        assert!(got <= bound && e <= bound, "{a:?} {b:?} {v:?} {size} {bound}");
                        yes += 1;
                    } else {
                        no += 1;
                    }
                }
            }
        }
        // Most bounds well above the error are seen without the slerp.
        assert!(yes > 10_000 && no > 10_000, "{yes} {no}");
    }

    #[test]
    fn same_hemisphere_flips_against_the_flipped_neighbour() {
        // q, −q, q: the second is flipped to q; the third, compared with that flipped q,
        // stays.
        let q = DQuat::from_rotation_y(1.0);
        let mut v = [q, -q, q, -q];
        same_hemisphere(&mut v);
        assert_eq!(v.map(|x| x.to_array()), [q.to_array(); 4]);
        // A turn of 2π more is about −q as a quaternion: flipped back next to q.
        let mut w = [q, DQuat::from_rotation_y(1.0 + std::f64::consts::TAU)];
        same_hemisphere(&mut w);
        assert!(w[0].dot(w[1]) > 1.0 - 1e-12);
    }
}
