//! Checklist section B (items 11-18), the known-poll rows of OpenClaw's test table (§3.10),
//! the related J items (61-63) and complaints, against the default settings unless a test
//! says otherwise.

use loopguard_core::{Bus, Detector, Finding, Level, OwnedEvent, ToolKind, Tools};
use loopguard_detect_known_poll::{KnownPoll, PollRule, Settings, REGISTRATION};
use loopguard_testkit::{only_finding, registration, run, Script};
use serde_json::{json, Value};

fn detector() -> Box<dyn Detector> {
    Box::new(KnownPoll::default())
}

fn with(settings: Settings) -> Box<dyn Detector> {
    Box::new(KnownPoll::new(settings))
}

fn poll_args() -> Value {
    json!({"action": "poll", "sessionId": "s"})
}

fn polls(s: &mut Script, n: usize) {
    for _ in 0..n {
        s.call_details("process",
            poll_args(),
            "still running",
            Some(
                json!({"status": "running", "exitCode": null, "exitSignal": null, "aggregated": "building..."}),
            ),
        );
    }
}

/// Findings of `events`, each with its event index.
fn findings(d: Box<dyn Detector>, events: &[OwnedEvent]) -> Vec<(usize, Finding)> {
    run(d, events)
}

// ---- checklist B ------------------------------------------------------------------------

/// Findings of `events` through a bus whose tools table is the built-in one extended by
/// `tools` (a `[tools]` table).
#[allow(clippy::unwrap_used)]
fn findings_with_tools(d: Box<dyn Detector>, tools: &str, events: &[OwnedEvent]) -> Vec<Finding> {
    let table: toml::Table = tools.parse().unwrap();
    let tools = Tools::from_config(&table).unwrap();
    let n = tools.normalizers();
    let mut bus = Bus::with_tools(vec![d], tools, n);
    events
        .iter()
        .flat_map(|e| bus.observe(&e.as_event()))
        .collect()
}

#[test]
fn b11_known_poll_calls() {
    // OpenClaw's known polls are polls in the tools table the bus stamps kinds from
    let t = Tools::builtin();
    let kind = |tool: &str, args: Value| t.kind(tool, Some(&args));
    assert_eq!(
        kind("command_status", json!({"anything": 1})),
        ToolKind::Poll
    );
    assert_eq!(kind("command_status", Value::Null), ToolKind::Poll);
    assert_eq!(
        kind("process", json!({"action": "poll", "sessionId": "s"})),
        ToolKind::Poll
    );
    assert_eq!(
        kind("process", json!({"action": "log", "sessionId": "s"})),
        ToolKind::Poll
    );
    assert_eq!(
        kind("process", json!({"action": "kill", "sessionId": "s"})),
        ToolKind::Other
    );
    assert_eq!(kind("process", json!({"sessionId": "s"})), ToolKind::Other);
    assert_eq!(kind("exec", json!({"action": "poll"})), ToolKind::Other);
    assert_eq!(kind("read", json!({})), ToolKind::Other);
    // the detector's own rules match like the table's conditions
    let st = Settings {
        poll_tools: vec![
            PollRule::tool("job"),
            PollRule::with_arg("svc", "op", &["wait"]),
            PollRule::with_arg("tail", "id", &[]),
        ],
        ..Settings::default()
    };
    assert!(st.is_poll("job", &Value::Null));
    assert!(st.is_poll("svc", &json!({"op": "wait"})));
    assert!(!st.is_poll("svc", &json!({"op": "run"})));
    assert!(!st.is_poll("svc", &json!({})));
    assert!(st.is_poll("tail", &json!({"id": 3})));
    assert!(!st.is_poll("tail", &json!({"id": null})));
    assert!(!st.is_poll("process", &json!({"action": "poll"})));
    // and in behaviour: 25 identical kills are not judged here
    let mut s = Script::new();
    s.repeat_call(
        25,
        "process",
        json!({"action": "kill", "sessionId": "s"}),
        "killed",
    );
    assert!(findings(detector(), s.events()).is_empty());
}

