//! Every FBX corpus file with a mesh converted to 3DA (issue #4, Done-when 2). Two kinds of
//! trial:
//!
//! **One per file** (MANIFEST.md's negative files and files whose loaded scene has no mesh are
//! skipped):
//!
//! 1. `formats::three_da::export` + `write` in memory; `check` reports no error.
//! 2. The bytes read back (`keyscene::load_bytes`) and evaluated at **every integer and half
//!    frame** of the first animation's range (frames below 0 are not written and not compared;
//!    ranges over 1000 frames evenly subsampled, `common::three_da::MAX_SAMPLES`),
//!    compared per entity with its source node posed by keyscene's FBX evaluation
//!    (`common::three_da::compare_frame`): every exported vertex within tolerance of a source
//!    vertex, and the world bbox equal to that of the source vertices faces use; tolerance
//!    `1e-4 × max(1, diagonal of the source's world bbox over all mesh nodes at that frame)`.
//!    Entities exact at integer frames only (resampled, below a resampled one, or skinned to
//!    one) skip the half frames.
//!
//! **One per row of `fbx/references.tsv`** (`static` and `time` rows without an axis/unit
//! conversion, option or `transform_skin`, which 3DA export does not model; rows of
//! MANIFEST.md's negative files are reported ignored): the file
//! exported with the row's stack (`static`: no animation, the stored pose), read back, posed
//! at frame `time_s × fps` of the source stack, and compared with the ufbx `.obj` reference
//! (positions only, as a set: the exporter splits and reorders vertices; the 3DA's Max axes
//! turned back into the source's, `common::three_da::to_source_axes`): every exported
//! vertex lies on a reference vertex and the exported world bbox equals the bbox of the
//! reference's face vertices, within `max(tolerance ÷ position_scale of the row, 1e-4 ×
//! max(1, reference bbox diagonal))` — the reference's own precision, or the rule where
//! that is looser.
//!
//! **One over the corpus**, "kept keys over the corpus" (`kept_keys`): counts the FBX-animated
//! entities whose animated tracks all keep the source's keys (`ExportReport::tracks`) and
//! prints why the others were resampled; fails when a curve that `anim::hermite` holds
//! exactly on integer frames (judged here from the scene: `expressible`) was resampled.
//!
//! Known, named exceptions (printed as `EXCEPTION`, not failing), each for a format reason:
//! - **geometry cache** (reference rows): the source mesh is deformed by a geometry cache,
//!   which 3DA cannot hold; the exporter writes the mesh undeformed and warns, naming the mesh
//!   (docs/3da.md, "Geometry caches"). The trial checks that warning is there; without it the
//!   row fails.
//! - **morph**: the source mesh has blend shapes with a non-zero weight at that frame — 3DA
//!   has no morph targets; the exporter drops them (reported in `ExportReport::dropped`).
//! - **skin** that 3DA cannot hold: written rigid (a joint past entity 255 or not an entity, or
//!   joints bound in two poses by two meshes), dual-quaternion skinning (3DA blends linearly),
//!   more than 4 influences per vertex (3DA keeps the largest 4).
//! - **non-finite**: the source positions are inf/NaN (`synthetic_inf_nan`).
//! - **beyond f32**: the source positions exceed `f32::MAX`, which 3DA's `float` streams and
//!   `bone_init_tm` cannot hold (`fbx-conv/3dsmax_animation*.FBX`: the 2007 Max exporter
//!   wrote its numbers with a decimal comma, so `0,707…` reads as `0` and `707…`, and the
//!   skin's bind matrices hold values near 1e15 that pose `Box01` at ~1e45).
//!
//! Any other mismatch fails the trial; the bind pose travels in `bone_init_tm`
//! (docs/3da.md, "Skin bind pose"), so skinned meshes are compared like the others.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::refs::{reference_rows, RefRow};
use common::three_da::{
    bbox, bbox_diff, compare_frame, integer_and_half_frames, integer_only, to_source_axes, Cloud,
};
use glam::{DMat4, DVec3};
use keyscene::anim::hermite::{self, HermiteKey, Segment};
use keyscene::anim::{ChannelTarget, Interpolation, RotationTrack, Time, Track};
use keyscene::formats::three_da;
use keyscene::scene::{AxisSystem, InheritType, NodeKind, Scene};
use libtest_mimic::Failed;

