//! Link-time detector registration and deterministic discovery.

use crate::config::Config;
use crate::detector::Detector;
use crate::error::{ConfigError, Location};
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

/// Everything loopguard knows about one detector. Built as a `const` in the detector crate and
/// submitted with [`register_detector!`](crate::register_detector).
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
    /// Whether the detector runs when the configuration does not mention it.
    pub default_enabled: bool,
    /// Documented options.
    pub options: &'static [OptionDoc],
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
    fn same_as(&self, other: &Registration) -> bool {
        self.name == other.name && self.code == other.code && self.summary == other.summary
    }
}

#[doc(hidden)]
#[derive(Debug)]
pub struct Submitted(pub &'static Registration);

inventory::collect!(Submitted);

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

/// The names of loopguard's own detectors, whether linked or not (to tell "not linked" from
/// "unknown").
pub const BUILTIN_NAMES: &[&str] = &[
    "circuit-breaker",
    "generic-repeat",
    "known-poll-no-progress",
    "ping-pong",
    "post-compaction-guard",
    "same-failure",
    "stalled-turns",
    "tail-periodicity",
    "unknown-tool",
    "variation-loop",
];

/// The detectors linked into this program, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    entries: Vec<&'static Registration>,
}

impl Registry {
    /// Every registration submitted with [`register_detector!`](crate::register_detector) in
    /// the linked crates.
    pub fn discover() -> Result<Registry, ConfigError> {
        Registry::from_entries(inventory::iter::<Submitted>.into_iter().map(|s| s.0))
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
        Ok(Registry { entries: out })
    }

    /// Adds entries (e.g. a third party's) to this registry.
    pub fn with<I: IntoIterator<Item = &'static Registration>>(
        self,
        more: I,
    ) -> Result<Registry, ConfigError> {
        Registry::from_entries(self.entries.into_iter().chain(more))
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
                return Err(if BUILTIN_NAMES.contains(&name.as_str()) {
                    ConfigError::NotLinked {
                        at,
                        name: name.clone(),
                        known,
                    }
                } else {
                    ConfigError::UnknownDetector {
                        at,
                        name: name.clone(),
                        known,
                    }
                });
            }
        }
        Ok(())
    }

    /// Builds the detectors that `config` enables (its `enabled` key, else the registration's
    /// default), sorted by name.
    pub fn build(&self, config: &Config) -> Result<Vec<Box<dyn Detector>>, ConfigError> {
        self.check_names(config)?;
        let file = config.source.as_deref();
        let mut out = Vec::new();
        for reg in &self.entries {
            let mut table = config.detectors.get(reg.name).cloned().unwrap_or_default();
            let enabled = match table.remove("enabled") {
                None => reg.default_enabled,
                Some(toml::Value::Boolean(b)) => b,
                Some(other) => {
                    return Err(ConfigError::invalid(
                        format!("detectors.{}.enabled", reg.name),
                        format!("expected a boolean, found {}", other.type_str()),
                    )
                    .in_file(file))
                }
            };
            if enabled {
                out.push((reg.build)(&table).map_err(|e| e.in_file(file))?);
            } else if config.detectors.contains_key(reg.name) {
                // A disabled detector's table is still checked: a typo must not wait until
                // the day someone turns the detector on.
                (reg.build)(&table).map_err(|e| e.in_file(file))?;
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
        name: "alpha",
        code: "TST001",
        summary: "a",
        docs: "",
        default_enabled: true,
        options: &[],
        build: build_a,
    };
    static B: Registration = Registration {
        name: "beta",
        code: "TST002",
        summary: "b",
        docs: "",
        default_enabled: false,
        options: &[],
        build: build_b,
    };
    static A2: Registration = Registration {
        name: "alpha",
        code: "TST009",
        summary: "another alpha",
        docs: "",
        default_enabled: true,
        options: &[],
        build: build_b,
    };

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
        assert!(err.to_string().starts_with("f.toml: "), "{err}");
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
        assert!(matches!(err, ConfigError::NotLinked { .. }), "{err}");
    }

    #[test]
    fn build_errors_carry_the_file() {
        let r = Registry::from_entries([&A]).unwrap();
        let c = Config::from_toml_str("[detectors.alpha]\nx = 1\n", Some("g.toml")).unwrap();
        let err = r.build(&c).unwrap_err();
        assert_eq!(err.to_string(), "g.toml: `detectors.alpha.x`: unknown key");
    }
}
