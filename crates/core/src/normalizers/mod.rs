//! loopguard's built-in result normalisers (exec-like results, process polls, message sends,
//! and a generic pass over JSON results and shell noise).
//!
//! OpenClaw's outcome rules are the floor (seed-systems §3.2):
//! - `exec` with structured details hashes by status: `running` → {status, tail};
//!   `completed`/`failed` → {status, exitCode, timedOut, output}; `approval-pending` /
//!   `approval-unavailable` → {status, reason, host, command, warningText}. Duration, pid,
//!   cwd and session ids are simply not hashed.
//! - `process` with action `poll` → {action, status, exitCode, exitSignal, aggregated, text};
//!   action `log` → {action, status, totalLines, totalChars, truncated, exitCode, exitSignal,
//!   text}.
//! - Outbound sends (`sessions_send`; `message` with a send-like action; provider send tools
//!   such as `telegram`) hash only their details with volatile keys removed (message, file
//!   and poll ids, receipts, run ids, idempotency keys, timestamps; a bare `id` of a message
//!   delivery object).
//! - Everything else hashes {details, text}.
//!
//! Which tool gets which rule, which calls of a send tool are sends, and the volatile keys are
//! the tools table's business ([`crate::tools`]); this module holds the rules themselves.
//!
//! On top of that, every text these rules read (result text, exec output and tail, poll output,
//! strings inside JSON) goes through the generic text pass (module `text`), and JSON results
//! and details go through the generic JSON pass (module `json`). The error flag and the image
//! count are part of every fingerprint. A configuration can give every tool the table does not
//! name another rule (`[tools."*"]`): the `openclaw` preset compares those results exactly, as
//! OpenClaw's generic rule does.

mod json;
pub(crate) mod text;

use crate::fingerprint::{args_fingerprint, CanonicalHasher, Fingerprint, ResultHasher};
use crate::normalize::{Normalizer, Normalizers, ResultInput};
use crate::tools::{Condition, SEND_VOLATILE};
use json::squash;
use serde_json::{json, Map, Value};

/// The built-in set: the normalisers of the built-in tools table
/// ([`crate::tools::BUILTIN`]), the generic rule for every other tool.
pub(crate) fn builtin() -> Normalizers {
    crate::tools::Tools::builtin().normalizers()
}

/// Hashes one normalised shape with the rule's name, the error flag and the image count.
fn finish(rule: &str, shape: &Value, input: &ResultInput<'_>) -> Fingerprint {
    finish_fp(rule, &args_fingerprint(shape), input)
}

/// [`finish`] with the shape's fingerprint already computed.
fn finish_fp(rule: &str, shape: &Fingerprint, input: &ResultInput<'_>) -> Fingerprint {
    let mut h = ResultHasher::new();
    h.text(rule);
    h.text(if input.is_error { "error" } else { "ok" });
    h.text(shape.hex_into(&mut [0; 64]));
    h.images(input.images);
    h.finish()
}

/// The generic rule for a result over [`STREAMED_RESULT_BYTES`]: the text pass applied line by
/// line straight into the hash (no JSON detection, no copy of the text), so a result of any
/// size is fingerprinted in bounded memory. Equal long results still get equal fingerprints.
fn streamed(input: &ResultInput<'_>, extra: &[String]) -> Fingerprint {
    let mut h = ResultHasher::new();
    h.text("generic-streamed");
    h.text(if input.is_error { "error" } else { "ok" });
    let details = input
        .details
        .map(|d| generic_value(d, extra))
        .unwrap_or(Value::Null);
    h.text(&args_fingerprint(&details).to_hex());
    h.begin_part();
    let mut line = String::new();
    for mut part in crate::swar::lines_inclusive(input.content.trim()) {
        // A line of many megabytes (inline base64) is taken in pieces, so the buffer stays
        // small.
        while !part.is_empty() {
            let mut cut = part.len().min(STREAM_PIECE);
            while !part.is_char_boundary(cut) {
                cut -= 1;
            }
            let (piece, rest) = part.split_at(cut);
            line.clear();
            text::normalize_line_into(piece, &mut line);
            h.chunk(line.as_bytes());
            part = rest;
        }
    }
    h.images(input.images);
    h.finish()
}

