//! Which camera a preview opens on and what the automatic camera frames (issue 15 §3): the
//! scene's first camera when it has one, as 3D Studio, 3ds Max and Play3da open a scene, else
//! [`View::auto`](super::View::auto) round the geometry of the whole animation range, so the
//! model stays in view while it moves (a box of the first frame alone can lose it).

use glam::DVec3;

use crate::anim::{AnimationChoice, PoseOptions, Time};
use crate::scene::{NodeId, NodeKind, Scene};

use super::posed_bounds;

/// The most instants [`range_bounds`] poses over an animation's range (besides the ones it is
/// given): every whole frame when the range has no more, else this many evenly spaced ones,
/// both ends included.
pub const RANGE_SAMPLES: usize = 61;

/// The scene's first camera: the first node, in node order, that shows one of
/// [`Scene::cameras`]; `None` when the scene has no camera.
pub fn first_camera(scene: &Scene) -> Option<NodeId> {
    (0..scene.nodes.len()).find(|&n| match scene.nodes[n].kind {
        NodeKind::Camera(c) => c < scene.cameras.len(),
        _ => false,
    })
}

/// The instants [`range_bounds`] poses for animation `animation` (an index
/// [`Scene::choose_animation`] gave; `None`: the rest pose only): the animation's frame range
/// sampled as [`RANGE_SAMPLES`] says, in frames of the file's clock.
pub fn range_times(scene: &Scene, animation: Option<usize>) -> Vec<Time> {
    let Some(a) = animation.and_then(|i| scene.animations.get(i)) else {
        return vec![Time::Frame(0.0)];
    };
    let (start, end) = a.frame_range;
    if !(start.is_finite() && end.is_finite()) || end <= start {
        return vec![Time::Frame(if start.is_finite() { start } else { 0.0 })];
    }
    let whole = (end - start).floor();
    if whole < RANGE_SAMPLES as f64 - 1.0 {
        let mut t: Vec<Time> =
            (0..=whole as usize).map(|k| Time::Frame(start + k as f64)).collect();
        if start + whole < end {
            t.push(Time::Frame(end));
        }
        return t;
    }
    let n = RANGE_SAMPLES - 1;
    (0..=n).map(|k| Time::Frame(start + (end - start) * k as f64 / n as f64)).collect()
}

/// The box `(min, max)` round the visible geometry (world space, deformed, as
/// [`posed_bounds`]) of the scene posed by `opts` at every instant of [`range_times`] of its
/// animation and at every instant of `also` (the frames being rendered): what the automatic
/// camera frames. `None` when nothing is visible at any of them.
///
/// # Errors
/// As [`Scene::pose`]: an animation or bind pose `opts` names that the scene lacks.
pub fn range_bounds(
    scene: &Scene,
    opts: &PoseOptions,
    also: &[Time],
) -> Result<Option<(DVec3, DVec3)>, crate::Error> {
    let animation = scene.choose_animation(&opts.animation)?;
    let mut bounds: Option<(DVec3, DVec3)> = None;
    let times = range_times(scene, animation);
    for &t in times.iter().chain(also) {
        let at = opts.clone().animation(AnimationChoice::from(animation)).at(t);
        if let Some((c, d)) = posed_bounds(scene, &scene.pose(&at)?.0) {
            bounds = Some(bounds.map_or((c, d), |(a, b)| (a.min(c), b.max(d))));
        }
    }
    Ok(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::Animation;
    use crate::scene::{Camera, FovAxis, Node};

    fn camera() -> Camera {
        Camera::new("", 45.0, FovAxis::Vertical)
    }

    fn scene_with_range(range: (f64, f64)) -> Scene {
        let mut s = Scene::default();
        s.animations.push(Animation { frame_range: range, ..Default::default() });
        s
    }

    #[test]
    fn a_short_range_is_posed_at_every_whole_frame_and_its_end() {
        let s = scene_with_range((-1.0, 2.5));
        let frames: Vec<f64> = range_times(&s, Some(0))
            .into_iter()
            .map(|t| match t {
                Time::Frame(f) => f,
                Time::Seconds(_) => f64::NAN,
            })
            .collect();
        assert_eq!(frames, [-1.0, 0.0, 1.0, 2.0, 2.5]);
    }

    #[test]
    fn a_long_range_is_posed_at_evenly_spaced_instants_with_both_ends() {
        let s = scene_with_range((0.0, 600.0));
        let t = range_times(&s, Some(0));
        assert_eq!(t.len(), RANGE_SAMPLES);
        assert_eq!(t[0], Time::Frame(0.0));
        assert_eq!(t[1], Time::Frame(10.0));
        assert_eq!(t[RANGE_SAMPLES - 1], Time::Frame(600.0));
    }

    #[test]
    fn the_first_camera_is_the_first_camera_node_in_node_order() {
        let mut s = Scene::default();
        s.cameras.push(camera());
        s.cameras.push(camera());
        s.nodes.push(Node::new("group", NodeKind::Null));
        s.nodes.push(Node::new("second", NodeKind::Camera(1)));
        s.nodes.push(Node::new("first", NodeKind::Camera(0)));
        assert_eq!(first_camera(&s), Some(1));
        s.nodes[1].kind = NodeKind::Camera(7); // no such camera
        assert_eq!(first_camera(&s), Some(2));
    }
}
