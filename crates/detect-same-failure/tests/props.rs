//! Invariants of `same-failure` over arbitrary event streams.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Detector, Level};
use loopguard_detect_same_failure::{SameFailure, Settings};
use loopguard_testkit::{arb_args, arb_events, run, Script};
use proptest::prelude::*;
use serde_json::json;

fn det() -> Box<dyn Detector> {
    Box::new(SameFailure::new(Settings::default()))
}

fn det_low() -> Box<dyn Detector> {
    Box::new(SameFailure::new(Settings {
        warning_threshold: 2,
        critical_threshold: 3,
        count_unflagged_failures: true,
        ..Settings::default()
    }))
}

loopguard_testkit::detector_proptests! {
    makers: [det, det_low];

    /// Findings carry counts consistent with their level; critical findings only come on
    /// tool calls; nothing asks for an abort; evidence is bounded.
    #[test]
    fn levels_match_counts(events in arb_events(900)) {
        for (d, w, c) in [(det(), 8, 16), (det_low(), 2, 3)] {
            for (i, f) in run(d, &events) {
                prop_assert!(f.count >= w);
                if f.level == Level::Critical {
                    prop_assert!(f.count >= c);
                    let is_call = matches!(events[i], loopguard_core::OwnedEvent::ToolCall { .. });
                    prop_assert!(is_call);
                } else {
                    let is_result = matches!(events[i], loopguard_core::OwnedEvent::ToolResult { .. });
                    prop_assert!(is_result);
                }
                prop_assert!(f.level != Level::Fatal);
                prop_assert!(f.evidence.len() <= loopguard_core::MAX_EVIDENCE);
            }
        }
    }

    /// Results that are all distinct never fire, however many fail and whatever the args.
    #[test]
    fn all_distinct_results_never_fire(
        n in 1usize..60,
        flagged in any::<bool>(),
        args in proptest::collection::vec(arb_args(), 1..8),
    ) {
        let mut s = Script::new();
        for i in 0..n {
            let a = args[i % args.len()].clone();
            s.call_with("edit", a, &format!("error: failure number {i}"), flagged);
        }
        prop_assert!(run(det(), s.events()).is_empty());
        prop_assert!(run(det_low(), s.events()).is_empty());
    }

    /// The same failure from the same arguments every time is never reported.
    #[test]
    fn identical_calls_never_fire(n in 1usize..60, a in arb_args()) {
        let mut s = Script::new();
        s.repeat_call_with(n, "bash", a.clone(), "error: nope", true);
        prop_assert!(run(det_low(), s.events()).is_empty());
    }

    /// Any success or call of another tool every `k` results keeps runs shorter than `k`.
    #[test]
    fn breaks_keep_runs_short(n in 1usize..80, k in 2usize..8, other_call in any::<bool>()) {
        let mut s = Script::new();
        for i in 0..n {
            if i % k == k - 1 {
                if other_call {
                    s.tool_call("read", json!({"path": "a"}));
                } else {
                    s.call("edit", json!({"i": i}), "done");
                }
            } else {
                s.call("edit", json!({"i": i}), "Usage: edit <start_line>:<end_line>");
            }
        }
        let d = Box::new(SameFailure::new(Settings {
            warning_threshold: u32::try_from(k).unwrap(),
            critical_threshold: 0,
            count_unflagged_failures: true,
            ..Settings::default()
        }));
        prop_assert!(run(d, s.events()).is_empty());
    }
}
