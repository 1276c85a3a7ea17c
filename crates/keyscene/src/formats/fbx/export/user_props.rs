//! User properties written back (issue 33 §3, docs/fbx.md "User properties"): each
//! [`UserProperty`] of a node or material becomes a `P` record of its `Model` or `Material`
//! with the flags it had (`U` added when missing; sources without flags get `A+U`, or `U` for
//! strings), typed as Maya writes them — `Bool`, `Integer` (value, min, max), `Enum` (index,
//! choices joined by `~`), `Number` (value, min, max), `Vector`, `ColorRGB`/`Color`,
//! `ColorAndAlpha`, `KString`, `KTime`/`Time` (seconds × 46,186,158,000). A name the record
//! already holds (`Lcl Translation`, `Opacity`…) is not written twice (readers take the last
//! record of a name, so the user value would replace the built-in one): the built-in record
//! gets the `U` flag when it holds the same values, else the user property is left out
//! (reported).
//!
//! Their curves: per node and property an `AnimationCurveNode` OP-connected to the model's
//! property, `d|X`/`d|Y`/`d|Z` for vectors and colours, `d|Name` otherwise (as Maya writes
//! them), key for key where the channel's keys have an FBX form, else sampled on integer
//! frames (reported as resampled).

use glam::DVec3;

use super::animation::{resample_value, Take, NO_FORM};
use super::{keys, ktime, p, Builder, Resampled};
use crate::anim::user_props::user_property_component;
use crate::anim::ChannelTarget;
use crate::formats::fbx::write::{Record, Value, WriteError};
use crate::quoting::quoted;
use crate::scene::animation::{MaterialProperty, MaterialValue};
use crate::scene::{UserProperty, UserValue};

/// The `P` record of `prop`.
pub(super) fn user_prop_record(prop: &UserProperty) -> Record {
    let numeric = !matches!(prop.value, UserValue::String(_));
    let mut flags = if prop.flags.is_empty() {
        if numeric { "A+U" } else { "U" }.to_string()
    } else {
        prop.flags.clone()
    };
    if !flags.contains('U') {
        flags.push('U');
    }
    let int = |i: i64| i32::try_from(i).map_or(Value::I64(i), Value::I32);
    let bound = |b: Option<f64>, v: f64| Value::F64(b.unwrap_or(v));
    let (ty, label, values) = match &prop.value {
        UserValue::Bool(b) => ("Bool", "", vec![Value::I32(i32::from(*b))]),
        UserValue::Int(i) => {
            let b = |x: Option<f64>| match x {
                Some(x) if x.fract() == 0.0 && x.abs() < 2f64.powi(31) => Value::I32(x as i32),
                Some(x) => Value::F64(x),
                None => int(*i),
            };
            ("Integer", "", vec![int(*i), b(prop.min), b(prop.max)])
        }
        UserValue::Enum { index, names } => {
            ("Enum", "", vec![int(*index), Value::str(names.join("~"))])
        }
        UserValue::Number(x) => {
            ("Number", "", vec![Value::F64(*x), bound(prop.min, *x), bound(prop.max, *x)])
        }
        UserValue::Vector(v) => ("Vector", "", v.to_array().map(Value::F64).to_vec()),
        UserValue::Color(v) => ("ColorRGB", "Color", v.to_array().map(Value::F64).to_vec()),
        UserValue::ColorAlpha(v) => ("ColorAndAlpha", "", v.to_array().map(Value::F64).to_vec()),
        UserValue::String(s) => ("KString", "", vec![Value::str(s)]),
        UserValue::Time(s) => ("KTime", "Time", vec![Value::I64(ktime(*s))]),
    };
    p(&prop.name, ty, label, &flags, values)
}

