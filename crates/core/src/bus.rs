//! The event bus: hands each event to the detectors interested in its kind, with the facts
//! every detector needs computed once, and collects their findings.

use crate::detector::{CallInfo, Cx, Detector, Facts, LazyShape, ResultInfo, RunScope, StateError};
use crate::event::{Event, EventKind, Origin};
use crate::finding::Finding;
use crate::fingerprint::{args_fingerprint, Fingerprint};
use crate::normalize::{Normalizers, ResultInput, TextPass};
use crate::pool::StringPool;
use crate::shape::{Echo, InlinePool};
use crate::tools::{ToolKind, Tools};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;

/// How many issued-but-unanswered calls the bus remembers (the oldest are forgotten first).
pub const MAX_PENDING_CALLS: usize = 256;
/// How many of the guard's own recent messages the bus remembers, to tell them from user turns.
pub const MAX_OWN_MESSAGES: usize = 16;
const MAX_BATCHES: usize = 16;
/// Ids of answered calls remembered, so that a second result for one of them is known as a
/// duplicate.
const MAX_ANSWERED_IDS: usize = 64;

/// A stable 64-bit hash of a call id (ids are short, and the hash is kept in snapshots, so it
/// must not change between processes).
fn id_hash(id: &str) -> u64 {
    crate::fnv1a(crate::FNV1A_START, id.as_bytes())
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Pending {
    id: String,
    call: CallInfo,
    /// The call's arguments when the tool's normaliser reads them, else `null`.
    args: Value,
    /// The pieces of the arguments its result may echo, when a detector reads result shapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    echo: Option<Echo>,
    /// The guard refused the call: its result is the guard's refusal, never shown to a
    /// detector.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    refused: bool,
}

/// The bus's own bookkeeping (serialisable with the detectors' state).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct BusState {
    seq: u64,
    turn: u64,
    run: u64,
    run_id: Option<String>,
    message: u64,
    messages_started: u64,
    char_offset: u64,
    last_user: Option<Fingerprint>,
    own_messages: VecDeque<Fingerprint>,
    pending: VecDeque<Pending>,
    batches: VecDeque<(u64, u32)>,
    /// The batch a call without an explicit batch joins: a new one at each `MessageStart`,
    /// and at a call that follows a result (the host asked the model again in between).
    #[serde(default)]
    inferred_batch: u64,
    #[serde(default)]
    result_since_call: bool,
    /// Tool results seen so far, those of refused calls included.
    #[serde(default)]
    results: u64,
    /// The ids of the latest results paired with a call ([`id_hash`]).
    #[serde(default)]
    answered_ids: VecDeque<u64>,
    /// Whether the host sends message events: then a batch is one assistant message, and a
    /// refused call does not end it.
    #[serde(default)]
    messages_seen: bool,
    /// Where the last event stands in the lifecycle.
    #[serde(default)]
    last: Lifecycle,
}

/// Where an event stands in the session's lifecycle, as the bus (its one owner) assigned it.
///
/// The batch rule, for hosts of every shape:
/// - a call with an explicit batch id belongs to that batch;
/// - otherwise, when the host sends message events, to the assistant message it came in;
/// - otherwise a batch is a run of calls with nothing answered between them: a result, or the
///   guard's refusal of a call ([`Bus::note_refused`]), ends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lifecycle {
    /// The event's sequence number (0-based; every event counts, refused ones too).
    pub seq: u64,
    /// The user-turn index.
    pub turn: u64,
    /// The run index (counts `RunStart` events).
    pub run: u64,
    /// The assistant-message index.
    pub message: u64,
    /// For a tool call: its batch.
    pub batch: Option<u64>,
    /// For a tool call shown to the detectors: its identity ([`call_fingerprint`]).
    #[serde(default)]
    pub call: Option<Fingerprint>,
    /// The event started a new user turn.
    pub new_turn: bool,
    /// The event started a new run.
    pub new_run: bool,
}

/// Identity of a call: the tool name and its args fingerprint.
pub fn call_fingerprint(tool: &str, args_fp: &Fingerprint) -> Fingerprint {
    Fingerprint::combine(&[tool.as_bytes(), args_fp.as_bytes()])
}

/// Most spare strings the bus keeps (a call's id and tool name each take one).
const MAX_SPARE_STRINGS: usize = 8;

/// The buffers of answered calls and shaped results, which the next ones are written into:
/// once warmed up, the bus allocates nothing per call for its own bookkeeping. Not part of
/// the state (a snapshot neither holds nor needs them).
#[derive(Default)]
struct Spare {
    /// Emptied strings (call ids, tool names).
    strings: StringPool<MAX_SPARE_STRINGS>,
    /// The echo of the last answered call.
    echo: Option<Echo>,
    /// Emptied strings for the echoes' inline pieces.
    inline: InlinePool,
    /// The text pass's buffer.
    text: String,
    /// The result shape's buffers: its text, its numbers, its cut lines.
    shape: crate::shape::ShapeBuffers,
}

impl Spare {
    /// The echo of `args`, in the spare echo's buffers when there is one.
    fn echo(&mut self, args: &Value) -> Echo {
        let mut e = self.echo.take().unwrap_or_else(Echo::none);
        e.refill(args, &mut self.inline);
        e
    }
}

/// A call reported again while it waits for its result ([`Bus::announced_again`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Announced {
    /// The sequence number of the call as first reported.
    pub seq: u64,
    /// The guard refused it.
    pub refused: bool,
}

/// The event bus. Built once per session from the enabled detectors.
pub struct Bus {
    detectors: Vec<Box<dyn Detector>>,
    index: Vec<Vec<usize>>,
    normalizers: Normalizers,
    tools: Tools,
    /// Some detector interested in results reads their shapes.
    shapes: bool,
    /// Some detector interested in results reads their normalised fingerprint.
    normalized: bool,
    /// Results reach the detectors as their plain text ([`Bus::set_plain_results`]).
    plain_results: bool,
    state: BusState,
    spare: Spare,
}

impl fmt::Debug for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bus")
            .field("detectors", &self.detector_names())
            .field("seq", &self.state.seq)
            .finish()
    }
}

impl Bus {
    /// A bus over `detectors` using the built-in normalisers.
    pub fn new(detectors: Vec<Box<dyn Detector>>) -> Bus {
        Bus::with_normalizers(detectors, Normalizers::builtin())
    }

