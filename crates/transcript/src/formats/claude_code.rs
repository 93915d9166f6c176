//! Claude Code session JSONL (the files under `~/.claude/projects/<project>/`, and the
//! `subagents/` files beside them).
//!
//! One JSON object per line, told apart by `type`:
//!
//! | line | record |
//! |---|---|
//! | `user` whose `message.content` is a string or holds `text` blocks | `User` |
//! | `user` holding `tool_result` blocks (`tool_use_id`, `content`, `is_error`) | one `ToolResult` each, named after its call |
//! | `assistant` (`message.id`, `text` / `thinking` / `tool_use` blocks) | `Assistant` + `ToolCall`s; Claude Code writes each content block of one API message on its own line, and consecutive lines sharing a `message.id` are merged into one message (text blocks joined as paragraphs), whose calls share one batch; a user-side line in between starts a new message even when the id repeats |
//! | `message.usage` of an assistant message (input, cache creation and cache read tokens; output tokens) | one `Usage` after the message's `Assistant`, with `message.model` |
//! | `system` with `subtype: "compact_boundary"` | `Compaction` |
//! | `progress`, `file-history-snapshot`, `queue-operation`, `summary`, `custom-title`, other `system` lines, `isMeta` user lines, the compaction summary (`isCompactSummary`) | nothing |
//!
//! Sidechain lines (`isSidechain: true`, a subagent's messages) inside a main session are
//! skipped; a subagent's own file (all lines sidechain) is read as a session of its own. A tool
//! result whose call is not in the file (it lies in an earlier session) cannot be mapped and is
//! reported. Anything else unknown is reported as a [`FormatIssue`](super::native::FormatIssue).

use super::native::{
    append, args_of, content_text, describe, obj_of, read_objects, str_of, NativeTranscript,
};
use crate::Record;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Line types that carry nothing loopguard looks at.
const SKIPPED: &[&str] = &[
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "summary",
    "custom-title",
    "attachment",
];

/// The state of one read.
#[derive(Default)]
pub(crate) struct Reader {
    pub(crate) t: NativeTranscript,
    /// Tool name by call id (to name results; results carry only the id).
    tools: HashMap<String, String>,
    /// The open assistant message: its API id and the index of its `Assistant` entry.
    open: Option<(String, usize, u64)>,
    /// The index of the open message's `Usage` entry.
    usage: Option<usize>,
    /// Whether the file is a main session (sidechain lines are then skipped); decided by the
    /// first conversational line.
    main: Option<bool>,
}

/// Reads a whole Claude Code session file. Never panics; unmappable lines become issues.
pub fn read(text: &str) -> NativeTranscript {
    read_objects(text, |r: &mut Reader| &mut r.t, Reader::line)
}

impl Reader {
    /// The absolute index of the open assistant message's record, if one is open.
    pub(crate) fn open_index(&self) -> Option<usize> {
        self.open.as_ref().map(|(_, i, _)| *i)
    }

    pub(crate) fn line(&mut self, line: usize, o: &Map<String, Value>) {
        let Some(ty) = str_of(o, "type") else {
            self.t.issue(line, "missing string field `type`");
            return;
        };
        match ty {
            "user" | "assistant" => {
                let side = o
                    .get("isSidechain")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let main = *self.main.get_or_insert(!side);
                if main && side {
                    return;
                }
                if self.t.nothing_pushed() {
                    if let Some(id) = str_of(o, "sessionId") {
                        self.t.push_session(line, id);
                    }
                }
                let Some(m) = obj_of(o, "message") else {
                    self.t
                        .issue(line, format!("`{ty}` line without a `message` object"));
                    return;
                };
                if ty == "user" {
                    self.user(line, o, m);
                } else {
                    self.assistant(line, m);
                }
            }
            "system" => {
                if str_of(o, "subtype") == Some("compact_boundary") {
                    self.open = None;
                    self.t.push(line, Record::Compaction);
                }
            }
            _ if SKIPPED.contains(&ty) => {}
            other => self
                .t
                .issue(line, format!("unknown Claude Code line type `{other}`")),
        }
    }

