//! FBX writing, the low level: a tree of [`Record`]s → the bytes of a binary FBX 7.4 or 7.5
//! file ([`encode`]) or an ASCII one ([`encode_ascii`]), laid out as the Autodesk FBX SDK
//! writes them (records → bytes; the reverse of [`super::binary`] and [`super::ascii`], which
//! read every file this module writes into the same tree — ASCII with its own typing of
//! numbers, see [`encode_ascii`]).
//!
//! # Layout
//! ```text
//! header   "Kaydara FBX Binary  \0", 0x1A, 0x00 (little-endian), u32 version
//! records  end offset, property count, property bytes (u32 each; u64 from 7500),
//!          u8 name length, name, properties, children, then a null record (13 bytes of
//!          zeros; 25 from 7500) when the record has children *or no properties at all*
//!          (the SDK closes `References:` and every empty `Properties70:` that way)
//! null     one more null record closes the top level
//! footer   footer id (16 bytes), 20 − (offset mod 16) zero bytes (so the version that
//!          follows sits at 4 mod 16 and the file ends on a 16-byte boundary), u32 version,
//!          120 zero bytes, the fixed 16-byte tail f8 5a 8c 6a de f5 d9 7e ec e9 0c e3 75 8f 29 0b
//! ```
//! The footer rule was measured on the corpus: every SDK-written binary (Maya, 3ds Max,
//! MotionBuilder; 209 of them) pads so; Blender's exporter pads differently (4 zeros, then to
//! 16), which ufbx and the SDK both accept, but we follow the SDK.
//!
//! The SDK ties `FileId`, `CreationTime` and the footer id together by a check it does not
//! document (files with a changed date but the old id are refused as corrupt), so the writer
//! puts a triple copied from an SDK-written corpus file (`maya_cube_7400_binary.fbx`, FBX SDK
//! 2019.2): [`FILE_ID`], [`CREATION_TIME`], [`FOOTER_ID`]. The real date belongs in
//! `FBXHeaderExtension › CreationTimeStamp`, which nothing checks.
//!
//! # Properties and arrays
//! [`Value`] is one typed property: `C` bool, `Y` i16, `I` i32, `L` i64, `F` f32, `D` f64,
//! `S` string, `R` raw bytes, and the arrays `b i l f d` (`u32 count, u32 encoding, u32
//! stored bytes`, then the data). An array of at least [`BinaryOptions::compress_from`] bytes is
//! stored with encoding 1, a full zlib stream (RFC 1950, libdeflate); smaller ones with
//! encoding 0 and their exact byte length.
//!
//! # Errors
//! A name longer than 255 bytes, or (7.4) an offset past 2³²−1 or an array past 2³²−1 bytes, is
//! an [`WriteError`] naming the record path; a 7.4 file too large for 32-bit offsets must be
//! written as 7.5.

use std::fmt;

/// `FileId` (a raw 16-byte property) of the SDK-written `maya_cube_7400_binary.fbx`: written
/// with [`CREATION_TIME`] and [`FOOTER_ID`], the triple the SDK accepts (module docs).
pub const FILE_ID: [u8; 16] = [
    0x2a, 0xb2, 0x2b, 0xe8, 0xb6, 0x25, 0xce, 0xc0, 0xb9, 0xc9, 0xb2, 0x21, 0xa7, 0x25, 0xf1, 0xfa,
];

/// `CreationTime` of the same file (`"YYYY-MM-DD hh:mm:ss:mmm"`), part of the triple.
pub const CREATION_TIME: &str = "2020-03-31 21:36:23:473";

/// The footer id of the same file, the first 16 bytes after the closing null record.
pub const FOOTER_ID: [u8; 16] = [
    0xfa, 0xbc, 0xa9, 0x08, 0xd3, 0xca, 0xd7, 0x65, 0xb0, 0x77, 0xfc, 0x83, 0x19, 0xfc, 0x2d, 0x7b,
];

/// The fixed last 16 bytes of every SDK-written binary FBX file.
pub const FOOTER_TAIL: [u8; 16] = [
    0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b,
];

/// One property value of a record, typed as the binary encoding stores it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `C`: one byte, 0 or 1 (the SDK writes `'T'`/`'F'` for a few records, e.g. `Shading`:
    /// use [`Value::Char`] for those).
    Bool(bool),
    /// `C` with a character byte, e.g. `Shading: 'T'`.
    Char(u8),
    /// `Y`: i16.
    I16(i16),
    /// `I`: i32.
    I32(i32),
    /// `L`: i64 (object ids, KTime).
    I64(i64),
    /// `F`: f32.
    F32(f32),
    /// `D`: f64.
    F64(f64),
    /// `S`: bytes (object names use `name \0\x01 Class`).
    String(Vec<u8>),
    /// `R`: raw bytes (`FileId`, `Video › Content`).
    Raw(Vec<u8>),
    /// `b`: bool array, one byte per element.
    BoolArray(Vec<bool>),
    /// `i`: i32 array.
    I32Array(Vec<i32>),
    /// `l`: i64 array (`KeyTime`).
    I64Array(Vec<i64>),
    /// `f`: f32 array (`KeyValueFloat`).
    F32Array(Vec<f32>),
    /// `d`: f64 array.
    F64Array(Vec<f64>),
}

