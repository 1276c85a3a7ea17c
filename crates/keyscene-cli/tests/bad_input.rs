//! Issue 17 §1 and §3: bad input is an error in words, never an empty success; `inspect`
//! shows encoding, skins and blend shapes.
//!
//! Each trial runs the `keyscene` binary and asserts the words the issue asks for: empty or
//! cut `.glb`/`.gltf`/`.3da`/`.3ds`/`.fbx` files name the file and say "empty" or
//! "truncated at byte N" (N: the cut, which the test chose), binary garbage fed to the FBX
//! reader is "not an FBX file (no binary header, no ASCII records)", an FBX file that ends
//! before its `Objects` is an error, and no message carries Rust `Debug` text. The inputs are
//! cut from the bundled `examples/FLY.3DS` (and its conversions) or built byte by byte here.
//!
//! Corpus trials (`KEYSCENE_CORPUS`, else `../shared/corpus`; reported ignored without it):
//! the issue's `head -c 3000 maya_cube_7400_ascii.fbx`, and `inspect --json`'s skin and blend
//! shape counts against ufbx's (the `ufbx` crate, loaded in the test).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

mod common;
use common::corpus;

fn keyscene(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_keyscene")).args(args).output().expect("keyscene runs")
}

fn fly() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/FLY.3DS");
    p.to_str().unwrap().to_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn check(cond: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what().into())
    }
}

/// Rust `Debug` text a message must not carry: escaped strings and struct/enum dumps.
fn has_debug_text(s: &str) -> bool {
    ["\\u{", "AxisSystem {", "PosY", "PosZ", "Some(", "UnsupportedVersion(", "EOF while"]
        .iter()
        .any(|d| s.contains(d))
}

/// `path` holding the first `n` bytes of `bytes`.
fn cut(dir: &Path, name: &str, bytes: &[u8], n: usize) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, &bytes[..n]).unwrap();
    p
}

/// Every reader: a file cut at byte N says "truncated at byte N" and names the file; glTF
/// never shows serde_json's "EOF while parsing". 3DS reads what is there, with the warning.
fn cut_files_say_truncated_at_byte_n() -> Result<(), Failed> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for ext in ["glb", "gltf", "3da"] {
        let full = d.join(format!("fly.{ext}"));
        let r = keyscene(&["convert", &fly(), full.to_str().unwrap()]);
        check(r.status.success(), || format!("convert to {ext}: {}", stderr(&r)))?;
    }
    let gltf_len = std::fs::metadata(d.join("fly.gltf")).unwrap().len() as usize;
    let cases = [
        ("fly.glb", 100, true),
        ("fly.glb", 10, true),
        ("fly.gltf", gltf_len / 2, true),
        ("fly.gltf", 10, true),
        ("fly.3da", 100, true),
        ("fly.3da", 40, true),
    ];
    for (src, n, fails) in cases {
        let bytes = std::fs::read(d.join(src)).unwrap();
        let p = cut(d, &format!("cut_{n}_{src}"), &bytes, n);
        let r = keyscene(&["inspect", p.to_str().unwrap()]);
        let err = stderr(&r);
        check(r.status.success() != fails, || format!("{src} cut at {n}: exit {:?}", r.status))?;
        check(err.contains(p.to_str().unwrap()), || format!("{src} at {n}: no file: {err}"))?;
        check(err.contains(&format!("truncated at byte {n}")), || {
            format!("{src} cut at {n}: {err}")
        })?;
        check(!has_debug_text(&err), || format!("{src} at {n}: Debug text: {err}"))?;
    }
    // The bundled sidecar .bin of fly.gltf is not needed for a document error.
    let bytes = std::fs::read(fly()).unwrap();
    let p = cut(d, "cut.3ds", &bytes, 100);
    let r = keyscene(&["inspect", p.to_str().unwrap()]);
    let err = stderr(&r);
    check(r.status.success(), || format!("3ds cut at 100 reads what is there: {err}"))?;
    check(err.contains("warning") && err.contains("the file is truncated at byte 100"), || {
        format!("3ds cut at 100: {err}")
    })
}

