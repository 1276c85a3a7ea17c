//! Animated values other than transforms, joints and points (docs/usd.md, "Visibility" and
//! "Cameras and lights"):
//!
//! - **Visibility** ([`visibility`]): a mesh's shown state over time, as `token visibility`
//!   time samples on its `Mesh` prim. USD holds a token between samples, so a sample is
//!   written at the first frame and at every time the evaluated state changes: the states
//!   of [`Scene::evaluate_values`] at every frame and key of the timeline, each change found to
//!   within [`CHANGE_PRECISION`] of a frame by bisection (a step key lands on its own frame).
//! - **Camera and light parameters** ([`camera_focal`], [`light_values`]): the field of view
//!   as `focalLength`, a light's colour, intensity and spot cone, sampled by the library's
//!   adaptive sampler ([`resample::adaptive`], [`resample::thin`]) for USD's linear
//!   interpolation of `float`/`color3f` samples. Each value's error is relative: the focal
//!   length within the tolerance ([`super::WriteOptions::tolerance`]) of itself, the others within it times their
//!   largest magnitude (at least 1, as the FBX writer's resampled properties: 1e-4 of a colour
//!   component, 4.5e-3° of a 45° cone), at every frame and between frames (seeds at every
//!   whole and half frame, so the error test looks at every quarter frame).

use std::collections::HashMap;

use glam::DVec3;

use super::xform::Timeline;
use crate::anim::{resample, Animation, ChannelTarget, Time};
use crate::scene::{LightKind, Scene};

/// How close to the true time a visibility change is written, in frames (by bisection
/// between the two samples around it; a step key's change is on its frame exactly).
pub const CHANGE_PRECISION: f64 = 1e-6;

/// Whether `target` drives a node's hidden state (3DS hide tracks, FBX `Visibility`).
fn drives_visibility(target: &ChannelTarget) -> bool {
    matches!(target, ChannelTarget::Hidden(_)) || target.property_name() == Some("Visibility")
}

/// Whether node `k` shows no mesh in `pose` (hidden, or no mesh shown).
fn mesh_off(pose: &crate::anim::Pose, k: usize) -> bool {
    pose.hidden.get(k).copied().unwrap_or(false) || pose.mesh.get(k).is_some_and(|m| m.is_none())
}

