//! glTF animations → scene animations: channels to tracks, key times from seconds to frames.

use glam::DQuat;

use super::vec3;
use crate::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, RotationTrack, Track};
use crate::formats::gltf::{accessors, warning, Error};
use crate::scene::{Scene, Warning};

/// Reads every animation with channels into `scene` (per node the morph target count of its
/// mesh, for weight channels), widening the scene's frame range to theirs.
pub(super) fn animations(
    doc: &gltf::Document,
    buffers: &[Vec<u8>],
    fps: f64,
    max: u64,
    pointers: &[super::visibility::PointerChannel],
    scene: &mut Scene,
    warnings: &mut Vec<Warning>,
) -> Result<(), Error> {
    let node_targets: Vec<usize> = scene
        .nodes
        .iter()
        .map(|n| n.mesh.map_or(0, |m| scene.meshes[m].morph_targets.len()))
        .collect();
    for a in doc.animations() {
        let mut anim = animation(&a, doc.as_json(), buffers, fps, max, &node_targets, warnings)?;
        for p in pointers.iter().filter(|p| p.animation == a.index()) {
            let n = node_targets.len();
            let read = super::visibility::hidden_track(&a, p, buffers, fps, max, n, warnings)?;
            if let Some((node, target)) = read {
                let keys = crate::anim::keep::key_frames(&target);
                let frames = keys.iter().flatten().copied();
                let (lo, hi) = frames
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), f| (lo.min(f), hi.max(f)));
                if lo.is_finite() {
                    anim.frame_range = if anim.channels.is_empty() {
                        (lo, hi)
                    } else {
                        (anim.frame_range.0.min(lo), anim.frame_range.1.max(hi))
                    };
                }
                anim.channels.push(Channel { node, target });
            }
        }
        if anim.channels.is_empty() {
            continue;
        }
        let range = anim.frame_range;
        scene.meta.frame_range = Some(match scene.meta.frame_range {
            Some((lo, hi)) => (lo.min(range.0), hi.max(range.1)),
            None => range,
        });
        scene.animations.push(anim);
    }
    Ok(())
}

/// One animation. Weight channels become one
/// [`morph weight property`](crate::anim::curve::morph_weight_property) track per target of the
/// node's mesh (`node_targets[node]` of them), in percent (× 100) as FBX `DeformPercent`.
fn animation(
    a: &gltf::Animation,
    root: &gltf_json::Root,
    buffers: &[Vec<u8>],
    fps: f64,
    max: u64,
    node_targets: &[usize],
    warnings: &mut Vec<Warning>,
) -> Result<Animation, Error> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    use gltf::animation::util::ReadOutputs;
    let mut out = Animation {
        name: a.name().unwrap_or("").to_string(),
        fps,
        frame_range: (0.0, 0.0),
        channels: Vec::new(),
    };
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let json = &root.animations[a.index()];
    for ch in a.channels() {
        let place = format!("animations[{}] › channels[{}]", a.index(), ch.index());
        let invalid = |message: String| Error::Invalid { place: place.clone(), message };
        // gltf-json 1.4 does not validate channel targets (its `Animation` checks only the
        // sampler indices), and the crate's `Target::node`/`property` unwrap them.
        let Some(tj) = json.channels.get(ch.index()).map(|c| &c.target) else {
            return Err(invalid("channel missing from the JSON".into()));
        };
        let node = tj.node.value();
        if node >= node_targets.len() {
            return Err(invalid(format!(
                "target node {node} is past the {} nodes",
                node_targets.len()
            )));
        }
        let gltf_json::validation::Checked::Valid(property) = tj.path else {
            return Err(invalid("target path is not one glTF 2.0 defines".into()));
        };
        let sampler = ch.sampler();
        accessors::check(&sampler.input(), buffers, &accessors::SCALAR_FLOAT)
            .map_err(|e| invalid(format!("input {e}")))?;
        use gltf::animation::Property as P;
        let allowed = match property {
            P::Translation | P::Scale => &accessors::VEC3_FLOAT,
            P::Rotation => &accessors::ROTATION,
            P::MorphTargetWeights => &accessors::MORPH_WEIGHTS,
        };
        accessors::check(&sampler.output(), buffers, allowed)
            .map_err(|e| invalid(format!("output {e}")))?;
        let reader = ch.reader(get);
        let inputs: Vec<f64> = match reader.read_inputs() {
            Some(i) if i.len() as u64 > max => {
                return Err(Error::Limit {
                    place,
                    message: format!("{} keys exceed the limit of {max}", i.len()),
                })
            }
            Some(i) => i.map(|t| f64::from(t) * fps).collect(),
            None => return Err(invalid("input accessor cannot be read".into())),
        };
        // glTF 2.0 §3.11: the times, as stored, strictly increase. Snapping them to whole frames
        // comes after that check and never merges two keys (`snap_frames`).
        if inputs.windows(2).any(|w| w[0] >= w[1]) || inputs.iter().any(|t| !t.is_finite()) {
            return Err(invalid("key times are not strictly increasing".into()));
        }
        let inputs = snap_frames(inputs);
        let interp = ch.sampler().interpolation();
        let target = match reader.read_outputs() {
            Some(ReadOutputs::Translations(v)) => ChannelTarget::Translation(track(
                &inputs,
                v.map(vec3).collect(),
                interp,
                fps,
                &invalid,
            )?),
            Some(ReadOutputs::Scales(v)) => {
                ChannelTarget::Scale(track(&inputs, v.map(vec3).collect(), interp, fps, &invalid)?)
            }
            Some(ReadOutputs::Rotations(r)) => {
                let values: Vec<DQuat> =
                    r.into_f32().map(|q| DQuat::from_array(q.map(f64::from))).collect();
                let mut t = track(&inputs, values, interp, fps, &invalid)?;
                for k in &mut t.keys {
                    if k.value.length_squared() > 0.0 {
                        k.value = k.value.normalize();
                    }
                }
                ChannelTarget::Rotation(RotationTrack::Quat(t))
            }
            Some(ReadOutputs::MorphTargetWeights(w)) => {
                let k = node_targets.get(node).copied().unwrap_or(0);
                let values: Vec<f64> = w.into_f32().map(|w| f64::from(w) * 100.0).collect();
                if k == 0 || values.len() % k != 0 {
                    warnings.push(warning(
                        place,
                        format!(
                            "{} weights for a mesh with {k} morph targets: channel left out",
                            values.len()
                        ),
                    ));
                    continue;
                }
                for t in 0..k {
                    let vt: Vec<f64> = values.iter().skip(t).step_by(k).copied().collect();
                    let track = track(&inputs, vt, interp, fps, &invalid)?;
                    out.channels.push(Channel {
                        node,
                        target: ChannelTarget::Property {
                            name: crate::anim::curve::morph_weight_property(t),
                            track,
                        },
                    });
                }
                if let (Some(&f), Some(&l)) = (inputs.first(), inputs.last()) {
                    lo = lo.min(f);
                    hi = hi.max(l);
                }
                continue;
            }
            None => return Err(invalid("output accessor cannot be read".into())),
        };
        if let (Some(&f), Some(&l)) = (inputs.first(), inputs.last()) {
            lo = lo.min(f);
            hi = hi.max(l);
        }
        out.channels.push(Channel { node, target });
    }
    if lo.is_finite() {
        out.frame_range = (lo, hi);
    }
    Ok(out)
}

