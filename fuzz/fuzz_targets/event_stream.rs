//! The whole guard (every detector, default preset) on arbitrary event streams: never panics,
//! verdicts are deterministic, and a snapshot/restore round trip halfway changes nothing.
//! The configuration is resolved once (a template), so each execution only builds guards.
#![no_main]
use libfuzzer_sys::fuzz_target;
use loopguard::orchestrator::{Guard, GuardTemplate};
use std::sync::OnceLock;

fn template() -> Option<&'static GuardTemplate> {
    static T: OnceLock<Option<GuardTemplate>> = OnceLock::new();
    T.get_or_init(|| Guard::builder().preset("default").template().ok()).as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(t) = template() else { return };
    let events = loopguard_testkit::decode_events(data);
    let (Ok(mut a), Ok(mut b)) = (t.build(), t.build()) else { return };
    let half = events.len() / 2;
    for (i, e) in events.iter().enumerate() {
        if i == half {
            let snap = b.snapshot().expect("every built-in detector snapshots");
            let Ok(mut c) = t.build() else { return };
            c.restore(&snap).expect("a snapshot restores into a guard of the same template");
            b = c;
        }
        let va = a.observe(&e.as_event());
        let vb = b.observe(&e.as_event());
        assert_eq!(va, vb, "verdicts must be deterministic and survive a restore");
    }
});
