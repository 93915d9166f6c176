//! The exact online engine: after every appended character it knows whether the tail of the
//! sequence is `copies` contiguous copies of one unit whose length lies in `[min, max]`, and
//! reports the smallest such unit length.
//!
//! # How it works
//!
//! Unit lengths are split into levels `[lo, 2·lo)` (`lo = min, 2·min, 4·min, …`; `[lo, 4·lo)`
//! for the sparse levels below; the last one cut at `max`, or stretched to it when less than
//! `lo/2` would remain). Each level keeps a
//! checkpoint every `h = (k-1)·lo/2` characters (`lo/2` for two copies, `lo` for three). A
//! tail of `k` copies of a unit of length `q ≥ lo` ending at `n` spans the last `(k-1)·q`
//! positions `j` with `s[j] = s[j-q]`; that span is longer than `h`, so it contains the
//! level's latest checkpoint `c` (with `n - h ≤ c < n`).
//! The condition splits at `c`:
//!
//! - backwards: the longest common suffix `A(q)` of `s[..c]` and `s[..c-q]` must be at least
//!   `(k-1)·q - (n - c)`. It is computed once, at the checkpoint, from characters already
//!   known; since `n - c ≤ h`, only lengths with `A(q) ≥ (k-1)·q - h` can ever qualify, and
//!   only those become *candidates*;
//! - forwards: every character from `c` on must equal the one `q` before it. Each new
//!   character is compared once per live candidate; a mismatch drops the candidate.
//!
//! **Finding the candidates.** A candidate of a level has `A(q) ≥ (k-1)·lo - h`, so the last
//! `g` characters before the checkpoint (the *gram*; `g ≤ (k-1)·lo - h` for every hashed
//! level, 15 characters for the defaults) occurred `q` characters earlier too. The engine
//! indexes the grams of the window as it streams, with a rolling hash and hash chains (for
//! each of 1024 buckets the latest indexed end position of a gram hashing there, for each
//! indexed end position the previous one in its bucket), in two tiers:
//!
//! - the dense tier indexes every end position, for levels with units up to 1024: a
//!   checkpoint walks the chain of the gram ending at `c`, visiting only its earlier ends
//!   within distance `< hi`, nearest first;
//! - the sparse tier indexes the end positions that are multiples of 8 (in batches of
//!   sixteen, so a sparse level's units are at least a batch long), for longer units (where
//!   `A(q) ≥ (k-1)·lo - h ≥ g + 7`): the grams ending at `c, c-1, …, c-7` all recurred
//!   `q` earlier, and exactly one of those earlier ends is a multiple of 8, so the
//!   checkpoint walks the 8 chains of those grams (their hashes computed again from the
//!   ring).
//!
//! Each unit length met is checked by direct comparison (`A(q)`). On ordinary text a walk
//! meets nothing: the checkpoint is a table lookup. Levels too short for the gram
//! (`(k-1)·lo - h < g`) compare every `q` directly. The dense tier's links cover the last
//! 1024 positions and the sparse tier's the last `max` (one link per 8 positions), so the
//! memory the index touches stays small whatever `max` is.
//!
//! Every decision rests on exact character comparisons; the hash only selects which `q` to
//! compare, and every `q` that can qualify is selected (its gram is equal, hence hashes
//! equal), so no collision can cause a wrong answer: it can only cost a comparison.
//!
//! **Cost.** Per character: one ring store, one hash update and one or two chain inserts,
//! plus a checkpoint every `h` characters per level (`≈ 0.1` per character for the
//! defaults). If a checkpoint's direct work (chain entries visited plus comparisons) would
//! exceed a small multiple of the level's width (highly repetitive text), the engine switches
//! to a Z-function over the reversed window, whose cost is linear in the window: the work
//! per character stays bounded by a constant times the number of levels (at most
//! `log2(max/min) + 1`), whatever the message length.
//!
//! Live candidates are few: while no repeat has been reported, a checkpoint yields at most a
//! handful of candidates per level (occurrences of a non-periodic string of length `lo/2`
//! are at least `lo/4` apart, and a level's window spans at most `4·lo`).
//!
//! **Memory.** A ring of the last `copies·max` characters (rounded up to a power of two and
//! allocated as the message grows, never beyond that cap), the chain links (1024 dense, at
//! most `max/8 + 2` sparse, rounded up to a power of two), 2 × 1024 chain heads, and the
//! candidate lists.

use serde::{Deserialize, Serialize};

/// A ring buffer of the most recent characters, indexed by absolute position.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Ring {
    data: Vec<u32>,
    /// The largest capacity (a power of two).
    limit: usize,
    /// The first position whose store must check whether the ring grows (`u64::MAX` once it
    /// reached its limit; 0 after a restore).
    #[serde(skip)]
    check_at: u64,
}

impl PartialEq for Ring {
    /// The content and the limit (`check_at` is a cache).
    fn eq(&self, other: &Ring) -> bool {
        self.data == other.data && self.limit == other.limit
    }
}

impl Ring {
    pub(crate) fn new(keep: usize) -> Ring {
        Ring {
            data: Vec::new(),
            limit: keep.max(2).next_power_of_two(),
            check_at: 0,
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
        if i >= self.check_at {
            self.maybe_grow(i);
        }
        let mask = self.data.len().wrapping_sub(1);
        if let Some(slot) = self.data.get_mut((i as usize) & mask) {
            *slot = v;
        }
    }

    /// Not wrapped yet: positions `0..len` sit at their own index. Grow (double) if `i` is
    /// beyond them, and note where the next check is due.
    #[cold]
    fn maybe_grow(&mut self, i: u64) {
        let len = self.data.len();
        if (i as usize) >= len && len < self.limit {
            let new_len = (len * 2).max(64).min(self.limit);
            self.data.resize(new_len, 0);
        }
        let len = self.data.len();
        self.check_at = if len < self.limit {
            len as u64
        } else {
            u64::MAX
        };
    }

    /// Allocated characters (for memory accounting in tests).
    pub(crate) fn capacity(&self) -> usize {
        self.data.len()
    }
}

/// The longest gram the index hashes.
const GRAM_MAX: u64 = 32;
/// log2 of the largest number of hash-chain heads.
const HEAD_BITS_MAX: u32 = 10;
/// Multiplier that spreads a symbol over 64 bits before it enters the rolling hash (odd).
const HASH_BASE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Chain heads of the default index (2^[`HEAD_BITS_MAX`]).
const HEADS: usize = 1 << HEAD_BITS_MAX;
/// Dense links of the default index (one per position of the last [`DENSE_REACH`]).
const DENSE_LINKS: usize = DENSE_REACH as usize;

/// What [`quiet_loop`] carries from one byte to the next: the gram hash, the symbols
/// appended, the filler run (64 bits: it cannot overflow within one slice).
#[derive(Clone, Copy, Debug)]
struct QuietState {
    h: u64,
    n: u64,
    run: u64,
}

/// The tables [`quiet_loop`] writes, at the sizes that let it index without bounds tests.
#[derive(Debug)]
struct QuietTables<'a> {
    data: &'a mut [u32],
    /// The dense tier's heads, then its links.
    chains: &'a mut [u32; HEADS + DENSE_LINKS],
    /// [`Index::shift`].
    shift: u64,
    max_filler: u64,
}

/// Why [`quiet_loop`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// At the end of the bytes.
    End,
    /// Before a line feed (not taken).
    LineFeed,
    /// After a symbol whose position is a multiple of [`RECENT`] (sparse tier only): the
    /// sparse batch is due.
    Batch,
}

/// The loop of [`Finder::quiet_ascii`] over ASCII bytes: the filler cut, the ring, the
/// rolling hash, the dense chains and the hashes kept for the sparse tier, with no call and
/// no per-byte test of the finder's state (its own function, so that its variables stay in
/// registers as far as they can). Returns the bytes taken and why it stopped. `LF`: stop
/// before a line feed (else it is filler like any other).
///
/// The hash's multiplier is a constant for the default gram ([`DEFAULT_SHIFT`]), so that
/// it takes no register.
#[inline(never)]
fn quiet_loop<const SPARSE: bool, const LF: bool>(
    bytes: &[u8],
    st: &mut QuietState,
    t: &mut QuietTables<'_>,
    recent: &mut [u64; SLOTS],
) -> (usize, Stop) {
    match (t.shift, t.max_filler) {
        (DEFAULT_SHIFT, DEFAULT_FILLER) => {
            quiet_loop_with::<SPARSE, LF>(bytes, st, t, recent, DEFAULT_SHIFT, DEFAULT_FILLER)
        }
        (shift, max_filler) => {
            quiet_loop_with::<SPARSE, LF>(bytes, st, t, recent, shift, max_filler)
        }
    }
}

