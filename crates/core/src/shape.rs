//! Shapes: what stays the same between near copies of a call or a result.
//!
//! Exact fingerprints ([`crate::args_fingerprint`], [`crate::result_fingerprint`]) tell "the
//! same call, the same result". A loop whose copies differ a little defeats them: an error
//! that echoes the edit it rejected, a line number that drops by one each round, a count in
//! a harness nudge. The functions here compute *shapes* for detectors that ask for them:
//!
//! - [`Echo`]: the pieces of a call's own arguments, so that a result echoing them is compared
//!   with the echo removed ([`result_shape`]);
//! - [`mask_numbers`] / [`text_shape`]: digit runs become `#`, and hexadecimal temp ids become
//!   `#`, whitespace runs one space;
//! - [`args_shape`]: a call identity with the numbers of its arguments abstracted;
//! - [`TokenSet`]: arguments as a bounded set of token hashes, compared by Jaccard similarity;
//! - [`Trend`]: whether the numbers of consecutive results move steadily (a poll's progress, a
//!   falling test count) or drift back and forth (noise);
//! - [`looks_like_error`] / [`is_failure`]: a result that *is* an error message, whatever the
//!   host's error flag says — never a listing or a log that merely contains an error word.
//!
//! Every function is pure and bounded: at most [`HEAD_BYTES`] + [`TAIL_BYTES`] bytes of a
//! result and [`MAX_ARGS_BYTES`] bytes of arguments are read.

use crate::fingerprint::Fingerprint;
use crate::swar::{bytes_in, le_u64, splat};
use crate::FixedState;
use serde_json::Value;
use std::collections::HashSet;
use std::hash::BuildHasher;

/// Bytes of a result read from its start.
pub const HEAD_BYTES: usize = 4096;
/// Bytes of a result read from its end (when it is longer than both cuts together).
pub const TAIL_BYTES: usize = 1024;
/// Bytes of string arguments read for echoes and tokens.
pub const MAX_ARGS_BYTES: usize = 16 * 1024;
/// Numbers of a result kept for [`Trend`].
pub const MAX_NUMBERS: usize = 8;
/// Numbers of six digits or more are ids, ports, epochs: never trend numbers.
const MAX_TREND_NUMBER: u64 = 100_000;
/// Tokens kept in a [`TokenSet`].
pub const MAX_TOKENS: usize = 128;
/// Tokens read (repeats included) for a [`TokenSet`], of which the [`MAX_TOKENS`] smallest
/// distinct hashes are kept.
const ARGS_TOKENS: usize = MAX_TOKENS * 4;
/// Echoed lines shorter than this (trimmed, in characters) are not removed: a `}` or an
/// empty line is not evidence of an echo.
pub const MIN_ECHO_LINE: usize = 6;
/// Single-line argument strings shorter than this are not removed inline.
pub const MIN_ECHO_INLINE: usize = 4;
const MAX_ECHO_INLINE: usize = 16;

/// The emptied strings an [`Echo`]'s inline pieces are written into.
pub(crate) type InlinePool = crate::StringPool<MAX_ECHO_INLINE>;
const MAX_ECHO_INLINE_CHARS: usize = 200;
const MAX_ECHO_NUMBERS: usize = 32;
/// How far from an argument's number a result's number still counts as its echo.
pub const ECHO_NEAR: u64 = 3;
/// Argument numbers below this are only echoed exactly (small counts are too common).
pub const ECHO_NEAR_MIN: u64 = 50;
/// Characters of a result inspected by [`looks_like_error`].
pub const ERROR_SCAN_CHARS: usize = 300;

fn hash_str(s: &str) -> u64 {
    FixedState.hash_one(s)
}

/// The path a shell word names, if it names one: the word without the quotes, parentheses
/// and separators around it, when it starts like a path (`/usr/lib`, `./src`, `../y`, `~/x`).
///
/// ```
/// use loopguard_core::shape::path_word;
/// assert_eq!(path_word("'/opt/x.h';"), Some("/opt/x.h"));
/// assert_eq!(path_word("./src"), Some("./src"));
/// assert_eq!(path_word("src/main.rs"), None);
/// assert_eq!(path_word("-name"), None);
/// ```
pub fn path_word(word: &str) -> Option<&str> {
    let w = word.trim_matches(|c| matches!(c, '"' | '\'' | ';' | '(' | ')' | ','));
    (w.starts_with('/') || w.starts_with("./") || w.starts_with("../") || w.starts_with("~/"))
        .then_some(w)
}

/// The parts of a call's arguments that a result may echo back: the trimmed lines of its
/// string values (line-number prefixes removed), its short single-line strings and the
/// paths they name (`/opt/x.h` of `cat /opt/x.h | head`), and its numbers (in strings or as
/// JSON numbers).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Echo {
    lines: HashSet<u64, FixedState>,
    /// Short lines (`}`, `end`), removed only where the result prints them with a line
    /// number, as editors echo code.
    #[serde(default)]
    short: HashSet<u64, FixedState>,
    inline: Vec<String>,
    numbers: Vec<u64>,
}

impl Echo {
    /// Nothing to remove.
    pub fn none() -> Echo {
        Echo::default()
    }

    /// The echo of `args` (every string and number leaf, up to [`MAX_ARGS_BYTES`]).
    pub fn of_args(args: &Value) -> Echo {
        let mut e = Echo::default();
        e.refill(args, &mut InlinePool::default());
        e
    }

    /// Makes this echo [`Echo::of_args`] of `args`, in the buffers it already holds (the
    /// bus's echo of an answered call serves the next call); its inline pieces are written
    /// into the emptied strings of `spare`, and its old ones left there.
    pub(crate) fn refill(&mut self, args: &Value, spare: &mut InlinePool) {
        self.lines.clear();
        self.short.clear();
        for piece in self.inline.drain(..) {
            spare.keep(piece);
        }
        self.numbers.clear();
        let mut budget = MAX_ARGS_BYTES;
        self.walk(args, &mut budget, spare);
    }

    fn walk(&mut self, v: &Value, budget: &mut usize, spare: &mut InlinePool) {
        match v {
            Value::String(s) => {
                let s = prefix_bytes(s, *budget);
                *budget = budget.saturating_sub(s.len());
                self.add_text(s, spare);
            }
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    self.add_number(u);
                } else if let Some(i) = n.as_i64() {
                    self.add_number(i.unsigned_abs());
                }
            }
            Value::Array(a) => {
                for x in a {
                    if *budget == 0 {
                        break;
                    }
                    self.walk(x, budget, spare);
                }
            }
            Value::Object(m) => {
                for x in m.values() {
                    if *budget == 0 {
                        break;
                    }
                    self.walk(x, budget, spare);
                }
            }
            _ => {}
        }
    }

    fn add_number(&mut self, n: u64) {
        if self.numbers.len() < MAX_ECHO_NUMBERS && !self.numbers.contains(&n) {
            self.numbers.push(n);
        }
    }

    fn add_text(&mut self, s: &str, spare: &mut InlinePool) {
        let mut lines = 0;
        for line in crate::swar::lines(s) {
            lines += 1;
            let t = trim(strip_line_number(trim(line)));
            if has_chars(t, MIN_ECHO_LINE) {
                self.lines.insert(hash_collapsed_trimmed(t));
            } else if !t.is_empty() {
                self.short.insert(hash_str(t));
            }
        }
        let t = trim(s);
        if lines <= 1
            && self.inline.len() < MAX_ECHO_INLINE
            && has_chars(t, MIN_ECHO_INLINE)
            && !has_chars(t, MAX_ECHO_INLINE_CHARS + 1)
        {
            self.inline.push(spare.take(t));
            // The paths a one-line command names are echoed on their own: `cat: /opt/x.h:
            // No such file or directory` answers `cat /opt/x.h | head` with its path.
            if t.contains(' ') {
                for w in t.split_whitespace().filter_map(path_word) {
                    if has_chars(w, MIN_ECHO_INLINE + 2)
                        && self.inline.len() < MAX_ECHO_INLINE
                        && !self.inline.iter().any(|p| p == w)
                    {
                        self.inline.push(spare.take(w));
                    }
                }
            }
        }
        let mut digits = DigitRuns::new(s);
        while let Some(n) = digits.next_number() {
            self.add_number(n);
        }
    }

    /// Whether the trimmed `line` (line-number prefix removed) is a line of the arguments; a
    /// short line counts only when the result numbers it (`1233:        }`).
    pub fn has_line(&self, line: &str) -> bool {
        self.has_trimmed_line(trim(line))
    }

    /// [`Echo::has_line`] of a line already trimmed. An echo without lines has none of them:
    /// the line is not hashed.
    fn has_trimmed_line(&self, trimmed: &str) -> bool {
        if self.lines.is_empty() && self.short.is_empty() {
            return false;
        }
        let stripped = strip_line_number(trimmed);
        let t = trim(stripped);
        if has_chars(t, MIN_ECHO_LINE) {
            return self.lines.contains(&hash_collapsed_trimmed(t));
        }
        let numbered = stripped.len() != trimmed.len();
        numbered && !t.is_empty() && self.short.contains(&hash_str(t))
    }

    /// Whether `n` comes from the arguments: one of their numbers, or within
    /// [`ECHO_NEAR`] of one of at least [`ECHO_NEAR_MIN`] (a result reporting positions
    /// around the call's own line numbers: `(1410 more lines above)` for `edit 1411:1413`).
    pub fn has_number(&self, n: u64) -> bool {
        self.numbers
            .iter()
            .any(|a| *a == n || (*a >= ECHO_NEAR_MIN && a.abs_diff(n) <= ECHO_NEAR))
    }
}

/// `  42:    foo()` → `    foo()`; `42 | foo` → ` foo`: the line-number prefixes editors and
/// linters print before echoed code.
fn strip_line_number(line: &str) -> &str {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 7 {
        return line;
    }
    let rest = line.get(digits..).unwrap_or("");
    let rest_trim = rest.trim_start_matches(' ');
    for sep in [":", "|", "\t"] {
        if let Some(r) = rest_trim.strip_prefix(sep) {
            return r;
        }
    }
    if rest.starts_with('\t') {
        return rest;
    }
    line
}

/// `s.trim()`, told from the bytes at either end when both are ASCII (the whitespace of ASCII
/// is `\t` to `\r` and the space); a text that starts or ends with a non-ASCII character is
/// left to `str::trim`.
fn trim(s: &str) -> &str {
    let ws = |c: &u8| matches!(c, b'\t'..=b'\r' | b' ');
    let b = s.as_bytes();
    let Some(start) = b.iter().position(|c| !ws(c)) else {
        // Only ASCII whitespace.
        return "";
    };
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |e| e + 1);
    match (b.get(start), b.get(end.wrapping_sub(1))) {
        (Some(f), Some(l)) if f.is_ascii() && l.is_ascii() => s.get(start..end).unwrap_or(""),
        _ => s.trim(),
    }
}

/// Whether `s` has at least `n` characters: told by its length alone unless that lies
/// between `n` and `4 n` bytes (a character is one to four bytes), and then counted only up
/// to the `n`-th.
fn has_chars(s: &str, n: usize) -> bool {
    if s.len() < n {
        return false;
    }
    if s.len() >= n.saturating_mul(4) || s.is_ascii() {
        return true;
    }
    n == 0 || s.chars().nth(n - 1).is_some()
}

/// The hash of [`collapse`] of `t`, a text without whitespace at either end, without building
/// it when `t` is collapsed already.
fn hash_collapsed_trimmed(t: &str) -> u64 {
    if is_collapsed(t) {
        hash_str(t)
    } else {
        hash_str(&collapse(t))
    }
}

/// Whether the only whitespace of `t` is single spaces. ASCII text is read 8 bytes at a time
/// (with the byte after each, a space's next one); from the first step holding a non-ASCII
/// byte, other whitespace or two spaces, the rest is read character by character.
fn is_collapsed(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while let (Some(here), Some(next)) = (b.get(i..i + 8), b.get(i + 1..i + 9)) {
        let (x, n) = (le_u64(here), le_u64(next));
        let stop = (x & splat(0x80))
            | bytes_in(x, b'\t', b'\r')
            | (bytes_in(x, b' ', b' ') & bytes_in(n, b' ', b' '));
        if stop != 0 {
            break;
        }
        i += 8;
    }
    // Every byte before `i` is ASCII: `i` is a character boundary, and the byte before it is
    // whitespace only when it is a space.
    let Some(rest) = t.get(i..) else {
        return false;
    };
    let mut prev_space = i > 0 && b.get(i - 1) == Some(&b' ');
    rest.chars().all(|c| {
        let space = c.is_whitespace();
        let ok = !space || (c == ' ' && !prev_space);
        prev_space = space;
        ok
    })
}

/// Whitespace runs become one space.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.trim().chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

/// The longest prefix of `s` of at most `max` bytes, on a char boundary.
fn prefix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    s.get(..i).unwrap_or("")
}

/// The longest suffix of `s` of at most `max` bytes, on a char boundary.
fn suffix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = s.len() - max;
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    s.get(i..).unwrap_or("")
}

/// The bounded view of a result: its head, and its tail when it is long.
fn bounded(content: &str) -> (&str, Option<&str>) {
    if content.len() <= HEAD_BYTES + TAIL_BYTES {
        (content, None)
    } else {
        (
            prefix_bytes(content, HEAD_BYTES),
            Some(suffix_bytes(content, TAIL_BYTES)),
        )
    }
}

