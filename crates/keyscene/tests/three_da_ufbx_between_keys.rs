//! 3DA tracks that keep FBX curves, against an outside oracle (issue #4 §2, "Tracks"): the
//! `ufbx` crate evaluates the source FBX at times **between** integer frames (a quarter and a
//! half past every frame of the first stack, at most 400 frames spread evenly), and the 3DA
//! written by keyscene and read back must give the same world matrix for every entity whose
//! tracks, and whose ancestors' tracks, all hold the source's keys (`ExportReport::tracks`;
//! resampled entities match at integer frames only and are left out).
//!
//! - The 3DA is in 3ds Max's axes; its world matrices are turned back into the source's
//!   (`common::three_da::to_source_axes`) and compared with ufbx's `node_to_world`.
//! - Tolerance 1e-4: the 3×3 part relative to its largest entry (at least 1), the translation
//!   relative to the scene size (largest ufbx world translation over the samples, at least 1).
//! - Each file must have at least one compared entity with an animated kept track, and the
//!   files together must include BEZIER (cubic curves) and EULER tracks, so the comparison
//!   covers curves between keys and not only held values.

mod common;

use common::ufbx_corpus::to_dmat4;

use std::path::Path;

use glam::DMat4;
use keyscene::anim::Time;
use keyscene::formats::three_da::{self, export::TrackSource};
use libtest_mimic::Failed;

/// Animated files whose curves keyscene keeps (Maya cubic tangents, Softimage, Max, magnum's
/// Z-up cube, a Blender skeleton).
const FILES: &[&str] = &[
    "ufbx/maya_tangent_spline_7700_binary.fbx",
    "ufbx/maya_resampled_7500_binary.fbx",
    "ufbx/max_transformed_skin_6100_binary.fbx",
    "fbx-conv/softimage_cube_anim.fbx",
    "magnum/animation-space-z-up-m.fbx",
    "ufbx/blender_293_barbarian_7400_binary.fbx",
];

/// Kinds of the kept, animated tracks compared (for the coverage check).
#[derive(Default)]
struct Seen {
    bezier: bool,
    euler: bool,
}

fn compare(fbx_dir: &Path, rel: &str, seen: &mut Seen) -> Result<(), Failed> {
    let bytes = std::fs::read(fbx_dir.join(rel))?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let (src, _) = keyscene::load_bytes(&bytes, Some(&fbx_dir.join(rel)), &Default::default())?;
    let opts = three_da::ExportOptions::default();
    let (file, _, report) = three_da::export(&src, &opts)?;
    let written = three_da::write(&file)?;
    let (back, _) = keyscene::load_bytes(&written, Some(Path::new("x.3da")), &Default::default())?;
    let to_src = common::three_da::to_source_axes(&src, &back);
    let anim = src.animations.first().ok_or("no animation")?;
    // Entities whose chain keeps every track: the parent precedes its child in file order.
    let mut exact = vec![false; file.entities.len()];
    for (e, ent) in file.entities.iter().enumerate() {
        let t = &report.tracks[e];
        let own = [&t.position, &t.rotation, &t.scale]
            .iter()
            .all(|s| !matches!(s, TrackSource::Resampled { .. }));
        let p = usize::from(ent.parent_idx);
        exact[e] = own && (ent.parent_idx == 0xFFFF || (p < e && exact[p]));
    }
    let animated = |e: usize| anim.channels.iter().any(|c| c.node == report.tracks[e].node);
    let compared: Vec<usize> = (0..exact.len()).filter(|&e| exact[e]).collect();
    if !compared.iter().any(|&e| animated(e)) {
        return Err("no animated entity keeps its keys".into());
    }
    for &e in compared.iter().filter(|&&e| animated(e)) {
        let t = &report.tracks[e];
        for s in [&t.position, &t.rotation, &t.scale] {
            if let TrackSource::Kept(d) = s {
                seen.bezier |= d.contains("BEZIER");
                seen.euler |= d.starts_with("EULER");
            }
        }
    }
    let (f0, f1) = (anim.frame_range.0.max(0.0), anim.frame_range.1.max(0.0));
    let frames = (f1 - f0).floor() as usize;
    let n = frames.min(400);
    let mut times = Vec::new();
    for i in 0..n {
        let f = f0 + (i * frames / n) as f64;
        times.push(f + 0.25);
        times.push(f + 0.5);
    }
    let posed: Vec<(f64, Vec<(String, DMat4)>)> = times
        .iter()
        .map(|&f| {
            let s = ufbx::evaluate_scene(&theirs, &theirs.anim, f / anim.fps, Default::default())
                .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
            let w = s
                .nodes
                .iter()
                .filter(|n| !n.is_root)
                .map(|n| (n.element.name.to_string(), to_dmat4(&n.node_to_world)))
                .collect();
            Ok((f, w))
        })
        .collect::<Result<_, String>>()?;
    let size =
        common::ufbx_corpus::scene_size(posed.iter().flat_map(|(_, w)| w.iter().map(|(_, m)| m)));
    let mut failures = Vec::new();
    let mut count = 0usize;
    for (f, worlds) in &posed {
        let pose = back.evaluate(Some(0), Time::Frame(*f));
        for &e in &compared {
            let name = &src.nodes[report.tracks[e].node].name;
            let Some((_, want)) = worlds.iter().find(|(n, _)| n == name) else { continue };
            let got = to_src * pose.world[e];
            let (linear, tr) = common::ufbx_corpus::difference(got, *want, size);
            let err = linear.max(tr);
            count += 1;
            if err.is_nan() || err > 1e-4 {
                failures.push(format!("frame {f} {name:?}: world differs from ufbx by {err:.3e}"));
            }
        }
    }
    eprintln!(
        "{rel}: {} entities compared at {} times between frames, {count} comparisons",
        compared.len(),
        posed.len()
    );
    if failures.is_empty() {
        return Ok(());
    }
    let total = failures.len();
    failures.truncate(10);
    Err(format!("{total} of {count} differ:\n{}", failures.join("\n")).into())
}

fn main() {
    let corpus = common::corpus();
    let trial =
        common::corpus_trial("3DA kept curves agree with ufbx between frames", &corpus, |c| {
            let dir = c.join("fbx");
            let mut seen = Seen::default();
            let mut failures = Vec::new();
            for rel in FILES {
                if let Err(e) = compare(&dir, rel, &mut seen) {
                    failures.push(format!("{rel}: {}", e.message().unwrap_or("failed")));
                }
            }
            if !seen.bezier || !seen.euler {
                failures.push(format!(
                    "the files no longer cover kept BEZIER ({}) and EULER ({}) tracks",
                    seen.bezier, seen.euler
                ));
            }
            if failures.is_empty() {
                Ok(())
            } else {
                Err(failures.join("\n").into())
            }
        });
    common::run(vec![trial]);
}
