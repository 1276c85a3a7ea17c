//! Geometry cache files that FBX `Cache` objects name: Maya caches (an `.xml` description
//! with `.mc`/`.mcx` data, IFF `FOR4`/`FOR8` chunks) and 3ds Max point caches (`.pc2`).
//!
//! Bytes → channels of timed frames; nothing here knows the scene model. The rules are ufbx's
//! (`ufbxi_cache_load_xml_imp`, `ufbxi_cache_load_mc`, `ufbxi_cache_load_pc2`,
//! `ufbxi_cache_load_frame_files`), written anew:
//!
//! - **`.xml`** (`Autodesk_Cache_File`): `cacheType Type` is `OneFile` (data in
//!   `<name>.mc`/`<name>.mcx` beside the `.xml`, by `Format` `mcc`/`mcx`) or `OneFilePerFrame`
//!   (`<name>Frame<F>.mcx`, `<name>Frame<F>Tick<T>.mcx` for ticks between frames);
//!   `cacheTimePerFrame TimePerFrame` (ticks per frame, default 250); each child of `Channels`
//!   names a channel (`ChannelName`, `ChannelInterpretation`, and `SamplingRate`, `StartTime`,
//!   `EndTime` in ticks, which say which per-frame files exist).
//! - **`.mc`/`.mcx`**: big-endian IFF. `FOR4` groups have 4-byte sizes, `FOR8` groups a 4-byte
//!   pad after the tag, 8-byte sizes and 8-byte alignment (a 4-byte value is followed by 4
//!   pad bytes). Group types `CACH`/`MYCH` open no chunk. `STIM` (start, ticks) and `TIME`
//!   set the time of the data that follows, `CHNM` names its channel, `SIZE` its element
//!   count; `FVCA`/`DVCA` hold `f32`/`f64` vectors, `FBCA`/`DBCA`/`DBLA` scalars (read three
//!   to a vector). A frame's time is `ticks / 6000` seconds. Leaf chunks end at their declared
//!   size (padded to the alignment); an unknown tag is an error, as in ufbx.
//! - **`.pc2`**: `POINTCACHE2\0`, version, point count, start frame (`f32`), frames per
//!   sample (`f32`), sample count, then little-endian `f32` vectors; sample `i` is at
//!   `(start + i · step) / fps` seconds with `fps` the FBX scene's frame rate (ufbx passes
//!   `frames_per_second`). Its one channel is unnamed and holds positions.
//!
//! Channels are sorted by name and their frames by time, as ufbx sorts them. Every count is
//! checked against the bytes left and [`Limits`] before anything is allocated.

use std::fmt;
use std::path::{Path, PathBuf};

use glam::DVec3;

use crate::limits::Limits;

/// What a cache channel holds (ufbx `ufbx_cache_interpretation`, from the `.xml`'s
/// `ChannelInterpretation`: `points`/`positions` → positions, `normals` → normals,
/// case-insensitive; `.pc2` channels are positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpretation {
    /// Vertex positions in the mesh's frame.
    Positions,
    /// Vertex normals.
    Normals,
    /// Anything else (kept, never applied).
    Unknown,
}

/// One cached sample of a channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Time in seconds.
    pub time: f64,
    /// The values, one vector per point, in the file's order.
    pub values: Vec<DVec3>,
}

/// A named channel of a cache: its frames sorted by time.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// `CHNM` name (`.mc`), empty for `.pc2`.
    pub name: String,
    /// What the values are.
    pub interpretation: Interpretation,
    /// Frames by increasing time.
    pub frames: Vec<Frame>,
}

/// A cache file loaded with every file it refers to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cache {
    /// Channels sorted by name.
    pub channels: Vec<Channel>,
    /// Problems survived (a data file the `.xml` names that does not exist).
    pub warnings: Vec<String>,
}

/// Why a cache file could not be read: which file, where in it, what.
///
/// Displays as `geometry cache a_fpc/a.mcx at byte 0x40: …`.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheError {
    /// The file.
    pub file: PathBuf,
    /// Byte offset of the problem (0 when the file could not be opened).
    pub offset: u64,
    /// What went wrong.
    pub kind: CacheErrorKind,
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "geometry cache {} at byte {:#x}: {}",
            self.file.display(),
            self.offset,
            self.kind
        )
    }
}

