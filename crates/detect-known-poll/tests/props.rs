//! Invariants of `known-poll-no-progress` over arbitrary event streams.

use loopguard_core::Level;
use loopguard_detect_known_poll::KnownPoll;
use loopguard_testkit::{arb_args, arb_events, key_order_findings, run, Script};
use proptest::prelude::*;
use serde_json::json;

loopguard_testkit::detector_proptests! {
    default: KnownPoll, distinct_calls: "command_status";

    /// Every finding is about a poll call, and no streak exceeds the history size.
    #[test]
    fn findings_are_bounded_and_about_polls(events in arb_events(900)) {
        for (_, f) in run(detector(), &events) {
            prop_assert!(f.count <= 30);
            prop_assert!(f.count >= 10);
            prop_assert!(matches!(f.tool.as_deref(), Some("process") | Some("command_status")));
        }
    }

    /// Polls whose results all differ never fire.
    #[test]
    fn changing_results_never_fire(n in 1usize..60) {
        let mut s = Script::new();
        s.call_results(n, "command_status", json!({"id": 1}), |i| format!("progress {i}"));
        s.tool_call("command_status", json!({"id": 1}));
        prop_assert!(run(detector(), s.events()).is_empty());
    }

    /// Key order of the arguments never matters.
    #[test]
    fn key_order_never_matters(args in arb_args(), n in 10usize..25) {
        let fa = key_order_findings(&detector, ("command_status", &args, n, "same"))?;
        let expected = if n >= 20 { Level::Critical } else { Level::Warning };
        prop_assert_eq!(fa.last().map(|(_, f)| f.level), Some(expected));
    }
}