/// The filler run [`quiet_loop`] is compiled for as a constant (the default
/// `max-filler-run`).
const DEFAULT_FILLER: u64 = crate::Settings::DEFAULT_MAX_FILLER_RUN as u64;

/// [`quiet_loop`] with the hash multiplier `shift` and the filler cut `max_filler` (inlined
/// twice: once with the defaults as constants, which leaves the loop's state in registers).
#[inline(always)]
fn quiet_loop_with<const SPARSE: bool, const LF: bool>(
    bytes: &[u8],
    st: &mut QuietState,
    t: &mut QuietTables<'_>,
    recent: &mut [u64; SLOTS],
    shift: u64,
    max_filler: u64,
) -> (usize, Stop) {
    let QuietState {
        mut h,
        mut n,
        mut run,
    } = *st;
    let rmask = t.data.len().wrapping_sub(1);
    let mut stop = Stop::End;
    let mut it = bytes.iter();
    while let Some(&b) = it.as_slice().first() {
        // One load gives the byte's term of the hash, another what it does to the filler
        // run (256 entries each: no mask of the byte, no arithmetic on a class).
        if LF && b & 127 == b'\n' {
            stop = Stop::LineFeed;
            break;
        }
        it.next();
        // As `Prep::map` counts: the run's first line feed starts it again.
        run = if !LF && b == b'\n' && run & FILLER_LF == 0 {
            FILLER_LF | 1
        } else {
            (run + 1) & QUIET_RUN[usize::from(b)]
        };
        if run & !FILLER_LF > max_filler {
            continue;
        }
        if let Some(slot) = t.data.get_mut((n as usize) & rmask) {
            *slot = u32::from(b);
        }
        n += 1;
        h = h
            .wrapping_mul(shift)
            .wrapping_add(QUIET_TERMS[usize::from(b)]);
        let b = bucket(h, HEADS - 1);
        t.chains[HEADS + ((n as usize) & (DENSE_LINKS - 1))] = t.chains[b];
        t.chains[b] = n as u32;
        if SPARSE && n % STRIDE == 0 {
            recent[slot(n)] = h;
            if n % RECENT == 0 {
                stop = Stop::Batch;
                break;
            }
        }
    }
    *st = QuietState { h, n, run };
    (bytes.len() - it.as_slice().len(), stop)
}

/// [`quiet_loop`]'s table of the bytes' terms of the gear hash ([`term`]); a byte above 127
/// reads as its low seven bits (the loop is given ASCII; 256 entries, so that no mask of the
/// byte is needed).
const QUIET_TERMS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut c = 0usize;
    while c < 256 {
        t[c] = term((c & 127) as u32);
        c += 1;
    }
    t
};
/// [`crate::detector::FILLER_LF`] in the quiet loop's 64-bit count.
const FILLER_LF: u64 = crate::detector::FILLER_LF as u64;

/// What a byte does to the filler run in [`quiet_loop`], `run = (run + 1) & mask`: the mask
/// is 0 for a letter or digit (the run starts over) and all ones for filler, the line feed
/// included (the loop that stops at line feeds never reads its entry); a byte above 127
/// reads as its low seven bits.
const QUIET_RUN: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut c = 0usize;
    while c < 256 {
        t[c] = if crate::detector::ALNUM_BYTES[c & 127] != 0 {
            0
        } else {
            u64::MAX
        };
        c += 1;
    }
    t
};
/// The low bits that every [`term`] leaves clear (the hash every index of a message was
/// built with: a restored or rebuilt index must hash as the one it replaces).
const TERM_CLEAR_BITS: u64 = 3;

/// A symbol's term of the gear hash: its value spread over 64 bits, the two low bits clear.
#[inline(always)]
const fn term(sym: u32) -> u64 {
    (sym as u64 + 1).wrapping_mul(HASH_BASE) & !TERM_CLEAR_BITS
}

/// Sampling stride of the sparse tier.
const STRIDE: u64 = 8;
/// Hashes of recent grams kept for the sparse tier (a multiple of [`STRIDE`]).
const RECENT: u64 = 128;
/// Slots of the hashes kept for the sparse tier: one per [`STRIDE`] positions of the last
/// [`RECENT`].
const SLOTS: usize = (RECENT / STRIDE) as usize;

/// The slot of the hash of the gram ending at `e` (a multiple of [`STRIDE`]).
#[inline(always)]
fn slot(e: u64) -> usize {
    ((e / STRIDE) as usize) % SLOTS
}
/// Levels whose units reach beyond this use the sparse tier.
const DENSE_REACH: u64 = 1024;

/// Hash chains over grams: for each bucket the latest indexed end position of a gram hashing
/// there, and for each indexed end position the previous one in the same bucket (LZ77-style).
/// Positions are kept truncated to 32 bits; a chain is followed only while distances strictly
/// grow and stay below the longest unit of the level, so stale or truncated entries can only
/// yield unit lengths that the exact comparisons reject, never hide a real one.
#[derive(Clone, Debug, Default)]
struct Chains {
    /// The heads (`heads` of them), then the links: one table, so that a loop over both
    /// holds one address.
    table: Vec<u32>,
    heads: usize,
    /// Largest number of links (a power of two).
    limit: usize,
    /// log2 of the distance between indexed end positions.
    stride_log: u32,
    /// The first slot whose insert must check whether the links grow (`usize::MAX` once
    /// they reached their limit).
    check_at: usize,
}

impl Chains {
    /// Empties the chains: `2^bits` heads, at most `limit` links, one per `2^stride_log`
    /// positions; `full` allocates every link now (a few KiB for the dense tier, so its
    /// inserts never test for growth), else they grow with the message.
    fn reset(&mut self, bits: u32, limit: usize, stride_log: u32, full: bool) {
        self.heads = 1usize << bits;
        self.table.clear();
        self.table
            .resize(self.heads + if full { limit } else { 0 }, 0);
        self.limit = limit;
        self.stride_log = stride_log;
        self.check_at = if full { usize::MAX } else { 0 };
    }

    /// The number of links.
    #[inline(always)]
    fn links(&self) -> usize {
        self.table.len().saturating_sub(self.heads)
    }

    /// Records that the gram ending at `end` hashes to bucket `b`.
    #[inline(always)]
    fn insert(&mut self, end: u64, b: usize) {
        let slot = (end >> self.stride_log) as usize;
        if slot >= self.check_at {
            self.grow(slot);
        }
        let links = self.links();
        if b < self.heads && links > 0 {
            let head = self.first(b);
            if let Some(link) = self.table.get_mut(self.heads + (slot & (links - 1))) {
                *link = head;
            }
            if let Some(h) = self.table.get_mut(b) {
                *h = end as u32;
            }
        }
    }

    /// Not wrapped yet: slots `0..len` sit at their own index. Grow (double) to hold `slot`.
    #[cold]
    fn grow(&mut self, slot: usize) {
        let len = self.links();
        if slot >= len && len < self.limit {
            let new_len = (slot + 1).next_power_of_two().max(64).min(self.limit);
            self.table.resize(self.heads + new_len, 0);
        }
        let len = self.links();
        self.check_at = if len < self.limit { len } else { usize::MAX };
    }

    /// The latest indexed end in bucket `b`.
    #[inline]
    fn first(&self, b: usize) -> u32 {
        // `b` is a bucket (below `heads`); were it not, the link read would only be a
        // candidate that the exact comparisons reject.
        self.table.get(b).copied().unwrap_or(0)
    }

    /// [`Chains::insert`] of a sparse batch, the [`RECENT`]` / `[`STRIDE`] ends `first,
    /// first + STRIDE, …`, the gram ending at `e` hashing to `hash(e)` and going to its
    /// bucket under `mask`, with no test per insert: when the links are grown for all of them
    /// and `mask` is within the heads. Returns false, doing nothing, otherwise.
    #[inline(always)]
    fn insert_batch(&mut self, first: u64, mask: usize, hash: impl Fn(u64) -> u64) -> bool {
        let last = first + RECENT - STRIDE;
        let links = self.links();
        if self.stride_log != STRIDE.trailing_zeros()
            || (last >> self.stride_log) as usize >= self.check_at
            || !links.is_power_of_two()
        {
            return false;
        }
        let Some((head, link)) = self.table.split_at_mut_checked(self.heads) else {
            return false;
        };
        if mask >= head.len() || link.len() != links {
            return false;
        }
        for k in 0..RECENT / STRIDE {
            let e = first + k * STRIDE;
            let b = bucket(hash(e), mask);
            let s = ((e / STRIDE) as usize) & (links - 1);
            link[s] = head[b];
            head[b] = e as u32;
        }
        true
    }

