//! [`StringPool`]: emptied strings kept for reuse.

/// At most `N` emptied strings, kept so that a hot path which must own a short-lived copy of
/// borrowed text (a call id, a tool name, a piece of an argument) writes it into a buffer it
/// already has instead of allocating one. Not state: a snapshot neither holds nor needs it.
///
/// ```
/// use loopguard_core::StringPool;
///
/// let mut pool = StringPool::<2>::default();
/// let id = pool.take("call_1");
/// assert_eq!(id, "call_1");
/// pool.keep(id);
/// // The next copy is written into the kept buffer.
/// assert_eq!(pool.take("call_2"), "call_2");
/// ```
#[derive(Clone, Debug, Default)]
pub struct StringPool<const N: usize> {
    strings: Vec<String>,
}

impl<const N: usize> StringPool<N> {
    /// `s`, owned: written into a kept string when there is one, else newly allocated.
    pub fn take(&mut self, s: &str) -> String {
        match self.strings.pop() {
            Some(mut owned) => {
                owned.push_str(s);
                owned
            }
            None => s.to_owned(),
        }
    }

    /// Keeps `s`, emptied, when fewer than `N` are kept; drops it otherwise.
    pub fn keep(&mut self, mut s: String) {
        if self.strings.len() < N {
            s.clear();
            self.strings.push(s);
        }
    }

    /// How many strings are kept.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether no string is kept.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::StringPool;

    #[test]
    fn a_kept_string_is_emptied_and_reused_and_the_pool_stays_bounded() {
        let mut pool = StringPool::<2>::default();
        let mut big = String::with_capacity(64);
        big.push_str("tool_call_0123");
        let cap = big.capacity();
        pool.keep(big);
        let s = pool.take("x");
        assert_eq!(s, "x", "the kept text must not leak into the next copy");
        assert_eq!(s.capacity(), cap, "the kept buffer is the one reused");
        for i in 0..5 {
            pool.keep(format!("s{i}"));
        }
        assert_eq!(pool.len(), 2, "no more than N strings are kept");
        assert_eq!(pool.take("a"), "a");
        assert_eq!(pool.take("b"), "b");
        assert!(pool.is_empty());
        assert_eq!(pool.take("c"), "c", "an empty pool allocates");
    }
}
