//! State: snapshot-then-restore at any point of a random event stream yields the same
//! verdicts as no snapshot, for every guard policy shape.

mod common;

use common::guard;
use loopguard_core::OwnedEvent;
use loopguard_orchestrator::Verdict;
use proptest::prelude::*;

const POLICIES: &[&str] = &[
    // pi-loop-guard shape
    "[guard]\nabort-after-blocks = 3\n[detectors.repeat]\nwarn = 2\nblock = 3\n[detectors.poll]\nenabled = true\n",
    // pi-repetition-guard shape
    "[guard]\nabort-after-blocks = 0\nterminate = true\nsteers-per-turn = 2\ncompactions-per-turn = 1\n\
     steer-on-block = true\nsteer-wording = \"escalating\"\n[detectors.repeat]\nwarn = 0\nblock = 2\n",
    // openclaw shape
    "[guard]\nabort-after-blocks = 0\nabort-after-run-blocks = 2\nwhole-batch = true\n\
     warning-dedup = \"buckets\"\nwarning-bucket-size = 2\n[detectors.repeat]\nwarn = 2\nblock = 4\n\
     [detectors.poll]\nenabled = true\n",
    // default shape
    "[guard]\nwhole-batch = true\nsteers-per-turn = 2\ncompactions-per-turn = 1\nsteer-on-block = true\n\
     steer-wording = \"escalating\"\nwarning-dedup = \"per-key\"\n[detectors.repeat]\nwarn = 2\nblock = 3\n",
];

fn straight(policy: &str, events: &[OwnedEvent]) -> Vec<Verdict> {
    let mut g = guard(policy);
    events.iter().map(|e| g.observe(&e.as_event())).collect()
}

fn with_restore(policy: &str, events: &[OwnedEvent], at: usize) -> Vec<Verdict> {
    let at = at.min(events.len());
    let mut g = guard(policy);
    let mut out: Vec<Verdict> = events
        .iter()
        .take(at)
        .map(|e| g.observe(&e.as_event()))
        .collect();
    let snap = g.snapshot().expect("snapshot");
    // Through text, as a host storing it in a database would.
    let text = serde_json::to_string(&snap).expect("serialise");
    let back: serde_json::Value = serde_json::from_str(&text).expect("parse");
    drop(g);
    let mut h = guard(policy);
    h.restore(&back).expect("restore");
    out.extend(events.iter().skip(at).map(|e| h.observe(&e.as_event())));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn snapshot_then_restore_never_changes_a_verdict(
        bytes in prop::collection::vec(any::<u8>(), 0..900),
        at in 0usize..400,
        policy in 0usize..POLICIES.len(),
    ) {
        let events = loopguard_testkit::decode_events(&bytes);
        let policy = POLICIES[policy];
        let a = straight(policy, &events);
        let b = with_restore(policy, &events, at);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn verdicts_are_deterministic_and_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..900)) {
        let events = loopguard_testkit::decode_events(&bytes);
        for policy in POLICIES {
            prop_assert_eq!(straight(policy, &events), straight(policy, &events));
        }
    }
}

#[test]
fn the_random_streams_do_exercise_every_action() {
    // Guards the property above against vacuity: over a fixed set of streams, every action
    // shows up at least once.
    use loopguard_orchestrator::Action;
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0u32..300 {
        let mut x = u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let bytes: Vec<u8> = (0..600)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let events = loopguard_testkit::decode_events(&bytes);
        for policy in POLICIES {
            for v in straight(policy, &events) {
                seen.insert(format!("{:?}", v.action()));
            }
        }
    }
    for a in [
        Action::Continue,
        Action::Steer,
        Action::Compact,
        Action::Block,
        Action::Abort,
    ] {
        assert!(
            seen.contains(&format!("{a:?}")),
            "{a:?} never seen: {seen:?}"
        );
    }
}
