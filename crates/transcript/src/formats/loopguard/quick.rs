//! The hand-written one-pass read of the common loopguard lines.
//!
//! The line's object is scanned once: the keys the format knows are matched as raw bytes,
//! their string values are located (escapes checked, not yet undone) and copied out at the
//! end only if the record uses them; `args` is built straight into a [`Value`]; every other
//! value is checked and stepped over without being built.
//!
//! It accepts a subset of what the serde read ([`super::fast`]) accepts and yields the same
//! record for it. Anything unusual — an escaped key, a repeated field, a number that is not a
//! plain integer where an integer is wanted, a lone surrogate even in a skipped string, deep
//! nesting, any JSON error — makes it decline (`None`), and the serde read, then the
//! field-by-field read that names the error, decide as they did before.

use super::{escape, escape_len};
use crate::Record;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Arrays and objects nested deeper than this (below the line's own object) are left to
/// serde, whose limit is 128. Tool arguments rarely nest past a few levels; the bound keeps
/// the quick read's recursion shallow even where its frames are large (an unoptimised build
/// on a small thread stack: about 8 KB a level).
const MAX_DEPTH: usize = 16;

/// The first key of an object that serde_json reads as a raw value rather than a map.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The record of `line`, or `None` to leave the line to the serde read.
pub(super) fn read(line: &str, first: bool) -> Option<Record> {
    let mut p = Parser {
        s: line,
        b: line.as_bytes(),
        i: 0,
    };
    let mut f = Found::default();
    p.ws();
    p.eat(b'{')?;
    p.ws();
    loop {
        let key = p.field_key()?;
        p.ws();
        p.eat(b':')?;
        p.ws();
        match key {
            Key::Type => set(&mut f.ty, p.string()?)?,
            Key::Id => set(&mut f.id, p.opt_string()?)?,
            Key::Tool => set(&mut f.tool, p.opt_string()?)?,
            Key::Text => set(&mut f.text, p.opt_string()?)?,
            Key::Thinking => set(&mut f.thinking, p.opt_string()?)?,
            Key::Content => set(&mut f.content, p.opt_string()?)?,
            Key::Source => set(&mut f.source, p.opt_string()?)?,
            Key::License => set(&mut f.license, p.opt_string()?)?,
            Key::Args => {
                let v = p.value(0)?;
                set(&mut f.args, v)?
            }
            Key::Batch => set(&mut f.batch, p.opt_u64()?)?,
            Key::Images => set(&mut f.images, p.opt_u64()?)?,
            Key::Truncated => set(&mut f.truncated, p.opt_bool()?)?,
            Key::IsError => set(&mut f.is_error, p.opt_bool()?)?,
            Key::Alias => return None,
            Key::Other => p.skip(0)?,
        }
        p.ws();
        match p.next()? {
            b',' => p.ws(),
            b'}' => break,
            _ => return None,
        }
    }
    p.ws();
    if p.i != p.b.len() {
        return None;
    }
    build(&mut f, first)
}

/// The keys of the format, and any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Type,
    Id,
    Tool,
    Text,
    Thinking,
    Content,
    Source,
    License,
    Args,
    Batch,
    Images,
    Truncated,
    IsError,
    /// A model API's name of a field ([`loopguard_core::FIELD_ALIASES`]): the serde read
    /// decides, as the sidecar's names are read there.
    Alias,
    Other,
}

impl Key {
    /// The key whose raw bytes (without escapes) are `key`.
    fn of(key: &[u8]) -> Key {
        match key {
            b"type" => Key::Type,
            b"id" => Key::Id,
            b"tool" => Key::Tool,
            b"text" => Key::Text,
            b"thinking" => Key::Thinking,
            b"content" => Key::Content,
            b"source" => Key::Source,
            b"license" => Key::License,
            b"args" => Key::Args,
            b"batch" => Key::Batch,
            b"images" => Key::Images,
            b"truncated" => Key::Truncated,
            b"is_error" => Key::IsError,
            k if loopguard_core::FIELD_ALIASES
                .iter()
                .any(|(_, _, names)| names.iter().any(|n| n.as_bytes() == k)) =>
            {
                Key::Alias
            }
            _ => Key::Other,
        }
    }
}

/// Up to eight bytes as the low bytes of a little-endian word, the rest zero.
const fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let mut i = 0;
    while i < b.len() && i < 8 {
        w[i] = b[i];
        i += 1;
    }
    u64::from_le_bytes(w)
}

/// Eight copies of a byte.
const fn splat(b: u8) -> u64 {
    u64::from_le_bytes([b; 8])
}

