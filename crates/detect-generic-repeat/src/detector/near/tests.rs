//! The near-duplicate streak (loopguard's default).

use crate::testutil::*;

// ---- near-duplicate streak (loopguard's default) -------------------------------------------

/// Only the near-duplicate rule, at its defaults.
fn near_only() -> Box<dyn Detector> {
    det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nnear-duplicate = {}")
}

fn near_keys(f: &[(usize, Finding)]) -> Vec<(usize, Level)> {
    f.iter()
        .filter(|(_, f)| f.key.starts_with("near:"))
        .map(|(i, f)| (*i, f.level))
        .collect()
}

/// SWE-agent's answer to an edit: the whole file, numbered, then a reminder.
fn listing(lines: &[String]) -> String {
    let mut out = format!("[File: /repo/test_foo.py ({} lines total)]\n", lines.len());
    for (i, l) in lines.iter().enumerate() {
        out.push_str(&format!("{}:{l}\n", i + 1));
    }
    out.push_str(
        "File updated. Please review the changes and make sure they are correct (correct \
         indentation, no duplicate lines, etc). Edit the file again if necessary.",
    );
    out
}

/// The same `edit 4:4` applied again and again: each application inserts one more copy of
/// the same line, so every result differs from the one before by one line.
fn edit_loop(s: &mut Script, times: usize) -> Vec<usize> {
    let mut file: Vec<String> = [
        "import json",
        "",
        "class Foo:",
        "    def __init__(self, rawQuery):",
        "        self.query = rawQuery",
        "",
        "def main():",
        "    data = json.loads('{\"query\": \"bar\"}')",
        "    foo = Foo(data['query'])",
        "    print(foo.query)",
        "",
        "if __name__ == \"__main__\":",
        "    main()",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    let args = json!({"command": "edit 4:4\n    def __init__(self, rawQuery):\n        self.query = None  # Ignore the rawQuery parameter\nend_of_edit"});
    let mut calls = Vec::new();
    for _ in 0..times {
        file.insert(
            4,
            "        self.query = None  # Ignore the rawQuery parameter".into(),
        );
        let id = attempt(s, "edit", args.clone());
        calls.push(s.last_index());
        s.tool_result(&id, "edit", &listing(&file), false);
    }
    calls
}

#[test]
fn near_duplicate_edit_loop_is_caught_at_the_fourth_call() {
    let mut s = Script::new();
    s.user("fix the bug");
    let calls = edit_loop(&mut s, 4);
    let f = run(dflt(), s.events());
    assert_eq!(near_keys(&f), vec![(calls[3], Level::Warning)], "{f:?}");
    assert_eq!(f.len(), 1, "nothing else fires: {f:?}");
    let w = &f[0].1;
    assert_eq!(w.count, 4);
    assert!(
        w.message.contains("`edit`") && w.message.contains("4 in a row"),
        "{}",
        w.message
    );
    assert!(w.evidence.contains(&(calls[3] as u64)));
    assert_eq!(w.evidence.len(), 4, "three results and the call");
    // No result is identical, so the exact streak (pi-loop-guard) never fires...
    assert!(run(plg(), s.events()).is_empty());
    // ...and pi-repetition-guard (4 in 8, results ignored) fires on the same call.
    assert_eq!(criticals(&run(prg(), s.events())), vec![calls[3]]);
    // Three calls are not enough.
    let mut s = Script::new();
    edit_loop(&mut s, 3);
    assert!(run(dflt(), s.events()).is_empty());
}

#[test]
fn near_duplicate_keeps_warning_once_then_blocks_from_the_eighth_call_sticky() {
    let mut s = Script::new();
    let calls = edit_loop(&mut s, 9);
    let f = near_keys(&run(
        det("near-duplicate = { enabled = true, critical-threshold = 8 }"),
        s.events(),
    ));
    assert_eq!(
        f,
        vec![
            (calls[3], Level::Warning),
            (calls[7], Level::Critical),
            (calls[8], Level::Critical),
        ]
    );
    // Another call lifts the block.
    s.call(
        "open",
        json!({"path": "test_foo.py"}),
        "[File: test_foo.py]",
    );
    let id = attempt(
        &mut s,
        "edit",
        json!({"command": "edit 4:4\nx\nend_of_edit"}),
    );
    s.tool_result(&id, "edit", "ok", false);
    let after = s.last_index();
    assert!(near_keys(&run(
        det("near-duplicate = { enabled = true, critical-threshold = 8 }"),
        s.events()
    ))
    .iter()
    .all(|(i, _)| *i < after - 3));
}

#[test]
fn near_duplicate_paging_with_distinct_windows_is_not_caught() {
    // `scroll_down` eight times: the same call, but every window shows other lines.
    let mut s = Script::new();
    let mut seed: u64 = 7;
    let mut word = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        format!("w{:x}", seed >> 40)
    };
    for page in 0..8 {
        let mut text = format!(
            "[File: /repo/big.py (800 lines total)]\n({} more lines above)\n",
            page * 100
        );
        for n in 0..100 {
            let line: Vec<String> = (0..6).map(|_| word()).collect();
            text.push_str(&format!("{}:    {}\n", page * 100 + n + 1, line.join(" ")));
        }
        s.call("scroll_down", json!({"command": "scroll_down"}), &text);
    }
    assert!(run(near_only(), s.events()).is_empty());
    assert!(near_keys(&run(dflt(), s.events())).is_empty());
}

