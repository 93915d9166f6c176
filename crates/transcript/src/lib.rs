//! Transcript readers.
