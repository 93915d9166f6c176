//! Checklist section C (items 19-25) against the `openclaw` settings, OpenClaw's ping-pong
//! test table (§3.10), configuration validation, and the same scenarios against the default.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Config, Detector, Finding, Level, OwnedEvent, Registry};
use loopguard_detect_ping_pong::{PingPong, Settings, REGISTRATION};
use loopguard_testkit::{run, Script};
use serde_json::{json, Value};

fn oc() -> Box<dyn Detector> {
    Box::new(PingPong::new(Settings::OPENCLAW))
}

fn default() -> Box<dyn Detector> {
    Box::new(PingPong::new(Settings::default()))
}

fn from_toml(toml: &str) -> Result<Box<dyn Detector>, loopguard_core::ConfigError> {
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    let c = Config::from_toml_str(&format!("[detectors.ping-pong]\n{toml}"), None).unwrap();
    registry.build(&c).map(|mut v| v.remove(0))
}

fn read() -> (&'static str, Value) {
    ("read", json!({"path": "a"}))
}

fn list() -> (&'static str, Value) {
    ("list", json!({"dir": "d"}))
}

/// `n` alternating calls starting with read(a), without results.
fn alternating_calls(n: usize) -> Script {
    let mut s = Script::new();
    for i in 0..n {
        let (t, a) = if i % 2 == 0 { read() } else { list() };
        s.tool_call(t, a);
    }
    s
}

/// `n` alternating calls starting with read(a), with results from `result(i)`.
fn alternating(n: usize, result: impl Fn(usize) -> String) -> Script {
    let mut s = Script::new();
    for i in 0..n {
        let (t, a) = if i % 2 == 0 { read() } else { list() };
        s.call(t, a, &result(i));
    }
    s
}

/// Findings on the last event only.
fn last(d: Box<dyn Detector>, events: &[OwnedEvent]) -> Vec<Finding> {
    let n = events.len();
    run(d, events)
        .into_iter()
        .filter(|(i, _)| *i + 1 == n)
        .map(|(_, f)| f)
        .collect()
}

// ---- checklist C ------------------------------------------------------------------------

#[test]
fn c19_ping_pong_warning_without_results() {
    let mut s = alternating_calls(9);
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(oc(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].level, Level::Warning);
    assert_eq!(f[0].count, 10);
    assert_eq!(f[0].tool.as_deref(), Some("read"), "paired tool");
    assert!(f[0].message.contains("ping-pong loop"));
    assert_eq!(
        f[0].message,
        "WARNING: You are alternating between repeated tool-call patterns (10 consecutive calls). This looks like \
         a ping-pong loop; stop retrying and report the task as failed."
    );
    // One call earlier: count 9, nothing.
    let mut s = alternating_calls(8);
    let (t, a) = read();
    s.tool_call(t, a);
    assert!(last(oc(), s.events()).is_empty());
}

#[test]
fn c20_ping_pong_critical_with_stable_results() {
    let mut s = alternating(19, |i| format!("side {}", i % 2));
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(oc(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].level, Level::Critical);
    assert_eq!(f[0].count, 20);
    assert_eq!(
        f[0].message,
        "CRITICAL: You are alternating between repeated tool-call patterns (20 consecutive calls) with no progress. \
         This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste."
    );
}

#[test]
fn c21_changing_outcomes_cap_at_warning() {
    // read(a)'s result changes every time.
    let mut s = alternating(19, |i| {
        if i % 2 == 0 {
            format!("rev {i}")
        } else {
            "listing".into()
        }
    });
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(oc(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].level, Level::Warning);
    assert_eq!(f[0].count, 20);
    let all = run(oc(), s.events());
    assert!(all.iter().all(|(_, f)| f.level == Level::Warning));
}

#[test]
fn c22_broken_alternation_is_not_stuck() {
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "x");
    s.call("list", json!({"dir": "d"}), "y");
    s.call("read", json!({"path": "a"}), "x");
    s.call("write", json!({"path": "a"}), "ok");
    s.tool_call("list", json!({"dir": "d"}));
    assert!(run(oc(), s.events()).is_empty());
    assert!(run(default(), s.events()).is_empty());
}

