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
//! - Camera and light attribute properties (`FieldOfView`, `Color`, `InnerAngle`,
//!   `OuterAngle`) and user properties the writer resampled: `ufbx::evaluate_prop` of the
//!   written element at the same frames against the source track, within 1e-4 of the track's
//!   largest key magnitude (at least 1) plus `f32` rounding (`check_property`).
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
    check_scene(&src)
}

/// [`check`] of a scene in memory.
fn check_scene(src: &Scene) -> Result<bool, Failed> {
    let src = src.clone();
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
    for r in &report.resampled {
        check_property(&src, &theirs, r.animation, r.node, r.part)?;
    }
    Ok(true)
}

/// The source track of written property `part` (an attribute property, or a user property)
/// of node `i` in animation `a`: the property name ufbx evaluates on the element, its
/// component, the track's sampler, its largest key magnitude (at least 1). `None` for parts
/// that are not such a property (node transforms, `DeformPercent`).
#[allow(clippy::type_complexity)]
fn property_source<'s>(
    src: &'s Scene,
    a: usize,
    i: usize,
    part: &str,
) -> Vec<(String, usize, Box<dyn Fn(f64) -> f64 + 's>, f64)> {
    use keyscene::anim::ChannelTarget as C;
    let mut out: Vec<(String, usize, Box<dyn Fn(f64) -> f64 + 's>, f64)> = Vec::new();
    let mag = |v: &mut dyn Iterator<Item = f64>| v.map(f64::abs).fold(1.0, f64::max);
    for ch in src.animations[a].channels.iter().filter(|c| c.node == i) {
        match (&ch.target, part) {
            (C::Fov(t), "FieldOfView")
            | (C::Hotspot(t), "InnerAngle")
            | (C::Falloff(t), "OuterAngle") => {
                let m = mag(&mut t.keys.iter().map(|k| k.value));
                out.push((part.into(), 0, Box::new(move |f| t.sample(f).unwrap_or(0.0)), m));
            }
            (C::Color(t), "Color") => {
                for k in 0..3 {
                    let m = mag(&mut t.keys.iter().map(|x| x.value[k]));
                    let f = move |f| t.sample(f).map_or(0.0, |v| v[k]);
                    out.push(("Color".into(), k, Box::new(f), m));
                }
            }
            (C::Property { name, track }, "user property") => {
                let m = mag(&mut track.keys.iter().map(|k| k.value));
                let (base, comp) = match name.rsplit_once('|') {
                    Some((b, "X")) => (b, 0),
                    Some((b, "Y")) => (b, 1),
                    Some((b, "Z")) => (b, 2),
                    _ => (name.as_str(), 0),
                };
                out.push((base.into(), comp, Box::new(move |f| track.sample(f).unwrap_or(0.0)), m));
            }
            _ => {}
        }
    }
    out
}

/// A resampled camera/light attribute property or user property of node `i` (issue 33 §9):
/// `ufbx::evaluate_prop` of the written element (the node's attribute, or the node for a user
/// property) at every frame and quarter frame within 1e-4 of the track's largest key
/// magnitude (at least 1) — the writer's bound — plus `f32` rounding.
fn check_property(
    src: &Scene,
    theirs: &ufbx::Scene,
    a: usize,
    i: usize,
    part: &str,
) -> Result<(), Failed> {
    let sources = property_source(src, a, i, part);
    if sources.is_empty() {
        return Ok(());
    }
    let anim = &src.animations[a];
    let name = if anim.name.is_empty() { format!("Take {:03}", a + 1) } else { anim.name.clone() };
    let stack = theirs
        .anim_stacks
        .iter()
        .find(|s| *s.element.name == *name)
        .ok_or_else(|| format!("ufbx: no stack {name:?}"))?;
    let node_name = clean(&src.nodes[i].name);
    let node = theirs
        .nodes
        .iter()
        .find(|n| clean(&n.element.name) == node_name)
        .ok_or_else(|| format!("ufbx: no node {node_name:?}"))?;
    let element = if part == "user property" {
        &node.element
    } else {
        node.attrib
            .as_deref()
            .ok_or_else(|| format!("ufbx: node {node_name:?} has no attribute"))?
    };
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
    for (prop, comp, source, magnitude) in sources {
        let tol = 1e-4 * magnitude + magnitude / (1u64 << 20) as f64;
        for f in frames(anim.frame_range) {
            let got = ufbx::evaluate_prop(&stack.anim, element, &prop, f / fps);
            let got = [got.value_vec4.x, got.value_vec4.y, got.value_vec4.z][comp];
            let want = source(f);
            if (got - want).abs().is_nan() || (got - want).abs() > tol {
                return Err(format!(
                    "{node_name:?} {prop}[{comp}] at frame {f}: ufbx {got}, source {want} (bound {tol:e})"
                )
                .into());
            }
        }
    }
    Ok(())
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

/// A camera whose field of view and a light whose colour have TCB keys with a jump (two keys
/// on one frame: no FBX curve form, so the writer resamples them), over frames 0–20 at 30 fps:
/// the generated case of [`check_property`], which no corpus file exercises.
fn jumping_attributes() -> Scene {
    use keyscene::scene::animation::{Animation, Channel, Interpolation, Key, Tcb, Track};
    use keyscene::scene::{Camera, FovAxis, Light, LightKind, Node, NodeKind};
    let mut s = Scene::default();
    s.cameras.push(Camera::new("cam", 45.0, FovAxis::Horizontal));
    s.lights.push(Light {
        name: "bulb".into(),
        kind: LightKind::Point,
        color: glam::Vec3::ONE,
        intensity: 1.0,
        hotspot_degrees: 30.0,
        falloff_degrees: 40.0,
        attenuation: None,
        on: true,
        target: None,
        roll_degrees: 0.0,
    });
    for node in [Node::new("cam", NodeKind::Camera(0)), Node::new("bulb", NodeKind::Light(0))] {
        s.nodes.push(node);
        s.attach(s.nodes.len() - 1, None);
    }
    let tcb = Tcb { tension: 0.2, continuity: 0.0, bias: 0.3, ease_to: 0.6, ease_from: 0.8 };
    let key = |frame, value| Key { frame, value, interpolation: Interpolation::Tcb(tcb) };
    let key3 = |frame, value| Key { frame, value, interpolation: Interpolation::Tcb(tcb) };
    s.animations.push(Animation {
        name: "jump".into(),
        fps: 30.0,
        frame_range: (0.0, 20.0),
        channels: vec![
            Channel {
                node: 0,
                target: keyscene::anim::ChannelTarget::Fov(Track::new(vec![
                    key(0.0, 30.0),
                    key(7.0, 75.0),
                    key(7.0, 50.0),
                    key(20.0, 40.0),
                ])),
            },
            Channel {
                node: 1,
                target: keyscene::anim::ChannelTarget::Color(Track::new(vec![
                    key3(0.0, glam::DVec3::new(1.0, 0.2, 0.0)),
                    key3(9.0, glam::DVec3::new(0.1, 0.9, 0.5)),
                    key3(9.0, glam::DVec3::new(0.3, 0.2, 0.5)),
                    key3(20.0, glam::DVec3::new(0.6, 0.6, 1.0)),
                ])),
            },
        ],
    });
    s
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
    trials.push(Trial::test("generated::camera_fov_and_light_colour_with_a_jump", || {
        match check_scene(&jumping_attributes())? {
            true => Ok(()),
            false => Err("the writer kept the tracks key for key".into()),
        }
    }));
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
