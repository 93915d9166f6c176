//! The four presets end to end, over the real detectors (linked below): the "done when"
//! scenarios of the orchestrator issue, and the preset tables themselves.

use loopguard_core::{OwnedEvent, Registry};
use loopguard_orchestrator::{Action, Guard, Verdict, PRESETS};
use loopguard_testkit::Script;
use serde_json::json;

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

fn guard(preset: &str) -> Guard {
    Guard::builder()
        .preset(preset)
        .build()
        .expect("preset builds")
}

/// Verdicts per event, with the event.
fn replay(preset: &str, events: &[OwnedEvent]) -> Vec<(OwnedEvent, Verdict)> {
    let mut g = guard(preset);
    events
        .iter()
        .map(|e| (e.clone(), g.observe(&e.as_event())))
        .collect()
}

/// The verdicts of the n-th (1-based) tool call and tool result events.
fn calls(out: &[(OwnedEvent, Verdict)]) -> Vec<&Verdict> {
    out.iter()
        .filter(|(e, _)| matches!(e, OwnedEvent::ToolCall { .. }))
        .map(|(_, v)| v)
        .collect()
}

fn results(out: &[(OwnedEvent, Verdict)]) -> Vec<&Verdict> {
    out.iter()
        .filter(|(e, _)| matches!(e, OwnedEvent::ToolResult { .. }))
        .map(|(_, v)| v)
        .collect()
}

fn describe(out: &[(OwnedEvent, Verdict)]) -> String {
    out.iter()
        .enumerate()
        .filter(|(_, (_, v))| !v.is_continue() || !v.findings().is_empty())
        .map(|(i, (e, v))| {
            let kind = match e {
                OwnedEvent::ToolCall { .. } => "call",
                OwnedEvent::ToolResult { .. } => "result",
                _ => "other",
            };
            let dets: Vec<_> = v
                .findings()
                .iter()
                .map(|f| format!("{}:{}:{}", f.detector, f.level.as_str(), f.count))
                .collect();
            format!("#{i} {kind} {} {:?}\n", v.action().as_str(), dets)
        })
        .collect()
}

#[test]
fn every_preset_builds_over_the_real_detectors() {
    let registry = Registry::discover().expect("registry");
    for name in PRESETS {
        let g = guard(name);
        let preset = loopguard_orchestrator::preset(name).expect("preset");
        // Every linked detector the preset mentions is enabled or not exactly as it says.
        for (det, table) in &preset.detectors {
            if registry.get(det).is_none() {
                continue;
            }
            let on = table
                .get("enabled")
                .and_then(toml::Value::as_bool)
                .expect("presets say enabled = true/false");
            assert_eq!(
                g.detector_names().contains(&det.as_str()),
                on,
                "{name}: {det}"
            );
        }
        let rendered = Guard::builder().preset(name).describe();
        assert!(rendered.is_ok(), "{name}: {rendered:?}");
    }
}

#[test]
fn presets_name_every_builtin_detector() {
    let names = Registry::discover().expect("registry").names();
    assert!(
        names.len() >= 10,
        "the built-in detectors are linked: {names:?}"
    );
    for name in PRESETS {
        let preset = loopguard_orchestrator::preset(name).expect("preset");
        for &det in &names {
            let on = preset
                .detectors
                .get(det)
                .and_then(|t| t.get("enabled"))
                .and_then(toml::Value::as_bool);
            assert!(
                on.is_some(),
                "preset {name} must say enabled = true/false for {det}"
            );
        }
    }
}

/// The preset tables `generic-repeat`'s README shows (and its own tests read) are the ones
/// the presets run: each gives the settings of the preset's table.
#[test]
fn the_generic_repeat_readme_shows_each_presets_table() {
    use loopguard_detect_generic_repeat::Settings;
    let readme = include_str!("../../detect-generic-repeat/README.md");
    for name in PRESETS {
        let shown = loopguard_testkit::registration::readme_preset(readme, name, "generic-repeat");
        let preset = loopguard_orchestrator::preset(name).expect("preset");
        let run = preset
            .detectors
            .get("generic-repeat")
            .expect("the preset's table");
        let settings = |t: &toml::Table| {
            let mut t = t.clone();
            t.remove("enabled");
            Settings::from_table(&t).expect("valid settings")
        };
        assert_eq!(settings(&shown), settings(run), "preset {name}");
    }
}

