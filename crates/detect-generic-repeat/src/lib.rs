#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod sketch;
#[cfg(test)]
mod testutil;

pub use detector::GenericRepeat;

use loopguard_core::{
    parse_options, ConfigError, Detector, EnvKind, EnvVar, Level, MasterSwitch, OpenClawImport,
    OptionDoc, Registration, Renamed, Scope,
};
use serde::{Deserialize, Serialize};

/// The detector's registered name.
pub const NAME: &str = "generic-repeat";
/// The detector's stable code.
pub const CODE: &str = "LG001";

const SCOPE: &str = "detectors.generic-repeat";

/// Which fingerprint of a tool result decides "the same result".
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultIdentity {
    /// The exact text and image count (pi-loop-guard's rule): `result_fingerprint`.
    Raw,
    /// After the tool's normaliser removed volatile fields (durations, pids, ids,
    /// timestamps): `ResultInfo::norm_fp`. OpenClaw's outcome hashing is of this kind.
    #[default]
    Normalized,
}

/// What the window rule counts as "the same".
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowIdentity {
    /// The same tool and input, whatever the results (pi-repetition-guard); counted on the
    /// `tool_call`, so a critical level blocks the call.
    #[default]
    Call,
    /// The same tool, input and result; counted when the result arrives.
    CallAndResult,
    /// The same tool and input, counted on the `tool_call` only while no result comes: every
    /// tool result empties the window. For a host that forwards the calls but not their
    /// results (a pre-execution hook alone), where the rules that compare results see
    /// nothing; where results come, the window never holds two calls apart from a parallel
    /// batch's.
    UnansweredCall,
}

/// The `window` sub-table: pi-repetition-guard's sliding window of calls.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WindowOptions {
    /// Turns the window rule on or off (writing the table turns it on unless this is `false`).
    pub enabled: Option<bool>,
    /// How many of the most recent calls the window holds (the current one included).
    pub size: Option<u32>,
    /// Report when the current call's tool and arguments occur this many times in the window.
    pub threshold: Option<u32>,
    /// The level of the finding: `critical` (block the call, pi-repetition-guard) or
    /// `warning` (steer).
    pub level: Option<Level>,
    /// `call` (tool + input, whatever the results), `call-and-result`, or `unanswered-call`
    /// (tool + input, while no result comes).
    pub identity: Option<WindowIdentity>,
    /// Occurrences that report a critical finding (block the call) whatever `level` says;
    /// `0` (the default): none.
    pub critical_threshold: Option<u32>,
}

/// The `openclaw` sub-table: OpenClaw's `generic_repeat` thresholds over a run-scoped history.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OpenClawOptions {
    /// Turns the OpenClaw rule on or off (writing the table turns it on unless this is `false`).
    pub enabled: Option<bool>,
    /// How many call records the history keeps (OpenClaw `historySize`).
    pub history_size: Option<u32>,
    /// Warn when the same tool and arguments occur this many times in the run's history,
    /// whatever the results (OpenClaw `warningThreshold`).
    pub warning_threshold: Option<u32>,
    /// Block when the newest outcomes of the same tool and arguments were identical this many
    /// times (interleaved calls do not break it; OpenClaw `criticalThreshold`).
    pub critical_threshold: Option<u32>,
    /// Leave known poll calls (kind `poll` in the tools table: `command_status`, `process`
    /// with action `poll`/`log`, …) to the `known-poll-no-progress` detector, as OpenClaw does.
    pub skip_known_polls: Option<bool>,
}

/// The `near-duplicate` sub-table: the same call again and again whose results barely change.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NearDuplicateOptions {
    /// Turns the rule on or off (writing the table turns it on unless this is `false`).
    pub enabled: Option<bool>,
    /// Two consecutive results of the same call are near-duplicates when the estimated
    /// Jaccard similarity of their 5-character shingle sets is at least this (0 < x ≤ 1).
    pub similarity: Option<f64>,
    /// Warn on the call that would be the N-th consecutive one with the same tool and
    /// arguments when each of the N-1 results before it was a near-duplicate of the previous.
    #[serde(alias = "warn-threshold")]
    pub warning_threshold: Option<u32>,
    /// Block that call from the N-th on (greater than `warning-threshold`; 0 never blocks).
    #[serde(alias = "block-threshold")]
    pub critical_threshold: Option<u32>,
    /// Block that call from the N-th on when every result of the streak was a failure
    /// (greater than `warning-threshold`; 0 never blocks on that ground).
    pub failure_critical_threshold: Option<u32>,
    /// Count results with no text as results (two silent answers are identical); when
    /// `false`, the top-level `ignore-empty-results` decides.
    pub count_empty_results: Option<bool>,
    /// Warn one call earlier when the same call also came before the streak (a different
    /// call interrupted the repetition once), within this many recent calls (0: off).
    pub recurrence_window: Option<u32>,
    /// Leave polling calls (kind `poll` in the tools table, and polling shell commands) to
    /// `known-poll-no-progress`: their output advancing a little is progress, not a repeat
    /// (default `true`).
    pub skip_known_polls: Option<bool>,
}

