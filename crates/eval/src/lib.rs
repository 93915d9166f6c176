//! # loopguard-eval
//!
//! Compares `loopguard scan` reports (the JSON contract of `docs/contracts/scan-report.md`) with the corpus
//! labels (`labels.toml`) and renders the evaluation: recall per loop kind, false positives
//! (split into warnings and critical), early alarms, detection latency and an estimate of the
//! tokens the guard would have saved — per preset, side by side.
#![warn(missing_docs)]

pub mod legit;

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Loop kinds loopguard claims to cover; a miss of one of these fails the gate.
pub const COVERED_KINDS: &[&str] = &[
    "tool-repeat",
    "poll-no-progress",
    "ping-pong",
    "unknown-tool",
    "post-compaction",
    "text-periodic",
    "text-variation",
    "stalled-turns",
];

/// Errors of the evaluation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS message.
        message: String,
    },
    /// labels.toml or the disputed list is malformed.
    #[error("{path}: {message}")]
    Labels {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// A scan report does not follow the contract.
    #[error("scan report: {0}")]
    Report(String),
}

pub use loopguard_testkit::labels::{Label, LoopLabel};

/// Reads labels.toml ([`loopguard_testkit::labels::read_labels`]).
pub fn read_labels(path: &Path) -> Result<Vec<Label>, EvalError> {
    loopguard_testkit::labels::read_labels(path).map_err(|e| labels_error(path, e))
}

/// A labels-file error of the file at `path`, as an [`EvalError`].
fn labels_error(path: &Path, e: loopguard_testkit::labels::LabelsError) -> EvalError {
    use loopguard_testkit::labels::LabelsError;
    match e {
        LabelsError::Io { path, message } => EvalError::Io { path, message },
        LabelsError::Invalid { path, message } => EvalError::Labels { path, message },
        other => EvalError::Labels {
            path: path.display().to_string(),
            message: other.to_string(),
        },
    }
}

/// A label the project disputes, with the reason (excluded from the gate only through this list).
#[derive(Clone, Debug, Deserialize)]
pub struct Disputed {
    /// Corpus file name.
    pub path: String,
    /// Why the label looks wrong.
    pub reason: String,
}

#[derive(Deserialize)]
struct DisputedFile {
    #[serde(default)]
    disputed: Vec<Disputed>,
}

/// Reads the repository's list of disputed labels.
pub fn read_disputed(path: &Path) -> Result<Vec<Disputed>, EvalError> {
    let f: DisputedFile = loopguard_testkit::labels::read_file(path, |text| {
        toml::from_str(text).map_err(|e| e.to_string())
    })
    .map_err(|e| labels_error(path, e))?;
    Ok(f.disputed)
}

/// One reported finding, as the scan report gives it.
#[derive(Clone, Debug, Deserialize)]
pub struct ReportFinding {
    /// 0-based line.
    pub event: usize,
    /// Detector name.
    pub detector: String,
    /// warning | critical.
    pub level: String,
    /// The guard's action.
    pub action: String,
    /// Character offset for text findings.
    #[serde(default)]
    pub offset: Option<u64>,
}

/// One session of a scan report.
#[derive(Clone, Debug, Deserialize)]
pub struct ReportSession {
    /// The scanned path.
    pub path: String,
    /// Number of events.
    #[serde(default)]
    pub events: usize,
    /// Findings.
    #[serde(default)]
    pub findings: Vec<ReportFinding>,
    /// What the guard would have saved.
    #[serde(default)]
    pub wasted: Option<Wasted>,
}

/// The `wasted` object.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Wasted {
    /// Events.
    #[serde(default)]
    pub events: u64,
    /// Characters.
    #[serde(default)]
    pub chars: u64,
}

/// A scan report (`docs/contracts/scan-report.md`).
#[derive(Clone, Debug, Deserialize)]
pub struct Report {
    /// The preset used.
    pub preset: String,
    /// Sessions.
    pub sessions: Vec<ReportSession>,
}

