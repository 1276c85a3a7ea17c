//! Files written with `--compress` (or by gltfpack, gltf-transform): `EXT_meshopt_compression`
//! buffer views are decoded and `KHR_mesh_quantization` attributes turned into floats before
//! the `gltf` crate sees the document, so the rest of the reader reads plain glTF.
//!
//! Decoding follows the extension's spec (`ATTRIBUTES`, `TRIANGLES`, `INDICES` modes; the
//! `OCTAHEDRAL`, `QUATERNION`, `EXPONENTIAL` and `COLOR` filters) through the meshopt crate's
//! decoder, which is safe on untrusted input (it fails or yields garbage, never reads past its
//! input). The decoded bytes go to one new buffer at the end, and the views point there.
//! Quantized attributes (any vertex attribute but `JOINTS_n` with integer components, and
//! morph targets) become floats by glTF's rules (§3.11 "Animations", normalized integers:
//! `max(c / 127, −1)`, `c / 255`, `max(c / 32767, −1)`, `c / 65535`; unnormalized: the
//! integer). The dequantization transform itself is left in the node or inverse bind matrices
//! that carry it, as the extension specifies, so the positions come out right.
//!
//! Errors ([`Error::Invalid`] at `bufferViews[i]`): a stream the decoder refuses, a mode or
//! filter the spec does not define, sizes that disagree; [`Error::Limit`] when the decoded
//! views together pass [`Limits::max_bytes`](crate::limits::Limits::max_bytes).

use gltf_json as json;
use json::accessor::{ComponentType, GenericComponentType};
use json::validation::{Checked::Valid, USize64};

use super::Error;

/// The meshopt compression extension's name.
pub(super) const MESHOPT: &str = "EXT_meshopt_compression";
/// The mesh quantization extension's name.
pub(super) const QUANTIZATION: &str = "KHR_mesh_quantization";

