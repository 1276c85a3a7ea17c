//! Binary FBX: header, node records, property decoding (bytes → [`Document`]).
//!
//! Layout (seed 003, "Binary files"; all numbers little-endian unless header byte 22 is 1):
//!
//! ```text
//! 0   21 bytes  "Kaydara FBX Binary  \0"
//! 21  2 bytes   0x1A, endianness (0 little, 1 big)
//! 23  u32       version (7400 = 7.4)
//! 27  records…  then a null record, then a footer this parser does not read
//!
//! record: end offset, property count, property bytes  (u32 each; u64 from version 7500)
//!         u8 name length, name, properties, child records, null record if it has children
//! ```
//!
//! A null record is a record header of all zeros (13 bytes, 25 from 7500). Every end offset
//! is absolute and is checked: it must lie after the record's properties and inside its
//! parent. An end offset of 0 on a record that is not a null record (the corpus file
//! `maya_zero_end_7400_binary.fbx`, written that way by a Maya plug-in) is taken to mean "no
//! children": the record ends after its properties, and a [`Warning::ZeroEndOffset`] is
//! recorded. ufbx reads that file the same way.
//!
//! Arrays (`b i l f d`, and `c` for bytes, which the seed does not list but assimp's corpus
//! files use) are `u32 count, u32 encoding, u32 stored bytes` then the data:
//! encoding 0 stores `count × size` bytes, encoding 1 a zlib stream (RFC 1950) that inflates
//! to exactly `count × size` bytes. Both are borrowed as they are: the parser inflates
//! nothing. Before an array is accepted, its declared size is checked against [`Limits`] and,
//! for zlib, against 1032× the stored bytes (deflate cannot expand further: 258-byte matches
//! in ≥ 2-bit codes), so a small file cannot make a read ask for a large buffer.
//!
//! A zlib array is inflated when it is read ([`Array`]): by libdeflate (`libdeflater`), one
//! decompressor per thread, straight into the vector the read returns when it asks for the
//! stored type (measured against flate2 with the zlib-rs backend on the corpus's binary
//! benchmark files, when the parser inflated every array: 692 vs 452 MB/s for the whole
//! parse). A stream that would inflate past the declared size is an error of that read, as
//! is one that stops short or is corrupt; [`super::read`] checks the arrays no read inflated
//! ([`Document::check_arrays`]), so that a corrupt array still fails the load.
//!
//! Before stop 29 (issue 16 goal 8) the parser inflated every zlib array into the tree, which
//! then held them all beside the scene being built: 162 MB of the 358 MB heap peak of
//! loading `mesh_heavy_7400_binary.fbx` (54 MB). Now only the array being read is inflated.

use std::borrow::Cow;

use super::tree::{Array, ArrayType, Document, Encoding, NodeData, Property};
use super::{Error, ErrorKind, Warning};
use crate::limits::Limits;

/// The 21 bytes every binary FBX file starts with (`"Kaydara FBX Binary  "` and a NUL).
pub const MAGIC: &[u8; 21] = b"Kaydara FBX Binary  \0";

/// Size of the fixed file header: magic, 0x1A, endianness byte, u32 version.
pub const HEADER_LEN: usize = 27;

/// First version whose record headers use 64-bit fields.
pub const WIDE_RECORDS_FROM: u32 = 7500;

/// Most bytes one zlib-compressed byte can inflate to (deflate's limit is about 1032:1).
pub const MAX_INFLATE_RATIO: u64 = 1032;

/// Parses a binary FBX file. The caller has seen that `bytes` starts like [`MAGIC`].
pub fn parse<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Document<'a>, Error> {
    let mut doc = Document::new(Encoding::Binary);
    if bytes.len() < HEADER_LEN {
        return Err(Error::new(
            0,
            ErrorKind::FileTruncated {
                file_len: bytes.len() as u64,
                expected: format!(
                    "the {HEADER_LEN}-byte binary header (magic, 0x1A, byte order, version)"
                ),
            },
        ));
    }
    if &bytes[..21] != MAGIC || bytes[21] != 0x1A {
        return Err(Error::new(0, ErrorKind::BadMagic));
    }
    doc.big_endian = match bytes[22] {
        0 => false,
        1 => true,
        other => return Err(Error::new(22, ErrorKind::BadEndianness(other))),
    };
    let v = [bytes[23], bytes[24], bytes[25], bytes[26]];
    doc.version = if doc.big_endian { u32::from_be_bytes(v) } else { u32::from_le_bytes(v) };
    if !(super::OLDEST_SUPPORTED..=super::NEWEST_SUPPORTED).contains(&doc.version) {
        doc.warnings.push(Warning::UnsupportedVersion(doc.version));
    }
    let mut p = Parser {
        data: bytes,
        be: doc.big_endian,
        wide: doc.version >= WIDE_RECORDS_FROM,
        limits,
        stack: Vec::new(),
        doc,
    };
    let (nodes, props) = p.count_records();
    p.doc.nodes.reserve_exact(nodes);
    p.doc.props.reserve_exact(props);
    match p.records() {
        Ok(()) => Ok(p.doc),
        // Pre-6.0 files (header 3000) are read as far as their data allows.
        Err(e) if p.doc.version < super::OLDEST_SUPPORTED => {
            let n = p.doc.nodes.len() as u32;
            for open in p.stack.drain(..) {
                p.doc.nodes[open.node as usize].subtree_end = n;
            }
            p.doc.warnings.push(Warning::Partial(e));
            Ok(p.doc)
        }
        Err(e) => Err(e),
    }
}

