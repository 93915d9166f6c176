//! `loopguard` with `default-features = false, features = ["generic-repeat"]` links exactly
//! `generic-repeat`.
//!
//! Cargo unifies features across the packages of one build: under `cargo test --workspace`
//! another package turns the facade's `full` feature on, and this crate then sees every
//! detector. The exact check needs its own build — `cargo test -p
//! loopguard-facade-feature-test` — and is skipped, with a note, when features were unified.
//! What holds in every build is checked always: the detectors linked are exactly those of the
//! facade features that are on.

use loopguard::orchestrator::Guard;
use loopguard::{Config, ConfigError, Registry};

fn selected() -> Vec<&'static str> {
    loopguard::builtin().iter().map(|r| r.name).collect()
}

/// Whether this build has the facade with only the features this crate asked for.
fn alone() -> bool {
    let alone = selected() == ["generic-repeat"];
    if !alone {
        eprintln!(
            "note: the facade was built with features {:?} (unified by a multi-package build); \
             run `cargo test -p loopguard-facade-feature-test` for the one-feature check",
            selected()
        );
    }
    alone
}

#[test]
fn discovery_finds_exactly_the_detectors_of_the_enabled_features() {
    let registry = Registry::discover().unwrap();
    assert_eq!(registry.names(), selected());
    assert!(selected().contains(&"generic-repeat"));
}

#[test]
fn discovery_finds_exactly_the_selected_detector() {
    if !alone() {
        return;
    }
    assert_eq!(Registry::discover().unwrap().names(), ["generic-repeat"]);
}

#[test]
fn a_guard_runs_it_and_an_unlinked_detector_is_named_as_such() {
    if !alone() {
        return;
    }
    let guard = Guard::builder().config(Config::default()).build().unwrap();
    assert_eq!(guard.detector_names(), ["generic-repeat"]);
    let c =
        Config::from_toml_str("[detectors.ping-pong]\nenabled = true\n", Some("x.toml")).unwrap();
    let err = Guard::builder().config(c).build().unwrap_err();
    assert!(matches!(err, ConfigError::NotLinked { .. }), "{err}");
    assert!(err.to_string().contains("`ping-pong` feature"), "{err}");
}
