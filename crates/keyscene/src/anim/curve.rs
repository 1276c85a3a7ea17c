//! Curve rules beyond 3D Studio's: extrapolation outside the keys (keep slope, repetition,
//! mirror, relative repetition, with repeat counts) and the tangent solvers that turn FBX's
//! automatic, TCB and clamped tangent modes into the Bézier slopes [`Interpolation::Bezier`]
//! stores.
//!
//! These rules were written to agree with what ufbx (github.com/ufbx/ufbx) computes for FBX
//! `AnimationCurve`s, checked against the curve tables of the corpus
//! (`tests/fbx_curves.rs`); the formulas are stated here so they can be checked without it.
//!
//! # Extrapolation
//! Let the keys span frames `f0 … f1` (duration `D = f1 − f0`) with values `v0 … v1`. A frame
//! `t` strictly before `f0` uses [`Track::before`], strictly after `f1` [`Track::after`]:
//!
//! * [`Extrapolation::Slope`]: `v0 + s0·(t − f0)` with `s0` the first key's leaving slope, or
//!   `v1 + s1·(t − f1)` with `s1` the last key's arriving slope. A linear key's slope is its
//!   chord's; a held (step) key's is 0.
//! * [`Extrapolation::Cycle`]: the distance past the end `δ = f0 − t` (before) or `t − f1`
//!   (after) splits into `n = ⌊δ / D⌋` whole cycles and a remainder `r = δ − n·D`. With a
//!   repeat count `c` (`c = 0` holds the end key) and `n ≥ c`: `n = c − 1`, `r = D` (the value
//!   the last allowed cycle ends on); a remainder within 1e-9 of a whole span counts as the
//!   next cycle's start, as ufbx's integer-tick arithmetic makes it. Mirror flips even cycles: `r ← D − r` when `n` is even.
//!   Before the start `r ← D − r` again (the cycles run backwards). The curve is sampled at
//!   `f0 + r`; relative repetition then adds `(n + 1)·(v1 − v0)` after the end and subtracts
//!   it before the start. A span shorter than 1e-9 frames holds the end key.
//!
//! # Tangent solvers (FBX)
//! Slopes are in value units per unit of the times given (the FBX reader passes seconds).
//! * [`auto_slope`]: a key between two neighbours. Time-independent tangents take the slope
//!   of the line through the neighbours, `s = (vn − vp)/(tn − tp)`. Otherwise that slope is
//!   averaged with the time-weighted mean of the two chord slopes:
//!   `s = ½·s + ½·(sl·(1 − d) + sr·d)` with `sl`, `sr` the chords to the previous and next
//!   key and `d = (t − tp)/(tn − tp)`; an auto bias `b` (percent) leans it towards the right
//!   chord (`b > 0`) or left chord by `|b|/100`, and beyond ±500 adds
//!   `40·(|b|/100 − 5)²` in the direction it leans. *Clamp* flattens the tangent when the key
//!   is within `clamp_threshold` of a neighbour's value; *progressive clamp* limits `|s|` so
//!   neither handle passes the neighbour's value (`|s| ≤ (v − vp)·sign/(wl·(t − tp))` and
//!   likewise on the right, negative limits meaning 0).
//! * [`auto_slope_one_side`]: an end key takes the chord to its one neighbour (0 with
//!   progressive clamp, or when clamp applies), plus the ±500 bias term.
//! * [`tcb_slopes`]: Kochanek–Bartels slopes from the chord slopes `sl`, `sr`:
//!   left `k·(1−T)·((1+B)(1−C)·sl + (1−B)(1+C)·sr)`, right
//!   `k·(1−T)·((1+B)(1+C)·sl + (1−B)(1−C)·sr)` with `k = ½`, or `k = 1` at an end key
//!   (its missing chord is 0).

pub use crate::scene::animation::CycleMode;

use super::tcb::{sample_inside, KeyCursor, Vector};
use super::{Extrapolation, Interpolation, Track};

