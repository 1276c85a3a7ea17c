//! The low level of the 3DS reader: a bounded chunk walker over `&[u8]` and typed decoders of
//! the chunk payloads into plain structs ([`File3ds`]). Knows nothing of [`crate::scene`].
//!
//! # Chunks
//! A 3DS file is a tree of chunks: `u16` id, `u32` length **including** the 6-byte header, then
//! the payload — fixed data first, sub-chunks after it (all little-endian). Ids and names follow
//! lib3ds 1.3's chunk table (`chunk.h`); the keyframer layout follows seed 000 ("Tracks").
//!
//! # Robustness
//! Every count is checked against the bytes left in its chunk *and* against
//! [`Limits::max_elements`] before anything is allocated, so an array's allocation is bounded
//! by the bytes actually present (arrays are then converted in bulk from that checked range). A chunk whose length runs past its parent is cut at the
//! parent's end (a [`Warning`]); a zero-length chunk is skipped (a [`Warning`]); a length below
//! the header size ends the walk of that level (a [`Warning`]). Nesting is bounded by the
//! decoders' fixed structure and, for [`walk`], by [`Limits::max_depth`].

use crate::limits::Limits;
use crate::scene::Warning;

use super::error::Error;
use crate::quoting::quoted;

/// Chunk ids used by the reader (lib3ds 1.3 names, `chunk.h`).
#[allow(missing_docs)]
pub mod id {
    pub const M3DMAGIC: u16 = 0x4D4D;
    pub const CMAGIC: u16 = 0xC23D;
    pub const M3D_VERSION: u16 = 0x0002;
    pub const COLOR_F: u16 = 0x0010;
    pub const COLOR_24: u16 = 0x0011;
    pub const LIN_COLOR_24: u16 = 0x0012;
    pub const LIN_COLOR_F: u16 = 0x0013;
    pub const INT_PERCENTAGE: u16 = 0x0030;
    pub const FLOAT_PERCENTAGE: u16 = 0x0031;
    pub const MASTER_SCALE: u16 = 0x0100;
    pub const BIT_MAP: u16 = 0x1100;
    pub const SOLID_BGND: u16 = 0x1200;
    pub const V_GRADIENT: u16 = 0x1300;
    pub const AMBIENT_LIGHT: u16 = 0x2100;
    pub const FOG: u16 = 0x2200;
    pub const LAYER_FOG: u16 = 0x2302;
    pub const DISTANCE_CUE: u16 = 0x2300;
    pub const MDATA: u16 = 0x3D3D;
    pub const MESH_VERSION: u16 = 0x3D3E;
    pub const NAMED_OBJECT: u16 = 0x4000;
    pub const OBJ_HIDDEN: u16 = 0x4010;
    pub const N_TRI_OBJECT: u16 = 0x4100;
    pub const POINT_ARRAY: u16 = 0x4110;
    pub const POINT_FLAG_ARRAY: u16 = 0x4111;
    pub const FACE_ARRAY: u16 = 0x4120;
    pub const MSH_MAT_GROUP: u16 = 0x4130;
    pub const TEX_VERTS: u16 = 0x4140;
    pub const SMOOTH_GROUP: u16 = 0x4150;
    pub const MESH_MATRIX: u16 = 0x4160;
    pub const MESH_COLOR: u16 = 0x4165;
    pub const MESH_TEXTURE_INFO: u16 = 0x4170;
    pub const N_DIRECT_LIGHT: u16 = 0x4600;
    pub const DL_SPOTLIGHT: u16 = 0x4610;
    pub const DL_OFF: u16 = 0x4620;
    pub const DL_ATTENUATE: u16 = 0x4625;
    pub const DL_SPOT_ROLL: u16 = 0x4656;
    pub const DL_INNER_RANGE: u16 = 0x4659;
    pub const DL_OUTER_RANGE: u16 = 0x465A;
    pub const DL_MULTIPLIER: u16 = 0x465B;
    pub const N_CAMERA: u16 = 0x4700;
    pub const CAM_RANGES: u16 = 0x4720;
    pub const MAT_ENTRY: u16 = 0xAFFF;
    pub const MAT_NAME: u16 = 0xA000;
    pub const MAT_AMBIENT: u16 = 0xA010;
    pub const MAT_DIFFUSE: u16 = 0xA020;
    pub const MAT_SPECULAR: u16 = 0xA030;
    pub const MAT_SHININESS: u16 = 0xA040;
    pub const MAT_SHIN2PCT: u16 = 0xA041;
    pub const MAT_TRANSPARENCY: u16 = 0xA050;
    pub const MAT_SELF_ILPCT: u16 = 0xA084;
    pub const MAT_TWO_SIDE: u16 = 0xA081;
    pub const MAT_WIRE: u16 = 0xA085;
    pub const MAT_TEXMAP: u16 = 0xA200;
    pub const MAT_SPECMAP: u16 = 0xA204;
    pub const MAT_OPACMAP: u16 = 0xA210;
    pub const MAT_REFLMAP: u16 = 0xA220;
    pub const MAT_BUMPMAP: u16 = 0xA230;
    pub const MAT_TEX2MAP: u16 = 0xA33A;
    pub const MAT_SHINMAP: u16 = 0xA33C;
    pub const MAT_SELFIMAP: u16 = 0xA33D;
    pub const MAT_MAPNAME: u16 = 0xA300;
    pub const MAT_MAP_TILING: u16 = 0xA351;
    pub const MAT_MAP_TEXBLUR: u16 = 0xA353;
    pub const MAT_MAP_USCALE: u16 = 0xA354;
    pub const MAT_MAP_VSCALE: u16 = 0xA356;
    pub const MAT_MAP_UOFFSET: u16 = 0xA358;
    pub const MAT_MAP_VOFFSET: u16 = 0xA35A;
    pub const MAT_MAP_ANG: u16 = 0xA35C;
    pub const KFDATA: u16 = 0xB000;
    pub const AMBIENT_NODE_TAG: u16 = 0xB001;
    pub const OBJECT_NODE_TAG: u16 = 0xB002;
    pub const CAMERA_NODE_TAG: u16 = 0xB003;
    pub const TARGET_NODE_TAG: u16 = 0xB004;
    pub const LIGHT_NODE_TAG: u16 = 0xB005;
    pub const L_TARGET_NODE_TAG: u16 = 0xB006;
    pub const SPOTLIGHT_NODE_TAG: u16 = 0xB007;
    pub const KFSEG: u16 = 0xB008;
    pub const KFCURTIME: u16 = 0xB009;
    pub const KFHDR: u16 = 0xB00A;
    pub const NODE_HDR: u16 = 0xB010;
    pub const INSTANCE_NAME: u16 = 0xB011;
    pub const PIVOT: u16 = 0xB013;
    pub const BOUNDBOX: u16 = 0xB014;
    pub const MORPH_SMOOTH: u16 = 0xB015;
    pub const POS_TRACK_TAG: u16 = 0xB020;
    pub const ROT_TRACK_TAG: u16 = 0xB021;
    pub const SCL_TRACK_TAG: u16 = 0xB022;
    pub const FOV_TRACK_TAG: u16 = 0xB023;
    pub const ROLL_TRACK_TAG: u16 = 0xB024;
    pub const COL_TRACK_TAG: u16 = 0xB025;
    pub const MORPH_TRACK_TAG: u16 = 0xB026;
    pub const HOT_TRACK_TAG: u16 = 0xB027;
    pub const FALL_TRACK_TAG: u16 = 0xB028;
    pub const HIDE_TRACK_TAG: u16 = 0xB029;
    pub const NODE_ID: u16 = 0xB030;
}

