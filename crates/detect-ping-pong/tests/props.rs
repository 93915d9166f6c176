//! Invariants of `ping-pong` over generated sessions.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Detector, Level};
use loopguard_detect_ping_pong::{PingPong, Settings};
use loopguard_testkit::{arb_events, run, Script};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn det() -> Box<dyn Detector> {
    Box::new(PingPong::new(Settings::default()))
}

fn oc() -> Box<dyn Detector> {
    Box::new(PingPong::new(Settings::OPENCLAW))
}

loopguard_testkit::detector_proptests! {
    makers: [det, oc];

    /// All-distinct calls never fire, whatever their results.
    #[test]
    fn all_distinct_calls_never_fire(results in prop::collection::vec(0u8..3, 0..80)) {
        let mut s = Script::new();
        for (i, r) in results.iter().enumerate() {
            s.call(["read", "grep"][i % 2], json!({"n": i}), &format!("r{r}"));
        }
        prop_assert!(run(det(), s.events()).is_empty());
        prop_assert!(run(oc(), s.events()).is_empty());
    }

    /// Calls from a small set, each with a fresh result: never critical.
    #[test]
    fn changing_results_never_reach_critical(calls in prop::collection::vec(0u8..4, 0..120)) {
        let mut s = Script::new();
        for (i, c) in calls.iter().enumerate() {
            s.call("tool", json!({"c": c}), &format!("result {i}"));
        }
        for d in [det(), oc()] {
            prop_assert!(run(d, s.events()).iter().all(|(_, f)| f.level == Level::Warning));
        }
    }

    /// Cycles with stable results are caught once they have gone round often enough.
    #[test]
    fn stable_cycles_are_caught(p in 2usize..=8, rounds in 4usize..7) {
        let mut s = Script::new();
        for _ in 0..rounds {
            for i in 0..p {
                s.call("step", json!({"i": i}), &format!("out {i}"));
            }
        }
        s.tool_call("step", json!({"i": 0}));
        let f = run(det(), s.events());
        prop_assert!(!f.is_empty());
        if rounds >= 5 {
            prop_assert!(f.iter().any(|(_, f)| f.level == Level::Critical));
        }
    }

    /// The order of keys in the arguments never changes a finding.
    #[test]
    fn key_order_never_matters(calls in prop::collection::vec((0u8..3, 0u8..2), 0..60)) {
        let mut a = Script::new();
        let mut b = Script::new();
        for (c, r) in &calls {
            let mut fwd = Map::new();
            fwd.insert("path".into(), json!(c));
            fwd.insert("mode".into(), json!("r"));
            let mut rev = Map::new();
            rev.insert("mode".into(), json!("r"));
            rev.insert("path".into(), json!(c));
            a.call("read", Value::Object(fwd), &format!("{r}"));
            b.call("read", Value::Object(rev), &format!("{r}"));
        }
        prop_assert_eq!(run(det(), a.events()), run(det(), b.events()));
    }

    /// The alternation tier's counts respect its thresholds and the history cap.
    #[test]
    fn openclaw_counts_respect_thresholds(events in arb_events(1500)) {
        for (_, f) in run(oc(), &events) {
            prop_assert!(f.count >= 10 && f.count <= 31);
            if f.level == Level::Critical {
                prop_assert!(f.count >= 20);
            }
            prop_assert!(f.evidence.len() <= 30);
        }
    }
}
