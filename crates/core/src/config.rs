//! The configuration envelope: `preset`, `[guard]`, `[detectors.<name>]`, `[tools.<name>]`,
//! `[agents.<id>]`.
//!
//! Core parses the envelope and keeps each table raw; the orchestrator parses `[guard]` and
//! each detector parses its own table with [`parse_options`], rejecting unknown keys. The
//! `[tools]` table is checked here (so its errors carry a line) and read by
//! [`crate::Tools::from_config`].

use crate::error::{ConfigError, Location};
use crate::registry::{EnvKind, EnvVar, Registry};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// A parsed configuration file (or a preset, or both merged).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    /// The preset to start from.
    pub preset: Option<String>,
    /// The orchestrator's table.
    pub guard: toml::Table,
    /// One table per detector, keyed by detector name.
    pub detectors: BTreeMap<String, toml::Table>,
    /// The `[tools]` table: entries that extend the built-in tools table
    /// ([`crate::tools`]), keyed by tool name.
    pub tools: toml::Table,
    /// Per-agent overrides, merged over the rest by [`Config::for_agent`].
    pub agents: BTreeMap<String, Config>,
    /// The file this came from, for error messages.
    pub source: Option<String>,
    /// Notes about keys that were accepted but should change (deprecated spellings), in the
    /// order found. Programs show them to the user (`loopguard config check` prints them, a
    /// guard writes each once to stderr).
    pub warnings: Vec<String>,
    /// Where each key of the file was written, for errors found after parsing (a detector's
    /// option of the wrong type): see [`Config::locate`].
    pub lines: KeyLines,
}

/// Where each key of a configuration file was written: its dotted path (`detectors.x.k`,
/// table headers included) and 1-based line, from the TOML parser's spans. It keeps the text
/// and reads it only when an error is to be located. Not part of what a configuration means:
/// two configurations are equal whatever their lines.
#[derive(Clone, Debug, Default)]
pub struct KeyLines(Option<std::sync::Arc<str>>);

impl PartialEq for KeyLines {
    fn eq(&self, _: &KeyLines) -> bool {
        true
    }
}

impl KeyLines {
    /// The key paths of a TOML text, read by the TOML parser's own spans: every key (dotted,
    /// quoted, inside inline tables) and every table header, each at the line where it first
    /// appears. A text that does not parse has none.
    ///
    /// ```
    /// let lines = loopguard_core::KeyLines::of_text(
    ///     "preset = \"default\"\n\n[detectors.generic-repeat]\nwarning-threshold = \"x\"\n",
    /// );
    /// assert_eq!(lines.line("detectors.generic-repeat.warning-threshold"), Some(4));
    /// // A key the text does not hold is located at the nearest table that holds it.
    /// assert_eq!(lines.line("detectors.generic-repeat.window.size"), Some(3));
    /// assert_eq!(lines.line("tools.x"), None);
    /// ```
    pub fn of_text(text: &str) -> KeyLines {
        KeyLines(Some(text.into()))
    }

    /// The line of `path`, or of the nearest enclosing table or key the text holds.
    pub fn line(&self, path: &str) -> Option<usize> {
        let text = self.0.as_deref()?;
        let doc = toml_edit::ImDocument::parse(text).ok()?;
        // Where each line starts, for the line of a byte offset.
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut map = BTreeMap::new();
        key_lines(doc.as_table(), &mut String::new(), &starts, &mut map);
        let mut p = path;
        loop {
            if let Some(&line) = map.get(p) {
                return Some(line);
            }
            p = p.rsplit_once('.')?.0;
        }
    }
}

/// Records in `map` the line of every key under `table` (whose path is `path`), and walks into
/// tables, inline tables and arrays of tables. A key's line is where its name first stands
/// (an implicit table, `detectors` of `[detectors.x]`, too); a table's is its header's.
fn key_lines(
    table: &dyn toml_edit::TableLike,
    path: &mut String,
    starts: &[usize],
    map: &mut BTreeMap<String, usize>,
) {
    // The 1-based line of a byte offset.
    let line_at = |byte: usize| starts.partition_point(|&s| s <= byte);
    for (name, _) in table.iter() {
        let Some((key, item)) = table.get_key_value(name) else {
            continue;
        };
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(name);
        let at = match item {
            toml_edit::Item::Table(t) => t.span(),
            _ => None,
        }
        .or_else(|| key.span());
        if let Some(span) = at {
            map.entry(path.clone())
                .or_insert_with(|| line_at(span.start));
        }
        match item {
            toml_edit::Item::Table(t) => key_lines(t, path, starts, map),
            toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => {
                key_lines(t, path, starts, map);
            }
            toml_edit::Item::ArrayOfTables(a) => {
                for t in a.iter() {
                    if let Some(span) = t.span() {
                        map.entry(path.clone())
                            .or_insert_with(|| line_at(span.start));
                    }
                    key_lines(t, path, starts, map);
                }
            }
            _ => {}
        }
        path.truncate(len);
    }
}

