//! The engine's 32-bit little-endian structures, byte for byte (seed 002, §6 "Data structures
//! details"). This layer knows sizes, field offsets and constants; it never imports the scene
//! model. The decisions the seed leaves open (padding, the packed variant) are in `docs/3da.md`.
//!
//! Every struct here is the *on-disk* record, offsets included. [`super::model`] holds the
//! resolved tree (entities with their surfaces, streams and tracks) that readers and writers
//! exchange.

use std::fmt;

/// `ANIM_FILE_ID`: `'_'<<24 | 'A'<<16 | 'D'<<8 | '3'`, so the file starts with the bytes
/// `33 44 41 5F` ("3DA_").
pub const FILE_ID: u32 =
    (b'_' as u32) << 24 | (b'A' as u32) << 16 | (b'D' as u32) << 8 | b'3' as u32;
/// `ANIM_FILE_VERSION`, the only version this crate reads and writes.
pub const FILE_VERSION: u32 = 0x207;
/// `ANIM_MAX_MATERIAL_NAMELEN` and `ANIM_MAX_MESH_NAMELEN`: name arrays are 32 bytes, NUL
/// included.
pub const NAME_LEN: usize = 32;
/// `ANIM_MAP_CHANNELS_MAX`: texture channels per material and UV streams per surface.
pub const MAP_CHANNELS: usize = 4;
/// `ANIM_VERTEX_WEIGHT_SCALE`: a vertex's four blend weights sum to exactly this.
pub const VERTEX_WEIGHT_SCALE: u32 = 32768;
/// `parent_idx` of a root entity (the seed's "-1" stored in a `ushort`).
pub const NO_PARENT: u16 = 0xFFFF;
/// `COLLISION_HULL`: the node the collision-hull map is built from.
pub const COLLISION_HULL: &str = "CollisionHull_0";

/// `EntityID_e` values (`entity_s::type_id`).
pub mod entity_type {
    /// `ANIM_UNKNOWN`.
    pub const UNKNOWN: u32 = 0;
    /// `ANIM_MESH_3DA`: a mesh.
    pub const MESH: u32 = 1;
    /// `ANIM_MESH_SKINNED_3DA`: a mesh with a vertex-blending stream.
    pub const MESH_SKINNED: u32 = 2;
    /// `ANIM_HELPER_3DA`: a dummy object.
    pub const HELPER: u32 = 3;
    /// `ANIM_BONE_3DA`: a bone.
    pub const BONE: u32 = 4;
}

/// `ColMapID_e` values (`Anim_c::m_ColmapID`).
pub mod colmap_type {
    /// `ANIM_COLMAP_UNKNOWN`.
    pub const UNKNOWN: u32 = 0;
    /// `ANIM_COLMAP_LOOSE_OCTREE` (not to be used, says the seed).
    pub const LOOSE_OCTREE: u32 = 1;
    /// `ANIM_COLMAP_AABBTREE`.
    pub const AABBTREE: u32 = 2;
}

/// `TrackID_e`: the kind of a track (`m_track_id`). The dimension (1D float, 3D vector, 4D
/// quaternion) is not stored: it follows from where the track is referenced (position and
/// scale 3D, rotation 4D, EULER sub-tracks 1D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrackKind {
    /// `TRACK_TCB = 1`.
    Tcb = 1,
    /// `TRACK_BEZIER = 2`.
    Bezier = 2,
    /// `TRACK_LINEAR = 3`.
    Linear = 3,
    /// `TRACK_EULER = 4`.
    Euler = 4,
}

impl TrackKind {
    /// The kind for a `m_track_id` value, `None` for anything else.
    pub fn from_id(id: u32) -> Option<TrackKind> {
        match id {
            1 => Some(TrackKind::Tcb),
            2 => Some(TrackKind::Bezier),
            3 => Some(TrackKind::Linear),
            4 => Some(TrackKind::Euler),
            _ => None,
        }
    }
}

impl fmt::Display for TrackKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrackKind::Tcb => "TCB",
            TrackKind::Bezier => "BEZIER",
            TrackKind::Linear => "LINEAR",
            TrackKind::Euler => "EULER",
        })
    }
}

/// How track headers are laid out. The seed's track classes start `void* m_vptr; bool m_copy;
/// int m_num_keys; …`: in the engine's 32-bit memory layout `m_copy` is followed by 3 padding
/// bytes ([`Variant::Padded`], the canonical layout this crate writes). A writer that packed
/// its structs would omit them ([`Variant::Packed`]); the reader detects which a file uses.
/// Only track headers contain a `bool`, so only they differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// Natural 4-byte alignment: track header 20 bytes before the current value, EULER 56.
    #[default]
    Padded,
    /// No padding after `m_copy`: track header 17 bytes before the current value, EULER 53;
    /// key tables, which follow their header, are then not 4-byte aligned.
    Packed,
}

/// `padded (m_copy + 3 padding bytes)` / `packed (no padding after m_copy)`.
impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Padded => "padded track headers (m_copy then 3 padding bytes)",
            Variant::Packed => "packed track headers (no padding after m_copy)",
        })
    }
}

impl Variant {
    /// Bytes between `m_copy` and `m_num_keys`.
    pub fn copy_padding(self) -> usize {
        match self {
            Variant::Padded => 3,
            Variant::Packed => 0,
        }
    }
}

/// `EXTENTS`: an axis-aligned box, `float minx, miny, minz, maxx, maxy, maxz` (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Extents {
    /// Minimum corner.
    pub min: [f32; 3],
    /// Maximum corner.
    pub max: [f32; 3],
}

