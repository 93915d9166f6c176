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
fn it_is_off_by_default_and_configurable_by_name() {
    let guard = Guard::builder().config(Config::default()).build().unwrap();
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
        .filter(|n| loopguard::core::BUILTIN_NAMES.contains(n))
        .collect();
    let builtin: Vec<&str> = loopguard::builtin().iter().map(|r| r.name).collect();
    assert_eq!(builtin, discovered);
    // With the `full` feature, that is every built-in detector.
    assert_eq!(builtin, loopguard::core::BUILTIN_NAMES);
}
