//! The skill catalog: the `<available_skills>` block that tells the model
//! which skills exist (name and description only), and the decision to
//! fall back to `discover_skills` when the catalog would cost too much.

use super::activation::SkillLibrary;
use super::xml_escape;

/// The default token budget for the catalog in the system prompt.
pub const DEFAULT_CATALOG_BUDGET_TOKENS: usize = 1_500;

/// Said before the catalog, so the model knows how to use it.
pub const CATALOG_INSTRUCTIONS: &str = "The following skills provide specialised instructions for specific tasks. \
When a task matches a skill's description, call the activate_skill tool with the skill's name \
to load its full instructions before you go on.";

/// Said instead of the catalog when it is over budget.
pub const DISCOVER_INSTRUCTIONS: &str = "Skills with specialised instructions are installed. \
When a task might need one, call discover_skills with a short description of the task; \
then call activate_skill with the name of the skill that fits.";

/// A rough token count: one token per four characters, rounded up. No
/// tokenizer ships with Hearth; this is the usual estimate for English
/// text and XML and errs on the high side for short words.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// One line of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    pub name: String,
    /// The description, with Claude Code's `when_to_use` appended.
    pub description: String,
}

/// The skills the model may see, in library order: all but those with
/// `disable-model-invocation: true`.
pub fn catalog_entries(library: &SkillLibrary) -> Vec<CatalogEntry> {
    library
        .iter()
        .filter(|p| p.properties.model_invocable())
        .map(|p| CatalogEntry {
            name: p.name().to_string(),
            description: p.properties.catalog_description(),
        })
        .collect()
}

/// The `<available_skills>` block, XML-escaped.
pub fn render_catalog(entries: &[CatalogEntry]) -> String {
    let mut out = String::from("<available_skills>\n");
    for e in entries {
        out.push_str(&render_entry(e));
    }
    out.push_str("</available_skills>");
    out
}

fn render_entry(e: &CatalogEntry) -> String {
    format!(
        "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n  </skill>\n",
        xml_escape(&e.name),
        xml_escape(&e.description)
    )
}

/// What the system prompt should carry about skills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CatalogPlan {
    /// No skill is visible to the model: say nothing about skills and do not
    /// offer `activate_skill`.
    Empty,
    /// The catalog fits the budget: put `prompt` (instructions and catalog)
    /// in the system prompt.
    Inline { prompt: String, tokens: usize },
    /// The catalog would cost `tokens`, more than `budget`: put `prompt`
    /// (a short pointer to `discover_skills`) in the system prompt and let
    /// discovery find skills, so the opening context stays flat however many
    /// skills are installed.
    Discover {
        prompt: String,
        skills: usize,
        tokens: usize,
        budget: usize,
    },
}

/// Decides between the inline catalog and `discover_skills`.
pub fn plan_catalog(library: &SkillLibrary, budget_tokens: usize) -> CatalogPlan {
    let entries = catalog_entries(library);
    if entries.is_empty() {
        return CatalogPlan::Empty;
    }
    let prompt = format!("{CATALOG_INSTRUCTIONS}\n\n{}", render_catalog(&entries));
    let tokens = estimate_tokens(&prompt);
    if tokens <= budget_tokens {
        CatalogPlan::Inline { prompt, tokens }
    } else {
        CatalogPlan::Discover {
            prompt: DISCOVER_INSTRUCTIONS.to_string(),
            skills: entries.len(),
            tokens,
            budget: budget_tokens,
        }
    }
}

/// A skill as `skills-ref to-prompt` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptEntry {
    pub name: String,
    pub description: String,
    /// The SKILL.md's location, as the caller wants it shown.
    pub location: String,
}

