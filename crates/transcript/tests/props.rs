//! Property tests: the reader never panics, and replay keeps every event on its line.

use loopguard_core::{OwnedEvent, Stream};
use loopguard_transcript::{read_bytes, replay, Record};
use proptest::prelude::*;
use serde_json::json;

/// One valid loopguard line (without the header).
fn arb_line() -> impl Strategy<Value = serde_json::Value> {
    let text = "[a-zé \\n]{0,40}";
    prop_oneof![
        text.prop_map(|t| json!({"type": "user", "text": t})),
        (proptest::option::of(text), proptest::option::of(text)).prop_map(|(t, th)| {
            let mut v = json!({"type": "assistant"});
            if let Some(t) = t {
                v["text"] = json!(t);
            }
            if let Some(th) = th {
                v["thinking"] = json!(th);
            }
            v
        }),
        ("[a-z]{1,3}", 0u64..5).prop_map(|(tool, b)| json!({"type": "tool_call", "id": "c", "tool": tool, "args": {"k": b}, "batch": b})),
        ("[a-z]{1,3}", text, any::<bool>()).prop_map(|(tool, c, e)| json!({"type": "tool_result", "id": "c", "tool": tool, "content": c, "is_error": e, "images": 0})),
        Just(json!({"type": "compaction"})),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = read_bytes(&bytes, "fuzz.jsonl");
    }

    #[test]
    fn json_ish_garbage_never_panics(lines in proptest::collection::vec("[{}\\[\\]\":,a-z0-9 \\\\]{0,40}", 0..8)) {
        let text = lines.join("\n");
        let _ = read_bytes(text.as_bytes(), "fuzz.jsonl");
    }

    #[test]
    fn replay_maps_every_event_to_its_line(
        lines in proptest::collection::vec(arb_line(), 0..20),
        blanks in proptest::collection::vec(any::<bool>(), 20),
        chunk in 0usize..20,
    ) {
        let mut text = String::from("{\"type\":\"session\",\"id\":\"s\"}\n");
        for (i, l) in lines.iter().enumerate() {
            if blanks.get(i).copied().unwrap_or(false) {
                text.push('\n');
            }
            text.push_str(&l.to_string());
            text.push('\n');
        }
        let t = read_bytes(text.as_bytes(), "p.jsonl").unwrap();
        prop_assert_eq!(t.entries.len(), lines.len() + 1);
        let events: Vec<(usize, OwnedEvent)> = replay(&t, chunk).collect();
        // Lines never go backwards, and each record yields events on exactly its line.
        prop_assert!(events.windows(2).all(|w| w[0].0 <= w[1].0));
        for e in &t.entries {
            let mine: Vec<&OwnedEvent> = events.iter().filter(|(l, _)| *l == e.line).map(|(_, ev)| ev).collect();
            // A settle point sits on a user line, before its User event, or on the last line.
            if let Some(pos) = mine.iter().position(|ev| matches!(ev, OwnedEvent::RunEnd)) {
                let on_user = matches!(e.record, Record::User { .. }) && pos == 0;
                prop_assert!(on_user || e.line + 1 == t.lines || e.line == t.entries.last().map_or(0, |x| x.line));
            }
            prop_assert!(!mine.is_empty());
            if let Record::Assistant { text, thinking } = &e.record {
                let (mut th, mut tx) = (String::new(), String::new());
                for ev in &mine {
                    if let OwnedEvent::TextDelta { stream, delta } = ev {
                        if chunk > 0 {
                            prop_assert!(delta.chars().count() <= chunk);
                        }
                        match stream {
                            Stream::Thinking => { prop_assert!(tx.is_empty()); th.push_str(delta) }
                            Stream::Text => tx.push_str(delta),
                        }
                    }
                }
                prop_assert_eq!(th, thinking.clone().unwrap_or_default());
                prop_assert_eq!(tx, text.clone().unwrap_or_default());
                prop_assert_eq!(mine.first(), Some(&&OwnedEvent::MessageStart));
                // The settle point may follow a transcript's last message on its line.
                let last = mine.iter().rev().find(|ev| !matches!(ev, OwnedEvent::RunEnd));
                prop_assert_eq!(last, Some(&&OwnedEvent::MessageEnd));
            }
        }
    }
}
