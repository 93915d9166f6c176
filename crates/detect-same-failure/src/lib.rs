#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::{looks_like_failure, SameFailure, SCAN_CHARS};

use loopguard_core::{ConfigError, Scope};
use serde::{Deserialize, Serialize};

loopguard_core::detector_options! {
    /// The options of the `[detectors.same-failure]` table, as written by a user.
    ///
    /// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
    #[derive(Eq)]
    pub struct Options;
    /// The resolved settings of the detector.
    #[derive(Copy, Eq, Serialize, Deserialize)]
    pub struct Settings;

    /// Identical failures of one tool in a row, with varying arguments, at which the model is
    /// warned (once per run).
    "warning-threshold" warning_threshold: i64 => u32 = 8, const DEFAULT_WARNING_THRESHOLD, "positive integer", "8";
    /// Identical failures in a row from which every further call of that tool is critical
    /// (blocked) until a result breaks the run; greater than warning-threshold, or 0.
    "critical-threshold" critical_threshold: i64 => u32 = 16, const DEFAULT_CRITICAL_THRESHOLD, "integer (0 = never)", "16";
    /// Treat a result without the error flag as a failure when it is an error message (its
    /// first line starts like one: ERROR, error:, Usage:, a traceback, `bash: x: command not
    /// found`; an editor's rejection; a short `... not found`). A listing or a log that merely
    /// contains an error word is not one.
    "count-unflagged-failures" count_unflagged_failures: bool = true, "bool";
    /// What makes two failures the same: the normalised error, or its shape (the call's echoed
    /// arguments removed, numbers and temp ids abstracted).
    "failure-identity" failure_identity: FailureIdentity = FailureIdentity::Exact, "\"exact\" | \"shape\"", "\"exact\"";
    /// Warn when the same failure of one tool comes this many times within the last
    /// `recurring-window` tool results, whatever lies between.
    "recurring-threshold" recurring_threshold: i64 => u32 = 0, "integer (0 = off)", "0";
    /// Tool results the recurring rule looks back over (at most 64).
    "recurring-window" recurring_window: i64 => u32 = 12, const DEFAULT_RECURRING_WINDOW, "positive integer", "12";
}

/// What makes two failures the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureIdentity {
    /// The bus's normalised fingerprint of the error.
    #[default]
    Exact,
    /// The error's shape: the call's echoed arguments removed, numbers and temp ids
    /// abstracted (`loopguard_core::shape::result_shape`).
    Shape,
}

impl Settings {
    /// The largest accepted threshold.
    pub const MAX_THRESHOLD: u32 = 1_000_000;
    /// The largest recurring window.
    pub const MAX_RECURRING_WINDOW: u32 = 64;

    /// Resolves options into settings.
    ///
    /// ```
    /// use loopguard_detect_same_failure::{Options, Settings};
    /// let s = Settings::from_options(&Options::default()).unwrap();
    /// assert_eq!((s.warning_threshold, s.critical_threshold), (8, 16));
    /// let o = Options { warning_threshold: Some(20), ..Options::default() };
    /// let err = Settings::from_options(&o).unwrap_err();
    /// assert_eq!(err.path(), Some("detectors.same-failure.critical-threshold"));
    /// let o = Options { warning_threshold: Some(20), critical_threshold: Some(0), ..Options::default() };
    /// assert_eq!(Settings::from_options(&o).unwrap().critical_threshold, 0);
    /// ```
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let max = i64::from(Settings::MAX_THRESHOLD);
        // 0 means "never" for the critical tier and "off" for the recurring rule.
        let warning_threshold = scope.positive_at_most_i64(
            "warning-threshold",
            o.warning_threshold,
            Settings::DEFAULT_WARNING_THRESHOLD,
            Settings::MAX_THRESHOLD,
        )?;
        let critical_threshold = scope.zero_or_count_i64(
            "critical-threshold",
            o.critical_threshold,
            Settings::DEFAULT_CRITICAL_THRESHOLD,
            1,
            max,
        )?;
        if critical_threshold != 0 {
            scope.below(
                ("warning-threshold", warning_threshold),
                ("critical-threshold", critical_threshold),
            )?;
        }
        let recurring_window = scope.positive_at_most_i64(
            "recurring-window",
            o.recurring_window,
            Settings::DEFAULT_RECURRING_WINDOW,
            Settings::MAX_RECURRING_WINDOW,
        )?;
        let recurring_threshold = scope.zero_or_count_i64(
            "recurring-threshold",
            o.recurring_threshold,
            0,
            2,
            i64::from(recurring_window),
        )?;
        Ok(Settings {
            warning_threshold,
            critical_threshold,
            count_unflagged_failures: o.count_unflagged_failures.unwrap_or(true),
            failure_identity: o.failure_identity.unwrap_or_default(),
            recurring_threshold,
            recurring_window,
        })
    }
}

loopguard_core::detector_registration! {
    name: "same-failure", code: "LG010", detector: SameFailure::new,
    summary: "the same tool keeps failing with the same error while the model varies its arguments",
}