/// A little-endian cursor over a slice the caller has already checked is long enough for the
/// struct being decoded (every `decode` takes `SIZE` bytes; bytes past the end read as 0).
pub struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Rd<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Rd { b, pos: 0 }
    }
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(s) = self.b.get(self.pos..self.pos + N) {
            out.copy_from_slice(s);
        }
        self.pos += N;
        out
    }
    pub(crate) fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub(crate) fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take())
    }
    pub(crate) fn f32(&mut self) -> f32 {
        f32::from_le_bytes(self.take())
    }
    pub(crate) fn name(&mut self) -> [u8; NAME_LEN] {
        self.take()
    }
    fn f32s<const N: usize>(&mut self) -> [f32; N] {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.f32();
        }
        out
    }
    fn extents(&mut self) -> Extents {
        Extents { min: self.f32s(), max: self.f32s() }
    }
}

/// Little-endian writes.
pub(crate) trait Wr {
    fn u16(&mut self, v: u16);
    fn u32(&mut self, v: u32);
    fn i32(&mut self, v: i32);
    fn f32(&mut self, v: f32);
    fn f32s(&mut self, v: &[f32]);
}

impl Wr for Vec<u8> {
    fn u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn f32s(&mut self, v: &[f32]) {
        for x in v {
            self.f32(*x);
        }
    }
}

fn write_extents(w: &mut Vec<u8>, e: &Extents) {
    w.f32s(&e.min);
    w.f32s(&e.max);
}

/// `Anim_c`, the 68-byte file header at offset 0.
///
/// | off | field | |
/// |---|---|---|
/// | 0 | `m_iFileID` u32 | [`FILE_ID`] |
/// | 4 | `m_iVersion` u32 | [`FILE_VERSION`] |
/// | 8 | `m_iNumEntities` u32 | |
/// | 12 | `m_iFrames` u32 | animation length in frames |
/// | 16 | `m_offsetMaterials` u32 | |
/// | 20 | `m_iMaterials` i32 | |
/// | 24 | `m_iNumFaces` i32 | information only |
/// | 28 | `m_iNumVertices` i32 | information only |
/// | 32 | `m_offsetFirstEntity` u32 | |
/// | 36 | `m_Bounds` EXTENTS | at the first animation frame |
/// | 60 | `m_ColmapID` u32 | [`colmap_type`] |
/// | 64 | `m_offsetColmap` u32 | 0: no collision map |
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct Header {
    pub file_id: u32,
    pub version: u32,
    pub num_entities: u32,
    pub frames: u32,
    pub offset_materials: u32,
    pub num_materials: i32,
    pub num_faces: i32,
    pub num_vertices: i32,
    pub offset_first_entity: u32,
    pub bounds: Extents,
    pub colmap_id: u32,
    pub offset_colmap: u32,
}

impl Header {
    /// Size on disk.
    pub const SIZE: usize = 68;

    /// Decodes the header from the first [`Header::SIZE`] bytes of `b` (missing bytes read 0).
    pub fn decode(b: &[u8]) -> Header {
        let mut r = Rd::new(b);
        Header {
            file_id: r.u32(),
            version: r.u32(),
            num_entities: r.u32(),
            frames: r.u32(),
            offset_materials: r.u32(),
            num_materials: r.i32(),
            num_faces: r.i32(),
            num_vertices: r.i32(),
            offset_first_entity: r.u32(),
            bounds: r.extents(),
            colmap_id: r.u32(),
            offset_colmap: r.u32(),
        }
    }

    /// Appends the header's 68 bytes.
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.u32(self.file_id);
        w.u32(self.version);
        w.u32(self.num_entities);
        w.u32(self.frames);
        w.u32(self.offset_materials);
        w.i32(self.num_materials);
        w.i32(self.num_faces);
        w.i32(self.num_vertices);
        w.u32(self.offset_first_entity);
        write_extents(w, &self.bounds);
        w.u32(self.colmap_id);
        w.u32(self.offset_colmap);
    }
}

/// `material_s`, 252 bytes; materials are contiguous from `m_offsetMaterials`. Only `name`
/// is used by the engine (it names a material script, e.g. `test.mat`); the rest is kept for
/// "historical reasons" (seed §1).
///
/// | off | field |
/// |---|---|
/// | 0 | `name` `char[32]` |
/// | 32 | `map_name` `char[4][32]` |
/// | 160 | `map_channel` `u32[4]` |
/// | 176 | `num_maps` i32 |
/// | 180 | `ambient` COLOR4F (RGBA floats) |
/// | 196 | `diffuse` COLOR4F |
/// | 212 | `specular` COLOR4F |
/// | 228 | `emissive` COLOR4F |
/// | 244 | `specular_pow` f32 |
/// | 248 | `flags` i32 |
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)]
pub struct Material {
    pub name: [u8; NAME_LEN],
    pub map_name: [[u8; NAME_LEN]; MAP_CHANNELS],
    pub map_channel: [u32; MAP_CHANNELS],
    pub num_maps: i32,
    pub ambient: [f32; 4],
    pub diffuse: [f32; 4],
    pub specular: [f32; 4],
    pub emissive: [f32; 4],
    pub specular_pow: f32,
    pub flags: i32,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: [0; NAME_LEN],
            map_name: [[0; NAME_LEN]; MAP_CHANNELS],
            map_channel: [0; MAP_CHANNELS],
            num_maps: 0,
            ambient: [0.0; 4],
            diffuse: [0.0; 4],
            specular: [0.0; 4],
            emissive: [0.0; 4],
            specular_pow: 0.0,
            flags: 0,
        }
    }
}

