//! Standard base64 (RFC 4648, with padding): the encoding of VTK's inline binary `DataArray`s.
//! Twenty lines do not justify a dependency; the decoder exists for round-trip tests.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Append the base64 encoding of `bytes` to `out`.
pub(crate) fn encode_into(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

/// Decode standard padded base64, ignoring whitespace; `None` on any invalid character (tests,
/// and reading a temperature back from a VTU as a heat run's initial condition).
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let sextets: Vec<u32> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .map(|c| ALPHABET.iter().position(|&a| a == c).map(|p| p as u32))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for chunk in sextets.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (k, &s)| acc | (s << (18 - 6 * k)));
        for k in 0..chunk.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * k)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC4648: [(&str, &str); 7] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];

    #[test]
    fn rfc4648_test_vectors() {
        for (plain, coded) in RFC4648 {
            let mut s = String::new();
            encode_into(plain.as_bytes(), &mut s);
            assert_eq!(s, coded, "encoding {plain:?}");
            assert_eq!(
                decode(coded).as_deref(),
                Some(plain.as_bytes()),
                "decoding {coded:?}"
            );
        }
    }

    #[test]
    fn round_trip_all_byte_values() {
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in [0, 1, 2, 3, 254, 255, 512] {
            let mut s = String::new();
            encode_into(&bytes[..len], &mut s);
            assert_eq!(s.len(), len.div_ceil(3) * 4);
            assert_eq!(decode(&s).unwrap(), &bytes[..len]);
        }
        assert!(decode("Zm9v!").is_none());
    }
}
