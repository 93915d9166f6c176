//! Behaviour of `stalled-turns` with its default settings, and the complaints it answers.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Config, Detector, Level, Origin, Registry, Stream};
use loopguard_detect_stalled_turns::{Settings, StalledTurns, REGISTRATION};
use loopguard_testkit::{only_finding, run, Script};
use serde_json::json;

const NUDGE: &str =
    "No tool calls found in the response. Every response MUST include at least one tool call.";

fn det() -> Box<dyn Detector> {
    Box::new(StalledTurns::new(Settings::default()))
}

fn with(toml: &str) -> Box<dyn Detector> {
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    let c = Config::from_toml_str(&format!("[detectors.stalled-turns]\n{toml}"), None).unwrap();
    registry.build(&c).unwrap().remove(0)
}

fn task(s: &mut Script) {
    s.user("Fix the failing test in recorder.py");
    s.call(
        "bash",
        json!({"command": "python -m py_compile recorder.py"}),
        "compile ok",
    );
}

#[test]
fn third_identical_nudge_warns_and_tenth_aborts() {
    let mut s = Script::new();
    task(&mut s);
    let base = s.events().len();
    s.repeat_user(12, NUDGE);
    let f = run(det(), s.events());
    let levels: Vec<(usize, Level, u32)> = f
        .iter()
        .map(|(i, f)| (*i - base, f.level, f.count))
        .collect();
    assert_eq!(
        levels,
        vec![
            (2, Level::Warning, 3),
            (9, Level::Fatal, 10),
            (10, Level::Fatal, 11),
            (11, Level::Fatal, 12)
        ]
    );
    let warn = &f[0].1;
    assert_eq!(warn.detector, "stalled-turns");
    assert!(warn.message.starts_with("WARNING: "), "{}", warn.message);
    assert!(
        warn.message.contains("No tool calls found"),
        "{}",
        warn.message
    );
    assert_eq!(warn.evidence.len(), 3);
    assert_eq!(warn.evidence[0], base as u64);
    assert!(warn.sample.is_some());
    assert!(f[1].1.message.starts_with("CRITICAL: "));
    assert_eq!(
        f[1].1.code, None,
        "the orchestrator names the abort loop_aborted:stalled-turns"
    );
}

#[test]
fn two_identical_nudges_are_not_a_stall() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.call("bash", json!({"command": "ls"}), "a.py");
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_tool_call_between_nudges_resets_the_count() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.message("");
    let id = s.tool_call("bash", json!({"command": "ls"}));
    s.user(NUDGE);
    s.tool_result(&id, "bash", "x", false);
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn short_stall_then_resume_gets_one_warning_and_no_critical() {
    // The corpus's "unsure" shape: 3-5 reminders, then the agent resumes.
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(5, NUDGE);
    s.call("bash", json!({"command": "git diff"}), "diff");
    assert_eq!(only_finding(&run(det(), s.events())).level, Level::Warning);
}

