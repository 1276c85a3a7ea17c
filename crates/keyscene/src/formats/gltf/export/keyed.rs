//! Channels written from the source keys: a node part's one channel as a glTF sampler, when
//! its keys have an exact glTF form (see the module docs of [`crate::formats::gltf`],
//! **Animation**); else `None` and the part is resampled.

use glam::{DQuat, DVec3};
use gltf_json as json;
use json::animation::Interpolation;

use super::nodes::quat_f32;
use crate::anim::hermite::{self, HermiteKey, Segment};
use crate::anim::{keep, ChannelTarget, RotationTrack};

/// One node part's source keys as a glTF sampler (see the module docs, **Animation**).
pub(super) struct Keyed<const N: usize> {
    pub(super) interpolation: Interpolation,
    /// Key times in seconds, strictly increasing, from 0 on.
    pub(super) times: Vec<f32>,
    /// One value per key; for CUBICSPLINE (in-tangent, value, out-tangent) per key, tangents
    /// in value units per **second** (glTF 2.0 Appendix C).
    pub(super) values: Vec<[f32; N]>,
}

impl<const N: usize> Keyed<N> {
    /// Whether the sampler moves: a key value for which `is_rest` is false (the part's rest
    /// value as written, `f32`) or, for CUBICSPLINE, a tangent that is not zero.
    pub(super) fn moves(&self, is_rest: impl Fn(&[f32; N]) -> bool) -> bool {
        if self.interpolation == Interpolation::CubicSpline {
            self.values
                .chunks(3)
                .any(|c| c.len() < 3 || !is_rest(&c[1]) || c[0] != [0.0; N] || c[2] != [0.0; N])
        } else {
            self.values.iter().any(|v| !is_rest(v))
        }
    }
}

/// A node's translation (`scale` false) or scale curve from its channels as a glTF sampler
/// over the frames `range` (the written animation's first and last frame), when exactly one
/// channel drives the part and its keys have an exact Hermite form ([`hermite`]); components
/// without a track hold `rest` (the node's rest part, as in the evaluator). `None`: resample.
pub(super) fn keyed_vec3(
    channels: &[&ChannelTarget],
    scale: bool,
    rest: DVec3,
    range: (f64, f64),
    fps: f64,
) -> Option<Keyed<3>> {
    let (lo, hi) = range;
    let part = if scale { keep::Part::Scale } else { keep::Part::Translation };
    let keys = match keep::part_channel(channels, part).ok()?? {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
            hermite::cover(t, hermite::hermite_keys(t)?, lo, hi)?
        }
        ChannelTarget::TranslationXyz(xyz) | ChannelTarget::ScaleXyz(xyz) => {
            let mut parts: [Option<Vec<HermiteKey<f64>>>; 3] = [None, None, None];
            for (part, t) in parts.iter_mut().zip(xyz) {
                let Some(t) = t.as_ref().filter(|t| !t.keys.is_empty()) else { continue };
                *part = Some(hermite::cover(t, hermite::hermite_keys(t)?, lo, hi)?);
            }
            hermite::merge_xyz(
                [parts[0].as_deref(), parts[1].as_deref(), parts[2].as_deref()],
                rest,
            )?
        }
        _ => return None,
    };
    let mut keys = hermite::clip(&keys, lo, f64::INFINITY);
    // A held last key is repeated at the animation's end, so that clients that take a clip's
    // length from its last key time (three.js) play the whole animation.
    if let Some(last) = keys.last_mut().filter(|k| k.frame < hi) {
        last.segment = Segment::Linear;
        last.out_slope = DVec3::ZERO;
        let held = HermiteKey { frame: hi, in_slope: DVec3::ZERO, ..*last };
        keys.push(held);
    }
    // The sampler kind: segments that do not move fit any kind.
    let (mut step, mut linear, mut cubic) = (false, false, false);
    for w in keys.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let flat = a.value == b.value
            && (a.segment != Segment::Cubic
                || (a.out_slope == DVec3::ZERO && b.in_slope == DVec3::ZERO));
        match a.segment {
            _ if flat => {}
            Segment::Step => step = true,
            Segment::Linear => linear = true,
            Segment::Cubic => cubic = true,
        }
    }
    let interpolation = match (step, linear || cubic) {
        (true, true) => return None,
        (true, false) => Interpolation::Step,
        (false, _) if cubic => Interpolation::CubicSpline,
        (false, _) => Interpolation::Linear,
    };
    let times = key_times(keys.iter().map(|k| k.frame), fps)?;
    let f3 = |v: DVec3| {
        let v = v.as_vec3();
        v.is_finite().then(|| v.to_array())
    };
    let mut values = Vec::with_capacity(keys.len() * 3);
    if interpolation == Interpolation::CubicSpline {
        // Per segment: the leaving slope of its first key and the arriving slope of its last,
        // per frame; a linear segment's are its chord's, a (flat) step's 0.
        let n = keys.len();
        let mut s_in = vec![DVec3::ZERO; n];
        let mut s_out = vec![DVec3::ZERO; n];
        for j in 0..n - 1 {
            let (a, b) = (&keys[j], &keys[j + 1]);
            let (o, i) = match a.segment {
                Segment::Cubic => (a.out_slope, b.in_slope),
                Segment::Linear => {
                    let chord = (b.value - a.value) / (b.frame - a.frame);
                    (chord, chord)
                }
                Segment::Step => (DVec3::ZERO, DVec3::ZERO),
            };
            s_out[j] = o;
            s_in[j + 1] = i;
        }
        for (j, k) in keys.iter().enumerate() {
            values.push(f3(s_in[j] * fps)?);
            values.push(f3(k.value)?);
            values.push(f3(s_out[j] * fps)?);
        }
    } else {
        for k in &keys {
            values.push(f3(k.value)?);
        }
    }
    Some(Keyed { interpolation, times, values })
}

