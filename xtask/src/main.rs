//! `cargo xtask`: the project's own automation, with no dependencies.
//!
//! - `cargo xtask ci`: fmt --check, clippy -D warnings on all targets, every test and doc test,
//!   the evaluation gate in check mode, the Pi package's checks when node is present
//!   (`npm ci`, `tsc` against Pi's types, `node --test`, which loads it in Pi's own CLI), and
//!   the Python and Node packages in `bindings/` (built with maturin and @napi-rs/cli, then
//!   pytest and `node --test`; `.ci/run` installs their tools).
//! - `cargo xtask eval [--preset P] [--check]`: corpus evaluation (see docs/evaluation.md).
//! - `cargo xtask docs [--check]`: writes (checks) the tables generated from the detector
//!   registry: each detector README's option table, the detector tables of README.md and
//!   docs/detectors/README.md and the facade README's feature table; also checks that every
//!   detector documents exactly the option keys it accepts (the `loopguard` crate's
//!   `registry_docs` example does the work, linked with every detector).
//! - `cargo xtask bindings`: only the `bindings/` part of `ci`.
//! - `cargo xtask fuzz-smoke [SECONDS [JOBS [TARGET...]]]`: runs every fuzz target (or the named ones) for SECONDS, JOBS at a time,
//!   and prints executions and crashes per target (needs nightly and cargo-fuzz).
//! - `cargo xtask bench [FILTER]`: short criterion runs: the scan benchmark (100,000 tool
//!   call/result pairs, one core) beside a serde_json parse-only baseline of the same stream,
//!   as a ratio; the whole `loopguard scan` process on that stream (release binary, one
//!   thread); the text detectors on real code (`loopguard-eval`'s `text_code` bench).
//! - `cargo xtask gen-stream N OUT`: writes that synthetic stream with N pairs to OUT.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("eval") => eval(&args[1..]),
        Some("docs") => docs(&args[1..]),
        Some("bindings") => bindings(),
        Some("fuzz-smoke") => fuzz_smoke(
            args.get(1).map(String::as_str),
            args.get(2).map(String::as_str),
            args.get(3..).unwrap_or_default(),
        ),
        Some("bench") => bench(&args[1..]),
        Some("gen-stream") => gen_stream(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci | eval [--preset P] [--check] | docs [--check] | bindings | fuzz-smoke [SECONDS [JOBS [TARGET...]]] | bench [FILTER] | gen-stream N OUT>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    let dir = env::var("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        // Run directly (not through cargo): the directory it was built from.
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.parent().map(Path::to_path_buf).unwrap_or(dir)
}

fn cargo() -> Command {
    let mut c = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    c.current_dir(root());
    c
}

fn run(step: &str, mut cmd: Command) -> Result<(), String> {
    eprintln!("==> {step}");
    let status = cmd
        .status()
        .map_err(|e| format!("{step}: cannot start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})"))
    }
}

fn ci() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    run("cargo clippy -D warnings", clippy)?;

    let mut test = cargo();
    test.args(["test", "--workspace"]);
    run("cargo test (unit, integration and doc tests)", test)?;

    // Alone, so that Cargo's feature unification cannot link more detectors into it: proves
    // that one facade feature links exactly one detector.
    let mut one = cargo();
    one.args(["test", "-p", "loopguard-facade-feature-test"]);
    run("facade with one feature links exactly one detector", one)?;

    // The fuzz targets are their own workspace (cargo-fuzz); they must keep compiling against
    // the detectors' APIs even where the fuzzer itself (nightly) is not run.
    let mut fuzz = cargo();
    fuzz.args(["check", "--manifest-path", "fuzz/Cargo.toml", "--bins"]);
    run("fuzz targets compile", fuzz)?;

    if root().join("docs/evaluation.md").exists() {
        eval(&["--check".to_owned()])?;
    }

    docs(&["--check".to_owned()])?;

    let pi = root().join("integrations/pi");
    if pi.exists() {
        if Command::new("node").arg("--version").output().is_ok() {
            let mut build = cargo();
            build.args(["build", "-p", "loopguard-cli"]);
            run("build the sidecar for the Pi integration tests", build)?;
            // Pi's own published packages (its extension loader and ExtensionAPI types) and
            // TypeScript, pinned by package-lock.json.
            let mut npm = Command::new("npm");
            npm.current_dir(&pi).args(["ci", "--no-audit", "--no-fund"]);
            run("npm ci in integrations/pi (Pi and TypeScript)", npm)?;
            let mut tsc = Command::new("node");
            tsc.current_dir(&pi)
                .args(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"]);
            run("tsc: the Pi extension against Pi's ExtensionAPI types", tsc)?;
            let mut node = Command::new("node");
            node.current_dir(root())
                .args(["--test", "integrations/pi/"]);
            let target = env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| root().join("target"));
            node.env("LOOPGUARD_BIN", target.join("debug/loopguard"));
            run("node --test integrations/pi/", node)?;
        } else if env::var("CI").as_deref() == Ok("true") {
            return Err("node is required under CI for integrations/pi".to_owned());
        } else {
            eprintln!("==> node not found: skipping integrations/pi tests");
        }
    }
    bindings()?;
    eprintln!("==> ci: all green");
    Ok(())
}

