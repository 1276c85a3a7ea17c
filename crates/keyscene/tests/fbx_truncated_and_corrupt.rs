//! Every corpus FBX file cut short and with bytes flipped: `formats::fbx::parse` returns `Ok`
//! or a typed `Err`, never panics, and stays fast; whatever parses is also imported
//! (`formats::fbx::read`), must give a scene that passes `Scene::validate`, and is posed and
//! written as OBJ without panicking (a time bound per file catches hangs and
//! runaway allocation that would page).
//!
//! Cuts: 64 offsets spread evenly over the file plus the first 64 bytes one by one (header
//! fields). Flips: 64 single-byte XORs at positions and masks from a fixed xorshift seed,
//! applied one at a time, and 16 copies with 8 flips each. Deterministic: a failure names
//! the file and the offset to reproduce it.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use keyscene::formats::fbx;
use keyscene::limits::Limits;
use keyscene::ReadOptions;
use libtest_mimic::Failed;

/// Cut offsets per file (besides the first 64 bytes).
const CUTS: usize = 64;
/// Single-byte flips per file.
const FLIPS: usize = 64;
/// Multi-flip copies per file.
const MULTI: usize = 16;

/// Tighter limits than the defaults, as a fuzzing host would set: still far above any corpus
/// array.
fn limits() -> Limits {
    Limits { max_bytes: 256 << 20, ..Limits::default() }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn try_parse(bytes: &[u8], what: &str) -> Result<(), Failed> {
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(|| match fbx::parse(bytes, &limits()) {
        // Touch the result so lazily decoded data is exercised too.
        Ok(doc) => {
            let opts = ReadOptions::default().limits(limits());
            match fbx::read(bytes, &opts) {
                Ok((scene, _)) => {
                    scene.validate().map_err(|e| e.to_string())?;
                    let pose = scene.evaluate(None, keyscene::anim::Time::Frame(0.0));
                    let obj = keyscene::formats::obj::write(&scene, Some(&pose), "x.mtl")
                        .map_err(|e| e.to_string())?;
                    Ok::<usize, String>(fbx::dump(&doc).len() + obj.obj.len())
                }
                Err(e) => Ok(e.to_string().len()),
            }
        }
        Err(e) => Ok(e.to_string().len()),
    });
    match outcome {
        Err(_) => return Err(format!("{what}: panicked").into()),
        Ok(Err(e)) => return Err(format!("{what}: {e}").into()),
        Ok(Ok(_)) => {}
    }
    let took = start.elapsed();
    if took > Duration::from_secs(2) {
        return Err(format!("{what}: took {took:?}").into());
    }
    Ok(())
}

fn check(path: &Path, rel: &str) -> Result<(), Failed> {
    let bytes = std::fs::read(path).map_err(|e| format!("{rel}: {e}"))?;
    let n = bytes.len();
    let mut cuts: Vec<usize> = (0..n.min(64)).collect();
    cuts.extend((1..=CUTS).map(|i| i * n / (CUTS + 1)));
    for cut in cuts {
        try_parse(&bytes[..cut], &format!("{rel} cut at {cut}"))?;
    }
    if n == 0 {
        return Ok(());
    }
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    let mut copy = bytes.clone();
    for _ in 0..FLIPS {
        let at = (rng.next() % n as u64) as usize;
        let mask = (rng.next() % 255 + 1) as u8;
        copy[at] ^= mask;
        try_parse(&copy, &format!("{rel} byte {at} ^= {mask:#04x}"))?;
        copy[at] ^= mask;
    }
    for round in 0..MULTI {
        let mut flips = Vec::new();
        for _ in 0..8 {
            let at = (rng.next() % n as u64) as usize;
            let mask = (rng.next() % 255 + 1) as u8;
            copy[at] ^= mask;
            flips.push((at, mask));
        }
        try_parse(&copy, &format!("{rel} multi-flip round {round} {flips:?}"))?;
        copy.copy_from_slice(&bytes);
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let files = corpus
        .as_ref()
        .map(|c| common::files_with_ext(&c.join("fbx"), &["fbx"]))
        .unwrap_or_default();
    let mut trials = Vec::new();
    for path in files {
        let dir = corpus.clone().unwrap().join("fbx");
        let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        trials.push(common::corpus_trial(format!("cut_and_flip::{rel}"), &corpus, move |_| {
            check(&path, &rel)
        }));
    }
    common::run(trials)
}