/// Iterates the maximal ASCII digit runs of a text, as numbers (saturating).
struct DigitRuns<'a> {
    bytes: &'a [u8],
    i: usize,
}

impl<'a> DigitRuns<'a> {
    fn new(s: &'a str) -> DigitRuns<'a> {
        DigitRuns {
            bytes: s.as_bytes(),
            i: 0,
        }
    }

    fn next_number(&mut self) -> Option<u64> {
        while self.i < self.bytes.len() && !self.bytes[self.i].is_ascii_digit() {
            self.i += 1;
        }
        if self.i >= self.bytes.len() {
            return None;
        }
        let mut n: u64 = 0;
        while self.i < self.bytes.len() && self.bytes[self.i].is_ascii_digit() {
            n = n
                .saturating_mul(10)
                .saturating_add(u64::from(self.bytes[self.i] - b'0'));
            self.i += 1;
        }
        Some(n)
    }
}

/// Whether a word is a temp id: at least 8 characters, all hexadecimal, with a digit and a
/// letter (`3f9a2c1b`, a commit or container id), or `tmp`/`temp` followed by at least 4
/// alphanumerics with a digit among them (`tmpk3j9x2`).
fn is_temp_id(word: &str) -> bool {
    // Both kinds are at least 7 bytes long (`tmp` + 4, or 8 hex digits).
    if word.len() < 7 {
        return false;
    }
    let hexy = word.len() >= 8
        && word.bytes().all(|b| b.is_ascii_hexdigit())
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic());
    let tmp = ["tmp", "temp"].iter().any(|p| {
        word.strip_prefix(p)
            .is_some_and(|r| r.len() >= 4 && r.bytes().any(|b| b.is_ascii_digit()))
    });
    hexy || tmp
}

/// Writes `line` masked into `out`: digit runs become `#` (each number is passed to
/// `number`), temp ids become `#`, whitespace runs one space.
fn mask_into(line: &str, out: &mut String, number: &mut dyn FnMut(u64)) {
    mask_ids_into(line, out, number, &mut |_| {});
}

/// Byte classes of [`mask_ids_into`]: ASCII punctuation (kept as it is), letters and `_`,
/// digits, ASCII whitespace, and the bytes of non-ASCII characters.
const PUNCT: u8 = 0;
const LETTER: u8 = 1;
const DIGIT: u8 = 2;
const SPACE: u8 = 3;
const HIGH: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [HIGH; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'0'..=b'9' => DIGIT,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => LETTER,
            b'\t'..=b'\r' | b' ' => SPACE,
            _ => PUNCT,
        };
        b += 1;
    }
    t
};

fn class(b: u8) -> u8 {
    CLASS[usize::from(b)]
}

/// [`mask_into`], passing each temp id to `id`.
///
/// Reads the line byte by byte and copies what it keeps as whole slices: text between two
/// rewrites (a digit run, a temp id, a whitespace run other than one space) is written with
/// one copy. A word without a digit is neither a temp id nor masked: it is only stepped
/// over. Only non-ASCII characters are decoded.
fn mask_ids_into(
    line: &str,
    out: &mut String,
    number: &mut dyn FnMut(u64),
    id: &mut dyn FnMut(&str),
) {
    mask_ids_with::<true>(line, out, number, id);
}

/// [`mask_ids_into`], with `SKIP` stepping over plain text 8 bytes at a time ([`skip_plain`]);
/// without it, byte by byte (the tests' reference: both must write the same).
fn mask_ids_with<const SKIP: bool>(
    line: &str,
    out: &mut String,
    number: &mut dyn FnMut(u64),
    id: &mut dyn FnMut(&str),
) {
    let bytes = line.as_bytes();
    // `line[from..i]` is kept as it is, and written when something else must be.
    let mut from = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        // `i` is always at a word boundary here. Plain text (punctuation, words without a
        // digit, single spaces between them) is stepped over 8 bytes at a time, then back
        // to the start of the word the skip stopped in, which is read below as a whole.
        if SKIP && matches!(class(b), PUNCT | LETTER) {
            let mut j = skip_plain(bytes, i);
            let at = j;
            let stop = bytes.get(j).map(|&c| class(c));
            if matches!(stop, Some(LETTER | DIGIT)) {
                while j > i && bytes.get(j - 1).is_some_and(|&p| class(p) == LETTER) {
                    j -= 1;
                }
            }
            if stop == Some(DIGIT) {
                // The skip stopped at a digit: its word (letters back to `j`, then letters and
                // digits on) holds a digit, and is masked without being read again from its
                // start.
                let mut end = at + 1;
                while bytes
                    .get(end)
                    .is_some_and(|&c| matches!(class(c), LETTER | DIGIT))
                {
                    end += 1;
                }
                mask_word(line, j, at, end, &mut from, out, number, id);
                i = end;
                continue;
            }
            if j > i {
                i = j;
                continue;
            }
        }
        match class(b) {
            PUNCT => i += 1,
            LETTER | DIGIT => {
                let mut end = i;
                let mut digits = false;
                while let Some(c) = bytes.get(end).map(|&b| class(b)) {
                    if c != LETTER && c != DIGIT {
                        break;
                    }
                    digits |= c == DIGIT;
                    end += 1;
                }
                if digits {
                    mask_word(line, i, i, end, &mut from, out, number, id);
                }
                i = end;
            }
            SPACE
                if b == b' '
                    && (i > from || !out.is_empty())
                    && bytes
                        .get(i + 1)
                        .is_some_and(|&n| matches!(class(n), PUNCT | LETTER | DIGIT)) =>
            {
                // One space between text and more ASCII text is its own collapse.
                i += 1;
            }
            _ => {
                let Some(c) = line.get(i..).and_then(|r| r.chars().next()) else {
                    break;
                };
                if !c.is_whitespace() {
                    i += c.len_utf8();
                    continue;
                }
                // A whitespace run: one space, when there is text before and after it.
                out.push_str(line.get(from..i).unwrap_or(""));
                let text_before = !out.is_empty();
                while let Some(c) = line.get(i..).and_then(|r| r.chars().next()) {
                    if !c.is_whitespace() {
                        if text_before {
                            out.push(' ');
                        }
                        break;
                    }
                    i += c.len_utf8();
                }
                from = i;
            }
        }
    }
    out.push_str(line.get(from..).unwrap_or(""));
}

/// The first index from `i` (at most 8 bytes short of where the bytes end) whose byte may
/// need rewriting by [`mask_ids_into`], read 8 bytes at a time: a digit, a non-ASCII byte,
/// ASCII whitespace other than a space, or a space followed by whitespace or a non-ASCII
/// byte. The byte at `i` is not a space (a space at a line's start is not plain).
fn skip_plain(bytes: &[u8], mut i: usize) -> usize {
    // Each step reads the 8 bytes at `i` and the 8 after `i + 1` (a space's next byte).
    while let (Some(here), Some(next)) = (bytes.get(i..i + 8), bytes.get(i + 1..i + 9)) {
        let (x, n) = (le_u64(here), le_u64(next));
        let high = splat(0x80);
        let no_text_next = (n & high) | bytes_in(n, b'\t', b'\r') | bytes_in(n, b' ', b' ');
        let special = (x & high)
            | bytes_in(x, b'0', b'9')
            | bytes_in(x, b'\t', b'\r')
            | (bytes_in(x, b' ', b' ') & no_text_next);
        if special != 0 {
            // Little-endian: the lowest set bit is the first special byte.
            return i + (special.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

/// The word `line[start..end]`, which holds a digit and none before `first_digit`: a temp id
/// becomes `#`, otherwise each digit run does. Writes the kept text before it first (`line[*from..]`), and moves `from`
/// past what it rewrote.
#[allow(clippy::too_many_arguments)]
fn mask_word(
    line: &str,
    start: usize,
    first_digit: usize,
    end: usize,
    from: &mut usize,
    out: &mut String,
    number: &mut dyn FnMut(u64),
    id: &mut dyn FnMut(&str),
) {
    let word = line.get(start..end).unwrap_or("");
    if is_temp_id(word) {
        out.push_str(line.get(*from..start).unwrap_or(""));
        id(word);
        out.push('#');
        *from = end;
        return;
    }
    let wb = word.as_bytes();
    let mut j = first_digit.saturating_sub(start);
    while j < wb.len() {
        if !wb[j].is_ascii_digit() {
            j += 1;
            continue;
        }
        out.push_str(line.get(*from..start + j).unwrap_or(""));
        let mut n: u64 = 0;
        while let Some(d) = wb.get(j).filter(|d| d.is_ascii_digit()) {
            n = n.saturating_mul(10).saturating_add(u64::from(d - b'0'));
            j += 1;
        }
        out.push('#');
        number(n);
        *from = start + j;
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with digit runs and temp ids replaced by `#` and whitespace runs collapsed.
///
/// ```
/// use loopguard_core::shape::mask_numbers;
/// assert_eq!(mask_numbers("found 3 actions,  line 12"), "found # actions, line #");
/// assert_eq!(mask_numbers("/tmp/tmpk3j9x2/out 3f9a2c1b7e"), "/tmp/#/out #");
/// ```
pub fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(HEAD_BYTES + TAIL_BYTES));
    let (head, tail) = bounded(text);
    mask_into(head, &mut out, &mut |_| {});
    if let Some(t) = tail {
        out.push_str(" … ");
        mask_into(t, &mut out, &mut |_| {});
    }
    out
}

/// The seeds of the kinds of shape ([`Fingerprint::of_shape`]): `text-sh`, `args-sh`,
/// `result-s`, `words-sh` in ASCII.
const TEXT_SHAPE_SEED: u64 = u64::from_le_bytes(*b"text-sh\0");
const ARGS_SHAPE_SEED: u64 = u64::from_le_bytes(*b"args-sh\0");
const RESULT_SHAPE_SEED: u64 = u64::from_le_bytes(*b"result-s");
const WORDS_SHAPE_SEED: u64 = u64::from_le_bytes(*b"words-sh");

/// The fingerprint of [`mask_numbers`] of `text`: texts that differ only in numbers, temp
/// ids or whitespace share it.
pub fn text_shape(text: &str) -> Fingerprint {
    Fingerprint::of_shape(TEXT_SHAPE_SEED, mask_numbers(text).as_bytes())
}

/// The shape of a call: the tool and its arguments' canonical JSON with every number (JSON
/// numbers and digit runs inside strings) and temp id abstracted. `delete line 45` and
/// `delete line 44` share it.
pub fn args_shape(tool: &str, args: &Value) -> Fingerprint {
    thread_local! {
        /// The canonical JSON and its masked form, reused from call to call.
        static SCRATCH: std::cell::RefCell<(String, String)> =
            const { std::cell::RefCell::new((String::new(), String::new())) };
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            let (json, out) = &mut *scratch;
            args_shape_in(tool, args, json, out)
        }
        Err(_) => args_shape_in(tool, args, &mut String::new(), &mut String::new()),
    })
}

/// [`args_shape`] written into the buffers `json` and `out` (cleared first; each holds at
/// most [`MAX_ARGS_BYTES`] + 3 bytes after it).
fn args_shape_in(tool: &str, args: &Value, json: &mut String, out: &mut String) -> Fingerprint {
    json.clear();
    out.clear();
    crate::fingerprint::canonical_json_prefix(args, MAX_ARGS_BYTES, json);
    mask_into(prefix_bytes(json, MAX_ARGS_BYTES), out, &mut |_| {});
    // The tool names the seed: two tools' calls of one form are two shapes.
    let seed = xxhash_rust::xxh3::xxh3_64_with_seed(tool.as_bytes(), ARGS_SHAPE_SEED);
    Fingerprint::of_shape(seed, out.as_bytes())
}

/// The shape of one result: its fingerprint with the call's echo removed and numbers
/// abstracted, and the numbers that were abstracted (not echoed ones, not ids of six digits
/// or more), for [`Trend`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultShape {
    /// The fingerprint of the shape.
    pub fp: Fingerprint,
    /// The first [`MAX_NUMBERS`] numbers of the result that are not in the call's arguments.
    pub numbers: Vec<u64>,
    /// Whether the result said nothing: no text but whitespace after the echo was removed, or
    /// only a host's note that nothing was printed ([`is_silent`]).
    pub empty: bool,
    /// A hash of the temp ids the result holds, in order (`None`: it holds none). A new id
    /// in each result is a new object each time (an agent launched, a job created).
    pub ids: Option<u64>,
}

/// The shape of `content` as a result of a call whose arguments echo as `echo`: lines of the
/// arguments (line-number prefixes ignored) are dropped, short argument strings cut out of
/// the remaining lines, the bus's volatile fields masked (durations, pids, uuids,
/// date-times), numbers and temp ids abstracted (numbers of the arguments are not kept for
/// [`Trend`]), whitespace collapsed.
///
/// ```
/// use loopguard_core::shape::{result_shape, Echo};
/// let a = serde_json::json!({"new_str": "    if (x) {\n        return y;\n"});
/// let b = serde_json::json!({"new_str": "    if (x) {\n        return z;\n"});
/// let err = |args: &serde_json::Value| {
///     let edit = args["new_str"].as_str().unwrap();
///     let echoed: String = edit.lines().enumerate().map(|(i, l)| format!("{}:{l}\n", 40 + i)).collect();
///     format!("ERRORS:\n- E999 IndentationError\n{echoed}Your changes have NOT been applied.")
/// };
/// let sa = result_shape(&Echo::of_args(&a), &err(&a));
/// let sb = result_shape(&Echo::of_args(&b), &err(&b));
/// assert_eq!(sa.fp, sb.fp);
/// ```
pub fn result_shape(echo: &Echo, content: &str) -> ResultShape {
    result_shape_with(echo, content, None)
}

/// [`result_shape`], reading the text pass of a short, trimmed `content` from `pass` (the
/// one the generic normaliser computed for the same result).
pub(crate) fn result_shape_with(
    echo: &Echo,
    content: &str,
    pass: Option<&crate::normalize::TextPass>,
) -> ResultShape {
    let mut buffers = ShapeBuffers {
        out: String::with_capacity(content.len().min(HEAD_BYTES + TAIL_BYTES)),
        ..ShapeBuffers::default()
    };
    result_shape_in(echo, content, pass, &mut buffers)
}

/// The buffers a result's shape is computed in: a bus that gives each result the buffers of
/// the previous one allocates nothing per result.
#[derive(Debug, Default)]
pub(crate) struct ShapeBuffers {
    /// The shaped text (cleared first).
    pub(crate) out: String,
    /// The numbers that become the shape's (cleared first; the shape takes them).
    pub(crate) numbers: Vec<u64>,
    /// Where a line is cut the echo's inline pieces out of ([`cut_pieces`]); boxed, so that
    /// the buffers move cheaply from result to result.
    cuts: Option<Box<[String; 2]>>,
}

/// [`result_shape_with`] in reused buffers: the shaped text is written into `buffers.out`,
/// and the shape's numbers into `buffers.numbers`.
pub(crate) fn result_shape_in(
    echo: &Echo,
    content: &str,
    pass: Option<&crate::normalize::TextPass>,
    buffers: &mut ShapeBuffers,
) -> ResultShape {
    let ShapeBuffers { out, numbers, cuts } = buffers;
    let mut numbers = std::mem::take(numbers);
    out.clear();
    numbers.clear();
    let mut ids: Option<u64> = None;
    let (head, tail) = bounded(content);
    for part in std::iter::once(head).chain(tail) {
        // Durations, pids, uuids, date-times and the like first (the bus's text pass).
        let owned;
        let part = match pass {
            // The whole content, already trimmed: the text pass of `content.trim()`.
            Some(p) if tail.is_none() && part.len() == trim(part).len() => p.of(part),
            _ => {
                owned = crate::normalizers::text::normalize_text(part);
                owned.as_str()
            }
        };
        for line in crate::swar::lines(part) {
            let trimmed = trim(line);
            if echo.has_trimmed_line(trimmed) {
                continue;
            }
            let line = match cut_pieces(line, &echo.inline, cuts) {
                Some(cut) => trim(cut),
                None => trimmed,
            };
            if line.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            mask_ids_into(
                line,
                out,
                &mut |n| {
                    if numbers.len() < MAX_NUMBERS && n < MAX_TREND_NUMBER && !echo.has_number(n) {
                        numbers.push(n);
                    }
                },
                &mut |w| {
                    let h = hash_str(w);
                    ids = Some(ids.map_or(h, |x| x.rotate_left(5) ^ h));
                },
            );
        }
    }
    ResultShape {
        fp: Fingerprint::of_shape(RESULT_SHAPE_SEED, out.as_bytes()),
        empty: out.is_empty() || is_silent(content),
        numbers,
        ids,
    }
}

/// `line` with each of `pieces` it holds replaced by `\u{1}`, one piece after the other (as
/// `str::replace` would), written into `cuts` (the line cut so far in one, the next cut
/// written into the other; allocated at the first line that holds a piece); `None` when it
/// holds none.
fn cut_pieces<'c>(
    line: &str,
    pieces: &[String],
    cuts: &'c mut Option<Box<[String; 2]>>,
) -> Option<&'c str> {
    // The pieces before the first one the line holds leave it as it is.
    let first = pieces.iter().position(|p| has(line, p))?;
    let cuts = cuts.get_or_insert_with(Box::default);
    let [done, next] = &mut **cuts;
    done.clear();
    replace_into(line, pieces.get(first)?, "\u{1}", done);
    for piece in pieces.get(first + 1..).unwrap_or_default() {
        if has(done, piece) {
            next.clear();
            replace_into(done, piece, "\u{1}", next);
            std::mem::swap(done, next);
        }
    }
    Some(done.as_str())
}

