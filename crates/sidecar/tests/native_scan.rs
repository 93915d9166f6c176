//! The native session readers end to end: a Pi, a Claude Code and a Codex sample, each read
//! with its format's reader, replayed as events and watched by a guard with the default
//! preset, as `loopguard scan` does. The loops they contain are found; the loop-free Codex
//! samples draw nothing.

use loopguard::orchestrator::{Action, Guard};
use loopguard_transcript::formats::{claude_code, codex, pi, NativeTranscript};
use loopguard_transcript::{replay, Format, Transcript, DEFAULT_CHUNK};
use std::path::PathBuf;

fn fixture(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/native")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Reads `rel` with `format`'s reader and returns (line of each acting verdict, action,
/// number of findings).
fn scan(rel: &str, format: Format) -> (Vec<(usize, Action)>, usize) {
    let text = fixture(rel);
    let native: NativeTranscript = match format {
        Format::Pi => pi::read(&text),
        Format::ClaudeCode => claude_code::read(&text),
        _ => codex::read(&text),
    };
    assert!(native.issues.is_empty(), "{rel}: {:?}", native.issues);
    let t = Transcript {
        file: rel.to_owned(),
        format,
        lines: native.lines,
        entries: native.entries,
        issues: Vec::new(),
    };
    let mut guard = Guard::builder()
        .preset("default")
        .build()
        .expect("the default preset builds");
    let mut acted = Vec::new();
    let mut findings = 0;
    for (line, event) in replay(&t, DEFAULT_CHUNK) {
        let v = guard.observe(&event.as_event());
        findings += v.findings().len();
        if v.action() != Action::Continue {
            acted.push((line, v.action()));
        }
    }
    (acted, findings)
}

#[test]
fn loops_in_pi_claude_code_and_codex_samples_are_found() {
    for (rel, format) in [
        ("pi/repeated-read-loop.jsonl", Format::Pi),
        ("claude-code/repeated-test-loop.jsonl", Format::ClaudeCode),
        ("codex/repeated-test-run-loop.jsonl", Format::Codex),
    ] {
        let (acted, findings) = scan(rel, format);
        eprintln!("{rel}: {findings} findings, verdicts {acted:?}");
        assert!(findings > 0, "{rel}: the loop must be found");
        assert!(!acted.is_empty(), "{rel}: the guard must act on the loop");
    }
}

#[test]
fn loop_free_codex_samples_draw_nothing() {
    for rel in [
        "codex/fix-failing-test.jsonl",
        "codex/parallel-reads-and-compaction.jsonl",
    ] {
        let (acted, findings) = scan(rel, Format::Codex);
        assert_eq!((acted.len(), findings), (0, 0), "{rel}: {acted:?}");
    }
}
