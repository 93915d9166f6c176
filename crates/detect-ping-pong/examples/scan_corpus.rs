//! Prints every `ping-pong` finding (default settings) on the given corpus sessions:
//! `cargo run -p loopguard-detect-ping-pong --example scan_corpus -- DIR FILE...`.

use loopguard_core::{Bus, Origin, OwnedEvent, Stream};
use loopguard_detect_ping_pong::{PingPong, Settings};
use serde_json::Value;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: scan_corpus DIR FILE...");
        std::process::exit(2);
    };
    for file in args {
        let path = std::path::Path::new(&dir).join(&file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("cannot read {}", path.display());
            continue;
        };
        let mut bus = Bus::new(vec![Box::new(PingPong::new(Settings::default()))]);
        for (line, l) in text.lines().enumerate() {
            let Ok(v) = serde_json::from_str::<Value>(l) else {
                continue;
            };
            let s = |k: &str| {
                v.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let events = match v.get("type").and_then(Value::as_str).unwrap_or_default() {
                "user" => vec![OwnedEvent::User {
                    text: s("text"),
                    origin: Origin::Unknown,
                }],
                "assistant" => vec![
                    OwnedEvent::MessageStart,
                    OwnedEvent::TextDelta {
                        stream: Stream::Text,
                        delta: s("text"),
                    },
                    OwnedEvent::MessageEnd,
                ],
                "tool_call" => vec![OwnedEvent::ToolCall {
                    id: s("id"),
                    tool: s("tool"),
                    args: v.get("args").cloned().unwrap_or(Value::Null),
                    batch: v.get("batch").and_then(Value::as_u64),
                }],
                "tool_result" => vec![OwnedEvent::ToolResult {
                    id: s("id"),
                    tool: s("tool"),
                    content: s("content"),
                    is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    images: 0,
                    details: None,
                }],
                "compaction" => vec![OwnedEvent::Compaction],
                _ => vec![],
            };
            for e in &events {
                for f in bus.observe(&e.as_event()) {
                    println!(
                        "{file}:{line}: {} count {} {}",
                        f.level.as_str(),
                        f.count,
                        f.message
                    );
                }
            }
        }
    }
}
