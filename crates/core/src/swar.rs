//! Bytes read 8 at a time as one `u64` (little-endian: byte `k` of the slice is byte `k` of
//! the number), for scans that pass over long runs of uninteresting bytes; and a text's lines
//! cut where `memchr` finds their newlines.

/// Eight copies of a byte.
pub(crate) const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// The first 8 bytes of `bytes` (zeros for missing ones) as a little-endian number.
pub(crate) fn le_u64(bytes: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    let n = bytes.len().min(8);
    if let (Some(to), Some(from)) = (a.get_mut(..n), bytes.get(..n)) {
        to.copy_from_slice(from);
    }
    u64::from_le_bytes(a)
}

/// The high bit of each byte of `x` that lies in `lo..=hi` (`1 <= lo <= hi < 0x80`); bytes of
/// `0x80` or more are never in the range. No carry crosses a byte: each sum stays below 256.
pub(crate) fn bytes_in(x: u64, lo: u8, hi: u8) -> u64 {
    let y = x & splat(0x7f);
    let at_least_lo = y.wrapping_add(splat(0x80 - lo));
    let above_hi = y.wrapping_add(splat(0x7f - hi));
    at_least_lo & !above_hi & !x & splat(0x80)
}

/// The lines of `s`, each with its newline (the last one may have none): what
/// `s.split_inclusive('\n')` yields, each end found by `memchr`.
pub(crate) fn lines_inclusive(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', rest.as_bytes()).map_or(rest.len(), |i| i + 1);
        // A newline's next byte starts a character: both halves exist.
        let (line, after) = (rest.get(..end)?, rest.get(end..)?);
        rest = after;
        Some(line)
    })
}

/// What `s.lines()` yields: [`lines_inclusive`] without each line's `\n` or `\r\n`.
pub(crate) fn lines(s: &str) -> impl Iterator<Item = &str> {
    lines_inclusive(s).map(|line| match line.strip_suffix('\n') {
        Some(l) => l.strip_suffix('\r').unwrap_or(l),
        None => line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn prop_bytes_in_tests_each_byte(x in any::<[u8; 8]>(), lo in 1u8..0x80, len in 0u8..0x80) {
            let hi = lo.saturating_add(len).min(0x7f);
            let got = bytes_in(u64::from_le_bytes(x), lo, hi);
            for (k, b) in x.iter().enumerate() {
                prop_assert_eq!(got >> (8 * k) & 0xff, if (lo..=hi).contains(b) { 0x80 } else { 0 });
            }
        }

        #[test]
        fn prop_lines_are_str_lines(s in "(\n|\r|\r\n|a|7|é|\u{3000}| |abcdefgh){0,30}") {
            prop_assert_eq!(lines_inclusive(&s).collect::<Vec<_>>(), s.split_inclusive('\n').collect::<Vec<_>>());
            prop_assert_eq!(lines(&s).collect::<Vec<_>>(), s.lines().collect::<Vec<_>>());
        }
    }
}