const TOP_KEYS: &[&str] = &["preset", "guard", "detectors", "tools", "agents"];

/// The 1-based line of a byte offset.
pub fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(byte)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// An error at `path`, on the line where `lines` finds it (or the table that holds it).
fn invalid_at(lines: &KeyLines, path: String, message: String) -> ConfigError {
    ConfigError::Invalid {
        at: Location {
            file: None,
            line: lines.line(&path),
        },
        path,
        message,
    }
}

/// `value` as a table; otherwise the error `bad` makes of what it found.
fn table_or(
    value: toml::Value,
    bad: impl FnOnce(String) -> ConfigError,
) -> Result<toml::Table, ConfigError> {
    match value {
        toml::Value::Table(t) => Ok(t),
        other => Err(bad(format!("expected a table, found {}", other.type_str()))),
    }
}

impl Config {
    /// Parses TOML text. `source` names the file in error messages.
    ///
    /// ```
    /// let c = loopguard_core::Config::from_toml_str(
    ///     "preset = \"default\"\n[detectors.my-detector]\nthreshold = 3\n",
    ///     Some("loopguard.toml"),
    /// ).unwrap();
    /// assert_eq!(c.preset.as_deref(), Some("default"));
    /// let err = loopguard_core::Config::from_toml_str("[detector]\n", Some("x.toml")).unwrap_err();
    /// assert_eq!(err.to_string(), "x.toml:1: `detector`: unknown key (expected one of preset, guard, detectors, tools, agents)");
    /// ```
    pub fn from_toml_str(text: &str, source: Option<&str>) -> Result<Config, ConfigError> {
        let table: toml::Table = match text.parse::<toml::Table>() {
            Ok(t) => t,
            Err(e) => {
                let line = e.span().map(|s| line_of(text, s.start));
                return Err(ConfigError::Syntax {
                    at: Location {
                        file: source.map(str::to_owned),
                        line,
                    },
                    message: e.message().to_owned(),
                });
            }
        };
        let lines = KeyLines::of_text(text);
        Config::from_table(table, "", &lines)
            .map_err(|e| e.in_file(source))
            .map(|mut c| {
                c.source = source.map(str::to_owned);
                c.lines = lines;
                c
            })
    }

    /// `e` with this configuration's file and, for a key the file holds (or the table that
    /// holds it), its line, where `e` names none yet: errors found after parsing, such as a
    /// detector's option of the wrong type, point where the key was written.
    #[must_use]
    pub fn locate(&self, e: ConfigError) -> ConfigError {
        match e.in_file(self.source.as_deref()) {
            ConfigError::Invalid {
                mut at,
                path,
                message,
            } => {
                if at.line.is_none() {
                    at.line = self.lines.line(&path);
                }
                ConfigError::Invalid { at, path, message }
            }
            other => other,
        }
    }