/// `text.replace(from, to)`, appended to `out`.
fn replace_into(text: &str, from: &str, to: &str, out: &mut String) {
    let mut last = 0;
    for (start, _) in text.match_indices(from) {
        out.push_str(text.get(last..start).unwrap_or(""));
        out.push_str(to);
        last = start + from.len();
    }
    out.push_str(text.get(last..).unwrap_or(""));
}

/// Whether the numbers of consecutive results of one call move steadily. A position whose
/// number moved the same way at every step that changed it, and moved at the last step, is
/// progress (a percentage rising, a failure count falling); a number that went back and
/// forth (`47/47`, `45/45`, `47/47`) or stood still is not.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Trend {
    /// The previous result's numbers.
    last: Vec<u64>,
    /// Per position: 0 not moved yet, 1 rising, -1 falling, 2 went both ways.
    dirs: Vec<i8>,
    seen: bool,
}

impl Trend {
    /// A trend with no result yet.
    pub fn new() -> Trend {
        Trend::default()
    }

    /// Forgets every result: the trend is [`Trend::new`]'s again, its buffers kept.
    pub fn restart(&mut self) {
        self.last.clear();
        self.dirs.clear();
        self.seen = false;
    }

    /// Adds the next result's numbers; returns whether this step is progress.
    pub fn step(&mut self, numbers: &[u64]) -> bool {
        self.advance(numbers).0
    }

    /// Adds the next numbers; returns whether they went on: some moved, and each that moved
    /// had moved before, the same way. Unlike [`Trend::step`]'s progress, a first move does
    /// not go on yet (a window moved once may come back); a number that came back never does
    /// again.
    pub fn step_onward(&mut self, numbers: &[u64]) -> bool {
        self.advance(numbers).1
    }

    /// Adds the next numbers: (progress, went on), as [`Trend::step`] and
    /// [`Trend::step_onward`] say them.
    fn advance(&mut self, numbers: &[u64]) -> (bool, bool) {
        if !self.seen || numbers.len() != self.last.len() {
            self.seen = true;
            self.last.clear();
            self.last.extend_from_slice(numbers);
            self.dirs.clear();
            self.dirs.resize(numbers.len(), 0);
            return (false, false);
        }
        let (mut progress, mut moved, mut onward) = (false, false, true);
        for ((old, new), dir) in self.last.iter().zip(numbers).zip(self.dirs.iter_mut()) {
            let d: i8 = match new.cmp(old) {
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
            };
            if d == 0 {
                continue;
            }
            moved = true;
            onward &= *dir == d;
            match *dir {
                0 => {
                    *dir = d;
                    progress = true;
                }
                x if x == d => progress = true,
                _ => *dir = 2,
            }
        }
        self.last.clear();
        self.last.extend_from_slice(numbers);
        (progress, moved && onward)
    }
}

/// A bounded set of token hashes of a call's arguments (object keys and string/number
/// leaves; strings split on non-alphanumeric characters; digit runs abstracted), for the
/// Jaccard similarity of two calls.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenSet {
    /// Distinct token hashes, ascending, at most [`MAX_TOKENS`].
    hashes: Vec<u32>,
}

impl TokenSet {
    /// The token set of `args`.
    ///
    /// ```
    /// use loopguard_core::shape::TokenSet;
    /// let a = TokenSet::of_args(&serde_json::json!({"command": "grep -rn parseValue src/main/java --include=*.java | head -20"}));
    /// let b = TokenSet::of_args(&serde_json::json!({"command": "grep -rn parseValue src/main/java --include=*.java | head -30"}));
    /// assert_eq!(a.similarity_permille(&b), 1000);
    /// let c = TokenSet::of_args(&serde_json::json!({"command": "ls -la"}));
    /// assert!(a.similarity_permille(&c) < 200);
    /// ```
    pub fn of_args(args: &Value) -> TokenSet {
        let mut hashes: Vec<u32> = Vec::with_capacity(32);
        let mut budget = MAX_ARGS_BYTES;
        // The masking buffer is allocated only for a token with a digit.
        tokens(args, &mut hashes, &mut budget, &mut String::new());
        TokenSet::of_hashes(hashes)
    }

    /// The token set of one text (as [`TokenSet::of_args`] reads a string argument).
    fn of_text(text: &str) -> TokenSet {
        TokenSet::of_hashes(word_hashes(text, MAX_ARGS_BYTES, ARGS_TOKENS))
    }