/// The lib3ds name of a chunk id (`"MDATA"` for 0x3D3D), `None` for ids lib3ds does not name.
pub fn chunk_name(chunk: u16) -> Option<&'static str> {
    Some(match chunk {
        0x0000 => "NULL_CHUNK",
        0x4D4D => "M3DMAGIC",
        0x2D2D => "SMAGIC",
        0x2D3D => "LMAGIC",
        0x3DAA => "MLIBMAGIC",
        0x3DFF => "MATMAGIC",
        0xC23D => "CMAGIC",
        0x0002 => "M3D_VERSION",
        0x0005 => "M3D_KFVERSION",
        0x0010 => "COLOR_F",
        0x0011 => "COLOR_24",
        0x0012 => "LIN_COLOR_24",
        0x0013 => "LIN_COLOR_F",
        0x0030 => "INT_PERCENTAGE",
        0x0031 => "FLOAT_PERCENTAGE",
        0x3D3D => "MDATA",
        0x3D3E => "MESH_VERSION",
        0x0100 => "MASTER_SCALE",
        0x1400 => "LO_SHADOW_BIAS",
        0x1410 => "HI_SHADOW_BIAS",
        0x1420 => "SHADOW_MAP_SIZE",
        0x1430 => "SHADOW_SAMPLES",
        0x1440 => "SHADOW_RANGE",
        0x1450 => "SHADOW_FILTER",
        0x1460 => "RAY_BIAS",
        0x1500 => "O_CONSTS",
        0x2100 => "AMBIENT_LIGHT",
        0x1100 => "BIT_MAP",
        0x1200 => "SOLID_BGND",
        0x1300 => "V_GRADIENT",
        0x1101 => "USE_BIT_MAP",
        0x1201 => "USE_SOLID_BGND",
        0x1301 => "USE_V_GRADIENT",
        0x2200 => "FOG",
        0x2210 => "FOG_BGND",
        0x2302 => "LAYER_FOG",
        0x2300 => "DISTANCE_CUE",
        0x2310 => "DCUE_BGND",
        0x2201 => "USE_FOG",
        0x2303 => "USE_LAYER_FOG",
        0x2301 => "USE_DISTANCE_CUE",
        0x3000 => "DEFAULT_VIEW",
        0xAFFF => "MAT_ENTRY",
        0xA000 => "MAT_NAME",
        0xA010 => "MAT_AMBIENT",
        0xA020 => "MAT_DIFFUSE",
        0xA030 => "MAT_SPECULAR",
        0xA040 => "MAT_SHININESS",
        0xA041 => "MAT_SHIN2PCT",
        0xA050 => "MAT_TRANSPARENCY",
        0xA052 => "MAT_XPFALL",
        0xA240 => "MAT_USE_XPFALL",
        0xA053 => "MAT_REFBLUR",
        0xA100 => "MAT_SHADING",
        0xA250 => "MAT_USE_REFBLUR",
        0xA080 => "MAT_SELF_ILLUM",
        0xA081 => "MAT_TWO_SIDE",
        0xA082 => "MAT_DECAL",
        0xA083 => "MAT_ADDITIVE",
        0xA084 => "MAT_SELF_ILPCT",
        0xA085 => "MAT_WIRE",
        0xA088 => "MAT_FACEMAP",
        0xA08A => "MAT_XPFALLIN",
        0xA08C => "MAT_PHONGSOFT",
        0xA08E => "MAT_WIREABS",
        0xA087 => "MAT_WIRE_SIZE",
        0xA200 => "MAT_TEXMAP",
        0xA320 => "MAT_SXP_TEXT_DATA",
        0xA33E => "MAT_TEXMASK",
        0xA32A => "MAT_SXP_TEXTMASK_DATA",
        0xA33A => "MAT_TEX2MAP",
        0xA321 => "MAT_SXP_TEXT2_DATA",
        0xA340 => "MAT_TEX2MASK",
        0xA32C => "MAT_SXP_TEXT2MASK_DATA",
        0xA210 => "MAT_OPACMAP",
        0xA322 => "MAT_SXP_OPAC_DATA",
        0xA342 => "MAT_OPACMASK",
        0xA32E => "MAT_SXP_OPACMASK_DATA",
        0xA230 => "MAT_BUMPMAP",
        0xA324 => "MAT_SXP_BUMP_DATA",
        0xA344 => "MAT_BUMPMASK",
        0xA330 => "MAT_SXP_BUMPMASK_DATA",
        0xA204 => "MAT_SPECMAP",
        0xA325 => "MAT_SXP_SPEC_DATA",
        0xA348 => "MAT_SPECMASK",
        0xA332 => "MAT_SXP_SPECMASK_DATA",
        0xA33C => "MAT_SHINMAP",
        0xA326 => "MAT_SXP_SHIN_DATA",
        0xA346 => "MAT_SHINMASK",
        0xA334 => "MAT_SXP_SHINMASK_DATA",
        0xA33D => "MAT_SELFIMAP",
        0xA328 => "MAT_SXP_SELFI_DATA",
        0xA34A => "MAT_SELFIMASK",
        0xA336 => "MAT_SXP_SELFIMASK_DATA",
        0xA220 => "MAT_REFLMAP",
        0xA34C => "MAT_REFLMASK",
        0xA338 => "MAT_SXP_REFLMASK_DATA",
        0xA310 => "MAT_ACUBIC",
        0xA300 => "MAT_MAPNAME",
        0xA351 => "MAT_MAP_TILING",
        0xA353 => "MAT_MAP_TEXBLUR",
        0xA354 => "MAT_MAP_USCALE",
        0xA356 => "MAT_MAP_VSCALE",
        0xA358 => "MAT_MAP_UOFFSET",
        0xA35A => "MAT_MAP_VOFFSET",
        0xA35C => "MAT_MAP_ANG",
        0xA360 => "MAT_MAP_COL1",
        0xA362 => "MAT_MAP_COL2",
        0xA364 => "MAT_MAP_RCOL",
        0xA366 => "MAT_MAP_GCOL",
        0xA368 => "MAT_MAP_BCOL",
        0x4000 => "NAMED_OBJECT",
        0x4600 => "N_DIRECT_LIGHT",
        0x4620 => "DL_OFF",
        0x465A => "DL_OUTER_RANGE",
        0x4659 => "DL_INNER_RANGE",
        0x465B => "DL_MULTIPLIER",
        0x4654 => "DL_EXCLUDE",
        0x4625 => "DL_ATTENUATE",
        0x4610 => "DL_SPOTLIGHT",
        0x4656 => "DL_SPOT_ROLL",
        0x4630 => "DL_SHADOWED",
        0x4641 => "DL_LOCAL_SHADOW2",
        0x4650 => "DL_SEE_CONE",
        0x4651 => "DL_SPOT_RECTANGULAR",
        0x4657 => "DL_SPOT_ASPECT",
        0x4653 => "DL_SPOT_PROJECTOR",
        0x4652 => "DL_SPOT_OVERSHOOT",
        0x4658 => "DL_RAY_BIAS",
        0x4627 => "DL_RAYSHAD",
        0x4700 => "N_CAMERA",
        0x4710 => "CAM_SEE_CONE",
        0x4720 => "CAM_RANGES",
        0x4010 => "OBJ_HIDDEN",
        0x4011 => "OBJ_VIS_LOFTER",
        0x4012 => "OBJ_DOESNT_CAST",
        0x4017 => "OBJ_DONT_RCVSHADOW",
        0x4013 => "OBJ_MATTE",
        0x4014 => "OBJ_FAST",
        0x4015 => "OBJ_PROCEDURAL",
        0x4016 => "OBJ_FROZEN",
        0x4100 => "N_TRI_OBJECT",
        0x4110 => "POINT_ARRAY",
        0x4111 => "POINT_FLAG_ARRAY",
        0x4120 => "FACE_ARRAY",
        0x4130 => "MSH_MAT_GROUP",
        0x4150 => "SMOOTH_GROUP",
        0x4190 => "MSH_BOXMAP",
        0x4140 => "TEX_VERTS",
        0x4160 => "MESH_MATRIX",
        0x4165 => "MESH_COLOR",
        0x4170 => "MESH_TEXTURE_INFO",
        0x7001 => "VIEWPORT_LAYOUT",
        0x7011 => "VIEWPORT_DATA",
        0x7012 => "VIEWPORT_DATA_3",
        0x7020 => "VIEWPORT_SIZE",
        0xB000 => "KFDATA",
        0xB00A => "KFHDR",
        0xB008 => "KFSEG",
        0xB009 => "KFCURTIME",
        0xB001 => "AMBIENT_NODE_TAG",
        0xB002 => "OBJECT_NODE_TAG",
        0xB003 => "CAMERA_NODE_TAG",
        0xB004 => "TARGET_NODE_TAG",
        0xB005 => "LIGHT_NODE_TAG",
        0xB006 => "L_TARGET_NODE_TAG",
        0xB007 => "SPOTLIGHT_NODE_TAG",
        0xB030 => "NODE_ID",
        0xB010 => "NODE_HDR",
        0xB013 => "PIVOT",
        0xB011 => "INSTANCE_NAME",
        0xB015 => "MORPH_SMOOTH",
        0xB014 => "BOUNDBOX",
        0xB020 => "POS_TRACK_TAG",
        0xB025 => "COL_TRACK_TAG",
        0xB021 => "ROT_TRACK_TAG",
        0xB022 => "SCL_TRACK_TAG",
        0xB026 => "MORPH_TRACK_TAG",
        0xB023 => "FOV_TRACK_TAG",
        0xB024 => "ROLL_TRACK_TAG",
        0xB027 => "HOT_TRACK_TAG",
        0xB028 => "FALL_TRACK_TAG",
        0xB029 => "HIDE_TRACK_TAG",
        _ => return None,
    })
}

/// A chunk's name for messages: the lib3ds name, else the id in hex.
pub fn chunk_label(chunk: u16) -> String {
    match chunk_name(chunk) {
        Some(n) => n.to_string(),
        None => format!("chunk {chunk:#06x}"),
    }
}

/// Size of a chunk header: `u16` id + `u32` length.
pub const HEADER_LEN: usize = 6;

/// One chunk: its id, where it is and its payload (cut at the parent's end).
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// The chunk id.
    pub id: u16,
    /// Absolute byte offset of the chunk header in the file.
    pub offset: u64,
    /// The length the header declares, header included.
    pub declared_len: u32,
    /// The payload: the bytes after the header, at most up to the parent's end.
    pub data: &'a [u8],
}

impl Chunk<'_> {
    /// Absolute byte offset of the payload.
    pub fn data_offset(&self) -> u64 {
        self.offset + HEADER_LEN as u64
    }
}

/// One step of a chunk path. Kept as ids and numbers while walking; turned into text only when
/// an error or a warning needs its place.
#[derive(Debug, Clone, PartialEq)]
pub enum Label {
    /// A chunk, shown by its lib3ds name ([`chunk_label`]).
    Chunk(u16),
    /// A keyframer node chunk and its file-order number: `OBJECT_NODE_TAG #3`.
    Node(u16, usize),
    /// A named object: `NAMED_OBJECT "Box01"`.
    Object(String),
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Chunk(c) => f.write_str(&chunk_label(*c)),
            Label::Node(c, n) => write!(f, "{} #{n}", chunk_label(*c)),
            Label::Object(name) => write!(f, "NAMED_OBJECT {name}", name = quoted(&name)),
        }
    }
}

/// Where the walker is, for errors and warnings: the chunk path and the warnings so far.
#[derive(Debug)]
pub struct Ctx {
    path: Vec<Label>,
    /// Warnings collected while walking.
    pub warnings: Vec<Warning>,
    /// The limits every count is checked against.
    pub limits: Limits,
    /// Length of the whole file, when known ([`Ctx::for_file`]): a chunk that runs past it is
    /// reported as the file being truncated there.
    pub file_len: Option<u64>,
}

