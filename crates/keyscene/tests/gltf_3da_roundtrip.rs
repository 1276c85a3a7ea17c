//! Round trip glTF → 3DA → glTF (issue #5, §3 item 2, second half): every corpus 3DS file
//! with a lib3ds reference is written as GLB, read back, exported to 3DA (bytes written and
//! read back), written as GLB again and read back; that last scene, evaluated at the
//! reference frames (time = frame / 30 s), must put every mesh where lib3ds does, within
//! 1e-4 × max(1, scene bbox diagonal at that frame).
//!
//! 3DA streams are per vertex, so the 3DA exporter splits vertices along normal/UV seams,
//! reorders them per material and leaves out vertices no face uses (docs/3da.md): the source
//! vertex order does not survive. What is compared, per reference mesh node (the final scene's
//! mesh node with the same name; 3DA keeps no 3DS instance name, so the k-th node of a name
//! goes to the k-th reference node of that name):
//! - each lib3ds sample vertex that a face uses has a final vertex at its position;
//! - the world bbox, when every source vertex is used by a face (else lib3ds's bbox includes
//!   points the 3DA cannot hold);
//! - every final vertex lies inside the reference bbox grown by the tolerance.
//!
//! The final glTF is Y-up; positions are mapped back to 3DS's Z-up with `(x, y, z) → (x, −z, y)`
//! (docs/gltf.md, "Axis root node").
//!
//! Axes: the 3DA exporter converts to 3ds Max's +Z-up axes by default (docs/3da.md, "Axes"),
//! and the 3DA reader labels every file +Z up, so the glTF read back (+Y up) goes into the 3DA
//! turned to +Z up and comes out of the last glTF write +Y up again, with no relabelling.

mod common;

use std::path::Path;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::{gltf, three_da};
use keyscene::scene::Scene;
use keyscene::ReadOptions;
use libtest_mimic::Failed;
use serde_json::Value;

use common::lib3ds;
use common::try_vec3 as vec3;

fn glb_round(scene: &Scene) -> Result<Scene, String> {
    // With `_KEYSCENE_VERTEX`: the GLB's meshes keep the source vertex order.
    let mut opts = gltf::WriteOptions::default();
    opts.source_vertex_ids = true;
    let file = gltf::write(scene, &opts).map_err(|e| e.to_string())?;
    Ok(gltf::read(&file.main, &ReadOptions::default()).map_err(|e| e.to_string())?.0)
}

/// 3DA export (default options: Max axes), bytes, read back.
fn three_da_round(scene: &Scene) -> Result<Scene, String> {
    let (file, _, _) = three_da::export(scene, &three_da::ExportOptions::default())
        .map_err(|e| format!("3DA export: {e}"))?;
    let bytes = three_da::write(&file).map_err(|e| format!("3DA write: {e}"))?;
    Ok(three_da::load(&bytes, &ReadOptions::default()).map_err(|e| format!("3DA read: {e}"))?.0)
}

/// Whether every vertex of the source mesh drawn by the reference node is used by a face.
fn all_vertices_used(src: &Scene, r: &Value) -> Option<bool> {
    let node = common::find_node(src, r)?;
    let mesh = &src.meshes[src.nodes[node].mesh?];
    let mut used = vec![false; mesh.positions.len()];
    for &v in &mesh.corner_vertices {
        *used.get_mut(v as usize)? = true;
    }
    Some(used.iter().all(|&u| u))
}

/// Whether source vertex `index` of the reference node's mesh is used by a face.
fn vertex_used(src: &Scene, r: &Value, index: u32) -> bool {
    common::find_node(src, r)
        .and_then(|n| src.nodes[n].mesh)
        .is_some_and(|m| src.meshes[m].corner_vertices.contains(&index))
}

fn check(corpus: &Path, reference: &Path) -> Result<(), Failed> {
    let (refj, file) = lib3ds::load(corpus, reference)?;
    let (src, _) = keyscene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let back = glb_round(&three_da_round(&glb_round(&src)?)?)?;
    let anim = (!back.animations.is_empty()).then_some(0);
    let samples = refj["samples"].as_array().ok_or("reference without samples")?;
    let mut mismatches = lib3ds::Mismatches::default();
    for sample in samples {
        let frame = sample["frame"].as_f64().ok_or("sample without frame")?;
        let pose = back.evaluate(anim, Time::Seconds(frame / 30.0));
        let nodes = sample["nodes"].as_array().ok_or("sample without nodes")?;
        let tol = lib3ds::tolerance(nodes);
        let mut used = vec![false; back.nodes.len()];
        for n in nodes {
            let Some(bmin) = vec3(&n["world_bbox_min"]) else { continue };
            let bmax = vec3(&n["world_bbox_max"]).ok_or("bbox without max")?;
            let name = n["name"].as_str().unwrap_or("");
            let at = format!("frame {frame}: node {name:?}");
            let Some(id) = (0..back.nodes.len())
                .find(|&i| !used[i] && back.nodes[i].name == name && back.nodes[i].mesh.is_some())
            else {
                mismatches.push(format!("{at}: missing after the round trip"));
                continue;
            };
            used[id] = true;
            let world: Vec<DVec3> = pose
                .world_positions(&back, id)
                .into_iter()
                .map(|p| DVec3::new(p.x, -p.z, p.y))
                .collect();
            let outside = world
                .iter()
                .map(|p| (bmin - *p).max(*p - bmax).max_element().max(0.0))
                .fold(0.0f64, f64::max);
            mismatches.check(&at, "vertex outside the reference bbox", outside, tol);
            if all_vertices_used(&src, n) == Some(true) && !world.is_empty() {
                let (gmin, gmax) = common::bbox(world.iter().copied());
                mismatches.check(&at, "bbox", common::bbox_diff((gmin, gmax), (bmin, bmax)), tol);
            }
            for sv in n["world_sample_vertices"].as_array().into_iter().flatten() {
                let want = vec3(&sv["position"]).ok_or("sample vertex without position")?;
                let index = sv["index"].as_u64().ok_or("sample vertex without index")? as u32;
                if !vertex_used(&src, n, index) {
                    continue;
                }
                let nearest =
                    world.iter().map(|p| (*p - want).length()).fold(f64::INFINITY, f64::min);
                mismatches.check(&at, &format!("sample vertex {index}"), nearest, tol);
            }
        }
    }
    mismatches.finish()
}

fn main() {
    let corpus = common::corpus();
    common::run(lib3ds::trials(&corpus, check))
}
