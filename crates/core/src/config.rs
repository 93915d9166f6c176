//! The configuration envelope: `preset`, `[guard]`, `[detectors.<name>]`, `[tools.<name>]`,
//! `[agents.<id>]`.
//!
//! Core parses the envelope and keeps each table raw; the orchestrator parses `[guard]` and
//! each detector parses its own table with [`parse_options`], rejecting unknown keys. The
//! `[tools]` table is checked here (so its errors carry a line) and read by
//! [`crate::Tools::from_config`].

use crate::error::{ConfigError, Location};
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

impl Config {
    /// Parses TOML text. `source` names the file in error messages.
    ///
    /// ```
    /// let c = loopguard_core::Config::from_toml_str(
    ///     "preset = \"default\"\n[detectors.generic-repeat]\nwarn-threshold = 3\n",
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
        let locate = |key: &str| find_line(text, key);
        Config::from_table(table, "", &locate)
            .map_err(|e| e.in_file(source))
            .map(|mut c| {
                c.source = source.map(str::to_owned);
                c
            })
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
        locate: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<Config, ConfigError> {
        let mut c = Config::default();
        for (key, value) in table {
            let path = format!("{prefix}{key}");
            let bad = |message: String| ConfigError::Invalid {
                at: Location {
                    file: None,
                    line: locate(&key),
                },
                path: path.clone(),
                message,
            };
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
                "guard" => match value {
                    toml::Value::Table(t) => c.guard = t,
                    other => {
                        return Err(bad(format!("expected a table, found {}", other.type_str())))
                    }
                },
                "detectors" => match value {
                    toml::Value::Table(t) => {
                        for (name, v) in t {
                            match v {
                                toml::Value::Table(dt) => {
                                    c.detectors.insert(name, dt);
                                }
                                other => {
                                    return Err(ConfigError::Invalid {
                                        at: Location {
                                            file: None,
                                            line: locate(&name),
                                        },
                                        path: format!("{path}.{name}"),
                                        message: format!(
                                            "expected a table, found {}",
                                            other.type_str()
                                        ),
                                    })
                                }
                            }
                        }
                    }
                    other => {
                        return Err(bad(format!("expected a table, found {}", other.type_str())))
                    }
                },
                "tools" => match value {
                    toml::Value::Table(t) => {
                        crate::tools::Tools::check(&t).map_err(|e| match e {
                            ConfigError::Invalid {
                                path: p, message, ..
                            } => {
                                let name = p.split('.').nth(1).unwrap_or(&p);
                                ConfigError::Invalid {
                                    at: Location {
                                        file: None,
                                        line: locate(name),
                                    },
                                    path: format!("{prefix}{p}"),
                                    message,
                                }
                            }
                            other => other,
                        })?;
                        c.tools = t;
                    }
                    other => {
                        return Err(bad(format!("expected a table, found {}", other.type_str())))
                    }
                },
                "agents" if prefix.is_empty() => match value {
                    toml::Value::Table(t) => {
                        for (id, v) in t {
                            let agent_prefix = format!("agents.{id}.");
                            match v {
                                toml::Value::Table(at) => {
                                    let agent = Config::from_table(at, &agent_prefix, locate)?;
                                    c.agents.insert(id, agent);
                                }
                                other => {
                                    return Err(ConfigError::Invalid {
                                        at: Location {
                                            file: None,
                                            line: locate(&id),
                                        },
                                        path: format!("agents.{id}"),
                                        message: format!(
                                            "expected a table, found {}",
                                            other.type_str()
                                        ),
                                    })
                                }
                            }
                        }
                    }
                    other => {
                        return Err(bad(format!("expected a table, found {}", other.type_str())))
                    }
                },
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

    /// Applies pi-loop-guard's environment variables (`LOOP_GUARD_*`) over this configuration.
    ///
    /// | variable | key |
    /// |---|---|
    /// | `LOOP_GUARD_ENABLED` | `guard.enabled` |
    /// | `LOOP_GUARD_WARN_THRESHOLD` | `detectors.generic-repeat.warn-threshold` |
    /// | `LOOP_GUARD_BLOCK_THRESHOLD` | `detectors.generic-repeat.block-threshold` |
    /// | `LOOP_GUARD_ABORT_THRESHOLD` | `guard.abort-after-blocks` |
    /// | `LOOP_GUARD_IGNORE_TOOLS` | `detectors.generic-repeat.ignore-tools` (comma-separated) |
    /// | `LOOP_GUARD_IGNORE_ERRORS` | `detectors.generic-repeat.ignore-errors` |
    /// | `LOOP_GUARD_USE_TERMINATE` | `guard.terminate` |
    ///
    /// ```
    /// let mut c = loopguard_core::Config::default();
    /// c.apply_env([("LOOP_GUARD_WARN_THRESHOLD".to_string(), "5".to_string())]).unwrap();
    /// assert_eq!(c.detectors["generic-repeat"]["warn-threshold"].as_integer(), Some(5));
    /// assert!(c.apply_env([("LOOP_GUARD_WARN_THRESHOLD".to_string(), "five".to_string())]).is_err());
    /// ```
    pub fn apply_env<I>(&mut self, vars: I) -> Result<(), ConfigError>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        for (var, value) in vars {
            let target: Option<(bool, &str, Kind)> = match var.as_str() {
                "LOOP_GUARD_ENABLED" => Some((true, "enabled", Kind::Bool)),
                "LOOP_GUARD_WARN_THRESHOLD" => Some((false, "warn-threshold", Kind::Int)),
                "LOOP_GUARD_BLOCK_THRESHOLD" => Some((false, "block-threshold", Kind::Int)),
                "LOOP_GUARD_ABORT_THRESHOLD" => Some((true, "abort-after-blocks", Kind::Int)),
                "LOOP_GUARD_IGNORE_TOOLS" => Some((false, "ignore-tools", Kind::List)),
                "LOOP_GUARD_IGNORE_ERRORS" => Some((false, "ignore-errors", Kind::Bool)),
                "LOOP_GUARD_USE_TERMINATE" => Some((true, "terminate", Kind::Bool)),
                _ => None,
            };
            let Some((guard, key, kind)) = target else {
                continue;
            };
            let err = |message: &str| ConfigError::Env {
                var: var.clone(),
                value: value.clone(),
                message: message.to_owned(),
            };
            let v = match kind {
                Kind::Bool => match value.trim().to_ascii_lowercase().as_str() {
                    "1" | "true" | "yes" | "on" => toml::Value::Boolean(true),
                    "0" | "false" | "no" | "off" | "" => toml::Value::Boolean(false),
                    _ => return Err(err("expected true or false")),
                },
                Kind::Int => match value.trim().parse::<i64>() {
                    Ok(n) if n > 0 => toml::Value::Integer(n),
                    Ok(_) => return Err(err("expected a positive integer")),
                    Err(_) => return Err(err("expected a positive integer")),
                },
                Kind::List => toml::Value::Array(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(|s| toml::Value::String(s.to_owned()))
                        .collect(),
                ),
            };
            let table = if guard {
                &mut self.guard
            } else {
                self.detectors
                    .entry("generic-repeat".to_owned())
                    .or_default()
            };
            table.insert(key.to_owned(), v);
        }
        Ok(())
    }

    /// Reads the process environment's `LOOP_GUARD_*` variables (see [`Config::apply_env`]).
    pub fn apply_process_env(&mut self) -> Result<(), ConfigError> {
        self.apply_env(std::env::vars().filter(|(k, _)| k.starts_with("LOOP_GUARD_")))
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Int,
    List,
}

fn find_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            let t = t.trim_start_matches('[').trim_start();
            t.starts_with(key)
                || t.contains(&format!(".{key}]"))
                || t.contains(&format!(".{key}."))
                || t.contains(&format!("\"{key}\""))
        })
        .map(|i| i + 1)
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
        let message = e.into_inner().to_string();
        let message = message.trim_end_matches('\n').to_owned();
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

    #[test]
    fn env_overrides_use_pi_loop_guard_names() {
        let mut c = Config::default();
        c.apply_env([
            ("LOOP_GUARD_ENABLED".into(), "false".into()),
            ("LOOP_GUARD_BLOCK_THRESHOLD".into(), "8".into()),
            ("LOOP_GUARD_ABORT_THRESHOLD".into(), "4".into()),
            ("LOOP_GUARD_IGNORE_TOOLS".into(), "todo, bash".into()),
            ("LOOP_GUARD_IGNORE_ERRORS".into(), "true".into()),
            ("LOOP_GUARD_USE_TERMINATE".into(), "1".into()),
            ("UNRELATED".into(), "x".into()),
        ])
        .unwrap();
        assert_eq!(c.guard["enabled"].as_bool(), Some(false));
        assert_eq!(c.guard["abort-after-blocks"].as_integer(), Some(4));
        assert_eq!(c.guard["terminate"].as_bool(), Some(true));
        let g = &c.detectors["generic-repeat"];
        assert_eq!(g["block-threshold"].as_integer(), Some(8));
        assert_eq!(g["ignore-errors"].as_bool(), Some(true));
        assert_eq!(g["ignore-tools"].as_array().map(Vec::len), Some(2));
        let err = c
            .apply_env([("LOOP_GUARD_ABORT_THRESHOLD".into(), "-1".into())])
            .unwrap_err();
        assert!(err.to_string().contains("LOOP_GUARD_ABORT_THRESHOLD"));
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
