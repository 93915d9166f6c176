//! Checklist section F (items 34-40), the post-compaction test table of the OpenClaw seed
//! (§3.10) and the complaints it answers, against the default settings.
#![allow(clippy::unwrap_used)]

use loopguard_core::{
    CallInfo, Config, Cx, Detector, Event, Finding, Fingerprint, Level, Registry, ResultInfo,
};
use loopguard_detect_post_compaction::{PostCompactionGuard, Settings, ABORT_CODE, REGISTRATION};
use loopguard_testkit::{only_finding, run, Script};
use serde_json::json;

fn guard() -> Box<dyn Detector> {
    Box::new(PostCompactionGuard::new(Settings::default()))
}

fn guard_w(w: u32) -> Box<dyn Detector> {
    Box::new(PostCompactionGuard::new(Settings { window_size: w }))
}

/// Feeds one completed call straight to a detector (to inspect its arming state).
fn observe(
    d: &mut PostCompactionGuard,
    seq: u64,
    tool: &str,
    args: &str,
    result: &str,
) -> Vec<Finding> {
    let call_fp = Fingerprint::of_bytes(format!("{tool}:{args}").as_bytes());
    let info = ResultInfo {
        call: CallInfo {
            tool: tool.to_owned(),
            args_fp: Fingerprint::of_bytes(args.as_bytes()),
            call_fp,
            batch: seq,
            batch_pos: 0,
            seq,
            kind: loopguard_core::ToolKind::Other,
        },
        orphan: false,
        batch_size: 1,
        norm_fp: Fingerprint::of_bytes(result.as_bytes()),
        is_error: false,
        images: 0,
    };
    let mut findings = Vec::new();
    let mut cx = Cx::manual(seq, &mut findings);
    cx.set_result(&info);
    let event = Event::ToolResult {
        id: "c",
        tool,
        content: result,
        is_error: false,
        images: 0,
        details: None,
    };
    d.observe(&event, &mut cx);
    findings
}

fn compact(d: &mut PostCompactionGuard, seq: u64) {
    let mut findings = Vec::new();
    let mut cx = Cx::manual(seq, &mut findings);
    d.observe(&Event::Compaction, &mut cx);
    assert!(findings.is_empty());
}

/// A script of a compaction, then the calls of `list` (tool, path, result) one by one.
fn after_a_compaction(list: &[(&str, &str, &str)]) -> Script {
    let mut s = Script::new();
    s.compaction();
    calls(&mut s, list);
    s
}

fn calls(s: &mut Script, list: &[(&str, &str, &str)]) {
    for (tool, path, result) in list {
        s.call(tool, json!({ "path": path }), result);
    }
}

// ---- checklist F ------------------------------------------------------------------------

#[test]
fn f34_dormant_until_armed() {
    let mut s = Script::new();
    s.repeat_call(10, "read", json!({"path": "a"}), "same");
    assert!(run(guard(), s.events()).is_empty());
    let mut d = PostCompactionGuard::new(Settings::default());
    assert!(observe(&mut d, 0, "read", "a", "x").is_empty());
    assert!(!d.is_armed());
}

#[test]
fn f35_abort_on_the_full_window() {
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "before");
    s.compaction();
    calls(&mut s, &[("gateway", "x", "r"), ("gateway", "x", "r")]);
    assert!(run(guard(), s.events()).is_empty(), "calls 1 and 2 run");
    calls(&mut s, &[("gateway", "x", "r")]);
    let f = run(guard(), s.events());
    assert_eq!(f.len(), 1);
    let (at, f) = &f[0];
    assert_eq!(*at, s.events().len() - 1, "fires on the third outcome");
    assert_eq!(f.level, Level::Fatal);
    assert_eq!(f.code.as_deref(), Some(ABORT_CODE));
    assert_eq!(f.code.as_deref(), Some("compaction_loop_persisted"));
    assert_eq!(f.count, 3);
    assert_eq!(f.tool.as_deref(), Some("gateway"));
    assert_eq!(f.detector, "post-compaction-guard");
    assert_eq!(f.evidence.len(), 3);
}

#[test]
fn f36_any_change_spares_the_run() {
    // Results change.
    let mut s = after_a_compaction(&[
        ("read", "x", "r1"),
        ("read", "x", "r2"),
        ("read", "x", "r3"),
    ]);
    // Disarmed after 3 observations: identical calls later are ignored.
    calls(
        &mut s,
        &[
            ("read", "x", "r3"),
            ("read", "x", "r3"),
            ("read", "x", "r3"),
        ],
    );
    assert!(run(guard(), s.events()).is_empty());
    // Arguments change.
    let s = after_a_compaction(&[("read", "a", "r"), ("read", "b", "r"), ("read", "c", "r")]);
    assert!(run(guard(), s.events()).is_empty());
    // Disarmed after three observations.
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    for (i, r) in ["r1", "r2", "r3"].iter().enumerate() {
        assert!(observe(&mut d, i as u64 + 1, "read", "x", r).is_empty());
    }
    assert!(!d.is_armed());
}

