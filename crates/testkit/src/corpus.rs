//! The evaluation corpus for detector tests: reads `$LOOPGUARD_CORPUS` or `../shared/corpus`
//! (beside the workspace) and replays its sessions through a bus holding one detector. Test
//! helpers: they panic on a corpus that does not read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use loopguard_core::{Detector, Finding, Origin, OwnedEvent, Stream};
use serde_json::Value;
use std::path::PathBuf;

/// One `[[session]]` of `labels.toml`.
#[derive(Clone, Debug)]
pub struct Label {
    /// File name in the corpus folder.
    pub path: String,
    /// "true", "false" or "unsure".
    pub loop_: String,
    /// The loop kind, for loops.
    pub kind: Option<String>,
    /// 0-based line of the first occurrence of the repeated unit.
    pub loop_start: Option<usize>,
    /// 0-based line of its third occurrence.
    pub first_event: Option<usize>,
}

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

/// The `[[session]]` tables of `labels.toml`.
pub fn labels(dir: &std::path::Path) -> Vec<Label> {
    let text = std::fs::read_to_string(dir.join("labels.toml")).expect("labels.toml readable");
    let table: toml::Table = text.parse().expect("labels.toml parses");
    let sessions = table
        .get("session")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    sessions
        .iter()
        .filter_map(|s| {
            let t = s.as_table()?;
            let loop_ = match t.get("loop")? {
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::String(s) => s.clone(),
                _ => return None,
            };
            let int = |k: &str| {
                t.get(k)
                    .and_then(|v| v.as_integer())
                    .and_then(|n| usize::try_from(n).ok())
            };
            Some(Label {
                path: t.get("path")?.as_str()?.to_owned(),
                loop_,
                kind: t.get("kind").and_then(|v| v.as_str()).map(str::to_owned),
                loop_start: int("loop_start"),
                first_event: int("first_event"),
            })
        })
        .collect()
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
    let dir = corpus_dir()?;
    let mut out = KindCheck::default();
    for l in labels(&dir) {
        let found = replay(make(), &events(&dir, &l.path));
        if verbose {
            for (line, f) in &found {
                eprintln!(
                    "{} loop={} line {line}: offset {:?} sample {:?}",
                    l.path, l.loop_, f.offset, f.sample
                );
            }
        }
        match (l.loop_.as_str(), l.kind.as_deref()) {
            ("true", Some(k)) if k == kind => {
                if found.is_empty() {
                    out.problems.push(format!("missed {}", l.path));
                } else {
                    out.caught += 1;
                }
            }
            ("false", _) => match found.first() {
                None => out.clean += 1,
                Some((line, f)) => out.problems.push(format!(
                    "finding on loop-free {} line {line}: {} {:?}",
                    l.path, f.message, f.sample
                )),
            },
            _ => {}
        }
    }
    Some(out)
}
