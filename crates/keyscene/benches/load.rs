//! Load (and evaluate) every 3DS/PRJ file of the corpus; throughput in bytes per second.
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench load
//! ```
//! The corpus is found at `KEYSCENE_CORPUS` (absolute: cargo runs benches in the crate's
//! folder), else `../shared/corpus` beside the workspace; when it is absent the run says so and
//! measures nothing. `wrong.3ds` (not a 3DS file) is left out; the other 25 files (1,131,377
//! bytes) are the set lib3ds is measured on (`tools/bench_lib3ds.c`, `docs/benchmarks.md`).
//!
//! - `load_all`: every file parsed from memory (`keyscene::load_bytes`) in one iteration; the
//!   figure to put beside lib3ds's.
//! - `load_file`: the same per file.
//! - `load_all_from_disk`: `keyscene::load(path)` (file read and texture look-up included), as
//!   `lib3ds_file_load` does.
//! - `load_and_evaluate_all`: every file parsed, then posed at 10 frames spread over its
//!   animation range (`Scene::evaluate`: every node's world matrix).

#[path = "common/three_ds_files.rs"]
#[allow(dead_code)]
mod three_ds_files;

use std::path::Path;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use keyscene::anim::Time;
use keyscene::ReadOptions;
use three_ds_files::files as corpus_files;

/// The allocator the `keyscene` binary ships with (crates/keyscene-cli/src/main.rs), so the
/// figures are those of the shipped tool; `docs/benchmarks.md` also gives them with the system
/// allocator (comment these two lines out to measure that).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if corpus_files().is_empty() {
        eprintln!(
            "load bench: no 3DS corpus found (set KEYSCENE_CORPUS); skipped, nothing measured"
        );
        return;
    }
    divan::main();
}

fn total_bytes() -> usize {
    corpus_files().iter().map(|f| f.bytes.len()).sum()
}

fn file_names() -> Vec<String> {
    corpus_files().iter().map(|f| f.name.clone()).collect()
}

fn parse(name: &str, bytes: &[u8]) -> keyscene::scene::Scene {
    let opts = ReadOptions::default();
    keyscene::load_bytes(bytes, Some(Path::new(name)), &opts).expect("corpus file loads").0
}

#[divan::bench]
fn load_all(bencher: Bencher) {
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for f in corpus_files() {
            black_box(parse(&f.name, black_box(&f.bytes)));
        }
    });
}

#[divan::bench(args = file_names())]
fn load_file(bencher: Bencher, name: &str) {
    let bytes = &corpus_files().iter().find(|f| f.name == name).expect("listed").bytes;
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| black_box(parse(name, black_box(bytes))));
}

#[divan::bench]
fn load_all_from_disk(bencher: Bencher) {
    let root = three_ds_files::corpus().map(|c| c.join("3ds"));
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for f in corpus_files() {
            let path = root.as_ref().expect("files imply a corpus").join(&f.name);
            black_box(keyscene::load(&path).expect("corpus file loads"));
        }
    });
}

#[divan::bench]
fn load_and_evaluate_all(bencher: Bencher) {
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for f in corpus_files() {
            let scene = parse(&f.name, black_box(&f.bytes));
            let anim = (!scene.animations.is_empty()).then_some(0);
            let (a, b) = scene.animations.first().map(|a| a.frame_range).unwrap_or((0.0, 0.0));
            for i in 0..10 {
                let frame = a + (b - a) * f64::from(i) / 9.0;
                black_box(scene.evaluate(anim, Time::Frame(frame)));
            }
        }
    });
}