#[test]
fn c23_the_proposal_must_continue_the_alternation() {
    // A,B,...,A (9 calls), then A again: not ping-pong; B continues it.
    let mut s = alternating_calls(9);
    let (t, a) = read();
    s.tool_call(t, a);
    assert!(last(oc(), s.events()).is_empty());
    let mut s = alternating_calls(9);
    let (t, a) = list();
    s.tool_call(t, a);
    assert_eq!(last(oc(), s.events()).len(), 1);
}

#[test]
fn c24_period_two_only_in_the_openclaw_settings() {
    let mut s = Script::new();
    for i in 0..30 {
        let tool = ["read", "list", "grep"][i % 3];
        s.call(tool, json!({"x": 1}), "same");
    }
    assert!(
        run(oc(), s.events()).is_empty(),
        "A,B,C cycles are not OpenClaw ping-pong"
    );
    // loopguard's default finds the 3-cycle (identical results).
    let f = run(default(), s.events());
    assert!(!f.is_empty());
    assert!(f[0].1.key.starts_with("cycle:"));
}

#[test]
fn c25_critical_needs_full_evidence() {
    // (a) One tail call has no result: warning only at 20.
    let mut s = Script::new();
    for i in 0..19 {
        let (t, a) = if i % 2 == 0 { read() } else { list() };
        if i == 10 {
            s.tool_call(t, a);
        } else {
            s.call(t, a, if i % 2 == 0 { "A" } else { "B" });
        }
    }
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(oc(), s.events());
    assert_eq!((f.len(), f[0].level, f[0].count), (1, Level::Warning, 20));
    // (b) A stable, B changing: warning only.
    let mut s = alternating(19, |i| {
        if i % 2 == 0 {
            "A".into()
        } else {
            format!("B{i}")
        }
    });
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(oc(), s.events());
    assert_eq!(f[0].level, Level::Warning);
    // (c) Both stable: critical.
    let mut s = alternating(19, |i| if i % 2 == 0 { "A".into() } else { "B".into() });
    let (t, a) = list();
    s.tool_call(t, a);
    assert_eq!(last(oc(), s.events())[0].level, Level::Critical);
    // (d) No results at all: warning only, even at 20.
    let mut s = alternating_calls(19);
    let (t, a) = list();
    s.tool_call(t, a);
    assert_eq!(last(oc(), s.events())[0].level, Level::Warning);
}

// ---- OpenClaw details (§3.2 - §3.4, §3.10) ---------------------------------------------

#[test]
fn warns_on_ping_pong_alternating_patterns() {
    let mut s = alternating_calls(9);
    s.tool_call("list", json!({"dir": "d"}));
    let f = last(oc(), s.events());
    assert_eq!(f[0].detector, "ping-pong");
    assert!(f[0].key.starts_with("pingpong:"));
}

#[test]
fn same_tool_with_different_arguments_alternates() {
    let mut s = Script::new();
    for i in 0..9 {
        s.tool_call("read", json!({"path": if i % 2 == 0 { "a" } else { "b" }}));
    }
    s.tool_call("read", json!({"path": "b"}));
    assert_eq!(last(oc(), s.events())[0].count, 10);
}

#[test]
fn the_tail_is_capped_by_the_history() {
    let mut s = alternating(40, |i| format!("{}", i % 2));
    s.tool_call("read", json!({"path": "a"}));
    let f = last(
        from_toml("detect-cycles = false\ncritical-threshold = 100\n").unwrap(),
        s.events(),
    );
    assert_eq!(f[0].count, 31, "30 remembered calls + the proposed one");
}

#[test]
fn history_is_scoped_to_the_run() {
    let mut s = alternating_calls(9);
    s.push(OwnedEvent::RunStart {
        run_id: Some("run-2".into()),
    });
    s.tool_call("list", json!({"dir": "d"}));
    assert!(run(oc(), s.events()).is_empty());
    // The same run id keeps its history.
    let mut s = Script::new();
    s.push(OwnedEvent::RunStart {
        run_id: Some("run-1".into()),
    });
    for i in 0..9 {
        let (t, a) = if i % 2 == 0 { read() } else { list() };
        s.tool_call(t, a);
    }
    s.tool_call("list", json!({"dir": "d"}));
    assert_eq!(last(oc(), s.events()).len(), 1);
}

