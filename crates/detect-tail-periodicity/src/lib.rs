//! loopguard detector `tail-periodicity` (LG007): streamed text whose tail is two or more exact copies of one unit.
//!
//! Not implemented yet.