/// Name of the [`ChannelTarget::Property`](super::ChannelTarget::Property) that animates a
/// morph target's weight in **percent** (FBX `DeformPercent`, 0–100): the node's mesh's
/// target `k` is driven by the property named `DeformPercent` followed by `#k`, see
/// [`morph_weight_property`].
pub const MORPH_WEIGHT_PROPERTY: &str = "DeformPercent";

/// The property name that drives morph target `k` of a node's mesh (`DeformPercent#k`).
pub fn morph_weight_property(k: usize) -> String {
    format!("{MORPH_WEIGHT_PROPERTY}#{k}")
}

/// The morph target index a property name drives, if it is a morph weight property.
pub fn morph_target_of(name: &str) -> Option<usize> {
    name.strip_prefix(MORPH_WEIGHT_PROPERTY)?.strip_prefix('#')?.parse().ok()
}

/// The value of a track at `frame` when the frame lies strictly outside its keys and the end's
/// rule is [`Extrapolation::Slope`] or [`Extrapolation::Cycle`]; `None` otherwise (the caller
/// samples normally). A cycle's key search starts at `cursor` when there is one
/// ([`KeyCursor`]: the same value).
pub(crate) fn extrapolate<V: Vector>(
    track: &Track<V>,
    frame: f64,
    cursor: Option<&KeyCursor>,
) -> Option<V> {
    let keys = &track.keys;
    let first = keys.first()?;
    let last = keys.last()?;
    let pre = frame < first.frame;
    if !pre && frame <= last.frame {
        return None;
    }
    if keys.len() < 2 {
        return None;
    }
    let rule = if pre { track.before } else { track.after };
    match rule {
        Extrapolation::Slope => {
            let (key, slope) =
                if pre { (first, start_slope(track)) } else { (last, end_slope(track)) };
            Some(key.value + slope * (frame - key.frame))
        }
        Extrapolation::Cycle { mode, count } => {
            let end = if pre { first.value } else { last.value };
            if count == Some(0) {
                return Some(end);
            }
            let duration = last.frame - first.frame;
            if duration.is_nan() || duration < 1e-9 || !frame.is_finite() {
                return Some(end);
            }
            let delta = if pre { first.frame - frame } else { frame - last.frame };
            let mut n = (delta / duration).floor();
            let mut r = delta - n * duration;
            // Whole cycles must land on the start exactly (ufbx counts in integer KTime ticks):
            // a remainder within rounding of a full span is the next cycle's start.
            let eps = 1e-9 * duration.max(1.0);
            if duration - r <= eps {
                n += 1.0;
                r = 0.0;
            } else if r < eps {
                r = 0.0;
            }
            if let Some(c) = count {
                if n >= f64::from(c) {
                    n = f64::from(c - 1);
                    r = duration;
                }
            }
            if mode == CycleMode::Mirror && (n * 0.5 - (n * 0.5).floor()) <= 0.25 {
                r = duration - r;
            }
            if pre {
                r = duration - r;
            }
            let mut v = sample_inside(track, first.frame + r.clamp(0.0, duration), cursor)?;
            if mode == CycleMode::Relative {
                let step = last.value - first.value;
                let times = if pre { -(n + 1.0) } else { n + 1.0 };
                v = v + step * times;
            }
            Some(v)
        }
        _ => None,
    }
}

/// The slope with which a track leaves its first key (per frame).
pub(crate) fn start_slope<V: Vector>(track: &Track<V>) -> V {
    let keys = &track.keys;
    let a = &keys[0];
    // The first key with a later frame: the chord of a linear start runs to it.
    let Some(b) = keys.iter().find(|k| k.frame > a.frame) else {
        return V::ZERO;
    };
    // With several keys on the first frame, the last of them leaves towards `b`.
    let leaving = keys.iter().take_while(|k| k.frame == a.frame).last().unwrap_or(a);
    match &leaving.interpolation {
        Interpolation::Step | Interpolation::StepNext => V::ZERO,
        Interpolation::Bezier { out_slope, .. } => *out_slope,
        Interpolation::Hermite { out_tangent, .. } => *out_tangent,
        Interpolation::Linear | Interpolation::Tcb(_) | Interpolation::Squad { .. } => {
            (b.value - leaving.value) * (1.0 / (b.frame - leaving.frame))
        }
    }
}

