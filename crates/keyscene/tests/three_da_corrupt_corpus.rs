//! Corrupted 3DA files made from the corpus (issue #4, Done-when 5). Every 3DS corpus file and
//! every FBX corpus file with a mesh is converted to 3DA in memory (`three_da::export` +
//! `write`); one trial per source file then corrupts the bytes three ways:
//!
//! 1. **Truncation** at 64 offsets spread over the file (and at the header's end): `check`
//!    reports an error. (`read` may still load a file cut inside its collision map: the map
//!    is dropped with a warning, the model is usable.)
//! 2. **Byte flips**: 128 random bytes (a fixed seed per file) XOR-ed with a random non-zero
//!    value, one at a time: nothing panics, and where `read` refuses the bytes, `check` has an
//!    error.
//! 3. **Offsets re-pointed**: every offset field of the file's layout as docs/3da.md tables
//!    it — the header's material, first-entity and collision-map offsets; per entity (first 16)
//!    `surfaces_offset`, the three track offsets and `next_offset`; per surface (first 16 of
//!    those entities) the index-table, stream and `next_offset` fields; per track
//!    `m_offset_keys` and an EULER track's sub-track offsets; the collision map's tree
//!    offsets — set in turn to the file length (past the end), `0xFFFF_FFF0` and the field's
//!    own offset (pointing at itself). `check` reports an error and `read`/`load_bytes` do not
//!    panic. A field re-pointed to its own offset where the bytes there happen to be valid for
//!    the target (possible only for a stream whose bytes are then its own record) must still
//!    be reported, as an offset into a record.
//!
//! Converted files over 8 MiB are skipped, and a file's corruptions stop after 60 s (both
//! printed). Each corrupted file is checked and read under `std::panic::catch_unwind` and a time limit
//! per file (no loop): a panic or a check/read taking more than 10 s fails the trial.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use keyscene::formats::three_da;
use keyscene::limits::Limits;
use libtest_mimic::Failed;

/// Truncation offsets per file.
const CUTS: usize = 64;
/// Byte flips per file.
const FLIPS: usize = 128;
/// Entities (and surfaces per entity) whose offsets are re-pointed.
const MAX_RECORDS: usize = 16;
/// Converted files larger than this are not corrupted (each probe parses the whole file;
/// `maya_long_keyframes` resamples 5,000,000 frames).
const MAX_BYTES: usize = 8 << 20;
/// Time per file for the corruptions (`maya_ngon_maze` reloads slowly); the ones left when it
/// is spent are not run (printed).
const BUDGET: Duration = Duration::from_secs(60);

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

/// Offsets of the offset fields of a valid, padded file (docs/3da.md, "Byte layout"),
/// each with a name for messages.
fn offset_fields(b: &[u8]) -> Vec<(usize, String)> {
    let mut out = vec![
        (16usize, "m_offsetMaterials".to_string()),
        (32, "m_offsetFirstEntity".into()),
        (64, "m_offsetColmap".into()),
    ];
    let track = |out: &mut Vec<(usize, String)>, at: usize, what: &str| {
        if at == 0 {
            return;
        }
        match u32_at(b, at + 12) {
            Some(4) => {
                for (k, axis) in ["X", "Y", "Z"].iter().enumerate() {
                    out.push((at + 16 + 4 * k, format!("{what} EULER m_offset{axis}Track")));
                    if let Some(sub) = u32_at(b, at + 16 + 4 * k) {
                        out.push((sub as usize + 16, format!("{what} {axis} m_offset_keys")));
                    }
                }
            }
            Some(_) => out.push((at + 16, format!("{what} m_offset_keys"))),
            None => {}
        }
    };
    let mut e = u32_at(b, 32).unwrap_or(0) as usize;
    let mut n = 0;
    while e != 0 && n < MAX_RECORDS && e + 152 <= b.len() {
        out.push((e + 64, format!("entity {n} surfaces_offset")));
        out.push((e + 148, format!("entity {n} next_offset")));
        for (k, what) in [(72, "position"), (76, "rotation"), (80, "scale")] {
            out.push((e + k, format!("entity {n} {what} track offset")));
            track(&mut out, u32_at(b, e + k).unwrap_or(0) as usize, &format!("entity {n} {what}"));
        }
        let mut s = u32_at(b, e + 64).unwrap_or(0) as usize;
        let mut m = 0;
        while s != 0 && m < MAX_RECORDS && s + 68 <= b.len() {
            for (k, what) in [
                (4, "tri_list_offset"),
                (12, "tri_strip_offset"),
                (20, "s_xyz_offset"),
                (24, "s_tangent_offset"),
                (28, "s_color_offset"),
                (32, "s_normal_offset"),
                (36, "s_texcoord_offset[0]"),
                (52, "s_lgtcoord_offset"),
                (56, "s_blending_offset"),
                (64, "next_offset"),
            ] {
                // Absent parts (offset 0) stay absent: re-pointing them makes a new part.
                if u32_at(b, s + k) != Some(0) || k == 64 {
                    out.push((s + k, format!("entity {n} surface {m} {what}")));
                }
            }
            s = u32_at(b, s + 64).unwrap_or(0) as usize;
            m += 1;
        }
        e = u32_at(b, e + 148).unwrap_or(0) as usize;
        n += 1;
    }
    let cm = u32_at(b, 64).unwrap_or(0) as usize;
    if cm != 0 {
        let trees = b.get(cm + 6..cm + 8).map_or(0, |t| u16::from_le_bytes([t[0], t[1]]));
        for t in 0..usize::from(trees).min(4) {
            out.push((cm + 20 + 8 * t, format!("collision map tree {t} offset")));
        }
    }
    out
}

