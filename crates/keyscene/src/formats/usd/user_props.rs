//! Node user properties ([`crate::scene::user_props`]) as custom attributes of the node prim
//! in the `userProperties:` namespace, as Blender's USD exporter writes an object's custom
//! properties and its importer reads them back (checked with bpy 5.0.1: `custom int
//! userProperties:my_int = 3` on the object's `Xform`). docs/usd.md, "User properties":
//!
//! | keyscene | USD |
//! |---|---|
//! | bool | `bool` |
//! | int | `int` (`int64` past the 32-bit range) |
//! | enum | `int` (the index), the choices as `customData = { string[] choices = [...] }` |
//! | number | `double` |
//! | time | `double` seconds, `customData = { string unit = "seconds" }` |
//! | vector | `double3` |
//! | color | `color3d`; colour and alpha: `color4d` |
//! | string | `string` |
//!
//! The name is the property's, made a USD identifier and unique on the prim
//! ([`names::Siblings`]); a renamed property keeps its source name as `displayName`. The
//! default value is the stored (rest) value; an animated property also gets time samples
//! over the written timeline ([`Scene::user_properties_at`]): numbers, times, vectors and
//! colours by the adaptive sampler within 1e-4 of each component's largest magnitude (at
//! least 1), as the camera and light parameters ([`super::params`]); booleans, integers and
//! enum indices, which USD holds between samples, a sample at the first frame and at every
//! change of the (truncated) value, found to within [`params::CHANGE_PRECISION`] of a frame.

use super::names;
use super::params;
use super::text::{string, Text};
use super::xform::Timeline;
use crate::anim::Time;
use crate::scene::{Scene, UserProperty, UserValue};

/// The USD type of a user value.
fn usd_type(v: &UserValue) -> &'static str {
    match v {
        UserValue::Bool(_) => "bool",
        UserValue::Int(i) | UserValue::Enum { index: i, .. } => {
            if i32::try_from(*i).is_ok() {
                "int"
            } else {
                "int64"
            }
        }
        UserValue::Number(_) | UserValue::Time(_) => "double",
        UserValue::Vector(_) => "double3",
        UserValue::Color(_) => "color3d",
        UserValue::ColorAlpha(_) => "color4d",
        UserValue::String(_) => "string",
    }
}

/// `v` as a USD value literal.
fn literal(t: &mut Text, v: &UserValue) -> String {
    match v {
        UserValue::Bool(b) => u8::from(*b).to_string(),
        UserValue::Int(i) | UserValue::Enum { index: i, .. } => i.to_string(),
        UserValue::Number(x) | UserValue::Time(x) => t.num(*x),
        UserValue::Vector(v) | UserValue::Color(v) => t.vec3(*v),
        UserValue::ColorAlpha(v) => {
            format!("({}, {}, {}, {})", t.num(v.x), t.num(v.y), t.num(v.z), t.num(v.w))
        }
        UserValue::String(s) => string(s),
    }
}

/// Whether USD interpolates the type linearly (floating point) rather than holding it.
fn interpolated(v: &UserValue) -> bool {
    matches!(
        v,
        UserValue::Number(_)
            | UserValue::Time(_)
            | UserValue::Vector(_)
            | UserValue::Color(_)
            | UserValue::ColorAlpha(_)
    )
}

/// Writes node `k`'s user properties as custom attributes of its prim (module docs).
pub fn write(t: &mut Text, scene: &Scene, line: &Timeline, k: usize) {
    let props = scene.nodes[k].user_properties();
    if props.is_empty() {
        return;
    }
    let mut taken = names::Siblings::default();
    for (i, p) in props.iter().enumerate() {
        let name = taken.claim(&p.name);
        let ty = usd_type(&p.value);
        let decl = format!("custom {ty} userProperties:{name}");
        let mut meta = Vec::new();
        if name != p.name {
            meta.push(format!("displayName = {}", string(&p.name)));
        }
        match &p.value {
            UserValue::Enum { names, .. } => {
                let choices: Vec<String> = names.iter().map(|n| string(n)).collect();
                meta.push(format!(
                    "customData = {{ string[] choices = [{}] }}",
                    choices.join(", ")
                ));
            }
            UserValue::Time(_) => meta.push("customData = { string unit = \"seconds\" }".into()),
            _ => {}
        }
        let value = literal(t, &p.value);
        if meta.is_empty() {
            t.line(&format!("{decl} = {value}"));
        } else {
            t.line(&format!("{decl} = {value} ("));
            for m in &meta {
                t.line(&format!("    {m}"));
            }
            t.line(")");
        }
        let animated =
            scene.animations.get(line.animation.unwrap_or(usize::MAX)).is_some_and(|a| {
                a.channels.iter().any(|c| {
                    c.node == k
                        && c.target.property_name().is_some_and(|n| {
                            crate::anim::user_props::user_property_component(n, &p.name).is_some()
                        })
                })
            });
        if animated && !matches!(p.value, UserValue::String(_)) {
            samples(t, scene, line, (k, i), p, &format!("custom {ty} userProperties:{name}"));
        }
    }
}

/// The time samples of property `i` of node `k` (module docs), when its value changes.
fn samples(
    t: &mut Text,
    scene: &Scene,
    line: &Timeline,
    (k, i): (usize, usize),
    p: &UserProperty,
    decl: &str,
) {
    let at = |f: f64| {
        scene
            .user_properties_at(line.animation, k, Time::Frame(f))
            .into_iter()
            .nth(i)
            .map_or_else(|| p.value.clone(), |q| q.value)
    };
    let (frames, values): (Vec<f64>, Vec<UserValue>) = if interpolated(&p.value) {
        let n = p.value.components().len().min(4);
        let source = |f: f64| {
            let c = at(f).components();
            std::array::from_fn::<f64, 4, _>(|j| c.get(j).copied().unwrap_or(0.0))
        };
        let scale = |v: &[[f64; 4]]| {
            std::array::from_fn(|j| v.iter().map(|x| x[j].abs()).fold(1.0, f64::max))
        };
        let Some(Some((frames, values))) =
            params::sample(line, source, scale, std::slice::from_ref(&(0..n))).pop()
        else {
            return;
        };
        let values = values.iter().map(|v| p.value.with_components(&v.map(Some))).collect();
        (frames, values)
    } else {
        let grid: Vec<UserValue> = line.grid.iter().map(|&f| at(f)).collect();
        let changes = params::held_changes(&line.grid, &grid, at);
        if changes.len() < 2 {
            return;
        }
        changes.into_iter().unzip()
    };
    t.time_samples(decl, &frames, &values, literal);
}
