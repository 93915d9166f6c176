//! Invariants: the online engine agrees exactly with the brute-force oracle (position and
//! unit), chunking never matters, snapshot → restore mid-message never changes a finding,
//! and no input makes the detector panic or exceed its memory cap.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use loopguard_core::{Detector, Stream};
use loopguard_detect_tail_periodicity::{oracle, Finder, Rule, Settings, TailPeriodicity};
use loopguard_testkit::{decode_events, run, Script};
use proptest::prelude::*;

/// Random texts over small alphabets, with planted repeats (nested periods, multi-byte).
fn arb_text() -> impl Strategy<Value = String> {
    let alphabet = prop_oneof![
        Just("ab"),
        Just("abc"),
        Just("aé🙂"),
        Just("xyz \n"),
        // Mostly filler, line feeds among it: runs longer than the filler cut, across lines.
        Just(".- \n\nx"),
        // Lines that end as code does, and lines that do not: roots read as code or not.
        Just("ab;{ \n"),
        Just("abcdefghij")
    ];
    (
        alphabet,
        prop::collection::vec((0usize..40, 0usize..4, 0usize..24), 1..8),
    )
        .prop_map(|(alpha, parts)| {
            let chars: Vec<char> = alpha.chars().collect();
            let mut out: Vec<char> = Vec::new();
            let mut seed = 7usize;
            for (len, copies, noise) in parts {
                let unit: Vec<char> = (0..len)
                    .map(|i| {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345 + i);
                        chars[(seed >> 16) % chars.len()]
                    })
                    .collect();
                for _ in 0..copies.max(1) {
                    out.extend(&unit);
                }
                // A nested period: the doubled unit repeated once more with a suffix.
                if copies == 3 {
                    let twice: Vec<char> = unit.iter().chain(unit.iter()).copied().collect();
                    out.extend(&twice);
                }
                for _ in 0..noise {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(99);
                    out.push(chars[(seed >> 16) % chars.len()]);
                }
            }
            out.into_iter().collect()
        })
}

/// Longer texts with planted repeats of units up to 150 characters (the hashed levels of the
/// engine take part from about 2 × the gram length, 15 characters by default).
fn arb_long_text() -> impl Strategy<Value = String> {
    let alphabet = prop_oneof![
        Just("ab"),
        Just("abcd"),
        Just("abcdefghijklmnop "),
        Just("aé🙂 x")
    ];
    (
        alphabet,
        prop::collection::vec((0usize..150, 0usize..4, 0usize..60, any::<bool>()), 1..6),
        any::<u64>(),
    )
        .prop_map(|(alpha, parts, mut seed)| {
            let chars: Vec<char> = alpha.chars().collect();
            let mut pick = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                chars[(seed % chars.len() as u64) as usize]
            };
            let mut out: Vec<char> = Vec::new();
            for (len, copies, noise, nudge) in parts {
                let unit: Vec<char> = (0..len).map(|_| pick()).collect();
                for c in 0..copies.max(1) {
                    out.extend(&unit);
                    // A near repeat: one character changed in the middle of a copy.
                    if nudge && c == 0 && len > 2 {
                        let at = out.len() - len / 2;
                        out[at] = pick();
                    }
                }
                out.extend((0..noise).map(|_| pick()));
            }
            out.into_iter().collect()
        })
}

fn arb_settings() -> impl Strategy<Value = Settings> {
    (
        1usize..12,
        0usize..40,
        2usize..4,
        0usize..30,
        2usize..5,
        0usize..4,
    )
        .prop_map(|(min, extra, copies, long, root, filler)| Settings {
            min_unit: min,
            max_unit: min + extra,
            min_copies: copies,
            long_unit: long,
            root_copies: root.min(2 * copies),
            max_filler_run: filler,
            rule: Rule::Copies,
            ..Settings::default()
        })
}

fn detector_fire(
    settings: &Settings,
    pieces: &[(Stream, &str)],
    chunk: usize,
) -> Option<(u64, String)> {
    let mut s = Script::new();
    s.message_streams(pieces, chunk);
    let found = run(Box::new(TailPeriodicity::new(settings.clone())), s.events());
    assert!(found.len() <= 1, "at most one finding per message");
    found
        .first()
        .map(|(_, f)| (f.offset.unwrap_or(0), f.key.clone()))
}

