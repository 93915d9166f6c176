#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::PostCompactionGuard;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::{Deserialize, Serialize};

/// The stable abort code of this detector's findings.
pub const ABORT_CODE: &str = "compaction_loop_persisted";

loopguard_core::detector_options! {
    /// The options of the `[detectors.post-compaction-guard]` table, as written by a user.
    ///
    /// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
    #[derive(Eq)]
    pub struct Options;
    /// The resolved settings of the detector.
    #[derive(Copy, Eq, Serialize, Deserialize)]
    pub struct Settings;

    /// Completed tool calls watched after each compaction; that many identical (tool,
    /// arguments, result) triples abort the run.
    "window-size" window_size: i64 => u32 = 3, const DEFAULT_WINDOW_SIZE, "positive integer", "3";
}

impl Settings {
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

loopguard_core::detector_registration! {
    name: "post-compaction-guard", code: "LG006", detector: PostCompactionGuard::new,
    summary: "after a compaction, the same (tool, arguments, result) fills the short window: abort with `compaction_loop_persisted`",
    openclaw: OpenClawImport { master: MasterSwitch::OffOnly, toggle: None, keys: &[("postCompactionGuard.windowSize", "window-size")] },
}
