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
//! [`Limits::max_elements`] before anything is allocated; vectors grow by pushing, never by a
//! capacity taken from the file. A chunk whose length runs past its parent is cut at the
//! parent's end (a [`Warning`]); a zero-length chunk is skipped (a [`Warning`]); a length below
//! the header size ends the walk of that level (a [`Warning`]). Nesting is bounded by the
//! decoders' fixed structure and, for [`walk`], by [`Limits::max_depth`].

use crate::limits::Limits;
use crate::scene::Warning;

use super::error::Error;

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

/// Where the walker is, for errors and warnings: the chunk path and the warnings so far.
#[derive(Debug)]
pub struct Ctx {
    path: Vec<String>,
    /// Warnings collected while walking.
    pub warnings: Vec<Warning>,
    /// The limits every count is checked against.
    pub limits: Limits,
}

impl Ctx {
    /// A context at the file's root.
    pub fn new(limits: Limits) -> Ctx {
        Ctx { path: Vec::new(), warnings: Vec::new(), limits }
    }

    /// The current chunk path, outermost first, joined with ` › `.
    pub fn place(&self) -> String {
        if self.path.is_empty() {
            "file".into()
        } else {
            self.path.join(" › ")
        }
    }

    /// Records a survivable problem at `offset`.
    pub fn warn(&mut self, offset: u64, message: impl Into<String>) {
        let place = self.place();
        self.warnings.push(Warning { offset: Some(offset), place, message: message.into() });
    }

    /// An error at `offset` in the current place.
    pub fn malformed(&self, offset: u64, message: impl Into<String>) -> Error {
        Error::Malformed { place: self.place(), offset, message: message.into() }
    }

    /// Runs `f` with `label` appended to the chunk path.
    pub fn within<T>(&mut self, label: String, f: impl FnOnce(&mut Ctx) -> T) -> T {
        self.path.push(label);
        let r = f(self);
        self.path.pop();
        r
    }

    /// Checks a count read from the file: `count` elements of at least `min_size` bytes each
    /// must fit in `left` bytes and stay within [`Limits::max_elements`].
    pub fn check_count(
        &self,
        offset: u64,
        what: &str,
        count: u64,
        min_size: u64,
        left: usize,
    ) -> Result<usize, Error> {
        if count > self.limits.max_elements {
            return Err(Error::Limit {
                place: self.place(),
                offset,
                message: format!(
                    "declares {count} {what}, more than the limit of {}",
                    self.limits.max_elements
                ),
            });
        }
        let need = count.saturating_mul(min_size);
        if need > left as u64 {
            return Err(self.malformed(
                offset,
                format!(
                    "declares {count} {what} ({need} bytes) but the chunk has {left} bytes left"
                ),
            ));
        }
        Ok(count as usize)
    }
}

