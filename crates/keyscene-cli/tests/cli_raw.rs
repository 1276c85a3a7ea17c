//! `keyscene inspect --raw`: a reader that stops early (`| head`) ends the dump quietly, and a
//! file that is not FBX gets a message saying the raw dump is for FBX files.

use std::io::Read;
use std::process::{Command, Stdio};

/// An ASCII FBX file whose dump is far larger than a pipe's buffer (64 KiB on Linux).
fn large_fbx(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::from("; FBX 7.4.0 project file\nObjects: {\n");
    for i in 0..20_000 {
        text.push_str(&format!("    Model: {i}, \"Model::Node{i}\", \"Null\" {{ }}\n"));
    }
    text.push_str("}\n");
    let path = dir.join("large.fbx");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn raw_dump_into_a_closed_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = large_fbx(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_keyscene"))
        .args(["inspect", "--raw"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("keyscene runs");
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    assert!(first.starts_with(b"FBX 7400"), "{:?}", String::from_utf8_lossy(&first));
    // stdout is dropped here: the pipe closes with most of the dump unwritten.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    assert!(out.stderr.is_empty(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn raw_dump_of_a_file_that_is_not_fbx_says_it_is_for_fbx() {
    let fly = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/FLY.3DS");
    let out = Command::new(env!("CARGO_BIN_EXE_keyscene"))
        .args(["inspect", "--raw"])
        .arg(&fly)
        .output()
        .expect("keyscene runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not an FBX file") && !err.contains("chunk"), "{err}");
}
