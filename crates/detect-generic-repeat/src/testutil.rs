//! Helpers shared by the rules' tests: detectors built from the README's presets, and
//! views of findings.

pub(crate) use crate::*;
pub(crate) use loopguard_core::{
    Config, Detector, Finding, Level, Origin, OwnedEvent, Registry, ResultHasher,
};
pub(crate) use loopguard_testkit::{run, Script};
pub(crate) use serde_json::{json, Value};

/// The `[detectors.generic-repeat]` table of the preset `name`, read from the README (so the
/// documented TOML is the tested TOML).
pub(crate) fn preset_table(name: &str) -> toml::Table {
    let mut table =
        loopguard_testkit::registration::readme_preset(include_str!("../README.md"), name, NAME);
    assert_eq!(
        table.remove("enabled").and_then(|v| v.as_bool()),
        Some(true),
        "preset {name} enables the detector"
    );
    table
}

pub(crate) fn det_from(table: &toml::Table) -> Box<dyn Detector> {
    Box::new(GenericRepeat::new(
        Settings::from_table(table).expect("valid settings"),
    ))
}

pub(crate) fn det(toml_text: &str) -> Box<dyn Detector> {
    let t: toml::Table = toml_text.parse().expect("valid TOML");
    det_from(&t)
}

/// The error of options `toml_text`, checked to be at `key` of the detector's table.
pub(crate) fn rejected(toml_text: &str, key: &str) -> ConfigError {
    loopguard_testkit::registration::rejected_at(&REGISTRATION, toml_text, key)
}

pub(crate) fn default_det() -> Box<dyn Detector> {
    det("")
}

pub(crate) fn plg() -> Box<dyn Detector> {
    det_from(&preset_table("pi-loop-guard"))
}

pub(crate) fn prg() -> Box<dyn Detector> {
    det_from(&preset_table("pi-repetition-guard"))
}

pub(crate) fn oc() -> Box<dyn Detector> {
    det_from(&preset_table("openclaw"))
}

/// `n` identical sequential calls: `read` of path `a`, each with the result `X`.
pub(crate) fn same_reads(n: usize) -> Script {
    let mut s = Script::new();
    s.repeat_call(n, "read", json!({"path": "a"}), "X");
    s
}

/// Findings as (event index, level, count).
pub(crate) fn summary(f: &[(usize, Finding)]) -> Vec<(usize, Level, u32)> {
    f.iter().map(|(i, f)| (*i, f.level, f.count)).collect()
}

pub(crate) fn criticals(f: &[(usize, Finding)]) -> Vec<usize> {
    f.iter()
        .filter(|(_, f)| f.level == Level::Critical)
        .map(|(i, _)| *i)
        .collect()
}

pub(crate) fn warnings(f: &[(usize, Finding)]) -> Vec<usize> {
    f.iter()
        .filter(|(_, f)| f.level == Level::Warning)
        .map(|(i, _)| *i)
        .collect()
}

/// A sequential assistant message with one call and no result (yet).
pub(crate) fn attempt(s: &mut Script, tool: &str, args: Value) -> String {
    s.push(OwnedEvent::MessageStart);
    s.push(OwnedEvent::MessageEnd);
    s.tool_call(tool, args)
}

pub(crate) fn dflt() -> Box<dyn Detector> {
    det_from(&preset_table("default"))
}

pub(crate) fn settings_of(t: &str) -> Settings {
    Settings::from_table(&t.parse::<toml::Table>().unwrap()).unwrap()
}

pub(crate) fn default_preset() -> Box<dyn Detector> {
    det_from(&preset_table("default"))
}

/// Two parallel calls with the same results, as one batch.
pub(crate) fn same_batch(s: &mut Script) {
    s.batch(&[
        ("read", json!({"path": "a"}), "A"),
        ("grep", json!({"q": "todo"}), "none"),
    ]);
}
