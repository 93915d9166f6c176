//! Checklist G (seed-systems.md §5), the seed's test table (§2.6 items 1–9), and the
//! false-positive regressions (§2.7, §6, corpus) against the default settings.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod fixtures;

use loopguard_core::{Finding, Level, Stream};
use loopguard_detect_tail_periodicity::{
    Algorithm, Rule, SeedScanner, Settings, TailPeriodicity, REGISTRATION,
};
use loopguard_testkit::{run, Script};

fn seed() -> Settings {
    Settings::pi_repetition_guard()
}

/// The exact engine under the copies rule (`min-copies` copies, `root-copies` copies of the
/// root below `long-unit`): what the engine tests below pin down.
fn copies() -> Settings {
    Settings {
        rule: Rule::Copies,
        ..Settings::default()
    }
}

fn fire_pieces(
    settings: &Settings,
    pieces: &[(Stream, &str)],
    chunk: usize,
) -> Vec<(usize, Finding)> {
    let mut s = Script::new();
    s.message_streams(pieces, chunk);
    run(Box::new(TailPeriodicity::new(settings.clone())), s.events())
}

fn fire(settings: &Settings, text: &str) -> Option<Finding> {
    let found = fire_pieces(settings, &[(Stream::Text, text)], 16);
    assert!(found.len() <= 1, "at most one finding per message");
    found.into_iter().next().map(|(_, f)| f)
}

/// The seed's rule checked after every character (no cadence), to show what it flags.
fn seed_rule_flags(t: &str) -> bool {
    !fire_pieces(
        &Settings {
            rescan_every: 1,
            ..seed()
        },
        &[(Stream::Text, t)],
        1,
    )
    .is_empty()
}

fn unit_len(f: &Finding) -> usize {
    f.key.split('/').nth(1).unwrap().parse().unwrap()
}

/// A 60-character unit (between the minimum and the default long-unit threshold).
const U60: &str = "The cache key must include the tenant id and the locale code.";

fn preamble() -> String {
    fixtures::prose()
}

// ---- G. Tail periodicity ---------------------------------------------------------------

#[test]
fn g41_two_copies_of_a_unit_of_30_or_more_is_a_loop_with_the_smallest_period() {
    let u = &U60[..U60.len() - 1];
    let text = format!("{}\n{u}{u}", preamble());
    let f = fire(&seed(), &text).expect("seed preset fires on U+U");
    assert_eq!(unit_len(&f), u.chars().count());
    assert_eq!(f.level, Level::Critical);
    // Default: units shorter than long-unit (512) need four copies of their root; longer ones
    // fire on two.
    assert!(fire(&copies(), &format!("{text}{u}")).is_none());
    let f = fire(&copies(), &format!("{text}{u}{u}")).expect("fourth copy fires");
    assert_eq!(unit_len(&f), u.chars().count());
    let long = fixtures::unit_1000();
    let f = fire(&copies(), &format!("{}\n{long}{long}", preamble()))
        .expect("two copies of a 1000-character unit");
    assert_eq!(unit_len(&f), long.chars().count());
    // Smallest period: a unit that is itself two copies reports the half.
    let w = "0123456789abcdefghijklmnopqrstuvwxyz0123";
    let f = fire(&seed(), &format!("{}\n{w}{w}{w}{w}", preamble())).unwrap();
    assert_eq!(unit_len(&f), w.len());
}

#[test]
fn g41_abc_ten_times_is_not_a_loop() {
    let text = format!("{}\n{}", preamble(), "abc".repeat(10));
    assert!(fire(&seed(), &text).is_none());
    assert!(fire(&Settings::default(), &text).is_none());
    assert_eq!(SeedScanner::new(30, 3000, 2, 200).scan(), None);
}

