//! A brute-force reference for tests, fuzzing and benchmarks: quadratic, obviously correct.
//!
//! Public rather than `#[cfg(test)]` because its users are separate crates: the integration
//! tests (`tests/proptests.rs`) and the fuzz target (`fuzz/fuzz_targets/tail_periodicity.rs`).
//! No detector code calls it.

use crate::evidence::row_for;
use crate::{
    Lines, Prep, Settings, CODE_TABLE, DATA_TABLE, DATA_WORD_CHARS, LONG_LINE_CHARS, PROSE_TABLE,
};
use loopguard_core::Stream;

/// The smallest unit length `q` in `min..=max` such that `seq[..n]` ends with `copies`
/// copies of a unit of length `q`.
pub fn tail_unit(seq: &[u32], n: usize, min: usize, max: usize, copies: usize) -> Option<usize> {
    let copies = copies.max(2);
    let cap = max.min(n / copies);
    (min.max(1)..=cap).find(|&q| {
        ((n - (copies - 1) * q)..n).all(|j| seq.get(j).is_some() && seq.get(j) == seq.get(j - q))
    })
}

/// The default rule, brute force: the smallest `q` in `min..=max` such that `seq[..n]` ends
/// with `copies` copies of a unit `u` of length `q`, and `q ≥ long` or `seq[..n]` ends with
/// `root_copies` copies of the primitive root of `u`.
pub fn rule_unit(seq: &[u32], n: usize, s: &Settings) -> Option<usize> {
    let copies = s.min_copies.max(2);
    let cap = s.max_unit.min(n / copies);
    (s.min_unit.max(1)..=cap).find(|&q| {
        if tail_unit_exact(seq, n, q, copies) {
            if q >= s.long_unit {
                return true;
            }
            let p = root(&seq[n - q..n]);
            s.root_copies * p <= n && tail_unit_exact(seq, n, p, s.root_copies)
        } else {
            false
        }
    })
}

fn tail_unit_exact(seq: &[u32], n: usize, q: usize, copies: usize) -> bool {
    copies * q <= n && ((n - (copies - 1) * q)..n).all(|j| seq.get(j) == seq.get(j - q))
}

/// Length of the primitive root of `u`: the smallest `p` dividing `|u|` with `u` = root^k.
pub fn root(u: &[u32]) -> usize {
    let q = u.len();
    (1..=q)
        .find(|&p| q % p == 0 && (p..q).all(|i| u[i] == u[i - p]))
        .unwrap_or(q)
}

/// Where the exact engine must fire on a message made of `pieces`: the message character
/// offset just after the completing character, and the smallest unit length there.
/// Applies the same preparation (stream separators, filler cut) as the detector.
pub fn first_fire(settings: &Settings, pieces: &[(Stream, &str)]) -> Option<(u64, usize)> {
    let seq = Prep::sequence(settings, pieces);
    let syms: Vec<u32> = seq.iter().map(|&(s, _)| s).collect();
    (1..=syms.len()).find_map(|n| {
        rule_unit(&syms, n, settings).map(|q| (seq.get(n - 1).map_or(0, |&(_, off)| off), q))
    })
}

