//! Kochanek–Bartels (TCB) splines as 3D Studio evaluates them, plus linear, step and Hermite
//! segments.
//!
//! The tangent rule follows lib3ds 1.3 (`tcb.c`, `tracks.c`), the reference implementation
//! named by issue #2: at key `c` with neighbours `p` and `n` the incoming and outgoing tangents
//! are
//! `ds = ksm·(c−p) + ksp·(n−c)`, `dd = kdm·(c−p) + kdp·(n−c)` with the weights of
//! [`tcb_tangents`], and a segment from `a` to `b` is the Hermite cubic
//! `h(u) = a·(2u³−3u²+1) + dd_a·(u³−2u²+u) + ds_b·(u³−u²) + b·(−2u³+3u²)`.
//! End keys without a neighbour take the chord to their one neighbour as both tangents.

use glam::{DQuat, DVec3};

use super::{AxisAngle, Extrapolation, Interpolation, Key, Tcb, Track};

/// The four Kochanek–Bartels weights `(ksm, ksp, kdm, kdp)` of key `c` between keys `p` and
/// `n`, as lib3ds computes them: the incoming tangent is `ksm·(c−p) + ksp·(n−c)`, the outgoing
/// `kdm·(c−p) + kdp·(n−c)`. `dt_prev` and `dt_next` are the frame gaps to the neighbours; they
/// adjust for unevenly spaced keys (lib3ds `lib3ds_tcb`).
pub fn tcb_tangents(c: &Tcb, dt_prev: f64, dt_next: f64) -> (f64, f64, f64, f64) {
    let mut fp = 1.0;
    let mut fn_ = 1.0;
    let dt = 0.5 * (dt_prev + dt_next);
    if dt > 0.0 {
        fp = dt_prev / dt;
        fn_ = dt_next / dt;
        let cc = f64::from(c.continuity).abs();
        fp = fp + cc - cc * fp;
        fn_ = fn_ + cc - cc * fn_;
    }
    let cm = 1.0 - f64::from(c.continuity);
    let tm = 0.5 * (1.0 - f64::from(c.tension));
    let cp = 2.0 - cm;
    let bm = 1.0 - f64::from(c.bias);
    let bp = 2.0 - bm;
    let tmcm = tm * cm;
    let tmcp = tm * cp;
    (tmcm * bp * fp, tmcp * bm * fp, tmcp * bp * fn_, tmcm * bm * fn_)
}

/// The cubic Hermite curve from `a` (outgoing tangent `ta`) to `b` (incoming tangent `tb`) at
/// parameter `u` in 0..1. Tangents are per unit of `u`.
pub fn hermite<V>(a: V, ta: V, tb: V, b: V, u: f64) -> V
where
    V: std::ops::Mul<f64, Output = V> + std::ops::Add<Output = V>,
{
    let u2 = u * u;
    let u3 = u2 * u;
    a * (2.0 * u3 - 3.0 * u2 + 1.0)
        + ta * (u3 - 2.0 * u2 + u)
        + tb * (u3 - u2)
        + b * (-2.0 * u3 + 3.0 * u2)
}

/// 3D Studio's ease: remaps the segment parameter `u` so the curve slows when leaving a key
/// with `ease_from` and when arriving at a key with `ease_to` (lib3ds `lib3ds_float_ease`).
pub fn ease(u: f64, ease_from: f64, ease_to: f64) -> f64 {
    let mut a = ease_from;
    let mut b = ease_to;
    let s = a + b;
    if s == 0.0 {
        return u;
    }
    if s > 1.0 {
        a /= s;
        b /= s;
    }
    let k = 1.0 / (2.0 - a - b);
    if u < a {
        (k / a) * u * u
    } else if u < 1.0 - b {
        k * (2.0 * u - a)
    } else {
        let v = 1.0 - u;
        1.0 - (k / b) * v * v
    }
}

/// Values that can be interpolated by TCB splines component-wise.
pub trait Vector:
    Copy + std::ops::Mul<f64, Output = Self> + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self>
{
    /// The zero vector.
    const ZERO: Self;
}

impl Vector for f64 {
    const ZERO: f64 = 0.0;
}

impl Vector for DVec3 {
    const ZERO: DVec3 = DVec3::ZERO;
}

