//! [`Camera`](crate::scene::Camera)s and [`Light`](crate::scene::Light)s from a model's
//! `NodeAttribute` (or, in FBX 6, the model itself): field of view per `ApertureMode` through the
//! gate-fitted film, clip planes and aspect; light type, colour, intensity and cone angles.

use glam::Vec3;

use super::{blender_binary_exporter, Importer};
use crate::scene::{Camera, FovAxis, Light, LightKind, Projection};

/// Film size in inches of each FBX `ApertureFormat` (custom, 16 mm theatrical, super 16 mm,
/// 35 mm academy, TV projection, full aperture, 1.85 projection, anamorphic, 70 mm
/// projection, VistaVision, Dynavision, IMAX), as ufbx's `ufbxi_aperture_formats` lists them.
const APERTURE_FORMATS: [(f64, f64); 12] = [
    (1.0, 1.0),
    (0.404, 0.295),
    (0.493, 0.292),
    (0.864, 0.630),
    (0.816, 0.612),
    (0.980, 0.735),
    (0.825, 0.446),
    (0.864, 0.732),
    (2.066, 0.906),
    (1.485, 0.991),
    (2.080, 1.480),
    (2.772, 2.072),
];

/// A camera's frustum as [`Importer::camera_frustum`] computes it.
struct FbxCameraFrustum {
    /// `ApertureMode` (0–3, default 2).
    aperture_mode: i64,
    /// Tangents of half the horizontal and vertical fields of view (ufbx `field_of_view_tan`).
    tan_half_fov: [f64; 2],
    /// The field of view as stored along the mode's axis (degrees: `FieldOfViewX` for mode
    /// 0, `FieldOfView` for 1 and 2, the fallback angle of a degenerate frustum); `None` for
    /// a focal-length camera.
    stored_fov: Option<f64>,
    /// Full width and height in scene units of an orthographic camera's view (ufbx
    /// `orthographic_size`), `None` for a perspective one.
    orthographic: Option<[f64; 2]>,
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// The camera of `NodeAttribute` (FBX 6: `Model`) `id`: its frustum as ufbx
    /// `ufbxi_update_camera` computes it ([`FbxCameraFrustum`]), kept as the field of view
    /// along the axis `ApertureMode` names (vertical for mode 2, else horizontal; the stored
    /// angle itself for modes 0–2) with the frustum's own width ÷ height as `aspect`, so both
    /// of ufbx's `field_of_view_deg` follow — where the file states what the aspect comes from
    /// (`AspectWidth`/`AspectHeight`, `AspectW`/`AspectH`, `FilmWidth`/`FilmHeight`, an
    /// `ApertureFormat`, or mode 0's two angles); else `aspect` is `None` (ufbx's 1 × 1 inch
    /// default film is no statement about the image, and writers assume their own); an orthographic camera (`CameraProjectionType` 1) keeps ufbx's
    /// `orthographic_size` as its half extents.
    pub(super) fn camera(&self, id: i64, name: &str) -> Camera {
        let g = self.graph;
        let f = |n: &str| g.prop(id, n).and_then(|p| p.f64()).filter(|v| v.is_finite());
        let frustum = self.camera_frustum(id);
        let [tan_x, tan_y] = frustum.tan_half_fov;
        let vertical = frustum.aperture_mode == 2;
        let half_angle = |t: f64| t.atan().to_degrees() * 2.0;
        let (fov_degrees, fov_axis) = match frustum.stored_fov {
            // The stored angle itself (ufbx `field_of_view_deg` along that axis), not its
            // tangent's angle, which may differ in the last bit and unsettle FBX → FBX.
            Some(fov) if vertical => (fov, FovAxis::Vertical),
            Some(fov) => (fov, FovAxis::Horizontal),
            None if vertical => (half_angle(tan_y), FovAxis::Vertical),
            None => (half_angle(tan_x), FovAxis::Horizontal),
        };
        // The aspect only where the file states what it comes from (render aspect, film,
        // both angles); else none, as before, and writers assume theirs.
        let stated =
            ["AspectWidth", "AspectHeight", "AspectW", "AspectH", "FilmWidth", "FilmHeight"]
                .iter()
                .any(|n| g.prop(id, n).is_some())
                || frustum.aperture_mode == 0
                || g.get_i64(id, "ApertureFormat", 0) != 0;
        let aspect = tan_x / tan_y;
        let aspect = (stated && aspect.is_finite() && aspect > 0.0).then_some(aspect);
        let projection = match frustum.orthographic {
            Some([w, h]) => Projection::Orthographic { xmag: w * 0.5, ymag: h * 0.5 },
            None => Projection::Perspective,
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
            projection,
        }
    }