/// A compaction, then calls x, x, y, x with the same result: never three identical in a row.
fn x_x_y_x_after_a_compaction() -> Script {
    after_a_compaction(&[
        ("read", "x", "r"),
        ("read", "x", "r"),
        ("read", "y", "r"),
        ("read", "x", "r"),
    ])
}

#[test]
fn f37_no_abort_outside_the_window() {
    assert!(run(guard(), x_x_y_x_after_a_compaction().events()).is_empty());
}

#[test]
fn f38_rearming_restarts_the_window() {
    let mut s = after_a_compaction(&[("read", "x", "r"), ("read", "x", "r")]);
    s.compaction();
    calls(&mut s, &[("read", "x", "r"), ("read", "x", "r")]);
    assert!(
        run(guard(), s.events()).is_empty(),
        "the re-armed window starts again at 3"
    );
    calls(&mut s, &[("read", "x", "r")]);
    assert_eq!(only_finding(&run(guard(), s.events())).count, 3);
    // After a disarm, a later compaction arms again.
    let mut s = after_a_compaction(&[("a", "1", "r"), ("b", "1", "r"), ("c", "1", "r")]);
    calls(
        &mut s,
        &[("read", "x", "r"), ("read", "x", "r"), ("read", "x", "r")],
    );
    assert!(run(guard(), s.events()).is_empty());
    s.compaction();
    calls(
        &mut s,
        &[("read", "x", "r"), ("read", "x", "r"), ("read", "x", "r")],
    );
    assert_eq!(run(guard(), s.events()).len(), 1);
}

#[test]
fn f39_enabled_unless_explicitly_false() {
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    let names = |toml: &str| -> Vec<&'static str> {
        let c = Config::from_toml_str(toml, None).unwrap();
        registry
            .build(&c)
            .unwrap()
            .iter()
            .map(|d| d.name())
            .collect()
    };
    assert_eq!(names(""), vec!["post-compaction-guard"], "unset means on");
    assert_eq!(
        names("[detectors.post-compaction-guard]\nenabled = true\n"),
        vec!["post-compaction-guard"]
    );
    assert!(names("[detectors.post-compaction-guard]\nenabled = false\n").is_empty());
    assert!(
        names("[detectors.post-compaction-guard]\nenabled = false\nwindow-size = 3\n").is_empty()
    );
}

#[test]
fn f40_window_size_must_be_a_positive_integer() {
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    for bad in ["0", "-1", "2.5", "\"3\"", "true"] {
        let c = Config::from_toml_str(
            &format!("[detectors.post-compaction-guard]\nwindow-size = {bad}\n"),
            None,
        )
        .unwrap();
        let err = registry.build(&c).unwrap_err();
        assert_eq!(
            err.path(),
            Some("detectors.post-compaction-guard.window-size"),
            "{bad}: {err}"
        );
    }
    let c = Config::from_toml_str("[detectors.post-compaction-guard]\nwindow-size = 5\n", None)
        .unwrap();
    assert_eq!(registry.build(&c).unwrap().len(), 1);
    let c = Config::from_toml_str("[detectors.post-compaction-guard]\nwindow = 5\n", None).unwrap();
    let err = registry.build(&c).unwrap_err();
    assert!(err.to_string().contains("unknown field"), "{err}");
    // Runtime fallback for values that bypassed validation.
    assert_eq!(Settings::lenient(0).window_size, 3);
    assert_eq!(Settings::lenient(-2).window_size, 3);
    assert_eq!(Settings::lenient(2).window_size, 2);
}

// ---- the seed's post-compaction test table (§3.10) ------------------------------------

#[test]
fn is_dormant_when_never_armed() {
    let mut d = PostCompactionGuard::new(Settings::default());
    assert!(observe(&mut d, 0, "read", "a", "x").is_empty());
    assert!(!d.is_armed());
    assert_eq!(d.remaining(), 0);
}

#[test]
fn arms_for_the_configured_window_after_compaction() {
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    assert!(d.is_armed());
    assert_eq!(d.remaining(), 3);
    let mut d = PostCompactionGuard::new(Settings { window_size: 5 });
    compact(&mut d, 0);
    assert_eq!(d.remaining(), 5);
}

#[test]
fn decrements_remaining_attempts_on_each_observation() {
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    let mut left = vec![];
    for i in 0..4 {
        observe(&mut d, i + 1, "read", &format!("p{i}"), "x");
        left.push(d.remaining());
    }
    assert_eq!(left, vec![2, 1, 0, 0]);
    assert!(!d.is_armed());
}