/// A binary FBX record: end offset, property count, property bytes (u32), name, properties,
/// children, and a null record after children (FBX 7.4 layout, docs/fbx.md).
fn record(
    at: usize,
    name: &str,
    props: &[u8],
    nprops: u32,
    children: &[&dyn Fn(usize) -> Vec<u8>],
) -> Vec<u8> {
    let mut body = Vec::new();
    let start = at + 13 + name.len() + props.len();
    for c in children {
        let b = c(start + body.len());
        body.extend(b);
    }
    if !children.is_empty() {
        body.extend([0u8; 13]);
    }
    let end = start + body.len();
    let mut out = Vec::new();
    out.extend((end as u32).to_le_bytes());
    out.extend(nprops.to_le_bytes());
    out.extend((props.len() as u32).to_le_bytes());
    out.push(name.len() as u8);
    out.extend(name.as_bytes());
    out.extend(props);
    out.extend(body);
    out
}

/// A small binary FBX 7400: FBXHeaderExtension › FBXVersion 7400, Objects › Model, then
/// Connections; returns the bytes and the offset where Objects starts.
fn tiny_binary_fbx() -> (Vec<u8>, usize) {
    let mut f = b"Kaydara FBX Binary  \0\x1a\0".to_vec();
    f.extend(7400u32.to_le_bytes());
    let mut int = vec![b'I'];
    int.extend(7400i32.to_le_bytes());
    let version = |at: usize| record(at, "FBXVersion", &int, 1, &[]);
    f.extend(record(f.len(), "FBXHeaderExtension", &[], 0, &[&version]));
    let objects_at = f.len();
    let mut model = vec![b'L'];
    model.extend(1i64.to_le_bytes());
    let m = model.clone();
    let model_rec = move |at: usize| record(at, "Model", &m, 1, &[]);
    f.extend(record(f.len(), "Objects", &[], 0, &[&model_rec]));
    f.extend(record(f.len(), "Connections", &[], 0, &[]));
    f.extend([0u8; 13]);
    (f, objects_at)
}

/// Binary FBX cut inside `Objects`: "truncated" with the record path; cut before `Objects`
/// (between top-level records): an error that says the Objects record is missing; garbage:
/// "not an FBX file"; the whole file loads.
fn binary_fbx_cuts_and_garbage_are_errors_in_words() -> Result<(), Failed> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (bytes, objects_at) = tiny_binary_fbx();
    let whole = cut(d, "whole.fbx", &bytes, bytes.len());
    let r = keyscene(&["inspect", whole.to_str().unwrap()]);
    check(r.status.success(), || format!("the whole file loads: {}", stderr(&r)))?;
    let out = String::from_utf8_lossy(&r.stdout);
    check(out.contains("encoding = binary, little-endian"), || format!("encoding: {out}"))?;

    let n = objects_at + 20;
    let p = cut(d, "inside.fbx", &bytes, n);
    let r = keyscene(&["inspect", p.to_str().unwrap()]);
    let err = stderr(&r);
    check(!r.status.success(), || format!("cut inside Objects loaded: {err}"))?;
    check(err.contains(&format!("truncated at byte {n}")) && err.contains("Objects"), || {
        format!("cut inside Objects: {err}")
    })?;

    let p = cut(d, "before.fbx", &bytes, objects_at);
    let r = keyscene(&["convert", p.to_str().unwrap(), d.join("o.glb").to_str().unwrap()]);
    let err = stderr(&r);
    check(!r.status.success() && !d.join("o.glb").exists(), || {
        format!("cut before Objects: {err}")
    })?;
    check(err.contains(&format!("ends at byte {objects_at} without an Objects record")), || {
        format!("cut before Objects: {err}")
    })?;

    let garbage = d.join("fuzz.fbx");
    std::fs::write(&garbage, b"L\x1d\xff\x00\x01\x02\x7fbinary garbage\x00\x00").unwrap();
    for cmd in ["inspect", "check"] {
        let r = keyscene(&[cmd, garbage.to_str().unwrap()]);
        // `check` prints the error once, as its report line (stdout), and only the count on
        // stderr (issue 36 §2: it printed the error twice); `inspect` has no report.
        let err = if cmd == "check" {
            String::from_utf8_lossy(&r.stdout).into_owned()
        } else {
            stderr(&r)
        };
        check(!r.status.success(), || format!("{cmd} on garbage succeeded"))?;
        check(err.contains("not an FBX file (no binary header, no ASCII records)"), || {
            format!("{cmd} on garbage: {err}")
        })?;
        check(!has_debug_text(&err) && !err.contains('\u{1d}'), || format!("raw bytes: {err}"))?;
    }
    Ok(())
}

