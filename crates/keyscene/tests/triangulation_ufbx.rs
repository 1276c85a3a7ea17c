//! Triangulation against the `ufbx` crate (issue 33 §7, "Triangulation never folds"): on every
//! polygon of five or more corners in every corpus FBX file ufbx loads, keyscene's
//! `scene::geometry::triangulate` folds no more than ufbx 0.23's `ufbx_triangulate_face`.
//!
//! Both triangulate the same polygon: ufbx's own vertex positions and face corners, so the
//! reader does not enter. A triangulation's fold is measured in the polygon's Newell plane:
//! the sum of its triangles' unsigned areas less the polygon's area (zero exactly when no
//! triangle faces against the polygon and they tile it; ear clipping's signed areas always sum
//! to the polygon's). For every polygon keyscene's fold is at most ufbx's (within rounding,
//! 1e-9 of the polygon's bounding box squared); the polygons ufbx folds and keyscene does not
//! are counted in the trial's output.

mod common;

use glam::DVec3;
use keyscene::scene::geometry::{newell_normal, triangulate};
use libtest_mimic::Failed;

/// The fold of `tris` (corner numbers within the polygon `pos`), see the module doc.
fn fold(pos: &[DVec3], tris: &[[usize; 3]]) -> f64 {
    let poly: Vec<u32> = (0..pos.len() as u32).collect();
    let newell = newell_normal(pos, &poly);
    let normal = newell.normalize_or_zero();
    let unsigned: f64 = tris
        .iter()
        .map(|t| ((pos[t[1]] - pos[t[0]]).cross(pos[t[2]] - pos[t[0]]).dot(normal) / 2.0).abs())
        .sum();
    unsigned - newell.length() / 2.0
}

/// (polygons compared, polygons ufbx folds and keyscene does not).
fn check(path: &std::path::Path) -> Result<(usize, usize), Failed> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let scene = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let (mut compared, mut better) = (0, 0);
    for mesh in scene.meshes.iter() {
        let mut indices = vec![0u32; 3 * mesh.max_face_triangles.max(1)];
        for &face in mesh.faces.iter().filter(|f| f.num_indices >= 5) {
            let first = face.index_begin as usize;
            let corners = first..first + face.num_indices as usize;
            let pos: Vec<DVec3> = corners
                .clone()
                .map(|c| {
                    let p = mesh.vertex_position[c];
                    DVec3::new(p.x, p.y, p.z)
                })
                .collect();
            let count = mesh.triangulate_face(&mut indices, face) as usize;
            let theirs: Vec<[usize; 3]> = indices[..3 * count]
                .chunks_exact(3)
                .map(|t| [0, 1, 2].map(|k| t[k] as usize - first))
                .collect();
            let poly: Vec<u32> = (0..pos.len() as u32).collect();
            let ours = triangulate(&pos, &poly);
            if ours.len() != pos.len() - 2 {
                return Err(format!("face at corner {first}: {} triangles", ours.len()).into());
            }
            let (lo, hi) = pos.iter().fold((pos[0], pos[0]), |(l, h), p| (l.min(*p), h.max(*p)));
            let slack = 1e-9 * (hi - lo).length_squared().max(f64::MIN_POSITIVE);
            let (a, b) = (fold(&pos, &ours), fold(&pos, &theirs));
            if a > b + slack {
                return Err(format!(
                    "mesh {:?}, face at corner {first} ({} corners): keyscene folds {a:e}, ufbx {b:e}",
                    &*mesh.element.name,
                    pos.len()
                )
                .into());
            }
            compared += 1;
            better += usize::from(b > slack && a <= slack);
        }
    }
    Ok((compared, better))
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for f in common::ufbx_corpus::fbx_files(&corpus) {
        if !f.ufbx_loads {
            continue;
        }
        let path = f.path.clone();
        trials.push(common::corpus_trial(
            format!("triangulation::{}", f.rel),
            &corpus,
            move |_| {
                let (compared, better) = check(&path)?;
                if better > 0 {
                    println!("{}: {compared} n-gons, {better} folded by ufbx only", path.display());
                }
                Ok(())
            },
        ));
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("triangulation", &corpus, |_| {
            Err("no corpus FBX file that ufbx loads".into())
        }));
    }
    common::run(trials);
}
