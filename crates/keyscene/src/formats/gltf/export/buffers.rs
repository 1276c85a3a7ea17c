//! The binary buffer: buffer views (4-byte aligned) and the accessors over them.

use gltf_json as json;
use json::validation::{Checked::Valid, USize64};

use super::Out;

/// The binary buffer, in memory or staged on disk ([`Bin::staged`]).
///
/// In memory it is kept as segments that are never reallocated: a view's bytes go into the
/// last segment when it has room, else into a new one. One growing `Vec` would copy the whole
/// buffer at each doubling and hold old and new copies at once (a peak of twice the buffer);
/// the segments' concatenation is exactly that `Vec`'s bytes.
///
/// Staged, each view's bytes are written to a file as they are made and dropped, so the
/// buffer never sits in memory (issue 37 goal 6: a GLB's binary chunk follows its JSON chunk,
/// which is known only at the end, so the chunk waits on disk, not in memory).
#[derive(Default)]
pub(super) struct Bin {
    segments: Vec<Vec<u8>>,
    len: usize,
    /// Where the bytes go when staged (`segments` is then empty).
    staged: Option<Staged>,
}

/// A [`Bin`] staged on disk.
struct Staged {
    file: std::io::BufWriter<std::fs::File>,
    /// The bytes of the view being filled, written out and cleared after each view.
    scratch: Vec<u8>,
    /// The first write that failed (later writes are skipped); returned by
    /// [`Bin::into_staged`].
    error: Option<std::io::Error>,
}

impl Staged {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = std::io::Write::write_all(&mut self.file, bytes) {
                self.error = Some(e);
            }
        }
    }
}

/// The smallest and largest capacity of a new [`Bin`] segment; in between, a segment is as
/// large as the buffer so far (so their number grows with the logarithm of small buffers).
const SEGMENT: std::ops::RangeInclusive<usize> = (64 << 10)..=(32 << 20);

impl Bin {
    /// An empty buffer whose bytes go to `file` (from its current position) as they are
    /// made; [`Bin::into_staged`] hands the file back.
    pub(super) fn staged(file: std::fs::File) -> Bin {
        let file = std::io::BufWriter::with_capacity(*SEGMENT.start(), file);
        let staged = Staged { file, scratch: Vec::new(), error: None };
        Bin { segments: Vec::new(), len: 0, staged: Some(staged) }
    }

    /// Whether the bytes are staged on disk rather than kept in memory.
    pub(super) fn is_staged(&self) -> bool {
        self.staged.is_some()
    }

    /// The buffer's length in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Zero bytes up to the next multiple of 4.
    pub(super) fn pad(&mut self) {
        let to = self.len.next_multiple_of(4);
        if let Some(staged) = &mut self.staged {
            staged.write(&[0u8; 3][..to - self.len]);
            self.len = to;
        } else if let Some(last) = self.segments.last_mut() {
            last.resize(last.len() + (to - self.len), 0);
            self.len = to;
        }
    }

    /// Appends the bytes `fill` pushes (`len` of them, as a view declares) and returns how
    /// many it pushed.
    fn append(&mut self, len: usize, fill: impl FnOnce(&mut Vec<u8>)) -> usize {
        let written = if let Some(staged) = &mut self.staged {
            let mut scratch = std::mem::take(&mut staged.scratch);
            scratch.clear();
            scratch.reserve(len);
            fill(&mut scratch);
            staged.write(&scratch);
            staged.scratch = scratch;
            staged.scratch.len()
        } else {
            let segment = self.room(len);
            let before = segment.len();
            fill(segment);
            segment.len() - before
        };
        self.len += written;
        written
    }

    /// The segment the next `len` bytes go to, with room for them.
    fn room(&mut self, len: usize) -> &mut Vec<u8> {
        let fits = self.segments.last().is_some_and(|s| s.capacity() - s.len() >= len);
        if !fits {
            let cap = self.len.clamp(*SEGMENT.start(), *SEGMENT.end()).max(len);
            self.segments.push(Vec::with_capacity(cap));
        }
        self.segments.last_mut().expect("a segment was just pushed")
    }

