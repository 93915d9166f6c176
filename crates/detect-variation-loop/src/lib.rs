#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::{is_prose, overlap, shingles, VariationLoop};

use loopguard_core::{ConfigError, Scope};

loopguard_core::detector_options! {
    /// `[detectors.variation-loop]` as written in TOML. Every key is optional.
    pub struct Options;
    /// Resolved settings.
    pub struct Settings;

    /// The message must have at least this many characters.
    "min-text" min_text: usize = 200, const DEFAULT_MIN_TEXT, "integer";
    /// Short segments are longer than this.
    "min-segment" min_segment: usize = 15, const DEFAULT_MIN_SEGMENT, "integer";
    /// Short segments are at most this long.
    "max-segment" max_segment: usize = 100, const DEFAULT_MAX_SEGMENT, "integer";
    /// Shingle length in characters.
    "shingle" shingle: usize = 5, const DEFAULT_SHINGLE, "integer";
    /// Shingle overlap to join a cluster.
    "min-overlap" min_overlap: f64 = 0.7, const DEFAULT_MIN_OVERLAP, "float";
    /// Largest length difference to a cluster representative.
    "length-slack" length_slack: usize = 12, const DEFAULT_LENGTH_SLACK, "integer";
    /// Dominance that fires.
    "threshold" threshold: f64 = 0.95, const DEFAULT_THRESHOLD, "float";
    /// Judge the last N short segments; 0 = whole message (seed).
    "window" window: usize = 15, const DEFAULT_WINDOW, "integer";
    /// Short segments needed before judging.
    "min-segments" min_segments: usize = 8, const DEFAULT_MIN_SEGMENTS, "integer";
    /// Size the largest cluster needs.
    "min-cluster" min_cluster: usize = 4, const DEFAULT_MIN_CLUSTER, "integer";
    /// Window mode: largest mean share of new shingles per segment.
    "max-novelty" max_novelty: f64 = 0.1, const DEFAULT_MAX_NOVELTY, "float";
    /// Window mode: smallest share of the text since the window's first segment that its
    /// segments cover.
    "min-coverage" min_coverage: f64 = 0.6, const DEFAULT_MIN_COVERAGE, "float";
    /// Skip table rows, fences, fenced code and lines with fewer than 8 letters or digits.
    "skip-structured" skip_structured: bool = true, "bool";
    /// Judge prose only: code lines, numbered or line-numbered listings, table rows, log
    /// lines, markup and comments are not rewordings.
    "prose-only" prose_only: bool = true, "bool";
    /// Seed cadence in characters (with the partial last line); 0 = on line completion.
    "rescan-every" rescan_every: usize = 0, "integer";
    /// Whole-message mode: most clusters kept.
    "max-clusters" max_clusters: usize = 4096, const DEFAULT_MAX_CLUSTERS, "integer";
}

impl Settings {
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

loopguard_core::detector_registration! {
    name: "variation-loop", code: "LG008", detector: VariationLoop::new,
    summary: "a message dominated by short near-duplicate lines (5-gram shingles)",
}
