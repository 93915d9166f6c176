//! Text detectors on real code: this workspace's own Rust sources (read at bench time),
//! concatenated in path order and repeated to length, streamed as one assistant answer in
//! 16-character deltas through tail-periodicity and variation-loop (default settings), each
//! alone and both together:
//!
//! - `10KB`: 10 KB messages, each iteration a different consecutive 10 KB slice of the
//!   sources (as a user's answers differ; one message repeated lets the processor learn its
//!   branches and measures one file only);
//! - `10KB-one`: the first 10 KB, the same message every iteration;
//! - `1MB`, `16MB`: one message of that length.
//!
//! `bus-only` streams the same messages through a bus without detectors: the cost of the bus
//! itself, under every other row. Each row streams all its messages through one bus, as a
//! session does: a message pays the detectors' per-message reset, not the construction of
//! the bus and its tables.
//!
//! Time is the thread's CPU time (`/proc/thread-self/schedstat`, wall time where that is
//! absent), so the figures are per core even on a loaded machine. After criterion's report a
//! table gives MB/s (10^6 bytes per second, median per-iteration time) and the 16 MB / 10 KB
//! ratio for each detector.
//!
//! `cargo xtask bench` (or `cargo bench -p loopguard-eval --bench text_code -- --warm-up-time 1
//! --measurement-time 3`).
#![allow(clippy::unwrap_used)] // bench code: a failed unwrap is a failed bench

use criterion::{black_box, criterion_group, BenchmarkId, Criterion, Throughput};
use loopguard::core::{Bus, Detector, Event, Stream};
use loopguard::tail_periodicity::TailPeriodicity;
use loopguard::variation_loop::VariationLoop;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// The workspace's Rust sources, concatenated in path order.
fn sources() -> String {
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
    all
}

/// Cuts `s` at the last character boundary at or before `at`.
fn cut(s: &str, at: usize) -> &str {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    &s[..at]
}

/// The sources repeated to length and cut (at a character boundary) to `bytes`.
fn code(all: &str, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + all.len());
    while s.len() < bytes {
        s.push_str(all);
    }
    let n = cut(&s, bytes).len();
    s.truncate(n);
    s
}

/// Consecutive slices of about `bytes` of `all` (cut at character boundaries).
fn slices(all: &str, bytes: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = all;
    while rest.len() >= bytes {
        let piece = cut(rest, bytes);
        out.push(piece);
        rest = &rest[piece.len()..];
    }
    out
}

/// The thread's CPU time so far, if the system tells it.
fn cpu_now() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// A clock of the thread's CPU time (wall time where CPU time is not available).
struct Clock(Option<Duration>, Instant);

impl Clock {
    fn start() -> Clock {
        Clock(cpu_now(), Instant::now())
    }

    fn elapsed(&self) -> Duration {
        match (self.0, cpu_now()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.1.elapsed(),
        }
    }
}

/// Per-iteration times recorded by the benchmarks: (detector, size) → (bytes, seconds).
static TIMES: Mutex<Vec<(String, String, f64, f64)>> = Mutex::new(Vec::new());

/// Criterion's samples per benchmark.
const SAMPLES: usize = 10;

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

/// No detector: what the bus itself costs per streamed byte (the floor under every row).
fn bus_only() -> Vec<Box<dyn Detector>> {
    Vec::new()
}

