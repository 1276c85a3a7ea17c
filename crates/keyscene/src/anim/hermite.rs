//! Tracks rewritten as piecewise cubic Hermite curves, for writers whose formats hold keys
//! with in/out tangents (glTF `STEP` / `LINEAR` / `CUBICSPLINE` samplers, 3DA `LINEAR` and
//! `BEZIER` tracks) and want the source's keys instead of a sample at every frame.
//!
//! A [`HermiteKey`] holds a key's frame, value, arriving and leaving **slopes in value units
//! per frame**, and the shape of the segment that leaves it ([`Segment`]). The segment from key
//! `a` to key `b` (`Δ = b.frame − a.frame`, `u = (t − a.frame)/Δ`) is
//! - [`Segment::Step`]: `a.value` for `a.frame ≤ t < b.frame`;
//! - [`Segment::Linear`]: `a.value + (b.value − a.value)·u`;
//! - [`Segment::Cubic`]: `hermite(a.value, a.out_slope·Δ, b.in_slope·Δ, b.value, u)`
//!   ([`super::hermite()`]).
//!
//! The slopes of a linear segment's ends are its chord's, so writers that only have one cubic
//! kind (glTF `CUBICSPLINE`, 3DA `BEZIER`) can write every non-step segment as cubic; a step
//! segment's slopes are 0.
//!
//! [`hermite_keys`] converts one track; it reproduces exactly what [`Track::sample`] computes
//! between the first and last key, or says `None` when no Hermite form is exact:
//! - [`Interpolation::StepNext`] (FBX "constant next") segments;
//! - FBX Bézier segments whose handle weights are not 1/3 (weighted tangents make the time
//!   axis itself a cubic, so value is no longer a cubic of time); a weight within 1e-6 of 1/3
//!   counts as 1/3 (FBX stores the default weight as the f32 `0.33333334`), which moves the
//!   curve by less than 1e-6 of the segment's value change;
//! - two keys on one frame (a jump; no target format takes equal key times).
//!
//! TCB keys (3DS) become cubic segments with the tangents the evaluator uses (lib3ds' rules,
//! see [`super::tcb`]; ease is not applied, as lib3ds does not apply it).
//!
//! [`clip`] restricts a curve to a range of frames by the same exact split. Outside the keys,
//! [`cover`] extends the curve over an animation range where that is exact
//! (constant hold, and FBX "keep slope" as a linear segment), and [`merge_xyz`] joins the
//! three per-component curves of an FBX `Lcl Translation` / `Lcl Scaling` into one vector
//! curve by splitting every component's segments at the union of their key frames (a cubic
//! split at `t` is two cubics whose shared slope is the derivative at `t`, so the split is
//! exact).

use glam::DVec3;

use super::curve::{end_slope, start_slope};
use super::tcb::{vector_key_tangents, Vector};
use super::{Extrapolation, Interpolation, Track};

/// How a curve runs from one key to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// Hold the key's value until the next key (glTF `STEP`).
    Step,
    /// Straight line to the next key (glTF `LINEAR`, 3DA `LINEAR`).
    Linear,
    /// Cubic Hermite with the keys' slopes (glTF `CUBICSPLINE`, 3DA `BEZIER`).
    Cubic,
}

/// One key of a piecewise cubic Hermite curve (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HermiteKey<V> {
    /// The key's time in frames.
    pub frame: f64,
    /// The value at the key.
    pub value: V,
    /// Slope arriving at the key, value units per frame (0 on the first key).
    pub in_slope: V,
    /// Slope leaving the key, value units per frame (0 on the last key).
    pub out_slope: V,
    /// Shape of the segment leaving this key (ignored on the last key).
    pub segment: Segment,
}

/// Weights within this distance of 1/3 make a Bézier segment a plain Hermite cubic.
const THIRD_TOLERANCE: f64 = 1e-6;

