//! End-to-end tests through the facade.
