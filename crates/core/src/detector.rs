//! The `Detector` trait and the context the bus hands it.

use crate::event::{Event, Interest};
use crate::finding::Finding;
use crate::fingerprint::Fingerprint;
use crate::shape::{Echo, ResultShape};
use crate::tools::ToolKind;
use serde_json::Value;
use std::cell::OnceCell;

/// Facts about a tool call that the bus computes once, for every detector.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallInfo {
    /// Tool name as called.
    pub tool: String,
    /// SHA-256 of the canonical JSON of the arguments.
    pub args_fp: Fingerprint,
    /// SHA-256 over the tool name and the args fingerprint: "the same call".
    pub call_fp: Fingerprint,
    /// The batch (issuing assistant message index).
    pub batch: u64,
    /// 0-based position of this call in its batch.
    pub batch_pos: u32,
    /// Sequence number of the `ToolCall` event.
    pub seq: u64,
    /// What the tools table says the call is (a poll, a send, …).
    #[serde(default)]
    pub kind: ToolKind,
}

/// Facts about a tool result that the bus computes once, for every detector. (The exact
/// identity of its text and image count, pi-loop-guard's rule, is
/// [`crate::result_fingerprint`] of the event's `content` and `images`: most detectors never
/// read it, so the bus does not hash every result for them.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultInfo {
    /// The call this result answers (reconstructed from the result alone if the call was
    /// never seen; then `orphan` is true).
    pub call: CallInfo,
    /// The call was not seen (unknown id).
    pub orphan: bool,
    /// How many calls the result's batch has (known once its results arrive).
    pub batch_size: u32,
    /// Fingerprint after the tool's normaliser removed volatile fields. Computed only on a
    /// bus where a detector interested in results declared [`Facts::NORMALIZED_RESULT`]
    /// (every detector that does not override [`Detector::facts`] does); elsewhere it is
    /// `Fingerprint::default()`.
    pub norm_fp: Fingerprint,
    /// The source's error flag.
    pub is_error: bool,
    /// Image blocks counted.
    pub images: u32,
}

/// Where the session stands when a user turn or a run begins: what the bus tells every
/// detector through [`Detector::reset_run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunScope<'a> {
    /// The user-turn index (after the event).
    pub turn: u64,
    /// The run index (after the event).
    pub run: u64,
    /// The host's run id of the current run, if it gave one.
    pub run_id: Option<&'a str>,
    /// A new user turn began.
    pub new_turn: bool,
    /// A new run began (`RunStart`).
    pub new_run: bool,
}

/// Facts a detector reads beyond those the bus always computes ([`CallInfo`], and
/// [`ResultInfo`] but its `norm_fp`). The bus computes only the union of the facts its
/// detectors declare (a fact no detector reads costs nothing), each at most once per event.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Facts(u32);

impl Facts {
    /// No extra facts.
    pub const NONE: Facts = Facts(0);
    /// [`Cx::result_shape`]: the bus keeps each call's [`Echo`] until its result, and shapes
    /// the result when a detector first asks.
    pub const RESULT_SHAPE: Facts = Facts(1);
    /// [`ResultInfo::norm_fp`]: the bus runs the tool's normaliser over every result.
    pub const NORMALIZED_RESULT: Facts = Facts(2);
    /// Every fact.
    pub const ALL: Facts = Facts(3);

    /// Both sets.
    #[must_use]
    pub fn union(self, other: Facts) -> Facts {
        Facts(self.0 | other.0)
    }

    /// Whether every fact of `other` is in the set.
    pub fn contains(self, other: Facts) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The inputs of a result's shape, and the shape once a detector asked for it.
pub(crate) struct LazyShape<'a> {
    pub(crate) echo: Option<Echo>,
    pub(crate) content: &'a str,
    pub(crate) text_pass: &'a crate::normalize::TextPass,
    pub(crate) cell: OnceCell<ResultShape>,
    /// The buffers the shape is computed in (the bus's, from the previous result): the
    /// shaped text, and the numbers that become the shape's.
    pub(crate) buffers: std::cell::Cell<crate::shape::ShapeBuffers>,
}

