#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::StalledTurns;

use loopguard_core::{ConfigError, Scope};
use serde::{Deserialize, Serialize};

loopguard_core::detector_options! {
    /// The options of the `[detectors.stalled-turns]` table, as written by a user.
    ///
    /// Every field is optional; [`Settings::from_options`] fills in the defaults and validates.
    #[derive(Eq)]
    pub struct Options;
    /// The resolved settings of the detector.
    #[derive(Copy, Eq, Serialize, Deserialize)]
    pub struct Settings;

    /// Consecutive stalled exchanges at which the model is warned (once per stall).
    "warning-threshold" warning_threshold: i64 => u32 = 3, const DEFAULT_WARNING_THRESHOLD, "positive integer", "3";
    /// Consecutive stalled exchanges at which the run is aborted; must be greater than
    /// warning-threshold.
    "critical-threshold" critical_threshold: i64 => u32 = 10, const DEFAULT_CRITICAL_THRESHOLD, "positive integer", "10";
    /// Count word-for-word repeated harness messages with no tool activity in between.
    "count-nudges" count_nudges: bool = true, "bool";
    /// Count tool-less assistant replies that are empty or repeat the previous reply.
    "count-replies" count_replies: bool = true, "bool";
    /// Compare nudges and replies with digit runs masked ("found 3 actions" and "found 5
    /// actions" are the same nudge).
    "mask-numbers" mask_numbers: bool = false, "bool";
    /// A tool-less reply that brings at least this many words none of the stall's last four
    /// replies used (or four times as many new words that hold a digit, or that names what a
    /// request changed only in its numbers asked for, or that was cut by an output limit: 1,000
    /// bytes or more stopping inside a line, not the reply before it again) answered the
    /// message before it: the next
    /// repeat of that message is a new request, not a nudge ("continue" while a story is
    /// written). 0: every repeat counts.
    "fresh-reply-words" fresh_reply_words: i64 => u32 = 16, const DEFAULT_FRESH_REPLY_WORDS, "integer >= 0", "16";
}

impl Settings {
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
        let fresh_reply_words = scope.zero_or_count_i64(
            "fresh-reply-words",
            o.fresh_reply_words,
            Settings::DEFAULT_FRESH_REPLY_WORDS,
            1,
            i64::from(max),
        )?;
        Ok(Settings {
            warning_threshold,
            fresh_reply_words,
            critical_threshold,
            count_nudges: o.count_nudges.unwrap_or(true),
            count_replies: o.count_replies.unwrap_or(true),
            mask_numbers: o.mask_numbers.unwrap_or(false),
        })
    }
}

loopguard_core::detector_registration! {
    name: "stalled-turns", code: "LG009", detector: StalledTurns::new,
    summary: "turns with no tool call that add nothing while the harness repeats its nudge",
}