/// Why entity `e` (source node `node`) may differ at `frame`: a format reason, or `None`.
fn exception(
    src: &Scene,
    src_anim: Option<usize>,
    back: &Scene,
    node: usize,
    e: usize,
    frame: f64,
) -> Option<&'static str> {
    let m = src.nodes[node].mesh?;
    let mesh = &src.meshes[m];
    let pose = src.evaluate(src_anim, Time::Frame(frame));
    let theirs = pose.world_positions(src, node);
    if !theirs.iter().all(|p| p.is_finite()) {
        return Some("non-finite source positions (inf/NaN in the file)");
    }
    if theirs.iter().any(|p| p.abs().max_element() > f64::from(f32::MAX)) {
        return Some("source positions beyond the f32 range 3DA stores");
    }
    if pose.morph_weights.get(m).is_some_and(|w| w.iter().any(|&x| x != 0.0)) {
        return Some("morph (3DA has no morph targets)");
    }
    let skin = &src.skins[mesh.skin?];
    Some(if back.nodes[e].mesh.is_none_or(|bm| back.meshes[bm].skin.is_none()) {
        "skin, written rigid (a joint is not an entity below 256, or bound in two poses)"
    } else if skin.dq_weights.iter().any(|&d| d != 0.0) {
        "skin, dual-quaternion (3DA blends linearly)"
    } else if skin.influences.iter().any(|i| i.len() > 4) {
        "skin, more than 4 influences per vertex (3DA keeps the largest 4)"
    } else {
        return None;
    })
}

/// Exports `src` (animation `anim`), checks the bytes and reads them back.
fn round_trip(
    src: &Scene,
    anim: Option<usize>,
) -> Result<(three_da::File, three_da::ExportReport, Scene), Failed> {
    let mut opts = three_da::ExportOptions::default();
    opts.animation = anim;
    let (file, _scripts, report) = three_da::export(src, &opts)?;
    let bytes = three_da::write(&file)?;
    let errors: Vec<String> = three_da::check(&bytes).errors().map(|i| i.to_string()).collect();
    if !errors.is_empty() {
        return Err(format!(
            "check: {} errors:\n{}",
            errors.len(),
            errors[..errors.len().min(10)].join("\n")
        )
        .into());
    }
    let (back, _) = keyscene::load_bytes(&bytes, Some(Path::new("x.3da")), &Default::default())?;
    Ok((file, report, back))
}

fn finish(mut failures: Vec<String>, compared: usize) -> Result<(), Failed> {
    if failures.is_empty() {
        return Ok(());
    }
    let n = failures.len();
    failures.truncate(12);
    Err(format!("{n} of {compared} comparisons differ:\n{}", failures.join("\n")).into())
}

