//! Scene curves written as 3DA tracks that keep the source's keys (issue #4 §2, "Tracks";
//! docs/3da.md, "Exporter"), for the exporter:
//!
//! - vector tracks with linear, Hermite or Bézier keys and FBX per-component translation /
//!   scale curves → **LINEAR 3D** when every segment is linear, else **BEZIER 3D**;
//! - FBX Euler rotation curves → an **EULER** track of LINEAR or BEZIER 1D sub-tracks whose
//!   `m_aRotOrder` and signs make the seed's composition reproduce the source order.
//!
//! The curves go through [`crate::anim::hermite`] (one conversion for every writer): a 3DA
//! BEZIER key is a Hermite key whose tangents are slopes in value per frame (`eval.rs`), so a
//! cubic segment keeps its slopes and a linear one its chord's. Key times are scaled to the
//! output rate (`frame × rate`, slopes `÷ rate`) and must land on integer frames; keys outside
//! the written range are cut off exactly (a cubic split at a frame is two cubics sharing the
//! derivative there). Each function returns the track and a description for the report, or
//! why 3DA cannot hold the curve exactly — the exporter then resamples it.

use glam::{DMat3, DQuat, DVec3};

use super::layout::{BezierKey, LinearKey, Value};
use super::model::{EulerTrack, FloatTrack, KeyTrack, RotTrack, VecTrack};
use crate::anim::hermite::{self, HermiteKey, Segment};
use crate::anim::tcb::Vector;
use crate::anim::Track;
use crate::scene::EulerOrder;

/// The written frames: source frame `f` is output frame `f × rate`; `lo..=hi` (output frames,
/// integers) is the range the file covers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Range {
    /// Output frames per source frame.
    pub rate: f64,
    /// First written frame.
    pub lo: f64,
    /// Last written frame.
    pub hi: f64,
}

/// How far a scaled key time may be from an integer to count as that frame (as the kept TCB
/// keys, `export::exact_frames`).
const FRAME_EPS: f64 = 1e-6;

/// Why a curve was not kept: a reason for the report.
pub(super) type Why = &'static str;

/// The track's Hermite keys extended over the written range (source frames).
fn covered<V: Vector + PartialEq>(t: &Track<V>, r: Range) -> Result<Vec<HermiteKey<V>>, Why> {
    let keys = hermite::hermite_keys(t)
        .ok_or("keys with no Hermite form (weighted Bézier tangents, constant-next or a jump)")?;
    hermite::cover(t, keys, r.lo / r.rate, r.hi / r.rate)
        .ok_or("an extrapolation other than constant or keep-slope inside the range")
}

/// Keys in output frames (`frame × rate`, slopes `÷ rate`), cut to the written range, a step
/// between equal values made a flat linear segment, each with its integer frame. `Err` for a
/// step that changes the value (3DA has no step interpolation) or a key off an integer frame.
fn output<V: Vector + PartialEq>(
    mut keys: Vec<HermiteKey<V>>,
    r: Range,
) -> Result<Vec<(i32, HermiteKey<V>)>, Why> {
    let per = 1.0 / r.rate;
    for k in &mut keys {
        k.frame *= r.rate;
        k.in_slope = k.in_slope * per;
        k.out_slope = k.out_slope * per;
    }
    for i in 0..keys.len().saturating_sub(1) {
        if keys[i].segment == Segment::Step && keys[i].value == keys[i + 1].value {
            keys[i].segment = Segment::Linear;
            keys[i].out_slope = V::ZERO;
            keys[i + 1].in_slope = V::ZERO;
        }
    }
    let keys = hermite::clip(&keys, r.lo, r.hi);
    if keys[..keys.len() - 1].iter().any(|k| k.segment == Segment::Step) {
        return Err("step keys (3DA has no step interpolation)");
    }
    let mut out: Vec<(i32, HermiteKey<V>)> = Vec::with_capacity(keys.len());
    for k in keys {
        let f = k.frame.round();
        if (k.frame - f).abs() > FRAME_EPS || !(0.0..=f64::from(i32::MAX)).contains(&f) {
            return Err("key times off the integer frames of the output rate");
        }
        if out.last().is_some_and(|(p, _)| f64::from(*p) >= f) {
            return Err("two keys on one integer frame of the output rate");
        }
        out.push((f as i32, k));
    }
    Ok(out)
}