fn normalized_text(content: &str) -> Value {
    Value::String(text::normalize_text(content.trim()))
}

fn str_field<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a str> {
    v.and_then(|v| crate::shape::field(v, key))
        .and_then(Value::as_str)
}

fn field(details: Option<&Value>, key: &str) -> Value {
    details
        .and_then(|d| crate::shape::field(d, key))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The generic rule: {details, text}, both through the generic passes. A text that is a JSON
/// object or array is normalised as JSON.
#[derive(Clone, Copy, Debug, Default)]
pub struct Generic;

impl Generic {
    /// The shape the rule hashes, as a tree ([`Normalizer::fingerprint`] hashes it without
    /// building it).
    #[cfg(test)]
    fn shape(input: &ResultInput<'_>, extra: &[String]) -> Value {
        let details = input
            .details
            .map(|d| generic_value(d, extra))
            .unwrap_or(Value::Null);
        let text = match json::parse_json_text(input.content) {
            Some(v) => json!({ "json": generic_value(&v, extra) }),
            None => normalized_text(input.content),
        };
        json!({ "details": details, "text": text })
    }

    fn fingerprint_ignoring(input: &ResultInput<'_>, extra: &[String]) -> Fingerprint {
        if input.content.len() > STREAMED_RESULT_BYTES {
            return streamed(input, extra);
        }
        let details = input
            .details
            .map(|d| generic_value(d, extra))
            .unwrap_or(Value::Null);
        let shape = match json::parse_json_text(input.content) {
            Some(v) => args_fingerprint(&json!({
                "details": details,
                "text": { "json": generic_value(&v, extra) },
            })),
            // The canonical JSON of `{details, text}` hashed as it is written (no tree).
            None => {
                let mut h = CanonicalHasher::new();
                h.raw("{\"details\":");
                h.value(&details);
                h.raw(",\"text\":");
                let owned;
                let text = match input.text_pass {
                    Some(pass) => pass.of(input.content),
                    None => {
                        owned = text::normalize_text(input.content.trim());
                        owned.as_str()
                    }
                };
                h.string(text);
                h.raw("}");
                h.finish()
            }
        };
        finish_fp("generic", &shape, input)
    }
}

/// The generic JSON pass, also dropping the `extra` keys (squashed: lower case, no `-`/`_`).
fn generic_value(v: &Value, extra: &[String]) -> Value {
    if extra.is_empty() {
        return json::normalize_value(v);
    }
    // `extra` is sorted and deduplicated ([`squashed`]); the key is squashed once for both lists.
    json::normalize_with(v, 0, &|k, _| {
        if k.len() > MAX_VOLATILE_KEY {
            return false;
        }
        let s = squash(k);
        (k.len() <= 32 && json::is_volatile_squashed(&s)) || extra.binary_search(&s).is_ok()
    })
}

/// Longer keys are never volatile (they are not squashed and compared).
pub const MAX_VOLATILE_KEY: usize = 64;

/// The generic rule with more volatile keys: a tools-table entry's `volatile` list.
#[derive(Clone, Debug, Default)]
pub struct GenericIgnoring {
    keys: Vec<String>,
}

impl GenericIgnoring {
    /// The generic rule that also drops `keys` (compared case-insensitively, `-` and `_`
    /// ignored) wherever they appear in the details or a JSON result.
    pub fn new(keys: &[String]) -> GenericIgnoring {
        GenericIgnoring {
            keys: squashed(keys),
        }
    }
}

impl Normalizer for GenericIgnoring {
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        Generic::fingerprint_ignoring(input, &self.keys)
    }

    fn uses_args(&self) -> bool {
        false
    }
}

fn squashed(keys: &[String]) -> Vec<String> {
    let mut v: Vec<String> = keys.iter().map(|k| squash(k)).collect();
    v.sort();
    v.dedup();
    v
}

