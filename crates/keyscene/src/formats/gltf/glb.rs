//! The GLB container (glTF 2.0 §4.4): a 12-byte header, a JSON chunk padded with spaces and an
//! optional BIN chunk padded with zeros, every chunk 4-byte aligned. Reading GLB is left to the
//! `gltf` crate; this module only writes.

/// `"glTF"` as a little-endian u32.
pub const MAGIC: u32 = 0x4654_6C67;
/// Chunk type of the JSON chunk (`"JSON"`).
pub const CHUNK_JSON: u32 = 0x4E4F_534A;
/// Chunk type of the binary chunk (`"BIN\0"`).
pub const CHUNK_BIN: u32 = 0x004E_4942;

/// Packs `json` and `bin` into GLB bytes. An empty `bin` writes no BIN chunk. Fails when the
/// file would exceed the format's 4 GiB (u32 length) limit.
pub fn to_glb(json: &[u8], bin: &[u8]) -> Result<Vec<u8>, super::Error> {
    let pad = |n: usize| (4 - n % 4) % 4;
    let json_len = json.len() + pad(json.len());
    let bin_len = bin.len() + pad(bin.len());
    let total = 12 + 8 + json_len + if bin.is_empty() { 0 } else { 8 + bin_len };
    let total32 = u32::try_from(total)
        .map_err(|_| super::Error::Write(format!("GLB would be {total} bytes, over 4 GiB")))?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total32.to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(out.len() + pad(json.len()), b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(out.len() + pad(bin.len()), 0);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
