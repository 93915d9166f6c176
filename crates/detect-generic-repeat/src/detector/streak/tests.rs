//! The consecutive streak: checklist items A (identical-call / unchanged-result streak) and K
//! (pi-loop-guard's README details) of the seed conformance list, and the streak's thresholds
//! for polling calls.

use crate::testutil::*;

// ---- A. identical-call / unchanged-result streak (pi-loop-guard) ---------------------------

#[test]
fn a01_three_identical_results_warn_once() {
    let mut s = Script::new();
    s.user("fix it");
    let mut results = Vec::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
        results.push(s.last_index());
    }
    let f = run(plg(), s.events());
    assert_eq!(summary(&f), vec![(results[2], Level::Warning, 3)]);
    assert!(f[0].1.message.contains("`read`"), "{}", f[0].1.message);
    assert_eq!(f[0].1.tool.as_deref(), Some("read"));
    // Same with the default settings.
    let f = run(default_det(), s.events());
    assert_eq!(summary(&f), vec![(results[2], Level::Warning, 3)]);
}

#[test]
fn a01_the_warning_fires_once_per_streak() {
    let s = same_reads(4);
    let f = run(plg(), s.events());
    assert_eq!(warnings(&f).len(), 1, "{f:?}");
    assert!(criticals(&f).is_empty());
}

#[test]
fn a02_key_order_does_not_matter() {
    let one: Value = serde_json::from_str(r#"{"a":1,"b":{"c":2,"d":3}}"#).unwrap();
    let two: Value = serde_json::from_str(r#"{"b":{"d":3,"c":2},"a":1}"#).unwrap();
    let mut s = Script::new();
    s.call("edit", one.clone(), "ok");
    s.call("edit", two, "ok");
    s.call("edit", one, "ok");
    let f = run(plg(), s.events());
    assert_eq!(summary(&f), vec![(s.last_index(), Level::Warning, 3)]);
}

/// After `prefix` nothing fires, nor after its last call once more: the streak restarted at
/// that call, and the third in a row warns with count 3.
fn assert_streak_restarts_at_the_last(prefix: &[(&str, Value, &str)]) {
    let mut s = Script::new();
    for (tool, args, result) in prefix {
        s.call(tool, args.clone(), result);
    }
    assert!(run(plg(), s.events()).is_empty());
    let Some((tool, args, result)) = prefix.last() else {
        panic!("an empty prefix");
    };
    s.call(tool, args.clone(), result);
    quiet_then_third_warns(&plg, &mut s, (tool, args.clone(), result));
}

/// Nothing fires over `s` with the detector of `make`; one more call then warns with count 3.
fn quiet_then_third_warns(
    make: &dyn Fn() -> Box<dyn Detector>,
    s: &mut Script,
    (tool, args, result): (&str, Value, &str),
) {
    assert!(run(make(), s.events()).is_empty());
    s.call(tool, args, result);
    assert_eq!(
        summary(&run(make(), s.events())),
        vec![(s.last_index(), Level::Warning, 3)]
    );
}

#[test]
fn a03_a_changed_result_resets() {
    // The streak after Y is 1: two more Y make 3.
    assert_streak_restarts_at_the_last(&[
        ("read", json!({"path": "a"}), "X"),
        ("read", json!({"path": "a"}), "X"),
        ("read", json!({"path": "a"}), "Y"),
    ]);
}

#[test]
fn a04_a_different_call_resets() {
    assert_streak_restarts_at_the_last(&[
        ("read", json!({"path": "a"}), "X"),
        ("read", json!({"path": "a"}), "X"),
        ("grep", json!({"q": "q"}), "Z"),
        ("read", json!({"path": "a"}), "X"),
    ]);
}

#[test]
fn a05_fifth_identical_call_is_refused() {
    let mut s = same_reads(4);
    attempt(&mut s, "read", json!({"path": "a"}));
    let fifth = s.last_index();
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), vec![fifth], "{f:?}");
    let block = &f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .unwrap()
        .1;
    assert_eq!(block.count, 5);
    assert!(
        block.message.contains("`read`") && block.message.contains("4 times"),
        "{}",
        block.message
    );
    assert!(block.evidence.contains(&(fifth as u64)));
    // Calls 1-4 were never blocked.
    assert!(f
        .iter()
        .all(|(i, f)| f.level == Level::Warning || *i == fifth));
}

