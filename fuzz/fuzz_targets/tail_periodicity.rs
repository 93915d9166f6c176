#![no_main]
//! Arbitrary event streams through `tail-periodicity` (exact and seed engines): no panic,
//! at most one finding per message, bounded memory, and the exact engine's first finding
//! in a message agrees with the brute-force oracles on small settings (copies rule and
//! evidence rule).

use libfuzzer_sys::fuzz_target;
use loopguard_core::{Bus, Detector, OwnedEvent, Stream};
use loopguard::tail_periodicity::{oracle, Rule, Settings, TailPeriodicity};

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let small = Settings { min_unit: 3, max_unit: 64, long_unit: 10, rule: Rule::Copies, ..Settings::default() };
    let evidence = Settings { min_unit: 3, evidence_scale: 10, chant_copies: 4, counter_noise: false, ..Settings::default() };
    for settings in [Settings::default(), Settings::pi_repetition_guard(), small.clone(), evidence.clone()] {
        let mut bus = Bus::new(vec![Box::new(TailPeriodicity::new(settings)) as Box<dyn Detector>]);
        let mut in_message = 0usize;
        for e in &events {
            if matches!(e, OwnedEvent::MessageStart) {
                in_message = 0;
            }
            in_message += bus.observe(&e.as_event()).len();
            assert!(in_message <= 1, "at most one finding per message");
        }
    }
    // Oracle check on the first message.
    let mut pieces: Vec<(Stream, &str)> = Vec::new();
    let mut started = false;
    for e in &events {
        match e {
            OwnedEvent::MessageStart if !started => started = true,
            OwnedEvent::MessageStart | OwnedEvent::MessageEnd if started => break,
            OwnedEvent::TextDelta { stream, delta } if started => pieces.push((*stream, delta.as_str())),
            _ => {}
        }
    }
    if started && pieces.iter().map(|(_, d)| d.len()).sum::<usize>() < 4000 {
        let mut evs = vec![OwnedEvent::MessageStart];
        evs.extend(pieces.iter().map(|(s, d)| OwnedEvent::TextDelta { stream: *s, delta: (*d).to_owned() }));
        let got = loopguard_testkit::run(Box::new(TailPeriodicity::new(small.clone())), &evs);
        let want = oracle::first_fire(&small, &pieces);
        assert_eq!(got.first().and_then(|(_, f)| f.offset), want.map(|w| w.0));
        let got = loopguard_testkit::run(Box::new(TailPeriodicity::new(evidence.clone())), &evs);
        let want = oracle::evidence_fire(&evidence, &pieces);
        assert_eq!(got.first().and_then(|(_, f)| f.offset), want.map(|w| w.0));
    }
});
