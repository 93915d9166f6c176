//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`.

mod common;

use loopguard_detect_known_poll::KnownPoll;

#[test]
fn corpus_no_false_positives() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let labels = common::labels(&dir);
    assert!(!labels.is_empty());
    let (mut fp, mut fired, mut negatives) = (vec![], 0, 0);
    for l in &labels {
        let events = common::events(&dir, &l.path);
        let f = common::replay(Box::new(KnownPoll::default()), &events);
        if !f.is_empty() {
            fired += 1;
        }
        if l.loop_ == "false" {
            negatives += 1;
            if !f.is_empty() {
                fp.push((l.path.clone(), f[0].0, f[0].1.message.clone()));
            }
        }
    }
    eprintln!(
        "known-poll-no-progress: {} sessions, {} with findings, {} loop=false sessions, false positives {}",
        labels.len(),
        fired,
        negatives,
        fp.len()
    );
    assert!(fp.is_empty(), "findings on loop=false sessions: {fp:?}");
}
