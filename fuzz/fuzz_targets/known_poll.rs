//! Fuzzes `known-poll-no-progress` with arbitrary event streams and thresholds: it must never
//! panic, only judge known poll calls, keep counts within the history size, and give the
//! same findings after a snapshot/restore in the middle of the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::known_poll::{KnownPoll, Settings};
use loopguard_core::{Bus, Level};

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
    let make = || Box::new(KnownPoll::new(settings.clone()));
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
    // snapshot/restore half-way gives the same findings
    let cut = events.len() / 2;
    let mut bus = Bus::new(vec![make()]);
    let mut out = Vec::new();
    for (i, e) in events[..cut].iter().enumerate() {
        out.extend(bus.observe(&e.as_event()).into_iter().map(|f| (i, f)));
    }
    let snap = bus.snapshot().expect("snapshot");
    let mut bus2 = Bus::new(vec![make()]);
    bus2.restore(&snap).expect("restore");
    for (i, e) in events.iter().enumerate().skip(cut) {
        out.extend(bus2.observe(&e.as_event()).into_iter().map(|f| (i, f)));
    }
    assert_eq!(findings, out);
});