/// The slope with which a track arrives at its last key (per frame).
pub(crate) fn end_slope<V: Vector>(track: &Track<V>) -> V {
    let keys = &track.keys;
    let n = keys.len();
    let b = &keys[n - 1];
    // A Bézier key on the last frame carries the arriving slope (the FBX reader stores a key
    // that arrives on a cubic and leaves otherwise as two keys on one frame).
    for k in keys.iter().rev().take_while(|k| k.frame == b.frame) {
        match &k.interpolation {
            Interpolation::Bezier { in_slope, .. } => return *in_slope,
            Interpolation::Hermite { in_tangent, .. } => return *in_tangent,
            _ => {}
        }
    }
    let Some(a) = keys.iter().rev().find(|k| k.frame < b.frame) else {
        return V::ZERO;
    };
    match &a.interpolation {
        Interpolation::Step | Interpolation::StepNext => V::ZERO,
        _ => (b.value - a.value) * (1.0 / (b.frame - a.frame)),
    }
}

/// Which FBX tangent rules apply to an automatic tangent (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AutoRules {
    /// Flatten when the key is within `clamp_threshold` of a neighbour (FBX `0x1000`).
    pub clamp: bool,
    /// Ignore the key's position in time (FBX `0x2000`).
    pub time_independent: bool,
    /// Keep both handles between the neighbours' values (FBX `0x4000` with `0x2000`).
    pub clamp_progressive: bool,
    /// Value distance at or under which `clamp` flattens.
    pub clamp_threshold: f64,
}

/// The automatic slope of a key at `(t, v)` between `(tp, vp)` and `(tn, vn)` (times strictly
/// increasing), with handle weights `wl`, `wr` (fractions of the neighbouring spans) and auto
/// bias `bias` in percent. See the module docs for the formula.
#[allow(clippy::too_many_arguments)]
pub fn auto_slope(
    (tp, vp): (f64, f64),
    (t, v): (f64, f64),
    (tn, vn): (f64, f64),
    wl: f64,
    wr: f64,
    bias: f64,
    rules: AutoRules,
) -> f64 {
    if rules.clamp && (vp - v).abs().min((vn - v).abs()) <= rules.clamp_threshold {
        return 0.0;
    }
    let mut slope = (vn - vp) / (tn - tp);
    if !rules.time_independent {
        let sl = (v - vp) / (t - tp);
        let sr = (vn - v) / (tn - t);
        let d = (t - tp) / (tn - tp);
        slope = 0.5 * slope + 0.5 * (sl * (1.0 - d) + sr * d);
        let lean = bias.abs() / 100.0;
        if lean > 0.0001 {
            let target = if bias > 0.0 { sr } else { sl };
            let towards = target - slope;
            slope = slope * (1.0 - lean) + target * lean;
            let extra = lean - 5.0;
            if extra > 0.0 {
                let sign = if towards.abs() > 0.00001 { towards } else { bias };
                slope += extra * extra * 40.0 * if sign > 0.0 { 1.0 } else { -1.0 };
            }
        }
    }
    if rules.clamp_progressive {
        let sign = if slope >= 0.0 { 1.0 } else { -1.0 };
        let range_l = wl * (t - tp);
        let range_r = wr * (tn - t);
        let mut max_l = if range_l > 0.0 { sign * (v - vp) / range_l } else { 0.0 };
        let mut max_r = if range_r > 0.0 { sign * (vn - v) / range_r } else { 0.0 };
        if max_l.is_nan() || max_l <= 0.0 {
            max_l = 0.0;
        }
        if max_r.is_nan() || max_r <= 0.0 {
            max_r = 0.0;
        }
        slope = sign * (sign * slope).min(max_l).min(max_r);
    }
    slope
}

