//! Several animations in one layer: the root prim's variant set `animation`, one variant per
//! animation (FBX take or stack), each holding the whole node prim tree as that animation
//! moves it — its time samples, rigs (`Skeleton` with its `SkelAnimation`), deformed points,
//! visibility and parameters. The selection is the animation the options name (the first by
//! default), so a reader that ignores variants shows what a one-animation layer showed.
//! docs/usd.md, "Several animations", says why the form and what a reader sees.

use super::names::Siblings;
use super::text::{string, Text};
use super::{xform, WriteOptions, ROOT};
use crate::scene::Scene;

/// The name of the variant set holding the animations.
pub const VARIANT_SET: &str = "animation";

/// The animations written as variants (every one, in scene order) and the index of the
/// selected one among them, or `None` (and 0) for a layer of one animation or none: one
/// animation or none in the scene, [`WriteOptions::all_animations`] off, or no animation asked
/// for ([`WriteOptions::animation`] `None` or past the end).
pub fn chosen(scene: &Scene, opts: &WriteOptions) -> (Option<Vec<usize>>, usize) {
    match opts.animation {
        Some(a)
            if opts.all_animations && scene.animations.len() > 1 && a < scene.animations.len() =>
        {
            (Some((0..scene.animations.len()).collect()), a)
        }
        _ => (None, 0),
    }
}

/// The variants: names and what each holds.
#[derive(Debug, Clone)]
pub struct Variants {
    /// Variant names: the animations' names as USD identifiers, unique ([`Siblings`]).
    pub names: Vec<String>,
    /// The animations' own names.
    pub sources: Vec<String>,
    /// Per variant: its written frames (`startTimeCode`, `endTimeCode` of its timeline) and its
    /// frame rate.
    pub ranges: Vec<((f64, f64), f64)>,
}

impl Variants {
    /// The variants of `animations` (indices into [`Scene::animations`]) with their
    /// timelines `lines`.
    pub fn new(scene: &Scene, animations: &[usize], lines: &[xform::Timeline]) -> Variants {
        let mut taken = Siblings::default();
        let sources: Vec<String> =
            animations.iter().map(|&a| scene.animations[a].name.clone()).collect();
        Variants {
            names: sources.iter().map(|n| taken.claim(n)).collect(),
            sources,
            ranges: lines.iter().map(|l| (l.range, l.fps)).collect(),
        }
    }

    /// The root prim's metadata lines: the selection (`variants`) and the set
    /// (`variantSets`).
    pub fn root_metadata(&self, selected: usize) -> Vec<String> {
        vec![
            "variants = {".into(),
            format!("    string {VARIANT_SET} = {}", string(&self.names[selected])),
            "}".into(),
            format!("prepend variantSets = {}", string(VARIANT_SET)),
        ]
    }

    /// Variant `i`'s metadata: `customData` with the animation's own name
    /// (`animationName`), its written frames (`startTimeCode`, `endTimeCode`) and frame rate
    /// (`timeCodesPerSecond`). Selected, they are the root prim's `customData`.
    pub fn metadata(&self, t: &mut Text, i: usize) -> Vec<String> {
        let ((start, end), fps) = self.ranges[i];
        vec![
            "customData = {".into(),
            format!("    string animationName = {}", string(&self.sources[i])),
            format!("    double endTimeCode = {}", t.num(end)),
            format!("    double startTimeCode = {}", t.num(start)),
            format!("    double timeCodesPerSecond = {}", t.num(fps)),
            "}".into(),
        ]
    }

    /// Each variant whose name differs from its animation's, as a rename
    /// (`"animation"`, source name, `/root{animation=Name}`).
    pub fn report_renames(&self, renamed: &mut Vec<(String, String, String)>) {
        for (name, source) in self.names.iter().zip(&self.sources) {
            if name != source {
                renamed.push((
                    "animation".into(),
                    source.clone(),
                    format!("/{ROOT}{{{VARIANT_SET}={name}}}"),
                ));
            }
        }
    }

    /// A warning per variant whose frame rate is not the stage's (`timeCodesPerSecond`, the
    /// selected one's): its time codes are its own frames.
    pub fn rate_warnings(&self, selected: usize) -> Vec<String> {
        let stage = self.ranges[selected].1;
        (0..self.names.len())
            .filter(|&i| self.ranges[i].1 != stage)
            .map(|i| {
                format!(
                    "animation {}: {} frames per second, the stage's timeCodesPerSecond is {}: its variant's time codes are its frames (its rate is in the variant's customData)",
                    crate::quoted(&self.sources[i]),
                    self.ranges[i].1,
                    stage
                )
            })
            .collect()
    }
}

/// The warnings of each animation's passes, to be reported once: a warning every animation
/// gave as it is, any other with the names of the animations that gave it.
#[derive(Debug, Default)]
pub struct Warnings {
    /// Each warning, in first-seen order, with the animations (indices) that gave it.
    seen: Vec<(String, Vec<usize>)>,
}