#[test]
fn pi_loop_guard_seven_identical_reads_steer_block_block_abort() {
    let mut s = Script::new();
    s.user("read the config");
    s.repeat_call(7, "read", json!({"path": "config.toml"}), "X = 1\n");
    let out = replay("pi-loop-guard", &s.into_events());
    eprintln!("{}", describe(&out));
    let c = calls(&out);
    let r = results(&out);
    let trace = describe(&out);
    assert!(r[0].is_continue() && r[1].is_continue(), "{trace}");
    assert_eq!(
        r[2].action(),
        Action::Steer,
        "steer at the 3rd result\n{trace}"
    );
    for v in &c[..4] {
        assert!(v.is_continue(), "calls 1-4 run\n{trace}");
    }
    assert_eq!(c[4].action(), Action::Block, "5th call refused\n{trace}");
    assert_eq!(c[5].action(), Action::Block, "6th call refused\n{trace}");
    assert_eq!(c[6].action(), Action::Abort, "7th call aborts\n{trace}");
    assert_eq!(c[6].code(), Some("loop_aborted:generic-repeat"), "{trace}");
    assert!(!c[4].terminate() && !c[4].whole_batch());
}

#[test]
fn openclaw_twenty_five_unchanged_polls_warn_at_11_block_at_21() {
    let mut s = Script::new();
    s.user("wait for the build");
    s.repeat_call(
        25,
        "process",
        json!({"action": "poll", "sessionId": "s1"}),
        "status: running\n",
    );
    let out = replay("openclaw", &s.into_events());
    let c = calls(&out);
    let trace = describe(&out);
    for (i, v) in out
        .iter()
        .take_while(|(e, _)| !matches!(e, OwnedEvent::ToolCall { .. }))
        .enumerate()
    {
        assert!(v.1.is_continue(), "event {i}\n{trace}");
    }
    for (i, v) in c.iter().enumerate().take(10) {
        assert!(v.is_continue(), "call {} \n{trace}", i + 1);
    }
    assert_eq!(
        c[10].action(),
        Action::Steer,
        "warning at the 11th call\n{trace}"
    );
    assert!(c[10].message().unwrap_or("").contains("WARNING"), "{trace}");
    for (i, v) in c.iter().enumerate().take(20).skip(11) {
        assert!(v.is_continue(), "call {} is de-duplicated\n{trace}", i + 1);
    }
    assert_eq!(
        c[20].action(),
        Action::Block,
        "critical at the 21st call\n{trace}"
    );
    assert!(c[20].whole_batch());
    assert!(
        c[20].message().unwrap_or("").contains("CRITICAL"),
        "{trace}"
    );
    // Nothing but the steer and the block happened on or before the 21st call.
    let upto = out
        .iter()
        .position(|(e, v)| matches!(e, OwnedEvent::ToolCall { .. }) && v.action() == Action::Block);
    let acted: Vec<Action> = out[..=upto.unwrap_or(0)]
        .iter()
        .map(|(_, v)| v.action())
        .filter(|a| *a != Action::Continue)
        .collect();
    assert_eq!(acted, vec![Action::Steer, Action::Block], "{trace}");
    // The second critical in the run stops it.
    assert_eq!(c[21].action(), Action::Abort, "{trace}");
}

