//! Fuzzes `same-failure` with arbitrary event streams: it must never panic, its findings'
//! levels must match their counts (warnings on results, criticals on calls, never an abort),
//! and a snapshot/restore at an event the input picks changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::same_failure::{SameFailure, Settings};
use loopguard_core::{Detector, Level, OwnedEvent, MAX_EVIDENCE};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let low = Settings {
        warning_threshold: 2,
        critical_threshold: 3,
        count_unflagged_failures: true,
        ..Settings::default()
    };
    for settings in [Settings::default(), low] {
        let whole = loopguard_testkit::run(Box::new(SameFailure::new(settings)), &events);
        for (i, f) in &whole {
            assert!(f.count >= settings.warning_threshold);
            assert!(f.evidence.len() <= MAX_EVIDENCE);
            match f.level {
                Level::Fatal => panic!("same-failure never aborts: {f:?}"),
                Level::Critical => {
                    assert!(f.count >= settings.critical_threshold);
                    assert!(matches!(events[*i], OwnedEvent::ToolCall { .. }));
                }
                Level::Warning => {
                    assert!(matches!(events[*i], OwnedEvent::ToolResult { .. }));
                }
            }
        }
        // The same veto as `run`: a snapshot/restore where the input asks changes nothing.
        loopguard_testkit::fuzz_check_restore(&|| -> Box<dyn Detector> { Box::new(SameFailure::new(settings)) }, &events, data, &whole);
    }
});
