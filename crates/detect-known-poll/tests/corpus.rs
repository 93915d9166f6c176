//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`.

use loopguard_detect_known_poll::KnownPoll;
use loopguard_testkit::corpus::check_clean;

#[test]
fn corpus_no_false_positives() {
    check_clean(
        "known-poll-no-progress",
        &|| Box::new(KnownPoll::default()),
        Some("poll-no-progress"),
    );
}
