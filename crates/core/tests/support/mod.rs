//! Shared test support.

pub mod eval;
