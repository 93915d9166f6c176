//! `loopguard scan`: replays transcripts through a guard and reports what it would have done.
//!
//! Replay convention: the recorded events are fed as they happened, even after a verdict that
//! would have changed them (a blocked call's recorded result still arrives, the session goes
//! on after an abort). Every verdict other than `continue` is reported, one entry per finding
//! behind it, with the 0-based line of the event that produced it.

use crate::{
    load_agent_config, FailOn, OutputFormat, ScanArgs, EXIT_ERROR, EXIT_FINDINGS, EXIT_OK,
};
use loopguard::core::OwnedEvent;
use loopguard::orchestrator::{Action, Guard, GuardTemplate};
use loopguard::{Config, ConfigError, Level};
use loopguard_transcript::{read_file, replay, Record, Transcript, TranscriptError};
use serde::Serialize;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The report of a whole scan (`docs/contracts/scan-report.md`, `version` 1).
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
/// call arguments as compact JSON, result content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Wasted {
    /// Lines saved.
    pub events: usize,
    /// Characters saved.
    pub chars: u64,
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

/// `loopguard scan`.
pub(crate) fn command(
    a: &ScanArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let mut config =
        load_agent_config(a.config.as_deref(), a.preset.as_deref(), a.agent.as_deref())?;
    config.apply_process_env()?;
    // Fail early (exit 2) on a configuration that does not build.
    Guard::builder().config(config.clone()).build()?;
    let files = collect_files(&a.paths)?;
    let show_progress = files.len() >= 20 && std::io::stderr().is_terminal();
    let mut report = Report {
        version: 1,
        preset: config
            .preset
            .clone()
            .unwrap_or_else(|| "default".to_owned()),
        sessions: Vec::new(),
        summary: Summary::default(),
    };
    let progress = if show_progress {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} transcripts ({eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    // Files are scanned in parallel; results are collected in path order, so the output is
    // the same whatever the scheduling.
    use rayon::prelude::*;
    type Scanned = Result<(SessionReport, Vec<String>), TranscriptError>;
    let template = Guard::builder().config(config.clone()).template()?;
    let results: Vec<Result<Scanned, ConfigError>> = files
        .par_iter()
        .map(|f| {
            let r = match read_file(f) {
                Ok(t) => {
                    let issues = t.issues.iter().map(|i| format!("{}:{i}", t.file)).collect();
                    scan_with(&t, &template, a.chunk).map(|s| Ok((s, issues)))
                }
                Err(e) => Ok(Err(e)),
            };
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            r
        })
        .collect();
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let mut errors: Vec<TranscriptError> = Vec::new();
    for r in results {
        match r? {
            Ok((session, issues)) => {
                for issue in issues {
                    writeln!(err, "loopguard: {issue}")?;
                }
                report.sessions.push(session);
            }
            Err(e) => errors.push(e),
        }
    }
    summarize(&mut report);
    match a.format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
        }
        OutputFormat::Text => crate::text::write_report(out, &report)?,
    }
    for e in &errors {
        writeln!(err, "loopguard: {e}")?;
    }
    Ok(if !errors.is_empty() {
        EXIT_ERROR
    } else if fails(&report, a.fail_on) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// Fills in `report.summary` from its sessions.
pub fn summarize(report: &mut Report) {
    report.summary = Summary {
        sessions: report.sessions.len(),
        sessions_with_findings: report
            .sessions
            .iter()
            .filter(|s| !s.findings.is_empty())
            .count(),
        events: report.sessions.iter().map(|s| s.events).sum(),
    };
}

/// The files `scan` reads for `paths`: files as given, directories searched recursively for
/// `*.jsonl` (sorted; symbolic links to directories are not followed). A path that does not
/// exist is an error.
pub fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
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

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let ty = entry
            .file_type()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if ty.is_dir() {
            walk(&path, found)?;
        } else if path.extension().is_some_and(|x| x == "jsonl") {
            found.push(path);
        }
    }
    Ok(())
}

