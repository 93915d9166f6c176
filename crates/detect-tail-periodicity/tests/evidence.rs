//! The default (evidence) rule: legitimate repetitive shapes stay quiet, runaways fire, and
//! the thresholds behave as documented.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use loopguard_core::{Finding, Stream};
use loopguard_detect_tail_periodicity::{
    measure_runs, Row, Rule, Settings, TailPeriodicity, CODE_TABLE, PROSE_TABLE,
};
use loopguard_testkit::{run, texts, Script};

fn fire_with(settings: &Settings, stream: Stream, text: &str) -> Option<Finding> {
    let mut s = Script::new();
    s.message_chunked(stream, text, 16);
    let found = run(Box::new(TailPeriodicity::new(settings.clone())), s.events());
    assert!(found.len() <= 1, "at most one finding per message");
    found.into_iter().next().map(|(_, f)| f)
}

fn fire(text: &str) -> Option<Finding> {
    fire_with(&Settings::default(), Stream::Text, text)
}

fn root_of(f: &Finding) -> usize {
    f.key.split('/').nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_default_rule_is_evidence() {
    assert_eq!(Settings::default().rule, Rule::Evidence);
    assert_eq!(Settings::pi_repetition_guard().rule, Rule::Copies);
}

#[test]
fn legitimate_repetitive_shapes_are_quiet() {
    for (name, text) in texts::repetitive_legitimate() {
        assert!(fire(&text).is_none(), "{name} fired: {:?}", fire(&text));
        // Inside a prose answer, in a fence, too.
        let quoted = format!("Here is the file:\n\n```\n{text}\n```\n\nIt compiles.");
        assert!(fire(&quoted).is_none(), "{name} (quoted) fired");
    }
}

#[test]
fn fits_string_of_65_x_is_quiet_but_a_long_run_of_one_character_fires() {
    assert!(fire(&texts::fits_card()).is_none());
    let runaway = format!("The value is {}", "x".repeat(3000));
    let f = fire(&runaway).expect("3,000 x characters fire");
    assert_eq!(root_of(&f), 1);
}

#[test]
fn repeating_decimal_and_state_table_are_quiet() {
    assert!(fire(&texts::repeating_decimal()).is_none());
    assert!(fire(&texts::state_table()).is_none());
}

#[test]
fn tiny_roots_count_by_span_never_by_copies() {
    // Root "ab": many copies, short span: quiet (span below every tiny-root threshold).
    let t = format!("The pattern is {} and nothing else.", "ab".repeat(100));
    assert!(fire(&t).is_none());
    let row = PROSE_TABLE[0];
    assert_eq!(row.copies, 0, "tiny roots have no copy threshold");
    // A span past the threshold fires whatever the copies.
    let long = format!("The pattern is {}", "ab".repeat(row.span as usize));
    assert!(fire(&long).is_some());
}

#[test]
fn a_chant_that_is_the_whole_answer_fires_early() {
    let f = fire(&"ny".repeat(33)).expect("an answer of nothing but 'ny' fires");
    assert_eq!(root_of(&f), 2);
    // After content, the same chant waits for the tiny-root span.
    assert!(fire(&format!("Sure, here it is: {}", "ny".repeat(33))).is_none());
    // chant-copies = 0 turns it off.
    let off = Settings {
        chant_copies: 0,
        ..Settings::default()
    };
    assert!(fire_with(&off, Stream::Text, &"ny".repeat(33)).is_none());
}

#[test]
fn code_gets_the_stricter_threshold_and_a_runaway_in_code_still_fires() {
    // 8 copies of a 40-character line: past the prose threshold, below the code one.
    let line = "    result.push(compute_offset(base));\n";
    let body = line.repeat(40);
    let prose_need = PROSE_TABLE[2].need(line.chars().count() as u64, 100);
    let code_need = CODE_TABLE[2].need(line.chars().count() as u64, 100);
    assert!(prose_need < code_need);
    let in_prose = format!(
        "I will now write the loop.\n{}",
        "I will now write the loop again, then check.\n".repeat(40)
    );
    assert!(fire(&in_prose).is_some(), "prose repetition fires");
    let few = format!("```rust\nfn f() {{\n{}}}\n```\n", line.repeat(6));
    assert!(
        fire(&few).is_none(),
        "six identical lines of code are quiet"
    );
    let runaway = format!("```rust\nfn f() {{\n{body}");
    let f = fire(&runaway).expect("a runaway inside code fires");
    assert_eq!(root_of(&f), line.chars().count());
    assert!(f.offset.unwrap() as usize <= "```rust\nfn f() {\n".len() + code_need as usize + 1);
}

#[test]
fn block_of_92_lines_repeated_is_caught_by_its_second_or_third_copy() {
    let block = texts::block_92_lines();
    let head = "Here is the handler module:\n\n";
    let text = format!("{head}{}", block.repeat(32));
    let f = fire(&text).expect("fires");
    let unit = block.chars().count();
    assert_eq!(root_of(&f), unit);
    let at = f.offset.unwrap() as usize - head.len();
    assert!(at <= 3 * unit, "fired after {at} characters, unit {unit}");
}

#[test]
fn two_line_thought_repeated_1420_times_is_caught_early() {
    let unit = texts::thought_2_lines();
    let text = unit.repeat(1420);
    let f = fire_with(&Settings::default(), Stream::Thinking, &text).expect("fires");
    assert_eq!(root_of(&f), unit.chars().count());
    assert!(
        f.offset.unwrap() <= 8 * unit.chars().count() as u64,
        "fired at {:?} of {}",
        f.offset,
        text.chars().count()
    );
}

#[test]
fn evidence_scale_trades_latency_for_safety() {
    let text = texts::unit_143().repeat(20);
    let at = |scale: u32| {
        fire_with(
            &Settings {
                evidence_scale: scale,
                ..Settings::default()
            },
            Stream::Text,
            &text,
        )
        .and_then(|f| f.offset)
    };
    let (low, mid, high) = (at(50).unwrap(), at(100).unwrap(), at(200).unwrap());
    assert!(low < mid && mid < high, "{low} {mid} {high}");
}

#[test]
fn measured_runs_report_root_span_and_copies() {
    let text = format!("Header line.\n{}Trailer.", "0x00, ".repeat(256));
    let runs = measure_runs(&Settings::default(), &text);
    let r = runs.iter().max_by_key(|m| m.run.span()).unwrap();
    assert_eq!(r.run.root, 6);
    assert!(
        r.run.span() >= 6 * 256 && r.run.span() < 6 * 258,
        "{:?}",
        r.run
    );
    assert_eq!(r.run.copies(), r.run.span() / 6);
    // A table of bytes in code, with spaces: not data.
    assert!(!r.data);
}

#[test]
fn measured_runs_say_which_are_data() {
    let longest = |text: &str| {
        let runs = measure_runs(&Settings::default(), text);
        *runs.iter().max_by_key(|m| m.run.span()).unwrap()
    };
    // The packed index's zeros: on a line over 9,000 characters long.
    let r = longest(&texts::packed_search_index());
    assert_eq!((r.run.root, r.data), (1, true));
    // A source map's segment, inside one word of data.
    let r = longest(&texts::source_map_mappings());
    assert_eq!((r.run.root, r.data), (10, true));
    // A 64-character word repeated at a line's start: a root that is itself a word of data.
    let label = "123456789012345678901234567890123456789012345678901234567890123.";
    let r = longest(&format!("Labels:\n{}\n", label.repeat(3)));
    assert_eq!((r.run.root, r.data), (64, true));
    // The same zeros after a sentence on a short line, and a sentence repeated: not data.
    let r = longest(&format!(
        "Calls <code>U::from(self)</code>.{}\n",
        "0".repeat(544)
    ));
    assert_eq!((r.run.root, r.data), (1, false));
    let sentence = "Check the label again before you send the request to the server. ";
    let r = longest(&sentence.repeat(5));
    assert!(!r.data, "{r:?}");
}

#[test]
fn rows_need_at_least_two_copies_and_the_larger_of_span_and_copies() {
    let row = Row {
        max_root: 64,
        span: 600,
        copies: 6,
    };
    assert_eq!(row.need(50, 100), 600);
    assert_eq!(row.need(200, 100), 1200);
    assert_eq!(row.need(50, 50), 300);
    let tiny = Row {
        max_root: 4,
        span: 10,
        copies: 0,
    };
    assert_eq!(tiny.need(30, 100), 60);
}

#[test]
fn copies_that_differ_in_their_numbers_are_caught_by_the_fifth_copy() {
    let text = texts::noisy_loop(40);
    let line = text.lines().nth(2).unwrap().chars().count() + 1;
    let f = fire(&text).expect("a counter loop fires");
    let head = "I'll retry the deployment until the health check passes.\n\n".len() as u64;
    assert!(
        f.offset.unwrap() <= head + 5 * line as u64,
        "fired at {:?}, line {line}",
        f.offset
    );
    // Not with counter-noise off: no two copies are equal.
    let off = Settings {
        counter_noise: false,
        ..Settings::default()
    };
    assert!(fire_with(&off, Stream::Text, &text).is_none());
    // Number tables are not sentences: a long list of numbered entries stays quiet.
    let table: String = (0..400).map(|i| format!("0x{i:02x}, ")).collect();
    assert!(fire(&format!("The table:\n{table}")).is_none());
}

#[test]
fn noisy_runs_follow_numbers_of_any_width_and_stay_quiet_when_short() {
    // A counter crossing 9 → 10 changes the length of a copy; read as one symbol it does not.
    let lines: String = (1..=30)
        .map(|i| {
            format!(
                "Retry {i}: the upload to the bucket failed with a timeout, trying again now.\n"
            )
        })
        .collect();
    assert!(fire(&lines).is_some());
    // Three such lines are not a loop.
    let few: String = lines.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert!(fire(&few).is_none());
}

#[test]
fn the_engine_sees_runs_at_their_third_copy_with_the_default_thresholds() {
    use loopguard_detect_tail_periodicity::engine_copies;
    assert_eq!(engine_copies(&Settings::default()), 3);
    // Lower thresholds (long units fire at 1.5 copies, scaled up to two) need the second.
    let lower = Settings {
        evidence_scale: 50,
        ..Settings::default()
    };
    assert_eq!(engine_copies(&lower), 2);
    // A chant of two copies needs them too; chants off do not.
    let two = Settings {
        chant_copies: 2,
        ..Settings::default()
    };
    assert_eq!(engine_copies(&two), 2);
    let off = Settings {
        chant_copies: 0,
        ..Settings::default()
    };
    assert_eq!(engine_copies(&off), 3);
    // The fuzz target's third-copy setting.
    let small = Settings {
        min_unit: 3,
        chant_copies: 4,
        counter_noise: false,
        ..Settings::default()
    };
    assert_eq!(engine_copies(&small), 3);
}

#[test]
fn at_three_copies_no_threshold_asks_for_fewer() {
    use loopguard_detect_tail_periodicity::{engine_copies, evidence::row_for, NOISY_TABLE};
    // Whenever the engine waits for a third copy, every row of every table asks, for every
    // root, at least three copies of the unit the engine sees that root as (the root, or
    // its smallest multiple of at least min-unit characters): waiting loses no firing point.
    for min in [1usize, 7, 30, 64] {
        for scale in [50u32, 70, 90, 100, 120, 200] {
            let s = Settings {
                min_unit: min,
                evidence_scale: scale,
                ..Settings::default()
            };
            let k = engine_copies(&s);
            let mut all_hold = true;
            for table in [PROSE_TABLE, CODE_TABLE, NOISY_TABLE] {
                for p in 1u64..=70_000 {
                    let unit = (min as u64).div_ceil(p) * p;
                    if row_for(table, p).need(p, scale) < 3 * unit {
                        all_hold = false;
                    }
                }
            }
            assert_eq!(
                k == 3,
                all_hold,
                "min {min}, scale {scale}: engine copies {k}"
            );
        }
    }
}

#[test]
fn a_run_is_found_at_its_third_copy_and_starts_where_it_began() {
    use loopguard_detect_tail_periodicity::RunTracker;
    // "ab" repeated: the engine's smallest unit of at least 30 is 30 ("ab" × 15).
    for (copies, seen_at) in [(2u64, 60u64), (3, 90)] {
        let mut t = RunTracker::with_copies(30, 1000, u64::MAX, copies);
        let mut started = None;
        for (i, c) in "xy".chars().chain("ab".repeat(60).chars()).enumerate() {
            let (_, s) = t.push(u32::from(c));
            if s && started.is_none() {
                started = Some(i as u64 + 1);
                // The run began after "xy": found by extending the period backwards.
                assert_eq!(t.current(), Some((2, 2)));
            }
        }
        assert_eq!(started, Some(2 + seen_at), "copies {copies}");
    }
}

#[test]
fn a_table_row_repeated_without_end_still_fires() {
    // The generated table's row, ten times, is legitimate; the same row forty times is a
    // runaway inside code, caught by the raised row before the thirtieth copy.
    let row = "  (1U<<31) | 4581, (1U<<31) | 4651, (1U<<31) | 4731, (1U<<31) | 4651, (1U<<31) | 4651, (1U<<31) | 4581, (1U<<31) | 4731, (1U<<31) | 4651,\n";
    let text = format!("static const unsigned Table[] = {{\n{}", row.repeat(40));
    let f = fire(&text).expect("forty copies of a table row fire");
    assert_eq!(root_of(&f), row.chars().count());
    let offset = f.offset.expect("an offset");
    assert!(offset < 30 * row.len() as u64, "fired at {offset}");
}

/// The opening of a PNG in base64, as an icon embeds it (header, size, colour type, the
/// start of its first chunk): more than 40 visible characters ahead of the zeros that follow.
const PNG_HEAD: &str = "iVBORw0KGgoAAAANSUhEUgAABAAAAAMgCAYAAAC9FhA7AAAABmJLR0QA/wD/AP+gvaeTAAAMr0lEQVR4nO3YsQ2AMAwAwcB8GZcBWQFEIoq/qy3b9Y8B";

#[test]
fn the_zeros_of_an_image_embedded_in_base64_are_data_not_a_loop() {
    // An icon written out whole: its embedded PNG holds a run of 3,800 `A`s (zero bytes),
    // inside one word of data on a line of markup; a packed search index holds 2,200 `0`s
    // inside one word of a script. Both are what the files hold, not a model repeating
    // itself.
    let icon = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" height=\"16\">\n  <image height=\"800\" width=\"1024\" xlink:href=\"data:image/png;base64,{PNG_HEAD}{}D7CQAAAAAQIAAAAABAgAAAAAAAAQIAAAAABAg==\"/>\n</svg>\n",
        "A".repeat(3800)
    );
    assert!(fire(&icon).is_none(), "{:?}", fire(&icon));
    let index = format!(
        "rd_(\"a!000a%000a&000a(000a)000a*000000000a+000a-00000a/000a<000a>000a?00000aE0000000a[00000a]00000bcpbeq{}0bfn000Cd\");\n",
        "0".repeat(2200)
    );
    assert!(fire(&index).is_none(), "{:?}", fire(&index));
    // Asked for in prose, the same icon is still data.
    let answer = format!("Here is the icon you asked for:\n\n{icon}\nSave it as `theme.svg`.");
    assert!(fire(&answer).is_none(), "{:?}", fire(&answer));
}

