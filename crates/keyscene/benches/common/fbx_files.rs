//! The FBX benchmark files MANIFEST.md lists ("Benchmarks": the largest files of the corpus)
//! and the best-of timing and per-encoding totals the FBX benches print.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// MANIFEST.md "Benchmarks": file stems (each matches every encoding variant present).
const BENCHMARK_STEMS: &[&str] = &[
    "fbx-conv/knight",
    "assimp/embedded_ascii/box_embedded_texture_fragmented",
    "ufbx/maya_slime_7500_ascii",
    "ufbx/maya_slime_7500_binary",
    "ufbx/motionbuilder_thumbnail_7700_ascii",
    "ufbx/maya_human_ik_6100_binary",
    "ufbx/maya_kenney_character",
    "ufbx/synthetic_id_collision",
    "assimp/nonbsd/kwxport_test_vcolors_2013_binary",
    "ufbx/blender_293_barbarian",
    "ufbx/maya_ngon_maze",
    "fbx-conv/softimage_head2",
];

/// `$KEYSCENE_CORPUS/fbx` (absolute: cargo runs benches in the crate's folder), else
/// `../shared/corpus/fbx` beside the workspace, when present.
fn corpus_fbx() -> Option<PathBuf> {
    let dir = match std::env::var_os("KEYSCENE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    let fbx = dir.join("fbx");
    fbx.is_dir().then_some(fbx)
}

/// Benchmark files by path relative to the corpus's `fbx/` folder, with their bytes; empty
/// without a corpus.
pub fn files() -> &'static BTreeMap<String, Vec<u8>> {
    static FILES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut out = BTreeMap::new();
        let Some(root) = corpus_fbx() else { return out };
        for stem in BENCHMARK_STEMS {
            let (dir, prefix) = stem.rsplit_once('/').unwrap();
            let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(prefix) && name.to_ascii_lowercase().ends_with(".fbx") {
                    if let Ok(bytes) = std::fs::read(e.path()) {
                        out.insert(format!("{dir}/{name}"), bytes);
                    }
                }
            }
        }
        out
    })
}

/// Best time per call of `f`: at least `min_runs` calls, then more until about `budget` has
/// passed or `max_runs` were made.
pub fn best_time(
    budget: Duration,
    min_runs: usize,
    max_runs: usize,
    mut f: impl FnMut(),
) -> Duration {
    let mut best = Duration::MAX;
    let start = Instant::now();
    let mut runs = 0;
    while runs < min_runs || (start.elapsed() < budget && runs < max_runs) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
        runs += 1;
    }
    best
}

/// File bytes and summed best times (keyscene, ufbx) per encoding, `binary` or `ascii`.
#[derive(Default)]
pub struct Totals(BTreeMap<&'static str, (usize, Duration, Duration)>);

impl Totals {
    /// Adds one file's size and times to its encoding's total.
    pub fn add(&mut self, bytes: &[u8], ours: Duration, theirs: Duration) {
        let kind = if bytes.starts_with(b"Kaydara FBX Binary") { "binary" } else { "ascii" };
        let t = self.0.entry(kind).or_default();
        t.0 += bytes.len();
        t.1 += ours;
        t.2 += theirs;
    }

    /// Prints a line per encoding: KB, MB/s (MB = 10⁶ file bytes) of both, and the ratio
    /// ufbx time ÷ keyscene time (above 1 keyscene is faster).
    pub fn print(&self) {
        for (kind, &(n, ours, theirs)) in &self.0 {
            println!(
                "total {kind:<6} {:>7.0} KB  keyscene {:>6.0} MB/s  ufbx {:>6.0} MB/s  ratio {:.2}x",
                n as f64 / 1e3,
                n as f64 / ours.as_secs_f64() / 1e6,
                n as f64 / theirs.as_secs_f64() / 1e6,
                theirs.as_secs_f64() / ours.as_secs_f64()
            );
        }
    }
}
