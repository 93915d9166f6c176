//! Sliding windows over the resolved calls of a run, for the cycle tier.
//!
//! A window of `repeats × period` calls "holds" a cycle when it is made of at most `period`
//! distinct (call, result) pairs, each seen at least `repeats − 1` times, with at least two
//! distinct calls and no call whose result is missing. A strict cycle of period `p` repeated
//! `repeats` times is such a window; so is a cycle whose order wobbles (A,B,C,A,C,B,…), as long
//! as every call keeps giving the same result. A call whose result changes makes a new pair
//! every time and so never holds. Each call costs O(1): a push to a ring of at most the
//! largest window's size, and a look back over it bounded by the same size (a few calls when
//! calls differ).

use loopguard_core::FixedMap;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One resolved call: its identity, its result (None: it never got one) and its event seq.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Resolved {
    pub call: u64,
    pub result: Option<u64>,
    pub seq: u64,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    pub size: usize,
    pub period: usize,
    pub repeats: u32,
    min_mult: u32,
    pairs: FixedMap<(u64, u64), u32>,
    calls: FixedMap<u64, u32>,
    /// Pairs seen fewer than `min_mult` times.
    low: usize,
    missing: usize,
    len: usize,
}

impl Window {
    fn new(period: usize, repeats: u32) -> Window {
        Window {
            size: period * repeats as usize,
            period,
            repeats,
            min_mult: repeats.saturating_sub(1).max(1),
            ..Window::default()
        }
    }

    fn is_low(&self, count: u32) -> bool {
        count > 0 && count < self.min_mult
    }

    fn add(&mut self, r: &Resolved) {
        self.len += 1;
        *self.calls.entry(r.call).or_insert(0) += 1;
        let Some(result) = r.result else {
            self.missing += 1;
            return;
        };
        let c = self.pairs.entry((r.call, result)).or_insert(0);
        let before = *c;
        *c += 1;
        let after = *c;
        if self.is_low(before) {
            self.low -= 1;
        }
        if self.is_low(after) {
            self.low += 1;
        }
    }

    /// Whether the window holds a cycle that the proposed call continues.
    pub fn holds(&self, proposed: u64) -> bool {
        self.len == self.size
            && self.missing == 0
            && self.low == 0
            && self.pairs.len() <= self.period
            && self.calls.len() >= 2
            && self.calls.contains_key(&proposed)
    }

    /// How many distinct calls the window holds.
    pub fn distinct_calls(&self) -> usize {
        self.calls.len()
    }

    /// The distinct calls of the window, sorted.
    pub fn calls(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.calls.keys().copied().collect();
        v.sort_unstable();
        v
    }
}

/// The resolved calls of the current run (the newest `cap`) and the windows looked at over
/// them.
///
/// The windows are not kept up to date call by call: [`Cycles::find`] walks back from the
/// newest call while it sees no missing result and at most `max_period` distinct pairs (a
/// few calls when calls differ, as they mostly do) and builds only the windows that walk
/// cannot rule out. A window that holds has no missing result and at most `period` distinct
/// pairs, so a window the walk rules out cannot hold.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Cycles {
    ring: VecDeque<Resolved>,
    /// `(period, repeats)` of every window, in the order they are looked at (see
    /// [`Cycles::rebuild`]); not serialised.
    #[serde(skip)]
    specs: Vec<(usize, u32)>,
    /// The largest window's size: how many calls the ring keeps.
    #[serde(skip)]
    cap: usize,
    /// The longest period.
    #[serde(skip)]
    max_period: usize,
    /// [`Cycles::find`]'s distinct pairs, kept from call to call.
    #[serde(skip)]
    distinct: Vec<(u64, u64)>,
}

impl Cycles {
    /// Windows for every period `2..=max_period`, for the warning and the critical repeats
    /// (warning windows first, shortest period first within each tier).
    pub fn rebuild(&mut self, max_period: u32, warn: u32, crit: u32) {
        let mut specs = Vec::new();
        for repeats in [warn, crit] {
            for p in 2..=max_period.max(2) as usize {
                specs.push((p, repeats));
            }
        }
        self.cap = specs
            .iter()
            .map(|&(p, r)| p * r as usize)
            .max()
            .unwrap_or(0);
        self.max_period = specs.iter().map(|&(p, _)| p).max().unwrap_or(0);
        self.specs = specs;
        while self.ring.len() > self.cap {
            self.ring.pop_front();
        }
    }

    pub fn push(&mut self, r: Resolved) {
        self.ring.push_back(r);
        if self.ring.len() > self.cap {
            self.ring.pop_front();
        }
    }

