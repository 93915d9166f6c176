//! loopguard detector `variation-loop` (LG008): a message dominated by short near-duplicate sentences.
//!
//! Not implemented yet.
