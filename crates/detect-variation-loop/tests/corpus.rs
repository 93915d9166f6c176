//! The evaluation corpus (`$LOOPGUARD_CORPUS` or `../shared/corpus` from the workspace root):
//! every session labelled `text-variation` is caught, and no session labelled `loop = false` gets
//! any finding, with the default settings.

use loopguard_detect_variation_loop::{Settings, VariationLoop};
use loopguard_testkit::corpus::check_kind;

#[test]
fn default_catches_every_text_variation_session_and_flags_no_legit_one() {
    let verbose = std::env::var_os("LOOPGUARD_VERBOSE").is_some();
    let make = || -> Box<dyn loopguard_core::Detector> {
        Box::new(VariationLoop::new(Settings::default()))
    };
    let Some(c) = check_kind(&make, "text-variation", verbose) else {
        return;
    };
    eprintln!(
        "default: caught {} text-variation sessions, {} loop=false sessions clean",
        c.caught, c.clean
    );
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    assert!(
        c.clean > 100,
        "only {} loop-free sessions were read",
        c.clean
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
