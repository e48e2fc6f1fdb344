//! The skill model: what a skill is, which tier it sits in, and how it runs.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::skill::command_forms::CommandForm;
use crate::skill::form::ActionForm;

pub use hearth_base::skill_id::{SkillId, SkillIdError};

/// The four tiers. A tier sets a skill's defaults and tells the user how much
/// trust running it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Local and safe: on, no approval, no network.
    Core,
    /// Local but sandboxed: on, no approval, no network.
    Enhanced,
    /// Reaches the internet through the local proxy: off, asks first.
    Network,
    /// External services and MCP servers: off, asks first.
    Integration,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Core, Tier::Enhanced, Tier::Network, Tier::Integration];

    pub fn default_enabled(self) -> bool {
        match self {
            Tier::Core | Tier::Enhanced => true,
            Tier::Network | Tier::Integration => false,
        }
    }

    pub fn default_requires_approval(self) -> bool {
        match self {
            Tier::Core | Tier::Enhanced => false,
            Tier::Network | Tier::Integration => true,
        }
    }

    pub fn requires_network(self) -> bool {
        match self {
            Tier::Core | Tier::Enhanced => false,
            Tier::Network | Tier::Integration => true,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Core => "core",
            Tier::Enhanced => "enhanced",
            Tier::Network => "network",
            Tier::Integration => "integration",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Tier::Core => "Core",
            Tier::Enhanced => "Enhanced",
            Tier::Network => "Network",
            Tier::Integration => "Integration",
        }
    }

    /// One sentence for the Skills panel.
    pub fn explanation(self) -> &'static str {
        match self {
            Tier::Core => {
                "Safe, local skills. On by default and never ask; nothing leaves this device."
            }
            Tier::Enhanced => {
                "Local skills that run code or read files you grant, inside a sandbox with no network."
            }
            Tier::Network => {
                "Skills that reach the internet through Hearth's local proxy. Off until you enable them, and they ask first."
            }
            Tier::Integration => {
                "External services and MCP servers. Off until you enable them, and they ask first."
            }
        }
    }

    pub fn parse(s: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a skill is for; `discover_skills` can filter on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Productivity,
    Developer,
    Network,
    Integrations,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Productivity,
        Category::Developer,
        Category::Network,
        Category::Integrations,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Productivity => "productivity",
            Category::Developer => "developer",
            Category::Network => "network",
            Category::Integrations => "integrations",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a skill's implementation comes from, which decides how it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SkillKind {
    /// Compiled into Hearth.
    Builtin,
    /// A tool from an Agent Skills package (SKILL.md folder).
    AgentSkill { package: String, tool: String },
    /// A tool offered by an MCP server.
    Mcp { server: String, tool: String },
}

impl SkillKind {
    pub fn label(&self) -> &'static str {
        match self {
            SkillKind::Builtin => "built-in",
            SkillKind::AgentSkill { .. } => "agent skill",
            SkillKind::Mcp { .. } => "MCP",
        }
    }
}

/// The part of the app that registered a skill and runs its calls (see
/// [`crate::skill::source::SkillSource`]). Calls are routed by this key alone,
/// never by the skill's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKey {
    /// Hearth's own skills that work on its stored data: calculator, notes,
    /// tasks, memory and discovery.
    Core,
    /// The code sandbox: `run_javascript` and `run_python`.
    Code,
    /// Files and folders the person granted.
    Files,
    /// The network tier's web skills.
    Web,
    /// Agent Skills: the skill tools and the packages' scoped tools.
    AgentSkills,
    /// Tools of connected MCP servers.
    Mcp,
}

impl SourceKey {
    /// The source in words, for messages.
    pub fn label(self) -> &'static str {
        match self {
            SourceKey::Core => "Hearth's core skills",
            SourceKey::Code => "the code sandbox",
            SourceKey::Files => "the file skills",
            SourceKey::Web => "the web skills",
            SourceKey::AgentSkills => "Agent Skills",
            SourceKey::Mcp => "the MCP servers",
        }
    }
}

impl fmt::Display for SourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Everything Hearth knows about a skill before running it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillDefinition {
    pub id: SkillId,
    /// Shown to people; `id` is what calls use.
    pub name: String,
    pub description: String,
    /// A short glyph shown beside the name.
    pub icon: String,
    pub tier: Tier,
    pub category: Category,
    pub requires_approval: bool,
    pub requires_network: bool,
    pub default_enabled: bool,
    pub tags: Vec<String>,
    /// Example requests a person might make; they feed discovery as well.
    pub examples: Vec<String>,
    pub input_schema: Value,
    pub output_schema: Value,
    pub kind: SkillKind,
    /// How a person types this skill in the composer. Without forms,
    /// `/id <text>` fills the first required string parameter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandForm>,
    /// For a skill whose input starts with an `action`: what its form
    /// offers to do, each with only the fields it reads. Without them the
    /// form shows every field of the input schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionForm>,
    /// The source that registered the skill and runs its calls; `None`
    /// until a source registers it. Set at run time, so never stored.
    #[serde(skip)]
    pub source: Option<SourceKey>,
}