impl Ctx {
    /// A context at the file's root.
    pub fn new(limits: Limits) -> Ctx {
        Ctx { path: Vec::new(), warnings: Vec::new(), limits, file_len: None }
    }

    /// A context at the root of a file of `file_len` bytes.
    pub fn for_file(limits: Limits, file_len: u64) -> Ctx {
        Ctx { file_len: Some(file_len), ..Ctx::new(limits) }
    }

    /// The current chunk path, outermost first, joined with ` › `.
    pub fn place(&self) -> String {
        if self.path.is_empty() {
            return "file".into();
        }
        let mut s = String::new();
        for (i, l) in self.path.iter().enumerate() {
            if i > 0 {
                s.push_str(" › ");
            }
            s.push_str(&l.to_string());
        }
        s
    }

    /// Records a survivable problem at `offset`.
    #[cold]
    pub fn warn(&mut self, offset: u64, message: impl Into<String>) {
        let place = self.place();
        self.warnings.push(Warning { offset: Some(offset), place, message: message.into() });
    }

    /// An error at `offset` in the current place.
    #[cold]
    pub fn malformed(&self, offset: u64, message: impl Into<String>) -> Error {
        Error::Malformed { place: self.place(), offset, message: message.into() }
    }

    /// Runs `f` with `label` appended to the chunk path.
    #[inline]
    pub fn within<T>(&mut self, label: Label, f: impl FnOnce(&mut Ctx) -> T) -> T {
        self.path.push(label);
        let r = f(self);
        self.path.pop();
        r
    }

    /// Runs `f` inside `NAMED_OBJECT "name"` and gives the name back with `f`'s result.
    fn within_object<T>(&mut self, name: String, f: impl FnOnce(&mut Ctx) -> T) -> (String, T) {
        self.path.push(Label::Object(name));
        let r = f(self);
        match self.path.pop() {
            Some(Label::Object(name)) => (name, r),
            _ => (String::new(), r),
        }
    }

    /// Checks a count read from the file: `count` elements of at least `min_size` bytes each
    /// must fit in `left` bytes and stay within [`Limits::max_elements`].
    #[inline]
    pub fn check_count(
        &self,
        offset: u64,
        what: &str,
        count: u64,
        min_size: u64,
        left: usize,
    ) -> Result<usize, Error> {
        if count > self.limits.max_elements || count.saturating_mul(min_size) > left as u64 {
            return Err(self.bad_count(offset, what, count, min_size, left));
        }
        Ok(count as usize)
    }

    #[cold]
    #[inline(never)]
    fn bad_count(&self, offset: u64, what: &str, count: u64, min_size: u64, left: usize) -> Error {
        if count > self.limits.max_elements {
            return Error::Limit {
                place: self.place(),
                offset,
                message: format!(
                    "declares {count} {what}, more than the limit of {}",
                    self.limits.max_elements
                ),
            };
        }
        let need = count.saturating_mul(min_size);
        self.malformed(
            offset,
            format!("declares {count} {what} ({need} bytes) but the chunk has {left} bytes left"),
        )
    }
}

/// The chunks of a payload region, one at a time ([`Chunks::next_chunk`]), with the rules of
/// [`split`]; walking a level allocates nothing.
#[derive(Debug, Clone)]
pub struct Chunks<'a> {
    data: &'a [u8],
    base: u64,
    pos: usize,
}

impl<'a> Chunks<'a> {
    /// The chunks of `data`, a payload region starting at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Chunks<'a> {
        Chunks { data, base, pos: 0 }
    }

    /// The sub-chunks of `chunk`'s payload.
    pub fn of(chunk: &Chunk<'a>) -> Chunks<'a> {
        Chunks::new(chunk.data, chunk.data_offset())
    }

    /// The next chunk, `None` at the end of the region (problems go to `ctx` as warnings).
    #[inline]
    pub fn next_chunk(&mut self, ctx: &mut Ctx) -> Option<Chunk<'a>> {
        let data = self.data;
        while self.pos < data.len() {
            let pos = self.pos;
            let left = data.len() - pos;
            let offset = self.base + pos as u64;
            let Some(h) = data.get(pos..pos + HEADER_LEN) else {
                ctx.warn(
                    offset,
                    format!("{left} trailing bytes are too few for a chunk header; ignored"),
                );
                self.pos = data.len();
                return None;
            };
            let id = u16::from_le_bytes([h[0], h[1]]);
            let len = u32::from_le_bytes([h[2], h[3], h[4], h[5]]);
            if len == 0 {
                ctx.warn(offset, format!("{} has length 0; skipped", chunk_label(id)));
                self.pos += HEADER_LEN;
                continue;
            }
            if (len as usize) < HEADER_LEN {
                ctx.warn(
                    offset,
                    format!(
                        "{} declares length {len}, shorter than its header; rest of the level ignored",
                        chunk_label(id)
                    ),
                );
                self.pos = data.len();
                return None;
            }
            let end = if len as usize > left {
                let region_end = self.base + data.len() as u64;
                let message = match ctx.file_len {
                    // The parent ends where the file does: the file is cut short.
                    Some(n) if n == region_end => format!(
                        "the file is truncated at byte {n}: {} declares {len} bytes but only \
                         {left} remain; read up to the end of the file",
                        chunk_label(id)
                    ),
                    _ => format!(
                        "{} declares {len} bytes but only {left} remain in its parent; cut at the parent's end",
                        chunk_label(id)
                    ),
                };
                ctx.warn(offset, message);
                data.len()
            } else {
                pos + len as usize
            };
            self.pos = end;
            return Some(Chunk {
                id,
                offset,
                declared_len: len,
                data: &data[pos + HEADER_LEN..end],
            });
        }
        None
    }
}

/// Splits `data` (a payload region starting at absolute offset `base`) into its chunks.
///
/// A chunk whose declared length runs past `data`'s end is cut there with a warning; a
/// zero-length chunk is skipped (6 bytes) with a warning; a length of 1–5 or fewer than 6
/// bytes left end the walk with a warning. Never fails.
pub fn split<'a>(data: &'a [u8], base: u64, ctx: &mut Ctx) -> Vec<Chunk<'a>> {
    let mut out = Vec::new();
    let mut chunks = Chunks::new(data, base);
    while let Some(c) = chunks.next_chunk(ctx) {
        out.push(c);
    }
    out
}

/// A little-endian reader over one chunk payload; every read is bounds-checked and fails with
/// an error naming the place and what was expected.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

/// `f32` from 4 little-endian bytes at `at` of `b` (the caller has checked the length).
#[inline(always)]
fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `u16` from 2 little-endian bytes at `at` of `b` (the caller has checked the length).
#[inline(always)]
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// `u32` from 4 little-endian bytes at `at` of `b` (the caller has checked the length).
#[inline(always)]
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decodes a string's bytes: UTF-8 when valid, else Latin-1.
fn bytes_to_string(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

impl<'a> Cursor<'a> {
    /// A cursor over `chunk`'s payload.
    pub fn new(chunk: &Chunk<'a>) -> Cursor<'a> {
        Cursor { data: chunk.data, pos: 0, base: chunk.data_offset() }
    }

    /// Absolute offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left.
    pub fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// The sub-chunks in the unread bytes.
    pub fn chunks(&self) -> Chunks<'a> {
        Chunks::new(self.rest(), self.offset())
    }

    #[inline(always)]
    fn take(&mut self, n: usize, what: &str, ctx: &Ctx) -> Result<&'a [u8], Error> {
        if n > self.left() {
            return Err(self.short(n, what, ctx));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[cold]
    #[inline(never)]
    fn short(&self, n: usize, what: &str, ctx: &Ctx) -> Error {
        ctx.malformed(
            self.offset(),
            format!("expected {what} ({n} bytes) but the chunk has {} bytes left", self.left()),
        )
    }

    /// Reads `count` elements of `size` bytes as one slice (`count` already checked with
    /// [`Ctx::check_count`]).
    #[inline]
    pub fn array(
        &mut self,
        count: usize,
        size: usize,
        what: &str,
        ctx: &Ctx,
    ) -> Result<&'a [u8], Error> {
        self.take(count.saturating_mul(size), what, ctx)
    }

    /// Reads a `u8`.
    #[inline]
    pub fn u8(&mut self, ctx: &Ctx) -> Result<u8, Error> {
        Ok(self.take(1, "a byte", ctx)?[0])
    }

    /// Reads a `u16`.
    #[inline]
    pub fn u16(&mut self, ctx: &Ctx) -> Result<u16, Error> {
        let b = self.take(2, "a u16", ctx)?;
        Ok(u16_at(b, 0))
    }

    /// Reads a `u32`.
    #[inline]
    pub fn u32(&mut self, ctx: &Ctx) -> Result<u32, Error> {
        let b = self.take(4, "a u32", ctx)?;
        Ok(u32_at(b, 0))
    }

    /// Reads an `i32`.
    #[inline]
    pub fn i32(&mut self, ctx: &Ctx) -> Result<i32, Error> {
        Ok(self.u32(ctx)? as i32)
    }

    /// Reads an `f32`.
    #[inline]
    pub fn f32(&mut self, ctx: &Ctx) -> Result<f32, Error> {
        let b = self.take(4, "an f32", ctx)?;
        Ok(f32_at(b, 0))
    }

    /// Reads three `f32`.
    #[inline]
    pub fn vec3(&mut self, ctx: &Ctx) -> Result<[f32; 3], Error> {
        if self.left() < 12 {
            // Read one by one so the error names the float that is missing.
            return Ok([self.f32(ctx)?, self.f32(ctx)?, self.f32(ctx)?]);
        }
        let b = self.take(12, "three f32", ctx)?;
        Ok([f32_at(b, 0), f32_at(b, 4), f32_at(b, 8)])
    }

    /// Reads a NUL-terminated string. Bytes are taken as UTF-8 when valid, else as Latin-1
    /// (3D Studio wrote DOS code-page names; Latin-1 keeps every byte distinct).
    pub fn cstr(&mut self, ctx: &Ctx) -> Result<String, Error> {
        let rest = self.rest();
        let Some(n) = rest.iter().position(|&b| b == 0) else {
            return Err(ctx.malformed(
                self.offset(),
                format!(
                    "expected a NUL-terminated string but the chunk ends after {} bytes",
                    rest.len()
                ),
            ));
        };
        self.pos += n + 1;
        Ok(bytes_to_string(&rest[..n]))
    }

    /// Skips a NUL-terminated string (as [`Cursor::cstr`], without building it).
    pub fn skip_cstr(&mut self, ctx: &Ctx) -> Result<(), Error> {
        let rest = self.rest();
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                Ok(())
            }
            None => self.cstr(ctx).map(drop),
        }
    }
}

