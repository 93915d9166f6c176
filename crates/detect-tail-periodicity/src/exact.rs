//! The exact online engine: after every appended character it knows whether the tail of the
//! sequence is `copies` contiguous copies of one unit whose length lies in `[min, max]`, and
//! reports the smallest such unit length.
//!
//! # How it works
//!
//! Unit lengths are split into levels `[lo, 2·lo)` (`lo = min, 2·min, 4·min, …`, the last one
//! cut at `max`). Each level keeps a checkpoint every `h = lo/2` characters. A tail of `k`
//! copies of a unit of length `q ≥ lo` ending at `n` spans the last `(k-1)·q` positions
//! `j` with `s[j] = s[j-q]`; that span is longer than `h`, so it contains the level's latest
//! checkpoint `c` (with `n - h ≤ c < n`). The condition splits at `c`:
//!
//! - backwards: the longest common suffix `A(q)` of `s[..c]` and `s[..c-q]` must be at least
//!   `(k-1)·q - (n - c)`. It is computed once, at the checkpoint, from characters already
//!   known; since `n - c ≤ h`, only lengths with `A(q) ≥ (k-1)·q - h` can ever qualify, and
//!   only those become *candidates*;
//! - forwards: every character from `c` on must equal the one `q` before it. Each new
//!   character is compared once per live candidate; a mismatch drops the candidate.
//!
//! Both parts are exact character comparisons, so no hash collision can cause a wrong
//! answer. At a checkpoint the engine compares, for each `q` of the level, characters until
//! the first mismatch; on ordinary text that is one or two comparisons per `q`, `lo`
//! values per `lo/2` characters, i.e. about two comparisons per character per level. If a
//! checkpoint would cost more than a small multiple of that (highly repetitive text), the
//! engine switches to a Z-function over the reversed window, whose cost is linear in the
//! window: the work per character stays bounded by a constant times the number of levels
//! (`log2(max/min) + 1`, 12 for the defaults), whatever the message length.
//!
//! Live candidates are few: while no repeat has been reported, a checkpoint yields at most a
//! handful of candidates per level (occurrences of a non-periodic string of length `lo/2`
//! within a window of length `lo` are at least `lo/4` apart).
//!
//! Memory is a ring of the last `copies·max + max/2` characters (allocated as the message
//! grows, never beyond that cap) plus the candidate lists.

use serde::{Deserialize, Serialize};

/// A ring buffer of the most recent characters, indexed by absolute position.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Ring {
    data: Vec<u32>,
    /// The largest capacity (a power of two).
    limit: usize,
}

impl Ring {
    pub(crate) fn new(keep: usize) -> Ring {
        Ring {
            data: Vec::new(),
            limit: keep.max(2).next_power_of_two(),
        }
    }

    /// The character at absolute position `i` (must lie in the retained window; a value no
    /// character has is returned otherwise, never a panic).
    #[inline]
    pub(crate) fn get(&self, i: u64) -> u32 {
        let mask = self.data.len().wrapping_sub(1);
        self.data
            .get((i as usize) & mask)
            .copied()
            .unwrap_or(u32::MAX)
    }

    /// Stores the character at absolute position `i` (positions arrive in order).
    #[inline]
    pub(crate) fn put(&mut self, i: u64, v: u32) {
        let len = self.data.len();
        if (i as usize) >= len && len < self.limit {
            // Not wrapped yet: positions 0..len sit at their own index. Grow (double).
            let new_len = (len * 2).max(64).min(self.limit);
            self.data.resize(new_len, 0);
        }
        let mask = self.data.len().wrapping_sub(1);
        if let Some(slot) = self.data.get_mut((i as usize) & mask) {
            *slot = v;
        }
    }

