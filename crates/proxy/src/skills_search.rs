//! `hearth skills search "<query>"`: the discovery ranking from the
//! command line, over the same core index `discover_skills` uses: the
//! built-in skills and every Agent Skills package found in `--packages`
//! folders, ranked together.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hearth_core::discovery::packages::index_package;
use hearth_core::discovery::{self, Entry, IndexedSkill, SkillIndex};
use hearth_core::{Category, Registry, SkillDefinition};
use serde_json::json;

use crate::skills_packages::{self, FolderError};

#[derive(Args, Debug, Clone, PartialEq)]
pub struct SearchArgs {
    /// What you need, in your own words.
    pub query: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also rank every Agent Skills package (SKILL.md folder) under DIR,
    /// found as the app's folder import finds them. Repeatable.
    #[arg(long = "packages", value_name = "DIR")]
    pub packages: Vec<PathBuf>,
    /// Also rank the skill definitions in FILE (a JSON array).
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    /// Only this category: productivity, developer, network, integrations.
    #[arg(long)]
    pub category: Option<String>,
    /// Only skills that are on by default (as a fresh install would offer).
    #[arg(long)]
    pub enabled_only: bool,
    /// How many to list.
    #[arg(long, default_value_t = discovery::MAX_RESULTS)]
    pub limit: usize,
    /// Show how the query was read (terms and weights).
    #[arg(long)]
    pub explain: bool,
}

/// Why a search could not run.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("unknown category '{0}'; use productivity, developer, network or integrations")]
    UnknownCategory(String),
    #[error("cannot read {path}: {reason}")]
    Catalog { path: String, reason: String },
    #[error("{0}")]
    Packages(#[from] FolderError),
}

fn load_catalog(path: &Path) -> Result<Vec<SkillDefinition>, SearchError> {
    let err = |reason: String| SearchError::Catalog {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| err(e.to_string()))
}

/// The skills to rank: the registry's, then any from the catalog file
/// (later ones replace earlier ones with the same id).
fn gather(registry: &Registry, args: &SearchArgs) -> Result<Registry, SearchError> {
    let mut all = registry.clone();
    let mut extra = Vec::new();
    if let Some(path) = &args.catalog {
        extra.extend(load_catalog(path)?);
    }
    for def in extra {
        let id = def.id.clone();
        all.register(def).map_err(|e| SearchError::Catalog {
            path: id.to_string(),
            reason: e.to_string(),
        })?;
    }
    Ok(all)
}

/// The rendered result, whether anything matched, and the problems found
/// in the package folders (for stderr).
pub fn search(
    registry: &Registry,
    args: &SearchArgs,
) -> Result<(String, bool, Vec<String>), SearchError> {
    let category = match args.category.as_deref() {
        None | Some("all") => None,
        Some(c) => {
            Some(Category::parse(c).ok_or_else(|| SearchError::UnknownCategory(c.to_string()))?)
        }
    };
    let all = gather(registry, args)?;
    let mut index = SkillIndex::build(all.iter());
    let folders = skills_packages::load_folders(&args.packages)?;
    for package in &folders.packages {
        index_package(&mut index, package, true);
    }
    let enabled_only = args.enabled_only;
    let allowed = move |s: &IndexedSkill| !enabled_only || s.default_enabled;
    let hits = index.search(&args.query, category, args.limit, &allowed);
    let returned = discovery::discover(&index, &args.query, category, &allowed);
    let returns = |entry: &Entry| match entry {
        Entry::Skill(s) => returned.skills.iter().any(|r| r.id == s.id),
        Entry::Package(p) => returned.packages.iter().any(|r| r.name == p.name),
    };
    let found = !hits.is_empty();
    let out = if args.json {
        let items: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                let score = (h.score * 1000.0).round() / 1000.0;
                match h.entry {
                    Entry::Skill(s) => json!({
                        "kind": "skill",
                        "id": s.id,
                        "name": s.name,
                        "tier": s.tier,
                        "category": s.category,
                        "score": score,
                        "default_enabled": s.default_enabled,
                        "discover_returns": returns(h.entry),
                    }),
                    Entry::Package(p) => json!({
                        "kind": "package",
                        "name": p.name,
                        "description": p.description,
                        "score": score,
                        "discover_returns": returns(h.entry),
                    }),
                }
            })
            .collect();
        let mut v = json!({
            "query": args.query,
            "packages_indexed": index.packages().count(),
            "hits": items,
        });
        if !found {
            v["categories"] = json!(index.categories(&allowed));
        }
        if args.explain {
            v["explain"] = json!(index.explain_query(&args.query));
        }
        let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
        text.push('\n');
        text
    } else {
        let mut text = String::new();
        if args.explain {
            for (i, slot) in index.explain_query(&args.query).iter().enumerate() {
                let terms: Vec<String> = slot.iter().map(|(t, w)| format!("{t}×{w:.2}")).collect();
                text.push_str(&format!("  word {}: {}\n", i + 1, terms.join(" ")));
            }
        }
        for (i, h) in hits.iter().enumerate() {
            let mark = if returns(h.entry) { "*" } else { " " };
            let (kind, label) = match h.entry {
                Entry::Skill(s) => (s.tier.as_str(), s.name.as_str()),
                Entry::Package(p) => ("package", p.description.as_str()),
            };
            let label: String = label.chars().take(60).collect();
            text.push_str(&format!(
                "{:>2}.{mark} {:<28} {:>6.2}  {:<11} {}\n",
                i + 1,
                h.entry.key(),
                h.score,
                kind,
                label
            ));
        }
        if found {
            text.push_str("(* = what discover_skills would return)\n");
        } else {
            let cats: Vec<&str> = index
                .categories(&allowed)
                .iter()
                .map(|c| c.as_str())
                .collect();
            text.push_str(&format!(
                "No skill matched. Categories: {}\n",
                cats.join(", ")
            ));
        }
        text
    };
    Ok((out, found, folders.problems))
}