/// Results longer than this are fingerprinted in one streaming pass (see [`Generic`]).
pub const STREAMED_RESULT_BYTES: usize = 16 * 1024 * 1024;
const STREAM_PIECE: usize = 64 * 1024;

impl Normalizer for Generic {
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        Generic::fingerprint_ignoring(input, &[])
    }

    fn uses_args(&self) -> bool {
        false
    }
}

/// OpenClaw's `exec` rule, by `details.status`; the generic rule without a known status.
/// Its texts (the tail, the output) go through the text pass, unless it is
/// [`Exec::exact`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Exec {
    exact: bool,
}

impl Exec {
    /// The rule as OpenClaw hashes it (the `openclaw` preset): its texts as they are, and the
    /// exact result without a known status (a clock in the output makes it new).
    pub fn exact(mut self) -> Exec {
        self.exact = true;
        self
    }
}

impl Normalizer for Exec {
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        exec_fingerprint(input, self.exact)
    }

    fn uses_args(&self) -> bool {
        false
    }
}

/// A text of a rule's hashed object: through the text pass, or as it is (`exact`).
fn rule_text(s: &str, exact: bool) -> Value {
    if exact {
        Value::String(s.to_owned())
    } else {
        Value::String(text::normalize_text(s))
    }
}

/// What a rule hashes where it has no case of its own: the generic rule, or the exact
/// result (`exact`, OpenClaw's hashing of {details, text}).
fn no_case(input: &ResultInput<'_>, exact: bool) -> Fingerprint {
    if exact {
        crate::normalize::Exact.fingerprint(input)
    } else {
        Generic.fingerprint(input)
    }
}

fn exec_fingerprint(input: &ResultInput<'_>, exact: bool) -> Fingerprint {
    let d = input.details.filter(|d| d.is_object());
    let shape = match str_field(d, "status") {
        Some(status @ "running") => {
            let tail = str_field(d, "tail").unwrap_or("");
            json!({ "status": status, "tail": rule_text(tail, exact) })
        }
        Some(status @ ("completed" | "failed")) => {
            let exit_code = match d.and_then(|d| d.get("exitCode")) {
                Some(n @ Value::Number(_)) => n.clone(),
                _ => Value::Null,
            };
            let timed_out = d
                .and_then(|d| d.get("timedOut"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let output = match str_field(d, "aggregated") {
                Some(a) if !a.is_empty() => a,
                _ => input.content.trim(),
            };
            json!({
                "status": status,
                "exitCode": exit_code,
                "timedOut": timed_out,
                "output": rule_text(output, exact),
            })
        }
        Some(status @ ("approval-pending" | "approval-unavailable")) => json!({
            "status": status,
            "reason": field(d, "reason"),
            "host": field(d, "host"),
            "command": field(d, "command"),
            "warningText": field(d, "warningText"),
        }),
        _ => return no_case(input, exact),
    };
    finish("exec", &shape, input)
}

/// OpenClaw's `process` rule for actions `poll` and `log`; the generic rule otherwise. Its
/// texts go through the text pass, unless it is [`Process::exact`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Process {
    exact: bool,
}

impl Process {
    /// The rule as OpenClaw hashes it (the `openclaw` preset): its texts as they are, and
    /// the exact result for other actions.
    pub fn exact(mut self) -> Process {
        self.exact = true;
        self
    }
}

impl Normalizer for Process {
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        process_fingerprint(input, self.exact)
    }
}

