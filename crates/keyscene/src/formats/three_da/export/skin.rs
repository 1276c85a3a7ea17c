//! Skinning (docs/3da.md, "Skinning" and "Skin bind pose"): which skins are written as blend
//! streams, the `bone_init_tm` of the entities they involve, and each vertex's blend record.

use std::collections::HashMap;

use glam::DMat4;

use super::ExportReport;
use crate::formats::three_da::layout::{VBlend, VERTEX_WEIGHT_SCALE};
use crate::quoting::quoted;
use crate::scene::{NodeId, NodeKind, Scene};

/// The skins the exporter writes as blend streams and the `bone_init_tm` of every entity
/// they involve (docs/3da.md, "Skinning").
pub(super) struct BindPoses {
    /// Per kept slot of a skinned mesh written with a blend stream: its joints' file indices.
    pub joints: HashMap<usize, Vec<u8>>,
    /// Per kept slot: `bone_init_tm`, the entity's world matrix at bind time (root space,
    /// column-vector convention; stored as `to_cols_array`, i.e. row-major row-vector, the
    /// translation at elements 12..15). Entities of no skin are absent (identity).
    pub init_tm: HashMap<usize, DMat4>,
}

impl BindPoses {
    /// The entity an unweighted vertex of the skinned mesh in slot `k` is bound to: the mesh
    /// itself when its file index fits a `u8`, else its skin's first joint.
    pub(super) fn unweighted(&self, k: usize, file_index: &[usize], joints: &[u8]) -> u8 {
        u8::try_from(file_index[k]).unwrap_or_else(|_| joints.first().copied().unwrap_or(0))
    }
}

/// Whether two bind matrices are the same within `f32` storage precision.
fn same_matrix(a: &DMat4, b: &DMat4) -> bool {
    let scale = a.to_cols_array().iter().fold(1.0f64, |m, x| m.max(x.abs()));
    a.to_cols_array().iter().zip(b.to_cols_array()).all(|(x, y)| (x - y).abs() <= 1e-6 * scale)
}

/// Chooses the bind matrices (`bone_init_tm`) of skinned meshes and their joints.
///
/// The scene gives per joint `inverse_bind = B_joint⁻¹ · B_mesh` only; the file stores `B`
/// per entity, so the skinned mesh's `B_mesh` is chosen — its world matrix at the first
/// written frame, or, when one of its joints already has a `B` from another skin, the `B_mesh`
/// that agrees with it — and `B_joint = B_mesh · inverse_bind⁻¹`. A skin whose joints cannot
/// all agree with the bind matrices already chosen (a bone bound differently by two meshes),
/// whose inverse bind matrices are singular, or with a joint that is not an entity below 256
/// is written rigid, reported as dropped.
pub(super) fn bind_poses(
    scene: &Scene,
    kept: &[NodeId],
    slot_of: &HashMap<NodeId, usize>,
    file_index: &[usize],
    first_world: &[DMat4],
    names: &[String],
    report: &mut ExportReport,
) -> BindPoses {
    let mut out = BindPoses { joints: HashMap::new(), init_tm: HashMap::new() };
    for (k, &id) in kept.iter().enumerate() {
        let node = &scene.nodes[id];
        let Some(skin) = node
            .mesh
            .filter(|_| matches!(node.kind, NodeKind::Mesh))
            .and_then(|m| scene.meshes.get(m))
            .and_then(|m| m.skin)
            .and_then(|s| scene.skins.get(s))
        else {
            continue;
        };
        let rigid = |why: &str, report: &mut ExportReport| {
            report.dropped.push(format!(
                "{}: skinning ({why}; written as a rigid mesh in its bind pose)",
                quoted(&names[k])
            ))
        };
        let Some(joints) = skin
            .joints
            .iter()
            .map(|j| slot_of.get(&j.node).and_then(|&s| u8::try_from(file_index[s]).ok()))
            .collect::<Option<Vec<u8>>>()
        else {
            rigid("a joint is not an entity or past entity 255", report);
            continue;
        };
        let inverses: Option<Vec<(usize, DMat4)>> = skin
            .joints
            .iter()
            .map(|j| {
                let ok = j.inverse_bind.is_finite() && j.inverse_bind.determinant().abs() > 1e-300;
                ok.then(|| (slot_of[&j.node], j.inverse_bind.inverse()))
            })
            .collect();
        let Some(inverses) = inverses else {
            rigid("a singular or non-finite inverse bind matrix", report);
            continue;
        };
        // B_mesh: from a joint (or the mesh) already bound, else the first frame's world.
        let mesh_bind = inverses
            .iter()
            .find_map(|(s, inv_ib)| out.init_tm.get(s).map(|b| *b * inv_ib.inverse()))
            .or_else(|| out.init_tm.get(&k).copied())
            .unwrap_or_else(|| first_world.get(id).copied().unwrap_or(DMat4::IDENTITY));
        let mut chosen: Vec<(usize, DMat4)> = vec![(k, mesh_bind)];
        chosen.extend(inverses.iter().map(|(s, inv_ib)| (*s, mesh_bind * *inv_ib)));
        let agrees = chosen.iter().enumerate().all(|(i, (s, b))| {
            out.init_tm.get(s).is_none_or(|x| same_matrix(x, b))
                && chosen[..i].iter().all(|(t, c)| t != s || same_matrix(c, b))
        });
        if !agrees {
            rigid("a joint's bind matrix differs from the one another skin gives it", report);
            continue;
        }
        out.init_tm.extend(chosen);
        out.joints.insert(k, joints);
    }
    out
}

