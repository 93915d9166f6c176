//! What a host wraps around a tool's output, and the plain text under it.
//!
//! Hosts hand the model a command's output inside wrappings that change from call to call
//! or hide the output's first line: Codex's JSON envelope (`{"output": …, "metadata":
//! {"exit_code": 1, "duration_seconds": 0.4}}`, a new duration on every run) and other
//! reports written as JSON, an element, a code fence, `Observation:` or stream sections
//! around the whole output, a terminal's colour codes, a time stamp on a line of its own
//! over the output, a line-number gutter (`cat -n`, Claude Code's `Read`); [`plain`] lists
//! them. It takes them off, so that the copies of one
//! answer are one text again and an error's or a search's first line is the output's own.
//! The guard applies it to every result when `[guard] plain-results` is on (the `default`
//! preset); the seed presets read results as their seeds do, wrapping and all.
//!
//! Headers and footers a host writes as text (Codex's `Exit code:` header, OpenHands'
//! footer, Gemini CLI's report) are set aside where a rule reads the output
//! ([`crate::shape::output_body`]); [`plain`] writes Codex's JSON envelope in that header's
//! form, so that its exit code is read the same way.

use std::borrow::Cow;

/// The plain text of a tool result: `None` when `content` has no wrapping to take off (the
/// usual case, decided without copying), else the text with, in this order,
///
/// 1. a wrapping around the whole content replaced by the output inside it, the steps below
///    applied to that output, under an `Exit code: N` / `Output:` header when the wrapping
///    gives an exit code: a command's report written as a JSON object (Codex's `{"output": …,
///    "metadata": {"exit_code": …, "duration_seconds": …}}`, `{"stdout": …, "stderr": …,
///    "returncode": …}`, `{"result": …}`: every key one a report has, the text a string, the
///    duration dropped), one element that is the whole content
///    (`<tool_output>…</tool_output>`), one Markdown code fence that is the whole content, a
///    ReAct host's `Observation:` and `STDOUT:` / `STDERR:` sections (the part that says
///    something, or both). mini-swe-agent's
///    `<returncode>N</returncode><output>…</output>` is left as it is (ADR 18 says why);
/// 2. terminal escape sequences removed (colours, cursor moves, window titles);
/// 3. a first line holding only a date-time (`[2026-12-08T00:53:48Z]`, `2026-12-08
///    00:53:48`, `(00:53:48)`) dropped, when lines follow it or it is in brackets (alone and
///    bare, it is the answer of `date -Is`);
/// 4. a line-number gutter removed: every line opening with a number and a tab or Claude
///    Code's `→`, the numbers consecutive, on two lines or more (one line only when the
///    number is right-aligned in six places or more, as `cat -n` and `Read` write it).
///
/// ```
/// use loopguard_core::wrapping::plain;
/// let codex = r#"{"output":"grep: x: No such file\n","metadata":{"exit_code":2,"duration_seconds":0.3}}"#;
/// assert_eq!(plain(codex).as_deref(), Some("Exit code: 2\nOutput:\ngrep: x: No such file\n"));
/// assert_eq!(plain("Observation: No matches found").as_deref(), Some("No matches found"));
/// assert_eq!(plain("\x1b[31mError:\x1b[0m no such table").as_deref(), Some("Error: no such table"));
/// assert_eq!(plain("[2026-12-08T00:53:48Z]\nNo matches found").as_deref(), Some("No matches found"));
/// assert_eq!(plain("     1\timport os\n     2\timport sys\n").as_deref(), Some("import os\nimport sys\n"));
/// assert_eq!(plain("    41→fn main() {\n    42→}").as_deref(), Some("fn main() {\n}"));
/// // Nothing to take off: no copy.
/// assert_eq!(plain("src/lib.rs:12: fn main() {}"), None);
/// // A number and a tab on one short line is data (`du -s`), not a gutter.
/// assert_eq!(plain("1234\tbuild"), None);
/// ```
pub fn plain(content: &str) -> Option<String> {
    let (code, mut text) = match outer(content) {
        Some((code, output)) => (Some(code), Cow::Owned(output.into_owned())),
        None => (None, Cow::Borrowed(content)),
    };
    if memchr::memchr(ESC, text.as_bytes()).is_some() {
        text = Cow::Owned(strip_escapes(&text));
    }
    // A stamp and a gutter open with a digit or a bracket (after spaces): most texts are
    // passed over at their first bytes.
    if text
        .trim_start_matches(' ')
        .starts_with(|c: char| c.is_ascii_digit() || c == '[' || c == '(')
    {
        if let Some(rest) = after_stamp_line(&text) {
            text = Cow::Owned(rest.to_owned());
        }
        if let Some(out) = without_gutter(&text) {
            text = Cow::Owned(out);
        }
    }
    match (code, text) {
        (Some(Some(code)), text) => Some(format!("Exit code: {code}\nOutput:\n{text}")),
        (_, Cow::Owned(s)) => Some(s),
        (_, Cow::Borrowed(_)) => None,
    }
}