impl std::error::Error for CacheError {}

/// The kinds of [`CacheError`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CacheErrorKind {
    /// The file does not exist or cannot be read.
    #[error("cannot be read: {0}")]
    Io(String),
    /// A field runs past the end of the file.
    #[error("needs {needed} bytes but {left} are left")]
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left.
        left: u64,
    },
    /// An `.mc`/`.mcx` chunk tag this reader does not know.
    #[error("unknown chunk tag {0:?}")]
    UnknownTag(String),
    /// A data chunk declares more elements than its size holds.
    #[error("chunk holds {size} bytes, too few for {count} elements of {element} bytes")]
    ChunkTooSmall {
        /// Declared chunk size.
        size: u64,
        /// `SIZE` count.
        count: u64,
        /// Bytes per element.
        element: u64,
    },
    /// A count or size exceeds [`Limits`].
    #[error("{what}: {requested} exceeds the limit {limit}")]
    Limit {
        /// What was counted.
        what: &'static str,
        /// The amount asked for.
        requested: u64,
        /// The limit.
        limit: u64,
    },
    /// The `.xml` description is not text.
    #[error("the cache description is not UTF-8 text")]
    NotText,
}

/// Loads the cache file `path` (`.xml` with its data files, `.mc`/`.mcx`, or `.pc2`, told
/// apart by content as ufbx does) with `fps` the scene's frame rate (for `.pc2`).
pub fn load(path: &Path, fps: f64, limits: &Limits) -> Result<Cache, CacheError> {
    let bytes = read_file(path, limits)?;
    let mut cache = Cache::default();
    let mut frames: Vec<(String, Frame)> = Vec::new();
    if bytes.starts_with(b"POINTCACHE2") {
        frames.extend(read_pc2(&bytes, fps, limits).map_err(|(offset, kind)| CacheError {
            file: path.into(),
            offset,
            kind,
        })?);
        return Ok(finish(cache, frames, &[]));
    }
    if bytes.starts_with(b"FOR4") || bytes.starts_with(b"FOR8") {
        frames.extend(read_mc_at(path, &bytes, limits)?);
        return Ok(finish(cache, frames, &[]));
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| CacheError {
        file: path.into(),
        offset: e.valid_up_to() as u64,
        kind: CacheErrorKind::NotText,
    })?;
    let desc = Description::parse(text);
    let ext = match desc.format.as_str() {
        "mcc" => "mc",
        "mcx" => "mcx",
        _ => return Ok(finish(cache, frames, &desc.channels)),
    };
    let stem = path.with_extension("");
    let stem = stem.to_string_lossy();
    match desc.kind.as_str() {
        "OneFile" => {
            let data = PathBuf::from(format!("{stem}.{ext}"));
            if data.is_file() {
                frames.extend(read_mc_file(&data, limits)?);
            } else {
                cache.warnings.push(format!("data file {} not found", data.display()));
            }
        }
        "OneFilePerFrame" => {
            let mut total = 0u64;
            for tick in desc.frame_ticks() {
                let (f, t) = (tick / desc.ticks_per_frame, tick % desc.ticks_per_frame);
                let name = if t == 0 {
                    format!("{stem}Frame{f}.{ext}")
                } else {
                    format!("{stem}Frame{f}Tick{t}.{ext}")
                };
                let data = PathBuf::from(name);
                if !data.is_file() {
                    continue;
                }
                let more = read_mc_file(&data, limits)?;
                total += more.iter().map(|(_, f)| f.values.len() as u64).sum::<u64>();
                if total > limits.max_elements {
                    return Err(CacheError {
                        file: data,
                        offset: 0,
                        kind: CacheErrorKind::Limit {
                            what: "cached points",
                            requested: total,
                            limit: limits.max_elements,
                        },
                    });
                }
                frames.extend(more);
            }
            if frames.is_empty() {
                cache.warnings.push(format!("no data file {stem}Frame….{ext} found"));
            }
        }
        _ => {}
    }
    Ok(finish(cache, frames, &desc.channels))
}

