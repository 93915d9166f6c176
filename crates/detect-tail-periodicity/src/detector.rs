//! The `tail-periodicity` state machine.

use crate::evidence::{row_for, Run, RunTracker};
use crate::exact::TailMatcher;
use crate::seed::SeedScanner;
use crate::{
    Algorithm, Rule, Settings, CODE_TABLE, DATA_TABLE, DATA_WORD_CHARS, NAME, NOISY_MAX_NUMBERS,
    NOISY_MIN_LETTERS, NOISY_MIN_SPACES, NOISY_TABLE, PROSE_TABLE,
};
use loopguard_core::{Cx, Detector, Event, Finding, Fingerprint, Level, Stream};
use serde::{Deserialize, Serialize};

/// First symbol used as a stream separator by the exact engine (above every `char`).
const SENTINEL_BASE: u32 = 0x11_0000;

/// Bit `c` is set for the ASCII letters and digits (`char::is_alphanumeric` on ASCII).
const ASCII_ALNUM: u128 = {
    let mut m = 0u128;
    let mut c = 0u32;
    while c < 128 {
        let ch = c as u8 as char;
        if ch.is_ascii_alphanumeric() {
            m |= 1 << c;
        }
        c += 1;
    }
    m
};

/// 1 for the ASCII letters and digits, by code (a byte load is cheaper than a 128-bit shift).
pub(crate) const ALNUM_BYTES: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0usize;
    while c < 128 {
        t[c] = ((ASCII_ALNUM >> c) & 1) as u8;
        c += 1;
    }
    t
};

/// The bit of a filler run's count (`Prep::run`, the quiet loop's `filler`) that says the run
/// holds a line feed. A run's first line feed starts the count again at 1: the filler that
/// ends a line and the filler that opens the next are cut apart, so two lines that differ
/// only at the start of the second are not made equal by the cut (`; ; ;  # ≮.-܈--` at the
/// end of one line of Unicode's IDNA test vectors, then `≮．-܈--; ≮.-܈--; [` or `≮.-܈--; ; [`
/// at the start of the next), while padding made of many blank lines is still cut at
/// `max-filler-run`.
pub(crate) const FILLER_LF: u32 = 1 << 31;

/// Turns the streamed characters of one message into the symbol sequence the engines see:
/// a separator where the stream switches (thinking ↔ text), and long runs of filler (neither
/// letter nor digit) cut to `max-filler-run` symbols.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Prep {
    max_filler_run: u32,
    seed_join: bool,
    run: u32,
    last_stream: Option<Stream>,
    sentinels: u32,
}

impl Prep {
    /// A preparer for `settings`.
    pub fn new(settings: &Settings) -> Prep {
        Prep {
            max_filler_run: settings.max_filler_run as u32,
            seed_join: settings.algorithm == Algorithm::Seed,
            ..Prep::default()
        }
    }

    /// The separator to insert before a delta of `stream`, if the stream switched.
    pub fn switch(&mut self, stream: Stream) -> Option<u32> {
        let prev = self.last_stream.replace(stream);
        match prev {
            Some(p) if p != stream => {
                if self.seed_join {
                    self.map('\n')
                } else {
                    self.run = 0;
                    self.sentinels = self.sentinels.wrapping_add(1) % 0x7fff_0000;
                    Some(SENTINEL_BASE + self.sentinels)
                }
            }
            _ => None,
        }
    }

    /// The filler run the quiet loop cuts at (`max-filler-run`; 0, no cut, is the largest).
    #[inline]
    fn quiet_filler(&self) -> u32 {
        if self.max_filler_run > 0 {
            self.max_filler_run
        } else {
            u32::MAX
        }
    }

    /// The symbol for `ch`, or `None` when it is dropped (beyond the filler-run limit).
    #[inline]
    pub fn map(&mut self, ch: char) -> Option<u32> {
        let c = u32::from(ch);
        // Letters and digits alternate with spaces and punctuation at random in prose: keep
        // the common ASCII case free of data-dependent branches (a table bit and a mask).
        let mut alnum = u32::from(ALNUM_BYTES.get((c & 127) as usize).copied().unwrap_or(0))
            & u32::from(c < 128);
        if c >= 128 {
            alnum = u32::from(ch.is_alphanumeric());
        }
        // 0 after a letter or digit, else one more; the first line feed of a run starts the
        // count again (see [`FILLER_LF`]).
        self.run = if ch == '\n' && self.run & FILLER_LF == 0 {
            FILLER_LF | 1
        } else {
            self.run.saturating_add(1) & alnum.wrapping_sub(1)
        };
        if self.max_filler_run > 0 && self.run & !FILLER_LF > self.max_filler_run {
            None
        } else {
            Some(c)
        }
    }

    /// The whole symbol sequence of a message given as `(stream, delta)` pieces, with the
    /// message character offset after each symbol (for oracles and tests).
    pub fn sequence(settings: &Settings, pieces: &[(Stream, &str)]) -> Vec<(u32, u64)> {
        let mut prep = Prep::new(settings);
        let mut out = Vec::new();
        let mut offset = 0u64;
        for (stream, delta) in pieces {
            if let Some(s) = prep.switch(*stream) {
                out.push((s, offset));
            }
            for ch in delta.chars() {
                offset += 1;
                if let Some(s) = prep.map(ch) {
                    out.push((s, offset));
                }
            }
        }
        out
    }
}

/// Tells code from prose as a message streams, line by line: inside a code fence, or in a
/// message most of whose lines so far look like code (a file being written), the stricter
/// thresholds apply.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Lines {
    in_fence: bool,
    /// Leading spaces of the current line (tabs count 4).
    indent: u32,
    /// Fence characters at the start of the current line.
    fence: u32,
    /// First and last non-whitespace characters of the current line.
    first: Option<char>,
    last: char,
    /// Completed non-empty lines, and those that look like code.
    lines: u32,
    code_lines: u32,
    /// The current line has whitespace after its first visible character.
    #[serde(default)]
    spaced: bool,
    /// Visible characters of the current line before any whitespace after the first (what
    /// tells a line of data: a long run with no space).
    #[serde(default)]
    solid: u32,
    /// The last of those characters (a `:` there makes the line a `Key: value` field).
    #[serde(default)]
    solid_last: Option<char>,
    /// The last non-empty line opened with `/` (a comment's first line, as `/*` or `/**`),
    /// or with `*` after such a line: a line that opens with `*` next continues the comment
    /// (` * <p>…`), a line of the file being written rather than a bullet of prose.
    #[serde(default)]
    in_comment: bool,
    /// The last line ended was a line of data (a long run with no space, as a hex or base64
    /// table writes it).
    #[serde(default)]
    last_line_data: bool,
}

/// Whether a line whose last visible character is `c` ends as a line of code does: a
/// statement, a block, a call or a list going on (`;` `{` `}` `(` `)` `[` `]` `,` `=` `\`).
#[inline]
pub(crate) fn ends_code_line(c: char) -> bool {
    matches!(
        c,
        ';' | '{' | '}' | '(' | ')' | '[' | ']' | ',' | '=' | '\\'
    )
}

