//! Progressive disclosure: the `discover_skills` tool, the ranking behind
//! it, and what its result tells the model.
//!
//! The model starts a conversation with this one tool. It describes the
//! capability it needs; discovery ranks the enabled skills and returns at
//! most five, which the agent loop then loads into the conversation so
//! they are sent as tools on every later request.

mod index;
mod text;

pub use index::{DISCOVER_SKILLS_ID, Expansions, Field, Hit, IndexedSkill, SkillIndex, Weights};
pub use text::{stem, words};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::SkillOutput;
use crate::skill::{Category, SkillDefinition, SkillId, SkillKind, Tier};
use crate::usage::{CommandForm, TextShape};

/// The most skills one discovery returns (and so loads).
pub const MAX_RESULTS: usize = 5;

/// Results scoring below this share of the best one are dropped: each
/// loaded skill costs tokens on every later request, so weak matches are
/// not worth loading.
pub const RELATIVE_CUTOFF: f32 = 0.3;

/// The arguments the model passes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoverArgs {
    pub query: String,
    /// `None` or "all" searches every category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

/// Bad arguments to `discover_skills`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiscoverError {
    #[error("discover_skills needs a 'query' string describing the capability")]
    MissingQuery,
    #[error(
        "unknown category '{0}'; use one of: all, productivity, developer, network, integrations"
    )]
    UnknownCategory(String),
}

impl DiscoverArgs {
    pub fn parse(arguments: &Value) -> Result<(String, Option<Category>), DiscoverError> {
        let args: DiscoverArgs =
            serde_json::from_value(arguments.clone()).map_err(|_| DiscoverError::MissingQuery)?;
        if args.query.trim().is_empty() {
            return Err(DiscoverError::MissingQuery);
        }
        let category = match args.category.as_deref().map(str::trim) {
            None | Some("") | Some("all") => None,
            Some(c) => Some(
                Category::parse(&c.to_ascii_lowercase())
                    .ok_or_else(|| DiscoverError::UnknownCategory(c.to_string()))?,
            ),
        };
        Ok((args.query, category))
    }
}

/// One skill in a discovery result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiscoveredSkill {
    pub id: SkillId,
    pub name: String,
    pub description: String,
    pub tier: Tier,
}

/// What a discovery found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Discovery {
    pub skills: Vec<DiscoveredSkill>,
    /// Filled when nothing matched: the categories that hold enabled
    /// skills, so the model can try again more broadly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    pub message: String,
}

impl Discovery {
    pub fn skill_ids(&self) -> Vec<SkillId> {
        self.skills.iter().map(|s| s.id.clone()).collect()
    }

