//! [`File`] → bytes in the canonical layout (docs/3da.md, "Canonical order"):
//!
//! ```text
//! Anim_c | material_s × n | for each entity in File order:
//!     entity_s | for each surface: surface_s, tri list, tri strip, xyz, tangent, colour,
//!                                  normal, texcoord 0..3, lightmap, blending
//!              | position track, rotation track, scale track (each: header, then keys;
//!                EULER: header, then X, Y, Z sub-tracks)
//! | collision map
//! ```
//!
//! Every record, table and stream starts 4-byte aligned (an odd-length u16 table is followed by
//! 2 zero bytes). The packed variant differs only in its track headers (3 bytes shorter), so
//! its key tables start 1 byte past a 4-byte boundary. Offsets of
//! absent parts are 0; the last `next_offset` of each chain is 0. Entity order is the caller's
//! (the exporter produces the seed's traverse() order, see [`super::traverse_order`]).

use super::layout::{
    EulerHeader, Header, KeyRecord, SurfaceRecord, TrackHeader, Variant, Wr, FILE_ID, FILE_VERSION,
};
use super::model::{File, FloatTrack, KeyTrack, RotTrack, Surface, VecTrack};
use super::Error;

/// Writes `file` in its [`File::variant`] layout. `m_vptr`, `m_copy` and padding bytes are
/// written 0; everything else comes from `file`.
///
/// Fails when a stream's length differs from its surface's `s_size`, a count does not fit its
/// field, or the file would pass 4 GiB.
pub fn write(file: &File) -> Result<Vec<u8>, Error> {
    let mut w = Writer { b: Vec::new(), variant: file.variant };
    w.file(file)?;
    Ok(w.b)
}

struct Writer {
    b: Vec<u8>,
    variant: Variant,
}

fn invalid(msg: String) -> Error {
    Error::Invalid(msg)
}

fn count_u32(n: usize, what: &str) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| invalid(format!("{what}: {n} does not fit a u32")))
}

fn count_i32(n: usize, what: &str) -> Result<i32, Error> {
    i32::try_from(n).map_err(|_| invalid(format!("{what}: {n} does not fit an i32")))
}

impl Writer {
    fn pos(&self) -> Result<u32, Error> {
        u32::try_from(self.b.len())
            .map_err(|_| invalid("the file would be larger than 4 GiB".into()))
    }

    fn align(&mut self) {
        while self.b.len() % 4 != 0 {
            self.b.push(0);
        }
    }

    /// Overwrites `len` bytes at `at` with what `f` encodes.
    fn patch(&mut self, at: u32, f: impl FnOnce(&mut Vec<u8>)) {
        let mut tmp = Vec::new();
        f(&mut tmp);
        let at = at as usize;
        self.b[at..at + tmp.len()].copy_from_slice(&tmp);
    }

    fn file(&mut self, file: &File) -> Result<(), Error> {
        let mut header = Header {
            file_id: FILE_ID,
            version: FILE_VERSION,
            num_entities: count_u32(file.entities.len(), "entity count")?,
            frames: file.frames,
            num_materials: count_i32(file.materials.len(), "material count")?,
            num_faces: file.num_faces,
            num_vertices: file.num_vertices,
            bounds: file.bounds,
            colmap_id: file.colmap_id,
            ..Header::default()
        };
        header.encode(&mut self.b);
        if !file.materials.is_empty() {
            header.offset_materials = self.pos()?;
            for m in &file.materials {
                m.encode(&mut self.b);
            }
        }
        let mut prev_next: Option<u32> = None;
        for (i, e) in file.entities.iter().enumerate() {
            self.align();
            let at = self.pos()?;
            match prev_next {
                None => header.offset_first_entity = at,
                Some(field) => self.patch(field, |w| w.u32(at)),
            }
            let mut rec = e.record();
            rec.encode(&mut self.b);
            rec.num_surfaces = count_u32(e.surfaces.len(), "surface count")?;
            let mut prev_surface: Option<u32> = None;
            for (j, s) in e.surfaces.iter().enumerate() {
                self.align();
                let sat = self.pos()?;
                match prev_surface {
                    None => rec.surfaces_offset = sat,
                    Some(field) => self.patch(field, |w| w.u32(sat)),
                }
                self.surface(s, sat, &format!("entity {i} surface {j}"))?;
                prev_surface = Some(sat + 64);
            }
            if let Some(t) = &e.position {
                rec.pos_track_offset = self.vec_track(t)?;
            }
            if let Some(t) = &e.rotation {
                rec.rot_track_offset = self.rot_track(t)?;
            }
            if let Some(t) = &e.scale {
                rec.scl_track_offset = self.vec_track(t)?;
            }
            self.patch(at, |w| rec.encode(w));
            prev_next = Some(at + 148);
        }
        if let Some(c) = &file.colmap {
            self.align();
            header.offset_colmap = self.pos()?;
            self.b.extend_from_slice(c);
        }
        self.pos()?;
        self.patch(0, |w| header.encode(w));
        Ok(())
    }

