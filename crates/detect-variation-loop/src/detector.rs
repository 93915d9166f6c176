//! The `variation-loop` state machine: segments are cut from the stream as their newline
//! arrives, shingled once, and clustered incrementally (greedy, in text order).

use crate::{Settings, NAME};
use loopguard_core::{Cx, Detector, Event, Finding, Fingerprint, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A shingle: a 64-bit mix of its characters (a collision needs two different 5-character
/// strings with the same 64-bit value).
type Shingle = u64;

fn mix(acc: u64, c: char) -> u64 {
    let mut x = (acc ^ u64::from(u32::from(c))).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^ (x >> 32)
}

/// The sorted, de-duplicated shingle set of `text` (lower-cased), and the shingle sequence
/// with multiplicity (for the asymmetric overlap).
pub fn shingles(text: &str, k: usize) -> (Vec<Shingle>, Vec<Shingle>) {
    let k = k.clamp(1, 6);
    // The last `k` lower-cased characters, oldest at `n % k` (no per-segment copy of the text).
    let mut win = ['\0'; 6];
    let mut n = 0usize;
    let mut seq: Vec<Shingle> = Vec::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if let Some(slot) = win.get_mut(n % k) {
            *slot = c;
        }
        n += 1;
        if n >= k {
            let h = (0..k).fold(0x243f_6a88_85a3_08d3u64, |acc, i| {
                mix(acc, win.get((n + i) % k).copied().unwrap_or('\0'))
            });
            seq.push(h);
        }
    }
    let mut set = seq.clone();
    set.sort_unstable();
    set.dedup();
    (set, seq)
}

/// Overlap(a, b): the fraction of `b`'s shingles (with multiplicity) found in `a`'s set.
pub fn overlap(a_set: &[Shingle], b_seq: &[Shingle]) -> f64 {
    if b_seq.is_empty() {
        return 0.0;
    }
    let hits = b_seq
        .iter()
        .filter(|s| a_set.binary_search(s).is_ok())
        .count();
    hits as f64 / b_seq.len() as f64
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Cluster {
    rep: String,
    set: Vec<Shingle>,
    size: u32,
}

/// Whole-message clustering (the seed's rule), maintained as segments complete.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Whole {
    clusters: Vec<Cluster>,
    /// Cluster ids by representative length (index = length).
    by_len: Vec<Vec<u32>>,
    short: u64,
    singletons: u64,
    /// (size, id) of the largest cluster (first in creation order on ties). Clusters beyond
    /// the cap are counted as singletons but not stored.
    largest: Option<(u32, u32)>,
}

impl Whole {
    /// The cluster a segment would join.
    fn find(&self, s: &Settings, len: usize, seq: &[Shingle]) -> Option<u32> {
        let lo = len.saturating_sub(s.length_slack);
        let hi = len + s.length_slack;
        let mut ids: Vec<u32> = (lo..=hi)
            .filter_map(|l| self.by_len.get(l))
            .flat_map(|v| v.iter().copied())
            .collect();
        ids.sort_unstable();
        ids.into_iter().find(|&id| {
            self.clusters
                .get(id as usize)
                .is_some_and(|c| overlap(&c.set, seq) >= s.min_overlap)
        })
    }

    fn add(&mut self, s: &Settings, text: &str, len: usize) {
        let (set, seq) = shingles(text, s.shingle);
        self.short += 1;
        match self.find(s, len, &seq) {
            Some(id) => {
                if let Some(c) = self.clusters.get_mut(id as usize) {
                    if c.size == 1 {
                        self.singletons = self.singletons.saturating_sub(1);
                    }
                    c.size += 1;
                    let better = match self.largest {
                        None => true,
                        Some((size, best)) => c.size > size || (c.size == size && id < best),
                    };
                    if better {
                        self.largest = Some((c.size, id));
                    }
                }
            }
            None => {
                self.singletons += 1;
                if self.clusters.len() >= s.max_clusters {
                    return;
                }
                let id = self.clusters.len() as u32;
                self.clusters.push(Cluster {
                    rep: text.to_owned(),
                    set,
                    size: 1,
                });
                if self.by_len.len() <= len {
                    self.by_len.resize(len + 1, Vec::new());
                }
                if let Some(v) = self.by_len.get_mut(len) {
                    v.push(id);
                }
            }
        }
    }

    /// The verdict with an optional tentative (not yet complete) last segment.
    fn verdict(&self, s: &Settings, tentative: Option<(&str, usize)>) -> Option<(f64, u32, &str)> {
        let mut short = self.short;
        let mut singles = self.singletons;
        let mut largest = self.largest;
        if let Some((text, len)) = tentative {
            let (_, seq) = shingles(text, s.shingle);
            short += 1;
            match self
                .find(s, len, &seq)
                .and_then(|id| self.clusters.get(id as usize).map(|c| (id, c)))
            {
                Some((id, c)) => {
                    if c.size == 1 {
                        singles = singles.saturating_sub(1);
                    }
                    let grown = c.size + 1;
                    if largest
                        .is_none_or(|(size, best)| grown > size || (grown == size && id < best))
                    {
                        largest = Some((grown, id));
                    }
                }
                None => singles += 1,
            }
        }
        let largest = largest.and_then(|(size, id)| {
            self.clusters
                .get(id as usize)
                .map(|c| (size, c.rep.as_str()))
        });
        if (short as usize) < s.min_segments {
            return None;
        }
        let fraction = 1.0 - singles as f64 / short as f64;
        let (size, rep) = largest.filter(|(size, _)| *size > 1).unwrap_or((0, ""));
        Some((fraction, size, rep))
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Seg {
    text: String,
    len: usize,
    set: Vec<Shingle>,
    /// `ov[j]` = overlap(rep = this segment, seg = the j-th later segment in the window).
    ov: VecDeque<f32>,
    /// Shingles of this segment not seen in earlier window segments, at insertion.
    novel: f32,
    /// Message character offset where the segment started.
    start: u64,
}

/// Sliding-window clustering over the last `window` short segments.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Window {
    segs: VecDeque<Seg>,
}

impl Window {
    fn add(&mut self, s: &Settings, text: &str, len: usize, start: u64) {
        let (set, seq) = shingles(text, s.shingle);
        if self.segs.len() >= s.window {
            // Later segments' overlap lists only name segments after them: nothing to shift.
            self.segs.pop_front();
        }
        for seg in &mut self.segs {
            let ok = seg.len.abs_diff(len) <= s.length_slack;
            seg.ov.push_back(if ok {
                overlap(&seg.set, &seq) as f32
            } else {
                0.0
            });
        }
        let novel = if seq.is_empty() {
            1.0
        } else {
            let fresh = seq
                .iter()
                .filter(|x| !self.segs.iter().any(|g| g.set.binary_search(x).is_ok()))
                .count();
            fresh as f32 / seq.len() as f32
        };
        self.segs.push_back(Seg {
            text: text.to_owned(),
            len,
            set,
            ov: VecDeque::new(),
            novel,
            start,
        });
    }

    /// Removes the newest segment (and its column of the earlier segments' overlaps).
    fn pop_back(&mut self) {
        if self.segs.pop_back().is_some() {
            for seg in &mut self.segs {
                seg.ov.pop_back();
            }
        }
    }

    /// The share of the text since the window's first segment that the window's segments
    /// cover.
    fn coverage(&self, now: u64) -> f64 {
        let from = self.segs.front().map_or(now, |g| g.start);
        let covered: usize = self.segs.iter().map(|g| g.len).sum();
        if now <= from {
            return 0.0;
        }
        covered as f64 / (now - from) as f64
    }

    fn verdict(&self, s: &Settings) -> Option<(f64, u32, &str, f64)> {
        let n = self.segs.len();
        if n < s.min_segments {
            return None;
        }
        // Greedy clustering in order, from the cached pairwise overlaps.
        let mut reps: Vec<usize> = Vec::new();
        let mut size: Vec<u32> = Vec::new();
        for j in 0..n {
            let joined = reps.iter().position(|&r| {
                self.segs
                    .get(r)
                    .and_then(|seg| seg.ov.get(j - r - 1))
                    .is_some_and(|&o| f64::from(o) >= s.min_overlap)
            });
            match joined {
                Some(ci) => {
                    if let Some(x) = size.get_mut(ci) {
                        *x += 1;
                    }
                }
                None => {
                    reps.push(j);
                    size.push(1);
                }
            }
        }
        let singles = size.iter().filter(|&&x| x == 1).count();
        let fraction = 1.0 - singles as f64 / n as f64;
        let (best_i, best) =
            size.iter()
                .enumerate()
                .fold((0, 0), |acc, (i, &x)| if x > acc.1 { (i, x) } else { acc });
        let rep = reps
            .get(best_i)
            .and_then(|&r| self.segs.get(r))
            .map_or("", |g| g.text.as_str());
        let novelty = if n > 1 {
            self.segs
                .iter()
                .skip(1)
                .map(|g| f64::from(g.novel))
                .sum::<f64>()
                / (n - 1) as f64
        } else {
            1.0
        };
        Some((fraction, best, rep, novelty))
    }
}

/// Cuts the streamed text into trimmed newline-separated segments.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Splitter {
    /// The current segment from its first non-whitespace character, up to a cap.
    buf: String,
    /// Characters up to and including the last non-whitespace one.
    content: usize,
    /// Message offset of the segment's first character.
    start: u64,
    chars: usize,
    overflow: bool,
    in_code: bool,
    /// The segment can no longer be a short prose line: its first character (see
    /// [`opens_non_prose`]) or a code mark in its text (see [`code_mark`]) rules prose out
    /// while only prose counts, or it overflowed. Its text is not kept (a fence's excepted),
    /// as no test reads it.
    #[serde(default)]
    reject: bool,
    /// The line that ended last is the window's newest segment and ends without closing a
    /// sentence ([`loopguard_core::prose::ends_sentence`]): a next line that opens in lower
    /// case continues it.
    #[serde(default)]
    open: bool,
    /// The window's newest segment is a line of a hard-wrapped paragraph (the next line
    /// continued it): [`VariationLoop::complete`] drops it before the next segment joins.
    #[serde(default)]
    wrapped: bool,
}

/// A completed (or tentative) segment: its trimmed text (borrowed from the splitter) and
/// length, or `None` when it is not short.
type Cut<'a> = Option<(&'a str, usize)>;

