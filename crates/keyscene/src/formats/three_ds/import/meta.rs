//! The scene's [`Metadata`](crate::scene::Metadata): the root chunk, mesh version, master scale
//! and the keyframer header (`KFHDR`, `KFSEG`, `KFCURTIME`), which gives the frame range.

use super::super::chunks::{id, File3ds};
use super::Builder;
use crate::scene::{AxisSystem, Metadata, Units};

impl<'f> Builder<'_, 'f> {
    pub(super) fn meta(&mut self, file: &File3ds<'_>) {
        let mut props = Vec::new();
        let root = if file.root == id::CMAGIC { "CMAGIC (project)" } else { "M3DMAGIC" };
        props.push(("root".to_string(), root.to_string()));
        if let Some(v) = file.mesh_version {
            props.push(("mesh_version".into(), v.to_string()));
        }
        if let Some(s) = file.master_scale {
            props.push(("master_scale".into(), s.to_string()));
        }
        let mut range = None;
        if let Some(kf) = &file.keyframer {
            if let Some((rev, name, len)) = &kf.header {
                props.push(("kfhdr_revision".into(), rev.to_string()));
                props.push(("kfhdr_name".into(), name.clone()));
                props.push(("kfhdr_length".into(), len.to_string()));
                range = Some((0.0, f64::from(*len)));
            }
            if let Some((a, z)) = kf.segment {
                props.push(("kfseg".into(), format!("{a} {z}")));
                range = Some((f64::from(a), f64::from(z)));
            }
            if let Some(c) = kf.current {
                props.push(("kfcurtime".into(), c.to_string()));
            }
        }
        self.scene.meta = Metadata {
            format: "3ds".into(),
            version: file.version,
            units: Units::Unitless,
            axes: AxisSystem::Z_UP_RIGHT_HANDED,
            frame_rate: None,
            frame_range: range,
            properties: props,
        };
    }
}
