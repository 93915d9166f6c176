//! # loopguard-orchestrator
//!
//! Detectors judge; this crate decides. A [`Guard`] drives the core's event [`Bus`], and turns
//! the findings of each event into one [`Verdict`]: continue, steer the model, block the tool
//! call, compact the context, or abort the request.
//!
//! - **Escalation**: warn (a steer the model sees) → block (the reason is the error the model
//!   sees; optionally `terminate`, optionally the whole batch) → abort (a stable code such as
//!   `loop_aborted:generic-repeat`) after `abort-after-blocks` blocks in a user turn or
//!   `abort-after-run-blocks` in a run. The result of a call the guard refused is never shown
//!   to the detectors, so a streak is never reset by the guard's own veto.
//! - **Budget**: `steers-per-turn` steers per user turn (escalating wording), then
//!   `compactions-per-turn` compactions, each with a fresh budget and a "continue" steer, then
//!   give up: blocks and aborts stay, steers stop. The guard's own steer is never a new turn.
//! - **Delivery**: a steer after a block or a text abort waits for the settle point
//!   (`RunEnd`), where it starts a fresh run and so never strands.
//! - **Control**: only the user turns the guard on or off ([`Guard::command`], config).
//! - **Presets**: [`PRESETS`]; `default` is loopguard's own; the others reproduce the seeds.
//! - **State**: [`Guard::snapshot`] / [`Guard::restore`] carry a whole session.
#![warn(missing_docs)]

mod guard;
pub mod openclaw;
mod options;
pub mod presets;
mod verdict;
mod wording;

pub use guard::{Guard, GuardBuilder, GuardTemplate, SNAPSHOT_VERSION};
pub use openclaw::config_from_openclaw_json;
#[allow(deprecated)]
pub use options::{Dedup, GuardOptions, GuardSettings, Policy, PolicyOptions, Wording};
pub use presets::{
    check_config, preset, preset_with, render_resolved, resolve, resolve_with, PRESETS,
};
pub use verdict::{Action, Delivery, Verdict};
pub use wording::{CONTINUE_STEER, STEER_PREFIX};

pub use loopguard_core::Bus;
