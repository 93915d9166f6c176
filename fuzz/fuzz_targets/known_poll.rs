//! Fuzzes `known-poll-no-progress` with arbitrary event streams and thresholds: it must never
//! panic, only judge known poll calls, keep counts within the history size, and give the
//! same findings after a snapshot/restore at an event the input picks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::known_poll::{KnownPoll, Settings};
use loopguard_core::{Detector, Level};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let warning = data.first().map_or(10, |b| u32::from(b % 5) + 1);
    let critical = warning + data.get(1).map_or(10, |b| u32::from(b % 5) + 1);
    let history = data.get(2).map_or(30, |b| u32::from(b % 40) + 1);
    let settings = Settings {
        warning_threshold: warning,
        critical_threshold: critical,
        history_size: history,
        ..Settings::default()
    };
    let make = || -> Box<dyn Detector> { Box::new(KnownPoll::new(settings.clone())) };
    let findings = loopguard_testkit::run(make(), &events);
    for (_, f) in &findings {
        assert!(f.count <= history);
        assert!(f.count >= warning);
        assert_eq!(f.level == Level::Critical, f.count >= critical);
        assert!(matches!(
            f.tool.as_deref(),
            Some("process") | Some("command_status")
        ));
    }
    // The same veto as `run`: a snapshot/restore where the input asks changes nothing.
    loopguard_testkit::fuzz_check_restore(&make, &events, data, &findings);
});
