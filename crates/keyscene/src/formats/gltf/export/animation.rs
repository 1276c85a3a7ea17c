//! Animations: one glTF animation per scene animation, its channels written from the source
//! keys where glTF holds them exactly ([`super::keyed`]) and resampled as LINEAR channels on
//! one shared grid otherwise ([`super::sampling`]), by the rules of [`crate::anim::keep`]
//! (see the module docs of [`crate::formats::gltf`], **Animation**).

use glam::{DQuat, DVec3};
use gltf_json as json;
use json::animation::{Interpolation, Property};

use super::channels::{
    settle_still, thin_rotation, thin_step, thin_vec3, Channel, Pending, Reduced, THIN_SHARE,
};
use super::keyed::{keyed_rotation, keyed_vec3, Keyed};
use super::nodes::{decompose, gltf_local, own_trs_nodes, quat_f32, unaimed_world, Rest, Written};
use super::sampling::{
    hold_sample, node_samples, own_parts, partial_local, push_sample, varying_targets,
};
use super::{refine, Helper, Out};
use crate::anim::{
    self, keep, resample, Animation, ChannelSampler, ChannelTarget, PartialPose, Time, THREE_DS_FPS,
};
use crate::formats::gltf::{deform, warning, WriteOptions};
use crate::scene::{Scene, Transform};

/// What the animation writer needs from the node pass.
struct AnimContext<'a> {
    /// glTF index of scene node 0 (1 with the axis root).
    base: usize,
    rest: &'a Rest,
    helpers: &'a [Helper],
    /// (scene node, scene mesh) of every node showing a mesh with morph targets.
    morph_nodes: &'a [(usize, usize)],
    /// [`WriteOptions::cubic_spline`].
    cubic_spline: bool,
    /// [`WriteOptions::tolerance`]: the error bound relative to the scene size.
    tolerance: f64,
}

/// One animation's sample frames.
struct Timeline {
    /// The animation's frames per second (30, 3D Studio's, when it has none that is usable).
    fps: f64,
    /// First and last written frame ([`keep::written_range`]).
    range: (f64, f64),
    /// The frame the sampling grid counts from (the animation's first frame).
    anchor: f64,
    /// The grid's step in frames (½, or `fps / resample_fps`).
    step: f64,
    /// Whether a resampling rate was asked for: then the grid's samples are written as they
    /// are (the rate asked for), not reduced.
    every_sample: bool,
    /// The error bound relative to the scene size ([`WriteOptions::tolerance`]).
    tolerance: f64,
    /// Every channel's key frames (the grid samples them too).
    keys: Vec<Vec<f64>>,
    /// The shared grid, made on first use ([`Timeline::frames`]): a scene whose every target
    /// is written from its keys or resampled adaptively never needs it, and over a long range
    /// (keys at frames ±5,000,000) building it was nearly all of such a conversion.
    grid: std::cell::OnceCell<(Vec<f64>, Vec<f32>)>,
}

impl Timeline {
    /// The grid's sample frames ([`keep::sample_frames`]), those that are distinct times in
    /// `f32`.
    fn frames(&self) -> &[f64] {
        &self.grid().0
    }

    /// The grid's times in seconds: the shared input of the resampled channels.
    fn times(&self) -> &[f32] {
        &self.grid().1
    }

    fn grid(&self) -> &(Vec<f64>, Vec<f32>) {
        self.grid.get_or_init(|| {
            let all = keep::sample_frames(self.range, self.anchor, self.step, &self.keys);
            let mut times: Vec<f32> = Vec::with_capacity(all.len());
            let mut frames = Vec::with_capacity(all.len());
            for f in all {
                let t = (f / self.fps) as f32;
                if times.last().is_none_or(|&l| t > l) {
                    times.push(t);
                    frames.push(f);
                }
            }
            (frames, times)
        })
    }
}

/// Per animation target (scene nodes, then aim helpers): its glTF translation, rotation and
/// scale at every sample frame, or none when a part does not move; per morph node its glTF
/// target weights, sample after sample.
struct Samples {
    /// Whether each target may move in the animation (those that do not are held samples).
    varies: Vec<bool>,
    tr: Vec<Vec<DVec3>>,
    ro: Vec<Vec<DQuat>>,
    sc: Vec<Vec<DVec3>>,
    mw: Vec<Vec<f32>>,
}

