//! # loopguard-bindings
//!
//! What the Python (`bindings/python`) and Node (`bindings/node`) packages share, so that both
//! speak exactly like the sidecar (`loopguard serve --stdio`):
//!
//! - [`config`] turns a preset name, TOML text or a TOML file into a [`Config`], and [`build`]
//!   a [`Guard`] from it;
//! - [`events_from_object`] reads an event object shaped like a sidecar input line (`type`
//!   plus that type's fields; a `session` key is accepted and ignored) into the events it
//!   stands for, and [`observe_object`] feeds them to a guard;
//! - [`snapshot`] and [`restore`] carry a guard's state as bytes: the JSON text of
//!   [`Guard::snapshot`], the same object the sidecar's `snapshot` command answers with, so a
//!   state saved by one can be restored by the other.
//!
//! ```
//! use loopguard_bindings::{build, config, observe_object, Source};
//! use serde_json::json;
//!
//! let mut guard = build(config(Source::Preset("default"))?)?;
//! let line = json!({"type": "tool_call", "id": "c1", "tool": "read", "args": {"path": "a.rs"}});
//! let Some(obj) = line.as_object() else { unreachable!() };
//! let v = observe_object(&mut guard, obj.clone())?;
//! assert_eq!(v.action().as_str(), "continue");
//! # Ok::<(), loopguard_bindings::BindingError>(())
//! ```
#![warn(missing_docs)]

use loopguard::orchestrator;
use loopguard_core::{ConfigError, StateError};
use serde_json::{Map, Value};
use std::path::Path;

pub use loopguard::orchestrator::{Action, Delivery, Guard, Verdict, PRESETS};
pub use loopguard_core::{Config, Finding, Level, Origin, OwnedEvent, Stream};
pub use loopguard_sidecar::observe_all;

/// Why a binding call failed. The message says what and where; the packages raise it as
/// their language's exception with this text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BindingError {
    /// The configuration (preset name, TOML text or file) does not build a guard.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An event object cannot be used (not an object, no `type`, a missing or mistyped field,
    /// an unknown type).
    #[error("{0}")]
    Event(String),
    /// A snapshot cannot be restored (not JSON, another version, state beyond its bounds).
    #[error("cannot restore the snapshot: {0}")]
    Restore(String),
    /// The guard's state cannot be saved.
    #[error("cannot snapshot the guard: {0}")]
    Snapshot(StateError),
}

