//! Each node's rest transform: its animated value at the first frame of the animation.

use super::Builder;
use crate::anim::{Animation, ChannelTarget};

impl<'f> Builder<'_, 'f> {
    /// Sets every node's rest transform to its animated value at frame `start`.
    pub(super) fn rest_pose(&mut self, anim: &Animation, start: f64) {
        for ch in &anim.channels {
            let tr = &mut self.scene.nodes[ch.node].transform;
            match &ch.target {
                ChannelTarget::Translation(t) => {
                    tr.translation = t.sample(start).unwrap_or(tr.translation)
                }
                ChannelTarget::Rotation(r) => tr.rotation = r.sample(start).unwrap_or(tr.rotation),
                ChannelTarget::Scale(t) => tr.scale = t.sample(start).unwrap_or(tr.scale),
                _ => {}
            }
        }
    }
}
