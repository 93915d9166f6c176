#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
pub mod evidence;
mod exact;
pub mod oracle;
mod seed;

pub use detector::{measure_runs, Lines, MeasuredRun, Prep, TailPeriodicity};
pub use evidence::{Row, Run, RunTracker};
pub use exact::{Finder, TailMatcher};
pub use seed::SeedScanner;

use loopguard_core::{ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The registered name.
pub const NAME: &str = "tail-periodicity";

const SCOPE: &str = "detectors.tail-periodicity";

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

/// How the exact engine decides.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// By the evidence of the periodic tail: its span and its copies of the primitive root,
    /// against thresholds per root length measured on legitimate text (stricter in code).
    #[default]
    Evidence,
    /// By copies: `min-copies` copies of a unit, and `root-copies` copies of its root below
    /// `long-unit`.
    Copies,
}

/// Thresholds for prose, by root length: 1.5 × the longest span and the most copies of
/// an exact periodic run measured in that root bucket on the legitimate-text set (see the
/// README), rounded up; roots of up to 8 characters count by span only, never by copies.
/// Buckets with little or no prose data take a floor (300–400 characters for tiny roots,
/// 3 copies for long ones).
pub const PROSE_TABLE: &[Row] = &[
    Row {
        max_root: 2,
        span: 300,
        copies: 0,
    },
    Row {
        max_root: 8,
        span: 400,
        copies: 0,
    },
    Row {
        max_root: 16,
        span: 272,
        copies: 17,
    },
    Row {
        max_root: 32,
        span: 279,
        copies: 9,
    },
    Row {
        max_root: 64,
        span: 201,
        copies: 3,
    },
    Row {
        max_root: 128,
        span: 399,
        copies: 3,
    },
    Row {
        max_root: 256,
        span: 554,
        copies: 3,
    },
    Row {
        max_root: u32::MAX,
        span: 0,
        copies: 3,
    },
];

/// Thresholds inside code fences and in a message that is a file being written (most of
/// its lines look like code), measured the same way on code.
pub const CODE_TABLE: &[Row] = &[
    Row {
        max_root: 4,
        span: 500,
        copies: 0,
    },
    Row {
        max_root: 8,
        span: 2306,
        copies: 0,
    },
    Row {
        max_root: 16,
        span: 636,
        copies: 48,
    },
    Row {
        max_root: 32,
        span: 1511,
        copies: 62,
    },
    Row {
        max_root: 64,
        span: 1089,
        copies: 32,
    },
    Row {
        max_root: 128,
        span: 12023,
        copies: 120,
    },
    Row {
        max_root: 256,
        span: 1047,
        copies: 6,
    },
    Row {
        max_root: 512,
        span: 1575,
        copies: 3,
    },
    Row {
        max_root: 1024,
        span: 2657,
        copies: 3,
    },
    Row {
        max_root: 4096,
        span: 6032,
        copies: 3,
    },
    Row {
        max_root: u32::MAX,
        span: 27989,
        copies: 3,
    },
];

/// Thresholds for runs whose copies differ only in their numbers (a counter, an id, a
/// timing), in prose sentences: each maximal run of digits is read as one symbol, lines that
/// do not open with a letter cut the run, and a root must hold 1 to [`NOISY_MAX_NUMBERS`]
/// numbers and at least [`NOISY_MIN_LETTERS`] letters. 1.5 × the longest such legitimate run per bucket (span and
/// copies), measured like the exact rows; no legitimate run had a root over 256 (floor: 4).
pub const NOISY_TABLE: &[Row] = &[
    Row {
        max_root: 32,
        span: 174,
        copies: 6,
    },
    Row {
        max_root: 64,
        span: 660,
        copies: 12,
    },
    Row {
        max_root: 128,
        span: 803,
        copies: 9,
    },
    Row {
        max_root: 256,
        span: 600,
        copies: 5,
    },
    Row {
        max_root: u32::MAX,
        span: 0,
        copies: 4,
    },
];

/// Most numbers a root may hold for the noisy rule: copies then differ in at most this many
/// tokens (a bounded number of mismatches), so a templated text whose every figure advances
/// is not a loop.
pub const NOISY_MAX_NUMBERS: usize = 8;

/// Letters a root needs for the noisy rule (sentences, not number tables).
pub const NOISY_MIN_LETTERS: usize = 16;