#[test]
fn a_host_added_poll_tool_is_a_poll() {
    let mut s = Script::new();
    s.repeat_call(10, "my_status", json!({"job": 7}), "state: running");
    s.tool_call("my_status", json!({"job": 7}));
    // unknown to the built-in table: not a poll, never judged here
    assert!(findings(detector(), s.events()).is_empty());
    // `[tools.my_status] kind = "poll"`: the eleventh identical poll warns
    let f = findings_with_tools(detector(), "[my_status]\nkind = \"poll\"\n", s.events());
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].level, f[0].count), (Level::Warning, 10));
    assert_eq!(f[0].tool.as_deref(), Some("my_status"));
}

#[test]
fn a_built_in_poll_the_table_turns_off_is_not_judged() {
    let mut s = Script::new();
    polls(&mut s, 10);
    s.tool_call("process", poll_args());
    assert_eq!(findings(detector(), s.events()).len(), 1);
    let f = findings_with_tools(detector(), "[process]\nkind = \"other\"\n", s.events());
    assert!(f.is_empty());
    // the detector's own `poll-tools` still extend the table
    let extra = Settings {
        poll_tools: vec![PollRule::tool("process")],
        ..Settings::default()
    };
    let f = findings_with_tools(with(extra), "[process]\nkind = \"other\"\n", s.events());
    assert_eq!(f.len(), 1);
}

#[test]
fn b12_ten_identical_polls_warn_on_the_eleventh_attempt() {
    let mut s = Script::new();
    polls(&mut s, 10);
    assert!(
        findings(detector(), s.events()).is_empty(),
        "no finding during the first ten polls"
    );
    s.tool_call("process", poll_args());
    let f = findings(detector(), s.events());
    assert_eq!(f.len(), 1);
    let (at, f) = &f[0];
    assert_eq!(*at, s.last_index());
    assert_eq!(f.level, Level::Warning);
    assert_eq!(f.detector, "known-poll-no-progress");
    assert_eq!(f.count, 10);
    assert!(f.message.contains("no progress"), "{}", f.message);
    assert_eq!(f.evidence.len(), 10);
    assert_eq!(f.tool.as_deref(), Some("process"));
}

#[test]
fn b13_twenty_identical_polls_block_the_twenty_first() {
    let mut s = Script::new();
    polls(&mut s, 20);
    s.tool_call("process", poll_args());
    let f = findings(detector(), s.events());
    let (at, last) = f.last().unwrap();
    assert_eq!(*at, s.last_index());
    assert_eq!(last.level, Level::Critical);
    assert_eq!(last.count, 20);
    assert!(
        last.message.contains("stuck polling loop"),
        "{}",
        last.message
    );
    assert!(last.message.contains("CRITICAL"), "{}", last.message);
    // polls 11..20 warned, none was critical before the 21st
    assert!(f[..f.len() - 1]
        .iter()
        .all(|(_, f)| f.level == Level::Warning));
    assert_eq!(f.len(), 11);
}

#[test]
fn b14_polls_whose_output_progresses_are_never_flagged() {
    let mut s = Script::new();
    for i in 0..25 {
        s.call_details(
            "process",
            poll_args(),
            &format!("line {i}"),
            Some(json!({"status": "running", "aggregated": format!("out {i}")})),
        );
    }
    s.tool_call("process", poll_args());
    assert!(findings(detector(), s.events()).is_empty());
    // only `aggregated` advancing is enough too
    let mut s = Script::new();
    for i in 0..25 {
        s.call_details(
            "process",
            poll_args(),
            "same",
            Some(json!({"status": "running", "aggregated": "x".repeat(i)})),
        );
    }
    assert!(findings(detector(), s.events()).is_empty());
}

#[test]
fn b15_non_poll_calls_are_left_to_other_detectors() {
    let mut s = Script::new();
    s.repeat_call(30, "read", json!({"path": "a"}), "same");
    s.tool_call("read", json!({"path": "a"}));
    assert!(findings(detector(), s.events()).is_empty());
}

fn exec_as_poll() -> Settings {
    Settings {
        poll_tools: vec![PollRule::tool("exec")],
        ..Settings::default()
    }
}

