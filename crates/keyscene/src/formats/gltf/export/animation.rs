//! Animations: one glTF animation per scene animation, its channels written from the source
//! keys where glTF holds them exactly ([`super::keyed`]) and resampled as LINEAR channels on
//! one shared grid otherwise ([`super::sampling`]), by the rules of [`crate::anim::keep`]
//! (see the module docs of [`crate::formats::gltf`], **Animation**).

use std::collections::HashMap;

use glam::{DQuat, DVec3};
use gltf_json as json;
use json::animation::{Interpolation, Property};
use json::validation::Checked::Valid;

use super::keyed::{keyed_rotation, keyed_vec3, Keyed};
use super::nodes::{decompose, gltf_local, own_trs_nodes, quat_f32, unaimed_world, Rest, Written};
use super::sampling::{
    hold_sample, node_samples, partial_local, push_sample, target_dependencies, varying_targets,
    TargetSource,
};
use super::{Accessor, Helper, Out};
use crate::anim::{self, keep, resample, Animation, ChannelTarget, PartialPose, Time, THREE_DS_FPS};
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
}

/// One animation's sample frames.
struct Timeline {
    /// The animation's frames per second (30, 3D Studio's, when it has none that is usable).
    fps: f64,
    /// First and last written frame ([`keep::written_range`]).
    range: (f64, f64),
    /// The sample frames ([`keep::sample_frames`]), those that are distinct times in `f32`.
    frames: Vec<f64>,
    /// Their times in seconds: the shared input of the resampled channels.
    times: Vec<f32>,
}

/// Per animation target (scene nodes, then aim helpers): its glTF translation, rotation and
/// scale at every sample frame, or none when a part does not move; per morph node its glTF
/// target weights, sample after sample.
struct Samples {
    tr: Vec<Vec<DVec3>>,
    ro: Vec<Vec<DQuat>>,
    sc: Vec<Vec<DVec3>>,
    mw: Vec<Vec<f32>>,
}

/// One channel to write: target, path, sampler input (`None`: the shared resampling grid),
/// interpolation, output.
type Output = (usize, Property, Option<Accessor>, Interpolation, Accessor);

/// Keyed sampler inputs of one animation by their times' bits, shared by channels whose keys
/// fall on the same times.
type KeyedInputs = HashMap<Vec<u32>, Accessor>;

