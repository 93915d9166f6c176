//! Invariants of `stalled-turns` over arbitrary event streams.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Detector, Level};
use loopguard_detect_stalled_turns::{Settings, StalledTurns};
use loopguard_testkit::{arb_events, run, Script};
use proptest::prelude::*;
use serde_json::json;

fn det() -> Box<dyn Detector> {
    Box::new(StalledTurns::new(Settings::default()))
}

fn mask_numbers() -> Box<dyn Detector> {
    Box::new(StalledTurns::new(Settings {
        mask_numbers: true,
        ..Settings::default()
    }))
}

loopguard_testkit::detector_proptests! {
    makers: [det];

    /// Findings carry counts consistent with their level; the strong ones are fatal (they abort).
    #[test]
    fn levels_match_counts(events in arb_events(900)) {
        for (_, f) in run(det(), &events) {
            prop_assert!(f.count >= 3);
            prop_assert_eq!(f.level == Level::Fatal, f.count >= 10);
            prop_assert!(f.level != Level::Critical);
            prop_assert!(f.evidence.len() <= loopguard_core::MAX_EVIDENCE);
        }
    }

    /// Distinct user messages, each followed by any tool-less reply, never stall.
    #[test]
    fn distinct_user_messages_never_stall(n in 1usize..30, empty in any::<bool>()) {
        let mut s = Script::new();
        for i in 0..n {
            s.user(&format!("request number {i}"));
            s.message(if empty { "" } else { "ok" });
        }
        prop_assert!(run(det(), s.events()).is_empty());
    }

    /// A repeated message, each time answered with words none of the replies before used,
    /// never stalls (a user saying "continue" while the model writes).
    #[test]
    fn a_message_answered_anew_each_time_never_stalls(
        n in 1usize..30,
        words in proptest::collection::vec("[a-z]{3,9}", 20..40),
    ) {
        let mut s = Script::new();
        for i in 0..n {
            s.user("continue");
            // Every word of reply `i` is its own: the word with the reply's letter tag.
            let tag: String = format!("{i:05}").bytes().map(|b| char::from(b'a' + (b - b'0'))).collect();
            let reply: Vec<String> = words.iter().map(|w| format!("{w}{tag}")).collect();
            s.message(&reply.join(" "));
        }
        let distinct: std::collections::BTreeSet<&String> = words.iter().collect();
        prop_assume!(distinct.len() >= 16);
        prop_assert!(run(det(), s.events()).is_empty());
    }

    /// A request that differs from the one before only in the number inside a name, each
    /// answered by a reply that names it (and says nothing else new), never stalls; the same
    /// script whose numbers stand alone (a harness's counter) stalls.
    #[test]
    fn a_numbered_name_answered_by_name_never_stalls(
        stem in "[a-z]{1,6}[_-]?",
        numbers in proptest::collection::btree_set(0u32..100_000, 12),
        body in "[a-z ]{0,40}",
    ) {
        let script = |bare: bool| {
            let mut s = Script::new();
            for n in &numbers {
                let name = if bare { format!("{n}") } else { format!("{stem}{n}") };
                s.user(&format!("Show me the file {name}.txt, please."));
                s.message(&format!("File {name}: {body}"));
            }
            s
        };
        let masked = || mask_numbers();
        prop_assert!(run(masked(), script(false).events()).is_empty());
        prop_assert!(run(masked(), script(true).events()).iter().any(|(_, f)| f.level == Level::Fatal));
    }

    /// A tool call between every two nudges means no stall, however many nudges.
    #[test]
    fn tool_activity_between_nudges_never_stalls(n in 1usize..40) {
        let mut s = Script::new();
        for i in 0..n {
            s.user("No tool calls found");
            s.user("No tool calls found");
            s.call("bash", json!({"command": format!("ls {i}")}), "x");
        }
        prop_assert!(run(det(), s.events()).is_empty());
    }
}
