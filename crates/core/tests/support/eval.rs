//! Discovery evaluation shared by the quality test and the benches: the
//! fixture catalog (plus the real built-ins), the labelled queries, and
//! recall at k.

#![allow(dead_code)]

use std::path::PathBuf;

use hearth_core::discovery::{IndexedSkill, SkillIndex};
use serde::Deserialize;

// Not every test or bench that includes this module uses both.
#[allow(unused_imports)]
pub use super::scaled::{catalog, scaled_catalog};

#[derive(Clone, Debug, Deserialize)]
pub struct LabelledQuery {
    pub query: String,
    /// paraphrase, typo, terse, wordy or model.
    pub kind: String,
    /// Any of these in the top k counts as found.
    pub expected: Vec<String>,
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery")
        .join(name)
}

/// The labelled set the ranking was developed against.
pub fn queries() -> Vec<LabelledQuery> {
    load_queries("queries.json")
}

/// Queries written after the ranking was frozen, to show how much of the
/// development score is overfitting.
pub fn holdout_queries() -> Vec<LabelledQuery> {
    load_queries("queries_holdout.json")
}

fn load_queries(name: &str) -> Vec<LabelledQuery> {
    let text = std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn everything(_: &IndexedSkill) -> bool {
    true
}

/// The ranked ids for a query, as `discover` would see them before its cutoff.
pub fn ranked(index: &SkillIndex, query: &str, k: usize) -> Vec<String> {
    index
        .search(query, None, k, &everything)
        .iter()
        .map(|h| h.entry.key().to_string())
        .collect()
}

/// Share of queries with an expected skill in the top `k`, and the misses.
pub fn recall_at(
    index: &SkillIndex,
    queries: &[LabelledQuery],
    k: usize,
) -> (f64, Vec<(String, Vec<String>)>) {
    let mut hits = 0usize;
    let mut misses = Vec::new();
    for q in queries {
        let got = ranked(index, &q.query, k);
        if got.iter().any(|id| q.expected.contains(id)) {
            hits += 1;
        } else {
            misses.push((q.query.clone(), got));
        }
    }
    (hits as f64 / queries.len().max(1) as f64, misses)
}
