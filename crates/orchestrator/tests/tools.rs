//! The `[tools]` table end to end: a host-added poll tool is a poll for every detector that
//! reads the call's kind (known-poll and generic-repeat), through the real detectors and the
//! `default` preset; bad entries are errors with their file, line and key path.

use loopguard_core::{Config, Finding, Level, OwnedEvent};
use loopguard_orchestrator::{Action, Guard, Verdict};
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

#[allow(clippy::unwrap_used)]
fn guard(toml: &str) -> Guard {
    let c = Config::from_toml_str(toml, Some("host.toml")).unwrap();
    Guard::builder().config(c).build().unwrap()
}

/// `n` identical status checks of `tool`, each answered "state: running".
fn checks(tool: &str, n: usize) -> Vec<OwnedEvent> {
    let mut s = Script::new();
    s.repeat_call(n, tool, json!({"job": 7}), "state: running");
    s.events().to_vec()
}

/// The verdicts on the calls, in order, with every finding behind them.
fn call_verdicts(g: &mut Guard, events: &[OwnedEvent]) -> Vec<(Action, Vec<Finding>)> {
    let mut out = Vec::new();
    for e in events {
        let v: Verdict = g.observe(&e.as_event());
        if matches!(e, OwnedEvent::ToolCall { .. }) {
            out.push((v.action(), v.findings().to_vec()));
        }
    }
    out
}

fn by(verdicts: &[(Action, Vec<Finding>)], detector: &str) -> Vec<(usize, Level)> {
    verdicts
        .iter()
        .enumerate()
        .flat_map(|(i, (_, fs))| {
            fs.iter()
                .filter(|f| f.detector == detector)
                .map(move |f| (i, f.level))
        })
        .collect()
}

const HOST_POLL: &str = "[tools.my_status]\nkind = \"poll\"\n";

#[test]
fn an_unknown_status_tool_is_an_ordinary_repeat() {
    let v = call_verdicts(&mut guard(""), &checks("my_status", 6));
    // generic-repeat's streak: a warning at the third identical outcome, the fifth call blocked
    assert!(v.iter().any(|(a, _)| *a == Action::Block), "{v:?}");
    assert!(by(&v, "known-poll-no-progress").is_empty());
}

#[test]
fn a_host_added_poll_tool_is_a_poll_for_known_poll_and_generic_repeat() {
    let events = checks("my_status", 12);
    let v = call_verdicts(&mut guard(HOST_POLL), &events);
    // generic-repeat gives polls their own thresholds (warn 10, block 20): no block at 12
    assert!(v.iter().all(|(a, _)| *a != Action::Block), "{v:?}");
    // its warning comes on the tenth identical result (the streak counts results)
    let mut g = guard(HOST_POLL);
    let mut results = 0;
    let mut gr = Vec::new();
    for e in &events {
        let verdict = g.observe(&e.as_event());
        if matches!(e, OwnedEvent::ToolResult { .. }) {
            results += 1;
        }
        for f in verdict.findings() {
            if f.detector == "generic-repeat" {
                gr.push((results, f.level));
            }
        }
    }
    assert_eq!(gr.first(), Some(&(10, Level::Warning)), "{gr:?}");
    assert!(gr.iter().all(|(_, l)| *l == Level::Warning), "{gr:?}");
    // known-poll judges it: ten identical outcomes, the eleventh call warns
    let kp = by(&v, "known-poll-no-progress");
    assert_eq!(kp.first(), Some(&(10, Level::Warning)), "{kp:?}");
}

#[test]
fn a_host_can_turn_a_built_in_poll_off() {
    let off = "[tools.BashOutput]\nkind = \"other\"\n";
    let on = call_verdicts(&mut guard(""), &checks("BashOutput", 12));
    assert!(!by(&on, "known-poll-no-progress").is_empty());
    let v = call_verdicts(&mut guard(off), &checks("BashOutput", 12));
    assert!(by(&v, "known-poll-no-progress").is_empty());
    assert!(v.iter().any(|(a, _)| *a == Action::Block), "{v:?}");
}

#[test]
fn agent_overrides_reach_the_tools_table() {
    let toml = "[agents.watcher.tools.my_status]\nkind = \"poll\"\n";
    let c = Config::from_toml_str(toml, None).expect("valid");
    let mut plain = Guard::builder().config(c.clone()).build().expect("builds");
    let mut watcher = Guard::builder()
        .config(c)
        .agent("watcher")
        .build()
        .expect("builds");
    let ev = checks("my_status", 6);
    assert!(call_verdicts(&mut plain, &ev)
        .iter()
        .any(|(a, _)| *a == Action::Block));
    assert!(call_verdicts(&mut watcher, &ev)
        .iter()
        .all(|(a, _)| *a != Action::Block));
}

#[test]
fn bad_entries_name_file_line_and_key() {
    let err = Config::from_toml_str(
        "preset = \"default\"\n\n[tools.my_status]\nkind = \"pol\"\n",
        Some("host.toml"),
    )
    .expect_err("a bad kind");
    assert_eq!(err.path(), Some("tools.my_status.kind"));
    assert!(err.to_string().starts_with("host.toml:4: "), "{err}");
    let err = Config::from_toml_str("[tools.x]\nvalues = [\"a\"]\n", Some("host.toml"))
        .expect_err("values without arg");
    assert_eq!(err.path(), Some("tools.x.values"));
    assert!(err.to_string().contains("needs `arg`"), "{err}");
    let err = Config::from_toml_str("[agents.a.tools.x]\nkind = 1\n", None).expect_err("kind");
    assert_eq!(err.path(), Some("agents.a.tools.x.kind"));
}