#[test]
fn pi_repetition_guard_six_identical_calls_block_from_the_fourth() {
    let mut s = Script::new();
    s.user("check the status");
    s.repeat_call(
        6,
        "bash",
        json!({"command": "git status"}),
        "nothing to commit\n",
    );
    let out = replay("pi-repetition-guard", &s.into_events());
    let c = calls(&out);
    let trace = describe(&out);
    let acts: Vec<Action> = c.iter().map(|v| v.action()).collect();
    use Action::*;
    assert_eq!(
        acts,
        vec![Continue, Continue, Continue, Block, Block, Block],
        "{trace}"
    );
    assert!(
        c[3..].iter().all(|v| v.terminate()),
        "pi-repetition-guard blocks terminate"
    );
    assert!(results(&out).iter().all(|v| v.is_continue()), "{trace}");
}

#[test]
fn openclaw_failing_call_persisting_after_compaction_aborts_at_the_third_result() {
    let mut s = Script::new();
    s.user("build it");
    s.repeat_call_with(
        2,
        "exec",
        json!({"command": "make"}),
        "error: missing header foo.h",
        true,
    );
    s.compaction();
    s.repeat_call_with(
        3,
        "exec",
        json!({"command": "make"}),
        "error: missing header foo.h",
        true,
    );
    let out = replay("openclaw", &s.into_events());
    let r = results(&out);
    let trace = describe(&out);
    let compaction = out
        .iter()
        .position(|(e, _)| matches!(e, OwnedEvent::Compaction))
        .unwrap_or(0);
    let before_last: Vec<Action> = out[..out.len() - 1]
        .iter()
        .map(|(_, v)| v.action())
        .filter(|a| *a != Action::Continue)
        .collect();
    assert!(before_last.is_empty(), "nothing before the abort\n{trace}");
    assert!(compaction > 0);
    let last = r[4];
    assert_eq!(last.action(), Action::Abort, "{trace}");
    assert_eq!(last.code(), Some("compaction_loop_persisted"), "{trace}");
}

fn seven_reads() -> Vec<OwnedEvent> {
    let mut s = Script::new();
    s.user("read the config");
    s.repeat_call(7, "read", json!({"path": "config.toml"}), "X = 1\n");
    s.into_events()
}

fn with_env(vars: &[(&str, &str)]) -> Result<Guard, loopguard_core::ConfigError> {
    let mut c = loopguard_core::Config {
        preset: Some("pi-loop-guard".into()),
        ..Default::default()
    };
    c.apply_env(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))?;
    Guard::builder().config(c).build()
}

fn run(g: &mut Guard, events: &[OwnedEvent]) -> Vec<(OwnedEvent, Verdict)> {
    events
        .iter()
        .map(|e| (e.clone(), g.observe(&e.as_event())))
        .collect()
}

