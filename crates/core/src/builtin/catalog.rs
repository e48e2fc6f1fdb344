//! The built-in skills' definitions, shared by the app and the CLI.

use serde_json::json;

use crate::builtin::calculator::MAX_EXPRESSION_LEN;
use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::registry::{Registry, RegistryError};
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

fn id(s: &str) -> SkillId {
    // The ids below are literals that satisfy SkillId's rules.
    SkillId::new(s).unwrap_or_else(|e| panic!("built-in skill id {s:?}: {e}"))
}

pub fn calculator() -> SkillDefinition {
    SkillDefinition::new(
        id("calculator"),
        "Calculator",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("calculator")
    .with_description(
        "Evaluate math, unit conversions, percentages and date arithmetic exactly, \
             e.g. '15% of 847', '5 miles to km', 'today + 90 days'.",
    )
    .with_tags(["math", "arithmetic", "units", "convert", "dates", "percent"])
    .with_examples([
        "What's 15% of 847?",
        "Convert 5 miles to km",
        "What date is 90 days from today?",
        "sqrt(2) * 10",
    ])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "expression": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_EXPRESSION_LEN,
                "description": "The expression, e.g. '15% of 847' or '5 miles to km'"
            }
        },
        "required": ["expression"],
        "additionalProperties": false
    }))
    .with_commands([CommandForm::new(
        "calculator",
        TextShape::Expression {
            param: "expression".into(),
        },
        "Work out math, units, percentages and dates",
    )
    .examples([
        "/calc 15% of 847",
        "/calc 5 miles to km",
        "/calc today + 90 days",
        "/calc days between 2026-01-01 and 2026-12-25",
    ])
    .leads([
        "what is",
        "what's",
        "whats",
        "what are",
        "how much is",
        "how much are",
        "how many",
        "how long",
        "what date is",
        "what day is",
        "calculate",
        "compute",
        "convert",
        "work out",
        "evaluate",
        "solve",
    ])])
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "expression": {"type": "string"},
            "result": {"type": "string"}
        },
        "required": ["expression", "result"]
    }))
}

/// The core skills, which work on Hearth's stored data: discovery,
/// calculator, notes, tasks, memory and artifacts.
pub fn core_skills() -> Vec<SkillDefinition> {
    vec![
        crate::discovery::discover_skills_definition(),
        calculator(),
        crate::builtin::notes::definition(),
        crate::builtin::tasks::definition(),
        crate::builtin::memory::definition(),
        crate::builtin::artifacts::create_definition(),
        crate::builtin::artifacts::update_definition(),
    ]
}

/// The code sandbox's skills.
pub fn code_skills() -> Vec<SkillDefinition> {
    vec![
        crate::builtin::code::run_javascript(),
        crate::builtin::code::run_python(),
    ]
}

/// The skills over files the person granted.
pub fn file_skills() -> Vec<SkillDefinition> {
    vec![
        crate::builtin::code::read_file(),
        crate::builtin::code::list_files(),
        crate::builtin::code::search_files(),
    ]
}

/// The network tier's web skills.
pub fn web_skills() -> Vec<SkillDefinition> {
    vec![
        crate::builtin::web::web_fetch(),
        crate::builtin::web::web_search(),
    ]
}

/// Every built-in skill, in the order the Skills panel lists them: core,
/// then the enhanced tier (code sandbox and granted files), then network.
pub fn definitions() -> Vec<SkillDefinition> {
    let mut all = core_skills();
    all.extend(code_skills());
    all.extend(file_skills());
    all.extend(web_skills());
    all
}

/// A registry holding the built-in skills.
pub fn registry() -> Result<Registry, RegistryError> {
    let mut r = Registry::new();
    for def in definitions() {
        r.register(def)?;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_register_cleanly_with_no_schema_warnings() {
        let mut r = Registry::new();
        for def in definitions() {
            let reg = r.register(def.clone()).unwrap();
            assert_eq!(reg.warnings, vec![], "{}", def.id);
            assert!(!def.icon.is_empty(), "{} has an icon", def.id);
        }
    }

    #[test]
    fn the_groups_hold_the_enhanced_tier_once_each() {
        let mut enhanced = code_skills();
        enhanced.extend(file_skills());
        assert_eq!(enhanced, crate::builtin::code::definitions());
    }
}
