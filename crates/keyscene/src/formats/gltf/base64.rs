//! Base64 for glTF `data:` URIs (RFC 4648 §4), through the `base64` crate: decoding accepts
//! the standard or the URL-safe alphabet, padded or not, no whitespace; encoding writes padded
//! standard base64.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, Engine, GeneralPurpose, GeneralPurposeConfig};

/// Padding optional, stray low bits in the last character ignored: what glTF writers emit.
const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// Decodes base64 text. `None` when a character is outside the alphabet or the length is
/// impossible (one leftover character).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).or_else(|_| URL_SAFE.decode(text)).ok()
}

/// Encodes `bytes` as padded standard base64 (RFC 4648 §4).
pub fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
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
