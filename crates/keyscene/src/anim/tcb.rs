//! Kochanek–Bartels (TCB) splines as lib3ds 1.3 evaluates 3D Studio tracks, plus linear, step
//! and Hermite segments.
//!
//! Every rule here was checked against lib3ds 1.3's `tcb.c`, `tracks.c` and `quat.c` (Debian
//! `lib3ds_1.3.0.orig.tar.gz`) and against the lib3ds references of the 3DS corpus
//! (`tests/three_ds_lib3ds.rs`):
//!
//! * **Tangents.** At key `c` with neighbours `p` and `n` the incoming and outgoing tangents
//!   are `ds = ksm·(c−p) + ksp·(n−c)`, `dd = kdm·(c−p) + kdp·(n−c)` with the weights of
//!   [`tcb_tangents`]. A key with one neighbour takes the chord to it as both tangents; a lone
//!   key has zero tangents.
//! * **Smooth flag** ([`Track::cyclic_tangents`], 3DS track flag bit 1): the first key's
//!   predecessor is the second-to-last key (gap measured from it to the last key), the last
//!   key's successor is the second key (gap measured from the first key).
//! * **Segments.** A segment from `a` to `b` is the Hermite cubic
//!   `h(u) = a·(2u³−3u²+1) + dd_a·(u³−2u²+u) + ds_b·(u³−u²) + b·(−2u³+3u²)`,
//!   `u = (t − frame_a) / (frame_b − frame_a)` — **without** ease: lib3ds reads ease to/from
//!   but never applies them.
//! * **Outside the keys.** The segment is the first `k` with `frame_k ≤ t < frame_k+1`. None
//!   found (at or after the last key): hold the last key, or with repeat re-map
//!   `t' = fmod(t − first, last − first) + first` (so `t = last` shows the first key). Before
//!   the first key: the first key with repeat, else lib3ds's last-key quirk
//!   ([`Extrapolation::HoldLast`]).
//! * **Rotation** (3DS relative keys): key `i`'s absolute quaternion is
//!   `q_i = r_i · q_{i−1}` with `r_i = (sin(−angle/2)·axis/|axis|, cos(−angle/2))` (lib3ds'
//!   `lib3ds_quat_axis_angle` negates the angle; identity for a zero axis). Tangents use the
//!   logarithm of the quotient to each neighbour (`ln(q⁻¹·q')`, neighbour flipped to the near
//!   hemisphere; a neighbour whose own relative angle exceeds 2π − 1e-8 contributes 0), and a
//!   segment is `squad(q_a, dd_a, ds_b, q_b, u)` built from lib3ds' slerp, which does *not*
//!   take the short way: keys more than half a turn apart spin the long way as 3D Studio
//!   stored them. End keys have `ds = dd = q` (no tangent).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use glam::{DQuat, DVec3};

use super::{AxisAngle, Extrapolation, Interpolation, Key, Tcb, Track};

