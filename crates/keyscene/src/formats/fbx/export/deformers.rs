//! The FBX writer's deformers: skins (`Deformer` Skin + `SubDeformer` Cluster per joint, one
//! `Pose` BindPose) and blend shapes (`Deformer` BlendShape → `SubDeformer`
//! BlendShapeChannel → `Geometry` Shape), with `DeformPercent` curves for animated weights.
//! What is written and why is in docs/fbx.md ("Writing", "Skins", "Blend shapes").

use std::collections::HashMap;

use glam::{DMat3, DMat4, DVec3};

use super::animation::{max_scale, resample_scalar, Take, NO_FORM};
use super::{keys, name_class, p, props70, Builder, Resampled};
use crate::anim::curve::morph_target_of;
use crate::anim::{resample, ChannelTarget};
use crate::formats::fbx::write::{Record, Value, WriteError};
use crate::quoting::quoted;
use crate::scene::{MorphTarget, Scene, Skin};

/// One written `Geometry` that a skin or blend shapes deform: the first mesh node using it,
/// its scene mesh, its id and the geometry transform baked into its vertices.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deformed {
    pub node: usize,
    pub mesh: usize,
    pub geometry: i64,
    pub bake: DMat4,
}

/// Per vertex, `(joint, weight)` with each joint once (repeated influences summed, as the
/// evaluator sums them) and the weights divided by their total (`Weights normalised`); a
/// vertex whose total is not positive gets none (it follows its mesh node, as in
/// `Pose::world_positions`). Returned per joint: (vertex indexes ascending, weights).
fn cluster_weights(skin: &Skin) -> Vec<(Vec<i32>, Vec<f64>)> {
    let mut out = vec![(Vec::new(), Vec::new()); skin.joints.len()];
    for (v, list) in skin.influences.iter().enumerate() {
        let mut merged: Vec<(u32, f64)> = Vec::new();
        for &(j, w) in list {
            if (j as usize) >= skin.joints.len() || !w.is_finite() {
                continue;
            }
            match merged.iter_mut().find(|m| m.0 == j) {
                Some(m) => m.1 += w as f64,
                None => merged.push((j, w as f64)),
            }
        }
        let total: f64 = merged.iter().map(|m| m.1).sum();
        if total.is_nan() || total <= 0.0 || i32::try_from(v).is_err() {
            continue;
        }
        // Weights that already sum to 1 within `f32` precision stay as the scene holds them;
        // others are divided by their total and rounded to `f32`, what a reader of the written
        // file keeps, so that a file written from the written file holds the same weights
        // (docs/fbx.md, "FBX → FBX → FBX").
        let unit = (total - 1.0).abs() <= 1e-6;
        for (j, w) in merged {
            if w != 0.0 {
                out[j as usize].0.push(v as i32);
                out[j as usize].1.push(if unit { w } else { (w / total) as f32 as f64 });
            }
        }
    }
    out
}

/// A finite matrix whose bottom row is `0 0 0 1` (within 1e-9 of its largest entry).
fn affine(m: DMat4) -> bool {
    let scale = m.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let row = m.row(3);
    m.is_finite() && row.abs_diff_eq(glam::DVec4::W, 1e-9 * scale)
}

fn matrix(name: &str, m: DMat4) -> Record {
    Record::with(name, vec![Value::F64Array(m.to_cols_array().to_vec())])
}

/// A usable bind matrix: finite and invertible (a `TransformLink` computed from anything else
/// is replaced by the bone's rest world: it only records the bind, deformation reads
/// `Transform`).
fn invertible(m: DMat4) -> bool {
    let d = m.determinant();
    m.is_finite() && d.is_finite() && d.abs() > 1e-300
}

