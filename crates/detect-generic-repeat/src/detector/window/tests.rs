//! The sliding window: checklist items I (tool-call loop, pi-repetition-guard).

use crate::testutil::*;

// ---- I. tool-call loop, sliding window (pi-repetition-guard) -------------------------------

/// Six identical `bash` calls of `command`, the i-th answered by `result(i)`, and the index of
/// each call.
fn six_bash_calls(command: &str, result: impl Fn(usize) -> String) -> (Script, Vec<usize>) {
    let mut s = Script::new();
    let mut calls = Vec::new();
    for i in 0..6 {
        let id = attempt(&mut s, "bash", json!({ "command": command }));
        calls.push(s.last_index());
        s.tool_result(&id, "bash", &result(i), false);
    }
    (s, calls)
}

#[test]
fn i51_the_fourth_occurrence_within_eight_fires() {
    // Six identical calls: false, false, false, then true from the 4th on (PRG test 12).
    let (s, calls) = six_bash_calls("make", |i| format!("output {i}"));
    let f = run(prg(), s.events());
    assert_eq!(criticals(&f), calls[3..].to_vec());
    assert!(warnings(&f).is_empty());
    assert!(f[0]
        .1
        .message
        .starts_with("Repetition guard: tool-call loop (same tool+args repeated)"));
    // Not adjacent: positions 1, 3, 5, 7 of eight calls.
    let mut s = Script::new();
    let mut target = Vec::new();
    for i in 0..8 {
        if i % 2 == 0 {
            s.call("read", json!({"path": "a"}), &format!("r{i}"));
            target.push(s.last_index() - 1);
        } else {
            s.call("grep", json!({"q": i}), "z");
        }
    }
    let f = run(prg(), s.events());
    assert_eq!(criticals(&f), vec![target[3]]);
    assert_eq!(f[0].1.count, 4);
}

#[test]
fn i51_varied_legitimate_usage_never_fires() {
    // PRG test 13: varied git/read/edit calls with "git status" twice.
    let mut s = Script::new();
    s.call("bash", json!({"command": "git status"}), "clean");
    s.call("read", json!({"path": "src/a.rs"}), "a");
    s.call(
        "edit",
        json!({"path": "src/a.rs", "old": "x", "new": "y"}),
        "ok",
    );
    s.call("bash", json!({"command": "git diff"}), "diff");
    s.call("read", json!({"path": "src/b.rs"}), "b");
    s.call("bash", json!({"command": "git status"}), "modified");
    s.call("bash", json!({"command": "git commit -am fix"}), "done");
    assert!(run(prg(), s.events()).is_empty());
    assert!(run(default_det(), s.events()).is_empty());
}

