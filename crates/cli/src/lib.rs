#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod scan;

use clap::{Parser, Subcommand, ValueEnum};
use loopguard::orchestrator::{resolve, Guard};
use loopguard::{Config, Registry};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// Exit status: nothing at or above `--fail-on`.
pub const EXIT_OK: u8 = 0;
/// Exit status: findings at or above `--fail-on`.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit status: bad usage, a bad configuration or unreadable input.
pub const EXIT_ERROR: u8 = 2;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "loopguard",
    version,
    about = "Finds agent loops in transcripts; lists detectors; checks configurations."
)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay transcripts through the guard and report every loop it finds.
    Scan(ScanArgs),
    /// List the detectors linked into this binary.
    Detectors,
    /// Answer JSON-lines events on stdin with verdicts on stdout (see the sidecar's README).
    Serve(ServeArgs),
    /// Configuration tools.
    Config {
        /// The configuration command.
        #[command(subcommand)]
        command: ConfigCommand,
    },
}

/// `loopguard config …`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Parse and resolve a configuration file, build the guard, print the resolved settings.
    Check {
        /// The TOML file.
        file: PathBuf,
        /// Resolve over this preset instead of the file's `preset`.
        #[arg(long)]
        preset: Option<String>,
    },
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people.
    Text,
    /// One JSON document (docs/scan-report.md).
    Json,
    /// One self-contained HTML page.
    Html,
}

/// The lowest level that makes `scan` exit with status 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Any finding.
    Warning,
    /// A critical finding.
    Critical,
    /// Never (always exit 0 when the input was readable).
    Never,
}

/// `loopguard serve` arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Speak the protocol over standard input and output (the only transport).
    #[arg(long, required = true)]
    pub stdio: bool,
    /// Preset to start from (overrides the configuration file's `preset`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Configuration file (TOML).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Live sessions kept; beyond it the least recently used one is evicted.
    #[arg(long)]
    pub max_sessions: Option<usize>,
}

/// `loopguard scan` arguments.
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    /// Transcript files, or directories searched recursively for `*.jsonl`. None: the
    /// session folders of Claude Code, Codex and Pi on this machine.
    pub paths: Vec<PathBuf>,
    /// Only transcripts modified at or after this date (YYYY-MM-DD, UTC).
    #[arg(long)]
    pub since: Option<String>,
    /// Price in dollars per million input/output tokens (e.g. `3/15`) for every model;
    /// without it, the model a transcript names is looked up in a small table.
    #[arg(long)]
    pub price: Option<loopguard_scan::Price>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Preset to start from (overrides the configuration file's `preset`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Configuration file (TOML).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Exit with status 1 when a finding at or above this level is reported.
    #[arg(long, value_enum, default_value_t = FailOn::Critical)]
    pub fail_on: FailOn,
    /// Characters per replayed text delta.
    #[arg(long, default_value_t = loopguard_transcript::DEFAULT_CHUNK, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub chunk: usize,
}

/// Runs the command line `args` (program name first), writing to `out` and `err`; returns the
/// exit status. `main` is this plus the process exit.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(err, "{text}");
                EXIT_ERROR
            } else {
                let _ = write!(out, "{text}");
                EXIT_OK
            };
        }
    };
    let result = match cli.command {
        Command::Scan(a) => scan::command(&a, out, err),
        Command::Detectors => detectors(out).map(|()| EXIT_OK),
        Command::Serve(a) => serve(&a).map(|()| EXIT_OK),
        Command::Config {
            command: ConfigCommand::Check { file, preset },
        } => config_check(&file, preset.as_deref(), out).map(|()| EXIT_OK),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "loopguard: {e:#}");
            EXIT_ERROR
        }
    }
}

fn serve(a: &ServeArgs) -> anyhow::Result<()> {
    use loopguard_sidecar::ServerOptions;
    let mut o = match &a.config {
        Some(f) => ServerOptions::config_file(f)?,
        None => ServerOptions::preset(a.preset.as_deref().unwrap_or("default"))?,
    };
    if let (Some(_), Some(p)) = (&a.config, &a.preset) {
        o.config.preset = Some(p.clone());
    }
    if let Some(n) = a.max_sessions {
        o.max_sessions = n.max(1);
    }
    loopguard_sidecar::serve_stdio(o)?;
    Ok(())
}

/// Loads the configuration `scan` and `config check` use: the file (if any), `preset`
/// overriding its `preset`, resolved over that preset.
pub fn load_config(file: Option<&std::path::Path>, preset: Option<&str>) -> anyhow::Result<Config> {
    let mut c = match file {
        Some(f) => Config::from_file(f)?,
        None => Config::default(),
    };
    if let Some(p) = preset {
        c.preset = Some(p.to_owned());
    }
    Ok(resolve(&c)?)
}

fn detectors(out: &mut dyn Write) -> anyhow::Result<()> {
    let registry = Registry::discover()?;
    let entries = registry.entries();
    let width = entries
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "{:<width$}  {:<6}  {:<7}  summary",
        "name", "code", "default"
    )?;
    for r in entries {
        let on = if r.default_enabled { "on" } else { "off" };
        writeln!(
            out,
            "{:<width$}  {:<6}  {:<7}  {}",
            r.name, r.code, on, r.summary
        )?;
    }
    if entries.is_empty() {
        writeln!(out, "(no detectors are linked into this binary)")?;
    }
    Ok(())
}

fn config_check(
    file: &std::path::Path,
    preset: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let config = load_config(Some(file), preset)?;
    let guard = Guard::builder().config(config.clone()).build()?;
    writeln!(out, "# {}: OK", file.display())?;
    writeln!(
        out,
        "# detectors that run: {}",
        guard.detector_names().join(", ")
    )?;
    writeln!(
        out,
        "# LOOP_GUARD_* environment variables are applied on top of this at run time."
    )?;
    write!(out, "{}", resolved_toml(&config)?)?;
    Ok(())
}

/// The resolved configuration as TOML (preset, `[guard]`, `[detectors.*]`, `[agents.*]`).
pub fn resolved_toml(c: &Config) -> anyhow::Result<String> {
    fn table(c: &Config, top: bool) -> toml::Table {
        let mut t = toml::Table::new();
        if top {
            if let Some(p) = &c.preset {
                t.insert("preset".into(), toml::Value::String(p.clone()));
            }
        }
        if !c.guard.is_empty() {
            t.insert("guard".into(), toml::Value::Table(c.guard.clone()));
        }
        if !c.detectors.is_empty() {
            let d: toml::Table = c
                .detectors
                .iter()
                .map(|(k, v)| (k.clone(), toml::Value::Table(v.clone())))
                .collect();
            t.insert("detectors".into(), toml::Value::Table(d));
        }
        if !c.agents.is_empty() {
            let a: toml::Table = c
                .agents
                .iter()
                .map(|(k, v)| (k.clone(), toml::Value::Table(table(v, false))))
                .collect();
            t.insert("agents".into(), toml::Value::Table(a));
        }
        t
    }
    Ok(toml::to_string(&table(c, true))?)
}