/// Whether the ASCII byte `b` is whitespace as `char::is_whitespace` says (tab, line feed,
/// vertical tab, form feed, carriage return, space): the whitespace of [`ascii_masks`].
#[inline(always)]
fn ascii_whitespace(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// Bit masks of the line feeds, the spaces and the whitespace (tab, line feed, vertical tab,
/// form feed, carriage return, space: what `char::is_whitespace` says of ASCII) among the
/// first 64 bytes of `chunk`, which must be ASCII: bit `i` for byte `i`.
///
/// Eight bytes at a time: for bytes below 0x80, adding 0x7f to a byte carries into its high
/// bit exactly when it is not zero, and setting its high bit before subtracting `n` leaves
/// it set exactly when the byte is at least `n`, with no carry or borrow across bytes; a
/// multiplication then gathers the eight high bits into one byte.
#[inline]
fn ascii_masks(chunk: &[u8]) -> [u64; 3] {
    const fn splat(b: u8) -> u64 {
        u64::from_le_bytes([b; 8])
    }
    const HIGH: u64 = splat(0x80);
    // The high bit of each byte of `w` equal to `b`.
    let eq = |w: u64, b: u8| !((w ^ splat(b)) + splat(0x7f)) & HIGH;
    // The high bit of each byte of `w` that is at least `n`.
    let at_least = |w: u64, n: u8| ((w | HIGH) - splat(n)) & HIGH;
    // The high bits of the eight bytes, as the eight low bits.
    let gather = |m: u64| (m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
    let mut out = [0u64; 3];
    for (k, word) in chunk.chunks(8).take(8).enumerate() {
        let w = match word.first_chunk::<8>() {
            Some(&bytes) => u64::from_le_bytes(bytes),
            None => {
                // A short last word is padded with a letter, none of the three.
                let mut bytes = [b'x'; 8];
                for (slot, &b) in bytes.iter_mut().zip(word) {
                    *slot = b;
                }
                u64::from_le_bytes(bytes)
            }
        } & splat(0x7f);
        let space = eq(w, b' ');
        let ws = (at_least(w, b'\t') & !at_least(w, b'\r' + 1)) | space;
        for (mask, m) in out.iter_mut().zip([eq(w, b'\n'), space, ws]) {
            *mask |= gather(m) << (8 * k);
        }
    }
    out
}

/// A line that opens with a letter or digit and runs this many visible characters without a
/// space is data (hex, base64, a digest), counted as code: a font's hex trailer of zeros or
/// an encoded blob is not prose. So is a field, a line whose first word is a key ending in
/// `:` (`Final-Recipient: rfc822; …`, `Status: 5.7.1`, `name: value`).
pub const DATA_LINE_CHARS: u32 = 40;

impl Lines {
    /// Feeds one character of the message.
    #[inline(always)]
    pub fn feed(&mut self, ch: char) {
        if ch == '\n' {
            self.end_line();
            return;
        }
        if ch.is_whitespace() {
            if self.first.is_none() {
                self.indent = self.indent.saturating_add(if ch == '\t' { 4 } else { 1 });
            } else {
                self.spaced = true;
            }
            return;
        }
        if !self.spaced {
            self.solid = self.solid.saturating_add(1);
            self.solid_last = Some(ch);
        }
        match self.first {
            None => {
                self.first = Some(ch);
                self.fence = u32::from(ch == '`' || ch == '~');
            }
            Some(f) => {
                if ch == f && self.fence > 0 && self.fence < 3 {
                    self.fence += 1;
                } else if self.fence < 3 {
                    self.fence = 0;
                }
            }
        }
        self.last = ch;
    }

    /// Whether the current line's first visible character and fence are settled: from then
    /// on, until the line ends, [`Lines::feed`] changes only the last visible character.
    #[inline]
    fn settled(&self) -> bool {
        self.first.is_some() && (self.fence == 0 || self.fence >= 3)
    }

    /// Notes the text fed since the line began or since the last note (no `'\n'` in it): its
    /// last visible character, if any, is the line's last one so far.
    ///
    /// The text must follow what [`Lines::feed`] was given (the line's first visible
    /// character and fence are settled), so its whitespace is inside the line.
    #[inline]
    fn note_last(&mut self, part: &str) {
        if let Some(ch) = part.trim_end().chars().next_back() {
            self.last = ch;
        }
        if !self.spaced && !part.is_empty() {
            let (solid, spaced) = match part.find(char::is_whitespace) {
                Some(k) => (part.get(..k).unwrap_or(""), true),
                None => (part, false),
            };
            let n = if solid.is_ascii() {
                solid.len()
            } else {
                solid.chars().count()
            };
            self.solid = self
                .solid
                .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
            if let Some(c) = solid.chars().next_back() {
                self.solid_last = Some(c);
            }
            self.spaced = spaced;
        }
    }

    /// [`Lines::note_last`] on ASCII text, 64 bytes at a time ([`Lines::note_masked`]).
    #[inline]
    fn note_last_ascii(&mut self, part: &[u8]) {
        for chunk in part.chunks(64) {
            let [_, _, ws] = ascii_masks(chunk);
            self.note_masked(chunk, ws, 0, chunk.len());
        }
    }

    /// [`Lines::note_last`] on the bytes `from..end` of an ASCII `chunk` of at most 64 bytes
    /// (`from < end`), `ws` its whitespace mask ([`ascii_masks`]: ASCII whitespace is what
    /// `char::is_whitespace` says): the last visible byte is the highest bit outside `ws`,
    /// the first word ends at the lowest bit in it.
    #[inline]
    fn note_masked(&mut self, chunk: &[u8], ws: u64, from: usize, end: usize) {
        if from >= end {
            return;
        }
        // Bits `from..end` (all of them above `from` when `end` is 64).
        let part = (u64::MAX << from) & u64::MAX.checked_shl(end as u32).map_or(u64::MAX, |m| !m);
        let visible = part & !ws;
        if visible != 0 {
            let i = 63 - visible.leading_zeros() as usize;
            self.last = char::from(chunk.get(i).copied().unwrap_or(b' '));
        }
        if !self.spaced {
            let space = part & ws;
            let k = if space == 0 {
                end
            } else {
                space.trailing_zeros() as usize
            };
            self.solid = self
                .solid
                .saturating_add(u32::try_from(k - from).unwrap_or(u32::MAX));
            if k > from {
                self.solid_last = chunk.get(k - 1).map(|&c| char::from(c));
            }
            self.spaced = space != 0;
        }
    }

    /// Feeds the ASCII `bytes` as [`Lines::feed`] would one by one, as long as the text
    /// reads as code: whether [`Lines::code`] held after every byte (false: it stopped at the
    /// first byte after which it did not, part way through the bytes). Needs
    /// [`Lines::code`] to hold before the first byte.
    ///
    /// Only a line's start (its indent, its first visible character, its fence) and its end
    /// can change what `code` says; the rest of a line is noted as [`Lines::note_last_ascii`]
    /// notes it, read off bit masks of the line feeds, spaces and whitespace of up to 64
    /// bytes at a time (no branch per byte).
    ///
    /// The most frequent piece of code, the middle of a line whose first word is written
    /// (no line feed in it), changes only the line's last visible character: one test for a
    /// line feed (no branch per byte) and a look from its end.
    #[inline]
    fn feed_code_ascii(&mut self, bytes: &[u8]) -> bool {
        if self.spaced && self.settled() && !bytes.iter().fold(false, |f, &b| f | (b == b'\n')) {
            if let Some(&b) = bytes.iter().rev().find(|&&b| !ascii_whitespace(b)) {
                self.last = char::from(b);
            }
            return true;
        }
        bytes.chunks(64).all(|chunk| self.feed_code_chunk(chunk))
    }

    /// [`Lines::feed_code_ascii`] on at most 64 bytes.
    #[inline]
    fn feed_code_chunk(&mut self, chunk: &[u8]) -> bool {
        let [lf, sp, ws] = ascii_masks(chunk);
        let len = chunk.len().min(64);
        let mut at = 0usize;
        while at < len {
            if !self.settled() {
                if self.first.is_none() && sp & (1 << at) != 0 {
                    // An indent: `code` does not read it before the line's first character.
                    let k = ((!sp >> at).trailing_zeros() as usize).min(len - at);
                    self.indent = self
                        .indent
                        .saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
                    at += k;
                    continue;
                }
                let b = chunk.get(at).copied().unwrap_or(b' ');
                self.feed(char::from(b));
                at += 1;
                if !self.code() {
                    return false;
                }
                continue;
            }
            // The rest of a settled line in this chunk: up to its line feed, if any.
            let feed = lf & (u64::MAX << at);
            let end = if feed == 0 {
                len
            } else {
                feed.trailing_zeros() as usize
            };
            self.note_masked(chunk, ws, at, end);
            if feed == 0 {
                return true;
            }
            self.end_line();
            at = end + 1;
            if !self.code() {
                return false;
            }
        }
        true
    }

    /// Whether the current line opens like code: a fence, an indent of four, a first
    /// character that opens markup or code, an indented `|` (the gutter and caret lines of
    /// a compiler's diagnostic, `   |`; a Markdown table's row, at the margin, stays prose),
    /// or a `*` that continues a block comment. Settled from the line's first visible
    /// character on, so it holds for a line still being written.
    #[inline(always)]
    fn opens_code(&self) -> bool {
        let Some(first) = self.first else {
            return false;
        };
        self.fence >= 3
            || self.in_fence
            || self.indent >= 4
            || matches!(
                first,
                '{' | '}' | '[' | ']' | '(' | ')' | '<' | '/' | '@' | ';' | '=' | '"' | '\''
            )
            || (first == '|' && self.indent > 0)
            || (first == '*' && self.in_comment)
    }

    /// Whether the current line, ended here, looks like code: it opens like code, or its
    /// last character, its shape as data (a long run without a space), as a `Key: value`
    /// field or as a `#` comment or directive says so.
    #[inline]
    fn line_is_code(&self) -> bool {
        let Some(first) = self.first else {
            return false;
        };
        self.opens_code()
            || (first == '#' && self.hash_is_code())
            || ends_code_line(self.last)
            || self.is_data_line(first)
            || (self.spaced
                && self.solid >= 3
                && self.solid_last == Some(':')
                && first.is_alphabetic())
    }

    /// Whether the current line, opening with `first`, is a line of data: a long run with
    /// no space (hex, base64, a digest).
    #[inline]
    fn is_data_line(&self, first: char) -> bool {
        !self.spaced && self.solid >= DATA_LINE_CHARS && first.is_alphanumeric()
    }

    /// For a line opening with `#`: whether its first word says a script's comment or a
    /// directive rather than a Markdown heading (`# Title`, `## Title`): the line is `#`
    /// alone (a comment's blank line), or the first word goes on past its `#`s (`#!/bin/sh`,
    /// `#include`, `#define`, `#[derive(…)]`, `#x = 1`). The first word's length and last
    /// character are what [`Lines::feed`] and the masks note, so the answer is the same
    /// however the line arrives.
    #[inline]
    fn hash_is_code(&self) -> bool {
        (!self.spaced && self.solid == 1) || (self.solid >= 2 && self.solid_last != Some('#'))
    }

    #[inline]
    fn end_line(&mut self) {
        if let Some(first) = self.first {
            self.last_line_data = self.is_data_line(first);
            self.lines = self.lines.saturating_add(1);
            if self.line_is_code() {
                self.code_lines = self.code_lines.saturating_add(1);
            }
            if self.fence >= 3 {
                self.in_fence = !self.in_fence;
            }
            self.in_comment = first == '/' || (first == '*' && self.in_comment);
        }
        self.indent = 0;
        self.fence = 0;
        self.first = None;
        self.spaced = false;
        self.solid = 0;
        self.solid_last = None;
    }

    /// For runs with numbers masked: 0 = the current line has no visible character yet
    /// (skip the symbol), 1 = it may be a sentence (it opens with a letter that is not
    /// lower case, indented less than four spaces: feed it), 2 = it opens with anything
    /// else (a link, a heading, a list of values, an indented or lower-case line of code or
    /// a wrapped paragraph: cut the run).
    #[inline]
    pub fn sentence(&self) -> u8 {
        match self.first {
            None => 0,
            Some(c) if loopguard_core::prose::opens_sentence(c) && self.indent < 4 => 1,
            Some(_) => 2,
        }
    }

    /// Whether the text now being written is code: inside a fence, or most of the message's
    /// non-empty lines look like code, the line being written counted by how it opens (a
    /// page written on one long line, as generators minify HTML or JSON, is code from its
    /// first character, not prose until its first newline; what its last character will be
    /// is not known yet).
    #[inline]
    pub fn code(&self) -> bool {
        if self.in_fence {
            return true;
        }
        let open = self.first.is_some();
        let lines = self.lines.saturating_add(u32::from(open));
        let code = self.code_lines.saturating_add(u32::from(self.opens_code()));
        lines > 0 && 2 * u64::from(code) > u64::from(lines)
    }
}

/// The symbol a maximal run of ASCII digits becomes in the noisy stream.
const DIGITS: u32 = u32::MAX - 1;
/// First separator of the noisy stream (where prose resumes after code).
const NOISY_SENTINEL_BASE: u32 = 0x9000_0000;

/// Follows runs whose copies differ only in their numbers: the prose symbols with every
/// maximal run of digits read as one symbol.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Noisy {
    tracker: RunTracker,
    /// Span the run at the tail needs (`u64::MAX`: the run does not qualify).
    need: u64,
    in_digits: bool,
    /// Code was skipped since the last symbol fed.
    gap: bool,
    sentinels: u32,
    /// The current line showed a mark of code or data (see [`Noisy::push`]): the rest of
    /// it is skipped.
    #[serde(default)]
    tainted: bool,
    /// The last symbol fed was a `;` (code when something other than a space follows).
    #[serde(default)]
    semicolon: bool,
    /// A symbol of the current line was fed.
    #[serde(default)]
    in_line: bool,
    /// The current line's words, and those that read as names.
    #[serde(default)]
    words: loopguard_core::prose::Words,
}

impl Noisy {
    /// Feeds one symbol of a line that opens with a letter; the root and span of a run that
    /// fires.
    ///
    /// Only sentences are followed: a line stops being one (the rest of it is skipped and
    /// the run is cut) at a mark of code or data — a tab, `_`, `=`, `{`, `}`, `|`, `\`, a
    /// backtick, or a `;` with no space after it — and a line that ends on a `;` or with fewer than
    /// [`NOISY_MIN_SPACES`] + 1 words (a log line, a path, a name and a value) or with names
    /// for more than a quarter of its words (`syn keyword baanConstant USER.0`) cuts the
    /// run at its end. C declarations that differ in a number (`_Placeholder<1> _1;`),
    /// tables of numbered names and logs of numbered paths are not counter loops.
    #[inline]
    fn push(&mut self, s: &Settings, sym: u32) -> Option<(u64, u64)> {
        if self.tainted {
            return None;
        }
        let after_semicolon = std::mem::take(&mut self.semicolon);
        let mark = matches!(
            char::from_u32(sym),
            Some('\t' | '_' | '=' | '{' | '}' | '|' | '\\' | '`')
        ) || (after_semicolon && sym != u32::from(' '));
        if mark {
            self.tainted = true;
            self.gap = true;
            return None;
        }
        self.semicolon = sym == u32::from(';');
        self.in_line = true;
        if let Some(c) = char::from_u32(sym) {
            self.words.push(c);
        }
        let digit = (u32::from(b'0')..=u32::from(b'9')).contains(&sym);
        if digit && self.in_digits {
            return None;
        }
        self.in_digits = digit;
        if self.gap {
            self.gap = false;
            self.sentinels = self.sentinels.wrapping_add(1) % 0x0fff_ffff;
            let _ = self
                .tracker
                .push_started(NOISY_SENTINEL_BASE + self.sentinels);
        }
        let started = self.tracker.push_started(if digit { DIGITS } else { sym });
        let (root, start) = self.tracker.current()?;
        if started {
            let syms = self.tracker.root_symbols();
            let letters = syms
                .iter()
                .filter(|&&c| char::from_u32(c).is_some_and(char::is_alphabetic))
                .count();
            let numbers = syms.iter().filter(|&&c| c == DIGITS).count();
            self.need =
                if (1..=NOISY_MAX_NUMBERS).contains(&numbers) && letters >= NOISY_MIN_LETTERS {
                    row_for(NOISY_TABLE, root).need(root, s.evidence_scale)
                } else {
                    u64::MAX
                };
        }
        let span = self.tracker.len() - start;
        (span >= self.need).then_some((root, span))
    }

    /// Between lines (or before a line's first visible character): a line that was fed
    /// and was not a sentence cuts the run.
    #[inline]
    fn end_line(&mut self) {
        if self.in_line || self.tainted {
            // A line that ends on a `;` is a statement (a C declaration, a line of a table
            // of calls), not a sentence.
            let sentence = !self.tainted
                && !self.semicolon
                && self.words.words() >= NOISY_MIN_SPACES
                && !self.words.names_dominate();
            let gap = self.gap;
            self.cut();
            self.gap = gap || !sentence;
        }
    }

    /// The text is code, or a line opens with something other than a letter: cut the run
    /// and start the next line afresh.
    #[inline]
    fn cut(&mut self) {
        self.gap = true;
        self.in_line = false;
        self.tainted = false;
        self.semicolon = false;
        self.words = loopguard_core::prose::Words::default();
    }
}

/// A message's content (from its first symbol that is not whitespace) while it may still be
/// a short chant: one root repeated from the first character. The run tracker sees a chant
/// once it holds [`engine_copies`] copies of a unit of `min-unit` characters or more (90
/// characters for a short root, with three); this follows the content's smallest period
/// `p` (a prefix function, amortized constant work per symbol) through its first
/// [`Chant::REACH`] `· min-unit` symbols, so that a short chant fires where it did when the
/// engine saw two copies: at `max(chant-copies · p, 2 · u)` symbols, `u` the smallest
/// multiple of `p` of at least `min-unit`. Longer chants the run tracker sees in time (see
/// [`crate::evidence::engine_copies`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Chant {
    syms: Vec<u32>,
    /// The prefix function of `syms`.
    pi: Vec<u32>,
}