/// The output inside a wrapping around the whole content, and the exit code the wrapping
/// gives (if any); `None` when the content has no such wrapping. Decided at the content's
/// first byte for most texts.
fn outer(content: &str) -> Option<(Option<i64>, Cow<'_, str>)> {
    let t = content.trim_start();
    match t.as_bytes().first()? {
        b'{' => json_report(t.trim_end()).map(|(code, out)| (code, Cow::Owned(out))),
        b'<' => one_element(t).map(|body| (None, Cow::Borrowed(body))),
        b'O' => {
            let rest = t.strip_prefix("Observation:")?;
            Some((
                None,
                Cow::Borrowed(rest.strip_prefix([' ', '\n']).unwrap_or(rest)),
            ))
        }
        b'S' | b's' => std_streams(t).map(|out| (None, out)),
        b'`' => fenced(t).map(|body| (None, Cow::Borrowed(body))),
        _ => None,
    }
}

/// The text inside one element that is the whole content (`<tool_output>` … `</tool_output>`,
/// `<tool_use_error>` … `</tool_use_error>`); the name a word of at most 32 characters, not
/// closed before the end (two elements side by side are no wrapping).
fn one_element(t: &str) -> Option<&str> {
    let rest = t.strip_prefix('<')?;
    let end = rest.find('>')?;
    let name = &rest[..end];
    if name.is_empty()
        || name.len() > 32
        || !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return None;
    }
    let body = rest[end + 1..]
        .trim_end()
        .strip_suffix('>')?
        .strip_suffix(name)?
        .strip_suffix("</")?;
    // One element: its name is not closed before the end (`<div>a</div><div>b</div>`).
    let closed_inside = body.match_indices("</").any(|(i, _)| {
        body[i + 2..]
            .strip_prefix(name)
            .is_some_and(|r| r.starts_with('>'))
    });
    if closed_inside {
        return None;
    }
    Some(trim_one_newline(body))
}

/// The text of one Markdown code fence that is the whole content (```` ``` ````, perhaps with
/// a language, then the output, then ```` ``` ````); `None` when another fence line is inside.
fn fenced(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("```")?;
    let (info, rest) = rest.split_once('\n')?;
    if info.contains('`') || info.trim().contains(' ') {
        return None;
    }
    let body = rest.trim_end().strip_suffix("```")?;
    if body.lines().any(|l| l.trim_start().starts_with("```")) {
        return None;
    }
    Some(body.strip_suffix('\n').unwrap_or(body))
}

/// `STDOUT:` … `STDERR:` …: the part that says something, or both (stdout first).
fn std_streams(t: &str) -> Option<Cow<'_, str>> {
    let rest = t
        .strip_prefix("STDOUT:")
        .or_else(|| t.strip_prefix("stdout:"))?;
    let at = rest.find("\nSTDERR:").or_else(|| rest.find("\nstderr:"))?;
    let out = trim_one_newline(rest[..at].strip_prefix(' ').unwrap_or(&rest[..at]));
    let err = &rest[at + "\nSTDERR:".len()..];
    let err = trim_one_newline(err.strip_prefix(' ').unwrap_or(err));
    Some(streams(out, err))
}

/// A command's two streams as one text: the one that says something, or both (stdout first).
fn streams<'t>(out: &'t str, err: &'t str) -> Cow<'t, str> {
    match (out.trim().is_empty(), err.trim().is_empty()) {
        (true, _) => Cow::Borrowed(err),
        (false, true) => Cow::Borrowed(out),
        (false, false) => Cow::Owned(format!("{out}\n{err}")),
    }
}