#[test]
fn a_blocked_call_is_not_recorded_and_stays_blocked() {
    let mut s = alternating(19, |i| format!("{}", i % 2));
    let id = s.tool_call("list", json!({"dir": "d"}));
    // The host refused it and reports an error result for it.
    s.tool_result(&id, "list", "blocked by loop guard", true);
    s.tool_call("list", json!({"dir": "d"}));
    let f: Vec<_> = run(oc(), s.events())
        .into_iter()
        .filter(|(_, f)| f.level == Level::Critical)
        .collect();
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(f[1].1.count, 20);
}

#[test]
fn results_arriving_out_of_order_in_a_batch_still_count_as_evidence() {
    let mut s = Script::new();
    for _ in 0..3 {
        s.batch(&[
            ("read", json!({"path": "a"}), "A"),
            ("list", json!({"dir": "d"}), "B"),
        ]);
    }
    // Results in reverse order within the batch.
    for _ in 0..2 {
        s.push(OwnedEvent::MessageStart)
            .push(OwnedEvent::MessageEnd);
        let a = s.tool_call("read", json!({"path": "a"}));
        let b = s.tool_call("list", json!({"dir": "d"}));
        s.tool_result(&b, "list", "B", false);
        s.tool_result(&a, "read", "A", false);
    }
    s.push(OwnedEvent::MessageStart)
        .push(OwnedEvent::MessageEnd);
    s.tool_call("read", json!({"path": "a"}));
    let f = last(default(), s.events());
    assert_eq!(f.len(), 1, "{:?}", run(default(), s.events()));
    assert_eq!(
        f[0].level,
        Level::Critical,
        "5 rounds of (read, list) with stable results"
    );
}

#[test]
fn openclaw_thresholds_are_configurable() {
    // Seed 003's per-agent override: warning 8, critical 16.
    let d = from_toml("warning-threshold = 8\ncritical-threshold = 16\ndetect-cycles = false\n")
        .unwrap();
    let mut s = alternating_calls(7);
    s.tool_call("list", json!({"dir": "d"}));
    assert_eq!(last(d, s.events())[0].count, 8);
}

#[test]
fn configuration_is_validated_with_key_paths() {
    for (bad, path) in [
        ("warning-threshold = 0", "warning-threshold"),
        ("critical-threshold = -1", "critical-threshold"),
        ("history-size = 0", "history-size"),
        ("history-size = 2.5", "history-size"),
        ("warning-threshold = 20", "critical-threshold"),
        (
            "warning-threshold = 5\ncritical-threshold = 5",
            "critical-threshold",
        ),
        ("max-period = 1", "max-period"),
        ("max-period = 9", "max-period"),
        ("cycle-warning-repeats = 1", "cycle-warning-repeats"),
        ("cycle-warning-repeats = 5", "cycle-critical-repeats"),
        ("detect-cycles = \"yes\"", "detect-cycles"),
    ] {
        let err = from_toml(&format!("{bad}\n")).unwrap_err();
        assert_eq!(
            err.path(),
            Some(format!("detectors.ping-pong.{path}").as_str()),
            "{bad}: {err}"
        );
    }
    let err = from_toml("warning-threshold = 20\n").unwrap_err();
    assert!(
        err.to_string()
            .contains("must be lower than critical-threshold"),
        "{err}"
    );
    let err = from_toml("warningThreshold = 20\n").unwrap_err();
    assert!(err.to_string().contains("unknown field"), "{err}");
    assert!(from_toml("history-size = 30\nwarning-threshold = 10\ncritical-threshold = 20\nmax-period = 2\ndetect-cycles = false\n").is_ok());
}

#[test]
fn the_openclaw_preset_table_reproduces_the_openclaw_settings() {
    let toml =
        "enabled = true\nhistory-size = 30\nwarning-threshold = 10\ncritical-threshold = 20\n\
                detect-cycles = false\nmax-period = 2\n";
    let table: toml::Table = toml.parse().unwrap();
    let mut table = table;
    table.remove("enabled");
    let o: loopguard_detect_ping_pong::Options =
        loopguard_core::parse_options("detectors.ping-pong", &table).unwrap();
    assert_eq!(Settings::from_options(&o).unwrap(), Settings::OPENCLAW);
}