#[test]
fn b16_exec_completed_volatile_fields_do_not_count_as_progress() {
    let mut s = Script::new();
    for i in 0..20 {
        s.call_details("exec",
            json!({"command": "make test"}),
            &format!("exit 2 after {i}ms"),
            Some(
                json!({"status": "completed", "exitCode": 2, "timedOut": false, "aggregated": "FAIL",
                        "durationMs": 100 + i, "cwd": format!("/tmp/{i}"), "pid": 4000 + i}),
            ),
        );
    }
    s.tool_call("exec", json!({"command": "make test"}));
    let f = findings(with(exec_as_poll()), s.events());
    let (at, last) = f.last().unwrap();
    assert_eq!(*at, s.last_index());
    assert_eq!((last.level, last.count), (Level::Critical, 20));
}

#[test]
fn b17_exec_running_with_changing_session_and_pid_but_same_tail() {
    let mut s = Script::new();
    for i in 0..20 {
        s.call_details("exec",
            json!({"command": "npm start"}),
            &format!("Command still running (session s{i}x, pid {})", 100 + i),
            Some(
                json!({"status": "running", "sessionId": format!("s{i}x"), "pid": 100 + i, "tail": "listening on :3000"}),
            ),
        );
    }
    s.tool_call("exec", json!({"command": "npm start"}));
    let f = findings(with(exec_as_poll()), s.events());
    assert_eq!(
        f.last().map(|(_, f)| (f.level, f.count)),
        Some((Level::Critical, 20))
    );
}

#[test]
fn b18_changing_exec_output_is_never_flagged() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call_details("exec",
            json!({"command": "date"}),
            "",
            Some(
                json!({"status": "completed", "exitCode": 0, "aggregated": format!("Mon Jan  1 12:00:{i:02} UTC 2024")}),
            ),
        );
    }
    assert!(findings(with(exec_as_poll()), s.events()).is_empty());
}

// ---- OpenClaw §3.3 primitives and J items -----------------------------------------------

#[test]
fn d28_interleaving_does_not_reset_the_streak_but_a_different_result_does() {
    let mut s = Script::new();
    for i in 0..10 {
        s.call("command_status", json!({"id": 1}), "pending");
        s.call("read", json!({"path": format!("f{i}")}), "text");
    }
    // 20 records in a 30-record window: the 10 polls are all still there
    s.tool_call("command_status", json!({"id": 1}));
    assert_eq!(only_finding(&findings(detector(), s.events())).count, 10);

    let mut s = Script::new();
    s.repeat_call(9, "command_status", json!({"id": 1}), "pending");
    s.call("command_status", json!({"id": 1}), "done");
    s.tool_call("command_status", json!({"id": 1}));
    assert!(findings(detector(), s.events()).is_empty());
}

#[test]
fn d29_the_window_caps_the_streak() {
    // No block before the streak fills the 30-record window: a blocked poll never runs, so
    // the guard's veto keeps its result from the detector and the streak would stop at 20.
    let unblocked = Settings {
        critical_threshold: 40,
        ..Settings::default()
    };
    let mut s = Script::new();
    s.repeat_call(40, "command_status", json!({}), "pending");
    let f = findings(with(unblocked), s.events());
    assert!(!f.is_empty());
    assert!(f.iter().all(|(_, f)| f.count <= 30));
    assert_eq!(f.iter().map(|(_, f)| f.count).max(), Some(30));
}

#[test]
fn j61_a_blocked_poll_stays_blocked() {
    let mut s = Script::new();
    polls(&mut s, 20);
    s.tool_call("process", poll_args());
    s.tool_call("process", poll_args());
    s.tool_call("process", poll_args());
    let f = findings(detector(), s.events());
    let crit: Vec<_> = f
        .iter()
        .filter(|(_, f)| f.level == Level::Critical)
        .collect();
    assert_eq!(crit.len(), 3);
    assert!(crit.iter().all(|(_, f)| f.count == 20));
}

#[test]
fn j62_history_is_run_scoped() {
    let mut s = Script::new();
    polls(&mut s, 15);
    let boundary = s.events().len();
    s.run_start();
    polls(&mut s, 5);
    s.tool_call("process", poll_args());
    let f = findings(detector(), s.events());
    assert!(!f.is_empty(), "the first run warned");
    assert!(f.iter().all(|(at, _)| *at < boundary), "{f:?}");
}