/// Builds and tests the language packages in `bindings/` (their own Cargo workspace): fmt,
/// clippy and unit tests of the binding crates; the Python package installed with pip into
/// the virtual environment `LOOPGUARD_PYTHON` belongs to (maturin and pytest in it), then
/// pytest; the Node addon built with `@napi-rs/cli` from `bindings/node/node_modules`, the
/// TypeScript example compiled with `tsc`, then `node --test`. Missing tools skip a part,
/// except under `CI=true`, where they fail.
fn bindings() -> Result<(), String> {
    let dir = root().join("bindings");
    if !dir.join("Cargo.toml").exists() {
        return Ok(());
    }
    let ci = env::var("CI").as_deref() == Ok("true");
    let missing = |what: &str| -> Result<(), String> {
        if ci {
            Err(format!("{what} is required under CI (.ci/run installs it)"))
        } else {
            eprintln!("==> {what} not found: skipping it");
            Ok(())
        }
    };
    let manifest = dir.join("Cargo.toml");
    let manifest = manifest.to_string_lossy().into_owned();

    let python = env::var_os("LOOPGUARD_PYTHON").map(PathBuf::from);
    let venv_bin = python
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    let has_python_tools = venv_bin
        .as_deref()
        .is_some_and(|b| b.join("maturin").exists() && b.join("pytest").exists());

    let mut fmt = cargo();
    fmt.args([
        "fmt",
        "--manifest-path",
        &manifest,
        "--all",
        "--",
        "--check",
    ]);
    run("cargo fmt --check (bindings)", fmt)?;
    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--manifest-path",
        &manifest,
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    if let Some(py) = &python {
        clippy.env("PYO3_PYTHON", py);
    }
    run("cargo clippy -D warnings (bindings)", clippy)?;
    let mut unit = cargo();
    unit.args([
        "test",
        "--manifest-path",
        &manifest,
        "-p",
        "loopguard-bindings",
    ]);
    run("cargo test (bindings/common)", unit)?;

    match (&python, &venv_bin) {
        (Some(py), Some(bin)) if has_python_tools => {
            let path = env::var_os("PATH").unwrap_or_default();
            let mut paths = vec![bin.clone()];
            paths.extend(env::split_paths(&path));
            let path = env::join_paths(paths).map_err(|e| format!("PATH: {e}"))?;
            let mut install = Command::new(py);
            install
                .current_dir(root())
                .env("PATH", &path)
                .args(["-m", "pip", "install", "--quiet", "--no-build-isolation"])
                .args(["--force-reinstall", "--no-deps", "bindings/python"]);
            run("pip install bindings/python (maturin)", install)?;
            let mut pytest = Command::new(py);
            pytest
                .current_dir(root().join("bindings/python"))
                .args(["-m", "pytest", "-q"]);
            run("pytest bindings/python", pytest)?;
        }
        _ => missing("LOOPGUARD_PYTHON (a virtual environment with maturin and pytest)")?,
    }

    let node_dir = dir.join("node");
    let tools = node_dir.join("node_modules/.bin");
    if Command::new("node").arg("--version").output().is_ok()
        && tools.join("napi").exists()
        && tools.join("tsc").exists()
    {
        let mut napi = Command::new(tools.join("napi"));
        napi.current_dir(&node_dir).args([
            "build",
            "--platform",
            "--release",
            "--no-js",
            "--dts",
            "native.d.ts",
        ]);
        run("napi build bindings/node", napi)?;
        let mut tsc = Command::new(tools.join("tsc"));
        tsc.current_dir(&node_dir).args(["-p", "."]);
        run("tsc -p bindings/node (the TypeScript example)", tsc)?;
        let mut test = Command::new("node");
        test.current_dir(&node_dir).args(["--test", "test/"]);
        run("node --test bindings/node", test)?;
    } else {
        missing("node with bindings/node/node_modules (npm ci)")?;
    }
    Ok(())
}