/// The key index `i` such that `keys[i].frame <= frame < keys[i+1].frame`, after applying the
/// track's extrapolation; `Err(value index)` when the frame is held at an end key.
fn locate<T>(track: &Track<T>, frame: f64) -> Result<(usize, f64), usize> {
    let keys = &track.keys;
    let last = keys.len() - 1;
    let first_f = keys[0].frame;
    let last_f = keys[last].frame;
    if keys.len() == 1 {
        return Err(0);
    }
    let mut t = frame;
    if t < first_f {
        match track.before {
            Extrapolation::Constant => return Err(0),
            Extrapolation::Repeat => return Err(0),
        }
    }
    if t >= last_f {
        match track.after {
            Extrapolation::Constant => return Err(last),
            Extrapolation::Repeat => {
                let span = last_f - first_f;
                if span <= 0.0 {
                    return Err(last);
                }
                t = (t - first_f) % span + first_f;
            }
        }
    }
    // Last key with frame <= t whose successor is later (skips zero-length segments).
    let i = keys.partition_point(|k| k.frame <= t).saturating_sub(1).min(last - 1);
    Ok((i, t))
}

/// Incoming (`ds`) and outgoing (`dd`) tangents of key `i` of a vector track (lib3ds
/// `lib3ds_lin3_key_setup`), with the track's cyclic-tangent rule at the ends.
fn key_tangents<V: Vector>(track: &Track<V>, i: usize) -> (V, V) {
    let keys = &track.keys;
    let n = keys.len();
    let c = &keys[i];
    let tcb = match &c.interpolation {
        Interpolation::Tcb(t) => *t,
        Interpolation::Hermite { in_tangent, out_tangent } => return (*in_tangent, *out_tangent),
        _ => Tcb::default(),
    };
    let (prev, next): (Option<(V, f64)>, Option<(V, f64)>) = if n < 2 {
        (None, None)
    } else if track.cyclic_tangents && (i == 0 || i == n - 1) {
        // lib3ds SMOOTH: the first key's predecessor is the second-to-last key, the last key's
        // successor is the second key; gaps measured across the wrap.
        if i == 0 {
            let p = &keys[n - 2];
            let pl = &keys[n - 1];
            (Some((p.value, pl.frame - p.frame)), Some((keys[1].value, keys[1].frame - c.frame)))
        } else {
            let p = &keys[i - 1];
            (Some((p.value, c.frame - p.frame)), Some((keys[1].value, keys[1].frame - keys[0].frame)))
        }
    } else {
        (
            (i > 0).then(|| (keys[i - 1].value, c.frame - keys[i - 1].frame)),
            (i + 1 < n).then(|| (keys[i + 1].value, keys[i + 1].frame - c.frame)),
        )
    };
    match (prev, next) {
        (Some((p, dtp)), Some((nv, dtn))) => {
            let (ksm, ksp, kdm, kdp) = tcb_tangents(&tcb, dtp, dtn);
            let np = c.value - p;
            let nn = nv - c.value;
            (np * ksm + nn * ksp, np * kdm + nn * kdp)
        }
        (Some((p, _)), None) => {
            let d = c.value - p;
            (d, d)
        }
        (None, Some((nv, _))) => {
            let d = nv - c.value;
            (d, d)
        }
        (None, None) => (V::ZERO, V::ZERO),
    }
}

/// Samples a vector (or scalar) track at `frame`; `None` when it has no key.
pub(crate) fn sample_vector<V: Vector>(track: &Track<V>, frame: f64) -> Option<V> {
    let first = track.keys.first()?;
    let (i, t) = match locate(track, frame) {
        Ok(x) => x,
        Err(k) => return Some(track.keys[k].value),
    };
    let _ = first;
    let a: &Key<V> = &track.keys[i];
    let b = &track.keys[i + 1];
    let span = b.frame - a.frame;
    if span <= 0.0 {
        return Some(b.value);
    }
    let u = (t - a.frame) / span;
    match &a.interpolation {
        Interpolation::Step => Some(a.value),
        Interpolation::Linear => Some(a.value + (b.value - a.value) * u),
        Interpolation::Hermite { out_tangent, .. } => {
            let tb = match &b.interpolation {
                Interpolation::Hermite { in_tangent, .. } => *in_tangent,
                _ => key_tangents(track, i + 1).0,
            };
            Some(hermite(a.value, *out_tangent * span, tb * span, b.value, u))
        }
        Interpolation::Tcb(ta) => {
            let eb = match &b.interpolation {
                Interpolation::Tcb(tb) => f64::from(tb.ease_to),
                _ => 0.0,
            };
            let u = ease(u, f64::from(ta.ease_from), eb);
            let (_, dd) = key_tangents(track, i);
            let (ds, _) = key_tangents(track, i + 1);
            Some(hermite(a.value, dd, ds, b.value, u))
        }
    }
}

