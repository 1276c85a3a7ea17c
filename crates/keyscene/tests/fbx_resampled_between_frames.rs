//! The FBX writer's resampled curves against the source, at and between frames (issue 33 §9,
//! third bullet): every corpus 3DS file and every positive corpus FBX file with an animation
//! is written as FBX (default options), and the files whose report lists a resampled part
//! (`Report::resampled`: the writer resampled it with the shared adaptive sampler,
//! `anim::resample`) — found by that scan, not listed — are read back by keyscene and by the
//! `ufbx` crate. Every written animation is evaluated at every integer frame of its range and
//! a quarter, a half and three quarters past it (at most [`MAX_FRAMES`] integer frames per
//! animation, spread evenly); keyscene's evaluation of the source at the same frames is the
//! reference.
//!
//! - keyscene's read-back: every source node's world origin and, for a mesh node, up to
//!   [`MAX_VERTICES`] of its world vertices (evenly by index, skinned and blend-shaped as
//!   `Pose::world_positions` deforms them; not of a geometry-cached mesh, as the writer
//!   leaves caches out). Nodes are matched by name, the k-th source node of
//!   a name to the k-th read-back node of that name.
//! - ufbx (`evaluate_scene` of the stack of the animation's name): every node's world origin
//!   (`node_to_world`; of several nodes of one name, the nearest), and for a mesh node with no
//!   deformer up to [`MAX_VERTICES`] of its vertices placed by `geometry_to_world`.
//! - Tolerance: 1e-4 × the scene size — the largest absolute coordinate of the source's node
//!   origins and world vertices over the compared frames, or 1 when that is 0 — plus the
//!   `f32` rounding of the written key values (2⁻²⁰ × the scene size).
//! - A file without an animation, or whose animation the writer keeps key for key, passes
//!   without comparing.

mod common;

use std::path::{Path, PathBuf};

use common::ufbx_corpus::to_dmat4;
use glam::DVec3;
use keyscene::anim::{Pose, Time};
use keyscene::formats::fbx::export;
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

/// Most integer frames compared per animation.
const MAX_FRAMES: usize = 200;

/// Most vertices compared per mesh node.
const MAX_VERTICES: usize = 64;

/// The compared points of node `i` in `pose` (world origin, then, with `vertices`, sampled
/// world vertices).
fn points(scene: &Scene, pose: &Pose, i: usize, vertices: bool) -> Vec<DVec3> {
    let mut out = vec![pose.world[i].col(3).truncate()];
    if !vertices {
        return out;
    }
    let w = pose.world_positions(scene, i);
    let step = w.len().div_ceil(MAX_VERTICES).max(1);
    out.extend(w.iter().step_by(step).copied());
    out
}

/// Whether source node `i`'s vertices are compared: not when its mesh has a geometry cache,
/// which the writer leaves out (reported).
fn vertices_compared(scene: &Scene, i: usize) -> bool {
    scene.nodes[i].mesh.and_then(|m| scene.meshes.get(m)).is_none_or(|m| m.geometry_cache.is_none())
}

/// A name without NUL characters (the writer leaves them out).
fn clean(name: &str) -> String {
    name.chars().filter(|&c| c != '\0').collect()
}

/// The read-back node for every source node: by name, the k-th of a name to the k-th.
fn match_nodes(src: &Scene, back: &Scene) -> Result<Vec<usize>, Failed> {
    let mut used = vec![false; back.nodes.len()];
    let mut out = Vec::with_capacity(src.nodes.len());
    for n in &src.nodes {
        let name = clean(&n.name);
        let j = (0..back.nodes.len())
            .find(|&j| !used[j] && back.nodes[j].name == name)
            .ok_or_else(|| format!("node {name:?} not read back"))?;
        used[j] = true;
        out.push(j);
    }
    Ok(out)
}

/// The frames compared of an animation with frame range `(f0, f1)`: integer frames (at most
/// [`MAX_FRAMES`], spread evenly) and a quarter, half and three quarters past each, within
/// the range.
fn frames((f0, f1): (f64, f64)) -> Vec<f64> {
    let (lo, hi) = (f0.ceil(), f1.floor());
    if !(lo.is_finite() && hi.is_finite() && hi >= lo) {
        return Vec::new();
    }
    let span = (hi - lo) as usize;
    let count = span.clamp(1, MAX_FRAMES);
    (0..=count)
        .map(|i| lo + (i * span / count) as f64)
        .flat_map(|f| [f, f + 0.25, f + 0.5, f + 0.75])
        .filter(|&f| f <= f1)
        .collect()
}

/// Compares one file; `Ok(true)` when the writer resampled something (and so it was
/// compared).
fn check(path: &Path) -> Result<bool, Failed> {
    let (src, _) = keyscene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if src.animations.is_empty() {
        return Ok(false);
    }
    let (bytes, report) =
        export::write(&src, &export::WriteOptions::default()).map_err(|e| e.to_string())?;
    if report.resampled.is_empty() {
        return Ok(false);
    }
    let (back, _) =
        keyscene::load_bytes(&bytes, Some(Path::new("written.fbx")), &Default::default())
            .map_err(|e| format!("keyscene reading the written file: {e}"))?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx cannot load the written file: {:?}", e.description))?;
    let matched = match_nodes(&src, &back)?;
    let mut animations: Vec<usize> = report.resampled.iter().map(|r| r.animation).collect();
    animations.dedup();
    for a in animations {
        check_animation(&src, &back, &theirs, &matched, a)?;
    }
    Ok(true)
}

