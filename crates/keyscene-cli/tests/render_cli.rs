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
    ok(&keyscene(&["render", &fly(), "-o", s(&seq), "--size", "32x24", "--frames", "0..20:10"]));
    let mut names: Vec<String> = std::fs::read_dir(&seq)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["frame_0000.png", "frame_0001.png", "frame_0002.png"]);
    let sheet = dir.path().join("sheet.png");
    ok(&keyscene(&[
        "render",
        &fly(),
        "-o",
        s(&sheet),
        "--size",
        "32x24",
        "--frames",
        "0..20:10",
        "--sheet",
    ]));
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