/// An element of a fixed-size array stored in a chunk: its size and how it is read.
pub trait Element: Copy + 'static {
    /// Bytes per element in the file.
    const SIZE: usize;
    /// Reads one element from exactly [`Element::SIZE`] little-endian bytes.
    fn read(b: &[u8]) -> Self;
}

impl Element for u16 {
    const SIZE: usize = 2;
    #[inline(always)]
    fn read(b: &[u8]) -> u16 {
        u16_at(b, 0)
    }
}

impl Element for u32 {
    const SIZE: usize = 4;
    #[inline(always)]
    fn read(b: &[u8]) -> u32 {
        u32_at(b, 0)
    }
}

impl Element for [f32; 2] {
    const SIZE: usize = 8;
    #[inline(always)]
    fn read(b: &[u8]) -> [f32; 2] {
        [f32_at(b, 0), f32_at(b, 4)]
    }
}

impl Element for [f32; 3] {
    const SIZE: usize = 12;
    #[inline(always)]
    fn read(b: &[u8]) -> [f32; 3] {
        [f32_at(b, 0), f32_at(b, 4), f32_at(b, 8)]
    }
}

impl Element for [u16; 4] {
    const SIZE: usize = 8;
    #[inline(always)]
    fn read(b: &[u8]) -> [u16; 4] {
        [u16_at(b, 0), u16_at(b, 2), u16_at(b, 4), u16_at(b, 6)]
    }
}

/// A fixed-size array as stored in the file: a view of its checked byte range, read element by
/// element on demand (no copy is made while decoding).
pub struct Array<'a, T> {
    bytes: &'a [u8],
    _element: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: Element> Array<'a, T> {
    /// The elements in `bytes` (a trailing partial element is ignored).
    pub fn new(bytes: &'a [u8]) -> Array<'a, T> {
        let n = bytes.len() / T::SIZE;
        Array { bytes: &bytes[..n * T::SIZE], _element: std::marker::PhantomData }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / T::SIZE
    }

    /// True when there is no element.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i`, `None` past the end.
    pub fn get(&self, i: usize) -> Option<T> {
        let at = i.checked_mul(T::SIZE)?;
        self.bytes.get(at..at + T::SIZE).map(T::read)
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + DoubleEndedIterator + 'a {
        self.bytes.chunks_exact(T::SIZE).map(T::read)
    }

    /// The elements, copied into a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// The stored bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<T> Clone for Array<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Array<'_, T> {}

impl<T> Default for Array<'_, T> {
    fn default() -> Self {
        Array { bytes: &[], _element: std::marker::PhantomData }
    }
}

impl<T: Element + std::fmt::Debug> std::fmt::Debug for Array<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Element + PartialEq> PartialEq for Array<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

/// A decoded 3DS/PRJ file: the editor data (`MDATA`) and the keyframer (`KFDATA`), values as
/// stored (`f32`, file units, 3D Studio's Z-up frame). Mesh arrays are views of the file's
/// bytes ([`Array`]), so the file borrows them.
#[derive(Debug, Clone, Default)]
pub struct File3ds<'a> {
    /// Root chunk id: [`id::M3DMAGIC`] (.3ds) or [`id::CMAGIC`] (.prj).
    pub root: u16,
    /// `M3D_VERSION`, when present.
    pub version: Option<u32>,
    /// `MESH_VERSION`, when present.
    pub mesh_version: Option<u32>,
    /// `MASTER_SCALE`: scene units per 3D Studio unit, when present.
    pub master_scale: Option<f32>,
    /// `NAMED_OBJECT`s in file order.
    pub objects: Vec<NamedObject<'a>>,
    /// `MAT_ENTRY`s in file order.
    pub materials: Vec<MaterialEntry>,
    /// Ambient, background and fog chunks of `MDATA`, kept as raw chunks.
    pub environment: Vec<RawChunk>,
    /// The keyframer, when the file has a `KFDATA` chunk.
    pub keyframer: Option<Keyframer<'a>>,
}

/// A chunk kept undecoded: id, offset and payload.
#[derive(Debug, Clone)]
pub struct RawChunk {
    /// The chunk id.
    pub id: u16,
    /// Absolute offset of the chunk header.
    pub offset: u64,
    /// The payload bytes.
    pub data: Vec<u8>,
}

/// A `NAMED_OBJECT`: a name and what it holds.
#[derive(Debug, Clone)]
pub struct NamedObject<'a> {
    /// The object name (keyframer nodes refer to it).
    pub name: String,
    /// Absolute offset of the chunk.
    pub offset: u64,
    /// `OBJ_HIDDEN` present.
    pub hidden: bool,
    /// The object's data.
    pub kind: ObjectKind<'a>,
}

/// What a named object holds.
#[derive(Debug, Clone)]
pub enum ObjectKind<'a> {
    /// `N_TRI_OBJECT`.
    Mesh(TriMesh<'a>),
    /// `N_DIRECT_LIGHT`.
    Light(LightChunk),
    /// `N_CAMERA`.
    Camera(CameraChunk),
    /// Anything else (no known sub-chunk).
    Other,
}

/// A triangle mesh (`N_TRI_OBJECT`), as stored.
#[derive(Debug, Clone, Default)]
pub struct TriMesh<'a> {
    /// `POINT_ARRAY`: vertex positions in world space at modelling time.
    pub points: Array<'a, [f32; 3]>,
    /// `POINT_FLAG_ARRAY`.
    pub point_flags: Array<'a, u16>,
    /// `FACE_ARRAY`: vertex indices a, b, c and the face flags word.
    pub faces: Array<'a, [u16; 4]>,
    /// `MSH_MAT_GROUP`s: material name and the faces using it.
    pub material_groups: Vec<(String, Array<'a, u16>)>,
    /// `SMOOTH_GROUP`: one bit set per face.
    pub smoothing: Array<'a, u32>,
    /// `TEX_VERTS`: one UV per vertex.
    pub tex_verts: Array<'a, [f32; 2]>,
    /// `MESH_MATRIX`: the object's frame at modelling time, as four columns (X, Y, Z axes and
    /// origin) of three floats.
    pub matrix: Option<[[f32; 3]; 4]>,
    /// `MESH_COLOR`: the editor's palette index.
    pub color: Option<u8>,
    /// `MESH_TEXTURE_INFO` payload, undecoded.
    pub texture_info: Option<Vec<u8>>,
}

/// A light (`N_DIRECT_LIGHT`), as stored.
#[derive(Debug, Clone, Default)]
pub struct LightChunk {
    /// Position in world units.
    pub position: [f32; 3],
    /// Colour, 0–1 per channel, when stated.
    pub color: Option<[f32; 3]>,
    /// `DL_OFF` present: the light is switched off.
    pub off: bool,
    /// `DL_ATTENUATE` present.
    pub attenuate: bool,
    /// `DL_INNER_RANGE`.
    pub inner_range: Option<f32>,
    /// `DL_OUTER_RANGE`.
    pub outer_range: Option<f32>,
    /// `DL_MULTIPLIER`.
    pub multiplier: Option<f32>,
    /// `DL_SPOTLIGHT`, when the light is a spot.
    pub spot: Option<SpotChunk>,
}

/// The spot part of a light (`DL_SPOTLIGHT`).
#[derive(Debug, Clone, Default)]
pub struct SpotChunk {
    /// Target position in world units.
    pub target: [f32; 3],
    /// Hotspot full angle in degrees.
    pub hotspot: f32,
    /// Falloff full angle in degrees.
    pub falloff: f32,
    /// `DL_SPOT_ROLL` in degrees.
    pub roll: Option<f32>,
}

/// A camera (`N_CAMERA`), as stored.
#[derive(Debug, Clone, Default)]
pub struct CameraChunk {
    /// Position in world units.
    pub position: [f32; 3],
    /// Target position in world units.
    pub target: [f32; 3],
    /// Roll in degrees.
    pub roll: f32,
    /// Lens focal length in mm; lib3ds turns it into a field of view of `2400 / lens` degrees.
    pub lens: f32,
    /// `CAM_RANGES`: near and far range.
    pub ranges: Option<(f32, f32)>,
}

/// A material (`MAT_ENTRY`), as stored. Colours are 0–1; percentages are fractions 0–1.
#[derive(Debug, Clone, Default)]
pub struct MaterialEntry {
    /// `MAT_NAME`.
    pub name: String,
    /// Absolute offset of the chunk.
    pub offset: u64,
    /// `MAT_AMBIENT`.
    pub ambient: Option<[f32; 3]>,
    /// `MAT_DIFFUSE`.
    pub diffuse: Option<[f32; 3]>,
    /// `MAT_SPECULAR`.
    pub specular: Option<[f32; 3]>,
    /// `MAT_SHININESS`.
    pub shininess: Option<f32>,
    /// `MAT_SHIN2PCT`.
    pub shin2pct: Option<f32>,
    /// `MAT_TRANSPARENCY`.
    pub transparency: Option<f32>,
    /// `MAT_SELF_ILPCT`.
    pub self_illum: Option<f32>,
    /// `MAT_TWO_SIDE` present.
    pub two_sided: bool,
    /// `MAT_WIRE` present.
    pub wire: bool,
    /// Texture maps in file order.
    pub maps: Vec<MapEntry>,
}

