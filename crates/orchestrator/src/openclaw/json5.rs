//! JSON5 (as OpenClaw writes `openclaw.json`) rewritten as strict JSON, for `serde_json`.
//!
//! One pass over the characters, linear in the input, no recursion:
//!
//! - `// line` and `/* block */` comments become spaces (newlines are kept, so a JSON error
//!   still names the line of the original text);
//! - a trailing comma before `}` or `]` is dropped;
//! - an unquoted key (an ECMAScript identifier) is quoted;
//! - a single-quoted string becomes a double-quoted one; the escapes JSON lacks (`\'`, `\x41`,
//!   `\v`, `\0`, a line continuation, any other escaped character) are rewritten;
//! - hexadecimal numbers, a leading `+`, a leading or trailing decimal point are rewritten as
//!   JSON numbers; `Infinity` and `NaN` (no JSON number stands for them) become the strings
//!   `"Infinity"` / `"-Infinity"` / `"NaN"`, so a key that needs a number rejects them by name;
//! - the extra whitespace JSON5 allows (vertical tab, form feed, no-break space, byte order
//!   mark, line and paragraph separators) becomes a space.
//!
//! Errors carry the 1-based line.

use std::fmt::Write as _;

/// A JSON5 text that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Json5Error {
    /// 1-based line of the problem.
    pub(crate) line: usize,
    /// What was wrong.
    pub(crate) message: String,
}

/// Whether a character may start an unquoted key.
fn ident_start(c: char) -> bool {
    c == '$' || c == '_' || c.is_alphabetic()
}

/// Whether a character may continue an unquoted key.
fn ident_continue(c: char) -> bool {
    ident_start(c) || c.is_alphanumeric() || c == '\u{200C}' || c == '\u{200D}'
}

fn json5_space(c: char) -> bool {
    matches!(
        c,
        '\u{0B}' | '\u{0C}' | '\u{A0}' | '\u{FEFF}' | '\u{2028}' | '\u{2029}'
    ) || (c.is_whitespace() && !matches!(c, ' ' | '\t' | '\n' | '\r'))
}

struct Rewriter<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    out: String,
    line: usize,
    /// Output length just after the last comma written outside strings, while only
    /// whitespace has followed it (a candidate trailing comma).
    comma: Option<usize>,
    /// Whether the next token sits where an object key goes.
    key_expected: bool,
    /// Open containers: `true` for an object.
    stack: Vec<bool>,
}

