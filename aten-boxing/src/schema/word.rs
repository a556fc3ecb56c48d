//! Short words packed into integers, so that keyword and type-name lookups
//! compare integers instead of calling `memcmp` for every candidate.
//! Identifiers hold no NUL byte, so two words of at most the key's width
//! are equal exactly when their keys are.

/// Up to 8 bytes of `s`, little-endian, zero-padded (longer words are cut;
/// check the length first).
pub(crate) const fn pack8(s: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut i = 0;
    while i < s.len() && i < 8 {
        key |= (s[i] as u64) << (8 * i);
        i += 1;
    }
    key
}

/// Up to 16 bytes of `s`, little-endian, zero-padded (longer words are
/// cut; check the length first).
pub(crate) const fn pack16(s: &[u8]) -> u128 {
    let mut key = 0u128;
    let mut i = 0;
    while i < s.len() && i < 16 {
        key |= (s[i] as u128) << (8 * i);
        i += 1;
    }
    key
}

/// `pack8` of the first `n` (at most 8) bytes of `s`, with one unaligned
/// load when `s` has 8 bytes to read.
pub(crate) fn key8(s: &[u8], n: usize) -> u64 {
    debug_assert!(n <= 8 && n <= s.len());
    match s.first_chunk::<8>() {
        Some(chunk) => {
            let word = u64::from_le_bytes(*chunk);
            if n >= 8 {
                word
            } else {
                word & ((1u64 << (8 * n)) - 1)
            }
        }
        None => pack8(&s[..n.min(s.len())]),
    }
}

/// `pack16` of the first `n` (at most 16) bytes of `s`, with one unaligned
/// load when `s` has 16 bytes to read.
pub(crate) fn key16(s: &[u8], n: usize) -> u128 {
    debug_assert!(n <= 16 && n <= s.len());
    match s.first_chunk::<16>() {
        Some(chunk) => {
            let word = u128::from_le_bytes(*chunk);
            if n >= 16 {
                word
            } else {
                word & ((1u128 << (8 * n)) - 1)
            }
        }
        None => pack16(&s[..n.min(s.len())]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_distinguish_words() {
        assert_ne!(pack8(b"in"), pack8(b"int"));
        assert_eq!(pack8(b"in"), pack8(b"in"));
        assert_ne!(pack16(b"Tensor"), pack16(b"Tensors"));
        assert_eq!(pack16(b""), 0);
    }

    #[test]
    fn loads_match_packing() {
        let text = b"Tensor self, int dim) -> Tensor";
        assert_eq!(key8(text, 6), pack8(b"Tensor"));
        assert_eq!(key8(b"int", 3), pack8(b"int"));
        assert_eq!(key16(text, 6), pack16(b"Tensor"));
        assert_eq!(key16(b"__torch__", 9), pack16(b"__torch__"));
        assert_eq!(key16(b"MemoryFormat? x=None", 12), pack16(b"MemoryFormat"));
    }
}
