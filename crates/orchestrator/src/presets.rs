//! Named presets: `default` (loopguard's own) and one per seed system, the checks a resolved
//! configuration must pass, and its rendering for `loopguard config check`.

use crate::openclaw::{dotted, mapped, CRITICAL, GLOBAL};
use crate::options::Policy;
use loopguard_core::{get_key, Config, ConfigError, KeyLines, Location, Registry};
use std::fmt::Write as _;

/// The preset names, `default` first.
pub const PRESETS: &[&str] = &[
    "default",
    "pi-loop-guard",
    "pi-repetition-guard",
    "openclaw",
];

/// The TOML text of preset `name`.
pub fn preset_text(name: &str) -> Option<&'static str> {
    Some(match name {
        "default" => include_str!("../presets/default.toml"),
        "pi-loop-guard" => include_str!("../presets/pi-loop-guard.toml"),
        "pi-repetition-guard" => include_str!("../presets/pi-repetition-guard.toml"),
        "openclaw" => include_str!("../presets/openclaw.toml"),
        _ => return None,
    })
}

/// The configuration of preset `name`, with the tables the linked detectors declare for it
/// ([`Registry::discover`]; see [`preset_with`]).
///
/// ```
/// let c = loopguard_orchestrator::preset("pi-loop-guard").unwrap();
/// assert_eq!(c.guard["abort-after-blocks"].as_integer(), Some(3));
/// assert!(loopguard_orchestrator::preset("nope").is_err());
/// ```
pub fn preset(name: &str) -> Result<Config, ConfigError> {
    preset_with(name, &Registry::discover()?)
}

/// The configuration of preset `name`: its data file, over the table each detector of
/// `registry` declares for it ([`loopguard_core::Registration::presets`]; a detector the data
/// file does not name — a third party's — takes part in the preset this way).
pub fn preset_with(name: &str, registry: &Registry) -> Result<Config, ConfigError> {
    let Some(text) = preset_text(name) else {
        return Err(ConfigError::UnknownPreset {
            at: Location::default(),
            name: name.to_owned(),
            known: PRESETS.join(", "),
        });
    };
    let file = Config::from_toml_str(text, Some(&format!("preset {name}")))?;
    let mut c = Config::default();
    for reg in registry.entries() {
        if let Some(table) = reg.preset_table(name) {
            c.detectors.insert(reg.name.to_owned(), table?);
        }
    }
    c.merge_from(&file);
    c.preset = Some(name.to_owned());
    Ok(c)
}

/// `config` resolved over its preset (`default` when it names none): the preset's tables
/// first, the configuration's keys over them. Renamed keys of the configuration are moved to
/// their new names first, with a note in [`Config::warnings`]. Resolving twice gives the same
/// result. Uses the detectors linked into the program; see [`resolve_with`].
pub fn resolve(config: &Config) -> Result<Config, ConfigError> {
    resolve_with(config, &Registry::discover()?)
}

/// [`resolve`] with the detectors of `registry`.
pub fn resolve_with(config: &Config, registry: &Registry) -> Result<Config, ConfigError> {
    let name = config.preset.as_deref().unwrap_or("default");
    let mut base = preset_with(name, registry).map_err(|e| e.in_file(config.source.as_deref()))?;
    base.merge_from(&upgraded(config, registry));
    base.preset = Some(name.to_owned());
    base.source.clone_from(&config.source);
    base.lines.clone_from(&config.lines);
    Ok(base)
}

/// `config` with its renamed keys moved to their new names, a note for each in
/// [`Config::warnings`] (prefixed with the file the configuration came from).
pub(crate) fn upgraded(config: &Config, registry: &Registry) -> Config {
    let mut user = config.clone();
    let notes = registry.upgrade(&mut user);
    let file = config.source.as_deref();
    user.warnings.extend(notes.into_iter().map(|n| match file {
        Some(f) => format!("{f}: {n}"),
        None => n,
    }));
    user
}

