#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::{is_prose, overlap, shingles, VariationLoop};

use loopguard_core::{ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The registered name.
pub const NAME: &str = "variation-loop";

const SCOPE: &str = "detectors.variation-loop";

/// `[detectors.variation-loop]` as written in TOML. Every key is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// The message must have at least this many characters (default 200).
    pub min_text: Option<usize>,
    /// Segments must be longer than this, in characters, to count as short (default 15).
    pub min_segment: Option<usize>,
    /// Segments must be at most this long to count as short (default 100).
    pub max_segment: Option<usize>,
    /// Shingle length in characters (default 5).
    pub shingle: Option<usize>,
    /// Shingle overlap for a segment to join a cluster (default 0.7).
    pub min_overlap: Option<f64>,
    /// Largest length difference between a segment and a cluster representative (default 12).
    pub length_slack: Option<usize>,
    /// Dominance (share of short segments with a near-duplicate) that fires (default 0.95).
    pub threshold: Option<f64>,
    /// Judge only the last this many short segments; 0 = the whole message, as the seed
    /// (default 15).
    pub window: Option<usize>,
    /// Short segments needed before judging (default 8).
    pub min_segments: Option<usize>,
    /// The largest cluster must hold at least this many segments (default 4).
    pub min_cluster: Option<usize>,
    /// Window mode: the mean share of new shingles per segment must be at most this (a list
    /// whose items each bring new names is not a loop) (default 0.1; 1 turns it off).
    pub max_novelty: Option<f64>,
    /// Window mode: the window's segments must make up at least this share of the text
    /// written since the window's first segment (near-duplicates sprinkled through long
    /// advancing paragraphs are not a loop) (default 0.6; 0 turns it off).
    pub min_coverage: Option<f64>,
    /// Skip table rows, code fences, lines inside fenced code and lines with fewer than 8
    /// letters or digits (default true).
    pub skip_structured: Option<bool>,
    /// Judge prose only: code lines, numbered or line-numbered listings, table rows, log
    /// lines, markup and comments are not rewordings (default true).
    pub prose_only: Option<bool>,
    /// Judge every this many characters of growth, the trailing partial line included, as
    /// the seed; 0 = judge when a line completes (default 0).
    pub rescan_every: Option<usize>,
    /// Whole-message mode: most clusters kept (memory cap) (default 4096).
    pub max_clusters: Option<usize>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Minimum message length.
    pub min_text: usize,
    /// Exclusive lower bound of a short segment's length.
    pub min_segment: usize,
    /// Inclusive upper bound of a short segment's length.
    pub max_segment: usize,
    /// Shingle length.
    pub shingle: usize,
    /// Overlap needed to join a cluster.
    pub min_overlap: f64,
    /// Length slack between a segment and a representative.
    pub length_slack: usize,
    /// Dominance that fires.
    pub threshold: f64,
    /// Window of short segments (0 = whole message).
    pub window: usize,
    /// Short segments needed.
    pub min_segments: usize,
    /// Largest cluster needed.
    pub min_cluster: usize,
    /// Window mode: largest mean novelty.
    pub max_novelty: f64,
    /// Window mode: smallest share of the text the window covers.
    pub min_coverage: f64,
    /// Skip tables, code and separator lines.
    pub skip_structured: bool,
    /// Judge prose segments only.
    pub prose_only: bool,
    /// Seed cadence (0 = on line completion).
    pub rescan_every: usize,
    /// Whole-message mode cluster cap.
    pub max_clusters: usize,
}

impl Settings {
    /// Default `min-text`.
    pub const DEFAULT_MIN_TEXT: usize = 200;
    /// Default `min-segment`.
    pub const DEFAULT_MIN_SEGMENT: usize = 15;
    /// Default `max-segment`.
    pub const DEFAULT_MAX_SEGMENT: usize = 100;
    /// Default `shingle`.
    pub const DEFAULT_SHINGLE: usize = 5;
    /// Default `min-overlap`.
    pub const DEFAULT_MIN_OVERLAP: f64 = 0.7;
    /// Default `length-slack`.
    pub const DEFAULT_LENGTH_SLACK: usize = 12;
    /// Default `threshold`.
    pub const DEFAULT_THRESHOLD: f64 = 0.95;
    /// Default `window`.
    pub const DEFAULT_WINDOW: usize = 15;
    /// Default `min-segments`.
    pub const DEFAULT_MIN_SEGMENTS: usize = 8;
    /// Default `min-cluster`.
    pub const DEFAULT_MIN_CLUSTER: usize = 4;
    /// Default `max-novelty`.
    pub const DEFAULT_MAX_NOVELTY: f64 = 0.1;
    /// Default `min-coverage`.
    pub const DEFAULT_MIN_COVERAGE: f64 = 0.6;
    /// Default `max-clusters`.
    pub const DEFAULT_MAX_CLUSTERS: usize = 4096;
    /// Largest accepted `window`.
    pub const MAX_WINDOW: usize = 256;
    /// Largest accepted `max-segment`.
    pub const MAX_SEGMENT_LIMIT: usize = 4096;

    /// The pi-repetition-guard preset: whole message, ≥3 short segments, dominance ≥0.9,
    /// judged every 200 characters with the trailing partial line, tables and code included.
    pub fn pi_repetition_guard() -> Settings {
        Settings {
            threshold: 0.9,
            window: 0,
            min_segments: 3,
            min_cluster: 2,
            max_novelty: 1.0,
            min_coverage: 0.0,
            skip_structured: false,
            prose_only: false,
            rescan_every: 200,
            ..Settings::default()
        }
    }

