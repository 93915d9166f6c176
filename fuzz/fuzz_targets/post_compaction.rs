//! Fuzzes `post-compaction-guard` with arbitrary event streams: it must never panic, never
//! fire without a compaction, and only ever report critical aborts with the stable code.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_core::{Level, OwnedEvent};
use loopguard::post_compaction::{PostCompactionGuard, Settings};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let window = data.first().map_or(3, |b| u32::from(b % 6) + 1);
    let detector = PostCompactionGuard::new(Settings { window_size: window });
    let findings = loopguard_testkit::run(Box::new(detector), &events);
    let compactions = events.iter().filter(|e| matches!(e, OwnedEvent::Compaction)).count();
    assert!(findings.len() <= compactions, "at most one abort per compaction");
    for (_, f) in &findings {
        assert_eq!(f.level, Level::Fatal);
        assert_eq!(f.code.as_deref(), Some("compaction_loop_persisted"));
        assert_eq!(f.count, window);
    }
});
