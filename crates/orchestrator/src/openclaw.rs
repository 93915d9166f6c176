//! Reads OpenClaw's `tools.loopDetection` JSON block as a loopguard configuration over the
//! `openclaw` preset.
//!
//! Accepted input: an OpenClaw configuration document (an object with `tools` and/or `agents`;
//! other sections are ignored, and [`ImportReport::ignored`] names them) or a bare
//! `loopDetection` block, in JSON or in JSON5 as OpenClaw writes `openclaw.json` (comments,
//! trailing commas, unquoted keys, single quotes). Inside a `loopDetection` block
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
//! | `agents.entries.<id>.tools.loopDetection` | the same |
//!
//! [`load_config`] is the one loader of `--config` files: it tells TOML from an OpenClaw file
//! by the content (an OpenClaw file starts with `{`, after any comments), applies a preset
//! override, resolves, and selects an agent's view.

mod json5;

use loopguard_core::{Config, ConfigError, Location};
use serde_json::{Map, Value};
use std::path::Path;

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

/// The loopguard keys an OpenClaw key of a `loopDetection` block sets (`value` decides for
/// `enabled`, whose `false` also switches off the post-compaction guard).
fn targets(key: &str, value: &Value) -> Vec<String> {
    let keys = |ks: &[KeyPath]| ks.iter().map(|k| dotted(*k)).collect::<Vec<_>>();
    match key {
        "enabled" => {
            let mut t: Vec<String> = ROLLING
                .iter()
                .map(|d| format!("detectors.{d}.enabled"))
                .collect();
            if value.as_bool() == Some(false) {
                t.push("detectors.post-compaction-guard.enabled".to_owned());
            }
            t
        }
        "historySize" => keys(HISTORY_KEYS),
        "warningThreshold" => keys(WARNING_KEYS),
        "criticalThreshold" => keys(CRITICAL_KEYS),
        "unknownToolThreshold" => vec![dotted(UNKNOWN_KEY)],
        "globalCircuitBreakerThreshold" => vec![dotted(GLOBAL_KEY)],
        "postCompactionGuard.windowSize" => vec![dotted(WINDOW_KEY)],
        other => match other
            .strip_prefix("detectors.")
            .and_then(|t| TIERED.iter().find(|(j, _)| *j == t))
        {
            Some((_, d)) => vec![format!("detectors.{d}.enabled")],
            None => Vec::new(),
        },
    }
}

/// One OpenClaw key that was read, and where it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The OpenClaw key path, e.g. `tools.loopDetection.warningThreshold` or
    /// `agents.list[0].tools.loopDetection.enabled`.
    pub key: String,
    /// Its value, as JSON.
    pub value: String,
    /// The agent whose override it is (`None` for the global block).
    pub agent: Option<String>,
    /// The loopguard keys it sets (under `agents.<id>.` for an agent's override).
    pub targets: Vec<String>,
}

/// What reading an OpenClaw file took and left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Every key read from a `loopDetection` block, in file order.
    pub imported: Vec<Imported>,
    /// Keys around the `loopDetection` blocks that loopguard does not read (other sections of
    /// the document, other `tools`, agents' other settings), as key paths.
    pub ignored: Vec<String>,
    /// Every agent id the file lists, with or without an override.
    pub agents: Vec<String>,
}