/// How one labelled session fared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A loop was flagged at or after its start.
    Caught {
        /// Line of the first finding at or after `loop_start`.
        line: usize,
        /// Lines after `first_event` (negative: earlier).
        latency: i64,
        /// Whether a finding came before `loop_start` too.
        early: bool,
    },
    /// A labelled loop with no finding at or after its start.
    Missed {
        /// Whether a finding came before `loop_start`.
        early: bool,
    },
    /// A clean session with findings.
    FalsePositive {
        /// Warnings.
        warnings: usize,
        /// Critical findings.
        critical: usize,
    },
    /// A clean session with no finding.
    Clean,
    /// Unsure label (reported, not gated) and how many findings.
    Unsure {
        /// Findings.
        findings: usize,
    },
}

/// Per-session result.
#[derive(Clone, Debug)]
pub struct SessionEval {
    /// Corpus file name.
    pub path: String,
    /// Label kind (`clean`, `unsure` or the loop kind).
    pub kind: String,
    /// Outcome.
    pub outcome: Outcome,
    /// Detectors that reported.
    pub detectors: BTreeSet<String>,
    /// Estimated tokens saved (chars / 4 of what the guard would have stopped).
    pub tokens_saved: u64,
    /// Disputed label.
    pub disputed: bool,
}

