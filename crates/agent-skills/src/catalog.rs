//! The skill catalog: the `<available_skills>` block that tells the model
//! which skills exist (name and description only), and the one rule for
//! the opening context: a small catalog stays in the system prompt; past
//! the threshold the prompt carries one line and `discover_skills` finds
//! packages, so the opening context stops growing with the library.

use super::library::SkillLibrary;
use super::xml_escape;

/// The threshold, in estimated tokens, up to which the catalog stays in
/// the system prompt. A few packages inline save the model a discovery
/// round trip; past a few, the catalog would cost more than it saves
/// (about 40 tokens a package, on every request), and the opening
/// context is kept flat instead: ten real packages already exceed it.
pub const DEFAULT_CATALOG_BUDGET_TOKENS: usize = 250;

/// Said before the catalog, so the model knows how to use it.
pub const CATALOG_INSTRUCTIONS: &str = "The following skills provide specialised instructions for specific tasks. \
When a task matches a skill's description, call the activate_skill tool with the skill's name \
to load its full instructions before you go on.";

/// Said instead of the catalog when it is over budget: one line, whatever
/// the number of packages.
pub const DISCOVER_INSTRUCTIONS: &str = "Skill packages with specialised instructions are installed: \
discover_skills finds them, then activate_skill loads the one that fits.";

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
    /// (one line pointing to `discover_skills`) in the system prompt and
    /// let discovery find packages, so the opening context stays flat
    /// however many are installed. `activate_skill` is then offered once
    /// discovery found a package, not upfront.
    Discover {
        prompt: String,
        skills: usize,
        tokens: usize,
        budget: usize,
    },
}

impl CatalogPlan {
    /// Whether the catalog is in the prompt, so `activate_skill` is offered
    /// upfront with the catalog's names.
    pub fn is_inline(&self) -> bool {
        matches!(self, CatalogPlan::Inline { .. })
    }
}

/// Decides between the inline catalog and `discover_skills`: inline while
/// the catalog (with its instructions) costs at most `budget_tokens`.
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
    use crate::package::SkillPackage;
    use crate::properties::SkillProperties;

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

    /// The rule at the threshold: a catalog of exactly the budget stays
    /// inline, one token more goes to discovery, and from there on the
    /// prompt is the same one line however many packages there are.
    #[test]
    fn the_rule_switches_at_the_threshold_and_stays_flat_past_it() {
        let one = SkillLibrary::from_packages(vec![package("a", "Does a.")]);
        let CatalogPlan::Inline { tokens, .. } = plan_catalog(&one, 1_000) else {
            panic!("expected inline")
        };
        assert!(plan_catalog(&one, tokens).is_inline());
        assert_eq!(
            plan_catalog(&one, tokens - 1),
            CatalogPlan::Discover {
                prompt: DISCOVER_INSTRUCTIONS.to_string(),
                skills: 1,
                tokens,
                budget: tokens - 1,
            }
        );
        let prompts: Vec<String> = [10, 100, 1_000]
            .iter()
            .map(|n| {
                let library = SkillLibrary::from_packages(
                    (0..*n)
                        .map(|i| {
                            package(&format!("skill-{i}"), "A skill that does something useful.")
                        })
                        .collect(),
                );
                match plan_catalog(&library, DEFAULT_CATALOG_BUDGET_TOKENS) {
                    CatalogPlan::Discover { prompt, .. } => prompt,
                    other => panic!("{n} packages: {other:?}"),
                }
            })
            .collect();
        assert_eq!(prompts, vec![DISCOVER_INSTRUCTIONS.to_string(); 3]);
        assert!(estimate_tokens(DISCOVER_INSTRUCTIONS) <= 40);
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
