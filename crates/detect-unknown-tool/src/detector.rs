//! The state machine of `unknown-tool`.

use crate::shapes::{basename, command_words, is_shell_syntax_error, openclaw_name, shell_name};
use crate::{Settings, NAME};
use loopguard_core::{Cx, Detector, Event, Finding, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One call and, once known, whether it failed because its tool does not exist.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    tool: String,
    /// The call's sequence number (an orphan result's own): a result answers the call the
    /// bus paired it with.
    seq: u64,
    /// Command words of the call (for shell tools).
    words: Vec<String>,
    /// The outcome is known.
    done: bool,
    /// The missing tool's name (lower-cased), when the outcome says so.
    name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    records: VecDeque<Record>,
}

/// Detects retries of a tool that does not exist: OpenClaw's `unknown_tool_repeat`, the
/// shell's "command not found" for agents whose tool is a command, and calls to names outside
/// the host's list of available tools.
#[derive(Default, Debug)]
pub struct UnknownTool {
    settings: Settings,
    state: State,
}

/// The streak of consecutive unavailable-tool failures of one tool.
struct Streak {
    name: String,
    count: u32,
    seqs: Vec<u64>,
}

impl UnknownTool {
    /// A detector with `settings`.
    pub fn new(settings: Settings) -> UnknownTool {
        UnknownTool {
            settings,
            state: State::default(),
        }
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn push(&mut self, rec: Record) {
        self.state.records.push_back(rec);
        let cap = (self.settings.history_size as usize).max(1);
        while self.state.records.len() > cap {
            self.state.records.pop_front();
        }
    }

    /// Records a call, outcome not known yet; a full history reuses the strings of the
    /// record it forgets.
    fn push_call(&mut self, tool: &str, seq: u64, words: Vec<String>) {
        let cap = (self.settings.history_size as usize).max(1);
        let full = self.state.records.len() >= cap;
        let rec = match full.then(|| self.state.records.pop_front()).flatten() {
            Some(mut r) => {
                r.tool.clear();
                r.tool.push_str(tool);
                r.seq = seq;
                r.words = words;
                r.done = false;
                r.name = None;
                r
            }
            None => Record {
                tool: tool.to_owned(),
                seq,
                words,
                done: false,
                name: None,
            },
        };
        self.push(rec);
    }

    /// OpenClaw's unknown-tool streak for `tool`: newest to oldest, stop at the first record
    /// of another tool or without an unknown-tool name; the first fixes the name.
    fn streak(&self, tool: &str) -> Option<Streak> {
        let mut s: Option<Streak> = None;
        for r in self.state.records.iter().rev() {
            if r.tool != tool {
                break;
            }
            let Some(name) = &r.name else { break };
            match &mut s {
                None => {
                    s = Some(Streak {
                        name: name.clone(),
                        count: 1,
                        seqs: vec![r.seq],
                    })
                }
                Some(st) if st.name == *name => {
                    st.count += 1;
                    st.seqs.push(r.seq);
                }
                Some(_) => break,
            }
        }
        if let Some(st) = &mut s {
            st.seqs.reverse();
        }
        s
    }

    fn judge(&self, tool: &str) -> Option<Finding> {
        let st = &self.settings;
        if !st.available_tools.is_empty() && !st.available_tools.iter().any(|t| t == tool) {
            let message = format!(
                "CRITICAL: tool {tool} is not available here. Stop calling it; use one of the available tools \
                 ({}) or answer without it.",
                st.available_tools.join(", ")
            );
            let key = format!("unknown-tool:{tool}:{}", tool.to_lowercase());
            return Some(Finding::new(NAME, Level::Critical, 1, key, message).with_tool(tool));
        }
        let s = self.streak(tool)?;
        let (name, n) = (&s.name, s.count);
        let level = if n >= st.critical_threshold {
            Level::Critical
        } else if st.warn && n >= st.warning_threshold {
            Level::Warning
        } else {
            return None;
        };
        let message = match level {
            Level::Critical | Level::Fatal => format!(
                "CRITICAL: attempted unavailable tool {name} {n} times. Stop retrying that missing tool and answer without it."
            ),
            Level::Warning => format!(
                "WARNING: attempted unavailable tool {name} {n} times. It does not exist here: stop retrying it and \
                 use an available tool, or answer without it."
            ),
        };
        let key = format!("unknown-tool:{tool}:{name}");
        Some(
            Finding::new(NAME, level, n, key, message)
                .with_evidence(s.seqs)
                .with_tool(tool),
        )
    }

    /// The unknown-tool name of an outcome, if it has one.
    fn outcome_name(&self, rec: &Record, content: &str, is_error: bool) -> Option<String> {
        if is_error {
            if let Some(n) = openclaw_name(content) {
                return Some(n);
            }
        }
        if !self.settings.shell_shapes {
            return None;
        }
        if let Some(n) = shell_name(&rec.tool, &rec.words, content) {
            return Some(n);
        }
        // The shell could not parse a command whose first word is already known to be
        // missing: the same failed attempt (the command never ran).
        if is_shell_syntax_error(content) {
            let prev = self
                .state
                .records
                .iter()
                .rev()
                .find(|r| r.done && r.seq != rec.seq)?;
            let own = basename(&rec.tool);
            if prev.tool == rec.tool && prev.name.as_deref() == Some(own.as_str()) {
                return Some(own);
            }
        }
        None
    }
}

impl Detector for UnknownTool {
    // The records are scoped to the run and the user turn.
    loopguard_core::detector_basics!(name: NAME, interest: [ToolCall, ToolResult], facts: NONE, run_scoped: state.records);

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::ToolCall { tool, args, .. } => match self.judge(tool) {
                // A blocked call does not run and is not recorded; if it runs anyway, its
                // result is recorded on its own.
                Some(f) if f.level == Level::Critical => cx.report(f),
                other => {
                    if let Some(f) = other {
                        cx.report(f);
                    }
                    let words = if self.settings.shell_shapes {
                        command_words(args)
                    } else {
                        Vec::new()
                    };
                    self.push_call(tool, cx.seq(), words);
                }
            },
            Event::ToolResult {
                tool,
                content,
                is_error,
                ..
            } => {
                // The call the bus paired the result with (none for an orphan): the bus owns
                // pairing, also for a host that numbers its results its own way.
                let call = cx.result().filter(|r| !r.orphan).map(|r| r.call.seq);
                let pos = self
                    .state
                    .records
                    .iter()
                    .rposition(|r| !r.done && Some(r.seq) == call);
                // The pending record is judged in place: still pending, it is not the
                // previous outcome that `outcome_name` looks for.
                match pos {
                    Some(i) => {
                        let name = self.outcome_name(&self.state.records[i], content, *is_error);
                        let rec = &mut self.state.records[i];
                        rec.name = name;
                        rec.done = true;
                    }
                    None => {
                        let mut rec = Record {
                            tool: (*tool).to_owned(),
                            seq: cx.seq(),
                            words: Vec::new(),
                            done: false,
                            name: None,
                        };
                        rec.name = self.outcome_name(&rec, content, *is_error);
                        rec.done = true;
                        self.push(rec);
                    }
                }
            }
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}
