//! Loading and posing from Rust, file by file: the reference the Python package is measured
//! against (issue 32: `keyscene.load` + `Scene.pose` from Python within 1.1× of the library).
//! For each benchmark file (MANIFEST.md's FBX list, `common/fbx_files.rs`) the best time of
//! `keyscene::load(path)` followed by `Scene::pose` at the middle of the first animation's
//! range — what `keyscene.load(path).pose(frame=mid)` does — printed as one JSON object
//! `{"file": seconds, …}` on stdout so that `crates/keyscene-py/benches/bench_python.py` reads
//! it and times the same calls through Python in the same run.
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench load_pose
//! ```

#[path = "common/fbx_files.rs"]
#[allow(dead_code)]
mod fbx_files;

use std::time::Duration;

use keyscene::anim::{PoseOptions, Time};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let files = fbx_files::files();
    let root = match std::env::var_os("KEYSCENE_CORPUS") {
        Some(d) => std::path::PathBuf::from(d).join("fbx"),
        None => {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/fbx")
        }
    };
    let mut out = serde_json::Map::new();
    for name in files.keys() {
        let path = root.join(name);
        let Ok((scene, _)) = keyscene::load(&path) else { continue };
        let mid =
            scene.animations.first().map_or(0.0, |a| (a.frame_range.0 + a.frame_range.1) / 2.0);
        let t = fbx_files::best_time(Duration::from_millis(400), 5, 1000, || {
            let (scene, _) = keyscene::load(&path).expect("loaded once already");
            let opts = PoseOptions::default().at(Time::Frame(mid));
            std::hint::black_box(scene.pose(&opts).expect("first animation").0);
        });
        out.insert(name.clone(), serde_json::json!(t.as_secs_f64()));
    }
    println!("{}", serde_json::Value::Object(out));
}
