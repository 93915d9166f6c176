//! 100,000 events of 1,000 interleaved sessions, plus malformed lines, sent through the
//! sidecar binary: every line is answered, in order, with the verdict the library API gives
//! for the same events.

use loopguard::orchestrator::Guard;
use loopguard_core::{OwnedEvent, Stream};
use loopguard_sidecar::{render_verdict, Server, ServerOptions};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::Instant;

const SESSIONS: usize = 1_000;
const EVENTS_PER_SESSION: usize = 100;

/// The events of session `k`: four kinds of sessions, loops among them.
fn script(k: usize) -> Vec<OwnedEvent> {
    let mut ev = vec![OwnedEvent::User {
        text: format!("task {k}: please fix the build"),
        origin: Default::default(),
    }];
    let mut i = 0u64;
    while ev.len() < EVENTS_PER_SESSION {
        i += 1;
        let id = format!("c{i}");
        match k % 4 {
            // The same call with the same result, again and again.
            0 => {
                ev.push(OwnedEvent::ToolCall {
                    id: id.clone(),
                    tool: "read".into(),
                    args: json!({"path": "src/lib.rs"}),
                    batch: Some(i),
                });
                ev.push(result(&id, "read", "fn main() {}"));
            }
            // Real progress: every call differs.
            1 => {
                ev.push(OwnedEvent::ToolCall {
                    id: id.clone(),
                    tool: "bash".into(),
                    args: json!({"command": format!("ls dir{i}")}),
                    batch: Some(i),
                });
                ev.push(result(&id, "bash", &format!("file{i}.rs")));
            }
            // Streamed text that repeats itself.
            2 => {
                ev.push(OwnedEvent::MessageStart);
                for _ in 0..8 {
                    ev.push(OwnedEvent::TextDelta {
                        stream: Stream::Text,
                        delta: "Let me check the file again. ".into(),
                    });
                }
                ev.push(OwnedEvent::MessageEnd);
            }
            // Two calls taking turns.
            _ => {
                let (tool, arg) = if i % 2 == 0 {
                    ("read", "a.rs")
                } else {
                    ("edit", "b.rs")
                };
                ev.push(OwnedEvent::ToolCall {
                    id: id.clone(),
                    tool: tool.into(),
                    args: json!({"path": arg}),
                    batch: Some(i),
                });
                ev.push(result(&id, tool, "ok"));
            }
        }
        if i % 17 == 0 {
            ev.push(OwnedEvent::RunEnd);
            ev.push(OwnedEvent::User {
                text: format!("task {k}: go on ({i})"),
                origin: Default::default(),
            });
        }
    }
    ev.truncate(EVENTS_PER_SESSION);
    ev
}

fn result(id: &str, tool: &str, content: &str) -> OwnedEvent {
    OwnedEvent::ToolResult {
        id: id.into(),
        tool: tool.into(),
        content: content.into(),
        is_error: false,
        images: 0,
        details: None,
    }
}

const MALFORMED: [&[u8]; 5] = [
    b"{\"session\":\"s1\",\"type\":\"tool_call\",",
    b"{\"type\":\"user\",\"text\":\"no session\"}",
    b"{\"session\":\"s2\",\"type\":\"tool_call\",\"id\":\"x\",\"args\":{}}",
    b"{\"session\":\"s3\",\"type\":\"user\",\"text\":\"\xc3\x28 broken\"}",
    b"{\"session\":\"s4\",\"type\":\"tool_result\",\"id\":\"x\",\"tool\":7}",
];

enum Expect {
    Verdict { session: usize, event: OwnedEvent },
    Error,
}

/// The input lines and what each should get.
fn workload() -> (Vec<u8>, Vec<Expect>) {
    let scripts: Vec<Vec<OwnedEvent>> = (0..SESSIONS).map(script).collect();
    let mut cursor = vec![0usize; SESSIONS];
    let mut live: Vec<usize> = (0..SESSIONS).collect();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut input = Vec::new();
    let mut expect = Vec::new();
    while !live.is_empty() {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let pick = (rng % live.len() as u64) as usize;
        let k = live[pick];
        let event = scripts[k][cursor[k]].clone();
        cursor[k] += 1;
        if cursor[k] == scripts[k].len() {
            live.swap_remove(pick);
        }
        let Ok(Value::Object(mut obj)) = serde_json::to_value(&event) else {
            panic!("events serialise as objects")
        };
        obj.insert("session".into(), Value::String(format!("s{k}")));
        input.extend_from_slice(Value::Object(obj).to_string().as_bytes());
        input.push(b'\n');
        expect.push(Expect::Verdict { session: k, event });
        if expect.len() % 97 == 0 {
            let bad = MALFORMED[(expect.len() / 97) % MALFORMED.len()];
            input.extend_from_slice(bad);
            input.push(b'\n');
            expect.push(Expect::Error);
        }
    }
    (input, expect)
}

#[test]
fn hundred_thousand_interleaved_events_match_the_library() {
    let (input, expect) = workload();
    let events = expect
        .iter()
        .filter(|e| matches!(e, Expect::Verdict { .. }))
        .count();
    assert_eq!(events, SESSIONS * EVENTS_PER_SESSION);

    let mut options = ServerOptions::preset("default").expect("the default preset");
    options.max_sessions = 2000;
    let mut server = Server::new(options).expect("a server");
    let start = Instant::now();
    let mut output = Vec::new();
    let stats = server
        .serve(std::io::Cursor::new(input), &mut output)
        .expect("serve");
    let elapsed = start.elapsed();
    let answers: Vec<String> = String::from_utf8(output)
        .expect("utf-8 answers")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(stats.lines as usize, answers.len());
    eprintln!(
        "sidecar: {} lines in {:.2?} ({:.0} lines/s)",
        answers.len(),
        elapsed,
        answers.len() as f64 / elapsed.as_secs_f64()
    );
    assert_eq!(answers.len(), expect.len(), "one answer per line");

    let mut guards: HashMap<usize, Guard> = HashMap::new();
    let mut acted = HashMap::<String, usize>::new();
    for (i, (answer, want)) in answers.iter().zip(&expect).enumerate() {
        let got: Value = serde_json::from_str(answer).unwrap();
        let line = i as u64 + 1;
        match want {
            Expect::Error => assert_eq!(got["error"]["line"], json!(line), "line {line}: {answer}"),
            Expect::Verdict { session, event } => {
                let guard = guards
                    .entry(*session)
                    .or_insert_with(|| Guard::builder().preset("default").build().unwrap());
                let mut want = Map::new();
                want.insert("session".into(), Value::String(format!("s{session}")));
                want.insert("seq".into(), Value::from(guard.seq()));
                let v = guard.observe(&event.as_event());
                render_verdict(&mut want, &v);
                assert_eq!(got, Value::Object(want), "line {line}");
                *acted.entry(v.action().as_str().to_owned()).or_default() += 1;
            }
        }
    }
    eprintln!("verdicts: {acted:?}");
    assert!(
        acted.get("continue").copied().unwrap_or(0) < events,
        "some events must draw a verdict"
    );
    assert!(
        acted.keys().any(|a| a == "block" || a == "abort"),
        "{acted:?}"
    );
}
