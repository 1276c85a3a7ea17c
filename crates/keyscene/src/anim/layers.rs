//! Animation layers blended at the asked time ([`ChannelTarget::Layered`]).
//!
//! An FBX `AnimationStack` holds `AnimationLayer`s in order; each layer animates properties
//! through its `AnimationCurveNode`s and says how its value meets the layers under it
//! (`BlendMode`, `Weight`, `RotationAccumulationMode`, `ScaleAccumulationMode`; seed 003,
//! "Animation", names the objects). The seed does not give the blend rule; keyscene uses the
//! one ufbx evaluates (`ufbxi_evaluate_props` and `ufbxi_combine_anim_layer`), so that poses
//! agree with ufbx at every time, between frames too:
//!
//! 1. The value starts as the property's rest value ([`LayerBlend::rest`]).
//! 2. Layer by layer, in stack order, each layer that animates the property gives its value:
//!    per component its curve at the time, else the curve node's own value (`d|X` …), else
//!    the value so far.
//! 3. The stack's **first** layer replaces the value, whatever its mode and weight. Every
//!    other layer combines with weight `w` ([`LayerContribution::weight_at`]):
//!    - [`BlendMode::Additive`]: `value + w · layer`; for scale with
//!      `compose_scale`, `value · |layer|^w` per component (sign kept); for rotation with
//!      `compose_rotation`, `q(value) · slerp(1, q(layer), w)`.
//!    - [`BlendMode::OverridePassthrough`]: `(1 − w) · value + w · layer`; for scale with
//!      `compose_scale`, `|value|^(1−w) · |layer|^w`; for rotation with `compose_rotation`,
//!      `slerp(q(value), q(layer), w)`.
//!    - [`BlendMode::Override`]: `layer`, whatever the weight.
//!
//!    `q(e)` is the orientation of the Euler angles `e` (degrees) in the model's
//!    `RotationOrder`, and a composed rotation is turned back into Euler angles in that order
//!    before the next layer.
//!
//! Rotations are in **degrees** here (as FBX stores `Lcl Rotation` and as the rule composes
//! them); the evaluator turns the blended angles into an orientation.

use glam::{DQuat, DVec3};

pub use crate::scene::animation::{BlendMode, LayerBlend, LayerContribution, LayeredValue};

use super::{ChannelTarget, Track};
use crate::scene::EulerOrder;

impl LayerContribution {
    /// The weight at `frame`, 0–1, as ufbx takes it: the weight track (percent ÷ 100,
    /// clamped to 0–1) for the blended modes when there is one, else
    /// [`LayerContribution::weight`]; above 0.99999 it is 1.
    pub fn weight_at(&self, frame: f64) -> f64 {
        let mut w = self.weight;
        if self.mode != BlendMode::Override {
            if let Some(v) = self.weight_track.as_ref().and_then(|t| t.sample(frame)) {
                w = (v / 100.0).clamp(0.0, 1.0);
            }
        }
        if w > 0.99999 {
            1.0
        } else {
            w
        }
    }

    /// The layer's own value at `frame` over `below` (the value of the layers under it).
    fn value_at(&self, frame: f64, below: DVec3) -> DVec3 {
        let mut v = below;
        for (c, t) in self.curves.iter().enumerate() {
            match t.as_ref().and_then(|t| t.sample(frame)) {
                Some(x) => v[c] = x,
                None => {
                    if let Some(d) = self.constants[c] {
                        v[c] = d;
                    }
                }
            }
        }
        v
    }

    /// Every track: the component curves, then the weight track.
    pub fn tracks(&self) -> impl Iterator<Item = &Track<f64>> {
        self.curves.iter().flatten().chain(self.weight_track.iter())
    }

    fn tracks_mut(&mut self) -> impl Iterator<Item = &mut Track<f64>> {
        self.curves.iter_mut().flatten().chain(self.weight_track.iter_mut())
    }
}

impl LayerBlend {
    /// The blended value at `frame` (frames of the animation's clock), in the units of
    /// [`LayerBlend::value`].
    pub fn sample(&self, frame: f64) -> DVec3 {
        let (is_rot, is_scale, order) = match self.value {
            LayeredValue::Rotation { blend_order, .. } => (true, false, blend_order),
            LayeredValue::Scale => (false, true, EulerOrder::Xyz),
            _ => (false, false, EulerOrder::Xyz),
        };
        let mut value = self.rest;
        for l in &self.layers {
            let v = l.value_at(frame, value);
            value = if l.first_in_stack {
                v
            } else {
                combine(l, value, v, l.weight_at(frame), is_rot, is_scale, order)
            };
        }
        value
    }

    /// The blended local rotation at `frame`, for [`LayeredValue::Rotation`].
    pub fn sample_rotation(&self, frame: f64) -> Option<DQuat> {
        match self.value {
            LayeredValue::Rotation { order, .. } => {
                Some(order.to_quat(self.sample(frame) * (std::f64::consts::PI / 180.0)))
            }
            _ => None,
        }
    }

