//! Every FBX corpus file with a mesh converted to 3DA (issue #4, Done-when 2). One trial per
//! file (MANIFEST.md's negative files and files whose loaded scene has no mesh are skipped):
//!
//! 1. `formats::three_da::export` + `write` in memory; `check` reports no error.
//! 2. The bytes read back (`keyscene::load_bytes`) and evaluated at integer and half frames of
//!    the first animation's range (at most [`MAX_FRAMES`] of them, evenly chosen, always the
//!    first and the last; frames clamped at 0 like the exporter): for every entity with a
//!    mesh, compared with `Pose::world_positions` of its source node
//!    (`ExportReport::entity_nodes`, so shortened names do not matter), tolerance
//!    `1e-4 × max(1, diagonal of the source's world bbox over all mesh nodes at that frame)`:
//!    - every exported vertex lies within tolerance of a source vertex (nearest point: the
//!      exporter splits vertices per surface and along seams);
//!    - the entity's world bbox equals the bbox of the source vertices faces use.
//!    Entities the exporter reports as resampled, their descendants and skinned entities with
//!    such a joint are exact at integer frames only; their half frames are skipped. Meshes with no polygon of three or more
//!    corners (points, lines) have no 3DA geometry and are not compared.
//! 3. Known, named exceptions (printed as `EXCEPTION`, not failing), each for a format reason:
//!    - **morph**: the source mesh has blend shapes with a non-zero weight at that frame — 3DA
//!      has no morph targets; the exporter drops them (reported in `ExportReport::dropped`).
//!    - **skin**: the source mesh is skinned; the 3DA keeps the blend stream but stores no
//!      bind pose (docs/3da.md, "Skinning"), and the reader takes the first frame as bind
//!      pose, so skinned positions only match where the first frame is the bind pose.
//!      Where the comparison fails even with the source's bind matrices put into the read-back
//!      skin, the reason is named: written rigid (a joint past entity 255 or not an entity),
//!      dual-quaternion skinning, more than 4 influences, a geometry transform, or
//!      "unexplained".
//!    - **non-finite**: the source positions are inf/NaN (`synthetic_inf_nan`); nothing to
//!      compare with.
//!    Any other mismatch fails the trial.

mod common;

use std::collections::HashSet;
use std::path::Path;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::three_da;
use libtest_mimic::Failed;

/// At most this many frames are sampled per file (keeps the debug run short).
const MAX_FRAMES: usize = 60;

/// MANIFEST.md's negative files (as `fbx_load_corpus.rs`).
fn is_negative(rel: &str) -> bool {
    rel.contains("/fuzz/")
        || rel.contains("_fail_")
        || rel.contains("synthetic_unsupported_cube_")
        || rel.ends_with("transparentTest.fbx")
        || rel.ends_with("max7_cube_5000_binary.fbx")
        || rel.ends_with("max2009_blob_5800_ascii.fbx")
}

/// Points sorted by x for nearest-point queries within a tolerance.
struct Cloud(Vec<DVec3>);

