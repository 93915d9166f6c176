//! Reads OpenClaw's `tools.loopDetection` JSON block as a loopguard configuration over the
//! `openclaw` preset.
//!
//! Accepted input: an OpenClaw configuration document (an object with `tools` and/or `agents`;
//! other sections are ignored) or a bare `loopDetection` block. Inside a `loopDetection` block
//! the schema is strict, as OpenClaw's: unknown keys are rejected with their JSON path, numbers
//! must be positive integers, and `warningThreshold < criticalThreshold <
//! globalCircuitBreakerThreshold` when both sides are present.
//!
//! | OpenClaw key | loopguard key |
//! |---|---|
//! | `enabled` (default false) | `enabled` of the rolling detectors; an explicit `false` also turns off `post-compaction-guard` |
//! | `historySize` | `history-size` of the rolling detectors (`openclaw.history-size` for `generic-repeat`) |
//! | `warningThreshold` / `criticalThreshold` | `warning-threshold` / `critical-threshold` of `known-poll-no-progress` and `ping-pong`, `openclaw.warning-threshold` / `openclaw.critical-threshold` of `generic-repeat` |
//! | `unknownToolThreshold` | `unknown-tool.critical-threshold` |
//! | `globalCircuitBreakerThreshold` | `circuit-breaker.threshold` |
//! | `detectors.genericRepeat` / `knownPollNoProgress` / `pingPong` | `enabled` of that detector (with the master switch) |
//! | `postCompactionGuard.windowSize` | `post-compaction-guard.window-size` |
//! | `agents.list[].tools.loopDetection` (`id`) | `[agents.<id>]`, the agent's block merged over the global one |

use loopguard_core::{Config, ConfigError, Location};
use serde_json::{Map, Value};