/// The body of a JSON string (between its quotes) and where its escapes end.
#[derive(Clone, Copy)]
struct Str<'a> {
    body: &'a str,
    /// The end of the body's last escape (0 when it has none): no backslash follows it.
    escaped_to: usize,
}

impl<'a> Str<'a> {
    /// The text: borrowed, or unescaped when it holds an escape (`None` if that fails).
    #[inline]
    fn cow(self) -> Option<Cow<'a, str>> {
        if self.escaped_to > 0 {
            unescape(self.body, self.escaped_to).map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(self.body))
        }
    }

    /// The text, owned.
    fn owned(self) -> Option<String> {
        self.cow().map(Cow::into_owned)
    }
}

/// The known fields met so far: the outer `Option` says whether the key was seen (a second
/// time declines, as serde's derive rejects a repeated field), the inner one whether the
/// value was other than `null`.
#[derive(Default)]
struct Found<'a> {
    ty: Option<Str<'a>>,
    id: Option<Option<Str<'a>>>,
    tool: Option<Option<Str<'a>>>,
    text: Option<Option<Str<'a>>>,
    thinking: Option<Option<Str<'a>>>,
    content: Option<Option<Str<'a>>>,
    source: Option<Option<Str<'a>>>,
    license: Option<Option<Str<'a>>>,
    args: Option<Value>,
    batch: Option<Option<u64>>,
    images: Option<Option<u64>>,
    truncated: Option<Option<bool>>,
    is_error: Option<Option<bool>>,
}

fn set<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(v);
    Some(())
}