#[test]
fn g42_non_contiguous_repeats_are_not_a_loop() {
    let u = fixtures::unit_143();
    let text = format!(
        "{}\n{u}\nThen the build went green and the deploy finished.\n{u}",
        preamble()
    );
    assert!(fire(&seed(), &text).is_none());
    assert!(fire(&Settings::default(), &text).is_none());
}

#[test]
fn g43_seed_rescans_only_after_200_new_characters() {
    let u = fixtures::unit_143();
    let pre = "x".repeat(0) + &preamble();
    let text = format!("{pre}{u}{u}{u}");
    let f = fire(&seed(), &text).unwrap();
    // 16-character deltas, scans at the first delta end with ≥200 new characters.
    let mut scans = Vec::new();
    let (mut len, mut last) = (0u64, 0u64);
    for piece in text.chars().collect::<Vec<_>>().chunks(16) {
        len += piece.len() as u64;
        if len - last >= 200 {
            last = len;
            scans.push(len);
        }
    }
    let offset = f.offset.unwrap();
    assert!(
        scans.contains(&offset),
        "fired at {offset}, scans at {scans:?}"
    );
    // The exact engine fires on the completing character instead.
    let exact = fire(
        &Settings {
            long_unit: 30,
            ..copies()
        },
        &text,
    )
    .unwrap();
    let second_copy_end = (pre.chars().count() + 2 * 143) as u64;
    assert_eq!(exact.offset, Some(second_copy_end));
    assert!(offset >= second_copy_end);
}

#[test]
fn g43_verdict_between_scans_is_the_last_scans() {
    // The square completes, then the text keeps growing by less than 200: no new scan, no
    // finding until the next scan point.
    let mut sc = SeedScanner::new(30, 3000, 2, 200);
    let pre: Vec<char> = preamble().chars().collect();
    for &c in &pre[..199] {
        sc.push(u32::from(c));
    }
    assert_eq!(sc.end_of_update(), None, "199 characters: no scan yet");
    for c in U60.chars().chain(U60.chars()) {
        sc.push(u32::from(c));
    }
    assert_eq!(
        sc.end_of_update(),
        Some(61),
        "the scan at ≥200 finds the unit"
    );
    sc.push(u32::from('!'));
    assert_eq!(sc.end_of_update(), None, "no rescan after 1 character");
}

#[test]
fn g44_seed_cap_is_min_3000_and_half_the_length() {
    let unit = |n: usize| -> String {
        let mut s = String::new();
        let mut i = 0;
        while s.chars().count() < n {
            s.push_str(&format!("{i} "));
            i += 1;
        }
        s.chars().take(n).collect()
    };
    let u3001 = unit(3001);
    let u3000 = unit(3000);
    let every = Settings {
        rescan_every: 1,
        ..seed()
    };
    assert!(
        fire(&every, &format!("{u3001}{u3001}")).is_none(),
        "3001 exceeds the seed cap"
    );
    assert_eq!(
        fire(&every, &format!("{u3000}{u3000}")).map(|f| unit_len(&f)),
        Some(3000)
    );
    // The default finds units up to 64 Ki characters.
    assert_eq!(
        fire(&copies(), &format!("{u3001}{u3001}")).map(|f| unit_len(&f)),
        Some(3001)
    );
    let big = unit(65_536);
    let f = fire(&copies(), &format!("{}{big}{big}", preamble())).expect("64 Ki unit");
    assert_eq!(unit_len(&f), 65_536);
}

#[test]
fn g45_only_the_current_message_is_scanned_and_state_resets() {
    let u = fixtures::unit_143();
    let mut s = Script::new();
    s.user(&format!("{u}{u}"));
    s.message(&format!("{}{u}", preamble()));
    s.message(&u);
    for settings in [seed(), Settings::default()] {
        assert!(run(Box::new(TailPeriodicity::new(settings)), s.events()).is_empty());
    }
}

