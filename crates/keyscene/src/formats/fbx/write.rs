//! Binary FBX writing, the low level: a tree of [`Record`]s → the bytes of a binary FBX 7.4 or
//! 7.5 file, laid out as the Autodesk FBX SDK writes it (records → bytes; the reverse of
//! [`super::binary`], which reads every file this module writes into the same tree).
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
            p.as_array().is_some_and(|a| a.ty() == ty && a.to_f64_vec() == want)
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
}
