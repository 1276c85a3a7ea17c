//! A small standard-alphabet base64 decoder for glTF `data:` URIs (RFC 4648 §4; padding
//! optional, no whitespace), so the reader needs no extra crate.

/// Decodes base64 text. `None` when a character is outside the alphabet or the length is
/// impossible (one leftover character).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for chunk in text.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// If `uri` is a `data:` URI with base64 content, its decoded bytes (`Some(None)`: a data URI
/// that does not decode); `None` for any other URI.
pub fn decode_data_uri(uri: &str) -> Option<Option<Vec<u8>>> {
    let rest = uri.strip_prefix("data:")?;
    let (_, payload) = rest.split_once(";base64,")?;
    Some(decode(payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_rfc4648_test_vectors() {
        // RFC 4648 §10.
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(decode(enc).unwrap(), plain.as_bytes());
        }
        assert_eq!(decode("Zm9v!"), None);
        assert_eq!(
            decode_data_uri("data:application/octet-stream;base64,Zm8="),
            Some(Some(b"fo".to_vec()))
        );
        assert_eq!(decode_data_uri("scene.bin"), None);
    }
}