impl std::fmt::Debug for LazyShape<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyShape")
            .field("echo", &self.echo)
            .field("content", &self.content)
            .field("text_pass", &self.text_pass)
            .field("cell", &self.cell)
            .finish_non_exhaustive()
    }
}

/// What the bus hands a detector with each event: logical time, precomputed facts about
/// tool events, and the place to report findings.
#[derive(Debug)]
pub struct Cx<'a> {
    pub(crate) seq: u64,
    pub(crate) turn: u64,
    pub(crate) run: u64,
    pub(crate) run_id: Option<&'a str>,
    pub(crate) message: u64,
    pub(crate) new_turn: bool,
    pub(crate) char_offset: u64,
    pub(crate) results: u64,
    pub(crate) call: Option<&'a CallInfo>,
    pub(crate) result: Option<&'a ResultInfo>,
    pub(crate) details: Option<&'a Value>,
    pub(crate) shape: Option<&'a LazyShape<'a>>,
    /// Whether the result's text reads as an error message, once a detector asked.
    pub(crate) error_text: std::cell::OnceCell<bool>,
    pub(crate) findings: &'a mut Vec<Finding>,
}

impl<'a> Cx<'a> {
    /// Builds a context by hand (tests, third-party harnesses). The bus builds its own.
    #[allow(clippy::too_many_arguments)]
    pub fn manual(seq: u64, findings: &'a mut Vec<Finding>) -> Cx<'a> {
        Cx {
            seq,
            turn: 0,
            run: 0,
            run_id: None,
            message: 0,
            new_turn: false,
            char_offset: 0,
            results: 0,
            call: None,
            result: None,
            details: None,
            shape: None,
            error_text: std::cell::OnceCell::new(),
            findings,
        }
    }

    /// The event's sequence number in this session (0-based, every event counts).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// How many tool results the session has seen before this event (this one included when
    /// it is a result), the results of calls the guard refused included: whether the host
    /// sends results at all, and whether one came between two calls.
    pub fn results(&self) -> u64 {
        self.results
    }

    /// The user-turn index (0 before the first real user message).
    pub fn turn(&self) -> u64 {
        self.turn
    }

    /// The run index (counts `RunStart` events).
    pub fn run(&self) -> u64 {
        self.run
    }

    /// The host's run id of the current run, if it gave one.
    pub fn run_id(&self) -> Option<&str> {
        self.run_id
    }

    /// The assistant-message index (counts `MessageStart` events).
    pub fn message(&self) -> u64 {
        self.message
    }

    /// For a `User` event: whether it starts a new user turn (not the guard's own steer, not
    /// a word-for-word repeat of the previous harness message).
    pub fn is_new_turn(&self) -> bool {
        self.new_turn
    }

    /// For a `TextDelta`: how many characters of this message came before the delta (both
    /// streams together).
    pub fn char_offset(&self) -> u64 {
        self.char_offset
    }

    /// For a `ToolCall`: the precomputed call facts.
    pub fn call(&self) -> Option<&'a CallInfo> {
        self.call
    }