impl Value {
    /// A string property from text.
    pub fn str(s: impl AsRef<str>) -> Value {
        Value::String(s.as_ref().as_bytes().to_vec())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::str(s)
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s.into_bytes())
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::I32(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::I64(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::F64(v)
    }
}

/// One record: a name, its property values, and child records.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// The record's name (at most 255 bytes).
    pub name: String,
    /// Its properties, in order.
    pub values: Vec<Value>,
    /// Its child records, in order.
    pub children: Vec<Record>,
}

impl Record {
    /// A record with no values and no children.
    pub fn new(name: impl Into<String>) -> Record {
        Record { name: name.into(), values: Vec::new(), children: Vec::new() }
    }

    /// A record holding the given values.
    pub fn with(name: impl Into<String>, values: Vec<Value>) -> Record {
        Record { name: name.into(), values, children: Vec::new() }
    }

    /// A record holding one value.
    pub fn one(name: impl Into<String>, value: impl Into<Value>) -> Record {
        Record::with(name, vec![value.into()])
    }

    /// Appends a child and returns `self` (builder style).
    pub fn child(mut self, c: Record) -> Record {
        self.children.push(c);
        self
    }

    /// Appends a child.
    pub fn push(&mut self, c: Record) {
        self.children.push(c);
    }
}

/// How [`encode`] lays the file out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinaryOptions {
    /// The file version: 7400 (32-bit record headers) or 7500 (64-bit); any value from
    /// [`super::binary::WIDE_RECORDS_FROM`] on gets 64-bit headers.
    pub version: u32,
    /// Arrays of at least this many data bytes are zlib-compressed (encoding 1); `usize::MAX`
    /// stores every array raw.
    pub compress_from: usize,
}

impl Default for BinaryOptions {
    /// 7.4, arrays of 128 bytes or more compressed.
    fn default() -> Self {
        BinaryOptions { version: 7400, compress_from: 128 }
    }
}

/// A record tree could not be encoded.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteError {
    /// Names of the records from the top level down to the one at fault.
    pub path: Vec<String>,
    /// What is wrong, in words.
    pub what: String,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fbx write: {}: {}", self.path.join(" › "), self.what)
    }
}

impl std::error::Error for WriteError {}

/// Encodes `roots` as a binary FBX file (module docs for the layout).
pub fn encode(roots: &[Record], opts: &BinaryOptions) -> Result<Vec<u8>, WriteError> {
    let mut w = Writer {
        out: Vec::with_capacity(1 << 16),
        wide: opts.version >= super::binary::WIDE_RECORDS_FROM,
        compress_from: opts.compress_from,
        compressor: None,
        path: Vec::new(),
    };
    w.out.extend_from_slice(super::binary::MAGIC);
    w.out.extend_from_slice(&[0x1A, 0x00]);
    w.out.extend_from_slice(&opts.version.to_le_bytes());
    for r in roots {
        w.record(r)?;
    }
    w.null_record();
    w.check_offset(w.out.len() as u64)?;
    let out = &mut w.out;
    out.extend_from_slice(&FOOTER_ID);
    let pad = 20 - out.len() % 16;
    out.resize(out.len() + pad, 0);
    out.extend_from_slice(&opts.version.to_le_bytes());
    out.resize(out.len() + 120, 0);
    out.extend_from_slice(&FOOTER_TAIL);
    Ok(w.out)
}

struct Writer {
    out: Vec<u8>,
    wide: bool,
    compress_from: usize,
    compressor: Option<libdeflater::Compressor>,
    path: Vec<String>,
}

impl Writer {
    fn err(&self, what: String) -> WriteError {
        WriteError { path: self.path.clone(), what }
    }

    fn header_len(&self) -> usize {
        if self.wide {
            25
        } else {
            13
        }
    }

    fn null_record(&mut self) {
        let n = self.header_len();
        self.out.resize(self.out.len() + n, 0);
    }

    fn check_offset(&self, v: u64) -> Result<(), WriteError> {
        if !self.wide && v > u32::MAX as u64 {
            return Err(self.err(format!(
                "offset {v} does not fit the 32-bit record headers of FBX 7.4: write 7.5"
            )));
        }
        Ok(())
    }

