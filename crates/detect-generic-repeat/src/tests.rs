//! Conformance tests, named after the checklist items of `seed-systems.md` §5 (A, I, K),
//! OpenClaw's generic_repeat tests (§3.10), the complaints of §1.5 / §6, and the
//! parallel-batch trap.

use super::*;
use loopguard_core::{Config, Finding, Level, Origin, OwnedEvent, Registry, ResultHasher};
use loopguard_testkit::{run, Script};
use serde_json::{json, Value};

// ---- helpers ------------------------------------------------------------------------------

/// The `[detectors.generic-repeat]` table of the preset `name`, read from the README (so the
/// documented TOML is the tested TOML).
fn preset_table(name: &str) -> toml::Table {
    let readme = include_str!("../README.md");
    let marker = format!("# preset: {name}\n");
    let start = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README has no block for preset {name}"));
    let rest = &readme[start..];
    let end = rest.find("```").expect("unterminated block");
    let config =
        Config::from_toml_str(&rest[..end], Some("README.md")).expect("preset TOML parses");
    let mut table = config
        .detectors
        .get(NAME)
        .cloned()
        .expect("preset has a generic-repeat table");
    assert_eq!(
        table.remove("enabled").and_then(|v| v.as_bool()),
        Some(true),
        "preset {name} enables the detector"
    );
    table
}

fn det_from(table: &toml::Table) -> Box<dyn Detector> {
    Box::new(GenericRepeat::new(
        Settings::from_table(table).expect("valid settings"),
    ))
}

fn det(toml_text: &str) -> Box<dyn Detector> {
    let t: toml::Table = toml_text.parse().expect("valid TOML");
    det_from(&t)
}

fn default_det() -> Box<dyn Detector> {
    det("")
}

fn plg() -> Box<dyn Detector> {
    det_from(&preset_table("pi-loop-guard"))
}

fn prg() -> Box<dyn Detector> {
    det_from(&preset_table("pi-repetition-guard"))
}

fn oc() -> Box<dyn Detector> {
    det_from(&preset_table("openclaw"))
}

/// Findings as (event index, level, count).
fn summary(f: &[(usize, Finding)]) -> Vec<(usize, Level, u32)> {
    f.iter().map(|(i, f)| (*i, f.level, f.count)).collect()
}

fn criticals(f: &[(usize, Finding)]) -> Vec<usize> {
    f.iter()
        .filter(|(_, f)| f.level == Level::Critical)
        .map(|(i, _)| *i)
        .collect()
}

fn warnings(f: &[(usize, Finding)]) -> Vec<usize> {
    f.iter()
        .filter(|(_, f)| f.level == Level::Warning)
        .map(|(i, _)| *i)
        .collect()
}

/// Index of the last event pushed so far.
fn last(s: &Script) -> usize {
    s.events().len() - 1
}

/// A sequential call whose result carries `images` image blocks.
fn call_images(s: &mut Script, tool: &str, args: Value, text: &str, images: u32) {
    s.push(OwnedEvent::MessageStart);
    s.push(OwnedEvent::MessageEnd);
    let id = s.tool_call(tool, args);
    s.push(OwnedEvent::ToolResult {
        id,
        tool: tool.to_owned(),
        content: text.to_owned(),
        is_error: false,
        images,
        details: None,
    });
}

/// A sequential assistant message with one call and no result (yet).
fn attempt(s: &mut Script, tool: &str, args: Value) -> String {
    s.push(OwnedEvent::MessageStart);
    s.push(OwnedEvent::MessageEnd);
    s.tool_call(tool, args)
}

// ---- A. identical-call / unchanged-result streak (pi-loop-guard) ---------------------------

#[test]
fn a01_three_identical_results_warn_once() {
    let mut s = Script::new();
    s.user("fix it");
    let mut results = Vec::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
        results.push(last(&s));
    }
    let f = run(plg(), s.events());
    assert_eq!(summary(&f), vec![(results[2], Level::Warning, 3)]);
    assert!(f[0].1.message.contains("`read`"), "{}", f[0].1.message);
    assert_eq!(f[0].1.tool.as_deref(), Some("read"));
    // Same with the default settings.
    let f = run(default_det(), s.events());
    assert_eq!(summary(&f), vec![(results[2], Level::Warning, 3)]);
}

#[test]
fn a01_the_warning_fires_once_per_streak() {
    let mut s = Script::new();
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let f = run(plg(), s.events());
    assert_eq!(warnings(&f).len(), 1, "{f:?}");
    assert!(criticals(&f).is_empty());
}