/// The four Kochanek–Bartels weights `(ksm, ksp, kdm, kdp)` of key `c` whose neighbours are
/// `dt_prev` frames before and `dt_next` frames after it, as lib3ds `lib3ds_tcb` computes them:
/// the incoming tangent is `ksm·(c−p) + ksp·(n−c)`, the outgoing `kdm·(c−p) + kdp·(n−c)`.
/// Uneven gaps scale the weights by `dt_prev / dt̄` and `dt_next / dt̄` (`dt̄` their mean),
/// blended towards 1 by `|continuity|`. Zero gaps (which lib3ds divides by) keep factor 1.
pub fn tcb_tangents(c: &Tcb, dt_prev: f64, dt_next: f64) -> (f64, f64, f64, f64) {
    let mut fp = 1.0;
    let mut fn_ = 1.0;
    let dt = 0.5 * (dt_prev + dt_next);
    if dt != 0.0 && dt.is_finite() {
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

/// Values that can be interpolated by TCB splines component-wise.
pub trait Vector:
    Copy
    + std::ops::Mul<f64, Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
{
    /// The zero vector.
    const ZERO: Self;

    /// Per key of a track its incoming and outgoing tangents, as the key search keeps them
    /// for sampling many frames ([`Tangents`]). By default none are kept (they are worked out
    /// at each sample).
    fn into_tangents(t: Vec<(Self, Self)>) -> Tangents {
        let _ = t;
        Tangents::None
    }

    /// The tangents [`Vector::into_tangents`] made, when they are of this type.
    fn of_tangents(t: &Tangents) -> Option<&[(Self, Self)]> {
        let _ = t;
        None
    }
}

impl Vector for f64 {
    const ZERO: f64 = 0.0;
    fn into_tangents(t: Vec<(f64, f64)>) -> Tangents {
        Tangents::Scalar(t)
    }
    fn of_tangents(t: &Tangents) -> Option<&[(f64, f64)]> {
        match t {
            Tangents::Scalar(t) => Some(t),
            _ => None,
        }
    }
}

impl Vector for DVec3 {
    const ZERO: DVec3 = DVec3::ZERO;
    fn into_tangents(t: Vec<(DVec3, DVec3)>) -> Tangents {
        Tangents::Vec3(t)
    }
    fn of_tangents(t: &Tangents) -> Option<&[(DVec3, DVec3)]> {
        match t {
            Tangents::Vec3(t) => Some(t),
            _ => None,
        }
    }
}

/// Every key's incoming and outgoing tangents ([`vector_key_tangents`]) of one vector track,
/// worked out once for sampling it at many frames (they depend on the keys alone, and a TCB
/// segment needs two of them at every sample).
#[derive(Debug, Clone, Default)]
pub enum Tangents {
    /// None kept: worked out at each sample.
    #[default]
    None,
    /// Of a scalar track.
    Scalar(Vec<(f64, f64)>),
    /// Of a vector track.
    Vec3(Vec<(DVec3, DVec3)>),
}

/// Where a frame falls in a track.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// The value of key `i`, held.
    Hold(usize),
    /// Between key `i` and `i + 1`, at parameter `u` in 0..1.
    Between(usize, f64),
}

/// The first `i` with `keys[i].frame <= t < keys[i + 1].frame`, by binary search over the
/// keys' non-decreasing frames ([`Track::keys`]): O(log keys) a sample, so resampling a track
/// of one key per frame is not quadratic in its length (issue #16 goal 2). The first key
/// after `t` ends the segment; only the first segment can start after `t`. ufbx finds an FBX
/// curve's keyframe the same way (`ufbx_evaluate_curve_flags`: binary search on
/// `keys[mid].time <= time`). With a `cursor` the segment of the track's last sample and its
/// two neighbours are checked first ([`KeyCursor`]); the answer is the same.
fn find_segment<T>(keys: &[Key<T>], t: f64, cursor: Option<&KeyCursor>) -> Option<usize> {
    let i = match cursor {
        Some(c) => c.boundary(keys, t)?,
        None => boundary(keys, t)?,
    };
    (i + 1 < keys.len() && keys[i].frame <= t).then_some(i)
}

/// The number of keys after the first at or before `t` (`None` without keys): the binary
/// search of [`find_segment`].
fn boundary<T>(keys: &[Key<T>], t: f64) -> Option<usize> {
    Some(keys.get(1..)?.partition_point(|k| k.frame <= t))
}

/// Where the last sample of one track fell, so that the next sample, when it is near (as the
/// resampler's are: every frame in order, then the halves of an interval), checks that
/// segment and its two neighbours before it searches all the keys: three comparisons instead
/// of a binary search whose probes miss the cache (5.4 M keys in Blender's baked
/// `anim_heavy`, docs/benchmarks.md stop 28). Only a hint: a segment is taken from it when
/// its keys bound the frame as the search's would, so the answer is the search's, bit for
/// bit, whatever the hint; a track whose frames are not in order (a NaN frame) always
/// searches, since there the search's answer depends on its probes. The hint is atomic
/// (relaxed) so that a shared [`super::ChannelSampler`] stays `Sync`: two threads sampling
/// one track at once only spoil each other's hint.
///
/// A cursor of a vector track with TCB keys also keeps every key's tangents
/// ([`KeyCursor::with_tangents`]), which TCB segments otherwise work out at every sample: the
/// same operations on the same keys, so the same values.
#[derive(Debug, Default)]
pub(crate) struct KeyCursor {
    /// Whether the track's key frames are non-decreasing (none NaN).
    ordered: bool,
    /// The last [`boundary`] found (0 before the first sample).
    hint: AtomicUsize,
    /// The track's key tangents, when kept.
    tangents: Tangents,
}

impl Clone for KeyCursor {
    fn clone(&self) -> KeyCursor {
        KeyCursor {
            ordered: self.ordered,
            hint: AtomicUsize::new(self.hint.load(Relaxed)),
            tangents: self.tangents.clone(),
        }
    }
}

impl KeyCursor {
    /// A cursor for `track`, before its first sample.
    pub(crate) fn new<T>(track: &Track<T>) -> KeyCursor {
        let ordered = track.keys.windows(2).all(|w| w[0].frame <= w[1].frame);
        KeyCursor { ordered, hint: AtomicUsize::new(0), tangents: Tangents::None }
    }

    /// [`KeyCursor::new`] for a vector track, with every key's tangents kept when a key is
    /// TCB (one pair a key: memory in proportion to the track, as the keys themselves).
    pub(crate) fn with_tangents<V: Vector>(track: &Track<V>) -> KeyCursor {
        let mut c = KeyCursor::new(track);
        if track.keys.iter().any(|k| matches!(k.interpolation, Interpolation::Tcb(_))) {
            let t = (0..track.keys.len()).map(|i| key_tangents(track, i)).collect();
            c.tangents = V::into_tangents(t);
        }
        c
    }

    /// [`boundary`]`(keys, t)`: the hint or one of its neighbours when the keys around it
    /// bound `t` (the predicate `frame <= t` holds up to it and fails after it), else the
    /// binary search; the answer is kept as the next hint.
    fn boundary<T>(&self, keys: &[Key<T>], t: f64) -> Option<usize> {
        let n = keys.len();
        let at_or_before = |i: usize| keys[i].frame <= t;
        let is =
            |i: usize| i < n && (i == 0 || at_or_before(i)) && (i + 1 == n || !at_or_before(i + 1));
        let h = self.hint.load(Relaxed);
        if self.ordered {
            for i in [h, h.wrapping_add(1), h.wrapping_sub(1)] {
                if is(i) {
                    if i != h {
                        self.hint.store(i, Relaxed);
                    }
                    return Some(i);
                }
            }
        }
        let i = boundary(keys, t)?;
        self.hint.store(i, Relaxed);
        Some(i)
    }
}

/// Locates `frame` in a track with at least one key, as lib3ds' `*_track_eval` do (the
/// search starting at `cursor`'s hint when there is one).
fn locate<T>(track: &Track<T>, frame: f64, cursor: Option<&KeyCursor>) -> Place {
    let keys = &track.keys;
    let last = keys.len() - 1;
    if last == 0 {
        return Place::Hold(0);
    }
    let first_f = keys[0].frame;
    if frame < first_f {
        match track.before {
            Extrapolation::HoldLast => return Place::Hold(last),
            // Slope and cycles are handled by `curve::extrapolate` for the tracks that have
            // them; other value types hold the end key.
            _ => return Place::Hold(0),
        }
    }
    let (i, t) = match find_segment(keys, frame, cursor) {
        Some(i) => (i, frame),
        None => match track.after {
            Extrapolation::Repeat => {
                let t = (frame - first_f) % (keys[last].frame - first_f) + first_f;
                match find_segment(keys, t, cursor) {
                    Some(i) => (i, t),
                    None => return Place::Hold(last),
                }
            }
            _ => return Place::Hold(last),
        },
    };
    let (a, b) = (keys[i].frame, keys[i + 1].frame);
    Place::Between(i, (t - a) / (b - a))
}

/// The neighbours lib3ds' track setup gives key `i`: `(p, cp, n, cn)` as key indices, where
/// `cp`/`cn` stand in for `c` when measuring the gaps to `p`/`n` (they differ from `i` only
/// across the wrap of a smooth track).
fn neighbours<T>(track: &Track<T>, i: usize) -> (Option<usize>, usize, Option<usize>, usize) {
    let n = track.keys.len();
    let last = n - 1;
    let smooth = track.cyclic_tangents;
    if i == 0 {
        if smooth {
            (Some(n - 2), last, Some(1), 0)
        } else {
            (None, 0, Some(1), 0)
        }
    } else if i == last {
        if smooth {
            (Some(i - 1), i, Some(1), 0)
        } else {
            (Some(i - 1), i, None, i)
        }
    } else {
        (Some(i - 1), i, Some(i + 1), i)
    }
}

/// The TCB weights of key `i` between its neighbours `p` and `n` (with stand-ins `cp`, `cn`).
fn weights<T>(
    keys: &[Key<T>],
    i: usize,
    p: usize,
    cp: usize,
    n: usize,
    cn: usize,
) -> (f64, f64, f64, f64) {
    let tcb = match &keys[i].interpolation {
        Interpolation::Tcb(t) => *t,
        _ => Tcb::default(),
    };
    tcb_tangents(&tcb, keys[cp].frame - keys[p].frame, keys[n].frame - keys[cn].frame)
}

/// Incoming (`ds`) and outgoing (`dd`) tangents of key `i` of a vector track (lib3ds
/// `lib3ds_lin3_key_setup` / `lib3ds_lin1_key_setup`).
fn key_tangents<V: Vector>(track: &Track<V>, i: usize) -> (V, V) {
    let keys = &track.keys;
    if let Interpolation::Hermite { in_tangent, out_tangent } = &keys[i].interpolation {
        return (*in_tangent, *out_tangent);
    }
    if keys.len() < 2 {
        return (V::ZERO, V::ZERO);
    }
    let c = keys[i].value;
    match neighbours(track, i) {
        (Some(p), cp, Some(n), cn) => {
            let (ksm, ksp, kdm, kdp) = weights(keys, i, p, cp, n, cn);
            let np = c - keys[p].value;
            let nn = keys[n].value - c;
            (np * ksm + nn * ksp, np * kdm + nn * kdp)
        }
        (Some(p), ..) => {
            let d = c - keys[p].value;
            (d, d)
        }
        (None, _, Some(n), _) => {
            let d = keys[n].value - c;
            (d, d)
        }
        (None, _, None, _) => (V::ZERO, V::ZERO),
    }
}

/// The incoming (`ds`) and outgoing (`dd`) tangents of key `i` of a vector track, per unit
/// of the segment parameter `u`, exactly as the evaluator uses them: the stored ones for a
/// [`Interpolation::Hermite`] key (per frame, so *not* scaled here), else lib3ds' TCB rule.
/// Exporters write these as 3DA TCB `m_in_tan` / `m_out_tan`. Panics when `i` is out of range.
pub fn vector_key_tangents<V: Vector>(track: &Track<V>, i: usize) -> (V, V) {
    key_tangents(track, i)
}

/// The keys of a 3DS relative rotation track as lib3ds sets them up: per key the absolute
/// orientation `q_i` and its incoming (`ds`) and outgoing (`dd`) squad control quaternions,
/// raw (lib3ds' arithmetic, hemispheres as accumulated, not normalised). A segment between
/// keys `a` and `b` is `squad(q_a, dd_a, ds_b, q_b, u)` with [`slerp_lib3ds`] — exporters
/// write these as 3DA TCB 4D keys.
pub fn relative_key_quats(track: &Track<AxisAngle>) -> Vec<[DQuat; 3]> {
    let abs = accumulate_raw(track);
    let raw = |q: q4::Q| DQuat::from_xyzw(q[0], q[1], q[2], q[3]);
    (0..abs.len())
        .map(|i| {
            let (ds, dd) = quat_tangents(track, &abs, i);
            [raw(abs[i]), raw(ds), raw(dd)]
        })
        .collect()
}

/// lib3ds' `lib3ds_quat_slerp`: spherical interpolation **without** the flip to the short way
/// (keys more than half a turn apart spin the long way, as 3D Studio stored them).
pub fn slerp_lib3ds(a: DQuat, b: DQuat, t: f64) -> DQuat {
    let q = q4::slerp(a.to_array(), b.to_array(), t);
    DQuat::from_xyzw(q[0], q[1], q[2], q[3])
}

/// `squad(a, p, q, b, u)` = `slerp(slerp(a, b, u), slerp(p, q, u), 2u(1−u))` with
/// [`slerp_lib3ds`] (lib3ds `lib3ds_quat_squad`).
pub fn squad_lib3ds(a: DQuat, p: DQuat, q: DQuat, b: DQuat, u: f64) -> DQuat {
    let r = q4::squad(a.to_array(), p.to_array(), q.to_array(), b.to_array(), u);
    DQuat::from_xyzw(r[0], r[1], r[2], r[3])
}

/// Samples a track with at least one key as if it had no slope or cycle extrapolation (the
/// key search starting at `cursor`, [`KeyCursor`]: the same value).
pub(crate) fn sample_inside<V: Vector>(
    track: &Track<V>,
    frame: f64,
    cursor: Option<&KeyCursor>,
) -> Option<V> {
    track.keys.first()?;
    let (i, u) = match locate(track, frame, cursor) {
        Place::Hold(k) => return Some(track.keys[k].value),
        Place::Between(i, u) => (i, u),
    };
    let a = &track.keys[i];
    let b = &track.keys[i + 1];
    // Key `j`'s tangents: kept by the cursor, else worked out.
    let kept = cursor.and_then(|c| V::of_tangents(&c.tangents));
    let tangents =
        |j: usize| kept.and_then(|t| t.get(j).copied()).unwrap_or_else(|| key_tangents(track, j));
    match &a.interpolation {
        Interpolation::Step => Some(a.value),
        Interpolation::StepNext => Some(if u > 0.0 { b.value } else { a.value }),
        Interpolation::Linear | Interpolation::Squad { .. } => {
            Some(a.value + (b.value - a.value) * u)
        }
        Interpolation::Hermite { out_tangent, .. } => {
            let span = b.frame - a.frame;
            let tb = match &b.interpolation {
                Interpolation::Hermite { in_tangent, .. } => *in_tangent,
                _ => tangents(i + 1).0,
            };
            Some(hermite(a.value, *out_tangent * span, tb * span, b.value, u))
        }
        Interpolation::Tcb(_) => {
            let (_, dd) = tangents(i);
            let (ds, _) = tangents(i + 1);
            Some(hermite(a.value, dd, ds, b.value, u))
        }
        Interpolation::Bezier { out_slope, out_weight, .. } => {
            let (in_slope, in_weight) = match &b.interpolation {
                Interpolation::Bezier { in_slope, in_weight, .. } => (*in_slope, *in_weight),
                _ => (*out_slope, 1.0 / 3.0),
            };
            let span = b.frame - a.frame;
            let s = bezier_parameter(*out_weight, in_weight, u);
            let p1 = a.value + *out_slope * (out_weight * span);
            let p2 = b.value - in_slope * (in_weight * span);
            Some(cubic_bezier(a.value, p1, p2, b.value, s))
        }
    }
}

/// The cubic Bézier `p0…p3` at parameter `s`.
fn cubic_bezier<V: Vector>(p0: V, p1: V, p2: V, p3: V, s: f64) -> V {
    let r = 1.0 - s;
    p0 * (r * r * r) + p1 * (3.0 * r * r * s) + p2 * (3.0 * r * s * s) + p3 * (s * s * s)
}

/// The Bézier parameter whose time coordinate is `u` (0–1 across the segment), for time
/// handles at `wa` from the start and `wb` before the end. With weights in 0..1 the time curve
/// is monotonic, so Newton steps guarded by bisection converge; `u` itself is the answer when
/// both weights are 1/3 (the time curve is then the identity).
fn bezier_parameter(wa: f64, wb: f64, u: f64) -> f64 {
    let wa = wa.clamp(0.0, 1.0);
    let wb = wb.clamp(0.0, 1.0);
    if (wa - 1.0 / 3.0).abs() < 1e-12 && (wb - 1.0 / 3.0).abs() < 1e-12 {
        return u;
    }
    let x = |s: f64| cubic_bezier(0.0, wa, 1.0 - wb, 1.0, s);
    let (mut lo, mut hi, mut s) = (0.0_f64, 1.0_f64, u);
    for _ in 0..64 {
        let f = x(s) - u;
        if f.abs() < 1e-14 {
            break;
        }
        if f > 0.0 {
            hi = s;
        } else {
            lo = s;
        }
        let r = 1.0 - s;
        let d = 3.0 * r * r * wa + 6.0 * r * s * (1.0 - wb - wa) + 3.0 * s * s * wb;
        let next = s - f / d;
        s = if d > 1e-12 && next > lo && next < hi { next } else { 0.5 * (lo + hi) };
    }
    s
}

/// Samples an absolute quaternion track: slerp between keys (step keys hold). A key with
/// [`Interpolation::Squad`] (3DA TCB 4D) starts a segment
/// [`squad_lib3ds`]`(a, a.out_control, b.in_control, b, u)`, where `b.in_control` is the next
/// key's own value when it is not a squad key — lib3ds' quaternion spline, so 3DS rotations
/// exported with [`relative_key_quats`] sample as their source. The key search starts at
/// `cursor` when there is one ([`KeyCursor`]: the same value).
pub(crate) fn sample_quat(
    track: &Track<DQuat>,
    frame: f64,
    cursor: Option<&KeyCursor>,
) -> Option<DQuat> {
    track.keys.first()?;
    let (i, u) = match locate(track, frame, cursor) {
        Place::Hold(k) => return Some(track.keys[k].value),
        Place::Between(i, u) => (i, u),
    };
    let a = &track.keys[i];
    let b = &track.keys[i + 1];
    match a.interpolation {
        Interpolation::Step => Some(a.value),
        Interpolation::Squad { out_control, .. } => {
            let sb = match &b.interpolation {
                Interpolation::Squad { in_control, .. } => *in_control,
                _ => b.value,
            };
            Some(squad_lib3ds(a.value, out_control, sb, b.value, u).normalize())
        }
        Interpolation::StepNext => Some(if u > 0.0 { b.value } else { a.value }),
        _ => Some(a.value.slerp(b.value, u)),
    }
}

/// lib3ds' quaternion arithmetic on raw `[x, y, z, w]` (no normalisation, no hemisphere
/// choice unless stated), so that 3DS rotations match lib3ds to rounding.
mod q4 {
    pub type Q = [f64; 4];
    const EPSILON: f64 = 1e-8;

    pub fn mul(a: Q, b: Q) -> Q {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] + a[1] * b[3] + a[2] * b[0] - a[0] * b[2],
            a[3] * b[2] + a[2] * b[3] + a[0] * b[1] - a[1] * b[0],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    }

    pub fn dot(a: Q, b: Q) -> f64 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    }

    pub fn neg(a: Q) -> Q {
        [-a[0], -a[1], -a[2], -a[3]]
    }

    /// `lib3ds_quat_axis_angle`: a turn of **−angle** about `axis` (identity for a zero axis).
    pub fn axis_angle(axis: [f64; 3], angle: f64) -> Q {
        let l = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
        if l < EPSILON {
            return [0.0, 0.0, 0.0, 1.0];
        }
        let omega = -0.5 * angle;
        let s = omega.sin() / l;
        [s * axis[0], s * axis[1], s * axis[2], omega.cos()]
    }

    /// `lib3ds_quat_inv`: conjugate divided by the length.
    pub fn inv(c: Q) -> Q {
        let l = dot(c, c).sqrt();
        if l < EPSILON {
            return [0.0, 0.0, 0.0, 1.0];
        }
        let m = 1.0 / l;
        [-c[0] * m, -c[1] * m, -c[2] * m, c[3] * m]
    }

    pub fn ln(c: Q) -> Q {
        let s = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        let om = s.atan2(c[3]);
        let t = if s.abs() < EPSILON { 0.0 } else { om / s };
        [c[0] * t, c[1] * t, c[2] * t, 0.0]
    }

    /// `ln(a⁻¹ · b)`.
    pub fn ln_dif(a: Q, b: Q) -> Q {
        ln(mul(inv(a), b))
    }

    pub fn exp(c: Q) -> Q {
        let om = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        let sinom = if om.abs() < EPSILON { 1.0 } else { om.sin() / om };
        [c[0] * sinom, c[1] * sinom, c[2] * sinom, om.cos()]
    }

    /// How [`slerp`] turns from `a` to `b`: what lib3ds' `lib3ds_quat_slerp` works out from
    /// the two ends alone, before it looks at the fraction.
    #[derive(Debug, Clone, Copy)]
    pub enum Arc {
        /// Through the angle `om` (radians, the arc cosine of the ends' dot product, clamped
        /// to ±1) with its sine `sinom` (beyond `EPSILON`).
        Turn { om: f64, sinom: f64 },
        /// Ends so close that the sine is within `EPSILON` of 0: a linear blend.
        Blend,
        /// Opposite ends (dot product within `EPSILON` of −1): through the quaternion a
        /// quarter turn from `a`.
        Opposite,
    }

    /// The [`Arc`] from `a` to `b`.
    pub fn arc(a: Q, b: Q) -> Arc {
        let mut l = dot(a, b);
        if 1.0 + l > EPSILON {
            if l.abs() > 1.0 {
                l /= l.abs();
            }
            let om = l.acos();
            let sinom = om.sin();
            if sinom.abs() > EPSILON {
                Arc::Turn { om, sinom }
            } else {
                Arc::Blend
            }
        } else {
            Arc::Opposite
        }
    }

    /// `lib3ds_quat_slerp`: no flip to the short way.
    pub fn slerp(a: Q, b: Q, t: f64) -> Q {
        slerp_on(a, b, arc(a, b), t)
    }

    /// [`slerp`] from `a` to `b` along their `arc` ([`arc`]`(a, b)`, worked out once for many
    /// fractions `t`): the same operations on the same values, so the same bits.
    pub fn slerp_on(a: Q, b: Q, arc: Arc, t: f64) -> Q {
        let (b, sp, sq) = match arc {
            Arc::Turn { om, sinom } => (b, ((1.0 - t) * om).sin() / sinom, (t * om).sin() / sinom),
            Arc::Blend => (b, 1.0 - t, t),
            Arc::Opposite => {
                let half = std::f64::consts::FRAC_PI_2;
                ([-a[1], a[0], -a[3], a[2]], ((1.0 - t) * half).sin(), (t * half).sin())
            }
        };
        [sp * a[0] + sq * b[0], sp * a[1] + sq * b[1], sp * a[2] + sq * b[2], sp * a[3] + sq * b[3]]
    }

    pub fn squad(a: Q, p: Q, q: Q, b: Q, t: f64) -> Q {
        squad_on(a, p, q, b, (arc(a, b), arc(p, q)), t)
    }

    /// [`squad`] with the arcs of its two outer slerps, `arc(a, b)` and `arc(p, q)`, worked out
    /// beforehand: the same bits.
    pub fn squad_on(a: Q, p: Q, q: Q, b: Q, (ab, pq): (Arc, Arc), t: f64) -> Q {
        slerp(slerp_on(a, b, ab, t), slerp_on(p, q, pq, t), 2.0 * t * (1.0 - t))
    }
}

