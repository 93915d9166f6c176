#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod window;

pub use detector::PingPong;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::{Deserialize, Serialize};

loopguard_core::detector_options! {
    /// The options of the `[detectors.ping-pong]` table, as written by a user.
    ///
    /// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
    #[derive(Eq)]
    pub struct Options;
    /// The resolved settings of the detector.
    #[derive(Copy, Eq, Serialize, Deserialize)]
    pub struct Settings;

    /// Tool calls remembered per run for the A,B alternation test.
    "history-size" history_size: i64 => u32 = 30, const DEFAULT_HISTORY_SIZE, "positive integer", "30";
    /// A,B alternation length (proposed call included) that warns, whatever the results.
    "warning-threshold" warning_threshold: i64 => u32 = 10, const DEFAULT_WARNING_THRESHOLD, "positive integer", "10";
    /// A,B alternation length that blocks when each side's results are identical; greater than
    /// warning-threshold.
    "critical-threshold" critical_threshold: i64 => u32 = 20, const DEFAULT_CRITICAL_THRESHOLD, "positive integer", "20";
    /// Also look for cycles of 2 to max-period calls whose results repeat identically.
    "detect-cycles" detect_cycles: bool = true, "bool";
    /// The longest cycle looked for.
    "max-period" max_period: i64 => u32 = 8, const DEFAULT_MAX_PERIOD, "integer 2-8", "8";
    /// Repetitions of a cycle with identical results after which the next call continuing it
    /// is warned.
    "cycle-warning-repeats" cycle_warning_repeats: i64 => u32 = 3, const DEFAULT_CYCLE_WARNING_REPEATS, "integer >= 2", "3";
    /// Repetitions of a cycle with identical results after which the next call continuing it
    /// is blocked.
    "cycle-critical-repeats" cycle_critical_repeats: i64 => u32 = 5, const DEFAULT_CYCLE_CRITICAL_REPEATS, "integer >= 2", "5";
    /// Warn on a long A,B alternation whatever its results (OpenClaw); false: only when each
    /// side's results repeat.
    "alternation-warns-on-progress" alternation_warns_on_progress: bool = true, "bool";
    /// Judge a long A,B alternation during which no tool result came (a host that forwards
    /// calls alone) as one whose results repeat: a warning at warning-threshold, a block at
    /// critical-threshold; false (OpenClaw): a block needs repeated results.
    "alternation-judges-unanswered" alternation_judges_unanswered: bool = false, "bool";
    /// What the cycle tier compares: exact calls and results, or their shapes (numbers
    /// abstracted, echoed arguments removed from results; numbers moving steadily are
    /// progress).
    "cycle-identity" cycle_identity: CycleIdentity = CycleIdentity::Exact, "\"exact\" | \"shape\"", "\"exact\"";
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

impl Settings {
    /// The largest accepted `history-size`.
    /// The largest accepted `history-size`.
    pub const MAX_HISTORY_SIZE: u32 = loopguard_core::history::MAX_HISTORY_SIZE;
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
        alternation_judges_unanswered: false,
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
            alternation_judges_unanswered: o.alternation_judges_unanswered.unwrap_or(false),
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

loopguard_core::detector_registration! {
    name: "ping-pong", code: "LG003", detector: PingPong::new,
    summary: "A,B,A,B alternation (and cycles up to period 8) without progress",
    openclaw: OpenClawImport { master: MasterSwitch::Follows, toggle: Some("pingPong"), keys: &[("historySize", "history-size"), ("warningThreshold", "warning-threshold"), ("criticalThreshold", "critical-threshold")] },
}
