//! Source keys → FBX `AnimationCurve` keys, exactly (issue 14 §1, "Animation"): the key
//! conversion of [`super`]'s writer, the reverse of the reader's table in
//! [`crate::formats::fbx::animation`].
//!
//! # What is exact
//! A scalar [`Track`] becomes one curve, key for key, when its keys have FBX forms (attributes
//! of key `i` describe the segment to key `i + 1`, as ufbx's `ufbxi_read_animation_curve`
//! reads them):
//!
//! | source segment | `KeyAttrFlags` | `KeyAttrDataFloat` |
//! |---|---|---|
//! | [`Interpolation::Step`] | `0x2` constant | `0, 0, weights, 0` |
//! | [`Interpolation::StepNext`] | `0x102` constant next | `0, 0, weights, 0` |
//! | [`Interpolation::Linear`] | `0x404` linear | `0, 0, weights, 0` |
//! | [`Interpolation::Bezier`] | `0x408` cubic, user tangents (`0x800` broken when a cubic segment arrives at the key and its two slopes differ as written, in `f32`) | right slope, next key's left slope (value units per **second**), weights, 0 |
//!
//! Weights: a handle within 1e-6 of 1/3 is left unweighted (ufbx then takes `0.333333`, the
//! SDK 1/3); any other weight `w` in 0…1 sets `0x01000000` (right) / `0x02000000` (next left)
//! and is stored as the 16-bit decimal fraction `round(w × 10 000)` in the low (right) or high
//! (next left) half of the bits of the third float — exact when `w` is such a fraction within
//! 1e-6 (every weight the FBX reader reads is one), otherwise the track has no exact form.
//! The default word is 3333 | 3333 << 16 (`0x0D05_0D05`), as the SDK writes it.
//!
//! Keys on one frame with one value are one FBX key (the reader splits a key that arrives on
//! a cubic and leaves otherwise into two: the first carries the arriving handle, the last the
//! leaving segment); keys on one frame with different values (a jump) have no form.
//! Extrapolation: [`Extrapolation::Slope`] → `Pre-/Post-Extrapolation { Type: 'K' }`,
//! [`Extrapolation::Cycle`] → `R` / `M` / `A` with `Repetition` (−1 for no limit), as the
//! reader reads them back; 3DS's repeat and hold-last rules have no FBX form.
//!
//! Tracks with TCB or stored-Hermite keys (3DS, 3DA, glTF `CUBICSPLINE`) go through
//! [`crate::anim::hermite`]: its exact Hermite form (unweighted cubic keys with the
//! evaluator's slopes), extended over the written range where that is exact
//! ([`hermite::cover`]). What neither path takes is resampled by the caller.
//!
//! KTime is `round(seconds × 46 186 158 000)` with `seconds = frame / fps`; values are stored
//! as `f32` (`KeyValueFloat`), slopes as `f32` per second.

use glam::DVec3;

use crate::anim::curve::CycleMode;
use crate::anim::hermite::{self, HermiteKey, Segment};
use crate::anim::{Extrapolation, Interpolation, Track};

/// `KeyAttrFlags` constant interpolation (held at the key).
pub const FLAG_CONSTANT: i32 = 0x2;
/// `KeyAttrFlags` with [`FLAG_CONSTANT`]: take the next key's value right after the key.
pub const FLAG_CONSTANT_NEXT: i32 = 0x100;
/// `KeyAttrFlags` linear interpolation.
pub const FLAG_LINEAR: i32 = 0x4;
/// `KeyAttrFlags` cubic interpolation.
pub const FLAG_CUBIC: i32 = 0x8;
/// `KeyAttrFlags` user (stored) tangents.
pub const FLAG_TANGENT_USER: i32 = 0x400;
/// `KeyAttrFlags` broken tangents (left and right slopes differ).
pub const FLAG_TANGENT_BROKEN: i32 = 0x800;
/// `KeyAttrFlags` weighted right tangent.
pub const FLAG_WEIGHTED_RIGHT: i32 = 0x0100_0000;
/// `KeyAttrFlags` weighted left tangent of the next key.
pub const FLAG_WEIGHTED_NEXT_LEFT: i32 = 0x0200_0000;

/// The weight fraction of an unweighted handle in the packed word (3333 / 10 000).
const DEFAULT_WEIGHT: u32 = 3333;

/// A weight this close to 1/3 is an unweighted handle.
const THIRD: f64 = 1e-6;

/// One FBX key: time, value, and the attributes of the segment that leaves it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FbxKey {
    /// KTime of the key.
    pub time: i64,
    /// `KeyValueFloat`.
    pub value: f32,
    /// `KeyAttrFlags`.
    pub flags: i32,
    /// `KeyAttrDataFloat` (the third stored by its bits, see the module docs).
    pub data: [f32; 4],
}