impl Splitter {
    #[cfg(test)]
    fn push(&mut self, ch: char, s: &Settings, at: u64) {
        if self.chars == 0 && ch.is_whitespace() {
            return;
        }
        if self.chars == 0 {
            self.start = at;
            self.begin(ch.is_lowercase());
        }
        self.chars += 1;
        if !ch.is_whitespace() {
            self.content = self.chars;
        }
        if self.content > s.max_segment {
            self.overflow = true;
        }
        if !self.overflow {
            self.buf.push(ch);
        }
    }

    /// Appends `piece` (no newline in it, `n` characters) whose first character is the
    /// message's character `at`: deciding exactly as [`Splitter::push`] on each of its
    /// characters, without a branch per character (whitespace is found with `trim_start` / `trim_end`,
    /// which use the same Unicode `White_Space` property as `char::is_whitespace`). A piece
    /// of a segment whose text is not kept only counts its characters.
    #[inline]
    fn push_str(&mut self, piece: &str, n: usize, s: &Settings, at: u64, ascii: bool) {
        if self.unkept() {
            // Only whether the segment has begun is read again.
            self.chars += n;
            return;
        }
        self.push_kept(piece, n, s, at, ascii);
    }

    /// Consumes the head of an ASCII delta `b` (at most 16 bytes: `word` holds them, zero
    /// past the end, `newlines` the high bit of each newline byte; `at` is the message offset
    /// of its first character) for as long as that needs no test of a kept text: the rest of
    /// a segment whose text is not kept and its newline, blank lines, and segments whose first
    /// character rules prose out (while `prose_only`). Returns the bytes consumed; the state
    /// is exactly what [`Splitter::push_str`] and the newline handling of
    /// [`VariationLoop::lines`] leave after them.
    #[inline(always)]
    fn skip(&mut self, b: &[u8], word: u128, newlines: u128, at: u64, prose_only: bool) -> usize {
        let len = b.len();
        let mut newlines = newlines;
        let mut from = 0usize;
        loop {
            if self.chars != 0 {
                if !self.reject {
                    return from;
                }
                if newlines == 0 {
                    // The segment goes on past the delta.
                    self.chars += len - from;
                    return len;
                }
                if !self.buf.is_empty() {
                    return from;
                }
                // Its newline ends it (as `ends_unjudged` / `finish_unjudged`).
                let i = (newlines.trailing_zeros() / 8) as usize;
                newlines &= newlines - 1;
                self.finish_unjudged();
                from = i + 1;
                continue;
            }
            if !prose_only {
                return from;
            }
            // A segment begins at the first byte that is not a space (a zero byte of the
            // word past the end is not one either).
            let non_space = !zero_bytes(word ^ splat(b' ')) & HIGH;
            let j = match non_space.checked_shr(8 * from as u32) {
                Some(m) if m != 0 => from + (m.trailing_zeros() / 8) as usize,
                _ => len,
            };
            let Some(&c) = b.get(j) else {
                // Spaces to the end: nothing begins.
                return len;
            };
            if c == b'\n' {
                // A blank line: the lowest newline left is this one.
                newlines &= newlines.wrapping_sub(1);
                self.finish_unjudged();
                from = j + 1;
                continue;
            }
            if !opens_non_prose_byte(c) {
                // Other whitespace, or a segment whose text is kept.
                return from;
            }
            // As `push_kept`: the segment starts at `j`, its text is not kept; its first
            // character is counted here, the rest of it on the next round.
            self.begin(c.is_ascii_lowercase());
            self.start = at + j as u64;
            self.reject = true;
            self.chars = 1;
            from = j + 1;
        }
    }

