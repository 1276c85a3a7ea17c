//! Bytes → [`File`]: follows the header, the material table, the entity and surface chains and
//! the tracks, checking every offset, count and index against the file size and the struct it
//! points at before using it. Nothing is allocated from a count that the remaining bytes cannot
//! hold, chains are followed at most their declared length and checked for cycles, and nothing
//! recurses (EULER sub-tracks must be 1D tracks, which point at nothing but keys).

use std::collections::{BTreeMap, HashSet};

use super::issue::{Issue, Severity};
use super::layout::{
    colmap_type, name_str, BezierKey, EntityRecord, EulerHeader, Header, KeyRecord, LinearKey,
    Material, Rd, SurfaceRecord, TcbKey, TrackHeader, TrackKind, VBlend, Variant, FILE_ID,
    FILE_VERSION, NAME_LEN,
};
use super::model::{
    EulerTrack, File, FloatTrack, KeyTrack, Quat, RotTrack, Surface, Vec3, VecTrack,
};
use super::Error;
use crate::limits::Limits;

/// Reads a 3DA file. Accepts the canonical padded layout and the packed variant (detected:
/// the padded reading is tried first, the packed one when the padded one finds structural
/// errors; [`File::variant`] says which was found). Returns the file and the warnings the
/// reader survived (see [`super::check()`] for the full validation).
///
/// Fails on a wrong file id or version, a truncated header, or any offset/count that does not
/// fit the file ([`Error::Malformed`] names the byte offset of the bad field).
pub fn read(bytes: &[u8], limits: &Limits) -> Result<(File, Vec<Issue>), Error> {
    let parsed = parse(bytes, limits)?;
    match parsed.issues.iter().find(|i| i.severity == Severity::Error) {
        Some(i) => Err(Error::Malformed { offset: i.offset, message: i.message.clone() }),
        None => Ok((parsed.file, parsed.issues)),
    }
}

/// Where each part of a parsed file was found, for [`super::check()`]'s messages.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    /// Offset of each `entity_s`, parallel to [`File::entities`].
    pub entities: Vec<u64>,
    /// Offset of each `surface_s`, per entity.
    pub surfaces: Vec<Vec<u64>>,
    /// Position, rotation and scale track of each entity.
    pub tracks: Vec<[Option<TrackLoc>; 3]>,
}

/// Where a track and its key table are.
#[derive(Debug, Clone, Default)]
pub struct TrackLoc {
    /// Offset of the track header.
    pub header: u64,
    /// Offset of the key table (0 when there are no keys).
    pub keys: u64,
    /// EULER: the X, Y and Z sub-tracks.
    pub sub: Vec<TrackLoc>,
}

/// A best-effort parse: the file as far as it could be followed, the problems met on the way
/// and where everything was.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The file (entities whose records could not be reached are missing).
    pub file: File,
    /// Structural problems (errors) and oddities (warnings), in file-walk order.
    pub issues: Vec<Issue>,
    /// Offsets of what was parsed.
    pub locations: Locations,
}

/// Parses as far as possible, trying the padded then the packed layout. Fails only when the
/// header itself is unusable (too short, wrong id or version).
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Parsed, Error> {
    if bytes.len() < Header::SIZE {
        return Err(Error::Malformed {
            offset: 0,
            message: format!(
                "the file is truncated at byte {}: expected the 68-byte Anim_c header",
                bytes.len()
            ),
        });
    }
    let header = Header::decode(bytes);
    if header.file_id != FILE_ID {
        return Err(Error::NotThreeDa { found: bytes[..4].try_into().unwrap_or_default() });
    }
    if header.version != FILE_VERSION {
        return Err(Error::Version { found: header.version });
    }
    let padded = Parser::new(bytes, Variant::Padded, limits).run(&header);
    if padded.issues.iter().any(|i| i.severity == Severity::Error) {
        let packed = Parser::new(bytes, Variant::Packed, limits).run(&header);
        if !packed.issues.iter().any(|i| i.severity == Severity::Error) {
            return Ok(packed);
        }
    }
    Ok(padded)
}