/// Where a guard's configuration comes from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A preset name (`default`, `pi-loop-guard`, `pi-repetition-guard`, `openclaw`).
    Preset(&'a str),
    /// TOML text (resolved over the preset it names, `default` when none).
    Toml(&'a str),
    /// A TOML file.
    File(&'a Path),
}

/// The configuration `source` stands for. An unknown preset name or bad TOML fails here.
pub fn config(source: Source<'_>) -> Result<Config, BindingError> {
    Ok(match source {
        Source::Preset(name) => {
            // Checked here so that an unknown name fails with the list of presets.
            orchestrator::preset(name)?;
            Config {
                preset: Some(name.to_owned()),
                ..Config::default()
            }
        }
        Source::Toml(text) => Config::from_toml_str(text, None)?,
        Source::File(path) => Config::from_file(path)?,
    })
}

/// A guard for `config`.
pub fn build(config: Config) -> Result<Guard, BindingError> {
    Ok(Guard::builder().config(config).build()?)
}

/// The events one sidecar-shaped object stands for, read as the sidecar reads its lines
/// ([`loopguard_sidecar::events_of_object`]): one event for every type but `assistant`,
/// which is a whole message; `control` objects are the guard's own methods here.
pub fn events_from_object(mut obj: Map<String, Value>) -> Result<Vec<OwnedEvent>, BindingError> {
    // A sidecar line can be passed as it is: its session id means nothing to one guard.
    obj.remove("session");
    let ty = match obj.remove("type") {
        Some(Value::String(s)) => s,
        Some(_) => return Err(event_error("field `type` must be a string")),
        None => return Err(event_error("missing field `type`")),
    };
    match ty.as_str() {
        "control" => Err(event_error(
            "`control` objects are sidecar commands: use the guard's own methods \
             (enabled, snapshot, restore)",
        )),
        _ => loopguard_sidecar::events_of_object(&ty, obj, "event").map_err(|m| event_error(&m)),
    }
}

/// Observes the events of one sidecar-shaped object; for an `assistant` object the answer is
/// the strongest verdict of its events, carrying the findings of all (as the sidecar answers).
pub fn observe_object(guard: &mut Guard, obj: Map<String, Value>) -> Result<Verdict, BindingError> {
    let events = events_from_object(obj)?;
    Ok(match events.as_slice() {
        [one] => guard.observe(&one.as_event()),
        many => loopguard_sidecar::observe_all(guard, many),
    })
}

/// The guard's whole state as bytes (JSON text).
pub fn snapshot(guard: &Guard) -> Result<Vec<u8>, BindingError> {
    let state = guard.snapshot().map_err(BindingError::Snapshot)?;
    serde_json::to_vec(&state).map_err(|e| BindingError::Restore(e.to_string()))
}

/// A guard for `config` carrying the state in `bytes` (from [`snapshot`], or the `state` of
/// the sidecar's `snapshot` answer). The configuration must be the one the state was taken
/// with.
pub fn restore(config: Config, bytes: &[u8]) -> Result<Guard, BindingError> {
    let state: Value = serde_json::from_slice(bytes)
        .map_err(|e| BindingError::Restore(format!("not a JSON snapshot: {e}")))?;
    let mut guard = build(config)?;
    guard
        .restore(&state)
        .map_err(|e| BindingError::Restore(e.to_string()))?;
    Ok(guard)
}

/// Parses a stream name: `text` or `thinking`.
pub fn stream(name: &str) -> Result<Stream, BindingError> {
    match name {
        "text" => Ok(Stream::Text),
        "thinking" => Ok(Stream::Thinking),
        other => Err(event_error(&format!(
            "unknown stream `{other}` (expected `text` or `thinking`)"
        ))),
    }
}

/// Parses an origin name: `unknown`, `human`, `harness` or `guard`.
pub fn origin(name: &str) -> Result<Origin, BindingError> {
    match name {
        "unknown" => Ok(Origin::Unknown),
        "human" => Ok(Origin::Human),
        "harness" => Ok(Origin::Harness),
        "guard" => Ok(Origin::Guard),
        other => Err(event_error(&format!(
            "unknown origin `{other}` (expected `unknown`, `human`, `harness` or `guard`)"
        ))),
    }
}

/// When a steer is to be delivered: `now` or `at_settle`.
pub fn delivery_name(d: Delivery) -> &'static str {
    match d {
        Delivery::Now => "now",
        Delivery::AtSettle => "at_settle",
    }
}

fn event_error(message: &str) -> BindingError {
    BindingError::Event(message.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn guard() -> Guard {
        build(config(Source::Preset("default")).unwrap()).unwrap()
    }

    #[test]
    fn sidecar_lines_map_to_the_events_they_name() {
        let events = events_from_object(obj(json!({
            "session": "s1", "type": "tool_call", "id": "c1", "tool": "read",
            "args": {"path": "a"}, "batch": 3
        })))
        .unwrap();
        assert_eq!(
            events,
            vec![OwnedEvent::ToolCall {
                id: "c1".into(),
                tool: "read".into(),
                args: json!({"path": "a"}),
                batch: Some(3)
            }]
        );
        // MCP's content blocks, as the sidecar reads them.
        let events = events_from_object(obj(json!({
            "type": "tool_result", "id": "c1",
            "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AAAA"}, "b"]
        })))
        .unwrap();
        assert_eq!(
            events,
            vec![OwnedEvent::ToolResult {
                id: "c1".into(),
                tool: String::new(),
                content: "a\nb".into(),
                is_error: false,
                images: 1,
                details: None
            }]
        );
        let events = events_from_object(obj(json!({"type": "agent_start"}))).unwrap();
        assert_eq!(events, vec![OwnedEvent::RunStart { run_id: None }]);
        let events = events_from_object(obj(json!({"type": "agent_end"}))).unwrap();
        assert_eq!(events, vec![OwnedEvent::RunEnd]);
        let events = events_from_object(obj(
            json!({"type": "assistant", "thinking": "hm", "text": ""}),
        ))
        .unwrap();
        assert_eq!(
            events,
            vec![
                OwnedEvent::MessageStart,
                OwnedEvent::TextDelta {
                    stream: Stream::Thinking,
                    delta: "hm".into()
                },
                OwnedEvent::MessageEnd
            ]
        );
    }

    #[test]
    fn unusable_objects_say_what_is_wrong() {
        let cases = [
            (json!({"text": "x"}), "missing field `type`"),
            (json!({"type": 3}), "field `type` must be a string"),
            (
                json!({"type": "tool_call", "id": "c"}),
                "`tool_call` event: missing field `tool`",
            ),
            (json!({"type": "teleport"}), "unknown variant `teleport`"),
            (
                json!({"type": "assistant", "text": 5}),
                "field `text` must be a string",
            ),
            (
                json!({"type": "control", "command": "reset"}),
                "sidecar commands",
            ),
        ];
        for (value, want) in cases {
            let msg = events_from_object(obj(value.clone()))
                .unwrap_err()
                .to_string();
            assert!(msg.contains(want), "{value}: {msg:?} lacks {want:?}");
        }
    }

    #[test]
    fn unknown_preset_and_bad_toml_fail_with_the_configuration_error() {
        let msg = config(Source::Preset("nope")).unwrap_err().to_string();
        assert!(msg.contains("nope"), "{msg}");
        let msg = config(Source::Toml("[guard\n")).unwrap_err().to_string();
        assert!(msg.contains("invalid syntax"), "{msg}");
        let msg = config(Source::File(Path::new("/nonexistent/loopguard.toml")))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("/nonexistent/loopguard.toml"), "{msg}");
    }

    #[test]
    fn snapshot_restores_into_an_equal_guard_and_bad_bytes_are_refused() {
        let mut g = guard();
        let call = obj(json!({"type": "tool_call", "id": "c", "tool": "read", "args": {"p": 1}}));
        let result = obj(json!({"type": "tool_result", "id": "c", "tool": "read", "content": "x"}));
        observe_object(&mut g, call.clone()).unwrap();
        observe_object(&mut g, result.clone()).unwrap();
        let bytes = snapshot(&g).unwrap();
        let mut back = restore(config(Source::Preset("default")).unwrap(), &bytes).unwrap();
        assert_eq!(back.seq(), g.seq());
        // Both continue identically from here on.
        for _ in 0..10 {
            let a = observe_object(&mut g, call.clone()).unwrap();
            let b = observe_object(&mut back, call.clone()).unwrap();
            assert_eq!(a, b);
            observe_object(&mut g, result.clone()).unwrap();
            observe_object(&mut back, result.clone()).unwrap();
        }
        let err = restore(config(Source::Preset("default")).unwrap(), b"{oops")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a JSON snapshot"), "{err}");
        let err = restore(
            config(Source::Preset("default")).unwrap(),
            br#"{"version":999}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("version 999"), "{err}");
    }

    #[test]
    fn assistant_object_answers_with_the_strongest_verdict_of_its_events() {
        let mut g = guard();
        let looped = "I will check the file again. ".repeat(60);
        let v = observe_object(&mut g, obj(json!({"type": "assistant", "text": looped}))).unwrap();
        assert_ne!(v.action(), Action::Continue, "{v:?}");
        assert_eq!(g.seq(), 3, "message start, one delta, message end");
    }
}