/// A vertex's blend record: the four largest influences (ties: the lower joint first), weights
/// scaled to [`VERTEX_WEIGHT_SCALE`] and rounded so they sum to it **exactly** (largest
/// remainder); `joints` maps the skin's joint numbers to entity indices. Unused slots repeat
/// the first bone with weight 0. A vertex without a positive finite weight is bound fully to
/// entity `unweighted` — the exporter passes the skinned mesh's own entity, whose
/// `bone_init_tm` is its bind matrix, so such a vertex follows the mesh as it does in FBX
/// (docs/3da.md, "Skinning").
pub fn blend_weights(influences: &[(u32, f32)], joints: &[u8], unweighted: u8) -> VBlend {
    let mut inf: Vec<(u8, f64)> = influences
        .iter()
        .filter(|(j, w)| w.is_finite() && *w > 0.0 && (*j as usize) < joints.len())
        .map(|&(j, w)| (joints[j as usize], f64::from(w)))
        .collect();
    inf.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    inf.truncate(4);
    let sum: f64 = inf.iter().map(|x| x.1).sum();
    if inf.is_empty() || sum <= 0.0 {
        return VBlend { bone_idx: [unweighted; 4], weight: [VERTEX_WEIGHT_SCALE as u16, 0, 0, 0] };
    }
    let scale = f64::from(VERTEX_WEIGHT_SCALE);
    let exact: Vec<f64> = inf.iter().map(|x| x.1 / sum * scale).collect();
    let mut w: Vec<u32> = exact.iter().map(|x| x.floor() as u32).collect();
    let mut left = VERTEX_WEIGHT_SCALE - w.iter().sum::<u32>();
    let mut by_remainder: Vec<usize> = (0..w.len()).collect();
    by_remainder.sort_by(|&a, &b| {
        (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b))
    });
    for &i in by_remainder.iter().cycle() {
        if left == 0 {
            break;
        }
        w[i] += 1;
        left -= 1;
    }
    let mut out = VBlend { bone_idx: [inf[0].0; 4], weight: [0; 4] };
    for (i, (&(b, _), &x)) in inf.iter().zip(&w).enumerate() {
        out.bone_idx[i] = b;
        // A single influence has weight 32768, which a u16 holds.
        out.weight[i] = x as u16;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::triangle_scene;
    use super::super::{export, ExportOptions};
    use super::*;
    use crate::formats::three_da::layout::entity_type;
    use crate::scene::Node;
    use glam::DVec3;

    #[test]
    fn blend_weights_keep_the_four_largest_and_sum_to_exactly_32768() {
        let joints = [10u8, 11, 12, 13, 14];
        let b = blend_weights(&[(0, 0.1), (1, 0.3), (2, 0.05), (3, 0.25), (4, 0.3)], &joints, 7);
        assert_eq!(b.bone_idx, [11, 14, 13, 10]);
        assert_eq!(b.weight.iter().map(|&w| u32::from(w)).sum::<u32>(), 32768);
        // 0.3 / 0.95 · 32768 = 10347.79 … the largest remainders get the spare units.
        assert_eq!(b.weight, [10348, 10348, 8623, 3449]);
        let third = blend_weights(&[(0, 1.0), (1, 1.0), (2, 1.0)], &joints, 7);
        assert_eq!(third.weight, [10923, 10923, 10922, 0]);
        // No usable weight: bound fully to the entity the caller names (the mesh itself).
        let none = blend_weights(&[(0, 0.0), (1, f32::NAN)], &joints, 7);
        assert_eq!((none.bone_idx, none.weight), ([7; 4], [32768, 0, 0, 0]));
    }

    #[test]
    fn skinned_meshes_get_blend_streams_that_check_accepts() {
        use crate::scene::{Skin, SkinJoint};
        let mut s = triangle_scene();
        for name in ["b0", "b1"] {
            let id = s.nodes.len();
            s.nodes.push(Node::new(name, NodeKind::Bone));
            s.attach(id, None);
        }
        let joint = |node| SkinJoint { node, inverse_bind: DMat4::IDENTITY };
        s.skins.push(Skin {
            joints: vec![joint(2), joint(3)],
            influences: vec![vec![(0, 1.0)], vec![(0, 0.5), (1, 0.5)], vec![(1, 2.0)]],
            dq_weights: Vec::new(),
            mesh_bind: None,
        });
        s.meshes[0].skin = Some(0);
        let (file, _, _) = export(&s, &ExportOptions::default()).unwrap();
        let e = file.entities.iter().find(|e| e.type_id == entity_type::MESH_SKINNED).unwrap();
        let blend = e.surfaces[0].blending.as_ref().unwrap();
        let b0 = file
            .entities
            .iter()
            .position(|e| crate::formats::three_da::layout::name_str(&e.name) == "b0")
            .unwrap() as u8;
        assert!(blend.iter().any(|b| b.bone_idx[0] == b0 && b.weight[0] == 32768));
        let bytes = crate::formats::three_da::write(&file).unwrap();
        let errors: Vec<_> =
            crate::formats::three_da::check(&bytes).errors().map(|i| i.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        // Read back: one skin over the two bones, the weights as written.
        let (back, _) = crate::load_bytes(&bytes, None, &Default::default()).unwrap();
        let skin = &back.skins[0];
        let joint_names: Vec<&str> =
            skin.joints.iter().map(|j| back.nodes[j.node].name.as_str()).collect();
        assert_eq!(joint_names, ["b0", "b1"]);
        let mut w: Vec<Vec<f32>> =
            skin.influences.iter().map(|i| i.iter().map(|x| x.1).collect()).collect();
        w.sort_by_key(Vec::len);
        assert_eq!(w, vec![vec![1.0], vec![1.0], vec![0.5, 0.5]]);
    }

    #[test]
    fn unweighted_vertices_follow_the_mesh_and_bind_matrices_fill_bone_init_tm() {
        use crate::scene::{Skin, SkinJoint};
        let mut s = triangle_scene();
        let b = s.nodes.len();
        s.nodes.push(Node::new("b0", NodeKind::Bone));
        s.attach(b, None);
        s.nodes[b].transform.translation = DVec3::new(0.0, 0.0, 2.0);
        // Bound when the bone stood at z = 1 and the mesh at its place: B_bone⁻¹ · B_mesh.
        let mesh_world = s.evaluate(None, crate::anim::Time::Frame(0.0)).world[0];
        let bone_bind = DMat4::from_translation(DVec3::new(0.0, 0.0, 1.0));
        s.skins.push(Skin {
            joints: vec![SkinJoint { node: b, inverse_bind: bone_bind.inverse() * mesh_world }],
            influences: vec![vec![(0, 1.0)], vec![(0, 1.0)], vec![]],
            dq_weights: Vec::new(),
            mesh_bind: None,
        });
        s.meshes[0].skin = Some(0);
        let (file, _, _) = export(&s, &ExportOptions::default()).unwrap();
        let bytes = crate::formats::three_da::write(&file).unwrap();
        let (back, _) = crate::load_bytes(&bytes, None, &Default::default()).unwrap();
        let (pa, pb) = (
            s.evaluate(None, crate::anim::Time::Frame(0.0)),
            back.evaluate(Some(0), crate::anim::Time::Frame(0.0)),
        );
        let m = back.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
        let mut theirs = pa.world_positions(&s, 0);
        let mut ours = pb.world_positions(&back, m);
        let key = |p: &DVec3| (p.x * 1e6).round() as i64 * 1_000_000 + (p.y * 1e6).round() as i64;
        theirs.sort_by_key(key);
        ours.sort_by_key(key);
        // The bone moved up by 1 since binding: two vertices follow it, the unweighted one
        // stays with the mesh.
        assert_eq!(theirs.iter().filter(|p| (p.z - 6.0).abs() < 1e-9).count(), 2);
        for (a, b) in theirs.iter().zip(&ours) {
            assert!(a.abs_diff_eq(*b, 1e-5), "{a:?} vs {b:?}");
        }
        let be = file
            .entities
            .iter()
            .position(|e| crate::formats::three_da::layout::name_str(&e.name) == "b0");
        let tm = file.entities[be.unwrap()].bone_init_tm;
        assert_eq!(&tm[12..16], &[0.0, 0.0, 1.0, 1.0], "translation in elements 12..15");
    }
}
