//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`, every labelled stalled-turns loop caught, no critical finding on the
//! sessions labelled "unsure"; prints recall and detection latency.

use loopguard_detect_stalled_turns::{Settings, StalledTurns};
use loopguard_testkit::corpus::check;

#[test]
fn corpus_no_false_positives_and_labelled_stalls_caught() {
    let Some(r) = check(
        &|| Box::new(StalledTurns::new(Settings::default())),
        Some("stalled-turns"),
    ) else {
        return;
    };
    eprintln!("{}", r.summary("stalled-turns (default)"));
    assert!(
        r.false_positives.is_empty(),
        "findings on loop=false sessions: {:?}",
        r.false_positives
    );
    assert!(
        r.missed.is_empty(),
        "labelled stalled-turns loops missed: {:?}",
        r.missed
    );
    assert!(
        r.unsure_critical.is_empty(),
        "critical findings on unsure sessions: {:?}",
        r.unsure_critical
    );
    assert!(
        r.caught.iter().all(|(_, l)| *l <= 0),
        "detection later than first_event: {:?}",
        r.caught
    );
}
