//! Round trips through FBX (issue #14, "Done when" 2): glTF → FBX → glTF and 3DA → FBX → 3DA
//! keep world positions at every sampled frame.
//!
//! Sources, picked by rule from the corpus folders: every 3DS file under `3ds/`, every
//! [`FBX_SAMPLE_STEP`]th positive FBX file under `fbx/` (path order, MANIFEST.md's negative
//! files left out), every `.gltf`/`.glb` anywhere under the corpus, and every `.3da` under
//! `3da/`. Each source is loaded by keyscene and written, in memory, as
//!
//! - **GLB** (`gltf::write`, default options) and read back: the intermediate glTF `A`; `A`
//!   is written as FBX ([`fbx::export::write`], binary 7.4, and for every
//!   [`ASCII_STEP`]th source ASCII 7.4 too), read back by keyscene's FBX reader, and written
//!   as GLB again and read back: `C` (`gltf_fbx_gltf::`, `gltf_fbx_gltf_ascii::`). glTF sources
//!   are their own `A`.
//! - **3DA** (`three_da::export` with default options: 3ds Max axes, animation 0; `write`;
//!   `three_da::load`): the intermediate 3DA `A`; then FBX and back as above, and 3DA again:
//!   `C` (`3da_fbx_3da::`, `3da_fbx_3da_ascii::`). 3DA sources are their own `A`.
//!
//! `A` and `C` are both keyscene's evaluation of a file of the same format, in the same axes
//! and unit (the FBX leg declares `A`'s axes and unit in `GlobalSettings` and the reader keeps
//! them, so no conversion is applied on the way). They are compared at every integer and half
//! frame of `A`'s first animation (`common::three_da::integer_and_half_frames`: frames below 0
//! left out, ranges over 1,000 frames sampled at 2,001 evenly spread integer and half frames),
//! at the same time in seconds (`frame ÷ A's fps`), `C`'s first animation against `A`'s:
//!
//! - nodes correspond by name, the k-th node of a name in `A` to the k-th of that name in `C`;
//!   every node of `A` must have one;
//! - every corresponding node's world matrix agrees: the 3×3 part within 1e-4 relative to its
//!   largest entry, the translation within 1e-4 × the scene size
//!   (`common::ufbx_corpus::difference`);
//! - every mesh node's world vertices (`Pose::world_positions`: skin and blend shapes
//!   applied) agree as point sets: each of `C`'s within the tolerance of one of `A`'s and back,
//!   and the two world boxes within the tolerance. The writers split vertices at seams and the
//!   3DA exporter reorders them, so order is not compared. Meshes are compared at every sampled
//!   frame while `vertices × frames` stays under [`VERTEX_BUDGET`], else at that many frames
//!   spread evenly over the samples (the matrices are still compared at every frame).
//!
//! The scene size is `max(1, largest world translation, diagonal of the world box of every
//! mesh vertex)` of `A` at that frame; the tolerance is 1e-4 × the scene size.
//!
//! Half frames: the FBX writer resamples on integer frames what FBX cannot hold key for key
//! (its `Report::resampled`: 3DS TCB keys, which the 3DA keeps as TCB, and relative
//! rotations); such a node and its descendants — and meshes skinned to one of them — are
//! compared on integer frames only.
//!
//! That `A` itself agrees with the source is what `gltf_roundtrip`, `three_da_from_3ds` and
//! `three_da_from_fbx` check; this test checks that FBX in the middle changes nothing.
//!
//! Cameras and lights: their nodes are compared by world position, view (light) direction
//! and up (the node's world −Z and +Y), not by the whole matrix: after the FBX leg the FBX
//! reader keeps FBX's camera axes (+X view) and the glTF writer puts the camera or light on a
//! child node turning them back, whose axes are then the ones compared.
//!
//! Known exceptions, each for a format reason (printed as `EXCEPTION`, not failing):
//! - **beyond f32**: mesh vertices whose world coordinates pass 1.8e19 (√`f32::MAX`) are not
//!   compared (their node's matrix still is). glTF and 3DA store `float`s, and
//!   `fbx-conv/3dsmax_animation.FBX` (written with a decimal comma: `0,707…` reads as `0` and
//!   `707…`) skins `Box01` with bind matrices near 1e15, whose product cancels to noise in f32.
//! - **degenerate**: a node whose world matrix is singular (`3dsmax_animation.FBX`'s `Bone01`,
//!   scaled to zero on two axes by its decimal-comma numbers) has no rotation the matrix
//!   determines, and FBX's `Lcl` TRS of it may hold any: its matrix is not compared.
//! - **key limit**: the FBX writer refuses, with its limit error, a scene whose resampled
//!   curves would need more keys than `Limits` allows: the 3DA of `maya_long_keyframes`
//!   (5,000,000 frames) holds linear quaternion keys, which FBX's Euler curves can only take
//!   as a key on every frame. The source file itself converts (`fbx_write_ufbx`).
//!
//! A source keyscene cannot load (the negative `wrong.3ds`) is reported *ignored*.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::three_da::{bbox, bbox_diff, integer_and_half_frames, Cloud};
use common::ufbx_corpus::{difference, scene_size};
use glam::DVec3;
use keyscene::anim::{Pose, Time};
use keyscene::formats::fbx::{self, export};
use keyscene::formats::{gltf, three_da};
use keyscene::scene::Scene;
use keyscene::ReadOptions;
use libtest_mimic::Trial;

