#![no_main]
//! Arbitrary event streams through `variation-loop` (default and seed settings): no panic,
//! at most one finding per message, bounded state, samples of at most 200 characters; the
//! prose classifier never panics.

use libfuzzer_sys::fuzz_target;
use loopguard_core::{Cx, Detector, OwnedEvent};
use loopguard::variation_loop::{is_prose, Settings, VariationLoop};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    // The prose classifier takes any line.
    if let Ok(line) = std::str::from_utf8(data) {
        let _ = is_prose(line.trim());
    }
    let seed = Settings { max_clusters: 64, ..Settings::pi_repetition_guard() };
    for settings in [Settings::default(), seed] {
        let cap = if settings.window == 0 { settings.max_clusters } else { settings.window };
        let mut d = VariationLoop::new(settings);
        let mut findings = Vec::new();
        let mut per_message = 0usize;
        for e in &events {
            // A message starts at its MessageStart (or its first delta) and ends with its
            // MessageEnd: a finding made *at* the MessageEnd (the last line judged) belongs
            // to the message it ends.
            if matches!(e, OwnedEvent::MessageStart) {
                per_message = 0;
            }
            let before = findings.len();
            let mut cx = Cx::manual(0, &mut findings);
            d.observe(&e.as_event(), &mut cx);
            per_message += findings.len() - before;
            assert!(per_message <= 1);
            if matches!(e, OwnedEvent::MessageEnd) {
                per_message = 0;
            }
            assert!(d.held() <= cap);
        }
        for f in &findings {
            assert!(f.sample.as_ref().is_some_and(|s| s.chars().count() <= 201));
        }
    }
});