#[test]
fn a02_key_order_does_not_matter() {
    let one: Value = serde_json::from_str(r#"{"a":1,"b":{"c":2,"d":3}}"#).unwrap();
    let two: Value = serde_json::from_str(r#"{"b":{"d":3,"c":2},"a":1}"#).unwrap();
    let mut s = Script::new();
    s.call("edit", one.clone(), "ok");
    s.call("edit", two, "ok");
    s.call("edit", one, "ok");
    let f = run(plg(), s.events());
    assert_eq!(summary(&f), vec![(last(&s), Level::Warning, 3)]);
}

#[test]
fn a03_a_changed_result_resets() {
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "Y");
    assert!(run(plg(), s.events()).is_empty());
    // The streak after Y is 1: two more Y make 3.
    s.call("read", json!({"path": "a"}), "Y");
    assert!(run(plg(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "Y");
    assert_eq!(
        summary(&run(plg(), s.events())),
        vec![(last(&s), Level::Warning, 3)]
    );
}

#[test]
fn a04_a_different_call_resets() {
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    s.call("grep", json!({"q": "q"}), "Z");
    s.call("read", json!({"path": "a"}), "X");
    assert!(run(plg(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "X");
    assert!(run(plg(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(
        summary(&run(plg(), s.events())),
        vec![(last(&s), Level::Warning, 3)]
    );
}

#[test]
fn a05_fifth_identical_call_is_refused() {
    let mut s = Script::new();
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let fifth = last(&s);
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), vec![fifth], "{f:?}");
    let block = &f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .unwrap()
        .1;
    assert_eq!(block.count, 5);
    assert!(
        block.message.contains("`read`") && block.message.contains("4 times"),
        "{}",
        block.message
    );
    assert!(block.evidence.contains(&(fifth as u64)));
    // Calls 1-4 were never blocked.
    assert!(f
        .iter()
        .all(|(i, f)| f.level == Level::Warning || *i == fifth));
}

#[test]
fn a05_analogue_a_is_not_copied_the_fifth_result_never_completes_first() {
    // With five results completed the 5th call was not blocked only if the detector let
    // it run; our detector blocks the 5th call itself, so the 5th result is ignored and the
    // 6th attempt is blocked too (sticky), never "first blocked at the 6th".
    let mut s = Script::new();
    for _ in 0..5 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let f = run(plg(), s.events());
    let first_block = criticals(&f)[0];
    assert!(matches!(
        s.events()[first_block],
        OwnedEvent::ToolCall { .. }
    ));
    assert_eq!(
        s.events()
            .iter()
            .take(first_block)
            .filter(|e| matches!(e, OwnedEvent::ToolResult { .. }))
            .count(),
        4
    );
}

#[test]
fn a06_every_blocked_attempt_counts_toward_the_abort() {
    // The orchestrator aborts after `guard.abort-after-blocks` (3) blocks in a user turn; the
    // detector reports each blocked attempt as critical with one stable key.
    let mut s = Script::new();
    s.user("go");
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let mut blocked = Vec::new();
    for _ in 0..3 {
        let id = attempt(&mut s, "read", json!({"path": "a"}));
        blocked.push(last(&s));
        s.tool_result(&id, "read", "Blocked: loop", true);
    }
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), blocked);
    let crit: Vec<&Finding> = f
        .iter()
        .map(|(_, f)| f)
        .filter(|f| f.level == Level::Critical)
        .collect();
    assert!(crit.iter().all(|f| f.key == crit[0].key));
    assert_eq!(
        crit.iter().map(|f| f.count).collect::<Vec<_>>(),
        vec![5, 6, 7]
    );
}

#[test]
fn a07_a_new_user_turn_resets_and_the_guards_own_steer_does_not() {
    let mut s = Script::new();
    s.user("first task");
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
    // The guard's own steer delivered back is not a new turn (which user events are new
    // turns is core's decision: `Cx::is_new_turn`).
    s.user_from("Loop warning: change your approach", Origin::Guard);
    attempt(&mut s, "read", json!({"path": "a"}));
    let still_blocked = last(&s);
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), vec![still_blocked]);
    // A real new prompt resets both the streak and the block.
    s.user("second task");
    for _ in 0..2 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let f = run(plg(), s.events());
    assert_eq!(
        criticals(&f),
        vec![still_blocked],
        "no block after the new turn: {f:?}"
    );
    assert_eq!(
        warnings(&f).len(),
        1,
        "the old streak's warning only: {f:?}"
    );
}

#[test]
fn a08_parallel_batches_do_not_advance() {
    let a = || json!({"path": "a"});
    let mut s = Script::new();
    s.call("read", a(), "X");
    s.call("read", a(), "X");
    s.batch(&[("read", a(), "X"), ("read", a(), "X")]);
    s.batch(&[("read", a(), "X"), ("read", a(), "X"), ("read", a(), "X")]);
    // Without the batches this would be the 7th identical result; the streak is only at 2.
    assert!(run(plg(), s.events()).is_empty());
    s.call("read", a(), "X");
    assert_eq!(
        summary(&run(plg(), s.events())),
        vec![(last(&s), Level::Warning, 3)]
    );
}

#[test]
fn a08_a_batch_whose_last_result_differs_ends_the_streak() {
    let a = || json!({"path": "a"});
    let mut s = Script::new();
    s.call("read", a(), "X");
    s.call("read", a(), "X");
    s.batch(&[("read", a(), "X"), ("grep", json!({"q": 1}), "Z")]);
    s.call("read", a(), "X");
    s.call("read", a(), "X");
    assert!(run(plg(), s.events()).is_empty());
    s.call("read", a(), "X");
    assert_eq!(
        summary(&run(plg(), s.events())),
        vec![(last(&s), Level::Warning, 3)]
    );
}

#[test]
fn a09_images_are_counted_not_hashed() {
    let raw = || det("result-identity = \"raw\"\nwindow = { enabled = false }");
    // "T" + 1 image, then "T" + 2 images: different results, the streak resets.
    let mut s = Script::new();
    call_images(&mut s, "screenshot", json!({}), "T", 1);
    call_images(&mut s, "screenshot", json!({}), "T", 1);
    call_images(&mut s, "screenshot", json!({}), "T", 2);
    assert!(run(raw(), s.events()).is_empty());
    // Equal text and equal image counts (whatever the bytes were) are the same result.
    let mut s = Script::new();
    for _ in 0..3 {
        call_images(&mut s, "screenshot", json!({}), "T", 2);
    }
    assert_eq!(
        summary(&run(raw(), s.events())),
        vec![(last(&s), Level::Warning, 3)]
    );
}

#[test]
fn a10_the_result_hash_streams() {
    let mut a = ResultHasher::new();
    a.begin_part();
    for piece in ["line one\n", "line ", "two"] {
        a.chunk(piece.as_bytes());
    }
    let mut b = ResultHasher::new();
    b.begin_part();
    b.chunk(b"line one\nline two");
    assert_eq!(a.finish(), b.finish());
    let mut c = ResultHasher::new();
    c.text("line one\nline two");
    c.image();
    assert_eq!(
        c.finish(),
        ResultHasher::one_shot(&["line one\nline two"], 1)
    );
    assert_eq!(
        loopguard_core::result_fingerprint("x", 0),
        ResultHasher::one_shot(&["x"], 0)
    );
}

// ---- I. tool-call loop, sliding window (pi-repetition-guard) -------------------------------

#[test]
fn i51_the_fourth_occurrence_within_eight_fires() {
    // Six identical calls: false, false, false, then true from the 4th on (PRG test 12).
    let mut s = Script::new();
    let mut calls = Vec::new();
    for i in 0..6 {
        let id = attempt(&mut s, "bash", json!({"command": "make"}));
        calls.push(last(&s));
        s.tool_result(&id, "bash", &format!("output {i}"), false);
    }
    let f = run(prg(), s.events());
    assert_eq!(criticals(&f), calls[3..].to_vec());
    assert!(warnings(&f).is_empty());
    assert!(f[0]
        .1
        .message
        .starts_with("Repetition guard: tool-call loop (same tool+args repeated)"));
    // Not adjacent: positions 1, 3, 5, 7 of eight calls.
    let mut s = Script::new();
    let mut target = Vec::new();
    for i in 0..8 {
        if i % 2 == 0 {
            s.call("read", json!({"path": "a"}), &format!("r{i}"));
            target.push(last(&s) - 1);
        } else {
            s.call("grep", json!({"q": i}), "z");
        }
    }
    let f = run(prg(), s.events());
    assert_eq!(criticals(&f), vec![target[3]]);
    assert_eq!(f[0].1.count, 4);
}

#[test]
fn i51_varied_legitimate_usage_never_fires() {
    // PRG test 13: varied git/read/edit calls with "git status" twice.
    let mut s = Script::new();
    s.call("bash", json!({"command": "git status"}), "clean");
    s.call("read", json!({"path": "src/a.rs"}), "a");
    s.call(
        "edit",
        json!({"path": "src/a.rs", "old": "x", "new": "y"}),
        "ok",
    );
    s.call("bash", json!({"command": "git diff"}), "diff");
    s.call("read", json!({"path": "src/b.rs"}), "b");
    s.call("bash", json!({"command": "git status"}), "modified");
    s.call("bash", json!({"command": "git commit -am fix"}), "done");
    assert!(run(prg(), s.events()).is_empty());
    assert!(run(default_det(), s.events()).is_empty());
}

#[test]
fn i52_occurrences_slide_out_and_a_new_run_clears_the_window() {
    let mut s = Script::new();
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
    for i in 0..8 {
        s.call("grep", json!({"q": i}), "z");
    }
    let before = run(prg(), s.events()).len();
    assert_eq!(before, 1);
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(run(prg(), s.events()).len(), before);

    let mut s = Script::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
    }
    s.run_start();
    s.call("read", json!({"path": "a"}), "X");
    assert!(run(prg(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(criticals(&run(prg(), s.events())).len(), 1);
}

#[test]
fn i53_inputs_are_normalised_like_pi_repetition_guard() {
    use crate::detector::window_key;
    let key = |tool: &str, args: Value| {
        let fp = loopguard_core::call_fingerprint(tool, &loopguard_core::args_fingerprint(&args));
        window_key(tool, &args, &fp)
    };
    // A string input is used as is; null and "" are the same; object keys are sorted.
    assert_eq!(key("t", Value::Null), key("t", json!("")));
    assert_ne!(key("t", json!("abc")), key("t", json!("abd")));
    assert_eq!(
        key("t", json!({"b": {"d": 1, "c": 2}, "a": [2, 1]})),
        key("t", json!({"a": [2, 1], "b": {"c": 2, "d": 1}}))
    );
    assert_ne!(
        key("t", json!({"a": [1, 2]})),
        key("t", json!({"a": [2, 1]}))
    );
    assert_ne!(key("t", json!("x")), key("u", json!("x")));
    assert_ne!(key("t", Value::Null), key("t", json!({})));
    let mut s = Script::new();
    for args in [Value::Null, json!(""), Value::Null, json!("")] {
        s.call("think", args, "ok");
    }
    assert_eq!(criticals(&run(prg(), s.events())), vec![last(&s) - 1]);
}

// ---- K. pi-loop-guard README details --------------------------------------------------------

#[test]
fn k66_warn_not_below_block_is_a_config_error() {
    for text in [
        "warn-threshold = 5\nblock-threshold = 5",
        "warn-threshold = 6",
        "block-threshold = 2\nwarn-threshold = 3",
    ] {
        let t: toml::Table = text.parse().unwrap();
        let err = Settings::from_table(&t).unwrap_err();
        assert_eq!(
            err.path(),
            Some("detectors.generic-repeat.warn-threshold"),
            "{text}"
        );
        assert!(
            err.to_string()
                .contains("must be lower than block-threshold"),
            "{err}"
        );
    }
    let t: toml::Table = "warn-threshold = 5\nblock-threshold = 8".parse().unwrap();
    let s = Settings::from_table(&t).unwrap();
    assert_eq!((s.warn_threshold, s.block_threshold), (5, 8));
    let d = Settings::default();
    assert_eq!((d.warn_threshold, d.block_threshold), (3, 5));
    // Through the environment names and the registry, as a host would load it.
    let mut c = Config::default();
    c.apply_env([
        ("LOOP_GUARD_WARN_THRESHOLD".to_owned(), "5".to_owned()),
        ("LOOP_GUARD_BLOCK_THRESHOLD".to_owned(), "5".to_owned()),
    ])
    .unwrap();
    let reg = Registry::from_entries([&REGISTRATION]).unwrap();
    let err = reg.build(&c).unwrap_err();
    assert_eq!(err.path(), Some("detectors.generic-repeat.warn-threshold"));
    // Zero and negative values are rejected with their key.
    let t: toml::Table = "block-threshold = 0".parse().unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.block-threshold")
    );
    let t: toml::Table = "warn-threshold = -1".parse().unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.warn-threshold")
    );
}

#[test]
fn k67_the_master_switch_builds_nothing() {
    let reg = Registry::from_entries([&REGISTRATION]).unwrap();
    let c = Config::from_toml_str("[detectors.generic-repeat]\nenabled = false\n", None).unwrap();
    assert!(reg.build(&c).unwrap().is_empty());
    assert_eq!(
        reg.build(&Config::default()).unwrap().len(),
        1,
        "on by default"
    );
    // Every rule off: nothing fires on a plain loop.
    let off = det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { enabled = false }");
    let mut s = Script::new();
    for _ in 0..30 {
        s.call("read", json!({"path": "a"}), "X");
    }
    assert!(run(off, s.events()).is_empty());
}

#[test]
fn k68_ignored_tools_never_fire() {
    let mut c = Config::default();
    c.apply_env([("LOOP_GUARD_IGNORE_TOOLS".to_owned(), "todo,bash".to_owned())])
        .unwrap();
    let table = c.detectors[NAME].clone();
    let mut s = Script::new();
    for _ in 0..20 {
        s.call("todo", json!({"items": ["a"]}), "saved");
        s.call("bash", json!({"command": "make"}), "ok");
    }
    s.batch(&[("todo", json!({}), "x"), ("bash", json!({}), "y")]);
    s.batch(&[("todo", json!({}), "x"), ("bash", json!({}), "y")]);
    s.batch(&[("todo", json!({}), "x"), ("bash", json!({}), "y")]);
    assert!(run(det_from(&table), s.events()).is_empty());
    let mut plg_table = preset_table("pi-loop-guard");
    plg_table.insert(
        "ignore-tools".into(),
        toml::Value::Array(vec!["todo".into(), "bash".into()]),
    );
    assert!(run(det_from(&plg_table), s.events()).is_empty());
    // Without the option the same session fires.
    assert!(!run(default_det(), s.events()).is_empty());
}

#[test]
fn k68_an_ignored_tool_between_identical_calls_is_transparent() {
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
        s.call("todo", json!({"n": 1}), "ok");
    }
    let d = det("ignore-tools = [\"todo\"]\nwindow = { enabled = false }");
    let f = run(d, s.events());
    assert_eq!(summary(&f), vec![(last(&s) - 4, Level::Warning, 3)]);
}

#[test]
fn k69_ignored_errors_never_advance_the_streak() {
    let mut s = Script::new();
    for _ in 0..10 {
        s.call_with("bash", json!({"command": "make"}), "error: no rule", true);
    }
    let mut t = preset_table("pi-loop-guard");
    t.insert("ignore-errors".into(), toml::Value::Boolean(true));
    assert!(run(det_from(&t), s.events()).is_empty());
    // Default (false): errors count like any other result.
    let f = run(plg(), s.events());
    assert_eq!(warnings(&f).len(), 1);
    assert_eq!(criticals(&f).len(), 6, "attempts 5..10 are blocked: {f:?}");
    // An ignored error between identical successes neither advances nor breaks the streak.
    let mut s = Script::new();
    s.call("bash", json!({"command": "make"}), "ok");
    s.call_with("bash", json!({"command": "make"}), "boom", true);
    s.call("bash", json!({"command": "make"}), "ok");
    assert!(run(det_from(&t), s.events()).is_empty());
    s.call("bash", json!({"command": "make"}), "ok");
    assert_eq!(
        summary(&run(det_from(&t), s.events())),
        vec![(last(&s), Level::Warning, 3)]
    );
}

#[test]
fn k70_the_block_is_sticky_until_the_arguments_change() {
    let mut s = Script::new();
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let mut blocked = Vec::new();
    // Live host: the block reason comes back as an error result.
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(last(&s));
    s.tool_result(&id, "read", "Blocked: this exact `read` call…", true);
    // `loopguard scan`: the recorded original result is replayed.
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(last(&s));
    s.tool_result(&id, "read", "X", false);
    // No result at all.
    attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(last(&s));
    attempt(&mut s, "read", json!({"path": "a"}));
    blocked.push(last(&s));
    // Different arguments execute and lift the block.
    s.call("read", json!({"path": "b"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    let f = run(plg(), s.events());
    assert_eq!(criticals(&f), blocked, "{f:?}");
    assert_eq!(
        f.iter()
            .filter(|(_, f)| f.level == Level::Critical)
            .map(|(_, f)| f.count)
            .collect::<Vec<_>>(),
        vec![5, 6, 7, 8]
    );
}

#[test]
fn k71_terminate_is_the_orchestrators_flag() {
    // `LOOP_GUARD_USE_TERMINATE` maps to `guard.terminate`: the detector's block is a plain
    // critical finding, never an abort of its own.
    let mut s = Script::new();
    for _ in 0..6 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let f = run(plg(), s.events());
    assert!(!criticals(&f).is_empty());
    assert!(f
        .iter()
        .all(|(_, f)| f.level != Level::Fatal && f.code.is_none()));
    let mut c = Config::default();
    c.apply_env([("LOOP_GUARD_USE_TERMINATE".to_owned(), "true".to_owned())])
        .unwrap();
    assert!(
        !c.detectors.contains_key(NAME),
        "terminate is not a detector option"
    );
}

#[test]
fn k72_different_arguments_never_combine() {
    let mut s = Script::new();
    for i in 0..40 {
        s.call("read", json!({"path": format!("file{i}.rs")}), "X");
    }
    assert!(run(plg(), s.events()).is_empty());
    assert!(run(default_det(), s.events()).is_empty());
    assert!(run(prg(), s.events()).is_empty());
    assert!(run(oc(), s.events()).is_empty());
}

// ---- OpenClaw generic_repeat (§3.3-3.4, §3.10) ----------------------------------------------

#[test]
fn oc_warns_on_generic_repeated_tool_args_calls() {
    // 10 recorded calls, no outcomes: the 11th gets a warning with count 10.
    let mut s = Script::new();
    for _ in 0..11 {
        attempt(&mut s, "read", json!({"path": "a"}));
    }
    let f = run(oc(), s.events());
    assert_eq!(summary(&f), vec![(last(&s), Level::Warning, 10)]);
    let m = &f[0].1.message;
    assert!(m.contains("WARNING") && m.contains("10 times"), "{m}");
    let args_fp = loopguard_core::args_fingerprint(&json!({"path": "a"}));
    assert_eq!(
        f[0].1.key,
        format!("generic:read:read:{}", args_fp.to_hex())
    );
}

#[test]
fn oc_blocks_generic_no_progress_at_critical_threshold() {
    let mut s = Script::new();
    for _ in 0..20 {
        s.call("read", json!({"path": "a"}), "same");
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    assert_eq!(criticals(&f), vec![last(&s)]);
    let crit = &f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .unwrap()
        .1;
    assert_eq!(crit.count, 20);
    assert!(
        crit.message.contains("identical outcomes"),
        "{}",
        crit.message
    );
    let args_fp = loopguard_core::args_fingerprint(&json!({"path": "a"}));
    assert!(crit
        .key
        .starts_with(&format!("generic:read:read:{}:", args_fp.to_hex())));
    // Calls 11..20 were warned (recent count >= 10), not blocked.
    assert_eq!(warnings(&f).len(), 10);
}

#[test]
fn oc_changing_exec_output_only_warns() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call(
            "exec",
            json!({"command": "date"}),
            &format!("Mon Jan {i} 10:00:00 UTC"),
        );
    }
    let f = run(oc(), s.events());
    assert!(criticals(&f).is_empty());
    assert_eq!(warnings(&f).len(), 20, "calls 11..30 warn");
}

#[test]
fn oc_run_scoping() {
    let scoped = |first: Option<&str>, second: Option<&str>| {
        let mut s = Script::new();
        s.push(OwnedEvent::RunStart {
            run_id: first.map(str::to_owned),
        });
        for _ in 0..10 {
            s.call("read", json!({"path": "a"}), "X");
        }
        s.push(OwnedEvent::RunStart {
            run_id: second.map(str::to_owned),
        });
        attempt(&mut s, "read", json!({"path": "a"}));
        run(oc(), s.events())
    };
    assert!(
        scoped(Some("heartbeat-1"), Some("heartbeat-2")).is_empty(),
        "other runs never count"
    );
    assert_eq!(
        summary(&scoped(Some("run-1"), Some("run-1")))[0].2,
        10,
        "the same run id counts"
    );
    assert!(
        scoped(Some("run-1"), None).is_empty(),
        "scoped and unscoped are isolated"
    );
}

#[test]
fn oc_outcomes_never_attach_to_another_runs_record() {
    // A call in run 1 whose result arrives in run 2 is recorded as a run-2 outcome.
    let mut s = Script::new();
    s.push(OwnedEvent::RunStart {
        run_id: Some("r1".into()),
    });
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    s.push(OwnedEvent::RunStart {
        run_id: Some("r2".into()),
    });
    s.tool_result(&id, "read", "X", false);
    for _ in 0..19 {
        s.call("read", json!({"path": "a"}), "X");
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    let crit = f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .map(|(_, f)| f.count);
    assert_eq!(crit, Some(20));
}

#[test]
fn oc_interleaving_does_not_break_the_streak() {
    let mut s = Script::new();
    for i in 0..20 {
        s.call("read", json!({"path": "a"}), "X");
        s.call("grep", json!({"q": i}), "z");
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { history-size = 50 }"), s.events());
    assert_eq!(criticals(&f), vec![last(&s)]);
    // A different result for the same call ends the streak.
    let mut s = Script::new();
    for i in 0..25 {
        s.call(
            "read",
            json!({"path": "a"}),
            if i == 10 { "Y" } else { "X" },
        );
    }
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    assert!(
        criticals(&f).is_empty(),
        "only 14 identical since the change: {f:?}"
    );
}

#[test]
fn oc_the_window_caps_the_streak() {
    // history 10 < critical 20: the streak never exceeds the history.
    let d = || {
        det("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { history-size = 10, warning-threshold = 5, critical-threshold = 20 }")
    };
    let mut s = Script::new();
    for _ in 0..40 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let f = run(d(), s.events());
    assert!(criticals(&f).is_empty());
    assert!(f.iter().all(|(_, f)| f.count <= 10));
}

#[test]
fn oc_known_polls_skip_generic_repeat() {
    let mut s = Script::new();
    for _ in 0..25 {
        s.call(
            "process",
            json!({"action": "poll", "sessionId": "s"}),
            "running",
        );
        s.call("command_status", json!({"id": 1}), "running");
    }
    assert!(run(oc(), s.events()).is_empty());
    let mut s = Script::new();
    for _ in 0..21 {
        s.call(
            "process",
            json!({"action": "kill", "sessionId": "s"}),
            "no such process",
        );
    }
    assert_eq!(criticals(&run(oc(), s.events())).len(), 1);
}

#[test]
fn oc_the_critical_veto_stays_sticky() {
    let mut s = Script::new();
    for _ in 0..20 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let id = attempt(&mut s, "read", json!({"path": "a"}));
    let first = last(&s);
    s.tool_result(
        &id,
        "read",
        "CRITICAL: Called read with identical arguments…",
        true,
    );
    attempt(&mut s, "read", json!({"path": "a"}));
    let f = run(oc(), s.events());
    assert_eq!(criticals(&f), vec![first, last(&s)]);
}

#[test]
fn oc_does_not_flag_unique_calls_or_an_empty_history() {
    let mut s = Script::new();
    for i in 0..15 {
        s.call("read", json!({"path": format!("p{i}")}), "X");
    }
    assert!(run(oc(), s.events()).is_empty());
    assert!(run(oc(), &[]).is_empty());
}

#[test]
fn oc_config_validation_names_the_key() {
    let t: toml::Table = "openclaw = { warning-threshold = 20, critical-threshold = 20 }"
        .parse()
        .unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.openclaw.warning-threshold")
    );
    let t: toml::Table = "openclaw = { history-size = 0 }".parse().unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.openclaw.history-size")
    );
    let t: toml::Table = "openclaw = { typo = 1 }".parse().unwrap();
    let err = Settings::from_table(&t).unwrap_err();
    assert!(err.to_string().contains("unknown field `typo`"), "{err}");
    let t: toml::Table = "window = { size = 4, threshold = 5 }".parse().unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.window.threshold")
    );
    let t: toml::Table = "window = { identity = \"call-and-result\", level = \"critical\" }"
        .parse()
        .unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.window.level")
    );
    let t: toml::Table = "result-identity = \"fuzzy\"".parse().unwrap();
    assert_eq!(
        Settings::from_table(&t).unwrap_err().path(),
        Some("detectors.generic-repeat.result-identity")
    );
}

// ---- the parallel-batch trap ----------------------------------------------------------------

fn same_batch(s: &mut Script) {
    s.batch(&[
        ("read", json!({"path": "a"}), "A"),
        ("grep", json!({"q": "todo"}), "none"),
    ]);
}

#[test]
fn batch_trap_the_same_batch_forever_is_caught() {
    let mut s = Script::new();
    let mut ends = Vec::new();
    for _ in 0..4 {
        same_batch(&mut s);
        ends.push(last(&s));
    }
    let f = run(default_det(), s.events());
    // Warned when the 3rd identical batch completed.
    assert!(warnings(&f).contains(&ends[2]), "{f:?}");
    assert!(criticals(&f).is_empty());
    // The 5th identical batch: both calls are blocked.
    same_batch(&mut s);
    let n = s.events().len();
    let f = run(default_det(), s.events());
    assert_eq!(criticals(&f), vec![n - 4, n - 3], "{f:?}");
    let crit = &f
        .iter()
        .find(|(_, f)| f.level == Level::Critical)
        .unwrap()
        .1;
    assert!(
        crit.message.contains("batch of 2 tool calls"),
        "{}",
        crit.message
    );
}

#[test]
fn batch_trap_result_order_inside_a_batch_does_not_matter() {
    let mut s = Script::new();
    for i in 0..3 {
        if i % 2 == 0 {
            s.batch(&[
                ("read", json!({"path": "a"}), "A"),
                ("grep", json!({"q": 1}), "G"),
            ]);
        } else {
            s.batch(&[
                ("grep", json!({"q": 1}), "G"),
                ("read", json!({"path": "a"}), "A"),
            ]);
        }
    }
    assert_eq!(warnings(&run(default_det(), s.events())), vec![last(&s)]);
}

#[test]
fn batch_trap_changing_batches_are_not_a_loop() {
    let mut s = Script::new();
    for i in 0..10 {
        s.batch(&[
            ("read", json!({"path": "a"}), "A"),
            ("bash", json!({"command": "tail log"}), &format!("line {i}")),
        ]);
    }
    let f = run(det("window = { enabled = false }"), s.events());
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn batch_trap_blocked_batches_stay_blocked() {
    let mut s = Script::new();
    for _ in 0..4 {
        same_batch(&mut s);
    }
    let mut blocked = Vec::new();
    for round in 0..3 {
        s.push(OwnedEvent::MessageStart);
        s.push(OwnedEvent::MessageEnd);
        let a = s.tool_call("read", json!({"path": "a"}));
        blocked.push(last(&s));
        let b = s.tool_call("grep", json!({"q": "todo"}));
        blocked.push(last(&s));
        if round == 0 {
            s.tool_result(&a, "read", "Blocked", true);
            s.tool_result(&b, "grep", "Blocked", true);
        }
    }
    let f = run(det("window = { enabled = false }"), s.events());
    assert_eq!(criticals(&f), blocked);
    // A serial different call ends the batch loop.
    s.call("bash", json!({"command": "ls"}), "files");
    same_batch(&mut s);
    let f = run(det("window = { enabled = false }"), s.events());
    assert_eq!(criticals(&f), blocked);
}

#[test]
fn batch_trap_pi_loop_guard_preset_reproduces_the_gap() {
    // pi-loop-guard never counts parallel batches; its preset keeps that flaw.
    let mut s = Script::new();
    for _ in 0..20 {
        same_batch(&mut s);
    }
    assert!(run(plg(), s.events()).is_empty());
    assert!(!criticals(&run(default_det(), s.events())).is_empty());
}

// ---- complaints (§1.5, §3.11, §6) against the default settings -------------------------------

#[test]
fn complaint_oh_my_pi_12564_escalation_continues_past_the_warning() {
    let mut s = Script::new();
    for _ in 0..12 {
        s.call("read", json!({"path": "a"}), "X");
    }
    let f = run(default_det(), s.events());
    let streak: Vec<&Finding> = f
        .iter()
        .map(|(_, f)| f)
        .filter(|f| f.key.starts_with("streak:"))
        .collect();
    assert_eq!(
        streak.iter().filter(|f| f.level == Level::Warning).count(),
        1
    );
    assert_eq!(
        streak.iter().filter(|f| f.level == Level::Critical).count(),
        8,
        "attempts 5..12 blocked"
    );
}

#[test]
fn complaint_typeclaw_597_blocked_retries_never_wear_the_block_down() {
    let mut s = Script::new();
    for _ in 0..4 {
        s.call("bash", json!({"command": "npm test"}), "1 failing");
    }
    for _ in 0..200 {
        s.call_with(
            "bash",
            json!({"command": "npm test"}),
            "Blocked: this exact call…",
            true,
        );
    }
    let f = run(default_det(), s.events());
    let blocks = f
        .iter()
        .filter(|(_, f)| f.level == Level::Critical && f.key.starts_with("streak:"))
        .count();
    assert_eq!(blocks, 200);
}

#[test]
fn complaint_gsd_pi_1206_iterative_debugging_with_new_arguments_is_quiet() {
    let mut s = Script::new();
    for i in 0..30 {
        s.call(
            "bash",
            json!({"command": format!("cargo test case_{i}")}),
            "1 failed",
        );
        s.call(
            "edit",
            json!({"path": "src/lib.rs", "old": format!("v{i}"), "new": format!("v{}", i + 1)}),
            "ok",
        );
    }
    assert!(run(default_det(), s.events()).is_empty());
}

#[test]
fn complaint_polling_with_changing_results_is_never_blocked_by_default() {
    let mut s = Script::new();
    for i in 0..40 {
        s.call(
            "bash",
            json!({"command": "tail -n 5 build.log"}),
            &format!("step {i}"),
        );
    }
    let f = run(default_det(), s.events());
    assert!(criticals(&f).is_empty(), "{f:?}");
}

#[test]
fn findings_are_never_an_abort() {
    let mut s = Script::new();
    for _ in 0..30 {
        s.call("read", json!({"path": "a"}), "X");
        same_batch(&mut s);
    }
    let all = det("openclaw = { enabled = true }\nwindow = { level = \"critical\" }");
    let f = run(all, s.events());
    assert!(!f.is_empty());
    assert!(f.iter().all(|(_, f)| f.level != Level::Fatal
        && f.detector == NAME
        && f.evidence.len() <= loopguard_core::MAX_EVIDENCE));
}

#[test]
fn orphan_results_are_ignored() {
    let mut s = Script::new();
    for _ in 0..10 {
        s.tool_result("unknown-id", "read", "X", false);
    }
    assert!(run(default_det(), s.events()).is_empty());
}

#[test]
fn snapshot_round_trips_mid_loop() {
    let settings = Settings::from_options(&Options {
        openclaw: Some(OpenClawOptions::default()),
        ..Options::default()
    })
    .unwrap();
    let bus = || {
        loopguard_core::Bus::new(vec![
            Box::new(GenericRepeat::new(settings.clone())) as Box<dyn Detector>
        ])
    };
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("read", json!({"path": "a"}), "X");
        same_batch(&mut s);
    }
    let mut live = bus();
    for e in s.events() {
        live.observe(&e.as_event());
    }
    let text = serde_json::to_string(&live.snapshot().unwrap()).unwrap();
    let mut restored = bus();
    restored
        .restore(&serde_json::from_str(&text).unwrap())
        .unwrap();
    let mut tail = Script::new();
    for _ in 0..6 {
        tail.call("read", json!({"path": "a"}), "X");
    }
    let mut findings = Vec::new();
    for e in tail.events() {
        let x = live.observe(&e.as_event());
        assert_eq!(x, restored.observe(&e.as_event()));
        findings.extend(x);
    }
    assert!(findings.iter().any(|f| f.level == Level::Critical));
    // A snapshot of another shape is refused.
    let mut d = GenericRepeat::new(settings.clone());
    assert!(d.restore(&json!({"streak": 3})).is_err());
}

#[test]
fn empty_results_are_no_evidence_by_default() {
    // Corpus regression (SWE-agent walking up with `cd ..`): silence repeated is not a loop.
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("cd", json!({"command": "cd .."}), "");
    }
    assert!(run(default_det(), s.events()).is_empty());
    // pi-loop-guard counts them (its preset keeps `ignore-empty-results = false`).
    assert_eq!(warnings(&run(plg(), s.events())), vec![last(&s)]);
    // An empty result between identical ones is transparent.
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "  \n");
    s.call("read", json!({"path": "a"}), "X");
    s.call("read", json!({"path": "a"}), "X");
    assert_eq!(warnings(&run(default_det(), s.events())), vec![last(&s)]);
}