    /// The set of `hashes`: sorted, each once, the [`MAX_TOKENS`] smallest.
    fn of_hashes(mut hashes: Vec<u32>) -> TokenSet {
        hashes.sort_unstable();
        hashes.dedup();
        hashes.truncate(MAX_TOKENS);
        TokenSet { hashes }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The Jaccard similarity of the two sets, in thousandths (two empty sets: 1000).
    pub fn similarity_permille(&self, other: &TokenSet) -> u32 {
        let (a, b) = (&self.hashes, &other.hashes);
        if a.is_empty() && b.is_empty() {
            return 1000;
        }
        let (mut i, mut j, mut shared) = (0, 0, 0u32);
        while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
            match x.cmp(y) {
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        let union = (a.len() + b.len()) as u64 - u64::from(shared);
        if union == 0 {
            return 1000;
        }
        u32::try_from(u64::from(shared) * 1000 / union).unwrap_or(1000)
    }
}

/// [`tokens`] of one string.
fn string_tokens(s: &str, out: &mut Vec<u32>, budget: &mut usize, masked: &mut String, cap: usize) {
    let s = prefix_bytes(s, *budget);
    *budget = budget.saturating_sub(s.len());
    if s.is_ascii() {
        // One byte per character, alphanumeric exactly when its character is: the same
        // tokens, split without decoding. Each token's digits are counted as it is cut.
        let (mut start, mut digits) = (0, 0);
        for (i, &b) in s.as_bytes().iter().enumerate() {
            if b.is_ascii_digit() {
                digits += 1;
            } else if !is_word(b) {
                push_word(s.get(start..i).unwrap_or(""), digits, out, masked, cap);
                start = i + 1;
                digits = 0;
            }
        }
        push_word(s.get(start..).unwrap_or(""), digits, out, masked, cap);
    } else {
        for t in s.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            push_token(t, out, masked, cap);
        }
    }
}

/// The set of the words of `text` (its [`TokenSet`]: of its first [`MAX_ARGS_BYTES`], digit
/// runs and temp ids abstracted, at most [`MAX_TOKENS`] of them), order and repetition ignored: two texts that
/// say the same words in another order (a set printed in its hash order: `missing: numpy,
/// scipy` and `missing: scipy, numpy`) share it.
///
/// ```
/// use loopguard_core::shape::words_shape;
/// assert_eq!(words_shape("missing: numpy, scipy, pandas"), words_shape("missing: pandas, numpy, scipy"));
/// assert_eq!(words_shape("worker 25578 died"), words_shape("worker 25595 died"));
/// assert_ne!(words_shape("missing: numpy"), words_shape("missing: scipy"));
/// ```
pub fn words_shape(text: &str) -> Fingerprint {
    let set = TokenSet::of_text(text);
    let bytes: Vec<u8> = set.hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
    Fingerprint::of_shape(WORDS_SHAPE_SEED, &bytes)
}

/// The distinct words of `text`, as [`TokenSet`] reads the words of a string (cut at what is
/// neither a letter, a digit nor `_`; digit runs and temp ids abstracted), hashed: of its
/// first `max_bytes`, from its first `max_words` words (repeats included), ascending. Unlike
/// a [`TokenSet`], every word read is kept, so that two texts' sets can be counted apart.
///
/// ```
/// use loopguard_core::shape::word_hashes;
/// let a = word_hashes("The lamp burned 12 hours", 1024, 64);
/// assert_eq!(a.len(), 5);
/// // A digit run is one word, and order and repeats do not count.
/// assert_eq!(a, word_hashes("hours: The lamp burned 9 hours", 1024, 64));
/// // Only the first two words are read.
/// assert_eq!(word_hashes("one two three", 1024, 2).len(), 2);
/// ```
pub fn word_hashes(text: &str, max_bytes: usize, max_words: usize) -> Vec<u32> {
    let mut hashes: Vec<u32> = Vec::new();
    let mut budget = max_bytes;
    string_tokens(
        text,
        &mut hashes,
        &mut budget,
        &mut String::new(),
        max_words,
    );
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// One token's hash; `masked` is a scratch buffer reused from token to token.
fn push_token(t: &str, out: &mut Vec<u32>, masked: &mut String, cap: usize) {
    if t.bytes().all(is_word) {
        let digits = t.bytes().filter(u8::is_ascii_digit).count();
        push_word(t, digits, out, masked, cap);
    } else {
        push_masked(t, out, masked, cap);
    }
}

/// [`push_token`] of a token of ASCII letters, digits and `_`, `digits` of them digits
/// (counted as the token was cut).
fn push_word(t: &str, digits: usize, out: &mut Vec<u32>, masked: &mut String, cap: usize) {
    if t.is_empty() || out.len() >= cap {
        return;
    }
    // A word of ASCII letters and `_` masks to itself (no digit run, not a temp id), and a
    // run of digits (a JSON number is `0`) to `#`.
    if digits == 0 {
        out.push((hash_str(t) >> 32) as u32);
    } else if digits == t.len() {
        out.push((hash_str("#") >> 32) as u32);
    } else {
        push_masked(t, out, masked, cap);
    }
}

/// [`push_token`] of a token that masks to something else than itself or `#`.
fn push_masked(t: &str, out: &mut Vec<u32>, masked: &mut String, cap: usize) {
    if t.is_empty() || out.len() >= cap {
        return;
    }
    masked.clear();
    mask_into(t, masked, &mut |_| {});
    out.push((hash_str(masked) >> 32) as u32);
}

fn tokens(v: &Value, out: &mut Vec<u32>, budget: &mut usize, masked: &mut String) {
    match v {
        Value::String(s) => string_tokens(s, out, budget, masked, ARGS_TOKENS),
        Value::Number(_) => push_token("0", out, masked, ARGS_TOKENS),
        Value::Bool(b) => push_token(if *b { "true" } else { "false" }, out, masked, ARGS_TOKENS),
        Value::Array(a) => {
            for x in a {
                tokens(x, out, budget, masked);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                push_token(k, out, masked, ARGS_TOKENS);
                tokens(x, out, budget, masked);
            }
        }
        Value::Null => {}
    }
}

/// Prefixes that, at the start of a result's first line, make it an error message.
const ERROR_PREFIXES: &[&str] = &[
    "ERROR",
    "Error:",
    "error:",
    "error[",
    "fatal:",
    "FATAL",
    "E: ",
    "Traceback (most recent call last)",
    "Usage:",
    "usage:",
    "Exception in thread",
    "panic:",
];

/// Phrases that, within a result's first [`ERROR_SCAN_CHARS`] characters, are an editor's or
/// a linter's rejection of the call (the whole result is the error message).
const REJECTIONS: &[&str] = &[
    "No replacement was performed",
    "Your proposed edit has introduced new syntax error",
    "Your changes have NOT been applied",
    "Your edit was not applied",
    "did not appear verbatim",
    "is not recognized as an internal or external command",
];

/// Diagnostic phrases of a `program: …: message` first line, or of a short result.
const DIAGNOSTICS: &[&str] = &[
    "command not found",
    "No such file or directory",
    "not found",
    "does not exist",
    "Permission denied",
    "permission denied",
    "cannot ",
    "Cannot ",
    "can't ",
    "Unable to",
    "unable to",
    "Is a directory",
    "Not a directory",
    "failed",
    "Invalid",
    "invalid",
];

/// Diagnostics that say reading a file failed (for calls that read a file: the content of
/// the file itself is never the error).
const READ_FAILURES: &[&str] = &[
    "No such file or directory",
    "not found",
    "does not exist",
    "Permission denied",
    "Is a directory",
    "Not a directory",
    "command not found",
];

/// The tables of [`DIAGNOSTICS`], [`REJECTIONS`] and [`READ_FAILURES`].
const DIAGNOSTIC_NEEDLES: Needles<'static> = Needles::new(DIAGNOSTICS);
const REJECTION_NEEDLES: Needles<'static> = Needles::new(REJECTIONS);
const READ_FAILURE_NEEDLES: Needles<'static> = Needles::new(READ_FAILURES);

/// A result of at most this many non-empty lines may be an error by a diagnostic phrase on
/// its first line alone.
const SHORT_LINES: usize = 3;
const SHORT_FIRST_LINE: usize = 200;

fn first_line(head: &str) -> &str {
    head.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// `java.lang.IllegalStateException: …`, `ValueError: …`: an exception named as the first
/// word of the line.
fn starts_with_exception(line: &str) -> bool {
    let name_len = line
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'.' || *b == b'_' || *b == b'$')
        .count();
    let name = line.get(..name_len).unwrap_or("");
    let rest = line.get(name_len..).unwrap_or("");
    let ends = rest.is_empty() || rest.starts_with(':') || rest.starts_with(' ');
    ends && (name.ends_with("Exception") || name.ends_with("Error"))
}

/// `bash: line 1: foo: command not found`, `ls: cannot access 'x': No such file or directory`:
/// a program's name (no spaces) before the first `: `, and a diagnostic after it.
fn program_diagnostic(line: &str, phrases: &Needles<'_>) -> bool {
    let Some((prog, rest)) = line.split_once(": ") else {
        return false;
    };
    !prog.is_empty() && !prog.contains(' ') && phrases.find_in(rest)
}

/// Whether a result *is* an error message, from its content alone: its first non-empty line
/// starts like one (`ERROR`, `error:`, `fatal:`, `Usage:`, a traceback, `SomeException: …`),
/// or is a program's diagnostic (`bash: foo: command not found`); or its first
/// [`ERROR_SCAN_CHARS`] characters hold an editor's or linter's rejection ("No replacement
/// was performed", "Your proposed edit has introduced new syntax error(s)"); or it is short
/// (at most 3 non-empty lines) and its first line carries a diagnostic (`File Foo.java not
/// found`). A listing or a log whose lines merely contain an error word is not an error.
///
/// ```
/// use loopguard_core::shape::looks_like_error;
/// assert!(looks_like_error("bash: line 1: mvn: command not found"));
/// assert!(looks_like_error("ERROR: Could not find artifact com.fasterxml:jackson"));
/// assert!(looks_like_error("File src/main/java/Foo.java not found"));
/// assert!(looks_like_error("No replacement was performed, old_str `foo()` did not appear verbatim."));
/// assert!(!looks_like_error("Found 2 matches for \"MismatchedInputException\" in /repo:\n/repo/src/main/java/com/fasterxml/jackson/databind/exc/MismatchedInputException.java\n/repo/src/test/java/MismatchedInputExceptionTest.java"));
/// assert!(!looks_like_error("[INFO] Building jackson-databind\n[INFO] 2 errors were fixed\n[INFO] BUILD SUCCESS"));
/// ```
pub fn looks_like_error(content: &str) -> bool {
    let content = output_body(content);
    let head = prefix_chars(content, ERROR_SCAN_CHARS);
    let first = first_line(head);
    if first.is_empty() {
        return false;
    }
    if ERROR_PREFIXES.iter().any(|p| first.starts_with(p)) || starts_with_exception(first) {
        return true;
    }
    // Both diagnostic rules need a diagnostic phrase in the first line (a program's
    // diagnostic has it after the line's first `: `): one scan of the line rules both out
    // for most results, before the line is split or the content's lines counted.
    let diagnostic = DIAGNOSTIC_NEEDLES.find_in(first);
    if diagnostic && program_diagnostic(first, &DIAGNOSTIC_NEEDLES) {
        return true;
    }
    if REJECTION_NEEDLES.find_in(head) {
        return true;
    }
    diagnostic && short(content, first)
}

/// The bytes of a failed tool's output [`error_headline`] reads: its first 4 KiB, then its
/// last 2 KiB (a test runner's summary comes last).
const HEADLINE_HEAD: usize = 4096;
const HEADLINE_TAIL: usize = 2048;

/// The line of a failed tool's output that says what failed, to quote in a message: the first
/// line that names an exception (`ValueError: …`, pytest's `E   AssertionError: …`), else the
/// first that opens as an error or a program's diagnostic does (`error[E0308]: …`, `FAILED
/// tests/…`, `bash: foo: command not found`), else the first line holding a letter or a digit
/// (a rule of `=` says nothing), else the first non-empty line; read in the output's body
/// ([`output_body`]), its first 4 KiB and last 2 KiB, and trimmed.
///
/// ```
/// use loopguard_core::shape::error_headline;
/// let pytest = "==== test session starts ====\ncollected 2 items\n\n\
///               tests/test_a.py .F\n\n==== FAILURES ====\n\
///               E       AssertionError: assert 1 == 2\n\n\
///               FAILED tests/test_a.py::test_b - AssertionError: assert 1 == 2";
/// assert_eq!(error_headline(pytest), "E       AssertionError: assert 1 == 2");
/// assert_eq!(
///     error_headline("Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'x'"),
///     "KeyError: 'x'"
/// );
/// assert_eq!(error_headline("====\nerror[E0308]: mismatched types\n"), "error[E0308]: mismatched types");
/// assert_eq!(error_headline("-----\n   compiling 3 files\n"), "compiling 3 files");
/// ```
pub fn error_headline(content: &str) -> &str {
    let body = output_body(content);
    let head = prefix_bytes(body, HEADLINE_HEAD);
    let tail = suffix_bytes(body, HEADLINE_TAIL.min(body.len() - head.len()));
    let lines = || {
        head.lines()
            .chain(tail.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
    };
    let exception = |l: &str| {
        starts_with_exception(l)
            || l.strip_prefix("E ")
                .is_some_and(|rest| starts_with_exception(rest.trim_start()))
    };
    let opens_as_error = |l: &str| {
        ERROR_PREFIXES.iter().any(|p| l.starts_with(p))
            || l.starts_with("FAILED")
            || (DIAGNOSTIC_NEEDLES.find_in(l) && program_diagnostic(l, &DIAGNOSTIC_NEEDLES))
    };
    lines()
        .find(|l| exception(l))
        .or_else(|| lines().find(|l| opens_as_error(l) && !l.starts_with("Traceback")))
        .or_else(|| lines().find(|l| l.chars().any(char::is_alphanumeric)))
        .or_else(|| lines().next())
        .unwrap_or("")
}

/// `haystack.contains(needle)` for the short texts the classifiers read: no searcher to
/// build, a scan for the needle's first byte and a comparison at each hit.
fn has(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return true;
    };
    let Some(last) = h.len().checked_sub(n.len()) else {
        return false;
    };
    let mut i = 0;
    while i <= last {
        let Some(k) = h
            .get(i..=last)
            .and_then(|w| w.iter().position(|&b| b == first))
        else {
            return false;
        };
        i += k;
        if h.get(i + 1..i + n.len()) == Some(rest) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether `haystack` contains one of `needles` ([`Needles::find_in`] with the tables built
/// here; the classifiers' own lists have theirs built at compile time).
#[cfg(test)]
fn has_any(haystack: &str, needles: &[&str]) -> bool {
    Needles::new(needles).find_in(haystack)
}

/// A list of phrases and the tables [`Needles::find_in`] filters places with: the phrases'
/// first bytes, one bit each, and their first two bytes, one of 256 bits each (bits shared
/// by other pairs only let more places through to the comparison).
struct Needles<'a> {
    list: &'a [&'a str],
    firsts: [u64; 4],
    pairs: [u64; 4],
    /// Some phrase is one byte long (only its first byte filters).
    short_needle: bool,
    /// Some phrase is empty (every text contains it).
    empty: bool,
}

impl<'a> Needles<'a> {
    /// The tables of `list` (a `const fn`: the classifiers' lists are built once, at compile
    /// time, not at every call).
    const fn new(list: &'a [&'a str]) -> Needles<'a> {
        let mut n = Needles {
            list,
            firsts: [0; 4],
            pairs: [0; 4],
            short_needle: false,
            empty: false,
        };
        let mut i = 0;
        while i < list.len() {
            match list[i].as_bytes() {
                [] => n.empty = true,
                [b] => {
                    n.firsts[(*b >> 6) as usize] |= 1 << (*b & 63);
                    n.short_needle = true;
                }
                [b, c, ..] => {
                    n.firsts[(*b >> 6) as usize] |= 1 << (*b & 63);
                    let p = pair_bit(*b, *c);
                    n.pairs[p >> 6] |= 1 << (p & 63);
                }
            }
            i += 1;
        }
        n
    }

    /// Whether `haystack` contains one of the phrases, in one pass over it: a phrase is
    /// compared only where the text has its first byte and, when every phrase has two bytes
    /// or more, where the text's two bytes there hash like a phrase's first two
    /// ([`pair_bit`]); and then only a phrase that starts with that byte.
    fn find_in(&self, haystack: &str) -> bool {
        self.find_where(haystack, |_, _| true)
    }

    /// Whether `haystack` contains one of the phrases at a place `accept(start, phrase)`
    /// takes ([`Needles::find_in`] with a test of each place found).
    #[inline]
    fn find_where(&self, haystack: &str, accept: impl Fn(usize, &str) -> bool) -> bool {
        if self.empty {
            return true;
        }
        let h = haystack.as_bytes();
        let mut i = 0;
        // Places whose byte starts no phrase are passed over in a tight loop of table
        // look-ups, without looking at the byte after.
        while let Some(k) = h.get(i..).and_then(|r| {
            r.iter()
                .position(|&b| has_bit(&self.firsts, usize::from(b)))
        }) {
            i += k;
            let rest = h.get(i..).unwrap_or_default();
            let candidate = match rest {
                [b, c, ..] => self.short_needle || has_bit(&self.pairs, pair_bit(*b, *c)),
                // One byte left: only a one-byte phrase can start here.
                _ => self.short_needle,
            };
            if candidate
                && self.list.iter().any(|n| {
                    let b = n.as_bytes();
                    b.first() == rest.first() && rest.starts_with(b) && accept(i, n)
                })
            {
                return true;
            }
            i += 1;
        }
        false
    }
}

/// The bit of a [`Needles`] pair table for the two bytes `b`, `c`.
const fn pair_bit(b: u8, c: u8) -> usize {
    ((b as usize).wrapping_mul(31) ^ c as usize) & 255
}

/// Bit `i` (taken modulo 256) of a 256-bit set. The word's index is below 4 by its mask:
/// no check is needed, which keeps [`Needles::find_in`]'s first-byte loop tight.
#[inline]
fn has_bit(bits: &[u64; 4], i: usize) -> bool {
    bits[(i >> 6) & 3] & (1 << (i & 63)) != 0
}

/// Whether `content`, whose first non-empty line (within [`ERROR_SCAN_CHARS`]) is `first`,
/// is short: a first line of at most [`SHORT_FIRST_LINE`] characters, at most
/// [`SHORT_LINES`] non-empty lines.
fn short(content: &str, first: &str) -> bool {
    first.chars().count() <= SHORT_FIRST_LINE
        && content
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(SHORT_LINES + 1)
            .count()
            <= SHORT_LINES
}

fn prefix_chars(s: &str, max: usize) -> &str {
    if s.len() <= max {
        // At most `max` bytes, so at most `max` characters.
        return s;
    }
    match s.char_indices().nth(max) {
        Some((i, _)) => s.get(..i).unwrap_or(s),
        None => s,
    }
}

/// The value of `key` in an object (`None` for another JSON type). Arguments are small
/// objects: a scan of their entries is cheaper than hashing the key.
pub fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    let m = v.as_object()?;
    if m.len() <= 8 {
        m.iter().find(|(k, _)| k.as_str() == key).map(|(_, x)| x)
    } else {
        m.get(key)
    }
}

