//! OpenClaw's generic_repeat tests.

use crate::testutil::*;

// ---- OpenClaw generic_repeat (§3.3-3.4, §3.10) ----------------------------------------------

#[test]
fn oc_warns_on_generic_repeated_tool_args_calls() {
    // 10 recorded calls, no outcomes: the 11th gets a warning with count 10.
    let mut s = Script::new();
    for _ in 0..11 {
        attempt(&mut s, "read", json!({"path": "a"}));
    }
    let f = run(oc(), s.events());
    assert_eq!(summary(&f), vec![(s.last_index(), Level::Warning, 10)]);
    let m = &f[0].1.message;
    assert!(m.contains("WARNING") && m.contains("10 times"), "{m}");
    let args_fp = loopguard_core::args_fingerprint(&json!({"path": "a"}));
    assert_eq!(
        f[0].1.key,
        format!("generic:read:read:{}", args_fp.to_hex())
    );
}

#[test]
fn oc_blocks_generic_no_progress_at_critical_threshold() {
    let mut s = Script::new();
    s.repeat_call(20, "read", json!({"path": "a"}), "same");
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    assert_eq!(criticals(&f), vec![s.last_index()]);
    let crit = &f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .unwrap()
        .1;
    assert_eq!(crit.count, 20);
    assert!(
        crit.message.contains("identical outcomes"),
        "{}",
        crit.message
    );
    let args_fp = loopguard_core::args_fingerprint(&json!({"path": "a"}));
    assert!(crit
        .key
        .starts_with(&format!("generic:read:read:{}:", args_fp.to_hex())));
    // Calls 11..20 were warned (recent count >= 10), not blocked.
    assert_eq!(warnings(&f).len(), 10);
}

#[test]
fn oc_changing_exec_output_only_warns() {
    let mut s = Script::new();
    s.call_results(30, "exec", json!({"command": "date"}), |i| {
        format!("Mon Jan {i} 10:00:00 UTC")
    });
    let f = run(oc(), s.events());
    assert!(criticals(&f).is_empty());
    assert_eq!(warnings(&f).len(), 20, "calls 11..30 warn");
}

#[test]
fn oc_run_scoping() {
    let scoped = |first: Option<&str>, second: Option<&str>| {
        let mut s = Script::new();
        s.push(OwnedEvent::RunStart {
            run_id: first.map(str::to_owned),
        });
        s.repeat_call(10, "read", json!({"path": "a"}), "X");
        s.push(OwnedEvent::RunStart {
            run_id: second.map(str::to_owned),
        });
        attempt(&mut s, "read", json!({"path": "a"}));
        run(oc(), s.events())
    };
    assert!(
        scoped(Some("heartbeat-1"), Some("heartbeat-2")).is_empty(),
        "other runs never count"
    );
    assert_eq!(
        summary(&scoped(Some("run-1"), Some("run-1")))[0].2,
        10,
        "the same run id counts"
    );
    assert!(
        scoped(Some("run-1"), None).is_empty(),
        "scoped and unscoped are isolated"
    );
}

#[test]
fn oc_outcomes_never_attach_to_another_runs_record() {
    // A call in run 1 whose result arrives in run 2 is recorded as a run-2 outcome.
    let mut s = Script::new();
    s.push(OwnedEvent::RunStart {
        run_id: Some("r1".into()),
    });
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    s.push(OwnedEvent::RunStart {
        run_id: Some("r2".into()),
    });
    s.tool_result(&id, "read", "X", false);
    s.repeat_call(19, "read", json!({"path": "a"}), "X");
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    let crit = f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .map(|(_, f)| f.count);
    assert_eq!(crit, Some(20));
}

#[test]
fn oc_interleaving_does_not_break_the_streak() {
    let mut s = Script::new();
    for i in 0..20 {
        s.call("read", json!({"path": "a"}), "X");
        s.call("grep", json!({"q": i}), "z");
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { history-size = 50 }"), s.events());
    assert_eq!(criticals(&f), vec![s.last_index()]);
    // A different result for the same call ends the streak.
    let mut s = Script::new();
    for i in 0..25 {
        s.call(
            "read",
            json!({"path": "a"}),
            if i == 10 { "Y" } else { "X" },
        );
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    assert!(
        criticals(&f).is_empty(),
        "only 14 identical since the change: {f:?}"
    );
}

#[test]
fn oc_the_window_caps_the_streak() {
    // history 10 < critical 20: the streak never exceeds the history.
    let d = || {
        det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { history-size = 10, warning-threshold = 5, critical-threshold = 20 }")
    };
    let s = same_reads(40);
    let f = run(d(), s.events());
    assert!(criticals(&f).is_empty());
    assert!(f.iter().all(|(_, f)| f.count <= 10));
}

#[test]
fn oc_known_polls_skip_generic_repeat() {
    let mut s = Script::new();
    for _ in 0..25 {
        s.call(
            "process",
            json!({"action": "poll", "sessionId": "s"}),
            "running",
        );
        s.call("command_status", json!({"id": 1}), "running");
    }
    assert!(run(oc(), s.events()).is_empty());
    let mut s = Script::new();
    s.repeat_call(
        21,
        "process",
        json!({"action": "kill", "sessionId": "s"}),
        "no such process",
    );
    assert_eq!(criticals(&run(oc(), s.events())).len(), 1);
}

#[test]
fn oc_the_critical_veto_stays_sticky() {
    let mut s = same_reads(20);
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    let first = s.last_index();
    s.tool_result(
        &id,
        "read",
        "CRITICAL: Called read with identical arguments…",
        true,
    );
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    assert_eq!(criticals(&f), vec![first, s.last_index()]);
}

#[test]
fn oc_does_not_flag_unique_calls_or_an_empty_history() {
    let mut s = Script::new();
    for i in 0..15 {
        s.call("read", json!({"path": format!("p{i}")}), "X");
    }
    assert!(run(oc(), s.events()).is_empty());
    assert!(run(oc(), &[]).is_empty());
}

#[test]
fn oc_config_validation_names_the_key() {
    rejected(
        "openclaw = { warning-threshold = 20, critical-threshold = 20 }",
        "openclaw.critical-threshold",
    );
    rejected("openclaw = { history-size = 0 }", "openclaw.history-size");
    let t: toml::Table = "openclaw = { typo = 1 }".parse().unwrap();
    let err = Settings::from_table(&t).unwrap_err();
    assert!(err.to_string().contains("unknown field `typo`"), "{err}");
    rejected("window = { size = 4, threshold = 5 }", "window.threshold");
    rejected(
        "window = { identity = \"call-and-result\", level = \"critical\" }",
        "window.level",
    );
    rejected("result-identity = \"fuzzy\"", "result-identity");
}
