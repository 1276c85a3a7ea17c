//! Conversion against loading, file by file (issue #16 goal 1: "no corpus file above 5×";
//! issue 37 goals 1 and 4: every writer, per class and per file): for each file the best time
//! of `load_bytes` alone and of `load_bytes` then a writer to bytes in memory, and the ratios
//! conversion ÷ load. The writers, each with default options as the CLI's `convert` uses them:
//! - `glb`: the glTF writer to GLB bytes;
//! - `3da`: the 3DA exporter and writer (as the `convert` bench);
//! - `usda`: the USD writer's `.usda` layer (issue 34: at most 2× the load);
//! - `fbx`: the binary FBX 7.4 writer (`fbx::export::write`, every animation);
//! - `3ds`: the 3DS writer (`three_ds::export::write`, the first animation; 3DS sources keep
//!   their keys, other sources are resampled);
//! - `obj`: the OBJ and MTL texts (`obj::write`, the geometry as stored, no pose).
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench convert_files
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- --all   # every file
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- maze    # paths with "maze"
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- --to=glb maze  # one writer
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- --to=fbx,3ds   # two
//! ```
//!
//! `--to=W[,W…]` times only those writers (`glb`, `3da`, `usda`, `fbx`, `3ds`, `obj`); without
//! `--to` GLB and 3DA are timed, as before issue 34. One writer keeps a `perf record` of the
//! bench binary on it; `--budget=MS` sets the time per side.
//!
//! Files: by default the benchmark files (MANIFEST.md's FBX list and every 3DS/PRJ file, the
//! `convert` bench's classes); with `--all`, every `.fbx`, `.3ds` and `.prj` file under the
//! corpus (the whole measure of how conversion scales on files nobody tuned for). Each side
//! runs at least 3 times and about 0.2 s (`--all`: 0.05 s). A file that fails to load is
//! listed as such; a writer that refuses a file costs its refusal. Rows are sorted by the first
//! writer's ratio, worst last; then per class (binary FBX, ASCII FBX, 3DS) the summed times,
//! each writer's summed ratio, and how many files are above 2× and 5× with any timed writer.

#[path = "common/fbx_files.rs"]
#[allow(dead_code)]
mod fbx_files;
#[path = "common/three_ds_files.rs"]
#[allow(dead_code)]
mod three_ds_files;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fbx_files::best_time;
use keyscene::formats::{fbx, gltf, obj, three_da, three_ds, usd};
use keyscene::scene::Scene;
use keyscene::ReadOptions;

/// The allocator the `keyscene` binary ships with.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

fn to_usda(scene: &Scene) -> usize {
    usd::write(scene, &usd::WriteOptions::default()).map_or(0, |l| l.text.len())
}

fn to_fbx(scene: &Scene) -> usize {
    fbx::export::write(scene, &fbx::export::WriteOptions::default()).map_or(0, |(b, _)| b.len())
}

fn to_3ds(scene: &Scene) -> usize {
    three_ds::export::write(scene, &three_ds::export::WriteOptions::default())
        .map_or(0, |(b, _)| b.len())
}

fn to_obj(scene: &Scene) -> usize {
    obj::write(scene, None, "scene.mtl").map_or(0, |t| t.obj.len() + t.mtl.len())
}

/// A writer `--to` can name: its name there, what the table calls it, and the writer (scene →
/// bytes written, in memory).
type Writer = (&'static str, &'static str, fn(&Scene) -> usize);

/// The writers `--to` can name.
const WRITERS: &[Writer] = &[
    ("glb", "GLB", to_glb),
    ("3da", "3DA", to_3da),
    ("usda", "USDA", to_usda),
    ("fbx", "FBX", to_fbx),
    ("3ds", "3DS", to_3ds),
    ("obj", "OBJ", to_obj),
];

/// The benchmark class of a file (`docs/benchmarks.md`'s names).
fn class_of(name: &str, bytes: &[u8]) -> &'static str {
    if !name.to_ascii_lowercase().ends_with(".fbx") {
        "3DS"
    } else if bytes.starts_with(b"Kaydara FBX Binary") {
        "binary FBX"
    } else {
        "ASCII FBX"
    }
}

/// Every `.fbx`, `.3ds`, `.prj` file under `root`, sorted, as (path relative to `root`, path).
fn all_files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
            if matches!(ext.as_str(), "fbx" | "3ds" | "prj") {
                let name = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().into_owned();
                out.push((name, p));
            }
        }
    }
    out.sort();
    out
}

