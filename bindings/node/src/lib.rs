//! The native addon behind the `agent-loopguard` npm package. `index.js` loads it and adds
//! the `Action` constants; `index.d.ts` is its typed description.

use loopguard_bindings::{
    self as lb, BindingError, Finding, Guard as Inner, OwnedEvent, Source, Stream, Verdict as V,
    PRESETS,
};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use serde_json::Value;
use std::path::Path;

/// The `code` of the errors this addon throws, after the error class the message belongs to.
#[derive(Clone, Copy, Debug)]
pub struct ErrorCode(&'static str);

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.0
    }
}

type Result<T> = napi::Result<T, ErrorCode>;

fn js_err(e: BindingError) -> napi::Error<ErrorCode> {
    let code = match e {
        BindingError::Config(_) => "LOOPGUARD_CONFIG",
        BindingError::Event(_) => "LOOPGUARD_EVENT",
        BindingError::Restore(_) | BindingError::Snapshot(_) => "LOOPGUARD_STATE",
        _ => "LOOPGUARD_ERROR",
    };
    napi::Error::new(ErrorCode(code), e.to_string())
}

/// One finding behind a verdict.
#[napi(object)]
#[derive(Debug)]
pub struct JsFinding {
    /// The reporting detector's name (e.g. `generic-repeat`).
    pub detector: String,
    /// `warning`, `critical` or `fatal`.
    pub level: String,
    /// How many repetitions the detector counted.
    pub count: u32,
    /// A stable key identifying the loop.
    pub key: String,
    /// The text meant for the model.
    pub message: String,
    /// Sequence numbers of the events that form the loop, oldest first.
    pub evidence: Vec<i64>,
    /// A stable abort code, when the detector gives one.
    pub code: Option<String>,
    /// For text findings: the character offset where the detector fired.
    pub offset: Option<i64>,
    /// For text findings: a sample of the repeated text.
    pub sample: Option<String>,
    /// The tool involved, when there is one.
    pub tool: Option<String>,
}

fn finding(f: &Finding) -> JsFinding {
    JsFinding {
        detector: f.detector.to_owned(),
        level: f.level.as_str().to_owned(),
        count: f.count,
        key: f.key.clone(),
        message: f.message.clone(),
        evidence: f
            .evidence
            .iter()
            .map(|&s| i64::try_from(s).unwrap_or(i64::MAX))
            .collect(),
        code: f.code.clone(),
        offset: f.offset.map(|o| i64::try_from(o).unwrap_or(i64::MAX)),
        sample: f.sample.clone(),
        tool: f.tool.clone(),
    }
}

/// The guard's answer to one event.
#[napi(object)]
#[derive(Debug)]
pub struct JsVerdict {
    /// `continue`, `steer`, `compact`, `block` or `abort`.
    pub action: String,
    /// Steer text, block reason (the error the model sees) or abort message.
    pub message: Option<String>,
    /// `tool_loop:<detector>` for a block, `loop_aborted:<detector>` for an abort.
    pub code: Option<String>,
    /// For a block: also end the agent loop.
    pub terminate: bool,
    /// For a block: refuse every call of the current batch.
    pub whole_batch: bool,
    /// For a steer or a compaction: `now` or `at_settle`.
    pub deliver: String,
    /// The findings behind the verdict.
    pub findings: Vec<JsFinding>,
}

fn verdict(v: &V) -> JsVerdict {
    JsVerdict {
        action: v.action().as_str().to_owned(),
        message: v.message().map(str::to_owned),
        code: v.code().map(str::to_owned),
        terminate: v.terminate(),
        whole_batch: v.whole_batch(),
        deliver: lb::delivery_name(v.deliver()).to_owned(),
        findings: v.findings().iter().map(finding).collect(),
    }
}

/// Where `Guard.restore` takes the configuration from (at most one; preset `default` when
/// none).
#[napi(object)]
#[derive(Debug, Default)]
pub struct RestoreOptions {
    /// A preset name.
    pub preset: Option<String>,
    /// TOML text.
    pub config: Option<String>,
    /// A TOML file.
    pub config_file: Option<String>,
}