/// Samples an absolute quaternion track: slerp between keys (step keys hold).
pub(crate) fn sample_quat(track: &Track<DQuat>, frame: f64) -> Option<DQuat> {
    track.keys.first()?;
    let (i, t) = match locate(track, frame) {
        Ok(x) => x,
        Err(k) => return Some(track.keys[k].value),
    };
    let a = &track.keys[i];
    let b = &track.keys[i + 1];
    let span = b.frame - a.frame;
    if span <= 0.0 {
        return Some(b.value);
    }
    let u = (t - a.frame) / span;
    match a.interpolation {
        Interpolation::Step => Some(a.value),
        _ => Some(a.value.slerp(b.value, u)),
    }
}

/// Samples a 3DS relative rotation track: keys are accumulated into absolute orientations
/// (`q_i = q_{i−1} · R(axis_i, angle_i)`) and interpolated between keys.
pub(crate) fn sample_relative(track: &Track<AxisAngle>, frame: f64) -> Option<DQuat> {
    track.keys.first()?;
    let abs: Vec<DQuat> = accumulate(track);
    let (i, t) = match locate(track, frame) {
        Ok(x) => x,
        Err(k) => return Some(abs[k]),
    };
    let a = &track.keys[i];
    let b = &track.keys[i + 1];
    let span = b.frame - a.frame;
    if span <= 0.0 {
        return Some(abs[i + 1]);
    }
    let u = (t - a.frame) / span;
    Some(abs[i].slerp(abs[i + 1], u))
}

/// The absolute orientation at every key of a relative rotation track.
pub(crate) fn accumulate(track: &Track<AxisAngle>) -> Vec<DQuat> {
    let mut q = DQuat::IDENTITY;
    track
        .keys
        .iter()
        .map(|k| {
            let axis = k.value.axis;
            let r = if axis.length_squared() > 0.0 {
                DQuat::from_axis_angle(axis.normalize(), k.value.angle)
            } else {
                DQuat::IDENTITY
            };
            q = (q * r).normalize();
            q
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(frame: f64, value: f64) -> Key<f64> {
        Key { frame, value, interpolation: Interpolation::Tcb(Tcb::default()) }
    }

    #[test]
    fn default_tcb_weights_are_catmull_rom_halves() {
        // T=C=B=0, even spacing: ds = dd = ((c−p) + (n−c)) / 2, the Catmull–Rom tangent.
        assert_eq!(tcb_tangents(&Tcb::default(), 10.0, 10.0), (0.5, 0.5, 0.5, 0.5));
    }

    #[test]
    fn tcb_through_three_keys_hits_keys_and_catmull_rom_midpoint() {
        let t = Track::new(vec![key(0.0, 0.0), key(10.0, 10.0), key(20.0, 0.0)]);
        assert_eq!(t.sample(10.0), Some(10.0));
        // Segment 0→10: tangents dd0 = 10 (chord), ds1 = 0.5·10 + 0.5·(−10) = 0.
        // h(0.5) = 0 + 10·(0.125−0.5+0.5) + 0 + 10·0.5 = 1.25 + 5 = 6.25.
        assert!((t.sample(5.0).unwrap() - 6.25).abs() < 1e-12);
    }

    #[test]
    fn ease_is_identity_without_ease_and_fixes_ends() {
        assert_eq!(ease(0.3, 0.0, 0.0), 0.3);
        assert_eq!(ease(0.0, 0.5, 0.5), 0.0);
        assert!((ease(1.0, 0.5, 0.5) - 1.0).abs() < 1e-12);
        assert!((ease(0.5, 0.5, 0.5) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn relative_rotation_keys_accumulate() {
        use std::f64::consts::FRAC_PI_2;
        let k = |f, a| Key {
            frame: f,
            value: AxisAngle { angle: a, axis: DVec3::Z },
            interpolation: Interpolation::Tcb(Tcb::default()),
        };
        let t = Track::new(vec![k(0.0, 0.0), k(10.0, FRAC_PI_2), k(20.0, FRAC_PI_2)]);
        // Two quarter turns about Z: X ends at −X.
        let q = sample_relative(&t, 20.0).unwrap();
        assert!((q * DVec3::X - DVec3::NEG_X).length() < 1e-12);
    }
}