fn read_file(path: &Path, limits: &Limits) -> Result<Vec<u8>, CacheError> {
    let err = |e: std::io::Error| CacheError {
        file: path.into(),
        offset: 0,
        kind: CacheErrorKind::Io(e.to_string()),
    };
    let len = std::fs::metadata(path).map_err(err)?.len();
    if len > limits.max_bytes {
        return Err(CacheError {
            file: path.into(),
            offset: 0,
            kind: CacheErrorKind::Limit {
                what: "file bytes",
                requested: len,
                limit: limits.max_bytes,
            },
        });
    }
    std::fs::read(path).map_err(err)
}

fn read_mc_file(path: &Path, limits: &Limits) -> Result<Vec<(String, Frame)>, CacheError> {
    let bytes = read_file(path, limits)?;
    read_mc_at(path, &bytes, limits)
}

fn read_mc_at(
    path: &Path,
    bytes: &[u8],
    limits: &Limits,
) -> Result<Vec<(String, Frame)>, CacheError> {
    read_mc(bytes, limits).map_err(|(offset, kind)| CacheError { file: path.into(), offset, kind })
}

/// Groups frames into channels sorted by name (frames by time, stable), with each channel's
/// interpretation from the description (`.pc2` and `.mc` files without one: by file type).
fn finish(mut cache: Cache, mut frames: Vec<(String, Frame)>, desc: &[(String, String)]) -> Cache {
    frames.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.time.total_cmp(&b.1.time)));
    for (name, frame) in frames {
        match cache.channels.last_mut() {
            Some(c) if c.name == name => c.frames.push(frame),
            _ => {
                let interpretation = match desc.iter().find(|(n, _)| *n == name) {
                    Some((_, i)) => interpretation(i),
                    // `.pc2` (unnamed channel): positions, as ufbx.
                    None if name.is_empty() => Interpretation::Positions,
                    None => Interpretation::Unknown,
                };
                cache.channels.push(Channel { name, interpretation, frames: vec![frame] });
            }
        }
    }
    cache
}

fn interpretation(name: &str) -> Interpretation {
    match name.to_ascii_lowercase().as_str() {
        "point" | "points" | "position" | "positions" => Interpretation::Positions,
        "normal" | "normals" => Interpretation::Normals,
        _ => Interpretation::Unknown,
    }
}

/// A byte reader over a cache file that reports where it stopped.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type ReadError = (u64, CacheErrorKind);

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], ReadError> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err((self.pos as u64, CacheErrorKind::Truncated { needed: n, left }));
        }
        let s = &self.bytes[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    fn u32_be(&mut self) -> Result<u32, ReadError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn left(&self) -> u64 {
        (self.bytes.len() - self.pos) as u64
    }
}

