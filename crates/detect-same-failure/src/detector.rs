//! The same-failure state machine.
//!
//! One run of consecutive failing results of one tool is tracked: its tool, the normalised
//! fingerprint of its error, the first arguments seen (to know whether they ever changed), its
//! length and its evidence. A result that is not a failure, a different error, a result or a
//! call of another tool, or a new user turn ends the run. Every event costs O(1): a failure is
//! recognised from the error flag or from the first [`SCAN_CHARS`] characters of the content.

use crate::{Settings, NAME};
use loopguard_core::{
    truncate_chars, Cx, Detector, Event, EventKind, Finding, Fingerprint, Interest, Level,
    ResultInfo, MAX_EVIDENCE,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How many characters of an unflagged result are inspected for a failure pattern.
pub const SCAN_CHARS: usize = 300;
/// The longest quoted error line, in characters.
const SAMPLE_CHARS: usize = 200;
/// The longest stored tool name, in characters (longer names are compared in full through
/// their fingerprint).
const TOOL_CHARS: usize = 120;

/// Text that, at the start of a result, marks a usage complaint.
const PREFIXES: [&str; 2] = ["Usage:", "usage:"];
/// Text that, within the first [`SCAN_CHARS`] characters of a result, marks a failure.
const MARKERS: [&str; 16] = [
    "error:",
    "Error:",
    "ERROR",
    "command not found",
    "No such file or directory",
    "not found",
    "Traceback (most recent call last)",
    "Exception",
    "Invalid",
    "invalid",
    "failed",
    "denied",
    "cannot",
    "Cannot",
    "Unable to",
    "unable to",
];

/// The first `max` characters of `s` (a prefix on a character boundary).
fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => s.get(..i).unwrap_or(s),
        None => s,
    }
}

/// Whether a result without the error flag reads like a failure: its first [`SCAN_CHARS`]
/// characters start with `Usage:` / `usage:` or contain a failure marker (`error:`, `Error:`,
/// `ERROR`, `command not found`, `No such file or directory`, `not found`, a Python
/// traceback, `Exception`, `invalid`, `failed`, `denied`, `cannot`, `unable to`). Anything
/// beyond the first [`SCAN_CHARS`] characters is ignored, so a long log that mentions an error
/// somewhere in its middle is not a failure.
///
/// ```
/// use loopguard_detect_same_failure::looks_like_failure;
/// assert!(looks_like_failure("Usage: edit <start_line>:<end_line>"));
/// assert!(looks_like_failure("bash: line 1: foo: command not found"));
/// assert!(!looks_like_failure("Found 3 matches for \"cause\""));
/// let log = format!("{}\nerror: late", "test ok\n".repeat(60));
/// assert!(!looks_like_failure(&log));
/// ```
pub fn looks_like_failure(content: &str) -> bool {
    let head = prefix_chars(content, SCAN_CHARS);
    let start = head.trim_start();
    PREFIXES.iter().any(|p| start.starts_with(p)) || MARKERS.iter().any(|m| head.contains(m))
}

/// The first non-empty line of the error (within the scanned prefix), for the message.
fn error_line(content: &str) -> String {
    let head = prefix_chars(content, SCAN_CHARS);
    let line = head
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    truncate_chars(line, SAMPLE_CHARS)
}

/// A run of identical failures of one tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Run {
    /// The tool's name (cut to [`TOOL_CHARS`] characters, for messages and keys).
    tool: String,
    /// The fingerprint of the full tool name (what is compared).
    tool_fp: Fingerprint,
    /// The normalised fingerprint of the repeated error.
    error_fp: Fingerprint,
    /// The arguments of the run's first call.
    first_args: Fingerprint,
    /// Some call of the run had other arguments than the first.
    varied: bool,
    /// Failures in the run.
    count: u32,
    /// Sequence number of the run's first result: each run is its own loop (its own key).
    start: u64,
    /// Sequence numbers of the run's results, the newest [`MAX_EVIDENCE`].
    evidence: VecDeque<u64>,
    /// The first line of the error, for the message.
    error: String,
    /// A warning was reported for this run.
    warned: bool,
}

/// Everything that changes while the detector runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    run: Option<Run>,
}

/// The `same-failure` detector (LG010).
#[derive(Debug)]
pub struct SameFailure {
    settings: Settings,
    state: State,
}

