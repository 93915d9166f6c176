//! The agents' hook protocols: one hook input (JSON on stdin) in, one hook output (JSON on
//! stdout) out.
//!
//! Claude Code and Codex share one protocol (`hook_event_name` `PreToolUse`, `PostToolUse`,
//! `PostToolUseFailure`, `UserPromptSubmit`, `Stop`, `PreCompact`, `SessionStart`; output
//! `hookSpecificOutput.permissionDecision`, `hookSpecificOutput.additionalContext`,
//! `continue` / `stopReason`). Gemini CLI names its events `BeforeTool`, `AfterTool`,
//! `BeforeAgent`, `AfterAgent`, `PreCompress`, `SessionStart` and denies with a top-level
//! `decision` / `reason`. The page docs/claude-code.md lists the fields relied on.

use serde_json::{json, Map, Value};

/// The agent whose hook protocol is spoken.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code (`~/.claude/settings.json`).
    ClaudeCode,
    /// OpenAI Codex CLI (`~/.codex/hooks.json`), same protocol as Claude Code.
    Codex,
    /// Gemini CLI (`~/.gemini/settings.json`).
    GeminiCli,
}

impl Agent {
    /// The name used on the command line and in state file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
        }
    }
}

/// What one hook invocation reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Happening {
    /// The model asks for a tool call (`PreToolUse`, `BeforeTool`).
    ToolCall {
        /// The agent's call id, when it sends one.
        id: Option<String>,
        /// Tool name.
        tool: String,
        /// Arguments.
        args: Value,
    },
    /// A tool returned (`PostToolUse`, `PostToolUseFailure`, `AfterTool`).
    ToolResult {
        /// The agent's call id, when it sends one.
        id: Option<String>,
        /// Tool name.
        tool: String,
        /// The call's arguments (to pair it with its call when there is no id).
        args: Value,
        /// The result's text.
        content: String,
        /// Whether the tool failed.
        is_error: bool,
        /// Image blocks in the result.
        images: u32,
    },
    /// A user prompt (`UserPromptSubmit`, `BeforeAgent`).
    User {
        /// The prompt.
        text: String,
    },
    /// The context is being compacted (`PreCompact`, `PreCompress`) or was
    /// (`SessionStart` with `source: "compact"`).
    Compaction {
        /// Reported after the fact (`SessionStart`); the same compaction may have been
        /// reported before (`PreCompact`).
        after: bool,
    },
    /// A session starts (`SessionStart` other than after a compaction).
    SessionStart,
    /// The agent finished responding (`Stop`, `AfterAgent`): the settle point.
    Settle,
    /// An event loopguard does not look at.
    Ignored,
}

/// Where a hook output can put what the guard says: which fields the event supports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Before a tool call: can deny it.
    PreTool,
    /// After a tool call: `additionalContext` reaches the model.
    PostTool,
    /// A prompt: `additionalContext` reaches the model.
    Prompt,
    /// A session start: `additionalContext` reaches the model (Claude Code, Codex).
    SessionStart,
    /// Anything else: only `continue: false` and `systemMessage`.
    Other,
}

/// One parsed hook input.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The agent's session id.
    pub session_id: String,
    /// The subagent whose event this is, when the agent says (`agent_id`).
    pub agent_id: Option<String>,
    /// `hook_event_name` as sent.
    pub event: String,
    /// What it reports.
    pub happening: Happening,
}

impl Input {
    /// Whose guard judges this input: the session's, or a subagent's own
    /// (`<session_id>/<agent_id>`), as `scan` reads a subagent's file as a session of its own.
    pub fn guard_key(&self) -> String {
        match &self.agent_id {
            Some(a) => format!("{}/{a}", self.session_id),
            None => self.session_id.clone(),
        }
    }

