//! Proof in a real client (issue #5, §3 item 3): every corpus 3DS file with a lib3ds reference
//! is written as GLB and loaded by three.js's `GLTFLoader` in headless Chromium; an
//! `AnimationMixer` plays it to each reference frame (time = frame / 30 s) and the page reports
//! world-space positions as three computes them for rendering (`Mesh.getVertexPosition`, which
//! applies morph targets and skinning, then `matrixWorld`). Every mesh node's world bounding
//! box, centroid (over source vertices) and sample vertices must match lib3ds's within
//! 1e-4 × max(1, scene bbox diagonal at that frame), the tolerance of `gltf_roundtrip`.
//!
//! All files go through one browser session: `tools/threejs_check.mjs` (playwright-core driving
//! `tools/threejs_page.html`). A screenshot of each file at its first reference frame is saved
//! as `target/tmp/threejs/NAME.png` beside the GLB. Needs `node` on the PATH, the npm packages
//! `playwright-core` and `three` in `KEYSCENE_NODE_MODULES` (default
//! `/opt/keyscene-oracles/node/node_modules`) and Chromium at `KEYSCENE_CHROMIUM` (default
//! `/usr/bin/chromium`); without them every trial is reported ignored, saying why. `.ci/run`
//! installs them.
//!
//! glTF is Y-up; three's world positions are mapped back to 3DS's Z-up with
//! `(x, y, z) → (x, −z, y)` (docs/gltf.md, "Axis root node"). Nodes are matched by the source
//! name and instance (glTF node extras, docs/gltf.md, "Node extras"), the k-th three node of a
//! pair to the k-th reference node of that pair; vertices by source index (`_KEYSCENE_VERTEX`).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use glam::DVec3;
use keyscene::formats::gltf::{save, WriteOptions};
use libtest_mimic::{Failed, Trial};
use serde_json::{json, Value};

fn node_modules() -> PathBuf {
    std::env::var_os("KEYSCENE_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/keyscene-oracles/node/node_modules"))
}

fn chromium() -> PathBuf {
    std::env::var_os("KEYSCENE_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/threejs_check.mjs")
}

/// Why the browser check cannot run here, or `None` when it can.
fn client_missing() -> Option<String> {
    let modules = node_modules();
    for package in ["playwright-core/package.json", "three/build/three.module.js"] {
        if !modules.join(package).is_file() {
            return Some(format!(
                "{} not found in {} (set KEYSCENE_NODE_MODULES)",
                package.split('/').next().unwrap_or(package),
                modules.display()
            ));
        }
    }
    if !chromium().is_file() {
        return Some(format!("no Chromium at {} (set KEYSCENE_CHROMIUM)", chromium().display()));
    }
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        _ => Some("node not found".into()),
    }
}

/// One corpus file: its lib3ds reference and the GLB written for it.
struct Case {
    name: String,
    reference: Value,
    glb: PathBuf,
}

/// Writes the GLB of the file `reference` names into `dir` and builds the page's job entry.
fn prepare(corpus: &Path, reference: &Path, dir: &Path) -> Result<(Case, Value), String> {
    let text = std::fs::read_to_string(reference).map_err(|e| e.to_string())?;
    let refj: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let name = reference
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .trim_end_matches(".lib3ds.json")
        .to_string();
    let file = corpus.join("3ds").join(refj["file"].as_str().ok_or("reference without file")?);
    let (scene, _) = keyscene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let glb = dir.join(format!("{name}.glb"));
    save(&scene, &glb, &WriteOptions::default()).map_err(|e| e.to_string())?;
    let samples = refj["samples"].as_array().ok_or("reference without samples")?;
    let times: Vec<f64> =
        samples.iter().filter_map(|s| s["frame"].as_f64()).map(|f| f / 30.0).collect();
    let mut vertices: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for s in samples {
        for n in s["nodes"].as_array().into_iter().flatten() {
            let key = format!(
                "{}\u{0}{}",
                n["name"].as_str().unwrap_or(""),
                n["instance"].as_str().unwrap_or("")
            );
            let list = vertices.entry(key).or_default();
            for v in n["world_sample_vertices"].as_array().into_iter().flatten() {
                if let Some(i) = v["index"].as_u64() {
                    if !list.contains(&i) {
                        list.push(i);
                    }
                }
            }
        }
    }
    let job = json!({
        "name": name,
        "file": glb,
        "times": times,
        "vertices": vertices,
        "screenshot": dir.join(format!("{name}.png")),
    });
    Ok((Case { name, reference: refj, glb }, job))
}