    fn surface(&mut self, s: &Surface, at: u32, what: &str) -> Result<(), Error> {
        let mut rec = SurfaceRecord {
            material_idx: s.material_idx,
            tri_list_size: count_u32(s.tri_list.len(), what)?,
            tri_strip_size: count_u32(s.tri_strip.len(), what)?,
            s_size: s.s_size,
            ..SurfaceRecord::default()
        };
        rec.encode(&mut self.b);
        rec.tri_list_offset = self.u16s(&s.tri_list)?;
        rec.tri_strip_offset = self.u16s(&s.tri_strip)?;
        let n = s.s_size as usize;
        rec.s_xyz_offset = self.stream(&s.xyz, n, what, "xyz", |w, v| w.f32s(v))?;
        rec.s_tangent_offset = self.stream(&s.tangent, n, what, "tangent", |w, v| w.f32s(v))?;
        rec.s_color_offset = self.stream(&s.color, n, what, "colour", |w, v| w.u32(*v))?;
        rec.s_normal_offset = self.stream(&s.normal, n, what, "normal", |w, v| w.f32s(v))?;
        for (c, t) in s.texcoord.iter().enumerate() {
            rec.s_texcoord_offset[c] = self.stream(t, n, what, "texcoord", |w, v| w.f32s(v))?;
        }
        rec.s_lgtcoord_offset = self.stream(&s.lightmap, n, what, "lightmap", |w, v| w.f32s(v))?;
        rec.s_blending_offset = self.stream(&s.blending, n, what, "blending", |w, v| {
            w.extend_from_slice(&v.bone_idx);
            for x in v.weight {
                w.u16(x);
            }
        })?;
        self.patch(at, |w| rec.encode(w));
        Ok(())
    }

    fn u16s(&mut self, t: &[u16]) -> Result<u32, Error> {
        if t.is_empty() {
            return Ok(0);
        }
        self.align();
        let at = self.pos()?;
        for &i in t {
            self.b.u16(i);
        }
        Ok(at)
    }

    fn stream<T>(
        &mut self,
        s: &Option<Vec<T>>,
        n: usize,
        what: &str,
        name: &str,
        f: impl Fn(&mut Vec<u8>, &T),
    ) -> Result<u32, Error> {
        let Some(s) = s else { return Ok(0) };
        if s.len() != n {
            return Err(invalid(format!(
                "{what}: {name} stream has {} elements but s_size is {n}",
                s.len()
            )));
        }
        self.align();
        let at = self.pos()?;
        for v in s {
            f(&mut self.b, v);
        }
        Ok(at)
    }

    fn key_track<K: KeyRecord>(&mut self, t: &KeyTrack<K>) -> Result<u32, Error> {
        self.align();
        let at = self.pos()?;
        let size = TrackHeader::<K::V>::size(self.variant);
        let h = TrackHeader {
            vptr: 0,
            copy: 0,
            padding: [0; 3],
            num_keys: count_i32(t.keys.len(), "key count")?,
            track_id: K::KIND as u32,
            offset_keys: if t.keys.is_empty() { 0 } else { at + size as u32 },
            current: t.current,
        };
        h.encode(&mut self.b, self.variant);
        for k in &t.keys {
            k.encode(&mut self.b);
        }
        Ok(at)
    }

    fn vec_track(&mut self, t: &VecTrack) -> Result<u32, Error> {
        match t {
            VecTrack::Tcb(k) => self.key_track(k),
            VecTrack::Linear(k) => self.key_track(k),
            VecTrack::Bezier(k) => self.key_track(k),
        }
    }

    fn float_track(&mut self, t: &FloatTrack) -> Result<u32, Error> {
        match t {
            FloatTrack::Tcb(k) => self.key_track(k),
            FloatTrack::Linear(k) => self.key_track(k),
            FloatTrack::Bezier(k) => self.key_track(k),
        }
    }

    fn rot_track(&mut self, t: &RotTrack) -> Result<u32, Error> {
        match t {
            RotTrack::Tcb(k) => self.key_track(k),
            RotTrack::Linear(k) => self.key_track(k),
            RotTrack::Euler(e) => {
                self.align();
                let at = self.pos()?;
                let mut h = EulerHeader {
                    num_keys: e.num_keys,
                    track_id: super::layout::TrackKind::Euler as u32,
                    rot_order: e.rot_order,
                    current: e.current,
                    ..EulerHeader::default()
                };
                h.encode(&mut self.b, self.variant);
                h.offset_x = self.float_track(&e.x)?;
                h.offset_y = self.float_track(&e.y)?;
                h.offset_z = self.float_track(&e.z)?;
                let variant = self.variant;
                self.patch(at, |w| h.encode(w, variant));
                Ok(at)
            }
        }
    }
}
