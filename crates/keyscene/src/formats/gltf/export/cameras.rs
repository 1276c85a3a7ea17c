//! Cameras (perspective, `yfov` from the scene's FOV axis; orthographic, `xmag`/`ymag`) and
//! KHR_lights_punctual lights.

use gltf_json as json;
use json::validation::Checked::Valid;

use super::Out;
use crate::formats::gltf::{warning, ASSUMED_ASPECT, DEFAULT_ZNEAR};
use crate::scene::{Camera, FovAxis, LightKind, Projection, Scene};

impl Out {
    pub(super) fn camera(&mut self, scene: &Scene, c: usize) -> json::Index<json::Camera> {
        let cam = &scene.cameras[c];
        if let Projection::Orthographic { xmag, ymag } = cam.projection {
            return self.orthographic(cam, xmag, ymag);
        }
        let aspect = cam.aspect.filter(|a| a.is_finite() && *a > 0.0).unwrap_or(ASSUMED_ASPECT);
        let mut fov = cam.fov_degrees;
        if !(fov.is_finite() && fov > 0.0 && fov < 180.0) {
            self.warnings.push(warning(
                format!("camera \"{}\"", cam.name),
                format!("FOV {fov}° written as 45°"),
            ));
            fov = 45.0;
        }
        let half = (fov / 2.0).to_radians();
        let yfov = match cam.fov_axis {
            FovAxis::Horizontal => 2.0 * (half.tan() / aspect).atan(),
            FovAxis::Vertical => 2.0 * half,
        };
        let znear = cam.near.filter(|n| n.is_finite() && *n > 0.0).unwrap_or(DEFAULT_ZNEAR);
        let zfar = cam.far.filter(|f| f.is_finite() && *f > znear).map(|f| f as f32);
        json::Index::push(
            &mut self.root.cameras,
            json::Camera {
                name: Some(cam.name.clone()),
                orthographic: None,
                perspective: Some(json::camera::Perspective {
                    aspect_ratio: Some(aspect as f32),
                    yfov: yfov as f32,
                    zfar,
                    znear: znear as f32,
                    extensions: None,
                    extras: Default::default(),
                }),
                type_: Valid(json::camera::Type::Perspective),
                extensions: None,
                extras: Default::default(),
            },
        )
    }

    /// An orthographic camera: `xmag`/`ymag` (glTF requires them non-zero: a zero or
    /// non-finite one is written 1 with a warning), `znear` ≥ 0 and `zfar` > `znear`.
    fn orthographic(&mut self, cam: &Camera, xmag: f64, ymag: f64) -> json::Index<json::Camera> {
        let mut mag = |m: f64| {
            if m.is_finite() && m != 0.0 {
                return m.abs();
            }
            self.warnings.push(warning(
                format!("camera \"{}\"", cam.name),
                format!("orthographic magnification {m} written as 1"),
            ));
            1.0
        };
        let (xmag, ymag) = (mag(xmag), mag(ymag));
        let znear = cam.near.filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(0.0);
        let zfar = match cam.far.filter(|f| f.is_finite() && *f > znear) {
            Some(f) => f,
            None => {
                let f = znear + 1000.0 * xmag.max(ymag);
                self.warnings.push(warning(
                    format!("camera \"{}\"", cam.name),
                    format!(
                        "orthographic camera without a far plane beyond its near plane: zfar {f}"
                    ),
                ));
                f
            }
        };
        json::Index::push(
            &mut self.root.cameras,
            json::Camera {
                name: Some(cam.name.clone()),
                orthographic: Some(json::camera::Orthographic {
                    xmag: xmag as f32,
                    ymag: ymag as f32,
                    zfar: zfar as f32,
                    znear: znear as f32,
                    extensions: None,
                    extras: Default::default(),
                }),
                perspective: None,
                type_: Valid(json::camera::Type::Orthographic),
                extensions: None,
                extras: Default::default(),
            },
        )
    }

    pub(super) fn light(
        &mut self,
        scene: &Scene,
        l: usize,
    ) -> Option<json::Index<json::extensions::scene::khr_lights_punctual::Light>> {
        use json::extensions::scene::khr_lights_punctual as khr;
        let light = &scene.lights[l];
        let type_ = match light.kind {
            LightKind::Point => khr::Type::Point,
            LightKind::Spot => khr::Type::Spot,
            LightKind::Directional => khr::Type::Directional,
            LightKind::Ambient => {
                self.warnings.push(warning(
                    format!("light \"{}\"", light.name),
                    "ambient light left out: glTF has no ambient light",
                ));
                return None;
            }
        };
        let spot = (light.kind == LightKind::Spot).then(|| {
            // Just under π/2: f32(π/2) rounds above it and the validator rejects that.
            let quarter = std::f64::consts::FRAC_PI_2 - 1e-6;
            let fin = |x: f64| if x.is_finite() { x } else { 0.0 };
            let outer = (fin(light.falloff_degrees) / 2.0).to_radians().clamp(1e-4, quarter);
            let inner = (fin(light.hotspot_degrees) / 2.0).to_radians().clamp(0.0, outer * 0.999);
            khr::Spot { inner_cone_angle: inner as f32, outer_cone_angle: outer as f32 }
        });
        let range = light
            .attenuation
            .map(|(_, outer)| outer)
            .filter(|r| r.is_finite() && *r > 0.0)
            .filter(|_| light.kind != LightKind::Directional)
            .map(|r| r as f32);
        let intensity =
            if light.on && light.intensity.is_finite() { light.intensity.max(0.0) } else { 0.0 };
        let ext = self.root.extensions.get_or_insert_with(Default::default);
        let lights = &mut ext.khr_lights_punctual.get_or_insert_with(Default::default).lights;
        let ix = json::Index::push(
            lights,
            khr::Light {
                color: light.color.to_array().map(|c| if c.is_finite() { c.max(0.0) } else { 0.0 }),
                extensions: None,
                extras: Default::default(),
                intensity: intensity as f32,
                name: Some(light.name.clone()),
                range,
                spot,
                type_: Valid(type_),
            },
        );
        let used = "KHR_lights_punctual".to_string();
        if !self.root.extensions_used.contains(&used) {
            self.root.extensions_used.push(used);
        }
        Some(ix)
    }
}
