//! Fuzzes `stalled-turns` with arbitrary event streams: it must never panic, its findings'
//! levels must match their counts, and a snapshot/restore in the middle changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::stalled_turns::{Settings, StalledTurns};
use loopguard_core::{Bus, Level};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let settings = Settings::default();
    let whole = loopguard_testkit::run(Box::new(StalledTurns::new(settings)), &events);
    for (_, f) in &whole {
        assert!(f.count >= settings.warning_threshold);
        assert_eq!(f.level == Level::Fatal, f.count >= settings.critical_threshold);
        assert!(f.level != Level::Critical);
    }
    let cut = events.len() / 2;
    let mut bus = Bus::new(vec![Box::new(StalledTurns::new(settings))]);
    let mut split = Vec::new();
    for (i, e) in events[..cut].iter().enumerate() {
        split.extend(bus.observe(&e.as_event()).into_iter().map(|f| (i, f)));
    }
    let snap = bus.snapshot().expect("snapshot");
    let mut bus = Bus::new(vec![Box::new(StalledTurns::new(settings))]);
    bus.restore(&snap).expect("restore");
    for (i, e) in events.iter().enumerate().skip(cut) {
        split.extend(bus.observe(&e.as_event()).into_iter().map(|f| (i, f)));
    }
    assert_eq!(whole, split);
});