/// `s` without one newline at each end (a wrapping's own line breaks).
fn trim_one_newline(s: &str) -> &str {
    let s = s.strip_prefix('\n').unwrap_or(s);
    s.strip_suffix('\n').unwrap_or(s)
}

/// The keys of a command's report written as a JSON object that hold its text.
const TEXT_KEYS: [&str; 4] = ["output", "result", "content", "text"];
/// The keys of the streams of a command's report written as a JSON object.
const STREAM_KEYS: [&str; 2] = ["stdout", "stderr"];
/// The keys of a command's report written as a JSON object that hold its exit code.
const CODE_KEYS: [&str; 5] = [
    "exit_code",
    "exitCode",
    "returncode",
    "return_code",
    "exit_status",
];
/// The other keys such a report may have: how long the command took, whether it timed out or
/// was cut, Codex's `metadata` (an object, whose `exit_code` is read).
const OTHER_KEYS: [&str; 10] = [
    "metadata",
    "duration",
    "duration_ms",
    "duration_seconds",
    "elapsed",
    "elapsed_ms",
    "wall_time",
    "timed_out",
    "timeout",
    "truncated",
];

fn report_key(k: &str) -> bool {
    TEXT_KEYS.contains(&k)
        || STREAM_KEYS.contains(&k)
        || CODE_KEYS.contains(&k)
        || OTHER_KEYS.contains(&k)
}

/// A command's report written as a JSON object (Codex's `{"output": …, "metadata":
/// {"exit_code": …, "duration_seconds": …}}`, `{"stdout": …, "stderr": …, "returncode": …}`,
/// `{"output": …, "exit_code": …, "duration_ms": …}`, `{"result": …}`): its exit code (when it
/// has one) and its text; `None` for any other content. Every key must be a report's
/// ([`report_key`]) and the text a string: a JSON answer with any other key is data, left as
/// it is. Only a content whose first key is a report's is parsed.
fn json_report(t: &str) -> Option<(Option<i64>, String)> {
    let inner = t.strip_prefix('{')?.trim_start().strip_prefix('"')?;
    if !report_key(&inner[..inner.find('"')?]) {
        return None;
    }
    let serde_json::Value::Object(mut o) = serde_json::from_str(t).ok()? else {
        return None;
    };
    if !o.keys().all(|k| report_key(k)) {
        return None;
    }
    let metadata_code = match o.get("metadata") {
        Some(serde_json::Value::Object(m)) => {
            m.get("exit_code").and_then(serde_json::Value::as_i64)
        }
        Some(_) => return None,
        None => None,
    };
    let code = CODE_KEYS
        .iter()
        .find_map(|k| o.get(*k).and_then(serde_json::Value::as_i64))
        .or(metadata_code);
    let mut string = |k: &str| match o.remove(k) {
        Some(serde_json::Value::String(s)) => Some(Some(s)),
        Some(serde_json::Value::Null) | None => Some(None),
        Some(_) => None,
    };
    let (out, err) = (string("stdout")?, string("stderr")?);
    let texts: Vec<String> = TEXT_KEYS
        .iter()
        .map(|k| string(k))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let text = match (out, err, texts.len()) {
        (None, None, 1) => texts.into_iter().next()?,
        (out, err, 0) if out.is_some() || err.is_some() => {
            streams(out.as_deref().unwrap_or(""), err.as_deref().unwrap_or("")).into_owned()
        }
        _ => return None,
    };
    Some((code, text))
}

const ESC: u8 = 0x1b;

/// `s` without its terminal escape sequences: CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or
/// `ESC ] … ESC \`), a character-set choice (`ESC ( B`) and two-byte escapes. An escape
/// cut off at the end is dropped whole.
fn strip_escapes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let Some(at) = memchr::memchr(ESC, &b[i..]).map(|p| i + p) else {
            out.push_str(&s[i..]);
            break;
        };
        out.push_str(&s[i..at]);
        i = skip_escape(b, at);
    }
    out
}

