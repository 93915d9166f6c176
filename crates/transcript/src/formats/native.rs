//! What the readers of agents' own session formats ([`pi`](super::pi),
//! [`claude_code`](super::claude_code), [`codex`](super::codex)) share: their output
//! ([`NativeTranscript`]), the report of a line they could not map ([`FormatIssue`]) and a few
//! JSON helpers.
//!
//! The native readers are lenient where the loopguard reader is strict: a real session file
//! holds many line kinds that say nothing about loops (model switches, hook progress, file
//! snapshots). Those known kinds are skipped on purpose; anything else that cannot be mapped is
//! kept as a [`FormatIssue`] naming the line, never dropped silently.

use crate::{Entry, Format, Record, Transcript};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;

/// The most issues one read keeps; beyond it only [`NativeTranscript::issues_dropped`] counts.
pub const MAX_ISSUES: usize = 1000;

/// A line a native reader could not map (or mapped only in part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatIssue {
    /// 0-based line index in the file.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for FormatIssue {
    /// `LINE: message`, with `LINE` 1-based as editors count.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line + 1, self.message)
    }
}

/// What a native reader produced: the records it could map and the lines it could not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NativeTranscript {
    /// The records, in file order, each with the 0-based line it came from. Several records
    /// may share a line (an assistant message and its tool calls).
    pub entries: Vec<Entry>,
    /// The lines that could not be mapped, in file order (at most [`MAX_ISSUES`]).
    pub issues: Vec<FormatIssue>,
    /// Issues beyond [`MAX_ISSUES`] that were counted but not kept.
    pub issues_dropped: usize,
    /// Number of lines in the text, blank lines included.
    pub lines: usize,
    /// Number of `assistant` records pushed so far.
    assistants: u64,
    /// Records already handed out by a streaming read (removed from `entries`): the absolute
    /// index of `entries[0]`.
    base: usize,
    /// Issues already handed out by a streaming read (removed from `issues`).
    issues_handed_out: usize,
}

/// Reads `text` with the reader of `format`; `None` for [`Format::Loopguard`] (read it with
/// the strict loopguard reader instead).
///
/// ```
/// use loopguard_transcript::formats::native::read_native;
/// use loopguard_transcript::Format;
/// let pi = r#"{"type":"session","id":"s","timestamp":"2025-12-09T00:53:29.825Z","cwd":"/"}
/// {"type":"message","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}
/// {"type":"mystery"}"#;
/// let native = read_native(Format::Pi, pi).unwrap();
/// assert_eq!(native.entries.len(), 2);
/// assert_eq!(native.issues[0].to_string(), "3: unknown Pi line type `mystery`");
/// let (t, issues) = native.into_transcript("s.jsonl", Format::Pi);
/// assert_eq!((t.session_id(), t.lines, issues.len()), (Some("s"), 3, 1));
/// ```
pub fn read_native(format: Format, text: &str) -> Option<NativeTranscript> {
    match format {
        Format::Pi => Some(super::pi::read(text)),
        Format::ClaudeCode => Some(super::claude_code::read(text)),
        Format::Codex => Some(super::codex::read(text)),
        Format::Loopguard => None,
    }
}

impl NativeTranscript {
    /// A [`Transcript`] of the records (for [`replay`](crate::replay)), and the issues.
    pub fn into_transcript(self, file: &str, format: Format) -> (Transcript, Vec<FormatIssue>) {
        let t = Transcript {
            file: file.to_owned(),
            format,
            lines: self.lines,
            entries: self.entries,
            issues: Vec::new(),
        };
        (t, self.issues)
    }

    pub(crate) fn with_lines(lines: usize) -> NativeTranscript {
        NativeTranscript {
            lines,
            ..NativeTranscript::default()
        }
    }

    /// Ends a read: an assistant text or reasoning that is only whitespace counts as absent
    /// (as in the corpus conversion).
    pub(crate) fn finish(mut self) -> NativeTranscript {
        for e in &mut self.entries {
            finish_record(&mut e.record);
        }
        self
    }

    /// Opens an empty assistant record (its text and thinking are added as they come):
    /// (its index, its batch: the assistant records before it).
    pub(crate) fn open_assistant(&mut self, line: usize) -> (usize, u64) {
        let batch = self.assistant_count();
        self.push(
            line,
            Record::Assistant {
                text: None,
                thinking: None,
            },
        );
        (self.last_index(), batch)
    }

    /// The session's header record, with its id.
    pub(crate) fn push_session(&mut self, line: usize, id: &str) {
        self.push(
            line,
            Record::Session {
                id: id.to_owned(),
                source: None,
                license: None,
            },
        );
    }