    /// The indexed end linked before `e` in its bucket.
    #[inline]
    fn prev_of(&self, e: u32) -> u32 {
        let links = self.links();
        if links == 0 {
            return 0;
        }
        let slot = ((e >> self.stride_log) as usize) & (links - 1);
        self.table.get(self.heads + slot).copied().unwrap_or(0)
    }
}

/// The gram index: a rolling hash over the last `gram` symbols, a dense tier of chains over
/// every end position (for units up to [`DENSE_REACH`]), and a sparse tier over the end
/// positions that are multiples of [`STRIDE`] (for longer units), with the hashes of those
/// of the last [`RECENT`] positions, which it indexes in batches (a sparse level's
/// checkpoint computes the hashes it looks up again from the ring).
///
/// It is derived data: not serialized, rebuilt from the ring after a restore.
#[derive(Clone, Debug, Default)]
struct Index {
    /// Built and in step with the finder.
    synced: bool,
    dense: Chains,
    sparse: Chains,
    /// Whether any level uses the sparse tier.
    use_sparse: bool,
    /// `buckets - 1` (buckets are a power of two, at most 2^[`HEAD_BITS_MAX`]).
    mask: usize,
    /// The hash's multiplier per symbol, `2^ceil(64 / gram)` (0 for a gram of one), so that
    /// a symbol leaves the hash within `gram` symbols (see [`gear`]).
    shift: u64,
    /// Hash of the last `gram` symbols fed (of all of them while fewer were fed).
    hash: u64,
    /// Hashes of the grams ending at the positions that are multiples of [`STRIDE`] among
    /// the last [`RECENT`] (what the sparse tier indexes), by [`slot`].
    recent: [u64; SLOTS],
    /// Position of the first symbol fed since the last reset.
    start: u64,
    /// The gram length.
    gram: u64,
}

impl PartialEq for Index {
    /// The index is a cache of the ring's content: two finders with equal state have
    /// equivalent indexes.
    fn eq(&self, _: &Index) -> bool {
        true
    }
}

impl Index {
    fn reset(&mut self, f: &IndexShape, start: u64) {
        let bits = f.head_bits.clamp(1, HEAD_BITS_MAX);
        self.synced = true;
        self.mask = (1usize << bits) - 1;
        self.dense.reset(bits, f.dense_limit, 0, true);
        self.use_sparse = f.sparse_limit > 0;
        self.sparse.reset(
            if self.use_sparse { bits } else { 0 },
            f.sparse_limit,
            STRIDE.trailing_zeros(),
            false,
        );
        self.shift = shift_for(f.gram);
        self.hash = 0;
        self.recent = [0; SLOTS];
        self.start = start;
        self.gram = f.gram;
    }

    #[inline(always)]
    fn bucket(&self, h: u64) -> usize {
        bucket(h, self.mask)
    }

    /// Rolls `sym` (the symbol at position `p`) into the hash and, once a whole gram was
    /// fed, indexes the gram ending after it.
    ///
    /// The hash is [`gear`]'s.
    #[inline(always)]
    fn feed(&mut self, p: u64, sym: u32, gram: u64) {
        let h = gear(self.hash, self.shift, sym);
        self.hash = h;
        let end = p + 1;
        if end >= self.start + gram {
            self.dense.insert(end, self.bucket(h));
            if self.use_sparse && end % STRIDE == 0 {
                if let Some(r) = self.recent.get_mut(slot(end)) {
                    *r = h;
                }
                if end % RECENT == 0 {
                    self.flush_sparse(end);
                }
            }
        }
    }

    /// Indexes in the sparse tier the ends that are multiples of [`STRIDE`] among the last
    /// [`RECENT`] (batched: a branch taken once per [`RECENT`] symbols rather than once per
    /// [`STRIDE`]). The ends after the last batch are not indexed yet; sparse levels only
    /// look at least [`RECENT`] back.
    #[cold]
    fn flush_sparse(&mut self, end: u64) {
        flush_sparse(
            &mut self.sparse,
            &self.recent,
            self.mask,
            self.start + self.gram,
            end,
        );
    }

    /// The hashes of the grams ending at `c - j` for `j < STRIDE` (those that end at least a
    /// gram after the start), computed again from the ring in one pass over the last
    /// `gram + STRIDE - 1` symbols: a symbol leaves the hash within a gram (see [`gear`]),
    /// so a hash started there is exact from a gram on.
    fn hashes_before(&self, ring: &Ring, c: u64) -> [u64; STRIDE as usize] {
        let mut out = [0u64; STRIDE as usize];
        let from = c.saturating_sub(STRIDE - 1 + self.gram).max(self.start);
        let mut h = 0u64;
        for i in from..c {
            h = gear(h, self.shift, ring.get(i));
            if let Some(slot) = out.get_mut((c - 1 - i) as usize) {
                *slot = h;
            }
        }
        out
    }

    /// The latest end before `c` of a gram hashing like the gram ending at `c` (which must be
    /// the last one fed), in the dense tier.
    #[inline]
    fn dense_start(&self, c: u64) -> u32 {
        let e = self.dense.first(self.bucket(self.hash));
        if e == c as u32 {
            self.dense.prev_of(e)
        } else {
            e
        }
    }
}

/// [`Index::flush_sparse`] on the index's parts: indexes in the sparse tier the ends that are
/// multiples of [`STRIDE`] among the last [`RECENT`] up to `end`, from `lowest` on.
#[cold]
fn flush_sparse(sparse: &mut Chains, recent: &[u64; SLOTS], mask: usize, lowest: u64, end: u64) {
    // Oldest first, as the symbols arrived (a range stepped by `step_by` costs more than
    // the inserts).
    let first = (end + STRIDE).saturating_sub(RECENT);
    // The common case: every end of the batch indexed, in links grown for all of them.
    if first >= lowest && sparse.insert_batch(first, mask, |e| recent[slot(e)]) {
        return;
    }
    for k in 0..RECENT / STRIDE {
        let e = first + k * STRIDE;
        if e >= lowest {
            let h = recent.get(slot(e)).copied().unwrap_or(0);
            sparse.insert(e, bucket(h, mask));
        }
    }
}

/// The rolling hash after `sym`: a shift-and-add ("gear") hash, `h · 2^r + term(sym)` with
/// `r = ceil(64 / gram)` bits (`shift` is `2^r`), so a symbol's contribution leaves the 64
/// bits after `ceil(64 / r) <= gram` symbols, and the hash of an end depends only on the
/// symbols of the gram ending there (its last `ceil(64 / r)` ones): equal grams hash
/// equally, without reading back the symbol that leaves the gram. A product rather than a
/// shift by a variable amount, which would tie up the shift register in the loops.
#[inline(always)]
fn gear(h: u64, shift: u64, sym: u32) -> u64 {
    h.wrapping_mul(shift).wrapping_add(term(sym))
}

/// The multiplier [`gear`] uses for the default gram (the evidence rule's engine at three
/// copies of `min-unit`: 30 symbols, `2^3`), with which [`quiet_loop`] is compiled as a
/// constant.
const DEFAULT_SHIFT: u64 = shift_for(min_u64(
    guaranteed(crate::Settings::DEFAULT_MIN_UNIT as u64, 3),
    GRAM_MAX,
));

/// [`gear`]'s multiplier for a gram of `gram` symbols, `2^ceil(64 / gram)`, so that a symbol
/// leaves the hash within the gram (0 for a gram of one or none).
const fn shift_for(gram: u64) -> u64 {
    let bits = if gram == 0 { 64 } else { 64u64.div_ceil(gram) };
    match 1u64.checked_shl(bits as u32) {
        Some(m) => m,
        None => 0,
    }
}

/// `a.min(b)` in a constant.
const fn min_u64(a: u64, b: u64) -> u64 {
    if a < b {
        a
    } else {
        b
    }
}

/// The chain bucket of a gram hash `h`: its top [`HEAD_BITS_MAX`] bits (which every symbol
/// the hash holds reaches: see [`gear`]), cut by `mask` (the buckets less one).
#[inline(always)]
fn bucket(h: u64, mask: usize) -> usize {
    (h >> (64 - HEAD_BITS_MAX)) as usize & mask
}