    /// A buffer of exactly `bytes`.
    pub(super) fn from_vec(bytes: Vec<u8>) -> Bin {
        Bin { len: bytes.len(), segments: vec![bytes], staged: None }
    }

    /// The segments in order (their concatenation is the buffer; none when staged).
    pub(super) fn segments(&self) -> Vec<&[u8]> {
        debug_assert!(self.staged.is_none(), "a staged buffer's bytes are in its file");
        self.segments.iter().map(Vec::as_slice).collect()
    }

    /// The buffer as one `Vec` (one copy, unless it is a single segment). In memory only.
    pub(super) fn into_vec(mut self) -> Vec<u8> {
        debug_assert!(self.staged.is_none(), "a staged buffer's bytes are in its file");
        if self.segments.len() == 1 {
            return self.segments.pop().unwrap_or_default();
        }
        self.segments.concat()
    }

    /// The file of a staged buffer, every byte written and the position after the last
    /// (`None` in memory), or the first write error.
    pub(super) fn into_staged(self) -> std::io::Result<Option<std::fs::File>> {
        let Some(staged) = self.staged else { return Ok(None) };
        if let Some(e) = staged.error {
            return Err(e);
        }
        staged.file.into_inner().map(Some).map_err(|e| e.into_error())
    }
}

impl Out {
    /// Appends `bytes` to the buffer (4-byte aligned) as a new buffer view.
    pub(super) fn view(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        self.view_filled(bytes.len(), target, |bin| bin.extend_from_slice(bytes))
    }

