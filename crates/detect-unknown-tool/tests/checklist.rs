//! Checklist section E (items 30-33), the unknown-tool rows of OpenClaw's test table (§3.10),
//! the shell shapes of the corpus, and `available-tools`.

use loopguard_core::{Detector, Level};
use loopguard_detect_unknown_tool::{Settings, UnknownTool, REGISTRATION};
use loopguard_testkit::{registration, run, with_own_result_ids, Script};
use serde_json::json;

fn detector() -> Box<dyn Detector> {
    Box::new(UnknownTool::default())
}

fn openclaw() -> Box<dyn Detector> {
    Box::new(UnknownTool::new(Settings::openclaw()))
}

fn exec_failures(s: &mut Script, n: usize) {
    for i in 0..n {
        s.call_with(
            "exec",
            json!({"command": format!("ls {i}"), "shape": i}),
            "Tool exec not found",
            true,
        );
    }
}

#[test]
fn e30_nine_failures_are_below_the_openclaw_threshold() {
    let mut s = Script::new();
    exec_failures(&mut s, 9);
    s.tool_call("exec", json!({"command": "ls"}));
    assert!(run(openclaw(), s.events()).is_empty());
}

#[test]
fn e31_ten_failures_block_the_eleventh_attempt_whatever_the_args() {
    let mut s = Script::new();
    exec_failures(&mut s, 10);
    s.tool_call("exec", json!({"command": "something new"}));
    let f = run(openclaw(), s.events());
    assert_eq!(f.len(), 1);
    let (at, f) = &f[0];
    assert_eq!(*at, s.last_index());
    assert_eq!((f.level, f.count), (Level::Critical, 10));
    assert_eq!(f.detector, "unknown-tool");
    assert!(f.message.contains("exec"), "{}", f.message);
    assert!(f.message.contains("answer without it"), "{}", f.message);
    assert_eq!(f.evidence.len(), 10);
    // OpenClaw's table: 20 failures with varied args are critical too
    let mut s = Script::new();
    exec_failures(&mut s, 20);
    s.tool_call("exec", json!({}));
    let f = run(openclaw(), s.events());
    assert_eq!(f.last().map(|(_, f)| f.level), Some(Level::Critical));
}

#[test]
fn e32_recognised_error_shapes() {
    for (text, name) in [
        ("unknown tool: foo", "foo"),
        ("Unknown tool 'foo'", "foo"),
        ("tool foo not found", "foo"),
        ("tool \"foo\" is not available", "foo"),
        ("Error: Unknown tool: FOO", "foo"),
    ] {
        let mut s = Script::new();
        s.repeat_call_with(10, "foo", json!({}), text, true);
        s.tool_call("foo", json!({}));
        let f = run(openclaw(), s.events());
        assert_eq!(f.len(), 1, "{text}");
        assert!(f[0].1.key.ends_with(&format!(":{name}")), "{}", f[0].1.key);
    }
    // other errors, or the same texts without the error flag, yield nothing
    for (text, err) in [
        ("file not found", true),
        ("permission denied", true),
        ("unknown tool: foo", false),
    ] {
        let mut s = Script::new();
        s.repeat_call_with(12, "foo", json!({}), text, err);
        s.tool_call("foo", json!({}));
        assert!(run(openclaw(), s.events()).is_empty(), "{text}");
        assert!(run(detector(), s.events()).is_empty(), "{text}");
    }
}

#[test]
fn e33_a_success_a_different_tool_or_a_different_name_resets() {
    for breaker in ["success", "other-tool", "other-name"] {
        let mut s = Script::new();
        exec_failures(&mut s, 9);
        match breaker {
            "success" => {
                s.call("exec", json!({"command": "ls"}), "a.txt");
            }
            "other-tool" => {
                s.call("read", json!({"path": "a"}), "text");
            }
            _ => {
                s.call_with("exec", json!({}), "unknown tool: bash", true);
            }
        }
        exec_failures(&mut s, 9);
        s.tool_call("exec", json!({}));
        assert!(run(openclaw(), s.events()).is_empty(), "{breaker}");
    }
}

#[test]
fn default_warns_at_three_and_blocks_at_five() {
    let mut s = Script::new();
    exec_failures(&mut s, 3);
    s.tool_call("exec", json!({}));
    let f = run(detector(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].0, f[0].1.level, f[0].1.count),
        (s.last_index(), Level::Warning, 3)
    );
    let mut s = Script::new();
    exec_failures(&mut s, 5);
    s.tool_call("exec", json!({}));
    let f = run(detector(), s.events());
    assert_eq!(
        f.last().map(|(i, f)| (*i, f.level, f.count)),
        Some((s.last_index(), Level::Critical, 5))
    );
    assert_eq!(f.len(), 3, "warnings at 3 and 4, critical at 5");
}

