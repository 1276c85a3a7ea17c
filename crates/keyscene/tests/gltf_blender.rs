//! Blender plays keyscene's default GLB as keyscene does (issue 36 §4): a sample of the
//! corpus's animated FBX and 3DS files — every k-th of them in path order, so that at most
//! [`SAMPLE`] are taken — is written as GLB with the default options (LINEAR/STEP keys only),
//! imported by Blender's own glTF importer (`bpy`, run by `tools/blender_gltf_world.py`), and
//! the world origin of every node (objects; bones by their heads) at whole and half frames of
//! the first animation (at most [`FRAMES`] frames, spread evenly) is compared with keyscene's
//! glTF reader evaluating the same file (itself checked against the source by
//! `gltf_resampled_between_frames`).
//!
//! - Python with `bpy`: `KEYSCENE_BPY` (default `/opt/keyscene-oracles/venv-bpy/bin/python`,
//!   where `shared/oracles/install_oracles.sh` puts PyPI's `bpy==5.0.1`; about 1 GB, so CI's
//!   `.ci/run` does not install it). Without it every trial is reported ignored, saying why.
//! - Nodes are matched by name (names two nodes share are left out); at least one must match.
//!   Tolerance: 1e-4 × the scene size (the writer's, `anim::resample::scene_size`, or the
//!   largest coordinate of the compared origins when larger) plus `f32` rounding (2⁻²⁰ × the
//!   size). Skinned mesh nodes are not compared (their transform places nothing); neither are
//!   frames past Blender's last (1,048,574).
//! - A file whose first animation runs at a frame rate that is not a whole number is left out
//!   (Blender's importer turns seconds into frames at the scene's whole-number rate).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::gltf::{read, write, WriteOptions};
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

/// Most files compared.
const SAMPLE: usize = 24;

/// Most whole frames compared per file (each with its half frame).
const FRAMES: usize = 40;

/// The Python that has `bpy`, or why there is none.
fn bpy_python() -> Result<PathBuf, String> {
    let py = std::env::var_os("KEYSCENE_BPY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/keyscene-oracles/venv-bpy/bin/python"));
    match Command::new(&py).args(["-c", "import bpy"]).output() {
        Ok(o) if o.status.success() => Ok(py),
        _ => Err(format!("bpy not installed (KEYSCENE_BPY={})", py.display())),
    }
}

/// One written file: its path, frame rate and compared frames, keyscene's world origins of its
/// uniquely named nodes at those frames, and its scene size.
struct Case {
    name: String,
    glb: PathBuf,
    fps: f64,
    frames: Vec<f64>,
    want: HashMap<String, Vec<DVec3>>,
    size: f64,
}

/// Blender's last frame (`MAXFRAME`, 2²⁰ − 2): frames past it are not compared.
const BLENDER_MAX_FRAME: f64 = 1_048_574.0;

/// Writes `src` as GLB and evaluates the read-back file; `None` when the file has nothing to
/// compare (no animation written, a frame rate that is not whole).
fn prepare(src: &Path, name: String, dir: &Path) -> Result<Option<Case>, String> {
    let (scene, _) = keyscene::load(src).map_err(|e| e.to_string())?;
    let Some(anim) = scene.animations.first() else { return Ok(None) };
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
    if fps.fract() != 0.0 || fps > 1000.0 {
        return Ok(None);
    }
    let file = write(&scene, &WriteOptions::default()).map_err(|e| e.to_string())?;
    let (back, _) =
        read(&file.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    if back.animations.is_empty() {
        return Ok(None);
    }
    let (lo, hi) =
        (anim.frame_range.0.max(0.0).ceil(), anim.frame_range.1.min(BLENDER_MAX_FRAME).floor());
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Ok(None);
    }
    let span = (hi - lo) as usize;
    let count = span.min(FRAMES);
    let frames: Vec<f64> =
        (0..count).map(|i| lo + (i * span / count) as f64).flat_map(|f| [f, f + 0.5]).collect();
    let want = origins(&back, fps, &frames);
    // The writer's measure (mesh bounds at rest), or the farthest origin when larger.
    let rest = back.evaluate(Some(0), Time::Seconds(frames[0] / fps));
    let size = want
        .values()
        .flatten()
        .map(|p| p.abs().max_element())
        .filter(|v| v.is_finite())
        .fold(keyscene::anim::resample::scene_size(&back, &rest.world), f64::max);
    let glb = dir.join(format!("{}.glb", name.replace('/', "__")));
    std::fs::write(&glb, &file.main).map_err(|e| e.to_string())?;
    Ok(Some(Case { name, glb, fps, frames, want, size }))
}

