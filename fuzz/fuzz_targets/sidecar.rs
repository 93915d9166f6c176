//! The sidecar protocol: arbitrary bytes, split on newlines, are fed to
//! `Server::handle_line`. It must never panic, and must answer each line with exactly one
//! line of JSON (an object, without a newline).
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard::orchestrator::{Guard, GuardTemplate};
use loopguard_sidecar::Server;
use std::sync::OnceLock;

fn template() -> Option<&'static GuardTemplate> {
    static T: OnceLock<Option<GuardTemplate>> = OnceLock::new();
    T.get_or_init(|| Guard::builder().preset("default").template().ok()).as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(t) = template() else { return };
    // A small bound so that eviction is exercised too.
    let snapshot_on_evict = data.first().is_some_and(|b| b % 2 == 0);
    let mut server = Server::from_template(t.clone(), 3, snapshot_on_evict);
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let answer = server.handle_line(i as u64 + 1, line);
        assert!(!answer.contains('\n'), "an answer spans lines: {answer}");
        let value: serde_json::Value = serde_json::from_str(&answer).expect("answers are JSON");
        assert!(value.is_object(), "answers are objects: {answer}");
        if let Some(err) = value.get("error") {
            assert_eq!(err.get("line").and_then(serde_json::Value::as_u64), Some(i as u64 + 1));
        }
        assert!(server.live_sessions() <= 3);
    }
});