/// The index just past the escape sequence starting at `at` (an `ESC`). Never inside a
/// multi-byte character: every byte stepped over is ASCII, or the sequence ends at a
/// character boundary.
fn skip_escape(b: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    match b.get(i) {
        Some(b'[') => {
            i += 1;
            // Parameter and intermediate bytes, then one final byte.
            while i < b.len() && (0x20..=0x3f).contains(&b[i]) {
                i += 1;
            }
            if i < b.len() && (0x40..=0x7e).contains(&b[i]) {
                i += 1;
            }
            i
        }
        Some(b']') => {
            // To BEL or ESC \; an OSC never ends inside a UTF-8 sequence since both are ASCII.
            i += 1;
            while i < b.len() {
                match b[i] {
                    0x07 => return i + 1,
                    ESC if b.get(i + 1) == Some(&b'\\') => return i + 2,
                    ESC => return i,
                    _ => i += 1,
                }
            }
            i
        }
        // A character set's choice names it by one ASCII byte.
        Some(b'(' | b')') => match b.get(i + 1) {
            Some(c) if c.is_ascii() => i + 2,
            _ => i + 1,
        },
        Some(c) if c.is_ascii() => i + 1,
        // A lone ESC before a non-ASCII character: only the ESC goes.
        _ => i,
    }
}

/// The text after a first line holding only a date-time, when some line follows it or the
/// stamp is in brackets (a host's mark: a program asked for the time, `date -Is`, prints it
/// bare). The whole content when it is one bracketed stamp: the output under it was empty.
fn after_stamp_line(text: &str) -> Option<&str> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first = first.trim();
    if !is_stamp(first) {
        return None;
    }
    let bracketed = first.starts_with(['[', '(']);
    (bracketed || !rest.trim().is_empty()).then_some(rest)
}

/// Whether `s` is only a date-time, perhaps in brackets or parentheses: an ISO-8601 date
/// with a time (`2026-12-08T00:53:48Z`, `2026-12-08 00:53:48.120+01:00`), or a clock time
/// with seconds (`00:53:48`, `00:53:48.120`), read as the normaliser reads them
/// (`iso_datetime_at`, `time_of_day_at`), then perhaps a zone's three-letter name (`UTC`;
/// `00:53:48 INFO` is a log line). A date alone is not a stamp.
fn is_stamp(s: &str) -> bool {
    use crate::normalizers::text::{iso_datetime_at, time_of_day_at};
    let s = s
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .or_else(|| s.strip_prefix('(').and_then(|s| s.strip_suffix(')')))
        .unwrap_or(s)
        .trim();
    let b = s.as_bytes();
    let end = iso_datetime_at(b, 0).map(|(_, end)| end).or_else(|| {
        time_of_day_at(b, 0, 2)
            .filter(|t| t.seconds.is_some())
            .map(|t| t.end)
    });
    end.is_some_and(|end| {
        let zone = s[end..].trim_start_matches(' ');
        zone.len() <= 3 && zone.bytes().all(|c| c.is_ascii_uppercase())
    })
}

/// The separators of a line-number gutter: a tab (`cat -n`, `nl`) and Claude Code's `→`.
const GUTTER_SEPARATORS: [&str; 2] = ["\t", "\u{2192}"];

/// `text` without its line-number gutter, when it has one (see [`plain`]).
fn without_gutter(text: &str) -> Option<String> {
    let first = text.split('\n').next()?;
    let (n0, first_width) = gutter(first)?;
    let mut out = String::with_capacity(text.len());
    let mut expected = n0;
    let mut lines = 0;
    let mut pieces = text.split('\n').peekable();
    while let Some(line) = pieces.next() {
        if line.is_empty() && pieces.peek().is_none() {
            break;
        }
        let (n, width) = gutter(line)?;
        if n != expected {
            return None;
        }
        if lines > 0 {
            out.push('\n');
        }
        out.push_str(&line[width..]);
        expected = expected.checked_add(1)?;
        lines += 1;
    }
    if text.ends_with('\n') {
        out.push('\n');
    }
    // One line is a gutter only when right-aligned as `cat -n` and `Read` write it.
    let aligned = first.starts_with(' ') && first_width > 6;
    (lines >= 2 || aligned).then_some(out)
}