    fn put_field(&mut self, at: usize, v: u64) -> Result<(), WriteError> {
        self.check_offset(v)?;
        if self.wide {
            self.out[at..at + 8].copy_from_slice(&v.to_le_bytes());
        } else {
            self.out[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
        }
        Ok(())
    }

    fn record(&mut self, r: &Record) -> Result<(), WriteError> {
        self.path.push(r.name.clone());
        if r.name.len() > 255 {
            return Err(self.err(format!("record name is {} bytes, at most 255", r.name.len())));
        }
        let start = self.out.len();
        let hl = self.header_len();
        self.out.resize(start + hl, 0);
        self.out[start + hl - 1] = r.name.len() as u8;
        self.out.extend_from_slice(r.name.as_bytes());
        let props_start = self.out.len();
        for v in &r.values {
            self.value(v)?;
        }
        let props_len = (self.out.len() - props_start) as u64;
        for c in &r.children {
            self.record(c)?;
        }
        if !r.children.is_empty() || r.values.is_empty() {
            self.null_record();
        }
        let end = self.out.len() as u64;
        let f = if self.wide { 8 } else { 4 };
        self.put_field(start, end)?;
        self.put_field(start + f, r.values.len() as u64)?;
        self.put_field(start + 2 * f, props_len)?;
        self.path.pop();
        Ok(())
    }

    fn value(&mut self, v: &Value) -> Result<(), WriteError> {
        let o = &mut self.out;
        match v {
            Value::Bool(b) => o.extend_from_slice(&[b'C', *b as u8]),
            Value::Char(c) => o.extend_from_slice(&[b'C', *c]),
            Value::I16(x) => {
                o.push(b'Y');
                o.extend_from_slice(&x.to_le_bytes());
            }
            Value::I32(x) => {
                o.push(b'I');
                o.extend_from_slice(&x.to_le_bytes());
            }
            Value::I64(x) => {
                o.push(b'L');
                o.extend_from_slice(&x.to_le_bytes());
            }
            Value::F32(x) => {
                o.push(b'F');
                o.extend_from_slice(&x.to_le_bytes());
            }
            Value::F64(x) => {
                o.push(b'D');
                o.extend_from_slice(&x.to_le_bytes());
            }
            Value::String(s) | Value::Raw(s) => {
                let len = u32::try_from(s.len())
                    .map_err(|_| self.err(format!("a {}-byte string", s.len())))?;
                let o = &mut self.out;
                o.push(if matches!(v, Value::String(_)) { b'S' } else { b'R' });
                o.extend_from_slice(&len.to_le_bytes());
                o.extend_from_slice(s);
            }
            Value::BoolArray(a) => {
                let data: Vec<u8> = a.iter().map(|&b| b as u8).collect();
                self.array(b'b', a.len(), &data)?;
            }
            Value::I32Array(a) => {
                let data: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
                self.array(b'i', a.len(), &data)?;
            }
            Value::I64Array(a) => {
                let data: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
                self.array(b'l', a.len(), &data)?;
            }
            Value::F32Array(a) => {
                let data: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
                self.array(b'f', a.len(), &data)?;
            }
            Value::F64Array(a) => {
                let data: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
                self.array(b'd', a.len(), &data)?;
            }
        }
        Ok(())
    }

    fn array(&mut self, code: u8, count: usize, data: &[u8]) -> Result<(), WriteError> {
        let too_big = |w: &Self, what: &str, n: usize| {
            w.err(format!("an array of {n} {what} does not fit its 32-bit header"))
        };
        let count = u32::try_from(count).map_err(|_| too_big(self, "elements", count))?;
        let zlib = data.len() >= self.compress_from;
        let stored: Vec<u8>;
        let bytes = if zlib {
            let c = self
                .compressor
                .get_or_insert_with(|| libdeflater::Compressor::new(Default::default()));
            let mut buf = vec![0; c.zlib_compress_bound(data.len())];
            let n = c
                .zlib_compress(data, &mut buf)
                .map_err(|e| WriteError { path: self.path.clone(), what: format!("zlib: {e}") })?;
            buf.truncate(n);
            stored = buf;
            &stored[..]
        } else {
            data
        };
        let len = u32::try_from(bytes.len()).map_err(|_| too_big(self, "bytes", bytes.len()))?;
        let o = &mut self.out;
        o.push(code);
        o.extend_from_slice(&count.to_le_bytes());
        o.extend_from_slice(&(zlib as u32).to_le_bytes());
        o.extend_from_slice(&len.to_le_bytes());
        o.extend_from_slice(bytes);
        Ok(())
    }
}

/// The most bytes a 32-bit (7.4) binary layout of `roots` can take, with arrays of at least
/// `compress_from` bytes counted at zlib's worst case: when this passes 2³²−1 an offset could
/// too, and the file must be 7.5 ([`encode`] would refuse it as 7.4).
pub fn upper_bound_32(roots: &[Record], compress_from: usize) -> u64 {
    fn value(v: &Value, compress_from: usize) -> u64 {
        let array = |n: usize, size: usize| {
            let data = (n * size) as u64;
            let stored = if n * size >= compress_from { data + data / 16 + 64 } else { data };
            13 + stored
        };
        match v {
            Value::Bool(_) | Value::Char(_) => 2,
            Value::I16(_) => 3,
            Value::I32(_) | Value::F32(_) => 5,
            Value::I64(_) | Value::F64(_) => 9,
            Value::String(s) | Value::Raw(s) => 5 + s.len() as u64,
            Value::BoolArray(a) => array(a.len(), 1),
            Value::I32Array(a) => array(a.len(), 4),
            Value::F32Array(a) => array(a.len(), 4),
            Value::I64Array(a) => array(a.len(), 8),
            Value::F64Array(a) => array(a.len(), 8),
        }
    }
    fn record(r: &Record, compress_from: usize) -> u64 {
        let values: u64 = r.values.iter().map(|v| value(v, compress_from)).sum();
        let children: u64 = r.children.iter().map(|c| record(c, compress_from)).sum();
        13 + r.name.len() as u64 + values + children + 13
    }
    let body: u64 = roots.iter().map(|r| record(r, compress_from)).sum();
    27 + body + 13 + 16 + 20 + 4 + 120 + 16
}

/// Encodes `roots` as an ASCII FBX file of `version` (7400: `; FBX 7.4.0 project file`), laid
/// out as the FBX SDK writes ASCII and as ufbx's ASCII lexer and [`super::ascii`] read it:
///
/// - one record a line, `Name: values`, tab-indented; a record with children *or no values*
///   gets ` {` … `}` (the binary null-record rule);
/// - values separated by `,`, a space before each string after the first
///   (`P: "UpAxis", "int", "Integer", "",1`, as the SDK);
/// - integers in decimal; `F`/`D` numbers by [`float_text`] (shortest round trip, no locale);
///   `C` values as the SDK's bare `T`/`F`-style letter when the byte is a letter (`Shading: T`),
///   else as 0/1;
/// - strings quoted; `"` → `&quot;`, CR → `&cr;`, LF → `&lf;` (the escapes ufbx reads; `&`
///   has none and is written as is); binary object names `Name\0\x01Class` become
///   `Class::Name`; a NUL byte otherwise is an error (ASCII strings cannot hold one);
/// - raw (`R`) values as one base64 string (RFC 4648, padded), as the SDK writes `Content`;
/// - arrays as `*N {` / `a: v,v,…` / `} `, which must be the record's only value; from 7200 on,
///   the f32 array of `KeyAttrDataFloat` as the `i32`s of its bit patterns (the SDK's ASCII
///   files do so, as some of the four words are packed integers; ufbx and
///   [`super::animation`] read them back so).
///
/// Errors name the record path, as [`encode`]'s.
pub fn encode_ascii(roots: &[Record], version: u32) -> Result<Vec<u8>, WriteError> {
    let mut out = Vec::with_capacity(1 << 16);
    let (major, minor) = (version / 1000, version % 1000 / 100);
    out.extend_from_slice(format!("; FBX {major}.{minor}.0 project file\n").as_bytes());
    out.extend_from_slice(b"; ----------------------------------------------------\n\n");
    let mut path = Vec::new();
    for r in roots {
        ascii_record(&mut out, r, 0, &mut path, version)?;
    }
    Ok(out)
}

fn ascii_record(
    out: &mut Vec<u8>,
    r: &Record,
    depth: usize,
    path: &mut Vec<String>,
    version: u32,
) -> Result<(), WriteError> {
    path.push(r.name.clone());
    let err = |path: &Vec<String>, what: String| WriteError { path: path.clone(), what };
    if r.name.is_empty()
        || !r.name.bytes().all(|b| b.is_ascii_graphic() && !b":,{}\";*".contains(&b))
    {
        return Err(err(path, format!("record name \"{}\" is not an ASCII FBX name", r.name)));
    }
    let indent = |out: &mut Vec<u8>, d: usize| out.resize(out.len() + d, b'\t');
    indent(out, depth);
    out.extend_from_slice(r.name.as_bytes());
    out.extend_from_slice(b": ");
    let arrays = r.values.iter().filter(|v| ascii_array(v).is_some()).count();
    if arrays > 0 && r.values.len() > 1 {
        return Err(err(path, "an array must be the record's only value in ASCII FBX".into()));
    }
    for (i, v) in r.values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
            if matches!(v, Value::String(_) | Value::Raw(_)) {
                out.push(b' ');
            }
        }
        let bits = match v {
            Value::F32Array(a) if r.name == "KeyAttrDataFloat" && version >= 7200 => {
                Some(Value::I32Array(a.iter().map(|x| x.to_bits() as i32).collect()))
            }
            _ => None,
        };
        if let Some((n, items)) = ascii_array(bits.as_ref().unwrap_or(v)) {
            out.extend_from_slice(format!("*{n} {{\n").as_bytes());
            indent(out, depth + 1);
            out.extend_from_slice(b"a: ");
            out.extend_from_slice(items.as_bytes());
            out.push(b'\n');
            indent(out, depth);
            out.extend_from_slice(b"} ");
            continue;
        }
        ascii_scalar(out, v).map_err(|what| err(path, what))?;
    }
    if !r.children.is_empty() || r.values.is_empty() {
        out.extend_from_slice(b" {\n");
        for c in &r.children {
            ascii_record(out, c, depth + 1, path, version)?;
        }
        indent(out, depth);
        out.push(b'}');
    }
    out.push(b'\n');
    path.pop();
    Ok(())
}

