//! Codex rollout JSONL (the files Codex writes under `~/.codex/sessions/YYYY/MM/DD/`).
//!
//! Each line is `{"timestamp": ..., "type": ..., "payload": {...}}`:
//!
//! | line | record |
//! |---|---|
//! | `session_meta` (`payload.id`, `cwd`, `cli_version`, ...) | `Session` |
//! | `response_item`, `payload.type = "message"`, role `user` | `User` (its `input_text` blocks) |
//! | `response_item` `message` role `assistant`, `reasoning`, `function_call`, `custom_tool_call`, `local_shell_call` | one `Assistant` per model response, then its `ToolCall`s, all sharing the response's batch |
//! | `response_item` `function_call_output` / `custom_tool_call_output` | `ToolResult`, named after its call |
//! | `compacted` | `Compaction` |
//! | `event_msg` of type `token_count` (`info.last_token_usage`) | `Usage`, with the model of the last `turn_context` |
//! | other `event_msg`, `turn_context`, `response_item` messages of role `developer` / `system` | nothing: `event_msg` repeats what the response items say, for the UI |
//!
//! A rollout does not mark where one model response ends, so the items the model produced
//! one after another (reasoning, message, calls) with no input item (a user message, a tool
//! output) between them count as one response: calls issued that way were issued in parallel.
//! Anything unknown is reported as a [`FormatIssue`](super::native::FormatIssue).

use super::native::{
    append, args_of, content_text, obj_of, read_objects, str_of, NativeTranscript,
};
use crate::Record;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Line types that carry nothing loopguard looks at.
const SKIPPED: &[&str] = &["event_msg", "turn_context"];

/// `response_item` types that carry nothing loopguard looks at.
const SKIPPED_ITEMS: &[&str] = &["web_search_call", "other", "ghost_snapshot"];

#[derive(Default)]
pub(crate) struct Reader {
    pub(crate) t: NativeTranscript,
    /// Tool name by call id.
    tools: HashMap<String, String>,
    /// The open model response: index of its `Assistant` entry and its batch.
    open: Option<(usize, u64)>,
    /// The model of the current turn (`turn_context`).
    model: Option<String>,
}

/// Reads a whole Codex rollout file. Never panics; unmappable lines become issues.
pub fn read(text: &str) -> NativeTranscript {
    read_objects(text, |r: &mut Reader| &mut r.t, Reader::line)
}

impl Reader {
    /// The absolute index of the open model response's record, if one is open.
    pub(crate) fn open_index(&self) -> Option<usize> {
        self.open.map(|(i, _)| i)
    }

    pub(crate) fn line(&mut self, line: usize, o: &Map<String, Value>) {
        let Some(ty) = str_of(o, "type") else {
            if o.contains_key("instructions") || o.contains_key("record_type") {
                return; // Older rollouts: a bare header or a state line.
            }
            self.t.issue(line, "missing string field `type`");
            return;
        };
        let payload = obj_of(o, "payload");
        match (ty, payload) {
            ("session_meta", Some(p)) => match str_of(p, "id") {
                Some(id) if self.t.nothing_pushed() => self.t.push_session(line, id),
                Some(_) => {}
                None => self
                    .t
                    .issue(line, "`session_meta` without a string `payload.id`"),
            },
            ("response_item", Some(p)) => self.item(line, p),
            ("compacted", _) => {
                self.open = None;
                self.t.push(line, Record::Compaction);
            }
            ("turn_context", Some(p)) => {
                if let Some(m) = str_of(p, "model") {
                    self.model = Some(m.to_owned());
                }
            }
            ("event_msg", Some(p)) if str_of(p, "type") == Some("token_count") => {
                // The usage of the model call just made: input counts the whole context
                // (cached tokens included), output the reasoning too.
                let last = obj_of(p, "info").and_then(|i| obj_of(i, "last_token_usage"));
                if let Some(u) = last {
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    self.t.push(
                        line,
                        Record::Usage {
                            model: self.model.clone(),
                            input: n("input_tokens"),
                            output: n("output_tokens"),
                        },
                    );
                }
            }
            _ if SKIPPED.contains(&ty) => {}
            ("session_meta" | "response_item", None) => self
                .t
                .issue(line, format!("`{ty}` line without a `payload` object")),
            (other, _) => self
                .t
                .issue(line, format!("unknown Codex line type `{other}`")),
        }
    }

    /// The open response (opening one when there is none): (entry index, batch).
    fn response(&mut self, line: usize) -> (usize, u64) {
        if let Some(open) = self.open {
            return open;
        }
        let open = self.t.open_assistant(line);
        self.open = Some(open);
        open
    }

