//! The ping-pong state machine.
//!
//! Two tiers, both judged on the proposed `ToolCall`, before it is recorded:
//!
//! 1. **Alternation (OpenClaw's ping-pong).** A run-scoped history of the last
//!    `history-size` calls. The alternating tail is the longest suffix going last, other,
//!    last, other… (two distinct calls); the proposed call must be `other`. Count = tail
//!    length + 1. Warning at `warning-threshold` whatever the results; critical at
//!    `critical-threshold` only with no-progress evidence: every tail call has a result and
//!    each side's results are identical.
//! 2. **Cycles (loopguard's own).** Cycles of 2 to `max-period` calls whose results repeat
//!    identically (see [`crate::window`]); a warning once the cycle went round
//!    `cycle-warning-repeats` times and the proposed call continues it, critical after
//!    `cycle-critical-repeats`.
//!
//! Both are kept incrementally: the tail length and the evidence run are running counts,
//! and the cycle windows are updated with one insertion and one removal each. Results
//! may arrive out of order (parallel batches); calls are folded into the running counts in
//! call order, once they and every earlier call are resolved. A call still without result
//! when a call of a later batch arrives is resolved as "no result", which breaks evidence.

use crate::window::{Cycles, Resolved, Window};
use crate::{CycleIdentity, Settings, NAME};
use loopguard_core::shape::{self, ResultShape, Trend};
use loopguard_core::{
    Cx, Detector, Event, Facts, Finding, Fingerprint, FixedMap, Level, RunScope, StateError,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// How many call shapes' result trends are remembered (all are forgotten beyond).
const MAX_TRENDS: usize = 64;

/// One recorded call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    call: Fingerprint,
    tool: String,
    batch: u64,
    /// Seq of the `ToolCall` (or of the result, for a result whose call was never seen).
    seq: u64,
    /// `None` while pending; `Some(None)` when resolved without a result.
    result: Option<Option<Fingerprint>>,
    /// With `cycle-identity = "shape"`: the call's shape and the result's shape (a unique
    /// value when the result progressed; the bus removes the call's echo from it).
    #[serde(default)]
    shape: Option<ShapeRec>,
    /// The session's tool results before this record ([`Cx::results`]): the same count at
    /// the first record of an alternation and at the proposed call means no result came
    /// all along (a host that sends none).
    #[serde(default)]
    answered: u64,
}

/// The shapes of one record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ShapeRec {
    call: u64,
    result: Option<u64>,
}

/// Everything that changes while the detector runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    /// The run id the history belongs to.
    scope: Option<String>,
    /// The newest `history-size` records (and any older unresolved ones' successors).
    history: VecDeque<Record>,
    /// Absolute index of `history[0]`.
    base: u64,
    /// Absolute index of the first record not yet folded into the running counts.
    frontier: u64,
    /// Consecutive records, newest first, with call\[i\] == call\[i-2\].
    alt_run: u32,
    /// Consecutive folded records, newest first, with results and (call, result)\[i\] ==
    /// (call, result)\[i-2\].
    ev_run: u32,
    cycles: Cycles,
    /// The key of the cycle warned about in the current episode.
    warned: Option<String>,
    /// The batch of the last recorded call: pending calls of earlier batches were already
    /// resolved when its first call arrived.
    last_batch: Option<u64>,
    /// Per call shape, the numbers of its results (progress between rounds).
    #[serde(default)]
    trends: FixedMap<u64, Trend>,
    /// Per call shape, the exact call and the normalised result of its newest answer: a call
    /// that differs from it only in its numbers and is answered otherwise addressed another
    /// object (progress between rounds).
    #[serde(default)]
    objects: FixedMap<u64, (u64, u64)>,
    /// The previous answer addressed another object than its call shape's previous call.
    #[serde(default)]
    other_object: bool,
}

/// The `ping-pong` detector (LG003).
#[derive(Debug)]
pub struct PingPong {
    settings: Settings,
    state: State,
    /// Buffers of forgotten records and trends, reused for new ones (not state).
    spare: Spare,
}

/// Buffers freed by the history's evictions and the trends' clearing, reused instead of
/// allocating new ones for every call.
#[derive(Debug, Default)]
struct Spare {
    /// Tool-name buffers of evicted records.
    tools: Vec<String>,
    /// Trends of forgotten call shapes, restarted ([`Trend::new`]'s state, buffers kept).
    trends: Vec<Trend>,
}

