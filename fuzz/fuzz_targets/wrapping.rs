//! A host's wrapping taken off a tool result: any text is read without a panic, the plain text
//! differs from the input and is never longer, and it is its own plain text once more, but for
//! a wrapping the first pass uncovered (an envelope's output may itself open with a stamp).
#![no_main]
use libfuzzer_sys::fuzz_target;
use loopguard_core::wrapping::plain;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(p) = plain(text) {
        assert_ne!(p, text);
        assert!(p.len() <= text.len() + "Exit code: -9223372036854775808\nOutput:\n".len());
        let _ = plain(&p);
    }
});
