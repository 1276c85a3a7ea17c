//! Autodesk FBX: the binary and ASCII encodings parsed into one record tree, an object graph
//! over it, and the import into the scene model. Each layer is usable alone:
//!
//! - [`binary`]: header, node records, property decoding, zlib arrays (bytes → records).
//! - [`ascii`]: tokenizer and parser (text → records).
//! - [`tree`]: the record tree both produce: [`Document`], [`NodeRef`], [`Property`],
//!   [`Array`].
//! - [`objects`]: objects, properties with template defaults, connections and global
//!   settings ([`objects::ObjectGraph`]).
//! - [`cache`]: the geometry cache files `Cache` objects name (Maya `.xml` + `.mc`/`.mcx`,
//!   3ds Max `.pc2`): bytes → timed channels. They live here, not as a format of their own,
//!   because only FBX files refer to them and a format never imports another.
//! - [`media`]: the bytes of embedded images (`Video` › `Content`, binary or base64).
//! - [`import`]: object graph → [`crate::scene::Scene`], the only module that knows the scene
//!   model (a folder of passes, one file per thing it builds); [`animation`] adds the
//!   animation stacks to it.
//!
//! [`parse`] picks the encoding from the first bytes; [`dump`] prints the tree as
//! `keyscene inspect --raw` shows it; [`read`] does all of it.
//!
//! ```
//! use keyscene::formats::fbx;
//! let text = b"; FBX 7.4.0 project file\nFBXHeaderExtension: { FBXVersion: 7400 }\n";
//! let doc = fbx::parse(text, &Default::default()).unwrap();
//! assert_eq!(doc.version, 7400);
//! assert_eq!(doc.find(&["FBXHeaderExtension", "FBXVersion"]).unwrap().property(0).unwrap().as_i64(), Some(7400));
//! ```

pub mod animation;
pub mod ascii;
pub mod binary;
pub mod cache;
mod decimal;
pub mod export;
pub mod import;
pub mod media;
pub mod objects;
mod shading;
mod shared;
pub mod tree;
pub mod write;

use std::fmt::{self, Write as _};

pub use import::read;
pub use tree::{Array, ArrayType, Children, Document, Encoding, NodeId, NodeRef, Property};

use crate::limits::Limits;

/// Oldest version this reader is written for (FBX 6.1). Older files are read best-effort with
/// a [`Warning::UnsupportedVersion`]; binary ones whose records break off are kept up to the
/// break ([`Warning::Partial`]).
pub const OLDEST_SUPPORTED: u32 = 6100;

/// Newest version this reader is written for (FBX 7.7). Newer files are read with a
/// [`Warning::UnsupportedVersion`], as ufbx does.
pub const NEWEST_SUPPORTED: u32 = 7700;

/// The first 18 bytes of [`binary::MAGIC`], enough to tell a binary file.
const MAGIC_PREFIX: &[u8] = b"Kaydara FBX Binary";

/// Parses an FBX file, binary or ASCII, into its record tree.
///
/// Binary when `bytes` starts with `Kaydara FBX Binary` (a file that starts so but does not
/// carry the exact 23-byte header, such as a copy mangled by a text-mode transfer, is an
/// error, not ASCII; one shorter than those 18 bytes that starts like them is a truncated
/// binary header); ASCII otherwise. Bytes that are neither (no binary header, and no ASCII
/// record before the first thing the grammar rejects) are [`ErrorKind::NotFbx`]. Nothing is allocated from a count in the file before
/// that count is checked against the bytes left and against `limits`.
pub fn parse<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Document<'a>, Error> {
    if bytes.len() as u64 > limits.max_bytes {
        return Err(Error::new(
            0,
            ErrorKind::Limit {
                what: "file bytes",
                requested: bytes.len() as u64,
                limit: limits.max_bytes,
            },
        ));
    }
    // A file shorter than the magic that starts like it is a binary header cut short.
    let binary = bytes.starts_with(b"Kaydara FBX Binary")
        || (bytes.len() < 18 && !bytes.is_empty() && MAGIC_PREFIX.starts_with(bytes));
    let mut doc = if binary { binary::parse(bytes, limits)? } else { ascii::parse(bytes, limits)? };
    // The arenas grew by doubling; the tree lives through the whole import, so give back the
    // slack (up to half of them) before the object graph and the scene are built.
    doc.nodes.shrink_to_fit();
    doc.props.shrink_to_fit();
    Ok(doc)
}

