//! Hostile 3DS input: every corpus 3DS/PRJ file cut at ≥ 64 offsets and with deterministic
//! random byte flips, plus synthetic chunk trees from a property test. Each must give `Ok` or
//! `Err` — never a panic or a hang — and what loads must be a valid scene that evaluates.

mod common;

use std::path::Path;

use keyscene::anim::Time;
use keyscene::ReadOptions;
use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;

fn read(bytes: &[u8]) {
    let opts = ReadOptions::default();
    if let Ok((scene, _)) = keyscene::formats::three_ds::read(bytes, &opts) {
        scene.validate().expect("a loaded scene is valid");
        let f = scene.meta.frame_range.map_or(0.0, |r| r.1 * 0.5);
        let _ = scene.evaluate(Some(0), Time::Frame(f));
    }
}

fn cut_and_flip(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let n = bytes.len();
    // 64 evenly spread cuts plus every cut in the first 64 bytes.
    let mut cuts: Vec<usize> = (0..64).map(|i| i * n / 64).collect();
    cuts.extend(0..n.min(64));
    for c in cuts {
        read(&bytes[..c]);
    }
    let mut rng = common::Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    for round in 0..64 {
        let mut b = bytes.clone();
        let flips = 1 + round % 8;
        for _ in 0..flips {
            let i = (rng.next() % n as u64) as usize;
            b[i] ^= 1 << (rng.next() % 8);
        }
        read(&b);
        // Also a random 32-bit length somewhere.
        let i = (rng.next() % n.saturating_sub(4).max(1) as u64) as usize;
        let mut b = bytes.clone();
        if i + 4 <= n {
            b[i..i + 4].copy_from_slice(&(rng.next() as u32).to_le_bytes());
        }
        read(&b);
    }
    Ok(())
}

fn chunk(id: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = id.to_le_bytes().to_vec();
    v.extend_from_slice(&((payload.len() + 6) as u32).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

/// Ids the reader decodes, so generated trees reach the typed decoders.
const IDS: &[u16] = &[
    0x3D3D, 0x4000, 0x4100, 0x4110, 0x4120, 0x4130, 0x4150, 0x4140, 0x4160, 0x4600, 0x4610, 0x4700,
    0xAFFF, 0xA000, 0xA010, 0x0011, 0x0030, 0xA200, 0xA300, 0xB000, 0xB002, 0xB003, 0xB004, 0xB00A,
    0xB008, 0xB010, 0xB011, 0xB013, 0xB020, 0xB021, 0xB022, 0xB026, 0xB029, 0xB030, 0x0000,
];

fn tree() -> impl Strategy<Value = Vec<u8>> {
    let leaf = (prop::sample::select(IDS), prop::collection::vec(any::<u8>(), 0..40))
        .prop_map(|(id, data)| chunk(id, &data));
    leaf.prop_recursive(5, 64, 6, |inner| {
        (
            prop::sample::select(IDS),
            prop::collection::vec(any::<u8>(), 0..8),
            prop::collection::vec(inner, 0..6),
        )
            .prop_map(|(id, prefix, kids)| {
                let mut p = prefix;
                for k in kids {
                    p.extend(k);
                }
                chunk(id, &p)
            })
    })
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = match &corpus {
        Some(dir) => common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"]),
        None => Vec::new(),
    };
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let parent = f.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        trials.push(common::corpus_trial(
            format!("cut_and_flip {parent}/{name}"),
            &corpus,
            move |_| cut_and_flip(&f),
        ));
    }
    trials.push(Trial::test("synthetic_chunk_trees_never_panic", || {
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 2000,
            failure_persistence: None,
            ..Default::default()
        });
        runner
            .run(&(tree(), any::<bool>()), |(body, prj)| {
                let root = if prj { 0xC23D } else { 0x4D4D };
                read(&chunk(root, &body));
                Ok(())
            })
            .map_err(|e| Failed::from(e.to_string()))
    }));
    trials.push(Trial::test("root_id_then_arbitrary_bytes_never_panics", || {
        // Found by hand: a root chunk declaring a length below its 6-byte header panicked.
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 4000,
            failure_persistence: None,
            ..Default::default()
        });
        runner
            .run(
                &(any::<bool>(), 0u32..128, prop::collection::vec(any::<u8>(), 0..96)),
                |(prj, len, rest)| {
                    // Small declared lengths: shorter than the header, than the data, or longer.
                    let mut bytes = if prj { vec![0x3D, 0xC2] } else { vec![0x4D, 0x4D] };
                    bytes.extend(len.to_le_bytes());
                    bytes.extend(rest);
                    read(&bytes);
                    Ok(())
                },
            )
            .map_err(|e| Failed::from(e.to_string()))
    }));
    trials.push(Trial::test("synthetic_trees_with_overwritten_bytes_never_panic", || {
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 2000,
            failure_persistence: None,
            ..Default::default()
        });
        let edits = prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8);
        runner
            .run(&(tree(), edits), |(body, edits)| {
                let mut bytes = chunk(0x4D4D, &body);
                for (at, b) in edits {
                    let i = at.index(bytes.len());
                    bytes[i] = b;
                }
                read(&bytes);
                Ok(())
            })
            .map_err(|e| Failed::from(e.to_string()))
    }));
    common::run(trials);
}
