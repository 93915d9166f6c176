#![doc = include_str!("../../../README.md")]
#![warn(missing_docs)]

pub use loopguard_core as core;
pub use loopguard_core::{
    Config, ConfigError, Detector, Event, EventKind, Finding, Interest, Level, Origin, Registration, Registry,
    Stream,
};
pub use loopguard_orchestrator as orchestrator;

#[cfg(feature = "circuit-breaker")]
pub use loopguard_detect_circuit_breaker as circuit_breaker;
#[cfg(feature = "generic-repeat")]
pub use loopguard_detect_generic_repeat as generic_repeat;
#[cfg(feature = "known-poll-no-progress")]
pub use loopguard_detect_known_poll as known_poll;
#[cfg(feature = "ping-pong")]
pub use loopguard_detect_ping_pong as ping_pong;
#[cfg(feature = "post-compaction-guard")]
pub use loopguard_detect_post_compaction as post_compaction;
#[cfg(feature = "stalled-turns")]
pub use loopguard_detect_stalled_turns as stalled_turns;
#[cfg(feature = "tail-periodicity")]
pub use loopguard_detect_tail_periodicity as tail_periodicity;
#[cfg(feature = "unknown-tool")]
pub use loopguard_detect_unknown_tool as unknown_tool;
#[cfg(feature = "variation-loop")]
pub use loopguard_detect_variation_loop as variation_loop;