/// One written curve: its keys and extrapolation records.
#[derive(Debug, Clone, PartialEq)]
pub struct FbxCurve {
    /// The keys, in time order.
    pub keys: Vec<FbxKey>,
    /// `Pre-Extrapolation` `(Type, Repetition)`; `None` writes nothing (constant).
    pub pre: Option<(u8, i32)>,
    /// `Post-Extrapolation`.
    pub post: Option<(u8, i32)>,
}

impl FbxCurve {
    /// `KeyAttrFlags`, `KeyAttrDataFloat` and `KeyAttrRefCount`, run-length encoded: a run of
    /// consecutive keys with the same flags and the same data bits shares one entry.
    pub fn attributes(&self) -> (Vec<i32>, Vec<f32>, Vec<i32>) {
        let (mut flags, mut data, mut refs) = (Vec::new(), Vec::new(), Vec::<i32>::new());
        let bits = |d: &[f32; 4]| d.map(f32::to_bits);
        let mut last: Option<(i32, [u32; 4])> = None;
        for k in &self.keys {
            let id = (k.flags, bits(&k.data));
            if last == Some(id) {
                *refs.last_mut().expect("a run is open") += 1;
            } else {
                flags.push(k.flags);
                data.extend_from_slice(&k.data);
                refs.push(1);
                last = Some(id);
            }
        }
        (flags, data, refs)
    }
}

fn ktime(frame: f64, fps: f64) -> i64 {
    super::ktime(frame / fps)
}

fn packed(right: u32, next_left: u32) -> f32 {
    f32::from_bits((right & 0xffff) | (next_left << 16))
}

/// Whether a key whose arriving (cubic) slope is `arriving` and leaving slope `leaving` (per
/// frame) is written broken (`0x800`): when the two slopes *as written* (`f32` per second)
/// differ. That is what a reader of the written file sees — our reader gives the stored
/// `f32`s back — so a file written from a written file sets the same flag (docs/fbx.md,
/// "FBX → FBX → FBX"); slopes that differ only below `f32` precision are one slope there.
/// Only a key that a cubic segment arrives at can be broken (the reader takes the left slope
/// from the previous key's cubic data).
fn broken(arriving: f64, leaving: f64, per_second: f64) -> bool {
    (arriving * per_second) as f32 != (leaving * per_second) as f32
}

fn plain_data() -> [f32; 4] {
    [0.0, 0.0, packed(DEFAULT_WEIGHT, DEFAULT_WEIGHT), 0.0]
}

/// The packed fraction of a handle weight: `None` for an unweighted (1/3) handle,
/// `Some(Err(()))` when the weight is no 1/10 000 fraction in 0…1.
fn weight_word(w: f64) -> Option<Result<u32, ()>> {
    if (w - 1.0 / 3.0).abs() <= THIRD {
        return None;
    }
    let n = (w * 10_000.0).round();
    Some(if (0.0..=1.0).contains(&w) && (n / 10_000.0 - w).abs() <= THIRD {
        Ok(n as u32)
    } else {
        Err(())
    })
}

fn extrapolation(e: Extrapolation) -> Option<Option<(u8, i32)>> {
    Some(match e {
        Extrapolation::Constant => None,
        Extrapolation::Slope => Some((b'K', -1)),
        Extrapolation::Cycle { mode, count } => {
            let ty = match mode {
                CycleMode::Repeat => b'R',
                CycleMode::Mirror => b'M',
                CycleMode::Relative => b'A',
            };
            Some((ty, count.map_or(-1, |c| c.min(i32::MAX as u32) as i32)))
        }
        Extrapolation::Repeat | Extrapolation::HoldLast => return None,
    })
}