    /// A tool call read at `line`, with what was wrong with its arguments, if anything.
    pub(crate) fn push_call(
        &mut self,
        line: usize,
        id: &str,
        tool: &str,
        (args, problem): (Value, Option<String>),
        batch: u64,
    ) {
        if let Some(p) = problem {
            self.issue(line, format!("call `{id}`: {p}"));
        }
        self.push(
            line,
            Record::ToolCall {
                id: id.to_owned(),
                tool: tool.to_owned(),
                args,
                batch: Some(batch),
                truncated: false,
            },
        );
    }

    pub(crate) fn push(&mut self, line: usize, record: Record) {
        if matches!(record, Record::Assistant { .. }) {
            self.assistants += 1;
        }
        self.entries.push(Entry { line, record });
    }

    /// Whether no record was pushed yet (handed-out ones included).
    pub(crate) fn nothing_pushed(&self) -> bool {
        self.base == 0 && self.entries.is_empty()
    }

    /// The absolute index of the last record pushed.
    pub(crate) fn last_index(&self) -> usize {
        (self.base + self.entries.len()).saturating_sub(1)
    }

    /// The record at absolute index `index`, unless it was handed out already.
    pub(crate) fn record_mut(&mut self, index: usize) -> Option<&mut Record> {
        let i = index.checked_sub(self.base)?;
        self.entries.get_mut(i).map(|e| &mut e.record)
    }

    /// Hands out the records before absolute index `keep_from` (all of them for `None`),
    /// finished as [`NativeTranscript::finish`] finishes them, into `out`.
    pub(crate) fn drain_settled(&mut self, keep_from: Option<usize>, out: &mut VecDeque<Entry>) {
        let n = match keep_from {
            Some(k) => k.saturating_sub(self.base).min(self.entries.len()),
            None => self.entries.len(),
        };
        if n == 0 {
            return;
        }
        self.base += n;
        out.extend(self.entries.drain(..n).map(|mut e| {
            finish_record(&mut e.record);
            e
        }));
    }

    pub(crate) fn issue(&mut self, line: usize, message: impl Into<String>) {
        if self.issues.len() + self.issues_handed_out < MAX_ISSUES {
            self.issues.push(FormatIssue {
                line,
                message: message.into(),
            });
        } else {
            self.issues_dropped += 1;
        }
    }

    /// Number of `assistant` records so far (the next one's batch index).
    pub(crate) fn assistant_count(&self) -> u64 {
        self.assistants
    }
}

/// The state of a streaming read of one native format: lines go in one at a time, records
/// come out as soon as no later line can change them.
#[allow(clippy::large_enum_variant)]
pub(crate) enum LineState {
    Pi(NativeTranscript),
    ClaudeCode(super::claude_code::Reader),
    Codex(super::codex::Reader),
}

impl LineState {
    /// A fresh state for `format`; `None` for [`Format::Loopguard`].
    pub(crate) fn new(format: Format) -> Option<LineState> {
        Some(match format {
            Format::Pi => LineState::Pi(NativeTranscript::default()),
            Format::ClaudeCode => LineState::ClaudeCode(Default::default()),
            Format::Codex => LineState::Codex(Default::default()),
            Format::Loopguard => return None,
        })
    }

    fn t(&mut self) -> &mut NativeTranscript {
        match self {
            LineState::Pi(t) => t,
            LineState::ClaudeCode(r) => &mut r.t,
            LineState::Codex(r) => &mut r.t,
        }
    }

    /// Reads one non-blank line (0-based `line`): a JSON object goes to the format's reader,
    /// anything else becomes an issue.
    pub(crate) fn line(&mut self, line: usize, raw: &str) {
        match object(raw) {
            Ok(o) => match self {
                LineState::Pi(t) => super::pi::read_line(t, line, &o),
                LineState::ClaudeCode(r) => r.line(line, &o),
                LineState::Codex(r) => r.line(line, &o),
            },
            Err(e) => self.t().issue(line, e),
        }
    }

    /// Records the line `line` as one that could not be read.
    pub(crate) fn issue(&mut self, line: usize, message: String) {
        self.t().issue(line, message);
    }