impl Out {
    /// Writes every animation `opts` asks for (all, or [`WriteOptions::only_animation`]):
    /// each one's channels made ([`Self::animation`]), then the still channels settled across
    /// them ([`settle_still`]), then written, one buffer view per animation.
    pub(super) fn animations(
        &mut self,
        scene: &Scene,
        opts: &WriteOptions,
        base: usize,
        rest: &Rest,
        written: &Written,
    ) {
        let morph_nodes: Vec<(usize, usize)> = written
            .mesh_nodes
            .iter()
            .filter_map(|&(i, _)| scene.nodes[i].mesh.map(|m| (i, m)))
            .filter(|&(_, m)| !scene.meshes[m].morph_targets.is_empty())
            .collect();
        let ctx = AnimContext {
            base,
            rest,
            helpers: &written.helpers,
            morph_nodes: &morph_nodes,
            cubic_spline: opts.cubic_spline,
            tolerance: opts.tolerance,
        };
        let mut pending = Vec::new();
        for a in 0..scene.animations.len() {
            if opts.only_animation.is_none_or(|only| only == a) {
                pending.push(self.animation(scene, a, &ctx, opts.resample_fps));
            }
        }
        settle_still(&mut pending);
        let node_index = |k: usize| {
            if k < scene.nodes.len() {
                json::Index::new((ctx.base + k) as u32)
            } else {
                ctx.helpers[k - scene.nodes.len()].index
            }
        };
        for p in pending {
            let anim = &scene.animations[p.a];
            let name =
                if anim.name.is_empty() { format!("animation {}", p.a) } else { anim.name.clone() };
            let before = self.root.animations.len();
            self.write_animation(name, &p.channels, node_index);
            let written = (self.root.animations.len() > before).then_some(before);
            self.visibility_channels(scene, p.a, written, base, rest);
        }
    }

    /// The channels of animation `a`: from the source keys where glTF holds them exactly,
    /// else resampled LINEAR channels; everything resampled with `resample_fps` (see the
    /// module docs). Each channel's keys are reduced to those its interpolation needs
    /// ([`super::channels`]).
    fn animation(
        &mut self,
        scene: &Scene,
        a: usize,
        ctx: &AnimContext,
        resample_fps: Option<f64>,
    ) -> Pending {
        let anim = &scene.animations[a];
        let place = format!("animation {a} \"{}\"", anim.name);
        self.unsupported_channels(scene, a, &place);
        let line = timeline(anim, resample_fps, ctx.tolerance);
        let rests: Vec<(DVec3, DQuat, DVec3)> = ctx
            .rest
            .trs
            .iter()
            .copied()
            .chain(ctx.helpers.iter().map(|h| {
                decompose(ctx.rest.unaimed[h.node].inverse() * ctx.rest.pose.world[h.node] * h.turn)
            }))
            .collect();
        let direct = own_trs_nodes(scene);
        let mut s = pose_samples(scene, a, ctx, &direct, &rests, &line);
        let node_channels = anim::channels_by_node(scene, Some(a));
        // Without a resampling rate asked for, a node whose glTF TRS is its own is written
        // from its keys where glTF holds them and resampled adaptively per channel where not
        // ([`Self::own_outputs`]); the other targets take the shared grid.
        let adaptive = resample_fps.is_none();
        let size = resample::scene_size(scene, &ctx.rest.pose.world);
        let mut outputs: Vec<Channel> = Vec::new();
        let mut capped = 0usize;
        let mut refine_pose: Option<PartialPose> = None;
        for k in 0..rests.len() {
            let own = k < direct.len() && direct[k];
            // Aim helpers (past the scene nodes) have no channels of their own.
            let channels = node_channels.get(k).map_or(&[][..], Vec::as_slice);
            let tsize = size / parent_scale(scene, ctx, k);
            let node = OwnNode { k, rest: rests[k], channels, size, tsize };
            if own && adaptive {
                capped += own_outputs(scene, &node, &line, ctx.cubic_spline, &mut outputs);
                continue;
            }
            if own {
                // Resampling at the asked rate: the node's own channels on the grid.
                let (mut tr, mut ro, mut sc) = (Vec::new(), Vec::new(), Vec::new());
                let (frames, channels) = (line.frames(), &node_channels[k]);
                node_samples(scene, k, channels, frames, rests[k], &mut tr, &mut ro, &mut sc);
                grid_outputs(&node, &line, (frames, (tr, ro, sc)), &mut outputs);
            } else {
                let parts = (
                    std::mem::take(&mut s.tr[k]),
                    std::mem::take(&mut s.ro[k]),
                    std::mem::take(&mut s.sc[k]),
                );
                if adaptive && s.varies[k] && parts.0.len() == line.frames().len() {
                    // Refined between the grid's samples (`refine`).
                    let pose = refine_pose.get_or_insert_with(|| PartialPose::new(scene, Some(a)));
                    let cuts = refine::turn_cuts(scene, ctx.helpers, &node_channels, k, line.range);
                    let grid = (line.frames(), parts);
                    let sizes = (size, tsize, line.tolerance);
                    let (frames, parts, c) =
                        refine::refine(scene, ctx.helpers, pose, k, grid, cuts, sizes);
                    capped += usize::from(c);
                    grid_outputs(&node, &line, (&frames, parts), &mut outputs);
                } else {
                    grid_outputs(&node, &line, (line.frames(), parts), &mut outputs);
                }
            }
        }
        let refining = adaptive.then_some((a, &mut refine_pose, size));
        capped += morph_outputs(scene, ctx, &s.mw, &line, refining, &mut outputs);
        if capped > 0 {
            let what = format!(
                "{capped} resampled channels passed the budget of {} samples each: they are \
                 resampled within the budget, not within the tolerance everywhere",
                resample::ADAPTIVE_BUDGET
            );
            self.warnings.push(warning(&place, what));
        }
        let (start, end) = (line.range.0 / line.fps, line.range.1 / line.fps);
        Pending { a, channels: outputs, start: start as f32, end: end as f32 }
    }

