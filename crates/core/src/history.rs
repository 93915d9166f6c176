//! OpenClaw's call history: a bounded, run-scoped record of calls and their outcomes, and the
//! no-progress streak over it (seed-systems §3.2, §3.3). Shared by the detectors that judge a
//! call against the outcomes of the calls before it.

use crate::detector::{CallInfo, Cx, ResultInfo};
use crate::event::Event;
use crate::fingerprint::Fingerprint;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The largest history size a detector accepts (a streak walk is linear in it).
pub const MAX_HISTORY_SIZE: u32 = 1000;

/// One call and, once known, its outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Tool name as called.
    pub tool: String,
    /// Call id (to attach the outcome).
    pub id: String,
    /// Tool + arguments identity.
    pub call: Fingerprint,
    /// Sequence number of the call (or of the result, for a record made from a result alone).
    pub seq: u64,
    /// The normalised outcome, once known.
    pub result: Option<Fingerprint>,
}

/// The streak of identical newest outcomes of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Streak {
    /// How many.
    pub count: u32,
    /// The shared outcome.
    pub result: Option<Fingerprint>,
    /// Sequence numbers of the calls in the streak, oldest first.
    pub seqs: Vec<u64>,
}

/// The bounded history of one scope (run and user turn): a detector clears it in its
/// [`crate::Detector::reset_run`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    records: VecDeque<Record>,
}

impl History {
    /// Forgets every record (a new run or user turn began).
    pub fn clear(&mut self) {
        self.records.clear();
    }

    /// Records a call whose outcome is not known yet.
    pub fn push_call(&mut self, rec: Record, cap: usize) {
        self.records.push_back(rec);
        self.trim(cap);
    }

    /// Attaches an outcome to the newest pending record of the same call id and call; when
    /// there is none, appends a complete record.
    pub fn attach(&mut self, rec: Record, cap: usize) {
        if !self.fill_pending(&rec.id, &rec.call, rec.result) {
            self.records.push_back(rec);
            self.trim(cap);
        }
    }

    /// Records the call the bus just saw (`cx.call()`), outcome not known yet.
    /// A full history reuses the strings of the record it forgets.
    pub fn record_call(&mut self, id: &str, call: &CallInfo, cap: usize) {
        let full = self.records.len() >= cap.max(1);
        let rec = match full.then(|| self.records.pop_front()).flatten() {
            Some(mut r) => {
                r.tool.clear();
                r.tool.push_str(&call.tool);
                r.id.clear();
                r.id.push_str(id);
                r.call = call.call_fp;
                r.seq = call.seq;
                r.result = None;
                r
            }
            None => Record {
                tool: call.tool.clone(),
                id: id.to_owned(),
                call: call.call_fp,
                seq: call.seq,
                result: None,
            },
        };
        self.push_call(rec, cap);
    }

    /// Records the result the bus just saw (`cx.result()`), with its normalised fingerprint:
    /// filled into the pending record of its call, or appended complete (allocating only then).
    pub fn record_result(&mut self, id: &str, r: &ResultInfo, cap: usize) {
        if !self.fill_pending(id, &r.call.call_fp, Some(r.norm_fp)) {
            self.records.push_back(Record {
                tool: r.call.tool.clone(),
                id: id.to_owned(),
                call: r.call.call_fp,
                seq: r.call.seq,
                result: Some(r.norm_fp),
            });
            self.trim(cap);
        }
    }

    /// The history's part of any event that is not a call: a `ToolResult`'s outcome is
    /// recorded ([`History::record_result`], with the bus's facts); other events change
    /// nothing.
    pub fn record_outcome(&mut self, event: &Event<'_>, cx: &Cx<'_>, cap: usize) {
        if let (Event::ToolResult { id, .. }, Some(r)) = (event, cx.result()) {
            self.record_result(id, r, cap);
        }
    }

    fn fill_pending(&mut self, id: &str, call: &Fingerprint, result: Option<Fingerprint>) -> bool {
        match self
            .records
            .iter_mut()
            .rev()
            .find(|r| r.result.is_none() && r.id == id && r.call == *call)
        {
            Some(r) => {
                r.result = result;
                true
            }
            None => false,
        }
    }

    fn trim(&mut self, cap: usize) {
        while self.records.len() > cap.max(1) {
            self.records.pop_front();
        }
    }

    /// The records, oldest first.
    #[cfg(test)]
    pub fn records(&self) -> &VecDeque<Record> {
        &self.records
    }

    /// The newest record of a call other than `call`: its identity and tool name.
    pub fn partner(&self, call: &Fingerprint) -> Option<(Fingerprint, &str)> {
        self.records
            .iter()
            .rev()
            .find(|r| r.call != *call)
            .map(|r| (r.call, r.tool.as_str()))
    }

    /// OpenClaw's no-progress streak for `call`: walking newest to oldest, other calls and
    /// pending records are skipped; the first completed record fixes the outcome; each
    /// further identical outcome adds one; the first different outcome ends the walk.
    pub fn no_progress_streak(&self, call: &Fingerprint) -> Streak {
        let mut s = Streak::default();
        for r in self.records.iter().rev() {
            if r.call != *call {
                continue;
            }
            let Some(h) = r.result else { continue };
            match s.result {
                None => s.result = Some(h),
                Some(l) if l == h => {}
                Some(_) => break,
            }
            s.count += 1;
            s.seqs.push(r.seq);
        }
        s.seqs.reverse();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(s: &str) -> Fingerprint {
        Fingerprint::of_bytes(s.as_bytes())
    }

    fn rec(id: &str, call: &str, result: Option<&str>, seq: u64) -> Record {
        Record {
            tool: "t".into(),
            id: id.into(),
            call: fp(call),
            seq,
            result: result.map(fp),
        }
    }

    #[test]
    fn streak_skips_other_calls_and_pending_and_stops_at_a_change() {
        let mut h = History::default();
        h.push_call(rec("0", "a", Some("x"), 0), 30);
        h.push_call(rec("1", "a", Some("y"), 1), 30);
        h.push_call(rec("2", "b", Some("y"), 2), 30);
        h.push_call(rec("3", "a", Some("y"), 3), 30);
        h.push_call(rec("4", "a", None, 4), 30);
        let s = h.no_progress_streak(&fp("a"));
        assert_eq!(s.count, 2);
        assert_eq!(s.seqs, vec![1, 3]);
        assert_eq!(s.result, Some(fp("y")));
    }

    #[test]
    fn b29_window_caps_records() {
        let mut h = History::default();
        for i in 0..40 {
            h.push_call(rec(&i.to_string(), "a", Some("x"), i), 30);
        }
        assert_eq!(h.records().len(), 30);
        assert_eq!(h.records()[0].seq, 10);
        assert_eq!(h.no_progress_streak(&fp("a")).count, 30);
    }

    #[test]
    fn outcomes_attach_to_the_pending_record_or_append() {
        let mut h = History::default();
        h.push_call(rec("c1", "a", None, 0), 30);
        h.attach(rec("c1", "a", Some("x"), 1), 30);
        assert_eq!(h.records().len(), 1);
        assert_eq!(h.records()[0].result, Some(fp("x")));
        h.attach(rec("c9", "a", Some("x"), 2), 30);
        assert_eq!(h.records().len(), 2);
    }

    #[test]
    fn clear_forgets_every_record() {
        let mut h = History::default();
        h.push_call(rec("c1", "a", Some("x"), 0), 30);
        h.clear();
        assert!(h.records().is_empty());
    }
}
