#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::CircuitBreaker;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::{Deserialize, Serialize};

/// The largest accepted `history-size` (the streak walk is linear in it).
pub const MAX_HISTORY_SIZE: u32 = 1000;

loopguard_core::detector_options! {
    /// The `[detectors.circuit-breaker]` table as written. Every key is optional; see
    /// [`Settings`] for the defaults.
    #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
    pub struct Options;
    /// Resolved settings.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
    pub struct Settings;

    /// Block a call whose newest outcomes were identical this many times (any tool).
    "threshold" threshold: u32 = Self::DEFAULT_THRESHOLD, "positive integer", "30";
    /// How many call records the run's history keeps.
    "history-size" history_size: u32 = Self::DEFAULT_HISTORY_SIZE, "positive integer (at most 1000)", "30";
    /// Also count a call and its alternating partner together (A↔B ping-pong).
    "count-pairs" count_pairs: bool = Self::DEFAULT_COUNT_PAIRS, "bool", "true";
}

impl Settings {
    /// OpenClaw's global circuit breaker threshold.
    pub const DEFAULT_THRESHOLD: u32 = 30;
    /// OpenClaw's history size.
    pub const DEFAULT_HISTORY_SIZE: u32 = 30;
    /// loopguard counts pairs by default (OpenClaw issue #64500).
    pub const DEFAULT_COUNT_PAIRS: bool = true;

    /// OpenClaw's breaker: threshold 30 over a 30-record history, single calls only.
    pub fn openclaw() -> Settings {
        Settings {
            count_pairs: false,
            ..Settings::default()
        }
    }

    /// Resolves and validates options.
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let threshold = scope.positive("threshold", o.threshold, Self::DEFAULT_THRESHOLD)?;
        let history_size = scope.positive_at_most(
            "history-size",
            o.history_size,
            Self::DEFAULT_HISTORY_SIZE,
            MAX_HISTORY_SIZE,
        )?;
        Ok(Settings {
            threshold,
            history_size,
            count_pairs: o.count_pairs.unwrap_or(Self::DEFAULT_COUNT_PAIRS),
        })
    }
}

loopguard_core::detector_registration! {
    name: "circuit-breaker", code: "LG005", detector: CircuitBreaker::new,
    summary: "a global backstop: any call (or A↔B pair) whose outcomes stopped changing, whatever the other detectors say",
    openclaw: OpenClawImport::new(MasterSwitch::Follows, None, &[("historySize", "history-size"), ("globalCircuitBreakerThreshold", "threshold")]),
}