/// `check` on a file that fails to load: every stdout line names the file and the format, the
/// error line says "error", and the exit status is 1.
fn check_names_file_and_format_on_error_lines() -> Result<(), Failed> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.fbx");
    std::fs::write(&p, "; FBX 7.4.0 project file\nFBXHeaderExtension: {\n FBXVersion: 7400\n}\n")
        .unwrap();
    let f = p.to_str().unwrap();
    let r = keyscene(&["check", f]);
    let out = String::from_utf8_lossy(&r.stdout);
    check(r.status.code() == Some(1), || format!("exit {:?}", r.status))?;
    check(out.lines().count() == 2, || out.to_string())?;
    check(out.lines().all(|l| l.starts_with(&format!("{f}: "))), || out.to_string())?;
    check(
        out.contains(&format!("{f}: FBX: error: ")) && out.contains("without an Objects record"),
        || out.to_string(),
    )?;
    check(stderr(&r).matches(f).count() == 1, || format!("file named once: {}", stderr(&r)))
}

/// A Y-up glTF source converted to 3DA bakes its axes: the report says so in field terms
/// (`+Y up, +Z front, right-handed`), not `AxisSystem { up: PosY, … }`.
fn conversion_reports_have_no_debug_text() -> Result<(), Failed> {
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("fly.glb");
    let r = keyscene(&["convert", &fly(), glb.to_str().unwrap()]);
    check(r.status.success(), || stderr(&r))?;
    let out3da = dir.path().join("fly.3da");
    let mut args = vec!["convert", glb.to_str().unwrap(), out3da.to_str().unwrap()];
    // The report may sit behind --report (issue 17 §2); ask for it when the option exists.
    let help = String::from_utf8_lossy(&keyscene(&["convert", "--help"]).stdout).into_owned();
    if help.contains("--report") {
        args.push("--report");
    }
    let r = keyscene(&args);
    let all = format!("{}{}", String::from_utf8_lossy(&r.stdout), stderr(&r));
    check(r.status.success(), || all.clone())?;
    check(!has_debug_text(&all), || format!("Debug text: {all}"))?;
    check(all.contains("+Y up, +Z front, right-handed"), || format!("axes line: {all}"))
}

/// The command: `head -c 3000 maya_cube_7400_ascii.fbx` (cut at a top-level record
/// boundary after GlobalSettings, before Definitions and Objects; its header says FBX 7.4) is
/// an error, not an empty scene (ufbx 0.23 loads it as an empty scene without a warning).
fn ascii_cut_before_objects(path: PathBuf) -> Result<(), Failed> {
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = cut(dir.path(), "cut.fbx", &bytes, 3000);
    let r = keyscene(&["inspect", p.to_str().unwrap()]);
    let err = stderr(&r);
    check(!r.status.success(), || format!("loaded: {}", String::from_utf8_lossy(&r.stdout)))?;
    check(err.contains("ends at byte 3000 without an Objects record"), || err.clone())
}

