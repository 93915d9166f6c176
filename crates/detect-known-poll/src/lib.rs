#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::KnownPoll;

use loopguard_core::{build_detector, ConfigError, Detector, OptionDoc, Registration, Scope};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The detector's registered name.
pub const NAME: &str = "known-poll-no-progress";
/// The detector's stable code.
pub const CODE: &str = "LG002";

const SCOPE: &str = "detectors.known-poll-no-progress";

/// The largest accepted `history-size` (the streak walk is linear in it).
pub const MAX_HISTORY_SIZE: u32 = 1000;

/// A call that this detector also treats as a poll (beyond the tools table's `poll` kind): a
/// tool name and, optionally, an argument that must hold one of the listed string values.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PollRule {
    /// Tool name, exactly as called.
    pub tool: String,
    /// An argument name (top-level key of the arguments object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<String>,
    /// The argument's accepted string values; empty: the argument only has to be present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl PollRule {
    /// A rule matching every call of `tool`.
    pub fn tool(tool: &str) -> PollRule {
        PollRule {
            tool: tool.to_owned(),
            arg: None,
            values: Vec::new(),
        }
    }

    /// A rule matching calls of `tool` whose argument `arg` is one of `values`.
    pub fn with_arg(tool: &str, arg: &str, values: &[&str]) -> PollRule {
        PollRule {
            tool: tool.to_owned(),
            arg: Some(arg.to_owned()),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    /// Whether a call of `tool` with `args` is a poll by this rule.
    pub fn matches(&self, tool: &str, args: &Value) -> bool {
        if self.tool != tool {
            return false;
        }
        match &self.arg {
            None => true,
            Some(arg) => match args.get(arg) {
                None => false,
                Some(v) if self.values.is_empty() => !v.is_null(),
                Some(v) => v
                    .as_str()
                    .is_some_and(|s| self.values.iter().any(|x| x == s)),
            },
        }
    }
}

/// The `[detectors.known-poll-no-progress]` table as written. Every key is optional; see
/// [`Settings`] for the defaults.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Warn when a poll's newest outcomes were identical this many times (OpenClaw
    /// `warningThreshold`).
    pub warning_threshold: Option<u32>,
    /// Block the poll when its newest outcomes were identical this many times (OpenClaw
    /// `criticalThreshold`); must be greater than `warning-threshold`.
    pub critical_threshold: Option<u32>,
    /// How many call records the run's history keeps (OpenClaw `historySize`).
    pub history_size: Option<u32>,
    /// More calls to treat as polls, in addition to the tools table's `poll` kind (which
    /// every detector reads; prefer `[tools.<name>] kind = "poll"`).
    pub poll_tools: Option<Vec<PollRule>>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// Warning threshold (no-progress streak).
    pub warning_threshold: u32,
    /// Critical threshold (no-progress streak).
    pub critical_threshold: u32,
    /// History size.
    pub history_size: u32,
    /// Extra poll rules (the tools table's `poll` kind counts too).
    pub poll_tools: Vec<PollRule>,
}

impl Settings {
    /// OpenClaw's warning threshold.
    pub const DEFAULT_WARNING_THRESHOLD: u32 = 10;
    /// OpenClaw's critical threshold.
    pub const DEFAULT_CRITICAL_THRESHOLD: u32 = 20;
    /// OpenClaw's history size.
    pub const DEFAULT_HISTORY_SIZE: u32 = 30;

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
        scope.below(
            ("warning-threshold", warning_threshold),
            ("critical-threshold", critical_threshold),
        )?;
        let poll_tools = o.poll_tools.clone().unwrap_or_default();
        for (i, r) in poll_tools.iter().enumerate() {
            if r.tool.is_empty() {
                return Err(ConfigError::invalid(
                    format!("{SCOPE}.poll-tools[{i}].tool"),
                    "must not be empty",
                ));
            }
            if r.arg.is_none() && !r.values.is_empty() {
                return Err(ConfigError::invalid(
                    format!("{SCOPE}.poll-tools[{i}].values"),
                    "needs `arg` (the argument whose value is matched)",
                ));
            }
        }
        Ok(Settings {
            warning_threshold,
            critical_threshold,
            history_size,
            poll_tools,
        })
    }

    /// Whether a call is a poll by the extra rules (`poll-tools`); the tools table's kind is
    /// on the call's facts ([`loopguard_core::CallInfo::kind`]).
    pub fn is_poll(&self, tool: &str, args: &Value) -> bool {
        self.poll_tools.iter().any(|r| r.matches(tool, args))
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            warning_threshold: Self::DEFAULT_WARNING_THRESHOLD,
            critical_threshold: Self::DEFAULT_CRITICAL_THRESHOLD,
            history_size: Self::DEFAULT_HISTORY_SIZE,
            poll_tools: Vec::new(),
        }
    }
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    build_detector(SCOPE, table, Settings::from_options, KnownPoll::new)
}

/// The registration submitted to loopguard's registry.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: CODE,
    summary: "poll and status calls whose normalised output does not change",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: true,
    options: &[
        OptionDoc {
            name: "warning-threshold",
            ty: "positive integer",
            default: "10",
            doc: "Warn when the poll's newest outcomes were identical this many times.",
        },
        OptionDoc {
            name: "critical-threshold",
            ty: "positive integer",
            default: "20",
            doc: "Block the poll when its newest outcomes were identical this many times; greater than warning-threshold.",
        },
        OptionDoc {
            name: "history-size",
            ty: "positive integer (at most 1000)",
            default: "30",
            doc: "How many call records the run's history keeps.",
        },
        OptionDoc {
            name: "poll-tools",
            ty: "list of tables {tool, arg?, values?}",
            default: "[]",
            doc: "More calls to treat as polls, beyond the tools table's `poll` kind: a tool name, optionally with an argument that must hold one of the values.",
        },
    ],
    env: &[],
    presets: &[],
    openclaw: loopguard_core::OpenClawImport {
        master: loopguard_core::MasterSwitch::Follows,
        toggle: Some("knownPollNoProgress"),
        keys: &[
            ("historySize", "history-size"),
            ("warningThreshold", "warning-threshold"),
            ("criticalThreshold", "critical-threshold"),
        ],
    },
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);
