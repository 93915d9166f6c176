//! `loopguard hook`: Claude Code sessions replayed as hook invocations agree with `loopguard
//! scan` of the same file; a looping session is steered, denied, then stopped; the state
//! survives concurrent invocations; install and uninstall round-trip a settings file.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_success, bin};
use loopguard::orchestrator::Action;
use loopguard_cli::hook::protocol::Agent;
use loopguard_cli::hook::{handle, state_file, Context, RunArgs};
use loopguard_transcript::{read_file, Record};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// `../shared` from the workspace root (`$LOOPGUARD_CORPUS/..` when set); `None` with a
/// note when absent, a failure under `CI=true`.
fn shared_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LOOPGUARD_CORPUS") {
        Some(c) => PathBuf::from(c).join(".."),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    if dir.join("native-sessions/claude-code").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "../shared is required under CI=true but was not found at {}",
        dir.display()
    );
    eprintln!(
        "note: {} not found; skipping the native-session replay",
        dir.display()
    );
    None
}

/// What a verdict set looks like on one line: (line, action) → detectors.
type Verdicts = BTreeMap<(usize, Action), BTreeSet<String>>;

/// The hook inputs Claude Code would have sent for a session file, each with the 0-based line
/// of the record it stands for: `UserPromptSubmit` per prompt (a `Stop` before it after agent
/// activity), `PreToolUse` per call, `PostToolUse` / `PostToolUseFailure` per result (the
/// recorded structured response, else the result text, as `tool_response`), `PreCompact` + `SessionStart(compact)` per
/// compaction, a final `Stop`. Calls whose `PreToolUse` was denied get no result, as in
/// Claude Code; `drive` decides that.
fn hook_inputs(path: &Path, session: &str) -> Vec<(usize, Value)> {
    let t = read_file(path).unwrap();
    // Claude Code keeps the structured response its hooks get (`tool_response`) beside the
    // result, as `toolUseResult`: use it where the file has it (an object), so the mapping of
    // structured responses to text is replayed too.
    let raw: Vec<Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect();
    let base = |event: &str| json!({"session_id": session, "transcript_path": path, "cwd": "/", "hook_event_name": event});
    let mut out = Vec::new();
    let mut args: HashMap<String, Value> = HashMap::new();
    let mut active = false;
    for e in &t.entries {
        let line = e.line;
        match &e.record {
            Record::User { text } => {
                if std::mem::take(&mut active) {
                    out.push((line, base("Stop")));
                }
                let mut v = base("UserPromptSubmit");
                v["prompt"] = json!(text);
                out.push((line, v));
            }
            Record::ToolCall {
                id, tool, args: a, ..
            } => {
                active = true;
                args.insert(id.clone(), a.clone());
                let mut v = base("PreToolUse");
                v["tool_name"] = json!(tool);
                v["tool_input"] = a.clone();
                v["tool_use_id"] = json!(id);
                out.push((line, v));
            }
            Record::ToolResult {
                id,
                tool,
                content,
                is_error,
                ..
            } => {
                active = true;
                let mut v = base(if *is_error {
                    "PostToolUseFailure"
                } else {
                    "PostToolUse"
                });
                v["tool_name"] = json!(tool);
                v["tool_input"] = args.get(id).cloned().unwrap_or_else(|| json!({}));
                v["tool_use_id"] = json!(id);
                if *is_error {
                    v["error"] = json!(content);
                } else {
                    let structured = raw
                        .get(line)
                        .map(|r| &r["toolUseResult"])
                        .filter(|r| r.is_object());
                    v["tool_response"] = structured.cloned().unwrap_or_else(|| json!(content));
                }
                out.push((line, v));
            }
            Record::Compaction => {
                out.push((line, base("PreCompact")));
                let mut v = base("SessionStart");
                v["source"] = json!("compact");
                out.push((line, v));
            }
            Record::Assistant { .. } => active = true,
            _ => {}
        }
    }
    if active {
        out.push((t.lines.saturating_sub(1), base("Stop")));
    }
    out
}