#[test]
fn live_host_with_empty_replies_between_nudges() {
    let mut s = Script::new();
    task(&mut s);
    for _ in 0..4 {
        s.message("");
        s.user(NUDGE);
    }
    let f = run(det(), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.level, Level::Warning);
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn repeated_identical_replies_without_tools_warn() {
    // A host that just re-prompts with "continue" once, then the model keeps saying the same.
    let mut s = Script::new();
    s.user("Refactor the parser");
    s.message("I will now refactor the parser.");
    s.run_end();
    s.message("I will now refactor the parser.");
    s.run_end();
    s.message("I  will now refactor\nthe parser.");
    s.run_end();
    let f = run(det(), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].1.key.starts_with("stalled-turns:reply:"));
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn empty_replies_count_with_assistant_side_only() {
    let mut s = Script::new();
    s.user("go");
    for _ in 0..3 {
        s.message("");
    }
    s.message("next");
    let f = run(with("count-nudges = false\n"), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn replies_with_tool_calls_are_not_stalled() {
    let mut s = Script::new();
    s.user("go");
    for _ in 0..6 {
        s.message("Let me check.");
        let id = s.tool_call("read", json!({"path": "a"}));
        s.tool_result(&id, "read", "x", false);
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn tool_call_inside_the_message_counts_as_activity() {
    let mut s = Script::new();
    s.user("go");
    for _ in 0..4 {
        s.push(loopguard_core::OwnedEvent::MessageStart);
        s.tool_call("read", json!({"path": "a"}));
        s.push(loopguard_core::OwnedEvent::MessageEnd);
    }
    s.run_end();
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn reasoning_only_replies_with_new_reasoning_are_not_stalled() {
    // OpenHands SDK #2482: extended-thinking models produce reasoning-only replies.
    let mut s = Script::new();
    s.user("solve the puzzle");
    for i in 0..6 {
        s.message_chunked(
            Stream::Thinking,
            &format!("Step {i}: consider case {i} of the puzzle."),
            7,
        );
        s.run_end();
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn identical_reasoning_only_replies_are_stalled() {
    let mut s = Script::new();
    s.user("solve the puzzle");
    for _ in 0..3 {
        s.message_chunked(Stream::Thinking, "Hmm, let me think about this again.", 5);
        s.run_end();
    }
    assert_eq!(run(det(), s.events()).len(), 1);
}

#[test]
fn final_answers_between_new_user_turns_are_not_stalled() {
    let mut s = Script::new();
    for q in ["hi", "what is 2+2?", "thanks", "bye"] {
        s.user(q);
        s.message("");
    }
    s.user("one more");
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn the_guards_own_steer_neither_counts_nor_resets() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.user_from("Stop answering without tools.", Origin::Guard);
    s.user(NUDGE);
    let f = run(det(), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn a_person_speaking_ends_the_stall() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.user_from(NUDGE, Origin::Human);
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_repeated_harness_message_is_not_a_fresh_turn() {
    // The bus does not advance the turn for a word-for-word repeat, so budgets are not reset.
    let mut bus = loopguard_core::Bus::new(vec![det()]);
    bus.observe(&loopguard_core::Event::User {
        text: "task",
        origin: Origin::Unknown,
    });
    let t = bus.turn();
    bus.observe(&loopguard_core::Event::User {
        text: NUDGE,
        origin: Origin::Unknown,
    });
    for _ in 0..5 {
        bus.observe(&loopguard_core::Event::User {
            text: NUDGE,
            origin: Origin::Unknown,
        });
    }
    assert_eq!(bus.turn(), t + 1);
}

#[test]
fn a_different_nudge_starts_a_new_count() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.user("Please format your answer as a single bash block.");
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn whitespace_around_the_nudge_does_not_matter() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE)
        .user(&format!("{NUDGE}\n"))
        .user(&format!("  {NUDGE}"));
    assert_eq!(run(det(), s.events()).len(), 1);
}

#[test]
fn thresholds_are_configurable_and_validated() {
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(5, NUDGE);
    let f = run(
        with("warning-threshold = 2\ncritical-threshold = 4\n"),
        s.events(),
    );
    let levels: Vec<Level> = f.iter().map(|(_, f)| f.level).collect();
    assert_eq!(levels, vec![Level::Warning, Level::Fatal, Level::Fatal]);
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    for (bad, path) in [
        ("warning-threshold = 0", "warning-threshold"),
        ("critical-threshold = -3", "critical-threshold"),
        ("warning-threshold = 1.5", "warning-threshold"),
        (
            "warning-threshold = 10\ncritical-threshold = 10",
            "critical-threshold",
        ),
        ("warning-threshold = 12", "critical-threshold"),
        ("count-nudges = 1", "count-nudges"),
    ] {
        let c =
            Config::from_toml_str(&format!("[detectors.stalled-turns]\n{bad}\n"), None).unwrap();
        let err = registry.build(&c).unwrap_err();
        assert_eq!(
            err.path(),
            Some(format!("detectors.stalled-turns.{path}").as_str()),
            "{bad}: {err}"
        );
    }
    let c =
        Config::from_toml_str("[detectors.stalled-turns]\nwarning-threshold = 12\n", None).unwrap();
    let err = registry.build(&c).unwrap_err();
    assert!(
        err.to_string()
            .contains("must be lower than critical-threshold"),
        "{err}"
    );
    let c = Config::from_toml_str("[detectors.stalled-turns]\nwarn = 2\n", None).unwrap();
    assert!(registry
        .build(&c)
        .unwrap_err()
        .to_string()
        .contains("unknown field"));
    let c = Config::from_toml_str("[detectors.stalled-turns]\nenabled = false\n", None).unwrap();
    assert!(registry.build(&c).unwrap().is_empty());
}

#[test]
fn nudge_counting_can_be_turned_off() {
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(12, NUDGE);
    assert!(run(with("count-nudges = false\n"), s.events()).is_empty());
}

#[test]
fn each_stall_run_has_its_own_key() {
    // Two separate stalls in one turn are two loops: a host that de-duplicates warnings per
    // key must still hear about the second one.
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(3, NUDGE);
    s.call("bash", serde_json::json!({"command": "ls"}), "a.py");
    s.repeat_user(3, NUDGE);
    let f = run(det(), s.events());
    assert_eq!(f.len(), 2, "{f:?}");
    assert_ne!(f[0].1.key, f[1].1.key);
}
