//! Every 3DS corpus file written as OBJ (`formats::obj::write`).
//!
//! - `as_stored/<file>`: without a pose every mesh node becomes one `o` block with all its
//!   stored vertices and polygons, every face index is in range and every number is finite.
//! - `posed/<file>`: posed at the reference frame ⌊N/3⌋, the vertices lib3ds reports
//!   (`corpus/3ds/reference/*.lib3ds.json`, vertices 0, n/2, n−1 of each object node) are where
//!   the OBJ puts them, within `1e-4 × max(1, diagonal of the union of that frame's mesh
//!   bounding boxes)`, the tolerance of issue #2.

mod common;

use common::{find_node, vec3};

use std::path::Path;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::obj;
use libtest_mimic::Failed;
use serde_json::Value;

/// The OBJ's `o` blocks in order: (name, vertices); checks every line on the way.
fn parse(text: &str) -> Result<Vec<(String, Vec<DVec3>)>, Failed> {
    let mut blocks: Vec<(String, Vec<DVec3>)> = Vec::new();
    let (mut v_total, mut vt_total, mut vn_total) = (0usize, 0usize, 0usize);
    for line in text.lines() {
        let mut words = line.split(' ');
        let key = words.next().unwrap_or("");
        let nums = |words: std::str::Split<'_, char>| -> Result<Vec<f64>, Failed> {
            words
                .map(|w| match w.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(x),
                    _ => Err(format!("bad number in {line:?}").into()),
                })
                .collect()
        };
        match key {
            "o" => blocks.push((line[2..].to_owned(), Vec::new())),
            "v" => {
                let p = nums(words)?;
                let b = blocks.last_mut().ok_or("v before o")?;
                b.1.push(DVec3::new(p[0], p[1], p[2]));
                v_total += 1;
            }
            "vt" => {
                nums(words)?;
                vt_total += 1;
            }
            "vn" => {
                let n = nums(words)?;
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                if len != 0.0 && (len - 1.0).abs() > 1e-5 {
                    return Err(format!("normal not unit length: {line:?}").into());
                }
                vn_total += 1;
            }
            "f" => {
                for corner in words {
                    let ix: Vec<&str> = corner.split('/').collect();
                    let check = |s: &str, max: usize| -> Result<(), Failed> {
                        if s.is_empty() {
                            return Ok(());
                        }
                        match s.parse::<usize>() {
                            Ok(i) if i >= 1 && i <= max => Ok(()),
                            _ => Err(format!("index {s} out of 1..={max} in {line:?}").into()),
                        }
                    };
                    check(ix[0], v_total)?;
                    check(ix.get(1).copied().unwrap_or(""), vt_total)?;
                    check(ix.get(2).copied().unwrap_or(""), vn_total)?;
                }
            }
            "#" | "mtllib" | "usemtl" | "" => {}
            _ => return Err(format!("unexpected line {line:?}").into()),
        }
    }
    Ok(blocks)
}

fn as_stored(file: &Path) -> Result<(), Failed> {
    let (scene, _) = keyscene::load(file).map_err(|e| e.to_string())?;
    let text = obj::write(&scene, None, "x.mtl")?;
    let blocks = parse(&text.obj)?;
    let mesh_nodes: Vec<usize> =
        (0..scene.nodes.len()).filter(|&i| scene.nodes[i].mesh.is_some()).collect();
    if blocks.len() != mesh_nodes.len() {
        return Err(format!("{} o blocks for {} mesh nodes", blocks.len(), mesh_nodes.len()).into());
    }
    for ((name, vs), &id) in blocks.iter().zip(&mesh_nodes) {
        let mesh = &scene.meshes[scene.nodes[id].mesh.unwrap()];
        if vs.len() != mesh.positions.len() {
            return Err(
                format!("{name}: {} v lines, mesh has {}", vs.len(), mesh.positions.len()).into()
            );
        }
    }
    let faces = text.obj.lines().filter(|l| l.starts_with("f ")).count();
    let expected: usize = mesh_nodes
        .iter()
        .map(|&id| scene.meshes[scene.nodes[id].mesh.unwrap()].polygon_count())
        .sum();
    if faces != expected {
        return Err(format!("{faces} f lines, the meshes have {expected} polygons").into());
    }
    Ok(())
}

fn posed(corpus: &Path, reference: &Path) -> Result<(), Failed> {
    let refj: Value = serde_json::from_slice(&std::fs::read(reference)?)?;
    let file = corpus.join("3ds").join(refj["file"].as_str().unwrap());
    let (scene, _) = keyscene::load(&file).map_err(|e| e.to_string())?;
    let samples = refj["samples"].as_array().unwrap();
    let Some(sample) = samples.get(2) else { return Ok(()) };
    let frame = sample["frame"].as_f64().unwrap();
    let anim = (!scene.animations.is_empty()).then_some(0);
    let pose = scene.evaluate(anim, Time::Frame(frame));
    let blocks = parse(&obj::write(&scene, Some(&pose), "x.mtl")?.obj)?;
    // The k-th block is the k-th node showing a mesh at this pose.
    let shown: Vec<usize> = (0..scene.nodes.len()).filter(|&i| pose.mesh[i].is_some()).collect();
    let ref_meshes: Vec<&Value> = sample["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.get("world_centroid").is_some())
        .collect();
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for r in &ref_meshes {
        lo = lo.min(vec3(&r["world_bbox_min"]));
        hi = hi.max(vec3(&r["world_bbox_max"]));
    }
    let tol = 1e-4 * (hi - lo).length().max(1.0);
    for r in ref_meshes {
        let node = find_node(&scene, r).ok_or(format!("no node for {}", r["name"]))?;
        let block = shown.iter().position(|&i| i == node).ok_or("mesh node not written")?;
        let vs = &blocks[block].1;
        for s in r["world_sample_vertices"].as_array().unwrap() {
            let i = s["index"].as_u64().unwrap() as usize;
            let got = *vs.get(i).ok_or(format!("{}: no vertex {i}", r["name"]))?;
            let d = (got - vec3(&s["position"])).length();
            if d > tol {
                return Err(format!(
                    "{} at frame {frame}: vertex {i} off by {d} (tolerance {tol})",
                    r["name"]
                )
                .into());
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = match &corpus {
        Some(c) => common::files_with_ext(&c.join("3ds"), &["3ds", "prj"])
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n != "wrong.3ds"))
            .map(|p| p.strip_prefix(c.join("3ds")).unwrap().to_path_buf())
            .collect(),
        // One placeholder trial each, reported as ignored.
        None => vec![Path::new("corpus").to_path_buf()],
    };
    for rel in files {
        let name = rel.display().to_string();
        let r = rel.clone();
        trials.push(common::corpus_trial(format!("as_stored/{name}"), &corpus, move |c| {
            as_stored(&c.join("3ds").join(&r))
        }));
        let reference = format!("{}.lib3ds.json", name.replace('/', "_"));
        trials.push(common::corpus_trial(format!("posed/{name}"), &corpus, move |c| {
            posed(c, &c.join("3ds/reference").join(&reference))
        }));
    }
    common::run(trials)
}