impl Material {
    /// Size on disk.
    pub const SIZE: usize = 252;

    /// Decodes a material from `b` (at least [`Material::SIZE`] bytes).
    pub fn decode(b: &[u8]) -> Material {
        let mut r = Rd::new(b);
        Material {
            name: r.name(),
            map_name: [r.name(), r.name(), r.name(), r.name()],
            map_channel: [r.u32(), r.u32(), r.u32(), r.u32()],
            num_maps: r.i32(),
            ambient: r.f32s(),
            diffuse: r.f32s(),
            specular: r.f32s(),
            emissive: r.f32s(),
            specular_pow: r.f32(),
            flags: r.i32(),
        }
    }

    /// Appends the material's 252 bytes.
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(&self.name);
        for n in &self.map_name {
            w.extend_from_slice(n);
        }
        for c in self.map_channel {
            w.u32(c);
        }
        w.i32(self.num_maps);
        for c in [&self.ambient, &self.diffuse, &self.specular, &self.emissive] {
            w.f32s(c);
        }
        w.f32(self.specular_pow);
        w.i32(self.flags);
    }
}

/// `entity_s`, 152 bytes: one node. Entities form a chain from `m_offsetFirstEntity` through
/// `next_offset` (0 ends it), in the seed's traverse() order.
///
/// | off | field | |
/// |---|---|---|
/// | 0 | `type_id` u32 | [`entity_type`] |
/// | 4 | `name` `char[32]` | NUL-terminated |
/// | 36 | `bounds` EXTENTS | local space |
/// | 60 | `parent_idx` u16 | index in file order, [`NO_PARENT`] for a root |
/// | 62 | `num_children` u16 | |
/// | 64 | `surfaces_offset` u32 | first `surface_s` |
/// | 68 | `num_surfaces` u32 | |
/// | 72 | `pos_track_offset` u32 | 3D track |
/// | 76 | `rot_track_offset` u32 | 4D or EULER track |
/// | 80 | `scl_track_offset` u32 | 3D track |
/// | 84 | `bone_init_tm` `f32[4][4]` | the seed says: identity |
/// | 148 | `next_offset` u32 | next `entity_s`, 0 at the end |
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)]
pub struct EntityRecord {
    pub type_id: u32,
    pub name: [u8; NAME_LEN],
    pub bounds: Extents,
    pub parent_idx: u16,
    pub num_children: u16,
    pub surfaces_offset: u32,
    pub num_surfaces: u32,
    pub pos_track_offset: u32,
    pub rot_track_offset: u32,
    pub scl_track_offset: u32,
    pub bone_init_tm: [f32; 16],
    pub next_offset: u32,
}

impl EntityRecord {
    /// Size on disk.
    pub const SIZE: usize = 152;

    /// Decodes an entity from `b` (at least [`EntityRecord::SIZE`] bytes).
    pub fn decode(b: &[u8]) -> EntityRecord {
        let mut r = Rd::new(b);
        EntityRecord {
            type_id: r.u32(),
            name: r.name(),
            bounds: r.extents(),
            parent_idx: r.u16(),
            num_children: r.u16(),
            surfaces_offset: r.u32(),
            num_surfaces: r.u32(),
            pos_track_offset: r.u32(),
            rot_track_offset: r.u32(),
            scl_track_offset: r.u32(),
            bone_init_tm: r.f32s(),
            next_offset: r.u32(),
        }
    }

    /// Appends the entity's 152 bytes.
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.u32(self.type_id);
        w.extend_from_slice(&self.name);
        write_extents(w, &self.bounds);
        w.u16(self.parent_idx);
        w.u16(self.num_children);
        w.u32(self.surfaces_offset);
        w.u32(self.num_surfaces);
        w.u32(self.pos_track_offset);
        w.u32(self.rot_track_offset);
        w.u32(self.scl_track_offset);
        w.f32s(&self.bone_init_tm);
        w.u32(self.next_offset);
    }
}

/// `surface_s`, 68 bytes: the triangles of one entity sharing a material. Surfaces form a
/// chain from `entity_s::surfaces_offset` through `next_offset`. A stream offset of 0 means
/// the stream is absent; each present stream holds `s_size` elements.
///
/// | off | field | element |
/// |---|---|---|
/// | 0 | `material_idx` i32 | |
/// | 4 | `tri_list_offset` u32 | u16 |
/// | 8 | `tri_list_size` u32 | number of indices |
/// | 12 | `tri_strip_offset` u32 | u16 |
/// | 16 | `tri_strip_size` u32 | number of indices (may be 0) |
/// | 20 | `s_xyz_offset` u32 | `f32[3]` |
/// | 24 | `s_tangent_offset` u32 | `f32[3]` |
/// | 28 | `s_color_offset` u32 | RGBA_c, u32 |
/// | 32 | `s_normal_offset` u32 | `f32[3]` |
/// | 36 | `s_texcoord_offset` `u32[4]` | `f32[2]` |
/// | 52 | `s_lgtcoord_offset` u32 | `f32[2]` |
/// | 56 | `s_blending_offset` u32 | [`VBlend`], 12 bytes |
/// | 60 | `s_size` u32 | stream length |
/// | 64 | `next_offset` u32 | next `surface_s`, 0 at the end |
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct SurfaceRecord {
    pub material_idx: i32,
    pub tri_list_offset: u32,
    pub tri_list_size: u32,
    pub tri_strip_offset: u32,
    pub tri_strip_size: u32,
    pub s_xyz_offset: u32,
    pub s_tangent_offset: u32,
    pub s_color_offset: u32,
    pub s_normal_offset: u32,
    pub s_texcoord_offset: [u32; MAP_CHANNELS],
    pub s_lgtcoord_offset: u32,
    pub s_blending_offset: u32,
    pub s_size: u32,
    pub next_offset: u32,
}

