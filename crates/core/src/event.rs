//! The event model: what an agent runtime tells the guard.
//!
//! Lifecycle words, used the same way everywhere in loopguard:
//!
//! - **session**: one conversation; one guard.
//! - **user turn**: starts with a real user message. A message that is the guard's own
//!   steer, or a harness message repeating the previous one word for word, is not a new turn.
//!   Budgets and block counts are per user turn.
//! - **run**: one agent run inside a turn (`RunStart` … `RunEnd`); a run id scopes history.
//! - **message**: one assistant message (`MessageStart` … `MessageEnd`); text detectors look
//!   inside one message only.
//! - **batch**: the tool calls issued by one assistant message; they may execute in parallel.
//! - **compaction**: the context was summarised; the post-compaction guard arms after it.

use serde_json::Value;

/// Which stream of an assistant message a text delta belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// Reasoning the model streams before or between answers.
    Thinking,
    /// The visible answer text.
    Text,
}

/// Who wrote a user-side message, as far as the host knows.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The host does not say; the guard decides (own steer, repeated harness text, or a person).
    #[default]
    Unknown,
    /// A person typed it.
    Human,
    /// The harness injected it (format errors, reminders).
    Harness,
    /// The guard's own steer, delivered back by the host.
    Guard,
}

/// One event of an agent session. Borrowed from the caller; the guard never keeps it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A session begins (optional; a guard is one session anyway).
    SessionStart {
        /// The host's session id.
        id: &'a str,
    },
    /// A user-side message: a person's prompt or harness-injected text.
    User {
        /// The message text.
        text: &'a str,
        /// Who wrote it, when the host knows.
        origin: Origin,
    },
    /// An agent run starts (`agent_start`).
    RunStart {
        /// The host's run id, if it has one.
        run_id: Option<&'a str>,
    },
    /// An agent run ended and the host is idle (`agent_end` / settled).
    RunEnd,
    /// An assistant message starts streaming.
    MessageStart,
    /// A streamed piece of assistant text.
    TextDelta {
        /// Thinking or answer.
        stream: Stream,
        /// The new characters.
        delta: &'a str,
    },
    /// The assistant message is complete.
    MessageEnd,
    /// The model asks to run a tool. A block verdict means the host must not execute it.
    ToolCall {
        /// Call id, used to pair the result.
        id: &'a str,
        /// Tool name as called.
        tool: &'a str,
        /// Arguments (any JSON value; objects are compared with keys sorted). A string that
        /// holds a JSON object or array (OpenAI-style `function.arguments`) is read as that
        /// value ([`decode_args`]), so `"{\"a\":1,\"b\":2}"` and `{"b":2,"a":1}` are one call.
        args: &'a Value,
        /// Index of the issuing assistant message, when the host knows it. Calls with the
        /// same batch were issued together. `None`: the bus counts `MessageStart`s itself.
        batch: Option<u64>,
    },
    /// A tool returned.
    ToolResult {
        /// The call id this result answers.
        id: &'a str,
        /// Tool name; empty when the host does not say (the bus pairs the result with its
        /// call by `id` alone, and detectors see the call's tool).
        tool: &'a str,
        /// The text parts of the result, joined.
        content: &'a str,
        /// The source's own error flag.
        is_error: bool,
        /// How many image blocks the result carried (their bytes are never hashed).
        images: u32,
        /// Structured details, when the runtime has them (exec status, exit codes…).
        details: Option<&'a Value>,
    },
    /// The context was compacted.
    Compaction,
}

/// Arguments that a host passed as a JSON-encoded string holding an object or an array (as
/// OpenAI-style APIs deliver `function.arguments`), decoded; `None` for any other value (which
/// is used as it is).
///
/// ```
/// use serde_json::json;
/// use loopguard_core::decode_args;
/// assert_eq!(decode_args(&json!("{\"path\": \"a.rs\"}")), Some(json!({"path": "a.rs"})));
/// assert_eq!(decode_args(&json!("ls -la")), None);
/// assert_eq!(decode_args(&json!({"path": "a.rs"})), None);
/// ```
pub fn decode_args(args: &Value) -> Option<Value> {
    let Value::String(s) = args else {
        return None;
    };
    if !matches!(s.trim_start().as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    serde_json::from_str::<Value>(s)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
}

impl<'a> Event<'a> {
    /// This event with [`decode_args`] applied to a tool call's arguments, `decoded` holding
    /// the decoded value; the event itself, borrowed, when there is nothing to decode (not a
    /// call, or arguments that are not a JSON object or array written as a string).
    pub fn with_decoded_args<'b>(
        &'b self,
        decoded: &'b mut Option<Value>,
    ) -> std::borrow::Cow<'b, Event<'b>>
    where
        'a: 'b,
    {
        if let Event::ToolCall {
            id,
            tool,
            args,
            batch,
        } = self
        {
            if let Some(v) = decode_args(args) {
                let v: &'b Value = decoded.insert(v);
                return std::borrow::Cow::Owned(Event::ToolCall {
                    id,
                    tool,
                    args: v,
                    batch: *batch,
                });
            }
        }
        std::borrow::Cow::Borrowed(self)
    }
}