/// What the index of a finder looks like (kept in the finder, so a restore can rebuild it).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
struct IndexShape {
    gram: u64,
    head_bits: u32,
    /// Length of the dense tier's link ring once grown (0 = no dense level).
    dense_limit: usize,
    /// Length of the sparse tier's link ring (0 = no sparse level).
    sparse_limit: usize,
}

/// How a level finds its candidates.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
enum Mode {
    /// Every unit length is compared (levels too short for the gram).
    #[default]
    Scan,
    /// Earlier ends of the gram ending at the checkpoint, from the dense tier.
    Dense,
    /// Earlier ends of the grams ending at the last [`STRIDE`] positions before the
    /// checkpoint, from the sparse tier.
    Sparse,
}

/// One band of unit lengths sharing a copy count.
#[derive(Clone, Copy, Debug)]
struct Band {
    min: u64,
    max: u64,
    copies: u64,
    /// A second, larger copy count (0 = none).
    extra: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Level {
    lo: u64,
    /// Exclusive.
    hi: u64,
    /// Copies needed.
    k: u64,
    /// The band's second copy count (0 = none).
    extra: u64,
    /// Which band the level answers for.
    band: usize,
    /// Where candidates come from.
    mode: Mode,
    step: u64,
    checkpoint: u64,
    /// The next checkpoint position.
    next: u64,
    /// (unit length, backward match length at the checkpoint)
    cands: Vec<(u64, u64)>,
}

/// The answer of one band after a symbol: the smallest unit with `copies` copies, and the
/// smallest with `extra` copies.
pub(crate) type BandHit = (Option<u64>, Option<u64>);

/// The exact online tail-repeat finder.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Finder {
    pub(crate) n: u64,
    pub(crate) ring: Ring,
    levels: Vec<Level>,
    /// The index's dimensions.
    shape: IndexShape,
    /// The longest unit length plus one.
    reach: u64,
    /// The earliest `next` of all levels (0 after a restore: the first push rebuilds the
    /// index).
    #[serde(skip)]
    next_due: u64,
    /// The earliest `next` of all levels but the first (0 after a restore).
    #[serde(skip)]
    rest_due: u64,
    /// The earliest `next` of all levels but the first two (0 after a restore).
    #[serde(skip)]
    later_due: u64,
    /// Candidates held by all levels.
    live: usize,
    #[serde(skip)]
    index: Index,
    #[serde(skip)]
    scratch: Vec<u32>,
    #[serde(skip)]
    z: Vec<u32>,
}

impl Finder {
    /// A finder for units of `min..=max` characters repeated `copies` times (`min ≥ 1`,
    /// `max ≥ min`, `copies ≥ 2`; out-of-range values are clamped, as are `max` to 2^28 and
    /// `copies` to 64).
    pub fn new(min: usize, max: usize, copies: usize) -> Finder {
        Finder::with_extra(min, max, copies, 0)
    }

    /// A finder for the evidence rule's run tracker: units of `min..=max` reported at
    /// `copies` copies (2 or 3, clamped); at 3, units of [`RUN_TWO_FROM`] characters or more
    /// are still reported at two copies, so the ring holds two copies of the longest unit
    /// (as at 2), not three. [`Finder::push_run`] answers.
    pub(crate) fn for_runs(min: usize, max: usize, copies: u64) -> Finder {
        let two_from = RUN_TWO_FROM as usize;
        if copies < 3 {
            Finder::new(min, max, 2)
        } else if min < two_from && max >= two_from {
            Finder::with_bands(
                &[band(min, two_from - 1, 3, 0), band(two_from, max, 2, 0)],
                HEAD_BITS_MAX,
                DENSE_REACH,
            )
        } else {
            Finder::new(min, max, 3)
        }
    }

    /// The copies at which this finder reports a unit of `q` symbols (those of the level
    /// that holds `q`; 2 outside every level).
    pub(crate) fn copies_for(&self, q: u64) -> u64 {
        self.levels
            .iter()
            .find(|l| l.lo <= q && q < l.hi)
            .map_or(2, |l| l.k)
    }

    /// Appends one symbol; answers as [`Finder::push`] for a finder of
    /// [`Finder::for_runs`]: the smallest unit length with its copies at the tail, of the
    /// first band that has one (the first band's units are the shorter).
    #[inline(always)]
    pub(crate) fn push_run(&mut self, sym: u32) -> Option<u64> {
        let [(a, _), (b, _)] = self.push_bands(sym)?;
        a.or(b)
    }

    /// As [`Finder::new`], with a second copy count `extra` (`extra > copies`, else ignored)
    /// that widens what the levels keep.
    fn with_extra(min: usize, max: usize, copies: usize, extra: usize) -> Finder {
        Finder::with_bands(&[band(min, max, copies, extra)], HEAD_BITS_MAX, DENSE_REACH)
    }

    /// As [`Finder::new`], with the index tuned for tests: at most `2^head_bits` hash-chain
    /// heads (1 makes every gram collide), and units beyond `dense_reach` found through the
    /// sparse tier. The answers never depend on these.
    #[doc(hidden)]
    pub fn with_index(
        min: usize,
        max: usize,
        copies: usize,
        head_bits: u32,
        dense_reach: usize,
    ) -> Finder {
        Finder::with_bands(&[band(min, max, copies, 0)], head_bits, dense_reach as u64)
    }

    /// A finder answering for each band separately (at most two bands; further ones are
    /// ignored), with at most `2^head_bits` hash-chain heads, and the dense tier for units
    /// up to `dense_reach`.
    fn with_bands(bands: &[Band], head_bits: u32, dense_reach: u64) -> Finder {
        let bands = bands.get(..bands.len().min(2)).unwrap_or(&[]);
        let gram = bands
            .iter()
            .map(|b| guaranteed(b.min, b.copies))
            .min()
            .unwrap_or(1)
            .clamp(1, GRAM_MAX);
        let mut levels = Vec::new();
        let mut keep = 4u64;
        let mut reach = 1u64;
        let dense_cut = dense_reach;
        let mut dense_reach = 0u64;
        for (bi, b) in bands.iter().enumerate() {
            let (k, most) = (b.copies, b.copies.max(b.extra));
            // What a checkpoint can read back: `most` copies of the longest unit (at a
            // checkpoint `c`, positions from `c - most·max` on).
            keep = keep.max(most.saturating_mul(b.max));
            let mut lo = b.min;
            while lo <= b.max {
                let sure = guaranteed(lo, k);
                // The gram (ending at most `STRIDE - 1` positions before the checkpoint, for
                // the sparse tier) must lie within what every qualifying repeat matched.
                let mut mode = if sure < gram {
                    Mode::Scan
                } else if lo.saturating_mul(2) <= dense_cut
                    || sure < gram + STRIDE - 1
                    || lo < RECENT
                {
                    Mode::Dense
                } else {
                    Mode::Sparse
                };
                // Sparse levels span a factor 4 (fewer, cheaper checkpoints), others 2.
                let span = if mode == Mode::Sparse { 4 } else { 2 };
                let mut hi = lo.saturating_mul(span).min(b.max + 1);
                if b.max + 1 - hi < lo / 2 {
                    // A short remainder joins this level rather than forming its own.
                    hi = b.max + 1;
                }
                if mode == Mode::Dense
                    && hi > dense_cut
                    && sure >= gram + STRIDE - 1
                    && lo >= RECENT
                {
                    mode = Mode::Sparse;
                }
                if mode == Mode::Dense {
                    dense_reach = dense_reach.max(hi);
                }
                levels.push(Level {
                    lo,
                    hi,
                    k,
                    extra: b.extra,
                    band: bi,
                    mode,
                    step: step(lo, k),
                    checkpoint: 0,
                    next: 0,
                    cands: Vec::new(),
                });
                reach = reach.max(hi);
                if hi > b.max {
                    break;
                }
                lo = hi;
            }
        }
        let sparse = levels.iter().any(|l| l.mode == Mode::Sparse);
        // A walk from `c` reads the link of an end `e` only when `c - e` is below the level's
        // `hi`; `e`'s link is overwritten only by the end `e + limit` (dense) or
        // `e + STRIDE·limit` (sparse, where walks start up to `STRIDE - 1` before `c`), which
        // is not indexed yet then.
        let dense_limit = if dense_reach > 0 {
            (dense_reach as usize).max(64).next_power_of_two()
        } else {
            0
        };
        let sparse_limit = if sparse {
            ((reach + STRIDE) / STRIDE + 1).max(64).next_power_of_two() as usize
        } else {
            0
        };
        let shape = IndexShape {
            gram,
            head_bits: head_bits.clamp(1, HEAD_BITS_MAX),
            dense_limit,
            sparse_limit,
        };
        Finder {
            n: 0,
            ring: Ring::new(keep.max(reach + STRIDE + gram + 4) as usize),
            levels,
            shape,
            reach,
            next_due: 0,
            rest_due: 0,
            later_due: 0,
            live: 0,
            index: Index::default(),
            scratch: Vec::new(),
            z: Vec::new(),
        }
    }

