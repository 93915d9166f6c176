//! Checklist section D (items 26-29), B15, the global-breaker rows of OpenClaw's test table
//! (§3.10), the J items on blocking and scoping, and OpenClaw issue #64500 (pairs), against
//! the default settings unless a test says otherwise.

use loopguard_core::{Detector, Level};
use loopguard_detect_circuit_breaker::{CircuitBreaker, Settings, REGISTRATION};
use loopguard_testkit::{registration, run, Script};
use serde_json::json;

fn detector() -> Box<dyn Detector> {
    Box::new(CircuitBreaker::default())
}

fn openclaw() -> Box<dyn Detector> {
    Box::new(CircuitBreaker::new(Settings::openclaw()))
}

#[test]
fn d26_thirty_identical_outcomes_block_the_thirty_first_attempt() {
    for d in [detector, openclaw] {
        let mut s = Script::new();
        s.repeat_call(29, "read", json!({"path": "a"}), "X");
        s.tool_call("read", json!({"path": "a"}));
        assert!(
            run(d(), s.events()).is_empty(),
            "29 outcomes are not enough"
        );
        let mut s = Script::new();
        s.repeat_call(30, "read", json!({"path": "a"}), "X");
        s.tool_call("read", json!({"path": "a"}));
        let f = run(d(), s.events());
        assert_eq!(f.len(), 1);
        let (at, f) = &f[0];
        assert_eq!(*at, s.last_index());
        assert_eq!((f.level, f.count), (Level::Critical, 30));
        assert_eq!(f.detector, "circuit-breaker");
        assert!(
            f.message.contains("global circuit breaker"),
            "{}",
            f.message
        );
        assert_eq!(f.evidence.len(), 30);
    }
}

#[test]
fn d27_b15_known_polls_are_covered_whatever_the_other_toggles() {
    // The breaker is its own detector: with known-poll-no-progress (and generic-repeat)
    // disabled, 30 identical polls are still blocked here.
    let mut s = Script::new();
    for _ in 0..30 {
        s.call_details(
            "process",
            json!({"action": "poll", "sessionId": "s"}),
            "running",
            Some(json!({"status": "running", "aggregated": "", "polledAt": 5})),
        );
    }
    s.tool_call("process", json!({"action": "poll", "sessionId": "s"}));
    let f = run(openclaw(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].0, f[0].1.level, f[0].1.count),
        (s.last_index(), Level::Critical, 30)
    );
}

#[test]
fn d28_interleaving_does_not_reset_but_a_different_result_does() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call("read", json!({"path": "a"}), "X");
        if i % 3 == 0 {
            s.call("grep", json!({"q": i}), "hit");
        }
    }
    s.tool_call("read", json!({"path": "a"}));
    // 40 records: only the newest 30 remain; the streak counts the reads among them
    let f = run(openclaw(), s.events());
    assert!(f.is_empty(), "{f:?}");
    let big = Box::new(CircuitBreaker::new(Settings {
        history_size: 60,
        ..Settings::openclaw()
    }));
    let f = run(big, s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].1.count, 30);

    let mut s = Script::new();
    s.repeat_call(29, "read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "Y");
    s.tool_call("read", json!({"path": "a"}));
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn d29_the_window_caps_the_streak() {
    let mut s = Script::new();
    s.repeat_call(40, "read", json!({"path": "a"}), "X");
    let f = run(detector(), s.events());
    assert!(!f.is_empty());
    assert!(f.iter().all(|(_, f)| f.count == 30));
}

#[test]
fn d26_a_blocked_call_stays_blocked() {
    let mut s = Script::new();
    s.repeat_call(30, "read", json!({"path": "a"}), "X");
    for _ in 0..5 {
        s.tool_call("read", json!({"path": "a"}));
    }
    let f = run(detector(), s.events());
    assert_eq!(f.len(), 5);
    assert!(f
        .iter()
        .all(|(_, f)| f.level == Level::Critical && f.count == 30));
}

#[test]
fn b18_changing_exec_output_never_reaches_the_breaker() {
    let mut s = Script::new();
    for i in 0..40 {
        s.call_details("exec",
            json!({"command": "date"}),
            "",
            Some(
                json!({"status": "completed", "exitCode": 0, "aggregated": format!("Mon Jan  1 12:00:{i:02} UTC 2024")}),
            ),
        );
    }
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn b16_exec_volatile_fields_reach_the_breaker() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call_details("exec",
            json!({"command": "make"}),
            &format!("done in {i}.5s"),
            Some(
                json!({"status": "failed", "exitCode": 2, "aggregated": "boom", "durationMs": i, "cwd": format!("/w{i}")}),
            ),
        );
    }
    s.tool_call("exec", json!({"command": "make"}));
    let f = run(detector(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].1.count, 30);
}