    /// [`Splitter::push_str`] of a piece that opens a segment or is kept.
    fn push_kept(&mut self, piece: &str, n: usize, s: &Settings, at: u64, ascii: bool) {
        // Characters of a part of `piece` (bytes when the piece is ASCII).
        let count = |t: &str| if ascii { t.len() } else { t.chars().count() };
        let mut text = piece;
        let mut n = n;
        if self.chars == 0 {
            let rest = trim_start(text);
            if rest.is_empty() {
                return;
            }
            let skipped = count(text.get(..text.len() - rest.len()).unwrap_or(""));
            self.start = at + skipped as u64;
            n -= skipped;
            text = rest;
            self.begin(text.chars().next().is_some_and(char::is_lowercase));
            self.reject = s.prose_only && opens_non_prose(text);
        }
        if self.reject {
            // Only whether the segment has begun is read again.
            self.chars += n;
            return;
        }
        let kept = self.buf.len();
        let body = text.trim_end();
        let content = if body.is_empty() {
            self.content
        } else if body.len() == text.len() {
            self.chars + n
        } else {
            self.chars + count(body)
        };
        if !self.overflow {
            if content <= s.max_segment {
                self.buf.push_str(text);
            } else {
                // The first non-whitespace character past `max-segment` overflows the
                // segment: the characters before it are kept, it and the rest are not.
                let mut chars = self.chars;
                let mut cut = text.len();
                for (i, ch) in text.char_indices() {
                    chars += 1;
                    if !ch.is_whitespace() && chars > s.max_segment {
                        cut = i;
                        break;
                    }
                }
                self.buf.push_str(text.get(..cut).unwrap_or(""));
                self.overflow = true;
            }
        }
        self.chars += n;
        self.content = content;
        // A segment that can no longer be a short prose line keeps no more text (unless it
        // is a fence, which `finish` reads; a text that holds a code mark or no longer grows
        // cannot become one): `current` would be `None` for it, as for one whose first
        // character rules prose out.
        if (self.overflow || (s.prose_only && code_mark(self.buf.as_bytes(), kept)))
            && !self.is_fence()
        {
            self.reject = true;
            self.buf.clear();
        }
    }

    /// A segment begins; its first character is a lower-case letter when `lower`. Such a line
    /// continues the previous one when that one is open: the previous line is then a line of
    /// a hard-wrapped paragraph (a license, a man page, a mail quoted whole), not a sentence
    /// of its own.
    #[inline]
    fn begin(&mut self, lower: bool) {
        if self.open && lower {
            self.wrapped = true;
        }
        self.open = false;
    }

    /// Whether a segment has begun whose text is not kept: more of it only counts its
    /// characters.
    #[inline]
    fn unkept(&self) -> bool {
        self.chars != 0 && self.reject
    }

    /// Whether a newline now ends nothing to judge: no segment has begun, or the segment's
    /// text is not kept (then [`Splitter::completed`] is `None` and [`Splitter::finish`]
    /// only resets the segment: with an empty buffer it is no fence).
    #[inline]
    fn ends_unjudged(&self) -> bool {
        self.chars == 0 || (self.reject && self.buf.is_empty())
    }

    /// [`Splitter::finish`] of a segment for which [`Splitter::ends_unjudged`] holds.
    #[inline]
    fn finish_unjudged(&mut self) {
        self.open = false;
        self.chars = 0;
        self.content = 0;
        self.overflow = false;
        self.reject = false;
    }

    /// The current segment as it stands (trimmed), if short.
    fn current(&self, s: &Settings) -> Cut<'_> {
        if self.overflow || self.reject || self.content <= s.min_segment {
            return None;
        }
        // Without overflow `buf` holds the segment from its first non-whitespace character:
        // its first `content` characters are exactly `buf` without trailing whitespace.
        let text = self.buf.trim_end();
        if s.skip_structured && (self.in_code || is_structural(text)) {
            return None;
        }
        if s.prose_only && !is_prose(text) {
            return None;
        }
        Some((text, self.content))
    }

    fn is_fence(&self) -> bool {
        self.buf.starts_with("```") || self.buf.starts_with("~~~")
    }

    /// The current segment as it completes, when it is short (call [`Splitter::finish`]
    /// next).
    fn completed(&self, s: &Settings) -> Cut<'_> {
        if self.chars == 0 || (s.skip_structured && self.is_fence()) {
            return None;
        }
        self.current(s)
    }

    /// Ends the current segment.
    fn finish(&mut self) {
        self.open = false;
        if self.chars == 0 {
            return;
        }
        if self.is_fence() {
            self.in_code = !self.in_code;
        }
        self.buf.clear();
        self.chars = 0;
        self.content = 0;
        self.overflow = false;
        self.reject = false;
    }
}