    /// Allocated characters (for memory accounting in tests).
    pub(crate) fn capacity(&self) -> usize {
        self.data.len()
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Level {
    lo: u64,
    /// Exclusive.
    hi: u64,
    step: u64,
    checkpoint: u64,
    /// The next checkpoint position.
    next: u64,
    /// (unit length, backward match length at the checkpoint)
    cands: Vec<(u64, u64)>,
}

/// The exact online tail-repeat finder.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Finder {
    copies: u64,
    /// A second, larger copy count answered by the same candidates (0 = none).
    extra: u64,
    n: u64,
    ring: Ring,
    levels: Vec<Level>,
    #[serde(skip)]
    scratch: Vec<u32>,
    #[serde(skip)]
    z: Vec<u32>,
}

impl Finder {
    /// A finder for units of `min..=max` characters repeated `copies` times (`min ≥ 1`,
    /// `max ≥ min`, `copies ≥ 2`; out-of-range values are clamped).
    pub fn new(min: usize, max: usize, copies: usize) -> Finder {
        Finder::with_extra(min, max, copies, 0)
    }

    /// As [`Finder::new`], also answering for `extra` copies (`extra > copies`, else
    /// ignored) through [`Finder::push2`].
    pub fn with_extra(min: usize, max: usize, copies: usize, extra: usize) -> Finder {
        let min = min.max(1) as u64;
        let max = (max as u64).max(min);
        let copies = copies.max(2) as u64;
        let extra = if (extra as u64) > copies {
            extra as u64
        } else {
            0
        };
        let most = copies.max(extra);
        let mut levels = Vec::new();
        let mut lo = min;
        while lo <= max {
            let hi = (lo * 2).min(max + 1);
            levels.push(Level {
                lo,
                hi,
                step: (lo / 2).max(1),
                checkpoint: 0,
                next: 0,
                cands: Vec::new(),
            });
            lo *= 2;
        }
        let keep = (most * max + max / 2 + 4) as usize;
        Finder {
            copies,
            extra,
            n: 0,
            ring: Ring::new(keep),
            levels,
            scratch: Vec::new(),
            z: Vec::new(),
        }
    }

    /// Characters appended so far.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether nothing was appended yet.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Characters held in memory (bounded by `copies·max + max/2`, rounded up to a power of
    /// two).
    pub fn buffered(&self) -> usize {
        self.ring.capacity()
    }

    /// The last `len` characters (fewer if not available), as a string; symbols that are not
    /// characters (separators) are dropped.
    pub fn tail_string(&self, len: usize) -> String {
        let len = (len as u64).min(self.n);
        (self.n - len..self.n)
            .filter_map(|i| char::from_u32(self.ring.get(i)))
            .collect()
    }

    /// Appends one symbol (a character's scalar value, or a separator above `char::MAX`) and
    /// returns the smallest unit length `q` such that the sequence now ends with `copies`
    /// copies of a unit of length `q`, if any.
    pub fn push(&mut self, sym: u32) -> Option<u64> {
        self.push2(sym).0
    }

    /// As [`Finder::push`], also returning the smallest unit with `extra` copies.
    pub fn push2(&mut self, sym: u32) -> (Option<u64>, Option<u64>) {
        let i = self.n;
        let k = self.copies;
        // New checkpoints see only the characters before `i`.
        for li in 0..self.levels.len() {
            let due = self.levels.get(li).is_some_and(|l| l.next == i);
            if due {
                self.checkpoint(li, i);
            }
        }
        self.ring.put(i, sym);
        self.n = i + 1;
        let n = self.n;
        let ring = &self.ring;
        let extra = self.extra;
        let mut best: Option<u64> = None;
        let mut best_extra: Option<u64> = None;
        for level in &mut self.levels {
            if level.cands.is_empty() {
                continue;
            }
            let reach = n - level.checkpoint;
            level.cands.retain(|&(q, a)| {
                if sym != ring.get(i - q) {
                    return false;
                }
                if a + reach >= (k - 1) * q && best.is_none_or(|b| q < b) {
                    best = Some(q);
                }
                if extra > 0 && a + reach >= (extra - 1) * q && best_extra.is_none_or(|b| q < b) {
                    best_extra = Some(q);
                }
                true
            });
        }
        (best, best_extra)
    }

