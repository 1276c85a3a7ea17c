//! Conversion against loading (issue #16): per class of benchmark file, `load` alone, `load`
//! then the glTF writer to GLB bytes in memory (`formats::gltf::write`, default options), and
//! `load` then the 3DA exporter and writer in memory (`three_da::export` + `three_da::write`,
//! default options); then a generated chain of nodes under one keyed root, converted to GLB,
//! at several lengths (the exponent of the cost in the chain's length); then the generated
//! scenes of `benches/common/generated.rs` (chain, siblings, long animation, large mesh) at
//! ×1, ×2 and ×4 of a base size, each loaded from the GLB and the FBX keyscene writes of it
//! and converted to GLB and 3DA in memory (issue #16 goal 2: the exponent of each).
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench convert
//! ```
//!
//! Files: the FBX benchmark files MANIFEST.md lists (`benches/common/fbx_files.rs`, split into
//! binary and ASCII) and every 3DS/PRJ file of the corpus but `wrong.3ds` — the files the
//! `fbx_load` and `load` benches use. A file a writer refuses (3DA: more than 255 bones …)
//! still costs its load and the refusal. Without a corpus only the generated chains run.

#[path = "common/fbx_files.rs"]
#[allow(dead_code)]
mod fbx_files;
#[path = "common/generated.rs"]
mod generated;
#[path = "common/three_ds_files.rs"]
#[allow(dead_code)]
mod three_ds_files;

use std::path::Path;
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use generated::chain;
use keyscene::formats::{fbx, gltf, three_da};
use keyscene::scene::{InheritType, Scene};
use keyscene::ReadOptions;

/// The allocator the `keyscene` binary ships with.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

/// The benchmark classes, as `docs/benchmarks.md` names them.
const CLASSES: &[&str] = &["binary FBX", "ASCII FBX", "3DS"];

/// Every 3DS/PRJ file of the corpus but `wrong.3ds`, as the `load` bench finds them, by
/// path.
fn three_ds_class() -> Vec<(String, Vec<u8>)> {
    three_ds_files::files()
        .iter()
        .map(|f| (f.path.to_string_lossy().into_owned(), f.bytes.clone()))
        .collect()
}

/// The files of one class: (name, bytes).
fn class_files(class: &str) -> &'static [(String, Vec<u8>)] {
    static FILES: OnceLock<Vec<Vec<(String, Vec<u8>)>>> = OnceLock::new();
    let all = FILES.get_or_init(|| {
        let fbx = fbx_files::files();
        let binary = |b: &[u8]| b.starts_with(b"Kaydara FBX Binary");
        let pick = |want: bool| {
            fbx.iter()
                .filter(|(_, b)| binary(b) == want)
                .map(|(n, b)| (n.clone(), b.clone()))
                .collect::<Vec<_>>()
        };
        vec![pick(true), pick(false), three_ds_class()]
    });
    let i = CLASSES.iter().position(|&c| c == class).expect("a listed class");
    &all[i]
}

fn bytes_of(class: &str) -> usize {
    class_files(class).iter().map(|(_, b)| b.len()).sum()
}

fn load(name: &str, bytes: &[u8]) -> Option<Scene> {
    keyscene::load_bytes(bytes, Some(Path::new(name)), &ReadOptions::default()).ok().map(|r| r.0)
}

fn to_glb(scene: &Scene) -> usize {
    gltf::write(scene, &gltf::WriteOptions::default()).map_or(0, |f| f.main.len())
}

fn to_3da(scene: &Scene) -> usize {
    three_da::export(scene, &three_da::ExportOptions::default())
        .ok()
        .and_then(|(file, _, _)| three_da::write(&file).ok())
        .map_or(0, |b| b.len())
}

/// `load_bytes` of every file of the class.
#[divan::bench(args = CLASSES, sample_count = 10, sample_size = 1)]
fn load_only(bencher: Bencher, class: &str) {
    bencher.counter(BytesCount::new(bytes_of(class))).bench(|| {
        for (name, bytes) in class_files(class) {
            black_box(load(name, black_box(bytes)));
        }
    });
}

/// `load_bytes`, then the glTF writer to GLB bytes, of every file of the class.
#[divan::bench(args = CLASSES, sample_count = 10, sample_size = 1)]
fn load_and_glb(bencher: Bencher, class: &str) {
    bencher.counter(BytesCount::new(bytes_of(class))).bench(|| {
        for (name, bytes) in class_files(class) {
            black_box(load(name, black_box(bytes)).map(|s| to_glb(&s)));
        }
    });
}

