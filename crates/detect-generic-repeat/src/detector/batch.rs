//! The whole-batch streak: the same parallel batch of calls, with the same results, again
//! and again.

use super::{push_bounded, short_hex, GenericRepeat, Pair};
use crate::NAME;
use loopguard_core::{CallInfo, Cx, Finding, Fingerprint, Level, ResultInfo, MAX_EVIDENCE};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How many distinct calls of one batch are kept to recognise the batch's calls again.
pub(super) const MAX_BATCH_CALLS: usize = 32;
/// How many tool names of one batch are kept for messages.
pub(super) const MAX_BATCH_TOOLS: usize = 4;

/// A parallel batch whose results are still arriving.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct OpenBatch {
    pub(super) id: u64,
    pub(super) size: u32,
    pub(super) seen: u32,
    /// Order-independent sum of the pairs' fingerprints (four 64-bit lanes).
    pub(super) sum: [u64; 4],
    pub(super) counted: u32,
    pub(super) calls: Vec<Fingerprint>,
    pub(super) tools: Vec<String>,
    pub(super) last: Option<Pair>,
    pub(super) seqs: Vec<u64>,
}

/// The whole-batch streak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct BatchStreak {
    pub(super) open: Option<OpenBatch>,
    pub(super) last_sig: Option<Fingerprint>,
    pub(super) calls: Vec<Fingerprint>,
    pub(super) tools: Vec<String>,
    pub(super) size: u32,
    pub(super) count: u32,
    pub(super) warned: bool,
    pub(super) blocked: u32,
    pub(super) seqs: VecDeque<u64>,
}

impl GenericRepeat {
    pub(super) fn batch_result(
        &mut self,
        result: &ResultInfo,
        pair: Option<Pair<&str>>,
        cx: &mut Cx<'_>,
    ) {
        if self
            .state
            .batch
            .open
            .as_ref()
            .is_some_and(|b| b.id != result.call.batch)
        {
            self.finish_batch(cx);
        }
        let open = self.state.batch.open.get_or_insert_with(|| OpenBatch {
            id: result.call.batch,
            size: result.batch_size,
            ..OpenBatch::default()
        });
        open.size = open.size.max(result.batch_size);
        open.seen = open.seen.saturating_add(1);
        if let Some(p) = pair {
            let h = Fingerprint::combine(&[p.call.as_bytes(), p.result.as_bytes()]);
            for (lane, chunk) in open.sum.iter_mut().zip(h.as_bytes().chunks_exact(8)) {
                let mut b = [0u8; 8];
                b.copy_from_slice(chunk);
                *lane = lane.wrapping_add(u64::from_le_bytes(b));
            }
            open.counted = open.counted.saturating_add(1);
            if open.calls.len() < MAX_BATCH_CALLS && !open.calls.contains(&p.call) {
                open.calls.push(p.call);
            }
            if open.tools.len() < MAX_BATCH_TOOLS && !open.tools.iter().any(|t| t == p.tool) {
                open.tools.push(p.tool.to_owned());
            }
            if open.seqs.len() < MAX_EVIDENCE {
                open.seqs.push(cx.seq());
            }
            open.last = Some(p.owned(open.last.take()));
        }
        if open.seen >= open.size {
            self.finish_batch(cx);
        }
    }

    /// Closes the open batch: compares its last result with the streak, and its signature
    /// with the previous batch's.
    pub(super) fn finish_batch(&mut self, cx: &mut Cx<'_>) {
        let Some(open) = self.state.batch.open.take() else {
            return;
        };
        if open.counted == 0 {
            return;
        }
        if self.settings.streak {
            // Only the batch's last result is compared with the previous serial result: a
            // different one ends the streak, an equal one leaves it where it was.
            let s = &mut self.state.streak;
            if open.last.is_some() && s.last != open.last {
                s.last = None;
                s.count = 0;
                s.warned = false;
                s.seqs.clear();
            }
        }
        if !self.settings.batch_streak {
            return;
        }
        let mut bytes = Vec::with_capacity(36);
        for lane in open.sum {
            bytes.extend_from_slice(&lane.to_le_bytes());
        }
        bytes.extend_from_slice(&open.counted.to_le_bytes());
        let sig = Fingerprint::of_bytes(&bytes);
        let b = &mut self.state.batch;
        if b.last_sig == Some(sig) {
            b.count = b.count.saturating_add(1);
        } else {
            b.last_sig = Some(sig);
            b.count = 1;
            b.warned = false;
            b.seqs.clear();
            b.calls = open.calls;
            b.tools = open.tools;
            b.size = open.counted;
        }
        b.blocked = 0;
        for s in open.seqs {
            push_bounded(&mut b.seqs, s);
        }
        if b.count >= self.settings.warn_threshold && !b.warned {
            b.warned = true;
            let msg = format!(
                "Loop warning: you issued the same batch of {} tool calls ({}) {} times in a row and got the \
                 same results every time. Repeating it will not change the outcome: change the calls or give \
                 your final answer.",
                b.size,
                tool_list(&b.tools),
                b.count
            );
            let f = Finding::new(NAME, Level::Warning, b.count, batch_key(&sig), msg)
                .with_tool(b.tools.first().cloned().unwrap_or_default())
                .with_evidence(b.seqs.iter().copied().collect());
            cx.report(f);
        }
    }

    pub(super) fn check_batch_block(&mut self, call: &CallInfo, cx: &mut Cx<'_>) -> bool {
        let block_at = self.settings.block_threshold.saturating_sub(1);
        let b = &mut self.state.batch;
        let Some(sig) = b.last_sig else { return false };
        if b.count < block_at || !b.calls.contains(&call.call_fp) {
            return false;
        }
        b.blocked = b.blocked.saturating_add(1);
        let msg = format!(
            "Blocked: `{}` belongs to a batch of {} tool calls ({}) that returned the same results {} times in \
             a row; this repeat is refused. Make different calls or give your final answer.",
            call.tool,
            b.size,
            tool_list(&b.tools),
            b.count
        );
        let mut evidence: Vec<u64> = b.seqs.iter().copied().collect();
        evidence.push(cx.seq());
        let f = Finding::new(
            NAME,
            Level::Critical,
            b.count.saturating_add(b.blocked),
            batch_key(&sig),
            msg,
        )
        .with_tool(call.tool.clone())
        .with_evidence(evidence);
        cx.report(f);
        true
    }
}

pub(super) fn batch_key(sig: &Fingerprint) -> String {
    format!("batch:{}", short_hex(sig))
}

pub(super) fn tool_list(tools: &[String]) -> String {
    tools
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