/// The `similar-calls` sub-table: consecutive calls of one tool with nearly the same
/// arguments whose results keep the same shape and do not progress.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SimilarCallsOptions {
    /// Turns the rule on or off (writing the table turns it on unless this is `false`).
    pub enabled: Option<bool>,
    /// Two calls are alike when the Jaccard similarity of their argument token sets (digit
    /// runs abstracted) is at least this (0 < x ≤ 1); a call is compared with the streak's
    /// newest three. Two shell commands whose results are both empty are also alike when
    /// they differ only in their path arguments (`find /usr -name X`, `find /opt -name X`).
    pub similarity: Option<f64>,
    /// Warn when this many consecutive alike calls returned results of the same shape (the
    /// call's echoed arguments removed, numbers abstracted) without progress (numbers that
    /// move steadily, such as a falling failure count, are progress and restart the count).
    #[serde(alias = "warn-threshold")]
    pub warning_threshold: Option<u32>,
    /// The threshold when the results are empty (nothing found, again and again).
    #[serde(alias = "empty-warn-threshold")]
    pub empty_warning_threshold: Option<u32>,
    /// Block the call that would be the N-th alike call of a warned streak whose results are
    /// not empty (greater than `warning-threshold`; 0, the default, never blocks): the agent
    /// was told at the warning and went on with the same call in other words.
    pub critical_threshold: Option<u32>,
    /// Warn when this many consecutive searches, by any tool and in any words, looked for
    /// one thing (a term of their arguments every one of them shares) and each found
    /// nothing (0 turns the rule off).
    pub fruitless_warning_threshold: Option<u32>,
}

/// Resolved similar-calls rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SimilarCallsSettings {
    /// Similarity threshold in thousandths.
    pub similarity_permille: u32,
    /// Consecutive alike calls that warn.
    pub warn_threshold: u32,
    /// Consecutive alike calls with empty results that warn.
    pub empty_warn_threshold: u32,
    /// The alike call of a warned, non-empty streak that blocks (`None`: never).
    pub block_threshold: Option<u32>,
    /// Consecutive fruitless searches for one thing that warn (0: never).
    pub fruitless_warn_threshold: u32,
}

/// The `[detectors.generic-repeat]` table as written. Every key is optional; see
/// [`Settings`] for the defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Turns pi-loop-guard's consecutive streak on or off.
    pub streak: Option<bool>,
    /// The streak warns when this many consecutive identical (call, result) pairs completed
    /// (`LOOP_GUARD_WARN_THRESHOLD`; formerly `warn-threshold`).
    #[serde(alias = "warn-threshold")]
    pub warning_threshold: Option<u32>,
    /// The streak blocks the call that would be the `critical-threshold`-th identical one
    /// (`LOOP_GUARD_BLOCK_THRESHOLD`; formerly `block-threshold`); must be greater than
    /// `warning-threshold`.
    #[serde(alias = "block-threshold")]
    pub critical_threshold: Option<u32>,
    /// Tools this detector never counts, in any rule (`LOOP_GUARD_IGNORE_TOOLS`).
    pub ignore_tools: Option<Vec<String>>,
    /// Results flagged as errors never count as outcomes (`LOOP_GUARD_IGNORE_ERRORS`).
    pub ignore_errors: Option<bool>,
    /// Results with no text (whitespace only, or only a host's note that nothing was printed,
    /// [`loopguard_core::shape::is_silent`]) and no image are transparent: silence is no
    /// evidence that nothing changed (`cd ..`, `mkdir -p`, `sed -i`). A silent call that acts
    /// (`sed -i`, a script) ends the streak of another call: it may have changed its answer.
    pub ignore_empty_results: Option<bool>,
    /// `raw` (exact text and image count) or `normalized` (volatile fields removed).
    pub result_identity: Option<ResultIdentity>,
    /// Count consecutive identical whole parallel batches as a streak too (same thresholds).
    pub batch_streak: Option<bool>,
    /// pi-repetition-guard's sliding window.
    pub window: Option<WindowOptions>,
    /// OpenClaw's generic thresholds.
    pub openclaw: Option<OpenClawOptions>,
    /// loopguard's near-duplicate streak.
    pub near_duplicate: Option<NearDuplicateOptions>,
    /// loopguard's similar-calls streak (near-duplicate arguments, same result shape).
    pub similar_calls: Option<SimilarCallsOptions>,
    /// loopguard's re-read rule: the same look answered the same, again and again, with only
    /// looks between.
    pub rereads: Option<RereadOptions>,
    /// Thresholds of the streak for polling calls (kind `poll` in the tools table, and shell commands that
    /// wait, tail a log or ask for a status): waiting on something that has not changed yet is
    /// not a loop at the third look. Absent: polls count like any call (the seeds' rule).
    pub polls: Option<PollOptions>,
}

/// The `rereads` table: a call that only looks (reads a file, lists, searches), answered the
/// same each time, made again and again with nothing but looks between.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RereadOptions {
    /// Turns the rule on or off (writing the table turns it on unless this is `false`).
    pub enabled: Option<bool>,
    /// Warn when the same look got the same answer this many times within the window.
    pub warning_threshold: Option<u32>,
    /// How many of the newest looks are searched (a call that does anything else empties
    /// the window).
    pub window: Option<u32>,
}

/// Resolved re-read rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RereadSettings {
    /// Identical looks that warn.
    pub warn_threshold: u32,
    /// Looks remembered.
    pub window: u32,
}

