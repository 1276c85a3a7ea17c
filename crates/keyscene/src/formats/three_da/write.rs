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

use std::io::{Seek, SeekFrom, Write};

use super::colmap::Colmap;
use super::layout::{
    EulerHeader, Header, KeyRecord, SurfaceRecord, TrackHeader, Variant, Wr, FILE_ID, FILE_VERSION,
};
use super::model::{Entity, File, FloatTrack, KeyTrack, RotTrack, Surface, VecTrack};
use super::Error;

/// Writes `file` in its [`File::variant`] layout. `m_vptr`, `m_copy` and padding bytes are
/// written 0; everything else comes from `file`.
///
/// Fails when a stream's length differs from its surface's `s_size`, a count does not fit its
/// field, or the file would pass 4 GiB.
pub fn write(file: &File) -> Result<Vec<u8>, Error> {
    let mut w = Writer::new(file.variant, None, 0, usize::MAX);
    w.file(file, file.colmap.as_deref().map(ColmapPart::Bytes))?;
    Ok(w.b)
}

/// [`write`](fn@write) straight into `out`, from its current position on. The same bytes as [`write`](fn@write),
/// but at most about [`SPILL`] of them are held in memory: finished parts are written out as they come,
/// and the offsets that point forward (each entity's and surface's `next_offset`, its record,
/// the header) are patched by seeking back once everything else is out. `out` is left
/// positioned at the end of the file.
///
/// Errors: those of [`write`](fn@write), and [`Error::Io`] when `out` fails; `out` then holds a partial
/// file (callers writing to disk use [`crate::write_atomically`], which removes it).
pub fn write_to<W: Write + Seek>(file: &File, out: &mut W) -> Result<(), Error> {
    write_spilling(file, out, SPILL)
}

/// [`write_to`], writing out whenever `spill_at` bytes are gathered.
fn write_spilling(file: &File, out: &mut dyn WriteSeek, spill_at: usize) -> Result<(), Error> {
    let origin = out.stream_position().map_err(Error::Io)?;
    let mut w = Writer::new(file.variant, Some(out), origin, spill_at);
    w.file(file, file.colmap.as_deref().map(ColmapPart::Bytes))?;
    w.finish()
}

/// The collision map block as the writer gets it.
enum ColmapPart<'a> {
    /// Encoded ([`File::colmap`]).
    Bytes(&'a [u8]),
    /// As trees, encoded while written.
    Trees(&'a Colmap),
}

/// How many encoded bytes [`write_to`] gathers before it writes them out (1 MiB).
pub const SPILL: usize = 1 << 20;

struct Writer<'a> {
    /// The bytes from file offset `base` on, not yet written to `sink`.
    b: Vec<u8>,
    /// The file offset of `b[0]`: how many bytes went to `sink` already.
    base: u64,
    /// The sink's position where the file starts (file offsets are from there).
    origin: u64,
    /// Where finished bytes go; `None`: everything stays in `b` ([`write`]).
    sink: Option<&'a mut dyn WriteSeek>,
    /// `b` is written out when it holds this many bytes ([`SPILL`]).
    spill_at: usize,
    /// Patches to bytes already written to `sink`: file offset and bytes, applied in order
    /// at the end.
    late: Vec<(u64, Vec<u8>)>,
    variant: Variant,
}

/// Where [`Writer::file`] is between its entities: the header being filled in and the
/// `next_offset` field of the last entity written (`None`: none yet).
struct Chain {
    header: Header,
    prev_next: Option<u32>,
}

/// A file written entity by entity (issue 37 goal 6: the exporter builds, writes and drops
/// one entity's surfaces at a time): [`Streamer::new`] writes the header and the material
/// table, [`Streamer::entity`] each entity in file order, [`Streamer::finish`] the collision
/// map and the header's counts and bounds. The bytes are [`write_to`]'s of the whole file
/// with its collision map encoded. Errors: those of [`write_to`].
pub(crate) struct Streamer<'a> {
    w: Writer<'a>,
    chain: Chain,
    /// Entities written so far.
    written: usize,
}

impl<'a> Streamer<'a> {
    /// Starts `file` at `out`'s position: `file`'s variant, frames, materials and entity
    /// count are final; its entities' surfaces, counts and bounds are not read.
    pub(crate) fn new<W: Write + Seek>(file: &File, out: &'a mut W) -> Result<Self, Error> {
        let origin = out.stream_position().map_err(Error::Io)?;
        let mut w = Writer::new(file.variant, Some(out), origin, SPILL);
        let chain = w.begin(file)?;
        Ok(Streamer { w, chain, written: 0 })
    }

    /// Writes the next entity (file order), its surfaces and tracks.
    pub(crate) fn entity(&mut self, e: &Entity) -> Result<(), Error> {
        self.w.entity(&mut self.chain, self.written, e)?;
        self.written += 1;
        Ok(())
    }