/// A loop guard for one agent session.
#[napi]
#[derive(Debug)]
pub struct Guard {
    inner: Inner,
}

fn build(source: Source<'_>) -> Result<Guard> {
    let config = lb::config(source).map_err(js_err)?;
    Ok(Guard {
        inner: lb::build(config).map_err(js_err)?,
    })
}

impl Guard {
    fn one(&mut self, event: OwnedEvent) -> JsVerdict {
        verdict(&self.inner.observe(&event.as_event()))
    }
}

#[napi]
impl Guard {
    /// A guard for preset `preset` (`default` when omitted).
    #[napi(constructor)]
    pub fn new(preset: Option<String>) -> Result<Guard> {
        build(Source::Preset(preset.as_deref().unwrap_or("default")))
    }

    /// A guard for a TOML configuration (resolved over the preset it names).
    #[napi(factory)]
    pub fn from_config(toml: String) -> Result<Guard> {
        build(Source::Toml(&toml))
    }

    /// A guard for a TOML configuration file.
    #[napi(factory)]
    pub fn from_config_file(path: String) -> Result<Guard> {
        build(Source::File(Path::new(&path)))
    }

    /// A guard carrying `state` (from `snapshot()`), built from the same configuration.
    #[napi(factory)]
    pub fn restore(state: Buffer, options: Option<RestoreOptions>) -> Result<Guard> {
        let o = options.unwrap_or_default();
        let source = match (&o.preset, &o.config, &o.config_file) {
            (Some(p), None, None) => Source::Preset(p),
            (None, Some(c), None) => Source::Toml(c),
            (None, None, Some(f)) => Source::File(Path::new(f)),
            (None, None, None) => Source::Preset("default"),
            _ => {
                return Err(napi::Error::new(
                    ErrorCode("LOOPGUARD_CONFIG"),
                    "restore: give at most one of `preset`, `config` and `configFile`",
                ))
            }
        };
        let config = lb::config(source).map_err(js_err)?;
        Ok(Guard {
            inner: lb::restore(config, &state).map_err(js_err)?,
        })
    }

    /// Observes one event given as an object shaped like a sidecar line
    /// (`{type: "tool_call", id, tool, args}`).
    #[napi]
    pub fn observe(&mut self, event: Value) -> Result<JsVerdict> {
        let Value::Object(obj) = event else {
            return Err(napi::Error::new(
                ErrorCode("LOOPGUARD_EVENT"),
                "an event must be an object with a `type`",
            ));
        };
        let v = lb::observe_object(&mut self.inner, obj).map_err(js_err)?;
        Ok(verdict(&v))
    }

    /// `observe` with the event as JSON text. `index.js` routes `observe` here through
    /// `JSON.stringify`: one string crossing into Rust costs less than walking a JS object.
    #[napi]
    pub fn observe_json(&mut self, line: String) -> Result<JsVerdict> {
        let value: Value = serde_json::from_str(&line).map_err(|e| {
            napi::Error::new(
                ErrorCode("LOOPGUARD_EVENT"),
                format!("an event must be JSON: {e}"),
            )
        })?;
        self.observe(value)
    }

    /// The model asks to run `tool` with `args`: call it before the tool runs.
    #[napi]
    pub fn tool_call(
        &mut self,
        id: String,
        tool: String,
        args: Option<Value>,
        batch: Option<u32>,
    ) -> JsVerdict {
        self.one(OwnedEvent::ToolCall {
            id,
            tool,
            args: args.unwrap_or(Value::Null),
            batch: batch.map(u64::from),
        })
    }

    /// A tool's result: call it after the tool ran.
    #[napi]
    pub fn tool_result(
        &mut self,
        id: String,
        tool: String,
        content: Option<String>,
        is_error: Option<bool>,
        images: Option<u32>,
        details: Option<Value>,
    ) -> JsVerdict {
        self.one(OwnedEvent::ToolResult {
            id,
            tool,
            content: content.unwrap_or_default(),
            is_error: is_error.unwrap_or(false),
            images: images.unwrap_or(0),
            details,
        })
    }

