//! Text detectors on real code: this workspace's own Rust sources, concatenated in path
//! order and repeated to length, streamed as one assistant answer in 16-character deltas
//! through tail-periodicity and variation-loop (default settings), each alone and both
//! together, at 10 KB, 1 MB and 16 MB.
//!
//! `cargo xtask bench` (or `cargo bench -p loopguard-eval --bench text_code -- --warm-up-time 1
//! --measurement-time 3`).
#![allow(clippy::unwrap_used)] // bench code: a failed unwrap is a failed bench

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use loopguard::core::{Bus, Detector, Event, Stream};
use loopguard::tail_periodicity::TailPeriodicity;
use loopguard::variation_loop::VariationLoop;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The workspace's Rust sources, concatenated and cut (at a character boundary) to `bytes`.
fn code(bytes: usize) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    files.sort();
    let mut all = String::new();
    for f in &files {
        all.push_str(&std::fs::read_to_string(f).unwrap());
        all.push('\n');
    }
    assert!(!all.is_empty(), "no sources found under {}", root.display());
    let mut s = String::with_capacity(bytes + all.len());
    while s.len() < bytes {
        s.push_str(&all);
    }
    let mut cut = bytes;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

fn deltas(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest.char_indices().nth(16).map_or(rest.len(), |(i, _)| i);
        let (d, tail) = rest.split_at(cut);
        out.push(d);
        rest = tail;
    }
    out
}

type Make = fn() -> Vec<Box<dyn Detector>>;

fn tail() -> Vec<Box<dyn Detector>> {
    vec![Box::new(TailPeriodicity::new(Default::default()))]
}

fn variation() -> Vec<Box<dyn Detector>> {
    vec![Box::new(VariationLoop::new(Default::default()))]
}

fn both() -> Vec<Box<dyn Detector>> {
    let mut v = tail();
    v.extend(variation());
    v
}

/// Streams the message; returns the number of findings (0 on this code: nothing stops early).
fn stream(make: Make, parts: &[&str]) -> usize {
    let mut bus = Bus::new(make());
    let mut n = bus.observe(&Event::MessageStart).len();
    for d in parts {
        n += bus
            .observe(&Event::TextDelta {
                stream: Stream::Text,
                delta: d,
            })
            .len();
    }
    n + bus.observe(&Event::MessageEnd).len()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("text-detectors-on-code");
    for (label, bytes) in [
        ("10KB", 10_000usize),
        ("1MB", 1_000_000),
        ("16MB", 16_000_000),
    ] {
        let text = code(bytes);
        let parts = deltas(&text);
        g.throughput(Throughput::Bytes(text.len() as u64));
        for (name, make) in [
            ("tail-periodicity", tail as Make),
            ("variation-loop", variation as Make),
            ("both", both as Make),
        ] {
            assert_eq!(
                stream(make, &parts),
                0,
                "{name} fired on the workspace sources ({label}): the measurement would stop early"
            );
            g.bench_with_input(BenchmarkId::new(name, label), &parts, |b, parts| {
                b.iter(|| stream(make, parts));
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
