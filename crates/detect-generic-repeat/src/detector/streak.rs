//! pi-loop-guard's consecutive streak: the same (tool, arguments, result) again and again;
//! a warning at `warning-threshold`, a sticky block from `critical-threshold` (the `polls`
//! thresholds for polling calls).

use super::{push_bounded, short_hex, times, GenericRepeat, Pair};
use crate::NAME;
use loopguard_core::{CallInfo, Cx, Finding, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// pi-loop-guard's consecutive streak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Streak {
    pub(super) last: Option<Pair>,
    pub(super) count: u32,
    pub(super) warned: bool,
    /// Result sequence numbers of the streak (newest kept).
    pub(super) seqs: VecDeque<u64>,
    /// The call that was blocked, with the streak length at the block: every further
    /// same-args attempt is blocked too.
    pub(super) sticky: Option<(Pair, u32)>,
    /// Attempts blocked since the block began.
    pub(super) blocked: u32,
    /// The call counter when the streak's first call was seen: the streak spans the calls
    /// from there to the newest (calls whose results were transparent included).
    #[serde(default)]
    pub(super) start_call: u64,
}

impl GenericRepeat {
    /// The streak's (warn, block) thresholds: the `polls` ones for a known polling call.
    pub(super) fn streak_thresholds(&self, known_poll: bool) -> (u32, u32) {
        match self.settings.polls {
            Some(p) if known_poll => (p.warn_threshold, p.block_threshold),
            _ => (self.settings.warn_threshold, self.settings.block_threshold),
        }
    }

    pub(super) fn streak_result(&mut self, pair: Pair<&str>, known_poll: bool, cx: &mut Cx<'_>) {
        let (warn_at, _) = self.streak_thresholds(known_poll);
        let s = &mut self.state.streak;
        if s.last.as_ref().is_some_and(|l| l.is(&pair)) {
            s.count = s.count.saturating_add(1);
        } else {
            s.count = 1;
            s.warned = false;
            s.seqs.clear();
            // Different arguments (or, when a block was not enforced, a different result):
            // the block is lifted.
            s.sticky = None;
            s.blocked = 0;
            s.last = Some(pair.owned(s.last.take()));
            s.start_call = self.state.calls;
        }
        push_bounded(&mut s.seqs, cx.seq());
        if s.count >= warn_at && !s.warned {
            s.warned = true;
            let span = self.state.calls.saturating_sub(s.start_call) + 1;
            if let Some(p) = &s.last {
                let msg = format!(
                    "Loop warning: you called `{}` with the same arguments {} and got the same \
                     result every time. Repeating it will not change the outcome: change the arguments, use a \
                     different tool, or give your final answer.",
                    p.tool,
                    times(s.count, span)
                );
                let f = Finding::new(NAME, Level::Warning, s.count, streak_key(p), msg)
                    .with_tool(p.tool.clone())
                    .with_evidence(s.seqs.iter().copied().collect());
                cx.report(f);
            }
        }
    }

    pub(super) fn check_streak_block(
        &mut self,
        call: &CallInfo,
        known_poll: bool,
        cx: &mut Cx<'_>,
    ) -> bool {
        let (_, block) = self.streak_thresholds(known_poll);
        let block_at = block.saturating_sub(1);
        let s = &mut self.state.streak;
        let (pair, count) = match (&s.sticky, &s.last) {
            (Some((p, c)), _) if p.call == call.call_fp => (p.clone(), *c),
            (_, Some(l)) if l.call == call.call_fp && s.count >= block_at => {
                s.sticky = Some((l.clone(), s.count));
                s.blocked = 0;
                (l.clone(), s.count)
            }
            _ => return false,
        };
        s.blocked = s.blocked.saturating_add(1);
        let attempt = count.saturating_add(s.blocked);
        let span = self.state.calls.saturating_sub(s.start_call);
        let msg = format!(
            "Blocked: this exact `{}` call (same arguments) already returned the same result {}; \
             identical attempt {} is refused. Make a different call or give your final answer.",
            pair.tool,
            times(count, span),
            attempt
        );
        let mut evidence: Vec<u64> = s.seqs.iter().copied().collect();
        evidence.push(cx.seq());
        let f = Finding::new(NAME, Level::Critical, attempt, streak_key(&pair), msg)
            .with_tool(pair.tool.clone())
            .with_evidence(evidence);
        cx.report(f);
        true
    }
}

pub(super) fn streak_key(p: &Pair) -> String {
    format!(
        "streak:{}:{}:{}",
        p.tool,
        short_hex(&p.args),
        short_hex(&p.result)
    )
}

#[cfg(test)]
mod tests;