/// The track's keys as Hermite keys, exact between its first and last key, or `None` when a
/// segment has no Hermite form (see the [module docs](self)). A track with no key gives
/// `None`; one key gives one key with zero slopes.
pub fn hermite_keys<V: Vector + PartialEq>(track: &Track<V>) -> Option<Vec<HermiteKey<V>>> {
    let keys = &track.keys;
    if keys.is_empty() {
        return None;
    }
    // Keys on one frame with one value are one key (the FBX reader writes a key that arrives
    // on a cubic and leaves otherwise as two): the first of them carries the arriving slope,
    // the last the leaving segment. `out[g]` is the Hermite key of source key `g`'s group.
    let mut out: Vec<HermiteKey<V>> = Vec::with_capacity(keys.len());
    let mut group = Vec::with_capacity(keys.len());
    for k in keys {
        match out.last() {
            Some(h) if h.frame == k.frame => {
                if h.value != k.value {
                    return None;
                }
            }
            _ => out.push(HermiteKey {
                frame: k.frame,
                value: k.value,
                in_slope: V::ZERO,
                out_slope: V::ZERO,
                segment: Segment::Linear,
            }),
        }
        group.push(out.len() - 1);
    }
    for i in 0..keys.len() - 1 {
        let (a, b) = (&keys[i], &keys[i + 1]);
        let span = b.frame - a.frame;
        if span == 0.0 {
            continue;
        }
        if span.is_nan() || span < 0.0 {
            return None;
        }
        let chord = (b.value - a.value) * (1.0 / span);
        let (segment, sa, sb) = match &a.interpolation {
            Interpolation::Step => (Segment::Step, V::ZERO, V::ZERO),
            Interpolation::StepNext => return None,
            // The evaluator interpolates squad keys of vector tracks linearly.
            Interpolation::Linear | Interpolation::Squad { .. } => (Segment::Linear, chord, chord),
            Interpolation::Tcb(_) => {
                let (_, dd) = vector_key_tangents(track, i);
                let (ds, _) = vector_key_tangents(track, i + 1);
                (Segment::Cubic, dd * (1.0 / span), ds * (1.0 / span))
            }
            Interpolation::Hermite { out_tangent, .. } => {
                // Stored tangents are per frame; a non-Hermite next key lends its own rule's
                // incoming tangent, read per frame, as the evaluator does.
                let tb = match &b.interpolation {
                    Interpolation::Hermite { in_tangent, .. } => *in_tangent,
                    _ => vector_key_tangents(track, i + 1).0,
                };
                (Segment::Cubic, *out_tangent, tb)
            }
            Interpolation::Bezier { out_slope, out_weight, .. } => {
                let (in_slope, in_weight) = match &b.interpolation {
                    Interpolation::Bezier { in_slope, in_weight, .. } => (*in_slope, *in_weight),
                    _ => (*out_slope, 1.0 / 3.0),
                };
                let third = |w: f64| (w.clamp(0.0, 1.0) - 1.0 / 3.0).abs() <= THIRD_TOLERANCE;
                if !third(*out_weight) || !third(in_weight) {
                    return None;
                }
                (Segment::Cubic, *out_slope, in_slope)
            }
        };
        let (ga, gb) = (group[i], group[i + 1]);
        out[ga].segment = segment;
        out[ga].out_slope = sa;
        out[gb].in_slope = sb;
    }
    Some(out)
}

/// Extends Hermite keys of `track` (from [`hermite_keys`]) so that they reproduce the track
/// over the frames `lo..=hi` too, where the track's extrapolation allows it exactly:
/// [`Extrapolation::Constant`] needs nothing (writers hold their end keys), and
/// [`Extrapolation::Slope`] gets a linear segment to a new key at `lo` or `hi`. Any other rule
/// that would be seen inside `lo..=hi` (cycles, lib3ds' hold-last, 3DS repeat) gives `None`.
/// A track of one key holds it whatever its rules.
pub fn cover<V: Vector>(
    track: &Track<V>,
    mut keys: Vec<HermiteKey<V>>,
    lo: f64,
    hi: f64,
) -> Option<Vec<HermiteKey<V>>> {
    if keys.len() < 2 {
        return Some(keys);
    }
    let first = keys[0];
    if first.frame > lo {
        match track.before {
            Extrapolation::Constant => {}
            Extrapolation::Slope => {
                let s = start_slope(track);
                keys[0].in_slope = s;
                let key = HermiteKey {
                    frame: lo,
                    value: first.value - s * (first.frame - lo),
                    in_slope: V::ZERO,
                    out_slope: s,
                    segment: Segment::Linear,
                };
                keys.insert(0, key);
            }
            _ => return None,
        }
    }
    let n = keys.len();
    let last = keys[n - 1];
    if last.frame < hi {
        match track.after {
            Extrapolation::Constant => {}
            Extrapolation::Slope => {
                let s = end_slope(track);
                keys[n - 1].segment = Segment::Linear;
                keys[n - 1].out_slope = s;
                keys.push(HermiteKey {
                    frame: hi,
                    value: last.value + s * (hi - last.frame),
                    in_slope: s,
                    out_slope: V::ZERO,
                    segment: Segment::Linear,
                });
            }
            _ => return None,
        }
    }
    Some(keys)
}

