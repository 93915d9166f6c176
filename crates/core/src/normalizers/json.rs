//! The generic pass over JSON values: drops volatile keys (timestamps, request and trace
//! ids, durations, pids) and runs the text pass over every string.

use super::text::normalize_text;
use crate::fingerprint::args_fingerprint;
use serde_json::{Map, Value};

/// Keys whose values change on every call without meaning progress (compared
/// case-insensitively, with `-` and `_` ignored).
const VOLATILE_KEYS: &[&str] = &[
    "requestid",
    "xrequestid",
    "traceid",
    "spanid",
    "correlationid",
    "timestamp",
    "ts",
    "createdat",
    "updatedat",
    "sentat",
    "deliveredat",
    "receivedat",
    "durationms",
    "elapsedms",
    "tookms",
    "pid",
];

/// Below this depth a value is replaced by its canonical fingerprint (computed without
/// recursion); bounds the walk for values built by a host rather than parsed.
pub(crate) const MAX_DEPTH: usize = 64;

pub(crate) fn squash(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `key` is one of the generic volatile keys.
pub(crate) fn is_volatile_key(key: &str) -> bool {
    key.len() <= 32 && is_volatile_squashed(&squash(key))
}

/// [`is_volatile_key`] of a key already squashed (and at most 32 bytes before squashing).
pub(crate) fn is_volatile_squashed(squashed: &str) -> bool {
    VOLATILE_KEYS.contains(&squashed)
}

/// The generic JSON pass.
pub(crate) fn normalize_value(v: &Value) -> Value {
    normalize_with(v, 0, &|k, _| is_volatile_key(k))
}

/// Walks `v`, dropping object entries for which `drop(key, object)` holds and running the
/// text pass over strings. Depth-bounded.
pub(crate) fn normalize_with(
    v: &Value,
    depth: usize,
    drop: &dyn Fn(&str, &Map<String, Value>) -> bool,
) -> Value {
    if depth >= MAX_DEPTH {
        return Value::String(args_fingerprint(v).to_hex());
    }
    match v {
        Value::String(s) => Value::String(normalize_text(s)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| normalize_with(x, depth + 1, drop))
                .collect(),
        ),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, x) in map {
                if !drop(k, map) {
                    out.insert(k.clone(), normalize_with(x, depth + 1, drop));
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Parses `content` as a JSON object or array (after trimming), if it is one.
pub(crate) fn parse_json_text(content: &str) -> Option<Value> {
    let t = content.trim();
    if !(t.starts_with('{') && t.ends_with('}') || t.starts_with('[') && t.ends_with(']')) {
        return None;
    }
    serde_json::from_str(t).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fp(v: &Value) -> String {
        args_fingerprint(&normalize_value(v)).to_hex()
    }

    #[test]
    fn volatile_keys_and_values_are_dropped() {
        let a = json!({"status": "ok", "requestId": "r-1", "timestamp": 1, "job": {"id": "5b1c2d3e-1111-4222-8333-944455556666", "created_at": "x"}});
        let b = json!({"status": "ok", "requestId": "r-2", "timestamp": 2, "job": {"id": "0b6fff8a-4d86-4dbd-b022-9e7a745a9eae", "created_at": "y"}});
        assert_eq!(fp(&a), fp(&b));
        let c = json!({"status": "failed", "requestId": "r-2", "timestamp": 2, "job": {"id": "0b6fff8a-4d86-4dbd-b022-9e7a745a9eae"}});
        assert_ne!(fp(&a), fp(&c));
    }

    #[test]
    fn iso_timestamps_inside_strings_are_masked() {
        let a = json!({"msg": "queued at 2026-03-13T19:44:50Z", "n": 3});
        let b = json!({"msg": "queued at 2026-03-13T19:45:50Z", "n": 3});
        assert_eq!(fp(&a), fp(&b));
        assert_ne!(
            fp(&a),
            fp(&json!({"msg": "queued at 2026-03-13T19:45:50Z", "n": 4}))
        );
    }

    #[test]
    fn deep_values_do_not_recurse_without_bound() {
        let mut v = json!(0);
        for _ in 0..(MAX_DEPTH * 4) {
            v = json!([v]);
        }
        let _ = normalize_value(&v);
    }

    #[test]
    fn only_objects_and_arrays_are_parsed() {
        assert!(parse_json_text("  {\"a\": 1}\n").is_some());
        assert!(parse_json_text("[1,2]").is_some());
        assert!(parse_json_text("42").is_none());
        assert!(parse_json_text("{not json}").is_none());
    }
}