/// Compares source animation `a` with its read-back and ufbx evaluations at whole and
/// quarter frames.
fn check_animation(
    src: &Scene,
    back: &Scene,
    theirs: &ufbx::Scene,
    matched: &[usize],
    a: usize,
) -> Result<(), Failed> {
    let anim = &src.animations[a];
    let name = if anim.name.is_empty() { format!("Take {:03}", a + 1) } else { anim.name.clone() };
    let b = back
        .animations
        .iter()
        .position(|x| x.name == name)
        .ok_or_else(|| format!("animation {name:?} not read back"))?;
    let stack = theirs
        .anim_stacks
        .iter()
        .find(|s| *s.element.name == *name)
        .ok_or_else(|| format!("ufbx: no stack {name:?}"))?;
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
    let frames = frames(anim.frame_range);
    let poses: Vec<Pose> = frames.iter().map(|&f| src.evaluate(Some(a), Time::Frame(f))).collect();
    let size = poses
        .iter()
        .flat_map(|pose| {
            (0..src.nodes.len()).flat_map(move |i| points(src, pose, i, vertices_compared(src, i)))
        })
        .map(|p| p.abs().max_element())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let size = if size > 0.0 { size } else { 1.0 };
    let tol = 1e-4 * size + size / (1u64 << 20) as f64;
    let names: Vec<String> = src.nodes.iter().map(|n| clean(&n.name)).collect();
    let (mut worst, mut at) = (0.0f64, String::new());
    let mut note = |e: f64, what: &dyn Fn() -> String| {
        if e.is_nan() || e > worst {
            worst = if e.is_nan() { f64::INFINITY } else { e };
            at = what();
        }
    };
    for (&f, want) in frames.iter().zip(&poses) {
        let got = back.evaluate(Some(b), Time::Seconds(f / fps));
        for (i, &j) in matched.iter().enumerate() {
            let v = vertices_compared(src, i);
            let (w, g) = (points(src, want, i, v), points(back, &got, j, v));
            if w.len() != g.len() {
                return Err(format!(
                    "{:?}: {} points back, {} written",
                    names[i],
                    g.len(),
                    w.len()
                )
                .into());
            }
            for (p, q) in w.iter().zip(&g) {
                note((*q - *p).length(), &|| format!("keyscene: {:?} at frame {f}", names[i]));
            }
        }
        let evaluated =
            ufbx::evaluate_scene(theirs, &stack.anim, f / fps, ufbx::EvaluateOpts::default())
                .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        for n in evaluated.nodes.iter().filter(|n| !n.is_root) {
            let name = clean(&n.element.name);
            let origin = to_dmat4(&n.node_to_world).col(3).truncate();
            let cands: Vec<usize> = (0..names.len()).filter(|&i| names[i] == name).collect();
            let Some(i) = cands.iter().copied().min_by(|&x, &y| {
                let d = |i: usize| (want.world[i].col(3).truncate() - origin).length();
                d(x).total_cmp(&d(y))
            }) else {
                return Err(format!("ufbx node {name:?} has no source node of that name").into());
            };
            note((want.world[i].col(3).truncate() - origin).length(), &|| {
                format!("ufbx: {name:?} origin at frame {f}")
            });
            let mesh = n.mesh.as_ref().filter(|m| m.all_deformers.is_empty());
            let Some(mesh) = mesh.filter(|_| vertices_compared(src, i)) else {
                continue;
            };
            let ours = want.world_positions(src, i);
            if ours.len() != mesh.num_vertices {
                continue;
            }
            let g = to_dmat4(&n.geometry_to_world);
            let step = ours.len().div_ceil(MAX_VERTICES).max(1);
            for v in (0..ours.len()).step_by(step) {
                let p = mesh.vertices[v];
                let q = g.transform_point3(DVec3::new(p.x, p.y, p.z));
                note((q - ours[v]).length(), &|| format!("ufbx: {name:?} vertex {v} at frame {f}"));
            }
        }
    }
    if worst > tol {
        return Err(format!(
            "animation {name:?}: worst error {worst:e} ({at}) > {tol:e} (1e-4 × scene size \
             {size:e})"
        )
        .into());
    }
    Ok(())
}

/// Every corpus 3DS file and every positive corpus FBX file, in path order.
fn sources(corpus: &Path) -> Vec<PathBuf> {
    let mut files = common::files_with_ext(&corpus.join("3ds"), &["3ds"]);
    let fbx_dir = corpus.join("fbx");
    files.extend(common::files_with_ext(&fbx_dir, &["fbx"]).into_iter().filter(|p| {
        let rel = p.strip_prefix(&fbx_dir).unwrap_or(p).to_string_lossy().replace('\\', "/");
        !common::is_negative_fbx(&rel)
    }));
    files
}

fn main() {
    let corpus = common::corpus();
    let files = corpus.as_deref().map(sources).unwrap_or_default();
    let mut trials: Vec<Trial> = Vec::new();
    if files.is_empty() {
        trials.push(common::corpus_trial("fbx_resampled_between_frames", &corpus, |_| {
            Err("no 3DS or FBX file found in the corpus".into())
        }));
    }
    for f in files {
        let dir = corpus.clone().expect("files come from the corpus");
        let rel = f.strip_prefix(&dir).unwrap_or(&f).to_string_lossy().replace('\\', "/");
        // Files keyscene refuses (the corpus's negative cases) have nothing to convert.
        if keyscene::load(&f).is_err() {
            continue;
        }
        trials.push(common::corpus_trial(rel, &corpus, move |_| check(&f).map(|_| ())));
    }
    common::run(trials)
}
