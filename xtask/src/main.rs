//! `cargo xtask`: the project's own automation, with no dependencies.
//!
//! - `cargo xtask ci`: fmt --check, clippy -D warnings on all targets, every test and doc test,
//!   the evaluation gate in check mode, and the Pi integration tests when node is present.
//! - `cargo xtask eval [--preset P] [--check]`: corpus evaluation (see docs/evaluation.md).
//! - `cargo xtask fuzz-smoke [SECONDS]`: runs every fuzz target briefly (needs nightly and cargo-fuzz).
//! - `cargo xtask bench`: short criterion runs (`--warm-up-time 1 --measurement-time 3`); today
//!   the text detectors on real code (`loopguard-eval`'s `text_code` bench).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("eval") => eval(&args[1..]),
        Some("fuzz-smoke") => fuzz_smoke(args.get(1).map(String::as_str)),
        Some("bench") => bench(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci | eval [--preset P] [--check] | fuzz-smoke [SECONDS] | bench [FILTER]>"
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
        .unwrap_or_else(|_| PathBuf::from("xtask"));
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

    if root().join("docs/evaluation.md").exists() {
        eval(&["--check".to_owned()])?;
    }

    let pi = root().join("integrations/pi");
    if pi.exists() {
        if Command::new("node").arg("--version").output().is_ok() {
            let mut build = cargo();
            build.args(["build", "-p", "loopguard-cli"]);
            run("build the sidecar for the Pi integration tests", build)?;
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
    eprintln!("==> ci: all green");
    Ok(())
}

fn eval(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--release", "-p", "loopguard-eval", "--"]);
    cmd.args(args);
    run("corpus evaluation", cmd)
}

fn bench(args: &[String]) -> Result<(), String> {
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

fn fuzz_smoke(seconds: Option<&str>) -> Result<(), String> {
    let secs = seconds.unwrap_or("10");
    let list = Command::new("cargo")
        .current_dir(root().join("fuzz"))
        .args(["+nightly", "fuzz", "list"])
        .output()
        .map_err(|e| format!("cargo fuzz: {e}"))?;
    if !list.status.success() {
        return Err(
            "`cargo +nightly fuzz list` failed: install with `cargo install cargo-fuzz`".to_owned(),
        );
    }
    for target in String::from_utf8_lossy(&list.stdout).lines() {
        let mut c = Command::new("cargo");
        c.current_dir(root().join("fuzz")).args([
            "+nightly",
            "fuzz",
            "run",
            target,
            "--",
            &format!("-max_total_time={secs}"),
        ]);
        run(&format!("fuzz {target}"), c)?;
    }
    Ok(())
}
