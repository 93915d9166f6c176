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
//! Which loopguard keys an OpenClaw key sets is declared by each detector's registration
//! ([`loopguard_core::OpenClawImport`]: how the master switch moves its `enabled`, its own
//! switch under `detectors`, and the integer keys it takes); the keys a block accepts are those
//! the linked detectors map. With loopguard's own detectors:
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

use loopguard_core::{set_key, Config, ConfigError, Location, MasterSwitch, Registry};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// OpenClaw's keys of a `loopDetection` block whose meaning is the block's own: the master
/// switch, the per-detector switches, and the threshold keys whose ordering OpenClaw checks.
const MASTER: &str = "enabled";
const TOGGLES: &str = "detectors";
const WARNING: &str = "warningThreshold";
pub(crate) const CRITICAL: &str = "criticalThreshold";
pub(crate) const GLOBAL: &str = "globalCircuitBreakerThreshold";

/// The OpenClaw keys a `loopDetection` block accepts with this registry, in the order they are
/// listed in errors: the master switch, every integer key a detector maps (outside any
/// sub-table), the per-detector switches, then the sub-tables (`postCompactionGuard`).
fn block_keys(registry: &Registry) -> Vec<&'static str> {
    let mut plain: Vec<&'static str> = Vec::new();
    let mut tables: Vec<&'static str> = Vec::new();
    for reg in registry.entries() {
        for (k, _) in reg.openclaw.keys {
            let (list, key) = match k.split_once('.') {
                Some((t, _)) => (&mut tables, t),
                None => (&mut plain, *k),
            };
            if !list.contains(&key) {
                list.push(key);
            }
        }
    }
    let mut out = vec![MASTER];
    out.extend(plain);
    out.push(TOGGLES);
    out.extend(tables);
    out
}

/// The per-detector switches (`detectors.<toggle>`), in registry order.
fn toggles(registry: &Registry) -> Vec<&'static str> {
    registry
        .entries()
        .iter()
        .filter_map(|r| r.openclaw.toggle)
        .collect()
}

/// The detector keys OpenClaw key `key` sets: `(detector, dotted key in its table)`.
pub fn mapped(registry: &Registry, key: &str) -> Vec<(&'static str, &'static str)> {
    registry
        .entries()
        .iter()
        .flat_map(|r| {
            r.openclaw
                .keys
                .iter()
                .filter(move |(k, _)| *k == key)
                .map(move |(_, to)| (r.name, *to))
        })
        .collect()
}

/// The dotted config path of a detector key, e.g. `detectors.circuit-breaker.threshold`.
pub(crate) fn dotted((d, key): (&str, &str)) -> String {
    format!("detectors.{d}.{key}")
}

/// The detectors whose `enabled` the master switch `enabled` sets when it is `value` (unset
/// counts as `false` for those that follow it).
fn switched(registry: &Registry, value: Option<bool>) -> Vec<&'static str> {
    let mut follows: Vec<&'static str> = Vec::new();
    let mut off_only: Vec<&'static str> = Vec::new();
    for r in registry.entries() {
        match r.openclaw.master {
            MasterSwitch::Follows => follows.push(r.name),
            MasterSwitch::OffOnly if value == Some(false) => off_only.push(r.name),
            _ => {}
        }
    }
    follows.extend(off_only);
    follows
}

/// One parsed `loopDetection` block (every key optional, as written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Block {
    enabled: Option<bool>,
    /// Integer keys by their dotted OpenClaw key (`historySize`, `postCompactionGuard.windowSize`).
    values: BTreeMap<String, i64>,
    /// The per-detector switches, by OpenClaw name.
    toggles: BTreeMap<String, bool>,
}

impl Block {
    fn over(&self, base: &Block) -> Block {
        let mut b = base.clone();
        if self.enabled.is_some() {
            b.enabled = self.enabled;
        }
        b.values
            .extend(self.values.iter().map(|(k, v)| (k.clone(), *v)));
        b.toggles
            .extend(self.toggles.iter().map(|(k, v)| (k.clone(), *v)));
        b
    }