/// A line's gutter: its number and the gutter's width in bytes (spaces, digits and the
/// separator).
fn gutter(line: &str) -> Option<(u64, usize)> {
    let b = line.as_bytes();
    let spaces = b.iter().take_while(|&&c| c == b' ').count();
    let digits = b[spaces..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let n: u64 = line[spaces..spaces + digits].parse().ok()?;
    let rest = &line[spaces + digits..];
    let sep = GUTTER_SEPARATORS.iter().find(|s| rest.starts_with(*s))?;
    Some((n, spaces + digits + sep.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn json_reports_become_their_text() {
        let ok = r#"{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":1.5}}"#;
        assert_eq!(plain(ok).as_deref(), Some("Exit code: 0\nOutput:\nok\n"));
        // The same output under another duration is the same text.
        let slower = r#"{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":9.1}}"#;
        assert_eq!(plain(ok), plain(slower));
        let spaced = "{ \"metadata\": {\"duration_seconds\": 0.1}, \"output\": \"done\" }";
        assert_eq!(plain(spaced).as_deref(), Some("done"));
        assert_eq!(
            plain(r#"{"stdout": "", "stderr": "ModuleNotFoundError: No module named 'x'\n", "returncode": 1}"#)
                .as_deref(),
            Some("Exit code: 1\nOutput:\nModuleNotFoundError: No module named 'x'\n")
        );
        assert_eq!(
            plain(r#"{"stdout": "3 passed", "stderr": "warning: old pip"}"#).as_deref(),
            Some("3 passed\nwarning: old pip")
        );
        assert_eq!(
            plain(r#"{"output": "No matches found", "exit_code": 1, "duration_ms": 12}"#)
                .as_deref(),
            Some("Exit code: 1\nOutput:\nNo matches found")
        );
        assert_eq!(
            plain(r#"{"result": "x", "metadata": {}}"#).as_deref(),
            Some("x")
        );
        assert_eq!(
            plain(r#"{"stderr": null, "stdout": "a"}"#).as_deref(),
            Some("a")
        );
        // Other JSON answers are data, left as they are.
        for other in [
            r#"{"output":"x","status":"ok"}"#,
            r#"{"output":"x","metadata":{"exit_code":0},"extra":1}"#,
            r#"{"output":3,"metadata":{}}"#,
            r#"{"output":"x","metadata":"m"}"#,
            r#"{"output":"x","result":"y"}"#,
            r#"{"stdout":"x","output":"y"}"#,
            r#"{"exit_code":0}"#,
            r#"{"result": {"rows": 3}}"#,
            r#"{"id": 7, "content": "x"}"#,
            r#"{"output":"unterminated"#,
            r#"[{"output":"x"}]"#,
        ] {
            assert_eq!(plain(other), None, "{other}");
        }
    }

    #[test]
    fn whole_content_wrappings_give_their_output() {
        // mini-swe-agent's observation is two elements: left as it is.
        let mini = "<returncode>0</returncode>\n<output>\nsrc/a.py\nsrc/b.py\n</output>";
        assert_eq!(plain(mini), None);
        assert_eq!(
            plain("<tool_use_error>File does not exist.</tool_use_error>").as_deref(),
            Some("File does not exist.")
        );
        assert_eq!(
            plain("<tool_output>\n[00:00:01]\nok\n</tool_output>\n").as_deref(),
            Some("ok")
        );
        assert_eq!(plain("Observation:\nok").as_deref(), Some("ok"));
        assert_eq!(
            plain("```\nNo matches found\n```").as_deref(),
            Some("No matches found")
        );
        assert_eq!(
            plain("```console\n$ ls\na.py\n```\n").as_deref(),
            Some("$ ls\na.py")
        );
        assert_eq!(plain("```\n```").as_deref(), Some(""));
        assert_eq!(
            plain("STDOUT:\n\nSTDERR:\nModuleNotFoundError: No module named 'x'\n").as_deref(),
            Some("ModuleNotFoundError: No module named 'x'")
        );
        assert_eq!(
            plain("STDOUT:\n3 passed\nSTDERR:\n").as_deref(),
            Some("3 passed")
        );
        assert_eq!(plain("stdout: a\nstderr: b").as_deref(), Some("a\nb"));
        for kept in [
            "<div>one</div><div>two</div>",
            "<a>x</b>",
            "<1>x</1>",
            "<returncode>x</returncode><output>y</output>",
            "Observations were made",
            "STDOUT only",
            "Some text",
            "<>x</>",
            "```py\na\n```\nand\n```py\nb\n```",
            "``` not a fence\nx\n```",
            "```\nunclosed",
        ] {
            assert_eq!(plain(kept), None, "{kept:?}");
        }
    }

    #[test]
    fn escapes_go_and_text_stays() {
        assert_eq!(
            plain("\x1b[1;32mPASSED\x1b[0m tests/t.py\n\x1b[31mFAILED\x1b[m").as_deref(),
            Some("PASSED tests/t.py\nFAILED")
        );
        assert_eq!(
            plain("\x1b]0;title\x07done \x1b]8;;http://x\x1b\\link").as_deref(),
            Some("done link")
        );
        assert_eq!(plain("\x1b(Bplain\x1b[K").as_deref(), Some("plain"));
        // Cut off at the end, and before a non-ASCII character.
        assert_eq!(plain("é\x1b[3").as_deref(), Some("é"));
        assert_eq!(plain("a\x1bé").as_deref(), Some("aé"));
        assert_eq!(plain("a\x1b(").as_deref(), Some("a"));
        assert_eq!(plain("a\x1b(é").as_deref(), Some("aé"));
    }

    #[test]
    fn a_stamp_line_over_the_output_goes() {
        for stamp in [
            "[2026-12-08T00:53:48Z]",
            "2026-12-08 00:53:48.120+01:00",
            "(00:53:48)",
            "[00:53:48,5]",
            "2026-12-08T00:53:48 UTC",
            "  [2026-12-08T00:53:48+0100]  ",
        ] {
            let text = format!("{stamp}\nFAILED tests/t.py");
            assert_eq!(
                plain(&text).as_deref(),
                Some("FAILED tests/t.py"),
                "{stamp}"
            );
        }
        // Over an empty output, a bracketed stamp is all the host wrote.
        assert_eq!(plain("[2026-12-08T00:53:48Z]\n").as_deref(), Some(""));
        assert_eq!(plain("(00:53:48)").as_deref(), Some(""));
        // Alone and bare, it is the answer (`date -Is`); a date or a sentence is no stamp.
        for kept in [
            "2026-12-08T00:53:48Z\n",
            "2026-12-08T00:53:48Z",
            "2026-12-08\nok",
            "[12:30]\nok",
            "Started at 00:53:48\nok",
            "00:53:48 INFO ready\nok",
            "[00:53:48 INFO]\nok",
        ] {
            assert_eq!(plain(kept), None, "{kept:?}");
        }
    }

    #[test]
    fn a_gutter_goes_when_its_numbers_follow_each_other() {
        assert_eq!(
            plain("     7\ta\n     8\t\n     9\tb").as_deref(),
            Some("a\n\nb")
        );
        assert_eq!(plain("     1→only line").as_deref(), Some("only line"));
        for kept in [
            "1\tAlice\n3\tBob",
            "12\tsrc\n13\t",
            "1\tone",
            "src/a.rs:1:fn a()\nsrc/a.rs:2:fn b()",
            "     1  spaces are no separator\n     2  x",
        ] {
            let got = plain(kept);
            if kept == "12\tsrc\n13\t" {
                // Two numbered lines in a row are a gutter, even with nothing after the tab.
                assert_eq!(got.as_deref(), Some("src\n"));
            } else {
                assert_eq!(got, None, "{kept:?}");
            }
        }
    }

    #[test]
    fn the_wrappings_come_off_together() {
        let codex = serde_json::json!({
            "output": "2026-12-08T00:53:48Z\n\x1b[33m     1\tdef f():\n     2\t    pass\n\x1b[0m",
            "metadata": {"exit_code": 0, "duration_seconds": 0.2}
        })
        .to_string();
        assert_eq!(
            plain(&codex).as_deref(),
            Some("Exit code: 0\nOutput:\ndef f():\n    pass\n")
        );
    }

    proptest! {
        /// Never panics, and whatever it returns is different from the input and no longer.
        #[test]
        fn plain_is_total_and_never_grows_text(s in "(\\PC|\x1b|\t|\n|\\[|→|[0-9 ]){0,80}") {
            if let Some(p) = plain(&s) {
                prop_assert_ne!(&p, &s);
                prop_assert!(p.len() <= s.len());
            }
        }

        /// Plain text is its own plain text once its escapes are gone.
        #[test]
        fn text_without_wrapping_is_left_alone(s in "[a-z .:/_\n]{0,60}") {
            prop_assert_eq!(plain(&s), None);
        }
    }
}
