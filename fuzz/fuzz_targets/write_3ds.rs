//! Fuzz target for the 3DS writer's round trip: any input keyscene loads is written as 3DS and
//! must read back.
//!
//! The input goes to `keyscene::load_bytes` with no file name, so the format is chosen from the
//! bytes (3DS/PRJ, FBX, glTF/GLB, 3DA): seed with small files of every kind. Bit 0 of the
//! input's last byte chooses `exact_three_ds` (0: a 3DS source's keys written exactly, the
//! default; 1: every source resampled on integer frames). Where a scene loads,
//! `formats::three_ds::export::write` must either refuse it in words (a `WriteError`: a
//! resampled range past `max_frames`, a chunk past 2³²−1 bytes) or give bytes that the chunk
//! lint (`three_ds::write::lint`) accepts and `three_ds::read` reads back without error, with
//! one node per keyframer node written (`Report::node_sources`). Any other outcome panics,
//! which libFuzzer records as a crash.
//!
//! Limits are tightened as in `read_fbx` (64 MiB arrays, depth 64), and resampling is capped
//! at 4096 frames so that a mutated frame range cannot make one run slow.
#![no_main]

use keyscene::formats::three_ds::{self, export, write};
use keyscene::limits::Limits;
use keyscene::ReadOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 64 << 20, max_elements: 1 << 24, max_depth: 64 };
    let opts = ReadOptions::default().limits(limits);
    let Ok((scene, _)) = keyscene::load_bytes(data, None, &opts) else { return };
    let exact = data.last().is_some_and(|b| b & 1 == 0);
    let wopts = export::WriteOptions {
        max_frames: 4096,
        exact_three_ds: exact,
        copy_textures: false,
        ..export::WriteOptions::default()
    };
    let Ok((bytes, report)) = export::write(&scene, &wopts) else { return };
    if let Err((at, what)) = write::lint(&bytes, &export::container_head) {
        panic!("the written 3DS fails the chunk lint at byte {at:#x}: {what}");
    }
    let back = match three_ds::read(&bytes, &opts) {
        Ok((back, _)) => back,
        Err(e) => panic!("the written 3DS (exact: {exact}) does not read back: {e}"),
    };
    assert_eq!(
        back.nodes.len(),
        report.node_sources.len(),
        "{} keyframer nodes written, {} read back (exact: {exact})",
        report.node_sources.len(),
        back.nodes.len()
    );
    back.validate().expect("the written 3DS reads back as a consistent scene");
});