fn process_fingerprint(input: &ResultInput<'_>, exact: bool) -> Fingerprint {
    let d = input.details.filter(|d| d.is_object());
    let aggregated = match d.and_then(|d| crate::shape::field(d, "aggregated")) {
        Some(Value::String(s)) => rule_text(s, exact),
        Some(other) if exact => other.clone(),
        Some(other) => json::normalize_value(other),
        None => Value::Null,
    };
    let text = if exact {
        Value::String(input.content.to_owned())
    } else {
        normalized_text(input.content)
    };
    let shape = match str_field(input.args, "action") {
        Some(action @ "poll") => json!({
            "action": action,
            "status": field(d, "status"),
            "exitCode": field(d, "exitCode"),
            "exitSignal": field(d, "exitSignal"),
            "aggregated": aggregated,
            "text": text,
        }),
        Some(action @ "log") => json!({
            "action": action,
            "status": field(d, "status"),
            "totalLines": field(d, "totalLines"),
            "totalChars": field(d, "totalChars"),
            "truncated": field(d, "truncated"),
            "exitCode": field(d, "exitCode"),
            "exitSignal": field(d, "exitSignal"),
            "text": text,
        }),
        _ => return no_case(input, exact),
    };
    finish("process", &shape, input)
}

/// OpenClaw's outbound-send rule: only the details, volatile ids removed, text ignored.
/// Without details, a JSON text gets the same treatment; a plain text gets the generic rule.
/// Calls that are not sends (the tools-table entry's condition) get the generic rule.
#[derive(Clone, Debug)]
pub struct SendResult {
    when: Option<Condition>,
    volatile: Vec<String>,
    /// OpenClaw's hashing to the letter ([`SendResult::exact`]).
    exact: bool,
}

impl Default for SendResult {
    /// Every call is a send; the built-in volatile keys.
    fn default() -> Self {
        SendResult {
            when: None,
            volatile: SEND_VOLATILE.iter().map(|k| squash(k)).collect(),
            exact: false,
        }
    }
}

impl SendResult {
    /// The send rule for the calls that meet `when` (every call: `None`), dropping the
    /// `volatile` keys (compared case-insensitively, `-` and `_` ignored).
    pub fn new(when: Option<Condition>, volatile: &[String]) -> SendResult {
        SendResult {
            when,
            volatile: squashed(volatile),
            exact: false,
        }
    }

    /// The rule as OpenClaw hashes it (the `openclaw` preset): a send is its details alone
    /// (none: `null`; the text is never read, even when it is JSON), and a call that is not a
    /// send is its exact result.
    pub fn exact(mut self) -> SendResult {
        self.exact = true;
        self
    }

    fn is_send(&self, input: &ResultInput<'_>) -> bool {
        self.when.as_ref().is_none_or(|c| c.matches(input.args))
    }
}

/// A message delivery object: a string `id`, a string `text`, and a direction, sender,
/// account or conversation.
fn is_delivery_object(map: &Map<String, Value>) -> bool {
    map.get("id").is_some_and(Value::is_string)
        && map.get("text").is_some_and(Value::is_string)
        && ["direction", "senderId", "accountId", "conversation"]
            .iter()
            .any(|k| map.contains_key(*k))
}