#[test]
fn oc_changing_empty_output_exec_failures_stay_below_the_breaker() {
    let mut s = Script::new();
    for i in 0..35 {
        s.call_details(
            "exec",
            json!({"command": "flaky"}),
            &format!("attempt {i} failed"),
            Some(json!({"status": "failed", "exitCode": 1, "aggregated": ""})),
        );
    }
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn oc_a_one_shot_batch_of_distinct_arguments_is_not_blocked() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call("read", json!({"path": format!("f{i}")}), "same");
    }
    for i in 0..15 {
        s.call("read", json!({"path": format!("g{i}")}), "same");
        s.call("read", json!({"path": format!("g{i}")}), "same");
    }
    assert!(run(detector(), s.events()).is_empty());
}

fn ping_pong(s: &mut Script, n: usize) {
    for _ in 0..n {
        s.call("memory_search", json!({"q": "deploy key"}), "[]");
        s.call("memory_get", json!({"id": "k1"}), "{\"found\": false}");
    }
}

#[test]
fn d_issue_64500_pairs_are_counted_and_both_sides_blocked() {
    let mut s = Script::new();
    ping_pong(&mut s, 15);
    s.tool_call("memory_search", json!({"q": "deploy key"}));
    s.tool_call("memory_get", json!({"id": "k1"}));
    let f = run(detector(), s.events());
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f
        .iter()
        .all(|(_, f)| f.level == Level::Critical && f.count == 30));
    assert!(f[0].1.message.contains("global circuit breaker"));
    assert_eq!(f[0].1.key, f[1].1.key, "one loop, one key");
    assert_eq!(f[0].1.tool.as_deref(), Some("memory_search"));
    assert_eq!(f[1].1.tool.as_deref(), Some("memory_get"));
    // OpenClaw's breaker never sees the pair
    assert!(run(openclaw(), s.events()).is_empty());
}

#[test]
fn pairs_with_progress_are_not_blocked() {
    let mut s = Script::new();
    for i in 0..20 {
        s.call("memory_search", json!({"q": "deploy key"}), "[]");
        s.call(
            "memory_get",
            json!({"id": "k1"}),
            &format!("{{\"rev\": {i}}}"),
        );
    }
    s.tool_call("memory_search", json!({"q": "deploy key"}));
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn a_fresh_call_after_a_pair_block_runs() {
    let mut s = Script::new();
    ping_pong(&mut s, 15);
    s.tool_call("memory_search", json!({"q": "something else"}));
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn j62_history_is_run_scoped() {
    let mut s = Script::new();
    s.repeat_call(25, "read", json!({"path": "a"}), "X");
    s.run_start();
    s.repeat_call(10, "read", json!({"path": "a"}), "X");
    s.tool_call("read", json!({"path": "a"}));
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn volatile_message_ids_do_not_hide_a_send_loop() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call_details(
            "message",
            json!({"action": "send", "to": "ops", "text": "deploy failed"}),
            &format!("sent {i}"),
            Some(json!({"ok": true, "messageId": format!("m{i}"), "sentAt": i})),
        );
    }
    s.tool_call(
        "message",
        json!({"action": "send", "to": "ops", "text": "deploy failed"}),
    );
    let f = run(detector(), s.events());
    assert_eq!(f.len(), 1);
}

#[test]
fn random_wrapper_nonces_do_not_hide_a_browser_loop() {
    // OpenClaw issue #130210
    let mut s = Script::new();
    for i in 0..30 {
        let body = format!(
            "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"{i:08x}\">>>\nError 403\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"{i:08x}\">>>"
        );
        s.call_with("browser", json!({"url": "https://x"}), &body, true);
    }
    s.tool_call("browser", json!({"url": "https://x"}));
    assert_eq!(run(detector(), s.events()).len(), 1);
}

const OPTIONS: registration::OptionChecks = registration::OptionChecks(&REGISTRATION);

#[test]
fn j63_config_validation() {
    let err = OPTIONS.rejected("threshold = 0", "threshold");
    assert!(err.to_string().contains("positive integer"));
    OPTIONS.rejected("history-size = 0", "history-size");
    OPTIONS.rejected("threshold = \"30\"", "threshold");
    OPTIONS.assert_unknown_key("globalCircuitBreakerThreshold = 30");
    assert!(OPTIONS.build("threshold = 5\ncount-pairs = false").is_ok());
}

loopguard_testkit::registration_tests!(
    REGISTRATION,
    "circuit-breaker",
    "LG005",
    Settings::from_options,
    [Settings::default(), Settings::openclaw()]
);