// ---- loopguard's cycle tier (default settings) ---------------------------------------

fn round(s: &mut Script, build_output: &str) {
    s.call(
        "edit",
        json!({"path": "src/lib.rs", "old": "a", "new": "b"}),
        "Applied edit to src/lib.rs",
    );
    s.call("bash", json!({"command": "cargo build"}), build_output);
    s.call("read", json!({"path": "src/lib.rs"}), "fn main() { b }");
}

#[test]
fn edit_build_read_cycle_with_identical_outcomes_is_caught() {
    let mut s = Script::new();
    s.user("make it build");
    for _ in 0..6 {
        round(&mut s, "error[E0425]: cannot find value `b`");
    }
    let f = run(default(), s.events());
    let levels: Vec<(Level, u32)> = f.iter().map(|(_, f)| (f.level, f.count)).collect();
    assert_eq!(
        levels[0],
        (Level::Warning, 10),
        "after 3 rounds, the 10th call warns: {levels:?}"
    );
    assert!(
        levels.iter().skip(1).all(|(l, _)| *l == Level::Critical),
        "{levels:?}"
    );
    assert_eq!(
        levels[1],
        (Level::Critical, 16),
        "after 5 rounds, the 16th call is blocked"
    );
    assert!(
        f[0].1.message.contains("same 3 tool calls"),
        "{}",
        f[0].1.message
    );
    assert_eq!(f[0].1.evidence.len(), 9);
}

#[test]
fn edit_build_read_cycle_with_changing_results_is_not_caught() {
    let mut s = Script::new();
    for i in 0..10 {
        round(&mut s, &format!("error: {} errors remaining", 10 - i));
    }
    assert!(run(default(), s.events()).is_empty());
}

#[test]
fn a_cycle_that_wobbles_is_still_caught() {
    // Rounds of A, B, C in varying order, every call keeping its result.
    let order = ["ABC", "ACB", "BAC", "CAB", "ABC"];
    let mut s = Script::new();
    for r in order {
        for c in r.chars() {
            s.call("search", json!({"q": c.to_string()}), &format!("found {c}"));
        }
    }
    let f = run(default(), s.events());
    assert!(!f.is_empty(), "non-strict 3-cycle");
    assert!(f[0].1.key.starts_with("cycle:"));
}

#[test]
fn cycles_of_up_to_eight_calls_are_caught_and_nine_are_not() {
    for (p, expect) in [(2, true), (4, true), (7, true), (8, true), (9, false)] {
        let mut s = Script::new();
        for _ in 0..4 {
            for i in 0..p {
                s.call("search_dir", json!({"term": i}), &format!("hits {i}"));
            }
        }
        s.tool_call("search_dir", json!({"term": 0}));
        let f = run(default(), s.events());
        assert_eq!(!f.is_empty(), expect, "period {p}: {f:?}");
    }
}

#[test]
fn identical_calls_in_a_row_are_not_a_cycle() {
    let mut s = Script::new();
    s.repeat_call(12, "read", json!({"path": "a"}), "same");
    assert!(
        run(default(), s.events()).is_empty(),
        "period 1 is generic-repeat's"
    );
}

#[test]
fn cycle_warning_is_reported_once_per_cycle() {
    let mut s = Script::new();
    for _ in 0..5 {
        round(&mut s, "same error");
    }
    let f = run(
        from_toml("cycle-critical-repeats = 50\n").unwrap(),
        s.events(),
    );
    assert_eq!(f.len(), 1, "{f:?}");
}

#[test]
fn breaking_out_of_the_cycle_stops_the_findings() {
    let mut s = Script::new();
    for _ in 0..4 {
        round(&mut s, "same error");
    }
    s.call(
        "edit",
        json!({"path": "src/lib.rs", "old": "b", "new": "c"}),
        "Applied edit to src/lib.rs",
    );
    s.call("bash", json!({"command": "cargo build"}), "Finished");
    let f = run(default(), s.events());
    assert_eq!(f.len(), 1);
}

