//! Fingerprints of tool arguments and results.
//!
//! Arguments are reduced to canonical JSON (object keys sorted recursively by their UTF-8
//! bytes, arrays in order, one number form) and hashed with SHA-256. The walk is iterative,
//! so no nesting depth can overflow the stack. Results are hashed by streaming SHA-256 over
//! their text parts; images are counted, never hashed.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;

/// A SHA-256 digest identifying a value. Displays as 64 lower-case hex digits.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// The digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first 8 bytes as an integer, for compact in-memory keys.
    pub fn short(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[..8]);
        u64::from_le_bytes(b)
    }

    /// Hex form, written into `buf` (no allocation).
    pub fn hex_into<'b>(&self, buf: &'b mut [u8; 64]) -> &'b str {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for (pair, b) in buf.chunks_exact_mut(2).zip(self.0) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 0xf)];
        }
        std::str::from_utf8(buf).unwrap_or_default()
    }

    /// Hex form.
    pub fn to_hex(&self) -> String {
        self.hex_into(&mut [0; 64]).to_owned()
    }

    /// Parses 64 hex digits.
    pub fn from_hex(s: &str) -> Option<Fingerprint> {
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, chunk) in bytes.chunks(2).enumerate() {
            let hi = (chunk[0] as char).to_digit(16)?;
            let lo = (chunk[1] as char).to_digit(16)?;
            out[i] = (hi * 16 + lo) as u8;
        }
        Some(Fingerprint(out))
    }

    /// SHA-256 of arbitrary bytes.
    pub fn of_bytes(bytes: &[u8]) -> Fingerprint {
        Fingerprint(Sha256::digest(bytes).into())
    }

    /// The fingerprint of a shape (an in-memory identity compared for equality: a result's
    /// or a call's shape, never a content hash a user reads): XXH3-128 of `bytes` under a
    /// seed that names the kind of shape, in the first 16 bytes, the rest zero. Some ten
    /// times faster than SHA-256 on the short texts shapes are, and 128 bits keep any two
    /// shapes of a session apart (docs/adr/0015-shapes-are-hashed-fast.md).
    pub fn of_shape(seed: u64, bytes: &[u8]) -> Fingerprint {
        let mut out = [0u8; 32];
        let digest = xxhash_rust::xxh3::xxh3_128_with_seed(bytes, seed);
        out[..16].copy_from_slice(&digest.to_le_bytes());
        Fingerprint(out)
    }

    /// Combines several fingerprints and labels into one (order matters).
    pub fn combine(parts: &[&[u8]]) -> Fingerprint {
        let mut h = Sha256::new();
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        Fingerprint(h.finalize().into())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", &self.to_hex()[..16])
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl serde::Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for Fingerprint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Fingerprint::from_hex(&s)
            .ok_or_else(|| serde::de::Error::custom("a fingerprint is 64 hex digits"))
    }
}

