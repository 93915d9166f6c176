//! `agent_loopguard._native`: the Python extension module behind the `agent_loopguard`
//! package. The package re-exports everything here; `agent_loopguard/__init__.pyi` is its
//! typed description.

use loopguard_bindings::{
    self as lb, Action, BindingError, Finding, Guard, OwnedEvent, Source, Stream, Verdict, PRESETS,
};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

create_exception!(
    agent_loopguard,
    LoopguardError,
    PyException,
    "Base class of every error raised by agent_loopguard."
);
create_exception!(
    agent_loopguard,
    ConfigError,
    LoopguardError,
    "The preset name or TOML configuration does not build a guard."
);
create_exception!(
    agent_loopguard,
    EventError,
    LoopguardError,
    "An event cannot be used: not a JSON-like dict, no `type`, a missing or mistyped field."
);
create_exception!(
    agent_loopguard,
    StateError,
    LoopguardError,
    "A snapshot cannot be taken or restored."
);

/// Objects nested deeper than this in an event are refused (a cycle would never end).
const MAX_DEPTH: usize = 128;

fn py_err(e: BindingError) -> PyErr {
    let msg = e.to_string();
    match e {
        BindingError::Config(_) => ConfigError::new_err(msg),
        BindingError::Event(_) => EventError::new_err(msg),
        BindingError::Restore(_) | BindingError::Snapshot(_) => StateError::new_err(msg),
        _ => LoopguardError::new_err(msg),
    }
}

/// What the host should do.
#[pyclass(
    eq,
    eq_int,
    ord,
    hash,
    frozen,
    module = "agent_loopguard",
    name = "Action"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum PyAction {
    #[pyo3(name = "CONTINUE")]
    Continue,
    #[pyo3(name = "STEER")]
    Steer,
    #[pyo3(name = "COMPACT")]
    Compact,
    #[pyo3(name = "BLOCK")]
    Block,
    #[pyo3(name = "ABORT")]
    Abort,
}

impl From<Action> for PyAction {
    fn from(a: Action) -> PyAction {
        match a {
            Action::Continue => PyAction::Continue,
            Action::Steer => PyAction::Steer,
            Action::Compact => PyAction::Compact,
            Action::Block => PyAction::Block,
            Action::Abort => PyAction::Abort,
        }
    }
}

impl PyAction {
    fn as_str(self) -> &'static str {
        match self {
            PyAction::Continue => "continue",
            PyAction::Steer => "steer",
            PyAction::Compact => "compact",
            PyAction::Block => "block",
            PyAction::Abort => "abort",
        }
    }
}

#[pymethods]
impl PyAction {
    /// The lower-case name the sidecar uses (`"block"`).
    #[getter]
    fn value(&self) -> &'static str {
        self.as_str()
    }

    fn __str__(&self) -> &'static str {
        self.as_str()
    }
}

/// The guard's answer to one event.
#[pyclass(frozen, module = "agent_loopguard", name = "Verdict")]
#[derive(Debug)]
struct PyVerdict {
    action: PyAction,
    message: Option<String>,
    code: Option<String>,
    terminate: bool,
    whole_batch: bool,
    deliver: &'static str,
    findings: Vec<Finding>,
}

impl From<Verdict> for PyVerdict {
    fn from(v: Verdict) -> PyVerdict {
        PyVerdict {
            action: v.action().into(),
            message: v.message().map(str::to_owned),
            code: v.code().map(str::to_owned),
            terminate: v.terminate(),
            whole_batch: v.whole_batch(),
            deliver: lb::delivery_name(v.deliver()),
            findings: v.findings().to_vec(),
        }
    }
}

#[pymethods]
impl PyVerdict {
    /// What to do.
    #[getter]
    fn action(&self) -> PyAction {
        self.action
    }