#[test]
fn a05_analogue_a_is_not_copied_the_fifth_result_never_completes_first() {
    // With five results completed the 5th call was not blocked only if the detector let
    // it run; our detector blocks the 5th call itself, so the 5th result is ignored and the
    // 6th attempt is blocked too (sticky), never "first blocked at the 6th".
    let s = same_reads(5);
    let f = run(plg(), s.events());
    let first_block = criticals(&f)[0];
    assert!(matches!(
        s.events()[first_block],
        OwnedEvent::ToolCall { .. }
    ));
    assert_eq!(
        s.events()
            .iter()
            .take(first_block)
            .filter(|e| matches!(e, OwnedEvent::ToolResult { .. }))
            .count(),
        4
    );
}

#[test]
fn a06_every_blocked_attempt_counts_toward_the_abort() {
    // The orchestrator aborts after `guard.abort-after-blocks` (3) blocks in a user turn; the
    // detector reports each blocked attempt as critical with one stable key.
    let mut s = Script::new();
    s.user("go");
    s.repeat_call(4, "read", json!({"path": "a"}), "X");
    let mut blocked = Vec::new();
    for _ in 0..3 {
        let id = attempt(&mut s, "read", json!({"path": "a"}));
        blocked.push(s.last_index());
        s.tool_result(&id, "read", "Blocked: loop", true);
    }
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), blocked);
    let crit: Vec<&Finding> = f
        .iter()
        .map(|(_, f)| f)
        .filter(|f| f.level == Level::Critical)
        .collect();
    assert!(crit.iter().all(|f| f.key == crit[0].key));
    assert_eq!(
        crit.iter().map(|f| f.count).collect::<Vec<_>>(),
        vec![5, 6, 7]
    );
}

#[test]
fn a07_a_new_user_turn_resets_and_the_guards_own_steer_does_not() {
    let mut s = Script::new();
    s.user("first task");
    s.repeat_call(4, "read", json!({"path": "a"}), "X");
    // The guard's own steer delivered back is not a new turn (which user events are new
    // turns is core's decision: `Cx::is_new_turn`).
    s.user_from("Loop warning: change your approach", Origin::Guard);
    attempt(&mut s, "read", json!({"path": "a"}));
    let still_blocked = s.last_index();
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), vec![still_blocked]);
    // A real new prompt resets both the streak and the block.
    s.user("second task");
    s.repeat_call(2, "read", json!({"path": "a"}), "X");
    let f = run(plg(), s.events());
    assert_eq!(
        criticals(&f),
        vec![still_blocked],
        "no block after the new turn: {f:?}"
    );
    assert_eq!(
        warnings(&f).len(),
        1,
        "the old streak's warning only: {f:?}"
    );
}

#[test]
fn a08_parallel_batches_do_not_advance() {
    let a = || json!({"path": "a"});
    let mut s = Script::new();
    s.call("read", a(), "X");
    s.call("read", a(), "X");
    s.batch(&[("read", a(), "X"), ("read", a(), "X")]);
    s.batch(&[("read", a(), "X"), ("read", a(), "X"), ("read", a(), "X")]);
    // Without the batches this would be the 7th identical result; the streak is only at 2.
    quiet_then_third_warns(&plg, &mut s, ("read", a(), "X"));
}

#[test]
fn a08_a_batch_whose_last_result_differs_ends_the_streak() {
    let a = || json!({"path": "a"});
    let mut s = Script::new();
    s.call("read", a(), "X");
    s.call("read", a(), "X");
    s.batch(&[("read", a(), "X"), ("grep", json!({"q": 1}), "Z")]);
    s.call("read", a(), "X");
    s.call("read", a(), "X");
    quiet_then_third_warns(&plg, &mut s, ("read", a(), "X"));
}

#[test]
fn a09_images_are_counted_not_hashed() {
    let raw = || det("result-identity = \"raw\"\nwindow = { enabled = false }");
    // "T" + 1 image, then "T" + 2 images: different results, the streak resets.
    let mut s = Script::new();
    s.call_images("screenshot", json!({}), "T", 1);
    s.call_images("screenshot", json!({}), "T", 1);
    s.call_images("screenshot", json!({}), "T", 2);
    assert!(run(raw(), s.events()).is_empty());
    // Equal text and equal image counts (whatever the bytes were) are the same result.
    let mut s = Script::new();
    for _ in 0..3 {
        s.call_images("screenshot", json!({}), "T", 2);
    }
    assert_eq!(
        summary(&run(raw(), s.events())),
        vec![(s.last_index(), Level::Warning, 3)]
    );
}