impl Chant {
    /// The longest content followed, in multiples of `min-unit`.
    const REACH: usize = 6;

    /// Appends one symbol of the content: `Some(Some((root, span)))` when the content is now
    /// a chant that fires, `Some(None)` while it may still become one, `None` once it cannot
    /// (the caller drops it).
    fn push(&mut self, s: &Settings, sym: u32) -> Option<Option<(u64, u64)>> {
        let min = s.min_unit.max(1);
        let reach = Chant::REACH.saturating_mul(min);
        let m = self.syms.len();
        if m >= reach {
            return None;
        }
        let mut k = 0usize;
        if m > 0 {
            k = self.pi.get(m - 1).copied().unwrap_or(0) as usize;
            while k > 0 && self.syms.get(k) != Some(&sym) {
                k = self.pi.get(k - 1).copied().unwrap_or(0) as usize;
            }
            if self.syms.get(k) == Some(&sym) {
                k += 1;
            }
        }
        self.syms.push(sym);
        self.pi.push(u32::try_from(k).unwrap_or(0));
        let len = m + 1;
        let p = len - k;
        let unit = min.div_ceil(p) * p;
        // The smallest period only grows: past this the content can no longer hold two
        // copies of its unit, or `chant-copies` copies of its root, within the reach (it
        // could never fire: dropped at once, the quiet path takes the message sooner).
        let need = s.chant_copies.saturating_mul(p).max(2 * unit);
        if need > reach {
            return None;
        }
        Some((len >= need).then_some((p as u64, len as u64)))
    }
}

/// The evidence rule's state: the run tracker and what the run at the tail needs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Evidence {
    tracker: RunTracker,
    /// Span the run at the tail needs, in prose and in code.
    need: (u64, u64),
    /// Symbol position of the message's first non-whitespace symbol.
    first_content: Option<u64>,
    /// Runs whose copies differ in their numbers (prose only), when on.
    noisy: Option<Box<Noisy>>,
    /// The content while it may still be a short chant that the run tracker would see late
    /// (chant-copies on, the engine at three copies).
    #[serde(default)]
    chant: Option<Box<Chant>>,
    /// What the last delta left that lets the next one skip a test: the rule quiet on a
    /// settled line of text, with the noisy run's idle step taken for the line's class (an
    /// ASCII delta of the same stream may go straight to the quiet loop,
    /// [`evidence_resume`]), or code taken whole by [`evidence_code`] (the text is code and
    /// the rule quiet: neither needs asking again).
    /// Cleared by anything else that feeds the rule.
    #[serde(skip)]
    ready: Ready,
}

/// [`Evidence::ready`]: a cache of what the state says, so equal whatever its value.
#[derive(Clone, Copy, Debug, Default)]
struct Ready(u8);

impl Ready {
    /// Nothing to skip.
    const NONE: Ready = Ready(0);
    /// A settled line of quiet text ([`evidence_resume`]).
    const RESUME: Ready = Ready(1);
    /// Code taken whole by [`evidence_code`]: the text reads as code and the rule is quiet
    /// ([`Evidence::quiet`] in code).
    const CODE: Ready = Ready(2);

