//! Evaluating 3DA tracks at a frame (issue #4 §3). The seed gives only the EULER composition
//! literally; the curve shapes of TCB, LINEAR and BEZIER are decisions recorded in
//! `docs/3da.md` ("Track evaluation"):
//!
//! - Before the first key a track holds the first key's value, after the last the last key's;
//!   a track without keys has no value. Frames are `f64` frame numbers.
//! - LINEAR: linear interpolation; 4D: spherical (shortest arc).
//! - TCB: the stored tangents are lib3ds's: `m_out_tan` of key k (lib3ds `dd`) and `m_in_tan`
//!   of key k+1 (`ds`), per unit of the segment parameter. Ease in/out are carried but not
//!   applied, as lib3ds and keyscene's 3DS evaluation (`anim::tcb`) do, so a 3DS → 3DA
//!   conversion samples like its source. 1D/3D: Hermite; 4D: `squad(q_k, out_k, in_k+1,
//!   q_k+1)` with the tangents as control quaternions and lib3ds' slerp (no short-way flip),
//!   as lib3ds.
//! - BEZIER: Hermite with tangents as slopes in value per frame (`m_fOutTan` of key k,
//!   `m_fInTan` of key k+1), scaled by the segment length.
//! - EULER: the seed's code literally (`rot[0] · rot[1] · rot[2]`, Hamilton products), with
//!   `FromEulerYaw/Pitch/Roll` right-handed rotations about 3ds Max's up (+Z), right (+X) and
//!   depth (+Y) axes, the file's axes (docs/3da.md, "Axes and EULER rotation").

use glam::{DQuat, DVec3};

use super::layout::{BezierKey, KeyRecord, LinearKey, TcbKey};
use super::model::{EulerTrack, FloatTrack, KeyTrack, Quat, RotTrack, Vec3, VecTrack};
use crate::anim::hermite;

/// Finds the segment holding `frame`: `Ok((k, u))` with `u` in 0..1 between keys k and k+1,
/// or `Err(i)` when the value is key i's (held at the ends, or a single key).
fn segment<K: KeyRecord>(keys: &[K], frame: f64) -> Option<Result<(usize, f64), usize>> {
    let last = keys.len().checked_sub(1)?;
    if keys.len() == 1 || frame <= keys[0].frame() as f64 {
        return Some(Err(0));
    }
    if frame >= keys[last].frame() as f64 {
        return Some(Err(last));
    }
    let k = keys.partition_point(|key| key.frame() as f64 <= frame).saturating_sub(1);
    let (f0, f1) = (keys[k].frame() as f64, keys[k + 1].frame() as f64);
    if f1 <= f0 {
        return Some(Err(k + 1));
    }
    Some(Ok((k, (frame - f0) / (f1 - f0))))
}

fn v3(v: Vec3) -> DVec3 {
    DVec3::new(v[0].into(), v[1].into(), v[2].into())
}

fn q4(q: Quat) -> DQuat {
    DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into())
}

/// Conversion of a stored value to the type it is evaluated in.
trait Eval: Copy {
    type Out: Copy + std::ops::Mul<f64, Output = Self::Out> + std::ops::Add<Output = Self::Out>;
    fn out(self) -> Self::Out;
}

impl Eval for f32 {
    type Out = f64;
    fn out(self) -> f64 {
        self.into()
    }
}

impl Eval for Vec3 {
    type Out = DVec3;
    fn out(self) -> DVec3 {
        v3(self)
    }
}

fn tcb<V: Eval>(keys: &[TcbKey<V>], frame: f64) -> Option<V::Out>
where
    TcbKey<V>: KeyRecord,
{
    Some(match segment(keys, frame)? {
        Err(i) => keys[i].value.out(),
        Ok((k, u)) => {
            let (a, b) = (&keys[k], &keys[k + 1]);
            hermite(a.value.out(), a.out_tan.out(), b.in_tan.out(), b.value.out(), u)
        }
    })
}

fn linear<V: Eval>(keys: &[LinearKey<V>], frame: f64) -> Option<V::Out>
where
    LinearKey<V>: KeyRecord,
{
    Some(match segment(keys, frame)? {
        Err(i) => keys[i].value.out(),
        Ok((k, u)) => keys[k].value.out() * (1.0 - u) + keys[k + 1].value.out() * u,
    })
}

fn bezier<V: Eval>(keys: &[BezierKey<V>], frame: f64) -> Option<V::Out>
where
    BezierKey<V>: KeyRecord,
{
    Some(match segment(keys, frame)? {
        Err(i) => keys[i].value.out(),
        Ok((k, u)) => {
            let (a, b) = (&keys[k], &keys[k + 1]);
            let dt = (b.frame() - a.frame()) as f64;
            hermite(a.value.out(), a.out_tan.out() * dt, b.in_tan.out() * dt, b.value.out(), u)
        }
    })
}

