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

use std::hint::black_box;
use std::time::Duration;

use divan::counter::BytesCount;
use divan::Bencher;
use keyscene::formats::fbx;
use keyscene::limits::Limits;

#[path = "common/fbx_files.rs"]
mod fbx_files;
use fbx_files::{best_time, files, Totals};

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

fn summary() {
    let mut totals = Totals::default();
    println!(
        "{:<64} {:>9} {:>12} {:>12} {:>7}",
        "file", "KB", "keyscene MB/s", "ufbx MB/s", "ratio"
    );
    for (name, bytes) in files() {
        let limits = Limits::default();
        let ours = best_time(Duration::from_millis(300), 3, 1000, || {
            black_box(fbx::parse(black_box(bytes), &limits).unwrap().node_count());
        });
        let theirs = best_time(Duration::from_millis(300), 3, 1000, || {
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
        totals.add(bytes, ours, theirs);
    }
    totals.print();
}

fn main() {
    if files().is_empty() {
        eprintln!("corpus not found (set KEYSCENE_CORPUS): no FBX benchmark files");
        return;
    }
    summary();
    divan::main();
}
