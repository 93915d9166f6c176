//! # loopguard-sidecar
//!
//! The stdio sidecar behind `loopguard serve --stdio`: hosts written in other languages send
//! their agents' events as JSON lines and read one verdict line back for each (the contract: `docs/contracts/sidecar.md`).
//!
//! - **One output line per input line, in order.** An event line is answered with
//!   `{"session","seq","action","message","terminate","findings",...}`; a control line with
//!   `{"session","control","ok",...}`; a line that cannot be used (not UTF-8, not JSON, a
//!   missing or mistyped field, an unknown type) with `{"error":{"line":n,"message":"..."}}`,
//!   and the stream goes on.
//! - **Many sessions multiplexed.** Each line names its `session`; each session has its own
//!   [`Guard`]. Beyond [`ServerOptions::max_sessions`] the least recently used session is
//!   evicted; the line that caused it says so (`"evicted": "id"`, with its state when
//!   [`ServerOptions::snapshot_on_evict`] is set, so the host can restore it later).
//! - **Control commands:** `enable`, `disable`, `reset`, `close`, `snapshot` (the answer
//!   carries `state`) and `restore` (takes `state`).
//!
//! ```
//! use loopguard_sidecar::{Server, ServerOptions};
//! let mut server = Server::new(ServerOptions::preset("default").unwrap()).unwrap();
//! let out = server.handle_line(1, br#"{"session":"a","type":"user","text":"list the files"}"#);
//! assert!(out.starts_with(r#"{"session":"a","seq":0,"action":"continue""#), "{out}");
//! let out = server.handle_line(2, b"{not json");
//! assert!(out.starts_with(r#"{"error":{"line":2,"#), "{out}");
//! ```
//!
//! ## Input lines
//!
//! Every line carries `"session": "<id>"` and a `type`:
//!
//! | `type` | fields | events |
//! |---|---|---|
//! | `user` | `text`, `origin`? (`unknown`, `human`, `harness`, `guard`) | `User` |
//! | `run_start` / `agent_start` | `run_id`? | `RunStart` |
//! | `run_end` / `agent_end` | — | `RunEnd` |
//! | `message_start`, `message_end` | — | `MessageStart`, `MessageEnd` |
//! | `text_delta` | `stream` (`thinking` or `text`), `delta` | `TextDelta` |
//! | `assistant` | `text`?, `thinking`? | a whole message: `MessageStart`, the deltas, `MessageEnd` (one answer, the strongest verdict) |
//! | `tool_call` | `id`? (or `call_id`), `tool` (or `name`), `args`? (or `arguments`, `input`), `batch`? | `ToolCall` |
//! | `tool_result` | `id`? (or `tool_call_id`, `tool_use_id`, `call_id`), `tool`? (or `name`), `content`? (a string, or MCP's list of content blocks), `is_error`?, `images`?, `details`? | `ToolResult` |
//! | `compaction` | — | `Compaction` |
//! | `session_start` | `id` | `SessionStart` |
//! | `control` | `command`, `state`? | see above |
#![warn(missing_docs)]

use loopguard::orchestrator::{Action, Guard, GuardTemplate, Verdict};
use loopguard_core::{Config, ConfigError, OwnedEvent, Stream};
use loopguard_transcript::read_line_bounded;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, Write};

/// The default bound on live sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// The default bound on one input line, in bytes ([`ServerOptions::max_line_bytes`]); a
/// longer line is answered with an error. A `tool_result` line of any size up to it is read
/// with one copy of the line in memory (its content is unescaped in place).
pub const MAX_LINE_BYTES: usize = 1024 * 1024 * 1024;
/// Lines longer than this take the in-place path when they are `tool_result` lines.
const IN_PLACE_BYTES: usize = 1024 * 1024;

/// How the server is set up.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Live sessions kept at most; beyond it the least recently used one is evicted.
    pub max_sessions: usize,
    /// The configuration every session's guard is built from (resolved over the preset it
    /// names, `default` when none).
    pub config: Config,
    /// Put the evicted session's state in the answer that evicts it.
    pub snapshot_on_evict: bool,
    /// The longest input line accepted, in bytes (default [`MAX_LINE_BYTES`]).
    pub max_line_bytes: usize,
}

impl ServerOptions {
    /// Options for preset `name` (`default`, `pi-loop-guard`, ...), with
    /// [`DEFAULT_MAX_SESSIONS`].
    pub fn preset(name: &str) -> Result<ServerOptions, ConfigError> {
        // Checked here so that an unknown name fails early; the guard builder resolves it.
        loopguard::orchestrator::preset(name)?;
        let config = Config {
            preset: Some(name.to_owned()),
            ..Config::default()
        };
        Ok(ServerOptions::with_config(config))
    }

    /// Options for a configuration file (resolved over the preset it names).
    pub fn config_file(path: &std::path::Path) -> Result<ServerOptions, ConfigError> {
        Ok(ServerOptions::with_config(Config::from_file(path)?))
    }

