#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod shapes;

pub use detector::UnknownTool;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::Serialize;

pub use loopguard_core::history::MAX_HISTORY_SIZE;

loopguard_core::detector_options! {
    /// The `[detectors.unknown-tool]` table as written. Every key is optional; see [`Settings`]
    /// for the defaults.
    pub struct Options;
    /// Resolved settings.
    #[derive(Eq, Serialize)]
    pub struct Settings;

    /// Warn when the tool failed as unavailable this many times in a row.
    "warning-threshold" warning_threshold: u32 = 3, const DEFAULT_WARNING_THRESHOLD, "positive integer";
    /// Block the call when the tool failed as unavailable this many times in a row.
    "critical-threshold" critical_threshold: u32 = 5, const DEFAULT_CRITICAL_THRESHOLD, "positive integer";
    /// Turns the warning tier on or off.
    "warn" warn: bool = true, const DEFAULT_WARN, "bool";
    /// How many call records the run's history keeps.
    "history-size" history_size: u32 = 30, const DEFAULT_HISTORY_SIZE, "positive integer (at most 1000)";
    /// The tools the host offers; a call to any other name is blocked at once (empty: not
    /// checked).
    "available-tools" available_tools: Vec<String> = Vec::new(), "list of strings", "[]";
    /// Also recognise the shell's own "command not found" messages, whatever the error flag.
    "shell-shapes" shell_shapes: bool = true, const DEFAULT_SHELL_SHAPES, "bool";
}

impl Settings {
    /// OpenClaw's `unknownToolThreshold`.
    pub const OPENCLAW_THRESHOLD: u32 = 10;

    /// OpenClaw's `unknown_tool_repeat`: critical at 10, no warning, error shapes only.
    pub fn openclaw() -> Settings {
        Settings {
            warning_threshold: Self::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Self::OPENCLAW_THRESHOLD,
            warn: false,
            history_size: Self::DEFAULT_HISTORY_SIZE,
            available_tools: Vec::new(),
            shell_shapes: false,
        }
    }

    /// Resolves and validates options.
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let warn = o.warn.unwrap_or(Self::DEFAULT_WARN);
        // Without a warning tier (`warn = false`) the warning threshold is not used.
        let (warning_threshold, critical_threshold) = scope.tiers(
            (o.warning_threshold, Self::DEFAULT_WARNING_THRESHOLD),
            (o.critical_threshold, Self::DEFAULT_CRITICAL_THRESHOLD),
            warn,
        )?;
        let history_size = scope.positive_at_most(
            "history-size",
            o.history_size,
            Self::DEFAULT_HISTORY_SIZE,
            MAX_HISTORY_SIZE,
        )?;
        let available_tools = o.available_tools.clone().unwrap_or_default();
        if let Some(i) = available_tools.iter().position(String::is_empty) {
            return Err(ConfigError::invalid(
                format!("{SCOPE}.available-tools[{i}]"),
                "must not be empty",
            ));
        }
        Ok(Settings {
            warning_threshold,
            critical_threshold,
            warn,
            history_size,
            available_tools,
            shell_shapes: o.shell_shapes.unwrap_or(Self::DEFAULT_SHELL_SHAPES),
        })
    }
}

loopguard_core::detector_registration! {
    name: "unknown-tool", code: "LG004", detector: UnknownTool::new,
    summary: "retries of a tool (or shell command) that does not exist, whatever the arguments",
    openclaw: OpenClawImport { master: MasterSwitch::Follows, toggle: None, keys: &[("historySize", "history-size"), ("unknownToolThreshold", "critical-threshold")] },
}