#[test]
fn window_can_count_identical_outcomes_instead_of_calls() {
    let d = || {
        det("streak = false\nbatch-streak = false\nwindow = { identity = \"call-and-result\", size = 6, threshold = 3 }")
    };
    let mut s = Script::new();
    s.call("read", json!({"path": "a"}), "X");
    s.call("bash", json!({"command": "make"}), "built");
    s.call("read", json!({"path": "a"}), "Y");
    s.call("read", json!({"path": "a"}), "X");
    assert!(run(d(), s.events()).is_empty());
    s.call("read", json!({"path": "a"}), "X");
    let f = run(d(), s.events());
    assert_eq!(summary(&f), vec![(last(&s), Level::Warning, 3)]);
    assert!(matches!(
        s.events()[last(&s)],
        OwnedEvent::ToolResult { .. }
    ));
}

#[test]
fn the_default_window_warns_and_never_blocks() {
    let mut s = Script::new();
    let mut calls = Vec::new();
    for i in 0..6 {
        let id = attempt(&mut s, "bash", json!({"command": "cargo check"}));
        calls.push(last(&s));
        s.tool_result(&id, "bash", &format!("{i} errors"), false);
    }
    let f = run(default_det(), s.events());
    assert_eq!(warnings(&f), calls[4..].to_vec(), "5 of the last 8 calls");
    assert!(criticals(&f).is_empty());
}

