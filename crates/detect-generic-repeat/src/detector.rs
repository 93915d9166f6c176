//! The `generic-repeat` state machine: the consecutive streak (pi-loop-guard), the whole-batch
//! streak, the near-duplicate streak, the sliding window (pi-repetition-guard) and OpenClaw's
//! generic thresholds.

use crate::sketch::Sketch;
use crate::{ResultIdentity, Settings, WindowIdentity, NAME};
use loopguard_core::shape::{self, Echo, TokenSet, Trend};
use loopguard_core::{
    CallInfo, Cx, Detector, Event, EventKind, Facts, Finding, Fingerprint, FixedMap, Interest,
    Level, ResultInfo, MAX_EVIDENCE,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// How many calls blocked by this detector are remembered, so that their results (an error
/// carrying the block reason, or a replayed original) never count.
const MAX_BLOCKED: usize = 64;
/// How many distinct calls of one batch are kept to recognise the batch's calls again.
const MAX_BATCH_CALLS: usize = 32;
/// How many tool names of one batch are kept for messages.
const MAX_BATCH_TOOLS: usize = 4;
/// How many recent known poll call identities are remembered.
const MAX_POLLS: usize = 16;
/// How many issued calls the similar-calls rule remembers until their results arrive.
const MAX_PENDING: usize = 32;
/// How many of its newest calls a similar-calls streak compares a new call with.
const SIMILAR_MEMORY: usize = 3;

/// The `generic-repeat` detector (LG001).
#[derive(Debug)]
pub struct GenericRepeat {
    settings: Settings,
    state: State,
}

/// One completed (call, result) pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Pair {
    tool: String,
    call: Fingerprint,
    args: Fingerprint,
    result: Fingerprint,
}

/// pi-loop-guard's consecutive streak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Streak {
    last: Option<Pair>,
    count: u32,
    warned: bool,
    /// Result sequence numbers of the streak (newest kept).
    seqs: VecDeque<u64>,
    /// The call that was blocked, with the streak length at the block: every further
    /// same-args attempt is blocked too.
    sticky: Option<(Pair, u32)>,
    /// Attempts blocked since the block began.
    blocked: u32,
    /// The call counter when the streak's first call was seen: the streak spans the calls
    /// from there to the newest (calls whose results were transparent included).
    #[serde(default)]
    start_call: u64,
}

/// The near-duplicate streak: consecutive results of one call, each a near-duplicate of the
/// one before. Only the newest result's sketch is kept.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct NearStreak {
    /// The call of the streak (`None`: no streak).
    call: Option<Fingerprint>,
    tool: String,
    args: Fingerprint,
    /// The newest result's sketch.
    sketch: Sketch,
    /// The newest result's identity (`result-identity`): an identical result is a
    /// near-duplicate whatever its raw text.
    result: Option<Fingerprint>,
    /// Results in the streak.
    count: u32,
    warned: bool,
    /// Attempts blocked since the block began.
    blocked: u32,
    /// Result sequence numbers of the streak (newest kept).
    seqs: VecDeque<u64>,
    /// The call counter at the streak's first call.
    #[serde(default)]
    start_call: u64,
}

/// What the similar-calls rule keeps of a call until its result arrives.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct PendingCall {
    seq: u64,
    tokens: TokenSet,
    skeleton: Option<Fingerprint>,
}

/// One call of the similar-calls streak.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct SimilarCall {
    tokens: TokenSet,
    skeleton: Option<Fingerprint>,
}

/// The similar-calls streak: consecutive calls of one tool, each like one of the last few
/// before it, whose results have the same shape and do not progress.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SimilarStreak {
    tool: String,
    /// The newest calls of the streak (at most [`SIMILAR_MEMORY`]).
    calls: VecDeque<SimilarCall>,
    /// The shape of the streak's results.
    shape: Option<Fingerprint>,
    empty: bool,
    /// The temp ids of the newest result.
    ids: Option<u64>,
    /// The raw fingerprint (the bus's `raw_fp`) of the newest result.
    #[serde(default)]
    last_raw: Option<Fingerprint>,
    trend: Trend,
    count: u32,
    warned: bool,
    start_call: u64,
    seqs: VecDeque<u64>,
}

/// A parallel batch whose results are still arriving.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct OpenBatch {
    id: u64,
    size: u32,
    seen: u32,
    /// Order-independent sum of the pairs' fingerprints (four 64-bit lanes).
    sum: [u64; 4],
    counted: u32,
    calls: Vec<Fingerprint>,
    tools: Vec<String>,
    last: Option<Pair>,
    seqs: Vec<u64>,
}

/// The whole-batch streak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct BatchStreak {
    open: Option<OpenBatch>,
    last_sig: Option<Fingerprint>,
    calls: Vec<Fingerprint>,
    tools: Vec<String>,
    size: u32,
    count: u32,
    warned: bool,
    blocked: u32,
    seqs: VecDeque<u64>,
}

