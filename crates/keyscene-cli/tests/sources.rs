//! Issue 36 §1, "a source is never destroyed", through the `keyscene` binary: `--force`
//! replaces an existing *output*, never the file a scene is read from nor a file it reads
//! (a texture), however the path is spelled — the same path, `sub/..`, a symbolic link, a hard
//! link — in single-file and batch conversion and in `render`; and `render`, like `convert`,
//! refuses to replace an existing PNG without `--force`. Each refusal names both paths and
//! leaves the source's bytes as they were.
//!
//! Also issue 36 §2's messages: a missing input is named as missing, an empty folder is an
//! error, a folder as output lists every format written, `inspect` heads with the animations'
//! range.
//!
//! The texture and inspect trials need the corpus (`KEYSCENE_CORPUS`, else `../shared/corpus`); without
//! it those trials are reported ignored, never passed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Arguments, Failed, Trial};

mod common;

fn keyscene(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_keyscene")).args(args).output().expect("keyscene runs")
}

fn fly() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/FLY.3DS")
}

/// A folder holding a copy of FLY.3DS as `a.3ds`, and its bytes.
fn copy_of_fly() -> Result<(tempfile::TempDir, PathBuf, Vec<u8>), Failed> {
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("a.3ds");
    std::fs::copy(fly(), &src)?;
    let bytes = std::fs::read(&src)?;
    Ok((dir, src, bytes))
}

/// `out` failed, naming `what` and saying a source is never replaced, and `src` still holds
/// `bytes`.
fn refused(out: &Output, what: &str, src: &Path, bytes: &[u8]) -> Result<(), Failed> {
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return Err(format!("exit 0, the source may be gone; stderr: {err}").into());
    }
    if !err.contains("never replaced") || !err.contains(what) {
        return Err(format!("the refusal does not name {what:?} or the rule: {err}").into());
    }
    if std::fs::read(src)? != bytes {
        return Err(format!("{} was changed", src.display()).into());
    }
    Ok(())
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

fn convert_onto_the_source() -> Result<(), Failed> {
    let (dir, src, bytes) = copy_of_fly()?;
    std::fs::create_dir(dir.path().join("sub"))?;
    let dotted = dir.path().join("sub/../a.3ds");
    let hard = dir.path().join("hard.3ds");
    std::fs::hard_link(&src, &hard)?;
    let link = dir.path().join("link.3ds");
    std::os::unix::fs::symlink(&src, &link)?;
    for out in [&src, &dotted, &hard, &link] {
        let o = keyscene(&["convert", s(&src), s(out), "--force"]);
        refused(&o, "a.3ds", &src, &bytes)
            .map_err(|e| format!("{}: {}", out.display(), e.message().unwrap_or("")))?;
    }
    Ok(())
}

fn batch_onto_the_sources() -> Result<(), Failed> {
    let (dir, src, bytes) = copy_of_fly()?;
    // `--to 3ds` into the input folder names a.3ds's output a.3ds: the file itself.
    let o = keyscene(&["convert", s(dir.path()), s(dir.path()), "--to", "3ds", "--force"]);
    let summary = String::from_utf8_lossy(&o.stdout);
    if o.status.success()
        || !summary.contains("failed: a.3ds")
        || !summary.contains("never replaced")
    {
        return Err(format!("the batch did not refuse a.3ds: {summary}").into());
    }
    if std::fs::read(&src)? != bytes {
        return Err("a.3ds was changed".into());
    }
    Ok(())
}

fn render_onto_the_source_and_an_existing_png() -> Result<(), Failed> {
    let (dir, src, bytes) = copy_of_fly()?;
    let o = keyscene(&["render", s(&src), "-o", s(&src), "--size", "32x24", "--force"]);
    refused(&o, "a.3ds", &src, &bytes)?;
    let png = dir.path().join("f.png");
    let first = keyscene(&["render", s(&src), "-o", s(&png), "--size", "32x24"]);
    if !first.status.success() {
        return Err(format!("render: {}", String::from_utf8_lossy(&first.stderr)).into());
    }
    let again = keyscene(&["render", s(&src), "-o", s(&png), "--size", "32x24", "--frame", "5"]);
    let err = String::from_utf8_lossy(&again.stderr);
    if again.status.success() || !err.contains("already exists") || !err.contains("--force") {
        return Err(format!("an existing PNG was not refused: {err}").into());
    }
    let forced = keyscene(&["render", s(&src), "-o", s(&png), "--size", "32x24", "--force"]);
    if !forced.status.success() {
        return Err(format!("--force: {}", String::from_utf8_lossy(&forced.stderr)).into());
    }
    Ok(())
}

