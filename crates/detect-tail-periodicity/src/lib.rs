#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod exact;
pub mod oracle;
mod seed;

pub use detector::{Prep, TailPeriodicity};
pub use exact::{Finder, TailMatcher};
pub use seed::SeedScanner;

use loopguard_core::{ConfigError, Detector, OptionDoc, Registration};
use serde::{Deserialize, Serialize};

/// The registered name.
pub const NAME: &str = "tail-periodicity";

/// Which engine runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Exact and online: fires on the character that completes the last copy.
    #[default]
    Exact,
    /// The seed's rescans (every `rescan-every` characters, units `min-unit..=max-unit`
    /// tested in ascending order). The pi-repetition-guard preset uses it.
    Seed,
}

/// `[detectors.tail-periodicity]` as written in TOML. Every key is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Shortest unit, in characters (default 30).
    pub min_unit: Option<usize>,
    /// Longest unit, in characters: how far back a unit can reach; memory is about
    /// `min-copies × max-unit` characters (default 65536).
    pub max_unit: Option<usize>,
    /// Contiguous copies needed at the tail (default 2).
    pub min_copies: Option<usize>,
    /// Units at least this long need only `min-copies` copies; shorter ones also need
    /// `root-copies` copies of their primitive root (default 512; set it to `min-unit` for
    /// the seed's rule).
    pub long_unit: Option<usize>,
    /// Copies of the primitive root needed for units shorter than `long-unit` (default 4,
    /// between 2 and twice `min-copies`).
    pub root_copies: Option<usize>,
    /// `"exact"` (default) or `"seed"`.
    pub algorithm: Option<Algorithm>,
    /// Seed engine only: characters of growth between scans (default 200).
    pub rescan_every: Option<usize>,
    /// Runs of filler characters (neither letter nor digit: whitespace, punctuation,
    /// box drawing) longer than this are cut to this length before the search, so padding
    /// and separator lines never form units; 0 turns it off (default 16).
    pub max_filler_run: Option<usize>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Shortest unit.
    pub min_unit: usize,
    /// Longest unit.
    pub max_unit: usize,
    /// Copies needed.
    pub min_copies: usize,
    /// Units at least this long need only `min_copies` copies.
    pub long_unit: usize,
    /// Copies of the primitive root needed below `long_unit`.
    pub root_copies: usize,
    /// The engine.
    pub algorithm: Algorithm,
    /// Seed engine rescan cadence.
    pub rescan_every: usize,
    /// Filler-run cut (0 = off).
    pub max_filler_run: usize,
}

impl Settings {
    /// Default shortest unit.
    pub const DEFAULT_MIN_UNIT: usize = 30;
    /// Default longest unit (64 Ki characters).
    pub const DEFAULT_MAX_UNIT: usize = 65_536;
    /// Default copies.
    pub const DEFAULT_MIN_COPIES: usize = 2;
    /// Default long-unit threshold.
    pub const DEFAULT_LONG_UNIT: usize = 512;
    /// Default root copies for short units.
    pub const DEFAULT_ROOT_COPIES: usize = 4;
    /// Default seed rescan cadence.
    pub const DEFAULT_RESCAN_EVERY: usize = 200;
    /// Default filler-run cut.
    pub const DEFAULT_MAX_FILLER_RUN: usize = 16;
    /// The largest accepted `max-unit` (bounds memory at a few MiB).
    pub const MAX_UNIT_LIMIT: usize = 262_144;
    /// The largest accepted `min-copies`.
    pub const MAX_COPIES_LIMIT: usize = 8;

    /// The pi-repetition-guard preset: the seed's rescans, units 30..=3000, 2 copies, no
    /// filler cut.
    pub fn pi_repetition_guard() -> Settings {
        Settings {
            algorithm: Algorithm::Seed,
            max_unit: 3000,
            long_unit: 30,
            root_copies: 2,
            max_filler_run: 0,
            ..Settings::default()
        }
    }