    /// The detector tables this block stands for.
    fn apply(&self, c: &mut Config, registry: &Registry) {
        let master = self.enabled.unwrap_or(false);
        for reg in registry.entries() {
            let on = match reg.openclaw.master {
                MasterSwitch::Follows => Some(
                    master
                        && reg
                            .openclaw
                            .toggle
                            .and_then(|t| self.toggles.get(t).copied())
                            .unwrap_or(true),
                ),
                MasterSwitch::OffOnly if self.enabled == Some(false) => Some(false),
                _ => None,
            };
            if let Some(on) = on {
                set_key(
                    c.detectors.entry(reg.name.to_owned()).or_default(),
                    "enabled",
                    toml::Value::Boolean(on),
                );
            }
            for (k, to) in reg.openclaw.keys {
                if let Some(n) = self.values.get(*k) {
                    set_key(
                        c.detectors.entry(reg.name.to_owned()).or_default(),
                        to,
                        toml::Value::Integer(*n),
                    );
                }
            }
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
            format!("must be a positive integer (found {v})"),
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
/// `enabled`, whose `false` also switches off the detectors that only follow a `false`).
fn targets(registry: &Registry, key: &str, value: &Value) -> Vec<String> {
    if key == MASTER {
        return switched(registry, value.as_bool())
            .into_iter()
            .map(|d| format!("detectors.{d}.enabled"))
            .collect();
    }
    if let Some(t) = key.strip_prefix("detectors.") {
        return registry
            .entries()
            .iter()
            .filter(|r| r.openclaw.toggle == Some(t))
            .map(|r| format!("detectors.{}.enabled", r.name))
            .collect();
    }
    mapped(registry, key).into_iter().map(dotted).collect()
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
    registry: &Registry,
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
            targets: targets(registry, &key, value)
                .into_iter()
                .map(|t| format!("{prefix}{t}"))
                .collect(),
            key: format!("{path}.{key}"),
            value: value.to_string(),
            agent: agent.map(str::to_owned),
        });
    };
    let keys = block_keys(registry);
    let mapped_keys: Vec<&str> = registry
        .entries()
        .iter()
        .flat_map(|r| r.openclaw.keys.iter().map(|(k, _)| *k))
        .collect();
    let unknown = |at: String, expected: &[&str]| {
        invalid(
            at,
            format!("unknown key (expected one of {})", expected.join(", ")),
        )
    };
    for (k, v) in map {
        if k == MASTER {
            note(k.clone(), v);
            b.enabled = Some(boolean(path, k, v)?);
        } else if k == TOGGLES {
            let dpath = format!("{path}.{TOGGLES}");
            let known = toggles(registry);
            for (dk, dv) in object(&dpath, v)? {
                if !known.contains(&dk.as_str()) {
                    return Err(unknown(format!("{dpath}.{dk}"), &known));
                }
                b.toggles.insert(dk.clone(), boolean(&dpath, dk, dv)?);
                note(format!("{TOGGLES}.{dk}"), dv);
            }
        } else if mapped_keys.contains(&k.as_str()) {
            note(k.clone(), v);
            b.values.insert(k.clone(), positive(path, k, v)?);
        } else if keys.contains(&k.as_str()) {
            // A sub-table whose keys the detectors map (`postCompactionGuard.windowSize`).
            let tpath = format!("{path}.{k}");
            let inner: Vec<&str> = mapped_keys
                .iter()
                .filter_map(|m| m.strip_prefix(k.as_str())?.strip_prefix('.'))
                .collect();
            for (ik, iv) in object(&tpath, v)? {
                if !inner.contains(&ik.as_str()) {
                    return Err(unknown(format!("{tpath}.{ik}"), &inner));
                }
                let full = format!("{k}.{ik}");
                b.values.insert(full.clone(), positive(&tpath, ik, iv)?);
                note(full, iv);
            }
        } else {
            return Err(unknown(format!("{path}.{k}"), &keys));
        }
    }
    let get = |k: &str| b.values.get(k).copied();
    if let (Some(w), Some(c)) = (get(WARNING), get(CRITICAL)) {
        if w >= c {
            return Err(invalid(
                format!("{path}.{CRITICAL}"),
                format!("tools.loopDetection.{WARNING} must be lower than {CRITICAL}."),
            ));
        }
    }
    if let (Some(c), Some(g)) = (get(CRITICAL), get(GLOBAL)) {
        if c >= g {
            return Err(invalid(
                format!("{path}.{GLOBAL}"),
                format!("tools.loopDetection.{CRITICAL} must be lower than {GLOBAL}."),
            ));
        }
    }
    Ok(b)
}