/// The `polls` table: the streak's thresholds for polling calls.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PollOptions {
    /// Warn when this many consecutive identical results of a polling call completed.
    #[serde(alias = "warn-threshold")]
    pub warning_threshold: Option<u32>,
    /// Block the polling call that would be the N-th identical one (greater than
    /// `warning-threshold`).
    #[serde(alias = "block-threshold")]
    pub critical_threshold: Option<u32>,
}

/// The streak's thresholds for polling calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PollSettings {
    /// Warn threshold.
    pub warn_threshold: u32,
    /// Block threshold.
    pub block_threshold: u32,
}

/// Resolved window rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WindowSettings {
    /// Window size.
    pub size: u32,
    /// Occurrences that fire.
    pub threshold: u32,
    /// Finding level.
    pub level: Level,
    /// What counts as the same.
    pub identity: WindowIdentity,
    /// Occurrences that report a critical finding whatever `level` says (0: none).
    pub critical_threshold: u32,
}

/// Resolved OpenClaw rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpenClawSettings {
    /// History size.
    pub history_size: u32,
    /// Warning threshold (recent count).
    pub warning_threshold: u32,
    /// Critical threshold (no-progress streak).
    pub critical_threshold: u32,
    /// Skip known poll calls.
    pub skip_known_polls: bool,
}

/// Resolved near-duplicate rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NearDuplicateSettings {
    /// The similarity threshold in thousandths (`similarity = 0.7` → 700).
    pub similarity_permille: u32,
    /// The consecutive call that warns.
    pub warn_threshold: u32,
    /// The consecutive call that blocks (`None`: never).
    pub block_threshold: Option<u32>,
    /// The consecutive call that blocks when every result of the streak failed (`None`:
    /// never on that ground).
    pub failure_block_threshold: Option<u32>,
    /// Empty results count as results.
    pub count_empty_results: bool,
    /// Calls remembered for the early warning on recurring streaks (0: off).
    pub recurrence_window: u32,
    /// Known poll calls are left to `known-poll-no-progress`.
    pub skip_known_polls: bool,
}

/// Resolved settings of the detector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// Streak rule on.
    pub streak: bool,
    /// Streak warn threshold.
    pub warn_threshold: u32,
    /// Streak block threshold.
    pub block_threshold: u32,
    /// Ignored tools.
    pub ignore_tools: Vec<String>,
    /// Ignore error results.
    pub ignore_errors: bool,
    /// Empty results are transparent.
    pub ignore_empty_results: bool,
    /// Result identity.
    pub result_identity: ResultIdentity,
    /// Whole-batch streak on.
    pub batch_streak: bool,
    /// Window rule, when on.
    pub window: Option<WindowSettings>,
    /// OpenClaw rule, when on.
    pub openclaw: Option<OpenClawSettings>,
    /// Near-duplicate rule, when on.
    pub near_duplicate: Option<NearDuplicateSettings>,
    /// Similar-calls rule, when on.
    pub similar_calls: Option<SimilarCallsSettings>,
    /// Re-read rule, when on.
    pub rereads: Option<RereadSettings>,
    /// Streak thresholds for polling calls, when set.
    pub polls: Option<PollSettings>,
}

