//! glTF nodes → scene nodes: transforms, meshes (a mesh shown with a skin gets it; with two
//! skins, a copy per skin), cameras and lights, keyscene's extras, and the hierarchy (checked:
//! one parent per node).

use std::collections::HashMap;

use glam::{DQuat, DVec3};

use super::meshes::Meshes;
use super::skins::skin;
use crate::formats::gltf::Error;
use crate::scene::{Node, NodeKind, Scene, Transform, Warning};

/// Reads every glTF node into `scene` (scene node `i` is glTF node `i`), with its parent and
/// the scene's roots. Errors: a node with two parents (or itself as child), a skin that
/// [`skin`] refuses.
pub(super) fn nodes(
    doc: &gltf::Document,
    buffers: &[Vec<u8>],
    meshes: &Meshes,
    scene: &mut Scene,
    warnings: &mut Vec<Warning>,
) -> Result<(), Error> {
    // (glTF mesh, glTF skin) → scene mesh, for meshes shown with a skin.
    let mut skinned: HashMap<(usize, usize), usize> = HashMap::new();
    let mut parent: Vec<Option<usize>> = vec![None; doc.nodes().len()];
    for node in doc.nodes() {
        let i = node.index();
        let place = format!("nodes[{i}]");
        let mut n = node_of(&node);
        n.mesh = node.mesh().and_then(|m| meshes.mesh_of.get(m.index()).copied().flatten());
        if let (Some(gm), Some(gs), Some(m)) = (node.mesh(), node.skin(), n.mesh) {
            let key = (gm.index(), gs.index());
            if let Some(&sm) = skinned.get(&key) {
                n.mesh = Some(sm);
            } else if let Some(inf) = meshes.influences_of.get(gm.index()).cloned().flatten() {
                let skin = skin(&gs, buffers, inf, doc.nodes().len(), warnings)?;
                // A mesh shown with two skins is copied, as the model keeps the skin on it.
                let sm = if scene.meshes[m].skin.is_some() {
                    scene.meshes.push(scene.meshes[m].clone());
                    scene.meshes.len() - 1
                } else {
                    m
                };
                scene.meshes[sm].skin = Some(scene.skins.len());
                scene.skins.push(skin);
                skinned.insert(key, sm);
                n.mesh = Some(sm);
            }
        }
        for c in node.children() {
            let c = c.index();
            if parent[c].is_some() || c == i {
                return Err(Error::Invalid {
                    place,
                    message: format!("node {c} has more than one parent"),
                });
            }
            parent[c] = Some(i);
            n.children.push(c);
        }
        scene.nodes.push(n);
    }
    for (i, p) in parent.iter().enumerate() {
        scene.nodes[i].parent = *p;
        if p.is_none() {
            scene.roots.push(i);
        }
    }
    Ok(())
}

/// A glTF node as a scene node without mesh or children: its kind (camera, light, mesh or
/// null), TRS or matrix as translation, rotation (normalised; a zero quaternion is the
/// identity) and scale, the name, instance and hidden flag keyscene's extras restore, and
/// the user properties the other members of the extras hold.
fn node_of(node: &gltf::Node) -> Node {
    let kind = if let Some(c) = node.camera() {
        NodeKind::Camera(c.index())
    } else if let Some(l) = node.light() {
        NodeKind::Light(l.index())
    } else if node.mesh().is_some() {
        NodeKind::Mesh
    } else {
        NodeKind::Null
    };
    let mut n = Node::new(node.name().unwrap_or(""), kind);
    let (t, r, s) = node.transform().decomposed();
    let rotation = DQuat::from_array(r.map(f64::from));
    n.transform = Transform {
        translation: DVec3::from_array(t.map(f64::from)),
        rotation: if rotation.length_squared() > 0.0 {
            rotation.normalize()
        } else {
            DQuat::IDENTITY
        },
        scale: DVec3::from_array(s.map(f64::from)),
    };
    if let Some(extras) = node.extras() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(extras.get()) {
            let k = &v["keyscene"];
            if let Some(name) = k["name"].as_str() {
                n.name = name.into();
            }
            if let Some(instance) = k["instance"].as_str() {
                n.instance = instance.into();
            }
            n.hidden = k["hidden"].as_bool().unwrap_or(false);
            n.set_user_properties(crate::formats::gltf::extras::read_user_properties(&v));
        }
    }
    // KHR_node_visibility `visible: false` hides the node (and, in glTF, its descendants,
    // which the writer only does where they are hidden too).
    if node.extension_value("KHR_node_visibility").and_then(|v| v["visible"].as_bool())
        == Some(false)
    {
        n.hidden = true;
    }
    n
}
