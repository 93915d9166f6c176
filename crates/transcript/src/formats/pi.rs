//! Pi session JSONL (the files Pi writes under `~/.pi/agent/sessions/`).
//!
//! One JSON object per line, told apart by `type`:
//!
//! | line | record |
//! |---|---|
//! | `session` (the header: `id`, `timestamp`, `cwd`, ...) | `Session` |
//! | `message` with `message.role = "user"` | `User` (the text blocks, joined with newlines) |
//! | `message`, role `assistant` (`text`, `thinking`, `toolCall` blocks) | `Assistant`, then one `ToolCall` per `toolCall` block, all with the message's batch |
//! | `message`, role `toolResult` (`toolCallId`, `toolName`, `content`, `isError`) | `ToolResult` |
//! | `message`, role `bashExecution` (a `!command` the user ran) | `User` with `!command`, a newline and the output |
//! | `compaction` | `Compaction` |
//! | `model_change`, `thinking_level_change`, `label`, `session_info`, `custom` | nothing: they say nothing about loops |
//!
//! Anything else is reported as a [`FormatIssue`](super::native::FormatIssue).

use super::native::{
    append, args_of, content_text, describe, obj_of, read_objects, str_of, NativeTranscript,
};
use crate::Record;
use serde_json::{Map, Value};

/// Line types that carry nothing loopguard looks at.
const SKIPPED: &[&str] = &[
    "model_change",
    "thinking_level_change",
    "label",
    "session_info",
    "custom",
];

/// Reads a whole Pi session file. Never panics; unmappable lines become issues.
pub fn read(text: &str) -> NativeTranscript {
    read_objects(text, |t| t, read_line)
}

pub(crate) fn read_line(t: &mut NativeTranscript, line: usize, o: &Map<String, Value>) {
    let Some(ty) = str_of(o, "type") else {
        t.issue(line, "missing string field `type`");
        return;
    };
    match ty {
        "session" => match str_of(o, "id") {
            Some(id) if t.nothing_pushed() => t.push_session(line, id),
            Some(_) => t.issue(line, "a second `session` header; ignored"),
            None => t.issue(line, "`session` line without a string `id`"),
        },
        "message" => match obj_of(o, "message") {
            Some(m) => message(t, line, m),
            None => t.issue(line, "`message` line without a `message` object"),
        },
        "compaction" => t.push(line, Record::Compaction),
        "custom_message" => {
            // An extension's message injected into the context as a user-side turn.
            let (text, _) = content_text(o.get("content"), &["text"], "\n");
            t.push(line, Record::User { text });
        }
        _ if SKIPPED.contains(&ty) => {}
        other => t.issue(line, format!("unknown Pi line type `{other}`")),
    }
}

fn message(t: &mut NativeTranscript, line: usize, m: &Map<String, Value>) {
    let role = str_of(m, "role").unwrap_or("");
    match role {
        "user" => {
            let (text, _) = content_text(m.get("content"), &["text"], "\n");
            t.push(line, Record::User { text });
        }
        "assistant" => assistant(t, line, m),
        "toolResult" => {
            let Some(id) = str_of(m, "toolCallId") else {
                t.issue(line, "`toolResult` message without a string `toolCallId`");
                return;
            };
            let (content, images) = content_text(m.get("content"), &["text"], "\n");
            t.push(
                line,
                Record::ToolResult {
                    id: id.to_owned(),
                    tool: str_of(m, "toolName").unwrap_or("").to_owned(),
                    content,
                    is_error: m.get("isError").and_then(Value::as_bool).unwrap_or(false),
                    images,
                    truncated: false,
                },
            );
        }
        "bashExecution" => {
            let command = str_of(m, "command").unwrap_or("");
            let output = str_of(m, "output").unwrap_or("");
            t.push(
                line,
                Record::User {
                    text: format!("!{command}\n{output}"),
                },
            );
        }
        "" => t.issue(line, "message without a string `role`"),
        other => t.issue(line, format!("unknown Pi message role `{other}`")),
    }
}

