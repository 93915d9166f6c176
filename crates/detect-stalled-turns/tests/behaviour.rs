//! Behaviour of `stalled-turns` with its default settings, and the complaints it answers.
#![allow(clippy::unwrap_used)]

use loopguard_core::{Config, Detector, Level, Origin, Registry, Stream};
use loopguard_detect_stalled_turns::{Settings, StalledTurns, REGISTRATION};
use loopguard_testkit::{only_finding, run, Script};
use serde_json::json;

const NUDGE: &str =
    "No tool calls found in the response. Every response MUST include at least one tool call.";

fn det() -> Box<dyn Detector> {
    Box::new(StalledTurns::new(Settings::default()))
}

fn with(toml: &str) -> Box<dyn Detector> {
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    let c = Config::from_toml_str(&format!("[detectors.stalled-turns]\n{toml}"), None).unwrap();
    registry.build(&c).unwrap().remove(0)
}

fn task(s: &mut Script) {
    s.user("Fix the failing test in recorder.py");
    s.call(
        "bash",
        json!({"command": "python -m py_compile recorder.py"}),
        "compile ok",
    );
}

#[test]
fn third_identical_nudge_warns_and_tenth_aborts() {
    let mut s = Script::new();
    task(&mut s);
    let base = s.events().len();
    s.repeat_user(12, NUDGE);
    let f = run(det(), s.events());
    let levels: Vec<(usize, Level, u32)> = f
        .iter()
        .map(|(i, f)| (*i - base, f.level, f.count))
        .collect();
    assert_eq!(
        levels,
        vec![
            (2, Level::Warning, 3),
            (9, Level::Fatal, 10),
            (10, Level::Fatal, 11),
            (11, Level::Fatal, 12)
        ]
    );
    let warn = &f[0].1;
    assert_eq!(warn.detector, "stalled-turns");
    assert!(warn.message.starts_with("WARNING: "), "{}", warn.message);
    assert!(
        warn.message.contains("No tool calls found"),
        "{}",
        warn.message
    );
    assert_eq!(warn.evidence.len(), 3);
    assert_eq!(warn.evidence[0], base as u64);
    assert!(warn.sample.is_some());
    assert!(f[1].1.message.starts_with("CRITICAL: "));
    assert_eq!(
        f[1].1.code, None,
        "the orchestrator names the abort loop_aborted:stalled-turns"
    );
}

#[test]
fn two_identical_nudges_are_not_a_stall() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.call("bash", json!({"command": "ls"}), "a.py");
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_tool_call_between_nudges_resets_the_count() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.message("");
    let id = s.tool_call("bash", json!({"command": "ls"}));
    s.user(NUDGE);
    s.tool_result(&id, "bash", "x", false);
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn short_stall_then_resume_gets_one_warning_and_no_critical() {
    // The corpus's "unsure" shape: 3-5 reminders, then the agent resumes.
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(5, NUDGE);
    s.call("bash", json!({"command": "git diff"}), "diff");
    assert_eq!(only_finding(&run(det(), s.events())).level, Level::Warning);
}