    /// Reads and parses a TOML file.
    pub fn from_file(path: &std::path::Path) -> Result<Config, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            file: name.clone(),
            message: e.to_string(),
        })?;
        Config::from_toml_str(&text, Some(&name))
    }

    fn from_table(
        table: toml::Table,
        prefix: &str,
        lines: &KeyLines,
    ) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        for (key, value) in table {
            let path = format!("{prefix}{key}");
            let bad = |message: String| invalid_at(lines, path.clone(), message);
            match key.as_str() {
                "preset" if prefix.is_empty() => match value {
                    toml::Value::String(s) => c.preset = Some(s),
                    other => {
                        return Err(bad(format!(
                            "expected a string, found {}",
                            other.type_str()
                        )))
                    }
                },
                "guard" => c.guard = table_or(value, bad)?,
                "detectors" => {
                    for (name, v) in table_or(value, bad)? {
                        let dt = table_or(v, |m| invalid_at(lines, format!("{path}.{name}"), m))?;
                        c.detectors.insert(name, dt);
                    }
                }
                "tools" => {
                    let t = table_or(value, bad)?;
                    crate::tools::Tools::check(&t).map_err(|e| match e {
                        ConfigError::Invalid {
                            path: p, message, ..
                        } => invalid_at(lines, format!("{prefix}{p}"), message),
                        other => other,
                    })?;
                    c.tools = t;
                }
                "agents" if prefix.is_empty() => {
                    for (id, v) in table_or(value, bad)? {
                        let at = table_or(v, |m| invalid_at(lines, format!("agents.{id}"), m))?;
                        let agent = Config::from_table(at, &format!("agents.{id}."), lines)?;
                        c.agents.insert(id, agent);
                    }
                }
                _ => {
                    let expected = if prefix.is_empty() {
                        TOP_KEYS.join(", ")
                    } else {
                        "guard, detectors, tools".to_owned()
                    };
                    return Err(bad(format!("unknown key (expected one of {expected})")));
                }
            }
        }
        Ok(c)
    }

    /// Merges `over` into `self`: scalar keys of `over` win, tables merge key by key.
    pub fn merge_from(&mut self, over: &Config) {
        if over.preset.is_some() {
            self.preset.clone_from(&over.preset);
        }
        merge_tables(&mut self.guard, &over.guard);
        for (name, t) in &over.detectors {
            merge_tables(self.detectors.entry(name.clone()).or_default(), t);
        }
        merge_tables(&mut self.tools, &over.tools);
        for (id, a) in &over.agents {
            self.agents.entry(id.clone()).or_default().merge_from(a);
        }
        if over.source.is_some() {
            self.source.clone_from(&over.source);
        }
        for w in &over.warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
    }

    /// This configuration with the overrides of agent `id` merged over it (agents removed).
    pub fn for_agent(&self, id: &str) -> Config {
        let mut c = self.clone();
        c.agents.clear();
        if let Some(a) = self.agents.get(id) {
            merge_tables(&mut c.guard, &a.guard);
            for (name, t) in &a.detectors {
                merge_tables(c.detectors.entry(name.clone()).or_default(), t);
            }
            merge_tables(&mut c.tools, &a.tools);
        }
        c
    }

    /// Applies the environment variables of the `[guard]` table ([`GUARD_ENV`]) and of every
    /// detector linked into this program ([`Registration::env`](crate::Registration::env), found by
    /// [`Registry::discover`](crate::Registry::discover)) over this configuration. Variables nobody declares are ignored.
    ///
    /// pi-loop-guard's names are kept: `LOOP_GUARD_ENABLED`, `LOOP_GUARD_ABORT_THRESHOLD` and
    /// `LOOP_GUARD_USE_TERMINATE` set `[guard]` keys, and the `generic-repeat` detector declares
    /// `LOOP_GUARD_WARN_THRESHOLD`, `LOOP_GUARD_BLOCK_THRESHOLD`, `LOOP_GUARD_IGNORE_TOOLS` and
    /// `LOOP_GUARD_IGNORE_ERRORS`.
    ///
    /// ```
    /// let mut c = loopguard_core::Config::default();
    /// c.apply_env([("LOOP_GUARD_ABORT_THRESHOLD".to_string(), "5".to_string())]).unwrap();
    /// assert_eq!(c.guard["abort-after-blocks"].as_integer(), Some(5));
    /// assert!(c.apply_env([("LOOP_GUARD_ABORT_THRESHOLD".to_string(), "five".to_string())]).is_err());
    /// ```
    pub fn apply_env<I>(&mut self, vars: I) -> Result<(), ConfigError>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        self.apply_env_with(&Registry::discover()?, vars)
    }

    /// [`Config::apply_env`] with the detectors of `registry`.
    pub fn apply_env_with<I>(&mut self, registry: &Registry, vars: I) -> Result<(), ConfigError>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        for (var, value) in vars {
            if let Some(e) = GUARD_ENV.iter().find(|e| e.var == var) {
                set_key(&mut self.guard, e.key, env_value(e, &value)?);
            }
            for reg in registry.entries() {
                for e in reg.env.iter().filter(|e| e.var == var) {
                    let v = env_value(e, &value)?;
                    set_key(
                        self.detectors.entry(reg.name.to_owned()).or_default(),
                        e.key,
                        v,
                    );
                }
            }
        }
        Ok(())
    }

    /// Reads the process environment's variables that [`Config::apply_env`] knows.
    pub fn apply_process_env(&mut self) -> Result<(), ConfigError> {
        self.apply_process_env_with(&Registry::discover()?)
    }

    /// [`Config::apply_process_env`] with the detectors of `registry`.
    pub fn apply_process_env_with(&mut self, registry: &Registry) -> Result<(), ConfigError> {
        let mut names: Vec<&str> = GUARD_ENV.iter().map(|e| e.var).collect();
        for reg in registry.entries() {
            names.extend(reg.env.iter().map(|e| e.var));
        }
        names.sort_unstable();
        names.dedup();
        let vars: Vec<(String, String)> = names
            .into_iter()
            .filter_map(|n| std::env::var(n).ok().map(|v| (n.to_owned(), v)))
            .collect();
        self.apply_env_with(registry, vars)
    }
}

