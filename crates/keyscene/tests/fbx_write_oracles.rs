//! Written FBX files as Blender and assimp load them (issue #14 §1, "Proof", last item).
//!
//! Sample, by rule: the sources of `fbx_write_ufbx` (every corpus 3DS file, then every
//! positive corpus FBX file, path order) are cut into [`SOURCES`] equal stretches; from the
//! start of each, the first source keyscene loads whose scene has a mesh node with vertices is
//! taken. Each is written by [`export::save`] as binary 7.4, binary 7.5 and ASCII 7.4, and
//! each oracle reads 2 × [`SOURCES`] = 20 written files:
//!
//! - **Blender 5.0.1** reads binary 7.4 and 7.5 (`blender::`, `blender_7500::`): Blender's FBX
//!   importer reads no ASCII FBX at all ("ASCII FBX files are not supported"). `bpy` module
//!   (`/opt/keyscene-oracles/venv-bpy`), through the shared dump script `oracles/blender_dump.py` (`--frames 0`; FBX importer defaults except
//!   `anim_offset` 0, so frame 0 is FBX time 0): Blender converts the file's declared axes
//!   and unit to its own world, +Z up, −Y front, metres. The keyscene side is turned the same
//!   way: `Scene::axis_unit_conversion(AxisSystem::Z_UP_RIGHT_HANDED, Some(1.0))` of the
//!   source, premultiplied to its world vertices;
//! - **assimp 5.2.5** reads binary 7.4 and ASCII 7.4 (`assimp::`, `assimp_ascii::`)
//!   (`assimp dump`, Debian `assimp-utils`), through `oracles/assimp_dump.py`
//!   (`--frames 0`, no post-processing): assimp keeps the file's axes and unit, so the
//!   keyscene side is the source's world unchanged.
//!
//! For every mesh node of the dump (a node with a `world_bbox`: the world box of its mesh
//! vertices at frame 0), the keyscene source node of the same name (Blender's `.001`
//! duplicate suffix taken off; `\0` left out of keyscene's names) posed at time 0 s
//! (`Scene::evaluate`, first animation, skin and blend shapes applied) has a world vertex box
//! within 1e-4 × max(1, diagonal of the source's world box of every mesh vertex). At least
//! one mesh node must be compared. Oracles absent: the trials are reported *ignored*.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::{DMat4, DVec3};
use keyscene::anim::Time;
use keyscene::formats::fbx::export;
use keyscene::scene::{AxisSystem, Scene};
use libtest_mimic::Trial;
use serde_json::Value;

/// How many sources are sampled (each written in both encodings).
const SOURCES: usize = 10;

const BLENDER_PYTHON: &str = "/opt/keyscene-oracles/venv-bpy/bin/python";
const ASSIMP: &str = "/usr/bin/assimp";

#[derive(Clone, Copy, PartialEq)]
enum Oracle {
    Blender,
    Assimp,
}

fn sources(corpus: &Path) -> Vec<PathBuf> {
    let mut files = common::files_with_ext(&corpus.join("3ds"), &["3ds"]);
    let fbx_dir = corpus.join("fbx");
    files.extend(common::files_with_ext(&fbx_dir, &["fbx"]).into_iter().filter(|p| {
        let rel = p.strip_prefix(&fbx_dir).unwrap().to_string_lossy().replace('\\', "/");
        !common::is_negative_fbx(&rel)
    }));
    files
}

fn has_mesh(path: &Path) -> bool {
    keyscene::load(path).is_ok_and(|(s, _)| {
        s.nodes.iter().filter_map(|n| n.mesh).any(|m| !s.meshes[m].positions.is_empty())
    })
}

/// The sample (module docs).
fn sample(all: &[PathBuf]) -> Vec<PathBuf> {
    let step = all.len().div_ceil(SOURCES).max(1);
    (0..all.len())
        .step_by(step)
        .filter_map(|start| all[start..(start + step).min(all.len())].iter().find(|p| has_mesh(p)))
        .cloned()
        .collect()
}

fn clean(name: &str) -> String {
    name.chars().filter(|&c| c != '\0').collect()
}

/// Blender's duplicate-name suffix (`.001`) taken off.
fn blender_base(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, n)) if n.len() == 3 && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