/// Evaluates one report against the labels.
pub fn evaluate(report: &Report, labels: &[Label], disputed: &[Disputed]) -> Vec<SessionEval> {
    let by_name: BTreeMap<&str, &ReportSession> = report
        .sessions
        .iter()
        .map(|s| (file_name(&s.path), s))
        .collect();
    let mut out = Vec::new();
    for label in labels {
        let Some(session) = by_name.get(label.path.as_str()) else {
            continue;
        };
        let detectors: BTreeSet<String> = session
            .findings
            .iter()
            .map(|f| f.detector.clone())
            .collect();
        let tokens_saved = session.wasted.as_ref().map(|w| w.chars / 4).unwrap_or(0);
        let (kind, outcome) = if label.clean() {
            let warnings = session
                .findings
                .iter()
                .filter(|f| f.level == "warning")
                .count();
            let critical = session.findings.len() - warnings;
            let o = if session.findings.is_empty() {
                Outcome::Clean
            } else {
                Outcome::FalsePositive { warnings, critical }
            };
            ("clean".to_owned(), o)
        } else if label.loops() {
            let start = label.loop_start.unwrap_or(0);
            let early = session.findings.iter().any(|f| f.event < start);
            let first = session
                .findings
                .iter()
                .filter(|f| f.event >= start)
                .map(|f| f.event)
                .min();
            let o = match first {
                Some(line) => {
                    let latency = line as i64 - label.first_event.unwrap_or(start) as i64;
                    Outcome::Caught {
                        line,
                        latency,
                        early,
                    }
                }
                None => Outcome::Missed { early },
            };
            (label.kind.clone().unwrap_or_else(|| "other".to_owned()), o)
        } else {
            (
                "unsure".to_owned(),
                Outcome::Unsure {
                    findings: session.findings.len(),
                },
            )
        };
        out.push(SessionEval {
            path: label.path.clone(),
            kind,
            outcome,
            detectors,
            tokens_saved,
            disputed: disputed.iter().any(|d| d.path == label.path),
        });
    }
    out
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Totals for one kind under one preset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindStats {
    /// Labelled sessions of the kind.
    pub sessions: usize,
    /// Caught loops.
    pub caught: usize,
    /// Sessions with a finding before the loop started.
    pub early: usize,
    /// Sum of latencies of caught loops.
    pub latency_sum: i64,
    /// Clean sessions with a warning (only in the `clean` row).
    pub fp_warning: usize,
    /// Clean sessions with a critical finding (only in the `clean` row).
    pub fp_critical: usize,
    /// Estimated tokens saved.
    pub tokens_saved: u64,
}

impl KindStats {
    /// Mean latency in events, if anything was caught.
    pub fn mean_latency(&self) -> Option<f64> {
        (self.caught > 0).then(|| self.latency_sum as f64 / self.caught as f64)
    }
}

/// Aggregates per kind (`clean` and `unsure` included), skipping disputed sessions.
pub fn by_kind(evals: &[SessionEval]) -> BTreeMap<String, KindStats> {
    let mut m: BTreeMap<String, KindStats> = BTreeMap::new();
    for e in evals.iter().filter(|e| !e.disputed) {
        let s = m.entry(e.kind.clone()).or_default();
        s.sessions += 1;
        s.tokens_saved += e.tokens_saved;
        match &e.outcome {
            Outcome::Caught { latency, early, .. } => {
                s.caught += 1;
                s.latency_sum += latency;
                s.early += usize::from(*early);
            }
            Outcome::Missed { early } => s.early += usize::from(*early),
            Outcome::FalsePositive { critical, .. } => {
                if *critical > 0 {
                    s.fp_critical += 1;
                } else {
                    s.fp_warning += 1;
                }
            }
            Outcome::Clean | Outcome::Unsure { .. } => {}
        }
    }
    m
}

/// What the gate found wrong with the default preset.
pub fn gate_failures(evals: &[SessionEval]) -> Vec<String> {
    let mut out = Vec::new();
    for e in evals.iter().filter(|e| !e.disputed) {
        match &e.outcome {
            Outcome::FalsePositive { warnings, critical } => out.push(format!(
                "{}: labelled loop = false, but {warnings} warning(s) and {critical} critical finding(s) ({})",
                e.path,
                e.detectors.iter().cloned().collect::<Vec<_>>().join(", ")
            )),
            Outcome::Missed { .. } if COVERED_KINDS.contains(&e.kind.as_str()) => {
                out.push(format!("{}: labelled {} loop not caught", e.path, e.kind));
            }
            _ => {}
        }
    }
    out
}

/// Renders the side-by-side markdown for several presets (in the given order).
pub fn render_markdown(results: &[(String, Vec<SessionEval>)], disputed: &[Disputed]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Evaluation over the corpus\n");
    let _ = writeln!(
        s,
        "Generated by `cargo xtask eval`; CI checks that this file is current. Every session of \
         `../shared/corpus` is replayed through the same code as `loopguard scan` (assistant \
         messages streamed in 16-character deltas) and compared with `labels.toml`.\n"
    );
    let _ = writeln!(
        s,
        "- **caught**: a finding at or after the labelled `loop_start`.\n\
         - **latency**: mean lines between `first_event` (the third occurrence of the repeated unit) and the first finding; negative is earlier.\n\
         - **early**: sessions with a finding before `loop_start`.\n\
         - **FP warn / FP crit**: sessions labelled `loop = false` with warnings only / with a critical finding.\n\
         - **tokens saved**: characters after the guard's first intervention that the session still spent, divided by 4.\n"
    );
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    let aggregated: Vec<(String, BTreeMap<String, KindStats>)> = results
        .iter()
        .map(|(p, e)| (p.clone(), by_kind(e)))
        .collect();
    for (_, m) in &aggregated {
        kinds.extend(m.keys().cloned());
    }
    let _ = writeln!(s, "## Recall and latency per loop kind\n");
    let mut header = "| kind | sessions |".to_owned();
    let mut rule = "|---|---|".to_owned();
    for (p, _) in &aggregated {
        let _ = write!(header, " {p}: caught | {p}: latency | {p}: early |");
        rule.push_str("---|---|---|");
    }
    let _ = writeln!(s, "{header}\n{rule}");
    for k in kinds.iter().filter(|k| *k != "clean" && *k != "unsure") {
        let n = aggregated
            .iter()
            .find_map(|(_, m)| m.get(k))
            .map(|x| x.sessions)
            .unwrap_or(0);
        let _ = write!(s, "| {k} | {n} |");
        for (_, m) in &aggregated {
            let st = m.get(k).cloned().unwrap_or_default();
            let lat = st
                .mean_latency()
                .map(|l| format!("{l:.1}"))
                .unwrap_or_else(|| "–".to_owned());
            let _ = write!(s, " {}/{} | {lat} | {} |", st.caught, st.sessions, st.early);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "\n## False positives and savings\n");
    let _ = writeln!(s, "| preset | clean sessions | FP warn | FP crit | unsure flagged | tokens saved |\n|---|---|---|---|---|---|");
    for ((p, m), (_, evals)) in aggregated.iter().zip(results) {
        let clean = m.get("clean").cloned().unwrap_or_default();
        let unsure = evals
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Unsure { findings } if findings > 0))
            .count();
        let saved: u64 = m.values().map(|x| x.tokens_saved).sum();
        let _ = writeln!(
            s,
            "| {p} | {} | {} | {} | {unsure} | {saved} |",
            clean.sessions, clean.fp_warning, clean.fp_critical
        );
    }
    if let Some((_, default)) = results.iter().find(|(p, _)| p == "default") {
        let _ = writeln!(s, "\n## Default against each seed, loop by loop\n");
        let _ = writeln!(
            s,
            "On the labelled loops (disputed ones excluded): where both catch a loop, whose first \
             finding comes on an earlier line; and the loops only one of them catches.\n"
        );
        let _ = writeln!(s, "| seed preset | default earlier | same line | default later | only default catches | only the seed catches | mean latency on loops both catch (default / seed) |\n|---|---|---|---|---|---|---|");
        for (p, seed) in results.iter().filter(|(p, _)| p != "default") {
            let Paired { counts: c, latency } = paired(default, seed);
            let lat = match latency {
                Some((d, s)) => format!("{d:.1} / {s:.1}"),
                None => "–".to_owned(),
            };
            let _ = writeln!(
                s,
                "| {p} | {} | {} | {} | {} | {} | {lat} |",
                c[0], c[1], c[2], c[3], c[4]
            );
        }
    }
    let _ = writeln!(s, "\n## Sessions labelled loop\n");
    let mut header = "| session | kind |".to_owned();
    let mut rule = "|---|---|".to_owned();
    for (p, _) in results {
        let _ = write!(header, " {p} |");
        rule.push_str("---|");
    }
    let _ = writeln!(s, "{header}\n{rule}");
    if let Some((_, first)) = results.first() {
        for (i, e) in first.iter().enumerate() {
            if e.kind == "clean" {
                continue;
            }
            let _ = write!(s, "| {} | {} |", e.path, e.kind);
            for (_, evals) in results {
                let cell = match evals.get(i).map(|x| &x.outcome) {
                    Some(Outcome::Caught { line, latency, .. }) => {
                        format!("line {line} ({latency:+})")
                    }
                    Some(Outcome::Missed { .. }) => "missed".to_owned(),
                    Some(Outcome::Unsure { findings }) => format!("{findings} findings"),
                    _ => "–".to_owned(),
                };
                let _ = write!(s, " {cell} |");
            }
            let _ = writeln!(s);
        }
    }
    let _ = writeln!(s, "\n## Disputed labels\n");
    if disputed.is_empty() {
        let _ = writeln!(s, "None.");
    } else {
        for d in disputed {
            let _ = writeln!(s, "- `{}`: {}", d.path, d.reason);
        }
    }
    s
}