#[test]
fn k66_warn_not_below_block_is_a_configuration_error() {
    let err = with_env(&[
        ("LOOP_GUARD_WARN_THRESHOLD", "5"),
        ("LOOP_GUARD_BLOCK_THRESHOLD", "5"),
    ])
    .unwrap_err();
    assert_eq!(
        err.path(),
        Some("detectors.generic-repeat.critical-threshold"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("warning-threshold must be lower than critical-threshold (found 5 and 5)"),
        "{err}"
    );
    let mut g = with_env(&[
        ("LOOP_GUARD_WARN_THRESHOLD", "5"),
        ("LOOP_GUARD_BLOCK_THRESHOLD", "8"),
    ])
    .unwrap();
    let out = run(&mut g, &seven_reads());
    let r = results(&out);
    assert!(r[..4].iter().all(|v| v.is_continue()));
    assert_eq!(r[4].action(), Action::Steer, "warn at the 5th result");
}

#[test]
fn old_threshold_keys_still_work_with_a_deprecation_warning() {
    let old = loopguard_core::Config::from_toml_str(
        "preset = \"pi-loop-guard\"\n[detectors.generic-repeat]\nwarn-threshold = 5\nblock-threshold = 8\n",
        Some("old.toml"),
    )
    .unwrap();
    let resolved = loopguard_orchestrator::resolve(&old).unwrap();
    let g = &resolved.detectors["generic-repeat"];
    // The user's old keys win over the preset's new ones.
    assert_eq!(g["warning-threshold"].as_integer(), Some(5));
    assert_eq!(g["critical-threshold"].as_integer(), Some(8));
    assert!(!g.contains_key("warn-threshold") && !g.contains_key("block-threshold"));
    assert_eq!(resolved.warnings.len(), 2, "{:?}", resolved.warnings);
    assert!(
        resolved.warnings[0].starts_with(
            "old.toml: `detectors.generic-repeat.warn-threshold` is deprecated: write `warning-threshold`"
        ),
        "{:?}",
        resolved.warnings
    );
    let rendered = Guard::builder().config(old.clone()).describe().unwrap();
    assert!(
        rendered.contains(
            "# warning: old.toml: `detectors.generic-repeat.block-threshold` is deprecated"
        ),
        "{rendered}"
    );
    // It behaves as the new spelling does: warn at the 5th identical result.
    let mut g = Guard::builder().config(old).build().unwrap();
    let out = run(&mut g, &seven_reads());
    let r = results(&out);
    assert!(r[..4].iter().all(|v| v.is_continue()));
    assert_eq!(r[4].action(), Action::Steer);
}

#[test]
fn k67_master_switch_turns_everything_off() {
    let mut g = with_env(&[("LOOP_GUARD_ENABLED", "false")]).unwrap();
    let out = run(&mut g, &seven_reads());
    assert!(out
        .iter()
        .all(|(_, v)| v.is_continue() && v.findings().is_empty()));
}

#[test]
fn k71_use_terminate_and_abort_threshold_from_the_environment() {
    let mut g = with_env(&[
        ("LOOP_GUARD_USE_TERMINATE", "true"),
        ("LOOP_GUARD_ABORT_THRESHOLD", "2"),
    ])
    .unwrap();
    let out = run(&mut g, &seven_reads());
    let c = calls(&out);
    assert_eq!(c[4].action(), Action::Block);
    assert!(c[4].terminate());
    assert_eq!(c[5].action(), Action::Abort, "the 2nd block aborts");
}

#[test]
fn j64_openclaw_json_without_enabled_keeps_only_the_post_compaction_guard() {
    let c = loopguard_orchestrator::config_from_openclaw_json("{}").expect("json");
    let mut g = Guard::builder().config(c).build().expect("guard");
    let mut s = Script::new();
    s.user("wait");
    s.repeat_call(
        25,
        "process",
        json!({"action": "poll", "sessionId": "s1"}),
        "status: running\n",
    );
    s.compaction();
    s.repeat_call(
        3,
        "process",
        json!({"action": "poll", "sessionId": "s1"}),
        "status: running\n",
    );
    let out = run(&mut g, &s.into_events());
    let acted: Vec<&Verdict> = out
        .iter()
        .map(|(_, v)| v)
        .filter(|v| !v.is_continue())
        .collect();
    assert_eq!(acted.len(), 1, "{}", describe(&out));
    assert_eq!(acted[0].code(), Some("compaction_loop_persisted"));
}

#[test]
fn openclaw_json_agent_override_is_applied_for_that_agent() {
    let json = r#"{"tools": {"loopDetection": {"enabled": true}},
                  "agents": {"list": [{"id": "safe-runner", "tools": {"loopDetection":
                      {"enabled": true, "warningThreshold": 8, "criticalThreshold": 16}}}]}}"#;
    let c = loopguard_orchestrator::config_from_openclaw_json(json).expect("json");
    let mut s = Script::new();
    s.user("wait");
    s.repeat_call(
        20,
        "process",
        json!({"action": "poll", "sessionId": "s1"}),
        "status: running\n",
    );
    let events = s.into_events();
    let mut g = Guard::builder()
        .config(c.clone())
        .agent("safe-runner")
        .build()
        .expect("guard");
    let out = run(&mut g, &events);
    assert_eq!(
        calls(&out)[16].action(),
        Action::Block,
        "critical 16: the 17th call\n{}",
        describe(&out)
    );
    let mut g = Guard::builder()
        .config(c)
        .agent("someone-else")
        .build()
        .expect("guard");
    let out = run(&mut g, &events);
    assert!(
        calls(&out).iter().all(|v| v.action() != Action::Block),
        "{}",
        describe(&out)
    );
}