#[test]
fn period_two_with_identical_results_warns_early_in_the_default() {
    // The tau-bench shape: an identical failing booking and an identical think, alternating.
    let mut s = Script::new();
    for _ in 0..6 {
        s.call(
            "book_reservation",
            json!({"amount": 833}),
            "Error: payment amount does not add up",
        );
        s.call("think", json!({"thought": "adjust the payment"}), "");
    }
    let f = run(default(), s.events());
    let first: Vec<(Level, u32)> = f.iter().map(|(_, f)| (f.level, f.count)).take(2).collect();
    assert_eq!(first, vec![(Level::Warning, 7), (Level::Critical, 11)]);
}

// ---- complaints against the default -------------------------------------------------

#[test]
fn memory_search_get_ping_pong_is_caught_as_a_pair() {
    // openclaw#64500: the breaker counts per tool, so the other tool takes over.
    let mut s = Script::new();
    for _ in 0..8 {
        s.call("memory_search", json!({"q": "deploy key"}), "1 hit: id 42");
        s.call("memory_get", json!({"id": 42}), "deploy key: (redacted)");
    }
    let f = run(default(), s.events());
    assert!(f.iter().any(|(_, f)| f.level == Level::Critical));
    assert!(f[0].1.key.starts_with("cycle:"));
}

#[test]
fn legitimate_two_pass_batch_is_not_flagged() {
    let mut s = Script::new();
    for _ in 0..2 {
        for i in 0..15 {
            s.call(
                "read",
                json!({"path": format!("f{i}.rs")}),
                &format!("contents {i}"),
            );
        }
    }
    assert!(run(default(), s.events()).is_empty());
}

#[test]
fn edit_test_alternation_with_progress_is_not_flagged() {
    let mut s = Script::new();
    for i in 0..15 {
        s.call("edit", json!({"path": "a.py", "line": i}), "ok");
        s.call(
            "bash",
            json!({"command": "pytest -q"}),
            &format!("{} failed, {} passed", 15 - i, i),
        );
    }
    assert!(run(default(), s.events()).is_empty());
}

#[test]
fn alternating_writes_with_changing_revisions_are_not_flagged() {
    let mut s = Script::new();
    for i in 0..20 {
        let path = if i % 2 == 0 { "a" } else { "b" };
        s.call(
            "write",
            json!({"path": path, "rev": i}),
            &format!("written rev {i}"),
        );
    }
    assert!(run(default(), s.events()).is_empty());
}

#[test]
fn stable_five_path_churn_is_caught() {
    // OpenClaw's later "repeated stable argument churn" test: a 5-path cycle, stable results.
    let mut s = Script::new();
    for i in 0..30 {
        s.call("write", json!({"path": format!("p{}", i % 5)}), "unchanged");
    }
    let f = run(default(), s.events());
    assert!(f.iter().any(|(_, f)| f.level == Level::Critical));
}

// ---- OpenClaw's detectToolCallLoop table, ping-pong rows (openclaw settings) ------------

#[test]
fn blocks_ping_pong_alternating_patterns_at_critical_threshold() {
    let mut s = alternating(19, |i| format!("stable {}", i % 2));
    s.tool_call("list", json!({"dir": "d"}));
    let f = last(oc(), s.events());
    assert_eq!((f[0].level, f[0].count), (Level::Critical, 20));
}

#[test]
fn does_not_block_ping_pong_at_critical_threshold_when_outcomes_are_progressing() {
    let mut s = alternating(19, |i| format!("text {i}"));
    s.tool_call("list", json!({"dir": "d"}));
    let f = last(oc(), s.events());
    assert_eq!((f[0].level, f[0].count), (Level::Warning, 20));
    assert!(run(default(), s.events())
        .iter()
        .all(|(_, f)| f.level == Level::Warning));
}

#[test]
fn does_not_flag_ping_pong_when_alternation_is_broken() {
    let mut s = Script::new();
    for (t, a) in [read(), list(), read(), ("write", json!({"path": "a"}))] {
        s.tool_call(t, a);
    }
    s.tool_call("list", json!({"dir": "d"}));
    assert!(run(oc(), s.events()).is_empty());
}

#[test]
fn does_not_flag_unique_tool_calls() {
    let mut s = Script::new();
    for i in 0..15 {
        s.call("read", json!({"path": format!("f{i}")}), "same");
    }
    assert!(run(oc(), s.events()).is_empty());
    assert!(run(default(), s.events()).is_empty());
}

