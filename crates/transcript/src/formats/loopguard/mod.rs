//! The loopguard JSONL reader (the transcript contract: `docs/contracts/transcript.md`).
//!
//! Strict about what it needs (each line type's required fields and their JSON types), lenient
//! about what it does not (unknown extra fields are ignored, `batch`, `is_error` and `images`
//! may be left out).

use crate::error::{JsonType, LineError};
use crate::Record;
use serde_json::{Map, Value};
use std::borrow::Cow;

mod quick;

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
///
/// A line of the common shapes is read in one hand-written pass (`quick.rs`); one it declines
/// is read by serde into borrowed fields (no JSON tree but the call's `args`); a line that
/// fails that too is read again field by field, to say exactly what is wrong.
#[inline]
pub fn parse_line(text: &str, first: bool) -> Result<Record, LineError> {
    if let Some(r) = quick::read(text, first) {
        return Ok(r);
    }
    if let Some(r) = fast(text, first) {
        return Ok(r);
    }
    slow(text, first)
}

/// The fields of every line type, borrowed where the JSON has no escapes; the rest of a line
/// is skipped without being built.
/// `T` is the type of the three text fields: [`Text`], or the raw JSON for a long line whose
/// longest text is unescaped in place ([`fast_in_place`]).
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "T: serde::Deserialize<'de>"))]
struct Fields<'a, T = Text<'a>> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(default, borrow)]
    id: Option<Text<'a>>,
    #[serde(default, borrow)]
    tool: Option<Text<'a>>,
    #[serde(default)]
    text: Option<T>,
    #[serde(default)]
    thinking: Option<T>,
    #[serde(default)]
    content: Option<T>,
    #[serde(default, borrow)]
    source: Option<Text<'a>>,
    #[serde(default, borrow)]
    license: Option<Text<'a>>,
    /// `Some(Null)` for an explicit `null` (a valid argument value).
    #[serde(default, deserialize_with = "present")]
    args: Option<Value>,
    #[serde(default)]
    batch: Option<u64>,
    #[serde(default)]
    truncated: Option<bool>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    images: Option<u64>,
}

/// A string field borrowed from the line when it has no escapes. (`Option<Cow<str>>` alone is
/// always deserialised as an owned copy; the newtype makes serde borrow.)
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

/// Lines at least this long that the caller gives up ([`parse_line_owned`]) have their longest
/// text moved into the record in the line's own buffer.
pub const IN_PLACE_BYTES: usize = 1 << 20;

/// Which text field of a line is moved in place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Content,
    Text,
    Thinking,
}

/// [`parse_line`] of a line the caller gives up: when the line is long, its longest text
/// (`content`, `text` or `thinking`) becomes the line's own buffer — unescaped in place and
/// moved to its start — so a 100 MB tool result is held once, not twice, escapes or not.
pub fn parse_line_owned(line: String, first: bool) -> Result<Record, LineError> {
    if line.len() < IN_PLACE_BYTES {
        return parse_line(&line, first);
    }
    match fast_in_place(&line, first) {
        Some(InPlace::Moved(mut record, slot, start, end)) => {
            let mut bytes = line.into_bytes();
            // `start..end` is the body of a JSON string literal that serde read as valid;
            // `unescape_in_place` checks every escape before it writes.
            let Some(n) = bytes.get_mut(start..end).and_then(unescape_in_place) else {
                return String::from_utf8(bytes)
                    .map_err(|e| LineError::Utf8(e.utf8_error().valid_up_to()))
                    .and_then(|line| slow(&line, first));
            };
            bytes.truncate(start + n);
            bytes.drain(..start);
            bytes.shrink_to_fit();
            let text = String::from_utf8(bytes)
                .map_err(|e| LineError::Utf8(e.utf8_error().valid_up_to()))?;
            match (slot, &mut record) {
                (Slot::Content, Record::ToolResult { content, .. }) => *content = text,
                (Slot::Text, Record::User { text: t }) => *t = text,
                (Slot::Text, Record::Assistant { text: t, .. }) => *t = Some(text),
                (Slot::Thinking, Record::Assistant { thinking, .. }) => *thinking = Some(text),
                _ => {}
            }
            Ok(record)
        }
        Some(InPlace::Read(record)) => Ok(record),
        None => slow(&line, first),
    }
}

/// What [`fast_in_place`] made of a line.
enum InPlace {
    /// The record with its longest text left empty: which field, and the byte range of its
    /// JSON string's body (between the quotes, escapes not yet undone).
    Moved(Record, Slot, usize, usize),
    /// The line has no text field: the record as [`fast`] reads it.
    Read(Record),
}

