//! The real `loopguard` binary: exit statuses and where messages go.
#![allow(clippy::unwrap_used)]

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loopguard"))
}

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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
