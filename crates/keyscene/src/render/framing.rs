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

/// Which camera [`render_still`] renders through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CameraChoice {
    /// The scene's first camera ([`first_camera`]), else the automatic camera (what
    /// `keyscene render` does without `--camera`).
    #[default]
    Default,
    /// The automatic camera framing the geometry of the whole animation range
    /// ([`View::auto`](super::View::auto)), `--camera auto`.
    Auto,
    /// The camera node of this name, else the camera (`Scene::cameras`) of this name.
    Named(String),
}

/// The camera node named `name` (node name first, else the camera's own name).
///
/// Errors: [`crate::Error::Option`] naming the cameras the scene has.
pub fn find_camera(scene: &Scene, name: &str) -> Result<NodeId, crate::Error> {
    let cameras: Vec<usize> = (0..scene.nodes.len())
        .filter(|&n| matches!(scene.nodes[n].kind, NodeKind::Camera(_)))
        .collect();
    cameras
        .iter()
        .copied()
        .find(|&n| scene.nodes[n].name == name)
        .or_else(|| {
            cameras.iter().copied().find(|&n| match scene.nodes[n].kind {
                NodeKind::Camera(c) => scene.cameras.get(c).is_some_and(|c| c.name == name),
                _ => false,
            })
        })
        .ok_or_else(|| {
            let names: Vec<String> =
                cameras.iter().map(|&n| crate::quoted(&scene.nodes[n].name).to_string()).collect();
            crate::Error::Option(format!(
                "--camera {}: no camera of that name (the file has: {}; or use auto)",
                crate::quoted(name),
                if names.is_empty() { "none".into() } else { names.join(", ") }
            ))
        })
}

/// A scene camera's near plane: 10⁻⁴ of the rendered geometry's box diagonal (the scene's own
/// near values are often fog ranges, not clip planes).
pub fn scene_near(bounds: Option<(DVec3, DVec3)>) -> f64 {
    let size = bounds.map_or(1.0, |(a, b)| (b - a).length());
    if size > 0.0 && size.is_finite() {
        size * 1e-4
    } else {
        1e-4
    }
}

/// One image of the scene posed as `pose` says (its animation and time; no time: the
/// animation's first frame), through `camera`, as `keyscene render FILE -o OUT.png --frame F`
/// draws it: the automatic camera frames the whole animation range and this instant; textures
/// are resolved in `base_dir`. Returns the image and what the renderer reported (missing
/// textures, no visible geometry).
///
/// Errors: posing errors ([`Scene::pose`]), an unknown camera name ([`find_camera`]),
/// a camera whose matrix is degenerate at that instant, and the renderer's.
pub fn render_still(
    scene: &Scene,
    base_dir: Option<&std::path::Path>,
    pose: &PoseOptions,
    camera: &CameraChoice,
    opts: &super::Options,
) -> Result<(super::Image, Vec<crate::scene::Warning>), crate::Error> {
    let animation = scene.choose_animation(&pose.animation)?;
    let time = pose.time.unwrap_or_else(|| {
        Time::Frame(
            animation.and_then(|i| scene.animations.get(i)).map_or(0.0, |a| a.frame_range.0),
        )
    });
    let camera_node = match camera {
        CameraChoice::Default => first_camera(scene),
        CameraChoice::Auto => None,
        CameraChoice::Named(name) => Some(find_camera(scene, name)?),
    };
    let mut range = pose.clone().animation(AnimationChoice::from(animation));
    range.time = None;
    let bounds = range_bounds(scene, &range, &[time])?;
    let mut warnings = Vec::new();
    if bounds.is_none() {
        warnings.push(crate::scene::Warning {
            offset: None,
            place: "render".into(),
            message: "no visible geometry to render".into(),
        });
    }
    let (min, max) = bounds.unwrap_or((DVec3::splat(-1.0), DVec3::splat(1.0)));
    let (posed, _) = scene.pose(&range.at(time))?;
    let view = match camera_node {
        None => super::View::auto(min, max, scene.meta.axes, opts.aspect()),
        Some(node) => {
            super::View::from_camera(scene, &posed, node, opts.aspect(), scene_near(bounds))
                .ok_or_else(|| {
                    crate::Error::Option(format!(
                        "camera {}: the camera's matrix is degenerate at frame {} (the automatic \
                     camera renders through it)",
                        crate::quoted(&scene.nodes[node].name),
                        posed.frame
                    ))
                })?
        }
    };
    let mut renderer = super::Renderer::new(scene, base_dir);
    let image = renderer.render(&posed, &view, opts)?;
    warnings.extend(renderer.take_warnings());
    Ok((image, warnings))
}