    fn checkpoint(&mut self, li: usize, c: u64) {
        let k = self.copies;
        let kk = self.copies.max(self.extra);
        let Some(level) = self.levels.get_mut(li) else {
            return;
        };
        level.cands.clear();
        level.checkpoint = c;
        level.next = c + level.step;
        let (lo, hi, h) = (level.lo, level.hi, level.step);
        if k * lo > c + h {
            return;
        }
        let ring = &self.ring;
        // Direct comparisons first, with a budget; a Z-function bounds the bad cases.
        let budget = 6 * (hi - lo) + 64;
        let mut spent = 0u64;
        let mut direct_ok = true;
        let mut found: Vec<(u64, u64)> = Vec::new();
        let last = ring.get(c.wrapping_sub(1));
        for q in lo..hi {
            if k * q > c + h {
                break;
            }
            // Quick reject: a candidate needs a backward match unless `need` is 0.
            if (k - 1) * q > h && q < c && ring.get(c - q - 1) != last {
                spent += 1;
                continue;
            }
            let cap = (kk - 1) * q - 1;
            let need = ((k - 1) * q).saturating_sub(h);
            let limit = cap.min(c.saturating_sub(q));
            let mut a = 0u64;
            while a < limit && ring.get(c - 1 - a) == ring.get(c - q - 1 - a) {
                a += 1;
            }
            spent += a + 1;
            if a >= need {
                found.push((q, a));
            }
            if spent > budget {
                direct_ok = false;
                break;
            }
        }
        if direct_ok {
            level.cands = found;
            return;
        }
        // Z-function over the reversed window R[j] = s[c-1-j].
        let len = c.min(kk * (hi - 1)) as usize;
        self.scratch.clear();
        self.scratch
            .extend((0..len as u64).map(|j| ring.get(c - 1 - j)));
        z_function(&self.scratch, hi as usize, &mut self.z);
        let mut out = Vec::new();
        for q in lo..hi {
            if k * q > c + h || q as usize >= len {
                break;
            }
            let cap = (kk - 1) * q - 1;
            let need = ((k - 1) * q).saturating_sub(h);
            let a = u64::from(self.z.get(q as usize).copied().unwrap_or(0)).min(cap);
            if a >= need {
                out.push((q, a));
            }
        }
        if let Some(level) = self.levels.get_mut(li) {
            level.cands = out;
        }
    }
}

/// The default rule on top of [`Finder`]s: units of at least `long` characters need `copies`
/// copies; shorter units need `copies` copies *and* at least `root_copies` copies of their
/// primitive root (so "ny"×33 fires, while one line quoted twice does not).
///
/// Exactly: at each position, the smallest `q` in `min..=max` such that the sequence ends with
/// `copies` copies of a unit `u` of length `q`, and either `q ≥ long` or the sequence ends with
/// `root_copies` copies of the primitive root of `u`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TailMatcher {
    long: Option<Finder>,
    /// Short units: `copies` copies, and `root_copies` copies as the extra count.
    short: Option<Finder>,
    root_check: bool,
    #[serde(skip)]
    pi: Vec<u32>,
}

impl TailMatcher {
    /// A matcher (`root_copies` is clamped to `2..=2·copies`; `long ≤ min` means every unit is
    /// long).
    pub fn new(
        min: usize,
        max: usize,
        copies: usize,
        long: usize,
        root_copies: usize,
    ) -> TailMatcher {
        let min = min.max(1);
        let max = max.max(min);
        let copies = copies.max(2);
        let root_copies = root_copies.clamp(2, 2 * copies);
        let long_lo = long.max(min);
        let long_f = (long_lo <= max).then(|| Finder::new(long_lo, max, copies));
        let short_hi = long.min(max + 1);
        let root_check = root_copies > copies;
        let short =
            (min < short_hi).then(|| Finder::with_extra(min, short_hi - 1, copies, root_copies));
        TailMatcher {
            long: long_f,
            short,
            root_check,
            pi: Vec::new(),
        }
    }

    /// Characters buffered.
    pub fn buffered(&self) -> usize {
        [&self.long, &self.short]
            .iter()
            .filter_map(|f| f.as_ref())
            .map(Finder::buffered)
            .sum()
    }

    /// The last `len` characters (at most what the engine that can see the furthest keeps).
    pub fn tail_string(&self, len: usize) -> String {
        [&self.long, &self.short]
            .iter()
            .filter_map(|f| f.as_ref())
            .map(|f| f.tail_string(len))
            .max_by_key(String::len)
            .unwrap_or_default()
    }