/// Something canonical JSON can be written to.
trait Sink {
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

impl Sink for Sha256 {
    fn put(&mut self, s: &str) {
        self.update(s.as_bytes());
    }
}

enum Work<'a> {
    Val(&'a Value),
    Lit(&'static str),
    Key(&'a str),
}

/// Nesting handled by recursion (no allocation); deeper values continue on a heap stack.
const MAX_RECURSION: u32 = 64;
/// Objects with at most this many members are sorted on the stack.
const SMALL_OBJECT: usize = 16;
static NULL: Value = Value::Null;

fn write_canonical<S: Sink>(root: &Value, out: &mut S) {
    write_value(root, out, 0);
}

/// An object's members in the one canonical order (by key bytes; keys are unique, so an
/// unstable sort gives it), each as `"key":value`.
fn write_members<S: Sink>(members: &mut [(&str, &Value)], out: &mut S, depth: u32) {
    members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    for (i, (k, item)) in members.iter().enumerate() {
        if i > 0 {
            out.put(",");
        }
        push_json_string(out, k);
        out.put(":");
        write_value(item, out, depth + 1);
    }
}

/// The canonical form of `v`: recursive (and allocation-free for small objects) up to
/// [`MAX_RECURSION`] levels, iterative below.
fn write_value<S: Sink>(v: &Value, out: &mut S, depth: u32) {
    if depth >= MAX_RECURSION {
        return write_deep(v, out);
    }
    match v {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(n) => push_number(out, n),
        Value::String(s) => push_json_string(out, s),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_value(item, out, depth + 1);
            }
            out.put("]");
        }
        Value::Object(map) => {
            out.put("{");
            if map.len() <= SMALL_OBJECT {
                let mut members: [(&str, &Value); SMALL_OBJECT] = [("", &NULL); SMALL_OBJECT];
                for (slot, (k, item)) in members.iter_mut().zip(map.iter()) {
                    *slot = (k.as_str(), item);
                }
                let members = &mut members[..map.len()];
                write_members(members, out, depth);
            } else {
                let mut members: Vec<(&str, &Value)> =
                    map.iter().map(|(k, v)| (k.as_str(), v)).collect();
                write_members(&mut members, out, depth);
            }
            out.put("}");
        }
    }
}

/// The same canonical form with an explicit stack: no nesting depth overflows it.
fn write_deep<S: Sink>(root: &Value, out: &mut S) {
    let mut stack: Vec<Work<'_>> = vec![Work::Val(root)];
    while let Some(w) = stack.pop() {
        match w {
            Work::Lit(s) => out.put(s),
            Work::Key(k) => {
                push_json_string(out, k);
                out.put(":");
            }
            Work::Val(v) => match v {
                Value::Array(items) => {
                    out.put("[");
                    stack.push(Work::Lit("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Work::Val(item));
                        if i > 0 {
                            stack.push(Work::Lit(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.put("{");
                    stack.push(Work::Lit("}"));
                    let mut members: Vec<(&String, &Value)> = map.iter().collect();
                    members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    for (i, (k, item)) in members.into_iter().enumerate().rev() {
                        stack.push(Work::Val(item));
                        stack.push(Work::Key(k));
                        if i > 0 {
                            stack.push(Work::Lit(","));
                        }
                    }
                }
                leaf => write_value(leaf, out, 0),
            },
        }
    }
}

/// Hashes canonical JSON written piece by piece (no text is built): what
/// [`args_fingerprint`] gives for the value the pieces spell.
pub(crate) struct CanonicalHasher(Sha256);

impl CanonicalHasher {
    pub(crate) fn new() -> CanonicalHasher {
        CanonicalHasher(Sha256::new())
    }

    /// Literal canonical JSON (punctuation, keys already quoted).
    pub(crate) fn raw(&mut self, s: &str) {
        self.0.update(s.as_bytes());
    }

    /// The canonical form of `v`.
    pub(crate) fn value(&mut self, v: &Value) {
        write_canonical(v, &mut self.0);
    }

    /// `s` as a JSON string.
    pub(crate) fn string(&mut self, s: &str) {
        push_json_string(&mut self.0, s);
    }

    pub(crate) fn finish(self) -> Fingerprint {
        Fingerprint(self.0.finalize().into())
    }
}

/// A fixed buffer for one formatted number (no allocation).
struct NumBuf {
    buf: [u8; 64],
    len: usize,
}

impl std::fmt::Write for NumBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// One number form: integers (and floats with an exact integer value below 2^53) print as
/// integers, other floats in the shortest round-trip form.
fn push_number<S: Sink>(out: &mut S, n: &serde_json::Number) {
    let mut b = NumBuf {
        buf: [0; 64],
        len: 0,
    };
    let ok = write_number(&mut b, n);
    match (
        ok,
        std::str::from_utf8(b.buf.get(..b.len).unwrap_or_default()),
    ) {
        (Ok(()), Ok(s)) => out.put(s),
        // A form longer than the buffer (a number kept verbatim): formatted on the heap.
        _ => {
            let mut s = String::new();
            let _ = write_number(&mut s, n);
            out.put(&s);
        }
    }
}

/// [`push_number`]'s form, written to `w`.
fn write_number<W: std::fmt::Write>(w: &mut W, n: &serde_json::Number) -> std::fmt::Result {
    if let Some(i) = n.as_i64() {
        write!(w, "{i}")
    } else if let Some(u) = n.as_u64() {
        write!(w, "{u}")
    } else if let Some(f) = n.as_f64() {
        if f.is_finite() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
            write!(w, "{}", f as i64)
        } else {
            write!(w, "{f:?}")
        }
    } else {
        write!(w, "{n}")
    }
}

fn push_json_string<S: Sink>(out: &mut S, s: &str) {
    out.put("\"");
    let bytes = s.as_bytes();
    // `s[run..]` is not written yet.
    let mut run = 0;
    loop {
        let at = crate::json::special_from(bytes, run);
        let Some(&b) = bytes.get(at) else {
            break;
        };
        // Escapes are ASCII: `run..at` is on char boundaries.
        out.put(s.get(run..at).unwrap_or_default());
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            _ => "",
        };
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let u = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ];
            out.put(std::str::from_utf8(&u).unwrap_or_default());
        } else {
            out.put(esc);
        }
        run = at + 1;
    }
    out.put(s.get(run..).unwrap_or_default());
    out.put("\"");
}

/// A sink that stops taking text once it holds `max` bytes: it ends on the first character
/// boundary at or after `max`, so it holds at most `max + 3` bytes.
struct Bounded<'a> {
    out: &'a mut String,
    max: usize,
}

impl Sink for Bounded<'_> {
    fn put(&mut self, s: &str) {
        let Some(room) = self.max.checked_sub(self.out.len()).filter(|&r| r > 0) else {
            return;
        };
        let mut end = room.min(s.len());
        while end < s.len() && !s.is_char_boundary(end) {
            end += 1;
        }
        self.out.push_str(s.get(..end).unwrap_or(s));
    }
}