    /// Appends a buffer view of `len` bytes (4-byte aligned) that `fill` writes straight into
    /// the buffer (no intermediate copy of large arrays; staged, into a scratch vector that is
    /// written out and reused).
    fn view_filled(
        &mut self,
        len: usize,
        target: Option<json::buffer::Target>,
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> json::Index<json::buffer::View> {
        self.bin.pad();
        let offset = self.bin.len;
        let written = self.bin.append(len, fill);
        debug_assert_eq!(written, len, "a view's fill wrote its declared length");
        json::Index::push(
            &mut self.root.buffer_views,
            json::buffer::View {
                buffer: json::Index::new(0),
                byte_length: USize64(written as u64),
                byte_offset: Some(USize64(offset as u64)),
                byte_stride: None,
                name: None,
                target: target.map(Valid),
                extensions: None,
                extras: Default::default(),
            },
        )
    }

    /// A float accessor of `N`-component elements, with min/max when asked.
    pub(super) fn floats<const N: usize>(
        &mut self,
        data: &[[f32; N]],
        type_: json::accessor::Type,
        target: Option<json::buffer::Target>,
        min_max: bool,
    ) -> json::Index<json::Accessor> {
        let view = self.view_filled(data.len() * N * 4, target, |bin| {
            // glTF buffers are little-endian: on a little-endian machine the floats' memory
            // is their bytes as written, copied at once.
            if cfg!(target_endian = "little") {
                bin.extend_from_slice(bytemuck::cast_slice::<f32, u8>(data.as_flattened()));
            } else {
                for x in data.iter().flatten() {
                    bin.extend_from_slice(&x.to_le_bytes());
                }
            }
        });
        let (min, max) = if min_max { bounds(data.as_flattened(), N) } else { (None, None) };
        self.accessor(view, data.len(), json::accessor::ComponentType::F32, type_, min, max)
    }

    /// A morph target's VEC3 deltas (positions or normals, one per vertex of the primitive)
    /// in the smallest form glTF 2.0 gives them (§3.6.2.3, sparse accessors), read back the
    /// same by every conforming client: a sparse accessor over zeros (no buffer view; strictly
    /// increasing vertex indices, then the non-zero deltas — vertex 0's zero when none is
    /// non-zero) when that is fewer bytes than every delta, else dense ([`Self::floats`]). Blend shapes move a
    /// few vertices of a mesh, and a target without normals carries zero normal deltas, so
    /// most targets are sparse or empty. `min_max`: the bounds of all deltas, zeros included
    /// (the spec requires them on POSITION).
    pub(super) fn deltas(
        &mut self,
        data: &[[f32; 3]],
        min_max: bool,
    ) -> json::Index<json::Accessor> {
        use json::accessor::{sparse, ComponentType, IndexComponentType, Type};
        let mut moved: Vec<u32> =
            (0..data.len()).filter(|&i| data[i] != [0.0; 3]).map(|i| i as u32).collect();
        if moved.is_empty() && !data.is_empty() {
            // A sparse accessor has at least one element (§5.1.6, `count` ≥ 1), and an
            // accessor without a buffer view or sparse data, though zeros by the spec, is
            // refused by the Rust `gltf` crate (Bevy's loader): vertex 0's zero delta.
            moved.push(0);
        }
        let (index_size, index_type) = match data.len() {
            n if n <= 1 << 8 => (1, IndexComponentType(ComponentType::U8)),
            n if n <= 1 << 16 => (2, IndexComponentType(ComponentType::U16)),
            _ => (4, IndexComponentType(ComponentType::U32)),
        };
        let sparse_bytes = (moved.len() * index_size).next_multiple_of(4) + moved.len() * 12;
        if moved.is_empty() || sparse_bytes >= data.len() * 12 {
            let vb = Some(json::buffer::Target::ArrayBuffer);
            return self.floats(data, Type::Vec3, vb, min_max);
        }
        let sparse = {
            let indices = self.view_filled(moved.len() * index_size, None, |bin| {
                for &i in &moved {
                    bin.extend_from_slice(&i.to_le_bytes()[..index_size]);
                }
            });
            let values = self.view_filled(moved.len() * 12, None, |bin| {
                for &i in &moved {
                    for x in data[i as usize] {
                        bin.extend_from_slice(&x.to_le_bytes());
                    }
                }
            });
            sparse::Sparse {
                count: USize64(moved.len() as u64),
                indices: sparse::Indices {
                    buffer_view: indices,
                    byte_offset: USize64(0),
                    component_type: Valid(index_type),
                    extensions: None,
                    extras: Default::default(),
                },
                values: sparse::Values {
                    buffer_view: values,
                    byte_offset: USize64(0),
                    extensions: None,
                    extras: Default::default(),
                },
                extensions: None,
                extras: Default::default(),
            }
        };
        let (min, max) = if min_max { bounds(data.as_flattened(), 3) } else { (None, None) };
        json::Index::push(
            &mut self.root.accessors,
            json::Accessor {
                buffer_view: None,
                byte_offset: None,
                count: USize64(data.len() as u64),
                component_type: Valid(json::accessor::GenericComponentType(ComponentType::F32)),
                extensions: None,
                extras: Default::default(),
                type_: Valid(Type::Vec3),
                min,
                max,
                name: None,
                normalized: false,
                sparse: Some(sparse),
            },
        )
    }

    /// Float accessors over one new buffer view (no target, no stride), one per part in order:
    /// (floats, type, components per element, whether it takes min/max). Each part starts at
    /// a multiple of 4 bytes, as glTF asks of a float accessor's offset (§3.6.2.4). One view
    /// for many small accessors (an animation's inputs and outputs) keeps the JSON short.
    pub(super) fn float_block(
        &mut self,
        parts: &[(&[f32], json::accessor::Type, usize, bool)],
    ) -> Vec<json::Index<json::Accessor>> {
        let len: usize = parts.iter().map(|p| p.0.len() * 4).sum();
        let view = self.view_filled(len, None, |bin| {
            for (data, ..) in parts {
                if cfg!(target_endian = "little") {
                    bin.extend_from_slice(bytemuck::cast_slice::<f32, u8>(data));
                } else {
                    for x in data.iter() {
                        bin.extend_from_slice(&x.to_le_bytes());
                    }
                }
            }
        });
        let mut offset = 0usize;
        let mut out = Vec::with_capacity(parts.len());
        for &(data, type_, n, min_max) in parts {
            let n = n.max(1);
            let (min, max) = if min_max { bounds(data, n) } else { (None, None) };
            let ct = json::accessor::ComponentType::F32;
            let a = self.accessor(view, data.len() / n, ct, type_, min, max);
            if offset > 0 {
                self.root.accessors[a.value()].byte_offset = Some(USize64(offset as u64));
            }
            offset += data.len() * 4;
            out.push(a);
        }
        out
    }

    /// An index accessor: u16 when every index fits below u16's primitive-restart value.
    pub(super) fn indices(
        &mut self,
        indices: &[u32],
        vertex_count: usize,
    ) -> json::Index<json::Accessor> {
        let target = Some(json::buffer::Target::ElementArrayBuffer);
        let (view, ct) = if vertex_count < usize::from(u16::MAX) {
            let view = self.view_filled(indices.len() * 2, target, |bin| {
                for &i in indices {
                    bin.extend_from_slice(&(i as u16).to_le_bytes());
                }
            });
            (view, json::accessor::ComponentType::U16)
        } else {
            let view = self.view_filled(indices.len() * 4, target, |bin| {
                for &i in indices {
                    bin.extend_from_slice(&i.to_le_bytes());
                }
            });
            (view, json::accessor::ComponentType::U32)
        };
        self.accessor(view, indices.len(), ct, json::accessor::Type::Scalar, None, None)
    }

    pub(super) fn accessor(
        &mut self,
        view: json::Index<json::buffer::View>,
        count: usize,
        ct: json::accessor::ComponentType,
        type_: json::accessor::Type,
        min: Option<json::Value>,
        max: Option<json::Value>,
    ) -> json::Index<json::Accessor> {
        json::Index::push(
            &mut self.root.accessors,
            json::Accessor {
                buffer_view: Some(view),
                byte_offset: None,
                count: USize64(count as u64),
                component_type: Valid(json::accessor::GenericComponentType(ct)),
                extensions: None,
                extras: Default::default(),
                type_: Valid(type_),
                min,
                max,
                name: None,
                normalized: false,
                sparse: None,
            },
        )
    }
}

/// An accessor's `min` and `max` (glTF 2.0 §5.1: per component, over every element) of the
/// floats `data`, `n` components per element (a trailing partial element is not counted).
fn bounds(data: &[f32], n: usize) -> (Option<json::Value>, Option<json::Value>) {
    let mut lo = vec![f32::INFINITY; n];
    let mut hi = vec![f32::NEG_INFINITY; n];
    for v in data.chunks_exact(n) {
        for k in 0..n {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    (Some(json::Value::from(lo)), Some(json::Value::from(hi)))
}

#[cfg(test)]
mod tests {
    use super::Bin;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_staged_write_that_fails_is_returned_not_lost() {
        // /dev/full refuses every write with ENOSPC (Linux): the error surfaces when the
        // staged file is taken back, whichever view's write met it first.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let mut bin = Bin::staged(full);
        let written = bin.append(100_000, |v| v.resize(100_000, 7));
        bin.pad();
        assert_eq!((written, bin.len()), (100_000, 100_000));
        let e = bin.into_staged().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "{e}"); // ENOSPC
    }

    #[test]
    fn a_staged_buffer_holds_the_bytes_and_padding_of_the_in_memory_one() {
        let file = tempfile::tempfile().unwrap();
        let (mut staged, mut memory) = (Bin::staged(file), Bin::default());
        for bin in [&mut staged, &mut memory] {
            bin.append(3, |v| v.extend_from_slice(&[1, 2, 3]));
            bin.pad();
            bin.append(70_000, |v| v.resize(v.len() + 70_000, 9));
            bin.append(1, |v| v.push(4));
            bin.pad();
        }
        let mut file = staged.into_staged().unwrap().unwrap();
        std::io::Seek::rewind(&mut file).unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).unwrap();
        // 3 bytes + 1 zero, 70,000 nines, a 4 and 3 zeros: 70,008 bytes.
        assert_eq!(bytes.len(), 70_008);
        assert_eq!(&bytes[..5], &[1, 2, 3, 0, 9]);
        assert_eq!(&bytes[70_003..], &[9, 4, 0, 0, 0]);
        assert_eq!(bytes, memory.into_vec());
    }
}
