//! The 3DA → source comparison shared by `three_da_from_3ds.rs` and `three_da_from_fbx.rs`:
//! a 3DA file read back is evaluated at a frame and, per entity with a mesh, compared with
//! its source node (`ExportReport::entity_nodes`) posed by keyscene's evaluation of the
//! source (which `three_ds_lib3ds.rs` and the FBX reference tests pin to lib3ds and ufbx).

use std::collections::HashSet;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::three_da::{ExportReport, File};
use keyscene::scene::Scene;

/// Points sorted by x for nearest-point queries within a tolerance.
pub struct Cloud(Vec<DVec3>);

impl Cloud {
    pub fn new(mut p: Vec<DVec3>) -> Cloud {
        p.sort_by(|a, b| a.x.total_cmp(&b.x));
        Cloud(p)
    }
    /// Distance (max-norm) to the nearest point, looking only within `tol` in x
    /// (infinity when there is none).
    pub fn near(&self, q: DVec3, tol: f64) -> f64 {
        let start = self.0.partition_point(|p| p.x < q.x - tol);
        let mut best = f64::INFINITY;
        for p in &self.0[start..] {
            if p.x > q.x + tol {
                break;
            }
            best = best.min((*p - q).abs().max_element());
        }
        best
    }
}

pub use super::{bbox, bbox_diff};

/// Most frames [`integer_and_half_frames`] returns: 1000 frames of animation.
pub const MAX_SAMPLES: usize = 2001;

/// Every integer and half frame of `[f0, f1]` (both clamped at 0, as the exporter writes no
/// frame below 0); a range longer than [`MAX_SAMPLES`] half frames (`maya_long_keyframes`:
/// 5,000,000 frames) is sampled at `MAX_SAMPLES` integer and half frames spread evenly over
/// it, both ends included.
pub fn integer_and_half_frames(f0: f64, f1: f64) -> Vec<f64> {
    let (f0, f1) = (f0.max(0.0), f1.max(0.0));
    let steps = ((f1 - f0).max(0.0) * 2.0).round() as usize;
    if steps < MAX_SAMPLES {
        return (0..=steps).map(|i| f0 + i as f64 * 0.5).collect();
    }
    let mut out: Vec<f64> = (0..MAX_SAMPLES)
        .map(|k| f0 + ((k * steps) as f64 / (MAX_SAMPLES - 1) as f64).round() * 0.5)
        .collect();
    out.dedup();
    out
}

/// Entities exact at integer frames only: those the exporter resampled
/// (`ExportReport::resampled_entities`), their descendants, and skinned entities of which a
/// joint is one (`back` is the file read back: node `i` is entity `i`).
pub fn integer_only(file: &File, report: &ExportReport, back: &Scene) -> Vec<bool> {
    let mut out = vec![false; file.entities.len()];
    for (e, ent) in file.entities.iter().enumerate() {
        let p = ent.parent_idx as usize;
        out[e] =
            report.resampled_entities.contains(&e) || (ent.parent_idx != 0xFFFF && p < e && out[p]);
    }
    let skinned: Vec<bool> = (0..out.len())
        .map(|e| {
            back.nodes[e].mesh.and_then(|m| back.meshes[m].skin).is_some_and(|s| {
                back.skins[s].joints.iter().any(|j| out.get(j.node) == Some(&true))
            })
        })
        .collect();
    out.iter().zip(skinned).map(|(a, b)| *a || b).collect()
}

/// The matrix from the read-back 3DA's root space (3ds Max axes, `Scene::meta.axes` of the
/// 3DA reader) to the source's axes: undoes the exporter's default axis conversion
/// (docs/3da.md, "Axes"), so positions compare in the source's world.
pub fn to_source_axes(src: &Scene, back: &Scene) -> glam::DMat4 {
    back.axis_unit_conversion(src.meta.axes, None)
}

/// One entity compared at one frame.
pub struct EntityDiff {
    /// Entity index (= node of the read-back scene).
    pub entity: usize,
    /// The source node.
    pub node: usize,
    /// Largest distance (max-norm) from an exported vertex to the nearest source vertex.
    pub worst: f64,
    /// Largest difference between the exported vertices' world box and the box of the
    /// source vertices faces use.
    pub bbox: f64,
}

/// All entities with a mesh that has faces, compared at `frame` (source frame numbers; the
/// 3DA keeps them). Returns the tolerance `1e-4 × max(1, diagonal of the source's world box
/// over all mesh nodes)` and the per-entity differences. Meshes with no polygon of 3 or more
/// corners (points, lines) have no 3DA geometry and are left out.
pub fn compare_frame(
    src: &Scene,
    src_anim: Option<usize>,
    back: &Scene,
    report: &ExportReport,
    frame: f64,
) -> (f64, Vec<EntityDiff>) {
    let back_anim = (!back.animations.is_empty()).then_some(0);
    let pose_src = src.evaluate(src_anim, Time::Frame(frame));
    let pose_3da = back.evaluate(back_anim, Time::Frame(frame));
    let per_node: Vec<(usize, usize, Vec<DVec3>)> = report
        .entity_nodes
        .iter()
        .enumerate()
        .filter(|(_, &n)| src.nodes[n].mesh.is_some())
        .map(|(e, &n)| (e, n, pose_src.world_positions(src, n)))
        .collect();
    let (lo, hi) = bbox(per_node.iter().flat_map(|(_, _, p)| p.iter().copied()));
    let tol = 1e-4 * (hi - lo).length().max(1.0);
    let to_src = to_source_axes(src, back);
    let mut out = Vec::new();
    for (e, node, theirs) in per_node {
        let mesh = &src.meshes[src.nodes[node].mesh.unwrap()];
        // The vertices faces use: polygons of 3 or more corners (3DA has no line or point
        // primitives, so 1- and 2-corner polygons and loose vertices are not written).
        let used: HashSet<u32> = (0..mesh.polygon_count())
            .map(|p| mesh.polygon(p))
            .filter(|c| c.len() >= 3)
            .flatten()
            .copied()
            .collect();
        if used.is_empty() {
            continue;
        }
        let used_pts: Vec<DVec3> = theirs
            .iter()
            .enumerate()
            .filter(|(v, _)| used.contains(&(*v as u32)))
            .map(|(_, p)| *p)
            .collect();
        let ours: Vec<DVec3> =
            pose_3da.world_positions(back, e).iter().map(|&p| to_src.transform_point3(p)).collect();
        if ours.is_empty() && used_pts.is_empty() {
            continue;
        }
        let cloud = Cloud::new(used_pts.clone());
        let worst = ours.iter().map(|&p| cloud.near(p, tol * 2.0)).fold(0.0f64, f64::max);
        let bb = bbox_diff(bbox(ours.iter().copied()), bbox(used_pts.iter().copied()));
        out.push(EntityDiff { entity: e, node, worst, bbox: bb });
    }
    (tol, out)
}