impl<'a> Event<'a> {
    /// This event with a tool result's content replaced by its plain text (the host's
    /// wrapping taken off: [`crate::wrapping::plain`]), `plain` holding that text; the event itself,
    /// borrowed, when it is no result or its content has no wrapping.
    pub fn with_plain_result<'b>(
        &'b self,
        plain: &'b mut Option<String>,
    ) -> std::borrow::Cow<'b, Event<'b>>
    where
        'a: 'b,
    {
        if let Event::ToolResult {
            id,
            tool,
            content,
            is_error,
            images,
            details,
        } = self
        {
            if let Some(text) = crate::wrapping::plain(content) {
                let text: &'b str = plain.insert(text);
                return std::borrow::Cow::Owned(Event::ToolResult {
                    id,
                    tool,
                    content: text,
                    is_error: *is_error,
                    images: *images,
                    details: *details,
                });
            }
        }
        std::borrow::Cow::Borrowed(self)
    }
}

/// The kind of an [`Event`], used for interest masks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum EventKind {
    /// [`Event::SessionStart`]
    SessionStart = 0,
    /// [`Event::User`]
    User = 1,
    /// [`Event::RunStart`]
    RunStart = 2,
    /// [`Event::RunEnd`]
    RunEnd = 3,
    /// [`Event::MessageStart`]
    MessageStart = 4,
    /// [`Event::TextDelta`]
    TextDelta = 5,
    /// [`Event::MessageEnd`]
    MessageEnd = 6,
    /// [`Event::ToolCall`]
    ToolCall = 7,
    /// [`Event::ToolResult`]
    ToolResult = 8,
    /// [`Event::Compaction`]
    Compaction = 9,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: [EventKind; 10] = [
        EventKind::SessionStart,
        EventKind::User,
        EventKind::RunStart,
        EventKind::RunEnd,
        EventKind::MessageStart,
        EventKind::TextDelta,
        EventKind::MessageEnd,
        EventKind::ToolCall,
        EventKind::ToolResult,
        EventKind::Compaction,
    ];

    /// A short snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::SessionStart => "session_start",
            EventKind::User => "user",
            EventKind::RunStart => "run_start",
            EventKind::RunEnd => "run_end",
            EventKind::MessageStart => "message_start",
            EventKind::TextDelta => "text_delta",
            EventKind::MessageEnd => "message_end",
            EventKind::ToolCall => "tool_call",
            EventKind::ToolResult => "tool_result",
            EventKind::Compaction => "compaction",
        }
    }

    pub(crate) fn bit(self) -> u16 {
        1u16 << (self as u16)
    }
}