impl Settings {
    /// Streak on by default.
    pub const DEFAULT_STREAK: bool = true;
    /// pi-loop-guard's default warn threshold.
    pub const DEFAULT_WARN_THRESHOLD: u32 = 3;
    /// pi-loop-guard's default block threshold.
    pub const DEFAULT_BLOCK_THRESHOLD: u32 = 5;
    /// Errors count by default.
    pub const DEFAULT_IGNORE_ERRORS: bool = false;
    /// Empty results are transparent by default.
    pub const DEFAULT_IGNORE_EMPTY_RESULTS: bool = true;
    /// Normalised results by default.
    pub const DEFAULT_RESULT_IDENTITY: ResultIdentity = ResultIdentity::Normalized;
    /// Whole-batch streak on by default.
    pub const DEFAULT_BATCH_STREAK: bool = true;
    /// The window rule is on by default (as a warning).
    pub const DEFAULT_WINDOW_ENABLED: bool = true;
    /// pi-repetition-guard's window size.
    pub const DEFAULT_WINDOW_SIZE: u32 = 8;
    /// The default window threshold: 5 of the last 8 calls (pi-repetition-guard uses 4;
    /// 4-in-8 warned on five loop-free corpus sessions, 5-in-8 on none).
    pub const DEFAULT_WINDOW_THRESHOLD: u32 = 5;
    /// The default preset only warns on the window rule (results are ignored by it).
    pub const DEFAULT_WINDOW_LEVEL: Level = Level::Warning;
    /// What the window counts by default.
    pub const DEFAULT_WINDOW_IDENTITY: WindowIdentity = WindowIdentity::Call;
    /// The OpenClaw rule is off by default.
    pub const DEFAULT_OPENCLAW_ENABLED: bool = false;
    /// OpenClaw's `historySize`.
    pub const DEFAULT_OPENCLAW_HISTORY_SIZE: u32 = 30;
    /// OpenClaw's `warningThreshold`.
    pub const DEFAULT_OPENCLAW_WARNING_THRESHOLD: u32 = 10;
    /// OpenClaw's `criticalThreshold`.
    pub const DEFAULT_OPENCLAW_CRITICAL_THRESHOLD: u32 = 20;
    /// OpenClaw skips known polls in `generic_repeat`.
    pub const DEFAULT_OPENCLAW_SKIP_KNOWN_POLLS: bool = true;
    /// The near-duplicate rule is off unless its table is written (the seed presets stay
    /// exact; loopguard's `default` preset turns it on).
    pub const DEFAULT_NEAR_DUPLICATE_ENABLED: bool = false;
    /// Consecutive results at least 70% alike (Jaccard of their shingle sets) are
    /// near-duplicates. On the evaluation corpus, the consecutive results of the looping
    /// calls were 72–100% alike, loop-free consecutive repeats either below 45% (paging,
    /// re-checks after a change) or polls whose counters advanced (90%+, caught by no
    /// threshold, kept out by the streak length instead).
    pub const DEFAULT_NEAR_DUPLICATE_SIMILARITY: f64 = 0.7;
    /// Warn on the 4th consecutive call (no loop-free corpus session repeats a call more
    /// than 3 times in a row).
    pub const DEFAULT_NEAR_DUPLICATE_WARN_THRESHOLD: u32 = 4;
    /// Block from the 8th consecutive call.
    pub const DEFAULT_NEAR_DUPLICATE_BLOCK_THRESHOLD: u32 = 8;
    /// No block for failing streaks of their own unless asked (the `default` preset blocks
    /// the 6th: the same command failing nearly the same way five times in a row, with no
    /// other call between, is a loop whose copies differ in a port, a pid or an order).
    pub const DEFAULT_NEAR_DUPLICATE_FAILURE_BLOCK_THRESHOLD: u32 = 0;
    /// Empty results count for the near-duplicate rule.
    pub const DEFAULT_NEAR_DUPLICATE_COUNT_EMPTY_RESULTS: bool = true;
    /// A streak warns one call earlier when the same call also came before it within the
    /// last 8 calls (pi-repetition-guard's window size: 4 occurrences in 8 calls, the last
    /// 3 back to back with near-duplicate results).
    pub const DEFAULT_NEAR_DUPLICATE_RECURRENCE_WINDOW: u32 = 8;
    /// Calls whose argument token sets are at least 80% alike are similar (hermes-agent's
    /// rule for shell commands).
    pub const DEFAULT_SIMILAR_CALLS_SIMILARITY: f64 = 0.8;
    /// Warn on the 6th similar call in a row with the same result shape (a corpus session
    /// tries 5 variants of one input that all give the same answer, on purpose).
    pub const DEFAULT_SIMILAR_CALLS_WARN_THRESHOLD: u32 = 6;
    /// Warn on the 4th similar call in a row that found nothing.
    pub const DEFAULT_SIMILAR_CALLS_EMPTY_WARN_THRESHOLD: u32 = 4;
    /// Warn on the 6th search in a row for one thing that found nothing, whatever the tool
    /// and the words (two more than alike calls that found nothing: other words are more
    /// often a search that is still looking).
    pub const DEFAULT_SIMILAR_CALLS_FRUITLESS_WARN_THRESHOLD: u32 = 6;
    /// Warn on the 4th time one look got one answer within the window: three looks at one
    /// unchanged thing are a check and a second look; a fourth, with nothing done between,
    /// learns nothing.
    pub const DEFAULT_REREADS_WARN_THRESHOLD: u32 = 4;
    /// The newest 12 looks (three rounds of a look and three others, or four of a look and
    /// two others).
    pub const DEFAULT_REREADS_WINDOW: u32 = 12;
    /// No block unless asked (the `default` preset blocks the 12th alike call: six more after
    /// its warning).
    pub const DEFAULT_SIMILAR_CALLS_BLOCK_THRESHOLD: u32 = 0;
    /// The largest `near-duplicate.recurrence-window` accepted.
    pub const MAX_RECURRENCE_WINDOW: u32 = 64;
    /// The largest window or history accepted (bounds memory and the per-call scan).
    pub const MAX_HISTORY: u32 = 512;

    /// Resolves and validates options.
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let warn = scope.positive(
            "warning-threshold",
            o.warning_threshold,
            Settings::DEFAULT_WARN_THRESHOLD,
        )?;
        let block = scope.positive(
            "critical-threshold",
            o.critical_threshold,
            Settings::DEFAULT_BLOCK_THRESHOLD,
        )?;
        scope.below(("warning-threshold", warn), ("critical-threshold", block))?;
        let mut ignore_tools: Vec<String> = o
            .ignore_tools
            .iter()
            .flatten()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        ignore_tools.sort();
        ignore_tools.dedup();

        let w = o.window.clone().unwrap_or_default();
        let window_on = w
            .enabled
            .unwrap_or(o.window.is_some() || Settings::DEFAULT_WINDOW_ENABLED);
        let size = scope.positive_at_most(
            "window.size",
            w.size,
            Settings::DEFAULT_WINDOW_SIZE,
            Settings::MAX_HISTORY,
        )?;
        let threshold = scope.positive(
            "window.threshold",
            w.threshold,
            Settings::DEFAULT_WINDOW_THRESHOLD,
        )?;
        scope.within(("window.threshold", threshold), ("window.size", size))?;
        let level = w.level.unwrap_or(Settings::DEFAULT_WINDOW_LEVEL);
        let identity = w.identity.unwrap_or(Settings::DEFAULT_WINDOW_IDENTITY);
        if level == Level::Critical && identity == WindowIdentity::CallAndResult {
            return Err(scope.invalid(
                "window.level",
                "`critical` needs `identity = \"call\"`: the call-and-result window fires on a result, which \
                 cannot be blocked",
            ));
        }
        let critical_threshold = w.critical_threshold.unwrap_or(0);
        if critical_threshold > 0 {
            if identity == WindowIdentity::CallAndResult {
                return Err(scope.invalid(
                    "window.critical-threshold",
                    "needs a window counted on the call (`identity = \"call\"` or \"unanswered-call\"`): the \
                     call-and-result window fires on a result, which cannot be blocked",
                ));
            }
            scope.below(
                ("window.threshold", threshold),
                ("window.critical-threshold", critical_threshold),
            )?;
            scope.within(
                ("window.critical-threshold", critical_threshold),
                ("window.size", size),
            )?;
        }
        let window = window_on.then_some(WindowSettings {
            size,
            threshold,
            level,
            identity,
            critical_threshold,
        });