/// Runs the browser once on every job; the answer per file name, or why it could not run.
fn run_browser(jobs: &[Value], dir: &Path) -> Result<HashMap<String, Value>, String> {
    let job_file = dir.join("job.json");
    std::fs::write(&job_file, json!({ "files": jobs }).to_string()).map_err(|e| e.to_string())?;
    let started = std::time::Instant::now();
    let out = Command::new("node")
        .arg(script())
        .arg(&job_file)
        .env("KEYSCENE_NODE_MODULES", node_modules())
        .env("KEYSCENE_CHROMIUM", chromium())
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    let answer: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        let stdout = String::from_utf8_lossy(&out.stdout);
        format!(
            "threejs_check.mjs printed no JSON ({e}): {}… {}",
            stdout.chars().take(500).collect::<String>(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if let Some(e) = answer["error"].as_str() {
        return Err(format!("threejs_check.mjs: {e}"));
    }
    eprintln!(
        "three.js {} in Chromium {}: {} files in {:.1} s; screenshots in {}",
        answer["three"].as_str().unwrap_or("?"),
        answer["chromium"].as_str().unwrap_or("?"),
        jobs.len(),
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    Ok(answer["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f["name"].as_str()?.to_string(), f.clone())))
        .collect())
}

fn vec3(v: &Value) -> Option<DVec3> {
    Some(DVec3::new(v[0].as_f64()?, v[1].as_f64()?, v[2].as_f64()?))
}

/// glTF (Y-up) world position → 3DS (Z-up).
fn to_z_up(v: DVec3) -> DVec3 {
    DVec3::new(v.x, -v.z, v.y)
}

/// Compares three's answer for one file with its lib3ds reference.
fn check(case: &Case, answer: &Value) -> Result<(), Failed> {
    if let Some(e) = answer["error"].as_str() {
        return Err(format!("three.js could not load {}: {e}", case.glb.display()).into());
    }
    let ref_samples = case.reference["samples"].as_array().ok_or("reference without samples")?;
    let got_samples = answer["samples"].as_array().ok_or("answer without samples")?;
    if ref_samples.len() != got_samples.len() {
        return Err(
            format!("{} samples asked, {} answered", ref_samples.len(), got_samples.len()).into()
        );
    }
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    for (sample, got) in ref_samples.iter().zip(got_samples) {
        let frame = sample["frame"].as_f64().ok_or("sample without frame")?;
        let nodes = sample["nodes"].as_array().ok_or("sample without nodes")?;
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for n in nodes {
            if let (Some(a), Some(b)) = (vec3(&n["world_bbox_min"]), vec3(&n["world_bbox_max"])) {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        let diag = if lo.x.is_finite() { (hi - lo).length() } else { 0.0 };
        let tol = 1e-4 * diag.max(1.0);
        let three_nodes = got["nodes"].as_array().ok_or("answer without nodes")?;
        let mut used = vec![false; three_nodes.len()];
        for n in nodes {
            let Some(bmin) = vec3(&n["world_bbox_min"]) else { continue };
            let bmax = vec3(&n["world_bbox_max"]).ok_or("bbox without max")?;
            let (name, instance) =
                (n["name"].as_str().unwrap_or(""), n["instance"].as_str().unwrap_or(""));
            let at = format!("frame {frame}: node {name:?}/{instance:?}");
            let Some(k) = (0..three_nodes.len()).find(|&k| {
                !used[k] && three_nodes[k]["name"] == name && three_nodes[k]["instance"] == instance
            }) else {
                failures.push(format!("{at}: not among three's mesh nodes"));
                continue;
            };
            used[k] = true;
            let t = &three_nodes[k];
            if t["vertex_count"] != n["vertex_count"] {
                failures.push(format!(
                    "{at}: {} source vertices in three, lib3ds has {}",
                    t["vertex_count"], n["vertex_count"]
                ));
            }
            // The Y-up box's corners map to the Z-up box's (the map permutes and negates axes).
            let (a, b) = (
                to_z_up(vec3(&t["world_bbox_min"]).ok_or("no bbox")?),
                to_z_up(vec3(&t["world_bbox_max"]).ok_or("no bbox")?),
            );
            let (gmin, gmax) = (a.min(b), a.max(b));
            let mut errs = vec![(
                "bbox".to_string(),
                (gmin - bmin).abs().max_element().max((gmax - bmax).abs().max_element()),
            )];
            if let (Some(c), Some(g)) = (vec3(&n["world_centroid"]), vec3(&t["world_centroid"])) {
                errs.push(("centroid".into(), (to_z_up(g) - c).length()));
            }
            let three_vertices: HashMap<u64, DVec3> = t["vertices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| Some((v[0].as_u64()?, to_z_up(vec3(&v[1])?))))
                .collect();
            for sv in n["world_sample_vertices"].as_array().into_iter().flatten() {
                let want = vec3(&sv["position"]).ok_or("sample vertex without position")?;
                let index = sv["index"].as_u64().ok_or("sample vertex without index")?;
                match three_vertices.get(&index) {
                    Some(got) => errs.push((format!("vertex {index}"), (*got - want).length())),
                    None => failures.push(format!("{at}: three has no source vertex {index}")),
                }
            }
            for (what, err) in errs {
                worst = worst.max(err / tol);
                if !(err <= tol) {
                    failures.push(format!("{at}: {what} off by {err:.3e} (tolerance {tol:.3e})"));
                }
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let n = failures.len();
        failures.truncate(8);
        Err(format!("{n} mismatches (worst {worst:.2} × tolerance):\n{}", failures.join("\n"))
            .into())
    }
}

/// Whether libtest-mimic's arguments select a trial of this name.
fn selected(args: &libtest_mimic::Arguments, name: &str) -> bool {
    let filter_ok = match &args.filter {
        Some(f) if args.exact => name == f,
        Some(f) => name.contains(f.as_str()),
        None => true,
    };
    filter_ok
        && !args.skip.iter().any(|s| if args.exact { name == s } else { name.contains(s.as_str()) })
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let corpus = common::corpus();
    let refs = corpus
        .as_ref()
        .map(|c| common::files_with_ext(&c.join("3ds/reference"), &["json"]))
        .unwrap_or_default();
    let missing = client_missing();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("threejs");
    let mut trials = Vec::new();
    match (&corpus, &missing) {
        (None, _) => trials.push(common::corpus_trial("corpus", &corpus, |_| Ok(()))),
        (Some(_), Some(why)) => {
            eprintln!("three.js browser check skipped: {why}");
            for r in &refs {
                let name = r.file_name().and_then(|n| n.to_str()).unwrap_or("?");
                trials.push(
                    Trial::test(name.trim_end_matches(".lib3ds.json").to_string(), || Ok(()))
                        .with_ignored_flag(true),
                );
            }
        }
        (Some(c), None) => {
            let _ = std::fs::create_dir_all(&dir);
            let mut cases = Vec::new();
            let mut jobs = Vec::new();
            for r in &refs {
                let name = r.file_name().and_then(|n| n.to_str()).unwrap_or("?");
                let name = name.trim_end_matches(".lib3ds.json").to_string();
                if !selected(&args, &name) {
                    continue;
                }
                match prepare(c, r, &dir) {
                    Ok((case, job)) => {
                        cases.push(case);
                        jobs.push(job);
                    }
                    Err(e) => trials.push(Trial::test(name, move || Err(e.into()))),
                }
            }
            let answers =
                if jobs.is_empty() { Ok(HashMap::new()) } else { run_browser(&jobs, &dir) };
            let answers = Arc::new(answers);
            for case in cases {
                let answers = Arc::clone(&answers);
                trials.push(Trial::test(case.name.clone(), move || match answers.as_ref() {
                    Err(e) => Err(e.clone().into()),
                    Ok(map) => match map.get(&case.name) {
                        Some(a) => check(&case, a),
                        None => Err("no answer from the browser".into()),
                    },
                }));
            }
        }
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("corpus", &corpus, |_| Ok(())));
    }
    libtest_mimic::run(&args, trials).exit()
}
