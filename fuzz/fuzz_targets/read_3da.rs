//! Fuzz target: the 3DA reader and `check` must never panic, hang or over-allocate on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = keyscene::formats::three_da::check(data);
    let _ = keyscene::load_bytes(data, None, &keyscene::ReadOptions::default());
});
