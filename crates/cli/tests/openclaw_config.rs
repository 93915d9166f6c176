//! `--config` with an OpenClaw file (JSON5, as OpenClaw writes it) and `--agent`, through
//! `config check`, `scan` and `serve`.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An OpenClaw configuration as OpenClaw writes it: comments, unquoted keys, single quotes,
/// trailing commas; a global `tools.loopDetection` block and one agent's override.
const OPENCLAW_JSON5: &str = r#"// ~/.openclaw/openclaw.json
{
  gateway: { port: 18789, mode: 'local' },
  tools: {
    exec: { host: 'sandbox' },
    /* loop detection for every agent */
    loopDetection: {
      enabled: true,
      warningThreshold: 10,
      criticalThreshold: 20,
      globalCircuitBreakerThreshold: 30,
      detectors: { pingPong: false, },
    },
  },
  agents: {
    defaults: { workspace: '~/work' },
    list: [
      { id: 'main', model: 'anthropic/claude-opus-4' },
      {
        id: 'safe-runner',
        tools: { loopDetection: { warningThreshold: 8, criticalThreshold: 16 } },
      },
    ],
  },
}
"#;

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("loopguard-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Run {
    code: u8,
    out: String,
    err: String,
}

fn run(args: &[&str]) -> Run {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut all = vec!["loopguard"];
    all.extend_from_slice(args);
    let code = loopguard_cli::run(all, &mut out, &mut err);
    Run {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The resolved TOML that `config check` prints after its `#` lines.
fn resolved(out: &str) -> toml::Table {
    let body: String = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    body.parse().unwrap()
}

fn get<'a>(t: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (last, inner) = path.split_last()?;
    let mut t = t;
    for k in inner {
        t = t.get(*k)?.as_table()?;
    }
    t.get(*last)
}

/// A session that calls `bash make test` `n` times, each with the same failing result.
fn repeats(n: usize) -> String {
    let mut lines = vec![
        r#"{"type":"session","id":"s"}"#.to_owned(),
        r#"{"type":"user","text":"check the build"}"#.to_owned(),
    ];
    for i in 0..n {
        lines.push(r#"{"type":"assistant"}"#.to_owned());
        lines.push(format!(
            r#"{{"type":"tool_call","id":"c{i}","tool":"bash","args":{{"command":"make test"}},"batch":0}}"#
        ));
        lines.push(format!(
            r#"{{"type":"tool_result","id":"c{i}","tool":"bash","content":"FAILED: 1 test","is_error":false}}"#
        ));
    }
    lines.join("\n") + "\n"
}

/// (count, level) of each finding of the only session.
fn findings(report: &str) -> Vec<(u64, String)> {
    let v: Value = serde_json::from_str(report).unwrap();
    v["sessions"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["count"].as_u64().unwrap_or(0),
                f["level"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn config_check_reads_a_json5_openclaw_file_and_names_what_it_imported_and_ignored() {
    let dir = Dir::new("check");
    let f = dir.file("openclaw.json", OPENCLAW_JSON5);
    let r = run(&["config", "check", s(&f)]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("OpenClaw configuration"), "{}", r.out);
    assert!(
        r.out
            .contains("#   tools.loopDetection.warningThreshold = 10\n"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("#   agents.list[1].tools.loopDetection.criticalThreshold = 16\n"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("-> detectors.circuit-breaker.threshold\n"),
        "{}",
        r.out
    );
    let ignored = r
        .out
        .lines()
        .find(|l| l.starts_with("# ignored"))
        .unwrap_or_else(|| panic!("no ignored line: {}", r.out));
    for k in [
        "gateway",
        "tools.exec",
        "agents.defaults",
        "agents.list[0].model",
    ] {
        assert!(ignored.contains(k), "{k} not named: {ignored}");
    }
    assert!(!ignored.contains("loopDetection"), "{ignored}");
    assert!(r.out.contains("# agents listed: main, safe-runner\n"));
    let t = resolved(&r.out);
    assert_eq!(get(&t, &["preset"]).unwrap().as_str(), Some("openclaw"));
    let pp = ["detectors", "ping-pong", "enabled"];
    assert_eq!(get(&t, &pp).unwrap().as_bool(), Some(false));
    let crit = [
        "agents",
        "safe-runner",
        "detectors",
        "known-poll-no-progress",
        "critical-threshold",
    ];
    assert_eq!(get(&t, &crit).unwrap().as_integer(), Some(16));
}

#[test]
fn config_check_with_agent_prints_that_agents_merged_settings() {
    let dir = Dir::new("check-agent");
    let f = dir.file("openclaw.json", OPENCLAW_JSON5);
    let r = run(&["config", "check", s(&f), "--agent", "safe-runner"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("# agent: safe-runner"), "{}", r.out);
    let t = resolved(&r.out);
    assert!(t.get("agents").is_none(), "the view has no agents table");
    let at = |d: &str, k: &[&str]| {
        let mut p = vec!["detectors", d];
        p.extend_from_slice(k);
        get(&t, &p).and_then(toml::Value::as_integer)
    };
    assert_eq!(
        at("known-poll-no-progress", &["critical-threshold"]),
        Some(16)
    );
    assert_eq!(
        at("known-poll-no-progress", &["warning-threshold"]),
        Some(8)
    );
    assert_eq!(
        at("generic-repeat", &["openclaw", "critical-threshold"]),
        Some(16)
    );
    // Not overridden by the agent: the global block's value.
    assert_eq!(at("circuit-breaker", &["threshold"]), Some(30));

    let main = run(&["config", "check", s(&f), "--agent", "main"]);
    assert_eq!(main.code, 0, "{}", main.err);
    let t = resolved(&main.out);
    let k = ["detectors", "known-poll-no-progress", "critical-threshold"];
    assert_eq!(get(&t, &k).unwrap().as_integer(), Some(20));
}

#[test]
fn scan_applies_the_agents_override_from_an_openclaw_file() {
    let dir = Dir::new("scan-agent");
    let f = dir.file("openclaw.json", OPENCLAW_JSON5);
    let session = dir.file("repeats.jsonl", &repeats(17));
    // `scan` of the session with the file, and `agent` selected if given.
    let scan = |agent: Option<&str>| {
        let mut args = vec!["scan", "--format", "json", "--config", s(&f)];
        args.extend(agent.map(|a| ["--agent", a]).into_iter().flatten());
        args.push(s(&session));
        run(&args)
    };

    let main = scan(Some("main"));
    assert_eq!(
        main.code, 0,
        "warnings only under the global block\n{}",
        main.err
    );
    assert_eq!(findings(&main.out), [(10, "warning".to_owned())]);

    let strict = scan(Some("safe-runner"));
    assert_eq!(
        strict.code, 1,
        "critical at 16 for safe-runner\n{}",
        strict.err
    );
    assert_eq!(
        findings(&strict.out),
        [(10, "warning".to_owned()), (16, "critical".to_owned())]
    );

    // No --agent: the global block.
    assert_eq!(findings(&scan(None).out), [(10, "warning".to_owned())]);
}

#[test]
fn agent_tables_in_toml_are_selected_the_same_way() {
    let dir = Dir::new("toml-agent");
    let f = dir.file(
        "loopguard.toml",
        "preset = \"openclaw\"\n\
         [detectors.generic-repeat]\nenabled = true\n\
         [agents.strict.detectors.generic-repeat.openclaw]\ncritical-threshold = 12\n",
    );
    let session = dir.file("repeats.jsonl", &repeats(14));
    let r = run(&["scan", "--format", "json", "--config", s(&f), s(&session)]);
    assert_eq!(findings(&r.out), [(10, "warning".to_owned())], "{}", r.err);
    let r = run(&[
        "scan",
        "--format",
        "json",
        "--config",
        s(&f),
        "--agent",
        "strict",
        s(&session),
    ]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        findings(&r.out).contains(&(12, "critical".to_owned())),
        "{}",
        r.out
    );
    let check = run(&["config", "check", s(&f), "--agent", "strict"]);
    assert_eq!(check.code, 0, "{}", check.err);
    assert!(check.out.contains("(loopguard TOML)"), "{}", check.out);
}

#[test]
fn an_unknown_agent_or_a_bad_file_is_an_error_that_says_where() {
    let dir = Dir::new("errors");
    let f = dir.file("openclaw.json", OPENCLAW_JSON5);
    let r = run(&["config", "check", s(&f), "--agent", "safe_runner"]);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("`agents.safe_runner`"), "{}", r.err);
    assert!(r.err.contains("main, safe-runner"), "{}", r.err);

    let session = dir.file("repeats.jsonl", &repeats(1));
    let r = run(&["scan", "--agent", "main", s(&session)]);
    assert_eq!(r.code, 2, "--agent needs --config");

    // `config check` of a file holding `text` fails with code 2; its error says each of `says`.
    let check_fails = |name: &str, text: &str, says: &dyn Fn(&Path) -> Vec<String>| {
        let f = dir.file(name, text);
        let r = run(&["config", "check", s(&f)]);
        assert_eq!(r.code, 2);
        for part in says(&f) {
            assert!(r.err.contains(&part), "{}", r.err);
        }
    };
    check_fails(
        "bad.json",
        "{\n  tools: {\n    loopDetection: { enabled: true, warningThreshold: 'ten' },\n  },\n}\n",
        &|_| {
            vec![
                "`tools.loopDetection.warningThreshold`: must be a positive integer".to_owned(),
                "bad.json".to_owned(),
            ]
        },
    );
    check_fails(
        "broken.json",
        "{\n  tools: {\n    loopDetection: { enabled: tru },\n}\n",
        &|f| vec![format!("{}:3: invalid syntax", f.display())],
    );
}

#[test]
fn serve_applies_the_agents_override() {
    let dir = Dir::new("serve");
    let f = dir.file("openclaw.json", OPENCLAW_JSON5);
    // The call count at which each agent's guard first blocks.
    let first_block = |agent: &str| -> Option<usize> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_loopguard"))
            .args(["serve", "--stdio", "--config", s(&f), "--agent", agent])
            .env_remove("LOOP_GUARD_ENABLED")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut ask = |line: String| -> Value {
            writeln!(input, "{line}").unwrap();
            input.flush().unwrap();
            let mut answer = String::new();
            output.read_line(&mut answer).unwrap();
            serde_json::from_str(&answer).unwrap()
        };
        ask(r#"{"session":"a","type":"user","text":"check the build"}"#.to_owned());
        let mut block = None;
        for i in 0..20 {
            let v = ask(format!(
                r#"{{"session":"a","type":"tool_call","id":"c{i}","tool":"bash","args":{{"command":"make test"}}}}"#
            ));
            if v["action"] == "block" && block.is_none() {
                block = Some(i + 1);
            }
            ask(format!(
                r#"{{"session":"a","type":"tool_result","id":"c{i}","tool":"bash","content":"FAILED: 1 test"}}"#
            ));
        }
        drop(input);
        child.wait().unwrap();
        block
    };
    let strict = first_block("safe-runner");
    let main = first_block("main");
    assert!(strict.is_some(), "safe-runner blocks within 20 calls");
    assert!(
        main.is_none() || main > strict,
        "main ({main:?}) blocks later than safe-runner ({strict:?})"
    );
}
