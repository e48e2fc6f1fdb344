//! Discovery over real Agent Skills collections, installed by `cargo
//! xtask skill-collections`: every labelled package exists, the recall
//! floor holds on the queries set aside (never used for tuning), and a
//! package is reachable however many are installed.

mod support;

use hearth_core::discovery::{self, IndexedSkill};
use support::collections::{self, FROM_REGISTRIES};

#[test]
fn every_labelled_package_is_in_its_collection() {
    let installed = collections::installed();
    let queries = collections::development()
        .into_iter()
        .chain(collections::set_aside());
    for q in queries {
        let Some(c) = installed.iter().find(|c| c.name == q.collection) else {
            continue;
        };
        assert!(
            q.expected
                .iter()
                .any(|e| c.packages.iter().any(|p| p.name() == e)),
            "{:?}: none of {:?} is in {}",
            q.query,
            q.expected,
            c.name
        );
    }
}

/// The recall floor on the queries set aside: an expected package first
/// for at least 85% of them and in the top three for at least 95% (the
/// goals; measured 0.879 and 0.970 here, see docs/benchmarks.md). It
/// ranks the collections every run installs from a registry, so it checks
/// the same thing everywhere; one more miss in the top three fails it.
/// Where the four upstream collections were copied in too (`cargo xtask
/// skill-collections --from DIR`), the floor must also hold over all six
/// (measured 0.870 and 0.967). `cargo bench --bench discovery` reports the
/// figures over every collection present.
#[test]
fn recall_floor_on_the_set_aside_queries() {
    let everything = collections::installed();
    let registry: Vec<_> = everything
        .iter()
        .filter(|c| FROM_REGISTRIES.contains(&c.name.as_str()))
        .map(|c| collections::Collection {
            name: c.name.clone(),
            packages: c.packages.clone(),
        })
        .collect();
    assert_floor(&registry, 30);
    let all_six = UPSTREAM
        .iter()
        .all(|u| everything.iter().any(|c| c.name == *u));
    if all_six {
        assert_floor(&everything, 90);
    }
}

/// The four collections no registry ships, by checkout folder name.
const UPSTREAM: [&str; 4] = [
    "anthropics+skills",
    "openai+skills",
    "obra+superpowers",
    "K-Dense-AI+claude-scientific-skills",
];

fn assert_floor(installed: &[collections::Collection], at_least: usize) {
    let index = collections::index(&collections::packages(installed));
    let queries = collections::answerable(collections::set_aside(), installed);
    assert!(queries.len() >= at_least, "{} queries", queries.len());
    let (r1, misses1) = collections::recall_at(&index, &queries, 1);
    let (r3, misses3) = collections::recall_at(&index, &queries, 3);
    assert!(
        r1 >= 0.85,
        "recall@1 {r1:.3} over {} queries; misses: {misses1:#?}",
        queries.len()
    );
    assert!(
        r3 >= 0.95,
        "recall@3 {r3:.3} over {} queries; misses: {misses3:#?}",
        queries.len()
    );
}

/// A package found by discovery comes back with the way to use it, and
/// `activate_skill` is what gets loaded.
#[test]
fn discover_returns_installed_packages_by_paraphrase() {
    let installed = collections::installed();
    let index = collections::index(&collections::packages(&installed));
    let enabled = |s: &IndexedSkill| s.default_enabled;
    let found = discovery::discover(&index, "write the script for my next video", None, &enabled);
    assert_eq!(
        found.packages.first().map(|p| p.name.as_str()),
        Some("script-writer"),
        "{found:?}"
    );
    assert_eq!(
        found.packages[0].how,
        "activate_skill {\"name\": \"script-writer\"}"
    );
    assert!(
        found
            .skill_ids()
            .iter()
            .any(|id| id.as_str() == "activate_skill")
    );
}
