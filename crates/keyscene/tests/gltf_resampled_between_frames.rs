//! Written animation against the source, at and between frames (issue 16, goal 3; issue 36
//! §4, proof): every corpus 3DS and FBX file with an animation is written as GLB (default
//! options: LINEAR/STEP keys from the source where glTF holds them, the rest resampled
//! adaptively by `anim::resample`, every channel's keys reduced to those its interpolation
//! needs; the axis root left out, so the file is in the source's axes and unit), read back by
//! keyscene's glTF reader, and every animation evaluated at every frame of its range and a
//! quarter and a half past it (at most 400 frames per animation, spread evenly); keyscene's
//! evaluation of the source at the same frames is the reference.
//!
//! - Compared: every source node's world origin and, for a mesh node, up to 64 of its world
//!   vertices (evenly by index: the writer's `_KEYSCENE_VERTEX` attribute keeps the source
//!   order). Nodes are matched by the source name and instance the writer keeps in extras (the
//!   k-th node of a pair to the k-th read-back node of that pair); animations by name.
//! - Tolerance: 1e-4 × the scene size — the largest absolute coordinate of the source's node
//!   origins and world vertices over the compared frames (the writer's translation tolerance
//!   grows with how far a node goes), or 1 when that is 0 — plus the `f32` rounding of the
//!   written values (2⁻²⁰ × the scene size).
//! - A file without an animation passes without comparing; so does an animation the writer
//!   leaves out (nothing in it moves).

mod common;

use std::path::Path;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::gltf::{read, write, WriteOptions};
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

/// Most frames compared per file.
const MAX_FRAMES: usize = 400;

/// Most vertices compared per mesh node.
const MAX_VERTICES: usize = 64;

/// The compared points of node `i` in `pose` (world origin, then sampled vertices).
fn points(scene: &Scene, pose: &keyscene::anim::Pose, i: usize) -> Vec<DVec3> {
    let mut out = vec![pose.world[i].col(3).truncate()];
    let w = pose.world_positions(scene, i);
    let step = w.len().div_ceil(MAX_VERTICES).max(1);
    out.extend(w.iter().step_by(step).copied());
    out
}

/// The read-back node for every source node, by name and instance in order.
fn match_nodes(src: &Scene, back: &Scene) -> Result<Vec<usize>, Failed> {
    let mut used = vec![false; back.nodes.len()];
    let mut out = Vec::with_capacity(src.nodes.len());
    for n in &src.nodes {
        let j = (0..back.nodes.len())
            .find(|&j| {
                !used[j] && back.nodes[j].name == n.name && back.nodes[j].instance == n.instance
            })
            .ok_or_else(|| format!("node {:?}/{:?} not read back", n.name, n.instance))?;
        used[j] = true;
        out.push(j);
    }
    Ok(out)
}

/// Compares one file; `Ok(true)` when it has an animation (and so was compared).
fn check(path: &Path) -> Result<bool, Failed> {
    let (src, _) = keyscene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if src.animations.is_empty() {
        return Ok(false);
    }
    // Without the axis root the read-back scene is in the source's axes and unit; the
    // animation channels are the same as with it (the root is static).
    let mut opts = WriteOptions::default();
    // Compared by source vertex index (`_KEYSCENE_VERTEX`).
    opts.source_vertex_ids = true;
    opts.convert_axes = false;
    let glb = write(&src, &opts).map_err(|e| e.to_string())?;
    let (back, _) =
        read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    let matched = match_nodes(&src, &back)?;
    for (a, anim) in src.animations.iter().enumerate() {
        let name = if anim.name.is_empty() { format!("animation {a}") } else { anim.name.clone() };
        // An animation that moves nothing is not written.
        let Some(b) = back.animations.iter().position(|x| x.name == name) else { continue };
        check_animation(&src, &back, &matched, (a, b))?;
    }
    Ok(true)
}

/// Compares source animation `a` with read-back animation `b` at whole, quarter and half
/// frames.
fn check_animation(
    src: &Scene,
    back: &Scene,
    matched: &[usize],
    (a, b): (usize, usize),
) -> Result<(), Failed> {
    let anim = &src.animations[a];
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
    let (lo, hi) = (anim.frame_range.0.max(0.0).ceil(), anim.frame_range.1.floor());
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Ok(());
    }
    let span = (hi - lo) as usize;
    let count = span.min(MAX_FRAMES);
    let frames: Vec<f64> = (0..count)
        .map(|i| lo + (i * span / count) as f64)
        .flat_map(|f| [f, f + 0.25, f + 0.5])
        .collect();
    let poses: Vec<_> = frames.iter().map(|&f| src.evaluate(Some(a), Time::Frame(f))).collect();
    let size = poses
        .iter()
        .flat_map(|pose| (0..src.nodes.len()).flat_map(move |i| points(src, pose, i)))
        .map(|p| p.abs().max_element())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let size = if size > 0.0 { size } else { 1.0 };
    let tol = 1e-4 * size + size / (1u64 << 20) as f64;
    let (mut worst, mut at) = (0.0f64, String::new());
    for (&f, want) in frames.iter().zip(&poses) {
        let got = back.evaluate(Some(b), Time::Seconds(f / fps));
        for (i, &j) in matched.iter().enumerate() {
            let (w, g) = (points(src, want, i), points(back, &got, j));
            if w.len() != g.len() {
                return Err(format!(
                    "{:?}: {} points back, {} written",
                    src.nodes[i].name,
                    g.len(),
                    w.len()
                )
                .into());
            }
            for (p, q) in w.iter().zip(&g) {
                let e = (*q - *p).length();
                if e > worst {
                    worst = e;
                    at = format!("node {:?} at frame {f}", src.nodes[i].name);
                }
            }
        }
    }
    if worst > tol {
        return Err(format!(
            "animation {a} {:?}: worst error {worst:e} ({at}) > {tol:e} (1e-4 × scene size \
             {size:e})",
            anim.name
        )
        .into());
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let files = match &corpus {
        Some(dir) => {
            let mut f = common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"]);
            f.extend(common::files_with_ext(&dir.join("fbx"), &["fbx"]));
            f
        }
        None => Vec::new(),
    };
    let mut trials: Vec<Trial> = Vec::new();
    if files.is_empty() {
        trials.push(common::corpus_trial("gltf_resampled_between_frames", &corpus, |_| {
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
