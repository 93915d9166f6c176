//! loopguard detector `unknown-tool` (LG004): retries of a tool that does not exist.
//!
//! Not implemented yet.