    /// For a `ToolResult`: the precomputed result facts (its call included).
    pub fn result(&self) -> Option<&'a ResultInfo> {
        self.result
    }

    /// For a `ToolResult`: the structured details, if any.
    pub fn details(&self) -> Option<&'a Value> {
        self.details
    }

    /// For a `ToolResult`, on a bus whose detectors declared [`Facts::RESULT_SHAPE`]: the
    /// result's [`shape::result_shape`](crate::shape::result_shape) with the echo of the call
    /// the bus paired it with (no echo for an orphan). Computed once, by the first detector
    /// that asks.
    pub fn result_shape(&self) -> Option<&'a ResultShape> {
        let s = self.shape?;
        Some(s.cell.get_or_init(|| {
            let none = Echo::none();
            let mut buffers = s.buffers.take();
            let shape = crate::shape::result_shape_in(
                s.echo.as_ref().unwrap_or(&none),
                s.content,
                Some(s.text_pass),
                &mut buffers,
            );
            s.buffers.set(buffers);
            shape
        }))
    }

    /// The shape of a result whose text is `content`: the bus's ([`Cx::result_shape`], with
    /// the paired call's echo) when `with_echo` holds and the bus computed one, otherwise the
    /// shape without an echo (a detector that pairs calls itself, or a bus without the fact).
    pub fn result_shape_or_plain(
        &self,
        with_echo: bool,
        content: &str,
    ) -> std::borrow::Cow<'a, ResultShape> {
        match self.result_shape().filter(|_| with_echo) {
            Some(rs) => std::borrow::Cow::Borrowed(rs),
            None => std::borrow::Cow::Owned(crate::shape::result_shape(&Echo::none(), content)),
        }
    }

    /// Whether `content`, the text of this event's result, reads as an error message
    /// ([`crate::shape::looks_like_error`]): read once per result, whichever detectors ask.
    pub fn looks_like_error(&self, content: &str) -> bool {
        *self
            .error_text
            .get_or_init(|| crate::shape::looks_like_error(content))
    }

    /// Reports a finding.
    pub fn report(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// Test helper: sets the call facts.
    pub fn set_call(&mut self, call: &'a CallInfo) {
        self.call = Some(call);
    }

    /// Test helper: sets the result facts.
    pub fn set_result(&mut self, result: &'a ResultInfo) {
        self.result = Some(result);
    }
}

/// Errors from saving or restoring a detector's state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The snapshot does not fit this detector.
    #[error("state of detector `{detector}` cannot be restored: {message}")]
    Invalid {
        /// The detector name.
        detector: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The detector does not support snapshots.
    #[error("detector `{0}` does not support state snapshots")]
    Unsupported(&'static str),
}

/// A loop detector: consumes the events it is interested in, keeps bounded state, and reports
/// [`Finding`]s. Detectors judge; the orchestrator decides.
///
/// ```
/// use loopguard_core::{Cx, Detector, Event, EventKind, Finding, Interest, Level};
///
/// /// Warns when the same tool is called three times in a row, whatever the arguments.
/// #[derive(Default)]
/// struct ThreeInARow { last: Option<String>, run: u32 }
///
/// impl Detector for ThreeInARow {
///     fn name(&self) -> &'static str { "three-in-a-row" }
///     fn interest(&self) -> Interest { Interest::of(&[EventKind::ToolCall]) }
///     fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
///         if let Event::ToolCall { tool, .. } = event {
///             if self.last.as_deref() == Some(*tool) { self.run += 1 } else { self.run = 1 }
///             self.last = Some(tool.to_string());
///             if self.run >= 3 {
///                 cx.report(Finding::new(self.name(), Level::Warning, self.run, *tool, "vary your calls"));
///             }
///         }
///     }
/// }
/// ```
pub trait Detector: Send + 'static {
    /// The registered name (kebab-case), e.g. `generic-repeat`.
    fn name(&self) -> &'static str;

    /// The event kinds this detector wants. Asked once when the bus is built; the bus never
    /// calls a detector with other kinds.
    fn interest(&self) -> Interest {
        Interest::ALL
    }

    /// The facts beyond [`CallInfo`] and [`ResultInfo`] this detector reads from its [`Cx`].
    /// Asked once when the bus is built; the default is every fact.
    fn facts(&self) -> Facts {
        Facts::ALL
    }

    /// Observes one event. Must do bounded work and keep bounded state.
    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>);

    /// Drops the state that belonged to the user turn or the run that just ended: the one
    /// per-run reset every detector uses. The bus calls it on every detector, whatever its
    /// interest, when an event begins a new user turn (`scope.new_turn`) or a new run
    /// (`scope.new_run`), before that event reaches any detector, and also when the guard
    /// records the event without showing it ([`crate::Bus::observe_vetoed`]): run-scoped
    /// state follows the bus's lifecycle. Default: nothing to reset.
    fn reset_run(&mut self, scope: &RunScope<'_>) {
        let _ = scope;
    }

    /// Serialises the detector's whole state.
    fn snapshot(&self) -> Result<Value, StateError> {
        Err(StateError::Unsupported(self.name()))
    }

    /// Restores state saved by [`Detector::snapshot`].
    fn restore(&mut self, state: &Value) -> Result<(), StateError> {
        let _ = state;
        Err(StateError::Unsupported(self.name()))
    }
}

