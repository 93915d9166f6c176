//! One `loopguard hook claude-code` invocation on a session already 1,000 tool calls long:
//! process start, configuration, state load, observe, state save, as Claude Code runs it.
//!
//! - `process/pre-tool-use`, `process/post-tool-use`: the real binary, spawned with the hook
//!   input on stdin; the session's state file is put back before each run, so every run
//!   sees the same 1,000-call session.
//! - `process/ignored-event`: an event loopguard does not look at (process start and input
//!   parsing only: the floor).
//! - `in-process/post-tool-use`: the same work without the process (`hook::handle`).
//!
//! - after criterion's figures, `latency`: the median and 90th percentile of the wall time of
//!   `LATENCY_RUNS` spawned invocations of each kind (the figures the latency goal is about;
//!   criterion reports means).
//!
//! `cargo bench -p loopguard-cli --bench hook -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use loopguard_cli::hook::protocol::Agent;
use loopguard_cli::hook::{handle, state_file, Context, RunArgs};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CALLS: usize = 1000;

/// Spawned invocations per kind for the median and 90th percentile.
const LATENCY_RUNS: usize = 200;

fn pre(i: usize) -> Value {
    json!({"session_id": "bench", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": {"file_path": format!("src/f{}.rs", i % 97)}, "tool_use_id": format!("toolu_{i}")})
}

fn post(i: usize) -> Value {
    let mut v = pre(i);
    v["hook_event_name"] = json!("PostToolUse");
    v["tool_response"] = json!({"type": "text", "file": {"filePath": format!("src/f{}.rs", i % 97),
        "content": format!("fn f{i}() {{}}\n{}", "// line\n".repeat(40))}});
    v
}

/// Writes a state directory holding a session of `CALLS` calls with their results (a prompt
/// every 25 calls); returns the state file's bytes.
fn session(dir: &Path) -> Vec<u8> {
    let cx = Context::from_args(&RunArgs {
        preset: None,
        config: None,
        state_dir: Some(dir.to_owned()),
    })
    .expect("default configuration");
    for i in 0..CALLS {
        if i % 25 == 0 {
            let prompt = json!({"session_id": "bench", "hook_event_name": "UserPromptSubmit", "prompt": format!("step {i}")});
            handle(Agent::ClaudeCode, prompt.to_string().as_bytes(), &cx).expect("prompt");
        }
        for v in [pre(i), post(i)] {
            handle(Agent::ClaudeCode, v.to_string().as_bytes(), &cx).expect("hook");
        }
    }
    std::fs::read(state_file(dir, Agent::ClaudeCode, "bench")).expect("state file")
}

fn spawn(dir: &Path, input: &[u8]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["hook", "claude-code", "--state-dir"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn loopguard");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).expect("write hook input");
    }
    let status = child.wait().expect("wait for loopguard");
    assert!(status.success(), "loopguard hook failed: {status}");
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("loopguard-hook-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let saved = session(&dir);
    let file = state_file(&dir, Agent::ClaudeCode, "bench");
    eprintln!("state file after {CALLS} calls: {} bytes", saved.len());
    // As a hook leaves it: a file written afresh, not one rewritten in place (on ext4,
    // truncating a file starts writing it back at once, which a session never does).
    let restore = || {
        let _ = std::fs::remove_file(&file);
        std::fs::write(&file, &saved).expect("restore state");
    };
    let next_pre = pre(CALLS).to_string().into_bytes();
    let next_post = post(CALLS).to_string().into_bytes();
    let ignored =
        json!({"session_id": "bench", "hook_event_name": "Notification", "message": "idle"})
            .to_string()
            .into_bytes();
    let mut g = c.benchmark_group("process");
    g.bench_function("pre-tool-use", |b| {
        b.iter_batched(
            restore,
            |()| spawn(&dir, &next_pre),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("post-tool-use", |b| {
        b.iter_batched(
            restore,
            |()| spawn(&dir, &next_post),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("ignored-event", |b| b.iter(|| spawn(&dir, &ignored)));
    g.finish();
    let cx = Context::from_args(&RunArgs {
        preset: None,
        config: None,
        state_dir: Some(dir.clone()),
    })
    .expect("default configuration");
    c.bench_function("in-process/post-tool-use", |b| {
        b.iter_batched(
            restore,
            |()| handle(Agent::ClaudeCode, &next_post, &cx).expect("hook"),
            BatchSize::PerIteration,
        )
    });
    if !latency_wanted() {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let runs: [(&str, &[u8]); 3] = [
        ("pre-tool-use", &next_pre),
        ("post-tool-use", &next_post),
        ("ignored-event", &ignored),
    ];
    for (name, input) in runs {
        let mut times: Vec<Duration> = (0..LATENCY_RUNS)
            .map(|_| {
                restore();
                let start = Instant::now();
                spawn(&dir, input);
                start.elapsed()
            })
            .collect();
        times.sort();
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        eprintln!(
            "latency/{name}: median {:.2} ms, p90 {:.2} ms ({LATENCY_RUNS} runs)",
            at(0.5).as_secs_f64() * 1e3,
            at(0.9).as_secs_f64() * 1e3,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether the latency runs were asked for: not under `--test` or `--list`, and only when no
/// benchmark filter is given or the filter names them (`latency`).
fn latency_wanted() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return false;
    }
    // A filter is an argument that is neither an option nor an option's value.
    let mut filter = None;
    let mut value_next = false;
    for a in &args {
        if value_next {
            value_next = false;
        } else if let Some(opt) = a.strip_prefix("--") {
            value_next = !opt.contains('=')
                && !matches!(opt, "bench" | "exact" | "quiet" | "verbose" | "noplot");
        } else {
            filter = Some(a.as_str());
        }
    }
    filter.is_none_or(|f| "latency".contains(f) || f.contains("latency"))
}

criterion_group!(benches, bench);
criterion_main!(benches);