/// An FBX file could not be parsed: where (byte offset, record path) and what.
///
/// Displays as `fbx: Objects › Geometry › Vertices at byte 0x1234: …`.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// Byte offset in the input where the problem was found.
    pub offset: u64,
    /// Names of the enclosing records, outermost first (empty at the top level).
    pub path: Vec<String>,
    /// What went wrong.
    pub kind: ErrorKind,
    /// ASCII files: the 1-based line and column of [`Error::offset`].
    pub line_column: Option<(u32, u32)>,
}

impl Error {
    pub(crate) fn new(offset: u64, kind: ErrorKind) -> Self {
        Error { offset, path: Vec::new(), kind, line_column: None }
    }

    /// The error with the path of `node` (the record whose value it is about).
    pub(crate) fn in_record(mut self, node: NodeRef<'_, '_>) -> Self {
        self.path = node.path();
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fbx: ")?;
        for (i, name) in self.path.iter().enumerate() {
            if i > 0 {
                f.write_str(" › ")?;
            }
            f.write_str(name)?;
        }
        if !self.path.is_empty() {
            f.write_char(' ')?;
        }
        match self.line_column {
            Some((line, column)) => {
                write!(
                    f,
                    "at line {line}, column {column} (byte {:#x}): {}",
                    self.offset, self.kind
                )
            }
            None => write!(f, "at byte {:#x}: {}", self.offset, self.kind),
        }
    }
}

impl std::error::Error for Error {}

/// The kinds of [`Error`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ErrorKind {
    /// The data ends (file, record or property block) before a field does.
    #[error("needs {needed} bytes but {left} are left")]
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the enclosing record or file.
        left: u64,
    },
    /// The file ends (at byte `file_len`) before something it announced: a record's
    /// declared end, its properties, the binary header, or the `}` of an ASCII record.
    #[error("the file is truncated at byte {file_len}: expected {expected}")]
    FileTruncated {
        /// Length of the file: where it stops.
        file_len: u64,
        /// What should have been there, in words.
        expected: String,
    },
    /// Neither a binary header nor ASCII records: not an FBX file at all.
    #[error("not an FBX file (no binary header, no ASCII records)")]
    NotFbx,
    /// The file ends before the `Objects` record every FBX 6/7 file has, so there is no
    /// scene to read ([`check_complete`]).
    #[error("the file ends at byte {file_len} without an Objects record{announced}")]
    MissingObjects {
        /// Length of the file.
        file_len: u64,
        /// What announced the objects, as a clause (`" (Definitions announce 12 objects)"`),
        /// or empty.
        announced: String,
    },
    /// The file starts like a binary FBX but the 23-byte header is wrong.
    #[error("not a binary FBX header (expected \"Kaydara FBX Binary  \\0\" then 0x1A)")]
    BadMagic,
    /// Header byte 22 is neither 0 (little-endian) nor 1 (big-endian).
    #[error("endianness byte is {0}, expected 0 or 1")]
    BadEndianness(u8),
    /// A record's end offset is not after its properties or not inside its parent.
    #[error("record end offset {end:#x} is outside {min:#x}..={max:#x}")]
    BadEndOffset {
        /// The end offset read.
        end: u64,
        /// The end of the record's properties.
        min: u64,
        /// The end of the parent record (or the file).
        max: u64,
    },
    /// A record's properties do not fill the byte count its header declares.
    #[error("properties declare {declared} bytes but take {used}")]
    PropertyLength {
        /// Declared property bytes.
        declared: u64,
        /// Bytes the properties took.
        used: u64,
    },
    /// A property type code other than `C B Z Y I L F D S R b c i l f d`.
    #[error("unknown property type {}", type_code(*.0))]
    UnknownPropertyType(u8),
    /// An array needs more bytes than its record holds (or, for zlib arrays, more than the
    /// stored bytes could inflate to).
    #[error(
        "array declares {count} elements ({bytes} bytes) but the record has {left} bytes left"
    )]
    ArrayTooLarge {
        /// Declared element count.
        count: u64,
        /// Bytes those elements need.
        bytes: u64,
        /// Bytes available.
        left: u64,
    },
    /// An array encoding other than 0 (raw) or 1 (zlib).
    #[error("array encoding {0} (known: 0 raw, 1 zlib)")]
    UnknownArrayEncoding(u32),
    /// The zlib stream of an array is corrupt. Found when the array is read (the parser
    /// leaves zlib arrays compressed: [`Array`]), with the array's byte offset.
    #[error("zlib: {0}")]
    Inflate(String),
    /// A zlib array inflated to a size other than the declared one (found when it is read,
    /// as [`ErrorKind::Inflate`]).
    #[error("zlib array inflated to {got} bytes, {expected} declared")]
    InflatedSize {
        /// Declared bytes.
        expected: u64,
        /// Bytes produced.
        got: u64,
    },
    /// Records nest deeper than [`Limits::max_depth`].
    #[error("records nest deeper than {max} levels")]
    TooDeep {
        /// The limit.
        max: u32,
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
    /// A node name that is not UTF-8.
    #[error("record name is not UTF-8")]
    BadName,
    /// ASCII: an unexpected token.
    #[error("expected {expected}, found {found}")]
    Syntax {
        /// What the grammar allows here.
        expected: &'static str,
        /// What is there (shortened).
        found: String,
    },
    /// ASCII: a quoted string that runs to the end of the file.
    #[error("string not closed before the end of the file")]
    UnterminatedString,
}

