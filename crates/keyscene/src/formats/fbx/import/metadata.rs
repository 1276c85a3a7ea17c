//! The scene's [`Metadata`](crate::scene::Metadata) from `GlobalSettings` and the header: format,
//! version, encoding, axes, units, frame rate and range, and the `Creator` string.

use glam::DVec3;

use super::super::tree::Property;
use super::Importer;
use crate::scene::{Axis, AxisSystem, Metadata, Units};

fn axis(index: i64, sign: i64) -> Option<Axis> {
    Some(match (index, sign >= 0) {
        (0, true) => Axis::PosX,
        (0, false) => Axis::NegX,
        (1, true) => Axis::PosY,
        (1, false) => Axis::NegY,
        (2, true) => Axis::PosZ,
        (2, false) => Axis::NegZ,
        _ => return None,
    })
}

fn axis_vec(a: Axis) -> DVec3 {
    match a {
        Axis::PosX => DVec3::X,
        Axis::NegX => -DVec3::X,
        Axis::PosY => DVec3::Y,
        Axis::NegY => -DVec3::Y,
        Axis::PosZ => DVec3::Z,
        Axis::NegZ => -DVec3::Z,
    }
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    pub(super) fn metadata(&mut self) {
        let s = &self.graph.settings;
        let doc = self.graph.doc;
        let up = axis(s.up_axis, s.up_axis_sign).unwrap_or(Axis::PosY);
        let front = axis(s.front_axis, s.front_axis_sign).unwrap_or(Axis::PosZ);
        let right = axis(s.coord_axis, s.coord_axis_sign).unwrap_or(Axis::PosX);
        let fps = s.frame_rate();
        let mut properties = Vec::new();
        if let Some(c) =
            doc.find(&["FBXHeaderExtension", "Creator"]).or_else(|| doc.root("Creator"))
        {
            if let Some(t) = c.property(0).and_then(Property::as_str) {
                properties.push(("creator".to_string(), t.to_string()));
            }
        }
        // How the file is stored (issue 17 §3: `inspect` shows encoding and byte order).
        let encoding = match (doc.encoding, doc.big_endian) {
            (super::super::Encoding::Ascii, _) => "ASCII",
            (super::super::Encoding::Binary, false) => "binary, little-endian",
            (super::super::Encoding::Binary, true) => "binary, big-endian",
        };
        properties.push(("encoding".into(), encoding.into()));
        properties.push(("unit_scale_factor".into(), s.unit_scale_factor.to_string()));
        properties
            .push(("original_unit_scale_factor".into(), s.original_unit_scale_factor.to_string()));
        properties.push(("ktime_per_second".into(), s.ktime_per_second.to_string()));
        self.scene.meta = Metadata {
            format: "fbx".into(),
            version: Some(doc.version),
            units: Units::Metres(s.unit_scale_factor / 100.0),
            axes: AxisSystem {
                up,
                front,
                right_handed: axis_vec(right).cross(axis_vec(up)).dot(axis_vec(front)) > 0.0,
            },
            frame_rate: Some(fps),
            frame_range: (s.present && s.time_span_stop >= s.time_span_start).then(|| {
                let k = s.ktime_per_second;
                let f = |t| super::super::animation::ktime_to_frames(t, k, fps);
                (f(s.time_span_start), f(s.time_span_stop))
            }),
            properties,
        };
    }

    /// The file's `Creator` string as [`Importer::metadata`] recorded it, empty when none.
    pub(super) fn creator(&self) -> &str {
        self.scene
            .meta
            .properties
            .iter()
            .find(|(k, _)| k == "creator")
            .map_or("", |(_, v)| v.as_str())
    }
}
