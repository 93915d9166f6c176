//! Inputs a fuzz target found, kept as named regression tests (run here with the same checks
//! as the target, without the fuzzer). The input files live in `../shared/fuzz-crashes/`.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Cx, Detector, OwnedEvent};
use loopguard_detect_variation_loop::{Settings, VariationLoop};

/// The `variation_loop` target's checks: at most one finding per message, bounded state.
fn check(data: &[u8]) {
    let events = loopguard_testkit::decode_events(data);
    let seed = Settings {
        max_clusters: 64,
        ..Settings::pi_repetition_guard()
    };
    for settings in [Settings::default(), seed] {
        let cap = if settings.window == 0 {
            settings.max_clusters
        } else {
            settings.window
        };
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
            assert!(
                per_message <= 1,
                "{} findings in one message: {events:?}",
                per_message
            );
            if matches!(e, OwnedEvent::MessageEnd) {
                per_message = 0;
            }
            assert!(d.held() <= cap);
        }
    }
}

#[test]
fn fuzz_variation_loop_b6175e5d_one_finding_per_message() {
    let data = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0x23, 0xff, 0xff, 0xff, 0x4a, 0x10, 0xd4, 0xf9, 0xff, 0xdc,
        0xfa, 0xff, 0xdc, 0x4a, 0x4a, 0x35, 0xff, 0xff, 0x4a, 0x10, 0xff, 0xff, 0xff, 0xff, 0xa7,
        0xff, 0xff, 0xff, 0xff, 0x4a, 0x10, 0xd4, 0x22, 0xde, 0xde, 0xde, 0xde, 0xde, 0xde, 0xde,
        0xde, 0xde, 0xdf, 0xde, 0xde, 0xde, 0xde, 0xde, 0xde, 0xde, 0xde, 0xd4, 0x7b, 0xff, 0xdc,
        0x7b, 0xff, 0x00, 0x00, 0x00, 0x00, 0x5b, 0xff, 0x95, 0xff, 0xff, 0xff, 0x40,
    ];
    check(&data);
}
