//! FBX 6.1 twins (issue 12 §3, "FBX 6.1 transform properties in both encodings"): a scene
//! exported as FBX 6.1 (`Properties60`) and as FBX 7.x (`Properties70`) by the same tool gives
//! the same world geometry. ufbx's corpus holds such pairs: the same name with `_6100_` and
//! `_7400_`/`_7500_`/`_7700_`, the same encoding (`ascii`/`binary`). The pairs come from the
//! folder (every `fbx/ufbx/*_6100_*.fbx` with a 7.x twin; the lowest 7.x version when there
//! are several), never from a hand-kept list.
//!
//! Per pair, at 0 s of the first animation (the stored pose when there is none; NaN
//! coordinates of broken files match NaN): every mesh node whose name is
//! unique in both files shows the same number of vertices at the same world positions
//! (`Pose::world_positions`: pivots, offsets, pre/post rotation, inherit type, geometric
//! transform, rotation order and skin all applied), within 1e-4 × max(1, scene size), the
//! scene size being the largest world coordinate of the 7.x file. The 7.x file is the
//! reference: its `Properties70` transforms are what the other differential tests check
//! against ufbx.

mod common;

use std::path::{Path, PathBuf};

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

/// The 6.1 files of `dir` with their 7.x twin.
fn pairs(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for f in common::files_with_ext(dir, &["fbx"]) {
        let Some(name) = f.file_name().and_then(|n| n.to_str()) else { continue };
        let Some((base, enc)) = name.split_once("_6100_") else { continue };
        let twin = ["7400", "7500", "7700"]
            .iter()
            .map(|v| f.with_file_name(format!("{base}_{v}_{enc}")))
            .find(|p| p.is_file());
        if let Some(twin) = twin {
            out.push((f, twin));
        }
    }
    out
}

/// World positions of every mesh node with a name unique among the scene's nodes.
fn mesh_worlds(path: &Path) -> Result<Vec<(String, Vec<DVec3>)>, Failed> {
    let (scene, _): (Scene, _) =
        keyscene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The first animation at 0 s: what both exports show (the values stored beside an
    // animation are the authoring tool's current frame, which the two exports may differ on).
    let anim = (!scene.animations.is_empty()).then_some(0);
    let pose = scene.evaluate(anim, Time::Seconds(0.0));
    let unique = |n: &str| scene.nodes.iter().filter(|m| m.name == n).count() == 1;
    Ok((0..scene.nodes.len())
        .filter(|&i| pose.mesh[i].is_some() && unique(&scene.nodes[i].name))
        .map(|i| (scene.nodes[i].name.clone(), pose.world_positions(&scene, i)))
        .collect())
}

fn check(old: &Path, new: &Path) -> Result<(), Failed> {
    let (a, b) = (mesh_worlds(old)?, mesh_worlds(new)?);
    let size = b.iter().flat_map(|(_, p)| p).map(|p| p.abs().max_element()).fold(1.0, f64::max);
    let tol = 1e-4 * size;
    let mut compared = 0;
    for (name, want) in &b {
        let Some((_, got)) = a.iter().find(|(n, _)| n == name) else {
            return Err(
                format!("mesh node {name:?} of the 7.x file is missing in the 6.1 file").into()
            );
        };
        if got.len() != want.len() {
            return Err(format!(
                "mesh node {name:?}: {} vertices in the 6.1 file, {} in the 7.x file",
                got.len(),
                want.len()
            )
            .into());
        }
        for (v, (g, w)) in got.iter().zip(want).enumerate() {
            let err = (*g - *w).abs().max_element();
            if !(err <= tol || g.is_nan() && w.is_nan()) {
                return Err(format!(
                    "mesh node {name:?} vertex {v}: 6.1 world {g}, 7.x world {w} (off by {err}, tolerance {tol})"
                )
                .into());
            }
        }
        compared += 1;
    }
    if b.is_empty() {
        return Ok(()); // no mesh node to compare (cameras, lights, curves only)
    }
    if compared == 0 {
        return Err("no mesh node compared".into());
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    if let Some(dir) = &corpus {
        for (old, new) in pairs(&dir.join("fbx/ufbx")) {
            let name = format!(
                "twins/{} = {}",
                old.file_name().unwrap_or_default().to_string_lossy(),
                new.file_name().unwrap_or_default().to_string_lossy()
            );
            trials.push(common::corpus_trial(name, &corpus, move |_| check(&old, &new)));
        }
        if trials.is_empty() {
            trials.push(Trial::test("twins", || Err("no 6.1/7.x twins in the corpus".into())));
        }
    } else {
        trials.push(common::corpus_trial("twins", &corpus, |_| Ok(())));
    }
    common::run(trials);
}
