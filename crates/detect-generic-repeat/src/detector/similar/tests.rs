//! The skeleton kept as text identifies a command exactly as its fingerprint does, and so
//! does a result's text kept for its exact identity.

use super::{call_words, rereads, RawResult, Skeleton, MAX_RAW_TEXT};

/// A call's skeleton ([`call_words`]).
fn skeleton(args: &serde_json::Value) -> Option<Skeleton> {
    call_words(args).0
}
use loopguard_core::{result_fingerprint, Fingerprint};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The skeleton's fingerprint as it is defined: the SHA-256 of the kept words joined by
/// single spaces.
fn reference(args: &Value) -> Option<Fingerprint> {
    let cmd = loopguard_core::shape::command(args)?;
    let cmd = cmd.get(..cmd.len().min(2000)).unwrap_or(cmd);
    let words: Vec<&str> = cmd
        .split_whitespace()
        .filter(|w| {
            let w = w.trim_start_matches(['"', '\'']);
            !(w.starts_with('/')
                || w.starts_with("./")
                || w.starts_with("../")
                || w.starts_with("~/"))
        })
        .collect();
    Some(Fingerprint::combine(&[
        b"skeleton",
        words.join(" ").as_bytes(),
    ]))
}

/// Commands of words that are paths, quoted paths and plain words, spaced by runs of
/// whitespace; some long enough for the 2000-byte cut (which may fall inside a character).
fn command() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("find".to_owned()),
        Just("-name".to_owned()),
        Just("é".to_owned()),
        "[a-c]{1,3}",
        "[\"']?(/|\\./|\\.\\./|~/|\\.)[a-c/]{0,3}",
    ];
    let space = prop_oneof![
        Just(" "),
        Just("  "),
        Just("\t"),
        Just("\n"),
        Just(" \u{3000}")
    ];
    (
        prop::collection::vec((word, space), 0..12),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(|(words, long, pad)| {
            let mut s: String = words.into_iter().map(|(w, sp)| w + sp).collect();
            if long {
                // Past the cut, a word on each side of it, or a character across it.
                s = format!("{}{}{s}", "x".repeat(1998 + pad), "é ");
            }
            s
        })
}

fn json_of(s: &Skeleton) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

proptest! {
    /// The text's fingerprint is the defined one, and two skeletons are equal exactly when
    /// their fingerprints are, whether held as text or restored from a snapshot.
    #[test]
    fn text_identifies_as_the_fingerprint_does(a in command(), b in command()) {
        let (aa, ab) = (json!({"command": a}), json!({"command": b}));
        let (sa, sb) = (skeleton(&aa), skeleton(&ab));
        let (ra, rb) = (reference(&aa), reference(&ab));
        prop_assert_eq!(sa.as_ref().map(Skeleton::fingerprint), ra);
        prop_assert_eq!(sb.as_ref().map(Skeleton::fingerprint), rb);
        prop_assert_eq!(sa == sb, ra == rb);
        let (Some(sa), Some(sb)) = (sa, sb) else {
            return Err(TestCaseError::fail("a command has a skeleton"));
        };
        // A snapshot holds the fingerprint; a restored skeleton compares as before.
        let restored: Skeleton = serde_json::from_str(&json_of(&sa))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(json_of(&sa), serde_json::to_string(&ra).unwrap_or_default());
        prop_assert_eq!(restored == sb, ra == rb);
        prop_assert_eq!(sb == restored, ra == rb);
        prop_assert!(restored == sa);
    }
}

