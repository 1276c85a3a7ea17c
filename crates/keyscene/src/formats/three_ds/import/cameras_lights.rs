//! [`Camera`](crate::scene::Camera)s and [`Light`](crate::scene::Light)s from `N_CAMERA` and
//! `N_DIRECT_LIGHT` data (defaults when a keyframer node names none).

use glam::Vec3;

use super::super::chunks::{CameraChunk, LightChunk};
use super::Builder;
use crate::scene::{Camera, FovAxis, Light, LightKind, Projection};

impl<'f> Builder<'_, 'f> {
    pub(super) fn camera_data(&mut self, name: &str, cam: Option<&CameraChunk>) -> usize {
        let c = cam.cloned().unwrap_or_default();
        let fov = if f64::from(c.lens).abs() < 1e-8 || !c.lens.is_finite() {
            45.0
        } else {
            2400.0 / f64::from(c.lens)
        };
        self.scene.cameras.push(Camera {
            name: name.to_string(),
            target: None,
            fov_degrees: fov,
            fov_axis: FovAxis::Horizontal,
            roll_degrees: c.roll.into(),
            near: c.ranges.map(|r| r.0.into()),
            far: c.ranges.map(|r| r.1.into()),
            aspect: None,
            projection: Projection::Perspective,
        });
        self.scene.cameras.len() - 1
    }

    pub(super) fn light_data(&mut self, name: &str, light: Option<&LightChunk>) -> usize {
        let l = light.cloned().unwrap_or_default();
        let spot = l.spot.as_ref();
        self.scene.lights.push(Light {
            name: name.to_string(),
            kind: if spot.is_some() { LightKind::Spot } else { LightKind::Point },
            color: l.color.map(Vec3::from).unwrap_or(Vec3::ONE),
            intensity: l.multiplier.map_or(1.0, f64::from),
            hotspot_degrees: spot.map_or(0.0, |s| s.hotspot.into()),
            falloff_degrees: spot.map_or(0.0, |s| s.falloff.into()),
            attenuation: l.attenuate.then(|| {
                (l.inner_range.map_or(0.0, f64::from), l.outer_range.map_or(0.0, f64::from))
            }),
            on: !l.off,
            target: None,
            roll_degrees: spot.and_then(|s| s.roll).map_or(0.0, f64::from),
        });
        self.scene.lights.len() - 1
    }
}
