//! glTF skins → scene skins.

use crate::formats::gltf::{accessors, warning, Error};
use crate::scene::Warning;

/// Per-vertex skin influences of a mesh: (joint slot in the node's skin, weight).
pub(super) type Influences = Vec<Vec<(u32, f32)>>;

/// The scene skin for glTF skin `s` over a mesh's per-vertex `influences`: joints are glTF
/// node indices (the reader keeps glTF's node order) with their inverse bind matrices
/// (identity when the skin has none), which are the model's
/// [`SkinJoint::inverse_bind`](crate::scene::SkinJoint::inverse_bind): glTF ignores the mesh
/// node's transform in skinning, as the model's formula (bone world · inverse bind · mesh
/// position) does. Influences on a joint slot past the list are dropped with a warning.
pub(super) fn skin(
    s: &gltf::Skin,
    buffers: &[Vec<u8>],
    mut influences: Influences,
    node_count: usize,
    warnings: &mut Vec<Warning>,
) -> Result<crate::scene::Skin, Error> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    let place = format!("skins[{}]", s.index());
    if let Some(acc) = s.inverse_bind_matrices() {
        accessors::check(&acc, buffers, &accessors::MAT4_FLOAT)
            .map_err(|message| Error::Invalid { place: place.clone(), message })?;
    }
    let ibm: Vec<glam::DMat4> = match s.reader(get).read_inverse_bind_matrices() {
        Some(it) => {
            it.take(node_count + 1).map(|m| glam::Mat4::from_cols_array_2d(&m).as_dmat4()).collect()
        }
        None => Vec::new(),
    };
    let joints: Vec<crate::scene::SkinJoint> = s
        .joints()
        .enumerate()
        .map(|(k, j)| crate::scene::SkinJoint {
            node: j.index(),
            inverse_bind: ibm.get(k).copied().unwrap_or(glam::DMat4::IDENTITY),
        })
        .collect();
    if !ibm.is_empty() && ibm.len() < joints.len() {
        return Err(Error::Invalid {
            place,
            message: format!("{} inverse bind matrices for {} joints", ibm.len(), joints.len()),
        });
    }
    let mut dropped = 0;
    for v in &mut influences {
        let before = v.len();
        v.retain(|&(j, _)| (j as usize) < joints.len());
        dropped += before - v.len();
    }
    if dropped > 0 {
        warnings.push(warning(place, format!("{dropped} influences name no joint: dropped")));
    }
    Ok(crate::scene::Skin { joints, influences, dq_weights: Vec::new(), mesh_bind: None })
}