/// A material's texture map (`MAT_TEXMAP`, `MAT_OPACMAP`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    /// The map chunk's id (which slot it fills).
    pub id: u16,
    /// `MAT_MAPNAME`, possibly empty.
    pub name: String,
    /// Strength as a fraction 0–1 (the map's percentage sub-chunk), when stated.
    pub percent: Option<f32>,
    /// `MAT_MAP_TILING` flags.
    pub tiling: u16,
    /// `MAT_MAP_TEXBLUR`.
    pub blur: Option<f32>,
    /// `MAT_MAP_USCALE`, `MAT_MAP_VSCALE`.
    pub scale: [f32; 2],
    /// `MAT_MAP_UOFFSET`, `MAT_MAP_VOFFSET`.
    pub offset: [f32; 2],
    /// `MAT_MAP_ANG` in degrees.
    pub rotation: f32,
}

/// The keyframer (`KFDATA`).
#[derive(Debug, Clone, Default)]
pub struct Keyframer<'a> {
    /// `KFHDR`: revision, scene name, animation length in frames.
    pub header: Option<(u16, String, u32)>,
    /// `KFSEG`: first and last frame of the active segment.
    pub segment: Option<(u32, u32)>,
    /// `KFCURTIME`.
    pub current: Option<u32>,
    /// Node chunks (B001–B007) in file order.
    pub nodes: Vec<NodeChunk<'a>>,
}

/// A keyframer node (one of the node tags B001–B007).
#[derive(Debug, Clone, Default)]
pub struct NodeChunk<'a> {
    /// The node tag: [`id::OBJECT_NODE_TAG`], [`id::CAMERA_NODE_TAG`] …
    pub tag: u16,
    /// Absolute offset of the chunk.
    pub offset: u64,
    /// `NODE_ID`, when present.
    pub id: Option<u16>,
    /// `NODE_HDR` object name (`$$$DUMMY` for dummies; a target uses its camera's name).
    pub name: String,
    /// `NODE_HDR` flags 1 and flags 2.
    pub flags: [u16; 2],
    /// `NODE_HDR` parent number, 0xFFFF for none.
    pub parent: u16,
    /// `INSTANCE_NAME`.
    pub instance: Option<String>,
    /// `PIVOT`.
    pub pivot: Option<[f32; 3]>,
    /// `BOUNDBOX` min and max.
    pub bound_box: Option<([f32; 3], [f32; 3])>,
    /// `MORPH_SMOOTH` in degrees.
    pub morph_smooth: Option<f32>,
    /// Tracks (B020–B029) in file order.
    pub tracks: Vec<TrackChunk<'a>>,
}

/// A keyframer track (B020–B029), keys as stored (not sorted, not de-duplicated).
#[derive(Debug, Clone, Default)]
pub struct TrackChunk<'a> {
    /// The track tag (`POS_TRACK_TAG` …).
    pub tag: u16,
    /// Absolute offset of the chunk.
    pub offset: u64,
    /// Track flags word as stored. keyscene reads bit 0 as *repeat* and bit 1 as *smooth*
    /// (lib3ds 1.3's reading, `tracks.h`), not 3dsinfo's "bits 0–1: 0 single, 2 repeat,
    /// 3 loop": the lib3ds references are what the evaluation is checked against
    /// (seed 000 "Track flags" notes the two sources disagree).
    pub flags: u16,
    /// The 8 bytes between the flags and the key count: 0,0 in 1993 files, a frame range in
    /// 3ds Max exports. Not a key count.
    pub unknown: [u32; 2],
    /// The keys in file order.
    pub keys: Keys<'a>,
}

/// Track flag bit 0: the keyed span repeats (lib3ds `LIB3DS_REPEAT`).
pub const TRACK_REPEAT: u16 = 0x0001;
/// Track flag bit 1: end tangents computed as if cyclic (lib3ds `LIB3DS_SMOOTH`).
pub const TRACK_SMOOTH: u16 = 0x0002;

/// One key of a track.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyChunk {
    /// The key's frame.
    pub frame: i32,
    /// The spline-parameter flags as stored; only bits 0–4 are read (tension, continuity, bias,
    /// ease to, ease from), higher bits are ignored.
    pub flags: u16,
    /// Tension, continuity, bias (−1..1), ease to, ease from (0..1); 0 where not stored.
    pub tcb: [f32; 5],
    /// The key's value.
    pub value: KeyValue,
}

/// A key's value, by track type (seed 000, "Tracks").
#[derive(Debug, Clone, PartialEq)]
pub enum KeyValue {
    /// `HIDE_TRACK_TAG`: no value (each key toggles).
    None,
    /// FOV, roll, hotspot, falloff: degrees.
    Scalar(f32),
    /// Position, scale, colour.
    Vector([f32; 3]),
    /// Rotation: angle in radians, then the axis.
    AxisAngle(f32, [f32; 3]),
    /// Morph: the name of the object to morph into.
    Name(String),
}

/// Decodes a whole file.
///
/// Fails with [`Error::NotThreeDs`] when the bytes do not start with a 3DS root chunk, and
/// with [`Error::Malformed`] / [`Error::Limit`] when a known chunk's payload is inconsistent.
/// Survivable problems are pushed to `ctx.warnings`.
pub fn decode<'a>(bytes: &'a [u8], ctx: &mut Ctx) -> Result<File3ds<'a>, Error> {
    if bytes.len() as u64 > ctx.limits.max_bytes {
        return Err(Error::Limit {
            place: "file".into(),
            offset: 0,
            message: format!("{} bytes exceed the limit of {}", bytes.len(), ctx.limits.max_bytes),
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(Error::NotThreeDs(format!(
            "{} bytes are too few for a chunk header (6 bytes)",
            bytes.len()
        )));
    }
    let root = u16::from_le_bytes([bytes[0], bytes[1]]);
    if root != id::M3DMAGIC && root != id::CMAGIC {
        let shown: String = bytes
            .iter()
            .take(8)
            .map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' })
            .collect();
        return Err(Error::NotThreeDs(format!(
            "the file starts with {root:#06x} (\"{shown}\"), expected the root chunk M3DMAGIC 0x4d4d or CMAGIC 0xc23d"
        )));
    }
    let mut tops = Chunks::new(bytes, 0);
    let root_chunk = match tops.next_chunk(ctx) {
        Some(c) if c.id == root && c.offset == 0 => c,
        _ => {
            let len = u32_at(bytes, 2);
            return Err(Error::Malformed {
                place: chunk_label(root).to_string(),
                offset: 0,
                message: format!(
                    "the root chunk declares length {len}, less than its 6-byte header"
                ),
            });
        }
    };
    // The rest of the top level is walked (for its warnings) but not read.
    let mut after = None;
    while let Some(c) = tops.next_chunk(ctx) {
        after.get_or_insert(c.offset);
    }
    if let Some(offset) = after {
        ctx.warn(offset, "bytes after the root chunk ignored");
    }
    let mut file = File3ds { root, ..File3ds::default() };
    ctx.within(Label::Chunk(root), |ctx| {
        let mut subs = Chunks::of(&root_chunk);
        while let Some(c) = subs.next_chunk(ctx) {
            match c.id {
                id::M3D_VERSION => {
                    file.version = Some(Cursor::new(&c).u32(ctx)?);
                }
                id::MDATA => {
                    ctx.within(Label::Chunk(c.id), |ctx| decode_mdata(&c, &mut file, ctx))?
                }
                id::KFDATA => {
                    let kf = ctx.within(Label::Chunk(c.id), |ctx| decode_kfdata(&c, ctx))?;
                    file.keyframer = Some(kf);
                }
                _ => {}
            }
        }
        Ok(file)
    })
}

fn decode_mdata<'a>(chunk: &Chunk<'a>, file: &mut File3ds<'a>, ctx: &mut Ctx) -> Result<(), Error> {
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        match c.id {
            id::MESH_VERSION => file.mesh_version = Some(Cursor::new(&c).u32(ctx)?),
            id::MASTER_SCALE => file.master_scale = Some(Cursor::new(&c).f32(ctx)?),
            id::NAMED_OBJECT => {
                let name = Cursor::new(&c).cstr(ctx)?;
                let (name, o) = ctx.within_object(name, |ctx| decode_named_object(&c, ctx));
                let (hidden, kind) = o?;
                file.objects.push(NamedObject { name, offset: c.offset, hidden, kind });
            }
            id::MAT_ENTRY => {
                let m = ctx.within(Label::Chunk(c.id), |ctx| decode_material(&c, ctx))?;
                file.materials.push(m);
            }
            id::AMBIENT_LIGHT
            | id::BIT_MAP
            | id::SOLID_BGND
            | id::V_GRADIENT
            | id::FOG
            | id::LAYER_FOG
            | id::DISTANCE_CUE
            | 0x1101
            | 0x1201
            | 0x1301
            | 0x2201
            | 0x2301
            | 0x2303 => file.environment.push(RawChunk {
                id: c.id,
                offset: c.offset,
                data: c.data.to_vec(),
            }),
            _ => {}
        }
    }
    Ok(())
}