/// Spaces a line needs to continue a noisy run (four words: a sentence, not a log line, a
/// path or a name and its value).
pub const NOISY_MIN_SPACES: u32 = 3;

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
    /// Exact engine: `"evidence"` (default) or `"copies"`.
    pub rule: Option<Rule>,
    /// Evidence rule: every span threshold scaled by this percentage (default 100; lower
    /// fires sooner on a runaway, higher is safer on repetitive legitimate text).
    pub evidence_scale: Option<u32>,
    /// Evidence rule: a message that is nothing but one root repeated, from its first
    /// character, fires at this many copies (default 16; 0 = off).
    pub chant_copies: Option<usize>,
    /// Evidence rule: also follow runs whose copies differ only in their numbers (a counter
    /// that advances), in prose (default true).
    pub counter_noise: Option<bool>,
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
    /// The exact engine's rule.
    pub rule: Rule,
    /// Evidence rule: span thresholds scale, in percent.
    pub evidence_scale: u32,
    /// Evidence rule: copies of a chant that fill the whole message (0 = off).
    pub chant_copies: usize,
    /// Evidence rule: runs whose copies differ only in their numbers.
    pub counter_noise: bool,
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
    /// Default evidence scale (percent).
    pub const DEFAULT_EVIDENCE_SCALE: u32 = 100;
    /// Default chant copies.
    pub const DEFAULT_CHANT_COPIES: usize = 16;
    /// The largest accepted `max-unit` (bounds memory at a few MiB).
    pub const MAX_UNIT_LIMIT: usize = 262_144;
    /// The largest accepted `min-copies`.
    pub const MAX_COPIES_LIMIT: usize = 8;

    /// The pi-repetition-guard preset: the seed's rescans, units 30..=3000, 2 copies, no
    /// filler cut.
    pub fn pi_repetition_guard() -> Settings {
        Settings {
            algorithm: Algorithm::Seed,
            rule: Rule::Copies,
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
            rule: o.rule.unwrap_or_default(),
            evidence_scale: o.evidence_scale.unwrap_or(Self::DEFAULT_EVIDENCE_SCALE),
            chant_copies: o.chant_copies.unwrap_or(Self::DEFAULT_CHANT_COPIES),
            counter_noise: o.counter_noise.unwrap_or(true),
            rescan_every: o.rescan_every.unwrap_or(Self::DEFAULT_RESCAN_EVERY),
            max_filler_run: o.max_filler_run.unwrap_or(Self::DEFAULT_MAX_FILLER_RUN),
        };
        let scope = Scope::new(SCOPE);
        scope.positive("min-unit", Some(s.min_unit), 1)?;
        // Memory is about min-copies × max-unit characters.
        scope.between(
            "max-unit",
            Some(s.max_unit),
            s.max_unit,
            s.min_unit,
            Self::MAX_UNIT_LIMIT,
        )?;
        scope.between(
            "min-copies",
            Some(s.min_copies),
            s.min_copies,
            2,
            Self::MAX_COPIES_LIMIT,
        )?;
        scope.between(
            "root-copies",
            Some(s.root_copies),
            s.root_copies,
            2,
            2 * s.min_copies,
        )?;
        scope.between(
            "evidence-scale",
            Some(s.evidence_scale),
            s.evidence_scale,
            10,
            1000,
        )?;
        if s.chant_copies == 1 {
            return Err(scope.invalid("chant-copies", "must be 0 (off) or at least 2 (found 1)"));
        }
        scope.positive("rescan-every", Some(s.rescan_every), 1)?;
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
            rule: Rule::Evidence,
            evidence_scale: Self::DEFAULT_EVIDENCE_SCALE,
            chant_copies: Self::DEFAULT_CHANT_COPIES,
            counter_noise: true,
            rescan_every: Self::DEFAULT_RESCAN_EVERY,
            max_filler_run: Self::DEFAULT_MAX_FILLER_RUN,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    loopguard_core::build_detector(
        &format!("detectors.{NAME}"),
        table,
        Settings::from_options,
        TailPeriodicity::new,
    )
}

/// The registration.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG007",
    summary: "streamed text whose tail is a longer exact periodic run than legitimate text holds (span and root copies, per root length)",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
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
            name: "rule",
            ty: "\"evidence\" | \"copies\"",
            default: "\"evidence\"",
            doc: "Exact engine: judge a periodic tail by its span and root copies against thresholds per root length (stricter in code), or by min-copies / root-copies.",
        },
        OptionDoc {
            name: "evidence-scale",
            ty: "integer",
            default: "100",
            doc: "Evidence rule: span thresholds scaled by this percentage (lower fires sooner, higher is safer).",
        },
        OptionDoc {
            name: "chant-copies",
            ty: "integer",
            default: "16",
            doc: "Evidence rule: a message that is only one root repeated from its first character fires at this many copies (0 = off).",
        },
        OptionDoc {
            name: "counter-noise",
            ty: "bool",
            default: "true",
            doc: "Evidence rule: also catch prose runs whose copies differ only in their numbers (a counter that advances).",
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
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport::NONE,
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
