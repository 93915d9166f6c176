//! The near-duplicate streak: the same call again and again whose consecutive results barely
//! change (shingle-sketch Jaccard).

use super::{push_bounded, short_hex, GenericRepeat, Pair};
use crate::sketch::{LazySketch, Sketch};
use crate::NAME;
use loopguard_core::shape::Trend;
use loopguard_core::{CallInfo, Cx, Finding, Fingerprint, Level};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The near-duplicate streak: consecutive results of one call, each a near-duplicate of the
/// one before. Only the newest result's sketch is kept.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct NearStreak {
    /// The call of the streak (`None`: no streak).
    pub(super) call: Option<Fingerprint>,
    pub(super) tool: String,
    pub(super) args: Fingerprint,
    /// The newest result's sketch.
    pub(super) sketch: LazySketch,
    /// The newest result's identity (`result-identity`): an identical result is a
    /// near-duplicate whatever its raw text.
    pub(super) result: Option<Fingerprint>,
    /// Results in the streak.
    pub(super) count: u32,
    pub(super) warned: bool,
    /// Attempts blocked since the block began.
    pub(super) blocked: u32,
    /// Result sequence numbers of the streak (newest kept).
    pub(super) seqs: VecDeque<u64>,
    /// The call counter at the streak's first call.
    #[serde(default)]
    pub(super) start_call: u64,
    /// Every result of the streak was a failure (flagged by the host, or an error message);
    /// for a streak of one result not judged yet, provisionally true.
    #[serde(default)]
    pub(super) failed: bool,
    /// The newest result as a failure ([`failure_of`]): `None` while not judged (its cut text
    /// is kept in `sketch`, and judged only when the same call comes again); `Some(None)`
    /// not a failure; `Some(Some(failure))` a failure.
    #[serde(default)]
    pub(super) last_failure: Option<Option<Failure>>,
    /// The newest result carried the error flag.
    #[serde(default)]
    pub(super) last_error: bool,
    /// The numbers of the streak's failures ([`Failure::numbers`]): numbers moving
    /// steadily (a count of failing tests falling) are progress.
    #[serde(default)]
    pub(super) trend: Trend,
    /// The newest failure's numbers moved steadily: while they do, the streak is not blocked
    /// as failing.
    #[serde(default)]
    pub(super) moving: bool,
}

impl NearStreak {
    /// A new streak of one result of `pair`'s call, begun at call counter `start_call`. The
    /// buffers of the old one (tool name, sketch text, sequence numbers) are kept for it.
    fn restart(&mut self, pair: &Pair<&str>, start_call: u64, judged: Option<Option<Failure>>) {
        let mut tool = std::mem::take(&mut self.tool);
        tool.clear();
        tool.push_str(pair.tool);
        let mut seqs = std::mem::take(&mut self.seqs);
        seqs.clear();
        *self = NearStreak {
            call: Some(pair.call),
            tool,
            args: pair.args,
            sketch: std::mem::take(&mut self.sketch),
            count: 1,
            seqs,
            start_call,
            failed: judged.as_ref().is_none_or(|f| f.is_some()),
            trend: std::mem::take(&mut self.trend),
            last_failure: judged,
            ..NearStreak::default()
        };
        self.trend.restart();
        if let Some(Some(f)) = &self.last_failure {
            self.trend.step(&f.numbers);
        }
    }
}

/// A failing result's identities: its shape (numbers, ids and volatile fields masked) and the
/// set of its words (order ignored). Two failures of one call are the same failure when
/// either agrees: a new pid or request id changes neither's shape, a set printed in another
/// order keeps its words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Failure {
    shape: Fingerprint,
    words: Fingerprint,
    /// The numbers the shape abstracted that can show progress ([`progress_numbers`]).
    #[serde(default)]
    numbers: Vec<u64>,
}

impl Failure {
    fn same(&self, other: &Failure) -> bool {
        self.shape == other.shape || self.words == other.words
    }
}

/// A result as a failure, read from its cut text (`head`, then `tail`) when it carried the
/// error flag or reads as an error message; `None` otherwise. The same call's echo is the
/// same in each of its results, so the shape is taken without one.
fn failure_of(head: &str, tail: &str, is_error: bool) -> Option<Failure> {
    if !(is_error || loopguard_core::shape::looks_like_error(head)) {
        return None;
    }
    let none = loopguard_core::shape::Echo::none();
    let joined;
    let text = if tail.is_empty() {
        head
    } else {
        joined = format!("{head}\n{tail}");
        &joined
    };
    let shape = loopguard_core::shape::result_shape(&none, text);
    Some(Failure {
        shape: shape.fp,
        words: loopguard_core::shape::words_shape(text),
        numbers: progress_numbers(&shape.numbers),
    })
}

/// The numbers of a failure that can show progress: counts below 1,000 (`3 of 10 replicas
/// ready`). A pid, a port or a byte count rises or jumps from run to run by itself.
fn progress_numbers(numbers: &[u64]) -> Vec<u64> {
    numbers.iter().copied().filter(|n| *n < 1000).collect()
}

