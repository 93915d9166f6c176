//! What reads as a sentence rather than code or data: the line tests the text detectors
//! share, so that "prose" means one thing in every detector that judges prose only.

/// Whether a line whose first visible character is `first` may be a sentence: it opens with
/// a letter that is not lower case (a capital, or a letter of a script without case). A line
/// opening in lower case continues a hard-wrapped paragraph (a comment, a document) or is a
/// command (`syn keyword …`, `hi def link …`).
///
/// ```
/// use loopguard_core::prose::opens_sentence;
/// assert!(opens_sentence('L') && opens_sentence('我'));
/// assert!(!opens_sentence('s') && !opens_sentence('#') && !opens_sentence('1'));
/// ```
#[inline]
pub fn opens_sentence(first: char) -> bool {
    first.is_alphabetic() && !first.is_lowercase()
}

/// The position of the first `'\n'` in `bytes`: the line ends the text detectors split
/// streamed deltas at. Eight bytes at a time, without the setup of a general search (deltas
/// are a few characters long).
///
/// ```
/// use loopguard_core::prose::find_newline;
/// assert_eq!(find_newline(b"let x = 1;\n}\n"), Some(10));
/// assert_eq!(find_newline(b"no line end here"), None);
/// ```
#[inline]
pub fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const NL: u64 = u64::from_ne_bytes([b'\n'; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0usize;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word) ^ NL;
        // The lowest set bit marks the first zero byte (borrows only run upwards).
        let zero = v.wrapping_sub(ONES) & !v & HIGH;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|k| at + k)
}

/// Counts the words of a line and those that read as names in code or data rather than
/// words of prose, one character at a time (see [`is_name`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Words {
    words: u32,
    names: u32,
    /// The word being read: has a letter or digit, a lower-case letter, capitals, a digit,
    /// a capital after a lower-case letter, and whether the last character was lower case.
    open: bool,
    lower: bool,
    upper: u8,
    digit: bool,
    camel: bool,
    prev_lower: bool,
}

impl Words {
    /// Feeds one character of the line (a space ends a word).
    #[inline]
    pub fn push(&mut self, c: char) {
        if c == ' ' || c == '\t' {
            self.end_word();
            return;
        }
        let lower = c.is_lowercase();
        if lower {
            self.lower = true;
            self.open = true;
        } else if c.is_uppercase() {
            self.upper = self.upper.saturating_add(1);
            self.camel |= self.prev_lower;
            self.open = true;
        } else if c.is_ascii_digit() {
            self.digit = true;
            self.open = true;
        } else if c.is_alphanumeric() {
            self.open = true;
        }
        self.prev_lower = lower;
    }

    fn end_word(&mut self) {
        if self.open {
            self.words = self.words.saturating_add(1);
            let name = self.camel
                || (self.digit && (self.lower || self.upper > 0))
                || (!self.lower && self.upper >= 2);
            self.names = self.names.saturating_add(u32::from(name));
        }
        *self = Words {
            words: self.words,
            names: self.names,
            ..Words::default()
        };
    }

    /// Ends the line: whether more than a quarter of its words are names (a line of code or
    /// data: `syn keyword baanConstant USER.0`, `TAMIL SYLLABLE LLLAA; 0BB4 0BBE`). Acronyms
    /// count as names too, which is why one in four is allowed.
    pub fn names_dominate(mut self) -> bool {
        self.end_word();
        4 * self.names > self.words
    }

    /// Words completed so far.
    pub fn words(&self) -> u32 {
        self.words
    }
}

/// Whether a word reads as a name in code or data: camelCase (a lower-case letter followed
/// by a capital), letters mixed with digits (`ES6`, `0BB4`, `L1000`), or two or more capitals
/// and no lower-case letter (`LLLAA`, `EVTBUTTON`, and acronyms such as `API`).
///
/// ```
/// use loopguard_core::prose::is_name;
/// for name in ["baanConstant", "EVTBUTTON1MASK", "0BB4", "USER.0", "API"] {
///     assert!(is_name(name), "{name}");
/// }
/// for word in ["Let", "read", "signature", "I", "503", "12:00:31", "don't"] {
///     assert!(!is_name(word), "{word}");
/// }
/// ```
pub fn is_name(word: &str) -> bool {
    let mut w = Words::default();
    word.chars().for_each(|c| w.push(c));
    w.end_word();
    w.names > 0
}

/// Whether more than a quarter of the words of `line` are names ([`Words::names_dominate`]).
///
/// ```
/// use loopguard_core::prose::names_dominate;
/// assert!(names_dominate("syn keyword baanConstant EVTBUTTON1MASK"));
/// assert!(!names_dominate("Let me read L1000-1035 to check the memo initialisation."));
/// ```
pub fn names_dominate(line: &str) -> bool {
    let mut w = Words::default();
    line.chars().for_each(|c| w.push(c));
    w.names_dominate()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_newline_agrees_with_a_search() {
        // Every length up to three words, newlines anywhere (and bytes that differ from one
        // by a bit, to trip a borrow).
        let mut g = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..40 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        g ^= g << 13;
                        g ^= g >> 7;
                        g ^= g << 17;
                        [b'\n', b'\x0b', b'\x08', b'a', b' ', 0x8a, 0x0a ^ 0x80][(g % 7) as usize]
                    })
                    .collect();
                assert_eq!(
                    find_newline(&bytes),
                    bytes.iter().position(|&b| b == b'\n'),
                    "{bytes:?}"
                );
            }
        }
    }
}
