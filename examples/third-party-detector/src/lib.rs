#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use loopguard_core::{
    parse_options, ConfigError, Cx, Detector, EnvKind, EnvVar, Event, EventKind, Finding, Interest,
    Level, OpenClawImport, OptionDoc, PresetTable, Registration, RunScope, Scope, MAX_EVIDENCE,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The registered name.
pub const NAME: &str = "acme-tool-streak";

const SCOPE: &str = "detectors.acme-tool-streak";

/// Options of `[detectors.acme-tool-streak]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Calls of one tool in a row at which a warning is reported (and at each multiple).
    pub threshold: Option<u32>,
    /// Tools that are never counted.
    pub ignore_tools: Option<Vec<String>>,
}

/// Resolved settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// See [`Options::threshold`].
    pub threshold: u32,
    /// See [`Options::ignore_tools`].
    pub ignore_tools: Vec<String>,
}

impl Settings {
    /// Default of `threshold`.
    pub const DEFAULT_THRESHOLD: u32 = 12;
    /// The largest `threshold`.
    pub const MAX_THRESHOLD: u32 = 10_000;

    /// Resolves and validates options.
    pub fn from_options(o: Options) -> Result<Settings, ConfigError> {
        let scope = Scope::new(SCOPE);
        let threshold = scope.between(
            "threshold",
            o.threshold,
            Self::DEFAULT_THRESHOLD,
            2,
            Self::MAX_THRESHOLD,
        )?;
        Ok(Settings {
            threshold,
            ignore_tools: o.ignore_tools.unwrap_or_default(),
        })
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    tool: Option<String>,
    streak: u32,
    evidence: VecDeque<u64>,
}

/// The detector.
#[derive(Debug)]
pub struct ToolStreak {
    settings: Settings,
    state: State,
}

impl ToolStreak {
    /// A detector with these settings.
    pub fn new(settings: Settings) -> ToolStreak {
        ToolStreak {
            settings,
            state: State::default(),
        }
    }
}

impl Detector for ToolStreak {
    fn name(&self) -> &'static str {
        NAME
    }

    fn interest(&self) -> Interest {
        Interest::of(&[EventKind::ToolCall])
    }

    fn reset_run(&mut self, scope: &RunScope<'_>) {
        // The streak is per user turn.
        if scope.new_turn {
            self.state = State::default();
        }
    }

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        let Event::ToolCall { tool, .. } = event else {
            return;
        };
        if self.settings.ignore_tools.iter().any(|t| t == tool) {
            return;
        }
        let st = &mut self.state;
        if st.tool.as_deref() != Some(*tool) {
            st.tool = Some((*tool).to_owned());
            st.streak = 0;
            st.evidence.clear();
        }
        st.streak = st.streak.saturating_add(1);
        if st.evidence.len() >= MAX_EVIDENCE {
            st.evidence.pop_front();
        }
        st.evidence.push_back(cx.seq());
        if st.streak.checked_rem(self.settings.threshold) == Some(0) {
            let f = Finding::new(
                NAME,
                Level::Warning,
                st.streak,
                format!("{NAME}:{tool}"),
                format!(
                    "You have called `{tool}` {} times in a row. Step back: say what you are looking for \
                     and use what you already found, or try a different approach.",
                    st.streak
                ),
            )
            .with_tool(*tool)
            .with_evidence(st.evidence.iter().copied().collect());
            cx.report(f);
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}

fn build(table: &toml::Table) -> Result<Box<dyn Detector>, ConfigError> {
    let options: Options = parse_options(SCOPE, table)?;
    Ok(Box::new(ToolStreak::new(Settings::from_options(options)?)))
}

/// The registration of `acme-tool-streak`.
pub const REGISTRATION: Registration = Registration {
    name: NAME,
    code: "ACME001",
    summary: "the same tool called many times in a row, whatever the arguments (example third-party detector)",
    docs: include_str!("../README.md"),
    package: env!("CARGO_PKG_NAME"),
    default_enabled: false,
    options: &[
        OptionDoc {
            name: "threshold",
            ty: "integer (2 to 10000)",
            default: "12",
            doc: "Calls of one tool in a row at which a warning is reported, and again at each multiple.",
        },
        OptionDoc { name: "ignore-tools", ty: "list of strings", default: "[]", doc: "Tools that are never counted." },
    ],
    // Environment overrides, read by `Config::apply_env` like loopguard's own.
    env: &[
        EnvVar {
            var: "ACME_TOOL_STREAK_THRESHOLD",
            key: "threshold",
            kind: EnvKind::PositiveInt,
        },
        EnvVar {
            var: "ACME_TOOL_STREAK_IGNORE_TOOLS",
            key: "ignore-tools",
            kind: EnvKind::List,
        },
    ],
    // On in loopguard's `default` preset, at a threshold high enough for long legitimate
    // series of one tool; the seed presets do not mention it, so it stays off there.
    presets: &[PresetTable {
        preset: "default",
        toml: "enabled = true\nthreshold = 25\nignore-tools = [\"todo\", \"TodoWrite\"]\n",
    }],
    openclaw: OpenClawImport::NONE,
    renamed: &[],
    build,
};

loopguard_core::register_detector!(REGISTRATION);

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_testkit::{run, Script};
    use serde_json::json;

