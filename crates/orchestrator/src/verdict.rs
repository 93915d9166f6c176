//! What the guard answers for each event.

use loopguard_core::Finding;
use serde::Serialize;

/// The action the host should take.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Let it pass.
    Continue,
    /// Inject a corrective message (see [`Verdict::message`] and [`Verdict::deliver`]).
    Steer,
    /// Compact the context, then continue.
    Compact,
    /// Do not execute this tool call; return [`Verdict::message`] to the model as its error.
    Block,
    /// End the request (stable code in [`Verdict::code`]).
    Abort,
}

impl Action {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Continue => "continue",
            Action::Steer => "steer",
            Action::Compact => "compact",
            Action::Block => "block",
            Action::Abort => "abort",
        }
    }
}

/// When a steer should be delivered.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Before the next model call (Pi's `deliverAs: "steer"`).
    #[default]
    Now,
    /// When the host is idle (after an abort), where it starts a fresh turn and so never
    /// strands.
    AtSettle,
}

/// The guard's answer to one event.
///
/// `action == Continue` with findings means the guard chose not to act on them (a warning
/// de-duplicated, the steer budget given up, a second text finding in an already aborted
/// message).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Verdict {
    /// What to do.
    pub action: Action,
    /// Steer text, block reason (the error the model sees) or abort message.
    pub message: Option<String>,
    /// For a block: also end the agent loop (Pi's `terminate` hint).
    pub terminate: bool,
    /// For a block: refuse every call of the current batch, not only this one.
    pub whole_batch: bool,
    /// For an abort: a stable code such as `loop_aborted:generic-repeat` (or the finding's own,
    /// e.g. `compaction_loop_persisted`). For a block: the denial tag `tool_loop:<detector>`
    /// (`tool_loop:batch` for a call refused with its batch).
    pub code: Option<String>,
    /// For a steer or a compaction: when to deliver it (the compaction's `message` is the
    /// "continue" steer to send once the context is compacted).
    pub deliver: Delivery,
    /// The findings behind the verdict.
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// Let it pass.
    pub fn pass() -> Verdict {
        Verdict {
            action: Action::Continue,
            message: None,
            terminate: false,
            whole_batch: false,
            code: None,
            deliver: Delivery::Now,
            findings: Vec::new(),
        }
    }

    /// Whether the action is `Continue`.
    pub fn is_continue(&self) -> bool {
        self.action == Action::Continue
    }

    /// What to do.
    pub fn action(&self) -> Action {
        self.action
    }

    /// Steer text, block reason (the error the model sees) or abort message.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The stable code of a block (`tool_loop:<detector>`) or an abort
    /// (`loop_aborted:<detector>`).
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// For a block: also end the agent loop.
    pub fn terminate(&self) -> bool {
        self.terminate
    }

    /// For a block: refuse every call of the current batch.
    pub fn whole_batch(&self) -> bool {
        self.whole_batch
    }

    /// For a steer or a compaction: when to deliver it.
    pub fn deliver(&self) -> Delivery {
        self.deliver
    }

    /// The findings behind the verdict.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }
}