        let c = o.openclaw.clone().unwrap_or_default();
        let oc_on = c
            .enabled
            .unwrap_or(o.openclaw.is_some() || Settings::DEFAULT_OPENCLAW_ENABLED);
        let history = scope.positive_at_most(
            "openclaw.history-size",
            c.history_size,
            Settings::DEFAULT_OPENCLAW_HISTORY_SIZE,
            Settings::MAX_HISTORY,
        )?;
        let warning = scope.positive(
            "openclaw.warning-threshold",
            c.warning_threshold,
            Settings::DEFAULT_OPENCLAW_WARNING_THRESHOLD,
        )?;
        let critical = scope.positive(
            "openclaw.critical-threshold",
            c.critical_threshold,
            Settings::DEFAULT_OPENCLAW_CRITICAL_THRESHOLD,
        )?;
        scope.below(
            ("openclaw.warning-threshold", warning),
            ("openclaw.critical-threshold", critical),
        )?;
        let openclaw = oc_on.then_some(OpenClawSettings {
            history_size: history,
            warning_threshold: warning,
            critical_threshold: critical,
            skip_known_polls: c
                .skip_known_polls
                .unwrap_or(Settings::DEFAULT_OPENCLAW_SKIP_KNOWN_POLLS),
        });

        let near_duplicate = near_duplicate_settings(o.near_duplicate.as_ref())?;
        let similar_calls = similar_calls_settings(o.similar_calls.as_ref())?;
        let rereads = rereads_settings(o.rereads.as_ref())?;
        let polls = match &o.polls {
            None => None,
            Some(p) => {
                let w = scope.positive("polls.warning-threshold", p.warning_threshold, 10)?;
                let b = scope.positive("polls.critical-threshold", p.critical_threshold, 20)?;
                scope.below(
                    ("polls.warning-threshold", w),
                    ("polls.critical-threshold", b),
                )?;
                Some(PollSettings {
                    warn_threshold: w,
                    block_threshold: b,
                })
            }
        };

        Ok(Settings {
            streak: o.streak.unwrap_or(Settings::DEFAULT_STREAK),
            warn_threshold: warn,
            block_threshold: block,
            ignore_tools,
            ignore_errors: o.ignore_errors.unwrap_or(Settings::DEFAULT_IGNORE_ERRORS),
            ignore_empty_results: o
                .ignore_empty_results
                .unwrap_or(Settings::DEFAULT_IGNORE_EMPTY_RESULTS),
            result_identity: o
                .result_identity
                .unwrap_or(Settings::DEFAULT_RESULT_IDENTITY),
            batch_streak: o.batch_streak.unwrap_or(Settings::DEFAULT_BATCH_STREAK),
            window,
            openclaw,
            near_duplicate,
            similar_calls,
            rereads,
            polls,
        })
    }

    /// Parses and validates a `[detectors.generic-repeat]` table (without `enabled`).
    pub fn from_table(table: &toml::Table) -> Result<Settings, ConfigError> {
        let o: Options = parse_options(SCOPE, table)?;
        Settings::from_options(&o)
    }
}

impl Default for Settings {
    fn default() -> Self {
        // The default options always validate; fall back to a literal copy just in case.
        Settings::from_options(&Options::default()).unwrap_or(Settings {
            streak: Settings::DEFAULT_STREAK,
            warn_threshold: Settings::DEFAULT_WARN_THRESHOLD,
            block_threshold: Settings::DEFAULT_BLOCK_THRESHOLD,
            ignore_tools: Vec::new(),
            ignore_errors: Settings::DEFAULT_IGNORE_ERRORS,
            ignore_empty_results: Settings::DEFAULT_IGNORE_EMPTY_RESULTS,
            result_identity: Settings::DEFAULT_RESULT_IDENTITY,
            batch_streak: Settings::DEFAULT_BATCH_STREAK,
            window: None,
            openclaw: None,
            near_duplicate: None,
            similar_calls: None,
            rereads: None,
            polls: None,
        })
    }
}

