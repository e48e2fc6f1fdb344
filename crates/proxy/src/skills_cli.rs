//! `hearth skills ...`: the registry from the same core definitions the app uses.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use hearth_core::SkillDefinition;

#[derive(Subcommand)]
pub enum SkillsCommand {
    /// List every registered skill.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Rank skills for a request, as discover_skills does.
    Search(crate::skills_search::SearchArgs),
}

pub fn run(command: SkillsCommand) -> ExitCode {
    let registry = match hearth_core::builtin::registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: the built-in registry is inconsistent: {e}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        SkillsCommand::List { json } => {
            let skills: Vec<&SkillDefinition> = registry.iter().collect();
            let out = if json {
                list_json(&skills)
            } else {
                list_table(&skills)
            };
            let _ = std::io::stdout().write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        SkillsCommand::Search(args) => crate::skills_search::run(&registry, args),
    }
}

fn list_json(skills: &[&SkillDefinition]) -> String {
    let items: Vec<serde_json::Value> = skills
        .iter()
        .map(|s| {
            serde_json::json!({
                "id": s.id,
                "name": s.name,
                "tier": s.tier,
                "category": s.category,
                "default_enabled": s.default_enabled,
                "requires_approval": s.requires_approval,
                "requires_network": s.requires_network,
                "tags": s.tags,
                "examples": s.examples,
                "input_schema": s.input_schema,
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&items).unwrap_or_default();
    text.push('\n');
    text
}

fn list_table(skills: &[&SkillDefinition]) -> String {
    let mut out = format!(
        "{:<16} {:<14} {:<12} {:<9} {:<9} TAGS\n",
        "ID", "NAME", "TIER", "ENABLED", "APPROVAL"
    );
    for s in skills {
        out.push_str(&format!(
            "{:<16} {:<14} {:<12} {:<9} {:<9} {}\n",
            s.id.as_str(),
            s.name,
            s.tier.as_str(),
            if s.default_enabled { "on" } else { "off" },
            if s.requires_approval { "asks" } else { "no" },
            s.tags.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lists_the_core_definitions() {
        let registry = hearth_core::builtin::registry().unwrap();
        let skills: Vec<&SkillDefinition> = registry.iter().collect();
        let v: serde_json::Value = serde_json::from_str(&list_json(&skills)).unwrap();
        let calc = &v[0];
        assert_eq!(calc["id"], "calculator");
        assert_eq!(calc["tier"], "core");
        assert_eq!(calc["default_enabled"], true);
        assert_eq!(calc["input_schema"]["required"][0], "expression");
        assert!(!calc["examples"].as_array().unwrap().is_empty());
    }

    #[test]
    fn table_has_a_row_per_skill() {
        let registry = hearth_core::builtin::registry().unwrap();
        let skills: Vec<&SkillDefinition> = registry.iter().collect();
        let table = list_table(&skills);
        assert_eq!(table.lines().count(), 1 + skills.len());
        assert!(table.lines().nth(1).unwrap().starts_with("calculator"));
    }
}
