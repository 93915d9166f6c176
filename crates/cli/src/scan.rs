//! `loopguard scan`: the command line over the scan engine ([`loopguard_scan`], re-exported
//! here); the report contract is `docs/contracts/scan-report.md`.

pub use loopguard_scan::*;

use crate::{OutputFormat, ScanArgs, EXIT_ERROR, EXIT_FINDINGS, EXIT_OK};
use loopguard_scan::discover::{discover, parse_since, Env};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// `loopguard scan`.
pub(crate) fn command(
    a: &ScanArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let config = a.configuration.load()?;
    let template = template(&config)?;
    let since = a.since.as_deref().map(parse_since).transpose()?;
    let files = if a.paths.is_empty() {
        discovered(since, err)?
    } else {
        let mut f = collect_files(&a.paths)?;
        if let Some(t) = since {
            f.retain(|p| {
                std::fs::metadata(p)
                    .and_then(|m| m.modified())
                    .is_ok_and(|m| m >= t)
            });
        }
        f
    };
    let opts = ScanOptions {
        chunk: a.chunk,
        price: a.price,
    };
    let bar = (files.len() >= 20 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} transcripts ({eta})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let outcomes = scan_paths(&files, &template, &opts, &tick);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let mut failed = false;
    let mut sessions = Vec::new();
    let mut errors = Vec::new();
    for o in outcomes {
        match o {
            Ok(s) => {
                for p in &s.problems {
                    writeln!(err, "loopguard: {p}")?;
                }
                failed |= s.bad_lines;
                if let Some(e) = &s.io_error {
                    errors.push(e.to_string());
                }
                sessions.push(s.session);
            }
            Err(ScanError::Config(e)) => return Err(e.into()),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let preset = config.preset.as_deref().unwrap_or("default");
    let report = report(preset, sessions);
    match a.format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            writeln!(out)?;
        }
        OutputFormat::Text => write_text(out, &report)?,
        OutputFormat::Html => html::write_html(out, &report)?,
    }
    for e in &errors {
        writeln!(err, "loopguard: {e}")?;
    }
    let fail_on = match a.fail_on {
        crate::FailOn::Warning => FailOn::Warning,
        crate::FailOn::Critical => FailOn::Critical,
        crate::FailOn::Never => FailOn::Never,
    };
    Ok(if failed || !errors.is_empty() {
        EXIT_ERROR
    } else if fails(&report, fail_on) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

/// The agents' session files on this machine; says on `err` what was found.
fn discovered(
    since: Option<std::time::SystemTime>,
    err: &mut dyn Write,
) -> anyhow::Result<Vec<PathBuf>> {
    let sources = discover(&Env::from_process(), since)?;
    let mut files = Vec::new();
    for s in &sources {
        if s.found {
            writeln!(
                err,
                "loopguard: {}: {} sessions in {}",
                s.agent,
                s.files.len(),
                s.dir.display()
            )?;
        } else {
            writeln!(err, "loopguard: {}: no {}", s.agent, s.dir.display())?;
        }
        files.extend(s.files.iter().cloned());
    }
    if !sources.iter().any(|s| s.found) {
        anyhow::bail!(
            "no path given and no agent session folder found (Claude Code, Codex, Pi); give transcript files or directories"
        );
    }
    Ok(files)
}
