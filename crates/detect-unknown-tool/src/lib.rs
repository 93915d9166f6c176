#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;
mod shapes;

pub use detector::UnknownTool;

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};

/// The detector's registered name.
pub const NAME: &str = "unknown-tool";
/// The detector's stable code.
pub const CODE: &str = "LG004";

const SCOPE: &str = "detectors.unknown-tool";

/// The largest accepted `history-size`.
pub const MAX_HISTORY_SIZE: u32 = 1000;

/// The `[detectors.unknown-tool]` table as written. Every key is optional; see [`Settings`]
/// for the defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Warn when the tool failed as unavailable this many times in a row.
    pub warning_threshold: Option<u32>,
    /// Block the call when the tool failed as unavailable this many times in a row (OpenClaw
    /// `unknownToolThreshold`); greater than `warning-threshold` when warnings are on.
    pub critical_threshold: Option<u32>,
    /// Turns the warning tier on or off (OpenClaw has none).
    pub warn: Option<bool>,
    /// How many call records the run's history keeps (OpenClaw `historySize`).
    pub history_size: Option<u32>,
    /// The tools the host offers; a call to any other name is blocked at once. Empty: not
    /// checked.
    pub available_tools: Option<Vec<String>>,
    /// Also recognise the shell's own "command not found" messages (agents whose tool is a
    /// shell command), whatever the error flag.
    pub shell_shapes: Option<bool>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// Warning threshold (consecutive unavailable failures).
    pub warning_threshold: u32,
    /// Critical threshold (consecutive unavailable failures).
    pub critical_threshold: u32,
    /// Warning tier on.
    pub warn: bool,
    /// History size.
    pub history_size: u32,
    /// Tools the host offers (empty: not checked).
    pub available_tools: Vec<String>,
    /// Shell shapes on.
    pub shell_shapes: bool,
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

impl Default for Settings {
    fn default() -> Self {
        Settings {
            warning_threshold: Self::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Self::DEFAULT_CRITICAL_THRESHOLD,
            warn: Self::DEFAULT_WARN,
            history_size: Self::DEFAULT_HISTORY_SIZE,
            available_tools: Vec::new(),
            shell_shapes: Self::DEFAULT_SHELL_SHAPES,
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(SCOPE, table, Settings::from_options, UnknownTool::new)
}

/// The registration submitted to loopguard's registry.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: CODE,
    summary: "retries of a tool (or shell command) that does not exist, whatever the arguments",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "warning-threshold",
            ty: "positive integer",
            default: "3",
            doc: "Warn when the tool failed as unavailable this many times in a row.",
        },
        OptionDoc {
            name: "critical-threshold",
            ty: "positive integer",
            default: "5",
            doc: "Block the call when the tool failed as unavailable this many times in a row.",
        },
        OptionDoc { name: "warn", ty: "bool", default: "true", doc: "Turns the warning tier on or off." },
        OptionDoc {
            name: "history-size",
            ty: "positive integer (at most 1000)",
            default: "30",
            doc: "How many call records the run's history keeps.",
        },
        OptionDoc {
            name: "available-tools",
            ty: "list of strings",
            default: "[]",
            doc: "The tools the host offers; a call to any other name is blocked at once (empty: not checked).",
        },
        OptionDoc {
            name: "shell-shapes",
            ty: "bool",
            default: "true",
            doc: "Also recognise the shell's own \"command not found\" messages, whatever the error flag.",
        },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport {
        master: loopguard_core::MasterSwitch::Follows,
        toggle: None,
        keys: &[
            ("historySize", "history-size"),
            ("unknownToolThreshold", "critical-threshold"),
        ],
    },
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
