//! User properties in glTF `extras` (docs/gltf.md, "User properties"): a node's or
//! material's `extras` object holds one member per user property, name → value at rest, next
//! to keyscene's own `keyscene` member (source name, instance, hidden). The reader takes every
//! other member back, typed from its JSON token.

use glam::{DVec3, DVec4};
use serde_json::{Map, Value};

use crate::scene::{UserProperty, UserValue};

/// The member of `extras` that keyscene keeps its own data in (never a user property).
pub(crate) const KEYSCENE_MEMBER: &str = "keyscene";

/// A value typed from JSON: `true`/`false` → `Bool`, an integer (no fraction or exponent,
/// fits `i64`) → `Int`, another number → `Number`, an array of three numbers → `Vector`, of
/// four → `ColorAlpha`, a string → `String`; `None` for anything else (null, objects, other
/// arrays).
pub fn user_value_from_json(v: &Value) -> Option<UserValue> {
    Some(match v {
        Value::Bool(b) => UserValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => UserValue::Int(i),
            None => UserValue::Number(n.as_f64()?),
        },
        Value::String(s) => UserValue::String(s.clone()),
        Value::Array(a) => {
            let x: Option<Vec<f64>> = a.iter().map(Value::as_f64).collect();
            match x?.as_slice() {
                [x, y, z] => UserValue::Vector(DVec3::new(*x, *y, *z)),
                [x, y, z, w] => UserValue::ColorAlpha(DVec4::new(*x, *y, *z, *w)),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The value as JSON (the inverse of [`user_value_from_json`] where JSON has the type):
/// `Enum` → its index, `Color` → an array of three, `Time` → seconds; numbers with a
/// fraction part stay JSON numbers with one (`1.0`), so they read back as `Number`. A number
/// that is not finite has no JSON form: `None`.
pub fn user_value_to_json(value: &UserValue) -> Option<Value> {
    let num = |x: f64| serde_json::Number::from_f64(x).map(Value::Number);
    let arr = |c: &[f64]| c.iter().map(|&x| num(x)).collect::<Option<Vec<_>>>().map(Value::Array);
    Some(match value {
        UserValue::Bool(b) => Value::Bool(*b),
        UserValue::Int(i) | UserValue::Enum { index: i, .. } => Value::from(*i),
        UserValue::Number(x) | UserValue::Time(x) => num(*x)?,
        UserValue::Vector(v) | UserValue::Color(v) => arr(&v.to_array())?,
        UserValue::ColorAlpha(v) => arr(&v.to_array())?,
        UserValue::String(s) => Value::String(s.clone()),
    })
}

/// The user properties of an `extras` value: every member but [`KEYSCENE_MEMBER`] whose JSON
/// [`user_value_from_json`] types, in the object's order (serde_json keeps members sorted by
/// name). Extras that are not an object hold none.
pub(crate) fn read_user_properties(extras: &Value) -> Vec<UserProperty> {
    let Some(obj) = extras.as_object() else { return Vec::new() };
    obj.iter()
        .filter(|(k, _)| *k != KEYSCENE_MEMBER)
        .filter_map(|(k, v)| {
            Some(UserProperty {
                name: k.clone(),
                value: user_value_from_json(v)?,
                min: None,
                max: None,
                flags: String::new(),
            })
        })
        .collect()
}

/// Adds `props` to `obj` (name → value at rest). Returns the names left out: a property named
/// [`KEYSCENE_MEMBER`], a repeated name, or a value without a JSON form.
pub(crate) fn write_user_properties(
    obj: &mut Map<String, Value>,
    props: &[UserProperty],
) -> Vec<String> {
    let mut left_out = Vec::new();
    for p in props {
        match user_value_to_json(&p.value) {
            Some(v) if p.name != KEYSCENE_MEMBER && !obj.contains_key(&p.name) => {
                obj.insert(p.name.clone(), v);
            }
            _ => left_out.push(p.name.clone()),
        }
    }
    left_out
}

/// Extras from an object: `None` when it is empty.
pub(crate) fn to_extras(obj: Map<String, Value>) -> gltf_json::extras::Extras {
    if obj.is_empty() {
        return None;
    }
    serde_json::value::RawValue::from_string(Value::Object(obj).to_string()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_types_follow_the_json_token() {
        let v: Value =
            serde_json::from_str(r#"[true, 3, 3.0, [1, 2, 3], [1, 2, 3, 4], "x", null, [1]]"#)
                .unwrap();
        let got: Vec<Option<&str>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| user_value_from_json(x).map(|u| u.kind()))
            .collect();
        let want = [Some("bool"), Some("int"), Some("number"), Some("vector"), Some("color_alpha")];
        assert_eq!(got[..5], want);
        assert_eq!(got[5..], [Some("string"), None, None]);
    }

    #[test]
    fn written_numbers_keep_their_json_type() {
        let text = user_value_to_json(&UserValue::Number(1.0)).unwrap().to_string();
        assert_eq!(text, "1.0");
        let back = user_value_from_json(&serde_json::from_str(&text).unwrap());
        assert_eq!(back, Some(UserValue::Number(1.0)));
        assert_eq!(user_value_to_json(&UserValue::Number(f64::NAN)), None);
    }
}