    /// Options for `config`, with [`DEFAULT_MAX_SESSIONS`].
    pub fn with_config(config: Config) -> ServerOptions {
        ServerOptions {
            max_sessions: DEFAULT_MAX_SESSIONS,
            config,
            snapshot_on_evict: false,
            max_line_bytes: MAX_LINE_BYTES,
        }
    }
}

/// Why the sidecar could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SidecarError {
    /// The configuration does not build a guard.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Reading stdin or writing stdout failed.
    #[error("sidecar i/o error: {0}")]
    Io(#[from] io::Error),
}

/// Runs the sidecar on this process's stdin and stdout until stdin ends: what
/// `loopguard serve --stdio` does.
pub fn serve_stdio(options: ServerOptions) -> Result<ServeStats, SidecarError> {
    let mut server = Server::new(options)?;
    let stdin = io::stdin();
    let stdout = io::stdout();
    Ok(server.serve(stdin.lock(), io::BufWriter::new(stdout.lock()))?)
}

/// What [`Server::serve`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Lines answered.
    pub lines: u64,
    /// Lines answered with an error.
    pub errors: u64,
}

/// One live session.
#[derive(Debug)]
struct Session {
    guard: Guard,
    /// Its position in the recency order.
    tick: u64,
}

/// The sidecar: parses lines, routes them to per-session guards, renders the answers.
#[derive(Debug)]
pub struct Server {
    /// The configuration, resolved once; every session's guard is built from it.
    template: GuardTemplate,
    max_sessions: usize,
    max_line_bytes: usize,
    snapshot_on_evict: bool,
    sessions: HashMap<String, Session>,
    /// Sessions by last use (oldest first), for least-recently-used eviction.
    order: BTreeMap<u64, String>,
    tick: u64,
}

/// An evicted session: its id and, when asked for, its state.
type Evicted = (String, Option<Value>);