proptest! {
    /// A result's identity kept as text tells results apart exactly as their fingerprints
    /// do, serialises as the fingerprint and the sketch of its lines, and compares as before
    /// once restored (its lines too); a text longer than the copy limit is kept hashed, and a
    /// reused buffer holds the new text.
    #[test]
    fn raw_results_identify_as_their_fingerprints_do(
        a in "[ab\u{e9}\n]{0,12}",
        b in "[ab\u{e9}\n]{0,12}",
        (ia, ib) in (0u32..2, 0u32..2),
        long in any::<bool>(),
    ) {
        let a = if long { format!("{a}{}", "x".repeat(MAX_RAW_TEXT + 1)) } else { a };
        let kept = RawResult::of(&a, ia, Some(RawResult::of("old text", 3, None)));
        prop_assert_eq!(matches!(kept, RawResult::Hashed { .. }), long);
        let (fa, fb) = (result_fingerprint(&a, ia), result_fingerprint(&b, ib));
        prop_assert_eq!(kept.fingerprint(), fa);
        prop_assert!(kept.is(&a, ia));
        prop_assert_eq!(kept.is(&b, ib), fa == fb);
        let json = serde_json::to_string(&kept).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let written = json!({"fp": fa, "lines": kept.lines()});
        prop_assert_eq!(&json, &written.to_string());
        let restored: RawResult =
            serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(restored.is(&a, ia));
        prop_assert_eq!(restored.is(&b, ib), fa == fb);
        prop_assert_eq!(restored.lines(), kept.lines());
        prop_assert_eq!(rereads(&restored, &b), rereads(&kept, &b));
    }
}

/// A snapshot written when only the fingerprint was kept still restores, with no lines.
#[test]
fn a_bare_fingerprint_restores_without_lines() {
    let fp = result_fingerprint("a\nb\nc\nd", 0);
    let json = serde_json::to_string(&fp).unwrap_or_default();
    let restored: RawResult = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    assert!(restored.is("a\nb\nc\nd", 0));
    assert_eq!(restored.lines(), None);
}

#[test]
fn paths_are_left_out_and_words_kept() {
    let a = skeleton(&json!({"command": "find /usr/lib -name '*.so'"}));
    let b = skeleton(&json!({"cmd": "find  \"/opt\"\t-name '*.so'"}));
    assert!(a.is_some() && a == b);
    let c = skeleton(&json!({"command": "find /usr/lib -name '*.a'"}));
    assert_ne!(a, c);
    assert_eq!(skeleton(&json!({"path": "/usr"})), None);
    assert_eq!(
        skeleton(&json!({"command": "ls ./src ../x ~/y"})),
        Some(Skeleton::Text("ls".to_owned()))
    );
}

/// Whether the answer `now` rereads the answer `before` ([`super::rereads`]).
fn rereads_text(before: &str, now: &str) -> bool {
    rereads(&RawResult::of(before, 0, None), now)
}

/// The frame's hash of `args`.
fn frame(args: &Value) -> u64 {
    super::frame(args).0
}