#[test]
fn a_blob_that_turns_into_one_character_without_end_is_still_stopped() {
    // A model writing a base64 image that degenerates into `A` forever: let run only to
    // the data row, then stopped.
    let start = "<img src=\"data:image/png;base64,".chars().count() + PNG_HEAD.chars().count();
    let text = format!(
        "<img src=\"data:image/png;base64,{PNG_HEAD}{}",
        "A".repeat(20_000)
    );
    let f = fire(&text).expect("a run of 20,000 `A`s fires");
    assert_eq!(root_of(&f), 1);
    let offset = f.offset.expect("an offset") as usize;
    // The run begins at the last `A` of the head's last word of data or later; it fires once
    // it spans the data row (5,735), not at the code row (500).
    assert!(
        offset > start + 5_000 && offset <= start + 5_800,
        "fired at {offset}"
    );
    // Wherever the deltas are cut, the whole message in one included.
    for chunk in [1, 7, 4096, 100_000] {
        let mut s = Script::new();
        s.message_chunked(Stream::Text, &text, chunk);
        let found = run(
            Box::new(TailPeriodicity::new(Settings::default())),
            s.events(),
        );
        let at: Vec<_> = found.iter().map(|(_, f)| f.offset).collect();
        assert_eq!(at, vec![Some(offset as u64)], "deltas of {chunk}");
    }
    // The same run after a short word is not inside data: the code row stops it.
    let short = format!("<img src=\"x\" alt=\"{}", "A".repeat(20_000));
    let f = fire(&short).expect("fires");
    assert!(f.offset.expect("an offset") < 1_000, "{:?}", f.offset);
}

