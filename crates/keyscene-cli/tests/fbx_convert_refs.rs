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

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

fn corpus() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KEYSCENE_CORPUS") {
        let dir = PathBuf::from(dir);
        assert!(dir.is_dir(), "KEYSCENE_CORPUS={} is not a folder", dir.display());
        return Some(dir);
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    default.is_dir().then_some(default)
}

/// One references.tsv row, by column name.
type Row = std::collections::HashMap<String, String>;

fn rows(tsv: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(tsv).unwrap_or_default();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(h, v)| (h.to_string(), v.trim().to_string()))
                .collect()
        })
        .collect()
}

fn col<'a>(r: &'a Row, c: &str) -> &'a str {
    r.get(c).map(String::as_str).unwrap_or("")
}

fn options(r: &Row) -> Vec<&str> {
    col(r, "options").split([';', ',']).map(str::trim).filter(|o| !o.is_empty()).collect()
}

/// The row kinds checked, each with the first row of that kind.
const KINDS: [(&str, fn(&Row) -> bool); 6] = [
    ("static", |r| {
        col(r, "mode") == "static" && col(r, "conversion").is_empty() && options(r).is_empty()
    }),
    ("time_stack", |r| col(r, "mode") == "time" && !col(r, "stack").is_empty()),
    ("bind_pose", |r| options(r).iter().any(|o| o.starts_with("bind_pose="))),
    ("no_extrapolation", |r| options(r).contains(&"no_extrapolation")),
    ("conversion", |r| !col(r, "conversion").is_empty()),
    ("transform_skin", |r| col(r, "transform_skin") == "yes"),
];

/// The `keyscene convert` arguments for a row, as the `run_fbx_refs.sh` template
/// `convert {fbx} {out} --time {time} --stack {stack} --space {conversion}
/// {extrapolation?--no-extrapolation} --bind-pose {pose} {transform_skin?--transform-skin}`.
fn convert_args(fbx: &Path, out: &Path, r: &Row) -> Vec<String> {
    let mut a = vec!["convert".to_string(), fbx.display().to_string(), out.display().to_string()];
    if col(r, "mode") == "time" {
        a.extend(["--time".into(), col(r, "time_s").into()]);
    }
    if !col(r, "stack").is_empty() {
        a.extend(["--stack".into(), col(r, "stack").into()]);
    }
    if !col(r, "conversion").is_empty() {
        a.extend(["--space".into(), col(r, "conversion").into()]);
    }
    for o in options(r) {
        if o == "no_extrapolation" {
            a.push("--no-extrapolation".into());
        } else if let Some(name) = o.strip_prefix("bind_pose=") {
            a.extend(["--bind-pose".into(), name.into()]);
        }
    }
    if col(r, "transform_skin") == "yes" {
        a.push("--transform-skin".into());
    }
    a
}

fn check(corpus: &Path, oracles: &Path, r: &Row, out_dir: &Path, kind: &str) -> Result<(), Failed> {
    let fbx_dir = corpus.join("fbx");
    let out = out_dir.join(format!("{kind}.obj"));
    let args = convert_args(&fbx_dir.join(col(r, "fbx")), &out, r);
    let run = Command::new(env!("CARGO_BIN_EXE_keyscene")).args(&args).output()?;
    if !run.status.success() {
        return Err(format!(
            "keyscene {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&run.stderr)
        )
        .into());
    }
    let mut cmp = Command::new("python3");
    cmp.arg(oracles.join("obj_compare.py")).arg(fbx_dir.join(col(r, "obj"))).arg(&out);
    cmp.args([
        "--match",
        col(r, "match"),
        "--tolerance",
        col(r, "tolerance"),
        "--position-scale",
        col(r, "position_scale"),
    ]);
    if col(r, "compare_normals") == "yes" {
        cmp.arg("--normals");
        for g in options(r).iter().filter_map(|o| o.strip_prefix("skip_normals=")) {
            cmp.args(["--skip-normals-group", g]);
        }
    }
    if col(r, "compare_uvs") == "yes" {
        cmp.arg("--uvs");
    }
    let res = cmp.output()?;
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
    let oracles = std::env::var_os("KEYSCENE_ORACLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| corpus.join("../oracles"));
    let all = rows(&corpus.join("fbx/references.tsv"));
    let out_dir = std::sync::Arc::new(tempfile::tempdir().expect("temporary folder"));
    let mut trials = Vec::new();
    for (kind, pick) in KINDS {
        let row = all.iter().find(|r| pick(r)).cloned();
        let (corpus, oracles, out_dir) = (corpus.clone(), oracles.clone(), out_dir.clone());
        let name = match &row {
            Some(r) => format!("{kind}: {} -> {}", col(r, "fbx"), col(r, "obj")),
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