/// [`fast`] that leaves the longest text for the caller to unescape and move in; `None` sends
/// the line to [`slow`].
fn fast_in_place(text: &str, first: bool) -> Option<InPlace> {
    let f: Fields<'_, &serde_json::value::RawValue> = serde_json::from_str(text).ok()?;
    let base = text.as_ptr() as usize;
    let mut best: Option<(Slot, usize, usize)> = None;
    for (slot, field) in [
        (Slot::Content, f.content),
        (Slot::Text, f.text),
        (Slot::Thinking, f.thinking),
    ] {
        let Some(raw) = field.map(serde_json::value::RawValue::get) else {
            continue;
        };
        if raw.len() >= 2 && raw.starts_with('"') && best.is_none_or(|(_, s, e)| raw.len() > e - s)
        {
            let start = (raw.as_ptr() as usize).checked_sub(base)? + 1;
            best = Some((slot, start, start + raw.len() - 2));
        }
    }
    // The other texts are small: read them the ordinary way (`null` is no value, another
    // JSON type sends the line to `slow`, which names it).
    fn read<'a>(
        chosen: bool,
        raw: Option<&'a serde_json::value::RawValue>,
    ) -> Option<Option<Text<'a>>> {
        match raw {
            _ if chosen => Some(Some(Text(Cow::Borrowed("")))),
            None => Some(None),
            Some(r) if r.get() == "null" => Some(None),
            Some(r) => serde_json::from_str::<Text<'a>>(r.get()).ok().map(Some),
        }
    }
    let chosen = |slot: Slot| best.is_some_and(|(s, _, _)| s == slot);
    let fields = Fields {
        ty: f.ty,
        id: f.id,
        tool: f.tool,
        text: read(chosen(Slot::Text), f.text)?,
        thinking: read(chosen(Slot::Thinking), f.thinking)?,
        content: read(chosen(Slot::Content), f.content)?,
        source: f.source,
        license: f.license,
        args: f.args,
        batch: f.batch,
        truncated: f.truncated,
        is_error: f.is_error,
        images: f.images,
    };
    let record = record_of(fields, first)?;
    Some(match best.filter(|&(_, _, end)| end <= text.len()) {
        Some((slot, start, end)) => InPlace::Moved(record, slot, start, end),
        None => InPlace::Read(record),
    })
}

/// Unescapes the body of a JSON string literal (without its quotes) in place and returns the
/// length of the result, which is never longer than the input. Every escape is checked before
/// a byte is written: on a malformed escape or a lone surrogate it returns `None` with `buf`
/// untouched.
///
/// ```
/// let mut body = br#"a\n\u00e9\ud83d\ude00 \"q\""#.to_vec();
/// let n = loopguard_transcript::formats::loopguard::unescape_in_place(&mut body).unwrap();
/// assert_eq!(std::str::from_utf8(&body[..n]).unwrap(), "a\né😀 \"q\"");
/// let mut bad = br#"x\ud800y"#.to_vec();
/// assert_eq!(loopguard_transcript::formats::loopguard::unescape_in_place(&mut bad), None);
/// assert_eq!(&bad, br#"x\ud800y"#);
/// ```
pub fn unescape_in_place(buf: &mut [u8]) -> Option<usize> {
    let Some(first) = memchr::memchr(b'\\', buf) else {
        return Some(buf.len());
    };
    // Every escape is checked first: nothing is written unless all of them are good.
    let mut r = first;
    while r < buf.len() {
        r += escape_len(buf.get(r..)?)?;
        r += memchr::memchr(b'\\', buf.get(r..)?).unwrap_or(buf.len() - r);
    }
    // Then each escape is written over, and the run of plain bytes after it moved down to
    // follow (the bytes before the first escape stay where they are).
    let (mut r, mut w) = (first, first);
    let mut tmp = [0u8; 4];
    while r < buf.len() {
        let (c, n) = escape(buf.get(r..)?)?;
        r += n;
        let out = c.encode_utf8(&mut tmp).as_bytes();
        buf.get_mut(w..w + out.len())?.copy_from_slice(out);
        w += out.len();
        let run = memchr::memchr(b'\\', buf.get(r..)?).unwrap_or(buf.len() - r);
        // Both ranges lie in `buf` (`w <= r`: an escape is never shorter than its text).
        buf.get(w..r + run)?;
        buf.copy_within(r..r + run, w);
        r += run;
        w += run;
    }
    Some(w)
}

