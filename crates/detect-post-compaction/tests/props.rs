//! Invariants of `post-compaction-guard` over arbitrary event streams.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Detector, OwnedEvent};
use loopguard_detect_post_compaction::{PostCompactionGuard, Settings};
use loopguard_testkit::{arb_events, run, Script};
use proptest::prelude::*;
use serde_json::json;

fn guard() -> Box<dyn Detector> {
    Box::new(PostCompactionGuard::new(Settings::default()))
}

loopguard_testkit::detector_proptests! {
    makers: [guard], bytes: 600, cut: 200;

    /// Without a compaction the guard never fires.
    #[test]
    fn never_fires_without_a_compaction(events in arb_events(600)) {
        let events: Vec<OwnedEvent> =
            events.into_iter().filter(|e| !matches!(e, OwnedEvent::Compaction)).collect();
        prop_assert!(run(guard(), &events).is_empty());
    }

    /// Every finding is a critical abort with the stable code, and at most one per compaction.
    #[test]
    fn findings_are_aborts_and_at_most_one_per_compaction(events in arb_events(600)) {
        let compactions = events.iter().filter(|e| matches!(e, OwnedEvent::Compaction)).count();
        let f = run(guard(), &events);
        prop_assert!(f.len() <= compactions);
        for (_, f) in &f {
            prop_assert_eq!(f.level, loopguard_core::Level::Fatal);
            prop_assert_eq!(f.code.as_deref(), Some("compaction_loop_persisted"));
            prop_assert_eq!(f.count, 3);
        }
    }

    /// All-distinct calls after a compaction never abort, whatever the window.
    #[test]
    fn distinct_calls_never_abort(n in 1usize..20, w in 1u32..6) {
        let mut s = Script::new();
        s.compaction();
        for i in 0..n {
            s.call("read", json!({"path": format!("f{i}")}), "same");
        }
        let f = run(Box::new(PostCompactionGuard::new(Settings { window_size: w })), s.events());
        prop_assert_eq!(f.len(), usize::from(w == 1));
    }

    /// Changing results never abort (window of at least 2).
    #[test]
    fn changing_results_never_abort(n in 1usize..20, w in 2u32..6) {
        let mut s = Script::new();
        s.compaction();
        s.call_results(n, "read", json!({"path": "a"}), |i| format!("r{i}"));
        let d = Box::new(PostCompactionGuard::new(Settings { window_size: w }));
        prop_assert!(run(d, s.events()).is_empty());
    }
}
