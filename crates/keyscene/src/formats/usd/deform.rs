//! Deformed meshes (skinned, blend-shaped, geometry-cached or switched by a morph track): the
//! evaluator's posed vertices ([`Pose::world_positions`]) carried into the node prim's frame
//! (`world⁻¹`), written as `points` time samples. USD interpolates points linearly; the
//! frames are the timeline's grid (every frame and key), split where the chord between two
//! samples strays more than the tolerance from the posed vertices at a quarter, half or three
//! quarters of the interval (down to [`resample::MIN_SPAN`]), shared by every deformed mesh
//! (one evaluation of the scene serves all). A mesh whose points never change gets one set.
//!
//! These are the deformed meshes UsdSkel cannot show as keyscene poses them (the rigs,
//! [`super::skel`], name why): this keeps what a viewer shows, not the rig (docs/usd.md).

use glam::{DMat4, Vec3};

use super::meshes::Points;
use super::xform::Timeline;
use crate::anim::{resample, ChannelTarget, Pose, Time};
use crate::scene::Scene;

/// Most points (frames × vertices, summed over the deformed meshes) sampled; past it the
/// grid is thinned evenly and the writer warns.
pub const POINT_BUDGET: usize = 1 << 24;

/// Mesh nodes whose vertices move relative to their node over `line`: a skin, blend shapes, a
/// geometry cache, or a morph track switching the mesh.
pub fn deformed_nodes(scene: &Scene, line: &Timeline) -> Vec<usize> {
    let channels = crate::anim::channels_by_node(scene, line.animation);
    (0..scene.nodes.len())
        .filter(|&k| {
            let Some(mesh) = scene.nodes[k].mesh.and_then(|m| scene.meshes.get(m)) else {
                return false;
            };
            mesh.skin.is_some()
                || !mesh.morph_targets.is_empty()
                || mesh.geometry_cache.is_some()
                || channels[k].iter().any(|c| matches!(c, ChannelTarget::Morph(_)))
        })
        .collect()
}

/// Posed points of `nodes` at frame `f`, each in its node's frame; `None` for a node whose
/// world matrix cannot be inverted or whose shown mesh has another vertex count.
fn posed(
    scene: &Scene,
    line: &Timeline,
    nodes: &[(usize, usize)],
    f: f64,
) -> (Pose, Vec<Option<Vec<Vec3>>>) {
    let pose = scene.evaluate(line.animation, Time::Frame(f));
    let points = nodes
        .iter()
        .map(|&(k, count)| {
            let inv: DMat4 = pose.world[k].inverse();
            let wp = pose.world_positions(scene, k);
            (inv.is_finite() && wp.len() == count)
                .then(|| wp.iter().map(|&p| inv.transform_point3(p).as_vec3()).collect())
        })
        .collect();
    (pose, points)
}

/// The largest distance, in world space at the pose `pose`, between the chord `a → b` at `s`
/// and `actual`, over every node (infinite where one side is missing).
fn chord_error(
    pose: &Pose,
    nodes: &[(usize, usize)],
    a: &[Option<Vec<Vec3>>],
    b: &[Option<Vec<Vec3>>],
    actual: &[Option<Vec<Vec3>>],
    s: f32,
) -> f64 {
    let mut worst = 0.0f64;
    for (i, &(k, _)) in nodes.iter().enumerate() {
        let (Some(a), Some(b), Some(x)) = (&a[i], &b[i], &actual[i]) else {
            continue;
        };
        let w = pose.world[k];
        for ((pa, pb), px) in a.iter().zip(b).zip(x) {
            let chord = (*pa + (*pb - *pa) * s).as_dvec3();
            let d = w.transform_point3(chord).distance(w.transform_point3(px.as_dvec3()));
            worst = worst.max(if d.is_nan() { 0.0 } else { d });
        }
    }
    worst
}