struct Parser<'a> {
    b: &'a [u8],
    variant: Variant,
    limits: &'a Limits,
    issues: Vec<Issue>,
    locs: Locations,
    /// Byte ranges of the records followed (header, material table, entities, surfaces,
    /// track headers) by start: `start → (end, what)`. Records of different starts are
    /// disjoint ([`Self::fetch_record`] refuses an overlap); one reached again from its start
    /// (a shared track) keeps the larger end. Ordered, so that the overlap and containment
    /// tests are one lookup each (a list scanned per record made a 10,000-entity file
    /// quadratic: 3.4 s to check 3 MB).
    records: BTreeMap<u64, (u64, String)>,
    /// Byte ranges of the data tables (index tables, streams, key tables):
    /// `(start, end, field_at, what)`. None may overlap a record.
    blocks: Vec<(u64, u64, u64, String)>,
}

impl<'a> Parser<'a> {
    fn new(b: &'a [u8], variant: Variant, limits: &'a Limits) -> Self {
        Parser {
            b,
            variant,
            limits,
            issues: Vec::new(),
            locs: Locations::default(),
            records: BTreeMap::from([(0, (Header::SIZE as u64, "the Anim_c header".into()))]),
            blocks: Vec::new(),
        }
    }

    fn error(&mut self, offset: u64, message: String) {
        self.issues.push(Issue { severity: Severity::Error, offset, message });
    }

    fn warn(&mut self, offset: u64, message: String) {
        self.issues.push(Issue { severity: Severity::Warning, offset, message });
    }

