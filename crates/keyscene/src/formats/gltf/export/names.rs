//! glTF node names and the extras that keep what the glTF name cannot (the source name and
//! instance, the hidden flag) and the node's user properties ([`super::super::extras`]).

use gltf_json as json;

use crate::formats::gltf::extras::{to_extras, write_user_properties, KEYSCENE_MEMBER};

/// The glTF name of a scene node: the instance name for a 3DS `$$$DUMMY` that has one, else
/// the node's name.
pub(super) fn gltf_name(name: &str, instance: &str) -> String {
    if name == "$$$DUMMY" && !instance.is_empty() {
        instance.to_string()
    } else {
        name.to_string()
    }
}

/// Extras holding `{"keyscene": {...}}` — the source name/instance (where the glTF name
/// differs or an instance exists) and the hidden-at-rest flag — and one member per user
/// property (name → value at rest, [`write_user_properties`]); `None` when nothing needs
/// keeping. Also returns the user properties left out (see [`write_user_properties`]).
pub(super) fn node_extras(node: &crate::scene::Node) -> (json::extras::Extras, Vec<String>) {
    let (name, instance) = (&node.name, &node.instance);
    let mut obj = serde_json::Map::new();
    if gltf_name(name, instance) != *name || !instance.is_empty() {
        obj.insert("name".into(), name.as_str().into());
        obj.insert("instance".into(), instance.as_str().into());
    }
    if node.hidden {
        obj.insert("hidden".into(), true.into());
    }
    let mut extras = serde_json::Map::new();
    if !obj.is_empty() {
        extras.insert(KEYSCENE_MEMBER.into(), obj.into());
    }
    let left_out = write_user_properties(&mut extras, node.user_properties());
    (to_extras(extras), left_out)
}

impl super::Out {
    /// Warns about node `i`'s user properties the glTF does not carry: animated ones (the
    /// extras hold the stored value: glTF has no animation target for extras) and those
    /// `left_out` of the extras ([`write_user_properties`]).
    pub(super) fn user_property_warnings(
        &mut self,
        scene: &crate::scene::Scene,
        i: usize,
        left_out: &[String],
    ) {
        let node = &scene.nodes[i];
        let place = format!("node {}", crate::quoting::quoted(&node.name));
        for p in node.user_properties() {
            if scene.animated_user_property(i, &p.name) {
                self.warnings.push(crate::formats::gltf::warning(
                    place.clone(),
                    format!(
                        "not carried: animated user property {} (extras hold its value at rest)",
                        crate::quoting::quoted(&p.name)
                    ),
                ));
            }
        }
        for name in left_out {
            self.warnings.push(crate::formats::gltf::warning(
                place.clone(),
                format!("not carried: user property {}", user_prop_reason(name)),
            ));
        }
    }
}

/// Why user property `name` has no member in the extras, in words.
pub(super) fn user_prop_reason(name: &str) -> String {
    let q = crate::quoting::quoted(name);
    if name == KEYSCENE_MEMBER {
        format!("{q} (the name of keyscene's own extras member)")
    } else {
        format!("{q} (a repeated name, or a number that is not finite)")
    }
}