/// `text.trim_start()`, with the spaces that indent code skipped eight bytes at a time (the
/// rest, from the first byte that is not a space, goes to `trim_start` when that byte may be
/// whitespace: another ASCII one `char::is_whitespace` accepts (tab, line feed, vertical tab,
/// form feed, carriage return) or a non-ASCII byte).
#[inline]
fn trim_start(text: &str) -> &str {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    let b = text.as_bytes();
    let mut i = 0usize;
    while let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let v = u64::from_le_bytes(*chunk) ^ SPACES;
        if v != 0 {
            // The lowest set bit is in the first byte that is not a space.
            i += (v.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    // Only spaces were skipped: `i` is a character boundary.
    let rest = text.get(i..).unwrap_or("");
    match rest.as_bytes().first() {
        Some(&c) if !c.is_ascii() || matches!(c, b'\t'..=b'\r') => rest.trim_start(),
        _ => rest,
    }
}

/// `x` in each byte.
const fn splat(x: u8) -> u128 {
    u128::from_ne_bytes([x; 16])
}

/// The high bit of each zero byte of `w` (exact: no carry crosses a byte).
#[inline]
fn zero_bytes(w: u128) -> u128 {
    const LOW: u128 = splat(0x7f);
    !(((w & LOW) + LOW) | w | LOW)
}

/// The line ends of a delta: for one of at most 16 bytes (a streamed delta, typically), its
/// bytes as one word (little-endian, zero past the end) and the high bit of each newline
/// byte, found at once; for a longer one, a search from each end on.
#[derive(Clone, Copy, Debug)]
enum Ends {
    Mask { word: u128, newlines: u128 },
    Search,
}

/// The high bit of each byte.
const HIGH: u128 = splat(0x80);

impl Ends {
    /// The line ends of `bytes`, and whether `bytes` is ASCII.
    #[inline]
    fn of(bytes: &[u8]) -> (Ends, bool) {
        let word = match <[u8; 16]>::try_from(bytes) {
            Ok(w) => Some(w),
            Err(_) if bytes.len() < 16 => {
                let mut w = [0u8; 16];
                if let Some(head) = w.get_mut(..bytes.len()) {
                    head.copy_from_slice(bytes);
                }
                Some(w)
            }
            Err(_) => None,
        };
        match word {
            // Padding bytes are zero: neither newlines nor non-ASCII.
            Some(w) => {
                let word = u128::from_le_bytes(w);
                let newlines = zero_bytes(word ^ splat(b'\n'));
                (Ends::Mask { word, newlines }, word & HIGH == 0)
            }
            None => (Ends::Search, bytes.is_ascii()),
        }
    }

    /// Whether there is surely no newline.
    #[cfg(test)]
    fn none(&self) -> bool {
        matches!(self, Ends::Mask { newlines: 0, .. })
    }

    /// The first newline of `bytes` at or after `from`, where every earlier one was already
    /// returned.
    #[inline]
    fn next(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        match self {
            Ends::Mask { newlines: m, .. } => {
                if *m == 0 {
                    return None;
                }
                let i = (m.trailing_zeros() / 8) as usize;
                *m &= *m - 1;
                Some(i)
            }
            Ends::Search => {
                memchr::memchr(b'\n', bytes.get(from..).unwrap_or(&[])).map(|i| from + i)
            }
        }
    }
}

/// Lines that are layout rather than prose: table rows, fences, and lines with fewer than 8
/// letters or digits (separators, box drawing, padding).
fn is_structural(text: &str) -> bool {
    text.starts_with('|')
        || text.starts_with("```")
        || text.starts_with("~~~")
        || if text.is_ascii() {
            // The same count without a branch per character.
            text.bytes()
                .map(|c| usize::from(c.is_ascii_alphanumeric()))
                .sum::<usize>()
                < 8
        } else {
            text.chars().filter(|c| c.is_alphanumeric()).take(8).count() < 8
        }
}

/// Whether a segment that opens with `text` (its first character on) is not prose whatever
/// follows: [`is_prose`] rejects every segment whose first character is one of its opening
/// marks or a lower-case letter (each of its tests only rejects, so one that holds decides).
#[inline]
fn opens_non_prose(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(&b) if b.is_ascii() => opens_non_prose_byte(b),
        Some(_) => text.chars().next().is_some_and(char::is_lowercase),
        None => false,
    }
}

/// Whether the text `b` of a segment holds, in a window of up to three bytes that ends at or
/// after `from`, a mark for which [`is_prose`] rejects the segment whatever follows: a brace
/// or a bar, an operator or a path of its code list, `();`, an underscore outside inline
/// code, or a call or an index with an argument (`f(x`, `a[i`). No mark holds whitespace:
/// each stays in the segment however the line ends (only trailing whitespace is trimmed).
fn code_mark(b: &[u8], from: usize) -> bool {
    let mut pp = 0u8;
    let mut p = 0u8;
    if let Some(i) = from.checked_sub(1) {
        p = b.get(i).copied().unwrap_or(0);
        if let Some(i) = i.checked_sub(1) {
            pp = b.get(i).copied().unwrap_or(0);
        }
    }
    for (i, &c) in b.iter().enumerate().skip(from) {
        let mark = match c {
            b'{' | b'}' | b'|' => true,
            b'_' => {
                b.get(..i)
                    .map_or(0, |h| h.iter().filter(|&&x| x == b'`').count())
                    % 2
                    == 0
            }
            b'=' => matches!(p, b'=' | b'!' | b'+' | b'-' | b':'),
            b'>' => matches!(p, b'=' | b'-' | b'/'),
            b':' => p == b':',
            b'&' => p == b'&',
            b'[' => p == b'#',
            b'/' => p == b'<',
            b'(' => p == b'!',
            b'n' => p == b'\\',
            b';' => p == b')' && pp == b'(',
            _ => false,
        } || (matches!(p, b'(' | b'[')
            && (pp.is_ascii_alphanumeric() || pp == b'_')
            && c.is_ascii()
            && !matches!(c, b'\t'..=b'\r' | b' ' | b')' | b']'));
        if mark {
            return true;
        }
        pp = p;
        p = c;
    }
    false
}

/// [`opens_non_prose`] of a segment whose first character is the ASCII `first`.
#[inline]
fn opens_non_prose_byte(first: u8) -> bool {
    first.is_ascii_lowercase() || opens_with_mark(first)
}

/// The first bytes of comments, markup, attributes, quoted strings and brackets: no prose
/// opens with one.
fn opens_with_mark(first: u8) -> bool {
    matches!(
        first,
        b'#' | b'/'
            | b'*'
            | b'<'
            | b'['
            | b']'
            | b'('
            | b')'
            | b'{'
            | b'}'
            | b'@'
            | b'"'
            | b'\''
            | b'$'
            | b'>'
            | b'='
            | b'+'
            | b'|'
            | b'%'
            | b';'
            | b'&'
            | b'!'
            | b'.'
            | b'\\'
    )
}

/// Whether a trimmed segment reads as prose: a sentence a model could reword. Code lines,
/// numbered or line-numbered listings, table rows, log lines, markup, comments and
/// key/value lines are not prose.
pub fn is_prose(text: &str) -> bool {
    let b = text.as_bytes();
    // Comments, markup (troff and TeX open with a backslash), attributes, quoted strings,
    // brackets; and a line opening in lower case: a sentence opens with a capital (or a
    // letter without case), so such a line continues a hard-wrapped paragraph (a comment, a
    // document) or is a command (`syn keyword …`, `hi def link …`).
    if b.is_empty() || opens_non_prose(text) {
        return false;
    }
    // Code: statement ends, blocks, operators, paths, macros (first: the cheapest test that
    // rejects most code lines; every test here only rejects, so their order changes nothing).
    let last = b.last().copied().unwrap_or(b' ');
    if matches!(
        last,
        b';' | b'{' | b'}' | b'(' | b'[' | b'\\' | b'=' | b'>' | b'|' | b'&'
    ) || text.ends_with("),")
        || text.ends_with("\",")
        || text.ends_with("],")
    {
        return false;
    }
    // Numbered and line-numbered listings, timestamps: a leading number followed by
    // punctuation or a tab (`12. `, `12)`, `12:`, `12 |`, `12→`, `2024-05-01`).
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        let rest = text.get(digits..).unwrap_or("").trim_start_matches(' ');
        if rest.is_empty()
            || rest.starts_with(['.', ')', ':', '|', '-', '/', '\t', ',', ']'])
            || rest.starts_with('→')
            || digits == b.len()
        {
            return false;
        }
    }
    // Log and error lines: a level word, an error name or a traceback first.
    let word: &str = text.split([' ', ':', ']', '\t']).next().unwrap_or("");
    if matches!(
        word,
        "INFO"
            | "DEBUG"
            | "WARN"
            | "WARNING"
            | "ERROR"
            | "TRACE"
            | "FATAL"
            | "CRITICAL"
            | "NOTICE"
            | "Traceback"
            | "panic"
            | "panicked"
            | "error"
            | "warning"
    ) || ((word.ends_with("Error") || word.ends_with("Exception") || word.ends_with("Warning"))
        && text.get(word.len()..).is_some_and(|r| r.starts_with(':')))
    {
        return false;
    }
    // Aligned columns (listings, disassembly, tables without bars) and identifiers outside
    // inline code (`snake_case`, `LOAD_NAME`).
    let mut in_tick = false;
    let mut spaces_run = 0;
    for &c in b {
        match c {
            b'`' => in_tick = !in_tick,
            b'_' if !in_tick => return false,
            b'\t' => return false,
            b' ' => {
                spaces_run += 1;
                if spaces_run >= 3 {
                    return false;
                }
                continue;
            }
            _ => {}
        }
        spaces_run = 0;
    }
    // A call or an index with arguments (`f(x`, `a[i`), not a bare mention (`solve()`).
    let call = b.windows(3).any(|w| {
        matches!(w, [p, b'(' | b'[', n] if (p.is_ascii_alphanumeric() || *p == b'_') && *n != b')' && *n != b']')
    });
    if call {
        return false;
    }
    // Statements that open with a keyword.
    const KEYWORDS: &[&str] = &[
        "from ", "import ", "assert ", "def ", "class ", "return ", "raise ", "yield ", "elif ",
        "except", "lambda", "async ", "await ", "fn ", "pub ", "impl ", "struct ", "enum ",
        "func ", "package ", "mod ", "else:", "try:", "finally:",
    ];
    if KEYWORDS.iter().any(|k| text.starts_with(k)) {
        return false;
    }
    const CODE: &[&str] = &[
        "{",
        "}",
        " = ",
        "==",
        "!=",
        "=>",
        "->",
        "::",
        "&&",
        "||",
        "#[",
        "</",
        "/>",
        "!(",
        "+=",
        "-=",
        ":=",
        "();",
        "\\n",
        "|",
        "lambda:",
        " is True",
        " is False",
        " is None",
    ];
    if CODE.iter().any(|c| text.contains(c)) {
        return false;
    }
    // Names rather than words: more than a quarter of the words are identifiers
    // (`baanConstant EVTBUTTON1MASK`, `TAMIL SYLLABLE LLLAA`, `0BB4`).
    if loopguard_core::prose::names_dominate(text) {
        return false;
    }
    // Mostly words: letters and spaces make up most of the line, with at least three words.
    let mut letters = 0usize;
    let mut spaces = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if c.is_alphabetic() {
            letters += 1;
        } else if c == ' ' {
            spaces += 1;
        } else {
            other += 1;
        }
    }
    spaces >= 2 && 4 * (letters + spaces) >= 3 * (letters + spaces + other)
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct State {
    started: bool,
    fired: bool,
    /// Characters of the joined text (separators included).
    len: u64,
    last_scan: u64,
    /// Characters of the message (both streams, no separators).
    seen: u64,
    last_stream: Option<loopguard_core::Stream>,
    split: Splitter,
    whole: Whole,
    window: Window,
}

