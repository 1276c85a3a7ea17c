//! The record tree that both FBX encodings produce: [`Document`], [`NodeRef`], [`Property`],
//! [`Array`].
//!
//! Nodes live in one flat arena in pre-order (a node, then its whole subtree), each storing the
//! index just past its subtree, so the children of a node are found by hopping from subtree end
//! to subtree end. Properties of all nodes live in a second flat vector; a node owns a
//! contiguous range of it. Names, strings and raw arrays borrow from the input bytes; only
//! zlib-compressed arrays (binary) and escaped strings and arrays (ASCII) own their data.

use std::borrow::Cow;
use std::fmt;

/// How the file was encoded (seed 003, "Binary" and "ASCII").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `Kaydara FBX Binary  \0` records.
    Binary,
    /// Text: `Name: values { children }`.
    Ascii,
}

/// Element type of an [`Array`]; the binary type codes are `b i l f d` (and `c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayType {
    /// `b`: one byte per element, nonzero is true.
    Bool,
    /// `c`: unsigned bytes. Not in the seed's list; found in assimp's
    /// `boxWithCompressedCTypeArray.FBX` (thumbnail `ImageData`), which the FBX SDK reads.
    U8,
    /// `i`: signed 32-bit integers.
    I32,
    /// `l`: signed 64-bit integers.
    I64,
    /// `f`: IEEE 754 single precision.
    F32,
    /// `d`: IEEE 754 double precision.
    F64,
}

impl ArrayType {
    /// Bytes per element: 1, 4, 8, 4 or 8.
    pub fn size(self) -> usize {
        match self {
            ArrayType::Bool | ArrayType::U8 => 1,
            ArrayType::I32 | ArrayType::F32 => 4,
            ArrayType::I64 | ArrayType::F64 => 8,
        }
    }

    /// The binary type code (`b i l f d`).
    pub fn code(self) -> char {
        match self {
            ArrayType::Bool => 'b',
            ArrayType::U8 => 'c',
            ArrayType::I32 => 'i',
            ArrayType::I64 => 'l',
            ArrayType::F32 => 'f',
            ArrayType::F64 => 'd',
        }
    }
}

/// A typed array whose elements stay in their file byte order until read.
///
/// `data` holds exactly `len × ty.size()` bytes: borrowed from the file for uncompressed binary
/// arrays, owned for zlib-compressed ones (inflated once, at parse time) and for ASCII arrays
/// (which the ASCII parser stores little-endian). Elements are decoded on access, so a large
/// array that the importer never reads costs no conversion.
#[derive(Clone, PartialEq)]
pub struct Array<'a> {
    ty: ArrayType,
    big_endian: bool,
    compressed: bool,
    data: Cow<'a, [u8]>,
}

macro_rules! read_elem {
    ($t:ty, $bytes:expr, $be:expr) => {{
        let b: [u8; std::mem::size_of::<$t>()] = $bytes.try_into().unwrap();
        if $be {
            <$t>::from_be_bytes(b)
        } else {
            <$t>::from_le_bytes(b)
        }
    }};
}

/// Every element of `$data` read as `$t` in the byte order `$be` says, mapped by `$f`, into a
/// new vector. The byte-order test stays outside the loop, which lets the loop vectorize (with
/// the test inside, decoding a mesh's `Vertices` and `Normals` took a twentieth of loading
/// `maya_ngon_maze_7700_binary`).
macro_rules! decode_all {
    ($data:expr, $be:expr, $t:ty, $f:expr) => {{
        const N: usize = std::mem::size_of::<$t>();
        let f = $f;
        if $be {
            $data.chunks_exact(N).map(|b| f(<$t>::from_be_bytes(b.try_into().unwrap()))).collect()
        } else {
            $data.chunks_exact(N).map(|b| f(<$t>::from_le_bytes(b.try_into().unwrap()))).collect()
        }
    }};
}

impl<'a> Array<'a> {
    /// An array over `data`, which must hold a whole number of `ty` elements (the parsers check
    /// this before building one). `compressed` records whether the file stored it with zlib.
    pub(crate) fn new(
        ty: ArrayType,
        data: Cow<'a, [u8]>,
        big_endian: bool,
        compressed: bool,
    ) -> Self {
        debug_assert_eq!(data.len() % ty.size(), 0);
        Array { ty, big_endian, compressed, data }
    }

