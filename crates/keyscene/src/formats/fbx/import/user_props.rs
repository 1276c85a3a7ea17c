//! User-defined properties of models and materials ([`crate::scene::user_props`]): every
//! property whose flags contain `U`, as ufbx's `ufbxi_read_property` flags it
//! (`UFBX_PROP_FLAG_USER_DEFINED`), FBX 7 `Properties70` and FBX 6 `Properties60` alike.
//!
//! Values as ufbx reads them: the first value is the integer or number; the strings of
//! `KString` and `Enum` properties are the first string among the values (an enum stores its
//! index first, then its choices joined by `~`); `Number` and `Integer` keep their second and
//! third values as [`UserProperty::min`]/[`UserProperty::max`] (Maya's bounds). Types
//! ufbx does not know (`float`, `charptr`: 3ds Max and Maya's compound members) are typed by
//! their first value: a number → `Number`, a string → `String`; types without a value
//! (`Compound`, `Reference`, `Blob`) are left out.

use glam::{DVec3, DVec4};

use super::super::objects::{Object, ObjectGraph, Prop};
use super::Importer;
use crate::scene::{UserProperty, UserValue};

impl Importer<'_, '_, '_> {
    /// Fills [`Node::user_properties`](crate::scene::Node::user_properties) and
    /// [`Material::user_properties`](crate::scene::Material::user_properties).
    pub(super) fn user_properties(&mut self) {
        let ktime = self.graph.settings.ktime_per_second.max(1);
        for (&id, &n) in &self.ids.nodes {
            let Some(obj) = self.graph.object(id) else { continue };
            let props = read_user_properties(self.graph, obj, ktime);
            if let Some(node) = self.scene.nodes.get_mut(n) {
                node.set_user_properties(props);
            }
        }
        for (&id, &m) in &self.ids.materials {
            let Some(obj) = self.graph.object(id) else { continue };
            let props = read_user_properties(self.graph, obj, ktime);
            if let Some(material) = self.scene.materials.get_mut(m) {
                material.user_properties = props;
            }
        }
    }
}

/// The user properties of `obj` in file order (`ktime`: ticks per second of `KTime` values).
pub(crate) fn read_user_properties(
    graph: &ObjectGraph<'_, '_>,
    obj: &Object<'_, '_>,
    ktime: i64,
) -> Vec<UserProperty> {
    graph
        .own_props_with_flag_in_file_order(obj, 'U')
        .iter()
        .filter_map(|p| user_property(p, ktime))
        .collect()
}