impl SkillDefinition {
    /// A definition with the defaults of its tier. Callers fill in the rest
    /// with the `with_*` methods.
    pub fn new(id: SkillId, name: impl Into<String>, tier: Tier, category: Category) -> Self {
        Self {
            id,
            name: name.into(),
            description: String::new(),
            icon: String::new(),
            tier,
            category,
            requires_approval: tier.default_requires_approval(),
            requires_network: tier.requires_network(),
            default_enabled: tier.default_enabled(),
            tags: Vec::new(),
            examples: Vec::new(),
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: serde_json::json!({}),
            kind: SkillKind::Builtin,
            commands: Vec::new(),
            actions: Vec::new(),
            source: None,
        }
    }

    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    pub fn with_icon(mut self, icon: impl Into<String>) -> Self {
        self.icon = icon.into();
        self
    }

    pub fn with_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_examples<I, S>(mut self, examples: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.examples = examples.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = schema;
        self
    }

    pub fn with_kind(mut self, kind: SkillKind) -> Self {
        self.kind = kind;
        self
    }

    /// Marks the skill as `source`'s: its calls go there.
    pub fn with_source(mut self, source: SourceKey) -> Self {
        self.source = Some(source);
        self
    }

    pub fn with_commands(mut self, commands: impl IntoIterator<Item = CommandForm>) -> Self {
        self.commands = commands.into_iter().collect();
        self
    }

    pub fn with_actions(mut self, actions: impl IntoIterator<Item = ActionForm>) -> Self {
        self.actions = actions.into_iter().collect();
        self
    }

    pub fn with_requires_approval(mut self, yes: bool) -> Self {
        self.requires_approval = yes;
        self
    }

    /// Whether every word of `query` is in the skill's name, id,
    /// description or tags, ignoring case: the Skills page's filter. An
    /// empty query matches every skill.
    pub fn matches_filter(&self, query: &str) -> bool {
        let haystack = format!(
            "{} {} {} {}",
            self.name,
            self.id,
            self.description,
            self.tags.join(" ")
        )
        .to_lowercase();
        query
            .split_whitespace()
            .all(|word| haystack.contains(&word.to_lowercase()))
    }

    /// The first required string parameter, which `/id <text>` fills.
    pub fn primary_string_param(&self) -> Option<&str> {
        let required = self.input_schema.get("required")?.as_array()?;
        let props = self.input_schema.get("properties")?.as_object()?;
        required.iter().filter_map(Value::as_str).find(|name| {
            props
                .get(*name)
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str)
                == Some("string")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skills_filter_matches_every_word_anywhere() {
        let skill = SkillDefinition::new(
            SkillId::new("web_fetch").unwrap(),
            "Web fetch",
            Tier::Network,
            Category::Network,
        )
        .with_description("Reads a page as text")
        .with_tags(["internet", "url"]);
        for (query, want) in [
            ("", true),
            ("   ", true),
            ("fetch", true),
            ("FETCH web", true),
            ("web_fetch", true),
            ("page url", true),
            ("internet", true),
            ("fetch notes", false),
            ("calculator", false),
        ] {
            assert_eq!(skill.matches_filter(query), want, "{query:?}");
        }
    }

    #[test]
    fn tiers_carry_the_documented_defaults() {
        let table: Vec<(Tier, bool, bool, bool)> = Tier::ALL
            .iter()
            .map(|t| {
                (
                    *t,
                    t.default_enabled(),
                    t.default_requires_approval(),
                    t.requires_network(),
                )
            })
            .collect();
        assert_eq!(
            table,
            vec![
                (Tier::Core, true, false, false),
                (Tier::Enhanced, true, false, false),
                (Tier::Network, false, true, true),
                (Tier::Integration, false, true, true),
            ]
        );
    }

    #[test]
    fn new_definitions_take_their_tier_defaults() {
        let def = SkillDefinition::new(
            SkillId::new("web_fetch").unwrap(),
            "Web fetch",
            Tier::Network,
            Category::Network,
        );
        assert!(def.requires_approval && def.requires_network && !def.default_enabled);
    }

    #[test]
    fn primary_string_param_is_the_first_required_string() {
        let def = SkillDefinition::new(
            SkillId::new("x").unwrap(),
            "X",
            Tier::Core,
            Category::Productivity,
        )
        .with_input_schema(serde_json::json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "q": {"type": "string"}},
            "required": ["n", "q"]
        }));
        assert_eq!(def.primary_string_param(), Some("q"));
    }
}