    /// Which output fields this input's event supports.
    pub fn slot(&self) -> Slot {
        match &self.happening {
            Happening::ToolCall { .. } => Slot::PreTool,
            Happening::ToolResult { .. } => Slot::PostTool,
            Happening::User { .. } => Slot::Prompt,
            Happening::SessionStart | Happening::Compaction { after: true } => Slot::SessionStart,
            _ => Slot::Other,
        }
    }
}

/// Why a hook input could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InputError {
    /// Not JSON, or not an object.
    #[error("hook input on stdin is not a JSON object: {0}")]
    NotJson(String),
    /// A field the event needs is missing or of the wrong type.
    #[error("hook input `{event}`: field `{field}` is missing or not {want}")]
    Field {
        /// `hook_event_name`.
        event: String,
        /// The field.
        field: &'static str,
        /// What it should be.
        want: &'static str,
    },
}

fn string(o: &Map<String, Value>, event: &str, field: &'static str) -> Result<String, InputError> {
    match o.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(InputError::Field {
            event: event.to_owned(),
            field,
            want: "a string",
        }),
    }
}

fn opt_string(o: &Map<String, Value>, field: &str) -> Option<String> {
    o.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Parses one hook input of `agent`'s protocol.
pub fn parse(agent: Agent, bytes: &[u8]) -> Result<Input, InputError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| InputError::NotJson(e.to_string()))?;
    let Value::Object(o) = v else {
        return Err(InputError::NotJson(
            "the top-level value is not an object".into(),
        ));
    };
    let event = string(&o, "?", "hook_event_name")?;
    let session_id = string(&o, &event, "session_id")?;
    let ev = event.as_str();
    let tool = || string(&o, ev, "tool_name");
    let args = || o.get("tool_input").cloned().unwrap_or_else(|| json!({}));
    let id = || opt_string(&o, "tool_use_id");
    let happening = match (agent, ev) {
        (Agent::GeminiCli, "BeforeTool") | (Agent::ClaudeCode | Agent::Codex, "PreToolUse") => {
            Happening::ToolCall {
                id: id(),
                tool: tool()?,
                args: args(),
            }
        }
        (Agent::ClaudeCode | Agent::Codex, "PostToolUse") => {
            let (content, images) = response_text(o.get("tool_response"));
            Happening::ToolResult {
                id: id(),
                tool: tool()?,
                args: args(),
                content,
                is_error: o
                    .get("tool_response")
                    .and_then(|r| r.get("is_error"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                images,
            }
        }
        (Agent::ClaudeCode | Agent::Codex, "PostToolUseFailure") => Happening::ToolResult {
            id: id(),
            tool: tool()?,
            args: args(),
            content: response_text(o.get("error")).0,
            is_error: true,
            images: 0,
        },
        (Agent::GeminiCli, "AfterTool") => {
            let r = o.get("tool_response");
            let error = r.and_then(|r| r.get("error")).filter(|e| !e.is_null());
            let (content, images) = match error {
                Some(e) => response_text(Some(e)),
                None => response_text(r.and_then(|r| r.get("llmContent")).or(r)),
            };
            Happening::ToolResult {
                id: id(),
                tool: tool()?,
                args: args(),
                content,
                is_error: error.is_some(),
                images,
            }
        }
        (Agent::ClaudeCode | Agent::Codex, "UserPromptSubmit")
        | (Agent::GeminiCli, "BeforeAgent") => Happening::User {
            text: string(&o, ev, "prompt")?,
        },
        (Agent::ClaudeCode | Agent::Codex, "Stop") | (Agent::GeminiCli, "AfterAgent") => {
            Happening::Settle
        }
        (Agent::ClaudeCode | Agent::Codex, "PreCompact") | (Agent::GeminiCli, "PreCompress") => {
            Happening::Compaction { after: false }
        }
        (_, "SessionStart") => match o.get("source").and_then(Value::as_str) {
            Some("compact") => Happening::Compaction { after: true },
            Some("resume") => Happening::Ignored,
            _ => Happening::SessionStart,
        },
        _ => Happening::Ignored,
    };
    Ok(Input {
        agent_id: opt_string(&o, "agent_id"),
        session_id,
        event,
        happening,
    })
}

/// The text of a tool response, as close as the hook input allows to what the model sees
/// (the transcript's `tool_result` content): a string as is; text blocks joined by newlines
/// (images counted); Bash's `stdout` and `stderr` joined by a newline (for a command sent to
/// the background, its task id); a file list one per
/// line; a read file's content; an `output`/`result`/`content` field; anything else as
/// compact JSON (so equal responses stay equal and different ones differ).
pub fn response_text(v: Option<&Value>) -> (String, u32) {
    match v {
        None | Some(Value::Null) => (String::new(), 0),
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(blocks)) => blocks_text(blocks),
        Some(Value::Object(o)) => {
            let s = |k: &str| o.get(k).and_then(Value::as_str);
            if s("stdout").is_some() || s("stderr").is_some() {
                let parts: Vec<&str> = [s("stdout"), s("stderr")]
                    .into_iter()
                    .flatten()
                    .filter(|p| !p.is_empty())
                    .collect();
                // A command sent to the background: the model is told its task id.
                if let (true, Some(task)) = (parts.is_empty(), s("backgroundTaskId")) {
                    return (format!("Command running in background with ID: {task}."), 0);
                }
                return (parts.join("\n"), 0);
            }
            if let Some(Value::Array(names)) = o.get("filenames") {
                let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
                return (names.join("\n"), 0);
            }
            if let Some(c) = o
                .get("file")
                .and_then(|f| f.get("content"))
                .and_then(Value::as_str)
            {
                return (c.to_owned(), 0);
            }
            for k in ["content", "output", "result", "llmContent"] {
                match o.get(k) {
                    Some(Value::String(t)) => return (t.clone(), 0),
                    Some(Value::Array(b)) => return blocks_text(b),
                    _ => {}
                }
            }
            (Value::Object(o.clone()).to_string(), 0)
        }
        Some(other) => (other.to_string(), 0),
    }
}

