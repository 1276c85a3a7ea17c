//! Shared helpers for the corpus tests.
//!
//! Corpus tests run one libtest-mimic trial per corpus file. The corpus is found at
//! `KEYSCENE_CORPUS`, else `../shared/corpus` beside the workspace. When it is absent every
//! corpus trial is reported as *ignored* (skipped), never as passed; when `KEYSCENE_CORPUS` is
//! set but the folder is missing, the run fails.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use glam::DVec3;
use libtest_mimic::{Failed, Trial};

pub mod lib3ds;
pub mod refs;
#[cfg(feature = "three_da")]
pub mod three_da;
pub mod triage;
pub mod ufbx_corpus;

/// The corpus folder, or `None` when it is absent and `KEYSCENE_CORPUS` is not set.
/// Panics when `KEYSCENE_CORPUS` names a folder that does not exist.
pub fn corpus() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KEYSCENE_CORPUS") {
        let dir = PathBuf::from(dir);
        assert!(dir.is_dir(), "KEYSCENE_CORPUS={} is not a folder", dir.display());
        return Some(dir);
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    default.is_dir().then_some(default)
}

/// A trial that runs `f` on the corpus, or is reported ignored when there is no corpus.
pub fn corpus_trial(
    name: impl Into<String>,
    corpus: &Option<PathBuf>,
    f: impl FnOnce(&Path) -> Result<(), Failed> + Send + 'static,
) -> Trial {
    let name = name.into();
    match corpus.clone() {
        Some(dir) => Trial::test(name, move || f(&dir)),
        None => Trial::test(name, || Ok(())).with_ignored_flag(true),
    }
}

/// Every file under `dir` (recursively) whose extension, lower-cased, is one of `exts`,
/// sorted by path.
pub fn files_with_ext(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(x) = p.extension().and_then(|x| x.to_str()) {
                if exts.iter().any(|e| e.eq_ignore_ascii_case(x)) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// Runs the trials with libtest-mimic's command-line handling and exits with its status,
/// after marking the trials `tests/triage.tsv` lists as known defects (`triage::apply`).
/// Prints how many trials were skipped for want of a corpus.
pub fn run(trials: Vec<Trial>) -> ! {
    let args = libtest_mimic::Arguments::from_args();
    let trials = triage::apply(env!("CARGO_CRATE_NAME"), trials, corpus().is_some(), &args);
    if corpus().is_none() {
        eprintln!(
            "corpus not found (set KEYSCENE_CORPUS): {} corpus trials reported as ignored",
            trials.iter().filter(|t| t.has_ignored_flag()).count()
        );
    }
    libtest_mimic::run(&args, trials).exit()
}

/// A JSON 3-vector (as in the lib3ds reference dumps) as a `DVec3`. Panics on anything else:
/// the references are trusted inputs.
pub fn vec3(v: &serde_json::Value) -> glam::DVec3 {
    try_vec3(v).expect("vector of three numbers")
}

/// A JSON 3-vector as a `DVec3`, or `None` when it is not three numbers.
pub fn try_vec3(v: &serde_json::Value) -> Option<glam::DVec3> {
    Some(glam::DVec3::new(v[0].as_f64()?, v[1].as_f64()?, v[2].as_f64()?))
}

/// Our mesh node for a lib3ds reference node: same source id (NODE_ID, or the file-order
/// number lib3ds gives when there is none) and name, else the first mesh node with the same
/// name and instance name.
pub fn find_node(scene: &keyscene::scene::Scene, r: &serde_json::Value) -> Option<usize> {
    let id = r["id"].as_i64();
    let name = r["name"].as_str().unwrap_or("");
    let instance = r["instance"].as_str().unwrap_or("");
    let nodes = &scene.nodes;
    let with_mesh = |i: &usize| nodes[*i].mesh.is_some();
    (0..nodes.len())
        .filter(with_mesh)
        .find(|&i| nodes[i].source.id == id && nodes[i].name == name)
        .or_else(|| {
            (0..nodes.len())
                .filter(with_mesh)
                .find(|&i| nodes[i].name == name && nodes[i].instance == instance)
        })
}

/// xorshift64* (Vigna): a reproducible stream for byte flips, with no dependency. Seed with
/// an odd (non-zero) value.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// MANIFEST.md's negative FBX files (fuzz inputs, `_fail_` files, unsupported versions, the
/// mangled `transparentTest`, the pre-6.1 legacy files): reading them must not panic and may
/// fail. `rel` is the path under the corpus's `fbx/` folder with `/` separators.
pub fn is_negative_fbx(rel: &str) -> bool {
    rel.contains("/fuzz/")
        || rel.contains("_fail_")
        || rel.contains("synthetic_unsupported_cube_")
        || rel.ends_with("transparentTest.fbx")
        || rel.ends_with("max7_cube_5000_binary.fbx")
        || rel.ends_with("max2009_blob_5800_ascii.fbx")
}

/// The axis-aligned box of `p` (inverted infinite box when empty).
pub fn bbox(p: impl Iterator<Item = DVec3>) -> (DVec3, DVec3) {
    p.fold((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// Largest per-component difference of two boxes.
pub fn bbox_diff(a: (DVec3, DVec3), b: (DVec3, DVec3)) -> f64 {
    (a.0 - b.0).abs().max_element().max((a.1 - b.1).abs().max_element())
}
