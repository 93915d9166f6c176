#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::CircuitBreaker;

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The detector's registered name.
pub const NAME: &str = "circuit-breaker";
/// The detector's stable code.
pub const CODE: &str = "LG005";

const SCOPE: &str = "detectors.circuit-breaker";

/// The largest accepted `history-size` (the streak walk is linear in it).
pub const MAX_HISTORY_SIZE: u32 = 1000;

/// The `[detectors.circuit-breaker]` table as written. Every key is optional; see
/// [`Settings`] for the defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Block a call whose newest outcomes were identical this many times, whatever the tool
    /// (OpenClaw `globalCircuitBreakerThreshold`).
    pub threshold: Option<u32>,
    /// How many call records the run's history keeps (OpenClaw `historySize`).
    pub history_size: Option<u32>,
    /// Also count the no-progress outcomes of the call and its partner together, so that an
    /// A↔B ping-pong is stopped on both sides (OpenClaw counts single calls only).
    pub count_pairs: Option<bool>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// Global threshold.
    pub threshold: u32,
    /// History size.
    pub history_size: u32,
    /// Count A↔B pairs.
    pub count_pairs: bool,
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

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threshold: Self::DEFAULT_THRESHOLD,
            history_size: Self::DEFAULT_HISTORY_SIZE,
            count_pairs: Self::DEFAULT_COUNT_PAIRS,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(SCOPE, table, Settings::from_options, CircuitBreaker::new)
}

/// The registration submitted to loopguard's registry.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: CODE,
    summary: "a global backstop: any call (or A↔B pair) whose outcomes stopped changing, whatever the other detectors say",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "threshold",
            ty: "positive integer",
            default: "30",
            doc: "Block a call whose newest outcomes were identical this many times (any tool).",
        },
        OptionDoc {
            name: "history-size",
            ty: "positive integer (at most 1000)",
            default: "30",
            doc: "How many call records the run's history keeps.",
        },
        OptionDoc {
            name: "count-pairs",
            ty: "bool",
            default: "true",
            doc: "Also count a call and its alternating partner together (A↔B ping-pong).",
        },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport {
        master: loopguard_core::MasterSwitch::Follows,
        toggle: None,
        keys: &[
            ("historySize", "history-size"),
            ("globalCircuitBreakerThreshold", "threshold"),
        ],
    },
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
