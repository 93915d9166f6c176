//! Invariants of `unknown-tool` over arbitrary event streams.

use loopguard_core::Level;
use loopguard_detect_unknown_tool::{Settings, UnknownTool};
use loopguard_testkit::{arb_args, arb_events, run, Script};
use proptest::prelude::*;
use serde_json::json;

loopguard_testkit::detector_proptests! {
    default: UnknownTool;

    /// Counts stay within the thresholds' meaning and the history size.
    #[test]
    fn findings_are_consistent(events in arb_events(900)) {
        for (_, f) in run(detector(), &events) {
            prop_assert!(f.count <= 30);
            prop_assert_eq!(f.level == Level::Critical, f.count >= 5);
            prop_assert!(f.count >= 3);
        }
    }

    /// Successful results never fire, whatever their text and arguments.
    #[test]
    fn successes_never_fire(n in 1usize..40, args in arb_args()) {
        let mut s = Script::new();
        s.call_results(n, "exec", args.clone(), |i| format!("ran {i}"));
        s.tool_call("exec", args);
        prop_assert!(run(detector(), s.events()).is_empty());
    }

    /// Arguments never matter: the streak is the same whatever they are.
    #[test]
    fn arguments_are_ignored(n in 1usize..12, args in prop::collection::vec(arb_args(), 12)) {
        let mut a = Script::new();
        let mut b = Script::new();
        for arg in args.iter().take(n) {
            a.call_with("exec", arg.clone(), "unknown tool: exec", true);
            b.call_with("exec", json!({}), "unknown tool: exec", true);
        }
        a.tool_call("exec", args[n].clone());
        b.tool_call("exec", json!({}));
        let strip = |v: Vec<(usize, loopguard_core::Finding)>| v.into_iter().map(|(i, f)| (i, f.level, f.count)).collect::<Vec<_>>();
        prop_assert_eq!(strip(run(detector(), a.events())), strip(run(detector(), b.events())));
    }

    /// Without shell shapes and error flags nothing fires.
    #[test]
    fn openclaw_needs_error_outcomes(events in arb_events(600)) {
        let events: Vec<_> = events
            .into_iter()
            .map(|e| match e {
                loopguard_core::OwnedEvent::ToolResult { id, tool, content, images, details, .. } => {
                    loopguard_core::OwnedEvent::ToolResult { id, tool, content, is_error: false, images, details }
                }
                other => other,
            })
            .collect();
        prop_assert!(run(Box::new(UnknownTool::new(Settings::openclaw())), &events).is_empty());
    }
}
