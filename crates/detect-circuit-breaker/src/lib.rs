#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::CircuitBreaker;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::Serialize;

pub use loopguard_core::history::MAX_HISTORY_SIZE;

loopguard_core::detector_options! {
    /// The `[detectors.circuit-breaker]` table as written. Every key is optional; see
    /// [`Settings`] for the defaults.
    pub struct Options;
    /// Resolved settings.
    #[derive(Eq, Serialize)]
    pub struct Settings;

    /// Block a call whose newest outcomes were identical this many times (any tool).
    "threshold" threshold: u32 = 30, const DEFAULT_THRESHOLD, "positive integer";
    /// How many call records the run's history keeps.
    "history-size" history_size: u32 = 30, const DEFAULT_HISTORY_SIZE, "positive integer (at most 1000)";
    /// Also count a call and its alternating partner together (A↔B ping-pong).
    "count-pairs" count_pairs: bool = true, const DEFAULT_COUNT_PAIRS, "bool";
}

impl Settings {
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
    openclaw: OpenClawImport { master: MasterSwitch::Follows, toggle: None, keys: &[("historySize", "history-size"), ("globalCircuitBreakerThreshold", "threshold")] },
}
