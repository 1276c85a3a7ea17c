//! `keyscene render` on the bundled `examples/FLY.3DS`: the PNG files it writes (size,
//! sequence names, contact-sheet layout), identical output on a second run, and failures that
//! exit non-zero leaving no file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn keyscene(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_keyscene")).args(args).output().expect("keyscene runs")
}

fn fly() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/FLY.3DS");
    p.to_str().unwrap().to_owned()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Width and height from a PNG's IHDR chunk (PNG spec: signature 8 bytes, chunk length 4,
/// type 4, then width and height big-endian).
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is a PNG", path.display());
    assert_eq!(&b[12..16], b"IHDR");
    (
        u32::from_be_bytes(b[16..20].try_into().unwrap()),
        u32::from_be_bytes(b[20..24].try_into().unwrap()),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn render_writes_a_png_of_the_requested_size_the_same_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.png");
    let b = dir.path().join("b.png");
    for out in [&a, &b] {
        ok(&keyscene(&[
            "render",
            &fly(),
            "-o",
            s(out),
            "--size",
            "64x48",
            "--frame",
            "100",
            "--camera",
            "Camera01",
            "--bbox",
            "--background",
            "#102030",
        ]));
    }
    assert_eq!(png_size(&a), (64, 48));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn frames_write_a_numbered_sequence_or_one_contact_sheet() {
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    ok(&render_fly(&seq, &["--size", "32x24", "--frames", "0..20:10"]));
    let mut names: Vec<String> = std::fs::read_dir(&seq)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["frame_0000.png", "frame_0001.png", "frame_0002.png"]);
    let sheet = dir.path().join("sheet.png");
    ok(&render_fly(&sheet, &["--size", "32x24", "--frames", "0..20:10", "--sheet"]));
    // Three frames → ⌈√3⌉ = 2 columns, 2 rows, 2-pixel gaps: 2·(32+2)+2 × 2·(24+2)+2.
    assert_eq!(png_size(&sheet), (70, 54));
}

#[test]
fn an_unknown_camera_fails_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out: PathBuf = dir.path().join("x.png");
    let r = keyscene(&["render", &fly(), "-o", s(&out), "--camera", "NoSuchCamera"]);
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("Camera01"), "lists the cameras the file has: {err}");
    assert!(!out.exists());
    let r = keyscene(&["render", &fly(), "-o", s(&out), "--size", "0x10"]);
    assert!(!r.status.success());
    assert!(!out.exists());
    // 10,001 frames of 800×600 on one sheet: refused before rendering anything.
    let r = keyscene(&["render", &fly(), "-o", s(&out), "--frames", "0..10000", "--sheet"]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("--sheet"));
    assert!(!out.exists());
}

/// `keyscene render examples/FLY.3DS -o OUT EXTRA…`.
fn render_fly(out: &Path, extra: &[&str]) -> Output {
    let fly = fly();
    let mut args = vec!["render", fly.as_str(), "-o", s(out)];
    args.extend_from_slice(extra);
    keyscene(&args)
}

fn example(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    p.to_str().unwrap().to_owned()
}

/// Issue 15 §3: without `--camera`, `render` looks through the file's first camera (FLY.3DS has
/// one, `Camera01`: the same PNG as `--camera Camera01`, not the automatic camera's), and a
/// file without cameras (`cube_hierarchy.3ds`) gets the automatic camera.
#[test]
fn the_default_camera_is_the_first_scene_camera_else_auto() {
    let dir = tempfile::tempdir().unwrap();
    let render = |file: &str, name: &str, camera: Option<&str>| -> Vec<u8> {
        let out = dir.path().join(name);
        let mut args = vec!["render", file, "-o", s(&out), "--size", "64x48", "--frame", "40"];
        if let Some(c) = camera {
            args.extend(["--camera", c]);
        }
        ok(&keyscene(&args));
        std::fs::read(&out).unwrap()
    };
    let fly = fly();
    let default = render(&fly, "fly_default.png", None);
    assert_eq!(default, render(&fly, "fly_camera01.png", Some("Camera01")));
    assert_ne!(default, render(&fly, "fly_auto.png", Some("auto")));
    let cube = example("cube_hierarchy.3ds");
    assert_eq!(
        render(&cube, "cube_default.png", None),
        render(&cube, "cube_auto.png", Some("auto"))
    );
}

/// Issue 15 §3: each contact-sheet cell carries its frame number — white glyphs in a black box
/// at the cell's top-left corner (docs/render.md), over the background colour that is there
/// without the label (FLY.3DS's frames through the automatic camera do not reach that corner).
#[test]
fn contact_sheet_cells_are_labelled_with_their_frame() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = dir.path().join("sheet.png");
    let frames = ["--frames", "0..30:10", "--camera", "auto", "--background", "#336699", "--sheet"];
    ok(&render_fly(&sheet, &[&["--size", "80x60"][..], &frames].concat()));
    let t = keyscene::render::Texture::load(&sheet).unwrap();
    let at = |x: usize, y: usize| t.texels()[y * t.width() + x];
    // 4 frames: 2 columns, cells at x = 2 and 84, y = 2 and 64; label box from 4 pixels in.
    let mut labels = Vec::new();
    for (cx, cy) in [(2, 2), (84, 2), (2, 64), (84, 64)] {
        assert_eq!(at(cx, cy), [0x33, 0x66, 0x99], "the cell's corner keeps the background");
        let (x0, y0) = (cx + 4, cy + 4);
        assert_eq!(at(x0, y0), [0, 0, 0], "the label's box starts 4 pixels into the cell");
        let ink: Vec<(usize, usize)> = (0..9)
            .flat_map(|y| (0..19).map(move |x| (x, y)))
            .filter(|&(x, y)| at(x0 + x, y0 + y) == [255, 255, 255])
            .collect();
        assert!(!ink.is_empty(), "the label at ({x0}, {y0}) has white glyphs");
        labels.push(ink);
    }
    // Frames 0, 10, 20, 30: one glyph, then two; no two labels alike.
    assert!(labels[0].iter().all(|&(x, _)| x < 7), "frame 0 is one glyph wide");
    assert!(labels[1].iter().any(|&(x, _)| x >= 7), "frame 10 is two glyphs wide");
    for i in 0..4 {
        for j in i + 1..4 {
            assert_ne!(labels[i], labels[j], "labels {i} and {j} differ");
        }
    }
}
