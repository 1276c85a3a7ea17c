//! Geometry caches against the `ufbx` crate: for every corpus FBX file with a
//! `VertexCacheDeformer` (`ufbx/maya_cache_sine_*` Maya `.xml` + `.mcx`, `ufbx/max_cache_box_*`
//! `.pc2`, `ufbx/marvelous_quad_*` Marvelous Designer `.mcx`, `ufbx/maya_axes_anim_*`), every
//! mesh node's world-space vertex positions from [`Pose::world_positions`] agree with ufbx's
//! (`load_file` with `load_external_files`, `evaluate_scene` with `evaluate_caches` and
//! `evaluate_skinning`: `skinned_position` mapped by `geometry_to_world`) at times between
//! cached frames and outside the cached range. Tolerance 1e-4 × scene size.
//!
//! `ufbx/synthetic_missing_cache_fail_*` (its `.xml` does not exist) loads with a warning that
//! names the file, and its meshes keep their rest positions (ufbx fails the load unless told
//! to ignore missing files; keyscene warns, as for a missing texture).
//!
//! The glTF and 3DA writers leave caches out with a warning (docs/gltf.md and docs/3da.md,
//! "Geometry caches"): checked on `ufbx/max_cache_box_7500_binary.fbx`.

mod common;

use glam::DVec3;
use keyscene::anim::Time;

/// Times in seconds: between the 24, 30 and 10 fps frames of the corpus caches, before their
/// first frame and after their last.
const TIMES: [f64; 8] = [0.0, 0.0625, 0.37, 0.61, 0.9, 1.23, 1.51, 30.0];

fn compare(path: &std::path::Path) -> Result<(), libtest_mimic::Failed> {
    let bytes = std::fs::read(path)?;
    let mut opts = keyscene::ReadOptions::default();
    opts.base_dir = path.parent().map(|p| p.to_path_buf());
    let (scene, warnings) = keyscene::load_bytes(&bytes, Some(path), &opts)?;
    if scene.geometry_caches.is_empty() {
        return Err(format!("no geometry cache loaded; warnings: {warnings:?}").into());
    }
    let load = ufbx::LoadOpts { load_external_files: true, ..Default::default() };
    let theirs = ufbx::load_file(path.to_str().ok_or("path")?, load)
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let mut compared = 0;
    for &t in &TIMES {
        let eval = ufbx::EvaluateOpts {
            evaluate_skinning: true,
            evaluate_caches: true,
            load_external_files: true,
            ..Default::default()
        };
        let posed = ufbx::evaluate_scene(&theirs, &theirs.anim, t, eval)
            .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        let anim = (!scene.animations.is_empty()).then_some(0);
        let pose = scene.evaluate(anim, Time::Seconds(t));
        for node in posed.nodes.iter() {
            let Some(mesh) = node.mesh.as_ref() else { continue };
            let name = node.element.name.to_string();
            let Some(ours) = scene.nodes.iter().position(|n| n.name == name && n.mesh.is_some())
            else {
                return Err(format!("no keyscene mesh node {name:?}").into());
            };
            let g = &node.geometry_to_world;
            let want: Vec<DVec3> = (0..mesh.num_vertices)
                .map(|i| {
                    let v = mesh.skinned_position.values[i];
                    let p = DVec3::new(v.x, v.y, v.z);
                    if mesh.skinned_is_local {
                        DVec3::new(
                            g.m00 * p.x + g.m01 * p.y + g.m02 * p.z + g.m03,
                            g.m10 * p.x + g.m11 * p.y + g.m12 * p.z + g.m13,
                            g.m20 * p.x + g.m21 * p.y + g.m22 * p.z + g.m23,
                        )
                    } else {
                        p
                    }
                })
                .collect();
            let got = pose.world_positions(&scene, ours);
            if got.len() != want.len() {
                return Err(format!("{name}: {} vertices, ufbx {}", got.len(), want.len()).into());
            }
            let size = want.iter().map(|p| p.abs().max_element()).fold(1.0f64, f64::max);
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                if (*a - *b).abs().max_element() > 1e-4 * size {
                    return Err(format!("{name} vertex {i} at t={t}: {a} vs ufbx {b}").into());
                }
            }
            compared += 1;
        }
    }
    if compared == 0 {
        return Err("no mesh compared".into());
    }
    Ok(())
}

fn missing_cache_warns(path: &std::path::Path) -> Result<(), libtest_mimic::Failed> {
    let bytes = std::fs::read(path)?;
    let mut opts = keyscene::ReadOptions::default();
    opts.base_dir = path.parent().map(|p| p.to_path_buf());
    let (scene, warnings) = keyscene::load_bytes(&bytes, Some(path), &opts)?;
    if !warnings.iter().any(|w| w.message.contains("missing_cache.xml")) {
        return Err(format!("no warning names missing_cache.xml: {warnings:?}").into());
    }
    if !scene.geometry_caches.is_empty() || scene.meshes.is_empty() {
        return Err("the meshes must stay, without a cache".into());
    }
    let pose = scene.evaluate(Some(0).filter(|_| !scene.animations.is_empty()), Time::Seconds(0.5));
    for (id, node) in scene.nodes.iter().enumerate() {
        let Some(m) = node.mesh else { continue };
        let rest = pose.mesh_to_world(&scene, id);
        let want: Vec<DVec3> =
            scene.meshes[m].positions.iter().map(|&p| rest.transform_point3(p)).collect();
        if pose.world_positions(&scene, id) != want {
            return Err(format!("{}: moved without a cache", node.name).into());
        }
    }
    Ok(())
}

fn writers_warn(path: &std::path::Path) -> Result<(), libtest_mimic::Failed> {
    let bytes = std::fs::read(path)?;
    let mut opts = keyscene::ReadOptions::default();
    opts.base_dir = path.parent().map(|p| p.to_path_buf());
    let (scene, _) = keyscene::load_bytes(&bytes, Some(path), &opts)?;
    let gltf = keyscene::formats::gltf::write(&scene, &Default::default())?;
    if !gltf.warnings.iter().any(|w| w.message.contains("geometry cache not written")) {
        return Err(format!("glTF: no cache warning in {:?}", gltf.warnings).into());
    }
    let (_, _, report) = keyscene::formats::three_da::export(&scene, &Default::default())?;
    if !report.warnings.iter().any(|w| w.contains("geometry cache is not written")) {
        return Err(format!("3DA: no cache warning in {:?}", report.warnings).into());
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for file in common::ufbx_corpus::fbx_files(&corpus) {
        let stem = file.rel.as_str();
        let cached = ["ufbx/maya_cache_sine_", "ufbx/max_cache_box_", "ufbx/marvelous_quad_"]
            .iter()
            .any(|p| stem.starts_with(p))
            || stem.starts_with("ufbx/maya_axes_anim_");
        let path = file.path.clone();
        if stem == "ufbx/max_cache_box_7500_binary.fbx" {
            let path = path.clone();
            trials.push(common::corpus_trial(format!("writers {stem}"), &corpus, move |_| {
                writers_warn(&path)
            }));
        }
        if cached {
            trials.push(common::corpus_trial(format!("cache {stem}"), &corpus, move |_| {
                compare(&path)
            }));
        } else if stem.starts_with("ufbx/synthetic_missing_cache_fail") {
            trials.push(common::corpus_trial(format!("missing {stem}"), &corpus, move |_| {
                missing_cache_warns(&path)
            }));
        }
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("geometry caches", &corpus, |_| Ok(())));
    }
    common::run(trials);
}