#[test]
fn g45_seed_joins_thinking_and_text_with_a_newline() {
    // thinking = P "\n" V, text = V "\n": joined P "\n" V "\n" V "\n" ends with (V "\n")².
    let v = &fixtures::unit_143()[..100];
    let thinking = format!("{}\n{v}", "y".repeat(0) + &preamble());
    let text = format!("{v}\n");
    let pieces = [
        (Stream::Thinking, thinking.as_str()),
        (Stream::Text, text.as_str()),
    ];
    let found = fire_pieces(
        &Settings {
            rescan_every: 1,
            ..seed()
        },
        &pieces,
        16,
    );
    assert_eq!(found.len(), 1);
    assert_eq!(unit_len(&found[0].1), 101);
    // The exact engine separates streams with a symbol no repeat can contain.
    let default = Settings {
        long_unit: 30,
        ..copies()
    };
    assert!(fire_pieces(&default, &pieces, 16).is_empty());
}

#[test]
fn g46_sample_is_the_unit_cut_to_200_characters() {
    let u = fixtures::unit_1000();
    let f = fire(
        &Settings {
            rescan_every: 1,
            ..seed()
        },
        &format!("{u}{u}"),
    )
    .unwrap();
    let sample = f.sample.unwrap();
    assert_eq!(sample.chars().count(), 201);
    assert!(sample.ends_with('…'));
    let u = fixtures::unit_143();
    let f = fire(&copies(), &format!("{}{u}{u}{u}{u}", preamble())).unwrap();
    assert_eq!(f.sample.unwrap(), u);
}

#[test]
fn finding_reports_offset_and_fires_once() {
    let u = fixtures::unit_143();
    let pre = preamble();
    let found = fire_pieces(
        &copies(),
        &[(Stream::Text, &format!("{pre}{u}{u}{u}{u}"))],
        16,
    );
    assert_eq!(found.len(), 1);
    // A 143-character unit is short of `long-unit`: it fires on its fourth copy.
    assert_eq!(
        found[0].1.offset,
        Some((pre.chars().count() + 4 * 143) as u64)
    );
    assert_eq!(found[0].1.detector, "tail-periodicity");
    assert!(found[0].1.message.contains("143"));
}

// ---- §2.6 seed test table, items 1–9 ------------------------------------------------------

#[test]
fn seed_t01_long_templated_xhigh_thinking_is_quiet() {
    let t = fixtures::xhigh_thinking();
    assert!(fire(&seed(), &t).is_none());
    assert!(fire(&Settings::default(), &t).is_none());
}

#[test]
fn seed_t02_normal_prose_is_quiet() {
    assert!(fire(&seed(), &fixtures::prose()).is_none());
    assert!(fire(&Settings::default(), &fixtures::prose()).is_none());
}

#[test]
fn seed_t03_code_recap_and_templated_lists_are_quiet() {
    let bullets: String = (0..25)
        .map(|i| {
            format!(
                "- The measured latency for configuration number {i} was {} ms\n",
                40 + i * 3
            )
        })
        .collect();
    for t in [
        fixtures::compared_code_blocks(),
        fixtures::templated_reasoning(),
        bullets,
    ] {
        assert!(fire(&seed(), &t).is_none(), "{t}");
        assert!(fire(&Settings::default(), &t).is_none(), "{t}");
    }
}

#[test]
fn seed_t04_non_contiguous_repeated_blocks_are_quiet() {
    let u = fixtures::unit_143();
    let t = format!("Intro.\n{u}\n{}\n{u}", fixtures::prose());
    assert!(fire(&seed(), &t).is_none());
    assert!(fire(&Settings::default(), &t).is_none());
}

#[test]
fn seed_t05_contiguous_tape_loop_of_143_fires_with_a_rotation_sample() {
    let u = fixtures::unit_143();
    let t = u.repeat(4);
    for settings in [seed(), Settings::default()] {
        let f = fire(&settings, &t).unwrap();
        assert_eq!(unit_len(&f), 143);
        let sample = f.sample.unwrap();
        assert!(
            format!("{u}{u}").contains(&sample),
            "the sample is a rotation of the unit"
        );
    }
}

