//! The 3DS benchmark files the `load` and `convert` benches share: every `.3ds`/`.prj` file
//! under `$KEYSCENE_CORPUS/3ds` (its `reference/` folders left out) but
//! `online3dviewer/wrong.3ds`, which is not a 3DS file — the set `tools/bench_lib3ds.c` is
//! measured on (docs/benchmarks.md).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One benchmark file.
pub struct ThreeDsFile {
    /// The path relative to the corpus's `3ds/` folder (`blitz3d/SKELETON.3DS`).
    pub name: String,
    /// The file's path on disk.
    pub path: PathBuf,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

/// The corpus folder (`$KEYSCENE_CORPUS`, absolute: cargo runs benches in the crate's folder;
/// else `../shared/corpus` beside the workspace), when present.
pub fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("KEYSCENE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    dir.is_dir().then_some(dir)
}

/// The benchmark files sorted by name; empty without a corpus.
pub fn files() -> &'static [ThreeDsFile] {
    static FILES: OnceLock<Vec<ThreeDsFile>> = OnceLock::new();
    FILES.get_or_init(|| {
        let Some(root) = corpus().map(|c| c.join("3ds")) else { return Vec::new() };
        let mut out = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
                if p.is_dir() && p.file_name().is_some_and(|n| n != "reference") {
                    stack.push(p);
                } else if (ext == "3ds" || ext == "prj")
                    && p.file_name().is_some_and(|n| n != "wrong.3ds")
                {
                    let name = p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().into_owned();
                    let bytes = std::fs::read(&p).expect("corpus file is readable");
                    out.push(ThreeDsFile { name, path: p, bytes });
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    })
}
