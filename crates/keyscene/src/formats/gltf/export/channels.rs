//! Animation channels between sampling and the buffer: each channel's keys reduced to those
//! its interpolation needs ([`thin_vec3`], [`thin_rotation`], [`thin_step`]), a still channel
//! to one key, the rule that decides which still channels are written at all
//! ([`settle_still`]), and one buffer view per animation for its inputs and outputs
//! ([`Out::write_animation`]).
//!
//! **Still channels and several animations.** glTF says nothing of what a client does with a
//! node property an animation does not target, and clients differ: three.js restores the
//! property's original value when an action stops (`AnimationMixer` hands a binding back with
//! `restoreOriginalState` once no action uses it), Blender's importer turns each glTF animation
//! into an action and a property no key of the active action drives keeps whatever value it
//! had (the last action's). So a channel that holds the node's rest value is left out only
//! when **every** written animation leaves that node property at rest; when any animation
//! moves it, every animation has a channel for it (one key where it is still), and both kinds
//! of client play each animation the same way.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use glam::{DQuat, DVec3};
use gltf_json as json;
use json::animation::{Interpolation, Property};
use json::validation::Checked::Valid;

use super::Out;
use crate::anim::resample::{self, Curve, Sampled};

/// The share of [`resample::TOLERANCE`] thinning may use: a kept chord reproduces every
/// dropped sample to `THIN_SHARE × TOLERANCE × size`; the adaptive sampler splits to the rest
/// (`1 − THIN_SHARE`), so the written curve stays within the tolerance of the source. A
/// tenth: the corpus's knight.fbx keeps 7,085 of 32,837 keys at the whole tolerance and
/// 7,182 at a tenth of it, so a small share costs almost nothing and leaves room for the error
/// of a chain of nodes adding up in the world (at a quarter, `secondreality/PASKA2.3DS`'s
/// `b1`, deep in a chain, strayed 1.02e-4 of the scene size at a whole frame).
pub(super) const THIN_SHARE: f64 = 0.1;

/// One channel ready to write: its target (animation target index: scene nodes, then aim
/// helpers; for weights the scene node), path, interpolation and keys.
#[derive(Debug, Clone)]
pub(super) struct Channel {
    pub(super) k: usize,
    pub(super) path: Property,
    pub(super) interpolation: Interpolation,
    /// Key times in seconds, strictly increasing.
    pub(super) times: Vec<f32>,
    /// `width` floats per key (×3 for CUBICSPLINE: in-tangent, value, out-tangent).
    pub(super) values: Vec<f32>,
    /// Floats per value: 3 (translation, scale), 4 (rotation), the target count (weights).
    pub(super) width: usize,
    /// The target's rest value of this path as written (`width` floats).
    pub(super) rest: Vec<f32>,
    /// Whether the channel holds one value throughout, and that value is its rest value
    /// (within the thinning bound): a candidate for leaving out ([`settle_still`]).
    pub(super) at_rest: bool,
}

/// Reduced samples of a LINEAR channel: times (seconds) and values as written.
pub(super) struct Reduced<const N: usize> {
    pub(super) times: Vec<f32>,
    pub(super) values: Vec<[f32; N]>,
    /// Whether every sample is within the bound of the rest value (then one key is kept, the
    /// rest value).
    pub(super) at_rest: bool,
}

/// Samples at `frames` (strictly increasing, at least one) thinned by `curve` to `eps`
/// ([`resample::thin`]); of samples that fall on one `f32` time (`frame / fps`) the first is
/// kept. A channel whose every sample is within `eps` of its first is one key; of `rest` (the
/// target's rest value), one key of `rest`. A negative `eps` keeps every sample.
fn reduce<V: Copy, C: Curve<V>, const N: usize>(
    frames: Vec<f64>,
    values: Vec<V>,
    rest: V,
    (curve, eps, fps): (&C, f64, f64),
    as_f32: impl Fn(V) -> [f32; N],
) -> Reduced<N> {
    let near = |a: V| values.iter().all(|&v| curve.error(a, v) <= eps);
    let at_rest = !values.is_empty() && near(rest);
    let still = at_rest || values.first().is_some_and(|&a| near(a));
    let s = if eps < 0.0 {
        Sampled { frames, values, capped: false }
    } else if still {
        let v = if at_rest { rest } else { values[0] };
        Sampled { frames: frames[..1].to_vec(), values: vec![v], capped: false }
    } else {
        resample::thin(Sampled { frames, values, capped: false }, curve, eps)
    };
    let mut times: Vec<f32> = Vec::with_capacity(s.frames.len());
    let mut out = Vec::with_capacity(s.frames.len());
    for (&f, &v) in s.frames.iter().zip(&s.values) {
        let t = (f / fps) as f32;
        if times.last().is_none_or(|&l| t > l) {
            times.push(t);
            out.push(as_f32(v));
        }
    }
    Reduced { times, values: out, at_rest }
}