/// A problem the parser survived; returned in [`Document::warnings`].
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// The version is outside [`OLDEST_SUPPORTED`]..=[`NEWEST_SUPPORTED`].
    UnsupportedVersion(u32),
    /// A binary record with end offset 0 that is not a null record; read as having no
    /// children (see [`binary`]).
    ZeroEndOffset {
        /// Byte offset of the record.
        offset: u64,
    },
    /// The binary file ends between top-level records without a null record.
    MissingNullRecord {
        /// Where the file stopped making sense.
        offset: u64,
    },
    /// ASCII: an array `*N { a: … }` whose value count differs from N; the values read are
    /// kept.
    ArrayCountMismatch {
        /// Byte offset of the `*N`.
        offset: u64,
        /// N.
        declared: u64,
        /// Values read.
        found: u64,
    },
    /// The file broke off here; the records before it are kept (pre-6.1 binaries only).
    Partial(Error),
    /// The file ends (at byte `file_len`) after its `Objects` but before the `Connections`
    /// record: the objects are read but nothing connects them (no hierarchy, no materials
    /// or deformers on meshes, no animation targets). See [`check_complete`].
    MissingConnections {
        /// Length of the file.
        file_len: u64,
        /// Whether the file is a binary one without its closing null record (truncated).
        truncated: bool,
    },
    /// ASCII: numbers written in a form ufbx 0.23 reads but that cannot be taken at face
    /// value (inf/NaN spellings, integers past 64 bits, missing digits, words in number
    /// arrays); one warning per kind, naming the first (docs/fbx.md, "ASCII numbers").
    OddNumbers {
        /// Which kind.
        kind: ascii::OddNumber,
        /// Byte offset of the first.
        offset: u64,
        /// Its 1-based line.
        line: u32,
        /// Its 1-based column (bytes).
        column: u32,
        /// Its text (at most 40 bytes).
        first: String,
        /// How many numbers of this kind the file has.
        count: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::UnsupportedVersion(v) => write!(
                f,
                "FBX version {v} is outside the versions this reader is written for \
                 ({OLDEST_SUPPORTED}..={NEWEST_SUPPORTED}); read best-effort"
            ),
            Warning::ZeroEndOffset { offset } => write!(
                f,
                "record at byte {offset:#x} has end offset 0 and is not a null record; \
                 read as having no children"
            ),
            Warning::MissingNullRecord { offset } => write!(
                f,
                "the file is truncated at byte {offset:#x}: expected the null record that \
                 ends the top-level records; the records before it are kept"
            ),
            Warning::ArrayCountMismatch { offset, declared, found } => write!(
                f,
                "array at byte {offset:#x} declares {declared} values but holds {found}; \
                 the {found} values read are kept"
            ),
            Warning::Partial(e) => write!(f, "{e}; the records before it are kept"),
            Warning::MissingConnections { file_len, truncated } => write!(
                f,
                "the file {} at byte {file_len} before its Connections record: the objects \
                 are read unconnected (no hierarchy, materials, deformers or animation)",
                if *truncated { "is truncated" } else { "ends" }
            ),
            Warning::OddNumbers { kind, offset, line, column, first, count } => write!(
                f,
                "{count} number(s) {kind}; the first, \"{first}\", at line {line}, column \
                 {column} (byte {offset:#x})"
            ),
        }
    }
}

/// A binary property type code in words: the character when printable, else its byte value.
fn type_code(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", char::from(b))
    } else {
        format!("byte {b:#04x}")
    }
}

