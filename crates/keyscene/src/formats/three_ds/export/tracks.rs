//! Keyframer tracks: 3DS keys from scene keys (exact writing) or from sampled values
//! (resampling), and their chunk encoding (`POS_TRACK_TAG` … `MORPH_TRACK_TAG`: track flags, 8
//! unknown bytes, key count, then per key its frame, TCB flags, the non-zero TCB parameters and
//! the value).

use glam::{DMat4, DQuat, DVec3};

use super::super::chunks::{KeyChunk, KeyValue};
use super::super::write::ChunkWriter;
use super::{f3, WriteError};
use crate::anim::{Interpolation, Track};

/// A key at `frame` with all TCB parameters 0.
pub(super) fn key(frame: i32, value: KeyValue) -> KeyChunk {
    KeyChunk { frame, flags: 0, tcb: [0.0; 5], value }
}

/// A scene key's frame and TCB parameters as a 3DS key.
pub(super) fn tcb_key<T>(k: &crate::anim::Key<T>, value: KeyValue) -> KeyChunk {
    let tcb = match &k.interpolation {
        Interpolation::Tcb(t) => [t.tension, t.continuity, t.bias, t.ease_to, t.ease_from],
        _ => [0.0; 5],
    };
    let mut flags = 0u16;
    for (bit, v) in tcb.iter().enumerate() {
        if *v != 0.0 {
            flags |= 1 << bit;
        }
    }
    KeyChunk { frame: clamp_frame(k.frame), flags, tcb, value }
}

pub(super) fn clamp_frame(f: f64) -> i32 {
    if f.is_nan() {
        0
    } else {
        f.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
}

/// Relative rotation key value (lib3ds: a key of angle `a` about `axis` turns by −a): the
/// turn `r` (a unit quaternion) as (angle, axis).
pub(super) fn relative_value(r: DQuat) -> KeyValue {
    let r = if r.w < 0.0 { -r } else { r };
    let (axis, angle) = r.to_axis_angle();
    if !angle.is_finite() || angle.abs() < 1e-12 || !axis.is_finite() {
        return KeyValue::AxisAngle(0.0, [0.0, 0.0, 1.0]);
    }
    KeyValue::AxisAngle(-(angle as f32), f3(axis))
}

pub(super) fn vector_track<T>(
    t: &Track<T>,
    value: impl Fn(&T) -> KeyValue,
) -> (u16, Vec<KeyChunk>) {
    (t.flags, t.keys.iter().map(|k| tcb_key(k, value(&k.value))).collect())
}

/// Keys of a resampled value: one at the first frame when it never changes, else one per
/// frame.
pub(super) fn keyed<T: PartialEq>(
    vals: &[T],
    value: impl Fn(&T) -> KeyValue,
    frame: impl Fn(usize) -> i32,
) -> Vec<KeyChunk> {
    if vals.iter().all(|v| *v == vals[0]) {
        return vec![key(frame(0), value(&vals[0]))];
    }
    vals.iter().enumerate().map(|(k, v)| key(frame(k), value(v))).collect()
}

/// Writes one track chunk `tag` with its track `flags` and `keys`.
pub(super) fn write_track(
    w: &mut ChunkWriter,
    tag: u16,
    flags: u16,
    keys: &[KeyChunk],
) -> Result<(), WriteError> {
    w.begin(tag);
    w.u16(flags);
    w.u32(0);
    w.u32(0);
    w.u32(keys.len() as u32);
    for k in keys {
        w.i32(k.frame);
        w.u16(k.flags & 0x1F);
        for bit in 0..5 {
            if k.flags & (1 << bit) != 0 {
                w.f32(k.tcb[bit]);
            }
        }
        match &k.value {
            KeyValue::None => {}
            KeyValue::Scalar(v) => w.f32(*v),
            KeyValue::Vector(v) => w.vec3(*v),
            KeyValue::AxisAngle(a, axis) => {
                w.f32(*a);
                w.vec3(*axis);
            }
            KeyValue::Name(n) => w.cstr(n),
        }
    }
    w.end()?;
    Ok(())
}

/// A node's local matrix at one frame against its written parent: `parent_world⁻¹ · world`
/// (the node's own local matrix, `local()`, when the parent's world matrix is singular or not
/// finite; the world matrix for a root).
pub(super) fn local_against(
    parent_world: Option<DMat4>,
    world: DMat4,
    local: impl FnOnce() -> DMat4,
) -> DMat4 {
    match parent_world {
        Some(pw) => {
            if pw.determinant().abs() > 1e-300 && pw.is_finite() {
                pw.inverse() * world
            } else {
                local()
            }
        }
        None => world,
    }
}

/// A node's local T, R, S at consecutive frames ([`TrsSeries::push`] per frame).
#[derive(Debug, Default)]
pub(super) struct TrsSeries {
    /// Translations.
    pub ts: Vec<DVec3>,
    /// Rotations, each on the same side of the quaternion sphere as the one before.
    pub rs: Vec<DQuat>,
    /// Scales.
    pub ss: Vec<DVec3>,
    /// Whether some local matrix had shear T·R·S cannot hold (its nearest T·R·S is kept).
    pub sheared: bool,
}

impl TrsSeries {
    /// An empty series with room for `n` frames.
    pub(super) fn with_capacity(n: usize) -> TrsSeries {
        TrsSeries {
            ts: Vec::with_capacity(n),
            rs: Vec::with_capacity(n),
            ss: Vec::with_capacity(n),
            sheared: false,
        }
    }

    /// Appends the next frame's local matrix, split into T·R·S.
    pub(super) fn push(&mut self, local: DMat4) {
        let (s, r, t) = local.to_scale_rotation_translation();
        let back = DMat4::from_scale_rotation_translation(s, r, t);
        let scale = local.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
        if !back.abs_diff_eq(local, 1e-6 * scale) {
            self.sheared = true;
        }
        let r = match self.rs.last() {
            Some(prev) if prev.dot(r) < 0.0 => -r,
            _ => r,
        };
        self.ts.push(t);
        self.rs.push(r);
        self.ss.push(s);
    }
}

/// Rotation keys of sampled rotations `rs`: one key when they never change, else one per frame
/// holding the relative turn `r_k · r_(k−1)⁻¹` (the first from identity).
pub(super) fn rotation_keys(rs: &[DQuat], frame: impl Fn(usize) -> i32) -> Vec<KeyChunk> {
    if rs.iter().all(|r| r.abs_diff_eq(rs[0], 0.0)) {
        return vec![key(frame(0), relative_value(rs[0]))];
    }
    let mut prev = DQuat::IDENTITY;
    rs.iter()
        .enumerate()
        .map(|(k, &r)| {
            let rel = r * prev.inverse();
            prev = r;
            key(frame(k), relative_value(rel))
        })
        .collect()
}