    /// The result as the model sees it: compact JSON.
    pub fn to_model_json(&self) -> Value {
        // Serialising our own plain types cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a discovery back from a tool result's JSON, e.g. to learn
    /// which skills to load into the conversation.
    pub fn from_json(value: &Value) -> Option<Discovery> {
        serde_json::from_value(value.clone()).ok()
    }
}

/// Runs `discover_skills`: the top matches among enabled skills, at most
/// [`MAX_RESULTS`], with weak tail matches dropped.
pub fn discover(
    index: &SkillIndex,
    query: &str,
    category: Option<Category>,
    is_enabled: &dyn Fn(&IndexedSkill) -> bool,
) -> Discovery {
    let hits = index.search(query, category, MAX_RESULTS, is_enabled);
    let top = hits.first().map(|h| h.score).unwrap_or(0.0);
    let skills: Vec<DiscoveredSkill> = hits
        .iter()
        .filter(|h| h.score >= top * RELATIVE_CUTOFF)
        .map(|h| DiscoveredSkill {
            id: h.skill.id.clone(),
            name: h.skill.name.clone(),
            description: h.skill.description.clone(),
            tier: h.skill.tier,
        })
        .collect();
    if skills.is_empty() {
        let categories = index.categories(is_enabled);
        let list: Vec<&str> = categories.iter().map(|c| c.as_str()).collect();
        let message = if list.is_empty() {
            "No skill matched, and no skills are enabled. The user can enable skills in the Skills panel.".to_string()
        } else {
            let scope = match category {
                Some(c) => format!(" in '{c}'"),
                None => String::new(),
            };
            format!(
                "No skill matched{scope}. Categories with enabled skills: {}. Try other words or a category.",
                list.join(", ")
            )
        };
        return Discovery {
            skills,
            categories,
            message,
        };
    }
    let message = match skills.len() {
        1 => "Found 1 skill. It is now loaded; call it by its id.".to_string(),
        n => format!("Found {n} skills. They are now loaded; call them by id."),
    };
    Discovery {
        skills,
        categories: Vec::new(),
        message,
    }
}

/// The `discover_skills` call as a skill output: the JSON the model reads,
/// also the structured result the agent loop loads skills from.
pub fn discover_output(
    index: &SkillIndex,
    arguments: &Value,
    is_enabled: &dyn Fn(&IndexedSkill) -> bool,
) -> Result<SkillOutput, DiscoverError> {
    let (query, category) = DiscoverArgs::parse(arguments)?;
    let found = discover(index, &query, category, is_enabled);
    let value = found.to_model_json();
    Ok(SkillOutput {
        content: vec![crate::call::Content::Json {
            value: value.clone(),
        }],
        structured: Some(value),
        undo: None,
    })
}

/// The text the model reads for a discovery (compact JSON).
pub fn format_for_model(found: &Discovery) -> String {
    found.to_model_json().to_string()
}

/// The tool description: short, because it is in every request.
pub const DISCOVER_DESCRIPTION: &str = "Find skills (tools) for a task and load them into this conversation. Call it before acting: calculations, notes, tasks, files, code, the web, connected services. Then call the skills it returns.";

/// The `discover_skills` definition. It is a core skill like any other: it
/// runs through the same call path and is written to the activity log.
pub fn discover_skills_definition() -> SkillDefinition {
    let mut categories: Vec<&str> = vec!["all"];
    categories.extend(Category::ALL.iter().map(|c| c.as_str()));
    SkillDefinition::new(
        // A literal that satisfies SkillId's rules.
        SkillId::new(DISCOVER_SKILLS_ID).unwrap_or_else(|e| panic!("{e}")),
        "Discover skills",
        Tier::Core,
        Category::Productivity,
    )
    .with_icon("🔎")
    .with_description(DISCOVER_DESCRIPTION)
    .with_tags(["discover", "search", "skills"])
    .with_examples(["find a skill that converts units"])
    .with_kind(SkillKind::Builtin)
    .with_commands([CommandForm::new(
        "discover_skills",
        TextShape::Whole {
            param: "query".into(),
        },
        "Find the skills that fit a task",
    )
    .examples(["/discover_skills convert units"])])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "The capability you need, in a few words"
            },
            "category": {
                "type": "string",
                "enum": categories
            }
        },
        "required": ["query"]
    }))
    .with_output_schema(json!({
        "type": "object",
        "properties": {
            "skills": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "tier": {"type": "string"}
                    },
                    "required": ["id", "name", "description", "tier"]
                }
            },
            "categories": {"type": "array", "items": {"type": "string"}},
            "message": {"type": "string"}
        },
        "required": ["skills", "message"]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn sample() -> SkillIndex {
        let calc = crate::builtin::calculator();
        let fetch = SkillDefinition::new(
            SkillId::new("web_fetch").unwrap(),
            "Web fetch",
            Tier::Network,
            Category::Network,
        )
        .with_description("Download a web page and return its readable text.");
        SkillIndex::build([&calc, &fetch])
    }

    fn by_default(s: &IndexedSkill) -> bool {
        s.default_enabled
    }

    #[test]
    fn finds_and_explains() {
        let found = discover(&sample(), "math calculation", None, &by_default);
        assert_eq!(
            found,
            Discovery {
                skills: vec![DiscoveredSkill {
                    id: SkillId::new("calculator").unwrap(),
                    name: "Calculator".into(),
                    description: crate::builtin::calculator().description,
                    tier: Tier::Core,
                }],
                categories: vec![],
                message: "Found 1 skill. It is now loaded; call it by its id.".into(),
            }
        );
    }

    #[test]
    fn disabled_skills_are_never_returned_and_misses_list_categories() {
        let found = discover(&sample(), "download a web page", None, &by_default);
        assert_eq!(found.skills, vec![]);
        assert_eq!(found.categories, vec![Category::Productivity]);
        assert_eq!(
            found.message,
            "No skill matched. Categories with enabled skills: productivity. Try other words or a category."
        );
        let none = discover(&sample(), "math", None, &|_| false);
        assert_eq!(none.categories, vec![]);
        assert!(none.message.contains("no skills are enabled"));
    }

    #[test]
    fn arguments_are_checked() {
        let cases = [
            (json!({"query": "x"}), Ok(("x".to_string(), None))),
            (
                json!({"query": "x", "category": "all"}),
                Ok(("x".to_string(), None)),
            ),
            (
                json!({"query": "x", "category": "Developer"}),
                Ok(("x".to_string(), Some(Category::Developer))),
            ),
            (
                json!({"query": "x", "category": "games"}),
                Err(DiscoverError::UnknownCategory("games".into())),
            ),
            (json!({"query": "  "}), Err(DiscoverError::MissingQuery)),
            (json!({}), Err(DiscoverError::MissingQuery)),
            (json!("calculator"), Err(DiscoverError::MissingQuery)),
        ];
        for (args, want) in cases {
            assert_eq!(DiscoverArgs::parse(&args), want, "{args}");
        }
    }

    #[test]
    fn output_round_trips_to_the_loaded_ids() {
        let out = discover_output(&sample(), &json!({"query": "percent"}), &by_default).unwrap();
        let value = out.structured.unwrap();
        let back = Discovery::from_json(&value).unwrap();
        assert_eq!(back.skill_ids(), vec![SkillId::new("calculator").unwrap()]);
        assert_eq!(format_for_model(&back), value.to_string());
    }

    #[test]
    fn the_definition_registers_cleanly() {
        let mut r = Registry::new();
        let reg = r.register(discover_skills_definition()).unwrap();
        assert_eq!(reg.warnings, vec![]);
        assert!(!discover_skills_definition().requires_approval);
    }
}
