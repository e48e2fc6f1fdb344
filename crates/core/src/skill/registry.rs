//! The one registry every skill lives in, whatever its source.
//!
//! Lookups by id are O(1); iteration follows registration order, which stays
//! stable when a skill is replaced in place.

use std::collections::HashMap;

use crate::schema::{SchemaWarning, check_bounded, check_schema};
use crate::skill::{SkillDefinition, SkillId, SkillKind, Tier};

#[derive(Clone, Debug, Default)]
pub struct Registry {
    skills: Vec<SkillDefinition>,
    index: HashMap<SkillId, usize>,
}

/// What registering a skill found wrong with it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RegistryError {
    #[error("built-in skill '{0}' must have at least one tag and one example")]
    MissingTagsOrExamples(SkillId),
    #[error("skill '{0}' has no description")]
    MissingDescription(SkillId),
    #[error("skill '{id}': the input schema must describe an object, not {found}")]
    InputNotObject { id: SkillId, found: String },
    #[error("the name '{id}' is taken by {by}; a skill can only replace one from its own source")]
    Taken { id: SkillId, by: String },
    #[error("skill '{id}' was left out: in its {which} schema, {why}")]
    UnboundedSchema {
        id: SkillId,
        /// "input" or "output".
        which: &'static str,
        why: String,
    },
}

/// Where a skill comes from, in words.
fn source_of(kind: &SkillKind) -> String {
    match kind {
        SkillKind::Builtin => "one of Hearth's own skills".into(),
        SkillKind::AgentSkill { package, .. } => format!("the skill package '{package}'"),
        SkillKind::Mcp { server, .. } => format!("the MCP server '{server}'"),
    }
}

/// Whether two skills come from the same place: the same registering
/// source (see [`crate::skill::source`]), and within it Hearth itself, one skill
/// package, or one MCP server.
fn same_source(a: &SkillDefinition, b: &SkillDefinition) -> bool {
    a.source == b.source && same_kind_source(&a.kind, &b.kind)
}

fn same_kind_source(a: &SkillKind, b: &SkillKind) -> bool {
    match (a, b) {
        (SkillKind::Builtin, SkillKind::Builtin) => true,
        (SkillKind::AgentSkill { package: p, .. }, SkillKind::AgentSkill { package: q, .. }) => {
            p == q
        }
        (SkillKind::Mcp { server: s, .. }, SkillKind::Mcp { server: t, .. }) => s == t,
        (SkillKind::Builtin | SkillKind::AgentSkill { .. } | SkillKind::Mcp { .. }, _) => false,
    }
}