/// What one line asks for.
enum Request {
    Events(Vec<OwnedEvent>),
    Control {
        command: Command,
        state: Option<Value>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Command {
    Enable,
    Disable,
    Reset,
    Close,
    Snapshot,
    Restore,
}

impl Command {
    fn parse(s: &str) -> Option<Command> {
        Some(match s {
            "enable" => Command::Enable,
            "disable" => Command::Disable,
            "reset" => Command::Reset,
            "close" => Command::Close,
            "snapshot" => Command::Snapshot,
            "restore" => Command::Restore,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Command::Enable => "enable",
            Command::Disable => "disable",
            Command::Reset => "reset",
            Command::Close => "close",
            Command::Snapshot => "snapshot",
            Command::Restore => "restore",
        }
    }
}

impl Server {
    /// A server; fails when the configuration does not build a guard.
    pub fn new(options: ServerOptions) -> Result<Server, ConfigError> {
        let template = Guard::builder().config(options.config).template()?;
        let server = Server {
            template,
            max_sessions: options.max_sessions.max(1),
            snapshot_on_evict: options.snapshot_on_evict,
            max_line_bytes: options.max_line_bytes.max(1),
            sessions: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
        };
        server.new_guard()?;
        Ok(server)
    }

    /// A server whose sessions are built from `template` (resolved once; hosts and fuzz
    /// targets that start many servers reuse it).
    pub fn from_template(
        template: GuardTemplate,
        max_sessions: usize,
        snapshot_on_evict: bool,
    ) -> Server {
        Server {
            template,
            max_sessions: max_sessions.max(1),
            snapshot_on_evict,
            max_line_bytes: MAX_LINE_BYTES,
            sessions: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
        }
    }

    /// Number of live sessions.
    pub fn live_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Whether session `id` is live.
    pub fn is_live(&self, id: &str) -> bool {
        self.sessions.contains_key(id)
    }

    fn new_guard(&self) -> Result<Guard, ConfigError> {
        self.template.build()
    }

    /// Answers one input line (`line_no` is how errors name it, 1-based by convention). The
    /// answer is one JSON object, without a newline.
    pub fn handle_line(&mut self, line_no: u64, bytes: &[u8]) -> String {
        let (session, request) = match parse(bytes) {
            Ok(x) => x,
            Err((session, message)) => return error_line(line_no, session.as_deref(), &message),
        };
        match request {
            Request::Events(events) => self.events(line_no, session, &events),
            Request::Control { command, state } => self.control(line_no, session, command, state),
        }
    }

    /// Reads lines from `input` until it ends and writes one answer line for each, flushing
    /// after each answer (hosts wait for them).
    pub fn serve<R: BufRead, W: Write>(
        &mut self,
        mut input: R,
        mut output: W,
    ) -> io::Result<ServeStats> {
        let mut stats = ServeStats::default();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let max = self.max_line_bytes;
            let n = read_line_bounded(&mut input, &mut buf, max)?;
            if n == 0 {
                break;
            }
            stats.lines += 1;
            let answer = if n > max {
                error_line(
                    stats.lines,
                    None,
                    &format!("line longer than {max} bytes (the sidecar's --max-line-bytes)"),
                )
            } else {
                let mut len = buf.len();
                for end in [b'\n', b'\r'] {
                    if len > 0 && buf.get(len - 1) == Some(&end) {
                        len -= 1;
                    }
                }
                let line = buf.get_mut(..len).unwrap_or_default();
                let large = if len > IN_PLACE_BYTES {
                    self.handle_large_result(stats.lines, line)
                } else {
                    None
                };
                match large {
                    Some(answer) => answer,
                    None => self.handle_line(stats.lines, &buf[..len]),
                }
            };
            if answer.starts_with("{\"error\"") {
                stats.errors += 1;
            }
            output.write_all(answer.as_bytes())?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
        Ok(stats)
    }

    /// The session's guard, creating it (and evicting the least recently used one) when
    /// needed. Returns the id of the evicted session and its state when asked.
    fn touch(&mut self, id: &str) -> Result<(&mut Session, Option<Evicted>), String> {
        self.tick += 1;
        let tick = self.tick;
        let mut evicted = None;
        if let Some(s) = self.sessions.get_mut(id) {
            self.order.remove(&s.tick);
            s.tick = tick;
        } else {
            let guard = self.new_guard().map_err(|e| e.to_string())?;
            if self.sessions.len() >= self.max_sessions {
                if let Some((_, old)) = self.order.pop_first() {
                    let state = self.sessions.remove(&old).and_then(|s| {
                        if self.snapshot_on_evict {
                            Some(snapshot_of(&s.guard))
                        } else {
                            None
                        }
                    });
                    evicted = Some((old, state));
                }
            }
            self.sessions.insert(id.to_owned(), Session { guard, tick });
        }
        self.order.insert(tick, id.to_owned());
        match self.sessions.get_mut(id) {
            Some(s) => Ok((s, evicted)),
            None => Err("internal error: session vanished".to_owned()),
        }
    }

    /// A long `tool_result` line, read with one copy: the content's JSON string is unescaped
    /// in place inside the line and handed to the guard as a borrowed `&str`. `None` when the
    /// line is not such a line (the general path answers it, errors included).
    fn handle_large_result(&mut self, line_no: u64, line: &mut [u8]) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Large<'a> {
            #[serde(borrow)]
            session: std::borrow::Cow<'a, str>,
            #[serde(rename = "type", borrow)]
            ty: std::borrow::Cow<'a, str>,
            #[serde(
                default,
                borrow,
                alias = "tool_call_id",
                alias = "tool_use_id",
                alias = "call_id"
            )]
            id: std::borrow::Cow<'a, str>,
            #[serde(default, borrow, alias = "name")]
            tool: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            content: &'a serde_json::value::RawValue,
            #[serde(default)]
            is_error: bool,
            #[serde(default)]
            images: u32,
            #[serde(default)]
            details: Option<Value>,
        }
        let (session, id, tool, is_error, images, details, start, end) = {
            let l: Large<'_> = serde_json::from_slice(line).ok()?;
            if l.ty != "tool_result" {
                return None;
            }
            let raw = l.content.get();
            if !raw.starts_with('"') || raw.len() < 2 {
                return None;
            }
            let start = (raw.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
            (
                l.session.into_owned(),
                l.id.into_owned(),
                l.tool.into_owned(),
                l.is_error,
                l.images,
                l.details,
                start + 1,
                start + raw.len() - 1,
            )
        };
        let inner = line.get_mut(start..end)?;
        let n = loopguard_transcript::formats::loopguard::unescape_in_place(inner)?;
        let content = std::str::from_utf8(inner.get(..n)?).ok()?;
        let event = loopguard_core::Event::ToolResult {
            id: &id,
            tool: &tool,
            content,
            is_error,
            images,
            details: details.as_ref(),
        };
        Some(self.answer(line_no, session, |g| g.observe(&event)))
    }

    fn events(&mut self, line_no: u64, session: String, events: &[OwnedEvent]) -> String {
        self.answer(line_no, session, |g| observe_all(g, events))
    }

    fn answer(
        &mut self,
        line_no: u64,
        session: String,
        observe: impl FnOnce(&mut Guard) -> Verdict,
    ) -> String {
        let (s, evicted) = match self.touch(&session) {
            Ok(x) => x,
            Err(e) => return error_line(line_no, Some(&session), &e),
        };
        let seq = s.guard.seq();
        let verdict = observe(&mut s.guard);
        let mut out = Map::new();
        out.insert("session".into(), Value::String(session));
        out.insert("seq".into(), Value::from(seq));
        render_verdict(&mut out, &verdict);
        add_evicted(&mut out, evicted);
        Value::Object(out).to_string()
    }

