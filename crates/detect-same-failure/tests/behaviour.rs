//! Behaviour of `same-failure` against its default settings (and a few explicit ones), and
//! its configuration.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Bus, Detector, Finding, Level, Origin, OwnedEvent, MAX_EVIDENCE};
use loopguard_detect_same_failure::{
    looks_like_failure, FailureIdentity, Options, SameFailure, Settings, NAME, REGISTRATION,
};
use loopguard_testkit::registration::OptionChecks;
use loopguard_testkit::{run, with_own_result_ids, Script};
use serde_json::json;

const USAGE: &str = "Usage: edit <start_line>:<end_line>";

fn det() -> Box<dyn Detector> {
    Box::new(SameFailure::new(Settings::default()))
}

fn det_with(warning: u32, critical: u32, unflagged: bool) -> Box<dyn Detector> {
    Box::new(SameFailure::new(Settings {
        warning_threshold: warning,
        critical_threshold: critical,
        count_unflagged_failures: unflagged,
        ..Settings::default()
    }))
}

/// `n` failing `edit` calls, each with new arguments, each answered by the usage message.
fn usage_failures(s: &mut Script, from: usize, n: usize) {
    for i in from..from + n {
        s.call(
            "edit",
            json!({"command": format!("edit reproduce.py {i}:{}\nprint({i})", i + 1)}),
            USAGE,
        );
    }
}

fn levels(f: &[(usize, Finding)]) -> Vec<(Level, u32)> {
    f.iter().map(|(_, f)| (f.level, f.count)).collect()
}

// ---- the usage-error loop ---------------------------------------------------------------

#[test]
fn usage_error_loop_warns_at_eight_and_blocks_the_next_call_after_sixteen() {
    let mut s = Script::new();
    usage_failures(&mut s, 0, 7);
    assert!(run(det(), s.events()).is_empty(), "seven failures are fine");
    usage_failures(&mut s, 7, 1);
    let f = run(det(), s.events());
    assert_eq!(levels(&f), vec![(Level::Warning, 8)]);
    // The warning is reported on the eighth result.
    let (at, w) = &f[0];
    assert!(matches!(s.events()[*at], OwnedEvent::ToolResult { .. }));
    assert_eq!(w.detector, NAME);
    assert_eq!(w.tool.as_deref(), Some("edit"));
    assert_eq!(w.evidence.len(), 8);
    assert!(w
        .message
        .contains("`edit` failed 8 times in a row with the same error"));
    assert!(w.message.contains("although the arguments changed"));
    assert!(w.message.contains(USAGE));
    assert!(w.message.contains("report the blocker"));
    assert_eq!(w.sample.as_deref(), Some(USAGE));

    // Up to the sixteenth failure: still only the one warning, and no critical on the results.
    usage_failures(&mut s, 8, 8);
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 8)]);

    // The next call of the same tool is critical, on its tool_call event.
    let id = s.tool_call("edit", json!({"command": "edit reproduce.py 99:100\nx"}));
    let f = run(det(), s.events());
    assert_eq!(levels(&f), vec![(Level::Warning, 8), (Level::Critical, 16)]);
    let (at, c) = &f[1];
    assert_eq!(*at, s.events().len() - 1);
    assert!(matches!(s.events()[*at], OwnedEvent::ToolCall { .. }));
    assert!(c.message.starts_with("CRITICAL:"));
    assert!(c.message.contains(USAGE));
    assert!(c.level != Level::Fatal);
    assert_eq!(c.key, f[0].1.key, "one run, one key");

    // Every further call stays critical: the blocked call never ran, and the guard's veto
    // keeps the result the host sends for it from the detector.
    s.tool_result(&id, "edit", USAGE, false);
    s.tool_call("edit", json!({"command": "edit reproduce.py 98:100\nx"}));
    let f = run(det(), s.events());
    assert_eq!(
        levels(&f),
        vec![
            (Level::Warning, 8),
            (Level::Critical, 16),
            (Level::Critical, 16)
        ]
    );
}

