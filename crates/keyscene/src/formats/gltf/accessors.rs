//! Accessor checks before the `gltf` crate reads one (glTF 2.0 §3.6.2 "Accessors", §3.7.2.1
//! "Meshes › Overview" for the types each attribute may have, §3.11 "Animations").
//!
//! The `gltf` crate (1.4) trusts what it reads: an accessor whose element is not the size its
//! reader expects, a `byteStride` shorter than an element, or a `count` of zero panics inside
//! it (debug assertions, `from_slice` assertions, `count − 1` underflow, `unreachable!` on a
//! component type the semantic does not allow), and data past the end of a buffer view just
//! reads as absent. So every accessor the reader uses is first checked here against the bytes
//! actually present and the types its use allows; only then is it handed to the crate.

use gltf::accessor::{DataType, Dimensions};

/// The accessor types one use allows: each entry is a dimension and its component types, with
/// whether integer components must be `normalized` (`Some(true)`), must not be
/// (`Some(false)`), or either (`None`).
pub(super) struct Allowed(pub &'static [(Dimensions, &'static [DataType], Option<bool>)]);

use DataType::{F32, I16, I8, U16, U32, U8};
use Dimensions::{Mat4, Scalar, Vec2, Vec3, Vec4};

/// POSITION, NORMAL, morph target deltas, `translation`/`scale` outputs.
pub(super) const VEC3_FLOAT: Allowed = Allowed(&[(Vec3, &[F32], None)]);
/// TANGENT.
pub(super) const VEC4_FLOAT: Allowed = Allowed(&[(Vec4, &[F32], None)]);
/// TEXCOORD_n.
pub(super) const TEXCOORD: Allowed =
    Allowed(&[(Vec2, &[F32], None), (Vec2, &[U8, U16], Some(true))]);
/// COLOR_n.
pub(super) const COLOR: Allowed = Allowed(&[
    (Vec3, &[F32], None),
    (Vec4, &[F32], None),
    (Vec3, &[U8, U16], Some(true)),
    (Vec4, &[U8, U16], Some(true)),
]);
/// JOINTS_n.
pub(super) const JOINTS: Allowed = Allowed(&[(Vec4, &[U8, U16], Some(false))]);
/// WEIGHTS_n.
pub(super) const WEIGHTS: Allowed =
    Allowed(&[(Vec4, &[F32], None), (Vec4, &[U8, U16], Some(true))]);
/// Primitive `indices`.
pub(super) const INDICES: Allowed = Allowed(&[(Scalar, &[U8, U16, U32], Some(false))]);
/// `inverseBindMatrices`.
pub(super) const MAT4_FLOAT: Allowed = Allowed(&[(Mat4, &[F32], None)]);
/// Sampler `input` (key times in seconds), keyscene's `_KEYSCENE_VERTEX`.
pub(super) const SCALAR_FLOAT: Allowed = Allowed(&[(Scalar, &[F32], None)]);
/// Outputs of a `KHR_animation_pointer` channel animating a `bool` (unsigned bytes, as the
/// extension requires; floats accepted).
pub(super) const SCALAR_BOOL: Allowed =
    Allowed(&[(Scalar, &[U8], Some(false)), (Scalar, &[F32], None)]);
/// `rotation` outputs (quaternions).
pub(super) const ROTATION: Allowed =
    Allowed(&[(Vec4, &[F32], None), (Vec4, &[I8, U8, I16, U16], Some(true))]);
/// `weights` outputs (morph target weights).
pub(super) const MORPH_WEIGHTS: Allowed =
    Allowed(&[(Scalar, &[F32], None), (Scalar, &[I8, U8, I16, U16], Some(true))]);