impl Rewriter<'_> {
    fn err(&self, message: impl Into<String>) -> Json5Error {
        Json5Error {
            line: self.line,
            message: message.into(),
        }
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// The identifier that starts with `first` (already read): it and the identifier
    /// characters after it.
    fn word(&mut self, first: char) -> String {
        let mut word = String::from(first);
        while let Some(&n) = self.chars.peek() {
            if !ident_continue(n) {
                break;
            }
            word.push(n);
            self.next();
        }
        word
    }

    /// Writes a token (anything but whitespace and comments).
    fn token(&mut self, s: &str) {
        self.comma = None;
        self.out.push_str(s);
    }

    fn run(mut self) -> Result<String, Json5Error> {
        while let Some(c) = self.next() {
            match c {
                ' ' | '\t' | '\n' | '\r' => self.out.push(c),
                c if json5_space(c) => self.out.push(' '),
                '/' => self.comment()?,
                '{' | '[' => {
                    self.stack.push(c == '{');
                    self.key_expected = c == '{';
                    self.token(if c == '{' { "{" } else { "[" });
                }
                '}' | ']' => {
                    if let Some(at) = self.comma.take() {
                        // The trailing comma becomes a space (same length: nothing moves).
                        self.out.replace_range(at - 1..at, " ");
                    }
                    self.stack.pop();
                    self.key_expected = false;
                    self.out.push(c);
                }
                ',' => {
                    self.token(",");
                    self.comma = Some(self.out.len());
                    self.key_expected = self.stack.last() == Some(&true);
                }
                ':' => {
                    self.key_expected = false;
                    self.token(":");
                }
                '"' | '\'' => {
                    self.string(c)?;
                    self.key_expected = false;
                }
                c if self.key_expected && ident_start(c) => {
                    let key = self.word(c);
                    let mut quoted = String::with_capacity(key.len() + 2);
                    quoted.push('"');
                    quoted.push_str(&key);
                    quoted.push('"');
                    self.token(&quoted);
                    self.key_expected = false;
                }
                c if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') => self.number(c)?,
                c if c.is_alphabetic() => {
                    let word = self.word(c);
                    match word.as_str() {
                        "true" | "false" | "null" => self.token(&word),
                        "Infinity" => self.token("\"Infinity\""),
                        "NaN" => self.token("\"NaN\""),
                        _ => return Err(self.err(format!("unexpected word `{word}`"))),
                    }
                }
                other => {
                    // Left for the JSON parser to reject with its own message.
                    let mut b = [0u8; 4];
                    self.token(other.encode_utf8(&mut b));
                }
            }
        }
        Ok(self.out)
    }

    fn comment(&mut self) -> Result<(), Json5Error> {
        match self.chars.peek() {
            Some('/') => {
                self.out.push(' ');
                while let Some(&n) = self.chars.peek() {
                    if n == '\n' {
                        break;
                    }
                    self.next();
                    self.out.push(' ');
                }
                Ok(())
            }
            Some('*') => {
                let start = self.line;
                self.next();
                self.out.push_str("  ");
                let mut star = false;
                loop {
                    let Some(n) = self.next() else {
                        return Err(Json5Error {
                            line: start,
                            message: "unterminated /* comment".to_owned(),
                        });
                    };
                    if star && n == '/' {
                        self.out.push(' ');
                        return Ok(());
                    }
                    star = n == '*';
                    self.out.push(if n == '\n' { '\n' } else { ' ' });
                }
            }
            _ => Err(self.err("unexpected `/` (comments start with // or /*)")),
        }
    }

    fn string(&mut self, quote: char) -> Result<(), Json5Error> {
        let start = self.line;
        let mut s = String::from('"');
        // Line continuations drop a line break from the string; it is written after it.
        let mut continued = 0;
        loop {
            let Some(c) = self.next() else {
                return Err(Json5Error {
                    line: start,
                    message: "unterminated string".to_owned(),
                });
            };
            match c {
                c if c == quote => break,
                '"' => s.push_str("\\\""),
                '\n' | '\r' => {
                    return Err(Json5Error {
                        line: start,
                        message: "unescaped line break in a string".to_owned(),
                    })
                }
                '\\' => {
                    let Some(e) = self.next() else {
                        return Err(self.err("unterminated string"));
                    };
                    match e {
                        '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' => {
                            s.push('\\');
                            s.push(e);
                        }
                        'u' => s.push_str("\\u"),
                        '\'' => s.push('\''),
                        'v' => s.push_str("\\u000b"),
                        '0' => s.push_str("\\u0000"),
                        'x' => {
                            let hex: String = (0..2).filter_map(|_| self.next()).collect();
                            if hex.len() != 2 || !hex.chars().all(|h| h.is_ascii_hexdigit()) {
                                return Err(self.err(format!("bad \\x escape `\\x{hex}`")));
                            }
                            s.push_str("\\u00");
                            s.push_str(&hex);
                        }
                        // A line continuation: the escaped line break is not part of the string.
                        '\n' => continued += 1,
                        '\u{2028}' | '\u{2029}' => {}
                        '\r' => {
                            if self.chars.peek() == Some(&'\n') {
                                self.next();
                            }
                            continued += 1;
                        }
                        other => {
                            let _ = write!(s, "{}", other);
                        }
                    }
                }
                c if (c as u32) < 0x20 => {
                    let _ = write!(s, "\\u{:04x}", c as u32);
                }
                c => s.push(c),
            }
        }
        s.push('"');
        self.token(&s);
        for _ in 0..continued {
            self.out.push('\n');
        }
        Ok(())
    }

    fn number(&mut self, first: char) -> Result<(), Json5Error> {
        let mut raw = String::from(first);
        while let Some(&n) = self.chars.peek() {
            let exponent_sign = matches!(n, '+' | '-') && raw.ends_with(['e', 'E']);
            if n.is_ascii_alphanumeric() || n == '.' || exponent_sign {
                raw.push(n);
                self.next();
            } else {
                break;
            }
        }
        let (negative, body) = match raw.as_bytes().first() {
            Some(b'-') => (true, &raw[1..]),
            Some(b'+') => (false, &raw[1..]),
            _ => (false, raw.as_str()),
        };
        let sign = if negative { "-" } else { "" };
        let text = if body == "Infinity" {
            format!("\"{sign}Infinity\"")
        } else if body == "NaN" {
            "\"NaN\"".to_owned()
        } else if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            let n = u64::from_str_radix(hex, 16)
                .map_err(|_| self.err(format!("bad hexadecimal number `{raw}`")))?;
            format!("{sign}{n}")
        } else {
            let (mantissa, exponent) = match body.find(['e', 'E']) {
                Some(i) => body.split_at(i),
                None => (body, ""),
            };
            let mut m = mantissa.to_owned();
            if m.starts_with('.') {
                m.insert(0, '0');
            }
            if m.ends_with('.') {
                m.push('0');
            }
            let ok = !m.is_empty()
                && m.chars().all(|c| c.is_ascii_digit() || c == '.')
                && m.chars().filter(|&c| c == '.').count() <= 1;
            if !ok {
                return Err(self.err(format!("bad number `{raw}`")));
            }
            format!("{sign}{m}{exponent}")
        };
        self.token(&text);
        Ok(())
    }
}