#[test]
fn blocked_calls_stay_blocked_while_their_results_are_swallowed() {
    // The orchestrator does not show the detectors the result of a call it blocked: several
    // calls in a row without results are all critical.
    let mut s = Script::new();
    usage_failures(&mut s, 0, 16);
    for i in 0..3 {
        s.tool_call("edit", json!({"command": format!("edit {i}")}));
    }
    let f = run(det(), s.events());
    let crit: Vec<_> = f
        .iter()
        .filter(|(_, f)| f.level == Level::Critical)
        .collect();
    assert_eq!(crit.len(), 3);
}

#[test]
fn critical_threshold_zero_never_blocks() {
    let mut s = Script::new();
    usage_failures(&mut s, 0, 40);
    s.tool_call("edit", json!({"command": "edit 1:2"}));
    let f = run(det_with(8, 0, true), s.events());
    assert_eq!(levels(&f), vec![(Level::Warning, 8)]);
}

#[test]
fn evidence_is_capped() {
    let mut s = Script::new();
    usage_failures(&mut s, 0, 100);
    s.tool_call("edit", json!({"command": "edit 1:2"}));
    // The first block comes after the hundredth failure (a blocked call's result never
    // counts).
    let blocks_at_100 = Settings {
        critical_threshold: 100,
        ..Settings::default()
    };
    let f = run(Box::new(SameFailure::new(blocks_at_100)), s.events());
    let (_, last) = f.last().unwrap();
    assert_eq!(last.level, Level::Critical);
    assert_eq!(last.count, 100);
    assert_eq!(last.evidence.len(), MAX_EVIDENCE);
}

// ---- what is not a run ------------------------------------------------------------------

#[test]
fn identical_args_are_left_to_generic_repeat() {
    let mut s = Script::new();
    s.repeat_call(30, "edit", json!({"command": "edit 1:2\nx"}), USAGE);
    s.tool_call("edit", json!({"command": "edit 1:2\nx"}));
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn identical_args_then_one_variant_is_a_varied_run() {
    let mut s = Script::new();
    s.repeat_call(9, "edit", json!({"command": "edit 1:2\nx"}), USAGE);
    assert!(run(det(), s.events()).is_empty());
    s.call("edit", json!({"command": "edit 1:3\nx"}), USAGE);
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 10)]);
}