#[test]
fn pi_repetition_guard_text_loop_aborts_then_steers_at_the_settle_point() {
    let unit = "I will now check the git status to see whether the working tree is clean, \
                and then I will commit the change with a clear message for the reviewer. ";
    let mut s = Script::new();
    s.user("commit the change");
    s.run_start();
    s.message_chunked(loopguard_core::Stream::Thinking, &unit.repeat(4), 16);
    s.run_end();
    let out = replay("pi-repetition-guard", &s.into_events());
    let trace = describe(&out);
    let aborts: Vec<&Verdict> = out
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v.action() == Action::Abort)
        .collect();
    assert_eq!(aborts.len(), 1, "one abort per message\n{trace}");
    assert_eq!(
        aborts[0].code(),
        Some("loop_aborted:tail-periodicity"),
        "{trace}"
    );
    let (last_event, settle) = out.last().expect("events");
    assert!(matches!(last_event, OwnedEvent::RunEnd));
    assert_eq!(settle.action(), Action::Steer, "{trace}");
    assert_eq!(settle.deliver(), loopguard_orchestrator::Delivery::AtSettle);
    let msg = settle.message().unwrap_or("");
    assert!(
        msg.starts_with(loopguard_orchestrator::STEER_PREFIX),
        "{msg}"
    );
    assert!(
        msg.contains("Repeated fragment"),
        "the first steer carries the sample: {msg}"
    );
}

#[test]
fn openclaw_json_with_every_key_builds_over_the_real_detectors() {
    let json = r#"{"tools": {"loopDetection": {"enabled": true, "historySize": 40, "warningThreshold": 5,
        "criticalThreshold": 9, "unknownToolThreshold": 4, "globalCircuitBreakerThreshold": 12,
        "detectors": {"genericRepeat": true, "knownPollNoProgress": true, "pingPong": false},
        "postCompactionGuard": {"windowSize": 2}}}}"#;
    let c = loopguard_orchestrator::config_from_openclaw_json(json).expect("json");
    let g = Guard::builder()
        .config(c.clone())
        .build()
        .expect("every mapped key exists in its detector");
    assert!(!g.detector_names().contains(&"ping-pong"));
    assert!(g.detector_names().contains(&"unknown-tool"));
    let text = Guard::builder().config(c).describe().expect("describe");
    assert!(text.contains("window-size = 2"), "{text}");
    // Cross-detector ordering: a critical threshold at or above the global one is refused.
    let bad = loopguard_core::Config::from_toml_str(
        "preset = \"openclaw\"\n[detectors.known-poll-no-progress]\ncritical-threshold = 30\n",
        Some("lg.toml"),
    )
    .expect("toml");
    let err = Guard::builder().config(bad).build().unwrap_err();
    assert_eq!(
        err.path(),
        Some("detectors.circuit-breaker.threshold"),
        "{err}"
    );
}

mod state {
    use super::*;
    use proptest::prelude::*;