#[test]
fn seed_t06_long_block_runaway_fires() {
    let u = fixtures::unit_1000();
    let exact_only = Settings {
        counter_noise: false,
        ..Settings::default()
    };
    for settings in [seed(), exact_only] {
        assert_eq!(
            fire(&settings, &u.repeat(4)).map(|f| unit_len(&f)),
            Some(1000)
        );
    }
    // The unit's sentences differ only in a step counter: the default catches them sooner,
    // as copies of one 90-character sentence with its number masked.
    let f = fire(&Settings::default(), &u.repeat(4)).unwrap();
    assert_eq!(unit_len(&f), 90);
    assert!(f.offset.unwrap() < 1000);
}

#[test]
fn seed_t07_runaway_after_long_preamble_fires() {
    let u = fixtures::unit_143();
    let t = format!("{}{}", fixtures::xhigh_thinking(), u.repeat(4));
    for settings in [seed(), Settings::default()] {
        assert_eq!(fire(&settings, &t).map(|f| unit_len(&f)), Some(143));
    }
}

#[test]
fn seed_t08_checklist_of_short_distinct_items_is_quiet() {
    let t: String = (0..30).map(|i| format!("item {i}: done. ")).collect();
    assert!(fire(&seed(), &t).is_none());
    assert!(fire(&Settings::default(), &t).is_none());
}

#[test]
fn seed_t09_find_period() {
    let scan = |t: &str| {
        let mut sc = SeedScanner::new(30, 3000, 2, 200);
        for c in t.chars() {
            sc.push(u32::from(c));
        }
        sc.scan()
    };
    let u = fixtures::unit_143();
    assert_eq!(scan(&u.repeat(3)), Some(143));
    assert_eq!(scan(&"abc".repeat(10)), None);
    assert_eq!(
        scan("This sentence does not repeat anything at all, it just goes on."),
        None
    );
    assert_eq!(scan(&format!("A unique prefix here. {U60}{U60}")), Some(61));
    assert_eq!(
        scan("A B A B C D E F G H I J K L M N O P Q R S T U V W X Y Z"),
        None
    );
}

// ---- false positives of the seed: quiet under the default ---------------------------------

fn quiet_default(t: &str) {
    for chunk in [1, 16, 200] {
        let found = fire_pieces(&Settings::default(), &[(Stream::Text, t)], chunk);
        assert!(found.is_empty(), "default flagged: {:?}", found[0].1.sample);
        let found = fire_pieces(&Settings::default(), &[(Stream::Thinking, t)], chunk);
        assert!(found.is_empty());
    }
}

#[test]
fn fp_legitimate_texts_the_seed_rule_flags_are_quiet_by_default() {
    for (case, t) in [
        (
            "whitespace-only units (trailing padding)",
            fixtures::trailing_padding(),
        ),
        ("low-entropy separator lines", fixtures::separator_lines()),
        (
            "an output line quoted twice",
            fixtures::duplicate_output_lines(),
        ),
        (
            "a sed pattern and replacement sharing a prefix",
            fixtures::sed_command(),
        ),
        (
            "tree lines forming a square across a shared prefix",
            fixtures::supervision_tree(),
        ),
    ] {
        assert!(seed_rule_flags(&t), "the seed rule flags {case}");
        quiet_default(&t);
    }
}

#[test]
fn fp_legitimate_texts_are_quiet_by_default() {
    // A list with a long shared prefix, citations, two similar code blocks compared, a
    // markdown table, templated advancing reasoning.
    for t in [
        fixtures::card_list(),
        fixtures::citations(),
        fixtures::compared_code_blocks(),
        fixtures::markdown_table(),
        fixtures::templated_reasoning(),
        fixtures::xhigh_thinking(),
    ] {
        quiet_default(&t);
    }
}

// ---- loops the default catches that the seed misses ------------------------------------

