//! Corpus evaluation: the default settings give no finding at all on sessions labelled
//! `loop = false`; prints what each preset catches (`cargo test -p
//! loopguard-detect-generic-repeat --test corpus -- --nocapture`).
//!
//! The corpus is read in place from `$LOOPGUARD_CORPUS` or `../shared/corpus` relative to
//! the workspace root. When it is absent the test prints a note and passes, except with
//! `CI=true`, where absence is a failure.

use loopguard_core::{Config, Detector, Level, OwnedEvent};
use loopguard_detect_generic_repeat::{GenericRepeat, Settings, NAME};
use loopguard_testkit::corpus::{corpus_dir, events as read_events, labels};

fn preset_table(name: &str) -> toml::Table {
    let readme = include_str!("../README.md");
    let marker = format!("# preset: {name}\n");
    let start = readme.find(&marker).expect("preset block");
    let rest = &readme[start..];
    let end = rest.find("```").expect("block end");
    let config = Config::from_toml_str(&rest[..end], None).expect("preset parses");
    let mut t = config.detectors.get(NAME).cloned().expect("table");
    t.remove("enabled");
    t
}

fn detector(table: &toml::Table) -> Box<dyn Detector> {
    Box::new(GenericRepeat::new(
        Settings::from_table(table).expect("valid settings"),
    ))
}

/// (line of the first finding, line of the first critical, number of findings).
fn evaluate(
    table: &toml::Table,
    events: &[(usize, OwnedEvent)],
) -> (Option<usize>, Option<usize>, usize, Vec<String>) {
    let mut bus = loopguard_core::Bus::new(vec![detector(table)]);
    let mut veto = loopguard_testkit::Veto::default();
    let (mut first, mut crit, mut n, mut keys) = (None, None, 0, Vec::new());
    for (line, e) in events {
        for f in veto.observe(&mut bus, &e.as_event()) {
            n += 1;
            first.get_or_insert(*line);
            if f.level == Level::Critical {
                crit.get_or_insert(*line);
            }
            if keys.len() < 3 {
                keys.push(format!("{}@{line}:{}", f.level.as_str(), f.key));
            }
        }
    }
    (first, crit, n, keys)
}

#[test]
fn default_settings_give_no_finding_on_loop_free_sessions() {
    let Some(dir) = corpus_dir() else { return };
    let labels = labels(&dir);
    assert!(!labels.is_empty());
    // Extra configurations to compare (printed only): `LOOPGUARD_EVAL_CONFIGS` holds TOML
    // tables separated by `|||`.
    let extra = std::env::var("LOOPGUARD_EVAL_CONFIGS").unwrap_or_default();
    let extra: Vec<String> = extra
        .split("|||")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let mut presets: Vec<String> = [
        "default",
        "pi-loop-guard",
        "pi-repetition-guard",
        "openclaw",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut tables: Vec<toml::Table> = presets.iter().map(|p| preset_table(p)).collect();
    for (i, e) in extra.iter().enumerate() {
        presets.push(format!("extra-{i}"));
        tables.push(e.parse().expect("LOOPGUARD_EVAL_CONFIGS entry parses"));
    }
    let mut false_positives: Vec<Vec<String>> = vec![Vec::new(); presets.len()];
    let mut caught = vec![0usize; presets.len()];
    let mut caught_repeat = vec![0usize; presets.len()];
    let mut loops = 0;
    let mut repeat_loops = 0;
    let mut latency: Vec<Vec<i64>> = vec![Vec::new(); presets.len()];
    for l in &labels {
        if !dir.join(&l.path).is_file() {
            continue;
        }
        let events = read_events(&dir, &l.path);
        let kind = l.kind.as_deref().unwrap_or("");
        for (i, t) in tables.iter().enumerate() {
            let (first, crit, n, keys) = evaluate(t, &events);
            match l.loop_.as_str() {
                "false" if n > 0 => false_positives[i].push(format!(
                    "{} ({n} findings: {})",
                    l.path,
                    keys.join(", ")
                )),
                "true" => {
                    if let Some(line) = first {
                        caught[i] += 1;
                        if matches!(kind, "tool-repeat" | "other") {
                            caught_repeat[i] += 1;
                        }
                        if let Some(fe) = l.first_event {
                            latency[i].push(line as i64 - fe as i64);
                        }
                        if i == 0 {
                            eprintln!(
                                "  caught {:<55} kind={:<15} first={line} crit={crit:?} label_first={:?}",
                                l.path, kind, l.first_event
                            );
                        }
                    } else if i == 0 && matches!(kind, "tool-repeat" | "other") {
                        eprintln!("  missed {:<55} kind={}", l.path, kind);
                    }
                }
                _ => {}
            }
        }
        if l.loop_ == "true" {
            loops += 1;
            if matches!(kind, "tool-repeat" | "other") {
                repeat_loops += 1;
            }
        }
    }
    let negatives = labels.iter().filter(|l| l.loop_ == "false").count();
    for (i, p) in presets.iter().enumerate() {
        let mut lat = latency[i].clone();
        lat.sort_unstable();
        let median = lat.get(lat.len() / 2).copied();
        eprintln!(
            "{p:<20} loops caught {}/{loops} (tool-repeat+other {}/{repeat_loops}); false positives {}/{negatives}; \
             median latency vs label first_event {median:?} lines",
            caught[i],
            caught_repeat[i],
            false_positives[i].len()
        );
        for fp in &false_positives[i] {
            eprintln!("    FP {fp}");
        }
    }
    assert!(
        false_positives[0].is_empty(),
        "default settings fired on loop-free sessions: {:#?}",
        false_positives[0]
    );
}
