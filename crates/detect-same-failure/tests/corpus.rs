//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`, the `edit` usage-error loop of the jackson-databind-4249 SWE-agent session
//! caught; prints the longest run of identical failures on loop-free sessions (the margin
//! below the warning threshold) and what fires elsewhere.
#![allow(clippy::unwrap_used)]

mod common;

use loopguard_core::Level;
use loopguard_detect_same_failure::{SameFailure, Settings};

const USAGE_LOOP: &str = "sweagent-msb-doubao__fasterxml__jackson-databind-4249.jsonl";

fn with_warning(w: u32) -> Box<SameFailure> {
    Box::new(SameFailure::new(Settings {
        warning_threshold: w,
        critical_threshold: 0,
        count_unflagged_failures: true,
        ..Settings::default()
    }))
}

#[test]
fn corpus_no_false_positives_and_usage_loop_caught() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let labels = common::labels(&dir);
    assert!(!labels.is_empty());
    let mut fp = vec![];
    let mut clean = 0;
    let mut longest_clean = 0u32;
    let mut longest_clean_at = String::new();
    let mut flagged = vec![];
    let mut unsure_critical = vec![];
    let mut usage_loop_seen = false;
    for l in &labels {
        let events = common::events(&dir, &l.path);
        let f = common::replay(Box::new(SameFailure::new(Settings::default())), &events);
        match l.loop_.as_str() {
            "false" => {
                clean += 1;
                if let Some((line, f)) = f.first() {
                    fp.push((l.path.clone(), *line, f.message.clone()));
                }
                // The longest run (with varied arguments) this session reaches.
                let mut longest = 0;
                for w in 1..=Settings::DEFAULT_WARNING_THRESHOLD {
                    if common::replay(with_warning(w), &events).is_empty() {
                        break;
                    }
                    longest = w;
                }
                if longest > longest_clean {
                    longest_clean = longest;
                    longest_clean_at = l.path.clone();
                }
            }
            "unsure" => {
                if f.iter().any(|(_, f)| f.level == Level::Critical) {
                    unsure_critical.push(l.path.clone());
                }
                if !f.is_empty() {
                    flagged.push((l.path.clone(), l.loop_.clone(), f.len()));
                }
            }
            _ => {
                if !f.is_empty() {
                    flagged.push((l.path.clone(), l.kind.clone().unwrap_or_default(), f.len()));
                }
            }
        }
        if l.path == USAGE_LOOP {
            usage_loop_seen = true;
            let warning = f.iter().find(|(_, f)| f.level == Level::Warning);
            let critical = f.iter().find(|(_, f)| f.level == Level::Critical);
            eprintln!(
                "same-failure: {USAGE_LOOP}: labelled loop_start {:?}, first_event {:?}; warning at line {:?}, first critical at line {:?}, {} critical findings",
                l.loop_start,
                l.first_event,
                warning.map(|(line, _)| line),
                critical.map(|(line, _)| line),
                f.iter().filter(|(_, f)| f.level == Level::Critical).count()
            );
            let (_, w) = warning.expect("the usage-error loop is warned");
            assert_eq!(w.tool.as_deref(), Some("edit"));
            assert!(w.message.contains("Usage: edit <start_line>:<end_line>"));
            assert!(critical.is_some(), "the usage-error loop reaches critical");
        }
    }
    eprintln!(
        "same-failure (default): false positives {}/{clean}; longest run of identical failures with varied arguments on loop-free sessions: {longest_clean} ({longest_clean_at}); sessions with findings (path, kind, findings): {flagged:?}",
        fp.len()
    );
    assert!(usage_loop_seen, "{USAGE_LOOP} is in the corpus");
    assert!(fp.is_empty(), "findings on loop=false sessions: {fp:?}");
    assert!(
        longest_clean < Settings::DEFAULT_WARNING_THRESHOLD,
        "a loop-free session reaches the warning threshold"
    );
    assert!(
        unsure_critical.is_empty(),
        "critical findings on unsure sessions: {unsure_critical:?}"
    );
}