/// Reads a Maya `.mc`/`.mcx` file's frames: `(channel name, frame)` in file order. Errors carry
/// the byte offset.
pub fn read_mc(bytes: &[u8], limits: &Limits) -> Result<Vec<(String, Frame)>, ReadError> {
    let mut r = Reader { bytes, pos: 0 };
    let mut for8 = bytes.starts_with(b"FOR8");
    let (mut time, mut count, mut channel) = (0u32, 0u64, String::new());
    let mut out = Vec::new();
    let mut total = 0u64;
    while r.left() >= 4 {
        let at = r.pos as u64;
        let tag: [u8; 4] = r.take(4)?.try_into().expect("4 bytes");
        if tag == [0; 4] {
            break;
        }
        if &tag == b"CACH" || &tag == b"MYCH" {
            continue;
        }
        if &tag == b"FOR8" {
            for8 = true;
        }
        if for8 {
            r.take(4)?;
        }
        let size = if for8 {
            let b = r.take(8)?;
            u64::from_be_bytes(b.try_into().expect("8 bytes"))
        } else {
            u64::from(r.u32_be()?)
        };
        let align = if for8 { 8 } else { 4 };
        let begin = r.pos as u64;
        let padded = size.checked_add(align - 1).map(|s| s & !(align - 1)).unwrap_or(u64::MAX);
        // A 4-byte value (FOR8: followed by its pad).
        let value = |r: &mut Reader<'_>| -> Result<u32, ReadError> {
            let v = r.u32_be()?;
            Ok(v)
        };
        let (elem, double, vector) = match &tag {
            b"FOR4" => {
                for8 = false;
                continue;
            }
            b"FOR8" => continue,
            b"VRSN" | b"ETIM" => (0, false, false),
            b"STIM" | b"TIME" => {
                time = value(&mut r)?;
                (0, false, false)
            }
            b"SIZE" => {
                count = u64::from(value(&mut r)?);
                (0, false, false)
            }
            b"CHNM" => {
                let raw = r.take(size.min(r.left()))?;
                let name = raw.split(|&b| b == 0).next().unwrap_or(&[]);
                channel = String::from_utf8_lossy(name).into_owned();
                r.pos = begin as usize;
                (0, false, false)
            }
            b"FVCA" => (12, false, true),
            b"DVCA" => (24, true, true),
            b"FBCA" => (4, false, false),
            b"DBCA" | b"DBLA" => (8, true, false),
            _ => {
                return Err((at, CacheErrorKind::UnknownTag(String::from_utf8_lossy(&tag).into())))
            }
        };
        if elem > 0 {
            let need = count.saturating_mul(elem);
            if size < need {
                return Err((at, CacheErrorKind::ChunkTooSmall { size, count, element: elem }));
            }
            let reals = if vector { count * 3 } else { count };
            total += reals / 3;
            if total > limits.max_elements {
                return Err((
                    at,
                    CacheErrorKind::Limit {
                        what: "cached points",
                        requested: total,
                        limit: limits.max_elements,
                    },
                ));
            }
            let data = r.take(need)?;
            let real = |i: usize| {
                if double {
                    f64::from_be_bytes(data[8 * i..8 * i + 8].try_into().expect("8 bytes"))
                } else {
                    f64::from(f32::from_be_bytes(data[4 * i..4 * i + 4].try_into().expect("4")))
                }
            };
            let values = (0..reals as usize / 3)
                .map(|k| DVec3::new(real(3 * k), real(3 * k + 1), real(3 * k + 2)))
                .collect();
            out.push((channel.clone(), Frame { time: f64::from(time) / 6000.0, values }));
        }
        // Leaf chunks end at their declared size, padded.
        let end = begin.saturating_add(padded);
        if end > bytes.len() as u64 {
            return Err((
                begin,
                CacheErrorKind::Truncated { needed: padded, left: bytes.len() as u64 - begin },
            ));
        }
        r.pos = end as usize;
    }
    Ok(out)
}

/// Reads a 3ds Max `.pc2` point cache's samples as `("", frame)`, times in seconds at `fps`.
pub fn read_pc2(
    bytes: &[u8],
    fps: f64,
    limits: &Limits,
) -> Result<Vec<(String, Frame)>, ReadError> {
    let mut r = Reader { bytes, pos: 0 };
    let h = r.take(32)?;
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
    let f32_at = |o: usize| f32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
    let points = u64::from(u32_at(16));
    let start = f64::from(f32_at(20));
    let step = f64::from(f32_at(24));
    let samples = u64::from(u32_at(28));
    let total = points.saturating_mul(samples);
    if total > limits.max_elements {
        return Err((
            16,
            CacheErrorKind::Limit {
                what: "cached points",
                requested: total,
                limit: limits.max_elements,
            },
        ));
    }
    let need = total * 12;
    if need > r.left() {
        return Err((32, CacheErrorKind::Truncated { needed: need, left: r.left() }));
    }
    let fps = if fps > 0.0 && fps.is_finite() { fps } else { 30.0 };
    let mut out = Vec::new();
    for i in 0..samples {
        let data = r.take(points * 12)?;
        let f =
            |k: usize| f64::from(f32::from_le_bytes(data[4 * k..4 * k + 4].try_into().expect("4")));
        let values = (0..points as usize)
            .map(|p| DVec3::new(f(3 * p), f(3 * p + 1), f(3 * p + 2)))
            .collect();
        out.push((String::new(), Frame { time: (start + i as f64 * step) / fps, values }));
    }
    Ok(out)
}

