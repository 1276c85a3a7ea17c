//! Skin and morph-target data per glTF vertex: the scene's [`Skin`] influences as
//! `JOINTS_n`/`WEIGHTS_n` sets and its [`MorphTarget`]s (with in-between shapes) as glTF
//! targets. Knows the scene model and [`Primitive`]s, not glTF's JSON.
//!
//! Rules (glTF 2.0 §3.7.3 "Skins", §3.7.2.2 "Morph Targets"):
//! - **Influences.** Per source vertex, influences on the same joint are summed, those with a
//!   non-positive or non-finite weight, a joint past the skin's list or a joint naming no node
//!   of the scene's `node_count` (an FBX cluster bound to the scene root) dropped, as the
//!   evaluator drops them, the strongest
//!   `sets · 4` kept (ties: lower joint index first) and renormalised to sum 1 (in f32: the
//!   largest weight takes `1 − Σ others`, so the validator's sum check holds exactly). A vertex
//!   left without influences is bound to an extra joint, index `joints.len()`, that the writer
//!   makes the mesh node itself with an identity inverse bind matrix: glTF skinning ignores the
//!   mesh node's transform, and this puts the vertex where keyscene's evaluator does
//!   ([`Pose::mesh_to_world`](crate::anim::Pose::mesh_to_world)).
//! - **Morph targets.** A plain target is one glTF target. A target with in-between shapes
//!   becomes one glTF target per shape (in-betweens first, the full shape last) whose weights
//!   are [`inbetween_weights`] of the source weight: exact at every written weight (sample),
//!   linear in between, where the source is piecewise linear in the channel weight too.

use glam::{DMat3, DMat4};

use super::geometry::Primitive;
use crate::anim::inbetween_weights;
use crate::scene::geometry::normal_matrix;
use crate::scene::{Mesh, MorphTarget, Skin};

/// `JOINTS_n`/`WEIGHTS_n` of one primitive: `joints[set][vertex]`, `weights[set][vertex]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Influences {
    /// Joint indices into the skin's joint list (plus [`Influences::self_joint`] when used).
    pub joints: Vec<Vec<[u16; 4]>>,
    /// Weights, summing to 1 per vertex over all sets.
    pub weights: Vec<Vec<[f32; 4]>>,
    /// `true` when some vertex is bound to the extra mesh-node joint `skin.joints.len()`.
    pub self_joint: bool,
    /// How many vertices had more influences than the sets hold (their weakest were dropped).
    pub truncated: usize,
}

/// The influences of `prim`'s vertices (by [`Primitive::source_vertices`]) in `sets` sets of
/// four (at least 1), for a scene of `node_count` nodes.
pub fn influences(skin: &Skin, prim: &Primitive, sets: usize, node_count: usize) -> Influences {
    let sets = sets.max(1);
    let slots = sets * 4;
    let self_joint = skin.joints.len().min(usize::from(u16::MAX)) as u16;
    let mut out = Influences {
        joints: vec![Vec::with_capacity(prim.source_vertices.len()); sets],
        weights: vec![Vec::with_capacity(prim.source_vertices.len()); sets],
        ..Influences::default()
    };
    for &v in &prim.source_vertices {
        let mut list: Vec<(u16, f64)> = Vec::new();
        for &(j, w) in skin.influences.get(v as usize).map(Vec::as_slice).unwrap_or(&[]) {
            let w = f64::from(w);
            let node = skin.joints.get(j as usize).map(|j| j.node);
            if !(w > 0.0 && w.is_finite() && node.is_some_and(|n| n < node_count)) || j >= 0xFFFF {
                continue;
            }
            match list.iter_mut().find(|(k, _)| *k == j as u16) {
                Some(e) => e.1 += w,
                None => list.push((j as u16, w)),
            }
        }
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if list.len() > slots {
            out.truncated += 1;
            list.truncate(slots);
        }
        if list.is_empty() {
            out.self_joint = true;
            list.push((self_joint, 1.0));
        }
        let total: f64 = list.iter().map(|e| e.1).sum();
        let mut w: Vec<f32> = list.iter().map(|e| (e.1 / total) as f32).collect();
        let rest: f32 = w[1..].iter().sum();
        w[0] = 1.0 - rest;
        for s in 0..sets {
            let mut j4 = [0u16; 4];
            let mut w4 = [0f32; 4];
            for k in 0..4 {
                if let Some(&(j, _)) = list.get(s * 4 + k) {
                    j4[k] = j;
                    w4[k] = w[s * 4 + k];
                }
            }
            out.joints[s].push(j4);
            out.weights[s].push(w4);
        }
    }
    out
}

