//! Property tests: key order never matters, all-distinct calls never fire, changing results
//! never reach critical in streak mode, results with disjoint content never fire the
//! near-duplicate rule, snapshot/restore mid-stream changes nothing (inside a drifting window
//! too), and the verdicts are deterministic.

use loopguard_core::{Bus, Detector, Finding, Level, OwnedEvent};
use loopguard_detect_generic_repeat::{GenericRepeat, Settings};
use loopguard_testkit::{arb_args, arb_events, decode_events, run, Script};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn settings(text: &str) -> Settings {
    Settings::from_table(&text.parse::<toml::Table>().expect("toml")).expect("valid settings")
}

/// The configurations every property is checked under.
fn configs() -> Vec<Settings> {
    vec![
        Settings::default(),
        settings("result-identity = \"raw\"\nignore-empty-results = false\nbatch-streak = false\nwindow = { enabled = false }"),
        settings("streak = false\nbatch-streak = false\nwindow = { size = 8, threshold = 4, level = \"critical\" }"),
        settings("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nopenclaw = { warning-threshold = 3, critical-threshold = 5 }"),
        settings("window = { identity = \"call-and-result\", threshold = 3 }\nopenclaw = { enabled = true }"),
        settings("streak = false\nbatch-streak = false\nwindow = { enabled = false }\nnear-duplicate = { warning-threshold = 3, critical-threshold = 4, similarity = 0.5 }"),
        default_preset(),
    ]
}

/// loopguard's `default` preset table, as the README documents it.
fn default_preset() -> Settings {
    let mut t = loopguard_testkit::registration::readme_preset(
        include_str!("../README.md"),
        "default",
        "generic-repeat",
    );
    t.remove("enabled");
    Settings::from_table(&t).expect("valid settings")
}

/// `text` moved into its own block of 64 code points (block `i`), so texts of different
/// blocks share no character, hence no shingle.
fn into_block(text: &str, i: usize) -> String {
    let base = 0x4E00 + 64 * u32::try_from(i).expect("small index");
    text.chars()
        .map(|c| char::from_u32(base + u32::from(c) % 64).expect("CJK block"))
        .collect()
}

fn boxed(s: &Settings) -> Box<dyn Detector> {
    Box::new(GenericRepeat::new(s.clone()))
}

/// The same value with every object's keys inserted in reverse order.
fn reverse_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m.iter().rev() {
                out.insert(k.clone(), reverse_keys(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(reverse_keys).collect()),
        other => other.clone(),
    }
}

const TOOLS: [&str; 3] = ["read", "bash", "grep"];
const RESULTS: [&str; 3] = ["X", "Y", ""];

fn script(calls: &[(usize, Value, usize, bool)], reverse: bool) -> Vec<OwnedEvent> {
    let mut s = Script::new();
    let mut i = 0;
    while i < calls.len() {
        let (t, a, r, batched) = &calls[i];
        let args = if reverse { reverse_keys(a) } else { a.clone() };
        let tool = TOOLS[t % TOOLS.len()];
        let result = RESULTS[r % RESULTS.len()];
        if *batched && i + 1 < calls.len() {
            let (t2, a2, r2, _) = &calls[i + 1];
            let args2 = if reverse {
                reverse_keys(a2)
            } else {
                a2.clone()
            };
            s.batch(&[
                (tool, args, result),
                (TOOLS[t2 % TOOLS.len()], args2, RESULTS[r2 % RESULTS.len()]),
            ]);
            i += 2;
        } else {
            s.call(tool, args, result);
            i += 1;
        }
    }
    s.into_events()
}

fn through_bus_with_snapshot(s: &Settings, events: &[OwnedEvent], cut: usize) -> Vec<Finding> {
    let mut bus = Bus::new(vec![boxed(s)]);
    let mut veto = loopguard_testkit::Veto;
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i == cut {
            let text = serde_json::to_string(&bus.snapshot().expect("snapshot")).expect("json");
            let mut fresh = Bus::new(vec![boxed(s)]);
            fresh
                .restore(&serde_json::from_str(&text).expect("parse"))
                .expect("restore");
            bus = fresh;
        }
        out.extend(veto.observe(&mut bus, &e.as_event()));
    }
    out
}