/// A shell call's command: the `command` string argument, else the `cmd` one.
///
/// ```
/// use loopguard_core::shape::command;
/// use serde_json::json;
/// assert_eq!(command(&json!({"command": "ls -la"})), Some("ls -la"));
/// assert_eq!(command(&json!({"command": ["ls"], "cmd": "pwd"})), Some("pwd"));
/// assert_eq!(command(&json!({"path": "a.rs"})), None);
/// ```
pub fn command(args: &Value) -> Option<&str> {
    field(args, "command")
        .and_then(Value::as_str)
        .or_else(|| field(args, "cmd").and_then(Value::as_str))
}

/// Programs whose output is a file's (or a log's) own text.
const READERS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "sed", "awk", "grep", "rg", "nl", "bat", "view", "open",
    "read", "type",
];

/// What [`reads_file`], [`is_search`] and [`program`] say of one call, read from one pass
/// over its command (for a detector that needs all three of every call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandFacts<'a> {
    /// [`reads_file`].
    pub reads: bool,
    /// [`is_search`].
    pub search: bool,
    /// [`program`].
    pub program: Option<&'a str>,
}

/// [`reads_file`], [`is_search`] and [`program`] of one call: the command is looked up, and
/// its first line cut and split into pipeline segments, once for all three.
///
/// ```
/// use loopguard_core::shape::command_facts;
/// let args = serde_json::json!({"command": "cd /repo && grep -rn x src"});
/// let f = command_facts("bash", &args);
/// assert!(f.reads && f.search);
/// assert_eq!(f.program, Some("grep"));
/// ```
pub fn command_facts<'a>(tool: &str, args: &'a Value) -> CommandFacts<'a> {
    let Some(cmd) = command(args) else {
        // No command: only the tool's name can make the call a reader.
        return CommandFacts {
            reads: reader_tool(tool),
            search: false,
            program: None,
        };
    };
    let line = prefix_bytes(cmd.lines().next().unwrap_or(""), 500);
    let last = line.rsplit(['|', ';', '&']).next().unwrap_or("");
    let mut words = last.split_whitespace();
    let first = words.next();
    let base = first.map(|w| w.rsplit('/').next().unwrap_or(w));
    // An editor's `view` command is a reader too: `view` is one of [`READERS`].
    let reads = reader_tool(tool) || base.is_some_and(|b| READERS.contains(&b));
    let search = match first {
        Some("git") => words.next() == Some("grep"),
        Some(_) => base.is_some_and(|b| SEARCHERS.contains(&b)),
        None => false,
    };
    // One word is an editor's sub-command (`view`, `insert`), or a bare program.
    let program = line.split_whitespace().nth(1).and(base);
    CommandFacts {
        reads,
        search,
        program,
    }
}

/// [`reads_file`]'s rule on the tool's name alone.
fn reader_tool(tool: &str) -> bool {
    // The tool name compared without case (the patterns are lower-case ASCII).
    let t = tool.as_bytes();
    let starts = |p: &str| {
        t.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p.as_bytes()))
    };
    let ends = |p: &str| {
        t.len()
            .checked_sub(p.len())
            .and_then(|i| t.get(i..))
            .is_some_and(|h| h.eq_ignore_ascii_case(p.as_bytes()))
    };
    READERS.iter().any(|r| tool.eq_ignore_ascii_case(r))
        || starts("read")
        || ends("_read")
        || starts("view")
        || tool.eq_ignore_ascii_case("open_file")
}

/// Whether a call reads a file's text: a tool named like a reader (`read`, `view`, `open`,
/// `read_file`, `cat`), an editor `view` command, or a shell command whose first word is a
/// reader (`cat build.log`, `tail -50 x.log`, `grep -n ERROR x.log`).
pub fn reads_file(tool: &str, args: &Value) -> bool {
    command_facts(tool, args).reads
}

/// The program a shell call runs: the first word of its command's last pipeline segment
/// (`cd /repo && mvn -q test` → `mvn`), without its directory; `None` for a call without a
/// `command` / `cmd` string of at least two words (an editor's `"command": "insert"` names a
/// sub-command, not a program).
pub fn program(args: &Value) -> Option<&str> {
    command_facts("", args).program
}

/// Programs whose exit status 1 means "no match", not an error.
const SEARCHERS: &[&str] = &["grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep"];

/// Whether a call is a search whose exit status 1 only means it found nothing: a shell
/// command whose last pipeline segment runs `grep`, `rg`, `ag`, `ack` (or `git grep`).
pub fn is_search(args: &Value) -> bool {
    command_facts("", args).search
}

/// The output a host's wrapper carries: `content` without the lines the host adds around a
/// command's output, so that the output reads the same whichever host ran it.
///
/// - Codex's header: `Exit code: N`, `Wall time: T seconds`, `Total output lines: N`, then
///   `Output:`; only when the content opens with `Exit code: `.
/// - Gemini CLI's shell report: the `Output:` (or `Stdout:`/`Stderr:`) part between
///   `Command:`/`Directory:` and `Error:`/`Exit Code:`/`Signal:`/`Background PIDs:`/
///   `Process Group PGID:`, `(empty)` being nothing.
/// - OpenHands' footer: trailing lines `[The command completed with exit code N.]`,
///   `[Current working directory: …]`, `[Python interpreter: …]`, `[Command finished …]`,
///   `[Command timed out …]`.
///
/// ```
/// use loopguard_core::shape::output_body;
/// assert_eq!(output_body("Exit code: 1\nWall time: 0.4 seconds\nOutput:\nerror: no such file"), "error: no such file");
/// assert_eq!(output_body("ok\n[The command completed with exit code 0.]\n[Current working directory: /w]"), "ok");
/// assert_eq!(output_body("Exit code of the last step: 3"), "Exit code of the last step: 3");
/// let gemini = "Command: ls x\nDirectory: (root)\nOutput: ls: cannot access 'x'\nError: (none)\nExit Code: 2\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4821";
/// assert_eq!(output_body(gemini), "ls: cannot access 'x'");
/// ```
pub fn output_body(content: &str) -> &str {
    if let Some(body) = gemini_output(content) {
        return body;
    }
    let mut body = content;
    if body.starts_with(CODEX_HEADER[0]) {
        let mut rest = body;
        loop {
            let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
            let line = line.trim_end_matches('\r');
            if line == "Output:" {
                body = after;
                break;
            }
            if !CODEX_HEADER.iter().any(|h| line.starts_with(h)) || after.is_empty() {
                break;
            }
            rest = after;
        }
    }
    // OpenHands' footer lines, from the end (at most a few; each step drops one line). Each
    // ends in `]`: most bodies are passed over at their last byte.
    let mut end = body.trim_end().len();
    while body[..end].ends_with(']') {
        let start = body[..end].rfind('\n').map_or(0, |i| i + 1);
        let line = body[start..end].trim();
        if !(line.ends_with(']') && OPENHANDS_FOOTER.iter().any(|f| line.starts_with(f))) {
            break;
        }
        end = body[..start].trim_end().len();
        if start == 0 {
            break;
        }
    }
    &body[..end]
}

/// The output in Gemini CLI's shell report: `Command: …`, `Directory: …`, then `Output: …`
/// (or `Stdout: …` and `Stderr: …`), then `Error: …`, `Exit Code: …`, `Signal: …`,
/// `Background PIDs: …`, `Process Group PGID: …`. A part that reads `(empty)` is nothing;
/// `None` when `content` is not such a report.
fn gemini_output(content: &str) -> Option<&str> {
    if !content.starts_with("Command: ") {
        return None;
    }
    let end = content.rfind("\nExit Code: ")?;
    let end = content[..end].rfind("\nError: ")?;
    let (label, start) = ["\nOutput: ", "\nStdout: "]
        .iter()
        .filter_map(|l| content[..end].find(l).map(|i| (*l, i)))
        .min_by_key(|(_, i)| *i)?;
    let start = start + label.len();
    if let Some(err) = content[start..end].rfind("\nStderr: ").map(|i| start + i) {
        let (out, errs) = (
            &content[start..err],
            &content[err + "\nStderr: ".len()..end],
        );
        return Some(match (says_nothing(out), says_nothing(errs)) {
            (true, true) => "",
            (true, false) => errs,
            (false, true) => out,
            (false, false) => &content[start..end],
        });
    }
    let out = &content[start..end];
    Some(if says_nothing(out) { "" } else { out })
}

/// The lines of Codex's header over a command's output (each opens its line).
const CODEX_HEADER: &[&str] = &["Exit code: ", "Wall time: ", "Total output lines: "];

/// The lines OpenHands appends to a command's output (each opens its line, which ends in `]`).
const OPENHANDS_FOOTER: &[&str] = &[
    "[The command completed with exit code",
    "[The command has no new output",
    "[Current working directory:",
    "[Python interpreter:",
    "[Command finished",
    "[Command timed out",
];

/// What hosts answer for a command that printed nothing (compared trimmed, ignoring case).
const NOTHING_PRINTED: &[&str] = &[
    "(no output)",
    "<no output>",
    "no output",
    "(empty)",
    "(no content)",
    "tool ran without output or errors",
    "your command ran successfully and did not produce any output.",
];

/// Whether a result says nothing: no text but whitespace once the host's wrapper is set
/// aside ([`output_body`]), or only a host's note that nothing was printed (Pi's
/// `(no output)`, SWE-agent's "Your command ran successfully and did not produce any
/// output.").
///
/// ```
/// use loopguard_core::shape::is_silent;
/// assert!(is_silent("  \n"));
/// assert!(is_silent("(no output)"));
/// assert!(is_silent("Exit code: 0\nWall time: 0.1 seconds\nOutput:\n"));
/// assert!(is_silent("\n[The command completed with exit code 0.]\n[Current working directory: /workspace]"));
/// assert!(!is_silent("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok"));
/// assert!(!is_silent("no output was expected, but got: 3 lines"));
/// ```
pub fn is_silent(content: &str) -> bool {
    says_nothing(output_body(content))
}

/// Whether an output (a host's wrapper already set aside) is nothing: whitespace, or only a
/// host's note that nothing was printed ([`NOTHING_PRINTED`]).
fn says_nothing(output: &str) -> bool {
    let t = output.trim();
    t.is_empty() || (t.len() <= 64 && NOTHING_PRINTED.iter().any(|p| t.eq_ignore_ascii_case(p)))
}

/// The longest result (once the host's wrapper is set aside) [`is_transient_failure`] reads:
/// a longer output that mentions a rate limit is an output, not the failure.
const TRANSIENT_MAX_BYTES: usize = 600;

/// What a transient failure of something outside the agent says (compared in lower case).
const TRANSIENT_PHRASES: &[&str] = &[
    "too many requests",
    "rate limit",
    "rate-limit",
    "ratelimit",
    "quota exceeded",
    "resource_exhausted",
    "overloaded",
    "service unavailable",
    "bad gateway",
    "gateway timeout",
    "econnreset",
    "connection reset by peer",
    "etimedout",
    "temporarily unavailable",
    "try again later",
    "retry after",
    "retry-after",
];

