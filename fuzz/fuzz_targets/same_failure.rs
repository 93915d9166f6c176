//! Fuzzes `same-failure` with arbitrary event streams: it must never panic, its findings'
//! levels must match their counts (warnings on results, criticals on calls, never an abort),
//! and a snapshot/restore in the middle changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::same_failure::{SameFailure, Settings};
use loopguard_core::{Bus, Level, OwnedEvent, MAX_EVIDENCE};

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
        let cut = events.len() / 2;
        let mut bus = Bus::new(vec![Box::new(SameFailure::new(settings))]);
        let mut split = Vec::new();
        for (i, e) in events[..cut].iter().enumerate() {
            split.extend(bus.observe(&e.as_event()).into_iter().map(|f| (i, f)));
        }
        let snap = bus.snapshot().expect("snapshot");
        let mut bus = Bus::new(vec![Box::new(SameFailure::new(settings))]);
        bus.restore(&snap).expect("restore");
        for (i, e) in events.iter().enumerate().skip(cut) {
            split.extend(bus.observe(&e.as_event()).into_iter().map(|f| (i, f)));
        }
        assert_eq!(whole, split);
    }
});