/// `load_bytes`, then the 3DA exporter and writer, of every file of the class.
#[divan::bench(args = CLASSES, sample_count = 10, sample_size = 1)]
fn load_and_3da(bencher: Bencher, class: &str) {
    bencher.counter(BytesCount::new(bytes_of(class))).bench(|| {
        for (name, bytes) in class_files(class) {
            black_box(load(name, black_box(bytes)).map(|s| to_3da(&s)));
        }
    });
}

/// GLB of a generated chain of nodes (see [`chain`]), every node inheriting its parent's full
/// matrix (`RSrs`): each node's glTF TRS is its own, sampled from its own channels. The times
/// at 10,000 and at 100,000 nodes give the exponent.
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 5, sample_size = 1)]
fn chain_to_glb(bencher: Bencher, n: usize) {
    let scene = chain(n, InheritType::RSrs);
    bencher.bench(|| black_box(to_glb(black_box(&scene))));
}

/// The same chain with FBX's `RrSs` inheritance (what `synthetic_id_collision` has): each
/// node's glTF local comes from the evaluated world matrices, and with the root keyed every
/// node moves, so the scene is evaluated at every sample frame (101 here): the worst case,
/// frames × nodes.
#[divan::bench(args = [1_000, 10_000], sample_count = 3, sample_size = 1)]
fn chain_rrss_to_glb(bencher: Bencher, n: usize) {
    let scene = chain(n, InheritType::RrSs);
    bencher.bench(|| black_box(to_glb(black_box(&scene))));
}

/// The generated scenes of goal 2 by name, at ×1, ×2, ×4 of their base size: a chain of
/// 25,000 nodes (`RSrs`; to 100,000), 2,500 siblings (to 10,000), 25,000 frames (to 100,000)
/// and 250,000 triangles (to 1,000,000).
const GENERATED: &[&str] = &[
    "chain/25000",
    "chain/50000",
    "chain/100000",
    "siblings/2500",
    "siblings/5000",
    "siblings/10000",
    "frames/25000",
    "frames/50000",
    "frames/100000",
    "triangles/250000",
    "triangles/500000",
    "triangles/1000000",
];

fn generated_scene(arg: &str) -> Scene {
    let (kind, n) = arg.split_once('/').expect("KIND/SIZE");
    let n: usize = n.parse().expect("a size");
    match kind {
        "chain" => chain(n, InheritType::RSrs),
        "siblings" => generated::siblings(n),
        "frames" => generated::long_animation(n),
        _ => generated::grid_mesh(n),
    }
}

/// A generated scene to GLB bytes.
#[divan::bench(args = GENERATED, sample_count = 3, sample_size = 1)]
fn generated_to_glb(bencher: Bencher, arg: &str) {
    let scene = generated_scene(arg);
    bencher.bench(|| black_box(to_glb(black_box(&scene))));
}

/// A generated scene through the 3DA exporter and writer (the chains of more than 65,535
/// nodes are refused: 16-bit parent indices).
#[divan::bench(args = GENERATED, sample_count = 3, sample_size = 1)]
fn generated_to_3da(bencher: Bencher, arg: &str) {
    let scene = generated_scene(arg);
    bencher.bench(|| black_box(to_3da(black_box(&scene))));
}

/// `load_bytes` of the GLB keyscene writes of a generated scene.
#[divan::bench(args = GENERATED, sample_count = 3, sample_size = 1)]
fn generated_load_glb(bencher: Bencher, arg: &str) {
    let glb = gltf::write(&generated_scene(arg), &gltf::WriteOptions::default()).unwrap().main;
    bencher.counter(BytesCount::new(glb.len())).bench(|| black_box(load("g.glb", black_box(&glb))));
}

/// `load_bytes` of the binary FBX keyscene writes of a generated scene.
#[divan::bench(args = GENERATED, sample_count = 3, sample_size = 1)]
fn generated_load_fbx(bencher: Bencher, arg: &str) {
    let bytes = fbx::export::write(&generated_scene(arg), &Default::default()).unwrap().0;
    bencher
        .counter(BytesCount::new(bytes.len()))
        .bench(|| black_box(load("g.fbx", black_box(&bytes))));
}
