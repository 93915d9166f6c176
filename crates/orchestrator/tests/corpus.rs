//! The presets over the evaluation corpus: the `default` preset must give no finding at all on
//! sessions labelled `loop = false`; every labelled loop is reported (as a figure) per preset.
//! The corpus is read from `$LOOPGUARD_CORPUS` or `../shared/corpus` relative to the workspace
//! root; when absent the test prints a note and passes, except with `CI=true`.

use loopguard_core::{Origin, OwnedEvent, Stream};
use loopguard_orchestrator::{Action, Guard};
use serde_json::Value;
use std::path::PathBuf;

use loopguard_detect_circuit_breaker as _;
use loopguard_detect_generic_repeat as _;
use loopguard_detect_known_poll as _;
use loopguard_detect_ping_pong as _;
use loopguard_detect_post_compaction as _;
use loopguard_detect_same_failure as _;
use loopguard_detect_stalled_turns as _;
use loopguard_detect_tail_periodicity as _;
use loopguard_detect_unknown_tool as _;
use loopguard_detect_variation_loop as _;

fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LOOPGUARD_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    if dir.join("labels.toml").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "corpus not found at {}",
        dir.display()
    );
    eprintln!("note: corpus not found at {}; skipping", dir.display());
    None
}

/// One transcript line as events, with the line index each event came from.
fn events_of(text: &str) -> Vec<(usize, OwnedEvent)> {
    let mut out = Vec::new();
    for (line, raw) in text.lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(raw) else {
            continue;
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        match v.get("type").and_then(Value::as_str) {
            Some("session") => out.push((line, OwnedEvent::SessionStart { id: s("id") })),
            Some("user") => out.push((
                line,
                OwnedEvent::User {
                    text: s("text"),
                    origin: Origin::Unknown,
                },
            )),
            Some("assistant") => {
                out.push((line, OwnedEvent::MessageStart));
                for (stream, key) in [(Stream::Thinking, "thinking"), (Stream::Text, "text")] {
                    let chars: Vec<char> = s(key).chars().collect();
                    for chunk in chars.chunks(16) {
                        out.push((
                            line,
                            OwnedEvent::TextDelta {
                                stream,
                                delta: chunk.iter().collect(),
                            },
                        ));
                    }
                }
                out.push((line, OwnedEvent::MessageEnd));
            }
            Some("tool_call") => out.push((
                line,
                OwnedEvent::ToolCall {
                    id: s("id"),
                    tool: s("tool"),
                    args: v.get("args").cloned().unwrap_or(Value::Null),
                    batch: v.get("batch").and_then(Value::as_u64),
                },
            )),
            Some("tool_result") => out.push((
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
            Some("compaction") => out.push((line, OwnedEvent::Compaction)),
            _ => {}
        }
    }
    out
}

struct Label {
    path: String,
    is_loop: Option<bool>,
    kind: String,
    first_event: Option<i64>,
}

fn labels(dir: &std::path::Path) -> Vec<Label> {
    let text = std::fs::read_to_string(dir.join("labels.toml")).expect("labels");
    let t: toml::Table = text.parse().expect("labels parse");
    let sessions = t
        .get("session")
        .and_then(toml::Value::as_array)
        .cloned()
        .unwrap_or_default();
    sessions
        .iter()
        .filter_map(|s| {
            let path = s.get("path")?.as_str()?.to_owned();
            let is_loop = s.get("loop").and_then(toml::Value::as_bool);
            let kind = s
                .get("kind")
                .and_then(toml::Value::as_str)
                .unwrap_or("")
                .to_owned();
            let first_event = s.get("first_event").and_then(toml::Value::as_integer);
            Some(Label {
                path,
                is_loop,
                kind,
                first_event,
            })
        })
        .collect()
}

/// (first acting line, first finding line, detectors that fired)
fn scan(preset: &str, text: &str) -> (Option<usize>, Option<usize>, Vec<String>) {
    let mut g = Guard::builder().preset(preset).build().expect("preset");
    let mut acted = None;
    let mut found = None;
    let mut dets = Vec::new();
    for (line, e) in events_of(text) {
        let v = g.observe(&e.as_event());
        if !v.findings.is_empty() && found.is_none() {
            found = Some(line);
        }
        for f in &v.findings {
            let d = format!(
                "{}:{}:{}",
                f.detector,
                f.level.as_str(),
                f.key.split(':').next().unwrap_or("")
            );
            if !dets.contains(&d) {
                dets.push(d);
            }
        }
        if v.action != Action::Continue && acted.is_none() {
            acted = Some(line);
        }
    }
    (acted, found, dets)
}

#[test]
fn default_preset_has_no_finding_on_loop_free_sessions_and_reports_its_recall() {
    let Some(dir) = corpus_dir() else { return };
    let mut false_positives = Vec::new();
    for preset in loopguard_orchestrator::PRESETS {
        let (mut loops, mut caught, mut clean, mut fp) = (0, 0, 0, 0);
        let mut early = 0;
        let mut missed = Vec::new();
        for l in labels(&dir) {
            let Ok(text) = std::fs::read_to_string(dir.join(&l.path)) else {
                continue;
            };
            let (acted, found, dets) = scan(preset, &text);
            match l.is_loop {
                Some(true) => {
                    loops += 1;
                    match acted {
                        Some(line) => {
                            caught += 1;
                            if l.first_event
                                .is_some_and(|f| i64::try_from(line).unwrap_or(i64::MAX) <= f)
                            {
                                early += 1;
                            }
                        }
                        None => missed.push(format!("{} ({})", l.path, l.kind)),
                    }
                }
                Some(false) => {
                    clean += 1;
                    if found.is_some() {
                        fp += 1;
                        if *preset == "default" {
                            false_positives.push(format!("{} line {:?}: {dets:?}", l.path, found));
                        }
                    }
                }
                None => {}
            }
        }
        eprintln!(
            "preset {preset}: acted on {caught}/{loops} loops ({early} by the labelled first_event); \
             findings on {fp}/{clean} loop-free sessions; missed: {missed:?}"
        );
    }
    assert!(
        false_positives.is_empty(),
        "default preset findings on loop-free sessions:\n{}",
        false_positives.join("\n")
    );
}
