//! Loops whose results reach the guard inside a host's wrapping: Codex's JSON envelope with a
//! new duration on every run, a test runner's colours, a host's time stamp over each output,
//! a ReAct host's `Observation:`, one element around the output, stream sections, JSON reports.
//! The `default` preset reads results without the wrapping (`[guard] plain-results`) and
//! catches each loop as it catches the unwrapped one; with the key off the wrapping hides
//! it. The trajectories are written for these tests in the style of Codex and SWE-agent
//! sessions.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Config, Finding, Level, Origin, OwnedEvent};
use loopguard_orchestrator::Guard;
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

/// Every warning or worse of the `default` preset over `events` (`plain` sets `[guard]
/// plain-results`), with the index of its event.
fn findings(events: &[OwnedEvent], plain: bool) -> Vec<(usize, Finding)> {
    let config =
        Config::from_toml_str(&format!("[guard]\nplain-results = {plain}\n"), None).unwrap();
    let mut g = Guard::builder()
        .config(config)
        .preset("default")
        .build()
        .unwrap();
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let v = g.observe(&e.as_event());
        for f in v.findings() {
            if f.level >= Level::Warning {
                out.push((i, f.clone()));
            }
        }
    }
    out
}

/// The first finding of `detector` at or before event `by`, if any.
fn first<'a>(found: &'a [(usize, Finding)], detector: &str, by: usize) -> Option<&'a Finding> {
    found
        .iter()
        .find(|(i, f)| f.detector == detector && *i <= by)
        .map(|(_, f)| f)
}

fn task(s: &mut Script, text: &str) {
    s.user_from(text, Origin::Human);
}

// ---- Codex's JSON envelope --------------------------------------------------------------

const PYTEST_FAILURE: &str = "============================= test session starts ==============================\n\
platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0\n\
rootdir: /workspace/dateparse\n\
collected 14 items\n\n\
tests/test_parser.py .........F\n\n\
=================================== FAILURES ===================================\n\
_____________________________ test_parse_iso_week ______________________________\n\n\
    def test_parse_iso_week():\n\
>       assert parse(\"2026-W49-2\") == date(2026, 12, 1)\n\
E       AssertionError: assert None == datetime.date(2026, 12, 1)\n\n\
tests/test_parser.py:88: AssertionError\n\
=========================== short test summary info ============================\n\
FAILED tests/test_parser.py::test_parse_iso_week - AssertionError: assert None == datetime.date(2026, 12, 1)\n\
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n";

/// Codex's envelope of a command's output.
fn codex_output(output: &str, exit_code: i64, seconds: f64) -> String {
    json!({"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": seconds}})
        .to_string()
}

/// The same failing test run again and again, each run's envelope with a duration of its own.
fn codex_reruns(runs: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(
        &mut s,
        "The ISO week dates fail to parse; fix `parse` in dateparse/core.py.",
    );
    let mut at = Vec::new();
    for r in 0..runs {
        s.message("Let me run the failing test again to see the current state.");
        s.call(
            "shell",
            json!({"command": ["bash", "-lc", "python -m pytest tests/test_parser.py -x -q"], "workdir": "/workspace/dateparse"}),
            &codex_output(PYTEST_FAILURE, 1, 1.7 + r as f64 / 10.0),
        );
        at.push(s.events().len() - 1);
    }
    (s.into_events(), at)
}

#[test]
fn a_test_rerun_in_codex_envelopes_of_new_durations_is_caught() {
    let (events, at) = codex_reruns(5);
    let found = findings(&events, true);
    let f = first(&found, "generic-repeat", at[2]);
    assert!(f.is_some(), "not warned by the third run: {found:#?}");
    // The wrapping read as sent: every run looks new to the repeat rules.
    // Read as sent, every run looks new to the exact rules; only the near-duplicate rule
    // (results 70% alike) sees it, one run later.
    let raw = findings(&events, false);
    assert!(
        first(&raw, "generic-repeat", at[2]).is_none(),
        "the envelope was expected to hide the repeat when read as sent: {raw:#?}"
    );
}