    /// Warns about animated values glTF (core) cannot carry.
    fn unsupported_channels(&mut self, scene: &Scene, a: usize, place: &str) {
        let mut seen: Vec<&'static str> = Vec::new();
        for ch in &scene.animations[a].channels {
            let what = match &ch.target {
                // Hide tracks and FBX `Visibility`: KHR_animation_pointer channels
                // (`visibility.rs`).
                ChannelTarget::Hidden(_) => continue,
                _ if ch.target.property_name() == Some("Visibility") => continue,
                ChannelTarget::Morph(t)
                    if t.keys.iter().any(|k| Some(k.value) != scene.nodes[ch.node].mesh) =>
                {
                    "morph tracks (mesh switches) are not animated: nodes show their rest mesh"
                }
                ChannelTarget::Fov(t) if t.is_animated() => "camera FOV tracks are not animated",
                // Morph weights are written; animated pivots are baked into the resampled
                // node's transform.
                ChannelTarget::Property { .. } | ChannelTarget::Layered(_)
                    if ch.target.property_name().is_some_and(|name| {
                        crate::anim::curve::morph_target_of(name).is_some()
                            || ch.target.drives_pivots()
                    }) =>
                {
                    continue
                }
                ChannelTarget::Property { .. } | ChannelTarget::Layered(_)
                    if ch.target.property_name().is_some() && ch.target.key_count() > 1 =>
                {
                    "property tracks (FBX Intensity …) other than morph weights and \
                     Visibility are not animated"
                }
                ChannelTarget::Roll(_) => continue,
                ChannelTarget::Color(_) | ChannelTarget::Hotspot(_) | ChannelTarget::Falloff(_)
                    if ch.target.key_count() > 1 =>
                {
                    "light colour/cone tracks are not animated"
                }
                _ => continue,
            };
            if !seen.contains(&what) {
                seen.push(what);
                self.warnings.push(warning(place, what));
            }
        }
    }
}

/// The scale of the world matrix at rest of animation target `k`'s glTF parent (the largest
/// length of its axes; 1 for a root or a matrix that is not finite): world length per unit of
/// the target's translation. An aim helper's parent is its node.
fn parent_scale(scene: &Scene, ctx: &AnimContext, k: usize) -> f64 {
    let n = scene.nodes.len();
    let parent = if k < n { scene.nodes[k].parent } else { Some(ctx.helpers[k - n].node) };
    let Some(m) = parent.and_then(|p| ctx.rest.unaimed.get(p)) else { return 1.0 };
    let s = m
        .x_axis
        .truncate()
        .length()
        .max(m.y_axis.truncate().length())
        .max(m.z_axis.truncate().length());
    if s.is_finite() && s > 0.0 {
        s
    } else {
        1.0
    }
}

/// The thinning bound of [`super::channels`] at the scene size `size` and the relative
/// tolerance `tolerance` ([`WriteOptions::tolerance`]).
fn thin_eps(size: f64, tolerance: f64) -> f64 {
    THIN_SHARE * tolerance * size
}

