//! User-defined properties: the named values an artist adds to a node or material (Maya
//! "Add Attribute", 3ds Max custom attributes, Blender custom properties), kept format-neutral.
//!
//! # Sources
//! - FBX: a `P` record of `Properties70` (FBX 7) or a `Property` record of `Properties60`
//!   (FBX 6.1) whose flags string contains `U` (ufbx `ufbxi_read_property`:
//!   `UFBX_PROP_FLAG_USER_DEFINED`), on a `Model` (→ [`Node`](super::Node)) or a `Material`.
//!   The type comes from the record's type string, else its FBX 7 label ([`UserValue::from_fbx_type`]).
//! - glTF: the members of a node's or material's `extras` object other than keyscene's own
//!   `keyscene` member, typed from JSON (`formats/gltf/extras.rs`).
//!
//! # Animation
//! A property's curves are animation channels like any other animated property:
//! [`ChannelTarget::Property`](super::animation::ChannelTarget::Property) on the node, named
//! after the property (`Name`) for a one-value property and `Name|X`, `Name|Y`, `Name|Z` for
//! the components of a vector or colour. [`Scene::user_properties_at`](crate::anim) evaluates them;
//! [`Scene::animated_user_property`](crate::anim) says whether any animation does. A material's
//! are [`MaterialChannel`](super::animation::MaterialChannel)s with
//! [`MaterialProperty::User`](super::animation::MaterialProperty::User), evaluated by
//! [`Scene::material_at`](crate::anim).
//!
//! # Units
//! Values are the source's own, except [`UserValue::Time`]: seconds (FBX `KTime` ticks ÷ the
//! file's ticks per second, 46,186,158,000 by default).

use glam::{DVec3, DVec4};

/// One user-defined property.
#[derive(Debug, Clone, PartialEq)]
pub struct UserProperty {
    /// The property's name as the source spells it (`User_Float`).
    pub name: String,
    /// Its type and value at rest (the stored value, before any animation).
    pub value: UserValue,
    /// The lower bound the source stores, if any: FBX `Number`/`Integer` properties' second
    /// value (Maya writes one whether or not the attribute has a minimum; an attribute
    /// without one gets the value or the other bound), `None` elsewhere.
    pub min: Option<f64>,
    /// The upper bound the source stores, if any: FBX `Number`/`Integer` properties' third
    /// value (see [`UserProperty::min`]), `None` elsewhere.
    pub max: Option<f64>,
    /// The FBX flags string as stored (`A+U`, `U`, `UH` …; `A` animatable, `+` animated, `U`
    /// user-defined, `H` hidden); writers add `U` if missing. Empty for glTF.
    pub flags: String,
}

/// A user property's type and value.
#[derive(Debug, Clone, PartialEq)]
pub enum UserValue {
    /// FBX `Bool`/`bool`/`Boolean`; JSON `true`/`false`.
    Bool(bool),
    /// FBX `Integer`/`int`; JSON integers.
    Int(i64),
    /// FBX `Enum`/`enum`: the chosen index and the choices (the stored string split at `~`).
    Enum {
        /// The chosen index as stored (not checked against `names`).
        index: i64,
        /// The choices in order; empty when the file stores none.
        names: Vec<String>,
    },
    /// FBX `Number`/`double`/`Real`/`Float`/`Intensity`/`Distance`; JSON numbers with a
    /// fraction or exponent.
    Number(f64),
    /// FBX `Vector`/`Vector3D`; JSON arrays of three numbers.
    Vector(DVec3),
    /// FBX `Color`/`ColorRGB`, RGB as stored (no colour space conversion).
    Color(DVec3),
    /// FBX `ColorAndAlpha`, RGBA as stored; JSON arrays of four numbers.
    ColorAlpha(DVec4),
    /// FBX `KString`/`String`/`object`/`DateTime`; JSON strings.
    String(String),
    /// FBX `KTime`, in seconds (see the module docs).
    Time(f64),
}

