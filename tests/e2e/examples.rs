//! The bundled example transcripts: the clean one is clean, each looping one is caught.

use crate::support::{loopguard, root};
use serde_json::Value;

#[test]
fn scanning_examples_finds_every_bundled_loop_and_nothing_in_the_clean_session() {
    let dir = root().join("examples");
    let run = loopguard(&["scan", "--format", "json", dir.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report = run.json();
    let sessions = report["sessions"].as_array().unwrap();
    let by_name = |name: &str| -> &Value {
        sessions
            .iter()
            .find(|s| s["path"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} not scanned"))
    };
    assert_eq!(
        by_name("clean-bugfix.jsonl")["findings"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // The detector that catches each loop first under the default preset (several may).
    for (name, detectors) in [
        ("identical-reads.jsonl", &["generic-repeat"][..]),
        (
            "poll-no-progress.jsonl",
            &["known-poll-no-progress", "generic-repeat"][..],
        ),
        ("format-error-stall.jsonl", &["stalled-turns"][..]),
        (
            "text-runaway.jsonl",
            &["tail-periodicity", "variation-loop"][..],
        ),
        (
            "ping-pong.jsonl",
            &["ping-pong", "generic-repeat", "circuit-breaker"][..],
        ),
    ] {
        let f = by_name(name)["findings"].as_array().unwrap();
        assert!(
            f.iter()
                .any(|x| detectors.iter().any(|d| x["detector"] == *d)),
            "{name}: expected a finding of {detectors:?}, got {:?}",
            f.iter().map(|x| x["detector"].clone()).collect::<Vec<_>>()
        );
    }
    // A text finding carries its character offset; an abort inside the message saves the
    // rest of it (and there is no line after it).
    let runaway = by_name("text-runaway.jsonl");
    let f = &runaway["findings"][0];
    assert_eq!(f["event"], 2);
    assert!(f["offset"].as_u64().is_some_and(|o| o > 0), "{f}");
    if f["action"] == "abort" {
        assert_eq!(runaway["wasted"]["events"], 0);
        assert!(
            runaway["wasted"]["chars"].as_u64().unwrap() > 0,
            "{}",
            runaway["wasted"]
        );
    }
    assert_eq!(
        by_name("clean-bugfix.jsonl")["wasted"],
        serde_json::json!({"events": 0, "chars": 0, "tokens": 0})
    );
    // Paths are sorted for deterministic output.
    let paths: Vec<&str> = sessions
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort_unstable();
    assert_eq!(paths, sorted);
}
