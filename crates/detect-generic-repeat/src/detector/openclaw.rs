//! OpenClaw's `generic_repeat` thresholds over a run-scoped history of calls and outcomes.

use super::GenericRepeat;
use crate::NAME;
use loopguard_core::{CallInfo, Cx, Finding, Fingerprint, Level, ResultInfo};
use serde::{Deserialize, Serialize};

/// One OpenClaw history record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Record {
    pub(super) call: Fingerprint,
    pub(super) scope: u64,
    pub(super) call_seq: u64,
    pub(super) result: Option<Fingerprint>,
}

impl GenericRepeat {
    pub(super) fn openclaw_call(
        &mut self,
        tool: &str,
        call: &CallInfo,
        cx: &mut Cx<'_>,
        blocked: bool,
    ) {
        let Some(oc) = &self.settings.openclaw else {
            return;
        };
        let scope = scope_of(cx);
        let mut critical = false;
        if !(oc.skip_known_polls && call.kind.is_poll()) {
            let mut recent = 0u32;
            let mut streak = 0u32;
            let mut latest: Option<Fingerprint> = None;
            let mut ended = false;
            for r in self.state.history.iter().rev() {
                if r.scope != scope || r.call != call.call_fp {
                    continue;
                }
                recent += 1;
                let Some(h) = r.result else { continue };
                if ended {
                    continue;
                }
                match latest {
                    None => {
                        latest = Some(h);
                        streak = 1;
                    }
                    Some(l) if l == h => streak += 1,
                    Some(_) => ended = true,
                }
            }
            // Key and evidence (every record of the call, oldest first, then this call) are
            // built only when a finding is reported.
            let args_hash = || format!("{tool}:{}", call.args_fp.to_hex());
            let seq = cx.seq();
            let history = &self.state.history;
            let evidence = || -> Vec<u64> {
                history
                    .iter()
                    .filter(|r| r.scope == scope && r.call == call.call_fp)
                    .map(|r| r.call_seq)
                    .chain(std::iter::once(seq))
                    .collect()
            };
            if let (true, Some(h)) = (streak >= oc.critical_threshold, latest) {
                let msg = format!(
                    "CRITICAL: Called {tool} with identical arguments and identical outcomes {streak} times. \
                     Session execution blocked to prevent runaway loops."
                );
                let key = format!("generic:{tool}:{}:{}", args_hash(), h.to_hex());
                cx.report(
                    Finding::new(NAME, Level::Critical, streak, key, msg)
                        .with_tool(tool)
                        .with_evidence(evidence()),
                );
                critical = true;
            } else if recent >= oc.warning_threshold {
                let msg = format!(
                    "WARNING: You have called {tool} {recent} times with identical arguments. If this is not \
                     making progress, stop retrying and report the task as failed."
                );
                let key = format!("generic:{tool}:{}", args_hash());
                cx.report(
                    Finding::new(NAME, Level::Warning, recent, key, msg)
                        .with_tool(tool)
                        .with_evidence(evidence()),
                );
            }
        }
        if !critical && !blocked {
            let cap = oc.history_size as usize;
            self.state.history.push_back(Record {
                call: call.call_fp,
                scope,
                call_seq: call.seq,
                result: None,
            });
            while self.state.history.len() > cap {
                self.state.history.pop_front();
            }
        }
    }

    pub(super) fn openclaw_result(&mut self, result: &ResultInfo, hash: Fingerprint, cx: &Cx<'_>) {
        let Some(oc) = &self.settings.openclaw else {
            return;
        };
        let scope = scope_of(cx);
        let found = self
            .state
            .history
            .iter_mut()
            .rev()
            .find(|r| r.scope == scope && r.call_seq == result.call.seq && r.result.is_none());
        match found {
            Some(r) => r.result = Some(hash),
            None => {
                self.state.history.push_back(Record {
                    call: result.call.call_fp,
                    scope,
                    call_seq: result.call.seq,
                    result: Some(hash),
                });
                while self.state.history.len() > oc.history_size as usize {
                    self.state.history.pop_front();
                }
            }
        }
    }
}

/// The run scope of OpenClaw's history: the host's run id when it gave one, else the run
/// index.
pub(super) fn scope_of(cx: &Cx<'_>) -> u64 {
    match cx.run_id() {
        Some(id) => Fingerprint::combine(&[b"id", id.as_bytes()]).short(),
        None => Fingerprint::combine(&[b"run", &cx.run().to_le_bytes()]).short(),
    }
}

#[cfg(test)]
mod tests;
