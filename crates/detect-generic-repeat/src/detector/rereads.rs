//! The re-read rule: a call that only looks, answered the same each time, made again and
//! again with nothing but looks between.

use super::GenericRepeat;
use crate::NAME;
use loopguard_core::{Cx, Finding, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One look: its call and its answer (short fingerprints; no answer for a failure or
/// silence, which only takes its place among the looks), and its sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Look {
    call: u64,
    answer: Option<u64>,
    seq: u64,
}

/// The newest looks since a call that did something else, and the calls among them already
/// warned about.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Rereads {
    looks: VecDeque<Look>,
    warned: VecDeque<u64>,
}

impl Rereads {
    /// A call that does something else: what the looks saw may have changed.
    pub(super) fn clear(&mut self) {
        self.looks.clear();
        self.warned.clear();
    }
}

impl GenericRepeat {
    /// Records a look (`call` answered `answer`; `None`: a failure or nothing, which only
    /// takes its place among the looks) and warns when the same look got the same answer
    /// `rereads.warning-threshold` times among the newest `rereads.window` looks, once per
    /// call until the window is emptied (of the calls warned about, the newest
    /// `rereads.window` are remembered), unless the exact streak already warned about this
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
        let window = rr.window as usize;
        while st.looks.len() >= window {
            st.looks.pop_front();
        }
        st.looks.push_back(Look {
            call,
            answer,
            seq: cx.seq(),
        });
        let Some(answer) = answer else {
            return;
        };
        let same = |l: &&Look| l.call == call && l.answer == Some(answer);
        let count = st.looks.iter().filter(same).count();
        if count < rr.warn_threshold as usize || st.warned.contains(&call) {
            return;
        }
        // Warned once while the call stays among the looks (a window holds at most
        // `window` calls to remember).
        super::push_capped(&mut st.warned, call, window);
        // One steer per loop: the exact streak speaks for back-to-back repeats.
        let streak = &self.state.streak;
        if streak.warned && streak.last.as_ref().is_some_and(|p| p.call.short() == call) {
            return;
        }
        let st = &self.state.rereads;
        let span = st
            .looks
            .iter()
            .position(|l| same(&l))
            .map_or(0, |i| st.looks.len() - i);
        let evidence: Vec<u64> = st.looks.iter().filter(same).map(|l| l.seq).collect();
        let msg = format!(
            "Loop warning: you looked at the same thing with `{tool}` {count} times in the last {span} \
             calls and got the same answer each time; nothing you did in between changed it. Use \
             what you already have: act on it, or give your final answer."
        );
        let count = u32::try_from(count).unwrap_or(u32::MAX);
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
