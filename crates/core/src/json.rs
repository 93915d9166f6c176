//! Byte-level facts about JSON text shared by the writers and readers of the workspace.

/// The index of the first byte at or after `from` that a JSON string cannot hold as it is —
/// `"`, `\` or a control character (below 0x20) — or `bytes.len()` when there is none.
///
/// Eight bytes are tested at a time: the zero-byte tests flag, in each word, every byte
/// that is one of those and possibly bytes above a flagged one (a borrow), never a byte
/// below the first true one, so the lowest flag is exact. The fingerprint's string writer
/// uses it to copy clean runs whole, and the transcript reader to step over a string's body.
///
/// ```
/// use loopguard_core::json::special_from;
/// assert_eq!(special_from(br#"plain text, then "quoted""#, 0), 17);
/// assert_eq!(special_from(b"a\\b", 2), 3);
/// assert_eq!(special_from(b"no escape here", 0), 14);
/// ```
#[inline]
pub fn special_from(bytes: &[u8], from: usize) -> usize {
    use crate::swar::splat;
    // The high bit of each byte of `x` that is zero (exact up to the lowest one).
    const fn zero_bytes(x: u64) -> u64 {
        x.wrapping_sub(splat(1)) & !x & splat(0x80)
    }
    let mut i = from;
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let w = u64::from_le_bytes(*chunk);
        let below_space = w.wrapping_sub(splat(0x20)) & !w & splat(0x80);
        let m = zero_bytes(w ^ splat(b'"')) | zero_bytes(w ^ splat(b'\\')) | below_space;
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = bytes.get(i) {
        if is_special(c) {
            return i;
        }
        i += 1;
    }
    bytes.len().max(from)
}

/// Whether a JSON string cannot hold byte `b` as it is.
#[inline]
pub fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(bytes: &[u8], from: usize) -> usize {
        (from..bytes.len())
            .find(|&i| is_special(bytes[i]))
            .unwrap_or(bytes.len().max(from))
    }

    #[test]
    fn every_byte_in_every_place_of_a_word() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                for fill in [b'a', 0x80, 0xff, b'!', 0x20, 0x21, 0x1f] {
                    let mut w = [fill; 12];
                    w[pos] = b;
                    for from in [0, 1, 3] {
                        assert_eq!(
                            special_from(&w, from),
                            reference(&w, from),
                            "{b:#x} at {pos} in {fill:#x}, from {from}"
                        );
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn prop_finds_the_first_special_byte(
            bytes in prop::collection::vec(prop_oneof![any::<u8>(), Just(b'"'), Just(b'\\'), Just(0u8), Just(0x20u8)], 0..40),
            from in 0usize..44,
        ) {
            prop_assert_eq!(special_from(&bytes, from), reference(&bytes, from));
        }
    }
}