/// Four hex digits.
fn hex4(b: &[u8]) -> Option<u32> {
    let mut n = 0;
    for &c in b.get(..4)? {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        n = n * 16 + u32::from(d);
    }
    Some(n)
}

/// The escape at the start of `b` (on its backslash): the code point it stands for, with a
/// surrogate pair read whole, and its length in bytes. A lone surrogate is refused.
fn escape(b: &[u8]) -> Option<(char, usize)> {
    Some(match *b.get(1)? {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => {
            let hi = hex4(b.get(2..)?)?;
            if (0xD800..0xDC00).contains(&hi) {
                if b.get(6..8)? != b"\\u" {
                    return None;
                }
                let lo = hex4(b.get(8..)?)?;
                if !(0xDC00..0xE000).contains(&lo) {
                    return None;
                }
                let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                (char::from_u32(cp)?, 12)
            } else {
                (char::from_u32(hi)?, 6)
            }
        }
        _ => return None,
    })
}

fn escape_len(b: &[u8]) -> Option<usize> {
    escape(b).map(|(_, n)| n)
}

/// The one-pass read of a valid line; `None` sends the line to [`slow`].
fn fast(text: &str, first: bool) -> Option<Record> {
    let f: Fields<'_> = serde_json::from_str(text).ok()?;
    record_of(f, first)
}

/// The record of a line's fields; `None` when they do not make one.
#[inline]
fn record_of(f: Fields<'_>, first: bool) -> Option<Record> {
    let own = |c: Option<Text<'_>>| c.map(|t| t.0.into_owned());
    Some(match &*f.ty {
        "session" if first => Record::Session {
            id: own(f.id)?,
            source: own(f.source),
            license: own(f.license),
        },
        "user" => Record::User { text: own(f.text)? },
        "assistant" => Record::Assistant {
            text: own(f.text),
            thinking: own(f.thinking),
        },
        // Without an id (or with a model API's name for it), the field-by-field read
        // decides.
        "tool_call" => Record::ToolCall {
            id: own(f.id)?,
            tool: own(f.tool)?,
            args: f.args?,
            batch: f.batch,
            truncated: f.truncated.unwrap_or(false),
        },
        "tool_result" => Record::ToolResult {
            id: own(f.id)?,
            tool: own(f.tool)?,
            content: own(f.content)?,
            is_error: f.is_error.unwrap_or(false),
            images: u32::try_from(f.images.unwrap_or(0)).ok()?,
            truncated: f.truncated.unwrap_or(false),
        },
        "compaction" => Record::Compaction,
        _ => return None,
    })
}

/// The field-by-field read, which names what is wrong.
fn slow(text: &str, first: bool) -> Result<Record, LineError> {
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
            call_of_function(o);
            aliases(o, "tool_call");
            // Without an id (a host that numbers no calls), the bus pairs a result with the
            // oldest call waiting.
            let id = opt_id(o, "tool_call")?;
            let tool = req_str(o, "tool_call", "tool")?;
            // Without arguments (a host that leaves them out of a call that takes none),
            // as with `null`.
            let args = o.remove("args").unwrap_or(Value::Null);
            Record::ToolCall {
                id,
                tool,
                args,
                batch: opt_u64(o, "tool_call", "batch")?,
                truncated: opt_bool(o, "tool_call", "truncated")?.unwrap_or(false),
            }
        }
        "tool_result" => {
            aliases(o, "tool_result");
            // Content blocks, as MCP and the model APIs write a tool's result, become their
            // text (and their images a count).
            content_of_blocks(o).map_err(|(_, found)| LineError::WrongType {
                ty: "tool_result",
                field: "content",
                expected: "a string, an object, or a list of content blocks (strings or objects)",
                found,
            })?;
            let images = opt_u64(o, "tool_result", "images")?.unwrap_or(0);
            let images = u32::try_from(images).map_err(|_| LineError::WrongType {
                ty: "tool_result",
                field: "images",
                expected: "a count below 2^32",
                found: JsonType::Number,
            })?;
            Record::ToolResult {
                id: opt_id(o, "tool_result")?,
                // Without a tool, the result is its call's (paired by id).
                tool: opt_str(o, "tool_result", "tool")?.unwrap_or_default(),
                // Without content (or `null`): the tool printed nothing.
                content: opt_str(o, "tool_result", "content")?.unwrap_or_default(),
                is_error: opt_bool(o, "tool_result", "is_error")?.unwrap_or(false),
                images,
                truncated: opt_bool(o, "tool_result", "truncated")?.unwrap_or(false),
            }
        }
        "compaction" => Record::Compaction,
        _ => return Err(LineError::UnknownType(ty)),
    })
}