/// One positive corpus FBX file of this many (path order) is a source: 79 of the 630, which
/// keeps the test near 30 s on the CI machine (the 3DS files are all taken).
const FBX_SAMPLE_STEP: usize = 8;

/// One source of this many (the list [`sources`] gives) also takes the FBX leg in ASCII.
const ASCII_STEP: usize = 2;

/// Most `vertices × frames` compared per mesh comparison of one trial.
const VERTEX_BUDGET: usize = 3_000_000;

/// World coordinates past this (√`f32::MAX`) are not compared (module docs, "beyond f32").
const BEYOND_F32: f64 = 1.8e19;

/// The intermediate formats.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    Gltf,
    ThreeDa,
}

fn glb_round(scene: &Scene) -> Result<Scene, String> {
    let file = gltf::write(scene, &gltf::WriteOptions::default())
        .map_err(|e| format!("glTF write: {e}"))?;
    Ok(gltf::read(&file.main, &ReadOptions::default()).map_err(|e| format!("glTF read: {e}"))?.0)
}

fn three_da_round(scene: &Scene) -> Result<Scene, String> {
    let (file, _, _) = three_da::export(scene, &three_da::ExportOptions::default())
        .map_err(|e| format!("3DA export: {e}"))?;
    let bytes = three_da::write(&file).map_err(|e| format!("3DA write: {e}"))?;
    Ok(three_da::load(&bytes, &ReadOptions::default()).map_err(|e| format!("3DA read: {e}"))?.0)
}

fn round(scene: &Scene, via: Via) -> Result<Scene, String> {
    match via {
        Via::Gltf => glb_round(scene),
        Via::ThreeDa => three_da_round(scene),
    }
}

/// The FBX leg: written (binary 7.4 or ASCII 7.4) and read back; with the indices of the
/// nodes the writer resampled (their first animation).
fn fbx_round(scene: &Scene, ascii: bool) -> Result<(Scene, Vec<usize>), String> {
    let mut o = export::WriteOptions::default();
    o.ascii = ascii;
    let (bytes, report) = export::write(scene, &o).map_err(|e| format!("FBX write: {e}"))?;
    let (back, _) = fbx::read(&bytes, &Default::default()).map_err(|e| format!("FBX read: {e}"))?;
    let resampled = report.resampled.iter().filter(|r| r.animation == 0).map(|r| r.node).collect();
    Ok((back, resampled))
}

/// `a`'s node `i` → `c`'s node of the same name (`\0` left out) and occurrence; a name not
/// found (bytes that are not UTF-8 or that FBX cannot hold in a name) falls back to the same
/// index when both scenes have as many nodes.
fn correspond(a: &Scene, c: &Scene) -> Vec<Option<usize>> {
    let clean = |s: &str| s.chars().filter(|&c| c != '\0').collect::<String>();
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    for (j, n) in c.nodes.iter().enumerate() {
        by_name.entry(clean(&n.name)).or_default().push(j);
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let same_count = a.nodes.len() == c.nodes.len();
    a.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let k = seen.entry(clean(&n.name)).or_default();
            *k += 1;
            let by = by_name.get(&clean(&n.name)).and_then(|v| v.get(*k - 1)).copied();
            by.or((same_count).then_some(i))
        })
        .collect()
}

/// Nodes of `a` compared on integer frames only: resampled by the FBX writer (`resampled`, in
/// `a`'s node indices: the FBX leg writes `a`'s nodes in order), below one, or a mesh skinned
/// to one.
fn integer_only(a: &Scene, resampled: &[usize]) -> Vec<bool> {
    let below = |i: usize| {
        let mut at = Some(i);
        while let Some(k) = at {
            if resampled.contains(&k) {
                return true;
            }
            at = a.nodes[k].parent;
        }
        false
    };
    (0..a.nodes.len())
        .map(|i| {
            below(i)
                || a.nodes[i].mesh.and_then(|m| a.meshes[m].skin).is_some_and(|s| {
                    a.skins.get(s).is_some_and(|s| s.joints.iter().any(|j| below(j.node)))
                })
        })
        .collect()
}