/// `track`'s keys as an FBX curve key for key (the table in the module docs), values times
/// `scale` (radians → degrees for rotations); `None` when some key has no FBX form, the track
/// is empty, or a value or time is not finite.
pub fn direct(track: &Track<f64>, scale: f64, fps: f64) -> Option<FbxCurve> {
    let keys = &track.keys;
    if keys.is_empty() {
        return None;
    }
    let pre = extrapolation(track.before)?;
    let post = extrapolation(track.after)?;
    // Groups of keys on one frame: (first index, last index).
    let mut groups: Vec<(usize, usize)> = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        if !k.frame.is_finite() || !k.value.is_finite() {
            return None;
        }
        match groups.last_mut() {
            Some(g) if keys[g.0].frame == k.frame => {
                if keys[g.0].value != k.value {
                    return None;
                }
                g.1 = i;
            }
            Some(g) if keys[g.0].frame > k.frame => return None,
            _ => groups.push((i, i)),
        }
    }
    let per_second = scale * fps;
    let mut out = Vec::with_capacity(groups.len());
    // The slope arriving at the current key (per frame, unscaled), for the broken flag.
    let mut arriving: Option<f64> = None;
    for (g, &(_, last)) in groups.iter().enumerate() {
        let k = &keys[last];
        let time = ktime(k.frame, fps);
        let value = (k.value * scale) as f32;
        let Some(&(next_first, _)) = groups.get(g + 1) else {
            out.push(FbxKey {
                time,
                value,
                flags: FLAG_LINEAR | FLAG_TANGENT_USER,
                data: plain_data(),
            });
            break;
        };
        let b = &keys[next_first];
        let (flags, data, next_arriving) = match &k.interpolation {
            Interpolation::Step => (FLAG_CONSTANT, plain_data(), None),
            Interpolation::StepNext => (FLAG_CONSTANT | FLAG_CONSTANT_NEXT, plain_data(), None),
            Interpolation::Linear => (FLAG_LINEAR | FLAG_TANGENT_USER, plain_data(), None),
            Interpolation::Bezier { out_slope, out_weight, .. } => {
                let (in_slope, in_weight) = match &b.interpolation {
                    Interpolation::Bezier { in_slope, in_weight, .. } => (*in_slope, *in_weight),
                    _ => (*out_slope, 1.0 / 3.0),
                };
                if !out_slope.is_finite() || !in_slope.is_finite() {
                    return None;
                }
                let mut flags = FLAG_CUBIC | FLAG_TANGENT_USER;
                if arriving.is_some_and(|s| broken(s, *out_slope, per_second)) {
                    flags |= FLAG_TANGENT_BROKEN;
                }
                let right = match weight_word(*out_weight) {
                    None => DEFAULT_WEIGHT,
                    Some(Ok(w)) => {
                        flags |= FLAG_WEIGHTED_RIGHT;
                        w
                    }
                    Some(Err(())) => return None,
                };
                let left = match weight_word(in_weight) {
                    None => DEFAULT_WEIGHT,
                    Some(Ok(w)) => {
                        flags |= FLAG_WEIGHTED_NEXT_LEFT;
                        w
                    }
                    Some(Err(())) => return None,
                };
                let data = [
                    (out_slope * per_second) as f32,
                    (in_slope * per_second) as f32,
                    packed(right, left),
                    0.0,
                ];
                (flags, data, Some(in_slope))
            }
            Interpolation::Tcb(_) | Interpolation::Hermite { .. } | Interpolation::Squad { .. } => {
                return None
            }
        };
        arriving = next_arriving;
        out.push(FbxKey { time, value, flags, data });
    }
    // Two frames that round to one KTime would make a zero-length segment.
    if out.windows(2).any(|w| w[1].time <= w[0].time) {
        return None;
    }
    Some(FbxCurve { keys: out, pre, post })
}

/// Hermite keys (one component, from [`hermite::hermite_keys`] and [`hermite::cover`]) as
/// an FBX curve with constant extrapolation, values and slopes times `scale`.
pub fn from_hermite(keys: &[HermiteKey<f64>], scale: f64, fps: f64) -> Option<FbxCurve> {
    let per_second = scale * fps;
    let mut out = Vec::with_capacity(keys.len());
    for (j, k) in keys.iter().enumerate() {
        if !k.frame.is_finite() || !k.value.is_finite() {
            return None;
        }
        let time = ktime(k.frame, fps);
        let value = (k.value * scale) as f32;
        let (flags, data) = match (k.segment, keys.get(j + 1)) {
            (_, None) => (FLAG_LINEAR | FLAG_TANGENT_USER, plain_data()),
            (Segment::Step, _) => (FLAG_CONSTANT, plain_data()),
            (Segment::Linear, _) => (FLAG_LINEAR | FLAG_TANGENT_USER, plain_data()),
            (Segment::Cubic, Some(b)) => {
                if !k.out_slope.is_finite() || !b.in_slope.is_finite() {
                    return None;
                }
                let mut flags = FLAG_CUBIC | FLAG_TANGENT_USER;
                let arrives_cubic = j > 0 && keys[j - 1].segment == Segment::Cubic;
                if arrives_cubic && broken(k.in_slope, k.out_slope, per_second) {
                    flags |= FLAG_TANGENT_BROKEN;
                }
                let data = [
                    (k.out_slope * per_second) as f32,
                    (b.in_slope * per_second) as f32,
                    packed(DEFAULT_WEIGHT, DEFAULT_WEIGHT),
                    0.0,
                ];
                (flags, data)
            }
        };
        out.push(FbxKey { time, value, flags, data });
    }
    if out.is_empty() || out.windows(2).any(|w| w[1].time <= w[0].time) {
        return None;
    }
    Some(FbxCurve { keys: out, pre: None, post: None })
}

