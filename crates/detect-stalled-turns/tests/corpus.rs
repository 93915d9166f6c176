//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`, every labelled stalled-turns loop caught, no critical finding on the
//! sessions labelled "unsure"; prints recall and detection latency.

use loopguard_detect_stalled_turns::{Settings, StalledTurns};
use loopguard_testkit::corpus::check_clean;

#[test]
fn corpus_no_false_positives_and_labelled_stalls_caught() {
    let Some(r) = check_clean(
        "stalled-turns (default)",
        &|| Box::new(StalledTurns::new(Settings::default())),
        Some("stalled-turns"),
    ) else {
        return;
    };
    r.assert_none_missed();
    r.assert_no_unsure_critical();
    assert!(
        r.caught.iter().all(|(_, l)| *l <= 0),
        "detection later than first_event: {:?}",
        r.caught
    );
}