/// The automatic slope of an end key at `(t, v)` whose one neighbour is `(to, vo)` (before or
/// after it), with auto bias `bias` in percent.
pub fn auto_slope_one_side(
    (t, v): (f64, f64),
    (to, vo): (f64, f64),
    bias: f64,
    rules: AutoRules,
) -> f64 {
    if rules.clamp_progressive {
        return 0.0;
    }
    if rules.clamp && (vo - v).abs() <= rules.clamp_threshold {
        return 0.0;
    }
    let mut slope = (vo - v) / (to - t);
    if !rules.time_independent {
        let extra = bias.abs() / 100.0 - 5.0;
        if extra > 0.0 {
            slope += extra * extra * 40.0 * if bias > 0.0 { 1.0 } else { -1.0 };
        }
    }
    slope
}

/// Kochanek–Bartels `(left, right)` slopes of a key from its chord slopes to the previous
/// (`sl`) and next (`sr`) key; `edge` for an end key (its missing chord passed as 0).
pub fn tcb_slopes(
    tension: f64,
    continuity: f64,
    bias: f64,
    sl: f64,
    sr: f64,
    edge: bool,
) -> (f64, f64) {
    let k = if edge { 1.0 } else { 0.5 } * (1.0 - tension);
    let left =
        k * ((1.0 + bias) * (1.0 - continuity) * sl + (1.0 - bias) * (1.0 + continuity) * sr);
    let right =
        k * ((1.0 + bias) * (1.0 + continuity) * sl + (1.0 - bias) * (1.0 - continuity) * sr);
    (left, right)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::Key;

    fn lin(frame: f64, value: f64) -> Key<f64> {
        Key { frame, value, interpolation: Interpolation::Linear }
    }

    /// Keys 0 → 10 over frames 0 → 10, then 10 → 0 over 10 → 20 ("tent").
    fn tent() -> Track<f64> {
        Track::new(vec![lin(0.0, 0.0), lin(10.0, 10.0), lin(20.0, 0.0)])
    }

    fn ramp() -> Track<f64> {
        Track::new(vec![lin(0.0, 0.0), lin(10.0, 5.0)])
    }

    fn close(a: Option<f64>, b: f64) {
        let a = a.unwrap();
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn slope_extrapolation_continues_the_end_chords() {
        let mut t = ramp();
        t.before = Extrapolation::Slope;
        t.after = Extrapolation::Slope;
        // Slope 0.5 per frame both ways.
        close(t.sample(-4.0), -2.0);
        close(t.sample(14.0), 7.0);
        close(t.sample(10.0), 5.0);
    }

    #[test]
    fn slope_extrapolation_uses_bezier_end_slopes_and_flat_steps() {
        let bz = |frame, value, s_in, s_out| Key {
            frame,
            value,
            interpolation: Interpolation::Bezier {
                in_slope: s_in,
                in_weight: 1.0 / 3.0,
                out_slope: s_out,
                out_weight: 1.0 / 3.0,
            },
        };
        let mut t = Track::new(vec![bz(0.0, 1.0, 9.0, 2.0), bz(10.0, 3.0, -1.0, 9.0)]);
        t.before = Extrapolation::Slope;
        t.after = Extrapolation::Slope;
        close(t.sample(-1.0), 1.0 - 2.0);
        close(t.sample(12.0), 3.0 - 2.0);
        let mut s = Track::new(vec![
            Key { frame: 0.0, value: 1.0, interpolation: Interpolation::Step },
            lin(10.0, 3.0),
        ]);
        s.before = Extrapolation::Slope;
        s.after = Extrapolation::Slope;
        close(s.sample(-5.0), 1.0);
        // Arrives from a held key: flat.
        close(s.sample(15.0), 3.0);
    }

    #[test]
    fn repetition_repeats_and_shows_the_last_key_on_its_frame() {
        let mut t = tent();
        t.before = Extrapolation::Cycle { mode: CycleMode::Repeat, count: None };
        t.after = t.before;
        close(t.sample(20.0), 0.0);
        close(t.sample(25.0), 5.0); // = frame 5
        close(t.sample(30.0), 10.0); // = frame 10
        close(t.sample(-5.0), 5.0); // = frame 15
        close(t.sample(-15.0), 5.0); // = frame 5
                                     // The last key's value, not the first: differs on a ramp.
        let mut r = ramp();
        r.after = Extrapolation::Cycle { mode: CycleMode::Repeat, count: None };
        close(r.sample(10.0), 5.0);
        close(r.sample(12.0), 1.0);
    }

    #[test]
    fn mirror_runs_every_other_cycle_backwards() {
        let mut r = ramp();
        r.before = Extrapolation::Cycle { mode: CycleMode::Mirror, count: None };
        r.after = r.before;
        close(r.sample(12.0), 4.0); // first cycle after: backwards, frame 8
        close(r.sample(22.0), 1.0); // second: forwards, frame 2
        close(r.sample(-2.0), 1.0); // first cycle before: backwards from the start, frame 2
        close(r.sample(-12.0), 4.0); // second: frame 8
    }

    #[test]
    fn relative_repetition_offsets_each_cycle() {
        let mut r = ramp();
        r.before = Extrapolation::Cycle { mode: CycleMode::Relative, count: None };
        r.after = r.before;
        close(r.sample(12.0), 1.0 + 5.0);
        close(r.sample(22.0), 1.0 + 10.0);
        close(r.sample(-2.0), 4.0 - 5.0);
        close(r.sample(-12.0), 4.0 - 10.0);
    }

    #[test]
    fn repeat_counts_hold_where_the_last_cycle_ends() {
        let mut r = ramp();
        r.after = Extrapolation::Cycle { mode: CycleMode::Repeat, count: Some(2) };
        close(r.sample(12.0), 1.0);
        close(r.sample(22.0), 1.0);
        // Past two cycles: the end of the second, frame 10's value.
        close(r.sample(35.0), 5.0);
        r.after = Extrapolation::Cycle { mode: CycleMode::Mirror, count: Some(1) };
        // One mirrored cycle ends back on the first key.
        close(r.sample(25.0), 0.0);
        r.after = Extrapolation::Cycle { mode: CycleMode::Relative, count: Some(1) };
        close(r.sample(25.0), 10.0);
        r.after = Extrapolation::Cycle { mode: CycleMode::Repeat, count: Some(0) };
        close(r.sample(25.0), 5.0);
        r.before = Extrapolation::Cycle { mode: CycleMode::Repeat, count: Some(1) };
        // Before: one cycle back reaches the first key's frame again (frame 0's value).
        close(r.sample(-25.0), 0.0);
    }

    #[test]
    fn step_next_takes_the_next_value_between_keys() {
        let t = Track::new(vec![
            Key { frame: 0.0, value: 1.0, interpolation: Interpolation::StepNext },
            lin(10.0, 3.0),
        ]);
        close(t.sample(0.0), 1.0);
        close(t.sample(0.001), 3.0);
        close(t.sample(9.0), 3.0);
    }

    #[test]
    fn auto_slope_of_evenly_spaced_keys_is_the_neighbour_chord() {
        let r = AutoRules::default();
        // Neighbours (0,0) and (2,4): chord 2; left/right chords 1 and 3, d = 0.5 → mean 2.
        assert_eq!(
            auto_slope((0.0, 0.0), (1.0, 1.0), (2.0, 4.0), 1.0 / 3.0, 1.0 / 3.0, 0.0, r),
            2.0
        );
        // Uneven: (0,0), (1,1), (4,4) is a straight line: slope 1.
        assert!(
            (auto_slope((0.0, 0.0), (1.0, 1.0), (4.0, 4.0), 0.3, 0.3, 0.0, r) - 1.0).abs() < 1e-15
        );
        // Time-independent uses only the neighbour chord: (0,0),(1,3),(4,4) → 1.
        let ti = AutoRules { time_independent: true, ..r };
        assert_eq!(auto_slope((0.0, 0.0), (1.0, 3.0), (4.0, 4.0), 0.3, 0.3, 0.0, ti), 1.0);
    }

    #[test]
    fn clamps_flatten_and_limit_the_auto_slope() {
        let clamp = AutoRules { clamp: true, clamp_threshold: 1e-6, ..AutoRules::default() };
        assert_eq!(auto_slope((0.0, 1.0), (1.0, 1.0), (2.0, 4.0), 0.3, 0.3, 0.0, clamp), 0.0);
        // Progressive: chord 4 per unit, but the left handle (weight 1/4 of 1 unit) may only
        // rise by v − vp = 0.5: |s| ≤ 0.5 / 0.25 = 2.
        let prog =
            AutoRules { clamp_progressive: true, time_independent: true, ..AutoRules::default() };
        assert_eq!(auto_slope((0.0, 0.0), (1.0, 0.5), (2.0, 8.0), 0.25, 0.25, 0.0, prog), 2.0);
        // A peak: the right handle may not go down, so the slope is 0.
        assert_eq!(auto_slope((0.0, 0.0), (1.0, 2.0), (2.0, 1.0), 0.25, 0.25, 0.0, prog), 0.0);
    }

    #[test]
    fn auto_bias_leans_towards_one_chord() {
        let r = AutoRules::default();
        // (0,0),(1,1),(2,3): chords 1 and 2, base ½·1.5 + ½·1.5 = 1.5; bias +100 → the right
        // chord, 2.
        assert!(
            (auto_slope((0.0, 0.0), (1.0, 1.0), (2.0, 3.0), 0.3, 0.3, 100.0, r) - 2.0).abs()
                < 1e-12
        );
        assert!(
            (auto_slope((0.0, 0.0), (1.0, 1.0), (2.0, 3.0), 0.3, 0.3, -100.0, r) - 1.0).abs()
                < 1e-12
        );
        // Bias 600: 1.5·(1 − 6) + 2·6 = 4.5, plus 40·(6 − 5)² = 44.5.
        assert!(
            (auto_slope((0.0, 0.0), (1.0, 1.0), (2.0, 3.0), 0.3, 0.3, 600.0, r) - 44.5).abs()
                < 1e-12
        );
        assert_eq!(auto_slope_one_side((1.0, 1.0), (0.0, 0.0), 0.0, r), 1.0);
        assert_eq!(auto_slope_one_side((1.0, 1.0), (0.0, 0.0), -600.0, r), 1.0 - 40.0);
    }

    #[test]
    fn default_tcb_is_the_mean_chord() {
        assert_eq!(tcb_slopes(0.0, 0.0, 0.0, 1.0, 3.0, false), (2.0, 2.0));
        // Tension 1: flat.
        assert_eq!(tcb_slopes(1.0, 0.0, 0.0, 1.0, 3.0, false), (0.0, 0.0));
        // Continuity 1 breaks the tangent: left takes the right chord, right the left chord.
        assert_eq!(tcb_slopes(0.0, 1.0, 0.0, 1.0, 3.0, false), (3.0, 1.0));
        // Bias 1 leans on the previous chord.
        assert_eq!(tcb_slopes(0.0, 0.0, 1.0, 1.0, 3.0, false), (1.0, 1.0));
        // An end key with only a left chord keeps it.
        assert_eq!(tcb_slopes(0.0, 0.0, 0.0, 1.0, 0.0, true), (1.0, 1.0));
    }
}
