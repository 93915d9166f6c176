//! What the guard knows about tools, in one table: each tool's [`ToolKind`] (is a call a poll,
//! a send), the result normaliser that applies, and the volatile result keys that must not
//! count as progress. Hosts extend the built-in entries with a `[tools]` configuration table.
//!
//! The bus looks the kind up once per call and stamps it on the call's facts
//! ([`crate::CallInfo::kind`]); detectors read it from there and keep no lists of tool names.
//! The result normalisers ([`Tools::normalizers`]) are built from the same entries.
//!
//! ```
//! use loopguard_core::tools::{ToolKind, Tools};
//! use serde_json::json;
//!
//! let table: toml::Table = "[my_status]\nkind = \"poll\"\nvolatile = [\"checked\"]\n".parse().unwrap();
//! let tools = Tools::from_config(&table).unwrap();
//! assert_eq!(tools.kind("my_status", Some(&json!({}))), ToolKind::Poll);
//! // the built-in entries stay
//! assert_eq!(tools.kind("process", Some(&json!({"action": "poll"}))), ToolKind::Poll);
//! assert_eq!(tools.kind("process", Some(&json!({"action": "kill"}))), ToolKind::Other);
//!
//! let bad: toml::Table = "[my_status]\nkind = \"pol\"\n".parse().unwrap();
//! let err = Tools::from_config(&bad).unwrap_err();
//! assert_eq!(err.path(), Some("tools.my_status.kind"));
//! ```

use crate::error::ConfigError;
use crate::normalize::{Exact, Normalizer, Normalizers};
use crate::normalizers::{Exec, Generic, GenericIgnoring, Process, SendResult, MAX_VOLATILE_KEY};
use crate::options::Scope;
use crate::FixedMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// What a call of a tool is, as far as the detectors care.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// Nothing the guard treats specially.
    #[default]
    Other,
    /// A status or output check of something that runs on its own: its result not changing
    /// means "not done yet", not a loop (known-poll judges it; generic-repeat gives it the
    /// polling thresholds or skips it, as configured).
    Poll,
    /// An outbound message: its receipt ids are volatile (the `send` normaliser).
    Send,
}

impl ToolKind {
    /// Every kind, in the order of the configuration's documentation.
    pub const ALL: [ToolKind; 3] = [ToolKind::Poll, ToolKind::Send, ToolKind::Other];

