//! Invariants: chunking never changes the finding; snapshot → restore mid-message never
//! changes a finding; distinct lines never fire; arbitrary streams never panic and stay
//! bounded.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use loopguard_core::{Bus, Detector, Stream};
use loopguard_detect_variation_loop::{Settings, VariationLoop};
use loopguard_testkit::{decode_events, run, Script};
use proptest::prelude::*;

fn arb_lines() -> impl Strategy<Value = String> {
    prop::collection::vec((0usize..6, 0u32..3), 0..60).prop_map(|v| {
        const LINES: [&str; 6] = [
            "Let me read the signature end to see the return type.",
            "Let me read L1000-1035 to check the memo initialisation.",
            "Now let me add the memo right after the signature end.",
            "The build passed on the second try after the cache fix.",
            "ok",
            "| a | b |",
        ];
        v.iter()
            .map(|&(i, n)| format!("{}{}\n", LINES[i], " again".repeat(n as usize)))
            .collect()
    })
}

fn findings(settings: &Settings, text: &str, chunk: usize) -> Vec<(Option<u64>, Option<String>)> {
    let mut s = Script::new();
    s.message_chunked(Stream::Text, text, chunk);
    run(Box::new(VariationLoop::new(settings.clone())), s.events())
        .into_iter()
        .map(|(_, f)| (f.offset, f.sample))
        .collect()
}

proptest! {
    #[test]
    fn chunking_never_changes_the_default_finding(text in arb_lines(), a in 1usize..50, b in 1usize..50) {
        prop_assert_eq!(findings(&Settings::default(), &text, a), findings(&Settings::default(), &text, b));
    }

    #[test]
    fn all_distinct_lines_never_fire(n in 0usize..200, chunk in 1usize..40) {
        let text: String = (0..n).map(|i| format!("Item {i}: {} units shipped to warehouse {}\n", i * 7919 % 10007, i * 104_729 % 99_991)).collect();
        let text = text.replace('0', "zero ").replace('7', "seven ");
        prop_assert!(findings(&Settings::default(), &text, chunk).is_empty());
    }

    #[test]
    fn snapshot_restore_mid_stream_changes_nothing(text in arb_lines(), cut in 0usize..80, seed_mode in any::<bool>()) {
        let settings = if seed_mode { Settings::pi_repetition_guard() } else { Settings::default() };
        let mut s = Script::new();
        s.message_chunked(Stream::Thinking, &text, 9);
        let events = s.into_events();
        let straight = run(Box::new(VariationLoop::new(settings.clone())), &events);
        let cut = cut.min(events.len());
        let mk = || vec![Box::new(VariationLoop::new(settings.clone())) as Box<dyn Detector>];
        let mut first = Bus::new(mk());
        let mut got = Vec::new();
        for (i, e) in events[..cut].iter().enumerate() {
            got.extend(first.observe(&e.as_event()).into_iter().map(|f| (i, f)));
        }
        let snap = serde_json::to_string(&first.snapshot().unwrap()).unwrap();
        let mut second = Bus::new(mk());
        second.restore(&serde_json::from_str(&snap).unwrap()).unwrap();
        for (i, e) in events.iter().enumerate().skip(cut) {
            got.extend(second.observe(&e.as_event()).into_iter().map(|f| (i, f)));
        }
        prop_assert_eq!(straight, got);
    }

    #[test]
    fn arbitrary_event_streams_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let events = decode_events(&bytes);
        for settings in [Settings::default(), Settings { max_clusters: 16, ..Settings::pi_repetition_guard() }] {
            let cap = if settings.window == 0 { settings.max_clusters } else { settings.window };
            let mut d = VariationLoop::new(settings);
            let mut out = Vec::new();
            let mut cx = loopguard_core::Cx::manual(0, &mut out);
            for e in &events {
                d.observe(&e.as_event(), &mut cx);
                prop_assert!(d.held() <= cap);
            }
        }
    }
}
