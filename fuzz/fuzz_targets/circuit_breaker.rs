//! Fuzzes `circuit-breaker` with arbitrary event streams and settings: it must never panic,
//! only report critical findings at or above the threshold and within the window, and give
//! the same findings after a snapshot/restore at an event the input picks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::circuit_breaker::{CircuitBreaker, Settings};
use loopguard_core::{Detector, Level};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let threshold = data.first().map_or(30, |b| u32::from(b % 12) + 1);
    let history = data.get(1).map_or(30, |b| u32::from(b % 40) + 1);
    let count_pairs = data.get(2).is_none_or(|b| b % 2 == 0);
    let settings = Settings {
        threshold,
        history_size: history,
        count_pairs,
    };
    let make = || -> Box<dyn Detector> { Box::new(CircuitBreaker::new(settings.clone())) };
    let findings = loopguard_testkit::run(make(), &events);
    for (_, f) in &findings {
        assert_eq!(f.level, Level::Critical);
        assert!(f.count >= threshold);
        assert!(f.count <= history);
    }
    // The same veto as `run`: a snapshot/restore where the input asks changes nothing.
    loopguard_testkit::fuzz_check_restore(&make, &events, data, &findings);
});