#[test]
fn near_duplicate_polling_with_advancing_output_is_not_caught() {
    // A poll that returns the new lines of a build each time.
    let crates = [
        "serde",
        "syn",
        "quote",
        "proc-macro2",
        "libc",
        "regex",
        "memchr",
        "toml",
        "tokio",
        "bytes",
        "mio",
        "ahash",
        "hashbrown",
        "indexmap",
        "itoa",
        "ryu",
        "clap",
        "anyhow",
        "thiserror",
        "sha2",
        "digest",
        "generic-array",
        "typenum",
        "cfg-if",
        "once_cell",
        "smallvec",
        "log",
        "tracing",
        "futures",
        "pin-project",
        "slab",
        "socket2",
        "criterion",
        "rayon",
        "crossbeam",
        "either",
        "num-traits",
        "autocfg",
        "unicode-ident",
        "version_check",
    ];
    let mut s = Script::new();
    for chunk in crates.chunks(4) {
        let text: Vec<String> = chunk
            .iter()
            .map(|c| format!("   Compiling {c} v1.{}.0 (registry)", c.len()))
            .collect();
        s.call(
            "bash",
            json!({"command": "tail -n 4 build.log"}),
            &text.join("\n"),
        );
    }
    assert!(run(near_only(), s.events()).is_empty());
    assert!(near_keys(&run(dflt(), s.events())).is_empty());
}

#[test]
fn near_duplicate_a_recurring_call_warns_one_call_earlier() {
    // A B A A A: pi-repetition-guard counts the first A too (4 in 8) and fires on the last
    // A; the near-duplicate streak warns on the same call because the call recurred.
    let mut s = Script::new();
    let mut file = vec!["a".to_string(), "b".to_string()];
    let args = json!({"command": "edit 1:1\nline\nend_of_edit"});
    let a = |s: &mut Script, file: &mut Vec<String>| {
        file.insert(0, "        self.value = compute_the_value(argument)".into());
        let id = attempt(s, "edit", args.clone());
        let at = s.last_index();
        s.tool_result(&id, "edit", &listing(file), false);
        at
    };
    a(&mut s, &mut file);
    s.call(
        "python",
        json!({"command": "python test.py"}),
        "Traceback: ValueError",
    );
    a(&mut s, &mut file);
    a(&mut s, &mut file);
    let third = a(&mut s, &mut file);
    assert_eq!(
        near_keys(&run(dflt(), s.events())),
        vec![(third, Level::Warning)]
    );
    assert_eq!(criticals(&run(prg(), s.events())), vec![third]);
    // Without the recurrence allowance the 4th consecutive call is needed.
    let d = det("near-duplicate = { recurrence-window = 0 }");
    assert!(run(d, s.events()).is_empty());
    // The recurrence must be within the window: 8 other calls in between push it out.
    let mut s = Script::new();
    let mut file = vec!["a".to_string()];
    a(&mut s, &mut file);
    for i in 0..8 {
        s.call(
            "read",
            json!({"path": format!("f{i}")}),
            &format!("content {i}"),
        );
    }
    a(&mut s, &mut file);
    a(&mut s, &mut file);
    a(&mut s, &mut file);
    assert!(near_keys(&run(dflt(), s.events())).is_empty());
}

#[test]
fn near_duplicate_edits_between_reruns_are_never_a_streak() {
    // Corpus hard negative: re-running a script after each edit, same output every time.
    let mut s = Script::new();
    for i in 0..6 {
        s.call(
            "python",
            json!({"command": "python3 test_valid_path.py"}),
            "Did not accept valid path",
        );
        s.call(
            "sed",
            json!({"command": format!("sed -i 's/timeout={i}/timeout={}/' t.py", i + 1)}),
            "",
        );
    }
    assert!(near_keys(&run(dflt(), s.events())).is_empty());
}

