//! Embedded media: the bytes of a `Video` (or `Audio`) record's `Content` child, as ufbx
//! `ufbxi_read_embedded_blob` reads them (record level; knows nothing of the scene).
//!
//! - **Binary**: `Content` holds one raw (`R`) value, the file's bytes as stored; a record
//!   split over several values is their concatenation. String (`S`) values count as raw
//!   bytes too, as ufbx reads every value of a `Content` array alike.
//! - **ASCII**: `Content: , "…", "…"` — the values are base64 (RFC 4648 standard alphabet)
//!   strings, each decoded by itself and the results concatenated; the leading comma (an
//!   empty first value that Maya and the FBX SDK write) is skipped by the parser. A piece
//!   decodes when its length is a multiple of 4, every character is in the alphabet or `=`,
//!   and `=` appears only as the end of its last group (`xxx=` or `xx==`); stray low bits of
//!   the last character are ignored. Any other piece makes the whole `Content` unusable:
//!   ufbx then keeps no content and warns ("Ignored bad base64 embedded content"), and so
//!   does this reader ([`ContentError`]).
//! - `Content` missing or empty: no embedded bytes (the file only names the image on disk).

use std::borrow::Cow;

use super::tree::{Encoding, NodeRef, Property};

/// The `Content` of a `Video` could not be decoded (ASCII base64 only; binary content is
/// taken as stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentError {
    /// Index of the first value (quoted piece) that is not valid base64.
    pub piece: usize,
}

impl std::fmt::Display for ContentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Content piece {} is not base64 (length a multiple of 4, `=` only at the end): \
             embedded bytes ignored",
            self.piece + 1
        )
    }
}

/// The embedded bytes of `record` (a `Video` or `Audio` object), from its `Content` child.
/// `Ok(None)` when there is no `Content` or it holds no bytes.
///
/// Binary content in one value (what the FBX SDK writes) is borrowed from the record tree,
/// hence from the input: the caller makes the one copy it keeps. Content split over several
/// values, and ASCII content, is joined (decoded) into a new buffer. The result is never
/// longer than the record's own values (base64 shrinks by a quarter), so it needs no limit of
/// its own.
pub fn content<'d>(
    record: NodeRef<'d, '_>,
    encoding: Encoding,
) -> Result<Option<Cow<'d, [u8]>>, ContentError> {
    let Some(node) = record.child("Content") else {
        return Ok(None);
    };
    let pieces = || {
        node.properties().iter().filter_map(|p| match p {
            Property::Raw(b) => Some(&b[..]),
            Property::String(s) => Some(&s[..]),
            _ => None,
        })
    };
    let mut nonempty = pieces().filter(|p| !p.is_empty());
    if encoding == Encoding::Binary {
        if let (Some(only), None) = (nonempty.next(), nonempty.next()) {
            return Ok(Some(Cow::Borrowed(only)));
        }
    }
    // Room for the whole result up front (a split `Content` would otherwise regrow the
    // buffer piece by piece): base64 is 4 characters per 3 bytes.
    let stored: usize = pieces().map(<[u8]>::len).sum();
    let mut out = Vec::with_capacity(match encoding {
        Encoding::Binary => stored,
        Encoding::Ascii => stored / 4 * 3 + 3,
    });
    for (i, piece) in pieces().enumerate() {
        match encoding {
            Encoding::Binary => out.extend_from_slice(piece),
            Encoding::Ascii => {
                if !decode_base64_into(piece, &mut out) {
                    return Err(ContentError { piece: i });
                }
            }
        }
    }
    Ok((!out.is_empty()).then_some(Cow::Owned(out)))
}

/// Appends the bytes of the base64 text `src` to `out`; `false` (and `out` partly written)
/// when `src` breaks a rule of the module docs: a length that is a multiple of 4, every
/// character in the standard alphabet, `=` only closing the last group (`xxx=`, `xx==`); the
/// last character's stray low bits are ignored.
///
/// Four characters at a time: each is looked up in the table of its place in the group,
/// which holds its six bits already shifted there, so the group's 24 bits are the OR of four
/// loads, and a character outside the alphabet (`=` included) sets bit 24 in any table, so
/// one test checks the group. (The `base64` crate took about 6 instructions a character
/// here, this loop about 4.)
fn decode_base64_into(src: &[u8], out: &mut Vec<u8>) -> bool {
    if src.len() % 4 != 0 {
        return false;
    }
    let Some((body, last)) = src.split_last_chunk::<4>() else { return true };
    let start = out.len();
    out.resize(start + body.len() / 4 * 3, 0);
    for (o, g) in out[start..].chunks_exact_mut(3).zip(body.chunks_exact(4)) {
        let x = B64[0][g[0] as usize]
            | B64[1][g[1] as usize]
            | B64[2][g[2] as usize]
            | B64[3][g[3] as usize];
        if x & BAD != 0 {
            return false;
        }
        o.copy_from_slice(&x.to_be_bytes()[1..]);
    }
    // The last group: `xx==` is one byte, `xxx=` two, `xxxx` three.
    let [a, b, c, d] = *last;
    let x = B64[0][a as usize] | B64[1][b as usize];
    let (x, n) = match (c, d) {
        (b'=', b'=') => (x, 1),
        (_, b'=') => (x | B64[2][c as usize], 2),
        _ => (x | B64[2][c as usize] | B64[3][d as usize], 3),
    };
    if x & BAD != 0 {
        return false;
    }
    out.extend_from_slice(&x.to_be_bytes()[1..1 + n]);
    true
}

