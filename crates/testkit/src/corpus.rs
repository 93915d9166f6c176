//! The evaluation corpus for detector tests: reads `$LOOPGUARD_CORPUS` or `../shared/corpus`
//! (beside the workspace) and replays its sessions through a bus holding one detector. Test
//! helpers: they panic on a corpus that does not read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use loopguard_core::{Detector, Finding, Level, Origin, OwnedEvent, Stream};
use serde_json::Value;
use std::path::PathBuf;

pub use crate::labels::{Label, LoopLabel};

/// The corpus folder, or `None` (with a note) when it is absent. With `CI=true` absence fails.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LOOPGUARD_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    if dir.join("labels.toml").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "corpus not found at {} (set LOOPGUARD_CORPUS)",
            dir.display()
        );
    }
    eprintln!(
        "note: corpus not found at {}; skipping the corpus test",
        dir.display()
    );
    None
}

/// The `[[session]]` tables of `labels.toml` ([`crate::labels::read_labels`]).
pub fn labels(dir: &std::path::Path) -> Vec<Label> {
    crate::labels::read_labels(&dir.join("labels.toml")).expect("labels.toml reads")
}

/// The session's events, each with the 0-based line it came from.
pub fn events(dir: &std::path::Path, path: &str) -> Vec<(usize, OwnedEvent)> {
    let text = std::fs::read_to_string(dir.join(path)).expect("session readable");
    let mut out = Vec::new();
    for (line, l) in text.lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(l) else {
            continue;
        };
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match v.get("type").and_then(Value::as_str).unwrap_or_default() {
            "session" => out.push((line, OwnedEvent::SessionStart { id: s("id") })),
            "user" => out.push((
                line,
                OwnedEvent::User {
                    text: s("text"),
                    origin: Origin::Unknown,
                },
            )),
            "assistant" => {
                out.push((line, OwnedEvent::MessageStart));
                for (key, stream) in [("thinking", Stream::Thinking), ("text", Stream::Text)] {
                    let chars: Vec<char> = s(key).chars().collect();
                    for piece in chars.chunks(16) {
                        out.push((
                            line,
                            OwnedEvent::TextDelta {
                                stream,
                                delta: piece.iter().collect(),
                            },
                        ));
                    }
                }
                out.push((line, OwnedEvent::MessageEnd));
            }
            "tool_call" => out.push((
                line,
                OwnedEvent::ToolCall {
                    id: s("id"),
                    tool: s("tool"),
                    args: v.get("args").cloned().unwrap_or(Value::Null),
                    batch: v.get("batch").and_then(Value::as_u64),
                },
            )),
            "tool_result" => out.push((
                line,
                OwnedEvent::ToolResult {
                    id: s("id"),
                    tool: s("tool"),
                    content: s("content"),
                    is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    images: v
                        .get("images")
                        .and_then(Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok())
                        .unwrap_or(0),
                    details: None,
                },
            )),
            "compaction" => out.push((line, OwnedEvent::Compaction)),
            _ => {}
        }
    }
    out
}

/// Replays a session; returns every finding with the line of the event that produced it.
pub fn replay(
    detector: Box<dyn Detector>,
    events: &[(usize, OwnedEvent)],
) -> Vec<(usize, Finding)> {
    crate::run_indexed(detector, events.iter().map(|(line, e)| (*line, e)))
}

/// What a detector does on the whole corpus ([`check`]): the figures every detector crate's
/// corpus test prints and asserts.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Sessions read.
    pub sessions: usize,
    /// Sessions with at least one finding.
    pub fired: usize,
    /// Sessions labelled `loop = false`.
    pub clean: usize,
    /// Sessions labelled `loop = false` with a finding: path, line and message of the first.
    pub false_positives: Vec<(String, usize, String)>,
    /// Labelled loops of the kind checked (of any kind when none was given).
    pub loops: usize,
    /// Those caught: path and latency (line of the first finding at or after `loop_start`,
    /// minus `first_event`).
    pub caught: Vec<(String, i64)>,
    /// Those that reached a critical (or fatal) finding: path and latency, as for `caught`.
    pub critical: Vec<(String, i64)>,
    /// Labelled loops of the kind with no finding at or after `loop_start`.
    pub missed: Vec<String>,
    /// Sessions labelled unsure.
    pub unsure: usize,
    /// Unsure sessions with a finding.
    pub unsure_flagged: Vec<String>,
    /// Unsure sessions with a critical (or fatal) finding.
    pub unsure_critical: Vec<String>,
    /// Labelled loops of other kinds with a finding (path and kind).
    pub other_loops_flagged: Vec<String>,
}