fn near_duplicate_settings(
    o: Option<&NearDuplicateOptions>,
) -> Result<Option<NearDuplicateSettings>, ConfigError> {
    let n = o.cloned().unwrap_or_default();
    let on = n
        .enabled
        .unwrap_or(o.is_some() || Settings::DEFAULT_NEAR_DUPLICATE_ENABLED);
    let scope = Scope::new(SCOPE);
    let similarity = scope.similarity(
        "near-duplicate.similarity",
        n.similarity,
        Settings::DEFAULT_NEAR_DUPLICATE_SIMILARITY,
    )?;
    // The results of two calls are needed to compare.
    let warn = scope.at_least(
        "near-duplicate.warning-threshold",
        n.warning_threshold,
        Settings::DEFAULT_NEAR_DUPLICATE_WARN_THRESHOLD,
        3,
    )?;
    // A block threshold: 0 never blocks, any other is above the warning.
    let block_at = |key: &str, value: Option<u32>, default: u32| match value.unwrap_or(default) {
        0 => Ok(None),
        b => scope
            .below(("near-duplicate.warning-threshold", warn), (key, b))
            .map(|()| Some(b)),
    };
    let block = block_at(
        "near-duplicate.critical-threshold",
        n.critical_threshold,
        Settings::DEFAULT_NEAR_DUPLICATE_BLOCK_THRESHOLD,
    )?;
    let failure_block = block_at(
        "near-duplicate.failure-critical-threshold",
        n.failure_critical_threshold,
        Settings::DEFAULT_NEAR_DUPLICATE_FAILURE_BLOCK_THRESHOLD,
    )?;
    let recurrence = scope.between(
        "near-duplicate.recurrence-window",
        n.recurrence_window,
        Settings::DEFAULT_NEAR_DUPLICATE_RECURRENCE_WINDOW,
        0,
        Settings::MAX_RECURRENCE_WINDOW,
    )?;
    // Rounded to thousandths; a positive similarity never rounds to 0.
    let permille = ((similarity * 1000.0).round() as u32).clamp(1, 1000);
    Ok(on.then_some(NearDuplicateSettings {
        similarity_permille: permille,
        warn_threshold: warn,
        block_threshold: block,
        failure_block_threshold: failure_block,
        count_empty_results: n
            .count_empty_results
            .unwrap_or(Settings::DEFAULT_NEAR_DUPLICATE_COUNT_EMPTY_RESULTS),
        recurrence_window: recurrence,
        skip_known_polls: n.skip_known_polls.unwrap_or(true),
    }))
}

fn similar_calls_settings(
    o: Option<&SimilarCallsOptions>,
) -> Result<Option<SimilarCallsSettings>, ConfigError> {
    let n = o.cloned().unwrap_or_default();
    let on = n.enabled.unwrap_or(o.is_some());
    let scope = Scope::new(SCOPE);
    let similarity = scope.similarity(
        "similar-calls.similarity",
        n.similarity,
        Settings::DEFAULT_SIMILAR_CALLS_SIMILARITY,
    )?;
    // Two alike calls are no loop.
    let warn = scope.at_least(
        "similar-calls.warning-threshold",
        n.warning_threshold,
        Settings::DEFAULT_SIMILAR_CALLS_WARN_THRESHOLD,
        3,
    )?;
    let empty_warn = scope.at_least(
        "similar-calls.empty-warning-threshold",
        n.empty_warning_threshold,
        Settings::DEFAULT_SIMILAR_CALLS_EMPTY_WARN_THRESHOLD,
        3,
    )?;
    // 0 never blocks; any other threshold is above the warning.
    let block = match n
        .critical_threshold
        .unwrap_or(Settings::DEFAULT_SIMILAR_CALLS_BLOCK_THRESHOLD)
    {
        0 => None,
        b => {
            scope.below(
                ("similar-calls.warning-threshold", warn),
                ("similar-calls.critical-threshold", b),
            )?;
            Some(b)
        }
    };
    // Three fruitless searches are a search still looking.
    let fruitless = match n
        .fruitless_warning_threshold
        .unwrap_or(Settings::DEFAULT_SIMILAR_CALLS_FRUITLESS_WARN_THRESHOLD)
    {
        0 => 0,
        f => scope.at_least(
            "similar-calls.fruitless-warning-threshold",
            Some(f),
            Settings::DEFAULT_SIMILAR_CALLS_FRUITLESS_WARN_THRESHOLD,
            4,
        )?,
    };
    let permille = ((similarity * 1000.0).round() as u32).clamp(1, 1000);
    Ok(on.then_some(SimilarCallsSettings {
        similarity_permille: permille,
        warn_threshold: warn,
        empty_warn_threshold: empty_warn,
        block_threshold: block,
        fruitless_warn_threshold: fruitless,
    }))
}

/// The `rereads` table, validated whether or not it is on (as every table is).
fn rereads_settings(o: Option<&RereadOptions>) -> Result<Option<RereadSettings>, ConfigError> {
    let r = o.cloned().unwrap_or_default();
    let on = r.enabled.unwrap_or(o.is_some());
    let scope = Scope::new(SCOPE);
    let warn = scope.at_least(
        "rereads.warning-threshold",
        r.warning_threshold,
        Settings::DEFAULT_REREADS_WARN_THRESHOLD,
        3,
    )?;
    let window = scope.between(
        "rereads.window",
        r.window,
        Settings::DEFAULT_REREADS_WINDOW,
        warn,
        Settings::MAX_RECURRENCE_WINDOW,
    )?;
    Ok(on.then_some(RereadSettings {
        warn_threshold: warn,
        window,
    }))
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    Ok(Box::new(GenericRepeat::new(Settings::from_table(table)?)))
}