    fn resume(self) -> bool {
        self.0 == Ready::RESUME.0
    }

    fn code(self) -> bool {
        self.0 == Ready::CODE.0
    }
}

impl PartialEq for Ready {
    fn eq(&self, _: &Ready) -> bool {
        true
    }
}

impl Evidence {
    /// The rule of one message under `s` (tests; the detector computes the engine's copies
    /// once and calls [`Evidence::with_copies`]).
    #[cfg(test)]
    fn new(s: &Settings) -> Evidence {
        Evidence::with_copies(s, engine_copies(s))
    }

    /// The rule of one message under `s`, its engine at `k` copies ([`engine_copies`] of
    /// `s`).
    fn with_copies(s: &Settings, k: u64) -> Evidence {
        let cap = crate::evidence::back_cap(s.evidence_scale);
        Evidence {
            tracker: RunTracker::with_copies(s.min_unit, s.max_unit, cap, k),
            need: (u64::MAX, u64::MAX),
            first_content: None,
            noisy: s.counter_noise.then(|| {
                Box::new(Noisy {
                    tracker: RunTracker::with_copies(s.min_unit, s.max_unit, cap, k),
                    need: u64::MAX,
                    ..Noisy::default()
                })
            }),
            chant: (s.chant_copies > 0 && k > 2).then(Box::default),
            ready: Ready::NONE,
        }
    }

    /// Takes over the buffers of `old`'s run trackers, emptied (see [`RunTracker::recycle`]).
    /// `self` must be new.
    fn recycle(&mut self, old: &mut Evidence) {
        self.tracker.recycle(&mut old.tracker);
        if let (Some(new), Some(old)) = (self.noisy.as_deref_mut(), old.noisy.as_deref_mut()) {
            new.tracker.recycle(&mut old.tracker);
        }
    }

    /// Whether [`Evidence::push_quiet`] may take symbols in text that reads as `code` with
    /// this `sentence` class: no run is at the tail, no candidate is live, the first content
    /// was seen and the noisy run is not fed (it is cut or its line ended).
    #[inline]
    fn quiet(&self, code: bool, sentence: u8) -> bool {
        self.first_content.is_some()
            && self.chant.is_none()
            && !(self.noisy.is_some() && !code && sentence == 1)
            && self.tracker.quiet()
    }

    /// Pushes one symbol as [`Evidence::push`] would, which returns nothing, when no
    /// checkpoint of the engine is due before it; returns false, doing nothing, otherwise.
    /// Needs [`Evidence::quiet`]; the noisy run's cut or line end, idempotent, is left to
    /// [`Evidence::noisy_idle`] once per stretch.
    #[inline(always)]
    fn push_quiet(&mut self, sym: u32) -> bool {
        self.tracker.push_quiet(sym)
    }

    /// What [`Evidence::push`] does to the noisy run for a symbol in text that reads as
    /// `code` with this `sentence` class, when it does not feed it (idempotent).
    #[inline(never)]
    fn noisy_idle(&mut self, code: bool, sentence: u8) {
        match self.noisy.as_deref_mut() {
            Some(noisy) if code || sentence == 2 => noisy.cut(),
            Some(noisy) => noisy.end_line(),
            None => {}
        }
    }

    /// Pushes one symbol; returns whether the run at the tail now fires (its root and
    /// span).
    #[inline(always)]
    fn push(&mut self, s: &Settings, sym: u32, code: bool, sentence: u8) -> Option<(u64, u64)> {
        if self.first_content.is_none() && !char::from_u32(sym).is_some_and(char::is_whitespace) {
            self.first_content = Some(self.tracker.len());
        }
        let started = self.tracker.push_started(sym);
        let noisy_hit = match self.noisy.as_deref_mut() {
            Some(noisy) if !code && sentence == 1 => noisy.push(s, sym),
            Some(noisy) if code || sentence == 2 => {
                noisy.cut();
                None
            }
            Some(noisy) => {
                noisy.end_line();
                None
            }
            None => None,
        };
        let chant_hit = match self.chant.as_deref_mut() {
            Some(chant) if self.first_content.is_some() => match chant.push(s, sym) {
                Some(hit) => hit,
                None => {
                    self.chant = None;
                    None
                }
            },
            _ => None,
        };
        let noisy_hit = noisy_hit.or(chant_hit);
        let (root, start) = match self.tracker.current() {
            Some(r) => r,
            None => return noisy_hit,
        };
        if started {
            let scale = s.evidence_scale;
            let mut prose = row_for(PROSE_TABLE, root).need(root, scale);
            let mut in_code = row_for(CODE_TABLE, root).need(root, scale);
            // A block of code repeated in a message that reads as prose (a long list of
            // names and versions ahead of it) is judged as code.
            if prose < in_code && self.tracker.root_reads_as_code(root) {
                prose = in_code;
            }
            if s.chant_copies > 0 && self.first_content.is_some_and(|f| start <= f) {
                let chant = (s.chant_copies as u64 * root).max(2 * s.min_unit as u64);
                prose = prose.min(chant);
                in_code = in_code.min(chant);
            }
            // A run inside one word of data, or on a line already `LONG_LINE_CHARS` long,
            // needs what code needs, and what `DATA_TABLE` asks (a chant starts at the
            // message's first character, with nothing ahead of it, so it never is one).
            if self
                .tracker
                .inside_word(start, root, u64::from(DATA_WORD_CHARS))
                || self
                    .tracker
                    .long_line_before(start, u64::from(crate::LONG_LINE_CHARS))
            {
                let data = in_code.max(row_for(DATA_TABLE, root).need(root, scale));
                prose = prose.max(data);
                in_code = data;
            }
            self.need = (prose, in_code);
        }
        let span = self.tracker.len() - start;
        let need = if code { self.need.1 } else { self.need.0 };
        (span >= need).then_some((root, span)).or(noisy_hit)
    }
}

/// The copies of a unit at which the evidence rule's engines report a run under these
/// settings (see [`crate::evidence::engine_copies`]): 3 with the default thresholds, 2 when
/// `evidence-scale` lowers a threshold below three copies.
///
/// A chant (a message that is one root repeated) fires at `chant-copies` copies of its root;
/// the short ones are followed apart (`Chant`), the longer ones need `chant-copies` of 3 or
/// more (or 0, off) for the engine at three copies to see them in time.
pub fn engine_copies(s: &Settings) -> u64 {
    if s.chant_copies == 2 {
        return 2;
    }
    crate::evidence::engine_copies(
        &[PROSE_TABLE, CODE_TABLE, NOISY_TABLE],
        s.evidence_scale,
        s.min_unit as u64,
    )
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
enum Engine {
    Exact(Box<TailMatcher>),
    Evidence(Box<Evidence>),
    Seed(SeedScanner),
}

/// A maximal periodic run measured on a text, and whether it ended in code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasuredRun {
    /// The run (symbol positions).
    pub run: Run,
    /// Whether the text around its end was code (the stricter thresholds).
    pub code: bool,
    /// A run of the noisy stream (numbers read as one symbol, prose only) whose root holds
    /// a number and enough letters to be judged.
    pub noisy: bool,
    /// The run is data, judged by [`crate::DATA_TABLE`] as well: inside one word of data (a
    /// root of visible ASCII characters with [`crate::DATA_WORD_CHARS`] of them ahead, or a
    /// root that long), or begun on a line already [`crate::LONG_LINE_CHARS`] symbols long.
    pub data: bool,
}