/// What an `.xml` cache description says.
#[derive(Debug, Clone, Default, PartialEq)]
struct Description {
    /// `cacheType Type`.
    kind: String,
    /// `cacheType Format`.
    format: String,
    /// `cacheTimePerFrame TimePerFrame`, 250 when absent or 0.
    ticks_per_frame: u32,
    /// (name, interpretation) per channel.
    channels: Vec<(String, String)>,
    /// (sampling rate, start, end) in ticks per channel that states all three.
    sampling: Vec<(u32, u32, u32)>,
}

impl Description {
    /// Scans the tags of `text` (the description is flat: no entity or CDATA the fields need).
    fn parse(text: &str) -> Description {
        let mut d = Description { ticks_per_frame: 250, ..Description::default() };
        let mut in_channels = false;
        let mut rest = text;
        while let Some(open) = rest.find('<') {
            rest = &rest[open + 1..];
            let Some(close) = rest.find('>') else { break };
            let tag = &rest[..close];
            rest = &rest[close + 1..];
            if tag.starts_with('?') || tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                if name.trim() == "Channels" {
                    in_channels = false;
                }
                continue;
            }
            let (name, attrs) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
            let name = name.trim_end_matches('/');
            let attr = |key: &str| attribute(attrs, key);
            match name {
                "Channels" => in_channels = !tag.ends_with('/'),
                _ if in_channels => {
                    let (Some(n), Some(_), Some(i)) =
                        (attr("ChannelName"), attr("ChannelType"), attr("ChannelInterpretation"))
                    else {
                        continue;
                    };
                    d.channels.push((n.clone(), i));
                    let num = |k: &str| attr(k).and_then(|v| v.trim().parse::<u32>().ok());
                    if let (Some(rate), Some(s), Some(e)) =
                        (num("SamplingRate"), num("StartTime"), num("EndTime"))
                    {
                        d.sampling.push((rate, s, e));
                    }
                }
                "cacheType" => {
                    d.kind = attr("Type").unwrap_or_default();
                    d.format = attr("Format").unwrap_or_default();
                }
                "cacheTimePerFrame" => {
                    if let Some(v) = attr("TimePerFrame").and_then(|v| v.trim().parse::<u32>().ok())
                    {
                        if v > 0 {
                            d.ticks_per_frame = v;
                        }
                    }
                }
                _ => {}
            }
        }
        d
    }

    /// The ticks at which some channel has a sample (`OneFilePerFrame`), ascending and
    /// distinct, at most one per tick of the union of the channels' ranges; bounded by 2^20
    /// samples (more per-frame files than any cache has).
    fn frame_ticks(&self) -> Vec<u32> {
        let mut ticks = Vec::new();
        for &(rate, start, end) in &self.sampling {
            let rate = if rate == 0 { self.ticks_per_frame } else { rate };
            let mut t = start;
            while t <= end && ticks.len() < 1 << 20 {
                ticks.push(t);
                match t.checked_add(rate) {
                    Some(n) => t = n,
                    None => break,
                }
            }
        }
        ticks.sort_unstable();
        ticks.dedup();
        ticks
    }
}

