//! The default settings on the evaluation corpus: no finding on sessions labelled
//! `loop = false`; every labelled unknown-tool loop gets a finding (a steer at least; the
//! figures printed say how many reached critical).

use loopguard_detect_unknown_tool::UnknownTool;
use loopguard_testkit::corpus::check_clean;

#[test]
fn corpus_no_false_positives_and_labelled_loops_caught() {
    let make = || -> Box<dyn loopguard_core::Detector> { Box::new(UnknownTool::default()) };
    if let Some(r) = check_clean("unknown-tool", &make, Some("unknown-tool")) {
        r.assert_none_missed();
    }
}
