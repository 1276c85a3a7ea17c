//! The lib3ds references of the corpus (`3ds/reference/*.lib3ds.json`, written by
//! `shared/oracles/lib3ds_dump.c`) and the comparison the glTF tests share: per sample frame, a
//! tolerance of 1e-4 × the scene size, and mismatches collected with the worst one.

use std::path::{Path, PathBuf};

use glam::DVec3;
use libtest_mimic::{Failed, Trial};
use serde_json::Value;

use super::try_vec3 as vec3;

/// The trial name of reference file `reference`: its file name less `.lib3ds.json`.
pub fn name(reference: &Path) -> String {
    let file = reference.file_name().and_then(|n| n.to_str()).unwrap_or("?");
    file.trim_end_matches(".lib3ds.json").to_string()
}

/// Every lib3ds reference file of the corpus, sorted; none without a corpus.
pub fn references(corpus: &Option<PathBuf>) -> Vec<PathBuf> {
    corpus
        .as_ref()
        .map(|c| super::files_with_ext(&c.join("3ds/reference"), &["json"]))
        .unwrap_or_default()
}

/// One corpus trial per reference file running `check(corpus, reference)`, or one ignored
/// `corpus` trial when there is none.
pub fn trials(
    corpus: &Option<PathBuf>,
    check: fn(&Path, &Path) -> Result<(), Failed>,
) -> Vec<Trial> {
    let mut trials: Vec<Trial> = references(corpus)
        .into_iter()
        .map(|r| super::corpus_trial(name(&r), corpus, move |c| check(c, &r)))
        .collect();
    if trials.is_empty() {
        trials.push(super::corpus_trial("corpus", corpus, |_| Ok(())));
    }
    trials
}

/// A reference's JSON and the corpus 3DS file it describes.
pub fn load(corpus: &Path, reference: &Path) -> Result<(Value, PathBuf), String> {
    let text = std::fs::read_to_string(reference).map_err(|e| e.to_string())?;
    let json: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let file = corpus.join("3ds").join(json["file"].as_str().ok_or("reference without file")?);
    Ok((json, file))
}

/// The tolerance of one sample's comparisons: 1e-4 × max(1, diagonal of the box around every
/// node's `world_bbox_min`/`world_bbox_max`).
pub fn tolerance(nodes: &[Value]) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for n in nodes {
        if let (Some(a), Some(b)) = (vec3(&n["world_bbox_min"]), vec3(&n["world_bbox_max"])) {
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    let diag = if lo.x.is_finite() { (hi - lo).length() } else { 0.0 };
    1e-4 * diag.max(1.0)
}

/// The mismatches of one file's comparisons and the worst error in tolerances.
#[derive(Default)]
pub struct Mismatches {
    worst: f64,
    failures: Vec<String>,
}

impl Mismatches {
    /// Records a failure that has no error size (a node missing, a count that differs).
    pub fn push(&mut self, failure: String) {
        self.failures.push(failure);
    }

    /// Compares `err` with `tol`: a failure (also for NaN) when it is not within.
    pub fn check(&mut self, at: &str, what: &str, err: f64, tol: f64) {
        self.worst = self.worst.max(err / tol);
        if err.is_nan() || err > tol {
            self.failures.push(format!("{at}: {what} off by {err:.3e} (tolerance {tol:.3e})"));
        }
    }

    /// `Ok` when nothing failed, else the count, the worst error and the first 8 failures.
    pub fn finish(mut self) -> Result<(), Failed> {
        if self.failures.is_empty() {
            return Ok(());
        }
        let n = self.failures.len();
        self.failures.truncate(8);
        let worst = self.worst;
        Err(format!("{n} mismatches (worst {worst:.2} × tolerance):\n{}", self.failures.join("\n"))
            .into())
    }
}
