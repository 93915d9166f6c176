//! Transcript formats: recognising them ([`detect_format`]) and one reader per format.
//!
//! Only loopguard's own JSONL ([`loopguard`]) is read so far. Pi session JSONL, Claude Code
//! session JSONL and Codex rollout JSONL are recognised, so that `scan` can say what it saw;
//! their readers go in this folder as sibling modules and map to the same [`Record`]s.
//!
//! [`Record`]: crate::Record

pub mod claude_code;
pub mod codex;
pub mod loopguard;
pub mod native;
pub mod pi;

pub use native::{FormatIssue, NativeTranscript};

use serde_json::{Map, Value};
use std::fmt;

/// A transcript format.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Format {
    /// loopguard's own JSONL (`docs/contracts/transcript.md`, the corpus format).
    Loopguard,
    /// Pi session JSONL.
    Pi,
    /// Claude Code session JSONL.
    ClaudeCode,
    /// Codex rollout JSONL.
    Codex,
}

impl Format {
    /// The name used in reports: `loopguard`, `pi`, `claude-code`, `codex`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Loopguard => "loopguard",
            Format::Pi => "pi",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const CODEX_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];
const CLAUDE_CODE_TYPES: &[&str] = &[
    "file-history-snapshot",
    "summary",
    "progress",
    "queue-operation",
    "system",
];
const CLAUDE_CODE_KEYS: &[&str] = &["sessionId", "parentUuid", "uuid", "isSidechain"];

/// Recognises the format from the first lines of a file (blank lines are skipped).
///
/// Returns `None` when no line decides it (not JSON, no `type`, an unknown `type`); the
/// loopguard reader then names the line and what is wrong with it.
///
/// ```
/// use loopguard_transcript::{detect_format, Format};
/// assert_eq!(detect_format(&[r#"{"type":"session","id":"s1"}"#]), Some(Format::Loopguard));
/// assert_eq!(detect_format(&[r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}"#]), Some(Format::Pi));
/// assert_eq!(detect_format(&["", "not json"]), None);
/// ```
pub fn detect_format(first_lines: &[&str]) -> Option<Format> {
    first_lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .find_map(|l| match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(obj)) => detect_object(&obj),
            _ => None,
        })
}

/// The format one JSON object line belongs to, if it tells.
pub(crate) fn detect_object(obj: &Map<String, Value>) -> Option<Format> {
    let ty = obj.get("type").and_then(Value::as_str);
    if let Some(ty) = ty {
        if CODEX_TYPES.contains(&ty) {
            return Some(Format::Codex);
        }
    }
    if CLAUDE_CODE_KEYS.iter().any(|k| obj.contains_key(*k))
        || ty.is_some_and(|t| CLAUDE_CODE_TYPES.contains(&t))
    {
        return Some(Format::ClaudeCode);
    }
    if obj.contains_key("instructions") && obj.contains_key("timestamp") && ty.is_none() {
        // Older Codex rollouts open with a bare session header.
        return Some(Format::Codex);
    }
    if obj.contains_key("timestamp") {
        return Some(Format::Pi);
    }
    match ty {
        Some(t) if loopguard::TYPES.contains(&t) => Some(Format::Loopguard),
        _ => None,
    }
}