    fn verdicts(preset: &str, events: &[OwnedEvent], restore_at: Option<usize>) -> Vec<Verdict> {
        let mut g = guard(preset);
        let mut out = Vec::with_capacity(events.len());
        for (i, e) in events.iter().enumerate() {
            if restore_at == Some(i) {
                let snap = serde_json::to_string(&g.snapshot().expect("snapshot")).expect("text");
                g = guard(preset);
                g.restore(&serde_json::from_str(&snap).expect("json"))
                    .expect("restore");
            }
            out.push(g.observe(&e.as_event()));
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Snapshot-then-restore at any point of a random stream gives the verdicts of no
        /// snapshot, for every preset over the real detectors.
        #[test]
        fn snapshot_restore_is_invisible_for_every_preset(
            bytes in prop::collection::vec(any::<u8>(), 0..1200),
            at in 0usize..500,
            preset in 0usize..PRESETS.len(),
        ) {
            let events = loopguard_testkit::decode_events(&bytes);
            let preset = PRESETS[preset];
            prop_assert_eq!(verdicts(preset, &events, None), verdicts(preset, &events, Some(at)));
        }
    }
}

#[test]
fn guards_from_one_template_are_independent_and_match_the_builder() {
    let events = seven_reads();
    for name in PRESETS {
        let template = Guard::builder().preset(name).template().expect("template");
        let mut a = template.build().expect("first guard");
        let mut b = template.build().expect("second guard");
        let mut direct = guard(name);
        let mut seen = Vec::new();
        for e in &events {
            let va = a.observe(&e.as_event());
            assert_eq!(va, direct.observe(&e.as_event()), "{name}");
            seen.push(va);
        }
        // The second guard starts from nothing: had it shared the first one's state, the
        // repeated reads would be blocked from its first call.
        let again: Vec<Verdict> = events.iter().map(|e| b.observe(&e.as_event())).collect();
        assert_eq!(again, seen, "{name}");
    }
}

/// Errors found once the file is parsed (a detector's option, a `[guard]` key, an agent's
/// override of the wrong type) name the file, the line the key was written on and the key,
/// in one line.
#[test]
fn options_of_the_wrong_type_name_file_line_and_key() {
    let build = |text: &str| {
        let c = loopguard_core::Config::from_toml_str(text, Some("loopguard.toml"))
            .expect("valid TOML");
        Guard::builder()
            .config(c)
            .build()
            .expect_err("a bad value")
            .to_string()
    };
    assert_eq!(
        build("preset = \"default\"\n\n[detectors.generic-repeat]\nwarning-threshold = \"x\"\n"),
        "loopguard.toml:4: `detectors.generic-repeat.warning-threshold`: invalid type: string \"x\", expected u32"
    );
    assert_eq!(
        build("[guard]\n# how many blocks before an abort\nabort-after-blocks = \"two\"\n"),
        "loopguard.toml:3: `guard.abort-after-blocks`: invalid type: string \"two\", expected u32"
    );
    let err =
        build("[agents.reviewer]\n[agents.reviewer.detectors.ping-pong]\nwarning-threshold = -1\n");
    assert!(
        err.starts_with(
            "loopguard.toml:3: `agents.reviewer.detectors.ping-pong.warning-threshold`: "
        ),
        "{err}"
    );
    // A key inside an inline table is located at the line of the table.
    let err = build("[detectors.generic-repeat]\nwindow = { size = \"x\" }\n");
    assert!(
        err.starts_with("loopguard.toml:2: `detectors.generic-repeat.window.size`: "),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}

/// OpenClaw hashes the answer of a tool it has no rule of its own for as it is (seed-systems
/// §3.2, rule e): a shell's line counter that grows at every run makes each answer new, so
/// the identical calls only warn. The `default` preset masks the counter and blocks the 5th.
#[test]
fn openclaw_compares_an_other_tools_answer_as_it_is() {
    let mut s = Script::new();
    s.user("make the tests pass");
    s.call_results(25, "bash", json!({"command": "make test"}), |i| {
        format!(
            "/bin/bash: line {}: pytest: command not found",
            11_301 + 15 * i
        )
    });
    let events = s.into_events();
    let out = replay("openclaw", &events);
    let trace = describe(&out);
    let c = calls(&out);
    assert_eq!(
        c[10].action(),
        Action::Steer,
        "warning at the 11th call\n{trace}"
    );
    assert!(
        out.iter()
            .all(|(_, v)| !matches!(v.action(), Action::Block | Action::Abort)),
        "never blocked\n{trace}"
    );
    let out = replay("default", &events);
    let trace = describe(&out);
    assert_eq!(calls(&out)[4].action(), Action::Block, "{trace}");
}

/// OpenClaw hashes the texts of its own `exec` and `process` rules as they are: an `exec`
/// whose output changes only in a clock reading, or a `process` poll whose log lines carry
/// a new time stamp, is a new outcome each time, warned about but never blocked (seed
/// checklist items 16-18). The `default` preset reads the same outputs through the text pass,
/// for which they are one outcome.
#[test]
fn openclaw_hashes_its_exec_and_process_texts_as_they_are() {
    let stamped = |i: usize| format!("2026-12-07T05:25:{:02}Z worker heartbeat ok", i % 60);
    let mut exec = Script::new();
    exec.user("keep the worker alive");
    for i in 0..30 {
        exec.call_details(
            "exec",
            json!({"command": "./heartbeat.sh"}),
            &stamped(i),
            Some(json!({"status": "completed", "exitCode": 0, "timedOut": false, "aggregated": stamped(i), "durationMs": 10 + i})),
        );
    }
    let mut poll = Script::new();
    poll.user("wait for the worker");
    for i in 0..30 {
        poll.call_details(
            "process",
            json!({"action": "poll", "sessionId": "w1"}),
            &stamped(i),
            Some(json!({"status": "running", "aggregated": stamped(i)})),
        );
    }
    // The repeated `exec` call is warned about (OpenClaw counts the calls); a poll whose
    // outcome changes is progress (item 14).
    for (s, warned) in [(exec, true), (poll, false)] {
        let events = s.into_events();
        let out = replay("openclaw", &events);
        let trace = describe(&out);
        assert!(
            out.iter()
                .all(|(_, v)| v.action() != Action::Block && v.action() != Action::Abort),
            "openclaw: a new stamp is a new outcome\n{trace}"
        );
        assert_eq!(
            out.iter().any(|(_, v)| v.action() == Action::Steer),
            warned,
            "openclaw's warning\n{trace}"
        );
        let out = replay("default", &events);
        assert!(
            out.iter().any(|(_, v)| v.action() == Action::Block),
            "default: the stamp is masked, the outcome repeats\n{}",
            describe(&out)
        );
    }
}

/// OpenClaw's send rule reads a send's details alone, and any other call of a messaging tool
/// as it is: the `openclaw` preset blocks the 21st identical send even when each answer's text
/// carries a new clock reading (the details are the same), and never blocks reading a channel
/// whose answer carries a new stamp each time; the `default` preset masks the stamp.
#[test]
fn openclaw_hashes_sends_by_their_details_and_other_message_calls_as_they_are() {
    let stamped = |i: usize| format!("[2026-12-07 05:{:02}:00] #ops: deploy finished", i % 60);
    let mut send = Script::new();
    send.user("tell the channel");
    for i in 0..22 {
        send.call_details(
            "message",
            json!({"action": "send", "to": "#ops", "text": "deploy finished"}),
            &format!("sent at {}", stamped(i)),
            Some(json!({"ok": true, "channel": "#ops", "messageId": format!("m{i}")})),
        );
    }
    let out = replay("openclaw", &send.into_events());
    assert!(
        out.iter().any(|(_, v)| v.action() == Action::Block),
        "the same send, its details equal once the message id is set aside\n{}",
        describe(&out)
    );
    let mut read = Script::new();
    read.user("watch the channel");
    for i in 0..30 {
        read.call(
            "message",
            json!({"action": "read", "channel": "#ops", "limit": 1}),
            &stamped(i),
        );
    }
    let events = read.into_events();
    let out = replay("openclaw", &events);
    assert!(
        out.iter()
            .all(|(_, v)| v.action() != Action::Block && v.action() != Action::Abort),
        "openclaw: a new stamp is a new outcome\n{}",
        describe(&out)
    );
    let out = replay("default", &events);
    assert!(
        out.iter().any(|(_, v)| v.action() == Action::Block),
        "default: the stamp is masked\n{}",
        describe(&out)
    );
}
