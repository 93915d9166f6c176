//! Checks of a detector's registration every detector crate makes: it is discovered under its
//! name and code with the documented headings, its README's TOML blocks build, and its option
//! errors name the offending key.

use loopguard_core::{ConfigError, Detector, Registration, Registry};

/// The headings every detector's README has.
pub const README_HEADINGS: [&str; 5] = [
    "## What it detects",
    "## Why it matters",
    "## Example transcript",
    "## Configuration",
    "## False positives",
];

/// Asserts that the registry discovers a detector `name` with `code` whose docs hold every
/// heading of [`README_HEADINGS`].
#[track_caller]
pub fn assert_discoverable(name: &str, code: &str) {
    let reg = Registry::discover().expect("the linked registrations are consistent");
    let r = reg.get(name).expect("the detector is registered");
    assert_eq!(r.code, code);
    for h in README_HEADINGS {
        assert!(r.docs.contains(h), "{h}");
    }
}

/// Builds `reg`'s detector from the options table written in `toml_text`.
pub fn build(reg: &Registration, toml_text: &str) -> Result<Box<dyn Detector>, ConfigError> {
    let table: toml::Table = toml_text.parse().expect("valid TOML");
    (reg.build)(&table)
}

/// Asserts that `toml_text` is rejected at `key` of `reg`'s table
/// (`detectors.<name>.<key>`); returns the error for more checks.
#[track_caller]
pub fn rejected_at(reg: &Registration, toml_text: &str, key: &str) -> ConfigError {
    let Err(err) = build(reg, toml_text) else {
        panic!("{toml_text:?} was accepted");
    };
    let path = format!("detectors.{}.{key}", reg.name);
    assert_eq!(err.path(), Some(path.as_str()), "{toml_text:?}: {err}");
    err
}

/// The TOML blocks (```` ```toml ````) of a README, parsed.
pub fn readme_toml_blocks(readme: &str) -> Vec<toml::Table> {
    readme
        .split("```toml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .map(|b| b.parse().expect("the README's TOML block parses"))
        .collect()
}

/// The `[detectors.<name>]` table of each of a README's TOML blocks, each checked to build
/// with `reg`.
#[track_caller]
pub fn readme_tables(reg: &Registration, readme: &str) -> Vec<toml::Table> {
    readme_toml_blocks(readme)
        .iter()
        .map(|t| {
            let inner = t["detectors"][reg.name]
                .as_table()
                .expect("the block has the detector's table")
                .clone();
            assert!((reg.build)(&inner).is_ok(), "{inner:?} builds");
            inner
        })
        .collect()
}

/// The settings of each of a README's TOML blocks: its `[detectors.<name>]` table (which must
/// build with `reg`) parsed as options and resolved with `resolve`.
#[track_caller]
pub fn readme_settings<O: serde::de::DeserializeOwned, S>(
    reg: &Registration,
    readme: &str,
    resolve: impl Fn(&O) -> Result<S, ConfigError>,
) -> Vec<S> {
    readme_tables(reg, readme)
        .iter()
        .map(|inner| {
            let scope = format!("detectors.{}", reg.name);
            let o: O = loopguard_core::parse_options(&scope, inner).expect("the options parse");
            resolve(&o).expect("the options are valid")
        })
        .collect()
}

/// The `[detectors.<detector>]` table of the README block marked `# preset: <preset>` (so the
/// documented TOML is the tested TOML).
#[track_caller]
pub fn readme_preset(readme: &str, preset: &str, detector: &str) -> toml::Table {
    let marker = format!("# preset: {preset}\n");
    let start = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README has no block for preset {preset}"));
    let rest = &readme[start..];
    let end = rest.find("```").expect("unterminated block");
    let config = loopguard_core::Config::from_toml_str(&rest[..end], Some("README.md"))
        .expect("preset TOML parses");
    config
        .detectors
        .get(detector)
        .cloned()
        .expect("the preset has the detector's table")
}

/// The option checks of one registration's table, for a test that writes several.
#[derive(Clone, Copy, Debug)]
pub struct OptionChecks(pub &'static Registration);

impl OptionChecks {
    /// [`build`] with this registration.
    pub fn build(&self, toml_text: &str) -> Result<Box<dyn Detector>, ConfigError> {
        build(self.0, toml_text)
    }

    /// [`rejected_at`] with this registration.
    #[track_caller]
    pub fn rejected(&self, toml_text: &str, key: &str) -> ConfigError {
        rejected_at(self.0, toml_text, key)
    }

    /// Asserts that `toml_text` is rejected for a key the table does not have.
    #[track_caller]
    pub fn assert_unknown_key(&self, toml_text: &str) {
        match self.build(toml_text) {
            Ok(_) => panic!("{toml_text:?} was accepted"),
            Err(err) => assert!(err.to_string().contains("unknown field"), "{err}"),
        }
    }
}

/// Asserts that the README's TOML blocks, parsed as options and resolved with `resolve`, are
/// the `expected` settings, in order (and that each block's table builds).
#[track_caller]
pub fn assert_readme_settings<O, S>(
    reg: &Registration,
    readme: &str,
    resolve: impl Fn(&O) -> Result<S, ConfigError>,
    expected: &[S],
) where
    O: serde::de::DeserializeOwned,
    S: PartialEq + std::fmt::Debug,
{
    assert_eq!(readme_settings(reg, readme, resolve), expected);
}

/// The registration tests of a detector crate whose README's TOML blocks resolve to the listed
/// settings: `readme_presets_build` ([`assert_readme_settings`] with `from_options`) and
/// `registration_is_discoverable` ([`assert_discoverable`] under `name` and `code`).
///
/// ```ignore
/// loopguard_testkit::registration_tests!(
///     REGISTRATION, "my-detector", "XY001", Settings::from_options, [Settings::default()]
/// );
/// ```
#[macro_export]
macro_rules! registration_tests {
    ($reg:expr, $name:literal, $code:literal, $from_options:expr, [$($settings:expr),* $(,)?]) => {
        #[test]
        fn readme_presets_build() {
            $crate::registration::assert_readme_settings(
                &$reg,
                include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")),
                $from_options,
                &[$($settings),*],
            );
        }

        #[test]
        fn registration_is_discoverable() {
            $crate::registration::assert_discoverable($name, $code);
        }
    };
}