/// `text` as a thinking stream up to its `split`th character, then a text stream: the
/// pieces a host streams, so an empty one is left out (a script sends no delta for it, while
/// the oracle would count the stream it names as switched to).
fn thinking_then_text(text: &str, split: usize) -> Vec<(Stream, &str)> {
    let cut = text
        .char_indices()
        .nth(split)
        .map_or(text.len(), |(i, _)| i);
    [
        (Stream::Thinking, &text[..cut]),
        (Stream::Text, &text[cut..]),
    ]
    .into_iter()
    .filter(|(_, piece)| !piece.is_empty())
    .collect()
}

/// The detector's finding (offset, key) is at the oracle's (offset, unit), under a key that
/// names the unit (the root, for the evidence rule).
fn agrees(got: Option<(u64, String)>, want: Option<(u64, usize)>) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.as_ref().map(|g| g.0), want.map(|w| w.0));
    if let (Some((_, key)), Some((_, q))) = (got, want) {
        prop_assert!(
            key.starts_with(&format!("tail-periodicity/{q}/")),
            "key {} unit {}",
            key,
            q
        );
    }
    Ok(())
}

/// The evidence rule on `text` (in a fence when `fence`, thinking up to `split`, in deltas
/// of `chunk`) fires where its oracle says, with these settings.
fn evidence_agrees(
    text: &str,
    min: usize,
    scale: u32,
    chant: usize,
    fence: bool,
    split: usize,
    chunk: usize,
) -> Result<(), TestCaseError> {
    let settings = Settings {
        min_unit: min,
        evidence_scale: scale,
        chant_copies: chant,
        // The oracle models exact runs; runs with numbers masked are tested in evidence.rs.
        counter_noise: false,
        ..Settings::default()
    };
    let body = if fence {
        format!("```\n{text}")
    } else {
        text.to_owned()
    };
    let pieces = thinking_then_text(&body, split);
    let want = oracle::evidence_fire(&settings, &pieces);
    agrees(detector_fire(&settings, &pieces, chunk), want)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn finder_agrees_with_oracle_at_every_position(text in arb_text(), min in 1usize..10, extra in 0usize..50, copies in 2usize..4) {
        let seq: Vec<u32> = text.chars().map(u32::from).collect();
        let mut f = Finder::new(min, min + extra, copies);
        for n in 1..=seq.len() {
            let got = f.push(seq[n - 1]).map(|q| q as usize);
            let want = oracle::tail_unit(&seq, n, min, min + extra, copies);
            prop_assert_eq!(got, want, "n = {}", n);
        }
    }

    #[test]
    fn finder_with_long_units_agrees_with_oracle(text in arb_long_text(), min in 10usize..45, extra in 0usize..400, copies in 2usize..4, bits in 1u32..11) {
        let seq: Vec<u32> = text.chars().map(u32::from).collect();
        let mut f = Finder::new(min, min + extra, copies);
        // The same search through the sparse tier for every level it can serve (units of a
        // batch, 128, or more), with few hash buckets (many collisions).
        let mut sparse = Finder::with_index(min, min + extra, copies, bits, 1);
        for n in 1..=seq.len() {
            let got = f.push(seq[n - 1]).map(|q| q as usize);
            let got_sparse = sparse.push(seq[n - 1]).map(|q| q as usize);
            let want = oracle::tail_unit(&seq, n, min, min + extra, copies);
            prop_assert_eq!(got, want, "n = {}", n);
            prop_assert_eq!(got_sparse, want, "sparse, n = {}", n);
        }
    }

    #[test]
    fn detector_with_default_like_settings_fires_where_the_oracle_does(
        text in arb_long_text(),
        min in 20usize..40,
        extra in 0usize..300,
        long in 40usize..200,
        root in 2usize..5,
        split in 0usize..400,
    ) {
        let settings = Settings {
            min_unit: min,
            max_unit: min + extra,
            long_unit: long,
            root_copies: root.min(4),
            rule: Rule::Copies,
            ..Settings::default()
        };
        let pieces = thinking_then_text(&text, split);
        let want = oracle::first_fire(&settings, &pieces);
        agrees(detector_fire(&settings, &pieces, 16), want)?;
    }

    #[test]
    fn detector_fires_where_the_oracle_does(text in arb_text(), settings in arb_settings(), split in 0usize..200, chunk in 1usize..20) {
        let pieces = thinking_then_text(&text, split);
        let want = oracle::first_fire(&settings, &pieces);
        agrees(detector_fire(&settings, &pieces, chunk), want)?;
    }

    #[test]
    fn evidence_rule_fires_where_its_oracle_does(
        text in arb_text(),
        min in 4usize..40,
        scale in 10u32..60,
        chant in prop_oneof![Just(0usize), Just(4usize), Just(16usize)],
        fence in any::<bool>(),
        split in 0usize..400,
        chunk in 1usize..20,
    ) {
        evidence_agrees(&text, min, scale, chant, fence, split, chunk)?;
    }

    #[test]
    fn evidence_rule_at_three_copies_fires_where_its_oracle_does(
        text in arb_long_text(),
        unit in 0usize..150,
        reps in 0usize..12,
        min in 4usize..40,
        scale in 60u32..200,
        chant in prop_oneof![Just(0usize), Just(2usize), Just(3usize), Just(4usize), Just(16usize)],
        fence in any::<bool>(),
        split in 0usize..400,
        chunk in 1usize..20,
    ) {
        // At these scales the engine mostly sees runs at their third copy (see
        // `engine_copies`), the short chants apart. The text's last `unit` characters
        // repeated `reps` times more make runaways long enough to reach these thresholds.
        let chars: Vec<char> = text.chars().collect();
        let last: String = chars[chars.len().saturating_sub(unit)..].iter().collect();
        let text = format!("{text}{}", last.repeat(reps));
        evidence_agrees(&text, min, scale, chant, fence, split, chunk)?;
    }

    #[test]
    fn runs_inside_words_of_data_fire_where_the_oracle_says(
        lead in "[a-z <\"=]{0,30}",
        word in "[A-Za-z0-9+/]{0,70}",
        root in "[A0]{1}|[A-Za-z0-9]{2}|[A-Za-z0-9+/,\\[\\]]{3,64}|[a-z ]{2,6}",
        copies in 1usize..400,
        more in 0usize..8,
        tail in "[A-Za-z0-9=\"/> \n]{0,12}",
        scale in 10u32..150,
        fence in any::<bool>(),
        split in 0usize..100,
        chunk in 1usize..20,
    ) {
        // A word of data of any length, then a run of a root with or without whitespace,
        // long enough at times for the code or data rows (copies × more).
        let run = root.repeat(copies * (1 + more * 3));
        let text = format!("{lead}{word}{run}{tail}");
        evidence_agrees(&text, 30, scale, 16, fence, split, chunk)?;
    }

    #[test]
    fn chants_fire_where_the_oracle_says(
        root in "[a-c]{1,8}|[a-z ]{9,40}",
        copies in 1usize..40,
        lead in prop_oneof![Just(""), Just(" "), Just("\n  ")],
        tail in "[a-z]{0,3}",
        min in prop_oneof![Just(1usize), Just(5usize), Just(30usize)],
        chant in prop_oneof![Just(0usize), Just(3usize), Just(4usize), Just(16usize)],
        chunk in 1usize..20,
    ) {
        let settings = Settings { min_unit: min, chant_copies: chant, ..Settings::default() };
        let text = format!("{lead}{}{tail}", root.repeat(copies));
        let pieces = [(Stream::Text, text.as_str())];
        let want = oracle::evidence_fire(&settings, &pieces);
        agrees(detector_fire(&settings, &pieces, chunk), want)?;
    }

    #[test]
    fn a_message_after_others_fires_as_on_a_new_detector(
        earlier in prop::collection::vec((arb_long_text(), 0u8..3), 1..4),
        text in arb_text(),
        min in 4usize..40,
        scale in 10u32..60,
        chunk in 1usize..20,
    ) {
        // A detector reuses the buffers of its earlier messages (those that fired or not,
        // short or long): what it says of a message is what a new detector says, once the
        // message before it is whole (it ends its last line, a tool call follows it, or a
        // user message that asks for more than its rest).
        let settings = Settings { min_unit: min, evidence_scale: scale, ..Settings::default() };
        let mut s = Script::new();
        for (e, end) in &earlier {
            match end {
                0 => {
                    s.message_streams(&[(Stream::Text, &format!("{e}\n"))], chunk);
                }
                1 => {
                    s.message_streams(&[(Stream::Text, e.as_str())], chunk);
                    s.call("read", serde_json::json!({"path": "a"}), "x");
                }
                _ => {
                    s.message_streams(&[(Stream::Text, e.as_str())], chunk);
                    s.user("Now show me the other file, the one that defines the parser.");
                }
            }
        }
        let from = s.events().len();
        s.message_streams(&[(Stream::Text, text.as_str())], chunk);
        let found = run(Box::new(TailPeriodicity::new(settings.clone())), s.events());
        let last: Vec<(u64, String)> = found
            .into_iter()
            .filter(|(i, _)| *i >= from)
            .map(|(_, f)| (f.offset.unwrap_or(0), f.key))
            .collect();
        let alone = detector_fire(&settings, &[(Stream::Text, text.as_str())], chunk);
        prop_assert_eq!(last.first().cloned(), alone);
        prop_assert!(last.len() <= 1);
    }

    #[test]
    fn a_cut_message_continued_reads_as_one_message(
        words in prop::collection::vec(0usize..16, 250..400),
        text in arb_text(),
        min in 4usize..40,
        scale in 10u32..60,
        chunk in 1usize..20,
    ) {
        // A message cut inside a line (long, not ending a sentence or a line) and the next
        // one after a short "continue" are one text: the second fires where the two written
        // as one message fire, with the same unit.
        // Words drawn at random, a line break now and then: a long text with no run.
        const WORDS: [&str; 16] = [
            "parser", "cache", "index", "token", "buffer", "stream", "guard", "detector",
            "widget", "schema", "render", "layout", "vector", "matrix", "event", "replay",
        ];
        let mut first = String::new();
        for (i, w) in words.iter().enumerate() {
            first.push_str(WORDS[*w]);
            first.push(if i % 12 == 11 { '\n' } else { ' ' });
        }
        first.push_str("and the line is cut");
        let settings = Settings { min_unit: min, evidence_scale: scale, ..Settings::default() };
        prop_assume!(detector_fire(&settings, &[(Stream::Text, first.as_str())], chunk).is_none());
        let mut s = Script::new();
        s.message_streams(&[(Stream::Text, first.as_str())], chunk);
        s.user("continue");
        s.message_streams(&[(Stream::Text, text.as_str())], chunk);
        let split: Vec<String> = run(Box::new(TailPeriodicity::new(settings.clone())), s.events())
            .into_iter()
            .map(|(_, f)| f.key)
            .collect();
        let joined = format!("{first}{text}");
        let one = detector_fire(&settings, &[(Stream::Text, joined.as_str())], chunk)
            .map(|(_, key)| key);
        prop_assert_eq!(split.first().cloned(), one);
        prop_assert!(split.len() <= 1);
    }

    #[test]
    fn chunking_never_changes_the_finding(text in arb_text(), a in 1usize..40, b in 1usize..40) {
        let settings = Settings { min_unit: 4, long_unit: 8, ..Settings::default() };
        let pieces = [(Stream::Text, text.as_str())];
        prop_assert_eq!(detector_fire(&settings, &pieces, a), detector_fire(&settings, &pieces, b));
    }

    #[test]
    fn snapshot_restore_mid_stream_changes_nothing(text in arb_text(), cut in 0usize..60) {
        let settings = Settings { min_unit: 4, long_unit: 8, ..Settings::default() };
        let mut s = Script::new();
        s.message_chunked(Stream::Text, &text, 7);
        let events = s.into_events();
        let straight = run(Box::new(TailPeriodicity::new(settings.clone())), &events);
        let cut = cut.min(events.len());
        let mk = || vec![Box::new(TailPeriodicity::new(settings.clone())) as Box<dyn Detector>];
        let mut first = loopguard_core::Bus::new(mk());
        let mut got = Vec::new();
        for (i, e) in events[..cut].iter().enumerate() {
            got.extend(first.observe(&e.as_event()).into_iter().map(|f| (i, f)));
        }
        // Continue on a fresh bus restored from a JSON snapshot of the first.
        let snap = serde_json::to_string(&first.snapshot().unwrap()).unwrap();
        let mut second = loopguard_core::Bus::new(mk());
        second.restore(&serde_json::from_str(&snap).unwrap()).unwrap();
        for (i, e) in events.iter().enumerate().skip(cut) {
            got.extend(second.observe(&e.as_event()).into_iter().map(|f| (i, f)));
        }
        prop_assert_eq!(straight, got);
    }

    #[test]
    fn arbitrary_event_streams_never_panic_and_stay_bounded(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let events = decode_events(&bytes);
        let settings = Settings { max_unit: 200, ..Settings::default() };
        let mut d = TailPeriodicity::new(settings);
        let mut findings = Vec::new();
        let mut cx = loopguard_core::Cx::manual(0, &mut findings);
        for e in &events {
            d.observe(&e.as_event(), &mut cx);
            prop_assert!(d.buffered() <= 4 * 1024);
        }
        for f in &findings {
            prop_assert_eq!(f.level, loopguard_core::Level::Critical);
            prop_assert!(f.sample.as_ref().is_some_and(|s| s.chars().count() <= 201));
        }
    }
}

