//! The state machine of `circuit-breaker`.

use crate::{Settings, NAME};
use loopguard_core::history::History;
use loopguard_core::{Cx, Detector, Event, Finding, Level};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    history: History,
}

/// OpenClaw's global circuit breaker: a call whose newest outcomes were identical
/// `threshold` times is blocked, whatever the tool and whatever the other detectors'
/// toggles; loopguard also counts a call and its alternating partner together.
#[derive(Default, Debug)]
pub struct CircuitBreaker {
    settings: Settings,
    state: State,
}

impl CircuitBreaker {
    /// A detector with `settings`.
    pub fn new(settings: Settings) -> CircuitBreaker {
        CircuitBreaker {
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

    /// The finding for the call about to run, if any.
    fn judge(&self, tool: &str, call: &loopguard_core::CallInfo) -> Option<Finding> {
        let h = &self.state.history;
        let threshold = self.settings.threshold;
        let single = h.no_progress_streak(&call.call_fp);
        if single.count >= threshold {
            let n = single.count;
            let result = single.result.map(|r| r.short()).unwrap_or(0);
            let message = format!(
                "CRITICAL: {tool} has repeated identical no-progress outcomes {n} times. \
                 Session execution blocked by global circuit breaker to prevent runaway loops."
            );
            let key = format!("global:{tool}:{:016x}:{result:016x}", call.args_fp.short());
            return Some(
                Finding::new(NAME, Level::Critical, n, key, message)
                    .with_evidence(single.seqs)
                    .with_tool(tool),
            );
        }
        if !self.settings.count_pairs || single.count < 2 {
            return None;
        }
        let (partner, partner_tool) = h.partner(&call.call_fp)?;
        let other = h.no_progress_streak(&partner);
        let n = single.count + other.count;
        if other.count < 2 || n < threshold {
            return None;
        }
        let message = format!(
            "CRITICAL: {tool} and {partner_tool} have repeated identical no-progress outcomes {n} times between them. \
             Session execution blocked by global circuit breaker to prevent runaway loops."
        );
        let (a, b) = if call.call_fp <= partner {
            (call.call_fp, partner)
        } else {
            (partner, call.call_fp)
        };
        let key = format!("global-pair:{:016x}|{:016x}", a.short(), b.short());
        let mut seqs = single.seqs;
        seqs.extend(other.seqs);
        seqs.sort_unstable();
        Some(
            Finding::new(NAME, Level::Critical, n, key, message)
                .with_evidence(seqs)
                .with_tool(tool),
        )
    }
}

impl Detector for CircuitBreaker {
    // OpenClaw's history is scoped to the run and the user turn.
    loopguard_core::detector_basics!(name: NAME, interest: [ToolCall, ToolResult], facts: NORMALIZED_RESULT, run_scoped: state.history);

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::ToolCall { id, tool, .. } => {
                let Some(call) = cx.call() else { return };
                match self.judge(tool, call) {
                    // A blocked call does not run; like OpenClaw, it is not recorded. If it
                    // runs anyway, its result is recorded as a complete record.
                    Some(f) => cx.report(f),
                    None => {
                        let cap = self.cap();
                        self.state.history.record_call(id, call, cap);
                    }
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
