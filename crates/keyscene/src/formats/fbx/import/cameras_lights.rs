//! [`Camera`](crate::scene::Camera)s and [`Light`](crate::scene::Light)s from a model's
//! `NodeAttribute` (or, in FBX 6, the model itself): field of view per `ApertureMode` through the
//! gate-fitted film, clip planes and aspect; light type, colour, intensity and cone angles.

use glam::Vec3;

use super::Importer;
use crate::scene::{Camera, FovAxis, Light, LightKind};

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    pub(super) fn camera(&self, id: i64, name: &str) -> Camera {
        let g = self.graph;
        let f = |n: &str| g.prop(id, n).and_then(|p| p.f64()).filter(|v| v.is_finite());
        let aspect = match (f("AspectWidth").or(f("AspectW")), f("AspectHeight").or(f("AspectH"))) {
            (Some(w), Some(h)) if w > 0.0 && h > 0.0 => Some(w / h),
            _ => match (f("FilmWidth"), f("FilmHeight")) {
                (Some(w), Some(h)) if w > 0.0 && h > 0.0 => Some(w / h),
                _ => None,
            },
        };
        let (fov_degrees, fov_axis) = match g.get_i64(id, "ApertureMode", 2) {
            0 => (f("FieldOfViewX").or(f("FieldOfView")).unwrap_or(40.0), FovAxis::Horizontal),
            1 => (f("FieldOfView").unwrap_or(40.0), FovAxis::Horizontal),
            3 => {
                let focal = f("FocalLength").unwrap_or(0.0);
                let aperture = self.camera_aperture_width(id) * 25.4;
                if focal > 0.0 && aperture > 0.0 {
                    ((aperture / (2.0 * focal)).atan().to_degrees() * 2.0, FovAxis::Horizontal)
                } else {
                    (f("FieldOfView").unwrap_or(40.0), FovAxis::Horizontal)
                }
            }
            _ => (f("FieldOfView").or(f("FieldOfViewY")).unwrap_or(40.0), FovAxis::Vertical),
        };
        Camera {
            name: name.into(),
            target: None,
            fov_degrees,
            fov_axis,
            roll_degrees: f("Roll").unwrap_or(0.0),
            near: f("NearPlane"),
            far: f("FarPlane"),
            aspect,
        }
    }

    /// The width in inches of the film gate a focal-length camera (`ApertureMode` 3) sees
    /// through, as ufbx `ufbxi_update_camera` derives it: the film (`FilmWidth` ×
    /// `FilmHeight` · `FilmSqueezeRatio`, 1 × 1 inch when absent) fitted to the render
    /// aspect by `GateFit` — 1 vertical (the film's height times the aspect), 2 horizontal
    /// (the film's width), 3 fill (vertical when the render is wider than the film, else
    /// horizontal), 4 overscan (the other way round), 0 none and 5 stretch (the film as is).
    /// The render aspect follows `AspectRatioMode`: 0–2 `AspectWidth / AspectHeight`, 3 (fixed
    /// width) `1 / AspectHeight`, 4 (fixed height) `AspectWidth`; a missing width or height is
    /// made from the other by the film's ratio.
    fn camera_aperture_width(&self, id: i64) -> f64 {
        let g = self.graph;
        let f = |n: &str| g.prop(id, n).and_then(|p| p.f64()).filter(|v| v.is_finite());
        let film_x = f("FilmWidth").unwrap_or(1.0);
        let film_y0 = f("FilmHeight").unwrap_or(1.0);
        let film_y = film_y0 * f("FilmSqueezeRatio").unwrap_or(1.0);
        let mut ax = f("AspectWidth").or(f("AspectW")).unwrap_or(0.0);
        let mut ay = f("AspectHeight").or(f("AspectH")).unwrap_or(0.0);
        if ax <= 0.0 && ay <= 0.0 {
            (ax, ay) = (
                if film_x > 0.0 { film_x } else { 1.0 },
                if film_y0 > 0.0 { film_y0 } else { 1.0 },
            );
        } else if ax <= 0.0 {
            ax = if film_x > 0.0 && film_y0 > 0.0 { ay / film_y0 * film_x } else { ay };
        } else if ay <= 0.0 {
            ay = if film_x > 0.0 && film_y0 > 0.0 { ax / film_x * film_y0 } else { ax };
        }
        let aspect = match g.get_i64(id, "AspectRatioMode", 0) {
            3 => 1.0 / ay,
            4 => ax,
            _ => ax / ay,
        };
        let film_ratio = film_x / film_y;
        let fit = match g.get_i64(id, "GateFit", 0) {
            3 if aspect > film_ratio => 2,
            3 => 1,
            4 if aspect < film_ratio => 2,
            4 => 1,
            fit => fit,
        };
        match fit {
            1 => film_y * aspect,
            _ => film_x,
        }
    }

    pub(super) fn light(&self, id: i64, name: &str) -> Light {
        let g = self.graph;
        let c = g.get_vec3(id, "Color", [1.0; 3]);
        let inner = g.get_f64(id, "InnerAngle", g.get_f64(id, "HotSpot", 0.0));
        let outer = g.get_f64(id, "OuterAngle", g.get_f64(id, "Cone angle", 45.0));
        Light {
            name: name.into(),
            kind: match g.get_i64(id, "LightType", 0) {
                1 => LightKind::Directional,
                2 => LightKind::Spot,
                _ => LightKind::Point,
            },
            color: Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32),
            intensity: g.get_f64(id, "Intensity", 100.0) / 100.0,
            hotspot_degrees: inner,
            falloff_degrees: outer,
            attenuation: None,
            on: g.get_i64(id, "CastLight", 1) != 0,
            target: None,
            roll_degrees: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::load;
    use super::*;
    use crate::scene::{AxisSystem, NodeKind, Units};

    #[test]
    fn focal_length_cameras_see_through_the_gate_fitted_film() {
        // Film 1.5 × 1 inch, focal length 35 mm, square render (AspectWidth = AspectHeight).
        // Hand computation (ufbx `ufbxi_update_camera`): fill and vertical fit the film's
        // height (1 inch at aspect 1), horizontal and none its width (1.5 inch);
        // fov = 2·atan(width · 25.4 / (2 · 35)). Overscan at aspect 1 < 1.5: horizontal.
        let fov = |gate: u8| {
            let text = format!(
                r#"; FBX 7.4.0 project file
Objects: {{
    NodeAttribute: 2, "NodeAttribute::Cam", "Camera" {{ Properties70: {{
        P: "ApertureMode", "enum", "", "",3
        P: "GateFit", "enum", "", "",{gate}
        P: "FilmWidth", "Number", "", "A",1.5
        P: "FilmHeight", "Number", "", "A",1
        P: "AspectWidth", "double", "Number", "",300
        P: "AspectHeight", "double", "Number", "",300
        P: "FocalLength", "Number", "", "A",35
    }} }}
    Model: 1, "Model::Cam", "Camera" {{ }}
}}
Connections: {{ C: "OO",1,0
    C: "OO",2,1 }}
"#
            );
            load(&text).0.cameras[0].fov_degrees
        };
        let want = |inches: f64| (inches * 25.4 / 70.0).atan().to_degrees() * 2.0;
        for (gate, inches) in [(0, 1.5), (1, 1.0), (2, 1.5), (3, 1.0), (4, 1.5), (5, 1.5)] {
            assert!((fov(gate) - want(inches)).abs() < 1e-9, "GateFit {gate}: {}", fov(gate));
        }
    }

    #[test]
    fn light_intensity_is_a_hundredth_and_axes_come_from_global_settings() {
        let text = r#"; FBX 7.4.0 project file
GlobalSettings: { Properties70: {
    P: "UpAxis", "int", "Integer", "",2
    P: "FrontAxis", "int", "Integer", "",1
    P: "FrontAxisSign", "int", "Integer", "",-1
    P: "UnitScaleFactor", "double", "Number", "",2.54
} }
Objects: {
    NodeAttribute: 2, "NodeAttribute::Lamp", "Light" { Properties70: {
        P: "LightType", "enum", "", "",2
        P: "Intensity", "Number", "", "A",250
    } }
    Model: 1, "Model::Lamp", "Light" { }
}
Connections: { C: "OO",1,0
    C: "OO",2,1 }
"#;
        let (s, _) = load(text);
        assert_eq!(s.meta.axes, AxisSystem::Z_UP_RIGHT_HANDED);
        assert_eq!(s.meta.units, Units::Metres(0.0254));
        let NodeKind::Light(l) = s.nodes[0].kind else { panic!("{:?}", s.nodes[0].kind) };
        assert_eq!((s.lights[l].kind, s.lights[l].intensity), (LightKind::Spot, 2.5));
    }
}
