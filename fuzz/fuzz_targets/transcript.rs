//! Arbitrary bytes through the transcript reader and replay: never a panic, and replay keeps
//! every event on a line the reader produced, in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_transcript::{read_bytes, replay};

fuzz_target!(|data: &[u8]| {
    let Ok(t) = read_bytes(data, "fuzz.jsonl") else { return };
    assert!(t.entries.len() <= t.lines);
    assert!(t.entries.windows(2).all(|w| w[0].line < w[1].line));
    let chunk = usize::from(data.first().copied().unwrap_or(0) % 32);
    let mut last = 0;
    for (line, _event) in replay(&t, chunk) {
        assert!(line >= last, "replay went back from line {last} to {line}");
        assert!(line < t.lines);
        last = line;
    }
});
