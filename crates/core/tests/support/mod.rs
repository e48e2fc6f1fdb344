//! Helpers shared by the agent-skills integration tests: where their
//! fixtures are, and (from hearth-agent-skills' `testing` feature) reading
//! fixture folders into the in-memory file lists core works on and
//! comparing whole outputs with files that `UPDATE_FIXTURES=1` rewrites.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

// Not every test that includes this module uses them.
#[allow(unused_imports)]
pub use hearth_core::agent_skills::testing::{check_file, read_tree};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-skills")
}

pub mod collections;
pub mod eval;
pub mod scaled;