/// `text` (JSON5, or plain JSON) as strict JSON, line breaks where they were.
pub(crate) fn to_json(text: &str) -> Result<String, Json5Error> {
    Rewriter {
        chars: text.chars().peekable(),
        out: String::with_capacity(text.len() + text.len() / 8),
        line: 1,
        comma: None,
        key_expected: false,
        stack: Vec::new(),
    }
    .run()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parse(text: &str) -> Value {
        let j = to_json(text).unwrap();
        serde_json::from_str(&j).unwrap_or_else(|e| panic!("{e}: {j}"))
    }

    #[test]
    fn plain_json_is_unchanged() {
        let t = r#"{"a": [1, 2.5, -3e2, "x\"y\u00e9"], "b": {"c": null, "d": true}}"#;
        assert_eq!(to_json(t).unwrap(), t);
    }

    #[test]
    fn json5_features_become_json() {
        let v = parse(
            "// OpenClaw writes comments\n{\n  tools: {\n    /* the block */ loopDetection: {\n      enabled: true, // on\n      warningThreshold: +8,\n      historySize: 0x1E,\n      label: 'it\\'s \"here\"',\n      ratio: .5, big: 5., exp: 1e+3,\n      $odd_key2: 'a\\x41\\v\\0',\n      cont: 'one \\\ntwo',\n    },\n  },\n  list: [1, 2, ],\n  inf: -Infinity, nan: NaN,\n}\n",
        );
        assert_eq!(
            v,
            json!({
                "tools": {"loopDetection": {
                    "enabled": true, "warningThreshold": 8, "historySize": 30,
                    "label": "it's \"here\"", "ratio": 0.5, "big": 5.0, "exp": 1000.0,
                    "$odd_key2": "aA\u{0b}\u{0}", "cont": "one two",
                }},
                "list": [1, 2],
                "inf": "-Infinity", "nan": "NaN",
            })
        );
    }

    #[test]
    fn comment_markers_inside_strings_are_text() {
        let v = parse("{url: 'http://x/*y*/', b: \"a, }\"}");
        assert_eq!(v, json!({"url": "http://x/*y*/", "b": "a, }"}));
    }

    #[test]
    fn lines_are_kept_and_errors_name_them() {
        let j = to_json("{\n/* a\nb */\n  a: 1,\n}").unwrap();
        assert_eq!(j.lines().count(), 5);
        // A line continuation's break moves after the string: later lines keep their number.
        let j = to_json("{a: 'x\\\ny',\nb: 1 2}").unwrap();
        assert_eq!(j, "{\"a\": \"xy\"\n,\n\"b\": 1 2}");
        let e = serde_json::from_str::<Value>(&j).unwrap_err();
        assert_eq!(e.line(), 3);
        let e = to_json("{\n a: 'open\n}").unwrap_err();
        assert_eq!(e.line, 2);
        let e = to_json("{\n\n /* never closed").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("unterminated"), "{e:?}");
        let e = to_json("{a: 0xZZ}").unwrap_err();
        assert!(e.message.contains("0xZZ"), "{e:?}");
        let e = to_json("{a: undefined}").unwrap_err();
        assert!(e.message.contains("undefined"), "{e:?}");
    }

    #[test]
    fn values_are_not_taken_for_keys() {
        // After `:` a bare word is a value, not a key to quote.
        assert!(to_json("{a: b}").is_err());
        let v = parse("[{a: 1}, {b: [true, {c: 2,},],}]");
        assert_eq!(v, json!([{"a": 1}, {"b": [true, {"c": 2}]}]));
    }

    mod props {
        use super::super::to_json;
        use proptest::prelude::*;
        use serde_json::Value;

        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(Value::from),
                any::<String>().prop_map(Value::String),
            ];
            leaf.prop_recursive(4, 32, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec((any::<String>(), inner), 0..6)
                        .prop_map(|kv| Value::Object(kv.into_iter().collect())),
                ]
            })
        }

        proptest! {
            /// Strict JSON passes through unchanged, compact or pretty.
            #[test]
            fn json_is_a_fixed_point(v in json()) {
                let compact = v.to_string();
                prop_assert_eq!(to_json(&compact).unwrap(), compact);
                let pretty = serde_json::to_string_pretty(&v).unwrap();
                prop_assert_eq!(to_json(&pretty).unwrap(), pretty);
            }

            /// Any text is rewritten or refused, never a panic, and line feeds are kept.
            #[test]
            fn any_text_is_handled(t in "(\\\\\n|[\\PC\n{}\\[\\]:,'\"/*+.0-9a-zA-Z]){0,64}") {
                if let Ok(j) = to_json(&t) {
                    prop_assert_eq!(j.matches('\n').count(), t.matches('\n').count());
                }
            }
        }
    }
}