impl Builder {
    /// The skin pass: per deformed geometry with a skin, a `Deformer` Skin (`SkinningType`
    /// Linear, DualQuaternion or Blend with `BlendWeights`, as the reader and ufbx read it)
    /// and per joint a `SubDeformer` Cluster — `Indexes`/`Weights` ([`cluster_weights`];
    /// joints without weights are kept with empty arrays), `Transform` the joint's inverse
    /// bind matrix as stored (ufbx `mesh_node_to_bone`: mesh node frame → bone; the baked
    /// geometry transform is already in the vertices, so it is the source's inverse bind
    /// times nothing else) and `TransformLink` the bone's world at bind, `M · Transform⁻¹`
    /// with `M` the mesh node's world at bind (the scene's bind pose, else the skin's
    /// [`Skin::mesh_bind`](crate::scene::Skin::mesh_bind), else its rest world), so
    /// that `Transform = TransformLink⁻¹ · M` holds exactly as the SDK reads it. Then one
    /// `Pose` BindPose over every skinned mesh node, bone and their ancestors.
    ///
    /// A skin with a joint whose inverse bind matrix is not a finite affine matrix (bottom row
    /// `0 0 0 1`) is not written: FBX reads only the 3×4 part of `Transform` (ufbx
    /// `ufbxi_read_transform_matrix`), so the file could not deform as the source does. Its
    /// meshes keep their rest shape; returns how many written geometries that left unskinned.
    pub(super) fn skins(&mut self, scene: &Scene, model_ids: &[i64], worlds: &[DMat4]) -> usize {
        let mut pose: HashMap<usize, DMat4> = HashMap::new();
        let mut unskinned = 0;
        let bind_of = |node: usize| {
            scene.bind_poses.iter().find_map(|p| p.matrix(node)).filter(|m| invertible(*m))
        };
        for d in self.deformed.clone() {
            let Some(skin) = scene.meshes[d.mesh].skin.and_then(|s| scene.skins.get(s)) else {
                continue;
            };
            if !skin.joints.iter().all(|j| affine(j.inverse_bind)) {
                unskinned += 1;
                continue;
            }
            let stored = skin.mesh_bind.filter(|m| invertible(*m));
            let mesh_bind = bind_of(d.node).or(stored).unwrap_or(worlds[d.node]);
            pose.entry(d.node).or_insert(mesh_bind);
            let id = self.id();
            let n = scene.meshes[d.mesh].positions.len();
            let mut rec = Record::with(
                "Deformer",
                vec![Value::I64(id), name_class("", "Deformer"), Value::str("Skin")],
            )
            .child(Record::one("Version", 101))
            .child(Record::one("Link_DeformAcuracy", 50.0));
            let dq = &skin.dq_weights;
            if dq.is_empty() || dq.iter().all(|&w| w == 0.0) {
                rec.push(Record::one("SkinningType", "Linear"));
            } else if dq.iter().all(|&w| w == 1.0) {
                rec.push(Record::one("SkinningType", "DualQuaternion"));
            } else {
                let k = dq.len().min(n).min(i32::MAX as usize);
                rec.push(Record::one("SkinningType", "Blend"));
                rec.push(Record::with("Indexes", vec![Value::I32Array((0..k as i32).collect())]));
                rec.push(Record::with(
                    "BlendWeights",
                    vec![Value::F64Array(dq[..k].iter().map(|&w| w as f64).collect())],
                ));
            }
            self.objects.push(rec);
            self.count("Deformer");
            self.oo(id, d.geometry);
            for (j, (indexes, weights)) in cluster_weights(skin).into_iter().enumerate() {
                let joint = &skin.joints[j];
                if joint.node >= scene.nodes.len() {
                    continue;
                }
                let link = Some(joint.inverse_bind)
                    .filter(|m| invertible(*m))
                    .map(|m| mesh_bind * m.inverse())
                    .filter(|m| m.is_finite())
                    .unwrap_or(worlds[joint.node]);
                pose.entry(joint.node).or_insert(link);
                let cl = self.id();
                let name = scene.nodes[joint.node].name.as_str();
                self.objects.push(
                    Record::with(
                        "Deformer",
                        vec![
                            Value::I64(cl),
                            name_class(name, "SubDeformer"),
                            Value::str("Cluster"),
                        ],
                    )
                    .child(Record::one("Version", 100))
                    .child(
                        Record::new("UserData")
                            .child(Record::with("UserData", vec![Value::str(""), Value::str("")])),
                    )
                    .child(Record::with("Indexes", vec![Value::I32Array(indexes)]))
                    .child(Record::with("Weights", vec![Value::F64Array(weights)]))
                    .child(matrix("Transform", joint.inverse_bind))
                    .child(matrix("TransformLink", link)),
                );
                self.count("Deformer");
                self.oo(cl, id);
                self.oo(model_ids[joint.node], cl);
            }
        }
        if !pose.is_empty() {
            self.bind_pose(scene, model_ids, worlds, pose);
        }
        unskinned
    }

    /// The `Pose` BindPose: the nodes of `pose` (with their bind matrices) and every ancestor
    /// of them (its rest world), in node order.
    fn bind_pose(
        &mut self,
        scene: &Scene,
        model_ids: &[i64],
        worlds: &[DMat4],
        mut pose: HashMap<usize, DMat4>,
    ) {
        let listed: Vec<usize> = pose.keys().copied().collect();
        for i in listed {
            let mut at = scene.nodes[i].parent;
            // Bounded by the node count: `Scene::validate` rejected cycles.
            let mut steps = 0;
            while let Some(p) = at.filter(|_| steps < scene.nodes.len()) {
                pose.entry(p).or_insert(worlds[p]);
                at = scene.nodes[p].parent;
                steps += 1;
            }
        }
        let mut nodes: Vec<(usize, DMat4)> = pose.into_iter().collect();
        nodes.sort_by_key(|n| n.0);
        let id = self.id();
        let mut rec = Record::with(
            "Pose",
            vec![Value::I64(id), name_class("BindPose", "Pose"), Value::str("BindPose")],
        )
        .child(Record::one("Type", "BindPose"))
        .child(Record::one("Version", 100))
        .child(Record::one("NbPoseNodes", nodes.len() as i32));
        for (i, m) in nodes {
            rec.push(
                Record::new("PoseNode")
                    .child(Record::one("Node", model_ids[i]))
                    .child(matrix("Matrix", m)),
            );
        }
        self.objects.push(rec);
        self.count("Pose");
    }

