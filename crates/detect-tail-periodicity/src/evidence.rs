//! The default rule: a periodic tail is judged by its evidence (how far it spans, how many
//! copies of its primitive root it holds), with thresholds per root length measured on
//! legitimate text.
//!
//! [`RunTracker`] follows the maximal periodic run at the tail of the sequence: the exact
//! engine ([`Finder`], two copies of a unit of at least `min-unit` characters) reports that
//! a run exists; the tracker then finds its primitive root `p` once (a prefix function over
//! one unit), extends it backwards once (bounded), and from then on checks one character per
//! symbol (`s[n] == s[n - p]`) until the run breaks. The run's span only grows by one per
//! symbol, so a threshold is a single comparison.

use crate::exact::{primitive_root, Finder};
use serde::{Deserialize, Serialize};

/// One row of a threshold table: runs whose primitive root is at most `max_root`
/// characters fire once they span `span` characters and hold `copies` copies of the root
/// (`copies = 0`: the span alone decides, for tiny roots).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// Longest root the row answers for.
    pub max_root: u32,
    /// Span needed, in characters.
    pub span: u32,
    /// Copies of the root needed (0 = span only).
    pub copies: u32,
}

impl Row {
    /// The span at which a run of `root` fires under this row, scaled by `scale_pct` percent.
    pub fn need(&self, root: u64, scale_pct: u32) -> u64 {
        let base = u64::from(self.span).max(u64::from(self.copies) * root);
        (base * u64::from(scale_pct)).div_ceil(100).max(2 * root)
    }
}

/// How far back a run is followed: the longest span any prose or code row asks for, scaled
/// by `scale_pct` percent, plus one.
pub fn back_cap(scale_pct: u32) -> u64 {
    let most = crate::PROSE_TABLE
        .iter()
        .chain(crate::CODE_TABLE)
        .map(|r| u64::from(r.span))
        .max()
        .unwrap_or(0);
    (most * u64::from(scale_pct)).div_ceil(100) + 1
}

/// The row answering for `root` in `table` (sorted by `max_root`; the last row answers for
/// every longer root).
pub fn row_for(table: &[Row], root: u64) -> Row {
    table
        .iter()
        .find(|r| root <= u64::from(r.max_root))
        .or(table.last())
        .copied()
        .unwrap_or(Row {
            max_root: u32::MAX,
            span: u32::MAX,
            copies: 0,
        })
}

/// How many copies of a unit the engine must see before a run can fire under `tables` at
/// `scale_pct` percent, for units of at least `min_unit` characters: 3 when every row asks,
/// for every root, at least three copies of the shortest unit the engine sees it as (the
/// root, or its smallest multiple of at least `min_unit` characters), else 2.
///
/// The engine finds a run once its tail holds that many copies; the tracker then extends it
/// backwards, so a run found at its third copy has the same start, span and firing point as
/// one found at its second. Three copies let the engine check far less often (see
/// [`Finder`]): its checkpoint step grows from `lo/2` to `lo`.
pub fn engine_copies(tables: &[&[Row]], scale_pct: u32, min_unit: u64) -> u64 {
    if tables
        .iter()
        .all(|t| fires_from(t, scale_pct, min_unit.max(1), 3))
    {
        3
    } else {
        2
    }
}

/// Whether every root's span threshold in `table` is at least `k` copies of the unit the
/// engine sees the root as.
fn fires_from(table: &[Row], scale_pct: u32, min_unit: u64, k: u64) -> bool {
    let scale = u64::from(scale_pct);
    // Roots shorter than `min_unit`: the unit is the root's smallest multiple of at least
    // `min_unit` characters.
    let short = (1..min_unit.min(1 << 16)).all(|p| {
        let unit = min_unit.div_ceil(p) * p;
        row_for(table, p).need(p, scale_pct) >= k * unit
    });
    // Longer roots are their own unit: on a row's range, `need(p) ≥ k·p` holds for every
    // `p` when the row asks `k` copies, else when its span covers `k` copies of its longest
    // root (the last row has no longest root).
    let mut lo = min_unit;
    let long = table.iter().enumerate().all(|(i, r)| {
        let hi = if i + 1 == table.len() {
            u64::MAX
        } else {
            u64::from(r.max_root)
        };
        if hi < lo {
            return true;
        }
        lo = hi.saturating_add(1);
        u64::from(r.copies) * scale >= 100 * k
            || u64::from(r.span).saturating_mul(scale) >= (100 * k).saturating_mul(hi)
    });
    short && long && !table.is_empty()
}