/// Whether a result is a transient failure of something outside the agent: a rate limit
/// (`429 Too Many Requests`, `rate limit exceeded`, a quota), an overloaded or unavailable
/// service (`503 Service Unavailable`, `overloaded`), a gateway error (`502 Bad Gateway`,
/// `504 Gateway Timeout`) or a dropped connection (`ECONNRESET`, `Connection reset by peer`).
/// The same call can succeed later with nothing changed: retrying it is waiting, which must
/// be bounded, not a loop to stop at once. Only a short result counts (at most 600 bytes once
/// the host's wrapper is set aside, [`output_body`]).
///
/// ```
/// use loopguard_core::shape::is_transient_failure;
/// assert!(is_transient_failure("Error: HTTP 429 Too Many Requests: API rate limit exceeded. Retry after 60 seconds."));
/// assert!(is_transient_failure("503 Service Unavailable"));
/// assert!(is_transient_failure("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"));
/// assert!(!is_transient_failure("error[E0425]: cannot find value `x` in this scope"));
/// assert!(!is_transient_failure(&format!("{}\nnote: the client handles rate limits", "test output\n".repeat(80))));
/// assert!(!is_transient_failure("OSError: [Errno 122] Disk quota exceeded: '/home/dev/out.bin'"));
/// assert!(!is_transient_failure("error: call of overloaded 'area(int)' is ambiguous"));
/// assert!(!is_transient_failure("FAILED tests/test_ratelimit.py::test_burst - assert 3 == 2"));
/// ```
pub fn is_transient_failure(content: &str) -> bool {
    let body = output_body(content).trim();
    if body.is_empty() || body.len() > TRANSIENT_MAX_BYTES {
        return false;
    }
    // Lower-cased on the stack (ASCII case only, so the bytes stay UTF-8), then one pass.
    let mut buf = [0u8; TRANSIENT_MAX_BYTES];
    let lower = &mut buf[..body.len()];
    for (l, b) in lower.iter_mut().zip(body.bytes()) {
        *l = b.to_ascii_lowercase();
    }
    std::str::from_utf8(lower)
        .is_ok_and(|l| TRANSIENT_NEEDLES.find_where(l, |at, phrase| transient_at(l, at, phrase)))
}

/// Whether the transient phrase `phrase` found at `at` in the lower-cased `text` says so: it
/// is a word of its own, not part of a name (`test_ratelimit.py`, `src/overloaded/`), and
/// not a failure of this machine or of the code that reads like one: a disk quota exceeded
/// (`EDQUOT`) does not pass by waiting, nor does a compiler's `call of overloaded 'f(int)'
/// is ambiguous`.
fn transient_at(text: &str, at: usize, phrase: &str) -> bool {
    let before = text.get(..at).unwrap_or_default();
    let after = text.get(at + phrase.len()..).unwrap_or_default();
    let named = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'.' | b'-');
    // The word may go on as a word does (`rate limits`, `rate limited`), not as a name.
    let rest = after.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    let ending = after.get(..after.len() - rest.len()).unwrap_or_default();
    if before.bytes().next_back().is_some_and(named)
        || !matches!(ending, "" | "s" | "d" | "ed" | "ing")
        || rest.starts_with('/')
        || (rest.starts_with('.')
            && rest
                .as_bytes()
                .get(1)
                .is_some_and(u8::is_ascii_alphanumeric))
        || (rest.starts_with('_')
            && !["_error", "_exceeded", "_exhausted"]
                .iter()
                .any(|w| rest.starts_with(w)))
    {
        return false;
    }
    let (before, after) = (before.trim_end(), after.trim_start());
    !NOT_TRANSIENT.iter().any(|(p, ahead, behind)| {
        *p == phrase
            && (ahead.iter().any(|w| before.ends_with(w))
                || behind.iter().any(|w| after.starts_with(w)))
    })
}

/// Transient phrases that say something else next to some words: (the phrase, words right
/// before it, words right after it). A disk quota exceeded (`EDQUOT`) does not pass by
/// waiting, nor does a compiler's `call of overloaded 'area(int)' is ambiguous`.
const NOT_TRANSIENT: &[(&str, &[&str], &[&str])] = &[
    ("quota exceeded", &["disk"], &[]),
    (
        "overloaded",
        &["call of", "ambiguous"],
        &["function", "method", "operator", "'", "‘", "`", "\""],
    ),
];

const TRANSIENT_NEEDLES: Needles<'static> = Needles::new(TRANSIENT_PHRASES);

/// Whether the result of a search ([`is_search`]) says only that nothing matched: no output,
/// or only the exit status 1 (`Command exited with code 1`, `<returncode>1</returncode>`).
pub fn is_no_match(content: &str) -> bool {
    let t = output_body(content).trim();
    if t.is_empty() {
        return true;
    }
    if t.len() > 200 {
        return false;
    }
    let squeezed: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    let lower = squeezed.to_ascii_lowercase();
    [
        "exitedwithcode1",
        "exitcode1",
        "exitstatus1",
        "<returncode>1</returncode>",
    ]
    .iter()
    .any(|p| lower.ends_with(p) || lower.starts_with(p))
        && !lower.contains("error:")
}

/// What a search tool answers when it found nothing (compared in lower case, on the first
/// line): SWE-agent's `search_dir`, `search_file` and `find_file` (`No matches found for "X"
/// in /repo`), Claude Code's `Grep` and `Glob` and Gemini CLI's search tools (`No files
/// found`, `No matches found`), Cline's `search_files` (`Found 0 results.`), git's pathspec
/// (`did not match any file(s) known to git`).
const NOTHING_FOUND: &[&str] = &[
    "no matches found",
    "no match found",
    "no results",
    "no files found",
    "no file found",
    "found 0 result",
    "found 0 match",
    "found 0 file",
    "0 results found",
    "0 matches found",
    "did not match any file",
];

/// The longest answer [`says_nothing_found`] reads: a longer one says something.
const NOTHING_FOUND_MAX_BYTES: usize = 300;

/// Whether a search tool's answer says only that it found nothing: a short answer (at most
/// three lines and 300 bytes once the host's wrapper is set aside, [`output_body`]) whose
/// first line says so (`NOTHING_FOUND`). A silent answer is [`is_silent`]'s to read (an
/// edit answers nothing too), and a `grep` that exits with status 1 [`is_no_match`]'s.
///
/// ```
/// use loopguard_core::shape::says_nothing_found;
/// assert!(says_nothing_found("No matches found for \"parse_header_value\" in /repo"));
/// assert!(says_nothing_found("No files found"));
/// assert!(says_nothing_found("Found 0 results."));
/// assert!(says_nothing_found("No results"));
/// assert!(says_nothing_found("0 matches found"));
/// assert!(!says_nothing_found("Found 10 results.\n\nsrc/a.py\n│----"));
/// assert!(!says_nothing_found("10 matches found in 3 files"));
/// assert!(says_nothing_found("error: pathspec 'x.py' did not match any file(s) known to git"));
/// assert!(!says_nothing_found("Found 3 matches for \"parse\" in /repo:\n/repo/a.py (3 matches)\nEnd of matches"));
/// assert!(!says_nothing_found("test_empty_dir ... ok\nNo matches found is the expected message\nok\nok"));
/// ```
pub fn says_nothing_found(content: &str) -> bool {
    // Longer than any host's wrapper around a short answer; or no phrase's word (each
    // says `match`, `found` or `result`, in some case) in it.
    if content.len() > 4 * NOTHING_FOUND_MAX_BYTES
        || !["atch", "ound", "sult", "ATCH", "OUND", "SULT"]
            .iter()
            .any(|w| content.contains(w))
    {
        return false;
    }
    let body = output_body(content).trim();
    if body.is_empty() || body.len() > NOTHING_FOUND_MAX_BYTES || body.lines().nth(3).is_some() {
        return false;
    }
    // The first line lower-cased on the stack (ASCII case only, so the bytes stay UTF-8).
    let first = body.lines().next().unwrap_or_default();
    let mut buf = [0u8; NOTHING_FOUND_MAX_BYTES];
    let lower = buf.get_mut(..first.len()).unwrap_or_default();
    for (l, b) in lower.iter_mut().zip(first.bytes()) {
        *l = b.to_ascii_lowercase();
    }
    // A phrase that opens with its count (`0 results found`) is not the end of another
    // count (`10 results found`).
    let says = |l: &str, p: &str| {
        l.match_indices(p).any(|(at, _)| {
            !p.starts_with(|c: char| c.is_ascii_digit())
                || !l
                    .as_bytes()
                    .get(..at)
                    .and_then(<[u8]>::last)
                    .is_some_and(u8::is_ascii_digit)
        })
    };
    std::str::from_utf8(lower).is_ok_and(|l| NOTHING_FOUND.iter().any(|p| says(l, p)))
}

/// Whether a tool result is a failure: the host flagged it, or its content is an error
/// message ([`looks_like_error`]). For a call that reads a file ([`reads_file`]) only a
/// failure to read counts (`No such file or directory`, `not found` on a short first line):
/// the text of a log being read is never the call's error.
///
/// A search that found nothing (`grep` exiting with status 1, [`is_no_match`]) is no
/// failure, flagged or not.
pub fn is_failure(tool: &str, args: Option<&Value>, content: &str, is_error: bool) -> bool {
    if args.is_some_and(is_search) && is_no_match(content) {
        return false;
    }
    if is_error {
        return true;
    }
    match args {
        Some(a) if reads_file(tool, a) => is_read_failure(content),
        _ => looks_like_error(content),
    }
}

