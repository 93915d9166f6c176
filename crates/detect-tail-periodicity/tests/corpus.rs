//! The evaluation corpus (`$LOOPGUARD_CORPUS` or `../shared/corpus` from the workspace root):
//! every session labelled `text-periodic` is caught, and no session labelled `loop = false` gets
//! any finding, with the default settings.

use loopguard_detect_tail_periodicity::{Settings, TailPeriodicity};
use loopguard_testkit::corpus::assert_kind_caught_and_clean;

#[test]
fn default_catches_every_text_periodic_session_and_flags_no_legit_one() {
    assert_kind_caught_and_clean(
        &|| Box::new(TailPeriodicity::new(Settings::default())),
        "text-periodic",
    );
}
