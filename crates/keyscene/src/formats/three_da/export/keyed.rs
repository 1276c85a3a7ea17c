//! The source's own keys in 3DA's track forms, exactly (docs/3da.md, "Exporter", Tracks):
//! 3DS TCB vector keys → TCB 3D, 3DS relative rotations → TCB 4D, quaternion keys → LINEAR /
//! TCB 4D, and the turns (axis conversion at a root) that keep such tracks exact. The FBX
//! curve forms (LINEAR / BEZIER 3D, EULER) are `three_da::keys`.

use glam::{DMat3, DQuat, DVec3};

use super::f3;
use crate::anim::tcb::{relative_key_quats, vector_key_tangents};
use crate::anim::{Extrapolation, Interpolation, RotationTrack, Tcb, Track};
use crate::formats::three_da::layout::{LinearKey, TcbKey};
use crate::formats::three_da::model::{KeyTrack, RotTrack, VecTrack};

/// `VecTrack` kind and key count for the report.
pub(super) fn describe_vec(t: &VecTrack) -> String {
    match t {
        VecTrack::Tcb(k) => format!("TCB 3D, {} keys", k.keys.len()),
        VecTrack::Linear(k) => format!("LINEAR 3D, {} keys", k.keys.len()),
        VecTrack::Bezier(k) => format!("BEZIER 3D, {} keys", k.keys.len()),
    }
}

/// A 3D track with every value and tangent multiplied by `m` (exact: the curves are linear
/// in their values and tangents).
pub(super) fn turn_vec(t: VecTrack, m: DMat3) -> VecTrack {
    let f = |v: [f32; 3]| f3(m * DVec3::from(v.map(f64::from)));
    match t {
        VecTrack::Tcb(k) => VecTrack::Tcb(k.map_values(&f)),
        VecTrack::Linear(k) => VecTrack::Linear(k.map_values(&f)),
        VecTrack::Bezier(k) => VecTrack::Bezier(k.map_values(&f)),
    }
}

/// A quaternion track with every key and control quaternion multiplied by `q` on the left
/// (exact: slerp and lib3ds' squad depend only on the quaternions' dot products and linear
/// combinations, which a left turn keeps).
pub(super) fn turn_rot(t: RotTrack, q: DQuat) -> Option<RotTrack> {
    let f = |v: [f32; 4]| (q * DQuat::from_array(v.map(f64::from))).as_quat().to_array();
    match t {
        RotTrack::Tcb(k) => Some(RotTrack::Tcb(k.map_values(&f))),
        RotTrack::Linear(k) => Some(RotTrack::Linear(k.map_values(&f))),
        RotTrack::Euler(_) => None,
    }
}

/// Groups of keys at the same frame, as `(first, last)` key indices. The scene evaluator
/// enters such a group through its first key and leaves through its last (see
/// `anim::tcb`, "Outside the keys"), so a group whose keys hold the same value is one key
/// (first's incoming tangent, last's outgoing); `None` when a group's values differ (a jump,
/// which 3DA's strictly increasing keys cannot hold).
fn merge_groups(
    frames: &[u32],
    same: impl Fn(usize, usize) -> bool,
) -> Option<Vec<(usize, usize)>> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, &f) in frames.iter().enumerate() {
        match out.last_mut() {
            Some(g) if frames[g.1] == f => {
                if !same(g.0, i) {
                    return None;
                }
                g.1 = i;
            }
            _ => out.push((i, i)),
        }
    }
    Some(out)
}

/// TCB keys with each same-frame group merged: the first key of the group with the last
/// one's outgoing tangent.
fn merged<V: Copy>(keys: Vec<TcbKey<V>>, groups: &[(usize, usize)]) -> Vec<TcbKey<V>> {
    groups.iter().map(|&(a, b)| TcbKey { out_tan: keys[b].out_tan, ..keys[a] }).collect()
}