#[test]
fn aborts_on_the_third_identical_call_within_the_window() {
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    assert!(observe(&mut d, 1, "exec", "ls", "out").is_empty());
    assert!(observe(&mut d, 2, "exec", "ls", "out").is_empty());
    let f = observe(&mut d, 3, "exec", "ls", "out");
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].count, f[0].tool.as_deref(), f[0].code.as_deref()),
        (3, Some("exec"), Some(ABORT_CODE))
    );
    assert_eq!(f[0].evidence, vec![1, 2, 3]);
}

#[test]
fn does_not_abort_when_the_result_or_the_args_hash_changes() {
    // The third call changes its result, then (in the second case) its arguments.
    for (args, result) in [("ls", "b"), ("ls -l", "a")] {
        let mut d = PostCompactionGuard::new(Settings::default());
        compact(&mut d, 0);
        assert!(observe(&mut d, 1, "exec", "ls", "a").is_empty());
        assert!(observe(&mut d, 2, "exec", "ls", "a").is_empty());
        let third = observe(&mut d, 3, "exec", args, result);
        assert!(third.is_empty(), "{args} → {result}: {third:?}");
    }
}

#[test]
fn does_not_abort_outside_the_window() {
    // Window 2: a different call, then the window is closed; a repeat later is not seen.
    let s = after_a_compaction(&[("read", "x", "r"), ("read", "y", "r"), ("read", "x", "r")]);
    assert!(run(guard_w(2), s.events()).is_empty());
    // Window 3: x, x, y, then x.
    assert!(run(guard(), x_x_y_x_after_a_compaction().events()).is_empty());
}

#[test]
fn re_arms_when_compacted_again() {
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    for i in 1..=3 {
        observe(&mut d, i, "read", &format!("p{i}"), "x");
    }
    assert!(!d.is_armed());
    compact(&mut d, 4);
    assert_eq!(d.remaining(), 3);
}

#[test]
fn respects_the_disabled_state() {
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    let c = Config::from_toml_str("[detectors.post-compaction-guard]\nenabled = false\n", None)
        .unwrap();
    assert!(
        registry.build(&c).unwrap().is_empty(),
        "nothing runs, so three identical calls cannot abort"
    );
}

#[test]
fn disarms_after_observing_window_size_calls_regardless_of_verdict() {
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    for i in 1..=3 {
        observe(&mut d, i, "read", "x", "r");
    }
    assert!(!d.is_armed(), "disarmed after an abort too");
    assert!(observe(&mut d, 4, "read", "x", "r").is_empty());
}

#[test]
fn finding_carries_detector_count_tool_and_message() {
    let mut d = PostCompactionGuard::new(Settings::default());
    compact(&mut d, 0);
    observe(&mut d, 1, "gateway", "restart", "ok");
    observe(&mut d, 2, "gateway", "restart", "ok");
    let f = observe(&mut d, 3, "gateway", "restart", "ok").remove(0);
    assert_eq!(f.detector, "post-compaction-guard");
    assert_eq!(
        f.message,
        "CRITICAL: tool gateway repeated 3 times with identical arguments and identical results within 3 \
         attempts after auto-compaction. The compaction did not break the loop. Aborting to prevent runaway \
         resource use."
    );
}

#[test]
fn window_of_two_aborts_on_two_identical_outcomes() {
    let s = after_a_compaction(&[("read", "x", "r"), ("read", "x", "r")]);
    let f = run(guard_w(2), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].1.count, 2);
}

// ---- complaints (§3.11, peer survey §14 item 9) against the default -------------------

#[test]
fn gateway_loop_across_auto_compaction_is_aborted() {
    // openclaw#77474: byte-identical `gateway` calls across context overflow and compaction.
    let mut s = Script::new();
    s.user("restart the gateway and check it");
    s.repeat_call(
        8,
        "gateway",
        json!({"action": "restart"}),
        "restart scheduled",
    );
    s.compaction();
    s.repeat_call(
        3,
        "gateway",
        json!({"action": "restart"}),
        "restart scheduled",
    );
    assert_eq!(only_finding(&run(guard(), s.events())).level, Level::Fatal);
}

#[test]
fn legitimate_polling_after_compaction_is_never_aborted() {
    let mut s = Script::new();
    s.compaction();
    s.call_results(
        10,
        "process",
        json!({"action": "poll", "sessionId": "s"}),
        |i| format!("{i} lines written"),
    );
    assert!(run(guard(), s.events()).is_empty());
}

#[test]
fn arguments_in_a_different_key_order_are_the_same_call() {
    let mut s = Script::new();
    s.compaction();
    s.call("exec", json!({"a": 1, "b": 2}), "r");
    s.call("exec", json!({"b": 2, "a": 1}), "r");
    s.call("exec", json!({"a": 1, "b": 2}), "r");
    assert_eq!(run(guard(), s.events()).len(), 1);
}

#[test]
fn results_before_the_compaction_do_not_count() {
    let mut s = Script::new();
    calls(&mut s, &[("read", "x", "r"), ("read", "x", "r")]);
    s.compaction();
    calls(&mut s, &[("read", "x", "r")]);
    assert!(run(guard(), s.events()).is_empty());
}