    /// A bus over `detectors` using `normalizers` and the built-in tools table.
    pub fn with_normalizers(detectors: Vec<Box<dyn Detector>>, normalizers: Normalizers) -> Bus {
        Bus::with_tools(detectors, Tools::builtin(), normalizers)
    }

    /// A bus over `detectors` that stamps each call's kind from `tools` and normalises results
    /// with `normalizers` (usually [`Tools::normalizers`] of the same table).
    pub fn with_tools(
        detectors: Vec<Box<dyn Detector>>,
        tools: Tools,
        normalizers: Normalizers,
    ) -> Bus {
        let mut index = vec![Vec::new(); EventKind::ALL.len()];
        let mut shapes = false;
        let mut normalized = false;
        for (i, d) in detectors.iter().enumerate() {
            let interest = d.interest();
            if interest.contains(EventKind::ToolResult) {
                let facts = d.facts();
                shapes |= facts.contains(Facts::RESULT_SHAPE);
                normalized |= facts.contains(Facts::NORMALIZED_RESULT);
            }
            for k in EventKind::ALL {
                if interest.contains(k) {
                    index[k as usize].push(i);
                }
            }
        }
        Bus {
            detectors,
            index,
            normalizers,
            tools,
            shapes,
            normalized,
            plain_results: false,
            state: BusState::default(),
            spare: Spare::default(),
        }
    }

    /// Whether every detector reads a tool result as its plain text, the host's wrapping
    /// taken off ([`crate::wrapping::plain`]), rather than as the host sent it (off by
    /// default; the seeds read results as sent).
    pub fn set_plain_results(&mut self, on: bool) {
        self.plain_results = on;
    }

