//! loopguard detector `circuit-breaker` (LG005): a global count of no-progress outcomes across every tool and pair.
//!
//! Not implemented yet.