/// Appends to an empty `out` the canonical JSON of `value`: whole, or when longer a prefix
/// of it that ends on the first character boundary at or after `max` bytes (its longest
/// prefix of at most `max` bytes on a character boundary is the whole text's).
pub(crate) fn canonical_json_prefix(value: &Value, max: usize, out: &mut String) {
    write_canonical(value, &mut Bounded { out, max });
}

/// The canonical JSON text of `value`: keys sorted recursively, arrays in order, no spaces.
///
/// ```
/// let a: serde_json::Value = serde_json::json!({"b": {"d": 3, "c": 2}, "a": 1.0});
/// assert_eq!(loopguard_core::canonical_json(&a), r#"{"a":1,"b":{"c":2,"d":3}}"#);
/// ```
pub fn canonical_json(value: &Value) -> String {
    let mut s = String::new();
    write_canonical(value, &mut s);
    s
}

/// SHA-256 of the canonical JSON of `args`. Key order never matters.
///
/// ```
/// use serde_json::json;
/// use loopguard_core::args_fingerprint;
/// assert_eq!(
///     args_fingerprint(&json!({"a": 1, "b": {"c": 2, "d": 3}})),
///     args_fingerprint(&json!({"b": {"d": 3, "c": 2}, "a": 1})),
/// );
/// ```
pub fn args_fingerprint(args: &Value) -> Fingerprint {
    let mut h = Sha256::new();
    write_canonical(args, &mut h);
    Fingerprint(h.finalize().into())
}