fn ascii_scalar(out: &mut Vec<u8>, v: &Value) -> Result<(), String> {
    match v {
        Value::Bool(b) => out.push(if *b { b'1' } else { b'0' }),
        Value::Char(c) if c.is_ascii_alphabetic() => out.push(*c),
        Value::Char(c) => out.extend_from_slice(c.to_string().as_bytes()),
        Value::I16(x) => out.extend_from_slice(x.to_string().as_bytes()),
        Value::I32(x) => out.extend_from_slice(x.to_string().as_bytes()),
        Value::I64(x) => out.extend_from_slice(x.to_string().as_bytes()),
        Value::F32(x) => out.extend_from_slice(float_text(*x as f64, Some(*x)).as_bytes()),
        Value::F64(x) => out.extend_from_slice(float_text(*x, None).as_bytes()),
        Value::String(s) => {
            let swapped;
            let s = match s.windows(2).position(|w| w == b"\x00\x01") {
                Some(at) => {
                    swapped = [&s[at + 2..], b"::", &s[..at]].concat();
                    &swapped[..]
                }
                None => &s[..],
            };
            out.push(b'"');
            for &b in s {
                match b {
                    b'"' => out.extend_from_slice(b"&quot;"),
                    b'\r' => out.extend_from_slice(b"&cr;"),
                    b'\n' => out.extend_from_slice(b"&lf;"),
                    0 => return Err("a string holds a NUL byte, which ASCII FBX cannot".into()),
                    b => out.push(b),
                }
            }
            out.push(b'"');
        }
        Value::Raw(bytes) => {
            out.push(b'"');
            base64_into(out, bytes);
            out.push(b'"');
        }
        _ => return Err("an array among other values (ASCII holds it alone)".into()),
    }
    Ok(())
}

