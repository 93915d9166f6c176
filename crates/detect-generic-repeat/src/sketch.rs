//! A bounded similarity sketch of a tool result, for the near-duplicate rule.
//!
//! The text is cut to its first [`HEAD_BYTES`] and last [`TAIL_BYTES`] bytes (the whole text
//! when it is shorter than both together), every run of whitespace becomes one space, and the
//! set of its character 5-grams ("shingles") is hashed. The sketch keeps the [`SKETCH_SIZE`]
//! smallest distinct shingle hashes (a bottom-k MinHash). Two sketches estimate the Jaccard
//! similarity of the two shingle sets: exactly when a set has fewer than `SKETCH_SIZE`
//! shingles, within a few hundredths otherwise.
//!
//! Digits are kept on purpose: counters that advance (sizes, percentages, test counts) are
//! what progress looks like, and the tool's own normaliser already removed the volatile
//! fields that are not progress. Content repeated inside one result adds no new shingle, so
//! a file that grows by a duplicate of a line it already holds stays similar.
//!
//! Work per result is bounded by the cut (`HEAD_BYTES + TAIL_BYTES` characters at most), and
//! a sketch holds at most `SKETCH_SIZE` integers.

use serde::{Deserialize, Serialize};

/// Bytes read from the start of a result.
pub const HEAD_BYTES: usize = 6 * 1024;
/// Bytes read from the end of a result (when it is longer than `HEAD_BYTES + TAIL_BYTES`).
pub const TAIL_BYTES: usize = 2 * 1024;
/// Characters per shingle.
pub const SHINGLE: usize = 5;
/// Hashes kept per sketch.
pub const SKETCH_SIZE: usize = 256;

/// The bottom-k sketch of one result's shingle set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sketch {
    /// The smallest distinct shingle hashes, ascending; at most [`SKETCH_SIZE`].
    mins: Vec<u32>,
}

impl Sketch {
    /// The sketch of `text` (empty for a text of whitespace only).
    pub fn of_text(text: &str) -> Sketch {
        let (head, tail) = cut(text);
        Sketch::of_cut(head, tail)
    }

    /// The sketch of a text already cut into its head and tail (`""`: no tail).
    fn of_cut(head: &str, tail: &str) -> Sketch {
        let mut hashes: Vec<u32> = Vec::new();
        shingle_hashes(head, &mut hashes);
        shingle_hashes(tail, &mut hashes);
        Sketch {
            mins: bottom_k(hashes),
        }
    }

    /// The sketch of the runs of three consecutive lines of `text` (each line trimmed, blank
    /// lines left out), when it has at least `min_lines` such lines (and three): the order
    /// of its lines, where a shingle sketch reads its characters.
    pub fn of_line_runs(text: &str, min_lines: usize) -> Option<Sketch> {
        let mut lines = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| u64::from(hash_chars(l.chars())));
        let (mut a, mut b) = (lines.next()?, lines.next()?);
        let mut hashes: Vec<u32> = Vec::new();
        let mut n = 2;
        for c in lines {
            n += 1;
            hashes.push(mix64(
                (a << 32 | b).rotate_left(7) ^ c.wrapping_mul(0x9E37_79B9),
            ));
            (a, b) = (b, c);
        }
        (n >= min_lines.max(3)).then(|| Sketch {
            mins: bottom_k(hashes),
        })
    }

    /// Whether the result had no shingle (no text but whitespace).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.mins.is_empty()
    }

    /// The estimated Jaccard similarity as `(shared, sampled)`: of the `sampled` smallest
    /// hashes of the union of both sets, `shared` belong to both. Two empty sketches are
    /// identical: `(1, 1)`.
    pub fn overlap(&self, other: &Sketch) -> (u32, u32) {
        let (a, b) = (&self.mins, &other.mins);
        if a.is_empty() && b.is_empty() {
            return (1, 1);
        }
        let (mut i, mut j) = (0usize, 0usize);
        let (mut shared, mut sampled) = (0u32, 0u32);
        while (sampled as usize) < SKETCH_SIZE {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => i += 1,
                (Some(_), Some(_)) => j += 1,
                (Some(_), None) => i += 1,
                (None, Some(_)) => j += 1,
                (None, None) => break,
            }
            sampled += 1;
        }
        (shared, sampled)
    }

    /// The estimated Jaccard similarity in `[0, 1]`.
    #[cfg(test)]
    pub fn similarity(&self, other: &Sketch) -> f64 {
        let (shared, sampled) = self.overlap(other);
        if sampled == 0 {
            return 0.0;
        }
        f64::from(shared) / f64::from(sampled)
    }

    /// Whether the estimated similarity is at least `permille / 1000` (integer arithmetic,
    /// so the verdict is the same on every platform).
    pub fn similar(&self, other: &Sketch, permille: u32) -> bool {
        let (shared, sampled) = self.overlap(other);
        u64::from(shared) * 1000 >= u64::from(permille) * u64::from(sampled)
    }
}