/// The key frames of `t` as 3DA frames when 3DA's rules sample it exactly as the scene does
/// within `lo..=hi` (output frames; source frames × `rate`): integer frames ≥ 0 (within 1e-6), non-decreasing (equal ones are merged by
/// [`merge_groups`]), and the ends behave alike (a
/// lib3ds hold-last before the first key only when that key is at or before `lo`; a repeat
/// after the last key only when that key is after `hi`).
fn exact_frames<T>(t: &Track<T>, rate: f64, lo: f64, hi: f64) -> Option<Vec<u32>> {
    let keys = &t.keys;
    let (first, last) = (keys.first()?.frame * rate, keys.last()?.frame * rate);
    if keys.len() > 1 {
        if t.before == Extrapolation::HoldLast && first > lo {
            return None;
        }
        if t.after == Extrapolation::Repeat && last <= hi {
            return None;
        }
    }
    let frames: Vec<u32> = keys
        .iter()
        .map(|k| {
            let f = k.frame * rate;
            let r = f.round();
            ((f - r).abs() <= 1e-6 && (0.0..=f64::from(u32::MAX)).contains(&r)).then_some(r as u32)
        })
        .collect::<Option<_>>()?;
    frames.windows(2).all(|w| w[0] <= w[1]).then_some(frames)
}

/// A 3D track with the scene track's keys: all linear → LINEAR 3D; else TCB 3D whose
/// `m_in_tan`/`m_out_tan` are the tangents (per unit of `u`) the scene's evaluator uses on
/// each segment (TCB: lib3ds' `ds`/`dd`; Hermite: stored × segment length; linear segment:
/// the chord, which makes the Hermite a straight line). `None` (resample) for step keys or
/// frames 3DA cannot hold.
pub(super) fn keyed_vec_track(t: &Track<DVec3>, rate: f64, lo: f64, hi: f64) -> Option<VecTrack> {
    let frames = exact_frames(t, rate, lo, hi)?;
    let keys = &t.keys;
    if keys.len() > 1
        && keys
            .iter()
            .any(|k| matches!(k.interpolation, Interpolation::Step | Interpolation::Bezier { .. }))
    {
        return None;
    }
    let groups = merge_groups(&frames, |a, b| keys[a].value == keys[b].value)?;
    if keys.iter().all(|k| matches!(k.interpolation, Interpolation::Linear)) || keys.len() == 1 {
        let keys: Vec<LinearKey<[f32; 3]>> = groups
            .iter()
            .map(|&(a, _)| LinearKey { frame: frames[a] as i32, value: f3(keys[a].value) })
            .collect();
        return Some(VecTrack::Linear(KeyTrack { current: keys[0].value, keys }));
    }
    let mut out: Vec<TcbKey<[f32; 3]>> = keys
        .iter()
        .zip(&frames)
        .map(|(k, &f)| {
            let tcb = match &k.interpolation {
                Interpolation::Tcb(c) => *c,
                _ => Tcb::default(),
            };
            TcbKey {
                frame: f,
                tension: tcb.tension,
                continuity: tcb.continuity,
                bias: tcb.bias,
                ease_in: tcb.ease_to,
                ease_out: tcb.ease_from,
                value: f3(k.value),
                in_tan: [0.0; 3],
                out_tan: [0.0; 3],
            }
        })
        .collect();
    for i in 0..keys.len().saturating_sub(1) {
        let (a, b) = (&keys[i], &keys[i + 1]);
        let span = b.frame - a.frame;
        let (ta, tb) = match &a.interpolation {
            Interpolation::Tcb(_) => (vector_key_tangents(t, i).1, vector_key_tangents(t, i + 1).0),
            Interpolation::Hermite { out_tangent, .. } => {
                let tb = match &b.interpolation {
                    Interpolation::Hermite { in_tangent, .. } => *in_tangent,
                    _ => vector_key_tangents(t, i + 1).0,
                };
                (*out_tangent * span, tb * span)
            }
            Interpolation::Linear => (b.value - a.value, b.value - a.value),
            Interpolation::Step
            | Interpolation::StepNext
            | Interpolation::Bezier { .. }
            | Interpolation::Squad { .. } => return None,
        };
        out[i].out_tan = f3(ta);
        out[i + 1].in_tan = f3(tb);
    }
    let out = merged(out, &groups);
    Some(VecTrack::Tcb(KeyTrack { current: out[0].value, keys: out }))
}

