#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod shapes;

pub use detector::UnknownTool;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::{Deserialize, Serialize};

/// The largest accepted `history-size`.
pub const MAX_HISTORY_SIZE: u32 = 1000;

loopguard_core::detector_options! {
    /// The `[detectors.unknown-tool]` table as written. Every key is optional; see [`Settings`]
    /// for the defaults.
    #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
    pub struct Options;
    /// Resolved settings.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
    pub struct Settings;

    /// Warn when the tool failed as unavailable this many times in a row.
    "warning-threshold" warning_threshold: u32 = Self::DEFAULT_WARNING_THRESHOLD, "positive integer", "3";
    /// Block the call when the tool failed as unavailable this many times in a row.
    "critical-threshold" critical_threshold: u32 = Self::DEFAULT_CRITICAL_THRESHOLD, "positive integer", "5";
    /// Turns the warning tier on or off.
    "warn" warn: bool = Self::DEFAULT_WARN, "bool", "true";
    /// How many call records the run's history keeps.
    "history-size" history_size: u32 = Self::DEFAULT_HISTORY_SIZE, "positive integer (at most 1000)", "30";
    /// The tools the host offers; a call to any other name is blocked at once (empty: not
    /// checked).
    "available-tools" available_tools: Vec<String> = Vec::new(), "list of strings", "[]";
    /// Also recognise the shell's own "command not found" messages, whatever the error flag.
    "shell-shapes" shell_shapes: bool = Self::DEFAULT_SHELL_SHAPES, "bool", "true";
}

impl Settings {
    /// loopguard's warning threshold.
    pub const DEFAULT_WARNING_THRESHOLD: u32 = 3;
    /// loopguard's critical threshold (OpenClaw: 10).
    pub const DEFAULT_CRITICAL_THRESHOLD: u32 = 5;
    /// Warnings on.
    pub const DEFAULT_WARN: bool = true;
    /// OpenClaw's history size.
    pub const DEFAULT_HISTORY_SIZE: u32 = 30;
    /// Shell shapes on.
    pub const DEFAULT_SHELL_SHAPES: bool = true;
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
        let warning_threshold = scope.positive(
            "warning-threshold",
            o.warning_threshold,
            Self::DEFAULT_WARNING_THRESHOLD,
        )?;
        let critical_threshold = scope.positive(
            "critical-threshold",
            o.critical_threshold,
            Self::DEFAULT_CRITICAL_THRESHOLD,
        )?;
        let history_size = scope.positive_at_most(
            "history-size",
            o.history_size,
            Self::DEFAULT_HISTORY_SIZE,
            MAX_HISTORY_SIZE,
        )?;
        let warn = o.warn.unwrap_or(Self::DEFAULT_WARN);
        // Without a warning tier (`warn = false`) the warning threshold is not used.
        if warn {
            scope.below(
                ("warning-threshold", warning_threshold),
                ("critical-threshold", critical_threshold),
            )?;
        }
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
    openclaw: OpenClawImport::new(MasterSwitch::Follows, None, &[("historySize", "history-size"), ("unknownToolThreshold", "critical-threshold")]),
}
