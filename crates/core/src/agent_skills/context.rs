//! The skills part of the system prompt, per context level: the general
//! context (Level 1) carries the catalog or the pointer to
//! `discover_skills`; the specialist context (Level 2) carries the active
//! skill's instructions, its scoped tools and resources, and the way back.

use super::activation::{ConversationSkills, RETURN_TO_GENERAL, SkillLibrary};
use super::catalog::{self, CatalogPlan};
use super::package::SkillPackage;
use super::xml_escape;

/// Settings for the skills prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PromptConfig {
    /// The catalog's token budget; over it, skills are reached through
    /// `discover_skills`.
    pub catalog_budget_tokens: usize,
}

impl Default for PromptConfig {
    fn default() -> Self {
        Self {
            catalog_budget_tokens: catalog::DEFAULT_CATALOG_BUDGET_TOKENS,
        }
    }
}

/// The skills section of this turn's system prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkillsPrompt {
    /// Level 1 with the catalog inline, or the pointer to discovery when
    /// the catalog is over budget (`plan` says which). `None` plan text
    /// means no skill is visible and nothing is said.
    General { plan: CatalogPlan },
    /// Level 2: `skill`'s instructions are the specialist context.
    Specialist { skill: String, text: String },
}

impl SkillsPrompt {
    /// The text to add to the system prompt; empty when there is nothing
    /// to say.
    pub fn text(&self) -> &str {
        match self {
            SkillsPrompt::General { plan } => match plan {
                CatalogPlan::Empty => "",
                CatalogPlan::Inline { prompt, .. } | CatalogPlan::Discover { prompt, .. } => prompt,
            },
            SkillsPrompt::Specialist { text, .. } => text,
        }
    }

    /// The skill the conversation should show as active, if any.
    pub fn specialist(&self) -> Option<&str> {
        match self {
            SkillsPrompt::General { .. } => None,
            SkillsPrompt::Specialist { skill, .. } => Some(skill),
        }
    }
}

/// Chooses the context level from the conversation's state and renders it.
pub fn skills_prompt(
    library: &SkillLibrary,
    state: &ConversationSkills,
    config: PromptConfig,
) -> SkillsPrompt {
    if let Some(name) = &state.specialist
        && let Some(package) = library.get(name)
    {
        let others: Vec<&str> = state
            .active
            .iter()
            .filter(|a| *a != name)
            .map(String::as_str)
            .collect();
        return SkillsPrompt::Specialist {
            skill: name.clone(),
            text: specialist_prompt(package, &others),
        };
    }
    SkillsPrompt::General {
        plan: catalog::plan_catalog(library, config.catalog_budget_tokens),
    }
}

/// The Level 2 section for `package`. `also_active` names other active
/// skills, whose instructions are earlier in the conversation.
pub fn specialist_prompt(package: &SkillPackage, also_active: &[&str]) -> String {
    let name = xml_escape(package.name());
    let mut out = format!("<specialist_context skill=\"{name}\">\n");
    out.push_str(&format!(
        "You are working as a specialist with the \"{name}\" skill. Follow its instructions for this task.\n\n"
    ));
    out.push_str("<instructions>\n");
    out.push_str(&package.body);
    out.push_str("\n</instructions>\n");
    if !package.tools.is_empty() {
        out.push_str("\n<scoped_tools>\n");
        for t in &package.tools {
            out.push_str(&format!(
                "  <tool name=\"{}\">{}</tool>\n",
                xml_escape(&t.name),
                xml_escape(&t.description)
            ));
        }
        out.push_str("</scoped_tools>\n");
    }
    if !package.resources.is_empty() {
        out.push_str("\n<scoped_resources>\n");
        for r in &package.resources {
            out.push_str(&format!(
                "  <resource uri=\"{}\">{}</resource>\n",
                xml_escape(&r.uri),
                xml_escape(&r.description)
            ));
        }
        out.push_str("</scoped_resources>\n");
    }
    if !also_active.is_empty() {
        let list: Vec<String> = also_active.iter().map(|a| xml_escape(a)).collect();
        out.push_str(&format!(
            "\nAlso active: {}. Their instructions are earlier in the conversation.\n",
            list.join(", ")
        ));
    }
    out.push_str(&format!(
        "\nRead this skill's files with read_skill_file. When the task is done, or the person asks for something this skill does not cover, call {RETURN_TO_GENERAL} to go back to the general context.\n"
    ));
    out.push_str("</specialist_context>");
    out
}