/// A maximal periodic run that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Length of the primitive root.
    pub root: u64,
    /// Position of the run's first symbol.
    pub start: u64,
    /// Position after its last symbol.
    pub end: u64,
}

impl Run {
    /// Characters the run spans.
    pub fn span(&self) -> u64 {
        self.end - self.start
    }

    /// Whole copies of the root it holds.
    pub fn copies(&self) -> u64 {
        self.span() / self.root.max(1)
    }
}

/// Whether a run of `root` that starts at `start`, its newest copy ending at `end`, lies
/// inside one word of data ([`RunTracker::inside_word`]): the root's symbols (the `root`
/// before `end`) are visible ASCII (`visible(i)` of each position), and so are the `before`
/// symbols ahead of `start`, or the root is itself that long.
pub fn word_of_data(
    start: u64,
    end: u64,
    root: u64,
    before: u64,
    visible: impl Fn(u64) -> bool,
) -> bool {
    root <= end
        && (root >= before || (start >= before && (start - before..start).all(&visible)))
        && (end - root..end).all(&visible)
}

/// Follows the maximal periodic run at the tail.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunTracker {
    finder: Finder,
    /// (root, start) of the run at the tail.
    run: Option<(u64, u64)>,
    /// How far back a new run is extended (enough for every threshold).
    back_cap: u64,
    #[serde(skip)]
    pi: Vec<u32>,
    /// What [`RunTracker::long_line_before`] last read of the ring.
    #[serde(skip)]
    breaks: BreakScan,
}

/// The line breaks [`RunTracker::long_line_before`] read: symbols `from..to` were scanned,
/// and `last` is the newest break among them. A cache: equal whatever it holds.
#[derive(Clone, Copy, Debug, Default)]
struct BreakScan {
    from: u64,
    to: u64,
    last: Option<u64>,
}

impl PartialEq for BreakScan {
    fn eq(&self, _: &BreakScan) -> bool {
        true
    }
}

/// Whether a symbol ends a line: a line feed, or the separator put where the stream switches
/// between thinking and answer (a symbol beyond every character).
#[inline]
pub fn is_line_break(sym: u32) -> bool {
    sym == u32::from('\n') || sym > u32::from(char::MAX)
}

/// The most symbols [`root_reads_as_code`] reads of a run.
pub const ROOT_LINES_WINDOW: u64 = 2048;

/// Whether the lines of a periodic run's root read as code: among the line breaks of the
/// root's last `min(p, ROOT_LINES_WINDOW / 2)` symbols before `n`, the lines that hold a
/// visible character are at least one, and at least half of them end as a line of code does
/// (`;` `{` `}` `(` `)` `[` `]` `,` `=` `\`, spaces, tabs and carriage returns aside: the test
/// the message's own lines take). The line's end is looked for in the `min(2p,
/// ROOT_LINES_WINDOW)` symbols before `n`, all of them inside the run when it holds two
/// copies of its root, so where the root was cut makes no difference. `sym(i)` is the `i`th
/// symbol, `None` if no longer held (then the answer is false). At most
/// [`ROOT_LINES_WINDOW`] reads.
pub fn root_reads_as_code(n: u64, p: u64, sym: impl Fn(u64) -> Option<u32>) -> bool {
    let window = p.saturating_mul(2).min(ROOT_LINES_WINDOW).min(n);
    let counted_from = n - p.min(ROOT_LINES_WINDOW / 2).min(n);
    let (mut lines, mut code) = (0u32, 0u32);
    // The last visible character, walking forward from the window's start.
    let mut last: Option<char> = None;
    for i in n - window..n {
        let Some(s) = sym(i) else {
            return false;
        };
        if is_line_break(s) {
            if i >= counted_from {
                if let Some(c) = last {
                    lines += 1;
                    if crate::detector::ends_code_line(c) {
                        code += 1;
                    }
                }
            }
            last = None;
        } else {
            match char::from_u32(s) {
                Some(' ' | '\t' | '\r') | None => {}
                Some(c) => last = Some(c),
            }
        }
    }
    lines > 0 && 2 * code >= lines
}

