//! Every corpus FBX file through `keyscene::load` (parser, object graph and scene import).
//!
//! - Files MANIFEST.md does not mark as negative load into a scene that passes
//!   `Scene::validate`, within 5 s, with the same mesh count and control-point totals as the
//!   `ufbx` crate loads, the nodes in the same order with the same names, and every node's
//!   mesh vertex, corner and polygon counts, blend channel and skin joint counts, and every
//!   node's
//!   geometry-to-world matrix at the stored pose within 1e-4 (relative to the matrix's
//!   largest entry, at least 1) of ufbx's `geometry_to_world`.
//! - Negative files (fuzz, `_fail_`, unsupported versions, the mangled `transparentTest`,
//!   pre-6.1 legacy, cyclic) give a typed error or a scene with warnings — never a panic.

mod common;

use common::ufbx_corpus::NodesByName;
use std::path::Path;
use std::time::{Duration, Instant};

use glam::DMat4;
use keyscene::anim::Time;
use keyscene::scene::NodeKind;

fn rel_name(fbx_dir: &Path, path: &Path) -> String {
    path.strip_prefix(fbx_dir).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

fn check_file(fbx_dir: &Path, path: &Path) -> Result<(), libtest_mimic::Failed> {
    let rel = rel_name(fbx_dir, path);
    let start = Instant::now();
    let result = keyscene::load(path);
    let took = start.elapsed();
    if took > Duration::from_secs(5) {
        return Err(format!("{rel}: loading took {took:?}").into());
    }
    let (scene, _warnings) = match result {
        Ok(s) => s,
        Err(e) if common::is_negative_fbx(&rel) => {
            assert!(!e.to_string().is_empty());
            return Ok(());
        }
        Err(e) => return Err(format!("{rel}: {e}").into()),
    };
    scene.validate().map_err(|e| format!("{rel}: invalid scene: {e}"))?;
    if common::is_negative_fbx(&rel) {
        return Ok(());
    }
    if scene.meta.format != "fbx" {
        return Err(format!("{rel}: format {:?}", scene.meta.format).into());
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{rel}: {e}"))?;
    if let Ok(theirs) = ufbx::load_memory(&bytes, ufbx::LoadOpts::default()) {
        let their_mesh_nodes = theirs.nodes.iter().filter(|n| n.mesh.is_some()).count();
        let ours = scene.nodes.iter().filter(|n| n.kind == NodeKind::Mesh).count();
        if ours != their_mesh_nodes {
            return Err(format!("{rel}: {ours} mesh nodes, ufbx loads {their_mesh_nodes}").into());
        }
        let their_models: Vec<_> = theirs.nodes.iter().filter(|n| !n.is_root).collect();
        if scene.nodes.len() != their_models.len() {
            return Err(format!(
                "{rel}: {} nodes, ufbx loads {}",
                scene.nodes.len(),
                their_models.len()
            )
            .into());
        }
        let pose = scene.evaluate(None, Time::Frame(0.0));
        // ufbx orders nodes by hierarchy, keyscene by file: pair them by name (the best of
        // several equally named nodes); names ufbx sanitised differently are skipped.
        let by_name = NodesByName::new(&scene, str::to_string);
        let ranks = NodesByName::ranks(their_models.iter().map(|t| &*t.element.name));
        for (theirs, rank) in their_models.iter().zip(ranks) {
            let their_name: &str = &theirs.element.name;
            let m = &theirs.geometry_to_world;
            let want = DMat4::from_cols_array(&[
                m.m00, m.m10, m.m20, 0.0, m.m01, m.m11, m.m21, 0.0, m.m02, m.m12, m.m22, 0.0,
                m.m03, m.m13, m.m23, 1.0,
            ]);
            let scale = want.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
            let best = by_name
                .pair(their_name, rank, 1e-4, |i| {
                    let got = pose.mesh_to_world(&scene, i);
                    (got - want).to_cols_array().iter().fold(0.0f64, |a, v| a.max(v.abs())) / scale
                })
                .map(|(e, i)| (e, pose.mesh_to_world(&scene, i)));
            if let (Some(theirs_mesh), Some(ours)) = (
                theirs.mesh.as_ref(),
                by_name.named(their_name).first().and_then(|&i| scene.nodes[i].mesh),
            ) {
                let ours = &scene.meshes[ours];
                let counts =
                    (ours.positions.len(), ours.corner_vertices.len(), ours.polygon_count());
                let want =
                    (theirs_mesh.num_vertices, theirs_mesh.num_indices, theirs_mesh.num_faces);
                let unique = by_name.named(their_name).len() == 1;
                if counts != want && unique {
                    return Err(format!("{rel}: mesh of {their_name:?} has (vertices, corners, polygons) {counts:?}, ufbx {want:?}").into());
                }
                let their_channels: usize =
                    theirs_mesh.blend_deformers.iter().map(|b| b.channels.len()).sum();
                let their_joints: usize =
                    theirs_mesh.skin_deformers.iter().map(|d| d.clusters.len()).next().unwrap_or(0);
                let our_joints = ours.skin.map_or(0, |k| scene.skins[k].joints.len());
                if unique
                    && (ours.morph_targets.len(), our_joints) != (their_channels, their_joints)
                {
                    return Err(format!(
                        "{rel}: mesh of {their_name:?} has {} blend channels and {our_joints} skin joints, ufbx {their_channels} and {their_joints}",
                        ours.morph_targets.len()
                    )
                    .into());
                }
            }
            if let Some((err, got)) = best {
                if err.is_nan() || err > 1e-4 {
                    return Err(format!("{rel}: node {their_name:?} geometry-to-world differs from ufbx by {err:e}\nours {got}\nufbx {want}").into());
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let fbx_dir = corpus.as_ref().map(|c| c.join("fbx"));
    let files = fbx_dir.as_ref().map(|d| common::files_with_ext(d, &["fbx"])).unwrap_or_default();
    for path in files {
        let dir = fbx_dir.clone().unwrap();
        let name = format!("load::{}", rel_name(&dir, &path));
        trials.push(common::corpus_trial(name, &corpus, move |_| check_file(&dir, &path)));
    }
    common::run(trials)
}