    /// The frustum of camera `id` by the FBX SDK's rules as ufbx `ufbxi_update_camera`
    /// applies them.
    ///
    /// - Film: `FilmWidth` × `FilmHeight` inches (default: the `ApertureFormat`'s size, 1 × 1
    ///   for custom), its height times `FilmSqueezeRatio` (default 2 for 35 mm anamorphic,
    ///   else 1).
    /// - Render aspect from `AspectWidth`/`AspectHeight` (or `AspectW`/`AspectH`) by
    ///   `AspectRatioMode`: 0–2 `w / h`, 3 (fixed width) `1 / h`, 4 (fixed height) `w`; a
    ///   missing or non-positive one is made from the other by the film's ratio.
    /// - `GateFit` fits the film to that aspect: 1 vertical (the aperture is the film's height
    ///   times the aspect by its height), 2 horizontal (its width by width ÷ aspect), 3 fill
    ///   (horizontal when the render is wider than the film, else vertical), 4 overscan (the
    ///   other way round), 0 none and 5 stretch (the film as is).
    /// - `ApertureMode` 0: `FieldOfViewX` and `FieldOfViewY`; 1: horizontal `FieldOfView`,
    ///   vertical by the aspect; 2 (default): vertical `FieldOfView`, horizontal by the
    ///   aspect; 3: the aperture over `FocalLength` (mm).
    /// - Orthographic (`CameraProjectionType` 1): extent = unit × `OrthoZoom`, the unit 30
    ///   scene units, or 1 for Blender's binary exporter (which writes its ortho scale there);
    ///   the view's full width and height are the extent, the height divided (vertical fit:
    ///   the width multiplied) by the aspect as the gate fit says.
    ///
    /// Unset angles are 0 as in ufbx; a frustum that comes out degenerate (a tangent not
    /// finite or not positive: no field of view, zero focal length) falls back to
    /// `FieldOfView` (else 40°) along the mode's axis with the render aspect.
    fn camera_frustum(&self, id: i64) -> FbxCameraFrustum {
        let g = self.graph;
        let f = |n: &str| g.prop(id, n).and_then(|p| p.f64()).filter(|v| v.is_finite());
        let enum_in = |n: &str, default: i64, max: i64| {
            let v = g.get_i64(id, n, default);
            if (0..=max).contains(&v) {
                v
            } else {
                default
            }
        };
        let format = enum_in("ApertureFormat", 0, 11) as usize;
        let (fw, fh) = APERTURE_FORMATS[format];
        let film_x = f("FilmWidth").unwrap_or(fw);
        let film_y0 = f("FilmHeight").unwrap_or(fh);
        let film_y = film_y0 * f("FilmSqueezeRatio").unwrap_or(if format == 7 { 2.0 } else { 1.0 });
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
        let aspect = match enum_in("AspectRatioMode", 0, 4) {
            3 => 1.0 / ay,
            4 => ax,
            _ => ax / ay,
        };
        let film_ratio = film_x / film_y;
        let fit = match enum_in("GateFit", 0, 5) {
            3 if aspect > film_ratio => 2,
            3 => 1,
            4 if aspect < film_ratio => 2,
            4 => 1,
            fit => fit,
        };
        let (aperture, ortho_scale) = match fit {
            1 => ([film_y * aspect, film_y], [aspect, 1.0]),
            2 => ([film_x, film_x / aspect], [1.0, 1.0 / aspect]),
            _ => ([film_x, film_y], [1.0, 1.0]),
        };
        let tan = |deg: f64| (deg.to_radians() * 0.5).tan();
        let fov = f("FieldOfView").unwrap_or(0.0);
        let mode = enum_in("ApertureMode", 2, 3);
        let mut tan_half_fov = match mode {
            0 => [tan(f("FieldOfViewX").unwrap_or(0.0)), tan(f("FieldOfViewY").unwrap_or(0.0))],
            1 => [tan(fov), tan(fov) / aspect],
            2 => [tan(fov) * aspect, tan(fov)],
            _ => {
                let focal_inches = f("FocalLength").unwrap_or(0.0) / 25.4;
                aperture.map(|a| a / focal_inches * 0.5)
            }
        };
        let mut stored_fov = match mode {
            0 => f("FieldOfViewX"),
            1 | 2 => Some(fov),
            _ => None,
        };
        if tan_half_fov.iter().any(|t| !t.is_finite() || *t <= 0.0) {
            let deg = f("FieldOfView").filter(|v| *v > 0.0 && *v < 180.0).unwrap_or(40.0);
            let t = tan(deg);
            let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
            tan_half_fov = if mode == 2 { [t * aspect, t] } else { [t, t / aspect] };
            stored_fov = Some(deg);
        }
        let orthographic = (g.get_i64(id, "CameraProjectionType", 0) == 1).then(|| {
            let unit = if blender_binary_exporter(self.creator()) { 1.0 } else { 30.0 };
            let extent = unit * f("OrthoZoom").unwrap_or(1.0);
            [extent * ortho_scale[0], extent * ortho_scale[1]]
        });
        FbxCameraFrustum { aperture_mode: mode, tan_half_fov, stored_fov, orthographic }
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