    fn control(
        &mut self,
        line_no: u64,
        session: String,
        command: Command,
        state: Option<Value>,
    ) -> String {
        let mut out = Map::new();
        out.insert("session".into(), Value::String(session.clone()));
        out.insert("control".into(), Value::String(command.as_str().to_owned()));
        let mut evicted = None;
        let result: Result<(), String> = match command {
            Command::Close => {
                if let Some(s) = self.sessions.remove(&session) {
                    self.order.remove(&s.tick);
                }
                Ok(())
            }
            Command::Reset => match self.new_guard() {
                Ok(fresh) => match self.touch(&session) {
                    Ok((s, ev)) => {
                        s.guard = fresh;
                        evicted = ev;
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
                Err(e) => Err(e.to_string()),
            },
            Command::Enable | Command::Disable => match self.touch(&session) {
                Ok((s, ev)) => {
                    s.guard.set_enabled(command == Command::Enable);
                    evicted = ev;
                    Ok(())
                }
                Err(e) => Err(e),
            },
            Command::Snapshot => match self.sessions.get(&session) {
                Some(s) => match s.guard.snapshot() {
                    Ok(state) => {
                        out.insert("state".into(), state);
                        Ok(())
                    }
                    Err(e) => Err(format!("cannot snapshot: {e}")),
                },
                None => Err(format!("no live session `{session}`")),
            },
            Command::Restore => {
                let Some(state) = state else {
                    return error_line(line_no, Some(&session), "`restore` needs a `state` object");
                };
                // Restore into a fresh guard first, so a bad state leaves the session as it was.
                match self.new_guard() {
                    Ok(mut fresh) => match fresh.restore(&state) {
                        Ok(()) => match self.touch(&session) {
                            Ok((s, ev)) => {
                                s.guard = fresh;
                                evicted = ev;
                                Ok(())
                            }
                            Err(e) => Err(e),
                        },
                        Err(e) => Err(format!("cannot restore: {e}")),
                    },
                    Err(e) => Err(e.to_string()),
                }
            }
        };
        match result {
            Ok(()) => {
                out.insert("ok".into(), Value::Bool(true));
            }
            Err(message) => {
                out.insert("ok".into(), Value::Bool(false));
                out.insert("message".into(), Value::String(message));
            }
        }
        add_evicted(&mut out, evicted);
        Value::Object(out).to_string()
    }
}

fn snapshot_of(guard: &Guard) -> Value {
    guard.snapshot().unwrap_or(Value::Null)
}

fn add_evicted(out: &mut Map<String, Value>, evicted: Option<Evicted>) {
    if let Some((id, state)) = evicted {
        out.insert("evicted".into(), Value::String(id));
        if let Some(state) = state {
            out.insert("evicted_state".into(), state);
        }
    }
}

/// Observes every event of one line; the answer is the strongest verdict (the first one of
/// that strength), carrying the findings of all.
pub fn observe_all(guard: &mut Guard, events: &[OwnedEvent]) -> Verdict {
    let mut best: Option<Verdict> = None;
    let mut findings = Vec::new();
    for e in events {
        let mut v = guard.observe(&e.as_event());
        findings.append(&mut v.take_findings());
        if best.as_ref().is_none_or(|b| v.action() > b.action()) {
            best = Some(v);
        }
    }
    best.unwrap_or_default().with_findings(findings)
}

/// Writes a verdict's fields into an answer object.
pub fn render_verdict(out: &mut Map<String, Value>, v: &Verdict) {
    out.insert(
        "action".into(),
        Value::String(v.action().as_str().to_owned()),
    );
    out.insert(
        "message".into(),
        v.message()
            .map_or(Value::Null, |m| Value::String(m.to_owned())),
    );
    out.insert("terminate".into(), Value::Bool(v.terminate()));
    out.insert(
        "findings".into(),
        serde_json::to_value(v.findings()).unwrap_or(Value::Array(Vec::new())),
    );
    if v.whole_batch() {
        out.insert("whole_batch".into(), Value::Bool(true));
    }
    if let Some(code) = v.code() {
        out.insert("code".into(), Value::String(code.to_owned()));
    }
    if matches!(v.action(), Action::Steer | Action::Compact) {
        out.insert(
            "deliver".into(),
            serde_json::to_value(v.deliver()).unwrap_or(Value::Null),
        );
    }
}

fn error_line(line_no: u64, session: Option<&str>, message: &str) -> String {
    let mut err = Map::new();
    err.insert("line".into(), Value::from(line_no));
    err.insert("message".into(), Value::String(message.to_owned()));
    let mut out = Map::new();
    out.insert("error".into(), Value::Object(err));
    if let Some(s) = session {
        out.insert("session".into(), Value::String(s.to_owned()));
    }
    Value::Object(out).to_string()
}

type ParseError = (Option<String>, String);

/// Parses one input line into its session id and request.
fn parse(bytes: &[u8]) -> Result<(String, Request), ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        (
            None,
            format!("not valid UTF-8 (at byte offset {})", e.valid_up_to()),
        )
    })?;
    if text.trim().is_empty() {
        return Err((None, "empty line".to_owned()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let msg = full.split(" at line ").next().unwrap_or(&full).to_owned();
        (None, format!("invalid JSON: {msg} (column {})", e.column()))
    })?;
    let Value::Object(mut obj) = value else {
        return Err((None, "expected a JSON object".to_owned()));
    };
    let session = match obj.remove("session") {
        Some(Value::String(s)) => s,
        Some(_) => return Err((None, "field `session` must be a string".to_owned())),
        None => return Err((None, "missing field `session`".to_owned())),
    };
    let fail = |m: String| (Some(session.clone()), m);
    let ty = match obj.remove("type") {
        Some(Value::String(s)) => s,
        Some(_) => return Err(fail("field `type` must be a string".to_owned())),
        None => return Err(fail("missing field `type`".to_owned())),
    };
    let request = match ty.as_str() {
        "control" => {
            let command = match obj.get("command") {
                Some(Value::String(c)) => Command::parse(c).ok_or_else(|| {
                    fail(format!(
                        "unknown control command `{c}` (expected enable, disable, reset, close, snapshot or restore)"
                    ))
                })?,
                Some(_) => return Err(fail("field `command` must be a string".to_owned())),
                None => return Err(fail("control line: missing field `command`".to_owned())),
            };
            Request::Control {
                command,
                state: obj.remove("state"),
            }
        }
        _ => Request::Events(events_of_object(&ty, obj, "line").map_err(fail)?),
    };
    Ok((session, request))
}