/// assimp/test1.3ds reads IMAGE1.jpg beside it: rendering onto that texture is refused.
fn render_onto_a_texture(corpus: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    for f in ["test1.3ds", "IMAGE1.jpg", "IMAGE2.jpg", "CWALL02.jpg"] {
        std::fs::copy(corpus.join("3ds/assimp").join(f), dir.path().join(f))?;
    }
    let texture = dir.path().join("IMAGE1.jpg");
    let bytes = std::fs::read(&texture)?;
    let scene = dir.path().join("test1.3ds");
    let o = keyscene(&["render", s(&scene), "-o", s(&texture), "--size", "32x24", "--force"]);
    refused(&o, "IMAGE1.jpg", &texture, &bytes)
}

/// Issue 36 §2: messages that tell the truth — a missing input is named as missing, a folder
/// without scene files is an error, the formats listed are every format written.
fn messages_tell_the_truth() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("no-such-dir");
    let o = keyscene(&["convert", s(&missing), s(&dir.path().join("out")), "--to", "glb"]);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || !err.contains("no such file or folder") || err.contains("--to applies")
    {
        return Err(format!("missing input: {err}").into());
    }
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty)?;
    let o = keyscene(&["convert", s(&empty), s(&dir.path().join("out")), "--to", "glb"]);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || !err.contains("no scene file") {
        return Err(format!("an empty folder converted: {err}").into());
    }
    let o = keyscene(&["convert", s(&fly()), s(dir.path())]);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || !err.contains("--to glb|gltf|3da|obj|fbx|3ds") {
        return Err(format!("a folder as output does not list every format: {err}").into());
    }
    Ok(())
}

/// Issue 36 §2: `inspect` heads with the range a user means, the animations' (knight.fbx
/// stores a 0..0 timeline for six animations of 0..37.5 to 0..40), and shows the stored
/// timeline apart, labelled.
fn inspect_shows_the_animations_range(corpus: &Path) -> Result<(), Failed> {
    let knight = corpus.join("fbx/fbx-conv/knight.fbx");
    let o = keyscene(&["inspect", s(&knight)]);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("frames:")).unwrap_or_default();
    if !line.starts_with("frames: 0..40 (the animations')")
        || !line.ends_with("stored timeline: 0..0")
    {
        return Err(format!("header: {line:?}").into());
    }
    let j = keyscene(&["inspect", "--json", s(&knight)]);
    let doc: serde_json::Value = serde_json::from_slice(&j.stdout)?;
    if doc["animation_range"] != serde_json::json!([0.0, 40.0])
        || doc["frame_range"] != serde_json::json!([0.0, 0.0])
    {
        return Err(format!("JSON: {} {}", doc["animation_range"], doc["frame_range"]).into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let corpus = common::corpus();
    let mut trials = vec![
        Trial::test(
            "convert onto the source (same, .., hard link, symlink)",
            convert_onto_the_source,
        ),
        Trial::test("batch onto the sources", batch_onto_the_sources),
        Trial::test(
            "render onto the source and an existing png",
            render_onto_the_source_and_an_existing_png,
        ),
        Trial::test("messages tell the truth", messages_tell_the_truth),
    ];
    match corpus {
        Some(c) => {
            let d = c.clone();
            trials.push(Trial::test("render onto a texture the scene reads", move || {
                render_onto_a_texture(&c)
            }));
            trials.push(Trial::test("inspect shows the animations' range", move || {
                inspect_shows_the_animations_range(&d)
            }));
        }
        None => {
            for name in
                ["render onto a texture the scene reads", "inspect shows the animations' range"]
            {
                trials.push(
                    Trial::test(format!("ignored: no corpus :: {name}"), || Ok(()))
                        .with_ignored_flag(true),
                );
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
