//! FBX node visibility against the `ufbx` crate (issue 33 §4): `Visibility` hides a node as
//! ufbx's `ufbx_node::visible` says, at rest and animated.
//!
//! The files: every corpus FBX file ufbx loads (not a negative case) — found by scanning the
//! folder, not listed. For each file:
//!
//! - **At rest**: every node (paired by name, names that name one node only) is
//!   [`Node::hidden`](keyscene::scene::Node::hidden) exactly when ufbx's loaded `visible` is
//!   false.
//!   FBX 5 files: ufbx synthesises their `Visibility` from the channel's `Default` as a real
//!   value only and its `visible` reads the (unset, 0) integer, hiding every node; there the
//!   oracle is ufbx's own truncation of that real value (`ufbx_rest_visible`).
//! - **Animated**: in files where an animation layer animates a `Visibility` property (found by
//!   scanning ufbx's `anim_props`), at 41 evenly spaced times of every stack (its first and last
//!   time included) and at each key time of those curves and 10⁻⁴ s before it, every node's
//!   `Pose::hidden` from `Scene::evaluate` equals `!visible` of ufbx's `evaluate_scene`.
//!   Left out (counted): nodes whose `Visibility` the stack animates only through curve nodes
//!   without curves (`magnum/animation-layer*.fbx`, `ufbx/maya_anim_layer_quat_to_euler`):
//!   ufbx reads no value from such a node and takes 0, hiding the node for the whole stack;
//!   keyscene keeps the stored value, as the FBX SDK evaluates a curveless curve node to its
//!   `d|Visibility` (docs/fbx.md, "Visibility").
//!
//! - **glTF**: the GLB keyscene writes, read back by keyscene, hides the same nodes at rest
//!   (`KHR_node_visibility`) and, in the files that animate `Visibility`, at every whole frame
//!   of every stack (`KHR_animation_pointer`, sampled per frame by the writer) as ufbx's
//!   `evaluate_scene` — for the nodes the writer can express: those without a descendant shown
//!   while they are hidden (the extension hides descendants too; the writer warns instead).
//! - **FBX written back**: the FBX keyscene writes (binary 7.4), loaded by ufbx, has the same
//!   `visible` as ufbx's reading of the source: at rest in files that do not animate
//!   `Visibility`, else at every whole frame of every stack (constant `Visibility` keys on the
//!   model), for every node keyscene agrees on there.
//!
//! ufbx applies no inheritance: `visible` is the node's own `Visibility` (`Visibility
//! Inheritance` and `Show` are not read for nodes), which is what both sides compare.

mod common;

use std::collections::HashMap;
use std::path::Path;

use keyscene::anim::Time;

/// The node index of each name that names exactly one node.
fn unique<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<&'a str, usize> {
    let mut count: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, n) in names.enumerate() {
        let e = count.entry(n).or_insert((0, i));
        e.0 += 1;
    }
    count.into_iter().filter(|(_, (c, _))| *c == 1).map(|(n, (_, i))| (n, i)).collect()
}

/// Whether an animation layer of `s` animates a `Visibility` property.
fn animates_visibility(s: &ufbx::Scene) -> bool {
    s.anim_layers.iter().any(|l| l.anim_props.iter().any(|p| p.prop_name.as_ref() == "Visibility"))
}

/// The `Visibility` animations of `layers`: per animated element id, whether any of its curve
/// nodes has a keyed curve, and every key time (seconds).
fn visibility_curves(layers: &ufbx::RefList<ufbx::AnimLayer>) -> (HashMap<u32, bool>, Vec<f64>) {
    let (mut keyed, mut times) = (HashMap::new(), Vec::new());
    for layer in layers.iter() {
        for p in layer.anim_props.iter().filter(|p| p.prop_name.as_ref() == "Visibility") {
            let mut any = false;
            for curve in p.anim_value.curves.iter().flatten() {
                any |= !curve.keyframes.is_empty();
                times.extend(curve.keyframes.iter().map(|k| k.time));
            }
            *keyed.entry(p.element.element_id).or_insert(false) |= any;
        }
    }
    (keyed, times)
}

/// ufbx's visibility of `n` as loaded: `visible`, except where its `Visibility` property has
/// no integer value of its own (FBX 5 channels' `Default`s: ufbx synthesises the real value
/// only and `visible` reads the integer, 0) — there ufbx's conversion of the real value
/// (`ufbxi_f64_to_i64`, truncation) is the rule.
fn ufbx_rest_visible(n: &ufbx::Node) -> bool {
    match n.element.props.find_prop("Visibility") {
        Some(p) if !p.flags.has_any(ufbx::PropFlags::VALUE_INT) => p.value_vec4.x.trunc() != 0.0,
        _ => n.visible,
    }
}