/// One non-continue verdict, kept for the `wasted` estimate.
struct Acted {
    line: usize,
    action: Action,
    /// The call id, for a verdict on a tool call.
    call: Option<String>,
    /// Characters of the message still to come, for a verdict on a text delta.
    text_left: u64,
}

/// Replays one transcript through a fresh guard built from `config` (already resolved).
pub fn scan_transcript(
    t: &Transcript,
    config: &Config,
    chunk: usize,
) -> Result<SessionReport, ConfigError> {
    scan_with(
        t,
        &Guard::builder().config(config.clone()).template()?,
        chunk,
    )
}

/// Replays one transcript through a fresh guard built from `template` (resolved once for
/// every transcript of a scan).
pub fn scan_with(
    t: &Transcript,
    template: &GuardTemplate,
    chunk: usize,
) -> Result<SessionReport, ConfigError> {
    let mut guard = template.build()?;
    let sizes: Vec<u64> = t.entries.iter().map(|e| record_chars(&e.record)).collect();
    // (first bus seq, line): the seq -> line map, run-length encoded (lines never go back).
    let mut seq_lines: Vec<(u64, usize)> = Vec::new();
    let (mut msg_total, mut msg_streamed) = (0u64, 0u64);
    let mut findings = Vec::new();
    let mut raw = Vec::new();
    let mut acted: Vec<Acted> = Vec::new();
    for (seq, (line, ev)) in (0u64..).zip(replay(t, chunk)) {
        if seq_lines.last().map(|&(_, l)| l) != Some(line) {
            seq_lines.push((seq, line));
        }
        match &ev {
            OwnedEvent::MessageStart => {
                msg_streamed = 0;
                msg_total = entry_at(t, line, |r| matches!(r, Record::Assistant { .. }))
                    .and_then(|i| sizes.get(i))
                    .copied()
                    .unwrap_or(0);
            }
            OwnedEvent::TextDelta { delta, .. } => msg_streamed += delta.chars().count() as u64,
            _ => {}
        }
        let mut v = guard.observe(&ev.as_event());
        if v.is_continue() {
            continue;
        }
        let action = v.action();
        let code = v.code().map(str::to_owned);
        acted.push(Acted {
            line,
            action,
            call: match &ev {
                OwnedEvent::ToolCall { id, .. } => Some(id.clone()),
                _ => None,
            },
            text_left: match &ev {
                OwnedEvent::TextDelta { .. } => msg_total.saturating_sub(msg_streamed),
                _ => 0,
            },
        });
        for mut f in v.take_findings() {
            findings.push(FindingReport {
                event: line,
                detector: f.detector.to_owned(),
                level: f.level,
                action,
                count: f.count,
                message: std::mem::take(&mut f.message),
                offset: f.offset,
            });
            raw.push((f, code.clone()));
        }
    }
    let line_of = |s: u64| -> Option<usize> {
        let i = seq_lines.partition_point(|&(first, _)| first <= s);
        i.checked_sub(1)
            .and_then(|i| seq_lines.get(i))
            .map(|&(_, l)| l)
    };
    let details = raw
        .into_iter()
        .map(|(f, code)| {
            let mut lines: Vec<usize> = f.evidence.iter().filter_map(|&s| line_of(s)).collect();
            lines.sort_unstable();
            lines.dedup();
            FindingDetail {
                key: f.key,
                lines,
                tool: f.tool,
                code,
                sample: f.sample,
            }
        })
        .collect();
    Ok(SessionReport {
        path: t.file.clone(),
        format: t.format.as_str(),
        events: t.lines,
        findings,
        wasted: wasted(t, &sizes, &acted),
        details,
    })
}

