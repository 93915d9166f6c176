//! Ping-pong on the evaluation corpus: with the default settings, no finding on sessions
//! labelled `loop = false` and every labelled ping-pong loop caught; prints recall, latency
//! and what the `openclaw` settings do.

use loopguard_detect_ping_pong::{PingPong, Settings};
use loopguard_testkit::corpus::{check, check_clean, Report};

fn evaluate(settings: Settings) -> Option<Report> {
    check(&|| Box::new(PingPong::new(settings)), Some("ping-pong"))
}

#[test]
fn corpus_default_no_false_positives_and_ping_pong_loops_caught() {
    let make =
        || -> Box<dyn loopguard_core::Detector> { Box::new(PingPong::new(Settings::default())) };
    let Some(r) = check_clean("ping-pong (default)", &make, Some("ping-pong")) else {
        return;
    };
    r.assert_none_missed();
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