/// A node's rotation from its channels as a glTF sampler from frame `range.0` on, when exactly
/// one channel drives it and it is a quaternion track the evaluator slerps (LINEAR; glam's
/// slerp takes the short way, as glTF's does) or steps (STEP) throughout; keys are kept in one
/// hemisphere (the same curve, as both take the short way). Euler, 3DS relative and squad
/// tracks: `None` (resampled).
pub(super) fn keyed_rotation(
    channels: &[&ChannelTarget],
    range: (f64, f64),
    fps: f64,
) -> Option<Keyed<4>> {
    use crate::anim::{Extrapolation, Interpolation as Kind};
    let Some(ChannelTarget::Rotation(RotationTrack::Quat(track))) =
        keep::part_channel(channels, keep::Part::Rotation).ok()?
    else {
        return None;
    };
    let keys = &track.keys;
    if keys.is_empty()
        || keys
            .windows(2)
            .any(|w| w[0].frame.partial_cmp(&w[1].frame) != Some(std::cmp::Ordering::Less))
        || !keys.iter().all(|k| k.frame.is_finite() && k.value.is_finite())
    {
        return None;
    }
    // The sampler reads the keys as holding their ends (glTF clamps).
    if keys.len() > 1
        && (track.before == Extrapolation::HoldLast || track.after == Extrapolation::Repeat)
    {
        return None;
    }
    let (mut step, mut slerp) = (false, false);
    for w in keys.windows(2) {
        match w[0].interpolation {
            _ if w[0].value == w[1].value => {}
            Kind::Step => step = true,
            Kind::Linear | Kind::Hermite { .. } | Kind::Bezier { .. } | Kind::Tcb(_) => {
                slerp = true
            }
            Kind::StepNext | Kind::Squad { .. } => return None,
        }
    }
    let interpolation = match (step, slerp) {
        (true, true) => return None,
        (true, false) => Interpolation::Step,
        (false, _) => Interpolation::Linear,
    };
    // Cut at the first written frame: a key there with the track's value.
    let lo = range.0;
    let i = keys.partition_point(|k| k.frame < lo);
    let mut kept: Vec<(f64, DQuat)> = Vec::with_capacity(keys.len() - i + 1);
    if i > 0 && keys.get(i).is_none_or(|k| k.frame > lo) {
        kept.push((lo, crate::anim::tcb::sample_quat(track, lo, None)?));
    }
    kept.extend(keys[i..].iter().map(|k| (k.frame, k.value)));
    // The last key held to the animation's end (as for translation and scale).
    if let Some(&(_, q)) = kept.last().filter(|k| k.0 < range.1) {
        kept.push((range.1, q));
    }
    let times = key_times(kept.iter().map(|k| k.0), fps)?;
    let mut values = Vec::with_capacity(kept.len());
    let mut prev: Option<DQuat> = None;
    for &(_, q) in &kept {
        let q = q.normalize();
        let q = match prev {
            Some(p) if p.dot(q) < 0.0 => -q,
            _ => q,
        };
        prev = Some(q);
        values.push(quat_f32(q));
    }
    values.iter().all(|q| q.iter().all(|c| c.is_finite())).then_some(Keyed {
        interpolation,
        times,
        values,
    })
}

/// Key frames as glTF times (seconds, f32); `None` when two of them fall on one f32 time or a
/// time is not finite.
fn key_times(frames: impl Iterator<Item = f64>, fps: f64) -> Option<Vec<f32>> {
    let mut out: Vec<f32> = Vec::new();
    for f in frames {
        let t = (f / fps) as f32;
        if !t.is_finite() || t < 0.0 || out.last().is_some_and(|&l| t <= l) {
            return None;
        }
        out.push(t);
    }
    Some(out)
}
