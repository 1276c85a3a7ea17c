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

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use keyscene::anim::Time;
use keyscene::ReadOptions;

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

/// The corpus folder, when present.
fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("KEYSCENE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}

/// Every corpus 3DS/PRJ file but `wrong.3ds`: (name relative to `corpus/3ds`, bytes).
fn corpus_files() -> &'static [(String, Vec<u8>)] {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let Some(root) = corpus().map(|c| c.join("3ds")) else { return Vec::new() };
        let mut out = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
                if p.is_dir() && p.file_name().is_some_and(|n| n != "reference") {
                    stack.push(p);
                } else if (ext == "3ds" || ext == "prj")
                    && p.file_name().is_some_and(|n| n != "wrong.3ds")
                {
                    let name = p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                    out.push((name, std::fs::read(&p).expect("corpus file is readable")));
                }
            }
        }
        out.sort();
        out
    })
}

fn total_bytes() -> usize {
    corpus_files().iter().map(|(_, b)| b.len()).sum()
}

fn file_names() -> Vec<String> {
    corpus_files().iter().map(|(n, _)| n.clone()).collect()
}

fn parse(name: &str, bytes: &[u8]) -> keyscene::scene::Scene {
    let opts = ReadOptions::default();
    keyscene::load_bytes(bytes, Some(Path::new(name)), &opts).expect("corpus file loads").0
}

#[divan::bench]
fn load_all(bencher: Bencher) {
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for (name, bytes) in corpus_files() {
            black_box(parse(name, black_box(bytes)));
        }
    });
}

#[divan::bench(args = file_names())]
fn load_file(bencher: Bencher, name: &str) {
    let bytes = &corpus_files().iter().find(|(n, _)| n == name).expect("listed").1;
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| black_box(parse(name, black_box(bytes))));
}

#[divan::bench]
fn load_all_from_disk(bencher: Bencher) {
    let root = corpus().map(|c| c.join("3ds"));
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for (name, _) in corpus_files() {
            let path = root.as_ref().expect("files imply a corpus").join(name);
            black_box(keyscene::load(&path).expect("corpus file loads"));
        }
    });
}

#[divan::bench]
fn load_and_evaluate_all(bencher: Bencher) {
    bencher.counter(BytesCount::new(total_bytes())).bench(|| {
        for (name, bytes) in corpus_files() {
            let scene = parse(name, black_box(bytes));
            let anim = (!scene.animations.is_empty()).then_some(0);
            let (a, b) = scene.animations.first().map(|a| a.frame_range).unwrap_or((0.0, 0.0));
            for i in 0..10 {
                let frame = a + (b - a) * f64::from(i) / 9.0;
                black_box(scene.evaluate(anim, Time::Frame(frame)));
            }
        }
    });
}
