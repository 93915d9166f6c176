//! # loopguard-core
//!
//! The vocabulary of loopguard: the [`Event`] model and its lifecycle words, the [`Detector`]
//! trait with its [`Interest`] mask, the event [`Bus`], [`Finding`]s, link-time
//! [`Registration`] through [`register_detector!`], the [`Registry`], fingerprints and the
//! configuration envelope. No detectors and no policy live here: detectors judge, the
//! orchestrator (`loopguard-orchestrator`) decides.
//!
//! ## Writing a detector crate
//!
//! Depend on `loopguard-core` only, implement [`Detector`], declare a `const`
//! [`Registration`] and submit it with [`register_detector!`]. Programs that want your
//! detector must link your crate: tell them to add it as a dependency and write
//! `use your_crate as _;` once (link-time registration only sees crates that are linked).
#![warn(missing_docs)]

mod bus;
mod config;
mod detector;
mod error;
mod event;
mod finding;
mod fingerprint;
pub mod history;
pub mod json;
mod normalize;
pub mod normalizers;
pub mod options;
mod pool;
pub mod prose;
mod registry;
pub mod shape;
mod swar;
pub mod tools;
pub mod wrapping;

pub use bus::{call_fingerprint, Announced, Bus, Lifecycle, MAX_OWN_MESSAGES, MAX_PENDING_CALLS};
pub use config::{
    build_detector, get_key, line_of, merge_tables, parse_options, set_key, take_key, Config,
    KeyLines, GUARD_ENV,
};
pub use detector::{CallInfo, Cx, Detector, Facts, ResultInfo, RunScope, StateError};
pub use error::{ConfigError, Location};
pub use event::{
    call_id_of, decode_args, Event, EventKind, Interest, Origin, OwnedEvent, Stream, FIELD_ALIASES,
};
pub use finding::{truncate_chars, Finding, Level, MAX_EVIDENCE};
pub use fingerprint::{
    args_fingerprint, args_fingerprint_str, canonical_json, fnv1a, result_fingerprint, ArgsError,
    Fingerprint, ResultHasher, FNV1A_START,
};
pub use normalize::{Exact, Normalizer, Normalizers, ResultInput, TextPass};
pub use options::Scope;
pub use pool::StringPool;
pub use registry::{
    BuildFn, EnvKind, EnvVar, MasterSwitch, OpenClawImport, OptionDoc, PresetTable, Registration,
    Registry, Renamed,
};
pub use tools::{ToolKind, Tools};

/// Maps with a fixed-seed hasher, so iteration and hashing are deterministic across runs.
pub type FixedMap<K, V> = std::collections::HashMap<K, V, FixedState>;

/// A fixed-seed `ahash` state.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedState;

impl std::hash::BuildHasher for FixedState {
    type Hasher = ahash::AHasher;
    fn build_hasher(&self) -> ahash::AHasher {
        ahash::RandomState::with_seeds(0x6c6f_6f70, 0x6775_6172, 0x6420_6c67, 0x2d63_6f72)
            .build_hasher()
    }
}

/// The `toml` crate, re-exported: [`BuildFn`] takes a `toml::Table`, so a third-party detector
/// can name it without a `toml` dependency of its own (and without a version mismatch).
pub use toml;

#[doc(hidden)]
pub mod __private {
    pub use crate::registry::{KnownNames, Submitted};
    pub use inventory;
    pub use serde;
    pub use serde_json;
}