fn all_finite(p: &[DVec3]) -> bool {
    p.iter().all(|v| v.is_finite())
}

/// `A` (`a`) against `C` (`c`) at every sampled frame (module docs).
fn compare(a: &Scene, c: &Scene, resampled: &[usize]) -> Result<(), String> {
    let pairs = correspond(a, c);
    if let Some(i) = pairs.iter().position(Option::is_none) {
        let missing = pairs.iter().filter(|p| p.is_none()).count();
        return Err(format!(
            "{missing} of {} nodes have no node of their name after the round trip, the first {:?}",
            a.nodes.len(),
            a.nodes[i].name
        ));
    }
    let pairs: Vec<usize> = pairs.into_iter().flatten().collect();
    let anim_a = (!a.animations.is_empty()).then_some(0);
    let anim_c = (!c.animations.is_empty()).then_some(0);
    let fps = a.animations.first().map_or(30.0, |x| x.fps);
    let (f0, f1) = a.animations.first().map_or((0.0, 0.0), |x| x.frame_range);
    let frames = integer_and_half_frames(f0, f1);
    let integer = integer_only(a, resampled);
    let vertices: usize =
        a.nodes.iter().filter_map(|n| n.mesh).map(|m| a.meshes[m].positions.len()).sum();
    let mesh_every = (vertices * frames.len()).div_ceil(VERTEX_BUDGET).max(1);
    for (k, &f) in frames.iter().enumerate() {
        let t = Time::Seconds(f / fps);
        let pa = a.evaluate(anim_a, t);
        let pc = c.evaluate(anim_c, t);
        let half = f.fract() != 0.0;
        let meshes = k % mesh_every == 0 || k + 1 == frames.len();
        compare_frame(a, c, &pairs, &pa, &pc, half, meshes, &integer)
            .map_err(|e| format!("at frame {f}: {e}"))?;
    }
    Ok(())
}

/// Whether node `i` of `s` holds a camera or a non-ambient light.
fn holds_view(s: &Scene, i: usize) -> bool {
    use keyscene::scene::{LightKind, NodeKind};
    match s.nodes[i].kind {
        NodeKind::Camera(c) => c < s.cameras.len(),
        NodeKind::Light(l) => s.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient),
        _ => false,
    }
}

