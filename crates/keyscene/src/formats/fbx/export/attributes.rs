//! The FBX writer's node attributes: `NodeAttribute` Camera, Light, LimbNode (`Skeleton`) and
//! Null for every non-mesh `Model`, and the curves of animated camera and light properties.

use std::collections::HashMap;

use glam::DVec3;

use super::animation::{resample_value, Take, NO_FORM};
use super::transform::aimed;
use super::{keys, name_class, p, p_double, p_enum, p_vec, props70, Builder, Resampled};
use crate::anim::{ChannelTarget, Track};
use crate::formats::fbx::write::{Record, Value, WriteError};
use crate::quoting::quoted;
use crate::scene::{FovAxis, LightKind, NodeKind, Projection, Scene};

/// A track an attribute curve comes from.
enum Src<'t> {
    Scalar(&'t Track<f64>),
    Vector(&'t Track<DVec3>),
}

/// The attribute property (and component) a channel of node `i` animates, with its track;
/// `None` for channels no written attribute has (transforms, other properties) and for the
/// roll of an aimed camera (baked into its node).
fn attribute_source<'t>(
    scene: &Scene,
    i: usize,
    target: &'t ChannelTarget,
) -> Option<(&'static str, usize, Src<'t>)> {
    let camera = matches!(scene.nodes[i].kind, NodeKind::Camera(_));
    let light = matches!(scene.nodes[i].kind, NodeKind::Light(_));
    let found = match target {
        ChannelTarget::Fov(t) if camera => ("FieldOfView", 0, Src::Scalar(t)),
        ChannelTarget::Roll(t) if camera => ("Roll", 0, Src::Scalar(t)),
        ChannelTarget::Color(t) if light => ("Color", 0, Src::Vector(t)),
        ChannelTarget::Hotspot(t) if light => ("InnerAngle", 0, Src::Scalar(t)),
        ChannelTarget::Falloff(t) if light => ("OuterAngle", 0, Src::Scalar(t)),
        ChannelTarget::Property { name, track } => {
            let hit = match name.as_str() {
                "FieldOfView" if camera => ("FieldOfView", 0),
                "Roll" if camera => ("Roll", 0),
                "Color|X" if light => ("Color", 0),
                "Color|Y" if light => ("Color", 1),
                "Color|Z" if light => ("Color", 2),
                "Intensity" if light => ("Intensity", 0),
                "InnerAngle" | "HotSpot" if light => ("InnerAngle", 0),
                "OuterAngle" | "Cone angle" | "ConeAngle" if light => ("OuterAngle", 0),
                _ => return None,
            };
            (hit.0, hit.1, Src::Scalar(track))
        }
        _ => return None,
    };
    if found.0 == "Roll" && aimed(scene, i) {
        return None;
    }
    Some(found)
}

/// The rest value of attribute property `prop` of node `i` (the `d|…` defaults).
fn attribute_rest(scene: &Scene, i: usize, prop: &str) -> DVec3 {
    match scene.nodes[i].kind {
        NodeKind::Camera(c) => {
            let c = &scene.cameras[c];
            DVec3::splat(if prop == "Roll" { c.roll_degrees } else { c.fov_degrees })
        }
        NodeKind::Light(l) => {
            let l = &scene.lights[l];
            match prop {
                "Color" => l.color.as_dvec3(),
                "Intensity" => DVec3::splat(l.intensity * 100.0),
                "InnerAngle" => DVec3::splat(l.hotspot_degrees),
                _ => DVec3::splat(l.falloff_degrees),
            }
        }
        _ => DVec3::ZERO,
    }
}

impl Builder {
    /// The `NodeAttribute` of non-mesh node `i`, written as `class` (see
    /// `transform::model_class`), connected to its model `model`.
    pub(super) fn node_attribute(&mut self, scene: &Scene, i: usize, model: i64, class: &str) {
        let node = &scene.nodes[i];
        let attr = self.id();
        let a = match node.kind {
            NodeKind::Camera(c) if class == "Camera" => {
                camera_attribute(attr, &node.name, &scene.cameras[c], aimed(scene, i))
            }
            NodeKind::Light(l) if class == "Light" => {
                light_attribute(attr, &node.name, &scene.lights[l])
            }
            _ => {
                let flags = if class == "LimbNode" { "Skeleton" } else { "Null" };
                let mut a = Record::with(
                    "NodeAttribute",
                    vec![Value::I64(attr), name_class("", "NodeAttribute"), Value::str(class)],
                );
                if class == "LimbNode" {
                    a.push(props70(vec![p_double("Size", 10.0)]));
                }
                a.push(Record::one("TypeFlags", flags));
                a
            }
        };
        self.attributes.push((i, attr));
        self.objects.push(a);
        self.count("NodeAttribute");
        self.oo(attr, model);
    }