    /// The blend shape pass: per deformed geometry with morph targets, a `Deformer`
    /// BlendShape and per target a `SubDeformer` BlendShapeChannel (`DeformPercent` the
    /// rest weight × 100, `FullWeights` per shape: in-betweens at their weight × 100, the
    /// target at 100) with its `Geometry` Shapes ([`shape`]). Channel names are the targets'
    /// names made unique and non-empty within the mesh (`Shape`, `name.1`…).
    pub(super) fn blend_shapes(&mut self, scene: &Scene) {
        for d in self.deformed.clone() {
            let mesh = &scene.meshes[d.mesh];
            if mesh.morph_targets.is_empty() {
                continue;
            }
            let id = self.id();
            self.objects.push(
                Record::with(
                    "Deformer",
                    vec![
                        Value::I64(id),
                        name_class(&mesh.name, "Deformer"),
                        Value::str("BlendShape"),
                    ],
                )
                .child(Record::one("Version", 100))
                .child(props70(vec![])),
            );
            self.count("Deformer");
            self.oo(id, d.geometry);
            let mut names: Vec<String> = Vec::new();
            for (k, t) in mesh.morph_targets.iter().enumerate() {
                let base = if t.name.is_empty() { "Shape".to_string() } else { t.name.clone() };
                let mut name = base.clone();
                let mut n = 0;
                while names.contains(&name) {
                    n += 1;
                    name = format!("{base}.{n}");
                }
                names.push(name.clone());
                let ch = self.id();
                let mut full: Vec<f64> = t.inbetweens.iter().map(|s| s.0 * 100.0).collect();
                full.push(100.0);
                let percent = t.default_weight * 100.0;
                self.objects.push(
                    Record::with(
                        "Deformer",
                        vec![
                            Value::I64(ch),
                            name_class(&name, "SubDeformer"),
                            Value::str("BlendShapeChannel"),
                        ],
                    )
                    .child(Record::one("Version", 100))
                    .child(Record::one("DeformPercent", percent))
                    .child(Record::with("FullWeights", vec![Value::F64Array(full)]))
                    .child(props70(vec![p(
                        "DeformPercent",
                        "Number",
                        "",
                        "A",
                        vec![Value::F64(percent)],
                    )])),
                );
                self.count("Deformer");
                self.oo(ch, id);
                self.channels.push((d.mesh, k, ch, percent));
                for s in 0..=t.inbetweens.len() {
                    let shape_of = (s < t.inbetweens.len()).then_some(s);
                    let sid = self.id();
                    let sname = match shape_of {
                        Some(s) => format!("{name}_{}", t.inbetweens[s].0 * 100.0),
                        None => name.clone(),
                    };
                    self.objects.push(shape(sid, &sname, t, shape_of, d.bake));
                    self.count("Geometry");
                    self.oo(sid, ch);
                }
            }
        }
    }

