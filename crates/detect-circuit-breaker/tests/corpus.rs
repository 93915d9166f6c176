//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`.

use loopguard_detect_circuit_breaker::CircuitBreaker;
use loopguard_testkit::corpus::check;

#[test]
fn corpus_no_false_positives() {
    let Some(r) = check(&|| Box::new(CircuitBreaker::default()), None) else {
        return;
    };
    eprintln!("{}", r.summary("circuit-breaker"));
    assert!(
        r.false_positives.is_empty(),
        "findings on loop=false sessions: {:?}",
        r.false_positives
    );
}