/// Whether a buffer is an `EXT_meshopt_compression` fallback buffer (one without data).
pub(super) fn is_fallback(b: &json::Buffer) -> bool {
    b.extensions
        .as_ref()
        .and_then(|e| e.others.get(MESHOPT))
        .and_then(|m| m.get("fallback"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// Decodes every meshopt view of `root` and dequantizes its quantized attributes, appending one
/// buffer (to `root.buffers` and `buffers`) with the results; removes both extensions from the
/// document's lists. Does nothing to a document that uses neither.
pub(super) fn decompress(
    root: &mut json::Root,
    buffers: &mut Vec<Vec<u8>>,
    max_bytes: u64,
) -> Result<(), Error> {
    let uses =
        |n: &str| root.extensions_used.iter().chain(&root.extensions_required).any(|e| e == n);
    if !uses(MESHOPT) && !uses(QUANTIZATION) {
        return Ok(());
    }
    let index = buffers.len() as u32;
    let mut out: Vec<u8> = Vec::new();
    for i in 0..root.buffer_views.len() {
        let Some(ext) =
            root.buffer_views[i].extensions.as_ref().and_then(|e| e.others.get(MESHOPT)).cloned()
        else {
            continue;
        };
        let place = format!("bufferViews[{i}] › extensions › {MESHOPT}");
        let left = max_bytes.saturating_sub(out.len() as u64);
        let decoded = decode_view(&ext, buffers, left, &place)?;
        out.resize(out.len().next_multiple_of(4), 0);
        let view = &mut root.buffer_views[i];
        view.buffer = json::Index::new(index);
        view.byte_offset = Some(USize64(out.len() as u64));
        view.byte_length = USize64(decoded.len() as u64);
        out.extend_from_slice(&decoded);
        if let Some(e) = view.extensions.as_mut() {
            e.others.remove(MESHOPT);
        }
    }
    buffers.push(out);
    dequantize(root, buffers, index as usize)?;
    let len = buffers[index as usize].len();
    root.buffers.push(json::Buffer {
        byte_length: USize64(len as u64),
        name: None,
        uri: None,
        extensions: None,
        extras: Default::default(),
    });
    root.extensions_used.retain(|e| e != MESHOPT && e != QUANTIZATION);
    root.extensions_required.retain(|e| e != MESHOPT && e != QUANTIZATION);
    Ok(())
}

/// One view's decoded bytes (`count · byteStride`, at most `left`).
fn decode_view(
    ext: &serde_json::Value,
    buffers: &[Vec<u8>],
    left: u64,
    place: &str,
) -> Result<Vec<u8>, Error> {
    let invalid = |message: String| Error::Invalid { place: place.to_string(), message };
    let num = |k: &str, default: Option<u64>| {
        ext.get(k)
            .and_then(serde_json::Value::as_u64)
            .or(default)
            .ok_or_else(|| invalid(format!("no {k}")))
    };
    let buffer = num("buffer", None)? as usize;
    let offset = num("byteOffset", Some(0))? as usize;
    let length = num("byteLength", None)? as usize;
    let stride = num("byteStride", None)? as usize;
    let count = num("count", None)? as usize;
    let mode = ext.get("mode").and_then(serde_json::Value::as_str).unwrap_or("");
    let filter = ext.get("filter").and_then(serde_json::Value::as_str).unwrap_or("NONE");
    let source = buffers
        .get(buffer)
        .and_then(|b| b.get(offset..offset.checked_add(length)?))
        .ok_or_else(|| invalid(format!("bytes {offset}+{length} are not in buffer {buffer}")))?;
    // A compressed stream is at least a header byte per view and a byte per 16 ATTRIBUTES
    // elements / per index triangle: a count far beyond that is refused before allocating.
    let size = count.checked_mul(stride).filter(|&s| s / 64 <= length.saturating_mul(64) + 64);
    let size = size.ok_or_else(|| {
        invalid(format!("count {count} × byteStride {stride} is not what {length} bytes can hold"))
    })?;
    if size as u64 > left {
        return Err(Error::Limit {
            place: place.to_string(),
            message: format!("decoded views exceed the limit ({size} bytes, {left} left)"),
        });
    }
    match mode {
        "ATTRIBUTES" => {
            if stride == 0 || stride % 4 != 0 || stride > 256 {
                return Err(invalid(format!(
                    "ATTRIBUTES byteStride {stride}: expected a multiple of 4 up to 256"
                )));
            }
            let mut words = vec![0u32; size / 4];
            // SAFETY: `words` holds `count · stride` bytes, what the decoder writes; `source`
            // is `length` readable bytes. The decoder checks its input (meshoptimizer.h).
            let rc = unsafe {
                meshopt::ffi::meshopt_decodeVertexBuffer(
                    words.as_mut_ptr().cast(),
                    count,
                    stride,
                    source.as_ptr(),
                    source.len(),
                )
            };
            if rc != 0 {
                return Err(invalid(format!(
                    "the ATTRIBUTES stream does not decode (meshopt error {rc})"
                )));
            }
            filter_in_place(&mut words, count, stride, filter).map_err(invalid)?;
            Ok(bytemuck::cast_slice::<u32, u8>(&words).to_vec())
        }
        "TRIANGLES" | "INDICES" => {
            if filter != "NONE" {
                return Err(invalid(format!("filter {filter} on {mode}: the spec allows none")));
            }
            let indices: Vec<u32> = match (mode, stride) {
                ("TRIANGLES", 2 | 4) if count % 3 == 0 => {
                    meshopt::decode_index_buffer::<u32>(source, count)
                }
                ("INDICES", 2 | 4) => meshopt::decode_index_sequence::<u32>(source, count),
                _ => {
                    return Err(invalid(format!("{mode} with byteStride {stride}, count {count}")))
                }
            }
            .map_err(|e| invalid(format!("the {mode} stream does not decode ({e:?})")))?;
            Ok(if stride == 2 {
                indices.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect()
            } else {
                indices.iter().flat_map(|&i| i.to_le_bytes()).collect()
            })
        }
        _ => Err(invalid(format!("mode {mode:?}: expected ATTRIBUTES, TRIANGLES or INDICES"))),
    }
}

/// Applies an `ATTRIBUTES` stream's filter to its decoded elements.
fn filter_in_place(
    words: &mut [u32],
    count: usize,
    stride: usize,
    filter: &str,
) -> Result<(), String> {
    let ptr = words.as_mut_ptr().cast();
    // SAFETY (each call): `words` holds `count · stride` bytes, 4-byte aligned, which the
    // filter rewrites in place; the stride is one the filter accepts (checked first).
    match (filter, stride) {
        ("NONE", _) => {}
        ("OCTAHEDRAL", 4 | 8) => unsafe {
            meshopt::ffi::meshopt_decodeFilterOct(ptr, count, stride)
        },
        ("QUATERNION", 8) => unsafe { meshopt::ffi::meshopt_decodeFilterQuat(ptr, count, stride) },
        ("EXPONENTIAL", _) => unsafe { meshopt::ffi::meshopt_decodeFilterExp(ptr, count, stride) },
        ("COLOR", 4 | 8) => unsafe { meshopt::ffi::meshopt_decodeFilterColor(ptr, count, stride) },
        _ => {
            return Err(format!(
                "filter {filter:?} with byteStride {stride} is not one the spec defines"
            ))
        }
    }
    Ok(())
}

/// Every integer vertex attribute but `JOINTS_n`, and every morph target attribute, as floats
/// in buffer `into` (see the module docs).
fn dequantize(root: &mut json::Root, buffers: &mut [Vec<u8>], into: usize) -> Result<(), Error> {
    use json::mesh::Semantic;
    let mut wanted: Vec<usize> = Vec::new();
    for p in root.meshes.iter().flat_map(|m| &m.primitives) {
        for (s, a) in &p.attributes {
            if !matches!(s, Valid(Semantic::Joints(_))) {
                wanted.push(a.value());
            }
        }
        for t in p.targets.iter().flatten() {
            wanted.extend(
                [t.positions, t.normals, t.tangents].into_iter().flatten().map(|a| a.value()),
            );
        }
    }
    wanted.sort_unstable();
    wanted.dedup();
    for a in wanted {
        let place = format!("accessors[{a}]");
        let Some(floats) =
            to_floats(root, buffers, a).map_err(|message| Error::Invalid { place, message })?
        else {
            continue;
        };
        let out = &mut buffers[into];
        out.resize(out.len().next_multiple_of(4), 0);
        let offset = out.len();
        out.extend(floats.iter().flat_map(|x| x.to_le_bytes()));
        let view = json::Index::push(
            &mut root.buffer_views,
            json::buffer::View {
                buffer: json::Index::new(into as u32),
                byte_length: USize64((floats.len() * 4) as u64),
                byte_offset: Some(USize64(offset as u64)),
                byte_stride: None,
                name: None,
                target: None,
                extensions: None,
                extras: Default::default(),
            },
        );
        let acc = &mut root.accessors[a];
        let normalized = acc.normalized;
        let ct = match &acc.component_type {
            Valid(c) => Some(c.0),
            _ => None,
        };
        let convert = |v: &Option<json::Value>| {
            v.as_ref().and_then(|v| v.as_array()).map(|xs| {
                json::Value::from(
                    xs.iter()
                        .map(|x| x.as_f64().map_or(0.0, |x| component(x, ct, normalized)))
                        .collect::<Vec<_>>(),
                )
            })
        };
        acc.min = convert(&acc.min);
        acc.max = convert(&acc.max);
        acc.buffer_view = Some(view);
        acc.byte_offset = None;
        acc.component_type = Valid(GenericComponentType(ComponentType::F32));
        acc.normalized = false;
    }
    Ok(())
}

/// An integer component `c` of type `ct` as glTF reads it.
fn component(c: f64, ct: Option<ComponentType>, normalized: bool) -> f64 {
    if !normalized {
        return c;
    }
    match ct {
        Some(ComponentType::I8) => (c / 127.0).max(-1.0),
        Some(ComponentType::U8) => c / 255.0,
        Some(ComponentType::I16) => (c / 32767.0).max(-1.0),
        Some(ComponentType::U16) => c / 65535.0,
        _ => c,
    }
}

/// Accessor `a`'s values as f32 when its components are integers (`None`: already floats, or
/// sparse / without a view, left to the reader's own checks).
fn to_floats(root: &json::Root, buffers: &[Vec<u8>], a: usize) -> Result<Option<Vec<f32>>, String> {
    let acc = &root.accessors[a];
    let (Valid(ct), Valid(t), Some(v)) = (&acc.component_type, &acc.type_, acc.buffer_view) else {
        return Ok(None);
    };
    if ct.0 == ComponentType::F32 || ct.0 == ComponentType::U32 || acc.sparse.is_some() {
        return Ok(None);
    }
    let view = root.buffer_views.get(v.value()).ok_or("names no buffer view")?;
    let size = ct.0.size();
    let n = t.multiplicity();
    let stride = view.byte_stride.map_or(size * n, |s| s.0);
    if stride < size * n {
        return Err(format!("byteStride {stride} is shorter than the {}-byte element", size * n));
    }
    let count = acc.count.0 as usize;
    let bytes = buffers.get(view.buffer.value()).ok_or("names no buffer")?;
    let start =
        view.byte_offset.map_or(0, |o| o.0 as usize) + acc.byte_offset.map_or(0, |o| o.0 as usize);
    let end = view.byte_offset.map_or(0, |o| o.0 as usize) + view.byte_length.0 as usize;
    let last = count
        .checked_sub(1)
        .map_or(Some(start), |k| k.checked_mul(stride)?.checked_add(start + size * n));
    if last.is_none_or(|l| l > end || end > bytes.len()) {
        return Err(format!("{count} elements of {stride} bytes are past their buffer view"));
    }
    let mut out = Vec::with_capacity(count * n);
    for i in 0..count {
        for k in 0..n {
            let at = start + i * stride + k * size;
            let b = &bytes[at..at + size];
            let c = match ct.0 {
                ComponentType::I8 => f64::from(b[0] as i8),
                ComponentType::U8 => f64::from(b[0]),
                ComponentType::I16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
                _ => f64::from(u16::from_le_bytes([b[0], b[1]])),
            };
            out.push(component(c, Some(ct.0), acc.normalized) as f32);
        }
    }
    Ok(Some(out))
}
