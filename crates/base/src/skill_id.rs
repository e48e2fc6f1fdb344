//! The stable id a skill is called by, shared by the registry and by the
//! Agent Skills packages whose tools become skills.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What joins an MCP server's id and its tool's name in the tool's skill
/// id (`{server}__{tool}`). Server ids never hold `_`, and no other source
/// may use a name that holds this, so an MCP tool's id (and the permission
/// settings stored under it) can never be taken by a skill package's tool.
pub const MCP_SEPARATOR: &str = "__";

/// The stable id a skill is called by. It doubles as the tool name sent to
/// model providers, so it is limited to what every provider accepts:
/// 1–64 characters of ASCII letters, digits, `_` and `-`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SkillId(String);

impl SkillId {
    pub const MAX_LEN: usize = 64;

    pub fn new(id: impl Into<String>) -> Result<Self, SkillIdError> {
        let id = id.into();
        if id.is_empty() {
            return Err(SkillIdError::Empty);
        }
        if id.len() > Self::MAX_LEN {
            return Err(SkillIdError::TooLong(id.len()));
        }
        if let Some(c) = id
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(SkillIdError::BadChar(c));
        }
        Ok(Self(id))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SkillId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for SkillId {
    type Error = SkillIdError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<SkillId> for String {
    fn from(value: SkillId) -> Self {
        value.0
    }
}

impl PartialEq<str> for SkillId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SkillIdError {
    #[error("a skill id cannot be empty")]
    Empty,
    #[error("a skill id has at most 64 characters, this one has {0}")]
    TooLong(usize),
    #[error("a skill id may hold only letters, digits, '_' and '-', not {0:?}")]
    BadChar(char),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_accept_tool_name_characters_only() {
        assert!(SkillId::new("web_fetch").is_ok());
        assert!(SkillId::new("mcp-everything-echo").is_ok());
        assert_eq!(SkillId::new(""), Err(SkillIdError::Empty));
        assert_eq!(SkillId::new("a b"), Err(SkillIdError::BadChar(' ')));
        assert_eq!(SkillId::new("x".repeat(65)), Err(SkillIdError::TooLong(65)));
        assert_eq!(SkillId::new("né"), Err(SkillIdError::BadChar('é')));
    }
}