#[test]
fn a_run_after_a_word_of_prose_is_not_data() {
    // A word of prose ahead of the run is short: the prose row still stops `0`s without end.
    let text = format!(
        "Each entry is described in the vendor's documentation{}",
        "0".repeat(2000)
    );
    let f = fire(&text).expect("fires");
    assert_eq!(root_of(&f), 1);
    assert!(f.offset.expect("an offset") < 400, "{:?}", f.offset);
    // Separated by a space from a long word, the run is a word of its own.
    let spaced = format!("{PNG_HEAD} {}", "0".repeat(2000));
    assert!(fire(&spaced).expect("fires").offset.expect("an offset") < 700);
    // A language written without spaces is not data: a sentence repeated after a long
    // opening sentence fires at the prose row (a root of 22 characters: 279 and 9 copies).
    let opening =
        "这个函数读取配置文件并返回一个包含所有选项的结构体，如果文件不存在则使用默认值。";
    let sentence = "我认为这个答案是正确的，因为它满足所有条件。";
    let cjk = format!("{opening}{}", sentence.repeat(40));
    let f = fire(&cjk).expect("fires");
    assert_eq!(root_of(&f), sentence.chars().count());
    let at = f.offset.expect("an offset") as usize;
    assert!(at <= opening.chars().count() + 300, "fired at {at}");
}