    /// Steer text, block reason (the error the model sees) or abort message.
    #[getter]
    fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// `tool_loop:<detector>` for a block, `loop_aborted:<detector>` (or the finding's own)
    /// for an abort.
    #[getter]
    fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// For a block: also end the agent loop.
    #[getter]
    fn terminate(&self) -> bool {
        self.terminate
    }

    /// For a block: refuse every call of the current batch.
    #[getter]
    fn whole_batch(&self) -> bool {
        self.whole_batch
    }

    /// For a steer or a compaction: `"now"` (before the next model call) or `"at_settle"`.
    #[getter]
    fn deliver(&self) -> &'static str {
        self.deliver
    }

    /// The findings behind the verdict, as dicts (`detector`, `level`, `count`, `key`,
    /// `message`, `evidence`, `abort`, `code`, `offset`, `sample`, `tool`).
    #[getter]
    fn findings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for f in &self.findings {
            list.append(finding_dict(py, f)?)?;
        }
        Ok(list)
    }

    /// The verdict as the sidecar renders it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("action", self.action.as_str())?;
        d.set_item("message", self.message.as_deref())?;
        d.set_item("code", self.code.as_deref())?;
        d.set_item("terminate", self.terminate)?;
        d.set_item("whole_batch", self.whole_batch)?;
        d.set_item("deliver", self.deliver)?;
        d.set_item("findings", self.findings(py)?)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let mut s = format!(
            "Verdict(action=Action.{}",
            self.action.as_str().to_uppercase()
        );
        if let Some(code) = &self.code {
            s.push_str(&format!(", code={code:?}"));
        }
        if let Some(m) = &self.message {
            let short: String = m.chars().take(60).collect();
            s.push_str(&format!(", message={short:?}"));
        }
        s.push_str(&format!(", findings={})", self.findings.len()));
        s
    }
}

fn finding_dict<'py>(py: Python<'py>, f: &Finding) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(f).map_err(|e| LoopguardError::new_err(e.to_string()))?;
    to_py(py, &value)
}

/// A loop guard for one agent session.
#[pyclass(frozen, module = "agent_loopguard", name = "Guard")]
#[derive(Debug)]
struct PyGuard {
    // A mutex so that `observe` can run without the GIL (and two threads sharing a guard
    // take turns); only ever locked with the GIL released, so it cannot deadlock with it.
    inner: Mutex<Guard>,
}

