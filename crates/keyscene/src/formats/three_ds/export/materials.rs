//! Materials as `MAT_ENTRY` chunks: colours, percentages, flags and texture maps with their
//! file names in 8.3 form (the names [`crate::output::TexturePlan`] gives the images copied
//! beside the output, [`FileNames::EightDotThree`]).

use super::super::chunks::id;
use super::super::write::{ChunkWriter, TooLong};
use super::{Builder, WriteError, MAX_MATERIAL_NAME};
use crate::output::{FileNames, TexturePlan};
use crate::scene::{MapSlot, Mesh, Scene};

/// A material as written: its `MAT_NAME`, the scene material, and its maps' file names.
pub(super) struct MaterialOut {
    name: String,
    m: crate::scene::Material,
    /// Written file name per map; `None` for a map with an empty file name (not written).
    map_names: Vec<Option<String>>,
}

impl Builder {
    /// Names every scene material (unique, at most [`MAX_MATERIAL_NAME`] bytes) and its maps'
    /// files (8.3, as [`TexturePlan`] names the copies), in scene order; a file name that
    /// changes is reported as renamed.
    pub(super) fn materials(&mut self, scene: &Scene) {
        let plan = TexturePlan::with_names(scene, FileNames::EightDotThree);
        let mut unsupported = 0usize;
        for (mi, m) in scene.materials.iter().enumerate() {
            let name = self.names.unique("material", &m.name, MAX_MATERIAL_NAME, &mut self.report);
            let mut map_names = Vec::new();
            for (k, t) in m.maps.iter().enumerate() {
                let n = plan.name(mi, k).map(str::to_string);
                if let Some(n) = n.as_ref().filter(|n| **n != t.file) {
                    self.report.renamed.push(("texture file", t.file.clone(), n.clone()));
                }
                if n.is_some() && t.wrap != [crate::scene::WrapMode::Repeat; 2] {
                    unsupported += 1;
                }
                map_names.push(n);
            }
            if let Some(pbr) = &m.pbr {
                let lost = pbr.phong_losses();
                if !lost.is_empty() {
                    self.report.dropped.push(format!(
                        "material \"{}\" ({}): written as its closest Phong values; {}",
                        m.name,
                        pbr.model.name(),
                        lost.join(", ")
                    ));
                }
            }
            self.material_names.push(name.clone());
            self.materials.push(MaterialOut { name, m: m.clone(), map_names });
        }
        if unsupported > 0 {
            self.report.dropped.push(format!(
                "{unsupported} texture maps' clamp/mirror wrap modes (3DS tiling flags written as tile)"
            ));
        }
        self.report.materials = self.materials.len();
    }

    /// The material names of a mesh's slots (`None`: no material).
    pub(super) fn slot_names(&self, mesh: &Mesh) -> Vec<Option<String>> {
        mesh.material_slots
            .iter()
            .map(|s| s.and_then(|m| self.material_names.get(m).cloned()))
            .collect()
    }
}

/// Writes `m` as a `MAT_ENTRY` chunk.
pub(super) fn write_material(w: &mut ChunkWriter, m: &MaterialOut) -> Result<(), WriteError> {
    let color = |w: &mut ChunkWriter, tag: u16, c: glam::Vec3| -> Result<(), TooLong> {
        w.chunk(tag, |w| {
            w.chunk(id::COLOR_24, |w| {
                for v in c.to_array() {
                    w.u8((v.clamp(0.0, 1.0) * 255.0).round() as u8);
                }
                Ok(())
            })
        })
    };
    let percent = |w: &mut ChunkWriter, tag: u16, v: f32| -> Result<(), TooLong> {
        w.chunk(tag, |w| {
            w.chunk(id::INT_PERCENTAGE, |w| {
                w.u16(((v * 100.0).round().clamp(-32768.0, 32767.0) as i16) as u16);
                Ok(())
            })
        })
    };
    let mat = &m.m;
    w.begin(id::MAT_ENTRY);
    w.chunk(id::MAT_NAME, |w| {
        w.cstr(&m.name);
        Ok(())
    })?;
    color(w, id::MAT_AMBIENT, mat.effective_ambient())?;
    color(w, id::MAT_DIFFUSE, mat.effective_diffuse())?;
    color(w, id::MAT_SPECULAR, mat.specular)?;
    percent(w, id::MAT_SHININESS, mat.shininess)?;
    percent(w, id::MAT_SHIN2PCT, mat.shininess_strength)?;
    percent(w, id::MAT_TRANSPARENCY, mat.transparency)?;
    percent(w, id::MAT_SELF_ILPCT, mat.self_illumination)?;
    if mat.two_sided {
        w.chunk(id::MAT_TWO_SIDE, |_| Ok(()))?;
    }
    if mat.wireframe {
        w.chunk(id::MAT_WIRE, |_| Ok(()))?;
    }
    for (t, file) in mat.maps.iter().zip(&m.map_names) {
        let Some(file) = file else { continue };
        let tag = match t.slot {
            MapSlot::Diffuse => id::MAT_TEXMAP,
            MapSlot::Opacity => id::MAT_OPACMAP,
            MapSlot::Bump => id::MAT_BUMPMAP,
            MapSlot::Specular => id::MAT_SPECMAP,
            MapSlot::Shininess => id::MAT_SHINMAP,
            MapSlot::Reflection => id::MAT_REFLMAP,
            MapSlot::Emissive => id::MAT_SELFIMAP,
        };
        w.begin(tag);
        w.chunk(id::INT_PERCENTAGE, |w| {
            w.u16(((t.strength * 100.0).round().clamp(-32768.0, 32767.0) as i16) as u16);
            Ok(())
        })?;
        w.chunk(id::MAT_MAPNAME, |w| {
            w.cstr(file);
            Ok(())
        })?;
        w.chunk(id::MAT_MAP_TILING, |w| {
            w.u16(t.flags);
            Ok(())
        })?;
        let uv = t.uv_transform;
        for (tag, v) in [
            (id::MAT_MAP_USCALE, uv.scale.x),
            (id::MAT_MAP_VSCALE, uv.scale.y),
            (id::MAT_MAP_UOFFSET, uv.offset.x),
            (id::MAT_MAP_VOFFSET, uv.offset.y),
            (id::MAT_MAP_ANG, uv.rotation_degrees),
        ] {
            w.chunk(tag, |w| {
                w.f32(v);
                Ok(())
            })?;
        }
        w.end()?;
    }
    w.end()?;
    Ok(())
}
