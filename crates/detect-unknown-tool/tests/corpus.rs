//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`; every labelled unknown-tool loop gets a finding (a steer at least; the
//! figures printed say how many reached critical).

use loopguard_detect_unknown_tool::UnknownTool;
use loopguard_testkit::corpus::check;

#[test]
fn corpus_no_false_positives_and_labelled_loops_caught() {
    let Some(r) = check(&|| Box::new(UnknownTool::default()), Some("unknown-tool")) else {
        return;
    };
    eprintln!("{}", r.summary("unknown-tool"));
    assert!(
        r.false_positives.is_empty(),
        "findings on loop=false sessions: {:?}",
        r.false_positives
    );
    assert!(
        r.missed.is_empty(),
        "labelled unknown-tool loops missed: {:?}",
        r.missed
    );
}