/// A rotation track with the scene track's keys: 3DS relative keys → TCB 4D of absolute
/// quaternions with lib3ds' squad controls ([`relative_key_quats`]; a linear segment's
/// controls are its end keys, which makes squad a slerp); absolute quaternion keys → LINEAR
/// 4D when all linear, TCB 4D when all are [`Interpolation::Squad`]. `None` (resample)
/// otherwise, and for a relative track with a key that turns more than [`WHOLE_TURN_KEPT`]
/// from the key before (3DA's quaternion keys hold a segment's end orientations, not its
/// turn; resampled at every frame the turn is kept, issue 33 §9).
/// The largest turn (radians) one 3DS relative key may make from the key before and stay a
/// TCB 4D key: 0.01 short of a whole turn. Up to there lib3ds' slerp (no short-way flip),
/// which 3DA's TCB 4D uses, follows the key's own way round from the two quaternions' signs;
/// nearer a whole turn the two are nearly opposite and `f32` keys put the slerp's plane
/// anywhere (errors of 5e-4 at a whole turn), and past it the turn is gone.
const WHOLE_TURN_KEPT: f64 = std::f64::consts::TAU - 0.01;

pub(super) fn keyed_rot_track(r: &RotationTrack, rate: f64, lo: f64, hi: f64) -> Option<RotTrack> {
    let q = |q: DQuat| q.as_quat().to_array();
    let tcb_key = |frame: u32, value, in_tan, out_tan| TcbKey {
        frame,
        value,
        in_tan,
        out_tan,
        ..TcbKey::default()
    };
    match r {
        RotationTrack::Relative(t) => {
            let frames = exact_frames(t, rate, lo, hi)?;
            if t.keys.len() > 1
                && t.keys.iter().any(|k| {
                    matches!(k.interpolation, Interpolation::Step | Interpolation::Bezier { .. })
                })
            {
                return None;
            }
            // A key turning (nearly) a whole turn or more from the one before: its absolute
            // quaternion is (nearly) the previous one negated, and slerp between nearly
            // opposite quaternions loses the turn (past a whole turn, it has no way to say it).
            if t.keys.iter().skip(1).any(|k| k.value.angle.abs() > WHOLE_TURN_KEPT) {
                return None;
            }
            let abs = relative_key_quats(t);
            let groups = merge_groups(&frames, |a, b| abs[a][0].abs_diff_eq(abs[b][0], 1e-12))?;
            let mut keys: Vec<TcbKey<[f32; 4]>> = abs
                .iter()
                .zip(&frames)
                .map(|(a, &f)| tcb_key(f, q(a[0]), q(a[0]), q(a[0])))
                .collect();
            for i in 0..keys.len().saturating_sub(1) {
                if !matches!(t.keys[i].interpolation, Interpolation::Linear) {
                    keys[i].out_tan = q(abs[i][2]);
                    keys[i + 1].in_tan = q(abs[i + 1][1]);
                }
            }
            for (k, src) in keys.iter_mut().zip(&t.keys) {
                if let Interpolation::Tcb(c) = src.interpolation {
                    (k.tension, k.continuity, k.bias, k.ease_in, k.ease_out) =
                        (c.tension, c.continuity, c.bias, c.ease_to, c.ease_from);
                }
            }
            let keys = merged(keys, &groups);
            Some(RotTrack::Tcb(KeyTrack { current: keys[0].value, keys }))
        }
        RotationTrack::Quat(t) => {
            let frames = exact_frames(t, rate, lo, hi)?;
            let groups = merge_groups(&frames, |a, b| t.keys[a].value == t.keys[b].value)?;
            if t.keys.iter().all(|k| matches!(k.interpolation, Interpolation::Linear))
                || t.keys.len() == 1
            {
                let keys: Vec<LinearKey<[f32; 4]>> = groups
                    .iter()
                    .map(|&(a, _)| LinearKey { frame: frames[a] as i32, value: q(t.keys[a].value) })
                    .collect();
                return Some(RotTrack::Linear(KeyTrack { current: keys[0].value, keys }));
            }
            let n = t.keys.len();
            let mut keys = Vec::with_capacity(n);
            for (i, (k, &f)) in t.keys.iter().zip(&frames).enumerate() {
                let Interpolation::Squad { in_control, out_control } = k.interpolation else {
                    if i + 1 == n {
                        keys.push(tcb_key(f, q(k.value), q(k.value), q(k.value)));
                        continue;
                    }
                    return None;
                };
                keys.push(tcb_key(f, q(k.value), q(in_control), q(out_control)));
            }
            let keys = merged(keys, &groups);
            Some(RotTrack::Tcb(KeyTrack { current: keys[0].value, keys }))
        }
        RotationTrack::Euler { .. } => None,
    }
}
