//! The evaluation corpus (`$LOOPGUARD_CORPUS` or `../shared/corpus` from the workspace root):
//! every session labelled `text-variation` is caught, and no session labelled `loop = false` gets
//! any finding, with the default settings.

use loopguard_detect_variation_loop::{Settings, VariationLoop};
use loopguard_testkit::corpus::{assert_kind_caught_and_clean, check_kind};

#[test]
fn default_catches_every_text_variation_session_and_flags_no_legit_one() {
    assert_kind_caught_and_clean(
        &|| Box::new(VariationLoop::new(Settings::default())),
        "text-variation",
    );
}

#[test]
fn seed_preset_on_the_corpus_is_reported() {
    // The seed rule is known to over-fire (§2.7); this only reports its count.
    let make = || -> Box<dyn loopguard_core::Detector> {
        Box::new(VariationLoop::new(Settings::pi_repetition_guard()))
    };
    let Some(c) = check_kind(&make, "text-variation", false) else {
        return;
    };
    eprintln!(
        "pi-repetition-guard preset: {} loop=false sessions clean, {} flagged",
        c.clean,
        c.problems.len()
    );
}
