//! The re-read rule: a call that only looks, answered the same each time, made again and
//! again with nothing but looks between.

use super::GenericRepeat;
use crate::NAME;
use loopguard_core::{Cx, Finding, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The newest looks since a call that did something else: each look's call and answer
/// (short fingerprints) and sequence number, and the calls already warned about.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Rereads {
    looks: VecDeque<(u64, u64)>,
    seqs: VecDeque<u64>,
    warned: Vec<u64>,
}

/// The answer kept for a look that failed or answered nothing: it takes its place in the
/// window (the window counts looks) and matches no answer.
const NO_ANSWER: u64 = u64::MAX;

impl Rereads {
    /// A call that does something else: what the looks saw may have changed.
    pub(super) fn clear(&mut self) {
        self.looks.clear();
        self.seqs.clear();
        self.warned.clear();
    }
}

impl GenericRepeat {
    /// Records a look (`call` answered `answer`; `None`: a failure or nothing, which only
    /// takes its place among the looks) and warns when the same look got the same answer
    /// `rereads.warning-threshold` times among the newest `rereads.window` looks, once per
    /// call until the window is emptied, unless the exact streak already warned about this
    /// call.
    pub(super) fn reread_result(
        &mut self,
        tool: &str,
        call: u64,
        answer: Option<u64>,
        cx: &mut Cx<'_>,
    ) {
        let Some(rr) = self.settings.rereads else {
            return;
        };
        let st = &mut self.state.rereads;
        while st.looks.len() >= rr.window as usize {
            st.looks.pop_front();
            st.seqs.pop_front();
        }
        st.looks.push_back((call, answer.unwrap_or(NO_ANSWER)));
        st.seqs.push_back(cx.seq());
        let Some(answer) = answer.filter(|a| *a != NO_ANSWER) else {
            return;
        };
        let same = st.looks.iter().filter(|l| **l == (call, answer)).count();
        if same < rr.warn_threshold as usize || st.warned.contains(&call) {
            return;
        }
        st.warned.push(call);
        // One steer per loop: the exact streak speaks for back-to-back repeats.
        let streak = &self.state.streak;
        if streak.warned && streak.last.as_ref().is_some_and(|p| p.call.short() == call) {
            return;
        }
        let st = &self.state.rereads;
        let at: Vec<usize> = (0..st.looks.len())
            .filter(|&i| st.looks.get(i) == Some(&(call, answer)))
            .collect();
        let span = at.first().map_or(0, |&i| st.looks.len() - i);
        let evidence: Vec<u64> = at.iter().filter_map(|&i| st.seqs.get(i).copied()).collect();
        let msg = format!(
            "Loop warning: you looked at the same thing with `{tool}` {same} times in the last {span} \
             calls and got the same answer each time; nothing you did in between changed it. Use \
             what you already have: act on it, or give your final answer."
        );
        let count = u32::try_from(same).unwrap_or(u32::MAX);
        cx.report(
            Finding::new(
                NAME,
                Level::Warning,
                count,
                format!("reread:{call:016x}"),
                msg,
            )
            .with_tool(tool.to_owned())
            .with_evidence(evidence),
        );
    }
}