/// Reads OpenClaw's `tools.loopDetection` configuration (JSON or JSON5) as a loopguard
/// configuration with `preset = "openclaw"`.
///
/// ```
/// # use loopguard_detect_ping_pong as _;
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

/// [`import_openclaw`] with the detectors of `registry` (what each OpenClaw key sets is
/// declared by the detectors' registrations, [`loopguard_core::OpenClawImport`]).
pub fn import_openclaw_with(
    text: &str,
    registry: &Registry,
) -> Result<(Config, ImportReport), ConfigError> {
    import(text, registry)
}

/// [`config_from_openclaw_json`], with the report of what was read and what was ignored.
///
/// ```
/// # use loopguard_detect_ping_pong as _;
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
    import(text, &Registry::discover()?)
}

fn import(text: &str, registry: &Registry) -> Result<(Config, ImportReport), ConfigError> {
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
        let global = parse_block(
            registry,
            "tools.loopDetection",
            &value,
            None,
            &mut report.imported,
        )?;
        let mut config = openclaw_base();
        global.apply(&mut config, registry);
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
                Some(b) => parse_block(
                    registry,
                    "tools.loopDetection",
                    b,
                    None,
                    &mut report.imported,
                )?,
                None => Block::default(),
            }
        }
        None => Block::default(),
    };
    let mut config = openclaw_base();
    global.apply(&mut config, registry);
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
                if let Some(b) = agent_block(registry, &path, e, id, &mut report)? {
                    agents.push((id.to_owned(), b));
                }
            }
        }
        if let Some(entries) = a.get("entries") {
            for (id, entry) in object("agents.entries", entries)? {
                let path = format!("agents.entries.{id}");
                report.agents.push(id.clone());
                if let Some(b) =
                    agent_block(registry, &path, object(&path, entry)?, id, &mut report)?
                {
                    agents.push((id.clone(), b));
                }
            }
        }
    }
    for (id, b) in agents {
        let mut a = Config::default();
        b.over(&global).apply(&mut a, registry);
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
    registry: &Registry,
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
            registry,
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
/// # use loopguard_detect_ping_pong as _;
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
    use loopguard_detect_circuit_breaker as _;
    use loopguard_detect_generic_repeat as _;
    use loopguard_detect_known_poll as _;
    use loopguard_detect_ping_pong as _;
    use loopguard_detect_post_compaction as _;
    use loopguard_detect_unknown_tool as _;

    /// The detectors OpenClaw's master switch turns on and off.
    const ROLLING: &[&str] = &[
        "generic-repeat",
        "known-poll-no-progress",
        "ping-pong",
        "unknown-tool",
        "circuit-breaker",
    ];

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
        for (detector, key, value) in [
            ("known-poll-no-progress", "critical-threshold", 9),
            ("ping-pong", "history-size", 40),
            ("unknown-tool", "critical-threshold", 4),
            ("circuit-breaker", "threshold", 12),
            ("post-compaction-guard", "window-size", 2),
        ] {
            assert_eq!(
                c.detectors[detector][key].as_integer(),
                Some(value),
                "{detector}.{key}"
            );
        }
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
