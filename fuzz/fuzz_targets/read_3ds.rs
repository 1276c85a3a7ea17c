//! Fuzz target: any bytes given to the 3DS reader must give a scene or an error — never a
//! panic, a hang or an allocation beyond `Limits` — and a scene it gives must evaluate.
//!
//! ```text
//! cargo +nightly fuzz run read_3ds -- -max_len=65536
//! ```
//! Seed it with the corpus: `cp ../shared/corpus/3ds/*/*.3ds fuzz/corpus/read_3ds/`.
#![no_main]

use std::path::Path;

use keyscene::anim::Time;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = keyscene::ReadOptions::default();
    // The `.3ds` name makes load_bytes take the 3DS reader even where the root chunk id is
    // wrong, so the reader's own checks are what is fuzzed.
    if let Ok((scene, _warnings)) = keyscene::load_bytes(data, Some(Path::new("fuzz.3ds")), &opts) {
        scene.validate().expect("readers return a consistent scene");
        let anim = (!scene.animations.is_empty()).then_some(0);
        let (a, b) = scene.animations.first().map(|a| a.frame_range).unwrap_or((0.0, 0.0));
        for frame in [a, 0.5 * (a + b), b] {
            let pose = scene.evaluate(anim, Time::Frame(frame));
            for node in 0..scene.nodes.len() {
                let _ = pose.world_positions(&scene, node);
            }
        }
    }
});