impl SurfaceRecord {
    /// Size on disk.
    pub const SIZE: usize = 68;

    /// Decodes a surface from `b` (at least [`SurfaceRecord::SIZE`] bytes).
    pub fn decode(b: &[u8]) -> SurfaceRecord {
        let mut r = Rd::new(b);
        SurfaceRecord {
            material_idx: r.i32(),
            tri_list_offset: r.u32(),
            tri_list_size: r.u32(),
            tri_strip_offset: r.u32(),
            tri_strip_size: r.u32(),
            s_xyz_offset: r.u32(),
            s_tangent_offset: r.u32(),
            s_color_offset: r.u32(),
            s_normal_offset: r.u32(),
            s_texcoord_offset: [r.u32(), r.u32(), r.u32(), r.u32()],
            s_lgtcoord_offset: r.u32(),
            s_blending_offset: r.u32(),
            s_size: r.u32(),
            next_offset: r.u32(),
        }
    }

    /// Appends the surface's 68 bytes.
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.i32(self.material_idx);
        w.u32(self.tri_list_offset);
        w.u32(self.tri_list_size);
        w.u32(self.tri_strip_offset);
        w.u32(self.tri_strip_size);
        w.u32(self.s_xyz_offset);
        w.u32(self.s_tangent_offset);
        w.u32(self.s_color_offset);
        w.u32(self.s_normal_offset);
        for o in self.s_texcoord_offset {
            w.u32(o);
        }
        w.u32(self.s_lgtcoord_offset);
        w.u32(self.s_blending_offset);
        w.u32(self.s_size);
        w.u32(self.next_offset);
    }
}

/// `VBlend_s`, 12 bytes: four bone indices (`uchar`, entity indices in file order) at 0 and
/// four weights (`ushort`, scaled by [`VERTEX_WEIGHT_SCALE`], summing to it) at 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct VBlend {
    /// Entity indices of the influencing bones.
    pub bone_idx: [u8; 4],
    /// Weights, `ANIM_FLOAT_2_WIEGHT(x) = (ushort)(x * 32768)`.
    pub weight: [u16; 4],
}

impl VBlend {
    /// Size on disk.
    pub const SIZE: usize = 12;
}

/// A value a track interpolates: `float` (1D), `vec3` (3D) or `quat` (4D, stored x, y, z, w
/// as the engine's `quat` — see `docs/3da.md`).
pub trait Value: Copy + PartialEq + fmt::Debug + Default {
    /// Bytes on disk: 4, 12 or 16.
    const SIZE: usize;
    /// Reads one value.
    #[doc(hidden)]
    fn decode(r: &mut Rd<'_>) -> Self;
    /// Appends one value.
    #[doc(hidden)]
    fn encode(&self, w: &mut Vec<u8>);
}

impl Value for f32 {
    const SIZE: usize = 4;
    fn decode(r: &mut Rd<'_>) -> Self {
        r.f32()
    }
    fn encode(&self, w: &mut Vec<u8>) {
        w.f32(*self);
    }
}

impl<const N: usize> Value for [f32; N]
where
    [f32; N]: Default,
{
    const SIZE: usize = 4 * N;
    fn decode(r: &mut Rd<'_>) -> Self {
        r.f32s()
    }
    fn encode(&self, w: &mut Vec<u8>) {
        w.f32s(self);
    }
}

/// A key class: `TCBKey*_c`, `LINEARKey*_c` or `BEZIERKey*_c`.
pub trait KeyRecord: Copy + PartialEq + fmt::Debug {
    /// The interpolated value type.
    type V: Value;
    /// The `m_track_id` of tracks holding these keys.
    const KIND: TrackKind;
    /// Bytes on disk.
    const SIZE: usize;
    /// The key's frame (`m_keyframe`; `uint` for TCB, `int` otherwise).
    fn frame(&self) -> i64;
    /// Reads one key.
    #[doc(hidden)]
    fn decode(r: &mut Rd<'_>) -> Self;
    /// Appends one key.
    #[doc(hidden)]
    fn encode(&self, w: &mut Vec<u8>);
    /// Replaces the key's value and, for TCB and BEZIER keys, its `in_tan` and `out_tan` by
    /// `f` of them (a change of axes applied to a whole track); frame and TCB parameters stay.
    fn map_values(&mut self, f: &dyn Fn(Self::V) -> Self::V);
}

/// `TCBKey1D_c` / `TCBKey3D_c` / `TCBKey4D_c`: 24 bytes of frame and TCB parameters, then
/// value, in-tangent and out-tangent (36 / 60 / 72 bytes).
///
/// | off | field |
/// |---|---|
/// | 0 | `m_keyframe` u32 (frames) |
/// | 4 | `m_fTension` f32 |
/// | 8 | `m_fContinuity` f32 |
/// | 12 | `m_fBias` f32 |
/// | 16 | `m_fEaseIn` f32 |
/// | 20 | `m_fEaseOut` f32 |
/// | 24 | `m_value` V |
/// | 24+V | `m_in_tan` V |
/// | 24+2V | `m_out_tan` V |
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct TcbKey<V> {
    pub frame: u32,
    pub tension: f32,
    pub continuity: f32,
    pub bias: f32,
    pub ease_in: f32,
    pub ease_out: f32,
    pub value: V,
    pub in_tan: V,
    pub out_tan: V,
}

impl<V: Value> KeyRecord for TcbKey<V> {
    fn map_values(&mut self, f: &dyn Fn(V) -> V) {
        (self.value, self.in_tan, self.out_tan) = (f(self.value), f(self.in_tan), f(self.out_tan));
    }
    type V = V;
    const KIND: TrackKind = TrackKind::Tcb;
    const SIZE: usize = 24 + 3 * V::SIZE;
    fn frame(&self) -> i64 {
        self.frame.into()
    }
    fn decode(r: &mut Rd<'_>) -> Self {
        TcbKey {
            frame: r.u32(),
            tension: r.f32(),
            continuity: r.f32(),
            bias: r.f32(),
            ease_in: r.f32(),
            ease_out: r.f32(),
            value: V::decode(r),
            in_tan: V::decode(r),
            out_tan: V::decode(r),
        }
    }
    fn encode(&self, w: &mut Vec<u8>) {
        w.u32(self.frame);
        w.f32s(&[self.tension, self.continuity, self.bias, self.ease_in, self.ease_out]);
        self.value.encode(w);
        self.in_tan.encode(w);
        self.out_tan.encode(w);
    }
}

/// `LINEARKey1D_c` / `3D` / `4D`: `int m_keyframe` at 0, value at 4 (8 / 16 / 20 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LinearKey<V> {
    /// `m_keyframe` (frames).
    pub frame: i32,
    /// `m_value`.
    pub value: V,
}

impl<V: Value> KeyRecord for LinearKey<V> {
    fn map_values(&mut self, f: &dyn Fn(V) -> V) {
        self.value = f(self.value);
    }
    type V = V;
    const KIND: TrackKind = TrackKind::Linear;
    const SIZE: usize = 4 + V::SIZE;
    fn frame(&self) -> i64 {
        self.frame.into()
    }
    fn decode(r: &mut Rd<'_>) -> Self {
        LinearKey { frame: r.i32(), value: V::decode(r) }
    }
    fn encode(&self, w: &mut Vec<u8>) {
        w.i32(self.frame);
        self.value.encode(w);
    }
}

/// `BEZIERKey1D_c` / `BEZIERKey3D_c`: `int m_keyframe` at 0, then in-tangent, out-tangent and
/// value — value *last* (16 / 40 bytes). The seed comments the 3D fields "4byte"; they are
/// `vec3`, so 12 bytes each (resolved by type, docs/3da.md).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct BezierKey<V> {
    pub frame: i32,
    pub in_tan: V,
    pub out_tan: V,
    pub value: V,
}

