//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`.

use loopguard_detect_circuit_breaker::CircuitBreaker;
use loopguard_testkit::corpus::check_clean;

#[test]
fn corpus_no_false_positives() {
    check_clean(
        "circuit-breaker",
        &|| Box::new(CircuitBreaker::default()),
        None,
    );
}
