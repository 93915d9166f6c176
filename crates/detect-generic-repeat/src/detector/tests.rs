//! Behaviour across rules: the complaints against the default settings, snapshots, orphans,
//! empty results.

use crate::testutil::*;

// ---- complaints (§1.5, §3.11, §6) against the default settings -------------------------------

#[test]
fn complaint_oh_my_pi_12564_escalation_continues_past_the_warning() {
    let s = same_reads(12);
    let f = run(default_det(), s.events());
    let streak: Vec<&Finding> = f
        .iter()
        .map(|(_, f)| f)
        .filter(|f| f.key.starts_with("streak:"))
        .collect();
    assert_eq!(
        streak.iter().filter(|f| f.level == Level::Warning).count(),
        1
    );
    assert_eq!(
        streak.iter().filter(|f| f.level == Level::Critical).count(),
        8,
        "attempts 5..12 blocked"
    );
}

#[test]
fn complaint_typeclaw_597_blocked_retries_never_wear_the_block_down() {
    let mut s = Script::new();
    s.repeat_call(4, "bash", json!({"command": "npm test"}), "1 failing");
    s.repeat_call_with(
        200,
        "bash",
        json!({"command": "npm test"}),
        "Blocked: this exact call…",
        true,
    );
    let f = run(default_det(), s.events());
    let blocks = f
        .iter()
        .filter(|(_, f)| f.level == Level::Critical && f.key.starts_with("streak:"))
        .count();
    assert_eq!(blocks, 200);
}

#[test]
fn complaint_gsd_pi_1206_iterative_debugging_with_new_arguments_is_quiet() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call(
            "bash",
            json!({"command": format!("cargo test case_{i}")}),
            "1 failed",
        );
        s.call(
            "edit",
            json!({"path": "src/lib.rs", "old": format!("v{i}"), "new": format!("v{}", i + 1)}),
            "ok",
        );
    }
    assert!(run(default_det(), s.events()).is_empty());
}

#[test]
fn complaint_polling_with_changing_results_is_never_blocked_by_default() {
    let mut s = Script::new();
    s.call_results(40, "bash", json!({"command": "tail -n 5 build.log"}), |i| {
        format!("step {i}")
    });
    let f = run(default_det(), s.events());
    assert!(criticals(&f).is_empty(), "{f:?}");
}

#[test]
fn findings_are_never_an_abort() {
    let mut s = Script::new();
    for _ in 0..30 {
        s.call("read", json!({"path": "a"}), "X");
        same_batch(&mut s);
    }
    let all = det("openclaw = { enabled = true }\nwindow = { level = \"critical\" }");
    let f = run(all, s.events());
    assert!(!f.is_empty());
    assert!(f.iter().all(|(_, f)| f.level != Level::Fatal
        && f.detector == NAME
        && f.evidence.len() <= loopguard_core::MAX_EVIDENCE));
}

#[test]
fn orphan_results_are_ignored() {
    let mut s = Script::new();
    for _ in 0..10 {
        s.tool_result("unknown-id", "read", "X", false);
    }
    assert!(run(default_det(), s.events()).is_empty());
}

#[test]
fn snapshot_round_trips_mid_loop() {
    let settings = Settings::from_options(&Options {
        openclaw: Some(OpenClawOptions::default()),
        ..Options::default()
    })
    .unwrap();
    let bus = || {
        loopguard_core::Bus::new(vec![
            Box::new(GenericRepeat::new(settings.clone())) as Box<dyn Detector>
        ])
    };
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
        same_batch(&mut s);
    }
    let mut live = bus();
    for e in s.events() {
        live.observe(&e.as_event());
    }
    let text = serde_json::to_string(&live.snapshot().unwrap()).unwrap();
    let mut restored = bus();
    restored
        .restore(&serde_json::from_str(&text).unwrap())
        .unwrap();
    let mut tail = Script::new();
    tail.repeat_call(6, "read", json!({"path": "a"}), "X");
    let mut findings = Vec::new();
    for e in tail.events() {
        let x = live.observe(&e.as_event());
        assert_eq!(x, restored.observe(&e.as_event()));
        findings.extend(x);
    }
    assert!(findings.iter().any(|f| f.level == Level::Critical));
    // A snapshot of another shape is refused.
    let mut d = GenericRepeat::new(settings.clone());
    assert!(d.restore(&json!({"streak": 3})).is_err());
}

#[test]
fn empty_results_are_no_evidence_by_default() {
    // Corpus regression (SWE-agent walking up with `cd ..`): silence repeated is not a loop.
    let mut s = Script::new();
    s.repeat_call(3, "cd", json!({"command": "cd .."}), "");
    assert!(run(default_det(), s.events()).is_empty());
    // pi-loop-guard counts them (its preset keeps `ignore-empty-results = false`).
    assert_eq!(warnings(&run(plg(), s.events())), vec![s.last_index()]);
    // An empty result between identical ones is transparent.
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "  \n");
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(
        warnings(&run(default_det(), s.events())),
        vec![s.last_index()]
    );
}

/// A silent call that acts ends the streak of another call, whether the fact is kept by the
/// list of acting calls (the bare settings: no pending records) or by the pending records
/// (the `default` preset's); a silent move (`cd`) does not.
#[test]
fn a_silent_action_ends_another_calls_streak() {
    let run_between = |between: &str| {
        let mut s = Script::new();
        for _ in 0..3 {
            s.call(
                "bash",
                json!({"command": "python3 check.py"}),
                "Error: conf.py exists",
            );
            s.call("bash", json!({ "command": between }), "");
        }
        s
    };
    for (name, det) in [
        ("bare", default_det as fn() -> Box<dyn Detector>),
        ("default preset", || det_from(&preset_table("default"))),
    ] {
        let edits = run_between("sed -i 's/timeout=2/timeout=5/' check.py");
        assert!(
            warnings(&run(det(), edits.events())).is_empty(),
            "{name}: warned across silent edits"
        );
        let moves = run_between("cd /repo");
        assert!(
            !warnings(&run(det(), moves.events())).is_empty(),
            "{name}: not warned across silent moves"
        );
    }
}
