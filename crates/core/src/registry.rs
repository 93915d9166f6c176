//! Link-time detector registration and deterministic discovery.

use crate::config::Config;
use crate::detector::Detector;
use crate::error::{ConfigError, Location};
use std::collections::BTreeSet;
use std::fmt;

/// Documentation of one detector option (for `loopguard detectors` and generated docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionDoc {
    /// Kebab-case key.
    pub name: &'static str,
    /// Type, as a user writes it (`integer`, `bool`, `list of strings`…).
    pub ty: &'static str,
    /// The default, as TOML.
    pub default: &'static str,
    /// One sentence.
    pub doc: &'static str,
}

/// Builds a detector from its configuration table (without the common `enabled` key).
pub type BuildFn = fn(&toml::Table) -> Result<Box<dyn Detector>, ConfigError>;

/// How an environment variable's text becomes a TOML value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvKind {
    /// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`/empty.
    Bool,
    /// An integer of at least 1.
    PositiveInt,
    /// Comma-separated strings (blank items dropped).
    List,
}

/// An environment variable that sets one key of a table (a detector's, or `[guard]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvVar {
    /// The variable, e.g. `LOOP_GUARD_WARN_THRESHOLD`.
    pub var: &'static str,
    /// The dotted key path inside the table, e.g. `warning-threshold`.
    pub key: &'static str,
    /// How the value is read.
    pub kind: EnvKind,
}

/// A detector's table in one named preset, as TOML text (the table's body, without its
/// `[detectors.<name>]` header). The preset's own data file, when it names the detector, wins
/// key by key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresetTable {
    /// The preset's name, e.g. `default`.
    pub preset: &'static str,
    /// The table, e.g. `"enabled = true\nthreshold = 12\n"`.
    pub toml: &'static str,
}

/// What OpenClaw's master switch (`tools.loopDetection.enabled`, default `false`) does to a
/// detector's `enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MasterSwitch {
    /// Nothing.
    Ignored,
    /// The detector is on exactly when the switch is (and its own toggle, if any, allows).
    Follows,
    /// Only an explicit `false` turns the detector off.
    OffOnly,
}

/// How a detector takes part in the import of OpenClaw's `tools.loopDetection` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenClawImport {
    /// What the master switch does.
    pub master: MasterSwitch,
    /// The detector's own switch under `loopDetection.detectors`, in OpenClaw's spelling.
    pub toggle: Option<&'static str>,
    /// `(OpenClaw key, key)` pairs: a dotted key inside `loopDetection` (a positive integer,
    /// e.g. `historySize` or `postCompactionGuard.windowSize`) and the dotted key of this
    /// detector's table it sets.
    pub keys: &'static [(&'static str, &'static str)],
}

impl OpenClawImport {
    /// No part in the import.
    pub const NONE: OpenClawImport = OpenClawImport {
        master: MasterSwitch::Ignored,
        toggle: None,
        keys: &[],
    };
}

/// A key of a detector's table that was renamed: the old dotted key is still read, moved to
/// the new one with a deprecation note ([`Registry::upgrade`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renamed {
    /// The old dotted key inside the table, e.g. `warn-threshold`.
    pub old: &'static str,
    /// The new one, e.g. `warning-threshold`.
    pub new: &'static str,
}

