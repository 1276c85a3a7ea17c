//! Deformed normals against the `ufbx` crate (issue 12 §3, "Deformed normals"): posed output
//! deforms a skinned mesh's stored normals with the same skinning matrices as its positions.
//!
//! For every corpus FBX file ufbx loads, every mesh node with a skin, stored normals and no
//! blend shapes (ufbx offsets positions only) whose name is unique, at the middle of every
//! animation stack (the stored pose when there is none): ufbx's skinning matrix of each
//! corner's vertex (`ufbx_get_skin_vertex_matrix`, fallback `geometry_to_world`), made a
//! normal matrix (`ufbx_matrix_for_normals`), carries ufbx's stored `vertex_normal`; the
//! normalised result equals keyscene's `Pose::world_corner_normals` at that corner within
//! 1e-4 (unit vectors), and so do the normals `render` and `view` shade with
//! (`render::world_corner_normals`, the library call behind them). Corners are sampled, at
//! most 256 per mesh. ufbx's own
//! `evaluate_skinning` regenerates normals from the skinned positions instead
//! (`generated_normals`), so the oracle is its skinning matrices, not `skinned_normal`.

mod common;

use common::ufbx_corpus::to_dmat4;

use glam::DVec3;
use keyscene::anim::Time;
use libtest_mimic::Failed;

/// Meshes compared in a file (0: the file has no skinned mesh with stored normals).
fn check(path: &std::path::Path) -> Result<usize, Failed> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let mut jobs: Vec<(Option<usize>, &ufbx::Anim, f64)> = Vec::new();
    if theirs.anim_stacks.is_empty() {
        jobs.push((None, &theirs.anim, 0.0));
    }
    for (k, stack) in theirs.anim_stacks.iter().enumerate() {
        let name: &str = &stack.element.name;
        let ours = common::ufbx_corpus::matching_animation(&scene, k, name);
        jobs.push((ours, &stack.anim, 0.5 * (stack.time_begin + stack.time_end)));
    }
    let mut compared = 0;
    for (ours, anim, t) in jobs {
        let s = ufbx::evaluate_scene(&theirs, anim, t, ufbx::EvaluateOpts::default())
            .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        let pose = scene.evaluate(ours, Time::Seconds(t));
        for node in s.nodes.iter() {
            let Some(mesh) = node.mesh.as_ref() else { continue };
            let Some(skin) = mesh.skin_deformers.first() else { continue };
            let normals = &mesh.vertex_normal;
            if !mesh.blend_deformers.is_empty() || !normals.exists {
                continue;
            }
            let name: &str = &node.element.name;
            let mut same = scene.nodes.iter().enumerate().filter(|(_, n)| n.name == name);
            let (Some((i, _)), None) = (same.next(), same.next()) else { continue };
            let Some(got) = pose.world_corner_normals(&scene, i) else {
                return Err(format!("mesh {name:?}: keyscene has no normals, ufbx has").into());
            };
            if got.len() != mesh.num_indices {
                return Err(format!(
                    "mesh {name:?}: {} corners in keyscene, {} in ufbx",
                    got.len(),
                    mesh.num_indices
                )
                .into());
            }
            let positions = pose.world_positions(&scene, i);
            let ours_mesh = pose.mesh[i].map(|m| &scene.meshes[m]).ok_or("keyscene: no mesh")?;
            let shaded =
                keyscene::render::world_corner_normals(&scene, ours_mesh, &positions, &pose, i);
            let step = mesh.num_indices.div_ceil(256).max(1);
            for c in (0..mesh.num_indices).step_by(step) {
                let v = mesh.vertex_indices[c] as usize;
                let (Some(&ix), Some(&g)) = (normals.indices.get(c), got.get(c)) else { continue };
                let Some(n) = normals.values.get(ix as usize) else { continue };
                let m = ufbx::get_skin_vertex_matrix(skin, v, &node.geometry_to_world);
                let nm = ufbx::matrix_for_normals(&m);
                let want = to_dmat4(&nm).transform_vector3(DVec3::new(n.x, n.y, n.z));
                let want = want.normalize_or_zero();
                if want == DVec3::ZERO {
                    continue;
                }
                let drawn = shaded.get(c).map(|n| n.as_dvec3()).unwrap_or_default();
                for (what, g) in [("Pose::world_corner_normals", g), ("render", drawn)] {
                    let err = (g - want).abs().max_element();
                    if err.is_nan() || err > 1e-4 {
                        return Err(format!(
                            "mesh {name:?} at {t} s: corner {c} (vertex {v}) normal ({what}) \
                             keyscene {g}, ufbx {want}"
                        )
                        .into());
                    }
                }
            }
            compared += 1;
        }
    }
    Ok(compared)
}

/// Whether ufbx finds a mesh with a skin, stored normals and no blend shapes in `path`.
fn has_skinned_normals(path: &std::path::Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else { return false };
    let Ok(s) = ufbx::load_memory(&bytes, ufbx::LoadOpts::default()) else { return false };
    s.meshes.iter().any(|m| {
        !m.skin_deformers.is_empty() && m.blend_deformers.is_empty() && m.vertex_normal.exists
    })
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for f in common::ufbx_corpus::fbx_files(&corpus) {
        if !f.ufbx_loads || common::is_negative_fbx(&f.rel) || !has_skinned_normals(&f.path) {
            continue;
        }
        let path = f.path.clone();
        trials.push(common::corpus_trial(
            format!("deformed_normals::{}", f.rel),
            &corpus,
            move |_| match check(&path)? {
                0 => Err("no mesh compared (no skinned mesh with a unique name)".into()),
                _ => Ok(()),
            },
        ));
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("deformed_normals", &corpus, |_| {
            Err("no corpus file with a skinned mesh that stores normals".into())
        }));
    }
    common::run(trials);
}
