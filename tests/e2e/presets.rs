//! The orchestrator's "done when" scenarios, through `loopguard scan --format json --preset`:
//! the same verdicts at the same transcript lines as the library gives.

use crate::support::{loopguard, TempDir};
use serde_json::Value;

/// A transcript of `n` identical calls; with `compaction_after = Some(k)` a compaction line
/// follows the k-th result. Returns the text and, per call, (call line, result line).
fn transcript(
    tool: &str,
    args: &str,
    result: &str,
    is_error: bool,
    n: usize,
    compaction_after: Option<usize>,
) -> (String, Vec<(u64, u64)>) {
    let mut s = String::from(
        "{\"type\":\"session\",\"id\":\"p\"}\n{\"type\":\"user\",\"text\":\"Finish the task.\"}\n",
    );
    let mut line = 2u64;
    let mut lines = Vec::new();
    for i in 0..n {
        s.push_str("{\"type\":\"assistant\"}\n");
        s.push_str(&format!(
            "{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"tool\":\"{tool}\",\"args\":{args},\"batch\":{i}}}\n"
        ));
        s.push_str(&format!(
            "{{\"type\":\"tool_result\",\"id\":\"c{i}\",\"tool\":\"{tool}\",\"content\":{},\"is_error\":{is_error},\"images\":0}}\n",
            Value::String(result.to_owned())
        ));
        lines.push((line + 1, line + 2));
        line += 3;
        if compaction_after == Some(i + 1) {
            s.push_str("{\"type\":\"compaction\"}\n");
            line += 1;
        }
    }
    (s, lines)
}

/// (line, action) of every finding, first per line.
fn scan(preset: &str, text: &str) -> Vec<(u64, String, String)> {
    let dir = TempDir::new(&format!("preset-{preset}"));
    let path = dir.file("t.jsonl", text);
    let run = loopguard(&[
        "scan",
        "--format",
        "json",
        "--preset",
        preset,
        path.to_str().unwrap(),
    ]);
    assert!(run.code <= 1, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["preset"], preset);
    let mut out: Vec<(u64, String, String)> = Vec::new();
    for f in report["sessions"][0]["findings"].as_array().unwrap() {
        let item = (
            f["event"].as_u64().unwrap(),
            f["action"].as_str().unwrap().to_owned(),
            f["detector"].as_str().unwrap().to_owned(),
        );
        if out.last().map(|l| l.0) != Some(item.0) {
            out.push(item);
        }
    }
    out
}

fn actions(found: &[(u64, String, String)]) -> Vec<(u64, &str)> {
    found.iter().map(|(l, a, _)| (*l, a.as_str())).collect()
}

#[test]
fn pi_loop_guard_seven_identical_reads() {
    let (text, lines) = transcript(
        "read",
        r#"{"path":"src/lib.rs"}"#,
        "fn main() {}",
        false,
        7,
        None,
    );
    let found = scan("pi-loop-guard", &text);
    // Steer at the 3rd result, block at the 5th and 6th calls, abort at the 7th.
    let want = vec![
        (lines[2].1, "steer"),
        (lines[4].0, "block"),
        (lines[5].0, "block"),
        (lines[6].0, "abort"),
    ];
    assert_eq!(actions(&found), want, "{found:?}");
}

#[test]
fn openclaw_twenty_five_unchanged_polls() {
    let (text, lines) = transcript(
        "process",
        r#"{"action":"poll","sessionId":"s1"}"#,
        "still running",
        false,
        25,
        None,
    );
    let found = scan("openclaw", &text);
    // Nothing before the 11th call; a warning there; the critical block at the 21st.
    assert_eq!(
        found.first().map(|f| (f.0, f.1.as_str())),
        Some((lines[10].0, "steer")),
        "{found:?}"
    );
    assert_eq!(found[0].2, "known-poll-no-progress");
    let first_block = found.iter().find(|f| f.1 == "block").expect("a block");
    assert_eq!(first_block.0, lines[20].0, "{found:?}");
    assert_eq!(first_block.2, "known-poll-no-progress");
    assert!(
        found
            .iter()
            .all(|f| f.0 == lines[10].0 || f.0 >= lines[20].0),
        "{found:?}"
    );
}

#[test]
fn pi_repetition_guard_six_identical_calls_block_from_the_fourth() {
    let (text, lines) = transcript("bash", r#"{"command":"ls"}"#, "a.rs", false, 6, None);
    let found = scan("pi-repetition-guard", &text);
    let want = vec![
        (lines[3].0, "block"),
        (lines[4].0, "block"),
        (lines[5].0, "block"),
    ];
    assert_eq!(actions(&found), want, "{found:?}");
}

#[test]
fn openclaw_loop_persisting_after_a_compaction_aborts_at_the_third_result() {
    let (text, lines) = transcript(
        "exec",
        r#"{"command":"deploy --prod"}"#,
        "error: permission denied",
        true,
        5,
        Some(2),
    );
    let found = scan("openclaw", &text);
    assert_eq!(
        found.first().map(|f| (f.0, f.1.as_str(), f.2.as_str())),
        Some((lines[4].1, "abort", "post-compaction-guard")),
        "{found:?}"
    );
}

#[test]
fn every_preset_scans_the_examples() {
    for preset in [
        "default",
        "pi-loop-guard",
        "pi-repetition-guard",
        "openclaw",
    ] {
        let run = loopguard(&[
            "scan",
            "--format",
            "json",
            "--preset",
            preset,
            &crate::support::root()
                .join("examples")
                .display()
                .to_string(),
        ]);
        assert!(run.code <= 1, "{preset}: {}", run.stderr);
        assert_eq!(run.json()["preset"], preset);
    }
    let run = loopguard(&["scan", "--preset", "nonsense", "examples"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown preset `nonsense`"),
        "{}",
        run.stderr
    );
}