    /// The `count × size` bytes at `off`, named by the field at `field_at` that holds `off`.
    /// `None` (with an error) when they do not fit the file or the limits; a misaligned offset
    /// in a padded file is a warning.
    fn fetch(
        &mut self,
        field_at: u64,
        what: &str,
        off: u32,
        count: u64,
        size: usize,
        align: u32,
    ) -> Option<&'a [u8]> {
        let len = self.b.len() as u64;
        if count > self.limits.max_elements {
            self.error(
                field_at,
                format!(
                    "{what}: {count} elements exceed the limit of {}",
                    self.limits.max_elements
                ),
            );
            return None;
        }
        let bytes = count.saturating_mul(size as u64);
        let start = u64::from(off);
        if start < Header::SIZE as u64 && bytes > 0 {
            self.error(field_at, format!("{what}: offset {off:#x} points into the 68-byte header"));
            return None;
        }
        if start > len || bytes > len - start {
            self.error(
                field_at,
                format!(
                    "{what}: {count} × {size} bytes at {off:#x} run past the end of the file: \
                     truncated at byte {len} ({len:#x})"
                ),
            );
            return None;
        }
        if self.variant == Variant::Padded && align > 1 && off % align != 0 && bytes > 0 {
            self.warn(field_at, format!("{what}: offset {off:#x} is not {align}-byte aligned"));
        }
        if bytes > 0 {
            self.blocks.push((start, start + bytes, field_at, what.to_string()));
        }
        Some(&self.b[start as usize..(start + bytes) as usize])
    }

    /// Whether a `size`-byte record at `off` lies between the header's end and the file's end.
    fn fits(&self, off: u32, size: usize) -> bool {
        let off = u64::from(off);
        off >= Header::SIZE as u64 && off + size as u64 <= self.b.len() as u64
    }

    /// Whether `off` lies inside a record already followed (a chain pointing back into
    /// itself or into another record).
    fn inside_record(&self, off: u32) -> bool {
        let off = u64::from(off);
        self.records.range(..=off).next_back().is_some_and(|(_, r)| off < r.0)
    }

    /// [`Self::fetch`] for a record (an `entity_s`, `surface_s`, track header, the material
    /// table): its bytes are registered as a record, which no data table may overlap.
    fn fetch_record(
        &mut self,
        field_at: u64,
        what: &str,
        off: u32,
        count: u64,
        size: usize,
    ) -> Option<&'a [u8]> {
        let b = self.fetch(field_at, what, off, count, size, 4)?;
        if let Some((s, e, _, w)) = self.blocks.pop() {
            // The same record reached twice (a shared track) starts where it started before;
            // any other overlap means an offset points into another record.
            if let Some(r) = self.record_overlapping(s, e) {
                self.error(field_at, overlap(&w, s, e, &r));
                return None;
            }
            let r = self.records.entry(s).or_insert((e, w));
            r.0 = r.0.max(e);
        }
        Some(b)
    }

    /// A record other than one starting at `s` that overlaps `s..e` (`(start, end, what)`):
    /// one starting inside `s + 1..e`, or the last one starting before `s` when it reaches past
    /// `s` (the records are disjoint, so no earlier one can).
    fn record_overlapping(&self, s: u64, e: u64) -> Option<(u64, u64, String)> {
        let inside =
            (e > s.saturating_add(1)).then(|| self.records.range(s + 1..e).next()).flatten();
        let before = self.records.range(..s).next_back().filter(|(_, r)| r.0 > s);
        inside.or(before).map(|(&rs, (re, w))| (rs, *re, w.clone()))
    }

    /// Errors for data tables that overlap a record (e.g. a stream offset pointed at its own
    /// `surface_s`, a key table at its own track header): such bytes are not what the table
    /// claims to hold.
    fn overlaps(&mut self) {
        let rec = std::mem::take(&mut self.records);
        let rec = rec.into_iter().map(|(s, (e, w))| (s, e, w));
        // Disjoint union of the records, each keeping the first record's name.
        let mut merged: Vec<(u64, u64, String)> = Vec::new();
        for (s, e, w) in rec {
            match merged.last_mut() {
                Some(last) if s < last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e, w)),
            }
        }
        for (s, e, field_at, what) in std::mem::take(&mut self.blocks) {
            let i = merged.partition_point(|r| r.0 < e);
            if let Some(r) = i.checked_sub(1).map(|i| &merged[i]).filter(|r| r.1 > s) {
                self.error(field_at, overlap(&what, s, e, r));
            }
        }
    }

    fn run(mut self, h: &Header) -> Parsed {
        let mut file = File {
            variant: self.variant,
            frames: h.frames,
            num_faces: h.num_faces,
            num_vertices: h.num_vertices,
            bounds: h.bounds,
            colmap_id: h.colmap_id,
            ..File::default()
        };
        if h.num_materials == 0 && h.offset_materials != 0 {
            let off = h.offset_materials;
            if !self.fits(off, 1) {
                self.error(16, format!("m_offsetMaterials {off:#x} (with no materials) is not between the header's end and the file's end"));
            } else {
                self.warn(16, format!("m_offsetMaterials is {off:#x} but m_iMaterials is 0"));
            }
        }
        if h.num_materials < 0 {
            self.error(20, format!("m_iMaterials is negative ({})", h.num_materials));
        } else if h.num_materials > 0 {
            let n = h.num_materials as u64;
            if let Some(t) =
                self.fetch_record(16, "material table", h.offset_materials, n, Material::SIZE)
            {
                file.materials = t.chunks_exact(Material::SIZE).map(Material::decode).collect();
            }
        }
        self.entities(h, &mut file);
        if h.offset_colmap != 0 {
            let off = h.offset_colmap as usize;
            if off < Header::SIZE || off > self.b.len() {
                self.error(64, format!("m_offsetColmap {off:#x} is not between the header's end and the file's end"));
            } else {
                file.colmap = Some(self.b[off..].to_vec());
            }
            if h.colmap_id != colmap_type::AABBTREE {
                self.warn(
                    60,
                    format!(
                        "m_ColmapID is {} but the seed allows only ANIM_COLMAP_AABBTREE (2)",
                        h.colmap_id
                    ),
                );
            }
        }
        self.overlaps();
        Parsed { file, issues: self.issues, locations: self.locs }
    }

    fn entities(&mut self, h: &Header, file: &mut File) {
        let n = u64::from(h.num_entities);
        if n.saturating_mul(EntityRecord::SIZE as u64) > self.b.len() as u64 {
            self.error(8, format!("m_iNumEntities {n} × 152 bytes exceeds the file size"));
            return;
        }
        let mut seen = HashSet::new();
        let mut field_at = 32u64;
        let mut off = h.offset_first_entity;
        for i in 0..n {
            if off == 0 {
                self.error(field_at, format!("entity chain ends after {i} of {n} entities"));
                return;
            }
            if !seen.insert(off) {
                self.error(
                    field_at,
                    format!("entity chain is cyclic: entity {i} points back to {off:#x}"),
                );
                return;
            }
            let Some(rb) =
                self.fetch_record(field_at, &format!("entity {i}"), off, 1, EntityRecord::SIZE)
            else {
                return;
            };
            let rec = EntityRecord::decode(rb);
            let at = u64::from(off);
            let ctx = format!("entity {i} \"{}\"", name_str(&rec.name));
            let surfaces = self.surfaces(&ctx, at, &rec);
            let pos =
                self.vec_track(&format!("{ctx} › position track"), at + 72, rec.pos_track_offset);
            let rot =
                self.rot_track(&format!("{ctx} › rotation track"), at + 76, rec.rot_track_offset);
            let scl =
                self.vec_track(&format!("{ctx} › scale track"), at + 80, rec.scl_track_offset);
            let (surfaces, surface_locs) = surfaces;
            file.entities.push(super::model::Entity {
                type_id: rec.type_id,
                name: rec.name,
                bounds: rec.bounds,
                parent_idx: rec.parent_idx,
                num_children: rec.num_children,
                bone_init_tm: rec.bone_init_tm,
                surfaces,
                position: pos.0,
                rotation: rot.0,
                scale: scl.0,
            });
            self.locs.entities.push(at);
            self.locs.surfaces.push(surface_locs);
            self.locs.tracks.push([pos.1, rot.1, scl.1]);
            field_at = at + 148;
            off = rec.next_offset;
        }
        if off != 0 {
            let msg =
                format!("last entity's next_offset is {off:#x}, not 0 (m_iNumEntities is {n})");
            self.chain_end(field_at, off, EntityRecord::SIZE, msg);
        }
    }

    /// The last record of a chain has a non-zero `next_offset` (`off`, stored at `field_at`):
    /// an error when it points past the file or back into a record (a reader following it
    /// would loop or fail), else a warning (the count ends the chain).
    fn chain_end(&mut self, field_at: u64, off: u32, size: usize, msg: String) {
        if !self.fits(off, size) || self.inside_record(off) {
            self.error(field_at, format!("{msg}, and points back into the chain or past the file"));
        } else {
            self.warn(field_at, msg);
        }
    }

    fn surfaces(&mut self, ctx: &str, at: u64, e: &EntityRecord) -> (Vec<Surface>, Vec<u64>) {
        let mut out = Vec::new();
        let mut locs = Vec::new();
        let n = u64::from(e.num_surfaces);
        if n == 0 {
            let off = e.surfaces_offset;
            if off != 0 && (!self.fits(off, 1) || self.inside_record(off)) {
                self.error(at + 64, format!("{ctx}: surfaces_offset {off:#x} (with no surfaces) points outside the file or into a record"));
            } else if off != 0 {
                self.warn(
                    at + 64,
                    format!("{ctx}: surfaces_offset is {off:#x} but num_surfaces is 0"),
                );
            }
            return (out, locs);
        }
        if n.saturating_mul(SurfaceRecord::SIZE as u64) > self.b.len() as u64 {
            self.error(
                at + 68,
                format!("{ctx}: num_surfaces {n} × 68 bytes exceeds the file size"),
            );
            return (out, locs);
        }
        let mut seen = HashSet::new();
        let mut field_at = at + 64;
        let mut off = e.surfaces_offset;
        for i in 0..n {
            let sctx = format!("{ctx} › surface {i}");
            if off == 0 {
                self.error(
                    field_at,
                    format!("{ctx}: surface chain ends after {i} of {n} surfaces"),
                );
                break;
            }
            if !seen.insert(off) {
                self.error(field_at, format!("{ctx}: surface chain is cyclic at {off:#x}"));
                break;
            }
            let Some(rb) = self.fetch_record(field_at, &sctx, off, 1, SurfaceRecord::SIZE) else {
                break;
            };
            let s = SurfaceRecord::decode(rb);
            let sat = u64::from(off);
            out.push(self.surface(&sctx, sat, &s));
            locs.push(sat);
            field_at = sat + 64;
            off = s.next_offset;
        }
        if off != 0 && locs.len() as u64 == n {
            let msg = format!("{ctx}: last surface's next_offset is {off:#x}, not 0");
            self.chain_end(field_at, off, SurfaceRecord::SIZE, msg);
        }
        (out, locs)
    }

    fn surface(&mut self, ctx: &str, at: u64, s: &SurfaceRecord) -> Surface {
        let n = u64::from(s.s_size);
        let mut out =
            Surface { material_idx: s.material_idx, s_size: s.s_size, ..Surface::default() };
        out.tri_list =
            self.u16s(&format!("{ctx} › tri_list"), at + 4, s.tri_list_offset, s.tri_list_size);
        out.tri_strip =
            self.u16s(&format!("{ctx} › tri_strip"), at + 12, s.tri_strip_offset, s.tri_strip_size);
        out.xyz =
            self.stream(&format!("{ctx} › xyz stream"), at + 20, s.s_xyz_offset, n, 12, |r| {
                r.f32s_3()
            });
        out.tangent = self.stream(
            &format!("{ctx} › tangent stream"),
            at + 24,
            s.s_tangent_offset,
            n,
            12,
            |r| r.f32s_3(),
        );
        out.color = self.stream(
            &format!("{ctx} › colour stream"),
            at + 28,
            s.s_color_offset,
            n,
            4,
            |r| r.u32(),
        );
        out.normal = self.stream(
            &format!("{ctx} › normal stream"),
            at + 32,
            s.s_normal_offset,
            n,
            12,
            |r| r.f32s_3(),
        );
        for (c, &o) in s.s_texcoord_offset.iter().enumerate() {
            out.texcoord[c] = self.stream(
                &format!("{ctx} › texcoord {c} stream"),
                at + 36 + 4 * c as u64,
                o,
                n,
                8,
                |r| r.f32s_2(),
            );
        }
        out.lightmap = self.stream(
            &format!("{ctx} › lightmap stream"),
            at + 52,
            s.s_lgtcoord_offset,
            n,
            8,
            |r| r.f32s_2(),
        );
        out.blending = self.stream(
            &format!("{ctx} › blending stream"),
            at + 56,
            s.s_blending_offset,
            n,
            VBlend::SIZE,
            |r| VBlend {
                bone_idx: [r.u8(), r.u8(), r.u8(), r.u8()],
                weight: [r.u16(), r.u16(), r.u16(), r.u16()],
            },
        );
        out
    }

    fn u16s(&mut self, what: &str, field_at: u64, off: u32, count: u32) -> Vec<u16> {
        if count == 0 {
            return Vec::new();
        }
        match self.fetch(field_at, what, off, count.into(), 2, 2) {
            Some(t) => t.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect(),
            None => Vec::new(),
        }
    }

    /// A stream of `n` elements of `size` bytes each, decoded by `f`; `None` when absent.
    fn stream<T>(
        &mut self,
        what: &str,
        field_at: u64,
        off: u32,
        n: u64,
        size: usize,
        f: impl Fn(&mut Rd<'_>) -> T,
    ) -> Option<Vec<T>> {
        if off == 0 {
            return None;
        }
        let t = self.fetch(field_at, what, off, n, size, 4)?;
        Some(t.chunks_exact(size).map(|c| f(&mut Rd::new(c))).collect())
    }

    /// Warns about the engine's runtime fields when a file stores something other than 0.
    fn runtime_fields(&mut self, ctx: &str, at: u64, vptr: u32, copy: u8, padding: [u8; 3]) {
        if vptr != 0 || copy != 0 || padding != [0; 3] {
            self.warn(at, format!("{ctx}: m_vptr/m_copy/padding are {vptr:#x}/{copy}/{padding:?}, written 0 by convention"));
        }
    }

    /// The track id of the header at `off`, read without knowing its value size.
    fn track_id(&mut self, ctx: &str, field_at: u64, off: u32) -> Option<(TrackKind, u32)> {
        let prefix = super::layout::track_header_prefix(self.variant);
        let b = self.fetch_record(field_at, ctx, off, 1, prefix)?;
        let id_at = 4 + 1 + self.variant.copy_padding() + 4;
        let id = u32::from_le_bytes([b[id_at], b[id_at + 1], b[id_at + 2], b[id_at + 3]]);
        match TrackKind::from_id(id) {
            Some(k) => Some((k, id)),
            None => {
                self.error((u64::from(off)) + id_at as u64, format!("{ctx}: m_track_id {id} is not TCB (1), BEZIER (2), LINEAR (3) or EULER (4)"));
                None
            }
        }
    }

    fn key_track<K: KeyRecord>(
        &mut self,
        ctx: &str,
        field_at: u64,
        off: u32,
    ) -> Option<(KeyTrack<K>, TrackLoc)> {
        let size = TrackHeader::<K::V>::size(self.variant);
        let b = self.fetch_record(field_at, ctx, off, 1, size)?;
        let h = TrackHeader::<K::V>::decode(b, self.variant);
        let at = u64::from(off);
        self.runtime_fields(ctx, at, h.vptr, h.copy, h.padding);
        let n_at = at + 5 + self.variant.copy_padding() as u64;
        if h.num_keys < 0 {
            self.error(n_at, format!("{ctx}: m_num_keys is negative ({})", h.num_keys));
            return None;
        }
        let mut keys = Vec::new();
        if h.num_keys > 0 {
            let what = format!("{ctx} › {} key table", K::KIND);
            let t = self.fetch(n_at + 8, &what, h.offset_keys, h.num_keys as u64, K::SIZE, 4)?;
            keys = t.chunks_exact(K::SIZE).map(|c| K::decode(&mut Rd::new(c))).collect();
        }
        let keys_at = if h.num_keys > 0 { u64::from(h.offset_keys) } else { 0 };
        Some((
            KeyTrack { current: h.current, keys },
            TrackLoc { header: at, keys: keys_at, sub: Vec::new() },
        ))
    }

    fn vec_track(
        &mut self,
        ctx: &str,
        field_at: u64,
        off: u32,
    ) -> (Option<VecTrack>, Option<TrackLoc>) {
        if off == 0 {
            return (None, None);
        }
        let r = match self.track_id(ctx, field_at, off) {
            Some((TrackKind::Tcb, _)) => self
                .key_track::<TcbKey<Vec3>>(ctx, field_at, off)
                .map(|(t, l)| (VecTrack::Tcb(t), l)),
            Some((TrackKind::Linear, _)) => self
                .key_track::<LinearKey<Vec3>>(ctx, field_at, off)
                .map(|(t, l)| (VecTrack::Linear(t), l)),
            Some((TrackKind::Bezier, _)) => self
                .key_track::<BezierKey<Vec3>>(ctx, field_at, off)
                .map(|(t, l)| (VecTrack::Bezier(t), l)),
            Some((TrackKind::Euler, _)) => {
                self.error(
                    u64::from(off),
                    format!("{ctx}: an EULER track where a 3D track is expected"),
                );
                None
            }
            None => None,
        };
        r.map_or((None, None), |(t, l)| (Some(t), Some(l)))
    }

    fn float_track(
        &mut self,
        ctx: &str,
        field_at: u64,
        off: u32,
    ) -> Option<(FloatTrack, TrackLoc)> {
        if off == 0 {
            self.error(field_at, format!("{ctx}: offset is 0"));
            return None;
        }
        match self.track_id(ctx, field_at, off)?.0 {
            TrackKind::Tcb => self
                .key_track::<TcbKey<f32>>(ctx, field_at, off)
                .map(|(t, l)| (FloatTrack::Tcb(t), l)),
            TrackKind::Linear => self
                .key_track::<LinearKey<f32>>(ctx, field_at, off)
                .map(|(t, l)| (FloatTrack::Linear(t), l)),
            TrackKind::Bezier => self
                .key_track::<BezierKey<f32>>(ctx, field_at, off)
                .map(|(t, l)| (FloatTrack::Bezier(t), l)),
            TrackKind::Euler => {
                self.error(
                    u64::from(off),
                    format!("{ctx}: an EULER track where a 1D track is expected"),
                );
                None
            }
        }
    }

    fn rot_track(
        &mut self,
        ctx: &str,
        field_at: u64,
        off: u32,
    ) -> (Option<RotTrack>, Option<TrackLoc>) {
        if off == 0 {
            return (None, None);
        }
        let r = match self.track_id(ctx, field_at, off) {
            Some((TrackKind::Tcb, _)) => self
                .key_track::<TcbKey<Quat>>(ctx, field_at, off)
                .map(|(t, l)| (RotTrack::Tcb(t), l)),
            Some((TrackKind::Linear, _)) => self
                .key_track::<LinearKey<Quat>>(ctx, field_at, off)
                .map(|(t, l)| (RotTrack::Linear(t), l)),
            Some((TrackKind::Bezier, _)) => {
                self.error(
                    u64::from(off),
                    format!("{ctx}: a BEZIER rotation track (the seed has no BEZIER 4D)"),
                );
                None
            }
            Some((TrackKind::Euler, _)) => self.euler(ctx, field_at, off),
            None => None,
        };
        r.map_or((None, None), |(t, l)| (Some(t), Some(l)))
    }

    fn euler(&mut self, ctx: &str, field_at: u64, off: u32) -> Option<(RotTrack, TrackLoc)> {
        let b = self.fetch_record(field_at, ctx, off, 1, EulerHeader::size(self.variant))?;
        let h = EulerHeader::decode(b, self.variant);
        let at = u64::from(off);
        self.runtime_fields(ctx, at, h.vptr, h.copy, h.padding);
        let base = at + 13 + self.variant.copy_padding() as u64;
        let x = self.float_track(&format!("{ctx} › X"), base, h.offset_x);
        let y = self.float_track(&format!("{ctx} › Y"), base + 4, h.offset_y);
        let z = self.float_track(&format!("{ctx} › Z"), base + 8, h.offset_z);
        let (x, y, z) = (x?, y?, z?);
        let track = EulerTrack {
            num_keys: h.num_keys,
            x: x.0,
            y: y.0,
            z: z.0,
            rot_order: h.rot_order,
            current: h.current,
        };
        Some((
            RotTrack::Euler(Box::new(track)),
            TrackLoc { header: at, keys: 0, sub: vec![x.1, y.1, z.1] },
        ))
    }
}

/// The error for bytes `start..end` holding `what` that overlap `record` (`(start, end,
/// what)`, as [`Parser::records`] keeps them).
fn overlap(what: &str, start: u64, end: u64, record: &(u64, u64, String)) -> String {
    let (s, e, name) = record;
    format!("{what} at {start:#x}..{end:#x} overlaps {name} at {s:#x}..{e:#x}")
}

impl Rd<'_> {
    fn f32s_3(&mut self) -> Vec3 {
        [self.f32(), self.f32(), self.f32()]
    }
    fn f32s_2(&mut self) -> [f32; 2] {
        [self.f32(), self.f32()]
    }
}

/// True when `name` holds a NUL within its 32 bytes.
pub(crate) fn nul_terminated(name: &[u8; NAME_LEN]) -> bool {
    name.contains(&0)
}