impl Spare {
    /// `tool` in a reused buffer.
    fn tool(&mut self, tool: &str) -> String {
        let mut s = self.tools.pop().unwrap_or_default();
        s.clear();
        s.push_str(tool);
        s
    }

    /// Keeps an evicted record's tool buffer (at most a history's worth).
    fn keep_tool(&mut self, s: String, cap: usize) {
        if self.tools.len() < cap {
            self.tools.push(s);
        }
    }

    /// A trend with no result yet, in reused buffers.
    fn trend(&mut self) -> Trend {
        self.trends.pop().unwrap_or_default()
    }
}

impl PingPong {
    /// A detector with these settings.
    pub fn new(settings: Settings) -> PingPong {
        let mut d = PingPong {
            settings,
            state: State::default(),
            spare: Spare::default(),
        };
        d.rebuild();
        d
    }

    /// The settings in use.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    fn rebuild(&mut self) {
        let s = self.settings;
        self.state.cycles.rebuild(
            s.max_period,
            s.cycle_warning_repeats,
            s.cycle_critical_repeats,
        );
    }

    fn end(&self) -> u64 {
        self.state.base + self.state.history.len() as u64
    }

    fn get(&self, abs: u64) -> Option<&Record> {
        let i = abs.checked_sub(self.state.base)?;
        self.state.history.get(usize::try_from(i).ok()?)
    }

    /// Appends a record (updating the alternation run) and trims the history.
    fn append(&mut self, rec: Record) {
        let abs = self.end();
        let same_as_two_back = abs
            .checked_sub(2)
            .and_then(|i| self.get(i))
            .is_some_and(|r| r.call == rec.call);
        self.state.alt_run = if same_as_two_back {
            self.state.alt_run.saturating_add(1)
        } else {
            0
        };
        self.state.history.push_back(rec);
        let cap = self.settings.history_size as usize;
        while self.state.history.len() > cap {
            // Fold an evicted record first if it is the next one to fold and resolved;
            // otherwise it is dropped unresolved and folding moves past it.
            if self.state.frontier == self.state.base {
                if let Some(r) = self.state.history.front() {
                    if r.result.is_none() {
                        self.state.history[0].result = Some(None);
                    }
                }
                self.fold();
            }
            if let Some(old) = self.state.history.pop_front() {
                self.spare.keep_tool(old.tool, cap);
            }
            self.state.base += 1;
            self.state.frontier = self.state.frontier.max(self.state.base);
        }
    }

    /// Folds resolved records, in call order, into the evidence run and the cycle windows.
    fn fold(&mut self) {
        while let Some(rec) = self.get(self.state.frontier) {
            let Some(result) = rec.result else { break };
            let abs = self.state.frontier;
            let matches = result.is_some()
                && abs
                    .checked_sub(2)
                    .and_then(|i| self.get(i))
                    .is_some_and(|old| old.call == rec.call && old.result == Some(result));
            let resolved = match &rec.shape {
                Some(sh) => Resolved {
                    call: sh.call,
                    result: result.and(sh.result),
                    seq: rec.seq,
                },
                None => Resolved {
                    call: rec.call.short(),
                    result: result.map(|r| r.short()),
                    seq: rec.seq,
                },
            };
            self.state.ev_run = if matches {
                self.state.ev_run.saturating_add(1)
            } else {
                0
            };
            if self.settings.detect_cycles {
                self.state.cycles.push(resolved);
            }
            self.state.frontier += 1;
        }
    }

    /// Resolves, as "no result", pending calls of batches other than `batch`.
    fn give_up_before(&mut self, batch: u64) {
        if self.state.last_batch.replace(batch) == Some(batch) {
            return;
        }
        let mut changed = false;
        let start = usize::try_from(self.state.frontier.saturating_sub(self.state.base))
            .unwrap_or(usize::MAX);
        for r in self.state.history.iter_mut().skip(start) {
            if r.result.is_none() && r.batch != batch {
                r.result = Some(None);
                changed = true;
            }
        }
        if changed {
            self.fold();
        }
    }

    /// OpenClaw's alternation test for the proposed call: (count, evidence, unanswered,
    /// paired record), `unanswered` when no tool result came since the tail's first call
    /// (`results`: the session's results so far).
    fn alternation(
        &self,
        proposed: &Fingerprint,
        results: u64,
    ) -> Option<(u32, bool, bool, &Record)> {
        let end = self.end();
        let last = self.get(end.checked_sub(1)?)?;
        let other = self.get(end.checked_sub(2)?)?;
        if last.call == other.call || *proposed != other.call {
            return None;
        }
        let len = u32::try_from(self.state.history.len()).unwrap_or(u32::MAX);
        let tail = self.state.alt_run.saturating_add(2).min(len);
        let has = |r: &Record| matches!(r.result, Some(Some(_)));
        let evidence = self.state.frontier == end
            && if tail >= 3 {
                self.state.ev_run >= tail - 2
            } else {
                has(last) && has(other)
            };
        let unanswered = self
            .get(end.saturating_sub(u64::from(tail)))
            .is_some_and(|first| first.answered == results);
        Some((tail + 1, evidence, unanswered, last))
    }

    fn shapes(&self) -> bool {
        self.settings.detect_cycles && self.settings.cycle_identity == CycleIdentity::Shape
    }

    fn on_call(&mut self, args: &Value, cx: &mut Cx<'_>) {
        let Some(call) = cx.call() else { return };
        let shape_rec = self.shapes().then(|| ShapeRec {
            call: shape::args_shape(&call.tool, args).short(),
            result: None,
        });
        self.give_up_before(call.batch);
        let mut finding: Option<Finding> = None;
        let s = self.settings;
        if let Some((count, evidence, unanswered, last)) =
            self.alternation(&call.call_fp, cx.results())
        {
            // No result all along (a host that forwards calls alone): nothing shows progress,
            // nothing shows its absence; the calls alone are judged, as they are when a
            // result repeats.
            let judged = evidence || (unanswered && s.alternation_judges_unanswered);
            let level = if count >= s.critical_threshold && judged {
                Some(Level::Critical)
            } else if count >= s.warning_threshold && (s.alternation_warns_on_progress || judged) {
                Some(Level::Warning)
            } else {
                None
            };
            // The key, message and evidence are built only for a finding: most alternations
            // are short and stay below the thresholds.
            if let Some(level) = level {
                let mut pair = [sig(&last.tool, &last.call), sig(&call.tool, &call.call_fp)];
                pair.sort();
                let key = format!("pingpong:{}", pair.join("|"));
                let skip = self
                    .state
                    .history
                    .len()
                    .saturating_sub(count.saturating_sub(1) as usize);
                let evidence_seqs: Vec<u64> = self
                    .state
                    .history
                    .iter()
                    .skip(skip)
                    .map(|r| r.seq)
                    .collect();
                let message = match level {
                    Level::Critical | Level::Fatal => format!(
                        "CRITICAL: You are alternating between repeated tool-call patterns ({count} consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste."
                    ),
                    Level::Warning => format!(
                        "WARNING: You are alternating between repeated tool-call patterns ({count} consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed."
                    ),
                };
                finding = Some(
                    Finding::new(NAME, level, count, key, message)
                        .with_evidence(evidence_seqs)
                        .with_tool(last.tool.clone()),
                );
            }
        }
        if s.detect_cycles && finding.as_ref().is_none_or(|f| f.level < Level::Critical) {
            let proposed = shape_rec
                .as_ref()
                .map_or_else(|| call.call_fp.short(), |sh| sh.call);
            let tiers = [s.cycle_critical_repeats, s.cycle_warning_repeats];
            match self.state.cycles.find(&tiers, proposed) {
                Some((0, w)) => {
                    let key = cycle_key(&w.calls());
                    let f = cycle_finding(
                        &self.state.cycles,
                        &w,
                        Level::Critical,
                        key.clone(),
                        s.cycle_identity,
                    );
                    self.state.warned = Some(key);
                    finding = Some(f.with_tool(call.tool.clone()));
                }
                Some((_, w)) => {
                    let key = cycle_key(&w.calls());
                    // The cycle tier speaks for this loop: one warning per cycle, which also
                    // replaces the alternation tier's repeated warnings.
                    finding = None;
                    if self.state.warned.as_deref() != Some(key.as_str()) {
                        let f = cycle_finding(
                            &self.state.cycles,
                            &w,
                            Level::Warning,
                            key.clone(),
                            s.cycle_identity,
                        );
                        finding = Some(f.with_tool(call.tool.clone()));
                    }
                    self.state.warned = Some(key);
                }
                None => self.state.warned = None,
            }
        }
        let blocked = finding.as_ref().is_some_and(|f| f.level == Level::Critical);
        if let Some(f) = finding {
            cx.report(f);
        }
        if blocked {
            // A blocked call never runs: it is not recorded (the guard's veto swallows its
            // result, so no detector sees it).
            return;
        }
        let tool = self.spare.tool(&call.tool);
        self.append(Record {
            call: call.call_fp,
            tool,
            batch: call.batch,
            seq: call.seq,
            result: None,
            shape: shape_rec,
            answered: cx.results(),
        });
    }

    /// The result shape of record `sh` for `content`: a unique value (progress) when the
    /// numbers of the call shape's results moved steadily since its previous result, or when
    /// this call and the one answered before it each addressed another object. A call
    /// addresses another object when it differs from its shape's previous call (`exact`, the
    /// call's identity: only in its numbers, as their shapes are equal) and is answered
    /// otherwise (`answer`, the normalised result). Two in a row are a sweep over a family
    /// (`svabd_n_u16_m`, `_x`, `_z` after the `s8` ones); one alone, between calls repeated
    /// with their answers, is the one call of a cycle whose numbers drift (an edit at line
    /// 1412 after 1411, then the same clean-up and test run).
    fn result_shape(
        &mut self,
        sh: &mut ShapeRec,
        rs: &ResultShape,
        seq: u64,
        exact: u64,
        answer: u64,
    ) {
        let trends = &mut self.state.trends;
        if trends.len() >= MAX_TRENDS && !trends.contains_key(&sh.call) {
            // All are forgotten; their buffers serve the next call shapes.
            for (_, mut t) in trends.drain() {
                t.restart();
                self.spare.trends.push(t);
            }
            self.state.objects.clear();
        }
        let steady = trends
            .entry(sh.call)
            .or_insert_with(|| self.spare.trend())
            .step(&rs.numbers);
        let other_object = self
            .state
            .objects
            .insert(sh.call, (exact, answer))
            .is_some_and(|(c, a)| c != exact && a != answer);
        let sweep = other_object && self.state.other_object;
        self.state.other_object = other_object;
        let fp = if steady || sweep {
            Fingerprint::combine(&[rs.fp.as_bytes(), &seq.to_le_bytes()])
        } else {
            rs.fp
        };
        sh.result = Some(fp.short());
    }

    fn on_result(&mut self, content: &str, cx: &mut Cx<'_>) {
        let Some(r) = cx.result() else { return };
        let start = usize::try_from(self.state.frontier.saturating_sub(self.state.base))
            .unwrap_or(usize::MAX);
        let found = if r.orphan {
            None
        } else {
            self.state
                .history
                .iter()
                .skip(start)
                .position(|rec| rec.result.is_none() && rec.seq == r.call.seq)
                .map(|p| p + start)
        };
        let shapes = self.shapes();
        match found {
            Some(i) => {
                let mut sh = self.state.history.get_mut(i).and_then(|rec| {
                    rec.result = Some(Some(r.norm_fp));
                    rec.shape.take()
                });
                if let Some(sh) = sh.as_mut() {
                    // The bus paired the result with this call: its shape has the call's echo.
                    let rs = cx.result_shape_or_plain(true, content);
                    self.result_shape(sh, &rs, cx.seq(), r.call.call_fp.short(), r.norm_fp.short());
                }
                if let Some(rec) = self.state.history.get_mut(i) {
                    rec.shape = sh;
                }
            }
            None => {
                let mut sh = shapes.then(|| ShapeRec {
                    call: r.call.call_fp.short(),
                    result: None,
                });
                if let Some(sh) = sh.as_mut() {
                    // A call this detector no longer holds: its result is taken without an
                    // echo (the bus's shape has none only for an orphan).
                    let rs = cx.result_shape_or_plain(r.orphan, content);
                    self.result_shape(sh, &rs, cx.seq(), r.call.call_fp.short(), r.norm_fp.short());
                }
                let tool = self.spare.tool(&r.call.tool);
                self.append(Record {
                    call: r.call.call_fp,
                    tool,
                    batch: r.call.batch,
                    seq: cx.seq(),
                    result: Some(Some(r.norm_fp)),
                    shape: sh,
                    answered: cx.results(),
                });
            }
        }
        self.fold();
    }
}

