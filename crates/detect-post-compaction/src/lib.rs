//! loopguard detector `post-compaction-guard` (LG006): after a compaction, the same (tool, args, result) fills the short window.
//!
//! Not implemented yet.
