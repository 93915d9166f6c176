//! The tool path end to end: every detector of the `default` preset on one guard, fed a mixed
//! stream of tool calls and results (distinct reads, progressing polls, repeated identical
//! calls, alternations, failing commands). Reports events per second.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use loopguard::core::OwnedEvent;
use loopguard::orchestrator::{preset, Guard};
use serde_json::json;

fn stream(n: usize) -> Vec<OwnedEvent> {
    let mut out = Vec::with_capacity(n * 4);
    out.push(OwnedEvent::User {
        text: "fix the failing test".into(),
        origin: Default::default(),
    });
    for i in 0..n {
        let (tool, args, result) = match i % 8 {
            0 | 1 => (
                "read",
                json!({"path": format!("src/f{}.rs", i % 97)}),
                format!("fn f{i}() {{}}"),
            ),
            2 => (
                "process",
                json!({"action": "poll", "sessionId": "s1"}),
                format!("line {i}"),
            ),
            3 => (
                "bash",
                json!({"command": "cargo test"}),
                "test result: FAILED. 1 failed".to_owned(),
            ),
            4 => (
                "grep",
                json!({"pattern": "todo", "path": "."}),
                "src/a.rs:3: todo".to_owned(),
            ),
            5 => (
                "read",
                json!({"path": "Cargo.toml"}),
                "[package]".to_owned(),
            ),
            6 => (
                "bash",
                json!({"command": format!("rg x{i}")}),
                String::new(),
            ),
            _ => (
                "edit",
                json!({"path": "src/a.rs", "old": "a", "new": format!("b{i}")}),
                "ok".to_owned(),
            ),
        };
        let id = format!("c{i}");
        out.push(OwnedEvent::MessageStart);
        out.push(OwnedEvent::MessageEnd);
        out.push(OwnedEvent::ToolCall {
            id: id.clone(),
            tool: tool.into(),
            args,
            batch: None,
        });
        out.push(OwnedEvent::ToolResult {
            id,
            tool: tool.into(),
            content: result,
            is_error: false,
            images: 0,
            details: None,
        });
    }
    out
}

fn bench(c: &mut Criterion) {
    let config = preset("default").expect("the default preset resolves");
    let events = stream(2_000);
    let mut group = c.benchmark_group("tool_path");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("default preset, all detectors", |b| {
        b.iter_batched(
            || {
                Guard::builder()
                    .config(config.clone())
                    .build()
                    .expect("the guard builds")
            },
            |mut guard| {
                for e in &events {
                    std::hint::black_box(guard.observe(&e.as_event()));
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