/// Checks a resolved configuration against a registry: every named detector is registered,
/// every detector table and the `[guard]` table parse (the defaults and each agent's merged
/// view), and the cross-detector ordering holds. Errors name the key path and the file.
pub fn check_config(config: &Config, registry: &Registry) -> Result<(), ConfigError> {
    registry.check_names(config)?;
    let mut base = config.clone();
    base.agents.clear();
    let mut views = vec![(String::new(), base)];
    for id in config.agents.keys() {
        views.push((format!("agents.{id}."), config.for_agent(id)));
    }
    // A view's errors name its own keys (an agent's without `agents.<id>.`): the view does
    // not locate them; the configuration does, once they carry their whole path.
    for (_, view) in &mut views {
        view.lines = KeyLines::default();
    }
    for (prefix, view) in views {
        let prefixed = |e: ConfigError| match e {
            ConfigError::Invalid { at, path, message } if !prefix.is_empty() => {
                ConfigError::Invalid {
                    at,
                    path: format!("{prefix}{path}"),
                    message,
                }
            }
            other => other,
        };
        // The view's errors name its keys; the configuration locates them in its file.
        let located = |e: ConfigError| config.locate(prefixed(e));
        Policy::from_table(&view.guard).map_err(located)?;
        registry.build(&view).map_err(located)?;
        check_ordering(&view, registry).map_err(located)?;
    }
    Ok(())
}

fn enabled(c: &Config, name: &str) -> bool {
    c.detectors
        .get(name)
        .and_then(|t| t.get("enabled"))
        .and_then(toml::Value::as_bool)
        .unwrap_or(true)
}

