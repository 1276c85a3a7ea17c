//! The low level of the 3DS writer: nested chunks into a byte buffer, lengths computed.
//!
//! A chunk is a `u16` id, a `u32` length that **includes** its 6-byte header, then its payload
//! (fixed data first, sub-chunks after), all little-endian (the layout the reader in
//! [`super::chunks`] walks). [`ChunkWriter::begin`] writes an id and a placeholder length,
//! [`ChunkWriter::end`] patches the length of the innermost open chunk, so every length
//! includes its header and its children nest exactly. Knows nothing of [`crate::scene`].

/// A chunk tree being written into memory.
#[derive(Debug, Default)]
pub struct ChunkWriter {
    buf: Vec<u8>,
    /// Byte offsets of the open chunks' headers, outermost first.
    open: Vec<usize>,
}

/// A chunk whose payload would pass 2³²−1 bytes (the `u32` length cannot hold it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("3ds: chunk {id:#06x} would hold {len} bytes, more than a 3DS chunk length (u32) can say")]
pub struct TooLong {
    /// The chunk id.
    pub id: u16,
    /// The length it would need, header included.
    pub len: u64,
}

impl ChunkWriter {
    /// An empty writer.
    pub fn new() -> ChunkWriter {
        ChunkWriter::default()
    }

    /// Opens chunk `id`: writes its id and a length patched by the matching [`end`](Self::end).
    pub fn begin(&mut self, id: u16) {
        self.open.push(self.buf.len());
        self.buf.extend_from_slice(&id.to_le_bytes());
        self.buf.extend_from_slice(&0u32.to_le_bytes());
    }

    /// Closes the innermost open chunk, writing its length (header included). Panics when no
    /// chunk is open (a bug in the caller, not bad input).
    pub fn end(&mut self) -> Result<(), TooLong> {
        let start = self.open.pop().expect("ChunkWriter::end without begin");
        let len = (self.buf.len() - start) as u64;
        let id = u16::from_le_bytes([self.buf[start], self.buf[start + 1]]);
        let len32 = u32::try_from(len).map_err(|_| TooLong { id, len })?;
        self.buf[start + 2..start + 6].copy_from_slice(&len32.to_le_bytes());
        Ok(())
    }

    /// A whole chunk: `begin(id)`, `body(self)`, `end()`.
    pub fn chunk(
        &mut self,
        id: u16,
        body: impl FnOnce(&mut ChunkWriter) -> Result<(), TooLong>,
    ) -> Result<(), TooLong> {
        self.begin(id);
        body(self)?;
        self.end()
    }

    /// Appends a `u8`.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Appends a little-endian `u16`.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a little-endian `i32`.
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a little-endian IEEE `f32`.
    pub fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends three `f32`s.
    pub fn vec3(&mut self, v: [f32; 3]) {
        v.iter().for_each(|&x| self.f32(x));
    }

    /// Appends `s` as a NUL-terminated string; NUL bytes inside `s` are left out.
    pub fn cstr(&mut self, s: &str) {
        self.buf.extend(s.bytes().filter(|&b| b != 0));
        self.buf.push(0);
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// The bytes written. Panics when a chunk is still open (a bug in the caller).
    pub fn finish(self) -> Vec<u8> {
        assert!(self.open.is_empty(), "ChunkWriter::finish with {} open chunks", self.open.len());
        self.buf
    }
}

/// Walks `bytes` as a chunk tree and checks that every length covers its 6-byte header and
/// that children end exactly at their parent's end, for the chunks whose payload is only
/// sub-chunks (`containers`: ids with `(id, fixed payload bytes before the sub-chunks)`, the
/// fixed part a function of the payload for variable-size heads such as `NAMED_OBJECT`'s name).
/// Returns the first problem as `(offset, message)`. Used by the writer's lint test.
pub fn lint(
    bytes: &[u8],
    head: &dyn Fn(u16, &[u8]) -> Option<usize>,
) -> Result<usize, (usize, String)> {
    fn level(
        bytes: &[u8],
        base: usize,
        head: &dyn Fn(u16, &[u8]) -> Option<usize>,
        depth: usize,
        count: &mut usize,
    ) -> Result<(), (usize, String)> {
        let mut pos = 0usize;
        while pos < bytes.len() {
            if bytes.len() - pos < 6 {
                return Err((
                    base + pos,
                    format!("{} stray bytes after the last chunk", bytes.len() - pos),
                ));
            }
            let id = u16::from_le_bytes([bytes[pos], bytes[pos + 1]]);
            let len = u32::from_le_bytes(bytes[pos + 2..pos + 6].try_into().unwrap()) as usize;
            if len < 6 || len > bytes.len() - pos {
                return Err((
                    base + pos,
                    format!(
                        "chunk {id:#06x} says {len} bytes, {} are left in its parent",
                        bytes.len() - pos
                    ),
                ));
            }
            *count += 1;
            let payload = &bytes[pos + 6..pos + len];
            if depth < 16 {
                if let Some(fixed) = head(id, payload) {
                    if fixed > payload.len() {
                        return Err((
                            base + pos,
                            format!("chunk {id:#06x} is shorter than its fixed data"),
                        ));
                    }
                    level(&payload[fixed..], base + pos + 6 + fixed, head, depth + 1, count)?;
                }
            }
            pos += len;
        }
        Ok(())
    }
    let mut count = 0;
    level(bytes, 0, head, 0, &mut count)?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_include_the_header_and_nest() {
        let mut w = ChunkWriter::new();
        w.chunk(0x4D4D, |w| {
            w.chunk(0x0002, |w| {
                w.u32(3);
                Ok(())
            })?;
            w.chunk(0x3D3D, |_| Ok(()))
        })
        .unwrap();
        let b = w.finish();
        // Hand-computed: root 6 + (6 + 4) + 6 = 22 bytes.
        assert_eq!(
            b,
            [
                0x4D, 0x4D, 22, 0, 0, 0, //
                0x02, 0x00, 10, 0, 0, 0, 3, 0, 0, 0, //
                0x3D, 0x3D, 6, 0, 0, 0
            ]
        );
        let containers = |id: u16, _: &[u8]| matches!(id, 0x4D4D | 0x3D3D).then_some(0);
        assert_eq!(lint(&b, &containers), Ok(3));
        let mut bad = b.clone();
        bad[6 + 2] = 11;
        assert!(lint(&bad, &containers).is_err());
    }
}