impl PyGuard {
    fn new_from(source: Source<'_>) -> PyResult<PyGuard> {
        let config = lb::config(source).map_err(py_err)?;
        let guard = lb::build(config).map_err(py_err)?;
        Ok(PyGuard {
            inner: Mutex::new(guard),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Guard> {
        // A panic inside the guard is a bug that already surfaced as PanicException; its
        // state is still a valid guard.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn events(&self, py: Python<'_>, events: Vec<OwnedEvent>) -> PyVerdict {
        py.detach(|| {
            let mut g = self.lock();
            match events.as_slice() {
                [one] => g.observe(&one.as_event()),
                many => lb::observe_all(&mut g, many),
            }
        })
        .into()
    }

    fn one(&self, py: Python<'_>, event: OwnedEvent) -> PyVerdict {
        py.detach(|| self.lock().observe(&event.as_event())).into()
    }
}

#[pymethods]
impl PyGuard {
    /// A guard for preset `preset` (`default`, `pi-loop-guard`, `pi-repetition-guard`,
    /// `openclaw`).
    #[new]
    #[pyo3(signature = (preset = "default"))]
    fn py_new(preset: &str) -> PyResult<PyGuard> {
        PyGuard::new_from(Source::Preset(preset))
    }

    /// A guard for a TOML configuration (resolved over the preset it names).
    #[staticmethod]
    fn from_config(toml: &str) -> PyResult<PyGuard> {
        PyGuard::new_from(Source::Toml(toml))
    }

    /// A guard for a TOML configuration file.
    #[staticmethod]
    fn from_config_file(path: PathBuf) -> PyResult<PyGuard> {
        PyGuard::new_from(Source::File(&path))
    }

    /// A guard carrying the state `snapshot()` returned, built from the same configuration
    /// (one of `preset`, `config`, `config_file`; preset `default` when none is given).
    #[staticmethod]
    #[pyo3(signature = (state, *, preset = None, config = None, config_file = None))]
    fn restore(
        py: Python<'_>,
        state: &[u8],
        preset: Option<&str>,
        config: Option<&str>,
        config_file: Option<PathBuf>,
    ) -> PyResult<PyGuard> {
        let source = match (preset, config, config_file.as_deref()) {
            (Some(p), None, None) => Source::Preset(p),
            (None, Some(c), None) => Source::Toml(c),
            (None, None, Some(f)) => Source::File(f),
            (None, None, None) => Source::Preset("default"),
            _ => {
                return Err(ConfigError::new_err(
                    "restore: give at most one of `preset`, `config` and `config_file`",
                ))
            }
        };
        let config = lb::config(source).map_err(py_err)?;
        let guard = py.detach(|| lb::restore(config, state)).map_err(py_err)?;
        Ok(PyGuard {
            inner: Mutex::new(guard),
        })
    }

    /// Observes one event given as a dict shaped like a sidecar line
    /// (`{"type": "tool_call", "id": ..., "tool": ..., "args": {...}}`).
    fn observe(&self, py: Python<'_>, event: &Bound<'_, PyDict>) -> PyResult<PyVerdict> {
        if let Some(one) = fast_event(event)? {
            return Ok(self.one(py, one));
        }
        let obj = dict_to_map(event, 0)?;
        let events = lb::events_from_object(obj).map_err(py_err)?;
        Ok(self.events(py, events))
    }

    /// The model asks to run `tool` with `args`; call it before the tool runs.
    #[pyo3(signature = (id, tool, args = None, batch = None))]
    fn tool_call(
        &self,
        py: Python<'_>,
        id: String,
        tool: String,
        args: Option<&Bound<'_, PyAny>>,
        batch: Option<u64>,
    ) -> PyResult<PyVerdict> {
        let args = match args {
            Some(a) => to_value(a, 0)?,
            None => Value::Null,
        };
        Ok(self.one(
            py,
            OwnedEvent::ToolCall {
                id,
                tool,
                args,
                batch,
            },
        ))
    }

    /// A tool's result; call it after the tool ran.
    #[pyo3(signature = (id, tool, content = String::new(), is_error = false, images = 0, details = None))]
    #[allow(clippy::too_many_arguments)]
    fn tool_result(
        &self,
        py: Python<'_>,
        id: String,
        tool: String,
        content: String,
        is_error: bool,
        images: u32,
        details: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyVerdict> {
        let details = details.map(|d| to_value(d, 0)).transpose()?;
        Ok(self.one(
            py,
            OwnedEvent::ToolResult {
                id,
                tool,
                content,
                is_error,
                images,
                details,
            },
        ))
    }

    /// A user message; `origin` is `unknown`, `human`, `harness` or `guard`.
    #[pyo3(signature = (text, origin = "unknown"))]
    fn user(&self, py: Python<'_>, text: String, origin: &str) -> PyResult<PyVerdict> {
        let origin = lb::origin(origin).map_err(py_err)?;
        Ok(self.one(py, OwnedEvent::User { text, origin }))
    }

    /// A piece of streamed assistant output; `stream` is `text` or `thinking`.
    #[pyo3(signature = (delta, stream = "text"))]
    fn text_delta(&self, py: Python<'_>, delta: String, stream: &str) -> PyResult<PyVerdict> {
        let stream = lb::stream(stream).map_err(py_err)?;
        Ok(self.one(py, OwnedEvent::TextDelta { stream, delta }))
    }

    /// An assistant message starts streaming.
    fn message_start(&self, py: Python<'_>) -> PyVerdict {
        self.one(py, OwnedEvent::MessageStart)
    }

    /// The assistant message ended.
    fn message_end(&self, py: Python<'_>) -> PyVerdict {
        self.one(py, OwnedEvent::MessageEnd)
    }

    /// A whole assistant message at once (start, thinking, text, end): the strongest verdict.
    #[pyo3(signature = (text = None, thinking = None))]
    fn assistant(
        &self,
        py: Python<'_>,
        text: Option<String>,
        thinking: Option<String>,
    ) -> PyVerdict {
        let mut events = vec![OwnedEvent::MessageStart];
        for (s, stream) in [(thinking, Stream::Thinking), (text, Stream::Text)] {
            if let Some(delta) = s.filter(|d| !d.is_empty()) {
                events.push(OwnedEvent::TextDelta { stream, delta });
            }
        }
        events.push(OwnedEvent::MessageEnd);
        self.events(py, events)
    }

    /// A run (one prompt's agent loop) starts.
    #[pyo3(signature = (run_id = None))]
    fn run_start(&self, py: Python<'_>, run_id: Option<String>) -> PyVerdict {
        self.one(py, OwnedEvent::RunStart { run_id })
    }

    /// The run ended.
    fn run_end(&self, py: Python<'_>) -> PyVerdict {
        self.one(py, OwnedEvent::RunEnd)
    }

    /// The host compacted the context.
    fn compaction(&self, py: Python<'_>) -> PyVerdict {
        self.one(py, OwnedEvent::Compaction)
    }

    /// A session starts (or is resumed) under `id`.
    fn session_start(&self, py: Python<'_>, id: String) -> PyVerdict {
        self.one(py, OwnedEvent::SessionStart { id })
    }

    /// The whole state (JSON text as bytes; the sidecar's `snapshot` state).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| lb::snapshot(&self.lock())).map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The names of the detectors this guard runs.
    fn detectors(&self, py: Python<'_>) -> Vec<&'static str> {
        py.detach(|| self.lock().detector_names())
    }

    /// Whether the guard is on (off: every event continues).
    #[getter]
    fn get_enabled(&self, py: Python<'_>) -> bool {
        py.detach(|| self.lock().is_enabled())
    }

    #[setter]
    fn set_enabled(&self, py: Python<'_>, on: bool) {
        py.detach(|| self.lock().set_enabled(on));
    }

    /// Number of events observed so far.
    #[getter]
    fn seq(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.lock().seq())
    }

    /// Runs a person's `/runaway on|off|toggle` command; the new state, or None when `line` is
    /// not such a command.
    fn command(&self, py: Python<'_>, line: &str) -> Option<bool> {
        py.detach(|| self.lock().command(line))
    }
}

/// The preset names.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    PRESETS.to_vec()
}

/// The common event types read straight from the dict, without building a JSON object
/// first. `None` whenever anything is not exactly as expected: the general path then gives
/// the same event or the error that says what is wrong.
fn fast_event(d: &Bound<'_, PyDict>) -> PyResult<Option<OwnedEvent>> {
    fn text(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<String>> {
        match d.get_item(key)? {
            Some(v) => match v.cast::<PyString>() {
                Ok(s) => Ok(Some(s.extract()?)),
                Err(_) => Ok(None),
            },
            None => Ok(None),
        }
    }
    let Some(ty) = text(d, "type")? else {
        return Ok(None);
    };
    let event = match ty.as_str() {
        "message_start" => OwnedEvent::MessageStart,
        "message_end" => OwnedEvent::MessageEnd,
        "compaction" => OwnedEvent::Compaction,
        "run_end" | "agent_end" => OwnedEvent::RunEnd,
        "text_delta" => {
            let (Some(stream), Some(delta)) = (text(d, "stream")?, text(d, "delta")?) else {
                return Ok(None);
            };
            let Ok(stream) = lb::stream(&stream) else {
                return Ok(None);
            };
            OwnedEvent::TextDelta { stream, delta }
        }
        "user" => {
            let Some(body) = text(d, "text")? else {
                return Ok(None);
            };
            let origin = match d.get_item("origin")? {
                None => lb::Origin::default(),
                Some(o) => match o.cast::<PyString>() {
                    Ok(o) => match lb::origin(&o.extract::<String>()?) {
                        Ok(o) => o,
                        Err(_) => return Ok(None),
                    },
                    Err(_) => return Ok(None),
                },
            };
            OwnedEvent::User { text: body, origin }
        }
        "tool_call" => {
            let (Some(id), Some(tool)) = (text(d, "id")?, text(d, "tool")?) else {
                return Ok(None);
            };
            let args = match d.get_item("args")? {
                Some(a) => to_value(&a, 1)?,
                None => Value::Null,
            };
            let batch = match d.get_item("batch")? {
                None => None,
                Some(b) if b.is_none() => None,
                Some(b) => match b.cast::<PyInt>().ok().and_then(|i| i.extract::<u64>().ok()) {
                    Some(n) => Some(n),
                    None => return Ok(None),
                },
            };
            OwnedEvent::ToolCall {
                id,
                tool,
                args,
                batch,
            }
        }
        "tool_result" => {
            let (Some(id), Some(tool)) = (text(d, "id")?, text(d, "tool")?) else {
                return Ok(None);
            };
            let content = match d.get_item("content")? {
                None => String::new(),
                Some(_) => match text(d, "content")? {
                    Some(c) => c,
                    None => return Ok(None),
                },
            };
            let is_error = match d.get_item("is_error")? {
                None => false,
                Some(b) => match b.cast::<PyBool>() {
                    Ok(b) => b.is_true(),
                    Err(_) => return Ok(None),
                },
            };
            if d.contains("images")? {
                // Rare; the general path checks its range.
                return Ok(None);
            }
            let details = match d.get_item("details")? {
                Some(x) if !x.is_none() => Some(to_value(&x, 1)?),
                _ => None,
            };
            OwnedEvent::ToolResult {
                id,
                tool,
                content,
                is_error,
                images: 0,
                details,
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(event))
}

fn dict_to_map(d: &Bound<'_, PyDict>, depth: usize) -> PyResult<Map<String, Value>> {
    let mut map = Map::new();
    for (k, v) in d.iter() {
        let key: String = match k.cast::<PyString>() {
            Ok(s) => s.extract()?,
            Err(_) => {
                return Err(EventError::new_err(format!(
                    "event keys must be strings, not {}",
                    type_name(&k)
                )))
            }
        };
        map.insert(key, to_value(&v, depth + 1)?);
    }
    Ok(map)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// A JSON-like Python value (dict with str keys, list, tuple, str, int, float, bool, None)
/// as JSON.
fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(EventError::new_err(format!(
            "event nests deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.extract()?));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(n) = i.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = i.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return Err(EventError::new_err(
            "integer in event does not fit in 64 bits",
        ));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let x = f.value();
        return Number::from_f64(x)
            .map(Value::Number)
            .ok_or_else(|| EventError::new_err(format!("number {x} in event is not finite")));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(Value::Object(dict_to_map(d, depth)?));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|x| to_value(&x, depth + 1)).collect();
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|x| to_value(&x, depth + 1)).collect();
    }
    Err(EventError::new_err(format!(
        "a value of type `{}` in an event is not JSON (use dict, list, str, int, float, bool or None)",
        type_name(obj)
    )))
}

fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyGuard>()?;
    m.add_class::<PyVerdict>()?;
    m.add_class::<PyAction>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add("LoopguardError", py.get_type::<LoopguardError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("EventError", py.get_type::<EventError>())?;
    m.add("StateError", py.get_type::<StateError>())?;
    Ok(())
}