/// The channels of target `node` whose part moves, from its samples at `frames` (the shared
/// grid's, or those [`refine::refine`] made of them; translations, rotations, scales: one per
/// frame, or none when the part does not move), each reduced ([`thin_vec3`], [`thin_rotation`]) unless a resampling rate
/// was asked for.
#[allow(clippy::type_complexity)]
fn grid_outputs(
    node: &OwnNode,
    line: &Timeline,
    (frames, (tr, ro, sc)): (&[f64], (Vec<DVec3>, Vec<DQuat>, Vec<DVec3>)),
    outputs: &mut Vec<Channel>,
) {
    let (k, (rt, rr, rs)) = (node.k, node.rest);
    // With a resampling rate asked for, every sample is kept: thinning to 0 below.
    let eps = if line.every_sample { -1.0 } else { thin_eps(node.size, line.tolerance) };
    let bound = (node.size, eps, line.fps);
    let v3 = |v: DVec3| v.as_vec3().to_array();
    if tr.iter().any(|&t| v3(t) != v3(rt)) {
        let eps = if line.every_sample { -1.0 } else { thin_eps(node.tsize, line.tolerance) };
        let tbound = (node.tsize, eps, line.fps);
        let r = thin_vec3((frames[..tr.len()].to_vec(), tr), rt, false, tbound);
        outputs.push(linear(k, Property::Translation, r, v3(rt)));
    }
    if ro.iter().any(|&r| quat_f32(r) != quat_f32(rr) && quat_f32(-r) != quat_f32(rr)) {
        let r = thin_rotation((frames[..ro.len()].to_vec(), ro), rr, bound);
        outputs.push(linear(k, Property::Rotation, r, quat_f32(rr)));
    }
    if sc.iter().any(|&s| v3(s) != v3(rs)) {
        let r = thin_vec3((frames[..sc.len()].to_vec(), sc), rs, true, bound);
        outputs.push(linear(k, Property::Scale, r, v3(rs)));
    }
}

/// A LINEAR channel of reduced samples `r` for target `k`'s `path`, whose rest value is `rest`.
fn linear<const N: usize>(k: usize, path: Property, r: Reduced<N>, rest: [f32; N]) -> Channel {
    Channel {
        k,
        path,
        interpolation: Interpolation::Linear,
        times: r.times,
        values: r.values.concat(),
        width: N,
        rest: rest.to_vec(),
        at_rest: r.at_rest,
    }
}

/// A keyed sampler as a channel: LINEAR keys reduced like resampled ones (the keys are the
/// source curve, so a dropped key is within the bound of it), STEP keys without repeats,
/// CUBICSPLINE keys as they are. `rest` is the part's rest value as written; `size` the scene
/// size, `tolerance` the bound relative to it ([`WriteOptions::tolerance`]).
fn keyed_channel<const N: usize>(
    k: usize,
    path: Property,
    keyed: Keyed<N>,
    rest: [f32; N],
    (size, tolerance): (f64, f64),
) -> Channel {
    let Keyed { interpolation, mut times, mut values } = keyed;
    let at_rest = |values: &[[f32; N]]| {
        interpolation != Interpolation::CubicSpline
            && values.iter().all(|v| *v == rest || (N == 4 && v.map(|c| -c) == rest))
    };
    if interpolation == Interpolation::Step {
        thin_step(&mut times, &mut values);
    } else if interpolation == Interpolation::Linear && times.len() > 1 {
        let frames: Vec<f64> = times.iter().map(|&t| f64::from(t)).collect();
        // Times are seconds here: the fps that turns them back into seconds is 1.
        let bound = (size, thin_eps(size, tolerance), 1.0);
        let r = if N == 4 {
            let q: Vec<DQuat> =
                values.iter().map(|v| DQuat::from_slice(&v.map(f64::from))).collect();
            let rq = DQuat::from_slice(&rest.map(f64::from));
            let r = thin_rotation((frames, q), rq, bound);
            (r.times, r.values.concat(), r.at_rest)
        } else {
            let v: Vec<DVec3> =
                values.iter().map(|v| DVec3::from_slice(&v.map(f64::from))).collect();
            let rv = DVec3::from_slice(&rest.map(f64::from));
            let r = thin_vec3((frames, v), rv, path == Property::Scale, bound);
            (r.times, r.values.concat(), r.at_rest)
        };
        let at_rest = r.2;
        return Channel {
            k,
            path,
            interpolation,
            times: r.0,
            values: r.1,
            width: N,
            rest: rest.to_vec(),
            at_rest,
        };
    }
    let still = at_rest(&values);
    if still {
        times.truncate(1);
        values = vec![rest];
    }
    Channel {
        k,
        path,
        interpolation,
        times,
        values: values.concat(),
        width: N,
        rest: rest.to_vec(),
        at_rest: still,
    }
}

