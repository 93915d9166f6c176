//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`, the `edit` usage-error loop of the jackson-databind-4249 SWE-agent session
//! caught; prints the longest run of identical failures on loop-free sessions (the margin
//! below the warning threshold) and what fires elsewhere.

use loopguard_core::Level;
use loopguard_detect_same_failure::{SameFailure, Settings};
use loopguard_testkit::corpus::{check_each, replay};

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
    let mut longest_clean = 0u32;
    let mut longest_clean_at = String::new();
    let mut usage_loop_seen = false;
    let Some(r) = check_each(
        &|| Box::new(SameFailure::new(Settings::default())),
        None,
        &mut |l, events, f| {
            if l.clean() {
                // The longest run (with varied arguments) this session reaches.
                let mut longest = 0;
                for w in 1..=Settings::DEFAULT_WARNING_THRESHOLD {
                    if replay(with_warning(w), events).is_empty() {
                        break;
                    }
                    longest = w;
                }
                if longest > longest_clean {
                    longest_clean = longest;
                    longest_clean_at = l.path.clone();
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
        },
    ) else {
        return;
    };
    eprintln!(
        "{}; longest run of identical failures with varied arguments on loop-free sessions: \
         {longest_clean} ({longest_clean_at})",
        r.summary("same-failure (default)")
    );
    assert!(usage_loop_seen, "{USAGE_LOOP} is in the corpus");
    r.assert_no_false_positives();
    assert!(
        longest_clean < Settings::DEFAULT_WARNING_THRESHOLD,
        "a loop-free session reaches the warning threshold"
    );
    r.assert_no_unsure_critical();
}
