//! What can go wrong reading a transcript. Every error names the file, and the line where
//! there is one.

use std::fmt;

/// A transcript could not be read.
///
/// `Display` gives `FILE:LINE: problem`, with `LINE` 1-based as editors count; the
/// 0-based index that `scan` reports as `event` is [`TranscriptError::line_index`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read: {message}")]
    Io {
        /// The file.
        file: String,
        /// The operating system's message.
        message: String,
    },
    /// One line is not a valid record.
    #[error("{file}:{line}: {problem}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: LineError,
    },
    /// The file's format was recognised but this build has no reader for it.
    #[error("{file}: {format} transcripts are recognised but not supported by this build yet")]
    Unsupported {
        /// The file.
        file: String,
        /// The recognised format.
        format: crate::Format,
    },
    /// The first lines match no known transcript format.
    #[error("{file}:{line}: not a transcript this build can read (expected loopguard JSONL: one JSON object per line with a `type` field)")]
    UnknownFormat {
        /// The file.
        file: String,
        /// 1-based line that was looked at.
        line: usize,
    },
}

impl TranscriptError {
    /// The 0-based line index of the problem, when it concerns one line.
    pub fn line_index(&self) -> Option<usize> {
        match self {
            TranscriptError::Line { line, .. } | TranscriptError::UnknownFormat { line, .. } => {
                line.checked_sub(1)
            }
            _ => None,
        }
    }

    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            TranscriptError::Io { file, .. }
            | TranscriptError::Line { file, .. }
            | TranscriptError::Unsupported { file, .. }
            | TranscriptError::UnknownFormat { file, .. } => file,
        }
    }
}

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// Not UTF-8.
    #[error("not valid UTF-8 (at byte offset {0} of the line)")]
    Utf8(usize),
    /// Longer than the reader's limit (by default [`MAX_LINE_BYTES`](crate::MAX_LINE_BYTES)),
    /// in bytes.
    #[error("line longer than {0} bytes")]
    TooLong(usize),
    /// Not JSON.
    #[error("invalid JSON: {0}")]
    Json(String),
    /// JSON, but not an object.
    #[error("expected a JSON object, found {0}")]
    NotObject(JsonType),
    /// No `type` field.
    #[error("missing field `type`")]
    MissingType,
    /// A `type` this format does not have.
    #[error("unknown line type `{0}` (expected one of session, user, assistant, tool_call, tool_result, compaction)")]
    UnknownType(String),
    /// A required field is absent.
    #[error("`{ty}` line: missing field `{field}`")]
    MissingField {
        /// The line type.
        ty: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field has the wrong JSON type.
    #[error("`{ty}` line: field `{field}` must be {expected}, found {found}")]
    WrongType {
        /// The line type.
        ty: &'static str,
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        found: JsonType,
    },
    /// A `session` header that is not the first record.
    #[error("a `session` line may only be the first line of a transcript")]
    MisplacedSession,
}

/// The type of a JSON value, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum JsonType {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    /// The type of `v`.
    pub fn of(v: &serde_json::Value) -> JsonType {
        match v {
            serde_json::Value::Null => JsonType::Null,
            serde_json::Value::Bool(_) => JsonType::Bool,
            serde_json::Value::Number(_) => JsonType::Number,
            serde_json::Value::String(_) => JsonType::String,
            serde_json::Value::Array(_) => JsonType::Array,
            serde_json::Value::Object(_) => JsonType::Object,
        }
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonType::Null => "null",
            JsonType::Bool => "a boolean",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        })
    }
}
