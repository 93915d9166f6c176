//! End-to-end tests through the facade and the `loopguard` command, in one test binary.

// Test helpers outside `#[test]` functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

mod adversarial;
mod cli;
mod conformance;
mod corpus;
mod examples;
mod presets;
mod replay;
mod support;
