//! The same-failure state machine.
//!
//! One run of consecutive failing results of one tool is tracked: its tool, the normalised
//! fingerprint of its error, the first arguments seen (to know whether they ever changed), its
//! length and its evidence. A result that is not a failure, a different error, a result or a
//! call of another tool, or a new user turn ends the run. Every event costs O(1): a failure is
//! recognised from the error flag or from the first [`SCAN_CHARS`] characters of the content.

use crate::FailureIdentity;
use crate::{Settings, NAME};
use loopguard_core::shape::{self, Trend};
use loopguard_core::{
    truncate_chars, Cx, Detector, Event, Facts, Finding, Fingerprint, FixedMap, Level, ResultInfo,
    RunScope, MAX_EVIDENCE,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How many characters of an unflagged result are inspected for a failure pattern.
pub const SCAN_CHARS: usize = shape::ERROR_SCAN_CHARS;
/// The longest quoted error line, in characters.
const SAMPLE_CHARS: usize = 200;
/// The longest stored tool name, in characters (longer names are compared in full through
/// their fingerprint).
const TOOL_CHARS: usize = 120;

/// Whether a result without the error flag is an error message
/// ([`loopguard_core::shape::looks_like_error`]): its first line starts like one (`Usage:`,
/// `error:`, `ERROR`, a traceback, `SomeException: …`) or is a program's diagnostic
/// (`bash: foo: command not found`), an editor or linter rejected the call, or a short result
/// says `… not found`. Only the first [`SCAN_CHARS`] characters are read, so a long log that
/// mentions an error somewhere in its middle is not a failure, and neither is a listing
/// whose lines name an exception class.
///
/// ```
/// use loopguard_detect_same_failure::looks_like_failure;
/// assert!(looks_like_failure("Usage: edit <start_line>:<end_line>"));
/// assert!(looks_like_failure("bash: line 1: foo: command not found"));
/// assert!(!looks_like_failure("Found 3 matches for \"cause\""));
/// assert!(!looks_like_failure("Found 1 matches for \"MismatchedInputException\" in /repo:\n/repo/src/main/java/MismatchedInputException.java"));
/// let log = format!("{}\nerror: late", "test ok\n".repeat(60));
/// assert!(!looks_like_failure(&log));
/// ```
pub fn looks_like_failure(content: &str) -> bool {
    shape::looks_like_error(content)
}

/// The line of the error that says what failed ([`shape::error_headline`]), for the message.
fn error_line(content: &str) -> String {
    truncate_chars(shape::error_headline(content), SAMPLE_CHARS)
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
    /// The shape of the run's first error with nothing of its call cut out, when that call's
    /// echo was cut from `error_fp`: a failure printed word for word the same by a call
    /// written another way (`cd /srv/app && python3 app.py` after `python3 app.py`, whose
    /// traceback prints `/srv/app/app.py`) is the same failure, though the echoes cut differ.
    #[serde(default)]
    plain_fp: Option<Fingerprint>,
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

/// How many issued calls are remembered until their results arrive.
const MAX_PENDING: usize = 32;
/// How many recurring-failure keys warned in this turn are remembered.
const MAX_WARNED: usize = 64;

/// What the detector keeps of a call until its result arrives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Pending {
    /// The call reads a file's text (its content is never the call's error).
    reads: bool,
    /// The call is a search (`grep`): its exit status 1 only means nothing matched.
    #[serde(default)]
    search: bool,
    /// The tool, and for a shell call the program it runs: a success of the same family
    /// stops the recurring rule counting the family's earlier failures.
    #[serde(default)]
    family: u64,
    /// The call's sequence number: a result answers the call the bus paired it with (the
    /// bus owns pairing, also for a host that numbers its results its own way).
    #[serde(default)]
    seq: Option<u64>,
}

/// The recurring rule: the newest `recurring-window` tool results, each with its failure
/// key (`None`: not a failure, or no longer counted), its tool, and a count per key. A
/// success of a tool stops its earlier failures from counting.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Recurring {
    window: VecDeque<(Option<u64>, u64, u64)>,
    counts: FixedMap<u64, u32>,
    /// The numbers of each key's failures: a failure whose numbers move steadily (a count
    /// of errors falling) is progress, and its earlier occurrences stop counting.
    trends: FixedMap<u64, Trend>,
    warned: VecDeque<u64>,
}

impl Recurring {
    fn clear(&mut self) {
        *self = Recurring::default();
    }