/// Per mesh node whose shown state changes over `line`: `(frame, hidden)` at the range's start
/// and at every change (module docs). Empty without an animation that drives visibility.
pub fn visibility(scene: &Scene, line: &Timeline) -> HashMap<usize, Vec<(f64, bool)>> {
    let mut out = HashMap::new();
    let Some(anim) = line.animation.and_then(|a| scene.animations.get(a)) else { return out };
    let driven: Vec<usize> = {
        let mut v: Vec<usize> = anim
            .channels
            .iter()
            .filter(|c| drives_visibility(&c.target))
            .map(|c| c.node)
            .filter(|&k| scene.nodes.get(k).is_some_and(|n| n.mesh.is_some()))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if driven.is_empty() {
        return out;
    }
    // Hidden states and shown meshes only: no matrices.
    let off = |f: f64| scene.evaluate_values(Some(anim), Time::Frame(f));
    let states: Vec<Vec<bool>> = line
        .grid
        .iter()
        .map(|&f| {
            let p = off(f);
            driven.iter().map(|&k| mesh_off(&p, k)).collect()
        })
        .collect();
    for (j, &k) in driven.iter().enumerate() {
        let at_grid: Vec<bool> = states.iter().map(|s| s[j]).collect();
        let changes = held_changes(&line.grid, &at_grid, |f| mesh_off(&off(f), k));
        if changes.len() > 1 {
            out.insert(k, changes);
        }
    }
    out
}

/// The samples of a value USD holds between samples (a token, bool or int): the first of
/// `values` (the value at each of `frames`) and one at every change, placed at the earliest
/// time the value `at(frame)` takes the new value, within [`CHANGE_PRECISION`] (a change on a
/// frame of `frames` itself, a step key, is placed there exactly). Between two frames the
/// interval is halved until each change is alone (one that changes and changes back inside an
/// interval of the grid is not seen).
pub fn held_changes<V: PartialEq + Clone>(
    frames: &[f64],
    values: &[V],
    mut at: impl FnMut(f64) -> V,
) -> Vec<(f64, V)> {
    let mut out: Vec<(f64, V)> = Vec::new();
    let (Some(&f0), Some(v0)) = (frames.first(), values.first()) else { return out };
    out.push((f0, v0.clone()));
    for i in 1..frames.len().min(values.len()) {
        if values[i] == values[i - 1] {
            continue;
        }
        let (a, b) = (frames[i - 1], frames[i]);
        // The value just before `b`: a step key on `b` changes there exactly.
        let before = b - CHANGE_PRECISION;
        if before <= a || at(before) != values[i] {
            split(&mut out, (a, values[i - 1].clone()), (before.max(a), None), &mut at);
            out.push((b, values[i].clone()));
            continue;
        }
        split(&mut out, (a, values[i - 1].clone()), (b, Some(values[i].clone())), &mut at);
    }
    out
}

/// The changes inside `(a, b]` (`vb`: the value at `b`, `None` to evaluate it), pushed in
/// time order, by halving the interval down to [`CHANGE_PRECISION`].
fn split<V: PartialEq + Clone>(
    out: &mut Vec<(f64, V)>,
    (a, va): (f64, V),
    (b, vb): (f64, Option<V>),
    at: &mut impl FnMut(f64) -> V,
) {
    // An explicit stack, last interval first (depth ≤ log₂ of the span / precision).
    let vb = vb.unwrap_or_else(|| at(b));
    let mut stack = vec![(a, va, b, vb)];
    while let Some((a, va, b, vb)) = stack.pop() {
        if va == vb {
            continue;
        }
        let m = 0.5 * (a + b);
        if b - a <= CHANGE_PRECISION || m <= a || m >= b {
            out.push((b, vb));
            continue;
        }
        let vm = at(m);
        stack.push((m, vm.clone(), b, vb));
        stack.push((a, va, m, vm));
    }
}

/// `token visibility` of a mesh prim: the rest state as the default value (when hidden) and
/// `changes` ([`visibility`]) as time samples.
pub fn write_visibility(
    t: &mut super::text::Text,
    rest_hidden: bool,
    changes: Option<&[(f64, bool)]>,
) {
    let token = |h: bool| if h { "\"invisible\"" } else { "\"inherited\"" };
    if rest_hidden {
        t.line("token visibility = \"invisible\"");
    }
    if let Some(c) = changes {
        let frames: Vec<f64> = c.iter().map(|x| x.0).collect();
        let states: Vec<bool> = c.iter().map(|x| x.1).collect();
        t.time_samples("token visibility", &frames, &states, |_, &h| token(h).to_string());
    }
}

/// Sample frames of a parameter: the timeline's grid and the half frame after each whole
/// frame of it (so the error test, which looks at the middle of an interval of at most a
/// frame, sees every quarter frame).
fn seeds(line: &Timeline) -> Vec<f64> {
    let mut s: Vec<f64> = line.grid.clone();
    s.extend(
        line.grid
            .iter()
            .filter(|f| f.fract() == 0.0)
            .map(|f| f + 0.5)
            .filter(|&f| f <= line.range.1),
    );
    s.sort_by(f64::total_cmp);
    s.dedup_by(|b, a| *b - *a < resample::MERGE);
    s
}

/// The channels of animation `anim` on node `k` that `keep` accepts, as an animation of their
/// own (the rest of the scene at rest): what [`Scene::evaluate_values`] needs to evaluate
/// one camera's or light's parameters. `None` when there are none.
fn node_channels(
    anim: &Animation,
    k: usize,
    keep: impl Fn(&ChannelTarget) -> bool,
) -> Option<Animation> {
    let channels: Vec<_> =
        anim.channels.iter().filter(|c| c.node == k && keep(&c.target)).cloned().collect();
    if channels.is_empty() {
        return None;
    }
    Some(Animation {
        name: anim.name.clone(),
        fps: anim.fps,
        frame_range: anim.frame_range,
        channels,
    })
}

/// USD's linear interpolation of a vector of `N` values, the error the largest of
/// `|Δᵢ| / scaleᵢ` over the components `only` (all when empty).
pub(super) struct Relative<const N: usize> {
    scale: [f64; N],
    only: std::ops::Range<usize>,
}

impl<const N: usize> resample::Curve<[f64; N]> for Relative<N> {
    type Chord = ([f64; N], [f64; N]);
    fn chord(&self, a: [f64; N], b: [f64; N]) -> Self::Chord {
        (a, b)
    }
    fn at(&self, (a, b): &Self::Chord, s: f64) -> [f64; N] {
        std::array::from_fn(|i| a[i] + (b[i] - a[i]) * s)
    }
    fn error(&self, w: [f64; N], s: [f64; N]) -> f64 {
        self.only.clone().map(|i| (w[i] - s[i]).abs() / self.scale[i]).fold(0.0, f64::max)
    }
}

/// Sample frames and values of `N` components.
pub(super) type Sampled<const N: usize> = (Vec<f64>, Vec<[f64; N]>);

/// Samples `source` over `line` (module docs) and thins each group of components in `groups`
/// on its own: per group, its frames and values; `None` for a group whose value never changes.
pub(super) fn sample<const N: usize>(
    line: &Timeline,
    mut source: impl FnMut(f64) -> [f64; N],
    scale: impl Fn(&[[f64; N]]) -> [f64; N],
    groups: &[std::ops::Range<usize>],
) -> Vec<Option<Sampled<N>>> {
    let seeds = seeds(line);
    let at_seeds: Vec<[f64; N]> = seeds.iter().map(|&f| source(f)).collect();
    let curve = Relative { scale: scale(&at_seeds), only: 0..N };
    let points = seeds.into_iter().zip(at_seeds).collect();
    let tol = line.relative;
    let budget = resample::ADAPTIVE_BUDGET;
    let all = resample::adaptive_from(points, &mut source, &curve, 0.75 * tol, budget);
    groups
        .iter()
        .map(|g| {
            let first = all.values[0];
            if all.values.iter().all(|v| g.clone().all(|i| v[i] == first[i])) {
                return None;
            }
            let c = Relative { scale: curve.scale, only: g.clone() };
            let s = resample::thin(all.clone(), &c, 0.25 * tol);
            Some((s.frames, s.values))
        })
        .collect()
}

/// The focal length (tenths of a scene unit, for a film of `film` along the field of view's
/// axis) of field of view `fov` (degrees); `None` for one that is not in (0°, 180°).
pub fn focal_length(fov: f64, film: f64) -> Option<f64> {
    (fov.is_finite() && fov > 0.0 && fov < 180.0)
        .then(|| film / 2.0 / (fov.to_radians() / 2.0).tan())
}

/// Whether `target` animates a camera's field of view (3DS FOV tracks, FBX `FieldOfView`).
fn drives_fov(target: &ChannelTarget) -> bool {
    matches!(target, ChannelTarget::Fov(_)) || target.property_name() == Some("FieldOfView")
}

/// Camera `c` of node `k`'s focal length over `line` when its field of view is animated
/// (frames and values, tenths of a scene unit for a film of `film`); a field of view outside
/// (0°, 180°) is written as `fallback`° (the caller warns). The field of view is
/// [`Pose::camera_fov`](crate::anim::Pose::camera_fov), or an FBX `FieldOfView` curve on the
/// camera's node as the FBX writer reads it.
pub fn camera_focal(
    scene: &Scene,
    line: &Timeline,
    (k, c): (usize, usize),
    film: f64,
    fallback: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let anim = scene.animations.get(line.animation?)?;
    let own = node_channels(anim, k, drives_fov)?;
    let fov = |f: f64| {
        let property = own.channels.iter().rev().find_map(|ch| match ch.target {
            ChannelTarget::Fov(_) => None,
            _ => ch.target.sample_property(f).map(|(_, v)| v),
        });
        property.unwrap_or_else(|| {
            scene
                .evaluate_values(Some(&own), Time::Frame(f))
                .camera_fov
                .get(c)
                .copied()
                .unwrap_or(fallback)
        })
    };
    let focal = |f: f64| {
        [focal_length(fov(f), film).unwrap_or_else(|| focal_length(fallback, film).unwrap_or(film))]
    };
    // Relative to the value itself: the scale of each sample is its own magnitude, bounded
    // below by the smallest sampled one.
    let scale =
        |v: &[[f64; 1]]| [v.iter().map(|x| x[0].abs()).fold(f64::INFINITY, f64::min).max(1e-12)];
    let mut s = sample(line, focal, scale, std::slice::from_ref(&(0..1)));
    s.pop().flatten().map(|(f, v)| (f, v.into_iter().map(|x| x[0]).collect()))
}

/// Whether `target` animates a light's colour, intensity or cone (3DS colour, hotspot and
/// falloff tracks; FBX `Color`, `Intensity`, `InnerAngle`/`HotSpot`,
/// `OuterAngle`/`Cone angle`/`ConeAngle` curves, as [`crate::anim::Pose`] evaluates them).
fn drives_light(target: &ChannelTarget) -> bool {
    match target {
        ChannelTarget::Color(_) | ChannelTarget::Hotspot(_) | ChannelTarget::Falloff(_) => true,
        _ => matches!(
            target.property_name(),
            Some(
                "Color|X"
                    | "Color|Y"
                    | "Color|Z"
                    | "Intensity"
                    | "InnerAngle"
                    | "HotSpot"
                    | "OuterAngle"
                    | "Cone angle"
                    | "ConeAngle"
            )
        ),
    }
}

/// A light's animated `UsdLux` inputs: per input, its frames and values; `None` for an input
/// that does not change.
#[derive(Debug, Default)]
pub struct LightSamples {
    /// `inputs:color`.
    pub color: Option<(Vec<f64>, Vec<DVec3>)>,
    /// `inputs:intensity`.
    pub intensity: Option<(Vec<f64>, Vec<f64>)>,
    /// `inputs:shaping:cone:angle` (degrees, half the falloff).
    pub cone_angle: Option<(Vec<f64>, Vec<f64>)>,
    /// `inputs:shaping:cone:softness` (`(falloff − hotspot) / falloff`).
    pub cone_softness: Option<(Vec<f64>, Vec<f64>)>,
}

/// The spot cone's `(angle, softness)` as USD's `ShapingAPI` takes them from a falloff and a
/// hotspot (full angles, degrees): half the falloff, and the share of it outside the hotspot.
pub fn cone(falloff: f64, hotspot: f64) -> (f64, f64) {
    let fall = falloff.clamp(0.0, 360.0);
    let hot = hotspot.clamp(0.0, fall);
    (fall / 2.0, if fall > 0.0 { (fall - hot) / fall } else { 0.0 })
}

/// Light `l` of node `k`'s animated inputs over `line` (module docs); `None` when nothing of
/// them is animated. A light switched off keeps intensity 0.
pub fn light_values(
    scene: &Scene,
    line: &Timeline,
    (k, l): (usize, usize),
) -> Option<LightSamples> {
    let anim = scene.animations.get(line.animation?)?;
    let light = scene.lights.get(l)?;
    let own = node_channels(anim, k, drives_light)?;
    let on = light.on;
    let source = |f: f64| {
        let p = scene.evaluate_values(Some(&own), Time::Frame(f));
        let c = p.light_color.get(l).copied().unwrap_or(DVec3::ONE);
        let i = if on { p.light_intensity.get(l).copied().unwrap_or(1.0) } else { 0.0 };
        let hot = p.light_hotspot.get(l).copied().unwrap_or(0.0);
        let fall = p.light_falloff.get(l).copied().unwrap_or(0.0);
        let (angle, soft) = cone(fall, hot);
        [c.x, c.y, c.z, i, angle, soft]
    };
    let scale =
        |v: &[[f64; 6]]| std::array::from_fn(|i| v.iter().map(|x| x[i].abs()).fold(1.0, f64::max));
    let spot = light.kind == LightKind::Spot;
    let groups = [0..3, 3..4, 4..5, 5..6];
    let mut s = sample(line, source, scale, &groups).into_iter();
    let color = s
        .next()
        .flatten()
        .map(|(f, v)| (f, v.iter().map(|x| DVec3::new(x[0], x[1], x[2])).collect()));
    let one =
        |s: Option<Sampled<6>>, i: usize| s.map(|(f, v)| (f, v.iter().map(|x| x[i]).collect()));
    let intensity = one(s.next().flatten(), 3);
    let (cone_angle, cone_softness) =
        if spot { (one(s.next().flatten(), 4), one(s.next().flatten(), 5)) } else { (None, None) };
    let out = LightSamples { color, intensity, cone_angle, cone_softness };
    let none = out.color.is_none()
        && out.intensity.is_none()
        && out.cone_angle.is_none()
        && out.cone_softness.is_none();
    (!none).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_changes_are_placed_where_the_value_changes() {
        // A truncated ramp: value ⌊2.5·f⌋ changes at f = k / 2.5 (0.4, 0.8, …, 2.8), several
        // times between two grid frames; a step on a grid frame (2.0) lands on it exactly.
        let at = |f: f64| (2.5 * f).floor() as i64;
        let frames = [0.0, 1.0, 2.0, 3.0];
        let values: Vec<i64> = frames.iter().map(|&f| at(f)).collect();
        let got = held_changes(&frames, &values, at);
        let want: Vec<(f64, i64)> = (0..8).map(|k| (f64::from(k) / 2.5, i64::from(k))).collect();
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((gf, gv), (wf, wv)) in got.iter().zip(&want) {
            assert_eq!(gv, wv);
            assert!((gf - wf).abs() <= CHANGE_PRECISION, "{gf} vs {wf}");
            assert!(at(*gf) == *gv, "the sample's own time shows the new value");
        }
        assert_eq!(got[5].0, 2.0);
    }

    #[test]
    fn a_step_key_on_a_grid_frame_is_written_on_it() {
        let at = |f: f64| f >= 2.0;
        let frames = [0.0, 1.0, 2.0, 3.0];
        let values: Vec<bool> = frames.iter().map(|&f| at(f)).collect();
        assert_eq!(held_changes(&frames, &values, at), vec![(0.0, false), (2.0, true)]);
    }
}
