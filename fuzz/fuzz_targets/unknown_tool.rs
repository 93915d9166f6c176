//! Fuzzes `unknown-tool` with arbitrary event streams and settings: it must never panic,
//! report counts consistent with its thresholds and history, and give the same findings after
//! a snapshot/restore at an event the input picks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::unknown_tool::{Settings, UnknownTool};
use loopguard_core::{Detector, Level};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let warning = data.first().map_or(3, |b| u32::from(b % 4) + 1);
    let critical = warning + data.get(1).map_or(2, |b| u32::from(b % 6) + 1);
    let history = data.get(2).map_or(30, |b| u32::from(b % 40) + 1);
    let flags = data.get(3).copied().unwrap_or(0);
    let available_tools = if flags & 4 != 0 {
        vec!["read".to_owned(), "bash".to_owned()]
    } else {
        Vec::new()
    };
    let settings = Settings {
        warning_threshold: warning,
        critical_threshold: critical,
        warn: flags & 1 == 0,
        history_size: history,
        available_tools: available_tools.clone(),
        shell_shapes: flags & 2 == 0,
    };
    let make = || -> Box<dyn Detector> { Box::new(UnknownTool::new(settings.clone())) };
    let findings = loopguard_testkit::run(make(), &events);
    for (_, f) in &findings {
        assert!(f.count <= history.max(1));
        if available_tools.is_empty() {
            assert_eq!(f.level == Level::Critical, f.count >= critical);
        }
    }
    // The same veto as `run`: a snapshot/restore where the input asks changes nothing.
    loopguard_testkit::fuzz_check_restore(&make, &events, data, &findings);
});