/// `squad(q0, a, b, q1, u)`: slerp of the chord slerp and the control slerp by `2u(1−u)`,
/// with lib3ds' slerp, which does not take the short way (so the stored hemispheres decide the
/// direction of a turn, as in 3D Studio).
fn squad(q0: DQuat, a: DQuat, b: DQuat, q1: DQuat, u: f64) -> DQuat {
    crate::anim::tcb::squad_lib3ds(q0, a, b, q1, u)
}

impl FloatTrack {
    /// The value (radians for EULER sub-tracks) at `frame`; `None` without keys.
    pub fn sample(&self, frame: f64) -> Option<f64> {
        match self {
            FloatTrack::Tcb(t) => tcb(&t.keys, frame),
            FloatTrack::Linear(t) => linear(&t.keys, frame),
            FloatTrack::Bezier(t) => bezier(&t.keys, frame),
        }
    }
}

impl VecTrack {
    /// The position or scale at `frame`; `None` without keys.
    pub fn sample(&self, frame: f64) -> Option<DVec3> {
        match self {
            VecTrack::Tcb(t) => tcb(&t.keys, frame),
            VecTrack::Linear(t) => linear(&t.keys, frame),
            VecTrack::Bezier(t) => bezier(&t.keys, frame),
        }
    }
}

fn tcb_quat(t: &KeyTrack<TcbKey<Quat>>, frame: f64) -> Option<DQuat> {
    let keys = &t.keys;
    Some(match segment(keys, frame)? {
        Err(i) => q4(keys[i].value),
        Ok((k, u)) => {
            let (a, b) = (&keys[k], &keys[k + 1]);
            squad(q4(a.value), q4(a.out_tan), q4(b.in_tan), q4(b.value), u)
        }
    })
}

fn linear_quat(t: &KeyTrack<LinearKey<Quat>>, frame: f64) -> Option<DQuat> {
    let keys = &t.keys;
    Some(match segment(keys, frame)? {
        Err(i) => q4(keys[i].value),
        Ok((k, u)) => q4(keys[k].value).slerp(q4(keys[k + 1].value), u),
    })
}

impl RotTrack {
    /// The rotation at `frame` (normalised); `None` without keys (EULER: when a sub-track has
    /// none).
    pub fn sample(&self, frame: f64) -> Option<DQuat> {
        let q = match self {
            RotTrack::Tcb(t) => tcb_quat(t, frame),
            RotTrack::Linear(t) => linear_quat(t, frame),
            RotTrack::Euler(e) => e.sample(frame),
        }?;
        Some(q.normalize())
    }
}

/// `FromEulerYaw`: right-handed rotation by `a` radians about +Z, the up axis of the file's
/// 3ds Max axes (heading; docs/3da.md, "Axes and EULER rotation").
pub fn from_euler_yaw(a: f64) -> DQuat {
    DQuat::from_rotation_z(a)
}

/// `FromEulerPitch`: right-handed rotation by `a` radians about +X, Max's right axis.
pub fn from_euler_pitch(a: f64) -> DQuat {
    DQuat::from_rotation_x(a)
}

/// `FromEulerRoll`: right-handed rotation by `a` radians about +Y, Max's depth axis (a front
/// view looks along +Y).
pub fn from_euler_roll(a: f64) -> DQuat {
    DQuat::from_rotation_y(a)
}

