//! Corpus evaluation: the default settings give no finding at all on sessions labelled
//! `loop = false`; prints what each preset catches (`cargo test -p
//! loopguard-detect-generic-repeat --test corpus -- --nocapture`).
//!
//! The corpus is read in place from `$LOOPGUARD_CORPUS` or `../shared/corpus` relative to
//! the workspace root. When it is absent the test prints a note and passes, except with
//! `CI=true`, where absence is a failure.

use loopguard_core::Detector;
use loopguard_detect_generic_repeat::{GenericRepeat, Settings, NAME};
use loopguard_testkit::corpus::check;
use loopguard_testkit::registration::readme_preset;

fn preset_table(name: &str) -> toml::Table {
    let mut t = readme_preset(include_str!("../README.md"), name, NAME);
    t.remove("enabled");
    t
}

fn detector(table: &toml::Table) -> Box<dyn Detector> {
    Box::new(GenericRepeat::new(
        Settings::from_table(table).expect("valid settings"),
    ))
}

#[test]
fn default_settings_give_no_finding_on_loop_free_sessions() {
    // Extra configurations to compare (printed only): `LOOPGUARD_EVAL_CONFIGS` holds TOML
    // tables separated by `|||`.
    let extra = std::env::var("LOOPGUARD_EVAL_CONFIGS").unwrap_or_default();
    let mut configs: Vec<(String, toml::Table)> = [
        "default",
        "pi-loop-guard",
        "pi-repetition-guard",
        "openclaw",
    ]
    .iter()
    .map(|p| (p.to_string(), preset_table(p)))
    .collect();
    for (i, e) in extra
        .split("|||")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .enumerate()
    {
        let table = e.parse().expect("LOOPGUARD_EVAL_CONFIGS entry parses");
        configs.push((format!("extra-{i}"), table));
    }
    let mut default_fps = None;
    for (name, table) in &configs {
        let Some(r) = check(&|| detector(table), None) else {
            return;
        };
        eprintln!("{}", r.summary(name));
        if default_fps.is_none() {
            default_fps = Some(r.false_positives);
        }
    }
    let fps = default_fps.unwrap_or_default();
    assert!(
        fps.is_empty(),
        "default settings fired on loop-free sessions: {fps:#?}"
    );
}
