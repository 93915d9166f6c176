//! pi-repetition-guard's sliding window: the same call N times within the last M calls (or,
//! counted only while no result comes, the same for a host that sends no results).

use super::{short_hex, GenericRepeat, Pair};
use crate::{WindowIdentity, NAME};
use loopguard_core::{CallInfo, Cx, Finding, Fingerprint, FixedMap, Level};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// pi-repetition-guard's window of the last N calls.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Window {
    pub(super) calls: VecDeque<(Fingerprint, u64)>,
    pub(super) counts: FixedMap<Fingerprint, u32>,
    /// For an unanswered-call window: the session's result count ([`Cx::results`]) when
    /// its calls were counted; another count at a call means results came, and the window
    /// starts again.
    #[serde(default)]
    pub(super) answered: u64,
}

impl GenericRepeat {
    pub(super) fn clear_window(&mut self) {
        self.state.window.calls.clear();
        self.state.window.counts.clear();
    }

    pub(super) fn window_call(
        &mut self,
        tool: &str,
        args: &Value,
        call: &CallInfo,
        cx: &mut Cx<'_>,
    ) -> bool {
        match &self.settings.window {
            Some(ws) if ws.identity != WindowIdentity::CallAndResult => {
                let unanswered = ws.identity == WindowIdentity::UnansweredCall;
                if unanswered && self.state.window.answered != cx.results() {
                    // Results came since the calls counted (those of refused calls too: the
                    // host sends them): they were answered.
                    self.clear_window();
                    self.state.window.answered = cx.results();
                }
                if unanswered && is_a_step(tool, args) {
                    // The next page, another wait: without its result, a step repeated says
                    // nothing.
                    return false;
                }
                let key = window_key(tool, args, &call.call_fp);
                self.window_push(key, tool, cx)
            }
            _ => false,
        }
    }

    pub(super) fn window_result(&mut self, pair: &Pair<&str>, cx: &mut Cx<'_>) {
        if let Some(ws) = &self.settings.window {
            match ws.identity {
                WindowIdentity::CallAndResult => {
                    let key = Fingerprint::combine(&[pair.call.as_bytes(), pair.result.as_bytes()]);
                    self.window_push(key, pair.tool, cx);
                }
                // Emptied at the next call when any result came (`window_call`).
                WindowIdentity::UnansweredCall | WindowIdentity::Call => {}
            }
        }
    }

    /// Adds one occurrence to the window and reports when its key reached the threshold.
    /// Returns whether the finding is critical.
    pub(super) fn window_push(&mut self, key: Fingerprint, tool: &str, cx: &mut Cx<'_>) -> bool {
        let Some(ws) = &self.settings.window else {
            return false;
        };
        let w = &mut self.state.window;
        w.calls.push_back((key, cx.seq()));
        *w.counts.entry(key).or_insert(0) += 1;
        while w.calls.len() > ws.size as usize {
            if let Some((old, _)) = w.calls.pop_front() {
                if let Some(n) = w.counts.get_mut(&old) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        w.counts.remove(&old);
                    }
                }
            }
        }
        let count = w.counts.get(&key).copied().unwrap_or(0);
        if count < ws.threshold {
            return false;
        }
        let evidence: Vec<u64> = w
            .calls
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, s)| *s)
            .collect();
        let what = match ws.identity {
            WindowIdentity::Call => "with the same arguments",
            WindowIdentity::CallAndResult => "with the same arguments and got the same result",
            WindowIdentity::UnansweredCall => "with the same arguments, no result in between",
        };
        let level = if ws.critical_threshold > 0 && count >= ws.critical_threshold {
            Level::Critical
        } else {
            ws.level
        };
        let msg = format!(
            "Repetition guard: tool-call loop (same tool+args repeated): `{tool}` was called {what} {count} times \
             within the last {} calls. Stop repeating it and finish the task from the information you already \
             have.",
            ws.size
        );
        let f = Finding::new(
            NAME,
            level,
            count,
            format!("window:{tool}:{}", short_hex(&key)),
            msg,
        )
        .with_tool(tool)
        .with_evidence(evidence);
        cx.report(f);
        level == Level::Critical
    }
}

/// Whether a call gives no input beyond its tool: no arguments, empty ones, or only the
/// tool's own name (SWE-agent's `scroll_down` as `{"command": "scroll_down"}`). Such a call
/// is a step (the next page, the next wait), the same every time by its nature: only its
/// result could tell a loop from a walk through a file, and the unanswered-call window has
/// none.
pub(crate) fn is_a_step(tool: &str, args: &Value) -> bool {
    match args {
        Value::Null => true,
        Value::String(s) => {
            let s = s.trim();
            s.is_empty() || s == tool
        }
        Value::Object(m) => m.values().all(|v| is_a_step(tool, v)),
        Value::Array(a) => a.iter().all(|v| is_a_step(tool, v)),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// pi-repetition-guard's call key: tool name plus the normalised input (`null` → empty, a
/// string as is, anything else as JSON with keys sorted recursively, i.e. the call
/// fingerprint the bus already computed). The one difference from the seed: a string input
/// whose text happens to be the JSON of an object input does not collide with it.
pub(crate) fn window_key(tool: &str, args: &Value, call_fp: &Fingerprint) -> Fingerprint {
    match args {
        Value::Null => Fingerprint::combine(&[b"s", tool.as_bytes(), b""]),
        Value::String(s) => Fingerprint::combine(&[b"s", tool.as_bytes(), s.as_bytes()]),
        _ => *call_fp,
    }
}

#[cfg(test)]
mod tests;