#[test]
fn alternating_different_errors_are_not_counted() {
    let mut s = Script::new();
    for i in 0..40 {
        let err = if i % 2 == 0 {
            "error: unknown flag --x"
        } else {
            "error: missing operand"
        };
        s.call_with(
            "bash",
            json!({"command": format!("tool --x {i}")}),
            err,
            true,
        );
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_success_resets_the_run() {
    let mut s = Script::new();
    for round in 0..5 {
        usage_failures(&mut s, round * 10, 7);
        s.call(
            "edit",
            json!({"command": format!("edit {round}:1")}),
            "[File: a.py (10 lines total)]",
        );
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_call_of_another_tool_in_between_resets_the_run() {
    let mut s = Script::new();
    for round in 0..5 {
        usage_failures(&mut s, round * 10, 7);
        // Only the call: its result has not arrived yet when the next edit fails.
        s.tool_call("open", json!({"path": "a.py"}));
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_failing_result_of_another_tool_in_between_resets_the_run() {
    let mut s = Script::new();
    for round in 0..5 {
        usage_failures(&mut s, round * 10, 7);
        s.call("goto", json!({"line": round}), USAGE);
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_new_user_turn_resets_the_run() {
    let mut s = Script::new();
    for round in 0..5 {
        usage_failures(&mut s, round * 10, 7);
        s.user(&format!("please try something else ({round})"));
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn the_guards_own_steer_and_a_repeated_harness_message_do_not_reset() {
    let mut s = Script::new();
    s.user("fix the bug");
    usage_failures(&mut s, 0, 4);
    s.user_from("WARNING: stop", Origin::Guard);
    usage_failures(&mut s, 4, 2);
    // Word for word the previous user-side text: not a new turn.
    s.user("fix the bug");
    usage_failures(&mut s, 6, 2);
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 8)]);
}

#[test]
fn a_long_test_log_mentioning_error_in_the_middle_is_a_success() {
    // Decision: unflagged output is judged by its first 300 characters. A long log whose
    // start reads fine is a success (and ends any run), even with "error:" further down.
    let log = format!(
        "============ test session starts ============\n{}\nE   AssertionError: boom\nerror: 1 failed\n",
        "tests/test_a.py::test_ok PASSED\n".repeat(20)
    );
    assert!(!looks_like_failure(&log));
    let mut s = Script::new();
    for i in 0..30 {
        s.call("bash", json!({"command": format!("pytest -k t{i}")}), &log);
    }
    assert!(run(det(), s.events()).is_empty());
    // And it breaks a run of real failures.
    let mut s = Script::new();
    for round in 0..4 {
        usage_failures(&mut s, round * 10, 7);
        s.call("edit", json!({"command": "edit 1:2"}), &log);
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn every_result_is_paired_with_its_own_call() {
    // A log read over and over (its text is no failure of the read) stays silent only if
    // each result finds its call, the id of which is kept until the result arrives.
    let mut s = Script::new();
    s.call_args(
        20,
        "bash",
        |i| json!({"command": format!("cat build-{i}.log")}),
        "ERROR: Could not find artifact com.example:lib",
    );
    assert!(run(det(), s.events()).is_empty());
    // The recurring rule counts failures whatever lies between: one misread would count.
    let recurring = Settings {
        recurring_threshold: 4,
        failure_identity: FailureIdentity::Shape,
        ..Settings::default()
    };
    assert!(run(Box::new(SameFailure::new(recurring)), s.events()).is_empty());
    // A host that numbers its results its own way: each result still answers its call (the
    // one the bus pairs it with), so the reads stay reads.
    let own = with_own_result_ids(s.events());
    assert!(run(det(), &own).is_empty());
    assert!(run(Box::new(SameFailure::new(recurring)), &own).is_empty());
    // The same text from calls that do not read a file is the calls' own failure.
    let mut s = Script::new();
    s.call_args(
        8,
        "bash",
        |i| json!({"command": format!("mvn -q test -Dn={i}")}),
        "ERROR: Could not find artifact com.example:lib",
    );
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 8)]);
}

#[test]
fn a_failure_at_the_start_of_a_long_output_counts() {
    let out = format!(
        "Traceback (most recent call last):\n  File \"x.py\", line 1\n{}",
        "  more\n".repeat(200)
    );
    let mut s = Script::new();
    for i in 0..8 {
        s.call("python", json!({"code": format!("run({i})")}), &out);
    }
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 8)]);
}

#[test]
fn the_error_flag_counts_whatever_the_text() {
    let mut s = Script::new();
    for i in 0..8 {
        s.call_with("write", json!({"path": format!("/ro/{i}")}), "EROFS", true);
    }
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 8)]);
    // With count-unflagged-failures off, the flag still counts ...
    assert_eq!(
        levels(&run(det_with(8, 16, false), s.events())),
        vec![(Level::Warning, 8)]
    );
    // ... but unflagged usage messages do not.
    let mut s = Script::new();
    usage_failures(&mut s, 0, 30);
    assert!(run(det_with(8, 16, false), s.events()).is_empty());
}

#[test]
fn bash_line_counters_do_not_make_errors_differ() {
    let mut s = Script::new();
    for i in 0..8 {
        s.call(
            "bash",
            json!({"command": format!("cd fastjson{i}/ && ls")}),
            &format!(
                "/bin/bash: line {}: cd: fastjson/: No such file or directory",
                100 + i
            ),
        );
    }
    let f = run(det(), s.events());
    assert_eq!(levels(&f), vec![(Level::Warning, 8)]);
    assert!(f[0].1.message.contains("No such file or directory"));
}

