//! The record tree that both FBX encodings produce: [`Document`], [`NodeRef`], [`Property`],
//! [`Array`].
//!
//! Nodes live in one flat arena in pre-order (a node, then its whole subtree), each storing the
//! index just past its subtree, so the children of a node are found by hopping from subtree end
//! to subtree end. Properties of all nodes live in a second flat vector; a node owns a
//! contiguous range of it. Names, strings and binary arrays borrow from the input bytes (a
//! zlib-compressed array its compressed stream, inflated when it is read: [`Array`]); only
//! escaped strings and arrays (ASCII) own their data.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::{Error, ErrorKind};

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
/// Uncompressed binary arrays borrow their `len × ty.size()` element bytes from the file;
/// ASCII arrays own theirs (the ASCII parser stores them little-endian). A zlib-compressed
/// binary array (encoding 1) keeps only its compressed stream, borrowed from the file, and is
/// inflated each time it is read, into a buffer the read owns and drops: the record tree of a
/// large file then holds no inflated copy of its arrays, and an array the importer never
/// reads costs no inflation. The parser has already checked every size against the limits
/// and against what deflate can produce ([`super::binary`]); a stream that is corrupt or
/// inflates to another size is an [`Error`] of the read (kinds [`ErrorKind::Inflate`],
/// [`ErrorKind::InflatedSize`]) at the array's byte offset ([`Array::offset`]), with an empty
/// record path: [`NodeRef::decoded`] adds the path, and [`Document::check_arrays`] reports the
/// same for every array no read has inflated yet, as the parser did before it read lazily.
///
/// Reads are `Result`s: [`Array::to_f64_vec`], [`Array::to_f32_vec`], [`Array::to_i32_vec`],
/// [`Array::to_i64_vec`] decode all elements in one pass: a compressed array is inflated
/// straight into the returned vector when the requested type is the stored one, else into a
/// per-thread scratch buffer that the conversion reads.
pub struct Array<'a> {
    ty: ArrayType,
    big_endian: bool,
    compressed: bool,
    /// Set once the zlib stream has inflated to its declared size (always for other arrays),
    /// so that [`Document::check_arrays`] does not inflate it again.
    inflated: AtomicBool,
    /// Number of elements.
    len: usize,
    /// Byte offset of the property (its type code) in the input; 0 for ASCII arrays.
    offset: u64,
    /// The element bytes, or the zlib stream of a compressed array.
    data: Cow<'a, [u8]>,
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