impl RunTracker {
    /// Whether the lines of the run found at `n` symbols with root `p` read as code
    /// ([`root_reads_as_code`]).
    pub fn root_reads_as_code(&self, p: u64) -> bool {
        root_reads_as_code(self.finder.n, p, |i| self.finder.symbol(i))
    }

    /// A tracker of runs holding two copies of a unit of `min..=max` symbols, extended
    /// backwards by at most `back_cap` symbols when found.
    pub fn new(min: usize, max: usize, back_cap: u64) -> RunTracker {
        RunTracker::with_copies(min, max, back_cap, 2)
    }

    /// As [`RunTracker::new`], with runs found once the tail holds `copies` (2 or 3; clamped)
    /// copies of a unit: see [`engine_copies`].
    pub fn with_copies(min: usize, max: usize, back_cap: u64, copies: u64) -> RunTracker {
        RunTracker {
            finder: Finder::for_runs(min, max, copies),
            run: None,
            back_cap,
            pi: Vec::new(),
            breaks: BreakScan::default(),
        }
    }

    /// Takes over the buffers of `old`, emptied (see [`Finder::recycle`]). `self` must be
    /// new.
    pub(crate) fn recycle(&mut self, old: &mut RunTracker) {
        self.finder.recycle(&mut old.finder);
        let mut pi = std::mem::take(&mut old.pi);
        pi.clear();
        self.pi = pi;
        self.breaks = BreakScan::default();
    }

    /// Symbols held in memory.
    pub fn buffered(&self) -> usize {
        self.finder.buffered()
    }

    /// The last `len` characters, as a string.
    pub fn tail_string(&self, len: usize) -> String {
        self.finder.tail_string(len)
    }

    /// Symbols pushed so far.
    pub fn len(&self) -> u64 {
        self.finder.n
    }

    /// Whether the run of `root` that starts at `start` lies inside one word of data: its
    /// root is made of visible ASCII characters (no whitespace, no separator; encodings and
    /// indexes are ASCII, while a language written without spaces is not data), and so are
    /// the `before` symbols ahead of it, or the root is itself that long (a word of data
    /// repeated: a 63-digit label and its dot), all still held.
    pub fn inside_word(&self, start: u64, root: u64, before: u64) -> bool {
        word_of_data(start, self.finder.n, root, before, |i| {
            self.finder
                .symbol(i)
                .and_then(char::from_u32)
                .is_some_and(|c| c.is_ascii_graphic())
        })
    }

    /// Whether the run that starts at `start` began on a long line: the `len` symbols ahead of
    /// it are all still held and none ends a line ([`is_line_break`]). Called once per run
    /// start: it reads at most `len` symbols, and none it read for an earlier run while runs
    /// start further on (then the reads over a message are at most one per symbol).
    pub fn long_line_before(&mut self, start: u64, len: u64) -> bool {
        let n = self.finder.n;
        let Some(lo) = start.checked_sub(len) else {
            return false;
        };
        if start > n || n - lo > self.finder.ring.capacity() as u64 {
            return false;
        }
        let b = &mut self.breaks;
        if !(b.from <= lo && lo <= b.to && b.to <= start) {
            *b = BreakScan {
                from: lo,
                to: lo,
                last: None,
            };
        }
        for i in b.to..start {
            if is_line_break(self.finder.ring.get(i)) {
                b.last = Some(i);
            }
        }
        b.to = start;
        b.last.is_none_or(|p| p < lo)
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.finder.n == 0
    }

