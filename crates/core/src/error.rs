//! Configuration and registry errors.

use std::fmt;

/// Where in which file a configuration problem is.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Location {
    /// The file, when the configuration came from one.
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: "),
            (Some(file), None) => write!(f, "{file}: "),
            (None, Some(line)) => write!(f, "line {line}: "),
            (None, None) => Ok(()),
        }
    }
}

/// A configuration or registry problem. Every message names what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not valid TOML (or JSON, for imported blocks).
    #[error("{at}invalid syntax: {message}")]
    Syntax {
        /// Where.
        at: Location,
        /// The parser's message.
        message: String,
    },
    /// A key has a wrong type or value, is unknown, or breaks an ordering rule.
    #[error("{at}`{path}`: {message}")]
    Invalid {
        /// Where.
        at: Location,
        /// Dotted key path, e.g. `detectors.generic-repeat.warn-threshold`.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// The configuration names a detector nobody registered.
    #[error("{at}unknown detector `{name}` (known detectors: {known})")]
    UnknownDetector {
        /// Where.
        at: Location,
        /// The name used.
        name: String,
        /// The registered names, sorted and comma-separated.
        known: String,
    },
    /// A detector the program knows of is named but its crate was not linked into this program.
    #[error(
        "{at}detector `{name}` is not linked into this program: {hint}; linked detectors: {known}"
    )]
    NotLinked {
        /// Where.
        at: Location,
        /// The detector name.
        name: String,
        /// How to link it (declared with [`known_detectors!`](crate::known_detectors)).
        hint: String,
        /// The linked names.
        known: String,
    },
    /// Two different registrations share one name.
    #[error("two different detectors are registered under the name `{name}` (codes {first} and {second})")]
    Duplicate {
        /// The shared name.
        name: String,
        /// The first registration's code.
        first: String,
        /// The second registration's code.
        second: String,
    },
    /// An environment variable has a value that cannot be used.
    #[error("environment variable {var}={value:?}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
        /// What was wrong.
        message: String,
    },
    /// An unknown preset name.
    #[error("{at}unknown preset `{name}` (known presets: {known})")]
    UnknownPreset {
        /// Where.
        at: Location,
        /// The name used.
        name: String,
        /// Known presets.
        known: String,
    },
    /// A file could not be read.
    #[error("cannot read {file}: {message}")]
    Io {
        /// The file.
        file: String,
        /// The OS message.
        message: String,
    },
}

impl ConfigError {
    /// An invalid-key error without a file.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            at: Location::default(),
            path: path.into(),
            message: message.into(),
        }
    }

    /// Attaches a file name where none is set yet.
    #[must_use]
    pub fn in_file(mut self, file: Option<&str>) -> ConfigError {
        if let Some(file) = file {
            match &mut self {
                ConfigError::Syntax { at, .. }
                | ConfigError::Invalid { at, .. }
                | ConfigError::UnknownDetector { at, .. }
                | ConfigError::NotLinked { at, .. }
                | ConfigError::UnknownPreset { at, .. }
                    if at.file.is_none() =>
                {
                    at.file = Some(file.to_owned());
                }
                _ => {}
            }
        }
        self
    }

    /// The dotted key path, for `Invalid`.
    pub fn path(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }
}
