//! Cameras and lights as `N_CAMERA` and `N_DIRECT_LIGHT` (+ `DL_SPOTLIGHT`) objects: a 3DS
//! camera and spotlight always look at a target point.

use glam::{DMat4, DVec3};

use super::super::chunks::id;
use super::super::write::ChunkWriter;
use super::{f3, WriteError};
use crate::anim::Pose;
use crate::scene::{FovAxis, NodeId, Scene};

/// A camera as written (`N_CAMERA`): position, target, roll in degrees, lens in mm, and the
/// near/far ranges (`CAM_RANGES`) when the source has both.
#[derive(Debug, Clone)]
pub(super) struct CameraOut {
    position: [f32; 3],
    target: [f32; 3],
    roll: f32,
    lens: f32,
    ranges: Option<(f32, f32)>,
}

/// A light as written (`N_DIRECT_LIGHT`): position, colour, off, multiplier, attenuation
/// ranges, and for a spotlight (`DL_SPOTLIGHT`) its target, hotspot, falloff and roll.
#[derive(Debug, Clone)]
pub(super) struct LightOut {
    position: [f32; 3],
    color: [f32; 3],
    off: bool,
    multiplier: f32,
    attenuate: Option<(f32, f32)>,
    spot: Option<([f32; 3], f32, f32, f32)>,
}

/// Camera `c` of `scene` at `pos` looking at `target` with `roll` degrees (3DS stores the
/// horizontal FOV as a lens: `lens = 2400 / fov`).
pub(super) fn camera_object(
    scene: &Scene,
    c: usize,
    pos: DVec3,
    target: DVec3,
    roll: f64,
) -> CameraOut {
    let cam = &scene.cameras[c];
    let fov = horizontal_fov(cam.fov_degrees, cam.fov_axis, cam.aspect);
    CameraOut {
        position: f3(pos),
        target: f3(target),
        roll: roll as f32,
        lens: (2400.0 / fov.max(1e-6)) as f32,
        ranges: cam.near.zip(cam.far).map(|(a, b)| (a as f32, b as f32)),
    }
}

/// Light `l` of `scene` at `pos`; a spotlight when `target` is given.
pub(super) fn light_object(scene: &Scene, l: usize, pos: DVec3, target: Option<DVec3>) -> LightOut {
    let light = &scene.lights[l];
    LightOut {
        position: f3(pos),
        color: light.color.to_array(),
        off: !light.on,
        multiplier: light.intensity as f32,
        attenuate: light.attenuation.map(|(a, b)| (a as f32, b as f32)),
        spot: target.map(|t| {
            (
                f3(t),
                light.hotspot_degrees as f32,
                light.falloff_degrees as f32,
                light.roll_degrees as f32,
            )
        }),
    }
}

impl LightOut {
    /// The same light with its spotlight cone set to `hotspot` and `falloff` degrees.
    pub(super) fn with_cone(mut self, hotspot: f64, falloff: f64) -> LightOut {
        if let Some(s) = &mut self.spot {
            s.1 = hotspot as f32;
            s.2 = falloff as f32;
        }
        self
    }
}

/// The roll in degrees that a 3DS camera at `world`'s origin looking at `target` needs to show
/// `world`'s orientation: the angle from 3D Studio's unrolled frame (−Z at the target, +Y
/// leaning to the world's +Z; +X when looking straight along Z) to `world`'s +Y axis about the
/// view axis, counter-clockwise seen from behind the camera — the frame and sign lib3ds'
/// camera matrix and keyscene's reader (`anim` `aim`) use. 0 when the frame is degenerate.
pub(super) fn roll_degrees(world: DMat4, target: DVec3) -> f64 {
    let eye = world.w_axis.truncate();
    let back = (eye - target).normalize_or_zero();
    let mut side = DVec3::Z.cross(back);
    if side.length_squared() < 1e-24 {
        side = DVec3::X.cross(back);
    }
    let up = world.y_axis.truncate();
    if back == DVec3::ZERO || side.length_squared() < 1e-24 || !up.is_finite() {
        return 0.0;
    }
    let side = side.normalize();
    let upv = back.cross(side);
    let r = up.dot(side).atan2(up.dot(upv)).to_degrees();
    if r.is_finite() {
        r
    } else {
        0.0
    }
}

/// The horizontal field of view in degrees (3DS stores horizontal), from `fov` along `axis`.
pub(super) fn horizontal_fov(fov: f64, axis: FovAxis, aspect: Option<f64>) -> f64 {
    match (axis, aspect) {
        (FovAxis::Vertical, Some(a)) if a.is_finite() && a > 0.0 => {
            2.0 * ((fov.to_radians() / 2.0).tan() * a).atan().to_degrees()
        }
        _ => fov,
    }
}

/// Where a camera or spotlight `node` looks in `pose`: its target's world position, or, with
/// no target node, the point 100 units along its view axis (−Z of its world matrix; −Z when
/// that axis is degenerate), since a 3DS camera and spotlight always have a target.
pub(super) fn aim_point(pose: &Pose, node: NodeId, target: Option<NodeId>) -> DVec3 {
    aim_point_of(pose.world[node], target.map(|t| pose.world[t]))
}

/// [`aim_point`] from the node's world matrix `w` and its target's, `target`.
pub(super) fn aim_point_of(w: DMat4, target: Option<DMat4>) -> DVec3 {
    match target {
        Some(t) => t.w_axis.truncate(),
        None => {
            let dir = -w.z_axis.truncate();
            let d = if dir.length() > 0.0 { dir.normalize() } else { -DVec3::Z };
            w.w_axis.truncate() + d * 100.0
        }
    }
}

/// Writes `c` as an `N_CAMERA` chunk.
pub(super) fn write_camera(w: &mut ChunkWriter, c: &CameraOut) -> Result<(), WriteError> {
    w.begin(id::N_CAMERA);
    w.vec3(c.position);
    w.vec3(c.target);
    w.f32(c.roll);
    w.f32(c.lens);
    if let Some((a, b)) = c.ranges {
        w.chunk(id::CAM_RANGES, |w| {
            w.f32(a);
            w.f32(b);
            Ok(())
        })?;
    }
    w.end()?;
    Ok(())
}

/// Writes `l` as an `N_DIRECT_LIGHT` chunk.
pub(super) fn write_light(w: &mut ChunkWriter, l: &LightOut) -> Result<(), WriteError> {
    w.begin(id::N_DIRECT_LIGHT);
    w.vec3(l.position);
    w.chunk(id::COLOR_F, |w| {
        w.vec3(l.color);
        Ok(())
    })?;
    if l.off {
        w.chunk(id::DL_OFF, |_| Ok(()))?;
    }
    if let Some((hot_target, hot, fall, roll)) = l.spot {
        w.begin(id::DL_SPOTLIGHT);
        w.vec3(hot_target);
        w.f32(hot);
        w.f32(fall);
        w.chunk(id::DL_SPOT_ROLL, |w| {
            w.f32(roll);
            Ok(())
        })?;
        w.end()?;
    }
    if let Some((a, b)) = l.attenuate {
        w.chunk(id::DL_ATTENUATE, |_| Ok(()))?;
        w.chunk(id::DL_INNER_RANGE, |w| {
            w.f32(a);
            Ok(())
        })?;
        w.chunk(id::DL_OUTER_RANGE, |w| {
            w.f32(b);
            Ok(())
        })?;
    }
    w.chunk(id::DL_MULTIPLIER, |w| {
        w.f32(l.multiplier);
        Ok(())
    })?;
    w.end()?;
    Ok(())
}