/// The channels of a node whose glTF TRS is its own, for each part that moves (as written,
/// `f32`): from the source keys where glTF holds them exactly ([`keyed_vec3`],
/// [`keyed_rotation`]; CUBICSPLINE only with `cubic_spline`), else resampled adaptively
/// ([`adaptive_channel`]). Returns how many of its channels passed
/// [`resample::ADAPTIVE_BUDGET`].
fn own_outputs(
    scene: &Scene,
    node: &OwnNode,
    line: &Timeline,
    cubic_spline: bool,
    outputs: &mut Vec<Channel>,
) -> usize {
    let (k, channels, rest) = (node.k, node.channels, node.rest);
    let transform = scene.nodes.get(k).map_or(Transform::IDENTITY, |n| n.transform);
    let v3 = |v: DVec3| v.as_vec3().to_array();
    let samplers: Vec<ChannelSampler> = channels.iter().map(|c| c.sampler()).collect();
    let cubic_ok = |i: Interpolation| cubic_spline || i != Interpolation::CubicSpline;
    let mut capped = 0;
    for (part, path) in [(0, Property::Translation), (1, Property::Rotation), (2, Property::Scale)]
    {
        let written = match part {
            0 | 2 => {
                let (r, p) = match part {
                    0 => (rest.0, transform.translation),
                    _ => (rest.2, transform.scale),
                };
                let size = if part == 0 { node.tsize } else { node.size };
                keyed_vec3(channels, part == 2, p, line.range, line.fps)
                    .filter(|keys| cubic_ok(keys.interpolation))
                    .map(|keys| {
                        keys.moves(|v| *v == v3(r))
                            .then(|| keyed_channel(k, path, keys, v3(r), (size, line.tolerance)))
                    })
            }
            _ => keyed_rotation(channels, line.range, line.fps).map(|keys| {
                let (r, n) = (quat_f32(rest.1), quat_f32(-rest.1));
                keys.moves(|q| *q == r || *q == n)
                    .then(|| keyed_channel(k, path, keys, r, (node.size, line.tolerance)))
            }),
        };
        let written = match written {
            Some(w) => w,
            None => {
                let seeds = part_seeds(channels, part, line);
                // Only the channels of this part: the others do not change it, and
                // evaluating them at every sample tripled a rotation's cost (Blender's
                // baked T, R and S curves of anim_heavy, docs/benchmarks.md stop 27).
                let own: Vec<ChannelSampler> = channels
                    .iter()
                    .zip(&samplers)
                    .filter(|(c, _)| drives(c, part))
                    .map(|(_, s)| s.clone())
                    .collect();
                let c = adaptive_channel(scene, node, part, &own, &seeds, line);
                capped += usize::from(c.as_ref().is_some_and(|c| c.1));
                c.map(|c| c.0)
            }
        };
        outputs.extend(written);
    }
    capped
}

/// Part `part` (0 translation, 1 rotation, 2 scale) of an own-TRS node sampled adaptively
/// from its own channels' `samplers` ([`crate::anim::resample`]): from `seeds` (every frame,
/// key and jump lead; a rotation's with its key segments cut by their turn,
/// [`resample::turn_seeds`]), split where the LINEAR chord (slerp for the rotation) strays more
/// than `(1 − THIN_SHARE) ×` the tolerance ([`WriteOptions::tolerance`]) × the scene size
/// ([`resample::adaptive`]; a translation's against the larger of the scene size and the
/// farthest coordinate it reaches at its seeds), then reduced to the samples the chord needs
/// within the rest of the tolerance ([`thin_vec3`], [`thin_rotation`]). A LINEAR channel,
/// returned with whether the budget capped it; `None` when the part does not move (every
/// sample equals the rest as written).
fn adaptive_channel(
    scene: &Scene,
    node: &OwnNode,
    part: usize,
    samplers: &[ChannelSampler],
    seeds: &[f64],
    line: &Timeline,
) -> Option<(Channel, bool)> {
    let (k, size, rest) = (node.k, node.size, node.rest);
    let tol = (1.0 - THIN_SHARE) * line.tolerance * size;
    let bound = (size, thin_eps(size, line.tolerance), line.fps);
    let budget = resample::ADAPTIVE_BUDGET;
    let at = |f: f64| own_parts(scene, k, samplers, f);
    let v3 = |v: DVec3| v.as_vec3().to_array();
    if part == 1 {
        // Key segments cut by their turn (`resample::turn_seeds`), so that whole turns
        // between two seeds cannot hide from the error test.
        let mut cut: Vec<f64> = seeds.to_vec();
        for c in node.channels {
            if let ChannelTarget::Rotation(r) = c {
                cut.extend(resample::turn_seeds(r, line.range, budget / 2));
            }
        }
        cut.sort_by(f64::total_cmp);
        cut.dedup_by(|b, a| *b - *a < resample::MERGE);
        let curve = resample::Rotations { size };
        let mut s = resample::adaptive(&cut, |f| at(f).1, &curve, tol, budget);
        let (r, n) = (quat_f32(rest.1), quat_f32(-rest.1));
        if s.values.iter().all(|&q| quat_f32(q) == r || quat_f32(q) == n) {
            return None;
        }
        // Each sample in the hemisphere of the one before (LINEAR slerps the short way).
        resample::same_hemisphere(&mut s.values);
        let red = thin_rotation((s.frames, s.values), rest.1, bound);
        return Some((linear(k, Property::Rotation, red, r), s.capped));
    }
    let s = if part == 0 {
        // A translation's tolerance is relative to the scene (in the translation's units,
        // `tsize`) including where the node goes: the largest coordinate the channel reaches
        // at its seeds.
        let points: Vec<(f64, DVec3)> = seeds.iter().map(|&f| (f, at(f).0)).collect();
        let tsize = node.tsize;
        let reach = points
            .iter()
            .map(|p| p.1.abs().max_element())
            .filter(|r| r.is_finite())
            .fold(tsize, f64::max);
        let tol = (1.0 - THIN_SHARE) * line.tolerance * reach;
        resample::adaptive_from(points, |f| at(f).0, &resample::Positions, tol, budget)
    } else {
        resample::adaptive(seeds, |f| at(f).2, &resample::Scales { size }, tol, budget)
    };
    let r = if part == 0 { rest.0 } else { rest.2 };
    if s.values.iter().all(|&v| v3(v) == v3(r)) {
        return None;
    }
    let path = if part == 0 { Property::Translation } else { Property::Scale };
    let bound = if part == 0 {
        (node.tsize, thin_eps(node.tsize, line.tolerance), line.fps)
    } else {
        bound
    };
    let red = thin_vec3((s.frames, s.values), r, part == 2, bound);
    Some((linear(k, path, red, v3(r)), s.capped))
}

