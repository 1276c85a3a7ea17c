//! FBX parse throughput: keyscene's low-level parser vs the `ufbx` crate, same files, same
//! process, single-threaded.
//!
//! Files: the benchmark files MANIFEST.md lists (the largest of the corpus). Before divan's
//! per-file table, a summary prints aggregate MB/s for both over binary and ASCII files and
//! the ratio. Note what is compared: keyscene here builds the record tree only (arrays
//! inflated, nothing converted), while `ufbx::load_memory` builds a whole scene; the ratio is
//! an upper bound for the full keyscene import until that exists.
//!
//! ```text
//! cargo bench -p keyscene --bench fbx_parse
//! ```

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use divan::counter::BytesCount;
use divan::Bencher;
use keyscene::formats::fbx;
use keyscene::limits::Limits;

#[path = "common/fbx_files.rs"]
mod fbx_files;
use fbx_files::files;

fn names() -> Vec<&'static str> {
    files().keys().map(String::as_str).collect()
}

#[divan::bench(args = names())]
fn keyscene_parse(bencher: Bencher, name: &str) {
    let bytes = &files()[name];
    let limits = Limits::default();
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| fbx::parse(black_box(bytes), &limits).map(|d| d.node_count()).unwrap());
}

#[divan::bench(args = names())]
fn ufbx_load(bencher: Bencher, name: &str) {
    let bytes = &files()[name];
    bencher.counter(BytesCount::new(bytes.len())).bench(|| {
        ufbx::load_memory(black_box(bytes), ufbx::LoadOpts::default())
            .map(|s| s.nodes.len())
            .unwrap()
    });
}

/// Best-of time per call over ~`budget`.
fn best_time(budget: Duration, mut f: impl FnMut()) -> Duration {
    let mut best = Duration::MAX;
    let start = Instant::now();
    let mut runs = 0;
    while runs < 3 || (start.elapsed() < budget && runs < 1000) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed());
        runs += 1;
    }
    best
}

fn summary() {
    let mut totals: BTreeMap<&str, (usize, Duration, Duration)> = BTreeMap::new();
    println!(
        "{:<64} {:>9} {:>12} {:>12} {:>7}",
        "file", "KB", "keyscene MB/s", "ufbx MB/s", "ratio"
    );
    for (name, bytes) in files() {
        let limits = Limits::default();
        let ours = best_time(Duration::from_millis(300), || {
            black_box(fbx::parse(black_box(bytes), &limits).unwrap().node_count());
        });
        let theirs = best_time(Duration::from_millis(300), || {
            black_box(
                ufbx::load_memory(black_box(bytes), ufbx::LoadOpts::default()).unwrap().nodes.len(),
            );
        });
        let mbs = |d: Duration| bytes.len() as f64 / d.as_secs_f64() / 1e6;
        println!(
            "{:<64} {:>9.0} {:>12.0} {:>12.0} {:>6.2}x",
            name,
            bytes.len() as f64 / 1e3,
            mbs(ours),
            mbs(theirs),
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
        let kind = if bytes.starts_with(b"Kaydara FBX Binary") { "binary" } else { "ascii" };
        let t = totals.entry(kind).or_default();
        t.0 += bytes.len();
        t.1 += ours;
        t.2 += theirs;
    }
    for (kind, (n, ours, theirs)) in totals {
        println!(
            "total {kind:<6} {:>7.0} KB  keyscene {:>6.0} MB/s  ufbx {:>6.0} MB/s  ratio {:.2}x",
            n as f64 / 1e3,
            n as f64 / ours.as_secs_f64() / 1e6,
            n as f64 / theirs.as_secs_f64() / 1e6,
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }
}

fn main() {
    if files().is_empty() {
        eprintln!("corpus not found (set KEYSCENE_CORPUS): no FBX benchmark files");
        return;
    }
    summary();
    divan::main();
}