#[test]
fn short_period_chant_is_caught() {
    // gemini-cli #5813: "nynyny…", 66 characters in all: an answer that is nothing but the
    // chant fires as soon as the engine sees it (a square of 30-character units).
    let t = "ny".repeat(33);
    let f = fire(&Settings::default(), &t).unwrap();
    assert_eq!(unit_len(&f), 2);
    assert_eq!(f.offset, Some(60));
    // The seed needs 200 characters before it even looks.
    assert!(fire(&seed(), &t).is_none());
    // The copies rule reports the 30-character unit.
    assert_eq!(fire(&copies(), &t).map(|f| unit_len(&f)), Some(30));
}

#[test]
fn repeated_short_line_is_caught_on_the_fifth_copy() {
    // localai #969: a 41-character line; prose roots of 33..=64 characters need 3 copies
    // and 201 characters of repetition.
    let line = "I am doing well, thank-you. How are you?\n";
    assert!(fire(&Settings::default(), &line.repeat(4)).is_none());
    let f = fire(&Settings::default(), &line.repeat(5)).unwrap();
    assert_eq!(unit_len(&f), 41);
    assert_eq!(f.offset, Some(201));
    // The copies rule fires on the fourth copy.
    assert_eq!(
        fire(&copies(), &line.repeat(5)).and_then(|f| f.offset),
        Some(164)
    );
}

// ---- configuration -------------------------------------------------------------------------

#[test]
fn options_parse_and_validate_with_key_paths() {
    let build = |t: &str| (REGISTRATION.build)(&t.parse::<toml::Table>().unwrap());
    assert!(build("").is_ok());
    assert!(build("algorithm = \"seed\"\nmax-unit = 3000\nlong-unit = 30\nroot-copies = 2\nmax-filler-run = 0").is_ok());
    let err = build("min-unit = 40\nmax-unit = 30").unwrap_err();
    assert_eq!(err.path(), Some("detectors.tail-periodicity.max-unit"));
    let err = build("max-unit = 10000000").unwrap_err();
    assert_eq!(err.path(), Some("detectors.tail-periodicity.max-unit"));
    let err = build("min-copies = 1").unwrap_err();
    assert_eq!(err.path(), Some("detectors.tail-periodicity.min-copies"));
    let err = build("algoritm = \"seed\"").unwrap_err();
    assert!(err.to_string().contains("algoritm"), "{err}");
    let err = build("algorithm = \"fast\"").unwrap_err();
    assert_eq!(err.path(), Some("detectors.tail-periodicity.algorithm"));
    assert_eq!(Settings::pi_repetition_guard().algorithm, Algorithm::Seed);
}

#[test]
fn memory_is_bounded_by_max_unit_not_message_length() {
    let settings = Settings {
        max_unit: 1000,
        ..Settings::default()
    };
    let mut d = TailPeriodicity::new(settings);
    let mut findings = Vec::new();
    let mut cx = loopguard_core::Cx::manual(0, &mut findings);
    use loopguard_core::{Detector, Event};
    d.observe(&Event::MessageStart, &mut cx);
    let text = fixtures::xhigh_thinking();
    for _ in 0..20 {
        for piece in text.chars().collect::<Vec<_>>().chunks(16) {
            let delta: String = piece.iter().collect();
            d.observe(
                &Event::TextDelta {
                    stream: Stream::Text,
                    delta: &delta,
                },
                &mut cx,
            );
        }
        // A unique marker between rounds keeps the repeats apart.
        d.observe(
            &Event::TextDelta {
                stream: Stream::Text,
                delta: "§",
            },
            &mut cx,
        );
    }
    // Two rings (the run tracker's and the counter tracker's), each of three copies of the
    // longest unit (the engine sees units under 32 Ki characters at their third copy),
    // 3 × 1000 rounded up to 4096: far below the 20 × 9 KB streamed.
    assert!(d.buffered() <= 2 * 4096, "buffered {}", d.buffered());
}