/// The record of the fields, as [`super::record_of`] makes it from the serde read's
/// [`super::Fields`]; only the strings the record keeps are copied out (unescaped). The
/// fields are lent, not moved (a move copied all of them), `args` taken out.
fn build(f: &mut Found<'_>, first: bool) -> Option<Record> {
    /// An optional text: `Some(None)` for absent or `null`.
    fn opt(s: Option<Option<Str<'_>>>) -> Option<Option<String>> {
        match s.flatten() {
            None => Some(None),
            Some(s) => s.owned().map(Some),
        }
    }
    /// A required text: `None` for absent or `null`.
    fn req(s: Option<Option<Str<'_>>>) -> Option<String> {
        s.flatten()?.owned()
    }
    Some(match &*f.ty?.cow()? {
        "session" if first => Record::Session {
            id: req(f.id)?,
            source: opt(f.source)?,
            license: opt(f.license)?,
        },
        "user" => Record::User { text: req(f.text)? },
        "assistant" => Record::Assistant {
            text: opt(f.text)?,
            thinking: opt(f.thinking)?,
        },
        // A call or result without an id: a host that numbers no calls (a model API's name
        // for it was declined above); the bus pairs a result with the oldest call waiting.
        "tool_call" => Record::ToolCall {
            id: opt(f.id)?.unwrap_or_default(),
            tool: req(f.tool)?,
            args: f.args.take()?,
            batch: f.batch.flatten(),
            truncated: f.truncated.flatten().unwrap_or(false),
        },
        "tool_result" => Record::ToolResult {
            id: opt(f.id)?.unwrap_or_default(),
            // Without a tool, the result is its call's (paired by id).
            tool: opt(f.tool)?.unwrap_or_default(),
            content: req(f.content)?,
            is_error: f.is_error.flatten().unwrap_or(false),
            images: u32::try_from(f.images.flatten().unwrap_or(0)).ok()?,
            truncated: f.truncated.flatten().unwrap_or(false),
        },
        "compaction" => Record::Compaction,
        _ => return None,
    })
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// The byte at the cursor, 0 at the end (no JSON token starts with it).
    fn peek_or_nul(&self) -> u8 {
        self.peek().unwrap_or(0)
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn lit(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then_some(())?;
        self.i = end;
        Some(())
    }

    /// The index of the first `"`, `\` or control byte at or after `i` (the end if none).
    fn special(&self, i: usize) -> usize {
        loopguard_core::json::special_from(self.b, i)
    }

    /// An object key, the cursor on its opening quote: [`Key::of`] its raw bytes, read by
    /// [`Parser::key`], but a known key is told from the eight bytes that follow the quote
    /// (its closing quote among them, or just after for the three longest), without a scan.
    #[inline]
    fn field_key(&mut self) -> Option<Key> {
        match self.known_key() {
            Some((key, len)) => {
                self.i += len + 2;
                Some(key)
            }
            None => self.key().map(Key::of),
        }
    }

    /// The known key at the cursor and its length, when its bytes and closing quote are all
    /// there; `None` leaves the key to [`Parser::key`].
    #[inline]
    fn known_key(&self) -> Option<(Key, usize)> {
        if self.peek()? != b'"' {
            return None;
        }
        let rest = self.b.get(self.i + 1..)?;
        let w = u64::from_le_bytes(*rest.first_chunk::<8>()?);
        // The high bit of each byte of `w` that is a quote, exact up to the lowest one.
        let q = w ^ splat(b'"');
        let quotes = q.wrapping_sub(splat(1)) & !q & splat(0x80);
        if quotes == 0 {
            // No quote in the eight bytes: one of the longest keys, or another.
            let (key, len) = match w {
                w if w == word(b"is_error") => (Key::IsError, 8),
                w if w == word(b"thinking") => (Key::Thinking, 8),
                w if w == word(b"truncate") && rest.get(8) == Some(&b'd') => (Key::Truncated, 9),
                _ => return None,
            };
            return (rest.get(len) == Some(&b'"')).then_some((key, len));
        }
        // The key's bytes up to its first quote, that quote included: a known key's if it
        // is one (no quote comes earlier, and the bytes above are masked off).
        let len = (quotes.trailing_zeros() / 8) as usize;
        let with_quote = w & (u64::MAX >> (8 * (7 - len)));
        const KEYS: [(u64, Key); 10] = [
            (word(b"type\""), Key::Type),
            (word(b"id\""), Key::Id),
            (word(b"tool\""), Key::Tool),
            (word(b"args\""), Key::Args),
            (word(b"content\""), Key::Content),
            (word(b"images\""), Key::Images),
            (word(b"text\""), Key::Text),
            (word(b"batch\""), Key::Batch),
            (word(b"source\""), Key::Source),
            (word(b"license\""), Key::License),
        ];
        KEYS.iter()
            .find(|&&(k, _)| k == with_quote)
            .map(|&(_, key)| (key, len))
    }

    /// An object key without escapes, the cursor on its opening quote; its raw bytes.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        let end = self.special(start);
        if self.b.get(end) != Some(&b'"') {
            return None;
        }
        self.i = end + 1;
        self.b.get(start..end)
    }

    /// A string, the cursor on its opening quote: its escapes are checked (a surrogate must
    /// be half of a pair), control bytes refused.
    ///
    /// Inlined where it is called: most strings are short, and a call's own cost was most
    /// of theirs.
    #[inline(always)]
    fn string(&mut self) -> Option<Str<'a>> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped_to = start;
        loop {
            let at = self.special(self.i);
            match self.b.get(at)? {
                b'"' => {
                    self.i = at + 1;
                    return Some(Str {
                        body: self.s.get(start..at)?,
                        escaped_to: escaped_to - start,
                    });
                }
                b'\\' => {
                    self.i = at + escape_len(self.b.get(at..)?)?;
                    escaped_to = self.i;
                }
                _ => return None,
            }
        }
    }

    fn opt_string(&mut self) -> Option<Option<Str<'a>>> {
        match self.peek()? {
            b'n' => self.lit(b"null").map(|()| None),
            _ => self.string().map(Some),
        }
    }

    fn opt_bool(&mut self) -> Option<Option<bool>> {
        match self.peek()? {
            b'n' => self.lit(b"null").map(|()| None),
            b't' => self.lit(b"true").map(|()| Some(true)),
            b'f' => self.lit(b"false").map(|()| Some(false)),
            _ => None,
        }
    }

    /// `null` or a plain non-negative integer (what serde reads as a `u64`, short of the
    /// last digit's worth).
    fn opt_u64(&mut self) -> Option<Option<u64>> {
        if self.peek()? == b'n' {
            return self.lit(b"null").map(|()| None);
        }
        match self.number()? {
            Number::Plain {
                negative: false,
                value,
            } => Some(Some(value)),
            _ => None,
        }
    }

    /// A JSON number, the cursor on its first byte: checked against the grammar and read
    /// when it is an integer of at most 18 digits (19 when non-negative).
    fn number(&mut self) -> Option<Number<'a>> {
        let start = self.i;
        let negative = self.peek()? == b'-';
        if negative {
            self.i += 1;
        }
        let digits = self.i;
        let mut value: u64 = 0;
        match self.next()? {
            b'0' => {}
            c @ b'1'..=b'9' => {
                value = u64::from(c - b'0');
                while let Some(c @ b'0'..=b'9') = self.peek() {
                    // Wraps only past 19 digits, which are not read as plain below.
                    value = value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                    self.i += 1;
                }
            }
            _ => return None,
        }
        let n_digits = self.i - digits;
        let mut plain = true;
        if self.peek_or_nul() == b'.' {
            self.i += 1;
            self.digits()?;
            plain = false;
        }
        if let b'e' | b'E' = self.peek_or_nul() {
            self.i += 1;
            if let b'+' | b'-' = self.peek_or_nul() {
                self.i += 1;
            }
            self.digits()?;
            plain = false;
        }
        if plain && (n_digits <= 18 || (!negative && n_digits == 19)) && !(negative && value == 0) {
            Some(Number::Plain { negative, value })
        } else {
            Some(Number::Other(self.s.get(start..self.i)?))
        }
    }

    /// One or more digits.
    fn digits(&mut self) -> Option<()> {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        (self.i > start).then_some(())
    }

    /// A JSON value built as serde_json builds it.
    fn value(&mut self, depth: usize) -> Option<Value> {
        Some(match self.peek()? {
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Some(Value::Object(Map::new()));
                }
                // Room for the few members of a usual tool call's arguments, allocated
                // once rather than grown from nothing at the first insert.
                let mut map = Map::with_capacity(4);
                loop {
                    let key = self.string()?.owned()?;
                    if map.is_empty() && key == RAW_VALUE_TOKEN {
                        return None;
                    }
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                    let v = self.member(depth + 1)?;
                    map.insert(key, v);
                    self.ws();
                    match self.next()? {
                        b',' => self.ws(),
                        b'}' => break,
                        _ => return None,
                    }
                }
                Value::Object(map)
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                let mut items = Vec::new();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(Value::Array(items));
                }
                loop {
                    items.push(self.member(depth + 1)?);
                    self.ws();
                    match self.next()? {
                        b',' => self.ws(),
                        b']' => break,
                        _ => return None,
                    }
                }
                Value::Array(items)
            }
            _ => self.scalar()?,
        })
    }

    /// A member of an array or object: a scalar read in place, a container by recursion.
    #[inline(always)]
    fn member(&mut self, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'{' | b'[' => self.value(depth),
            _ => self.scalar(),
        }
    }

    /// A string, number, `true`, `false` or `null`, built as serde_json builds it.
    #[inline(always)]
    fn scalar(&mut self) -> Option<Value> {
        Some(match self.peek()? {
            b'"' => Value::String(self.string()?.owned()?),
            b't' => self.lit(b"true").map(|()| Value::Bool(true))?,
            b'f' => self.lit(b"false").map(|()| Value::Bool(false))?,
            b'n' => self.lit(b"null").map(|()| Value::Null)?,
            _ => match self.number()? {
                Number::Plain {
                    negative: false,
                    value,
                } => Value::from(value),
                Number::Plain {
                    negative: true,
                    value,
                } => Value::from(i64::try_from(value).ok()?.checked_neg()?),
                // Fractions, exponents, `-0` and long integers: serde_json's own number
                // reading (it is the same wherever the number stands).
                Number::Other(token) => match serde_json::from_str::<Value>(token).ok()? {
                    v @ Value::Number(_) => v,
                    _ => return None,
                },
            },
        })
    }

    /// A JSON value checked and stepped over.
    fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            open @ (b'{' | b'[') => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.ws();
                if self.peek()? == close {
                    self.i += 1;
                    return Some(());
                }
                let mut first = true;
                loop {
                    if open == b'{' {
                        let key = self.string()?;
                        // An object serde reads as a raw value, even in a field it ignores.
                        if first && key.cow()?.as_ref() == RAW_VALUE_TOKEN {
                            return None;
                        }
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                    }
                    first = false;
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.next()? {
                        b',' => self.ws(),
                        c if c == close => break,
                        _ => return None,
                    }
                }
            }
            b't' => self.lit(b"true")?,
            b'f' => self.lit(b"false")?,
            b'n' => self.lit(b"null")?,
            _ => {
                // serde reads any number but a short integer as a float, and refuses one
                // out of a float's range (`1e400`) even in a field it ignores: so is the line.
                if let Number::Other(text) = self.number()? {
                    if !text.parse::<f64>().is_ok_and(f64::is_finite) {
                        return None;
                    }
                }
            }
        }
        Some(())
    }
}