// ---- near-duplicate streak (loopguard's default) -------------------------------------------

fn dflt() -> Box<dyn Detector> {
    det_from(&preset_table("default"))
}

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
        calls.push(last(s));
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
        det("near-duplicate = { enabled = true, block-threshold = 8 }"),
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
    let after = last(&s);
    assert!(near_keys(&run(
        det("near-duplicate = { enabled = true, block-threshold = 8 }"),
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
        let at = last(s);
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
    let mut s = Script::new();
    for _ in 0..4 {
        s.call("read", json!({"path": "a"}), "X");
    }
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
    assert_eq!(criticals(&f), vec![last(&s)]);
}

#[test]
fn near_duplicate_identical_normalised_results_count_whatever_the_raw_text() {
    // The bash line counter differs in every raw result; the normaliser masks it.
    let mut s = Script::new();
    s.call("echo", json!({"command": "echo hi"}), "hi");
    for i in 0..3 {
        s.call(
            "javac",
            json!({"command": "javac -cp .:lib/* Repro.java"}),
            &format!(
                "/bin/bash: line {}: javac: command not found",
                50776 + 15 * i
            ),
        );
    }
    attempt(
        &mut s,
        "javac",
        json!({"command": "javac -cp .:lib/* Repro.java"}),
    );
    let d =
        det("streak = false\nwindow = { enabled = false }\nnear-duplicate = { similarity = 1.0 }");
    assert_eq!(
        near_keys(&run(d, s.events())),
        vec![(last(&s), Level::Warning)]
    );
}

#[test]
fn near_duplicate_silence_counts_unless_configured() {
    let mut s = Script::new();
    for _ in 0..3 {
        s.call("python", json!({"command": "python replicate_bug.py"}), "");
    }
    attempt(
        &mut s,
        "python",
        json!({"command": "python replicate_bug.py"}),
    );
    assert_eq!(
        near_keys(&run(dflt(), s.events())),
        vec![(last(&s), Level::Warning)]
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
    for _ in 0..2 {
        s.call("python", json!({"command": "python r.py"}), "");
    }
    attempt(&mut s, "python", json!({"command": "python r.py"}));
    let d = det("near-duplicate = { recurrence-window = 0 }");
    assert!(run(d, s.events()).is_empty());
}

#[test]
fn near_duplicate_resets_on_a_new_turn_a_batch_and_ignored_tools_are_transparent() {
    let mut s = Script::new();
    edit_loop(&mut s, 3);
    s.user("try again");
    edit_loop(&mut s, 1);
    assert!(
        near_keys(&run(dflt(), s.events())).is_empty(),
        "a new turn starts over"
    );

    let mut s = Script::new();
    edit_loop(&mut s, 3);
    s.batch(&[
        ("read", json!({"path": "a"}), "A"),
        ("read", json!({"path": "b"}), "B"),
    ]);
    edit_loop(&mut s, 1);
    assert!(
        near_keys(&run(dflt(), s.events())).is_empty(),
        "a batch ends the streak"
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
    assert!(
        err("near-duplicate = { warn-threshold = 2 }").contains("near-duplicate.warn-threshold")
    );
    assert!(
        err("near-duplicate = { warn-threshold = 5, block-threshold = 5 }")
            .contains("near-duplicate.warn-threshold")
    );
    assert!(err("near-duplicate = { recurrence-window = 65 }")
        .contains("near-duplicate.recurrence-window"));
    assert!(err("near-duplicate = { threshold = 3 }").contains("threshold"));
    // 0 never blocks; `enabled = false` turns a written table off.
    let s = settings_of("near-duplicate = { block-threshold = 0 }");
    assert_eq!(s.near_duplicate.unwrap().block_threshold, None);
    assert!(
        settings_of("near-duplicate = { enabled = false, similarity = 0.9 }")
            .near_duplicate
            .is_none()
    );
    let mut s = Script::new();
    let calls = edit_loop(&mut s, 12);
    let d = det("near-duplicate = { block-threshold = 0 }");
    assert_eq!(
        near_keys(&run(d, s.events())),
        vec![(calls[3], Level::Warning)]
    );
}

fn settings_of(t: &str) -> Settings {
    Settings::from_table(&t.parse::<toml::Table>().unwrap()).unwrap()
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
        out.extend(bus.observe(&e.as_event()).into_iter().map(|f| (i, f)));
    }
    assert_eq!(plain, out);
    assert!(!near_keys(&plain).is_empty());
}

fn default_preset() -> Box<dyn Detector> {
    det_from(&preset_table("default"))
}

// ---- polling calls (default preset) ---------------------------------------------------

#[test]
fn a_poll_that_waits_is_warned_at_ten_and_blocked_at_twenty_not_at_three_and_five() {
    for (tool, args) in [
        ("process", json!({"action": "poll", "sessionId": "build"})),
        (
            "bash",
            json!({"command": "sleep 30; gh run view 42 --json status"}),
        ),
    ] {
        let mut s = Script::new();
        s.user("deploy and wait");
        for _ in 0..7 {
            s.call(tool, args.clone(), "status: running");
        }
        s.call(tool, args.clone(), "status: exited 0");
        assert!(
            run(default_preset(), s.events()).is_empty(),
            "{tool}: waiting 7 times is not a loop"
        );
        let mut s = Script::new();
        s.user("deploy and wait");
        for _ in 0..19 {
            s.call(tool, args.clone(), "status: running");
        }
        let _ = attempt(&mut s, tool, args.clone());
        let f = run(default_preset(), s.events());
        assert_eq!(warnings(&f).len(), 1, "{tool}: {f:?}");
        assert_eq!(
            f.iter()
                .find(|(_, f)| f.level == Level::Warning)
                .map(|(_, f)| f.count),
            Some(10)
        );
        assert_eq!(
            criticals(&f),
            vec![last(&s)],
            "{tool}: the 20th identical poll is blocked"
        );
    }
}

#[test]
fn polls_whose_output_advances_are_never_flagged() {
    let log: String = (0..40)
        .map(|j| format!("[{j:03}] compiling crate {j} of the workspace\n"))
        .collect();
    type Case = (&'static str, Value, Box<dyn Fn(usize) -> String>);
    let cases: Vec<Case> = vec![
        (
            "process",
            json!({"action": "poll", "sessionId": "b"}),
            Box::new(move |i| format!("{log}Progress: {}% ({i} of 25)", i * 4)),
        ),
        (
            "bash",
            json!({"command": "tail -20 build.log"}),
            Box::new(|i| {
                (i..i + 20)
                    .map(|k| format!("line {k}: building module {k}\n"))
                    .collect()
            }),
        ),
        (
            "bash",
            json!({"command": "sleep 10; kubectl get pods"}),
            Box::new(|i| {
                (0..30)
                    .map(|k| {
                        format!(
                            "web-{k} {}\n",
                            if k < i { "1/1 Running" } else { "0/1 Pending" }
                        )
                    })
                    .collect()
            }),
        ),
    ];
    for (tool, args, result) in cases {
        let mut s = Script::new();
        s.user("wait for the build");
        for i in 0..25 {
            s.call(tool, args.clone(), &result(i));
        }
        let f = run(default_preset(), s.events());
        assert!(f.is_empty(), "{tool} {args}: {f:?}");
    }
}

#[test]
fn only_the_first_line_of_a_command_can_make_it_a_poll() {
    use crate::detector::is_polling_command;
    assert!(is_polling_command(
        &json!({"command": "sleep 5 && curl -s localhost:8080/health"})
    ));
    assert!(is_polling_command(
        &json!({"command": "cd app; git status"})
    ));
    assert!(is_polling_command(&json!({"cmd": "./status"})));
    assert!(!is_polling_command(
        &json!({"command": "edit 10:20\n    return node.get(key);\n"})
    ));
    assert!(!is_polling_command(
        &json!({"command": "python replicate_bug.py"})
    ));
    assert!(!is_polling_command(&json!({"path": "status.txt"})));
}

#[test]
fn a_polls_table_is_validated() {
    let t: toml::Table = "polls = { warn-threshold = 20, block-threshold = 10 }"
        .parse()
        .unwrap();
    let err = Settings::from_table(&t).unwrap_err();
    assert_eq!(
        err.path(),
        Some("detectors.generic-repeat.polls.warn-threshold")
    );
    let t: toml::Table = "polls = { warn = 3 }".parse().unwrap();
    assert!(Settings::from_table(&t).is_err());
}