impl<'a> Event<'a> {
    /// A tool call outside any batch.
    pub fn tool_call(id: &'a str, tool: &'a str, args: &'a Value) -> Event<'a> {
        Event::ToolCall {
            id,
            tool,
            args,
            batch: None,
        }
    }

    /// A tool result with no image blocks and no structured details.
    pub fn tool_result(id: &'a str, tool: &'a str, content: &'a str, is_error: bool) -> Event<'a> {
        Event::ToolResult {
            id,
            tool,
            content,
            is_error,
            images: 0,
            details: None,
        }
    }

    /// The kind of this event.
    pub fn kind(&self) -> EventKind {
        match self {
            Event::SessionStart { .. } => EventKind::SessionStart,
            Event::User { .. } => EventKind::User,
            Event::RunStart { .. } => EventKind::RunStart,
            Event::RunEnd => EventKind::RunEnd,
            Event::MessageStart => EventKind::MessageStart,
            Event::TextDelta { .. } => EventKind::TextDelta,
            Event::MessageEnd => EventKind::MessageEnd,
            Event::ToolCall { .. } => EventKind::ToolCall,
            Event::ToolResult { .. } => EventKind::ToolResult,
            Event::Compaction => EventKind::Compaction,
        }
    }
}

/// A set of [`EventKind`]s a detector wants to see. Asked once when the bus is built.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Interest(u16);

impl Interest {
    /// No events.
    pub const NONE: Interest = Interest(0);
    /// Every event.
    pub const ALL: Interest = Interest(0x3ff);
    /// Tool calls and results.
    pub const TOOLS: Interest = Interest((1 << 7) | (1 << 8));

    /// The set holding exactly `kinds`.
    pub fn of(kinds: &[EventKind]) -> Interest {
        let mut bits = 0;
        for k in kinds {
            bits |= k.bit();
        }
        Interest(bits)
    }

    /// This set plus `kind`.
    #[must_use]
    pub fn with(self, kind: EventKind) -> Interest {
        Interest(self.0 | kind.bit())
    }

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: EventKind) -> bool {
        self.0 & kind.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    /// Every name of [`super::FIELD_ALIASES`] is read by [`super::OwnedEvent`] as its field.
    #[test]
    fn owned_events_read_every_alias_of_the_table() {
        let value = |field: &str| match field {
            "args" => serde_json::json!({"path": "a"}),
            _ => serde_json::json!("v"),
        };
        for (ty, field, names) in super::FIELD_ALIASES {
            let base = |key: &str| {
                let mut o = serde_json::json!({"type": ty, "id": "v", "tool": "v"});
                let m = o.as_object_mut().unwrap();
                m.remove(*field);
                m.insert(key.to_owned(), value(field));
                serde_json::from_value::<super::OwnedEvent>(o).unwrap()
            };
            for name in *names {
                assert_eq!(base(name), base(field), "{ty}.{name}");
            }
        }
    }

    use super::*;

    #[test]
    fn interest_contains_only_what_it_was_built_of() {
        let i = Interest::of(&[EventKind::ToolCall, EventKind::Compaction]);
        assert!(i.contains(EventKind::ToolCall));
        assert!(i.contains(EventKind::Compaction));
        assert!(!i.contains(EventKind::ToolResult));
        for k in EventKind::ALL {
            assert!(Interest::ALL.contains(k));
            assert!(!Interest::NONE.contains(k));
        }
        assert!(Interest::TOOLS.contains(EventKind::ToolResult));
        assert!(!Interest::TOOLS.contains(EventKind::TextDelta));
    }
}

/// The other names hosts give the fields of the tool events, as the model APIs write them:
/// (line type, field, its other names, the first present read when the field is absent).
/// OpenAI's `name`, `arguments` and `tool_call_id`, the Messages API's `input` and
/// `tool_use_id`, Codex's `call_id`, the Responses API's `output` for a result's content.
/// [`OwnedEvent`] (the sidecar, the bindings) and the transcript reader both read them.
pub const FIELD_ALIASES: &[(&str, &str, &[&str])] = &[
    ("tool_call", "id", &["call_id"]),
    ("tool_call", "tool", &["name"]),
    ("tool_call", "args", &["arguments", "input"]),
    (
        "tool_result",
        "id",
        &["tool_call_id", "tool_use_id", "call_id"],
    ),
    ("tool_result", "tool", &["name"]),
    ("tool_result", "content", &["output"]),
];

/// A call id as a host writes it: a string, an integer (a host that numbers its calls: `7`
/// reads as `"7"`), or `null` (none: empty). Another value is given back.
///
/// ```
/// use loopguard_core::call_id_of;
/// use serde_json::json;
/// assert_eq!(call_id_of(json!(7)), Ok("7".to_owned()));
/// assert_eq!(call_id_of(json!(null)), Ok(String::new()));
/// assert_eq!(call_id_of(json!(1.5)), Err(json!(1.5)));
/// ```
pub fn call_id_of(v: Value) -> Result<String, Value> {
    match v {
        Value::String(s) => Ok(s),
        Value::Null => Ok(String::new()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        other => Err(other),
    }
}

/// [`call_id_of`] for serde.
fn call_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::de::Error;
    call_id_of(<Value as serde::Deserialize>::deserialize(d)?).map_err(|other| {
        D::Error::custom(format!("an id must be a string or an integer, not {other}"))
    })
}

/// An owned [`Event`], for hosts and tools that keep events (transcript readers, test
/// scripts, the sidecar). [`OwnedEvent::as_event`] borrows it back.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OwnedEvent {
    /// See [`Event::SessionStart`].
    SessionStart {
        /// Session id.
        id: String,
    },
    /// See [`Event::User`].
    User {
        /// Text.
        text: String,
        /// Origin.
        #[serde(default)]
        origin: Origin,
    },
    /// See [`Event::RunStart`].
    RunStart {
        /// Run id.
        #[serde(default)]
        run_id: Option<String>,
    },
    /// See [`Event::RunEnd`].
    RunEnd,
    /// See [`Event::MessageStart`].
    MessageStart,
    /// See [`Event::TextDelta`].
    TextDelta {
        /// Stream.
        stream: Stream,
        /// Delta.
        delta: String,
    },
    /// See [`Event::MessageEnd`].
    MessageEnd,
    /// See [`Event::ToolCall`].
    ToolCall {
        /// Call id (also read from `call_id`, Codex's name; an integer is read as its
        /// digits). Empty when the host numbers no calls (then a result answers the oldest
        /// call waiting).
        #[serde(default, alias = "call_id", deserialize_with = "call_id")]
        id: String,
        /// Tool (also read from `name`, as the model APIs call it).
        #[serde(alias = "name")]
        tool: String,
        /// Arguments (also read from `arguments`, OpenAI's and Codex's name, and `input`,
        /// the Messages API's).
        #[serde(default, alias = "arguments", alias = "input")]
        args: Value,
        /// Batch.
        #[serde(default)]
        batch: Option<u64>,
    },
    /// See [`Event::ToolResult`].
    ToolResult {
        /// Call id (also read from `tool_call_id`, OpenAI's name, `tool_use_id`, the
        /// Messages API's, and `call_id`, Codex's; an integer is read as its digits). Empty
        /// when the host numbers no calls.
        #[serde(
            default,
            alias = "tool_call_id",
            alias = "tool_use_id",
            alias = "call_id",
            deserialize_with = "call_id"
        )]
        id: String,
        /// Tool (empty or absent: the paired call's; also read from `name`).
        #[serde(default, alias = "name")]
        tool: String,
        /// Text (also read from `output`, the Responses API's name; absent: no output).
        #[serde(default, alias = "output")]
        content: String,
        /// Error flag.
        #[serde(default)]
        is_error: bool,
        /// Image count.
        #[serde(default)]
        images: u32,
        /// Details.
        #[serde(default)]
        details: Option<Value>,
    },
    /// See [`Event::Compaction`].
    Compaction,
}

