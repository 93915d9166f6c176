//! What must never be flagged with the default preset, through `loopguard scan`: polling that
//! progresses, and waiting that ends — the seeds' own rule ("calls whose results change are
//! not loops") and OpenClaw's poll thresholds.

use crate::support::{loopguard, TempDir};
use serde_json::{json, Value};

fn transcript(calls: &[(String, Value, String)]) -> String {
    let mut lines = vec![
        json!({"type": "session", "id": "adv"}),
        json!({"type": "user", "text": "Deploy, then wait for the build to finish."}),
    ];
    for (i, (tool, args, result)) in calls.iter().enumerate() {
        lines.push(json!({"type": "assistant"}));
        lines.push(json!({"type": "tool_call", "id": format!("c{i}"), "tool": tool, "args": args, "batch": i}));
        lines.push(json!({"type": "tool_result", "id": format!("c{i}"), "tool": tool, "content": result, "is_error": false, "images": 0}));
    }
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

fn findings(name: &str, calls: &[(String, Value, String)]) -> Vec<Value> {
    let dir = TempDir::new(name);
    let path = dir.file("t.jsonl", &transcript(calls));
    let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
    assert!(run.code <= 1, "{}", run.stderr);
    run.json()["sessions"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn progressing_polls_are_never_flagged() {
    let log: String = (0..40)
        .map(|j| format!("[{j:03}] compiling crate {j}\n"))
        .collect();
    let cases: Vec<Vec<(String, Value, String)>> = vec![
        (0..25)
            .map(|i| {
                (
                    "process".into(),
                    json!({"action": "poll", "sessionId": "b"}),
                    format!("{log}Progress: {}%", i * 4),
                )
            })
            .collect(),
        (0..25)
            .map(|i| {
                (
                    "command_status".into(),
                    json!({"id": "job-7"}),
                    json!({"status": "running", "done": i, "total": 30}).to_string(),
                )
            })
            .collect(),
        (0..25)
            .map(|i| {
                (
                    "bash".into(),
                    json!({"command": "tail -20 build.log"}),
                    (i..i + 20)
                        .map(|k| format!("line {k}: module {k}\n"))
                        .collect(),
                )
            })
            .collect(),
        (0..25)
            .map(|i| {
                (
                    "bash".into(),
                    json!({"command": "sleep 10; kubectl get pods"}),
                    (0..30)
                        .map(|k| format!("web-{k} {}\n", if k < i { "Running" } else { "Pending" }))
                        .collect(),
                )
            })
            .collect(),
    ];
    for (n, calls) in cases.iter().enumerate() {
        let f = findings(&format!("progress-{n}"), calls);
        assert!(f.is_empty(), "case {n}: {f:?}");
    }
}

#[test]
fn waiting_that_ends_is_not_blocked() {
    for (tool, args) in [
        ("process", json!({"action": "poll", "sessionId": "b"})),
        (
            "bash",
            json!({"command": "sleep 30; gh run view 42 --json status"}),
        ),
    ] {
        let calls: Vec<(String, Value, String)> = (0..9)
            .map(|i| {
                (
                    tool.to_owned(),
                    args.clone(),
                    if i < 8 { "running" } else { "completed" }.to_owned(),
                )
            })
            .collect();
        let f = findings("wait", &calls);
        assert!(f.is_empty(), "{tool}: {f:?}");
    }
}

#[test]
fn a_poll_that_never_changes_is_still_stopped() {
    let calls: Vec<(String, Value, String)> = (0..25)
        .map(|_| {
            (
                "bash".to_owned(),
                json!({"command": "sleep 30; gh run view 42 --json status"}),
                "in_progress".to_owned(),
            )
        })
        .collect();
    let f = findings("stuck-poll", &calls);
    let first_block = f.iter().find(|x| x["action"] == "block").expect("a block");
    // Line of the 20th call: 2 header lines, then 3 lines per call.
    assert_eq!(first_block["event"], 2 + 3 * 19 + 1, "{f:?}");
}
