//! Node visibility read back (issue 33 §4): `KHR_node_visibility` on nodes and
//! `KHR_animation_pointer` channels that animate it.
//!
//! The `gltf` crate cannot read a pointer channel (its channel target requires a `node` and
//! one of the four core paths), so [`split_pointer_channels`] takes them out of the JSON
//! before the crate parses it, and [`hidden_track`] reads each one that animates
//! `/nodes/N/extensions/KHR_node_visibility/visible` into a
//! [`ChannelTarget::Hidden`](crate::anim::ChannelTarget::Hidden) track: STEP keys (any other
//! interpolation is read as STEP, with a warning: a boolean cannot blend), hidden where the
//! output is 0. Outputs are unsigned bytes as KHR_animation_pointer requires for a `bool`;
//! floats are accepted too. Pointer channels that target anything else are left out with a
//! warning.

use crate::anim::{ChannelTarget, Interpolation, Key, Track};
use crate::formats::gltf::{accessors, warning, Error};
use crate::scene::Warning;

/// A `KHR_animation_pointer` channel taken out of the JSON.
#[derive(Debug, Clone)]
pub(super) struct PointerChannel {
    /// The glTF animation it belongs to.
    pub(super) animation: usize,
    /// Its sampler index in that animation.
    pub(super) sampler: usize,
    /// The JSON pointer it animates.
    pub(super) pointer: String,
}

/// The JSON without its pointer channels (target `path` `"pointer"`), and those channels;
/// `None` when the document mentions no `KHR_animation_pointer` or is not a JSON object (the
/// `gltf` crate then reports what is wrong).
pub(super) fn split_pointer_channels(json: &[u8]) -> Option<(Vec<u8>, Vec<PointerChannel>)> {
    let needle = b"KHR_animation_pointer";
    if !json.windows(needle.len()).any(|w| w == needle) {
        return None;
    }
    let mut v: serde_json::Value = serde_json::from_slice(json).ok()?;
    let mut found = Vec::new();
    let animations = v.get_mut("animations").and_then(|a| a.as_array_mut())?;
    for (a, anim) in animations.iter_mut().enumerate() {
        let Some(channels) = anim.get_mut("channels").and_then(|c| c.as_array_mut()) else {
            continue;
        };
        channels.retain(|c| {
            let target = &c["target"];
            if target["path"].as_str() != Some("pointer") {
                return true;
            }
            let pointer = target["extensions"]["KHR_animation_pointer"]["pointer"].as_str();
            if let (Some(pointer), Some(sampler)) = (pointer, c["sampler"].as_u64()) {
                found.push(PointerChannel {
                    animation: a,
                    sampler: usize::try_from(sampler).unwrap_or(usize::MAX),
                    pointer: pointer.to_string(),
                });
            }
            false
        });
    }
    Some((serde_json::to_vec(&v).ok()?, found))
}

/// The node a pointer animates the visibility of, from
/// `/nodes/N/extensions/KHR_node_visibility/visible`.
fn visibility_node(pointer: &str) -> Option<usize> {
    let rest = pointer.strip_prefix("/nodes/")?;
    let (n, tail) = rest.split_once('/')?;
    (tail == "extensions/KHR_node_visibility/visible").then(|| n.parse().ok()).flatten()
}

/// The hidden track of pointer channel `p` of animation `a` (key frames = seconds × `fps`),
/// with its node; `None` (warned) when it animates something else or its sampler is missing.
/// Errors: accessors of the wrong type or out of bounds, times not strictly increasing, more
/// than `max` keys, a node past `node_count`.
pub(super) fn hidden_track(
    a: &gltf::Animation,
    p: &PointerChannel,
    buffers: &[Vec<u8>],
    fps: f64,
    max: u64,
    node_count: usize,
    warnings: &mut Vec<Warning>,
) -> Result<Option<(usize, ChannelTarget)>, Error> {
    let place = format!("animations[{}] › pointer channel \"{}\"", a.index(), p.pointer);
    let invalid = |message: String| Error::Invalid { place: place.clone(), message };
    let Some(node) = visibility_node(&p.pointer) else {
        warnings.push(warning(place, "animates a property keyscene does not read: left out"));
        return Ok(None);
    };
    if node >= node_count {
        return Err(invalid(format!("node {node} is past the {node_count} nodes")));
    }
    let Some(sampler) = a.samplers().nth(p.sampler) else {
        return Err(invalid(format!("sampler {} does not exist", p.sampler)));
    };
    let (input, output) = (sampler.input(), sampler.output());
    accessors::check(&input, buffers, &accessors::SCALAR_FLOAT)
        .map_err(|e| invalid(format!("input {e}")))?;
    accessors::check(&output, buffers, &accessors::SCALAR_BOOL)
        .map_err(|e| invalid(format!("output {e}")))?;
    if input.count() as u64 > max || input.count() != output.count() {
        return Err(invalid(format!(
            "{} key times for {} values (at most {max})",
            input.count(),
            output.count()
        )));
    }
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    let times: Vec<f64> = gltf::accessor::Iter::<f32>::new(input, get)
        .ok_or_else(|| invalid("input accessor cannot be read".into()))?
        .map(|t| f64::from(t) * fps)
        .collect();
    if times.windows(2).any(|w| w[0] >= w[1]) || times.iter().any(|t| !t.is_finite()) {
        return Err(invalid("key times are not strictly increasing".into()));
    }
    let shown: Vec<bool> = if output.data_type() == gltf::accessor::DataType::U8 {
        gltf::accessor::Iter::<u8>::new(output, get)
            .ok_or_else(|| invalid("output accessor cannot be read".into()))?
            .map(|v| v != 0)
            .collect()
    } else {
        gltf::accessor::Iter::<f32>::new(output, get)
            .ok_or_else(|| invalid("output accessor cannot be read".into()))?
            .map(|v| v != 0.0)
            .collect()
    };
    if sampler.interpolation() != gltf::animation::Interpolation::Step {
        warnings.push(warning(place, "a boolean property animated without STEP: read as STEP"));
    }
    let keys = times
        .iter()
        .zip(&shown)
        .map(|(&frame, &s)| Key { frame, value: !s, interpolation: Interpolation::Step })
        .collect();
    Ok(Some((node, ChannelTarget::Hidden(Track::new(keys)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_channels_are_taken_out_and_others_kept() {
        let json = br#"{"asset":{"version":"2.0"},"animations":[{"channels":[
            {"sampler":0,"target":{"node":0,"path":"rotation"}},
            {"sampler":1,"target":{"path":"pointer","extensions":{"KHR_animation_pointer":
                {"pointer":"/nodes/3/extensions/KHR_node_visibility/visible"}}}}],
            "samplers":[]}]}"#;
        let (rest, found) = split_pointer_channels(json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&rest).unwrap();
        assert_eq!(v["animations"][0]["channels"].as_array().unwrap().len(), 1);
        assert_eq!(v["animations"][0]["channels"][0]["target"]["path"], "rotation");
        assert_eq!((found[0].animation, found[0].sampler), (0, 1));
        assert_eq!(visibility_node(&found[0].pointer), Some(3));
        assert_eq!(visibility_node("/nodes/3/rotation"), None);
        assert_eq!(visibility_node("/nodes/x/extensions/KHR_node_visibility/visible"), None);
        assert!(split_pointer_channels(br#"{"asset":{"version":"2.0"}}"#).is_none());
    }
}