/// A key time in frames, snapped to the nearest whole frame when within f32 rounding of it
/// (glTF stores seconds as f32, so frame 20 at 30 fps reads back as 20.0000006).
fn snap_frame(frame: f64) -> f64 {
    let r = frame.round();
    if (frame - r).abs() <= 1e-6 * r.abs().max(1.0) {
        r
    } else {
        frame
    }
}

/// Strictly increasing key frames, each snapped ([`snap_frame`]) unless that would bring it
/// to or past its neighbour: keys 1 µs apart (a sample beside a key at frame 0.99999, as a 2013
/// 3ds Max export has) stay two keys.
fn snap_frames(mut frames: Vec<f64>) -> Vec<f64> {
    for k in 0..frames.len() {
        let s = snap_frame(frames[k]);
        let after_prev = k == 0 || s > frames[k - 1];
        let before_next = frames.get(k + 1).is_none_or(|&n| s < n);
        if after_prev && before_next {
            frames[k] = s;
        }
    }
    frames
}

/// Keys at `frames` from glTF sampler outputs. CUBICSPLINE outputs are (in-tangent, value,
/// out-tangent) triples with tangents per second: divided by `fps` to per frame.
fn track<T>(
    frames: &[f64],
    values: Vec<T>,
    interp: gltf::animation::Interpolation,
    fps: f64,
    invalid: &dyn Fn(String) -> Error,
) -> Result<Track<T>, Error>
where
    T: Copy + std::ops::Mul<f64, Output = T>,
{
    use gltf::animation::Interpolation as I;
    let per_key = if interp == I::CubicSpline { 3 } else { 1 };
    if values.len() != frames.len() * per_key {
        return Err(invalid(format!(
            "{} outputs for {} inputs ({per_key} per key expected)",
            values.len(),
            frames.len()
        )));
    }
    let keys = frames
        .iter()
        .enumerate()
        .map(|(k, &frame)| match interp {
            I::Linear => Key { frame, value: values[k], interpolation: Interpolation::Linear },
            I::Step => Key { frame, value: values[k], interpolation: Interpolation::Step },
            I::CubicSpline => Key {
                frame,
                value: values[3 * k + 1],
                interpolation: Interpolation::Hermite {
                    in_tangent: values[3 * k] * (1.0 / fps),
                    out_tangent: values[3 * k + 2] * (1.0 / fps),
                },
            },
        })
        .collect();
    Ok(Track::new(keys))
}