#[test]
fn a_run_on_a_long_line_of_data_needs_the_data_rows_and_still_fires() {
    // The packed index's line, cut before its closing quote: over 9,000 characters of data.
    let index = texts::packed_search_index();
    let line = index.trim_end_matches("\")\n");
    assert!(!line.contains('\n') && line.len() > 9_000);
    // Its 544 zeros are data; a run of zeros that does not end is still stopped, at the
    // data row of one-character roots (5,735 characters).
    let runaway = format!("{line}{}", "0".repeat(8_000));
    let f = fire(&runaway).expect("a run of 8,000 zeros fires");
    assert_eq!((root_of(&f), f.count), (1, 5735));
    // The same 544 zeros after a sentence on a line of its own are a runaway at 300.
    let short = format!("Calls <code>U::from(self)</code>.{}", "0".repeat(544));
    let f = fire(&short).expect("544 zeros on a short line fire");
    assert_eq!((root_of(&f), f.count), (1, 300));
    // A sentence repeated on the long line fires where code would: a root of 129 to 256
    // characters at 15 copies (after a line break, prose's row: 3 copies).
    let sentence = "Returns the argument unchanged, after checking that it holds a value the callee can read; otherwise the call fails with the error of the first field that could not be converted, and nothing is written. ";
    let runaway = format!("{line}{}", sentence.repeat(24));
    let f = fire(&runaway).expect("a sentence repeated on the long line fires");
    assert_eq!((root_of(&f), f.count), (sentence.len(), 15));
    let f = fire(&format!("{line}\n{}", sentence.repeat(24))).expect("fires after a break");
    assert_eq!((root_of(&f), f.count), (sentence.len(), 3));
}

