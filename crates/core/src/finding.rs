//! What detectors report.

use serde::{Deserialize, Serialize};

/// How sure a detector is that the agent is looping, and so what it suggests.
///
/// Ordered: `Warning < Critical < Fatal`. The orchestrator's policy maps each level to an
/// action: a warning steers, a critical finding blocks the call (or aborts after the
/// policy's number of blocks), a fatal one ends the request at once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Worth telling the model (a steer); the call may still run.
    Warning,
    /// Strong evidence: the orchestrator blocks the call (or aborts, per policy).
    Critical,
    /// Blocking one call cannot help (the loop survived a compaction, the turn stalled): the
    /// orchestrator ends the request.
    Fatal,
}

impl Level {
    /// `"warning"`, `"critical"` or `"fatal"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Warning => "warning",
            Level::Critical => "critical",
            Level::Fatal => "fatal",
        }
    }
}

/// The most event indices a finding keeps as evidence.
pub const MAX_EVIDENCE: usize = 64;

/// One detector's judgement on one event.
///
/// Built with [`Finding::new`] and the `with_*` methods.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The reporting detector's registered name (e.g. `generic-repeat`).
    pub detector: &'static str,
    /// Warning or critical.
    pub level: Level,
    /// How many repetitions the detector counted.
    pub count: u32,
    /// A stable key identifying the loop (same loop, same key), used for de-duplication.
    pub key: String,
    /// The text meant for the model (steer text or block reason).
    pub message: String,
    /// Sequence numbers (bus event indices) of the events that form the loop, oldest first,
    /// at most [`MAX_EVIDENCE`].
    pub evidence: Vec<u64>,
    /// A stable code for a fatal finding's abort (e.g. `compaction_loop_persisted`); `None` lets the
    /// orchestrator use `loop_aborted:<detector>`.
    pub code: Option<String>,
    /// For text findings: the character offset in the message where the detector fired.
    pub offset: Option<u64>,
    /// For text findings: a sample of the repeated text (at most 200 characters).
    pub sample: Option<String>,
    /// The tool involved, when there is one.
    pub tool: Option<String>,
}

impl Finding {
    /// A finding with the required fields; everything else empty.
    pub fn new(
        detector: &'static str,
        level: Level,
        count: u32,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            detector,
            level,
            count,
            key: key.into(),
            message: message.into(),
            evidence: Vec::new(),
            code: None,
            offset: None,
            sample: None,
            tool: None,
        }
    }

    /// Sets the evidence (keeps the newest [`MAX_EVIDENCE`]).
    #[must_use]
    pub fn with_evidence(mut self, mut seqs: Vec<u64>) -> Finding {
        if seqs.len() > MAX_EVIDENCE {
            seqs.drain(..seqs.len() - MAX_EVIDENCE);
        }
        self.evidence = seqs;
        self
    }

    /// Makes the finding fatal (the request ends), with a stable abort code.
    #[must_use]
    pub fn with_abort(mut self, code: impl Into<String>) -> Finding {
        self.level = Level::Fatal;
        self.code = Some(code.into());
        self
    }

    /// Sets the character offset (text findings).
    #[must_use]
    pub fn with_offset(mut self, offset: u64) -> Finding {
        self.offset = Some(offset);
        self
    }

    /// Sets the sample, cut to 200 characters plus "…".
    #[must_use]
    pub fn with_sample(mut self, sample: &str) -> Finding {
        self.sample = Some(truncate_chars(sample, 200));
        self
    }

    /// Sets the tool name.
    #[must_use]
    pub fn with_tool(mut self, tool: impl Into<String>) -> Finding {
        self.tool = Some(tool.into());
        self
    }
}

/// `s` cut to `max` characters, with "…" appended when it was cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => {
            let mut out = s[..i].to_owned();
            out.push('…');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_counts_characters_not_bytes() {
        assert_eq!(truncate_chars("ééé", 2), "éé…");
        assert_eq!(truncate_chars("ab", 2), "ab");
    }

    #[test]
    fn evidence_is_bounded() {
        let f = Finding::new("x", Level::Warning, 1, "k", "m").with_evidence((0..100).collect());
        assert_eq!(f.evidence.len(), MAX_EVIDENCE);
        assert_eq!(f.evidence[0], 36);
    }

    #[test]
    fn levels_are_ordered() {
        assert!(Level::Warning < Level::Critical);
    }
}
