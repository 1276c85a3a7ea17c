//! Resampled channels: per animation target (scene nodes, then aim helpers) its glTF
//! translation, rotation and scale at the sample frames, posing only what can move.

use glam::{DMat4, DQuat, DVec3};

use super::nodes::{decompose, quat_f32};
use super::Helper;
use crate::anim::{ChannelSampler, ChannelTarget, PartialPose};
use crate::scene::Scene;

/// Appends one sample to a target's translation, rotation and scale samples, the rotation
/// flipped to the hemisphere of the previous one (so LINEAR slerps the short way).
pub(super) fn push_sample(
    tr: &mut Vec<DVec3>,
    ro: &mut Vec<DQuat>,
    sc: &mut Vec<DVec3>,
    (t, r, s): (DVec3, DQuat, DVec3),
) {
    tr.push(t);
    let r = match ro.last() {
        Some(prev) if prev.dot(r) < 0.0 => -r,
        _ => r,
    };
    ro.push(r);
    sc.push(s);
}

/// `len` samples of one held `value`, or none when it equals `rest` as written (f32; a
/// rotation or its negation), since nothing is written for a part that does not move.
pub(super) fn hold_sample(
    tr: &mut Vec<DVec3>,
    ro: &mut Vec<DQuat>,
    sc: &mut Vec<DVec3>,
    (t, r, s): (DVec3, DQuat, DVec3),
    rest: (DVec3, DQuat, DVec3),
    len: usize,
) {
    let v3 = |v: DVec3| v.as_vec3().to_array();
    let same_r = quat_f32(r) == quat_f32(rest.1) || quat_f32(-r) == quat_f32(rest.1);
    if v3(t) == v3(rest.0) && same_r && v3(s) == v3(rest.2) {
        return;
    }
    tr.resize(len, t);
    ro.resize(len, r);
    sc.resize(len, s);
}

/// Which animation targets (scene nodes, then aim helpers) may change over animation `a`, and
/// which morph nodes' weights may, by [`Scene::motion`]: a node's glTF local when its unaimed
/// world matrix may change (a glTF local of a non-`RSrs` node is made from its ancestors'
/// world matrices); a helper's when its node's aimed world matrix may (its node, its aim
/// target, their ancestors or its roll); a morph node's when its mesh's weights may.
/// Conservative: "may change" is all it says.
pub(super) fn varying_targets(
    scene: &Scene,
    a: usize,
    helpers: &[Helper],
    morph_nodes: &[(usize, usize)],
) -> (Vec<bool>, Vec<bool>) {
    let motion = scene.motion(Some(a));
    let mut varies = motion.unaimed;
    varies.extend(helpers.iter().map(|h| motion.world[h.node]));
    let morph =
        morph_nodes.iter().map(|&(_, m)| motion.morph.get(m).copied().unwrap_or(true)).collect();
    (varies, morph)
}

/// Target `k`'s glTF local matrix (scene nodes, then aim helpers) from a partial pose: what
/// [`gltf_local`] (and, for a helper, `unaimed⁻¹ · world` of its node) makes of the full pose.
pub(super) fn partial_local(
    scene: &Scene,
    pose: &mut PartialPose,
    helpers: &[Helper],
    k: usize,
) -> DMat4 {
    use crate::scene::InheritType;
    let n = scene.nodes.len();
    if k >= n {
        let h = &helpers[k - n];
        return pose.unaimed_world(h.node).inverse() * pose.world(h.node) * h.turn;
    }
    match scene.nodes[k].parent {
        Some(p) if scene.nodes[k].inherit != InheritType::RSrs => {
            pose.unaimed_world(p).inverse() * pose.unaimed_world(k)
        }
        _ => pose.local(k),
    }
}

/// The samples at `frames` of a node whose glTF TRS is its own ([`own_trs_nodes`]), from its
/// own `channels` alone (what [`Scene::evaluate`] makes of them: the pose's local matrix of
/// such a node is `T·R·S` of its parts); a part that is not finite comes from the decomposed
/// matrix, as [`anim::node_parts`] says. A node without channels holds one value: when it equals
/// `rest` (as f32, what is written) no samples are made at all, since nothing is written for
/// a part that does not move.
#[allow(clippy::too_many_arguments)]
pub(super) fn node_samples(
    scene: &Scene,
    k: usize,
    channels: &[&ChannelTarget],
    frames: &[f64],
    rest: (DVec3, DQuat, DVec3),
    tr: &mut Vec<DVec3>,
    ro: &mut Vec<DQuat>,
    sc: &mut Vec<DVec3>,
) {
    // What `anim::node_parts` does, with each channel prepared once for all frames.
    let samplers: Vec<_> = channels.iter().map(|c| c.sampler()).collect();
    let at = |f: f64| own_parts(scene, k, &samplers, f);
    if channels.is_empty() {
        if let Some(&f) = frames.first() {
            hold_sample(tr, ro, sc, at(f), rest, frames.len());
        }
        return;
    }
    tr.reserve(frames.len());
    ro.reserve(frames.len());
    sc.reserve(frames.len());
    for &f in frames {
        push_sample(tr, ro, sc, at(f));
    }
}

/// Node `k`'s glTF translation, rotation and scale at frame `f` from its own channels'
/// `samplers` (a node whose glTF TRS is its own, [`own_trs_nodes`]): what
/// [`anim::node_parts`] makes of them; a part that is not finite comes from the decomposed
/// matrix.
pub(super) fn own_parts(
    scene: &Scene,
    k: usize,
    samplers: &[ChannelSampler],
    f: f64,
) -> (DVec3, DQuat, DVec3) {
    let mut p = scene.nodes[k].transform;
    for c in samplers {
        c.apply_to_transform(&mut p, f);
    }
    let r = p.rotation.normalize();
    if p.translation.is_finite() && r.is_finite() && p.scale.is_finite() {
        (p.translation, r, p.scale)
    } else {
        decompose(p.matrix())
    }
}
