//! Shared by the CLI's corpus tests.

use std::path::{Path, PathBuf};

/// The corpus folder: `KEYSCENE_CORPUS`, else `../shared/corpus` beside the workspace; `None`
/// when that default is absent (the corpus tests then report themselves skipped). Panics
/// when `KEYSCENE_CORPUS` names a folder that does not exist, as the library's tests do.
pub fn corpus() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("KEYSCENE_CORPUS") {
        let dir = PathBuf::from(dir);
        assert!(dir.is_dir(), "KEYSCENE_CORPUS={} is not a folder", dir.display());
        return Some(dir);
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    default.is_dir().then_some(default)
}
