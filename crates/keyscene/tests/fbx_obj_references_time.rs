//! The `time` rows of `fbx/references.tsv` that `fbx_obj_references.rs` reports as ignored for
//! want of an option, with the option applied — otherwise the same mechanism (evaluate the
//! row's stack at `time_s`, `formats::obj::write`, `obj_compare.py` at the row's settings):
//!
//! - `no_extrapolation`: the stack made with [`Animation::without_extrapolation`];
//! - `transform_skin` ("skin follows its node"): the skinned meshes' vertices replaced by
//!   [`Pose::world_positions_following_node`] with the mesh node's matrix from the file's
//!   `BindPose`.
//!
//! [`Animation::without_extrapolation`]: keyscene::anim::Animation::without_extrapolation
//! [`Pose::world_positions_following_node`]: keyscene::anim::Pose::world_positions_following_node

mod common;

use std::path::Path;

use common::refs::{oracles, reference_rows, RefRow};
use keyscene::anim::Time;
use libtest_mimic::{Failed, Trial};

fn check(corpus: &Path, row: &RefRow, k: usize) -> Result<(), Failed> {
    let fbx_dir = corpus.join("fbx");
    let bytes = std::fs::read(fbx_dir.join(&row.fbx)).map_err(|e| e.to_string())?;
    let doc =
        keyscene::formats::fbx::parse(&bytes, &Default::default()).map_err(|e| e.to_string())?;
    let graph =
        keyscene::formats::fbx::objects::ObjectGraph::new(&doc).map_err(|e| e.to_string())?;
    let (mut scene, _, ids) = keyscene::formats::fbx::import::import(&graph, &Default::default());
    let t: f64 = row.time_s.parse().map_err(|_| format!("bad time {:?}", row.time_s))?;
    let stack = &row.stack;
    let anim = if stack.is_empty() {
        Some(0)
    } else {
        scene.animations.iter().position(|a| a.name.contains(stack.as_str()))
    };
    let anim = anim.filter(|&a| a < scene.animations.len()).ok_or("no such stack")?;
    if row.option_list().contains(&"no_extrapolation") {
        scene.animations[anim] = scene.animations[anim].without_extrapolation();
    }
    let pose = scene.evaluate(Some(anim), Time::Seconds(t));
    let mut text =
        keyscene::formats::obj::write(&scene, Some(&pose), "x.mtl").map_err(|e| e.to_string())?;
    if row.transform_skin {
        // One `o` per node showing a mesh, in node order, its vertices in stored order.
        let shown: Vec<usize> =
            (0..scene.nodes.len()).filter(|&i| pose.mesh[i].is_some()).collect();
        let mut out = String::new();
        let mut group: Option<usize> = None;
        let mut positions: Vec<glam::DVec3> = Vec::new();
        let mut k = 0;
        for line in text.obj.lines() {
            if line.starts_with("o ") {
                let g = group.map_or(0, |g| g + 1);
                group = Some(g);
                let node = *shown.get(g).ok_or("more objects than mesh nodes")?;
                let bind = ids
                    .bind_poses
                    .iter()
                    .find_map(|b| b.nodes.iter().find(|n| n.0 == node).map(|n| n.1));
                positions = match bind {
                    Some(b) => pose.world_positions_following_node(&scene, node, b),
                    None => Vec::new(),
                };
                k = 0;
            } else if line.starts_with("v ") {
                if let Some(p) = positions.get(k) {
                    out.push_str(&format!("v {} {} {}\n", p.x, p.y, p.z));
                    k += 1;
                    continue;
                }
                k += 1;
            }
            out.push_str(line);
            out.push('\n');
        }
        text.obj = out;
    }
    let dir = std::env::temp_dir().join(format!("keyscene-noex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let cand = dir.join(format!("row{k}.obj"));
    std::fs::write(&cand, text.obj).map_err(|e| e.to_string())?;
    let mut cmd = row.obj_compare(&oracles(corpus), &fbx_dir.join(&row.obj), &cand, true);
    let out = cmd.output().map_err(|e| format!("python3 obj_compare.py: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into())
    }
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let rows = corpus.as_ref().map(|c| reference_rows(&c.join("fbx"))).unwrap_or_default();
    match corpus {
        Some(corpus) if !rows.is_empty() => {
            for (k, row) in rows.into_iter().enumerate() {
                let noex = row.option_list().contains(&"no_extrapolation");
                if row.mode != "time" || !(noex || row.transform_skin) {
                    continue;
                }
                let option = if noex { "no_extrapolation" } else { "transform_skin" };
                let name = format!("time {} -> {} t={} {option}", row.fbx, row.obj, row.time_s);
                let corpus = corpus.clone();
                trials.push(Trial::test(name, move || check(&corpus, &row, k)));
            }
        }
        _ => trials.push(Trial::test("corpus", || Ok(())).with_ignored_flag(true)),
    }
    common::run(trials);
}