    /// Stops counting the failures of a call family in the window (it just succeeded).
    fn succeeded(&mut self, tool: u64) {
        if self.counts.is_empty() {
            return;
        }
        for e in self.window.iter_mut() {
            if e.1 == tool {
                if let Some(k) = e.0.take() {
                    self.counts.remove(&k);
                    self.trends.remove(&k);
                }
            }
        }
    }

    /// Pushes one result (its failure key and tool), evicting beyond `cap`; returns the
    /// key's count.
    fn push(&mut self, key: Option<u64>, tool: u64, numbers: &[u64], seq: u64, cap: usize) -> u32 {
        if let Some(k) = key {
            let progress = self.trends.entry(k).or_default().step(numbers);
            if progress {
                for e in self.window.iter_mut() {
                    if e.0 == Some(k) {
                        e.0 = None;
                    }
                }
                self.counts.remove(&k);
            }
        }
        self.window.push_back((key, tool, seq));
        if let Some(k) = key {
            *self.counts.entry(k).or_insert(0) += 1;
        }
        while self.window.len() > cap.max(1) {
            if let Some((Some(old), _, _)) = self.window.pop_front() {
                if let Some(n) = self.counts.get_mut(&old) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.counts.remove(&old);
                        self.trends.remove(&old);
                    }
                }
            }
        }
        key.and_then(|k| self.counts.get(&k).copied()).unwrap_or(0)
    }

    /// (results spanned from the key's oldest occurrence to the newest result, evidence).
    fn span(&self, key: u64) -> (usize, Vec<u64>) {
        let first = self.window.iter().position(|e| e.0 == Some(key));
        let span = first.map_or(0, |i| self.window.len() - i);
        let seqs: Vec<u64> = self
            .window
            .iter()
            .filter(|e| e.0 == Some(key))
            .map(|e| e.2)
            .collect();
        let skip = seqs.len().saturating_sub(MAX_EVIDENCE);
        (span, seqs.into_iter().skip(skip).collect())
    }
}

/// Everything that changes while the detector runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    run: Option<Run>,
    #[serde(default)]
    pending: VecDeque<Pending>,
    #[serde(default)]
    recurring: Recurring,
}

/// The `same-failure` detector (LG010).
#[derive(Debug)]
pub struct SameFailure {
    settings: Settings,
    state: State,
    /// Fingerprints already computed (not state: a pure cache, rebuilt on demand).
    fps: FpTable,
}

fn tool_fp(tool: &str) -> Fingerprint {
    Fingerprint::of_bytes(tool.as_bytes())
}

/// The tool and, for a shell call, the program it runs (the rule [`FpTable::family`]
/// caches).
#[cfg(test)]
fn family(tool: &str, args: &serde_json::Value) -> u64 {
    match shape::program(args) {
        Some(p) => Fingerprint::combine(&[tool.as_bytes(), p.as_bytes()]).short(),
        None => tool_fp(tool).short(),
    }
}

/// How many entries each table of [`FpTable`] holds before it is emptied. A session uses a
/// few dozen tools and programs, so the tables stay warm; one that uses more only pays
/// the hashing again.
const FP_TABLE_CAP: usize = 256;

/// Fingerprints of tool names and of (tool, program) families, computed once each: every
/// event needs them and a SHA-256 costs far more than a table lookup. The values are
/// exactly [`tool_fp`]'s and the family rule's; only the cost changes.
#[derive(Debug, Default)]
struct FpTable {
    tools: FixedMap<String, Fingerprint>,
    /// Keyed by the tool's length (8 bytes, little-endian), the tool and the program: the
    /// length makes the split between tool and program unambiguous (`ab`+`c` ≠ `a`+`bc`).
    families: FixedMap<Vec<u8>, u64>,
    /// The key being looked up, reused from call to call.
    key: Vec<u8>,
}

impl FpTable {
    /// [`tool_fp`] of `tool`.
    fn tool(&mut self, tool: &str) -> Fingerprint {
        if let Some(fp) = self.tools.get(tool) {
            return *fp;
        }
        let fp = tool_fp(tool);
        if self.tools.len() >= FP_TABLE_CAP {
            self.tools.clear();
        }
        self.tools.insert(tool.to_owned(), fp);
        fp
    }

