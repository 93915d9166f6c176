#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::{looks_like_failure, SameFailure, SCAN_CHARS};

use loopguard_core::{parse_options, ConfigError, Detector, OptionDoc, Registration};
use serde::{Deserialize, Serialize};

/// The registered name of this detector.
pub const NAME: &str = "same-failure";

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
}

impl Settings {
    /// Default warning threshold: the eighth identical failure in a row.
    pub const DEFAULT_WARNING_THRESHOLD: u32 = 8;
    /// Default critical threshold: after the sixteenth identical failure in a row.
    pub const DEFAULT_CRITICAL_THRESHOLD: u32 = 16;
    /// The largest accepted threshold.
    pub const MAX_THRESHOLD: u32 = 1_000_000;

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
        let warning_threshold = threshold(
            "warning-threshold",
            o.warning_threshold,
            Settings::DEFAULT_WARNING_THRESHOLD,
            false,
        )?;
        let critical_threshold = threshold(
            "critical-threshold",
            o.critical_threshold,
            Settings::DEFAULT_CRITICAL_THRESHOLD,
            true,
        )?;
        if critical_threshold != 0 && warning_threshold >= critical_threshold {
            return Err(ConfigError::invalid(
                format!("detectors.{NAME}.critical-threshold"),
                format!(
                    "warning-threshold ({warning_threshold}) must be lower than critical-threshold ({critical_threshold}), or critical-threshold must be 0 (never)"
                ),
            ));
        }
        Ok(Settings {
            warning_threshold,
            critical_threshold,
            count_unflagged_failures: o.count_unflagged_failures.unwrap_or(true),
        })
    }
}

fn threshold(
    key: &str,
    value: Option<i64>,
    default: u32,
    zero_ok: bool,
) -> Result<u32, ConfigError> {
    let min = if zero_ok { 0 } else { 1 };
    match value {
        None => Ok(default),
        Some(n) if n >= min && n <= i64::from(Settings::MAX_THRESHOLD) => {
            Ok(u32::try_from(n).unwrap_or(default))
        }
        Some(n) => Err(ConfigError::invalid(
            format!("detectors.{NAME}.{key}"),
            format!(
                "must be a {} integer of at most {} (found {n})",
                if zero_ok {
                    "non-negative (0 = never)"
                } else {
                    "positive"
                },
                Settings::MAX_THRESHOLD
            ),
        )),
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            warning_threshold: Settings::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Settings::DEFAULT_CRITICAL_THRESHOLD,
            count_unflagged_failures: true,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    let options: Options = parse_options(&format!("detectors.{NAME}"), table)?;
    Ok(Box::new(SameFailure::new(Settings::from_options(
        &options,
    )?)))
}

/// The registration of `same-failure` (code LG010).
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG010",
    summary: "the same tool keeps failing with the same error while the model varies its arguments",
    docs: include_str!("../README.md"),
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
            doc: "Treat a result without the error flag as a failure when its first 300 characters look like one (Usage:, error:, command not found, a traceback, ...).",
        },
    ],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