fn context(dir: &Path, preset: Option<&str>, config: Option<&Path>) -> Context {
    Context::from_args(&RunArgs {
        preset: preset.map(str::to_owned),
        config: config.map(Path::to_owned),
        state_dir: Some(dir.to_owned()),
    })
    .unwrap()
}

/// Replays `inputs` through `handle` (every recorded event is fed, as `scan` does).
fn replay_hooks(inputs: &[(usize, Value)], cx: &Context) -> Verdicts {
    let mut v = Verdicts::new();
    for (line, input) in inputs {
        let o = handle(Agent::ClaudeCode, input.to_string().as_bytes(), cx).unwrap();
        assert!(o.notes.is_empty(), "{:?}", o.notes);
        for s in o.verdicts {
            v.entry((*line, s.action))
                .or_default()
                .extend(s.detectors.iter().map(|d| d.to_string()));
        }
    }
    v
}

/// `loopguard scan --format json` of `path`: its tool-side verdicts (text findings, which
/// hooks never see, left out).
fn scan(path: &Path, preset: Option<&str>, config: Option<&Path>) -> Verdicts {
    let mut cmd = bin();
    cmd.args(["scan", "--format", "json", "--fail-on", "never"]);
    if let Some(p) = preset {
        cmd.args(["--preset", p]);
    }
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    let out = cmd.arg(path).output().unwrap();
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut v = Verdicts::new();
    for f in report["sessions"][0]["findings"].as_array().unwrap() {
        if !f["offset"].is_null() {
            continue;
        }
        let action: Action = match f["action"].as_str().unwrap() {
            "steer" => Action::Steer,
            "block" => Action::Block,
            "abort" => Action::Abort,
            "compact" => Action::Compact,
            other => panic!("{other}"),
        };
        v.entry((f["event"].as_u64().unwrap() as usize, action))
            .or_default()
            .insert(f["detector"].as_str().unwrap().to_owned());
    }
    v
}

/// A strict configuration so that the real sessions, which loop little, give verdicts too.
fn strict_config(dir: &Path) -> PathBuf {
    let p = dir.join("strict.toml");
    std::fs::write(
        &p,
        "[detectors.generic-repeat]\nwarn-threshold = 1\nblock-threshold = 2\n\n[detectors.unknown-tool]\nwarning-threshold = 1\ncritical-threshold = 2\n\n[detectors.ping-pong]\nwarning-threshold = 2\ncritical-threshold = 3\n",
    )
    .unwrap();
    p
}

