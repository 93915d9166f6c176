#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::StalledTurns;

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The registered name of this detector.
pub const NAME: &str = "stalled-turns";

const SCOPE: &str = "detectors.stalled-turns";

/// The options of the `[detectors.stalled-turns]` table, as written by a user.
///
/// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Consecutive stalled exchanges (the same harness message again, or an assistant reply
    /// with no tool call and nothing new) at which the model is warned
    /// (default [`Settings::DEFAULT_WARNING_THRESHOLD`]). A positive integer.
    pub warning_threshold: Option<i64>,
    /// Consecutive stalled exchanges at which the run is aborted
    /// (default [`Settings::DEFAULT_CRITICAL_THRESHOLD`]). A positive integer greater than
    /// `warning-threshold`.
    pub critical_threshold: Option<i64>,
    /// Count word-for-word repeated harness (user-side) messages with no tool activity in
    /// between (default true).
    pub count_nudges: Option<bool>,
    /// Count assistant replies that call no tool and are empty or repeat the previous reply
    /// (default true).
    pub count_replies: Option<bool>,
    /// Compare nudges and replies with digit runs masked and whitespace collapsed, so a
    /// harness message that differs only in a count ("found 3 actions", "found 5 actions")
    /// is the same nudge again (default false: word for word).
    pub mask_numbers: Option<bool>,
}

/// The resolved settings of the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Stalled exchanges at which a warning is reported (once per stall).
    pub warning_threshold: u32,
    /// Stalled exchanges at which a critical finding asks to abort the run.
    pub critical_threshold: u32,
    /// Whether repeated harness messages count.
    pub count_nudges: bool,
    /// Whether empty or repeated tool-less assistant replies count.
    pub count_replies: bool,
    /// Whether nudges and replies are compared with numbers masked.
    pub mask_numbers: bool,
}

impl Settings {
    /// Default warning threshold: the third identical nudge in a row.
    pub const DEFAULT_WARNING_THRESHOLD: u32 = 3;
    /// Default critical threshold: the tenth identical nudge in a row.
    pub const DEFAULT_CRITICAL_THRESHOLD: u32 = 10;
    /// The largest accepted threshold.
    pub const MAX_THRESHOLD: u32 = 1_000_000;

    /// Resolves options into settings.
    ///
    /// ```
    /// use loopguard_detect_stalled_turns::{Options, Settings};
    /// let s = Settings::from_options(&Options::default()).unwrap();
    /// assert_eq!((s.warning_threshold, s.critical_threshold), (3, 10));
    /// let o = Options { warning_threshold: Some(10), ..Options::default() };
    /// let err = Settings::from_options(&o).unwrap_err();
    /// assert_eq!(err.path(), Some("detectors.stalled-turns.critical-threshold"));
    /// ```
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let max = Settings::MAX_THRESHOLD;
        let warning_threshold = scope.positive_at_most_i64(
            "warning-threshold",
            o.warning_threshold,
            Settings::DEFAULT_WARNING_THRESHOLD,
            max,
        )?;
        let critical_threshold = scope.positive_at_most_i64(
            "critical-threshold",
            o.critical_threshold,
            Settings::DEFAULT_CRITICAL_THRESHOLD,
            max,
        )?;
        scope.below(
            ("warning-threshold", warning_threshold),
            ("critical-threshold", critical_threshold),
        )?;
        Ok(Settings {
            warning_threshold,
            critical_threshold,
            count_nudges: o.count_nudges.unwrap_or(true),
            count_replies: o.count_replies.unwrap_or(true),
            mask_numbers: o.mask_numbers.unwrap_or(false),
        })
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            warning_threshold: Settings::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Settings::DEFAULT_CRITICAL_THRESHOLD,
            count_nudges: true,
            count_replies: true,
            mask_numbers: false,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(
        &format!("detectors.{NAME}"),
        table,
        Settings::from_options,
        StalledTurns::new,
    )
}

/// The registration of `stalled-turns` (code LG009).
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG009",
    summary: "turns with no tool call that add nothing while the harness repeats its nudge",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "warning-threshold",
            ty: "positive integer",
            default: "3",
            doc: "Consecutive stalled exchanges at which the model is warned (once per stall).",
        },
        OptionDoc {
            name: "critical-threshold",
            ty: "positive integer",
            default: "10",
            doc: "Consecutive stalled exchanges at which the run is aborted; must be greater than warning-threshold.",
        },
        OptionDoc {
            name: "count-nudges",
            ty: "bool",
            default: "true",
            doc: "Count word-for-word repeated harness messages with no tool activity in between.",
        },
        OptionDoc {
            name: "count-replies",
            ty: "bool",
            default: "true",
            doc: "Count tool-less assistant replies that are empty or repeat the previous reply.",
        },
        OptionDoc {
            name: "mask-numbers",
            ty: "bool",
            default: "false",
            doc: "Compare nudges and replies with digit runs masked (\"found 3 actions\" and \"found 5 actions\" are the same nudge).",
        },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport::NONE,
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
