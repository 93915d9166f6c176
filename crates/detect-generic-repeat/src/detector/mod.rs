//! The `generic-repeat` state machine: the consecutive streak (pi-loop-guard), the whole-batch
//! streak, the near-duplicate streak, the sliding window (pi-repetition-guard) and OpenClaw's
//! generic thresholds.

use crate::{ResultIdentity, Settings, NAME};
use loopguard_core::shape::TokenSet;
use loopguard_core::{
    result_fingerprint, CallInfo, Cx, Detector, Event, EventKind, Facts, Fingerprint, Interest,
    ResultInfo, RunScope, MAX_EVIDENCE,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use batch::BatchStreak;
use fruitless::{search_terms, FruitlessStreak};
use near::NearStreak;
use openclaw::Record;
use polls::{acts, is_polling_command, is_wait_command, only_looks, probes};
use rereads::Rereads;
use similar::{call_words, frame, PendingCall, SimilarStreak, MAX_PENDING};
use streak::Streak;
use window::Window;

mod batch;
mod fruitless;
mod near;
mod openclaw;
mod polls;
mod rereads;
mod similar;
mod streak;
#[cfg(test)]
mod tests;
mod window;

/// How many recent known poll call identities are remembered.
const MAX_POLLS: usize = 16;

/// The `generic-repeat` detector (LG001).
#[derive(Debug)]
pub struct GenericRepeat {
    settings: Settings,
    state: State,
}

/// One completed (call, result) pair: kept with an owned tool name, handed from rule to
/// rule with the tool name borrowed from the result's facts (a `Pair<&str>`), so that a
/// result no rule keeps copies nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Pair<T = String> {
    tool: T,
    call: Fingerprint,
    args: Fingerprint,
    result: Fingerprint,
}

impl Pair {
    /// Whether this kept pair is `other`.
    fn is(&self, other: &Pair<&str>) -> bool {
        self.as_ref() == *other
    }

    /// This pair with its tool name borrowed.
    fn as_ref(&self) -> Pair<&str> {
        Pair {
            tool: &self.tool,
            call: self.call,
            args: self.args,
            result: self.result,
        }
    }
}

impl Pair<&str> {
    /// The pair to keep, its tool name written into `reuse`'s buffer when there is one.
    fn owned(&self, reuse: Option<Pair>) -> Pair {
        let mut tool = reuse.map(|p| p.tool).unwrap_or_default();
        tool.clear();
        tool.push_str(self.tool);
        Pair {
            tool,
            call: self.call,
            args: self.args,
            result: self.result,
        }
    }
}

/// All mutable state (one serde value, for snapshots).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    streak: Streak,
    batch: BatchStreak,
    near: NearStreak,
    /// The most recent calls (`near-duplicate.recurrence-window` of them).
    recent: VecDeque<Fingerprint>,
    /// Recent calls that are polls by their kind or their command ([`GenericRepeat::is_poll`]
    /// adds those that are polls by their answers).
    #[serde(default)]
    polls: VecDeque<Fingerprint>,
    /// Recent calls with an empty command ([`is_wait_command`]): each becomes a poll when it is
    /// answered without an error, and stops being one when it is answered with an error.
    #[serde(default)]
    waits: VecDeque<Fingerprint>,
    /// Recent calls that are polls by how they were answered (an empty command the shell
    /// answered; a call whose result was a transient failure, a rate limit or an overloaded
    /// service, [`loopguard_core::shape::is_transient_failure`]): polls while their answers
    /// say so, no longer once another answer comes.
    #[serde(default)]
    polls_by_answer: VecDeque<Fingerprint>,
    window: Window,
    history: VecDeque<Record>,
    /// Calls seen (not ignored), for the spans messages report.
    #[serde(default)]
    calls: u64,
    #[serde(default)]
    pending: VecDeque<PendingCall>,
    #[serde(default)]
    similar: SimilarStreak,
    #[serde(default)]
    fruitless: FruitlessStreak,
    #[serde(default)]
    rereads: Rereads,
    /// Recent calls (their sequence numbers) that act ([`acts`]), kept when silent results
    /// are transparent and no pending record keeps the fact: a silent one ends the streak of
    /// another call.
    #[serde(default)]
    acting: VecDeque<u64>,
}

impl GenericRepeat {
    /// Whether these settings tell polls apart (their own thresholds, or left out of the
    /// near-duplicate streak); the seeds' settings do not, and keep no list of them.
    fn tracks_polls(&self) -> bool {
        self.settings.polls.is_some()
            || self
                .settings
                .near_duplicate
                .as_ref()
                .is_some_and(|nd| nd.skip_known_polls)
    }

    /// A call was answered, and the answer says whether calling it again is waiting (`poll`):
    /// it becomes a poll, or a call that was a poll only by its answers stops being one (a
    /// poll by its kind or its command stays one).
    fn answered_poll(&mut self, call: Fingerprint, poll: bool) {
        let marked = self.state.polls_by_answer.iter().position(|p| *p == call);
        match (marked, poll) {
            (None, true) if !self.state.polls.contains(&call) => {
                push_capped(&mut self.state.polls_by_answer, call, MAX_POLLS);
            }
            (Some(i), false) => {
                self.state.polls_by_answer.remove(i);
            }
            _ => {}
        }
    }

