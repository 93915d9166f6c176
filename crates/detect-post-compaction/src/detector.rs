//! The post-compaction state machine: armed by a compaction, it watches the next
//! `window-size` completed tool calls and aborts when all of them are one identical
//! (tool, arguments, result) triple.

use crate::{Settings, ABORT_CODE, NAME};
use loopguard_core::{Cx, Detector, Event, Finding, Fingerprint, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One completed call seen while armed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Observation {
    tool: String,
    call: Fingerprint,
    result: Fingerprint,
    seq: u64,
}

/// Everything that changes while the detector runs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    /// Observations left before the guard disarms (0 = not armed).
    remaining: u32,
    /// The observations since the last arming (at most `window_size`).
    window: VecDeque<Observation>,
}

/// The `post-compaction-guard` detector (LG006).
///
/// ```
/// use loopguard_detect_post_compaction::{PostCompactionGuard, Settings};
/// use loopguard_core::Detector;
/// let d = PostCompactionGuard::new(Settings::default());
/// assert!(!d.is_armed());
/// assert_eq!(d.name(), "post-compaction-guard");
/// ```
#[derive(Debug)]
pub struct PostCompactionGuard {
    settings: Settings,
    state: State,
}

impl PostCompactionGuard {
    /// A detector with these settings, not armed.
    pub fn new(settings: Settings) -> PostCompactionGuard {
        PostCompactionGuard {
            settings,
            state: State::default(),
        }
    }

    /// The settings in use.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Whether a compaction armed the guard and its window is still open.
    pub fn is_armed(&self) -> bool {
        self.state.remaining > 0
    }

    /// Observations left in the open window (0 when not armed).
    pub fn remaining(&self) -> u32 {
        self.state.remaining
    }

    fn arm(&mut self) {
        self.state.remaining = self.settings.window_size;
        self.state.window.clear();
    }

    fn observe_result(&mut self, cx: &mut Cx<'_>) {
        if self.state.remaining == 0 {
            return;
        }
        let Some(r) = cx.result() else { return };
        let window = self.settings.window_size;
        self.state.remaining -= 1;
        if self.state.window.len() >= window as usize {
            self.state.window.pop_front();
        }
        let obs = Observation {
            tool: r.call.tool.clone(),
            call: r.call.call_fp,
            result: r.norm_fp,
            seq: cx.seq(),
        };
        let same = |o: &&Observation| o.call == obs.call && o.result == obs.result;
        let count = self.state.window.iter().filter(same).count() + 1;
        let count = u32::try_from(count).unwrap_or(u32::MAX);
        // The key, message and evidence are built only for a finding.
        if count >= window {
            let mut evidence: Vec<u64> = self
                .state
                .window
                .iter()
                .filter(same)
                .map(|o| o.seq)
                .collect();
            evidence.push(obs.seq);
            let tool = &obs.tool;
            let key = format!(
                "post-compaction:{tool}:{}:{}",
                obs.call.to_hex(),
                obs.result.to_hex()
            );
            let message = format!(
                "CRITICAL: tool {tool} repeated {count} times with identical arguments and identical results \
                 within {window} attempts after auto-compaction. The compaction did not break the loop. \
                 Aborting to prevent runaway resource use."
            );
            cx.report(
                Finding::new(NAME, Level::Critical, count, key, message)
                    .with_evidence(evidence)
                    .with_tool(tool.clone())
                    .with_abort(ABORT_CODE),
            );
        }
        self.state.window.push_back(obs);
        if self.state.remaining == 0 {
            self.state.window.clear();
        }
    }
}

impl Detector for PostCompactionGuard {
    loopguard_core::detector_basics!(name: NAME, interest: [Compaction, ToolResult], facts: NORMALIZED_RESULT);

    fn observe(&mut self, event: &Event<'_>, cx: &mut Cx<'_>) {
        match event {
            Event::Compaction => self.arm(),
            Event::ToolResult { .. } => self.observe_result(cx),
            _ => {}
        }
    }

    loopguard_core::snapshot_via_serde!(state);
}
