//! Every 3DS corpus file (except `online3dviewer/wrong.3ds`, a text file) converted to 3DA
//! (issue #4, Done-when 2–4). One trial per file:
//!
//! 1. `formats::three_da::export` + `write`; `check` reports no error on the bytes; read →
//!    write gives the same bytes.
//! 2. The bytes read back (`keyscene::load_bytes`) and evaluated at the lib3ds reference
//!    frames (`corpus/3ds/reference/*.lib3ds.json`; files without a reference: first frame,
//!    first + 0.5, last) match, within `1e-4 × max(1, diagonal of the frame's reference
//!    bbox union)`:
//!    - every exported vertex lies on a source vertex (keyscene's own 3DS evaluation, which
//!      `three_ds_lib3ds.rs` pins to lib3ds) — nearest-point search, since the exporter
//!      reorders, splits per material and duplicates vertices along normal/UV seams;
//!    - the reference's world bbox and centroid, compared as sets: bbox over the vertices
//!      faces use (lib3ds counts unused vertices too, the 3DA has none of them; where a mesh
//!      has unused ones the bbox is compared with keyscene's used-vertex bbox instead), the
//!      centroid over *distinct* positions (the 3DA repeats seam vertices) — equal to the
//!      reference's centroid where the source's positions are distinct and all used, else
//!      compared with keyscene's distinct-used centroid;
//!    - each reference sample vertex (used by a face) has an exported vertex at its position.
//!    - at every integer and half frame of the animation range, every exported vertex lies on
//!      a source vertex and the world bbox equals that of the source vertices faces use
//!      (keyscene's 3DS evaluation; tolerance from the source's bbox union;
//!      `common::three_da::compare_frame`). Entities exact at integer frames only (resampled
//!      by the exporter, or below such an entity) skip the half frames.
//! 3. Strips decode to the lists' triangles, same winding.
//! 4. The collision map answers rays like brute force over its triangles.
//! 5. Truncated copies of the output (64 cuts) fail `check`; 200 single-bit flips (half of
//!    them inside the collision map) neither panic `check` nor the scene loader.
//!
//! ACMR (24-entry FIFO) before/after `optimize_vertex_cache` is printed per file.

mod common;

use common::three_da::{bbox, compare_frame, integer_and_half_frames, integer_only, Cloud};
use common::{find_node, vec3};

use std::collections::HashSet;
use std::path::Path;

use glam::{DVec3, Vec3};
use keyscene::anim::Time;
use keyscene::formats::three_da::{
    self, check::triangles_of_list, check::triangles_of_strip, colmap::Colmap,
};
use libtest_mimic::Failed;
use serde_json::Value;

fn mean(p: &[DVec3]) -> DVec3 {
    p.iter().copied().sum::<DVec3>() / p.len().max(1) as f64
}

