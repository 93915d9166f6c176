//! loopguard detector `stalled-turns` (LG009): turns with no tool call that add nothing while the harness repeats its nudge.
//!
//! Not implemented yet.