/// The detector's registration.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: CODE,
    summary: "same tool, same arguments, same (or nearly the same) result, again and again (streak, near-duplicate streak, window, OpenClaw thresholds)",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "streak",
            ty: "bool",
            default: "true",
            doc: "pi-loop-guard's consecutive streak of identical (tool, arguments, result).",
        },
        OptionDoc {
            name: "warning-threshold",
            ty: "positive integer",
            default: "3",
            doc: "Warn when this many consecutive identical results completed (`LOOP_GUARD_WARN_THRESHOLD`; formerly `warn-threshold`).",
        },
        OptionDoc {
            name: "critical-threshold",
            ty: "integer > `warning-threshold`",
            default: "5",
            doc: "Block the call that would be the N-th identical one (`LOOP_GUARD_BLOCK_THRESHOLD`; formerly `block-threshold`).",
        },
        OptionDoc {
            name: "ignore-tools",
            ty: "list of strings",
            default: "[]",
            doc: "Tools no rule of this detector counts (`LOOP_GUARD_IGNORE_TOOLS`, comma-separated).",
        },
        OptionDoc {
            name: "ignore-errors",
            ty: "bool",
            default: "false",
            doc: "Results flagged as errors never count as outcomes (`LOOP_GUARD_IGNORE_ERRORS`).",
        },
        OptionDoc {
            name: "ignore-empty-results",
            ty: "bool",
            default: "true",
            doc: "Results with no text (whitespace only, or only a host's note that nothing was printed) and no image never count as outcomes (silence is not evidence); a silent call that acts (`sed -i`, a script) ends the streak of another call.",
        },
        OptionDoc {
            name: "result-identity",
            ty: "\"raw\" | \"normalized\"",
            default: "\"normalized\"",
            doc: "`raw`: exact text + image count (pi-loop-guard). `normalized`: after core's per-tool normaliser removed volatile fields. Used by the streak, the batch streak and the OpenClaw rule.",
        },
        OptionDoc {
            name: "batch-streak",
            ty: "bool",
            default: "true",
            doc: "Consecutive identical whole parallel batches count as a streak (same thresholds).",
        },
        OptionDoc {
            name: "window.enabled",
            ty: "bool",
            default: "true",
            doc: "pi-repetition-guard's window rule (writing the `window` table turns it on unless this is `false`).",
        },
        OptionDoc {
            name: "window.size",
            ty: "integer 1-512",
            default: "8",
            doc: "Calls in the window, the current one included.",
        },
        OptionDoc {
            name: "window.threshold",
            ty: "integer 1-`size`",
            default: "5",
            doc: "Occurrences of the same tool + input that fire.",
        },
        OptionDoc {
            name: "window.level",
            ty: "\"warning\" | \"critical\"",
            default: "\"warning\"",
            doc: "`critical` blocks (pi-repetition-guard); `warning` steers.",
        },
        OptionDoc {
            name: "window.identity",
            ty: "\"call\" | \"call-and-result\" | \"unanswered-call\"",
            default: "\"call\"",
            doc: "What counts as the same: tool + input (results ignored, counted on the call), tool + input + result (counted on the result; warning only), or tool + input counted only while no result comes (every tool result empties the window: for a host that forwards calls but not their results).",
        },
        OptionDoc {
            name: "window.critical-threshold",
            ty: "0 or integer > `threshold`, at most `size`",
            default: "0",
            doc: "Occurrences that block the call whatever `level` says (a window counted on the call); `0`: none.",
        },
        OptionDoc {
            name: "openclaw.enabled",
            ty: "bool",
            default: "false",
            doc: "OpenClaw's generic thresholds (writing the `openclaw` table turns them on unless this is `false`).",
        },
        OptionDoc {
            name: "openclaw.history-size",
            ty: "integer 1-512",
            default: "30",
            doc: "Call records kept (OpenClaw `historySize`).",
        },
        OptionDoc {
            name: "openclaw.warning-threshold",
            ty: "integer < `critical-threshold`",
            default: "10",
            doc: "Recent same calls that warn (OpenClaw `warningThreshold`).",
        },
        OptionDoc {
            name: "openclaw.critical-threshold",
            ty: "positive integer",
            default: "20",
            doc: "Identical newest outcomes that block (OpenClaw `criticalThreshold`).",
        },
        OptionDoc {
            name: "openclaw.skip-known-polls",
            ty: "bool",
            default: "true",
            doc: "Leave the calls of kind `poll` in the tools table (`command_status`, `process` poll and log, …) to `known-poll-no-progress`.",
        },
        OptionDoc {
            name: "near-duplicate.enabled",
            ty: "bool",
            default: "false",
            doc: "The near-duplicate streak (writing the `near-duplicate` table turns it on unless this is `false`).",
        },
        OptionDoc {
            name: "near-duplicate.similarity",
            ty: "number in (0, 1]",
            default: "0.7",
            doc: "Estimated Jaccard similarity of two consecutive results' shingle sets at or above which they are near-duplicates (used in thousandths).",
        },
        OptionDoc {
            name: "near-duplicate.warning-threshold",
            ty: "integer >= 3",
            default: "4",
            doc: "Warn on the N-th consecutive call of the same tool and arguments after N-1 near-duplicate results.",
        },
        OptionDoc {
            name: "near-duplicate.critical-threshold",
            ty: "0 or integer > `warning-threshold`",
            default: "8",
            doc: "Block from the N-th consecutive call (sticky); `0` never blocks.",
        },
        OptionDoc {
            name: "near-duplicate.failure-critical-threshold",
            ty: "0 or integer > `warning-threshold`",
            default: "0",
            doc: "Block from the N-th consecutive call when every result of the streak was a failure (flagged by the host, or an error message); `0` never blocks on that ground.",
        },
        OptionDoc {
            name: "near-duplicate.count-empty-results",
            ty: "bool",
            default: "true",
            doc: "Empty results count for this rule (`false`: `ignore-empty-results` decides).",
        },
        OptionDoc {
            name: "near-duplicate.recurrence-window",
            ty: "integer 0-64",
            default: "8",
            doc: "Warn one call earlier when the same call also came before the streak within this many recent calls; `0` turns that off.",
        },
        OptionDoc {
            name: "near-duplicate.skip-known-polls",
            ty: "bool",
            default: "true",
            doc: "Leave polling calls out of the near-duplicate streak: their output advancing a little is progress.",
        },
        OptionDoc {
            name: "similar-calls.enabled",
            ty: "bool",
            default: "false",
            doc: "The similar-calls streak (writing the table turns it on unless this is `false`).",
        },
        OptionDoc {
            name: "similar-calls.similarity",
            ty: "number in (0, 1]",
            default: "0.8",
            doc: "Jaccard similarity of two calls' argument token sets at or above which they are alike.",
        },
        OptionDoc {
            name: "similar-calls.warning-threshold",
            ty: "integer >= 3",
            default: "6",
            doc: "Warn on the N-th alike call in a row whose results kept one shape without progress.",
        },
        OptionDoc {
            name: "similar-calls.empty-warning-threshold",
            ty: "integer >= 3",
            default: "4",
            doc: "The same, when every result of the streak was empty.",
        },
        OptionDoc {
            name: "similar-calls.critical-threshold",
            ty: "0 or integer > `similar-calls.warning-threshold`",
            default: "0",
            doc: "Block the N-th alike call of a warned streak whose results were not empty (the agent went on after the warning); `0` never blocks. An empty streak only warns.",
        },
        OptionDoc {
            name: "similar-calls.fruitless-warning-threshold",
            ty: "0 or integer >= 4",
            default: "6",
            doc: "Warn on the N-th search in a row, by any tool and in any words, for one thing (a term all of them share) that found nothing; `0` turns this off. It only warns.",
        },
        OptionDoc {
            name: "rereads.enabled",
            ty: "bool",
            default: "false",
            doc: "The re-read rule (writing the table turns it on unless this is `false`).",
        },
        OptionDoc {
            name: "rereads.warning-threshold",
            ty: "integer >= 3",
            default: "4",
            doc: "Warn when a call that only looks (reads, lists, searches) got the same answer this many times within the window, with only looks between. It only warns.",
        },
        OptionDoc {
            name: "rereads.window",
            ty: "integer from `rereads.warning-threshold` to 64",
            default: "12",
            doc: "How many of the newest looks are searched; a call that does anything else (an edit, a command that acts, a poll, a wait, an unknown tool) empties it.",
        },
        OptionDoc {
            name: "polls.warning-threshold",
            ty: "positive integer",
            default: "10",
            doc: "With a `polls` table, the streak warns on a polling call only after this many identical results.",
        },
        OptionDoc {
            name: "polls.critical-threshold",
            ty: "integer > `polls.warning-threshold`",
            default: "20",
            doc: "... and blocks the N-th identical polling call. Without the table, polls count like any call (the seeds' rule).",
        },
    ],
    // pi-loop-guard's variables, under their own names.
    env: &[
        EnvVar {
            var: "LOOP_GUARD_WARN_THRESHOLD",
            key: "warning-threshold",
            kind: EnvKind::PositiveInt,
        },
        EnvVar {
            var: "LOOP_GUARD_BLOCK_THRESHOLD",
            key: "critical-threshold",
            kind: EnvKind::PositiveInt,
        },
        EnvVar {
            var: "LOOP_GUARD_IGNORE_TOOLS",
            key: "ignore-tools",
            kind: EnvKind::List,
        },
        EnvVar {
            var: "LOOP_GUARD_IGNORE_ERRORS",
            key: "ignore-errors",
            kind: EnvKind::Bool,
        },
    ],
    presets: &[],
    openclaw: OpenClawImport {
        master: MasterSwitch::Follows,
        toggle: Some("genericRepeat"),
        keys: &[
            ("historySize", "openclaw.history-size"),
            ("warningThreshold", "openclaw.warning-threshold"),
            ("criticalThreshold", "openclaw.critical-threshold"),
        ],
    },
    // The other detectors' spelling of the two tiers; the old keys are still read.
    renamed: &[
        Renamed {
            old: "warn-threshold",
            new: "warning-threshold",
        },
        Renamed {
            old: "block-threshold",
            new: "critical-threshold",
        },
        Renamed {
            old: "near-duplicate.warn-threshold",
            new: "near-duplicate.warning-threshold",
        },
        Renamed {
            old: "near-duplicate.block-threshold",
            new: "near-duplicate.critical-threshold",
        },
        Renamed {
            old: "similar-calls.warn-threshold",
            new: "similar-calls.warning-threshold",
        },
        Renamed {
            old: "similar-calls.empty-warn-threshold",
            new: "similar-calls.empty-warning-threshold",
        },
        Renamed {
            old: "polls.warn-threshold",
            new: "polls.warning-threshold",
        },
        Renamed {
            old: "polls.block-threshold",
            new: "polls.critical-threshold",
        },
    ],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
