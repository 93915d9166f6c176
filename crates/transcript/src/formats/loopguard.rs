//! The loopguard JSONL reader (the transcript contract: `docs/contracts/transcript.md`).
//!
//! Strict about what it needs (each line type's required fields and their JSON types), lenient
//! about what it does not (unknown extra fields are ignored, `batch`, `is_error` and `images`
//! may be left out).

use crate::error::{JsonType, LineError};
use crate::Record;
use serde_json::{Map, Value};

/// The line types of the format.
pub const TYPES: &[&str] = &[
    "session",
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "compaction",
];

/// Parses one non-blank line. `first` says whether it is the first record of the file (the
/// only place a `session` header may be).
pub fn parse_line(text: &str, first: bool) -> Result<Record, LineError> {
    let value: Value = serde_json::from_str(text).map_err(|e| LineError::Json(json_message(&e)))?;
    let mut obj = match value {
        Value::Object(o) => o,
        other => return Err(LineError::NotObject(JsonType::of(&other))),
    };
    let ty = match obj.remove("type") {
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(LineError::WrongType {
                ty: "?",
                field: "type",
                expected: "a string",
                found: JsonType::of(&other),
            })
        }
        None => return Err(LineError::MissingType),
    };
    let o = &mut obj;
    Ok(match ty.as_str() {
        "session" => {
            if !first {
                return Err(LineError::MisplacedSession);
            }
            Record::Session {
                id: req_str(o, "session", "id")?,
                source: opt_str(o, "session", "source")?,
                license: opt_str(o, "session", "license")?,
            }
        }
        "user" => Record::User {
            text: req_str(o, "user", "text")?,
        },
        "assistant" => Record::Assistant {
            text: opt_str(o, "assistant", "text")?,
            thinking: opt_str(o, "assistant", "thinking")?,
        },
        "tool_call" => {
            let id = req_str(o, "tool_call", "id")?;
            let tool = req_str(o, "tool_call", "tool")?;
            let args = o.remove("args").ok_or(LineError::MissingField {
                ty: "tool_call",
                field: "args",
            })?;
            Record::ToolCall {
                id,
                tool,
                args,
                batch: opt_u64(o, "tool_call", "batch")?,
                truncated: opt_bool(o, "tool_call", "truncated")?.unwrap_or(false),
            }
        }
        "tool_result" => {
            let images = opt_u64(o, "tool_result", "images")?.unwrap_or(0);
            let images = u32::try_from(images).map_err(|_| LineError::WrongType {
                ty: "tool_result",
                field: "images",
                expected: "a count below 2^32",
                found: JsonType::Number,
            })?;
            Record::ToolResult {
                id: req_str(o, "tool_result", "id")?,
                tool: req_str(o, "tool_result", "tool")?,
                content: req_str(o, "tool_result", "content")?,
                is_error: opt_bool(o, "tool_result", "is_error")?.unwrap_or(false),
                images,
                truncated: opt_bool(o, "tool_result", "truncated")?.unwrap_or(false),
            }
        }
        "compaction" => Record::Compaction,
        _ => return Err(LineError::UnknownType(ty)),
    })
}

/// serde_json's message without its "at line 1 column N" suffix replaced by the column only
/// (the line is ours to name).
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let msg = full.split(" at line ").next().unwrap_or(&full);
    format!("{msg} (column {})", e.column())
}

fn req_str(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<String, LineError> {
    opt_str(o, ty, field)?.ok_or(LineError::MissingField { ty, field })
}

fn opt_str(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<Option<String>, LineError> {
    match o.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(LineError::WrongType {
            ty,
            field,
            expected: "a string",
            found: JsonType::of(&other),
        }),
    }
}

fn opt_bool(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<Option<bool>, LineError> {
    match o.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(other) => Err(LineError::WrongType {
            ty,
            field,
            expected: "a boolean",
            found: JsonType::of(&other),
        }),
    }
}

fn opt_u64(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<Option<u64>, LineError> {
    match o.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or(LineError::WrongType {
            ty,
            field,
            expected: "a non-negative integer",
            found: JsonType::Number,
        }),
        Some(other) => Err(LineError::WrongType {
            ty,
            field,
            expected: "a non-negative integer",
            found: JsonType::of(&other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_type_parses() {
        assert!(matches!(
            parse_line(
                r#"{"type":"session","id":"s","source":"x","license":"MIT"}"#,
                true
            ),
            Ok(Record::Session { .. })
        ));
        assert_eq!(
            parse_line(r#"{"type":"user","text":"hi"}"#, false),
            Ok(Record::User { text: "hi".into() })
        );
        assert_eq!(
            parse_line(r#"{"type":"assistant"}"#, false),
            Ok(Record::Assistant {
                text: None,
                thinking: None
            })
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_call","id":"c1","tool":"read","args":{"p":1},"batch":3}"#,
                false
            ),
            Ok(Record::ToolCall {
                id: "c1".into(),
                tool: "read".into(),
                args: serde_json::json!({"p": 1}),
                batch: Some(3),
                truncated: false
            })
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","tool":"read","content":"x","is_error":true,"images":2,"truncated":true}"#,
                false
            ),
            Ok(Record::ToolResult {
                id: "c1".into(),
                tool: "read".into(),
                content: "x".into(),
                is_error: true,
                images: 2,
                truncated: true
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"compaction"}"#, false),
            Ok(Record::Compaction)
        );
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(
            parse_line("[1]", false),
            Err(LineError::NotObject(JsonType::Array))
        );
        assert_eq!(parse_line("{}", false), Err(LineError::MissingType));
        assert_eq!(
            parse_line(r#"{"type":"bogus"}"#, false),
            Err(LineError::UnknownType("bogus".into()))
        );
        assert_eq!(
            parse_line(r#"{"type":"tool_call","id":"c","tool":"t"}"#, false),
            Err(LineError::MissingField {
                ty: "tool_call",
                field: "args"
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"user","text":5}"#, false),
            Err(LineError::WrongType {
                ty: "user",
                field: "text",
                expected: "a string",
                found: JsonType::Number
            })
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c","tool":"t","content":"","images":-1}"#,
                false
            ),
            Err(LineError::WrongType {
                ty: "tool_result",
                field: "images",
                expected: "a non-negative integer",
                found: JsonType::Number
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"session","id":"s"}"#, false),
            Err(LineError::MisplacedSession)
        );
        let Err(LineError::Json(m)) = parse_line("{\"type\": ", false) else {
            panic!("expected a JSON error")
        };
        assert!(m.contains("column"), "{m}");
        assert!(!m.contains("line 1"), "{m}");
    }
}