    /// Element type.
    pub fn ty(&self) -> ArrayType {
        self.ty
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / self.ty.size()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Whether the binary file stored this array zlib-compressed (encoding 1).
    pub fn was_compressed(&self) -> bool {
        self.compressed
    }

    /// Whether the elements are stored big-endian (arrays of big-endian binary files).
    pub fn is_big_endian(&self) -> bool {
        self.big_endian
    }

    /// The element bytes, in the byte order [`Array::is_big_endian`] tells.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Element `i` converted to `f64` (integers and booleans convert exactly up to 2^53), or
    /// `None` past the end.
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        let s = self.ty.size();
        let b = self.data.get(i * s..i * s + s)?;
        let be = self.big_endian;
        Some(match self.ty {
            ArrayType::Bool => (b[0] != 0) as u8 as f64,
            ArrayType::U8 => b[0] as f64,
            ArrayType::I32 => read_elem!(i32, b, be) as f64,
            ArrayType::I64 => read_elem!(i64, b, be) as f64,
            ArrayType::F32 => read_elem!(f32, b, be) as f64,
            ArrayType::F64 => read_elem!(f64, b, be),
        })
    }

    /// Element `i` converted to `i64` (floats truncate toward zero, saturating), or `None` past
    /// the end.
    pub fn get_i64(&self, i: usize) -> Option<i64> {
        let s = self.ty.size();
        let b = self.data.get(i * s..i * s + s)?;
        let be = self.big_endian;
        Some(match self.ty {
            ArrayType::Bool => (b[0] != 0) as i64,
            ArrayType::U8 => b[0] as i64,
            ArrayType::I32 => read_elem!(i32, b, be) as i64,
            ArrayType::I64 => read_elem!(i64, b, be),
            ArrayType::F32 => read_elem!(f32, b, be) as i64,
            ArrayType::F64 => read_elem!(f64, b, be) as i64,
        })
    }

    /// All elements as `f64`, decoded in one pass.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        let be = self.big_endian;
        match self.ty {
            ArrayType::F64 => decode_all!(self.data, be, f64, |v: f64| v),
            ArrayType::F32 => {
                decode_all!(self.data, be, f32, |v: f32| v as f64)
            }
            ArrayType::I32 => {
                decode_all!(self.data, be, i32, |v: i32| v as f64)
            }
            ArrayType::I64 => {
                decode_all!(self.data, be, i64, |v: i64| v as f64)
            }
            ArrayType::Bool => self.data.iter().map(|&b| (b != 0) as u8 as f64).collect(),
            ArrayType::U8 => self.data.iter().map(|&b| b as f64).collect(),
        }
    }

    /// All elements as `f32` (doubles round to nearest).
    pub fn to_f32_vec(&self) -> Vec<f32> {
        let be = self.big_endian;
        match self.ty {
            ArrayType::F32 => decode_all!(self.data, be, f32, |v: f32| v),
            _ => self.to_f64_vec().into_iter().map(|v| v as f32).collect(),
        }
    }

    /// All elements as `i32` (64-bit values and floats saturate; `PolygonVertexIndex`,
    /// `UVIndex`, `KeyAttrFlags` are `i` arrays in binary files).
    pub fn to_i32_vec(&self) -> Vec<i32> {
        let be = self.big_endian;
        match self.ty {
            ArrayType::I32 => decode_all!(self.data, be, i32, |v: i32| v),
            _ => (0..self.len())
                .map(|i| {
                    self.get_i64(i).unwrap_or(0).clamp(i32::MIN as i64, i32::MAX as i64) as i32
                })
                .collect(),
        }
    }

    /// All elements as `i64` (`KeyTime` is an `l` array of KTime ticks).
    pub fn to_i64_vec(&self) -> Vec<i64> {
        let be = self.big_endian;
        match self.ty {
            ArrayType::I64 => decode_all!(self.data, be, i64, |v: i64| v),
            ArrayType::I32 => {
                decode_all!(self.data, be, i32, |v: i32| v as i64)
            }
            _ => (0..self.len()).map(|i| self.get_i64(i).unwrap_or(0)).collect(),
        }
    }
}

impl fmt::Debug for Array<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.ty.code(), self.len())
    }
}