    /// Whether `call` is a poll: by its kind or its command (`polls`), or by its answers
    /// (`polls_by_answer`). Each list owns its own calls.
    fn is_poll(&self, call: &Fingerprint) -> bool {
        self.state.polls.contains(call) || self.state.polls_by_answer.contains(call)
    }

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

    /// The result's identity: its exact text and image count ([`result_fingerprint`], hashed
    /// here, for the only rule that reads it), or the bus's normalised fingerprint.
    fn identity(&self, r: &ResultInfo, content: &str, images: u32) -> Fingerprint {
        match self.settings.result_identity {
            ResultIdentity::Raw => result_fingerprint(content, images),
            ResultIdentity::Normalized => r.norm_fp,
        }
    }

    fn reset_turn(&mut self) {
        self.state.streak = Streak::default();
        self.state.batch = BatchStreak::default();
        self.state.near = NearStreak::default();
        self.state.similar = SimilarStreak::default();
        self.state.fruitless = FruitlessStreak::default();
        self.state.rereads.clear();
        self.state.recent.clear();
        self.clear_window();
    }

    fn on_call(&mut self, event: &Event<'_>, call: &CallInfo, cx: &mut Cx<'_>) {
        let Event::ToolCall { tool, args, .. } = event else {
            return;
        };
        if self.ignored_tool(tool) {
            return;
        }
        self.state.calls = self.state.calls.saturating_add(1);
        // Whether the shell line polls or waits: read once, for the rules that ask.
        let tracks_polls = self.tracks_polls();
        let shell_asked = tracks_polls || self.settings.rereads.is_some();
        let polling = shell_asked && is_polling_command(args);
        let waiting = shell_asked && is_wait_command(args);
        let keeps_facts = self.settings.similar_calls.is_some() || self.settings.rereads.is_some();
        let silence_transparent = self.settings.streak && self.settings.ignore_empty_results;
        let acting = (keeps_facts || silence_transparent) && acts(args);
        if silence_transparent && acting && !keeps_facts {
            push_capped(&mut self.state.acting, call.seq, MAX_PENDING);
        }
        if keeps_facts {
            let terms = if self
                .settings
                .similar_calls
                .as_ref()
                .is_some_and(|sc| sc.fruitless_warn_threshold > 0)
            {
                search_terms(args)
            } else {
                Vec::new()
            };
            let (skeleton, object) = call_words(args);
            let (frame, numbers) = frame(args);
            let pending = PendingCall {
                seq: call.seq,
                tokens: TokenSet::of_args(args),
                skeleton,
                object,
                probe: probes(args),
                frame,
                numbers,
                acts: acting,
                terms,
                looks: self.settings.rereads.is_some()
                    && only_looks(tool, args, acting, polling, waiting),
            };
            push_capped(&mut self.state.pending, pending, MAX_PENDING);
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
        let known_poll = self.is_poll(&call.call_fp);
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
        let poll = tracks_polls && (call.kind.is_poll() || polling);
        if poll && !self.state.polls.contains(&call.call_fp) {
            push_capped(&mut self.state.polls, call.call_fp, MAX_POLLS);
        }
        if tracks_polls && waiting && !self.state.waits.contains(&call.call_fp) {
            push_capped(&mut self.state.waits, call.call_fp, MAX_POLLS);
        }
        if self.settings.near_duplicate.is_some() && !(poll && near_skips_polls) {
            critical |= self.check_near(call, cx, critical);
        }
        if self.settings.window.is_some() {
            critical |= self.window_call(tool, args, call, cx);
        }
        if !critical && self.settings.similar_calls.is_some() {
            critical |= self.check_similar_block(tool, cx);
        }
        if self.settings.openclaw.is_some() {
            // Not recorded in OpenClaw's history when an earlier rule blocks the call.
            self.openclaw_call(tool, call, cx, critical);
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
    }

    fn on_result(&mut self, result: &ResultInfo, content: &str, images: u32, cx: &mut Cx<'_>) {
        // A host's note that nothing was printed is no output either.
        let empty = images == 0 && loopguard_core::shape::is_silent(content);
        if result.orphan {
            // The call was never seen, so its arguments are unknown: not a usable identity.
            return;
        }
        // The result of a call the guard refused never reaches a detector (the guard's veto
        // records it with `Bus::observe_vetoed`), so every result seen here is an outcome.
        let ignored = self.ignored_tool(&result.call.tool);
        let skipped_error = self.settings.ignore_errors && result.is_error;
        let skipped_empty = self.settings.ignore_empty_results && empty;
        // Listed only without pending records (empty otherwise): taken off at its result.
        let listed_acting = match self.state.acting.iter().position(|s| *s == result.call.seq) {
            Some(i) => self.state.acting.remove(i).is_some(),
            None => false,
        };
        let counted = !(ignored || skipped_error || skipped_empty);
        let pair = Pair {
            tool: result.call.tool.as_str(),
            call: result.call.call_fp,
            args: result.call.args_fp,
            result: self.identity(result, content, images),
        };
        // Whether the answer makes the call a poll: an empty command the shell answered
        // (a wait), or an answer repeated that is a transient failure. The text is read only
        // for a repeated answer, or the next answer of a call that is a poll by its answers.
        if self.tracks_polls() && !ignored {
            let wait = self.state.waits.contains(&pair.call);
            let marked = self.state.polls_by_answer.contains(&pair.call);
            let repeats = self
                .state
                .streak
                .last
                .as_ref()
                .is_some_and(|p| p.call == pair.call && p.result == pair.result);
            if wait || marked || repeats {
                let poll = (wait && !result.is_error)
                    || ((marked || repeats)
                        && loopguard_core::shape::is_transient_failure(content));
                self.answered_poll(pair.call, poll);
            }
        }
        let known_poll = self.is_poll(&result.call.call_fp);
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
                    self.near_result(&pair, content, result.is_error, cx);
                }
            }
        }
        // Whether the call acts: its pending record says so, or (without pending records)
        // the short list of calls that act.
        let mut pending_acts = false;
        if self.settings.similar_calls.is_some() || self.settings.rereads.is_some() {
            // The call's pending record, taken once for every rule that reads it.
            let pending = match self
                .state
                .pending
                .iter()
                .position(|p| p.seq == result.call.seq)
            {
                Some(i) => self.state.pending.remove(i),
                None => None,
            };
            pending_acts = pending.as_ref().is_some_and(|p| p.acts);
            if self.settings.rereads.is_some() && !ignored {
                if known_poll || !pending.as_ref().is_some_and(|p| p.looks) {
                    // A poll waits, and anything else may change what a look sees.
                    self.state.rereads.clear();
                } else {
                    // A failure is same-failure's, a silent look the search rules': each only
                    // takes its place among the looks.
                    let answer = (!(result.is_error || empty)).then(|| pair.result.short());
                    self.reread_result(&result.call.tool, pair.call.short(), answer, cx);
                }
            }
            if known_poll {
                self.state.similar = SimilarStreak::default();
                self.state.fruitless = FruitlessStreak::default();
            } else if let (Some(p), false, true) =
                (pending, ignored, self.settings.similar_calls.is_some())
            {
                // A search that found nothing is that, whether or not the host flagged it.
                self.fruitless_result(&result.call.tool, &p.terms, p.probe, content, cx);
                if !skipped_error {
                    self.similar_result(
                        &result.call.tool,
                        p,
                        result.call.call_fp.short(),
                        content,
                        images,
                        result.is_error,
                        cx,
                    );
                }
            }
        }
        if result.batch_size > 1 {
            self.batch_result(result, counted.then_some(pair), cx);
            return;
        }
        if !counted {
            // A silent call that acts (`sed -i`, a script that writes) may have changed what
            // the streak's call answers: the streak ends there. Any other transparent result
            // (an ignored tool, an ignored error, a silent look) neither advances nor breaks
            // anything.
            if skipped_empty && (pending_acts || listed_acting) && !ignored && !skipped_error {
                self.state.streak = Streak::default();
            }
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
}

impl Detector for GenericRepeat {
    fn name(&self) -> &'static str {
        NAME
    }