thread_local! {
    /// One libdeflate decompressor per thread, reused for every array read on it.
    static INFLATER: RefCell<Option<libdeflater::Decompressor>> = const { RefCell::new(None) };
    /// The buffer a compressed array is inflated into when a read converts its elements
    /// ([`Array::with_elements`]): reused, so that such a read neither allocates nor clears
    /// one. Words, so that it is aligned for any element type.
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// A [`SCRATCH`] buffer larger than this many bytes is freed after the read, not kept.
const SCRATCH_KEPT: usize = 4 << 20;

/// Inflates the zlib stream `src` into `out`, which it must fill exactly.
fn inflate(src: &[u8], out: &mut [u8]) -> Result<(), ErrorKind> {
    let size = out.len();
    let got = INFLATER.with(|z| {
        let mut z = z.borrow_mut();
        z.get_or_insert_with(libdeflater::Decompressor::new).zlib_decompress(src, out)
    });
    match got {
        Ok(got) if got == size => Ok(()),
        Ok(got) => Err(ErrorKind::InflatedSize { expected: size as u64, got: got as u64 }),
        Err(libdeflater::DecompressionError::InsufficientSpace) => {
            Err(ErrorKind::InflatedSize { expected: size as u64, got: size as u64 + 1 })
        }
        Err(e) => Err(ErrorKind::Inflate(e.to_string())),
    }
}

impl<'a> Array<'a> {
    /// An array over the element bytes `data`, which must hold a whole number of `ty`
    /// elements (the parsers check this before building one).
    pub(crate) fn new(ty: ArrayType, data: Cow<'a, [u8]>, big_endian: bool, offset: u64) -> Self {
        debug_assert_eq!(data.len() % ty.size(), 0);
        Array {
            ty,
            big_endian,
            compressed: false,
            inflated: AtomicBool::new(true),
            len: data.len() / ty.size(),
            offset,
            data,
        }
    }

    /// A zlib-compressed array of `len` elements whose stream is `stream` (not inflated
    /// here: see the type's docs). The caller has checked `len × ty.size()` against the
    /// limits.
    pub(crate) fn zlib(
        ty: ArrayType,
        stream: &'a [u8],
        len: usize,
        big_endian: bool,
        offset: u64,
    ) -> Self {
        Array {
            ty,
            big_endian,
            compressed: true,
            inflated: AtomicBool::new(false),
            len,
            offset,
            data: Cow::Borrowed(stream),
        }
    }

    /// Element type.
    pub fn ty(&self) -> ArrayType {
        self.ty
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the binary file stored this array zlib-compressed (encoding 1).
    pub fn was_compressed(&self) -> bool {
        self.compressed
    }

    /// Whether the elements are stored big-endian (arrays of big-endian binary files).
    pub fn is_big_endian(&self) -> bool {
        self.big_endian
    }

    /// Byte offset of the array property (its type code) in a binary input, where errors of
    /// its reads point; 0 for ASCII arrays.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The bytes as the file stores them: the elements, or the zlib stream of a compressed
    /// array.
    pub fn stored_bytes(&self) -> &[u8] {
        &self.data
    }

    /// The element bytes (`len × ty.size()`), in the byte order [`Array::is_big_endian`]
    /// tells: borrowed, or for a compressed array inflated into a new buffer.
    ///
    /// Errors: the zlib stream is corrupt or inflates to another size than declared.
    pub fn bytes(&self) -> Result<Cow<'_, [u8]>, Error> {
        if !self.compressed {
            return Ok(Cow::Borrowed(&self.data));
        }
        let mut out = vec![0u8; self.len * self.ty.size()];
        self.inflate_into(&mut out)?;
        Ok(Cow::Owned(out))
    }

    /// `f` of the element bytes: borrowed, or for a compressed array inflated into this
    /// thread's scratch buffer (8-byte aligned; kept between reads up to [`SCRATCH_KEPT`]
    /// bytes).
    fn with_elements<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Result<R, Error> {
        if !self.compressed {
            return Ok(f(&self.data));
        }
        let size = self.len * self.ty.size();
        let mut scratch = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        if scratch.len() * 8 < size {
            // A new, zeroed allocation (fresh pages need no clearing), not a grown one.
            scratch = vec![0u64; size.div_ceil(8)];
        }
        let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut scratch)[..size];
        let r = self.inflate_into(bytes).map(|()| f(bytes));
        if scratch.len() * 8 <= SCRATCH_KEPT {
            SCRATCH.with(|s| *s.borrow_mut() = scratch);
        }
        r
    }

    /// Inflates the stream into `out` (`len × ty.size()` bytes) and marks the array checked.
    fn inflate_into(&self, out: &mut [u8]) -> Result<(), Error> {
        inflate(&self.data, out).map_err(|kind| Error::new(self.offset, kind))?;
        self.inflated.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Whether the array's elements are known to be readable: not compressed, or its stream
    /// has inflated once to the declared size.
    pub fn is_checked(&self) -> bool {
        self.inflated.load(Ordering::Relaxed)
    }

    /// Inflates a compressed array into `scratch` (reused, grown as needed) only to see that
    /// its stream is sound, unless a read already did; nothing is kept.
    pub(crate) fn check(&self, scratch: &mut Vec<u8>) -> Result<(), Error> {
        if self.is_checked() {
            return Ok(());
        }
        let size = self.len * self.ty.size();
        if scratch.len() < size {
            scratch.resize(size, 0);
        }
        self.inflate_into(&mut scratch[..size])
    }

    /// The elements as `T`, the stored type: a compressed array inflated straight into the
    /// vector (no second buffer), an uncompressed one copied (a copy costs fewer instructions
    /// than a decoding loop); then put in this machine's byte order.
    fn same_type<T: bytemuck::Pod>(&self, swap: fn(T) -> T) -> Result<Vec<T>, Error> {
        let mut v = vec![T::zeroed(); self.len];
        let out: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
        if self.compressed {
            self.inflate_into(out)?;
        } else {
            out.copy_from_slice(&self.data);
        }
        if self.big_endian != cfg!(target_endian = "big") {
            v.iter_mut().for_each(|x| *x = swap(*x));
        }
        Ok(v)
    }

    /// All elements as `f64`, decoded in one pass (integers and booleans convert exactly up
    /// to 2^53).
    ///
    /// Errors: see [`Array::bytes`].
    pub fn to_f64_vec(&self) -> Result<Vec<f64>, Error> {
        if self.ty == ArrayType::F64 {
            return self.same_type(|v: f64| f64::from_bits(v.to_bits().swap_bytes()));
        }
        let be = self.big_endian;
        self.with_elements(|data| match self.ty {
            ArrayType::F32 => decode_all!(data, be, f32, |v: f32| v as f64),
            ArrayType::I32 => decode_all!(data, be, i32, |v: i32| v as f64),
            ArrayType::I64 => decode_all!(data, be, i64, |v: i64| v as f64),
            ArrayType::F64 => decode_all!(data, be, f64, |v: f64| v),
            ArrayType::Bool => data.iter().map(|&b| (b != 0) as u8 as f64).collect(),
            ArrayType::U8 => data.iter().map(|&b| b as f64).collect(),
        })
    }

    /// All elements as `f32` (doubles round to nearest).
    ///
    /// Errors: see [`Array::bytes`].
    pub fn to_f32_vec(&self) -> Result<Vec<f32>, Error> {
        match self.ty {
            ArrayType::F32 => self.same_type(|v: f32| f32::from_bits(v.to_bits().swap_bytes())),
            _ => Ok(self.to_f64_vec()?.into_iter().map(|v| v as f32).collect()),
        }
    }

    /// All elements as `i32` (64-bit values saturate, floats truncate toward zero and
    /// saturate; `PolygonVertexIndex`, `UVIndex`, `KeyAttrFlags` are `i` arrays in binary
    /// files).
    ///
    /// Errors: see [`Array::bytes`].
    pub fn to_i32_vec(&self) -> Result<Vec<i32>, Error> {
        match self.ty {
            ArrayType::I32 => self.same_type(i32::swap_bytes),
            _ => Ok(self
                .to_i64_vec()?
                .into_iter()
                .map(|v| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
                .collect()),
        }
    }

    /// All elements as `i64` (floats truncate toward zero, saturating; `KeyTime` is an `l`
    /// array of KTime ticks).
    ///
    /// Errors: see [`Array::bytes`].
    pub fn to_i64_vec(&self) -> Result<Vec<i64>, Error> {
        if self.ty == ArrayType::I64 {
            return self.same_type(i64::swap_bytes);
        }
        let be = self.big_endian;
        self.with_elements(|data| match self.ty {
            ArrayType::I32 => decode_all!(data, be, i32, |v: i32| v as i64),
            ArrayType::F32 => decode_all!(data, be, f32, |v: f32| v as i64),
            ArrayType::F64 => decode_all!(data, be, f64, |v: f64| v as i64),
            ArrayType::I64 => decode_all!(data, be, i64, |v: i64| v),
            ArrayType::Bool => data.iter().map(|&b| (b != 0) as i64).collect(),
            ArrayType::U8 => data.iter().map(|&b| b as i64).collect(),
        })
    }
}

impl Clone for Array<'_> {
    fn clone(&self) -> Self {
        Array {
            ty: self.ty,
            big_endian: self.big_endian,
            compressed: self.compressed,
            inflated: AtomicBool::new(self.is_checked()),
            len: self.len,
            offset: self.offset,
            data: self.data.clone(),
        }
    }
}

/// Equal when type, length and element values (in their byte order) are: compressed arrays
/// are compared inflated, and one that does not inflate equals nothing.
impl PartialEq for Array<'_> {
    fn eq(&self, other: &Self) -> bool {
        if (self.ty, self.len, self.big_endian) != (other.ty, other.len, other.big_endian) {
            return false;
        }
        match (self.bytes(), other.bytes()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
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
    /// The first array read through [`NodeRef::decoded`] that failed, with its path.
    array_error: OnceLock<Error>,
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
            array_error: OnceLock::new(),
        }
    }

    /// The first failed array read that [`NodeRef::decoded`] kept (it has the record's path),
    /// if any.
    pub fn array_error(&self) -> Option<&Error> {
        self.array_error.get()
    }

    /// Checks that every array of the file can be read: the first error [`NodeRef::decoded`]
    /// kept, else the first compressed array in file order whose zlib stream is corrupt or
    /// inflates to another size than declared (with its byte offset and record path).
    /// Arrays a read has already inflated are not inflated again, and the others are inflated
    /// into one scratch buffer that is dropped: nothing is kept. [`super::read`] calls this
    /// after the import, so a file whose arrays do not inflate fails to load as it did when
    /// the parser inflated them all.
    pub fn check_arrays(&self) -> Result<(), Error> {
        if let Some(e) = self.array_error() {
            return Err(e.clone());
        }
        let mut scratch = Vec::new();
        // Over the flat property vector (a walk over the nodes cost more than inflating the
        // few arrays left); the record is looked up only for an error's path.
        for (i, p) in self.props.iter().enumerate() {
            if let Property::Array(a) = p {
                a.check(&mut scratch).map_err(|e| {
                    let i = i as u32;
                    let d = |n: &NodeRef<'_, '_>| (n.data().props_start, n.data().props_end);
                    match self.nodes().find(|n| d(n).0 <= i && i < d(n).1) {
                        Some(n) => e.in_record(n),
                        None => e,
                    }
                })?;
            }
        }
        Ok(())
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

    /// The first array among this record's values.
    pub fn first_array(&self) -> Option<&'d Array<'a>> {
        self.properties().iter().find_map(Property::as_array)
    }

    /// The names of the records from the top level down to this one (this one's last), as
    /// errors show them.
    pub fn path(&self) -> Vec<String> {
        let mut path = Vec::new();
        let mut level = self.doc.roots();
        while let Some(n) =
            level.find(|n| n.index <= self.index && self.index < n.data().subtree_end)
        {
            path.push(n.name().to_string());
            if n.index == self.index {
                break;
            }
            level = n.children();
        }
        path
    }

    /// The result of reading one of this record's arrays: its value, or, when the read
    /// failed (a zlib stream that does not inflate), `T::default()` after keeping the error,
    /// with this record's path, as the document's [`Document::array_error`] (the first one
    /// only). An importer can thus read on and report the error once it is done
    /// ([`Document::check_arrays`]).
    pub fn decoded<T: Default>(&self, read: Result<T, Error>) -> T {
        read.unwrap_or_else(|e| {
            let _ = self.doc.array_error.set(e.in_record(*self));
            T::default()
        })
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