/// pi-repetition-guard's window of the last N calls.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Window {
    calls: VecDeque<(Fingerprint, u64)>,
    counts: FixedMap<Fingerprint, u32>,
}

/// One OpenClaw history record.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Record {
    call: Fingerprint,
    scope: u64,
    call_seq: u64,
    result: Option<Fingerprint>,
}

/// All mutable state (one serde value, for snapshots).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    streak: Streak,
    batch: BatchStreak,
    near: NearStreak,
    /// The most recent calls (`near-duplicate.recurrence-window` of them).
    recent: VecDeque<Fingerprint>,
    /// Sequence numbers of calls this detector reported as critical (blocked).
    blocked: VecDeque<u64>,
    /// Recent known poll calls (their results are left out of the near-duplicate streak).
    #[serde(default)]
    polls: VecDeque<Fingerprint>,
    window: Window,
    history: VecDeque<Record>,
    /// Calls seen (not ignored), for the spans messages report.
    #[serde(default)]
    calls: u64,
    #[serde(default)]
    pending: VecDeque<PendingCall>,
    #[serde(default)]
    similar: SimilarStreak,
}

impl GenericRepeat {
    /// A detector with these settings.
    pub fn new(settings: Settings) -> GenericRepeat {
        GenericRepeat {
            settings,
            state: State::default(),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn ignored_tool(&self, tool: &str) -> bool {
        self.settings.ignore_tools.iter().any(|t| t == tool)
    }

    fn identity(&self, r: &ResultInfo) -> Fingerprint {
        match self.settings.result_identity {
            ResultIdentity::Raw => r.raw_fp,
            ResultIdentity::Normalized => r.norm_fp,
        }
    }

    fn reset_turn(&mut self) {
        self.state.streak = Streak::default();
        self.state.batch = BatchStreak::default();
        self.state.near = NearStreak::default();
        self.state.similar = SimilarStreak::default();
        self.state.recent.clear();
        self.clear_window();
    }

    fn clear_window(&mut self) {
        self.state.window.calls.clear();
        self.state.window.counts.clear();
    }

    fn on_call(&mut self, event: &Event<'_>, call: &CallInfo, cx: &mut Cx<'_>) {
        let Event::ToolCall { tool, args, .. } = event else {
            return;
        };
        if self.ignored_tool(tool) {
            return;
        }
        self.state.calls = self.state.calls.saturating_add(1);
        if self.settings.similar_calls.is_some() {
            if self.state.pending.len() >= MAX_PENDING {
                self.state.pending.pop_front();
            }
            self.state.pending.push_back(PendingCall {
                seq: call.seq,
                tokens: TokenSet::of_args(args),
                skeleton: skeleton(args),
            });
        }
        if self
            .state
            .batch
            .open
            .as_ref()
            .is_some_and(|b| b.id != call.batch)
        {
            self.finish_batch(cx);
        }
        let known_poll = self.state.polls.contains(&call.call_fp);
        let mut critical = false;
        if self.settings.streak {
            critical |= self.check_streak_block(call, known_poll, cx);
        }
        if self.settings.batch_streak {
            critical |= self.check_batch_block(call, cx);
        }
        let near_skips_polls = self
            .settings
            .near_duplicate
            .as_ref()
            .is_some_and(|nd| nd.skip_known_polls);
        let poll = (near_skips_polls || self.settings.polls.is_some())
            && (is_known_poll(tool, args) || is_polling_command(args));
        if poll && !known_poll {
            if self.state.polls.len() >= MAX_POLLS {
                self.state.polls.pop_front();
            }
            self.state.polls.push_back(call.call_fp);
        }
        if self.settings.near_duplicate.is_some() && !(poll && near_skips_polls) {
            critical |= self.check_near(call, cx, critical);
        }
        if self.settings.window.is_some() {
            critical |= self.window_call(tool, args, call, cx);
        }
        if self.settings.openclaw.is_some() {
            critical |= self.openclaw_call(tool, args, call, cx, critical);
        }
        if let Some(nd) = &self.settings.near_duplicate {
            let cap = nd.recurrence_window as usize;
            if cap > 0 {
                let recent = &mut self.state.recent;
                while recent.len() >= cap {
                    recent.pop_front();
                }
                recent.push_back(call.call_fp);
            }
        }
        if critical {
            if self.state.blocked.len() >= MAX_BLOCKED {
                self.state.blocked.pop_front();
            }
            self.state.blocked.push_back(call.seq);
        }
    }

    fn on_result(&mut self, result: &ResultInfo, content: &str, empty: bool, cx: &mut Cx<'_>) {
        if result.orphan {
            // The call was never seen, so its arguments are unknown: not a usable identity.
            return;
        }
        let blocked = match self
            .state
            .blocked
            .iter()
            .position(|s| *s == result.call.seq)
        {
            // Our own block (or the recorded original of a blocked call): never an outcome.
            Some(pos) => self.state.blocked.remove(pos).is_some(),
            None => false,
        };
        let ignored = blocked || self.ignored_tool(&result.call.tool);
        let skipped_error = self.settings.ignore_errors && result.is_error;
        let skipped_empty = self.settings.ignore_empty_results && empty;
        let counted = !(ignored || skipped_error || skipped_empty);
        let known_poll = self.state.polls.contains(&result.call.call_fp);
        let pair = Pair {
            tool: result.call.tool.clone(),
            call: result.call.call_fp,
            args: result.call.args_fp,
            result: self.identity(result),
        };
        if self.settings.openclaw.is_some() && counted {
            self.openclaw_result(result, pair.result, cx);
        }
        if counted {
            self.window_result(&pair, cx);
        }
        if let Some(nd) = &self.settings.near_duplicate {
            let empty_counts = nd.count_empty_results || !self.settings.ignore_empty_results;
            if known_poll {
                // A known poll: its streak is known-poll-no-progress's to judge.
                self.state.near = NearStreak::default();
            } else if !(ignored || skipped_error || (empty && !empty_counts)) {
                if result.batch_size > 1 {
                    // A parallel batch is not a repeat of one call: it ends the streak.
                    self.state.near = NearStreak::default();
                } else {
                    self.near_result(&pair, content, cx);
                }
            }
        }
        if self.settings.similar_calls.is_some() {
            let pending = match self
                .state
                .pending
                .iter()
                .position(|p| p.seq == result.call.seq)
            {
                Some(i) => self.state.pending.remove(i),
                None => None,
            };
            if known_poll || result.batch_size > 1 {
                self.state.similar = SimilarStreak::default();
            } else if let (Some(p), false) = (pending, ignored || skipped_error) {
                self.similar_result(&result.call.tool, p, content, result.raw_fp, cx);
            }
        }
        if result.batch_size > 1 {
            self.batch_result(result, counted.then_some(pair), cx);
            return;
        }
        if !counted {
            // Transparent: an ignored tool, an ignored error or a blocked call's result
            // neither advances nor breaks anything.
            return;
        }
        self.finish_batch(cx);
        // A serial outcome breaks any run of identical batches.
        let batch = &mut self.state.batch;
        batch.last_sig = None;
        batch.count = 0;
        batch.warned = false;
        batch.calls.clear();
        batch.seqs.clear();
        if self.settings.streak {
            self.streak_result(pair, known_poll, cx);
        }
    }

    // ---- streak ------------------------------------------------------------------------

    /// The streak's (warn, block) thresholds: the `polls` ones for a known polling call.
    fn streak_thresholds(&self, known_poll: bool) -> (u32, u32) {
        match self.settings.polls {
            Some(p) if known_poll => (p.warn_threshold, p.block_threshold),
            _ => (self.settings.warn_threshold, self.settings.block_threshold),
        }
    }

    fn streak_result(&mut self, pair: Pair, known_poll: bool, cx: &mut Cx<'_>) {
        let (warn_at, _) = self.streak_thresholds(known_poll);
        let s = &mut self.state.streak;
        if s.last.as_ref() == Some(&pair) {
            s.count = s.count.saturating_add(1);
        } else {
            s.count = 1;
            s.warned = false;
            s.seqs.clear();
            // Different arguments (or, when a block was not enforced, a different result):
            // the block is lifted.
            s.sticky = None;
            s.blocked = 0;
            s.last = Some(pair);
            s.start_call = self.state.calls;
        }
        push_bounded(&mut s.seqs, cx.seq());
        if s.count >= warn_at && !s.warned {
            s.warned = true;
            let span = self.state.calls.saturating_sub(s.start_call) + 1;
            if let Some(p) = &s.last {
                let msg = format!(
                    "Loop warning: you called `{}` with the same arguments {} and got the same \
                     result every time. Repeating it will not change the outcome: change the arguments, use a \
                     different tool, or give your final answer.",
                    p.tool,
                    times(s.count, span)
                );
                let f = Finding::new(NAME, Level::Warning, s.count, streak_key(p), msg)
                    .with_tool(p.tool.clone())
                    .with_evidence(s.seqs.iter().copied().collect());
                cx.report(f);
            }
        }
    }

    fn check_streak_block(&mut self, call: &CallInfo, known_poll: bool, cx: &mut Cx<'_>) -> bool {
        let (_, block) = self.streak_thresholds(known_poll);
        let block_at = block.saturating_sub(1);
        let s = &mut self.state.streak;
        let (pair, count) = match (&s.sticky, &s.last) {
            (Some((p, c)), _) if p.call == call.call_fp => (p.clone(), *c),
            (_, Some(l)) if l.call == call.call_fp && s.count >= block_at => {
                s.sticky = Some((l.clone(), s.count));
                s.blocked = 0;
                (l.clone(), s.count)
            }
            _ => return false,
        };
        s.blocked = s.blocked.saturating_add(1);
        let attempt = count.saturating_add(s.blocked);
        let span = self.state.calls.saturating_sub(s.start_call);
        let msg = format!(
            "Blocked: this exact `{}` call (same arguments) already returned the same result {}; \
             identical attempt {} is refused. Make a different call or give your final answer.",
            pair.tool,
            times(count, span),
            attempt
        );
        let mut evidence: Vec<u64> = s.seqs.iter().copied().collect();
        evidence.push(cx.seq());
        let f = Finding::new(NAME, Level::Critical, attempt, streak_key(&pair), msg)
            .with_tool(pair.tool.clone())
            .with_evidence(evidence);
        cx.report(f);
        true
    }

    // ---- near-duplicate streak ---------------------------------------------------------

    /// Extends the streak when this result of the same call is a near-duplicate of the
    /// previous one; otherwise starts a new streak at this result.
    fn near_result(&mut self, pair: &Pair, content: &str, cx: &mut Cx<'_>) {
        let Some(nd) = &self.settings.near_duplicate else {
            return;
        };
        let sketch = Sketch::of_text(content);
        let n = &mut self.state.near;
        let same_result = n.result == Some(pair.result);
        if n.call == Some(pair.call)
            && (same_result || n.sketch.similar(&sketch, nd.similarity_permille))
        {
            n.count = n.count.saturating_add(1);
        } else {
            *n = NearStreak {
                call: Some(pair.call),
                tool: pair.tool.clone(),
                args: pair.args,
                count: 1,
                start_call: self.state.calls,
                ..NearStreak::default()
            };
        }
        n.sketch = sketch;
        n.result = Some(pair.result);
        push_bounded(&mut n.seqs, cx.seq());
    }

    /// On the next call of the streak: warns on the `warn-threshold`-th consecutive call (one
    /// call earlier when the same call also came before the streak, within the last
    /// `recurrence-window` calls), blocks from the
    /// `block-threshold`-th (sticky: a blocked call's result never counts, so every further
    /// attempt is blocked too). Returns whether the call was blocked.
    fn check_near(&mut self, call: &CallInfo, cx: &mut Cx<'_>, critical: bool) -> bool {
        let Some(nd) = &self.settings.near_duplicate else {
            return false;
        };
        // The exact streak already warned about this very call: one steer is enough.
        let exact_warned = self.state.streak.warned
            && self
                .state
                .streak
                .last
                .as_ref()
                .is_some_and(|p| p.call == call.call_fp);
        let n = &mut self.state.near;
        if n.call != Some(call.call_fp) {
            return false;
        }
        let next = n.count.saturating_add(1);
        let attempt = next.saturating_add(n.blocked);
        // Key and evidence are built only when a finding is reported.
        let key = |n: &NearStreak| format!("near:{}:{}", n.tool, short_hex(&n.args));
        let evidence = |n: &NearStreak, seq: u64| -> Vec<u64> {
            n.seqs.iter().copied().chain(std::iter::once(seq)).collect()
        };
        let pct = nd.similarity_permille.div_ceil(10);
        if nd.block_threshold.is_some_and(|b| next >= b) {
            n.blocked = n.blocked.saturating_add(1);
            if critical {
                // Another rule already blocks this call.
                return false;
            }
            let msg = format!(
                "Blocked: `{}` was called with the same arguments {} times in a row and its result barely \
                 changed each time (at least {pct}% the same); identical attempt {attempt} is refused. Make a \
                 different call or give your final answer.",
                n.tool, n.count
            );
            cx.report(
                Finding::new(NAME, Level::Critical, attempt, key(n), msg)
                    .with_tool(n.tool.clone())
                    .with_evidence(evidence(n, cx.seq())),
            );
            return true;
        }
        // The call also came before the streak (a different call broke it once): one call
        // earlier, as pi-repetition-guard's window would count it.
        let recurs = || {
            let seen = self
                .state
                .recent
                .iter()
                .filter(|c| **c == call.call_fp)
                .count();
            seen > n.count as usize
        };
        let early = nd.recurrence_window > 0
            && n.count >= 2
            && next.saturating_add(1) >= nd.warn_threshold
            && recurs();
        if (next >= nd.warn_threshold || early) && !n.warned {
            n.warned = true;
            if exact_warned {
                return false;
            }
            let span = self.state.calls.saturating_sub(n.start_call) + 1;
            let which = if span == u64::from(next) {
                format!("this is your call number {next} in a row to `{}`", n.tool)
            } else {
                format!(
                    "this is your call number {next} to `{}` in the last {span} calls",
                    n.tool
                )
            };
            let msg = format!(
                "Loop warning: {which} with the same arguments, and \
                 the last {} results barely changed (each at least {pct}% the same as the one before). \
                 Repeating it will not make progress: change the arguments, use a different tool, or give \
                 your final answer.",
                n.count
            );
            cx.report(
                Finding::new(NAME, Level::Warning, next, key(n), msg)
                    .with_tool(n.tool.clone())
                    .with_evidence(evidence(n, cx.seq())),
            );
        }
        false
    }

    // ---- similar calls -----------------------------------------------------------------

    /// Extends the similar-calls streak when this call is of the streak's tool, like one of
    /// its newest calls (token similarity, or the same command skeleton when both results are
    /// empty), and its result has the streak's shape without progress; otherwise starts a new
    /// streak at this call. Warns once the streak reaches `warn-threshold` calls.
    fn similar_result(
        &mut self,
        tool: &str,
        p: PendingCall,
        content: &str,
        raw: Fingerprint,
        cx: &mut Cx<'_>,
    ) {
        let Some(sc) = &self.settings.similar_calls else {
            return;
        };
        // The bus's shape of the result, with the echo of the call it answers.
        let own;
        let rs = match cx.result_shape() {
            Some(rs) => rs,
            None => {
                own = shape::result_shape(&Echo::none(), content);
                &own
            }
        };
        let call = SimilarCall {
            tokens: p.tokens,
            skeleton: p.skeleton,
        };
        let st = &mut self.state.similar;
        // A new id in each result is a new object each time (an agent launched): progress.
        let new_ids = rs.ids.is_some() && st.ids != rs.ids;
        // A call that differs from the previous one only in its numbers (`ls dir7` after
        // `ls dir6`) and gets a different answer addressed another object: progress.
        let renumbered = !rs.empty
            && st.last_raw.is_some_and(|r| r != raw)
            && st
                .calls
                .back()
                .is_some_and(|c| c.tokens.similarity_permille(&call.tokens) >= 1000);
        let like = st.tool == tool
            && st.shape == Some(rs.fp)
            && !new_ids
            && st.calls.iter().any(|c| {
                c.tokens.similarity_permille(&call.tokens) >= sc.similarity_permille
                    || (rs.empty
                        && st.empty
                        && call.skeleton.is_some()
                        && c.skeleton == call.skeleton)
            });
        let progress = like && (st.trend.step(&rs.numbers) || renumbered);
        if like && !progress {
            st.count = st.count.saturating_add(1);
            st.last_raw = Some(raw);
        } else {
            let mut trend = if like {
                std::mem::take(&mut st.trend)
            } else {
                Trend::new()
            };
            if !like {
                trend.step(&rs.numbers);
            }
            *st = SimilarStreak {
                tool: tool.to_owned(),
                shape: Some(rs.fp),
                empty: rs.empty,
                ids: rs.ids,
                last_raw: Some(raw),
                trend,
                count: 1,
                start_call: self.state.calls,
                ..SimilarStreak::default()
            };
        }
        if st.calls.len() >= SIMILAR_MEMORY {
            st.calls.pop_front();
        }
        st.calls.push_back(call);
        push_bounded(&mut st.seqs, cx.seq());
        let warn_at = if st.empty {
            sc.empty_warn_threshold
        } else {
            sc.warn_threshold
        };
        if st.count < warn_at || st.warned {
            return;
        }
        st.warned = true;
        // One steer per loop: the exact or near-duplicate streak may already speak for it.
        let exact = self.state.streak.warned && self.state.streak.count >= 2;
        let near = self.state.near.warned;
        if exact || near {
            return;
        }
        let st = &self.state.similar;
        let span = self.state.calls.saturating_sub(st.start_call) + 1;
        let what = if st.empty {
            "each returned nothing".to_owned()
        } else {
            "each returned the same result up to its numbers, without progress".to_owned()
        };
        let msg = format!(
            "Loop warning: you called `{}` {} with nearly the same arguments and {what}. Small variations \
             of the same call will not change the outcome: step back, rethink the approach, or give your \
             final answer.",
            st.tool,
            times(st.count, span)
        );
        let key = format!(
            "similar:{}:{}",
            st.tool,
            st.shape.map(|f| short_hex(&f)).unwrap_or_default()
        );
        let f = Finding::new(NAME, Level::Warning, st.count, key, msg)
            .with_tool(st.tool.clone())
            .with_evidence(st.seqs.iter().copied().collect());
        cx.report(f);
    }

    // ---- whole batches -----------------------------------------------------------------

    fn batch_result(&mut self, result: &ResultInfo, pair: Option<Pair>, cx: &mut Cx<'_>) {
        if self
            .state
            .batch
            .open
            .as_ref()
            .is_some_and(|b| b.id != result.call.batch)
        {
            self.finish_batch(cx);
        }
        let open = self.state.batch.open.get_or_insert_with(|| OpenBatch {
            id: result.call.batch,
            size: result.batch_size,
            ..OpenBatch::default()
        });
        open.size = open.size.max(result.batch_size);
        open.seen = open.seen.saturating_add(1);
        if let Some(p) = pair {
            let h = Fingerprint::combine(&[p.call.as_bytes(), p.result.as_bytes()]);
            for (lane, chunk) in open.sum.iter_mut().zip(h.as_bytes().chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(chunk);
                *lane = lane.wrapping_add(u64::from_le_bytes(b));
            }
            open.counted = open.counted.saturating_add(1);
            if open.calls.len() < MAX_BATCH_CALLS && !open.calls.contains(&p.call) {
                open.calls.push(p.call);
            }
            if open.tools.len() < MAX_BATCH_TOOLS && !open.tools.contains(&p.tool) {
                open.tools.push(p.tool.clone());
            }
            if open.seqs.len() < MAX_EVIDENCE {
                open.seqs.push(cx.seq());
            }
            open.last = Some(p);
        }
        if open.seen >= open.size {
            self.finish_batch(cx);
        }
    }

    /// Closes the open batch: compares its last result with the streak, and its signature
    /// with the previous batch's.
    fn finish_batch(&mut self, cx: &mut Cx<'_>) {
        let Some(open) = self.state.batch.open.take() else {
            return;
        };
        if open.counted == 0 {
            return;
        }
        if self.settings.streak {
            // Only the batch's last result is compared with the previous serial result: a
            // different one ends the streak, an equal one leaves it where it was.
            let s = &mut self.state.streak;
            if open.last.is_some() && s.last != open.last {
                s.last = None;
                s.count = 0;
                s.warned = false;
                s.seqs.clear();
            }
        }
        if !self.settings.batch_streak {
            return;
        }
        let mut bytes = Vec::with_capacity(36);
        for lane in open.sum {
            bytes.extend_from_slice(&lane.to_le_bytes());
        }
        bytes.extend_from_slice(&open.counted.to_le_bytes());
        let sig = Fingerprint::of_bytes(&bytes);
        let b = &mut self.state.batch;
        if b.last_sig == Some(sig) {
            b.count = b.count.saturating_add(1);
        } else {
            b.last_sig = Some(sig);
            b.count = 1;
            b.warned = false;
            b.seqs.clear();
            b.calls = open.calls;
            b.tools = open.tools;
            b.size = open.counted;
        }
        b.blocked = 0;
        for s in open.seqs {
            push_bounded(&mut b.seqs, s);
        }
        if b.count >= self.settings.warn_threshold && !b.warned {
            b.warned = true;
            let msg = format!(
                "Loop warning: you issued the same batch of {} tool calls ({}) {} times in a row and got the \
                 same results every time. Repeating it will not change the outcome: change the calls or give \
                 your final answer.",
                b.size,
                tool_list(&b.tools),
                b.count
            );
            let f = Finding::new(NAME, Level::Warning, b.count, batch_key(&sig), msg)
                .with_tool(b.tools.first().cloned().unwrap_or_default())
                .with_evidence(b.seqs.iter().copied().collect());
            cx.report(f);
        }
    }

    fn check_batch_block(&mut self, call: &CallInfo, cx: &mut Cx<'_>) -> bool {
        let block_at = self.settings.block_threshold.saturating_sub(1);
        let b = &mut self.state.batch;
        let Some(sig) = b.last_sig else { return false };
        if b.count < block_at || !b.calls.contains(&call.call_fp) {
            return false;
        }
        b.blocked = b.blocked.saturating_add(1);
        let msg = format!(
            "Blocked: `{}` belongs to a batch of {} tool calls ({}) that returned the same results {} times in \
             a row; this repeat is refused. Make different calls or give your final answer.",
            call.tool,
            b.size,
            tool_list(&b.tools),
            b.count
        );
        let mut evidence: Vec<u64> = b.seqs.iter().copied().collect();
        evidence.push(cx.seq());
        let f = Finding::new(
            NAME,
            Level::Critical,
            b.count.saturating_add(b.blocked),
            batch_key(&sig),
            msg,
        )
        .with_tool(call.tool.clone())
        .with_evidence(evidence);
        cx.report(f);
        true
    }

    // ---- window (pi-repetition-guard) --------------------------------------------------

    fn window_call(&mut self, tool: &str, args: &Value, call: &CallInfo, cx: &mut Cx<'_>) -> bool {
        match &self.settings.window {
            Some(ws) if ws.identity == WindowIdentity::Call => {
                let key = window_key(tool, args, &call.call_fp);
                self.window_push(key, tool, cx)
            }
            _ => false,
        }
    }

    fn window_result(&mut self, pair: &Pair, cx: &mut Cx<'_>) {
        if let Some(ws) = &self.settings.window {
            if ws.identity == WindowIdentity::CallAndResult {
                let key = Fingerprint::combine(&[pair.call.as_bytes(), pair.result.as_bytes()]);
                self.window_push(key, &pair.tool, cx);
            }
        }
    }

    /// Adds one occurrence to the window and reports when its key reached the threshold.
    /// Returns whether the finding is critical.
    fn window_push(&mut self, key: Fingerprint, tool: &str, cx: &mut Cx<'_>) -> bool {
        let Some(ws) = &self.settings.window else {
            return false;
        };
        let w = &mut self.state.window;
        w.calls.push_back((key, cx.seq()));
        *w.counts.entry(key).or_insert(0) += 1;
        while w.calls.len() > ws.size as usize {
            if let Some((old, _)) = w.calls.pop_front() {
                if let Some(n) = w.counts.get_mut(&old) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        w.counts.remove(&old);
                    }
                }
            }
        }
        let count = w.counts.get(&key).copied().unwrap_or(0);
        if count < ws.threshold {
            return false;
        }
        let evidence: Vec<u64> = w
            .calls
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, s)| *s)
            .collect();
        let what = match ws.identity {
            WindowIdentity::Call => "with the same arguments",
            WindowIdentity::CallAndResult => "with the same arguments and got the same result",
        };
        let msg = format!(
            "Repetition guard: tool-call loop (same tool+args repeated): `{tool}` was called {what} {count} times \
             within the last {} calls. Stop repeating it and finish the task from the information you already \
             have.",
            ws.size
        );
        let f = Finding::new(
            NAME,
            ws.level,
            count,
            format!("window:{tool}:{}", short_hex(&key)),
            msg,
        )
        .with_tool(tool)
        .with_evidence(evidence);
        cx.report(f);
        ws.level == Level::Critical
    }

    // ---- OpenClaw ----------------------------------------------------------------------

    fn openclaw_call(
        &mut self,
        tool: &str,
        args: &Value,
        call: &CallInfo,
        cx: &mut Cx<'_>,
        blocked: bool,
    ) -> bool {
        let Some(oc) = &self.settings.openclaw else {
            return false;
        };
        let scope = scope_of(cx);
        let mut critical = false;
        if !(oc.skip_known_polls && is_known_poll(tool, args)) {
            let mut recent = 0u32;
            let mut streak = 0u32;
            let mut latest: Option<Fingerprint> = None;
            let mut ended = false;
            for r in self.state.history.iter().rev() {
                if r.scope != scope || r.call != call.call_fp {
                    continue;
                }
                recent += 1;
                let Some(h) = r.result else { continue };
                if ended {
                    continue;
                }
                match latest {
                    None => {
                        latest = Some(h);
                        streak = 1;
                    }
                    Some(l) if l == h => streak += 1,
                    Some(_) => ended = true,
                }
            }
            // Key and evidence (every record of the call, oldest first, then this call) are
            // built only when a finding is reported.
            let args_hash = || format!("{tool}:{}", call.args_fp.to_hex());
            let seq = cx.seq();
            let history = &self.state.history;
            let evidence = || -> Vec<u64> {
                history
                    .iter()
                    .filter(|r| r.scope == scope && r.call == call.call_fp)
                    .map(|r| r.call_seq)
                    .chain(std::iter::once(seq))
                    .collect()
            };
            if let (true, Some(h)) = (streak >= oc.critical_threshold, latest) {
                let msg = format!(
                    "CRITICAL: Called {tool} with identical arguments and identical outcomes {streak} times. \
                     Session execution blocked to prevent runaway loops."
                );
                let key = format!("generic:{tool}:{}:{}", args_hash(), h.to_hex());
                cx.report(
                    Finding::new(NAME, Level::Critical, streak, key, msg)
                        .with_tool(tool)
                        .with_evidence(evidence()),
                );
                critical = true;
            } else if recent >= oc.warning_threshold {
                let msg = format!(
                    "WARNING: You have called {tool} {recent} times with identical arguments. If this is not \
                     making progress, stop retrying and report the task as failed."
                );
                let key = format!("generic:{tool}:{}", args_hash());
                cx.report(
                    Finding::new(NAME, Level::Warning, recent, key, msg)
                        .with_tool(tool)
                        .with_evidence(evidence()),
                );
            }
        }
        if !critical && !blocked {
            let cap = oc.history_size as usize;
            self.state.history.push_back(Record {
                call: call.call_fp,
                scope,
                call_seq: call.seq,
                result: None,
            });
            while self.state.history.len() > cap {
                self.state.history.pop_front();
            }
        }
        critical
    }

    fn openclaw_result(&mut self, result: &ResultInfo, hash: Fingerprint, cx: &Cx<'_>) {
        let Some(oc) = &self.settings.openclaw else {
            return;
        };
        let scope = scope_of(cx);
        let found = self
            .state
            .history
            .iter_mut()
            .rev()
            .find(|r| r.scope == scope && r.call_seq == result.call.seq && r.result.is_none());
        match found {
            Some(r) => r.result = Some(hash),
            None => {
                self.state.history.push_back(Record {
                    call: result.call.call_fp,
                    scope,
                    call_seq: result.call.seq,
                    result: Some(hash),
                });
                while self.state.history.len() > oc.history_size as usize {
                    self.state.history.pop_front();
                }
            }
        }
    }
}