fn tool_fp(tool: &str) -> Fingerprint {
    Fingerprint::of_bytes(tool.as_bytes())
}

impl SameFailure {
    /// A detector with these settings.
    pub fn new(settings: Settings) -> SameFailure {
        SameFailure {
            settings,
            state: State::default(),
        }
    }

    /// The settings in use.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    fn is_failure(&self, content: &str, is_error: bool) -> bool {
        is_error || (self.settings.count_unflagged_failures && looks_like_failure(content))
    }

    /// Whether the run has reached the critical threshold (with varied arguments).
    fn armed(&self, run: &Run) -> bool {
        self.settings.critical_threshold > 0
            && run.varied
            && run.count >= self.settings.critical_threshold
    }

    fn key(run: &Run) -> String {
        format!(
            "{NAME}:{}:{:016x}:{}",
            run.tool,
            run.error_fp.short(),
            run.start
        )
    }

    /// The finding for `run`: `{lead}: <what happened>. {advice}`.
    fn finding(run: &Run, level: Level, lead: &str, advice: &str) -> Finding {
        let error = if run.error.is_empty() {
            "(an empty error)".to_owned()
        } else {
            format!("\"{}\"", run.error)
        };
        let message = format!(
            "{lead}: Tool `{}` failed {} times in a row with the same error although the arguments changed: {error}. {advice}",
            run.tool, run.count
        );
        Finding::new(NAME, level, run.count, SameFailure::key(run), message)
            .with_evidence(run.evidence.iter().copied().collect())
            .with_tool(run.tool.clone())
            .with_sample(&run.error)
    }

    fn on_result(&mut self, info: &ResultInfo, content: &str, is_error: bool, cx: &mut Cx<'_>) {
        if !self.is_failure(content, is_error) {
            self.state.run = None;
            return;
        }
        let tool = info.call.tool.as_str();
        let tfp = tool_fp(tool);
        let seq = cx.seq();
        match self.state.run.as_mut() {
            Some(run) if run.tool_fp == tfp && run.error_fp == info.norm_fp => {
                run.count = run.count.saturating_add(1);
                if info.call.args_fp != run.first_args {
                    run.varied = true;
                }
                if run.evidence.len() >= MAX_EVIDENCE {
                    run.evidence.pop_front();
                }
                run.evidence.push_back(seq);
            }
            _ => {
                self.state.run = Some(Run {
                    tool: truncate_chars(tool, TOOL_CHARS),
                    tool_fp: tfp,
                    error_fp: info.norm_fp,
                    first_args: info.call.args_fp,
                    varied: false,
                    count: 1,
                    start: seq,
                    evidence: VecDeque::from([seq]),
                    error: error_line(content),
                    warned: false,
                });
            }
        }
        let Some(run) = self.state.run.as_ref() else {
            return;
        };
        if run.warned || !run.varied || run.count < self.settings.warning_threshold {
            return;
        }
        cx.report(SameFailure::finding(
            run,
            Level::Warning,
            "WARNING",
            "Retrying variants will not help: stop, read the usage or error message and fix the cause, or report the blocker.",
        ));
        if let Some(run) = self.state.run.as_mut() {
            run.warned = true;
        }
    }

    fn on_call(&mut self, tool: &str, cx: &mut Cx<'_>) {
        let Some(run) = self.state.run.as_ref() else {
            return;
        };
        if run.tool_fp != tool_fp(tool) {
            // Another tool in between: the model did something else.
            self.state.run = None;
            return;
        }
        if !self.armed(run) {
            return;
        }
        cx.report(SameFailure::finding(
            run,
            Level::Critical,
            "CRITICAL",
            "This call is blocked. Stop retrying variants of it: read the usage or error message and fix the cause, or report the blocker.",
        ));
    }
}

impl Detector for SameFailure {
    fn name(&self) -> &'static str {
        NAME
    }

    fn interest(&self) -> Interest {
        Interest::of(&[EventKind::User, EventKind::ToolCall, EventKind::ToolResult])
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::User { .. } if cx.is_new_turn() => self.state.run = None,
            Event::ToolCall { tool, .. } => {
                let tool = cx.call().map_or(*tool, |c| c.tool.as_str());
                self.on_call(tool, cx);
            }
            Event::ToolResult {
                content, is_error, ..
            } => {
                if let Some(info) = cx.result() {
                    self.on_result(info, content, *is_error, cx);
                }
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}