#[test]
fn a10_the_result_hash_streams() {
    let mut a = ResultHasher::new();
    a.begin_part();
    for piece in ["line one\n", "line ", "two"] {
        a.chunk(piece.as_bytes());
    }
    let mut b = ResultHasher::new();
    b.begin_part();
    b.chunk(b"line one\nline two");
    assert_eq!(a.finish(), b.finish());
    let mut c = ResultHasher::new();
    c.text("line one\nline two");
    c.image();
    assert_eq!(
        c.finish(),
        ResultHasher::one_shot(&["line one\nline two"], 1)
    );
    assert_eq!(
        loopguard_core::result_fingerprint("x", 0),
        ResultHasher::one_shot(&["x"], 0)
    );
}

// ---- K. pi-loop-guard README details --------------------------------------------------------

#[test]
fn k66_warn_not_below_block_is_a_config_error() {
    for text in [
        "warning-threshold = 5\ncritical-threshold = 5",
        "warning-threshold = 6",
        "critical-threshold = 2\nwarning-threshold = 3",
        // The old spellings, still read.
        "warn-threshold = 5\nblock-threshold = 5",
    ] {
        let t: toml::Table = text.parse().unwrap();
        let err = Settings::from_table(&t).unwrap_err();
        assert_eq!(
            err.path(),
            Some("detectors.generic-repeat.critical-threshold"),
            "{text}"
        );
        assert!(
            err.to_string()
                .contains("warning-threshold must be lower than critical-threshold"),
            "{err}"
        );
    }
    let t: toml::Table = "warning-threshold = 5\ncritical-threshold = 8"
        .parse()
        .unwrap();
    let s = Settings::from_table(&t).unwrap();
    assert_eq!((s.warn_threshold, s.block_threshold), (5, 8));
    let d = Settings::default();
    assert_eq!((d.warn_threshold, d.block_threshold), (3, 5));
    // Through the environment names and the registry, as a host would load it.
    let mut c = Config::default();
    c.apply_env([
        ("LOOP_GUARD_WARN_THRESHOLD".to_owned(), "5".to_owned()),
        ("LOOP_GUARD_BLOCK_THRESHOLD".to_owned(), "5".to_owned()),
    ])
    .unwrap();
    let reg = Registry::from_entries([&REGISTRATION]).unwrap();
    let err = reg.build(&c).unwrap_err();
    assert_eq!(
        err.path(),
        Some("detectors.generic-repeat.critical-threshold")
    );
    // Zero and negative values are rejected with their key.
    rejected("critical-threshold = 0", "critical-threshold");
    rejected("warning-threshold = -1", "warning-threshold");
}

#[test]
fn k67_the_master_switch_builds_nothing() {
    let reg = Registry::from_entries([&REGISTRATION]).unwrap();
    let c = Config::from_toml_str("[detectors.generic-repeat]\nenabled = false\n", None).unwrap();
    assert!(reg.build(&c).unwrap().is_empty());
    assert_eq!(
        reg.build(&Config::default()).unwrap().len(),
        1,
        "on by default"
    );
    // Every rule off: nothing fires on a plain loop.
    let off = det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { enabled = false }");
    let s = same_reads(30);
    assert!(run(off, s.events()).is_empty());
}

#[test]
fn k68_ignored_tools_never_fire() {
    let mut c = Config::default();
    c.apply_env([("LOOP_GUARD_IGNORE_TOOLS".to_owned(), "todo,bash".to_owned())])
        .unwrap();
    let table = c.detectors[NAME].clone();
    let mut s = Script::new();
    for _ in 0..20 {
        s.call("todo", json!({"items": ["a"]}), "saved");
        s.call("bash", json!({"command": "make"}), "ok");
    }
    s.batch(&[("todo", json!({}), "x"), ("bash", json!({}), "y")]);
    s.batch(&[("todo", json!({}), "x"), ("bash", json!({}), "y")]);
    s.batch(&[("todo", json!({}), "x"), ("bash", json!({}), "y")]);
    assert!(run(det_from(&table), s.events()).is_empty());
    let mut plg_table = preset_table("pi-loop-guard");
    plg_table.insert(
        "ignore-tools".into(),
        toml::Value::Array(vec!["todo".into(), "bash".into()]),
    );
    assert!(run(det_from(&plg_table), s.events()).is_empty());
    // Without the option the same session fires.
    assert!(!run(default_det(), s.events()).is_empty());
}