impl Report {
    /// One line of figures, for the test's output.
    pub fn summary(&self, name: &str) -> String {
        let latencies: Vec<i64> = self.caught.iter().map(|(_, l)| *l).collect();
        format!(
            "{name}: {} sessions, {} with findings; labelled loops caught {}/{} (latency in lines \
             after first_event {latencies:?}, {} critical); unsure flagged {}/{} ({} critical); \
             loops of other kinds flagged {}; false positives {}/{}: {:?}",
            self.sessions,
            self.fired,
            self.caught.len(),
            self.loops,
            self.critical.len(),
            self.unsure_flagged.len(),
            self.unsure,
            self.unsure_critical.len(),
            self.other_loops_flagged.len(),
            self.false_positives.len(),
            self.clean,
            self.false_positives,
        )
    }
}

impl Report {
    /// Asserts that no session labelled `loop = false` got a finding.
    #[track_caller]
    pub fn assert_no_false_positives(&self) {
        assert_none("findings on loop=false sessions", &self.false_positives);
    }

    /// Asserts that every labelled loop of the kind checked got a finding.
    #[track_caller]
    pub fn assert_none_missed(&self) {
        assert_none("labelled loops missed", &self.missed);
    }

    /// Asserts that no session labelled unsure got a critical finding.
    #[track_caller]
    pub fn assert_no_unsure_critical(&self) {
        assert_none(
            "critical findings on unsure sessions",
            &self.unsure_critical,
        );
    }
}

#[track_caller]
fn assert_none<T: std::fmt::Debug>(what: &str, found: &[T]) {
    assert!(found.is_empty(), "{what}: {found:?}");
}

/// [`check`], printing the [`Report::summary`] under `name` and asserting that no session
/// labelled `loop = false` got a finding. `None` when the corpus is absent.
#[track_caller]
pub fn check_clean(
    name: &str,
    make: &dyn Fn() -> Box<dyn Detector>,
    kind: Option<&str>,
) -> Option<Report> {
    let r = check(make, kind)?;
    eprintln!("{}", r.summary(name));
    r.assert_no_false_positives();
    Some(r)
}

/// Replays every labelled session through a fresh detector from `make` (under the guard's
/// veto) and sums up what it found against the labels: loops of `kind` (of any kind when
/// `None`) should be caught, `loop = false` sessions get no finding. `None` when the corpus is
/// absent (with a note; under `CI=true` absence fails).
pub fn check(make: &dyn Fn() -> Box<dyn Detector>, kind: Option<&str>) -> Option<Report> {
    check_each(make, kind, &mut |_, _, _| {})
}

/// What [`check_each`] calls with every session: its label, its events and the findings, each
/// with its line.
pub type Each<'a> = dyn FnMut(&Label, &[(usize, OwnedEvent)], &[(usize, Finding)]) + 'a;