/// The environment variables of the `[guard]` table (pi-loop-guard's names).
pub const GUARD_ENV: &[EnvVar] = &[
    EnvVar {
        var: "LOOP_GUARD_ENABLED",
        key: "enabled",
        kind: EnvKind::Bool,
    },
    EnvVar {
        var: "LOOP_GUARD_ABORT_THRESHOLD",
        key: "abort-after-blocks",
        kind: EnvKind::PositiveInt,
    },
    EnvVar {
        var: "LOOP_GUARD_USE_TERMINATE",
        key: "terminate",
        kind: EnvKind::Bool,
    },
];

fn env_value(e: &EnvVar, value: &str) -> Result<toml::Value, ConfigError> {
    let err = |message: &str| ConfigError::Env {
        var: e.var.to_owned(),
        value: value.to_owned(),
        message: message.to_owned(),
    };
    Ok(match e.kind {
        EnvKind::Bool => match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => toml::Value::Boolean(true),
            "0" | "false" | "no" | "off" | "" => toml::Value::Boolean(false),
            _ => return Err(err("expected true or false")),
        },
        EnvKind::PositiveInt => match value.trim().parse::<i64>() {
            Ok(n) if n > 0 => toml::Value::Integer(n),
            _ => return Err(err("must be a positive integer")),
        },
        EnvKind::List => toml::Value::Array(
            value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| toml::Value::String(s.to_owned()))
                .collect(),
        ),
    })
}

/// The value at dotted `path` in `table` (`a.b` is key `b` of inner table `a`).
pub fn get_key<'t>(table: &'t toml::Table, path: &str) -> Option<&'t toml::Value> {
    let (inner, last) = split_key(path);
    let mut t = table;
    for k in inner {
        t = t.get(k)?.as_table()?;
    }
    t.get(last)
}

/// The keys of the inner tables of dotted `path`, outermost first, and its last key.
fn split_key(path: &str) -> (impl Iterator<Item = &str>, &str) {
    let (inner, last) = match path.rsplit_once('.') {
        Some((i, l)) => (Some(i), l),
        None => (None, path),
    };
    (inner.into_iter().flat_map(|i| i.split('.')), last)
}