/// The rule for files that end early (issue 17 §1), applied to both encodings after
/// [`parse`], by [`read`]: an FBX 6/7 file (version ≥ 6000) without an `Objects` record is an
/// error ([`ErrorKind::MissingObjects`], naming the objects its `Definitions` announce);
/// one with `Objects` but no `Connections` loads with [`Warning::MissingConnections`].
///
/// Where ufbx (0.23, `ufbxi_read_root`) stands: it reads the top-level records in order and
/// treats the end of an ASCII file between records as the end of the document, so
/// `head -c 3000 maya_cube_7400_ascii.fbx` (cut after `GlobalSettings`) loads there as an
/// empty scene with no warning; a binary file must reach its null record, any cut before it
/// fails ("Truncated file"). We keep ufbx's reading of what is there, but an FBX SDK file
/// always carries `Objects` and `Connections`, so their absence is reported instead of
/// passing silently: an error when nothing usable was read (no `Objects`), a warning when
/// the objects were (no `Connections`). The same rule holds for binary files (which also get
/// [`Warning::MissingNullRecord`] when they stop between records). Files older than 6000
/// (FBX 5, `Version5` layout) are read as they are.
pub fn check_complete(doc: &mut Document<'_>, file_len: u64) -> Result<(), Error> {
    let top = |name: &str| doc.roots().any(|n| n.name() == name);
    if doc.version == 0 && doc.encoding == Encoding::Ascii && !top("Objects") {
        // No version anywhere and no objects: ufbx (`sure_fbx` false) rejects such text as
        // "Not an FBX file" too.
        return Err(Error::new(0, ErrorKind::NotFbx));
    }
    if doc.version < 6000 && doc.version != 0 {
        return Ok(());
    }
    let truncated = doc.warnings.iter().any(|w| matches!(w, Warning::MissingNullRecord { .. }));
    if !top("Objects") {
        let announced: i64 = doc
            .find(&["Definitions"])
            .map(|d| {
                d.children()
                    .filter(|t| t.name() == "ObjectType")
                    .filter(|t| t.property(0).and_then(|p| p.as_str()) != Some("GlobalSettings"))
                    .filter_map(|t| t.children().find(|c| c.name() == "Count"))
                    .filter_map(|c| c.property(0).and_then(|p| p.as_i64()))
                    .filter(|&n| n > 0)
                    .sum()
            })
            .unwrap_or(0);
        let announced = match (announced, truncated) {
            (n, _) if n > 0 => format!(" (its Definitions announce {n} objects)"),
            (_, true) => " (a binary file without its closing null record: truncated)".into(),
            _ => String::new(),
        };
        return Err(Error::new(file_len, ErrorKind::MissingObjects { file_len, announced }));
    }
    if !top("Connections") {
        doc.warnings.push(Warning::MissingConnections { file_len, truncated });
    }
    Ok(())
}

/// Number of array elements [`dump`] prints before eliding the rest.
pub const DUMP_ARRAY_PREVIEW: usize = 6;

/// The tree as `keyscene inspect --raw` prints it: a header line, then one line per node,
/// indented two spaces per level, `Name: value, value` with strings quoted (non-printable
/// bytes as `\xNN`, the binary name separator `\0\x01` included) and arrays summarised as
/// `d[24] (zlib) 1, -1, …` (type code, count, whether stored compressed, first
/// [`DUMP_ARRAY_PREVIEW`] values; a zlib array that does not inflate shows
/// `<unreadable: …>` with the reason instead of values).
pub fn dump(doc: &Document<'_>) -> String {
    let mut out = String::new();
    let enc = match (doc.encoding, doc.big_endian) {
        (Encoding::Ascii, _) => "ASCII",
        (Encoding::Binary, false) => "binary, little-endian",
        (Encoding::Binary, true) => "binary, big-endian",
    };
    let _ = writeln!(
        out,
        "FBX {} ({}), {} nodes, {} properties",
        doc.version,
        enc,
        doc.node_count(),
        doc.property_count()
    );
    for w in &doc.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let mut stack: Vec<(NodeRef<'_, '_>, usize)> = doc.roots().map(|n| (n, 0)).collect();
    stack.reverse();
    while let Some((node, depth)) = stack.pop() {
        for _ in 0..depth {
            out.push_str("  ");
        }
        out.push_str(node.name());
        out.push(':');
        for (i, p) in node.properties().iter().enumerate() {
            out.push_str(if i == 0 { " " } else { ", " });
            write_property(&mut out, p, doc.encoding);
        }
        out.push('\n');
        let first = stack.len();
        stack.extend(node.children().map(|c| (c, depth + 1)));
        stack[first..].reverse();
    }
    out
}

/// Bytes of an ASCII `Key:` list's text shown by the dump.
const DUMP_TEXT_PREVIEW: usize = 48;

