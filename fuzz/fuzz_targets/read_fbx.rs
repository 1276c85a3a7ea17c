//! Fuzz target for the FBX reader, binary and ASCII: parser, object graph and scene import.
//!
//! The input is handed to `formats::fbx::parse` as is: `parse` chooses binary (`Kaydara FBX
//! Binary` prefix) or ASCII, so seeding the fuzz corpus with both kinds of file fuzzes both
//! readers. Limits are tightened so that a mutated count cannot make a run slow: any array
//! the reader allocates is bounded by 64 MiB (the cap MANIFEST.md quotes for ufbx's fuzzing),
//! depth by 64. On success the dump is built (it reads every array), then the object graph
//! and the scene import run on the same tree, and the scene is posed at frame 0 of its first
//! animation.
//!
//! Seeds: `seeds/read_fbx/` holds small ASCII files (FBX 7 records and arrays, FBX 6 bare
//! lists and takes, FBX 5 top-level models) so the ASCII reader is fuzzed from the start; add
//! the corpus for binary ones: `mkdir -p corpus/read_fbx && cp ../../shared/corpus/fbx/**/*.fbx
//! corpus/read_fbx/`, then
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run read_fbx corpus/read_fbx seeds/read_fbx`.
#![no_main]

use keyscene::anim::Time;
use keyscene::formats::fbx;
use keyscene::limits::Limits;
use keyscene::ReadOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 64 << 20, max_elements: 1 << 24, max_depth: 64 };
    match fbx::parse(data, &limits) {
        Ok(doc) => {
            let _ = fbx::dump(&doc);
            if let Ok(graph) = fbx::objects::ObjectGraph::new(&doc) {
                let opts = ReadOptions::default().limits(limits);
                let (scene, _, _) = fbx::import::import(&graph, &opts);
                let _ = scene.evaluate(Some(0), Time::Frame(0.0));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
