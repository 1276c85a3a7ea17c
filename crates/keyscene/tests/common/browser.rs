//! The headless-browser set-up shared by the browser trials (`crates/keyscene/tests/gltf_threejs.rs`
//! and `crates/keyscene-cli/tests/view.rs`, which include this file with `#[path]`; it is not a
//! module of `common` so the other test binaries do not compile it). Its node half is
//! `tools/browser.mjs`.
//!
//! npm packages (`playwright-core`, …) come from `KEYSCENE_NODE_MODULES` (default
//! `/opt/keyscene-oracles/node/node_modules`), Chromium from `KEYSCENE_CHROMIUM` (default
//! `/usr/bin/chromium`); without them the trials are reported ignored, saying why.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The node_modules folder holding playwright-core and the other packages.
pub fn node_modules() -> PathBuf {
    std::env::var_os("KEYSCENE_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/keyscene-oracles/node/node_modules"))
}

/// The Chromium executable.
pub fn chromium() -> PathBuf {
    std::env::var_os("KEYSCENE_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// Why the browser checks cannot run here, or `None` when they can: playwright-core and every
/// file of `packages` (paths inside node_modules, e.g. `three/build/three.module.js`) must
/// exist, Chromium too, and `node` must start.
pub fn client_missing(packages: &[&str]) -> Option<String> {
    let modules = node_modules();
    for package in std::iter::once("playwright-core/package.json").chain(packages.iter().copied()) {
        if !modules.join(package).is_file() {
            return Some(format!(
                "{} not found in {} (set KEYSCENE_NODE_MODULES)",
                package.split('/').next().unwrap_or(package),
                modules.display()
            ));
        }
    }
    if !chromium().is_file() {
        return Some(format!("no Chromium at {} (set KEYSCENE_CHROMIUM)", chromium().display()));
    }
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        _ => Some("node not found".into()),
    }
}

/// `node SCRIPT JOB` with the two variables passed on: its output (the scripts print one JSON
/// document on stdout).
pub fn run_node(script: &Path, job: &Path) -> Result<std::process::Output, String> {
    Command::new("node")
        .arg(script)
        .arg(job)
        .env("KEYSCENE_NODE_MODULES", node_modules())
        .env("KEYSCENE_CHROMIUM", chromium())
        .output()
        .map_err(|e| format!("cannot run node: {e}"))
}