/// A detector and the key path inside its table.
pub type KeyPath = (&'static str, &'static [&'static str]);

/// The rolling detectors `enabled` switches (post-compaction-guard only follows an explicit
/// `false`).
pub const ROLLING: &[&str] = &[
    "generic-repeat",
    "known-poll-no-progress",
    "ping-pong",
    "unknown-tool",
    "circuit-breaker",
];

/// The toggles of `detectors`, in OpenClaw's spelling, and the detector each switches.
pub const TIERED: &[(&str, &str)] = &[
    ("genericRepeat", "generic-repeat"),
    ("knownPollNoProgress", "known-poll-no-progress"),
    ("pingPong", "ping-pong"),
];

/// Where `warningThreshold` goes.
pub const WARNING_KEYS: &[KeyPath] = &[
    ("generic-repeat", &["openclaw", "warning-threshold"]),
    ("known-poll-no-progress", &["warning-threshold"]),
    ("ping-pong", &["warning-threshold"]),
];

/// Where `criticalThreshold` goes (each must stay lower than [`GLOBAL_KEY`]).
pub const CRITICAL_KEYS: &[KeyPath] = &[
    ("generic-repeat", &["openclaw", "critical-threshold"]),
    ("known-poll-no-progress", &["critical-threshold"]),
    ("ping-pong", &["critical-threshold"]),
];

/// Where `historySize` goes.
pub const HISTORY_KEYS: &[KeyPath] = &[
    ("generic-repeat", &["openclaw", "history-size"]),
    ("known-poll-no-progress", &["history-size"]),
    ("ping-pong", &["history-size"]),
    ("unknown-tool", &["history-size"]),
    ("circuit-breaker", &["history-size"]),
];

/// Where `unknownToolThreshold` goes.
pub const UNKNOWN_KEY: KeyPath = ("unknown-tool", &["critical-threshold"]);

/// Where `globalCircuitBreakerThreshold` goes.
pub const GLOBAL_KEY: KeyPath = ("circuit-breaker", &["threshold"]);

/// Where `postCompactionGuard.windowSize` goes.
pub const WINDOW_KEY: KeyPath = ("post-compaction-guard", &["window-size"]);

/// Sets `path` in detector `d`'s table, creating inner tables.
pub(crate) fn set_path(c: &mut Config, (d, path): KeyPath, v: toml::Value) {
    let mut t = c.detectors.entry(d.to_owned()).or_default();
    let Some((last, inner)) = path.split_last() else {
        return;
    };
    for k in inner {
        let entry = t
            .entry((*k).to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        t = next;
    }
    t.insert((*last).to_owned(), v);
}

/// Reads `path` in detector `d`'s table.
pub(crate) fn get_path(c: &Config, (d, path): KeyPath) -> Option<&toml::Value> {
    let mut t = c.detectors.get(d)?;
    let (last, inner) = path.split_last()?;
    for k in inner {
        t = t.get(*k)?.as_table()?;
    }
    t.get(*last)
}

/// The dotted config path of a key, e.g. `detectors.generic-repeat.openclaw.critical-threshold`.
pub(crate) fn dotted((d, path): KeyPath) -> String {
    format!("detectors.{d}.{}", path.join("."))
}

const BLOCK_KEYS: &[&str] = &[
    "enabled",
    "historySize",
    "warningThreshold",
    "criticalThreshold",
    "unknownToolThreshold",
    "globalCircuitBreakerThreshold",
    "detectors",
    "postCompactionGuard",
];

/// One parsed `loopDetection` block (every key optional, as written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Block {
    enabled: Option<bool>,
    history: Option<i64>,
    warning: Option<i64>,
    critical: Option<i64>,
    unknown: Option<i64>,
    global: Option<i64>,
    toggles: [Option<bool>; 3],
    window: Option<i64>,
}

impl Block {
    fn over(&self, base: &Block) -> Block {
        let mut toggles = base.toggles;
        for (t, o) in toggles.iter_mut().zip(self.toggles) {
            if o.is_some() {
                *t = o;
            }
        }
        Block {
            enabled: self.enabled.or(base.enabled),
            history: self.history.or(base.history),
            warning: self.warning.or(base.warning),
            critical: self.critical.or(base.critical),
            unknown: self.unknown.or(base.unknown),
            global: self.global.or(base.global),
            toggles,
            window: self.window.or(base.window),
        }
    }

    /// The detector tables this block stands for.
    fn apply(&self, c: &mut Config) {
        let master = self.enabled.unwrap_or(false);
        let int = toml::Value::Integer;
        for d in ROLLING {
            set_path(c, (d, &["enabled"]), toml::Value::Boolean(master));
        }
        for ((_, d), t) in TIERED.iter().zip(self.toggles) {
            set_path(
                c,
                (d, &["enabled"]),
                toml::Value::Boolean(master && t.unwrap_or(true)),
            );
        }
        if let Some(n) = self.warning {
            for k in WARNING_KEYS {
                set_path(c, *k, int(n));
            }
        }
        if let Some(n) = self.critical {
            for k in CRITICAL_KEYS {
                set_path(c, *k, int(n));
            }
        }
        if let Some(n) = self.history {
            for k in HISTORY_KEYS {
                set_path(c, *k, int(n));
            }
        }
        if let Some(n) = self.unknown {
            set_path(c, UNKNOWN_KEY, int(n));
        }
        if let Some(n) = self.global {
            set_path(c, GLOBAL_KEY, int(n));
        }
        if self.enabled == Some(false) {
            set_path(
                c,
                ("post-compaction-guard", &["enabled"]),
                toml::Value::Boolean(false),
            );
        }
        if let Some(n) = self.window {
            set_path(c, WINDOW_KEY, int(n));
        }
    }
}

fn invalid(path: String, message: impl Into<String>) -> ConfigError {
    ConfigError::invalid(path, message)
}

fn positive(path: &str, key: &str, v: &Value) -> Result<i64, ConfigError> {
    match v.as_i64() {
        Some(n) if n > 0 => Ok(n),
        _ => Err(invalid(
            format!("{path}.{key}"),
            format!("must be a positive integer, found {v}"),
        )),
    }
}

fn boolean(path: &str, key: &str, v: &Value) -> Result<bool, ConfigError> {
    v.as_bool().ok_or_else(|| {
        invalid(
            format!("{path}.{key}"),
            format!("expected a boolean, found {v}"),
        )
    })
}

fn object<'a>(path: &str, v: &'a Value) -> Result<&'a Map<String, Value>, ConfigError> {
    v.as_object()
        .ok_or_else(|| invalid(path.to_owned(), format!("expected an object, found {v}")))
}