/// Everything loopguard knows about one detector. Built as a `const` in the detector crate and
/// submitted with [`register_detector!`](crate::register_detector). Core, the orchestrator and
/// the tools know a detector only through this.
#[derive(Clone, Copy)]
pub struct Registration {
    /// Kebab-case name; also the config table name.
    pub name: &'static str,
    /// Stable code, e.g. `LG001`; third parties use their own prefix.
    pub code: &'static str,
    /// One line.
    pub summary: &'static str,
    /// The detector's README (fixed headings).
    pub docs: &'static str,
    /// The Cargo package that defines it (`env!("CARGO_PKG_NAME")`), for generated docs.
    pub package: &'static str,
    /// Whether the detector runs when the configuration does not mention it.
    pub default_enabled: bool,
    /// Documented options: exactly the keys the table accepts besides `enabled` (checked by
    /// [`Registration::accepted_keys`]).
    pub options: &'static [OptionDoc],
    /// Environment variables that set keys of the table ([`Config::apply_env`]).
    pub env: &'static [EnvVar],
    /// The table in named presets.
    pub presets: &'static [PresetTable],
    /// The part it takes in the import of an OpenClaw configuration.
    pub openclaw: OpenClawImport,
    /// Renamed keys still accepted.
    pub renamed: &'static [Renamed],
    /// The constructor.
    pub build: BuildFn,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .field("code", &self.code)
            .finish()
    }
}

impl Registration {
    /// A registration of `name` with only a code, a summary and a constructor: on by default,
    /// no docs, options, environment variables, presets, OpenClaw keys or renamed keys. For
    /// the detectors of tests and examples; set the rest with struct update syntax.
    pub const fn bare(
        name: &'static str,
        code: &'static str,
        summary: &'static str,
        build: BuildFn,
    ) -> Registration {
        Registration {
            name,
            code,
            summary,
            docs: "",
            package: "",
            default_enabled: true,
            options: &[],
            env: &[],
            presets: &[],
            openclaw: OpenClawImport::NONE,
            renamed: &[],
            build,
        }
    }

    fn same_as(&self, other: &Registration) -> bool {
        self.name == other.name && self.code == other.code && self.summary == other.summary
    }

    /// The config path of this detector's table, e.g. `detectors.ping-pong`.
    pub fn scope(&self) -> String {
        format!("detectors.{}", self.name)
    }

    /// The keys the constructor accepts besides `enabled`, read from the error a table with an
    /// unknown key draws (serde's `deny_unknown_fields` lists the expected fields), sorted.
    /// `None` when the constructor does not answer that way (it then cannot be checked).
    ///
    /// Together with [`Registration::options`] this lets a test check that every accepted key
    /// is documented and every documented key is accepted.
    pub fn accepted_keys(&self) -> Option<Vec<String>> {
        self.accepted_keys_in("")
    }

    /// [`Registration::accepted_keys`] of the inner table at dotted `table` (e.g.
    /// `near-duplicate`; empty for the detector's own table).
    pub fn accepted_keys_in(&self, table: &str) -> Option<Vec<String>> {
        const PROBE: &str = "zz-loopguard-probe-key";
        let mut t = toml::Table::new();
        let path = if table.is_empty() {
            PROBE.to_owned()
        } else {
            format!("{table}.{PROBE}")
        };
        crate::config::set_key(&mut t, &path, toml::Value::Boolean(true));
        let Err(e) = (self.build)(&t) else {
            return None;
        };
        let text = e.to_string();
        let rest = text.split_once(&format!("unknown field `{PROBE}`"))?.1;
        // The list ends the line (the deserialiser may add a line naming the table).
        let rest = rest.lines().next().unwrap_or_default();
        let mut keys: Vec<String> = if rest.contains("there are no fields") {
            Vec::new()
        } else {
            rest.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        };
        keys.sort();
        keys.dedup();
        Some(keys)
    }

    /// [`Registration::accepted_keys_in`] without the old spellings of renamed keys (still
    /// accepted, but documented only under their new names).
    pub fn current_keys_in(&self, table: &str) -> Option<BTreeSet<String>> {
        let keys = self.accepted_keys_in(table)?;
        Some(
            keys.into_iter()
                .filter(|k| {
                    let full = if table.is_empty() {
                        k.clone()
                    } else {
                        format!("{table}.{k}")
                    };
                    !self.renamed.iter().any(|r| r.old == full)
                })
                .collect(),
        )
    }

