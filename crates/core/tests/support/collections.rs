//! Real Agent Skills collections for discovery's evaluation: the ones
//! `cargo xtask skill-collections` installed under
//! `target/skill-collections/<collection>/`, loaded as the app's folder
//! import loads them, indexed with the built-in skills, and the labelled
//! queries written for them (a development set, and a set aside that the
//! ranking is never tuned on).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use hearth_core::agent_skills::scan::{ScanOptions, scan};
use hearth_core::agent_skills::{SkillPackage, SourceFile, ValidationMode};
use hearth_core::discovery::packages::index_package;
use hearth_core::discovery::{IndexedSkill, SkillIndex};
use serde::Deserialize;

/// The collections every run installs from a registry; the others are
/// used when present.
pub const FROM_REGISTRIES: [&str; 2] = ["ai-labs-claude-skills", "claude-skills"];

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/skill-collections")
}

/// One installed collection and its packages.
pub struct Collection {
    pub name: String,
    pub packages: Vec<SkillPackage>,
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if name != "node_modules" && name != ".git" {
                walk(root, &path, out);
            }
        } else if path.is_file() && !name.starts_with(".installed") {
            let rel: Vec<String> = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if let Ok(bytes) = std::fs::read(&path) {
                out.push(SourceFile::new(rel.join("/"), bytes));
            }
        }
    }
}

/// Every installed collection, by name. Panics with the way to install
/// them when the registry ones are missing: the quality test must not
/// pass by having nothing to rank.
pub fn installed() -> Vec<Collection> {
    let root = root();
    for name in FROM_REGISTRIES {
        assert!(
            root.join(name).is_dir(),
            "{} is missing; run `cargo xtask skill-collections` (cargo xtask test does)",
            root.join(name).display()
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let mut files = Vec::new();
            let dir = root.join(&name);
            walk(&dir, &dir, &mut files);
            let outcome = scan(
                files,
                &ScanOptions {
                    mode: ValidationMode::Lenient,
                    root_name: Some(name.clone()),
                },
            );
            Collection {
                name,
                packages: outcome.packages,
            }
        })
        .collect()
}

/// The packages of `collections`; a name already taken by an earlier
/// collection is skipped, as the library keeps one package per name.
pub fn packages(collections: &[Collection]) -> Vec<SkillPackage> {
    let mut out: Vec<SkillPackage> = Vec::new();
    for c in collections {
        for p in &c.packages {
            if !out.iter().any(|o| o.name() == p.name()) {
                out.push(p.clone());
            }
        }
    }
    out
}

/// The index `discover_skills` would search with these packages enabled:
/// the built-in skills and every package.
pub fn index(packages: &[SkillPackage]) -> SkillIndex {
    let mut index = SkillIndex::build(&hearth_core::builtin::definitions());
    for p in packages {
        index_package(&mut index, p, true);
    }
    index
}

#[derive(Clone, Debug, Deserialize)]
pub struct LabelledQuery {
    pub query: String,
    /// The collection the expected packages come from.
    pub collection: String,
    /// Any of these packages in the top k counts as found.
    pub expected: Vec<String>,
}

fn load(name: &str) -> Vec<LabelledQuery> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/discovery/packages")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The queries the ranking was tuned on.
pub fn development() -> Vec<LabelledQuery> {
    load("queries.json")
}

/// The queries set aside: never looked at while tuning.
pub fn set_aside() -> Vec<LabelledQuery> {
    load("queries_holdout.json")
}

/// The queries whose collection is installed.
pub fn answerable(queries: Vec<LabelledQuery>, collections: &[Collection]) -> Vec<LabelledQuery> {
    queries
        .into_iter()
        .filter(|q| collections.iter().any(|c| c.name == q.collection))
        .collect()
}

fn everything(_: &IndexedSkill) -> bool {
    true
}

/// The ranked keys (skill ids and package names) for a query.
pub fn ranked(index: &SkillIndex, query: &str, k: usize) -> Vec<String> {
    index
        .search(query, None, k, &everything)
        .iter()
        .map(|h| h.entry.key().to_string())
        .collect()
}

/// Share of queries with an expected package in the top `k`, and the
/// misses with what ranked instead.
pub fn recall_at(
    index: &SkillIndex,
    queries: &[LabelledQuery],
    k: usize,
) -> (f64, Vec<(String, Vec<String>)>) {
    let mut hits = 0usize;
    let mut misses = Vec::new();
    for q in queries {
        let got = ranked(index, &q.query, k);
        if got.iter().any(|g| q.expected.contains(g)) {
            hits += 1;
        } else {
            misses.push((q.query.clone(), got));
        }
    }
    (hits as f64 / queries.len().max(1) as f64, misses)
}

/// About `n` packages: the real ones first, then copies of them with
/// distinct names and a few distinct words, as a stand-in for a library
/// grown by many teams' variants of the same skills.
pub fn scaled_packages(real: &[SkillPackage], n: usize) -> Vec<SkillPackage> {
    let teams = [
        "north", "south", "east", "west", "alpha", "beta", "gamma", "delta", "core", "edge",
    ];
    let mut out: Vec<SkillPackage> = Vec::with_capacity(n);
    let mut copy = 0usize;
    while out.len() < n && !real.is_empty() {
        for p in real {
            if out.len() == n {
                break;
            }
            let mut p = p.clone();
            if copy > 0 {
                let team = teams[(copy + out.len()) % teams.len()];
                let name = format!("{}-{team}{copy}", p.name());
                p.properties.name = name.clone();
                p.folder = name;
                p.properties.description = format!(
                    "{} Maintained by the {team} team, edition {copy}.",
                    p.properties.description
                );
            }
            out.push(p);
        }
        copy += 1;
    }
    out
}