/// Where a glTF morph target comes from: scene target `target`, and its in-between shape
/// `shape` (`None`: the full shape, reached at weight 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetSource {
    /// Index into [`Mesh::morph_targets`].
    pub target: usize,
    /// Index into [`MorphTarget::inbetweens`], `None` for the full shape.
    pub shape: Option<usize>,
}

/// The glTF targets of `mesh` in order (see the module docs).
pub fn target_layout(mesh: &Mesh) -> Vec<TargetSource> {
    let mut out = Vec::new();
    for (target, t) in mesh.morph_targets.iter().enumerate() {
        out.extend((0..t.inbetweens.len()).map(|s| TargetSource { target, shape: Some(s) }));
        out.push(TargetSource { target, shape: None });
    }
    out
}

/// The glTF name of a target: the source name, with `@<weight>` for an in-between shape.
pub fn target_name(mesh: &Mesh, s: TargetSource) -> String {
    let t = &mesh.morph_targets[s.target];
    match s.shape {
        None => t.name.clone(),
        Some(k) => format!("{}@{}", t.name, t.inbetweens[k].0),
    }
}

/// The glTF target weights for the scene's per-target weights `weights` (0–1, one per
/// [`Mesh::morph_targets`]; missing ones count as 0), in [`target_layout`] order. Non-finite
/// weights become 0 (glTF JSON cannot hold them).
pub fn gltf_weights(mesh: &Mesh, weights: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for (k, t) in mesh.morph_targets.iter().enumerate() {
        let w = weights.get(k).copied().filter(|w| w.is_finite()).unwrap_or(0.0);
        if t.inbetweens.is_empty() {
            out.push(w);
            continue;
        }
        let mut levels: Vec<f64> = t.inbetweens.iter().map(|s| s.0).collect();
        levels.push(1.0);
        out.extend(inbetween_weights(w, &levels));
    }
    for w in &mut out {
        if !w.is_finite() {
            *w = 0.0;
        }
    }
    out
}

/// One glTF target's data for one primitive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetData {
    /// Position offsets per glTF vertex, through the bake matrix's linear part.
    pub positions: Vec<[f32; 3]>,
    /// Normal offsets per glTF vertex, when the source target has them.
    pub normals: Option<Vec<[f32; 3]>>,
}