/// Tests: how [`VariationLoop`] feeds deltas to the splitter.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Feed {
    /// As built: [`VariationLoop::lines`], its fast path first.
    Lines,
    /// [`VariationLoop::lines_general`] only.
    General,
    /// Character by character (the reference form).
    PerChar,
}

/// The `variation-loop` detector (LG008).
#[derive(Debug)]
pub struct VariationLoop {
    settings: Settings,
    state: State,
    /// Tests: how deltas reach the splitter.
    #[cfg(test)]
    feed: Feed,
}

impl VariationLoop {
    /// A detector with `settings`.
    pub fn new(settings: Settings) -> VariationLoop {
        VariationLoop {
            settings,
            state: State::default(),
            #[cfg(test)]
            feed: Feed::Lines,
        }
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Clusters (whole-message mode) or segments (window mode) held: bounded by
    /// `max-clusters` or `window`.
    pub fn held(&self) -> usize {
        self.state.whole.clusters.len() + self.state.window.segs.len()
    }

    fn complete(&mut self) -> bool {
        let s = &self.settings;
        let st = &mut self.state;
        let mut open = false;
        let wrapped = st.split.wrapped;
        let added = match st.split.completed(s) {
            Some((text, len)) => {
                if s.window == 0 {
                    st.whole.add(s, text, len);
                } else {
                    if wrapped {
                        // The newest segment was a line of a wrapped paragraph: it goes
                        // before another joins (so that every feed judges the same window).
                        st.window.pop_back();
                    }
                    st.window.add(s, text, len, st.split.start);
                    open = s.prose_only && !loopguard_core::prose::ends_sentence(text);
                }
                true
            }
            None => false,
        };
        if added {
            st.split.wrapped = false;
        }
        st.split.finish();
        st.split.open = open;
        added
    }

    /// Evaluates the rule; returns (fraction, largest cluster, sample).
    fn judge(&self, tentative: bool) -> Option<(f64, u32, String)> {
        let s = &self.settings;
        if self.state.len < s.min_text as u64 {
            return None;
        }
        if s.window == 0 {
            let cur = if tentative {
                self.state.split.current(s)
            } else {
                None
            };
            let (fraction, size, rep) = self.state.whole.verdict(s, cur)?;
            (fraction >= s.threshold && size >= s.min_cluster.max(2) as u32)
                .then(|| (fraction, size, rep.to_owned()))
        } else {
            let (fraction, size, rep, novelty) = self.state.window.verdict(s)?;
            let coverage = self.state.window.coverage(self.state.seen);
            (fraction >= s.threshold
                && size >= s.min_cluster as u32
                && novelty <= s.max_novelty
                && coverage >= s.min_coverage)
                .then(|| (fraction, size, rep.to_owned()))
        }
    }

    fn fire(&mut self, verdict: (f64, u32, String), offset: u64, cx: &mut Cx<'_>) {
        let (fraction, size, rep) = verdict;
        self.state.fired = true;
        let key = format!(
            "{NAME}/{:016x}",
            Fingerprint::of_bytes(rep.as_bytes()).short()
        );
        let message = format!(
            "Repetition guard: {:.0}% of your recent short lines are rewordings of each other ({size} variants of the same line). \
             Stop restating the plan; carry out the next step and give its result.",
            fraction * 100.0
        );
        cx.report(
            Finding::new(NAME, Level::Critical, size, key, message)
                .with_offset(offset)
                .with_sample(&rep),
        );
        // Nothing more is needed for this message.
        self.state.whole = Whole::default();
        self.state.window = Window::default();
        self.state.split = Splitter::default();
    }

    /// A message starts.
    #[inline(never)]
    fn start(&mut self) {
        self.state = State {
            started: true,
            ..State::default()
        }
    }

    /// The last line completes when the message ends (window mode judges it; the seed does
    /// not scan at the end of a message).
    #[inline(never)]
    fn end(&mut self, cx: &mut Cx<'_>) {
        if self.state.started
            && !self.state.fired
            && self.settings.rescan_every == 0
            && self.complete()
        {
            if let Some(v) = self.judge(false) {
                let offset = self.state.seen;
                self.fire(v, offset, cx);
            }
        }
        self.state = State::default();
    }

    /// Counts `delta` when it is the most common delta of code, and says whether it was:
    /// 16 ASCII characters without a newline, in the stream of the previous delta, inside a
    /// segment whose text is not kept, with no cadence to keep. [`VariationLoop::delta`]
    /// would only count it too (through [`Splitter::skip`]), without a call or a register
    /// saved.
    #[inline(always)]
    fn counted(&mut self, stream: loopguard_core::Stream, delta: &str) -> bool {
        const ONES: u64 = u64::from_ne_bytes([1; 8]);
        const NL: u64 = u64::from_ne_bytes([b'\n'; 8]);
        const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
        let st = &mut self.state;
        if !st.split.unkept()
            || !st.started
            || st.fired
            || st.last_stream != Some(stream)
            || self.settings.rescan_every != 0
        {
            return false;
        }
        let Some((lo, hi)) = delta
            .as_bytes()
            .split_first_chunk::<8>()
            .and_then(|(lo, rest)| Some((lo, <&[u8; 8]>::try_from(rest).ok()?)))
        else {
            return false;
        };
        // In each half, a high bit: a byte that is not ASCII, or a zero byte of `v` (a
        // newline; `(v - 1) & !v` flags at least the first zero byte, none when there is
        // none).
        let flags = |w: u64| {
            let v = w ^ NL;
            v.wrapping_sub(ONES) & !v | w
        };
        let (lo, hi) = (u64::from_le_bytes(*lo), u64::from_le_bytes(*hi));
        if (flags(lo) | flags(hi)) & HIGH != 0 {
            return false;
        }
        st.split.chars += 16;
        st.len += 16;
        st.seen += 16;
        true
    }

    #[inline(never)]
    fn delta(&mut self, stream: loopguard_core::Stream, delta: &str, cx: &mut Cx<'_>) {
        if !self.state.started {
            self.state = State {
                started: true,
                ..State::default()
            };
        }
        if self.state.fired {
            return;
        }
        let base = cx.char_offset();
        let seed_cadence = self.settings.rescan_every > 0;
        let switched = self
            .state
            .last_stream
            .replace(stream)
            .is_some_and(|p| p != stream);
        if switched {
            // The seed joins blocks with "\n": a segment boundary that counts in the length.
            self.state.len += 1;
            let added = self.complete();
            // A block of the other stream opens a new paragraph: it continues no line.
            self.state.split.open = false;
            if added && !seed_cadence {
                if let Some(v) = self.judge(false) {
                    self.fire(v, base, cx);
                    return;
                }
            }
        }
        #[cfg(test)]
        let fed = match self.feed {
            Feed::Lines => self.lines(delta, base, cx),
            Feed::General => self.lines_general(delta, base, cx),
            Feed::PerChar => self.lines_per_char(delta, base, cx),
        };
        #[cfg(not(test))]
        let fed = self.lines(delta, base, cx);
        let Some(count) = fed else {
            return;
        };
        if seed_cadence
            && self.state.len - self.state.last_scan >= self.settings.rescan_every as u64
        {
            self.state.last_scan = self.state.len;
            if let Some(v) = self.judge(true) {
                self.fire(v, base + count, cx);
            }
        }
    }
}

impl VariationLoop {
    /// Feeds the characters of `delta` line by line: each piece between newlines goes to the
    /// splitter at once, and a newline completes the segment (judged unless the seed's
    /// cadence judges). Returns the characters fed, or `None` when the detector fired.
    #[inline(always)]
    fn lines(&mut self, delta: &str, base: u64, cx: &mut Cx<'_>) -> Option<u64> {
        let bytes = delta.as_bytes();
        let (Ends::Mask { word, newlines }, true) = Ends::of(bytes) else {
            return self.lines_general(delta, base, cx);
        };
        let at = self.state.seen;
        let done = self
            .state
            .split
            .skip(bytes, word, newlines, at, self.settings.prose_only);
        let n = done as u64;
        self.state.len += n;
        self.state.seen += n;
        if done >= bytes.len() {
            return Some(n);
        }
        let rest = delta.get(done..).unwrap_or("");
        let count = self.lines_general(rest, base + n, cx)?;
        Some(n + count)
    }