impl UserValue {
    /// The kind of value as `inspect` names it: `bool`, `int`, `enum`, `number`, `vector`,
    /// `color`, `color_alpha`, `string` or `time`.
    pub fn kind(&self) -> &'static str {
        match self {
            UserValue::Bool(_) => "bool",
            UserValue::Int(_) => "int",
            UserValue::Enum { .. } => "enum",
            UserValue::Number(_) => "number",
            UserValue::Vector(_) => "vector",
            UserValue::Color(_) => "color",
            UserValue::ColorAlpha(_) => "color_alpha",
            UserValue::String(_) => "string",
            UserValue::Time(_) => "time",
        }
    }

    /// The value's numeric components as an animation channel sees them (`Bool` 1/0, `Int`
    /// and `Enum` the integer, `Time` seconds); empty for `String`.
    pub fn components(&self) -> Vec<f64> {
        match self {
            UserValue::Bool(b) => vec![f64::from(u8::from(*b))],
            UserValue::Int(i) | UserValue::Enum { index: i, .. } => vec![*i as f64],
            UserValue::Number(x) | UserValue::Time(x) => vec![*x],
            UserValue::Vector(v) | UserValue::Color(v) => v.to_array().to_vec(),
            UserValue::ColorAlpha(v) => v.to_array().to_vec(),
            UserValue::String(_) => Vec::new(),
        }
    }

    /// This value with its numeric components replaced by `c` (as many as
    /// [`components`](Self::components) gives; missing ones keep their value). Integers, enum
    /// indices and booleans take an animated value as ufbx's `evaluate_prop` does: truncated
    /// toward zero (`ufbxi_f64_to_i64`, saturating), a boolean true when that is not 0.
    pub fn with_components(&self, c: &[Option<f64>]) -> UserValue {
        let at = |i: usize, old: f64| c.get(i).copied().flatten().unwrap_or(old);
        let int = |x: f64| if x.is_nan() { 0 } else { x as i64 };
        match self {
            UserValue::Bool(b) => UserValue::Bool(int(at(0, f64::from(u8::from(*b)))) != 0),
            UserValue::Int(i) => UserValue::Int(c.first().copied().flatten().map_or(*i, int)),
            UserValue::Enum { index, names } => UserValue::Enum {
                index: c.first().copied().flatten().map_or(*index, int),
                names: names.clone(),
            },
            UserValue::Number(x) => UserValue::Number(at(0, *x)),
            UserValue::Time(x) => UserValue::Time(at(0, *x)),
            UserValue::Vector(v) => {
                UserValue::Vector(DVec3::new(at(0, v.x), at(1, v.y), at(2, v.z)))
            }
            UserValue::Color(v) => UserValue::Color(DVec3::new(at(0, v.x), at(1, v.y), at(2, v.z))),
            UserValue::ColorAlpha(v) => {
                UserValue::ColorAlpha(DVec4::new(at(0, v.x), at(1, v.y), at(2, v.z), at(3, v.w)))
            }
            UserValue::String(s) => UserValue::String(s.clone()),
        }
    }

    /// The value's kind for an FBX type string (the record's second string, then its FBX 7
    /// label when the type is not known), following ufbx's `ufbxi_prop_type_names` with
    /// `Enum`, `KTime` and `ColorAndAlpha` kept apart and the FBX SDK's other integer types
    /// (`Short`, `UShort`, `UInteger`, `LongLong`, `ULongLong`) read as `int`: one of
    /// [`UserValue::kind`]'s names, or
    /// `None` for types that hold no plain value (`Compound`, `Reference`, `Blob`,
    /// `Lcl Translation` …) and unknown ones.
    pub fn from_fbx_type(ty: &str) -> Option<&'static str> {
        Some(match ty {
            "Bool" | "bool" | "Boolean" => "bool",
            "Integer" | "int" | "Visibility" | "Visibility Inheritance" => "int",
            // Integer types ufbx does not name (MotionBuilder's `filmboxTypeID` is a `Short`).
            "Short" | "short" | "UShort" | "UInteger" | "LongLong" | "ULongLong" => "int",
            "Enum" | "enum" => "enum",
            "KTime" => "time",
            "Number" | "double" | "Real" | "Float" | "Intensity" | "Distance" => "number",
            "Vector" | "Vector3D" => "vector",
            "Color" | "ColorRGB" => "color",
            "ColorAndAlpha" => "color_alpha",
            "String" | "KString" | "object" | "DateTime" => "string",
            _ => return None,
        })
    }
}

/// `true`, `3`, `2 (ValueC of ValueA~ValueB~ValueC)`, `0.5`, `(1, 2, 3)`, `"text"`, `1.5 s`:
/// the form `inspect` prints.
impl std::fmt::Display for UserValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserValue::Bool(b) => write!(f, "{b}"),
            UserValue::Int(i) => write!(f, "{i}"),
            UserValue::Enum { index, names } => {
                let chosen = usize::try_from(*index).ok().and_then(|i| names.get(i));
                match chosen {
                    Some(n) => write!(f, "{index} ({n} of {})", names.join("~")),
                    None => write!(f, "{index} (of {})", names.join("~")),
                }
            }
            UserValue::Number(x) => write!(f, "{x}"),
            UserValue::Vector(v) | UserValue::Color(v) => write!(f, "({}, {}, {})", v.x, v.y, v.z),
            UserValue::ColorAlpha(v) => write!(f, "({}, {}, {}, {})", v.x, v.y, v.z, v.w),
            UserValue::String(s) => write!(f, "{s:?}"),
            UserValue::Time(t) => write!(f, "{t} s"),
        }
    }
}

/// The warning of a writer whose format has no place for user properties (3DA, 3DS, OBJ),
/// naming how many nodes and materials carry them; `None` when none does.
pub fn not_written_warning(scene: &super::Scene, format: &str) -> Option<String> {
    let nodes = scene.nodes.iter().filter(|n| !n.user_properties().is_empty()).count();
    let mats = scene.materials.iter().filter(|m| !m.user_properties.is_empty()).count();
    (nodes + mats > 0).then(|| {
        format!(
            "not written: the user properties of {nodes} node(s) and {mats} material(s) ({format} has no place for them; FBX and glTF extras keep them)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn animated_integers_truncate_toward_zero_as_ufbx_does() {
        let i = UserValue::Int(0);
        assert_eq!(i.with_components(&[Some(2.9)]), UserValue::Int(2));
        assert_eq!(i.with_components(&[Some(-2.9)]), UserValue::Int(-2));
        let b = UserValue::Bool(true);
        assert_eq!(b.with_components(&[Some(0.5)]), UserValue::Bool(false));
        assert_eq!(b.with_components(&[Some(-1.0)]), UserValue::Bool(true));
        assert_eq!(b.with_components(&[None]), UserValue::Bool(true));
    }
}
