//! Node visibility (issue 33 §4): `KHR_node_visibility` for the rest state and
//! `KHR_animation_pointer` channels for its animation.
//!
//! - **Rest.** A node hidden in the rest pose (the first animation at its first frame, as the
//!   node's TRS) gets `"extensions": {"KHR_node_visibility": {"visible": false}}`. That
//!   extension hides the node *and all its descendants* (KHR_node_visibility, "Extending
//!   Nodes"), while keyscene's nodes hide alone (3DS hide tracks, FBX `Visibility` as ufbx
//!   reads it): a node that is hidden while a descendant shows — at rest or at any sampled
//!   time of any written animation ([`States`]) — is written visible and not animated, with a
//!   warning (its `extras` still say `"hidden": true` when hidden at rest).
//! - **Animation.** A node whose hidden state changes during an animation gets a channel
//!   whose target is `{"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer":
//!   "/nodes/N/extensions/KHR_node_visibility/visible"}}}` (no `node`, as the extension
//!   requires), its sampler `STEP` with an unsigned-byte `SCALAR` output (1 visible, 0 hidden:
//!   KHR_animation_pointer, "Output Accessor Component Types", says a `bool` property takes
//!   unsigned bytes and `STEP`). The states are those of `Scene::evaluate` at every frame of
//!   the animation's range and at every key of its hide/`Visibility` channels; a key is
//!   written where the state changes (and at the first sample), at `frame / fps` seconds like
//!   the other channels, rounded down to an `f32` (so that sampling at the key's own time
//!   shows the new state). A change between two samples (a cubic `Visibility` curve crossing
//!   1 between keys) is written at the next sample. The node then also carries
//!   `KHR_node_visibility` (with `visible` at rest), which the pointer needs to exist.
//! - Both extensions go into `extensionsUsed`, never `extensionsRequired`: a viewer without
//!   them shows every node, as glTF core does.
//!
//! The pointer channels cannot be expressed in `gltf-json` (its channel target requires a
//! `node`), so [`Out`] keeps them aside and `finish` adds them to the JSON.

use gltf_json as json;
use json::validation::Checked::Valid;

use super::nodes::Rest;
use super::Out;
use crate::anim::{ChannelTarget, Time};
use crate::formats::gltf::warning;
use crate::scene::Scene;

/// The `KHR_node_visibility` extension name.
pub(super) const NODE_VISIBILITY: &str = "KHR_node_visibility";
/// The `KHR_animation_pointer` extension name.
pub(super) const ANIMATION_POINTER: &str = "KHR_animation_pointer";

/// A `KHR_animation_pointer` channel to add to the JSON of animation `animation`.
pub(super) struct PointerChannel {
    /// Index of the glTF animation.
    pub(super) animation: usize,
    /// Index of its sampler.
    pub(super) sampler: u32,
    /// The JSON pointer it animates.
    pub(super) pointer: String,
}

/// The largest `f32` not above `t`: a STEP key stored there switches no later than `t`, so a
/// reader sampling at `t` itself sees the new state (nearest rounding may land just after).
fn f32_at_or_below(t: f64) -> f32 {
    let r = t as f32;
    if f64::from(r) <= t {
        return r;
    }
    // One step towards −∞ (`f32::next_down`, which needs Rust 1.86; the MSRV is 1.85).
    if r > 0.0 {
        f32::from_bits(r.to_bits() - 1)
    } else if r < 0.0 {
        f32::from_bits(r.to_bits() + 1)
    } else {
        -f32::from_bits(1)
    }
}

/// Whether node `i` of `scene` or one of its descendants is shown in `hidden` (per node).
fn shows_below(scene: &Scene, i: usize, hidden: &[bool]) -> bool {
    let mut stack: Vec<usize> = scene.nodes[i].children.clone();
    while let Some(k) = stack.pop() {
        if !hidden.get(k).copied().unwrap_or(false) {
            return true;
        }
        stack.extend(scene.nodes[k].children.iter().copied());
    }
    false
}

/// Every animation's sampled hidden states and the nodes whose visibility glTF cannot carry.
#[derive(Default)]
pub(super) struct States {
    /// Per scene animation: the sampled frames and, per frame, every node's hidden state
    /// (both empty when the animation drives no visibility or is not written).
    per_animation: Vec<(Vec<f64>, Vec<Vec<bool>>)>,
    /// Nodes hidden while a descendant shows, at rest or at some sample: KHR_node_visibility
    /// would hide the descendant too, so these are written visible and not animated.
    blocked: Vec<bool>,
}