/// The bytes `[offset, offset + stride · (count − 1) + element)` inside a buffer view, checked
/// against the view and the view against its buffer's bytes (`buffers`). Returns the view's
/// bytes.
fn view_bytes<'b>(
    view: &gltf::buffer::View,
    buffers: &'b [Vec<u8>],
    offset: usize,
    count: usize,
    element: usize,
    what: &str,
) -> Result<&'b [u8], String> {
    let data = buffers
        .get(view.buffer().index())
        .ok_or_else(|| format!("{what}: bufferView {} names no loaded buffer", view.index()))?;
    let end = view.offset().checked_add(view.length());
    let bytes = end.and_then(|end| data.get(view.offset()..end)).ok_or_else(|| {
        format!(
            "{what}: bufferView {} (byteOffset {}, byteLength {}) is past its buffer's {} bytes",
            view.index(),
            view.offset(),
            view.length(),
            data.len()
        )
    })?;
    let stride = view.stride().unwrap_or(element);
    if stride < element {
        return Err(format!(
            "{what}: byteStride {stride} of bufferView {} is shorter than the {element}-byte element",
            view.index()
        ));
    }
    let need = (count as u128 - 1) * stride as u128 + element as u128 + offset as u128;
    if need > bytes.len() as u128 {
        return Err(format!(
            "{what}: {count} elements of {element} bytes (stride {stride}) from byteOffset {offset} \
             need {need} bytes, bufferView {} has {}",
            view.index(),
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// Checks that `acc` may be read for a use that allows `allowed`: its type, its bounds in the
/// bytes present, and, for a sparse accessor, its index and value arrays (indices strictly
/// increasing and below `count`, §3.6.2.3). The error says what is wrong, for a message
/// placed by the caller.
pub(super) fn check(
    acc: &gltf::Accessor,
    buffers: &[Vec<u8>],
    allowed: &Allowed,
) -> Result<(), String> {
    let what = format!("accessors[{}]", acc.index());
    let (d, t, n) = (acc.dimensions(), acc.data_type(), acc.normalized());
    let ok = allowed.0.iter().any(|(ad, ats, an)| {
        *ad == d && ats.contains(&t) && (t == F32 || an.is_none_or(|want| want == n))
    });
    if !ok {
        return Err(format!(
            "{what}: {} of {}{} is not a type this use allows",
            type_name(d),
            component_name(t),
            if n { " (normalized)" } else { "" }
        ));
    }
    let count = acc.count();
    if count == 0 {
        return Err(format!("{what}: count 0 (glTF requires at least 1)"));
    }
    let element = acc.size();
    if let Some(view) = acc.view() {
        view_bytes(&view, buffers, acc.offset(), count, element, &what)?;
    } else if acc.offset() != 0 {
        // §5.1 accessor.byteOffset: "MUST NOT be defined when bufferView is undefined".
        return Err(format!("{what}: byteOffset {} without a bufferView", acc.offset()));
    }
    if let Some(sparse) = acc.sparse() {
        let k = sparse.count();
        if k == 0 || k > count {
            return Err(format!("{what}: sparse count {k} for {count} elements"));
        }
        let idx = sparse.indices();
        let isize = idx.index_type().size();
        let bytes = view_bytes(&idx.view(), buffers, idx.offset(), k, isize, &what)?;
        let stride = idx.view().stride().unwrap_or(isize);
        let mut last: Option<u64> = None;
        for i in 0..k {
            let at = idx.offset() + i * stride;
            let b = &bytes[at..at + isize];
            let v = match isize {
                1 => u64::from(b[0]),
                2 => u64::from(u16::from_le_bytes([b[0], b[1]])),
                _ => u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            };
            if v >= count as u64 || last.is_some_and(|l| v <= l) {
                return Err(format!(
                    "{what}: sparse index {v} (number {i}) is not increasing or not below {count}"
                ));
            }
            last = Some(v);
        }
        let vals = sparse.values();
        view_bytes(&vals.view(), buffers, vals.offset(), k, element, &what)?;
    }
    Ok(())
}

/// The accessor `type` as glTF 2.0 §5.1 spells it (`SCALAR`, `VEC3`, `MAT4`…).
pub fn type_name(d: Dimensions) -> &'static str {
    match d {
        Scalar => "SCALAR",
        Vec2 => "VEC2",
        Vec3 => "VEC3",
        Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Mat4 => "MAT4",
    }
}

/// The accessor `componentType` in words, with its glTF code (`UNSIGNED_SHORT (5123)`).
pub fn component_name(t: DataType) -> &'static str {
    match t {
        I8 => "BYTE (5120)",
        U8 => "UNSIGNED_BYTE (5121)",
        I16 => "SHORT (5122)",
        U16 => "UNSIGNED_SHORT (5123)",
        U32 => "UNSIGNED_INT (5125)",
        F32 => "FLOAT (5126)",
    }
}
