//! The GLB container (glTF 2.0 §4.4): a 12-byte header, a JSON chunk padded with spaces and an
//! optional BIN chunk padded with zeros, every chunk 4-byte aligned. [`split`] reads the
//! container itself, checking every length against the bytes present, because the `gltf` crate
//! (1.4) panics on GLB headers whose lengths do not add up (found by fuzzing); only the JSON
//! chunk is then handed to it.

/// `"glTF"` as a little-endian u32.
pub const MAGIC: u32 = 0x4654_6C67;
/// Chunk type of the JSON chunk (`"JSON"`).
pub const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type of the binary chunk (`"BIN\0"`).
pub const CHUNK_BIN: u32 = 0x004E_4942;

/// Packs `json` and `bin` into GLB bytes. An empty `bin` writes no BIN chunk. Fails when the
/// file would exceed the format's 4 GiB (u32 length) limit.
pub fn to_glb(json: &[u8], bin: &[u8]) -> Result<Vec<u8>, super::Error> {
    to_glb_pieces(json, &[bin])
}

/// [`to_glb`] of a buffer given as pieces to be concatenated (no copy of them is made first).
pub(crate) fn to_glb_pieces(json: &[u8], bin: &[&[u8]]) -> Result<Vec<u8>, super::Error> {
    let bin_bytes = bin.iter().map(|b| b.len()).sum();
    let mut out = Vec::with_capacity(glb_len(json, bin_bytes)?.0 as usize);
    write_glb(&mut out, json, bin).map_err(|e| match e {
        GlbWriteError::Glb(e) => e,
        // Writing into a `Vec` does not fail.
        GlbWriteError::Io(e) => super::Error::Write(e.to_string()),
    })?;
    Ok(out)
}

/// What [`write_glb`] can fail with: the container's own limit, or the sink.
#[derive(Debug)]
pub(crate) enum GlbWriteError {
    /// The file would exceed 4 GiB ([`super::Error::Write`]).
    Glb(super::Error),
    /// `out` failed.
    Io(std::io::Error),
}

/// Writes the GLB of `json` and the buffer whose pieces are `bin` ([`to_glb`]'s bytes of `json`
/// and `bin`'s concatenation) into `out` as it goes: the header and chunk headers are known
/// from the lengths, so nothing is gathered in memory. The length check comes first: on
/// [`GlbWriteError::Glb`] nothing was written.
pub(crate) fn write_glb(
    out: &mut dyn std::io::Write,
    json: &[u8],
    bin: &[&[u8]],
) -> Result<(), GlbWriteError> {
    let bin_bytes: usize = bin.iter().map(|b| b.len()).sum();
    write_glb_with(out, json, bin_bytes, |out| {
        for piece in bin {
            out.write_all(piece)?;
        }
        Ok(())
    })
}

/// [`write_glb`] of a buffer of `bin_bytes` bytes that `write_bin` writes into `out` when its
/// turn comes (after the BIN chunk's header; the padding follows it). Generic over `out` so
/// that a file-to-file copy in `write_bin` stays one (`std::io::copy` between files is
/// `copy_file_range` on Linux). `write_bin` must write exactly `bin_bytes` bytes.
pub(crate) fn write_glb_with<W: std::io::Write + ?Sized>(
    out: &mut W,
    json: &[u8],
    bin_bytes: usize,
    write_bin: impl FnOnce(&mut W) -> std::io::Result<()>,
) -> Result<(), GlbWriteError> {
    let (total, json_len, bin_len) = glb_len(json, bin_bytes).map_err(GlbWriteError::Glb)?;
    let mut head = Vec::with_capacity(20);
    head.extend_from_slice(&MAGIC.to_le_bytes());
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&total.to_le_bytes());
    head.extend_from_slice(&json_len.to_le_bytes());
    head.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    let io = GlbWriteError::Io;
    out.write_all(&head).map_err(io)?;
    out.write_all(json).map_err(io)?;
    out.write_all(&b"   "[..json_len as usize - json.len()]).map_err(io)?;
    if bin_bytes > 0 {
        let mut head = Vec::with_capacity(8);
        head.extend_from_slice(&bin_len.to_le_bytes());
        head.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.write_all(&head).map_err(io)?;
        write_bin(out).map_err(io)?;
        out.write_all(&[0u8; 3][..bin_len as usize - bin_bytes]).map_err(io)?;
    }
    Ok(())
}

/// The GLB's total length and its JSON and BIN chunk lengths (each padded to 4 bytes), for a
/// buffer of `bin` bytes; an error when the total passes `u32`.
fn glb_len(json: &[u8], bin: usize) -> Result<(u32, u32, u32), super::Error> {
    let padded = |n: usize| n.next_multiple_of(4);
    let (json_len, bin_len) = (padded(json.len()), padded(bin));
    let total = 12 + 8 + json_len + if bin == 0 { 0 } else { 8 + bin_len };
    let total32 = u32::try_from(total)
        .map_err(|_| super::Error::Write(format!("GLB would be {total} bytes, over 4 GiB")))?;
    // Both chunks are shorter than the total, which fits.
    Ok((total32, json_len as u32, bin_len as u32))
}