    /// Appends one symbol; returns the smallest qualifying unit length.
    pub fn push(&mut self, sym: u32) -> Option<u64> {
        let a = self.long.as_mut().and_then(|f| f.push(sym));
        let mut b = None;
        let mut c = None;
        if let Some(f) = self.short.as_mut() {
            let (two, more) = f.push2(sym);
            b = more;
            if let Some(q) = two {
                if !self.root_check || !is_primitive(f, q, &mut self.pi) {
                    c = Some(q);
                }
            }
        }
        [a, b, c].into_iter().flatten().min()
    }
}

/// Whether the last `q` symbols of `f` form a primitive word (not a power of a shorter one).
fn is_primitive(f: &Finder, q: u64, pi: &mut Vec<u32>) -> bool {
    let q = q as usize;
    let start = f.n - q as u64;
    pi.clear();
    pi.resize(q, 0);
    let at = |i: usize| f.ring.get(start + i as u64);
    let mut k = 0usize;
    for i in 1..q {
        while k > 0 && at(i) != at(k) {
            k = pi.get(k - 1).copied().unwrap_or(0) as usize;
        }
        if at(i) == at(k) {
            k += 1;
        }
        if let Some(slot) = pi.get_mut(i) {
            *slot = k as u32;
        }
    }
    let border = pi.last().copied().unwrap_or(0) as usize;
    let period = q - border;
    !(period < q && q % period == 0)
}

/// Z-function of `s` for positions `1..upto` (`z[i]` = longest common prefix of `s` and
/// `s[i..]`); entries from `upto` on are left 0.
fn z_function(s: &[u32], upto: usize, z: &mut Vec<u32>) {
    let n = s.len();
    z.clear();
    z.resize(n.max(1), 0);
    let upto = upto.min(n);
    let (mut l, mut r) = (0usize, 0usize);
    for i in 1..upto {
        let mut zi = 0usize;
        if i < r {
            zi = (r - i).min(z.get(i - l).copied().unwrap_or(0) as usize);
        }
        while i + zi < n && s.get(zi) == s.get(i + zi) {
            zi += 1;
        }
        if let Some(slot) = z.get_mut(i) {
            *slot = zi as u32;
        }
        if i + zi > r {
            l = i;
            r = i + zi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(s: &[u32], min: u64, max: u64, k: u64) -> Vec<Option<u64>> {
        (1..=s.len() as u64)
            .map(|n| {
                (min..=max.min(n / k))
                    .find(|&q| ((n - (k - 1) * q)..n).all(|j| s[j as usize] == s[(j - q) as usize]))
            })
            .collect()
    }

    fn check(text: &str, min: usize, max: usize, k: usize) {
        let s: Vec<u32> = text.chars().map(u32::from).collect();
        let want = brute(&s, min as u64, max as u64, k as u64);
        let mut f = Finder::new(min, max, k);
        let got: Vec<Option<u64>> = s.iter().map(|&c| f.push(c)).collect();
        assert_eq!(got, want, "text {text:?} min {min} max {max} k {k}");
    }

    #[test]
    fn agrees_with_brute_force_on_small_cases() {
        check("abcabcabcabc", 1, 10, 2);
        check("abcabcabcabc", 3, 10, 3);
        check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 100, 2);
        check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 5, 7, 2);
        check("abaababaabaababaababaabaababaabaab", 2, 40, 2);
        check("xyzxyzqxyzxyzqxyzxyzqxyzxyzq", 4, 40, 2);
    }

    #[test]
    fn z_function_is_correct() {
        let s: Vec<u32> = "aabxaab".chars().map(u32::from).collect();
        let mut z = Vec::new();
        z_function(&s, s.len(), &mut z);
        assert_eq!(z, vec![0, 1, 0, 0, 3, 1, 0]);
    }

    #[test]
    fn forced_z_path_agrees() {
        // A long low-entropy region makes direct comparisons expensive: the Z path runs.
        let text = format!("{}{}", "ab".repeat(300), "c".repeat(3));
        check(&text, 40, 400, 2);
    }
}
