//! Text-path throughput: one assistant message of 10 KB, 1 MB and 16 MB streamed in 16-byte
//! deltas, through the exact engine (default settings) and, as the baseline, the seed's
//! algorithm (rescan every 200 characters over units 30..=min(3000, len/2)).
//!
//! `cargo bench -p loopguard-detect-tail-periodicity -- --warm-up-time 1 --measurement-time 3`
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use loopguard_core::{Cx, Detector, Event, Stream};
use loopguard_detect_tail_periodicity::{Settings, TailPeriodicity};

/// Deterministic prose-like text with no repeated block (so the detector never stops early).
fn text(bytes: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "parser",
        "returns",
        "a",
        "token",
        "stream",
        "while",
        "each",
        "handler",
        "checks",
        "its",
        "input",
        "against",
        "schema",
        "and",
        "logs",
        "result",
        "before",
        "writing",
        "cache",
        "entry",
        "for",
        "next",
        "request",
        "we",
        "measured",
        "latency",
        "under",
        "load",
        "with",
        "three",
        "workers",
        "queue",
        "depth",
        "grew",
        "slowly",
        "until",
        "backpressure",
        "kicked",
        "in",
        "so",
        "retry",
        "budget",
        "was",
        "never",
        "exhausted",
        "because",
        "timeouts",
        "stayed",
        "short",
        "configuration",
        "file",
        "lists",
        "every",
        "option",
        "default",
        "value",
        "tests",
        "cover",
        "edge",
        "cases",
        "like",
        "empty",
        "arrays",
        "nested",
        "tables",
        "unicode",
        "keys",
        "long",
        "strings",
        "fuzzer",
        "found",
        "crash",
        "lexer",
        "fixed",
        "it",
    ];
    let mut s = String::with_capacity(bytes + 64);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut sentence = 0u64;
    while s.len() < bytes {
        let n = 6 + next() % 14;
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
            if next() % 9 == 0 {
                s.push_str(&(next() % 1000).to_string());
            }
        }
        sentence += 1;
        s.push_str(if sentence % 5 == 0 { ".\n\n" } else { ". " });
    }
    s.truncate(bytes);
    s
}

fn stream(settings: &Settings, text: &str) -> usize {
    let mut d = TailPeriodicity::new(settings.clone());
    let mut findings = Vec::new();
    let mut cx = Cx::manual(0, &mut findings);
    d.observe(&Event::MessageStart, &mut cx);
    for piece in text.as_bytes().chunks(16) {
        // The text is ASCII: every 16-byte chunk is valid UTF-8.
        let delta = std::str::from_utf8(piece).unwrap_or("");
        d.observe(
            &Event::TextDelta {
                stream: Stream::Text,
                delta,
            },
            &mut cx,
        );
    }
    d.observe(&Event::MessageEnd, &mut cx);
    findings.len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("text-path");
    group.sample_size(10);
    for (label, size) in [
        ("10KB", 10_000usize),
        ("1MB", 1_000_000),
        ("16MB", 16_000_000),
    ] {
        let t = text(size);
        let exact = Settings::default();
        let seed = Settings::pi_repetition_guard();
        assert_eq!(stream(&exact, &t), 0, "the benchmark text must not fire");
        assert_eq!(stream(&seed, &t), 0, "the benchmark text must not fire");
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("exact", label), &t, |b, t| {
            b.iter(|| stream(&exact, t))
        });
        group.bench_with_input(BenchmarkId::new("seed-baseline", label), &t, |b, t| {
            b.iter(|| stream(&seed, t))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