impl States {
    /// Samples every animation `only` allows (all when `None`; none when `animations` is
    /// off) that drives visibility (module docs) and finds the blocked nodes against
    /// `rest_hidden` and those samples.
    pub(super) fn new(
        scene: &Scene,
        rest_hidden: &[bool],
        only: Option<usize>,
        animations: bool,
    ) -> States {
        let n = scene.nodes.len();
        let mut blocked: Vec<bool> = (0..n).map(|i| hides_shown(scene, i, rest_hidden)).collect();
        let mut per_animation = Vec::with_capacity(scene.animations.len());
        for a in 0..scene.animations.len() {
            let wanted = animations && only.is_none_or(|o| o == a);
            let frames = if wanted { sample_frames(scene, a) } else { Vec::new() };
            let states: Vec<Vec<bool>> =
                frames.iter().map(|&f| scene.evaluate(Some(a), Time::Frame(f)).hidden).collect();
            for h in &states {
                for (i, b) in blocked.iter_mut().enumerate() {
                    *b = *b || hides_shown(scene, i, h);
                }
            }
            per_animation.push((frames, states));
        }
        States { per_animation, blocked }
    }
}

impl States {
    /// Whether node `i` is hidden at rest (`rest_hidden`) and in every written animation:
    /// at each sample of one that drives visibility, by its own `hidden` flag in one that
    /// does not ([`WriteOptions::visible_only`](crate::formats::gltf::WriteOptions::visible_only)).
    pub(super) fn hidden_throughout(&self, scene: &Scene, i: usize, rest_hidden: &[bool]) -> bool {
        rest_hidden.get(i).copied().unwrap_or(false)
            && self.per_animation.iter().all(|(frames, states)| {
                if frames.is_empty() {
                    scene.nodes[i].hidden
                } else {
                    states.iter().all(|h| h.get(i).copied().unwrap_or(false))
                }
            })
    }
}

/// Whether node `i` is hidden in `hidden` while one of its descendants shows.
fn hides_shown(scene: &Scene, i: usize, hidden: &[bool]) -> bool {
    hidden.get(i).copied().unwrap_or(false) && shows_below(scene, i, hidden)
}

/// The frames at which animation `a`'s visibility is sampled: every key of its hide and
/// `Visibility` channels and every whole frame of its range (at most 1,000,001 of them);
/// empty when no channel drives visibility.
fn sample_frames(scene: &Scene, a: usize) -> Vec<f64> {
    let anim = &scene.animations[a];
    let mut frames: Vec<f64> = Vec::new();
    for ch in &anim.channels {
        let drives = matches!(ch.target, ChannelTarget::Hidden(_))
            || ch.target.property_name() == Some("Visibility");
        if drives {
            frames.extend(crate::anim::keep::key_frames(&ch.target).into_iter().flatten());
        }
    }
    if frames.is_empty() {
        return frames;
    }
    let (start, end) = anim.frame_range;
    if start.is_finite() && end.is_finite() && end >= start {
        let first = start.ceil() as i64;
        let last = (end.floor() as i64).min(first.saturating_add(1_000_000));
        frames.extend((first..=last).map(|f| f as f64));
    }
    frames.retain(|f| f.is_finite());
    frames.sort_by(f64::total_cmp);
    frames.dedup();
    frames
}

impl Out {
    fn use_extension(&mut self, name: &str) {
        if !self.root.extensions_used.iter().any(|e| e == name) {
            self.root.extensions_used.push(name.to_string());
        }
    }

    /// Sets `KHR_node_visibility` on glTF node `base + i` to `visible`.
    fn set_visible(&mut self, base: usize, i: usize, visible: bool) {
        let g = &mut self.root.nodes[base + i];
        let ext = g.extensions.get_or_insert_with(Default::default);
        ext.others.insert(NODE_VISIBILITY.into(), serde_json::json!({ "visible": visible }));
        self.use_extension(NODE_VISIBILITY);
    }

    /// The rest state: `visible: false` on every node hidden at rest that is not blocked, and
    /// a warning for each blocked node (module docs).
    pub(super) fn rest_visibility(&mut self, scene: &Scene, base: usize, rest: &Rest) {
        for i in 0..scene.nodes.len() {
            if self.visibility.blocked.get(i).copied().unwrap_or(false) {
                self.warnings.push(warning(
                    format!("node \"{}\"", scene.nodes[i].name),
                    "hidden while a descendant shows, which KHR_node_visibility would hide too: written visible, its visibility not animated",
                ));
            } else if rest.pose.hidden.get(i).copied().unwrap_or(false) {
                self.set_visible(base, i, false);
            }
        }
    }

