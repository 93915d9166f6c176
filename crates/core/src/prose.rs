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

/// Whether a trimmed line ends a sentence: its last character, after closing quotes,
/// brackets and emphasis, is a full stop, a question or exclamation mark, a colon or an
/// ellipsis. A line that does not, followed by a line that opens in lower case (see
/// [`opens_sentence`]), is a line of a hard-wrapped paragraph.
///
/// ```
/// use loopguard_core::prose::ends_sentence;
/// assert!(ends_sentence("Then rerun the tests.") && ends_sentence("(see below.)"));
/// assert!(ends_sentence("Is it **done?**") && ends_sentence("The steps:"));
/// assert!(!ends_sentence("This program is free software; you can redistribute it"));
/// ```
pub fn ends_sentence(text: &str) -> bool {
    let body = text.trim_end_matches([')', ']', '"', '\'', '*', '_', '`', '\u{201d}', '\u{2019}']);
    body.ends_with([
        '.', '!', '?', ':', '\u{2026}', '\u{3002}', '\u{ff01}', '\u{ff1f}', '\u{ff1a}',
    ])
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