/// Codex's envelope around outputs that move on is still progress: a test suite fixed one
/// test at a time, each run's failure another one.
#[test]
fn reruns_in_codex_envelopes_whose_failures_move_on_are_no_loop() {
    let mut s = Script::new();
    task(&mut s, "Make the parser tests pass.");
    for (k, name) in [
        "test_parse_iso_week",
        "test_parse_ordinal",
        "test_parse_offset",
        "test_parse_leap_second",
        "test_parse_compact",
        "test_parse_fraction",
    ]
    .iter()
    .enumerate()
    {
        s.call(
            "shell",
            json!({"command": ["bash", "-lc", format!("sed -i 's/TODO{k}/done/' dateparse/core.py")]}),
            &codex_output("", 0, 0.1),
        );
        let out = PYTEST_FAILURE
            .replace("test_parse_iso_week", name)
            .replace(":88:", &format!(":{}:", 88 + 17 * k))
            .replace(".........F", &".".repeat(9 + k));
        s.call(
            "shell",
            json!({"command": ["bash", "-lc", "python -m pytest tests/test_parser.py -x -q"]}),
            &codex_output(&out, 1, 1.5 + k as f64 / 10.0),
        );
    }
    let found = findings(&s.into_events(), true);
    assert!(found.is_empty(), "{found:#?}");
}

// ---- a terminal's colours --------------------------------------------------------------

/// Python 3.13's coloured traceback of one failure (`FORCE_COLOR=1`), the failing line
/// reported at `line`.
fn coloured_traceback(line: usize) -> String {
    format!(
        "\x1b[1;35mTraceback\x1b[0m (most recent call last):\n  \
File \x1b[35m\"/repo/reproduce.py\"\x1b[0m, line \x1b[35m4\x1b[0m, in \x1b[35m<module>\x1b[0m\n    \
print(\x1b[31mslugify\x1b[0m\x1b[1;31m(\"Crème brûlée\")\x1b[0m)\n  \
File \x1b[35m\"/repo/slug.py\"\x1b[0m, line \x1b[35m{line}\x1b[0m, in \x1b[35mslugify\x1b[0m\n    \
return \x1b[31mSEPARATORS\x1b[0m\x1b[1;31m[mode]\x1b[0m.join(words)\n  \
\x1b[1;35mKeyError\x1b[0m: \x1b[35m'ascii'\x1b[0m\n"
    )
}

/// Edits that each try another way to pick the separator, each followed by the same
/// coloured traceback (its line moving with the edit).
fn coloured_edit_runs(rounds: usize) -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(&mut s, "reproduce.py crashes in slugify; fix it.");
    let attempts = [
        "    mode = options.get('mode', 'ascii')",
        "    mode = 'ascii' if ascii_only else 'unicode'",
        "    mode = MODES.get(kind, 'ascii')",
        "    mode = str(options.get('mode') or 'ascii')",
        "    mode = getattr(settings, 'SLUG_MODE', 'ascii')",
        "    mode = kind.lower() if kind else 'ascii'",
    ];
    let mut at = Vec::new();
    for (r, new) in attempts.iter().take(rounds).enumerate() {
        s.call(
            "str_replace_editor",
            json!({"command": "str_replace", "path": "/repo/slug.py", "old_str": "    mode = options['mode']", "new_str": new}),
            "The file /repo/slug.py has been edited. Review the changes and make sure they are as expected.",
        );
        s.call(
            "bash",
            json!({"command": "FORCE_COLOR=1 python /repo/reproduce.py"}),
            &coloured_traceback(27 + r % 2),
        );
        at.push(s.events().len() - 1);
    }
    (s.into_events(), at)
}

#[test]
fn the_same_coloured_traceback_after_each_edit_is_caught() {
    let (events, at) = coloured_edit_runs(6);
    let found = findings(&events, true);
    let f = first(&found, "same-failure", at[4]);
    assert!(f.is_some(), "not warned by the fifth run: {found:#?}");
    assert!(
        f.unwrap().message.contains("KeyError: 'ascii'"),
        "{}",
        f.unwrap().message
    );
    let raw = findings(&events, false);
    assert!(
        first(&raw, "same-failure", at[5]).is_none(),
        "the colours were expected to hide the failure when read as sent: {raw:#?}"
    );
}

// ---- a host's time stamp over each output -------------------------------------------------

/// Searches for one missing name, in other words and with other tools, each empty output
/// under the host's time stamp.
fn stamped_searches() -> (Vec<OwnedEvent>, Vec<usize>) {
    let mut s = Script::new();
    task(
        &mut s,
        "Where is `resolve_alias_chain` defined? The traceback names it.",
    );
    let searches = [
        "grep -rn 'def resolve_alias_chain' src/",
        "grep -rni resolve_alias_chain .",
        "git grep -n resolve_alias_chain",
        "rg -n 'resolve_alias_chain' --type py",
        "find . -name '*resolve_alias_chain*'",
        "grep -rn 'resolve_alias_chain' tests/ docs/",
        "rg -n 'alias_chain' src/",
    ];
    let mut at = Vec::new();
    for (k, cmd) in searches.iter().enumerate() {
        s.call(
            "bash",
            json!({"command": cmd}),
            &format!("[2026-12-08T01:{:02}:{:02}Z]\n", 10 + k, 7 * k % 60),
        );
        at.push(s.events().len() - 1);
    }
    (s.into_events(), at)
}