/// A camera or light node: its world position, and its view (light) direction and up, the
/// node's world −Z and +Y in a glTF or 3DA scene. After the FBX leg the camera or light may sit
/// on a child the glTF writer adds for FBX's camera axes (+X view; docs/gltf.md): then that
/// child's axes are compared.
fn view_agrees(
    c: &Scene,
    i: usize,
    j: usize,
    pa: &Pose,
    pc: &Pose,
    size: f64,
) -> Result<(), String> {
    let holder = if holds_view(c, j) {
        j
    } else {
        (0..c.nodes.len())
            .find(|&k| c.nodes[k].parent == Some(j) && holds_view(c, k))
            .ok_or("no camera or light on the node or a child after the round trip")?
    };
    let (wa, wc) = (pa.world[i], pc.world[holder]);
    let t = (wa.col(3) - wc.col(3)).truncate().abs().max_element() / size;
    if !(t <= 1e-4) {
        return Err(format!(
            "camera/light at {} after the round trip, {} before ({t:e} of the scene size)",
            wc.col(3).truncate(),
            wa.col(3).truncate()
        ));
    }
    let dir = |m: glam::DMat4, v: DVec3| m.transform_vector3(v).normalize_or_zero();
    for (what, v) in [("view direction", -DVec3::Z), ("up", DVec3::Y)] {
        let (x, y) = (dir(wa, v), dir(wc, v));
        if !x.abs_diff_eq(y, 1e-4) {
            return Err(format!("{what} {y} after the round trip, {x} before"));
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn compare_frame(
    a: &Scene,
    c: &Scene,
    pairs: &[usize],
    pa: &Pose,
    pc: &Pose,
    half: bool,
    meshes: bool,
    integer: &[bool],
) -> Result<(), String> {
    let world_a: Vec<Vec<DVec3>> = if meshes {
        (0..a.nodes.len()).map(|i| pa.world_positions(a, i)).collect()
    } else {
        vec![Vec::new(); a.nodes.len()]
    };
    let (lo, hi) = bbox(world_a.iter().flatten().copied().filter(|p| p.is_finite()));
    let diag = if lo.x <= hi.x { (hi - lo).length() } else { 0.0 };
    let size = scene_size(pa.world.iter()).max(diag);
    let tol = 1e-4 * size;
    for (i, &j) in pairs.iter().enumerate() {
        if half && integer[i] {
            continue;
        }
        let name = &a.nodes[i].name;
        let (wa, wc) = (pa.world[i], pc.world[j]);
        if wa.is_finite() && holds_view(a, i) {
            view_agrees(c, i, j, pa, pc, size).map_err(|e| format!("node {name:?}: {e}"))?;
        } else if wa.is_finite() && wa.determinant().abs() > 0.0 {
            let (lin, tr) = difference(wc, wa, size);
            if !(lin <= 1e-4 && tr <= 1e-4) {
                return Err(format!(
                    "node {name:?}: world matrix {wc} after the round trip, {wa} before \
                     (3×3 part off by {lin:e}, translation by {tr:e} of the scene size {size})"
                ));
            }
        }
        if !meshes || a.nodes[i].mesh.is_none() {
            continue;
        }
        let pts_a = &world_a[i];
        let pts_c = pc.world_positions(c, j);
        if !all_finite(pts_a) || pts_a.iter().any(|p| p.abs().max_element() > BEYOND_F32) {
            continue;
        }
        if pts_a.is_empty() != pts_c.is_empty() {
            return Err(format!(
                "mesh of {name:?}: {} world vertices before, {} after",
                pts_a.len(),
                pts_c.len()
            ));
        }
        if pts_a.is_empty() {
            continue;
        }
        let (ca, cc) = (Cloud::new(pts_a.clone()), Cloud::new(pts_c.clone()));
        for (what, pts, cloud) in [("after", &pts_c, &ca), ("before", pts_a, &cc)] {
            if let Some((v, d)) =
                pts.iter().map(|&p| (p, cloud.near(p, tol * 2.0))).find(|(_, d)| !(*d <= tol))
            {
                return Err(format!(
                    "mesh of {name:?}: vertex {v} {what} the round trip is {d:e} from the nearest \
                     on the other side (tolerance {tol:e})"
                ));
            }
        }
        let bb = bbox_diff(bbox(pts_a.iter().copied()), bbox(pts_c.iter().copied()));
        if !(bb <= tol) {
            return Err(format!(
                "mesh of {name:?}: world boxes differ by {bb:e} (tolerance {tol:e})"
            ));
        }
    }
    Ok(())
}

fn check(path: &Path, via: Via, ascii: bool) -> Result<(), String> {
    let (src, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let own = match via {
        Via::Gltf => src.meta.format == "gltf",
        Via::ThreeDa => src.meta.format == "3da",
    };
    let a = if own { src } else { round(&src, via)? };
    let (b, resampled) = match fbx_round(&a, ascii) {
        Err(e) if e.contains("more keys than the limit") => {
            eprintln!("EXCEPTION {}: key limit: {e}", path.display());
            return Ok(());
        }
        r => r?,
    };
    let c = round(&b, via)?;
    compare(&a, &c, &resampled)
}

fn sources(corpus: &Path) -> Vec<PathBuf> {
    let mut files = common::files_with_ext(&corpus.join("3ds"), &["3ds"]);
    let fbx_dir = corpus.join("fbx");
    let positives: Vec<PathBuf> = common::files_with_ext(&fbx_dir, &["fbx"])
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(&fbx_dir).unwrap().to_string_lossy().replace('\\', "/");
            !common::is_negative_fbx(&rel)
        })
        .collect();
    files.extend(positives.into_iter().step_by(FBX_SAMPLE_STEP));
    files.extend(common::files_with_ext(corpus, &["gltf", "glb"]));
    files.extend(common::files_with_ext(&corpus.join("3da"), &["3da"]));
    files
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = corpus.as_deref().map(sources).unwrap_or_default();
    if files.is_empty() {
        trials.push(common::corpus_trial("fbx_roundtrip::corpus", &corpus, |_| {
            Err("the corpus holds no source file".into())
        }));
    }
    let root = corpus.clone().unwrap_or_default();
    for (k, path) in files.into_iter().enumerate() {
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let mut kinds =
            vec![("gltf_fbx_gltf", Via::Gltf, false), ("3da_fbx_3da", Via::ThreeDa, false)];
        if k % ASCII_STEP == 0 {
            kinds.extend([
                ("gltf_fbx_gltf_ascii", Via::Gltf, true),
                ("3da_fbx_3da_ascii", Via::ThreeDa, true),
            ]);
        }
        if let Err(e) = keyscene::load(&path) {
            let why = e.to_string().chars().take(60).collect::<String>();
            for (kind, ..) in kinds {
                trials.push(
                    Trial::test(
                        format!("{kind}::{rel} (ignored: the source does not load: {why})"),
                        || Ok(()),
                    )
                    .with_ignored_flag(true),
                );
            }
            continue;
        }
        for (kind, via, ascii) in kinds {
            let p = path.clone();
            trials.push(common::corpus_trial(format!("{kind}::{rel}"), &corpus, move |_| {
                check(&p, via, ascii).map_err(|e| format!("{}: {e}", p.display()).into())
            }));
        }
    }
    common::run(trials)
}