#[test]
fn near_duplicate_does_not_repeat_the_exact_streaks_warning() {
    // Identical results: the exact streak warns on the 3rd result; the near-duplicate rule
    // stays silent on the 4th call, and the exact streak blocks the 5th.
    let mut s = same_reads(4);
    attempt(&mut s, "read", json!({"path": "a"}));
    let third_result = s
        .events()
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, OwnedEvent::ToolResult { .. }))
        .nth(2)
        .map(|(i, _)| i)
        .unwrap();
    let f = run(dflt(), s.events());
    assert!(near_keys(&f).is_empty(), "{f:?}");
    // The streak's warning; the 5th call is blocked.
    assert_eq!(warnings(&f), vec![third_result]);
    assert_eq!(criticals(&f), vec![s.last_index()]);
}

#[test]
fn near_duplicate_identical_normalised_results_count_whatever_the_raw_text() {
    // The bash line counter differs in every raw result; the normaliser masks it.
    let mut s = Script::new();
    s.call("echo", json!({"command": "echo hi"}), "hi");
    s.call_results(
        3,
        "javac",
        json!({"command": "javac -cp .:lib/* Repro.java"}),
        |i| {
            format!(
                "/bin/bash: line {}: javac: command not found",
                50776 + 15 * i
            )
        },
    );
    attempt(
        &mut s,
        "javac",
        json!({"command": "javac -cp .:lib/* Repro.java"}),
    );
    let d =
        det("streak = false\nwindow = { enabled = false }\nnear-duplicate = { similarity = 1.0 }");
    assert_eq!(
        near_keys(&run(d, s.events())),
        vec![(s.last_index(), Level::Warning)]
    );
}

#[test]
fn near_duplicate_silence_counts_unless_configured() {
    let mut s = Script::new();
    s.repeat_call(
        3,
        "python",
        json!({"command": "python replicate_bug.py"}),
        "",
    );
    attempt(
        &mut s,
        "python",
        json!({"command": "python replicate_bug.py"}),
    );
    assert_eq!(
        near_keys(&run(dflt(), s.events())),
        vec![(s.last_index(), Level::Warning)]
    );
    let d = det("near-duplicate = { count-empty-results = false }");
    assert!(run(d, s.events()).is_empty());
    // Silence after output is no near-duplicate of it: the streak restarts at the first
    // silent result (only the recurrence allowance, 4 calls in 8, still sees the call).
    let mut s = Script::new();
    s.call(
        "python",
        json!({"command": "python r.py"}),
        "some output here",
    );
    s.repeat_call(2, "python", json!({"command": "python r.py"}), "");
    attempt(&mut s, "python", json!({"command": "python r.py"}));
    let d = det("near-duplicate = { recurrence-window = 0 }");
    assert!(run(d, s.events()).is_empty());
}

#[test]
fn near_duplicate_resets_on_a_new_turn_a_batch_and_ignored_tools_are_transparent() {
    // Three edits, `between`, one more edit: nothing fires.
    let broken_by = |between: &dyn Fn(&mut Script), why: &str| {
        let mut s = Script::new();
        edit_loop(&mut s, 3);
        between(&mut s);
        edit_loop(&mut s, 1);
        assert!(near_keys(&run(dflt(), s.events())).is_empty(), "{why}");
    };
    broken_by(
        &|s| {
            s.user("try again");
        },
        "a new turn starts over",
    );
    broken_by(
        &|s| {
            s.batch(&[
                ("read", json!({"path": "a"}), "A"),
                ("read", json!({"path": "b"}), "B"),
            ]);
        },
        "a batch ends the streak",
    );

    let mut s = Script::new();
    edit_loop(&mut s, 2);
    s.call("todo", json!({}), "noted");
    let calls = edit_loop(&mut s, 2);
    let mut t = preset_table("default");
    t.insert(
        "ignore-tools".into(),
        toml::Value::Array(vec!["todo".into()]),
    );
    assert_eq!(
        near_keys(&run(det_from(&t), s.events())),
        vec![(calls[1], Level::Warning)]
    );
}