#[test]
fn a_long_word_of_data_repeated_is_data() {
    // Test vectors of domain names: a label of 63 digits and its dot, three times, on a line
    // of its own after lines of fields. The root is one word of 64 visible characters: data,
    // judged by the code rows (a root of 33 to 64 characters: 1,089 characters, 32 copies).
    let label = "123456789012345678901234567890123456789012345678901234567890123.";
    let vectors = format!(
        "# Test cases for the processing of domain names\n\
         xn--bssffl; 夡夞夜夙; ; xn--bssffl; ; ;  # 夡夞夜夙\n\
         夡夞夜夙; ; ; xn--bssffl; ; ;  # 夡夞夜夙\n\
         {}1234567890123456789012345678901234567890123456789012345678901234; ; [A4_2]; ; ;\n",
        label.repeat(3)
    );
    assert!(fire(&vectors).is_none(), "{:?}", fire(&vectors));
    // Such a word repeated without end is still stopped, at the code row.
    let runaway = format!("The label is {}", label.repeat(40));
    let f = fire(&runaway).expect("a label repeated 40 times fires");
    assert_eq!((root_of(&f), f.count), (64, 32));
    // A sentence repeated is prose (its root has spaces): it fires at prose's row for roots
    // of 65 to 128 characters, 399 characters (six copies and a bit), long before 32 copies.
    let sentence = "Check the label again before you send the request to the server. ";
    let f = fire(&format!("Note. {}", sentence.repeat(12))).expect("fires");
    assert_eq!((root_of(&f), f.count), (sentence.len(), 6));
}

