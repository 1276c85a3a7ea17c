//! A small standard-alphabet base64 decoder and encoder for glTF `data:` URIs (RFC 4648 §4;
//! padding optional when decoding, no whitespace), so neither side needs an extra crate.

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

/// Encodes `bytes` as padded standard base64 (RFC 4648 §4).
pub fn encode(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = u32::from_be_bytes([0, b[0], b[1], b[2]]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
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
            assert_eq!(encode(plain.as_bytes()), enc);
        }
        assert_eq!(decode("Zm9v!"), None);
        assert_eq!(
            decode_data_uri("data:application/octet-stream;base64,Zm8="),
            Some(Some(b"fo".to_vec()))
        );
        assert_eq!(decode_data_uri("scene.bin"), None);
    }
}