/// Implements [`Detector::snapshot`] / [`Detector::restore`] for a detector whose state is
/// one serde value: `snapshot_via_serde!(self.state)` inside the `impl Detector` block.
#[macro_export]
macro_rules! snapshot_via_serde {
    ($($field:ident).+) => {
        fn snapshot(&self) -> ::std::result::Result<$crate::__private::serde_json::Value, $crate::StateError> {
            $crate::__private::serde_json::to_value(&self.$($field).+).map_err(|e| $crate::StateError::Invalid {
                detector: self.name(),
                message: e.to_string(),
            })
        }
        fn restore(&mut self, state: &$crate::__private::serde_json::Value) -> ::std::result::Result<(), $crate::StateError> {
            // Read from the value in place (no copy of the whole tree first).
            self.$($field).+ = <_ as $crate::__private::serde::Deserialize>::deserialize(state).map_err(|e: $crate::__private::serde_json::Error| $crate::StateError::Invalid {
                detector: self.name(),
                message: e.to_string(),
            })?;
            Ok(())
        }
    };
}

/// Implements the declarations every detector writes the same way, inside its
/// `impl Detector` block: [`Detector::name`] (`name`), [`Detector::interest`] (the listed
/// [`EventKind`](crate::EventKind)s), with `facts:`, [`Detector::facts`] (a [`Facts`]
/// constant, e.g. `NONE`), and with `run_scoped:`, [`Detector::reset_run`] clearing that
/// field (state scoped to the run and the user turn, e.g. `state.history`).
///
/// ```
/// use loopguard_core::{Cx, Detector, Event, EventKind, Facts, Interest};
/// struct Quiet;
/// impl Detector for Quiet {
///     loopguard_core::detector_basics!(name: "quiet", interest: [ToolCall, ToolResult], facts: NONE);
///     fn observe(&mut self, _: &Event<'_>, _: &mut Cx<'_>) {}
/// }
/// assert_eq!(Quiet.name(), "quiet");
/// assert_eq!(Quiet.facts(), Facts::NONE);
/// assert_eq!(Quiet.interest(), Interest::of(&[EventKind::ToolCall, EventKind::ToolResult]));
/// ```
#[macro_export]
macro_rules! detector_basics {
    (
        name: $name:expr,
        interest: [$($kind:ident),* $(,)?]
        $(, facts: $facts:ident)?
        $(, run_scoped: $($field:ident).+)?
        $(,)?
    ) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn interest(&self) -> $crate::Interest {
            $crate::Interest::of(&[$($crate::EventKind::$kind),*])
        }

        $(
            fn facts(&self) -> $crate::Facts {
                $crate::Facts::$facts
            }
        )?

        $(
            fn reset_run(&mut self, _: &$crate::RunScope<'_>) {
                self.$($field).+.clear();
            }
        )?
    };
}

impl std::fmt::Debug for dyn Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Detector({})", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nop;
    impl Detector for Nop {
        fn name(&self) -> &'static str {
            "nop"
        }
        fn observe(&mut self, _: &Event<'_>, _: &mut Cx<'_>) {}
    }

    #[test]
    fn detector_is_object_safe() {
        let d: Box<dyn Detector> = Box::new(Nop);
        assert_eq!(d.name(), "nop");
        assert!(matches!(d.snapshot(), Err(StateError::Unsupported("nop"))));
    }
}
