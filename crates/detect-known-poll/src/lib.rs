#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod detector;

pub use detector::KnownPoll;

use loopguard_core::{ConfigError, MasterSwitch, OpenClawImport, Scope};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use loopguard_core::history::MAX_HISTORY_SIZE;

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

loopguard_core::detector_options! {
    /// The `[detectors.known-poll-no-progress]` table as written. Every key is optional; see
    /// [`Settings`] for the defaults.
    pub struct Options;
    /// Resolved settings.
    #[derive(Eq, Serialize)]
    pub struct Settings;

    /// Warn when the poll's newest outcomes were identical this many times.
    "warning-threshold" warning_threshold: u32 = 10, const DEFAULT_WARNING_THRESHOLD, "positive integer";
    /// Block the poll when its newest outcomes were identical this many times; greater than
    /// warning-threshold.
    "critical-threshold" critical_threshold: u32 = 20, const DEFAULT_CRITICAL_THRESHOLD, "positive integer";
    /// How many call records the run's history keeps.
    "history-size" history_size: u32 = 30, const DEFAULT_HISTORY_SIZE, "positive integer (at most 1000)";
    /// More calls to treat as polls, beyond the tools table's `poll` kind: a tool name,
    /// optionally with an argument that must hold one of the values.
    "poll-tools" poll_tools: Vec<PollRule> = Vec::new(), "list of tables {tool, arg?, values?}", "[]";
}

impl Settings {
    /// Resolves and validates options.
    pub fn from_options(o: &Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let (warning_threshold, critical_threshold) = scope.tiers(
            (o.warning_threshold, Self::DEFAULT_WARNING_THRESHOLD),
            (o.critical_threshold, Self::DEFAULT_CRITICAL_THRESHOLD),
            true,
        )?;
        let history_size = scope.positive_at_most(
            "history-size",
            o.history_size,
            Self::DEFAULT_HISTORY_SIZE,
            MAX_HISTORY_SIZE,
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

loopguard_core::detector_registration! {
    name: "known-poll-no-progress", code: "LG002", detector: KnownPoll::new,
    summary: "poll and status calls whose normalised output does not change",
    openclaw: OpenClawImport { master: MasterSwitch::Follows, toggle: Some("knownPollNoProgress"), keys: &[("historySize", "history-size"), ("warningThreshold", "warning-threshold"), ("criticalThreshold", "critical-threshold")] },
}