    fn detector(threshold: u32) -> Box<dyn Detector> {
        Box::new(ToolStreak::new(Settings {
            threshold,
            ignore_tools: vec!["todo".into()],
        }))
    }

    #[test]
    fn warns_at_the_threshold_whatever_the_args_and_at_each_multiple() {
        let mut s = Script::new();
        s.user("find the config loader");
        for i in 0..9 {
            s.call(
                "grep",
                json!({"pattern": format!("word{i}")}),
                &format!("{i} matches"),
            );
        }
        let found = run(detector(4), s.events());
        assert_eq!(
            found.iter().map(|(_, f)| f.count).collect::<Vec<_>>(),
            [4, 8]
        );
        assert!(found
            .iter()
            .all(|(_, f)| f.level == Level::Warning && f.tool.as_deref() == Some("grep")));
        assert_eq!(found[0].1.evidence.len(), 4);
    }

    #[test]
    fn another_tool_or_a_new_turn_restarts_the_count_and_ignored_tools_do_not_count() {
        let mut s = Script::new();
        s.user("go");
        for i in 0..3 {
            s.call("read", json!({"line": i}), "x");
            s.call("todo", json!({}), "ok");
        }
        s.call("bash", json!({"command": "ls"}), "a");
        s.call("read", json!({"line": 9}), "x");
        s.user("now something else");
        for i in 0..3 {
            s.call("read", json!({"line": i}), "x");
        }
        let found = run(detector(4), s.events());
        assert!(found.is_empty(), "{found:?}");
        let found = run(detector(3), s.events());
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn options_are_checked_with_their_key_path() {
        let t: toml::Table = "threshold = 1".parse().unwrap();
        let err = build(&t).err().unwrap();
        assert_eq!(err.path(), Some("detectors.acme-tool-streak.threshold"));
        let t: toml::Table = "treshold = 5".parse().unwrap();
        let err = build(&t).err().unwrap();
        assert!(err.to_string().contains("treshold"), "{err}");
        let t: toml::Table = "threshold = 5\nignore-tools = [\"a\"]".parse().unwrap();
        assert!(build(&t).is_ok());
    }

    #[test]
    fn environment_variables_and_the_preset_table_set_its_keys() {
        let r = loopguard_core::Registry::from_entries([&REGISTRATION]).unwrap();
        let mut c = loopguard_core::Config::default();
        c.apply_env_with(
            &r,
            [
                ("ACME_TOOL_STREAK_THRESHOLD".to_owned(), "7".to_owned()),
                (
                    "ACME_TOOL_STREAK_IGNORE_TOOLS".to_owned(),
                    "todo, ls".to_owned(),
                ),
            ],
        )
        .unwrap();
        let t = &c.detectors[NAME];
        let o: Options = parse_options(SCOPE, t).unwrap();
        assert_eq!(o.threshold, Some(7));
        assert_eq!(
            o.ignore_tools,
            Some(vec!["todo".to_owned(), "ls".to_owned()])
        );
        let err = c
            .apply_env_with(
                &r,
                [("ACME_TOOL_STREAK_THRESHOLD".to_owned(), "0".to_owned())],
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("ACME_TOOL_STREAK_THRESHOLD"),
            "{err}"
        );
        let mut t = REGISTRATION.preset_table("default").unwrap().unwrap();
        assert_eq!(t.remove("enabled").and_then(|v| v.as_bool()), Some(true));
        assert!(build(&t).is_ok());
    }

    #[test]
    fn every_accepted_key_is_documented() {
        let docs: Vec<&str> = REGISTRATION.options.iter().map(|o| o.name).collect();
        let mut docs: Vec<String> = docs.into_iter().map(str::to_owned).collect();
        docs.sort();
        assert_eq!(REGISTRATION.accepted_keys(), Some(docs));
    }
}