/// Sets dotted `path` in `table`, creating (or replacing non-table values by) inner tables.
pub fn set_key(table: &mut toml::Table, path: &str, value: toml::Value) {
    let mut t = table;
    let mut parts: Vec<&str> = path.split('.').collect();
    let Some(last) = parts.pop() else {
        return;
    };
    for k in parts {
        let entry = t
            .entry(k.to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        t = next;
    }
    t.insert(last.to_owned(), value);
}

/// Removes dotted `path` from `table` and returns its value.
pub fn take_key(table: &mut toml::Table, path: &str) -> Option<toml::Value> {
    let (inner, last) = split_key(path);
    let mut t = table;
    for k in inner {
        t = t.get_mut(k)?.as_table_mut()?;
    }
    t.remove(last)
}

/// Deep-merges `over` into `base`.
pub fn merge_tables(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_tables(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// A detector's constructor ([`crate::Registration::build`]): parses `table` into options `O`
/// ([`parse_options`], errors at keys under `scope`), resolves them into settings with `resolve`
/// and boxes the detector `new` makes of them.
pub fn build_detector<O, S, D>(
    scope: &str,
    table: &toml::Table,
    resolve: impl FnOnce(&O) -> Result<S, ConfigError>,
    new: impl FnOnce(S) -> D,
) -> Result<Box<dyn crate::Detector>, ConfigError>
where
    O: DeserializeOwned,
    D: crate::Detector,
{
    let options: O = parse_options(scope, table)?;
    Ok(Box::new(new(resolve(&options)?)))
}

/// Parses a detector's (or the guard's) table into its Options type, with the key path of any
/// unknown key or wrong type in the error. `scope` is the table's own path, e.g.
/// `detectors.generic-repeat`.
pub fn parse_options<T: DeserializeOwned>(
    scope: &str,
    table: &toml::Table,
) -> Result<T, ConfigError> {
    let value = toml::Value::Table(table.clone());
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner.is_empty() || inner == "." {
            scope.to_owned()
        } else {
            format!("{scope}.{inner}")
        };
        // The deserialiser's first line says what was wrong; a second one names the key,
        // which the path already does.
        let message = e.into_inner().to_string();
        let message = message.lines().next().unwrap_or_default().to_owned();
        ConfigError::invalid(path, message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_top_level_key_names_its_path_and_line() {
        let err = Config::from_toml_str("preset = \"default\"\n\n[gaurd]\nx = 1\n", Some("c.toml"))
            .unwrap_err();
        assert_eq!(err.path(), Some("gaurd"));
        assert!(err.to_string().starts_with("c.toml:3:"), "{err}");
    }

    #[test]
    fn key_lines_are_where_the_parser_read_each_key() {
        let text = "\
preset = \"default\"
notes = \"\"\"
x = 1
[not.a.table]
\"\"\"
[detectors.ping-pong]
matrix = [
  [1, 2],
  [3, 4],
]
max-period = 8
\"quoted.name\" = 1
window = { size = 8, threshold = 5 }


[[agents.a.list]]
k = 1
[[agents.a.list]]
k = 2
[tools.my_status]
kind.sub = \"poll\"
";
        let lines = KeyLines::of_text(text);
        // Text inside a multi-line string and rows of a multi-line array are not keys.
        assert_eq!(lines.line("x"), None);
        assert_eq!(lines.line("not.a.table"), None);
        assert_eq!(lines.line("notes"), Some(2));
        assert_eq!(lines.line("detectors.ping-pong.matrix"), Some(7));
        assert_eq!(lines.line("detectors.ping-pong.max-period"), Some(11));
        assert_eq!(lines.line("detectors.ping-pong.quoted.name"), Some(12));
        // An inline table's keys, on its line.
        assert_eq!(lines.line("detectors.ping-pong.window.size"), Some(13));
        assert_eq!(lines.line("detectors.ping-pong.window.threshold"), Some(13));
        // An array of tables: the first one; a dotted key; a table header.
        assert_eq!(lines.line("agents.a.list.k"), Some(17));
        assert_eq!(lines.line("tools.my_status.kind.sub"), Some(21));
        assert_eq!(lines.line("tools.my_status"), Some(20));
        assert_eq!(lines.line("tools.my_status.volatile"), Some(20));
        assert_eq!(
            lines.line("detectors"),
            Some(6),
            "an implicit table is where its name is first written"
        );
        assert_eq!(KeyLines::of_text("a = = 1").line("a"), None);
    }

    #[test]
    fn syntax_errors_name_file_and_line() {
        let err = Config::from_toml_str("a = 1\nb = = 2\n", Some("bad.toml")).unwrap_err();
        assert!(matches!(err, ConfigError::Syntax { .. }));
        assert!(err.to_string().starts_with("bad.toml:2:"), "{err}");
    }

    #[test]
    fn agents_merge_over_defaults() {
        let c = Config::from_toml_str(
            "[detectors.ping-pong]\nwarning-threshold = 10\ncritical-threshold = 20\n\
             [agents.safe-runner.detectors.ping-pong]\nwarning-threshold = 8\n",
            None,
        )
        .unwrap();
        let a = c.for_agent("safe-runner");
        assert_eq!(
            a.detectors["ping-pong"]["warning-threshold"].as_integer(),
            Some(8)
        );
        assert_eq!(
            a.detectors["ping-pong"]["critical-threshold"].as_integer(),
            Some(20)
        );
        assert!(a.agents.is_empty());
        let b = c.for_agent("other");
        assert_eq!(
            b.detectors["ping-pong"]["warning-threshold"].as_integer(),
            Some(10)
        );
    }

    #[test]
    fn agent_tables_reject_unknown_keys() {
        let err = Config::from_toml_str("[agents.a]\npreset = \"x\"\n", None).unwrap_err();
        assert_eq!(err.path(), Some("agents.a.preset"));
    }

    fn nop(_: &toml::Table) -> Result<Box<dyn crate::Detector>, ConfigError> {
        Err(ConfigError::invalid(
            "detectors.d",
            "not built in this test",
        ))
    }

    static D: crate::Registration = crate::Registration {
        default_enabled: false,
        env: &[
            EnvVar {
                var: "D_THRESHOLD",
                key: "tier.threshold",
                kind: EnvKind::PositiveInt,
            },
            EnvVar {
                var: "D_IGNORE",
                key: "ignore",
                kind: EnvKind::List,
            },
            EnvVar {
                var: "D_QUIET",
                key: "quiet",
                kind: EnvKind::Bool,
            },
        ],
        ..crate::Registration::bare("d", "TST100", "", nop)
    };

    #[test]
    fn env_overrides_go_where_the_guard_and_the_detectors_declare() {
        let r = Registry::from_entries([&D]).unwrap();
        let mut c = Config::default();
        c.apply_env_with(
            &r,
            [
                ("LOOP_GUARD_ENABLED".into(), "false".into()),
                ("LOOP_GUARD_ABORT_THRESHOLD".into(), "4".into()),
                ("LOOP_GUARD_USE_TERMINATE".into(), "1".into()),
                ("D_THRESHOLD".into(), "8".into()),
                ("D_IGNORE".into(), "todo, bash,".into()),
                ("D_QUIET".into(), "yes".into()),
                ("UNRELATED".into(), "x".into()),
            ],
        )
        .unwrap();
        assert_eq!(c.guard["enabled"].as_bool(), Some(false));
        assert_eq!(c.guard["abort-after-blocks"].as_integer(), Some(4));
        assert_eq!(c.guard["terminate"].as_bool(), Some(true));
        let d = &c.detectors["d"];
        assert_eq!(d["tier"]["threshold"].as_integer(), Some(8));
        assert_eq!(d["quiet"].as_bool(), Some(true));
        assert_eq!(d["ignore"].as_array().map(Vec::len), Some(2));
        assert_eq!(c.detectors.len(), 1, "nothing else is written");
        for (var, bad) in [
            ("LOOP_GUARD_ABORT_THRESHOLD", "-1"),
            ("D_THRESHOLD", "0"),
            ("D_QUIET", "maybe"),
        ] {
            let err = c
                .apply_env_with(&r, [(var.into(), bad.into())])
                .unwrap_err();
            assert!(err.to_string().contains(var), "{err}");
        }
    }

    #[test]
    fn dotted_keys_are_read_set_and_taken() {
        let mut t = toml::Table::new();
        set_key(&mut t, "a.b.c", toml::Value::Integer(1));
        set_key(&mut t, "x", toml::Value::Integer(2));
        assert_eq!(
            get_key(&t, "a.b.c").and_then(toml::Value::as_integer),
            Some(1)
        );
        assert_eq!(
            take_key(&mut t, "a.b.c").and_then(|v| v.as_integer()),
            Some(1)
        );
        assert!(get_key(&t, "a.b.c").is_none());
        assert!(take_key(&mut t, "x.y").is_none());
        set_key(&mut t, "x.y", toml::Value::Integer(3));
        assert_eq!(
            get_key(&t, "x.y").and_then(toml::Value::as_integer),
            Some(3)
        );
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    #[allow(dead_code)]
    struct Opts {
        warn_threshold: Option<u32>,
        nested: Option<Nested>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    #[allow(dead_code)]
    struct Nested {
        window: Option<u32>,
    }

    #[test]
    fn parse_options_reports_key_paths() {
        let t: toml::Table = "warn-threshold = \"x\"".parse().unwrap();
        let err = parse_options::<Opts>("detectors.d", &t).unwrap_err();
        assert_eq!(err.path(), Some("detectors.d.warn-threshold"));
        let t: toml::Table = "[nested]\nwindow = -1".parse().unwrap();
        let err = parse_options::<Opts>("detectors.d", &t).unwrap_err();
        assert_eq!(err.path(), Some("detectors.d.nested.window"));
        let t: toml::Table = "typo = 1".parse().unwrap();
        let err = parse_options::<Opts>("detectors.d", &t).unwrap_err();
        assert!(err.to_string().contains("unknown field `typo`"), "{err}");
    }
}