/// Runs the command: exit 0 when something matched, 1 when nothing did,
/// 2 on bad input.
pub fn run(registry: &Registry, args: SearchArgs) -> ExitCode {
    match search(registry, &args) {
        Ok((text, found, problems)) => {
            for p in problems {
                eprintln!("warning: {p}");
            }
            print!("{text}");
            if found {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(query: &str) -> SearchArgs {
        SearchArgs {
            query: query.into(),
            json: false,
            packages: Vec::new(),
            catalog: Some(
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../core/tests/fixtures/discovery/catalog.json"),
            ),
            category: None,
            enabled_only: false,
            limit: 5,
            explain: false,
        }
    }

    fn registry() -> Registry {
        hearth_core::builtin::registry().unwrap()
    }

    fn json_of(args: SearchArgs) -> serde_json::Value {
        let (text, _, _) = search(&registry(), &SearchArgs { json: true, ..args }).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn ranks_ids_like_discover_skills() {
        let (text, found, _) = search(&registry(), &args("convert this csv into json")).unwrap();
        assert!(found);
        let first = text.lines().next().unwrap();
        assert!(first.starts_with(" 1.* csv_to_json"), "{text}");
        let v = json_of(args("What's 15% of 847?"));
        assert_eq!(v["hits"][0]["kind"], "skill");
        assert_eq!(v["hits"][0]["id"], "calculator");
        assert_eq!(v["hits"][0]["discover_returns"], true);
        assert_eq!(v["hits"][0]["tier"], "core");
        assert_eq!(v["packages_indexed"], 0);
    }

    #[test]
    fn packages_from_folders_rank_with_the_builtins() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("skills").join("invoice-reader");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(
            pkg.join("SKILL.md"),
            "---\nname: invoice-reader\ndescription: Pull totals, dates and vendors out of scanned bills.\n---\n# Receipts\n",
        )
        .unwrap();
        let with = |query: &str| SearchArgs {
            catalog: None,
            packages: vec![dir.path().join("skills")],
            ..args(query)
        };
        let v = json_of(with("how much did I pay on this receipt"));
        assert_eq!(v["packages_indexed"], 1);
        assert_eq!(v["hits"][0]["kind"], "package");
        assert_eq!(v["hits"][0]["name"], "invoice-reader");
        assert!(v["hits"][0]["score"].as_f64().unwrap() > 0.0);
        assert_eq!(v["hits"][0]["discover_returns"], true);
        // The built-ins are still there, ranked with it.
        let v = json_of(with("what is 12 percent of 80"));
        assert_eq!(v["hits"][0]["id"], "calculator");
        let (text, _, _) = search(&registry(), &with("scanned bills")).unwrap();
        assert!(text.starts_with(" 1.* invoice-reader"), "{text}");
        assert!(text.contains("package"), "{text}");
    }

    #[test]
    fn builtins_alone_and_filters() {
        let only_builtins = SearchArgs {
            catalog: None,
            ..args("percent")
        };
        let (text, found, _) = search(&registry(), &only_builtins).unwrap();
        assert!(found && text.starts_with(" 1.* calculator"), "{text}");
        let v = json_of(SearchArgs {
            enabled_only: true,
            ..args("fetch a web page")
        });
        assert!(
            v["hits"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["default_enabled"] == true)
        );
        let v = json_of(SearchArgs {
            category: Some("developer".into()),
            ..args("convert")
        });
        assert!(
            v["hits"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["category"] == "developer")
        );
    }

    #[test]
    fn misses_list_categories_and_bad_input_is_explained() {
        let (text, found, _) = search(&registry(), &args("zxqv blorft")).unwrap();
        assert!(!found);
        assert_eq!(
            text,
            "No skill matched. Categories: productivity, developer, network, integrations\n"
        );
        assert_eq!(
            search(
                &registry(),
                &SearchArgs {
                    category: Some("games".into()),
                    ..args("x")
                }
            )
            .unwrap_err(),
            SearchError::UnknownCategory("games".into())
        );
        assert_eq!(
            search(
                &registry(),
                &SearchArgs {
                    packages: vec!["/nonexistent/skills".into()],
                    ..args("x")
                }
            )
            .unwrap_err(),
            SearchError::Packages(FolderError::Missing("/nonexistent/skills".into()))
        );
        let missing = SearchArgs {
            catalog: Some("/nonexistent.json".into()),
            ..args("x")
        };
        assert!(matches!(
            search(&registry(), &missing),
            Err(SearchError::Catalog { .. })
        ));
    }
}