/// An array value's count and its items joined by `,`; `None` for a scalar.
fn ascii_array(v: &Value) -> Option<(usize, String)> {
    fn join<T>(a: &[T], f: impl Fn(&T) -> String) -> String {
        let mut s = String::with_capacity(a.len() * 4);
        for (i, x) in a.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&f(x));
        }
        s
    }
    Some(match v {
        Value::BoolArray(a) => (a.len(), join(a, |&b| (b as u8).to_string())),
        Value::I32Array(a) => (a.len(), join(a, i32::to_string)),
        Value::I64Array(a) => (a.len(), join(a, i64::to_string)),
        Value::F32Array(a) => (a.len(), join(a, |&x| float_text(x as f64, Some(x)))),
        Value::F64Array(a) => (a.len(), join(a, |&x| float_text(x, None))),
        _ => return None,
    })
}

/// A number as ASCII FBX text, locale-free, in the shortest form that reads back to the same
/// value (`as_f32`: the value is an f32 and the digits need only round-trip through f32):
/// Rust's `{}` (shortest round-trip digits, no exponent, integers without `.0` as the SDK
/// prints `1`) or `{:e}` (`1e-7`), whichever is shorter; integral values of 2⁵³ or more always
/// take the exponent form, so that no reader takes them for an integer past 64 bits. Infinities
/// are `inf`/`-inf` and NaN is `nan` (spellings ufbx and [`super::ascii`] read as numbers).
pub fn float_text(x: f64, as_f32: Option<f32>) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 && x.is_sign_negative() {
        // `-0` would read as the integer 0; keep the sign.
        return "-0.0".into();
    }
    let (plain, exp) = match as_f32 {
        Some(f) => (format!("{f}"), format!("{f:e}")),
        None => (format!("{x}"), format!("{x:e}")),
    };
    if exp.len() < plain.len() || (x.fract() == 0.0 && x.abs() >= 9_007_199_254_740_992.0) {
        exp
    } else {
        plain
    }
}