/// World origins of the uniquely named nodes of `back` (a read-back glTF scene) over its first
/// animation at `frames` (seconds `frame / fps`); skinned mesh nodes are left out (glTF
/// §3.7.3.3: their transform does not place the mesh, and Blender parents them to the
/// armature instead).
fn origins(back: &Scene, fps: f64, frames: &[f64]) -> HashMap<String, Vec<DVec3>> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for n in &back.nodes {
        *count.entry(n.name.as_str()).or_default() += 1;
    }
    let mut out: HashMap<String, Vec<DVec3>> = HashMap::new();
    for &f in frames {
        let pose = back.evaluate(Some(0), Time::Seconds(f / fps));
        let skinned =
            |n: &keyscene::scene::Node| n.mesh.is_some_and(|m| back.meshes[m].skin.is_some());
        let unique = |n: &&keyscene::scene::Node| count[n.name.as_str()] == 1 && !skinned(n);
        for (i, n) in back.nodes.iter().enumerate().filter(|(_, n)| unique(n)) {
            out.entry(n.name.clone()).or_default().push(pose.world[i].col(3).truncate());
        }
    }
    out
}

/// Compares Blender's origins (`got`: the script's `nodes` of one file) with the case's.
fn compare(case: &Case, got: &serde_json::Value) -> Result<(), Failed> {
    if let Some(e) = got.get("error") {
        return Err(format!("Blender could not import it: {e}").into());
    }
    let nodes = got["nodes"].as_object().ok_or("no nodes from Blender")?;
    let size = case.size;
    let tol = 1e-4 * size + size / (1u64 << 20) as f64;
    let (mut matched, mut worst, mut at) = (0usize, 0.0f64, String::new());
    for (name, want) in &case.want {
        let Some(rows) = nodes.get(name).and_then(|v| v.as_array()) else { continue };
        matched += 1;
        for ((w, row), f) in want.iter().zip(rows).zip(&case.frames) {
            let g = common::vec3(row);
            let e = (g - *w).length();
            if e > worst || e.is_nan() {
                worst = if e.is_nan() { f64::INFINITY } else { e };
                at = format!("node {name:?} at frame {f}: Blender {g}, keyscene {w}");
            }
        }
    }
    if matched == 0 {
        return Err("no node name matched between Blender and keyscene".into());
    }
    if worst > tol {
        return Err(format!("worst error {worst:e} > {tol:e} ({at})").into());
    }
    Ok(())
}

/// The sampled source files: animated FBX and 3DS files of the corpus, every k-th in path
/// order.
fn sample(corpus: &Path) -> Vec<PathBuf> {
    let mut files = common::files_with_ext(&corpus.join("fbx"), &["fbx"]);
    files.extend(common::files_with_ext(&corpus.join("3ds"), &["3ds"]));
    let animated: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| keyscene::load(f).is_ok_and(|(s, _)| !s.animations.is_empty()))
        .collect();
    let step = animated.len().div_ceil(SAMPLE).max(1);
    animated.into_iter().step_by(step).collect()
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let Some(dir) = corpus.clone() else {
        trials.push(common::corpus_trial("corpus", &corpus, |_| Ok(())));
        common::run(trials)
    };
    let py = match bpy_python() {
        Ok(py) => py,
        Err(why) => {
            eprintln!("Blender check skipped: {why}");
            let name = format!("ignored: {why} :: blender_plays_default_glb");
            trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true));
            common::run(trials)
        }
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("blender");
    let _ = std::fs::create_dir_all(&out);
    let mut cases = Vec::new();
    for f in sample(&dir) {
        let name = f.strip_prefix(&dir).unwrap_or(&f).to_string_lossy().replace('\\', "/");
        match prepare(&f, name.clone(), &out) {
            Ok(Some(case)) => cases.push(case),
            Ok(None) => {}
            Err(e) => trials.push(Trial::test(name, move || Err(e.into()))),
        }
    }
    let jobs: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| serde_json::json!({"path": c.glb, "fps": c.fps, "frames": c.frames}))
        .collect();
    let job = out.join("job.json");
    let _ = std::fs::write(&job, serde_json::json!({ "files": jobs }).to_string());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/blender_gltf_world.py");
    let result_file = out.join("result.json");
    let _ = std::fs::remove_file(&result_file);
    let run = Command::new(&py).arg(&script).arg(&job).arg(&result_file).output();
    let result: Result<serde_json::Value, String> = match run {
        Ok(o) if o.status.success() => std::fs::read(&result_file)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())),
        Ok(o) => Err(format!("bpy script failed: {}", String::from_utf8_lossy(&o.stderr))),
        Err(e) => Err(format!("could not run {}: {e}", py.display())),
    };
    for (k, case) in cases.into_iter().enumerate() {
        let got = result.as_ref().map(|r| r["files"][k].clone()).map_err(Clone::clone);
        trials.push(Trial::test(case.name.clone(), move || compare(&case, &got?)));
    }
    common::run(trials)
}
