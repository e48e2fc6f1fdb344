//! The short name a server goes by in skill ids, the Servers panel and
//! the routes `hearth serve` hosts for it, and how a new one is suggested
//! from what the person typed.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::url::HttpUrl;

/// The short name a server goes by in skill ids and the Servers panel:
/// 1–24 characters of `a-z`, `0-9` and `-`. No `_`, so the `__` between
/// server and tool in a skill id is unambiguous.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ServerId(String);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ServerIdError {
    #[error("a server name needs 1 to {max} characters, not {0}", max = ServerId::MAX_LEN)]
    Length(usize),
    #[error("a server name may hold only a-z, 0-9 and '-', not {0:?}")]
    BadChar(char),
}

impl ServerId {
    pub const MAX_LEN: usize = 24;

    pub fn new(id: impl Into<String>) -> Result<Self, ServerIdError> {
        let id = id.into();
        if id.is_empty() || id.len() > Self::MAX_LEN {
            return Err(ServerIdError::Length(id.len()));
        }
        if let Some(c) = id
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Err(ServerIdError::BadChar(c));
        }
        Ok(Self(id))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A name for a new server from what the person typed (a name or the
    /// URL), made unique among `taken`.
    pub fn suggest(from: &str, taken: &[ServerId]) -> ServerId {
        let source = match HttpUrl::parse(from) {
            Ok(url) if url.is_loopback() => match url.port {
                Some(port) => format!("local-{port}"),
                None => "local".to_string(),
            },
            Ok(url) => {
                let host = url
                    .host
                    .trim_start_matches("www.")
                    .trim_start_matches("mcp.");
                host.split('.').next().unwrap_or(host).to_string()
            }
            Err(_) => from.to_string(),
        };
        let mut slug = String::new();
        for c in source.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                slug.push(c);
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        let mut base: String = slug.trim_end_matches('-').chars().take(20).collect();
        base = base.trim_end_matches('-').to_string();
        if base.is_empty() {
            base = "server".into();
        }
        let mut candidate = base.clone();
        let mut n = 2;
        while taken.iter().any(|t| t.0 == candidate) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        ServerId(candidate)
    }
}

impl fmt::Display for ServerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for ServerId {
    type Error = ServerIdError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<ServerId> for String {
    fn from(value: ServerId) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sid(s: &str) -> ServerId {
        ServerId::new(s).unwrap()
    }

    #[test]
    fn server_ids_are_suggested_from_urls() {
        let taken = vec![sid("everything"), sid("local-3901")];
        let table = [
            ("http://127.0.0.1:3901/mcp", "local-3901-2"),
            ("https://mcp.example.com/mcp", "example"),
            ("https://www.everything.dev/", "everything-2"),
            ("My Cool Server!", "my-cool-server"),
            ("???", "server"),
        ];
        for (input, want) in table {
            assert_eq!(ServerId::suggest(input, &taken).as_str(), want, "{input}");
        }
        assert_eq!(ServerId::new(""), Err(ServerIdError::Length(0)));
        assert_eq!(ServerId::new("Upper"), Err(ServerIdError::BadChar('U')));
    }
}
