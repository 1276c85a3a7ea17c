//! Inputs the fuzzers (`fuzz/`) found crashing, kept so they stay fixed. Each must load as an
//! error or a scene — never a panic.
//!
//! - `glb_bad_version_*.bin`: GLB headers whose version and chunk lengths do not add up; the
//!   `gltf` crate 1.4 panicked on them (subtract with overflow in `binary.rs`) before keyscene
//!   checked the container itself (`formats::gltf::glb::split`).
//! - `glb_position_accessor_out_of_range.bin` (`read_gltf`): a primitive whose POSITION names
//!   an accessor past the list (the JSON's `accessors` key was mangled); gltf-json 1.4's
//!   validation indexed it before checking (`mesh.rs` `primitive_validate_hook`).
//! - `glb_chunk_header_past_declared_length.bin` (`read_gltf`, issue #17 §5): a GLB whose
//!   declared length ends inside a chunk header while the file goes on; keyscene's own
//!   container check (`formats::gltf::glb::split`) subtracted past zero in its error message.
//! - `fbx_ascii_version_past_u32.bin` (`read_3ds`, whose `load_bytes` sniffs it as ASCII FBX;
//!   2026-12-03): a `; FBX 6666666` comment line; the version (major × 1000) overflowed a u32
//!   in `fbx::ascii::comment_version`.

use std::path::Path;

#[test]
fn fuzzer_crash_inputs_load_as_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let r = keyscene::load_bytes(&bytes, None, &keyscene::ReadOptions::default());
        assert!(r.is_err(), "{} is not a valid scene", path.display());
        seen += 1;
    }
    assert_eq!(seen, 5, "every recorded crash input was tried");
}