/// A `tool_result`'s `content` given as a list of content blocks, as MCP and the Messages
/// APIs write a tool's result (`[{"type":"text","text":"…"},{"type":"image",…}]`), made the
/// text the guard reads: the text of each block (a plain string, a `text` block, an embedded
/// resource's `resource.text`, any other block with a `text` string; another block, as its
/// JSON), joined by newlines; image blocks (`image`, `image_url`, `input_image`) are counted
/// into `images` when the line does not give it. One object given for `content` is one such
/// block when it has a `type` or a `text`, and otherwise a structured result: what it printed
/// (`stdout`, `stderr`, …), then its other fields as `key: value` lines (`exit_code: 1`); the
/// Responses API's `output` is read as `content` when that is absent; `null` is no content.
/// A string or absent `content` is left as is. The error is the index and the type of a block
/// that is neither a string nor an object, or no index and the type of a `content` that is
/// none of these.
///
/// ```
/// use loopguard_transcript::formats::loopguard::content_of_blocks;
/// let mut o = serde_json::json!({"content": [{"type": "text", "text": "ok"}, {"type": "image"}]});
/// content_of_blocks(o.as_object_mut().unwrap()).unwrap();
/// assert_eq!((o["content"].as_str(), o["images"].as_u64()), (Some("ok"), Some(1)));
/// ```
pub fn content_of_blocks(obj: &mut Map<String, Value>) -> Result<(), (Option<usize>, JsonType)> {
    let blocks = match take_field(obj, "tool_result", "content") {
        Some(Value::Array(blocks)) => blocks,
        // A content block given alone.
        Some(Value::Object(block)) if block.contains_key("type") || block.contains_key("text") => {
            vec![Value::Object(block)]
        }
        // A structured result: its fields, one per line.
        Some(Value::Object(fields)) => {
            obj.insert("content".into(), Value::String(fields_text(fields)));
            return Ok(());
        }
        Some(Value::Null) | None => return Ok(()),
        Some(Value::String(text)) => {
            obj.insert("content".into(), Value::String(text));
            return Ok(());
        }
        Some(other) => return Err((None, JsonType::of(&other))),
    };
    // The first block's text becomes the text; the others' are appended to it.
    let mut text = String::new();
    let mut images = 0u64;
    let mut first = true;
    for (i, block) in blocks.into_iter().enumerate() {
        let part = match block {
            Value::String(s) => s,
            Value::Object(mut b) => {
                let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
                if matches!(kind, "image" | "image_url" | "input_image") {
                    images += 1;
                    continue;
                }
                if let Some(Value::String(t)) = b.get_mut("text") {
                    std::mem::take(t)
                } else if let Some(Value::String(t)) =
                    b.get_mut("resource").and_then(|r| r.get_mut("text"))
                {
                    std::mem::take(t)
                } else {
                    Value::Object(b).to_string()
                }
            }
            other => return Err((Some(i), JsonType::of(&other))),
        };
        if first {
            text = part;
            first = false;
        } else {
            text.push('\n');
            text.push_str(&part);
        }
    }
    obj.insert("content".into(), Value::String(text));
    if !obj.contains_key("images") {
        obj.insert("images".into(), Value::from(images));
    }
    Ok(())
}

/// A `tool_call` written as OpenAI's tool call object, its name and arguments in a `function`
/// object (`{"id": …, "function": {"name": "bash", "arguments": "{…}"}}`): they are read as
/// the call's `tool` and `args` where the line does not give those.
///
/// ```
/// use loopguard_transcript::formats::loopguard::call_of_function;
/// let mut o = serde_json::json!({"id": "c1", "function": {"name": "ls", "arguments": "{}"}});
/// call_of_function(o.as_object_mut().unwrap());
/// assert_eq!((o["tool"].as_str(), o["args"].as_str()), (Some("ls"), Some("{}")));
/// ```
pub fn call_of_function(obj: &mut Map<String, Value>) {
    if !matches!(obj.get("function"), Some(Value::Object(_))) {
        return;
    }
    let Some(Value::Object(mut f)) = obj.remove("function") else {
        return;
    };
    for (field, inner) in [("tool", "name"), ("args", "arguments")] {
        if !has_field(obj, "tool_call", field) {
            if let Some(v) = f.remove(inner) {
                obj.insert(field.into(), v);
            }
        }
    }
}