/// OpenClaw's rule across detectors: every key its `criticalThreshold` sets stays lower than
/// every key its `globalCircuitBreakerThreshold` sets (the mapping comes from the
/// registrations), where both detectors are on and both keys are set.
fn check_ordering(c: &Config, registry: &Registry) -> Result<(), ConfigError> {
    let value = |(d, k): (&str, &str)| {
        c.detectors
            .get(d)
            .and_then(|t| get_key(t, k))
            .and_then(toml::Value::as_integer)
    };
    for global_key in mapped(registry, GLOBAL) {
        let Some(global) = value(global_key) else {
            continue;
        };
        if !enabled(c, global_key.0) {
            continue;
        }
        for key in mapped(registry, CRITICAL) {
            let Some(critical) = value(key) else {
                continue;
            };
            if enabled(c, key.0) && critical >= global {
                return Err(ConfigError::invalid(
                    dotted(global_key),
                    format!(
                        "{} must be lower than {} (found {critical} and {global})",
                        dotted(key),
                        dotted(global_key)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Renders a resolved configuration for `loopguard config check`: the preset, every `[guard]`
/// key with its effective value, each registered detector with `enabled` and its keys (the
/// documented defaults of unset keys as comments), and the agent overrides. Fails with the
/// same errors as building a guard.
pub fn render_resolved(config: &Config, registry: &Registry) -> Result<String, ConfigError> {
    check_config(config, registry)?;
    let file = config.source.as_deref();
    let settings = Policy::from_table(&config.guard).map_err(|e| config.locate(e))?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# resolved configuration{}",
        file.map(|f| format!(" of {f}")).unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "preset = {}",
        toml::Value::String(config.preset.clone().unwrap_or_else(|| "default".into()))
    );
    for w in &config.warnings {
        let _ = writeln!(out, "# warning: {w}");
    }
    let _ = writeln!(out, "\n[guard]");
    write_table(&mut out, &settings.to_table());
    for reg in registry.entries() {
        let table = config.detectors.get(reg.name).cloned().unwrap_or_default();
        let on = table
            .get("enabled")
            .and_then(toml::Value::as_bool)
            .unwrap_or(reg.default_enabled);
        let _ = writeln!(
            out,
            "\n[detectors.{}] # {} {}",
            reg.name,
            reg.code,
            if on { "on" } else { "off" }
        );
        let _ = writeln!(out, "enabled = {on}");
        let mut rest = table.clone();
        rest.remove("enabled");
        write_table(&mut out, &rest);
        for opt in reg.options {
            if !rest.contains_key(opt.name) {
                let _ = writeln!(out, "# {} = {} (default)", opt.name, opt.default);
            }
        }
    }
    for (name, t) in &config.tools {
        if let toml::Value::Table(t) = t {
            let _ = writeln!(out, "\n[tools.{name}]");
            write_table(&mut out, t);
        }
    }
    for (id, a) in &config.agents {
        if !a.guard.is_empty() {
            let _ = writeln!(out, "\n[agents.{id}.guard]");
            write_table(&mut out, &a.guard);
        }
        for (name, t) in &a.detectors {
            let _ = writeln!(out, "\n[agents.{id}.detectors.{name}]");
            write_table(&mut out, t);
        }
    }
    Ok(out)
}

fn write_table(out: &mut String, t: &toml::Table) {
    for (k, v) in t {
        let _ = writeln!(out, "{k} = {v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_detect_circuit_breaker as _;
    use loopguard_detect_generic_repeat as _;
    use loopguard_detect_known_poll as _;
    use loopguard_detect_ping_pong as _;

    #[test]
    fn every_preset_parses_and_names_itself() {
        for name in PRESETS {
            let c = preset(name).unwrap();
            assert_eq!(c.preset.as_deref(), Some(*name));
            Policy::from_table(&c.guard).unwrap();
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let err = preset("openclaw2").unwrap_err();
        assert!(
            err.to_string()
                .contains("default, pi-loop-guard, pi-repetition-guard, openclaw"),
            "{err}"
        );
        let c = Config {
            preset: Some("nope".into()),
            source: Some("x.toml".into()),
            ..Config::default()
        };
        let err = resolve(&c).unwrap_err();
        assert!(
            err.to_string().starts_with("x.toml: unknown preset `nope`"),
            "{err}"
        );
    }

    #[test]
    fn resolve_puts_user_keys_over_the_preset_and_is_idempotent() {
        let user = Config::from_toml_str(
            "preset = \"pi-loop-guard\"\n[guard]\nabort-after-blocks = 5\n",
            Some("u.toml"),
        )
        .unwrap();
        let r = resolve(&user).unwrap();
        assert_eq!(r.guard["abort-after-blocks"].as_integer(), Some(5));
        assert_eq!(r.preset.as_deref(), Some("pi-loop-guard"));
        assert_eq!(r.source.as_deref(), Some("u.toml"));
        assert_eq!(resolve(&r).unwrap(), r);
        let d = resolve(&Config::default()).unwrap();
        assert_eq!(d.preset.as_deref(), Some("default"));
    }

    #[test]
    fn j63_critical_must_stay_below_global() {
        let c = Config::from_toml_str(
            "[detectors.generic-repeat.openclaw]\ncritical-threshold = 30\n[detectors.circuit-breaker]\nthreshold = 30\n",
            None,
        )
        .unwrap();
        let r = Registry::discover().unwrap();
        let err = check_ordering(&c, &r).unwrap_err();
        assert_eq!(err.path(), Some("detectors.circuit-breaker.threshold"));
        assert!(
            err.to_string().contains(
                "generic-repeat.openclaw.critical-threshold must be lower than \
                 detectors.circuit-breaker.threshold (found 30 and 30)"
            ),
            "{err}"
        );
        let ok = Config::from_toml_str(
            "[detectors.known-poll-no-progress]\ncritical-threshold = 20\n[detectors.circuit-breaker]\nthreshold = 30\n",
            None,
        )
        .unwrap();
        check_ordering(&ok, &r).unwrap();
    }
}