#[test]
fn lines_that_differ_where_the_filler_cut_used_to_drop_are_not_copies() {
    // Test vectors of labels made only of symbols (as Unicode's IDNA tests have): each line
    // ends in a run of punctuation and symbols that goes on into the next line's label. The
    // cut of filler runs kept the first 16 characters of the run and dropped the rest, so
    // the labels, different on every line, were cut away and the lines read as one line
    // four times. A line feed now starts the count again.
    let labels = [
        "⊕．⊗‐‐; ⊕.⊗‐‐; ",
        "⊕.⊗‐‐; ; ",
        "⊕︒⊗‐‐; ⊕.⊗‐‐; ",
        "⊕.⊗‐‐; ⊕.⊗‐‐; ",
        "⊕。⊗‐‐; ⊕.⊗‐‐; ",
        "⊕.⊗‐; ; ",
        "⊕｡⊗‐‐; ⊕.⊗‐‐; ",
        "⊕.⊗‐‐‐; ; ",
    ];
    let mut text = String::from(
        "# Test vectors for labels made of symbols only.\n\
         # source; mapped; status; ascii; ; ;  # comment\n",
    );
    for l in labels {
        text.push_str(l);
        text.push_str("[B1, V6]; xn--ykh.xn------mzc; ; ;  # ⊕.⊗‐‐\n");
    }
    assert!(fire(&text).is_none(), "{:?}", fire(&text));
    // Forty such lines of ASCII labels in a code fence (the code rows, read by the quiet
    // loop of code): the eight labels taken in turn are a unit of eight lines, five copies,
    // under its row.
    let ascii = [
        "*.~--; *.~--; ",
        "*.~--; ; ",
        "*:~--; *.~--; ",
        "*.~--; *:~--; ",
        "*!~--; *.~--; ",
        "*.~-; ; ",
        "*?~--; *.~--; ",
        "*.~---; ; ",
    ];
    let mut fenced = String::from("The vectors:\n\n```text\n");
    for l in ascii.iter().cycle().take(40) {
        fenced.push_str("    ");
        fenced.push_str(l);
        fenced.push_str("[B1, V6]; xn--ykh.xn------mzc; ; ;  # *.~--\n");
    }
    assert!(fire(&fenced).is_none(), "{:?}", fire(&fenced));
    // Padding of many blank lines is still cut: a line of words between runs of 40 line
    // feeds, repeated, stays a short unit that fires like any runaway line.
    let padded = format!("Intro.\n{}", "The build failed again, retrying.\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n".repeat(40));
    let f = fire(&padded).expect("a padded runaway line still fires");
    assert!(root_of(&f) < 60, "{}", f.key);
}

/// A long list of names and versions (`NAME|version||flags`, lines no classifier reads as
/// code), then C that parses digits with its loop unrolled: each level of the nest is the
/// same four lines, indented two spaces more, and past sixteen spaces of indent the filler
/// cut makes the levels identical copies of one 140-character block.
fn names_then_unrolled_c(levels: usize) -> String {
    let mut text = String::from("=head1 Compatibility of the API\n\n");
    for i in 0..400 {
        text.push_str(&format!("PL_name_{i}|5.0{:02}00{}||Viu\n", i % 40, i % 7));
    }
    text.push_str("\nstatic int\ngrok_digits(const char *s, const char *send)\n{\n  int value = 0;\n  int digit;\n");
    for level in 0..levels {
        let pad = " ".repeat(2 + 4 * level);
        text.push_str(&format!(
            "{pad}digit = *s - '0';\n{pad}if (digit >= 0 && digit <= 9) {{\n{pad}  value = value * 10 + digit;\n{pad}  if (++s < send) {{\n"
        ));
    }
    text
}

