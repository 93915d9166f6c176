#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
pub mod evidence;
mod exact;
pub mod oracle;
mod seed;

pub use detector::{engine_copies, measure_runs, Lines, MeasuredRun, Prep, TailPeriodicity};
pub use evidence::{Row, Run, RunTracker};
pub use exact::{Finder, TailMatcher};
pub use seed::SeedScanner;

use loopguard_core::{ConfigError, Scope};
use serde::{Deserialize, Serialize};

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
    // Raised from 1,047 / 6 (698 / 4 measured on the registry and the standard library)
    // by C and C++ headers: a generated table of LLVM intrinsics repeats a 139-character
    // line ten times (1,475 characters).
    Row {
        max_root: 256,
        span: 2213,
        copies: 15,
    },
    // Raised from 1,575 / 3 (1,050 / 2 measured on the registry and the standard library)
    // by a compiler's expected-output file of a UI test, one 420-character error written
    // 4.4 times (1,846 characters), as compilers repeat a diagnostic for each expansion.
    Row {
        max_root: 512,
        span: 2769,
        copies: 6,
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

/// Visible ASCII characters that must stand ahead of a run, in the same word, for the run to
/// be read as data (see [`DATA_TABLE`]).
pub const DATA_WORD_CHARS: u32 = 40;

/// Characters a line must already hold when a run starts on it for the run to be read as
/// data (see [`DATA_TABLE`]): a line of machine-written text (minified code, a source map, a
/// packed search index) runs on for tens of thousands of characters, while prose breaks its
/// lines long before: the longest line of the 2,641 assistant texts and thoughts of the
/// corpus's clean sessions is 1,608 characters.
pub const LONG_LINE_CHARS: u32 = 4096;

/// Thresholds for a run of data: inside one word of data ([`DATA_WORD_CHARS`] visible ASCII
/// characters ahead of it in the same word and a root of such characters, as in a base64
/// image; text in a language written without spaces is not data), or begun on a line
/// already [`LONG_LINE_CHARS`] long. Such a run needs what [`CODE_TABLE`] asks, and what this
/// table asks where that is more: 1.5 × the longest run measured in such places, per root
/// bucket, rounded up, on the 125,793 text files of 2 KiB–8 MB of a development machine (the
/// Cargo registry, the Python standard library, rustup's documentation, `/usr`, `/etc`, a
/// Node package tree; 32,899 of them have a line of 4,096 characters or more). Five buckets go
/// beyond the code rows: 3,823 zeros (`A`) of a PNG in an icon's base64, 930 characters of a
/// 4-character root in a bundled CLI, 2,703 of a 10-character root in a source map's
/// mappings (`EACA;AAAA,` ×270), 6,996 of a 700-character root (9 copies) and 10,220 of a
/// 3,436-character one in a source map's embedded sources. Rustdoc's packed search index
/// holds 2,241 `0`s and five copies of a 732-character block.
pub const DATA_TABLE: &[Row] = &[
    Row {
        max_root: 2,
        span: 5735,
        copies: 0,
    },
    Row {
        max_root: 4,
        span: 1395,
        copies: 0,
    },
    Row {
        max_root: 8,
        span: 0,
        copies: 0,
    },
    Row {
        max_root: 16,
        span: 4055,
        copies: 0,
    },
    Row {
        max_root: 512,
        span: 0,
        copies: 0,
    },
    Row {
        max_root: 1024,
        span: 10494,
        copies: 0,
    },
    Row {
        max_root: 4096,
        span: 15330,
        copies: 0,
    },
    Row {
        max_root: u32::MAX,
        span: 0,
        copies: 0,
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

/// Words a line needs before its last one to continue a noisy run (four words in all: a
/// sentence, not a log line, a path or a name and its value).
pub const NOISY_MIN_SPACES: u32 = 3;

loopguard_core::detector_options! {
    /// `[detectors.tail-periodicity]` as written in TOML. Every key is optional.
    pub struct Options;
    /// Resolved settings.
    #[derive(Eq)]
    pub struct Settings;

    /// Shortest unit, in characters.
    "min-unit" min_unit: usize = 30, const DEFAULT_MIN_UNIT, "integer";
    /// Longest unit, in characters; memory is about min-copies × max-unit characters.
    "max-unit" max_unit: usize = 65_536, const DEFAULT_MAX_UNIT, "integer", "65536";
    /// Contiguous copies needed at the tail.
    "min-copies" min_copies: usize = 2, const DEFAULT_MIN_COPIES, "integer";
    /// Units at least this long need only min-copies copies; shorter ones also need
    /// root-copies copies of their primitive root.
    "long-unit" long_unit: usize = 512, const DEFAULT_LONG_UNIT, "integer";
    /// Copies of the primitive root needed for units shorter than long-unit (2 to twice
    /// min-copies).
    "root-copies" root_copies: usize = 4, const DEFAULT_ROOT_COPIES, "integer";
    /// Exact online engine, or the seed's periodic rescans.
    "algorithm" algorithm: Algorithm = Algorithm::Exact, "\"exact\" | \"seed\"", "\"exact\"";
    /// Exact engine: judge a periodic tail by its span and root copies against thresholds per
    /// root length (stricter in code), or by min-copies / root-copies.
    "rule" rule: Rule = Rule::Evidence, "\"evidence\" | \"copies\"", "\"evidence\"";
    /// Evidence rule: span thresholds scaled by this percentage (lower fires sooner, higher is
    /// safer).
    "evidence-scale" evidence_scale: u32 = 100, const DEFAULT_EVIDENCE_SCALE, "integer";
    /// Evidence rule: a message that is only one root repeated from its first character fires
    /// at this many copies (0 = off).
    "chant-copies" chant_copies: usize = 16, const DEFAULT_CHANT_COPIES, "integer";
    /// Evidence rule: also catch prose runs whose copies differ only in their numbers (a
    /// counter that advances).
    "counter-noise" counter_noise: bool = true, "bool";
    /// Seed engine only: characters of growth between scans.
    "rescan-every" rescan_every: usize = 200, const DEFAULT_RESCAN_EVERY, "integer";
    /// Runs of non-alphanumeric characters are cut to this length before the search, counted
    /// again from a run's first line feed (0 = off).
    "max-filler-run" max_filler_run: usize = 16, const DEFAULT_MAX_FILLER_RUN, "integer";
}

impl Settings {
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

loopguard_core::detector_registration! {
    name: "tail-periodicity", code: "LG007", detector: TailPeriodicity::new,
    summary: "streamed text whose tail is a longer exact periodic run than legitimate text holds (span and root copies, per root length)",
}
