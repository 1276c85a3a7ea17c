//! glTF cameras and KHR_lights_punctual lights → scene cameras and lights.

use glam::Vec3;

use crate::formats::gltf::warning;
use crate::scene::{Camera, FovAxis, Light, LightKind, Warning};

/// A camera: perspective `yfov` as a vertical FOV; an orthographic one as a 45° perspective
/// camera (warned).
pub(super) fn camera(c: &gltf::Camera, warnings: &mut Vec<Warning>) -> Camera {
    let name = c.name().unwrap_or("").to_string();
    match c.projection() {
        gltf::camera::Projection::Perspective(p) => Camera {
            name,
            target: None,
            fov_degrees: f64::from(p.yfov()).to_degrees(),
            fov_axis: FovAxis::Vertical,
            roll_degrees: 0.0,
            near: Some(f64::from(p.znear())),
            far: p.zfar().map(f64::from),
            aspect: p.aspect_ratio().map(f64::from),
        },
        gltf::camera::Projection::Orthographic(o) => {
            warnings.push(warning(
                format!("cameras[{}]", c.index()),
                "orthographic camera read as a perspective camera (the model has no orthographic cameras)",
            ));
            Camera {
                name,
                target: None,
                fov_degrees: 45.0,
                fov_axis: FovAxis::Vertical,
                roll_degrees: 0.0,
                near: Some(f64::from(o.znear())),
                far: Some(f64::from(o.zfar())),
                aspect: None,
            }
        }
    }
}

/// A KHR_lights_punctual light: cone half angles → full hotspot/falloff degrees, `range` → the
/// outer attenuation distance.
pub(super) fn light(l: &gltf::khr_lights_punctual::Light) -> Light {
    use gltf::khr_lights_punctual::Kind;
    let (kind, hotspot, falloff) = match l.kind() {
        Kind::Directional => (LightKind::Directional, 0.0, 0.0),
        Kind::Point => (LightKind::Point, 0.0, 0.0),
        Kind::Spot { inner_cone_angle, outer_cone_angle } => (
            LightKind::Spot,
            2.0 * f64::from(inner_cone_angle).to_degrees(),
            2.0 * f64::from(outer_cone_angle).to_degrees(),
        ),
    };
    Light {
        name: l.name().unwrap_or("").to_string(),
        kind,
        color: Vec3::from_array(l.color()),
        intensity: f64::from(l.intensity()),
        hotspot_degrees: hotspot,
        falloff_degrees: falloff,
        attenuation: l.range().map(|r| (0.0, f64::from(r))),
        on: true,
        target: None,
        roll_degrees: 0.0,
    }
}