    fn facts(&self) -> Facts {
        let shape = if self.settings.similar_calls.is_some() {
            Facts::RESULT_SHAPE
        } else {
            Facts::NONE
        };
        // Every rule reads a result through `identity`: the raw identity is hashed here.
        match self.settings.result_identity {
            ResultIdentity::Normalized => shape.union(Facts::NORMALIZED_RESULT),
            ResultIdentity::Raw => shape,
        }
    }

    fn interest(&self) -> Interest {
        Interest::of(&[
            EventKind::RunStart,
            EventKind::ToolCall,
            EventKind::ToolResult,
            EventKind::Compaction,
        ])
    }

    fn reset_run(&mut self, scope: &RunScope<'_>) {
        if scope.new_turn {
            self.reset_turn();
        }
        if scope.new_run {
            self.clear_window();
        }
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            // The open batch ends with the run; its state was reset in `reset_run`.
            Event::RunStart { .. } => self.finish_batch(cx),
            // The context was cut: looking again at what it held is remembering, not a loop.
            Event::Compaction { .. } => self.state.rereads.clear(),
            Event::ToolCall { .. } => {
                if let Some(call) = cx.call() {
                    self.on_call(event, call, cx);
                }
            }
            Event::ToolResult {
                content, images, ..
            } => {
                if let Some(result) = cx.result() {
                    self.on_result(result, content, *images, cx);
                }
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

fn push_bounded(q: &mut VecDeque<u64>, seq: u64) {
    push_capped(q, seq, MAX_EVIDENCE);
}

/// Appends `item` to `q`, dropping the oldest first when `q` holds `cap` already.
fn push_capped<T>(q: &mut VecDeque<T>, item: T, cap: usize) {
    if q.len() >= cap {
        q.pop_front();
    }
    q.push_back(item);
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

fn short_hex(fp: &Fingerprint) -> String {
    format!("{:016x}", fp.short())
}
