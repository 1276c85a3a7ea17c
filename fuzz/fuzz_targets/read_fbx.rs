//! Fuzz target for the FBX low-level reader, binary and ASCII.
//!
//! The input is handed to `formats::fbx::parse` as is: `parse` chooses binary (`Kaydara FBX
//! Binary` prefix) or ASCII, so seeding the fuzz corpus with both kinds of file fuzzes both
//! readers. Limits are tightened so that a mutated count cannot make a run slow: any array
//! the reader allocates is bounded by 64 MiB (the cap MANIFEST.md quotes for ufbx's fuzzing),
//! depth by 64.
//!
//! Seeds: `cp ../../shared/corpus/fbx/**/*.fbx corpus/read_fbx/`, then
//! `cargo fuzz run read_fbx`. On success the dump is built too, which reads every array.
#![no_main]

use keyscene::formats::fbx;
use keyscene::limits::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 64 << 20, max_elements: 1 << 24, max_depth: 64 };
    match fbx::parse(data, &limits) {
        Ok(doc) => {
            let _ = fbx::dump(&doc);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