impl Out {
    /// Writes every animation `opts` asks for (all, or [`WriteOptions::only_animation`]).
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
        let ctx = AnimContext { base, rest, helpers: &written.helpers, morph_nodes: &morph_nodes };
        for a in 0..scene.animations.len() {
            if opts.only_animation.is_none_or(|only| only == a) {
                self.animation(scene, a, &ctx, opts.resample_fps);
            }
        }
    }

    /// Writes animation `a`: channels from the source keys where glTF holds them exactly,
    /// else resampled LINEAR channels; everything resampled with `resample_fps` (see the
    /// module docs).
    fn animation(&mut self, scene: &Scene, a: usize, ctx: &AnimContext, resample_fps: Option<f64>) {
        let anim = &scene.animations[a];
        let place = format!("animation {a} \"{}\"", anim.name);
        self.unsupported_channels(scene, a, &place);
        let line = timeline(anim, resample_fps);
        let rests: Vec<(DVec3, DQuat, DVec3)> = ctx
            .rest
            .trs
            .iter()
            .copied()
            .chain(ctx.helpers.iter().map(|h| {
                decompose(ctx.rest.unaimed[h.node].inverse() * ctx.rest.pose.world[h.node])
            }))
            .collect();
        let direct = own_trs_nodes(scene);
        // Without a resampling rate asked for, what is resampled is sampled adaptively per
        // channel ([`resample`]); the shared grid then carries the morph weights only.
        let adaptive = resample_fps.is_none();
        let mut s = pose_samples(scene, a, ctx, &direct, &rests, &line.frames, !adaptive);
        let node_channels = anim::channels_by_node(scene, Some(a));
        let node_keys: Vec<Vec<Vec<f64>>> = node_channels
            .iter()
            .map(|cs| cs.iter().flat_map(|c| keep::key_frames(c)).collect())
            .collect();
        let size = resample::scene_size(scene, &ctx.rest.pose.world);
        let mut pose = PartialPose::new(scene, Some(a));
        let mut outputs: Vec<Output> = Vec::new();
        let mut keyed_inputs = KeyedInputs::new();
        for k in 0..rests.len() {
            let own = k < direct.len() && direct[k];
            if own {
                let (tr, ro, sc) = (&mut s.tr[k], &mut s.ro[k], &mut s.sc[k]);
                node_samples(scene, k, &node_channels[k], &line.frames, rests[k], tr, ro, sc);
            }
            // Source keys only for nodes whose glTF TRS is their own, unless resampling was
            // asked for.
            let keyed = adaptive && own;
            let channels: &[&ChannelTarget] = if keyed { &node_channels[k] } else { &[] };
            let target = Target { k, rest: rests[k], keyed, channels };
            let mut source = if own {
                TargetSource::Own(node_channels[k].iter().map(|c| c.sampler()).collect())
            } else {
                TargetSource::Pose(&mut pose)
            };
            let adaptive = adaptive.then(|| {
                let deps = target_dependencies(scene, ctx.helpers, k);
                let tracks = deps.iter().flat_map(|&i| node_keys[i].iter().map(Vec::as_slice));
                Adaptive {
                    seeds: resample::seed_frames(line.range, tracks),
                    size,
                    helpers: ctx.helpers,
                    source: &mut source,
                    grid: own,
                    capped: false,
                }
            });
            let mut adaptive = adaptive;
            self.target_outputs(
                scene,
                &target,
                &line,
                &s,
                adaptive.as_mut(),
                &mut keyed_inputs,
                &mut outputs,
            );
            if adaptive.is_some_and(|a| a.capped) {
                let what = format!(
                    "resampled channels of node {k} passed the budget of {} samples each: \
                     resampled within the budget, not within the tolerance everywhere",
                    resample::ADAPTIVE_BUDGET
                );
                self.warnings.push(warning(&place, what));
            }
        }
        self.morph_outputs(scene, ctx, &s.mw, &mut outputs);
        self.push_animation(scene, a, ctx, outputs, &line.times);
    }

    /// The channels of target `t` whose part moves (as written, `f32`): from the source keys
    /// where they convert ([`keyed_vec3`], [`keyed_rotation`]), else resampled — adaptively
    /// when `adaptive` is given ([`Self::adaptive_channel`]), else the grid samples. Whether a
    /// part moves is told by the grid samples when there are any (a node whose TRS is its
    /// own), else by the adaptive ones.
    #[allow(clippy::too_many_arguments)]
    fn target_outputs(
        &mut self,
        scene: &Scene,
        t: &Target,
        line: &Timeline,
        s: &Samples,
        mut adaptive: Option<&mut Adaptive>,
        keyed_inputs: &mut KeyedInputs,
        outputs: &mut Vec<Output>,
    ) {
        let k = t.k;
        let (rt, rr, rs) = t.rest;
        let v3 = |v: DVec3| v.as_vec3().to_array();
        let grid = adaptive.as_ref().is_none_or(|a| a.grid);
        let moves_t = !grid || s.tr[k].iter().any(|&t| v3(t) != v3(rt));
        let moves_r = !grid
            || s.ro[k].iter().any(|&r| quat_f32(r) != quat_f32(rr) && quat_f32(-r) != quat_f32(rr));
        let moves_s = !grid || s.sc[k].iter().any(|&s| v3(s) != v3(rs));
        let transform = scene.nodes.get(k).map_or(Transform::IDENTITY, |n| n.transform);
        let resampled = |output| (None, Interpolation::Linear, output);
        let rest = (rt, rr, rs);
        let mut resample = |this: &mut Self, inputs: &mut KeyedInputs, part: usize| match adaptive
            .as_deref_mut()
        {
            Some(a) => this.adaptive_channel(scene, k, part, rest, line, a, inputs),
            None => Some(match part {
                0 | 2 => {
                    let samples = if part == 0 { &s.tr[k] } else { &s.sc[k] };
                    let data: Vec<[f32; 3]> = samples.iter().map(|&v| v3(v)).collect();
                    resampled(this.floats(&data, json::accessor::Type::Vec3, None, false))
                }
                _ => {
                    let data: Vec<[f32; 4]> = s.ro[k].iter().map(|&r| quat_f32(r)).collect();
                    resampled(this.floats(&data, json::accessor::Type::Vec4, None, false))
                }
            }),
        };
        for (part, moves, path) in [
            (0, moves_t, Property::Translation),
            (1, moves_r, Property::Rotation),
            (2, moves_s, Property::Scale),
        ] {
            if !moves {
                continue;
            }
            let keys = t.keyed.then(|| match part {
                0 => keyed_vec3(t.channels, false, transform.translation, line.range, line.fps)
                    .map(|keys| self.keyed(&keys, keyed_inputs)),
                2 => keyed_vec3(t.channels, true, transform.scale, line.range, line.fps)
                    .map(|keys| self.keyed(&keys, keyed_inputs)),
                _ => keyed_rotation(t.channels, line.range, line.fps)
                    .map(|keys| self.keyed(&keys, keyed_inputs)),
            });
            let written = match keys.flatten() {
                Some(w) => Some(w),
                None => resample(self, keyed_inputs, part),
            };
            if let Some((input, interp, output)) = written {
                outputs.push((k, path, input, interp, output));
            }
        }
    }

    /// Part `part` (0 translation, 1 rotation, 2 scale) of target `k` sampled adaptively
    /// ([`resample::adaptive`]: LINEAR, slerp for the rotation, within
    /// [`resample::TOLERANCE`] × the scene size) and written as a LINEAR channel with its own
    /// input (shared with channels sampled at the same times); `None` when the part does not
    /// move (every sample equals `rest` as written) and its samples come from no grid.
    #[allow(clippy::too_many_arguments)]
    fn adaptive_channel(
        &mut self,
        scene: &Scene,
        k: usize,
        part: usize,
        rest: (DVec3, DQuat, DVec3),
        line: &Timeline,
        a: &mut Adaptive,
        inputs: &mut KeyedInputs,
    ) -> Option<(Option<Accessor>, Interpolation, Accessor)> {
        let tol = resample::TOLERANCE * a.size;
        let (size, helpers) = (a.size, a.helpers);
        let source = &mut *a.source;
        let mut at = |f: f64| source.at(scene, helpers, k, f);
        let (frames, data, capped): (Vec<f64>, Floats, bool) = if part == 1 {
            let s = resample::adaptive(
                &a.seeds,
                |f| at(f).1,
                resample::slerp,
                |x, y| resample::rotation_error(x, y, size),
                tol,
                resample::ADAPTIVE_BUDGET,
            );
            let mut prev: Option<DQuat> = None;
            let values = s
                .values
                .iter()
                .map(|&r| {
                    let r = match prev {
                        Some(p) if p.dot(r) < 0.0 => -r,
                        _ => r,
                    };
                    prev = Some(r);
                    r
                })
                .collect();
            (s.frames, Floats::Rotation(values), s.capped)
        } else {
            let pick = move |v: (DVec3, DQuat, DVec3)| if part == 0 { v.0 } else { v.2 };
            let s = if part == 0 {
                let e = resample::vec3_error;
                resample::adaptive(&a.seeds, |f| pick(at(f)), resample::lerp3, e, tol, usize::MAX)
            } else {
                let e = |x, y| resample::scale_error(x, y, size);
                resample::adaptive(&a.seeds, |f| pick(at(f)), resample::lerp3, e, tol, usize::MAX)
            };
            (s.frames, Floats::Vec3(s.values), s.capped)
        };
        a.capped |= capped;
        if !a.grid && !data.moves(rest, part) {
            return None;
        }
        // Of samples that fall on one `f32` time the first is kept.
        let mut times: Vec<f32> = Vec::with_capacity(frames.len());
        let mut keep = Vec::with_capacity(frames.len());
        for &f in &frames {
            let t = (f / line.fps) as f32;
            let new = times.last().is_none_or(|&l| t > l);
            if new {
                times.push(t);
            }
            keep.push(new);
        }
        let bits: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        let input = match inputs.get(&bits) {
            Some(&input) => input,
            None => {
                let data: Vec<[f32; 1]> = times.iter().map(|&t| [t]).collect();
                let input = self.floats(&data, json::accessor::Type::Scalar, None, true);
                inputs.insert(bits, input);
                input
            }
        };
        let output = match data {
            Floats::Vec3(v) => {
                let d: Vec<[f32; 3]> = v
                    .iter()
                    .zip(&keep)
                    .filter(|p| *p.1)
                    .map(|(v, _)| v.as_vec3().to_array())
                    .collect();
                self.floats(&d, json::accessor::Type::Vec3, None, false)
            }
            Floats::Rotation(v) => {
                let d: Vec<[f32; 4]> =
                    v.iter().zip(&keep).filter(|p| *p.1).map(|(&r, _)| quat_f32(r)).collect();
                self.floats(&d, json::accessor::Type::Vec4, None, false)
            }
        };
        Some((Some(input), Interpolation::Linear, output))
    }

    /// The morph weight channels of the morph nodes whose weights differ from their rest
    /// weights at some sample (resampled on the shared grid).
    fn morph_outputs(
        &mut self,
        scene: &Scene,
        ctx: &AnimContext,
        mw: &[Vec<f32>],
        outputs: &mut Vec<Output>,
    ) {
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
            let data: Vec<[f32; 1]> = mw[k].iter().map(|&w| [w]).collect();
            let output = self.floats(&data, json::accessor::Type::Scalar, None, false);
            outputs.push((i, Property::MorphTargetWeights, None, Interpolation::Linear, output));
        }
    }

    /// Pushes animation `a` with one sampler and channel per output (the shared grid's input
    /// `times` written on first use); an animation without channels is left out.
    fn push_animation(
        &mut self,
        scene: &Scene,
        a: usize,
        ctx: &AnimContext,
        outputs: Vec<Output>,
        times: &[f32],
    ) {
        let node_index = |k: usize| {
            if k < scene.nodes.len() {
                json::Index::new((ctx.base + k) as u32)
            } else {
                ctx.helpers[k - scene.nodes.len()].index
            }
        };
        let mut input = None;
        let mut channels = Vec::new();
        let mut samplers: Vec<json::animation::Sampler> = Vec::new();
        for (k, path, own_input, interpolation, output) in outputs {
            let input = match own_input {
                Some(input) => input,
                None => *input.get_or_insert_with(|| {
                    let data: Vec<[f32; 1]> = times.iter().map(|&t| [t]).collect();
                    self.floats(&data, json::accessor::Type::Scalar, None, true)
                }),
            };
            let sampler = json::Index::push(
                &mut samplers,
                json::animation::Sampler {
                    extensions: None,
                    extras: Default::default(),
                    input,
                    interpolation: Valid(interpolation),
                    output,
                },
            );
            channels.push(json::animation::Channel {
                sampler,
                target: json::animation::Target {
                    extensions: None,
                    extras: Default::default(),
                    node: node_index(k),
                    path: Valid(path),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        if channels.is_empty() {
            return;
        }
        let anim = &scene.animations[a];
        self.root.animations.push(json::Animation {
            extensions: None,
            extras: Default::default(),
            channels,
            name: Some(if anim.name.is_empty() {
                format!("animation {a}")
            } else {
                anim.name.clone()
            }),
            samplers,
        });
    }

    /// Writes a keyed sampler's output accessor, and its input accessor unless `inputs` (the
    /// animation's keyed inputs by their times' bits) has one with the same times; returns
    /// (input, interpolation, output).
    fn keyed<const N: usize>(
        &mut self,
        keyed: &Keyed<N>,
        inputs: &mut KeyedInputs,
    ) -> (Option<Accessor>, Interpolation, Accessor) {
        let bits: Vec<u32> = keyed.times.iter().map(|t| t.to_bits()).collect();
        let input = match inputs.get(&bits) {
            Some(&input) => input,
            None => {
                let times: Vec<[f32; 1]> = keyed.times.iter().map(|&t| [t]).collect();
                let input = self.floats(&times, json::accessor::Type::Scalar, None, true);
                inputs.insert(bits, input);
                input
            }
        };
        let kind = if N == 4 { json::accessor::Type::Vec4 } else { json::accessor::Type::Vec3 };
        let output = self.floats(&keyed.values, kind, None, false);
        (Some(input), keyed.interpolation, output)
    }

    /// Warns about animated values glTF (core) cannot carry.
    fn unsupported_channels(&mut self, scene: &Scene, a: usize, place: &str) {
        let mut seen: Vec<&'static str> = Vec::new();
        for ch in &scene.animations[a].channels {
            let what = match &ch.target {
                ChannelTarget::Hidden(t)
                    if t.keys.iter().any(|k| k.value != scene.nodes[ch.node].hidden) =>
                {
                    "visibility (hide) tracks are not animated"
                }
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
                    "property tracks (FBX Visibility, Intensity …) other than morph weights are \
                     not animated"
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

/// One target's adaptive resampling (no resampling rate asked for): where its values come
/// from and the seeds of its samples.
struct Adaptive<'a, 'p, 's> {
    /// [`resample::seed_frames`] of the keys of every node that can move it
    /// ([`target_dependencies`]) over the written range.
    seeds: Vec<f64>,
    /// [`resample::scene_size`] of the rest pose.
    size: f64,
    helpers: &'a [Helper],
    source: &'a mut TargetSource<'p, 's>,
    /// Whether grid samples tell whether its parts move (a node whose TRS is its own).
    grid: bool,
    /// Set when a channel's samples passed [`resample::ADAPTIVE_BUDGET`].
    capped: bool,
}

/// A resampled channel's values.
enum Floats {
    Vec3(Vec<DVec3>),
    Rotation(Vec<DQuat>),
}

impl Floats {
    /// Whether some value differs from part `part` of `rest` as written (`f32`; a rotation
    /// or its negation).
    fn moves(&self, rest: (DVec3, DQuat, DVec3), part: usize) -> bool {
        let v3 = |v: DVec3| v.as_vec3().to_array();
        match self {
            Floats::Vec3(v) => {
                let r = if part == 0 { rest.0 } else { rest.2 };
                v.iter().any(|&x| v3(x) != v3(r))
            }
            Floats::Rotation(v) => v.iter().any(|&r| {
                quat_f32(r) != quat_f32(rest.1) && quat_f32(-r) != quat_f32(rest.1)
            }),
        }
    }
}

/// One animation target as the channel writer sees it.
struct Target<'c> {
    /// Scene node `k`, or aim helper `k − nodes`.
    k: usize,
    /// Its glTF translation, rotation and scale at rest.
    rest: (DVec3, DQuat, DVec3),
    /// Whether its channels may be written from the source keys.
    keyed: bool,
    /// Its channels when `keyed`, else none.
    channels: &'c [&'c ChannelTarget],
}

/// The sample frames and times of `anim`: the written range ([`keep::written_range`]) sampled
/// at every frame, or every `fps / resample_fps` frames, with every key and the instant
/// before every jump ([`keep::sample_frames`]); of frames that fall on one `f32` time the
/// first is kept.
fn timeline(anim: &Animation, resample_fps: Option<f64>) -> Timeline {
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { THREE_DS_FPS };
    let step = resample_fps.filter(|r| r.is_finite() && *r > 0.0).map(|r| fps / r).unwrap_or(1.0);
    let keys: Vec<Vec<f64>> =
        anim.channels.iter().flat_map(|c| keep::key_frames(&c.target)).collect();
    let (start, end) = keep::written_range(anim.frame_range, &keys);
    // The sampling grid runs from the animation's first frame (keys before frame 0 keep
    // their phase), from `start` on.
    let anchor = if anim.frame_range.0.is_finite() { anim.frame_range.0.min(start) } else { start };
    let all = keep::sample_frames((start, end), anchor, step, &keys);
    let mut times: Vec<f32> = Vec::with_capacity(all.len());
    let mut frames = Vec::with_capacity(all.len());
    for f in all {
        let t = (f / fps) as f32;
        if times.last().is_none_or(|&l| t > l) {
            times.push(t);
            frames.push(f);
        }
    }
    Timeline { fps, range: (start, end), frames, times }
}

/// The samples that need the evaluated scene: of the targets whose glTF TRS is not their own
/// (`direct`: [`own_trs_nodes`]; every aim helper) and of the morph weights. Samples are taken
/// per target, not per scene: a node whose glTF TRS is its own is sampled from its own
/// channels alone ([`node_samples`], by the caller). A pose target whose glTF local cannot
/// change over the animation (no channel on it, its ancestors or, for a helper, its aim
/// target: [`varying_targets`]) holds its value at the first sample; so does a morph node
/// whose mesh no channel drives. Per frame only the moving targets and what they depend on are
/// posed ([`PartialPose`]). Without `targets_on_grid` (the targets are resampled adaptively,
/// [`resample`]) only the morph weights are sampled.
fn pose_samples(
    scene: &Scene,
    a: usize,
    ctx: &AnimContext,
    direct: &[bool],
    rests: &[(DVec3, DQuat, DVec3)],
    frames: &[f64],
    targets_on_grid: bool,
) -> Samples {
    let (helpers, morph_nodes) = (ctx.helpers, ctx.morph_nodes);
    let targets = rests.len();
    let (varies, morph_varies) = varying_targets(scene, a, helpers, morph_nodes);
    let pose_targets: Vec<usize> = (0..targets)
        .filter(|&k| targets_on_grid && (k >= direct.len() || !direct[k]))
        .collect();
    let mut s = Samples {
        tr: vec![Vec::new(); targets],
        ro: vec![Vec::new(); targets],
        sc: vec![Vec::new(); targets],
        mw: vec![Vec::new(); morph_nodes.len()],
    };
    let weights = |w: Vec<f64>| w.into_iter().map(|w| if w.is_finite() { w as f32 } else { 0.0 });
    if let Some(&first) =
        frames.first().filter(|_| !pose_targets.is_empty() || !morph_nodes.is_empty())
    {
        let pose = scene.evaluate(Some(a), Time::Frame(first));
        let unaimed = unaimed_world(scene, &pose);
        for &k in pose_targets.iter().filter(|&&k| !varies[k]) {
            let local = if k < scene.nodes.len() {
                gltf_local(scene, &pose, &unaimed, k)
            } else {
                let h = &helpers[k - scene.nodes.len()];
                unaimed[h.node].inverse() * pose.world[h.node]
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
