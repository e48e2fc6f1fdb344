//! `hearth skills search "<query>"`: the discovery ranking from the
//! command line, over the same core index `discover_skills` uses.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hearth_core::discovery::{self, IndexedSkill, SkillIndex};
use hearth_core::{Category, Registry, SkillDefinition};
use serde_json::json;

#[derive(Args, Debug, Clone, PartialEq)]
pub struct SearchArgs {
    /// What you need, in your own words.
    pub query: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also rank the Agent Skills packages (SKILL.md folders) in DIR.
    #[arg(long, value_name = "DIR")]
    pub skills_dir: Option<PathBuf>,
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
    #[error(
        "--skills-dir needs the Agent Skills loader (crates/core/src/agent_skills), which is not on this branch yet"
    )]
    SkillsDirUnavailable,
}

/// SEAM(agent-skills): when the Agent Skills loader lands, load the
/// packages in `dir` here and return their tools' definitions (reporting
/// per-package errors without hiding the others).
fn skills_from_dir(_dir: &Path) -> Result<Vec<SkillDefinition>, SearchError> {
    Err(SearchError::SkillsDirUnavailable)
}

fn load_catalog(path: &Path) -> Result<Vec<SkillDefinition>, SearchError> {
    let err = |reason: String| SearchError::Catalog {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| err(e.to_string()))
}

/// The skills to rank: the registry's, then any from the catalog file and
/// the skills folder (later ones replace earlier ones with the same id).
fn gather(registry: &Registry, args: &SearchArgs) -> Result<Registry, SearchError> {
    let mut all = registry.clone();
    let mut extra = Vec::new();
    if let Some(path) = &args.catalog {
        extra.extend(load_catalog(path)?);
    }
    if let Some(dir) = &args.skills_dir {
        extra.extend(skills_from_dir(dir)?);
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

/// The rendered result and whether anything matched.
pub fn search(registry: &Registry, args: &SearchArgs) -> Result<(String, bool), SearchError> {
    let category = match args.category.as_deref() {
        None | Some("all") => None,
        Some(c) => {
            Some(Category::parse(c).ok_or_else(|| SearchError::UnknownCategory(c.to_string()))?)
        }
    };
    let all = gather(registry, args)?;
    let index = SkillIndex::build(all.iter());
    let enabled_only = args.enabled_only;
    let allowed = move |s: &IndexedSkill| !enabled_only || s.default_enabled;
    let hits = index.search(&args.query, category, args.limit, &allowed);
    let loaded = discovery::discover(&index, &args.query, category, &allowed).skill_ids();
    let found = !hits.is_empty();
    let out = if args.json {
        let items: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                json!({
                    "id": h.skill.id,
                    "name": h.skill.name,
                    "tier": h.skill.tier,
                    "category": h.skill.category,
                    "score": (h.score * 1000.0).round() / 1000.0,
                    "default_enabled": h.skill.default_enabled,
                    "discover_loads": loaded.contains(&h.skill.id),
                })
            })
            .collect();
        let mut v = json!({"query": args.query, "skills": items});
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
            let mark = if loaded.contains(&h.skill.id) {
                "*"
            } else {
                " "
            };
            text.push_str(&format!(
                "{:>2}.{mark} {:<28} {:>6.2}  {:<11} {}\n",
                i + 1,
                h.skill.id.as_str(),
                h.score,
                h.skill.tier.as_str(),
                h.skill.name
            ));
        }
        if found {
            text.push_str("(* = what discover_skills would load)\n");
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
    Ok((out, found))
}

/// Runs the command: exit 0 when something matched, 1 when nothing did,
/// 2 on bad input.
pub fn run(registry: &Registry, args: SearchArgs) -> ExitCode {
    match search(registry, &args) {
        Ok((text, found)) => {
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
            skills_dir: None,
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

    #[test]
    fn ranks_ids_like_discover_skills() {
        let (text, found) = search(&registry(), &args("convert this csv into json")).unwrap();
        assert!(found);
        let first = text.lines().next().unwrap();
        assert!(first.starts_with(" 1.* csv_to_json"), "{text}");
        let (json_text, _) = search(
            &registry(),
            &SearchArgs {
                json: true,
                ..args("What's 15% of 847?")
            },
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&json_text).unwrap();
        assert_eq!(v["skills"][0]["id"], "calculator");
        assert_eq!(v["skills"][0]["discover_loads"], true);
        assert_eq!(v["skills"][0]["tier"], "core");
    }

    #[test]
    fn builtins_alone_and_filters() {
        let only_builtins = SearchArgs {
            catalog: None,
            ..args("percent")
        };
        let (text, found) = search(&registry(), &only_builtins).unwrap();
        assert!(found && text.starts_with(" 1.* calculator"), "{text}");
        let net = SearchArgs {
            enabled_only: true,
            ..args("fetch a web page")
        };
        let (json_text, _) = search(&registry(), &SearchArgs { json: true, ..net }).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json_text).unwrap();
        assert!(
            v["skills"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["default_enabled"] == true)
        );
        let dev = SearchArgs {
            category: Some("developer".into()),
            json: true,
            ..args("convert")
        };
        let v: serde_json::Value =
            serde_json::from_str(&search(&registry(), &dev).unwrap().0).unwrap();
        assert!(
            v["skills"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["category"] == "developer")
        );
    }

    #[test]
    fn misses_list_categories_and_bad_input_is_explained() {
        let (text, found) = search(&registry(), &args("zxqv blorft")).unwrap();
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
            ),
            Err(SearchError::UnknownCategory("games".into()))
        );
        assert_eq!(
            search(
                &registry(),
                &SearchArgs {
                    skills_dir: Some("skills".into()),
                    ..args("x")
                }
            ),
            Err(SearchError::SkillsDirUnavailable)
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