/// Checks one file; returns (nodes compared at rest, node poses compared, node poses left
/// out: animated by curve nodes without curves only).
fn check(path: &Path) -> Result<(usize, usize, usize), String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let ours = unique(scene.nodes.iter().map(|n| n.name.as_str()));
    let pairs: Vec<(usize, usize)> = theirs
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_root)
        .filter_map(|(k, n)| ours.get(n.element.name.as_ref()).map(|&i| (k, i)))
        .collect();
    for &(k, i) in &pairs {
        let n = &theirs.nodes[k];
        if scene.nodes[i].hidden == ufbx_rest_visible(n) {
            return Err(format!(
                "{}: hidden {} at rest, ufbx visible {}",
                n.element.name, scene.nodes[i].hidden, n.visible
            ));
        }
    }
    let (mut poses, mut left_out) = (0, 0);
    if !animates_visibility(&theirs) {
        return Ok((pairs.len(), poses, left_out));
    }
    for (s, stack) in theirs.anim_stacks.iter().enumerate() {
        let a = common::ufbx_corpus::matching_animation(&scene, s, &stack.element.name);
        let Some(a) = a else { continue };
        let (keyed, keys) = visibility_curves(&stack.layers);
        let (t0, t1) = (stack.time_begin, stack.time_end);
        let mut times: Vec<f64> = (0..=40).map(|k| t0 + (t1 - t0) * f64::from(k) / 40.0).collect();
        times.extend(keys.iter().flat_map(|&t| [t, t - 1e-4]));
        for t in times {
            let posed = ufbx::evaluate_scene(&theirs, &stack.anim, t, Default::default())
                .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
            let pose = scene.evaluate(Some(a), Time::Seconds(t));
            for &(k, i) in &pairs {
                let n = &posed.nodes[k];
                if keyed.get(&n.element.element_id) == Some(&false) {
                    left_out += 1;
                    continue;
                }
                if pose.hidden[i] == n.visible {
                    return Err(format!(
                        "{}: stack {:?} t = {t} s: hidden {}, ufbx visible {}",
                        n.element.name, stack.element.name, pose.hidden[i], n.visible
                    ));
                }
                poses += 1;
            }
        }
    }
    check_gltf(&scene, &theirs, &pairs)?;
    check_fbx(&scene, &theirs, &pairs)?;
    Ok((pairs.len(), poses, left_out))
}