    /// The `KHR_animation_pointer` channels of scene animation `a`, added to glTF animation
    /// `written` (a new one named after the scene's when `None`: nothing else of it was
    /// written). See the module docs.
    pub(super) fn visibility_channels(
        &mut self,
        scene: &Scene,
        a: usize,
        written: Option<usize>,
        base: usize,
        rest: &Rest,
    ) {
        let Some(sampled) = self.visibility.per_animation.get_mut(a) else { return };
        let (frames, states) = std::mem::take(sampled);
        let fps = scene.animations[a].fps;
        let fps = if fps.is_finite() && fps > 0.0 { fps } else { 30.0 };
        let mut written = written;
        for i in 0..scene.nodes.len() {
            let rest_hidden = rest.pose.hidden.get(i).copied().unwrap_or(false);
            let state = |k: usize| states[k].get(i).copied().unwrap_or(false);
            let blocked = self.visibility.blocked.get(i).copied().unwrap_or(false);
            if blocked || (0..frames.len()).all(|k| state(k) == rest_hidden) {
                continue;
            }
            let keys: Vec<(f32, u8)> = frames
                .iter()
                .enumerate()
                .filter(|&(k, _)| k == 0 || state(k) != state(k - 1))
                .map(|(k, f)| (f32_at_or_below(f / fps), u8::from(!state(k))))
                .collect();
            written = Some(self.pointer_channel(scene, a, written, base + i, &keys));
            self.set_visible(base, i, !rest_hidden);
        }
    }

    /// Pushes the sampler of `keys` (seconds, 1 visible / 0 hidden) for glTF node `node` into
    /// the glTF animation of scene animation `a` and records its pointer channel.
    fn pointer_channel(
        &mut self,
        scene: &Scene,
        a: usize,
        written: Option<usize>,
        node: usize,
        keys: &[(f32, u8)],
    ) -> usize {
        let times: Vec<[f32; 1]> = keys.iter().map(|k| [k.0]).collect();
        let input = self.floats(&times, json::accessor::Type::Scalar, None, true);
        let bytes: Vec<u8> = keys.iter().map(|k| k.1).collect();
        let view = self.view(&bytes, None);
        let output = self.accessor(
            view,
            bytes.len(),
            json::accessor::ComponentType::U8,
            json::accessor::Type::Scalar,
            None,
            None,
        );
        let animation = match written {
            Some(k) => k,
            None => {
                let name = &scene.animations[a].name;
                let name = if name.is_empty() { format!("animation {a}") } else { name.clone() };
                self.root.animations.push(json::Animation {
                    extensions: None,
                    extras: Default::default(),
                    channels: Vec::new(),
                    name: Some(name),
                    samplers: Vec::new(),
                });
                self.root.animations.len() - 1
            }
        };
        let samplers = &mut self.root.animations[animation].samplers;
        samplers.push(json::animation::Sampler {
            extensions: None,
            extras: Default::default(),
            input,
            interpolation: Valid(json::animation::Interpolation::Step),
            output,
        });
        let sampler = (samplers.len() - 1) as u32;
        let pointer = format!("/nodes/{node}/extensions/{NODE_VISIBILITY}/visible");
        self.pointer_channels.push(PointerChannel { animation, sampler, pointer });
        self.use_extension(ANIMATION_POINTER);
        animation
    }
}