fn blocks_text(blocks: &[Value]) -> (String, u32) {
    let mut out = String::new();
    let mut images = 0u32;
    for b in blocks {
        let text = match b {
            Value::String(s) => Some(s.as_str()),
            _ => match b.get("type").and_then(Value::as_str) {
                Some("image" | "input_image") => {
                    images = images.saturating_add(1);
                    None
                }
                _ => b.get("text").and_then(Value::as_str),
            },
        };
        if let Some(t) = text {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(t);
        }
    }
    (out, images)
}

/// What the hook answers, agent-independent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// Deny the tool call with this reason (the model sees it).
    pub deny: Option<String>,
    /// Text for the model (`additionalContext`).
    pub context: Option<String>,
    /// Stop the agent with this reason (`continue: false`, `stopReason`; shown to the user).
    pub stop: Option<String>,
    /// A message for the user (`systemMessage`).
    pub notice: Option<String>,
}

impl Reply {
    /// Whether there is nothing to say (the hook then prints nothing).
    pub fn is_empty(&self) -> bool {
        self == &Reply::default()
    }
}

/// The hook output for `reply` to an input of `event` (`hook_event_name`) in `agent`'s
/// protocol, or `None` when there is nothing to say.
pub fn render(agent: Agent, event: &str, slot: Slot, reply: &Reply) -> Option<Value> {
    if reply.is_empty() {
        return None;
    }
    let mut out = Map::new();
    if let Some(stop) = &reply.stop {
        out.insert("continue".into(), Value::Bool(false));
        out.insert("stopReason".into(), Value::String(stop.clone()));
    }
    if let Some(n) = &reply.notice {
        out.insert("systemMessage".into(), Value::String(n.clone()));
    }
    let mut specific = Map::new();
    match agent {
        Agent::ClaudeCode | Agent::Codex => {
            if let (Some(reason), Slot::PreTool) = (&reply.deny, slot) {
                specific.insert("permissionDecision".into(), json!("deny"));
                specific.insert("permissionDecisionReason".into(), json!(reason));
            }
        }
        Agent::GeminiCli => {
            if let (Some(reason), Slot::PreTool) = (&reply.deny, slot) {
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(reason));
            }
        }
    }
    if let Some(c) = reply.context.as_ref().filter(|_| carries_context(slot)) {
        specific.insert("additionalContext".into(), json!(c));
    }
    if !specific.is_empty() {
        // `hookEventName` first, as in the agents' documentation.
        let mut ordered = Map::new();
        ordered.insert("hookEventName".into(), json!(event));
        ordered.extend(specific);
        out.insert("hookSpecificOutput".into(), Value::Object(ordered));
    }
    if out.is_empty() {
        None
    } else {
        Some(Value::Object(out))
    }
}