/// The cycle tier's finding at `level` for the cycle `w` (found in `cycles`), with its
/// evidence; the message opens with the level and ends with what to do.
fn cycle_finding(
    cycles: &Cycles,
    w: &Window,
    level: Level,
    key: String,
    identity: CycleIdentity,
) -> Finding {
    let count = u32::try_from(w.size + 1).unwrap_or(u32::MAX);
    let (lead, advice) = match level {
        Level::Warning => (
            "WARNING",
            "Nothing changes between rounds: try something different, or stop and report what blocks you.",
        ),
        Level::Critical | Level::Fatal => (
            "CRITICAL",
            "This is a stuck loop; the call is blocked. Stop and report what blocks you.",
        ),
    };
    let message = format!(
        "{lead}: You are cycling through the same {} tool calls with {} ({count} consecutive calls, {} times round). {advice}",
        w.distinct_calls(),
        results_word(identity),
        w.repeats
    );
    Finding::new(NAME, level, count, key, message).with_evidence(cycles.seqs(w.size))
}

fn results_word(identity: CycleIdentity) -> &'static str {
    match identity {
        CycleIdentity::Exact => "identical results",
        CycleIdentity::Shape => "results that do not change (numbers aside)",
    }
}

fn sig(tool: &str, call: &Fingerprint) -> String {
    format!("{tool}:{:016x}", call.short())
}