#[test]
fn k68_an_ignored_tool_between_identical_calls_is_transparent() {
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
        s.call("todo", json!({"n": 1}), "ok");
    }
    let d = det("ignore-tools = [\"todo\"]\nwindow = { enabled = false }");
    let f = run(d, s.events());
    assert_eq!(summary(&f), vec![(s.last_index() - 4, Level::Warning, 3)]);
}

#[test]
fn k69_ignored_errors_never_advance_the_streak() {
    let mut s = Script::new();
    s.repeat_call_with(
        10,
        "bash",
        json!({"command": "make"}),
        "error: no rule",
        true,
    );
    let mut t = preset_table("pi-loop-guard");
    t.insert("ignore-errors".into(), toml::Value::Boolean(true));
    assert!(run(det_from(&t), s.events()).is_empty());
    // Default (false): errors count like any other result.
    let f = run(plg(), s.events());
    assert_eq!(warnings(&f).len(), 1);
    assert_eq!(criticals(&f).len(), 6, "attempts 5..10 are blocked: {f:?}");
    // An ignored error between identical successes neither advances nor breaks the streak.
    let mut s = Script::new();
    s.call("bash", json!({"command": "make"}), "ok");
    s.call_with("bash", json!({"command": "make"}), "boom", true);
    s.call("bash", json!({"command": "make"}), "ok");
    quiet_then_third_warns(
        &|| det_from(&t),
        &mut s,
        ("bash", json!({"command": "make"}), "ok"),
    );
}