#[test]
fn real_claude_code_sessions_replayed_as_hooks_agree_with_scan() {
    let Some(shared) = shared_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let strict = strict_config(dir.path());
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("native-sessions/claude-code"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    // And a session that loops until it is stopped, so that blocks and aborts are compared too.
    files.push(looping_session(dir.path(), 12));
    let mut with_verdicts = 0;
    for f in &files {
        for (preset, config) in [
            (None, None),
            (Some("pi-loop-guard"), None),
            (Some("openclaw"), None),
            (None, Some(strict.as_path())),
        ] {
            let state = tempfile::tempdir().unwrap();
            let cx = context(state.path(), preset, config);
            let hooks = replay_hooks(&hook_inputs(f, "real"), &cx);
            let scanned = scan(f, preset, config);
            assert_eq!(hooks, scanned, "{} {preset:?} {config:?}", f.display());
            with_verdicts += usize::from(!scanned.is_empty());
        }
    }
    assert!(
        with_verdicts > 0,
        "the strict configuration should give the replay something to agree on"
    );
}

/// A Claude Code session that runs the same failing build again and again, in Claude Code's
/// own session format.
fn looping_session(dir: &Path, calls: usize) -> PathBuf {
    let mut lines = vec![
        json!({"type":"user","sessionId":"loop-1","isSidechain":false,"message":{"role":"user","content":"Make the build pass."}}),
    ];
    for i in 0..calls {
        lines.push(json!({"type":"assistant","isSidechain":false,"message":{"id":format!("msg_{i}"),"role":"assistant","content":[
            {"type":"text","text":"Let me build it again."},
            {"type":"tool_use","id":format!("toolu_{i}"),"name":"Bash","input":{"command":"cargo build","description":"Build"}}]}}));
        lines.push(json!({"type":"user","isSidechain":false,"message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":format!("toolu_{i}"),"content":"error[E0425]: cannot find value `x` in this scope","is_error":true}]}}));
    }
    let p = dir.join("looping.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&p, text.join("\n") + "\n").unwrap();
    p
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn hook_process(state: &Path, preset: &str, input: &Value) -> Run {
    let mut child = bin()
        .args(["hook", "claude-code", "--preset", preset, "--state-dir"])
        .arg(state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn a_looping_session_is_steered_denied_at_the_scanned_call_then_stopped() {
    for preset in ["default", "pi-loop-guard"] {
        let dir = tempfile::tempdir().unwrap();
        let file = looping_session(dir.path(), 12);
        let scanned = scan(&file, Some(preset), None);
        let first_block = scanned
            .keys()
            .find(|(_, a)| *a == Action::Block)
            .map(|(l, _)| *l)
            .unwrap_or_else(|| panic!("{preset}: scan finds no block: {scanned:?}"));
        let abort_after = loopguard_cli::load_config(None, Some(preset))
            .unwrap()
            .guard["abort-after-blocks"]
            .as_integer()
            .unwrap() as usize;
        // Drive the real binary as Claude Code would: a denied call never runs (no
        // PostToolUse), and `continue: false` ends the session.
        let state = dir.path().join("state");
        let mut denied_lines = Vec::new();
        let mut steered = false;
        let mut stopped = None;
        let mut skip: Option<String> = None;
        for (line, input) in hook_inputs(&file, "loop-1") {
            let event = input["hook_event_name"].as_str().unwrap().to_owned();
            let is_result = event == "PostToolUse" || event == "PostToolUseFailure";
            if is_result && skip.as_deref() == input["tool_use_id"].as_str() {
                continue;
            }
            let r = hook_process(&state, preset, &input);
            assert_eq!(r.code, Some(0), "{preset}: {}", r.stderr);
            if r.stdout.trim().is_empty() {
                continue;
            }
            let out: Value = serde_json::from_str(&r.stdout).unwrap();
            let h = &out["hookSpecificOutput"];
            if h["additionalContext"].is_string() {
                assert_eq!(h["hookEventName"], event.as_str());
                assert_ne!(event, "PreToolUse");
                steered = true;
            }
            if h["permissionDecision"] == "deny" {
                assert!(h["permissionDecisionReason"]
                    .as_str()
                    .unwrap()
                    .contains("[loopguard "));
                denied_lines.push(line);
                skip = input["tool_use_id"].as_str().map(str::to_owned);
            }
            if out["continue"] == false {
                let reason = out["stopReason"].as_str().unwrap();
                assert!(
                    reason.contains("loop_aborted:") || reason.contains("loop"),
                    "{reason}"
                );
                stopped = Some(line);
                break;
            }
        }
        assert!(steered, "{preset}: the model was never steered");
        assert_eq!(
            denied_lines.first(),
            Some(&first_block),
            "{preset}: the first denial is the call scan blocks first"
        );
        // The preset's number of blocks: the last one is the abort that stops the session.
        assert_eq!(
            denied_lines.len(),
            abort_after,
            "{preset}: {denied_lines:?}"
        );
        assert_eq!(stopped, denied_lines.last().copied(), "{preset}");
    }
}

#[test]
fn concurrent_invocations_of_one_session_lose_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let n = 8;
    let children: Vec<_> = (0..n)
        .map(|i| {
            let input = json!({"session_id": "par", "hook_event_name": "PreToolUse", "tool_name": "Read",
                "tool_input": {"file_path": format!("src/f{i}.rs")}, "tool_use_id": format!("t{i}")});
            let mut c = bin()
                .args(["hook", "claude-code", "--state-dir"])
                .arg(&state)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin
                .take()
                .unwrap()
                .write_all(input.to_string().as_bytes())
                .unwrap();
            c
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_success(&out);
    }
    let file = state_file(&state, Agent::ClaudeCode, "par");
    let saved: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    // SessionStart, RunStart, then every call.
    assert_eq!(saved["guard"]["bus"]["bus"]["seq"], json!(2 + n), "{saved}");
}

#[test]
fn a_bad_input_is_a_non_blocking_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = hook_process(
        dir.path(),
        "default",
        &json!({"hook_event_name": "PreToolUse"}),
    );
    // Exit 2 would make Claude Code block the call; loopguard's own failure must not.
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("session_id"), "{}", r.stderr);
    // A mistyped hook command is not a "block" either.
    let out = bin()
        .args(["hook", "claude-code", "--no-such-flag"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // An event loopguard does not look at prints nothing and writes no state.
    let r = hook_process(
        dir.path(),
        "default",
        &json!({"session_id": "n", "hook_event_name": "Notification", "message": "hi"}),
    );
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), ""));
    assert!(!state_file(dir.path(), Agent::ClaudeCode, "n").exists());
}