#[test]
fn a_block_of_code_repeated_after_lines_of_prose_is_judged_as_code() {
    // Perl's `Devel/PPPort.pm` holds such a list, then `grok_number`'s unrolled loop: three
    // copies of the block were a prose runaway (span 554 for roots ≤ 256). The block's lines
    // end as code does, so it is judged by the code row (15 copies).
    let text = names_then_unrolled_c(12);
    assert!(fire(&text).is_none(), "{:?}", fire(&text));
    // The code row still holds: the same block unrolled far enough fires.
    let long = names_then_unrolled_c(40);
    let f = fire(&long).expect("a block of code repeated 35 times fires");
    assert!(f.message.contains("identical copies"), "{}", f.message);
    // Lines of prose repeated after the same list still fire at the prose row.
    let mut prose = names_then_unrolled_c(0);
    for _ in 0..4 {
        prose.push_str(
            "The value is read one digit at a time, and each digit is added to the total.\n\
             Then the pointer moves on to the next character of the number being parsed.\n",
        );
    }
    let f = fire(&prose).expect("prose repeated four times fires");
    assert!(root_of(&f) > 100, "{f:?}");
}

// ---- an answer cut by an output limit and continued ------------------------------------------

/// The generated table of a Rust crate, as its file reads: a header, then rows of zeros.
fn zero_table(rows: usize) -> String {
    let mut t = String::from(
        "// This file is generated by `cargo run -p generate`. Do not edit.\n\n\
         #[repr(C, align(8))]\npub struct Align8<T>(pub T);\n\n\
         pub static LEAF: Align8<[u8; 4096]> = Align8([\n",
    );
    for _ in 0..rows {
        t.push_str("    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,\n");
    }
    t.push_str("    0xFF, 0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,\n]);\n");
    t
}

/// The findings of the default rule over `messages`, each an assistant message streamed in
/// 16-character deltas; `between(i)` runs before message `i` (a user's "continue", a tool
/// call).
fn over_messages(messages: &[&str], between: impl Fn(usize, &mut Script)) -> Vec<(usize, Finding)> {
    let mut s = Script::new();
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            between(i, &mut s);
        }
        s.message(m);
    }
    run(
        Box::new(TailPeriodicity::new(Settings::default())),
        s.events(),
    )
}

/// `text` cut into pieces of `size` characters (ASCII).
fn cut(text: &str, size: usize) -> Vec<&str> {
    text.as_bytes()
        .chunks(size)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect()
}