impl OwnedEvent {
    /// Borrows this as an [`Event`].
    pub fn as_event(&self) -> Event<'_> {
        match self {
            OwnedEvent::SessionStart { id } => Event::SessionStart { id },
            OwnedEvent::User { text, origin } => Event::User {
                text,
                origin: *origin,
            },
            OwnedEvent::RunStart { run_id } => Event::RunStart {
                run_id: run_id.as_deref(),
            },
            OwnedEvent::RunEnd => Event::RunEnd,
            OwnedEvent::MessageStart => Event::MessageStart,
            OwnedEvent::TextDelta { stream, delta } => Event::TextDelta {
                stream: *stream,
                delta,
            },
            OwnedEvent::MessageEnd => Event::MessageEnd,
            OwnedEvent::ToolCall {
                id,
                tool,
                args,
                batch,
            } => Event::ToolCall {
                id,
                tool,
                args,
                batch: *batch,
            },
            OwnedEvent::ToolResult {
                id,
                tool,
                content,
                is_error,
                images,
                details,
            } => Event::ToolResult {
                id,
                tool,
                content,
                is_error: *is_error,
                images: *images,
                details: details.as_ref(),
            },
            OwnedEvent::Compaction => Event::Compaction,
        }
    }

    /// Copies an [`Event`] into an owned one.
    pub fn from_event(e: &Event<'_>) -> OwnedEvent {
        match e {
            Event::SessionStart { id } => OwnedEvent::SessionStart {
                id: (*id).to_owned(),
            },
            Event::User { text, origin } => OwnedEvent::User {
                text: (*text).to_owned(),
                origin: *origin,
            },
            Event::RunStart { run_id } => OwnedEvent::RunStart {
                run_id: run_id.map(str::to_owned),
            },
            Event::RunEnd => OwnedEvent::RunEnd,
            Event::MessageStart => OwnedEvent::MessageStart,
            Event::TextDelta { stream, delta } => OwnedEvent::TextDelta {
                stream: *stream,
                delta: (*delta).to_owned(),
            },
            Event::MessageEnd => OwnedEvent::MessageEnd,
            Event::ToolCall {
                id,
                tool,
                args,
                batch,
            } => OwnedEvent::ToolCall {
                id: (*id).to_owned(),
                tool: (*tool).to_owned(),
                args: (*args).clone(),
                batch: *batch,
            },
            Event::ToolResult {
                id,
                tool,
                content,
                is_error,
                images,
                details,
            } => OwnedEvent::ToolResult {
                id: (*id).to_owned(),
                tool: (*tool).to_owned(),
                content: (*content).to_owned(),
                is_error: *is_error,
                images: *images,
                details: details.cloned(),
            },
            Event::Compaction => OwnedEvent::Compaction,
        }
    }
}