/// A skill registered, plus what its schemas use that cannot be checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Registered {
    pub replaced: bool,
    pub warnings: Vec<SchemaWarning>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `skill`, or replaces the skill with the same id in place when
    /// both come from the same source. A skill package or an MCP server
    /// can never take the name of a built-in skill, or of each other's,
    /// and no source can take a name another source registered.
    pub fn register(&mut self, skill: SkillDefinition) -> Result<Registered, RegistryError> {
        if skill.description.trim().is_empty() {
            return Err(RegistryError::MissingDescription(skill.id));
        }
        if skill.kind == SkillKind::Builtin && (skill.tags.is_empty() || skill.examples.is_empty())
        {
            return Err(RegistryError::MissingTagsOrExamples(skill.id));
        }
        match skill.input_schema.get("type").and_then(|t| t.as_str()) {
            Some("object") | None => {}
            Some(other) => {
                return Err(RegistryError::InputNotObject {
                    id: skill.id,
                    found: other.to_string(),
                });
            }
        }
        // A schema no check could finish on would freeze the tab on the
        // first call, before anyone is asked: such a skill stays out.
        for (which, schema) in [
            ("input", &skill.input_schema),
            ("output", &skill.output_schema),
        ] {
            if let Err(e) = check_bounded(schema) {
                return Err(RegistryError::UnboundedSchema {
                    id: skill.id,
                    which,
                    why: e.to_string(),
                });
            }
        }
        let mut warnings = check_schema(&skill.input_schema);
        for mut w in check_schema(&skill.output_schema) {
            w.at = format!("(output){}", w.at);
            warnings.push(w);
        }
        if let Some(&i) = self.index.get(&skill.id)
            && !same_source(&self.skills[i], &skill)
        {
            return Err(RegistryError::Taken {
                by: source_of(&self.skills[i].kind),
                id: skill.id,
            });
        }
        let replaced = match self.index.get(&skill.id) {
            Some(&i) => {
                self.skills[i] = skill;
                true
            }
            None => {
                self.index.insert(skill.id.clone(), self.skills.len());
                self.skills.push(skill);
                false
            }
        };
        Ok(Registered { replaced, warnings })
    }

    /// Removes a skill; the others keep their relative order.
    pub fn remove(&mut self, id: &SkillId) -> Option<SkillDefinition> {
        let i = self.index.remove(id)?;
        let removed = self.skills.remove(i);
        for slot in self.index.values_mut() {
            if *slot > i {
                *slot -= 1;
            }
        }
        Some(removed)
    }

    /// Removes every skill `keep` rejects, e.g. all tools of one MCP server.
    pub fn retain(&mut self, mut keep: impl FnMut(&SkillDefinition) -> bool) {
        self.skills.retain(|s| keep(s));
        self.index = self
            .skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
    }

    pub fn get(&self, id: &SkillId) -> Option<&SkillDefinition> {
        self.index.get(id).map(|&i| &self.skills[i])
    }

    pub fn get_str(&self, id: &str) -> Option<&SkillDefinition> {
        SkillId::new(id).ok().and_then(|id| self.get(&id))
    }

    pub fn contains(&self, id: &SkillId) -> bool {
        self.index.contains_key(id)
    }

    pub fn iter(&self) -> impl Iterator<Item = &SkillDefinition> {
        self.skills.iter()
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills of one tier, in registry order.
    pub fn by_tier(&self, tier: Tier) -> impl Iterator<Item = &SkillDefinition> {
        self.skills.iter().filter(move |s| s.tier == tier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::Category;
    use serde_json::json;

    fn skill(id: &str, tier: Tier) -> SkillDefinition {
        SkillDefinition::new(
            SkillId::new(id).unwrap(),
            id.to_uppercase(),
            tier,
            Category::Productivity,
        )
        .with_description(format!("The {id} skill"))
        .with_tags(["t"])
        .with_examples(["e"])
    }

    fn ids(r: &Registry) -> Vec<&str> {
        r.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn lookup_and_stable_order() {
        let mut r = Registry::new();
        for id in ["b", "a", "c"] {
            r.register(skill(id, Tier::Core)).unwrap();
        }
        assert_eq!(ids(&r), ["b", "a", "c"]);
        assert_eq!(r.get_str("a").unwrap().name, "A");
        assert!(r.get_str("zzz").is_none());
        assert!(r.get_str("not an id").is_none());

        let again = r
            .register(skill("a", Tier::Network).with_description("new"))
            .unwrap();
        assert!(again.replaced);
        assert_eq!(ids(&r), ["b", "a", "c"], "replacing keeps the slot");
        assert_eq!(r.get_str("a").unwrap().tier, Tier::Network);

        assert_eq!(r.remove(&SkillId::new("b").unwrap()).unwrap().name, "B");
        assert_eq!(ids(&r), ["a", "c"]);
        assert_eq!(r.get_str("c").unwrap().name, "C", "index follows the shift");

        r.retain(|s| s.id.as_str() != "a");
        assert_eq!(ids(&r), ["c"]);
        assert_eq!(r.get_str("c").unwrap().name, "C");
        assert_eq!(r.by_tier(Tier::Core).count(), 1);
    }

    #[test]
    fn builtins_need_tags_examples_and_description() {
        let mut r = Registry::new();
        let no_tags = skill("x", Tier::Core).with_tags(Vec::<String>::new());
        assert_eq!(
            r.register(no_tags),
            Err(RegistryError::MissingTagsOrExamples(
                SkillId::new("x").unwrap()
            ))
        );
        let no_desc = skill("y", Tier::Core).with_description("  ");
        assert_eq!(
            r.register(no_desc),
            Err(RegistryError::MissingDescription(
                SkillId::new("y").unwrap()
            ))
        );
        // MCP tools come with whatever their server gives; tags are optional.
        let mcp = skill("z", Tier::Integration)
            .with_tags(Vec::<String>::new())
            .with_kind(SkillKind::Mcp {
                server: "s".into(),
                tool: "z".into(),
            });
        assert!(r.register(mcp).is_ok());
    }

    #[test]
    fn registration_reports_unsupported_schema_keywords() {
        let mut r = Registry::new();
        let s = skill("x", Tier::Core).with_input_schema(json!({
            "type": "object",
            "properties": {"q": {"type": "string", "pattern": "^a"}}
        }));
        let reg = r.register(s).unwrap();
        assert_eq!(reg.warnings.len(), 1);
        assert_eq!(reg.warnings[0].keyword, "pattern");
        let bad = skill("y", Tier::Core).with_input_schema(json!({"type": "string"}));
        assert!(matches!(
            r.register(bad),
            Err(RegistryError::InputNotObject { .. })
        ));
    }
}