/// The JSON chunk and the BIN chunk (if any) of GLB `bytes`, after checking the header (magic,
/// version 2, declared length within the bytes present) and that each chunk lies inside the
/// declared length. Errors name the byte offset of what is wrong.
pub fn split(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), super::Error> {
    let bad = |offset: usize, message: String| super::Error::Invalid {
        place: format!("GLB at byte {offset:#x}"),
        message,
    };
    let word = |at: usize| -> Option<u32> {
        bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if word(0) != Some(MAGIC) {
        return Err(bad(0, "the file does not start with \"glTF\"".into()));
    }
    let cut =
        |what: &str| format!("the file is truncated at byte {}: expected {what}", bytes.len());
    let version =
        word(4).ok_or_else(|| bad(4, cut("the 12-byte GLB header (magic, version, length)")))?;
    if version != 2 {
        return Err(bad(4, format!("container version {version}, expected 2")));
    }
    let total = word(8)
        .ok_or_else(|| bad(8, cut("the 12-byte GLB header (magic, version, length)")))?
        as usize;
    if total > bytes.len() {
        return Err(bad(8, cut(&format!("the {total} bytes the GLB header declares"))));
    }
    if total < 12 {
        return Err(bad(
            8,
            format!("the header declares {total} bytes, fewer than the header's own 12"),
        ));
    }
    let bytes = &bytes[..total];
    let mut chunks = Vec::new();
    let mut at = 12;
    while at < total {
        // `word` reads the whole file; a chunk header must also lie within the declared
        // length (bytes past it are not the container's).
        let (Some(len), Some(kind)) = (word(at), word(at + 4)) else {
            return Err(bad(at, "a chunk header is cut short".into()));
        };
        if at + 8 > total {
            return Err(bad(
                at,
                format!("a chunk header is cut short by the {total} bytes the header declares"),
            ));
        }
        let start = at + 8;
        let end = start.checked_add(len as usize).filter(|&e| e <= total).ok_or_else(|| {
            bad(at, format!("chunk declares {len} bytes but {} remain", total - start))
        })?;
        chunks.push((kind, &bytes[start..end], at));
        at = end;
    }
    match chunks.as_slice() {
        [(CHUNK_JSON, json, _), rest @ ..] => {
            let bin = rest.iter().find(|c| c.0 == CHUNK_BIN).map(|c| c.1);
            Ok((json, bin))
        }
        [(_, _, at), ..] => Err(bad(*at, "the first chunk is not the JSON chunk".into())),
        [] => Err(bad(12, "the file has no JSON chunk".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_reads_back_what_to_glb_packs() {
        let glb = to_glb(b"{}", &[1, 2, 3]).unwrap();
        let (json, bin) = split(&glb).unwrap();
        assert_eq!(json, b"{}  ");
        assert_eq!(bin, Some(&[1u8, 2, 3, 0][..]));
    }

    #[test]
    fn split_rejects_lengths_that_do_not_add_up_instead_of_panicking() {
        // The fuzzer's find: a GLB header whose chunk lengths overrun the declared total.
        let mut glb = to_glb(b"{}", &[1, 2, 3]).unwrap();
        glb[12..16].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
        assert!(split(&glb).is_err());
        let glb = to_glb(b"{}", &[]).unwrap();
        for cut in 0..glb.len() {
            let mut short = glb[..cut].to_vec();
            if short.len() >= 12 {
                short[8..12].copy_from_slice(&(cut as u32).to_le_bytes());
            }
            assert!(split(&short).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_chunk_header_past_the_declared_length_is_an_error_not_a_panic() {
        // read_gltf's find (tests/fuzz_regressions/glb_chunk_header_past_declared_length.bin):
        // the declared total ends 4 bytes into a chunk header while the file goes on, so the
        // header reads whole from the file but lies outside the container.
        let mut glb = to_glb(b"{}", &[1, 2, 3]).unwrap();
        // 12 header + 8 + 4 JSON = 24; declare 28: the BIN chunk's header is cut at 4 bytes.
        glb[8..12].copy_from_slice(&28u32.to_le_bytes());
        let e = split(&glb).unwrap_err().to_string();
        assert!(e.contains("byte 0x18") && e.contains("cut short"), "{e}");
    }

    #[test]
    fn chunks_are_padded_to_four_bytes() {
        let g = to_glb(b"{}", &[1, 2, 3, 4, 5]).unwrap();
        // 12 header + 8 + 4 ("{}  ") + 8 + 8 (5 bytes + 3 zeros).
        assert_eq!(g.len(), 40);
        assert_eq!(&g[0..4], b"glTF");
        assert_eq!(u32::from_le_bytes(g[8..12].try_into().unwrap()), 40);
        assert_eq!(&g[20..24], b"{}  ");
        assert_eq!(&g[36..40], &[5, 0, 0, 0]);
    }
}
