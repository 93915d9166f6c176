//! The corpus helpers shared by detector tests (see `loopguard_testkit::corpus`).
#![allow(unused_imports)]

pub use loopguard_testkit::corpus::*;
