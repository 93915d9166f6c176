//! Helpers shared by the tests that run the `loopguard` binary.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The `loopguard` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loopguard"))
}

/// Asserts that the run exited with 0, showing its stderr otherwise.
#[track_caller]
pub fn assert_success(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
