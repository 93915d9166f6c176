//! # loopguard-scan
//!
//! The scan engine: replays agent transcripts through a guard and reports what it would have
//! done, what the loops cost and what the guard would have saved. The `loopguard scan`
//! command and the corpus evaluation both use it.
//!
//! - [`scan_file`] / [`scan_reader`] read a transcript as a stream (one line in memory at a
//!   time, see [`loopguard_transcript::Records`]) and judge each event as it is read;
//!   [`scan_paths`] scans many files in parallel (rayon) and collects them in path order.
//! - [`Report`] is the JSON report (`version` 1; the contract is `docs/contracts/scan-report.md`);
//!   [`write_text`] and [`html::write_html`] render it for people.
//! - [`discover`] finds the agents' session folders on this machine.
//!
//! Replay convention: the recorded events are fed as they happened, even after a verdict that
//! would have changed them (a blocked call's recorded result still arrives, the session goes
//! on after an abort). Every verdict other than `continue` is reported, one entry per finding
//! behind it, with the 0-based line of the event that produced it.
#![warn(missing_docs)]

pub mod discover;
mod engine;
pub mod html;
pub mod synthetic;
mod text;
pub mod tokens;

pub use engine::{scan_records, scan_transcript, scan_with};
pub use text::write_text;
pub use tokens::Price;

use loopguard::orchestrator::{Action, Guard, GuardTemplate};
use loopguard::{Config, ConfigError, Level};
use loopguard_transcript::{Records, TranscriptError};
use serde::Serialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The report of a whole scan (`version` 1; see `docs/contracts/scan-report.md`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Report format version.
    pub version: u32,
    /// The preset the configuration was resolved over.
    pub preset: String,
    /// One entry per transcript read, in path order.
    pub sessions: Vec<SessionReport>,
    /// Totals.
    pub summary: Summary,
}

/// Totals of a scan.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Transcripts read.
    pub sessions: usize,
    /// Transcripts with at least one finding.
    pub sessions_with_findings: usize,
    /// Lines over all transcripts.
    pub events: usize,
    /// What the guard would have saved over all transcripts.
    pub wasted: Wasted,
}

/// What `scan` found in one transcript.
#[derive(Clone, Debug, Serialize)]
pub struct SessionReport {
    /// The file, as found from the command line.
    pub path: String,
    /// Its format (`loopguard`, `pi`, `claude-code`, `codex`).
    pub format: &'static str,
    /// Number of lines in the file (the header included).
    pub events: usize,
    /// One entry per finding of each verdict other than `continue`, in replay order.
    pub findings: Vec<FindingReport>,
    /// What the guard's actions would have saved (see [`Wasted`]).
    pub wasted: Wasted,
    /// The model the transcript names (the last one it names), when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// One entry per loop (one detector and key), in order of first finding.
    pub loops: Vec<LoopReport>,
    /// For the text report: more about each finding (same order as `findings`).
    #[serde(skip)]
    pub details: Vec<FindingDetail>,
}

/// One finding in the JSON report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingReport {
    /// 0-based line of the event whose verdict this finding is behind.
    pub event: usize,
    /// Detector name.
    pub detector: String,
    /// `warning` or `critical`.
    pub level: Level,
    /// The verdict's action: `steer`, `block`, `abort` or `compact`.
    pub action: Action,
    /// Repetitions the detector counted.
    pub count: u32,
    /// The detector's message for the model.
    pub message: String,
    /// For text findings: the character offset in the message where the detector fired.
    pub offset: Option<u64>,
}

/// What the text report shows beyond the JSON fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FindingDetail {
    /// The detector's key for the loop (same loop, same key).
    pub key: String,
    /// 0-based lines of the events that form the loop (the finding's evidence), sorted.
    pub lines: Vec<usize>,
    /// The tool involved.
    pub tool: Option<String>,
    /// The abort code, for aborts.
    pub code: Option<String>,
    /// A sample of repeated text.
    pub sample: Option<String>,
}

