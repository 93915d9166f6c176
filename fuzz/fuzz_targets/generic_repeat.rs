//! Fuzzes the `generic-repeat` detector: any event stream, several configurations (the
//! thresholds come from the input too; the custom one has the similar-calls streak). Invariants: no panic; findings are the detector's,
//! bounded, and critical only on tool calls; a snapshot/restore at an event the input picks changes nothing.
//! The configuration is a TOML table generated from the input's first 12 bytes; every distinct
//! table is parsed (and must give valid settings) the first time it is seen, and the settings
//! are kept by their text (a bounded map), so an execution costs its events, not a TOML parse.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::generic_repeat::{GenericRepeat, Settings};
use loopguard_core::{Bus, Detector, Finding, Level, OwnedEvent, MAX_EVIDENCE};
use std::cell::RefCell;
use std::collections::HashMap;

/// Parsed configurations kept at most (the map starts over when full).
const CACHED: usize = 4096;

thread_local! {
    static PARSED: RefCell<HashMap<String, Option<Settings>>> = RefCell::new(HashMap::new());
}

fn settings(data: &[u8]) -> Vec<Settings> {
    let b = |i: usize| u32::from(data.get(i).copied().unwrap_or(0));
    let warn = 1 + b(0) % 4;
    let block = warn + 1 + b(1) % 4;
    let size = 1 + b(2) % 12;
    let threshold = 1 + b(3) % size;
    let oc_warn = 1 + b(4) % 6;
    let oc_crit = oc_warn + 1 + b(5) % 6;
    let custom = format!(
        "warn-threshold = {warn}\nblock-threshold = {block}\nignore-errors = {}\nresult-identity = \"{}\"\n\
         window = {{ size = {size}, threshold = {threshold}, level = \"{}\", identity = \"{}\" }}\n\
         openclaw = {{ history-size = {}, warning-threshold = {oc_warn}, critical-threshold = {oc_crit}, skip-known-polls = {} }}\n\
         similar-calls = {{ warning-threshold = {}, empty-warning-threshold = 3, critical-threshold = {} }}\n\
         ignore-tools = [\"grep\"]",
        b(6) % 2 == 0,
        if b(7) % 2 == 0 { "raw" } else { "normalized" },
        if b(8) % 2 == 0 || b(9) % 2 == 1 { "warning" } else { "critical" },
        if b(9) % 2 == 0 { "call" } else { "call-and-result" },
        1 + b(10) % 40,
        b(11) % 2 == 0,
        3 + b(0) % 3,
        if b(1) % 2 == 0 { 0 } else { 6 + b(2) % 4 },
    );
    let mut out = vec![Settings::default()];
    let parsed = PARSED.with_borrow_mut(|cache| {
        if let Some(s) = cache.get(&custom) {
            return s.clone();
        }
        let parsed = custom
            .parse::<toml::Table>()
            .ok()
            .map(|t| Settings::from_table(&t).expect("generated settings are valid"));
        if cache.len() >= CACHED {
            cache.clear();
        }
        cache.insert(custom, parsed.clone());
        parsed
    });
    out.extend(parsed);
    out
}

fn run(s: &Settings, events: &[OwnedEvent], cut: Option<usize>) -> Vec<(usize, Finding)> {
    let mk = || {
        Bus::new(vec![
            Box::new(GenericRepeat::new(s.clone())) as Box<dyn Detector>
        ])
    };
    let mut bus = mk();
    // The guard's veto, as a host gives it: refused calls' results reach no detector.
    let mut veto = loopguard_testkit::Veto;
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if Some(i) == cut {
            let snap = bus.snapshot().expect("snapshot");
            let text = serde_json::to_string(&snap).expect("json");
            let mut fresh = mk();
            fresh
                .restore(&serde_json::from_str(&text).expect("parse"))
                .expect("restore");
            bus = fresh;
        }
        for f in veto.observe(&mut bus, &e.as_event()) {
            out.push((i, f));
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    for s in settings(data) {
        let plain = run(&s, &events, None);
        for (i, f) in &plain {
            assert_eq!(f.detector, "generic-repeat");
            assert!(f.count >= 1);
            assert!(f.evidence.len() <= MAX_EVIDENCE);
            assert!(f.level != Level::Fatal);
            if f.level == Level::Critical {
                assert!(
                    matches!(events[*i], OwnedEvent::ToolCall { .. }),
                    "critical only blocks calls"
                );
            }
        }
        if let Some(cut) = loopguard_testkit::fuzz_cut(data, events.len()) {
            assert_eq!(plain, run(&s, &events, Some(cut)));
        }
    }
});
