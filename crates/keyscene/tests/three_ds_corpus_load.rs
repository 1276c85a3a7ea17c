//! Every 3DS/PRJ file of the corpus loads (mesh and node counts as the corpus scan and lib3ds
//! count them); `online3dviewer/wrong.3ds`, a text file, fails with a clear "not a 3DS file".

mod common;

use std::path::Path;

use keyscene::scene::NodeKind;
use libtest_mimic::{Failed, Trial};
use serde_json::Value;

fn check_file(corpus: &Path, rel: &str) -> Result<(), Failed> {
    let path = corpus.join("3ds").join(rel);
    let scan: Value = serde_json::from_slice(&std::fs::read(corpus.join("3ds/SCAN.json"))?)?;
    let entry = &scan[rel];
    let (scene, _warnings) = keyscene::load(&path).map_err(|e| format!("{rel}: {e}"))?;
    scene.validate().map_err(|e| format!("{rel}: {e}"))?;
    assert_eq!(scene.meta.format, "3ds");
    let meshes =
        entry["objects"].as_array().map_or(0, |o| o.iter().filter(|o| o["kind"] == "mesh").count());
    if scene.meshes.len() != meshes {
        return Err(format!("{} meshes, the scan counts {meshes}", scene.meshes.len()).into());
    }
    let kf_nodes = entry["nodes"].as_array().map_or(0, |n| n.len());
    if kf_nodes > 0 && scene.nodes.len() != kf_nodes {
        return Err(format!(
            "{} nodes, the scan counts {kf_nodes} keyframer nodes",
            scene.nodes.len()
        )
        .into());
    }
    if kf_nodes == 0 {
        let mesh_nodes = scene.nodes.iter().filter(|n| n.kind == NodeKind::Mesh).count();
        if mesh_nodes != meshes {
            return Err(format!("no keyframer: {mesh_nodes} mesh nodes for {meshes} meshes").into());
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = match &corpus {
        Some(dir) => common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"]),
        None => Vec::new(),
    };
    for f in files {
        let rel = f
            .strip_prefix(corpus.as_ref().unwrap().join("3ds"))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "online3dviewer/wrong.3ds" {
            continue;
        }
        trials.push(common::corpus_trial(format!("loads {rel}"), &corpus, move |dir| {
            check_file(dir, &rel)
        }));
    }
    trials.push(common::corpus_trial("wrong_3ds_is_not_a_3ds_file", &corpus, |dir| {
        let err = match keyscene::load(&dir.join("3ds/online3dviewer/wrong.3ds")) {
            Ok(_) => return Err("wrong.3ds loaded".into()),
            Err(e) => e.to_string(),
        };
        if !err.contains("not a 3DS file") || !err.contains("invalid") {
            return Err(format!("unclear error: {err}").into());
        }
        Ok(())
    }));
    trials.push(Trial::test("corpus_has_3ds_files", move || match &corpus {
        Some(dir) if common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"]).len() < 25 => {
            Err("fewer than 25 3DS/PRJ files in the corpus".into())
        }
        _ => Ok(()),
    }));
    common::run(trials);
}
