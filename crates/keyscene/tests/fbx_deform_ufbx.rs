//! Deformed meshes against the `ufbx` crate: for every corpus FBX file ufbx loads whose
//! meshes have a skin or blend-shape deformer, keyscene's deformed world-space vertex
//! positions (`Pose::world_positions`: blend shapes with in-betweens and per-vertex shape
//! weights, then skinning) equal ufbx's `evaluate_scene` with `evaluate_skinning`
//! (`skinned_position`, mapped by `geometry_to_world` when `skinned_is_local`), at the first
//! animation stack's start, middle and end (the stored pose when there is no stack).
//!
//! - Mesh nodes pair by name and vertex count (as in `fbx_ufbx_differential`); a ufbx mesh
//!   node with no keyscene partner fails, one whose name keyscene spells differently is
//!   skipped.
//! - Tolerance 1e-4 × the scene size (the largest ufbx vertex coordinate, at least 1).
//! - Geometry caches are not evaluated on either side (`evaluate_caches` off): they are
//!   another class of issue 12.

mod common;

use common::ufbx_corpus::to_dmat4;

use glam::DVec3;
use keyscene::anim::Time;
use libtest_mimic::Trial;

fn has_deformers(scene: &ufbx::Scene) -> bool {
    scene.meshes.iter().any(|m| !m.skin_deformers.is_empty() || !m.blend_deformers.is_empty())
}

/// ufbx's deformed world positions of every mesh node: (node name, positions per vertex).
fn ufbx_positions(scene: &ufbx::Scene) -> Vec<(String, Vec<DVec3>)> {
    let mut out = Vec::new();
    for node in scene.nodes.iter().filter(|n| !n.is_root) {
        let Some(mesh) = node.mesh.as_ref() else { continue };
        let g = to_dmat4(&node.geometry_to_world);
        let local = mesh.skinned_is_local;
        let values = &mesh.skinned_position.values;
        let positions = (0..mesh.num_vertices)
            .map(|i| {
                let v = values.get(i).map_or(DVec3::ZERO, |v| DVec3::new(v.x, v.y, v.z));
                if local {
                    g.transform_point3(v)
                } else {
                    v
                }
            })
            .collect();
        out.push((node.element.name.to_string(), positions));
    }
    out
}

fn check(path: &std::path::Path) -> Result<(), String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let opts = || ufbx::EvaluateOpts { evaluate_skinning: true, ..Default::default() };
    let stack = theirs.anim_stacks.iter().next();
    let times: Vec<Option<f64>> = match stack {
        Some(s) => {
            vec![Some(s.time_begin), Some(0.5 * (s.time_begin + s.time_end)), Some(s.time_end)]
        }
        None => vec![None],
    };
    for t in times {
        let evaluated = ufbx::evaluate_scene(&theirs, &theirs.anim, t.unwrap_or(0.0), opts())
            .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        let pose = match t {
            Some(t) => scene.evaluate(Some(0), Time::Seconds(t)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let want = ufbx_positions(&evaluated);
        let size = want
            .iter()
            .flat_map(|(_, p)| p.iter())
            .map(|p| p.abs().max_element())
            .filter(|v| v.is_finite())
            .fold(1.0f64, f64::max);
        for (name, want) in &want {
            let candidates: Vec<usize> = (0..scene.nodes.len())
                .filter(|&i| scene.nodes[i].name == *name && pose.mesh[i].is_some())
                .collect();
            if candidates.is_empty() {
                continue; // a name ufbx sanitised differently
            }
            let best = candidates
                .iter()
                .map(|&i| pose.world_positions(&scene, i))
                .filter(|got| got.len() == want.len())
                .map(|got| {
                    let err = got
                        .iter()
                        .zip(want)
                        // A coordinate NaN on both sides agrees (a broken file's NaN weight
                        // spoils the same vertices in both, `ufbx/fuzz/fuzz_0739.fbx`).
                        .map(|(a, b)| {
                            let d = (*a - *b).abs();
                            let both = a.is_nan_mask() & b.is_nan_mask();
                            d.to_array()
                                .iter()
                                .zip([both.x, both.y, both.z])
                                .map(|(&e, n)| if n { 0.0 } else { e })
                                .fold(
                                    0.0f64,
                                    |m, e| if e.is_nan() { f64::INFINITY } else { m.max(e) },
                                )
                        })
                        .fold(0.0f64, f64::max);
                    (err, got)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let when = t.map_or("the stored pose".to_string(), |t| format!("t = {t} s"));
            let Some((err, got)) = best else {
                return Err(format!(
                    "mesh node {name:?}: no keyscene mesh of {} vertices",
                    want.len()
                ));
            };
            if err > 1e-4 * size {
                let (k, _) = got
                    .iter()
                    .zip(want)
                    .enumerate()
                    .map(|(k, (a, b))| (k, (*a - *b).abs().max_element()))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .unwrap_or((0, 0.0));
                return Err(format!(
                    "mesh node {name:?} at {when}: deformed positions differ from ufbx by {err:e} \
                     (scene size {size}); vertex {k}: keyscene {} ufbx {}",
                    got[k], want[k]
                ));
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for file in common::ufbx_corpus::fbx_files(&corpus) {
        if !file.ufbx_loads {
            continue;
        }
        let deformed = std::fs::read(&file.path).ok().and_then(|b| {
            ufbx::load_memory(&b, ufbx::LoadOpts::default()).ok().map(|s| has_deformers(&s))
        });
        if deformed != Some(true) {
            continue;
        }
        let rel = file.rel.clone();
        let path = file.path.clone();
        trials.push(common::corpus_trial(format!("deformed::{rel}"), &corpus, move |_| {
            check(&path).map_err(|e| format!("{rel}: {e}").into())
        }));
    }
    if trials.is_empty() {
        trials.push(Trial::test("deformed (no corpus)", || Ok(())).with_ignored_flag(true));
    }
    common::run(trials)
}