/// Bit 24 of a [`B64`] entry: the character is not in the alphabet.
const BAD: u32 = 1 << 24;

/// `B64[k][c]`: the six bits of base64 character `c` shifted to place `k` of a group
/// (`18 - 6k`), or [`BAD`].
static B64: [[u32; 256]; 4] = {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut t = [[BAD; 256]; 4];
    let mut v = 0;
    while v < 64 {
        let mut k = 0;
        while k < 4 {
            t[k][ALPHABET[v] as usize] = (v as u32) << (18 - 6 * k);
            k += 1;
        }
        v += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(s: &str) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        decode_base64_into(s.as_bytes(), &mut out).then_some(out)
    }

    #[test]
    fn base64_follows_rfc4648_vectors_and_ufbx_padding_rules() {
        // RFC 4648 §10 test vectors.
        for (text, plain) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(decode(text).as_deref(), Some(plain.as_bytes()), "{text}");
        }
        // ufbx `synthetic_base64_parse_7700_ascii.fbx` pieces ufbx rejects: mid padding, a
        // length that is not a multiple of 4, a character outside the alphabet, `=` placed
        // other than `xxx=`/`xx==`.
        for bad in [
            "SGVsb=8gd29ybGQh",
            "A",
            "AA",
            "AAA",
            "AAAAA",
            "SGVsb?8gd29ybGQh",
            "SGVsbG8gd29ybGQ?",
            "SGVsbG8gd29y=AAA",
            "SGVsbG8gd29yA=AA",
            "SGVsbG8gd29y==AA",
            "SGVsbG8gd29y=A=A",
            "SGVsbG8gd29y===A",
        ] {
            assert_eq!(decode(bad), None, "{bad}");
        }
        assert_eq!(decode("SGVsbG8gd29ybGQ=").as_deref(), Some(&b"Hello world"[..]));
        // Stray low bits are ignored: `h` is 100001, of which only the leading 10 belong to
        // `f` (01100110); `Zm9=` likewise ends "fo" with a stray 01 (the 9 is 111101).
        assert_eq!(decode("Zh==").as_deref(), Some(&b"f"[..]));
        assert_eq!(decode("Zm9=").as_deref(), Some(&b"fo"[..]));
        assert_eq!(decode("SGVsbG8gd29yAAAA").as_deref(), Some(&b"Hello wor\0\0\0"[..]));
        // `=` or a bad character in any place of a group that is not the last.
        for bad in ["=AAAAAAA", "A=AAAAAA", "AA=AAAAA", "AAA=AAAA", "AAAA", "AAA\u{80}AAAA"] {
            let ok = bad == "AAAA";
            assert_eq!(decode(bad).is_some(), ok, "{bad}");
        }
    }

    #[test]
    fn base64_decodes_every_byte_value_at_every_length() {
        // Our encoding of bytes 0..=255 shifted through every start and length, decoded back.
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let encode = |bytes: &[u8]| -> String {
            let mut s = String::new();
            for g in bytes.chunks(3) {
                let x = u32::from(g[0]) << 16
                    | u32::from(*g.get(1).unwrap_or(&0)) << 8
                    | u32::from(*g.get(2).unwrap_or(&0));
                for k in 0..4 {
                    s.push(if k <= g.len() {
                        char::from(ALPHABET[(x >> (18 - 6 * k) & 63) as usize])
                    } else {
                        '='
                    });
                }
            }
            s
        };
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for start in 0..8 {
            for len in 0..bytes.len() - start {
                let plain = &bytes[start..start + len];
                assert_eq!(decode(&encode(plain)).as_deref(), Some(plain), "{start} {len}");
            }
        }
    }

    #[test]
    fn ascii_content_pieces_are_decoded_one_by_one_and_joined() {
        let text = br#"; FBX 7.4.0 project file
Objects: {
    Video: 1, "Video::v", "Clip" {
        Content: , "SGVs", "bG8="
    }
    Video: 2, "Video::bad", "Clip" {
        Content: , "SGVs", "b?8="
    }
    Video: 3, "Video::empty", "Clip" {
        Content: , ""
    }
}
"#;
        let doc = super::super::parse(text, &Default::default()).unwrap();
        let videos: Vec<_> = doc.find(&["Objects"]).unwrap().children().collect();
        assert_eq!(content(videos[0], doc.encoding).unwrap().as_deref(), Some(&b"Hello"[..]));
        assert_eq!(content(videos[1], doc.encoding), Err(ContentError { piece: 1 }));
        assert_eq!(content(videos[2], doc.encoding), Ok(None));
    }
}
