//! Events per second through a bus holding `generic-repeat`, on a mixed tool stream
//! (distinct reads, a repeating loop, polling with changing output, parallel batches).
//! `bus-only` is the same stream through an empty bus: the difference is the detector.
//! `near-duplicate-8k` feeds the same call with 8 KB results that grow by one line each
//! time (the near-duplicate rule's worst case: every result is sketched in full).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use loopguard_core::{Bus, Detector, OwnedEvent};
use loopguard_detect_generic_repeat::{GenericRepeat, Settings};
use loopguard_testkit::Script;
use serde_json::json;

fn stream() -> Vec<OwnedEvent> {
    let mut s = Script::new();
    for turn in 0..20 {
        s.user(&format!("task {turn}"));
        for i in 0..25 {
            match i % 5 {
                0 => s.call(
                    "read",
                    json!({"path": format!("src/f{turn}_{i}.rs"), "limit": 200}),
                    "fn main() {}\n",
                ),
                1 => s.call(
                    "bash",
                    json!({"command": "cargo test", "timeout": 60}),
                    "test result: FAILED",
                ),
                2 => s.call(
                    "bash",
                    json!({"command": "tail -n 3 log"}),
                    &format!("line {i}"),
                ),
                3 => s.batch(&[
                    (
                        "grep",
                        json!({"pattern": "todo", "path": "src"}),
                        "src/a.rs:1: todo",
                    ),
                    (
                        "read",
                        json!({"path": "Cargo.toml"}),
                        "[package]\nname = \"x\"",
                    ),
                ]),
                _ => s.call(
                    "edit",
                    json!({"path": "src/lib.rs", "old": format!("a{i}"), "new": format!("b{i}")}),
                    "ok",
                ),
            };
        }
    }
    s.into_events()
}

fn feed(detectors: Vec<Box<dyn Detector>>, events: &[OwnedEvent]) -> usize {
    let mut bus = Bus::new(detectors);
    let mut n = 0;
    for e in events {
        n += bus.observe(&e.as_event()).len();
    }
    n
}

fn bench(c: &mut Criterion) {
    let events = stream();
    let all: toml::Table =
        "openclaw = { enabled = true }\nwindow = { size = 8, threshold = 4 }\nnear-duplicate = {}"
            .parse()
            .expect("toml");
    let all = Settings::from_table(&all).expect("settings");
    let runs = [("default", Settings::default()), ("all-rules", all)];
    group(c, "generic-repeat", &events, &runs);

    let large = large_results();
    let near: toml::Table = "near-duplicate = { critical-threshold = 0 }"
        .parse()
        .expect("toml");
    let near = Settings::from_table(&near).expect("settings");
    group(
        c,
        "generic-repeat-large",
        &large,
        &[("near-duplicate-8k", near)],
    );
}

/// A benchmark group over `events`: the bus alone (`bus-only`), then one benchmark a named
/// setting, each feeding a fresh detector.
fn group(c: &mut Criterion, name: &str, events: &[OwnedEvent], runs: &[(&str, Settings)]) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("bus-only", |b| b.iter(|| feed(vec![], events)));
    for (id, settings) in runs {
        g.bench_function(*id, |b| {
            b.iter(|| feed(vec![Box::new(GenericRepeat::new(settings.clone()))], events))
        });
    }
    g.finish();
}

/// 100 calls of one edit whose 8 KB result grows by one line each time.
fn large_results() -> Vec<OwnedEvent> {
    let mut s = Script::new();
    let mut text: String = (0..100)
        .map(|i| format!("{i}: let value_{i} = compute(input_{i}, {});\n", i * 7))
        .collect();
    for i in 0..100 {
        text.push_str(&format!("{i}: // appended\n"));
        let tail = text.len().saturating_sub(8192);
        s.call("edit", json!({"command": "edit 1:1"}), &text[tail..]);
    }
    s.into_events()
}

criterion_group!(benches, bench);
criterion_main!(benches);