/// The absolute orientation at every key of a relative rotation track, as raw quaternions
/// (lib3ds `lib3ds_quat_track_setup`: `q_i = r_i · q_{i−1}`).
fn accumulate_raw(track: &Track<AxisAngle>) -> Vec<q4::Q> {
    let mut prev: Option<q4::Q> = None;
    track
        .keys
        .iter()
        .map(|k| {
            let r = q4::axis_angle(k.value.axis.to_array(), k.value.angle);
            let q = match prev {
                Some(p) => q4::mul(r, p),
                None => r,
            };
            prev = Some(q);
            q
        })
        .collect()
}

fn to_dquat(q: q4::Q) -> DQuat {
    let l = q4::dot(q, q).sqrt();
    // NaN lengths fail `is_finite`; tiny ones are lib3ds' "no rotation".
    if !l.is_finite() || l <= 1e-8 {
        return DQuat::IDENTITY;
    }
    DQuat::from_xyzw(q[0] / l, q[1] / l, q[2] / l, q[3] / l)
}

/// Incoming (`ds`) and outgoing (`dd`) quaternion tangents of key `i` (lib3ds
/// `lib3ds_quat_key_setup`).
fn quat_tangents(track: &Track<AxisAngle>, abs: &[q4::Q], i: usize) -> (q4::Q, q4::Q) {
    let c = abs[i];
    let (Some(p), cp, Some(n), cn) = neighbours(track, i) else {
        return (c, c);
    };
    let keys = &track.keys;
    let full_turn = 2.0 * std::f64::consts::PI - 1e-8;
    let near = |q: q4::Q| if q4::dot(q, c) < 0.0 { q4::neg(q) } else { q };
    let qp = if keys[p].value.angle > full_turn { [0.0; 4] } else { q4::ln_dif(near(abs[p]), c) };
    let qn = if keys[n].value.angle > full_turn { [0.0; 4] } else { q4::ln_dif(c, near(abs[n])) };
    let (ksm, ksp, kdm, kdp) = weights(keys, i, p, cp, n, cn);
    let mut qa = [0.0; 4];
    let mut qb = [0.0; 4];
    for j in 0..4 {
        qa[j] = 0.5 * (kdm * qp[j] + (kdp - 1.0) * qn[j]);
        qb[j] = 0.5 * ((1.0 - ksm) * qp[j] - ksp * qn[j]);
    }
    (q4::mul(c, q4::exp(qb)), q4::mul(c, q4::exp(qa)))
}