/// Scans every `*.jsonl` of the corpus with `preset`, as `loopguard scan` would.
pub fn scan_corpus(corpus: &Path, preset: &str) -> Result<Report, String> {
    let mut config = loopguard::Config {
        preset: Some(preset.to_owned()),
        ..loopguard::Config::default()
    };
    config = loopguard::orchestrator::resolve(&config).map_err(|e| e.to_string())?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .map_err(|e| format!("cannot read {}: {e}", corpus.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut sessions = Vec::new();
    for f in files {
        let t = loopguard_transcript::read_file(&f).map_err(|e| e.to_string())?;
        let s = loopguard_scan::scan_transcript(&t, &config, 16).map_err(|e| e.to_string())?;
        sessions.push(serde_json::to_value(&s).map_err(|e| e.to_string())?);
    }
    let v = serde_json::json!({ "preset": preset, "sessions": sessions });
    serde_json::from_value(v).map_err(|e| format!("scan report does not follow the contract: {e}"))
}

/// The sessions both evaluations cover, paired (disputed labels left out).
fn pairs<'a>(
    default: &'a [SessionEval],
    seed: &'a [SessionEval],
) -> impl Iterator<Item = (&'a SessionEval, &'a SessionEval)> {
    default
        .iter()
        .zip(seed)
        .filter(|(d, s)| d.path == s.path && !d.disputed)
}

/// Where `default` does worse than a seed preset on the same sessions: a labelled loop the
/// seed catches and the default misses, a loop both catch where the seed's first finding comes
/// on an earlier line, or a clean session the seed leaves alone and the default flags.
pub fn compare_with_seed(default: &[SessionEval], seed: &[SessionEval]) -> Vec<String> {
    let mut out = Vec::new();
    for (d, s) in pairs(default, seed) {
        match (&d.outcome, &s.outcome) {
            (Outcome::Missed { .. }, Outcome::Caught { line, .. }) => out.push(format!(
                "{}: {} loop missed, the seed catches it at line {line}",
                d.path, d.kind
            )),
            (Outcome::Caught { line: dl, .. }, Outcome::Caught { line: sl, .. }) if dl > sl => out
                .push(format!(
                    "{}: {} loop caught at line {dl}, the seed at line {sl}",
                    d.path, d.kind
                )),
            (Outcome::FalsePositive { .. }, Outcome::Clean) => out.push(format!(
                "{}: clean session flagged, the seed leaves it alone",
                d.path
            )),
            _ => {}
        }
    }
    out
}

/// Default against one seed over the labelled loops both evaluations cover.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Paired {
    /// [default earlier, same line, default later, only default catches, only the seed catches].
    pub counts: [usize; 5],
    /// Mean latency (default, seed) over the loops both catch.
    pub latency: Option<(f64, f64)>,
}