/// The morph weight channels of the morph nodes whose weights differ from their rest weights
/// at some sample (resampled on the shared grid `line`; `mw` per morph node its weights, sample
/// after sample); weights that hold one value are one key.
fn morph_outputs<'s>(
    scene: &'s Scene,
    ctx: &AnimContext,
    mw: &[Vec<f32>],
    line: &Timeline,
    mut refining: Option<(usize, &mut Option<PartialPose<'s>>, f64)>,
    outputs: &mut Vec<Channel>,
) -> usize {
    let mut capped = 0;
    for (k, &(i, m)) in ctx.morph_nodes.iter().enumerate() {
        let rest: Vec<f32> =
            deform::gltf_weights(&scene.meshes[m], &ctx.rest.pose.morph_weights[m])
                .iter()
                .map(|&w| w as f32)
                .collect();
        let n = rest.len().max(1);
        if mw[k].chunks(n).all(|c| c == rest.as_slice()) {
            continue;
        }
        let first = mw[k].get(..n).unwrap_or_default();
        let still = mw[k].chunks(n).all(|c| c == first);
        let (times, values) = if still {
            (line.times()[..1].to_vec(), first.to_vec())
        } else if let Some((a, pose, size)) = refining.as_mut() {
            // Refined between the grid's samples (`refine::refine_weights`).
            let pose = pose.get_or_insert_with(|| PartialPose::new(scene, Some(*a)));
            let mesh = &scene.meshes[m];
            let w = &ctx.rest.pose.world[i];
            let scale = [w.x_axis, w.y_axis, w.z_axis]
                .iter()
                .map(|c| c.truncate().length())
                .filter(|l| l.is_finite())
                .fold(0.0, f64::max);
            let reach = refine::target_reach(mesh, scale);
            let tol = (1.0 - THIN_SHARE) * line.tolerance * *size;
            let mut at = |f: f64| {
                pose.set_frame(f);
                deform::gltf_weights(mesh, &pose.morph_weights(m))
            };
            let (frames, values, c) =
                refine::refine_weights(&mut at, line.frames(), &mw[k], &reach, tol);
            capped += usize::from(c);
            seconds_of(&frames, values, n, line.fps)
        } else {
            (line.times().to_vec(), mw[k].clone())
        };
        outputs.push(Channel {
            k: i,
            path: Property::MorphTargetWeights,
            interpolation: Interpolation::Linear,
            times,
            values,
            width: n,
            rest,
            at_rest: false,
        });
    }
    capped
}

/// Key times in seconds (`frame / fps` as `f32`) of `frames` with their `values` (`n` per
/// frame): of frames that fall on one `f32` time the first is kept, as the grid does.
fn seconds_of(frames: &[f64], values: Vec<f32>, n: usize, fps: f64) -> (Vec<f32>, Vec<f32>) {
    let mut times: Vec<f32> = Vec::with_capacity(frames.len());
    let mut kept = Vec::with_capacity(values.len());
    for (f, v) in frames.iter().zip(values.chunks(n)) {
        let t = (f / fps) as f32;
        if times.last().is_none_or(|&l| t > l) {
            times.push(t);
            kept.extend_from_slice(v);
        }
    }
    (times, kept)
}

