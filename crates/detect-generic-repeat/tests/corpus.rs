//! Corpus evaluation: the default settings give no finding at all on sessions labelled
//! `loop = false`; prints what each preset catches (`cargo test -p
//! loopguard-detect-generic-repeat --test corpus -- --nocapture`).
//!
//! The corpus is read in place from `$LOOPGUARD_CORPUS` or `../shared/corpus` relative to
//! the workspace root. When it is absent the test prints a note and passes, except with
//! `CI=true`, where absence is a failure.

use loopguard_core::{Config, Detector, Level, Origin, OwnedEvent, Stream};
use loopguard_detect_generic_repeat::{GenericRepeat, Settings, NAME};
use serde_json::Value;
use std::path::PathBuf;

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
        "corpus not found at {} (CI=true)",
        dir.display()
    );
    eprintln!("note: corpus not found at {}; skipping", dir.display());
    None
}

fn preset_table(name: &str) -> toml::Table {
    let readme = include_str!("../README.md");
    let marker = format!("# preset: {name}\n");
    let start = readme.find(&marker).expect("preset block");
    let rest = &readme[start..];
    let end = rest.find("```").expect("block end");
    let config = Config::from_toml_str(&rest[..end], None).expect("preset parses");
    let mut t = config.detectors.get(NAME).cloned().expect("table");
    t.remove("enabled");
    t
}

fn detector(table: &toml::Table) -> Box<dyn Detector> {
    Box::new(GenericRepeat::new(
        Settings::from_table(table).expect("valid settings"),
    ))
}

/// Events of one transcript, each with the 0-based line it came from.
fn read_session(text: &str) -> Vec<(usize, OwnedEvent)> {
    let mut out = Vec::new();
    for (line, raw) in text.lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(raw) else {
            continue;
        };
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
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
                for (k, stream) in [("thinking", Stream::Thinking), ("text", Stream::Text)] {
                    let t = s(k);
                    if !t.is_empty() {
                        out.push((line, OwnedEvent::TextDelta { stream, delta: t }));
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
    loop_: String,
    kind: String,
    first_event: Option<i64>,
}

fn labels(dir: &std::path::Path) -> Vec<Label> {
    let text = std::fs::read_to_string(dir.join("labels.toml")).expect("labels.toml");
    let t: toml::Table = text.parse().expect("labels parse");
    let sessions = t
        .get("session")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    sessions
        .iter()
        .filter_map(|s| {
            let s = s.as_table()?;
            Some(Label {
                path: s.get("path")?.as_str()?.to_owned(),
                loop_: match s.get("loop")? {
                    toml::Value::Boolean(b) => b.to_string(),
                    toml::Value::String(x) => x.clone(),
                    other => other.to_string(),
                },
                kind: s
                    .get("kind")
                    .and_then(|k| k.as_str())
                    .unwrap_or("")
                    .to_owned(),
                first_event: s.get("first_event").and_then(toml::Value::as_integer),
            })
        })
        .collect()
}

/// (line of the first finding, line of the first critical, number of findings).
fn evaluate(
    table: &toml::Table,
    events: &[(usize, OwnedEvent)],
) -> (Option<usize>, Option<usize>, usize, Vec<String>) {
    let mut bus = loopguard_core::Bus::new(vec![detector(table)]);
    let (mut first, mut crit, mut n, mut keys) = (None, None, 0, Vec::new());
    for (line, e) in events {
        for f in bus.observe(&e.as_event()) {
            n += 1;
            first.get_or_insert(*line);
            if f.level == Level::Critical {
                crit.get_or_insert(*line);
            }
            if keys.len() < 3 {
                keys.push(format!("{}@{line}:{}", f.level.as_str(), f.key));
            }
        }
    }
    (first, crit, n, keys)
}

#[test]
fn default_settings_give_no_finding_on_loop_free_sessions() {
    let Some(dir) = corpus_dir() else { return };
    let labels = labels(&dir);
    assert!(!labels.is_empty());
    // Extra configurations to compare (printed only): `LOOPGUARD_EVAL_CONFIGS` holds TOML
    // tables separated by `|||`.
    let extra = std::env::var("LOOPGUARD_EVAL_CONFIGS").unwrap_or_default();
    let extra: Vec<String> = extra
        .split("|||")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let mut presets: Vec<String> = [
        "default",
        "pi-loop-guard",
        "pi-repetition-guard",
        "openclaw",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut tables: Vec<toml::Table> = presets.iter().map(|p| preset_table(p)).collect();
    for (i, e) in extra.iter().enumerate() {
        presets.push(format!("extra-{i}"));
        tables.push(e.parse().expect("LOOPGUARD_EVAL_CONFIGS entry parses"));
    }
    let mut false_positives: Vec<Vec<String>> = vec![Vec::new(); presets.len()];
    let mut caught = vec![0usize; presets.len()];
    let mut caught_repeat = vec![0usize; presets.len()];
    let mut loops = 0;
    let mut repeat_loops = 0;
    let mut latency: Vec<Vec<i64>> = vec![Vec::new(); presets.len()];
    for l in &labels {
        let Ok(text) = std::fs::read_to_string(dir.join(&l.path)) else {
            continue;
        };
        let events = read_session(&text);
        for (i, t) in tables.iter().enumerate() {
            let (first, crit, n, keys) = evaluate(t, &events);
            match l.loop_.as_str() {
                "false" if n > 0 => false_positives[i].push(format!(
                    "{} ({n} findings: {})",
                    l.path,
                    keys.join(", ")
                )),
                "true" => {
                    if let Some(line) = first {
                        caught[i] += 1;
                        if matches!(l.kind.as_str(), "tool-repeat" | "other") {
                            caught_repeat[i] += 1;
                        }
                        if let Some(fe) = l.first_event {
                            latency[i].push(line as i64 - fe);
                        }
                        if i == 0 {
                            eprintln!(
                                "  caught {:<55} kind={:<15} first={line} crit={crit:?} label_first={:?}",
                                l.path, l.kind, l.first_event
                            );
                        }
                    } else if i == 0 && matches!(l.kind.as_str(), "tool-repeat" | "other") {
                        eprintln!("  missed {:<55} kind={}", l.path, l.kind);
                    }
                }
                _ => {}
            }
        }
        if l.loop_ == "true" {
            loops += 1;
            if matches!(l.kind.as_str(), "tool-repeat" | "other") {
                repeat_loops += 1;
            }
        }
    }
    let negatives = labels.iter().filter(|l| l.loop_ == "false").count();
    for (i, p) in presets.iter().enumerate() {
        let mut lat = latency[i].clone();
        lat.sort_unstable();
        let median = lat.get(lat.len() / 2).copied();
        eprintln!(
            "{p:<20} loops caught {}/{loops} (tool-repeat+other {}/{repeat_loops}); false positives {}/{negatives}; \
             median latency vs label first_event {median:?} lines",
            caught[i],
            caught_repeat[i],
            false_positives[i].len()
        );
        for fp in &false_positives[i] {
            eprintln!("    FP {fp}");
        }
    }
    assert!(
        false_positives[0].is_empty(),
        "default settings fired on loop-free sessions: {:#?}",
        false_positives[0]
    );
}
