#![no_main]
//! Arbitrary event streams through `tail-periodicity` (exact and seed engines): no panic,
//! at most one finding per message, bounded memory, and the exact engine's first finding
//! in a message agrees with the brute-force oracles on small settings (copies rule and
//! evidence rule).
//!
//! The input's length picks one of five settings (default, the seed's, small copies rule,
//! evidence rule with low thresholds, where the engine reports a run at its second copy,
//! and with the default thresholds, where it waits for the third and follows short chants
//! apart), so each runs on a fifth of the inputs; with the last three, the first message is
//! also checked against that rule's oracle.

use libfuzzer_sys::fuzz_target;
use loopguard::tail_periodicity::{oracle, Rule, Settings, TailPeriodicity};
use loopguard_core::{Bus, Detector, OwnedEvent, Stream};

/// The oracles are brute force: they check first messages of at most this many bytes of text.
const ORACLE_TEXT: usize = 4000;

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let small = Settings {
        min_unit: 3,
        max_unit: 64,
        long_unit: 10,
        rule: Rule::Copies,
        ..Settings::default()
    };
    let evidence = Settings {
        min_unit: 3,
        evidence_scale: 10,
        chant_copies: 4,
        counter_noise: false,
        ..Settings::default()
    };
    let evidence_three = Settings {
        min_unit: 3,
        chant_copies: 4,
        counter_noise: false,
        ..Settings::default()
    };
    // The length, not a byte, picks: every byte stays the decoder's.
    let pick = data.len() % 5;
    let settings = match pick {
        0 => Settings::default(),
        1 => Settings::pi_repetition_guard(),
        2 => small.clone(),
        3 => evidence.clone(),
        _ => evidence_three.clone(),
    };
    let mut bus = Bus::new(vec![
        Box::new(TailPeriodicity::new(settings)) as Box<dyn Detector>
    ]);
    let mut in_message = 0usize;
    for e in &events {
        if matches!(e, OwnedEvent::MessageStart) {
            in_message = 0;
        }
        in_message += bus.observe(&e.as_event()).len();
        assert!(in_message <= 1, "at most one finding per message");
    }
    if pick < 2 {
        return;
    }
    // Oracle check on the first message.
    let mut pieces: Vec<(Stream, &str)> = Vec::new();
    let mut started = false;
    for e in &events {
        match e {
            OwnedEvent::MessageStart if !started => started = true,
            OwnedEvent::MessageStart | OwnedEvent::MessageEnd if started => break,
            OwnedEvent::TextDelta { stream, delta } if started => {
                pieces.push((*stream, delta.as_str()))
            }
            _ => {}
        }
    }
    if started && pieces.iter().map(|(_, d)| d.len()).sum::<usize>() < ORACLE_TEXT {
        let mut evs = vec![OwnedEvent::MessageStart];
        evs.extend(pieces.iter().map(|(s, d)| OwnedEvent::TextDelta {
            stream: *s,
            delta: (*d).to_owned(),
        }));
        if pick == 2 {
            let got = loopguard_testkit::run(Box::new(TailPeriodicity::new(small.clone())), &evs);
            let want = oracle::first_fire(&small, &pieces);
            assert_eq!(got.first().and_then(|(_, f)| f.offset), want.map(|w| w.0));
        } else {
            let rule = if pick == 3 { &evidence } else { &evidence_three };
            let got = loopguard_testkit::run(Box::new(TailPeriodicity::new(rule.clone())), &evs);
            let want = oracle::evidence_fire(rule, &pieces);
            assert_eq!(got.first().and_then(|(_, f)| f.offset), want.map(|w| w.0));
        }
    }
});