/// A record whose children are being read.
struct Open {
    node: u32,
    end: u64,
}

struct Parser<'a, 'l> {
    data: &'a [u8],
    be: bool,
    wide: bool,
    limits: &'l Limits,
    stack: Vec<Open>,
    doc: Document<'a>,
}

impl<'a> Parser<'a, '_> {
    #[cold]
    #[inline(never)]
    fn err(&self, offset: u64, kind: ErrorKind) -> Error {
        let mut e = Error::new(offset, kind);
        e.path =
            self.stack.iter().map(|o| self.doc.nodes[o.node as usize].name.to_string()).collect();
        e
    }

    /// The file ends at its last byte before `expected` (which `pos` starts).
    #[cold]
    #[inline(never)]
    fn truncated(&self, pos: u64, expected: String) -> Error {
        self.err(pos, ErrorKind::FileTruncated { file_len: self.data.len() as u64, expected })
    }

    #[cold]
    #[inline(never)]
    fn err_in(&self, node: u32, offset: u64, kind: ErrorKind) -> Error {
        let mut e = self.err(offset, kind);
        e.path.push(self.doc.nodes[node as usize].name.to_string());
        e
    }

    fn header_len(&self) -> u64 {
        if self.wide {
            25
        } else {
            13
        }
    }

    /// The u32 at `pos`, which the caller has checked lies inside the data. Inlined, with one
    /// bounds check: as a call with four it took a twelfth of loading
    /// `maya_human_ik_6100_binary` (its record headers are read twice, see
    /// [`Parser::count_records`]).
    #[inline]
    fn u32_at(&self, pos: usize) -> u32 {
        let b: [u8; 4] = self.data[pos..pos + 4].try_into().unwrap();
        if self.be {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    /// The u64 at `pos` (see [`Parser::u32_at`]).
    #[inline]
    fn u64_at(&self, pos: usize) -> u64 {
        let b: [u8; 8] = self.data[pos..pos + 8].try_into().unwrap();
        if self.be {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        }
    }

    fn close(&mut self) -> u64 {
        let open = self.stack.pop().expect("close with an open record");
        self.doc.nodes[open.node as usize].subtree_end = self.doc.nodes.len() as u32;
        open.end
    }

    /// How many records and properties the file holds, from a walk over the record headers
    /// alone, so that the tree's two vectors are allocated once at their final size (grown by
    /// doubling they were copied about twice over and fresh pages faulted in for each copy:
    /// a tenth of the load of `maya_kenney_character_7700_binary`). Nothing is checked here
    /// beyond staying inside the bytes: on a malformed file the counts are only a capacity
    /// hint, and [`Parser::records`] reports what is wrong. The counts are bounded by the
    /// file size (a record header takes at least 13 bytes, a property at least 2) and by
    /// `limits.max_elements`, so a hostile header cannot ask for a large allocation.
    fn count_records(&self) -> (usize, usize) {
        let hl = self.header_len() as usize;
        let len = self.data.len();
        let mut pos = HEADER_LEN;
        let mut depth = 0usize;
        let (mut nodes, mut props) = (0usize, 0usize);
        while pos <= len && len - pos >= hl {
            let (end, nprops, plen, nlen) = if self.wide {
                (self.u64_at(pos), self.u64_at(pos + 8), self.u64_at(pos + 16), self.data[pos + 24])
            } else {
                (
                    self.u32_at(pos) as u64,
                    self.u32_at(pos + 4) as u64,
                    self.u32_at(pos + 8) as u64,
                    self.data[pos + 12],
                )
            };
            if end == 0 && nprops == 0 && plen == 0 && nlen == 0 {
                if depth == 0 {
                    break;
                }
                depth -= 1;
                pos += hl;
                continue;
            }
            let props_start = (pos + hl + nlen as usize) as u64;
            let Some(props_end) = props_start.checked_add(plen).filter(|&e| e <= len as u64) else {
                break;
            };
            nodes += 1;
            props += nprops.min(plen / 2) as usize;
            if end > props_end {
                depth += 1;
            }
            pos = props_end as usize;
        }
        let max = usize::try_from(self.limits.max_elements).unwrap_or(usize::MAX);
        (nodes.min(max), props.min(max))
    }

    /// Reads every record, iteratively (depth is bounded by `limits.max_depth`, not the stack).
    fn records(&mut self) -> Result<(), Error> {
        let file_len = self.data.len() as u64;
        let hl = self.header_len();
        let mut pos = HEADER_LEN as u64;
        // Names already checked as UTF-8, by length and first byte: records repeat a few
        // names (`P`, `C`, `KeyTime`…), and a byte comparison is cheaper than the check. A
        // record's name may then borrow an equal name earlier in the file.
        let mut names: [Option<&'a str>; 64] = [None; 64];
        loop {
            let limit = match self.stack.last() {
                Some(open) => {
                    if pos == open.end {
                        pos = self.close();
                        continue;
                    }
                    open.end
                }
                None => {
                    if file_len - pos < hl {
                        // Top level without a null record: the file ends between records.
                        if file_len != pos {
                            self.doc.warnings.push(Warning::MissingNullRecord { offset: pos });
                        }
                        return Ok(());
                    }
                    file_len
                }
            };
            if limit - pos < hl {
                if limit == file_len {
                    return Err(self.truncated(pos, format!("a {hl}-byte record header")));
                }
                return Err(self.err(pos, ErrorKind::Truncated { needed: hl, left: limit - pos }));
            }
            let p = pos as usize;
            let (end, nprops, plen, nlen) = if self.wide {
                (self.u64_at(p), self.u64_at(p + 8), self.u64_at(p + 16), self.data[p + 24])
            } else {
                (
                    self.u32_at(p) as u64,
                    self.u32_at(p + 4) as u64,
                    self.u32_at(p + 8) as u64,
                    self.data[p + 12],
                )
            };
            if end == 0 && nprops == 0 && plen == 0 && nlen == 0 {
                // Null record: ends the parent's children (or the top level).
                if self.stack.is_empty() {
                    return Ok(());
                }
                pos = self.close();
                continue;
            }
            let name_start = pos + hl;
            let props_start = name_start + nlen as u64;
            if props_start > limit {
                if limit == file_len {
                    return Err(self.truncated(pos, format!("a {nlen}-byte record name")));
                }
                return Err(self.err(
                    pos,
                    ErrorKind::Truncated { needed: hl + nlen as u64, left: limit - pos },
                ));
            }
            let name_bytes = &self.data[name_start as usize..props_start as usize];
            let slot = (name_bytes.len() ^ name_bytes.first().map_or(0, |&b| b as usize * 7)) % 64;
            let name = match names[slot] {
                Some(seen) if seen.as_bytes() == name_bytes => seen,
                _ => {
                    let name = std::str::from_utf8(name_bytes)
                        .map_err(|_| self.err(name_start, ErrorKind::BadName))?;
                    names[slot] = Some(name);
                    name
                }
            };
            if plen > limit - props_start {
                if limit == file_len {
                    let mut e = self.truncated(
                        pos,
                        format!("{plen} bytes of properties from byte {props_start:#x}"),
                    );
                    e.path.push(name.to_string());
                    return Err(e);
                }
                let mut e =
                    self.err(pos, ErrorKind::Truncated { needed: plen, left: limit - props_start });
                e.path.push(name.to_string());
                return Err(e);
            }
            let props_end = props_start + plen;
            let end = if end == 0 {
                self.doc.warnings.push(Warning::ZeroEndOffset { offset: pos });
                props_end
            } else {
                end
            };
            let node = self.doc.nodes.len() as u32;
            if node as u64 >= self.limits.max_elements {
                return Err(self.err(
                    pos,
                    ErrorKind::Limit {
                        what: "nodes",
                        requested: node as u64 + 1,
                        limit: self.limits.max_elements,
                    },
                ));
            }
            let first_prop = self.doc.props.len() as u32;
            self.doc.nodes.push(NodeData {
                name,
                props_start: first_prop,
                props_end: first_prop,
                subtree_end: node + 1,
                offset: pos,
            });
            // Past the end of the file where the parent (or the file) ends there: truncated;
            // past a parent that ends inside the file: a bad offset.
            if end > file_len && limit == file_len && end >= props_end {
                let mut e = self.truncated(pos, format!("the record to end at byte {end:#x}"));
                e.path.push(name.to_string());
                return Err(e);
            }
            if end < props_end || end > limit {
                return Err(self.err_in(
                    node,
                    pos,
                    ErrorKind::BadEndOffset { end, min: props_end, max: limit },
                ));
            }
            self.properties(node, props_start, props_end, nprops)?;
            self.doc.nodes[node as usize].props_end = self.doc.props.len() as u32;
            if end > props_end {
                if self.stack.len() as u64 >= self.limits.max_depth as u64 {
                    return Err(self.err_in(
                        node,
                        pos,
                        ErrorKind::TooDeep { max: self.limits.max_depth },
                    ));
                }
                self.stack.push(Open { node, end });
            }
            pos = props_end;
        }
    }

    /// Decodes `count` properties of `node` from `start..end`, which they must fill exactly.
    fn properties(&mut self, node: u32, start: u64, end: u64, count: u64) -> Result<(), Error> {
        let mut pos = start as usize;
        let end_u = end as usize;
        for _ in 0..count {
            let at = pos as u64;
            let left = end_u - pos;
            let trunc = |need: usize, p: &Self| {
                p.err_in(node, at, ErrorKind::Truncated { needed: need as u64, left: left as u64 })
            };
            if left < 1 {
                return Err(trunc(1, self));
            }
            let ty = self.data[pos];
            let body = pos + 1;
            let left = left - 1;
            let fixed = |n: usize, p: &Self| -> Result<&'a [u8], Error> {
                if left < n {
                    Err(p.err_in(
                        node,
                        at,
                        ErrorKind::Truncated { needed: n as u64 + 1, left: left as u64 + 1 },
                    ))
                } else {
                    Ok(&p.data[body..body + n])
                }
            };
            let be = self.be;
            macro_rules! num {
                ($t:ty) => {{
                    let b = fixed(std::mem::size_of::<$t>(), self)?.try_into().unwrap();
                    if be {
                        <$t>::from_be_bytes(b)
                    } else {
                        <$t>::from_le_bytes(b)
                    }
                }};
            }
            let (prop, used) = match ty {
                b'C' | b'B' => (Property::Bool(fixed(1, self)?[0]), 1),
                b'Z' => (Property::U8(fixed(1, self)?[0]), 1),
                b'Y' => (Property::I16(num!(i16)), 2),
                b'I' => (Property::I32(num!(i32)), 4),
                b'L' => (Property::I64(num!(i64)), 8),
                b'F' => (Property::F32(num!(f32)), 4),
                b'D' => (Property::F64(num!(f64)), 8),
                b'S' | b'R' => {
                    let n = num!(u32) as usize;
                    if left - 4 < n {
                        return Err(self.err_in(
                            node,
                            at,
                            ErrorKind::Truncated { needed: n as u64 + 5, left: left as u64 + 1 },
                        ));
                    }
                    let s = Cow::Borrowed(&self.data[body + 4..body + 4 + n]);
                    (
                        if ty == b'S' { Property::String(s) } else { Property::Raw(Box::new(s)) },
                        4 + n,
                    )
                }
                b'b' | b'c' | b'i' | b'l' | b'f' | b'd' => {
                    let (array, used) = self.array(node, at, ty, body, left)?;
                    (Property::Array(Box::new(array)), used)
                }
                other => return Err(self.err_in(node, at, ErrorKind::UnknownPropertyType(other))),
            };
            self.doc.props.push(prop);
            pos = body + used;
        }
        if pos != end_u {
            return Err(self.err_in(
                node,
                pos as u64,
                ErrorKind::PropertyLength { declared: end - start, used: pos as u64 - start },
            ));
        }
        Ok(())
    }

    /// Decodes an array property whose 12-byte header starts at `body` (`left` bytes remain in
    /// the record's properties). Returns the array and the bytes it took. Not inlined: arrays
    /// are rare among properties, and inlined into [`Parser::properties`] this made the loop
    /// over every scalar slower (callgrind).
    #[inline(never)]
    fn array(
        &mut self,
        node: u32,
        at: u64,
        code: u8,
        body: usize,
        left: usize,
    ) -> Result<(Array<'a>, usize), Error> {
        let ty = match code {
            b'b' => ArrayType::Bool,
            b'c' => ArrayType::U8,
            b'i' => ArrayType::I32,
            b'l' => ArrayType::I64,
            b'f' => ArrayType::F32,
            _ => ArrayType::F64,
        };
        if left < 12 {
            return Err(self.err_in(
                node,
                at,
                ErrorKind::Truncated { needed: 13, left: left as u64 + 1 },
            ));
        }
        let count = self.u32_at(body) as u64;
        let encoding = self.u32_at(body + 4);
        let stored = self.u32_at(body + 8) as u64;
        let bytes = count * ty.size() as u64;
        let left = (left - 12) as u64;
        if stored > left {
            return Err(self.err_in(
                node,
                at,
                ErrorKind::ArrayTooLarge { count, bytes: stored, left },
            ));
        }
        if count > self.limits.max_elements {
            return Err(self.err_in(
                node,
                at,
                ErrorKind::Limit {
                    what: "array elements",
                    requested: count,
                    limit: self.limits.max_elements,
                },
            ));
        }
        if bytes > self.limits.max_bytes {
            return Err(self.err_in(
                node,
                at,
                ErrorKind::Limit {
                    what: "array bytes",
                    requested: bytes,
                    limit: self.limits.max_bytes,
                },
            ));
        }
        let src = &self.data[body + 12..body + 12 + stored as usize];
        let array = match encoding {
            0 => {
                if bytes != stored {
                    return Err(self.err_in(
                        node,
                        at,
                        ErrorKind::ArrayTooLarge { count, bytes, left: stored },
                    ));
                }
                Array::new(ty, Cow::Borrowed(src), self.be, at)
            }
            1 => {
                if bytes > stored.saturating_mul(MAX_INFLATE_RATIO) + 64 {
                    return Err(self.err_in(
                        node,
                        at,
                        ErrorKind::ArrayTooLarge { count, bytes, left: stored },
                    ));
                }
                Array::zlib(ty, src, count as usize, self.be, at)
            }
            other => return Err(self.err_in(node, at, ErrorKind::UnknownArrayEncoding(other))),
        };
        Ok((array, 12 + stored as usize))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::formats::fbx::{self, ErrorKind, Warning};

    /// A property as written: type code and body bytes (little-endian; swapped for BE files).
    enum P {
        Z(u8),
        I(i32),
        L(i64),
        D(f64),
        S(&'static [u8]),
        ArrD(Vec<f64>, bool),
        ArrI(Vec<i32>),
    }

    struct N {
        name: &'static str,
        props: Vec<P>,
        children: Vec<N>,
    }

    fn n(name: &'static str, props: Vec<P>, children: Vec<N>) -> N {
        N { name, props, children }
    }

    fn num(out: &mut Vec<u8>, le: &[u8], be: bool) {
        if be {
            out.extend(le.iter().rev());
        } else {
            out.extend_from_slice(le);
        }
    }

    fn prop(out: &mut Vec<u8>, p: &P, be: bool) {
        match p {
            P::Z(v) => out.extend_from_slice(&[b'Z', *v]),
            P::I(v) => {
                out.push(b'I');
                num(out, &v.to_le_bytes(), be);
            }
            P::L(v) => {
                out.push(b'L');
                num(out, &v.to_le_bytes(), be);
            }
            P::D(v) => {
                out.push(b'D');
                num(out, &v.to_le_bytes(), be);
            }
            P::S(s) => {
                out.push(b'S');
                num(out, &(s.len() as u32).to_le_bytes(), be);
                out.extend_from_slice(s);
            }
            P::ArrI(v) => {
                out.push(b'i');
                num(out, &(v.len() as u32).to_le_bytes(), be);
                num(out, &0u32.to_le_bytes(), be);
                num(out, &(v.len() as u32 * 4).to_le_bytes(), be);
                for x in v {
                    num(out, &x.to_le_bytes(), be);
                }
            }
            P::ArrD(v, zlib) => {
                let mut raw = Vec::new();
                for x in v {
                    num(&mut raw, &x.to_le_bytes(), be);
                }
                if *zlib {
                    let mut e =
                        flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                    e.write_all(&raw).unwrap();
                    raw = e.finish().unwrap();
                }
                out.push(b'd');
                num(out, &(v.len() as u32).to_le_bytes(), be);
                num(out, &(*zlib as u32).to_le_bytes(), be);
                num(out, &(raw.len() as u32).to_le_bytes(), be);
                out.extend_from_slice(&raw);
            }
        }
    }

    fn field(out: &mut Vec<u8>, v: u64, wide: bool, be: bool) {
        if wide {
            num(out, &v.to_le_bytes(), be);
        } else {
            num(out, &(v as u32).to_le_bytes(), be);
        }
    }

    fn node(out: &mut Vec<u8>, node: &N, wide: bool, be: bool) {
        let start = out.len();
        let mut props = Vec::new();
        for p in &node.props {
            prop(&mut props, p, be);
        }
        field(out, 0, wide, be);
        field(out, node.props.len() as u64, wide, be);
        field(out, props.len() as u64, wide, be);
        out.push(node.name.len() as u8);
        out.extend_from_slice(node.name.as_bytes());
        out.extend_from_slice(&props);
        for c in &node.children {
            self::node(out, c, wide, be);
        }
        if !node.children.is_empty() {
            out.extend(std::iter::repeat_n(0, if wide { 25 } else { 13 }));
        }
        let end = out.len() as u64;
        let mut patched = Vec::new();
        field(&mut patched, end, wide, be);
        out[start..start + patched.len()].copy_from_slice(&patched);
    }

    fn file(version: u32, be: bool, roots: &[N]) -> Vec<u8> {
        let wide = version >= 7500;
        let mut out = MAGIC.to_vec();
        out.push(0x1A);
        out.push(be as u8);
        num(&mut out, &version.to_le_bytes(), be);
        for r in roots {
            node(&mut out, r, wide, be);
        }
        out.extend(std::iter::repeat_n(0, if wide { 25 } else { 13 }));
        out.extend_from_slice(&[0xfa; 16]); // footer stand-in: never read
        out
    }

    fn mesh(zlib: bool) -> Vec<N> {
        vec![
            n(
                "FBXHeaderExtension",
                vec![],
                vec![
                    n("FBXVersion", vec![P::I(7400)], vec![]),
                    n("Scale", vec![P::D(2.54)], vec![]),
                ],
            ),
            n(
                "Objects",
                vec![],
                vec![n(
                    "Geometry",
                    vec![P::L(-42), P::S(b"Cube\x00\x01Geometry"), P::S(b"Mesh")],
                    vec![
                        n(
                            "Vertices",
                            vec![P::ArrD(vec![1.0, -2.5, 3.25, 0.0, 1e300, -0.0], zlib)],
                            vec![],
                        ),
                        n("PolygonVertexIndex", vec![P::ArrI(vec![0, 1, -3])], vec![]),
                    ],
                )],
            ),
        ]
    }

    fn check_mesh(doc: &Document<'_>) {
        assert_eq!(
            doc.find(&["FBXHeaderExtension", "Scale"]).unwrap().properties(),
            [Property::F64(2.54)]
        );
        let geo = doc.find(&["Objects", "Geometry"]).unwrap();
        assert_eq!(geo.property(0), Some(&Property::I64(-42)));
        assert_eq!(geo.property(1).unwrap().as_bytes(), Some(&b"Cube\x00\x01Geometry"[..]));
        assert_eq!(geo.property(2).unwrap().as_str(), Some("Mesh"));
        let v = geo.child_array("Vertices").unwrap();
        assert_eq!(v.ty(), ArrayType::F64);
        assert_eq!(v.to_f64_vec().unwrap(), vec![1.0, -2.5, 3.25, 0.0, 1e300, -0.0]);
        assert_eq!(
            geo.child_array("PolygonVertexIndex").unwrap().to_i32_vec().unwrap(),
            vec![0, 1, -3]
        );
        assert_eq!(
            doc.roots().map(|r| r.name()).collect::<Vec<_>>(),
            ["FBXHeaderExtension", "Objects"]
        );
        assert_eq!(geo.children().count(), 2);
    }

    #[test]
    fn little_endian_32_bit_records_read_scalars_strings_and_arrays() {
        let bytes = file(7400, false, &mesh(false));
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        assert_eq!((doc.version, doc.encoding, doc.big_endian), (7400, Encoding::Binary, false));
        check_mesh(&doc);
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    }

    #[test]
    fn big_endian_64_bit_records_decode_to_the_same_values() {
        let bytes = file(7500, true, &mesh(true));
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        assert_eq!((doc.version, doc.big_endian), (7500, true));
        check_mesh(&doc);
    }

    /// `Parser::count_records` of a whole file.
    fn counts(bytes: &[u8], limits: &Limits) -> (usize, usize) {
        let be = bytes[22] == 1;
        let v: [u8; 4] = bytes[23..27].try_into().unwrap();
        let version = if be { u32::from_be_bytes(v) } else { u32::from_le_bytes(v) };
        let p = Parser {
            data: bytes,
            be,
            wide: version >= WIDE_RECORDS_FROM,
            limits,
            stack: Vec::new(),
            doc: Document::new(Encoding::Binary),
        };
        p.count_records()
    }

    #[test]
    fn header_pre_scan_counts_every_record_and_property_and_sizes_the_tree_once() {
        // `mesh`: FBXHeaderExtension, FBXVersion, Scale, Objects, Geometry, Vertices,
        // PolygonVertexIndex (7 records) holding 1 + 1 + 3 + 1 + 1 values.
        for (version, be) in [(7400, false), (7500, true)] {
            let bytes = file(version, be, &mesh(true));
            assert_eq!(counts(&bytes, &Limits::default()), (7, 7), "{version}");
            let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
            assert_eq!((doc.nodes.len(), doc.nodes.capacity()), (7, 7));
            assert_eq!((doc.props.len(), doc.props.capacity()), (7, 7));
        }
    }

    #[test]
    fn header_pre_scan_counts_are_bounded_by_the_bytes_and_the_limits() {
        // One record declaring 2^32 - 1 properties in 6 property bytes: at most 3 (a
        // property takes at least 2 bytes), and the parse itself is a typed error.
        let mut bytes = file(7400, false, &[n("A", vec![P::I(1)], vec![])]);
        bytes[27 + 4..27 + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        bytes[27 + 8..27 + 12].copy_from_slice(&6u32.to_le_bytes());
        assert_eq!(counts(&bytes, &Limits::default()), (1, 3));
        assert!(fbx::parse(&bytes, &Limits::default()).is_err());
        // A property-bytes field past the end of the file stops the scan.
        bytes[27 + 8..27 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(counts(&bytes, &Limits::default()), (0, 0));
        let tight = Limits { max_elements: 2, ..Limits::default() };
        assert_eq!(counts(&file(7400, false, &mesh(false)), &tight), (2, 2));
    }

    #[test]
    fn zlib_arrays_inflate_to_their_declared_size() {
        let bytes = file(7400, false, &mesh(true));
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        let v = doc
            .find(&["Objects", "Geometry", "Vertices"])
            .unwrap()
            .property(0)
            .unwrap()
            .as_array()
            .unwrap();
        assert!(v.was_compressed());
        // Not inflated by the parse: the tree holds the stream, borrowed from the file.
        assert!(!v.is_checked());
        assert!(v.stored_bytes().len() < 48);
        assert!(bytes.as_ptr_range().contains(&v.stored_bytes().as_ptr()));
        check_mesh(&doc);
        assert!(v.is_checked(), "a read that inflated the stream marks it checked");
        assert_eq!(doc.check_arrays(), Ok(()));
    }

    /// Offset of the first array header (its element count) after the `d` type code.
    fn array_count_at(bytes: &[u8]) -> usize {
        bytes.windows(5).position(|w| w == b"d\x06\x00\x00\x00").unwrap() + 1
    }

    #[test]
    fn zlib_array_declaring_more_than_deflate_can_produce_fails_before_allocating() {
        let mut bytes = file(7400, false, &mesh(true));
        let at = array_count_at(&bytes);
        bytes[at..at + 4].copy_from_slice(&0x0fff_ffffu32.to_le_bytes()); // 2 GiB of doubles
        let e = fbx::parse(&bytes, &Limits::default()).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::ArrayTooLarge { count: 0x0fff_ffff, .. }), "{e}");
        assert_eq!(e.path, ["Objects", "Geometry", "Vertices"]);
        assert!(e.to_string().starts_with("fbx: Objects › Geometry › Vertices at byte 0x"), "{e}");
    }

    #[test]
    fn raw_array_longer_than_its_record_names_the_record_and_sizes() {
        let mut bytes = file(7400, false, &mesh(false));
        let at = array_count_at(&bytes);
        bytes[at..at + 4].copy_from_slice(&1_000_000u32.to_le_bytes());
        let e = fbx::parse(&bytes, &Limits::default()).unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::ArrayTooLarge { count: 1_000_000, bytes: 8_000_000, left: 48 }
        );
        assert_eq!(e.offset as usize, at - 1);
    }

    #[test]
    fn inflated_size_other_than_declared_is_an_error() {
        let mut bytes = file(7400, false, &mesh(true));
        let at = array_count_at(&bytes);
        bytes[at..at + 4].copy_from_slice(&7u32.to_le_bytes());
        // The parse checks sizes only; the read that inflates the array finds the mismatch.
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        let geo = doc.find(&["Objects", "Geometry"]).unwrap();
        let e = geo.child_array("Vertices").unwrap().to_f64_vec().unwrap_err();
        assert_eq!(e.kind, ErrorKind::InflatedSize { expected: 56, got: 48 });
        assert_eq!(e.offset as usize, at - 1);
        let e = fbx::read(&bytes, &Default::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InflatedSize { expected: 56, got: 48 });
        assert_eq!(e.offset as usize, at - 1);
        assert_eq!(e.path, ["Objects", "Geometry", "Vertices"]);
    }

    /// A zlib stream with a flipped byte: every read of it is the same typed error, with the
    /// array's offset, and the record path once a record reads it (`decoded`), and a load
    /// fails with it whether or not the importer reads the array.
    #[test]
    fn corrupt_zlib_stream_is_an_error_of_every_read_and_of_the_load() {
        let mut bytes = file(7400, false, &mesh(true));
        let at = array_count_at(&bytes);
        let stream = at + 12;
        bytes[stream + 4] ^= 0x55;
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        let vertices = doc.find(&["Objects", "Geometry", "Vertices"]).unwrap();
        let a = vertices.first_array().unwrap();
        for e in [a.to_f64_vec().unwrap_err(), a.to_i32_vec().unwrap_err(), a.bytes().unwrap_err()]
        {
            assert!(
                matches!(e.kind, ErrorKind::Inflate(_) | ErrorKind::InflatedSize { .. }),
                "{e}"
            );
            assert_eq!((e.offset as usize, e.path.len()), (at - 1, 0));
        }
        assert!(!a.is_checked());
        assert_eq!(vertices.decoded(a.to_f64_vec()), Vec::<f64>::new());
        let kept = doc.array_error().unwrap();
        assert_eq!(kept.path, ["Objects", "Geometry", "Vertices"]);
        assert_eq!(doc.check_arrays().unwrap_err(), *kept);
        let e = fbx::read(&bytes, &Default::default()).unwrap_err();
        assert_eq!(e, *kept);
        assert!(
            e.to_string().starts_with(&format!(
                "fbx: Objects › Geometry › Vertices at byte {:#x}: ",
                at - 1
            )),
            "{e}"
        );
        // In a record the importer never reads: the load still fails, at the same place.
        let roots =
            [n("Unread", vec![], vec![n("Data", vec![P::ArrD(vec![1.0; 40], true)], vec![])])];
        let mut bytes = file(7400, false, &roots);
        let at = bytes.windows(5).position(|w| w == b"d\x28\x00\x00\x00").unwrap() + 1;
        bytes[at + 12 + 4] ^= 0x55;
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        let e = doc.check_arrays().unwrap_err();
        assert_eq!(e.offset as usize, at - 1);
        assert_eq!(e.path, ["Unread", "Data"]);
    }

    #[test]
    fn zero_end_offset_record_is_read_as_childless() {
        let roots = [n("A", vec![P::I(1)], vec![]), n("B", vec![P::I(2)], vec![])];
        let mut bytes = file(7400, false, &roots);
        bytes[27..31].copy_from_slice(&[0; 4]);
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        assert_eq!(doc.roots().map(|r| r.name()).collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(doc.warnings, [Warning::ZeroEndOffset { offset: 27 }]);
    }

    /// Issue 17 §1: a binary file cut inside a record says "truncated" with the record path.
    #[test]
    fn a_file_cut_inside_a_record_is_truncated_with_its_path() {
        let roots = [n("A", vec![], vec![n("B", vec![P::I(1)], vec![])]), n("C", vec![], vec![])];
        let bytes = file(7400, false, &roots);
        // Inside A's children: A's end offset lies past the cut.
        let cut = &bytes[..27 + 13 + 1 + 5];
        let e = fbx::parse(cut, &Limits::default()).unwrap_err();
        assert!(
            matches!(&e.kind, ErrorKind::FileTruncated { file_len: 46, expected } if expected.contains("end at byte")),
            "{e}"
        );
        assert_eq!(e.path, ["A"]);
        assert!(e.to_string().contains("truncated at byte 46"), "{e}");
        // Inside the 27-byte header.
        let e = fbx::parse(&bytes[..20], &Limits::default()).unwrap_err();
        assert!(
            e.to_string().contains("truncated at byte 20: expected the 27-byte binary header"),
            "{e}"
        );
        // Shorter than the 18 bytes that tell a binary file: still the binary header, cut.
        let e = fbx::parse(&bytes[..10], &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("truncated at byte 10"), "{e}");
    }

    #[test]
    fn end_offset_past_the_parent_is_rejected() {
        let roots = [n("A", vec![], vec![n("B", vec![P::I(1)], vec![])])];
        let mut bytes = file(7400, false, &roots);
        let b_at = 27 + 13 + 1;
        bytes[b_at..b_at + 4].copy_from_slice(&10_000u32.to_le_bytes());
        let e = fbx::parse(&bytes, &Limits::default()).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BadEndOffset { end: 10_000, .. }), "{e}");
        assert_eq!(e.path, ["A", "B"]);
    }

    #[test]
    fn nesting_beyond_the_depth_limit_is_an_error_not_a_stack_overflow() {
        let mut deep = n("Leaf", vec![P::I(0)], vec![]);
        for _ in 0..100 {
            deep = n("Deep", vec![], vec![deep]);
        }
        let bytes = file(7500, false, &[deep]);
        let e = fbx::parse(&bytes, &Limits::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooDeep { max: 64 });
        let doc = fbx::parse(&bytes, &Limits { max_depth: 200, ..Limits::default() }).unwrap();
        assert_eq!(doc.node_count(), 101);
    }

    #[test]
    fn header_with_nul_bytes_replaced_is_bad_magic() {
        let mut bytes = file(7400, false, &mesh(false));
        bytes[20] = 0x20;
        assert_eq!(fbx::parse(&bytes, &Limits::default()).unwrap_err().kind, ErrorKind::BadMagic);
    }

    #[test]
    fn pre_6_1_binary_keeps_the_records_before_a_break() {
        let roots = [n("A", vec![P::I(1)], vec![]), n("B", vec![P::I(2)], vec![])];
        let mut bytes = file(3000, false, &roots);
        let b_at = 27 + 13 + 1 + 5;
        bytes[b_at + 13 + 1] = b'?'; // B's first property type
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        assert_eq!(doc.warnings[0], Warning::UnsupportedVersion(3000));
        assert!(
            matches!(&doc.warnings[1], Warning::Partial(e) if e.kind == ErrorKind::UnknownPropertyType(b'?'))
        );
        assert_eq!(doc.roots().next().unwrap().property(0), Some(&Property::I32(1)));
    }

    #[test]
    fn a_z_property_is_one_unsigned_byte() {
        // Maya's audio templates: `P: "Channels", "UByte", "", "", 5` with the value typed 'Z'
        // (ufbx 0.23 reads 'Z' as one byte, a number); the record after it still parses.
        let p70 = n(
            "P",
            vec![P::S(b"Channels"), P::S(b"UByte"), P::S(b""), P::S(b""), P::Z(200)],
            vec![],
        );
        let roots = [n("Properties70", vec![], vec![p70]), n("After", vec![P::I(7)], vec![])];
        for be in [false, true] {
            let bytes = file(7500, be, &roots);
            let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
            let p = doc.roots().next().unwrap().children().next().unwrap();
            assert_eq!(p.property(4), Some(&Property::U8(200)));
            assert_eq!(p.property(4).and_then(Property::as_f64), Some(200.0));
            assert_eq!(doc.roots().nth(1).unwrap().property(0), Some(&Property::I32(7)));
        }
    }

    #[test]
    fn every_cut_of_a_small_file_is_ok_or_a_typed_error() {
        let bytes = file(7500, true, &mesh(true));
        for cut in 0..bytes.len() {
            let _ = fbx::parse(&bytes[..cut], &Limits::default());
        }
    }
}