    /// The run at the tail: (root, start).
    #[inline]
    pub fn current(&self) -> Option<(u64, u64)> {
        self.run
    }

    /// Appends one symbol; returns the run that it broke, if any. A run that starts here
    /// (the engine saw its second copy) is `current()` afterwards, with `started = true`
    /// returned through the second field.
    #[inline]
    pub fn push(&mut self, sym: u32) -> (Option<Run>, bool) {
        let hit = self.finder.push_run(sym);
        let n = self.finder.n;
        let mut ended = None;
        if let Some((root, start)) = self.run {
            if self.finder.ring.get(n - 1 - root) != sym {
                ended = Some(Run {
                    root,
                    start,
                    end: n - 1,
                });
                self.run = None;
            }
        }
        let mut started = false;
        if self.run.is_none() {
            if let Some(q) = hit {
                self.run = Some(self.start_run(q));
                started = true;
            }
        }
        (ended, started)
    }

    /// As [`RunTracker::push`], without the run that broke: whether a run started here.
    #[inline(always)]
    pub fn push_started(&mut self, sym: u32) -> bool {
        let hit = self.finder.push_run(sym);
        if let Some((root, _)) = self.run {
            let n = self.finder.n;
            if self.finder.ring.get(n - 1 - root) == sym {
                return false;
            }
            self.run = None;
        }
        match hit {
            Some(q) => {
                self.run = Some(self.start_run(q));
                true
            }
            None => false,
        }
    }

    /// Whether [`RunTracker::push_quiet`] may take symbols: no run is at the tail and no
    /// candidate is live.
    #[inline]
    pub(crate) fn quiet(&self) -> bool {
        self.run.is_none() && self.finder.quiet()
    }

    /// See [`Finder::quiet_ascii`]. Needs [`RunTracker::quiet`].
    #[inline(always)]
    pub(crate) fn quiet_ascii<const LF: bool>(
        &mut self,
        bytes: &[u8],
        filler: &mut u32,
        max_filler: u32,
    ) -> (usize, bool) {
        self.finder.quiet_ascii::<LF>(bytes, filler, max_filler)
    }

    /// Appends one symbol as [`RunTracker::push`] would (no run starts: see
    /// [`Finder::push_quiet`]), or returns false, doing nothing. Needs [`RunTracker::quiet`].
    #[inline(always)]
    pub(crate) fn push_quiet(&mut self, sym: u32) -> bool {
        self.finder.push_quiet(sym)
    }

    /// The run ending now whose last `copies·q` symbols are copies of a unit of `q`.
    #[cold]
    fn start_run(&mut self, q: u64) -> (u64, u64) {
        let n = self.finder.n;
        let p = primitive_root(&self.finder, q, &mut self.pi);
        let lowest = n
            .saturating_sub(self.finder.ring.capacity() as u64)
            .max(n.saturating_sub(self.back_cap));
        let mut start = n.saturating_sub(self.finder.copies_for(q) * q);
        let ring = &self.finder.ring;
        while start > lowest && ring.get(start - 1) == ring.get(start - 1 + p) {
            start -= 1;
        }
        (p, start)
    }

    /// The symbols of the current run's root (the last `root` symbols), oldest first.
    pub fn root_symbols(&self) -> Vec<u32> {
        let n = self.finder.n;
        match self.run {
            Some((root, _)) => (n - root..n).map(|i| self.finder.ring.get(i)).collect(),
            None => Vec::new(),
        }
    }

    /// Ends the message: the run at the tail, if any.
    pub fn finish(&mut self) -> Option<Run> {
        let n = self.finder.n;
        self.run.take().map(|(root, start)| Run {
            root,
            start,
            end: n,
        })
    }
}