/// A named object's hidden flag and contents (the name is read by the caller).
fn decode_named_object<'a>(
    chunk: &Chunk<'a>,
    ctx: &mut Ctx,
) -> Result<(bool, ObjectKind<'a>), Error> {
    let mut cur = Cursor::new(chunk);
    cur.skip_cstr(ctx)?;
    let mut hidden = false;
    let mut kind = ObjectKind::Other;
    let mut subs = cur.chunks();
    while let Some(c) = subs.next_chunk(ctx) {
        match c.id {
            id::OBJ_HIDDEN => hidden = true,
            id::N_TRI_OBJECT => {
                kind = ObjectKind::Mesh(ctx.within(Label::Chunk(c.id), |ctx| decode_mesh(&c, ctx))?)
            }
            id::N_DIRECT_LIGHT => {
                kind =
                    ObjectKind::Light(ctx.within(Label::Chunk(c.id), |ctx| decode_light(&c, ctx))?)
            }
            id::N_CAMERA => {
                kind = ObjectKind::Camera(
                    ctx.within(Label::Chunk(c.id), |ctx| decode_camera(&c, ctx))?,
                )
            }
            _ => {}
        }
    }
    Ok((hidden, kind))
}

fn decode_mesh<'a>(chunk: &Chunk<'a>, ctx: &mut Ctx) -> Result<TriMesh<'a>, Error> {
    let mut m = TriMesh::default();
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        ctx.within(Label::Chunk(c.id), |ctx| decode_mesh_part(&c, &mut m, ctx))?;
    }
    Ok(m)
}

/// Reads a `u16` count and checks that many elements of `size` bytes fit; returns their bytes.
fn counted<'a>(
    cur: &mut Cursor<'a>,
    what: &str,
    size: usize,
    ctx: &Ctx,
) -> Result<(usize, &'a [u8]), Error> {
    let at = cur.offset();
    let n = cur.u16(ctx)?;
    let n = ctx.check_count(at, what, n.into(), size as u64, cur.left())?;
    Ok((n, cur.array(n, size, what, ctx)?))
}

/// One sub-chunk of `N_TRI_OBJECT`. Arrays are kept as views of their checked byte range
/// ([`Array`]); nothing is copied or allocated for them here.
fn decode_mesh_part<'a>(c: &Chunk<'a>, m: &mut TriMesh<'a>, ctx: &mut Ctx) -> Result<(), Error> {
    let mut cur = Cursor::new(c);
    match c.id {
        id::POINT_ARRAY => {
            let (_, b) = counted(&mut cur, "points", 12, ctx)?;
            m.points = Array::new(b);
        }
        id::POINT_FLAG_ARRAY => {
            let (_, b) = counted(&mut cur, "point flags", 2, ctx)?;
            m.point_flags = Array::new(b);
        }
        id::FACE_ARRAY => {
            let (n, b) = counted(&mut cur, "faces", 8, ctx)?;
            m.faces = Array::new(b);
            let mut subs = cur.chunks();
            while let Some(s) = subs.next_chunk(ctx) {
                ctx.within(Label::Chunk(s.id), |ctx| decode_face_sub(&s, n, m, ctx))?;
            }
        }
        id::TEX_VERTS => {
            let (_, b) = counted(&mut cur, "texture vertices", 8, ctx)?;
            m.tex_verts = Array::new(b);
        }
        id::MESH_MATRIX => {
            m.matrix = Some([cur.vec3(ctx)?, cur.vec3(ctx)?, cur.vec3(ctx)?, cur.vec3(ctx)?]);
        }
        id::MESH_COLOR => m.color = Some(cur.u8(ctx)?),
        id::MESH_TEXTURE_INFO => m.texture_info = Some(c.data.to_vec()),
        _ => {}
    }
    Ok(())
}

fn decode_face_sub<'a>(
    c: &Chunk<'a>,
    faces: usize,
    m: &mut TriMesh<'a>,
    ctx: &mut Ctx,
) -> Result<(), Error> {
    let mut cur = Cursor::new(c);
    match c.id {
        id::MSH_MAT_GROUP => {
            let name = cur.cstr(ctx)?;
            let (_, b) = counted(&mut cur, "face indices", 2, ctx)?;
            m.material_groups.push((name, Array::new(b)));
        }
        id::SMOOTH_GROUP => {
            // One u32 per face of the FACE_ARRAY (lib3ds reads exactly that many).
            let n =
                ctx.check_count(c.data_offset(), "smoothing groups", faces as u64, 4, cur.left())?;
            let b = cur.array(n, 4, "smoothing groups", ctx)?;
            m.smoothing = Array::new(b);
        }
        _ => {}
    }
    Ok(())
}

/// Reads a colour sub-chunk list, preferring the linear variants as lib3ds does.
fn decode_color(chunk: &Chunk, ctx: &mut Ctx) -> Result<Option<[f32; 3]>, Error> {
    let mut plain = None;
    let mut linear = None;
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        let mut cur = Cursor::new(&c);
        let v = match c.id {
            id::COLOR_F | id::LIN_COLOR_F => cur.vec3(ctx)?,
            id::COLOR_24 | id::LIN_COLOR_24 => {
                let b = [cur.u8(ctx)?, cur.u8(ctx)?, cur.u8(ctx)?];
                b.map(|x| f32::from(x) / 255.0)
            }
            _ => continue,
        };
        if matches!(c.id, id::LIN_COLOR_F | id::LIN_COLOR_24) {
            linear = Some(v);
        } else {
            plain = Some(v);
        }
    }
    Ok(linear.or(plain))
}

/// Reads a percentage sub-chunk list (`INT_PERCENTAGE` ÷ 100, `FLOAT_PERCENTAGE` as stored).
fn decode_percent(chunk: &Chunk, ctx: &mut Ctx) -> Result<Option<f32>, Error> {
    let mut out = None;
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        let mut cur = Cursor::new(&c);
        match c.id {
            id::INT_PERCENTAGE => out = Some(f32::from(cur.u16(ctx)? as i16) / 100.0),
            id::FLOAT_PERCENTAGE => out = Some(cur.f32(ctx)?),
            _ => {}
        }
    }
    Ok(out)
}

