//! loopguard detector `ping-pong` (LG003): A,B,A,B alternation (and cycles up to period 8) without progress.
//!
//! Not implemented yet.