    /// `DeformPercent` curves of animation `ai`: each `DeformPercent#k` channel of a mesh
    /// node (percent) on every BlendShapeChannel written for that mesh's target `k`, key for
    /// key where the keys have an FBX form, else resampled adaptively within 1e-4 × the scene
    /// size of vertex motion ([`resample_scalar`](super::animation::resample_scalar);
    /// reported). Of
    /// several nodes driving one mesh's target the first is written (the evaluator keeps one
    /// weight per mesh too).
    pub(super) fn deformer_curves(&mut self, take: &Take<'_>) -> Result<(), WriteError> {
        let Take { scene, ai, layer, fps, range, opts } = *take;
        let anim = &scene.animations[ai];
        let mut done: Vec<(usize, usize)> = Vec::new();
        for ch in &anim.channels {
            let ChannelTarget::Property { name, track } = &ch.target else { continue };
            let (Some(k), Some(m)) = (morph_target_of(name), scene.nodes[ch.node].mesh) else {
                continue;
            };
            if track.keys.is_empty() || done.contains(&(m, k)) {
                continue;
            }
            done.push((m, k));
            let targets: Vec<(i64, f64)> =
                self.channels.iter().filter(|c| c.0 == m && c.1 == k).map(|c| (c.2, c.3)).collect();
            if targets.is_empty() {
                continue;
            }
            let curve = match keys::scalar_curve(track, 1.0, fps, range.0, range.1) {
                Some(c) => {
                    self.report.exact_curves += targets.len();
                    c
                }
                None => {
                    // A percent of weight moves the vertices by a hundredth of the target's
                    // largest offset, in the node's world scale.
                    let world = scene.evaluate(Some(ai), crate::anim::Time::Frame(range.0)).world;
                    let tol = resample::TOLERANCE * resample::scene_size(scene, &world);
                    let reach = scene.meshes[m].morph_targets.get(k).map_or(0.0, |t| {
                        t.position_deltas.iter().map(|d| d.length()).fold(0.0, f64::max)
                    });
                    let scale = reach / 100.0 * world.get(ch.node).map_or(1.0, max_scale);
                    let key_frames: Vec<f64> = track.keys.iter().map(|k| k.frame).collect();
                    self.report.resampled.push(Resampled {
                        animation: ai,
                        node: ch.node,
                        part: "DeformPercent",
                        reason: NO_FORM,
                    });
                    resample_scalar(
                        |f| track.sample(f).unwrap_or(0.0),
                        &key_frames,
                        (range, fps),
                        (tol, scale),
                        opts.max_keys,
                        || format!("animation {}: the {name} track", quoted(&anim.name)),
                    )?
                }
            };
            for (channel, rest) in targets {
                let comps = [("d|DeformPercent", DVec3::splat(rest))];
                self.curve_node(
                    "DeformPercent",
                    layer,
                    (channel, "DeformPercent"),
                    &comps,
                    &[Some(curve.clone())],
                );
            }
        }
        Ok(())
    }
}

/// A `Geometry` Shape of target `t` (`shape`: in-between `k`, or `None` for the target
/// itself): the vertices it moves (`Indexes`, sorted, each once), their offsets (`Vertices`,
/// per-vertex shape weights multiplied in, the geometry transform's linear part applied as to
/// the base vertices) and, for the target when the source has them, the normal offsets
/// (`Normals`, through the normal matrix, not renormalised: they are differences).
fn shape(id: i64, name: &str, t: &MorphTarget, shape: Option<usize>, bake: DMat4) -> Record {
    let linear = DMat3::from_mat4(bake);
    let nm = linear.inverse().transpose();
    let deltas = t.weighted_deltas(shape);
    let normals = t.normal_deltas.as_ref().filter(|_| shape.is_none());
    let (mut idx, mut verts, mut norms) = (Vec::new(), Vec::new(), Vec::new());
    for (v, d) in deltas.iter().enumerate() {
        if *d == DVec3::ZERO || i32::try_from(v).is_err() {
            continue;
        }
        idx.push(v as i32);
        let q = linear * *d;
        verts.extend([q.x, q.y, q.z]);
        if let Some(n) = normals {
            let w = t.vertex_weights.get(v).copied().unwrap_or(1.0);
            let m = nm * (n.get(v).copied().unwrap_or_default().as_dvec3() * w);
            norms.extend([m.x, m.y, m.z]);
        }
    }
    let mut g = Record::with(
        "Geometry",
        vec![Value::I64(id), name_class(name, "Geometry"), Value::str("Shape")],
    )
    .child(Record::one("Version", 100))
    .child(Record::with("Indexes", vec![Value::I32Array(idx)]))
    .child(Record::with("Vertices", vec![Value::F64Array(verts)]));
    if normals.is_some() {
        g.push(Record::with("Normals", vec![Value::F64Array(norms)]));
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SkinJoint;

    #[test]
    fn cluster_weights_sum_repeats_normalise_and_drop_weightless_vertices() {
        // Hand-computed: vertex 0 has joint 0 twice (0.25 + 0.25) and joint 1 at 1.5, total 2
        // → 0.25 and 0.75; vertex 1 weighs nothing (left to its node); vertex 2 only joint 1
        // at 0.5 → 1. Joint 2 has no weights and is kept with empty arrays.
        let joint = SkinJoint { node: 0, inverse_bind: DMat4::IDENTITY };
        let skin = Skin {
            joints: vec![joint.clone(), joint.clone(), joint],
            influences: vec![vec![(0, 0.25), (1, 1.5), (0, 0.25)], vec![(0, 0.0)], vec![(1, 0.5)]],
            dq_weights: Vec::new(),
            mesh_bind: None,
        };
        let w = cluster_weights(&skin);
        assert_eq!(w[0], (vec![0], vec![0.25]));
        assert_eq!(w[1], (vec![0, 2], vec![0.75, 1.0]));
        assert_eq!(w[2], (vec![], vec![]));
    }
}