    /// Animated camera and light properties of animation `ai` as curve nodes on their
    /// `NodeAttribute`s: camera `FieldOfView` (3DS FOV tracks, FBX `FieldOfView`) and `Roll`;
    /// light `Color` (3DS colour tracks, FBX `Color|X…`), `Intensity` (percent, as stored),
    /// `InnerAngle` (3DS hotspot, FBX `InnerAngle`/`HotSpot`) and `OuterAngle` (3DS falloff,
    /// FBX `OuterAngle`/`Cone angle`). Key for key where the keys have an FBX form, else the
    /// track resampled adaptively within 1e-4 of its magnitude at every frame and between
    /// frames ([`resample_value`]; reported).
    pub(super) fn attribute_curves(&mut self, take: &Take<'_>) -> Result<(), WriteError> {
        let Take { scene, ai, layer, fps, range, .. } = *take;
        // (node, attribute property, vector?) → per component curve, in first-seen order.
        let mut found: Vec<(usize, &'static str, bool, [Option<keys::FbxCurve>; 3])> = Vec::new();
        let attr_of: HashMap<usize, i64> = self.attributes.iter().copied().collect();
        let anim = &scene.animations[ai];
        for ch in &anim.channels {
            let i = ch.node;
            if !attr_of.contains_key(&i) {
                continue;
            }
            let Some((prop, comp, src)) = attribute_source(scene, i, &ch.target) else { continue };
            let slot = match found.iter().position(|f| f.0 == i && f.1 == prop) {
                Some(k) => k,
                None => {
                    found.push((i, prop, prop == "Color", [None, None, None]));
                    found.len() - 1
                }
            };
            let what = || format!("animation {}: the {prop} track", quoted(&anim.name));
            let (lo, hi) = range;
            let mut resampled = false;
            match src {
                Src::Scalar(t) if t.keys.is_empty() => continue,
                Src::Scalar(t) => {
                    let c = match keys::scalar_curve(t, 1.0, fps, lo, hi) {
                        Some(c) => {
                            self.report.exact_curves += 1;
                            c
                        }
                        None => {
                            resampled = true;
                            let keys: Vec<(f64, f64)> =
                                t.keys.iter().map(|k| (k.frame, k.value)).collect();
                            let source = |f| t.sample(f).unwrap_or(0.0);
                            resample_value(source, &keys, take, what)?
                        }
                    };
                    found[slot].3[comp] = Some(c);
                }
                Src::Vector(t) if t.keys.is_empty() => continue,
                Src::Vector(t) => match keys::vector_curves(t, fps, lo, hi) {
                    Some(c) => {
                        self.report.exact_curves += 3;
                        found[slot].3 = c.map(Some);
                    }
                    None => {
                        resampled = true;
                        for k in 0..3 {
                            let keys: Vec<(f64, f64)> =
                                t.keys.iter().map(|x| (x.frame, x.value[k])).collect();
                            let source = |f| t.sample(f).unwrap_or(DVec3::ZERO)[k];
                            found[slot].3[k] = Some(resample_value(source, &keys, take, what)?);
                        }
                    }
                },
            }
            if resampled {
                self.report.resampled.push(Resampled {
                    animation: ai,
                    node: i,
                    part: prop,
                    reason: NO_FORM,
                });
            }
        }
        for (i, prop, vector, curves) in found {
            let rest = attribute_rest(scene, i, prop);
            let scalar = format!("d|{prop}");
            let comps: Vec<(&str, DVec3)> = if vector {
                vec![("d|X", rest), ("d|Y", rest), ("d|Z", rest)]
            } else {
                vec![(scalar.as_str(), rest)]
            };
            self.curve_node(prop, layer, (attr_of[&i], prop), &comps, &curves);
        }
        Ok(())
    }
}

/// A camera's `NodeAttribute` (class `Camera`) with the properties ufbx's
/// `ufbxi_update_camera` and our reader take: `ApertureMode` 1 (horizontal) or 2 (vertical)
/// with `FieldOfView` in degrees, `AspectWidth`/`AspectHeight` (the aspect over 1, with
/// `AspectRatioMode` 1, fixed ratio), `NearPlane`/`FarPlane` in scene units, `Roll` in degrees.
/// An orthographic camera adds `CameraProjectionType` 1 with `OrthoZoom` = full width ÷ 30
/// (ufbx's extent unit for files not from Blender) and `GateFit` 2 (horizontal: the height is
/// the width over the aspect), its aspect `xmag / ymag`, so ufbx reads back the same
/// `orthographic_size`.
/// Orientation is the node's: FBX cameras look down the node's +X with +Y up, and the node's
/// rotation carries the turn from the source's axes (`transform::attribute_axes`). A camera
/// aimed at a target has its aim and roll baked into its node: its `Roll` is written 0
/// (`roll_baked`), so that a tool that applies `Roll` does not turn it twice.
fn camera_attribute(id: i64, name: &str, c: &crate::scene::Camera, roll_baked: bool) -> Record {
    let mode = match c.fov_axis {
        FovAxis::Horizontal => 1,
        FovAxis::Vertical => 2,
    };
    let mut props = vec![
        p("Roll", "Roll", "", "A", vec![Value::F64(if roll_baked { 0.0 } else { c.roll_degrees })]),
        p("FieldOfView", "FieldOfView", "", "A", vec![Value::F64(c.fov_degrees)]),
        p_enum("ApertureMode", mode),
    ];
    let mut aspect = c.aspect;
    if let Projection::Orthographic { xmag, ymag } = c.projection {
        props.push(p_enum("CameraProjectionType", 1));
        props.push(p_double("OrthoZoom", 2.0 * xmag / 30.0));
        props.push(p_enum("GateFit", 2));
        aspect = Some(xmag / ymag);
    }
    if let Some(a) = aspect.filter(|a| a.is_finite() && *a > 0.0) {
        props.push(p_enum("AspectRatioMode", 1));
        props.push(p_double("AspectWidth", a));
        props.push(p_double("AspectHeight", 1.0));
    }
    if let Some(v) = c.near.filter(|v| v.is_finite()) {
        props.push(p_double("NearPlane", v));
    }
    if let Some(v) = c.far.filter(|v| v.is_finite()) {
        props.push(p_double("FarPlane", v));
    }
    Record::with(
        "NodeAttribute",
        vec![Value::I64(id), name_class(name, "NodeAttribute"), Value::str("Camera")],
    )
    .child(props70(props))
    .child(Record::one("TypeFlags", "Camera"))
    .child(Record::one("GeometryVersion", 124))
    .child(Record::with("Position", vec![Value::F64(0.0), Value::F64(0.0), Value::F64(0.0)]))
    .child(Record::with("Up", vec![Value::F64(0.0), Value::F64(1.0), Value::F64(0.0)]))
    .child(Record::with("LookAt", vec![Value::F64(1.0), Value::F64(0.0), Value::F64(0.0)]))
    .child(Record::one("ShowInfoOnMoving", 1))
    .child(Record::one("ShowAudio", 0))
    .child(Record::with("AudioColor", vec![Value::F64(0.0), Value::F64(1.0), Value::F64(0.0)]))
    .child(Record::one("CameraOrthoZoom", 1.0))
}

/// A light's `NodeAttribute` (class `Light`): `LightType` 0 point, 1 directional, 2 spot;
/// `Color` (linear RGB), `Intensity` in percent (keyscene's multiplier × 100, as the reader
/// and ufbx divide it), `InnerAngle`/`OuterAngle` (full cone angles, degrees), `CastLight`,
/// `DecayType` 0 (none). FBX lights shine down the node's −Y as ufbx reads them (its
/// `local_direction` is −Y); the node's rotation carries the turn from the source's axes
/// (`transform::attribute_axes`), as for cameras.
fn light_attribute(id: i64, name: &str, l: &crate::scene::Light) -> Record {
    let ty = match l.kind {
        LightKind::Directional => 1,
        LightKind::Spot => 2,
        LightKind::Point | LightKind::Ambient => 0,
    };
    let c = l.color.as_dvec3();
    let props = vec![
        p_enum("LightType", ty),
        p_vec("Color", "Color", "", "A", c),
        p("Intensity", "Number", "", "A", vec![Value::F64(l.intensity * 100.0)]),
        p("InnerAngle", "Number", "", "A", vec![Value::F64(l.hotspot_degrees)]),
        p("OuterAngle", "Number", "", "A", vec![Value::F64(l.falloff_degrees)]),
        p("CastLight", "bool", "", "", vec![Value::I32(l.on as i32)]),
        p_enum("DecayType", 0),
    ];
    Record::with(
        "NodeAttribute",
        vec![Value::I64(id), name_class(name, "NodeAttribute"), Value::str("Light")],
    )
    .child(props70(props))
    .child(Record::one("TypeFlags", "Light"))
    .child(Record::one("GeometryVersion", 124))
}