impl Cloud {
    fn new(mut p: Vec<DVec3>) -> Cloud {
        p.sort_by(|a, b| a.x.total_cmp(&b.x));
        Cloud(p)
    }
    /// Distance (max-norm) to the nearest point, looking only within `tol` in x.
    fn near(&self, q: DVec3, tol: f64) -> f64 {
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

fn bbox(p: impl Iterator<Item = DVec3>) -> (DVec3, DVec3) {
    p.fold((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// Integer and half frames of `[f0, f1]`, at most `MAX_FRAMES`, evenly chosen, ends kept.
fn frames(f0: f64, f1: f64) -> Vec<f64> {
    let steps = ((f1 - f0).max(0.0) * 2.0).round() as usize;
    if steps + 1 <= MAX_FRAMES {
        return (0..=steps).map(|i| f0 + i as f64 * 0.5).collect();
    }
    let mut out: Vec<f64> = (0..MAX_FRAMES)
        .map(|k| f0 + ((k * steps) as f64 / (MAX_FRAMES - 1) as f64).round() * 0.5)
        .collect();
    out.dedup();
    out
}

fn convert(fbx_dir: &Path, rel: &str) -> Result<(), Failed> {
    let path = fbx_dir.join(rel);
    let (src, _) = keyscene::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !src.nodes.iter().any(|n| n.mesh.is_some()) {
        eprintln!("{rel}: SKIPPED (no mesh)");
        return Ok(());
    }
    let (file, _scripts, report) = three_da::export(&src, &three_da::ExportOptions::default())?;
    let bytes = three_da::write(&file)?;
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
    let (back, _) = keyscene::load_bytes(&bytes, Some(Path::new("x.3da")), &Default::default())?;
    let back_anim = (!back.animations.is_empty()).then_some(0);
    // The same 3DA with the source's bind pose put into its skins (3DA stores none): checks
    // the blend stream and the bones' tracks on their own.
    let mut rebound = back.clone();
    for (e, &n) in report.entity_nodes.iter().enumerate() {
        let (Some(bm), Some(sm)) = (rebound.nodes.get(e).and_then(|x| x.mesh), src.nodes[n].mesh)
        else {
            continue;
        };
        let (Some(bs), Some(ss)) = (rebound.meshes[bm].skin, src.meshes[sm].skin) else { continue };
        let src_skin = &src.skins[ss];
        for j in rebound.skins[bs].joints.iter_mut() {
            let Some(&sn) = report.entity_nodes.get(j.node) else { continue };
            if let Some(sj) = src_skin.joints.iter().find(|x| x.node == sn) {
                j.inverse_bind = sj.inverse_bind;
            }
        }
    }
    let src_anim = (!src.animations.is_empty()).then_some(0);
    let (a0, a1) = src.animations.first().map(|a| a.frame_range).unwrap_or((0.0, 0.0));
    let (f0, f1) = (a0.max(0.0), a1.max(0.0));
    let mut failures = Vec::new();
    let mut exceptions = std::collections::BTreeMap::<String, usize>::new();
    let mut compared = 0usize;
    let sampled = frames(f0, f1);
    // Entities exact at integer frames only: the resampled ones and everything below them
    // (entity parents come before their children).
    let mut integer_only = vec![false; file.entities.len()];
    for (e, ent) in file.entities.iter().enumerate() {
        let p = ent.parent_idx as usize;
        integer_only[e] = report.resampled_entities.contains(&e)
            || (ent.parent_idx != 0xFFFF && p < e && integer_only[p]);
    }
    for &frame in &sampled {
        let pose_src = src.evaluate(src_anim, Time::Frame(frame));
        let pose_3da = back.evaluate(back_anim, Time::Frame(frame));
        let pose_rebound = rebound.evaluate(back_anim, Time::Frame(frame));
        let per_node: Vec<(usize, usize, Vec<DVec3>)> = report
            .entity_nodes
            .iter()
            .enumerate()
            .filter(|(_, &n)| src.nodes[n].mesh.is_some())
            .map(|(e, &n)| (e, n, pose_src.world_positions(&src, n)))
            .collect();
        let (lo, hi) = bbox(per_node.iter().flat_map(|(_, _, p)| p.iter().copied()));
        let tol = 1e-4 * (hi - lo).length().max(1.0);
        for (e, node, theirs) in per_node {
            if frame.fract() != 0.0 && integer_only[e] {
                continue;
            }
            // A skinned entity moves with its joints: integer frames only when one is.
            let joint_resampled =
                back.nodes[e].mesh.and_then(|bm| back.meshes[bm].skin).is_some_and(|bs| {
                    back.skins[bs].joints.iter().any(|j| integer_only.get(j.node) == Some(&true))
                });
            if frame.fract() != 0.0 && joint_resampled {
                continue;
            }
            let m = src.nodes[node].mesh.unwrap();
            let mesh = &src.meshes[m];
            // Points and lines only: 3DA holds triangles, the entity has no vertex.
            let has_face = (0..mesh.polygon_starts.len()).any(|p| {
                let end = mesh
                    .polygon_starts
                    .get(p + 1)
                    .map_or(mesh.corner_vertices.len(), |&x| x as usize);
                end - mesh.polygon_starts[p] as usize >= 3
            });
            if !has_face {
                continue;
            }
            let used: HashSet<u32> = mesh.corner_vertices.iter().copied().collect();
            let used_pts: Vec<DVec3> = theirs
                .iter()
                .enumerate()
                .filter(|(v, _)| used.contains(&(*v as u32)))
                .map(|(_, p)| *p)
                .collect();
            let ours = pose_3da.world_positions(&back, e);
            if ours.is_empty() && used_pts.is_empty() {
                continue;
            }
            compared += 1;
            let cloud = Cloud::new(used_pts.clone());
            let worst = ours.iter().map(|&p| cloud.near(p, tol * 2.0)).fold(0.0f64, f64::max);
            let (olo, ohi) = bbox(ours.iter().copied());
            let (slo, shi) = bbox(used_pts.iter().copied());
            let bb = (olo - slo).abs().max_element().max((ohi - shi).abs().max_element());
            let err = worst.max(bb);
            if !(err <= tol) {
                let name = &src.nodes[node].name;
                let morphing =
                    pose_src.morph_weights.get(m).is_some_and(|w| w.iter().any(|&x| x != 0.0));
                let finite = theirs.iter().all(|p| p.is_finite());
                let reason = if !finite {
                    Some("non-finite source positions (inf/NaN in the file)")
                } else if morphing {
                    Some("morph")
                } else if mesh.skin.is_some() {
                    let again = pose_rebound.world_positions(&rebound, e);
                    let worst =
                        again.iter().map(|&p| cloud.near(p, tol * 2.0)).fold(0.0f64, f64::max);
                    let (alo, ahi) = bbox(again.iter().copied());
                    let bb = (alo - slo).abs().max_element().max((ahi - shi).abs().max_element());
                    if worst.max(bb) <= tol {
                        Some("skin, bind pose: matches with the source's bind matrices (3DA stores none; the reader binds at frame 0)")
                    } else {
                        let skin = &src.skins[mesh.skin.unwrap()];
                        let rigid = rebound.nodes[e]
                            .mesh
                            .is_none_or(|bm| rebound.meshes[bm].skin.is_none());
                        Some(if rigid {
                            "skin, written rigid (a joint is not an entity below 256)"
                        } else if skin.dq_weights.iter().any(|&d| d != 0.0) {
                            "skin, dual-quaternion (3DA blends linearly)"
                        } else if skin.influences.iter().any(|i| i.len() > 4) {
                            "skin, more than 4 influences per vertex (3DA keeps the largest 4)"
                        } else if src.nodes[node].geometry_transform != glam::DMat4::IDENTITY {
                            "skin, geometry transform on the skinned mesh"
                        } else {
                            "skin, blend stream: differs even with the source's bind matrices (unexplained)"
                        })
                    }
                } else {
                    None
                };
                match reason {
                    Some(r) => *exceptions.entry(format!("{name:?}: {r}")).or_default() += 1,
                    None => failures.push(format!(
                        "frame {frame} {name:?}: vertices off by {worst:.3e}, bbox by {bb:.3e} (tolerance {tol:.1e})"
                    )),
                }
            }
        }
    }
    eprintln!(
        "{rel}: {} entities, {} frames sampled, {compared} comparisons, {} resampled entities",
        file.entities.len(),
        sampled.len(),
        report.resampled_entities.len()
    );
    for (what, n) in &exceptions {
        eprintln!("{rel}: EXCEPTION {what} ({n} frame comparisons differ)");
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
    let fbx_dir = corpus.as_ref().map(|c| c.join("fbx"));
    let files = fbx_dir.as_ref().map(|d| common::files_with_ext(d, &["fbx"])).unwrap_or_default();
    let mut trials = Vec::new();
    if files.is_empty() {
        trials.push(common::corpus_trial("three_da_from_fbx", &corpus, |_| {
            Err("no FBX file found in the corpus".into())
        }));
    }
    for f in files {
        let dir = fbx_dir.clone().unwrap();
        let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        if is_negative(&rel) {
            continue;
        }
        trials.push(common::corpus_trial(rel.clone(), &corpus, move |c| {
            convert(&c.join("fbx"), &rel)
        }));
    }
    common::run(trials);
}
