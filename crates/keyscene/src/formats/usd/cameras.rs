//! Cameras (`UsdGeom.Camera`) and lights (`UsdLux`), each a child prim of its node's prim.
//! USD cameras look down their −Z with +Y up and lights shine down −Z, as keyscene's 3DS,
//! 3DA and glTF scenes have them; on FBX scenes (cameras down +X, lights down −Y, docs/fbx.md,
//! "Axes") the child prim carries the turn as its own `xformOp:transform`.
//!
//! A camera's field of view becomes a focal length for a film of 36 tenths of a scene unit
//! along the field of view's axis (USD gives `focalLength` and the apertures in tenths of a
//! scene unit: millimetres in a centimetre scene); the other aperture follows the aspect ratio
//! when the source states it (else 4:3). An orthographic camera is `projection =
//! "orthographic"` with apertures spanning its view: `horizontalAperture` = 2·`xmag` in
//! tenths of a scene unit (OpenUSD `GfCamera::GetFrustum`: an orthographic window is the
//! aperture times `APERTURE_UNIT` 0.1). Lights: point → `SphereLight` with `treatAsPoint`,
//! spot → `SphereLight` with `ShapingAPI` (cone angle = half the falloff, softness from the
//! hotspot), directional → `DistantLight`, ambient → `DomeLight`; `inputs:intensity` is the
//! source's multiplier (1 = nominal), `inputs:color` its colour. Animated field of view,
//! colour, intensity and cone are time samples ([`super::params`]).

use glam::DMat4;

use super::text::Text;
use super::Ctx;
use crate::scene::{Camera, FovAxis, LightKind, NodeKind, Projection};

/// The film size along the field of view's axis, tenths of a scene unit.
pub const FILM: f64 = 36.0;

/// The turn from the node's camera or light axes to USD's (FBX scenes only).
fn turn(ctx: &Ctx, k: usize) -> Option<DMat4> {
    if ctx.scene.meta.format != "fbx" {
        return None;
    }
    let quarter = -std::f64::consts::FRAC_PI_2;
    match ctx.scene.nodes[k].kind {
        NodeKind::Camera(_) => Some(DMat4::from_rotation_y(quarter)),
        NodeKind::Light(l)
            if ctx.scene.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient) =>
        {
            Some(DMat4::from_rotation_x(quarter))
        }
        _ => None,
    }
}

fn write_turn(t: &mut Text, turn: Option<DMat4>) {
    if let Some(m) = turn {
        let m = t.matrix(m);
        t.line(&format!("matrix4d xformOp:transform = {m}"));
        t.line("uniform token[] xformOpOrder = [\"xformOp:transform\"]");
    }
}

/// Writes camera `c` of node `k` as the prim `name`.
pub fn camera(t: &mut Text, ctx: &mut Ctx, k: usize, c: usize, name: &str) {
    let cam = &ctx.scene.cameras[c];
    if let Projection::Orthographic { xmag, ymag } = cam.projection {
        let turn = turn(ctx, k);
        t.open(&format!("def Camera \"{name}\""), &[]);
        t.line("token projection = \"orthographic\"");
        t.field_f("float horizontalAperture", 20.0 * xmag);
        t.field_f("float verticalAperture", 20.0 * ymag);
        clipping_range(t, cam);
        write_turn(t, turn);
        t.close();
        return;
    }
    let mut fov = cam.fov_degrees;
    if !(fov.is_finite() && fov > 0.0 && fov < 180.0) {
        ctx.warn(format!(
            "camera \"{}\": field of view {fov}° cannot be written: 45° instead",
            cam.name
        ));
        fov = 45.0;
    }
    let focal = super::params::focal_length(fov, FILM).unwrap_or(FILM);
    let aspect = cam.aspect.filter(|a| a.is_finite() && *a > 0.0).unwrap_or(4.0 / 3.0);
    let (h, v) = match cam.fov_axis {
        FovAxis::Horizontal => (FILM, FILM / aspect),
        FovAxis::Vertical => (FILM * aspect, FILM),
    };
    let turn = turn(ctx, k);
    t.open(&format!("def Camera \"{name}\""), &[]);
    t.line("token projection = \"perspective\"");
    t.field_f("float focalLength", focal);
    if let Some((frames, values)) =
        super::params::camera_focal(ctx.scene, ctx.line, (k, c), FILM, fov)
    {
        t.time_samples("float focalLength", &frames, &values, |t, &v| t.num_f(v));
    }
    t.field_f("float horizontalAperture", h);
    t.field_f("float verticalAperture", v);
    clipping_range(t, cam);
    write_turn(t, turn);
    t.close();
}

/// `clippingRange` from the camera's near and far distances, when both are stated and
/// `0 < near < far`.
fn clipping_range(t: &mut Text, cam: &Camera) {
    if let (Some(n), Some(f)) = (cam.near, cam.far) {
        if n.is_finite() && f.is_finite() && n > 0.0 && f > n {
            let range = format!("({}, {})", t.num_f(n), t.num_f(f));
            t.line(&format!("float2 clippingRange = {range}"));
        }
    }
}

/// Writes light `l` of node `k` as the prim `name`.
pub fn light(t: &mut Text, ctx: &mut Ctx, k: usize, l: usize, name: &str) {
    let light = &ctx.scene.lights[l];
    let (ty, shaping) = match light.kind {
        LightKind::Point => ("SphereLight", false),
        LightKind::Spot => ("SphereLight", true),
        LightKind::Directional => ("DistantLight", false),
        LightKind::Ambient => ("DomeLight", false),
    };
    if !light.on {
        ctx.warn(format!(
            "light \"{}\": switched off in the source: written with intensity 0",
            light.name
        ));
    }
    let meta = if shaping {
        vec!["prepend apiSchemas = [\"ShapingAPI\"]".to_string()]
    } else {
        Vec::new()
    };
    let turn = turn(ctx, k);
    t.open(&format!("def {ty} \"{name}\""), &meta);
    let animated = super::params::light_values(ctx.scene, ctx.line, (k, l)).unwrap_or_default();
    let c = light.color.as_dvec3();
    let c = t.vec3_f(c);
    t.line(&format!("color3f inputs:color = {c}"));
    if let Some((frames, values)) = &animated.color {
        t.time_samples("color3f inputs:color", frames, values, |t, &v| t.vec3_f(v));
    }
    let i = if light.on { light.intensity } else { 0.0 };
    t.field_f("float inputs:intensity", i);
    scalar_samples(t, "float inputs:intensity", &animated.intensity);
    if ty == "SphereLight" {
        t.line("bool treatAsPoint = 1");
        t.line("float inputs:radius = 0");
    }
    if shaping {
        let (angle, soft) = super::params::cone(light.falloff_degrees, light.hotspot_degrees);
        t.field_f("float inputs:shaping:cone:angle", angle);
        scalar_samples(t, "float inputs:shaping:cone:angle", &animated.cone_angle);
        t.field_f("float inputs:shaping:cone:softness", soft);
        scalar_samples(t, "float inputs:shaping:cone:softness", &animated.cone_softness);
    }
    if light.attenuation.is_some() {
        ctx.warn(format!(
            "light \"{}\": attenuation range not written (UsdLux has none)",
            light.name
        ));
    }
    write_turn(t, turn);
    t.close();
}

/// `decl`'s time samples, when there are any.
fn scalar_samples(t: &mut Text, decl: &str, samples: &Option<(Vec<f64>, Vec<f64>)>) {
    if let Some((frames, values)) = samples {
        t.time_samples(decl, frames, values, |t, &v| t.num_f(v));
    }
}