    /// Moves the records no later line can change into `out` (all of them when `end`), and
    /// the issues so far into `issues`.
    pub(crate) fn drain(
        &mut self,
        end: bool,
        out: &mut VecDeque<Entry>,
        issues: &mut VecDeque<FormatIssue>,
    ) {
        let keep_from = if end {
            None
        } else {
            match self {
                LineState::Pi(_) => None,
                LineState::ClaudeCode(r) => r.open_index(),
                LineState::Codex(r) => r.open_index(),
            }
        };
        let t = self.t();
        t.drain_settled(keep_from, out);
        t.issues_handed_out += t.issues.len();
        issues.extend(t.issues.drain(..));
    }

    /// Issues counted beyond [`MAX_ISSUES`].
    pub(crate) fn issues_dropped(&mut self) -> usize {
        self.t().issues_dropped
    }
}

/// An assistant text or reasoning that is only whitespace counts as absent.
fn finish_record(r: &mut Record) {
    if let Record::Assistant { text, thinking } = r {
        for slot in [text, thinking] {
            if slot.as_deref().is_some_and(|s| s.trim().is_empty()) {
                *slot = None;
            }
        }
    }
}

/// The non-blank lines of `text` with their 0-based index (a trailing `\r` removed), and the
/// total number of lines.
pub(crate) fn lines(text: &str) -> (impl Iterator<Item = (usize, &str)>, usize) {
    let total = if text.is_empty() {
        0
    } else {
        text.split('\n').count() - usize::from(text.ends_with('\n'))
    };
    let it = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty());
    (it, total)
}

/// Reads `text` line by line: each non-blank line that is a JSON object goes to `on_line`
/// with the reader's state, each other line becomes an issue of the transcript that
/// `transcript` finds in the state; the transcript is finished and returned.
pub(crate) fn read_objects<S: Default>(
    text: &str,
    transcript: fn(&mut S) -> &mut NativeTranscript,
    mut on_line: impl FnMut(&mut S, usize, &Map<String, Value>),
) -> NativeTranscript {
    let (it, total) = lines(text);
    let mut state = S::default();
    *transcript(&mut state) = NativeTranscript::with_lines(total);
    for (line, raw) in it {
        match object(raw) {
            Ok(o) => on_line(&mut state, line, &o),
            Err(e) => transcript(&mut state).issue(line, e),
        }
    }
    std::mem::take(transcript(&mut state)).finish()
}

/// Strings longer than this under a `data` or `image_url` key (inline images and documents,
/// base64) are not copied out of the line: they become a short stand-in naming their length
/// and a hash of their bytes, so equal payloads stay equal and a 100 MB image costs no second
/// 100 MB.
pub const MAX_BLOB_BYTES: usize = 64 * 1024;

/// A JSON value read like `serde_json::Value`, except for long blobs (see [`MAX_BLOB_BYTES`]).
struct Slim {
    blob: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for Slim {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn stand_in(s: &str) -> Value {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    Value::String(format!(
        "<{} bytes omitted, hash {:016x}>",
        s.len(),
        h.finish()
    ))
}

impl<'de> serde::de::Visitor<'de> for Slim {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        if self.blob && v.len() > MAX_BLOB_BYTES {
            return Ok(stand_in(v));
        }
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        if self.blob && v.len() > MAX_BLOB_BYTES {
            return Ok(stand_in(&v));
        }
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(Slim { blob: false })
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element_seed(Slim { blob: false })? {
            v.push(x);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let blob = k == "data" || k == "image_url";
            let v = map.next_value_seed(Slim { blob })?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

/// Parses one line as a JSON object, or says why it is not one.
pub(crate) fn object(line: &str) -> Result<Map<String, Value>, String> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(line);
    let parsed = Slim { blob: false }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    match parsed {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err("expected a JSON object".to_owned()),
        Err(e) => {
            let full = e.to_string();
            let msg = full.split(" at line ").next().unwrap_or(&full).to_owned();
            Err(format!("invalid JSON: {msg} (column {})", e.column()))
        }
    }
}

/// `o[key]` as a string.
pub(crate) fn str_of<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// `o[key]` as an object.
pub(crate) fn obj_of<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    o.get(key).and_then(Value::as_object)
}

/// The text of a content value: a string as is; an array of blocks as the concatenation of
/// the `text` of its `text`-like blocks (joined with `sep`), with the number of image blocks.
pub(crate) fn content_text(v: Option<&Value>, text_types: &[&str], sep: &str) -> (String, u32) {
    match v {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            let mut first = true;
            let mut images = 0u32;
            for b in blocks {
                let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
                if text_types.contains(&ty) {
                    if let Some(t) = b.get("text").and_then(Value::as_str) {
                        if !first {
                            out.push_str(sep);
                        }
                        first = false;
                        out.push_str(t);
                    }
                } else if ty == "image" || ty == "input_image" {
                    images = images.saturating_add(1);
                }
            }
            (out, images)
        }
        _ => (String::new(), 0),
    }
}

/// Appends `add` to an optional text (a missing text becomes `add`); `sep` goes between.
pub(crate) fn append(slot: &mut Option<String>, add: &str, sep: &str) {
    if add.is_empty() {
        return;
    }
    match slot {
        Some(s) => {
            s.push_str(sep);
            s.push_str(add);
        }
        None => *slot = Some(add.to_owned()),
    }
}

/// Tool-call arguments as loopguard wants them: an object stays, a JSON string holding an
/// object is decoded; anything else is kept as it is and reported.
pub(crate) fn args_of(v: Option<&Value>) -> (Value, Option<String>) {
    match v {
        Some(Value::Object(_)) => (v.cloned().unwrap_or(Value::Null), None),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(obj @ Value::Object(_)) => (obj, None),
            _ => (
                Value::String(s.clone()),
                Some("tool-call arguments are not a JSON object; kept as a string".to_owned()),
            ),
        },
        None | Some(Value::Null) => (Value::Object(Map::new()), None),
        Some(other) => (
            other.clone(),
            Some("tool-call arguments are not a JSON object".to_owned()),
        ),
    }
}