/// A LINEAR or BEZIER track of some value type.
enum Curve<W: Value> {
    Linear(KeyTrack<LinearKey<W>>),
    Bezier(KeyTrack<BezierKey<W>>),
}

/// LINEAR when every segment is linear (a chord needs no tangents), else BEZIER with the
/// slopes per frame as `m_fInTan` / `m_fOutTan` (a linear segment's are its chord's, which
/// makes the Hermite a line). `w` converts a value or slope to the stored type.
fn curve<V: Copy, W: Value>(keys: &[(i32, HermiteKey<V>)], w: impl Fn(V) -> W) -> Curve<W> {
    let current = w(keys[0].1.value);
    if keys[..keys.len() - 1].iter().all(|(_, k)| k.segment == Segment::Linear) {
        let keys = keys.iter().map(|&(frame, k)| LinearKey { frame, value: w(k.value) }).collect();
        return Curve::Linear(KeyTrack { current, keys });
    }
    let keys = keys
        .iter()
        .map(|&(frame, k)| BezierKey {
            frame,
            in_tan: w(k.in_slope),
            out_tan: w(k.out_slope),
            value: w(k.value),
        })
        .collect();
    Curve::Bezier(KeyTrack { current, keys })
}

fn f3(v: DVec3) -> [f32; 3] {
    v.as_vec3().to_array()
}

/// A vector curve (output keys) as LINEAR / BEZIER 3D, turned by `turn` (values and slopes:
/// a linear map commutes with the Hermite basis), with its description.
fn vec_track(keys: Vec<(i32, HermiteKey<DVec3>)>, turn: Option<DMat3>) -> (VecTrack, String) {
    let m = turn.unwrap_or(DMat3::IDENTITY);
    let n = keys.len();
    match curve(&keys, |v| f3(m * v)) {
        Curve::Linear(t) => (VecTrack::Linear(t), format!("LINEAR 3D, {n} keys")),
        Curve::Bezier(t) => (VecTrack::Bezier(t), format!("BEZIER 3D, {n} keys")),
    }
}

/// A vector track (`ChannelTarget::Translation` / `Scale` without TCB keys) as LINEAR or
/// BEZIER 3D over the written range, turned by `turn` (the root's axis conversion).
pub(super) fn vector(
    t: &Track<DVec3>,
    r: Range,
    turn: Option<DMat3>,
) -> Result<(VecTrack, String), Why> {
    Ok(vec_track(output(covered(t, r)?, r)?, turn))
}

/// FBX per-component curves (`ChannelTarget::TranslationXyz` / `ScaleXyz`) joined into one
/// LINEAR or BEZIER 3D track ([`hermite::merge_xyz`]); a component without a curve holds
/// `rest`'s. `turn` as for [`vector`].
pub(super) fn vector_xyz(
    c: &[Option<Track<f64>>; 3],
    rest: DVec3,
    r: Range,
    turn: Option<DMat3>,
) -> Result<(VecTrack, String), Why> {
    let mut parts: [Option<Vec<HermiteKey<f64>>>; 3] = [None, None, None];
    for (p, t) in parts.iter_mut().zip(c) {
        if let Some(t) = t.as_ref().filter(|t| !t.keys.is_empty()) {
            *p = Some(covered(t, r)?);
        }
    }
    if parts.iter().all(Option::is_none) {
        let key = HermiteKey {
            frame: r.lo / r.rate,
            value: rest,
            in_slope: DVec3::ZERO,
            out_slope: DVec3::ZERO,
            segment: Segment::Linear,
        };
        return Ok(vec_track(output(vec![key], r)?, turn));
    }
    let merged = hermite::merge_xyz([0, 1, 2].map(|i| parts[i].as_deref()), rest)
        .ok_or("a component steps while another moves (no single 3D segment)")?;
    Ok(vec_track(output(merged, r)?, turn))
}