#[test]
fn k70_the_block_is_sticky_until_the_arguments_change() {
    let mut s = same_reads(4);
    let mut blocked = Vec::new();
    // Live host: the block reason comes back as an error result.
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(s.last_index());
    s.tool_result(&id, "read", "Blocked: this exact `read` call…", true);
    // `loopguard scan`: the recorded original result is replayed.
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(s.last_index());
    s.tool_result(&id, "read", "X", false);
    // No result at all.
    attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(s.last_index());
    attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(s.last_index());
    // Different arguments execute and lift the block.
    s.call("read", json!({"path": "b"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), blocked, "{f:?}");
    assert_eq!(
        f.iter()
            .filter(|(_, f)| f.level == Level::Critical)
            .map(|(_, f)| f.count)
            .collect::<Vec<_>>(),
        vec![5, 6, 7, 8]
    );
}

#[test]
fn k71_terminate_is_the_orchestrators_flag() {
    // `LOOP_GUARD_USE_TERMINATE` maps to `guard.terminate`: the detector's block is a plain
    // critical finding, never an abort of its own.
    let s = same_reads(6);
    let f = run(plg(), s.events());
    assert!(!criticals(&f).is_empty());
    assert!(f
        .iter()
        .all(|(_, f)| f.level != Level::Fatal && f.code.is_none()));
    let mut c = Config::default();
    c.apply_env([("LOOP_GUARD_USE_TERMINATE".to_owned(), "true".to_owned())])
        .unwrap();
    assert!(
        !c.detectors.contains_key(NAME),
        "terminate is not a detector option"
    );
}

#[test]
fn k72_different_arguments_never_combine() {
    let mut s = Script::new();
    for i in 0..40 {
        s.call("read", json!({"path": format!("file{i}.rs")}), "X");
    }
    assert!(run(plg(), s.events()).is_empty());
    assert!(run(default_det(), s.events()).is_empty());
    assert!(run(prg(), s.events()).is_empty());
    assert!(run(oc(), s.events()).is_empty());
}

// ---- polling calls (default preset) ---------------------------------------------------

#[test]
fn a_poll_that_waits_is_warned_at_ten_and_blocked_at_twenty_not_at_three_and_five() {
    for (tool, args) in [
        ("process", json!({"action": "poll", "sessionId": "build"})),
        (
            "bash",
            json!({"command": "sleep 30; gh run view 42 --json status"}),
        ),
        // OpenHands waits on a running command by sending it an empty one (its issue 10750:
        // such waits were flagged after four).
        ("execute_bash", json!({"command": "", "is_input": "true"})),
    ] {
        let mut s = Script::new();
        s.user("deploy and wait");
        s.repeat_call(7, tool, args.clone(), "status: running");
        s.call(tool, args.clone(), "status: exited 0");
        assert!(
            run(default_preset(), s.events()).is_empty(),
            "{tool}: waiting 7 times is not a loop"
        );
        let mut s = Script::new();
        s.user("deploy and wait");
        s.repeat_call(19, tool, args.clone(), "status: running");
        let _ = attempt(&mut s, tool, args.clone());
        let f = run(default_preset(), s.events());
        assert_eq!(warnings(&f).len(), 1, "{tool}: {f:?}");
        assert_eq!(
            f.iter()
                .find(|(_, f)| f.level == Level::Warning)
                .map(|(_, f)| f.count),
            Some(10)
        );
        assert_eq!(
            criticals(&f),
            vec![s.last_index()],
            "{tool}: the 20th identical poll is blocked"
        );
    }
}

/// An empty command the shell rejects is a failed call, not a wait: it keeps the plain
/// thresholds (warned at three, blocked at five), as it did before empty commands could be
/// waits.
#[test]
fn an_empty_command_the_shell_rejects_is_not_a_wait() {
    let args = json!({"command": ""});
    let rejected = "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing</tool_use_error>";
    let mut s = Script::new();
    s.user("run the tests");
    s.repeat_call_with(4, "Bash", args.clone(), rejected, true);
    let _ = attempt(&mut s, "Bash", args.clone());
    let f = run(default_preset(), s.events());
    assert_eq!(warnings(&f).len(), 1, "{f:?}");
    assert_eq!(
        criticals(&f),
        vec![s.last_index()],
        "the fifth rejected empty command is blocked"
    );
    // A wait that was answered, then rejected, stops being a poll.
    let mut s = Script::new();
    s.user("run the tests");
    s.call("execute_bash", args.clone(), "[No new output]");
    s.repeat_call_with(
        4,
        "execute_bash",
        args.clone(),
        "ERROR: no command is running",
        true,
    );
    let _ = attempt(&mut s, "execute_bash", args);
    let f = run(default_preset(), s.events());
    assert_eq!(criticals(&f), vec![s.last_index()], "{f:?}");
}

/// Retrying a call that a rate limit refused is waiting, bounded as a poll is (Intrect-io/
/// OpenSwarm PR #262, block/buzz#5557: a repeating infra error is not a stuck loop, but a
/// retry storm must end): warned at ten identical answers, blocked at the twentieth call, not
/// at three and five. Once the call answers something else, identical answers are a loop
/// again at the plain thresholds.
#[test]
fn a_call_retried_through_a_rate_limit_waits_like_a_poll() {
    let args = json!({"url": "https://api.github.com/repos/o/r/releases"});
    let limited =
        "Error: HTTP 429 Too Many Requests: API rate limit exceeded. Retry after 60 seconds.";
    let mut s = Script::new();
    s.user("fetch the release notes");
    s.repeat_call_with(7, "web_fetch", args.clone(), limited, true);
    assert!(
        run(default_preset(), s.events()).is_empty(),
        "seven retries through a rate limit are not a loop"
    );
    let mut s = Script::new();
    s.user("fetch the release notes");
    s.repeat_call_with(19, "web_fetch", args.clone(), limited, true);
    let _ = attempt(&mut s, "web_fetch", args.clone());
    let f = run(default_preset(), s.events());
    assert_eq!(
        f.iter()
            .find(|(_, f)| f.level == Level::Warning)
            .map(|(_, f)| f.count),
        Some(10),
        "{f:?}"
    );
    assert_eq!(
        criticals(&f),
        vec![s.last_index()],
        "the 20th retry is blocked"
    );
    // The limit lifts; the same page then comes back identical: a loop as any other.
    let mut s = Script::new();
    s.user("fetch the release notes");
    s.repeat_call_with(3, "web_fetch", args.clone(), limited, true);
    s.repeat_call(4, "web_fetch", args.clone(), "v1.2.0: fixes the parser");
    let _ = attempt(&mut s, "web_fetch", args);
    let f = run(default_preset(), s.events());
    assert_eq!(criticals(&f), vec![s.last_index()], "{f:?}");
}

/// Failures of this machine or of the code that only read like a rate limit or an overloaded
/// service do not pass by waiting: a full disk quota (`EDQUOT`), a compiler's ambiguous call
/// of an overloaded function, a failing test in a file named after rate limits. Re-running
/// the same command into them is a loop, refused at the fifth call, not the twentieth.
#[test]
fn failures_that_only_read_like_a_rate_limit_are_loops_not_waits() {
    let cases = [
        (
            "python3 scripts/export.py --out /data/export.bin",
            "Traceback (most recent call last):\n  File \"scripts/export.py\", line 41, in <module>\n    \
             out.write(chunk)\nOSError: [Errno 122] Disk quota exceeded\n",
        ),
        (
            "g++ -std=c++17 -c src/geometry.cpp -o build/geometry.o",
            "src/geometry.cpp: In function 'int main()':\nsrc/geometry.cpp:12:9: error: call of \
             overloaded 'area(int)' is ambiguous\n   12 |     area(3);\n      |     ~~~~^~~\n",
        ),
        (
            "pytest -q tests/test_ratelimit.py",
            "F\nFAILED tests/test_ratelimit.py::test_burst - assert 3 == 2\n1 failed in 0.04s\n",
        ),
    ];
    for (command, output) in cases {
        let args = json!({ "command": command });
        let mut s = Script::new();
        s.user("make the export work");
        s.repeat_call_with(4, "bash", args.clone(), output, true);
        let _ = attempt(&mut s, "bash", args);
        let f = run(default_preset(), s.events());
        assert_eq!(criticals(&f), vec![s.last_index()], "{command}: {f:?}");
    }
}

/// Only settings that tell polls apart learn which empty commands are waits: the seeds'
/// (pi-loop-guard here) keep no list of polls or waits, so their state is what it was.
#[test]
fn only_poll_aware_settings_learn_waits() {
    let mut s = Script::new();
    s.user("deploy and wait");
    s.repeat_call(3, "execute_bash", json!({"command": ""}), "[No new output]");
    let lists = |preset: &str| {
        let mut bus = loopguard_core::Bus::new(vec![det_from(&preset_table(preset))]);
        for e in s.events() {
            let _ = bus.observe(&e.as_event());
        }
        let snap = bus.snapshot().unwrap();
        let state = &snap["detectors"]["generic-repeat"];
        (
            state["polls"].clone(),
            state["polls_by_answer"].clone(),
            state["waits"].clone(),
        )
    };
    // The answered wait is a poll by its answers, not by its command.
    let (polls, by_answer, waits) = lists("default");
    assert_eq!(polls, json!([]));
    assert_eq!(by_answer.as_array().map(Vec::len), Some(1), "{by_answer}");
    assert_eq!(waits.as_array().map(Vec::len), Some(1), "{waits}");
    assert_eq!(lists("pi-loop-guard"), (json!([]), json!([]), json!([])));
}

#[test]
fn polls_whose_output_advances_are_never_flagged() {
    let log: String = (0..40)
        .map(|j| format!("[{j:03}] compiling crate {j} of the workspace\n"))
        .collect();
    type Case = (&'static str, Value, Box<dyn Fn(usize) -> String>);
    let cases: Vec<Case> = vec![
        (
            "process",
            json!({"action": "poll", "sessionId": "b"}),
            Box::new(move |i| format!("{log}Progress: {}% ({i} of 25)", i * 4)),
        ),
        (
            "bash",
            json!({"command": "tail -20 build.log"}),
            Box::new(|i| {
                (i..i + 20)
                    .map(|k| format!("line {k}: building module {k}\n"))
                    .collect()
            }),
        ),
        (
            "bash",
            json!({"command": "sleep 10; kubectl get pods"}),
            Box::new(|i| {
                (0..30)
                    .map(|k| {
                        format!(
                            "web-{k} {}\n",
                            if k < i { "1/1 Running" } else { "0/1 Pending" }
                        )
                    })
                    .collect()
            }),
        ),
    ];
    for (tool, args, result) in cases {
        let mut s = Script::new();
        s.user("wait for the build");
        for i in 0..25 {
            s.call(tool, args.clone(), &result(i));
        }
        let f = run(default_preset(), s.events());
        assert!(f.is_empty(), "{tool} {args}: {f:?}");
    }
}

#[test]
fn a_polls_table_is_validated() {
    let t: toml::Table = "polls = { warning-threshold = 20, critical-threshold = 10 }"
        .parse()
        .unwrap();
    let err = Settings::from_table(&t).unwrap_err();
    assert_eq!(
        err.path(),
        Some("detectors.generic-repeat.polls.critical-threshold")
    );
    let t: toml::Table = "polls = { warn = 3 }".parse().unwrap();
    assert!(Settings::from_table(&t).is_err());
}