/// The parts of `text` a sketch reads: the whole text when it is short, else its head and its
/// tail.
pub(crate) fn cut(text: &str) -> (&str, &str) {
    if text.len() <= HEAD_BYTES + TAIL_BYTES {
        return (text, "");
    }
    let head_end = floor_boundary(text, HEAD_BYTES);
    let tail_start = ceil_boundary(text, text.len().saturating_sub(TAIL_BYTES));
    (
        text.get(..head_end).unwrap_or_default(),
        text.get(tail_start..).unwrap_or_default(),
    )
}

/// The sketch of one result, computed the first time it is compared: most results are never
/// compared with the next (the next call is another one), so only their cut text is kept
/// (at most `HEAD_BYTES + TAIL_BYTES` bytes, in buffers reused from result to result).
/// Serialises as the [`Sketch`] itself.
#[derive(Clone, Debug, Default)]
pub struct LazySketch {
    head: String,
    tail: String,
    /// The cut text is kept (the sketch was not given).
    kept: bool,
    sketch: std::cell::OnceCell<Sketch>,
}

impl LazySketch {
    /// Keeps `text` (cut) for a sketch computed later, or `sketch` when it is known already.
    pub fn set(&mut self, text: &str, sketch: Option<Sketch>) {
        self.head.clear();
        self.tail.clear();
        self.sketch = std::cell::OnceCell::new();
        self.kept = sketch.is_none();
        match sketch {
            Some(s) => {
                let _ = self.sketch.set(s);
            }
            None => {
                let (head, tail) = cut(text);
                self.head.push_str(head);
                self.tail.push_str(tail);
            }
        }
    }

    /// The kept cut text (its head and tail), unless only the sketch was given.
    pub fn text(&self) -> Option<(&str, &str)> {
        self.kept
            .then_some((self.head.as_str(), self.tail.as_str()))
    }

    /// The sketch (computed now if it was not yet).
    pub fn get(&self) -> &Sketch {
        self.sketch
            .get_or_init(|| Sketch::of_cut(&self.head, &self.tail))
    }
}

impl Serialize for LazySketch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> Deserialize<'de> for LazySketch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let sketch = Sketch::deserialize(d)?;
        let mut lazy = LazySketch::default();
        lazy.set("", Some(sketch));
        Ok(lazy)
    }
}

/// Appends the hash of every 5-character shingle of `text` with whitespace runs collapsed
/// to one space (a shorter text is one shingle).
fn shingle_hashes(text: &str, out: &mut Vec<u32>) {
    let mut norm: Vec<char> = Vec::with_capacity(text.len().min(HEAD_BYTES + TAIL_BYTES));
    let mut space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space {
            norm.push(' ');
            space = false;
        }
        norm.push(c);
    }
    if norm.is_empty() {
        return;
    }
    if norm.len() < SHINGLE {
        out.push(hash_chars(norm.iter().copied()));
        return;
    }
    out.extend(norm.windows(SHINGLE).map(|w| hash_chars(w.iter().copied())));
}

/// The `SKETCH_SIZE` smallest distinct values, ascending. Selects a prefix in linear time
/// first; only when repeats leave that prefix short of distinct values is everything sorted.
fn bottom_k(mut v: Vec<u32>) -> Vec<u32> {
    let cut = SKETCH_SIZE * 4;
    if v.len() > cut {
        // v[..cut] now holds the `cut` smallest values (with repeats), in any order.
        v.select_nth_unstable(cut);
        let mut prefix: Vec<u32> = v.get(..cut).unwrap_or_default().to_vec();
        prefix.sort_unstable();
        prefix.dedup();
        if prefix.len() >= SKETCH_SIZE {
            prefix.truncate(SKETCH_SIZE);
            return prefix;
        }
    }
    v.sort_unstable();
    v.dedup();
    v.truncate(SKETCH_SIZE);
    v
}

/// FNV-1a over the characters' scalar values, then a 64-bit finaliser; the high half.
fn hash_chars(chars: impl IntoIterator<Item = char>) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in chars {
        h ^= u64::from(u32::from(c));
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    mix64(h)
}

/// A 64-bit finaliser; the high half.
fn mix64(mut h: u64) -> u32 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h >> 32) as u32
}