/// A number as [`Parser::number`] read it.
enum Number<'a> {
    /// An integer without fraction or exponent, short enough not to overflow, not `-0`.
    Plain { negative: bool, value: u64 },
    /// Any other valid number: its text.
    Other(&'a str),
}

/// The text of a string body whose escapes [`Parser::string`] checked, the last of them
/// ending at `end`: the backslashes before it are found with `memchr`, what follows it is
/// copied as it is. (Out of line: inlined, it would weigh on every string read.)
#[inline(never)]
fn unescape(body: &str, end: usize) -> Option<String> {
    let b = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < end {
        let k = memchr::memchr(b'\\', b.get(i..end)?)?;
        out.push_str(body.get(i..i + k)?);
        let (c, n) = escape(b.get(i + k..)?)?;
        out.push(c);
        i += k + n;
    }
    out.push_str(body.get(end..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::LineError;
    use proptest::prelude::*;

    /// What the reader made of a line before the quick read: serde's read, else the
    /// field-by-field one.
    fn before(line: &str, first: bool) -> Result<Record, LineError> {
        match super::super::fast(line, first) {
            Some(r) => Ok(r),
            None => super::super::slow(line, first),
        }
    }

    /// The quick read agrees with the reader as it was: a record it makes is the record
    /// serde makes, and where it declines the reader is unchanged.
    fn agrees(line: &str) -> Result<(), TestCaseError> {
        for first in [true, false] {
            let old = before(line, first);
            if let Some(r) = read(line, first) {
                prop_assert_eq!(Ok(&r), old.as_ref(), "{} (first {})", line, first);
            }
            prop_assert_eq!(super::super::parse_line(line, first), old, "{}", line);
        }
        Ok(())
    }

    /// Pieces of a JSON string body: mostly valid, now and then not.
    fn string_body(valid_only: bool) -> BoxedStrategy<String> {
        let good = prop_oneof![
            6 => "[a-zA-Z0-9 ./_:-]{0,12}",
            2 => "[é日本語😀ß\u{7f}]{1,3}",
            3 => prop::sample::select(vec![
                r"\n", r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\r", r"\t", r"\u00e9", r"\u0000",
                r"\u001f", r"\ud83d\ude00", r"\uD83D\uDE00", r"\uDBFF\uDFFF", r"\u20AC", r"\u0041",
            ])
            .prop_map(String::from),
        ];
        let bad = prop::sample::select(vec![
            r"\ud800",
            r"\udc00",
            r"\ud83dx",
            r"\ud83d\u0041",
            r"\x",
            r"\u12",
            r"\u+abc",
            r"\",
            "\u{1}",
            "\t",
            "\n",
            "\"",
        ])
        .prop_map(String::from);
        let piece = if valid_only {
            good.boxed()
        } else {
            prop_oneof![30 => good, 1 => bad].boxed()
        };
        prop::collection::vec(piece, 0..6)
            .prop_map(|v| v.concat())
            .boxed()
    }

    fn string(valid_only: bool) -> BoxedStrategy<String> {
        string_body(valid_only)
            .prop_map(|b| format!("\"{b}\""))
            .boxed()
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (0u64..1000).prop_map(|n| n.to_string()),
            2 => any::<u64>().prop_map(|n| n.to_string()),
            2 => any::<i64>().prop_map(|n| n.to_string()),
            1 => any::<f64>().prop_map(|f| f.to_string()),
            1 => any::<f32>().prop_map(|f| format!("{f:e}")),
            2 => prop::sample::select(vec![
                "0", "-0", "1.0", "1e2", "1E+2", "2.5e-3", "-1", "4294967295", "4294967296",
                "18446744073709551615", "18446744073709551616", "99999999999999999999",
                "9223372036854775807", "-9223372036854775808", "-9223372036854775809",
                "999999999999999999", "-999999999999999999", "1000000000000000000",
                "1e400", "-1e400", "0.1", "1.7976931348623157e308", "5e-324", "01", "-", "1.",
                ".5", "1e", "+1", "0x10", "1.5E", "-01",
            ])
            .prop_map(String::from),
        ]
    }

    /// Whitespace between tokens (JSON's four bytes; now and then a byte that is not).
    fn ws() -> impl Strategy<Value = String> {
        prop_oneof![
            12 => Just(String::new()),
            4 => Just(" ".to_owned()),
            1 => "[ \t\r\n]{1,3}",
            1 => prop::sample::select(vec!["\u{a0}", "\u{b}", "\u{c}"]).prop_map(String::from),
        ]
    }

    /// Any JSON-ish value as text, nested.
    fn value(valid_only: bool) -> BoxedStrategy<String> {
        let leaf = prop_oneof![
            4 => string(valid_only),
            3 => number(),
            1 => prop::sample::select(vec!["null", "true", "false", "nul", "tru", "True"])
                .prop_map(String::from),
        ];
        leaf.prop_recursive(4, 24, 5, move |inner| {
            prop_oneof![
                (prop::collection::vec((inner.clone(), ws()), 0..5)).prop_map(|v| {
                    let items: Vec<String> =
                        v.into_iter().map(|(x, w)| format!("{w}{x}{w}")).collect();
                    format!("[{}]", items.join(","))
                }),
                (prop::collection::vec(
                    (
                        prop_oneof![
                            3 => string(valid_only),
                            1 => Just(format!("\"{RAW_VALUE_TOKEN}\"")),
                            1 => Just("\"k\"".to_owned()),
                        ],
                        inner,
                        ws()
                    ),
                    0..5
                ))
                .prop_map(|v| {
                    let items: Vec<String> = v
                        .into_iter()
                        .map(|(k, x, w)| format!("{w}{k}{w}:{w}{x}"))
                        .collect();
                    format!("{{{}}}", items.join(","))
                }),
            ]
        })
        .boxed()
    }

    /// A value for a known field: mostly of its type.
    fn field(key: &'static str, valid_only: bool) -> BoxedStrategy<(String, String)> {
        let v = match key {
            "type" => prop_oneof![
                8 => prop::sample::select(super::super::TYPES.to_vec())
                    .prop_map(|t| format!("\"{t}\"")),
                1 => prop::sample::select(vec![r#""us\u0065r""#, r#""bogus""#, r#""User""#, "null", "1"])
                    .prop_map(String::from),
            ]
            .boxed(),
            "args" => value(valid_only),
            "batch" | "images" => prop_oneof![
                6 => (0u64..10).prop_map(|n| n.to_string()),
                1 => Just("null".to_owned()),
                2 => number(),
                1 => value(valid_only),
            ]
            .boxed(),
            "truncated" | "is_error" => prop_oneof![
                6 => prop::sample::select(vec!["true", "false"]).prop_map(String::from),
                1 => Just("null".to_owned()),
                1 => value(valid_only),
            ]
            .boxed(),
            _ => prop_oneof![
                8 => string(valid_only),
                1 => Just("null".to_owned()),
                1 => value(valid_only),
            ]
            .boxed(),
        };
        v.prop_map(move |v| (format!("\"{key}\""), v)).boxed()
    }

    const KEYS: &[&str] = &[
        "type",
        "id",
        "tool",
        "text",
        "thinking",
        "content",
        "source",
        "license",
        "args",
        "batch",
        "images",
        "truncated",
        "is_error",
    ];

    /// The fields of one line type (its required ones, then some of the optional ones).
    fn template(valid_only: bool) -> BoxedStrategy<Vec<(String, String)>> {
        let ty = |t: &str| (r#""type""#.to_owned(), format!("\"{t}\""));
        let s =
            move |k: &'static str| string(valid_only).prop_map(move |v| (format!("\"{k}\""), v));
        let opt = move |k: &'static str| proptest::option::of(field(k, valid_only));
        prop_oneof![
            (s("id"), opt("source"), opt("license")).prop_map(move |(a, b, c)| {
                [Some(ty("session")), Some(a), b, c]
                    .into_iter()
                    .flatten()
                    .collect()
            }),
            s("text").prop_map(move |a| vec![ty("user"), a]),
            (opt("text"), opt("thinking")).prop_map(move |(a, b)| {
                [Some(ty("assistant")), a, b]
                    .into_iter()
                    .flatten()
                    .collect()
            }),
            (
                s("id"),
                s("tool"),
                value(valid_only),
                opt("batch"),
                opt("truncated")
            )
                .prop_map(move |(a, b, args, c, d)| {
                    [
                        Some(ty("tool_call")),
                        Some(a),
                        Some(b),
                        Some(("\"args\"".into(), args)),
                        c,
                        d,
                    ]
                    .into_iter()
                    .flatten()
                    .collect()
                }),
            (
                s("id"),
                s("tool"),
                s("content"),
                opt("is_error"),
                opt("images"),
                opt("truncated")
            )
                .prop_map(move |(a, b, c, d, e, f)| {
                    [Some(ty("tool_result")), Some(a), Some(b), Some(c), d, e, f]
                        .into_iter()
                        .flatten()
                        .collect()
                }),
            Just(vec![ty("compaction")]),
        ]
        .boxed()
    }

    /// Fields that are not in the template: unknown keys, or known ones (a repeat, or one
    /// the line type does not have).
    fn extra(valid_only: bool) -> BoxedStrategy<(String, String)> {
        prop_oneof![
            3 => (
                prop::sample::select(vec!["x", "timestamp", "", "Type", "t\\u0079pe", "meta"]),
                value(valid_only)
            )
                .prop_map(|(k, v)| (format!("\"{k}\""), v)),
            1 => prop::sample::select(KEYS.to_vec()).prop_flat_map(move |k| field(k, valid_only)),
        ]
        .boxed()
    }

    /// One line: a template's fields and extra ones in any order, whitespace anywhere.
    fn line(valid_only: bool) -> BoxedStrategy<String> {
        let extras = if valid_only { 0..1 } else { 0..3 };
        (
            template(valid_only),
            prop::collection::vec(extra(valid_only), extras),
            any::<prop::sample::Index>(),
            prop::collection::vec(ws(), 8),
        )
            .prop_flat_map(|(mut fields, extras, at, ws)| {
                for e in extras {
                    let i = at.index(fields.len() + 1);
                    fields.insert(i, e);
                }
                (Just(fields).prop_shuffle(), Just(ws))
            })
            .prop_map(|(fields, ws)| {
                let w = |i: usize| ws[i % ws.len()].as_str();
                let body: Vec<String> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, (k, v))| {
                        format!("{}{k}{}:{}{v}{}", w(i), w(i + 1), w(i + 2), w(i + 3))
                    })
                    .collect();
                format!("{}{{{}}}{}", w(4), body.join(","), w(5))
            })
            .boxed()
    }

    /// A line with one edit: cut short, a byte put in, a byte taken out.
    fn malformed() -> impl Strategy<Value = String> {
        (
            line(false),
            any::<prop::sample::Index>(),
            prop::sample::select(vec![
                '{', '}', '[', ']', '"', ',', ':', '\\', ' ', '0', 'a', '\u{1}',
            ]),
            0..3u8,
        )
            .prop_map(|(l, at, c, how)| {
                let cuts: Vec<usize> = l.char_indices().map(|(i, _)| i).collect();
                let i = cuts.get(at.index(cuts.len().max(1))).copied().unwrap_or(0);
                let mut l = l;
                match how {
                    0 => l.truncate(i),
                    1 => l.insert(i, c),
                    _ => {
                        if i < l.len() {
                            l.remove(i);
                        }
                    }
                }
                l
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A key told from its first bytes is the key the scan reads, the cursor left in the
        /// same place.
        #[test]
        fn keys_are_told_as_the_scan_reads_them(
            key in prop_oneof![
                prop::sample::select(KEYS.to_vec()).prop_map(String::from),
                (prop::sample::select(KEYS.to_vec()), 0usize..10, "[a-z_\"\\\\\u{1}é]{0,3}")
                    .prop_map(|(k, cut, extra)| {
                        let cut = cut.min(k.len());
                        format!("{}{extra}", &k[..cut])
                    }),
                "[a-z_\"\\\\\u{1}é]{0,12}",
            ],
            close in prop::bool::weighted(0.9),
            tail in "[\":,0-9a-z{}\\[\\] ]{0,12}",
        ) {
            let text = format!("\"{key}{}{tail}", if close { "\"" } else { "" });
            let mut told = Parser { s: &text, b: text.as_bytes(), i: 0 };
            let mut scanned = Parser { s: &text, b: text.as_bytes(), i: 0 };
            let a = told.field_key();
            prop_assert_eq!(a, scanned.key().map(Key::of), "{:?}", text);
            if a.is_some() {
                prop_assert_eq!(told.i, scanned.i, "{:?}", text);
            }
        }

        #[test]
        fn well_formed_lines_read_quickly_as_serde_reads_them(l in line(true)) {
            agrees(&l)?;
        }

        #[test]
        fn any_line_reads_as_before(l in line(false)) {
            agrees(&l)?;
        }

        #[test]
        fn malformed_lines_read_as_before(l in malformed()) {
            agrees(&l)?;
        }

        #[test]
        fn any_args_value_is_built_as_serde_builds_it(v in value(false), w in ws()) {
            let text = format!("{w}{v}{w}");
            let mut p = Parser { s: &text, b: text.as_bytes(), i: 0 };
            p.ws();
            let quick = p.value(0).filter(|_| { p.ws(); p.i == text.len() });
            if let Some(q) = quick {
                prop_assert_eq!(Some(q), serde_json::from_str::<Value>(&text).ok(), "{}", text);
            }
            let mut p = Parser { s: &text, b: text.as_bytes(), i: 0 };
            p.ws();
            if p.skip(0).is_some() && { p.ws(); p.i == text.len() } {
                prop_assert!(serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok(), "{}", text);
            }
        }

        #[test]
        /// Strings are refused exactly where serde refuses them, and read as it reads them.
        fn strings_unescape_as_serde_unescapes_them(body in string_body(false)) {
            let text = format!("\"{body}\"");
            let mut p = Parser { s: &text, b: text.as_bytes(), i: 0 };
            let quick = p.string().filter(|_| p.i == text.len()).and_then(Str::owned);
            let serde = serde_json::from_str::<String>(&text).ok();
            prop_assert_eq!(&quick, &serde, "{}", text);
            // The in-place unescape of long lines decodes escapes with the same rule.
            if serde.is_some() {
                let mut bytes = body.clone().into_bytes();
                let in_place = super::super::unescape_in_place(&mut bytes)
                    .and_then(|n| String::from_utf8(bytes.get(..n)?.to_vec()).ok());
                prop_assert_eq!(in_place, serde, "{}", text);
            }
        }
    }

    /// The well-formed lines of the generator are read quickly (else the properties above
    /// would say little), and so are the lines of the common shapes.
    #[test]
    fn the_common_shapes_are_read_quickly() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let (mut quick, mut total) = (0, 0);
        for _ in 0..2000 {
            let l = line(true).new_tree(&mut runner).unwrap().current();
            total += 1;
            quick += usize::from(read(&l, true).is_some() || read(&l, false).is_some());
        }
        assert!(quick * 10 >= total * 6, "{quick} of {total} read quickly");
        for l in [
            r#"{"type":"session","id":"synthetic-10000"}"#,
            r#"{"type":"user","text":"Refactor the project and keep the tests green."}"#,
            r#"{"type":"assistant","text":"Step 0: looking at the index guard next."}"#,
            r#"{"type":"tool_call","id":"call_0","tool":"read","args":{"path":"src/schema/stream_0.rs","offset":287,"limit":200}}"#,
            r#"{"type":"tool_result","id":"call_0","tool":"read","content":"detector (run 0, 6887 ms)\nline 113 of 693: ok","is_error":false,"images":0}"#,
            r#" { "type" : "tool_call" , "id" : "c" , "tool" : "t" , "args" : [ 1 , -2 , 3.5 , null , true , { } ] , "batch" : 0 } "#,
            r#"{"type":"assistant","text":null,"thinking":"h\u00e9 \ud83d\ude00","x":{"y":[1e5,"z"]}}"#,
            r#"{"type":"compaction"}"#,
            // A host that numbers no calls, or names no tool on its results.
            r#"{"type":"tool_call","tool":"read","args":{"path":"a"}}"#,
            r#"{"type":"tool_result","content":"x"}"#,
            r#"{"type":"tool_result","id":"c1","content":"x"}"#,
        ] {
            assert!(read(l, true).is_some(), "{l}");
            agrees(l).unwrap();
        }
        // A model API's name of a field is the serde read's to judge.
        for l in [
            r#"{"type":"tool_call","call_id":"k1","name":"read","arguments":"{}"}"#,
            r#"{"type":"tool_result","tool_call_id":"c1","content":"x"}"#,
            r#"{"type":"tool_result","id":"c1","name":"read","content":"x"}"#,
        ] {
            assert!(read(l, false).is_none(), "{l}");
            agrees(l).unwrap();
        }
    }

    #[test]
    fn unusual_lines_are_declined() {
        for l in [
            r#"{"type":"user","text":"a","text":"b"}"#,
            r#"{"t\u0079pe":"user","text":"a"}"#,
            r#"{"type":"tool_result","id":"c","tool":"t","content":"","images":1.0}"#,
            r#"{"type":"tool_result","id":"c","tool":"t","content":"","images":4294967296}"#,
            r#"{"type":"user","text":"a","x":"\ud800"}"#,
            r#"{"type":"tool_call","id":"c","tool":"t","args":{"$serde_json::private::RawValue":"1"}}"#,
            r#"{"x":{"$serde_json::private::RawValue":{"k":[]}},"type":"tool_result","id":"","tool":"","content":"c"}"#,
            r#"{"x":{"\u0024serde_json::private::RawValue":1},"type":"user","text":"t"}"#,
            r#"{"type":"session","id":"s"}"#,
            r#"["user","a"]"#,
            r#"{"type":"user","text":"a"} x"#,
            "{\"type\":\"user\",\"text\":\"a\u{1}\"}",
            "{}",
            "",
        ] {
            assert!(read(l, false).is_none(), "{l}");
            agrees(l).unwrap();
        }
        let deep = format!(
            r#"{{"type":"tool_call","id":"c","tool":"t","args":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(read(&deep, false).is_none());
        agrees(&deep).unwrap();
    }

    /// Arguments nested to the quick read's bound are read quickly; one level more is left
    /// to serde (the same record), so that the quick read never recurses deeper.
    #[test]
    fn args_nested_past_the_bound_are_left_to_serde() {
        let nested = |levels: usize| {
            format!(
                r#"{{"type":"tool_call","id":"c","tool":"t","args":{{"a":{}1{}}}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        let within = nested(MAX_DEPTH - 1);
        assert!(read(&within, false).is_some());
        agrees(&within).unwrap();
        let past = nested(MAX_DEPTH);
        assert!(read(&past, false).is_none());
        agrees(&past).unwrap();
        assert!(super::super::fast(&past, false).is_some());
    }
}