impl<V: Value> KeyRecord for BezierKey<V> {
    fn map_values(&mut self, f: &dyn Fn(V) -> V) {
        (self.value, self.in_tan, self.out_tan) = (f(self.value), f(self.in_tan), f(self.out_tan));
    }
    type V = V;
    const KIND: TrackKind = TrackKind::Bezier;
    const SIZE: usize = 4 + 3 * V::SIZE;
    fn frame(&self) -> i64 {
        self.frame.into()
    }
    fn decode(r: &mut Rd<'_>) -> Self {
        BezierKey {
            frame: r.i32(),
            in_tan: V::decode(r),
            out_tan: V::decode(r),
            value: V::decode(r),
        }
    }
    fn encode(&self, w: &mut Vec<u8>) {
        w.i32(self.frame);
        self.in_tan.encode(w);
        self.out_tan.encode(w);
        self.value.encode(w);
    }
}

/// Size of a track header before its current value: 20 padded, 17 packed.
pub fn track_header_prefix(variant: Variant) -> usize {
    17 + variant.copy_padding()
}

/// The header of a TCB, LINEAR or BEZIER track (`TCBTrack1D_c` …), padded layout:
///
/// | off | field |
/// |---|---|
/// | 0 | `m_vptr` (4 bytes, written 0) |
/// | 4 | `m_copy` bool (written 0), then 3 padding bytes (written 0) |
/// | 8 | `m_num_keys` i32 |
/// | 12 | `m_track_id` u32 |
/// | 16 | `m_offset_keys` u32 (0 when there are no keys) |
/// | 20 | `m_current_value` V |
///
/// Packed: the same without the 3 padding bytes (fields from `m_num_keys` on move 3 bytes back).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct TrackHeader<V> {
    pub vptr: u32,
    pub copy: u8,
    pub padding: [u8; 3],
    pub num_keys: i32,
    pub track_id: u32,
    pub offset_keys: u32,
    pub current: V,
}

impl<V: Value> TrackHeader<V> {
    /// Size on disk in `variant`: 24/32/36 padded, 21/29/33 packed.
    pub fn size(variant: Variant) -> usize {
        track_header_prefix(variant) + V::SIZE
    }

    /// Decodes a header from `b` (at least [`Self::size`] bytes).
    pub fn decode(b: &[u8], variant: Variant) -> Self {
        let mut r = Rd::new(b);
        let vptr = r.u32();
        let copy = r.u8();
        let mut padding = [0u8; 3];
        for p in padding.iter_mut().take(variant.copy_padding()) {
            *p = r.u8();
        }
        TrackHeader {
            vptr,
            copy,
            padding,
            num_keys: r.i32(),
            track_id: r.u32(),
            offset_keys: r.u32(),
            current: V::decode(&mut r),
        }
    }