/// One value of a node (seed 003, "Property types").
///
/// Binary type codes in brackets. ASCII files carry no types: the ASCII parser produces
/// [`Property::I64`] for integers, [`Property::F64`] for other numbers (including `nan`,
/// `1.#INF`, `-1.#IND`), [`Property::String`] for quoted strings and for bare words such as
/// `T`, `Y` or `L` in FBX 6 files, and [`Property::Array`] for `*N { a: … }`.
///
/// 24 bytes: every scalar of a file is one `Property` (FBX 6 binaries store each property of
/// each object as a record of 4–6 of them), so the rare raw and array values are boxed to keep
/// the common ones small.
#[derive(Debug, Clone, PartialEq)]
pub enum Property<'a> {
    /// `C` (or `B`, which issue #3 lists and ufbx also reads as one byte): one byte, a
    /// boolean (`T`/`Y` as characters in some 6.x files; nonzero is true).
    Bool(u8),
    /// `Z`: an unsigned byte, a number (Maya writes its `UByte` properties so, e.g. an
    /// audio clip's `Channels`; ufbx 0.23 reads `Z` like `C`, as the byte's value; the FBX
    /// SDK's documentation of the binary format does not list it).
    U8(u8),
    /// `Y`: signed 16-bit integer.
    I16(i16),
    /// `I`: signed 32-bit integer.
    I32(i32),
    /// `L`: signed 64-bit integer (object ids, KTime).
    I64(i64),
    /// `F`: single-precision float.
    F32(f32),
    /// `D`: double-precision float.
    F64(f64),
    /// `S`: a string, bytes as stored (usually UTF-8; binary object names are
    /// `Name\0\x01Class`, ASCII ones `Class::Name`). Not NUL-terminated.
    String(Cow<'a, [u8]>),
    /// `R`: raw bytes (FileId, embedded texture Content); boxed, see above.
    Raw(Box<Cow<'a, [u8]>>),
    /// `b i l f d`: a typed array; boxed, see above.
    Array(Box<Array<'a>>),
}

impl<'a> Property<'a> {
    /// The value as `f64` if it is a number (booleans give 0 or 1).
    pub fn as_f64(&self) -> Option<f64> {
        Some(match *self {
            Property::Bool(b) => (b != 0) as u8 as f64,
            Property::U8(v) => v as f64,
            Property::I16(v) => v as f64,
            Property::I32(v) => v as f64,
            Property::I64(v) => v as f64,
            Property::F32(v) => v as f64,
            Property::F64(v) => v,
            _ => return None,
        })
    }

    /// The value as `i64` if it is an integer or boolean (floats are not converted).
    pub fn as_i64(&self) -> Option<i64> {
        Some(match *self {
            Property::Bool(b) => b as i64,
            Property::U8(v) => v as i64,
            Property::I16(v) => v as i64,
            Property::I32(v) => v as i64,
            Property::I64(v) => v,
            _ => return None,
        })
    }

    /// The bytes of a string property.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Property::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string property as UTF-8 text, `None` when it is not a string or not UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()?).ok()
    }

    /// The bytes of a raw (`R`) property.
    pub fn as_raw(&self) -> Option<&[u8]> {
        match self {
            Property::Raw(s) => Some(s),
            _ => None,
        }
    }

    /// The array of an array property.
    pub fn as_array(&self) -> Option<&Array<'a>> {
        match self {
            Property::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Index of a node in its [`Document`]'s arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) u32);

const _: () = assert!(std::mem::size_of::<Property<'static>>() == 24);

/// One node as stored in the arena.
#[derive(Debug, Clone)]
pub(crate) struct NodeData<'a> {
    pub name: &'a str,
    /// Properties `props_start..props_end` of [`Document::props`].
    pub props_start: u32,
    pub props_end: u32,
    /// Arena index just past this node's subtree.
    pub subtree_end: u32,
    /// Byte offset of the record (binary) or of the name (ASCII) in the input.
    pub offset: u64,
}

/// A parsed FBX file: header facts and the node tree, borrowing from the input bytes.
#[derive(Debug, Clone)]
pub struct Document<'a> {
    /// File version as `major × 1000 + minor × 100` (7400 for 7.4). Binary: the header's u32.
    /// ASCII: `FBXHeaderExtension › FBXVersion`, else the `; FBX 7.5.0 project file` comment,
    /// else 0. FBX 5.x binaries say 3000 here (MANIFEST.md, "Quirks").
    pub version: u32,
    /// Binary or ASCII.
    pub encoding: Encoding,
    /// Binary files with header byte 22 = 1: every number in the file is big-endian.
    pub big_endian: bool,
    /// Problems the parser survived.
    pub warnings: Vec<super::Warning>,
    pub(crate) nodes: Vec<NodeData<'a>>,
    pub(crate) props: Vec<Property<'a>>,
}

impl<'a> Document<'a> {
    pub(crate) fn new(encoding: Encoding) -> Self {
        Document {
            version: 0,
            encoding,
            big_endian: false,
            warnings: Vec::new(),
            nodes: Vec::new(),
            props: Vec::new(),
        }
    }

    /// The version the content follows: [`Document::version`], raised to
    /// `FBXHeaderExtension › FBXVersion` when both are below 6000, as ufbx does (a 5.0
    /// binary's header says 3000 while its records are 5.0's).
    pub fn content_version(&self) -> u32 {
        if self.version >= 6000 {
            return self.version;
        }
        let stated = self
            .find(&["FBXHeaderExtension", "FBXVersion"])
            .and_then(|n| n.property(0))
            .and_then(|p| p.as_i64())
            .filter(|&v| v > 0 && v < 6000)
            .unwrap_or(0) as u32;
        self.version.max(stated)
    }

    /// The top-level nodes (`FBXHeaderExtension`, `GlobalSettings`, `Objects`, …) in file order.
    pub fn roots(&self) -> Children<'_, 'a> {
        Children { doc: self, next: 0, end: self.nodes.len() as u32 }
    }

    /// The first top-level node called `name`.
    pub fn root(&self, name: &str) -> Option<NodeRef<'_, 'a>> {
        self.roots().find(|n| n.name() == name)
    }

    /// Follows `path` from the top level, taking the first node of each name.
    pub fn find(&self, path: &[&str]) -> Option<NodeRef<'_, 'a>> {
        let (first, rest) = path.split_first()?;
        let mut node = self.root(first)?;
        for name in rest {
            node = node.child(name)?;
        }
        Some(node)
    }

    /// The node with id `id`. Panics when `id` is not from this document.
    pub fn node(&self, id: NodeId) -> NodeRef<'_, 'a> {
        assert!((id.0 as usize) < self.nodes.len(), "NodeId from another document");
        NodeRef { doc: self, index: id.0 }
    }

    /// Number of nodes at all depths.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of properties over all nodes.
    pub fn property_count(&self) -> usize {
        self.props.len()
    }

    /// Every node in pre-order (parents before their children, siblings in file order).
    pub fn nodes(&self) -> impl Iterator<Item = NodeRef<'_, 'a>> {
        (0..self.nodes.len() as u32).map(move |index| NodeRef { doc: self, index })
    }
}

/// A node of a [`Document`]: its name, properties and children.
#[derive(Clone, Copy)]
pub struct NodeRef<'d, 'a> {
    doc: &'d Document<'a>,
    index: u32,
}

impl<'d, 'a> NodeRef<'d, 'a> {
    fn data(&self) -> &'d NodeData<'a> {
        &self.doc.nodes[self.index as usize]
    }

    /// The node's id, stable for the document's lifetime.
    pub fn id(&self) -> NodeId {
        NodeId(self.index)
    }

    /// The node name (`Objects`, `Vertices`, `P`…), borrowed from the file.
    pub fn name(&self) -> &'a str {
        self.data().name
    }

    /// Byte offset of the node's record (binary) or of its name (ASCII) in the input.
    pub fn offset(&self) -> u64 {
        self.data().offset
    }

    /// The node's values in file order.
    pub fn properties(&self) -> &'d [Property<'a>] {
        let d = self.data();
        &self.doc.props[d.props_start as usize..d.props_end as usize]
    }

    /// Value `i`, if present.
    pub fn property(&self, i: usize) -> Option<&'d Property<'a>> {
        self.properties().get(i)
    }

    /// The children in file order.
    pub fn children(&self) -> Children<'d, 'a> {
        Children { doc: self.doc, next: self.index + 1, end: self.data().subtree_end }
    }

    /// The first child called `name`.
    pub fn child(&self, name: &str) -> Option<NodeRef<'d, 'a>> {
        self.children().find(|n| n.name() == name)
    }

    /// The first array among the values of the first child called `name` (`Vertices`,
    /// `KeyTime`…).
    pub fn child_array(&self, name: &str) -> Option<&'d Array<'a>> {
        self.child(name)?.properties().iter().find_map(Property::as_array)
    }
}

impl fmt::Debug for NodeRef<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.name())
            .field("properties", &self.properties())
            .field("children", &self.children().count())
            .finish()
    }
}

/// Iterator over sibling nodes.
#[derive(Clone)]
pub struct Children<'d, 'a> {
    doc: &'d Document<'a>,
    next: u32,
    end: u32,
}

impl<'d, 'a> Iterator for Children<'d, 'a> {
    type Item = NodeRef<'d, 'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let index = self.next;
        self.next = self.doc.nodes[index as usize].subtree_end;
        Some(NodeRef { doc: self.doc, index })
    }
}
