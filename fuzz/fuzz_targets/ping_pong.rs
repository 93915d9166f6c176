//! Fuzzes `ping-pong` with arbitrary event streams, with the default or the OpenClaw settings
//! (the input's length picks, so each runs on half the inputs): it must never panic, counts
//! must respect the thresholds and the history cap, and a snapshot/restore at an event the
//! input picks must change nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::ping_pong::{PingPong, Settings};
use loopguard_core::{Detector, Level};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    // The length, not a byte, picks: every byte stays the decoder's.
    let settings = if data.len() % 2 == 0 {
        Settings::default()
    } else {
        Settings::OPENCLAW
    };
    let whole = loopguard_testkit::run(Box::new(PingPong::new(settings)), &events);
    for (_, f) in &whole {
        if f.key.starts_with("pingpong:") {
            assert!(f.count >= settings.warning_threshold);
            assert!(f.count <= settings.history_size + 1);
            if f.level == Level::Critical {
                assert!(f.count >= settings.critical_threshold);
            }
        } else {
            assert!(
                settings.detect_cycles,
                "cycle findings only with the cycle tier"
            );
        }
    }
    // The same veto as `run`: a snapshot/restore where the input asks changes nothing.
    loopguard_testkit::fuzz_check_restore(
        &|| -> Box<dyn Detector> { Box::new(PingPong::new(settings)) },
        &events,
        data,
        &whole,
    );
});