    /// The tool and, for a shell call, the program it runs (`program`, as
    /// [`shape::program`] reads it): a success of the same family stops the recurring rule
    /// counting the family's earlier failures.
    fn family(&mut self, tool: &str, program: Option<&str>) -> u64 {
        let Some(program) = program else {
            return self.tool(tool).short();
        };
        self.key.clear();
        self.key
            .extend_from_slice(&(tool.len() as u64).to_le_bytes());
        self.key.extend_from_slice(tool.as_bytes());
        self.key.extend_from_slice(program.as_bytes());
        if let Some(f) = self.families.get(self.key.as_slice()) {
            return *f;
        }
        let f = Fingerprint::combine(&[tool.as_bytes(), program.as_bytes()]).short();
        if self.families.len() >= FP_TABLE_CAP {
            self.families.clear();
        }
        self.families.insert(self.key.clone(), f);
        f
    }
}

impl SameFailure {
    /// A detector with these settings.
    pub fn new(settings: Settings) -> SameFailure {
        SameFailure {
            settings,
            state: State::default(),
            fps: FpTable::default(),
        }
    }

    /// The settings in use.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    fn is_failure(&self, content: &str, is_error: bool, reads: bool, cx: &Cx<'_>) -> bool {
        if is_error {
            return true;
        }
        if !self.settings.count_unflagged_failures {
            return false;
        }
        if reads {
            // The text of a file being read is never the call's own error.
            return shape::is_read_failure(content);
        }
        cx.looks_like_error(content)
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
        // The call the bus paired the result with (none for an orphan).
        let pending = match self
            .state
            .pending
            .iter()
            .position(|p| !info.orphan && p.seq == Some(info.call.seq))
        {
            Some(i) => self.state.pending.remove(i),
            None => None,
        };
        let reads = pending.as_ref().is_some_and(|p| p.reads);
        let fam = match pending.as_ref() {
            Some(p) => p.family,
            None => self.fps.tool(&info.call.tool).short(),
        };
        let no_match = pending.as_ref().is_some_and(|p| p.search) && shape::is_no_match(content);
        let seq = cx.seq();
        let cap = self.settings.recurring_window as usize;
        let recurring_on = self.settings.recurring_threshold > 0;
        let tool = info.call.tool.as_str();
        if no_match || !self.is_failure(content, is_error, reads, cx) {
            self.state.run = None;
            if recurring_on {
                // A success of the tool: its earlier failures no longer recur.
                self.state.recurring.succeeded(fam);
                self.state.recurring.push(None, fam, &[], seq, cap);
            }
            return;
        }
        let tfp = self.fps.tool(tool);
        // The bus's shape carries the echo of the call it paired the result with: right when
        // this detector still holds that call, or when neither knows the call.
        let echo_cut = pending.is_some() && !info.orphan;
        let (error_fp, numbers) = match self.settings.failure_identity {
            FailureIdentity::Exact => (info.norm_fp, Vec::new()),
            FailureIdentity::Shape => {
                let usable = pending.is_some() || info.orphan;
                let s = cx.result_shape_or_plain(usable, content);
                (s.fp, s.numbers.clone())
            }
        };
        // The shape with nothing cut, read only for a run that the echoed shape would end,
        // and at most once.
        let shaped = self.settings.failure_identity == FailureIdentity::Shape && echo_cut;
        let plain_fp = std::cell::OnceCell::new();
        let plain = |cx: &Cx<'_>| {
            *plain_fp.get_or_init(|| shaped.then(|| cx.result_shape_or_plain(false, content).fp))
        };
        if recurring_on {
            let key = Fingerprint::combine(&[tfp.as_bytes(), error_fp.as_bytes()]).short();
            let count = self
                .state
                .recurring
                .push(Some(key), fam, &numbers, seq, cap);
            if count >= self.settings.recurring_threshold
                && !self.state.recurring.warned.contains(&key)
            {
                if self.state.recurring.warned.len() >= MAX_WARNED {
                    self.state.recurring.warned.pop_front();
                }
                self.state.recurring.warned.push_back(key);
                let (span, evidence) = self.state.recurring.span(key);
                let error = error_line(content);
                let quoted = if error.is_empty() {
                    "(an empty error)".to_owned()
                } else {
                    format!("\"{error}\"")
                };
                let tool_name = truncate_chars(tool, TOOL_CHARS);
                let message = format!(
                    "WARNING: Tool `{tool_name}` failed {count} times in the last {span} tool results with the same error: {quoted}. Retrying will not help: stop, read the error message and fix the cause, or report the blocker."
                );
                cx.report(
                    Finding::new(
                        NAME,
                        Level::Warning,
                        count,
                        format!("{NAME}:recurring:{tool_name}:{key:016x}"),
                        message,
                    )
                    .with_evidence(evidence)
                    .with_tool(tool_name)
                    .with_sample(&error),
                );
            }
        }
        let same_run = self.state.run.as_ref().is_some_and(|run| {
            run.tool_fp == tfp
                && (run.error_fp == error_fp || run.plain_fp.is_some_and(|p| plain(cx) == Some(p)))
        });
        match self.state.run.as_mut().filter(|_| same_run) {
            Some(run) => {
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
                    error_fp,
                    plain_fp: plain(cx),
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
        let key = Fingerprint::combine(&[run.tool_fp.as_bytes(), run.error_fp.as_bytes()]).short();
        if self.state.recurring.warned.contains(&key) {
            // The recurring rule already warned about this very failure in this turn.
            if let Some(run) = self.state.run.as_mut() {
                run.warned = true;
            }
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

    fn remember_call(&mut self, tool: &str, args: &serde_json::Value, seq: Option<u64>) {
        if self.state.pending.len() >= MAX_PENDING {
            self.state.pending.pop_front();
        }
        let facts = shape::command_facts(tool, args);
        self.state.pending.push_back(Pending {
            reads: facts.reads,
            search: facts.search,
            family: self.fps.family(tool, facts.program),
            seq,
        });
    }

    fn on_call(&mut self, tool: &str, cx: &mut Cx<'_>) {
        if self.state.run.is_none() {
            return;
        }
        let tfp = self.fps.tool(tool);
        let Some(run) = self.state.run.as_ref() else {
            return;
        };
        if run.tool_fp != tfp {
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
    loopguard_core::detector_basics!(name: NAME, interest: [User, ToolCall, ToolResult]);

    fn facts(&self) -> Facts {
        match self.settings.failure_identity {
            FailureIdentity::Shape => Facts::RESULT_SHAPE,
            FailureIdentity::Exact => Facts::NORMALIZED_RESULT,
        }
    }

    fn reset_run(&mut self, scope: &RunScope<'_>) {
        if scope.new_turn {
            self.state.run = None;
            self.state.recurring.clear();
        }
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::ToolCall { tool, args, .. } => {
                let seq = cx.call().map(|c| c.seq);
                self.remember_call(tool, args, seq);
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Tools and programs from a small alphabet, so that the tables see the same names
    /// again, names whose concatenations collide (`ab`+`c`, `a`+`bc`), and more distinct
    /// names than they hold.
    fn name() -> impl Strategy<Value = String> {
        "[abc/]{0,3}"
    }

    proptest! {
        /// The tables answer exactly what the straightforward rules compute.
        #[test]
        fn the_table_answers_the_rules(
            calls in proptest::collection::vec((name(), name(), any::<bool>()), 1..600),
        ) {
            let mut t = FpTable::default();
            for (tool, program, shell) in &calls {
                let args = if *shell {
                    json!({"command": format!("{program} x")})
                } else {
                    json!({"path": program})
                };
                prop_assert_eq!(t.tool(tool), tool_fp(tool));
                prop_assert_eq!(t.family(tool, shape::program(&args)), family(tool, &args));
                prop_assert!(t.tools.len() <= FP_TABLE_CAP && t.families.len() <= FP_TABLE_CAP);
            }
        }
    }

    #[test]
    fn the_table_tells_split_names_apart() {
        let mut t = FpTable::default();
        let (a, b) = (json!({"command": "c x"}), json!({"command": "bc x"}));
        assert_eq!(t.family("ab", shape::program(&a)), family("ab", &a));
        assert_eq!(t.family("a", shape::program(&b)), family("a", &b));
        assert_ne!(family("ab", &a), family("a", &b));
    }

    #[test]
    fn the_table_is_emptied_when_full() {
        let mut t = FpTable::default();
        for i in 0..FP_TABLE_CAP * 2 + 3 {
            let tool = format!("tool{i}");
            assert_eq!(t.tool(&tool), tool_fp(&tool));
            let args = json!({"command": format!("prog{i} -x")});
            assert_eq!(t.family(&tool, shape::program(&args)), family(&tool, &args));
        }
        assert!(t.tools.len() <= FP_TABLE_CAP);
        assert!(t.families.len() <= FP_TABLE_CAP);
    }
}
