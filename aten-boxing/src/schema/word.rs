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
}