    /// The first of `tiers` (repeat counts, in order) with a window that holds a cycle
    /// continued by `proposed`: the tier's index and the first such window.
    ///
    /// Every window is a suffix of the ring and holds a cycle `proposed` continues only when
    /// `proposed` is among its calls: most calls are not among the recent ones, and for them
    /// no window is walked.
    pub fn find(&mut self, tiers: &[u32], proposed: u64) -> Option<(usize, Window)> {
        if !self.ring.iter().any(|r| r.call == proposed) {
            return None;
        }
        tiers
            .iter()
            .enumerate()
            .find_map(|(i, &repeats)| self.search(repeats, proposed).map(|w| (i, w)))
    }

    /// The first window of `repeats` that holds a cycle continued by `proposed`, walked
    /// whatever the proposed call.
    fn search(&mut self, repeats: u32, proposed: u64) -> Option<Window> {
        let n = self.ring.len();
        // The newest `walked` calls all have results and hold the pairs `distinct`.
        let mut walked = 0usize;
        let distinct = &mut self.distinct;
        distinct.clear();
        // The walk met a missing result, or one pair more than the longest period.
        let mut stopped = false;
        for &(period, reps) in &self.specs {
            if reps != repeats {
                continue;
            }
            let size = period * reps as usize;
            if n < size {
                continue;
            }
            while !stopped && walked < size {
                let Some(r) = self.ring.get(n - 1 - walked) else {
                    stopped = true;
                    break;
                };
                match r.result {
                    None => stopped = true,
                    Some(result) => {
                        let pair = (r.call, result);
                        if !distinct.contains(&pair) {
                            if distinct.len() >= self.max_period {
                                stopped = true;
                            } else {
                                distinct.push(pair);
                            }
                        }
                    }
                }
                if !stopped {
                    walked += 1;
                }
            }
            if walked < size || distinct.len() > period {
                continue;
            }
            let mut w = Window::new(period, reps);
            for r in self.ring.iter().skip(n - size) {
                w.add(r);
            }
            if w.holds(proposed) {
                return Some(w);
            }
        }
        None
    }

    /// Event seqs of the newest `n` resolved calls, oldest first.
    pub fn seqs(&self, n: usize) -> Vec<u64> {
        let skip = self.ring.len().saturating_sub(n);
        self.ring.iter().skip(skip).map(|r| r.seq).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A ring of `noise` arbitrary resolved calls followed by `rounds` rounds of a cycle
    /// (calls and results from small alphabets, so that cycles, wobbles and near-cycles
    /// come often).
    fn ring() -> impl Strategy<Value = Vec<Resolved>> {
        let pair = (0u64..6, prop::option::weighted(0.95, 0u64..3));
        (
            prop::collection::vec(pair.clone(), 0..12),
            prop::collection::vec(pair, 2..9),
            0usize..7,
        )
            .prop_map(|(noise, cycle, rounds)| {
                let mut v: Vec<(u64, Option<u64>)> = noise;
                for _ in 0..rounds {
                    v.extend_from_slice(&cycle);
                }
                v.into_iter()
                    .enumerate()
                    .map(|(i, (call, result))| Resolved {
                        call,
                        result,
                        seq: i as u64,
                    })
                    .collect()
            })
    }

    proptest! {
        /// When the proposed call is not in the ring no window holds a cycle it continues:
        /// skipping the walk then changes nothing.
        #[test]
        fn the_skip_never_hides_a_cycle(
            rs in ring(),
            proposed in 0u64..7,
            max_period in 2u32..=8,
            warn in 2u32..4,
        ) {
            let mut c = Cycles::default();
            c.rebuild(max_period, warn, warn + 2);
            for r in rs {
                c.push(r);
            }
            let tiers = [warn + 2, warn];
            let walked = tiers.iter().enumerate().find_map(|(i, &repeats)| {
                c.search(repeats, proposed).map(|w| (i, w.size, w.calls()))
            });
            let found = c.find(&tiers, proposed).map(|(i, w)| (i, w.size, w.calls()));
            prop_assert_eq!(found, walked);
        }
    }

    #[test]
    fn a_cycle_is_found_through_its_oldest_call() {
        // Call 9 comes once, first: a window of 2 rounds of period 3 (each pair at least
        // once) holds it, and only that call can show it.
        let mut c = Cycles::default();
        c.rebuild(3, 2, 3);
        for (i, call) in [9, 1, 2, 1, 2, 1].into_iter().enumerate() {
            c.push(Resolved {
                call,
                result: Some(0),
                seq: i as u64,
            });
        }
        assert!(c.find(&[2], 9).is_some());
        assert!(c.find(&[2], 5).is_none());
        // The first tier that holds a window answers.
        assert_eq!(c.find(&[3, 2], 9).map(|(tier, _)| tier), Some(1));
    }
}
