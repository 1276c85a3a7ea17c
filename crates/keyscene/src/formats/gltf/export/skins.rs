//! Skins: the joints (with the mesh node as an extra joint where vertices follow it) and
//! their inverse bind matrices.

use glam::DMat4;
use gltf_json as json;

use super::Out;
use crate::formats::gltf::warning;
use crate::scene::Scene;

impl Out {
    /// The glTF skin of scene node `i` showing the skinned glTF mesh `mesh` (see the module
    /// docs); `None` when the node's mesh has no usable skin.
    pub(super) fn skin(
        &mut self,
        scene: &Scene,
        i: usize,
        mesh: json::Index<json::Mesh>,
        base: usize,
    ) -> Option<json::Index<json::Skin>> {
        let node = &scene.nodes[i];
        let skin = skin_of(scene, &scene.meshes[node.mesh?])?;
        let info = self.mesh_info.get(&(mesh.value() as u32)).copied()?;
        let place = format!("node \"{}\" › skin", node.name);
        let mut joints: Vec<usize> = Vec::with_capacity(skin.joints.len() + 1);
        let mut ibm: Vec<[f32; 16]> = Vec::with_capacity(skin.joints.len() + 1);
        let mut bad = 0;
        let mut projective = 0;
        for j in &skin.joints {
            let mut m = j.inverse_bind.to_cols_array();
            if j.node < scene.nodes.len() && m.iter().all(|x| x.is_finite()) {
                // glTF wants affine matrices, last row exactly (0, 0, 0, 1).
                let scale = m.iter().fold(1.0f64, |a, x| a.max(x.abs()));
                if [m[3], m[7], m[11], m[15] - 1.0].iter().any(|x| x.abs() > 1e-9 * scale) {
                    projective += 1;
                }
                (m[3], m[7], m[11], m[15]) = (0.0, 0.0, 0.0, 1.0);
                joints.push(j.node);
                ibm.push(m.map(|x| x as f32));
            } else {
                // Keeps the joint numbering: the vertex follows the mesh node instead.
                bad += 1;
                joints.push(i);
                ibm.push(DMat4::IDENTITY.to_cols_array().map(|x| x as f32));
            }
        }
        if info.self_joint {
            joints.push(i);
            ibm.push(DMat4::IDENTITY.to_cols_array().map(|x| x as f32));
        }
        if bad > 0 {
            self.warnings.push(warning(
                &place,
                format!("{bad} joints name no node or have a non-finite bind matrix: their vertices follow the mesh node"),
            ));
        }
        if projective > 0 {
            self.warnings.push(warning(
                &place,
                format!("{projective} inverse bind matrices are not affine: last row written as (0, 0, 0, 1)"),
            ));
        }
        if skin.dq_weights.iter().any(|&d| d > 0.0) {
            self.warnings.push(warning(
                &place,
                "dual-quaternion skinning written as linear blend skinning (glTF has only linear)",
            ));
        }
        let mut seen = std::collections::HashSet::new();
        if !joints.iter().all(|j| seen.insert(*j)) {
            self.warnings.push(warning(
                &place,
                "a node is listed twice among the joints (glTF wants each once)",
            ));
        }
        let view = {
            let bytes: Vec<u8> = ibm.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
            self.view(&bytes, None)
        };
        let ibm = self.accessor(
            view,
            ibm.len(),
            json::accessor::ComponentType::F32,
            json::accessor::Type::Mat4,
            None,
            None,
        );
        let skeleton = common_ancestor(scene, &joints)
            .map(|a| base + a)
            .or((base == 1).then_some(0))
            .map(|a| json::Index::new(a as u32));
        if skeleton.is_none() {
            self.warnings.push(warning(
                &place,
                "joints share no ancestor: glTF wants a common root (write with a root node)",
            ));
        }
        Some(json::Index::push(
            &mut self.root.skins,
            json::Skin {
                extensions: None,
                extras: Default::default(),
                inverse_bind_matrices: Some(ibm),
                joints: joints.iter().map(|&j| json::Index::new((base + j) as u32)).collect(),
                name: Some(node.name.clone()),
                skeleton,
            },
        ))
    }
}

/// The skin deforming `mesh`, when it has one with joints.
pub(super) fn skin_of<'s>(
    scene: &'s Scene,
    mesh: &crate::scene::Mesh,
) -> Option<&'s crate::scene::Skin> {
    mesh.skin.and_then(|s| scene.skins.get(s)).filter(|s| !s.joints.is_empty())
}

/// The deepest node that is each of `nodes` or one of its ancestors, if they share one.
pub(super) fn common_ancestor(scene: &Scene, nodes: &[usize]) -> Option<usize> {
    let chain = |mut n: usize| {
        let mut c = vec![n];
        while let Some(p) = scene.nodes[n].parent {
            if c.len() > scene.nodes.len() {
                break;
            }
            c.push(p);
            n = p;
        }
        c.reverse();
        c
    };
    let mut common = chain(*nodes.first()?);
    for &n in &nodes[1..] {
        let c = chain(n);
        let k = common.iter().zip(&c).take_while(|(a, b)| a == b).count();
        common.truncate(k);
    }
    common.last().copied()
}