/// Appends the base64 (RFC 4648 standard alphabet, `=` padding) of `bytes`.
fn base64_into(out: &mut Vec<u8>, bytes: &[u8]) {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[(v >> (18 - 6 * k) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::fbx::{self, ArrayType, NodeRef, Property};
    use crate::limits::Limits;

    fn sample() -> Vec<Record> {
        vec![
            Record::new("FBXHeaderExtension")
                .child(Record::one("FBXHeaderVersion", 1003))
                .child(Record::one("FBXVersion", 7400))
                .child(Record::new("Empty")),
            Record::with("FileId", vec![Value::Raw(FILE_ID.to_vec())]),
            Record::one("CreationTime", CREATION_TIME),
            Record::new("References"),
            Record::new("Objects").child(
                Record::with(
                    "Geometry",
                    vec![
                        Value::I64(1234567890123),
                        Value::String(b"Cube\x00\x01Geometry".to_vec()),
                        Value::str("Mesh"),
                    ],
                )
                .child(Record::with(
                    "Vertices",
                    vec![Value::F64Array((0..300).map(|i| i as f64 * 0.25 - 7.0).collect())],
                ))
                .child(Record::with("PolygonVertexIndex", vec![Value::I32Array(vec![0, 1, -3])]))
                .child(Record::with(
                    "Mixed",
                    vec![
                        Value::Bool(true),
                        Value::Char(b'T'),
                        Value::I16(-5),
                        Value::F32(1.5),
                        Value::F64(-0.0),
                        Value::BoolArray(vec![true, false]),
                        Value::I64Array(vec![46186158000, -1]),
                        Value::F32Array(vec![0.5; 40]),
                    ],
                )),
            ),
        ]
    }

    /// Our reader's view of a value (the tree both encodings produce), for comparison.
    fn same(p: &Property<'_>, v: &Value) -> bool {
        let arr = |ty: ArrayType, want: Vec<f64>| {
            p.as_array().is_some_and(|a| a.ty() == ty && a.to_f64_vec().unwrap() == want)
        };
        match v {
            Value::Bool(b) => *p == Property::Bool(*b as u8),
            Value::Char(c) => *p == Property::Bool(*c),
            Value::I16(x) => *p == Property::I16(*x),
            Value::I32(x) => *p == Property::I32(*x),
            Value::I64(x) => *p == Property::I64(*x),
            Value::F32(x) => matches!(p, Property::F32(y) if y.to_bits() == x.to_bits()),
            Value::F64(x) => matches!(p, Property::F64(y) if y.to_bits() == x.to_bits()),
            Value::String(s) => matches!(p, Property::String(t) if &t[..] == &s[..]),
            Value::Raw(s) => p.as_raw() == Some(&s[..]),
            Value::BoolArray(a) => {
                arr(ArrayType::Bool, a.iter().map(|&b| b as u8 as f64).collect())
            }
            Value::I32Array(a) => arr(ArrayType::I32, a.iter().map(|&x| x as f64).collect()),
            Value::I64Array(a) => arr(ArrayType::I64, a.iter().map(|&x| x as f64).collect()),
            Value::F32Array(a) => arr(ArrayType::F32, a.iter().map(|&x| x as f64).collect()),
            Value::F64Array(a) => arr(ArrayType::F64, a.clone()),
        }
    }

    fn assert_same(node: NodeRef<'_, '_>, r: &Record) {
        assert_eq!(node.name(), r.name);
        assert_eq!(node.properties().len(), r.values.len(), "{}", r.name);
        for (p, v) in node.properties().iter().zip(&r.values) {
            assert!(same(p, v), "{}: read {p:?}, wrote {v:?}", r.name);
        }
        let kids: Vec<_> = node.children().collect();
        assert_eq!(kids.len(), r.children.len(), "{}", r.name);
        for (k, c) in kids.into_iter().zip(&r.children) {
            assert_same(k, c);
        }
    }

    #[test]
    fn our_reader_reads_what_we_write_into_the_same_tree_7400_and_7500() {
        let roots = sample();
        for version in [7400, 7500] {
            for compress_from in [0, 128, usize::MAX] {
                let bytes = encode(&roots, &BinaryOptions { version, compress_from }).unwrap();
                let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
                assert_eq!(doc.version, version);
                assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
                let read: Vec<_> = doc.roots().collect();
                assert_eq!(read.len(), roots.len());
                for (n, r) in read.into_iter().zip(&roots) {
                    assert_same(n, r);
                }
                let v = doc.find(&["Objects", "Geometry", "Vertices"]).unwrap();
                let a = v.property(0).unwrap().as_array().unwrap();
                assert_eq!(a.was_compressed(), compress_from <= 2400, "{compress_from}");
            }
        }
    }

    #[test]
    fn records_and_null_records_follow_the_sdk_layout() {
        // Hand-computed: "References" with no values, no children: 13-byte header, the name
        // (10 bytes), then a 13-byte null record; end offset 27 + 13 + 10 + 13 = 63.
        let bytes = encode(&[Record::new("References")], &BinaryOptions::default()).unwrap();
        assert_eq!(&bytes[27..31], &63u32.to_le_bytes());
        assert_eq!(&bytes[31..39], &[0; 8]);
        assert_eq!(bytes[39], 10);
        assert_eq!(&bytes[40..50], b"References");
        assert_eq!(&bytes[50..63], &[0; 13]);
        // Then the top level's null record, the footer id at 76.
        assert_eq!(&bytes[63..76], &[0; 13]);
        assert_eq!(&bytes[76..92], &FOOTER_ID);
        // 92 mod 16 = 12: 20 − 12 = 8 zeros, the version at 100 (4 mod 16, as the SDK).
        assert_eq!(&bytes[92..100], &[0; 8]);
        assert_eq!(&bytes[100..104], &7400u32.to_le_bytes());
        assert_eq!(&bytes[104..224], &[0; 120][..]);
        assert_eq!(&bytes[224..], &FOOTER_TAIL);
        assert_eq!(bytes.len() % 16, 0);
        // A record with a value and no children gets no null record (SDK: `Version: 1000`).
        let bytes = encode(&[Record::one("V", 1000)], &BinaryOptions::default()).unwrap();
        assert_eq!(&bytes[27..31], &(27u32 + 13 + 1 + 5).to_le_bytes());
    }

    #[test]
    fn the_footer_matches_an_sdk_written_file_byte_for_byte() {
        // maya_cube_7400_binary.fbx (FBX SDK 2019.2): its bytes from the closing null record
        // on, as measured with a hex dump: footer id at 19981, 7 zeros, 7400, 120 zeros, tail.
        let mut sdk = vec![0u8; 13];
        sdk.extend_from_slice(&[
            0xfa, 0xbc, 0xa9, 0x08, 0xd3, 0xca, 0xd7, 0x65, 0xb0, 0x77, 0xfc, 0x83, 0x19, 0xfc,
            0x2d, 0x7b,
        ]);
        sdk.extend_from_slice(&[0; 7]);
        sdk.extend_from_slice(&[0xe8, 0x1c, 0, 0]);
        sdk.extend_from_slice(&[0; 120]);
        sdk.extend_from_slice(&[
            0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f,
            0x29, 0x0b,
        ]);
        // A record padded so the top-level null record starts at 19981 - 13 = 19968 as there.
        let payload = 19968 - 27 - 13 - 1 - 5;
        let roots = [Record::with("X", vec![Value::Raw(vec![7; payload])])];
        let bytes =
            encode(&roots, &BinaryOptions { version: 7400, compress_from: usize::MAX }).unwrap();
        assert_eq!(bytes.len(), 20144, "the SDK file's length");
        assert_eq!(&bytes[19968..], &sdk[..]);
    }

    #[test]
    fn a_name_over_255_bytes_is_an_error_naming_the_record() {
        let roots = [Record::new("Objects").child(Record::new("N".repeat(300)))];
        let e = encode(&roots, &BinaryOptions::default()).unwrap_err();
        assert_eq!(e.path.len(), 2);
        assert!(e.to_string().contains("300 bytes, at most 255"), "{e}");
    }

    /// Our reader's view of a value written as ASCII: numbers by value, names as `Class::Name`,
    /// raw bytes as their base64 text, letters as bare words.
    fn same_ascii(p: &Property<'_>, v: &Value) -> bool {
        let num =
            |want: f64| p.as_f64().is_some_and(|x| x == want || (x.is_nan() && want.is_nan()));
        let arr = |want: Vec<f64>| p.as_array().is_some_and(|a| a.to_f64_vec().unwrap() == want);
        let text = |want: &[u8]| matches!(p, Property::String(t) if &t[..] == want);
        match v {
            Value::Bool(b) => num(*b as u8 as f64),
            Value::Char(c) => text(&[*c]),
            Value::I16(x) => num(*x as f64),
            Value::I32(x) => num(*x as f64),
            Value::I64(x) => num(*x as f64),
            // An f32 is written by its f32 digits: it reads back as that f32.
            Value::F32(x) => p.as_f64().is_some_and(|y| y as f32 == *x),
            Value::F64(x) => {
                num(*x) && p.as_f64().unwrap().is_sign_negative() == x.is_sign_negative()
            }
            Value::String(s) => match s.windows(2).position(|w| w == b"\x00\x01") {
                Some(at) => text(&[&s[at + 2..], b"::", &s[..at]].concat()),
                None => text(s),
            },
            Value::Raw(s) => {
                let mut b64 = Vec::new();
                base64_into(&mut b64, s);
                text(&b64)
            }
            Value::BoolArray(a) => arr(a.iter().map(|&b| b as u8 as f64).collect()),
            Value::I32Array(a) => arr(a.iter().map(|&x| x as f64).collect()),
            Value::I64Array(a) => arr(a.iter().map(|&x| x as f64).collect()),
            Value::F32Array(a) => p.as_array().is_some_and(|r| {
                r.to_f64_vec().unwrap().iter().map(|&y| y as f32).collect::<Vec<_>>() == *a
            }),
            Value::F64Array(a) => arr(a.clone()),
        }
    }

    fn assert_same_ascii(node: NodeRef<'_, '_>, r: &Record) {
        assert_eq!(node.name(), r.name);
        assert_eq!(node.properties().len(), r.values.len(), "{}", r.name);
        for (p, v) in node.properties().iter().zip(&r.values) {
            assert!(same_ascii(p, v), "{}: read {p:?}, wrote {v:?}", r.name);
        }
        let kids: Vec<_> = node.children().collect();
        assert_eq!(kids.len(), r.children.len(), "{}", r.name);
        for (k, c) in kids.into_iter().zip(&r.children) {
            assert_same_ascii(k, c);
        }
    }

    #[test]
    fn our_ascii_reader_reads_what_we_write_as_ascii() {
        // ASCII holds an array only as its record's only value: the sample's arrays beside
        // other values move to records of their own.
        fn split(r: &mut Record) {
            if r.values.len() > 1 {
                let (arrays, scalars) = r.values.drain(..).partition(|v| ascii_array(v).is_some());
                r.values = scalars;
                let arrays: Vec<Value> = arrays;
                r.children.extend(arrays.into_iter().map(|a| Record::with("Array", vec![a])));
            }
            r.children.iter_mut().for_each(split);
        }
        let mut roots = sample();
        roots.iter_mut().for_each(split);
        roots.push(Record::with(
            "Odd",
            vec![
                Value::str("say \"hi\"\r\nA&B"),
                Value::F64(1e300),
                Value::F64(-0.0),
                Value::F64(0.1),
                Value::F32(0.1),
                Value::F64(f64::MIN_POSITIVE),
                Value::F64(9_007_199_254_740_993.0),
            ],
        ));
        roots.push(Record::with("Empty", vec![Value::F64Array(vec![])]));
        let bytes = encode_ascii(&roots, 7400).unwrap();
        assert!(bytes.starts_with(b"; FBX 7.4.0 project file\n"));
        let doc = fbx::parse(&bytes, &Limits::default()).unwrap();
        assert_eq!((doc.version, doc.encoding), (7400, fbx::Encoding::Ascii));
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        let read: Vec<_> = doc.roots().collect();
        assert_eq!(read.len(), roots.len());
        for (n, r) in read.into_iter().zip(&roots) {
            assert_same_ascii(n, r);
        }
    }

    #[test]
    fn ascii_layout_follows_the_sdk() {
        // Lines as in the SDK-written maya_cube_7400_ascii.fbx.
        let roots = [
            Record::new("References"),
            Record::new("Objects").child(
                Record::with(
                    "Geometry",
                    vec![Value::I64(140), name(b"Cube", "Geometry"), "Mesh".into()],
                )
                .child(Record::with("Vertices", vec![Value::F64Array(vec![-0.5, 0.5, 2.0])]))
                .child(p70()),
            ),
            Record::with("Model", vec![Value::Char(b'T'), Value::I32(1)]),
        ];
        let text = String::from_utf8(encode_ascii(&roots, 7500).unwrap()).unwrap();
        let want = "; FBX 7.5.0 project file\n\
            ; ----------------------------------------------------\n\n\
            References:  {\n}\n\
            Objects:  {\n\
            \tGeometry: 140, \"Geometry::Cube\", \"Mesh\" {\n\
            \t\tVertices: *3 {\n\t\t\ta: -0.5,0.5,2\n\t\t} \n\
            \t\tProperties70:  {\n\t\t\tP: \"UpAxis\", \"int\", \"Integer\", \"\",1\n\t\t}\n\
            \t}\n\
            }\n\
            Model: T,1\n";
        assert_eq!(text, want);
    }

    fn name(n: &[u8], class: &str) -> Value {
        Value::String([n, b"\x00\x01", class.as_bytes()].concat())
    }

    fn p70() -> Record {
        Record::new("Properties70").child(Record::with(
            "P",
            vec!["UpAxis".into(), "int".into(), "Integer".into(), "".into(), Value::I32(1)],
        ))
    }

    #[test]
    fn key_attr_data_float_is_written_as_its_bit_patterns_from_7200() {
        // maya_*_7500_ascii.fbx: `a: …,218434821,0` for the default weights 0x0D050D05.
        let w = f32::from_bits(0x0D05_0D05);
        let r = Record::with("KeyAttrDataFloat", vec![Value::F32Array(vec![1.5, 0.0, w, 0.0])]);
        let text =
            String::from_utf8(encode_ascii(std::slice::from_ref(&r), 7400).unwrap()).unwrap();
        assert!(text.contains("a: 1069547520,0,218434821,0\n"), "{text}");
        let text = String::from_utf8(encode_ascii(&[r], 7100).unwrap()).unwrap();
        assert!(text.contains("a: 1.5,0,4.099946e-31,0\n"), "{text}");
    }

    #[test]
    fn numbers_print_in_the_shortest_exact_form() {
        // Hand-computed: Rust's shortest round-trip digits, the exponent form when shorter.
        assert_eq!(float_text(1.0, None), "1");
        assert_eq!(float_text(-2.5, None), "-2.5");
        assert_eq!(float_text(0.1, None), "0.1");
        assert_eq!(float_text(0.1f32 as f64, Some(0.1)), "0.1");
        assert_eq!(float_text(0.1f32 as f64, None), "0.10000000149011612");
        assert_eq!(float_text(1e-7, None), "1e-7");
        assert_eq!(float_text(1e20, None), "1e20");
        assert_eq!(float_text(123456.0, None), "123456");
        assert_eq!(float_text(2f64.powi(60) + 2f64.powi(10), None), "1.152921504606848e18");
        assert_eq!(float_text(-0.0, None), "-0.0");
        assert_eq!(float_text(f64::NAN, None), "nan");
        for x in [0.1, 1.0 / 3.0, 6.02214076e23, 5e-324, f64::MAX, -1e-300] {
            let t = float_text(x, None);
            assert_eq!(t.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{t}");
        }
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (plain, text) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")]
        {
            let mut out = Vec::new();
            base64_into(&mut out, plain.as_bytes());
            assert_eq!(out, text.as_bytes());
        }
    }

    #[test]
    fn ascii_refuses_nul_in_strings_and_arrays_beside_values() {
        let e = encode_ascii(&[Record::one("S", "a\0b")], 7400).unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        let r = Record::with("A", vec![Value::I32(1), Value::I32Array(vec![1])]);
        assert!(encode_ascii(&[r], 7400).is_err());
    }

    #[test]
    fn the_32_bit_bound_covers_the_encoded_length() {
        let roots = sample();
        for compress_from in [0, 128, usize::MAX] {
            let bytes = encode(&roots, &BinaryOptions { version: 7400, compress_from }).unwrap();
            assert!(upper_bound_32(&roots, compress_from) >= bytes.len() as u64);
        }
    }
}