    /// Appends the header; `vptr`, `copy` and padding are written as stored.
    pub fn encode(&self, w: &mut Vec<u8>, variant: Variant) {
        w.u32(self.vptr);
        w.push(self.copy);
        w.extend_from_slice(&self.padding[..variant.copy_padding()]);
        w.i32(self.num_keys);
        w.u32(self.track_id);
        w.u32(self.offset_keys);
        self.current.encode(w);
    }
}

/// `EULERTrack_c`, padded layout (56 bytes; packed 53, fields after `m_copy` 3 bytes back):
///
/// | off | field |
/// |---|---|
/// | 0 | `m_vptr` (written 0) |
/// | 4 | `m_copy` bool + 3 padding bytes |
/// | 8 | `m_num_keys` i32 |
/// | 12 | `m_track_id` u32 = 4 |
/// | 16 | `m_offsetXTrack` u32 (a 1D TCB/LINEAR/BEZIER track) |
/// | 20 | `m_offsetYTrack` u32 |
/// | 24 | `m_offsetZTrack` u32 |
/// | 28 | `m_aRotOrder` `u32[3]`, values 0 (yaw), 1 (roll), 2 (pitch) |
/// | 40 | `m_cCurrentValue` quat |
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct EulerHeader {
    pub vptr: u32,
    pub copy: u8,
    pub padding: [u8; 3],
    pub num_keys: i32,
    pub track_id: u32,
    pub offset_x: u32,
    pub offset_y: u32,
    pub offset_z: u32,
    pub rot_order: [u32; 3],
    pub current: [f32; 4],
}

impl EulerHeader {
    /// Size on disk in `variant`: 56 padded, 53 packed.
    pub fn size(variant: Variant) -> usize {
        track_header_prefix(variant) + 36
    }

    /// Decodes a header from `b` (at least [`Self::size`] bytes).
    pub fn decode(b: &[u8], variant: Variant) -> Self {
        let mut r = Rd::new(b);
        let vptr = r.u32();
        let copy = r.u8();
        let mut padding = [0u8; 3];
        for p in padding.iter_mut().take(variant.copy_padding()) {
            *p = r.u8();
        }
        EulerHeader {
            vptr,
            copy,
            padding,
            num_keys: r.i32(),
            track_id: r.u32(),
            offset_x: r.u32(),
            offset_y: r.u32(),
            offset_z: r.u32(),
            rot_order: [r.u32(), r.u32(), r.u32()],
            current: r.f32s(),
        }
    }

    /// Appends the header; `vptr`, `copy` and padding are written as stored.
    pub fn encode(&self, w: &mut Vec<u8>, variant: Variant) {
        w.u32(self.vptr);
        w.push(self.copy);
        w.extend_from_slice(&self.padding[..variant.copy_padding()]);
        w.i32(self.num_keys);
        w.u32(self.track_id);
        w.u32(self.offset_x);
        w.u32(self.offset_y);
        w.u32(self.offset_z);
        for o in self.rot_order {
            w.u32(o);
        }
        w.f32s(&self.current);
    }
}

/// The bytes of a 32-byte name up to its first NUL (all 32 if there is none).
pub fn name_bytes(name: &[u8; NAME_LEN]) -> &[u8] {
    let end = name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
    &name[..end]
}

/// A 32-byte name as text (lossy UTF-8), up to its first NUL.
pub fn name_str(name: &[u8; NAME_LEN]) -> String {
    String::from_utf8_lossy(name_bytes(name)).into_owned()
}

/// A 32-byte name array holding `s` (at most 31 bytes kept) NUL-terminated and zero-filled.
pub fn make_name(s: &str) -> [u8; NAME_LEN] {
    let mut out = [0u8; NAME_LEN];
    let b = s.as_bytes();
    let n = b.len().min(NAME_LEN - 1);
    out[..n].copy_from_slice(&b[..n]);
    out
}

#[cfg(test)]
mod tests {
    //! Sizes and field offsets pinned from the seed's declarations, summed by hand
    //! (4 bytes per `int`/`uint`/`float`/enum/pointer, 2 per `ushort`, 1 per `char`/`bool`/
    //! `uchar`, `vec3` 12, `quat` 16, `EXTENTS` 24, `COLOR4F` 16, `CMatrix` 64).
    use super::*;

    fn u32_at(b: &[u8], off: usize) -> u32 {
        u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    }
    fn f32_at(b: &[u8], off: usize) -> f32 {
        f32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    }

    #[test]
    fn file_id_is_3da_underscore() {
        assert_eq!(FILE_ID.to_le_bytes(), *b"3DA_");
        assert_eq!(FILE_ID, 0x5F41_4433);
    }

    #[test]
    fn header_is_68_bytes_with_seed_offsets() {
        // 9 × 4 (id, version, entities, frames, mat offset, mat count, faces, vertices,
        // first entity) = 36; bounds 36..60; colmap id 60; colmap offset 64; total 68.
        let h = Header {
            file_id: 1,
            version: 2,
            num_entities: 3,
            frames: 4,
            offset_materials: 5,
            num_materials: 6,
            num_faces: 7,
            num_vertices: 8,
            offset_first_entity: 9,
            bounds: Extents { min: [10.0, 11.0, 12.0], max: [13.0, 14.0, 15.0] },
            colmap_id: 16,
            offset_colmap: 17,
        };
        let mut b = Vec::new();
        h.encode(&mut b);
        assert_eq!(b.len(), 68);
        assert_eq!(Header::SIZE, 68);
        for (i, off) in (0..36).step_by(4).enumerate() {
            assert_eq!(u32_at(&b, off), i as u32 + 1);
        }
        assert_eq!(f32_at(&b, 36), 10.0);
        assert_eq!(f32_at(&b, 56), 15.0);
        assert_eq!(u32_at(&b, 60), 16);
        assert_eq!(u32_at(&b, 64), 17);
        assert_eq!(Header::decode(&b), h);
    }