#[test]
fn a_blocked_call_stays_blocked() {
    let mut s = Script::new();
    exec_failures(&mut s, 5);
    for _ in 0..3 {
        s.tool_call("exec", json!({}));
    }
    let f = run(detector(), s.events());
    assert_eq!(
        f.iter().filter(|(_, f)| f.level == Level::Critical).count(),
        3
    );
}

#[test]
fn sweagent_discussion_loop_with_syntax_errors_in_between() {
    // the shape of sweagent-msb-doubao__fasterxml__jackson-databind-4265
    let nf = |n: u32| {
        format!("/bin/bash: line {n}: DISCUSSION: command not found\n/bin/bash: line {}: It: command not found", n + 1)
    };
    let eof = "/bin/bash: line 2: unexpected EOF while looking for matching `''\n/bin/bash: line 4: syntax error: unexpected end of file";
    let mut s = Script::new();
    for (words, result) in [
        ("First, we'll look", eof.to_owned()),
        ("It seems", nf(33810)),
        ("There's an issue", eof.to_owned()),
        ("The previous one's broken", eof.to_owned()),
    ] {
        let command = format!("DISCUSSION\n{words}");
        s.call("DISCUSSION", json!({ "command": command }), &result);
    }
    s.tool_call("DISCUSSION", json!({"command": "DISCUSSION\nAgain"}));
    let f = run(detector(), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].1.level, f[0].1.count), (Level::Warning, 3));
    assert!(f[0].1.message.contains("discussion"), "{}", f[0].1.message);
    // OpenClaw's preset reads errors only: nothing
    assert!(run(openclaw(), s.events()).is_empty());
}

/// A host that numbers its results its own way: each "command not found" answers the call
/// the bus pairs it with, and is read with that call's command, as with call ids.
#[test]
fn results_with_the_hosts_own_ids_are_read_with_their_calls() {
    let mut s = Script::new();
    for (i, words) in ["First, find the file", "It seems", "Let me try"]
        .iter()
        .enumerate()
    {
        let command = format!("DISCUSSION\n{words}");
        let line = 12395 + 2 * i;
        s.call(
            "DISCUSSION",
            json!({ "command": command }),
            &format!("/bin/bash: line {line}: DISCUSSION: command not found"),
        );
    }
    s.tool_call("DISCUSSION", json!({"command": "DISCUSSION\nAgain"}));
    let with_call_ids = run(detector(), s.events());
    assert_eq!(
        with_call_ids
            .iter()
            .map(|(_, f)| f.level)
            .collect::<Vec<_>>(),
        [Level::Warning]
    );
    let own = with_own_result_ids(s.events());
    assert_eq!(
        format!("{:?}", run(detector(), &own)),
        format!("{with_call_ids:?}")
    );
}

/// The same loop under Codex's header (`Exit code`, `Wall time`, `Output:`) and in Gemini
/// CLI's report (`Command:` … `Output:` … `Process Group PGID:`): the shell's refusal to
/// parse is still read on the output's first line, and "command not found" on its lines.
#[test]
fn the_discussion_loop_under_a_hosts_wrapper_is_the_same_loop() {
    let nf = |n: u32| format!("/bin/bash: line {n}: DISCUSSION: command not found");
    let eof = "/bin/bash: line 2: unexpected EOF while looking for matching `''\n/bin/bash: line 4: syntax error: unexpected end of file";
    let script = |host: usize| {
        let mut s = Script::new();
        for (i, (words, result)) in [
            ("It seems", nf(33810)),
            ("There's an issue", eof.to_owned()),
            ("The previous one's broken", nf(33822)),
        ]
        .into_iter()
        .enumerate()
        {
            let result = match host {
                1 => format!("Exit code: 127\nWall time: 0.{i} seconds\nOutput:\n{result}"),
                2 => format!(
                    "Command: DISCUSSION\nDirectory: (root)\nOutput: {result}\nError: (none)\nExit Code: 127\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4{i}21"
                ),
                _ => result,
            };
            s.call(
                "DISCUSSION",
                json!({ "command": format!("DISCUSSION\n{words}") }),
                &result,
            );
        }
        s.tool_call("DISCUSSION", json!({"command": "DISCUSSION\nAgain"}));
        s
    };
    let plain = run(detector(), script(0).events());
    assert_eq!(plain.len(), 1, "{plain:?}");
    for host in [1, 2] {
        let wrapped = run(detector(), script(host).events());
        assert_eq!(format!("{wrapped:?}"), format!("{plain:?}"), "host {host}");
    }
}