/// A chant from the first character of an answer with no thinking: the oracle was given an
/// empty thinking piece that no delta carries, and counted a stream switch before the text.
#[test]
fn a_chant_with_no_thinking_before_it_fires_where_the_oracle_says() {
    let text = "a".repeat(50);
    evidence_agrees(&text, 4, 60, 2, false, 0, 1).unwrap();
}

proptest! {
    // Each case streams over 4,000 characters, and the oracle reads units up to 1,400.
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn runs_on_long_lines_fire_where_the_oracle_says(
        lead_len in 3_950usize..4_250,
        breaks in prop::collection::vec(0usize..4_250, 0..3),
        root in "0|[A-Za-z0-9;,]{2,12}|[a-z ]{3,9}",
        copies in 1usize..700,
        tail in "[A-Za-z0-9 \n]{0,12}",
        fence in any::<bool>(),
        chunk in 1usize..40,
    ) {
        // A line of machine-written text around `LONG_LINE_CHARS` long (with a line break
        // here and there, or none), then a run.
        let mut lead = String::new();
        let mut i = 0u32;
        while lead.len() < lead_len {
            lead.push_str(&format!("item {i} is {} ", i * 7 % 13));
            i += 1;
        }
        lead.truncate(lead_len);
        let mut lead: Vec<char> = lead.chars().collect();
        for b in breaks {
            if let Some(c) = lead.get_mut(b) {
                *c = '\n';
            }
        }
        let lead: String = lead.into_iter().collect();
        let text = format!("{lead}{}{tail}", root.repeat(copies));
        let settings = Settings {
            // The ring holds the line ahead of the run (three units of 1,400).
            max_unit: 1_400,
            counter_noise: false,
            ..Settings::default()
        };
        let body = if fence { format!("```\n{text}") } else { text };
        let pieces = [(Stream::Text, body.as_str())];
        let want = oracle::evidence_fire(&settings, &pieces);
        agrees(detector_fire(&settings, &pieces, chunk), want)?;
    }
}

/// Code whose lines end in a filler run that goes on into the next line's indent and
/// punctuation (longer than the filler cut on both sides of the line feed), taken by the
/// quiet loop of code: the detector fires where the oracle (`Prep::map`) does, in any
/// deltas, whether the lines repeat or differ only past the cut.
#[test]
fn filler_runs_across_lines_in_code_agree_with_the_oracle() {
    let heads = [
        "*.~--; *.~--; ",
        "*.~--; ; ",
        "*:~--; *.~--; ",
        "*.~---; ; ",
    ];
    for lines in [1usize, 4] {
        let mut text = String::from("```text\n");
        for k in 0..60 {
            text.push_str("    ");
            text.push_str(heads[k % lines]);
            text.push_str("[B1, V6]; xn--ykh.xn------mzc; ; ;  # *.~-- +-+-+\n");
        }
        for scale in [20u32, 100, 1000] {
            for chunk in [1usize, 7, 16, 64] {
                evidence_agrees(&text, 30, scale, 16, false, 0, chunk).unwrap();
            }
        }
    }
}
