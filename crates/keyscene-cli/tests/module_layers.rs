//! Issue 13 §2: no module of `crates/keyscene/src` or `crates/keyscene-cli/src` depends on a
//! sibling that depends back on it. The rule and the reading of `use` lines are
//! `tools/check_modules.py`'s (its docstring); this test runs it on the real sources, and first
//! on two small made-up crates, one with a cycle and one without, so a checker that found
//! nothing would fail here.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(srcs: &[&Path]) -> (i32, String) {
    let out = Command::new("python3")
        .arg(repo().join("tools/check_modules.py"))
        .args(srcs)
        .output()
        .expect("python3 runs tools/check_modules.py (CPython 3 is on every machine CI uses)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[test]
fn the_checker_finds_a_sibling_cycle_and_allows_the_module_tree() {
    let dir = tempfile::tempdir().unwrap();
    let cyclic = dir.path().join("cyclic");
    write(
        &cyclic,
        &[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a/mod.rs", "pub mod x;\npub mod y;\nuse crate::b::Thing;\n"),
            // x -> y through a use group, y -> x through an inline super path: a cycle.
            ("a/x.rs", "use super::{y::Y, Shared};\npub struct X;\n"),
            ("a/y.rs", "pub struct Y;\nfn f() { let _ = super::x::X; }\n"),
            // b reads its parent and its child only: the tree, not a cycle.
            ("b/mod.rs", "pub mod c;\npub use c::C as Thing;\n"),
            ("b/c.rs", "use super::super::a::Shared;\npub struct C;\n"),
        ],
    );
    let (code, text) = check(&[&cyclic]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("cycle under a: x <-> y"), "{text}");
    // a -> b and b::c -> a are one edge each way between the root's children a and b.
    assert!(text.contains("cycle under the crate root: a <-> b"), "{text}");

    let clean = dir.path().join("clean");
    write(
        &clean,
        &[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a/mod.rs", "pub mod x;\npub mod y;\npub struct Shared;\n"),
            ("a/x.rs", "use super::{y::Y, Shared};\npub struct X;\n"),
            // A test module's imports are test code, not a dependency.
            ("a/y.rs", "pub struct Y;\n#[cfg(test)]\nmod tests { use super::super::x::X; }\n"),
            ("b/mod.rs", "use crate::a::x::X; // crate::b::c is ours\n"),
        ],
    );
    let (code, text) = check(&[&clean]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn keyscene_and_its_cli_have_no_module_cycles() {
    let (lib, cli) = (repo().join("crates/keyscene/src"), repo().join("crates/keyscene-cli/src"));
    let (code, text) = check(&[&lib, &cli]);
    assert_eq!(code, 0, "module cycles (fix the dependency, see tools/check_modules.py):\n{text}");
}

/// Runs `tools/check_fn_length.py` with `args`.
fn check_lengths(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let out = Command::new("python3")
        .arg(repo().join("tools/check_fn_length.py"))
        .args(args)
        .output()
        .expect("python3 runs tools/check_fn_length.py");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_length_checker_counts_a_long_function_and_skips_braces_in_strings_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    // `long` spans 1 + 160 + 1 = 162 lines; `short` has a `{` in a string and a comment, and
    // the test function after `#[cfg(test)]` is as long as `long` but does not count.
    let body = "    let _x = 1;\n".repeat(160);
    let text = format!(
        "pub fn long() {{\n{body}}}\n\npub fn short() -> &'static str {{\n    // {{\n    \"{{\"\n}}\n\n#[cfg(test)]\nmod tests {{\n    fn t() {{\n{body}    }}\n}}\n"
    );
    write(dir.path(), &[("lib.rs", &text)]);
    let (code, text) = check_lengths(&[dir.path().as_os_str()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("  162  ") && text.contains("lib.rs:1  long"), "{text}");
    assert!(!text.contains("short") && !text.contains(" t "), "{text}");
    assert!(text.contains("1 function(s) over 150 lines"), "{text}");
    let (code, text) = check_lengths(&["--max".as_ref(), "200".as_ref(), dir.path().as_os_str()]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn every_function_over_150_lines_is_listed_in_docs_api_md() {
    let (code, text) = check_lengths(&[]);
    assert_eq!(code, 0, "list these in docs/api.md, \"Long functions\", with the reason:\n{text}");
}
