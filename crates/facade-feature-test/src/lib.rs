//! A crate outside the facade that depends on `loopguard` with `default-features = false` and
//! only the `generic-repeat` feature; its tests prove that exactly that detector is linked.
