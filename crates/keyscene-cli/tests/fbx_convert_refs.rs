//! `keyscene convert FBX OUT.obj` with the FBX options (`--time`, `--stack`, `--space`/`--up`/
//! `--units`, `--no-extrapolation`, `--bind-pose`, `--transform-skin`) on a few rows of the
//! corpus's ufbx references (`fbx/references.tsv`), compared with `obj_compare.py` exactly as
//! `shared/oracles/run_fbx_refs.sh` does. One row of each kind: static, time with a stack,
//! bind pose, no extrapolation, axis/unit conversion, transform_skin. (The whole table runs
//! through the library in `crates/keyscene/tests/fbx_obj_references.rs`, and through this
//! binary with `run_fbx_refs.sh --tool …`: docs/cli.md.)
//!
//! The corpus is `KEYSCENE_CORPUS`, else `../shared/corpus` beside the workspace; without it
//! every trial is reported ignored, never passed. `obj_compare.py` is found at
//! `KEYSCENE_ORACLES`, else `<corpus>/../oracles`.

use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};
use refs::{reference_rows, RefRow};

mod common;
use common::corpus;

/// The library's one reader of `references.tsv`, shared with its tests.
#[path = "../../keyscene/tests/common/refs.rs"]
#[allow(dead_code)]
mod refs;

/// Whether a row is of a kind.
type Pick = fn(&RefRow) -> bool;

/// The row kinds checked, each with the first row of that kind.
const KINDS: [(&str, Pick); 6] = [
    ("static", |r| r.mode == "static" && r.conversion.is_empty() && r.option_list().is_empty()),
    ("time_stack", |r| r.mode == "time" && !r.stack.is_empty()),
    ("bind_pose", |r| r.option_list().iter().any(|o| o.starts_with("bind_pose="))),
    ("no_extrapolation", |r| r.option_list().contains(&"no_extrapolation")),
    ("conversion", |r| !r.conversion.is_empty()),
    ("transform_skin", |r| r.transform_skin),
];

/// The `keyscene convert` arguments for a row, as the `run_fbx_refs.sh` template
/// `convert {fbx} {out} --time {time} --stack {stack} --space {conversion}
/// {extrapolation?--no-extrapolation} --bind-pose {pose} {transform_skin?--transform-skin}`.
fn convert_args(fbx: &Path, out: &Path, r: &RefRow) -> Vec<String> {
    let mut a = vec!["convert".to_string(), fbx.display().to_string(), out.display().to_string()];
    if r.mode == "time" {
        a.extend(["--time".into(), r.time_s.clone()]);
    }
    if !r.stack.is_empty() {
        a.extend(["--stack".into(), r.stack.clone()]);
    }
    if !r.conversion.is_empty() {
        a.extend(["--space".into(), r.conversion.clone()]);
    }
    for o in r.option_list() {
        if o == "no_extrapolation" {
            a.push("--no-extrapolation".into());
        } else if let Some(name) = o.strip_prefix("bind_pose=") {
            a.extend(["--bind-pose".into(), name.into()]);
        }
    }
    if r.transform_skin {
        a.push("--transform-skin".into());
    }
    a
}

fn check(
    corpus: &Path,
    oracles: &Path,
    r: &RefRow,
    out_dir: &Path,
    kind: &str,
) -> Result<(), Failed> {
    let fbx_dir = corpus.join("fbx");
    let out = out_dir.join(format!("{kind}.obj"));
    let args = convert_args(&fbx_dir.join(&r.fbx), &out, r);
    let run = Command::new(env!("CARGO_BIN_EXE_keyscene")).args(&args).output()?;
    if !run.status.success() {
        return Err(format!(
            "keyscene {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&run.stderr)
        )
        .into());
    }
    let res = r.obj_compare(oracles, &fbx_dir.join(&r.obj), &out, true).output()?;
    if res.status.success() {
        Ok(())
    } else {
        Err(format!(
            "keyscene {}\nobj_compare.py: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&res.stdout),
            String::from_utf8_lossy(&res.stderr)
        )
        .into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let Some(corpus) = corpus() else {
        eprintln!(
            "fbx_convert_refs: no corpus (set KEYSCENE_CORPUS): every row is reported ignored"
        );
        let trials =
            KINDS.iter().map(|(k, _)| Trial::test(*k, || Ok(())).with_ignored_flag(true)).collect();
        libtest_mimic::run(&args, trials).exit();
    };
    let oracles = refs::oracles(&corpus);
    let all = reference_rows(&corpus.join("fbx"));
    let out_dir = std::sync::Arc::new(tempfile::tempdir().expect("temporary folder"));
    let mut trials = Vec::new();
    for (kind, pick) in KINDS {
        let row = all.iter().find(|r| pick(r)).cloned();
        let (corpus, oracles, out_dir) = (corpus.clone(), oracles.clone(), out_dir.clone());
        let name = match &row {
            Some(r) => format!("{kind}: {} -> {}", r.fbx, r.obj),
            None => kind.to_string(),
        };
        trials.push(Trial::test(name, move || match row {
            Some(r) => check(&corpus, &oracles, &r, out_dir.path(), kind),
            None => Err(format!("references.tsv has no {kind} row").into()),
        }));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(out_dir);
    conclusion.exit();
}
