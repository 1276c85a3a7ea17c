//! The USDZ package: a zip archive written here (no zip crate does USDZ's alignment), as the
//! USDZ specification asks (openusd.org, "Usdz File Format Specification"): every entry
//! stored uncompressed (method 0) and unencrypted, the root layer first, and every entry's
//! data starting at a multiple of 64 bytes from the start of the file — the local header's
//! extra field is padded to get there (an extra-field record of id `0x1986`, as OpenUSD's own
//! writer pads). Fixed timestamps (1980-01-01 00:00) keep the bytes deterministic.

/// The alignment of every entry's data, in bytes.
pub const ALIGN: usize = 64;

/// The extra-field record id of the padding (what OpenUSD's `UsdZipFileWriter` writes).
const PAD_ID: u16 = 0x1986;

/// Why a package could not be built.
#[derive(Debug, Clone, PartialEq)]
pub enum ZipError {
    /// An entry or the archive is past what a zip without ZIP64 records holds (4 GiB, 65,535
    /// entries); USDZ readers need no ZIP64, so none is written.
    TooLarge(String),
}

impl std::fmt::Display for ZipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ZipError::TooLarge(what) => {
                write!(f, "USDZ package: {what} is past 4 GiB or 65,535 entries (no ZIP64)")
            }
        }
    }
}

/// The CRC-32 (IEEE 802.3, reflected, the zip checksum) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut c = !0u32;
    for &b in bytes {
        c = TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// The package of `entries` (name inside the package, bytes), in the order given (the root
/// layer first), as one zip archive.
pub fn package(entries: &[(&str, &[u8])]) -> Result<Vec<u8>, ZipError> {
    let big = |what: &str| ZipError::TooLarge(what.to_string());
    let count = u16::try_from(entries.len()).map_err(|_| big("the entry count"))?;
    let mut out: Vec<u8> = Vec::new();
    let mut central: Vec<u8> = Vec::new();
    for (name, data) in entries {
        let offset = u32::try_from(out.len()).map_err(|_| big(name))?;
        let size = u32::try_from(data.len()).map_err(|_| big(name))?;
        let name_len = u16::try_from(name.len()).map_err(|_| big(name))?;
        let crc = crc32(data);
        // Data starts after the 30-byte header, the name and the extra field.
        let unpadded = out.len() + 30 + name.len();
        let mut pad = (ALIGN - unpadded % ALIGN) % ALIGN;
        if pad != 0 && pad < 4 {
            pad += ALIGN; // room for the record's id and size
        }
        let common = |v: &mut Vec<u8>| {
            put16(v, 10); // version needed: 1.0 (stored)
            put16(v, 0); // flags
            put16(v, 0); // method: stored
            put16(v, 0); // time 00:00
            put16(v, 33); // date 1980-01-01
            put32(v, crc);
            put32(v, size);
            put32(v, size);
            put16(v, name_len);
        };
        put32(&mut out, 0x0403_4b50);
        common(&mut out);
        put16(&mut out, pad as u16);
        out.extend_from_slice(name.as_bytes());
        if pad != 0 {
            put16(&mut out, PAD_ID);
            put16(&mut out, (pad - 4) as u16);
            out.resize(out.len() + pad - 4, 0);
        }
        debug_assert_eq!(out.len() % ALIGN, 0);
        out.extend_from_slice(data);
        put32(&mut central, 0x0201_4b50);
        put16(&mut central, 20); // made by: 2.0, MS-DOS attributes
        common(&mut central);
        put16(&mut central, 0); // extra
        put16(&mut central, 0); // comment
        put16(&mut central, 0); // disk
        put16(&mut central, 0); // internal attributes
        put32(&mut central, 0); // external attributes
        put32(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = u32::try_from(out.len()).map_err(|_| big("the archive"))?;
    let cd_size = u32::try_from(central.len()).map_err(|_| big("the directory"))?;
    out.extend_from_slice(&central);
    put32(&mut out, 0x0605_4b50);
    put16(&mut out, 0);
    put16(&mut out, 0);
    put16(&mut out, count);
    put16(&mut out, count);
    put32(&mut out, cd_size);
    put32(&mut out, cd_offset);
    put16(&mut out, 0);
    Ok(out)
}

fn put16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16_at(b: &[u8], at: usize) -> usize {
        u16::from_le_bytes([b[at], b[at + 1]]) as usize
    }
    fn u32_at(b: &[u8], at: usize) -> usize {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The CRC-32 check value of "123456789" (Rocksoft catalogue: CRC-32, 0xCBF43926).
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn every_entry_is_stored_and_64_byte_aligned_root_layer_first() {
        let names = ["scene.usda", "a.png", "longer_texture_name.jpg", "b"];
        let datas: Vec<Vec<u8>> = (0..4).map(|k| vec![k as u8; 1 + 37 * k]).collect();
        let entries: Vec<(&str, &[u8])> =
            names.iter().zip(&datas).map(|(n, d)| (*n, d.as_slice())).collect();
        let zip = package(&entries).unwrap();
        // End of central directory: 4 entries, directory where it says.
        let eocd = zip.len() - 22;
        assert_eq!(u32_at(&zip, eocd), 0x0605_4b50);
        assert_eq!(u16_at(&zip, eocd + 10), 4);
        let mut cd = u32_at(&zip, eocd + 16);
        for (name, data) in names.iter().zip(&datas) {
            assert_eq!(u32_at(&zip, cd), 0x0201_4b50);
            assert_eq!(u16_at(&zip, cd + 10), 0, "stored");
            let local = u32_at(&zip, cd + 42);
            assert_eq!(u32_at(&zip, local), 0x0403_4b50);
            assert_eq!(u16_at(&zip, local + 8), 0, "stored");
            let n = u16_at(&zip, local + 26);
            let extra = u16_at(&zip, local + 28);
            assert_eq!(&zip[local + 30..local + 30 + n], name.as_bytes());
            let start = local + 30 + n + extra;
            assert_eq!(start % 64, 0, "{name} data at {start}");
            assert_eq!(&zip[start..start + data.len()], data.as_slice());
            assert_eq!(u32_at(&zip, local + 14) as u32, crc32(data));
            cd += 46 + u16_at(&zip, cd + 28);
        }
        // The root layer is the first entry, at offset 0.
        assert_eq!(u32_at(&zip, u32_at(&zip, eocd + 16) + 42), 0);
    }
}