    /// The tools table the bus stamps call kinds from.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// Names of the detectors on this bus, in order.
    pub fn detector_names(&self) -> Vec<&'static str> {
        self.detectors.iter().map(|d| d.name()).collect()
    }

    /// How many events the bus has seen (the next event's sequence number).
    pub fn seq(&self) -> u64 {
        self.state.seq
    }

    /// Characters of the current assistant message streamed so far (text and thinking
    /// deltas since its `MessageStart`, the last one observed included).
    pub fn char_offset(&self) -> u64 {
        self.state.char_offset
    }

    /// The current user-turn index.
    pub fn turn(&self) -> u64 {
        self.state.turn
    }

    /// The current assistant-message index.
    pub fn message(&self) -> u64 {
        self.state.message
    }

    /// Where the last observed event stands in the lifecycle.
    pub fn lifecycle(&self) -> &Lifecycle {
        &self.state.last
    }

    /// The batch a tool call with the host's `explicit` batch id (if any) would join if it
    /// came now (see [`Lifecycle`] for the rule). Changes nothing.
    pub fn batch_for(&self, explicit: Option<u64>) -> u64 {
        // Explicit batch ids keep the low half; inferred ones the high half, so the two
        // never meet.
        explicit.unwrap_or_else(|| {
            let next = if self.state.result_since_call {
                self.state.inferred_batch.wrapping_add(1)
            } else {
                self.state.inferred_batch
            };
            (1 << 63) | next
        })
    }

    /// The guard refused the last tool call: its result, whatever id the host gives it (see
    /// [`Bus::answers_refused`]), is the guard's refusal. For hosts that send no message
    /// events, the refusal is the call's answer, so the next call starts a new batch.
    pub fn note_refused(&mut self) {
        if !self.state.messages_seen {
            self.state.result_since_call = true;
        }
        let seq = self.state.last.seq;
        if let Some(p) = self.state.pending.back_mut().filter(|p| p.call.seq == seq) {
            p.refused = true;
        }
    }

    /// The guard refused every call of `batch` still waiting for its result.
    pub fn refuse_batch(&mut self, batch: u64) {
        for p in self
            .state
            .pending
            .iter_mut()
            .filter(|p| p.call.batch == batch)
        {
            p.refused = true;
        }
    }

    /// Whether a result with `id` and `tool` answers a call the guard refused: the call the
    /// bus pairs it with (the waiting call with its id, else the one call waiting, as
    /// [`Bus::observe`] pairs them) is a refused one. The guard does not show such a result to
    /// the detectors ([`Bus::observe_vetoed`]): the call never ran.
    /// When the bus cannot tell which of several waiting calls a result answers, it answers a
    /// refused one if every candidate was refused.
    pub fn answers_refused(&self, id: &str, tool: &str) -> bool {
        // Most of the time no waiting call was refused: nothing to pair.
        if !self.state.pending.iter().any(|p| p.refused) {
            return false;
        }
        match self.paired(id, tool) {
            Some(i) => self.state.pending.get(i).is_some_and(|p| p.refused),
            None => self.refused_candidate(id, tool).is_some(),
        }
    }

    /// For a result the bus cannot pair: the oldest waiting call of its tool, if every such
    /// call was refused (whichever it answers, it answers a refusal).
    fn refused_candidate(&self, id: &str, tool: &str) -> Option<usize> {
        let mut candidates = self.candidates(id, tool)?;
        let (first, p) = candidates.next()?;
        (p.refused && candidates.all(|(_, p)| p.refused)).then_some(first)
    }

    /// The waiting calls (of `tool`, when it names one) a result with `id` that names none of
    /// them may answer; none when `id` is that of a call already answered (a duplicate).
    fn candidates<'s>(
        &'s self,
        id: &str,
        tool: &'s str,
    ) -> Option<impl Iterator<Item = (usize, &'s Pending)> + 's> {
        if self.state.answered_ids.contains(&id_hash(id)) {
            return None;
        }
        Some(
            self.state
                .pending
                .iter()
                .enumerate()
                .filter(move |(_, p)| tool.is_empty() || p.call.tool == tool),
        )
    }

    /// Whether a tool call with this `id`, `tool`, `args` and explicit `batch` is a call
    /// already reported, reported again (a host that reports a call when it starts and again
    /// when its arguments are complete): a call of the same batch with the same non-empty id,
    /// tool and arguments waits for its result (refused or not: the guard gives the second
    /// report the first one's verdict). Where no result came yet, only right after the first
    /// report: on a host that sends no results a call waits for ever, and an id used again
    /// later may be a new call.
    pub fn announced_again(
        &self,
        id: &str,
        tool: &str,
        args: &Value,
        batch: Option<u64>,
    ) -> Option<Announced> {
        if id.is_empty() {
            return None;
        }
        let (results, last) = (self.state.results, self.state.last.seq);
        let mut same_id = self
            .state
            .pending
            .iter()
            .filter(|p| p.id == id && p.call.tool == tool && (results > 0 || p.call.seq == last))
            .peekable();
        same_id.peek()?;
        let batch = self.batch_for(batch);
        let call = call_fingerprint(tool, &args_fingerprint(args));
        same_id
            .find(|p| p.call.batch == batch && p.call.call_fp == call)
            .map(|p| Announced {
                seq: p.call.seq,
                refused: p.refused,
            })
    }

    /// Records a call announced again ([`Bus::announced_again`]) in the lifecycle: it takes
    /// a sequence number, and nothing else changes (no detector sees it, no batch grows).
    pub fn observe_announced_again(&mut self) {
        let seq = self.state.seq;
        self.state.seq += 1;
        let last = self.state.last;
        self.finish(seq, false, false, last.batch, last.call);
    }

    /// Records `event` in the lifecycle (sequence number, turn, run, message, batch) without
    /// showing it to any detector: a call the guard refused with its batch, or the result of
    /// a call the guard refused (which never ran).
    pub fn observe_vetoed(&mut self, event: &Event<'_>) {
        self.advance(event, false);
    }

    /// [`Bus::observe_vetoed`] for a call the guard refuses without showing it to the
    /// detectors (a call of a batch already refused): it waits, refused, for its result.
    pub fn observe_refused(&mut self, event: &Event<'_>) {
        self.advance(event, false);
        if let Event::ToolCall { id, tool, .. } = event {
            let last = self.state.last;
            let call = CallInfo {
                tool: self.spare.strings.take(tool),
                args_fp: Fingerprint::default(),
                call_fp: Fingerprint::default(),
                batch: last.batch.unwrap_or_default(),
                batch_pos: 0,
                seq: last.seq,
                kind: ToolKind::default(),
            };
            let id = self.spare.strings.take(id);
            self.push_pending(Pending {
                id,
                call,
                args: Value::Null,
                echo: None,
                refused: true,
            });
        }
    }

    /// Adds a waiting call, forgetting the oldest beyond [`MAX_PENDING_CALLS`].
    fn push_pending(&mut self, p: Pending) {
        if self.state.pending.len() >= MAX_PENDING_CALLS {
            if let Some(old) = self.state.pending.pop_front() {
                self.spare.strings.keep(old.id);
                self.spare.strings.keep(old.call.tool);
            }
        }
        self.state.pending.push_back(p);
    }

    /// The waiting call a result with `id` and `tool` answers: the one with its id (and tool,
    /// when the result names one), else [`Bus::lone_pending`].
    fn paired(&self, id: &str, tool: &str) -> Option<usize> {
        self.state
            .pending
            .iter()
            .position(|p| p.id == id && (tool.is_empty() || p.call.tool == tool))
            .or_else(|| self.lone_pending(id, tool))
    }

    /// Remembers a message the guard itself sends (a steer), so that when the host delivers it
    /// back as a user message it does not start a new turn.
    pub fn note_own_message(&mut self, text: &str) {
        let fp = Fingerprint::of_bytes(text.trim().as_bytes());
        if self.state.own_messages.len() >= MAX_OWN_MESSAGES {
            self.state.own_messages.pop_front();
        }
        self.state.own_messages.push_back(fp);
    }

    /// Whether a `User` event with `text` and `origin` would start a new user turn now.
    pub fn would_start_turn(&self, text: &str, origin: Origin) -> bool {
        self.starts_turn(&Fingerprint::of_bytes(text.trim().as_bytes()), origin)
    }

    fn starts_turn(&self, fp: &Fingerprint, origin: Origin) -> bool {
        match origin {
            Origin::Human => true,
            Origin::Guard => false,
            Origin::Harness | Origin::Unknown => {
                if self.state.own_messages.contains(fp) {
                    return false;
                }
                self.state.last_user != Some(*fp)
            }
        }
    }

    /// Feeds one event to the interested detectors and returns their findings.
    pub fn observe(&mut self, event: &Event<'_>) -> Vec<Finding> {
        self.advance(event, true)
    }

    /// Moves the lifecycle on by `event` and, with `dispatch`, shows it to the interested
    /// detectors. A text delta, the most frequent event by far (a streamed answer is
    /// thousands of them; no fact to compute, no turn or run to start), goes to its own path
    /// without entering the frame of the general one.
    #[inline]
    fn advance(&mut self, event: &Event<'_>, dispatch: bool) -> Vec<Finding> {
        if let Event::TextDelta { delta, .. } = event {
            return self.advance_text(event, delta, dispatch);
        }
        self.advance_event(event, dispatch)
    }

    /// [`Bus::advance`] for every event but a text delta.
    fn advance_event(&mut self, event: &Event<'_>, dispatch: bool) -> Vec<Finding> {
        let mut decoded = None;
        let event = event.with_decoded_args(&mut decoded);
        let mut plain = None;
        let unwrapped;
        let event = match self
            .plain_results
            .then(|| event.with_plain_result(&mut plain))
        {
            Some(std::borrow::Cow::Owned(e)) => {
                unwrapped = e;
                &unwrapped
            }
            _ => &*event,
        };
        let mut findings = Vec::new();
        let seq = self.state.seq;
        self.state.seq += 1;
        let kind = event.kind();
        let mut new_run = false;
        let mut batch_of_call = None;

        let mut new_turn = false;
        // For a call: its identity (its facts are the newest pending call's).
        let mut call_fp: Option<Fingerprint> = None;
        let mut result_info: Option<ResultInfo> = None;
        let mut details: Option<&Value> = None;
        let mut shape: Option<LazyShape<'_>> = None;
        // The text pass of a result's content, shared by its normaliser and its shape.
        let text_pass = TextPass::with_buffer(std::mem::take(&mut self.spare.text));

        match event {
            Event::User { text, origin } => {
                let fp = Fingerprint::of_bytes(text.trim().as_bytes());
                new_turn = self.starts_turn(&fp, *origin);
                let own = match self.state.own_messages.iter().position(|f| *f == fp) {
                    Some(pos) => {
                        self.state.own_messages.remove(pos);
                        true
                    }
                    None => *origin == Origin::Guard,
                };
                if new_turn {
                    self.state.turn += 1;
                }
                // The guard's own steer is not the harness's text: a harness repeating its nudge
                // right after a steer is still a repeat.
                if !own {
                    self.state.last_user = Some(fp);
                }
            }
            Event::RunStart { run_id } => {
                new_run = true;
                self.state.run += 1;
                self.state.run_id = run_id.map(str::to_owned);
            }
            Event::MessageStart => {
                self.state.messages_seen = true;
                self.state.inferred_batch += 1;
                self.state.result_since_call = false;
                self.state.message = self.state.messages_started;
                self.state.messages_started += 1;
                self.state.char_offset = 0;
            }
            Event::ToolCall {
                id,
                tool,
                args,
                batch,
            } => {
                let batch = self.batch_for(*batch);
                if self.state.result_since_call {
                    self.state.inferred_batch = self.state.inferred_batch.wrapping_add(1);
                    self.state.result_since_call = false;
                }
                batch_of_call = Some(batch);
                let pos = self.bump_batch(batch);
                if !dispatch {
                    self.finish(seq, new_turn, new_run, batch_of_call, None);
                    return findings;
                }
                let args_fp = args_fingerprint(args);
                let call = CallInfo {
                    tool: self.spare.strings.take(tool),
                    args_fp,
                    call_fp: call_fingerprint(tool, &args_fp),
                    batch,
                    batch_pos: pos,
                    seq,
                    kind: self.tools.kind(tool, Some(args)),
                };
                call_fp = Some(call.call_fp);
                let echo = self.shapes.then(|| self.spare.echo(args));
                // Only a normaliser that reads the arguments needs them at result time, and
                // only when a detector reads normalised fingerprints: a `write`'s whole file
                // content is not copied for nothing.
                let args = if self.normalized && self.normalizers.uses_args(tool) {
                    (*args).clone()
                } else {
                    Value::Null
                };
                let id = self.spare.strings.take(id);
                self.push_pending(Pending {
                    id,
                    call,
                    args,
                    echo,
                    refused: false,
                });
            }
            Event::ToolResult {
                id,
                tool,
                content,
                is_error,
                images,
                details: d,
            } => {
                details = *d;
                self.state.result_since_call = true;
                self.state.results += 1;
                let found = self.paired(id, tool);
                // A vetoed result the bus cannot pair (see `Bus::answers_refused`) takes the
                // place of one of the refused calls it may answer.
                let found = if dispatch {
                    found
                } else {
                    found.or_else(|| self.refused_candidate(id, tool))
                };
                // A result for a call already answered, with nothing waiting under its id, is
                // the host reporting that result again: it answers nothing and no detector
                // sees it (as a call of unknown arguments it would be one more call, and a
                // result reported twice a cycle of two). An empty id (a host that numbers no
                // calls) names no call, so it is never a duplicate.
                let duplicate = found.is_none()
                    && !id.is_empty()
                    && self.state.answered_ids.contains(&id_hash(id));
                if found.is_some() && !id.is_empty() {
                    if self.state.answered_ids.len() >= MAX_ANSWERED_IDS {
                        self.state.answered_ids.pop_front();
                    }
                    self.state.answered_ids.push_back(id_hash(id));
                }
                if !dispatch || duplicate {
                    if let Some(p) = found.and_then(|i| self.state.pending.remove(i)) {
                        self.spare.strings.keep(p.id);
                        self.spare.strings.keep(p.call.tool);
                    }
                    self.finish(seq, new_turn, new_run, None, None);
                    return findings;
                }
                let (call, args, orphan, echo) =
                    match found.and_then(|i| self.state.pending.remove(i)) {
                        Some(p) => {
                            self.spare.strings.keep(p.id);
                            (p.call, Some(p.args), false, p.echo)
                        }
                        None => {
                            let args_fp = args_fingerprint(&Value::Null);
                            let batch = (1 << 63) | self.state.inferred_batch;
                            (
                                CallInfo {
                                    tool: (*tool).to_owned(),
                                    args_fp,
                                    call_fp: call_fingerprint(tool, &args_fp),
                                    batch,
                                    batch_pos: 0,
                                    seq,
                                    kind: self.tools.kind(tool, None),
                                },
                                None,
                                true,
                                None,
                            )
                        }
                    };
                // The result's shape, with the paired call's echo (none for an orphan).
                if self.shapes {
                    shape = Some(LazyShape {
                        echo,
                        content,
                        text_pass: &text_pass,
                        cell: std::cell::OnceCell::new(),
                        buffers: std::cell::Cell::new(std::mem::take(&mut self.spare.shape)),
                    });
                }
                let batch_size = self
                    .state
                    .batches
                    .iter()
                    .find(|(b, _)| *b == call.batch)
                    .map(|(_, n)| *n)
                    .unwrap_or(1);
                // A result that names no tool takes its call's.
                let tool: &str = if tool.is_empty() { &call.tool } else { tool };
                let input = ResultInput {
                    tool,
                    args: args.as_ref(),
                    content,
                    is_error: *is_error,
                    images: *images,
                    details: *d,
                    text_pass: Some(&text_pass),
                };
                let norm_fp = if self.normalized {
                    self.normalizers.fingerprint(&input)
                } else {
                    Fingerprint::default()
                };
                result_info = Some(ResultInfo {
                    call,
                    orphan,
                    batch_size,
                    norm_fp,
                    is_error: *is_error,
                    images: *images,
                });
            }
            _ => {}
        }
        if new_turn || new_run {
            let scope = RunScope {
                turn: self.state.turn,
                run: self.state.run,
                run_id: self.state.run_id.as_deref(),
                new_turn,
                new_run,
            };
            for d in &mut self.detectors {
                d.reset_run(&scope);
            }
        }

        self.finish(seq, new_turn, new_run, batch_of_call, call_fp);
        if !dispatch {
            return findings;
        }
        let call_info = call_fp.and_then(|_| self.state.pending.back().map(|p| &p.call));
        let mut cx = Cx {
            seq,
            turn: self.state.turn,
            run: self.state.run,
            run_id: self.state.run_id.as_deref(),
            message: self.state.message,
            new_turn,
            char_offset: 0,
            results: self.state.results,
            call: call_info,
            result: result_info.as_ref(),
            details,
            shape: shape.as_ref(),
            error_text: std::cell::OnceCell::new(),
            findings: &mut findings,
        };
        // A result that names no tool reaches the detectors with its call's.
        let named;
        let event = match (event, result_info.as_ref()) {
            (
                Event::ToolResult {
                    id,
                    tool: "",
                    content,
                    is_error,
                    images,
                    details,
                },
                Some(r),
            ) => {
                named = Event::ToolResult {
                    id,
                    tool: &r.call.tool,
                    content,
                    is_error: *is_error,
                    images: *images,
                    details: *details,
                };
                &named
            }
            _ => event,
        };
        deliver(
            &mut self.detectors,
            &self.index[kind as usize],
            event,
            &mut cx,
        );
        // The result's buffers serve the next call and result.
        if let Some(r) = result_info {
            self.spare.strings.keep(r.call.tool);
        }
        if let Some(s) = shape {
            let mut buffers = s.buffers.into_inner();
            if let Some(rs) = s.cell.into_inner() {
                buffers.numbers = rs.numbers;
            }
            self.spare.shape = buffers;
            if s.echo.is_some() {
                self.spare.echo = s.echo;
            }
        }
        self.spare.text = text_pass.into_buffer();
        findings
    }

    /// [`Bus::advance`] for a text delta: the message's character offset moves on, and the
    /// interested detectors observe it.
    #[inline]
    fn advance_text(&mut self, event: &Event<'_>, delta: &str, dispatch: bool) -> Vec<Finding> {
        let mut findings = Vec::new();
        let seq = self.state.seq;
        self.state.seq += 1;
        let char_offset = self.state.char_offset;
        // Most deltas are ASCII: their length is their character count.
        let chars = if delta.is_ascii() {
            delta.len()
        } else {
            delta.chars().count()
        };
        self.state.char_offset += chars as u64;
        self.finish(seq, false, false, None, None);
        if !dispatch {
            return findings;
        }
        // No call, result or shape: a text delta has none of those facts.
        let mut cx = Cx {
            turn: self.state.turn,
            run: self.state.run,
            run_id: self.state.run_id.as_deref(),
            message: self.state.message,
            char_offset,
            ..Cx::manual(seq, &mut findings)
        };
        let kind = event.kind() as usize;
        deliver(&mut self.detectors, &self.index[kind], event, &mut cx);
        findings
    }

    fn finish(
        &mut self,
        seq: u64,
        new_turn: bool,
        new_run: bool,
        batch: Option<u64>,
        call: Option<Fingerprint>,
    ) {
        self.state.last = Lifecycle {
            seq,
            turn: self.state.turn,
            run: self.state.run,
            message: self.state.message,
            batch,
            call,
            new_turn,
            new_run,
        };
    }

    /// The call a result whose id names no waiting call answers, for a host that numbers its
    /// results its own way: the one call waiting for a result (of the result's tool, when it
    /// names one), if there is exactly one and the id is not that of a call already answered
    /// (a duplicate stays an orphan). Several waiting calls are not guessed between.
    fn lone_pending(&self, id: &str, tool: &str) -> Option<usize> {
        let mut waiting = self.candidates(id, tool)?;
        match (waiting.next(), waiting.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }

    fn bump_batch(&mut self, batch: u64) -> u32 {
        if let Some(entry) = self.state.batches.iter_mut().find(|(b, _)| *b == batch) {
            entry.1 += 1;
            return entry.1 - 1;
        }
        if self.state.batches.len() >= MAX_BATCHES {
            self.state.batches.pop_front();
        }
        self.state.batches.push_back((batch, 1));
        0
    }

    /// Serialises the bus's bookkeeping and every detector's state.
    pub fn snapshot(&self) -> Result<Value, StateError> {
        let mut dets = serde_json::Map::new();
        for d in &self.detectors {
            dets.insert(d.name().to_owned(), d.snapshot()?);
        }
        let bus = serde_json::to_value(&self.state).map_err(|e| StateError::Invalid {
            detector: "bus",
            message: e.to_string(),
        })?;
        Ok(serde_json::json!({ "bus": bus, "detectors": Value::Object(dets) }))
    }

    /// Restores a snapshot taken from a bus with the same detectors.
    pub fn restore(&mut self, state: &Value) -> Result<(), StateError> {
        let bus = state.get("bus").ok_or_else(|| StateError::Invalid {
            detector: "bus",
            message: "missing `bus`".into(),
        })?;
        let bus_state: BusState = BusState::deserialize(bus).map_err(|e| StateError::Invalid {
            detector: "bus",
            message: e.to_string(),
        })?;
        if bus_state.pending.len() > MAX_PENDING_CALLS
            || bus_state.own_messages.len() > MAX_OWN_MESSAGES
            || bus_state.batches.len() > MAX_BATCHES
            || bus_state.answered_ids.len() > MAX_ANSWERED_IDS
        {
            return Err(StateError::Invalid {
                detector: "bus",
                message: "state exceeds its bounds".into(),
            });
        }
        let dets = state
            .get("detectors")
            .and_then(Value::as_object)
            .ok_or_else(|| StateError::Invalid {
                detector: "bus",
                message: "missing `detectors`".into(),
            })?;
        for d in &mut self.detectors {
            let s = dets.get(d.name()).ok_or_else(|| StateError::Invalid {
                detector: d.name(),
                message: "no state saved for this detector".into(),
            })?;
            d.restore(s)?;
        }
        self.state = bus_state;
        Ok(())
    }
}

/// Hands `event` to the detectors `ids` (those interested in its kind), in order.
fn deliver(detectors: &mut [Box<dyn Detector>], ids: &[usize], event: &Event<'_>, cx: &mut Cx<'_>) {
    for &i in ids {
        if let Some(d) = detectors.get_mut(i) {
            d.observe(event, cx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Interest, Stream};
    use crate::finding::Level;
    use serde_json::json;

    /// Records the kinds it sees and reports one finding per tool result.
    struct Probe {
        interest: Interest,
        seen: Seen,
    }

    impl Detector for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn interest(&self) -> Interest {
            self.interest
        }
        fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
            self.seen.lock().unwrap().push((event.kind(), cx.seq()));
            if let Some(r) = cx.result() {
                let msg = format!("{}:{}:{}", r.call.tool, r.batch_size, r.orphan);
                cx.report(Finding::new("probe", Level::Warning, 1, "k", msg));
            }
        }
    }

    type Seen = std::sync::Arc<std::sync::Mutex<Vec<(EventKind, u64)>>>;

    fn probe(interest: Interest) -> (Bus, Seen) {
        let seen = std::sync::Arc::default();
        let bus = Bus::new(vec![Box::new(Probe {
            interest,
            seen: std::sync::Arc::clone(&seen),
        })]);
        (bus, seen)
    }

    #[test]
    fn a_text_delta_moves_the_message_offset_by_its_characters() {
        // Through the text path (observed or vetoed), by characters, not bytes; a new
        // message starts again at 0. The general body of `advance` would leave it still.
        let (mut bus, _) = probe(Interest::of(&[EventKind::TextDelta]));
        let delta = |stream, delta| Event::TextDelta { stream, delta };
        bus.observe(&Event::MessageStart);
        bus.observe(&delta(Stream::Text, "The header wörks"));
        assert_eq!(bus.char_offset(), 16);
        bus.observe(&delta(Stream::Thinking, " — so "));
        assert_eq!(bus.char_offset(), 22);
        bus.observe_vetoed(&delta(Stream::Text, "done."));
        assert_eq!(bus.char_offset(), 27);
        bus.observe(&Event::MessageStart);
        assert_eq!(bus.char_offset(), 0);
        bus.observe(&delta(Stream::Text, "ok"));
        assert_eq!(bus.char_offset(), 2);
    }

    #[test]
    fn only_interested_kinds_are_delivered() {
        let (mut bus, seen) = probe(Interest::of(&[EventKind::ToolResult]));
        let args = json!({});
        bus.observe(&Event::MessageStart);
        bus.observe(&Event::tool_call("1", "read", &args));
        let f = bus.observe(&Event::tool_result("1", "read", "x", false));
        assert_eq!(*seen.lock().unwrap(), vec![(EventKind::ToolResult, 2)]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "read:1:false");
    }

    #[test]
    fn a_result_with_an_unknown_id_answers_the_one_waiting_call() {
        // A host that numbers its results its own way: with one call waiting, a result whose
        // id names no call is that call's (of the result's tool, or any when it names none).
        let (mut bus, _) = probe(Interest::of(&[EventKind::ToolResult]));
        let args = json!({"path": "a.rs"});
        let orphan = |bus: &mut Bus, id: &str, tool: &str| {
            let f = bus.observe(&Event::tool_result(id, tool, "x", false));
            f[0].message.ends_with(":true")
        };
        bus.observe(&Event::tool_call("call-1", "read", &args));
        assert!(!orphan(&mut bus, "result-1", "read"));
        bus.observe(&Event::tool_call("call-2", "read", &args));
        assert!(!orphan(&mut bus, "result-2", ""));
        // Another tool's result is not the waiting call's.
        bus.observe(&Event::tool_call("call-3", "read", &args));
        assert!(orphan(&mut bus, "result-3", "grep"));
        assert!(!orphan(&mut bus, "result-3b", "read"));
        // Two calls waiting: no guess.
        bus.observe(&Event::tool_call("call-4", "read", &args));
        bus.observe(&Event::tool_call("call-5", "read", &args));
        assert!(orphan(&mut bus, "result-4", "read"));
        assert!(!orphan(&mut bus, "call-5", "read"));
        assert!(!orphan(&mut bus, "result-4b", "read"));
        // A second result for an answered call stays a duplicate, one call waiting or not:
        // it answers nothing, and no detector sees it.
        bus.observe(&Event::tool_call("call-6", "read", &args));
        for id in ["call-5", "result-1"] {
            let f = bus.observe(&Event::tool_result(id, "read", "x", false));
            assert!(f.is_empty(), "{id}: {f:?}");
        }
        assert!(!orphan(&mut bus, "call-6", "read"));
        // Without ids (a host that numbers no calls), each result answers the oldest call
        // waiting, and a result with no call waiting is an orphan, not a duplicate.
        bus.observe(&Event::tool_call("", "read", &args));
        bus.observe(&Event::tool_call("", "read", &args));
        assert!(!orphan(&mut bus, "", "read"));
        assert!(!orphan(&mut bus, "", "read"));
        assert!(orphan(&mut bus, "", "read"));
    }

    #[test]
    fn batch_size_counts_calls_of_one_message() {
        let (mut bus, _) = probe(Interest::ALL);
        let args = json!({"p": 1});
        bus.observe(&Event::MessageStart);
        bus.observe(&Event::tool_call("a", "read", &args));
        bus.observe(&Event::tool_call("b", "read", &args));
        let f = bus.observe(&Event::tool_result("b", "read", "x", false));
        assert_eq!(f[0].message, "read:2:false");
        // A result that names no waiting call (another tool's: `a` waits for a `read`
        // result) is an orphan of the current batch.
        let f = bus.observe(&Event::tool_result("zzz", "grep", "x", false));
        assert_eq!(f[0].message, "grep:2:true");
    }

    #[test]
    fn without_messages_or_batch_ids_a_call_after_a_result_starts_a_new_batch() {
        let (mut bus, _) = probe(Interest::ALL);
        let args = json!({"p": 1});
        let mut sizes = Vec::new();
        for id in ["a", "b"] {
            bus.observe(&Event::tool_call(id, "read", &args));
            let f = bus.observe(&Event::tool_result(id, "read", "x", false));
            sizes.push(f[0].message.clone());
        }
        assert_eq!(sizes, vec!["read:1:false", "read:1:false"]);
        // Two calls before any result: one batch of two.
        bus.observe(&Event::tool_call("c", "read", &args));
        bus.observe(&Event::tool_call("d", "read", &args));
        let f = bus.observe(&Event::tool_result("d", "read", "x", false));
        assert_eq!(f[0].message, "read:2:false");
    }

    #[test]
    fn own_steer_and_repeated_harness_text_are_not_new_turns() {
        let (mut bus, _) = probe(Interest::NONE);
        bus.observe(&Event::User {
            text: "fix the bug",
            origin: Origin::Unknown,
        });
        assert_eq!(bus.turn(), 1);
        bus.note_own_message("stop looping");
        bus.observe(&Event::User {
            text: "stop looping",
            origin: Origin::Unknown,
        });
        assert_eq!(bus.turn(), 1);
        bus.observe(&Event::User {
            text: "No tool calls found",
            origin: Origin::Unknown,
        });
        assert_eq!(bus.turn(), 2);
        bus.observe(&Event::User {
            text: "No tool calls found",
            origin: Origin::Unknown,
        });
        assert_eq!(bus.turn(), 2);
        bus.note_own_message("please call a tool");
        bus.observe(&Event::User {
            text: "please call a tool",
            origin: Origin::Unknown,
        });
        bus.observe(&Event::User {
            text: "No tool calls found",
            origin: Origin::Unknown,
        });
        assert_eq!(
            bus.turn(),
            2,
            "a nudge repeated after the guard's steer is still a repeat"
        );
        bus.observe(&Event::User {
            text: "No tool calls found",
            origin: Origin::Human,
        });
        assert_eq!(bus.turn(), 3);
    }

    #[test]
    fn pending_calls_are_bounded() {
        let (mut bus, _) = probe(Interest::NONE);
        let args = json!(null);
        for i in 0..(MAX_PENDING_CALLS * 3) {
            let id = i.to_string();
            bus.observe(&Event::ToolCall {
                id: &id,
                tool: "t",
                args: &args,
                batch: Some(i as u64),
            });
        }
        assert!(bus.state.pending.len() <= MAX_PENDING_CALLS);
        assert!(bus.state.batches.len() <= MAX_BATCHES);
    }

    /// One `reset_run` call: (turn, run, run id, new turn, new run).
    type ResetRecord = (u64, u64, Option<String>, bool, bool);

    /// Records every `reset_run` it is told of.
    struct ResetProbe(std::sync::Arc<std::sync::Mutex<Vec<ResetRecord>>>);

    impl Detector for ResetProbe {
        fn name(&self) -> &'static str {
            "reset-probe"
        }
        fn interest(&self) -> Interest {
            Interest::NONE
        }
        fn reset_run(&mut self, s: &RunScope<'_>) {
            let rec = (
                s.turn,
                s.run,
                s.run_id.map(str::to_owned),
                s.new_turn,
                s.new_run,
            );
            self.0.lock().unwrap().push(rec);
        }
        fn observe(&mut self, _: &Event<'_>, _: &mut Cx<'_>) {}
    }

    #[test]
    fn every_detector_is_reset_at_each_new_turn_and_run_even_vetoed_ones() {
        let seen = std::sync::Arc::default();
        let mut bus = Bus::new(vec![Box::new(ResetProbe(std::sync::Arc::clone(&seen)))]);
        let human = |text| Event::User {
            text,
            origin: Origin::Human,
        };
        bus.observe(&human("a"));
        bus.observe(&Event::RunStart { run_id: Some("r1") });
        bus.observe(&Event::MessageStart);
        // The guard's own steer coming back is no new turn.
        bus.note_own_message("steer");
        bus.observe(&Event::User {
            text: "steer",
            origin: Origin::Harness,
        });
        bus.observe_vetoed(&human("b"));
        bus.observe_vetoed(&Event::RunStart { run_id: None });
        let got = seen.lock().unwrap().clone();
        assert_eq!(
            got,
            vec![
                (1, 0, None, true, false),
                (1, 1, Some("r1".to_owned()), false, true),
                (2, 1, Some("r1".to_owned()), true, false),
                (2, 2, None, false, true),
            ]
        );
    }

    /// Records each result's normalised fingerprint.
    struct NormProbe(std::sync::Arc<std::sync::Mutex<Vec<Fingerprint>>>);

    impl Detector for NormProbe {
        fn name(&self) -> &'static str {
            "norm-probe"
        }
        fn interest(&self) -> Interest {
            Interest::of(&[EventKind::ToolResult])
        }
        fn observe(&mut self, _: &Event<'_>, cx: &mut Cx<'_>) {
            if let Some(r) = cx.result() {
                self.0.lock().unwrap().push(r.norm_fp);
            }
        }
    }

    /// [`NormProbe`] declaring only the facts it is given.
    struct DeclaringProbe(NormProbe, Facts);

    impl Detector for DeclaringProbe {
        fn name(&self) -> &'static str {
            "declaring-probe"
        }
        fn interest(&self) -> Interest {
            self.0.interest()
        }
        fn facts(&self) -> Facts {
            self.1
        }
        fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
            self.0.observe(event, cx);
        }
    }

    /// The built-in normalisers' fingerprint of a `process` result "still running".
    fn still_running(args: Option<&Value>) -> Fingerprint {
        Normalizers::builtin().fingerprint(&ResultInput {
            tool: "process",
            args,
            content: "still running",
            is_error: false,
            images: 0,
            details: None,
            text_pass: None,
        })
    }

    #[test]
    fn results_are_normalised_only_for_a_detector_that_declares_it() {
        let poll_args = json!({"action": "poll", "sessionId": "s"});
        let expected = still_running(Some(&poll_args));
        let run = |facts: &[Facts]| {
            let seen = std::sync::Arc::default();
            let detectors: Vec<Box<dyn Detector>> = facts
                .iter()
                .map(|f| {
                    let probe = NormProbe(std::sync::Arc::clone(&seen));
                    Box::new(DeclaringProbe(probe, *f)) as Box<dyn Detector>
                })
                .collect();
            let mut bus = Bus::new(detectors);
            bus.observe(&Event::tool_call("p", "process", &poll_args));
            let kept = bus.state.pending.front().map(|p| p.args.clone());
            bus.observe(&Event::tool_result("p", "process", "still running", false));
            let seen = seen.lock().unwrap().clone();
            (kept, seen)
        };
        // No detector reads it: no normaliser runs, and the poll's args are not kept for one.
        let (kept, seen) = run(&[Facts::NONE, Facts::RESULT_SHAPE]);
        assert_eq!(kept, Some(Value::Null));
        assert_eq!(seen, vec![Fingerprint::default(); 2]);
        // One detector declares it: every detector sees the same normalised fingerprint.
        let (kept, seen) = run(&[Facts::NONE, Facts::NORMALIZED_RESULT]);
        assert_eq!(kept, Some(poll_args.clone()));
        assert_eq!(seen, vec![expected; 2]);
        // The default declaration (every fact) includes it.
        let (_, seen) = run(&[Facts::ALL]);
        assert_eq!(seen, vec![expected]);
    }

    #[test]
    fn args_are_kept_only_for_normalisers_that_read_them() {
        let seen = std::sync::Arc::default();
        let mut bus = Bus::new(vec![Box::new(NormProbe(std::sync::Arc::clone(&seen)))]);
        let write_args = json!({"path": "a.rs", "content": "x".repeat(10_000)});
        let poll_args = json!({"action": "poll", "sessionId": "s"});
        for (id, tool, args) in [("w", "write", &write_args), ("p", "process", &poll_args)] {
            bus.observe(&Event::tool_call(id, tool, args));
        }
        let kept: Vec<&Value> = bus.state.pending.iter().map(|p| &p.args).collect();
        assert_eq!(kept, vec![&Value::Null, &poll_args]);
        bus.observe(&Event::tool_result("p", "process", "still running", false));
        let expected = still_running(Some(&poll_args));
        let without_args = still_running(None);
        assert_ne!(expected, without_args, "the poll rule must depend on args");
        assert_eq!(*seen.lock().unwrap(), vec![expected]);
    }

    #[test]
    fn snapshot_restores_bookkeeping() {
        let (mut bus, _) = probe(Interest::NONE);
        bus.observe(&Event::User {
            text: "hi",
            origin: Origin::Human,
        });
        let err = bus.snapshot().unwrap_err();
        assert!(matches!(err, StateError::Unsupported("probe")));
        let mut empty = Bus::new(vec![]);
        empty.observe(&Event::User {
            text: "hi",
            origin: Origin::Human,
        });
        let snap = empty.snapshot().unwrap();
        let mut other = Bus::new(vec![]);
        other.restore(&snap).unwrap();
        assert_eq!(other.turn(), 1);
        assert_eq!(other.seq(), 1);
    }

    /// Records the kind stamped on each call's facts.
    type Stamped = std::sync::Arc<std::sync::Mutex<Vec<(ToolKind, Option<ToolKind>)>>>;
    struct Kinds(Stamped);
    impl Detector for Kinds {
        fn name(&self) -> &'static str {
            "kinds"
        }
        fn observe(&mut self, _: &Event<'_>, cx: &mut Cx<'_>) {
            if let Ok(mut v) = self.0.lock() {
                if let Some(c) = cx.call() {
                    v.push((c.kind, None));
                }
                if let Some(r) = cx.result() {
                    v.push((r.call.kind, Some(r.call.kind)));
                }
            }
        }
    }

    #[test]
    fn the_bus_stamps_each_call_with_the_tables_kind() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let table: toml::Table = "[my_status]\nkind = \"poll\"\n".parse().unwrap();
        let tools = Tools::from_config(&table).unwrap();
        let n = tools.normalizers();
        let mut bus = Bus::with_tools(vec![Box::new(Kinds(seen.clone()))], tools, n);
        let poll = json!({"action": "poll"});
        let kill = json!({"action": "kill"});
        let none = json!({});
        for (id, tool, args) in [
            ("1", "process", &poll),
            ("2", "process", &kill),
            ("3", "my_status", &none),
            ("4", "read", &none),
        ] {
            bus.observe(&Event::tool_call(id, tool, args));
            bus.observe(&Event::tool_result(id, tool, "x", false));
        }
        // a result whose call was never seen: its kind from the tool name alone
        bus.observe(&Event::tool_result("9", "command_status", "x", false));
        let v = seen.lock().unwrap().clone();
        let calls: Vec<ToolKind> = v
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(k, _)| *k)
            .collect();
        let results: Vec<ToolKind> = v.iter().filter_map(|(_, r)| *r).collect();
        use ToolKind::{Other, Poll};
        assert_eq!(calls, vec![Poll, Other, Poll, Other]);
        assert_eq!(results, vec![Poll, Other, Poll, Other, Poll]);
    }

    /// Records each result's shape, its tool and its facts.
    type Shapes =
        std::sync::Arc<std::sync::Mutex<Vec<(crate::shape::ResultShape, String, Fingerprint)>>>;
    struct ShapeProbe(Shapes);
    impl Detector for ShapeProbe {
        fn name(&self) -> &'static str {
            "shape-probe"
        }
        fn facts(&self) -> Facts {
            Facts::RESULT_SHAPE.union(Facts::NORMALIZED_RESULT)
        }
        fn observe(&mut self, _: &Event<'_>, cx: &mut Cx<'_>) {
            if let (Some(r), Some(s), Ok(mut v)) = (cx.result(), cx.result_shape(), self.0.lock()) {
                v.push((s.clone(), r.call.tool.clone(), r.norm_fp));
            }
        }
    }

    #[test]
    fn reused_buffers_change_no_fact() {
        // Each call and result is written into the buffers of the one before (echo, text
        // pass, shape, strings): what the detectors read must be what fresh buffers give.
        let seen = Shapes::default();
        let mut bus = Bus::new(vec![Box::new(ShapeProbe(seen.clone()))]);
        let cases = [
            (
                "edit",
                json!({"path": "src/a.rs", "new": "    let x = 41;\n    return x;\n"}),
                "40:    let x = 41;\n41:    return x;\nERROR 3 lines",
            ),
            (
                "read",
                json!({"path": "b.txt", "limit": 200}),
                "line 1 of 7 in b.txt",
            ),
            ("bash", json!({"command": "wc"}), "200 lines in b.txt"),
            ("bash", json!({"command": "ls dir7"}), ""),
            (
                "bash",
                json!({"command": "ls dir7", "n": [1, 2, 3]}),
                "  took 0.3 seconds \n pid 4242 tmpk3j9x2",
            ),
            ("x", json!(null), "plain"),
        ];
        let mut expected = Vec::new();
        for (i, (tool, args, content)) in cases.iter().enumerate() {
            let id = format!("c{i}");
            bus.observe(&Event::tool_call(&id, tool, args));
            bus.observe(&Event::tool_result(&id, tool, content, false));
            let input = ResultInput {
                tool,
                args: None,
                content,
                is_error: false,
                images: 0,
                details: None,
                text_pass: None,
            };
            let norm = Normalizers::builtin().fingerprint(&input);
            let shape = crate::shape::result_shape(&Echo::of_args(args), content);
            expected.push((shape, (*tool).to_owned(), norm));
        }
        // An orphan result: no echo, whatever the previous call's was.
        bus.observe(&Event::tool_result(
            "zz",
            "read",
            "40:    let x = 41;",
            false,
        ));
        let norm = Normalizers::builtin().fingerprint(&ResultInput {
            tool: "read",
            args: None,
            content: "40:    let x = 41;",
            is_error: false,
            images: 0,
            details: None,
            text_pass: None,
        });
        let shape = crate::shape::result_shape(&Echo::none(), "40:    let x = 41;");
        expected.push((shape, "read".to_owned(), norm));
        assert_eq!(*seen.lock().unwrap(), expected);
    }
}