    fn add_text(&mut self, index: usize, text: &str, thinking: &str) {
        if let Some(Record::Assistant {
            text: t,
            thinking: th,
        }) = self.t.record_mut(index)
        {
            append(t, text, "\n\n");
            append(th, thinking, "\n\n");
        }
    }

    fn item(&mut self, line: usize, p: &Map<String, Value>) {
        let kind = str_of(p, "type").unwrap_or("");
        match kind {
            "message" => match str_of(p, "role") {
                Some("user") => {
                    self.open = None;
                    let (text, _) = content_text(p.get("content"), &["input_text", "text"], "\n");
                    self.t.push(line, Record::User { text });
                }
                Some("assistant") => {
                    let (text, _) = content_text(p.get("content"), &["output_text", "text"], "\n");
                    let (index, _) = self.response(line);
                    self.add_text(index, &text, "");
                }
                Some("developer" | "system") => {}
                other => self.t.issue(
                    line,
                    format!("message of unknown role `{}`", other.unwrap_or("?")),
                ),
            },
            "reasoning" => {
                let (summary, _) = content_text(p.get("summary"), &["summary_text"], "\n");
                let (content, _) =
                    content_text(p.get("content"), &["reasoning_text", "text"], "\n");
                let thinking = if content.is_empty() { summary } else { content };
                let (index, _) = self.response(line);
                self.add_text(index, "", &thinking);
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => self.call(line, kind, p),
            "function_call_output" | "custom_tool_call_output" => self.output(line, p),
            "" => self
                .t
                .issue(line, "`response_item` without a string `payload.type`"),
            _ if SKIPPED_ITEMS.contains(&kind) => {}
            other => self
                .t
                .issue(line, format!("unknown response item type `{other}`")),
        }
    }

    fn call(&mut self, line: usize, kind: &str, p: &Map<String, Value>) {
        let id = str_of(p, "call_id").or_else(|| str_of(p, "id"));
        let Some(id) = id else {
            self.t
                .issue(line, format!("`{kind}` without a string `call_id`"));
            return;
        };
        let (tool, args, problem) = match kind {
            "function_call" => {
                let (args, problem) = args_of(p.get("arguments"));
                (str_of(p, "name").unwrap_or(""), args, problem)
            }
            "custom_tool_call" => {
                // Freeform tools (apply_patch) take raw text.
                let input = p.get("input").cloned().unwrap_or(Value::Null);
                (
                    str_of(p, "name").unwrap_or(""),
                    serde_json::json!({ "input": input }),
                    None,
                )
            }
            _ => {
                let action = p.get("action").cloned().unwrap_or(Value::Null);
                ("local_shell", action, None)
            }
        };
        if tool.is_empty() {
            self.t
                .issue(line, format!("`{kind}` `{id}` without a string `name`"));
            return;
        }
        let (_, batch) = self.response(line);
        self.tools.insert(id.to_owned(), tool.to_owned());
        self.t.push_call(line, id, tool, (args, problem), batch);
    }

    fn output(&mut self, line: usize, p: &Map<String, Value>) {
        self.open = None;
        let Some(id) = str_of(p, "call_id") else {
            self.t.issue(line, "tool output without a string `call_id`");
            return;
        };
        let Some(tool) = self.tools.get(id).cloned() else {
            self.t.issue(
                line,
                format!("output of call `{id}`, which is not in this file; skipped"),
            );
            return;
        };
        // The output is a string; some versions write `{content, success}` or content items.
        let (content, images, is_error) = match p.get("output") {
            Some(Value::Object(o)) => {
                let (c, i) = content_text(
                    o.get("content"),
                    &["input_text", "output_text", "text"],
                    "\n",
                );
                (
                    c,
                    i,
                    o.get("success").and_then(Value::as_bool) == Some(false),
                )
            }
            other => {
                let (c, i) = content_text(other, &["input_text", "output_text", "text"], "\n");
                (c, i, false)
            }
        };
        self.t.push(
            line,
            Record::ToolResult {
                id: id.to_owned(),
                tool,
                content,
                is_error,
                images,
                truncated: false,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::native::testutil::{assistant, issue_lines};
    use serde_json::json;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/../../tests/fixtures/native/codex/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let alt = format!("/work/main/tests/fixtures/native/codex/{name}");
        std::fs::read_to_string(&path)
            .or_else(|_| std::fs::read_to_string(alt))
            .unwrap()
    }

    #[test]
    fn items_of_one_response_share_a_batch() {
        let text = [
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"S","cwd":"/w","cli_version":"0.46.0"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}"#,
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix it"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"look"}],"encrypted_content":"gAAA"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"pwd\"]}","call_id":"c2"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a.rs"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":{"content":"boom","success":false}}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#,
            r#"{"timestamp":"t","type":"compacted","payload":{"message":"summary"}}"#,
            r#"{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","model":"m"}}"#,
        ]
        .join("\n");
        let t = read(&text);
        assert!(t.issues.is_empty(), "{:?}", t.issues);
        let got: Vec<(usize, Record)> = t
            .entries
            .iter()
            .map(|e| (e.line, e.record.clone()))
            .collect();
        let call = |id: &str, cmd: &str| Record::ToolCall {
            id: id.into(),
            tool: "shell".into(),
            args: json!({"command":[cmd]}),
            batch: Some(0),
            truncated: false,
        };
        assert_eq!(
            got,
            vec![
                (
                    0,
                    Record::Session {
                        id: "S".into(),
                        source: None,
                        license: None
                    }
                ),
                (
                    2,
                    Record::User {
                        text: "fix it".into()
                    }
                ),
                (
                    4,
                    Record::Assistant {
                        text: None,
                        thinking: Some("look".into())
                    }
                ),
                (5, call("c1", "ls")),
                (6, call("c2", "pwd")),
                (
                    7,
                    Record::ToolResult {
                        id: "c1".into(),
                        tool: "shell".into(),
                        content: "a.rs".into(),
                        is_error: false,
                        images: 0,
                        truncated: false
                    }
                ),
                (
                    8,
                    Record::ToolResult {
                        id: "c2".into(),
                        tool: "shell".into(),
                        content: "boom".into(),
                        is_error: true,
                        images: 0,
                        truncated: false
                    }
                ),
                (9, assistant("done")),
                (10, Record::Compaction),
            ]
        );
    }

    #[test]
    fn unknown_and_orphan_items_are_reported() {
        let text = [
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"nope","output":"x"}}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"teleport"}}"#,
            r#"{"timestamp":"t","type":"mystery","payload":{}}"#,
            r#"{"timestamp":"t","type":"response_item"}"#,
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","call_id":"c"}}"#,
        ]
        .join("\n");
        let t = read(&text);
        let lines = issue_lines(&t);
        assert_eq!(lines, [0, 1, 2, 3, 4], "{:?}", t.issues);
        assert!(t.nothing_pushed());
    }

    #[test]
    fn fixtures_read_without_issues() {
        for name in [
            "fix-failing-test.jsonl",
            "parallel-reads-and-compaction.jsonl",
            "repeated-test-run-loop.jsonl",
        ] {
            let t = read(&fixture(name));
            assert!(t.issues.is_empty(), "{name}: {:?}", t.issues);
            assert!(
                matches!(
                    t.entries.first().map(|e| &e.record),
                    Some(Record::Session { .. })
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn the_loop_fixture_repeats_one_call_with_one_output_eight_times() {
        let t = read(&fixture("repeated-test-run-loop.jsonl"));
        let calls: Vec<(&str, &Value)> = t
            .entries
            .iter()
            .filter_map(|e| match &e.record {
                Record::ToolCall { tool, args, .. } => Some((tool.as_str(), args)),
                _ => None,
            })
            .collect();
        let first = calls
            .iter()
            .position(|(_, a)| a.to_string().contains("cargo test -p api"))
            .unwrap();
        let repeated = &calls[first..];
        assert!(repeated.len() >= 8, "{repeated:?}");
        assert!(repeated.iter().all(|c| c == &repeated[0]));
        let outputs: Vec<&str> = t
            .entries
            .iter()
            .filter_map(|e| match &e.record {
                Record::ToolResult { content, .. } if content.contains("test result: FAILED") => {
                    Some(content.as_str())
                }
                _ => None,
            })
            .collect();
        assert!(outputs.len() >= 8 && outputs.iter().all(|o| *o == outputs[0]));
    }

    #[test]
    fn parallel_calls_share_a_batch_and_compaction_is_kept() {
        let t = read(&fixture("parallel-reads-and-compaction.jsonl"));
        let mut batches: Vec<u64> = t
            .entries
            .iter()
            .filter_map(|e| {
                if let Record::ToolCall { batch, .. } = e.record {
                    batch
                } else {
                    None
                }
            })
            .collect();
        let n = batches.len();
        batches.dedup();
        assert!(batches.len() < n, "some calls share a batch: {batches:?}");
        assert!(t.entries.iter().any(|e| e.record == Record::Compaction));
    }
}
