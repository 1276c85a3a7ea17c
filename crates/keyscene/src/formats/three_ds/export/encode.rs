//! The chunk pass: what the other passes built, as the bytes of a `.3ds` file in 3D Studio's
//! order (`M3D_VERSION`, `MDATA` with `MESH_VERSION`, `MASTER_SCALE`, materials, then objects;
//! `KFDATA` with `KFHDR`, `KFSEG`, `KFCURTIME`, then the keyframer nodes).

use super::super::chunks::id;
use super::super::import::NO_PARENT;
use super::super::write::ChunkWriter;
use super::cameras_lights::{write_camera, write_light};
use super::materials::write_material;
use super::meshes::write_tri;
use super::tracks::write_track;
use super::{Builder, NodeOut, ObjOut, WriteError};
use crate::scene::Scene;

impl Builder {
    /// Encodes the file and fills the report's node list, counts and frame range.
    pub(super) fn encode(&mut self, scene: &Scene) -> Result<Vec<u8>, WriteError> {
        self.report.nodes = self.nodes.len();
        self.report.node_sources = self.nodes.iter().map(|n| n.source).collect();
        self.report.frames = self.segment;
        let mut w = ChunkWriter::new();
        w.begin(id::M3DMAGIC);
        w.chunk(id::M3D_VERSION, |w| {
            w.u32(3);
            Ok(())
        })?;
        self.write_editor(&mut w, scene)?;
        self.write_keyframer(&mut w)?;
        w.end()?; // M3DMAGIC
        Ok(w.finish())
    }

    /// `MDATA`: versions, master scale (the source's `master_scale` property, else 1),
    /// materials, objects.
    fn write_editor(&self, w: &mut ChunkWriter, scene: &Scene) -> Result<(), WriteError> {
        let master_scale = scene
            .meta
            .properties
            .iter()
            .find(|(k, _)| k == "master_scale")
            .and_then(|(_, v)| v.parse::<f32>().ok())
            .unwrap_or(1.0);
        w.begin(id::MDATA);
        w.chunk(id::MESH_VERSION, |w| {
            w.u32(3);
            Ok(())
        })?;
        w.chunk(id::MASTER_SCALE, |w| {
            w.f32(master_scale);
            Ok(())
        })?;
        for m in &self.materials {
            write_material(w, m)?;
        }
        for (name, obj) in &self.objects {
            w.begin(id::NAMED_OBJECT);
            w.cstr(name);
            match obj {
                ObjOut::Mesh(t) => write_tri(w, t)?,
                ObjOut::Camera(c) => write_camera(w, c)?,
                ObjOut::Light(l) => write_light(w, l)?,
            }
            w.end()?;
        }
        w.end()?; // MDATA
        Ok(())
    }

    /// `KFDATA`: header (revision 5, last frame), segment, current frame (the first), nodes.
    fn write_keyframer(&self, w: &mut ChunkWriter) -> Result<(), WriteError> {
        w.begin(id::KFDATA);
        let (s0, s1) = self.segment;
        let (s0, s1) = (s0.max(0) as u32, s1.max(s0).max(0) as u32);
        w.chunk(id::KFHDR, |w| {
            w.u16(5);
            w.cstr("");
            w.u32(s1);
            Ok(())
        })?;
        w.chunk(id::KFSEG, |w| {
            w.u32(s0);
            w.u32(s1);
            Ok(())
        })?;
        w.chunk(id::KFCURTIME, |w| {
            w.u32(s0);
            Ok(())
        })?;
        if self.nodes.len() >= NO_PARENT as usize {
            return Err(WriteError {
                place: "KFDATA".into(),
                what: format!(
                    "{} keyframer nodes, more than NODE_ID (u16) can number",
                    self.nodes.len()
                ),
            });
        }
        for (k, n) in self.nodes.iter().enumerate() {
            write_node(w, k as u16, n)?;
        }
        w.end()?; // KFDATA
        Ok(())
    }
}

/// Writes node `n` as its node chunk with `NODE_ID` `k`.
fn write_node(w: &mut ChunkWriter, k: u16, n: &NodeOut) -> Result<(), WriteError> {
    w.begin(n.tag);
    w.chunk(id::NODE_ID, |w| {
        w.u16(k);
        Ok(())
    })?;
    w.chunk(id::NODE_HDR, |w| {
        w.cstr(&n.name);
        w.u16(n.flags[0]);
        w.u16(n.flags[1]);
        w.u16(n.parent.map_or(NO_PARENT, |p| p as u16));
        Ok(())
    })?;
    if let Some(inst) = &n.instance {
        w.chunk(id::INSTANCE_NAME, |w| {
            w.cstr(inst);
            Ok(())
        })?;
    }
    if let Some(p) = n.pivot {
        w.chunk(id::PIVOT, |w| {
            w.vec3(p);
            Ok(())
        })?;
    }
    if let Some((a, b)) = n.bound_box {
        w.chunk(id::BOUNDBOX, |w| {
            w.vec3(a);
            w.vec3(b);
            Ok(())
        })?;
    }
    if let Some(s) = n.morph_smooth {
        w.chunk(id::MORPH_SMOOTH, |w| {
            w.f32(s);
            Ok(())
        })?;
    }
    for (tag, flags, keys) in &n.tracks {
        write_track(w, *tag, *flags, keys)?;
    }
    w.end()?;
    Ok(())
}