/// An estimate of what the guard's actions would have saved in a session.
///
/// - An **abort** ends the run: every line after the first aborting event counts (and, for an
///   abort inside a streamed message, the characters of that message after the delta).
/// - A **block** refuses one call: the call's line and its result's line count.
/// - Steers and compactions count nothing: whether the model listens cannot be known.
///
/// `chars` adds up what those lines carry: user and assistant text (thinking included), the
/// call arguments as compact JSON, result content; `tokens` is the same text in tokens, plus
/// the input and output tokens of the model calls in the saved lines where the transcript
/// records them (Claude Code, Codex).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Wasted {
    /// Lines saved.
    pub events: usize,
    /// Characters saved.
    pub chars: u64,
    /// Tokens saved (see above).
    pub tokens: u64,
    /// What those tokens cost, in US dollars, when a price is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
}

impl Wasted {
    fn add(&mut self, o: &Wasted) {
        self.events += o.events;
        self.chars += o.chars;
        self.tokens += o.tokens;
        self.usd = match (self.usd, o.usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// One loop: the findings of one detector with one key, and what the turns it spans cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopReport {
    /// Detector name.
    pub detector: String,
    /// The detector's key for the loop.
    pub key: String,
    /// The tool involved, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The first and the last 0-based line of the loop (its earliest evidence, its last
    /// finding).
    pub lines: [usize; 2],
    /// The strongest action the guard took on it.
    pub action: Action,
    /// Number of findings behind it.
    pub findings: usize,
    /// Tokens of the text read and written during the loop (user and assistant text, call
    /// arguments, results), counted with the `o200k_base` tokenizer.
    pub tokens: u64,
    /// Input tokens the agent sent to the model during the loop (the whole context, each
    /// call), where the transcript records usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens the model wrote during the loop, where the transcript records usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// What the loop cost in US dollars, when a price is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    /// The loop's events, in order (at most [`MAX_TIMELINE`]).
    pub timeline: Vec<TimelineEvent>,
}

/// The most events kept on one loop's timeline.
pub const MAX_TIMELINE: usize = 200;

/// One event on a loop's timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TimelineEvent {
    /// 0-based line.
    pub line: usize,
    /// `user`, `assistant`, `call`, `result`, `compaction` or `verdict`.
    pub kind: &'static str,
    /// The tool, for calls and results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// A short label: the call's arguments, the first words of a text, the verdict's
    /// message.
    pub label: String,
    /// For a verdict: the action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// For a result: the source's error flag.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
}

/// How a scan replays and prices.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Characters per replayed text delta.
    pub chunk: usize,
    /// A price for every model (overrides [`tokens::PRICES`]).
    pub price: Option<Price>,
}

impl Default for ScanOptions {
    fn default() -> ScanOptions {
        ScanOptions {
            chunk: loopguard_transcript::DEFAULT_CHUNK,
            price: None,
        }
    }
}

/// What went wrong scanning one file.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The configuration does not build a guard.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The file could not be read (opened, or read further at some point).
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
}

/// One file scanned: its report (of the part that could be read) and what could not be.
#[derive(Debug)]
pub struct Scanned {
    /// The report.
    pub session: SessionReport,
    /// Lines that could not be read or mapped, as `FILE:LINE: problem`, in file order.
    pub problems: Vec<String>,
    /// Whether some line could not be read at all (bad UTF-8, too long, invalid loopguard
    /// line): the scan then exits with status 2.
    pub bad_lines: bool,
    /// The read stopped early on an I/O error (the report covers what came before).
    pub io_error: Option<TranscriptError>,
}

/// Scans one file as a stream.
pub fn scan_file(
    path: &Path,
    template: &GuardTemplate,
    opts: &ScanOptions,
) -> Result<Scanned, ScanError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| TranscriptError::Io {
        file: name.clone(),
        message: e.to_string(),
    })?;
    let reader = std::io::BufReader::with_capacity(256 * 1024, file);
    scan_reader(reader, &name, template, opts)
}

/// Scans a transcript read from `reader` as a stream; `file` names it.
pub fn scan_reader<R: BufRead>(
    reader: R,
    file: &str,
    template: &GuardTemplate,
    opts: &ScanOptions,
) -> Result<Scanned, ScanError> {
    scan_records(Records::new(reader, file), template, opts)
}