#[test]
fn near_duplicate_is_off_in_the_seed_presets_and_by_default() {
    let mut s = Script::new();
    edit_loop(&mut s, 10);
    for d in [plg(), prg(), oc(), default_det()] {
        assert!(near_keys(&run(d, s.events())).is_empty());
    }
    assert!(Settings::default().near_duplicate.is_none());
    for p in ["pi-loop-guard", "pi-repetition-guard", "openclaw"] {
        let s = Settings::from_table(&preset_table(p)).unwrap();
        assert!(s.near_duplicate.is_none(), "{p}");
    }
    let s = Settings::from_table(&preset_table("default")).unwrap();
    assert_eq!(
        s.near_duplicate,
        Some(NearDuplicateSettings {
            similarity_permille: 700,
            warn_threshold: 4,
            block_threshold: None,
            failure_block_threshold: Some(6),
            count_empty_results: true,
            recurrence_window: 8,
            skip_known_polls: true,
        })
    );
}

#[test]
fn near_duplicate_config_errors_name_the_key() {
    let err = |t: &str| {
        Settings::from_table(&t.parse::<toml::Table>().unwrap())
            .unwrap_err()
            .to_string()
    };
    assert!(err("near-duplicate = { similarity = 0.0 }").contains("near-duplicate.similarity"));
    assert!(err("near-duplicate = { similarity = 1.5 }").contains("near-duplicate.similarity"));
    assert!(err("near-duplicate = { similarity = nan }").contains("near-duplicate.similarity"));
    assert!(err("near-duplicate = { warning-threshold = 2 }")
        .contains("near-duplicate.warning-threshold"));
    // The old spelling is still read, under the new name.
    assert!(
        err("near-duplicate = { warn-threshold = 2 }").contains("near-duplicate.warning-threshold")
    );
    assert!(
        err("near-duplicate = { warning-threshold = 5, critical-threshold = 5 }")
            .contains("near-duplicate.critical-threshold")
    );
    assert!(
        err("near-duplicate = { warning-threshold = 6, failure-critical-threshold = 4 }")
            .contains("near-duplicate.failure-critical-threshold")
    );
    assert_eq!(
        settings_of("near-duplicate = { failure-critical-threshold = 0 }")
            .near_duplicate
            .unwrap()
            .failure_block_threshold,
        None
    );
    assert!(err("near-duplicate = { recurrence-window = 65 }")
        .contains("near-duplicate.recurrence-window"));
    assert!(err("near-duplicate = { threshold = 3 }").contains("threshold"));
    // 0 never blocks; `enabled = false` turns a written table off.
    let s = settings_of("near-duplicate = { critical-threshold = 0 }");
    assert_eq!(s.near_duplicate.unwrap().block_threshold, None);
    assert!(
        settings_of("near-duplicate = { enabled = false, similarity = 0.9 }")
            .near_duplicate
            .is_none()
    );
    let mut s = Script::new();
    let calls = edit_loop(&mut s, 12);
    let d = det("near-duplicate = { critical-threshold = 0 }");
    assert_eq!(
        near_keys(&run(d, s.events())),
        vec![(calls[3], Level::Warning)]
    );
}

#[test]
fn near_duplicate_snapshot_round_trips_mid_streak() {
    let mut s = Script::new();
    let calls = edit_loop(&mut s, 9);
    let settings = Settings::from_table(&preset_table("default")).unwrap();
    let events = s.events();
    let plain = run(Box::new(GenericRepeat::new(settings.clone())), events);
    // Cut right before the 4th call: the streak (sketch included) must survive.
    let cut = calls[3];
    let mut bus = loopguard_core::Bus::new(vec![Box::new(GenericRepeat::new(settings.clone()))]);
    let mut veto = loopguard_testkit::Veto;
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i == cut {
            let text = serde_json::to_string(&bus.snapshot().unwrap()).unwrap();
            let mut fresh =
                loopguard_core::Bus::new(vec![Box::new(GenericRepeat::new(settings.clone()))]);
            fresh
                .restore(&serde_json::from_str(&text).unwrap())
                .unwrap();
            bus = fresh;
        }
        out.extend(
            veto.observe(&mut bus, &e.as_event())
                .into_iter()
                .map(|f| (i, f)),
        );
    }
    assert_eq!(plain, out);
    assert!(!near_keys(&plain).is_empty());
}