    /// [`VariationLoop::lines`] of any delta.
    fn lines_general(&mut self, delta: &str, base: u64, cx: &mut Cx<'_>) -> Option<u64> {
        let seed_cadence = self.settings.rescan_every > 0;
        let bytes = delta.as_bytes();
        let (mut ends, ascii) = Ends::of(bytes);
        let mut count = 0u64;
        let mut from = 0usize;
        loop {
            let nl = ends.next(bytes, from);
            let to = nl.unwrap_or(bytes.len());
            if to > from {
                // Newlines and the delta's ends are character boundaries.
                let piece = delta.get(from..to).unwrap_or("");
                let n = if ascii {
                    piece.len()
                } else {
                    piece.chars().count()
                };
                let at = self.state.seen;
                self.state
                    .split
                    .push_str(piece, n, &self.settings, at, ascii);
                let n = n as u64;
                count += n;
                self.state.len += n;
                self.state.seen += n;
            }
            let Some(i) = nl else {
                return Some(count);
            };
            count += 1;
            self.state.len += 1;
            self.state.seen += 1;
            if self.state.split.ends_unjudged() {
                // As `complete`, which would add nothing.
                self.state.split.finish_unjudged();
            } else if self.complete() && !seed_cadence {
                if let Some(v) = self.judge(false) {
                    self.fire(v, base + count, cx);
                    return None;
                }
            }
            from = i + 1;
        }
    }

    /// The character-by-character form of [`VariationLoop::lines`], kept as its test oracle.
    #[cfg(test)]
    fn lines_per_char(&mut self, delta: &str, base: u64, cx: &mut Cx<'_>) -> Option<u64> {
        let seed_cadence = self.settings.rescan_every > 0;
        let mut count = 0u64;
        for ch in delta.chars() {
            count += 1;
            self.state.len += 1;
            self.state.seen += 1;
            if ch == '\n' {
                if self.complete() && !seed_cadence {
                    if let Some(v) = self.judge(false) {
                        self.fire(v, base + count, cx);
                        return None;
                    }
                }
            } else {
                self.state
                    .split
                    .push(ch, &self.settings, self.state.seen - 1);
            }
        }
        Some(count)
    }
}

impl Detector for VariationLoop {
    loopguard_core::detector_basics!(
        name: NAME,
        interest: [MessageStart, TextDelta, MessageEnd],
        facts: NONE,
    );

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::TextDelta { stream, delta } => {
                #[cfg(test)]
                let fast = self.feed == Feed::Lines;
                #[cfg(not(test))]
                let fast = true;
                if !(fast && self.counted(*stream, delta)) {
                    self.delta(*stream, delta, cx);
                }
            }
            Event::MessageStart => self.start(),
            Event::MessageEnd => self.end(cx),
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward definition: every window of `k` lower-cased characters.
    fn reference(text: &str, k: usize) -> Vec<Shingle> {
        let chars: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        chars
            .windows(k)
            .map(|w| {
                w.iter()
                    .fold(0x243f_6a88_85a3_08d3u64, |acc, &c| mix(acc, c))
            })
            .collect()
    }

