//! glTF node names and the extras that keep what the glTF name cannot (the source name and
//! instance, the hidden flag).

use gltf_json as json;

/// The glTF name of a scene node: the instance name for a 3DS `$$$DUMMY` that has one, else
/// the node's name.
pub(super) fn gltf_name(name: &str, instance: &str) -> String {
    if name == "$$$DUMMY" && !instance.is_empty() {
        instance.to_string()
    } else {
        name.to_string()
    }
}

/// `{"keyscene": {...}}` extras keeping the source name/instance (where the glTF name differs
/// or an instance exists) and the hidden-at-rest flag; `None` when nothing needs keeping.
pub(super) fn node_extras(name: &str, instance: &str, hidden: bool) -> json::extras::Extras {
    let mut obj = serde_json::Map::new();
    if gltf_name(name, instance) != name || !instance.is_empty() {
        obj.insert("name".into(), name.into());
        obj.insert("instance".into(), instance.into());
    }
    if hidden {
        obj.insert("hidden".into(), true.into());
    }
    if obj.is_empty() {
        return None;
    }
    let value = serde_json::json!({ "keyscene": obj });
    serde_json::value::RawValue::from_string(value.to_string()).ok()
}