/// The other names of `field` in a `ty` line ([`loopguard_core::FIELD_ALIASES`]).
fn other_names<'a>(ty: &'a str, field: &'a str) -> impl Iterator<Item = &'static str> + 'a {
    loopguard_core::FIELD_ALIASES
        .iter()
        .filter(move |(t, f, _)| *t == ty && *f == field)
        .flat_map(|(_, _, names)| names.iter().copied())
}

/// Whether a `ty` line gives `field`, under its name or one of the model APIs'.
fn has_field(obj: &Map<String, Value>, ty: &str, field: &str) -> bool {
    obj.contains_key(field) || other_names(ty, field).any(|n| obj.contains_key(n))
}

/// `field` of a `ty` line, taken out: under its name, else the first of the model APIs' names
/// present.
fn take_field(obj: &mut Map<String, Value>, ty: &str, field: &str) -> Option<Value> {
    obj.remove(field)
        .or_else(|| other_names(ty, field).find_map(|n| obj.remove(n)))
}

/// Whether a field of a structured result says nothing: `null`, `false`, zero, or empty.
fn says_nothing(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(true) => false,
    }
}

/// The fields of a structured result that hold what the tool printed.
const OUTPUT_FIELDS: &[&str] = &[
    "stdout", "stderr", "output", "result", "content", "error", "message",
];

/// A structured result (`{"stdout": "…", "stderr": "", "exit_code": 1}`) as the text the guard
/// reads: what the tool printed first, as a shell shows it (the non-empty strings of its
/// output fields — `stdout`, `stderr`, `output`, `result`, `content`, `error`, `message` — in
/// the order written, one after the other, each ending its last line), then each other field
/// that says something as a `key: value` line (a string as it is, another value as its JSON;
/// `null`, `false`, zero and empty values, such as a zero exit code, say nothing).
fn fields_text(fields: Map<String, Value>) -> String {
    let mut output = String::new();
    let mut rest = String::new();
    for (key, value) in fields {
        match value {
            Value::String(s) if OUTPUT_FIELDS.contains(&key.as_str()) => {
                let s = s.strip_suffix('\n').unwrap_or(&s);
                if !s.is_empty() {
                    if !output.is_empty() {
                        output.push('\n');
                    }
                    output.push_str(s);
                }
            }
            // A field that says nothing happened (exit code 0, not interrupted, no
            // signal) is left out: a silent command stays silent.
            other if says_nothing(&other) => {}
            other => {
                if !rest.is_empty() {
                    rest.push('\n');
                }
                rest.push_str(&key);
                rest.push_str(": ");
                match other {
                    Value::String(s) => rest.push_str(&s),
                    v => rest.push_str(&v.to_string()),
                }
            }
        }
    }
    if !output.is_empty() && !rest.is_empty() {
        output.push('\n');
    }
    output.push_str(&rest);
    output
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

/// An optional field of one JSON type: absent or `null` is `None`; `take` gives the value
/// back when it is of another type, which is then named in the error.
fn opt<T>(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
    expected: &'static str,
    take: impl FnOnce(Value) -> Result<T, Value>,
) -> Result<Option<T>, LineError> {
    match o.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => take(v).map(Some).map_err(|other| LineError::WrongType {
            ty,
            field,
            expected,
            found: JsonType::of(&other),
        }),
    }
}