/// Samples a 3DS relative rotation track: keys are accumulated into absolute orientations
/// and interpolated with lib3ds' quaternion TCB (see the module docs).
pub(crate) fn sample_relative(track: &Track<AxisAngle>, frame: f64) -> Option<DQuat> {
    track.keys.first()?;
    let abs = accumulate_raw(track);
    sample_with(track, &abs, |i| quat_tangents(track, &abs, i), None, frame, None)
}

/// A 3DS relative rotation track's keys accumulated into absolute orientations once, with
/// every key's quaternion tangents and every segment's slerp arcs ([`sample_relative`]
/// accumulates the keys and works out the two tangents and the arcs it needs at every
/// sample), for sampling many frames.
#[derive(Debug, Clone)]
pub(crate) struct Accumulated {
    abs: Vec<q4::Q>,
    /// Per key its incoming and outgoing tangent ([`quat_tangents`]).
    tangents: Vec<(q4::Q, q4::Q)>,
    /// Per segment (key `i` to `i + 1`) the arcs of squad's two outer slerps: from key to key
    /// and from key `i`'s outgoing tangent to key `i + 1`'s incoming one ([`q4::arc`]).
    arcs: Vec<(q4::Arc, q4::Arc)>,
}

impl Accumulated {
    /// The keys of `track` accumulated, their tangents and the arcs between them.
    pub(crate) fn new(track: &Track<AxisAngle>) -> Accumulated {
        let abs = accumulate_raw(track);
        let tangents: Vec<_> = (0..abs.len()).map(|i| quat_tangents(track, &abs, i)).collect();
        let arcs = abs
            .windows(2)
            .zip(tangents.windows(2))
            .map(|(q, t)| (q4::arc(q[0], q[1]), q4::arc(t[0].1, t[1].0)))
            .collect();
        Accumulated { abs, tangents, arcs }
    }
}