/// Lines `from..to` (1-based, inclusive) of `lines`, as `sed -n 'FROM,TOp'` prints them.
fn window(lines: &[String], from: usize, to: usize) -> String {
    lines[from - 1..to]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_window_moved_by_a_few_lines_rereads_its_text() {
    let lines = loopguard_testkit::texts::settings_module_lines();
    let at = |from: usize| window(&lines, from, from + 40);
    for (a, b) in [(98, 101), (101, 98), (98, 98), (100, 110)] {
        assert!(rereads_text(&at(a), &at(b)), "{a} then {b}");
    }
    // A page that starts where the last one ended, or half way through it, is another.
    for (a, b) in [(98, 139), (98, 120)] {
        assert!(!rereads_text(&at(a), &at(b)), "{a} then {b}");
    }
}

#[test]
fn the_next_page_of_a_repetitive_text_reads_other_runs_of_lines() {
    let lines = loopguard_testkit::texts::getter_doc_lines();
    assert!(lines.len() > 300);
    for from in (1..lines.len() - 160).step_by(80) {
        let (a, b) = (
            window(&lines, from, from + 79),
            window(&lines, from + 80, from + 159),
        );
        assert!(!rereads_text(&a, &b), "pages at {from}");
        assert!(
            rereads_text(&a, &window(&lines, from + 3, from + 82)),
            "window at {from}"
        );
    }
}

#[test]
fn short_or_long_answers_are_not_compared() {
    let three = "a = 1\nb = 2\nc = 3\n";
    assert!(!rereads_text(three, three));
    let four = "a = 1\nb = 2\nc = 3\nd = 4\n";
    assert!(rereads_text(four, four));
    // Blank lines and indentation do not count.
    assert!(rereads_text(four, "  a = 1\n\nb = 2\n\tc = 3\n\n d = 4"));
    let long = four.repeat(MAX_RAW_TEXT / four.len() + 1);
    assert!(!rereads_text(&long, &long));
}

#[test]
fn a_frame_leaves_out_numbers_and_keeps_names() {
    let cmd = |c: &str| frame(&json!({ "command": c }));
    assert_eq!(
        cmd("sed -n '98,138p' src/config.py"),
        cmd("sed -n '101,141p' src/config.py")
    );
    assert_eq!(cmd("tail -n 50 build.log"), cmd("tail  -n 80\tbuild.log"));
    let read = |offset: u64| {
        frame(&json!({"file_path": "/repo/src/config.py", "offset": offset, "limit": 40}))
    };
    assert_eq!(read(98), read(120));
    // Numbered objects: a path, a word holding digits among letters.
    assert_ne!(cmd("cat runs/3/log.txt"), cmd("cat runs/4/log.txt"));
    assert_ne!(cmd("cat seed_1.txt"), cmd("cat seed_2.txt"));
    assert_ne!(cmd("ls run7"), cmd("ls run8"));
    assert_ne!(
        cmd("git show HEAD~2:src/config.py"),
        cmd("git show HEAD~3:src/config.py")
    );
    // Other words, another file, another key.
    assert_ne!(
        cmd("sed -n '98,138p' src/config.py"),
        cmd("sed -n '98,138p' src/cache.py")
    );
    assert_ne!(cmd("head -n 40 notes.txt"), cmd("tail -n 40 notes.txt"));
    assert_ne!(frame(&json!({"offset": 1})), frame(&json!({"limit": 1})));
}

#[test]
fn a_frame_keeps_the_first_numbers_in_order() {
    let numbers = |args: Value| super::frame(&args).1.as_slice().to_vec();
    assert_eq!(
        numbers(json!({"command": "sed -n '98,138p' src/a.py"})),
        [98, 138]
    );
    assert_eq!(
        numbers(json!({"file_path": "/srv/a.py", "offset": 120, "limit": -30})),
        [120, 30]
    );
    // Names keep their digits and give none; a path gives none.
    assert!(numbers(json!({"command": "cat runs/3/seed_1.txt"})).is_empty());
    assert_eq!(
        numbers(json!({"command": "x 1 2 3 4 5 6 7 8"})),
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        numbers(json!({"command": "head -c 99999999999999999999999"})),
        [u64::MAX]
    );
}

#[test]
fn numbers_move_on_from_their_second_move_one_way_and_never_after_coming_back() {
    let mut t = loopguard_core::shape::Trend::new();
    let at = |from: u64| {
        super::frame(&json!({"command": format!("sed -n '{from},{}p' a.py", from + 40)})).1
    };
    assert!(!t.step_onward(at(100).as_slice()), "the first call");
    assert!(!t.step_onward(at(100).as_slice()), "no move");
    assert!(!t.step_onward(at(106).as_slice()), "a first move");
    assert!(t.step_onward(at(112).as_slice()));
    assert!(t.step_onward(at(112 + 6).as_slice()));
    assert!(!t.step_onward(at(112).as_slice()), "back");
    assert!(!t.step_onward(at(118).as_slice()), "after coming back");
    // Another count of numbers starts over.
    assert!(!t.step_onward(
        super::frame(&json!({"command": "sed -n 5p a.py"}))
            .1
            .as_slice()
    ));
    assert!(!t.step_onward(
        super::frame(&json!({"command": "sed -n 6p a.py"}))
            .1
            .as_slice()
    ));
    assert!(t.step_onward(
        super::frame(&json!({"command": "sed -n 7p a.py"}))
            .1
            .as_slice()
    ));
}

proptest! {
    /// Changing the numbers of a call changes nothing of its frame; changing a digit of a
    /// path it names, or a word, does.
    #[test]
    fn numbers_are_one_mark_whatever_their_value(
        (a, b, c, d) in (0u32..100_000, 0u32..100_000, 0u32..100_000, 0u32..100_000),
        suffix in "[pk]?",
        name in "[a-z]{1,8}",
    ) {
        let sed = |x: u32, y: u32| frame(&json!({
            "command": format!("sed -n '{x},{y}{suffix}' src/{name}.py | head -n {x}"),
            "timeout": y,
        }));
        prop_assert_eq!(sed(a, b), sed(c, d));
        let path = |x: u32| frame(&json!({ "command": format!("cat out/{x}/{name}.txt") }));
        prop_assert_eq!(path(a) == path(c), a == c);
        let word = |w: &str| frame(&json!({ "command": format!("grep -n {w} src/{name}.py") }));
        prop_assert_eq!(word(&format!("{name}{a}")) == word(&format!("{name}{c}")), a == c);
    }
}

mod block {
    use crate::testutil::{criticals, det, rejected, run, warnings, Level, Script};
    use proptest::prelude::*;
    use serde_json::json;

    /// Only the similar-calls rule, warning on the 3rd alike call, blocking the 5th.
    const RULE: &str = "streak = false\nbatch-streak = false\n\
        similar-calls = { warning-threshold = 3, empty-warning-threshold = 3, critical-threshold = 5 }";

    /// `n` calls of `grep -n X notes.txt` spelled in turn with and without quotes, each
    /// answered `result`.
    fn respelled(n: usize, result: &str) -> Script {
        let mut s = Script::new();
        for k in 0..n {
            let cmd = if k % 2 == 0 {
                "grep -n 'frame' notes.txt"
            } else {
                "grep -n \"frame\" notes.txt"
            };
            s.call("bash", json!({ "command": cmd }), result);
        }
        s
    }

    #[test]
    fn the_critical_threshold_is_checked() {
        rejected(
            "similar-calls = { warning-threshold = 6, critical-threshold = 6 }",
            "similar-calls.critical-threshold",
        );
        rejected(
            "similar-calls = { warning-threshold = 6, critical-threshold = 4 }",
            "similar-calls.critical-threshold",
        );
        // 0 never blocks, and is the default.
        for rule in [
            "streak = false\nsimilar-calls = { warning-threshold = 3, critical-threshold = 0 }",
            "streak = false\nsimilar-calls = { warning-threshold = 3 }",
        ] {
            let f = run(det(rule), respelled(20, "3:frame 12").events());
            assert!(!warnings(&f).is_empty(), "{rule}");
            assert!(criticals(&f).is_empty(), "{rule}: {f:#?}");
        }
    }

    #[test]
    fn the_reread_window_holds_at_least_the_threshold_and_at_most_64() {
        rejected(
            "rereads = { warning-threshold = 4, window = 3 }",
            "rereads.window",
        );
        rejected("rereads = { window = 65 }", "rereads.window");
        rejected(
            "rereads = { warning-threshold = 2 }",
            "rereads.warning-threshold",
        );
        let mut s = Script::new();
        for k in 0..6 {
            s.call(
                "read",
                json!({ "path": "/srv/app/config.yaml" }),
                "port: 8080\nworkers: 4\n",
            );
            s.call(
                "grep",
                json!({ "pattern": format!("worker_{k}") }),
                "src/pool.rs:12: worker",
            );
        }
        let on = run(
            det("rereads = { warning-threshold = 3, window = 6 }"),
            s.events(),
        );
        assert!(
            on.iter().any(|(_, f)| f.key.starts_with("reread:")),
            "{on:#?}"
        );
        // Three reads, one every other look, span five looks: a window of four holds two.
        let narrow = run(
            det("rereads = { warning-threshold = 3, window = 4 }"),
            s.events(),
        );
        assert!(
            narrow.iter().all(|(_, f)| !f.key.starts_with("reread:")),
            "{narrow:#?}"
        );
        // Off, its keys are still checked.
        rejected(
            "rereads = { enabled = false, window = 65 }",
            "rereads.window",
        );
        let off = run(det("rereads = { enabled = false }"), s.events());
        assert!(
            off.iter().all(|(_, f)| !f.key.starts_with("reread:")),
            "{off:#?}"
        );
    }

    #[test]
    fn the_fruitless_threshold_is_checked_and_0_turns_the_rule_off() {
        rejected(
            "similar-calls = { fruitless-warning-threshold = 3 }",
            "similar-calls.fruitless-warning-threshold",
        );
        let mut s = Script::new();
        for (k, term) in [
            "def load_plugin_index",
            "load_plugin_index(",
            "load_plugin_index",
        ]
        .iter()
        .cycle()
        .take(8)
        .enumerate()
        {
            let cmd = format!(
                "grep -rn{} '{term}' src/",
                if k % 2 == 0 { "" } else { "i" }
            );
            s.call("bash", json!({ "command": cmd }), "");
        }
        let on = run(
            det("similar-calls = { fruitless-warning-threshold = 4 }"),
            s.events(),
        );
        assert!(
            on.iter().any(|(_, f)| f.key.starts_with("fruitless:")),
            "{on:#?}"
        );
        let off = run(
            det("similar-calls = { fruitless-warning-threshold = 0 }"),
            s.events(),
        );
        assert!(
            off.iter().all(|(_, f)| !f.key.starts_with("fruitless:")),
            "{off:#?}"
        );
    }

    #[test]
    fn a_warned_streak_blocks_its_alike_call_at_the_threshold_and_after() {
        let s = respelled(7, "3:frame 12\n9:frame rate");
        let f = run(det(RULE), s.events());
        // Each call is a message start, the call, the message end and the result: the
        // warning comes with the 3rd result, the blocks at the 5th, 6th and 7th calls.
        let calls: Vec<usize> = s
            .events()
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, loopguard_core::OwnedEvent::ToolCall { .. }))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(warnings(&f).len(), 1, "{f:#?}");
        assert!(warnings(&f)[0] < calls[3]);
        // The script feeds every result to the detector (no guard refuses the blocked
        // calls), so the streak grows on and each later alike call is refused too.
        assert_eq!(criticals(&f), calls[4..].to_vec(), "{f:#?}");
        assert!(f.iter().all(|(_, f)| f.level != Level::Fatal));
    }

    #[test]
    fn an_unlike_call_or_an_empty_streak_is_not_blocked() {
        // The streak reached the threshold; then another command.
        let mut s = respelled(5, "3:frame 12");
        s.call(
            "bash",
            json!({ "command": "python3 -m pytest tests/test_frames.py -q" }),
            "1 passed",
        );
        let f = run(det(RULE), s.events());
        let last_call = s.events().len() - 2;
        assert!(!criticals(&f).contains(&last_call), "{f:#?}");
        // Nothing found, again and again: warned, never blocked.
        let f = run(det(RULE), respelled(12, "").events());
        assert!(!warnings(&f).is_empty());
        assert!(criticals(&f).is_empty(), "{f:#?}");
    }

    proptest! {
        /// A block of the similar-calls rule always follows its warning, and comes no
        /// earlier than the critical threshold's alike call.
        #[test]
        fn a_block_follows_the_warning(
            picks in prop::collection::vec((0usize..4, 0usize..3), 1..40),
        ) {
            let cmds = [
                "grep -n 'frame' notes.txt",
                "grep -n \"frame\" notes.txt",
                "grep -n frame notes.txt",
                "ls -la build",
            ];
            let results = ["3:frame 12", "", "total 0"];
            let mut s = Script::new();
            for (c, r) in picks {
                s.call("bash", json!({ "command": cmds[c] }), results[r]);
            }
            let f = run(det(RULE), s.events());
            let first_warning = f
                .iter()
                .filter(|(_, f)| f.key.starts_with("similar:") && f.level == Level::Warning)
                .map(|(i, _)| *i)
                .next();
            for (i, x) in f.iter().filter(|(_, f)| f.key.starts_with("similar:")) {
                if x.level == Level::Critical {
                    prop_assert!(first_warning.is_some_and(|w| w < *i), "{f:#?}");
                    prop_assert!(x.count >= 5);
                }
            }
        }
    }
}
