//! Inputs the `tail_periodicity` fuzz target found, kept as named tests: the exact engine must
//! agree with the brute-force oracles on them.
//!
//! `aa529503`: a thought of nothing but newlines, then one character of text. The oracle looked
//! ahead for the message's first content (a chant is a run that fills the message from its
//! start), so it fired on the newlines; the detector, rightly, cannot know the future. The
//! oracle is causal now.

use loopguard_core::{OwnedEvent, Stream};
use loopguard_detect_tail_periodicity::{oracle, Settings, TailPeriodicity};

fn first_message(events: &[OwnedEvent]) -> Vec<(Stream, String)> {
    let mut pieces = Vec::new();
    let mut started = false;
    for e in events {
        match e {
            OwnedEvent::MessageStart if !started => started = true,
            OwnedEvent::MessageStart | OwnedEvent::MessageEnd if started => break,
            OwnedEvent::TextDelta { stream, delta } if started => {
                pieces.push((*stream, delta.clone()))
            }
            _ => {}
        }
    }
    pieces
}

fn evidence_agrees(data: &[u8]) {
    let evidence = Settings {
        min_unit: 3,
        evidence_scale: 10,
        chant_copies: 4,
        counter_noise: false,
        ..Settings::default()
    };
    let events = loopguard_testkit::decode_events(data);
    let pieces = first_message(&events);
    let borrowed: Vec<(Stream, &str)> = pieces.iter().map(|(s, d)| (*s, d.as_str())).collect();
    let mut evs = vec![OwnedEvent::MessageStart];
    evs.extend(pieces.iter().map(|(s, d)| OwnedEvent::TextDelta {
        stream: *s,
        delta: d.clone(),
    }));
    let got = loopguard_testkit::run(Box::new(TailPeriodicity::new(evidence.clone())), &evs);
    let want = oracle::evidence_fire(&evidence, &borrowed);
    assert_eq!(got.first().and_then(|(_, f)| f.offset), want.map(|w| w.0));
}

#[test]
fn fuzz_tail_periodicity_aa529503_evidence_rule_agrees_with_its_oracle() {
    let mut data = vec![
        0, 0, 1, 5, 0, 0, 8, 0, 1, 5, 0, 0, 91, 8, 0, 1, 0, 8, 0, 1, 5, 0, 0, 8,
    ];
    data.extend([255; 52]);
    data.extend([0, 1, 5, 0, 0, 8, 0, 1]);
    evidence_agrees(&data);
}
