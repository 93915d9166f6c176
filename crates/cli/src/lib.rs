#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod hook;
pub mod scan;

use clap::{Parser, Subcommand, ValueEnum};
use loopguard::orchestrator::{openclaw, Guard};
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
    /// Answer JSON-lines events on stdin with verdicts on stdout (protocol:
    /// docs/contracts/sidecar.md).
    Serve(ServeArgs),
    /// Guard a live agent session through its hooks; install or remove the hooks.
    Hook(hook::HookArgs),
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
    /// Parse and resolve a configuration file, build the guard, print the resolved settings
    /// (for an OpenClaw file, also what was imported and which keys were ignored).
    Check {
        /// The file: loopguard TOML, or an OpenClaw configuration (JSON or JSON5), told apart
        /// by its content.
        file: PathBuf,
        /// Resolve over this preset instead of the file's `preset`.
        #[arg(long)]
        preset: Option<String>,
        /// Show the settings of this agent (its `[agents.<id>]` table, or its
        /// `agents.list[].tools.loopDetection` override in an OpenClaw file).
        #[arg(long)]
        agent: Option<String>,
    },
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people.
    Text,
    /// One JSON document (contract: docs/contracts/scan-report.md).
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

/// The configuration arguments of `serve` and `scan`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Preset to start from (overrides the configuration file's `preset`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Configuration file: loopguard TOML, or an OpenClaw configuration (JSON or JSON5), told
    /// apart by its content.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Apply this agent's overrides from the configuration file (`[agents.<id>]`, or
    /// `agents.list[].tools.loopDetection` in an OpenClaw file).
    #[arg(long, requires = "config")]
    pub agent: Option<String>,
}

impl ConfigArgs {
    /// The configuration these arguments name ([`load_agent_config`]), with the process
    /// environment applied over it.
    pub fn load(&self) -> anyhow::Result<Config> {
        let mut config = load_agent_config(
            self.config.as_deref(),
            self.preset.as_deref(),
            self.agent.as_deref(),
        )?;
        config.apply_process_env()?;
        Ok(config)
    }
}

/// `loopguard serve` arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Speak the protocol over standard input and output (the only transport).
    #[arg(long, required = true)]
    pub stdio: bool,
    /// The configuration: preset, file and agent.
    #[command(flatten)]
    pub configuration: ConfigArgs,
    /// Live sessions kept; beyond it the least recently used one is evicted.
    #[arg(long)]
    pub max_sessions: Option<usize>,
    /// The longest input line accepted, in bytes (default 1 GiB); a `tool_result` line of any
    /// size up to it is read with one copy of the line in memory.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_line_bytes: Option<usize>,
    /// Put an evicted session's state in the answer that evicts it.
    #[arg(long)]
    pub snapshot_on_evict: bool,
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
    /// The configuration: preset, file and agent.
    #[command(flatten)]
    pub configuration: ConfigArgs,
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
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(err, "{text}");
                // An agent reads status 2 from a hook as "block": a mistyped hook command
                // must not block every call.
                if hook::is_hook_invocation(&args) {
                    hook::EXIT_HOOK_FAILED
                } else {
                    EXIT_ERROR
                }
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
        Command::Hook(a) => hook::command(&a, out, err),
        Command::Config {
            command:
                ConfigCommand::Check {
                    file,
                    preset,
                    agent,
                },
        } => config_check(&file, preset.as_deref(), agent.as_deref(), out).map(|()| EXIT_OK),
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
    let mut o = ServerOptions::with_config(a.configuration.load()?);
    if let Some(n) = a.max_sessions {
        o.max_sessions = n.max(1);
    }
    if let Some(n) = a.max_line_bytes {
        o.max_line_bytes = n;
    }
    o.snapshot_on_evict = a.snapshot_on_evict;
    loopguard_sidecar::serve_stdio(o)?;
    Ok(())
}

/// Loads the configuration `scan` and `serve` use ([`loopguard::orchestrator::openclaw::load_config`]):
/// the file (if any; TOML or OpenClaw, told apart by content), `preset` overriding its
/// `preset`, resolved over that preset, `agent`'s overrides merged over the rest.
pub fn load_agent_config(
    file: Option<&std::path::Path>,
    preset: Option<&str>,
    agent: Option<&str>,
) -> anyhow::Result<Config> {
    Ok(openclaw::load_config(file, preset, agent)?.config)
}

/// [`load_agent_config`] without an agent.
pub fn load_config(file: Option<&std::path::Path>, preset: Option<&str>) -> anyhow::Result<Config> {
    load_agent_config(file, preset, None)
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
    agent: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let loaded = openclaw::load_config(Some(file), preset, agent)?;
    let config = &loaded.config;
    let guard = Guard::builder().config(config.clone()).build()?;
    writeln!(
        out,
        "# {}: OK ({})",
        file.display(),
        loaded.format.describe()
    )?;
    if let Some(id) = &loaded.agent {
        writeln!(out, "# agent: {id} (its overrides are merged below)")?;
    }
    if let Some(report) = &loaded.import {
        write_import(report, out)?;
    }
    // Renamed keys are moved when the configuration is resolved over its preset.
    let resolved = loopguard::orchestrator::resolve(config)?;
    for w in &resolved.warnings {
        writeln!(out, "# warning: {w}")?;
    }
    writeln!(
        out,
        "# detectors that run: {}",
        guard.detector_names().join(", ")
    )?;
    writeln!(
        out,
        "# LOOP_GUARD_* environment variables are applied on top of this at run time."
    )?;
    write!(out, "{}", resolved_toml(config)?)?;
    Ok(())
}

/// The import part of `config check` on an OpenClaw file, as `#` comment lines.
fn write_import(report: &openclaw::ImportReport, out: &mut dyn Write) -> anyhow::Result<()> {
    if report.imported.is_empty() {
        writeln!(
            out,
            "# imported from OpenClaw: nothing (no tools.loopDetection block): OpenClaw's defaults apply"
        )?;
    } else {
        writeln!(out, "# imported from OpenClaw, over the openclaw preset:")?;
        for i in &report.imported {
            writeln!(out, "#   {} = {}", i.key, i.value)?;
            writeln!(out, "#     -> {}", i.targets.join(", "))?;
        }
    }
    if !report.agents.is_empty() {
        writeln!(out, "# agents listed: {}", report.agents.join(", "))?;
    }
    if report.ignored.is_empty() {
        writeln!(out, "# ignored: nothing")?;
    } else {
        writeln!(
            out,
            "# ignored (not loop-detection settings): {}",
            report.ignored.join(", ")
        )?;
    }
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
