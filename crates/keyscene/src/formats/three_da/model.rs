//! A 3DA file as a resolved tree: what [`super::read()`] produces and [`super::write()`] consumes.
//! Offsets are gone (the writer recomputes them); everything else is kept as stored, so
//! write → read → write is byte-identical. Still low level: no scene types.

use super::layout::{
    BezierKey, EntityRecord, Extents, LinearKey, Material, TcbKey, VBlend, Variant, MAP_CHANNELS,
    NAME_LEN,
};

/// `vec3`: x, y, z.
pub type Vec3 = [f32; 3];
/// `quat` as stored: x, y, z, w (docs/3da.md, "Quaternions").
pub type Quat = [f32; 4];

/// A whole 3DA file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    /// Track-header layout the file uses (the writer's choice; the reader's detection).
    pub variant: Variant,
    /// `m_iFrames`: animation length in frames.
    pub frames: u32,
    /// `m_iNumFaces` (information only; the exporter writes the total triangle count).
    pub num_faces: i32,
    /// `m_iNumVertices` (information only; the exporter writes the total stream length).
    pub num_vertices: i32,
    /// `m_Bounds`: all entities at the first animation frame, in the file's root space.
    pub bounds: Extents,
    /// `m_ColmapID` ([`super::layout::colmap_type`]).
    pub colmap_id: u32,
    /// The material table, in file order (`surface_s::material_idx` indexes it).
    pub materials: Vec<Material>,
    /// Entities in file order (`parent_idx` and blend bone indices index it).
    pub entities: Vec<Entity>,
    /// Bytes from `m_offsetColmap` to the end of the file; `None` when the offset is 0.
    pub colmap: Option<Vec<u8>>,
}

/// One `entity_s` with what it points to.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    /// `type_id` ([`super::layout::entity_type`]).
    pub type_id: u32,
    /// `name`, as stored (NUL-terminated, see [`super::layout::name_str`]).
    pub name: [u8; NAME_LEN],
    /// `bounds` in the entity's local space.
    pub bounds: Extents,
    /// `parent_idx`: index of the parent in [`File::entities`], `0xFFFF` for none.
    pub parent_idx: u16,
    /// `num_children` as stored.
    pub num_children: u16,
    /// `bone_init_tm`, row-major `float[4][4]` as stored.
    pub bone_init_tm: [f32; 16],
    /// The surface chain, in order.
    pub surfaces: Vec<Surface>,
    /// Position track (3D); `None` when the offset is 0.
    pub position: Option<VecTrack>,
    /// Rotation track (4D or EULER); `None` when the offset is 0.
    pub rotation: Option<RotTrack>,
    /// Scale track (3D); `None` when the offset is 0.
    pub scale: Option<VecTrack>,
}

impl Entity {
    /// A helper entity named `name` (at most 31 bytes kept) with no tracks.
    pub fn new(type_id: u32, name: &str) -> Entity {
        Entity {
            type_id,
            name: super::layout::make_name(name),
            bounds: Extents::default(),
            parent_idx: super::layout::NO_PARENT,
            num_children: 0,
            bone_init_tm: IDENTITY,
            surfaces: Vec::new(),
            position: None,
            rotation: None,
            scale: None,
        }
    }

    /// The entity record with every offset 0 (the writer fills them in).
    pub(crate) fn record(&self) -> EntityRecord {
        EntityRecord {
            type_id: self.type_id,
            name: self.name,
            bounds: self.bounds,
            parent_idx: self.parent_idx,
            num_children: self.num_children,
            surfaces_offset: 0,
            num_surfaces: 0,
            pos_track_offset: 0,
            rot_track_offset: 0,
            scl_track_offset: 0,
            bone_init_tm: self.bone_init_tm,
            next_offset: 0,
        }
    }
}

/// The 4×4 identity, the seed's `bone_init_tm`.
pub const IDENTITY: [f32; 16] =
    [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];

