//! Progressive disclosure: the `discover_skills` tool, the ranking behind
//! it, and what its result tells the model.
//!
//! The model starts a conversation with this one tool. It describes the
//! capability it needs; discovery ranks the enabled skills and the enabled
//! Agent Skills packages together and returns at most five. Skills found
//! are loaded into the conversation so they are sent as tools on every
//! later request; a package found is named with the way to use it,
//! `activate_skill`, which is loaded with it.

mod index;
mod normalize;
pub mod packages;

pub use index::{
    DISCOVER_SKILLS_ID, Entry, Expansions, Field, Hit, IndexedPackage, IndexedSkill, PackageText,
    SkillIndex, Weights,
};
pub use normalize::{stem, words};

use crate::agent_skills::activation::ACTIVATE_SKILL;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::skill::call::SkillOutput;
use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::{Category, SkillDefinition, SkillId, SkillKind, Tier};

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

/// One Agent Skills package in a discovery result, with how to use it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiscoveredPackage {
    pub name: String,
    pub description: String,
    /// What to call: `activate_skill` with this package's name.
    #[serde(rename = "use")]
    pub how: String,
}

impl DiscoveredPackage {
    fn of(package: &IndexedPackage) -> Self {
        Self {
            name: package.name.clone(),
            description: package.description.clone(),
            how: format!("{ACTIVATE_SKILL} {{\"name\": \"{}\"}}", package.name),
        }
    }
}

/// What a discovery found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Discovery {
    pub skills: Vec<DiscoveredSkill>,
    /// Agent Skills packages, ranked with the skills.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<DiscoveredPackage>,
    /// Filled when nothing matched: the categories that hold enabled
    /// skills, so the model can try again more broadly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    pub message: String,
}

impl Discovery {
    /// The skills to load into the conversation: those found, and
    /// `activate_skill` when a package was found, since that is how a
    /// package is used.
    pub fn skill_ids(&self) -> Vec<SkillId> {
        let mut ids: Vec<SkillId> = self.skills.iter().map(|s| s.id.clone()).collect();
        if !self.packages.is_empty()
            && let Ok(activate) = SkillId::new(ACTIVATE_SKILL)
            && !ids.contains(&activate)
        {
            ids.push(activate);
        }
        ids
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

/// Runs `discover_skills`: the top matches among enabled skills and
/// packages, at most [`MAX_RESULTS`] in all, with weak tail matches
/// dropped.
pub fn discover(
    index: &SkillIndex,
    query: &str,
    category: Option<Category>,
    is_enabled: &dyn Fn(&IndexedSkill) -> bool,
) -> Discovery {
    let hits = index.search(query, category, MAX_RESULTS, is_enabled);
    let top = hits.first().map(|h| h.score).unwrap_or(0.0);
    let mut skills: Vec<DiscoveredSkill> = Vec::new();
    let mut packages: Vec<DiscoveredPackage> = Vec::new();
    for hit in hits.iter().filter(|h| h.score >= top * RELATIVE_CUTOFF) {
        match hit.entry {
            Entry::Skill(s) => skills.push(DiscoveredSkill {
                id: s.id.clone(),
                name: s.name.clone(),
                description: s.description.clone(),
                tier: s.tier,
            }),
            Entry::Package(p) => packages.push(DiscoveredPackage::of(p)),
        }
    }
    if skills.is_empty() && packages.is_empty() {
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
            packages,
            categories,
            message,
        };
    }
    let mut said = Vec::new();
    match skills.len() {
        0 => {}
        1 => said.push("Found 1 skill. It is now loaded; call it by its id.".to_string()),
        n => said.push(format!(
            "Found {n} skills. They are now loaded; call them by id."
        )),
    }
    match packages.len() {
        0 => {}
        1 => said.push(format!(
            "Found 1 Agent Skills package: call {ACTIVATE_SKILL} with its name to load its instructions."
        )),
        n => said.push(format!(
            "Found {n} Agent Skills packages: call {ACTIVATE_SKILL} with the name of the one that fits to load its instructions."
        )),
    }
    Discovery {
        skills,
        packages,
        categories: Vec::new(),
        message: said.join(" "),
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
        content: vec![crate::skill::call::Content::Json {
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
            "packages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "use": {"type": "string"}
                    },
                    "required": ["name", "description", "use"]
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
    use crate::skill::registry::Registry;

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
                packages: vec![],
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

    fn with_packages() -> SkillIndex {
        let mut index = sample();
        index.upsert_package(&PackageText {
            name: "pdf-forms".into(),
            description: "Fill in and flatten PDF forms.".into(),
            keywords: vec!["acroform".into()],
            headings: vec!["Checkbox fields".into()],
            body: "Tick boxes and radio buttons keep their export values.".into(),
        });
        index.upsert_package(&PackageText {
            name: "brand-voice".into(),
            description: "Write copy in the company's tone of voice.".into(),
            keywords: vec![],
            headings: vec![],
            body: String::new(),
        });
        index
    }

    #[test]
    fn a_package_hit_says_to_activate_it_and_loads_activate_skill() {
        let found = discover(
            &with_packages(),
            "tick the checkbox fields in a pdf form",
            None,
            &by_default,
        );
        assert_eq!(found.skills, vec![]);
        assert_eq!(
            found.packages,
            vec![DiscoveredPackage {
                name: "pdf-forms".into(),
                description: "Fill in and flatten PDF forms.".into(),
                how: "activate_skill {\"name\": \"pdf-forms\"}".into(),
            }]
        );
        assert_eq!(
            found.message,
            "Found 1 Agent Skills package: call activate_skill with its name to load its instructions."
        );
        assert_eq!(
            found.skill_ids(),
            vec![SkillId::new(ACTIVATE_SKILL).unwrap()]
        );
        // The model reads the package under "packages", with its "use".
        let json = found.to_model_json();
        assert_eq!(
            json["packages"][0]["use"],
            "activate_skill {\"name\": \"pdf-forms\"}"
        );
        assert_eq!(Discovery::from_json(&json), Some(found));
    }

    #[test]
    fn skills_and_packages_rank_together() {
        let found = discover(&with_packages(), "percent of a number", None, &by_default);
        assert_eq!(found.packages, vec![]);
        assert_eq!(found.skill_ids(), vec![SkillId::new("calculator").unwrap()]);
        // A category narrows the skills; packages have none and stay in.
        let voice = discover(
            &with_packages(),
            "write in our tone of voice",
            Some(Category::Network),
            &|_| true,
        );
        assert_eq!(voice.packages.len(), 1);
        assert_eq!(voice.packages[0].name, "brand-voice");
        // Results without packages serialise as before.
        assert!(found.to_model_json().get("packages").is_none());
    }

    #[test]
    fn the_definition_registers_cleanly() {
        let mut r = Registry::new();
        let reg = r.register(discover_skills_definition()).unwrap();
        assert_eq!(reg.warnings, vec![]);
        assert!(!discover_skills_definition().requires_approval);
    }
}