/// The axes an [`EulerOrder`] turns about, in application order (0 = X, 1 = Y, 2 = Z).
fn application_axes(order: EulerOrder) -> [usize; 3] {
    match order {
        EulerOrder::Xyz => [0, 1, 2],
        EulerOrder::Xzy => [0, 2, 1],
        EulerOrder::Yzx => [1, 2, 0],
        EulerOrder::Yxz => [1, 0, 2],
        EulerOrder::Zxy => [2, 0, 1],
        EulerOrder::Zyx => [2, 1, 0],
    }
}

/// The seed's `m_aRotOrder` value and sign for a rotation about the file's axis `a` (0 = X,
/// 1 = Y, 2 = Z), as `eval.rs` evaluates them: 0 is yaw (about +Z, of `−angle`), 1 roll
/// (about +Y, of `+angle`), 2 pitch (about +X, of `−angle`) (docs/3da.md, "Axes and EULER
/// rotation").
fn rot_order_code(a: usize) -> (u32, f64) {
    match a {
        0 => (2, -1.0),
        1 => (1, 1.0),
        _ => (0, -1.0),
    }
}

/// The EULER layout for a scene order: `m_aRotOrder` and, per sub-track X, Y, Z (the seed's
/// `rot[0]`, `rot[1]`, `rot[2]`), the scene axis it holds and the sign it is stored with.
/// The seed composes `rot[0] · rot[1] · rot[2]`, so `rot[2]` acts first: it is the order's
/// first axis, `rot[0]` its last.
pub(super) fn euler_layout(order: EulerOrder) -> ([u32; 3], [(usize, f64); 3]) {
    let [first, second, third] = application_axes(order);
    let axes = [third, second, first];
    let codes = axes.map(rot_order_code);
    ([codes[0].0, codes[1].0, codes[2].0], [0, 1, 2].map(|i| (axes[i], codes[i].1)))
}

