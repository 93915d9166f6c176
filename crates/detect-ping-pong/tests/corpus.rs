//! Ping-pong on the evaluation corpus: with the default settings, no finding on sessions
//! labelled `loop = false` and every labelled ping-pong loop caught; prints recall, latency
//! and what the `openclaw` settings do.

use loopguard_detect_ping_pong::{PingPong, Settings};
use loopguard_testkit::corpus::{check, Report};

fn evaluate(settings: Settings) -> Option<Report> {
    check(&|| Box::new(PingPong::new(settings)), Some("ping-pong"))
}

#[test]
fn corpus_default_no_false_positives_and_ping_pong_loops_caught() {
    let Some(r) = evaluate(Settings::default()) else {
        return;
    };
    eprintln!("{}", r.summary("ping-pong (default)"));
    assert!(
        r.false_positives.is_empty(),
        "findings on loop=false sessions: {:?}",
        r.false_positives
    );
    assert!(
        r.missed.is_empty(),
        "labelled ping-pong loops missed: {:?}",
        r.missed
    );
    assert_eq!(r.caught.len(), 5);
}

#[test]
fn corpus_openclaw_settings_figures() {
    let Some(r) = evaluate(Settings::OPENCLAW) else {
        return;
    };
    eprintln!("{}", r.summary("ping-pong (openclaw)"));
    // OpenClaw's period-2 rule only sees the strict alternations, and late.
    assert!(r.caught.len() < 5);
}