    #[test]
    fn material_is_252_bytes_with_seed_offsets() {
        // name 0..32; map_name 4 × 32 = 32..160; map_channel 4 × 4 = 160..176; num_maps 176;
        // ambient 180, diffuse 196, specular 212, emissive 228 (16 each); specular_pow 244;
        // flags 248; total 252.
        let mut m = Material { name: make_name("stone.mat"), ..Material::default() };
        m.map_name[3] = make_name("last");
        m.map_channel = [1, 2, 3, 4];
        m.num_maps = 5;
        m.ambient = [6.0, 0.0, 0.0, 0.0];
        m.diffuse = [7.0, 0.0, 0.0, 0.0];
        m.specular = [8.0, 0.0, 0.0, 0.0];
        m.emissive = [9.0, 0.0, 0.0, 0.0];
        m.specular_pow = 10.0;
        m.flags = 11;
        let mut b = Vec::new();
        m.encode(&mut b);
        assert_eq!(b.len(), 252);
        assert_eq!(&b[0..9], b"stone.mat");
        assert_eq!(&b[128..132], b"last");
        assert_eq!(u32_at(&b, 160), 1);
        assert_eq!(u32_at(&b, 172), 4);
        assert_eq!(u32_at(&b, 176), 5);
        assert_eq!(f32_at(&b, 180), 6.0);
        assert_eq!(f32_at(&b, 196), 7.0);
        assert_eq!(f32_at(&b, 212), 8.0);
        assert_eq!(f32_at(&b, 228), 9.0);
        assert_eq!(f32_at(&b, 244), 10.0);
        assert_eq!(u32_at(&b, 248), 11);
        assert_eq!(Material::decode(&b), m);
    }

    #[test]
    fn entity_is_152_bytes_with_seed_offsets() {
        // type 0; name 4..36; bounds 36..60; parent u16 60; children u16 62; surfaces
        // offset 64, count 68; pos 72, rot 76, scl 80; bone_init_tm 84..148; next 148.
        let mut tm = [0.0f32; 16];
        tm[0] = 20.0;
        tm[15] = 21.0;
        let e = EntityRecord {
            type_id: 2,
            name: make_name("Box01"),
            bounds: Extents { min: [1.0, 2.0, 3.0], max: [4.0, 5.0, 6.0] },
            parent_idx: 0xFFFF,
            num_children: 7,
            surfaces_offset: 8,
            num_surfaces: 9,
            pos_track_offset: 10,
            rot_track_offset: 11,
            scl_track_offset: 12,
            bone_init_tm: tm,
            next_offset: 13,
        };
        let mut b = Vec::new();
        e.encode(&mut b);
        assert_eq!(b.len(), 152);
        assert_eq!(u32_at(&b, 0), 2);
        assert_eq!(&b[4..9], b"Box01");
        assert_eq!(f32_at(&b, 36), 1.0);
        assert_eq!(f32_at(&b, 56), 6.0);
        assert_eq!(&b[60..64], &[0xFF, 0xFF, 7, 0]);
        assert_eq!(u32_at(&b, 64), 8);
        assert_eq!(u32_at(&b, 68), 9);
        assert_eq!(u32_at(&b, 72), 10);
        assert_eq!(u32_at(&b, 76), 11);
        assert_eq!(u32_at(&b, 80), 12);
        assert_eq!(f32_at(&b, 84), 20.0);
        assert_eq!(f32_at(&b, 144), 21.0);
        assert_eq!(u32_at(&b, 148), 13);
        assert_eq!(EntityRecord::decode(&b), e);
    }

    #[test]
    fn surface_is_68_bytes_with_seed_offsets() {
        // material 0; list offset 4, size 8; strip offset 12, size 16; xyz 20; tangent 24;
        // colour 28; normal 32; texcoord[4] 36..52; lightmap 52; blending 56; s_size 60;
        // next 64; total 68.
        let s = SurfaceRecord {
            material_idx: 1,
            tri_list_offset: 2,
            tri_list_size: 3,
            tri_strip_offset: 4,
            tri_strip_size: 5,
            s_xyz_offset: 6,
            s_tangent_offset: 7,
            s_color_offset: 8,
            s_normal_offset: 9,
            s_texcoord_offset: [10, 11, 12, 13],
            s_lgtcoord_offset: 14,
            s_blending_offset: 15,
            s_size: 16,
            next_offset: 17,
        };
        let mut b = Vec::new();
        s.encode(&mut b);
        assert_eq!(b.len(), 68);
        for (i, off) in (0..68).step_by(4).enumerate() {
            assert_eq!(u32_at(&b, off), i as u32 + 1, "field at {off}");
        }
        assert_eq!(SurfaceRecord::decode(&b), s);
    }