#[test]
fn a_table_cut_by_the_output_limit_and_continued_is_one_answer() {
    let table = zero_table(100);
    // Whole: quiet (code, and the run of zeros is below the code row).
    assert!(fire(&table).is_none());
    // Cut every 4,000 characters and continued on "continue": the second piece starts in
    // the middle of the zeros, and alone would be a chant; read on from the first, it is the
    // rest of the same table.
    let pieces = cut(&table, 4000);
    assert!(pieces.len() >= 3);
    let alone = fire(pieces[1]);
    assert!(alone.is_some(), "the second piece alone is a chant");
    let continue_ = |_: usize, s: &mut Script| {
        s.user("continue");
    };
    let found = over_messages(&pieces, continue_);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_runaway_cut_and_continued_is_still_caught() {
    let para = "The function returns early when the cache is empty, so the caller must check the \
                flag before it reads the entry again. ";
    let runaway = format!("Here is what happens in `load`:\n\n{}", para.repeat(60));
    let pieces = cut(&runaway, 2000);
    let found = over_messages(&pieces, |_, s: &mut Script| {
        s.user("continue");
    });
    assert!(
        !found.is_empty(),
        "a runaway split over messages is still one"
    );
}

#[test]
fn a_chant_after_a_tool_call_or_a_whole_message_is_judged_as_a_message_of_its_own() {
    let chant = "ny".repeat(400);
    // Forty lines that do not repeat.
    let (a, b, c) = (
        [
            "The parser",
            "Each worker",
            "The cache",
            "A request",
            "The scheduler",
            "Our test",
            "The index",
        ],
        [
            "reads", "writes", "checks", "skips", "locks", "drops", "sorts", "loads", "parses",
            "merges", "flushes",
        ],
        [
            "the header",
            "a block",
            "its entries",
            "the footer",
            "one page",
            "every key",
            "the journal",
            "a segment",
            "the buffer",
            "its children",
            "the trailer",
            "a chunk",
            "the manifest",
        ],
    );
    let prose: String = (0..40)
        .map(|i| format!("{} {} {} first.\n", a[i % 7], b[i % 11], c[i % 13]))
        .collect();
    assert!(fire(&prose).is_none());
    // A long message cut inside a line, then a tool call: the next message starts anew.
    let long = format!("{prose}the last line is cut he");
    let after_call = over_messages(&[&long, &chant], |_, s: &mut Script| {
        s.call(
            "read",
            serde_json::json!({"path": "config.toml"}),
            "[server]\nport = 8080",
        );
    });
    assert_eq!(after_call.len(), 1, "{after_call:#?}");
    // A message that ends its last line is whole: the next chant is a chant.
    let after_whole = over_messages(&[&prose, &chant], |_, s: &mut Script| {
        s.user("go on");
    });
    assert_eq!(after_whole.len(), 1, "{after_whole:#?}");
    // So is a short one cut inside a line.
    let after_short = over_messages(&["Sure, here it is"], |_, _| {});
    assert!(after_short.is_empty());
    let after_short = over_messages(&["Sure, here it is", &chant], |_, s: &mut Script| {
        s.user("go on");
    });
    assert_eq!(after_short.len(), 1, "{after_short:#?}");
}

#[test]
fn a_runaway_after_a_whole_answer_is_judged_on_its_own() {
    // A code answer that closes its block without a line feed, then a short question: the
    // explanation that loops is prose, judged as prose, not as the rest of the code.
    let code = format!(
        "Here is the file:\n\n```rust\n{}```",
        (0..60)
            .map(|i| format!("fn f{i}(x: u32) -> u32 {{\n    x * {i} + {}\n}}\n\n", i * 7))
            .collect::<String>()
    );
    assert!(code.len() > 2000);
    let para = "The function returns early when the cache is empty, so the caller must check \
                the flag before it reads the entry again. ";
    let runaway = format!("The cache works as follows. {}", para.repeat(30));
    let alone = over_messages(&[&runaway], |_, _| {});
    assert_eq!(alone.len(), 1);
    let ask = |_: usize, s: &mut Script| {
        s.user("explain it");
    };
    let after_code = over_messages(&[&code, &runaway], ask);
    assert_eq!(after_code.len(), 1, "{after_code:#?}");
    // A long message cut inside a line, then a user message that asks something else: the
    // answer is an answer of its own (here a chant from its first character, fired early).
    let cut_code = format!("{}    let cut_he", &code[..code.len() - 3]);
    let chant = "ny".repeat(400);
    let asked = over_messages(&[&cut_code, &chant], |_, s: &mut Script| {
        s.user("Never mind the file. What does the word 'nyny' mean in your last reply?");
    });
    assert_eq!(asked.len(), 1, "{asked:#?}");
    let continued = over_messages(&[&cut_code, &chant], |_, s: &mut Script| {
        s.user("continue");
    });
    // Read as the rest of the code, the chant is still a run, found later than a chant.
    assert_eq!(continued.len(), 1, "{continued:#?}");
    assert!(
        continued[0].1.count > asked[0].1.count,
        "{continued:#?} {asked:#?}"
    );
}

#[test]
fn a_hex_table_cut_at_the_end_of_a_row_and_continued_is_one_answer() {
    // A Tcl encoding table: rows of 64 hex digits, runs of zeros among them. The output
    // limit falls exactly at the end of a row, and the next part starts with rows of zeros.
    let row = |i: usize| -> String {
        (0..16)
            .map(|k| format!("{:04X}", 0x4E00 + i * 16 + k))
            .collect::<String>()
    };
    let mut first = String::from("# Encoding file: euc-cn, multi-byte\nM\n003F 0 82\n21\n");
    for i in 0..40 {
        first.push_str(&row(i));
        first.push('\n');
    }
    let zeros = format!("{}\n", "0".repeat(64));
    let mut second = zeros.repeat(4);
    for i in 40..80 {
        second.push_str(&row(i));
        second.push('\n');
    }
    assert!(first.len() > 2000 && first.ends_with('\n'));
    // The second part alone starts as a chant of zeros.
    assert!(fire(&second).is_some());
    let found = over_messages(&[&first, &second], |_, s: &mut Script| {
        s.user("continue");
    });
    assert!(found.is_empty(), "{found:#?}");
    // After a part that ends a line of prose, the next part is a message of its own.
    let prose_end = format!("{first}That is the first half of the table.\n");
    let found = over_messages(&[&prose_end, &second], |_, s: &mut Script| {
        s.user("continue");
    });
    assert_eq!(found.len(), 1, "{found:#?}");
}