    /// Takes over the buffers of `old` (its ring, its index's tables, its scratch space),
    /// emptied, so that a finder made for a new message does not allocate and grow them
    /// again: the state is that of a new finder, only the allocations are kept. `self` must
    /// be new (nothing pushed).
    pub(crate) fn recycle(&mut self, old: &mut Finder) {
        if self.n != 0 || old.ring.limit != self.ring.limit {
            return;
        }
        let mut data = std::mem::take(&mut old.ring.data);
        data.clear();
        self.ring.data = data;
        let index = &mut old.index;
        for (new, old) in [
            (&mut self.index.dense.table, &mut index.dense.table),
            (&mut self.index.sparse.table, &mut index.sparse.table),
            (&mut self.scratch, &mut old.scratch),
            (&mut self.z, &mut old.z),
        ] {
            let mut v = std::mem::take(old);
            v.clear();
            *new = v;
        }
    }

    /// Characters held in memory (bounded by `copies·max`, rounded up to a power of two; the
    /// index adds at most 1024 + `max/8 + 2` (rounded up to a power of two) 32-bit links
    /// and 2048 heads).
    pub fn buffered(&self) -> usize {
        self.ring.capacity()
    }

    /// The symbol at absolute position `i`, if the ring still holds it.
    pub(crate) fn symbol(&self, i: u64) -> Option<u32> {
        (i < self.n && self.n - i <= self.ring.capacity() as u64).then(|| self.ring.get(i))
    }

