//! The sidecar protocol: arbitrary bytes, split on newlines, are fed to
//! `Server::handle_line`. It must never panic, and must answer each line with exactly one
//! line of JSON (an object, without a newline).
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_sidecar::{Server, ServerOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(mut options) = ServerOptions::preset("default") else { return };
    // A small bound so that eviction is exercised too.
    options.max_sessions = 3;
    options.snapshot_on_evict = data.first().is_some_and(|b| b % 2 == 0);
    let Ok(mut server) = Server::new(options) else { return };
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
