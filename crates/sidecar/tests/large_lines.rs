//! Tool results of real size: a result over the 16 MiB streaming bound (escapes and non-ASCII included)
//! gets a normal verdict, the same as the library gives for the same text.
#![allow(clippy::unwrap_used)]

use loopguard::{Event, Guard};
use loopguard_sidecar::{Server, ServerOptions};
use serde_json::{json, Value};

fn big_text(bytes: usize) -> String {
    let unit = "line 1: \"quoted\" \\ back\tslash — ünïcode 😀\n";
    unit.repeat(bytes / unit.len() + 1)
}

#[test]
fn a_seventeen_megabyte_result_gets_the_same_verdict_as_the_library() {
    let content = big_text(17 << 20);
    let call =
        json!({"session":"s","type":"tool_call","id":"c","tool":"read","args":{"path":"big.log"}});
    let mut input = String::new();
    let mut lib = Guard::builder().preset("pi-loop-guard").build().unwrap();
    let args = json!({"path": "big.log"});
    let mut want = Vec::new();
    for i in 0..3 {
        let mut c = call.clone();
        c["id"] = json!(format!("c{i}"));
        input.push_str(&c.to_string());
        input.push('\n');
        let r = json!({"session":"s","type":"tool_result","id":format!("c{i}"),"tool":"read","content":content});
        input.push_str(&r.to_string());
        input.push('\n');
        let id = format!("c{i}");
        want.push(
            lib.observe(&Event::ToolCall {
                id: &id,
                tool: "read",
                args: &args,
                batch: None,
            })
            .action(),
        );
        want.push(
            lib.observe(&Event::ToolResult {
                id: &id,
                tool: "read",
                content: &content,
                is_error: false,
                images: 0,
                details: None,
            })
            .action(),
        );
    }
    let mut server = Server::new(ServerOptions::preset("pi-loop-guard").unwrap()).unwrap();
    let mut out = Vec::new();
    let stats = server
        .serve(std::io::Cursor::new(input.into_bytes()), &mut out)
        .unwrap();
    assert_eq!(stats.errors, 0);
    let answers: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<String> = answers
        .iter()
        .map(|a| a["action"].as_str().unwrap().to_owned())
        .collect();
    let want: Vec<String> = want.iter().map(|a| a.as_str().to_owned()).collect();
    assert_eq!(got, want);
    assert!(
        got.iter().any(|a| a == "steer"),
        "the third identical result warns: {got:?}"
    );
}

#[test]
fn the_line_bound_is_an_option_and_names_itself() {
    let mut o = ServerOptions::preset("default").unwrap();
    o.max_line_bytes = 64;
    let mut server = Server::new(o).unwrap();
    let line = json!({"session":"s","type":"tool_result","id":"c","tool":"read","content":"x".repeat(100)});
    let mut out = Vec::new();
    server
        .serve(std::io::Cursor::new(format!("{line}\n")), &mut out)
        .unwrap();
    let answer: Value = serde_json::from_slice(&out).unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-line-bytes"),
        "{answer}"
    );
}