/// One `surface_s` with its index tables and streams. Every present stream has exactly
/// `s_size` elements (the writer refuses otherwise).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Surface {
    /// `material_idx` into [`File::materials`].
    pub material_idx: i32,
    /// Triangle list: 3 indices per triangle.
    pub tri_list: Vec<u16>,
    /// Triangle strip (stitched with degenerate triangles; may be empty).
    pub tri_strip: Vec<u16>,
    /// `s_size`: the length of every stream.
    pub s_size: u32,
    /// Positions, local space.
    pub xyz: Option<Vec<Vec3>>,
    /// Tangents.
    pub tangent: Option<Vec<Vec3>>,
    /// Colours, `RGBA_c` as a little-endian `u32`.
    pub color: Option<Vec<u32>>,
    /// Normals.
    pub normal: Option<Vec<Vec3>>,
    /// Up to four UV channels.
    pub texcoord: [Option<Vec<[f32; 2]>>; MAP_CHANNELS],
    /// Lightmap UVs.
    pub lightmap: Option<Vec<[f32; 2]>>,
    /// Vertex blending (skinned meshes).
    pub blending: Option<Vec<VBlend>>,
}

/// The keys and current value of a TCB, LINEAR or BEZIER track.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyTrack<K: super::layout::KeyRecord> {
    /// `m_current_value` as stored (the exporter writes the value at frame 0).
    pub current: K::V,
    /// The key table.
    pub keys: Vec<K>,
}

impl<K: super::layout::KeyRecord> KeyTrack<K> {
    /// The track with `f` applied to `current` and to every key's value and tangents
    /// ([`KeyRecord::map_values`](super::layout::KeyRecord::map_values)).
    pub fn map_values(mut self, f: &dyn Fn(K::V) -> K::V) -> Self {
        self.keys.iter_mut().for_each(|k| k.map_values(f));
        self.current = f(self.current);
        self
    }
}

/// A 1D track (an EULER sub-track): angle in radians.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum FloatTrack {
    Tcb(KeyTrack<TcbKey<f32>>),
    Linear(KeyTrack<LinearKey<f32>>),
    Bezier(KeyTrack<BezierKey<f32>>),
}

/// A 3D track (position or scale). BEZIER 3D exists; there is no BEZIER 4D.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum VecTrack {
    Tcb(KeyTrack<TcbKey<Vec3>>),
    Linear(KeyTrack<LinearKey<Vec3>>),
    Bezier(KeyTrack<BezierKey<Vec3>>),
}

/// A rotation track: TCB 4D, LINEAR 4D or EULER (seed §3: "Rotation track can be: TCB,
/// LINEAR, EULER").
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum RotTrack {
    Tcb(KeyTrack<TcbKey<Quat>>),
    Linear(KeyTrack<LinearKey<Quat>>),
    Euler(Box<EulerTrack>),
}

/// `EULERTrack_c`: three 1D angle tracks combined as `rot[0] * rot[1] * rot[2]`, where
/// `rot[i]` comes from the X, Y, Z track (i = 0, 1, 2) and `rot_order[i]` picks yaw (0),
/// roll (1) or pitch (2) for it, with the seed's sign flips (docs/3da.md, "EULER").
#[derive(Debug, Clone, PartialEq)]
pub struct EulerTrack {
    /// `m_num_keys` as stored (the exporter writes the largest sub-track key count).
    pub num_keys: i32,
    /// X angle track.
    pub x: FloatTrack,
    /// Y angle track.
    pub y: FloatTrack,
    /// Z angle track.
    pub z: FloatTrack,
    /// `m_aRotOrder`.
    pub rot_order: [u32; 3],
    /// `m_cCurrentValue`.
    pub current: Quat,
}

/// Visits the frames of a track's keys, whatever its kind.
macro_rules! key_frames {
    ($t:expr, $($v:path),*) => {
        match $t { $($v(k) => k.keys.iter().map(super::layout::KeyRecord::frame).collect::<Vec<i64>>(),)* }
    };
}

impl FloatTrack {
    /// Key frames in table order.
    pub fn frames(&self) -> Vec<i64> {
        key_frames!(self, FloatTrack::Tcb, FloatTrack::Linear, FloatTrack::Bezier)
    }
}

impl VecTrack {
    /// Key frames in table order.
    pub fn frames(&self) -> Vec<i64> {
        key_frames!(self, VecTrack::Tcb, VecTrack::Linear, VecTrack::Bezier)
    }
}

impl RotTrack {
    /// Key frames in table order (for EULER: `None`, see the sub-tracks).
    pub fn frames(&self) -> Option<Vec<i64>> {
        match self {
            RotTrack::Tcb(k) => Some(k.keys.iter().map(super::layout::KeyRecord::frame).collect()),
            RotTrack::Linear(k) => {
                Some(k.keys.iter().map(super::layout::KeyRecord::frame).collect())
            }
            RotTrack::Euler(_) => None,
        }
    }
}