/// The index of the first entry on `line` whose record matches `want` (several records may
/// share a line: an assistant message and its tool calls).
fn entry_at(t: &Transcript, line: usize, want: impl Fn(&Record) -> bool) -> Option<usize> {
    let first = t.entries.partition_point(|e| e.line < line);
    t.entries
        .get(first..)?
        .iter()
        .take_while(|e| e.line == line)
        .position(|e| want(&e.record))
        .map(|i| first + i)
}

fn record_chars(r: &Record) -> u64 {
    let n = |s: &str| s.chars().count() as u64;
    match r {
        Record::User { text } => n(text),
        Record::Assistant { text, thinking } => {
            text.as_deref().map_or(0, n) + thinking.as_deref().map_or(0, n)
        }
        Record::ToolCall { args, .. } => n(&serde_json::to_string(args).unwrap_or_default()),
        Record::ToolResult { content, .. } => n(content),
        _ => 0,
    }
}

fn wasted(t: &Transcript, sizes: &[u64], acted: &[Acted]) -> Wasted {
    let mut w = Wasted::default();
    let abort = acted.iter().find(|a| a.action == Action::Abort);
    let cut = abort.map_or(usize::MAX, |a| a.line);
    if let Some(a) = abort {
        let after = t.entries.partition_point(|e| e.line <= a.line);
        w.events = t.entries.len().saturating_sub(after);
        w.chars = sizes.iter().skip(after).sum::<u64>() + a.text_left;
    }
    let blocked: Vec<(usize, &str)> = acted
        .iter()
        .filter(|a| a.action == Action::Block && a.line < cut)
        .filter_map(|a| a.call.as_deref().map(|id| (a.line, id)))
        .collect();
    if blocked.is_empty() {
        return w;
    }
    // Result line of each call id (the first result after its call).
    let mut results: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (i, e) in t.entries.iter().enumerate() {
        if let Record::ToolResult { id, .. } = &e.record {
            results.entry(id.as_str()).or_default().push((e.line, i));
        }
    }
    for (line, id) in blocked {
        let is_call = |r: &Record| matches!(r, Record::ToolCall { id: c, .. } if c == id);
        if let Some(i) = entry_at(t, line, is_call) {
            w.events += 1;
            w.chars += sizes.get(i).copied().unwrap_or(0);
        }
        let result = results
            .get(id)
            .and_then(|v| v.iter().find(|&&(l, _)| l > line && l <= cut));
        if let Some(&(_, i)) = result {
            w.events += 1;
            w.chars += sizes.get(i).copied().unwrap_or(0);
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_transcript::{Entry, Format};

    fn call(id: &str) -> Record {
        Record::ToolCall {
            id: id.to_owned(),
            tool: "bash".to_owned(),
            args: serde_json::json!({ "command": id }),
            batch: None,
            truncated: false,
        }
    }

    #[test]
    fn entry_at_finds_the_right_record_among_those_sharing_a_line() {
        // A native assistant message and its calls share one line.
        let entries = [
            (0, Record::User { text: "go".into() }),
            (1, call("a")),
            (
                1,
                Record::Assistant {
                    text: Some("hi".into()),
                    thinking: None,
                },
            ),
            (1, call("b")),
            (1, call("c")),
            (2, Record::Compaction),
        ];
        let t = Transcript {
            file: "t.jsonl".into(),
            format: Format::Loopguard,
            lines: 3,
            entries: entries
                .into_iter()
                .map(|(line, record)| Entry { line, record })
                .collect(),
            issues: Vec::new(),
        };
        let assistant = |r: &Record| matches!(r, Record::Assistant { .. });
        let id_is = |want: &'static str| move |r: &Record| matches!(r, Record::ToolCall { id, .. } if id == want);
        assert_eq!(entry_at(&t, 1, assistant), Some(2));
        assert_eq!(entry_at(&t, 1, id_is("a")), Some(1));
        assert_eq!(entry_at(&t, 1, id_is("c")), Some(4));
        assert_eq!(entry_at(&t, 2, id_is("a")), None);
        assert_eq!(entry_at(&t, 7, assistant), None);
    }
}