/// A translation (`scale` false, error the distance; bound `eps` at the scene size `size`,
/// raised to the farthest coordinate the channel reaches) or scale ([`resample::Scales`])
/// channel sampled at `frames`, with the target's `rest` value, reduced ([`reduce`]).
pub(super) fn thin_vec3(
    (frames, values): (Vec<f64>, Vec<DVec3>),
    rest: DVec3,
    scale: bool,
    (size, eps, fps): (f64, f64, f64),
) -> Reduced<3> {
    let v3 = |v: DVec3| v.as_vec3().to_array();
    if scale {
        return reduce(frames, values, rest, (&resample::Scales { size }, eps, fps), v3);
    }
    let reach =
        values.iter().map(|v| v.abs().max_element()).filter(|r| r.is_finite()).fold(size, f64::max);
    let eps = if size > 0.0 { eps * reach / size } else { eps };
    reduce(frames, values, rest, (&resample::Positions, eps, fps), v3)
}

/// A rotation channel sampled at `frames` (unit quaternions, each in the hemisphere of the one
/// before), with the target's `rest` rotation, reduced ([`reduce`]) with the slerp chord and
/// [`resample::rotation_error`] at the scene size `size`.
pub(super) fn thin_rotation(
    (frames, values): (Vec<f64>, Vec<DQuat>),
    rest: DQuat,
    (size, eps, fps): (f64, f64, f64),
) -> Reduced<4> {
    let curve = resample::Rotations { size };
    reduce(frames, values, rest, (&curve, eps, fps), super::nodes::quat_f32)
}

/// A STEP channel's keys without those that repeat the value before them (a step to the same
/// value changes nothing); the first and last key stay (the last keeps the clip's length).
pub(super) fn thin_step<const N: usize>(times: &mut Vec<f32>, values: &mut Vec<[f32; N]>) {
    let n = times.len();
    if n < 3 {
        return;
    }
    let mut keep = vec![true; n];
    let mut last = values[0];
    for j in 1..n - 1 {
        keep[j] = values[j] != last;
        if keep[j] {
            last = values[j];
        }
    }
    let mut it = keep.iter();
    times.retain(|_| *it.next().unwrap_or(&true));
    let mut it = keep.iter();
    values.retain(|_| *it.next().unwrap_or(&true));
}

/// One animation's channels before [`settle_still`]: its channels and its first and last time
/// (seconds).
pub(super) struct Pending {
    pub(super) a: usize,
    pub(super) channels: Vec<Channel>,
    pub(super) start: f32,
    pub(super) end: f32,
}

/// Applies the rule of the module docs to every animation's channels: a channel at rest is
/// left out when no animation moves its node property, else kept (one key); an animation that
/// has no channel for a property another animation moves gets one key of its rest value at its
/// start. Then an animation whose channels all end before its last time gets a second key at
/// that time on its first one-key channel, so that clients that take a clip's length from its
/// last key (three.js) play the whole range.
pub(super) fn settle_still(anims: &mut [Pending]) {
    let key = |c: &Channel| (c.k, path_order(c.path));
    let moved: BTreeSet<(usize, u8)> =
        anims.iter().flat_map(|p| p.channels.iter()).filter(|c| !c.at_rest).map(key).collect();
    let mut rests: BTreeMap<(usize, u8), (Property, Vec<f32>, usize)> = BTreeMap::new();
    for c in anims.iter().flat_map(|p| p.channels.iter()) {
        rests.entry(key(c)).or_insert_with(|| (c.path, c.rest.clone(), c.width));
    }
    for p in anims.iter_mut() {
        p.channels.retain(|c| !c.at_rest || moved.contains(&key(c)));
        let have: BTreeSet<(usize, u8)> = p.channels.iter().map(key).collect();
        for &(k, order) in &moved {
            if have.contains(&(k, order)) {
                continue;
            }
            let Some((path, rest, width)) = rests.get(&(k, order)) else { continue };
            let path = *path;
            p.channels.push(Channel {
                k,
                path,
                interpolation: Interpolation::Linear,
                times: vec![p.start],
                values: rest.clone(),
                width: *width,
                rest: rest.clone(),
                at_rest: true,
            });
        }
        let reaches = p.channels.iter().any(|c| c.times.last().is_some_and(|&t| t >= p.end));
        if !reaches {
            if let Some(c) =
                p.channels.iter_mut().find(|c| c.times.len() == 1 && p.end > c.times[0])
            {
                let v = c.values.clone();
                c.times.push(p.end);
                c.values.extend(v);
            }
        }
    }
}

