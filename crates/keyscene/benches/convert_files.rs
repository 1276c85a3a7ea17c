//! Conversion against loading, file by file (issue #16 goal 1: "no corpus file above 5×"):
//! for each file the best time of `load_bytes` alone, of `load_bytes` then the glTF writer to
//! GLB bytes in memory, of `load_bytes` then the 3DA exporter and writer in memory (default
//! options, as the `convert` bench), and of `load_bytes` then the USD writer's `.usda` layer in
//! memory (issue 34: at most 2× the load), and the ratios conversion ÷ load.
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench convert_files
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- --all   # every file
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- maze    # paths with "maze"
//! KEYSCENE_CORPUS=… cargo bench -p keyscene --bench convert_files -- --to=glb maze  # one writer
//! ```
//!
//! `--to=glb`, `--to=3da` or `--to=usda` times only that writer (the other columns read 0;
//! without `--to` GLB and 3DA are timed, USDA is not, as before issue 34), which keeps a
//! `perf record` of the bench binary on one writer; `--budget=MS` sets the time per side.
//!
//! Files: by default the benchmark files (MANIFEST.md's FBX list and every 3DS/PRJ file, the
//! `convert` bench's classes); with `--all`, every `.fbx`, `.3ds` and `.prj` file under the
//! corpus (the whole measure of how conversion scales on files nobody tuned for). Each side
//! runs at least 3 times and about 0.2 s (`--all`: 0.05 s). A file that fails to load is
//! listed as such; a writer that refuses a file costs its refusal. Rows are sorted by the GLB
//! ratio, worst last, then the summed times and the count above 2× and 5× are printed.

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
use keyscene::formats::{gltf, three_da, usd};
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
    load: Duration,
    glb: Duration,
    three_da: Duration,
    usda: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    let to = args.iter().find_map(|a| a.strip_prefix("--to=")).unwrap_or("");
    let budget_ms = args.iter().find_map(|a| a.strip_prefix("--budget=")?.parse::<u64>().ok());
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
        let glb_t = if to.is_empty() || to == "glb" {
            time(&|| {
                black_box(load(name, black_box(bytes)).map(|s| to_glb(&s)));
            })
        } else {
            Duration::ZERO
        };
        let tda_t = if to.is_empty() || to == "3da" {
            time(&|| {
                black_box(load(name, black_box(bytes)).map(|s| to_3da(&s)));
            })
        } else {
            Duration::ZERO
        };
        let usda_t = if to == "usda" {
            time(&|| {
                black_box(load(name, black_box(bytes)).map(|s| to_usda(&s)));
            })
        } else {
            Duration::ZERO
        };
        rows.push(Row {
            name: name.clone(),
            load: load_t,
            glb: glb_t,
            three_da: tda_t,
            usda: usda_t,
        });
    }
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let key = |r: &Row| if to == "usda" { ratio(r.usda, r.load) } else { ratio(r.glb, r.load) };
    rows.sort_by(|a, b| key(a).total_cmp(&key(b)));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{:<64} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "file", "load ms", "+GLB ms", "+3DA ms", "+USDA ms", "GLB ×", "3DA ×", "USDA ×"
    );
    for r in &rows {
        println!(
            "{:<64} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.2} {:>7.2} {:>7.2}",
            r.name,
            ms(r.load),
            ms(r.glb),
            ms(r.three_da),
            ms(r.usda),
            ratio(r.glb, r.load),
            ratio(r.three_da, r.load),
            ratio(r.usda, r.load)
        );
    }
    for class in ["fbx/", "3ds/"] {
        let of: Vec<&Row> = rows.iter().filter(|r| r.name.starts_with(class)).collect();
        if of.is_empty() {
            continue;
        }
        let sum = |f: fn(&Row) -> Duration| of.iter().map(|r| f(r)).sum::<Duration>();
        let (l, g, t, u) = (sum(|r| r.load), sum(|r| r.glb), sum(|r| r.three_da), sum(|r| r.usda));
        let above = |k: f64| {
            of.iter()
                .filter(|r| {
                    ratio(r.glb, r.load) > k
                        || ratio(r.three_da, r.load) > k
                        || ratio(r.usda, r.load) > k
                })
                .count()
        };
        println!(
            "total {class:<5} {} files: load {:.2} ms, +GLB {:.2} ms ({:.2}×), +3DA {:.2} ms ({:.2}×), \
             +USDA {:.2} ms ({:.2}×); above 2×: {}, above 5×: {}",
            of.len(),
            ms(l),
            ms(g),
            ratio(g, l),
            ms(t),
            ratio(t, l),
            ms(u),
            ratio(u, l),
            above(2.0),
            above(5.0)
        );
    }
    if !failed.is_empty() {
        println!("not loaded ({}): {}", failed.len(), failed.join(", "));
    }
}