/// Whether an output for `slot` can carry text to the model (`additionalContext`): after a
/// tool result, with a prompt, at a session start. Before a tool call, at a stop and before a
/// compaction it cannot (the text is kept for the next event that can).
pub fn carries_context(slot: Slot) -> bool {
    matches!(slot, Slot::PostTool | Slot::Prompt | Slot::SessionStart)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// What `input` from `agent` means (the input must parse).
    fn happening(agent: Agent, input: &[u8]) -> Happening {
        parse(agent, input).unwrap().happening
    }

    #[test]
    fn claude_code_inputs_map_to_happenings() {
        let pre = br#"{"session_id":"s","transcript_path":"/t","cwd":"/","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}"#;
        let i = parse(Agent::ClaudeCode, pre).unwrap();
        assert_eq!(i.session_id, "s");
        assert_eq!(
            i.happening,
            Happening::ToolCall {
                id: Some("toolu_1".into()),
                tool: "Bash".into(),
                args: json!({"command":"ls"})
            }
        );
        assert_eq!(i.slot(), Slot::PreTool);
        let post = br#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\nb","stderr":"warn","interrupted":false,"isImage":false}}"#;
        match happening(Agent::ClaudeCode, post) {
            Happening::ToolResult {
                id,
                content,
                is_error,
                ..
            } => {
                assert_eq!(id, None);
                assert_eq!(content, "a\nb\nwarn");
                assert!(!is_error);
            }
            other => panic!("{other:?}"),
        }
        let fail = br#"{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{},"tool_use_id":"t","error":"exit 1"}"#;
        assert!(matches!(
            happening(Agent::ClaudeCode, fail),
            Happening::ToolResult { is_error: true, ref content, .. } if content == "exit 1"
        ));
        let start = br#"{"session_id":"s","hook_event_name":"SessionStart","source":"compact"}"#;
        assert_eq!(
            happening(Agent::ClaudeCode, start),
            Happening::Compaction { after: true }
        );
        let stop = br#"{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}"#;
        assert_eq!(happening(Agent::ClaudeCode, stop), Happening::Settle);
        let other = br#"{"session_id":"s","hook_event_name":"Notification","message":"hi"}"#;
        assert_eq!(happening(Agent::ClaudeCode, other), Happening::Ignored);
    }

    #[test]
    fn bad_inputs_say_what_is_wrong() {
        assert!(matches!(
            parse(Agent::ClaudeCode, b"[1]"),
            Err(InputError::NotJson(_))
        ));
        assert!(matches!(
            parse(Agent::ClaudeCode, b"{oops"),
            Err(InputError::NotJson(_))
        ));
        let e = parse(
            Agent::ClaudeCode,
            br#"{"session_id":"s","hook_event_name":"PreToolUse"}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "hook input `PreToolUse`: field `tool_name` is missing or not a string"
        );
        let e = parse(Agent::ClaudeCode, br#"{"hook_event_name":"Stop"}"#).unwrap_err();
        assert!(e.to_string().contains("`session_id`"), "{e}");
    }

    #[test]
    fn tool_responses_become_the_text_the_model_sees() {
        let t = |v: Value| response_text(Some(&v));
        assert_eq!(t(json!("plain")), ("plain".into(), 0));
        assert_eq!(
            t(json!({"filenames":["/a","/b"],"numFiles":2})),
            ("/a\n/b".into(), 0)
        );
        assert_eq!(
            t(
                json!([{"type":"text","text":"x"},{"type":"image","source":{}},{"type":"text","text":"y"}])
            ),
            ("x\ny".into(), 1)
        );
        assert_eq!(
            t(json!({"type":"text","file":{"filePath":"/f","content":"body"}})),
            ("body".into(), 0)
        );
        assert_eq!(t(json!({"stdout":"","stderr":""})), (String::new(), 0));
        let bg = t(json!({"stdout":"","stderr":"","backgroundTaskId":"bae407b"})).0;
        assert!(bg.contains("bae407b"), "{bg}");
        // Unknown shapes: equal responses give equal text, different ones differ.
        assert_eq!(t(json!({"k":1})), t(json!({"k":1})));
        assert_ne!(t(json!({"k":1})), t(json!({"k":2})));
    }

    #[test]
    fn gemini_inputs_use_their_own_event_names() {
        let before = br#"{"session_id":"g","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#;
        assert!(matches!(
            happening(Agent::GeminiCli, before),
            Happening::ToolCall { id: None, .. }
        ));
        let after = br#"{"session_id":"g","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{},"tool_response":{"llmContent":"out","returnDisplay":"out"}}"#;
        assert!(matches!(
            happening(Agent::GeminiCli, after),
            Happening::ToolResult { ref content, is_error: false, .. } if content == "out"
        ));
        let failed = br#"{"session_id":"g","hook_event_name":"AfterTool","tool_name":"x","tool_input":{},"tool_response":{"llmContent":"","error":"boom"}}"#;
        assert!(matches!(
            happening(Agent::GeminiCli, failed),
            Happening::ToolResult { ref content, is_error: true, .. } if content == "boom"
        ));
        // Claude Code's names mean nothing to the Gemini protocol.
        let pre = br#"{"session_id":"g","hook_event_name":"PreToolUse","tool_name":"x"}"#;
        assert_eq!(happening(Agent::GeminiCli, pre), Happening::Ignored);
    }

    #[test]
    fn replies_render_in_each_protocol() {
        let deny = Reply {
            deny: Some("same call again".into()),
            ..Reply::default()
        };
        assert_eq!(
            render(Agent::ClaudeCode, "PreToolUse", Slot::PreTool, &deny).unwrap(),
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"same call again"}})
        );
        assert_eq!(
            render(Agent::GeminiCli, "BeforeTool", Slot::PreTool, &deny).unwrap(),
            json!({"decision":"deny","reason":"same call again"})
        );
        let steer = Reply {
            context: Some("try something else".into()),
            ..Reply::default()
        };
        assert_eq!(
            render(Agent::ClaudeCode, "PostToolUse", Slot::PostTool, &steer).unwrap(),
            json!({"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"try something else"}})
        );
        // A Stop hook cannot carry context: nothing to print.
        assert_eq!(render(Agent::ClaudeCode, "Stop", Slot::Other, &steer), None);
        let stop = Reply {
            stop: Some("loopguard stopped".into()),
            ..Reply::default()
        };
        assert_eq!(
            render(Agent::Codex, "Stop", Slot::Other, &stop).unwrap(),
            json!({"continue":false,"stopReason":"loopguard stopped"})
        );
        assert_eq!(
            render(
                Agent::ClaudeCode,
                "PreToolUse",
                Slot::PreTool,
                &Reply::default()
            ),
            None
        );
    }
}
