//! `loopguard-sidecar [serve] [--stdio] [--max-sessions N] [--preset NAME] [--config FILE]
//! [--snapshot-on-evict]`: the stdio sidecar as a program of its own (the same protocol as
//! `loopguard serve --stdio`).

use loopguard_sidecar::ServerOptions;
use std::process::ExitCode;

const USAGE: &str = "usage: loopguard-sidecar [serve] [--stdio] [--max-sessions N] [--preset NAME] [--config FILE] [--snapshot-on-evict]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("loopguard-sidecar: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut preset: Option<String> = None;
    let mut config: Option<String> = None;
    let mut max_sessions: Option<usize> = None;
    let mut snapshot_on_evict = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "serve" | "--stdio" => {}
            "--preset" => preset = Some(value("--preset")?),
            "--config" => config = Some(value("--config")?),
            "--max-sessions" => {
                let v = value("--max-sessions")?;
                max_sessions = Some(
                    v.parse()
                        .map_err(|_| format!("--max-sessions: `{v}` is not a count"))?,
                );
            }
            "--snapshot-on-evict" => snapshot_on_evict = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let mut options = match (&config, &preset) {
        (Some(path), _) => {
            ServerOptions::config_file(std::path::Path::new(path)).map_err(|e| e.to_string())?
        }
        (None, Some(name)) => ServerOptions::preset(name).map_err(|e| e.to_string())?,
        (None, None) => ServerOptions::preset("default").map_err(|e| e.to_string())?,
    };
    if let (Some(_), Some(name)) = (&config, &preset) {
        options.config.preset = Some(name.clone());
    }
    if let Some(n) = max_sessions {
        options.max_sessions = n;
    }
    options.snapshot_on_evict = snapshot_on_evict;
    loopguard_sidecar::serve_stdio(options).map_err(|e| e.to_string())?;
    Ok(())
}