/// `root` as JSON with the pointer channels added to their animations.
pub(super) fn with_pointer_channels(
    root: &json::Root,
    channels: &[PointerChannel],
) -> Result<serde_json::Value, serde_json::Error> {
    let mut v = serde_json::to_value(root)?;
    for c in channels {
        let channel = serde_json::json!({
            "sampler": c.sampler,
            "target": {
                "path": "pointer",
                "extensions": { ANIMATION_POINTER: { "pointer": c.pointer } },
            },
        });
        // gltf-json writes an animation without channels as `"channels": null`.
        let list = &mut v["animations"][c.animation]["channels"];
        if !list.is_array() {
            *list = serde_json::Value::Array(Vec::new());
        }
        if let Some(list) = list.as_array_mut() {
            list.push(channel);
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Animation, Channel, Interpolation, Key, Track};
    use crate::scene::{Node, NodeKind};

    /// Nodes `parent` (hidden at rest) → `child`; the child's hide track (3DS style, STEP
    /// keys) hides it at frames 0–9 and shows it from frame 10 at 10 fps when
    /// `child_shows_later`, else keeps it hidden and hides the parent from frame 10.
    fn scene(child_shows_later: bool) -> Scene {
        let mut s = Scene::default();
        for name in ["parent", "child"] {
            let mut n = Node::new(name, NodeKind::Null);
            n.hidden = true;
            s.nodes.push(n);
        }
        s.attach(0, None);
        s.attach(1, Some(0));
        let step = |k: &[(f64, bool)]| {
            Track::new(
                k.iter()
                    .map(|&(frame, value)| Key { frame, value, interpolation: Interpolation::Step })
                    .collect(),
            )
        };
        let (node, keys) = if child_shows_later {
            (1, [(0.0, true), (10.0, false)])
        } else {
            (0, [(0.0, true), (10.0, true)])
        };
        s.animations.push(Animation {
            name: "a".into(),
            fps: 10.0,
            frame_range: (0.0, 20.0),
            channels: vec![Channel { node, target: ChannelTarget::Hidden(step(&keys)) }],
        });
        s
    }

    #[test]
    fn a_hidden_node_over_a_shown_one_is_written_visible_and_warned() {
        // The child shows from frame 10 (1 s) while the parent stays hidden: the extension
        // would hide the child, so the parent is not marked and a warning says so; the child
        // gets a pointer channel with keys (0 s, hidden) and (1 s, shown).
        let out = crate::formats::gltf::write(&scene(true), &Default::default()).unwrap();
        let json = crate::formats::gltf::glb::split(&out.main).unwrap().0;
        let v: serde_json::Value = serde_json::from_slice(json).unwrap();
        let node = |name: &str| {
            v["nodes"].as_array().unwrap().iter().find(|n| n["name"] == name).unwrap().clone()
        };
        assert!(node("parent")["extensions"][NODE_VISIBILITY].is_null());
        assert_eq!(node("child")["extensions"][NODE_VISIBILITY]["visible"], false);
        assert!(out.warnings.iter().any(|w| w.to_string().contains("while a descendant shows")));
        let ch = &v["animations"][0]["channels"][0];
        assert_eq!(ch["target"]["path"], "pointer");
        assert!(ch["target"].get("node").is_none());
        let pointer = ch["target"]["extensions"][ANIMATION_POINTER]["pointer"].as_str().unwrap();
        let child = v["nodes"].as_array().unwrap().iter().position(|n| n["name"] == "child");
        assert_eq!(
            pointer,
            format!("/nodes/{}/extensions/KHR_node_visibility/visible", child.unwrap())
        );
        let sampler = &v["animations"][0]["samplers"][ch["sampler"].as_u64().unwrap() as usize];
        assert_eq!(sampler["interpolation"], "STEP");
        let output = &v["accessors"][sampler["output"].as_u64().unwrap() as usize];
        assert_eq!(
            (output["componentType"].as_u64(), output["count"].as_u64()),
            (Some(5121), Some(2))
        );
        assert!(v["extensionsRequired"].is_null());
        // Read back: the child's hidden state at 0.5 s and 1.5 s.
        let (back, _) = crate::formats::gltf::read(&out.main, &Default::default()).unwrap();
        let c = back.nodes.iter().position(|n| n.name == "child").unwrap();
        let fps = back.animations[0].fps;
        assert!(back.evaluate(Some(0), Time::Frame(0.5 * fps)).hidden[c]);
        assert!(!back.evaluate(Some(0), Time::Frame(1.5 * fps)).hidden[c]);
    }

    #[test]
    fn a_hidden_subtree_is_marked_at_its_root() {
        let out = crate::formats::gltf::write(&scene(false), &Default::default()).unwrap();
        let json = crate::formats::gltf::glb::split(&out.main).unwrap().0;
        let v: serde_json::Value = serde_json::from_slice(json).unwrap();
        for n in v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["name"] == "parent" || n["name"] == "child")
        {
            assert_eq!(n["extensions"][NODE_VISIBILITY]["visible"], false, "{n}");
        }
        assert_eq!(v["extensionsUsed"], serde_json::json!([NODE_VISIBILITY]));
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }

    #[test]
    fn key_times_round_down_to_the_f32_at_or_below() {
        // 4/24 s: nearest f32 rounding goes above (0.16666667163…), the key must not.
        for t in [4.0 / 24.0, 1.0 / 3.0, 0.1, 2.0, -0.1, 1e-50, -1e-50, 0.0] {
            let r = f32_at_or_below(t);
            assert!(f64::from(r) <= t, "{t}: {r}");
            // The next f32 up is above t: r is the largest at or below.
            let up = if r >= 0.0 && r.to_bits() != 0x8000_0001 {
                f32::from_bits(if r == 0.0 { 1 } else { r.to_bits() + 1 })
            } else {
                f32::from_bits(r.to_bits() - 1)
            };
            assert!(f64::from(up) > t, "{t}: {r} then {up}");
        }
    }
}
