//! The seed's algorithm, implemented literally (pi-repetition-guard v5): on every delta, once
//! the text has grown by at least `rescan-every` characters since the last scan, test unit
//! lengths `P = min, min+1, …, min(max, floor(len / copies))` in ascending order and report
//! the first whose last `(copies-1)·P` characters equal the characters `P` before them.
//!
//! It keeps only the last `copies·max` characters (all a scan can reach) and the total length.

use crate::exact::Ring;
use serde::{Deserialize, Serialize};

/// The seed scanner.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SeedScanner {
    min: u64,
    max: u64,
    copies: u64,
    every: u64,
    n: u64,
    last_scan: u64,
    ring: Ring,
}

impl SeedScanner {
    /// A scanner for units `min..=max`, `copies` copies, rescanning every `every` characters.
    pub fn new(min: usize, max: usize, copies: usize, every: usize) -> SeedScanner {
        let min = min.max(1) as u64;
        let max = (max as u64).max(min);
        let copies = copies.max(2) as u64;
        SeedScanner {
            min,
            max,
            copies,
            every: every as u64,
            n: 0,
            last_scan: 0,
            ring: Ring::new((copies * max + 4) as usize),
        }
    }

    /// Appends one symbol (no scan).
    pub fn push(&mut self, sym: u32) {
        self.ring.put(self.n, sym);
        self.n += 1;
    }

    /// Characters held in memory.
    pub fn buffered(&self) -> usize {
        self.ring.capacity()
    }

    /// The end of a delta: rescans if the text grew by `every` characters since the last scan
    /// and returns the period found by that scan.
    pub fn end_of_update(&mut self) -> Option<u64> {
        if self.n - self.last_scan < self.every {
            return None;
        }
        self.last_scan = self.n;
        self.scan()
    }

    /// One full scan of the current tail.
    pub fn scan(&self) -> Option<u64> {
        let n = self.n;
        let cap = self.max.min(n / self.copies);
        let k = self.copies;
        (self.min..=cap)
            .find(|&p| ((n - (k - 1) * p)..n).all(|j| self.ring.get(j) == self.ring.get(j - p)))
    }

    /// The last `len` characters as a string.
    pub fn tail_string(&self, len: usize) -> String {
        let len = (len as u64).min(self.n);
        (self.n - len..self.n)
            .filter_map(|i| char::from_u32(self.ring.get(i)))
            .collect()
    }
}