/// The same failing command re-run with nothing between, each failure a near copy of the one
/// before: a server bound to a new port each time, a log line stamped with a new pid, a
/// request with a new id, a set printed in its hash order. None of the copies is identical,
/// so the exact streak never blocks; the default preset refuses the sixth call.
fn failing_reruns() -> Vec<(Value, Vec<String>)> {
    let ports = [37291, 40897, 35113, 44021, 38760, 41999, 36204];
    let pids = [25578, 25595, 25612, 25630, 25647, 25663, 25681];
    let orders = [
        "numpy, scipy, pandas, requests",
        "scipy, requests, pandas, numpy",
        "pandas, numpy, requests, scipy",
        "requests, pandas, scipy, numpy",
        "numpy, requests, scipy, pandas",
        "scipy, pandas, numpy, requests",
        "pandas, scipy, requests, numpy",
    ];
    let requests = [
        "c36354515af1",
        "111dccba72d6",
        "9e04f7a2b3c8",
        "5fa9d01e6b27",
        "e2b7c4094d1a",
        "07d3aa61f59e",
        "b8f26e3c0d95",
    ];
    vec![
        (
            json!({"command": "python3 -m app.server --port 0"}),
            ports
                .iter()
                .map(|p| {
                    format!(
                        "INFO:     Started server process\nINFO:     Uvicorn running on http://127.0.0.1:{p}\n\
                         ERROR:    Traceback (most recent call last):\n  File \"app/server.py\", line 18, in startup\n    \
                         db.connect(settings.database_url)\nsqlite3.OperationalError: unable to open database file\n\
                         ERROR:    Application startup failed. Exiting.\n"
                    )
                })
                .collect(),
        ),
        (
            json!({"command": "python3 scripts/sync.py"}),
            pids.iter()
                .map(|p| {
                    format!(
                        "2026-12-07 04:36:04,353 {p} ERROR cannot open database /var/lib/sync/state.db: \
                         permission denied\n2026-12-07 04:36:04,354 {p} ERROR sync aborted after 0 of 41 items\n"
                    )
                })
                .collect(),
        ),
        (
            json!({"command": "node scripts/publish.js"}),
            requests
                .iter()
                .map(|r| format!("request {r} failed: 401 Unauthorized: invalid API key\n"))
                .collect(),
        ),
        (
            json!({"command": "python3 tools/check_env.py"}),
            orders
                .iter()
                .map(|o| format!("error: missing packages: {o}\nhint: pip install -r requirements.txt\n"))
                .collect(),
        ),
    ]
}

#[test]
fn the_same_command_failing_in_near_copies_is_refused_at_the_sixth_call() {
    for (args, outputs) in failing_reruns() {
        let mut s = Script::new();
        s.user("make the sync work");
        for out in &outputs[..5] {
            s.call_with("bash", args.clone(), out, true);
        }
        let _ = attempt(&mut s, "bash", args.clone());
        let f = run(default_preset(), s.events());
        assert_eq!(criticals(&f), vec![s.last_index()], "{args}: {f:?}");
        // Five near copies are only warned about.
        let mut five = Script::new();
        five.user("make the sync work");
        for out in &outputs[..5] {
            five.call_with("bash", args.clone(), out, true);
        }
        assert!(
            criticals(&run(default_preset(), five.events())).is_empty(),
            "{args}"
        );
    }
}

#[test]
fn near_copies_that_succeed_or_end_in_a_change_are_not_refused() {
    // A status that moves a little and never fails: warned, never refused.
    let mut s = Script::new();
    s.user("watch the import");
    let args = json!({"command": "python3 scripts/import_status.py"});
    for i in 0..7 {
        s.call(
            "bash",
            args.clone(),
            &format!(
                "import running: {} of 5000 rows, worker pid {}\n",
                1200 + i * 3,
                4100 + i
            ),
        );
    }
    let _ = attempt(&mut s, "bash", args);
    assert!(criticals(&run(default_preset(), s.events())).is_empty());
    // A readiness check that fails while its count falls steadily is making progress: not
    // refused while it moves.
    let mut s = Script::new();
    s.user("roll out the api");
    let args = json!({"command": "python3 scripts/check_ready.py api"});
    for left in [9, 8, 7, 6, 5, 4, 3] {
        s.call_with(
            "bash",
            args.clone(),
            &format!("Error: deployment api not ready: {left} of 12 replicas unavailable\n"),
            true,
        );
    }
    let _ = attempt(&mut s, "bash", args);
    assert!(criticals(&run(default_preset(), s.events())).is_empty());
    // Failures that stop being alike: the streak restarts, nothing is refused.
    let (args, outputs) = failing_reruns().swap_remove(0);
    let mut s = Script::new();
    s.user("start the server");
    for out in &outputs[..3] {
        s.call_with("bash", args.clone(), out, true);
    }
    s.call_with(
        "bash",
        args.clone(),
        "INFO:     Application startup complete.\n",
        false,
    );
    for out in &outputs[3..5] {
        s.call_with("bash", args.clone(), out, true);
    }
    let _ = attempt(&mut s, "bash", args);
    assert!(criticals(&run(default_preset(), s.events())).is_empty());
}
