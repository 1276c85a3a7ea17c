//! glTF cameras and KHR_lights_punctual lights → scene cameras and lights.

use glam::Vec3;

use crate::scene::{Camera, FovAxis, Light, LightKind, Projection};

/// A camera: perspective `yfov` as a vertical field of view; an orthographic one keeps
/// `xmag`/`ymag` as its half extents ([`Projection::Orthographic`]) and their ratio as its
/// aspect (glTF 2.0 §5.13, `camera.orthographic`), its field of view the unused 45°.
pub(super) fn camera(c: &gltf::Camera) -> Camera {
    let name = c.name().unwrap_or("").to_string();
    match c.projection() {
        gltf::camera::Projection::Perspective(p) => Camera {
            near: Some(f64::from(p.znear())),
            far: p.zfar().map(f64::from),
            aspect: p.aspect_ratio().map(f64::from),
            ..Camera::new(name, f64::from(p.yfov()).to_degrees(), FovAxis::Vertical)
        },
        gltf::camera::Projection::Orthographic(o) => {
            let (xmag, ymag) = (f64::from(o.xmag()), f64::from(o.ymag()));
            let aspect = xmag / ymag;
            Camera {
                near: Some(f64::from(o.znear())),
                far: Some(f64::from(o.zfar())),
                aspect: (aspect.is_finite() && aspect > 0.0).then_some(aspect),
                projection: Projection::Orthographic { xmag, ymag },
                ..Camera::new(name, 45.0, FovAxis::Vertical)
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