fn convert(corpus: &Path, rel: &str) -> Result<(), Failed> {
    let path = corpus.join("3ds").join(rel);
    let (src, _) = keyscene::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (file, scripts, report) = three_da::export(&src, &three_da::ExportOptions::default())?;
    let bytes = three_da::write(&file)?;
    let (again, _) = three_da::read(&bytes, &Default::default())?;
    if three_da::write(&again)? != bytes {
        return Err("write → read → write is not byte-identical".into());
    }
    let rep = three_da::check(&bytes);
    let errors: Vec<String> = rep.errors().map(|i| i.to_string()).collect();
    if !errors.is_empty() {
        return Err(format!(
            "check: {} errors:\n{}",
            errors.len(),
            errors[..errors.len().min(10)].join("\n")
        )
        .into());
    }
    if scripts.len() != file.materials.len() {
        return Err("one material script per material".into());
    }
    eprintln!(
        "{rel}: {} entities, {} triangles, ACMR {:.3} → {:.3}, {} resampled, {} dropped",
        file.entities.len(),
        report.triangles,
        report.acmr_before,
        report.acmr_after,
        report.resampled.len(),
        report.dropped.len()
    );

    // 3. strips.
    for e in &file.entities {
        for (j, s) in e.surfaces.iter().enumerate() {
            let mut a = triangles_of_list(&s.tri_list);
            let mut b = triangles_of_strip(&s.tri_strip);
            a.sort_unstable();
            b.sort_unstable();
            if a != b {
                return Err(format!(
                    "{:?} surface {j}: strip decodes to {} triangles, list has {}",
                    e.name,
                    b.len(),
                    a.len()
                )
                .into());
            }
        }
    }

    // 4. collision map rays vs brute force.
    let map = Colmap::parse(file.colmap.as_deref().ok_or("no collision map")?)
        .map_err(|(o, m)| format!("colmap at {o}: {m}"))?;
    for tree in &map.trees {
        if tree.triangles.is_empty() {
            continue;
        }
        let (lo, hi) = tree
            .vertices
            .iter()
            .fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(l, h), v| {
                (l.min(Vec3::from(*v)), h.max(Vec3::from(*v)))
            });
        let size = (hi - lo).max(Vec3::splat(1e-3));
        let mut seed = 0x9e37_79b9u32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        };
        for r in 0..300 {
            let o = lo - size * 0.25 + Vec3::new(rnd(), rnd(), rnd()) * size * 1.5;
            // Half the rays aim at a vertex (so they hit), half anywhere.
            let target = if r % 2 == 0 {
                Vec3::from(tree.vertices[(rnd() * (tree.vertices.len() - 1) as f32) as usize])
            } else {
                lo + Vec3::new(rnd(), rnd(), rnd()) * size
            };
            let d = (target - o).normalize_or_zero();
            if d == Vec3::ZERO {
                continue;
            }
            let brute = (0..tree.triangles.len())
                .filter_map(|k| tree.triangle_hit(k, o, d))
                .fold(None, |m: Option<f32>, t| Some(m.map_or(t, |m| m.min(t))));
            let fast = tree.ray(o, d, f32::INFINITY).map(|h| h.0);
            if brute != fast {
                return Err(format!(
                    "colmap tree {}: ray {o:?} {d:?}: tree {fast:?}, brute force {brute:?}",
                    tree.kind
                )
                .into());
            }
        }
    }

    // 5. corrupted copies of the output: every truncation is an error; byte flips (also
    // inside the collision map) never panic.
    for k in 1..=64 {
        let cut = bytes.len() * k / 65;
        if !three_da::check(&bytes[..cut]).has_errors() {
            return Err(format!("truncation at {cut} of {} bytes passes check", bytes.len()).into());
        }
    }
    let colmap_at = u32::from_le_bytes(bytes[64..68].try_into().unwrap()) as usize;
    let mut seed = 0x2545_f491u32;
    for k in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let mut bad = bytes.clone();
        let at = if k % 2 == 0 {
            seed as usize % bad.len()
        } else {
            colmap_at + seed as usize % (bad.len() - colmap_at)
        };
        bad[at] ^= 1 << (seed >> 29);
        let _ = three_da::check(&bad);
        let _ = keyscene::load_bytes(&bad, Some(Path::new("x.3da")), &Default::default());
    }

    // 2. read back and evaluate.
    let (back, _) = keyscene::load_bytes(&bytes, Some(Path::new("x.3da")), &Default::default())?;
    let reference =
        corpus.join("3ds/reference").join(format!("{}.lib3ds.json", rel.replace('/', "_")));
    let refj: Option<Value> = match std::fs::read(&reference) {
        Ok(b) => Some(serde_json::from_slice(&b)?),
        Err(_) => None,
    };
    let (a0, a1) = src.animations.first().map(|a| a.frame_range).unwrap_or((0.0, 0.0));
    let frames: Vec<f64> = match &refj {
        Some(r) => {
            r["samples"].as_array().unwrap().iter().map(|s| s["frame"].as_f64().unwrap()).collect()
        }
        None => vec![a0.max(0.0), a0.max(0.0) + 0.5, a1.max(0.0)],
    };
    let back_anim = (!back.animations.is_empty()).then_some(0);
    let mut failures = Vec::new();
    let mut compared = 0usize;
    for (fi, &frame) in frames.iter().enumerate() {
        let pose_src = src.evaluate(Some(0), Time::Frame(frame));
        let pose_3da = back.evaluate(back_anim, Time::Frame(frame));
        let ref_nodes: Vec<&Value> = refj
            .as_ref()
            .map(|r| {
                r["samples"][fi]["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|n| n.get("world_centroid").is_some())
                    .collect()
            })
            .unwrap_or_default();
        // Tolerance from the reference's bbox union, else from the source's.
        let (lo, hi) = if ref_nodes.is_empty() {
            bbox((0..src.nodes.len()).flat_map(|i| pose_src.world_positions(&src, i)))
        } else {
            bbox(
                ref_nodes
                    .iter()
                    .flat_map(|n| [vec3(&n["world_bbox_min"]), vec3(&n["world_bbox_max"])]),
            )
        };
        let tol = 1e-4 * (hi - lo).length().max(1.0);
        for (e, &node) in report.entity_nodes.iter().enumerate() {
            let Some(m) = src.nodes[node].mesh else { continue };
            let mesh = &src.meshes[m];
            let ours = pose_3da.world_positions(&back, e);
            let theirs_all = pose_src.world_positions(&src, node);
            let used: HashSet<u32> = mesh.corner_vertices.iter().copied().collect();
            let used_pts: Vec<DVec3> = (0..theirs_all.len())
                .filter(|v| used.contains(&(*v as u32)))
                .map(|v| theirs_all[v])
                .collect();
            let name = &src.nodes[node].name;
            if ours.is_empty() && used_pts.is_empty() {
                continue;
            }
            let cloud = Cloud::new(used_pts.clone());
            let mut fail = |what: String, d: f64| {
                compared += 1;
                if d.is_nan() || d > tol {
                    failures.push(format!(
                        "frame {frame} {name}: {what} off by {d:.3e} (tolerance {tol:.1e})"
                    ));
                }
            };
            // Every exported vertex on a source vertex.
            let worst = ours.iter().map(|&p| cloud.near(p, tol * 2.0)).fold(0.0f64, f64::max);
            fail(format!("{} exported vertices vs source", ours.len()), worst);
            // Distinct-position centroid; bbox.
            let mut seen = HashSet::new();
            let back_mesh = &back.meshes[back.nodes[e].mesh.unwrap()];
            let distinct_ours: Vec<DVec3> = back_mesh
                .positions
                .iter()
                .zip(&ours)
                .filter(|(p, _)| seen.insert(p.to_array().map(f64::to_bits)))
                .map(|(_, w)| *w)
                .collect();
            let mut seen = HashSet::new();
            let distinct_src: Vec<DVec3> = (0..theirs_all.len())
                .filter(|v| {
                    used.contains(&(*v as u32))
                        && seen.insert(mesh.positions[*v].to_array().map(f64::to_bits))
                })
                .map(|v| theirs_all[v])
                .collect();
            let all_used_distinct =
                used.len() == mesh.positions.len() && distinct_src.len() == mesh.positions.len();
            let (ob_lo, ob_hi) = bbox(ours.iter().copied());
            let r = ref_nodes.iter().find(|r| find_node(&src, r) == Some(node));
            match r {
                Some(r) if used.len() == mesh.positions.len() => {
                    fail(
                        "bbox min vs lib3ds".into(),
                        (ob_lo - vec3(&r["world_bbox_min"])).abs().max_element(),
                    );
                    fail(
                        "bbox max vs lib3ds".into(),
                        (ob_hi - vec3(&r["world_bbox_max"])).abs().max_element(),
                    );
                }
                _ => {
                    let (s_lo, s_hi) = bbox(used_pts.iter().copied());
                    fail("bbox min vs used source".into(), (ob_lo - s_lo).abs().max_element());
                    fail("bbox max vs used source".into(), (ob_hi - s_hi).abs().max_element());
                }
            }
            let c = mean(&distinct_ours);
            match r {
                Some(r) if all_used_distinct => fail(
                    "centroid vs lib3ds".into(),
                    (c - vec3(&r["world_centroid"])).abs().max_element(),
                ),
                _ => fail(
                    "distinct centroid vs source".into(),
                    (c - mean(&distinct_src)).abs().max_element(),
                ),
            }
            if let Some(r) = r {
                let ours_cloud = Cloud::new(ours.clone());
                for s in r["world_sample_vertices"].as_array().unwrap() {
                    let k = s["index"].as_u64().unwrap() as u32;
                    if used.contains(&k) {
                        fail(
                            format!("sample vertex {k} vs lib3ds"),
                            ours_cloud.near(vec3(&s["position"]), tol * 2.0),
                        );
                    }
                }
            }
        }
    }
    // Every integer and half frame of the range (`common::three_da::compare_frame`): every
    // exported vertex on a source vertex (keyscene's 3DS evaluation) and the world bbox of
    // the vertices faces use; tolerance from the source's bbox union.
    if let Some(a) = src.animations.first() {
        let only_integer = integer_only(&file, &report, &back);
        for frame in integer_and_half_frames(a.frame_range.0, a.frame_range.1) {
            let (tol, diffs) = compare_frame(&src, Some(0), &back, &report, frame);
            for d in diffs {
                if frame.fract() != 0.0 && only_integer[d.entity] {
                    continue;
                }
                compared += 1;
                let err = d.worst.max(d.bbox);
                if err.is_nan() || err > tol {
                    failures.push(format!(
                        "frame {frame} {}: exported vertices off the source by {:.3e}, bbox by {:.3e} (tolerance {tol:.1e})",
                        back.nodes[d.entity].name, d.worst, d.bbox
                    ));
                }
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let n = failures.len();
        failures.truncate(12);
        Err(format!("{n} of {compared} comparisons differ:\n{}", failures.join("\n")).into())
    }
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = match &corpus {
        Some(dir) => common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"]),
        None => Vec::new(),
    };
    if files.is_empty() {
        trials.push(common::corpus_trial("three_da_from_3ds", &corpus, |_| {
            Err("no 3DS file found in the corpus".into())
        }));
    }
    for f in files {
        let dir = corpus.clone().unwrap().join("3ds");
        let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "online3dviewer/wrong.3ds" {
            continue;
        }
        trials.push(common::corpus_trial(rel.clone(), &corpus, move |dir| convert(dir, &rel)));
    }
    common::run(trials);
}