impl Detector for GenericRepeat {
    fn name(&self) -> &'static str {
        NAME
    }

    fn facts(&self) -> Facts {
        if self.settings.similar_calls.is_some() {
            Facts::RESULT_SHAPE
        } else {
            Facts::NONE
        }
    }

    fn interest(&self) -> Interest {
        Interest::of(&[
            EventKind::User,
            EventKind::RunStart,
            EventKind::ToolCall,
            EventKind::ToolResult,
        ])
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::User { .. } if cx.is_new_turn() => self.reset_turn(),
            Event::RunStart { .. } => {
                self.finish_batch(cx);
                self.clear_window();
            }
            Event::ToolCall { .. } => {
                if let Some(call) = cx.call() {
                    self.on_call(event, call, cx);
                }
            }
            Event::ToolResult {
                content, images, ..
            } => {
                if let Some(result) = cx.result() {
                    let empty = content.trim().is_empty() && *images == 0;
                    self.on_result(result, content, empty, cx);
                }
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

fn push_bounded(q: &mut VecDeque<u64>, seq: u64) {
    if q.len() >= MAX_EVIDENCE {
        q.pop_front();
    }
    q.push_back(seq);
}

/// "4 times in a row" when the streak spans exactly its own calls, else "4 times in the last
/// 9 calls".
fn times(count: u32, span: u64) -> String {
    if span <= u64::from(count) {
        format!("{count} times in a row")
    } else {
        format!("{count} times in the last {span} calls")
    }
}

/// A shell command's skeleton: its words with path arguments (`/usr/lib`, `./src`, `~/x`,
/// `../y`) left out; `find /usr/lib -name X` and `find /opt -name X` share it. `None` when
/// the call has no `command` / `cmd` string.
fn skeleton(args: &Value) -> Option<Fingerprint> {
    let cmd = ["command", "cmd"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))?;
    let cmd = cmd.get(..cmd.len().min(2000)).unwrap_or(cmd);
    let words: Vec<&str> = cmd
        .split_whitespace()
        .filter(|w| {
            let w = w.trim_start_matches(['"', '\'']);
            !(w.starts_with('/')
                || w.starts_with("./")
                || w.starts_with("../")
                || w.starts_with("~/"))
        })
        .collect();
    Some(Fingerprint::combine(&[
        b"skeleton",
        words.join(" ").as_bytes(),
    ]))
}

fn short_hex(fp: &Fingerprint) -> String {
    format!("{:016x}", fp.short())
}

fn streak_key(p: &Pair) -> String {
    format!(
        "streak:{}:{}:{}",
        p.tool,
        short_hex(&p.args),
        short_hex(&p.result)
    )
}

fn batch_key(sig: &Fingerprint) -> String {
    format!("batch:{}", short_hex(sig))
}

fn tool_list(tools: &[String]) -> String {
    tools
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// pi-repetition-guard's call key: tool name plus the normalised input (`null` → empty, a
/// string as is, anything else as JSON with keys sorted recursively, i.e. the call
/// fingerprint the bus already computed). The one difference from the seed: a string input
/// whose text happens to be the JSON of an object input does not collide with it.
pub(crate) fn window_key(tool: &str, args: &Value, call_fp: &Fingerprint) -> Fingerprint {
    match args {
        Value::Null => Fingerprint::combine(&[b"s", tool.as_bytes(), b""]),
        Value::String(s) => Fingerprint::combine(&[b"s", tool.as_bytes(), s.as_bytes()]),
        _ => *call_fp,
    }
}

/// Words that make a shell command an observation of something that changes on its own
/// (waiting, tailing a log, asking for a status): its output advancing a little is progress.
const POLLING_WORDS: &[&str] = &[
    "sleep", "tail", "watch", "wait", "status", "logs", "log", "ps", "top", "ping", "curl", "wget",
    "get", "describe", "poll", "progress", "uptime", "date", "du", "df",
];

/// Whether a call's `command` (or `cmd`) argument reads as a polling shell command: on its
/// first line, one of the first two words of a pipeline segment (split on `;`, `&`, `|`) is one
/// of [`POLLING_WORDS`] (`sleep 30; kubectl get pods`, `tail -20 build.log`, `git status`).
/// Only the first line counts, so code carried in an edit command never makes it a poll.
pub(crate) fn is_polling_command(args: &Value) -> bool {
    let Some(cmd) = ["command", "cmd"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
    else {
        return false;
    };
    let line = cmd.lines().next().unwrap_or("");
    let line = line.get(..line.len().min(500)).unwrap_or(line);
    line.split([';', '&', '|']).any(|segment| {
        segment
            .split_whitespace()
            .take(2)
            .any(|w| POLLING_WORDS.contains(&w.trim_start_matches("./")))
    })
}

/// OpenClaw's known poll calls: `command_status` (any arguments), or `process` with action
/// `poll` or `log`.
pub(crate) fn is_known_poll(tool: &str, args: &Value) -> bool {
    match tool {
        "command_status" => true,
        "process" => matches!(
            args.get("action").and_then(Value::as_str),
            Some("poll" | "log")
        ),
        _ => false,
    }
}

/// The run scope of OpenClaw's history: the host's run id when it gave one, else the run
/// index.
fn scope_of(cx: &Cx<'_>) -> u64 {
    match cx.run_id() {
        Some(id) => Fingerprint::combine(&[b"id", id.as_bytes()]).short(),
        None => Fingerprint::combine(&[b"run", &cx.run().to_le_bytes()]).short(),
    }
}