fn docs(args: &[String]) -> Result<(), String> {
    let check = args.iter().any(|a| a == "--check");
    if let Some(other) = args.iter().find(|a| *a != "--check") {
        return Err(format!(
            "docs: unknown argument `{other}` (expected --check)"
        ));
    }
    let mut c = cargo();
    c.args([
        "run",
        "--quiet",
        "-p",
        "loopguard",
        "--example",
        "registry_docs",
        "--",
    ]);
    c.arg(root());
    if check {
        c.arg("--check");
    }
    run(
        if check {
            "docs generated from the registry are current"
        } else {
            "generate docs from the registry"
        },
        c,
    )
}

fn eval(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--release", "-p", "loopguard-eval", "--"]);
    cmd.args(args);
    run("corpus evaluation", cmd)
}

fn bench(args: &[String]) -> Result<(), String> {
    let mut scan = cargo();
    scan.env("RAYON_NUM_THREADS", "1").args([
        "bench",
        "-p",
        "loopguard-scan",
        "--bench",
        "scan",
        "--",
        "--warm-up-time",
        "1",
        "--measurement-time",
        "3",
    ]);
    scan.args(args);
    run("scan benchmark", scan)?;
    whole_process_scan()?;
    let mut cmd = cargo();
    cmd.args([
        "bench",
        "-p",
        "loopguard-eval",
        "--bench",
        "text_code",
        "--",
        "--warm-up-time",
        "1",
        "--measurement-time",
        "3",
    ]);
    cmd.args(args);
    run("text detectors on real code (criterion)", cmd)
}

/// The whole `loopguard scan --format json` process on the 100,000-pair stream, one thread:
/// the release binary, median wall time of 3 runs.
fn whole_process_scan() -> Result<(), String> {
    let mut build = cargo();
    build.args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "loopguard-cli",
        "--bin",
        "loopguard",
    ]);
    run("build the release binary", build)?;
    let stream = env::temp_dir().join(format!("loopguard-bench-{}.jsonl", std::process::id()));
    gen_stream(&["100000".to_owned(), stream.to_string_lossy().into_owned()])?;
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let bin = target.join("release/loopguard");
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let out = Command::new(&bin)
            .env("RAYON_NUM_THREADS", "1")
            .args(["scan", "--format", "json"])
            .arg(&stream)
            .output()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        times.push(t.elapsed().as_secs_f64());
        if !out.status.success() {
            let _ = std::fs::remove_file(&stream);
            return Err(format!("loopguard scan failed ({})", out.status));
        }
    }
    let bytes = std::fs::metadata(&stream).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&stream);
    times.sort_by(f64::total_cmp);
    let s = times[1];
    println!(
        "whole process, RAYON_NUM_THREADS=1 loopguard scan --format json (100000 pairs, {:.1} MB): {:.0} ms median of 3, {:.0} MB/s",
        bytes as f64 / 1e6,
        s * 1e3,
        bytes as f64 / 1e6 / s
    );
    Ok(())
}

fn gen_stream(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "loopguard-scan",
        "--example",
        "gen-stream",
        "--",
    ]);
    cmd.args(args);
    run("gen-stream", cmd)
}

/// The fuzz campaign: every target (or the `only` ones) for `seconds` (default 10), `jobs`
/// targets at a time (default 1), starting from the seeds in `fuzz/corpus/<target>/` (read only; what the fuzzer
/// finds goes to `fuzz/target/campaign/<target>/`), then a table of executions, executions per
/// second and crashes per target. Without AddressSanitizer (`-s none`): the workspace forbids
/// `unsafe` code (`[workspace.lints.rust]`), and the sanitizer makes each execution about ten
/// times slower.
fn fuzz_smoke(seconds: Option<&str>, jobs: Option<&str>, only: &[String]) -> Result<(), String> {
    let secs: u64 = seconds
        .unwrap_or("10")
        .parse()
        .map_err(|_| "fuzz-smoke: SECONDS must be a whole number".to_owned())?;
    let jobs: usize = jobs
        .unwrap_or("1")
        .parse()
        .ok()
        .filter(|&j| j > 0)
        .ok_or_else(|| "fuzz-smoke: JOBS must be a positive whole number".to_owned())?;
    let fuzz = root().join("fuzz");
    let list = Command::new("cargo")
        .current_dir(&fuzz)
        .args(["+nightly", "fuzz", "list"])
        .output()
        .map_err(|e| format!("cargo fuzz: {e}"))?;
    if !list.status.success() {
        return Err(
            "`cargo +nightly fuzz list` failed: install with `cargo install cargo-fuzz`".to_owned(),
        );
    }
    // Build once, so that the parallel runs below do not race to build.
    let mut build = Command::new("cargo");
    build
        .current_dir(&fuzz)
        .args(["+nightly", "fuzz", "build", "-O", "-s", "none"]);
    run("cargo fuzz build -O -s none", build)?;
    let targets: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|t| only.is_empty() || only.contains(t))
        .collect();
    if let Some(unknown) = only.iter().find(|t| !targets.contains(t)) {
        return Err(format!(
            "fuzz-smoke: no fuzz target `{unknown}` (see `cargo fuzz list`)"
        ));
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let table = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(target) = targets.get(i) else { break };
                let row = fuzz_one(&fuzz, target, secs);
                if let Ok(mut t) = table.lock() {
                    t.push(row);
                }
            });
        }
    });
    let mut table = table
        .into_inner()
        .map_err(|_| "fuzz-smoke: a run panicked".to_owned())?;
    table.sort_by(|a, b| a.target.cmp(&b.target));
    println!("| target | seconds | executions | executions/s | crashed |");
    println!("|---|---|---|---|---|");
    let mut failed = Vec::new();
    for r in &table {
        let per_sec = match (r.runs, r.seconds) {
            (Some(n), Some(s)) if s > 0 => (n / s).to_string(),
            _ => "?".to_owned(),
        };
        let runs = r.runs.map_or_else(|| "?".to_owned(), |n| n.to_string());
        let seconds = r.seconds.map_or_else(|| "?".to_owned(), |n| n.to_string());
        println!(
            "| {} | {seconds} | {runs} | {per_sec} | {} |",
            r.target,
            if r.crashed { "yes" } else { "no" }
        );
        if r.crashed {
            failed.push(r.target.clone());
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzz targets crashed: {}", failed.join(", ")))
    }
}