/// Whether `channel` drives part `part` (0 translation, 1 rotation, 2 scale) of its node's
/// glTF TRS (`keep::Part::is_driven_by`, or a layered blend of that part).
fn drives(channel: &ChannelTarget, part: usize) -> bool {
    let p = [keep::Part::Translation, keep::Part::Rotation, keep::Part::Scale][part];
    p.is_driven_by(channel)
        || matches!(channel, ChannelTarget::Layered(b) if b.transform_part() == Some(p.index()))
}

/// The seeds of part `part` (0 translation, 1 rotation, 2 scale) of an own-TRS node with
/// these `channels`, over the written range: its ends, every key of the channels driving the
/// part and the instant before every jump ([`resample::seed_frames`]), and every frame where
/// the part can bend ([`resample::bending_intervals`]; a coarser even grid past a quarter of
/// the budget), so that the written curve passes through the source at every frame.
fn part_seeds(channels: &[&ChannelTarget], part: usize, line: &Timeline) -> Vec<f64> {
    let driving: Vec<&ChannelTarget> =
        channels.iter().filter(|c| drives(c, part)).copied().collect();
    let keys: Vec<Vec<f64>> = driving.iter().flat_map(|c| keep::key_frames(c)).collect();
    let mut seeds = resample::seed_frames(line.range, keys.iter().map(Vec::as_slice));
    let (lo, hi) = line.range;
    let bends: Vec<(f64, f64)> = driving
        .iter()
        .map(|c| resample::bending_intervals(c))
        .collect::<Option<Vec<_>>>()
        .map_or_else(|| vec![(lo, hi)], |each| resample::merge_intervals(each.concat()));
    // Every half frame: the error test looks at the middle of an interval of at most a frame
    // (`resample::SHORT_SPAN`), and a cubic segment that crosses its chord in the middle of a
    // frame (an S-bend) strays from it at the quarters; from half frames the middles are the
    // quarters.
    let step = ((hi - lo) / (resample::ADAPTIVE_BUDGET / 4) as f64).max(1.0) / 2.0;
    let mut grew = false;
    for (a, b) in bends.into_iter().map(|(a, b)| (a.max(lo), b.min(hi))).filter(|(a, b)| a < b) {
        seeds.extend(keep::sample_frames((a, b), line.anchor, step, &keys));
        grew = true;
    }
    if grew {
        seeds.sort_by(f64::total_cmp);
        seeds.dedup_by(|b, a| *b - *a < resample::MERGE);
    }
    seeds
}

/// A target and what its channels are reduced against: its index, rest value and channels
/// (for a node whose glTF TRS is its own, [`own_outputs`]) and the scene size.
struct OwnNode<'c> {
    /// Animation target index (scene nodes, then aim helpers).
    k: usize,
    /// Its glTF translation, rotation and scale at rest.
    rest: (DVec3, DQuat, DVec3),
    /// Its channels in the animation.
    channels: &'c [&'c ChannelTarget],
    /// [`resample::scene_size`] of the rest pose (the tolerance is relative to it).
    size: f64,
    /// The scene size in the units of the target's translation: `size` over the scale of its
    /// parent's world matrix at rest ([`parent_scale`]), since a parent scaled ×100 makes a
    /// local translation error 100 times larger in the world.
    tsize: f64,
}

/// The timeline of `anim`: the written range ([`keep::written_range`]) and the grid that
/// samples it at every frame, or every `fps / resample_fps` frames, with every key and the
/// instant before every jump ([`keep::sample_frames`]; of frames that fall on one `f32` time
/// the first is kept), made when first asked for.
fn timeline(anim: &Animation, resample_fps: Option<f64>, tolerance: f64) -> Timeline {
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { THREE_DS_FPS };
    // Without a rate asked for, the grid samples every half frame: its chords are then tested
    // by the thinning at frames and half frames, and a player looking at any frame or quarter
    // frame sees the source (the keys left are those the curve needs).
    let step = resample_fps.filter(|r| r.is_finite() && *r > 0.0).map(|r| fps / r).unwrap_or(0.5);
    let keys: Vec<Vec<f64>> =
        anim.channels.iter().flat_map(|c| keep::key_frames(&c.target)).collect();
    let (start, end) = keep::written_range(anim.frame_range, &keys);
    // The sampling grid runs from the animation's first frame (keys before frame 0 keep
    // their phase), from `start` on.
    let anchor = if anim.frame_range.0.is_finite() { anim.frame_range.0.min(start) } else { start };
    let every_sample = resample_fps.is_some();
    let grid = std::cell::OnceCell::new();
    Timeline { fps, range: (start, end), anchor, step, every_sample, tolerance, keys, grid }
}