fn decode_light(chunk: &Chunk, ctx: &mut Ctx) -> Result<LightChunk, Error> {
    let mut cur = Cursor::new(chunk);
    let mut l = LightChunk { position: cur.vec3(ctx)?, ..LightChunk::default() };
    let mut subs = cur.chunks();
    while let Some(c) = subs.next_chunk(ctx) {
        ctx.within(Label::Chunk(c.id), |ctx| -> Result<(), Error> {
            let mut cur = Cursor::new(&c);
            match c.id {
                id::COLOR_F | id::LIN_COLOR_F => l.color = Some(cur.vec3(ctx)?),
                id::COLOR_24 | id::LIN_COLOR_24 => {
                    let b = [cur.u8(ctx)?, cur.u8(ctx)?, cur.u8(ctx)?];
                    l.color = Some(b.map(|x| f32::from(x) / 255.0));
                }
                id::DL_OFF => l.off = true,
                id::DL_ATTENUATE => l.attenuate = true,
                id::DL_INNER_RANGE => l.inner_range = Some(cur.f32(ctx)?),
                id::DL_OUTER_RANGE => l.outer_range = Some(cur.f32(ctx)?),
                id::DL_MULTIPLIER => l.multiplier = Some(cur.f32(ctx)?),
                id::DL_SPOTLIGHT => {
                    let mut s = SpotChunk {
                        target: cur.vec3(ctx)?,
                        hotspot: cur.f32(ctx)?,
                        falloff: cur.f32(ctx)?,
                        roll: None,
                    };
                    let mut subs = cur.chunks();
                    while let Some(sc) = subs.next_chunk(ctx) {
                        if sc.id == id::DL_SPOT_ROLL {
                            s.roll = Some(Cursor::new(&sc).f32(ctx)?);
                        }
                    }
                    l.spot = Some(s);
                }
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(l)
}

fn decode_camera(chunk: &Chunk, ctx: &mut Ctx) -> Result<CameraChunk, Error> {
    let mut cur = Cursor::new(chunk);
    let mut cam = CameraChunk {
        position: cur.vec3(ctx)?,
        target: cur.vec3(ctx)?,
        roll: cur.f32(ctx)?,
        lens: cur.f32(ctx)?,
        ranges: None,
    };
    let mut subs = cur.chunks();
    while let Some(c) = subs.next_chunk(ctx) {
        if c.id == id::CAM_RANGES {
            let mut cur = Cursor::new(&c);
            cam.ranges = Some((cur.f32(ctx)?, cur.f32(ctx)?));
        }
    }
    Ok(cam)
}

fn decode_material(chunk: &Chunk, ctx: &mut Ctx) -> Result<MaterialEntry, Error> {
    let mut m = MaterialEntry { offset: chunk.offset, ..MaterialEntry::default() };
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        ctx.within(Label::Chunk(c.id), |ctx| -> Result<(), Error> {
            match c.id {
                id::MAT_NAME => m.name = Cursor::new(&c).cstr(ctx)?,
                id::MAT_AMBIENT => m.ambient = decode_color(&c, ctx)?,
                id::MAT_DIFFUSE => m.diffuse = decode_color(&c, ctx)?,
                id::MAT_SPECULAR => m.specular = decode_color(&c, ctx)?,
                id::MAT_SHININESS => m.shininess = decode_percent(&c, ctx)?,
                id::MAT_SHIN2PCT => m.shin2pct = decode_percent(&c, ctx)?,
                id::MAT_TRANSPARENCY => m.transparency = decode_percent(&c, ctx)?,
                id::MAT_SELF_ILPCT => m.self_illum = decode_percent(&c, ctx)?,
                id::MAT_TWO_SIDE => m.two_sided = true,
                id::MAT_WIRE => m.wire = true,
                id::MAT_TEXMAP
                | id::MAT_SPECMAP
                | id::MAT_OPACMAP
                | id::MAT_REFLMAP
                | id::MAT_BUMPMAP
                | id::MAT_TEX2MAP
                | id::MAT_SHINMAP
                | id::MAT_SELFIMAP => m.maps.push(decode_map(&c, ctx)?),
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(m)
}

fn decode_map(chunk: &Chunk, ctx: &mut Ctx) -> Result<MapEntry, Error> {
    let mut map = MapEntry {
        id: chunk.id,
        name: String::new(),
        percent: None,
        tiling: 0,
        blur: None,
        scale: [1.0, 1.0],
        offset: [0.0, 0.0],
        rotation: 0.0,
    };
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        let mut cur = Cursor::new(&c);
        match c.id {
            id::INT_PERCENTAGE => map.percent = Some(f32::from(cur.u16(ctx)? as i16) / 100.0),
            id::FLOAT_PERCENTAGE => map.percent = Some(cur.f32(ctx)?),
            id::MAT_MAPNAME => map.name = cur.cstr(ctx)?,
            id::MAT_MAP_TILING => map.tiling = cur.u16(ctx)?,
            id::MAT_MAP_TEXBLUR => map.blur = Some(cur.f32(ctx)?),
            id::MAT_MAP_USCALE => map.scale[0] = cur.f32(ctx)?,
            id::MAT_MAP_VSCALE => map.scale[1] = cur.f32(ctx)?,
            id::MAT_MAP_UOFFSET => map.offset[0] = cur.f32(ctx)?,
            id::MAT_MAP_VOFFSET => map.offset[1] = cur.f32(ctx)?,
            id::MAT_MAP_ANG => map.rotation = cur.f32(ctx)?,
            _ => {}
        }
    }
    Ok(map)
}

fn decode_kfdata<'a>(chunk: &Chunk<'a>, ctx: &mut Ctx) -> Result<Keyframer<'a>, Error> {
    let mut kf = Keyframer::default();
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        match c.id {
            id::KFHDR => ctx.within(Label::Chunk(c.id), |ctx| -> Result<(), Error> {
                let mut cur = Cursor::new(&c);
                kf.header = Some((cur.u16(ctx)?, cur.cstr(ctx)?, cur.u32(ctx)?));
                Ok(())
            })?,
            id::KFSEG => ctx.within(Label::Chunk(c.id), |ctx| -> Result<(), Error> {
                let mut cur = Cursor::new(&c);
                kf.segment = Some((cur.u32(ctx)?, cur.u32(ctx)?));
                Ok(())
            })?,
            id::KFCURTIME => {
                kf.current = Some(ctx.within(Label::Chunk(c.id), |ctx| Cursor::new(&c).u32(ctx))?);
            }
            id::AMBIENT_NODE_TAG..=id::SPOTLIGHT_NODE_TAG => {
                let label = Label::Node(c.id, kf.nodes.len());
                kf.nodes.push(ctx.within(label, |ctx| decode_node(&c, ctx))?);
            }
            _ => {}
        }
    }
    Ok(kf)
}

fn decode_node<'a>(chunk: &Chunk<'a>, ctx: &mut Ctx) -> Result<NodeChunk<'a>, Error> {
    let mut n =
        NodeChunk { tag: chunk.id, offset: chunk.offset, parent: 0xFFFF, ..NodeChunk::default() };
    let mut subs = Chunks::of(chunk);
    while let Some(c) = subs.next_chunk(ctx) {
        ctx.within(Label::Chunk(c.id), |ctx| -> Result<(), Error> {
            let mut cur = Cursor::new(&c);
            match c.id {
                id::NODE_ID => n.id = Some(cur.u16(ctx)?),
                id::NODE_HDR => {
                    n.name = cur.cstr(ctx)?;
                    n.flags = [cur.u16(ctx)?, cur.u16(ctx)?];
                    n.parent = cur.u16(ctx)?;
                }
                id::INSTANCE_NAME => n.instance = Some(cur.cstr(ctx)?),
                id::PIVOT => n.pivot = Some(cur.vec3(ctx)?),
                id::BOUNDBOX => n.bound_box = Some((cur.vec3(ctx)?, cur.vec3(ctx)?)),
                id::MORPH_SMOOTH => n.morph_smooth = Some(cur.f32(ctx)?),
                id::POS_TRACK_TAG..=id::HIDE_TRACK_TAG => n.tracks.push(decode_track(&c, ctx)?),
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(n)
}

/// Decodes a track chunk (B020–B029): `u16` flags, 8 unknown bytes, `u32` key count, keys.
pub fn decode_track<'a>(chunk: &Chunk<'a>, ctx: &mut Ctx) -> Result<TrackChunk<'a>, Error> {
    let mut cur = Cursor::new(chunk);
    let flags = cur.u16(ctx)?;
    let unknown = [cur.u32(ctx)?, cur.u32(ctx)?];
    let at = cur.offset();
    let count = cur.u32(ctx)?;
    let value_min: u64 = match chunk.id {
        id::POS_TRACK_TAG | id::SCL_TRACK_TAG | id::COL_TRACK_TAG => 12,
        id::ROT_TRACK_TAG => 16,
        id::MORPH_TRACK_TAG => 1,
        id::HIDE_TRACK_TAG => 0,
        _ => 4,
    };
    let count = ctx.check_count(at, "keys", count.into(), 6 + value_min, cur.left())?;
    // Every key is checked here, with errors naming the value that is cut off; the keys are
    // kept as a view of their bytes and decoded by `Keys::iter`.
    let start = cur.pos;
    for _ in 0..count {
        cur.i32(ctx)?;
        let kflags = cur.u16(ctx)?;
        for bit in 0..5 {
            if kflags & (1 << bit) != 0 {
                cur.f32(ctx)?;
            }
        }
        match chunk.id {
            id::POS_TRACK_TAG | id::SCL_TRACK_TAG | id::COL_TRACK_TAG => {
                cur.vec3(ctx)?;
            }
            id::ROT_TRACK_TAG => {
                cur.f32(ctx)?;
                cur.vec3(ctx)?;
            }
            id::MORPH_TRACK_TAG => cur.skip_cstr(ctx)?,
            id::HIDE_TRACK_TAG => {}
            _ => {
                cur.f32(ctx)?;
            }
        }
    }
    let keys = Keys { tag: chunk.id, count, bytes: &chunk.data[start..cur.pos] };
    Ok(TrackChunk { tag: chunk.id, offset: chunk.offset, flags, unknown, keys })
}

/// One key of a track of type `tag` from the start of `b`, and the bytes it takes; `None`
/// when `b` is too short (never for keys checked by [`decode_track`]).
fn read_key(tag: u16, b: &[u8]) -> Option<(KeyChunk, usize)> {
    let mut pos = 0usize;
    let f32_next = |pos: &mut usize| -> Option<f32> {
        let v = f32_at(b.get(*pos..*pos + 4)?, 0);
        *pos += 4;
        Some(v)
    };
    let frame = u32_at(b.get(0..4)?, 0) as i32;
    let flags = u16_at(b.get(4..6)?, 0);
    pos += 6;
    let mut tcb = [0.0f32; 5];
    for (bit, slot) in tcb.iter_mut().enumerate() {
        if flags & (1 << bit) != 0 {
            *slot = f32_next(&mut pos)?;
        }
    }
    let vec3 = |pos: &mut usize| -> Option<[f32; 3]> {
        Some([f32_next(pos)?, f32_next(pos)?, f32_next(pos)?])
    };
    let value = match tag {
        id::POS_TRACK_TAG | id::SCL_TRACK_TAG | id::COL_TRACK_TAG => {
            KeyValue::Vector(vec3(&mut pos)?)
        }
        id::ROT_TRACK_TAG => {
            let angle = f32_at(b.get(pos..pos + 4)?, 0);
            pos += 4;
            KeyValue::AxisAngle(angle, vec3(&mut pos)?)
        }
        id::MORPH_TRACK_TAG => {
            let rest = b.get(pos..)?;
            let n = rest.iter().position(|&c| c == 0)?;
            pos += n + 1;
            KeyValue::Name(bytes_to_string(&rest[..n]))
        }
        id::HIDE_TRACK_TAG => KeyValue::None,
        _ => {
            let v = f32_at(b.get(pos..pos + 4)?, 0);
            pos += 4;
            KeyValue::Scalar(v)
        }
    };
    Some((KeyChunk { frame, flags, tcb, value }, pos))
}

/// A track's keys as stored: a view of their checked bytes, decoded on demand ([`Keys::iter`]).
#[derive(Clone, Copy, Default)]
pub struct Keys<'a> {
    tag: u16,
    count: usize,
    bytes: &'a [u8],
}

impl<'a> Keys<'a> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the track has no key.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The keys in file order.
    pub fn iter(&self) -> KeyIter<'a> {
        KeyIter { tag: self.tag, left: self.count, bytes: self.bytes }
    }

    /// The keys in file order, copied into a vector.
    pub fn to_vec(&self) -> Vec<KeyChunk> {
        self.iter().collect()
    }
}

impl std::fmt::Debug for Keys<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The keys of a [`Keys`] view, decoded one by one.
#[derive(Debug, Clone)]
pub struct KeyIter<'a> {
    tag: u16,
    left: usize,
    bytes: &'a [u8],
}