/// Appends the records of `props` to `record`'s `Properties70` (made when missing). A name the
/// record already holds keeps the built-in record, flagged `U` when its values are the user
/// property's (a source whose built-in property carried `U`, e.g. MotionBuilder's material
/// `Opacity`), else left out; returns the names left out.
pub(super) fn append_user_props(record: &mut Record, props: &[UserProperty]) -> Vec<String> {
    if props.is_empty() {
        return Vec::new();
    }
    if !record.children.iter().any(|c| c.name == "Properties70") {
        record.children.push(super::props70(Vec::new()));
    }
    let Some(p70) = record.children.iter_mut().find(|c| c.name == "Properties70") else {
        return Vec::new();
    };
    let mut left_out = Vec::new();
    for prop in props {
        let name = prop.name.as_bytes();
        let clash = p70
            .children
            .iter()
            .position(|r| matches!(r.values.first(), Some(Value::String(s)) if s == name));
        let ours = user_prop_record(prop);
        match clash {
            None => p70.children.push(ours),
            Some(k) => {
                let built_in = &mut p70.children[k];
                if same_values(&built_in.values[4..], &ours.values[4..]) {
                    if let Some(Value::String(flags)) = built_in.values.get_mut(3) {
                        if !flags.contains(&b'U') {
                            flags.push(b'U');
                        }
                    }
                } else {
                    left_out.push(prop.name.clone());
                }
            }
        }
    }
    left_out
}

/// Whether the built-in record's values are the user record's: each of `built_in` equal to
/// the value at its place in `user` (numbers within 1e-6 relative: the writer keeps some
/// material values in `f32`).
fn same_values(built_in: &[Value], user: &[Value]) -> bool {
    let num = |v: &Value| match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::I16(x) => Some(f64::from(*x)),
        Value::I32(x) => Some(f64::from(*x)),
        Value::I64(x) => Some(*x as f64),
        Value::F32(x) => Some(f64::from(*x)),
        Value::F64(x) => Some(*x),
        _ => None,
    };
    !built_in.is_empty()
        && built_in.len() <= user.len()
        && built_in.iter().zip(user).all(|(a, b)| match (num(a), num(b)) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0),
            _ => a == b,
        })
}

impl Builder {
    /// The curves of animation `take.ai`'s user properties on the models `model_ids` (module
    /// docs).
    pub(super) fn user_property_curves(
        &mut self,
        take: &Take<'_>,
        model_ids: &[i64],
    ) -> Result<(), WriteError> {
        let Take { scene, ai, layer, fps, range, .. } = *take;
        let anim = &scene.animations[ai];
        // (node, property index, vector?) → per component curve, in first-seen order.
        let mut found: Vec<(usize, usize, bool, [Option<keys::FbxCurve>; 3])> = Vec::new();
        for ch in &anim.channels {
            let i = ch.node;
            let Some(channel) = ch.target.property_name() else { continue };
            let Some(props) = scene.nodes.get(i).map(|n| n.user_properties()) else { continue };
            let Some((k, comp)) = props
                .iter()
                .enumerate()
                .find_map(|(k, p)| Some((k, user_property_component(channel, &p.name)?)))
            else {
                continue;
            };
            let vector = props[k].value.components().len() > 1;
            let slot = match found.iter().position(|f| f.0 == i && f.1 == k) {
                Some(s) => s,
                None => {
                    found.push((i, k, vector, [None, None, None]));
                    found.len() - 1
                }
            };
            let (lo, hi) = range;
            let exact = match &ch.target {
                ChannelTarget::Property { track, .. } if track.keys.is_empty() => continue,
                ChannelTarget::Property { track, .. } => {
                    keys::scalar_curve(track, 1.0, fps, lo, hi)
                }
                _ => None,
            };
            let curve = match exact {
                Some(c) => {
                    self.report.exact_curves += 1;
                    c
                }
                None => {
                    let keys: Vec<(f64, f64)> = match &ch.target {
                        ChannelTarget::Property { track, .. } => {
                            track.keys.iter().map(|k| (k.frame, k.value)).collect()
                        }
                        _ => Vec::new(),
                    };
                    let what = || format!("animation {}: the {channel} track", quoted(&anim.name));
                    let source = |x| ch.target.sample_property(x).map_or(0.0, |(_, v)| v);
                    let curve = resample_value(source, &keys, take, what)?;
                    self.report.resampled.push(Resampled {
                        animation: ai,
                        node: i,
                        part: "user property",
                        reason: NO_FORM,
                    });
                    curve
                }
            };
            found[slot].3[comp.min(2)] = Some(curve);
        }
        for (i, k, vector, curves) in found {
            let prop = &scene.nodes[i].user_properties()[k];
            let c = prop.value.components();
            let rest = DVec3::new(
                c.first().copied().unwrap_or(0.0),
                c.get(1).copied().unwrap_or(0.0),
                c.get(2).copied().unwrap_or(0.0),
            );
            let scalar = format!("d|{}", prop.name);
            let comps: Vec<(&str, DVec3)> = if vector {
                vec![("d|X", rest), ("d|Y", rest), ("d|Z", rest)]
            } else {
                vec![(scalar.as_str(), rest)]
            };
            self.curve_node(&prop.name, layer, (model_ids[i], &prop.name), &comps, &curves);
        }
        Ok(())
    }