#[test]
fn live_host_with_empty_replies_between_nudges() {
    let mut s = Script::new();
    task(&mut s);
    for _ in 0..4 {
        s.message("");
        s.user(NUDGE);
    }
    let f = run(det(), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.level, Level::Warning);
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn repeated_identical_replies_without_tools_warn() {
    // A host that just re-prompts with "continue" once, then the model keeps saying the same.
    let mut s = Script::new();
    s.user("Refactor the parser");
    s.message("I will now refactor the parser.");
    s.run_end();
    s.message("I will now refactor the parser.");
    s.run_end();
    s.message("I  will now refactor\nthe parser.");
    s.run_end();
    let f = run(det(), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].1.key.starts_with("stalled-turns:reply:"));
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn empty_replies_count_with_assistant_side_only() {
    let mut s = Script::new();
    s.user("go");
    for _ in 0..3 {
        s.message("");
    }
    s.message("next");
    let f = run(with("count-nudges = false\n"), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn replies_with_tool_calls_are_not_stalled() {
    let mut s = Script::new();
    s.user("go");
    for _ in 0..6 {
        s.message("Let me check.");
        let id = s.tool_call("read", json!({"path": "a"}));
        s.tool_result(&id, "read", "x", false);
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn tool_call_inside_the_message_counts_as_activity() {
    let mut s = Script::new();
    s.user("go");
    for _ in 0..4 {
        s.push(loopguard_core::OwnedEvent::MessageStart);
        s.tool_call("read", json!({"path": "a"}));
        s.push(loopguard_core::OwnedEvent::MessageEnd);
    }
    s.run_end();
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn reasoning_only_replies_with_new_reasoning_are_not_stalled() {
    // OpenHands SDK #2482: extended-thinking models produce reasoning-only replies.
    let mut s = Script::new();
    s.user("solve the puzzle");
    for i in 0..6 {
        s.message_chunked(
            Stream::Thinking,
            &format!("Step {i}: consider case {i} of the puzzle."),
            7,
        );
        s.run_end();
    }
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn identical_reasoning_only_replies_are_stalled() {
    let mut s = Script::new();
    s.user("solve the puzzle");
    for _ in 0..3 {
        s.message_chunked(Stream::Thinking, "Hmm, let me think about this again.", 5);
        s.run_end();
    }
    assert_eq!(run(det(), s.events()).len(), 1);
}

#[test]
fn final_answers_between_new_user_turns_are_not_stalled() {
    let mut s = Script::new();
    for q in ["hi", "what is 2+2?", "thanks", "bye"] {
        s.user(q);
        s.message("");
    }
    s.user("one more");
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn the_guards_own_steer_neither_counts_nor_resets() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.user_from("Stop answering without tools.", Origin::Guard);
    s.user(NUDGE);
    let f = run(det(), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.count, 3);
}

#[test]
fn a_person_speaking_ends_the_stall() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.user_from(NUDGE, Origin::Human);
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn a_repeated_harness_message_is_not_a_fresh_turn() {
    // The bus does not advance the turn for a word-for-word repeat, so budgets are not reset.
    let mut bus = loopguard_core::Bus::new(vec![det()]);
    bus.observe(&loopguard_core::Event::User {
        text: "task",
        origin: Origin::Unknown,
    });
    let t = bus.turn();
    bus.observe(&loopguard_core::Event::User {
        text: NUDGE,
        origin: Origin::Unknown,
    });
    for _ in 0..5 {
        bus.observe(&loopguard_core::Event::User {
            text: NUDGE,
            origin: Origin::Unknown,
        });
    }
    assert_eq!(bus.turn(), t + 1);
}

#[test]
fn a_different_nudge_starts_a_new_count() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE).user(NUDGE);
    s.user("Please format your answer as a single bash block.");
    s.user(NUDGE).user(NUDGE);
    assert!(run(det(), s.events()).is_empty());
}

#[test]
fn whitespace_around_the_nudge_does_not_matter() {
    let mut s = Script::new();
    task(&mut s);
    s.user(NUDGE)
        .user(&format!("{NUDGE}\n"))
        .user(&format!("  {NUDGE}"));
    assert_eq!(run(det(), s.events()).len(), 1);
}

#[test]
fn thresholds_are_configurable_and_validated() {
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(5, NUDGE);
    let f = run(
        with("warning-threshold = 2\ncritical-threshold = 4\n"),
        s.events(),
    );
    let levels: Vec<Level> = f.iter().map(|(_, f)| f.level).collect();
    assert_eq!(levels, vec![Level::Warning, Level::Fatal, Level::Fatal]);
    let registry = Registry::from_entries([&REGISTRATION]).unwrap();
    for (bad, path) in [
        ("warning-threshold = 0", "warning-threshold"),
        ("critical-threshold = -3", "critical-threshold"),
        ("warning-threshold = 1.5", "warning-threshold"),
        (
            "warning-threshold = 10\ncritical-threshold = 10",
            "critical-threshold",
        ),
        ("warning-threshold = 12", "critical-threshold"),
        ("count-nudges = 1", "count-nudges"),
        ("fresh-reply-words = -1", "fresh-reply-words"),
        ("fresh-reply-words = 2000000", "fresh-reply-words"),
    ] {
        let c =
            Config::from_toml_str(&format!("[detectors.stalled-turns]\n{bad}\n"), None).unwrap();
        let err = registry.build(&c).unwrap_err();
        assert_eq!(
            err.path(),
            Some(format!("detectors.stalled-turns.{path}").as_str()),
            "{bad}: {err}"
        );
    }
    let c =
        Config::from_toml_str("[detectors.stalled-turns]\nwarning-threshold = 12\n", None).unwrap();
    let err = registry.build(&c).unwrap_err();
    assert!(
        err.to_string()
            .contains("must be lower than critical-threshold"),
        "{err}"
    );
    let c = Config::from_toml_str("[detectors.stalled-turns]\nwarn = 2\n", None).unwrap();
    assert!(registry
        .build(&c)
        .unwrap_err()
        .to_string()
        .contains("unknown field"));
    let c = Config::from_toml_str("[detectors.stalled-turns]\nenabled = false\n", None).unwrap();
    assert!(registry.build(&c).unwrap().is_empty());
}

#[test]
fn nudge_counting_can_be_turned_off() {
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(12, NUDGE);
    assert!(run(with("count-nudges = false\n"), s.events()).is_empty());
}

#[test]
fn each_stall_run_has_its_own_key() {
    // Two separate stalls in one turn are two loops: a host that de-duplicates warnings per
    // key must still hear about the second one.
    let mut s = Script::new();
    task(&mut s);
    s.repeat_user(3, NUDGE);
    s.call("bash", serde_json::json!({"command": "ls"}), "a.py");
    s.repeat_user(3, NUDGE);
    let f = run(det(), s.events());
    assert_eq!(f.len(), 2, "{f:?}");
    assert_ne!(f[0].1.key, f[1].1.key);
}

/// Four parts of a story a user asks for with "continue", each with words the others lack.
const STORY: [&str; 5] = [
    "The lighthouse keeper woke before dawn, climbed the spiral stairs and wound the great \
     clockwork that turned the lamp. Fog had rolled in from the harbour overnight, thick \
     enough to swallow the breakwater, and somewhere beyond it a fishing boat sounded its horn.",
    "Down on the quay, Mara untied the skiff her grandfather had built from larch planks. She \
     rowed toward the horn with a lantern hung from the bow, counting strokes aloud so she \
     would know how far she had come when the shore vanished behind her.",
    "The trawler had struck the shoal below the cliffs. Its crew clung to the wheelhouse roof \
     while waves broke over the deck, and the skipper, a stubborn man named Aldous, refused \
     to leave until every net and crate was lashed down against the tide.",
    "Mara threw a rope across the gap and shouted instructions through the spray. One by one \
     the sailors slid into the skiff, soaked and shivering, and she turned back toward the \
     beam of light that swept the water every eleven seconds, steady as a heartbeat.",
    "By noon the fog lifted. The village gathered at the harbour wall, blankets and hot \
     soup passed from hand to hand, and the keeper wrote in his logbook that the lamp had \
     burned without fault through the longest night of the winter.",
];

#[test]
fn continue_while_a_story_is_written_is_no_stall() {
    // A chat host that does not mark who speaks: the user says "continue" after each part,
    // the model writes the next one. Each part answers the message before it.
    let mut s = Script::new();
    s.user("Write a short story about a lighthouse, one part at a time.");
    for part in STORY {
        s.message(part);
        s.user("continue");
    }
    assert!(run(det(), s.events()).is_empty());
    // Without the rule (`fresh-reply-words = 0`), the third "continue" is the third nudge.
    let f = run(with("fresh-reply-words = 0\n"), s.events());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].1.level, Level::Warning);
}

/// A generated table of a Rust crate, as its file reads: a header, then rows of a few hex
/// values (a text of few words, repeated).
fn generated_table(rows: usize) -> String {
    let mut t = String::from(
        "// This file is generated by `cargo run -p generate`. Do not edit.\n\n\
         pub static WIDTHS: [u8; 8192] = [\n",
    );
    for i in 0..rows {
        let v = ["0x00", "0x01", "0x02", "0x55", "0xAA", "0xFF"][(i * 7 / 5) % 6];
        t.push_str(&format!(
            "    {v}, {v}, {v}, {v}, 0x00, 0x00, 0x00, 0x00, {v}, {v}, {v}, {v},\n"
        ));
    }
    t.push_str("];\n");
    t
}

#[test]
fn continue_after_an_answer_cut_by_the_output_limit_is_no_stall() {
    // A chat host that does not mark who speaks: the answer, a file of few words, is cut
    // every 2,000 characters by the model's output limit, inside a line, and the user says
    // "continue" each time. Each part is the rest of the text, not a stalled reply.
    let table = generated_table(400);
    let parts: Vec<&str> = table
        .as_bytes()
        .chunks(2000)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    assert!(parts.len() >= 8);
    let mut s = Script::new();
    s.user("Show me src/tables.rs.");
    for part in &parts {
        s.message(part);
        s.user("continue");
    }
    let found = run(det(), s.events());
    assert!(found.is_empty(), "{found:?}");
    // The same parts ending their last lines bring no new words after the first ones: the
    // third "continue" is the third nudge, as before.
    let mut s = Script::new();
    s.user("Show me src/tables.rs.");
    for part in &parts {
        let whole = match part.rfind('\n') {
            Some(i) => &part[..=i],
            None => part,
        };
        s.message(whole);
        s.user("continue");
    }
    let found = run(det(), s.events());
    assert!(!found.is_empty(), "whole parts of few words still stall");
    // And a harness repeating "continue" to a model that repeats one cut reply stalls.
    let mut s = Script::new();
    s.user("Show me src/tables.rs.");
    for _ in 0..12 {
        s.message(parts[1]);
        s.user("continue");
    }
    let found = run(det(), s.events());
    assert!(
        found.iter().any(|(_, f)| f.level >= Level::Critical),
        "{found:?}"
    );
}

#[test]
fn numbered_requests_answered_each_are_no_stall() {
    // "Write part 3" after "part 2": the same message with its numbers aside, answered each
    // time with a part of new words.
    let mut s = Script::new();
    for (i, part) in STORY.iter().enumerate() {
        s.user(&format!("Write part {} of the lighthouse story.", i + 1));
        s.message(part);
    }
    assert!(run(with("mask-numbers = true\n"), s.events()).is_empty());
    // Without the rule, the third request is the third nudge.
    let f = run(
        with("mask-numbers = true\nfresh-reply-words = 0\n"),
        s.events(),
    );
    assert_eq!(f.len(), 1, "{f:?}");
}

#[test]
fn a_nudge_answered_by_the_same_few_replies_still_stalls() {
    // A model that cycles between two short replies adds no new words after the first two:
    // the harness's word-for-word nudge still counts, to the abort.
    let mut s = Script::new();
    task(&mut s);
    let replies = [
        "THOUGHT: I will edit line 13 of src/parse.py to split only once, then run the test.",
        "THOUGHT: The split should use maxsplit=1 so the value keeps its colons.",
    ];
    for i in 0..12 {
        s.user(NUDGE);
        s.message(replies[i % 2]);
    }
    let f = run(det(), s.events());
    assert!(
        f.iter()
            .any(|(_, f)| f.level == Level::Fatal && f.key.starts_with("stalled-turns:nudge:")),
        "{f:?}"
    );
}

#[test]
fn a_counter_nudge_answered_by_one_reply_still_stalls() {
    // The same nudge with its numbers aside, the same reply each time: nothing was answered.
    let mut s = Script::new();
    task(&mut s);
    for i in 0..12 {
        s.user(&format!("Step {i}: no tool call found. Call a tool."));
        s.message("I will run the tests now.");
    }
    let f = run(with("mask-numbers = true\n"), s.events());
    assert!(f.iter().any(|(_, f)| f.level == Level::Fatal), "{f:?}");
}

/// The single-byte table of an 8-bit encoding as Tcl's `encoding/*.enc` files write it: the
/// first half (ASCII) is the same in every file, the second half differs in a few rows.
fn encoding_table(name: &str, variant: usize) -> String {
    let mut t = format!("# Encoding file: {name}, single-byte\nS\n003F 0 1\n00\n");
    for row in 0..16usize {
        for col in 0..16usize {
            let code = if row < 8 {
                row * 16 + col
            } else {
                0x0400 + (row * 16 + col + variant) % 0x60
            };
            t.push_str(&format!("{code:04X}"));
        }
        t.push('\n');
    }
    t
}

/// With numbers masked, the requests of `s` were each answered: no finding. Without the rule
/// that reads the replies (`fresh-reply-words = 0` turns it off), the tenth request aborts.
fn answered_each_time(s: &Script) {
    assert!(run(with("mask-numbers = true\n"), s.events()).is_empty());
    let f = run(
        with("mask-numbers = true\nfresh-reply-words = 0\n"),
        s.events(),
    );
    assert!(f.iter().any(|(_, f)| f.level == Level::Fatal), "{f:?}");
}

#[test]
fn numbered_files_answered_with_their_own_names_are_no_stall() {
    // "Show me iso8859-2.enc." after "… iso8859-1.enc.": the requests differ only in their
    // numbers and the tables share their words and most rows, but each answer names the file
    // asked for (`iso8859-2`): each request was answered.
    let mut s = Script::new();
    for i in 1..=14 {
        s.user(&format!(
            "Show me /usr/share/tcltk/tcl8.6/encoding/iso8859-{i}.enc."
        ));
        s.message(&encoding_table(&format!("iso8859-{i}"), i % 3));
    }
    answered_each_time(&s);
}

#[test]
fn numbered_tables_answered_with_new_numbers_are_no_stall() {
    // Perl's `unicore/lib/Age/V11.pl`, `V12.pl` …: the same header and a list of code points
    // that is new in each file, but no word of the answer names the file.
    let header = "# !!!!!!!   DO NOT EDIT THIS FILE   !!!!!!!\n\
                  # This file is machine-generated by lib/unicore/mktables from the Unicode\n\
                  # database, Version 14.0.0.  Any changes made here will be lost!\n\n\
                  return <<'END';\nV576\n";
    let mut s = Script::new();
    for v in 11..25 {
        let points: String = (0..200)
            .map(|k| format!("{}\n", v * 7919 + k * 37))
            .collect();
        s.user(&format!(
            "Show me /usr/share/perl/5.36.0/unicore/lib/Age/V{v}.pl."
        ));
        s.message(&format!("{header}{points}END\n"));
    }
    answered_each_time(&s);
}

#[test]
fn a_counter_nudge_whose_count_the_reply_repeats_still_stalls() {
    // A bare number is a harness's counter, not a request: a reply that repeats it, with a
    // few other numbers that change, answers nothing.
    let mut s = Script::new();
    task(&mut s);
    for i in 0..12 {
        s.user(&format!("Step {i}: no tool call found. Call a tool."));
        s.message(&format!(
            "At step {i} I will run the tests in tests/test_{}.py now.",
            i % 3
        ));
    }
    let f = run(with("mask-numbers = true\n"), s.events());
    assert!(f.iter().any(|(_, f)| f.level == Level::Fatal), "{f:?}");
}

#[test]
fn a_reply_that_names_a_file_it_was_not_asked_for_answers_nothing() {
    // The harness's message names `job_3` after `job_2`; a reply that names `job_2` (the
    // one before) or `job_3x` (another name) did not take the new request up.
    let mut s = Script::new();
    task(&mut s);
    for i in 0usize..12 {
        s.user(&format!("Report the status of job_{i} with a tool call."));
        s.message(&format!(
            "The status of job_{} is unknown; job_{i}x is next.",
            i.saturating_sub(1)
        ));
    }
    let f = run(with("mask-numbers = true\n"), s.events());
    assert!(f.iter().any(|(_, f)| f.level == Level::Fatal), "{f:?}");
}

#[test]
fn a_message_that_differs_in_its_words_asks_nothing_anew() {
    // "Open cp1251.enc." after "Show me cp1250.enc." is another message, not the same one
    // with its number changed: a reply that names `cp1251` does not answer it anew, so its
    // word-for-word repeats that follow are counted from it, and the tenth aborts.
    let mut s = Script::new();
    task(&mut s);
    s.user("Show me cp1250.enc.");
    s.message("Here it is.");
    let mut at = Vec::new();
    for _ in 0..10 {
        s.user("Open cp1251.enc.");
        at.push(s.events().len() - 1);
        s.message("The cp1251 table is above.");
    }
    let f = run(with("mask-numbers = true\n"), s.events());
    let fatal = f
        .iter()
        .find(|(_, f)| f.level == Level::Fatal)
        .map(|(i, _)| *i);
    assert_eq!(fatal, at.last().copied(), "{f:?}");
}