    /// The top-level keys of the documented options (`window` for `window.size`).
    pub fn documented_tops(&self) -> BTreeSet<String> {
        self.options
            .iter()
            .map(|o| o.name.split('.').next().unwrap_or(o.name).to_owned())
            .collect()
    }

    /// The documented keys of the inner table `table`: by dotted names (`window.size`) or by
    /// the option's type (`table {enabled, size}`). Empty when `table` is not an inner table.
    pub fn documented_keys_in(&self, table: &str) -> BTreeSet<String> {
        let mut keys: BTreeSet<String> = self
            .options
            .iter()
            .filter_map(|o| o.name.strip_prefix(table)?.strip_prefix('.'))
            .map(str::to_owned)
            .collect();
        for o in self.options.iter().filter(|o| o.name == table) {
            if let Some(list) =
                o.ty.strip_prefix("table {")
                    .and_then(|t| t.strip_suffix('}'))
            {
                keys.extend(list.split(',').map(|k| k.trim().to_owned()));
            }
        }
        keys
    }

    /// This detector's table in preset `preset`, if it declares one.
    pub fn preset_table(&self, preset: &str) -> Option<Result<toml::Table, ConfigError>> {
        let p = self.presets.iter().find(|p| p.preset == preset)?;
        Some(
            p.toml
                .parse::<toml::Table>()
                .map_err(|e| ConfigError::Syntax {
                    at: Location {
                        file: Some(format!("preset {preset} of detector {}", self.name)),
                        line: e.span().map(|s| crate::config::line_of(p.toml, s.start)),
                    },
                    message: e.message().to_owned(),
                }),
        )
    }
}

#[doc(hidden)]
#[derive(Debug)]
pub struct Submitted(pub &'static Registration);

inventory::collect!(Submitted);

#[doc(hidden)]
#[derive(Debug)]
pub struct KnownNames(pub &'static [&'static str], pub &'static str);

inventory::collect!(KnownNames);

/// Registers a detector at link time. Takes a path to a `const` or `static` [`Registration`].
///
/// ```ignore
/// pub const REGISTRATION: loopguard_core::Registration = /* … */;
/// loopguard_core::register_detector!(REGISTRATION);
/// ```
///
/// The program must link the crate: the `loopguard` facade does it for its features; a
/// third-party crate asks its users to write `use the_crate as _;`.
#[macro_export]
macro_rules! register_detector {
    ($reg:path) => {
        $crate::__private::inventory::submit! {
            $crate::__private::Submitted(&$reg)
        }
    };
}

/// Declares detector names a program knows of whether or not it links them (a facade with one
/// Cargo feature per detector), so that a configuration naming one that is not linked is told
/// "not linked" (with `hint`, how to link it) rather than "unknown".
///
/// ```ignore
/// loopguard_core::known_detectors!(&["my-detector"], "enable the `{name}` feature of `my-facade`");
/// ```
#[macro_export]
macro_rules! known_detectors {
    ($names:expr, $hint:expr) => {
        $crate::__private::inventory::submit! {
            $crate::__private::KnownNames($names, $hint)
        }
    };
}

/// The detectors linked into this program, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    entries: Vec<&'static Registration>,
    /// Names known but maybe not linked, with how to link them.
    known: Vec<(&'static str, &'static str)>,
}

impl Registry {
    /// Every registration submitted with [`register_detector!`](crate::register_detector) in
    /// the linked crates.
    pub fn discover() -> Result<Registry, ConfigError> {
        let r = Registry::from_entries(inventory::iter::<Submitted>.into_iter().map(|s| s.0))?;
        Ok(inventory::iter::<KnownNames>
            .into_iter()
            .fold(r, |r, k| r.knowing(k.0, k.1)))
    }

