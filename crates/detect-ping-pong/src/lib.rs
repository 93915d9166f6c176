#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod window;

pub use detector::PingPong;

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The registered name of this detector.
pub const NAME: &str = "ping-pong";

const SCOPE: &str = "detectors.ping-pong";

/// The options of the `[detectors.ping-pong]` table, as written by a user.
///
/// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Tool calls remembered per run for the alternation test (OpenClaw's `historySize`,
    /// default [`Settings::DEFAULT_HISTORY_SIZE`]). A positive integer.
    pub history_size: Option<i64>,
    /// A,B alternation length (counting the proposed call) at which a warning is reported,
    /// whatever the results (OpenClaw's `warningThreshold`, default
    /// [`Settings::DEFAULT_WARNING_THRESHOLD`]). A positive integer.
    pub warning_threshold: Option<i64>,
    /// A,B alternation length at which the call is blocked, when every call of the
    /// alternation has a result and each side's results are identical (OpenClaw's
    /// `criticalThreshold`, default [`Settings::DEFAULT_CRITICAL_THRESHOLD`]). A positive
    /// integer greater than `warning-threshold`.
    pub critical_threshold: Option<i64>,
    /// Look for cycles of 2 to `max-period` calls with identical results (loopguard's own
    /// tier; default true).
    pub detect_cycles: Option<bool>,
    /// The longest cycle looked for, 2 to 8 (default [`Settings::DEFAULT_MAX_PERIOD`]).
    pub max_period: Option<i64>,
    /// Repetitions of a cycle with identical results after which the next call continuing
    /// it is warned (default [`Settings::DEFAULT_CYCLE_WARNING_REPEATS`]). At least 2.
    pub cycle_warning_repeats: Option<i64>,
    /// Repetitions of a cycle with identical results after which the next call continuing
    /// it is blocked (default [`Settings::DEFAULT_CYCLE_CRITICAL_REPEATS`]). Greater than
    /// `cycle-warning-repeats`.
    pub cycle_critical_repeats: Option<i64>,
    /// Warn on a long A,B alternation whatever its results (OpenClaw's rule, default true).
    /// With `false`, the alternation warns only when each side's results repeat identically,
    /// as the critical tier requires: two polls whose outputs advance every round are work,
    /// not a ping-pong.
    pub alternation_warns_on_progress: Option<bool>,
    /// What the cycle tier compares: `exact` calls and results (default), or `shape`s: calls
    /// with numbers abstracted (`delete line 45`, `delete line 44`) and results with the
    /// call's echoed arguments removed and numbers abstracted, where numbers that move
    /// steadily between rounds are progress.
    pub cycle_identity: Option<CycleIdentity>,
}

/// What the cycle tier compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CycleIdentity {
    /// Exact call and (normalised) result fingerprints.
    #[default]
    Exact,
    /// Call and result shapes (`loopguard_core::shape`).
    Shape,
}

/// The resolved settings of the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Calls remembered per run for the alternation test.
    pub history_size: u32,
    /// Alternation length (proposed call included) that warns.
    pub warning_threshold: u32,
    /// Alternation length that blocks, with no-progress evidence.
    pub critical_threshold: u32,
    /// Whether the cycle tier runs.
    pub detect_cycles: bool,
    /// The longest cycle of the cycle tier (2..=8).
    pub max_period: u32,
    /// Cycle repetitions that warn.
    pub cycle_warning_repeats: u32,
    /// Cycle repetitions that block.
    pub cycle_critical_repeats: u32,
    /// The alternation warns whatever the results (OpenClaw).
    pub alternation_warns_on_progress: bool,
    /// What the cycle tier compares.
    pub cycle_identity: CycleIdentity,
}

impl Settings {
    /// OpenClaw's `historySize`.
    pub const DEFAULT_HISTORY_SIZE: u32 = 30;
    /// OpenClaw's `warningThreshold`.
    pub const DEFAULT_WARNING_THRESHOLD: u32 = 10;
    /// OpenClaw's `criticalThreshold`.
    pub const DEFAULT_CRITICAL_THRESHOLD: u32 = 20;
    /// The longest cycle looked for by default (and at most).
    pub const DEFAULT_MAX_PERIOD: u32 = 8;
    /// A cycle repeated 3 times with identical results warns the 4th time round.
    pub const DEFAULT_CYCLE_WARNING_REPEATS: u32 = 3;
    /// A cycle repeated 5 times with identical results is blocked the 6th time round.
    pub const DEFAULT_CYCLE_CRITICAL_REPEATS: u32 = 5;
    /// The largest accepted `history-size`.
    pub const MAX_HISTORY_SIZE: u32 = 1000;
    /// The largest accepted threshold.
    pub const MAX_THRESHOLD: u32 = 1_000_000;
    /// The largest accepted number of cycle repetitions.
    pub const MAX_CYCLE_REPEATS: u32 = 50;

    /// OpenClaw's ping-pong exactly: period 2 only, thresholds 10 and 20, history 30.
    pub const OPENCLAW: Settings = Settings {
        history_size: 30,
        warning_threshold: 10,
        critical_threshold: 20,
        detect_cycles: false,
        max_period: 2,
        cycle_warning_repeats: Settings::DEFAULT_CYCLE_WARNING_REPEATS,
        cycle_critical_repeats: Settings::DEFAULT_CYCLE_CRITICAL_REPEATS,
        alternation_warns_on_progress: true,
        cycle_identity: CycleIdentity::Exact,
    };

