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
use super::sampling::{hold_sample, node_samples, partial_local, push_sample, varying_targets};
use super::{Accessor, Helper, Out};
use crate::anim::{self, keep, Animation, ChannelTarget, PartialPose, Time, THREE_DS_FPS};
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
        let mut s = pose_samples(scene, a, ctx, &direct, &rests, &line.frames);
        let node_channels = anim::channels_by_node(scene, Some(a));
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
            let keyed = resample_fps.is_none() && own;
            let channels: &[&ChannelTarget] = if keyed { &node_channels[k] } else { &[] };
            let target = Target { k, rest: rests[k], keyed, channels };
            self.target_outputs(scene, &target, &line, &s, &mut keyed_inputs, &mut outputs);
        }
        self.morph_outputs(scene, ctx, &s.mw, &mut outputs);
        self.push_animation(scene, a, ctx, outputs, &line.times);
    }

    /// The channels of target `t` whose part moves (as written, `f32`): from the source keys
    /// where they convert ([`keyed_vec3`], [`keyed_rotation`]), else the samples.
    fn target_outputs(
        &mut self,
        scene: &Scene,
        t: &Target,
        line: &Timeline,
        s: &Samples,
        keyed_inputs: &mut KeyedInputs,
        outputs: &mut Vec<Output>,
    ) {
        let k = t.k;
        let (rt, rr, rs) = t.rest;
        let v3 = |v: DVec3| v.as_vec3().to_array();
        let moves_t = s.tr[k].iter().any(|&t| v3(t) != v3(rt));
        let moves_r =
            s.ro[k].iter().any(|&r| quat_f32(r) != quat_f32(rr) && quat_f32(-r) != quat_f32(rr));
        let moves_s = s.sc[k].iter().any(|&s| v3(s) != v3(rs));
        let transform = scene.nodes.get(k).map_or(Transform::IDENTITY, |n| n.transform);
        let resampled = |output| (None, Interpolation::Linear, output);
        // A translation or scale channel: from the source keys where they convert, else the
        // samples.
        let vec3_channel = |this: &mut Self,
                            inputs: &mut KeyedInputs,
                            is_scale: bool,
                            rest: DVec3,
                            samples: &[DVec3]| {
            match t
                .keyed
                .then(|| keyed_vec3(t.channels, is_scale, rest, line.range, line.fps))
                .flatten()
            {
                Some(keys) => this.keyed(&keys, inputs),
                None => {
                    let data: Vec<[f32; 3]> = samples.iter().map(|&v| v3(v)).collect();
                    resampled(this.floats(&data, json::accessor::Type::Vec3, None, false))
                }
            }
        };
        if moves_t {
            let (input, interp, output) =
                vec3_channel(self, keyed_inputs, false, transform.translation, &s.tr[k]);
            outputs.push((k, Property::Translation, input, interp, output));
        }
        if moves_r {
            let (input, interp, output) =
                match t.keyed.then(|| keyed_rotation(t.channels, line.range, line.fps)).flatten() {
                    Some(keys) => self.keyed(&keys, keyed_inputs),
                    None => {
                        let data: Vec<[f32; 4]> = s.ro[k].iter().map(|&r| quat_f32(r)).collect();
                        resampled(self.floats(&data, json::accessor::Type::Vec4, None, false))
                    }
                };
            outputs.push((k, Property::Rotation, input, interp, output));
        }
        if moves_s {
            let (input, interp, output) =
                vec3_channel(self, keyed_inputs, true, transform.scale, &s.sc[k]);
            outputs.push((k, Property::Scale, input, interp, output));
        }
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
/// posed ([`PartialPose`]).
fn pose_samples(
    scene: &Scene,
    a: usize,
    ctx: &AnimContext,
    direct: &[bool],
    rests: &[(DVec3, DQuat, DVec3)],
    frames: &[f64],
) -> Samples {
    let (helpers, morph_nodes) = (ctx.helpers, ctx.morph_nodes);
    let targets = rests.len();
    let (varies, morph_varies) = varying_targets(scene, a, helpers, morph_nodes);
    let pose_targets: Vec<usize> =
        (0..targets).filter(|&k| k >= direct.len() || !direct[k]).collect();
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
