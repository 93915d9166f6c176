//! The default judges prose only: code, listings, tables, logs and template items are not
//! rewordings; the seed (pi-repetition-guard) keeps flagging them as it did.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use loopguard_core::{Finding, Stream};
use loopguard_detect_variation_loop::{is_prose, Settings, VariationLoop};
use loopguard_testkit::{run, texts, Script};

fn fire(settings: &Settings, stream: Stream, text: &str) -> Option<Finding> {
    let mut s = Script::new();
    s.message_chunked(stream, text, 16);
    let found = run(Box::new(VariationLoop::new(settings.clone())), s.events());
    found.into_iter().next().map(|(_, f)| f)
}

fn default_fires(text: &str) -> bool {
    fire(&Settings::default(), Stream::Text, text).is_some()
}

fn seed_fires(text: &str) -> bool {
    fire(&Settings::pi_repetition_guard(), Stream::Text, text).is_some()
}

#[test]
fn legitimate_repetitive_shapes_are_quiet_by_default() {
    for (name, text) in texts::repetitive_legitimate() {
        assert!(!default_fires(&text), "{name} fired");
    }
}

#[test]
fn no_line_of_the_code_shapes_is_judged_as_prose() {
    // Every line of these files is code or markup: none can join a cluster of "rewordings".
    for (name, text) in texts::repetitive_legitimate() {
        if name == "rules_and_indentation" {
            continue; // a status box and a config dump, judged as layout below
        }
        if texts::MIXES_PROSE.contains(&name) {
            // Among code and fields of other shapes their sentences are not a loop (checked
            // above).
            continue;
        }
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| l.chars().count() > 15)
        {
            assert!(!is_prose(line), "{name}: {line:?} read as prose");
        }
    }
}

#[test]
fn the_seed_keeps_its_false_positive_on_layout() {
    // pi-repetition-guard judges every short line, as the seed does, and flags the status
    // box and the indented dump; the default does not.
    let text = texts::rules_and_indentation();
    assert!(seed_fires(&text));
    assert!(!default_fires(&text));
}

#[test]
fn reworded_prose_loops_still_fire_in_text_and_thinking() {
    let t = texts::reworded_loop();
    assert!(default_fires(&t));
    assert!(fire(&Settings::default(), Stream::Thinking, &t).is_some());
}

#[test]
fn code_lines_are_not_prose() {
    for line in [
        "assert_sufficiently_different(a, b, 2);",
        "let b18 = _mm256_extract_epi8(v, 18) as u8;",
        "_mm256_extract_epi8(v, 18) as u8,",
        "impl PartialEq<str> for SmolStr {",
        "[[example]]",
        "name = \"area-chart\"",
        "const_random!(u64),",
        "<span class=\"star star--filled\" aria-hidden=\"true\">star</span>",
        "assert satask(Q.nonpositive(1)) is False",
        "from sympy.polys.densearith import dup_mul_term",
        "raises(ValueError, lambda: bode_plot(tf_a))",
        "// Returns the offset of the first byte after the header.",
        "# Returns the offset of the first byte after the header.",
        "self.assertRaises(TypeError, lambda: MagicMock() < MagicMock())",
        "LOAD_NAME                0 (x)",
        "TypeError: test.test_extcall.h() argument after ** must be a mapping",
        "Traceback (most recent call last):",
    ] {
        assert!(!is_prose(line), "{line:?} read as prose");
    }
}

#[test]
fn listings_tables_and_logs_are_not_prose() {
    for line in [
        "12. Run the migrations on the staging database",
        "12) Run the migrations on the staging database",
        "  12 | let total = items.iter().sum();",
        "12: let total = items.iter().sum();",
        "12→ let total = items.iter().sum();",
        "2024-05-01 12:00:03 starting worker pool with four threads",
        "INFO starting worker pool with four threads",
        "WARN: retrying the request after a timeout",
        "| timeout | integer | the request timeout |",
        "[2024-05-01] worker three finished its batch",
    ] {
        assert!(!is_prose(line), "{line:?} read as prose");
    }
}

#[test]
fn sentences_are_prose() {
    for line in [
        "Let me read the solve() signature end to see the return type.",
        "Let me read L1000-1035 to check the memo initialisation.",
        "OK, let me add the zigzag memo after the signature end.",
        "I will check `parse_header` once more before the next run.",
        "Now I need to look at the cache invalidation again.",
    ] {
        assert!(is_prose(line), "{line:?} not read as prose");
    }
}
