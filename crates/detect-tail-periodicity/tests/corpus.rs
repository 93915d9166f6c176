//! The evaluation corpus (`$LOOPGUARD_CORPUS` or `../shared/corpus` from the workspace root):
//! every session labelled `text-periodic` is caught, and no session labelled `loop = false` gets
//! any finding, with the default settings.

use loopguard_detect_tail_periodicity::{Settings, TailPeriodicity};
use loopguard_testkit::corpus::check_kind;

#[test]
fn default_catches_every_text_periodic_session_and_flags_no_legit_one() {
    let verbose = std::env::var_os("LOOPGUARD_VERBOSE").is_some();
    let make = || -> Box<dyn loopguard_core::Detector> {
        Box::new(TailPeriodicity::new(Settings::default()))
    };
    let Some(c) = check_kind(&make, "text-periodic", verbose) else {
        return;
    };
    eprintln!(
        "default: caught {} text-periodic sessions, {} loop=false sessions clean",
        c.caught, c.clean
    );
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    assert!(
        c.clean > 100,
        "only {} loop-free sessions were read",
        c.clean
    );
}