#[test]
fn successes_that_vary_never_fire() {
    let mut s = Script::new();
    for i in 0..50 {
        s.call(
            "read",
            json!({"path": format!("f{i}")}),
            &format!("content {i}"),
        );
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_new_run_after_a_break_has_its_own_key_and_warning() {
    let mut s = Script::new();
    usage_failures(&mut s, 0, 8);
    s.call("edit", json!({"command": "edit 1:2"}), "ok, edited");
    usage_failures(&mut s, 20, 8);
    let f = run(det(), s.events());
    assert_eq!(levels(&f), vec![(Level::Warning, 8), (Level::Warning, 8)]);
    assert_ne!(f[0].1.key, f[1].1.key);
}

#[test]
fn parallel_calls_of_the_same_tool_keep_the_run() {
    let mut s = Script::new();
    for round in 0..4 {
        s.batch(&[
            ("edit", json!({"command": format!("edit {round}:1")}), USAGE),
            ("edit", json!({"command": format!("edit {round}:2")}), USAGE),
        ]);
    }
    assert_eq!(levels(&run(det(), s.events())), vec![(Level::Warning, 8)]);
}

#[test]
fn snapshot_restore_keeps_the_run() {
    let mut s = Script::new();
    usage_failures(&mut s, 0, 16);
    s.tool_call("edit", json!({"command": "edit 1:2"}));
    let events = s.events();
    let cut = events.len() / 2;
    let mut bus = Bus::new(vec![det()]);
    let mut out = vec![];
    for e in &events[..cut] {
        out.extend(bus.observe(&e.as_event()));
    }
    let snap = bus.snapshot().unwrap();
    let mut bus = Bus::new(vec![det()]);
    bus.restore(&snap).unwrap();
    for e in &events[cut..] {
        out.extend(bus.observe(&e.as_event()));
    }
    let whole: Vec<Finding> = run(det(), events).into_iter().map(|(_, f)| f).collect();
    assert_eq!(out, whole);
    assert_eq!(out.len(), 2);
}

// ---- failure patterns -------------------------------------------------------------------

#[test]
fn failure_patterns() {
    for text in [
        USAGE,
        "  usage: git commit [options]",
        "error: pathspec 'x' did not match",
        "TypeError: unsupported operand",
        "ERROR tests/test_a.py",
        "sh: 1: mvn: command not found",
        "cat: x: No such file or directory",
        "File not found: a.py",
        "Traceback (most recent call last):\n  File",
        "java.lang.IllegalStateException at ...",
        "Invalid line range",
        "permission denied",
        "cannot open file",
        "Unable to locate package",
        "Build failed",
    ] {
        assert!(looks_like_failure(text), "{text:?} is a failure");
    }
    for text in [
        "",
        "[File: a.py (10 lines total)]",
        "Found 3 matches for \"cause\"",
        "No matches found for \"x\"",
        "All tests passed",
        "Edited file; 2 lines changed.",
        "Usage of memory: 3%",
    ] {
        assert!(!looks_like_failure(text), "{text:?} is not a failure");
    }
    // Multi-byte text around the 300-character boundary never panics, and the cut is by
    // characters.
    // An error word inside other text is not an error message; an editor's rejection is,
    // when it starts within the first 300 characters.
    let head = "é".repeat(299);
    assert!(!looks_like_failure(&format!("{}ERROR", "é".repeat(295))));
    let rejection = "No replacement was performed";
    assert!(!looks_like_failure(&format!("{head}{rejection}")));
    assert!(looks_like_failure(&format!(
        "{}{rejection}",
        "é".repeat(300 - rejection.len())
    )));
}

// ---- configuration ----------------------------------------------------------------------

const OPTIONS: OptionChecks = OptionChecks(&REGISTRATION);

#[test]
fn config_defaults_and_registration() {
    assert_eq!(REGISTRATION.name, "same-failure");
    assert_eq!(REGISTRATION.code, "LG010");
    const { assert!(REGISTRATION.default_enabled) };
    let names: Vec<_> = REGISTRATION.options.iter().map(|o| o.name).collect();
    assert_eq!(
        names,
        vec![
            "warning-threshold",
            "critical-threshold",
            "count-unflagged-failures",
            "failure-identity",
            "recurring-threshold",
            "recurring-window"
        ]
    );
    assert_eq!(OPTIONS.build("").unwrap().name(), NAME);
    let s = Settings::from_options(&Options::default()).unwrap();
    assert_eq!(s, Settings::default());
    assert_eq!((s.warning_threshold, s.critical_threshold), (8, 16));
    assert!(s.count_unflagged_failures);
    let o = Options {
        warning_threshold: Some(3),
        critical_threshold: Some(5),
        count_unflagged_failures: Some(false),
        ..Options::default()
    };
    let s = Settings::from_options(&o).unwrap();
    assert_eq!(
        (
            s.warning_threshold,
            s.critical_threshold,
            s.count_unflagged_failures
        ),
        (3, 5, false)
    );
}

#[test]
fn config_built_detector_uses_its_options() {
    let mut s = Script::new();
    usage_failures(&mut s, 0, 3);
    s.tool_call("edit", json!({"command": "edit 1:2"}));
    let d = OPTIONS
        .build("warning-threshold = 2\ncritical-threshold = 3")
        .unwrap();
    assert_eq!(
        levels(&run(d, s.events())),
        vec![(Level::Warning, 2), (Level::Critical, 3)]
    );
}

#[test]
fn config_errors_name_the_key() {
    for (toml_text, key) in [
        ("warning-threshold = 0", "warning-threshold"),
        ("warning-threshold = -3", "warning-threshold"),
        ("critical-threshold = -1", "critical-threshold"),
        ("warning-threshold = 16", "critical-threshold"),
        (
            "warning-threshold = 5\ncritical-threshold = 4",
            "critical-threshold",
        ),
        ("warning-threshold = \"8\"", "warning-threshold"),
        ("warning-threshold = 2.5", "warning-threshold"),
        ("count-unflagged-failures = 1", "count-unflagged-failures"),
        ("warning-threshold = 2000000", "warning-threshold"),
    ] {
        OPTIONS.rejected(toml_text, key);
    }
    // Unknown keys are rejected.
    let err = OPTIONS.build("failure-patterns = [\"x\"]").unwrap_err();
    assert!(err.to_string().contains("failure-patterns"), "{err}");
    // critical-threshold = 0 (never) accepts any warning threshold.
    assert!(OPTIONS
        .build("warning-threshold = 100\ncritical-threshold = 0")
        .is_ok());
}

#[test]
fn the_message_quotes_the_line_that_says_what_failed() {
    // A test runner's report opens with a rule and a banner: the warning quotes the
    // assertion, not the banner.
    let report = "============================= test session starts ==============================\n\
                  collected 12 items\n\n\
                  tests/test_parse.py ...........F                                         [100%]\n\n\
                  =================================== FAILURES ===================================\n\
                  _____________________________ test_split_colons ______________________________\n\n    \
                  def test_split_colons():\n\
                  >       assert parse(\"a:b:c\") == (\"a\", \"b:c\")\n\
                  E       AssertionError: assert ('a', 'b') == ('a', 'b:c')\n\n\
                  tests/test_parse.py:41: AssertionError\n\
                  ========================= 1 failed, 11 passed in 0.08s =========================";
    let mut s = Script::new();
    for i in 0..8 {
        s.call(
            "edit",
            json!({"path": "src/parse.py", "old": format!("v{i}"), "new": format!("v{}", i + 1)}),
            "Applied 1 edit to src/parse.py",
        );
        let id = s.tool_call(
            "bash",
            json!({"command": "python -m pytest -q tests/test_parse.py"}),
        );
        s.tool_result(&id, "bash", report, true);
    }
    // The recurring rule of the default preset: 4 of the last 7 results.
    let det = SameFailure::new(Settings {
        recurring_threshold: 4,
        recurring_window: 7,
        ..Settings::default()
    });
    let f = run(Box::new(det), s.events());
    let (_, w) = f.first().expect("the same failure eight times is warned");
    assert!(
        w.message.contains("AssertionError: assert"),
        "{}",
        w.message
    );
    assert!(!w.message.contains("====="), "{}", w.message);
    assert!(
        w.sample
            .as_deref()
            .is_some_and(|s| s.contains("AssertionError")),
        "{w:?}"
    );
}