/// Why a JSON text could not be fingerprinted.
#[derive(Debug, thiserror::Error)]
#[error("arguments are not valid JSON: {0}")]
pub struct ArgsError(#[from] serde_json::Error);

/// Parses `text` as JSON and fingerprints it. Nesting deeper than the parser's limit (128)
/// is a clear error, never a stack overflow.
pub fn args_fingerprint_str(text: &str) -> Result<Fingerprint, ArgsError> {
    let v: Value = serde_json::from_str(text)?;
    Ok(args_fingerprint(&v))
}

/// Streaming fingerprint of a tool result: text parts are hashed as they come, images are
/// only counted.
///
/// ```
/// use loopguard_core::ResultHasher;
/// let mut h = ResultHasher::new();
/// h.text("line one");
/// h.image();
/// let streamed = h.finish();
/// assert_eq!(streamed, ResultHasher::one_shot(&["line one"], 1));
/// ```
#[derive(Clone, Debug)]
pub struct ResultHasher {
    hash: Sha256,
    images: u64,
}

impl Default for ResultHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl ResultHasher {
    /// An empty hasher.
    pub fn new() -> Self {
        ResultHasher {
            hash: Sha256::new(),
            images: 0,
        }
    }

    /// Adds one text part.
    pub fn text(&mut self, part: &str) {
        self.hash.update(b"T");
        self.hash.update((part.len() as u64).to_le_bytes());
        self.hash.update(part.as_bytes());
    }

    /// Adds a chunk of the current text part's bytes without a part boundary. Use either
    /// [`ResultHasher::text`] per part, or `begin_part` + `chunk`s.
    pub fn begin_part(&mut self) {
        self.hash.update(b"P");
    }

    /// More bytes of the current part (see [`ResultHasher::begin_part`]).
    pub fn chunk(&mut self, bytes: &[u8]) {
        self.hash.update(bytes);
    }

    /// Counts one image block (its bytes are never hashed).
    pub fn image(&mut self) {
        self.images += 1;
    }

    /// Counts `n` image blocks.
    pub fn images(&mut self, n: u32) {
        self.images += u64::from(n);
    }

    /// The fingerprint.
    pub fn finish(mut self) -> Fingerprint {
        self.hash.update(b"I");
        self.hash.update(self.images.to_le_bytes());
        Fingerprint(self.hash.finalize().into())
    }

    /// The fingerprint of whole text parts and an image count in one call.
    pub fn one_shot(parts: &[&str], images: u32) -> Fingerprint {
        let mut h = ResultHasher::new();
        for p in parts {
            h.text(p);
        }
        h.images(images);
        h.finish()
    }
}

/// The fingerprint of one tool result with a single text part.
pub fn result_fingerprint(content: &str, images: u32) -> Fingerprint {
    ResultHasher::one_shot(&[content], images)
}

/// The FNV-1a offset basis: the hash of no bytes ([`fnv1a`]).
pub const FNV1A_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a (64 bits) of `bytes`, continued from `h` (start from [`FNV1A_START`]): a stable,
/// platform-independent hash for short keys and streams kept in snapshots or used as an
/// order. Not a [`Fingerprint`]: it is not collision-resistant. A `const fn`, so that a table
/// of the hashes of known words is computed at compile time.
///
/// ```
/// use loopguard_core::{fnv1a, FNV1A_START};
/// assert_eq!(fnv1a(FNV1A_START, b""), FNV1A_START);
/// assert_eq!(fnv1a(fnv1a(FNV1A_START, b"ab"), b"c"), fnv1a(FNV1A_START, b"abc"));
/// assert_eq!(fnv1a(FNV1A_START, b"a"), 0xaf63_dc4c_8601_ec8c);
/// const A: u64 = fnv1a(FNV1A_START, b"a");
/// assert_eq!(A, 0xaf63_dc4c_8601_ec8c);
/// ```
#[inline]
pub const fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    let mut rest = bytes;
    while let [b, tail @ ..] = rest {
        h = (h ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        rest = tail;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter() {
        let a = json!({"a":1,"b":{"c":2,"d":3}});
        let b = json!({"b":{"d":3,"c":2},"a":1});
        assert_eq!(args_fingerprint(&a), args_fingerprint(&b));
        assert_eq!(canonical_json(&a), r#"{"a":1,"b":{"c":2,"d":3}}"#);
    }

    #[test]
    fn arrays_keep_their_order() {
        assert_ne!(
            args_fingerprint(&json!([1, 2])),
            args_fingerprint(&json!([2, 1]))
        );
    }

    #[test]
    fn one_number_form() {
        assert_eq!(canonical_json(&json!(1.0)), "1");
        assert_eq!(canonical_json(&json!(-0.0)), "0");
        assert_eq!(canonical_json(&json!(1.5)), "1.5");
        assert_eq!(
            args_fingerprint(&json!({"n": 2})),
            args_fingerprint(&json!({"n": 2.0}))
        );
    }

    #[test]
    fn fuzz_regression_large_float_canonical_form_is_a_fixed_point() {
        // Found by the `canonical_json` fuzz target: without exact float parsing, the canonical
        // text of a large float parsed back to a neighbouring float and printed differently.
        let text = "-611111111111111111111111111111111111111111111111112";
        let v: Value = serde_json::from_str(text).unwrap();
        let canon = canonical_json(&v);
        let back: Value = serde_json::from_str(&canon).unwrap();
        assert_eq!(canonical_json(&back), canon);
        assert_eq!(args_fingerprint(&back), args_fingerprint(&v));
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(
            canonical_json(&json!("a\"b\\\n\u{1}")),
            r#""a\"b\\\n\u0001""#
        );
    }

    #[test]
    fn different_values_differ() {
        assert_ne!(
            args_fingerprint(&json!({"a": "1"})),
            args_fingerprint(&json!({"a": 1}))
        );
        assert_ne!(
            args_fingerprint(&json!(null)),
            args_fingerprint(&json!("null"))
        );
    }

    #[test]
    fn hex_round_trips() {
        let f = args_fingerprint(&json!({"x": 1}));
        assert_eq!(Fingerprint::from_hex(&f.to_hex()), Some(f));
        assert_eq!(Fingerprint::from_hex("zz"), None);
        assert_eq!(f.to_hex().len(), 64);
    }

    #[test]
    fn deep_nesting_in_text_is_a_clear_error() {
        let depth = 200_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let err = args_fingerprint_str(&text).unwrap_err();
        assert!(err.to_string().contains("recursion limit"), "{err}");
    }

    #[test]
    fn deep_nesting_in_a_value_fingerprints_without_overflow() {
        let depth = 200_000;
        let mut v = json!(0);
        for _ in 0..depth {
            v = Value::Array(vec![v]);
        }
        // Run in a thread with a small stack to prove the walk is iterative.
        let (fp, v) = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || (args_fingerprint(&v), v))
            .unwrap()
            .join()
            .unwrap();
        assert_ne!(fp, args_fingerprint(&json!(0)));
        dismantle(v);
    }

    /// Drops a deeply nested value without recursion.
    fn dismantle(v: Value) {
        let mut stack = vec![v];
        while let Some(mut v) = stack.pop() {
            match &mut v {
                Value::Array(items) => stack.append(items),
                Value::Object(map) => {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    for k in keys {
                        if let Some(x) = map.remove(&k) {
                            stack.push(x);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn result_hash_counts_images_without_bytes() {
        // Checklist A9: "T" + 1 image differs from "T" + 2 images; equal text and counts
        // hash equally whatever the image bytes were (they are never passed in).
        assert_ne!(result_fingerprint("T", 1), result_fingerprint("T", 2));
        assert_eq!(result_fingerprint("T", 2), result_fingerprint("T", 2));
    }

    #[test]
    fn streaming_equals_one_shot() {
        // Checklist A10.
        let mut h = ResultHasher::new();
        h.text("alpha");
        h.text("beta");
        h.image();
        assert_eq!(h.finish(), ResultHasher::one_shot(&["alpha", "beta"], 1));
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z\"\\\\é]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn reverse_keys(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut pairs: Vec<_> = m.iter().collect();
                pairs.reverse();
                Value::Object(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (k.clone(), reverse_keys(v)))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(reverse_keys).collect()),
            other => other.clone(),
        }
    }

    /// The escaping rule written one char at a time: what the byte-run writer must equal.
    fn escape_reference(s: &str) -> String {
        use std::fmt::Write;
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn deep_and_wide_values_keep_one_canonical_form() {
        // Past the recursion depth and past the small-object size, the same text as the
        // value parsed back from it.
        let mut v = json!({"z": 1, "a": [1.5, "x"]});
        for i in 0..(MAX_RECURSION as usize + 10) {
            v = json!({ "k": v, "b": i });
        }
        let wide: serde_json::Map<String, Value> = (0..40)
            .rev()
            .map(|i| (format!("key{i:02}"), json!(i)))
            .collect();
        let v = json!({"deep": v, "wide": Value::Object(wide)});
        let text = canonical_json(&v);
        assert!(
            text.starts_with(r#"{"deep":{"b":73,"k":{"b":72,"#),
            "{}",
            &text[..40]
        );
        assert!(text.contains(r#""wide":{"key00":0,"key01":1,"#));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(canonical_json(&back), text);
        assert_eq!(args_fingerprint(&back), args_fingerprint(&v));
    }

    proptest! {
        #[test]
        fn prop_strings_escape_like_the_char_by_char_rule(s in "\\PC*|[\\x00-\\x20\"\\\\a\u{e9}]*") {
            let mut out = String::new();
            push_json_string(&mut out, &s);
            prop_assert_eq!(out, escape_reference(&s));
        }

        #[test]
        fn prop_long_strings_escape_like_the_char_by_char_rule(s in "[a-z \"\\\\\n\t\x01\x1f\x20\x7f\u{e9}\u{2028}]{0,90}") {
            let mut out = String::new();
            push_json_string(&mut out, &s);
            prop_assert_eq!(out, escape_reference(&s));
        }

        #[test]
        fn prop_key_order_never_matters(v in arb_json()) {
            prop_assert_eq!(args_fingerprint(&v), args_fingerprint(&reverse_keys(&v)));
        }

        #[test]
        fn prop_canonical_json_parses_back_to_an_equal_value(v in arb_json()) {
            let text = canonical_json(&v);
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(canonical_json(&back), text);
        }

        #[test]
        fn prop_any_text_never_panics(s in ".{0,64}") {
            let _ = args_fingerprint_str(&s);
        }
    }
}