fn parse_block(path: &str, v: &Value) -> Result<Block, ConfigError> {
    let map = object(path, v)?;
    let mut b = Block::default();
    for (k, v) in map {
        match k.as_str() {
            "enabled" => b.enabled = Some(boolean(path, k, v)?),
            "historySize" => b.history = Some(positive(path, k, v)?),
            "warningThreshold" => b.warning = Some(positive(path, k, v)?),
            "criticalThreshold" => b.critical = Some(positive(path, k, v)?),
            "unknownToolThreshold" => b.unknown = Some(positive(path, k, v)?),
            "globalCircuitBreakerThreshold" => b.global = Some(positive(path, k, v)?),
            "detectors" => {
                let dpath = format!("{path}.detectors");
                for (dk, dv) in object(&dpath, v)? {
                    let Some(i) = TIERED.iter().position(|(j, _)| j == dk) else {
                        let known: Vec<&str> = TIERED.iter().map(|(j, _)| *j).collect();
                        return Err(invalid(
                            format!("{dpath}.{dk}"),
                            format!("unknown key (expected one of {})", known.join(", ")),
                        ));
                    };
                    if let Some(t) = b.toggles.get_mut(i) {
                        *t = Some(boolean(&dpath, dk, dv)?);
                    }
                }
            }
            "postCompactionGuard" => {
                let ppath = format!("{path}.postCompactionGuard");
                for (pk, pv) in object(&ppath, v)? {
                    match pk.as_str() {
                        "windowSize" => b.window = Some(positive(&ppath, pk, pv)?),
                        _ => {
                            return Err(invalid(
                                format!("{ppath}.{pk}"),
                                "unknown key (expected one of windowSize)",
                            ))
                        }
                    }
                }
            }
            _ => {
                return Err(invalid(
                    format!("{path}.{k}"),
                    format!("unknown key (expected one of {})", BLOCK_KEYS.join(", ")),
                ))
            }
        }
    }
    if let (Some(w), Some(c)) = (b.warning, b.critical) {
        if w >= c {
            return Err(invalid(
                format!("{path}.criticalThreshold"),
                "tools.loopDetection.warningThreshold must be lower than criticalThreshold.",
            ));
        }
    }
    if let (Some(c), Some(g)) = (b.critical, b.global) {
        if c >= g {
            return Err(invalid(
                format!("{path}.globalCircuitBreakerThreshold"),
                "tools.loopDetection.criticalThreshold must be lower than globalCircuitBreakerThreshold.",
            ));
        }
    }
    Ok(b)
}

/// Reads OpenClaw's `tools.loopDetection` configuration (JSON) as a loopguard configuration
/// with `preset = "openclaw"`.
///
/// ```
/// use loopguard_orchestrator::config_from_openclaw_json;
/// let c = config_from_openclaw_json(r#"{"tools":{"loopDetection":{"enabled":true,"warningThreshold":8}}}"#).unwrap();
/// assert_eq!(c.preset.as_deref(), Some("openclaw"));
/// assert_eq!(c.detectors["ping-pong"]["warning-threshold"].as_integer(), Some(8));
/// let err = config_from_openclaw_json(r#"{"enabled":true,"warningTreshold":8}"#).unwrap_err();
/// assert_eq!(err.path(), Some("tools.loopDetection.warningTreshold"));
/// ```
pub fn config_from_openclaw_json(text: &str) -> Result<Config, ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
        at: Location {
            file: None,
            line: Some(e.line()),
        },
        message: e.to_string(),
    })?;
    let root = object("", &value)
        .map_err(|_| invalid("tools.loopDetection".into(), "expected a JSON object"))?;
    let document = root.contains_key("tools") || root.contains_key("agents");
    let global = if document {
        match root.get("tools") {
            Some(tools) => match object("tools", tools)?.get("loopDetection") {
                Some(b) => parse_block("tools.loopDetection", b)?,
                None => Block::default(),
            },
            None => Block::default(),
        }
    } else {
        parse_block("tools.loopDetection", &value)?
    };
    let mut config = Config {
        preset: Some("openclaw".to_owned()),
        ..Config::default()
    };
    global.apply(&mut config);
    if !document {
        return Ok(config);
    }
    let mut agents: Vec<(String, Block)> = Vec::new();
    if let Some(a) = root.get("agents") {
        let a = object("agents", a)?;
        if let Some(list) = a.get("list") {
            let list = list
                .as_array()
                .ok_or_else(|| invalid("agents.list".into(), "expected an array"))?;
            for (i, entry) in list.iter().enumerate() {
                let path = format!("agents.list[{i}]");
                let e = object(&path, entry)?;
                if let Some(b) = agent_block(&path, e)? {
                    let id = e.get("id").and_then(Value::as_str).ok_or_else(|| {
                        invalid(format!("{path}.id"), "expected the agent id (a string)")
                    })?;
                    agents.push((id.to_owned(), b));
                }
            }
        }
        if let Some(entries) = a.get("entries") {
            for (id, entry) in object("agents.entries", entries)? {
                let path = format!("agents.entries.{id}");
                if let Some(b) = agent_block(&path, object(&path, entry)?)? {
                    agents.push((id.clone(), b));
                }
            }
        }
    }
    for (id, b) in agents {
        let mut a = Config::default();
        b.over(&global).apply(&mut a);
        config.agents.insert(id, a);
    }
    Ok(config)
}