/// Where the evidence rule must fire on a message made of `pieces`, brute force: the message
/// character offset and the root length. The run at the tail starts when the sequence ends
/// with two copies (three with the default thresholds: see
/// [`crate::evidence::engine_copies`]) of a unit of `min-unit..=max-unit` symbols (its root is the primitive root
/// of that unit, its start found by extending the period backwards, at most as far as every
/// threshold needs), lasts while each symbol equals the one a root earlier, and fires once it
/// spans what the threshold row of its root asks for, in prose or in code as the text reads
/// at that symbol — unless the run lies inside one word of data (a root of visible ASCII
/// characters, with [`DATA_WORD_CHARS`] of them ahead of it, still held by the engine's
/// ring, or a root that long itself) or began on a line already [`LONG_LINE_CHARS`] long (no
/// line break among the symbols ahead of it, still held), which needs, in prose and in code,
/// what the code row and [`DATA_TABLE`] ask.
pub fn evidence_fire(settings: &Settings, pieces: &[(Stream, &str)]) -> Option<(u64, usize)> {
    let mut prep = Prep::new(settings);
    let mut lines = Lines::default();
    let mut seq: Vec<(u32, u64, bool)> = Vec::new();
    let mut offset = 0u64;
    for (stream, delta) in pieces {
        if let Some(sep) = prep.switch(*stream) {
            seq.push((sep, offset, lines.code()));
        }
        for ch in delta.chars() {
            offset += 1;
            lines.feed(ch);
            if let Some(sym) = prep.map(ch) {
                seq.push((sym, offset, lines.code()));
            }
        }
    }
    let syms: Vec<u32> = seq.iter().map(|&(s, _, _)| s).collect();
    let cap =
        usize::try_from(crate::evidence::back_cap(settings.evidence_scale)).unwrap_or(usize::MAX);
    let first_content = syms
        .iter()
        .position(|&s| !char::from_u32(s).is_some_and(char::is_whitespace));
    let k = crate::detector::engine_copies(settings) as usize;
    let mut chant_on = settings.chant_copies > 0 && k > 2;
    let ring_limit =
        crate::exact::Finder::for_runs(settings.min_unit, settings.max_unit, k as u64).ring_limit();
    let visible = |i: usize| {
        syms.get(i)
            .and_then(|&s| char::from_u32(s))
            .is_some_and(|c| c.is_ascii_graphic())
    };
    let mut run: Option<(usize, usize, u64, u64)> = None;
    for n in 1..=syms.len() {
        if let Some((p, ..)) = run {
            if syms.get(n - 1) != syms.get(n - 1 - p) {
                run = None;
            }
        }
        if run.is_none() {
            // Units of `RUN_TWO_FROM` or more are always seen at two copies.
            let two_from = crate::exact::RUN_TWO_FROM as usize;
            let hit = if k > 2 {
                tail_unit(
                    &syms,
                    n,
                    settings.min_unit,
                    settings.max_unit.min(two_from - 1),
                    k,
                )
                .map(|q| (q, k))
                .or_else(|| {
                    tail_unit(
                        &syms,
                        n,
                        settings.min_unit.max(two_from),
                        settings.max_unit,
                        2,
                    )
                    .map(|q| (q, 2))
                })
            } else {
                tail_unit(&syms, n, settings.min_unit, settings.max_unit, 2).map(|q| (q, 2))
            };
            if let Some((q, k)) = hit {
                let p = root(&syms[n - q..n]);
                let mut start = n - k * q;
                let lowest = n.saturating_sub(cap);
                while start > lowest && syms[start - 1] == syms[start - 1 + p] {
                    start -= 1;
                }
                let scale = settings.evidence_scale;
                let mut prose = row_for(PROSE_TABLE, p as u64).need(p as u64, scale);
                let mut code = row_for(CODE_TABLE, p as u64).need(p as u64, scale);
                // Lines of code repeated are judged as code, wherever they stand (the run's
                // last two roots held by the ring, as they are when the run is found).
                let window = (2 * p).min(crate::evidence::ROOT_LINES_WINDOW as usize);
                if prose < code
                    && window <= ring_limit
                    && crate::evidence::root_reads_as_code(n as u64, p as u64, |i| {
                        syms.get(i as usize).copied()
                    })
                {
                    prose = code;
                }
                // Causal, as the detector is: a run is a chant only if the message's first content
                // has been seen by now and the run began at or before it.
                if settings.chant_copies > 0 && first_content.is_some_and(|f| f < n && start <= f) {
                    let chant =
                        (settings.chant_copies as u64 * p as u64).max(2 * settings.min_unit as u64);
                    prose = prose.min(chant);
                    code = code.min(chant);
                }
                // Inside one word of data, or begun on a line already `LONG_LINE_CHARS` long
                // (the symbols ahead of it still held by the ring).
                let before = DATA_WORD_CHARS as usize;
                let line = LONG_LINE_CHARS as usize;
                let in_word = (p >= before
                    || (start >= before
                        && n - (start - before) <= ring_limit
                        && (start - before..start).all(visible)))
                    && (n - p..n).all(visible);
                let long_line = start >= line
                    && n - (start - line) <= ring_limit
                    && !syms[start - line..start]
                        .iter()
                        .any(|&s| crate::evidence::is_line_break(s));
                if in_word || long_line {
                    let data = code.max(row_for(DATA_TABLE, p as u64).need(p as u64, scale));
                    prose = prose.max(data);
                    code = data;
                }
                run = Some((p, start, prose, code));
            }
        }
        if let Some((p, start, prose, code)) = run {
            let (_, off, in_code) = seq[n - 1];
            let need = if in_code { code } else { prose };
            if (n - start) as u64 >= need {
                return Some((off, p));
            }
        }
        // A short chant: the content, from its first symbol that is not whitespace, is one
        // root repeated; followed through its first 6 · min-unit symbols while two copies of
        // its unit still fit there (with the engine at three copies only).
        if let Some(f) = first_content.filter(|&f| chant_on && f < n) {
            let content = &syms[f..n];
            let min = settings.min_unit.max(1);
            let p = period(content);
            let unit = min.div_ceil(p) * p;
            if content.len() <= 6 * min && 2 * unit <= 6 * min {
                if content.len() >= (settings.chant_copies * p).max(2 * unit) {
                    return Some((seq[n - 1].1, p));
                }
            } else {
                chant_on = false;
            }
        }
    }
    None
}

/// The smallest period of `s`: the least `p ≥ 1` with `s[i] = s[i - p]` for every `i ≥ p`.
fn period(s: &[u32]) -> usize {
    (1..=s.len())
        .find(|&p| (p..s.len()).all(|i| s[i] == s[i - p]))
        .unwrap_or(s.len().max(1))
}