/// The samples that need the evaluated scene: of the targets whose glTF TRS is not their own
/// (`direct`: [`own_trs_nodes`]; every aim helper) and of the morph weights. Samples are taken
/// per target, not per scene: a node whose glTF TRS is its own is sampled from its own
/// channels alone ([`node_samples`], by the caller). A pose target whose glTF local cannot
/// change over the animation (no channel on it, its ancestors or, for a helper, its aim
/// target: [`varying_targets`]) holds its value at the first sample; so does a morph node
/// whose mesh no channel drives. Per frame only the moving targets and what they depend on are
/// posed ([`PartialPose`]). Samples are taken at the frames of `line`'s grid, which is only
/// made when there is a pose target or a morph node.
fn pose_samples(
    scene: &Scene,
    a: usize,
    ctx: &AnimContext,
    direct: &[bool],
    rests: &[(DVec3, DQuat, DVec3)],
    line: &Timeline,
) -> Samples {
    let (helpers, morph_nodes) = (ctx.helpers, ctx.morph_nodes);
    let targets = rests.len();
    let (varies, morph_varies) = varying_targets(scene, a, helpers, morph_nodes);
    let pose_targets: Vec<usize> =
        (0..targets).filter(|&k| k >= direct.len() || !direct[k]).collect();
    let mut s = Samples {
        varies: varies.clone(),
        tr: vec![Vec::new(); targets],
        ro: vec![Vec::new(); targets],
        sc: vec![Vec::new(); targets],
        mw: vec![Vec::new(); morph_nodes.len()],
    };
    let weights = |w: Vec<f64>| w.into_iter().map(|w| if w.is_finite() { w as f32 } else { 0.0 });
    if pose_targets.is_empty() && morph_nodes.is_empty() {
        return s;
    }
    let frames = line.frames();
    if let Some(&first) = frames.first() {
        // The rest pose is animation 0 at its first frame: when that is this pose, it is
        // taken as it is (a full evaluation was a fifth of converting a 10,000-node chain).
        let evaluated;
        let (pose, unaimed) = if a == 0 && first.to_bits() == ctx.rest.frame.to_bits() {
            (&ctx.rest.pose, &ctx.rest.unaimed)
        } else {
            let pose = scene.evaluate(Some(a), Time::Frame(first));
            let unaimed = unaimed_world(scene, &pose);
            evaluated = (pose, unaimed);
            (&evaluated.0, &evaluated.1)
        };
        for &k in pose_targets.iter().filter(|&&k| !varies[k]) {
            let local = if k < scene.nodes.len() {
                gltf_local(scene, pose, unaimed, k)
            } else {
                let h = &helpers[k - scene.nodes.len()];
                unaimed[h.node].inverse() * pose.world[h.node] * h.turn
            };
            let (tr, ro, sc) = (&mut s.tr[k], &mut s.ro[k], &mut s.sc[k]);
            hold_sample(tr, ro, sc, decompose(local), rests[k], frames.len());
        }
        for (k, &(_, m)) in morph_nodes.iter().enumerate().filter(|&(k, _)| !morph_varies[k]) {
            let w: Vec<f32> =
                weights(deform::gltf_weights(&scene.meshes[m], &pose.morph_weights[m])).collect();
            s.mw[k] = w.repeat(frames.len());
        }
    }
    let moving: Vec<usize> = pose_targets.iter().copied().filter(|&k| varies[k]).collect();
    if !moving.is_empty() || morph_varies.iter().any(|&v| v) {
        for &k in &moving {
            s.tr[k].reserve(frames.len());
            s.ro[k].reserve(frames.len());
            s.sc[k].reserve(frames.len());
        }
        let mut pose = PartialPose::new(scene, Some(a));
        for &f in frames {
            pose.set_frame(f);
            for (k, &(_, m)) in morph_nodes.iter().enumerate().filter(|&(k, _)| morph_varies[k]) {
                let w = deform::gltf_weights(&scene.meshes[m], &pose.morph_weights(m));
                s.mw[k].extend(weights(w));
            }
            for &k in &moving {
                let value = decompose(partial_local(scene, &mut pose, helpers, k));
                push_sample(&mut s.tr[k], &mut s.ro[k], &mut s.sc[k], value);
            }
        }
    }
    s
}