/// A scalar track as an FBX curve over the frames `lo..=hi`: key for key ([`direct`]) where
/// it can be, else its exact Hermite form; `None`: no exact form (resample).
pub fn scalar_curve(
    track: &Track<f64>,
    scale: f64,
    fps: f64,
    lo: f64,
    hi: f64,
) -> Option<FbxCurve> {
    if let Some(c) = direct(track, scale, fps) {
        return Some(c);
    }
    let keys = hermite::cover(track, hermite::hermite_keys(track)?, lo, hi)?;
    from_hermite(&keys, scale, fps)
}

/// A vector track (3DS/3DA/glTF translation or scale) as three FBX curves over `lo..=hi`
/// through its exact Hermite form; `None`: no exact form.
pub fn vector_curves(track: &Track<DVec3>, fps: f64, lo: f64, hi: f64) -> Option<[FbxCurve; 3]> {
    let keys = hermite::cover(track, hermite::hermite_keys(track)?, lo, hi)?;
    let part = |c: usize| -> Option<FbxCurve> {
        let k: Vec<HermiteKey<f64>> = keys
            .iter()
            .map(|k| HermiteKey {
                frame: k.frame,
                value: k.value[c],
                in_slope: k.in_slope[c],
                out_slope: k.out_slope[c],
                segment: k.segment,
            })
            .collect();
        from_hermite(&k, 1.0, fps)
    };
    Some([part(0)?, part(1)?, part(2)?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::Key;

    fn key(frame: f64, value: f64, interpolation: Interpolation<f64>) -> Key<f64> {
        Key { frame, value, interpolation }
    }

    #[test]
    fn linear_step_and_weighted_cubic_keys_take_the_flags_ufbx_reads() {
        // Flags as ufbx.c reads them (UFBXI_KEY_INTERPOLATION_CONSTANT 0x2, _LINEAR 0x4,
        // _CUBIC 0x8, _TANGENT_USER 0x400, _CONSTANT_NEXT 0x100, _WEIGHTED_RIGHT 0x1000000,
        // _WEIGHTED_NEXT_LEFT 0x2000000); weights as 0.4 decimal fixed point.
        let t = Track::new(vec![
            key(0.0, 1.0, Interpolation::Step),
            key(10.0, 2.0, Interpolation::StepNext),
            key(20.0, 3.0, Interpolation::Linear),
            key(
                30.0,
                4.0,
                Interpolation::Bezier {
                    in_slope: 0.0,
                    in_weight: 1.0 / 3.0,
                    out_slope: 0.5,
                    out_weight: 0.25,
                },
            ),
            key(
                40.0,
                5.0,
                Interpolation::Bezier {
                    in_slope: -1.0,
                    in_weight: 0.75,
                    out_slope: 0.0,
                    out_weight: 1.0 / 3.0,
                },
            ),
        ]);
        let c = direct(&t, 1.0, 30.0).unwrap();
        let flags: Vec<i32> = c.keys.iter().map(|k| k.flags).collect();
        assert_eq!(flags, [0x2, 0x102, 0x404, 0x0300_0408, 0x404]);
        // 10 frames at 30 fps = 1/3 s = 15 395 386 000 ticks.
        assert_eq!(c.keys[1].time, 15_395_386_000);
        // Slopes per second: 0.5 per frame × 30, −1 × 30; weights 2500 | 7500 << 16.
        let d = c.keys[3].data;
        assert_eq!((d[0], d[1]), (15.0, -30.0));
        assert_eq!(d[2].to_bits(), 2500 | (7500 << 16));
        assert_eq!(c.keys[0].data[2].to_bits(), 0x0D05_0D05);
        // Run-length attributes: five distinct entries.
        let (f, data, refs) = c.attributes();
        assert_eq!((f.len(), data.len(), refs), (5, 20, vec![1; 5]));
    }

    #[test]
    fn equal_attributes_share_one_run_and_jumps_have_no_form() {
        let t =
            Track::new((0..4).map(|i| key(i as f64, i as f64, Interpolation::Linear)).collect());
        let (f, _, refs) = direct(&t, 1.0, 24.0).unwrap().attributes();
        assert_eq!((f, refs), (vec![0x404], vec![4]));
        let jump = Track::new(vec![
            key(0.0, 0.0, Interpolation::Linear),
            key(1.0, 1.0, Interpolation::Linear),
            key(1.0, 2.0, Interpolation::Linear),
        ]);
        assert!(direct(&jump, 1.0, 24.0).is_none());
        // A weight that is no 1/10 000 fraction is not exact.
        let odd = Track::new(vec![
            key(
                0.0,
                0.0,
                Interpolation::Bezier {
                    in_slope: 0.0,
                    in_weight: 0.2,
                    out_slope: 0.0,
                    out_weight: 0.123456,
                },
            ),
            key(1.0, 1.0, Interpolation::Linear),
        ]);
        assert!(direct(&odd, 1.0, 24.0).is_none());
    }
}