fn agent_block(path: &str, e: &Map<String, Value>) -> Result<Option<Block>, ConfigError> {
    let Some(tools) = e.get("tools") else {
        return Ok(None);
    };
    let tpath = format!("{path}.tools");
    match object(&tpath, tools)?.get("loopDetection") {
        Some(b) => parse_block(&format!("{tpath}.loopDetection"), b).map(Some),
        None => Ok(None),
    }
}

/// [`config_from_openclaw_json`] over a file; errors name the file.
pub fn config_from_openclaw_file(path: &std::path::Path) -> Result<Config, ConfigError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
        file: name.clone(),
        message: e.to_string(),
    })?;
    let mut c = config_from_openclaw_json(&text).map_err(|e| e.in_file(Some(&name)))?;
    c.source = Some(name);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn en(c: &Config, d: &str) -> Option<bool> {
        c.detectors
            .get(d)
            .and_then(|t| t.get("enabled"))
            .and_then(toml::Value::as_bool)
    }

    #[test]
    fn j64_unset_enabled_keeps_rolling_detectors_off_and_post_compaction_on() {
        let c = config_from_openclaw_json("{}").unwrap();
        for d in ROLLING {
            assert_eq!(en(&c, d), Some(false), "{d}");
        }
        assert_eq!(en(&c, "post-compaction-guard"), None);
        let c = config_from_openclaw_json(r#"{"enabled": false}"#).unwrap();
        assert_eq!(en(&c, "post-compaction-guard"), Some(false));
        let c = config_from_openclaw_json(r#"{"enabled": true, "detectors": {"pingPong": false}}"#)
            .unwrap();
        assert_eq!(en(&c, "ping-pong"), Some(false));
        assert_eq!(en(&c, "generic-repeat"), Some(true));
        assert_eq!(en(&c, "circuit-breaker"), Some(true));
    }

    #[test]
    fn keys_map_onto_detector_tables() {
        let c = config_from_openclaw_json(
            r#"{"enabled": true, "historySize": 40, "warningThreshold": 5, "criticalThreshold": 9,
                "unknownToolThreshold": 4, "globalCircuitBreakerThreshold": 12,
                "postCompactionGuard": {"windowSize": 2}}"#,
        )
        .unwrap();
        assert_eq!(
            c.detectors["generic-repeat"]["openclaw"]["warning-threshold"].as_integer(),
            Some(5)
        );
        assert_eq!(
            c.detectors["known-poll-no-progress"]["critical-threshold"].as_integer(),
            Some(9)
        );
        assert_eq!(
            c.detectors["ping-pong"]["history-size"].as_integer(),
            Some(40)
        );
        assert_eq!(
            c.detectors["unknown-tool"]["critical-threshold"].as_integer(),
            Some(4)
        );
        assert_eq!(
            c.detectors["circuit-breaker"]["threshold"].as_integer(),
            Some(12)
        );
        assert_eq!(
            c.detectors["post-compaction-guard"]["window-size"].as_integer(),
            Some(2)
        );
    }

    #[test]
    fn j63_validation_follows_openclaw() {
        let err = config_from_openclaw_json(r#"{"warningThreshold": 20, "criticalThreshold": 20}"#)
            .unwrap_err();
        assert_eq!(err.path(), Some("tools.loopDetection.criticalThreshold"));
        assert!(
            err.to_string()
                .contains("warningThreshold must be lower than criticalThreshold."),
            "{err}"
        );
        let err = config_from_openclaw_json(
            r#"{"criticalThreshold": 30, "globalCircuitBreakerThreshold": 30}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.path(),
            Some("tools.loopDetection.globalCircuitBreakerThreshold")
        );
        for bad in ["0", "-3", "2.5", "\"10\""] {
            let err =
                config_from_openclaw_json(&format!(r#"{{"historySize": {bad}}}"#)).unwrap_err();
            assert_eq!(err.path(), Some("tools.loopDetection.historySize"), "{bad}");
            assert!(err.to_string().contains("positive integer"), "{err}");
        }
        let err = config_from_openclaw_json(r#"{"detectors": {"pingpong": true}}"#).unwrap_err();
        assert_eq!(err.path(), Some("tools.loopDetection.detectors.pingpong"));
        let err =
            config_from_openclaw_json(r#"{"postCompactionGuard": {"window": 3}}"#).unwrap_err();
        assert_eq!(
            err.path(),
            Some("tools.loopDetection.postCompactionGuard.window")
        );
        let err = config_from_openclaw_json(r#"{"enabled": "yes"}"#).unwrap_err();
        assert_eq!(err.path(), Some("tools.loopDetection.enabled"));
        // Ordering is checked only when both sides are present.
        config_from_openclaw_json(r#"{"warningThreshold": 25}"#).unwrap();
        config_from_openclaw_json(r#"{"unknownToolThreshold": 99, "historySize": 1}"#).unwrap();
    }

    #[test]
    fn syntax_errors_carry_the_line() {
        let err = config_from_openclaw_json("{\n\"enabled\": true true\n}").unwrap_err();
        assert!(matches!(err, ConfigError::Syntax { .. }));
        assert!(err.to_string().starts_with("line 2: "), "{err}");
    }

    #[test]
    fn agents_merge_their_block_over_the_global_one() {
        let c = config_from_openclaw_json(
            r#"{"tools": {"loopDetection": {"enabled": true, "warningThreshold": 10, "criticalThreshold": 20}},
                "agents": {"list": [
                    {"id": "safe-runner", "tools": {"loopDetection": {"warningThreshold": 8, "criticalThreshold": 16}}},
                    {"id": "quiet", "tools": {"loopDetection": {"enabled": false}}},
                    {"id": "plain", "model": "x"}
                ]},
                "gateway": {"port": 1}}"#,
        )
        .unwrap();
        let a = c.for_agent("safe-runner");
        assert_eq!(
            a.detectors["generic-repeat"]["openclaw"]["warning-threshold"].as_integer(),
            Some(8)
        );
        assert_eq!(
            a.detectors["known-poll-no-progress"]["critical-threshold"].as_integer(),
            Some(16)
        );
        assert_eq!(en(&a, "generic-repeat"), Some(true));
        let q = c.for_agent("quiet");
        assert_eq!(en(&q, "generic-repeat"), Some(false));
        assert_eq!(en(&q, "post-compaction-guard"), Some(false));
        assert!(!c.agents.contains_key("plain"));
        let err = config_from_openclaw_json(
            r#"{"agents": {"list": [{"id": "a", "tools": {"loopDetection": {"bogus": 1}}}]}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path(), Some("agents.list[0].tools.loopDetection.bogus"));
        let err = config_from_openclaw_json(
            r#"{"agents": {"list": [{"tools": {"loopDetection": {}}}]}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path(), Some("agents.list[0].id"));
    }
}