fn parse_block(
    path: &str,
    v: &Value,
    agent: Option<&str>,
    record: &mut Vec<Imported>,
) -> Result<Block, ConfigError> {
    let map = object(path, v)?;
    let mut b = Block::default();
    let mut note = |key: String, value: &Value| {
        let prefix = agent.map(|a| format!("agents.{a}.")).unwrap_or_default();
        record.push(Imported {
            targets: targets(&key, value)
                .into_iter()
                .map(|t| format!("{prefix}{t}"))
                .collect(),
            key: format!("{path}.{key}"),
            value: value.to_string(),
            agent: agent.map(str::to_owned),
        });
    };
    for (k, v) in map {
        if !matches!(k.as_str(), "detectors" | "postCompactionGuard") {
            note(k.clone(), v);
        }
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
                    note(format!("detectors.{dk}"), dv);
                }
            }
            "postCompactionGuard" => {
                let ppath = format!("{path}.postCompactionGuard");
                for (pk, pv) in object(&ppath, v)? {
                    match pk.as_str() {
                        "windowSize" => {
                            b.window = Some(positive(&ppath, pk, pv)?);
                            note(format!("postCompactionGuard.{pk}"), pv);
                        }
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

/// Reads OpenClaw's `tools.loopDetection` configuration (JSON or JSON5) as a loopguard
/// configuration with `preset = "openclaw"`.
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
    import_openclaw(text).map(|(c, _)| c)
}

/// [`config_from_openclaw_json`], with the report of what was read and what was ignored.
///
/// ```
/// use loopguard_orchestrator::openclaw::import_openclaw;
/// let (c, report) = import_openclaw(
///     "{ // JSON5, as OpenClaw writes it\n  gateway: {port: 18789},\n  tools: {loopDetection: {enabled: true,}},\n  agents: {list: [{id: 'main'}]},\n}",
/// ).unwrap();
/// assert_eq!(c.detectors["ping-pong"]["enabled"].as_bool(), Some(true));
/// assert_eq!(report.imported[0].key, "tools.loopDetection.enabled");
/// assert_eq!(report.ignored, ["gateway"]);
/// assert_eq!(report.agents, ["main"]);
/// ```
pub fn import_openclaw(text: &str) -> Result<(Config, ImportReport), ConfigError> {
    let syntax = |line: usize, message: String| ConfigError::Syntax {
        at: Location {
            file: None,
            line: Some(line),
        },
        message,
    };
    let json = json5::to_json(text).map_err(|e| syntax(e.line, e.message))?;
    let value: Value = serde_json::from_str(&json).map_err(|e| syntax(e.line(), e.to_string()))?;
    let root = object("", &value)
        .map_err(|_| invalid("tools.loopDetection".into(), "expected a JSON object"))?;
    let mut report = ImportReport::default();
    let document = root.contains_key("tools") || root.contains_key("agents");
    if !document {
        let global = parse_block("tools.loopDetection", &value, None, &mut report.imported)?;
        let mut config = openclaw_base();
        global.apply(&mut config);
        return Ok((config, report));
    }
    for k in root
        .keys()
        .filter(|k| !matches!(k.as_str(), "tools" | "agents"))
    {
        report.ignored.push(k.clone());
    }
    let global = match root.get("tools") {
        Some(tools) => {
            let tools = object("tools", tools)?;
            for k in tools.keys().filter(|k| *k != "loopDetection") {
                report.ignored.push(format!("tools.{k}"));
            }
            match tools.get("loopDetection") {
                Some(b) => parse_block("tools.loopDetection", b, None, &mut report.imported)?,
                None => Block::default(),
            }
        }
        None => Block::default(),
    };
    let mut config = openclaw_base();
    global.apply(&mut config);
    let mut agents: Vec<(String, Block)> = Vec::new();
    if let Some(a) = root.get("agents") {
        let a = object("agents", a)?;
        for k in a
            .keys()
            .filter(|k| !matches!(k.as_str(), "list" | "entries"))
        {
            report.ignored.push(format!("agents.{k}"));
        }
        if let Some(list) = a.get("list") {
            let list = list
                .as_array()
                .ok_or_else(|| invalid("agents.list".into(), "expected an array"))?;
            for (i, entry) in list.iter().enumerate() {
                let path = format!("agents.list[{i}]");
                let e = object(&path, entry)?;
                let id = e.get("id").and_then(Value::as_str);
                if let Some(id) = id {
                    report.agents.push(id.to_owned());
                }
                let has_block = e
                    .get("tools")
                    .and_then(Value::as_object)
                    .is_some_and(|t| t.contains_key("loopDetection"));
                let id = match (id, has_block) {
                    (Some(id), _) => id,
                    (None, true) => {
                        return Err(invalid(
                            format!("{path}.id"),
                            "expected the agent id (a string)",
                        ))
                    }
                    (None, false) => "",
                };
                if let Some(b) = agent_block(&path, e, id, &mut report)? {
                    agents.push((id.to_owned(), b));
                }
            }
        }
        if let Some(entries) = a.get("entries") {
            for (id, entry) in object("agents.entries", entries)? {
                let path = format!("agents.entries.{id}");
                report.agents.push(id.clone());
                if let Some(b) = agent_block(&path, object(&path, entry)?, id, &mut report)? {
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
    Ok((config, report))
}

fn openclaw_base() -> Config {
    Config {
        preset: Some("openclaw".to_owned()),
        ..Config::default()
    }
}

/// An agent entry's `tools.loopDetection` block, if it has one; its other keys are noted as
/// ignored.
fn agent_block(
    path: &str,
    e: &Map<String, Value>,
    id: &str,
    report: &mut ImportReport,
) -> Result<Option<Block>, ConfigError> {
    for k in e.keys().filter(|k| !matches!(k.as_str(), "id" | "tools")) {
        report.ignored.push(format!("{path}.{k}"));
    }
    let Some(tools) = e.get("tools") else {
        return Ok(None);
    };
    let tpath = format!("{path}.tools");
    let tools = object(&tpath, tools)?;
    for k in tools.keys().filter(|k| *k != "loopDetection") {
        report.ignored.push(format!("{tpath}.{k}"));
    }
    match tools.get("loopDetection") {
        Some(b) => parse_block(
            &format!("{tpath}.loopDetection"),
            b,
            Some(id),
            &mut report.imported,
        )
        .map(Some),
        None => Ok(None),
    }
}

/// [`config_from_openclaw_json`] over a file; errors name the file.
pub fn config_from_openclaw_file(path: &Path) -> Result<Config, ConfigError> {
    let name = path.display().to_string();
    let mut c = config_from_openclaw_json(&read(path)?).map_err(|e| e.in_file(Some(&name)))?;
    c.source = Some(name);
    Ok(c)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
        file: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The two kinds of `--config` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigFormat {
    /// loopguard's own TOML (`preset`, `[guard]`, `[detectors.*]`, `[agents.*]`).
    Toml,
    /// An OpenClaw configuration (`openclaw.json`, JSON or JSON5) or a bare `loopDetection`
    /// block, imported over the `openclaw` preset.
    OpenClaw,
}

impl ConfigFormat {
    /// Tells the format from the content: an OpenClaw file's first character (after white
    /// space, a byte order mark and `//` or `/* */` comments) is `{`, which never starts a TOML
    /// document.
    ///
    /// ```
    /// use loopguard_orchestrator::openclaw::ConfigFormat;
    /// assert_eq!(ConfigFormat::detect("// openclaw.json\n{ tools: {} }"), ConfigFormat::OpenClaw);
    /// assert_eq!(ConfigFormat::detect("# loopguard\npreset = \"default\""), ConfigFormat::Toml);
    /// ```
    pub fn detect(text: &str) -> ConfigFormat {
        let mut rest = text.trim_start_matches('\u{FEFF}');
        loop {
            rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix("//") {
                rest = r.find('\n').map_or("", |i| &r[i..]);
            } else if let Some(r) = rest.strip_prefix("/*") {
                rest = r.find("*/").map_or("", |i| &r[i + 2..]);
            } else {
                break;
            }
        }
        if rest.starts_with('{') {
            ConfigFormat::OpenClaw
        } else {
            ConfigFormat::Toml
        }
    }

    /// How `config check` names it.
    pub fn describe(self) -> &'static str {
        match self {
            ConfigFormat::Toml => "loopguard TOML",
            ConfigFormat::OpenClaw => "OpenClaw configuration (JSON/JSON5)",
        }
    }
}

/// A configuration as loaded for a command.
#[derive(Clone, Debug)]
pub struct LoadedConfig {
    /// The configuration ([`load_config`]: resolved over its preset, the agent's view when one
    /// was asked for).
    pub config: Config,
    /// The file's format (`Toml` when there was no file).
    pub format: ConfigFormat,
    /// For an OpenClaw file: what was read and what was ignored.
    pub import: Option<ImportReport>,
    /// The agent whose view this is.
    pub agent: Option<String>,
}

impl LoadedConfig {
    /// The agent ids the configuration knows: those with an override, and (OpenClaw) every
    /// listed agent.
    pub fn agent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.config.agents.keys().cloned().collect();
        if let Some(r) = &self.import {
            ids.extend(r.agents.iter().cloned());
        }
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Parses configuration `text` in the format its content shows ([`ConfigFormat::detect`]);
/// `source` names the file in errors. Not resolved.
pub fn read_config_str(text: &str, source: Option<&str>) -> Result<LoadedConfig, ConfigError> {
    let format = ConfigFormat::detect(text);
    let (mut config, import) = match format {
        ConfigFormat::Toml => (Config::from_toml_str(text, source)?, None),
        ConfigFormat::OpenClaw => {
            let (c, r) = import_openclaw(text).map_err(|e| e.in_file(source))?;
            (c, Some(r))
        }
    };
    config.source = source.map(str::to_owned);
    Ok(LoadedConfig {
        config,
        format,
        import,
        agent: None,
    })
}

/// Reads a `--config` file, TOML or OpenClaw ([`read_config_str`]). Not resolved.
pub fn read_config_file(path: &Path) -> Result<LoadedConfig, ConfigError> {
    read_config_str(&read(path)?, Some(&path.display().to_string()))
}

/// The configuration a command runs with: `file` (TOML or OpenClaw, told apart by content; none
/// is an empty configuration), `preset` overriding the file's preset, resolved over that
/// preset, and, with `agent`, that agent's overrides merged over the rest. An agent the file
/// does not know is an error that lists the ones it does. `LOOP_GUARD_*` variables are not
/// applied here.
///
/// ```
/// use loopguard_orchestrator::openclaw::{load_config, ConfigFormat};
/// let dir = std::env::temp_dir().join(format!("loopguard-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let file = dir.join("openclaw.json");
/// std::fs::write(&file, r#"{tools: {loopDetection: {enabled: true, warningThreshold: 10, criticalThreshold: 20}},
///   agents: {list: [{id: "safe-runner", tools: {loopDetection: {warningThreshold: 8, criticalThreshold: 16}}}, {id: "main"}]}}"#).unwrap();
/// let l = load_config(Some(&file), None, Some("safe-runner")).unwrap();
/// assert_eq!(l.format, ConfigFormat::OpenClaw);
/// assert_eq!(l.config.detectors["ping-pong"]["warning-threshold"].as_integer(), Some(8));
/// let main = load_config(Some(&file), None, Some("main")).unwrap();
/// assert_eq!(main.config.detectors["ping-pong"]["warning-threshold"].as_integer(), Some(10));
/// let err = load_config(Some(&file), None, Some("mian")).unwrap_err();
/// assert!(err.to_string().contains("main, safe-runner"), "{err}");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn load_config(
    file: Option<&Path>,
    preset: Option<&str>,
    agent: Option<&str>,
) -> Result<LoadedConfig, ConfigError> {
    let mut loaded = match file {
        Some(f) => read_config_file(f)?,
        None => LoadedConfig {
            config: Config::default(),
            format: ConfigFormat::Toml,
            import: None,
            agent: None,
        },
    };
    if let Some(p) = preset {
        loaded.config.preset = Some(p.to_owned());
    }
    loaded.config = crate::resolve(&loaded.config)?;
    if let Some(id) = agent {
        let known = loaded.agent_ids();
        if !known.iter().any(|k| k == id) {
            let list = if known.is_empty() {
                "it has none".to_owned()
            } else {
                format!("it has {}", known.join(", "))
            };
            return Err(ConfigError::Invalid {
                at: Location {
                    file: loaded.config.source.clone(),
                    line: None,
                },
                path: format!("agents.{id}"),
                message: format!("no such agent in this configuration ({list})"),
            });
        }
        loaded.config = loaded.config.for_agent(id);
        loaded.agent = Some(id.to_owned());
    }
    Ok(loaded)
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

    #[test]
    fn the_import_report_names_what_was_read_and_what_was_left() {
        let (c, r) = import_openclaw(
            "{\n  $schema: 'x',\n  tools: {web: {}, loopDetection: {enabled: false, postCompactionGuard: {windowSize: 4}}},\n  agents: {entries: {ops: {model: 'm', tools: {loopDetection: {enabled: true, detectors: {pingPong: false}}}}}},\n}",
        )
        .unwrap();
        let keys: Vec<&str> = r.imported.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "tools.loopDetection.enabled",
                "tools.loopDetection.postCompactionGuard.windowSize",
                "agents.entries.ops.tools.loopDetection.enabled",
                "agents.entries.ops.tools.loopDetection.detectors.pingPong",
            ]
        );
        // An explicit `false` also turns off the post-compaction guard, and says so.
        assert!(r.imported[0]
            .targets
            .contains(&"detectors.post-compaction-guard.enabled".to_owned()));
        assert_eq!(
            r.imported[1].targets,
            ["detectors.post-compaction-guard.window-size"]
        );
        assert_eq!(r.imported[3].agent.as_deref(), Some("ops"));
        assert_eq!(
            r.imported[3].targets,
            ["agents.ops.detectors.ping-pong.enabled"]
        );
        assert_eq!(
            r.ignored,
            ["$schema", "tools.web", "agents.entries.ops.model"]
        );
        assert_eq!(r.agents, ["ops"]);
        let ops = c.for_agent("ops");
        assert_eq!(en(&ops, "generic-repeat"), Some(true));
        assert_eq!(en(&ops, "ping-pong"), Some(false));
        assert_eq!(en(&c, "generic-repeat"), Some(false));
    }

    #[test]
    fn the_format_comes_from_the_content() {
        for (text, format) in [
            ("{}", ConfigFormat::OpenClaw),
            (
                "\u{feff}  /* a */ // b\n {\"enabled\": true}",
                ConfigFormat::OpenClaw,
            ),
            ("", ConfigFormat::Toml),
            (
                "# c\n[detectors.ping-pong]\nenabled = false\n",
                ConfigFormat::Toml,
            ),
            ("preset = \"default\"", ConfigFormat::Toml),
        ] {
            assert_eq!(ConfigFormat::detect(text), format, "{text:?}");
            let l = read_config_str(text, Some("f")).unwrap();
            assert_eq!(l.format, format);
            assert_eq!(l.import.is_some(), format == ConfigFormat::OpenClaw);
            assert_eq!(l.config.source.as_deref(), Some("f"));
        }
        let err = read_config_str("{\n  enabled: yes\n}", Some("oc.json")).unwrap_err();
        assert!(
            err.to_string().starts_with("oc.json:2: invalid syntax"),
            "{err}"
        );
    }

    #[test]
    fn load_config_selects_toml_agents_and_rejects_unknown_ones() {
        let dir = std::env::temp_dir().join(format!("loopguard-openclaw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.toml");
        std::fs::write(
            &f,
            "[detectors.ping-pong]\nwarning-threshold = 5\n[agents.a.detectors.ping-pong]\nwarning-threshold = 7\n",
        )
        .unwrap();
        let pp = |c: &Config| c.detectors["ping-pong"]["warning-threshold"].as_integer();
        let l = load_config(Some(&f), Some("openclaw"), Some("a")).unwrap();
        assert_eq!(l.config.preset.as_deref(), Some("openclaw"));
        assert_eq!(pp(&l.config), Some(7));
        assert!(l.config.agents.is_empty());
        assert_eq!(
            pp(&load_config(Some(&f), None, None).unwrap().config),
            Some(5)
        );
        let err = load_config(Some(&f), None, Some("b")).unwrap_err();
        assert_eq!(err.path(), Some("agents.b"));
        assert!(err.to_string().contains("(it has a)"), "{err}");
        let err = load_config(None, None, Some("b")).unwrap_err();
        assert!(err.to_string().contains("it has none"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