fn write_property(out: &mut String, p: &Property<'_>, encoding: Encoding) {
    let _ = match p {
        Property::Bool(b) => write!(
            out,
            "{}",
            if b.is_ascii_alphabetic() { format!("'{}'", *b as char) } else { b.to_string() }
        ),
        Property::U8(v) => write!(out, "{v}"),
        Property::I16(v) => write!(out, "{v}"),
        Property::I32(v) => write!(out, "{v}"),
        Property::I64(v) => write!(out, "{v}"),
        Property::F32(v) => write!(out, "{v}"),
        Property::F64(v) => write!(out, "{v}"),
        Property::String(s) => {
            out.push('"');
            write_escaped(out, s);
            out.push('"');
            Ok(())
        }
        Property::Raw(r) if encoding == Encoding::Ascii => {
            // The ASCII parser makes none (FBX 6 `Key:` lists are arrays, `ascii.rs` module
            // docs); shown as text should a document be built by hand.
            let _ = write!(out, "text[{}] \"", r.len());
            write_escaped(out, &r[..r.len().min(DUMP_TEXT_PREVIEW)]);
            out.push_str(if r.len() > DUMP_TEXT_PREVIEW { "…\"" } else { "\"" });
            Ok(())
        }
        Property::Raw(r) => write!(out, "raw[{}]", r.len()),
        Property::Array(a) => {
            let _ = write!(out, "{}[{}]", a.ty().code(), a.len());
            if a.was_compressed() {
                out.push_str(" (zlib)");
            }
            // Decoded whole (a zlib array is inflated to show its first values).
            let preview = match a.ty() {
                ArrayType::F32 | ArrayType::F64 => a.to_f64_vec().map(|v| {
                    v.iter().take(DUMP_ARRAY_PREVIEW).map(f64::to_string).collect::<Vec<_>>()
                }),
                _ => a.to_i64_vec().map(|v| {
                    v.iter().take(DUMP_ARRAY_PREVIEW).map(i64::to_string).collect::<Vec<_>>()
                }),
            };
            match preview {
                Ok(values) => {
                    for (i, v) in values.iter().enumerate() {
                        out.push_str(if i == 0 { " " } else { ", " });
                        out.push_str(v);
                    }
                }
                Err(e) => {
                    let _ = write!(out, " <unreadable: {}>", e.kind);
                    return;
                }
            }
            if a.len() > DUMP_ARRAY_PREVIEW {
                out.push_str(", …");
            }
            Ok(())
        }
    };
}

fn write_escaped(out: &mut String, s: &[u8]) {
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "; FBX 7.4.0 project file\nFBXHeaderExtension: { FBXVersion: 7400 }\n\
        Definitions: {\n ObjectType: \"GlobalSettings\" { Count: 1 }\n \
        ObjectType: \"Model\" { Count: 2 }\n ObjectType: \"Geometry\" { Count: 1 }\n}\n";

    fn read(text: &str) -> Result<(crate::scene::Scene, Vec<crate::scene::Warning>), Error> {
        super::read(text.as_bytes(), &Default::default())
    }

    /// Issue 17 §1: a file cut at a top-level record boundary before `Objects` (the
    /// `head -c 3000 maya_cube_7400_ascii.fbx` case) is an error naming what its Definitions
    /// announce (2 models + 1 geometry; GlobalSettings is no object), not an empty scene.
    #[test]
    fn a_file_that_ends_before_its_objects_is_an_error() {
        let e = read(HEAD).unwrap_err();
        let len = HEAD.len() as u64;
        assert_eq!(
            e.kind,
            ErrorKind::MissingObjects {
                file_len: len,
                announced: " (its Definitions announce 3 objects)".into()
            }
        );
        assert!(e.to_string().contains(&format!("ends at byte {len} without an Objects record")));
    }

    /// The objects were read but the file stops before `Connections`: usable, with a warning.
    #[test]
    fn a_file_that_ends_before_its_connections_loads_with_a_warning() {
        let text = format!("{HEAD}Objects: {{\n Model: 1, \"Model::a\", \"Null\" {{\n }}\n}}\n");
        let (scene, warnings) = read(&text).unwrap();
        assert_eq!(scene.nodes.len(), 1);
        assert!(
            warnings.iter().any(|w| w.message.contains("before its Connections record")),
            "{warnings:?}"
        );
        // With Connections: no such warning.
        let text = format!("{text}Connections: {{\n C: \"OO\", 1, 0\n}}\n");
        let (_, warnings) = read(&text).unwrap();
        assert!(!warnings.iter().any(|w| w.message.contains("Connections")), "{warnings:?}");
    }

    /// Text with no version anywhere and no objects is no FBX (ufbx: "Not an FBX file").
    #[test]
    fn records_without_a_version_or_objects_are_not_an_fbx_file() {
        assert_eq!(read("Foo: 1\nBar: 2\n").unwrap_err().kind, ErrorKind::NotFbx);
    }
}
