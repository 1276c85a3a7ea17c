//! Every corpus FBX file through the low-level parser (`formats::fbx::parse`).
//!
//! - Files MANIFEST.md does not mark as negative parse without error.
//! - Negative files (fuzz, `_fail_`, unsupported versions, the 0x00→0x20 mangled
//!   `transparentTest`, pre-6.1 legacy) give `Ok` or a typed `Err`, never a panic, quickly.
//! - Header facts agree with MANIFEST.md's `ver`/`enc` columns (read from the bytes by the
//!   corpus curator, not by this code).
//! - Control-point counts (`Vertices` / 3) agree with what the `ufbx` crate loads.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use keyscene::formats::fbx::{self, Encoding, Property};
use keyscene::limits::Limits;
use libtest_mimic::{Failed, Trial};

/// `(version, encoding)` per file from MANIFEST.md's table (`ver` and `enc` columns).
fn manifest_rows(fbx_dir: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(fbx_dir.join("MANIFEST.md")).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("| `") && l.contains(".fbx`") | l.contains(".FBX`"))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(" | ").collect();
            let file = cols.first()?.trim_start_matches("| ").trim_matches('`').to_string();
            Some((file, cols.get(5)?.trim().to_string(), cols.get(6)?.trim().to_string()))
        })
        .collect()
}

fn rel_name(fbx_dir: &Path, path: &Path) -> String {
    path.strip_prefix(fbx_dir).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// Sum of control points over meshes: `Geometry` nodes of class Mesh (7.x) or `Model`
/// nodes (6.x) with a `Vertices` child. A legacy (FBX 3.0–5.8) `Model` has no class
/// property; one with `Vertices` is a mesh (ufbx 0.23 `ufbxi_read_legacy_model` reads a mesh
/// from any model that has them). Legacy files have no `Objects` record: their models are
/// top-level records.
fn control_points(doc: &fbx::Document<'_>) -> usize {
    let objects: Vec<_> = match doc.root("Objects") {
        Some(objects) => objects.children().collect(),
        None if doc.version < 6000 => doc.roots().collect(),
        None => return 0,
    };
    let mut n = 0;
    for obj in objects {
        let is_mesh = match obj.name() {
            "Geometry" => obj.property(2).and_then(Property::as_str) == Some("Mesh"),
            "Model" => match obj.property(1) {
                Some(class) => class.as_str() == Some("Mesh"),
                None => doc.version < 6000,
            },
            _ => false,
        };
        if !is_mesh {
            continue;
        }
        if let Some(v) = obj.child("Vertices") {
            n += match v.properties() {
                [Property::Array(a)] => a.len(),
                list => list.iter().filter(|p| p.as_f64().is_some()).count(),
            } / 3;
        }
    }
    n
}

fn check_file(
    fbx_dir: &Path,
    path: &Path,
    manifest: &[(String, String, String)],
) -> Result<(), Failed> {
    let rel = rel_name(fbx_dir, path);
    let bytes = std::fs::read(path).map_err(|e| format!("{rel}: {e}"))?;
    let start = Instant::now();
    let result = fbx::parse(&bytes, &Limits::default());
    let took = start.elapsed();
    if took > Duration::from_secs(5) {
        return Err(format!("{rel}: parsing took {took:?}").into());
    }
    let doc = match result {
        Ok(doc) => doc,
        Err(e) if common::is_negative_fbx(&rel) => {
            assert!(!e.to_string().is_empty());
            return Ok(());
        }
        Err(e) => return Err(format!("{rel}: {e}").into()),
    };
    if common::is_negative_fbx(&rel) {
        return Ok(());
    }
    if let Some((_, ver, enc)) = manifest.iter().find(|(f, _, _)| *f == rel) {
        if let Ok(ver) = ver.parse::<u32>() {
            if doc.version != ver {
                return Err(
                    format!("{rel}: version {} but MANIFEST.md says {ver}", doc.version).into()
                );
            }
        }
        let want = match enc.as_str() {
            "ascii" => Some((Encoding::Ascii, false)),
            "binary" => Some((Encoding::Binary, false)),
            "binary-BE" => Some((Encoding::Binary, true)),
            _ => None,
        };
        if let Some(want) = want {
            if (doc.encoding, doc.big_endian) != want {
                return Err(format!(
                    "{rel}: {:?}/BE={} but MANIFEST.md says {enc}",
                    doc.encoding, doc.big_endian
                )
                .into());
            }
        }
    }
    if let Ok(scene) = ufbx::load_memory(&bytes, ufbx::LoadOpts::default()) {
        let theirs: usize = scene.meshes.iter().map(|m| m.num_vertices).sum();
        let ours = control_points(&doc);
        if ours != theirs {
            return Err(format!("{rel}: {ours} control points, ufbx loads {theirs}").into());
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = corpus
        .as_ref()
        .map(|c| common::files_with_ext(&c.join("fbx"), &["fbx"]))
        .unwrap_or_default();
    let fbx_dir = corpus.as_ref().map(|c| c.join("fbx"));
    let manifest = std::sync::Arc::new(fbx_dir.as_deref().map(manifest_rows).unwrap_or_default());
    for path in files {
        let dir = fbx_dir.clone().unwrap();
        let name = format!("parse::{}", rel_name(&dir, &path));
        let manifest = manifest.clone();
        trials
            .push(common::corpus_trial(name, &corpus, move |_| check_file(&dir, &path, &manifest)));
    }
    trials.push(common::corpus_trial("manifest_lists_every_fbx_file", &corpus, move |c| {
        let dir = c.join("fbx");
        let rows = manifest_rows(&dir);
        let files = common::files_with_ext(&dir, &["fbx"]);
        if rows.len() < 200 || files.len() < 200 {
            return Err(format!(
                "{} manifest rows, {} files: corpus incomplete?",
                rows.len(),
                files.len()
            )
            .into());
        }
        Ok(())
    }));
    trials.push(Trial::test("negative_list_is_not_empty", || {
        assert!(
            common::is_negative_fbx("ufbx/fuzz/fuzz_0001.fbx")
                && !common::is_negative_fbx("ufbx/maya_cube_7400_binary.fbx")
        );
        Ok(())
    }));
    common::run(trials)
}
