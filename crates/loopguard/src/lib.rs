#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub use loopguard_core as core;
pub use loopguard_core::{
    Config, ConfigError, Detector, Event, EventKind, Finding, Interest, Level, Origin,
    Registration, Registry, Stream,
};
pub use loopguard_orchestrator as orchestrator;
pub use loopguard_orchestrator::{
    preset, Action, Delivery, Guard, GuardBuilder, GuardTemplate, Verdict, PRESETS,
};

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
#[cfg(feature = "same-failure")]
pub use loopguard_detect_same_failure as same_failure;
#[cfg(feature = "stalled-turns")]
pub use loopguard_detect_stalled_turns as stalled_turns;
#[cfg(feature = "tail-periodicity")]
pub use loopguard_detect_tail_periodicity as tail_periodicity;
#[cfg(feature = "unknown-tool")]
pub use loopguard_detect_unknown_tool as unknown_tool;
#[cfg(feature = "variation-loop")]
pub use loopguard_detect_variation_loop as variation_loop;

/// The workspace README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The registrations of loopguard's own detectors that this build links (one per enabled
/// Cargo feature), sorted by name.
///
/// Link-time discovery ([`Registry::discover`]) finds these too, plus any third-party
/// detector the program links; `builtin()` is for programs that want exactly loopguard's own,
/// e.g. `Registry::from_entries(loopguard::builtin().iter().copied())`.
///
/// ```
/// let names: Vec<&str> = loopguard::builtin().iter().map(|r| r.name).collect();
/// let mut sorted = names.clone();
/// sorted.sort_unstable();
/// assert_eq!(names, sorted);
/// assert!(names.iter().all(|n| loopguard::BUILTIN_NAMES.contains(n)));
/// ```
pub fn builtin() -> &'static [&'static Registration] {
    BUILTIN
}

/// The names of loopguard's own detectors, whether this build links them or not: a
/// configuration that names one this build leaves out is told which feature links it.
pub const BUILTIN_NAMES: &[&str] = &[
    "circuit-breaker",
    "generic-repeat",
    "known-poll-no-progress",
    "ping-pong",
    "post-compaction-guard",
    "same-failure",
    "stalled-turns",
    "tail-periodicity",
    "unknown-tool",
    "variation-loop",
];

loopguard_core::known_detectors!(
    BUILTIN_NAMES,
    "enable the `{name}` feature of the `loopguard` crate"
);

static BUILTIN: &[&Registration] = &[
    #[cfg(feature = "circuit-breaker")]
    &circuit_breaker::REGISTRATION,
    #[cfg(feature = "generic-repeat")]
    &generic_repeat::REGISTRATION,
    #[cfg(feature = "known-poll-no-progress")]
    &known_poll::REGISTRATION,
    #[cfg(feature = "ping-pong")]
    &ping_pong::REGISTRATION,
    #[cfg(feature = "post-compaction-guard")]
    &post_compaction::REGISTRATION,
    #[cfg(feature = "same-failure")]
    &same_failure::REGISTRATION,
    #[cfg(feature = "stalled-turns")]
    &stalled_turns::REGISTRATION,
    #[cfg(feature = "tail-periodicity")]
    &tail_periodicity::REGISTRATION,
    #[cfg(feature = "unknown-tool")]
    &unknown_tool::REGISTRATION,
    #[cfg(feature = "variation-loop")]
    &variation_loop::REGISTRATION,
];