    /// The kind's configuration name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Other => "other",
            ToolKind::Poll => "poll",
            ToolKind::Send => "send",
        }
    }

    /// Whether this is [`ToolKind::Poll`].
    pub fn is_poll(self) -> bool {
        self == ToolKind::Poll
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result normaliser an entry applies (see [`crate::normalizers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NormalizerName {
    /// The generic pass: details and text, volatile keys and shell noise removed.
    #[default]
    Generic,
    /// OpenClaw's `exec` rule (by `details.status`).
    Exec,
    /// OpenClaw's `process` rule (actions `poll` and `log`).
    Process,
    /// OpenClaw's `exec` rule with its texts as they are (the `openclaw` preset).
    #[serde(rename = "exec-exact")]
    ExecExact,
    /// OpenClaw's `process` rule with its texts as they are (the `openclaw` preset).
    #[serde(rename = "process-exact")]
    ProcessExact,
    /// OpenClaw's outbound-send rule to the letter: a send is its details alone, another
    /// call its exact result (the `openclaw` preset).
    #[serde(rename = "send-exact")]
    SendExact,
    /// OpenClaw's outbound-send rule: the details without the volatile ids, for calls that
    /// are sends (the entry's condition); the generic rule for the others.
    Send,
    /// The exact result (error flag, text, images, details).
    Exact,
}

impl NormalizerName {
    /// Every name.
    pub const ALL: [NormalizerName; 8] = [
        NormalizerName::Generic,
        NormalizerName::Exec,
        NormalizerName::Process,
        NormalizerName::ExecExact,
        NormalizerName::ProcessExact,
        NormalizerName::SendExact,
        NormalizerName::Send,
        NormalizerName::Exact,
    ];

    /// The configuration name.
    pub fn as_str(self) -> &'static str {
        match self {
            NormalizerName::Generic => "generic",
            NormalizerName::Exec => "exec",
            NormalizerName::Process => "process",
            NormalizerName::ExecExact => "exec-exact",
            NormalizerName::ProcessExact => "process-exact",
            NormalizerName::SendExact => "send-exact",
            NormalizerName::Send => "send",
            NormalizerName::Exact => "exact",
        }
    }

    /// Whether the normaliser honours an entry's `volatile` keys.
    pub fn takes_volatile(self) -> bool {
        matches!(
            self,
            NormalizerName::Generic | NormalizerName::Send | NormalizerName::SendExact
        )
    }
}

/// Which calls of a tool have the entry's kind: those whose argument `arg` holds one of
/// `values` (any value but `null` when `values` is empty); with `when_absent`, also those
/// without a string `arg` at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// The argument (top-level key of the arguments object).
    pub arg: String,
    /// Its accepted string values.
    pub values: Vec<String>,
    /// A call without the argument (or with a value that is not a string) matches too.
    pub when_absent: bool,
}

impl Condition {
    /// Whether a call with `args` (`None`: the arguments are not known) meets the condition.
    pub fn matches(&self, args: Option<&Value>) -> bool {
        let v = args.and_then(|a| a.get(&self.arg));
        if self.values.is_empty() {
            return match v {
                Some(v) if !v.is_null() => true,
                _ => self.when_absent,
            };
        }
        match v.and_then(Value::as_str) {
            Some(s) => self.values.iter().any(|x| x == s),
            None => self.when_absent,
        }
    }
}

/// One tool's entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolEntry {
    /// The kind of the calls that meet `when` (of every call without a condition); other calls
    /// are [`ToolKind::Other`].
    pub kind: ToolKind,
    /// Which calls have `kind`.
    pub when: Option<Condition>,
    /// The result normaliser.
    pub normalizer: NormalizerName,
    /// Result keys (in the details or a JSON result, at any depth) whose values change without
    /// meaning progress; compared case-insensitively with `-` and `_` ignored.
    pub volatile: Vec<String>,
    /// The entry was written (or changed) by the configuration.
    configured: bool,
}

impl ToolEntry {
    /// The kind of one call (`args`: `None` when the call was not seen).
    pub fn kind_of(&self, args: Option<&Value>) -> ToolKind {
        match &self.when {
            Some(c) if !c.matches(args) => ToolKind::Other,
            _ => self.kind,
        }
    }

    /// The normaliser this entry applies.
    pub fn build_normalizer(&self) -> Arc<dyn Normalizer> {
        match self.normalizer {
            NormalizerName::Generic if self.volatile.is_empty() => Arc::new(Generic),
            NormalizerName::Generic => Arc::new(GenericIgnoring::new(&self.volatile)),
            NormalizerName::Exec => Arc::new(Exec::default()),
            NormalizerName::Process => Arc::new(Process::default()),
            NormalizerName::ExecExact => Arc::new(Exec::default().exact()),
            NormalizerName::ProcessExact => Arc::new(Process::default().exact()),
            NormalizerName::Send => Arc::new(SendResult::new(self.when.clone(), &self.volatile)),
            NormalizerName::SendExact => {
                Arc::new(SendResult::new(self.when.clone(), &self.volatile).exact())
            }
            NormalizerName::Exact => Arc::new(Exact),
        }
    }
}

/// The shell programs whose own messages the guard reads (error prefixes such as
/// `/bin/bash: line 12: …`, `sh: 3: …`, `zsh: command not found: …`).
pub const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];

/// Whether `path` names one of the [`SHELLS`] (`/bin/bash`, `sh`).
pub fn is_shell(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    SHELLS.contains(&base)
}

/// `message` actions that deliver something (OpenClaw's list).
pub const SEND_ACTIONS: &[&str] = &[
    "send",
    "broadcast",
    "reply",
    "thread-reply",
    "sendWithEffect",
    "sendAttachment",
    "upload-file",
    "sticker",
    "poll",
];

/// Volatile keys of send results (message, file and poll ids, receipts, run ids, idempotency
/// keys, timestamps).
pub const SEND_VOLATILE: &[&str] = &[
    "messageid",
    "messageids",
    "platformmessageid",
    "platformmessageids",
    "fileid",
    "filekey",
    "pollid",
    "receipt",
    "runid",
    "idempotencykey",
    "ts",
    "timestamp",
    "sentat",
    "deliveredat",
    "createdat",
];

/// A built-in entry, as data.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// Tool name, exactly as called.
    pub name: &'static str,
    /// Kind of the calls that meet the condition.
    pub kind: ToolKind,
    /// Condition: argument, values, whether a call without the argument matches too.
    pub when: Option<(&'static str, &'static [&'static str], bool)>,
    /// Result normaliser.
    pub normalizer: NormalizerName,
    /// Volatile result keys.
    pub volatile: &'static [&'static str],
    /// Where the knowledge comes from.
    pub why: &'static str,
}

const fn entry(
    name: &'static str,
    kind: ToolKind,
    normalizer: NormalizerName,
    why: &'static str,
) -> Builtin {
    Builtin {
        name,
        kind,
        when: None,
        normalizer,
        volatile: &[],
        why,
    }
}

const fn provider_send(name: &'static str) -> Builtin {
    Builtin {
        name,
        kind: ToolKind::Send,
        when: Some(("action", SEND_ACTIONS, true)),
        normalizer: NormalizerName::Send,
        volatile: SEND_VOLATILE,
        why: "OpenClaw: a provider's send tool (a call without a send-like action is a send)",
    }
}

/// The built-in table.
pub const BUILTIN: &[Builtin] = &[
    entry(
        "command_status",
        ToolKind::Poll,
        NormalizerName::Generic,
        "OpenClaw: a known poll, whatever its arguments",
    ),
    Builtin {
        name: "process",
        kind: ToolKind::Poll,
        when: Some(("action", &["poll", "log"], false)),
        normalizer: NormalizerName::Process,
        volatile: &[],
        why: "OpenClaw: actions `poll` and `log` are polls; its `process` result rule",
    },
    entry(
        "BashOutput",
        ToolKind::Poll,
        NormalizerName::Generic,
        "Claude Code: reads a background shell's output",
    ),
    entry(
        "TaskOutput",
        ToolKind::Poll,
        NormalizerName::Generic,
        "Claude Code: reads a background task's output",
    ),
    entry(
        "exec",
        ToolKind::Other,
        NormalizerName::Exec,
        "OpenClaw: its `exec` result rule",
    ),
    Builtin {
        name: "message",
        kind: ToolKind::Send,
        when: Some(("action", SEND_ACTIONS, false)),
        normalizer: NormalizerName::Send,
        volatile: SEND_VOLATILE,
        why: "OpenClaw: a send-like action is a send",
    },
    Builtin {
        name: "sessions_send",
        kind: ToolKind::Send,
        when: None,
        normalizer: NormalizerName::Send,
        volatile: SEND_VOLATILE,
        why: "OpenClaw: always a send",
    },
    provider_send("telegram"),
    provider_send("discord"),
    provider_send("slack"),
    provider_send("whatsapp"),
    provider_send("signal"),
    provider_send("imessage"),
    provider_send("msteams"),
    provider_send("googlechat"),
    provider_send("matrix"),
];

impl Builtin {
    fn to_entry(self) -> ToolEntry {
        ToolEntry {
            kind: self.kind,
            when: self.when.map(|(arg, values, when_absent)| Condition {
                arg: arg.to_owned(),
                values: values.iter().map(|v| (*v).to_owned()).collect(),
                when_absent,
            }),
            normalizer: self.normalizer,
            volatile: self.volatile.iter().map(|v| (*v).to_owned()).collect(),
            configured: false,
        }
    }
}

/// One `[tools.<name>]` table as written. Keys not given keep the built-in entry's value (or
/// the defaults: kind `other`, normaliser `generic`, no condition); `volatile` adds to the
/// built-in keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct EntryOptions {
    kind: Option<ToolKind>,
    arg: Option<String>,
    values: Option<Vec<String>>,
    when_absent: Option<bool>,
    normalizer: Option<NormalizerName>,
    volatile: Option<Vec<String>>,
}

/// The entry name that stands for every tool the table does not name (`[tools."*"]`): only its
/// `normalizer` and `volatile` apply (the rule for those tools' results).
pub const EVERY_OTHER_TOOL: &str = "*";

/// The tools table: the built-in entries, extended by the configuration, and the rule for
/// every tool it does not name. Cheap to clone.
#[derive(Clone)]
pub struct Tools {
    entries: Arc<FixedMap<String, ToolEntry>>,
    /// The `[tools."*"]` entry ([`EVERY_OTHER_TOOL`]): the result rule of every tool without
    /// an entry of its own (`None`: the generic one). Never an entry: no tool is named `*`.
    others: Option<ToolEntry>,
}

impl fmt::Debug for Tools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.entries.keys().collect();
        names.sort();
        f.debug_struct("Tools")
            .field("tools", &names)
            .field("others", &self.others.as_ref().map(|e| e.normalizer))
            .finish()
    }
}

impl Default for Tools {
    fn default() -> Self {
        Tools::builtin()
    }
}

/// The longest accepted tool name in the configuration.
pub const MAX_NAME_LEN: usize = 256;

impl Tools {
    /// The built-in entries ([`BUILTIN`]): built once per process, then shared.
    pub fn builtin() -> Tools {
        static ENTRIES: std::sync::OnceLock<Arc<FixedMap<String, ToolEntry>>> =
            std::sync::OnceLock::new();
        let entries = ENTRIES.get_or_init(|| {
            Arc::new(
                BUILTIN
                    .iter()
                    .map(|b| (b.name.to_owned(), b.to_entry()))
                    .collect(),
            )
        });
        Tools {
            entries: Arc::clone(entries),
            others: None,
        }
    }

    /// No entries at all (every tool is `other` and gets the generic normaliser).
    pub fn empty() -> Tools {
        Tools {
            entries: Arc::new(FixedMap::default()),
            others: None,
        }
    }

    /// The built-in entries extended by a `[tools]` table.
    pub fn from_config(table: &toml::Table) -> Result<Tools, ConfigError> {
        let mut t = Tools::builtin();
        t.extend(table)?;
        Ok(t)
    }

    /// Checks a `[tools]` table over the built-in entries (what [`Tools::from_config`] would
    /// report).
    pub fn check(table: &toml::Table) -> Result<(), ConfigError> {
        Tools::from_config(table).map(|_| ())
    }

    /// Adds or changes the entries of a `[tools]` table (`[tools.<name>]` subtables). Errors
    /// name the key path (`tools.<name>.<key>`).
    pub fn extend(&mut self, table: &toml::Table) -> Result<(), ConfigError> {
        let entries = Arc::make_mut(&mut self.entries);
        for (name, value) in table {
            let scope = format!("tools.{name}");
            if name.is_empty() || name.len() > MAX_NAME_LEN {
                return Err(ConfigError::invalid(
                    scope,
                    format!("a tool name must have 1 to {MAX_NAME_LEN} bytes"),
                ));
            }
            let toml::Value::Table(t) = value else {
                return Err(ConfigError::invalid(
                    scope,
                    format!(
                        "expected a table (`[tools.{name}]`), found {}",
                        value.type_str()
                    ),
                ));
            };
            let o: EntryOptions = crate::config::parse_options(&scope, t)?;
            let at = Scope::new(&scope);
            let others = name == EVERY_OTHER_TOOL;
            if others {
                let kind_keys = [
                    ("kind", o.kind.is_some()),
                    ("arg", o.arg.is_some()),
                    ("values", o.values.is_some()),
                    ("when-absent", o.when_absent.is_some()),
                ];
                if let Some((key, _)) = kind_keys.iter().find(|(_, given)| *given) {
                    return Err(at.invalid(
                        key,
                        "`[tools.\"*\"]` stands for every tool the table does not name: only `normalizer` and `volatile` apply to it",
                    ));
                }
            }
            let mut e = if others {
                self.others.clone()
            } else {
                entries.get(name).cloned()
            }
            .unwrap_or_default();
            e.configured = true;
            if let Some(k) = o.kind {
                e.kind = k;
            }
            if let Some(n) = o.normalizer {
                e.normalizer = n;
            }
            match (&o.arg, &o.values, o.when_absent) {
                (None, None, None) => {}
                (Some(arg), values, when_absent) => {
                    if arg.is_empty() {
                        return Err(at.invalid("arg", "must not be empty"));
                    }
                    e.when = Some(Condition {
                        arg: arg.clone(),
                        values: values.clone().unwrap_or_default(),
                        when_absent: when_absent.unwrap_or(false),
                    });
                }
                (None, values, when_absent) => {
                    let Some(c) = e.when.as_mut() else {
                        let key = if values.is_some() {
                            "values"
                        } else {
                            "when-absent"
                        };
                        return Err(
                            at.invalid(key, "needs `arg` (the argument whose value is matched)")
                        );
                    };
                    if let Some(v) = values {
                        c.values.clone_from(v);
                    }
                    if let Some(w) = when_absent {
                        c.when_absent = w;
                    }
                }
            }
            if let Some(v) = &o.volatile {
                if !e.normalizer.takes_volatile() {
                    return Err(at.invalid(
                        "volatile",
                        format!(
                            "the `{}` normaliser keeps its own fields; `volatile` applies to the generic and send normalisers",
                            e.normalizer.as_str()
                        ),
                    ));
                }
                for (i, k) in v.iter().enumerate() {
                    if k.is_empty() || k.len() > MAX_VOLATILE_KEY {
                        return Err(at.invalid(
                            &format!("volatile[{i}]"),
                            format!("a key must have 1 to {MAX_VOLATILE_KEY} bytes"),
                        ));
                    }
                    if !e.volatile.contains(k) {
                        e.volatile.push(k.clone());
                    }
                }
            }
            if others {
                self.others = Some(e);
            } else {
                entries.insert(name.clone(), e);
            }
        }
        Ok(())
    }

    /// The entry of `tool` (exact name), if the table has one.
    pub fn get(&self, tool: &str) -> Option<&ToolEntry> {
        self.entries.get(tool)
    }

    /// The kind of a call of `tool` with `args` (`None`: the call was not seen).
    pub fn kind(&self, tool: &str, args: Option<&Value>) -> ToolKind {
        self.entries
            .get(tool)
            .map_or(ToolKind::Other, |e| e.kind_of(args))
    }

    /// The entries, sorted by tool name.
    pub fn entries(&self) -> Vec<(&str, &ToolEntry)> {
        let mut v: Vec<(&str, &ToolEntry)> =
            self.entries.iter().map(|(k, e)| (k.as_str(), e)).collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// The result normalisers of the table: each entry's, and for every other tool the
    /// `[tools."*"]` entry's ([`EVERY_OTHER_TOOL`]), the generic one without it.
    pub fn normalizers(&self) -> Normalizers {
        let mut n = Normalizers::exact();
        match &self.others {
            Some(e) => n.set_fallback(e.build_normalizer()),
            None => n.set_fallback(Arc::new(Generic)),
        }
        for (name, e) in self.entries.iter() {
            if e.normalizer != NormalizerName::Generic || !e.volatile.is_empty() {
                n.register(name.clone(), e.build_normalizer());
            }
        }
        n
    }

    /// Registers the normalisers of the entries the configuration wrote over `n` (a host's
    /// own set), leaving its other tools alone; a `[tools."*"]` entry becomes its rule for
    /// every tool it does not name.
    pub fn configure(&self, n: &mut Normalizers) {
        for (name, e) in self.entries.iter().filter(|(_, e)| e.configured) {
            n.register(name.clone(), e.build_normalizer());
        }
        if let Some(e) = &self.others {
            n.set_fallback(e.build_normalizer());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn builtin_kinds() {
        let t = Tools::builtin();
        assert_eq!(
            t.kind("command_status", Some(&json!({"x": 1}))),
            ToolKind::Poll
        );
        assert_eq!(t.kind("command_status", None), ToolKind::Poll);
        assert_eq!(
            t.kind("process", Some(&json!({"action": "log"}))),
            ToolKind::Poll
        );
        assert_eq!(t.kind("process", Some(&json!({}))), ToolKind::Other);
        assert_eq!(t.kind("process", None), ToolKind::Other);
        assert_eq!(t.kind("BashOutput", Some(&json!({}))), ToolKind::Poll);
        assert_eq!(
            t.kind("exec", Some(&json!({"action": "poll"}))),
            ToolKind::Other
        );
        assert_eq!(
            t.kind("message", Some(&json!({"action": "send"}))),
            ToolKind::Send
        );
        assert_eq!(
            t.kind("message", Some(&json!({"action": "read"}))),
            ToolKind::Other
        );
        assert_eq!(t.kind("message", Some(&json!({}))), ToolKind::Other);
        assert_eq!(t.kind("telegram", Some(&json!({}))), ToolKind::Send);
        assert_eq!(
            t.kind("telegram", Some(&json!({"action": "read"}))),
            ToolKind::Other
        );
        assert_eq!(t.kind("sessions_send", None), ToolKind::Send);
        assert_eq!(t.kind("bash", Some(&json!({}))), ToolKind::Other);
    }

    #[test]
    fn builtin_names_are_unique() {
        let t = Tools::builtin();
        assert_eq!(t.entries().len(), BUILTIN.len());
    }

    #[test]
    fn configured_entries_extend_and_change_the_table() {
        let t = Tools::from_config(&table(
            "[my_status]\nkind = \"poll\"\n\
             [job]\nkind = \"poll\"\narg = \"op\"\nvalues = [\"wait\"]\n\
             [BashOutput]\nkind = \"other\"\n\
             [process]\nvalues = [\"poll\"]\n",
        ))
        .unwrap();
        assert_eq!(t.kind("my_status", None), ToolKind::Poll);
        assert_eq!(t.kind("job", Some(&json!({"op": "wait"}))), ToolKind::Poll);
        assert_eq!(t.kind("job", Some(&json!({"op": "run"}))), ToolKind::Other);
        assert_eq!(t.kind("BashOutput", None), ToolKind::Other);
        // the built-in normaliser stays when only the kind changes
        assert_eq!(
            t.get("process").map(|e| e.normalizer),
            Some(NormalizerName::Process)
        );
        assert_eq!(
            t.kind("process", Some(&json!({"action": "log"}))),
            ToolKind::Other
        );
        assert_eq!(
            t.kind("process", Some(&json!({"action": "poll"}))),
            ToolKind::Poll
        );
        // the built-in entries the table did not name are untouched
        assert_eq!(t.kind("command_status", None), ToolKind::Poll);
        assert_eq!(t.entries().len(), BUILTIN.len() + 2);
    }

    #[test]
    fn bad_entries_name_their_key_path() {
        let cases = [
            ("[x]\nkind = \"pol\"\n", "tools.x.kind"),
            ("[x]\nkynd = \"poll\"\n", "tools.x.kynd"),
            ("x = 1\n", "tools.x"),
            ("[x]\nvalues = [\"a\"]\n", "tools.x.values"),
            ("[x]\nwhen-absent = true\n", "tools.x.when-absent"),
            ("[x]\narg = \"\"\n", "tools.x.arg"),
            ("[x]\nnormalizer = \"fancy\"\n", "tools.x.normalizer"),
            ("[x]\nvolatile = [\"\"]\n", "tools.x.volatile[0]"),
            (
                "[x]\nnormalizer = \"exec\"\nvolatile = [\"a\"]\n",
                "tools.x.volatile",
            ),
            ("[exec]\nvolatile = [\"a\"]\n", "tools.exec.volatile"),
        ];
        for (text, path) in cases {
            let err = Tools::from_config(&table(text)).unwrap_err();
            assert_eq!(err.path(), Some(path), "{text}: {err}");
            assert!(err.to_string().contains(path), "{err}");
        }
        let err = Tools::from_config(&table("[x]\nvalues = [1]\n")).unwrap_err();
        assert!(
            err.path().is_some_and(|p| p.starts_with("tools.x.values")),
            "{err}"
        );
    }

    #[test]
    fn conditions() {
        let c = Condition {
            arg: "action".into(),
            values: vec!["send".into()],
            when_absent: true,
        };
        assert!(c.matches(None));
        assert!(c.matches(Some(&json!({}))));
        assert!(c.matches(Some(&json!({"action": 3}))));
        assert!(c.matches(Some(&json!({"action": "send"}))));
        assert!(!c.matches(Some(&json!({"action": "read"}))));
        let present = Condition {
            arg: "id".into(),
            values: vec![],
            when_absent: false,
        };
        assert!(present.matches(Some(&json!({"id": 1}))));
        assert!(!present.matches(Some(&json!({"id": null}))));
        assert!(!present.matches(Some(&json!({}))));
    }

    fn result<'a>(
        tool: &'a str,
        args: &'a Value,
        content: &'a str,
        details: Option<&'a Value>,
    ) -> crate::ResultInput<'a> {
        crate::ResultInput {
            tool,
            args: Some(args),
            content,
            is_error: false,
            images: 0,
            details,
            text_pass: None,
        }
    }

    #[test]
    fn configured_volatile_keys_are_ignored_and_others_still_count() {
        let t = Tools::from_config(&table("[my_status]\nvolatile = [\"checked-at\"]\n")).unwrap();
        let n = t.normalizers();
        let args = json!({});
        let a = "{\"state\": \"running\", \"checked_at\": \"t1\"}";
        let b = "{\"state\": \"running\", \"CheckedAt\": \"t2\"}";
        let c = "{\"state\": \"done\", \"checked_at\": \"t3\"}";
        let fp = |s| n.fingerprint(&result("my_status", &args, s, None));
        assert_eq!(fp(a), fp(b));
        assert_ne!(fp(a), fp(c));
        let d1 = json!({"nested": {"checked_at": 1}, "ok": true});
        let d2 = json!({"nested": {"checked_at": 2}, "ok": true});
        assert_eq!(
            n.fingerprint(&result("my_status", &args, "x", Some(&d1))),
            n.fingerprint(&result("my_status", &args, "x", Some(&d2)))
        );
        // other tools keep the key
        assert_ne!(
            n.fingerprint(&result("other", &args, a, None)),
            n.fingerprint(&result("other", &args, b, None))
        );
        // without the entry the key counts
        let plain = Tools::builtin().normalizers();
        assert_ne!(
            plain.fingerprint(&result("my_status", &args, a, None)),
            plain.fingerprint(&result("my_status", &args, b, None))
        );
    }

    #[test]
    fn a_host_send_tool_gets_the_send_rule_for_its_sends_only() {
        let t = Tools::from_config(&table(
            "[notify]\nkind = \"send\"\nnormalizer = \"send\"\narg = \"op\"\nvalues = [\"post\"]\nvolatile = [\"receipt_no\"]\n",
        ))
        .unwrap();
        let n = t.normalizers();
        let post = json!({"op": "post"});
        let get = json!({"op": "get"});
        let a = json!({"ok": true, "receipt_no": 1});
        let b = json!({"ok": true, "receipt_no": 2});
        assert_eq!(t.kind("notify", Some(&post)), ToolKind::Send);
        assert_eq!(
            n.fingerprint(&result("notify", &post, "", Some(&a))),
            n.fingerprint(&result("notify", &post, "", Some(&b)))
        );
        assert_ne!(
            n.fingerprint(&result("notify", &get, "", Some(&a))),
            n.fingerprint(&result("notify", &get, "", Some(&b)))
        );
    }

    #[test]
    fn configure_registers_only_the_configured_entries_over_a_host_set() {
        let t = Tools::from_config(&table("[my_status]\nnormalizer = \"exact\"\n")).unwrap();
        let mut n = Normalizers::exact();
        t.configure(&mut n);
        let args = json!({});
        // exec keeps the host's exact rule (not the built-in exec rule) ...
        let d1 = json!({"status": "completed", "exitCode": 0, "aggregated": "x", "pid": 1});
        let d2 = json!({"status": "completed", "exitCode": 0, "aggregated": "x", "pid": 2});
        assert_ne!(
            n.fingerprint(&result("exec", &args, "", Some(&d1))),
            n.fingerprint(&result("exec", &args, "", Some(&d2)))
        );
        // ... and the configured entry is registered
        assert_eq!(
            n.fingerprint(&result("my_status", &args, "a", None)),
            Exact.fingerprint(&result("my_status", &args, "a", None))
        );
    }

    #[test]
    fn the_star_entry_gives_the_rule_for_every_tool_the_table_does_not_name() {
        let args = json!({"command": "python run.py"});
        let run = |line: u32| format!("/bin/bash: line {line}: foo: command not found");
        let fp = |n: &Normalizers, tool: &str, text: &str| {
            n.fingerprint(&result(tool, &args, text, None))
        };
        // Without it, every other tool gets the generic rule: a shell's line counter is noise.
        let generic = Tools::builtin().normalizers();
        assert_eq!(
            fp(&generic, "bash", &run(12)),
            fp(&generic, "bash", &run(13))
        );
        // With `exact`, every other tool's answer is compared as it is; named tools keep theirs.
        let t = Tools::from_config(&table("[\"*\"]\nnormalizer = \"exact\"\n")).unwrap();
        let exact = t.normalizers();
        assert_ne!(fp(&exact, "bash", &run(12)), fp(&exact, "bash", &run(13)));
        assert_eq!(fp(&exact, "bash", &run(12)), fp(&exact, "bash", &run(12)));
        let failed = crate::ResultInput {
            is_error: true,
            ..result("bash", &args, "boom", None)
        };
        assert_ne!(
            exact.fingerprint(&failed),
            fp(&exact, "bash", "boom"),
            "a failure is not the answer of the same text"
        );
        let done = |ms: u32| json!({"status": "completed", "exitCode": 0, "durationMs": ms, "aggregated": "ok"});
        let (d1, d2) = (done(5), done(9));
        assert_eq!(
            exact.fingerprint(&result("exec", &args, "ok", Some(&d1))),
            exact.fingerprint(&result("exec", &args, "ok", Some(&d2))),
            "`exec` keeps OpenClaw's rule"
        );
        assert_eq!(t.kind("*", None), ToolKind::Other);
        // A host's own set gets it as its rule for the tools it does not name.
        let mut host = Normalizers::exact();
        host.set_fallback(Arc::new(Generic));
        t.configure(&mut host);
        assert_ne!(fp(&host, "bash", &run(12)), fp(&host, "bash", &run(13)));
    }

    #[test]
    fn the_star_entry_takes_only_a_normaliser_and_volatile_keys() {
        for (body, key) in [
            ("kind = \"poll\"", "tools.*.kind"),
            ("arg = \"op\"", "tools.*.arg"),
            (
                "when-absent = true\nnormalizer = \"exact\"",
                "tools.*.when-absent",
            ),
        ] {
            let err = Tools::from_config(&table(&format!("[\"*\"]\n{body}\n")))
                .unwrap_err()
                .to_string();
            assert!(err.contains(key), "{err}");
            assert!(err.contains("every tool the table does not name"), "{err}");
        }
        let t = Tools::from_config(&table("[\"*\"]\nvolatile = [\"checked_at\"]\n")).unwrap();
        let n = t.normalizers();
        let args = json!({});
        let fp = |s: &str| n.fingerprint(&result("anything", &args, s, None));
        assert_eq!(
            fp("{\"a\": 1, \"checked_at\": 1}"),
            fp("{\"a\": 1, \"checked_at\": 2}")
        );
    }

    #[test]
    fn shells() {
        assert!(is_shell("/bin/bash"));
        assert!(is_shell("sh"));
        assert!(is_shell("/usr/bin/zsh"));
        assert!(!is_shell("/usr/bin/python"));
        assert!(!is_shell("bash5"));
    }

    #[test]
    fn the_configuration_page_lists_every_builtin_entry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
        let page = std::fs::read_to_string(path).unwrap();
        for b in BUILTIN {
            assert!(
                page.contains(&format!("| `{}` |", b.name)),
                "docs/configuration.md does not list the built-in tool `{}`",
                b.name
            );
        }
        for k in ToolKind::ALL {
            assert!(page.contains(&format!("`{k}`")), "kind {k} undocumented");
        }
        for n in NormalizerName::ALL {
            assert!(
                page.contains(&format!("`{}`", n.as_str())),
                "normaliser {} undocumented",
                n.as_str()
            );
        }
    }
}
