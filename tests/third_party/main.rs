//! A third-party detector crate registers itself through the macro and is discovered once
//! linked; it is configured by name like a built-in one.

use acme_loopguard_detector as _;
use loopguard::orchestrator::{Action, Guard};
use loopguard::{Config, Event, Origin, Registry};
use serde_json::json;

#[test]
fn a_linked_third_party_detector_is_discovered() {
    let registry = Registry::discover().unwrap();
    let reg = registry
        .get("acme-tool-streak")
        .expect("acme-tool-streak is discovered");
    assert_eq!(reg.code, "ACME001");
    assert!(!reg.default_enabled);
    // Built-in detectors are discovered alongside it.
    for r in loopguard::builtin() {
        assert!(registry.get(r.name).is_some(), "{} missing", r.name);
    }
}

#[test]
fn it_takes_part_in_the_default_preset_only_and_is_configurable_by_name() {
    // Its registration declares its table in the `default` preset; the seed presets do not
    // mention it, and without a preset its own default (off) holds.
    let guard = Guard::builder().config(Config::default()).build().unwrap();
    assert!(guard.detector_names().contains(&"acme-tool-streak"));
    let preset = loopguard::preset("default").unwrap();
    assert_eq!(
        preset.detectors["acme-tool-streak"]["threshold"].as_integer(),
        Some(25)
    );
    for seed in ["pi-loop-guard", "pi-repetition-guard", "openclaw"] {
        let guard = Guard::builder().preset(seed).build().unwrap();
        assert!(
            !guard.detector_names().contains(&"acme-tool-streak"),
            "{seed}"
        );
    }
    let guard = Guard::builder()
        .config(Config::default())
        .no_preset()
        .build()
        .unwrap();
    assert!(!guard.detector_names().contains(&"acme-tool-streak"));

    let c = Config::from_toml_str(
        "[detectors.acme-tool-streak]\nenabled = true\nthreshold = 3\n",
        Some("acme.toml"),
    )
    .unwrap();
    let mut guard = Guard::builder().config(c).build().unwrap();
    assert!(guard.detector_names().contains(&"acme-tool-streak"));
    guard.observe(&Event::User {
        text: "find the loader",
        origin: Origin::Human,
    });
    let mut steered_at = None;
    for i in 0..3 {
        let args = json!({"pattern": format!("word{i}")});
        let id = format!("c{i}");
        let v = guard.observe(&Event::ToolCall {
            id: &id,
            tool: "grep",
            args: &args,
            batch: None,
        });
        if v.findings()
            .iter()
            .any(|f| f.detector == "acme-tool-streak")
        {
            assert_eq!(v.action(), Action::Steer);
            steered_at = Some(i);
        }
        let content = format!("{i} matches");
        guard.observe(&Event::ToolResult {
            id: &id,
            tool: "grep",
            content: &content,
            is_error: false,
            images: 0,
            details: None,
        });
    }
    assert_eq!(steered_at, Some(2));

    let bad = Config::from_toml_str(
        "[detectors.acme-tool-streak]\nenabled = true\ntreshold = 3\n",
        Some("acme.toml"),
    )
    .unwrap();
    let err = Guard::builder().config(bad).build().unwrap_err();
    assert!(err.to_string().contains("acme.toml"), "{err}");
    assert!(
        err.to_string()
            .contains("detectors.acme-tool-streak.treshold"),
        "{err}"
    );
}

#[test]
fn builtin_lists_every_linked_built_in_detector() {
    let discovered: Vec<&str> = Registry::discover()
        .unwrap()
        .names()
        .into_iter()
        .filter(|n| loopguard::BUILTIN_NAMES.contains(n))
        .collect();
    let builtin: Vec<&str> = loopguard::builtin().iter().map(|r| r.name).collect();
    assert_eq!(builtin, discovered);
    // With the `full` feature, that is every built-in detector.
    assert_eq!(builtin, loopguard::BUILTIN_NAMES);
}

#[test]
fn its_environment_variables_configure_it() {
    let mut c = Config::default();
    c.apply_env([("ACME_TOOL_STREAK_THRESHOLD".to_owned(), "2".to_owned())])
        .unwrap();
    let mut guard = Guard::builder().config(c).build().unwrap();
    guard.observe(&Event::User {
        text: "look around",
        origin: Origin::Human,
    });
    let mut warned = Vec::new();
    for i in 0..2 {
        let args = json!({"path": format!("dir{i}")});
        let id = format!("c{i}");
        let v = guard.observe(&Event::ToolCall {
            id: &id,
            tool: "ls",
            args: &args,
            batch: None,
        });
        warned.push(
            v.findings()
                .iter()
                .any(|f| f.detector == "acme-tool-streak"),
        );
        guard.observe(&Event::ToolResult {
            id: &id,
            tool: "ls",
            content: "a b",
            is_error: false,
            images: 0,
            details: None,
        });
    }
    assert_eq!(
        warned,
        [false, true],
        "the 2nd call in a row warns at threshold 2"
    );
    let mut bad = Config::default();
    let err = bad
        .apply_env([("ACME_TOOL_STREAK_THRESHOLD".to_owned(), "two".to_owned())])
        .unwrap_err();
    assert!(
        err.to_string().contains("ACME_TOOL_STREAK_THRESHOLD"),
        "{err}"
    );
}

#[test]
fn the_detectors_command_lists_a_linked_third_party_detector() {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = loopguard_cli::run(["loopguard", "detectors"], &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let out = String::from_utf8_lossy(&out);
    let row = out
        .lines()
        .find(|l| l.starts_with("acme-tool-streak"))
        .unwrap_or_else(|| panic!("acme-tool-streak missing:\n{out}"));
    assert!(row.contains("ACME001"), "{row}");
}
