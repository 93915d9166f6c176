//! A brute-force reference for tests, fuzzing and benchmarks: quadratic, obviously correct.
//!
//! Public rather than `#[cfg(test)]` because its users are separate crates: the integration
//! tests (`tests/proptests.rs`) and the fuzz target (`fuzz/fuzz_targets/tail_periodicity.rs`).
//! No detector code calls it.

use crate::{Prep, Settings};
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