/// The value and slope (per frame) of a Hermite curve at `frame`; ends are held (slope 0).
/// `None` for no keys.
pub fn sample<V: Vector>(keys: &[HermiteKey<V>], frame: f64) -> Option<(V, V)> {
    let first = keys.first()?;
    let last = keys.last()?;
    if frame <= first.frame || keys.len() == 1 {
        return Some((first.value, V::ZERO));
    }
    if frame >= last.frame {
        return Some((last.value, V::ZERO));
    }
    let i = keys.partition_point(|k| k.frame <= frame) - 1;
    let (a, b) = (&keys[i], &keys[i + 1]);
    let span = b.frame - a.frame;
    let u = (frame - a.frame) / span;
    Some(match a.segment {
        Segment::Step => (a.value, V::ZERO),
        Segment::Linear => {
            let d = b.value - a.value;
            (a.value + d * u, d * (1.0 / span))
        }
        Segment::Cubic => {
            let (ta, tb) = (a.out_slope * span, b.in_slope * span);
            let value = super::hermite(a.value, ta, tb, b.value, u);
            // d/du of the Hermite basis, then per frame.
            let u2 = u * u;
            let d = a.value * (6.0 * u2 - 6.0 * u)
                + ta * (3.0 * u2 - 4.0 * u + 1.0)
                + tb * (3.0 * u2 - 2.0 * u)
                + b.value * (6.0 * u - 6.0 * u2);
            (value, d * (1.0 / span))
        }
    })
}

/// The curve restricted to `lo..=hi`: keys outside are dropped and, where the curve runs past
/// an end, a key at that end with the curve's value and slope is added (an exact split). A
/// curve wholly outside becomes one key of the value it holds there. Writers whose times
/// cannot be negative (glTF inputs ≥ 0) clip to `0..=∞`; 3DA writers to the written range.
pub fn clip<V: Vector>(keys: &[HermiteKey<V>], lo: f64, hi: f64) -> Vec<HermiteKey<V>> {
    let (first, last) = (keys[0].frame, keys[keys.len() - 1].frame);
    let at = |f: f64| {
        let (value, slope) = sample(keys, f).expect("keys are not empty");
        let i = keys.partition_point(|k| k.frame <= f).saturating_sub(1);
        HermiteKey { frame: f, value, in_slope: slope, out_slope: slope, segment: keys[i].segment }
    };
    let held = |k: &HermiteKey<V>, frame: f64| HermiteKey {
        frame,
        in_slope: V::ZERO,
        out_slope: V::ZERO,
        segment: Segment::Linear,
        ..*k
    };
    if last <= lo {
        return vec![held(&keys[keys.len() - 1], lo)];
    }
    if first >= hi {
        return vec![held(&keys[0], hi)];
    }
    let mut out = Vec::with_capacity(keys.len() + 2);
    if first < lo && !keys.iter().any(|k| k.frame == lo) {
        out.push(at(lo));
    }
    out.extend(keys.iter().filter(|k| k.frame >= lo && k.frame <= hi).copied());
    if last > hi && !keys.iter().any(|k| k.frame == hi) {
        out.push(at(hi));
    }
    out
}

