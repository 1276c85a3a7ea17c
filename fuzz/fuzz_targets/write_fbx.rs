//! Fuzz target for the FBX writer's round trip: any input keyscene loads is written as FBX and
//! must read back.
//!
//! The input goes to `keyscene::load_bytes` with no file name, so the format is chosen from the
//! bytes (3DS/PRJ, FBX, glTF/GLB, 3DA): seed with small files of every kind. Bit 0 of the
//! input's last byte chooses the flavour: 0 binary (7400), 1 ASCII; so the same seeds fuzz
//! both writers. Where a scene loads, `formats::fbx::export::write` must either refuse it in
//! words (a `WriteError`: a resampled curve past `max_keys`, say) or give bytes that
//! `keyscene::load_bytes` reads back without error, with one node per `Model` written
//! (`Report::models`, which is the source's node count: every node is a `Model`).
//! Any other outcome panics, which libFuzzer records as a crash.
//!
//! Limits are tightened as in `read_fbx` (64 MiB arrays, depth 64), and resampling is capped
//! at 4096 keys per curve so that a mutated frame range cannot make one run slow.
#![no_main]

use keyscene::formats::fbx::export::{self, WriteOptions};
use keyscene::limits::Limits;
use keyscene::ReadOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 64 << 20, max_elements: 1 << 24, max_depth: 64 };
    let opts = ReadOptions::default().limits(limits);
    let Ok((scene, _)) = keyscene::load_bytes(data, None, &opts) else { return };
    let ascii = data.last().is_some_and(|b| b & 1 == 1);
    // `WriteOptions` is non-exhaustive: set the fields on the default.
    let mut wopts = WriteOptions::default();
    wopts.ascii = ascii;
    wopts.max_keys = 4096;
    let Ok((bytes, report)) = export::write(&scene, &wopts) else { return };
    let (back, _) = match keyscene::load_bytes(&bytes, None, &opts) {
        Ok(loaded) => loaded,
        Err(e) => panic!("the written FBX (ascii: {ascii}) does not read back: {e}"),
    };
    assert_eq!(
        back.nodes.len(),
        report.models,
        "{} Models written, {} nodes read back (ascii: {ascii})",
        report.models,
        back.nodes.len()
    );
    back.validate().expect("the written FBX reads back as a consistent scene");
});