fn loopguard(args: &[&str]) -> (i32, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn install_and_uninstall_round_trip_a_settings_file_with_other_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = json!({
        "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
        "hooks": {
            "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write \"$FILE\""}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
        },
        "env": {"FOO": "1"}
    });
    let text = serde_json::to_string_pretty(&original).unwrap();
    std::fs::write(&settings, &text).unwrap();
    let s = settings.to_str().unwrap();
    let cmd = "/opt/bin/loopguard hook claude-code";

    let install = |extra: &[&str]| {
        let mut args = vec![
            "hook",
            "install",
            "claude-code",
            "--settings",
            s,
            "--command",
            cmd,
        ];
        args.extend_from_slice(extra);
        loopguard(&args)
    };
    let (code, out) = install(&["--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("would become"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        text,
        "--dry-run wrote"
    );

    let (code, out) = install(&[]);
    assert_eq!(code, 0, "{out}");
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for event in [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Stop",
        "PreCompact",
        "SessionStart",
    ] {
        let groups = installed["hooks"][event].as_array().unwrap();
        assert!(
            groups.iter().any(|g| g["hooks"][0]["command"] == cmd),
            "{event}: {installed}"
        );
    }
    assert_eq!(
        installed["hooks"]["PostToolUse"][0],
        original["hooks"]["PostToolUse"][0]
    );
    assert_eq!(installed["permissions"], original["permissions"]);
    let backup = dir.path().join(".claude/settings.json.loopguard-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);

    // Idempotent.
    let before = std::fs::read_to_string(&settings).unwrap();
    let (code, out) = install(&[]);
    assert_eq!(code, 0);
    assert!(out.contains("nothing to change"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);

    let (code, out) = loopguard(&["hook", "uninstall", "claude-code", "--settings", s]);
    assert_eq!(code, 0, "{out}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(after, original);
    let (_, out) = loopguard(&["hook", "uninstall", "claude-code", "--settings", s]);
    assert!(out.contains("nothing to change"), "{out}");

    // Not JSON: refused, untouched.
    std::fs::write(&settings, "{ nope").unwrap();
    let (code, out) = install(&[]);
    assert_eq!(code, 2);
    assert!(out.contains("not valid JSON"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ nope");
}

#[test]
fn project_scope_edits_the_project_settings() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "hook",
            "install",
            "claude-code",
            "--project",
            "--command",
            "loopguard hook claude-code",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_success(&out);
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "loopguard hook claude-code"
    );
    let out = bin()
        .args(["hook", "install", "claude-code", "--user", "--project"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--user and --project conflict");
}