/// Whether the result of a call that reads a file says the read itself failed: a program's
/// diagnostic (`cat: x: No such file or directory`) or a short result whose first line says
/// `not found`, `does not exist`, `Permission denied`, `Is a directory`. The file's own text
/// (a log full of `ERROR` lines) never is.
pub fn is_read_failure(content: &str) -> bool {
    let content = output_body(content);
    let head = prefix_chars(content, ERROR_SCAN_CHARS);
    let first = first_line(head);
    // Both rules need a read failure's phrase in the first line (a program's diagnostic has
    // it after the line's first `: `): one scan of the line rules both out for most results.
    READ_FAILURE_NEEDLES.find_in(first)
        && (program_diagnostic(first, &READ_FAILURE_NEEDLES) || short(content, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// A long log's summary comes last: the headline is read there too, and the cut between
    /// the head and the tail falls on character boundaries.
    #[test]
    fn the_headline_of_a_long_log_is_found_in_its_tail() {
        let log = format!(
            "===== test session starts =====\n{}\n== short test summary ==\nFAILED tests/t.py::test_é - assert 1 == 2",
            "tests/t.py::test_ok PASSED ünïcode\n".repeat(400)
        );
        assert!(log.len() > HEADLINE_HEAD + HEADLINE_TAIL);
        assert_eq!(
            error_headline(&log),
            "FAILED tests/t.py::test_é - assert 1 == 2"
        );
        // Between the head and the tail: not read, the banner's words stand in.
        let middle = format!(
            "=====\nstarting\n{}KeyError: 'x'\n{}",
            "é\n".repeat(3000),
            "done\n".repeat(600)
        );
        assert_eq!(error_headline(&middle), "starting");
        for cut in 0..8 {
            let t = format!(
                "{}{}",
                "é".repeat(HEADLINE_HEAD / 2 + cut),
                "\nValueError: bad"
            );
            assert_eq!(error_headline(&t), "ValueError: bad");
        }
        assert_eq!(error_headline(""), "");
        assert_eq!(error_headline("\n  \n"), "");
    }

    #[test]
    fn every_exception_names_a_transient_phrase() {
        for (phrase, _, _) in NOT_TRANSIENT {
            assert!(TRANSIENT_PHRASES.contains(phrase), "{phrase}");
        }
    }

    #[test]
    fn a_restarted_trend_is_a_new_one() {
        let mut t = Trend::new();
        t.step(&[1, 5]);
        assert!(t.step(&[2, 5]));
        t.restart();
        assert_eq!(t, Trend::new());
        assert!(
            !t.step(&[9]),
            "the first step after a restart is no progress"
        );
        assert!(t.step(&[10]));
    }

    #[test]
    fn field_reads_small_and_large_objects_alike() {
        let small = json!({"a": 1, "command": "ls"});
        let large: Value = (0..20)
            .map(|i| (format!("k{i}"), json!(i)))
            .collect::<serde_json::Map<_, _>>()
            .into();
        assert_eq!(field(&small, "command"), Some(&json!("ls")));
        assert_eq!(field(&small, "missing"), None);
        assert_eq!(field(&large, "k17"), Some(&json!(17)));
        assert_eq!(field(&large, "k20"), None);
        assert_eq!(field(&json!(["command"]), "command"), None);
    }

    #[test]
    fn echo_lines_are_removed_whatever_their_line_numbers() {
        let rejection = |new_str: &str, at: usize| {
            let args = json!({"command": "str_replace", "path": "/repo/A.java",
                "old_str": "int a = 1;", "new_str": new_str});
            let echoed: String = new_str
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{}:{l}\n", at + i))
                .collect();
            let content =
                format!("ERRORS:\n- E999\n{echoed}[File: /repo/A.java (120 lines total)]");
            result_shape(&Echo::of_args(&args), &content)
        };
        let a = rejection("    int a = 2;\n    return a;", 40);
        let b = rejection("    int a = 3;\n    return a + 1;", 39);
        assert_eq!(a.fp, b.fp);
        // Numbers of the arguments are not trend numbers; the line count is.
        assert_eq!(a.numbers, vec![999, 120]);
        let other = result_shape(
            &Echo::none(),
            "ERRORS:\n- E302\n[File: /repo/B.java (9 lines total)]",
        );
        assert_ne!(a.fp, other.fp);
    }

    #[test]
    fn numbers_of_the_arguments_are_not_trend_numbers() {
        let e = Echo::of_args(&json!({"command": "sed -i '45d' A.java"}));
        let s = result_shape(&e, "deleted line 45; file has 300 lines");
        assert_eq!(s.numbers, vec![300]);
    }

    #[test]
    fn trend_tells_progress_from_drift() {
        let mut t = Trend::new();
        assert!(!t.step(&[5]));
        assert!(t.step(&[3]));
        assert!(t.step(&[1]));
        assert!(!t.step(&[1]));
        let mut d = Trend::new();
        assert!(!d.step(&[47, 47]));
        assert!(d.step(&[45, 45]));
        assert!(!d.step(&[47, 47]));
        assert!(!d.step(&[46, 46]));
        assert!(!d.step(&[47, 47]));
    }

    #[test]
    fn classifier_rejects_listings_and_logs() {
        assert!(!looks_like_error(
            "src/main/java/A.java\nsrc/main/java/MismatchedInputException.java\nsrc/main/java/C.java"
        ));
        assert!(!looks_like_error(
            "Found 1 matches for \"Exception\" in /repo/README.md:\nLine 3: throws Exception"
        ));
        assert!(looks_like_error(
            "java.lang.IllegalStateException: boom\n\tat A.b(A.java:3)"
        ));
        assert!(looks_like_error(
            "Traceback (most recent call last):\n  File \"x.py\""
        ));
        let log = json!({"command": "cat build.log"});
        assert!(!is_failure(
            "bash",
            Some(&log),
            "ERROR: tests failed\nmore",
            false
        ));
        assert!(is_failure(
            "bash",
            Some(&log),
            "cat: build.log: No such file or directory",
            false
        ));
        assert!(is_failure("bash", Some(&log), "anything", true));
        assert!(reads_file(
            "str_replace_editor",
            &json!({"command": "view", "path": "/a"})
        ));
        let grep = json!({"command": "grep -n \"console\" src/theme.ts"});
        assert!(!is_failure(
            "bash",
            Some(&grep),
            "Command exited with code 1",
            true
        ));
        assert!(is_failure(
            "bash",
            Some(&grep),
            "grep: src/theme.ts: No such file or directory",
            true
        ));
        assert!(is_failure(
            "bash",
            Some(&log),
            "Command exited with code 1",
            true
        ));
        assert!(!reads_file("bash", &json!({"command": "mvn -q test"})));
    }

    #[test]
    fn temp_ids_and_numbers_are_masked() {
        assert_eq!(
            mask_numbers("job 12 at /tmp/tmpa1b2c3d4"),
            "job # at /tmp/#"
        );
        assert_eq!(mask_numbers("file2.py"), "file#.py");
        assert_eq!(text_shape("a 1  b"), text_shape("a 22 b"));
        assert_ne!(text_shape("a 1 b"), text_shape("a 1 c"));
        assert_eq!(
            args_shape("edit", &json!({"line": 45, "text": "x"})),
            args_shape("edit", &json!({"line": 44, "text": "x"}))
        );
    }

    /// Whether `t` is collapsed, as [`hash_collapsed_trimmed`] first told it: the ASCII rule
    /// for ASCII text, the character rule otherwise.
    fn is_collapsed_by_its_rules(t: &str) -> bool {
        if t.is_ascii() {
            let b = t.as_bytes();
            !b.iter()
                .any(|&c| matches!(c, b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
                && !b.windows(2).any(|w| w == b"  ")
        } else {
            let mut prev_space = false;
            t.chars().all(|c| {
                let space = c.is_whitespace();
                let ok = !space || (c == ' ' && !prev_space);
                prev_space = space;
                ok
            })
        }
    }

    /// The echo's inline pieces cut out of a line as they were first: a new string for each
    /// piece the line holds.
    fn cut_pieces_by_replace(line: &str, pieces: &[String]) -> Option<String> {
        let mut owned: Option<String> = None;
        for piece in pieces {
            let cur = owned.as_deref().unwrap_or(line);
            if has(cur, piece) {
                owned = Some(cur.replace(piece.as_str(), "\u{1}"));
            }
        }
        owned
    }

    /// The character-by-character masking `mask_ids_into` must agree with.
    fn mask_by_chars(line: &str, out: &mut String, numbers: &mut Vec<u64>, ids: &mut Vec<String>) {
        let mut space = false;
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            if c.is_whitespace() {
                space = !out.is_empty();
                rest = &rest[c.len_utf8()..];
                continue;
            }
            if space {
                out.push(' ');
                space = false;
            }
            if c.is_ascii_alphanumeric() || c == '_' {
                let len = rest
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                let word = &rest[..len];
                if is_temp_id(word) {
                    ids.push(word.to_owned());
                    out.push('#');
                } else {
                    let (mut digits, mut n) = (false, 0u64);
                    for b in word.bytes() {
                        if b.is_ascii_digit() {
                            n = n.saturating_mul(10).saturating_add(u64::from(b - b'0'));
                            digits = true;
                        } else {
                            if digits {
                                out.push('#');
                                numbers.push(n);
                                digits = false;
                                n = 0;
                            }
                            out.push(char::from(b));
                        }
                    }
                    if digits {
                        out.push('#');
                        numbers.push(n);
                    }
                }
                rest = &rest[len..];
            } else {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }

    #[test]
    fn a_shared_text_pass_changes_no_shape() {
        let echo = Echo::of_args(&json!({"path": "src/a.rs", "limit": 200}));
        let long = "took 12ms at 2026-03-13T19:44:50Z\n".repeat(300);
        for content in [
            "",
            "ok",
            "  padded 3 in 12ms\n",
            "Ran 3 tests in 0.012s\nsrc/a.rs line 4 of 200",
            "/bin/bash: line 12: x: not found",
            long.as_str(),
        ] {
            // Filled by the generic normaliser first, as the bus does, or by the shape itself.
            let filled = crate::normalize::TextPass::new();
            let input = crate::ResultInput {
                tool: "read",
                args: None,
                content,
                is_error: false,
                images: 0,
                details: None,
                text_pass: Some(&filled),
            };
            let _ = crate::normalize::Normalizers::builtin().fingerprint(&input);
            let empty = crate::normalize::TextPass::new();
            let want = result_shape(&echo, content);
            assert_eq!(
                result_shape_with(&echo, content, Some(&filled)),
                want,
                "{content:?}"
            );
            assert_eq!(
                result_shape_with(&echo, content, Some(&empty)),
                want,
                "{content:?}"
            );
        }
    }

    /// [`TokenSet::of_args`] as its rules were first written: strings split at every
    /// character that is neither alphanumeric nor `_`, each token masked, numbers as `0`.
    fn token_set_by_its_rules(args: &Value) -> TokenSet {
        fn walk(v: &Value, out: &mut Vec<u32>, budget: &mut usize) {
            let push = |t: &str, out: &mut Vec<u32>| {
                if t.is_empty() || out.len() >= MAX_TOKENS * 4 {
                    return;
                }
                let mut masked = String::new();
                mask_into(t, &mut masked, &mut |_| {});
                out.push((hash_str(&masked) >> 32) as u32);
            };
            match v {
                Value::String(s) => {
                    let s = prefix_bytes(s, *budget);
                    *budget = budget.saturating_sub(s.len());
                    for t in s.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                        push(t, out);
                    }
                }
                Value::Number(_) => push("0", out),
                Value::Bool(b) => push(if *b { "true" } else { "false" }, out),
                Value::Array(a) => a.iter().for_each(|x| walk(x, out, budget)),
                Value::Object(m) => {
                    for (k, x) in m {
                        push(k, out);
                        walk(x, out, budget);
                    }
                }
                Value::Null => {}
            }
        }
        let mut hashes = Vec::new();
        let mut budget = MAX_ARGS_BYTES;
        walk(args, &mut hashes, &mut budget);
        hashes.sort_unstable();
        hashes.dedup();
        hashes.truncate(MAX_TOKENS);
        TokenSet { hashes }
    }

    /// [`reads_file`], [`program`] and [`is_search`] as each was written on its own,
    /// before the three shared [`command_facts`]'s one reading of the command.
    fn reads_file_by_its_rule(tool: &str, args: &Value) -> bool {
        if reader_tool(tool) {
            return true;
        }
        if field(args, "command").and_then(Value::as_str) == Some("view") {
            return true;
        }
        let cmd = command(args).unwrap_or("");
        let line = prefix_bytes(cmd.lines().next().unwrap_or(""), 500);
        let last = line.rsplit(['|', ';', '&']).next().unwrap_or("");
        let first = match last.split_whitespace().next() {
            Some("cd") => None,
            w => w,
        };
        first.is_some_and(|w| READERS.contains(&w.rsplit('/').next().unwrap_or(w)))
    }

    fn program_by_its_rule(args: &Value) -> Option<&str> {
        let cmd = command(args)?;
        let line = prefix_bytes(cmd.lines().next().unwrap_or(""), 500);
        line.split_whitespace().nth(1)?;
        let last = line.rsplit(['|', ';', '&']).next().unwrap_or("");
        let w = last.split_whitespace().next()?;
        Some(w.rsplit('/').next().unwrap_or(w))
    }

    fn is_search_by_its_rule(args: &Value) -> bool {
        let Some(cmd) = command(args) else {
            return false;
        };
        let line = prefix_bytes(cmd.lines().next().unwrap_or(""), 500);
        let last = line.rsplit(['|', ';', '&']).next().unwrap_or("");
        let mut words = last.split_whitespace();
        match words.next() {
            Some("git") => words.next() == Some("grep"),
            Some(w) => SEARCHERS.contains(&w.rsplit('/').next().unwrap_or(w)),
            None => false,
        }
    }

    /// [`looks_like_error`] as its rules read, without the shared first-line scan.
    fn looks_like_error_by_the_rules(content: &str) -> bool {
        let head = prefix_chars(content, ERROR_SCAN_CHARS);
        let first = first_line(head);
        if first.is_empty() {
            return false;
        }
        let contains_any = |h: &str, ns: &[&str]| ns.iter().any(|n| h.contains(n));
        let program = |line: &str, ns: &[&str]| {
            line.split_once(": ").is_some_and(|(p, rest)| {
                !p.is_empty() && !p.contains(' ') && contains_any(rest, ns)
            })
        };
        ERROR_PREFIXES.iter().any(|p| first.starts_with(p))
            || starts_with_exception(first)
            || program(first, DIAGNOSTICS)
            || contains_any(head, REJECTIONS)
            || (short(content, first) && contains_any(first, DIAGNOSTICS))
    }

    /// [`is_read_failure`] as its rules read.
    fn is_read_failure_by_the_rules(content: &str) -> bool {
        let head = prefix_chars(content, ERROR_SCAN_CHARS);
        let first = first_line(head);
        let contains_any = |h: &str| READ_FAILURES.iter().any(|n| h.contains(n));
        let program = first
            .split_once(": ")
            .is_some_and(|(p, rest)| !p.is_empty() && !p.contains(' ') && contains_any(rest));
        program || (short(content, first) && contains_any(first))
    }

    /// Results made of the pieces the classifiers look for: diagnostics and rejections
    /// (whole or cut), program prefixes, error prefixes, words, line breaks, padding that
    /// pushes a phrase across the scanned prefix, and a multi-byte character.
    fn classified_text() -> impl Strategy<Value = String> {
        let mut pieces: Vec<String> = DIAGNOSTICS
            .iter()
            .chain(READ_FAILURES)
            .chain(REJECTIONS)
            .chain(ERROR_PREFIXES)
            .flat_map(|p| {
                [
                    p.to_string(),
                    p.chars().skip(1).collect(),
                    p.chars().take(4).collect(),
                ]
            })
            .collect();
        for p in [
            "bash: ",
            "ls: cannot access 'x': ",
            "my prog: ",
            ": ",
            "ValueError: ",
            "x.Error",
            "ok",
            "line 3 of 9",
            " ",
            "  ",
            "\n",
            "\n\n",
            "\r\n",
            "é",
            "\u{3000}",
        ] {
            pieces.push(p.to_owned());
        }
        pieces.push("a".repeat(280));
        pieces.push("word ".repeat(70));
        proptest::collection::vec(proptest::sample::select(pieces), 0..8).prop_map(|v| v.concat())
    }

    /// Texts of the pieces [`skip_plain`] tells apart, so that each lands on every offset of
    /// an 8-byte step: letters, digits, temp ids, punctuation, single and double spaces, other
    /// ASCII whitespace, non-ASCII letters and spaces, control bytes.
    fn masked_text() -> impl Strategy<Value = String> {
        let pieces: Vec<&str> = vec![
            "a",
            "Z",
            "_",
            "abcdefg",
            "word",
            "tmp",
            "x1",
            "7",
            "42",
            "0099",
            "3f9a2c1b",
            "tmpk3j9x2",
            ".",
            ":",
            "/",
            "-",
            "\"",
            "#",
            "\u{7f}",
            "\u{1}",
            " ",
            "  ",
            "\t",
            "\n",
            "\r",
            "\u{b}",
            "\u{c}",
            "é",
            "\u{a0}",
            "\u{3000}",
            "日本",
        ];
        proptest::collection::vec(proptest::sample::select(pieces), 0..40).prop_map(|v| v.concat())
    }

    /// `mask_ids_into` of `s` after `prefix` writes the text, numbers and ids the
    /// byte-by-byte reference writes.
    fn masks_as_bytewise(prefix: String, s: &str) -> Result<(), TestCaseError> {
        let (mut want, mut want_n, mut want_ids) = (prefix.clone(), Vec::new(), Vec::new());
        mask_ids_with::<false>(s, &mut want, &mut |n| want_n.push(n), &mut |w| {
            want_ids.push(w.to_owned())
        });
        let (mut got, mut got_n, mut got_ids) = (prefix, Vec::new(), Vec::new());
        mask_ids_into(s, &mut got, &mut |n| got_n.push(n), &mut |w| {
            got_ids.push(w.to_owned())
        });
        prop_assert_eq!(got, want, "{:?}", s);
        prop_assert_eq!(got_n, want_n);
        prop_assert_eq!(got_ids, want_ids);
        Ok(())
    }

    proptest! {
        /// A host's wrapper is set aside and nothing else: the body is a part of the content,
        /// and an output wrapped by Codex or OpenHands reads as the output itself.
        #[test]
        fn prop_output_body_sets_the_wrapper_aside(
            out in "(?s)[a-zA-Z0-9 :\\[\\]().\n-]{0,60}",
            secs in 0u32..100,
            code in 0u32..256,
        ) {
            let body = output_body(&out);
            prop_assert!(out.contains(body));
            // (an output that itself opens with Codex's header would lose it too)
            prop_assume!(!out.starts_with("Exit code: "));
            let codex = format!("Exit code: {code}\nWall time: {secs}.5 seconds\nOutput:\n{out}");
            let openhands = format!(
                "{out}\n[The command completed with exit code {code}.]\n[Current working directory: /w]\n[Python interpreter: /usr/bin/python]"
            );
            let gemini = format!(
                "Command: make\nDirectory: (root)\nOutput: {}\nError: (none)\nExit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: {secs}",
                if out.trim().is_empty() { "(empty)" } else { out.as_str() }
            );
            prop_assert_eq!(is_silent(&gemini), is_silent(&out));
            prop_assert_eq!(output_body(&codex), output_body(&out));
            prop_assert_eq!(output_body(&openhands), output_body(&out));
            prop_assert_eq!(is_silent(&codex), is_silent(&out));
            prop_assert_eq!(is_silent(&openhands), is_silent(&out));
        }

        #[test]
        fn prop_has_is_contains(h in "[ab\u{e9}: ]{0,24}", n in "[ab\u{e9}:]{0,4}") {
            prop_assert_eq!(has(&h, &n), h.contains(n.as_str()));
        }

        /// The tool name is compared without case, as if lower-cased first.
        #[test]
        fn prop_reads_file_ignores_the_case_of_the_tool(t in "(?i)(re|ad|_|vie|w|open_file|cat|é|x){0,4}") {
            let args = json!({});
            let lower = t.to_ascii_lowercase();
            let want = READERS.contains(&lower.as_str())
                || lower.starts_with("read")
                || lower.ends_with("_read")
                || lower.starts_with("view")
                || lower == "open_file";
            prop_assert_eq!(reads_file(&t, &args), want);
        }

        /// The classifiers' shared first-line scan changes no answer.
        #[test]
        fn prop_classifiers_answer_as_their_rules(t in classified_text()) {
            prop_assert_eq!(looks_like_error(&t), looks_like_error_by_the_rules(&t), "{:?}", t);
            prop_assert_eq!(is_read_failure(&t), is_read_failure_by_the_rules(&t), "{:?}", t);
        }

        /// The phrase lists themselves, anywhere in a text.
        #[test]
        fn prop_has_any_finds_the_phrases(t in classified_text()) {
            for ns in [DIAGNOSTICS, READ_FAILURES, REJECTIONS, ERROR_PREFIXES] {
                prop_assert_eq!(has_any(&t, ns), ns.iter().any(|n| t.contains(n)));
            }
        }

        /// One pass over the command says what the three separate readings say.
        #[test]
        fn prop_command_facts_are_the_three_rules(
            tool in "(bash|read|Cat|x_read|edit|view_file|open_file|é)",
            key in "(command|cmd|other)",
            other in proptest::option::of("(view|ls)"),
            words in proptest::collection::vec(
                "(cat|/bin/cat|grep|git|git grep|rg|cd|view|mvn|\\||;|&&|-n|x\\.log|\\n|é|  )",
                0..7,
            ),
            long in any::<bool>(),
        ) {
            let mut cmd = words.join(" ");
            if long {
                // The 500-byte cut, inside a character or between words.
                cmd = format!("{}é {cmd}", "a".repeat(498));
            }
            let mut args = serde_json::Map::new();
            args.insert(key, json!(cmd));
            if let Some(o) = other {
                // A second, competing key: `command` wins over `cmd`; a non-string is skipped.
                args.insert("command".to_owned(), if o == "ls" { json!(["ls"]) } else { json!(o) });
            }
            let args = Value::Object(args);
            let f = command_facts(&tool, &args);
            prop_assert_eq!(f.reads, reads_file_by_its_rule(&tool, &args));
            prop_assert_eq!(f.search, is_search_by_its_rule(&args));
            prop_assert_eq!(f.program, program_by_its_rule(&args));
        }

        #[test]
        fn prop_has_any_is_any_contains(
            h in "[ab\u{e9}: ]{0,24}",
            ns in proptest::collection::vec("[ab\u{e9}:]{0,4}", 0..4),
        ) {
            let ns: Vec<&str> = ns.iter().map(String::as_str).collect();
            prop_assert_eq!(has_any(&h, &ns), ns.iter().any(|n| h.contains(n)));
        }

        #[test]
        fn prop_masking_bytes_agrees_with_masking_chars(
            prefix in "[ a]{0,2}",
            s in "[a-f0-9_xtmp \t\n\r\u{b}\u{c}\u{a0}\u{3000}é.:/#-]{0,40}",
        ) {
            let (mut want, mut want_n, mut want_ids) = (prefix.clone(), Vec::new(), Vec::new());
            mask_by_chars(&s, &mut want, &mut want_n, &mut want_ids);
            let (mut got, mut got_n, mut got_ids) = (prefix, Vec::new(), Vec::new());
            mask_ids_into(&s, &mut got, &mut |n| got_n.push(n), &mut |w| got_ids.push(w.to_owned()));
            prop_assert_eq!(got, want);
            prop_assert_eq!(got_n, want_n);
            prop_assert_eq!(got_ids, want_ids);
        }

        /// The 8-byte skip changes nothing: the same text, numbers and ids as byte by byte,
        /// with and without text written before.
        #[test]
        fn prop_mask_ids_into_is_the_bytewise_masking(
            prefix in "[ a]{0,2}",
            s in masked_text(),
        ) {
            masks_as_bytewise(prefix, &s)?;
        }

        /// A word the 8-byte skip stops in at a digit is masked as byte by byte: letters
        /// before the digit on either side of an 8-byte step, hex and temp ids, non-ASCII
        /// text and whitespace around them, and arbitrary text.
        #[test]
        fn prop_words_stopped_at_a_digit_are_the_bytewise_masking(
            prefix in "[ a]{0,2}",
            pad in "[a-z _.]{0,9}",
            parts in proptest::collection::vec(
                "([a-zA-Z_]{0,19}[0-9]{1,5}[a-z0-9_]{0,6}|[a-f0-9]{6,12}|tmp[a-z0-9]{2,6}|[ .:/#-]{1,3}|  |\t|é|\u{3000}|(?s).{0,4})",
                0..12,
            ),
        ) {
            let s = format!("{pad}{}", parts.concat());
            masks_as_bytewise(prefix, &s)?;
        }

        /// The first-byte skip of [`Needles::find_in`] misses no phrase, one byte long or
        /// more, at any place of a longer text (and the text's last byte).
        #[test]
        fn prop_needles_find_what_contains_finds(
            s in masked_text(),
            ns in proptest::collection::vec("[a7 \t\u{e9}\u{3000}.]{1,3}", 1..4),
        ) {
            let ns: Vec<&str> = ns.iter().map(String::as_str).collect();
            prop_assert_eq!(has_any(&s, &ns), ns.iter().any(|n| s.contains(n)));
        }

        /// The 8-byte test of a collapsed text answers as the rules, on texts whose spaces,
        /// other whitespace and non-ASCII characters land on every offset of a step.
        #[test]
        fn prop_is_collapsed_is_its_rules(s in masked_text()) {
            prop_assert_eq!(is_collapsed(&s), is_collapsed_by_its_rules(&s), "{:?}", s);
            prop_assert_eq!(hash_collapsed_trimmed(s.trim()), hash_str(&collapse(&s)));
        }

        /// Pieces cut in two reused buffers are the pieces cut by `str::replace`, line after
        /// line (what one line leaves in the buffers never shows in the next).
        #[test]
        fn prop_cut_pieces_is_replace(
            lines in proptest::collection::vec(masked_text(), 1..4),
            pieces in proptest::collection::vec("(ab|a|é|7 |  |\u{1}|word|abab){1,3}", 0..4),
        ) {
            let mut cuts = None;
            for line in &lines {
                let want = cut_pieces_by_replace(line, &pieces);
                prop_assert_eq!(cut_pieces(line, &pieces, &mut cuts).map(str::to_owned), want);
            }
            for (text, from) in lines.iter().zip(&pieces) {
                let mut out = String::from("x");
                replace_into(text, from, "\u{1}", &mut out);
                prop_assert_eq!(out, format!("x{}", text.replace(from.as_str(), "\u{1}")));
            }
        }

        /// The byte trim is `str::trim`, with ASCII and non-ASCII whitespace at either end.
        #[test]
        fn prop_trim_is_str_trim(s in masked_text()) {
            prop_assert_eq!(trim(&s), s.trim(), "{:?}", s);
        }

        /// The token hash's shortcut: a word of ASCII letters and `_` is its own mask,
        /// whatever its length (temp-id prefixes included).
        #[test]
        fn prop_plain_words_mask_to_themselves(t in "(tmp|temp)?[A-Za-z_]{1,24}") {
            let mut out = String::new();
            mask_into(&t, &mut out, &mut |_| {});
            prop_assert_eq!(out, t);
        }

        #[test]
        fn prop_hash_collapsed_trimmed_is_the_hash_of_collapse(s in "[a b\\t\\n\\r\\x0b\\x0c\\u{a0}\\u{3000}]{0,12}") {
            prop_assert_eq!(hash_collapsed_trimmed(s.trim()), hash_str(&collapse(&s)));
        }

        #[test]
        fn prop_token_sets_are_the_rules(
            words in proptest::collection::vec("[a-z0-9_ ./\u{e9}-]{0,12}|tmp[a-z0-9]{4,6}|[0-9a-f]{8}", 0..6),
            n in any::<i64>(),
            flag in any::<bool>(),
        ) {
            let args = serde_json::json!({
                "s": words.join(" "),
                "list": words,
                "n": n,
                "f": flag,
                "nested": {"k1": words.concat(), "k_2": [1.5, null]},
            });
            prop_assert_eq!(TokenSet::of_args(&args), token_set_by_its_rules(&args));
        }

        #[test]
        fn prop_has_chars_counts_characters(s in "[ab\u{e9}\u{3000}\u{1f600}]{0,12}", n in 0usize..14) {
            prop_assert_eq!(has_chars(&s, n), s.chars().count() >= n);
        }

        /// Echo removal: whatever edit is echoed (with any line numbers), the shape of the
        /// rejection is the shape of the rejection without the echo.
        #[test]
        fn prop_echo_never_changes_the_shape(
            lines in proptest::collection::vec("[a-z][a-z (){};=]{4,28}[a-z;]", 1..6),
            start in 1u32..5000,
        ) {
            let edit = lines.join("\n");
            let args = json!({"new_str": edit});
            let echoed: String = lines.iter().enumerate()
                .map(|(i, l)| format!("{}:{l}\n", start + i as u32)).collect();
            let content = format!("Your proposed edit has introduced new syntax error(s).\n{echoed}Your changes have NOT been applied.");
            let bare = "Your proposed edit has introduced new syntax error(s).\nYour changes have NOT been applied.";
            prop_assert_eq!(result_shape(&Echo::of_args(&args), &content).fp, result_shape(&Echo::none(), bare).fp);
        }

        /// Shapes never panic and stay bounded on arbitrary text.
        #[test]
        fn prop_shapes_are_total(s in ".{0,3000}") {
            let _ = looks_like_error(&s);
            let r = result_shape(&Echo::of_args(&json!({"a": s.clone()})), &s);
            prop_assert!(r.numbers.len() <= MAX_NUMBERS);
            prop_assert!(mask_numbers(&s).len() <= s.len() + 8);
        }

        /// A strictly monotone sequence is progress at every step after the first.
        #[test]
        fn prop_monotone_numbers_progress(start in 0u64..1000, steps in 2usize..10, up in any::<bool>()) {
            let mut t = Trend::new();
            prop_assert!(!t.step(&[start + 100]));
            for i in 1..steps as u64 {
                let n = if up { start + 100 + i } else { start + 100 - i };
                prop_assert!(t.step(&[n]));
            }
        }
    }
}
