//! Animated user properties ([`crate::scene::user_props`]): a node's user property is animated
//! by the [`ChannelTarget::Property`](super::ChannelTarget::Property) channels (or layered
//! property channels) of that node named after it — `Name` for a one-value property, `Name|X`,
//! `Name|Y`, `Name|Z` for the components of a vector or colour — as the FBX reader makes them
//! from the property's `AnimationCurveNode`.

use super::Time;
use crate::scene::{NodeId, Scene, UserProperty};

/// The component (0–2) that channel `channel` animates of user property `name`: 0 for the
/// name itself, 0–2 for `name|X`, `name|Y`, `name|Z`; `None` for other names.
pub fn user_property_component(channel: &str, name: &str) -> Option<usize> {
    let rest = channel.strip_prefix(name)?;
    match rest {
        "" => Some(0),
        "|X" => Some(0),
        "|Y" => Some(1),
        "|Z" => Some(2),
        _ => None,
    }
}

impl Scene {
    /// Whether any animation animates user property `name` of node `node`.
    pub fn animated_user_property(&self, node: NodeId, name: &str) -> bool {
        self.animations.iter().flat_map(|a| &a.channels).any(|c| {
            c.node == node
                && c.target
                    .property_name()
                    .is_some_and(|p| user_property_component(p, name).is_some())
        })
    }

    /// Node `node`'s user properties at `time` of animation `animation` (index into
    /// [`Scene::animations`]; `None` or an index past the end: the stored values): each
    /// animated component from its channel, the others as stored. Integers, enum indices and
    /// booleans take the animated value truncated toward zero, as ufbx's `evaluate_prop`
    /// does ([`UserValue::with_components`](crate::scene::UserValue::with_components)).
    /// Empty when `node` is out of range.
    pub fn user_properties_at(
        &self,
        animation: Option<usize>,
        node: NodeId,
        time: Time,
    ) -> Vec<UserProperty> {
        let Some(n) = self.nodes.get(node) else { return Vec::new() };
        let mut props = n.user_properties().to_vec();
        let Some(anim) = animation.and_then(|a| self.animations.get(a)) else { return props };
        let frame = time.to_frame(anim.fps);
        for p in &mut props {
            let mut c: [Option<f64>; 3] = [None; 3];
            for ch in anim.channels.iter().filter(|ch| ch.node == node) {
                let Some(channel) = ch.target.property_name() else { continue };
                let Some(k) = user_property_component(channel, &p.name) else { continue };
                if let Some((_, v)) = ch.target.sample_property(frame) {
                    c[k] = Some(v);
                }
            }
            if c.iter().any(Option::is_some) {
                p.value = p.value.with_components(&c);
            }
        }
        props
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, Track};
    use crate::scene::{Node, NodeKind, UserValue};

    fn linear(keys: &[(f64, f64)]) -> Track<f64> {
        Track::new(
            keys.iter()
                .map(|&(frame, value)| Key { frame, value, interpolation: Interpolation::Linear })
                .collect(),
        )
    }

    #[test]
    fn channels_named_after_a_property_animate_its_components() {
        let mut s = Scene::default();
        let mut n = Node::new("a", NodeKind::Null);
        let prop = |name: &str, value| UserProperty {
            name: name.into(),
            value,
            min: None,
            max: None,
            flags: "A+U".into(),
        };
        n.set_user_properties(vec![
            prop("V", UserValue::Vector(glam::DVec3::new(1.0, 2.0, 3.0))),
            prop("I", UserValue::Int(7)),
            prop("VV", UserValue::Number(5.0)),
        ]);
        s.nodes.push(n);
        let ch = |name: &str, t| Channel {
            node: 0,
            target: ChannelTarget::Property { name: name.into(), track: t },
        };
        s.animations.push(Animation {
            fps: 10.0,
            channels: vec![
                ch("V|Y", linear(&[(0.0, 0.0), (10.0, 10.0)])),
                ch("I", linear(&[(0.0, 0.0), (10.0, -10.0)])),
            ],
            ..Animation::default()
        });
        // Frame 5 (0.5 s): V.y = 5, I = trunc(-5.0) = -5; VV is not animated by "V|…".
        let at = s.user_properties_at(Some(0), 0, Time::Seconds(0.5));
        assert_eq!(at[0].value, UserValue::Vector(glam::DVec3::new(1.0, 5.0, 3.0)));
        let at = s.user_properties_at(Some(0), 0, Time::Frame(2.5));
        assert_eq!(at[1].value, UserValue::Int(-2));
        assert_eq!(at[2].value, UserValue::Number(5.0));
        assert!(s.animated_user_property(0, "V") && !s.animated_user_property(0, "VV"));
        assert_eq!(s.user_properties_at(None, 0, Time::Frame(5.0))[1].value, UserValue::Int(7));
    }
}
