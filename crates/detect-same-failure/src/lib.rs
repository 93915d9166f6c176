#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::{looks_like_failure, SameFailure, SCAN_CHARS};

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The registered name of this detector.
pub const NAME: &str = "same-failure";

const SCOPE: &str = "detectors.same-failure";

/// The options of the `[detectors.same-failure]` table, as written by a user.
///
/// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Consecutive identical failures of one tool, with varying arguments, at which the model
    /// is warned (default [`Settings::DEFAULT_WARNING_THRESHOLD`]). A positive integer.
    pub warning_threshold: Option<i64>,
    /// Consecutive identical failures from which every further call of the same tool is
    /// reported critical, so the orchestrator blocks it
    /// (default [`Settings::DEFAULT_CRITICAL_THRESHOLD`]). A positive integer greater than
    /// `warning-threshold`, or 0 for never.
    pub critical_threshold: Option<i64>,
    /// Treat a result without the error flag as a failure when its start looks like one
    /// (`Usage:`, `error:`, `command not found`, a traceback, ...). For sources that do not
    /// flag errors (default true).
    pub count_unflagged_failures: Option<bool>,
    /// What makes two failures "the same": `exact` (the bus's normalised fingerprint of the
    /// error) or `shape` (the error with the call's own arguments removed where it echoes
    /// them, numbers and temp ids abstracted). Default `exact`.
    pub failure_identity: Option<FailureIdentity>,
    /// The same failure (tool and failure identity) this many times within the last
    /// `recurring-window` tool results, whatever lies between, warns (0 = off, the default).
    pub recurring_threshold: Option<i64>,
    /// The tool results the recurring rule looks back over (default
    /// [`Settings::DEFAULT_RECURRING_WINDOW`], at most [`Settings::MAX_RECURRING_WINDOW`]).
    pub recurring_window: Option<i64>,
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

/// The resolved settings of the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Identical failures in a row at which a warning is reported (once per run of failures).
    pub warning_threshold: u32,
    /// Identical failures in a row from which the next call of the tool is critical
    /// (0 = never).
    pub critical_threshold: u32,
    /// Whether unflagged results that look like failures count.
    pub count_unflagged_failures: bool,
    /// What makes two failures the same.
    pub failure_identity: FailureIdentity,
    /// Same failures within the window that warn (0 = the recurring rule is off).
    pub recurring_threshold: u32,
    /// Tool results the recurring rule looks back over.
    pub recurring_window: u32,
}

impl Settings {
    /// Default warning threshold: the eighth identical failure in a row.
    pub const DEFAULT_WARNING_THRESHOLD: u32 = 8;
    /// Default critical threshold: after the sixteenth identical failure in a row.
    pub const DEFAULT_CRITICAL_THRESHOLD: u32 = 16;
    /// The largest accepted threshold.
    pub const MAX_THRESHOLD: u32 = 1_000_000;
    /// Default window of the recurring rule: the last 12 tool results.
    pub const DEFAULT_RECURRING_WINDOW: u32 = 12;
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
        let zero_or_count = |key: &str, v: Option<i64>, default: u32, min: i64, max: i64| {
            let n = scope.between(key, v, i64::from(default), 0, max)?;
            if n != 0 {
                scope.between(key, Some(n), 0, min, max)?;
            }
            Ok::<u32, ConfigError>(u32::try_from(n).unwrap_or(default))
        };
        let warning_threshold = scope.positive_at_most_i64(
            "warning-threshold",
            o.warning_threshold,
            Settings::DEFAULT_WARNING_THRESHOLD,
            Settings::MAX_THRESHOLD,
        )?;
        let critical_threshold = zero_or_count(
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
        let recurring_threshold = zero_or_count(
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

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            warning_threshold: Settings::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Settings::DEFAULT_CRITICAL_THRESHOLD,
            count_unflagged_failures: true,
            failure_identity: FailureIdentity::Exact,
            recurring_threshold: 0,
            recurring_window: Settings::DEFAULT_RECURRING_WINDOW,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(
        &format!("detectors.{NAME}"),
        table,
        Settings::from_options,
        SameFailure::new,
    )
}

/// The registration of `same-failure` (code LG010).
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG010",
    summary: "the same tool keeps failing with the same error while the model varies its arguments",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "warning-threshold",
            ty: "positive integer",
            default: "8",
            doc: "Identical failures of one tool in a row, with varying arguments, at which the model is warned (once per run).",
        },
        OptionDoc {
            name: "critical-threshold",
            ty: "integer (0 = never)",
            default: "16",
            doc: "Identical failures in a row from which every further call of that tool is critical (blocked) until a result breaks the run; greater than warning-threshold, or 0.",
        },
        OptionDoc {
            name: "count-unflagged-failures",
            ty: "bool",
            default: "true",
            doc: "Treat a result without the error flag as a failure when it is an error message (its first line starts like one: ERROR, error:, Usage:, a traceback, `bash: x: command not found`; an editor's rejection; a short `... not found`). A listing or a log that merely contains an error word is not one.",
        },
        OptionDoc {
            name: "failure-identity",
            ty: "\"exact\" | \"shape\"",
            default: "\"exact\"",
            doc: "What makes two failures the same: the normalised error, or its shape (the call's echoed arguments removed, numbers and temp ids abstracted).",
        },
        OptionDoc {
            name: "recurring-threshold",
            ty: "integer (0 = off)",
            default: "0",
            doc: "Warn when the same failure of one tool comes this many times within the last `recurring-window` tool results, whatever lies between.",
        },
        OptionDoc {
            name: "recurring-window",
            ty: "positive integer",
            default: "12",
            doc: "Tool results the recurring rule looks back over (at most 64).",
        },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport::NONE,
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