#[test]
fn ignores_repeated_history_from_other_runs() {
    let mut s = Script::new();
    s.push(OwnedEvent::RunStart {
        run_id: Some("heartbeat-1".into()),
    });
    for i in 0..19 {
        let (t, a) = if i % 2 == 0 { read() } else { list() };
        s.call(t, a, "same");
    }
    s.push(OwnedEvent::RunStart {
        run_id: Some("heartbeat-2".into()),
    });
    s.tool_call("list", json!({"dir": "d"}));
    assert!(last(oc(), s.events()).is_empty());
    assert!(last(default(), s.events()).is_empty());
}

#[test]
fn handles_empty_history() {
    let mut s = Script::new();
    s.tool_call("read", json!({"path": "a"}));
    assert!(run(oc(), s.events()).is_empty());
    assert!(run(default(), s.events()).is_empty());
}

// ---- a host that forwards calls and no result --------------------------------------------

/// The default preset's table: the alternation warns only on repeated results, and judges
/// an alternation during which no result came as one.
fn default_preset() -> Box<dyn Detector> {
    from_toml("alternation-warns-on-progress = false\nalternation-judges-unanswered = true")
        .unwrap()
}

#[test]
fn an_unanswered_alternation_is_warned_at_ten_and_blocked_at_twenty() {
    // Calls alone: the 10th warns, the 20th is blocked (no result says anything either way).
    let mut s = alternating_calls(9);
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(default_preset(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].level, f[0].count), (Level::Warning, 10));
    let mut s = alternating_calls(19);
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(default_preset(), s.events());
    assert_eq!((f[0].level, f[0].count), (Level::Critical, 20));
    // OpenClaw warns whatever the results but never blocks without repeated results.
    assert_eq!(last(oc(), s.events())[0].level, Level::Warning);
    // Without the option, a default-like table says nothing without results.
    let quiet = from_toml("alternation-warns-on-progress = false").unwrap();
    assert!(last(quiet, s.events()).is_empty());
}

#[test]
fn an_answered_alternation_is_judged_by_its_results() {
    // The same twenty calls, each answered with a new result: progress, never judged as
    // unanswered.
    let mut s = alternating(19, |i| format!("listing {i}"));
    let (t, a) = list();
    s.tool_call(t, a);
    assert!(last(default_preset(), s.events()).is_empty());
    // Twenty calls, one of them answered (its result joins its record; the alternation goes
    // on): a result came during the tail, so the calls alone do not decide.
    let mut s = Script::new();
    for i in 0..19 {
        let (t, a) = if i % 2 == 0 { read() } else { list() };
        let id = s.tool_call(t, a);
        if i == 11 {
            s.tool_result(&id, t, "a listing", false);
        }
    }
    let (t, a) = list();
    s.tool_call(t, a);
    assert!(last(default_preset(), s.events()).is_empty());
}

/// The default preset's whole table, shape cycles included.
fn default_preset_with_shape_cycles() -> Box<dyn Detector> {
    from_toml(
        "alternation-warns-on-progress = false\nalternation-judges-unanswered = true\n\
         detect-cycles = true\ncycle-identity = \"shape\"",
    )
    .unwrap()
}

#[test]
fn with_shape_cycles_an_alternation_is_still_judged_by_its_normalised_results() {
    // The alternation tier compares each outcome with the one two calls back by the bus's
    // normalised fingerprint, even where cycles are told apart by shape: a detector that
    // did not ask the bus for that fact would see every outcome as the same.
    const WORDS: [&str; 10] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliett",
    ];
    let listing = |i: usize| format!("{}.rs {}.rs", WORDS[i % 10], WORDS[(i / 10 + 3) % 10]);
    let mut s = alternating(19, listing);
    let (t, a) = list();
    s.tool_call(t, a);
    assert!(last(default_preset_with_shape_cycles(), s.events()).is_empty());
    // The same alternation answered identically every time is blocked.
    let mut s = alternating(19, |_| "alpha.rs bravo.rs".to_owned());
    let (t, a) = list();
    s.tool_call(t, a);
    let f = last(default_preset_with_shape_cycles(), s.events());
    assert!(f.iter().any(|f| f.level == Level::Critical), "{f:?}");
}