#[test]
fn searches_finding_nothing_under_a_hosts_time_stamp_are_caught() {
    let (events, at) = stamped_searches();
    let found = findings(&events, true);
    let f = first(&found, "generic-repeat", at[5]);
    assert!(f.is_some(), "not warned by the sixth search: {found:#?}");
    let raw = findings(&events, false);
    assert!(
        first(&raw, "generic-repeat", at[6]).is_none(),
        "the stamps were expected to hide the empty outputs when read as sent: {raw:#?}"
    );
}

/// The seed presets read results as their seeds do. pi-loop-guard's streak (exact results):
/// the envelope's durations make every run new, as they do for the seed, and the same runs
/// read plain are a repeat. OpenClaw's generic rule counts identical arguments whatever the
/// results, so the runs cannot tell; every seed preset resolves `plain-results` off.
#[test]
fn the_seed_presets_read_results_as_sent() {
    let (events, _) = codex_reruns(5);
    let caught = |plain: &str| {
        let config = Config::from_toml_str(plain, None).unwrap();
        let mut g = Guard::builder()
            .config(config)
            .preset("pi-loop-guard")
            .build()
            .unwrap();
        events
            .iter()
            .any(|e| !g.observe(&e.as_event()).findings().is_empty())
    };
    assert!(!caught(""), "pi-loop-guard saw through the envelope");
    assert!(
        caught("[guard]\nplain-results = true\n"),
        "pi-loop-guard missed the runs read plain"
    );
    for preset in ["pi-loop-guard", "pi-repetition-guard", "openclaw"] {
        let config = loopguard_orchestrator::preset(preset).unwrap();
        let policy = loopguard_orchestrator::Policy::from_table(&config.guard).unwrap();
        assert!(!policy.plain_results, "{preset} reads results plain");
    }
    let config = loopguard_orchestrator::preset("default").unwrap();
    let policy = loopguard_orchestrator::Policy::from_table(&config.guard).unwrap();
    assert!(
        policy.plain_results,
        "the default preset reads results as sent"
    );
}

// ---- text wrappings around the whole output ------------------------------------------------

/// The stamped searches' empty outputs under another host's wrapping.
fn wrapped_searches(wrap: impl Fn(&str) -> String) -> (Vec<OwnedEvent>, Vec<usize>) {
    let (events, _) = stamped_searches();
    let mut at = Vec::new();
    let events = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| match e {
            OwnedEvent::ToolResult {
                id,
                tool,
                content: _,
                is_error,
                images,
                details,
            } => {
                at.push(i);
                OwnedEvent::ToolResult {
                    id,
                    tool,
                    content: wrap(""),
                    is_error,
                    images,
                    details,
                }
            }
            other => other,
        })
        .collect();
    (events, at)
}

/// A host's text wrapping of an output.
type Wrap = fn(&str) -> String;

#[test]
fn searches_finding_nothing_inside_a_hosts_text_wrapping_are_caught() {
    let wraps: [(&str, Wrap); 6] = [
        ("ReAct's observation", |out| format!("Observation: {out}")),
        ("a code fence", |out| format!("```text\n{out}\n```")),
        ("a JSON report of the streams", |out| {
            json!({"stdout": out, "stderr": "", "returncode": 1}).to_string()
        }),
        ("a JSON report with a duration", |out| {
            json!({"output": out, "exit_code": 1, "duration_ms": out.len() * 7 + 12}).to_string()
        }),
        ("one element", |out| {
            format!("<tool_output>\n{out}\n</tool_output>")
        }),
        ("stdout and stderr", |out| {
            format!("STDOUT:\n{out}\nSTDERR:\n")
        }),
    ];
    for (name, wrap) in wraps {
        let (events, at) = wrapped_searches(wrap);
        let found = findings(&events, true);
        assert!(
            first(&found, "generic-repeat", at[5]).is_some(),
            "{name}: not warned by the sixth search: {found:#?}"
        );
        let raw = findings(&events, false);
        assert!(
            first(&raw, "generic-repeat", at[6]).is_none(),
            "{name}: the wrapping was expected to hide the empty outputs when read as sent: {raw:#?}"
        );
    }
}