/// The points of every node of `nodes` (node, vertex count) over `line`, whether the budget
/// thinned the frames, and the positions in `nodes` of the nodes whose points could not be
/// carried into their frame at some sample (written as at the first frame).
pub fn sample(
    scene: &Scene,
    line: &Timeline,
    nodes: &[(usize, usize)],
) -> (Vec<Points>, bool, Vec<usize>) {
    let verts: usize = nodes.iter().map(|n| n.1).sum::<usize>().max(1);
    let mut grid = line.grid.clone();
    let thinned = grid.len() * verts > POINT_BUDGET;
    if thinned {
        let keep = (POINT_BUDGET / verts).max(2);
        let step = (grid.len() - 1) as f64 / (keep - 1) as f64;
        grid = (0..keep)
            .map(|i| grid[((i as f64 * step).round() as usize).min(grid.len() - 1)])
            .collect();
        grid.dedup();
    }
    let budget = POINT_BUDGET.saturating_sub(grid.len() * verts) / verts;
    let mut cut = Refine { scene, line, nodes, budget, frames: Vec::new(), values: Vec::new() };
    for (j, &f) in grid.iter().enumerate() {
        let (_, here) = posed(scene, line, nodes, f);
        if j > 0 && !thinned {
            let a = cut.frames.len() - 1;
            let before = (cut.frames[a], cut.values[a].clone());
            cut.refine(before, (f, here.clone()), None);
        }
        cut.frames.push(f);
        cut.values.push(here);
    }
    let Refine { frames, values, .. } = cut;
    let points = (0..nodes.len())
        .map(|i| {
            let first = values.first().and_then(|v| v[i].clone()).unwrap_or_default();
            let each: Option<Vec<Vec<Vec3>>> = values.iter().map(|v| v[i].clone()).collect();
            match each {
                Some(each) if each.iter().any(|p| *p != first) => {
                    Points::Sampled { frames: frames.clone(), values: each }
                }
                _ => Points::Static(first.iter().map(|p| p.as_dvec3()).collect()),
            }
        })
        .collect();
    let incomplete = (0..nodes.len()).filter(|&i| values.iter().any(|v| v[i].is_none())).collect();
    (points, thinned, incomplete)
}

/// Points of every node at one frame (`None`: a node not carried into its frame), with the
/// pose they were taken from.
type Posed = (Pose, Vec<Option<Vec<Vec3>>>);

/// The adaptive split of the intervals of the grid (module docs), appending to `frames` and
/// `values`.
struct Refine<'a> {
    scene: &'a Scene,
    line: &'a Timeline,
    nodes: &'a [(usize, usize)],
    budget: usize,
    frames: Vec<f64>,
    values: Vec<Vec<Option<Vec<Vec3>>>>,
}

impl Refine<'_> {
    /// Appends the frames (and their points) that the interval `a → b` needs, in order,
    /// between them (exclusive). `known`: the points at a frame already posed (a quarter of
    /// the parent interval), taken as the middle's when it is that frame (the same bits).
    fn refine(
        &mut self,
        a: (f64, Vec<Option<Vec<Vec3>>>),
        b: (f64, Vec<Option<Vec<Vec3>>>),
        known: Option<(f64, Posed)>,
    ) {
        let span = b.0 - a.0;
        if span <= resample::min_span(b.0) || self.budget == 0 {
            return;
        }
        let mid = a.0 + span / 2.0;
        let (pose, at_mid) = match known {
            Some((k, p)) if k.to_bits() == mid.to_bits() => p,
            _ => posed(self.scene, self.line, self.nodes, mid),
        };
        let mut err = chord_error(&pose, self.nodes, &a.1, &b.1, &at_mid, 0.5);
        let mut quarters = [None, None];
        if err <= self.line.tol() {
            for (q, s) in [0.25, 0.75].into_iter().enumerate() {
                let f = a.0 + span * s;
                let (pose, x) = posed(self.scene, self.line, self.nodes, f);
                err = err.max(chord_error(&pose, self.nodes, &a.1, &b.1, &x, s as f32));
                quarters[q] = Some((f, (pose, x)));
            }
        }
        if err <= self.line.tol() {
            return;
        }
        self.budget -= 1;
        let [first, second] = quarters;
        self.refine(a, (mid, at_mid.clone()), first);
        self.frames.push(mid);
        self.values.push(at_mid.clone());
        self.refine((mid, at_mid), b, second);
    }
}