    /// Writes the collision map and patches the header with `file`'s face and vertex counts,
    /// bounds and collision map id; `out` is left at the file's end.
    pub(crate) fn finish(mut self, file: &File, colmap: Option<&Colmap>) -> Result<(), Error> {
        self.w.end(self.chain, file, colmap.map(ColmapPart::Trees))?;
        self.w.finish()
    }
}

/// A sink [`write_to`] can seek back in.
trait WriteSeek: Write + Seek {}

impl<T: Write + Seek> WriteSeek for T {}

fn invalid(msg: String) -> Error {
    Error::Invalid(msg)
}

fn count_u32(n: usize, what: &str) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| invalid(format!("{what}: {n} does not fit a u32")))
}

fn count_i32(n: usize, what: &str) -> Result<i32, Error> {
    i32::try_from(n).map_err(|_| invalid(format!("{what}: {n} does not fit an i32")))
}

impl<'a> Writer<'a> {
    fn new(
        variant: Variant,
        sink: Option<&'a mut dyn WriteSeek>,
        origin: u64,
        spill_at: usize,
    ) -> Writer<'a> {
        Writer { b: Vec::new(), base: 0, origin, sink, spill_at, late: Vec::new(), variant }
    }

    fn pos(&self) -> Result<u32, Error> {
        u32::try_from(self.base + self.b.len() as u64)
            .map_err(|_| invalid("the file would be larger than 4 GiB".into()))
    }

    fn align(&mut self) {
        while (self.base + self.b.len() as u64) % 4 != 0 {
            self.b.push(0);
        }
    }

    /// Overwrites `len` bytes at `at` with what `f` encodes: in `b`, or later, in the sink,
    /// for the part already written out.
    fn patch(&mut self, at: u32, f: impl FnOnce(&mut Vec<u8>)) {
        let mut tmp = Vec::new();
        f(&mut tmp);
        let at = u64::from(at);
        let written = self.base.saturating_sub(at).min(tmp.len() as u64) as usize;
        if written > 0 {
            self.late.push((at, tmp[..written].to_vec()));
        }
        let rest = &tmp[written..];
        if !rest.is_empty() {
            let from = (at + written as u64 - self.base) as usize;
            self.b[from..from + rest.len()].copy_from_slice(rest);
        }
    }

    /// Writes `b` out once it holds `spill_at` bytes (never without a sink).
    fn spill(&mut self) -> Result<(), Error> {
        if self.b.len() >= self.spill_at {
            if let Some(sink) = self.sink.as_mut() {
                sink.write_all(&self.b).map_err(Error::Io)?;
                self.base += self.b.len() as u64;
                self.b.clear();
            }
        }
        Ok(())
    }

    /// Appends `bytes`: with a sink, what `b` holds goes out first and `bytes` straight after
    /// it, not through `b` (a collision map of tens of megabytes was copied into `b`, which
    /// grew by doubling, beside the model and the map itself).
    fn bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        match self.sink.as_mut() {
            Some(sink) if bytes.len() >= self.spill_at => {
                sink.write_all(&self.b).map_err(Error::Io)?;
                sink.write_all(bytes).map_err(Error::Io)?;
                self.base += (self.b.len() + bytes.len()) as u64;
                self.b.clear();
                Ok(())
            }
            _ => {
                self.b.extend_from_slice(bytes);
                self.spill()
            }
        }
    }

    /// Appends the collision map `map` encoded: with a sink straight into it after what `b`
    /// holds, else into `b`.
    fn colmap(&mut self, map: &Colmap) -> Result<(), Error> {
        match self.sink.as_mut() {
            Some(sink) => {
                sink.write_all(&self.b).map_err(Error::Io)?;
                map.write_to(&mut **sink).map_err(Error::Io)?;
                self.base += (self.b.len() + map.encoded_len()) as u64;
                self.b.clear();
                Ok(())
            }
            None => {
                map.write_to(&mut self.b).map_err(Error::Io)?;
                Ok(())
            }
        }
    }

    /// Writes what is left in `b`, then the patches to bytes written before, and leaves the
    /// sink at the file's end.
    fn finish(mut self) -> Result<(), Error> {
        let Some(sink) = self.sink.take() else { return Ok(()) };
        sink.write_all(&self.b).map_err(Error::Io)?;
        if !self.late.is_empty() {
            let end = self.origin + self.base + self.b.len() as u64;
            for (at, bytes) in &self.late {
                sink.seek(SeekFrom::Start(self.origin + at)).map_err(Error::Io)?;
                sink.write_all(bytes).map_err(Error::Io)?;
            }
            sink.seek(SeekFrom::Start(end)).map_err(Error::Io)?;
        }
        Ok(())
    }

    fn file(&mut self, file: &File, colmap: Option<ColmapPart<'_>>) -> Result<(), Error> {
        let mut chain = self.begin(file)?;
        for (i, e) in file.entities.iter().enumerate() {
            self.entity(&mut chain, i, e)?;
        }
        self.end(chain, file, colmap)
    }

    /// The header (patched by [`Writer::end`]) and the material table of `file`.
    fn begin(&mut self, file: &File) -> Result<Chain, Error> {
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
        Ok(Chain { header, prev_next: None })
    }

    /// Entity `i` (file order) with its surfaces and tracks, chained after the one before.
    fn entity(&mut self, chain: &mut Chain, i: usize, e: &Entity) -> Result<(), Error> {
        self.align();
        let at = self.pos()?;
        match chain.prev_next {
            None => chain.header.offset_first_entity = at,
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
        chain.prev_next = Some(at + 148);
        Ok(())
    }

    /// The collision map, then the header patched with `file`'s counts and bounds.
    fn end(
        &mut self,
        chain: Chain,
        file: &File,
        colmap: Option<ColmapPart<'_>>,
    ) -> Result<(), Error> {
        let mut header = chain.header;
        (header.num_faces, header.num_vertices) = (file.num_faces, file.num_vertices);
        (header.bounds, header.colmap_id) = (file.bounds, file.colmap_id);
        if let Some(c) = colmap {
            self.align();
            header.offset_colmap = self.pos()?;
            match c {
                ColmapPart::Bytes(c) => self.bytes(c)?,
                ColmapPart::Trees(t) => self.colmap(t)?,
            }
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
        self.spill()?;
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
        self.spill()?;
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
        self.spill()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::three_da::layout::{entity_type, LinearKey, TcbKey, Variant};
    use crate::formats::three_da::model::{Entity, EulerTrack, Surface};
    use std::io::Cursor;

    /// Three meshes of one surface each (with a key track apiece) and an EULER-rotated
    /// helper: every kind of forward offset the writer patches.
    fn file(variant: Variant) -> File {
        let mut f = File { variant, frames: 10, ..File::default() };
        for m in 0..3u16 {
            let mut e = Entity::new(entity_type::MESH, &format!("Box{m:02}"));
            e.surfaces.push(Surface {
                material_idx: 0,
                tri_list: vec![0, 1, 2],
                tri_strip: vec![0, 1, 2],
                s_size: 3,
                xyz: Some(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, f32::from(m), 1.0]]),
                normal: Some(vec![[0.0, 0.0, 1.0]; 3]),
                ..Surface::default()
            });
            e.position = Some(VecTrack::Tcb(KeyTrack {
                current: [0.0; 3],
                keys: (0..4)
                    .map(|k| TcbKey {
                        frame: k * 3,
                        value: [k as f32, 0.0, 1.0],
                        ..TcbKey::default()
                    })
                    .collect(),
            }));
            f.entities.push(e);
        }
        let lin = |v: f32| {
            FloatTrack::Linear(KeyTrack {
                current: v,
                keys: vec![LinearKey { frame: 0, value: v }],
            })
        };
        let mut helper = Entity::new(entity_type::HELPER, "Dummy01");
        helper.rotation = Some(RotTrack::Euler(Box::new(EulerTrack {
            num_keys: 1,
            rot_order: [0, 1, 2],
            current: [0.0, 0.0, 0.0, 1.0],
            x: lin(0.5),
            y: lin(0.25),
            z: lin(0.0),
        })));
        f.entities.push(helper);
        f.colmap = Some(vec![7; 10]);
        f
    }

    #[test]
    fn streamed_bytes_are_the_in_memory_bytes_wherever_they_spill() {
        for variant in [Variant::Padded, Variant::Packed] {
            let f = file(variant);
            let whole = write(&f).unwrap();
            // The bytes read back as the file (the reader is an independent path).
            let (back, _) = super::super::read(&whole, &crate::limits::Limits::default()).unwrap();
            assert_eq!(back.entities.len(), 4);
            assert_eq!(back.entities[2].surfaces[0].xyz.as_ref().unwrap()[2], [0.0, 2.0, 1.0]);
            for spill_at in [1, 3, 64, 150, 1000, usize::MAX] {
                for prefix in [0usize, 5] {
                    let mut out = Cursor::new(vec![0xAA; prefix]);
                    out.set_position(prefix as u64);
                    write_spilling(&f, &mut out, spill_at).unwrap();
                    assert_eq!(out.position() as usize, prefix + whole.len());
                    let got = out.into_inner();
                    assert!(got[..prefix].iter().all(|&b| b == 0xAA));
                    assert!(
                        got[prefix..] == whole[..],
                        "{variant:?}, spill at {spill_at}, prefix {prefix}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_failing_sink_is_an_io_error() {
        struct Full(Cursor<Vec<u8>>);
        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.0.get_ref().len() + b.len() > 100 {
                    return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"));
                }
                self.0.write(b)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        impl Seek for Full {
            fn seek(&mut self, p: SeekFrom) -> std::io::Result<u64> {
                self.0.seek(p)
            }
        }
        let r = write_spilling(&file(Variant::Padded), &mut Full(Cursor::new(Vec::new())), 16);
        assert!(matches!(r, Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::StorageFull));
    }
}
