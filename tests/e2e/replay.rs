//! Replay maps every event to the line it came from.

use crate::support::{corpus_dir, root};
use loopguard_core::OwnedEvent;
use loopguard_transcript::{read_file, replay, Record, Transcript};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn check(t: &Transcript, chunk: usize) {
    let events: Vec<(usize, OwnedEvent)> = replay(t, chunk).collect();
    assert!(
        events.windows(2).all(|w| w[0].0 <= w[1].0),
        "{}: replay went back",
        t.file
    );
    let event_lines: BTreeSet<usize> = events.iter().map(|(l, _)| *l).collect();
    let entry_lines: BTreeSet<usize> = t.entries.iter().map(|e| e.line).collect();
    assert_eq!(
        event_lines, entry_lines,
        "{}: every line yields events and no event is off a line",
        t.file
    );
    // Each record's events are of its own kind.
    for (line, ev) in &events {
        let Ok(i) = t.entries.binary_search_by_key(line, |e| e.line) else {
            panic!("{}: line {line}", t.file)
        };
        let ok = match (&t.entries[i].record, ev) {
            (
                Record::Session { .. },
                OwnedEvent::SessionStart { .. } | OwnedEvent::RunStart { .. },
            ) => true,
            (Record::User { .. }, OwnedEvent::User { .. }) => true,
            (
                Record::Assistant { .. },
                OwnedEvent::MessageStart | OwnedEvent::TextDelta { .. } | OwnedEvent::MessageEnd,
            ) => true,
            (Record::ToolCall { .. }, OwnedEvent::ToolCall { .. }) => true,
            (Record::ToolResult { .. }, OwnedEvent::ToolResult { .. }) => true,
            (Record::Compaction, OwnedEvent::Compaction) => true,
            // The run starts on the first record when there is no header.
            (_, OwnedEvent::RunStart { .. }) => i == 0,
            // The settle point: before a user message, or after the last record.
            (Record::User { .. }, OwnedEvent::RunEnd) => true,
            (_, OwnedEvent::RunEnd) => i + 1 == t.entries.len(),
            _ => false,
        };
        assert!(
            ok,
            "{}: line {line}: {ev:?} does not come from {:?}",
            t.file, t.entries[i].record
        );
    }
}

fn example_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    v
}

#[test]
fn replay_maps_every_event_of_the_examples_to_its_line() {
    let files = example_files();
    assert!(files.len() >= 5);
    for f in files {
        let t = read_file(&f).unwrap();
        for chunk in [1, 16, 0] {
            check(&t, chunk);
        }
    }
}

#[test]
fn replay_maps_every_event_of_the_corpus_to_its_line() {
    let Some(dir) = corpus_dir() else { return };
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            check(&read_file(&p).unwrap(), 64);
            n += 1;
        }
    }
    assert!(n > 100);
}
