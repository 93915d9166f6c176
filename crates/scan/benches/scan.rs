//! The scan engine against a serde_json parse-only baseline of the same file: the synthetic
//! stream of 100,000 tool call/result pairs (`loopguard_scan::synthetic`), one core.
//!
//! `cargo bench -p loopguard-scan --bench scan -- --warm-up-time 1 --measurement-time 3`
//! (or `cargo xtask bench`) prints criterion's figures, then each figure in MB/s beside the
//! baseline, as a ratio.
#![allow(clippy::unwrap_used)]

use criterion::{black_box, Criterion, Throughput};
use loopguard::orchestrator::resolve;
use loopguard::Config;
use loopguard_scan::{scan_reader, template, ScanOptions};
use loopguard_transcript::{Item, Records};
use std::time::{Duration, Instant};

const PAIRS: usize = 100_000;

fn stream() -> Vec<u8> {
    let mut v = Vec::new();
    loopguard_scan::synthetic::write_tool_stream(PAIRS, &mut v).unwrap();
    v
}

/// serde_json parsing every line into a `Value`, nothing else: the floor of any reader that
/// builds JSON trees.
fn parse_only(bytes: &[u8]) -> usize {
    let mut n = 0;
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        n += usize::from(v.is_object());
    }
    n
}

fn read_only(bytes: &[u8]) -> usize {
    let mut r = Records::new(bytes, "bench.jsonl");
    let mut n = 0;
    while let Some(i) = r.next_item().unwrap() {
        n += usize::from(matches!(i, Item::Entry(_)));
    }
    n
}

fn scan(bytes: &[u8], t: &loopguard::orchestrator::GuardTemplate) -> usize {
    let s = scan_reader(bytes, "bench.jsonl", t, &ScanOptions::default()).unwrap();
    s.session.findings.len()
}

fn median_secs(mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[2]
}

fn main() {
    let bytes = stream();
    let config = resolve(&Config::default()).unwrap();
    let t = template(&config).unwrap();
    assert_eq!(scan(&bytes, &t), 0, "the synthetic stream holds no loop");

    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    let mut g = c.benchmark_group("scan-100k-pairs");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("serde_json parse-only baseline", |b| {
        b.iter(|| parse_only(black_box(&bytes)))
    });
    g.bench_function("read records", |b| b.iter(|| read_only(black_box(&bytes))));
    g.bench_function("scan (default preset)", |b| {
        b.iter(|| scan(black_box(&bytes), &t))
    });
    g.finish();
    c.final_summary();

    let mb = bytes.len() as f64 / 1e6;
    let base = median_secs(|| {
        black_box(parse_only(&bytes));
    });
    let read = median_secs(|| {
        black_box(read_only(&bytes));
    });
    let full = median_secs(|| {
        black_box(scan(&bytes, &t));
    });
    println!("\n{PAIRS} pairs, {mb:.1} MB, one core, median of 5:");
    for (name, s) in [
        ("serde_json parse-only baseline", base),
        ("read records", read),
        ("scan (default preset)", full),
    ] {
        println!(
            "  {name:<32} {:>7.1} ms  {:>6.0} MB/s  {:>5.2}x the baseline's speed",
            s * 1e3,
            mb / s,
            base / s
        );
    }
}