fn assistant(t: &mut NativeTranscript, line: usize, m: &Map<String, Value>) {
    let batch = t.assistant_count();
    let mut text = None;
    let mut thinking = None;
    let mut calls = Vec::new();
    let blocks = match m.get("content") {
        Some(Value::Array(b)) => b.as_slice(),
        Some(Value::String(s)) => {
            append(&mut text, s, "");
            &[]
        }
        other => {
            if other.is_some() {
                t.issue(
                    line,
                    format!(
                        "assistant `content` is {}, expected an array",
                        describe(other)
                    ),
                );
            }
            &[]
        }
    };
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => append(
                &mut text,
                b.get("text").and_then(Value::as_str).unwrap_or(""),
                "",
            ),
            Some("thinking") => append(
                &mut thinking,
                b.get("thinking").and_then(Value::as_str).unwrap_or(""),
                "",
            ),
            Some("toolCall") => {
                let (Some(id), Some(tool)) = (
                    b.get("id").and_then(Value::as_str),
                    b.get("name").and_then(Value::as_str),
                ) else {
                    t.issue(line, "`toolCall` block without a string `id` and `name`");
                    continue;
                };
                let (args, problem) = args_of(b.get("arguments"));
                if let Some(p) = problem {
                    t.issue(line, format!("call `{id}`: {p}"));
                }
                calls.push(Record::ToolCall {
                    id: id.to_owned(),
                    tool: tool.to_owned(),
                    args,
                    batch: Some(batch),
                    truncated: false,
                });
            }
            Some("image") => {}
            other => t.issue(
                line,
                format!("unknown assistant content block `{}`", other.unwrap_or("?")),
            ),
        }
    }
    t.push(line, Record::Assistant { text, thinking });
    for c in calls {
        t.push(line, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::native::testutil::issue_lines;
    use crate::formats::native::testutil::records;
    use serde_json::json;

    #[test]
    fn maps_every_message_role() {
        let text = [
            r#"{"type":"session","id":"s1","timestamp":"2025-12-09T00:53:29.825Z","cwd":"/w"}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"b"}}]}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"A"},{"type":"image","data":""}],"isError":true}}"#,
            r#"{"type":"model_change","timestamp":"t","provider":"p","modelId":"m"}"#,
            r#"{"type":"compaction","timestamp":"t","summary":"s","tokensBefore":1}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"bashExecution","command":"ls","output":"a\n","exitCode":0}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
        ]
        .join("\n");
        let t = read(&text);
        assert!(t.issues.is_empty(), "{:?}", t.issues);
        assert_eq!(
            records(&t),
            vec![
                (
                    0,
                    Record::Session {
                        id: "s1".into(),
                        source: None,
                        license: None
                    }
                ),
                (1, Record::User { text: "hi".into() }),
                (
                    2,
                    Record::Assistant {
                        text: Some("ok".into()),
                        thinking: Some("hm".into())
                    }
                ),
                (
                    2,
                    Record::ToolCall {
                        id: "c1".into(),
                        tool: "read".into(),
                        args: json!({"path":"a"}),
                        batch: Some(0),
                        truncated: false
                    }
                ),
                (
                    2,
                    Record::ToolCall {
                        id: "c2".into(),
                        tool: "read".into(),
                        args: json!({"path":"b"}),
                        batch: Some(0),
                        truncated: false
                    }
                ),
                (
                    3,
                    Record::ToolResult {
                        id: "c1".into(),
                        tool: "read".into(),
                        content: "A".into(),
                        is_error: true,
                        images: 1,
                        truncated: false
                    }
                ),
                (5, Record::Compaction),
                (
                    6,
                    Record::User {
                        text: "!ls\na\n".into()
                    }
                ),
                (
                    7,
                    Record::Assistant {
                        text: None,
                        thinking: None
                    }
                ),
            ]
        );
        assert_eq!(t.lines, 8);
    }

    #[test]
    fn unmappable_lines_are_reported_with_their_line() {
        let text = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"t\"}\nnot json\n{\"type\":\"weird\"}\n\n{\"type\":\"message\",\"message\":{\"role\":\"alien\"}}\n[1]\n{\"type\":\"message\",\"message\":{\"role\":\"toolResult\"}}";
        let t = read(text);
        let lines = issue_lines(&t);
        assert_eq!(lines, [1, 2, 4, 5, 6]);
        assert!(t.issues[1].message.contains("`weird`"), "{}", t.issues[1]);
        assert!(t.issues[2].message.contains("`alien`"), "{}", t.issues[2]);
        assert_eq!(t.entries.len(), 1);
    }

    #[test]
    fn string_arguments_are_decoded_and_bad_ones_reported() {
        let text = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":"{\"command\":\"ls\"}"},{"type":"toolCall","id":"d","name":"bash","arguments":"oops"}]}}"#;
        let t = read(text);
        assert_eq!(t.issues.len(), 1);
        assert!(
            matches!(&t.entries[1].record, Record::ToolCall { args, .. } if *args == json!({"command":"ls"}))
        );
        assert!(
            matches!(&t.entries[2].record, Record::ToolCall { args, .. } if *args == json!("oops"))
        );
    }

    #[test]
    fn real_pi_sessions_match_their_converted_corpus_files() {
        use super::super::native::testutil::{assert_matches_corpus, corpus_records, shared_dir};
        let Some(dir) = shared_dir() else { return };
        for (native, converted) in [
            ("before-compaction", "pi__before-compaction"),
            ("large-session", "pi__large-session"),
        ] {
            let text =
                std::fs::read_to_string(dir.join(format!("native-sessions/pi/{native}.jsonl")))
                    .unwrap();
            let t = read(&text);
            assert!(t.issues.is_empty(), "{native}: {:?}", t.issues);
            let corpus =
                std::fs::read_to_string(dir.join(format!("corpus/{converted}.jsonl"))).unwrap();
            assert_matches_corpus(native, &t.entries, &corpus_records(&corpus));
            assert!(
                t.entries.iter().any(|e| e.record == Record::Compaction)
                    || native != "before-compaction"
            );
        }
    }
}