/// The events one object of type `ty` (its other fields in `obj`) stands for, as a sidecar
/// line or a language binding's event object: one event for every type but `assistant`,
/// which is a whole message (`MessageStart`, its `thinking` and `text` deltas,
/// `MessageEnd`); `agent_start` / `agent_end` are read as `run_start` / `run_end`, and a
/// `tool_result`'s content blocks as their text
/// ([`loopguard_transcript::formats::loopguard::content_of_blocks`]). `what` names the
/// object in errors (`line`, `event`). `control` is the caller's to handle.
pub fn events_of_object(
    ty: &str,
    mut obj: Map<String, Value>,
    what: &str,
) -> Result<Vec<OwnedEvent>, String> {
    if ty == "assistant" {
        let mut events = vec![OwnedEvent::MessageStart];
        for (key, stream) in [("thinking", Stream::Thinking), ("text", Stream::Text)] {
            match obj.remove(key) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => {
                    if !s.is_empty() {
                        events.push(OwnedEvent::TextDelta { stream, delta: s });
                    }
                }
                Some(_) => {
                    return Err(format!(
                        "`assistant` {what}: field `{key}` must be a string"
                    ))
                }
            }
        }
        events.push(OwnedEvent::MessageEnd);
        return Ok(events);
    }
    let canonical = match ty {
        "agent_start" => "run_start",
        "agent_end" => "run_end",
        other => other,
    };
    obj.insert("type".into(), Value::String(canonical.to_owned()));
    if canonical == "tool_call" {
        loopguard_transcript::formats::loopguard::call_of_function(&mut obj);
    }
    if canonical == "tool_result" {
        loopguard_transcript::formats::loopguard::content_of_blocks(&mut obj).map_err(
            |(block, found)| match block {
                Some(i) => format!(
                    "`{ty}` {what}: block {i} of `content` must be a string or an object (found {found})"
                ),
                None => format!(
                    "`{ty}` {what}: `content` must be a string, an object or a list of content blocks (found {found})"
                ),
            },
        )?;
    }
    let event: OwnedEvent = serde_json::from_value(Value::Object(obj)).map_err(|e| {
        let full = e.to_string();
        format!(
            "`{ty}` {what}: {}",
            full.split(" at line ").next().unwrap_or(&full)
        )
    })?;
    Ok(vec![event])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_model_apis_names_of_the_fields_are_read_too() {
        // A host forwarding what its model API wrote: OpenAI's `name`/`arguments` (a JSON
        // text) and `tool_call_id`, the Messages API's `input` and `tool_use_id`, Codex's
        // `call_id`: the same verdicts as with the contract's names.
        // The call and the result of each pair, `N` standing for the pair's number.
        let lines = |call: &str, result: &str| {
            let mut s = server(4);
            let mut out = Vec::new();
            for i in 0..5u64 {
                for (k, line) in [call, result].into_iter().enumerate() {
                    let line = line.replace('N', &i.to_string());
                    let a = answer(&mut s, 2 * i + k as u64 + 1, &line);
                    assert!(a.get("error").is_none(), "{line}: {a}");
                    out.push(a["action"].clone());
                }
            }
            out
        };
        let ours = lines(
            r#"{"session":"a","type":"tool_call","id":"cN","tool":"read","args":{"path":"x.rs"}}"#,
            r#"{"session":"a","type":"tool_result","id":"cN","tool":"read","content":"fn main() {}"}"#,
        );
        let openai = lines(
            r#"{"session":"a","type":"tool_call","id":"cN","name":"read","arguments":"{\"path\":\"x.rs\"}"}"#,
            r#"{"session":"a","type":"tool_result","tool_call_id":"cN","content":"fn main() {}"}"#,
        );
        let messages = lines(
            r#"{"session":"a","type":"tool_call","id":"tN","name":"read","input":{"path":"x.rs"}}"#,
            r#"{"session":"a","type":"tool_result","tool_use_id":"tN","content":[{"type":"text","text":"fn main() {}"}]}"#,
        );
        let codex = lines(
            r#"{"session":"a","type":"tool_call","call_id":"kN","name":"read","arguments":"{\"path\":\"x.rs\"}"}"#,
            r#"{"session":"a","type":"tool_result","call_id":"kN","content":"fn main() {}"}"#,
        );
        // A host that numbers no calls (a text protocol, an API whose function calls carry
        // no id): each result answers the call waiting.
        let no_ids = lines(
            r#"{"session":"a","type":"tool_call","name":"read","arguments":{"path":"x.rs"}}"#,
            r#"{"session":"a","type":"tool_result","content":"fn main() {}"}"#,
        );
        // OpenAI's tool call object as it is, its name and arguments in `function`; the
        // Responses API's `output` for the result.
        let function = lines(
            r#"{"session":"a","type":"tool_call","id":"cN","function":{"name":"read","arguments":"{\"path\":\"x.rs\"}"}}"#,
            r#"{"session":"a","type":"tool_result","call_id":"cN","output":"fn main() {}"}"#,
        );
        // A host that numbers its calls: integer ids.
        let numbered = lines(
            r#"{"session":"a","type":"tool_call","id":N,"tool":"read","args":{"path":"x.rs"}}"#,
            r#"{"session":"a","type":"tool_result","id":N,"content":"fn main() {}"}"#,
        );
        assert!(ours.iter().any(|a| a == "block"), "{ours:?}");
        assert_eq!(numbered, ours);
        assert_eq!(openai, ours);
        assert_eq!(messages, ours);
        assert_eq!(codex, ours);
        assert_eq!(function, ours);
        assert_eq!(no_ids, ours);
    }

    #[test]
    fn a_result_given_as_content_blocks_reads_as_its_text() {
        // MCP's and the Messages APIs' shape of a tool's result: the same loop as with the
        // text given as a string, images counted.
        let run = |content: &dyn Fn(u64) -> String| {
            let mut s = server(4);
            let mut actions = Vec::new();
            for i in 0..5u64 {
                let call = format!(
                    r#"{{"session":"a","type":"tool_call","id":"c{i}","tool":"read","args":{{"path":"x.rs"}}}}"#
                );
                actions.push(answer(&mut s, 2 * i + 1, &call)["action"].clone());
                let result = format!(
                    r#"{{"session":"a","type":"tool_result","id":"c{i}","content":{}}}"#,
                    content(i)
                );
                let a = answer(&mut s, 2 * i + 2, &result);
                assert!(a.get("error").is_none(), "{a}");
            }
            actions
        };
        let plain = run(&|_| r#""fn main() {}\nfn helper() {}""#.to_owned());
        let blocks = run(&|_| {
            r#"[{"type":"text","text":"fn main() {}"},{"type":"text","text":"fn helper() {}"}]"#
                .to_owned()
        });
        assert_eq!(plain, blocks);
        assert_eq!(plain.last().map(|a| a.as_str()), Some(Some("block")));
        // One object (a structured result) is one block; `output` (the Responses API's name)
        // is the content.
        let structured = run(&|_| r#"{"stdout":"fn main() {}","exit_code":0}"#.to_owned());
        assert_eq!(plain, structured);
        let text_block = run(&|_| r#"{"type":"text","text":"fn main() {}"}"#.to_owned());
        assert_eq!(plain, text_block);
        // Another text each time is progress, whatever the shape.
        let moving = run(&|i| format!(r#"[{{"type":"text","text":"line {i}"}}]"#));
        assert!(moving.iter().all(|a| a == "continue"), "{moving:?}");
        // Images are counted; a block of another type is read as its JSON; a block that is
        // neither a string nor an object is an error naming it.
        let mut obj = json!({"content": [
            {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "A"}},
            {"type": "json", "value": 1},
            "tail"
        ]})
        .as_object()
        .cloned()
        .unwrap();
        let content_of_blocks = loopguard_transcript::formats::loopguard::content_of_blocks;
        content_of_blocks(&mut obj).unwrap();
        assert_eq!(obj["images"], 1);
        assert_eq!(obj["content"], "A\n{\"type\":\"json\",\"value\":1}\ntail");
        let mut bad = json!({"content": ["a", 7]}).as_object().cloned().unwrap();
        assert_eq!(
            content_of_blocks(&mut bad).unwrap_err(),
            (Some(1), loopguard_transcript::JsonType::Number)
        );
        let mut bad = json!({"content": 7}).as_object().cloned().unwrap();
        assert_eq!(
            content_of_blocks(&mut bad).unwrap_err(),
            (None, loopguard_transcript::JsonType::Number)
        );
        let mut given = json!({"content": [{"type": "image_url"}], "images": 3})
            .as_object()
            .cloned()
            .unwrap();
        content_of_blocks(&mut given).unwrap();
        assert_eq!(given["images"], 3);
    }

    fn server(max: usize) -> Server {
        let mut o = ServerOptions::preset("default").unwrap();
        o.max_sessions = max;
        Server::new(o).unwrap()
    }

    fn answer(s: &mut Server, n: u64, line: &str) -> Value {
        serde_json::from_str(&s.handle_line(n, line.as_bytes())).unwrap()
    }

    #[test]
    fn a_result_without_a_tool_name_is_paired_with_its_call_by_id() {
        // Hosts on OpenAI-style APIs know only the call id on a result.
        let mut s = server(4);
        let mut actions = Vec::new();
        for i in 0..5u64 {
            let call = format!(
                r#"{{"session":"a","type":"tool_call","id":"c{i}","tool":"read","args":"{{\"path\":\"x.rs\"}}"}}"#
            );
            actions.push(answer(&mut s, 2 * i + 1, &call)["action"].clone());
            let result =
                format!(r#"{{"session":"a","type":"tool_result","id":"c{i}","content":"same"}}"#);
            let out = answer(&mut s, 2 * i + 2, &result);
            assert!(out.get("error").is_none(), "{out}");
        }
        assert_eq!(actions.last(), Some(&json!("block")), "{actions:?}");
    }

    #[test]
    fn malformed_lines_get_errors_naming_the_line() {
        let mut s = server(4);
        let cases: [(&[u8], &str); 9] = [
            (b"{oops", "invalid JSON"),
            (b"[1,2]", "expected a JSON object"),
            (b"", "empty line"),
            (
                b"{\"type\":\"user\",\"text\":\"x\"}",
                "missing field `session`",
            ),
            (
                b"{\"session\":\"a\",\"text\":\"x\"}",
                "missing field `type`",
            ),
            (
                b"{\"session\":\"a\",\"type\":\"tool_call\",\"id\":\"c\"}",
                "missing field `tool`",
            ),
            (
                b"{\"session\":\"a\",\"type\":\"teleport\"}",
                "unknown variant `teleport`",
            ),
            (
                b"{\"session\":\"a\",\"type\":\"user\",\"text\":\"\xff\xfe\"}",
                "not valid UTF-8",
            ),
            (
                b"{\"session\":\"a\",\"type\":\"control\",\"command\":\"explode\"}",
                "unknown control command",
            ),
        ];
        for (i, (line, want)) in cases.iter().enumerate() {
            let n = i as u64 + 10;
            let out: Value = serde_json::from_str(&s.handle_line(n, line)).unwrap();
            assert_eq!(out["error"]["line"], json!(n), "{out}");
            let msg = out["error"]["message"].as_str().unwrap();
            assert!(
                msg.contains(want),
                "line {n}: {msg:?} should contain {want:?}"
            );
        }
        // The stream goes on.
        let out = answer(
            &mut s,
            99,
            r#"{"session":"a","type":"user","text":"hello"}"#,
        );
        assert_eq!(out["action"], "continue");
    }

    #[test]
    fn least_recently_used_session_is_evicted() {
        let mut s = server(2);
        answer(&mut s, 1, r#"{"session":"a","type":"user","text":"1"}"#);
        answer(&mut s, 2, r#"{"session":"b","type":"user","text":"1"}"#);
        answer(&mut s, 3, r#"{"session":"a","type":"user","text":"2"}"#);
        let out = answer(&mut s, 4, r#"{"session":"c","type":"user","text":"1"}"#);
        assert_eq!(out["evicted"], "b");
        assert!(s.is_live("a") && s.is_live("c") && !s.is_live("b"));
        assert_eq!(s.live_sessions(), 2);
        // b comes back fresh: its sequence restarts.
        let out = answer(&mut s, 5, r#"{"session":"b","type":"user","text":"again"}"#);
        assert_eq!(out["seq"], 0);
        assert_eq!(out["evicted"], "a");
    }

    #[test]
    fn eviction_can_carry_the_state_and_restore_brings_it_back() {
        let mut o = ServerOptions::preset("default").unwrap();
        o.max_sessions = 1;
        o.snapshot_on_evict = true;
        let mut s = Server::new(o).unwrap();
        answer(&mut s, 1, r#"{"session":"a","type":"user","text":"go"}"#);
        answer(
            &mut s,
            2,
            r#"{"session":"a","type":"tool_call","id":"c1","tool":"read","args":{"path":"x"}}"#,
        );
        let out = answer(&mut s, 3, r#"{"session":"b","type":"user","text":"other"}"#);
        assert_eq!(out["evicted"], "a");
        let state = out["evicted_state"].clone();
        assert!(state.is_object(), "{out}");
        let line =
            json!({"session":"a","type":"control","command":"restore","state":state}).to_string();
        let out = answer(&mut s, 4, &line);
        assert_eq!(out["ok"], true, "{out}");
        let out = answer(
            &mut s,
            5,
            r#"{"session":"a","type":"tool_result","id":"c1","tool":"read","content":"x"}"#,
        );
        assert_eq!(
            out["seq"], 2,
            "the restored session continues where it was: {out}"
        );
    }

    #[test]
    fn control_commands() {
        let mut s = server(8);
        let out = answer(
            &mut s,
            1,
            r#"{"session":"a","type":"control","command":"snapshot"}"#,
        );
        assert_eq!(out["ok"], false, "no live session yet: {out}");
        answer(&mut s, 2, r#"{"session":"a","type":"user","text":"go"}"#);
        let out = answer(
            &mut s,
            3,
            r#"{"session":"a","type":"control","command":"snapshot"}"#,
        );
        assert_eq!(out["ok"], true);
        assert!(out["state"].is_object());
        let out = answer(
            &mut s,
            4,
            r#"{"session":"a","type":"control","command":"restore","state":{"version":999}}"#,
        );
        assert_eq!(out["ok"], false);
        assert!(
            out["message"].as_str().unwrap().contains("cannot restore"),
            "{out}"
        );
        let out = answer(
            &mut s,
            5,
            r#"{"session":"a","type":"control","command":"restore"}"#,
        );
        assert_eq!(out["error"]["line"], 5);
        let out = answer(
            &mut s,
            6,
            r#"{"session":"a","type":"control","command":"reset"}"#,
        );
        assert_eq!(out["ok"], true);
        let out = answer(&mut s, 7, r#"{"session":"a","type":"user","text":"again"}"#);
        assert_eq!(out["seq"], 0, "reset starts over");
        answer(
            &mut s,
            8,
            r#"{"session":"a","type":"control","command":"close"}"#,
        );
        assert!(!s.is_live("a"));
    }

    #[test]
    fn disabled_session_always_continues_and_enable_turns_it_back_on() {
        let mut s = server(8);
        let call =
            r#"{"session":"a","type":"tool_call","id":"c","tool":"read","args":{"path":"same"}}"#;
        let result =
            r#"{"session":"a","type":"tool_result","id":"c","tool":"read","content":"same"}"#;
        answer(&mut s, 1, r#"{"session":"a","type":"user","text":"go"}"#);
        answer(
            &mut s,
            2,
            r#"{"session":"a","type":"control","command":"disable"}"#,
        );
        for i in 0..20 {
            assert_eq!(answer(&mut s, 3 + i, call)["action"], "continue");
            assert_eq!(answer(&mut s, 3 + i, result)["action"], "continue");
        }
        answer(
            &mut s,
            50,
            r#"{"session":"a","type":"control","command":"enable"}"#,
        );
        let mut acted = false;
        for i in 0..20 {
            acted |= answer(&mut s, 51 + i, call)["action"] != "continue";
            answer(&mut s, 51 + i, result);
        }
        assert!(acted, "identical calls after enable must draw a verdict");
    }

    #[test]
    fn assistant_line_is_one_message_with_one_answer() {
        let mut s = server(8);
        let out = answer(
            &mut s,
            1,
            r#"{"session":"a","type":"assistant","text":"hi","thinking":"hm"}"#,
        );
        assert_eq!(out["seq"], 0);
        let out = answer(&mut s, 2, r#"{"session":"a","type":"agent_end"}"#);
        assert_eq!(
            out["seq"], 4,
            "message start, two deltas and message end came before"
        );
    }

    #[test]
    fn serve_answers_every_line_in_order_even_too_long_ones() {
        let mut s = server(8);
        let input = b"{\"session\":\"a\",\"type\":\"user\",\"text\":\"x\"}\r\nnope\n\n{\"session\":\"a\",\"type\":\"run_end\"}";
        let mut out = Vec::new();
        let stats = s.serve(&input[..], &mut out).unwrap();
        assert_eq!(
            stats,
            ServeStats {
                lines: 4,
                errors: 2
            }
        );
        let lines: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["seq"], 0);
        assert_eq!(lines[1]["error"]["line"], 2);
        assert_eq!(lines[2]["error"]["line"], 3);
        assert_eq!(lines[3]["seq"], 1);
    }

    #[test]
    fn arbitrary_lines_are_each_answered_with_one_json_object() {
        const PIECES: [&[u8]; 14] = [
            b"{\"session\":\"",
            b"a",
            b"b\",",
            b"\"type\":\"",
            b"tool_call\",\"id\":\"c\",\"tool\":\"read\",\"args\":{\"p\":1}}",
            b"tool_result\",\"id\":\"c\",\"tool\":\"read\",\"content\":\"x\"}",
            b"control\",\"command\":\"snapshot\"}",
            b"control\",\"command\":\"restore\",\"state\":{\"version\":1}}",
            b"text_delta\",\"stream\":\"text\",\"delta\":\"ab\"}",
            b"assistant\",\"text\":\"hi\"}",
            b"\xff\xfe",
            b"}",
            b"[",
            b"\"",
        ];
        let mut s = server(3);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for n in 1..=3000u64 {
            let mut line = Vec::new();
            for _ in 0..(rng % 5 + 1) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                line.extend_from_slice(PIECES[(rng % PIECES.len() as u64) as usize]);
            }
            let out = s.handle_line(n, &line);
            assert!(!out.contains('\n'));
            let v: Value = serde_json::from_str(&out).unwrap();
            assert!(v.is_object());
            if let Some(e) = v.get("error") {
                assert_eq!(e["line"], json!(n));
            }
            assert!(s.live_sessions() <= 3);
        }
    }
}