    /// Resolves and validates `[detectors.variation-loop]`.
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let d = Settings::default();
        let s = Settings {
            min_text: o.min_text.unwrap_or(d.min_text),
            min_segment: o.min_segment.unwrap_or(d.min_segment),
            max_segment: o.max_segment.unwrap_or(d.max_segment),
            shingle: o.shingle.unwrap_or(d.shingle),
            min_overlap: o.min_overlap.unwrap_or(d.min_overlap),
            length_slack: o.length_slack.unwrap_or(d.length_slack),
            threshold: o.threshold.unwrap_or(d.threshold),
            window: o.window.unwrap_or(d.window),
            min_segments: o.min_segments.unwrap_or(d.min_segments),
            min_cluster: o.min_cluster.unwrap_or(d.min_cluster),
            max_novelty: o.max_novelty.unwrap_or(d.max_novelty),
            min_coverage: o.min_coverage.unwrap_or(d.min_coverage),
            skip_structured: o.skip_structured.unwrap_or(d.skip_structured),
            prose_only: o.prose_only.unwrap_or(d.prose_only),
            rescan_every: o.rescan_every.unwrap_or(d.rescan_every),
            max_clusters: o.max_clusters.unwrap_or(d.max_clusters),
        };
        let scope = Scope::new(SCOPE);
        scope.between(
            "max-segment",
            Some(s.max_segment),
            s.max_segment,
            s.min_segment.saturating_add(1),
            Self::MAX_SEGMENT_LIMIT,
        )?;
        scope.between("shingle", Some(s.shingle), s.shingle, 1, 6)?;
        for (name, v) in [
            ("min-overlap", s.min_overlap),
            ("threshold", s.threshold),
            ("max-novelty", s.max_novelty),
            ("min-coverage", s.min_coverage),
        ] {
            scope.fraction(name, Some(v), v)?;
        }
        scope.between("window", Some(s.window), s.window, 0, Self::MAX_WINDOW)?;
        if s.window > 0 {
            scope.within(("min-segments", s.min_segments), ("window", s.window))?;
        }
        if s.window > 0 && s.rescan_every > 0 {
            return Err(scope.invalid(
                "rescan-every",
                "only applies when window = 0 (whole message)",
            ));
        }
        scope.positive("max-clusters", Some(s.max_clusters), 1)?;
        Ok(s)
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            min_text: Self::DEFAULT_MIN_TEXT,
            min_segment: Self::DEFAULT_MIN_SEGMENT,
            max_segment: Self::DEFAULT_MAX_SEGMENT,
            shingle: Self::DEFAULT_SHINGLE,
            min_overlap: Self::DEFAULT_MIN_OVERLAP,
            length_slack: Self::DEFAULT_LENGTH_SLACK,
            threshold: Self::DEFAULT_THRESHOLD,
            window: Self::DEFAULT_WINDOW,
            min_segments: Self::DEFAULT_MIN_SEGMENTS,
            min_cluster: Self::DEFAULT_MIN_CLUSTER,
            max_novelty: Self::DEFAULT_MAX_NOVELTY,
            min_coverage: Self::DEFAULT_MIN_COVERAGE,
            skip_structured: true,
            prose_only: true,
            rescan_every: 0,
            max_clusters: Self::DEFAULT_MAX_CLUSTERS,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    loopguard_core::build_detector(
        &format!("detectors.{NAME}"),
        table,
        Settings::from_options,
        VariationLoop::new,
    )
}

/// The registration.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "LG008",
    summary: "a message dominated by short near-duplicate lines (5-gram shingles)",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc { name: "min-text", ty: "integer", default: "200", doc: "The message must have at least this many characters." },
        OptionDoc { name: "min-segment", ty: "integer", default: "15", doc: "Short segments are longer than this." },
        OptionDoc { name: "max-segment", ty: "integer", default: "100", doc: "Short segments are at most this long." },
        OptionDoc { name: "shingle", ty: "integer", default: "5", doc: "Shingle length in characters." },
        OptionDoc { name: "min-overlap", ty: "float", default: "0.7", doc: "Shingle overlap to join a cluster." },
        OptionDoc { name: "length-slack", ty: "integer", default: "12", doc: "Largest length difference to a cluster representative." },
        OptionDoc { name: "threshold", ty: "float", default: "0.95", doc: "Dominance that fires." },
        OptionDoc { name: "window", ty: "integer", default: "15", doc: "Judge the last N short segments; 0 = whole message (seed)." },
        OptionDoc { name: "min-segments", ty: "integer", default: "8", doc: "Short segments needed before judging." },
        OptionDoc { name: "min-cluster", ty: "integer", default: "4", doc: "Size the largest cluster needs." },
        OptionDoc { name: "max-novelty", ty: "float", default: "0.1", doc: "Window mode: largest mean share of new shingles per segment." },
        OptionDoc { name: "min-coverage", ty: "float", default: "0.6", doc: "Window mode: smallest share of the text since the window's first segment that its segments cover." },
        OptionDoc { name: "skip-structured", ty: "bool", default: "true", doc: "Skip table rows, fences, fenced code and lines with fewer than 8 letters or digits." },
        OptionDoc { name: "prose-only", ty: "bool", default: "true", doc: "Judge prose only: code lines, numbered or line-numbered listings, table rows, log lines, markup and comments are not rewordings." },
        OptionDoc { name: "rescan-every", ty: "integer", default: "0", doc: "Seed cadence in characters (with the partial last line); 0 = on line completion." },
        OptionDoc { name: "max-clusters", ty: "integer", default: "4096", doc: "Whole-message mode: most clusters kept." },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport::NONE,
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
