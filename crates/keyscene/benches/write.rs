//! Writing against reading (issue #14 §3): per class of benchmark file, the read of the files
//! (`keyscene::load_bytes`), the FBX writer (`formats::fbx::export::write`, scene → binary FBX
//! bytes in memory, default options) and the 3DS writer (`formats::three_ds::export::write`,
//! scene → `.3ds` bytes in memory, default options) on the scenes those files load to. The
//! writers' scenes are loaded once, outside the timing. Throughput is counted in *source* file
//! bytes for all three, so the figures compare directly: the target is that writing a file
//! costs no more than reading it.
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench write
//! ```
//!
//! Files: the FBX benchmark files MANIFEST.md lists (`benches/common/fbx_files.rs`, split into
//! binary and ASCII) and every 3DS/PRJ file of the corpus but `wrong.3ds` — the files the
//! `fbx_load`, `load` and `convert` benches use. A scene a writer refuses still costs the
//! refusal. Without a corpus the run says so and measures nothing.
//!
//! `chain_to_3ds`: a generated chain of nodes (`benches/common/generated.rs`, one keyed root,
//! one TCB-keyed leaf, 101 frames: every node moves) to `.3ds` bytes — the resampled pass at
//! 1,000 and 10,000 nodes gives the exponent in the depth; 100,000 nodes are refused (more
//! keyframer nodes than `NODE_ID` numbers) before anything is sampled, so that row is the
//! refusal's cost.

#[path = "common/fbx_files.rs"]
#[allow(dead_code)]
mod fbx_files;
#[path = "common/generated.rs"]
#[allow(dead_code)]
mod generated;
#[path = "common/three_ds_files.rs"]
#[allow(dead_code)]
mod three_ds_files;

use std::path::Path;
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use keyscene::formats::{fbx, three_ds};
use keyscene::scene::{InheritType, Scene};
use keyscene::ReadOptions;

/// The allocator the `keyscene` binary ships with.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if class_files("3DS").is_empty() && class_files("binary FBX").is_empty() {
        eprintln!("write bench: no corpus found (set KEYSCENE_CORPUS); skipped, nothing measured");
        return;
    }
    divan::main();
}

/// The benchmark classes, as `docs/benchmarks.md` names them.
const CLASSES: &[&str] = &["binary FBX", "ASCII FBX", "3DS"];

/// One benchmark file: its name, bytes, and the scene it loads to (`None`: it does not load).
struct File {
    name: String,
    bytes: Vec<u8>,
    scene: Option<Scene>,
}

fn load(name: &str, bytes: &[u8]) -> Option<Scene> {
    keyscene::load_bytes(bytes, Some(Path::new(name)), &ReadOptions::default()).ok().map(|r| r.0)
}

/// The files of one class, loaded once.
fn class_files(class: &str) -> &'static [File] {
    static FILES: OnceLock<Vec<Vec<File>>> = OnceLock::new();
    let all = FILES.get_or_init(|| {
        let file = |name: String, bytes: Vec<u8>| File { scene: load(&name, &bytes), name, bytes };
        let fbx = fbx_files::files();
        let binary = |b: &[u8]| b.starts_with(b"Kaydara FBX Binary");
        let pick = |want: bool| {
            fbx.iter()
                .filter(|(_, b)| binary(b) == want)
                .map(|(n, b)| file(n.clone(), b.clone()))
                .collect::<Vec<_>>()
        };
        let three_ds = three_ds_files::files()
            .iter()
            .map(|f| file(f.path.to_string_lossy().into_owned(), f.bytes.clone()))
            .collect();
        vec![pick(true), pick(false), three_ds]
    });
    let i = CLASSES.iter().position(|&c| c == class).expect("a listed class");
    &all[i]
}

/// The source bytes of the class's files that load (the ones the writers get a scene of).
fn bytes_of(class: &str) -> usize {
    class_files(class).iter().filter(|f| f.scene.is_some()).map(|f| f.bytes.len()).sum()
}

/// `load_bytes` of every file of the class that loads.
#[divan::bench(args = CLASSES, sample_count = 10, sample_size = 1)]
fn read(bencher: Bencher, class: &str) {
    bencher.counter(BytesCount::new(bytes_of(class))).bench(|| {
        for f in class_files(class).iter().filter(|f| f.scene.is_some()) {
            black_box(load(&f.name, black_box(&f.bytes)));
        }
    });
}

/// Scene → binary FBX bytes, every loaded scene of the class.
#[divan::bench(args = CLASSES, sample_count = 10, sample_size = 1)]
fn write_fbx(bencher: Bencher, class: &str) {
    let opts = fbx::export::WriteOptions::default();
    bencher.counter(BytesCount::new(bytes_of(class))).bench(|| {
        for s in class_files(class).iter().filter_map(|f| f.scene.as_ref()) {
            black_box(fbx::export::write(black_box(s), &opts).map(|r| r.0.len()).ok());
        }
    });
}

/// Scene → `.3ds` bytes, every loaded scene of the class.
#[divan::bench(args = CLASSES, sample_count = 10, sample_size = 1)]
fn write_3ds(bencher: Bencher, class: &str) {
    let opts = three_ds::export::WriteOptions::default();
    bencher.counter(BytesCount::new(bytes_of(class))).bench(|| {
        for s in class_files(class).iter().filter_map(|f| f.scene.as_ref()) {
            black_box(three_ds::export::write(black_box(s), &opts).map(|r| r.0.len()).ok());
        }
    });
}

/// Scene → `.3ds` bytes of a generated chain of `n` nodes (`RSrs`, the root keyed).
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 5, sample_size = 1)]
fn chain_to_3ds(bencher: Bencher, n: usize) {
    let scene = generated::chain(n, InheritType::RSrs);
    let opts = three_ds::export::WriteOptions::default();
    bencher.bench(|| {
        black_box(three_ds::export::write(black_box(&scene), &opts).map(|r| r.0.len()).ok())
    });
}