    #[test]
    fn shingles_match_the_windowed_definition() {
        for text in [
            "",
            "abcd",
            "Let me READ the file",
            "İstanbul ǅ ẞtraße",
            "ab",
        ] {
            for k in 1..=6 {
                let (set, seq) = shingles(text, k);
                let want = reference(text, k);
                assert_eq!(seq, want, "{text:?} k {k}");
                let mut want_set = want;
                want_set.sort_unstable();
                want_set.dedup();
                assert_eq!(set, want_set, "{text:?} k {k}");
            }
        }
        assert!(!shingles("Let me READ the file", 5).1.is_empty());
    }

    use loopguard_core::{OwnedEvent, Stream};
    use proptest::prelude::*;

    /// Pieces of lines that stress the splitter: near-duplicate prose (so the detector
    /// fires), code, Unicode and ASCII whitespace at both ends, lines around `max-segment`
    /// with whitespace before the overflowing character, fences, table rows, multi-byte
    /// characters.
    const PIECES: &[&str] = &[
        "Let me read the signature end to see the return type.",
        "Let me read the signature end again to see the type.",
        "Now let me read the signature end to check the type.",
        "    let x = foo(a, b);",
        "\t\u{3000} Let me check the cache\u{a0}\u{2003} ",
        "```rust",
        "```",
        "| a | b |",
        "ünïcödé wörds ärë hérë tøø, lét më réad thëm",
        "                    ",
        "\n",
        "\n\n",
        " ",
        "\u{85}",
        "This line is long enough to reach the segment limit of one hundred characters, and then",
        "                                 some more after spaces",
        "x",
        "        // a comment on the code below, indented",
        "    Some(x) => x,",
        "  \t  mixed indentation",
        "\x0b\x0c\r",
        "élan",
        // A prose line that closes no sentence, and lines that continue it (hard wrap).
        "Let me read the signature end to see the",
        "return type of the solver.",
        "über den Rückgabetyp des Lösers.",
    ];

    fn arb_text() -> impl Strategy<Value = String> {
        prop::collection::vec((0..PIECES.len(), any::<bool>()), 0..80).prop_map(|v| {
            v.iter()
                .map(|&(i, nl)| format!("{}{}", PIECES[i], if nl { "\n" } else { "" }))
                .collect()
        })
    }

    /// Events of one or two messages: deltas of random sizes, switching stream at random.
    fn events(text: &str, cuts: &[(usize, bool)]) -> Vec<OwnedEvent> {
        let chars: Vec<char> = text.chars().collect();
        let mut out = vec![OwnedEvent::MessageStart];
        let mut i = 0;
        for &(len, thinking) in cuts.iter().cycle().take(chars.len() + 1) {
            if i >= chars.len() {
                break;
            }
            let end = (i + len).min(chars.len());
            out.push(OwnedEvent::TextDelta {
                stream: if thinking {
                    Stream::Thinking
                } else {
                    Stream::Text
                },
                delta: chars[i..end].iter().collect(),
            });
            i = end;
        }
        out.push(OwnedEvent::MessageEnd);
        out
    }

    fn findings(settings: &Settings, feed: Feed, events: &[OwnedEvent]) -> Vec<String> {
        let mut d = VariationLoop::new(settings.clone());
        d.feed = feed;
        loopguard_testkit::run(Box::new(d), events)
            .into_iter()
            .map(|(i, f)| format!("{i} {f:?}"))
            .collect()
    }