/// One curve per component joined into a vector curve with a key at every frame where any
/// component has one. `None` components hold `rest`'s value; a component before its first or
/// after its last key holds that key (callers extend curves first with [`cover`]).
///
/// A segment is [`Segment::Step`] when every component steps (or holds) across it,
/// [`Segment::Linear`] when every component is linear (or holds), else [`Segment::Cubic`]
/// with chord slopes for linear components; a segment where one component steps to a new
/// value while another moves continuously has no single form: `None`.
pub fn merge_xyz(
    parts: [Option<&[HermiteKey<f64>]>; 3],
    rest: DVec3,
) -> Option<Vec<HermiteKey<DVec3>>> {
    let mut frames: Vec<f64> =
        parts.iter().flatten().flat_map(|k| k.iter().map(|k| k.frame)).collect();
    frames.sort_by(f64::total_cmp);
    frames.dedup();
    if frames.is_empty() {
        return None;
    }
    // Per component and union segment: (segment kind, value at start, slope leaving, slope
    // arriving at the segment's end, value at end).
    let mut out: Vec<HermiteKey<DVec3>> = frames
        .iter()
        .map(|&frame| HermiteKey {
            frame,
            value: rest,
            in_slope: DVec3::ZERO,
            out_slope: DVec3::ZERO,
            segment: Segment::Linear,
        })
        .collect();
    let mut kinds = vec![[Segment::Linear; 3]; frames.len()];
    for (c, part) in parts.iter().enumerate() {
        let Some(keys) = part else { continue };
        for (j, &f) in frames.iter().enumerate() {
            let (v, s_in, s_out, kind) = component_at(keys, f);
            out[j].value[c] = v;
            out[j].in_slope[c] = s_in;
            out[j].out_slope[c] = s_out;
            kinds[j][c] = kind;
        }
    }
    for j in 0..frames.len().saturating_sub(1) {
        let (a, b) = (&out[j], &out[j + 1]);
        // Per component: a step that jumps, a flat hold, a line or a cubic.
        let mut jumps = 0;
        let mut moves = 0;
        let mut cubic = false;
        for (c, kind) in kinds[j].iter().enumerate() {
            let flat = a.value[c] == b.value[c] && a.out_slope[c] == 0.0 && b.in_slope[c] == 0.0;
            match kind {
                Segment::Step if a.value[c] != b.value[c] => jumps += 1,
                Segment::Step => {}
                _ if flat => {}
                Segment::Linear => moves += 1,
                Segment::Cubic => {
                    moves += 1;
                    cubic = true;
                }
            }
        }
        out[j].segment = match (jumps, moves) {
            (0, _) if cubic => Segment::Cubic,
            (0, _) => Segment::Linear,
            (_, 0) => Segment::Step,
            _ => return None,
        };
        if out[j].segment == Segment::Step {
            out[j].out_slope = DVec3::ZERO;
            out[j + 1].in_slope = DVec3::ZERO;
        }
    }
    Some(out)
}