impl GenericRepeat {
    /// Extends the streak when this result of the same call is a near-duplicate of the
    /// previous one; otherwise starts a new streak at this result.
    pub(super) fn near_result(
        &mut self,
        pair: &Pair<&str>,
        content: &str,
        is_error: bool,
        cx: &mut Cx<'_>,
    ) {
        let Some(nd) = &self.settings.near_duplicate else {
            return;
        };
        let n = &mut self.state.near;
        let same_result = n.result == Some(pair.result);
        // The sketch is computed only to compare it: a result that is not compared keeps its
        // text for the next one.
        let mut sketch = None;
        let mut similar = || {
            let s = Sketch::of_text(content);
            let yes = n.sketch.get().similar(&s, nd.similarity_permille);
            sketch = Some(s);
            yes
        };
        let same_call = n.call == Some(pair.call);
        // With `failure-critical-threshold`, a failure of the same call with the same shape
        // as the streak's newest (numbers, ids and volatile fields masked) is the same
        // failure again, however short the output and however much of it a pid or a
        // request id changed. Results are judged only when the same call comes again: the
        // newest one then from its kept text.
        let judged = (same_call && nd.failure_block_threshold.is_some()).then(|| {
            let prev = match n.last_failure.take() {
                Some(f) => f,
                None => {
                    let f = n
                        .sketch
                        .text()
                        .and_then(|(head, tail)| failure_of(head, tail, n.last_error));
                    n.failed = n.failed && f.is_some();
                    if let Some(f) = &f {
                        n.trend.restart();
                        n.trend.step(&f.numbers);
                    }
                    f
                }
            };
            let failed = is_error || cx.looks_like_error(content);
            let (head, tail) = crate::sketch::cut(content);
            let now = if failed {
                failure_of(head, tail, true)
            } else {
                None
            };
            (prev, now)
        });
        let same_failure = judged
            .as_ref()
            .is_some_and(|(prev, now)| match (prev, now) {
                (Some(p), Some(n)) => p.same(n),
                _ => false,
            });
        if same_call && (same_result || same_failure || similar()) {
            n.count = n.count.saturating_add(1);
            let now = judged.and_then(|(_, now)| now);
            // A failure whose numbers move steadily is making progress: the streak still
            // warns, but is not blocked as failing while they move.
            n.moving = now.as_ref().is_some_and(|f| n.trend.step(&f.numbers));
            n.failed = n.failed && now.is_some();
            n.last_failure = Some(now);
        } else {
            n.restart(pair, self.state.calls, judged.map(|(_, now)| now));
        }
        n.last_error = is_error;
        n.sketch.set(content, sketch);
        n.result = Some(pair.result);
        push_bounded(&mut n.seqs, cx.seq());
    }

    /// On the next call of the streak: warns on the `warning-threshold`-th consecutive call (one
    /// call earlier when the same call also came before the streak, within the last
    /// `recurrence-window` calls), blocks from the
    /// `critical-threshold`-th (sticky: a blocked call's result never counts, so every further
    /// attempt is blocked too). Returns whether the call was blocked.
    pub(super) fn check_near(&mut self, call: &CallInfo, cx: &mut Cx<'_>, critical: bool) -> bool {
        let Some(nd) = &self.settings.near_duplicate else {
            return false;
        };
        // The exact streak already warned about this very call: one steer is enough.
        let exact_warned = self.state.streak.warned
            && self
                .state
                .streak
                .last
                .as_ref()
                .is_some_and(|p| p.call == call.call_fp);
        let n = &mut self.state.near;
        if n.call != Some(call.call_fp) {
            return false;
        }
        let next = n.count.saturating_add(1);
        let attempt = next.saturating_add(n.blocked);
        // Key and evidence are built only when a finding is reported.
        let key = |n: &NearStreak| format!("near:{}:{}", n.tool, short_hex(&n.args));
        let evidence = |n: &NearStreak, seq: u64| -> Vec<u64> {
            n.seqs.iter().copied().chain(std::iter::once(seq)).collect()
        };
        let pct = nd.similarity_permille.div_ceil(10);
        let blocks = nd.block_threshold.is_some_and(|b| next >= b);
        let blocks_failing =
            n.failed && !n.moving && nd.failure_block_threshold.is_some_and(|b| next >= b);
        if blocks || blocks_failing {
            n.blocked = n.blocked.saturating_add(1);
            if critical {
                // Another rule already blocks this call.
                return false;
            }
            let how = if blocks {
                format!("its result barely changed each time (at least {pct}% the same)")
            } else {
                format!(
                    "it failed each time with nearly the same output (at least {pct}% the same)"
                )
            };
            let msg = format!(
                "Blocked: `{}` was called with the same arguments {} times in a row and {how}; \
                 identical attempt {attempt} is refused. Make a different call or give your final answer.",
                n.tool, n.count
            );
            cx.report(
                Finding::new(NAME, Level::Critical, attempt, key(n), msg)
                    .with_tool(n.tool.clone())
                    .with_evidence(evidence(n, cx.seq())),
            );
            return true;
        }
        // The call also came before the streak (a different call broke it once): one call
        // earlier, as pi-repetition-guard's window would count it.
        let recurs = || {
            let seen = self
                .state
                .recent
                .iter()
                .filter(|c| **c == call.call_fp)
                .count();
            seen > n.count as usize
        };
        let early = nd.recurrence_window > 0
            && n.count >= 2
            && next.saturating_add(1) >= nd.warn_threshold
            && recurs();
        if (next >= nd.warn_threshold || early) && !n.warned {
            n.warned = true;
            if exact_warned {
                return false;
            }
            let span = self.state.calls.saturating_sub(n.start_call) + 1;
            let which = if span == u64::from(next) {
                format!("this is your call number {next} in a row to `{}`", n.tool)
            } else {
                format!(
                    "this is your call number {next} to `{}` in the last {span} calls",
                    n.tool
                )
            };
            let msg = format!(
                "Loop warning: {which} with the same arguments, and \
                 the last {} results barely changed (each at least {pct}% the same as the one before). \
                 Repeating it will not make progress: change the arguments, use a different tool, or give \
                 your final answer.",
                n.count
            );
            cx.report(
                Finding::new(NAME, Level::Warning, next, key(n), msg)
                    .with_tool(n.tool.clone())
                    .with_evidence(evidence(n, cx.seq())),
            );
        }
        false
    }
}

#[cfg(test)]
mod tests;