    /// The findings and the detector's state after each event.
    fn trace(settings: &Settings, feed: Feed, events: &[OwnedEvent]) -> Vec<String> {
        let mut d = VariationLoop::new(settings.clone());
        d.feed = feed;
        let mut bus = loopguard_core::Bus::new(vec![Box::new(d)]);
        events
            .iter()
            .map(|e| {
                let found = bus.observe(&e.as_event());
                format!("{found:?} {:?}", bus.snapshot().ok())
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Feeding the splitter a line piece at a time decides exactly as feeding it
        /// character by character, for the default and the seed preset and a short
        /// `max-segment`.
        #[test]
        fn line_pieces_decide_as_characters(
            text in arb_text(),
            cuts in prop::collection::vec(
                (prop_oneof![Just(16usize), 1usize..40], prop::bool::weighted(0.1)),
                1..8,
            ),
            preset in 0u8..3,
        ) {
            let settings = match preset {
                0 => Settings::default(),
                1 => Settings::pi_repetition_guard(),
                _ => Settings { max_segment: 20, min_segment: 2, ..Settings::pi_repetition_guard() },
            };
            let ev = events(&text, &cuts);
            prop_assert_eq!(
                findings(&settings, Feed::Lines, &ev),
                findings(&settings, Feed::PerChar, &ev)
            );
        }

        /// The fast path of `lines` leaves, after every event, exactly the state (and the
        /// findings) of the general path, on deltas of random lengths (mostly 16 characters,
        /// the fast path's), ASCII or not, cut anywhere in lines, blank lines and indentation.
        #[test]
        fn the_fast_path_is_the_general_path(
            text in arb_text(),
            cuts in prop::collection::vec(
                (prop_oneof![3 => Just(16usize), 1 => 1usize..40], prop::bool::weighted(0.05)),
                1..8,
            ),
            preset in 0u8..3,
        ) {
            let settings = match preset {
                0 => Settings::default(),
                1 => Settings::pi_repetition_guard(),
                _ => Settings { rescan_every: 50, window: 0, ..Settings::default() },
            };
            let ev = events(&text, &cuts);
            prop_assert_eq!(
                trace(&settings, Feed::Lines, &ev),
                trace(&settings, Feed::General, &ev)
            );
        }
    }

    #[test]
    fn the_oracle_comparison_sees_findings() {
        // The comparison above is not vacuous: this stream fires in both forms.
        let text = "Let me read the signature end to see the return type.\n".repeat(12);
        let ev = events(&text, &[(16, false)]);
        for s in [Settings::default(), Settings::pi_repetition_guard()] {
            let a = findings(&s, Feed::Lines, &ev);
            assert!(!a.is_empty());
            assert_eq!(a, findings(&s, Feed::PerChar, &ev));
            assert_eq!(a, findings(&s, Feed::General, &ev));
        }
    }

    /// Characters around the edges of the byte tests: every ASCII whitespace, bytes next to
    /// them, Unicode whitespace, multi-byte letters.
    const EDGE: &[char] = &[
        ' ', '\t', '\n', '\x0b', '\x0c', '\r', '\x08', '\x0e', '\x1f', '!', 'a', 'L', '#',
        '\u{85}', '\u{a0}', '\u{2003}', '\u{3000}', 'é', '我', '\u{8a}',
    ];

    fn arb_edge() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![4 => Just(' '), 1 => prop::sample::select(EDGE)],
            0..40,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The byte-wise `trim_start` is `str::trim_start`.
        #[test]
        fn trim_start_is_the_unicode_trim(text in arb_edge()) {
            prop_assert_eq!(trim_start(&text), text.trim_start());
        }

        /// The line ends of a delta, at once or searched, are its newlines in order, and its
        /// ASCII flag is `is_ascii`.
        #[test]
        fn ends_are_the_newlines(text in arb_edge()) {
            let bytes = text.as_bytes();
            let (mut ends, ascii) = Ends::of(bytes);
            prop_assert_eq!(ascii, text.is_ascii());
            let want: Vec<usize> = bytes
                .iter()
                .enumerate()
                .filter(|(_, &c)| c == b'\n')
                .map(|(i, _)| i)
                .collect();
            prop_assert_eq!(ends.none(), want.is_empty() && bytes.len() <= 16);
            let mut got = Vec::new();
            let mut from = 0;
            while let Some(i) = ends.next(bytes, from) {
                got.push(i);
                from = i + 1;
            }
            prop_assert_eq!(got, want);
        }
    }

    /// Characters of code marks and of prose, whitespace (trailing too) and inline code.
    const MARKS: &[&str] = &[
        "{", "}", "|", "_", "=", ">", ":", "&", "[", "]", "(", ")", "/", "<", "!", "+", "-", "\\",
        "n", ";", "`", "#", " ", "  ", "\t", "\u{a0}", "\u{3000}", "a", "Let", "é", "7", ".",
    ];

    /// Words of a sentence.
    const WORDS: &[&str] = &[
        " me", " read", " the", " file", " again", " now", " to", " see",
    ];

    /// Sentences (opening with a capital) with code marks and whitespace among their words.
    fn arb_marks() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            3 => prop::sample::select(WORDS),
            2 => prop::sample::select(MARKS),
        ];
        (any::<bool>(), prop::collection::vec(piece, 0..16))
            .prop_map(|(cap, v)| format!("{}{}", if cap { "Let" } else { "" }, v.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// A segment's text with a code mark is no prose however the line goes on and ends,
        /// and the marks found piece by piece are the marks found at once.
        #[test]
        fn a_code_mark_rules_prose_out(head in arb_marks(), tail in arb_marks(), cut in 0usize..64) {
            let head = head.trim_start();
            let line = format!("{head}{tail}");
            if code_mark(head.as_bytes(), 0) {
                prop_assert!(!is_prose(line.trim_end()), "{line:?}");
            }
            let b = line.as_bytes();
            let cut = cut.min(b.len());
            prop_assert_eq!(
                code_mark(b, 0),
                code_mark(&b[..cut], 0) || code_mark(b, cut)
            );
        }
    }

    /// Every run of up to three marks in a sentence: a code mark rules prose out however the
    /// line ends.
    #[test]
    fn a_code_mark_rules_prose_out_whatever_follows() {
        let mut marked = 0;
        for a in MARKS {
            for b in MARKS {
                for c in MARKS {
                    let head = format!("Let me read {a}{b}{c}");
                    if !code_mark(head.as_bytes(), 0) {
                        continue;
                    }
                    marked += 1;
                    for tail in [
                        "",
                        " ",
                        "\u{3000}",
                        "\t",
                        " the file again.",
                        "x",
                        ")",
                        "]",
                        "n",
                    ] {
                        let line = format!("{head}{tail}");
                        assert!(!is_prose(line.trim_end()), "{line:?}");
                    }
                }
            }
        }
        assert!(marked > 1000);
    }

    #[test]
    fn code_marks() {
        for code in [
            "Some(x",
            "a::b",
            "x => y",
            "f();",
            "Vec<u8>::new",
            "A {",
            "my_var",
            "#[t",
        ] {
            assert!(code_mark(code.as_bytes(), 0), "{code}");
        }
        for text in [
            "Let me read it (again).",
            "Call `my_var` now",
            "Some( x",
            "a = b",
            "`",
        ] {
            assert!(!code_mark(text.as_bytes(), 0), "{text}");
        }
    }

    #[test]
    fn current_is_the_trimmed_segment() {
        let s = Settings::default();
        let mut sp = Splitter::default();
        for (i, ch) in "  Let me read the signature end again.  \t "
            .chars()
            .enumerate()
        {
            sp.push(ch, &s, i as u64);
        }
        assert_eq!(
            sp.current(&s),
            Some(("Let me read the signature end again.", 36))
        );
        assert_eq!(sp.start, 2);
    }

    /// A prose line that closes no sentence leaves the window when the next line opens in
    /// lower case (it continues it); a line that closes a sentence, or one followed by a
    /// capital, a blank line or the other stream, stays. Every feed keeps the same window.
    #[test]
    fn a_line_that_the_next_continues_leaves_the_window() {
        let held = |text: &str, feed: Feed, settings: Settings| {
            let mut d = VariationLoop::new(settings);
            d.feed = feed;
            let mut bus = loopguard_core::Bus::new(vec![Box::new(d)]);
            bus.observe(&Event::MessageStart);
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(16) {
                let delta: String = piece.iter().collect();
                bus.observe(&Event::TextDelta {
                    stream: loopguard_core::Stream::Text,
                    delta: &delta,
                });
            }
            let snap = bus.snapshot().ok().unwrap_or_default();
            snap.to_string().matches("\"novel\"").count()
        };
        let open = "Permission is granted to copy and change this component\n";
        let closed = "Permission is granted to copy and change this component.\n";
        let next = "Debian systems keep the complete text of the License here.\n";
        for feed in [Feed::Lines, Feed::General, Feed::PerChar] {
            let d = Settings::default;
            // Continued: the open line goes when the line after its continuation joins.
            let t = format!("{open}  under the terms of the License as published\n{next}");
            assert_eq!(held(&t, feed, d()), 1, "{feed:?}: {t}");
            for t in [
                format!("{closed}under the terms of the License as published\n{next}"),
                format!("{open}\nunder the terms of the License as published\n{next}"),
                format!("{open}{next}"),
            ] {
                assert_eq!(held(&t, feed, d()), 2, "{feed:?}: {t}");
            }
            let t = format!("{open}Under the terms of the License as published\n{next}");
            assert_eq!(held(&t, feed, d()), 3, "{feed:?}: {t}");
            // The seed's rule keeps every line.
            let t = format!("{open}under the terms of the License as published\n{next}");
            let seedlike = Settings {
                prose_only: false,
                ..d()
            };
            assert_eq!(held(&t, feed, seedlike), 3, "{feed:?}: {t}");
        }
    }
}