/// The `<available_skills>` block in the reference tool's layout: every
/// tag and value on its own line, with a `<location>` per skill.
pub fn render_reference_prompt(entries: &[PromptEntry]) -> String {
    let mut lines = vec!["<available_skills>".to_string()];
    for e in entries {
        lines.extend([
            "<skill>".to_string(),
            "<name>".to_string(),
            xml_escape(&e.name),
            "</name>".to_string(),
            "<description>".to_string(),
            xml_escape(&e.description),
            "</description>".to_string(),
            "<location>".to_string(),
            e.location.clone(),
            "</location>".to_string(),
            "</skill>".to_string(),
        ]);
    }
    lines.push("</available_skills>".to_string());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_skills::package::SkillPackage;
    use crate::agent_skills::properties::SkillProperties;

    fn package(name: &str, description: &str) -> SkillPackage {
        SkillPackage {
            folder: name.into(),
            properties: SkillProperties::new(name, description),
            body: String::new(),
            files: Vec::new(),
            tools: Vec::new(),
            resources: Vec::new(),
        }
    }

    #[test]
    fn tokens_are_a_quarter_of_the_characters_rounded_up() {
        let cases = [("", 0), ("abc", 1), ("abcd", 1), ("abcde", 2), ("ééééé", 2)];
        for (text, tokens) in cases {
            assert_eq!(estimate_tokens(text), tokens, "for {text:?}");
        }
    }

    #[test]
    fn catalog_escapes_and_hides_model_disabled_skills() {
        let mut hidden = package("deploy", "Deploy to production");
        hidden.properties.disable_model_invocation = true;
        let mut with_when = package("pdf-tools", "Fill <forms> & merge \"PDFs\"");
        with_when.properties.when_to_use = Some("Use when the user mentions 'PDF'.".into());
        let library = SkillLibrary::from_packages(vec![with_when, hidden]);
        assert_eq!(
            render_catalog(&catalog_entries(&library)),
            "<available_skills>\n  <skill>\n    <name>pdf-tools</name>\n    <description>Fill &lt;forms&gt; &amp; merge &quot;PDFs&quot; Use when the user mentions &#x27;PDF&#x27;.</description>\n  </skill>\n</available_skills>"
        );
    }

    #[test]
    fn the_plan_falls_back_to_discovery_over_budget() {
        let empty = SkillLibrary::default();
        assert_eq!(plan_catalog(&empty, 1_500), CatalogPlan::Empty);

        let one = SkillLibrary::from_packages(vec![package("a", "Does a.")]);
        let CatalogPlan::Inline { prompt, tokens } = plan_catalog(&one, 1_500) else {
            panic!("expected inline")
        };
        assert_eq!(tokens, estimate_tokens(&prompt));
        assert!(prompt.starts_with(CATALOG_INSTRUCTIONS));

        let many = SkillLibrary::from_packages(
            (0..100)
                .map(|i| package(&format!("skill-{i}"), "A skill that does something useful."))
                .collect(),
        );
        match plan_catalog(&many, 1_500) {
            CatalogPlan::Discover {
                prompt,
                skills,
                tokens,
                budget,
            } => {
                assert_eq!(prompt, DISCOVER_INSTRUCTIONS);
                assert_eq!(skills, 100);
                assert!(tokens > budget);
                assert_eq!(budget, 1_500);
            }
            other => panic!("expected discover, got {other:?}"),
        }
    }

    #[test]
    fn reference_layout_puts_every_value_on_its_own_line() {
        let text = render_reference_prompt(&[PromptEntry {
            name: "my-skill".into(),
            description: "Use <foo> & <bar>".into(),
            location: "/skills/my-skill/SKILL.md".into(),
        }]);
        assert_eq!(
            text,
            "<available_skills>\n<skill>\n<name>\nmy-skill\n</name>\n<description>\nUse &lt;foo&gt; &amp; &lt;bar&gt;\n</description>\n<location>\n/skills/my-skill/SKILL.md\n</location>\n</skill>\n</available_skills>"
        );
        assert_eq!(
            render_reference_prompt(&[]),
            "<available_skills>\n</available_skills>"
        );
    }
}