/// A component curve at `frame`: value, arriving slope, leaving slope, and the kind of the
/// segment that leaves `frame`. Held ends count as flat linear segments.
fn component_at(keys: &[HermiteKey<f64>], frame: f64) -> (f64, f64, f64, Segment) {
    let first = &keys[0];
    let last = &keys[keys.len() - 1];
    if frame < first.frame {
        return (first.value, 0.0, 0.0, Segment::Linear);
    }
    if frame >= last.frame {
        let s_in = if frame == last.frame && keys.len() > 1 { last.in_slope } else { 0.0 };
        return (last.value, s_in, 0.0, Segment::Linear);
    }
    let i = keys.partition_point(|k| k.frame <= frame) - 1;
    let a = &keys[i];
    if a.frame == frame {
        let s_in = if i == 0 { 0.0 } else { a.in_slope };
        return (a.value, s_in, a.out_slope, a.segment);
    }
    let (v, s) = sample(keys, frame).expect("keys are not empty");
    (v, s, s, a.segment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Key, Tcb};

    fn key(frame: f64, value: f64, interpolation: Interpolation<f64>) -> Key<f64> {
        Key { frame, value, interpolation }
    }

    fn bez(s_in: f64, s_out: f64, w: f64) -> Interpolation<f64> {
        Interpolation::Bezier { in_slope: s_in, in_weight: w, out_slope: s_out, out_weight: w }
    }

    /// Every frame on a fine grid inside the keys: the Hermite form equals the evaluator.
    fn assert_same(track: &Track<f64>, keys: &[HermiteKey<f64>]) {
        let (lo, hi) = (track.keys[0].frame, track.keys.last().unwrap().frame);
        for i in 0..=400 {
            let f = lo + (hi - lo) * i as f64 / 400.0;
            let want = track.sample(f).unwrap();
            let got = sample(keys, f).unwrap().0;
            assert!((want - got).abs() < 1e-9, "frame {f}: track {want}, hermite {got}");
        }
    }

    #[test]
    fn unweighted_bezier_keys_keep_their_slopes_and_match_the_evaluator() {
        // Bézier (0, 0) → (3, 3) with slopes 0 and 3 per frame and weights 1/3 is
        // hermite(0, 0·3, 3·3, 3, u).
        let t = Track::new(vec![
            key(0.0, 0.0, bez(0.0, 0.0, 1.0 / 3.0)),
            key(3.0, 3.0, bez(3.0, 0.0, 1.0 / 3.0)),
        ]);
        let h = hermite_keys(&t).unwrap();
        assert_eq!(h[0].segment, Segment::Cubic);
        assert_eq!((h[0].out_slope, h[1].in_slope), (0.0, 3.0));
        // Hermite basis at u = 1/2: a·½ + ta·⅛ + tb·(−⅛) + b·½ = 0 + 0 − 9/8 + 3/2 = 0.375.
        assert!((sample(&h, 1.5).unwrap().0 - 0.375).abs() < 1e-12);
        assert_same(&t, &h);
    }

    #[test]
    fn fbx_f32_third_counts_as_a_third_but_weighted_tangents_do_not() {
        let w = 0.333_333_34_f32 as f64;
        let t = Track::new(vec![key(0.0, 0.0, bez(0.0, 1.0, w)), key(10.0, 5.0, bez(0.0, 0.0, w))]);
        assert!(hermite_keys(&t).is_some());
        let t =
            Track::new(vec![key(0.0, 0.0, bez(0.0, 1.0, 0.5)), key(10.0, 5.0, bez(0.0, 0.0, 0.2))]);
        assert!(hermite_keys(&t).is_none());
    }

    #[test]
    fn tcb_linear_step_and_hermite_segments_match_the_evaluator() {
        let tcb =
            Interpolation::Tcb(Tcb { tension: 0.3, continuity: -0.2, bias: 0.5, ..Tcb::default() });
        let t = Track::new(vec![
            key(0.0, 1.0, tcb.clone()),
            key(4.0, 3.0, tcb.clone()),
            key(9.0, -2.0, tcb),
            key(12.0, 0.5, Interpolation::Linear),
            key(15.0, 2.0, Interpolation::Step),
            key(20.0, 4.0, Interpolation::Hermite { in_tangent: 0.2, out_tangent: -1.0 }),
            key(26.0, 1.0, Interpolation::Hermite { in_tangent: 0.7, out_tangent: 0.0 }),
        ]);
        let h = hermite_keys(&t).unwrap();
        assert_eq!(h[3].segment, Segment::Linear);
        assert_eq!(h[4].segment, Segment::Step);
        // A linear segment's slopes are its chord: (2.0 − 0.5) / 3.
        assert!((h[3].out_slope - 0.5).abs() < 1e-12 && (h[4].in_slope - 0.5).abs() < 1e-12);
        assert_same(&t, &h);
    }

    #[test]
    fn constant_next_and_equal_frames_have_no_hermite_form() {
        let t = Track::new(vec![
            key(0.0, 0.0, Interpolation::StepNext),
            key(1.0, 1.0, Interpolation::Linear),
        ]);
        assert!(hermite_keys(&t).is_none());
        let t = Track::new(vec![
            key(2.0, 0.0, Interpolation::Linear),
            key(2.0, 1.0, Interpolation::Linear),
        ]);
        assert!(hermite_keys(&t).is_none());
    }

    #[test]
    fn a_key_written_twice_on_one_frame_is_one_key_with_both_sides() {
        // As the FBX reader stores a key that arrives on a cubic and leaves linearly.
        let t = Track::new(vec![
            key(0.0, 0.0, bez(0.0, 1.0, 1.0 / 3.0)),
            key(5.0, 2.0, bez(0.5, 0.0, 1.0 / 3.0)),
            key(5.0, 2.0, Interpolation::Linear),
            key(8.0, 3.0, Interpolation::Linear),
        ]);
        let h = hermite_keys(&t).unwrap();
        assert_eq!(h.len(), 3);
        assert_eq!((h[1].in_slope, h[1].segment), (0.5, Segment::Linear));
        assert!((h[1].out_slope - 1.0 / 3.0).abs() < 1e-12);
        assert_same(&t, &h);
    }

    #[test]
    fn keep_slope_is_covered_by_a_linear_key_and_cycles_are_not() {
        let mut t = Track::new(vec![
            key(2.0, 1.0, Interpolation::Linear),
            key(4.0, 5.0, bez(0.0, 0.0, 1.0 / 3.0)),
        ]);
        t.before = Extrapolation::Slope;
        t.after = Extrapolation::Slope;
        let h = cover(&t, hermite_keys(&t).unwrap(), 0.0, 10.0).unwrap();
        // Before: chord slope 2 per frame back to frame 0 → −3; after: arriving slope 0 → 5.
        assert_eq!((h[0].frame, h[0].value), (0.0, -3.0));
        assert_eq!((h.last().unwrap().frame, h.last().unwrap().value), (10.0, 5.0));
        for f in [0.0, 1.0, 2.5, 3.3, 4.0, 7.0, 10.0] {
            assert!((sample(&h, f).unwrap().0 - t.sample(f).unwrap()).abs() < 1e-12, "{f}");
        }
        t.after = Extrapolation::Cycle { mode: crate::anim::CycleMode::Repeat, count: None };
        assert!(cover(&t, hermite_keys(&t).unwrap(), 0.0, 10.0).is_none());
        // Inside the keys the rule is never seen.
        assert!(cover(&t, hermite_keys(&t).unwrap(), 2.0, 4.0).is_some());
    }

    #[test]
    fn merged_components_split_cubics_exactly_at_the_union_of_frames() {
        let x = Track::new(vec![
            key(0.0, 0.0, bez(0.0, 2.0, 1.0 / 3.0)),
            key(10.0, 4.0, bez(-1.0, 0.0, 1.0 / 3.0)),
        ]);
        let y = Track::new(vec![
            key(2.0, 1.0, Interpolation::Linear),
            key(5.0, 7.0, Interpolation::Linear),
            key(8.0, 7.0, Interpolation::Linear),
        ]);
        let hx = hermite_keys(&x).unwrap();
        let hy = hermite_keys(&y).unwrap();
        let rest = DVec3::new(9.0, 9.0, -3.0);
        let m = merge_xyz([Some(&hx), Some(&hy), None], rest).unwrap();
        let frames: Vec<f64> = m.iter().map(|k| k.frame).collect();
        assert_eq!(frames, [0.0, 2.0, 5.0, 8.0, 10.0]);
        for i in 0..=200 {
            let f = i as f64 * 0.05;
            let got = sample(&m, f).unwrap().0;
            let want = DVec3::new(x.sample(f).unwrap(), y.sample(f).unwrap(), rest.z);
            assert!((got - want).abs().max_element() < 1e-9, "frame {f}: {got} vs {want}");
        }
    }

    #[test]
    fn a_step_against_a_moving_component_has_no_single_form() {
        let x = Track::new(vec![
            key(0.0, 0.0, Interpolation::Step),
            key(4.0, 1.0, Interpolation::Step),
        ]);
        let y = Track::new(vec![
            key(0.0, 0.0, Interpolation::Linear),
            key(4.0, 1.0, Interpolation::Linear),
        ]);
        let (hx, hy) = (hermite_keys(&x).unwrap(), hermite_keys(&y).unwrap());
        assert!(merge_xyz([Some(&hx), Some(&hy), None], DVec3::ZERO).is_none());
        let m = merge_xyz([Some(&hx), Some(&hx), None], DVec3::ZERO).unwrap();
        assert_eq!(m[0].segment, Segment::Step);
    }

    #[test]
    fn a_cut_keeps_the_curve_after_it() {
        let tcb = Interpolation::Tcb(Tcb { tension: 0.2, ..Tcb::default() });
        let t = Track::new(vec![
            key(-6.0, 1.0, bez(0.0, 2.0, 1.0 / 3.0)),
            key(-2.0, 3.0, bez(-1.0, 0.5, 1.0 / 3.0)),
            key(3.0, -1.0, tcb.clone()),
            key(7.0, 2.0, Interpolation::Step),
            key(9.0, 4.0, tcb),
        ]);
        let h = hermite_keys(&t).unwrap();
        for cut in [-6.5, -4.0, -2.0, 0.0, 5.0, 8.0, 9.0, 12.0] {
            let c = clip(&h, cut, f64::INFINITY);
            assert!(c[0].frame >= cut, "cut {cut}: first key at {}", c[0].frame);
            for i in 0..=300 {
                let f = cut + (12.0 - cut) * i as f64 / 300.0;
                let want = t.sample(f).unwrap();
                let got = sample(&c, f).unwrap().0;
                assert!((want - got).abs() < 1e-9, "cut {cut} frame {f}: {want} vs {got}");
            }
        }
        // A cut inside the cubic from −2 to 3 starts there: a key at 0 with the derivative.
        let c = clip(&h, 0.0, f64::INFINITY);
        assert_eq!((c.len(), c[0].frame, c[0].segment), (4, 0.0, Segment::Cubic));
        assert_eq!(clip(&h, 12.0, f64::INFINITY).len(), 1);
    }
}
