//! Sliding windows over the resolved calls of a run, for the cycle tier.
//!
//! A window of `repeats × period` calls "holds" a cycle when it is made of at most `period`
//! distinct (call, result) pairs, each seen at least `repeats − 1` times, with at least two
//! distinct calls and no call whose result is missing. A strict cycle of period `p` repeated
//! `repeats` times is such a window; so is a cycle whose order wobbles (A,B,C,A,C,B,…), as long
//! as every call keeps giving the same result. A call whose result changes makes a new pair
//! every time and so never holds. Every update is O(1): one insertion and one removal per
//! window.

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

    fn remove(&mut self, r: &Resolved) {
        self.len = self.len.saturating_sub(1);
        if let Some(c) = self.calls.get_mut(&r.call) {
            *c -= 1;
            if *c == 0 {
                self.calls.remove(&r.call);
            }
        }
        let Some(result) = r.result else {
            self.missing = self.missing.saturating_sub(1);
            return;
        };
        let key = (r.call, result);
        let Some(c) = self.pairs.get_mut(&key) else {
            return;
        };
        let before = *c;
        *c -= 1;
        let after = *c;
        if after == 0 {
            self.pairs.remove(&key);
        }
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

/// The resolved calls of the current run (the newest `cap`) and the windows over them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Cycles {
    ring: VecDeque<Resolved>,
    /// Rebuilt from `ring` (see [`Cycles::rebuild`]); not serialised.
    #[serde(skip)]
    windows: Vec<Window>,
}

impl Cycles {
    /// Windows for every period `2..=max_period`, for the warning and the critical repeats
    /// (warning windows first, shortest period first within each tier).
    pub fn rebuild(&mut self, max_period: u32, warn: u32, crit: u32) {
        let mut windows = Vec::new();
        for repeats in [warn, crit] {
            for p in 2..=max_period.max(2) as usize {
                windows.push(Window::new(p, repeats));
            }
        }
        let cap = windows.iter().map(|w| w.size).max().unwrap_or(0);
        while self.ring.len() > cap {
            self.ring.pop_front();
        }
        for w in &mut windows {
            let skip = self.ring.len().saturating_sub(w.size);
            for r in self.ring.iter().skip(skip) {
                w.add(r);
            }
        }
        self.windows = windows;
    }

    fn cap(&self) -> usize {
        self.windows.iter().map(|w| w.size).max().unwrap_or(0)
    }

    pub fn push(&mut self, r: Resolved) {
        self.ring.push_back(r);
        let n = self.ring.len();
        for w in &mut self.windows {
            w.add(&r);
            if n > w.size {
                if let Some(old) = self.ring.get(n - 1 - w.size) {
                    w.remove(old);
                }
            }
        }
        if n > self.cap() {
            self.ring.pop_front();
        }
    }

    /// The first window of `repeats` that holds a cycle continued by `proposed`.
    pub fn find(&self, repeats: u32, proposed: u64) -> Option<&Window> {
        self.windows
            .iter()
            .find(|w| w.repeats == repeats && w.holds(proposed))
    }

    /// Event seqs of the newest `n` resolved calls, oldest first.
    pub fn seqs(&self, n: usize) -> Vec<u64> {
        let skip = self.ring.len().saturating_sub(n);
        self.ring.iter().skip(skip).map(|r| r.seq).collect()
    }
}
