//! Every 3DS corpus file evaluated by keyscene against lib3ds 1.3's answers
//! (`corpus/3ds/reference/<folder>_<file>.lib3ds.json`, made by `oracles/lib3ds_dump.c`).
//!
//! For each reference frame and each reference object node with a mesh, the node's world-space
//! vertex bounding box, centroid and the three sample vertices must agree within
//! `1e-4 × max(1, diagonal of the union of the sample's mesh bounding boxes)`. One trial per
//! reference file.

mod common;

use common::{find_node, vec3};

use std::path::Path;

use glam::DVec3;
use keyscene::anim::Time;
use libtest_mimic::Failed;
use serde_json::Value;

fn check_file(corpus: &Path, reference: &Path) -> Result<(), Failed> {
    let refj: Value = serde_json::from_slice(&std::fs::read(reference)?)?;
    let file = corpus.join("3ds").join(refj["file"].as_str().unwrap());
    let (scene, _warnings) =
        keyscene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mesh_count = refj["mesh_count"].as_u64().unwrap() as usize;
    if scene.meshes.len() != mesh_count {
        return Err(format!("{} meshes, lib3ds has {mesh_count}", scene.meshes.len()).into());
    }
    let mut failures = Vec::new();
    let mut compared = 0usize;
    let mut worst = 0.0f64;
    for sample in refj["samples"].as_array().unwrap() {
        let frame = sample["frame"].as_f64().unwrap();
        let pose = scene.evaluate(Some(0), Time::Frame(frame));
        let mesh_nodes: Vec<&Value> = sample["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n.get("world_centroid").is_some())
            .collect();
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for n in &mesh_nodes {
            lo = lo.min(vec3(&n["world_bbox_min"]));
            hi = hi.max(vec3(&n["world_bbox_max"]));
        }
        let tol = 1e-4 * (hi - lo).length().max(1.0);
        for r in mesh_nodes {
            let name = r["name"].as_str().unwrap();
            let Some(i) = find_node(&scene, r) else {
                failures.push(format!("frame {frame}: no node for {name:?} (id {})", r["id"]));
                continue;
            };
            let world = pose.world_positions(&scene, i);
            if world.len() as u64 != r["vertex_count"].as_u64().unwrap() {
                failures.push(format!(
                    "frame {frame} {name}: {} vertices, lib3ds {}",
                    world.len(),
                    r["vertex_count"]
                ));
                continue;
            }
            let (mut bmin, mut bmax, mut sum) =
                (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY), DVec3::ZERO);
            for p in &world {
                bmin = bmin.min(*p);
                bmax = bmax.max(*p);
                sum += *p;
            }
            let centroid = sum / world.len() as f64;
            let mut check = |what: String, ours: DVec3, theirs: DVec3| {
                compared += 1;
                let d = (ours - theirs).abs().max_element();
                worst = worst.max(d / tol);
                if d.is_nan() || d > tol {
                    failures.push(format!(
                        "frame {frame} {name}: {what} {ours:?} vs lib3ds {theirs:?} (off by {d:.3e}, tolerance {tol:.1e})"
                    ));
                }
            };
            check("bbox min".into(), bmin, vec3(&r["world_bbox_min"]));
            check("bbox max".into(), bmax, vec3(&r["world_bbox_max"]));
            check("centroid".into(), centroid, vec3(&r["world_centroid"]));
            for s in r["world_sample_vertices"].as_array().unwrap() {
                let k = s["index"].as_u64().unwrap() as usize;
                check(format!("vertex {k}"), world[k], vec3(&s["position"]));
            }
        }
    }
    if failures.is_empty() {
        let name = reference.file_name().unwrap().to_string_lossy();
        eprintln!("{name}: {compared} comparisons, worst difference {worst:.2e} of the tolerance");
        Ok(())
    } else {
        let n = failures.len();
        failures.truncate(12);
        Err(format!("{n} of {compared} comparisons differ:\n{}", failures.join("\n")).into())
    }
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let refs = match &corpus {
        Some(dir) => common::files_with_ext(&dir.join("3ds/reference"), &["json"]),
        None => Vec::new(),
    };
    if refs.is_empty() {
        trials.push(common::corpus_trial("lib3ds_references", &corpus, |_| {
            Err("no reference JSON found in the corpus".into())
        }));
    }
    for r in refs {
        let name =
            r.file_name().unwrap().to_string_lossy().trim_end_matches(".lib3ds.json").to_string();
        trials.push(common::corpus_trial(name, &corpus, move |dir| check_file(dir, &r)));
    }
    common::run(trials);
}