#[test]
fn i52_occurrences_slide_out_and_a_new_run_clears_the_window() {
    let mut s = same_reads(4);
    for i in 0..8 {
        s.call("grep", json!({"q": i}), "z");
    }
    let before = run(prg(), s.events()).len();
    assert_eq!(before, 1);
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(run(prg(), s.events()).len(), before);

    let mut s = same_reads(3);
    s.run_start();
    s.call("read", json!({"path": "a"}), "X");
    assert!(run(prg(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(criticals(&run(prg(), s.events())).len(), 1);
}

#[test]
fn i53_inputs_are_normalised_like_pi_repetition_guard() {
    use super::window_key;
    let key = |tool: &str, args: Value| {
        let fp = loopguard_core::call_fingerprint(tool, &loopguard_core::args_fingerprint(&args));
        window_key(tool, &args, &fp)
    };
    // A string input is used as is; null and "" are the same; object keys are sorted.
    assert_eq!(key("t", Value::Null), key("t", json!("")));
    assert_ne!(key("t", json!("abc")), key("t", json!("abd")));
    assert_eq!(
        key("t", json!({"b": {"d": 1, "c": 2}, "a": [2, 1]})),
        key("t", json!({"a": [2, 1], "b": {"c": 2, "d": 1}}))
    );
    assert_ne!(
        key("t", json!({"a": [1, 2]})),
        key("t", json!({"a": [2, 1]}))
    );
    assert_ne!(key("t", json!("x")), key("u", json!("x")));
    assert_ne!(key("t", Value::Null), key("t", json!({})));
    let mut s = Script::new();
    for args in [Value::Null, json!(""), Value::Null, json!("")] {
        s.call("think", args, "ok");
    }
    assert_eq!(criticals(&run(prg(), s.events())), vec![s.last_index() - 1]);
}

// ---- outcome identity and the default level ------------------------------------------------

#[test]
fn window_can_count_identical_outcomes_instead_of_calls() {
    let d = || {
        det("streak = false\nbatch-streak = false\nwindow = { identity = \"call-and-result\", size = 6, threshold = 3 }")
    };
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "X");
    s.call("bash", json!({"command": "make"}), "built");
    s.call("read", json!({"path": "a"}), "Y");
    s.call("read", json!({"path": "a"}), "X");
    assert!(run(d(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "X");
    let f = run(d(), s.events());
    assert_eq!(summary(&f), vec![(s.last_index(), Level::Warning, 3)]);
    assert!(matches!(
        s.events()[s.last_index()],
        OwnedEvent::ToolResult { .. }
    ));
}

#[test]
fn the_default_window_warns_and_never_blocks() {
    let (s, calls) = six_bash_calls("cargo check", |i| format!("{i} errors"));
    let f = run(default_det(), s.events());
    assert_eq!(warnings(&f), calls[4..].to_vec(), "5 of the last 8 calls");
    assert!(criticals(&f).is_empty());
}

// ---- the unanswered-call window (a host that sends no results) ------------------------------

fn unanswered() -> Box<dyn Detector> {
    det("streak = false\nbatch-streak = false\nwindow = { identity = \"unanswered-call\", size = 8, threshold = 5, level = \"warning\", critical-threshold = 8 }")
}

#[test]
fn unanswered_calls_warn_at_five_in_eight_and_block_at_eight() {
    // A host that forwards calls and no result: ten identical reads.
    let mut s = Script::new();
    let mut calls = Vec::new();
    for _ in 0..10 {
        s.tool_call("read", json!({"path": "src/main.rs"}));
        calls.push(s.last_index());
    }
    let f = run(unanswered(), s.events());
    assert_eq!(warnings(&f), calls[4..7].to_vec());
    assert_eq!(criticals(&f), calls[7..].to_vec());
    assert!(
        f[0].1.message.contains("no result in between"),
        "{}",
        f[0].1.message
    );
    // Other calls in between count as the seed's window counts them: `a` is at 5 of the last
    // 8 calls from its fifth occurrence on (a a a o a a a o).
    let mut s = Script::new();
    for i in 0..8 {
        let path = if i % 4 == 3 {
            format!("other{i}")
        } else {
            "a".to_owned()
        };
        s.tool_call("read", json!({ "path": path }));
    }
    let f = run(unanswered(), s.events());
    assert_eq!(
        summary(&f),
        vec![(5, Level::Warning, 5), (6, Level::Warning, 6)]
    );
}

#[test]
fn steps_without_input_are_not_counted_without_results() {
    // SWE-agent paging through a file, forwarded by a host that sends no results: the same
    // `scroll_down` thirty times is a walk through the file, not a loop, and nothing tells
    // them apart but the results. A call with an input is still counted among them.
    for args in [
        json!({"command": "scroll_down"}),
        json!({}),
        Value::Null,
        json!(""),
        json!({"command": " scroll_down "}),
    ] {
        let mut s = Script::new();
        for _ in 0..30 {
            s.tool_call("scroll_down", args.clone());
        }
        assert!(run(unanswered(), s.events()).is_empty(), "{args}");
    }
    let mut s = Script::new();
    let mut reads = Vec::new();
    for _ in 0..10 {
        s.tool_call("scroll_down", json!({"command": "scroll_down"}));
        s.tool_call("open", json!({"command": "open src/main.rs"}));
        reads.push(s.last_index());
    }
    let f = run(unanswered(), s.events());
    assert_eq!(criticals(&f).first(), reads.get(7), "{f:?}");
    // An input that is only a number or a flag is an input.
    let mut s = Script::new();
    for _ in 0..8 {
        s.tool_call("wait", json!({"seconds": 30}));
    }
    assert_eq!(criticals(&run(unanswered(), s.events())).len(), 1);
}

#[test]
fn any_result_empties_the_unanswered_window() {
    // The same calls, each answered (identical, changing, empty, an error, or a result for a
    // call never seen): the host sends results, and the window never holds two calls.
    for result in ["same", "", "Error: not found"] {
        let mut s = Script::new();
        for i in 0..10 {
            let id = s.tool_call("bash", json!({"command": "make test"}));
            let text = if result == "same" {
                format!("{i} tests failed")
            } else {
                result.to_owned()
            };
            s.tool_result(&id, "bash", &text, result.starts_with("Error"));
        }
        assert!(run(unanswered(), s.events()).is_empty(), "{result:?}");
    }
    // Four unanswered calls, a late result for an unknown call, four more: 4 and 4.
    let mut s = Script::new();
    for _ in 0..4 {
        s.tool_call("read", json!({"path": "a"}));
    }
    s.tool_result("ghost", "read", "late", false);
    for _ in 0..4 {
        s.tool_call("read", json!({"path": "a"}));
    }
    assert!(run(unanswered(), s.events()).is_empty());
}

#[test]
fn window_critical_threshold_is_checked() {
    rejected(
        "window = { threshold = 5, critical-threshold = 5 }",
        "window.critical-threshold",
    );
    rejected(
        "window = { size = 8, threshold = 5, critical-threshold = 9 }",
        "window.critical-threshold",
    );
    rejected(
        "window = { identity = \"call-and-result\", critical-threshold = 8 }",
        "window.critical-threshold",
    );
    // 0 is none: the level alone decides.
    let d = det("streak = false\nbatch-streak = false\nwindow = { size = 4, threshold = 2, critical-threshold = 0 }");
    let mut s = Script::new();
    for _ in 0..4 {
        s.tool_call("read", json!({"path": "a"}));
    }
    assert!(criticals(&run(d, s.events())).is_empty());
}