fn opt_str(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<Option<String>, LineError> {
    opt(o, ty, field, "a string", |v| match v {
        Value::String(s) => Ok(s),
        other => Err(other),
    })
}

/// The model APIs' names of the fields of a `ty` line ([`loopguard_core::FIELD_ALIASES`], as
/// the sidecar reads them): the first present moves to its field when the field is absent.
fn aliases(o: &mut Map<String, Value>, ty: &str) {
    for (_, field, _) in loopguard_core::FIELD_ALIASES
        .iter()
        .filter(|(t, ..)| *t == ty)
    {
        if let Some(v) = take_field(o, ty, field) {
            o.insert((*field).to_owned(), v);
        }
    }
}

/// A call's or a result's `id` ([`loopguard_core::call_id_of`]): a string, an integer read as
/// its digits, or absent or `null` (empty: a host that numbers no calls).
fn opt_id(o: &mut Map<String, Value>, ty: &'static str) -> Result<String, LineError> {
    opt(
        o,
        ty,
        "id",
        "a string or an integer",
        loopguard_core::call_id_of,
    )
    .map(Option::unwrap_or_default)
}

fn opt_bool(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<Option<bool>, LineError> {
    opt(o, ty, field, "a boolean", |v| v.as_bool().ok_or(v))
}

fn opt_u64(
    o: &mut Map<String, Value>,
    ty: &'static str,
    field: &'static str,
) -> Result<Option<u64>, LineError> {
    opt(o, ty, field, "a non-negative integer", |v| {
        v.as_u64().ok_or(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The in-place unescape as it was: byte by byte, one pass to check, one to write.
    fn unescape_in_place_reference(buf: &mut [u8]) -> Option<usize> {
        fn pass(buf: &mut [u8], write: bool) -> Option<usize> {
            let (mut r, mut w) = (0usize, 0usize);
            let mut tmp = [0u8; 4];
            while let Some(&b) = buf.get(r) {
                if b != b'\\' {
                    if write {
                        *buf.get_mut(w)? = b;
                    }
                    r += 1;
                    w += 1;
                    continue;
                }
                let (c, n) = escape(buf.get(r..)?)?;
                r += n;
                let out = c.encode_utf8(&mut tmp).as_bytes();
                if write {
                    buf.get_mut(w..w + out.len())?.copy_from_slice(out);
                }
                w += out.len();
            }
            Some(w)
        }
        pass(buf, false)?;
        pass(buf, true)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The in-place unescape leaves the buffer as the reference does and says the same.
        #[test]
        fn unescape_in_place_agrees_with_the_reference(
            pieces in prop::collection::vec(
                prop_oneof![
                    6 => "[a-z é日😀]{0,8}",
                    4 => prop::sample::select(vec![
                        r"\n", r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\r", r"\t", r"\u00e9",
                        r"\u0000", r"\ud83d\ude00", r"\uDBFF\uDFFF", r"\u20AC",
                    ])
                    .prop_map(String::from),
                    1 => prop::sample::select(vec![
                        r"\ud800", r"\udc00", r"\ud83dx", r"\x", r"\u12", r"\", r"\u+abc",
                    ])
                    .prop_map(String::from),
                ],
                0..8,
            )
        ) {
            let body = pieces.concat().into_bytes();
            let (mut a, mut b) = (body.clone(), body.clone());
            let (na, nb) = (unescape_in_place(&mut a), unescape_in_place_reference(&mut b));
            prop_assert_eq!(na, nb, "{:?}", String::from_utf8_lossy(&body));
            prop_assert_eq!(&a[..na.unwrap_or(a.len())], &b[..nb.unwrap_or(b.len())]);
            if na.is_none() {
                prop_assert_eq!(&a, &body, "untouched on failure");
            }
        }
    }

    #[test]
    fn a_long_line_given_up_reads_as_the_same_record() {
        let big = "y".repeat(IN_PLACE_BYTES + 7);
        let lines = [
            format!(
                r#"{{"type":"tool_result","id":"c1","tool":"read","content":"{big}","is_error":true,"images":2}}"#
            ),
            format!(r#"{{"type":"user","text":"{big}"}}"#),
            format!(r#"{{"type":"assistant","text":"short","thinking":"{big}"}}"#),
            format!(r#"{{"type":"assistant","text":"{big}","thinking":"short"}}"#),
            // Escapes: unescaped in place.
            format!(
                r#"{{"type":"tool_result","id":"c1","tool":"read","content":"a\n{big}\u00e9\ud83d\ude00\"\\"}}"#
            ),
            format!(r#"{{"type":"assistant","text":"x\ty","thinking":"\n{big}\n"}}"#),
            // A lone surrogate: the same error as the ordinary read.
            format!(r#"{{"type":"tool_result","id":"c1","tool":"read","content":"{big}\ud800"}}"#),
            // A text of another JSON type, and an explicit null.
            format!(r#"{{"type":"tool_result","id":"c1","tool":"read","content":7,"x":"{big}"}}"#),
            format!(r#"{{"type":"assistant","text":null,"thinking":"{big}"}}"#),
            // No tool: its call's. Not a record (no id): the same error.
            format!(r#"{{"type":"tool_result","id":"c1","content":"{big}"}}"#),
            format!(r#"{{"type":"tool_result","tool":"read","content":"{big}"}}"#),
            format!(r#"{{"type":"session","id":"s","source":"{big}"}}"#),
        ];
        for (i, line) in lines.iter().enumerate() {
            for first in [true, false] {
                assert_eq!(
                    parse_line_owned(line.clone(), first),
                    parse_line(line, first),
                    "line {i}, first {first}"
                );
            }
        }
    }

    #[test]
    fn text_fields_without_escapes_are_borrowed_from_the_line() {
        let line = r#"{"type":"tool_result","id":"c1","tool":"read","content":"plain"}"#;
        let f: Fields<'_> = serde_json::from_str(line).unwrap();
        assert!(matches!(f.content, Some(Text(Cow::Borrowed("plain")))));
        assert!(matches!(f.id, Some(Text(Cow::Borrowed("c1")))));
        let escaped = r#"{"type":"tool_result","id":"c1","tool":"read","content":"a\nb"}"#;
        let f: Fields<'_> = serde_json::from_str(escaped).unwrap();
        assert!(matches!(f.content, Some(Text(Cow::Owned(_)))));
    }

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
        // A result that names no tool is its call's (the bus pairs it by id).
        assert_eq!(
            parse_line(r#"{"type":"tool_result","id":"c1","content":"x"}"#, false),
            Ok(Record::ToolResult {
                id: "c1".into(),
                tool: String::new(),
                content: "x".into(),
                is_error: false,
                images: 0,
                truncated: false
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"compaction"}"#, false),
            Ok(Record::Compaction)
        );
        // A call and a result without an id (a host that numbers no calls) have an empty
        // one: the bus pairs the result with the oldest call waiting.
        assert_eq!(
            parse_line(r#"{"type":"tool_call","tool":"read","args":{}}"#, false),
            Ok(Record::ToolCall {
                id: String::new(),
                tool: "read".into(),
                args: serde_json::json!({}),
                batch: None,
                truncated: false
            })
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","tool":"read","content":"x"}"#,
                false
            ),
            Ok(Record::ToolResult {
                id: String::new(),
                tool: "read".into(),
                content: "x".into(),
                is_error: false,
                images: 0,
                truncated: false
            })
        );
        // The model APIs' names are read as the sidecar reads them.
        assert_eq!(
            parse_line(
                r#"{"type":"tool_call","call_id":"k1","name":"read","arguments":"{\"path\":\"a\"}"}"#,
                false
            ),
            Ok(Record::ToolCall {
                id: "k1".into(),
                tool: "read".into(),
                args: serde_json::json!("{\"path\":\"a\"}"),
                batch: None,
                truncated: false
            })
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_call","id":"t1","name":"read","input":{"p":1}}"#,
                false
            ),
            parse_line(
                r#"{"type":"tool_call","id":"t1","tool":"read","args":{"p":1}}"#,
                false
            )
        );
        for id in ["tool_call_id", "tool_use_id", "call_id"] {
            assert_eq!(
                parse_line(
                    &format!(r#"{{"type":"tool_result","{id}":"c1","name":"read","content":"x"}}"#),
                    false
                ),
                parse_line(
                    r#"{"type":"tool_result","id":"c1","tool":"read","content":"x"}"#,
                    false
                ),
                "{id}"
            );
        }
        // Content blocks (MCP, the model APIs) are read as their text, images counted.
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA"},"b"]}"#,
                false
            ),
            Ok(Record::ToolResult {
                id: "c1".into(),
                tool: String::new(),
                content: "a\nb".into(),
                is_error: false,
                images: 1,
                truncated: false
            })
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","content":["a",7]}"#,
                false
            ),
            Err(LineError::WrongType {
                ty: "tool_result",
                field: "content",
                expected: "a string, an object, or a list of content blocks (strings or objects)",
                found: JsonType::Number
            })
        );
        assert_eq!(
            parse_line(r#"{"type":"tool_result","id":"c1","content":7}"#, false),
            Err(LineError::WrongType {
                ty: "tool_result",
                field: "content",
                expected: "a string, an object, or a list of content blocks (strings or objects)",
                found: JsonType::Number
            })
        );
        // One object: a content block (its text), or a structured result (what it printed,
        // then its other fields that say something).
        let result = |content: &str| Record::ToolResult {
            id: "c1".into(),
            tool: "bash".into(),
            content: content.into(),
            is_error: false,
            images: 0,
            truncated: false,
        };
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","tool":"bash","content":{"stdout":"a.py\n","exit_code":0}}"#,
                false
            ),
            Ok(result("a.py"))
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","tool":"bash","content":{"type":"text","text":"ok"}}"#,
                false
            ),
            Ok(result("ok"))
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","tool":"bash","content":{"stdout":"","stderr":"make: *** [all] Error 2\n","interrupted":false,"exit_code":2}}"#,
                false
            ),
            Ok(result("make: *** [all] Error 2\nexit_code: 2"))
        );
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","tool":"bash","content":{"stdout":"","stderr":"","interrupted":false,"isImage":false}}"#,
                false
            ),
            Ok(result(""))
        );
        // A result without content, or with `null`, printed nothing; the Responses API's
        // `output` is its content.
        for line in [
            r#"{"type":"tool_result","id":"c1","tool":"bash"}"#,
            r#"{"type":"tool_result","id":"c1","tool":"bash","content":null}"#,
        ] {
            assert_eq!(parse_line(line, false), Ok(result("")), "{line}");
        }
        assert_eq!(
            parse_line(
                r#"{"type":"tool_result","id":"c1","tool":"bash","output":"a.py"}"#,
                false
            ),
            Ok(result("a.py"))
        );
        // OpenAI's tool call object: its `function`'s name and arguments are the call's.
        assert_eq!(
            parse_line(
                r#"{"type":"tool_call","id":"c1","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}"#,
                false
            ),
            parse_line(
                r#"{"type":"tool_call","id":"c1","tool":"bash","arguments":"{\"command\":\"ls\"}"}"#,
                false
            )
        );
        // A call without arguments is read as one with `null`.
        assert_eq!(
            parse_line(r#"{"type":"tool_call","id":"c1","tool":"now"}"#, false),
            parse_line(
                r#"{"type":"tool_call","id":"c1","tool":"now","args":null}"#,
                false
            )
        );
        // An integer id is read as its digits (a host that numbers its calls); an id of
        // another type is still an error.
        assert_eq!(
            parse_line(r#"{"type":"tool_result","id":7,"content":"x"}"#, false),
            parse_line(r#"{"type":"tool_result","id":"7","content":"x"}"#, false)
        );
        assert!(matches!(
            parse_line(r#"{"type":"tool_call","id":5,"tool":"t","args":{}}"#, false),
            Ok(Record::ToolCall { id, .. }) if id == "5"
        ));
        assert!(parse_line(
            r#"{"type":"tool_call","id":1.5,"tool":"t","args":{}}"#,
            false
        )
        .is_err());
        assert!(parse_line(
            r#"{"type":"tool_call","id":["a"],"tool":"t","args":{}}"#,
            false
        )
        .is_err());
    }

    #[test]
    fn the_one_pass_read_agrees_with_the_field_by_field_read() {
        let lines = [
            r#"{"type":"session","id":"s","source":"x","license":null}"#,
            r#"{"type":"user","text":"h\u00e9 \"q\"\n","extra":[1,{"a":2}]}"#,
            r#"{"type":"assistant","text":null,"thinking":"t"}"#,
            r#"{"type":"tool_call","id":"c","tool":"t","args":null}"#,
            r#"{"type":"tool_call","id":"c","tool":"t","args":{"b":[1,2],"a":"x"},"batch":null,"truncated":true}"#,
            r#"{"type":"tool_result","id":"c","tool":"t","content":"","is_error":null,"images":3}"#,
            r#"{"type":"tool_result","id":"c","tool":"t","content":"x","images":4294967296}"#,
            r#"{"type":"user","text":"a","text":"b"}"#,
            r#"{"type":"compaction","id":5}"#,
            r#"{"type":"user","text":5}"#,
            r#"{"type":"session","id":"s"}"#,
            // A host that numbers no calls.
            r#"{"type":"tool_call","tool":"t","args":{}}"#,
            r#"{"type":"tool_call","id":null,"tool":"t","args":{}}"#,
            r#"{"type":"tool_result","tool":"t","content":"x"}"#,
            r#"{"type":"tool_result","id":null,"content":"x"}"#,
        ];
        for first in [true, false] {
            for l in lines {
                let slow = slow(l, first);
                // Where the one-pass read gives up, the slow read decides.
                if let Some(r) = fast(l, first) {
                    assert_eq!(Ok(r), slow, "{l}");
                }
                assert_eq!(parse_line(l, first), slow, "{l}");
            }
        }
        assert!(
            fast(lines[1], false).is_some(),
            "escapes are read in one pass too"
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
            parse_line(r#"{"type":"tool_call","id":"c","args":{}}"#, false),
            Err(LineError::MissingField {
                ty: "tool_call",
                field: "tool"
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