impl Iterator for KeyIter<'_> {
    type Item = KeyChunk;

    #[inline]
    fn next(&mut self) -> Option<KeyChunk> {
        if self.left == 0 {
            return None;
        }
        let Some((key, used)) = read_key(self.tag, self.bytes) else {
            self.left = 0;
            return None;
        };
        self.bytes = &self.bytes[used..];
        self.left -= 1;
        Some(key)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// A node of the raw chunk tree built by [`walk`].
#[derive(Debug, Clone)]
pub struct ChunkNode {
    /// The chunk id.
    pub id: u16,
    /// Absolute offset of the header.
    pub offset: u64,
    /// Declared length, header included.
    pub declared_len: u32,
    /// Payload bytes before the first sub-chunk (all of it for leaf chunks).
    pub data_len: usize,
    /// Sub-chunks, for the chunks known to contain them.
    pub children: Vec<ChunkNode>,
}

/// How many bytes of fixed data precede the sub-chunks of a container chunk, or `None` when
/// the chunk is not a container. NAMED_OBJECT's prefix is a string, handled by the caller.
fn container_prefix(chunk: u16) -> Option<usize> {
    Some(match chunk {
        id::M3DMAGIC | id::CMAGIC | id::MDATA | id::KFDATA | id::N_TRI_OBJECT | id::MAT_ENTRY => 0,
        id::MAT_AMBIENT | id::MAT_DIFFUSE | id::MAT_SPECULAR => 0,
        id::MAT_SHININESS | id::MAT_SHIN2PCT | id::MAT_TRANSPARENCY | id::MAT_SELF_ILPCT => 0,
        id::MAT_TEXMAP
        | id::MAT_SPECMAP
        | id::MAT_OPACMAP
        | id::MAT_REFLMAP
        | id::MAT_BUMPMAP
        | id::MAT_TEX2MAP
        | id::MAT_SHINMAP
        | id::MAT_SELFIMAP => 0,
        id::AMBIENT_NODE_TAG..=id::SPOTLIGHT_NODE_TAG => 0,
        id::N_DIRECT_LIGHT => 12,
        id::DL_SPOTLIGHT => 20,
        id::N_CAMERA => 32,
        _ => return None,
    })
}

/// Builds the raw chunk tree of `bytes` (for `inspect --raw` and tests), descending into the
/// chunks known to contain sub-chunks, at most [`Limits::max_depth`] levels deep (deeper
/// levels are left as leaves with a warning). FACE_ARRAY's sub-chunks follow its faces.
pub fn walk(bytes: &[u8], ctx: &mut Ctx) -> Vec<ChunkNode> {
    fn level(data: &[u8], base: u64, depth: u32, ctx: &mut Ctx) -> Vec<ChunkNode> {
        let mut out = Vec::new();
        for c in split(data, base, ctx) {
            let prefix = match c.id {
                id::NAMED_OBJECT => c.data.iter().position(|&b| b == 0).map(|p| p + 1),
                id::FACE_ARRAY if c.data.len() >= 2 => {
                    let n = u16::from_le_bytes([c.data[0], c.data[1]]) as usize;
                    Some(2 + 8 * n)
                }
                other => container_prefix(other),
            };
            let mut node = ChunkNode {
                id: c.id,
                offset: c.offset,
                declared_len: c.declared_len,
                data_len: c.data.len(),
                children: Vec::new(),
            };
            if let Some(p) = prefix.filter(|&p| p <= c.data.len()) {
                if depth >= ctx.limits.max_depth {
                    ctx.warn(c.offset, "nesting deeper than the depth limit; not descended");
                } else {
                    node.data_len = p;
                    node.children = level(&c.data[p..], c.data_offset() + p as u64, depth + 1, ctx);
                }
            }
            out.push(node);
        }
        out
    }
    level(bytes, 0, 0, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = id.to_le_bytes().to_vec();
        v.extend_from_slice(&((payload.len() + 6) as u32).to_le_bytes());
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn root_chunk_shorter_than_its_header_is_an_error_not_a_panic() {
        for len in [0u32, 4] {
            let mut data = vec![0x4D, 0x4D];
            data.extend(len.to_le_bytes());
            let mut ctx = Ctx::new(Limits::default());
            let err = decode(&data, &mut ctx).unwrap_err();
            assert!(err.to_string().contains("at byte 0x0"), "{err}");
        }
    }

    /// Issue 17 §1: a root chunk longer than the file says the file is truncated at its
    /// length; the same overrun inside a shorter parent keeps the parent wording.
    #[test]
    fn a_chunk_past_the_end_of_the_file_says_truncated_at_the_file_length() {
        let mut data = vec![0x4D, 0x4D];
        data.extend(100u32.to_le_bytes());
        data.extend(chunk(0x0002, &3u32.to_le_bytes()));
        let mut ctx = Ctx::for_file(Limits::default(), data.len() as u64);
        let _ = decode(&data, &mut ctx);
        let first = ctx.warnings.first().map(|w| w.message.clone()).unwrap_or_default();
        assert!(
            first.starts_with("the file is truncated at byte 16: M3DMAGIC declares 100 bytes"),
            "{first}"
        );
        let mut ctx = Ctx::for_file(Limits::default(), 1000);
        let _ = split(&data, 0, &mut ctx);
        let first = ctx.warnings.first().map(|w| w.message.clone()).unwrap_or_default();
        assert!(first.contains("remain in its parent"), "{first}");
    }

    #[test]
    fn split_reads_two_sibling_chunks_with_offsets() {
        let mut data = chunk(0x0002, &3u32.to_le_bytes());
        data.extend(chunk(0x3D3D, &[]));
        let mut ctx = Ctx::new(Limits::default());
        let cs = split(&data, 100, &mut ctx);
        assert_eq!(cs.len(), 2);
        assert_eq!((cs[0].id, cs[0].offset, cs[0].data.len()), (0x0002, 100, 4));
        assert_eq!((cs[1].id, cs[1].offset, cs[1].data.len()), (0x3D3D, 110, 0));
        assert!(ctx.warnings.is_empty());
    }

    #[test]
    fn chunk_running_past_its_parent_is_cut_with_a_warning() {
        let mut data = chunk(0x0002, &3u32.to_le_bytes());
        data[2] = 200; // declares 200 bytes, 10 present
        let mut ctx = Ctx::new(Limits::default());
        let cs = split(&data, 0, &mut ctx);
        assert_eq!(cs[0].data.len(), 4);
        assert_eq!(ctx.warnings.len(), 1);
        assert!(ctx.warnings[0].message.contains("declares 200 bytes"));
    }

    #[test]
    fn zero_length_chunk_is_skipped_with_a_warning() {
        let mut data = vec![0x10, 0x00, 0, 0, 0, 0];
        data.extend(chunk(0x0002, &7u32.to_le_bytes()));
        let mut ctx = Ctx::new(Limits::default());
        let cs = split(&data, 0, &mut ctx);
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].id, 0x0002);
        assert_eq!(ctx.warnings.len(), 1);
    }

    #[test]
    fn face_count_beyond_the_chunk_is_an_error_naming_the_place() {
        // MDATA › NAMED_OBJECT "Box01" › N_TRI_OBJECT › FACE_ARRAY declaring 500 faces.
        let mut face = 500u16.to_le_bytes().to_vec();
        face.extend([0u8; 12]);
        let tri = chunk(0x4100, &chunk(0x4120, &face));
        let mut obj = b"Box01\0".to_vec();
        obj.extend(tri);
        let file = chunk(0x4D4D, &chunk(0x3D3D, &chunk(0x4000, &obj)));
        let mut ctx = Ctx::new(Limits::default());
        let e = decode(&file, &mut ctx).unwrap_err().to_string();
        assert_eq!(
            e,
            "3ds: M3DMAGIC › MDATA › NAMED_OBJECT \"Box01\" › N_TRI_OBJECT › FACE_ARRAY at byte 0x24: \
             declares 500 faces (4000 bytes) but the chunk has 12 bytes left"
        );
    }

    #[test]
    fn track_keys_read_only_tcb_bits_0_to_4_after_the_unknown_words() {
        // POS track: flags 0x40, unknown 0 and 83, 1 key at frame 5 with flags 0xFF01:
        // bit 0 (tension) set, bits 8–15 ignored, then the position.
        let mut p = 0x40u16.to_le_bytes().to_vec();
        p.extend(0u32.to_le_bytes());
        p.extend(83u32.to_le_bytes());
        p.extend(1u32.to_le_bytes());
        p.extend(5i32.to_le_bytes());
        p.extend(0xFF01u16.to_le_bytes());
        p.extend(0.5f32.to_le_bytes());
        for v in [1.0f32, 2.0, 3.0] {
            p.extend(v.to_le_bytes());
        }
        let data = chunk(0xB020, &p);
        let mut ctx = Ctx::new(Limits::default());
        let c = split(&data, 0, &mut ctx)[0];
        let t = decode_track(&c, &mut ctx).unwrap();
        assert_eq!(t.flags, 0x40);
        assert_eq!(t.unknown, [0, 83]);
        let keys = t.keys.to_vec();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].frame, 5);
        assert_eq!(keys[0].tcb, [0.5, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(keys[0].value, KeyValue::Vector([1.0, 2.0, 3.0]));
    }

    #[test]
    fn huge_key_count_fails_before_allocating() {
        let mut p = 0u16.to_le_bytes().to_vec();
        p.extend([0u8; 8]);
        p.extend(u32::MAX.to_le_bytes());
        let data = chunk(0xB020, &p);
        let mut ctx = Ctx::new(Limits::default());
        let c = split(&data, 0, &mut ctx)[0];
        let e = decode_track(&c, &mut ctx).unwrap_err();
        assert!(matches!(e, Error::Limit { .. }), "{e}");
    }

    #[test]
    fn text_file_is_not_a_3ds_file() {
        let mut ctx = Ctx::new(Limits::default());
        let e = decode(b"invalid 3ds file\n", &mut ctx).unwrap_err();
        assert!(matches!(e, Error::NotThreeDs(_)));
        assert!(e.to_string().contains("expected the root chunk M3DMAGIC"), "{e}");
    }
}