/// [`Paired`] in one walk over the pairs.
pub fn paired(default: &[SessionEval], seed: &[SessionEval]) -> Paired {
    let mut c = [0; 5];
    let (mut n, mut d_sum, mut s_sum) = (0i64, 0i64, 0i64);
    for (d, s) in pairs(default, seed) {
        match (&d.outcome, &s.outcome) {
            (
                Outcome::Caught {
                    line: dl,
                    latency: dlat,
                    ..
                },
                Outcome::Caught {
                    line: sl,
                    latency: slat,
                    ..
                },
            ) => {
                c[match dl.cmp(sl) {
                    std::cmp::Ordering::Less => 0,
                    std::cmp::Ordering::Equal => 1,
                    std::cmp::Ordering::Greater => 2,
                }] += 1;
                n += 1;
                d_sum += dlat;
                s_sum += slat;
            }
            (Outcome::Caught { .. }, Outcome::Missed { .. }) => c[3] += 1,
            (Outcome::Missed { .. }, Outcome::Caught { .. }) => c[4] += 1,
            _ => {}
        }
    }
    Paired {
        counts: c,
        latency: (n > 0).then(|| (d_sum as f64 / n as f64, s_sum as f64 / n as f64)),
    }
}

/// Where the corpus is: `$LOOPGUARD_CORPUS`, else `../shared/corpus` beside the workspace.
pub fn corpus_dir(workspace_root: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::env::var("LOOPGUARD_CORPUS") {
        let p = PathBuf::from(p);
        return p.is_dir().then_some(p);
    }
    let p = workspace_root.join("../shared/corpus");
    p.is_dir().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(path: &str, is_loop: bool, kind: Option<&str>, start: usize, first: usize) -> Label {
        Label {
            path: path.into(),
            agent: String::new(),
            events: 100,
            is_loop: LoopLabel::Bool(is_loop),
            kind: kind.map(str::to_owned),
            first_event: Some(first),
            loop_start: Some(start),
            first_char: None,
            note: String::new(),
        }
    }

    fn finding(event: usize, level: &str) -> ReportFinding {
        ReportFinding {
            event,
            detector: "d".into(),
            level: level.into(),
            action: "steer".into(),
            offset: None,
        }
    }

    #[test]
    fn outcomes_follow_the_labels() {
        let labels = vec![
            label("a.jsonl", true, Some("tool-repeat"), 10, 16),
            label("b.jsonl", true, Some("ping-pong"), 10, 16),
            label("c.jsonl", false, None, 0, 0),
            label("d.jsonl", false, None, 0, 0),
        ];
        let report = Report {
            preset: "default".into(),
            sessions: vec![
                ReportSession {
                    path: "x/a.jsonl".into(),
                    events: 0,
                    findings: vec![finding(5, "warning"), finding(14, "critical")],
                    wasted: None,
                },
                ReportSession {
                    path: "x/b.jsonl".into(),
                    events: 0,
                    findings: vec![finding(5, "warning")],
                    wasted: None,
                },
                ReportSession {
                    path: "x/c.jsonl".into(),
                    events: 0,
                    findings: vec![finding(3, "critical")],
                    wasted: None,
                },
                ReportSession {
                    path: "x/d.jsonl".into(),
                    events: 0,
                    findings: vec![],
                    wasted: None,
                },
            ],
        };
        let e = evaluate(&report, &labels, &[]);
        assert_eq!(
            e[0].outcome,
            Outcome::Caught {
                line: 14,
                latency: -2,
                early: true
            }
        );
        assert_eq!(e[1].outcome, Outcome::Missed { early: true });
        assert_eq!(
            e[2].outcome,
            Outcome::FalsePositive {
                warnings: 0,
                critical: 1
            }
        );
        assert_eq!(e[3].outcome, Outcome::Clean);
        let fails = gate_failures(&e);
        assert_eq!(fails.len(), 2, "{fails:?}");
        let disputed = vec![Disputed {
            path: "c.jsonl".into(),
            reason: "r".into(),
        }];
        let e = evaluate(&report, &labels, &disputed);
        assert_eq!(gate_failures(&e).len(), 1);
        let md = render_markdown(&[("default".into(), e)], &disputed);
        assert!(md.contains("## Disputed labels"));
        assert!(md.contains("`c.jsonl`: r"));
    }

    fn eval(path: &str, kind: &str, outcome: Outcome, disputed: bool) -> SessionEval {
        SessionEval {
            path: path.into(),
            kind: kind.into(),
            outcome,
            detectors: BTreeSet::new(),
            tokens_saved: 0,
            disputed,
        }
    }

    fn caught(line: usize, latency: i64) -> Outcome {
        Outcome::Caught {
            line,
            latency,
            early: false,
        }
    }

    #[test]
    fn default_and_seed_are_paired_session_by_session() {
        let missed = Outcome::Missed { early: false };
        let fp = Outcome::FalsePositive {
            warnings: 1,
            critical: 0,
        };
        let default = vec![
            eval("a", "tool-repeat", caught(10, 0), false),
            eval("b", "tool-repeat", caught(12, 2), false),
            eval("c", "ping-pong", caught(20, 4), false),
            eval("d", "ping-pong", caught(5, 1), false),
            eval("e", "ping-pong", missed.clone(), false),
            eval("f", "clean", fp.clone(), false),
            // Disputed: left out of every comparison.
            eval("g", "ping-pong", missed.clone(), true),
        ];
        let seed = vec![
            eval("a", "tool-repeat", caught(12, 2), false),
            eval("b", "tool-repeat", caught(12, 2), false),
            eval("c", "ping-pong", caught(18, 2), false),
            eval("d", "ping-pong", missed, false),
            eval("e", "ping-pong", caught(7, 0), false),
            eval("f", "clean", Outcome::Clean, false),
            eval("g", "ping-pong", caught(1, 0), false),
        ];
        let p = paired(&default, &seed);
        assert_eq!(p.counts, [1, 1, 1, 1, 1]);
        assert_eq!(p.latency, Some((2.0, 2.0)));
        let worse = compare_with_seed(&default, &seed);
        assert_eq!(worse.len(), 3, "{worse:?}");
        assert!(worse[0].starts_with("c: ping-pong loop caught at line 20"));
        assert!(worse[1].starts_with("e: ping-pong loop missed"));
        assert!(worse[2].starts_with("f: clean session flagged"));
        // Sessions that do not line up are not compared.
        let shifted = &seed[1..];
        assert_eq!(paired(&default, shifted), Paired::default());
        assert!(compare_with_seed(&default, shifted).is_empty());
    }
}