    /// A user message; `origin` is `unknown` (default), `human`, `harness` or `guard`.
    #[napi]
    pub fn user(&mut self, text: String, origin: Option<String>) -> Result<JsVerdict> {
        let origin = lb::origin(origin.as_deref().unwrap_or("unknown")).map_err(js_err)?;
        Ok(self.one(OwnedEvent::User { text, origin }))
    }

    /// A piece of streamed assistant output; `stream` is `text` (default) or `thinking`.
    #[napi]
    pub fn text_delta(&mut self, delta: String, stream: Option<String>) -> Result<JsVerdict> {
        let stream = lb::stream(stream.as_deref().unwrap_or("text")).map_err(js_err)?;
        Ok(self.one(OwnedEvent::TextDelta { stream, delta }))
    }

    /// An assistant message starts streaming.
    #[napi]
    pub fn message_start(&mut self) -> JsVerdict {
        self.one(OwnedEvent::MessageStart)
    }

    /// The assistant message ended.
    #[napi]
    pub fn message_end(&mut self) -> JsVerdict {
        self.one(OwnedEvent::MessageEnd)
    }

    /// A whole assistant message at once (start, thinking, text, end): the strongest verdict.
    #[napi]
    pub fn assistant(&mut self, text: Option<String>, thinking: Option<String>) -> JsVerdict {
        let mut events = vec![OwnedEvent::MessageStart];
        for (s, stream) in [(thinking, Stream::Thinking), (text, Stream::Text)] {
            if let Some(delta) = s.filter(|d| !d.is_empty()) {
                events.push(OwnedEvent::TextDelta { stream, delta });
            }
        }
        events.push(OwnedEvent::MessageEnd);
        verdict(&lb::observe_all(&mut self.inner, &events))
    }

    /// A run (one prompt's agent loop) starts.
    #[napi]
    pub fn run_start(&mut self, run_id: Option<String>) -> JsVerdict {
        self.one(OwnedEvent::RunStart { run_id })
    }

    /// The run ended.
    #[napi]
    pub fn run_end(&mut self) -> JsVerdict {
        self.one(OwnedEvent::RunEnd)
    }

    /// The host compacted the context.
    #[napi]
    pub fn compaction(&mut self) -> JsVerdict {
        self.one(OwnedEvent::Compaction)
    }

    /// A session starts (or is resumed) under `id`.
    #[napi]
    pub fn session_start(&mut self, id: String) -> JsVerdict {
        self.one(OwnedEvent::SessionStart { id })
    }

    /// The whole state (JSON text; the sidecar's `snapshot` state).
    #[napi]
    pub fn snapshot(&self) -> Result<Buffer> {
        Ok(lb::snapshot(&self.inner).map_err(js_err)?.into())
    }

    /// The names of the detectors this guard runs.
    #[napi]
    pub fn detectors(&self) -> Vec<String> {
        self.inner
            .detector_names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Whether the guard is on (off: every event continues).
    #[napi(getter)]
    pub fn enabled(&self) -> bool {
        self.inner.is_enabled()
    }

    /// Turns the guard on or off.
    #[napi(setter, js_name = "enabled")]
    pub fn set_enabled(&mut self, on: bool) {
        self.inner.set_enabled(on);
    }

    /// Number of events observed so far.
    #[napi(getter)]
    pub fn seq(&self) -> i64 {
        i64::try_from(self.inner.seq()).unwrap_or(i64::MAX)
    }

    /// Runs a person's `/runaway on|off|toggle` command: the new state, or null when `line`
    /// is not such a command.
    #[napi]
    pub fn command(&mut self, line: String) -> Option<bool> {
        self.inner.command(&line)
    }
}

/// The preset names.
#[napi]
pub fn presets() -> Vec<String> {
    PRESETS.iter().map(|s| (*s).to_owned()).collect()
}
