//! Invariants of `circuit-breaker` over arbitrary event streams.

use loopguard_core::Level;
use loopguard_detect_circuit_breaker::CircuitBreaker;
use loopguard_testkit::{arb_args, arb_events, key_order_findings, run, Script};
use proptest::prelude::*;
use serde_json::json;

loopguard_testkit::detector_proptests! {
    default: CircuitBreaker, distinct_calls: "command_status";

    /// Every finding is critical, at or above the threshold and within the window.
    #[test]
    fn findings_are_critical_and_bounded(events in arb_events(900)) {
        for (_, f) in run(detector(), &events) {
            prop_assert_eq!(f.level, Level::Critical);
            // at the threshold, and a window of 30 cannot hold more
            prop_assert_eq!(f.count, 30);
            prop_assert!(f.message.contains("global circuit breaker"));
        }
    }

    /// Calls whose results all differ never fire, even in an A/B alternation.
    #[test]
    fn changing_results_never_fire(n in 1usize..60) {
        let mut s = Script::new();
        for i in 0..n {
            s.call("command_status", json!({"id": 1}), &format!("progress {i}"));
            s.call("read", json!({"id": 1}), &format!("text {i}"));
        }
        s.tool_call("command_status", json!({"id": 1}));
        prop_assert!(run(detector(), s.events()).is_empty());
    }

    /// Key order of the arguments never matters.
    #[test]
    fn key_order_never_matters(args in arb_args(), n in 25usize..35) {
        let fa = key_order_findings(&detector, ("command_status", &args, n, "same"))?;
        prop_assert_eq!(fa.is_empty(), n < 30);
    }
}
