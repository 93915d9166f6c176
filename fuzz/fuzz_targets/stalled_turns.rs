//! Fuzzes `stalled-turns` with arbitrary event streams: it must never panic, its findings'
//! levels must match their counts, and a snapshot/restore at an event the input picks changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::stalled_turns::{Settings, StalledTurns};
use loopguard_core::{Detector, Level};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let settings = Settings::default();
    let whole = loopguard_testkit::run(Box::new(StalledTurns::new(settings)), &events);
    for (_, f) in &whole {
        assert!(f.count >= settings.warning_threshold);
        assert_eq!(f.level == Level::Fatal, f.count >= settings.critical_threshold);
        assert!(f.level != Level::Critical);
    }
    // The same veto as `run`: a snapshot/restore where the input asks changes nothing.
    loopguard_testkit::fuzz_check_restore(&|| -> Box<dyn Detector> { Box::new(StalledTurns::new(settings)) }, &events, data, &whole);
});