/// The value of attribute `key` in a tag's attribute text (`key="value"` or `key='value'`).
fn attribute(attrs: &str, key: &str) -> Option<String> {
    let mut rest = attrs;
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].trim();
        let after = rest[eq + 1..].trim_start();
        let quote = after.chars().next()?;
        if quote != '"' && quote != '\'' {
            return None;
        }
        let end = after[1..].find(quote)?;
        let value = &after[1..1 + end];
        if name == key {
            return Some(value.to_string());
        }
        rest = &after[end + 2..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk4(tag: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut v = tag.to_vec();
        v.extend((data.len() as u32).to_be_bytes());
        v.extend(data);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn chunk8(tag: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut v = tag.to_vec();
        v.extend([0; 4]);
        v.extend((data.len() as u64).to_be_bytes());
        v.extend(data);
        while v.len() % 8 != 0 {
            v.push(0);
        }
        v
    }

    fn group4(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut v = b"FOR4".to_vec();
        v.extend((body.len() as u32 + 4).to_be_bytes());
        v.extend(kind);
        v.extend(body);
        v
    }

    /// A FOR4 `.mc`: header, then one MYCH group per time with `channel` vectors.
    fn mc4(frames: &[(u32, &[[f32; 3]])]) -> Vec<u8> {
        let mut header = chunk4(b"VRSN", b"0.1\0");
        header.extend(chunk4(b"STIM", &frames[0].0.to_be_bytes()));
        header.extend(chunk4(b"ETIM", &frames[frames.len() - 1].0.to_be_bytes()));
        let mut file = group4(b"CACH", &header);
        for (t, v) in frames {
            let mut body = chunk4(b"TIME", &t.to_be_bytes());
            body.extend(chunk4(b"CHNM", b"shape\0"));
            body.extend(chunk4(b"SIZE", &(v.len() as u32).to_be_bytes()));
            let data: Vec<u8> = v.iter().flatten().flat_map(|x| x.to_be_bytes()).collect();
            body.extend(chunk4(b"FVCA", &data));
            file.extend(group4(b"MYCH", &body));
        }
        file
    }

    #[test]
    fn mc_for4_frames_carry_their_time_in_ticks_of_1_6000_s() {
        let file = mc4(&[(250, &[[1.0, 2.0, 3.0]]), (500, &[[4.0, 5.0, 6.0]])]);
        let frames = read_mc(&file, &Limits::default()).unwrap();
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].0, "shape");
        assert_eq!(frames[0].1.time, 250.0 / 6000.0);
        assert_eq!(frames[1].1.values, vec![DVec3::new(4.0, 5.0, 6.0)]);
    }

    #[test]
    fn mc_for8_values_are_padded_to_eight_bytes() {
        let mut body = chunk8(b"TIME", &[0, 0, 0x17, 0x70, 0, 0, 0, 0]);
        body.extend(chunk8(b"CHNM", b"c\0"));
        body.extend(chunk8(b"SIZE", &[0, 0, 0, 1, 0, 0, 0, 0]));
        let data: Vec<u8> = [1.5f64, -2.0, 8.0].iter().flat_map(|x| x.to_be_bytes()).collect();
        body.extend(chunk8(b"DVCA", &data));
        let mut file = b"FOR8\0\0\0\0".to_vec();
        file.extend((body.len() as u64 + 4).to_be_bytes());
        file.extend(b"MYCH");
        file.extend(body);
        let frames = read_mc(&file, &Limits::default()).unwrap();
        assert_eq!(
            frames,
            vec![("c".into(), Frame { time: 1.0, values: vec![DVec3::new(1.5, -2.0, 8.0)] })]
        );
    }

    #[test]
    fn mc_data_larger_than_its_chunk_is_an_error_with_the_offset() {
        let mut file = mc4(&[(0, &[[1.0, 2.0, 3.0]])]);
        // SIZE says 1; make it claim 1000 elements.
        let at = file.windows(4).position(|w| w == b"SIZE").unwrap();
        file[at + 8..at + 12].copy_from_slice(&1000u32.to_be_bytes());
        let err = read_mc(&file, &Limits::default()).unwrap_err();
        assert!(matches!(err.1, CacheErrorKind::ChunkTooSmall { count: 1000, .. }), "{err:?}");
        assert!(err.0 > at as u64);
    }

    #[test]
    fn mc_cut_short_and_unknown_tags_are_errors_not_panics() {
        let file = mc4(&[(0, &[[1.0, 2.0, 3.0]]), (250, &[[1.0, 2.0, 3.0]])]);
        for cut in 0..file.len() {
            let _ = read_mc(&file[..cut], &Limits::default());
        }
        let mut bad = file.clone();
        let at = bad.windows(4).position(|w| w == b"TIME").unwrap();
        bad[at..at + 4].copy_from_slice(b"WHAT");
        assert!(matches!(
            read_mc(&bad, &Limits::default()).unwrap_err().1,
            CacheErrorKind::UnknownTag(_)
        ));
    }

    fn pc2(points: u32, start: f32, step: f32, samples: &[Vec<[f32; 3]>]) -> Vec<u8> {
        let mut v = b"POINTCACHE2\0".to_vec();
        v.extend(1u32.to_le_bytes());
        v.extend(points.to_le_bytes());
        v.extend(start.to_le_bytes());
        v.extend(step.to_le_bytes());
        v.extend((samples.len() as u32).to_le_bytes());
        for s in samples {
            v.extend(s.iter().flatten().flat_map(|x| x.to_le_bytes()));
        }
        v
    }

    #[test]
    fn pc2_samples_are_timed_by_start_step_and_the_scene_rate() {
        let file = pc2(1, 10.0, 2.0, &[vec![[0.0, 0.0, 0.0]], vec![[1.0, 1.0, 1.0]]]);
        let frames = read_pc2(&file, 30.0, &Limits::default()).unwrap();
        assert_eq!(frames[0].1.time, 10.0 / 30.0);
        assert_eq!(frames[1].1.time, 12.0 / 30.0);
        assert_eq!(frames[1].1.values, vec![DVec3::ONE]);
    }

    #[test]
    fn pc2_counts_past_the_file_are_refused_before_allocating() {
        let mut file = pc2(1, 0.0, 1.0, &[vec![[0.0, 0.0, 0.0]]]);
        file[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
        file[16..20].copy_from_slice(&1000u32.to_le_bytes());
        let limits = Limits { max_elements: u64::MAX, ..Limits::default() };
        let err = read_pc2(&file, 30.0, &limits).unwrap_err();
        assert!(matches!(err.1, CacheErrorKind::Truncated { .. }), "{err:?}");
        let err = read_pc2(&file, 30.0, &Limits::default()).unwrap_err();
        assert!(matches!(err.1, CacheErrorKind::Limit { .. }), "{err:?}");
    }

    #[test]
    fn xml_description_names_type_format_rate_and_channels() {
        let d = Description::parse(
            r#"<?xml version="1.0"?>
<Autodesk_Cache_File>
  <cacheType Type="OneFilePerFrame" Format="mcx"/>
  <cacheTimePerFrame TimePerFrame="250"/>
  <Channels>
    <channel0 ChannelName="aShape" ChannelType="FloatVectorArray" ChannelInterpretation="positions" SamplingType="Regular" SamplingRate="125" StartTime="250" EndTime="500"/>
  </Channels>
</Autodesk_Cache_File>"#,
        );
        assert_eq!(
            (d.kind.as_str(), d.format.as_str(), d.ticks_per_frame),
            ("OneFilePerFrame", "mcx", 250)
        );
        assert_eq!(d.channels, vec![("aShape".to_string(), "positions".to_string())]);
        assert_eq!(d.frame_ticks(), vec![250, 375, 500]);
    }

    #[test]
    fn one_file_per_frame_caches_read_every_frame_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("c.xml"),
            r#"<Autodesk_Cache_File><cacheType Type="OneFilePerFrame" Format="mcc"/><Channels><channel0 ChannelName="shape" ChannelType="FloatVectorArray" ChannelInterpretation="positions" SamplingRate="250" StartTime="250" EndTime="625"/></Channels></Autodesk_Cache_File>"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("cFrame1.mc"), mc4(&[(250, &[[1.0, 0.0, 0.0]])])).unwrap();
        std::fs::write(dir.path().join("cFrame2.mc"), mc4(&[(500, &[[2.0, 0.0, 0.0]])])).unwrap();
        let cache = load(&dir.path().join("c.xml"), 24.0, &Limits::default()).unwrap();
        assert_eq!(cache.channels.len(), 1);
        assert_eq!(cache.channels[0].interpretation, Interpretation::Positions);
        let times: Vec<f64> = cache.channels[0].frames.iter().map(|f| f.time).collect();
        assert_eq!(times, vec![250.0 / 6000.0, 500.0 / 6000.0]);
    }
}