fn run_oracle(oracle: Oracle, fbx: &Path, scripts: &Path, out: &Path) -> Result<Value, String> {
    let mut cmd = match oracle {
        Oracle::Blender => {
            let mut c = Command::new(BLENDER_PYTHON);
            c.arg(scripts.join("blender_dump.py"));
            c
        }
        Oracle::Assimp => {
            let mut c = Command::new("python3");
            c.arg(scripts.join("assimp_dump.py")).arg("--assimp").arg(ASSIMP);
            c
        }
    };
    let run = cmd
        .arg(fbx)
        .args(["--frames", "0", "--compact", "--out"])
        .arg(out)
        .output()
        .map_err(|e| format!("running the dump script: {e}"))?;
    let text = std::fs::read_to_string(out).map_err(|e| {
        format!(
            "no dump ({e}): {}",
            String::from_utf8_lossy(&run.stderr).chars().take(400).collect::<String>()
        )
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("dump is not JSON: {e}"))?;
    if doc["ok"] == Value::Bool(false) {
        return Err(format!(
            "the oracle cannot load the written file: {}",
            doc["error"].as_str().or(doc["stderr"].as_str()).unwrap_or("?")
        ));
    }
    Ok(doc)
}

/// The frame-0 world box of dump node `index`: its sample at frame 0, else its own box.
fn dump_box(doc: &Value, node: &Value) -> Option<(DVec3, DVec3)> {
    let index = node["index"].as_u64();
    let sampled = doc["evaluated"].as_array().and_then(|e| e.first()).and_then(|e| {
        e["nodes"].as_array()?.iter().find(|n| n["index"].as_u64() == index)?["samples"]
            .as_array()?
            .iter()
            .find(|s| s["frame"].as_f64() == Some(0.0))
            .map(|s| s["world_bbox"].clone())
    });
    let b = sampled.filter(|b| b.is_object()).unwrap_or_else(|| node["world_bbox"].clone());
    Some((common::try_vec3(&b["min"])?, common::try_vec3(&b["max"])?))
}

/// The encodings: `ascii` 7.4, else binary `version`.
fn check(
    path: &Path,
    oracle: Oracle,
    (ascii, version): (bool, u32),
    scripts: &Path,
) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let mut o = export::WriteOptions::default();
    o.ascii = ascii;
    o.binary.version = version;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let fbx = dir.path().join("written.fbx");
    export::save(&scene, &fbx, &o).map_err(|e| format!("write: {e}"))?;
    let doc = run_oracle(oracle, &fbx, scripts, &dir.path().join("dump.json"))?;
    let to_oracle = match oracle {
        Oracle::Blender => scene.axis_unit_conversion(AxisSystem::Z_UP_RIGHT_HANDED, Some(1.0)),
        Oracle::Assimp => DMat4::IDENTITY,
    };
    compare(&scene, &doc, oracle, to_oracle)
}

fn compare(scene: &Scene, doc: &Value, oracle: Oracle, to_oracle: DMat4) -> Result<(), String> {
    let anim = (!scene.animations.is_empty()).then_some(0);
    let pose = scene.evaluate(anim, Time::Seconds(0.0));
    let ours: Vec<(String, Vec<DVec3>)> = (0..scene.nodes.len())
        .filter(|&i| scene.nodes[i].mesh.is_some())
        .map(|i| {
            let p = pose.world_positions(scene, i);
            (
                clean(&scene.nodes[i].name),
                p.iter().map(|&v| to_oracle.transform_point3(v)).collect(),
            )
        })
        .collect();
    let (lo, hi) = common::bbox(ours.iter().flat_map(|(_, p)| p.iter().copied()));
    let tol = 1e-4 * (hi - lo).length().max(1.0);
    let mut compared = 0;
    for node in doc["nodes"].as_array().ok_or("dump without nodes")? {
        if !node["world_bbox"].is_object() {
            continue;
        }
        let name = node["name"].as_str().unwrap_or("");
        let name = if oracle == Oracle::Blender { blender_base(name) } else { name };
        let Some(theirs) = dump_box(doc, node) else { continue };
        let candidates: Vec<_> = ours.iter().filter(|(n, p)| n == name && !p.is_empty()).collect();
        if candidates.is_empty() {
            continue;
        }
        let best = candidates
            .iter()
            .map(|(_, p)| common::bbox_diff(common::bbox(p.iter().copied()), theirs))
            .fold(f64::INFINITY, f64::min);
        if !(best <= tol) {
            return Err(format!(
                "mesh node {name:?}: the oracle's world box at frame 0 is {theirs:?}, keyscene's \
                 differs by {best:e} (tolerance {tol:e})"
            ));
        }
        compared += 1;
    }
    if compared == 0 {
        return Err("no mesh node of the dump has a keyscene node of its name".into());
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let Some(root) = corpus.clone() else {
        trials.push(Trial::test("fbx_write_oracles::corpus", || Ok(())).with_ignored_flag(true));
        common::run(trials)
    };
    let scripts = common::refs::oracles(&root);
    let present = |o: Oracle| match o {
        Oracle::Blender => {
            Path::new(BLENDER_PYTHON).is_file() && scripts.join("blender_dump.py").is_file()
        }
        Oracle::Assimp => Path::new(ASSIMP).is_file() && scripts.join("assimp_dump.py").is_file(),
    };
    for path in sample(&sources(&root)) {
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        for (kind, oracle, enc) in [
            ("blender", Oracle::Blender, (false, 7400)),
            ("blender_7500", Oracle::Blender, (false, 7500)),
            ("assimp", Oracle::Assimp, (false, 7400)),
            ("assimp_ascii", Oracle::Assimp, (true, 7400)),
        ] {
            let name = format!("{kind}::{rel}");
            if !present(oracle) {
                trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true));
                continue;
            }
            let (p, s) = (path.clone(), scripts.clone());
            trials.push(Trial::test(name, move || {
                check(&p, oracle, enc, &s).map_err(|e| format!("{}: {e}", p.display()).into())
            }));
        }
    }
    common::run(trials)
}
