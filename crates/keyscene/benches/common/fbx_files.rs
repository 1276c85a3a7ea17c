//! The FBX benchmark files MANIFEST.md lists ("Benchmarks": the largest files of the corpus),
//! shared by the FBX benches.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// MANIFEST.md "Benchmarks": file stems (each matches every encoding variant present).
const BENCHMARK_STEMS: &[&str] = &[
    "fbx-conv/knight",
    "assimp/embedded_ascii/box_embedded_texture_fragmented",
    "ufbx/maya_slime_7500_ascii",
    "ufbx/maya_slime_7500_binary",
    "ufbx/motionbuilder_thumbnail_7700_ascii",
    "ufbx/maya_human_ik_6100_binary",
    "ufbx/maya_kenney_character",
    "ufbx/synthetic_id_collision",
    "assimp/nonbsd/kwxport_test_vcolors_2013_binary",
    "ufbx/blender_293_barbarian",
    "ufbx/maya_ngon_maze",
    "fbx-conv/softimage_head2",
];

/// `$KEYSCENE_CORPUS/fbx` (absolute: cargo runs benches in the crate's folder), else
/// `../shared/corpus/fbx` beside the workspace, when present.
fn corpus_fbx() -> Option<PathBuf> {
    let dir = match std::env::var_os("KEYSCENE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    let fbx = dir.join("fbx");
    fbx.is_dir().then_some(fbx)
}

/// Benchmark files by path relative to the corpus's `fbx/` folder, with their bytes; empty
/// without a corpus.
pub fn files() -> &'static BTreeMap<String, Vec<u8>> {
    static FILES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut out = BTreeMap::new();
        let Some(root) = corpus_fbx() else { return out };
        for stem in BENCHMARK_STEMS {
            let (dir, prefix) = stem.rsplit_once('/').unwrap();
            let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(prefix) && name.to_ascii_lowercase().ends_with(".fbx") {
                    if let Ok(bytes) = std::fs::read(e.path()) {
                        out.insert(format!("{dir}/{name}"), bytes);
                    }
                }
            }
        }
        out
    })
}