/// Checks and reads `bytes` without panicking and within `limit` (a bound against endless
/// loops, scaled from the intact file's time so a loaded machine does not fail it); returns
/// whether `check` found an error and whether `read` refused the bytes.
fn probe(bytes: &[u8], limit: Duration) -> Result<(bool, bool), String> {
    let t = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let checked = three_da::check(bytes).has_errors();
        let refused = three_da::read(bytes, &Limits::default()).is_err();
        let _ = keyscene::load_bytes(bytes, Some(Path::new("x.3da")), &Default::default());
        (checked, refused)
    }))
    .map_err(|_| "panicked".to_string())?;
    if t.elapsed() > limit {
        return Err(format!(
            "took {:.1} s, over the {:.1} s bound",
            t.elapsed().as_secs_f64(),
            limit.as_secs_f64()
        ));
    }
    Ok(r)
}

fn corrupt(bytes: &[u8], seed: u64) -> Result<(), Failed> {
    let mut failures = Vec::new();
    // The bound per probe: 10 s, or 100 times what the intact file takes when that is more
    // (a corrupted file may do more work than the intact one, but not without end).
    let t = Instant::now();
    probe(bytes, Duration::from_secs(3600)).map_err(|e| format!("intact file: {e}"))?;
    let limit = Duration::from_secs(10).max(t.elapsed() * 100);
    let deadline = Instant::now() + BUDGET;
    let mut probes = 0usize;
    let mut probe = |b: &[u8]| {
        probes += 1;
        (Instant::now() < deadline).then(|| probe(b, limit))
    };
    // 1. Truncation.
    let len = bytes.len();
    let mut cuts: Vec<usize> = (0..CUTS).map(|i| i * (len - 1) / (CUTS - 1)).collect();
    cuts.push(68);
    cuts.sort_unstable();
    cuts.dedup();
    for &cut in &cuts {
        match probe(&bytes[..cut]).unwrap_or(Ok((true, true))) {
            Ok((true, _)) => {}
            Ok(_) => failures.push(format!("cut at {cut}: check is clean")),
            Err(e) => failures.push(format!("cut at {cut}: {e}")),
        }
    }
    // 2. Byte flips.
    let mut rng = common::Rng(seed | 1);
    for _ in 0..FLIPS {
        let at = (rng.next() % len as u64) as usize;
        let x = (rng.next() % 255) as u8 + 1;
        let mut b = bytes.to_vec();
        b[at] ^= x;
        match probe(&b).unwrap_or(Ok((true, true))) {
            Ok((false, true)) => {
                failures.push(format!("flip {x:#04x} at {at}: read refuses, check clean"))
            }
            Ok(_) => {}
            Err(e) => failures.push(format!("flip {x:#04x} at {at}: {e}")),
        }
    }
    // 3. Offsets re-pointed.
    for (field, what) in offset_fields(bytes) {
        if field + 4 > len {
            continue;
        }
        for value in [len as u32, 0xFFFF_FFF0, field as u32] {
            let mut b = bytes.to_vec();
            b[field..field + 4].copy_from_slice(&value.to_le_bytes());
            if b == bytes {
                continue;
            }
            match probe(&b).unwrap_or(Ok((true, true))) {
                Ok((true, _)) => {}
                Ok((false, _)) => {
                    failures.push(format!("{what} (at {field}) := {value:#x}: check is clean"))
                }
                Err(e) => failures.push(format!("{what} (at {field}) := {value:#x}: {e}")),
            }
        }
    }
    if Instant::now() >= deadline {
        eprintln!("time budget of {BUDGET:?} spent: later corruptions of {probes} not run");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let n = failures.len();
        failures.truncate(12);
        Err(format!("{n} corruptions mishandled:\n{}", failures.join("\n")).into())
    }
}

/// The 3DA bytes of a corpus file, `None` when it has no mesh.
fn convert(path: &Path) -> Result<Option<Vec<u8>>, Failed> {
    let (src, _) = keyscene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !src.nodes.iter().any(|n| n.mesh.is_some()) {
        return Ok(None);
    }
    let (file, _, _) = three_da::export(&src, &three_da::ExportOptions::default())?;
    let bytes = three_da::write(&file)?;
    if three_da::check(&bytes).has_errors() {
        return Err("the uncorrupted conversion does not check clean".into());
    }
    Ok(Some(bytes))
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let mut files = Vec::new();
    if let Some(dir) = &corpus {
        for (sub, exts) in [("3ds", &["3ds", "prj"][..]), ("fbx", &["fbx"][..])] {
            for f in common::files_with_ext(&dir.join(sub), exts) {
                let rel = f.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                if rel != "3ds/online3dviewer/wrong.3ds" && !common::is_negative_fbx(&rel) {
                    files.push(rel);
                }
            }
        }
    }
    if files.is_empty() {
        trials.push(common::corpus_trial("three_da_corrupt_corpus", &corpus, |_| {
            Err("no 3DS or FBX file found in the corpus".into())
        }));
    }
    for rel in files {
        let seed = rel.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        trials.push(common::corpus_trial(rel.clone(), &corpus, move |dir| {
            match convert(&dir.join(&rel))? {
                Some(bytes) if bytes.len() <= MAX_BYTES => corrupt(&bytes, seed),
                Some(bytes) => {
                    eprintln!("{rel}: SKIPPED ({} bytes of 3DA)", bytes.len());
                    Ok(())
                }
                None => Ok(()),
            }
        }));
    }
    common::run(trials);
}
