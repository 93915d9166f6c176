//! loopguard detector `known-poll-no-progress` (LG002): status/poll/exec tools whose normalised output does not change.
//!
//! Not implemented yet.