fn strip_send(v: &Value, depth: usize, keys: &[String]) -> Value {
    if depth >= json::MAX_DEPTH {
        return Value::String(args_fingerprint(v).to_hex());
    }
    match v {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| strip_send(x, depth + 1, keys))
                .collect(),
        ),
        Value::Object(map) => {
            let delivery = is_delivery_object(map);
            let mut out = Map::new();
            for (k, x) in map {
                let volatile = k.len() <= MAX_VOLATILE_KEY && keys.contains(&squash(k));
                if volatile || json::is_volatile_key(k) || (delivery && k == "id") {
                    continue;
                }
                out.insert(k.clone(), strip_send(x, depth + 1, keys));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

impl Normalizer for SendResult {
    fn fingerprint(&self, input: &ResultInput<'_>) -> Fingerprint {
        if !self.is_send(input) {
            return no_case(input, self.exact);
        }
        let shape = match input.details {
            Some(d) => json!({ "details": strip_send(d, 0, &self.volatile) }),
            None if self.exact => json!({ "details": Value::Null }),
            None => match json::parse_json_text(input.content) {
                Some(v) => json!({ "json": strip_send(&v, 0, &self.volatile) }),
                None => return Generic.fingerprint(input),
            },
        };
        finish("send", &shape, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::TextPass;
    use serde_json::json;
    use std::sync::Arc;

    fn input<'a>(
        tool: &'a str,
        args: Option<&'a Value>,
        content: &'a str,
        details: Option<&'a Value>,
    ) -> ResultInput<'a> {
        ResultInput {
            tool,
            args,
            content,
            is_error: false,
            images: 0,
            details,
            text_pass: None,
        }
    }

    fn fp(tool: &str, args: &Value, content: &str, details: Option<&Value>) -> Fingerprint {
        builtin().fingerprint(&input(tool, Some(args), content, details))
    }

    #[test]
    fn b16_exec_completed_ignores_duration_pid_and_cwd() {
        let args = json!({"command": "make"});
        let a = json!({"status": "completed", "exitCode": 2, "durationMs": 120, "cwd": "/a", "pid": 11, "aggregated": "error: x"});
        let b = json!({"status": "completed", "exitCode": 2, "durationMs": 999, "cwd": "/b", "pid": 42, "aggregated": "error: x"});
        assert_eq!(
            fp("exec", &args, "took 120ms", Some(&a)),
            fp("exec", &args, "took 999ms", Some(&b))
        );
        let c = json!({"status": "completed", "exitCode": 2, "aggregated": "error: y"});
        assert_ne!(
            fp("exec", &args, "", Some(&a)),
            fp("exec", &args, "", Some(&c))
        );
        let d = json!({"status": "completed", "exitCode": 0, "aggregated": "error: x"});
        assert_ne!(
            fp("exec", &args, "", Some(&a)),
            fp("exec", &args, "", Some(&d))
        );
        let e = json!({"status": "failed", "exitCode": 2, "aggregated": "error: x"});
        assert_ne!(
            fp("exec", &args, "", Some(&a)),
            fp("exec", &args, "", Some(&e))
        );
    }

    #[test]
    fn exec_completed_falls_back_to_text_when_aggregated_is_empty() {
        let args = json!({"command": "x"});
        let a = json!({"status": "failed", "exitCode": 1, "aggregated": ""});
        assert_eq!(
            fp("exec", &args, "attempt failed", Some(&a)),
            fp("exec", &args, "attempt failed\n", Some(&a))
        );
        assert_ne!(
            fp("exec", &args, "attempt 1 failed", Some(&a)),
            fp("exec", &args, "attempt 2 failed", Some(&a))
        );
    }

    #[test]
    fn b17_exec_running_hashes_status_and_tail_only() {
        let args = json!({"command": "npm run build"});
        let a =
            json!({"status": "running", "sessionId": "s-1", "pid": 100, "tail": "compiling..."});
        let b =
            json!({"status": "running", "sessionId": "s-2", "pid": 200, "tail": "compiling..."});
        assert_eq!(
            fp(
                "exec",
                &args,
                "Command still running (session s-1, pid 100)",
                Some(&a)
            ),
            fp(
                "exec",
                &args,
                "Command still running (session s-2, pid 200)",
                Some(&b)
            )
        );
        let c = json!({"status": "running", "tail": "linking..."});
        assert_ne!(
            fp("exec", &args, "", Some(&a)),
            fp("exec", &args, "", Some(&c))
        );
    }

    #[test]
    fn b18_exec_date_output_keeps_differing() {
        let args = json!({"command": "date"});
        let a = json!({"status": "completed", "exitCode": 0, "aggregated": "Mon Jan  1 12:00:01 UTC 2024"});
        let b = json!({"status": "completed", "exitCode": 0, "aggregated": "Mon Jan  1 12:00:02 UTC 2024"});
        assert_ne!(
            fp("exec", &args, "", Some(&a)),
            fp("exec", &args, "", Some(&b))
        );
    }

    #[test]
    fn exec_approval_hashes_the_approval_fields() {
        let args = json!({"command": "rm -rf x"});
        let a = json!({"status": "approval-pending", "reason": "r", "host": "h", "command": "rm -rf x", "requestedAt": 1});
        let b = json!({"status": "approval-pending", "reason": "r", "host": "h", "command": "rm -rf x", "requestedAt": 2});
        assert_eq!(
            fp("exec", &args, "", Some(&a)),
            fp("exec", &args, "", Some(&b))
        );
    }

    #[test]
    fn exec_without_status_uses_the_generic_rule() {
        let args = json!({"command": "ls"});
        assert_eq!(
            fp("exec", &args, "a\nb", None),
            fp("exec", &args, "a\nb", None)
        );
        assert_ne!(
            fp("exec", &args, "a\nb", None),
            fp("exec", &args, "a\nc", None)
        );
    }

    #[test]
    fn process_poll_hashes_openclaw_fields() {
        let args = json!({"action": "poll", "sessionId": "s"});
        let a = json!({"status": "running", "exitCode": null, "aggregated": "50%", "polledAt": 1, "durationMs": 5});
        let b = json!({"status": "running", "exitCode": null, "aggregated": "50%", "polledAt": 2, "durationMs": 9});
        assert_eq!(
            fp("process", &args, "still running", Some(&a)),
            fp("process", &args, "still running", Some(&b))
        );
        let c = json!({"status": "running", "aggregated": "60%"});
        assert_ne!(
            fp("process", &args, "still running", Some(&a)),
            fp("process", &args, "still running", Some(&c))
        );
        assert_ne!(
            fp("process", &args, "still running", Some(&a)),
            fp("process", &args, "done", Some(&a))
        );
    }

    #[test]
    fn process_log_hashes_openclaw_fields() {
        let args = json!({"action": "log", "sessionId": "s"});
        let a = json!({"status": "running", "totalLines": 10, "totalChars": 100, "truncated": false, "at": 1});
        let b = json!({"status": "running", "totalLines": 10, "totalChars": 100, "truncated": false, "at": 2});
        assert_eq!(
            fp("process", &args, "tail", Some(&a)),
            fp("process", &args, "tail", Some(&b))
        );
        let c =
            json!({"status": "running", "totalLines": 11, "totalChars": 110, "truncated": false});
        assert_ne!(
            fp("process", &args, "tail", Some(&a)),
            fp("process", &args, "tail", Some(&c))
        );
    }

    #[test]
    fn process_other_actions_hash_everything() {
        let args = json!({"action": "list"});
        let a = json!({"status": "ok", "polledAt": 1});
        let b = json!({"status": "ok", "polledAt": 2});
        assert_ne!(
            fp("process", &args, "", Some(&a)),
            fp("process", &args, "", Some(&b))
        );
    }

    #[test]
    fn b65_message_sends_ignore_volatile_ids() {
        let args = json!({"action": "send", "to": "chat-1", "text": "hi"});
        let a = json!({"ok": true, "messageId": "m1", "receipt": {"ts": 1}, "sentAt": "2026-01-01T00:00:00Z", "chatId": "chat-1"});
        let b = json!({"ok": true, "messageId": "m2", "receipt": {"ts": 2}, "sentAt": "2026-01-01T00:00:09Z", "chatId": "chat-1"});
        assert_eq!(
            fp("message", &args, "Sent message m1", Some(&a)),
            fp("message", &args, "Sent message m2", Some(&b))
        );
        // a different conversation id keeps differing
        let c = json!({"ok": true, "messageId": "m3", "chatId": "chat-2"});
        assert_ne!(
            fp("message", &args, "", Some(&a)),
            fp("message", &args, "", Some(&c))
        );
    }

    #[test]
    fn nested_broadcast_ids_and_bare_delivery_ids_are_stripped() {
        let args = json!({"action": "broadcast", "text": "hi"});
        let a = json!({"results": [{"messageId": "a", "platformMessageIds": ["x"], "route": "r1"}], "message": {"id": "p1", "text": "hi", "direction": "out"}});
        let b = json!({"results": [{"messageId": "b", "platformMessageIds": ["y"], "route": "r1"}], "message": {"id": "p2", "text": "hi", "direction": "out"}});
        assert_eq!(
            fp("message", &args, "", Some(&a)),
            fp("message", &args, "", Some(&b))
        );
        // stable route ids stay distinguishable
        let c = json!({"results": [{"messageId": "b", "route": "r2"}], "message": {"id": "p2", "text": "hi", "direction": "out"}});
        assert_ne!(
            fp("message", &args, "", Some(&a)),
            fp("message", &args, "", Some(&c))
        );
        // a bare id outside a delivery object is kept
        let d = json!({"item": {"id": "k1"}});
        let e = json!({"item": {"id": "k2"}});
        assert_ne!(
            fp("message", &args, "", Some(&d)),
            fp("message", &args, "", Some(&e))
        );
    }

    #[test]
    fn different_message_text_keeps_differing() {
        let args = json!({"action": "send"});
        let a = json!({"message": {"id": "p1", "text": "hello", "direction": "out"}});
        let b = json!({"message": {"id": "p2", "text": "bye", "direction": "out"}});
        assert_ne!(
            fp("message", &args, "", Some(&a)),
            fp("message", &args, "", Some(&b))
        );
    }

    #[test]
    fn sessions_send_and_provider_tools_strip_run_ids_and_file_ids() {
        let a = json!({"status": "delivered", "runId": "run-1"});
        let b = json!({"status": "delivered", "runId": "run-2"});
        let args = json!({"session": "x", "text": "t"});
        assert_eq!(
            fp("sessions_send", &args, "", Some(&a)),
            fp("sessions_send", &args, "", Some(&b))
        );
        let a = json!({"ok": true, "fileId": "f1", "pollId": "p1"});
        let b = json!({"ok": true, "fileId": "f2", "pollId": "p2"});
        assert_eq!(
            fp("telegram", &json!({"to": 1}), "", Some(&a)),
            fp("telegram", &json!({"to": 1}), "", Some(&b))
        );
        let up = json!({"action": "upload-file"});
        assert_eq!(
            fp("message", &up, "", Some(&a)),
            fp("message", &up, "", Some(&b))
        );
    }

    #[test]
    fn non_send_message_actions_keep_full_hashing() {
        let args = json!({"action": "read"});
        let a = json!({"messages": [{"messageId": "m1"}], "fetchedAt": 1});
        let b = json!({"messages": [{"messageId": "m2"}], "fetchedAt": 1});
        assert_ne!(
            fp("message", &args, "", Some(&a)),
            fp("message", &args, "", Some(&b))
        );
    }

    #[test]
    fn send_without_details_uses_json_text() {
        let args = json!({"action": "send"});
        assert_eq!(
            fp("message", &args, "{\"ok\":true,\"message_id\":1}", None),
            fp("message", &args, "{\"ok\":true,\"message_id\":2}", None)
        );
        assert_ne!(
            fp("message", &args, "sent 1", None),
            fp("message", &args, "sent 2", None)
        );
    }

    #[test]
    fn generic_json_results_ignore_timestamps_uuids_and_request_ids() {
        let args = json!({"q": 1});
        let a = "{\"error\": \"rate limited\", \"request_id\": \"abc1\", \"at\": \"2026-03-13T19:44:50Z\", \"trace\": \"5b1c2d3e-1111-4222-8333-944455556666\"}";
        let b = "{\"error\": \"rate limited\", \"request_id\": \"abc2\", \"at\": \"2026-03-13T19:44:59Z\", \"trace\": \"0b6fff8a-4d86-4dbd-b022-9e7a745a9eae\"}";
        assert_eq!(
            fp("web_fetch", &args, a, None),
            fp("web_fetch", &args, b, None)
        );
        let c = "{\"error\": \"not found\", \"request_id\": \"abc2\"}";
        assert_ne!(
            fp("web_fetch", &args, a, None),
            fp("web_fetch", &args, c, None)
        );
    }

    #[test]
    fn generic_details_are_normalised() {
        let args = json!({});
        let a = json!({"status": "ok", "timestamp": 1});
        let b = json!({"status": "ok", "timestamp": 2});
        assert_eq!(
            fp("tool", &args, "x", Some(&a)),
            fp("tool", &args, "x", Some(&b))
        );
        let c = json!({"status": "failed", "timestamp": 2});
        assert_ne!(
            fp("tool", &args, "x", Some(&a)),
            fp("tool", &args, "x", Some(&c))
        );
    }

    #[test]
    fn bash_line_counter_loops_hash_equal() {
        // sweagent-msb-dschat__fasterxml__jackson-core-174: only the counter changes.
        let args = json!({"command": "cd fastjson/"});
        assert_eq!(
            fp(
                "cd",
                &args,
                "/bin/bash: line 11301: cd: fastjson/: No such file or directory",
                None
            ),
            fp(
                "cd",
                &args,
                "/bin/bash: line 11316: cd: fastjson/: No such file or directory",
                None
            )
        );
    }

    #[test]
    fn wrapper_nonces_hash_equal() {
        let args = json!({"url": "https://x"});
        let a = "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"a1\">>>\n404\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"a1\">>>";
        let b = "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"b2\">>>\n404\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"b2\">>>";
        assert_eq!(fp("browser", &args, a, None), fp("browser", &args, b, None));
    }

    #[test]
    fn real_progress_still_differs() {
        let args = json!({"command": "ls"});
        assert_ne!(
            fp("bash", &args, "a.txt", None),
            fp("bash", &args, "a.txt\nb.txt", None)
        );
        assert_ne!(
            fp("bash", &args, "10 passed in 0.1s", None),
            fp("bash", &args, "11 passed in 0.1s", None)
        );
        assert_ne!(
            fp("read", &args, "1: foo\n2: bar", None),
            fp("read", &args, "1: foo\n2: baz", None)
        );
    }

    #[test]
    fn error_flag_and_images_are_part_of_the_fingerprint() {
        let n = builtin();
        let args = json!({});
        let ok = input("t", Some(&args), "x", None);
        let err = ResultInput {
            is_error: true,
            ..ok
        };
        let img = ResultInput { images: 1, ..ok };
        assert_ne!(n.fingerprint(&ok), n.fingerprint(&err));
        assert_ne!(n.fingerprint(&ok), n.fingerprint(&img));
    }

    #[test]
    fn generic_fingerprint_equals_the_hash_of_its_shape_tree() {
        let details = json!({"exitCode": 1, "at": "2026-03-13T19:44:50.935Z"});
        let texts = [
            "",
            "  plain text \"quoted\" \\ back\tslash\u{1}\n/bin/bash: line 12: x: not found\n",
            "Ran 3 tests in 0.012s\nh\u{e9} \u{1f600}",
            "{\"status\": \"ok\", \"requestId\": \"r-1\"}",
            "[1, 2",
        ];
        for content in texts {
            for d in [None, Some(&details)] {
                for (is_error, images) in [(false, 0), (true, 2)] {
                    let input = ResultInput {
                        tool: "read",
                        args: None,
                        content,
                        is_error,
                        images,
                        details: d,
                        text_pass: None,
                    };
                    let pass = TextPass::new();
                    let shared = ResultInput {
                        text_pass: Some(&pass),
                        ..input
                    };
                    assert_eq!(Generic.fingerprint(&shared), Generic.fingerprint(&input));
                    assert_eq!(
                        Generic.fingerprint(&input),
                        finish("generic", &Generic::shape(&input, &[]), &input),
                        "{content:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn hosts_can_override_a_tool() {
        #[derive(Debug)]
        struct Constant;
        impl Normalizer for Constant {
            fn fingerprint(&self, _: &ResultInput<'_>) -> Fingerprint {
                Fingerprint::default()
            }
        }
        let mut n = builtin();
        n.register("exec", Arc::new(Constant));
        let args = json!({});
        assert_eq!(
            n.fingerprint(&input("exec", Some(&args), "anything", None)),
            Fingerprint::default()
        );
    }
}