/// A short description of a JSON value for messages.
pub(crate) fn describe(v: Option<&Value>) -> &'static str {
    match v {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

/// Shared by the readers' tests: where the real session files are, and the comparison of a
/// reader's records with the converted corpus file.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::Record;
    use serde_json::Value;
    use std::path::PathBuf;

    /// `../shared` (or the parent of `$LOOPGUARD_CORPUS`); `None` when absent, except under
    /// `CI=true`, where absence fails the test.
    pub(crate) fn shared_dir() -> Option<PathBuf> {
        let dir = match std::env::var_os("LOOPGUARD_CORPUS") {
            Some(c) => PathBuf::from(c).join(".."),
            None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        };
        if dir.join("native-sessions").is_dir() && dir.join("corpus").is_dir() {
            return Some(dir);
        }
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "shared corpus not found at {}",
            dir.display()
        );
        eprintln!(
            "note: {} not found; skipping the cross-check",
            dir.display()
        );
        None
    }

    /// An assistant record with visible `text` and no thinking.
    pub(crate) fn assistant(text: &str) -> Record {
        Record::Assistant {
            text: Some(text.into()),
            thinking: None,
        }
    }

    /// The lines of a reader's issues.
    pub(crate) fn issue_lines(t: &super::NativeTranscript) -> Vec<usize> {
        t.issues.iter().map(|i| i.line).collect()
    }

    /// A reader's records with their lines.
    pub(crate) fn records(t: &super::NativeTranscript) -> Vec<(usize, Record)> {
        t.entries
            .iter()
            .map(|e| (e.line, e.record.clone()))
            .collect()
    }

    /// The records of a converted corpus file (loopguard JSONL), header left out.
    pub(crate) fn corpus_records(text: &str) -> Vec<Record> {
        let mut out = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).expect("corpus line is JSON");
            let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            let b = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
            out.push(match v.get("type").and_then(Value::as_str).unwrap_or("") {
                "session" => continue,
                "user" => Record::User {
                    text: s("text").unwrap_or_default(),
                },
                "assistant" => Record::Assistant {
                    text: s("text"),
                    thinking: s("thinking"),
                },
                "tool_call" => Record::ToolCall {
                    id: s("id").unwrap_or_default(),
                    tool: s("tool").unwrap_or_default(),
                    args: v.get("args").cloned().unwrap_or(Value::Null),
                    batch: v.get("batch").and_then(Value::as_u64),
                    truncated: b("truncated"),
                },
                "tool_result" => Record::ToolResult {
                    id: s("id").unwrap_or_default(),
                    tool: s("tool").unwrap_or_default(),
                    content: s("content").unwrap_or_default(),
                    is_error: b("is_error"),
                    images: v.get("images").and_then(Value::as_u64).unwrap_or(0) as u32,
                    truncated: b("truncated"),
                },
                "compaction" => Record::Compaction,
                other => panic!("unexpected corpus line type {other}"),
            });
        }
        out
    }

    /// Whether a reader's record equals the corpus record, allowing for the corpus's cut of
    /// long strings (a `truncated` corpus record matches when it is a prefix).
    pub(crate) fn same(ours: &Record, corpus: &Record) -> bool {
        match (ours, corpus) {
            (
                Record::ToolResult {
                    id,
                    tool,
                    content,
                    is_error,
                    images,
                    ..
                },
                Record::ToolResult {
                    id: i2,
                    tool: t2,
                    content: c2,
                    is_error: e2,
                    images: m2,
                    truncated,
                },
            ) => {
                id == i2
                    && tool == t2
                    && is_error == e2
                    && images == m2
                    && if *truncated {
                        content.starts_with(c2.as_str())
                    } else {
                        content == c2
                    }
            }
            (
                Record::ToolCall {
                    id,
                    tool,
                    args,
                    batch,
                    ..
                },
                Record::ToolCall {
                    id: i2,
                    tool: t2,
                    args: a2,
                    batch: b2,
                    truncated,
                },
            ) => id == i2 && tool == t2 && batch == b2 && (*truncated || args == a2),
            _ => ours == corpus,
        }
    }

    /// Asserts that `ours` (session header left out) matches the corpus records one by one.
    pub(crate) fn assert_matches_corpus(name: &str, ours: &[crate::Entry], corpus: &[Record]) {
        let ours: Vec<&Record> = ours
            .iter()
            .map(|e| &e.record)
            .filter(|r| !matches!(r, Record::Session { .. } | Record::Usage { .. }))
            .collect();
        for (i, (a, b)) in ours.iter().zip(corpus).enumerate() {
            assert!(
                same(a, b),
                "{name}: record {i} differs:\n ours:   {a:?}\n corpus: {b:?}"
            );
        }
        assert_eq!(ours.len(), corpus.len(), "{name}: record counts differ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_are_counted_and_blank_ones_skipped() {
        let (it, n) = lines("a\n\n b\r\n");
        assert_eq!(n, 3);
        assert_eq!(it.collect::<Vec<_>>(), [(0, "a"), (2, " b")]);
        assert_eq!(lines("").1, 0);
        assert_eq!(lines("x").1, 1);
    }

    #[test]
    fn content_text_joins_text_blocks_and_counts_images() {
        let v = json!([{"type":"text","text":"a"},{"type":"image","data":"..."},{"type":"text","text":"b"}]);
        assert_eq!(
            content_text(Some(&v), &["text"], "\n"),
            ("a\nb".to_owned(), 1)
        );
        assert_eq!(
            content_text(Some(&json!("s")), &["text"], ""),
            ("s".to_owned(), 0)
        );
        assert_eq!(content_text(None, &["text"], ""), (String::new(), 0));
    }

    #[test]
    fn args_are_objects_or_reported() {
        assert_eq!(args_of(Some(&json!({"a":1}))), (json!({"a":1}), None));
        assert_eq!(args_of(Some(&json!("{\"a\":1}"))), (json!({"a":1}), None));
        let (v, issue) = args_of(Some(&json!("not json")));
        assert_eq!(v, json!("not json"));
        assert!(issue.is_some());
        assert_eq!(args_of(None), (json!({}), None));
    }

    #[test]
    fn long_blobs_are_not_copied_but_stay_comparable() {
        let blob = |c: &str| c.repeat(MAX_BLOB_BYTES + 1);
        let line = |d: &str| {
            format!(r#"{{"a":[1,2.5,null,true],"source":{{"data":"{d}"}},"data":"short"}}"#)
        };
        let one = object(&line(&blob("A"))).unwrap();
        let same = object(&line(&blob("A"))).unwrap();
        let other = object(&line(&blob("B"))).unwrap();
        let data = |o: &Map<String, Value>| o["source"]["data"].as_str().unwrap().to_owned();
        assert!(data(&one).starts_with(&format!("<{} bytes omitted", MAX_BLOB_BYTES + 1)));
        assert_eq!(data(&one), data(&same));
        assert_ne!(data(&one), data(&other));
        assert_eq!(one["data"], "short");
        assert_eq!(one["a"], json!([1, 2.5, null, true]));
        // Everything else reads as serde_json reads it.
        let text = r#"{"x":{"y":[{"z":"w\n","n":-3}]},"k":1e3}"#;
        assert_eq!(
            Value::Object(object(text).unwrap()),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(object("[1]").is_err());
        assert!(object("{} x").unwrap_err().starts_with("invalid JSON"));
    }

    #[test]
    fn issues_are_capped_and_counted() {
        let mut t = NativeTranscript::default();
        for i in 0..MAX_ISSUES + 5 {
            t.issue(i, "x");
        }
        assert_eq!((t.issues.len(), t.issues_dropped), (MAX_ISSUES, 5));
        assert_eq!(t.issues[3].to_string(), "4: x");
    }
}
