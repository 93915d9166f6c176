//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`; labelled post-compaction loops are caught.

use loopguard_core::OwnedEvent;
use loopguard_detect_post_compaction::{PostCompactionGuard, Settings};
use loopguard_testkit::corpus::check_each;

#[test]
fn corpus_no_false_positives_and_labelled_loops_caught() {
    let mut with_compaction = 0;
    let Some(r) = check_each(
        &|| Box::new(PostCompactionGuard::new(Settings::default())),
        Some("post-compaction"),
        &mut |_, events, _| {
            if events
                .iter()
                .any(|(_, e)| matches!(e, OwnedEvent::Compaction))
            {
                with_compaction += 1;
            }
        },
    ) else {
        return;
    };
    eprintln!(
        "{}; {with_compaction} sessions with a compaction",
        r.summary("post-compaction-guard")
    );
    r.assert_no_false_positives();
    r.assert_none_missed();
}