    /// Resolves options into settings, validating as OpenClaw's schema does (positive
    /// integers; warning lower than critical, reported on `critical-threshold`).
    ///
    /// ```
    /// use loopguard_detect_ping_pong::{Options, Settings};
    /// assert_eq!(Settings::from_options(&Options::default()).unwrap(), Settings::default());
    /// let o = Options { warning_threshold: Some(20), ..Options::default() };
    /// let err = Settings::from_options(&o).unwrap_err();
    /// assert_eq!(err.path(), Some("detectors.ping-pong.critical-threshold"));
    /// ```
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let history_size = bounded(
            "history-size",
            o.history_size,
            Settings::DEFAULT_HISTORY_SIZE,
            1,
            Settings::MAX_HISTORY_SIZE,
        )?;
        let warning_threshold = bounded(
            "warning-threshold",
            o.warning_threshold,
            Settings::DEFAULT_WARNING_THRESHOLD,
            1,
            Settings::MAX_THRESHOLD,
        )?;
        let critical_threshold = bounded(
            "critical-threshold",
            o.critical_threshold,
            Settings::DEFAULT_CRITICAL_THRESHOLD,
            1,
            Settings::MAX_THRESHOLD,
        )?;
        let scope = Scope::new(SCOPE);
        scope.below(
            ("warning-threshold", warning_threshold),
            ("critical-threshold", critical_threshold),
        )?;
        let max_period = bounded(
            "max-period",
            o.max_period,
            Settings::DEFAULT_MAX_PERIOD,
            2,
            8,
        )?;
        let cycle_warning_repeats = bounded(
            "cycle-warning-repeats",
            o.cycle_warning_repeats,
            Settings::DEFAULT_CYCLE_WARNING_REPEATS,
            2,
            Settings::MAX_CYCLE_REPEATS,
        )?;
        let cycle_critical_repeats = bounded(
            "cycle-critical-repeats",
            o.cycle_critical_repeats,
            Settings::DEFAULT_CYCLE_CRITICAL_REPEATS,
            2,
            Settings::MAX_CYCLE_REPEATS,
        )?;
        scope.below(
            ("cycle-warning-repeats", cycle_warning_repeats),
            ("cycle-critical-repeats", cycle_critical_repeats),
        )?;
        Ok(Settings {
            history_size,
            warning_threshold,
            critical_threshold,
            detect_cycles: o.detect_cycles.unwrap_or(true),
            max_period,
            cycle_warning_repeats,
            cycle_critical_repeats,
            alternation_warns_on_progress: o.alternation_warns_on_progress.unwrap_or(true),
            cycle_identity: o.cycle_identity.unwrap_or_default(),
        })
    }
}

fn bounded(
    key: &str,
    value: Option<i64>,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, ConfigError> {
    let n = Scope::new(SCOPE).between(
        key,
        value,
        i64::from(default),
        i64::from(min),
        i64::from(max),
    )?;
    Ok(u32::try_from(n).unwrap_or(default))
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            history_size: Settings::DEFAULT_HISTORY_SIZE,
            warning_threshold: Settings::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Settings::DEFAULT_CRITICAL_THRESHOLD,
            detect_cycles: true,
            max_period: Settings::DEFAULT_MAX_PERIOD,
            cycle_warning_repeats: Settings::DEFAULT_CYCLE_WARNING_REPEATS,
            cycle_critical_repeats: Settings::DEFAULT_CYCLE_CRITICAL_REPEATS,
            alternation_warns_on_progress: true,
            cycle_identity: CycleIdentity::Exact,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(
        &format!("detectors.{NAME}"),
        table,
        Settings::from_options,
        PingPong::new,
    )
}

/// The registration of `ping-pong` (code LG003).
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG003",
    summary: "A,B,A,B alternation (and cycles up to period 8) without progress",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "history-size",
            ty: "positive integer",
            default: "30",
            doc: "Tool calls remembered per run for the A,B alternation test.",
        },
        OptionDoc {
            name: "warning-threshold",
            ty: "positive integer",
            default: "10",
            doc: "A,B alternation length (proposed call included) that warns, whatever the results.",
        },
        OptionDoc {
            name: "critical-threshold",
            ty: "positive integer",
            default: "20",
            doc: "A,B alternation length that blocks when each side's results are identical; greater than warning-threshold.",
        },
        OptionDoc {
            name: "detect-cycles",
            ty: "bool",
            default: "true",
            doc: "Also look for cycles of 2 to max-period calls whose results repeat identically.",
        },
        OptionDoc { name: "max-period", ty: "integer 2-8", default: "8", doc: "The longest cycle looked for." },
        OptionDoc {
            name: "cycle-warning-repeats",
            ty: "integer >= 2",
            default: "3",
            doc: "Repetitions of a cycle with identical results after which the next call continuing it is warned.",
        },
        OptionDoc {
            name: "cycle-critical-repeats",
            ty: "integer >= 2",
            default: "5",
            doc: "Repetitions of a cycle with identical results after which the next call continuing it is blocked.",
        },
        OptionDoc {
            name: "alternation-warns-on-progress",
            ty: "bool",
            default: "true",
            doc: "Warn on a long A,B alternation whatever its results (OpenClaw); false: only when each side's results repeat.",
        },
        OptionDoc {
            name: "cycle-identity",
            ty: "\"exact\" | \"shape\"",
            default: "\"exact\"",
            doc: "What the cycle tier compares: exact calls and results, or their shapes (numbers abstracted, echoed arguments removed from results; numbers moving steadily are progress).",
        },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport {
        master: loopguard_core::MasterSwitch::Follows,
        toggle: Some("pingPong"),
        keys: &[
            ("historySize", "history-size"),
            ("warningThreshold", "warning-threshold"),
            ("criticalThreshold", "critical-threshold"),
        ],
    },
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