/// One `U` property as a [`UserProperty`]; `None` for types that hold no value.
fn user_property(p: &Prop<'_, '_>, ktime: i64) -> Option<UserProperty> {
    let number = |i: usize| p.values.get(i).and_then(|v| v.as_f64());
    // The first string among the first two values (ufbx skips one non-string value).
    let text = || {
        p.values
            .iter()
            .take(2)
            .find_map(|v| v.as_bytes())
            .map(|b| String::from_utf8_lossy(b).into_owned())
    };
    let first_is_number = number(0).is_some();
    let kind = UserValue::from_fbx_type(p.ty)
        .or_else(|| UserValue::from_fbx_type(p.label))
        .or_else(|| match p.ty {
            "Compound" | "Reference" | "Blob" => None,
            _ if first_is_number => Some("number"),
            _ if text().is_some() => Some("string"),
            _ => None,
        })?;
    let int = || p.i64().unwrap_or(0);
    let xyzw = |i: usize| number(i).unwrap_or(0.0);
    let value = match kind {
        "bool" => UserValue::Bool(int() != 0),
        "int" => UserValue::Int(int()),
        "enum" => UserValue::Enum {
            index: int(),
            names: text()
                .filter(|s| !s.is_empty())
                .map(|s| s.split('~').map(str::to_string).collect())
                .unwrap_or_default(),
        },
        "time" => UserValue::Time(int() as f64 / ktime as f64),
        "number" => UserValue::Number(xyzw(0)),
        "vector" => UserValue::Vector(DVec3::new(xyzw(0), xyzw(1), xyzw(2))),
        "color" => UserValue::Color(DVec3::new(xyzw(0), xyzw(1), xyzw(2))),
        "color_alpha" => UserValue::ColorAlpha(DVec4::new(xyzw(0), xyzw(1), xyzw(2), xyzw(3))),
        _ => UserValue::String(text().unwrap_or_default()),
    };
    let bounded = matches!(value, UserValue::Int(_) | UserValue::Number(_));
    Some(UserProperty {
        name: p.name.to_string(),
        value,
        min: number(1).filter(|_| bounded),
        max: number(2).filter(|_| bounded),
        flags: p.flags.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::load;
    use crate::scene::UserValue;

    const FBX7: &str = r#"; FBX 7.4.0 project file
Objects: {
    Model: 10, "Model::A", "Null" { Properties70: {
        P: "Lcl Translation", "Lcl Translation", "", "A",1,2,3
        P: "Zed", "Number", "", "A+U",0.4,0,1
        P: "Alpha", "Enum", "", "A+U",1, "ValueA~ValueB~ValueC"
        P: "Tick", "KTime", "Time", "U",46186158000
        P: "Tint", "ColorRGB", "Color", "A+U",0.1,0.2,0.3
        P: "Label", "KString", "", "U", "Hello"
        P: "Group", "Compound", "", "U"
        P: "Maya|base", "float", "", "U",1
        P: "Zed", "Number", "", "A+U",0.5,0,1
    } }
}
Connections: { C: "OO",10,0 }
"#;

    #[test]
    fn user_properties_keep_file_order_types_bounds_and_the_last_repeat() {
        let (scene, _) = load(FBX7);
        let p = scene.nodes[0].user_properties();
        let names: Vec<&str> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Zed", "Alpha", "Tick", "Tint", "Label", "Maya|base"]);
        assert_eq!(p[0].value, UserValue::Number(0.5));
        assert_eq!((p[0].min, p[0].max), (Some(0.0), Some(1.0)));
        let names = ["ValueA", "ValueB", "ValueC"].map(String::from).to_vec();
        assert_eq!(p[1].value, UserValue::Enum { index: 1, names });
        assert_eq!(p[1].min, None);
        assert_eq!(p[2].value, UserValue::Time(1.0));
        assert_eq!(p[3].value, UserValue::Color(glam::DVec3::new(0.1, 0.2, 0.3)));
        assert_eq!(p[4].value, UserValue::String("Hello".into()));
        assert_eq!(p[5].value, UserValue::Number(1.0));
        assert_eq!(p[0].flags, "A+U");
    }

    #[test]
    fn fbx6_property_records_are_read_the_same() {
        let text = r#"; FBX 6.1.0 project file
Objects: {
    Model: "Model::A", "Null" {
        Version: 232
        Properties60: {
            Property: "User_Bool", "Bool", "A+U",1
            Property: "User_Enum", "Enum", "A+U",2, "a~b~c"
            Property: "Plain", "double", "A",3
        }
    }
}
Connections: { Connect: "OO", "Model::A", "Model::Scene" }
"#;
        let (scene, _) = load(text);
        let p = scene.nodes[0].user_properties();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].value, UserValue::Bool(true));
        let names = ["a", "b", "c"].map(String::from).to_vec();
        assert_eq!(p[1].value, UserValue::Enum { index: 2, names });
    }

    #[test]
    fn material_user_properties_are_read_with_their_curves() {
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Model: 10, "Model::A", "Mesh" { }
    Material: 30, "Material::M", "" { Properties70: {
        P: "Gloss", "Number", "", "A+U",0.5,0,1
    } }
    AnimationStack: 40, "AnimStack::Take", "" { }
    AnimationLayer: 41, "AnimLayer::Base", "" { }
    AnimationCurveNode: 42, "AnimCurveNode::Gloss", "" { Properties70: {
        P: "d|Gloss", "Number", "", "A",0.5
    } }
    AnimationCurve: 43, "AnimCurve::", "" {
        KeyTime: *2 { a: 0,46186158000 }
        KeyValueFloat: *2 { a: 0,1 }
        KeyAttrFlags: *1 { a: 4 }
        KeyAttrDataFloat: *4 { a: 0,0,0,0 }
        KeyAttrRefCount: *1 { a: 2 }
    }
}
Connections: {
    C: "OO",10,0
    C: "OO",30,10
    C: "OO",41,40
    C: "OO",42,41
    C: "OP",42,30, "Gloss"
    C: "OP",43,42, "d|Gloss"
}
"#;
        let (scene, warnings) = load(text);
        let m = scene.materials.iter().find(|m| m.name == "M").unwrap();
        assert_eq!(m.user_properties[0].value, UserValue::Number(0.5));
        assert!(warnings.is_empty(), "{warnings:?}");
        // The linear curve 0 → 1 over 0 s → 1 s: 0.25 at 0.25 s (hand-computed).
        let at = |t: f64| {
            let m = scene.material_at(Some(0), 0, crate::anim::Time::Seconds(t)).unwrap();
            m.user_properties[0].value.clone()
        };
        assert_eq!(at(0.25), UserValue::Number(0.25));
        assert_eq!(at(1.0), UserValue::Number(1.0));
    }
}
