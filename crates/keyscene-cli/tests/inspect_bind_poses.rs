//! `keyscene inspect` lists a file's stored FBX bind poses (name, number of nodes, the nodes) in
//! its text and `--json` output, as ufbx reads them: for each corpus file with `BindPose`
//! objects (MANIFEST.md: maya_poses has two skin clusters with a bind pose each; the Blender
//! sausage and Maya transformed-skin files one), the expected names, counts and node names are
//! ufbx's `poses` with `is_bind_pose` (the `ufbx` crate, loaded in this test).
//!
//! The corpus is `KEYSCENE_CORPUS`, else `../shared/corpus` beside the workspace; without it
//! every trial is reported ignored, never passed.

use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

mod common;
use common::corpus;

/// Corpus files (under `fbx/`) that store bind poses.
const FILES: [&str; 4] = [
    "ufbx/maya_poses_7700_ascii.fbx",
    "ufbx/blender_279_sausage_7400_binary.fbx",
    "ufbx/maya_transformed_skin_6100_ascii.fbx",
    "ufbx/maya_transformed_skin_7700_binary.fbx",
];

/// ufbx's bind poses of `path`: (name, names of the nodes it poses, sorted). ufbx sorts a
/// pose's bone poses by node (`ufbxi_sort_bone_poses`) where keyscene keeps the file's order,
/// so the node names are compared as sets.
fn ufbx_bind_poses(path: &Path) -> Result<Vec<(String, Vec<String>)>, Failed> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let scene = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx cannot load {}: {e:?}", path.display()))?;
    Ok(scene
        .poses
        .iter()
        .filter(|p| p.is_bind_pose)
        .map(|p| {
            let mut nodes: Vec<String> =
                p.bone_poses.iter().map(|b| b.bone_node.element.name.to_string()).collect();
            nodes.sort();
            (p.element.name.to_string(), nodes)
        })
        .collect())
}

fn inspect(path: &Path, json: bool) -> Result<String, Failed> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_keyscene"));
    cmd.arg("inspect").arg(path);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().map_err(|e| format!("keyscene runs: {e}"))?;
    if !out.status.success() {
        return Err(format!("inspect failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn check(path: &Path) -> Result<(), Failed> {
    let expected = ufbx_bind_poses(path)?;
    if expected.is_empty() {
        return Err("ufbx finds no bind pose: the file list is wrong".into());
    }
    let report: Value = serde_json::from_str(&inspect(path, true)?)
        .map_err(|e| format!("inspect --json is not JSON: {e}"))?;
    let nodes = report["nodes"].as_array().ok_or("no nodes array")?;
    let ours = report["bind_poses"].as_array().ok_or("no bind_poses array")?;
    let ours: Vec<(String, usize, Vec<String>)> = ours
        .iter()
        .map(|b| {
            let mut names: Vec<String> = b["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| {
                    let i = i.as_u64().unwrap_or(u64::MAX) as usize;
                    nodes.get(i).and_then(|n| n["name"].as_str()).unwrap_or("?").to_string()
                })
                .collect();
            names.sort();
            let count = b["node_count"].as_u64().unwrap_or(u64::MAX) as usize;
            (b["name"].as_str().unwrap_or("?").to_string(), count, names)
        })
        .collect();
    let expected_json: Vec<(String, usize, Vec<String>)> =
        expected.iter().map(|(n, v)| (n.clone(), v.len(), v.clone())).collect();
    if ours != expected_json {
        return Err(format!("--json bind poses {ours:?}, ufbx {expected_json:?}").into());
    }
    let text = inspect(path, false)?;
    let section = text.split_once("\nbind poses:\n").ok_or("no `bind poses:` section")?.1;
    let lines: Vec<&str> = section.lines().collect();
    let wanted: Vec<String> =
        expected.iter().map(|(n, v)| format!("  \"{n}\": {} nodes", v.len())).collect();
    if lines != wanted {
        return Err(format!("text bind poses {lines:?}, ufbx {wanted:?}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let corpus = corpus();
    let trials = FILES
        .iter()
        .map(|rel| {
            let path = corpus.as_ref().map(|c| c.join("fbx").join(rel));
            let ignored = path.is_none();
            Trial::test(format!("bind_poses_as_ufbx::{rel}"), move || match &path {
                Some(p) => check(p),
                None => Ok(()),
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