/// Splits `data` (a payload region starting at absolute offset `base`) into its chunks.
///
/// A chunk whose declared length runs past `data`'s end is cut there with a warning; a
/// zero-length chunk is skipped (6 bytes) with a warning; a length of 1–5 or fewer than 6
/// bytes left end the walk with a warning. Never fails.
pub fn split<'a>(data: &'a [u8], base: u64, ctx: &mut Ctx) -> Vec<Chunk<'a>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < data.len() {
        let left = data.len() - pos;
        let offset = base + pos as u64;
        if left < HEADER_LEN {
            ctx.warn(
                offset,
                format!("{left} trailing bytes are too few for a chunk header; ignored"),
            );
            break;
        }
        let id = u16::from_le_bytes([data[pos], data[pos + 1]]);
        let len = u32::from_le_bytes([data[pos + 2], data[pos + 3], data[pos + 4], data[pos + 5]]);
        if len == 0 {
            ctx.warn(offset, format!("{} has length 0; skipped", chunk_label(id)));
            pos += HEADER_LEN;
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
            break;
        }
        let end = if len as usize > left {
            ctx.warn(
                offset,
                format!(
                    "{} declares {len} bytes but only {left} remain in its parent; cut at the parent's end",
                    chunk_label(id)
                ),
            );
            data.len()
        } else {
            pos + len as usize
        };
        out.push(Chunk { id, offset, declared_len: len, data: &data[pos + HEADER_LEN..end] });
        pos = end;
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

    fn take(&mut self, n: usize, what: &str, ctx: &Ctx) -> Result<&'a [u8], Error> {
        if self.left() < n {
            return Err(ctx.malformed(
                self.offset(),
                format!("expected {what} ({n} bytes) but the chunk has {} bytes left", self.left()),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Reads a `u8`.
    pub fn u8(&mut self, ctx: &Ctx) -> Result<u8, Error> {
        Ok(self.take(1, "a byte", ctx)?[0])
    }

    /// Reads a `u16`.
    pub fn u16(&mut self, ctx: &Ctx) -> Result<u16, Error> {
        let b = self.take(2, "a u16", ctx)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// Reads a `u32`.
    pub fn u32(&mut self, ctx: &Ctx) -> Result<u32, Error> {
        let b = self.take(4, "a u32", ctx)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads an `i32`.
    pub fn i32(&mut self, ctx: &Ctx) -> Result<i32, Error> {
        Ok(self.u32(ctx)? as i32)
    }

    /// Reads an `f32`.
    pub fn f32(&mut self, ctx: &Ctx) -> Result<f32, Error> {
        let b = self.take(4, "an f32", ctx)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads three `f32`.
    pub fn vec3(&mut self, ctx: &Ctx) -> Result<[f32; 3], Error> {
        Ok([self.f32(ctx)?, self.f32(ctx)?, self.f32(ctx)?])
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
        let bytes = &rest[..n];
        self.pos += n + 1;
        Ok(match std::str::from_utf8(bytes) {
            Ok(s) => s.to_string(),
            Err(_) => bytes.iter().map(|&b| b as char).collect(),
        })
    }
}

/// A decoded 3DS/PRJ file: the editor data (`MDATA`) and the keyframer (`KFDATA`), values as
/// stored (`f32`, file units, 3D Studio's Z-up frame).
#[derive(Debug, Clone, Default)]
pub struct File3ds {
    /// Root chunk id: [`id::M3DMAGIC`] (.3ds) or [`id::CMAGIC`] (.prj).
    pub root: u16,
    /// `M3D_VERSION`, when present.
    pub version: Option<u32>,
    /// `MESH_VERSION`, when present.
    pub mesh_version: Option<u32>,
    /// `MASTER_SCALE`: scene units per 3D Studio unit, when present.
    pub master_scale: Option<f32>,
    /// `NAMED_OBJECT`s in file order.
    pub objects: Vec<NamedObject>,
    /// `MAT_ENTRY`s in file order.
    pub materials: Vec<MaterialEntry>,
    /// Ambient, background and fog chunks of `MDATA`, kept as raw chunks.
    pub environment: Vec<RawChunk>,
    /// The keyframer, when the file has a `KFDATA` chunk.
    pub keyframer: Option<Keyframer>,
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
pub struct NamedObject {
    /// The object name (keyframer nodes refer to it).
    pub name: String,
    /// Absolute offset of the chunk.
    pub offset: u64,
    /// `OBJ_HIDDEN` present.
    pub hidden: bool,
    /// The object's data.
    pub kind: ObjectKind,
}

/// What a named object holds.
#[derive(Debug, Clone)]
pub enum ObjectKind {
    /// `N_TRI_OBJECT`.
    Mesh(TriMesh),
    /// `N_DIRECT_LIGHT`.
    Light(LightChunk),
    /// `N_CAMERA`.
    Camera(CameraChunk),
    /// Anything else (no known sub-chunk).
    Other,
}

/// A triangle mesh (`N_TRI_OBJECT`), as stored.
#[derive(Debug, Clone, Default)]
pub struct TriMesh {
    /// `POINT_ARRAY`: vertex positions in world space at modelling time.
    pub points: Vec<[f32; 3]>,
    /// `POINT_FLAG_ARRAY`.
    pub point_flags: Vec<u16>,
    /// `FACE_ARRAY`: vertex indices a, b, c and the face flags word.
    pub faces: Vec<[u16; 4]>,
    /// `MSH_MAT_GROUP`s: material name and the faces using it.
    pub material_groups: Vec<(String, Vec<u16>)>,
    /// `SMOOTH_GROUP`: one bit set per face.
    pub smoothing: Vec<u32>,
    /// `TEX_VERTS`: one UV per vertex.
    pub tex_verts: Vec<[f32; 2]>,
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
pub struct Keyframer {
    /// `KFHDR`: revision, scene name, animation length in frames.
    pub header: Option<(u16, String, u32)>,
    /// `KFSEG`: first and last frame of the active segment.
    pub segment: Option<(u32, u32)>,
    /// `KFCURTIME`.
    pub current: Option<u32>,
    /// Node chunks (B001–B007) in file order.
    pub nodes: Vec<NodeChunk>,
}

/// A keyframer node (one of the node tags B001–B007).
#[derive(Debug, Clone, Default)]
pub struct NodeChunk {
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
    pub tracks: Vec<TrackChunk>,
}

/// A keyframer track (B020–B029), keys as stored (not sorted, not de-duplicated).
#[derive(Debug, Clone, Default)]
pub struct TrackChunk {
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
    pub keys: Vec<KeyChunk>,
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
pub fn decode(bytes: &[u8], ctx: &mut Ctx) -> Result<File3ds, Error> {
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
    let mut tops = split(bytes, 0, ctx);
    if tops.first().map(|c| (c.id, c.offset)) != Some((root, 0)) {
        let len = u32::from_le_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]);
        return Err(Error::Malformed {
            place: chunk_label(root).to_string(),
            offset: 0,
            message: format!("the root chunk declares length {len}, less than its 6-byte header"),
        });
    }
    let root_chunk = tops.remove(0);
    if !tops.is_empty() {
        ctx.warn(tops[0].offset, "bytes after the root chunk ignored");
    }
    let mut file = File3ds { root, ..File3ds::default() };
    ctx.within(chunk_label(root), |ctx| {
        for c in split(root_chunk.data, root_chunk.data_offset(), ctx) {
            match c.id {
                id::M3D_VERSION => {
                    file.version = Some(Cursor::new(&c).u32(ctx)?);
                }
                id::MDATA => ctx.within("MDATA".into(), |ctx| decode_mdata(&c, &mut file, ctx))?,
                id::KFDATA => {
                    let kf = ctx.within("KFDATA".into(), |ctx| decode_kfdata(&c, ctx))?;
                    file.keyframer = Some(kf);
                }
                _ => {}
            }
        }
        Ok(file)
    })
}

fn decode_mdata(chunk: &Chunk, file: &mut File3ds, ctx: &mut Ctx) -> Result<(), Error> {
    for c in split(chunk.data, chunk.data_offset(), ctx) {
        match c.id {
            id::MESH_VERSION => file.mesh_version = Some(Cursor::new(&c).u32(ctx)?),
            id::MASTER_SCALE => file.master_scale = Some(Cursor::new(&c).f32(ctx)?),
            id::NAMED_OBJECT => {
                let name = Cursor::new(&c).cstr(ctx)?;
                let label = format!("NAMED_OBJECT {name:?}");
                let o = ctx.within(label, |ctx| decode_named_object(&c, name, ctx))?;
                file.objects.push(o);
            }
            id::MAT_ENTRY => {
                let m = ctx.within("MAT_ENTRY".into(), |ctx| decode_material(&c, ctx))?;
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

fn decode_named_object(chunk: &Chunk, name: String, ctx: &mut Ctx) -> Result<NamedObject, Error> {
    let mut cur = Cursor::new(chunk);
    cur.cstr(ctx)?;
    let mut obj =
        NamedObject { name, offset: chunk.offset, hidden: false, kind: ObjectKind::Other };
    for c in split(cur.rest(), cur.offset(), ctx) {
        match c.id {
            id::OBJ_HIDDEN => obj.hidden = true,
            id::N_TRI_OBJECT => {
                obj.kind =
                    ObjectKind::Mesh(ctx.within("N_TRI_OBJECT".into(), |ctx| decode_mesh(&c, ctx))?)
            }
            id::N_DIRECT_LIGHT => {
                obj.kind = ObjectKind::Light(
                    ctx.within("N_DIRECT_LIGHT".into(), |ctx| decode_light(&c, ctx))?,
                )
            }
            id::N_CAMERA => {
                obj.kind =
                    ObjectKind::Camera(ctx.within("N_CAMERA".into(), |ctx| decode_camera(&c, ctx))?)
            }
            _ => {}
        }
    }
    Ok(obj)
}

fn decode_mesh(chunk: &Chunk, ctx: &mut Ctx) -> Result<TriMesh, Error> {
    let mut m = TriMesh::default();
    for c in split(chunk.data, chunk.data_offset(), ctx) {
        let label = chunk_label(c.id);
        ctx.within(label, |ctx| -> Result<(), Error> {
            let mut cur = Cursor::new(&c);
            match c.id {
                id::POINT_ARRAY => {
                    let at = cur.offset();
                    let n = cur.u16(ctx)?;
                    let n = ctx.check_count(at, "points", n.into(), 12, cur.left())?;
                    m.points.clear();
                    for _ in 0..n {
                        m.points.push(cur.vec3(ctx)?);
                    }
                }
                id::POINT_FLAG_ARRAY => {
                    let at = cur.offset();
                    let n = cur.u16(ctx)?;
                    let n = ctx.check_count(at, "point flags", n.into(), 2, cur.left())?;
                    m.point_flags.clear();
                    for _ in 0..n {
                        m.point_flags.push(cur.u16(ctx)?);
                    }
                }
                id::FACE_ARRAY => {
                    let at = cur.offset();
                    let n = cur.u16(ctx)?;
                    let n = ctx.check_count(at, "faces", n.into(), 8, cur.left())?;
                    m.faces.clear();
                    for _ in 0..n {
                        m.faces.push([cur.u16(ctx)?, cur.u16(ctx)?, cur.u16(ctx)?, cur.u16(ctx)?]);
                    }
                    for s in split(cur.rest(), cur.offset(), ctx) {
                        let label = chunk_label(s.id);
                        ctx.within(label, |ctx| decode_face_sub(&s, n, &mut m, ctx))?;
                    }
                }
                id::TEX_VERTS => {
                    let at = cur.offset();
                    let n = cur.u16(ctx)?;
                    let n = ctx.check_count(at, "texture vertices", n.into(), 8, cur.left())?;
                    m.tex_verts.clear();
                    for _ in 0..n {
                        m.tex_verts.push([cur.f32(ctx)?, cur.f32(ctx)?]);
                    }
                }
                id::MESH_MATRIX => {
                    m.matrix =
                        Some([cur.vec3(ctx)?, cur.vec3(ctx)?, cur.vec3(ctx)?, cur.vec3(ctx)?]);
                }
                id::MESH_COLOR => m.color = Some(cur.u8(ctx)?),
                id::MESH_TEXTURE_INFO => m.texture_info = Some(c.data.to_vec()),
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(m)
}

fn decode_face_sub(c: &Chunk, faces: usize, m: &mut TriMesh, ctx: &mut Ctx) -> Result<(), Error> {
    let mut cur = Cursor::new(c);
    match c.id {
        id::MSH_MAT_GROUP => {
            let name = cur.cstr(ctx)?;
            let at = cur.offset();
            let n = cur.u16(ctx)?;
            let n = ctx.check_count(at, "face indices", n.into(), 2, cur.left())?;
            let mut list = Vec::new();
            for _ in 0..n {
                list.push(cur.u16(ctx)?);
            }
            m.material_groups.push((name, list));
        }
        id::SMOOTH_GROUP => {
            // One u32 per face of the FACE_ARRAY (lib3ds reads exactly that many).
            let n =
                ctx.check_count(c.data_offset(), "smoothing groups", faces as u64, 4, cur.left())?;
            m.smoothing.clear();
            for _ in 0..n {
                m.smoothing.push(cur.u32(ctx)?);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Reads a colour sub-chunk list, preferring the linear variants as lib3ds does.
fn decode_color(chunk: &Chunk, ctx: &mut Ctx) -> Result<Option<[f32; 3]>, Error> {
    let mut plain = None;
    let mut linear = None;
    for c in split(chunk.data, chunk.data_offset(), ctx) {
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
    for c in split(chunk.data, chunk.data_offset(), ctx) {
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
    for c in split(cur.rest(), cur.offset(), ctx) {
        let label = chunk_label(c.id);
        ctx.within(label, |ctx| -> Result<(), Error> {
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
                    for sc in split(cur.rest(), cur.offset(), ctx) {
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
    for c in split(cur.rest(), cur.offset(), ctx) {
        if c.id == id::CAM_RANGES {
            let mut cur = Cursor::new(&c);
            cam.ranges = Some((cur.f32(ctx)?, cur.f32(ctx)?));
        }
    }
    Ok(cam)
}

fn decode_material(chunk: &Chunk, ctx: &mut Ctx) -> Result<MaterialEntry, Error> {
    let mut m = MaterialEntry { offset: chunk.offset, ..MaterialEntry::default() };
    for c in split(chunk.data, chunk.data_offset(), ctx) {
        let label = chunk_label(c.id);
        ctx.within(label, |ctx| -> Result<(), Error> {
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
    for c in split(chunk.data, chunk.data_offset(), ctx) {
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

fn decode_kfdata(chunk: &Chunk, ctx: &mut Ctx) -> Result<Keyframer, Error> {
    let mut kf = Keyframer::default();
    for c in split(chunk.data, chunk.data_offset(), ctx) {
        let label = chunk_label(c.id);
        match c.id {
            id::KFHDR => ctx.within(label, |ctx| -> Result<(), Error> {
                let mut cur = Cursor::new(&c);
                kf.header = Some((cur.u16(ctx)?, cur.cstr(ctx)?, cur.u32(ctx)?));
                Ok(())
            })?,
            id::KFSEG => ctx.within(label, |ctx| -> Result<(), Error> {
                let mut cur = Cursor::new(&c);
                kf.segment = Some((cur.u32(ctx)?, cur.u32(ctx)?));
                Ok(())
            })?,
            id::KFCURTIME => {
                kf.current = Some(ctx.within(label, |ctx| Cursor::new(&c).u32(ctx))?);
            }
            id::AMBIENT_NODE_TAG..=id::SPOTLIGHT_NODE_TAG => {
                let label = format!("{label} #{}", kf.nodes.len());
                kf.nodes.push(ctx.within(label, |ctx| decode_node(&c, ctx))?);
            }
            _ => {}
        }
    }
    Ok(kf)
}

fn decode_node(chunk: &Chunk, ctx: &mut Ctx) -> Result<NodeChunk, Error> {
    let mut n =
        NodeChunk { tag: chunk.id, offset: chunk.offset, parent: 0xFFFF, ..NodeChunk::default() };
    for c in split(chunk.data, chunk.data_offset(), ctx) {
        let label = chunk_label(c.id);
        ctx.within(label, |ctx| -> Result<(), Error> {
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
pub fn decode_track(chunk: &Chunk, ctx: &mut Ctx) -> Result<TrackChunk, Error> {
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
    let mut keys = Vec::new();
    for _ in 0..count {
        let frame = cur.i32(ctx)?;
        let kflags = cur.u16(ctx)?;
        let mut tcb = [0.0f32; 5];
        for (bit, slot) in tcb.iter_mut().enumerate() {
            if kflags & (1 << bit) != 0 {
                *slot = cur.f32(ctx)?;
            }
        }
        let value = match chunk.id {
            id::POS_TRACK_TAG | id::SCL_TRACK_TAG | id::COL_TRACK_TAG => {
                KeyValue::Vector(cur.vec3(ctx)?)
            }
            id::ROT_TRACK_TAG => {
                let angle = cur.f32(ctx)?;
                KeyValue::AxisAngle(angle, cur.vec3(ctx)?)
            }
            id::MORPH_TRACK_TAG => KeyValue::Name(cur.cstr(ctx)?),
            id::HIDE_TRACK_TAG => KeyValue::None,
            _ => KeyValue::Scalar(cur.f32(ctx)?),
        };
        keys.push(KeyChunk { frame, flags: kflags, tcb, value });
    }
    Ok(TrackChunk { tag: chunk.id, offset: chunk.offset, flags, unknown, keys })
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
        assert_eq!(t.keys.len(), 1);
        assert_eq!(t.keys[0].frame, 5);
        assert_eq!(t.keys[0].tcb, [0.5, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(t.keys[0].value, KeyValue::Vector([1.0, 2.0, 3.0]));
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