/// The largest char boundary at or below `i`.
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary at or above `i`.
fn ceil_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_runs_read_the_order_of_lines() {
        let text = "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\nepsilon = 5\n";
        let runs = Sketch::of_line_runs(text, 4).expect("five lines");
        assert_eq!(runs.mins.len(), 3);
        // Indentation, blank lines and line endings do not count.
        let spaced = "  alpha = 1\r\n\n beta = 2\n\tgamma = 3\ndelta = 4\n\nepsilon = 5";
        assert_eq!(Sketch::of_line_runs(spaced, 4), Some(runs.clone()));
        // The same lines in another order share no run.
        let shuffled = "beta = 2\nalpha = 1\ndelta = 4\ngamma = 3\nepsilon = 5\n";
        let other = Sketch::of_line_runs(shuffled, 4).expect("five lines");
        assert_eq!(runs.overlap(&other).0, 0);
        // Too few lines: nothing to compare.
        assert_eq!(Sketch::of_line_runs("a\nb\nc\n", 4), None);
        assert_eq!(Sketch::of_line_runs("a\nb\n", 0), None);
        assert!(Sketch::of_line_runs("a\nb\nc\n", 3).is_some());
    }

    #[test]
    fn identical_texts_are_fully_similar() {
        let a = Sketch::of_text("the same output\nline two");
        assert_eq!(a.similarity(&a.clone()), 1.0);
        assert!(a.similar(&a, 1000));
    }

    #[test]
    fn whitespace_runs_do_not_matter() {
        let a = Sketch::of_text("a  b\n\n c\t d");
        let b = Sketch::of_text("a b c d ");
        assert_eq!(a, b);
    }

    #[test]
    fn disjoint_texts_share_nothing() {
        let a = Sketch::of_text("abcdefghij");
        let b = Sketch::of_text("klmnopqrst");
        assert_eq!(a.overlap(&b).0, 0);
        assert!(!a.similar(&b, 1));
    }

    #[test]
    fn empty_and_short_texts() {
        let e = Sketch::of_text(" \n\t");
        assert!(e.is_empty());
        assert!(e.similar(&Sketch::of_text(""), 1000));
        let short = Sketch::of_text("ok");
        assert!(!short.is_empty());
        assert!(!short.similar(&e, 1));
        assert!(short.similar(&Sketch::of_text(" ok\n"), 1000));
    }

    /// The exact Jaccard similarity of the shingle sets the sketches sample.
    fn exact(a: &str, b: &str) -> f64 {
        let set = |t: &str| {
            let mut v = Vec::new();
            if t.len() <= HEAD_BYTES + TAIL_BYTES {
                shingle_hashes(t, &mut v);
            } else {
                shingle_hashes(&t[..floor_boundary(t, HEAD_BYTES)], &mut v);
                shingle_hashes(&t[ceil_boundary(t, t.len() - TAIL_BYTES)..], &mut v);
            }
            v.into_iter().collect::<std::collections::HashSet<u32>>()
        };
        let (a, b) = (set(a), set(b));
        a.intersection(&b).count() as f64 / a.union(&b).count() as f64
    }

    #[test]
    fn the_estimate_is_close_on_large_sets() {
        // 2 000 distinct words (14 KB); the second text changes 300 words inside the head.
        let words: Vec<String> = (0..2000).map(|i| format!("w{i:05}")).collect();
        let a = words.join(" ");
        for (from, n) in [(600, 300), (100, 50), (0, 700)] {
            let mut b_words = words.clone();
            for w in b_words.iter_mut().skip(from).take(n) {
                *w = format!("v{}", &w[1..]).chars().rev().collect();
            }
            let b = b_words.join(" ");
            let est = Sketch::of_text(&a).similarity(&Sketch::of_text(&b));
            let truth = exact(&a, &b);
            eprintln!("estimate {est}, exact {truth}");
            assert!((est - truth).abs() < 0.08, "estimate {est}, exact {truth}");
        }
    }

    #[test]
    fn bottom_k_keeps_the_smallest_distinct_values() {
        // Many repeats of few values (the slow path) and many distinct values (the fast one).
        let few: Vec<u32> = (0..5000u32).map(|i| 1000 - i % 300).collect();
        let mut want: Vec<u32> = (701..=1000).collect();
        want.truncate(SKETCH_SIZE);
        assert_eq!(bottom_k(few), want);
        let many: Vec<u32> = (0..5000u32)
            .rev()
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let mut all = many.clone();
        all.sort_unstable();
        all.truncate(SKETCH_SIZE);
        assert_eq!(bottom_k(many), all);
    }

    #[test]
    fn the_cut_respects_char_boundaries() {
        let text = "é".repeat(10_000);
        let s = Sketch::of_text(&text);
        assert_eq!(s.mins.len(), 1);
    }

    #[test]
    fn a_lazy_sketch_is_the_sketch_of_its_text_and_serialises_as_one() {
        let long = "abc def ghi ".repeat(2000);
        for text in ["", "ok", "the same output\nline two", long.as_str()] {
            let mut lazy = LazySketch::default();
            lazy.set("something else first", None);
            lazy.set(text, None);
            assert_eq!(lazy.get(), &Sketch::of_text(text));
            let json = serde_json::to_value(&lazy).unwrap();
            assert_eq!(json, serde_json::to_value(Sketch::of_text(text)).unwrap());
            let back: LazySketch = serde_json::from_value(json).unwrap();
            assert_eq!(back.get(), &Sketch::of_text(text));
        }
        assert_eq!(LazySketch::default().get(), &Sketch::default());
    }

    #[test]
    fn repeated_content_adds_no_shingle() {
        let one = "        self.query = None  # Ignore the rawQuery parameter\n";
        let a = Sketch::of_text(&one.repeat(3));
        let b = Sketch::of_text(&one.repeat(4));
        assert_eq!(a, b);
    }
}