impl EulerTrack {
    /// The seed's `m_cCurrentValue` at `frame`: `rot[0] * rot[1] * rot[2]`, where `rot[i]`
    /// comes from the X, Y, Z track (i = 0, 1, 2) and `m_aRotOrder[i]` is 0 → yaw(−angle),
    /// 2 → pitch(−angle), 1 → roll(angle). An order value above 2 contributes no rotation
    /// (the seed's `switch` has no default; `check` reports it).
    pub fn sample(&self, frame: f64) -> Option<DQuat> {
        let angles = [self.x.sample(frame)?, self.y.sample(frame)?, self.z.sample(frame)?];
        let mut q = DQuat::IDENTITY;
        for (i, a) in angles.into_iter().enumerate() {
            q *= match self.rot_order[i] {
                0 => from_euler_yaw(-a),
                2 => from_euler_pitch(-a),
                1 => from_euler_roll(a),
                _ => DQuat::IDENTITY,
            };
        }
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lin1(keys: &[(i32, f32)]) -> FloatTrack {
        FloatTrack::Linear(KeyTrack {
            current: 0.0,
            keys: keys.iter().map(|&(frame, value)| LinearKey { frame, value }).collect(),
        })
    }

    #[test]
    fn linear_holds_ends_and_interpolates_between() {
        let t = lin1(&[(10, 1.0), (20, 3.0)]);
        assert_eq!(t.sample(0.0), Some(1.0));
        assert_eq!(t.sample(15.0), Some(2.0));
        assert_eq!(t.sample(99.0), Some(3.0));
        assert_eq!(lin1(&[]).sample(0.0), None);
    }

    #[test]
    fn bezier_with_matching_slopes_reproduces_a_line() {
        // 0 → 10 over 10 frames, slopes 1 per frame at both ends: a Hermite cubic with the
        // chord's slope is the chord, so frame 2.5 gives 2.5.
        let k = |frame, value| BezierKey { frame, in_tan: 1.0f32, out_tan: 1.0, value };
        let t = FloatTrack::Bezier(KeyTrack { current: 0.0, keys: vec![k(0, 0.0), k(10, 10.0)] });
        assert!((t.sample(2.5).unwrap() - 2.5).abs() < 1e-12);
    }

    #[test]
    fn tcb_zero_tangents_is_smoothstep_and_ease_is_not_applied() {
        // Hermite with zero tangents: h(u) = 3u² − 2u³, so u = 0.25 gives 0.15625 — with full
        // ease stored on both keys, which lib3ds does not apply.
        let k = |frame, value| TcbKey {
            frame,
            value,
            ease_in: 1.0,
            ease_out: 1.0,
            ..TcbKey::<f32>::default()
        };
        let t = FloatTrack::Tcb(KeyTrack { current: 0.0, keys: vec![k(0, 0.0), k(4, 1.0)] });
        assert!((t.sample(1.0).unwrap() - 0.15625).abs() < 1e-12);
    }

    #[test]
    fn euler_follows_the_seed_signs_and_order() {
        // X track 0.3 with order [0, 1, 2]: rot[0] = yaw(−0.3) about +Z =
        // (0, 0, −sin 0.15, cos 0.15); Y track 0.2 → roll(+0.2) about +Y; Z track 0.1 →
        // pitch(−0.1) about +X. Hand-written quaternions (half angles).
        let e = EulerTrack {
            num_keys: 1,
            x: lin1(&[(0, 0.3)]),
            y: lin1(&[(0, 0.2)]),
            z: lin1(&[(0, 0.1)]),
            rot_order: [0, 1, 2],
            current: [0.0, 0.0, 0.0, 1.0],
        };
        let q = e.sample(0.0).unwrap();
        let yaw = DQuat::from_xyzw(0.0, 0.0, -(0.15f64).sin(), (0.15f64).cos());
        let roll = DQuat::from_xyzw(0.0, (0.1f64).sin(), 0.0, (0.1f64).cos());
        let pitch = DQuat::from_xyzw(-(0.05f64).sin(), 0.0, 0.0, (0.05f64).cos());
        let expected = yaw * roll * pitch;
        assert!(q.abs_diff_eq(expected, 1e-6), "{q:?} vs {expected:?}");
    }

    #[test]
    fn euler_xyz_rotation_is_order_012_with_negated_outer_angles() {
        // docs/3da.md's example: X first, then Y, then Z (Rz·Ry·Rx) with angles (x, y, z) is
        // m_aRotOrder [0, 1, 2] with sub-tracks X = −z, Y = y, Z = −x.
        let (x, y, z) = (0.4f32, -0.25f32, 1.1f32);
        let e = EulerTrack {
            num_keys: 1,
            x: lin1(&[(0, -z)]),
            y: lin1(&[(0, y)]),
            z: lin1(&[(0, -x)]),
            rot_order: [0, 1, 2],
            current: [0.0, 0.0, 0.0, 1.0],
        };
        let expected = DQuat::from_rotation_z(f64::from(z))
            * DQuat::from_rotation_y(f64::from(y))
            * DQuat::from_rotation_x(f64::from(x));
        let q = e.sample(0.0).unwrap();
        assert!(q.abs_diff_eq(expected, 1e-6), "{q:?} vs {expected:?}");
    }

    #[test]
    fn tcb_quat_with_chord_controls_is_slerp() {
        // With control quaternions equal to the keys themselves squad degenerates to slerp:
        // halfway between identity and 90° about Z is 45° about Z.
        let q1 =
            [0.0, 0.0, (std::f32::consts::FRAC_PI_4).sin(), (std::f32::consts::FRAC_PI_4).cos()];
        let id = [0.0, 0.0, 0.0, 1.0];
        let k =
            |frame, v: Quat| TcbKey { frame, value: v, in_tan: v, out_tan: v, ..TcbKey::default() };
        let t = RotTrack::Tcb(KeyTrack { current: id, keys: vec![k(0, id), k(2, q1)] });
        let q = t.sample(1.0).unwrap();
        assert!(q.abs_diff_eq(DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4), 1e-6), "{q:?}");
    }
}
