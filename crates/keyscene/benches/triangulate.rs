//! Triangulation of n-gons (`Mesh::triangle_corners`, issue 33 §7 and issue 37 goal 3), side
//! by side with ufbx 0.23's `ufbx_triangulate_face` on the same polygons: every corpus FBX file
//! whose name says it holds n-gons (`*ngon*`), each mesh triangulated whole, best time of
//! several runs, as JSON lines `{"file", "corners", "keyscene_ms", "ufbx_ms"}`.
//!
//! ```text
//! KEYSCENE_CORPUS=$PWD/../shared/corpus cargo bench -p keyscene --bench triangulate
//! ```

#[path = "common/fbx_files.rs"]
#[allow(dead_code)]
mod fbx_files;

use std::time::Duration;

fn main() {
    let root = match std::env::var_os("KEYSCENE_CORPUS") {
        Some(d) => std::path::PathBuf::from(d).join("fbx"),
        None => {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/fbx")
        }
    };
    let Ok(dirs) = std::fs::read_dir(&root) else {
        eprintln!("skipped: no corpus at {}", root.display());
        return;
    };
    let mut files: Vec<_> = dirs
        .flatten()
        .filter(|d| d.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.contains("ngon") && name.ends_with(".fbx")
        })
        .collect();
    files.sort();
    for path in files {
        let Ok((scene, _)) = keyscene::load(&path) else { continue };
        let corners: usize = scene.meshes.iter().map(|m| m.corner_vertices.len()).sum();
        let ours = fbx_files::best_time(Duration::from_millis(500), 3, 200, || {
            for mesh in &scene.meshes {
                std::hint::black_box(mesh.triangle_corners());
            }
        });
        let theirs =
            ufbx::load_file(path.to_str().unwrap_or(""), ufbx::LoadOpts::default()).ok().map(|s| {
                let most = s.meshes.iter().map(|m| m.max_face_triangles).max().unwrap_or(1);
                let mut indices = vec![0u32; 3 * most.max(1)];
                fbx_files::best_time(Duration::from_millis(500), 3, 200, || {
                    for mesh in s.meshes.iter() {
                        for &face in mesh.faces.iter() {
                            std::hint::black_box(mesh.triangulate_face(&mut indices, face));
                        }
                    }
                })
            });
        println!(
            "{{\"file\": {:?}, \"corners\": {corners}, \"keyscene_ms\": {:.3}, \"ufbx_ms\": {}}}",
            path.file_name().unwrap_or_default(),
            ours.as_secs_f64() * 1e3,
            theirs.map_or("null".into(), |t| format!("{:.3}", t.as_secs_f64() * 1e3)),
        );
    }
}