/// Searches for one name (`resolve_proxy_alias`) in other words and by other tools: (tool,
/// arguments, the answer when nothing is found, the answer when it is).
const FRUITLESS: [(&str, &str, &str, &str); 6] = [
    (
        "bash",
        r#"{"command": "grep -rn 'def resolve_proxy_alias' /repo/src --include=*.py"}"#,
        "",
        "/repo/src/net/proxy.py:88:def resolve_proxy_alias(name, table):",
    ),
    (
        "search_dir",
        r#"{"search_term": "resolve_proxy_alias"}"#,
        "No matches found for \"resolve_proxy_alias\" in /repo",
        "Found 2 matches for \"resolve_proxy_alias\" in /repo:\n/repo/src/net/proxy.py (2 matches)\nEnd of matches for \"resolve_proxy_alias\" in /repo",
    ),
    (
        "find_file",
        r#"{"file_name": "resolve_proxy_alias.py"}"#,
        "No matches found for \"resolve_proxy_alias.py\" in /repo",
        "Found 1 matches for \"resolve_proxy_alias.py\" in /repo:\n/repo/src/net/resolve_proxy_alias.py",
    ),
    (
        "Grep",
        r#"{"pattern": "resolveProxyAlias", "path": "/repo"}"#,
        "No files found",
        "Found 1 file\n/repo/web/static/proxy.js",
    ),
    (
        "bash",
        r#"{"command": "find /repo -iname '*resolve_proxy_alias*'"}"#,
        "",
        "/repo/tests/test_resolve_proxy_alias.py",
    ),
    (
        "bash",
        r#"{"command": "git grep -n resolve_proxy_alias -- '*.py'"}"#,
        "Command exited with code 1",
        "src/net/proxy.py:88:def resolve_proxy_alias(name, table):",
    ),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn key_order_never_matters(
        calls in prop::collection::vec((0..3usize, arb_args(), 0..3usize, any::<bool>()), 1..40)
    ) {
        let a = script(&calls, false);
        let b = script(&calls, true);
        for s in configs() {
            prop_assert_eq!(run(boxed(&s), &a), run(boxed(&s), &b));
        }
    }

    #[test]
    fn all_distinct_calls_never_fire(n in 1..80usize, results in prop::collection::vec(0..3usize, 80), batched in any::<bool>()) {
        let calls: Vec<(usize, Value, usize, bool)> =
            (0..n).map(|i| (i % 3, json!({"path": format!("f{i}")}), results[i], batched)).collect();
        let events = script(&calls, false);
        for s in configs() {
            prop_assert!(run(boxed(&s), &events).is_empty());
        }
    }

    #[test]
    fn changing_results_never_reach_critical_in_streak_mode(n in 1..80usize, tool in 0..3usize, args in arb_args()) {
        let mut s = Script::new();
        s.call_results(n, TOOLS[tool], args.clone(), |i| format!("result {i}"));
        let streak_only = settings("window = { enabled = false }");
        prop_assert!(run(boxed(&streak_only), s.events()).is_empty());
        let default = run(boxed(&Settings::default()), s.events());
        prop_assert!(default.iter().all(|(_, f)| f.level == Level::Warning));
    }

    #[test]
    fn disjoint_results_never_fire_the_near_duplicate_rule(
        texts in prop::collection::vec("[a-z0-9 ]{1,120}", 1..40),
        args in arb_args(),
        tool in 0..3usize,
    ) {
        // The same call again and again, every result with content no other result shares.
        let mut s = Script::new();
        for (i, t) in texts.iter().enumerate() {
            s.call(TOOLS[tool], args.clone(), &into_block(t, i));
        }
        let eager = settings("near-duplicate = { warning-threshold = 3, critical-threshold = 4, similarity = 0.001, recurrence-window = 8 }");
        for cfg in [default_preset(), eager] {
            let f = run(boxed(&cfg), s.events());
            prop_assert!(f.iter().all(|(_, f)| !f.key.starts_with("near:")), "{:?}", f);
        }
    }

    #[test]
    fn snapshot_restore_mid_stream_changes_nothing(bytes in prop::collection::vec(any::<u8>(), 0..900), cut in any::<prop::sample::Index>()) {
        let events = decode_events(&bytes);
        let cut = if events.is_empty() { 0 } else { cut.index(events.len()) };
        for s in configs() {
            let plain: Vec<Finding> = run(boxed(&s), &events).into_iter().map(|(_, f)| f).collect();
            prop_assert_eq!(plain, through_bus_with_snapshot(&s, &events, cut));
        }
    }

    /// A window drifting over one place (or moving on, or paging), cut by a snapshot
    /// anywhere: the same findings as without it, the drifting window's included.
    #[test]
    fn a_snapshot_inside_a_drifting_window_changes_nothing(
        starts in prop::collection::vec(prop_oneof![6 => 95usize..101, 1 => 0usize..200], 8..16),
        cut in any::<prop::sample::Index>(),
    ) {
        const WORDS: [&str; 9] = ["rows", "cells", "pages", "notes", "sheets", "marks", "votes", "bills", "tasks"];
        let text: Vec<String> = (0..260)
            .map(|i| format!("    {}_{} = merge({}, {})", WORDS[i % 9], WORDS[(i / 9) % 9], WORDS[(i / 81) % 9], WORDS[(i / 3) % 9]))
            .collect();
        let mut sc = Script::new();
        for from in &starts {
            let shown: String = text[*from..from + 40].iter().map(|l| format!("{l}\n")).collect();
            sc.call("bash", json!({"command": format!("sed -n '{},{}p' report.py", from + 1, from + 40)}), &shown);
        }
        let events = sc.into_events();
        let cut = cut.index(events.len());
        let s = default_preset();
        let plain: Vec<Finding> = run(boxed(&s), &events).into_iter().map(|(_, f)| f).collect();
        prop_assert_eq!(plain, through_bus_with_snapshot(&s, &events, cut));
    }

    /// Searches for one name in other words, by several tools, some finding it: a
    /// fruitless-search warning exactly when six in a row found nothing, and the same
    /// findings with a snapshot taken anywhere.
    #[test]
    fn fruitless_searches_warn_at_six_in_a_row_and_survive_a_snapshot(
        found in prop::collection::vec(prop_oneof![3 => Just(false), 1 => Just(true)], 6..24),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut sc = Script::new();
        for (k, hit) in found.iter().enumerate() {
            let (tool, args, nothing, something) = &FRUITLESS[k % FRUITLESS.len()];
            let args: Value = serde_json::from_str(args).expect("JSON arguments");
            sc.call(tool, args, if *hit { something } else { nothing });
        }
        let events = sc.into_events();
        let longest = found
            .split(|hit| *hit)
            .map(<[bool]>::len)
            .max()
            .unwrap_or(0);
        let s = default_preset();
        let plain: Vec<Finding> = run(boxed(&s), &events).into_iter().map(|(_, f)| f).collect();
        let warned = plain.iter().any(|f| f.key.starts_with("fruitless:"));
        prop_assert_eq!(warned, longest >= 6, "{:?}", plain);
        let cut = cut.index(events.len());
        prop_assert_eq!(plain, through_bus_with_snapshot(&s, &events, cut));
    }

    #[test]
    fn verdicts_are_deterministic(events in arb_events(900)) {
        for s in configs() {
            prop_assert_eq!(run(boxed(&s), &events), run(boxed(&s), &events));
        }
    }
}