    #[test]
    fn track_headers_are_20_plus_value_padded_and_17_plus_value_packed() {
        // vptr 0..4; m_copy 4; padding 5..8; num_keys 8; track_id 12; offset_keys 16;
        // current value 20 (float 4 / vec3 12 / quat 16).
        assert_eq!(TrackHeader::<f32>::size(Variant::Padded), 24);
        assert_eq!(TrackHeader::<[f32; 3]>::size(Variant::Padded), 32);
        assert_eq!(TrackHeader::<[f32; 4]>::size(Variant::Padded), 36);
        assert_eq!(TrackHeader::<f32>::size(Variant::Packed), 21);
        assert_eq!(TrackHeader::<[f32; 4]>::size(Variant::Packed), 33);
        let h = TrackHeader {
            vptr: 0,
            copy: 0,
            padding: [0; 3],
            num_keys: 5,
            track_id: TrackKind::Tcb as u32,
            offset_keys: 0x1234,
            current: [1.0f32, 2.0, 3.0],
        };
        let mut b = Vec::new();
        h.encode(&mut b, Variant::Padded);
        assert_eq!(b.len(), 32);
        assert_eq!(&b[0..8], &[0; 8]);
        assert_eq!(u32_at(&b, 8), 5);
        assert_eq!(u32_at(&b, 12), 1);
        assert_eq!(u32_at(&b, 16), 0x1234);
        assert_eq!(f32_at(&b, 20), 1.0);
        assert_eq!(f32_at(&b, 28), 3.0);
        assert_eq!(TrackHeader::decode(&b, Variant::Padded), h);
        let mut p = Vec::new();
        h.encode(&mut p, Variant::Packed);
        assert_eq!(p.len(), 29);
        assert_eq!(u32_at(&p, 5), 5);
        assert_eq!(u32_at(&p, 9), 1);
        assert_eq!(u32_at(&p, 13), 0x1234);
        assert_eq!(f32_at(&p, 17), 1.0);
        assert_eq!(TrackHeader::decode(&p, Variant::Packed), h);
    }

    #[test]
    fn euler_track_is_56_bytes_padded_53_packed() {
        // vptr 0; copy 4 (+3); num_keys 8; track_id 12; X 16; Y 20; Z 24; rot order 28..40;
        // current quat 40..56.
        assert_eq!(EulerHeader::size(Variant::Padded), 56);
        assert_eq!(EulerHeader::size(Variant::Packed), 53);
        let h = EulerHeader {
            num_keys: 1,
            track_id: 4,
            offset_x: 2,
            offset_y: 3,
            offset_z: 5,
            rot_order: [6, 7, 8],
            current: [9.0, 0.0, 0.0, 10.0],
            ..EulerHeader::default()
        };
        let mut b = Vec::new();
        h.encode(&mut b, Variant::Padded);
        assert_eq!(b.len(), 56);
        assert_eq!(u32_at(&b, 8), 1);
        assert_eq!(u32_at(&b, 12), 4);
        assert_eq!(u32_at(&b, 16), 2);
        assert_eq!(u32_at(&b, 20), 3);
        assert_eq!(u32_at(&b, 24), 5);
        assert_eq!(u32_at(&b, 28), 6);
        assert_eq!(u32_at(&b, 36), 8);
        assert_eq!(f32_at(&b, 40), 9.0);
        assert_eq!(f32_at(&b, 52), 10.0);
        assert_eq!(EulerHeader::decode(&b, Variant::Padded), h);
    }

    #[test]
    fn key_sizes_match_the_seed() {
        // TCB: frame + 5 floats = 24, then value, in, out.
        assert_eq!(<TcbKey<f32>>::SIZE, 36);
        assert_eq!(<TcbKey<[f32; 3]>>::SIZE, 60);
        assert_eq!(<TcbKey<[f32; 4]>>::SIZE, 72);
        assert_eq!(<LinearKey<f32>>::SIZE, 8);
        assert_eq!(<LinearKey<[f32; 3]>>::SIZE, 16);
        assert_eq!(<LinearKey<[f32; 4]>>::SIZE, 20);
        assert_eq!(<BezierKey<f32>>::SIZE, 16);
        assert_eq!(<BezierKey<[f32; 3]>>::SIZE, 40);
        assert_eq!(VBlend::SIZE, 12);
    }

    #[test]
    fn key_field_offsets_match_the_seed() {
        let k = TcbKey {
            frame: 1,
            tension: 2.0,
            continuity: 3.0,
            bias: 4.0,
            ease_in: 5.0,
            ease_out: 6.0,
            value: [7.0f32, 0.0, 0.0],
            in_tan: [8.0, 0.0, 0.0],
            out_tan: [9.0, 0.0, 0.0],
        };
        let mut b = Vec::new();
        k.encode(&mut b);
        assert_eq!(b.len(), 60);
        assert_eq!(u32_at(&b, 0), 1);
        for (i, off) in [4, 8, 12, 16, 20, 24, 36, 48].into_iter().enumerate() {
            assert_eq!(f32_at(&b, off), i as f32 + 2.0, "TCB 3D field at {off}");
        }
        // BEZIER 3D: frame 0, in 4..16, out 16..28, value 28..40 (value last).
        let z = BezierKey {
            frame: -1,
            in_tan: [1.0f32, 0.0, 0.0],
            out_tan: [2.0, 0.0, 0.0],
            value: [3.0, 0.0, 0.0],
        };
        let mut b = Vec::new();
        z.encode(&mut b);
        assert_eq!(b.len(), 40);
        assert_eq!(u32_at(&b, 0), u32::MAX);
        assert_eq!(f32_at(&b, 4), 1.0);
        assert_eq!(f32_at(&b, 16), 2.0);
        assert_eq!(f32_at(&b, 28), 3.0);
        let mut r = Rd::new(&b);
        assert_eq!(BezierKey::<[f32; 3]>::decode(&mut r), z);
        // LINEAR 4D: frame 0, quat 4..20.
        let l = LinearKey { frame: 3, value: [1.0f32, 2.0, 3.0, 4.0] };
        let mut b = Vec::new();
        l.encode(&mut b);
        assert_eq!(u32_at(&b, 0), 3);
        assert_eq!(f32_at(&b, 16), 4.0);
    }
}