/// The longest input a target is given (libFuzzer truncates a longer seed to it, so each bound
/// holds the target's seeds in fuzz/corpus whole). Transcripts get 16 KB: the example
/// transcripts are seeds of up to 9 KB and must keep their loops, which come last. JSON and
/// TOML texts get 4 KB. The sidecar's lines are JSON, a few hundred bytes each (at most
/// 617 in the seeds), and its seeds are cut at line ends into pieces of at most 1 KB: 1 KB.
/// The event decoders read three bytes an event: the text detectors get 1 KB (about 340
/// events, a text delta of up to 136 characters), enough text for their default thresholds;
/// the other detector targets 512 bytes (about 170 events), more than any detector's history
/// (30 calls) or threshold needs. `event_stream`, which runs every detector, gets 256 bytes
/// (about 85 events; its seeds, a loop of each kind, are at most 153), where a full-size
/// input costs it about a quarter less CPU than at 512. An execution costs in proportion to
/// its events, and libFuzzer grows inputs up to the bound.
fn max_len(target: &str) -> usize {
    match target {
        "transcript" => 16 * 1024,
        "canonical_json" | "config_toml" => 4096,
        "sidecar" | "tail_periodicity" | "variation_loop" => 1024,
        "event_stream" => 256,
        _ => 512,
    }
}

struct FuzzRow {
    target: String,
    runs: Option<u64>,
    seconds: Option<u64>,
    crashed: bool,
}

fn fuzz_one(fuzz: &std::path::Path, target: &str, secs: u64) -> FuzzRow {
    let work = fuzz.join("target/campaign").join(target);
    let failed = |target: &str| FuzzRow {
        target: target.to_owned(),
        runs: None,
        seconds: None,
        crashed: true,
    };
    if let Err(e) = std::fs::create_dir_all(&work) {
        eprintln!("{}: {e}", work.display());
        return failed(target);
    }
    let seeds = fuzz.join("corpus").join(target);
    let mut c = Command::new("cargo");
    c.current_dir(fuzz)
        .args(["+nightly", "fuzz", "run", "-O", "-s", "none", target])
        .arg(&work);
    if seeds.is_dir() {
        c.arg(&seeds);
    }
    c.args([
        "--",
        &format!("-max_total_time={secs}"),
        &format!("-max_len={}", max_len(target)),
    ]);
    eprintln!("==> fuzz {target} ({secs} s)");
    let out = match c.output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("fuzz {target}: {e}");
            return failed(target);
        }
    };
    let log = String::from_utf8_lossy(&out.stderr);
    // libFuzzer ends with "Done N runs in S second(s)".
    let done = log.lines().rev().find_map(|l| l.strip_prefix("Done "));
    let mut words = done.into_iter().flat_map(str::split_whitespace);
    let runs = words.next().and_then(|w| w.parse().ok());
    let seconds = words.nth(2).and_then(|w| w.parse().ok());
    let crashed = !out.status.success();
    if crashed {
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        eprintln!(
            "==> fuzz {target} crashed:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    eprintln!("==> fuzz {target} done: {runs:?} runs");
    FuzzRow {
        target: target.to_owned(),
        runs,
        seconds,
        crashed,
    }
}
