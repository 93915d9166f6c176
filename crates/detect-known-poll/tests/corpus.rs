//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`.

use loopguard_detect_known_poll::KnownPoll;
use loopguard_testkit::corpus::check;

#[test]
fn corpus_no_false_positives() {
    let Some(r) = check(&|| Box::new(KnownPoll::default()), Some("poll-no-progress")) else {
        return;
    };
    eprintln!("{}", r.summary("known-poll-no-progress"));
    assert!(
        r.false_positives.is_empty(),
        "findings on loop=false sessions: {:?}",
        r.false_positives
    );
}
