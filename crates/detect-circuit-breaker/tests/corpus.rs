//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`.

mod common;

use loopguard_detect_circuit_breaker::CircuitBreaker;

#[test]
fn corpus_no_false_positives() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let labels = common::labels(&dir);
    assert!(!labels.is_empty());
    let (mut fp, mut fired, mut negatives, mut loops, mut caught) = (vec![], 0, 0, 0, 0);
    for l in &labels {
        let events = common::events(&dir, &l.path);
        let f = common::replay(Box::new(CircuitBreaker::default()), &events);
        if !f.is_empty() {
            fired += 1;
        }
        if l.loop_ == "true" {
            loops += 1;
            if !f.is_empty() {
                caught += 1;
            }
        }
        if l.loop_ == "false" {
            negatives += 1;
            if !f.is_empty() {
                fp.push((l.path.clone(), f[0].0, f[0].1.message.clone()));
            }
        }
    }
    eprintln!(
        "circuit-breaker: {} sessions, {} with findings, labelled loops (any kind) caught {}/{}, {} loop=false sessions, false positives {}",
        labels.len(),
        fired,
        caught,
        loops,
        negatives,
        fp.len()
    );
    assert!(fp.is_empty(), "findings on loop=false sessions: {fp:?}");
}
