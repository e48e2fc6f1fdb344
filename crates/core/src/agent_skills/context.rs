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
    /// Level 1: the catalog inline, the pointer to `discover_skills` when
    /// the catalog is over budget, or nothing when no skill is visible —
    /// `plan` says which.
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
    out.push('\n');
    if package.files.len() > 1 {
        out.push_str("Read this skill's files with read_skill_file. ");
    }
    out.push_str(&format!(
        "When the task is done, or the person asks for something this skill does not cover, call {RETURN_TO_GENERAL} to go back to the general context.\n"
    ));
    out.push_str("</specialist_context>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_skills::catalog::{CATALOG_INSTRUCTIONS, DISCOVER_INSTRUCTIONS};
    use crate::agent_skills::properties::SkillProperties;
    use crate::skill::call::CallOrigin;

    fn package(name: &str, body: &str) -> SkillPackage {
        SkillPackage {
            folder: name.into(),
            properties: SkillProperties::new(name, format!("Does {name} things.")),
            body: body.into(),
            files: Vec::new(),
            tools: Vec::new(),
            resources: Vec::new(),
        }
    }

    #[test]
    fn the_prompt_follows_the_conversation_between_levels() {
        let library = SkillLibrary::from_packages(vec![package("notes", "Keep notes short.")]);
        let mut state = ConversationSkills::default();
        let config = PromptConfig::default();

        let general = skills_prompt(&library, &state, config);
        assert_eq!(general.specialist(), None);
        assert_eq!(
            general.text(),
            format!(
                "{CATALOG_INSTRUCTIONS}\n\n<available_skills>\n  <skill>\n    <name>notes</name>\n    <description>Does notes things.</description>\n  </skill>\n</available_skills>"
            )
        );

        crate::agent_skills::activation::activate_skill(
            &library,
            &mut state,
            "notes",
            CallOrigin::User,
        )
        .unwrap();
        let specialist = skills_prompt(&library, &state, config);
        assert_eq!(specialist.specialist(), Some("notes"));
        assert_eq!(
            specialist.text(),
            "<specialist_context skill=\"notes\">\n\
             You are working as a specialist with the \"notes\" skill. Follow its instructions for this task.\n\n\
             <instructions>\nKeep notes short.\n</instructions>\n\n\
             When the task is done, or the person asks for something this skill does not cover, call return_to_general to go back to the general context.\n\
             </specialist_context>"
        );

        state.return_to_general();
        assert_eq!(skills_prompt(&library, &state, config), general);

        // Over budget, the general context points at discovery instead.
        let tight = PromptConfig {
            catalog_budget_tokens: 10,
        };
        assert_eq!(
            skills_prompt(&library, &state, tight).text(),
            DISCOVER_INSTRUCTIONS
        );
        // With nothing visible, nothing is said.
        assert_eq!(
            skills_prompt(&SkillLibrary::default(), &state, config).text(),
            ""
        );
    }
}