    /// Resolves and validates `[detectors.tail-periodicity]`.
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let s = Settings {
            min_unit: o.min_unit.unwrap_or(Self::DEFAULT_MIN_UNIT),
            max_unit: o.max_unit.unwrap_or(Self::DEFAULT_MAX_UNIT),
            min_copies: o.min_copies.unwrap_or(Self::DEFAULT_MIN_COPIES),
            long_unit: o.long_unit.unwrap_or(Self::DEFAULT_LONG_UNIT),
            root_copies: o.root_copies.unwrap_or(Self::DEFAULT_ROOT_COPIES),
            algorithm: o.algorithm.unwrap_or_default(),
            rescan_every: o.rescan_every.unwrap_or(Self::DEFAULT_RESCAN_EVERY),
            max_filler_run: o.max_filler_run.unwrap_or(Self::DEFAULT_MAX_FILLER_RUN),
        };
        let key = |k: &str| format!("detectors.{NAME}.{k}");
        if s.min_unit == 0 {
            return Err(ConfigError::invalid(key("min-unit"), "must be at least 1"));
        }
        if s.max_unit < s.min_unit {
            return Err(ConfigError::invalid(
                key("max-unit"),
                "must not be lower than min-unit",
            ));
        }
        if s.max_unit > Self::MAX_UNIT_LIMIT {
            return Err(ConfigError::invalid(
                key("max-unit"),
                format!(
                    "must be at most {} (memory is about min-copies × max-unit characters)",
                    Self::MAX_UNIT_LIMIT
                ),
            ));
        }
        if !(2..=Self::MAX_COPIES_LIMIT).contains(&s.min_copies) {
            return Err(ConfigError::invalid(
                key("min-copies"),
                format!("must be between 2 and {}", Self::MAX_COPIES_LIMIT),
            ));
        }
        if s.root_copies < 2 || s.root_copies > 2 * s.min_copies {
            return Err(ConfigError::invalid(
                key("root-copies"),
                "must be between 2 and twice min-copies",
            ));
        }
        if s.rescan_every == 0 {
            return Err(ConfigError::invalid(
                key("rescan-every"),
                "must be at least 1",
            ));
        }
        Ok(s)
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            min_unit: Self::DEFAULT_MIN_UNIT,
            max_unit: Self::DEFAULT_MAX_UNIT,
            min_copies: Self::DEFAULT_MIN_COPIES,
            long_unit: Self::DEFAULT_LONG_UNIT,
            root_copies: Self::DEFAULT_ROOT_COPIES,
            algorithm: Algorithm::Exact,
            rescan_every: Self::DEFAULT_RESCAN_EVERY,
            max_filler_run: Self::DEFAULT_MAX_FILLER_RUN,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    let options: Options = loopguard_core::parse_options(&format!("detectors.{NAME}"), table)?;
    Ok(Box::new(TailPeriodicity::new(Settings::from_options(
        &options,
    )?)))
}

/// The registration.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG007",
    summary: "streamed text whose tail is two or more exact copies of one unit of 30+ characters",
    docs: include_str!("../README.md"),
    default_enabled: true,
    options: &[
        OptionDoc { name: "min-unit", ty: "integer", default: "30", doc: "Shortest unit, in characters." },
        OptionDoc {
            name: "max-unit",
            ty: "integer",
            default: "65536",
            doc: "Longest unit, in characters; memory is about min-copies × max-unit characters.",
        },
        OptionDoc { name: "min-copies", ty: "integer", default: "2", doc: "Contiguous copies needed at the tail." },
        OptionDoc {
            name: "long-unit",
            ty: "integer",
            default: "512",
            doc: "Units at least this long need only min-copies copies; shorter ones also need root-copies copies of their primitive root.",
        },
        OptionDoc {
            name: "root-copies",
            ty: "integer",
            default: "4",
            doc: "Copies of the primitive root needed for units shorter than long-unit (2 to twice min-copies).",
        },
        OptionDoc {
            name: "algorithm",
            ty: "\"exact\" | \"seed\"",
            default: "\"exact\"",
            doc: "Exact online engine, or the seed's periodic rescans.",
        },
        OptionDoc {
            name: "rescan-every",
            ty: "integer",
            default: "200",
            doc: "Seed engine only: characters of growth between scans.",
        },
        OptionDoc {
            name: "max-filler-run",
            ty: "integer",
            default: "16",
            doc: "Runs of non-alphanumeric characters are cut to this length before the search (0 = off).",
        },
    ],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