/// The data of target `s` of `mesh` for `prim`, its offsets mapped by `bake` (the matrix the
/// primitive's positions were baked with: offsets by its 3×3 part, normal offsets by its
/// normal matrix). Non-finite numbers become 0.
pub fn target_data(mesh: &Mesh, s: TargetSource, prim: &Primitive, bake: DMat4) -> TargetData {
    let t: &MorphTarget = &mesh.morph_targets[s.target];
    // Per-vertex shape weights are baked into the offsets: exact, since glTF blends offsets
    // linearly by the target weight.
    let deltas = t.weighted_deltas(s.shape);
    let linear = DMat3::from_mat4(bake);
    let fin = |v: [f32; 3]| v.map(|x| if x.is_finite() { x } else { 0.0 });
    let positions = prim
        .source_vertices
        .iter()
        .map(|&v| {
            fin(deltas.get(v as usize).map_or([0.0; 3], |d| (linear * *d).as_vec3().to_array()))
        })
        .collect();
    let normals = match (s.shape, t.weighted_normal_deltas()) {
        (None, Some(nd)) => {
            let nm = normal_matrix(bake).as_mat3();
            Some(
                prim.source_vertices
                    .iter()
                    .map(|&v| fin(nd.get(v as usize).map_or([0.0; 3], |d| (nm * *d).to_array())))
                    .collect(),
            )
        }
        _ => None,
    };
    TargetData { positions, normals }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn prim(n: u32) -> Primitive {
        Primitive { source_vertices: (0..n).collect(), ..Primitive::default() }
    }

    #[test]
    fn strongest_four_influences_are_kept_and_renormalised() {
        let skin = Skin {
            joints: vec![crate::scene::SkinJoint { node: 0, inverse_bind: DMat4::IDENTITY }; 6],
            // Six influences 0.3, 0.1, 0.2, 0.05, 0.25, 0.1 (joint 5 twice: 0.05 + 0.05).
            influences: vec![vec![
                (0, 0.3),
                (1, 0.1),
                (2, 0.2),
                (3, 0.05),
                (4, 0.25),
                (5, 0.05),
                (5, 0.05),
            ]],
            dq_weights: Vec::new(),
            mesh_bind: None,
        };
        let inf = influences(&skin, &prim(1), 1, 1);
        // Kept: 0 (0.3), 4 (0.25), 2 (0.2), 1 (0.1; ties with 5 go to the lower index).
        assert_eq!(inf.joints[0][0], [0, 4, 2, 1]);
        let w = inf.weights[0][0];
        let total = 0.3 + 0.25 + 0.2 + 0.1;
        for (got, want) in w.iter().zip([0.3, 0.25, 0.2, 0.1]) {
            assert!((f64::from(*got) - want / total).abs() < 1e-6, "{w:?}");
        }
        assert_eq!(w.iter().sum::<f32>(), 1.0);
        assert_eq!(inf.truncated, 1);
        // Two sets hold all six.
        let inf = influences(&skin, &prim(1), 2, 1);
        assert_eq!(inf.truncated, 0);
        // Second set: 5 (0.05 + 0.05), then 3 (0.05); total 1 now.
        assert_eq!(inf.joints[1][0], [5, 3, 0, 0]);
        assert!((inf.weights[1][0][0] - 0.1).abs() < 1e-6);
        assert!((inf.weights[1][0][1] - 0.05).abs() < 1e-6);
    }

    #[test]
    fn a_vertex_without_influences_binds_to_the_mesh_node() {
        let skin = Skin {
            joints: vec![crate::scene::SkinJoint { node: 0, inverse_bind: DMat4::IDENTITY }; 2],
            influences: vec![vec![(1, 1.0)], vec![(7, 1.0), (0, -1.0)]],
            dq_weights: Vec::new(),
            mesh_bind: None,
        };
        let inf = influences(&skin, &prim(2), 1, 1);
        assert!(inf.self_joint);
        assert_eq!(inf.joints[0], vec![[1, 0, 0, 0], [2, 0, 0, 0]]);
        assert_eq!(inf.weights[0][1], [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn inbetween_shapes_become_targets_weighted_piecewise_linearly() {
        let mesh = Mesh {
            morph_targets: vec![
                MorphTarget {
                    name: "smile".into(),
                    position_deltas: vec![DVec3::X],
                    inbetweens: vec![(0.5, vec![DVec3::Y])],
                    ..MorphTarget::default()
                },
                MorphTarget {
                    name: "blink".into(),
                    position_deltas: vec![DVec3::Z],
                    ..MorphTarget::default()
                },
            ],
            ..Mesh::default()
        };
        let layout = target_layout(&mesh);
        assert_eq!(layout.len(), 3);
        assert_eq!(target_name(&mesh, layout[0]), "smile@0.5");
        assert_eq!(target_name(&mesh, layout[1]), "smile");
        // Weight 0.75 lies halfway between the in-between (0.5) and the full shape (1).
        assert_eq!(gltf_weights(&mesh, &[0.75, 0.4]), vec![0.5, 0.5, 0.4]);
        // Weight 0.25: half of the in-between shape, none of the full one.
        assert_eq!(gltf_weights(&mesh, &[0.25, 0.0]), vec![0.5, 0.0, 0.0]);
        let bake = DMat4::from_scale(DVec3::splat(2.0));
        let d = target_data(&mesh, layout[0], &prim(1), bake);
        assert_eq!(d.positions, vec![[0.0, 2.0, 0.0]]);
    }
}
