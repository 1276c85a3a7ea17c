//! Fuzz target for the glTF reader (`.glb` and `.gltf` JSON): `load_bytes` picks the glTF
//! reader by the `glTF` magic or a JSON `{`; a scene that loads is posed at the first, middle
//! and last frame of its first animation, with every mesh node's world positions computed.
//!
//! Seeds: `seeds/read_gltf/` holds small GLBs keyscene wrote from corpus files (a textured
//! 3DS, a skinned and a blend-shaped FBX) and a `.gltf` JSON, so the structure is there from the
//! start. `RUSTC_BOOTSTRAP=1 cargo fuzz run read_gltf corpus/read_gltf seeds/read_gltf`.
#![no_main]

use keyscene::anim::Time;
use keyscene::limits::Limits;
use keyscene::ReadOptions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_bytes: 64 << 20, max_elements: 1 << 24, max_depth: 64 };
    let opts = ReadOptions::default().limits(limits);
    let Ok((scene, _)) = keyscene::formats::gltf::read(data, &opts) else { return };
    let frames = match scene.animations.first() {
        Some(a) => {
            vec![a.frame_range.0, (a.frame_range.0 + a.frame_range.1) / 2.0, a.frame_range.1]
        }
        None => vec![0.0],
    };
    for f in frames {
        let pose = scene.evaluate(scene.animations.first().map(|_| 0), Time::Frame(f));
        for n in 0..scene.nodes.len() {
            if scene.nodes[n].mesh.is_some() {
                let _ = pose.world_positions(&scene, n);
            }
        }
    }
});
