//! The MCP servers the person connected Hearth to, as the app stores them
//! (one record each in the `mcp_servers` store): where the server is, the
//! headers it gets, whether it is on, whether it goes through the relay,
//! and the era it was last found to speak. Adding one from the form is
//! checked here, so a bad URL or header is refused with a reason before
//! anything is sent.

use serde::{Deserialize, Serialize};

use super::hosted::{relay_path, stdio_path};
use super::server_id::{ServerId, ServerIdError};
use super::url::HttpUrl;
use super::version::ServerMemory;

/// Where a server is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ServerSource {
    /// A Streamable HTTP endpoint the person entered.
    Remote { url: String },
    /// A stdio server from `hearth serve`'s local config file, by the name
    /// it has there (the entry's id).
    Stdio,
}

/// One connected server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerEntry {
    /// Also the storage key and the prefix of its skills' ids.
    pub id: ServerId,
    pub source: ServerSource,
    /// Sent with every request (an API key, a bearer token the person
    /// entered).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    pub enabled: bool,
    /// Reached through `hearth serve`'s CORS relay.
    #[serde(default)]
    pub relay: bool,
    /// The person says it runs on this machine (lets the relay reach
    /// loopback).
    #[serde(default)]
    pub local: bool,
    /// How to talk to it, as last detected.
    #[serde(default)]
    pub memory: Option<ServerMemory>,
    pub added_ms: f64,
}

/// What the Add server form holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewServer {
    pub url: String,
    /// Optional; suggested from the URL when empty.
    pub name: String,
    /// `Name: value`, one per line.
    pub headers: String,
    /// A bearer token, sent as `Authorization: Bearer …`.
    pub token: String,
    pub relay: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("enter the server's URL, e.g. https://mcp.example.com/mcp")]
    NoUrl,
    #[error("the URL is not usable: {0}")]
    BadUrl(String),
    #[error("the name is not usable: {0}")]
    BadName(#[from] ServerIdError),
    #[error("a server named {0} is already connected; choose another name")]
    Taken(String),
    #[error("line {line} of the headers is not \"Name: value\"")]
    HeaderShape { line: usize },
    #[error("{0:?} is not a valid header name")]
    HeaderName(String),
    #[error("the value of {0} holds characters a header cannot carry")]
    HeaderValue(String),
    #[error("Hearth sets {0} itself; remove it from the headers")]
    ReservedHeader(String),
    #[error("enter either a token or an Authorization header, not both")]
    TwoAuthorizations,
    #[error(
        "{0} is plain http on another machine, so the token or headers would travel unencrypted; use https"
    )]
    Insecure(String),
}

/// Headers the browser, the protocol or Hearth's proxy own.
const RESERVED: &[&str] = &[
    "host",
    "origin",
    "referer",
    "cookie",
    "content-type",
    "content-length",
    "accept",
    "accept-encoding",
    "connection",
    "last-event-id",
    "x-hearth-token",
];

fn reserved(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    RESERVED.contains(&n.as_str()) || n.starts_with("mcp-") || n.starts_with("sec-")
}

fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Reads `Name: value` lines (blank lines are skipped).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, EntryError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or(EntryError::HeaderShape { line: i + 1 })?;
        let (name, value) = (name.trim(), value.trim());
        if name.is_empty() || !name.bytes().all(token_char) {
            return Err(EntryError::HeaderName(name.into()));
        }
        if reserved(name) {
            return Err(EntryError::ReservedHeader(name.into()));
        }
        if value.bytes().any(|b| b < 0x20 || b == 0x7f) || !value.is_ascii() {
            return Err(EntryError::HeaderValue(name.into()));
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

impl ServerEntry {
    /// A server from the Add server form.
    pub fn from_form(
        form: &NewServer,
        taken: &[ServerId],
        now_ms: f64,
    ) -> Result<ServerEntry, EntryError> {
        let raw = form.url.trim();
        if raw.is_empty() {
            return Err(EntryError::NoUrl);
        }
        let url = HttpUrl::parse(raw).map_err(|e| EntryError::BadUrl(e.to_string()))?;
        let name = form.name.trim();
        let id = if name.is_empty() {
            ServerId::suggest(raw, taken)
        } else {
            let id = ServerId::new(name)?;
            if taken.contains(&id) {
                return Err(EntryError::Taken(id.to_string()));
            }
            id
        };
        let mut headers = parse_headers(&form.headers)?;
        let token = form.token.trim();
        if !token.is_empty() {
            if headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            {
                return Err(EntryError::TwoAuthorizations);
            }
            let value = if token.len() > 7 && token[..7].eq_ignore_ascii_case("bearer ") {
                token.to_string()
            } else {
                format!("Bearer {token}")
            };
            if value.bytes().any(|b| b < 0x20 || b == 0x7f) || !value.is_ascii() {
                return Err(EntryError::HeaderValue("the token".into()));
            }
            headers.push(("Authorization".into(), value));
        }
        if !headers.is_empty() && !url.is_secure_or_loopback() {
            return Err(EntryError::Insecure(url.origin()));
        }
        Ok(ServerEntry {
            id,
            source: ServerSource::Remote { url: raw.into() },
            headers,
            enabled: true,
            relay: form.relay,
            local: url.is_loopback(),
            memory: None,
            added_ms: now_ms,
        })
    }

    /// A stdio server from `hearth serve`'s list, switched on by the person.
    pub fn stdio(id: ServerId, now_ms: f64) -> ServerEntry {
        ServerEntry {
            id,
            source: ServerSource::Stdio,
            headers: Vec::new(),
            enabled: true,
            relay: false,
            local: true,
            memory: None,
            added_ms: now_ms,
        }
    }

    /// The URL the app sends MCP requests to, given its own origin.
    pub fn endpoint(&self, app_origin: &str) -> String {
        match &self.source {
            ServerSource::Remote { url } if !self.relay => url.clone(),
            ServerSource::Remote { .. } => format!("{app_origin}{}", relay_path(&self.id)),
            ServerSource::Stdio => format!("{app_origin}{}", stdio_path(&self.id)),
        }
    }

    /// Whether requests go to `hearth serve` (and so need its token).
    pub fn through_hearth(&self) -> bool {
        match &self.source {
            ServerSource::Remote { .. } => self.relay,
            ServerSource::Stdio => true,
        }
    }

    /// The server's own URL, for display and OAuth (the relay's for stdio).
    pub fn url(&self) -> Option<&str> {
        match &self.source {
            ServerSource::Remote { url } => Some(url),
            ServerSource::Stdio => None,
        }
    }

    /// The headers with secret values hidden, for the panel.
    pub fn shown_headers(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .map(|(n, v)| {
                let (scheme, secret) = match v.split_once(' ') {
                    Some((s, rest)) if n.eq_ignore_ascii_case("authorization") => {
                        (format!("{s} "), rest)
                    }
                    _ => (String::new(), v.as_str()),
                };
                let shown = if secret.len() <= 6 {
                    format!("{scheme}••••")
                } else {
                    format!("{scheme}••••{}", &secret[secret.len() - 2..])
                };
                (n.clone(), shown)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(url: &str) -> NewServer {
        NewServer {
            url: url.into(),
            ..NewServer::default()
        }
    }

    #[test]
    fn the_form_becomes_an_entry_or_a_reason() {
        let taken = vec![ServerId::new("everything").unwrap()];
        /// (form, (id, headers, local) or why not)
        type Case<'a> = (
            NewServer,
            Result<(&'a str, Vec<(&'a str, &'a str)>, bool), EntryError>,
        );
        let table: Vec<Case> = vec![
            (
                form("http://127.0.0.1:3901/mcp"),
                Ok(("local-3901", vec![], true)),
            ),
            (
                NewServer {
                    name: "files".into(),
                    token: "abc123".into(),
                    ..form("https://mcp.example.com/mcp")
                },
                Ok(("files", vec![("Authorization", "Bearer abc123")], false)),
            ),
            (
                NewServer {
                    headers: "X-Api-Key: k1\n\nX-Team: blue".into(),
                    ..form("https://api.example.com/mcp")
                },
                Ok(("api", vec![("X-Api-Key", "k1"), ("X-Team", "blue")], false)),
            ),
            (form("  "), Err(EntryError::NoUrl)),
            (
                form("ftp://x.example/"),
                Err(EntryError::BadUrl(
                    "\"ftp://x.example/\" is not an http or https URL".into(),
                )),
            ),
            (
                NewServer {
                    name: "everything".into(),
                    ..form("http://127.0.0.1:1/mcp")
                },
                Err(EntryError::Taken("everything".into())),
            ),
            (
                NewServer {
                    name: "Bad Name".into(),
                    ..form("http://127.0.0.1:1/mcp")
                },
                Err(EntryError::BadName(ServerIdError::BadChar('B'))),
            ),
            (
                NewServer {
                    headers: "no colon here".into(),
                    ..form("https://a.example/")
                },
                Err(EntryError::HeaderShape { line: 1 }),
            ),
            (
                NewServer {
                    headers: "Bad Name: x".into(),
                    ..form("https://a.example/")
                },
                Err(EntryError::HeaderName("Bad Name".into())),
            ),
            (
                NewServer {
                    headers: "Mcp-Session-Id: forged".into(),
                    ..form("https://a.example/")
                },
                Err(EntryError::ReservedHeader("Mcp-Session-Id".into())),
            ),
            (
                NewServer {
                    headers: "X-Hearth-Token: stolen".into(),
                    ..form("https://a.example/")
                },
                Err(EntryError::ReservedHeader("X-Hearth-Token".into())),
            ),
            (
                NewServer {
                    headers: "Authorization: Basic x".into(),
                    token: "t".into(),
                    ..form("https://a.example/")
                },
                Err(EntryError::TwoAuthorizations),
            ),
            (
                NewServer {
                    token: "t".into(),
                    ..form("http://192.168.1.5:8000/mcp")
                },
                Err(EntryError::Insecure("http://192.168.1.5:8000".into())),
            ),
        ];
        for (input, want) in table {
            let got = ServerEntry::from_form(&input, &taken, 5.0)
                .map(|e| (e.id.to_string(), e.headers.clone(), e.local));
            let want = want.map(|(id, h, local)| {
                (
                    id.to_string(),
                    h.into_iter()
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                        .collect::<Vec<_>>(),
                    local,
                )
            });
            assert_eq!(got, want, "{input:?}");
        }
    }

    #[test]
    fn endpoints_follow_the_source_and_the_relay() {
        let origin = "http://127.0.0.1:8080";
        let mut e = ServerEntry::from_form(&form("http://127.0.0.1:3901/mcp"), &[], 0.0).unwrap();
        assert_eq!(
            (e.endpoint(origin), e.through_hearth()),
            ("http://127.0.0.1:3901/mcp".into(), false)
        );
        e.relay = true;
        assert_eq!(
            (e.endpoint(origin), e.through_hearth()),
            ("http://127.0.0.1:8080/mcp/relay/local-3901".into(), true)
        );
        let s = ServerEntry::stdio(ServerId::new("memory").unwrap(), 0.0);
        assert_eq!(
            (s.endpoint(origin), s.through_hearth(), s.url()),
            ("http://127.0.0.1:8080/mcp/stdio/memory".into(), true, None)
        );
        let stored = serde_json::to_value(&s).unwrap();
        assert_eq!(stored["source"], serde_json::json!({"kind": "stdio"}));
        assert_eq!(serde_json::from_value::<ServerEntry>(stored).unwrap(), s);
    }

    #[test]
    fn secrets_are_not_shown_whole() {
        let e = ServerEntry::from_form(
            &NewServer {
                token: "sk-live-123456".into(),
                headers: "X-K: short".into(),
                ..form("https://a.example/mcp")
            },
            &[],
            0.0,
        )
        .unwrap();
        assert_eq!(
            e.shown_headers(),
            vec![
                ("X-K".to_string(), "••••".to_string()),
                ("Authorization".to_string(), "Bearer ••••56".to_string())
            ]
        );
    }
}