impl Warnings {
    /// Adds the warnings of animation `i`.
    pub fn add(&mut self, i: usize, warnings: Vec<String>) {
        for w in warnings {
            match self.seen.iter_mut().find(|(s, _)| *s == w) {
                Some((_, by)) => {
                    if !by.contains(&i) {
                        by.push(i);
                    }
                }
                None => self.seen.push((w, vec![i])),
            }
        }
    }

    /// The warnings as reported, `names` the animations' names (empty for a layer of one
    /// animation: every warning as it is).
    pub fn merged(self, names: &[&str]) -> Vec<String> {
        self.seen
            .into_iter()
            .map(|(w, by)| {
                if names.is_empty() || by.len() == names.len() {
                    return w;
                }
                let who: Vec<String> =
                    by.iter().map(|&i| crate::quoted(names[i]).to_string()).collect();
                format!("animation {}: {w}", who.join(", "))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::ChannelTarget;
    use crate::scene::animation::{Animation, Channel, Interpolation, Key, Track};
    use crate::scene::{Node, NodeKind};
    use glam::DVec3;

    /// One node moved along X by two animations of one name as USD spells it: "Walk cycle"
    /// to x = 10 over frames 0–20, "Walk_cycle" to x = −4 over frames 0–8.
    fn two_takes() -> Scene {
        let mut s = Scene::default();
        s.nodes.push(Node::new("a", NodeKind::Null));
        s.attach(0, None);
        let take = |name: &str, end: f64, x: f64| {
            let key = |frame, x| Key {
                frame,
                value: DVec3::new(x, 0.0, 0.0),
                interpolation: Interpolation::Linear,
            };
            Animation {
                name: name.into(),
                fps: 30.0,
                frame_range: (0.0, end),
                channels: vec![Channel {
                    node: 0,
                    target: ChannelTarget::Translation(Track::new(vec![
                        key(0.0, 0.0),
                        key(end, x),
                    ])),
                }],
            }
        };
        s.animations.push(take("Walk cycle", 20.0, 10.0));
        s.animations.push(take("Walk_cycle", 8.0, -4.0));
        s
    }

    #[test]
    fn every_animation_is_a_variant_the_chosen_one_selected() {
        let scene = two_takes();
        let opts = WriteOptions { animation: Some(1), ..Default::default() };
        let layer = super::super::write(&scene, &opts).unwrap();
        let text = &layer.text;
        // The stage's timeline is the selected animation's (frames 0–8).
        assert!(text.contains("startTimeCode = 0.0") && text.contains("endTimeCode = 8.0"));
        assert!(text.contains("string animation = \"Walk_cycle_2\""), "{text}");
        assert!(text.contains("prepend variantSets = \"animation\""));
        assert!(text.contains("variantSet \"animation\" = {"));
        let first = text.find("\"Walk_cycle\" (").unwrap();
        let second = text.find("\"Walk_cycle_2\" (").unwrap();
        assert!(first < second);
        // Each variant holds its own animation's keys: the linear segments kept as two keys.
        let (a, b) = text[first..].split_at(second - first);
        assert!(a.contains("20.0: (10.0, 0.0, 0.0)") && !a.contains("-4.0"), "{a}");
        assert!(b.contains("8.0: (-4.0, 0.0, 0.0)") && !b.contains("10.0, 0.0"), "{b}");
        assert!(a.contains("string animationName = \"Walk cycle\""));
        assert!(b.contains("double endTimeCode = 8.0"));
        let renamed: Vec<_> = layer.report.renamed.iter().map(|r| (&r.1[..], &r.2[..])).collect();
        assert_eq!(
            renamed,
            [
                ("Walk cycle", "/root{animation=Walk_cycle}"),
                ("Walk_cycle", "/root{animation=Walk_cycle_2}")
            ]
        );
        assert!(!layer.report.warnings.iter().any(|w| w.contains("other animation")));
    }

    #[test]
    fn one_animation_alone_when_asked() {
        let scene = two_takes();
        let opts = WriteOptions { all_animations: false, ..Default::default() };
        let layer = super::super::write(&scene, &opts).unwrap();
        assert!(!layer.text.contains("variantSet"));
        assert!(layer.report.warnings.iter().any(|w| w.contains("1 other animation")));
    }

    #[test]
    fn warnings_every_animation_gives_are_reported_once_others_name_theirs() {
        let mut w = Warnings::default();
        w.add(0, vec!["a".into(), "b".into()]);
        w.add(1, vec!["a".into(), "c".into()]);
        assert_eq!(
            w.merged(&["Walk", "Run"]),
            ["a", "animation \"Walk\": b", "animation \"Run\": c"]
        );
        let mut one = Warnings::default();
        one.add(0, vec!["a".into()]);
        assert_eq!(one.merged(&[]), ["a"]);
    }
}
