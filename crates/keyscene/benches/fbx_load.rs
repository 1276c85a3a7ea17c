//! FBX full load: keyscene (`keyscene::load_bytes`: parse, object graph, scene import with
//! animation) vs the `ufbx` crate (`ufbx::load_memory`, default options), same files, same
//! process, one thread; and keyscene's peak heap memory per load.
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench fbx_load
//! ```
//!
//! A further argument (`cargo bench … -- knight`) keeps only the files whose path contains it.
//!
//! Files: MANIFEST.md's benchmark files (`benches/common/fbx_files.rs`). Per file it prints
//! the best time of repeated loads (at least 5, about 0.4 s per side) as MB/s (MB = 10⁶ file
//! bytes) for both and the ratio (ufbx time ÷ keyscene time: above 1 keyscene is faster), then
//! totals over binary and over ASCII files.
//!
//! **Peak memory**: the global allocator is mimalloc (what the `keyscene` binary ships with)
//! behind a counter of live bytes; for each file the peak of live bytes during one
//! `load_bytes` (the input excluded: it is already in memory) is printed against the file size
//! plus its decoded arrays (every array value's bytes after inflating; since stop 29 the
//! parser keeps zlib arrays compressed and inflates each when it is read), with the ratio. ufbx allocates through C `malloc`, which the
//! counter does not see, so only keyscene's peak is reported. The counter costs two relaxed
//! atomic operations per allocation, charged to keyscene's times.

#[path = "common/fbx_files.rs"]
mod fbx_files;

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fbx_files::{best_time, Totals};

use keyscene::formats::fbx;
use keyscene::limits::Limits;

/// mimalloc with a count of live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn grew(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = INNER.alloc(l);
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = INNER.alloc_zeroed(l);
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        INNER.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = INNER.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                grew(new - l.size());
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn load(name: &str, bytes: &[u8]) -> keyscene::scene::Scene {
    keyscene::load_bytes(bytes, Some(Path::new(name)), &Default::default())
        .expect("benchmark file loads")
        .0
}

/// Bytes of every array of the file once decoded (inflated).
fn decoded_array_bytes(bytes: &[u8]) -> usize {
    let doc = fbx::parse(bytes, &Limits::default()).expect("benchmark file parses");
    doc.nodes()
        .flat_map(|n| n.properties().iter())
        .filter_map(|p| p.as_array())
        .map(|a| a.len() * a.ty().size())
        .sum()
}

/// Peak live heap bytes above the level before one load of `bytes`.
fn peak_of_load(name: &str, bytes: &[u8]) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    drop(black_box(load(name, bytes)));
    PEAK.load(Ordering::Relaxed) - before
}

fn main() {
    let files = fbx_files::files();
    if files.is_empty() {
        eprintln!("fbx_load bench: no corpus (set KEYSCENE_CORPUS); skipped, nothing measured");
        return;
    }
    println!(
        "{:<62} {:>6} {:>9} {:>9} {:>6}  {:>8} {:>8} {:>5}",
        "file", "KB", "ks MB/s", "ufbx MB/s", "ratio", "peak KB", "in+arr", "x"
    );
    let mut totals = Totals::default();
    let mut worst_memory = 0.0f64;
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    for (name, bytes) in files {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let ours = best_time(Duration::from_millis(400), 5, 2000, || {
            black_box(load(name, black_box(bytes)));
        });
        let theirs = best_time(Duration::from_millis(400), 5, 2000, || {
            black_box(
                ufbx::load_memory(black_box(bytes), ufbx::LoadOpts::default())
                    .expect("ufbx loads the benchmark file"),
            );
        });
        let peak = peak_of_load(name, bytes);
        let base = bytes.len() + decoded_array_bytes(bytes);
        let memory = peak as f64 / base as f64;
        worst_memory = worst_memory.max(memory);
        let mbs = |d: Duration| bytes.len() as f64 / d.as_secs_f64() / 1e6;
        println!(
            "{:<62} {:>6.0} {:>9.0} {:>9.0} {:>5.2}x  {:>8.0} {:>8.0} {:>5.2}",
            name,
            bytes.len() as f64 / 1e3,
            mbs(ours),
            mbs(theirs),
            theirs.as_secs_f64() / ours.as_secs_f64(),
            peak as f64 / 1e3,
            base as f64 / 1e3,
            memory
        );
        totals.add(bytes, ours, theirs);
    }
    totals.print();
    println!("peak memory: at most {worst_memory:.2}x (file + decoded arrays)");
}
