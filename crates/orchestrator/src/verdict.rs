//! What the guard answers for each event.

use loopguard_core::Finding;
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// The kind of a [`Verdict`], ordered from the mildest to the strongest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Let it pass.
    Continue,
    /// Inject a corrective message.
    Steer,
    /// Compact the context, then continue.
    Compact,
    /// Do not execute this tool call; return the reason to the model as its error.
    Block,
    /// End the request.
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
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Before the next model call (Pi's `deliverAs: "steer"`).
    #[default]
    Now,
    /// When the host is idle (after an abort), where it starts a fresh turn and so never
    /// strands.
    AtSettle,
}

/// The guard's answer to one event: each variant carries what its action means.
///
/// `Continue` with findings means the guard chose not to act on them (a warning
/// de-duplicated, the steer budget given up, a second text finding in an already aborted
/// message).
///
/// ```
/// use loopguard_orchestrator::{Action, Verdict};
///
/// fn act(v: &Verdict) -> String {
///     match v {
///         Verdict::Continue { .. } => "run it".to_owned(),
///         Verdict::Steer { message, .. } => format!("tell the model: {message}"),
///         Verdict::Compact { .. } => "compact, then continue".to_owned(),
///         Verdict::Block { reason, terminate, .. } => format!("refuse ({reason}), end loop: {terminate}"),
///         Verdict::Abort { code, .. } => format!("abort with {code}"),
///         _ => "unknown".to_owned(),
///     }
/// }
/// assert_eq!(act(&Verdict::default()), "run it");
/// assert_eq!(Verdict::default().action(), Action::Continue);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// Let it pass.
    Continue {
        /// Findings the guard chose not to act on.
        findings: Vec<Finding>,
    },
    /// Inject `message` into the conversation.
    Steer {
        /// The text the model sees.
        message: String,
        /// When to deliver it.
        deliver: Delivery,
        /// The findings behind it.
        findings: Vec<Finding>,
    },
    /// Compact the context, then send `message` (the "continue" steer).
    Compact {
        /// The steer to send once the context is compacted.
        message: String,
        /// When to compact.
        deliver: Delivery,
        /// The findings behind it.
        findings: Vec<Finding>,
    },
    /// Do not execute this tool call; hand `reason` back to the model as the call's error.
    Block {
        /// The error the model sees.
        reason: String,
        /// The denial tag `tool_loop:<detector>` (`tool_loop:batch` for a call refused with
        /// its batch).
        code: String,
        /// Also end the agent loop (Pi's `terminate` hint).
        terminate: bool,
        /// Refuse every call of the current batch, not only this one.
        whole_batch: bool,
        /// The findings behind it.
        findings: Vec<Finding>,
    },
    /// End the request.
    Abort {
        /// A stable code such as `loop_aborted:generic-repeat` (or the finding's own, e.g.
        /// `compaction_loop_persisted`).
        code: String,
        /// Why, for the user and the logs.
        message: String,
        /// The findings behind it.
        findings: Vec<Finding>,
    },
}

impl Default for Verdict {
    /// `Continue`, with no findings.
    fn default() -> Verdict {
        Verdict::Continue {
            findings: Vec::new(),
        }
    }
}

/// Where a verdict keeps its findings, borrowed as `$v` is (shared or mutable).
macro_rules! findings_of {
    ($v:expr) => {
        match $v {
            Verdict::Continue { findings }
            | Verdict::Steer { findings, .. }
            | Verdict::Compact { findings, .. }
            | Verdict::Block { findings, .. }
            | Verdict::Abort { findings, .. } => findings,
        }
    };
}

impl Verdict {
    /// The kind of verdict.
    pub fn action(&self) -> Action {
        match self {
            Verdict::Continue { .. } => Action::Continue,
            Verdict::Steer { .. } => Action::Steer,
            Verdict::Compact { .. } => Action::Compact,
            Verdict::Block { .. } => Action::Block,
            Verdict::Abort { .. } => Action::Abort,
        }
    }

    /// Whether the action is `Continue`.
    pub fn is_continue(&self) -> bool {
        matches!(self, Verdict::Continue { .. })
    }

    /// Steer text, block reason (the error the model sees) or abort message.
    pub fn message(&self) -> Option<&str> {
        match self {
            Verdict::Continue { .. } => None,
            Verdict::Steer { message, .. }
            | Verdict::Compact { message, .. }
            | Verdict::Abort { message, .. } => Some(message),
            Verdict::Block { reason, .. } => Some(reason),
        }
    }

    /// The stable code of a block (`tool_loop:<detector>`) or an abort
    /// (`loop_aborted:<detector>`).
    pub fn code(&self) -> Option<&str> {
        match self {
            Verdict::Block { code, .. } | Verdict::Abort { code, .. } => Some(code),
            _ => None,
        }
    }

    /// For a block: also end the agent loop.
    pub fn terminate(&self) -> bool {
        matches!(
            self,
            Verdict::Block {
                terminate: true,
                ..
            }
        )
    }

    /// For a block: refuse every call of the current batch.
    pub fn whole_batch(&self) -> bool {
        matches!(
            self,
            Verdict::Block {
                whole_batch: true,
                ..
            }
        )
    }

    /// For a steer or a compaction: when to deliver it (`Now` for the others).
    pub fn deliver(&self) -> Delivery {
        match self {
            Verdict::Steer { deliver, .. } | Verdict::Compact { deliver, .. } => *deliver,
            _ => Delivery::Now,
        }
    }

    /// The findings behind the verdict.
    pub fn findings(&self) -> &[Finding] {
        findings_of!(self)
    }

    /// The findings, moved out.
    pub fn into_findings(mut self) -> Vec<Finding> {
        self.take_findings()
    }

    /// Moves the findings out, leaving none.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        std::mem::take(self.findings_mut())
    }

    /// The same verdict with `findings` behind it.
    pub fn with_findings(mut self, new: Vec<Finding>) -> Verdict {
        *self.findings_mut() = new;
        self
    }

    fn findings_mut(&mut self) -> &mut Vec<Finding> {
        findings_of!(self)
    }
}

/// The flat JSON shape of the sidecar protocol: `action`, `message`, `terminate`,
/// `whole_batch`, `code`, `deliver`, `findings`.
impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Verdict", 7)?;
        s.serialize_field("action", &self.action())?;
        s.serialize_field("message", &self.message())?;
        s.serialize_field("terminate", &self.terminate())?;
        s.serialize_field("whole_batch", &self.whole_batch())?;
        s.serialize_field("code", &self.code())?;
        s.serialize_field("deliver", &self.deliver())?;
        s.serialize_field("findings", self.findings())?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_follow_the_variant() {
        let b = Verdict::Block {
            reason: "stop".into(),
            code: "tool_loop:x".into(),
            terminate: true,
            whole_batch: false,
            findings: vec![],
        };
        assert_eq!(b.action(), Action::Block);
        assert_eq!(b.message(), Some("stop"));
        assert_eq!(b.code(), Some("tool_loop:x"));
        assert!(b.terminate());
        assert!(!b.whole_batch());
        let s = Verdict::Steer {
            message: "vary".into(),
            deliver: Delivery::AtSettle,
            findings: vec![],
        };
        assert_eq!(s.deliver(), Delivery::AtSettle);
        assert_eq!(s.code(), None);
        assert!(!s.terminate());
        let json = serde_json::to_value(&b).unwrap_or_default();
        assert_eq!(json["action"], "block");
        assert_eq!(json["terminate"], true);
        assert_eq!(json["message"], "stop");
    }
}