struct Row {
    name: String,
    class: &'static str,
    load: Duration,
    /// Load + writer, per timed writer.
    with: Vec<Duration>,
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    let to = args.iter().find_map(|a| a.strip_prefix("--to=")).unwrap_or("glb,3da");
    let budget_ms = args.iter().find_map(|a| a.strip_prefix("--budget=")?.parse::<u64>().ok());
    let writers: Vec<_> = to
        .split(',')
        .filter_map(|w| {
            let found = WRITERS.iter().find(|(k, _, _)| *k == w);
            if found.is_none() {
                eprintln!("convert_files bench: no writer {w:?} (glb, 3da, usda, fbx, 3ds, obj)");
            }
            found
        })
        .collect();
    let Some(corpus) = three_ds_files::corpus() else {
        eprintln!(
            "convert_files bench: no corpus (set KEYSCENE_CORPUS); skipped, nothing measured"
        );
        return;
    };
    let files: Vec<(String, Vec<u8>)> = if all {
        all_files(&corpus)
            .into_iter()
            .filter_map(|(n, p)| std::fs::read(&p).ok().map(|b| (n, b)))
            .collect()
    } else {
        let fbx = fbx_files::files().iter().map(|(n, b)| (format!("fbx/{n}"), b.clone()));
        let tds =
            three_ds_files::files().iter().map(|f| (format!("3ds/{}", f.name), f.bytes.clone()));
        fbx.chain(tds).collect()
    };
    let budget = Duration::from_millis(budget_ms.unwrap_or(if all { 50 } else { 200 }));
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (name, bytes) in &files {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        if load(name, bytes).is_none() {
            failed.push(name.clone());
            continue;
        }
        let time = |f: &dyn Fn()| best_time(budget, 3, 10_000, f);
        let load_t = time(&|| {
            black_box(load(name, black_box(bytes)));
        });
        let with = writers
            .iter()
            .map(|(_, _, write)| {
                time(&|| {
                    black_box(load(name, black_box(bytes)).map(|s| write(&s)));
                })
            })
            .collect();
        rows.push(Row { name: name.clone(), class: class_of(name, bytes), load: load_t, with });
    }
    let key = |r: &Row| r.with.first().map_or(0.0, |&w| ratio(w, r.load));
    rows.sort_by(|a, b| key(a).total_cmp(&key(b)));
    print_rows(&rows, &writers);
    if !failed.is_empty() {
        println!("not loaded ({}): {}", failed.len(), failed.join(", "));
    }
}

/// The table, file by file, then the class totals.
fn print_rows(rows: &[Row], writers: &[&Writer]) {
    let mut head = format!("{:<64} {:>9}", "file", "load ms");
    for (_, w, _) in writers {
        head += &format!(" {:>9}", format!("+{w} ms"));
    }
    for (_, w, _) in writers {
        head += &format!(" {:>7}", format!("{w} ×"));
    }
    println!("{head}");
    for r in rows {
        let mut line = format!("{:<64} {:>9.3}", r.name, ms(r.load));
        for w in &r.with {
            line += &format!(" {:>9.3}", ms(*w));
        }
        for w in &r.with {
            line += &format!(" {:>7.2}", ratio(*w, r.load));
        }
        println!("{line}");
    }
    for class in ["binary FBX", "ASCII FBX", "3DS"] {
        let of: Vec<&Row> = rows.iter().filter(|r| r.class == class).collect();
        if of.is_empty() {
            continue;
        }
        let load: Duration = of.iter().map(|r| r.load).sum();
        let mut line = format!("total {class} ({} files): load {:.2} ms", of.len(), ms(load));
        for (i, (_, w, _)) in writers.iter().enumerate() {
            let with: Duration = of.iter().map(|r| r.with[i]).sum();
            let worst = of.iter().map(|r| ratio(r.with[i], r.load)).fold(0.0, f64::max);
            line += &format!(
                ", +{w} {:.2} ms ({:.2}×, worst file {worst:.2}×)",
                ms(with),
                ratio(with, load)
            );
        }
        let above =
            |k: f64| of.iter().filter(|r| r.with.iter().any(|&w| ratio(w, r.load) > k)).count();
        line += &format!("; above 2×: {}, above 5×: {}", above(2.0), above(5.0));
        println!("{line}");
    }
}