/// Translation, rotation, scale, weights: the order channels of one target are listed in.
fn path_order(p: Property) -> u8 {
    match p {
        Property::Translation => 0,
        Property::Rotation => 1,
        Property::Scale => 2,
        Property::MorphTargetWeights => 3,
    }
}

impl Out {
    /// Writes one animation's `channels` (named `name`; left out when there are none): every
    /// input and output in one buffer view, channels whose key times are the same bits sharing
    /// one input accessor; `node` maps a channel's target to its glTF node.
    pub(super) fn write_animation(
        &mut self,
        name: String,
        channels: &[Channel],
        node: impl Fn(usize) -> json::Index<json::Node>,
    ) {
        if channels.is_empty() {
            return;
        }
        // Inputs first (deduplicated by their bits), then outputs, each a float slice with its
        // type and whether it takes min/max.
        let mut inputs: HashMap<Vec<u32>, usize> = HashMap::new();
        let mut parts: Vec<(&[f32], json::accessor::Type, usize, bool)> = Vec::new();
        let mut refs: Vec<(usize, usize)> = Vec::with_capacity(channels.len());
        for c in channels {
            let bits: Vec<u32> = c.times.iter().map(|t| t.to_bits()).collect();
            let next = parts.len();
            let i = *inputs.entry(bits).or_insert(next);
            if i == next {
                parts.push((&c.times, json::accessor::Type::Scalar, 1, true));
            }
            refs.push((i, 0));
        }
        for (c, r) in channels.iter().zip(refs.iter_mut()) {
            r.1 = parts.len();
            let (type_, n) = match c.path {
                Property::Translation | Property::Scale => (json::accessor::Type::Vec3, 3),
                Property::Rotation => (json::accessor::Type::Vec4, 4),
                Property::MorphTargetWeights => (json::accessor::Type::Scalar, 1),
            };
            parts.push((&c.values, type_, n, false));
        }
        let accessors = self.float_block(&parts);
        let mut samplers = Vec::with_capacity(channels.len());
        let mut out = Vec::with_capacity(channels.len());
        for (c, &(i, o)) in channels.iter().zip(&refs) {
            let sampler = json::Index::push(
                &mut samplers,
                json::animation::Sampler {
                    extensions: None,
                    extras: Default::default(),
                    input: accessors[i],
                    interpolation: Valid(c.interpolation),
                    output: accessors[o],
                },
            );
            out.push(json::animation::Channel {
                sampler,
                target: json::animation::Target {
                    extensions: None,
                    extras: Default::default(),
                    node: node(c.k),
                    path: Valid(c.path),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        self.root.animations.push(json::Animation {
            extensions: None,
            extras: Default::default(),
            channels: out,
            name: Some(name),
            samplers,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(k: usize, values: Vec<f32>, at_rest: bool) -> Channel {
        let times = (0..values.len() / 3).map(|i| i as f32).collect();
        Channel {
            k,
            path: Property::Translation,
            interpolation: Interpolation::Linear,
            times,
            values,
            width: 3,
            rest: vec![0.0; 3],
            at_rest,
        }
    }

    #[test]
    fn a_still_channel_is_left_out_only_when_no_animation_moves_its_property() {
        // Animation 0 moves node 0 and holds node 1 at rest; animation 1 has no channel for
        // node 0 and holds node 1 at rest too.
        let moving = channel(0, vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0], false);
        let mut anims = vec![
            Pending {
                a: 0,
                channels: vec![moving, channel(1, vec![0.0; 3], true)],
                start: 0.0,
                end: 2.0,
            },
            Pending { a: 1, channels: vec![channel(1, vec![0.0; 3], true)], start: 0.0, end: 3.0 },
        ];
        settle_still(&mut anims);
        // Node 1 is at rest in both: no channel anywhere.
        assert!(anims.iter().all(|p| p.channels.iter().all(|c| c.k == 0)));
        // Animation 1 gets node 0's rest value, so a client that keeps animation 0's last
        // value (Blender) shows node 0 at rest; one key at the start and one at its end (the
        // clip's length).
        let c = &anims[1].channels[0];
        assert_eq!(
            (c.k, c.times.as_slice(), c.values.as_slice()),
            (0, &[0.0, 3.0][..], &[0.0; 6][..])
        );
        assert_eq!(anims[0].channels.len(), 1);
    }

    #[test]
    fn step_keys_that_repeat_a_value_are_dropped() {
        let mut times = vec![0.0, 1.0, 2.0, 3.0, 4.0];
        let mut values = vec![[1.0f32], [1.0], [2.0], [2.0], [2.0]];
        thin_step(&mut times, &mut values);
        assert_eq!(times, [0.0, 2.0, 4.0]);
        assert_eq!(values, [[1.0], [2.0], [2.0]]);
    }
}
