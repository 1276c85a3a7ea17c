//! The static expected values of `fbx/magnum/refs/` (transcribed from magnum's UfbxImporter
//! tests, which run on ufbx) that the scene model can express: camera clip planes and aspect,
//! light kinds, colours, intensities, cones, placement and visibility, and a Z-up centimetre
//! file's axes, units and stored local transform. Values are typed from the reference files,
//! not computed by keyscene.
//!
//! The orthographic cameras' sizes are magnum's full view sizes (ufbx `orthographic_size`),
//! twice keyscene's `xmag`/`ymag`.
//!
//! Not checked (the scene model has no field for them yet): light decay (attenuation
//! coefficients), area and volume light kinds.

mod common;

use std::path::Path;

use glam::{DQuat, DVec3, Vec3};
use keyscene::anim::Time;
use keyscene::scene::{Axis, LightKind, NodeKind, Projection, Scene, Units};
use libtest_mimic::Failed;

fn load(corpus: &Path, name: &str) -> Result<Scene, Failed> {
    let path = corpus.join("fbx/magnum").join(name);
    Ok(keyscene::load(&path).map_err(|e| format!("{name}: {e}"))?.0)
}

fn node<'s>(scene: &'s Scene, name: &str) -> Result<&'s keyscene::scene::Node, Failed> {
    scene.nodes.iter().find(|n| n.name == name).ok_or_else(|| format!("no node {name}").into())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

fn cameras(corpus: &Path) -> Result<(), Failed> {
    let s = load(corpus, "cameras.fbx")?;
    // name, near, far (file units), full orthographic size; aspect from AspectWidth/
    // AspectHeight = 960/540.
    for (name, near, far, size) in [
        ("cameraPerspective", 0.123, 123.0, None),
        ("cameraOrthographicFill", 0.456, 456.0, Some((10.0, 10.0 / (16.0 / 9.0)))),
        ("cameraOrthographicOverscan", 0.456, 456.0, Some((10.0 * 16.0 / 9.0, 10.0))),
    ] {
        let NodeKind::Camera(c) = node(&s, name)?.kind else {
            return Err(format!("{name} is not a camera").into());
        };
        let c = &s.cameras[c];
        if !(close(c.near.unwrap_or(-1.0), near)
            && close(c.far.unwrap_or(-1.0), far)
            && close(c.aspect.unwrap_or(0.0), 16.0 / 9.0))
        {
            return Err(
                format!("{name}: near {:?} far {:?} aspect {:?}", c.near, c.far, c.aspect).into()
            );
        }
        let ok = match (c.projection, size) {
            (Projection::Perspective, None) => true,
            (Projection::Orthographic { xmag, ymag }, Some((w, h))) => {
                close(2.0 * xmag, w) && close(2.0 * ymag, h)
            }
            _ => false,
        };
        if !ok {
            return Err(format!("{name}: {:?}, magnum size {size:?}", c.projection).into());
        }
    }
    Ok(())
}

fn lights(corpus: &Path) -> Result<(), Failed> {
    let s = load(corpus, "lights.fbx")?;
    // node, translation x, hidden, kind, colour, intensity, cone (inner, outer) degrees.
    let want = [
        ("ambientLight1", 0.0, true, LightKind::Point, [0.11, 0.12, 0.13], 1.0, None),
        ("directionalLight1", 1.0, false, LightKind::Directional, [0.21, 0.22, 0.23], 2.0, None),
        ("pointLight1", 2.0, false, LightKind::Point, [0.31, 0.32, 0.33], 3.0, None),
        ("spotLight1", 3.0, false, LightKind::Spot, [0.41, 0.42, 0.43], 4.0, Some((12.0, 80.0))),
    ];
    for (name, x, hidden, kind, color, intensity, cone) in want {
        let n = node(&s, name)?;
        let NodeKind::Light(l) = n.kind else {
            return Err(format!("{name} is not a light").into());
        };
        let l = &s.lights[l];
        let ok = n.transform.translation == DVec3::new(x, 0.0, 0.0)
            && n.hidden == hidden
            && l.kind == kind
            && (l.color - Vec3::from(color.map(|c| c as f32))).abs().max_element() < 1e-6
            && close(l.intensity, intensity)
            && cone.is_none_or(|(i, o)| close(l.hotspot_degrees, i) && close(l.falloff_degrees, o));
        if !ok {
            return Err(
                format!("{name}: {:?} hidden {} {l:?}", n.transform.translation, n.hidden).into()
            );
        }
    }
    for name in ["areaLight1", "volumeLight1"] {
        if !matches!(node(&s, name)?.kind, NodeKind::Light(_)) {
            return Err(format!("{name} is not a light").into());
        }
    }
    Ok(())
}

fn units_cm_z_up(corpus: &Path) -> Result<(), Failed> {
    let s = load(corpus, "units-cm-z-up.fbx")?;
    if s.meta.axes.up != Axis::PosZ
        || s.meta.units != Units::Metres(0.01)
        || !s.meta.axes.right_handed
    {
        return Err(format!("axes {:?} units {:?}", s.meta.axes, s.meta.units).into());
    }
    // "the node's own local TRS as stored in the file": (100, -300, 200), Euler(90, 90, 0)
    // (PreRotation 90° about X times Lcl Rotation 90° about Y), scale (20, 40, 60).
    let i = s.nodes.iter().position(|n| n.name == "Empty").ok_or("no node Empty")?;
    let (scale, rotation, translation) =
        s.evaluate(None, Time::Frame(0.0)).local[i].to_scale_rotation_translation();
    let q = DQuat::from_xyzw(0.5, 0.5, 0.5, 0.5);
    if (translation - DVec3::new(100.0, -300.0, 200.0)).abs().max_element() > 1e-9
        || rotation.angle_between(q) > 1e-6
        || (scale - DVec3::new(20.0, 40.0, 60.0)).abs().max_element() > 1e-9
    {
        return Err(format!("Empty: {translation} {rotation} {scale}").into());
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let trials = vec![
        common::corpus_trial("magnum::cameras_near_far_aspect", &corpus, cameras),
        common::corpus_trial(
            "magnum::lights_kind_color_intensity_cone_visibility",
            &corpus,
            lights,
        ),
        common::corpus_trial(
            "magnum::units_cm_z_up_axes_units_and_stored_transform",
            &corpus,
            units_cm_z_up,
        ),
    ];
    common::run(trials)
}
