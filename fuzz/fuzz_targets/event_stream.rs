//! The whole guard (every detector, default preset) on arbitrary event streams: never panics,
//! verdicts are deterministic, and a snapshot/restore round trip at an event the input picks
//! (one input in four, `loopguard_testkit::fuzz_cut`) changes nothing.
//! The guards are built once per process and brought back to their fresh state before each
//! execution by restoring a snapshot taken when they were new, so an execution costs only the
//! events it feeds (and a restore that leaves any state behind shows up as a divergence).
#![no_main]
use libfuzzer_sys::fuzz_target;
use loopguard::orchestrator::Guard;
use std::cell::RefCell;

struct Guards {
    fresh: serde_json::Value,
    a: Guard,
    b: Guard,
    spare: Guard,
}

fn guards() -> Option<Guards> {
    let t = Guard::builder().preset("default").template().ok()?;
    let a = t.build().ok()?;
    let fresh = a.snapshot().ok()?;
    Some(Guards { fresh, a, b: t.build().ok()?, spare: t.build().ok()? })
}

thread_local! {
    static GUARDS: RefCell<Option<Guards>> = RefCell::new(guards());
}

fuzz_target!(|data: &[u8]| {
    let events = loopguard_testkit::decode_events(data);
    let cut = loopguard_testkit::fuzz_cut(data, events.len());
    GUARDS.with_borrow_mut(|g| {
        let Some(g) = g else { return };
        g.a.restore(&g.fresh).expect("a fresh snapshot restores");
        let Some(cut) = cut else {
            for e in &events {
                g.a.observe(&e.as_event());
            }
            return;
        };
        g.b.restore(&g.fresh).expect("a fresh snapshot restores");
        for (i, e) in events.iter().enumerate() {
            if i == cut {
                let snap = g.b.snapshot().expect("every built-in detector snapshots");
                g.spare
                    .restore(&snap)
                    .expect("a snapshot restores into a guard of the same template");
                std::mem::swap(&mut g.b, &mut g.spare);
            }
            let va = g.a.observe(&e.as_event());
            let vb = g.b.observe(&e.as_event());
            assert_eq!(va, vb, "verdicts must be deterministic and survive a restore");
        }
    });
});
