//! The real `loopguard` binary: exit statuses and where messages go.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_success, bin};

fn temp(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("loopguard-cli-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn exit_statuses_are_0_and_2_from_the_process() {
    let ok = temp(
        "ok.jsonl",
        "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"user\",\"text\":\"hello\"}\n",
    );
    let out = bin()
        .args(["scan", "--format", "json"])
        .arg(&ok)
        .output()
        .unwrap();
    assert_success(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["events"], 2);

    let bad = temp("bad.jsonl", "{\"type\":\"session\",\"id\":\"s\"}\n{oops}\n");
    let out = bin().arg("scan").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2: invalid JSON", bad.display())),
        "{err}"
    );

    let out = bin().args(["scan", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(ok.parent().unwrap());
}

/// A bad line in a loopguard transcript is reported (`FILE:LINE: message`) and skipped: the
/// lines after it are still judged, and the status is 2 (docs/contracts/transcript.md, Errors).
#[test]
fn scan_reports_each_bad_line_and_judges_the_rest() {
    let mut text = String::from(
        "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"user\",\"text\":\"Fix the build.\"}\n{\"type\":\"tool_call\",\"id\":\"c0\",\"tool\":\"bash\",\"args\":{\"command\":\"cargo build\"}\n{\"type\":\"session\",\"id\":\"t\"}\n",
    );
    for i in 1..=6 {
        text.push_str(&format!(
            "{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"tool\":\"bash\",\"args\":{{\"command\":\"cargo build\"}}}}\n{{\"type\":\"tool_result\",\"id\":\"c{i}\",\"tool\":\"bash\",\"content\":\"error[E0425]: cannot find value `x` in this scope\",\"is_error\":true,\"images\":0}}\n"
        ));
    }
    // Its own file: another test removes `temp`'s folder when it ends.
    let bad = std::env::temp_dir().join(format!(
        "loopguard-cli-mid-bad-{}.jsonl",
        std::process::id()
    ));
    std::fs::write(&bad, &text).unwrap();
    let out = bin()
        .args(["scan", "--format", "json"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:3: ", bad.display())), "{err}");
    assert!(
        err.contains(&format!(
            "{}:4: a `session` line may only be the first line",
            bad.display()
        )),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["sessions"][0]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["action"] == "block"),
        "the repeated failing build after the bad lines is still judged: {findings:?}"
    );
    let _ = std::fs::remove_file(&bad);
}

/// `loopguard scan` with no path finds the Claude Code and Codex session folders under
/// `HOME`, says what it found, and scans them; `--since` filters by modification time.
#[test]
fn scan_without_a_path_finds_the_agents_session_folders() {
    let home = std::env::temp_dir().join(format!("loopguard-cli-home-{}", std::process::id()));
    let project = home.join(".claude/projects/-work-demo");
    let codex = home.join(".codex/sessions/2026/01/02");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&codex).unwrap();
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/native");
    let pick = |agent: &str| {
        std::fs::read_dir(fixtures.join(agent))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .unwrap()
    };
    std::fs::copy(pick("claude-code"), project.join("s1.jsonl")).unwrap();
    std::fs::copy(
        pick("codex"),
        codex.join("rollout-2026-01-02T00-00-00-x.jsonl"),
    )
    .unwrap();
    let scan = |extra: &[&str]| {
        bin()
            .args(["scan", "--format", "json", "--fail-on", "never"])
            .args(extra)
            .env("HOME", &home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("PI_CODING_AGENT_DIR")
            .output()
            .unwrap()
    };
    let out = scan(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("Claude Code: 1 sessions in"), "{err}");
    assert!(err.contains("Codex: 1 sessions in"), "{err}");
    assert!(err.contains("Pi: no "), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let formats: Vec<&str> = report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["claude-code", "codex"]);

    // Files older than --since are left out.
    let out = scan(&["--since", "2999-01-01"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["sessions"], 0);

    // CODEX_HOME moves Codex's folder.
    let out = bin()
        .args(["scan", "--format", "json"])
        .env("HOME", &home)
        .env("CODEX_HOME", home.join("nowhere"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Codex: no "), "{err}");

    // Nothing found at all is an error that says what to do.
    let empty = home.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = bin()
        .arg("scan")
        .env("HOME", &empty)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&home);
}
