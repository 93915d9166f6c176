//! # loopguard-orchestrator
//!
//! Detectors judge; this crate decides. A [`Guard`] drives the core's event [`Bus`], and turns
//! the findings of each event into one [`Verdict`]: continue, steer the model, block the tool
//! call, compact the context, or abort the request.
#![warn(missing_docs)]

mod guard;
mod verdict;

pub use guard::{Guard, GuardBuilder, GuardOptions};
pub use verdict::{Action, Delivery, Verdict};

pub use loopguard_core::Bus;