    /// The curves of animation `take.ai`'s material user properties
    /// ([`MaterialProperty::User`] channels) on the written materials: key for key where a
    /// component's keys have an FBX form, else (and for layered channels) resampled
    /// adaptively ([`resample_value`]; reported).
    pub(super) fn material_user_property_curves(
        &mut self,
        take: &Take<'_>,
    ) -> Result<(), WriteError> {
        let Take { scene, ai, layer, fps, range, .. } = *take;
        let anim = &scene.animations[ai];
        for ch in scene.material_channels.iter().filter(|c| c.animation == ai) {
            let MaterialProperty::User(k) = ch.property else { continue };
            let (Some(&owner), Some(mat)) =
                (self.material_ids.get(&ch.material), scene.materials.get(ch.material))
            else {
                continue;
            };
            let Some(prop) = mat.user_properties.get(usize::from(k)) else { continue };
            let n = prop.value.components().len().clamp(1, 3);
            let stored = mat.property(ch.property);
            let what = || format!("animation {}: the {} track", quoted(&anim.name), prop.name);
            let mut curves: [Option<keys::FbxCurve>; 3] = [None, None, None];
            let mut resampled = false;
            for (c, out) in curves.iter_mut().enumerate().take(n) {
                let track = match &ch.value {
                    MaterialValue::Curves { curves, .. } => curves[c].as_ref(),
                    MaterialValue::Layered(_) => None,
                };
                let exact = track.and_then(|t| keys::scalar_curve(t, 1.0, fps, range.0, range.1));
                *out = match exact {
                    Some(curve) => {
                        self.report.exact_curves += 1;
                        Some(curve)
                    }
                    None if track.is_none() && matches!(ch.value, MaterialValue::Curves { .. }) => {
                        None
                    }
                    None => {
                        resampled = true;
                        let keys: Vec<(f64, f64)> = track.map_or_else(Vec::new, |t| {
                            t.keys.iter().map(|x| (x.frame, x.value)).collect()
                        });
                        let source = |f| ch.sample(f, stored)[c];
                        Some(resample_value(source, &keys, take, what)?)
                    }
                };
            }
            if resampled {
                self.report.resampled.push(Resampled {
                    animation: ai,
                    node: usize::MAX,
                    part: "material user property",
                    reason: NO_FORM,
                });
            }
            let scalar = format!("d|{}", prop.name);
            let comps: Vec<(&str, DVec3)> = if n > 1 {
                vec![("d|X", stored), ("d|Y", stored), ("d|Z", stored)]
            } else {
                vec![(scalar.as_str(), stored)]
            };
            self.curve_node(&prop.name, layer, (owner, &prop.name), &comps, &curves);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_take_maya_types_and_a_user_flag() {
        let prop = UserProperty {
            name: "E".into(),
            value: UserValue::Enum { index: 1, names: vec!["a".into(), "b".into()] },
            min: None,
            max: None,
            flags: "A".into(),
        };
        let r = user_prop_record(&prop);
        let strings: Vec<String> = r.values[..4]
            .iter()
            .map(|v| match v {
                Value::String(s) => String::from_utf8_lossy(s).into_owned(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(strings, ["E", "Enum", "", "AU"]);
        assert!(matches!(&r.values[5], Value::String(s) if s.as_slice() == b"a~b"));
    }
}