/// `inspect --json`: per skinned mesh the joint count and the most non-zero weights on one
/// vertex; per blended mesh the channels and shapes (target + in-betweens), as ufbx reads
/// them (multisets over the file's meshes).
fn skins_and_blend_shapes_match_ufbx(path: PathBuf) -> Result<(), Failed> {
    let bytes = std::fs::read(&path).unwrap();
    let scene = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx cannot load {}: {e:?}", path.display()))?;
    let mut want_skins = Vec::new();
    let mut want_blends = Vec::new();
    for mesh in scene.meshes.iter() {
        for skin in mesh.skin_deformers.iter() {
            let most = skin
                .vertices
                .iter()
                .map(|v| {
                    let b = v.weight_begin as usize;
                    (b..b + v.num_weights as usize)
                        .filter(|&i| skin.weights[i].weight != 0.0)
                        .count()
                })
                .max()
                .unwrap_or(0);
            want_skins.push((skin.clusters.len() as u64, most as u64));
        }
        for blend in mesh.blend_deformers.iter() {
            let shapes: usize = blend.channels.iter().map(|c| c.keyframes.len()).sum();
            want_blends.push((blend.channels.len() as u64, shapes as u64));
        }
    }
    let r = keyscene(&["inspect", path.to_str().unwrap(), "--json"]);
    check(r.status.success(), || stderr(&r))?;
    let v: Value = serde_json::from_slice(&r.stdout).map_err(|e| e.to_string())?;
    let mut got_skins = Vec::new();
    let mut got_blends = Vec::new();
    for m in v["meshes"].as_array().unwrap() {
        if let Some(k) = m["skin"].as_object() {
            got_skins.push((
                k["joints"].as_u64().unwrap(),
                k["max_influences_per_vertex"].as_u64().unwrap(),
            ));
        }
        if let Some(b) = m["blend_shapes"].as_object() {
            got_blends.push((b["channels"].as_u64().unwrap(), b["targets"].as_u64().unwrap()));
        }
    }
    for l in [&mut want_skins, &mut got_skins, &mut want_blends, &mut got_blends] {
        l.sort();
    }
    check(!want_skins.is_empty() || !want_blends.is_empty(), || "ufbx finds nothing".into())?;
    check(got_skins == want_skins, || {
        format!("skins: ufbx {want_skins:?}, keyscene {got_skins:?}")
    })?;
    check(got_blends == want_blends, || {
        format!("blend shapes: ufbx {want_blends:?}, keyscene {got_blends:?}")
    })?;
    let text = String::from_utf8_lossy(&keyscene(&["inspect", path.to_str().unwrap()]).stdout)
        .into_owned();
    if !want_skins.is_empty() {
        check(text.contains("joints, at most"), || text.clone())?;
    }
    if !want_blends.is_empty() {
        check(text.contains("in-betweens"), || text.clone())?;
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test("cut_files_say_truncated_at_byte_n", cut_files_say_truncated_at_byte_n),
        Trial::test(
            "binary_fbx_cuts_and_garbage_are_errors_in_words",
            binary_fbx_cuts_and_garbage_are_errors_in_words,
        ),
        Trial::test(
            "check_names_file_and_format_on_error_lines",
            check_names_file_and_format_on_error_lines,
        ),
        Trial::test("conversion_reports_have_no_debug_text", conversion_reports_have_no_debug_text),
    ];
    let root = corpus();
    let fbx = |rel: &str| root.as_ref().map(|c| c.join("fbx").join(rel));
    let corpus_trials: [(&str, &str, fn(PathBuf) -> Result<(), Failed>); 3] = [
        (
            "ascii_cut_at_3000_before_objects",
            "ufbx/maya_cube_7400_ascii.fbx",
            ascii_cut_before_objects,
        ),
        (
            "skins_match_ufbx",
            "ufbx/blender_279_sausage_7400_binary.fbx",
            skins_and_blend_shapes_match_ufbx,
        ),
        (
            "blend_inbetweens_match_ufbx",
            "ufbx/maya_blend_inbetween_7500_binary.fbx",
            skins_and_blend_shapes_match_ufbx,
        ),
    ];
    for (name, rel, f) in corpus_trials {
        match fbx(rel) {
            Some(p) => trials.push(Trial::test(name, move || f(p))),
            None => trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true)),
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