fn convert(fbx_dir: &Path, rel: &str) -> Result<(), Failed> {
    let path = fbx_dir.join(rel);
    let (mut src, _) = keyscene::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The writer leaves geometry caches out (docs/3da.md): compare with the uncached source.
    src.meshes.iter_mut().for_each(|m| m.geometry_cache = None);
    if !src.nodes.iter().any(|n| n.mesh.is_some()) {
        eprintln!("{rel}: SKIPPED (no mesh)");
        return Ok(());
    }
    let src_anim = (!src.animations.is_empty()).then_some(0);
    let (file, report, back) = round_trip(&src, src_anim)?;
    let (a0, a1) = src.animations.first().map(|a| a.frame_range).unwrap_or((0.0, 0.0));
    let only_integer = integer_only(&file, &report, &back);
    let sampled = integer_and_half_frames(a0, a1);
    let mut failures = Vec::new();
    let mut exceptions = BTreeMap::<String, usize>::new();
    let mut compared = 0usize;
    for &frame in &sampled {
        let (tol, diffs) = compare_frame(&src, src_anim, &back, &report, frame);
        for d in diffs {
            if frame.fract() != 0.0 && only_integer[d.entity] {
                continue;
            }
            compared += 1;
            let err = d.worst.max(d.bbox);
            if err <= tol {
                continue;
            }
            let name = &src.nodes[d.node].name;
            match exception(&src, src_anim, &back, d.node, d.entity, frame) {
                Some(r) => *exceptions.entry(format!("{name:?}: {r}")).or_default() += 1,
                None => failures.push(format!(
                    "frame {frame} {name:?}: vertices off by {:.3e}, bbox by {:.3e} (tolerance {tol:.1e})",
                    d.worst, d.bbox
                )),
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
    finish(failures, compared)
}

/// Whether 3DA export can be compared with `row`: `static` or `time`, no conversion, no
/// option, no `transform_skin`.
fn comparable(row: &RefRow) -> bool {
    let plain = !row.transform_skin && row.conversion.is_empty() && row.options.is_empty();
    plain && matches!(row.mode.as_str(), "static" | "time")
}

/// A numeric column, `default` when empty or not a number.
fn number(column: &str, default: f64) -> f64 {
    column.parse().unwrap_or(default)
}

/// The reference OBJ's positions used by its faces, per `o`/`g` group merged (the
/// comparison is over the whole scene).
fn obj_face_positions(text: &str) -> Vec<DVec3> {
    let mut v: Vec<DVec3> = Vec::new();
    let mut used: Vec<usize> = Vec::new();
    for line in text.lines() {
        let mut t = line.split_whitespace();
        match t.next() {
            Some("v") => {
                let x: Vec<f64> = t.take(3).filter_map(|s| s.parse().ok()).collect();
                if x.len() == 3 {
                    v.push(DVec3::new(x[0], x[1], x[2]));
                }
            }
            Some("f") => {
                for c in t {
                    let Some(i) = c.split('/').next().and_then(|s| s.parse::<i64>().ok()) else {
                        continue;
                    };
                    let i = if i < 0 { v.len() as i64 + i } else { i - 1 };
                    if i >= 0 {
                        used.push(i as usize);
                    }
                }
            }
            _ => {}
        }
    }
    used.sort_unstable();
    used.dedup();
    used.into_iter().filter_map(|i| v.get(i).copied()).collect()
}

fn reference(fbx_dir: &Path, row: &RefRow) -> Result<(), Failed> {
    let path = fbx_dir.join(&row.fbx);
    let (src, _) = keyscene::load(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let static_pose = row.mode == "static";
    let anim = if static_pose {
        None
    } else if row.stack.is_empty() {
        (!src.animations.is_empty()).then_some(0)
    } else {
        src.animations.iter().position(|a| a.name.contains(row.stack.as_str()))
    };
    if !static_pose && anim.is_none() {
        return Err(format!("no animation stack {:?}", row.stack).into());
    }
    let frame = anim
        .map_or(0.0, |a| Time::Seconds(number(&row.time_s, 0.0)).to_frame(src.animations[a].fps));
    let (file, report, back) = round_trip(&src, anim)?;
    let text = std::fs::read_to_string(fbx_dir.join(&row.obj)).map_err(|e| e.to_string())?;
    let theirs = obj_face_positions(&text);
    let (rlo, rhi) = bbox(theirs.iter().copied());
    let scale = number(&row.position_scale, 1.0);
    let tol = (number(&row.tolerance, 1e-3) / scale).max(1e-4 * (rhi - rlo).length().max(1.0));
    let cloud = Cloud::new(theirs.clone());
    let back_anim = (!back.animations.is_empty()).then_some(0);
    let pose = back.evaluate(back_anim, Time::Frame(frame.max(0.0)));
    let only_integer = integer_only(&file, &report, &back);
    let mut failures = Vec::new();
    let mut ours_all = Vec::new();
    let mut excepted = false;
    let to_src = to_source_axes(&src, &back);
    for (e, &node) in report.entity_nodes.iter().enumerate() {
        let ours: Vec<DVec3> =
            pose.world_positions(&back, e).iter().map(|&p| to_src.transform_point3(p)).collect();
        if ours.is_empty() {
            continue;
        }
        let name = &src.nodes[node].name;
        if frame.fract() != 0.0 && only_integer[e] {
            eprintln!("{name:?}: not compared (resampled; frame {frame} is not an integer)");
            excepted = true;
            continue;
        }
        let worst = ours.iter().map(|&p| cloud.near(p, tol * 2.0)).fold(0.0f64, f64::max);
        // A mesh a geometry cache deforms is written undeformed by it, with a warning that
        // names it (docs/3da.md, "Geometry caches"): the reference shows the cached
        // positions, so the entity is excepted — only when the export said so.
        let cached =
            src.nodes[node].mesh.map(|m| &src.meshes[m]).filter(|m| m.geometry_cache.is_some());
        if let (Some(mesh), true) = (cached, worst > tol) {
            let said = format!("mesh \"{}\": its geometry cache is not written", mesh.name);
            if report.warnings.iter().any(|w| w.starts_with(&said)) {
                eprintln!("EXCEPTION {name:?}: geometry cache, left out with a warning (off by {worst:.3e})");
                excepted = true;
            } else {
                failures.push(format!(
                    "{name:?}: its geometry cache is left out, but the export has no warning \
                     starting {said:?} (warnings: {:?})",
                    report.warnings
                ));
            }
            continue;
        }
        if worst > tol {
            match exception(&src, anim, &back, node, e, frame) {
                Some(r) => {
                    eprintln!("EXCEPTION {name:?}: {r} (off by {worst:.3e})");
                    excepted = true;
                }
                None => failures.push(format!(
                    "{name:?}: vertices off the reference by {worst:.3e} (tolerance {tol:.1e})"
                )),
            }
            continue;
        }
        ours_all.extend(ours);
    }
    // The bbox of the whole scene, when no entity was left out.
    if !excepted && failures.is_empty() {
        let bb = bbox_diff(bbox(ours_all.iter().copied()), (rlo, rhi));
        if bb > tol {
            failures.push(format!(
                "scene bbox differs from the reference's by {bb:.3e} (tolerance {tol:.1e})"
            ));
        }
    }
    let n = report.entity_nodes.len();
    finish(failures, n)
}

/// Whether `anim::hermite` holds a curve exactly over the written frames `lo..=hi` (source
/// frames, the default rate): every key inside the range on an integer frame, no step that
/// changes the value inside it, the ends covered by the track's extrapolation.
fn hermite_exact<V>(keys: &[HermiteKey<V>], lo: f64, hi: f64) -> bool
where
    V: PartialEq + Copy,
{
    let inside = |f: f64| f >= lo && f <= hi;
    keys.iter().filter(|k| inside(k.frame)).all(|k| (k.frame - k.frame.round()).abs() <= 1e-6)
        && keys.windows(2).all(|w| {
            w[0].segment != Segment::Step
                || w[0].value == w[1].value
                || w[1].frame <= lo
                || w[0].frame >= hi
        })
}

/// The Hermite keys of a scalar curve covering `lo..=hi`, when they exist.
fn scalar_keys(t: &Track<f64>, lo: f64, hi: f64) -> Option<Vec<HermiteKey<f64>>> {
    hermite::cover(t, hermite::hermite_keys(t)?, lo, hi)
}

/// Whether every ancestor of `node` has rest scale 1 and no scale curve (then every inherit
/// type composes like the plain product, `Scene::compose_world`).
fn unscaled_ancestors(src: &Scene, node: usize) -> bool {
    let scale_curve = |p: usize| {
        src.animations
            .iter()
            .flat_map(|a| &a.channels)
            .any(|c| c.node == p && part_of(&c.target) == Some(2))
    };
    let mut p = src.nodes[node].parent;
    while let Some(q) = p {
        if src.nodes[q].transform.scale != DVec3::ONE || scale_curve(q) {
            return false;
        }
        p = src.nodes[q].parent;
    }
    true
}

/// Whether the node's curve for one part (0 position, 1 rotation, 2 scale) can be written
/// with its keys, judged from the scene alone: the node's 3DA local is its own T·R·S (no
/// pivots or inherit type, a written parent), and the curves have an exact Hermite form on
/// integer frames. A root's rotation under an axis conversion is not judged (exact only for
/// some Euler orders), nor are 3DS-style TCB or quaternion tracks (other rules).
fn expressible(src: &Scene, node: usize, target: &ChannelTarget, lo: f64, hi: f64) -> bool {
    let n = &src.nodes[node];
    let kept_kind = |k: &NodeKind| matches!(k, NodeKind::Mesh | NodeKind::Null | NodeKind::Bone);
    if n.pivots.is_some()
        || n.parent.is_some_and(|p| !kept_kind(&src.nodes[p].kind))
        || (n.parent.is_some() && n.inherit != InheritType::RSrs && !unscaled_ancestors(src, node))
    {
        return false;
    }
    let conversion = src.axis_unit_conversion(AxisSystem::Z_UP_RIGHT_HANDED, None);
    let converted_root = n.parent.is_none() && !conversion.abs_diff_eq(DMat4::IDENTITY, 1e-12);
    if converted_root && conversion.determinant() < 0.0 {
        return false;
    }
    let components = |c: &[Option<Track<f64>>; 3]| -> Option<Vec<Vec<HermiteKey<f64>>>> {
        c.iter()
            .flatten()
            .filter(|t| !t.keys.is_empty())
            .map(|t| scalar_keys(t, lo, hi).filter(|k| hermite_exact(k, lo, hi)))
            .collect()
    };
    match target {
        ChannelTarget::TranslationXyz(c) | ChannelTarget::ScaleXyz(c) => {
            let Some(parts) = components(c) else { return false };
            if parts.is_empty() {
                return true;
            }
            let mut it = c.iter().map(|t| t.as_ref().filter(|t| !t.keys.is_empty()));
            let mut slots: [Option<&[HermiteKey<f64>]>; 3] = [None; 3];
            let mut p = parts.iter();
            for s in &mut slots {
                if it.next().flatten().is_some() {
                    *s = p.next().map(Vec::as_slice);
                }
            }
            hermite::merge_xyz(slots, DVec3::ZERO).is_some_and(|m| hermite_exact(&m, lo, hi))
        }
        ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. }) => {
            !converted_root && components(xyz).is_some()
        }
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
            let tcb = t.keys.iter().any(|k| matches!(k.interpolation, Interpolation::Tcb(_)));
            !tcb && !t.keys.is_empty()
                && hermite::hermite_keys(t)
                    .and_then(|k| hermite::cover(t, k, lo, hi))
                    .is_some_and(|k| hermite_exact(&k, lo, hi))
        }
        _ => false,
    }
}

/// The transform part a channel drives: 0 position, 1 rotation, 2 scale.
fn part_of(t: &ChannelTarget) -> Option<usize> {
    match t {
        ChannelTarget::Translation(_) | ChannelTarget::TranslationXyz(_) => Some(0),
        ChannelTarget::Rotation(_) => Some(1),
        ChannelTarget::Scale(_) | ChannelTarget::ScaleXyz(_) => Some(2),
        ChannelTarget::Layered(b) => b.transform_part(),
        _ => None,
    }
}

fn is_trs(t: &ChannelTarget) -> bool {
    part_of(t).is_some()
}

/// Over every FBX corpus file with a mesh and an animation: how many FBX-animated entities
/// (source node with a translation, rotation or scale curve) keep the source's keys on every
/// animated part, and how many have a resampled one. Fails when a part that
/// [`expressible`] (from `anim::hermite` and the scene, not the exporter) says 3DA holds
/// exactly was resampled, or when no entity keeps its keys. Prints the counts and, per part,
/// why tracks were resampled (with `KEPT_DEBUG` set, per entity).
fn kept_keys(fbx_dir: &Path) -> Result<(), Failed> {
    let (mut kept, mut resampled, mut kept_in_source_axes) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    let mut reasons = BTreeMap::<String, usize>::new();
    for path in common::files_with_ext(fbx_dir, &["fbx"]) {
        let rel = path.strip_prefix(fbx_dir).unwrap().to_string_lossy().replace('\\', "/");
        if common::is_negative_fbx(&rel) {
            continue;
        }
        let Ok((src, _)) = keyscene::load(&path) else { continue };
        if !src.nodes.iter().any(|n| n.mesh.is_some()) || src.animations.is_empty() {
            continue;
        }
        let opts = three_da::ExportOptions::default();
        let (_, _, report) = three_da::export(&src, &opts)?;
        let anim = &src.animations[0];
        let (lo, hi) = (anim.frame_range.0.floor().max(0.0), anim.frame_range.1.ceil());
        let (mut file_kept, mut file_resampled) = (0, 0);
        for t in &report.tracks {
            let sources = [&t.position, &t.rotation, &t.scale];
            let mut animated = [false; 3];
            for ch in anim.channels.iter().filter(|c| c.node == t.node) {
                let Some(part) = part_of(&ch.target) else { continue };
                animated[part] = true;
                if let three_da::export::TrackSource::Resampled { why, .. } = sources[part] {
                    *reasons
                        .entry(format!("{} {why}", ["position", "rotation", "scale"][part]))
                        .or_default() += 1;
                    if std::env::var_os("KEPT_DEBUG").is_some() {
                        let n = &src.nodes[t.node];
                        eprintln!(
                            "DEBUG {rel} {:?} {why} pivots={:?} inherit={:?} fps={} range={:?}",
                            t.name, n.pivots, n.inherit, anim.fps, anim.frame_range
                        );
                    }
                }
                if !sources[part].is_kept() && expressible(&src, t.node, &ch.target, lo, hi) {
                    wrong.push(format!(
                        "{rel}: {:?} part {part} resampled ({:?}) but anim::hermite holds it",
                        t.name, sources[part]
                    ));
                }
            }
            if !animated.contains(&true) {
                continue;
            }
            if (0..3).all(|p| !animated[p] || sources[p].is_kept()) {
                file_kept += 1;
            } else {
                file_resampled += 1;
            }
        }
        if file_kept + file_resampled > 0 {
            eprintln!(
                "{rel}: {file_kept} animated entities keep their keys, {file_resampled} resampled"
            );
        }
        kept += file_kept;
        resampled += file_resampled;
        // For comparison: the same file in its own axes (no conversion at the root).
        let mut opts = three_da::ExportOptions::default();
        opts.axes = three_da::Axes::Source;
        let (_, _, source_axes) = three_da::export(&src, &opts)?;
        kept_in_source_axes += source_axes
            .tracks
            .iter()
            .filter(|t| anim.channels.iter().any(|c| c.node == t.node && is_trs(&c.target)))
            .filter(|t| {
                anim.channels
                    .iter()
                    .filter(|c| c.node == t.node)
                    .filter_map(|c| part_of(&c.target))
                    .all(|p| [&t.position, &t.rotation, &t.scale][p].is_kept())
            })
            .count();
    }
    eprintln!(
        "FBX corpus: {kept} animated entities keep their keys, {resampled} have a resampled track"
    );
    eprintln!("  (written in the sources' own axes, --axes source: {kept_in_source_axes} keep their keys)");
    for (why, n) in &reasons {
        eprintln!("  {n} animated tracks resampled: {why}");
    }
    if !wrong.is_empty() {
        let n = wrong.len();
        wrong.truncate(12);
        return Err(format!(
            "{n} tracks resampled that anim::hermite holds:\n{}",
            wrong.join("\n")
        )
        .into());
    }
    if kept == 0 {
        return Err(format!("none of {resampled} animated entities keeps its keys").into());
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let fbx_dir = corpus.as_ref().map(|c| c.join("fbx"));
    let files = fbx_dir.as_ref().map(|d| common::files_with_ext(d, &["fbx"])).unwrap_or_default();
    let mut trials = vec![common::corpus_trial("kept keys over the corpus", &corpus, |c| {
        kept_keys(&c.join("fbx"))
    })];
    if files.is_empty() {
        trials.push(common::corpus_trial("three_da_from_fbx", &corpus, |_| {
            Err("no FBX file found in the corpus".into())
        }));
    }
    for f in files {
        let dir = fbx_dir.clone().unwrap();
        let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        if common::is_negative_fbx(&rel) {
            continue;
        }
        trials.push(common::corpus_trial(rel.clone(), &corpus, move |c| {
            convert(&c.join("fbx"), &rel)
        }));
    }
    let rows = fbx_dir.as_deref().map(reference_rows).unwrap_or_default();
    for row in rows.into_iter().filter(comparable) {
        let name = match row.mode.as_str() {
            "static" => format!("ref {} -> {} static", row.fbx, row.obj),
            _ => {
                let t = number(&row.time_s, 0.0);
                let stack =
                    if row.stack.is_empty() { String::new() } else { format!(" {}", row.stack) };
                format!("ref {} -> {} t={t}{stack}", row.fbx, row.obj)
            }
        };
        if common::is_negative_fbx(&row.fbx) {
            // FBX 5.x (MANIFEST.md): keyscene loads it without its geometry.
            let t =
                libtest_mimic::Trial::test(format!("ignored: negative file :: {name}"), || Ok(()));
            trials.push(t.with_ignored_flag(true));
            continue;
        }
        trials.push(common::corpus_trial(name, &corpus, move |c| reference(&c.join("fbx"), &row)));
    }
    common::run(trials);
}