    /// The most symbols the ring ever holds (the last ones pushed).
    pub(crate) fn ring_limit(&self) -> usize {
        self.ring.limit
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
    #[inline(always)]
    pub fn push(&mut self, sym: u32) -> Option<u64> {
        self.push_bands(sym).and_then(|[(q, _), _]| q)
    }

    /// Appends one symbol and answers for each band (`None`: no band has an answer).
    #[inline(always)]
    pub(crate) fn push_bands(&mut self, sym: u32) -> Option<[BandHit; 2]> {
        self.append(sym);
        if self.live == 0 {
            return None;
        }
        Some(self.advance(sym))
    }

    /// Appends one symbol: checkpoints due before it, the ring, the index.
    #[inline(always)]
    fn append(&mut self, sym: u32) {
        let i = self.n;
        if i >= self.next_due {
            // New checkpoints see only the characters before `i`.
            self.due_out_of_line(i);
        }
        self.ring.put(i, sym);
        self.n = i + 1;
        self.index.feed(i, sym, self.shape.gram);
    }

    /// Whether no candidate is live and the index is built: [`Finder::push_quiet`] may take
    /// symbols.
    #[inline]
    pub(crate) fn quiet(&self) -> bool {
        self.live == 0 && self.index.synced
    }

    /// Maps and appends the ASCII `bytes` as [`Finder::push`] one by one would while it
    /// answers `None`, running the checkpoints as they fall due, up to the first line feed
    /// (with `LF`; without, a line feed is filler like any other byte, for a caller that
    /// follows the lines itself), the first symbol that meets a live candidate, or where
    /// the ring or the dense links would grow: the bytes read, and whether any symbol was
    /// appended. The mapping is the
    /// filler cut ([`crate::Prep::map`]): `filler` is the run of bytes that are neither
    /// letters nor digits so far, and a byte that makes it longer than `max_filler` is
    /// dropped. A checkpoint runs as soon as it is due, before the bytes that follow are
    /// mapped: on the same characters as when the next symbol comes. Between checkpoints,
    /// one loop without calls or per-symbol tests of the finder's state. Needs
    /// [`Finder::quiet`].
    #[inline(never)]
    pub(crate) fn quiet_ascii<const LF: bool>(
        &mut self,
        bytes: &[u8],
        filler: &mut u32,
        max_filler: u32,
    ) -> (usize, bool) {
        if self.index.use_sparse {
            self.quiet_ascii_with::<true, LF>(bytes, filler, max_filler)
        } else {
            self.quiet_ascii_with::<false, LF>(bytes, filler, max_filler)
        }
    }

    /// [`Finder::quiet_ascii`] with or without the sparse tier, stopping at line feeds or
    /// not (`LF`).
    #[inline(always)]
    fn quiet_ascii_with<const SPARSE: bool, const LF: bool>(
        &mut self,
        bytes: &[u8],
        filler: &mut u32,
        max_filler: u32,
    ) -> (usize, bool) {
        let mut used = 0usize;
        let n_before = self.n;
        // The first gram must be whole before the loop indexes (the start of a message).
        let from = (self.index.start + self.index.gram).saturating_sub(1);
        while used < bytes.len() && self.live == 0 && self.index.synced {
            let n0 = self.n;
            if n0 >= self.next_due {
                // As `append` does before the symbol at a checkpoint.
                self.due(n0);
                continue;
            }
            if n0 < from {
                break;
            }
            // No checkpoint is due and nothing grows before position `limit`; as a byte gives
            // at most one symbol, `limit - n` bytes can go at once.
            let limit = self
                .next_due
                .min(self.ring.check_at)
                .min((self.index.dense.check_at as u64).saturating_sub(1));
            let room = usize::try_from(limit.saturating_sub(n0)).unwrap_or(usize::MAX);
            if room == 0 {
                break;
            }
            let rest = bytes.get(used..).unwrap_or(&[]);
            let part = rest.get(..room.min(rest.len())).unwrap_or(&[]);
            let Some((took, line_feed)) =
                self.quiet_ascii_in::<SPARSE, LF>(part, filler, max_filler)
            else {
                break;
            };
            used += took;
            if line_feed {
                break;
            }
        }
        (used, self.n > n_before)
    }

    /// [`Finder::quiet_ascii`] on `bytes` (at most one symbol per byte fits before the next
    /// checkpoint and before anything grows), with or without the sparse tier, up to the
    /// first line feed: the bytes taken and whether a line feed stopped it; `None`, doing
    /// nothing, when the tables are not as [`quiet_loop`] needs them (the default index:
    /// [`HEAD_BITS_MAX`] bits of heads and [`DENSE_REACH`] dense links). The sparse tier's
    /// batch runs between calls of the loop, so the loop over the bytes makes none.
    #[inline(always)]
    fn quiet_ascii_in<const SPARSE: bool, const LF: bool>(
        &mut self,
        bytes: &[u8],
        filler: &mut u32,
        max_filler: u32,
    ) -> Option<(usize, bool)> {
        let Index {
            dense,
            sparse,
            mask,
            shift,
            hash,
            recent,
            start,
            gram,
            ..
        } = &mut self.index;
        let chains: &mut [u32; HEADS + DENSE_LINKS] = dense.table.as_mut_slice().try_into().ok()?;
        let data = &mut self.ring.data[..];
        if data.is_empty() || *mask != HEADS - 1 {
            return None;
        }
        let lowest = *start + *gram;
        let mut st = QuietState {
            h: *hash,
            n: self.n,
            run: u64::from(*filler),
        };
        let mut tables = QuietTables {
            data,
            chains,
            shift: *shift,
            max_filler: u64::from(max_filler),
        };
        let mut taken = 0usize;
        let stop = loop {
            let rest = bytes.get(taken..).unwrap_or(&[]);
            let (took, stop) = quiet_loop::<SPARSE, LF>(rest, &mut st, &mut tables, recent);
            taken += took;
            if stop != Stop::Batch {
                break stop;
            }
            flush_sparse(sparse, recent, HEADS - 1, lowest, st.n);
        };
        *hash = st.h;
        *filler = u32::try_from(st.run).unwrap_or(u32::MAX);
        self.n = st.n;
        Some((taken, stop == Stop::LineFeed))
    }

    /// Appends one symbol as [`Finder::push`] would, if no checkpoint is due before it (with
    /// [`Finder::quiet`], it answers `None`); returns false, doing nothing, otherwise.
    #[inline(always)]
    pub(crate) fn push_quiet(&mut self, sym: u32) -> bool {
        let i = self.n;
        if i >= self.next_due {
            return false;
        }
        self.ring.put(i, sym);
        self.n = i + 1;
        self.index.feed(i, sym, self.shape.gram);
        true
    }

    /// Checks the live candidates against the symbol just appended at `n - 1`.
    #[inline(never)]
    fn advance(&mut self, sym: u32) -> [BandHit; 2] {
        let mut out: [BandHit; 2] = [(None, None); 2];
        let n = self.n;
        let i = n - 1;
        let ring = &self.ring;
        let mut live = 0;
        for level in &mut self.levels {
            if level.cands.is_empty() {
                continue;
            }
            let reach = n - level.checkpoint;
            let (k, extra) = (level.k, level.extra);
            let Some((best, best_extra)) = out.get_mut(level.band) else {
                continue;
            };
            level.cands.retain(|&(q, a)| {
                if sym != ring.get(i - q) {
                    return false;
                }
                if a + reach >= (k - 1) * q && best.is_none_or(|b| q < b) {
                    *best = Some(q);
                }
                if extra > 0 && a + reach >= (extra - 1) * q && best_extra.is_none_or(|b| q < b) {
                    *best_extra = Some(q);
                }
                true
            });
            live += level.cands.len();
        }
        self.live = live;
        out
    }

    /// Runs the checkpoints due at `i` (before the symbol at `i`): the most frequent one,
    /// the first level's alone and fruitless (about half of them on code), where it is
    /// called, without a call; the others in [`Finder::due_rest`].
    #[inline(always)]
    fn due(&mut self, i: u64) {
        if !(self.index.synced && i < self.rest_due && self.quick_checkpoints::<1>(i)) {
            self.due_rest(i);
        }
    }

    /// [`Finder::due`] out of line, for [`Finder::append`] (a symbol at a time: its loop
    /// stays small; the quiet loop's caller has it inline).
    #[cold]
    #[inline(never)]
    fn due_out_of_line(&mut self, i: u64) {
        self.due(i);
    }

    /// The slow part of [`Finder::due`]: (re)builds the index after a restore, else tries
    /// the first two levels' fruitless checkpoint, else runs the checkpoints due at `i`.
    #[cold]
    fn due_rest(&mut self, i: u64) {
        if !self.index.synced {
            self.rebuild_index();
        } else if i < self.later_due && self.quick_checkpoints::<2>(i) {
            return;
        }
        self.checkpoints(i);
    }

    /// The most frequent checkpoints, fruitless (the common case): only the first `K` levels
    /// (one or two) are due, each dense without candidates, and the gram ending at `c` has no
    /// earlier end within the reach of any of them (or it may not search yet). Returns false
    /// (nothing done) otherwise.
    #[inline(always)]
    fn quick_checkpoints<const K: usize>(&mut self, c: u64) -> bool {
        let Some(due) = self.levels.get(..K) else {
            return false;
        };
        if due
            .iter()
            .any(|l| l.mode != Mode::Dense || !l.cands.is_empty() || l.next > c)
        {
            return false;
        }
        let nearest = u64::from((c as u32).wrapping_sub(self.index.dense_start(c)));
        if due
            .iter()
            .any(|l| nearest < l.hi && l.k * l.lo <= c + l.step)
        {
            return false;
        }
        for l in self.levels.iter_mut().take(K) {
            l.checkpoint = c;
            l.next = c + l.step;
        }
        if K > 1 {
            if let Some(b) = self.levels.get(1) {
                self.rest_due = b.next.min(self.later_due);
            }
        }
        if let Some(a) = self.levels.first() {
            self.next_due = a.next.min(self.rest_due);
        }
        true
    }

    /// Rebuilds the index from the ring (after a restore): every gram ending in the last
    /// `reach` positions.
    fn rebuild_index(&mut self) {
        let n = self.n;
        let start = n.saturating_sub(self.reach + STRIDE + self.shape.gram);
        self.index.reset(&self.shape, start);
        for p in start..n {
            let sym = self.ring.get(p);
            self.index.feed(p, sym, self.shape.gram);
        }
    }

    /// Runs the checkpoints due at `c`.
    fn checkpoints(&mut self, c: u64) {
        let Finder {
            ring,
            index,
            levels,
            scratch,
            z,
            next_due,
            rest_due,
            later_due,
            live,
            ..
        } = self;
        // The latest earlier end of the gram ending at `c`, looked up once for all levels.
        let mut chain: Option<(u32, u64)> = None;
        let mut due = u64::MAX;
        let mut rest = u64::MAX;
        let mut later = u64::MAX;
        for (li, level) in levels.iter_mut().enumerate() {
            if level.next <= c {
                *live -= level.cands.len();
                level.cands.clear();
                level.checkpoint = c;
                level.next = c + level.step;
                let lv = level.params();
                if lv.k * lv.lo <= c + lv.step {
                    let found = &mut level.cands;
                    let direct = match level.mode {
                        Mode::Dense => {
                            let (start, nearest) = *chain.get_or_insert_with(|| {
                                let e = index.dense_start(c);
                                (e, u64::from((c as u32).wrapping_sub(e)))
                            });
                            // Nothing within reach (the common case): no candidate.
                            let mut spent = 0;
                            nearest >= lv.hi
                                || walk(ring, &index.dense, c, 0, start, &lv, found, &mut spent)
                        }
                        Mode::Sparse => walk_sparse(ring, index, c, &lv, found),
                        Mode::Scan => scan_direct(ring, c, &lv, found),
                    };
                    if !direct {
                        level.cands.clear();
                        z_candidates(ring, c, &lv, scratch, z, &mut level.cands);
                    }
                }
                *live += level.cands.len();
            }
            due = due.min(level.next);
            if li > 0 {
                rest = rest.min(level.next);
            }
            if li > 1 {
                later = later.min(level.next);
            }
        }
        *next_due = due;
        *rest_due = rest;
        *later_due = later;
    }
}

/// How many characters just before a checkpoint every repeat of `copies` copies of a unit of
/// at least `lo` characters, completed before the next checkpoint, has matched: `(copies-1)·lo`
/// minus the checkpoint step.
const fn guaranteed(lo: u64, copies: u64) -> u64 {
    (copies - 1)
        .saturating_mul(lo)
        .saturating_sub(step(lo, copies))
}

/// The checkpoint step of a level of units from `lo` on that need `copies` copies: half of
/// the `(copies-1)·lo` characters every such repeat matches (so a checkpoint lies within
/// them, and the other half is the backward match every candidate has): `lo/2` for two
/// copies, `lo` for three.
const fn step(lo: u64, copies: u64) -> u64 {
    let half = (copies - 1).saturating_mul(lo) / 2;
    if half > 1 {
        half
    } else {
        1
    }
}

/// From this unit length on, [`Finder::for_runs`] reports a unit at two copies whatever the
/// copies asked for, so that its ring stays two copies of the longest unit.
pub(crate) const RUN_TWO_FROM: u64 = 1 << 15;

/// The longest unit a finder accepts (positions in the index are 32-bit).
const MAX_UNIT: u64 = 1 << 28;
/// The largest copy count a finder accepts.
const MAX_COPIES: u64 = 64;

/// A band from public-API arguments (clamped).
fn band(min: usize, max: usize, copies: usize, extra: usize) -> Band {
    let min = (min as u64).clamp(1, MAX_UNIT);
    let max = (max as u64).clamp(min, MAX_UNIT);
    let copies = (copies as u64).clamp(2, MAX_COPIES);
    let extra = (extra as u64).min(MAX_COPIES);
    let extra = if extra > copies { extra } else { 0 };
    Band {
        min,
        max,
        copies,
        extra,
    }
}

/// The numbers a checkpoint needs.
#[derive(Clone, Copy, Debug)]
struct Params {
    lo: u64,
    hi: u64,
    k: u64,
    /// `max(k, extra)`.
    kk: u64,
    step: u64,
}

impl Level {
    fn params(&self) -> Params {
        Params {
            lo: self.lo,
            hi: self.hi,
            k: self.k,
            kk: self.k.max(self.extra),
            step: self.step,
        }
    }
}

/// The longest common suffix of `s[..c]` and `s[..c-q]`, up to `limit` (`limit ≤ c - q`).
#[inline]
fn back_match(ring: &Ring, c: u64, q: u64, limit: u64) -> u64 {
    let mut a = 0u64;
    while a < limit && ring.get(c - 1 - a) == ring.get(c - q - 1 - a) {
        a += 1;
    }
    a
}

/// The backward match of unit `q` at checkpoint `c`, capped where more cannot matter; kept
/// if it is long enough to complete a repeat before the next checkpoint. Returns the
/// comparisons spent.
#[inline]
fn consider(ring: &Ring, c: u64, q: u64, lv: &Params, found: &mut Vec<(u64, u64)>) -> u64 {
    let cap = (lv.kk - 1) * q - 1;
    let need = ((lv.k - 1) * q).saturating_sub(lv.step);
    let limit = cap.min(c.saturating_sub(q));
    let a = back_match(ring, c, q, limit);
    if a >= need {
        found.push((q, a));
    }
    a + 1
}

/// The budget of a checkpoint's direct work (chain entries visited plus comparisons).
fn budget(lv: &Params) -> u64 {
    6 * (lv.hi - lv.lo) + lv.hi / 4 + 64
}

/// Candidates of a hashed level from one chain: the unit lengths `q` such that the gram
/// ending at `c - j` occurred ending at `c - j - q` (by the chain, from its entry `e`, which
/// must be older than `c - j`), each checked by direct comparisons from `c`. Returns false
/// when the checkpoint's work went over budget (the caller then uses the Z-function).
#[allow(clippy::too_many_arguments)]
fn walk(
    ring: &Ring,
    chains: &Chains,
    c: u64,
    j: u64,
    mut e: u32,
    lv: &Params,
    found: &mut Vec<(u64, u64)>,
    spent: &mut u64,
) -> bool {
    let budget = budget(lv);
    let last = ring.get(c.wrapping_sub(1));
    let from = c.wrapping_sub(j) as u32;
    let mut prev_d = 0u64;
    loop {
        let d = u64::from(from.wrapping_sub(e));
        if d <= prev_d || d >= lv.hi {
            return true;
        }
        prev_d = d;
        *spent += 1;
        if d >= lv.lo {
            if lv.k * d > c + lv.step {
                return true;
            }
            // Quick reject (hash collisions, mostly): the last characters must match.
            if d < c && ring.get(c - 1 - d) == last {
                *spent += consider(ring, c, d, lv, found);
            }
        }
        if *spent > budget {
            return false;
        }
        e = chains.prev_of(e);
    }
}

/// Candidates of a sparse level: a qualifying unit length `q` matched the last
/// `gram + STRIDE - 1` characters before `c`, so for the one `j < STRIDE` with
/// `c - j - q` a multiple of [`STRIDE`], the gram ending at `c - j` occurred ending at
/// `c - j - q`, an end the sparse tier indexed.
fn walk_sparse(
    ring: &Ring,
    index: &Index,
    c: u64,
    lv: &Params,
    found: &mut Vec<(u64, u64)>,
) -> bool {
    let mut spent = 0u64;
    let hashes = index.hashes_before(ring, c);
    for j in 0..STRIDE.min(c) {
        let from = c - j;
        if from < index.start + index.gram {
            break;
        }
        let h = hashes.get(j as usize).copied().unwrap_or(0);
        let mut e = index.sparse.first(index.bucket(h));
        // Skip the ends after `c - j` (and `c - j` itself): at most one, as ends are
        // `STRIDE` apart.
        for _ in 0..2 {
            if (c as u32).wrapping_sub(e) <= j as u32 {
                e = index.sparse.prev_of(e);
            }
        }
        if !walk(ring, &index.sparse, c, j, e, lv, found, &mut spent) {
            return false;
        }
    }
    true
}

/// Candidates of a short level: every unit length, by direct comparisons. Returns false when
/// the work went over budget.
fn scan_direct(ring: &Ring, c: u64, lv: &Params, found: &mut Vec<(u64, u64)>) -> bool {
    let budget = budget(lv);
    let mut spent = 0u64;
    let last = ring.get(c.wrapping_sub(1));
    for q in lv.lo..lv.hi {
        if lv.k * q > c + lv.step {
            break;
        }
        // Quick reject: a candidate needs a backward match unless `need` is 0.
        if (lv.k - 1) * q > lv.step && q < c && ring.get(c - q - 1) != last {
            spent += 1;
            continue;
        }
        spent += consider(ring, c, q, lv, found);
        if spent > budget {
            return false;
        }
    }
    true
}

/// Candidates of any level from a Z-function over the reversed window `R[j] = s[c-1-j]`:
/// linear in the window whatever the text.
fn z_candidates(
    ring: &Ring,
    c: u64,
    lv: &Params,
    scratch: &mut Vec<u32>,
    z: &mut Vec<u32>,
    found: &mut Vec<(u64, u64)>,
) {
    let len = c.min(lv.kk * (lv.hi - 1)) as usize;
    scratch.clear();
    scratch.extend((0..len as u64).map(|j| ring.get(c - 1 - j)));
    z_function(scratch, lv.hi as usize, z);
    for q in lv.lo..lv.hi {
        if lv.k * q > c + lv.step || q as usize >= len {
            break;
        }
        let cap = (lv.kk - 1) * q - 1;
        let need = ((lv.k - 1) * q).saturating_sub(lv.step);
        let a = u64::from(z.get(q as usize).copied().unwrap_or(0)).min(cap);
        if a >= need {
            found.push((q, a));
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
    /// One engine, two bands: short units (`copies` copies, and `root_copies` copies as the
    /// extra count) and long units (`copies` copies).
    finder: Finder,
    short: Option<usize>,
    long: Option<usize>,
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
        let short_hi = long.min(max + 1);
        let root_check = root_copies > copies;
        let mut bands = Vec::new();
        let mut short = None;
        let mut long_band = None;
        if min < short_hi {
            short = Some(bands.len());
            bands.push(band(min, short_hi - 1, copies, root_copies));
        }
        if long_lo <= max {
            long_band = Some(bands.len());
            bands.push(band(long_lo, max, copies, 0));
        }
        TailMatcher {
            finder: Finder::with_bands(&bands, HEAD_BITS_MAX, DENSE_REACH),
            short,
            long: long_band,
            root_check,
            pi: Vec::new(),
        }
    }

    /// Characters buffered.
    pub fn buffered(&self) -> usize {
        self.finder.buffered()
    }

    /// The last `len` characters (at most what the engine keeps).
    pub fn tail_string(&self, len: usize) -> String {
        self.finder.tail_string(len)
    }

    /// Appends one symbol; returns the smallest qualifying unit length.
    #[inline]
    pub fn push(&mut self, sym: u32) -> Option<u64> {
        let [h0, h1] = self.finder.push_bands(sym)?;
        let pick = |band: Option<usize>| match band {
            Some(0) => h0,
            Some(_) => h1,
            None => (None, None),
        };
        let mut best = pick(self.long).0;
        let (two, more) = pick(self.short);
        best = min_opt(best, more);
        if let Some(q) = two {
            if !self.root_check || primitive_root(&self.finder, q, &mut self.pi) != q {
                best = min_opt(best, Some(q));
            }
        }
        best
    }
}

/// The smaller of two optional lengths.
fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Length of the primitive root of the last `q` symbols of `f` (prefix function): `q` when
/// they form a primitive word (not a power of a shorter one).
pub(crate) fn primitive_root(f: &Finder, q: u64, pi: &mut Vec<u32>) -> u64 {
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
    if period < q && q % period == 0 {
        period as u64
    } else {
        q as u64
    }
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

    #[test]
    fn a_run_finder_reports_long_units_at_two_copies() {
        let f = Finder::for_runs(30, 65_536, 3);
        for (q, k) in [(30, 3), (1_000, 3), (32_767, 3), (32_768, 2), (65_536, 2)] {
            assert_eq!(f.copies_for(q), k, "unit {q}");
        }
        assert_eq!(Finder::for_runs(30, 1_000, 2).copies_for(500), 2);
        assert_eq!(Finder::for_runs(30, 1_000, 5).copies_for(500), 3);
    }

    #[test]
    fn the_default_run_finder_takes_the_loop_compiled_for_it() {
        // The quiet loop is compiled with the default gram's multiplier as a constant: the
        // finder of the default settings must hash with it.
        let mut f = Finder::for_runs(
            crate::Settings::DEFAULT_MIN_UNIT,
            crate::Settings::DEFAULT_MAX_UNIT,
            3,
        );
        f.push(u32::from('a'));
        assert_eq!(f.index.shift, DEFAULT_SHIFT);
        assert_eq!(shift_for(15), 32);
        assert_eq!(shift_for(1), 0);
    }

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
    fn the_gram_hash_depends_on_the_gram_alone() {
        // Two different histories ending with the same `gram` symbols hash alike, for every
        // gram length; a different last symbol hashes differently.
        for gram in 1..=GRAM_MAX {
            let shape = IndexShape {
                gram,
                head_bits: HEAD_BITS_MAX,
                dense_limit: 64,
                sparse_limit: 0,
            };
            let hash_of = |history: &[u32]| {
                let mut index = Index::default();
                index.reset(&shape, 0);
                for (p, &sym) in history.iter().enumerate() {
                    index.feed(p as u64, sym, gram);
                }
                index.hash
            };
            let tail: Vec<u32> = (0..gram as u32).map(|i| 0x61 + (i * 7) % 26).collect();
            let a: Vec<u32> = (0..40u32).map(|i| 0x30 + i).chain(tail.clone()).collect();
            let b: Vec<u32> = (0..3u32)
                .map(|i| 0x11_0000 + i)
                .chain(tail.clone())
                .collect();
            assert_eq!(hash_of(&a), hash_of(&b), "gram {gram}");
            let mut c = a.clone();
            if let Some(last) = c.last_mut() {
                *last += 1;
            }
            assert_ne!(hash_of(&a), hash_of(&c), "gram {gram}");
        }
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

    /// A small deterministic generator for test texts.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn word(&mut self, len: usize, alphabet: &[u8]) -> String {
            (0..len)
                .map(|_| char::from(alphabet[(self.next() % alphabet.len() as u64) as usize]))
                .collect()
        }
    }

    /// Texts that stress the index: near repeats (a counter inside a repeated paragraph),
    /// template lines, low-entropy text, nested and planted exact repeats.
    fn stress_texts() -> Vec<String> {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let prose = b"abcdefghij klmnop";
        let mut out = Vec::new();
        // A paragraph with a counter, then an exact repeat of a long unit.
        let para = g.word(90, prose);
        let (a, b) = para.split_at(40);
        let mut t: String = (0..8).map(|i| format!("{a}{i}{b}")).collect();
        let unit = g.word(150, prose);
        t.push_str(&unit);
        t.push_str(&unit);
        t.push_str(&g.word(40, prose));
        out.push(t);
        // Template lines sharing a long prefix.
        out.push(
            (0..30)
                .map(|i| {
                    format!(
                        "| {} | request handled by pool | {} ms |\n",
                        i % 7,
                        g.next() % 50
                    )
                })
                .collect(),
        );
        // Low entropy: random binary, then a planted square inside it.
        let bin = g.word(700, b"ab");
        let sq = g.word(70, b"ab");
        out.push(format!("{bin}{sq}{sq}{}", g.word(60, b"ab")));
        // Runs and nested periods.
        let u = g.word(35, prose);
        let v = g.word(12, prose);
        out.push(format!(
            "{}{}{u}{u}{u}{v}{u}{v}{u}{v}{u}{u}{}",
            "a".repeat(120),
            g.word(50, prose),
            "xy".repeat(80)
        ));
        // A Fibonacci word: squares everywhere.
        let (mut f0, mut f1) = (String::from("a"), String::from("ab"));
        while f1.len() < 900 {
            let next = format!("{f1}{f0}");
            f0 = std::mem::replace(&mut f1, next);
        }
        out.push(f1);
        out
    }

    #[test]
    fn extreme_arguments_are_clamped_not_fatal() {
        let mut f = Finder::with_extra(usize::MAX, usize::MAX, usize::MAX, usize::MAX);
        let mut g = Finder::new(0, 0, 0);
        for c in "abcabcabc".chars() {
            assert_eq!(f.push(u32::from(c)), None);
            g.push(u32::from(c));
        }
        assert!(f.buffered() <= 64 * 1024);
        assert_eq!(g.push(u32::from('c')), Some(1));
    }

    #[test]
    fn default_levels_use_the_index() {
        let d = crate::Settings::default();
        let m = TailMatcher::new(
            d.min_unit,
            d.max_unit,
            d.min_copies,
            d.long_unit,
            d.root_copies,
        );
        assert_eq!(m.finder.shape.gram, 15);
        assert!(m.finder.levels.iter().all(|l| l.mode != Mode::Scan));
        assert!(m.finder.levels.iter().any(|l| l.mode == Mode::Sparse));
        // Levels cover every unit length exactly once, per band.
        let lens: u64 = m.finder.levels.iter().map(|l| l.hi - l.lo).sum();
        assert_eq!(lens, 65_536 - 30 + 1);
    }

    #[test]
    fn hash_collisions_never_change_the_answer() {
        // With one or two buckets every gram collides: the exact comparisons sort it out.
        // Dense reaches of 1 and 64 send most levels to the sparse tier.
        for (bits, dense) in [(1, 1), (2, 64), (HEAD_BITS_MAX, 1), (HEAD_BITS_MAX, 64)] {
            for text in stress_texts() {
                let s: Vec<u32> = text.chars().map(u32::from).collect();
                // Powers of two as `max` make the ring and the chain links exactly as long
                // as a walk or a checkpoint can reach.
                for (min, max, k) in [
                    (30, 400, 2),
                    (12, 300, 3),
                    (5, 90, 2),
                    (40, 80, 2),
                    (30, 64, 2),
                    (20, 128, 2),
                    (10, 64, 4),
                ] {
                    let want = brute(&s, min, max, k);
                    let mut f =
                        Finder::with_index(min as usize, max as usize, k as usize, bits, dense);
                    let got: Vec<Option<u64>> = s.iter().map(|&c| f.push(c)).collect();
                    assert_eq!(
                        got, want,
                        "bits {bits} dense {dense} min {min} max {max} k {k} text {text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_restored_finder_rebuilds_its_index_and_continues_exactly() {
        for text in stress_texts() {
            let s: Vec<u32> = text.chars().map(u32::from).collect();
            for cut in [0, 1, 20, 100, 333, s.len() / 2, s.len()] {
                let cut = cut.min(s.len());
                for dense in [1, DENSE_REACH as usize] {
                    let mut a = Finder::with_index(30, 300, 2, HEAD_BITS_MAX, dense);
                    for &c in &s[..cut] {
                        a.push(c);
                    }
                    let json = serde_json::to_string(&a).unwrap();
                    let mut b: Finder = serde_json::from_str(&json).unwrap();
                    assert!(!b.index.synced);
                    for &c in &s[cut..] {
                        assert_eq!(a.push(c), b.push(c), "cut {cut} dense {dense}");
                    }
                }
            }
        }
    }

    #[test]
    fn long_units_agree_with_brute_force_at_default_reach() {
        // Units of 700 and 3000 characters (dense and sparse levels), exact and nudged
        // copies, within prose, with the default engine.
        let mut g = Gen(0x2545_f491_4f6c_dd1d);
        let prose = b"abcdefghijklmnopqrstuvwxyz  ";
        let u = g.word(3000, prose);
        let mut v = g.word(700, prose);
        let mut t = g.word(2000, prose);
        t.push_str(&v);
        v.replace_range(350..351, "#");
        t.push_str(&v);
        t.push_str(&g.word(500, prose));
        t.push_str(&u);
        t.push_str(&u[..2999]);
        t.push('#');
        t.push_str(&g.word(300, prose));
        t.push_str(&u);
        t.push_str(&u);
        t.push_str(&g.word(40, prose));
        let s: Vec<u32> = t.chars().map(u32::from).collect();
        let want = brute(&s, 30, 65_536, 2);
        let hits = want.iter().filter(|w| w.is_some()).count();
        assert!(hits > 0 && want.contains(&Some(3000)));
        let mut f = Finder::new(30, 65_536, 2);
        assert!(f.levels.iter().any(|l| l.mode == Mode::Sparse));
        let got: Vec<Option<u64>> = s.iter().map(|&c| f.push(c)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn matcher_agrees_with_the_rule_oracle_on_default_like_settings() {
        let settings = crate::Settings {
            max_unit: 400,
            ..crate::Settings::default()
        };
        for text in stress_texts() {
            let s: Vec<u32> = text.chars().map(u32::from).collect();
            let mut m = TailMatcher::new(30, 400, 2, settings.long_unit, settings.root_copies);
            for n in 1..=s.len() {
                let got = m.push(s[n - 1]).map(|q| q as usize);
                assert_eq!(
                    got,
                    crate::oracle::rule_unit(&s, n, &settings),
                    "n {n} text {text:?}"
                );
            }
        }
    }
}
