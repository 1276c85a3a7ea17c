//! The `time` rows of `fbx/references.tsv` that need evaluation **without curve
//! extrapolation** (option `no_extrapolation`), which `fbx_obj_references.rs` reports as
//! ignored: the row's stack is made with [`Animation::without_extrapolation`], evaluated at
//! `time_s`, written with `formats::obj::write` and compared with `obj_compare.py` at the row's
//! settings — the same mechanism as `fbx_obj_references.rs`.
//!
//! [`Animation::without_extrapolation`]: keyscene::anim::Animation::without_extrapolation

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use keyscene::anim::Time;
use libtest_mimic::{Failed, Trial};

fn oracles(corpus: &Path) -> PathBuf {
    std::env::var_os("KEYSCENE_ORACLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| corpus.join("../oracles"))
}

fn check(corpus: &Path, cols: &[String], k: usize) -> Result<(), Failed> {
    let fbx_dir = corpus.join("fbx");
    let (mut scene, _) = keyscene::load(&fbx_dir.join(&cols[0])).map_err(|e| e.to_string())?;
    let t: f64 = cols[3]
        .parse()
        .map_err(|_| format!("bad time {:?}", cols[3]))?;
    let stack = &cols[4];
    let anim = if stack.is_empty() {
        Some(0)
    } else {
        scene
            .animations
            .iter()
            .position(|a| a.name.contains(stack.as_str()))
    };
    let anim = anim
        .filter(|&a| a < scene.animations.len())
        .ok_or("no such stack")?;
    scene.animations[anim] = scene.animations[anim].without_extrapolation();
    let pose = scene.evaluate(Some(anim), Time::Seconds(t));
    let text =
        keyscene::formats::obj::write(&scene, Some(&pose), "x.mtl").map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("keyscene-noex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let cand = dir.join(format!("row{k}.obj"));
    std::fs::write(&cand, text.obj).map_err(|e| e.to_string())?;
    let mut cmd = Command::new("python3");
    cmd.arg(oracles(corpus).join("obj_compare.py"))
        .arg(fbx_dir.join(&cols[1]))
        .arg(&cand);
    for (flag, i) in [("--match", 5), ("--tolerance", 6), ("--position-scale", 7)] {
        if !cols[i].is_empty() {
            cmd.arg(flag).arg(&cols[i]);
        }
    }
    if cols[8] == "yes" {
        cmd.arg("--normals");
    }
    if cols[9] == "yes" {
        cmd.arg("--uvs");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("python3 obj_compare.py: {e}"))?;
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
    let table = corpus
        .as_ref()
        .and_then(|c| std::fs::read_to_string(c.join("fbx/references.tsv")).ok());
    match (corpus, table) {
        (Some(corpus), Some(text)) => {
            for (k, line) in text.lines().skip(1).enumerate() {
                let mut cols: Vec<String> =
                    line.split('\t').map(|c| c.trim().to_string()).collect();
                cols.resize(14, String::new());
                if cols[2] != "time" || !cols[12].split(',').any(|o| o.trim() == "no_extrapolation")
                {
                    continue;
                }
                let name = format!(
                    "time {} -> {} t={} no_extrapolation",
                    cols[0], cols[1], cols[3]
                );
                let corpus = corpus.clone();
                trials.push(Trial::test(name, move || check(&corpus, &cols, k)));
            }
        }
        _ => trials.push(Trial::test("corpus", || Ok(())).with_ignored_flag(true)),
    }
    common::run(trials);
}