#[test]
fn a_syntax_error_alone_is_not_an_unknown_tool() {
    let eof = "/bin/bash: line 2: unexpected EOF while looking for matching `''";
    let mut s = Script::new();
    s.repeat_call(10, "python", json!({"command": "python -c 'print(1)"}), eof);
    s.tool_call("python", json!({}));
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn javac_missing_with_only_the_line_counter_changing() {
    // sweagent-msb-dschat__fasterxml__jackson-dataformat-xml-644 and -544
    let mut s = Script::new();
    s.call_results(
        5,
        "javac",
        json!({"command": "javac -cp .:lib/* X.java"}),
        |i| {
            format!(
                "/bin/bash: line {}: javac: command not found",
                50776 + 15 * i
            )
        },
    );
    s.tool_call("javac", json!({"command": "javac -cp .:lib/* X.java"}));
    let f = run(detector(), s.events());
    assert_eq!(
        f.last().map(|(_, f)| (f.level, f.count)),
        Some((Level::Critical, 5))
    );
    let mut s = Script::new();
    for i in 0..3 {
        s.call(
            "javac",
            json!({"command": format!("javac -cp {i} T.java")}),
            &format!(
                "/bin/bash: line {}: /x/jdk-11.0.2/bin/javac: No such file or directory",
                47782 + 15 * i
            ),
        );
    }
    s.tool_call("javac", json!({"command": "javac T.java"}));
    assert_eq!(run(detector(), s.events()).len(), 1);
}

#[test]
fn a_bash_tool_running_a_missing_program() {
    let mut s = Script::new();
    for i in 0..5 {
        s.call(
            "bash",
            json!({"command": format!("cd /testbed && pytest tests/t{i}.py")}),
            "bash: line 1: pytest: command not found",
        );
    }
    s.tool_call("bash", json!({"command": "pytest"}));
    let f = run(detector(), s.events());
    assert_eq!(
        f.last().map(|(_, f)| (f.level, f.count)),
        Some((Level::Critical, 5))
    );
    assert!(f.last().unwrap().1.key.ends_with(":pytest"));
}

#[test]
fn a_missing_directory_is_not_a_missing_command() {
    let mut s = Script::new();
    s.call_results(10, "cd", json!({"command": "cd fastjson/"}), |i| {
        format!(
            "/bin/bash: line {}: cd: fastjson/: No such file or directory",
            11301 + 15 * i
        )
    });
    s.tool_call("cd", json!({"command": "cd fastjson/"}));
    assert!(run(detector(), s.events()).is_empty());
}

#[test]
fn available_tools_block_an_unknown_name_at_once() {
    let st = Settings {
        available_tools: vec!["read".into(), "bash".into()],
        ..Settings::default()
    };
    let mut s = Script::new();
    s.call("read", json!({}), "ok");
    s.tool_call("web_search", json!({"q": "x"}));
    let f = run(Box::new(UnknownTool::new(st)), s.events());
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].0, f[0].1.level, f[0].1.count),
        (s.last_index(), Level::Critical, 1)
    );
    assert!(f[0].1.message.contains("web_search"));
    assert!(f[0].1.message.contains("read, bash"));
}

#[test]
fn j62_history_is_run_scoped() {
    let mut s = Script::new();
    exec_failures(&mut s, 4);
    s.run_start();
    exec_failures(&mut s, 2);
    s.tool_call("exec", json!({}));
    let f = run(detector(), s.events());
    let boundary = s.events().len() - 1 - 2 * 4;
    assert!(f.iter().all(|(at, _)| *at < boundary), "{f:?}");
}

const OPTIONS: registration::OptionChecks = registration::OptionChecks(&REGISTRATION);

#[test]
fn j63_config_validation() {
    let err = OPTIONS.rejected("critical-threshold = 0", "critical-threshold");
    assert!(err.to_string().contains("positive integer"));
    let err = OPTIONS.rejected(
        "warning-threshold = 5\ncritical-threshold = 5",
        "critical-threshold",
    );
    assert!(err
        .to_string()
        .contains("warning-threshold must be lower than critical-threshold"));
    assert!(OPTIONS
        .build("warning-threshold = 5\ncritical-threshold = 5\nwarn = false")
        .is_ok());
    OPTIONS.rejected("available-tools = [\"\"]", "available-tools[0]");
    OPTIONS.assert_unknown_key("unknownToolThreshold = 10");
    OPTIONS.rejected("history-size = -3", "history-size");
}

loopguard_testkit::registration_tests!(
    REGISTRATION,
    "unknown-tool",
    "LG004",
    Settings::from_options,
    [Settings::default(), Settings::openclaw()]
);

/// A host that sends results with the call id only: the bus pairs them with their calls and
/// the detector sees the call's tool, so the retries are caught as with named results.
#[test]
fn results_that_name_no_tool_are_judged_with_their_calls_tool() {
    let script = |named: bool| {
        let mut s = Script::new();
        for i in 0..10 {
            let id = s.tool_call("exec", json!({"command": format!("ls {i}")}));
            s.tool_result(
                &id,
                if named { "exec" } else { "" },
                "Tool exec not found",
                true,
            );
        }
        s.tool_call("exec", json!({"command": "something new"}));
        s
    };
    let named = run(openclaw(), script(true).events());
    assert!(
        !named.is_empty(),
        "ten failures of a missing tool are caught"
    );
    let unnamed = run(openclaw(), script(false).events());
    assert_eq!(
        format!("{unnamed:?}"),
        format!("{named:?}"),
        "the same findings without tool names on the results"
    );
}