/// [`check`], also calling `each` with every session's label, events and findings (for the
/// figures one detector adds).
pub fn check_each(
    make: &dyn Fn() -> Box<dyn Detector>,
    kind: Option<&str>,
    each: &mut Each<'_>,
) -> Option<Report> {
    let dir = corpus_dir()?;
    let labels = labels(&dir);
    assert!(!labels.is_empty(), "labels.toml lists no session");
    let mut out = Report::default();
    for l in &labels {
        let events = events(&dir, &l.path);
        let found = replay(make(), &events);
        each(l, &events, &found);
        out.sessions += 1;
        if !found.is_empty() {
            out.fired += 1;
        }
        let is_kind = l.loops() && kind.is_none_or(|k| l.kind.as_deref() == Some(k));
        if l.clean() {
            out.clean += 1;
            if let Some((line, f)) = found.first() {
                out.false_positives
                    .push((l.path.clone(), *line, f.message.clone()));
            }
        } else if l.unsure() {
            out.unsure += 1;
            if !found.is_empty() {
                out.unsure_flagged.push(l.path.clone());
            }
            if found.iter().any(|(_, f)| f.level >= Level::Critical) {
                out.unsure_critical.push(l.path.clone());
            }
        } else if is_kind {
            out.loops += 1;
            let start = l.loop_start.unwrap_or(0);
            let first_event = l.first_event.unwrap_or(0) as i64;
            match found.iter().find(|(line, _)| *line >= start) {
                Some((line, _)) => out
                    .caught
                    .push((l.path.clone(), *line as i64 - first_event)),
                None => out.missed.push(l.path.clone()),
            }
            if let Some((line, _)) = found
                .iter()
                .find(|(line, f)| *line >= start && f.level >= Level::Critical)
            {
                out.critical
                    .push((l.path.clone(), *line as i64 - first_event));
            }
        } else if !found.is_empty() {
            out.other_loops_flagged.push(format!(
                "{} ({})",
                l.path,
                l.kind.as_deref().unwrap_or("?")
            ));
        }
    }
    Some(out)
}

/// What [`check_kind`] found.
#[derive(Clone, Debug, Default)]
pub struct KindCheck {
    /// Sessions labelled as loops of the kind that got a finding.
    pub caught: usize,
    /// Sessions labelled `loop = false` with no finding.
    pub clean: usize,
    /// Missed loops of the kind and findings on loop-free sessions, one line each.
    pub problems: Vec<String>,
}

/// Runs a fresh detector from `make` over every labelled session: loops of `kind` must get a
/// finding, sessions labelled `loop = false` none. `None` when the corpus is absent.
pub fn check_kind(
    make: &dyn Fn() -> Box<dyn Detector>,
    kind: &str,
    verbose: bool,
) -> Option<KindCheck> {
    let mut samples = Vec::new();
    let r = check_each(make, Some(kind), &mut |l, _, found| {
        if verbose {
            for (line, f) in found {
                eprintln!(
                    "{} loop={:?} line {line}: offset {:?} sample {:?}",
                    l.path, l.is_loop, f.offset, f.sample
                );
            }
        }
        if l.clean() {
            if let Some((_, f)) = found.first() {
                samples.push(f.sample.clone());
            }
        }
    })?;
    let mut problems: Vec<String> = r.missed.iter().map(|p| format!("missed {p}")).collect();
    for ((path, line, message), sample) in r.false_positives.iter().zip(samples) {
        problems.push(format!(
            "finding on loop-free {path} line {line}: {message} {sample:?}"
        ));
    }
    Some(KindCheck {
        caught: r.caught.len(),
        clean: r.clean - r.false_positives.len(),
        problems,
    })
}

/// The corpus test of a detector of text loops: with a detector from `make`, every session
/// labelled as a loop of `kind` is caught and no session labelled `loop = false` gets a finding
/// (with `LOOPGUARD_VERBOSE` set, every finding is printed). Passes with a note when the corpus
/// is absent.
#[track_caller]
pub fn assert_kind_caught_and_clean(make: &dyn Fn() -> Box<dyn Detector>, kind: &str) {
    let verbose = std::env::var_os("LOOPGUARD_VERBOSE").is_some();
    let Some(c) = check_kind(make, kind, verbose) else {
        return;
    };
    eprintln!(
        "default: caught {} {kind} sessions, {} loop=false sessions clean",
        c.caught, c.clean
    );
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    assert!(
        c.clean > 100,
        "only {} loop-free sessions were read",
        c.clean
    );
}
