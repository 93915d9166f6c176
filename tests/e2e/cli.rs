//! `loopguard scan` through the command's entry point: the report, the lines, the exit codes.

use crate::support::{loopguard, reads, TempDir};
use serde_json::Value;

fn findings(report: &Value) -> Vec<Value> {
    report["sessions"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// (line, detector, level, action) of each finding.
fn summary(report: &Value) -> Vec<(u64, String, String, String)> {
    findings(report)
        .iter()
        .map(|f| {
            (
                f["event"].as_u64().unwrap(),
                f["detector"].as_str().unwrap().to_owned(),
                f["level"].as_str().unwrap().to_owned(),
                f["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn eight_identical_reads_warn_then_block_at_the_right_lines() {
    let dir = TempDir::new("eight-reads");
    let path = dir.file(
        "reads.jsonl",
        &reads(8, |_| r#"{"path":"src/config.rs","limit":200}"#.to_owned()),
    );
    let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(run.code, 1, "a block is critical: exit 1\n{}", run.stderr);
    let report = run.json();
    let got = summary(&report);
    let first_warning = got.iter().find(|f| f.2 == "warning").expect("a warning");
    let first_block = got.iter().find(|f| f.3 == "block").expect("a block");
    assert_eq!(first_warning.3, "steer", "{got:?}");
    assert_eq!(first_block.2, "critical", "{got:?}");
    assert!(
        first_warning.0 < first_block.0,
        "warning before block: {got:?}"
    );
    // A block refuses a call: it is reported on a tool_call line (3 + 3i).
    assert_eq!(first_block.0 % 3, 0, "{got:?}");
    // Nothing fires before the third read's call (line 9).
    assert!(got.iter().all(|f| f.0 >= 9), "{got:?}");
    // Exact lines under the default preset.
    assert_eq!(
        (first_warning.0, first_block.0),
        crate::cli::EIGHT_READS_WARN_BLOCK,
        "default preset: warning/block lines changed: {got:?}"
    );
    let s = &report["sessions"][0];
    assert_eq!(s["events"], 26);
    assert_eq!(s["format"], "loopguard");
    assert_eq!(report["version"], 1);
    assert_eq!(report["preset"], "default");
    assert_eq!(report["summary"]["sessions"], 1);
    assert_eq!(report["summary"]["sessions_with_findings"], 1);
    assert_eq!(report["summary"]["events"], 26);
    let w = &s["wasted"];
    assert!(
        w["events"].as_u64().unwrap() >= 2,
        "a block saves its call and result: {w}"
    );
    assert!(w["chars"].as_u64().unwrap() > 0, "{w}");
}

/// (line of the first warning, line of the first block) for 8 identical reads under the
/// default preset: the warning on the third identical result (line 4 + 3*2), the block on
/// the fifth call (line 3 + 3*4; four are allowed, as in pi-loop-guard).
pub const EIGHT_READS_WARN_BLOCK: (u64, u64) = (10, 15);

/// The same reads written by a host that numbers no calls (no `id` on its calls and
/// results): each result answers the call waiting, and the loop is the same loop, at the
/// same lines, with no line rejected.
#[test]
fn reads_without_ids_are_read_and_judged_as_with_them() {
    let dir = TempDir::new("no-ids");
    let with_ids = reads(8, |_| r#"{"path":"src/config.rs","limit":200}"#.to_owned());
    let without: String = with_ids
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["type"] == "tool_call" || v["type"] == "tool_result" {
                v.as_object_mut().unwrap().remove("id");
            }
            format!("{v}\n")
        })
        .collect();
    assert!(!without.contains("\"id\":\"c"), "{without}");
    let path = dir.file("reads.jsonl", &without);
    let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let got = summary(&run.json());
    let first_warning = got.iter().find(|f| f.2 == "warning").expect("a warning");
    let first_block = got.iter().find(|f| f.3 == "block").expect("a block");
    assert_eq!((first_warning.0, first_block.0), EIGHT_READS_WARN_BLOCK);
    // Reads of pages that differ, without ids: nothing to report.
    let pages = dir.file(
        "pages.jsonl",
        &(0..12)
            .map(|i| {
                format!(
                    "{}\n{}\n{}\n",
                    r#"{"type":"assistant","text":"Let me continue reading the file."}"#,
                    serde_json::json!({"type": "tool_call", "tool": "read", "args": {"path": "src/config.rs", "offset": 1 + 200 * i, "limit": 200}}),
                    serde_json::json!({"type": "tool_result", "content": format!("{:>6}\tpub fn setting_{i}() -> u32 {{ {i} }}", 1 + 200 * i)}),
                )
            })
            .collect::<String>(),
    );
    let run = loopguard(&["scan", "--format", "json", pages.to_str().unwrap()]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(summary(&run.json()).is_empty(), "{}", run.stdout);
}

/// Hosts that write a result as a structured object (`{"stdout": …, "exit_code": …}`), under
/// the Responses API's name `output`, or leave a call's arguments out: the lines were rejected
/// (`missing field`, `must be a string`) and the session judged without them. They are read,
/// and the same loop is found at the same lines as with the plain text.
#[test]
fn structured_results_and_calls_without_arguments_are_read_and_judged_as_the_others() {
    let dir = TempDir::new("structured");
    let plain = reads(8, |_| r#"{"path":"src/config.rs","limit":200}"#.to_owned());
    let rewrite = |f: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| -> String {
        plain
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                f(v.as_object_mut().unwrap());
                format!("{v}\n")
            })
            .collect()
    };
    let structured = rewrite(&|o| {
        if o["type"] == "tool_result" {
            let text = o.remove("content").unwrap();
            o.insert(
                "content".into(),
                serde_json::json!({"stdout": text, "stderr": "", "exit_code": 0}),
            );
        }
    });
    let output = rewrite(&|o| {
        if o["type"] == "tool_result" {
            let text = o.remove("content").unwrap();
            o.insert("output".into(), text);
        }
    });
    let no_args = rewrite(&|o| {
        if o["type"] == "tool_call" {
            o.remove("args");
        }
    });
    for (name, text) in [
        ("structured", structured),
        ("output", output),
        ("no-args", no_args),
    ] {
        let path = dir.file(&format!("{name}.jsonl"), &text);
        let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
        assert!(run.stderr.is_empty(), "{name}: {}", run.stderr);
        let got = summary(&run.json());
        let first_warning = got.iter().find(|f| f.2 == "warning").expect("a warning");
        let first_block = got.iter().find(|f| f.3 == "block").expect("a block");
        assert_eq!(
            (first_warning.0, first_block.0),
            EIGHT_READS_WARN_BLOCK,
            "{name}: {got:?}"
        );
    }
    // A result without content printed nothing: eight silent answers are no evidence.
    let silent = rewrite(&|o| {
        if o["type"] == "tool_result" {
            o.remove("content");
        }
    });
    let path = dir.file("silent.jsonl", &silent);
    let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert!(
        summary(&run.json())
            .iter()
            .all(|f| f.3 != "block" && f.3 != "abort"),
        "{}",
        run.stdout
    );
}

/// A host that reports each result twice (a retry, a log written by two hooks): the second
/// report answers nothing and is judged by no detector, so pages of a file read one after
/// another stay silent (a result reported twice looked like a second call of unknown
/// arguments: two calls going round) and a loop is found at the same lines as without the
/// repeats, counted in lines of the file.
#[test]
fn results_reported_twice_are_judged_once() {
    let dir = TempDir::new("results-twice");
    let twice = |text: &str| -> String {
        text.lines()
            .flat_map(|l| {
                let n = if l.contains("\"tool_result\"") { 2 } else { 1 };
                std::iter::repeat_n(format!("{l}\n"), n)
            })
            .collect()
    };
    // Pages of a generated table: a constant takes six lines and a page eighty, so the pages
    // go round three shapes and differ otherwise only in their numbers.
    let shapes = [
        "    UInt<UInt<UTerm, B1>, B0>,\n    B1,\n>;\npub type P{n} = PInt<U{n}>;",
        ">;\npub type P{n} = PInt<U{n}>;\npub type N{n} = NInt<U{n}>;\npub type U{m} = UInt<",
        "pub type N{n} = NInt<U{n}>;\npub type U{m} = UInt<\n    UInt<UTerm, B1>,\n    B0,",
    ];
    let pages: String = (0..18)
        .map(|i| {
            let n = 500 + 13 * i;
            let text = shapes[i % 3]
                .replace("{n}", &n.to_string())
                .replace("{m}", &(n + 1).to_string());
            format!(
                "{}\n{}\n{}\n",
                r#"{"type":"assistant","text":"THOUGHT: Let me continue reading the file."}"#,
                serde_json::json!({"type": "tool_call", "id": format!("c{i}"), "tool": "bash", "args": {"command": format!("sed -n '{},{}p' src/consts.rs", 1 + 80 * i, 80 * (i + 1))}}),
                serde_json::json!({"type": "tool_result", "id": format!("c{i}"), "tool": "bash", "content": text}),
            )
        })
        .collect();
    let path = dir.file("pages.jsonl", &twice(&pages));
    let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert!(summary(&run.json()).is_empty(), "{}", run.stdout);
    // Eight identical reads, each result reported twice: still warned, then blocked.
    let reads = twice(&reads(8, |_| {
        r#"{"path":"src/config.rs","limit":200}"#.to_owned()
    }));
    let path = dir.file("reads.jsonl", &reads);
    let run = loopguard(&["scan", "--format", "json", path.to_str().unwrap()]);
    let got = summary(&run.json());
    assert!(got.iter().any(|f| f.2 == "warning"), "{got:?}");
    assert!(got.iter().any(|f| f.3 == "block"), "{got:?}");
}

#[test]
fn the_same_reads_with_keys_in_another_order_are_the_same_loop() {
    let dir = TempDir::new("key-order");
    let same = dir.file(
        "same.jsonl",
        &reads(8, |_| r#"{"path":"src/config.rs","limit":200}"#.to_owned()),
    );
    let mixed = dir.file(
        "mixed.jsonl",
        &reads(8, |i| {
            if i % 2 == 0 {
                r#"{"path":"src/config.rs","limit":200}"#.to_owned()
            } else {
                r#"{"limit":200,"path":"src/config.rs"}"#.to_owned()
            }
        }),
    );
    let a = loopguard(&["scan", "--format", "json", same.to_str().unwrap()]);
    let b = loopguard(&["scan", "--format", "json", mixed.to_str().unwrap()]);
    assert!(!summary(&a.json()).is_empty());
    assert_eq!(summary(&a.json()), summary(&b.json()));
    assert_eq!(a.code, b.code);
}

#[test]
fn exit_status_follows_fail_on() {
    let dir = TempDir::new("fail-on");
    let looping = dir.file(
        "reads.jsonl",
        &reads(8, |_| r#"{"path":"a.rs"}"#.to_owned()),
    );
    let p = looping.to_str().unwrap();
    assert_eq!(loopguard(&["scan", p]).code, 1);
    assert_eq!(loopguard(&["scan", "--fail-on", "never", p]).code, 0);
    assert_eq!(loopguard(&["scan", "--fail-on", "warning", p]).code, 1);
    // Three identical reads at most reach a warning: exit 0 unless --fail-on warning.
    let short = dir.file(
        "short.jsonl",
        &reads(3, |_| r#"{"path":"a.rs"}"#.to_owned()),
    );
    let run = loopguard(&["scan", "--format", "json", short.to_str().unwrap()]);
    assert!(
        summary(&run.json()).iter().all(|f| f.2 == "warning"),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 0);
    let clean = dir.file(
        "clean.jsonl",
        &reads(1, |_| r#"{"path":"a.rs"}"#.to_owned()),
    );
    let run = loopguard(&["scan", "--fail-on", "warning", clean.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn unreadable_input_exits_2_naming_file_and_line() {
    let dir = TempDir::new("bad-input");
    let bad = dir.file("bad.jsonl", "{\"type\":\"session\",\"id\":\"x\"}\n{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"tool_call\",\"id\":\"c\"}\n");
    let run = loopguard(&["scan", bad.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    let want = format!(
        "{}:3: `tool_call` line: missing field `tool`",
        bad.display()
    );
    assert!(run.stderr.contains(&want), "{}", run.stderr);

    let broken = dir.file(
        "broken.jsonl",
        "{\"type\":\"session\",\"id\":\"x\"}\n{\"type\": \"user\", \"te\n",
    );
    let run = loopguard(&["scan", broken.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(&format!("{}:2: invalid JSON", broken.display())),
        "{}",
        run.stderr
    );

    // Every file is still reported: the bad one from its readable lines.
    let good = dir.file("good.jsonl", &reads(1, |_| "{}".to_owned()));
    let run = loopguard(&[
        "scan",
        "--format",
        "json",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["summary"]["sessions"], 2);

    let run = loopguard(&["scan", "/nonexistent/loopguard.jsonl"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("/nonexistent/loopguard.jsonl"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_usage_and_bad_configuration_exit_2() {
    let dir = TempDir::new("bad-usage");
    let t = dir.file("t.jsonl", &reads(1, |_| "{}".to_owned()));
    let t = t.to_str().unwrap();
    assert_eq!(loopguard(&["scan", "--since", "yesterday", t]).code, 2);
    assert_eq!(loopguard(&["scan", "--price", "cheap", t]).code, 2);
    assert_eq!(loopguard(&["scan", "--format", "yaml", t]).code, 2);
    assert_eq!(loopguard(&["scan", "--chunk", "0", t]).code, 2);
    assert_eq!(loopguard(&["frobnicate"]).code, 2);
    let run = loopguard(&["scan", "--preset", "nope", t]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown preset `nope`"),
        "{}",
        run.stderr
    );
    let cfg = dir.file(
        "bad.toml",
        "preset = \"default\"\n\n[detectors.generic-repeat]\nwarn-treshold = 3\n",
    );
    let run = loopguard(&["scan", "--config", cfg.to_str().unwrap(), t]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bad.toml"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("detectors.generic-repeat.warn-treshold"),
        "{}",
        run.stderr
    );
    let run = loopguard(&["--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("scan"));
}

#[test]
fn text_report_shows_each_loop_its_lines_and_totals() {
    let dir = TempDir::new("text");
    let p = dir.file(
        "reads.jsonl",
        &reads(8, |_| r#"{"path":"a.rs"}"#.to_owned()),
    );
    let run = loopguard(&["scan", p.to_str().unwrap()]);
    assert!(
        run.stdout.contains("reads.jsonl  (loopguard, 26 lines)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("loop: generic-repeat"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("-> steer"), "{}", run.stdout);
    assert!(run.stdout.contains("-> block"), "{}", run.stdout);
    assert!(
        run.stdout.contains("1 sessions (26 lines): 1 with loops"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("would have saved"), "{}", run.stdout);
}

#[test]
fn a_blocked_calls_recorded_result_still_arrives() {
    // Replay convention: after a block the recorded result is fed anyway, so the session goes
    // on and later verdicts are still reported at their own lines.
    let dir = TempDir::new("after-block");
    let p = dir.file(
        "reads.jsonl",
        &reads(8, |_| r#"{"path":"a.rs"}"#.to_owned()),
    );
    let report = loopguard(&["scan", "--format", "json", p.to_str().unwrap()]).json();
    let got = summary(&report);
    let first_block = got.iter().position(|f| f.3 == "block").expect("a block");
    assert!(
        got.len() > first_block + 1,
        "verdicts after the first block are reported too: {got:?}"
    );
    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "{got:?}");
}

#[test]
fn detectors_lists_every_linked_detector() {
    let run = loopguard(&["detectors"]);
    assert_eq!(run.code, 0);
    for r in loopguard::Registry::discover().unwrap().entries() {
        let row = run
            .stdout
            .lines()
            .find(|l| l.starts_with(r.name))
            .unwrap_or_else(|| panic!("{} missing:\n{}", r.name, run.stdout));
        assert!(row.contains(r.code) && row.contains(r.summary), "{row}");
    }
}

#[test]
fn config_check_prints_resolved_settings_or_names_the_problem() {
    let dir = TempDir::new("config-check");
    let good = dir.file(
        "good.toml",
        "preset = \"default\"\n[detectors.generic-repeat]\nwarn-threshold = 3\n",
    );
    let run = loopguard(&["config", "check", good.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("preset = \"default\""),
        "{}",
        run.stdout
    );
    // The former spelling is read, moved to the new key, with a deprecation warning.
    assert!(
        run.stdout.contains("warning-threshold = 3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.lines().any(|l| l.starts_with("# warning: ")
            && l.ends_with("`detectors.generic-repeat.warn-threshold` is deprecated: write `warning-threshold`")),
        "{}",
        run.stdout
    );
    let parsed: toml::Table = run.stdout.parse().expect("the output is TOML");
    assert_eq!(
        parsed["detectors"]["generic-repeat"]["warning-threshold"].as_integer(),
        Some(3)
    );

    let syntax = dir.file("syntax.toml", "preset = \"default\"\n[guard\n");
    let run = loopguard(&["config", "check", syntax.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(&format!("{}:2:", syntax.display())),
        "{}",
        run.stderr
    );

    let unknown = dir.file(
        "unknown.toml",
        "[detectors.no-such-detector]\nenabled = true\n",
    );
    let run = loopguard(&["config", "check", unknown.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no-such-detector"), "{}", run.stderr);

    let run = loopguard(&[
        "config",
        "check",
        "--preset",
        "openclaw",
        good.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("preset = \"openclaw\""),
        "{}",
        run.stdout
    );
}

#[test]
fn arguments_nested_200000_deep_are_a_clear_error_not_a_crash() {
    let dir = TempDir::new("deep");
    let depth = 200_000;
    let args = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let text = format!(
        "{{\"type\":\"session\",\"id\":\"d\"}}\n{{\"type\":\"tool_call\",\"id\":\"c\",\"tool\":\"read\",\"args\":{{\"x\":{args}}},\"batch\":0}}\n"
    );
    let path = dir.file("deep.jsonl", &text);
    // Run on a small stack: a recursive reader would overflow it.
    let p = path.to_str().unwrap().to_owned();
    let run = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || loopguard(&["scan", "--format", "json", &p]))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("deep.jsonl:2"), "{}", run.stderr);
    assert!(run.stderr.contains("recursion limit"), "{}", run.stderr);
}