/// Every maximal exact periodic run of a text (as streamed in one message, after the filler
/// cut) that holds two copies of a unit of `min-unit..=max-unit` characters: what the
/// evidence thresholds are measured against.
pub fn measure_runs(settings: &Settings, text: &str) -> Vec<MeasuredRun> {
    let mut prep = Prep::new(settings);
    let mut lines = Lines::default();
    let mut tracker = RunTracker::new(settings.min_unit, settings.max_unit, u64::MAX);
    let mut noisy = Noisy {
        tracker: RunTracker::new(settings.min_unit, settings.max_unit, u64::MAX),
        need: u64::MAX,
        ..Noisy::default()
    };
    // Whether the noisy run at the tail qualifies (judged when it starts).
    let mut judged = false;
    let mut out = Vec::new();
    // The symbols, and the positions of those that end a line, for `data`.
    let mut syms: Vec<u32> = Vec::new();
    let mut breaks: Vec<u64> = Vec::new();
    let data = |syms: &[u32], breaks: &[u64], run: &Run| {
        let line = breaks
            .partition_point(|&b| b < run.start)
            .checked_sub(1)
            .and_then(|i| breaks.get(i))
            .map_or(0, |&b| b + 1);
        let visible = |i: u64| {
            usize::try_from(i)
                .ok()
                .and_then(|i| syms.get(i))
                .and_then(|&c| char::from_u32(c))
                .is_some_and(|c| c.is_ascii_graphic())
        };
        crate::evidence::word_of_data(
            run.start,
            run.end,
            run.root,
            u64::from(crate::DATA_WORD_CHARS),
            visible,
        ) || run.start - line >= u64::from(crate::LONG_LINE_CHARS)
    };
    let never = Settings {
        evidence_scale: 1000,
        ..settings.clone()
    };
    for ch in text.chars() {
        lines.feed(ch);
        if let Some(sym) = prep.map(ch) {
            if crate::evidence::is_line_break(sym) {
                breaks.push(tracker.len());
            }
            syms.push(sym);
            if let (Some(run), _) = tracker.push(sym) {
                out.push(MeasuredRun {
                    run,
                    code: lines.code(),
                    noisy: false,
                    data: data(&syms, &breaks, &run),
                });
            }
            let sentence = lines.sentence();
            if lines.code() || sentence == 2 {
                noisy.cut();
            } else if sentence == 0 {
                noisy.end_line();
            }
            let before = noisy.tracker.current();
            if !lines.code() && sentence == 1 {
                let _ = noisy.push(&never, sym);
            }
            let after = noisy.tracker.current();
            if let Some((root, start)) = before {
                if judged && after.map(|a| a.1) != Some(start) {
                    out.push(MeasuredRun {
                        run: Run {
                            root,
                            start,
                            end: noisy.tracker.len().saturating_sub(1),
                        },
                        code: false,
                        noisy: true,
                        data: false,
                    });
                }
            }
            if after != before {
                judged = noisy.need != u64::MAX;
            }
        }
    }
    if let Some(run) = tracker.finish() {
        out.push(MeasuredRun {
            run,
            code: lines.code(),
            noisy: false,
            data: data(&syms, &breaks, &run),
        });
    }
    if let Some(run) = noisy.tracker.finish() {
        if judged {
            out.push(MeasuredRun {
                run,
                code: false,
                noisy: true,
                data: false,
            });
        }
    }
    out
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct State {
    /// Inside a message.
    started: bool,
    /// Fired in this message (at most once per message).
    fired: bool,
    prep: Prep,
    #[serde(default)]
    lines: Lines,
    engine: Option<Engine>,
    /// The message was cut ([`TailPeriodicity::cut_off`]): the next message, unless a tool
    /// call comes first, goes on with its text.
    #[serde(default)]
    carry: bool,
    /// The last character of the message so far is a line feed.
    #[serde(default)]
    ends_line: bool,
}

/// The longest user message read as a request for the rest of a cut answer ("continue",
/// "go on", "please continue where you stopped"), in characters.
const CONTINUE_MAX_CHARS: usize = 40;

/// Whether a user message between two messages can be a request for the rest of a cut answer:
/// a short one, or none (a host that sends no user line). A longer message asks something
/// else, and the next answer is an answer of its own.
fn asks_to_continue(text: &str) -> bool {
    text.trim().chars().nth(CONTINUE_MAX_CHARS).is_none()
}

/// A message of at least this many symbols that stops inside a line was cut (an output limit
/// reached), and the next one goes on where it stopped ("continue").
const CUT_MESSAGE_MIN: u64 = 1000;

/// The largest ring (in symbols, 4 bytes each) that a detector keeps between messages for the
/// next message's rule: the ring of a message of up to 32 K characters, so that a session's
/// answers of ordinary length do not allocate it anew each time, while an idle session holds
/// at most this (and its index tables) rather than what its longest message needed.
const SPARE_MAX: usize = 1 << 15;

/// The `tail-periodicity` detector (LG007).
#[derive(Debug)]
pub struct TailPeriodicity {
    settings: Settings,
    /// [`engine_copies`] of the settings (a function of them alone, computed once rather
    /// than for every message).
    copies: u64,
    state: State,
    /// The evidence rule of an earlier message, whose buffers (ring, index) the next
    /// message's rule takes over rather than allocating and growing its own: state no
    /// message reads, bounded as one message's rule is.
    spare: Option<Box<Evidence>>,
}

impl TailPeriodicity {
    /// A detector with `settings`.
    pub fn new(settings: Settings) -> TailPeriodicity {
        TailPeriodicity {
            copies: engine_copies(&settings),
            settings,
            state: State::default(),
            spare: None,
        }
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Characters currently buffered for this message (bounded by the settings, never by the
    /// message length).
    pub fn buffered(&self) -> usize {
        match &self.state.engine {
            Some(Engine::Exact(f)) => f.buffered(),
            Some(Engine::Evidence(e)) => {
                e.tracker.buffered() + e.noisy.as_ref().map_or(0, |n| n.tracker.buffered())
            }
            Some(Engine::Seed(s)) => s.buffered(),
            None => 0,
        }
    }

    /// Ends the message's engine: an evidence rule is kept for its buffers when they are
    /// small ([`SPARE_MAX`]), else released with the rest.
    fn retire(&mut self) {
        if let Some(Engine::Evidence(e)) = self.state.engine.take() {
            if e.tracker.buffered() <= SPARE_MAX {
                self.spare = Some(e);
            }
        }
    }

    fn reset(&mut self) {
        self.retire();
        self.state = State {
            started: true,
            fired: false,
            prep: Prep::new(&self.settings),
            lines: Lines::default(),
            engine: None,
            carry: false,
            ends_line: false,
        };
    }

    /// Whether the message just ended was cut, and the next one goes on with its text: the
    /// evidence rule read at least [`CUT_MESSAGE_MIN`] symbols of it without firing, and it
    /// stops inside a line (its last character is not a line feed: it may be the indentation
    /// of the next line, or the line ended is a line of data, a row of a hex table) that is not
    /// a fence and does not end a sentence (`.`, `!`, `?`): an answer that closes its code
    /// block or its last sentence ended, even without a line feed.
    /// An answer cut by an output limit and continued on the user's "continue" is one text: a
    /// table of zeros the cut left at the head of the next message is not a chant (a message
    /// that is only one root from its first character), the rest of a long line is not a short
    /// line, and a run the cut split is one run. A message that ends otherwise, a short one,
    /// one that fired, or one followed by a tool call or by a user message of more than
    /// [`CONTINUE_MAX_CHARS`] characters is whole, and the next one starts anew.
    fn cut_off(&self) -> bool {
        let l = &self.state.lines;
        let ended = l.fence >= 3 || (l.first.is_some() && matches!(l.last, '.' | '!' | '?'));
        // A cut that falls at the end of a line of data (a hex table's row) is a cut too.
        let inside = !self.state.ends_line || l.last_line_data;
        !self.state.fired
            && inside
            && !ended
            && matches!(&self.state.engine, Some(Engine::Evidence(e)) if e.tracker.len() >= CUT_MESSAGE_MIN)
    }

    fn fire(&mut self, q: u64, span: Option<u64>, offset: u64, cx: &mut Cx<'_>) {
        self.state.fired = true;
        let sample = match &self.state.engine {
            Some(Engine::Exact(f)) => f.tail_string(q.min(201) as usize),
            Some(Engine::Evidence(e)) => e.tracker.tail_string(q.min(201) as usize),
            Some(Engine::Seed(s)) => s.tail_string(q.min(201) as usize),
            None => String::new(),
        };
        let key = format!(
            "{NAME}/{q}/{:016x}",
            Fingerprint::of_bytes(sample.as_bytes()).short()
        );
        let (copies, message) = match span {
            Some(span) => {
                let copies = (span / q.max(1)).min(u64::from(u32::MAX)) as u32;
                (
                    copies,
                    format!(
                        "Repetition guard: your output ends with {copies} identical copies of the same {q}-character block \
                         ({span} characters of repetition). Stop restating it; carry out the next step and give its result."
                    ),
                )
            }
            None => {
                let copies = self.settings.min_copies as u32;
                (
                    copies,
                    format!(
                        "Repetition guard: your output ends with {copies} identical copies of the same {q}-character block. \
                         Stop restating it; carry out the next step and give its result."
                    ),
                )
            }
        };
        cx.report(
            Finding::new(NAME, Level::Critical, copies, key, message)
                .with_offset(offset)
                .with_sample(&sample),
        );
        // The message is over for this detector.
        self.retire();
    }

    fn delta(&mut self, stream: Stream, delta: &str, cx: &mut Cx<'_>) {
        if self.state.fired {
            return;
        }
        if !delta.is_empty() {
            self.state.ends_line = delta.ends_with('\n');
        }
        // The common case first: a delta of the same stream to a running evidence rule (no
        // separator, no engine to build); what it continues is `evidence_next`'s to judge.
        if let Some(Engine::Evidence(e)) = &mut self.state.engine {
            if self.state.prep.last_stream == Some(stream) {
                let base = cx.char_offset();
                let hit = evidence_next(
                    e,
                    &self.settings,
                    &mut self.state.prep,
                    &mut self.state.lines,
                    delta,
                    base,
                );
                if let Some((q, span, offset)) = hit {
                    self.fire(q, span, offset, cx);
                }
                return;
            }
        }
        if !self.state.started {
            // A delta without a message start: treat it as the start of one.
            self.reset();
        }
        let base = cx.char_offset();
        let sep = self.state.prep.switch(stream);
        let mut hit: Option<(u64, Option<u64>, u64)> = None;
        let mut count = 0u64;
        // Split borrows: the preparer and the engine live in different fields.
        let prep = &mut self.state.prep;
        let lines = &mut self.state.lines;
        let s = &self.settings;
        let spare = &mut self.spare;
        let copies = self.copies;
        let engine = self
            .state
            .engine
            .get_or_insert_with(|| match (s.algorithm, s.rule) {
                (Algorithm::Exact, Rule::Evidence) => {
                    let mut e = Box::new(Evidence::with_copies(s, copies));
                    if let Some(mut old) = spare.take() {
                        e.recycle(&mut old);
                    }
                    Engine::Evidence(e)
                }
                (Algorithm::Exact, Rule::Copies) => Engine::Exact(Box::new(TailMatcher::new(
                    s.min_unit,
                    s.max_unit,
                    s.min_copies,
                    s.long_unit,
                    s.root_copies,
                ))),
                (Algorithm::Seed, _) => Engine::Seed(SeedScanner::new(
                    s.min_unit,
                    s.max_unit,
                    s.min_copies,
                    s.rescan_every,
                )),
            });
        match engine {
            Engine::Exact(f) => {
                if let Some(sym) = sep {
                    if let Some(q) = f.push(sym) {
                        hit = Some((q, None, base));
                    }
                }
                if hit.is_none() {
                    for ch in delta.chars() {
                        count += 1;
                        if let Some(sym) = prep.map(ch) {
                            if let Some(q) = f.push(sym) {
                                hit = Some((q, None, base + count));
                                break;
                            }
                        }
                    }
                }
            }
            Engine::Evidence(e) => {
                if let Some(sym) = sep {
                    e.ready = Ready::NONE;
                    if let Some((q, span)) = e.push(s, sym, lines.code(), lines.sentence()) {
                        hit = Some((q, Some(span), base));
                    }
                }
                if hit.is_none() {
                    // A new engine or a new stream: nothing to resume.
                    hit = evidence_delta(e, s, prep, lines, delta, base);
                }
            }
            Engine::Seed(sc) => {
                if let Some(sym) = sep {
                    sc.push(sym);
                }
                for ch in delta.chars() {
                    count += 1;
                    if let Some(sym) = prep.map(ch) {
                        sc.push(sym);
                    }
                }
                if let Some(q) = sc.end_of_update() {
                    hit = Some((q, None, base + count));
                }
            }
        }
        if let Some((q, span, offset)) = hit {
            self.fire(q, span, offset, cx);
        }
    }
}

/// Feeds one delta to the evidence rule and the line classifier, as feeding [`Lines::feed`]
/// and the rule character by character: the classifier reads each character only until its
/// line is settled and at the line's end (the last visible character is read off the text
/// where a line or the delta ends), whether the text is code changes only where a line ends
/// and the sentence class only at a line's first visible character, and ASCII deltas skip
/// UTF-8 decoding. Returns the hit: root, span and the message character offset.
#[inline(always)]
fn evidence_delta(
    e: &mut Evidence,
    s: &Settings,
    prep: &mut Prep,
    lines: &mut Lines,
    delta: &str,
    base: u64,
) -> Option<(u64, Option<u64>, u64)> {
    if delta.is_ascii() {
        evidence_ascii(e, s, prep, lines, delta, base)
    } else {
        e.ready = Ready::NONE;
        evidence_chars(e, s, prep, lines, delta, delta.char_indices(), base)
    }
}

/// Feeds one delta to the evidence rule: an ASCII delta to [`evidence_code`] where the text is
/// code and the rule quiet, else to [`evidence_resume`] where the last delta left the rule
/// ready for it, else to [`evidence_ascii`]; any other to [`evidence_delta`].
#[inline(always)]
fn evidence_next(
    e: &mut Evidence,
    s: &Settings,
    prep: &mut Prep,
    lines: &mut Lines,
    delta: &str,
    base: u64,
) -> Option<(u64, Option<u64>, u64)> {
    if !delta.is_ascii() {
        return evidence_delta(e, s, prep, lines, delta, base);
    }
    if let Some(used) = evidence_code(e, prep, lines, delta) {
        if used >= delta.len() {
            return None;
        }
        let rest = delta.get(used..).unwrap_or("");
        evidence_ascii(e, s, prep, lines, rest, base + used as u64)
    } else if e.ready.resume() {
        evidence_resume(e, s, prep, lines, delta, base)
    } else {
        evidence_ascii(e, s, prep, lines, delta, base)
    }
}

/// [`evidence_ascii`] on an ASCII delta of code while the rule is quiet (a file being
/// written, the common case): every symbol of code has the same class for the rule (quiet,
/// the noisy run cut), so the classifier takes the whole delta first
/// ([`Lines::feed_code_ascii`]) and one quiet loop then takes all its bytes, line feeds
/// included, with no stop per line. Where the delta leaves code, nothing is done (`None`);
/// else the bytes taken (all of them, the common case). Where the quiet loop stops part way
/// (a checkpoint made a candidate live, the ring grows), the classifier is put back where it
/// stopped, and the caller's [`evidence_ascii`] goes on from there. (A small answer, in
/// registers: the hit of the rest is the caller's to return.)
#[inline(never)]
fn evidence_code(
    e: &mut Evidence,
    prep: &mut Prep,
    lines: &mut Lines,
    delta: &str,
) -> Option<usize> {
    // In code, the sentence class does not matter to the rule. After code taken whole
    // (`Ready::CODE`) both tests hold still: nothing has fed the rule since.
    if !(e.ready.code() || (lines.code() && e.quiet(true, 0))) {
        return None;
    }
    let bytes = delta.as_bytes();
    let before = lines.clone();
    if !lines.feed_code_ascii(bytes) {
        *lines = before;
        return None;
    }
    let max_filler = prep.quiet_filler();
    let (used, pushed) = e
        .tracker
        .quiet_ascii::<false>(bytes, &mut prep.run, max_filler);
    if pushed {
        // The idle step of code (idempotent): what every quiet symbol's push does (the
        // noisy run cut, as `noisy_idle(true, 0)`), without a call.
        if let Some(noisy) = e.noisy.as_deref_mut() {
            noisy.cut();
        }
    }
    if used < bytes.len() {
        e.ready = Ready::NONE;
        // Put back as the character loop leaves it at `used` (code all the way there).
        *lines = before;
        lines.feed_code_ascii(bytes.get(..used).unwrap_or(&[]));
    } else {
        // Code held after every byte, so it holds before the next delta's first; and the
        // rule is still quiet: the quiet loop stops before a byte once a checkpoint makes a
        // candidate live, so a delta taken whole leaves none.
        debug_assert!(e.quiet(true, 0));
        e.ready = Ready::CODE;
    }
    Some(used)
}

/// [`evidence_ascii`] on an ASCII delta that continues a settled line of quiet text
/// ([`Evidence::ready`]): the class is the one the last delta ended with and its idle step
/// was taken, so the bytes up to the first line feed go straight to the quiet loop; what
/// it leaves (a line feed, a checkpoint that made a candidate live) goes the usual way.
#[inline(never)]
fn evidence_resume(
    e: &mut Evidence,
    s: &Settings,
    prep: &mut Prep,
    lines: &mut Lines,
    delta: &str,
    base: u64,
) -> Option<(u64, Option<u64>, u64)> {
    let bytes = delta.as_bytes();
    let max_filler = prep.quiet_filler();
    let (used, _) = e
        .tracker
        .quiet_ascii::<true>(bytes, &mut prep.run, max_filler);
    let (done, rest) = bytes.split_at(used.min(bytes.len()));
    lines.note_last_ascii(done);
    if rest.is_empty() {
        return None;
    }
    e.ready = Ready::NONE;
    evidence_ascii(e, s, prep, lines, delta.get(used..)?, base + used as u64)
}

/// What the line classifier says of the text being written, and what follows from it for
/// the evidence rule: whether symbols go the quiet way, and whether the noisy run's idle
/// step (the same for every symbol until the class changes or a symbol is pushed in full)
/// was taken for this stretch. Shared by the ASCII and the character loops.
#[derive(Clone, Copy)]
struct Class {
    code: bool,
    sentence: u8,
    settled: bool,
    quiet: bool,
    idle_done: bool,
}

impl Class {
    #[inline(always)]
    fn of(lines: &Lines, e: &Evidence) -> Class {
        let (code, sentence) = (lines.code(), lines.sentence());
        Class {
            code,
            sentence,
            settled: lines.settled(),
            quiet: e.quiet(code, sentence),
            idle_done: false,
        }
    }

    /// Feeds `ch` to the classifier; a change of class starts the quiet test and the idle
    /// step over.
    #[inline(always)]
    fn feed(&mut self, lines: &mut Lines, e: &Evidence, ch: char) {
        lines.feed(ch);
        let (c, t) = (lines.code(), lines.sentence());
        if (c, t) != (self.code, self.sentence) {
            (self.code, self.sentence) = (c, t);
            self.quiet = e.quiet(c, t);
            self.idle_done = false;
        }
        self.settled = lines.settled();
    }

    /// The noisy run's idle step, once per stretch of quiet symbols.
    #[inline(always)]
    fn idle(&mut self, e: &mut Evidence) {
        if !self.idle_done {
            e.noisy_idle(self.code, self.sentence);
            self.idle_done = true;
        }
    }
}

/// [`evidence_chars`] on an ASCII delta: while the rule is quiet ([`Evidence::quiet`]) and
/// the line settled, the bytes up to the next line feed or checkpoint go to
/// [`RunTracker::quiet_ascii`] (one loop, whose state stays in registers); the others one by
/// one, as [`evidence_chars`] takes them.
#[inline(never)]
fn evidence_ascii(
    e: &mut Evidence,
    s: &Settings,
    prep: &mut Prep,
    lines: &mut Lines,
    delta: &str,
    base: u64,
) -> Option<(u64, Option<u64>, u64)> {
    let bytes = delta.as_bytes();
    let max_filler = prep.quiet_filler();
    let mut cl = Class::of(lines, e);
    // Where the text not yet noted for the line's last visible character begins.
    let mut from = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        if cl.quiet {
            // The bytes up to the next one the classifier reads: to the line's end once it is
            // settled, else its leading spaces (what `feed` does with each is counted for
            // those the quiet loop takes).
            let rest = bytes.get(i..).unwrap_or(&[]);
            let leading = !cl.settled && lines.first.is_none();
            if leading {
                let k = rest.iter().take_while(|&&c| c == b' ').count();
                if rest.get(k).is_some_and(|&b| settles_at_once(b)) {
                    // The line's indent and its first visible character, which settles it:
                    // classified ahead, so that both go to the quiet loop with the rest of
                    // the line (each symbol keeps the class it had: see `line_start`).
                    match line_start(e, s, prep, lines, &mut cl, rest, k, max_filler) {
                        LineStart::Taken(used) => {
                            from = i + k + 1;
                            i += used;
                            continue;
                        }
                        LineStart::Fired(j, q, span) => {
                            lines.note_last_ascii(bytes.get(i + k + 1..=i + j).unwrap_or(&[]));
                            return Some((q, Some(span), base + (i + j) as u64 + 1));
                        }
                    }
                }
            }
            let part = if cl.settled {
                rest
            } else if leading {
                let k = rest.iter().take_while(|&&c| c == b' ').count();
                rest.get(..k).unwrap_or(&[])
            } else {
                &[]
            };
            if !part.is_empty() {
                let (used, pushed) = e
                    .tracker
                    .quiet_ascii::<true>(part, &mut prep.run, max_filler);
                if pushed {
                    cl.idle(e);
                }
                // A checkpoint it ran may have made a candidate live.
                cl.quiet = e.quiet(cl.code, cl.sentence);
                if leading {
                    lines.indent = lines
                        .indent
                        .saturating_add(u32::try_from(used).unwrap_or(u32::MAX));
                    if used > 0 {
                        from = i + used;
                    }
                }
                i += used;
            }
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        let ch = char::from(b);
        if ch == '\n' || !cl.settled {
            if ch == '\n' {
                lines.note_last_ascii(bytes.get(from..i).unwrap_or(&[]));
            }
            // What `feed` reads is not noted again.
            from = i + 1;
            cl.feed(lines, e, ch);
        }
        if let Some(sym) = prep.map(ch) {
            if cl.quiet && e.push_quiet(sym) {
                cl.idle(e);
            } else {
                if let Some((q, span)) = e.push(s, sym, cl.code, cl.sentence) {
                    lines.note_last_ascii(bytes.get(from..=i).unwrap_or(&[]));
                    return Some((q, Some(span), base + i as u64 + 1));
                }
                cl.quiet = e.quiet(cl.code, cl.sentence);
            }
        }
        i += 1;
    }
    lines.note_last_ascii(bytes.get(from..).unwrap_or(&[]));
    e.ready = if cl.quiet && cl.settled && cl.idle_done {
        Ready::RESUME
    } else {
        Ready::NONE
    };
    None
}

/// Whether an ASCII byte, as a line's first visible character, settles the line at once: not
/// whitespace and not a fence character.
#[inline(always)]
fn settles_at_once(b: u8) -> bool {
    !matches!(b, b'\t'..=b'\r' | b' ' | b'`' | b'~')
}

/// What [`line_start`] did.
enum LineStart {
    /// It took this many bytes (at least the indent and the first visible character).
    Taken(usize),
    /// The symbol of the byte at this index fired (root, span).
    Fired(usize, u64, u64),
}

/// The start of a line in [`evidence_ascii`], with the rule quiet: `rest` opens with `k`
/// spaces and a byte that settles the line. The classifier reads them first (the indent, then
/// the byte); the symbols then go as the character loop would send them, each with the class
/// it had there: the spaces with the class before the byte (quiet, as at every line start
/// while the rule is), the byte and the rest of the line with the class after it. Where
/// both are quiet, one quiet loop takes the indent, the byte and the rest of the line;
/// otherwise, or where a checkpoint makes a candidate live on the way, the remaining
/// symbols go one by one, each with its own class.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn line_start(
    e: &mut Evidence,
    s: &Settings,
    prep: &mut Prep,
    lines: &mut Lines,
    cl: &mut Class,
    rest: &[u8],
    k: usize,
    max_filler: u32,
) -> LineStart {
    let before = *cl;
    lines.indent = lines
        .indent
        .saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
    let b = rest.get(k).copied().unwrap_or(b' ');
    cl.feed(lines, e, char::from(b));
    // The quiet loop takes the indent alone when the byte's class is not quiet.
    let part = if cl.quiet {
        rest
    } else {
        rest.get(..k).unwrap_or(&[])
    };
    let (used, pushed) = e
        .tracker
        .quiet_ascii::<true>(part, &mut prep.run, max_filler);
    if pushed && used > 0 {
        // The spaces' idle step, then the byte's (each idempotent).
        e.noisy_idle(before.code, before.sentence);
        if used > k {
            cl.idle(e);
        }
    }
    if used > k {
        cl.quiet = e.quiet(cl.code, cl.sentence);
        return LineStart::Taken(used);
    }
    // Stopped at or before the byte: the rest of the indent with its class, then the byte.
    for j in used..=k {
        let (ch, class) = if j < k {
            (' ', before)
        } else {
            (char::from(b), *cl)
        };
        if let Some(sym) = prep.map(ch) {
            if let Some((q, span)) = e.push(s, sym, class.code, class.sentence) {
                return LineStart::Fired(j, q, span);
            }
        }
    }
    cl.quiet = e.quiet(cl.code, cl.sentence);
    LineStart::Taken(k + 1)
}

/// The loop of [`evidence_delta`] over the characters of `delta` and their byte offsets.
#[inline(always)]
fn evidence_chars(
    e: &mut Evidence,
    s: &Settings,
    prep: &mut Prep,
    lines: &mut Lines,
    delta: &str,
    chars: impl Iterator<Item = (usize, char)>,
    base: u64,
) -> Option<(u64, Option<u64>, u64)> {
    let mut count = base;
    // Symbols go to `push_quiet` while the rule is quiet.
    let mut cl = Class::of(lines, e);
    // Where the text not yet noted for the line's last visible character begins.
    let mut from = 0usize;
    for (i, ch) in chars {
        count += 1;
        if ch == '\n' || !cl.settled {
            if ch == '\n' {
                lines.note_last(delta.get(from..i).unwrap_or(""));
            }
            // What `feed` reads is not noted again.
            from = i + ch.len_utf8();
            cl.feed(lines, e, ch);
        }
        if let Some(sym) = prep.map(ch) {
            if cl.quiet && e.push_quiet(sym) {
                cl.idle(e);
                continue;
            }
            if let Some((q, span)) = e.push(s, sym, cl.code, cl.sentence) {
                lines.note_last(delta.get(from..i + ch.len_utf8()).unwrap_or(""));
                return Some((q, Some(span), count));
            }
            cl.quiet = e.quiet(cl.code, cl.sentence);
        }
    }
    lines.note_last(delta.get(from..).unwrap_or(""));
    None
}

impl Detector for TailPeriodicity {
    loopguard_core::detector_basics!(
        name: NAME,
        interest: [MessageStart, TextDelta, MessageEnd, ToolCall, User],
        facts: NONE,
    );

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            // The rest of a cut message goes on in its rule; any other message starts anew.
            Event::MessageStart if self.state.carry => {
                self.state.carry = false;
                self.state.started = true;
            }
            Event::MessageStart => self.reset(),
            Event::TextDelta { stream, delta } => self.delta(*stream, delta, cx),
            Event::MessageEnd => {
                // A cut message may go on in the next; otherwise nothing more can arrive for
                // it.
                self.state.carry = self.cut_off();
                if !self.state.carry {
                    self.retire();
                }
                self.state.started = false;
            }
            // A tool call between two messages, or a user message that asks for more than
            // the rest ("Show me the next file."): the next one is not the rest of this one.
            Event::ToolCall { .. } if self.state.carry => {
                self.state.carry = false;
                self.retire();
            }
            Event::User { text, .. } if self.state.carry && !asks_to_continue(text) => {
                self.state.carry = false;
                self.retire();
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `line`, fed character by character and ended, reads as a line of code.
    fn is_code(line: &str) -> bool {
        let mut l = Lines::default();
        for ch in line.chars() {
            l.feed(ch);
        }
        l.line_is_code()
    }

    #[test]
    fn a_hash_comment_or_directive_is_code_a_heading_is_not() {
        for code in [
            "#",
            "#!/usr/bin/env perl",
            "#include <stdio.h>",
            "#define WIDTH 80",
            "#[derive(Debug)]",
            "  #endif",
        ] {
            assert!(is_code(code), "{code:?}");
        }
        for prose in [
            "# Character widths",
            "## Usage",
            "##",
            "# ",
            "### Step 3: run the tests",
        ] {
            assert!(!is_code(prose), "{prose:?}");
        }
    }

    #[test]
    fn a_chant_that_can_no_longer_fire_is_dropped_at_once() {
        // With the defaults (min-unit 30, chant-copies 16) a chant is followed through its
        // first 180 symbols and fires at 16 copies of its root: a root of 12 symbols or more
        // cannot get there, so the content is dropped as soon as its smallest period passes
        // 11 (the quiet path then takes the message), not at 180 symbols.
        let s = Settings::default();
        let mut chant = Chant::default();
        let text = "fn main() { let total = 0; }";
        let dropped = text
            .chars()
            .position(|ch| chant.push(&s, u32::from(ch)).is_none());
        assert_eq!(dropped, Some(11), "dropped at the 12th symbol");
        // A root of 11 symbols can still fire (16 × 11 = 176): followed, and it fires.
        let mut chant = Chant::default();
        let mut fired = None;
        for (i, ch) in "abcdefghij ".repeat(16).chars().enumerate() {
            match chant.push(&s, u32::from(ch)) {
                None => panic!("dropped at symbol {i}"),
                Some(Some(hit)) => {
                    fired = Some((i, hit));
                    break;
                }
                Some(None) => {}
            }
        }
        assert_eq!(fired, Some((175, (11, 176))));
    }

    #[test]
    fn an_indented_bar_is_a_gutter_a_table_row_is_not() {
        assert!(is_code("   |"));
        assert!(is_code(
            "   |         ^^^^^^ expected `usize`, found reference"
        ));
        assert!(!is_code("| Endpoint | Method | Auth |"));
        assert!(!is_code("| /api/v1/users | GET | bearer token |"));
    }

    #[test]
    fn the_delta_line_feed_agrees_with_the_reference() {
        // Deltas fed through the evidence loop leave the classifier as feeding it character
        // by character.
        let alphabet = [
            ' ', '\t', '\n', '`', '~', 'a', 'Z', '1', ';', '{', '}', '(', '/', '\u{3000}', 'é',
            '\u{85}', '=', '\\', '#', '|',
        ];
        let settings = Settings {
            evidence_scale: 1000,
            ..Settings::default()
        };
        let mut g = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..500 {
            let mut a = Lines::default();
            let mut b = Lines::default();
            let mut pa = Prep::new(&settings);
            let mut ea = Evidence::new(&settings);
            let mut offset = 0u64;
            for _ in 0..12 {
                g ^= g << 13;
                g ^= g >> 7;
                g ^= g << 17;
                let len = (g % 20) as usize;
                let delta: String = (0..len)
                    .map(|_| {
                        g ^= g << 13;
                        g ^= g >> 7;
                        g ^= g << 17;
                        alphabet[(g % alphabet.len() as u64) as usize]
                    })
                    .collect();
                let hit = evidence_delta(&mut ea, &settings, &mut pa, &mut a, &delta, offset);
                assert_eq!(hit, None);
                for ch in delta.chars() {
                    b.feed(ch);
                }
                offset += delta.chars().count() as u64;
                assert_eq!(a, b, "{delta:?}");
            }
        }
    }

    #[test]
    fn the_ascii_loop_agrees_with_the_character_loop() {
        // The ASCII loop hands quiet stretches to the engine in blocks; the character loop
        // takes one character at a time. Both must fire at the same character and leave the
        // same state after every delta, on
        // text that switches between prose sentences (the noisy run is fed), code lines,
        // fences, indented and blank lines, and repeats (candidates go live).
        let pieces = [
            "Attempt ",
            "7",
            ": the health check on port 8080 still returns 503.\n",
            "\n",
            "    let x = f(a, b);\n",
            "fn main() {\n",
            "}\n",
            "```\n",
            "# Title\n",
            "  ",
            "The build failed again",
            " at step ",
            "12",
            ".\n",
            "value: 3\n",
            "\t",
            "a_b = 1;\n",
            "; ",
            "x",
            "Retry",
            "\n\n",
            "Z",
            "~~~\n",
            "0xdeadbeefcafebabe0011223344556677deadbeef\n",
        ];
        ascii_loop_agrees_on(&pieces);
    }

    #[test]
    fn the_code_loop_agrees_with_the_character_loop() {
        // The same on a file being written: code lines (indented, fenced, commented, blank),
        // where the whole-delta code loop takes the deltas, with lines of prose (the text
        // leaves code part way through a delta, or comes back to it on a line feed the
        // filler cut drops) and repeats that make candidates live while a delta is under
        // way.
        let pieces = [
            "fn main() {\n",
            "    let total = items.iter().map(|x| x.len()).sum::<usize>();\n",
            "        let message = format!(\"{name}: {total} items, {skipped} skipped, {failed} failed in {elapsed:?}\");\n",
            "        if total > 40 {\n",
            "            return Err(Error::TooLong(total));\n",
            "        }\n",
            "}\n",
            "\n",
            "/**\n",
            " * Returns the value at `index`.\n",
            " */\n",
            "```rust\n",
            "```\n",
            "\tcase 7: x = 0x1f;\n",
            "The next step is the parser.\n",
            "Then run the tests again.\n",
            // A line feed the filler cut drops (the rule sees no symbol for it).
            "Done.                  \n",
            "  ",
            "id: 12,\n",
            "    [dependencies]\n",
            "serde = \"1\"\n",
            "~~~\n",
            "// TODO\n",
            "#\n",
            "# Widths of the characters\n",
            "#define WIDTH 80\n",
            "## Usage\n",
            "   |\n",
            "| a | b |\n",
            "\r\n",
            "x",
        ];
        ascii_loop_agrees_on(&pieces);
    }

    /// Texts made of `pieces`, some of them repeated, streamed in deltas of 1 to 40 bytes
    /// through [`evidence_next`] and through [`evidence_chars`]: both fire at the same
    /// character and leave the same state after every delta, under four settings.
    fn ascii_loop_agrees_on(pieces: &[&str]) {
        let base = Settings::default();
        let variants = [
            Settings {
                min_unit: 8,
                evidence_scale: 10,
                ..base.clone()
            },
            Settings {
                min_unit: 12,
                evidence_scale: 25,
                chant_copies: 4,
                ..base.clone()
            },
            Settings {
                min_unit: 30,
                evidence_scale: 100,
                ..base.clone()
            },
            Settings {
                min_unit: 8,
                evidence_scale: 10,
                counter_noise: false,
                ..base
            },
        ];
        let mut g = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            (g % m) as usize
        };
        for settings in &variants {
            for _ in 0..400 {
                // A text of pieces, some of it repeated whole (runs) or with a new number.
                let mut text = String::new();
                let mut unit = String::new();
                for _ in 0..(1 + next(12)) {
                    unit.push_str(pieces[next(pieces.len() as u64)]);
                }
                for _ in 0..(1 + next(40)) {
                    match next(4) {
                        0 => text.push_str(pieces[next(pieces.len() as u64)]),
                        1 => text.push_str(&unit.replace('7', &next(100).to_string())),
                        _ => text.push_str(&unit),
                    }
                }
                let (mut ea, mut pa, mut la) = (
                    Evidence::new(settings),
                    Prep::new(settings),
                    Lines::default(),
                );
                let (mut eb, mut pb, mut lb) = (ea.clone(), pa.clone(), la.clone());
                let mut offset = 0u64;
                let mut rest = text.as_str();
                while !rest.is_empty() {
                    // Deltas of up to 130 bytes: some span the classifier's 64-byte words.
                    let most = if next(4) == 0 { 130 } else { 40 };
                    let k = (1 + next(most)).min(rest.len());
                    let (delta, tail) = rest.split_at(k);
                    rest = tail;
                    let a = evidence_next(&mut ea, settings, &mut pa, &mut la, delta, offset);
                    let b = evidence_chars(
                        &mut eb,
                        settings,
                        &mut pb,
                        &mut lb,
                        delta,
                        delta.char_indices(),
                        offset,
                    );
                    assert_eq!(a, b, "{text:?}");
                    if a.is_some() {
                        break;
                    }
                    assert!(pa == pb && la == lb, "{text:?} at {offset}");
                    // A checkpoint due before the next symbol may run in the ASCII loop
                    // before it comes (on the same characters): the engines agree once one
                    // more symbol arrives.
                    let (mut xa, mut xb) = (ea.clone(), eb.clone());
                    let (mut qa, mut qb) = (pa.clone(), pb.clone());
                    let (mut ma, mut mb) = (la.clone(), lb.clone());
                    let end = offset + delta.len() as u64;
                    let x = "x".char_indices();
                    let fa =
                        evidence_chars(&mut xa, settings, &mut qa, &mut ma, "x", x.clone(), end);
                    let fb = evidence_chars(&mut xb, settings, &mut qb, &mut mb, "x", x, end);
                    assert_eq!(fa, fb, "{text:?} at {offset}");
                    assert!(xa == xb, "{text:?} at {offset}");
                    offset += delta.len() as u64;
                }
            }
        }
    }

    #[test]
    fn ascii_masks_flag_each_byte() {
        // Every ASCII byte at every position of chunks of 0 to 64 bytes, beside others.
        for len in 0..=64usize {
            for probe in 0u8..128 {
                let chunk: Vec<u8> = (0..len)
                    .map(|i| {
                        if i % 3 == 1 {
                            probe
                        } else {
                            (i * 37 % 128) as u8
                        }
                    })
                    .collect();
                let [lf, sp, ws] = ascii_masks(&chunk);
                for (i, &b) in chunk.iter().enumerate() {
                    let bit = |m: u64| m >> i & 1 == 1;
                    assert_eq!(bit(lf), b == b'\n', "{b} at {i} of {len}");
                    assert_eq!(bit(sp), b == b' ', "{b} at {i} of {len}");
                    assert_eq!(
                        bit(ws),
                        char::from(b).is_whitespace(),
                        "{b} at {i} of {len}"
                    );
                }
                let unused = if len == 64 { 0 } else { u64::MAX << len };
                assert_eq!((lf | sp | ws) & unused, 0);
            }
        }
    }

    #[test]
    fn ascii_table_matches_is_alphanumeric() {
        for c in 0u32..128 {
            let ch = char::from_u32(c).unwrap_or('\0');
            assert_eq!((ASCII_ALNUM >> c) & 1 == 1, ch.is_alphanumeric(), "{c}");
        }
    }
}