/// One file's outcome in [`scan_paths`].
pub type FileOutcome = Result<Scanned, ScanError>;

/// Scans `files` in parallel; the outcomes come back in the order of `files`. `progress` is
/// called once per file done (from any thread).
pub fn scan_paths(
    files: &[PathBuf],
    template: &GuardTemplate,
    opts: &ScanOptions,
    progress: &(dyn Fn() + Sync),
) -> Vec<FileOutcome> {
    use rayon::prelude::*;
    files
        .par_iter()
        .map(|f| {
            let r = scan_file(f, template, opts);
            progress();
            r
        })
        .collect()
}

/// A template for `config`, failing early on a configuration that does not build.
pub fn template(config: &Config) -> Result<GuardTemplate, ConfigError> {
    Guard::builder().config(config.clone()).build()?;
    Guard::builder().config(config.clone()).template()
}

/// A report of `sessions` (in the order given) with its summary filled in.
pub fn report(preset: &str, sessions: Vec<SessionReport>) -> Report {
    let mut r = Report {
        version: 1,
        preset: preset.to_owned(),
        sessions,
        summary: Summary::default(),
    };
    summarize(&mut r);
    r
}

/// Fills in `report.summary` from its sessions.
pub fn summarize(report: &mut Report) {
    let mut wasted = Wasted::default();
    for s in &report.sessions {
        wasted.add(&s.wasted);
    }
    report.summary = Summary {
        sessions: report.sessions.len(),
        sessions_with_findings: report
            .sessions
            .iter()
            .filter(|s| !s.findings.is_empty())
            .count(),
        events: report.sessions.iter().map(|s| s.events).sum(),
        wasted,
    };
}

/// The lowest level that makes a scan fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// Any finding.
    Warning,
    /// A critical finding.
    Critical,
    /// Never.
    Never,
}

/// Whether a report has a finding at or above `fail_on`. A block or an abort counts as
/// critical whatever the finding's level.
pub fn fails(report: &Report, fail_on: FailOn) -> bool {
    let min = match fail_on {
        FailOn::Never => return false,
        FailOn::Warning => Level::Warning,
        FailOn::Critical => Level::Critical,
    };
    report.sessions.iter().flat_map(|s| &s.findings).any(|f| {
        let level = if matches!(f.action, Action::Block | Action::Abort) {
            Level::Critical
        } else {
            f.level
        };
        level >= min
    })
}

/// The sessions of `report` ranked by waste: tokens the guard would have saved, then tokens
/// the loops cost, then the number of findings (ties keep path order).
pub fn ranked(report: &Report) -> Vec<&SessionReport> {
    let mut v: Vec<&SessionReport> = report.sessions.iter().collect();
    v.sort_by(|a, b| {
        let key = |s: &SessionReport| {
            (
                s.wasted.tokens,
                s.loops.iter().map(|l| l.tokens).sum::<u64>(),
                s.findings.len(),
            )
        };
        key(b).cmp(&key(a))
    });
    v
}

/// A file or a directory that cannot be listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct PathError {
    /// The path.
    pub path: String,
    /// The operating system's message.
    pub message: String,
}

/// The files a scan reads for `paths`: files as given, directories searched recursively for
/// `*.jsonl` (sorted; symbolic links to directories are not followed). A path that does not
/// exist is an error.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PathError> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| path_error(p, &e))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn path_error(p: &Path, e: &std::io::Error) -> PathError {
    PathError {
        path: p.display().to_string(),
        message: e.to_string(),
    }
}

pub(crate) fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), PathError> {
    let entries = std::fs::read_dir(dir).map_err(|e| path_error(dir, &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| path_error(dir, &e))?;
        let path = entry.path();
        let ty = entry.file_type().map_err(|e| path_error(&path, &e))?;
        if ty.is_dir() {
            walk(&path, found)?;
        } else if path.extension().is_some_and(|x| x == "jsonl") {
            found.push(path);
        }
    }
    Ok(())
}