    /// The key frames of every layer's curves and weight tracks, sorted, without repeats:
    /// where the blend can change its course.
    pub fn key_frames(&self) -> Vec<f64> {
        let mut f: Vec<f64> = self
            .layers
            .iter()
            .flat_map(LayerContribution::tracks)
            .flat_map(|t| t.keys.iter().map(|k| k.frame))
            .filter(|f| f.is_finite())
            .collect();
        f.sort_by(f64::total_cmp);
        f.dedup();
        f
    }

    /// Every track of every layer (curves, then weight track, layer by layer).
    pub fn tracks(&self) -> impl Iterator<Item = &Track<f64>> {
        self.layers.iter().flat_map(LayerContribution::tracks)
    }

    pub(super) fn tracks_mut(&mut self) -> impl Iterator<Item = &mut Track<f64>> {
        self.layers.iter_mut().flat_map(LayerContribution::tracks_mut)
    }

    /// The transform part it drives: 0 translation, 1 rotation, 2 scale; `None` for a
    /// property.
    pub fn transform_part(&self) -> Option<usize> {
        match self.value {
            LayeredValue::Translation => Some(0),
            LayeredValue::Rotation { .. } => Some(1),
            LayeredValue::Scale => Some(2),
            LayeredValue::Property(_) => None,
        }
    }
}

impl From<LayerBlend> for ChannelTarget {
    fn from(b: LayerBlend) -> Self {
        ChannelTarget::Layered(Box::new(b))
    }
}

/// Euler angles in degrees (about X, Y, Z) of `q` in `order`: the inverse of
/// [`EulerOrder::to_quat`] (of the angles in radians), as ufbx's `ufbx_quat_to_euler`.
pub fn euler_degrees(q: DQuat, order: EulerOrder) -> DVec3 {
    use glam::EulerRot as E;
    // glam names intrinsic orders (`ZYX` is Rz·Ry·Rx, keyscene's `Xyz`) and returns the angles
    // in its order's sequence; `axes` says which of X, Y, Z each one is.
    let (rot, axes) = match order {
        EulerOrder::Xyz => (E::ZYX, [2, 1, 0]),
        EulerOrder::Xzy => (E::YZX, [1, 2, 0]),
        EulerOrder::Yzx => (E::XZY, [0, 2, 1]),
        EulerOrder::Yxz => (E::ZXY, [2, 0, 1]),
        EulerOrder::Zxy => (E::YXZ, [1, 0, 2]),
        EulerOrder::Zyx => (E::XYZ, [0, 1, 2]),
    };
    let (a, b, c) = q.to_euler(rot);
    let mut r = DVec3::ZERO;
    r[axes[0]] = a;
    r[axes[1]] = b;
    r[axes[2]] = c;
    r * (180.0 / std::f64::consts::PI)
}

/// `|v|^e` with `v`'s sign; 1 for `e ≤ 0`, `v` for `e ≥ 1` (ufbx `ufbxi_pow_abs`).
fn pow_abs(v: f64, e: f64) -> f64 {
    if e <= 0.0 {
        return 1.0;
    }
    if e >= 1.0 {
        return v;
    }
    v.signum() * v.abs().powf(e)
}