fn cycle_key(calls: &[u64]) -> String {
    let parts: Vec<String> = calls.iter().map(|c| format!("{c:016x}")).collect();
    format!("cycle:{}", parts.join("|"))
}

impl Detector for PingPong {
    loopguard_core::detector_basics!(name: NAME, interest: [ToolCall, ToolResult]);

    fn facts(&self) -> Facts {
        // Every outcome is recorded by its normalised fingerprint.
        if self.shapes() {
            Facts::RESULT_SHAPE.union(Facts::NORMALIZED_RESULT)
        } else {
            Facts::NORMALIZED_RESULT
        }
    }

    fn reset_run(&mut self, scope: &RunScope<'_>) {
        // OpenClaw's history is scoped to the host's run id: a new run under the same id (or
        // again without one) keeps it.
        if scope.new_run && self.state.scope.as_deref() != scope.run_id {
            self.state = State {
                scope: scope.run_id.map(str::to_owned),
                ..State::default()
            };
            self.rebuild();
        }
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::ToolCall { args, .. } => self.on_call(args, cx),
            Event::ToolResult { content, .. } => self.on_result(content, cx),
            _ => {}
        }
    }

    fn snapshot(&self) -> Result<Value, StateError> {
        serde_json::to_value(&self.state).map_err(|e| StateError::Invalid {
            detector: NAME,
            message: e.to_string(),
        })
    }

    fn restore(&mut self, state: &Value) -> Result<(), StateError> {
        self.state = State::deserialize(state).map_err(|e| StateError::Invalid {
            detector: NAME,
            message: e.to_string(),
        })?;
        self.rebuild();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The result shape rule without reused buffers: a map of trends, emptied when a new
    /// call shape finds it full, each new trend a fresh one.
    fn reference(trends: &mut FixedMap<u64, Trend>, call: u64, rs: &ResultShape, seq: u64) -> u64 {
        if trends.len() >= MAX_TRENDS && !trends.contains_key(&call) {
            trends.clear();
        }
        let progress = trends.entry(call).or_default().step(&rs.numbers);
        let fp = if progress {
            Fingerprint::combine(&[rs.fp.as_bytes(), &seq.to_le_bytes()])
        } else {
            rs.fp
        };
        fp.short()
    }

    proptest! {
        /// Trends in reused buffers give the results the fresh ones give, across the
        /// clearing of a full table.
        #[test]
        fn reused_trends_are_fresh_ones(
            steps in prop::collection::vec(
                (0u64..(MAX_TRENDS as u64 + 24), prop::collection::vec(0u64..4, 0..3)),
                1..400,
            ),
        ) {
            let mut d = PingPong::new(Settings::default());
            let mut want = FixedMap::default();
            for (seq, (call, numbers)) in steps.into_iter().enumerate() {
                let rs = ResultShape {
                    fp: Fingerprint::of_bytes(b"shape"),
                    numbers,
                    empty: false,
                    ids: None,
                };
                let mut sh = ShapeRec { call, result: None };
                d.result_shape(&mut sh, &rs, seq as u64, 7, 7);
                let w = reference(&mut want, call, &rs, seq as u64);
                prop_assert_eq!(sh.result, Some(w));
                prop_assert_eq!(&d.state.trends, &want);
            }
        }
    }

    #[test]
    fn evicted_records_lend_their_tool_buffers() {
        let mut spare = Spare::default();
        spare.keep_tool("a_longer_tool_name".to_owned(), 4);
        assert_eq!(spare.tool("ls"), "ls");
        assert_eq!(spare.tool("grep"), "grep");
        for _ in 0..10 {
            spare.keep_tool(String::from("x"), 4);
        }
        assert_eq!(spare.tools.len(), 4);
    }
}