/// [`sample_relative`] with the keys accumulated and their tangents and arcs worked out
/// beforehand (`abs` from [`Accumulated::new`] of the same track), the key search starting at
/// `cursor` ([`KeyCursor`]): the same value, bit for bit.
pub(crate) fn sample_accumulated(
    track: &Track<AxisAngle>,
    abs: &Accumulated,
    frame: f64,
    cursor: Option<&KeyCursor>,
) -> Option<DQuat> {
    track.keys.first()?;
    sample_with(track, &abs.abs, |i| abs.tangents[i], Some(&abs.arcs), frame, cursor)
}

/// The value of `track` at `frame` from its accumulated keys `abs` and `tangents(i)`, key
/// `i`'s incoming and outgoing tangents, with each segment's arcs from `arcs` when given
/// ([`Accumulated`], else worked out here; the key search starting at `cursor`).
fn sample_with(
    track: &Track<AxisAngle>,
    abs: &[q4::Q],
    tangents: impl Fn(usize) -> (q4::Q, q4::Q),
    arcs: Option<&[(q4::Arc, q4::Arc)]>,
    frame: f64,
    cursor: Option<&KeyCursor>,
) -> Option<DQuat> {
    let (i, u) = match locate(track, frame, cursor) {
        Place::Hold(k) => return Some(to_dquat(*abs.get(k)?)),
        Place::Between(i, u) => (i, u),
    };
    let (a, b) = (*abs.get(i)?, *abs.get(i + 1)?);
    let arcs = arcs.and_then(|arcs| arcs.get(i));
    let q = match track.keys[i].interpolation {
        Interpolation::Step => a,
        Interpolation::StepNext if u > 0.0 => b,
        Interpolation::StepNext => a,
        Interpolation::Linear => q4::slerp_on(a, b, arcs.map_or_else(|| q4::arc(a, b), |c| c.0), u),
        _ => {
            let (_, dd) = tangents(i);
            let (ds, _) = tangents(i + 1);
            let arcs = arcs.copied().unwrap_or_else(|| (q4::arc(a, b), q4::arc(dd, ds)));
            q4::squad_on(a, dd, ds, b, arcs, u)
        }
    };
    Some(to_dquat(q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{FRAC_PI_2, PI};

    fn key(frame: f64, value: f64) -> Key<f64> {
        Key { frame, value, interpolation: Interpolation::Tcb(Tcb::default()) }
    }

    fn rot(frame: f64, angle: f64, axis: DVec3) -> Key<AxisAngle> {
        Key {
            frame,
            value: AxisAngle { angle, axis },
            interpolation: Interpolation::Tcb(Tcb::default()),
        }
    }

    #[test]
    fn a_key_cursor_finds_the_binary_search_s_segment_in_any_order() {
        let lin = |frame, value| Key { frame, value, interpolation: Interpolation::Linear };
        // A jump at frame 2 (two keys on it) and uneven gaps.
        let frames = [0.0, 1.0, 2.0, 2.0, 3.5, 5.0, 8.0];
        let mut t = Track::new(frames.iter().map(|&f| lin(f, f * f)).collect());
        t.keys[3].value = 10.0;
        let cursor = KeyCursor::new(&t);
        let on = |f: f64| find_segment(&t.keys, f, Some(&cursor));
        // Hand-read segments: before the first key none; the later key of the jump starts
        // the segment at frame 2; at and after the last key none.
        let expect = [(-1.0, None), (0.0, Some(0)), (0.5, Some(0)), (1.0, Some(1))];
        let expect = expect.into_iter().chain([(1.99, Some(1)), (2.0, Some(3)), (2.5, Some(3))]);
        let expect = expect.chain([(7.9, Some(5)), (8.0, None), (9.0, None)]);
        for (f, seg) in expect {
            assert_eq!(on(f), seg, "frame {f}");
        }
        // Every quarter frame forward, backward, then jumps and frames no key bounds.
        let mut order: Vec<f64> = (-8..=40).map(|i| f64::from(i) * 0.25).collect();
        order.extend((-8..=40).rev().map(|i| f64::from(i) * 0.25));
        order.extend([7.5, 0.1, 5.0, 2.0, 1.9999, 9.0, -3.0, 3.5, f64::NAN, f64::INFINITY]);
        order.extend([f64::NEG_INFINITY, 2.0, 3.4, 0.0, 8.0, 4.9]);
        for &f in &order {
            assert_eq!(on(f), find_segment(&t.keys, f, None), "frame {f}");
            let (a, b) = (sample_inside(&t, f, Some(&cursor)), sample_inside(&t, f, None));
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "frame {f}");
        }
        // Between the jump's later key (10 at frame 2) and 3.5² = 12.25 at 3.5, a third of the
        // way: 10 + 2.25 / 3 = 10.75 (hand computed).
        assert_eq!(sample_inside(&t, 2.5, Some(&cursor)), Some(10.75));
        // Frames out of order (a NaN key) are never taken from the hint.
        t.keys[4].frame = f64::NAN;
        let cursor = KeyCursor::new(&t);
        assert!(!cursor.ordered);
        for &f in &order {
            let got = find_segment(&t.keys, f, Some(&cursor));
            assert_eq!(got, find_segment(&t.keys, f, None), "frame {f}");
        }
    }

    #[test]
    fn bezier_with_third_weights_is_the_hermite_cubic() {
        let k = |frame, value, slope| Key {
            frame,
            value,
            interpolation: Interpolation::Bezier {
                in_slope: slope,
                in_weight: 1.0 / 3.0,
                out_slope: slope,
                out_weight: 1.0 / 3.0,
            },
        };
        // Slopes 0 at both ends from 0 to 1 over 10 frames: smoothstep, 3u² − 2u³.
        let t = Track::new(vec![k(0.0, 0.0, 0.0), k(10.0, 1.0, 0.0)]);
        let u: f64 = 0.25;
        assert!((t.sample(2.5).unwrap() - (3.0 * u * u - 2.0 * u.powi(3))).abs() < 1e-12);
    }

    #[test]
    fn weighted_bezier_time_is_solved_for_the_frame() {
        // Straight-line handles (slope 1 per frame) with any weights stay on the line v = f.
        let k = |frame: f64, w| Key {
            frame,
            value: frame,
            interpolation: Interpolation::Bezier {
                in_slope: 1.0,
                in_weight: w,
                out_slope: 1.0,
                out_weight: w,
            },
        };
        let t = Track::new(vec![k(0.0, 0.1), k(10.0, 0.8)]);
        for f in [1.0, 3.3, 5.0, 9.9] {
            assert!((t.sample(f).unwrap() - f).abs() < 1e-9, "frame {f}");
        }
    }

    #[test]
    fn default_tcb_weights_are_catmull_rom_halves() {
        // T=C=B=0, even spacing: ds = dd = ((c−p) + (n−c)) / 2, the Catmull–Rom tangent.
        assert_eq!(tcb_tangents(&Tcb::default(), 10.0, 10.0), (0.5, 0.5, 0.5, 0.5));
    }

    #[test]
    fn uneven_gaps_scale_the_weights_by_gap_over_mean_gap() {
        // Gaps 10 and 30: mean 20, fp = 0.5, fn = 1.5; weights 0.5·0.5 and 0.5·1.5.
        assert_eq!(tcb_tangents(&Tcb::default(), 10.0, 30.0), (0.25, 0.25, 0.75, 0.75));
    }

    #[test]
    fn tension_one_gives_zero_tangents() {
        let t = Tcb { tension: 1.0, ..Tcb::default() };
        assert_eq!(tcb_tangents(&t, 10.0, 10.0), (0.0, 0.0, 0.0, 0.0));
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
    fn ease_is_not_applied_as_in_lib3ds() {
        let eased = Tcb { ease_to: 1.0, ease_from: 1.0, ..Tcb::default() };
        let k = |f, v| Key { frame: f, value: v, interpolation: Interpolation::Tcb(eased) };
        let t = Track::new(vec![k(0.0, 0.0), k(10.0, 10.0)]);
        // Two keys: chord tangents 10 each, so the cubic is the straight line.
        assert!((t.sample(2.5).unwrap() - 2.5).abs() < 1e-12);
    }

    #[test]
    fn before_the_first_key_lib3ds_holds_the_last_key() {
        let mut t = Track::new(vec![key(140.0, 1.0), key(260.0, 5.0)]);
        assert_eq!(t.sample(0.0), Some(1.0));
        t.before = Extrapolation::HoldLast;
        assert_eq!(t.sample(0.0), Some(5.0));
        assert_eq!(t.sample(140.0), Some(1.0));
    }

    #[test]
    fn repeat_wraps_with_fmod_and_shows_the_first_key_at_the_last_frame() {
        let mut t = Track::new(vec![key(0.0, 0.0), key(10.0, 10.0), key(20.0, 0.0)]);
        t.after = Extrapolation::Repeat;
        assert_eq!(t.sample(20.0), Some(0.0));
        assert_eq!(t.sample(30.0), Some(10.0));
        assert!((t.sample(25.0).unwrap() - 6.25).abs() < 1e-12);
    }

    #[test]
    fn smooth_flag_uses_the_wrapped_neighbours_for_end_tangents() {
        // Keys 0, 10, 0 at frames 0, 10, 20, smooth: the first key's predecessor is key 1
        // (second-to-last), so dd0 = 0.5·(0−10) + 0.5·(10−0) = 0, and the last key's
        // successor is key 1, so ds2 = 0.5·(0−10) + 0.5·(10−0) = 0.
        let mut t = Track::new(vec![key(0.0, 0.0), key(10.0, 10.0), key(20.0, 0.0)]);
        t.cyclic_tangents = true;
        // Segment 0→10 with dd0 = 0 and ds1 = 0: h(0.5) = 10·0.5 = 5.
        assert!((t.sample(5.0).unwrap() - 5.0).abs() < 1e-12);
    }

    #[test]
    fn relative_rotation_keys_accumulate() {
        let t = Track::new(vec![
            rot(0.0, 0.0, DVec3::Z),
            rot(10.0, FRAC_PI_2, DVec3::Z),
            rot(20.0, FRAC_PI_2, DVec3::Z),
        ]);
        // Two quarter turns about Z: X ends at −X.
        let q = sample_relative(&t, 20.0).unwrap();
        assert!((q * DVec3::X - DVec3::NEG_X).length() < 1e-12);
    }

    #[test]
    fn kept_tangents_and_arcs_sample_the_bits_of_the_keys_worked_out_each_time() {
        // A TCB vector track with uneven gaps, tension, continuity and bias, smooth (cyclic
        // tangents), and a relative rotation track with a linear segment, a half turn and a
        // key beyond a whole turn: sampled with the tangents (and arcs) kept, and without.
        let tcb = |tension, continuity, bias| Tcb { tension, continuity, bias, ..Tcb::default() };
        let frames = [0.0, 3.0, 4.0, 11.0, 12.5, 20.0];
        let mut keys: Vec<Key<DVec3>> = frames
            .iter()
            .enumerate()
            .map(|(i, &f)| Key {
                frame: f,
                value: DVec3::new(f.sin(), f * 0.5, (i * i) as f64),
                interpolation: Interpolation::Tcb(tcb(0.1 * i as f32, -0.3, 0.2)),
            })
            .collect();
        keys[2].interpolation = Interpolation::Linear;
        let mut t = Track::new(keys);
        t.cyclic_tangents = true;
        let cursor = KeyCursor::with_tangents(&t);
        assert!(matches!(cursor.tangents, Tangents::Vec3(ref k) if k.len() == frames.len()));
        let mut rk: Vec<Key<AxisAngle>> = [
            (0.0, 0.4, DVec3::Z),
            (5.0, PI, DVec3::X),
            (9.0, 7.0, DVec3::new(1.0, 1.0, 0.0)),
            (12.0, 0.0, DVec3::Y),
            (20.0, 1.0, DVec3::new(0.2, -1.0, 0.5)),
        ]
        .into_iter()
        .map(|(f, angle, axis)| rot(f, angle, axis))
        .collect();
        rk[2].interpolation = Interpolation::Linear;
        let r = Track::new(rk);
        let acc = Accumulated::new(&r);
        for i in -8..=96 {
            let f = f64::from(i) * 0.25;
            let (a, b) = (sample_inside(&t, f, Some(&cursor)), sample_inside(&t, f, None));
            assert_eq!(
                a.map(|v| v.to_array().map(f64::to_bits)),
                b.map(|v| v.to_array().map(f64::to_bits))
            );
            let (a, b) = (sample_accumulated(&r, &acc, f, None), sample_relative(&r, f));
            assert_eq!(
                a.map(|q| q.to_array().map(f64::to_bits)),
                b.map(|q| q.to_array().map(f64::to_bits))
            );
        }
    }

    #[test]
    fn a_3ds_angle_turns_the_other_way_than_the_right_hand_rule() {
        // lib3ds builds (axis·sin(−a/2), cos(−a/2)): +90° about Z takes X to −Y.
        let t = Track::new(vec![rot(0.0, FRAC_PI_2, DVec3::Z)]);
        let q = sample_relative(&t, 0.0).unwrap();
        assert!((q * DVec3::X - DVec3::NEG_Y).length() < 1e-12);
    }

    #[test]
    fn two_keys_interpolate_by_the_angle_about_a_fixed_axis() {
        // End keys have no tangents (ds = dd = q), so squad reduces to slerp: halfway between
        // 0 and a 90° turn is a 45° turn.
        let t = Track::new(vec![rot(0.0, 0.0, DVec3::Z), rot(10.0, FRAC_PI_2, DVec3::Z)]);
        let q = sample_relative(&t, 5.0).unwrap();
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((q * DVec3::X - DVec3::new(h, -h, 0.0)).length() < 1e-12);
    }

    #[test]
    fn a_relative_key_beyond_half_a_turn_spins_the_long_way() {
        // 270° in one key: halfway is 135°, not the short-way −45°.
        let t = Track::new(vec![rot(0.0, 0.0, DVec3::Z), rot(10.0, 1.5 * PI, DVec3::Z)]);
        let q = sample_relative(&t, 5.0).unwrap();
        let expect = DQuat::from_rotation_z(-0.75 * PI) * DVec3::X;
        assert!((q * DVec3::X - expect).length() < 1e-12);
    }
}