    /// This registry, also knowing `names` (linked or not); a configuration naming one that is
    /// not linked is told so, with `hint` (`{name}` stands for the name).
    #[must_use]
    pub fn knowing(mut self, names: &'static [&'static str], hint: &'static str) -> Registry {
        for n in names {
            if !self.known.iter().any(|(k, _)| k == n) {
                self.known.push((n, hint));
            }
        }
        self
    }

    /// A registry of exactly these entries (deduplicated; two different entries with one
    /// name are an error).
    pub fn from_entries<I: IntoIterator<Item = &'static Registration>>(
        entries: I,
    ) -> Result<Registry, ConfigError> {
        let mut out: Vec<&'static Registration> = Vec::new();
        for e in entries {
            if let Some(prev) = out.iter().find(|p| p.name == e.name || p.code == e.code) {
                if prev.same_as(e) {
                    continue;
                }
                return Err(ConfigError::Duplicate {
                    name: if prev.name == e.name {
                        e.name.to_owned()
                    } else {
                        e.code.to_owned()
                    },
                    first: prev.code.to_owned(),
                    second: e.code.to_owned(),
                });
            }
            out.push(e);
        }
        out.sort_by_key(|r| r.name);
        Ok(Registry {
            entries: out,
            known: Vec::new(),
        })
    }

    /// Adds entries (e.g. a third party's) to this registry.
    pub fn with<I: IntoIterator<Item = &'static Registration>>(
        self,
        more: I,
    ) -> Result<Registry, ConfigError> {
        let mut r = Registry::from_entries(self.entries.into_iter().chain(more))?;
        r.known = self.known;
        Ok(r)
    }

    /// The registrations, sorted by name.
    pub fn entries(&self) -> &[&'static Registration] {
        &self.entries
    }

    /// The names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|r| r.name).collect()
    }

    /// The registration called `name`.
    pub fn get(&self, name: &str) -> Option<&'static Registration> {
        self.entries.iter().copied().find(|r| r.name == name)
    }

    /// Moves the renamed keys ([`Registration::renamed`]) of every detector table (agents'
    /// too) to their new names, and says so: one note per key found, naming its path. A table
    /// that has both spellings keeps the new one. Apply it to a user's configuration before it
    /// is merged over a preset, so that an old key wins over the preset's new one.
    pub fn upgrade(&self, config: &mut Config) -> Vec<String> {
        let mut notes = Vec::new();
        self.upgrade_tables(config, "", &mut notes);
        let mut agents = std::mem::take(&mut config.agents);
        for (id, a) in &mut agents {
            self.upgrade_tables(a, &format!("agents.{id}."), &mut notes);
        }
        config.agents = agents;
        notes
    }

    fn upgrade_tables(&self, config: &mut Config, prefix: &str, notes: &mut Vec<String>) {
        for reg in &self.entries {
            let Some(table) = config.detectors.get_mut(reg.name) else {
                continue;
            };
            for r in reg.renamed {
                let Some(v) = crate::config::take_key(table, r.old) else {
                    continue;
                };
                let scope = format!("{prefix}detectors.{}", reg.name);
                if crate::config::get_key(table, r.new).is_some() {
                    notes.push(format!(
                        "`{scope}.{}` is deprecated and ignored: `{scope}.{}` is set too",
                        r.old, r.new
                    ));
                } else {
                    notes.push(format!(
                        "`{scope}.{}` is deprecated: write `{}`",
                        r.old, r.new
                    ));
                    crate::config::set_key(table, r.new, v);
                }
            }
        }
    }

    /// Checks that every detector the configuration names is registered.
    pub fn check_names(&self, config: &Config) -> Result<(), ConfigError> {
        let mut names: Vec<&String> = config.detectors.keys().collect();
        for a in config.agents.values() {
            names.extend(a.detectors.keys());
        }
        for name in names {
            if self.get(name).is_none() {
                let known = self.names().join(", ");
                let at = Location {
                    file: config.source.clone(),
                    line: None,
                };
                return Err(
                    if let Some((_, hint)) = self.known.iter().find(|(k, _)| k == name) {
                        ConfigError::NotLinked {
                            at,
                            name: name.clone(),
                            hint: hint.replace("{name}", name),
                            known,
                        }
                    } else {
                        ConfigError::UnknownDetector {
                            at,
                            name: name.clone(),
                            known,
                        }
                    },
                );
            }
        }
        Ok(())
    }

    /// Builds the detectors that `config` enables (its `enabled` key, else the registration's
    /// default), sorted by name.
    pub fn build(&self, config: &Config) -> Result<Vec<Box<dyn Detector>>, ConfigError> {
        self.check_names(config)?;
        let mut out = Vec::new();
        for reg in &self.entries {
            let mut table = config.detectors.get(reg.name).cloned().unwrap_or_default();
            let enabled = match table.remove("enabled") {
                None => reg.default_enabled,
                Some(toml::Value::Boolean(b)) => b,
                Some(other) => {
                    return Err(config.locate(ConfigError::invalid(
                        format!("detectors.{}.enabled", reg.name),
                        format!("expected a boolean, found {}", other.type_str()),
                    )))
                }
            };
            if enabled {
                out.push((reg.build)(&table).map_err(|e| config.locate(e))?);
            } else if config.detectors.contains_key(reg.name) {
                // A disabled detector's table is still checked: a typo must not wait until
                // the day someone turns the detector on.
                (reg.build)(&table).map_err(|e| config.locate(e))?;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::Cx;
    use crate::event::Event;

    struct Nop(&'static str);
    impl Detector for Nop {
        fn name(&self) -> &'static str {
            self.0
        }
        fn observe(&mut self, _: &Event<'_>, _: &mut Cx<'_>) {}
    }

    fn build_a(t: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
        if let Some(k) = t.keys().next() {
            return Err(ConfigError::invalid(
                format!("detectors.alpha.{k}"),
                "unknown key",
            ));
        }
        Ok(Box::new(Nop("alpha")))
    }
    fn build_b(_: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
        Ok(Box::new(Nop("beta")))
    }

    static A: Registration = Registration {
        renamed: &[Renamed {
            old: "old-name",
            new: "new.name",
        }],
        ..Registration::bare("alpha", "TST001", "a", build_a)
    };
    static B: Registration = Registration {
        default_enabled: false,
        presets: &[PresetTable {
            preset: "default",
            toml: "enabled = true\nx = 1\n",
        }],
        ..Registration::bare("beta", "TST002", "b", build_b)
    };
    static A2: Registration = Registration::bare("alpha", "TST009", "another alpha", build_b);

    #[test]
    fn entries_are_sorted_and_deduplicated() {
        let r = Registry::from_entries([&B, &A, &A]).unwrap();
        assert_eq!(r.names(), vec!["alpha", "beta"]);
    }

    #[test]
    fn two_detectors_with_one_name_is_an_error() {
        let err = Registry::from_entries([&A, &A2]).unwrap_err();
        assert!(matches!(err, ConfigError::Duplicate { .. }), "{err}");
        assert!(err.to_string().contains("`alpha`"));
    }

    #[test]
    fn defaults_and_enabled_key_choose_what_is_built() {
        let r = Registry::from_entries([&A, &B]).unwrap();
        let built = r.build(&Config::default()).unwrap();
        assert_eq!(
            built.iter().map(|d| d.name()).collect::<Vec<_>>(),
            vec!["alpha"]
        );
        let c = Config::from_toml_str(
            "[detectors.alpha]\nenabled = false\n[detectors.beta]\nenabled = true\n",
            None,
        )
        .unwrap();
        let built = r.build(&c).unwrap();
        assert_eq!(
            built.iter().map(|d| d.name()).collect::<Vec<_>>(),
            vec!["beta"]
        );
        let c =
            Config::from_toml_str("[detectors.alpha]\nenabled = false\ntypo = 1\n", None).unwrap();
        let err = r.build(&c).unwrap_err();
        assert_eq!(
            err.path(),
            Some("detectors.alpha.typo"),
            "a disabled table is still checked"
        );
        let c = Config::from_toml_str("[detectors.beta]\nenabled = 1\n", Some("f.toml")).unwrap();
        let err = r.build(&c).unwrap_err();
        assert_eq!(err.path(), Some("detectors.beta.enabled"));
        assert!(err.to_string().starts_with("f.toml:2: "), "{err}");
    }

    #[test]
    fn unknown_and_unlinked_names_list_the_known_ones() {
        let r = Registry::from_entries([&A, &B]).unwrap();
        let c = Config::from_toml_str("[detectors.gamma]\n", None).unwrap();
        let err = r.build(&c).unwrap_err();
        assert!(matches!(err, ConfigError::UnknownDetector { .. }));
        assert!(err.to_string().contains("alpha, beta"), "{err}");
        let c = Config::from_toml_str("[detectors.ping-pong]\n", None).unwrap();
        let err = r.build(&c).unwrap_err();
        assert!(matches!(err, ConfigError::UnknownDetector { .. }), "{err}");
        let r = r.knowing(&["ping-pong"], "link `{name}`");
        let err = r.build(&c).unwrap_err();
        assert!(matches!(err, ConfigError::NotLinked { .. }), "{err}");
        assert!(err.to_string().contains("link `ping-pong`"), "{err}");
        let r = r.with([&A]).unwrap();
        assert!(matches!(r.build(&c), Err(ConfigError::NotLinked { .. })));
    }

    #[test]
    fn accepted_keys_come_from_the_unknown_key_error() {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        #[allow(dead_code)]
        struct Opts {
            warning_threshold: Option<u32>,
            history_size: Option<u32>,
        }
        fn build(t: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
            let _: Opts = crate::parse_options("detectors.o", t)?;
            Ok(Box::new(Nop("o")))
        }
        let mut o = A;
        o.build = build;
        assert_eq!(
            o.accepted_keys(),
            Some(vec![
                "history-size".to_owned(),
                "warning-threshold".to_owned()
            ])
        );
        // A constructor that does not name the expected keys cannot be checked.
        assert_eq!(B.accepted_keys(), None);
    }

    #[test]
    fn preset_tables_parse_and_renamed_keys_move_with_a_note() {
        let t = B.preset_table("default").unwrap().unwrap();
        assert_eq!(t["x"].as_integer(), Some(1));
        assert!(B.preset_table("openclaw").is_none());
        let r = Registry::from_entries([&A, &B]).unwrap();
        let mut c = Config::from_toml_str(
            "[detectors.alpha]\nold-name = 3\n[agents.z.detectors.alpha]\nold-name = 4\nnew = { name = 5 }\n",
            None,
        )
        .unwrap();
        let notes = r.upgrade(&mut c);
        assert_eq!(c.detectors["alpha"]["new"]["name"].as_integer(), Some(3));
        assert!(!c.detectors["alpha"].contains_key("old-name"));
        assert_eq!(
            c.agents["z"].detectors["alpha"]["new"]["name"].as_integer(),
            Some(5)
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("`detectors.alpha.old-name` is deprecated: write `new.name`"));
        assert!(notes[1].contains("agents.z.detectors.alpha.old-name"));
        assert!(
            r.upgrade(&mut c).is_empty(),
            "once upgraded, nothing is left"
        );
    }

    #[test]
    fn build_errors_carry_the_file_and_line() {
        let r = Registry::from_entries([&A]).unwrap();
        let c = Config::from_toml_str("[detectors.alpha]\nx = 1\n", Some("g.toml")).unwrap();
        let err = r.build(&c).unwrap_err();
        assert_eq!(
            err.to_string(),
            "g.toml:2: `detectors.alpha.x`: unknown key"
        );
    }
}