/// The FBX round trip of [`check`]'s module docs.
fn check_fbx(
    scene: &keyscene::scene::Scene,
    theirs: &ufbx::Scene,
    pairs: &[(usize, usize)],
) -> Result<(), String> {
    use keyscene::formats::fbx::export;
    let (bytes, _) = export::write(scene, &export::WriteOptions::default())
        .map_err(|e| format!("FBX write: {e}"))?;
    let back = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx on the written FBX: {:?}", e.description))?;
    let by_name = unique(back.nodes.iter().map(|n| n.element.name.as_ref()));
    if !animates_visibility(theirs) {
        for &(k, _) in pairs {
            let n = &theirs.nodes[k];
            let Some(&j) = by_name.get(n.element.name.as_ref()) else { continue };
            if back.nodes[j].visible != ufbx_rest_visible(n) {
                return Err(format!(
                    "{}: written FBX visible {}",
                    n.element.name,
                    !ufbx_rest_visible(n)
                ));
            }
        }
        return Ok(());
    }
    let fps = theirs.settings.frames_per_second;
    for (s, stack) in theirs.anim_stacks.iter().enumerate() {
        let name: &str = &stack.element.name;
        let (Some(a), Some(written)) = (
            common::ufbx_corpus::matching_animation(scene, s, name),
            back.anim_stacks.iter().find(|x| x.element.name.as_ref() == name),
        ) else {
            continue;
        };
        let (f0, f1) = ((stack.time_begin * fps).ceil(), (stack.time_end * fps).floor());
        let frames = (0..=2000).map(|k| f0 + f64::from(k)).take_while(|f| *f <= f1);
        for f in frames {
            let t = f / fps;
            let want = ufbx::evaluate_scene(theirs, &stack.anim, t, Default::default())
                .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
            let got = ufbx::evaluate_scene(&back, &written.anim, t, Default::default())
                .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
            let ours = scene.evaluate(Some(a), Time::Seconds(t));
            for &(k, i) in pairs {
                let n = &want.nodes[k];
                let Some(&j) = by_name.get(n.element.name.as_ref()) else { continue };
                if ours.hidden[i] == n.visible {
                    continue; // keyscene differs from ufbx here already (left out above)
                }
                if got.nodes[j].visible != n.visible {
                    return Err(format!(
                        "{}: written FBX stack {name:?} t = {t} s: visible {}, source {}",
                        n.element.name, got.nodes[j].visible, n.visible
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether node `i` or a descendant is shown in `hidden`.
fn shows_below(scene: &keyscene::scene::Scene, i: usize, hidden: &[bool]) -> bool {
    let mut stack = scene.nodes[i].children.clone();
    while let Some(k) = stack.pop() {
        if !hidden[k] {
            return true;
        }
        stack.extend(scene.nodes[k].children.iter().copied());
    }
    false
}

/// The glTF round trip of [`check`]'s module docs.
fn check_gltf(
    scene: &keyscene::scene::Scene,
    theirs: &ufbx::Scene,
    pairs: &[(usize, usize)],
) -> Result<(), String> {
    use keyscene::formats::gltf;
    let glb = gltf::write(scene, &gltf::WriteOptions::default()).map_err(|e| e.to_string())?;
    let (back, _) =
        gltf::read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    let by_name = unique(back.nodes.iter().map(|n| n.name.as_str()));
    let rest_hidden: Vec<bool> = scene.nodes.iter().map(|n| n.hidden).collect();
    // The glTF rest is the first animation's first frame: compared with the stored value
    // where no animation moves visibility.
    for &(k, i) in pairs.iter().filter(|_| !animates_visibility(theirs)) {
        let n = &theirs.nodes[k];
        let Some(&j) = by_name.get(n.element.name.as_ref()) else { continue };
        if !shows_below(scene, i, &rest_hidden) && back.nodes[j].hidden == ufbx_rest_visible(n) {
            return Err(format!(
                "{}: glTF hidden {} at rest",
                n.element.name, back.nodes[j].hidden
            ));
        }
    }
    if !animates_visibility(theirs) {
        return Ok(());
    }
    let fps = theirs.settings.frames_per_second;
    for (s, stack) in theirs.anim_stacks.iter().enumerate() {
        let name: &str = &stack.element.name;
        let (Some(a), Some(b)) = (
            common::ufbx_corpus::matching_animation(scene, s, name),
            back.animations.iter().position(|x| x.name == name),
        ) else {
            continue;
        };
        let (f0, f1) = ((stack.time_begin * fps).ceil(), (stack.time_end * fps).floor());
        let frames: Vec<f64> =
            (0..=2000).map(|k| f0 + f64::from(k)).take_while(|f| *f <= f1).collect();
        let ours: Vec<Vec<bool>> = frames
            .iter()
            .map(|&f| scene.evaluate(Some(a), Time::Seconds(f / fps)).hidden)
            .collect();
        for (x, &f) in frames.iter().enumerate() {
            let t = f / fps;
            let posed = ufbx::evaluate_scene(theirs, &stack.anim, t, Default::default())
                .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
            let read = back.evaluate(Some(b), Time::Seconds(t));
            for &(k, i) in pairs {
                let n = &posed.nodes[k];
                let Some(&j) = by_name.get(n.element.name.as_ref()) else { continue };
                if ours.iter().any(|h| h[i] && shows_below(scene, i, h)) || ours[x][i] == n.visible
                {
                    // Not expressible in glTF, or keyscene already differs (left out above).
                    continue;
                }
                if read.hidden[j] == n.visible {
                    return Err(format!(
                        "{}: glTF stack {name:?} t = {t} s: hidden {}, ufbx visible {}",
                        n.element.name, read.hidden[j], n.visible
                    ));
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for f in common::ufbx_corpus::fbx_files(&corpus) {
        if !f.ufbx_loads || common::is_negative_fbx(&f.rel) {
            continue;
        }
        let path = f.path.clone();
        trials.push(common::corpus_trial(format!("visibility::{}", f.rel), &corpus, move |_| {
            let (nodes, poses, left_out) = check(&path)?;
            if poses + left_out > 0 {
                eprintln!(
                    "{}: {nodes} nodes, {poses} node poses compared, {left_out} left out",
                    path.display()
                );
            }
            Ok(())
        }));
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("visibility::corpus", &corpus, |_| {
            Err("no corpus FBX file ufbx loads".into())
        }));
    }
    common::run(trials);
}
