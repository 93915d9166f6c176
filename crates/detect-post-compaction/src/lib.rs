#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::PostCompactionGuard;

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The registered name of this detector.
pub const NAME: &str = "post-compaction-guard";

const SCOPE: &str = "detectors.post-compaction-guard";

/// The stable abort code of this detector's findings.
pub const ABORT_CODE: &str = "compaction_loop_persisted";

/// The options of the `[detectors.post-compaction-guard]` table, as written by a user.
///
/// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// How many completed tool calls the guard watches after a compaction, and how many
    /// identical (tool, arguments, result) triples among them abort the run
    /// (default [`Settings::DEFAULT_WINDOW_SIZE`]). A positive integer.
    pub window_size: Option<i64>,
}

/// The resolved settings of the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Observations watched after each compaction, and identical triples needed to abort.
    pub window_size: u32,
}

impl Settings {
    /// Default window size (OpenClaw's `postCompactionGuard.windowSize`).
    pub const DEFAULT_WINDOW_SIZE: u32 = 3;
    /// The largest accepted window size (the window is held in memory).
    pub const MAX_WINDOW_SIZE: u32 = 1000;

    /// Resolves options into settings, rejecting values that are not positive integers.
    ///
    /// ```
    /// use loopguard_detect_post_compaction::{Options, Settings};
    /// let s = Settings::from_options(&Options::default()).unwrap();
    /// assert_eq!(s.window_size, 3);
    /// let err = Settings::from_options(&Options { window_size: Some(0) }).unwrap_err();
    /// assert_eq!(err.path(), Some("detectors.post-compaction-guard.window-size"));
    /// ```
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let window_size = Scope::new(SCOPE).positive_at_most_i64(
            "window-size",
            o.window_size,
            Settings::DEFAULT_WINDOW_SIZE,
            Settings::MAX_WINDOW_SIZE,
        )?;
        Ok(Settings { window_size })
    }

    /// Settings from a window size that bypassed validation (OpenClaw's runtime rule): a
    /// value that is not a positive integer falls back to the default of 3.
    ///
    /// ```
    /// use loopguard_detect_post_compaction::Settings;
    /// assert_eq!(Settings::lenient(0).window_size, 3);
    /// assert_eq!(Settings::lenient(-4).window_size, 3);
    /// assert_eq!(Settings::lenient(5).window_size, 5);
    /// ```
    pub fn lenient(window_size: i64) -> Settings {
        Settings::from_options(&Options {
            window_size: Some(window_size),
        })
        .unwrap_or_default()
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            window_size: Settings::DEFAULT_WINDOW_SIZE,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(
        &format!("detectors.{NAME}"),
        table,
        Settings::from_options,
        PostCompactionGuard::new,
    )
}

/// The registration of `post-compaction-guard` (code LG006). On by default, as in OpenClaw
/// (only an explicit `enabled = false` turns it off).
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG006",
    summary: "after a compaction, the same (tool, arguments, result) fills the short window: abort with `compaction_loop_persisted`",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[OptionDoc {
        name: "window-size",
        ty: "positive integer",
        default: "3",
        doc: "Completed tool calls watched after each compaction; that many identical (tool, arguments, result) triples abort the run.",
    }],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport {
        master: loopguard_core::MasterSwitch::OffOnly,
        toggle: None,
        keys: &[
            ("postCompactionGuard.windowSize", "window-size"),
        ],
    },
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