/// One layer's value `v` combined with the value `base` of the layers under it at weight
/// `w` (module docs, step 3).
fn combine(
    l: &LayerContribution,
    base: DVec3,
    v: DVec3,
    w: f64,
    is_rot: bool,
    is_scale: bool,
    order: EulerOrder,
) -> DVec3 {
    let q = |e: DVec3| order.to_quat(e * (std::f64::consts::PI / 180.0));
    let each =
        |f: &dyn Fn(f64, f64) -> f64| DVec3::new(f(base.x, v.x), f(base.y, v.y), f(base.z, v.z));
    match l.mode {
        BlendMode::Additive if l.compose_scale && is_scale => each(&|b, x| b * pow_abs(x, w)),
        BlendMode::Additive if l.compose_rotation && is_rot => {
            euler_degrees(q(base) * DQuat::IDENTITY.slerp(q(v), w), order)
        }
        BlendMode::Additive => base + v * w,
        BlendMode::OverridePassthrough if l.compose_scale && is_scale => {
            each(&|b, x| pow_abs(b, 1.0 - w) * pow_abs(x, w))
        }
        BlendMode::OverridePassthrough if l.compose_rotation && is_rot => {
            euler_degrees(q(base).slerp(q(v), w), order)
        }
        BlendMode::OverridePassthrough => base * (1.0 - w) + v * w,
        BlendMode::Override => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Interpolation, Key};

    fn ramp(a: f64, b: f64) -> Track<f64> {
        Track::new(vec![
            Key { frame: 0.0, value: a, interpolation: Interpolation::Linear },
            Key { frame: 10.0, value: b, interpolation: Interpolation::Linear },
        ])
    }

    fn layer(first: bool, mode: BlendMode, x: Option<Track<f64>>) -> LayerContribution {
        LayerContribution {
            first_in_stack: first,
            mode,
            weight: 1.0,
            weight_track: None,
            compose_rotation: true,
            compose_scale: true,
            curves: [x, None, None],
            constants: [None; 3],
        }
    }

    #[test]
    fn euler_degrees_inverts_to_quat_in_every_order() {
        let deg = DVec3::new(10.0, -35.0, 70.0);
        for order in EulerOrder::ALL {
            let q = order.to_quat(deg * (std::f64::consts::PI / 180.0));
            let back = euler_degrees(q, order);
            assert!((back - deg).abs().max_element() < 1e-9, "{order:?}: {back}");
        }
    }

    #[test]
    fn an_animated_weight_blends_at_the_asked_frame() {
        // Base X 0 → 10 over frames 0–10; an additive layer whose X also goes 0 → 10 and whose
        // weight goes 0 → 100 % over the same frames: X(f) = f + (f / 10) · f. At frame 2.25
        // that is 2.25 + 0.50625 = 2.75625, where linear keys on frames 2 (2.4) and 3 (3.9)
        // would give 2.775.
        let mut top = layer(false, BlendMode::Additive, Some(ramp(0.0, 10.0)));
        top.weight_track = Some(ramp(0.0, 100.0));
        let b = LayerBlend {
            value: LayeredValue::Translation,
            rest: DVec3::ZERO,
            layers: vec![layer(true, BlendMode::Additive, Some(ramp(0.0, 10.0))), top],
        };
        assert!((b.sample(2.25).x - 2.75625).abs() < 1e-12);
        assert!((b.sample(3.0).x - 3.9).abs() < 1e-12);
    }

    #[test]
    fn blend_modes_follow_the_ufbx_rule() {
        // Under: 2 (rest, no first layer); the layer's value 6 at weight 0.25.
        let mut l = layer(false, BlendMode::OverridePassthrough, Some(ramp(6.0, 6.0)));
        l.weight = 0.25;
        let mut b =
            LayerBlend { value: LayeredValue::Scale, rest: DVec3::splat(2.0), layers: vec![l] };
        // Multiplicative mix: 2^0.75 · 6^0.25 on X; Y and Z have no curve: 2^0.75 · 2^0.25 = 2.
        let want = 2f64.powf(0.75) * 6f64.powf(0.25);
        assert!((b.sample(3.0) - DVec3::new(want, 2.0, 2.0)).abs().max_element() < 1e-12);
        b.layers[0].compose_scale = false;
        assert!((b.sample(3.0).x - 3.0).abs() < 1e-12);
        b.layers[0].mode = BlendMode::Additive;
        assert!((b.sample(3.0).x - 3.5).abs() < 1e-12);
        b.layers[0].mode = BlendMode::Override;
        assert_eq!(b.sample(3.0).x, 6.0);
        // Additive rotation with composition: 90° about Z (X and Y from the curve node's 0) at
        // weight ½ on top of 90° about X.
        let mut r = layer(false, BlendMode::Additive, None);
        r.curves[2] = Some(ramp(90.0, 90.0));
        r.constants = [Some(0.0), Some(0.0), None];
        r.weight = 0.5;
        let b = LayerBlend {
            value: LayeredValue::Rotation { order: EulerOrder::Xyz, blend_order: EulerOrder::Xyz },
            rest: DVec3::new(90.0, 0.0, 0.0),
            layers: vec![r],
        };
        let want = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2)
            * DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4);
        let got = b.sample_rotation(1.0).unwrap();
        assert!(got.dot(want).abs() > 1.0 - 1e-12, "{got} {want}");
    }

    #[test]
    fn rotations_compose_in_the_blend_order_and_apply_in_the_node_order() {
        // Rest 90° about X, an additive layer of 90° about Z at full weight, composed in ZYX
        // (Rx·Ry·Rz): Rx(90)·Rz(90) has the ZYX angles (90, 0, 90). A node that does not use
        // its rotation space applies them in XYZ (Rz·Ry·Rx): Rz(90)·Rx(90).
        let mut r = layer(false, BlendMode::Additive, None);
        r.curves[2] = Some(ramp(90.0, 90.0));
        r.constants = [Some(0.0), Some(0.0), None];
        let b = LayerBlend {
            value: LayeredValue::Rotation { order: EulerOrder::Xyz, blend_order: EulerOrder::Zyx },
            rest: DVec3::new(90.0, 0.0, 0.0),
            layers: vec![r],
        };
        assert!((b.sample(0.0) - DVec3::new(90.0, 0.0, 90.0)).abs().max_element() < 1e-9);
        let h = std::f64::consts::FRAC_PI_2;
        let want = DQuat::from_rotation_z(h) * DQuat::from_rotation_x(h);
        let got = b.sample_rotation(0.0).unwrap();
        assert!(got.dot(want).abs() > 1.0 - 1e-12, "{got} {want}");
    }
}
