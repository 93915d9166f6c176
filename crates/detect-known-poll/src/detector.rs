//! The state machine of `known-poll-no-progress`.

use crate::{Settings, NAME};
use loopguard_core::history::History;
use loopguard_core::{Cx, Detector, Event, Finding, Level};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    history: History,
}

/// Detects polls (status calls) whose normalised outcome stopped changing: OpenClaw's
/// `known_poll_no_progress`, judged on the call before it runs.
#[derive(Default, Debug)]
pub struct KnownPoll {
    settings: Settings,
    state: State,
}

impl KnownPoll {
    /// A detector with `settings`.
    pub fn new(settings: Settings) -> KnownPoll {
        KnownPoll {
            settings,
            state: State::default(),
        }
    }

    /// The resolved settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn cap(&self) -> usize {
        self.settings.history_size as usize
    }
}

impl Detector for KnownPoll {
    // OpenClaw's history is scoped to the run and the user turn.
    loopguard_core::detector_basics!(name: NAME, interest: [ToolCall, ToolResult], facts: NORMALIZED_RESULT, run_scoped: state.history);

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::ToolCall { id, tool, args, .. } => {
                let Some(call) = cx.call() else { return };
                let mut blocked = false;
                if call.kind.is_poll() || self.settings.is_poll(tool, args) {
                    let streak = self.state.history.no_progress_streak(&call.call_fp);
                    let level = if streak.count >= self.settings.critical_threshold {
                        Some(Level::Critical)
                    } else if streak.count >= self.settings.warning_threshold {
                        Some(Level::Warning)
                    } else {
                        None
                    };
                    if let Some(level) = level {
                        blocked = level == Level::Critical;
                        let n = streak.count;
                        let message = match level {
                            Level::Critical | Level::Fatal => format!(
                                "CRITICAL: Called {tool} with identical arguments and no progress {n} times. \
                                 This appears to be a stuck polling loop. Session execution blocked to prevent resource waste."
                            ),
                            Level::Warning => format!(
                                "WARNING: You have called {tool} {n} times with identical arguments and no progress. \
                                 Stop polling and either (1) increase wait time between checks, or (2) report the task \
                                 as failed if the process is stuck."
                            ),
                        };
                        let result = streak.result.map(|r| r.short()).unwrap_or(0);
                        let key =
                            format!("poll:{tool}:{:016x}:{result:016x}", call.args_fp.short());
                        cx.report(
                            Finding::new(NAME, level, n, key, message)
                                .with_evidence(streak.seqs)
                                .with_tool(*tool),
                        );
                    }
                }
                // A blocked call does not run; like OpenClaw, it is not recorded. If it runs
                // anyway, its result is recorded as a complete record.
                if !blocked {
                    let cap = self.cap();
                    self.state.history.record_call(id, call, cap);
                }
            }
            _ => {
                let cap = self.cap();
                self.state.history.record_outcome(event, cx, cap);
            }
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}
