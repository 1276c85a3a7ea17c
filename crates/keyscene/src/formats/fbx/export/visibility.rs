//! Animated visibility written back (issue 33 §4): a node whose hidden state changes during an
//! animation gets an `AnimationCurveNode` `Visibility` on its `Model` (`d|Visibility`, OP
//! connection to the model's `Visibility`) with one curve of constant (`KeyAttrFlags` 0x2)
//! keys: 1 shown, 0 hidden — what ufbx truncates back to the same state. The states are
//! `Scene::evaluate`'s at every key of the node's hide/`Visibility` channels and every frame of
//! the written range ([`resample_frames`]); a key is written at the first sample and where the
//! state changes. The rest state is the model's `Visibility` (0 when hidden, see `export.rs`).

use glam::DVec3;

use super::animation::{resample_frames, Take};
use super::keys::{FbxCurve, FbxKey, FLAG_CONSTANT};
use super::{ktime, Builder, KEY_DEFAULT_WEIGHTS};
use crate::anim::{ChannelTarget, Time};
use crate::formats::fbx::write::WriteError;
use crate::quoting::quoted;

impl Builder {
    /// The `Visibility` curves of animation `take.ai` on the models `model_ids` (module docs).
    pub(super) fn visibility_curves(
        &mut self,
        take: &Take<'_>,
        model_ids: &[i64],
    ) -> Result<(), WriteError> {
        let Take { scene, ai, layer, fps, range, opts } = *take;
        let anim = &scene.animations[ai];
        let mut frames: Vec<f64> = Vec::new();
        for ch in &anim.channels {
            if matches!(ch.target, ChannelTarget::Hidden(_))
                || ch.target.property_name() == Some("Visibility")
            {
                frames.extend(crate::anim::keep::key_frames(&ch.target).into_iter().flatten());
            }
        }
        if frames.is_empty() {
            return Ok(());
        }
        frames.extend(resample_frames(range, opts.max_keys, || {
            format!("animation {}: the Visibility track", quoted(&anim.name))
        })?);
        frames.retain(|f| f.is_finite() && *f >= range.0 && *f <= range.1);
        frames.sort_by(f64::total_cmp);
        frames.dedup();
        let states: Vec<Vec<bool>> =
            frames.iter().map(|&f| scene.evaluate(Some(ai), Time::Frame(f)).hidden).collect();
        for (i, &model) in model_ids.iter().enumerate().take(scene.nodes.len()) {
            let state = |k: usize| states[k].get(i).copied().unwrap_or(false);
            let rest = scene.nodes[i].hidden;
            if (0..frames.len()).all(|k| state(k) == rest) {
                continue;
            }
            let keys: Vec<FbxKey> = (0..frames.len())
                .filter(|&k| k == 0 || state(k) != state(k - 1))
                .map(|k| FbxKey {
                    time: ktime(frames[k] / fps),
                    value: if state(k) { 0.0 } else { 1.0 },
                    flags: FLAG_CONSTANT,
                    data: [0.0, 0.0, f32::from_bits(KEY_DEFAULT_WEIGHTS), 0.0],
                })
                .collect();
            let curve = FbxCurve { keys, pre: None, post: None };
            let shown = DVec3::splat(if rest { 0.0 } else { 1.0 });
            self.curve_node(
                "Visibility",
                layer,
                (model, "Visibility"),
                &[("d|Visibility", shown)],
                &[Some(curve)],
            );
        }
        Ok(())
    }
}