#[test]
fn a_new_user_turn_starts_a_fresh_history() {
    let mut s = Script::new();
    s.user("check the build");
    polls(&mut s, 15);
    let boundary = s.events().len();
    s.user("and now check it again");
    polls(&mut s, 5);
    s.tool_call("process", poll_args());
    let f = findings(detector(), s.events());
    assert!(!f.is_empty(), "the first turn warned");
    assert!(f.iter().all(|(at, _)| *at < boundary), "{f:?}");
}

const OPTIONS: registration::OptionChecks = registration::OptionChecks(&REGISTRATION);

#[test]
fn j63_config_validation() {
    let err = OPTIONS.rejected("warning-threshold = 0", "warning-threshold");
    assert!(err.to_string().contains("positive integer"), "{err}");
    let err = OPTIONS.rejected(
        "warning-threshold = 20\ncritical-threshold = 20",
        "critical-threshold",
    );
    assert!(
        err.to_string()
            .contains("warning-threshold must be lower than critical-threshold"),
        "{err}"
    );
    OPTIONS.rejected("warning-threshold = -1", "warning-threshold");
    OPTIONS.rejected("warning-threshold = 1.5", "warning-threshold");
    OPTIONS.assert_unknown_key("warningThreshold = 10");
    OPTIONS.rejected("history-size = 5000", "history-size");
    OPTIONS.rejected(
        "poll-tools = [{ tool = \"x\", values = [\"a\"] }]",
        "poll-tools[0].values",
    );
    OPTIONS.assert_unknown_key("poll-tools = [{ tool = \"x\", pattern = \"a\" }]");
    assert!(OPTIONS.build("").is_ok());
}

#[test]
fn custom_poll_rules_by_tool_and_argument() {
    let d = OPTIONS.build("warning-threshold = 2\ncritical-threshold = 3\npoll-tools = [{ tool = \"job\", arg = \"op\", values = [\"status\"] }]")
        .unwrap();
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("job", json!({"op": "status", "id": 7}), "queued");
        s.call("job", json!({"op": "cancel", "id": 7}), "not cancellable");
    }
    s.tool_call("job", json!({"op": "status", "id": 7}));
    s.tool_call("job", json!({"op": "cancel", "id": 7}));
    let f = run(d, s.events());
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].1.level, f[0].1.count), (Level::Warning, 2));
    assert_eq!((f[1].1.level, f[1].1.count), (Level::Critical, 3));
    assert!(f.iter().all(|(_, f)| f.tool.as_deref() == Some("job")));
}

#[test]
fn poll_whose_only_change_is_an_elapsed_time_footer_is_no_progress() {
    let mut s = Script::new();
    s.call_results(10, "BashOutput", json!({"bash_id": "b1"}), |i| {
        format!("<status>running</status>\nWaiting... (elapsed: {}s)", i * 5)
    });
    s.tool_call("BashOutput", json!({"bash_id": "b1"}));
    assert_eq!(
        only_finding(&findings(detector(), s.events())).level,
        Level::Warning
    );
}

#[test]
fn poll_output_that_grows_is_progress() {
    let mut s = Script::new();
    let mut out = String::new();
    for i in 0..30 {
        out.push_str(&format!("step {i} done\n"));
        s.call("BashOutput", json!({"bash_id": "b1"}), &out);
    }
    assert!(findings(detector(), s.events()).is_empty());
}

#[test]
fn readme_presets_build_and_match_the_defaults() {
    let readme = include_str!("../README.md");
    // Both blocks resolve to the defaults: thresholds 10 and 20, history 30, no extra polls.
    registration::assert_readme_settings(
        &REGISTRATION,
        readme,
        Settings::from_options,
        &[Settings::default(), Settings::default()],
    );
    assert_eq!(
        (
            Settings::default().warning_threshold,
            Settings::default().critical_threshold,
            Settings::default().history_size
        ),
        (10, 20, 30)
    );
    let oc = &registration::readme_toml_blocks(readme)[1];
    // the openclaw block's `[tools]` entries are valid tools-table entries
    let tools = oc["tools"].as_table().unwrap();
    let t = Tools::from_config(tools).unwrap();
    assert_eq!(t.kind("BashOutput", None), ToolKind::Other);
    assert_eq!(t.kind("command_status", None), ToolKind::Poll);
}

#[test]
fn registration_is_discoverable() {
    registration::assert_discoverable("known-poll-no-progress", "LG002");
}