/// Streams one message through `bus` (which lives across messages, as in a session: each
/// message pays the detectors' per-message reset, not the bus's construction); returns the
/// number of findings (0 on this code: nothing stops early).
fn stream(bus: &mut Bus, parts: &[&str]) -> usize {
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
    let all = sources();
    let mut g = c.benchmark_group("text-detectors-on-code");
    let ten = slices(&all, 10_000);
    let ten_parts: Vec<Vec<&str>> = ten.iter().map(|t| deltas(t)).collect();
    let one = code(&all, 10_000);
    let mb = code(&all, 1_000_000);
    let big = code(&all, 16_000_000);
    let sets: Vec<(&str, Vec<Vec<&str>>)> = vec![
        ("10KB", ten_parts),
        ("10KB-one", vec![deltas(&one)]),
        ("1MB", vec![deltas(&mb)]),
        ("16MB", vec![deltas(&big)]),
    ];
    for (label, messages) in &sets {
        let bytes: usize = messages
            .iter()
            .map(|m| m.iter().map(|d| d.len()).sum::<usize>())
            .sum::<usize>()
            / messages.len();
        g.throughput(Throughput::Bytes(bytes as u64));
        for (name, make) in [
            ("tail-periodicity", tail as Make),
            ("variation-loop", variation as Make),
            ("both", both as Make),
            ("bus-only", bus_only as Make),
        ] {
            let id = BenchmarkId::new(name, label);
            let mut bus = Bus::new(make());
            for (i, parts) in messages.iter().enumerate() {
                assert_eq!(
                    stream(&mut bus, parts),
                    0,
                    "{name} fired on the workspace sources ({label}, message {i}): the measurement would stop early"
                );
            }
            g.bench_function(id, |b| {
                let mut next = 0usize;
                b.iter_custom(|iters| {
                    let mut done = 0usize;
                    let clock = Clock::start();
                    for _ in 0..iters {
                        let parts = &messages[next % messages.len()];
                        next += 1;
                        done += parts.iter().map(|d| d.len()).sum::<usize>();
                        black_box(stream(&mut bus, parts));
                    }
                    let t = clock.elapsed();
                    if let Ok(mut v) = TIMES.lock() {
                        v.push((
                            name.to_owned(),
                            (*label).to_owned(),
                            done as f64,
                            t.as_secs_f64(),
                        ));
                    }
                    t
                });
            });
        }
    }
    g.finish();
}

/// The median of `v` (0 when empty).
fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// MB/s per detector and size (median over the recorded samples), and the 16 MB / 10 KB
/// ratio.
fn summary() {
    let times = TIMES.lock().map(|v| v.clone()).unwrap_or_default();
    if times.is_empty() {
        return;
    }
    // Criterion runs the routine during its warm-up too (1, 2, 4, … iterations) before the
    // SAMPLES measured samples: only the last SAMPLES records of a benchmark are samples.
    let rate = |name: &str, label: &str| {
        let mine: Vec<&(String, String, f64, f64)> = times
            .iter()
            .filter(|t| t.0 == name && t.1 == label)
            .collect();
        let samples = mine
            .get(mine.len().saturating_sub(SAMPLES)..)
            .unwrap_or(&[]);
        median(
            samples
                .iter()
                .filter(|t| t.3 > 0.0)
                .map(|t| t.2 / t.3 / 1e6)
                .collect(),
        )
    };
    println!(
        "\ntext detectors on code, default settings, MB/s per core (10^6 bytes / CPU second):"
    );
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>9} {:>13}",
        "detector", "10KB", "10KB-one", "1MB", "16MB", "16MB / 10KB"
    );
    for name in ["tail-periodicity", "variation-loop", "both", "bus-only"] {
        let r: Vec<f64> = ["10KB", "10KB-one", "1MB", "16MB"]
            .iter()
            .map(|l| rate(name, l))
            .collect();
        let ratio = if r[0] > 0.0 && r[3] > 0.0 {
            format!("{:.2}", r[3] / r[0])
        } else {
            "-".to_owned()
        };
        let f = |x: f64| {
            if x > 0.0 {
                format!("{x:.1}")
            } else {
                "-".to_owned()
            }
        };
        println!(
            "{:<18} {:>9} {:>9} {:>9} {:>9} {:>13}",
            name,
            f(r[0]),
            f(r[1]),
            f(r[2]),
            f(r[3]),
            ratio
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(SAMPLES);
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