/// An FBX Euler rotation (`RotationTrack::Euler`) as an EULER track of LINEAR / BEZIER 1D
/// sub-tracks (radians) with the `m_aRotOrder` of [`euler_layout`]; a component without a
/// curve is a one-key track of its `rest` angle.
///
/// `turn` is the root's axis conversion, applied on the left (`turn · R`): it is exact only
/// when it turns about the order's last (outermost) axis, where it adds its angle to that
/// component; any other turn is `Err` (resampled).
pub(super) fn euler(
    order: EulerOrder,
    rest: DVec3,
    xyz: &[Option<Track<f64>>; 3],
    r: Range,
    turn: Option<DQuat>,
) -> Result<(RotTrack, String), Why> {
    let (rot_order, subs) = euler_layout(order);
    let outer = subs[0].0;
    let mut offset = DVec3::ZERO;
    if let Some(q) = turn.filter(|q| !q.abs_diff_eq(DQuat::IDENTITY, 1e-15)) {
        let (axis, angle) = q.to_axis_angle();
        let e = DVec3::AXES[outer];
        if axis.abs_diff_eq(e, 1e-9) {
            offset[outer] = angle;
        } else if axis.abs_diff_eq(-e, 1e-9) {
            offset[outer] = -angle;
        } else {
            return Err("the root's axis conversion turns about another axis than the outermost Euler rotation");
        }
    }
    let mut tracks = Vec::with_capacity(3);
    let mut kinds = Vec::with_capacity(3);
    for &(a, sign) in &subs {
        let keys = match xyz[a].as_ref().filter(|t| !t.keys.is_empty()) {
            Some(t) => output(covered(t, r)?, r)?,
            None => vec![(
                0,
                HermiteKey {
                    frame: 0.0,
                    value: rest[a],
                    in_slope: 0.0,
                    out_slope: 0.0,
                    segment: Segment::Linear,
                },
            )],
        };
        let n = keys.len();
        let stored = |v: f64| v as f32;
        let signed: Vec<(i32, HermiteKey<f64>)> = keys
            .into_iter()
            .map(|(f, k)| {
                let value = (k.value + offset[a]) * sign;
                (
                    f,
                    HermiteKey {
                        value,
                        in_slope: k.in_slope * sign,
                        out_slope: k.out_slope * sign,
                        ..k
                    },
                )
            })
            .collect();
        let (track, kind) = match curve(&signed, stored) {
            Curve::Linear(t) => (FloatTrack::Linear(t), "LINEAR"),
            Curve::Bezier(t) => (FloatTrack::Bezier(t), "BEZIER"),
        };
        kinds.push(format!("{} {kind} {n}", ["X", "Y", "Z"][a]));
        tracks.push((track, n));
    }
    let num_keys = tracks.iter().map(|t| t.1).max().unwrap_or(1) as i32;
    let mut it = tracks.into_iter().map(|t| t.0);
    let (x, y, z) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    let mut e = EulerTrack { num_keys, x, y, z, rot_order, current: [0.0, 0.0, 0.0, 1.0] };
    e.current = e.sample(r.lo).unwrap_or_default().normalize().as_quat().to_array();
    let desc = format!("EULER m_aRotOrder {rot_order:?} ({})", kinds.join(", "));
    Ok((RotTrack::Euler(Box::new(e)), desc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Interpolation, Key};

    fn key(frame: f64, value: f64, interpolation: Interpolation<f64>) -> Key<f64> {
        Key { frame, value, interpolation }
    }

    fn bez(s_in: f64, s_out: f64) -> Interpolation<f64> {
        Interpolation::Bezier {
            in_slope: s_in,
            in_weight: 1.0 / 3.0,
            out_slope: s_out,
            out_weight: 1.0 / 3.0,
        }
    }

    const R: Range = Range { rate: 1.0, lo: 0.0, hi: 20.0 };

    #[test]
    fn every_scene_order_maps_to_a_rot_order_that_evaluates_like_it() {
        // The seed's composition (eval.rs) against EulerOrder::to_quat for hand-picked angles.
        let angles = DVec3::new(0.7, -0.4, 1.3);
        for order in EulerOrder::ALL {
            let none: [Option<Track<f64>>; 3] = [None, None, None];
            let (t, _) = euler(order, angles, &none, R, None).unwrap();
            let q = t.sample(0.0).unwrap();
            let want = order.to_quat(angles);
            assert!(q.dot(want).abs() > 1.0 - 1e-12, "{order:?}: {q:?} vs {want:?}");
        }
        // docs/3da.md's example: Xyz is [0, 1, 2] with X = −z, Y = y, Z = −x.
        assert_eq!(euler_layout(EulerOrder::Xyz), ([0, 1, 2], [(2, -1.0), (1, 1.0), (0, -1.0)]));
    }

    #[test]
    fn cubic_rotation_curve_becomes_bezier_and_samples_between_keys() {
        // Z: Bézier 0 → 1 rad over 10 frames with slopes 0 (weights 1/3): at frame 5 the
        // Hermite midpoint 0.5; at frame 2.5 3u² − 2u³ = 0.15625.
        let z = Track::new(vec![key(0.0, 0.0, bez(0.0, 0.0)), key(10.0, 1.0, bez(0.0, 0.0))]);
        let xyz = [None, None, Some(z)];
        let (t, desc) = euler(EulerOrder::Xyz, DVec3::ZERO, &xyz, R, None).unwrap();
        assert!(desc.contains("BEZIER"), "{desc}");
        for (f, a) in [(5.0, 0.5), (2.5, 0.15625), (15.0, 1.0)] {
            let q = t.sample(f).unwrap();
            assert!(q.dot(DQuat::from_rotation_z(a)).abs() > 1.0 - 1e-12, "frame {f}");
        }
    }

    #[test]
    fn a_turn_about_the_outer_axis_is_added_to_its_angle_and_others_are_refused() {
        let x = Track::new(vec![
            key(0.0, 0.0, Interpolation::Linear),
            key(10.0, 1.0, Interpolation::Linear),
        ]);
        let xyz = [Some(x), None, None];
        let turn = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
        // Zyx applies X last: turn · Rx(a)·Ry·Rz = Rx(a + 90°)·Ry·Rz.
        let rest = DVec3::new(0.0, 0.3, 0.2);
        let (t, _) = euler(EulerOrder::Zyx, rest, &xyz, R, Some(turn)).unwrap();
        let q = t.sample(4.0).unwrap();
        let want = turn * EulerOrder::Zyx.to_quat(DVec3::new(0.4, 0.3, 0.2));
        assert!(q.dot(want).abs() > 1.0 - 1e-12);
        assert!(euler(EulerOrder::Xyz, rest, &xyz, R, Some(turn)).is_err());
    }

    #[test]
    fn keys_outside_the_range_are_cut_exactly_and_fractional_keys_refused() {
        // Linear −10 → 10 over frames −10..10: cut at 0 (value 0) and kept to 10.
        let t = Track::new(vec![
            key(-10.0, -10.0, Interpolation::Linear),
            key(10.0, 10.0, Interpolation::Linear),
        ]);
        let (v, _) = vector_xyz(&[Some(t), None, None], DVec3::ZERO, R, None).unwrap();
        assert_eq!(v.frames(), vec![0, 10]);
        assert_eq!(v.sample(5.0).unwrap().x, 5.0);
        let t = Track::new(vec![
            key(0.5, 0.0, Interpolation::Linear),
            key(10.0, 10.0, Interpolation::Linear),
        ]);
        assert!(vector_xyz(&[Some(t), None, None], DVec3::ZERO, R, None).is_err());
    }

    #[test]
    fn a_step_that_holds_is_linear_and_one_that_jumps_is_refused() {
        let hold = Track::new(vec![
            key(0.0, 2.0, Interpolation::Step),
            key(5.0, 2.0, Interpolation::Linear),
            key(9.0, 4.0, Interpolation::Linear),
        ]);
        let (v, desc) = vector_xyz(&[None, Some(hold), None], DVec3::ONE, R, None).unwrap();
        assert!(desc.starts_with("LINEAR"), "{desc}");
        assert_eq!(v.sample(7.0).unwrap(), DVec3::new(1.0, 3.0, 1.0));
        let jump = Track::new(vec![
            key(0.0, 2.0, Interpolation::Step),
            key(5.0, 3.0, Interpolation::Linear),
        ]);
        assert!(vector_xyz(&[None, Some(jump), None], DVec3::ONE, R, None).is_err());
    }

    #[test]
    fn a_faster_output_rate_stretches_key_times_and_divides_slopes() {
        // Bézier 0 → 3 over source frames 0..3, slopes 0 and 3 per frame (hermite.rs' case:
        // 0.375 at source frame 1.5). At twice the rate: keys at 0 and 6, slope 1.5 per output
        // frame, and output frame 3 gives 0.375.
        let t = Track::new(vec![key(0.0, 0.0, bez(0.0, 0.0)), key(3.0, 3.0, bez(3.0, 0.0))]);
        let r = Range { rate: 2.0, lo: 0.0, hi: 6.0 };
        let (v, desc) = vector_xyz(&[Some(t), None, None], DVec3::ZERO, r, None).unwrap();
        assert!(desc.starts_with("BEZIER 3D, 2 keys"), "{desc}");
        assert_eq!(v.frames(), vec![0, 6]);
        let VecTrack::Bezier(b) = &v else { unreachable!() };
        assert_eq!(b.keys[1].in_tan[0], 1.5);
        assert!((v.sample(3.0).unwrap().x - 0.375).abs() < 1e-6);
    }
}