    fn user(&mut self, line: usize, o: &Map<String, Value>, m: &Map<String, Value>) {
        let flag = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
        if flag("isMeta") || flag("isCompactSummary") {
            return;
        }
        // Any user-side line ends the open assistant message: a block that repeats its API id
        // after a result was written once that result was seen, so it is a new step.
        self.open = None;
        match m.get("content") {
            Some(Value::String(s)) => {
                self.t.push(line, Record::User { text: s.clone() });
            }
            Some(Value::Array(blocks)) => {
                let mut text: Option<String> = None;
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let add = b.get("text").and_then(Value::as_str).unwrap_or("");
                            match &mut text {
                                Some(t) => {
                                    t.push('\n');
                                    t.push_str(add);
                                }
                                None => text = Some(add.to_owned()),
                            }
                        }
                        Some("tool_result") => self.tool_result(line, b),
                        Some("image" | "document") => {}
                        other => self.t.issue(
                            line,
                            format!("unknown user content block `{}`", other.unwrap_or("?")),
                        ),
                    }
                }
                if let Some(text) = text {
                    self.t.push(line, Record::User { text });
                }
            }
            other => self.t.issue(
                line,
                format!(
                    "user `content` is {}, expected a string or an array",
                    describe(other)
                ),
            ),
        }
    }

    fn tool_result(&mut self, line: usize, b: &Value) {
        let Some(id) = b.get("tool_use_id").and_then(Value::as_str) else {
            self.t
                .issue(line, "`tool_result` block without a string `tool_use_id`");
            return;
        };
        let Some(tool) = self.tools.get(id) else {
            self.t.issue(
                line,
                format!("result of call `{id}`, which is not in this file; skipped"),
            );
            return;
        };
        let (content, images) = content_text(b.get("content"), &["text"], "\n");
        self.t.push(
            line,
            Record::ToolResult {
                id: id.to_owned(),
                tool: tool.clone(),
                content,
                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                images,
                truncated: false,
            },
        );
    }

    fn assistant(&mut self, line: usize, m: &Map<String, Value>) {
        let msg_id = str_of(m, "id").unwrap_or("");
        let (index, batch) = match &self.open {
            Some((id, index, batch)) if !msg_id.is_empty() && id == msg_id => (*index, *batch),
            _ => {
                let (index, batch) = self.t.open_assistant(line);
                self.open = Some((msg_id.to_owned(), index, batch));
                self.usage = None;
                (index, batch)
            }
        };
        self.note_usage(line, m);
        let blocks = match m.get("content") {
            Some(Value::Array(b)) => b.as_slice(),
            Some(Value::String(s)) => {
                self.add_text(index, Some(s), None);
                &[]
            }
            other => {
                self.t.issue(
                    line,
                    format!(
                        "assistant `content` is {}, expected an array",
                        describe(other)
                    ),
                );
                &[]
            }
        };
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => self.add_text(index, b.get("text").and_then(Value::as_str), None),
                Some("thinking") => {
                    self.add_text(index, None, b.get("thinking").and_then(Value::as_str))
                }
                Some("tool_use" | "server_tool_use") => {
                    let (Some(id), Some(tool)) = (
                        b.get("id").and_then(Value::as_str),
                        b.get("name").and_then(Value::as_str),
                    ) else {
                        self.t
                            .issue(line, "`tool_use` block without a string `id` and `name`");
                        continue;
                    };
                    self.tools.insert(id.to_owned(), tool.to_owned());
                    self.t
                        .push_call(line, id, tool, args_of(b.get("input")), batch);
                }
                Some("redacted_thinking" | "web_search_tool_result" | "image") => {}
                other => self.t.issue(
                    line,
                    format!("unknown assistant content block `{}`", other.unwrap_or("?")),
                ),
            }
        }
    }

    /// Keeps the message's usage: one `Usage` record per API message, holding the largest
    /// figures its lines carry (each line of a message repeats the usage so far).
    fn note_usage(&mut self, line: usize, m: &Map<String, Value>) {
        let Some(u) = obj_of(m, "usage") else { return };
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        let input = n("input_tokens")
            .saturating_add(n("cache_creation_input_tokens"))
            .saturating_add(n("cache_read_input_tokens"));
        let output = n("output_tokens");
        let model = str_of(m, "model").map(str::to_owned);
        if let Some(Some(Record::Usage {
            input: i,
            output: o,
            ..
        })) = self.usage.map(|at| self.t.record_mut(at))
        {
            *i = (*i).max(input);
            *o = (*o).max(output);
            return;
        }
        self.t.push(
            line,
            Record::Usage {
                model,
                input,
                output,
            },
        );
        self.usage = Some(self.t.last_index());
    }

    fn add_text(&mut self, index: usize, text: Option<&str>, thinking: Option<&str>) {
        if let Some(Record::Assistant {
            text: t,
            thinking: th,
        }) = self.t.record_mut(index)
        {
            // Claude Code shows the text blocks of one message as paragraphs.
            append(t, text.unwrap_or(""), "\n\n");
            append(th, thinking.unwrap_or(""), "\n\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::native::testutil::records;
    use crate::formats::native::testutil::{assistant, issue_lines};
    use serde_json::json;

    #[test]
    fn usage_is_one_record_per_api_message_with_its_largest_figures() {
        let text = [
            r#"{"type":"user","sessionId":"S","message":{"role":"user","content":"go"}}"#,
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":1}}}"#,
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"c1","name":"Bash","input":{}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":40}}}"#,
            r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"b"}],"usage":{"input_tokens":7,"output_tokens":2}}}"#,
        ]
        .join("\n");
        let t = read(&text);
        let usage: Vec<(usize, &Record)> = t
            .entries
            .iter()
            .filter(|e| matches!(e.record, Record::Usage { .. }))
            .map(|e| (e.line, &e.record))
            .collect();
        assert_eq!(
            usage,
            [
                (
                    1,
                    &Record::Usage {
                        model: Some("claude-x".into()),
                        input: 1103,
                        output: 40
                    }
                ),
                (
                    3,
                    &Record::Usage {
                        model: None,
                        input: 7,
                        output: 2
                    }
                )
            ]
        );
    }

    #[test]
    fn blocks_of_one_api_message_are_merged_into_one_batch() {
        let text = [
            r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#,
            r#"{"type":"user","sessionId":"S","isSidechain":false,"message":{"role":"user","content":"go"}}"#,
            r#"{"type":"assistant","isSidechain":false,"message":{"id":"msg_1","role":"assistant","content":[{"type":"thinking","thinking":"t"}]}}"#,
            r#"{"type":"progress","isSidechain":false,"data":{}}"#,
            r#"{"type":"assistant","isSidechain":false,"message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"a"}]}}"#,
            r#"{"type":"assistant","isSidechain":false,"message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"ls"}}]}}"#,
            r#"{"type":"assistant","isSidechain":false,"message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"c2","name":"Read","input":{"file_path":"x"}}]}}"#,
            r#"{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c2","content":[{"type":"text","text":"X"}]}]}}"#,
            r#"{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"err","is_error":true}]}}"#,
            r#"{"type":"assistant","isSidechain":false,"message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"done"}]}}"#,
            r#"{"type":"system","subtype":"compact_boundary","isSidechain":false,"content":"Conversation compacted"}"#,
            r#"{"type":"user","isSidechain":false,"isCompactSummary":true,"message":{"role":"user","content":"summary..."}}"#,
            r#"{"type":"user","isSidechain":true,"message":{"role":"user","content":"subagent prompt"}}"#,
            r#"{"type":"user","isSidechain":false,"isMeta":true,"message":{"role":"user","content":"caveat"}}"#,
        ]
        .join("\n");
        let t = read(&text);
        assert!(t.issues.is_empty(), "{:?}", t.issues);
        let call = |id: &str, tool: &str, args| Record::ToolCall {
            id: id.into(),
            tool: tool.into(),
            args,
            batch: Some(0),
            truncated: false,
        };
        let result = |id: &str, tool: &str, content: &str, is_error| Record::ToolResult {
            id: id.into(),
            tool: tool.into(),
            content: content.into(),
            is_error,
            images: 0,
            truncated: false,
        };
        assert_eq!(
            records(&t),
            vec![
                (
                    1,
                    Record::Session {
                        id: "S".into(),
                        source: None,
                        license: None
                    }
                ),
                (1, Record::User { text: "go".into() }),
                (
                    2,
                    Record::Assistant {
                        text: Some("a".into()),
                        thinking: Some("t".into())
                    }
                ),
                (5, call("c1", "Bash", json!({"command":"ls"}))),
                (6, call("c2", "Read", json!({"file_path":"x"}))),
                (7, result("c2", "Read", "X", false)),
                (8, result("c1", "Bash", "err", true)),
                (9, assistant("done")),
                (10, Record::Compaction),
            ]
        );
    }

    #[test]
    fn unknown_lines_and_orphan_results_are_reported() {
        let text = [
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"old","content":"x"}]}}"#,
            r#"{"type":"mystery"}"#,
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"hologram"}]}}"#,
            "{",
            r#"{"type":"user"}"#,
        ]
        .join("\n");
        let t = read(&text);
        let lines = issue_lines(&t);
        assert_eq!(lines, [0, 1, 2, 3, 4], "{:?}", t.issues);
        assert!(t.issues[0].message.contains("`old`"));
        assert!(t.issues[1].message.contains("`mystery`"));
    }

    #[test]
    fn a_subagent_file_is_read_although_every_line_is_sidechain() {
        let text = [
            r#"{"type":"user","isSidechain":true,"sessionId":"S","message":{"role":"user","content":"explore"}}"#,
            r#"{"type":"assistant","isSidechain":true,"message":{"id":"m","content":[{"type":"text","text":"ok"}]}}"#,
        ]
        .join("\n");
        let t = read(&text);
        assert_eq!(t.entries.len(), 3);
    }

    #[test]
    fn real_claude_code_sessions_match_their_converted_corpus_files() {
        use super::super::native::testutil::{assert_matches_corpus, corpus_records, shared_dir};
        let Some(dir) = shared_dir() else { return };
        for (native, converted) in [
            ("short", "cc-spotter__short"),
            ("tool_heavy", "cc-spotter__tool_heavy"),
            (
                "ae4a77f8-agent-acompact-946d2b",
                "cc-spotter__ae4a77f8-agent-acompact-9",
            ),
            (
                "fa812bfe-agent-a93ccab",
                "cc-spotter__fa812bfe-agent-a93ccab",
            ),
        ] {
            let text = std::fs::read_to_string(
                dir.join(format!("native-sessions/claude-code/{native}.jsonl")),
            )
            .unwrap();
            let t = read(&text);
            assert!(t.issues.is_empty(), "{native}: {:?}", t.issues);
            let corpus =
                std::fs::read_to_string(dir.join(format!("corpus/{converted}.jsonl"))).unwrap();
            assert_matches_corpus(native, &t.entries, &corpus_records(&corpus));
        }
    }
}
