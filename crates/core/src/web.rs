//! The network-tier web skills: `web_fetch` and `web_search`.
//!
//! This module holds everything about them that is not I/O:
//! - their definitions (network tier: off by default, approval required);
//! - the wire types of the proxy's `/api/fetch` and `/api/search`, shared by
//!   the proxy (which serialises them) and the app (which reads them);
//! - the per-skill domain policy (allowlist and denylist) as data with a pure
//!   decision function, which the proxy applies to the first URL, every
//!   redirect and every search result;
//! - the formatting of results for cards and for the model, and of the
//!   proxy's failures as messages a person can act on.
//!
//! The app's executor only has to POST the call's arguments (plus the
//! skill's [`DomainPolicy`]) to the proxy and hand the answer to
//! [`fetch_output`] / [`search_output`] or [`WebFailure`].

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::{SkillError, SkillOutput, ToolResult};
use crate::skill::{Category, SkillDefinition, SkillId, Tier};
use crate::usage::{CommandForm, TextShape};

/// The id of the web fetch skill.
pub const WEB_FETCH: &str = "web_fetch";
/// The id of the web search skill.
pub const WEB_SEARCH: &str = "web_search";

/// The longest URL `web_fetch` accepts.
pub const MAX_URL_LEN: usize = 2048;
/// The longest query `web_search` accepts.
pub const MAX_QUERY_LEN: usize = 400;
/// Search results a call may ask for.
pub const MAX_SEARCH_LIMIT: u32 = 20;
/// Search results when the call does not say.
pub const DEFAULT_SEARCH_LIMIT: u32 = 5;
/// The most page text handed to the model; the card keeps the whole page.
pub const MODEL_TEXT_MAX_CHARS: usize = 24_000;

fn id(s: &str) -> SkillId {
    // The ids in this module are literals that satisfy SkillId's rules.
    SkillId::new(s).unwrap_or_else(|e| panic!("web skill id {s:?}: {e}"))
}

/// The `web_fetch` skill: read one web page through the local proxy.
pub fn web_fetch() -> SkillDefinition {
    SkillDefinition::new(id(WEB_FETCH), "Web fetch", Tier::Network, Category::Network)
        .with_icon("🌐")
        .with_description(
            "Fetch one web page (http or https) through Hearth's local proxy and read it \
             as Markdown with its title and links; JSON and plain text are returned as they \
             are. Private and local addresses are refused.",
        )
        .with_tags(["web", "fetch", "url", "page", "read", "download", "http", "link"])
        .with_examples([
            "Read https://example.com/article",
            "What does this page say? https://www.rust-lang.org/",
            "Fetch the JSON at https://api.github.com/repos/rust-lang/rust",
            "Summarise https://en.wikipedia.org/wiki/Hearth",
        ])
        .with_commands([CommandForm::new(
            "web_fetch",
            TextShape::Whole {
                param: "url".into(),
            },
            "Read a web page",
        )
        .examples(["/web_fetch https://example.com/"])])
        .with_input_schema(json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_URL_LEN,
                    "description": "The http or https URL to read, e.g. 'https://example.com/page'"
                },
                "max_bytes": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Refuse pages larger than this many bytes (the proxy has its own default and ceiling)"
                }
            },
            "required": ["url"],
            "additionalProperties": false
        }))
        .with_output_schema(fetch_response_schema())
}

/// The `web_search` skill: search the web through the backend the person
/// configured for the proxy (SearXNG or Brave Search).
pub fn web_search() -> SkillDefinition {
    SkillDefinition::new(
        id(WEB_SEARCH),
        "Web search",
        Tier::Network,
        Category::Network,
    )
    .with_icon("🔎")
    .with_description(
        "Search the web through the search backend configured for Hearth's local proxy \
             (SearXNG or Brave Search) and get titles, links and snippets.",
    )
    .with_tags([
        "web",
        "search",
        "internet",
        "lookup",
        "find",
        "news",
        "query",
        "google",
        "search engine",
    ])
    .with_examples([
        "Search the web for Leptos 0.8 release notes",
        "Look up the latest Rust version",
        "Find articles about local-first software",
    ])
    .with_commands([CommandForm::new(
        "web_search",
        TextShape::Whole {
            param: "query".into(),
        },
        "Search the web",
    )
    .examples(["/web_search leptos signals"])])
    .with_input_schema(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_LEN,
                "description": "What to search for"
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "description": "How many results to return (default 5)"
            }
        },
        "required": ["query"],
        "additionalProperties": false
    }))
    .with_output_schema(search_response_schema())
}

/// Both web skills, in the order the Skills panel lists them.
pub fn definitions() -> Vec<SkillDefinition> {
    vec![web_fetch(), web_search()]
}

fn link_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "url": {"type": "string"}},
        "required": ["text", "url"]
    })
}

fn fetch_response_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "url": {"type": "string"},
            "requested_url": {"type": "string"},
            "host": {"type": "string"},
            "status": {"type": "integer"},
            "kind": {"enum": ["html", "json", "text"]},
            "content_type": {"type": "string"},
            "charset": {"type": "string"},
            "lossy": {"type": "boolean"},
            "title": {"type": ["string", "null"]},
            "content": {"type": "string"},
            "links": {"type": "array", "items": link_schema()},
            "bytes": {"type": "integer", "minimum": 0},
            "redirects": {"type": "integer", "minimum": 0}
        },
        "required": ["url", "host", "status", "kind", "content_type", "content", "links"]
    })
}

fn search_response_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "backend": {"type": "string"},
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "url": {"type": "string"},
                        "host": {"type": "string"},
                        "snippet": {"type": "string"}
                    },
                    "required": ["title", "url", "host", "snippet"]
                }
            },
            "filtered": {"type": "integer", "minimum": 0}
        },
        "required": ["query", "backend", "results"]
    })
}

// ---------------------------------------------------------------------------
// Domain policy

/// One entry of a skill's allowlist or denylist.
///
/// The three forms, and what each matches (hosts are compared
/// case-insensitively, with any trailing dot removed):
///
/// | written          | matches                                   | does not match          |
/// |------------------|-------------------------------------------|-------------------------|
/// | `example.com`    | `example.com`, `www.example.com`, `a.b.example.com` | `notexample.com` |
/// | `*.example.com`  | `www.example.com`, `a.b.example.com`      | `example.com`           |
/// | `=example.com`   | `example.com` only                        | `www.example.com`       |
///
/// An IP address (`93.184.215.14`, `[2001:db8::1]`) matches only itself.
/// Internationalised names may be written either way (`bücher.example` or
/// `xn--bcher-kva.example`): they are kept and compared in their ASCII
/// (`xn--`) form, which is what URLs carry, converted as browsers convert a
/// URL's host (UTS #46 through the `idna` crate).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DomainPattern {
    kind: PatternKind,
    /// Lower-case, without a trailing dot or the `*.` / `=` marker.
    name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PatternKind {
    /// The domain and every subdomain.
    DomainAndSubdomains,
    /// Subdomains only.
    SubdomainsOnly,
    /// Exactly this host.
    Exact,
}

/// Why a domain pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DomainPatternError {
    #[error("a domain cannot be empty")]
    Empty,
    #[error("write just the domain, like example.com, not a URL ({0:?})")]
    LooksLikeUrl(String),
    #[error(
        "{0:?}: only a leading '*.' is allowed as a wildcard, as in *.example.com (use = for an exact host, as in =example.com)"
    )]
    BadWildcard(String),
    #[error("{0:?} is not a valid internationalised domain name")]
    BadInternationalName(String),
    #[error(
        "{0:?} is not a valid domain: labels hold letters, digits, '-' and '_', 1–63 characters each"
    )]
    BadLabel(String),
    #[error("{0:?} is longer than the 253 characters a domain may have")]
    TooLong(String),
}

impl DomainPattern {
    pub fn parse(input: &str) -> Result<Self, DomainPatternError> {
        let raw = input.trim();
        if raw.is_empty() {
            return Err(DomainPatternError::Empty);
        }
        if raw.contains("://") || raw.contains('/') || raw.contains('@') {
            return Err(DomainPatternError::LooksLikeUrl(raw.to_string()));
        }
        let lower = raw.to_ascii_lowercase();
        let (kind, rest) = if let Some(rest) = lower.strip_prefix("*.") {
            (PatternKind::SubdomainsOnly, rest)
        } else if let Some(rest) = lower.strip_prefix('=') {
            (PatternKind::Exact, rest)
        } else {
            (PatternKind::DomainAndSubdomains, lower.as_str())
        };
        let ascii;
        let rest = if rest.is_ascii() {
            rest
        } else {
            ascii = to_ascii_name(rest)
                .ok_or_else(|| DomainPatternError::BadInternationalName(raw.to_string()))?;
            ascii.as_str()
        };
        if rest.contains('*') {
            return Err(DomainPatternError::BadWildcard(raw.to_string()));
        }
        if let Some(ip) = normalize_ip(rest) {
            // An address has no subdomains; every form means "this address".
            return match kind {
                PatternKind::SubdomainsOnly => {
                    Err(DomainPatternError::BadWildcard(raw.to_string()))
                }
                PatternKind::DomainAndSubdomains | PatternKind::Exact => Ok(Self {
                    kind: PatternKind::Exact,
                    name: ip,
                }),
            };
        }
        let name = rest.strip_suffix('.').unwrap_or(rest);
        if name.contains(':') || name.contains('[') || name.contains(']') {
            return Err(DomainPatternError::LooksLikeUrl(raw.to_string()));
        }
        if name.len() > 253 {
            return Err(DomainPatternError::TooLong(raw.to_string()));
        }
        let labels_ok = name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        if !labels_ok {
            return Err(DomainPatternError::BadLabel(raw.to_string()));
        }
        Ok(Self {
            kind,
            name: name.to_string(),
        })
    }

    /// Whether `host` (as a URL carries it: a name, `1.2.3.4` or `[v6]`)
    /// matches this pattern.
    pub fn matches(&self, host: &str) -> bool {
        let Some(host) = normalize_host(host) else {
            return false;
        };
        match self.kind {
            PatternKind::Exact => host == self.name,
            PatternKind::DomainAndSubdomains => {
                host == self.name || is_subdomain_of(&host, &self.name)
            }
            PatternKind::SubdomainsOnly => is_subdomain_of(&host, &self.name),
        }
    }
}

fn is_subdomain_of(host: &str, domain: &str) -> bool {
    host.len() > domain.len() + 1
        && host.ends_with(domain)
        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
}

/// `1.2.3.4` as is, and IPv6 in brackets, both as URLs print them; `None`
/// when `s` is not an address in one of those forms.
fn normalize_ip(s: &str) -> Option<String> {
    if let Ok(v4) = s.parse::<std::net::Ipv4Addr>() {
        return Some(v4.to_string());
    }
    let inner = s.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
    let v6 = inner.unwrap_or(s).parse::<std::net::Ipv6Addr>().ok()?;
    Some(format!("[{v6}]"))
}

/// `name` in its ASCII form (`bücher.example` → `xn--bcher-kva.example`),
/// as a browser converts a URL's host; `None` when it cannot be one.
fn to_ascii_name(name: &str) -> Option<String> {
    idna::domain_to_ascii(name)
        .ok()
        .filter(|a| !a.is_empty() && a.is_ascii())
}

/// A host as compared by patterns: lower case, ASCII (`xn--`) form, no
/// trailing dot, addresses in canonical form. `None` for an empty host or
/// a name that has no ASCII form.
pub fn normalize_host(host: &str) -> Option<String> {
    let host = host.trim();
    if host.is_empty() {
        return None;
    }
    if let Some(ip) = normalize_ip(host) {
        return Some(ip);
    }
    let converted;
    let host = if host.is_ascii() {
        host
    } else {
        converted = to_ascii_name(host)?;
        converted.as_str()
    };
    let lower = host.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    if name.is_empty() {
        return None;
    }
    Some(name.to_string())
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            PatternKind::DomainAndSubdomains => write!(f, "{}", self.name),
            PatternKind::SubdomainsOnly => write!(f, "*.{}", self.name),
            PatternKind::Exact if self.name.starts_with('[') || is_ipv4(&self.name) => {
                write!(f, "{}", self.name)
            }
            PatternKind::Exact => write!(f, "={}", self.name),
        }
    }
}

fn is_ipv4(s: &str) -> bool {
    s.parse::<std::net::Ipv4Addr>().is_ok()
}

impl TryFrom<String> for DomainPattern {
    type Error = DomainPatternError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<DomainPattern> for String {
    fn from(value: DomainPattern) -> Self {
        value.to_string()
    }
}

/// A skill's domain lists, edited in the Skills panel and sent with every
/// call to the proxy.
///
/// The decision, in this order:
/// 1. a host matching any `deny` entry is denied (deny wins over allow);
/// 2. when `allow` is not empty, a host matching none of its entries is
///    refused as not allowlisted;
/// 3. everything else is allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainPolicy {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<DomainPattern>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<DomainPattern>,
}

/// What a [`DomainPolicy`] says about one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DomainDecision {
    Allowed,
    /// The host matches this denylist entry.
    Denied {
        pattern: DomainPattern,
    },
    /// The allowlist is in use and the host is not on it.
    NotAllowlisted,
}

impl DomainDecision {
    pub fn is_allowed(&self) -> bool {
        match self {
            DomainDecision::Allowed => true,
            DomainDecision::Denied { .. } | DomainDecision::NotAllowlisted => false,
        }
    }

    /// Why `host` was refused, for the person and the model; `None` when
    /// allowed.
    pub fn refusal(&self, skill: &str, host: &str) -> Option<String> {
        match self {
            DomainDecision::Allowed => None,
            DomainDecision::Denied { pattern } => Some(format!(
                "{host} is on {skill}'s denylist (entry '{pattern}'); change the list in the Skills panel to allow it"
            )),
            DomainDecision::NotAllowlisted => Some(format!(
                "{host} is not on {skill}'s allowlist; add it in the Skills panel to allow it"
            )),
        }
    }
}

/// One line that could not be read as a domain pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternLineError {
    /// 1-based line number.
    pub line: usize,
    pub error: DomainPatternError,
}

impl DomainPolicy {
    /// The decision for `host`; see the type's documentation for the order.
    pub fn decide(&self, host: &str) -> DomainDecision {
        if let Some(pattern) = self.deny.iter().find(|p| p.matches(host)) {
            return DomainDecision::Denied {
                pattern: pattern.clone(),
            };
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(host)) {
            return DomainDecision::NotAllowlisted;
        }
        DomainDecision::Allowed
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// Reads one pattern per line (blank lines and `#` comments skipped), as
    /// typed into the Skills panel. Every bad line is reported, not only the
    /// first.
    pub fn parse_lines(text: &str) -> Result<Vec<DomainPattern>, Vec<PatternLineError>> {
        let mut patterns = Vec::new();
        let mut errors = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            match DomainPattern::parse(line) {
                Ok(p) => {
                    if !patterns.contains(&p) {
                        patterns.push(p);
                    }
                }
                Err(error) => errors.push(PatternLineError { line: i + 1, error }),
            }
        }
        if errors.is_empty() {
            Ok(patterns)
        } else {
            Err(errors)
        }
    }
}

/// The lines of a list written with international characters, each beside
/// the ASCII (`xn--`) form it is kept and compared in, so the editor can
/// show what `bücher.example` becomes. Lines that do not parse are left to
/// [`DomainPolicy::parse_lines`]'s errors.
pub fn ascii_forms(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_ascii())
        .filter_map(|line| {
            DomainPattern::parse(line)
                .ok()
                .map(|p| (line.to_string(), p.to_string()))
        })
        .collect()
}

/// A skill's domain lists as the person typed them in the Skills panel:
/// one pattern per line, `#` comments allowed. Stored as typed (so comments
/// survive) under [`DomainLists::settings_key`], and read into a
/// [`DomainPolicy`] before every call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainLists {
    #[serde(default)]
    pub allow: String,
    #[serde(default)]
    pub deny: String,
}

/// The bad lines of each list; empty lists mean no errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainListErrors {
    pub allow: Vec<PatternLineError>,
    pub deny: Vec<PatternLineError>,
}

impl DomainListErrors {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

impl DomainLists {
    /// The key of `skill`'s lists in the app's settings store.
    pub fn settings_key(skill: &str) -> String {
        format!("web.domains.{skill}")
    }

    /// Both lists read into a policy; every bad line of either list is
    /// reported.
    pub fn policy(&self) -> Result<DomainPolicy, DomainListErrors> {
        match (
            DomainPolicy::parse_lines(&self.allow),
            DomainPolicy::parse_lines(&self.deny),
        ) {
            (Ok(allow), Ok(deny)) => Ok(DomainPolicy { allow, deny }),
            (allow, deny) => Err(DomainListErrors {
                allow: allow.err().unwrap_or_default(),
                deny: deny.err().unwrap_or_default(),
            }),
        }
    }
}

// ---------------------------------------------------------------------------
// Wire types of the proxy's API (see crates/proxy/src/web/mod.rs)

/// The header every call to the proxy's API carries the key in. A custom
/// header (not `Authorization`), so the relay can forward a caller's own
/// `Authorization`, and so a cross-origin page setting it must be
/// preflighted, which is refused.
pub const TOKEN_HEADER: &str = "x-hearth-token";

/// The parameter of the launch link's fragment that holds the key:
/// `http://127.0.0.1:8080/#token=…`.
pub const LAUNCH_PARAM: &str = "token";

/// The launch link `hearth serve` prints for the app at `origin`.
pub fn launch_url(origin: &str, token: &str) -> String {
    format!("{}/#{LAUNCH_PARAM}={token}", origin.trim_end_matches('/'))
}

/// The key's length: 32 random bytes in unpadded base64url, as `hearth
/// serve` makes it.
pub const KEY_LEN: usize = 43;

/// Whether `s` has the shape of a key `hearth serve` makes.
pub fn is_key_shaped(s: &str) -> bool {
    s.len() == KEY_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// An address's fragment split into what the app routes on and the key it
/// carries, if any. Only the launch link's exact shape carries a key: the
/// whole fragment is `#token=` and a key-shaped value. A `token`
/// parameter anywhere else (`#/settings?token=…`, a key of the wrong
/// shape, a second parameter beside it) is taken out of the address but
/// never kept: any page can send the browser to such an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchFragment {
    /// The fragment without the key, `#` included (empty when nothing is
    /// left).
    pub rest: String,
    pub token: Option<String>,
}

/// Reads the key out of a fragment (`location.hash`, with or without `#`).
pub fn launch_fragment(hash: &str) -> LaunchFragment {
    let body = hash.strip_prefix('#').unwrap_or(hash);
    let (route, query) = match body.split_once('?') {
        Some((route, query)) => (route, query),
        None if body.contains('=') && !body.starts_with('/') => ("", body),
        None => (body, ""),
    };
    let mut token = None;
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some((LAUNCH_PARAM, _)) => {}
            Some(_) | None => kept.push(part),
        }
    }
    if let Some((LAUNCH_PARAM, value)) = body.split_once('=')
        && is_key_shaped(value)
    {
        token = Some(value.to_string());
    }
    let mut rest = route.to_string();
    if !kept.is_empty() {
        rest.push('?');
        rest.push_str(&kept.join("&"));
    }
    LaunchFragment {
        rest: if rest.is_empty() {
            String::new()
        } else {
            format!("#{rest}")
        },
        token,
    }
}

/// The answer of `GET /api/session` (which needs the key like every other
/// route: the key itself is never handed out over HTTP).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// [`TOKEN_HEADER`].
    pub header: String,
    /// The proxy's version.
    pub version: String,
    pub fetch: SessionFetch,
    pub search: SessionSearch,
}

/// The fetch limits the proxy applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFetch {
    pub default_max_bytes: u64,
    pub max_bytes: u64,
}

/// Whether web search can run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSearch {
    pub configured: bool,
    /// `searxng` or `brave` when configured.
    pub backend: Option<String>,
}

/// The search backend chosen in the app's Settings: the body of
/// `PUT /api/search/backend`. Deliberately narrower than the config file:
/// no environment variable names, no Brave endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase", deny_unknown_fields)]
pub enum SearchBackendSetting {
    Searxng { url: String },
    Brave { api_key: String },
}

/// Where the search backend in use was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendSource {
    /// In the app's Settings (kept by the proxy in its config directory).
    Settings,
    /// In `config.toml`'s `[search]`.
    ConfigFile,
}

/// The answer of `GET | PUT | DELETE /api/search/backend`. Never holds a
/// key, only whether one is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchBackendState {
    pub configured: bool,
    pub source: Option<BackendSource>,
    /// `searxng` or `brave` when configured.
    pub backend: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub api_key_set: bool,
    /// Why the config file's backend could not be used, when it could not.
    #[serde(default)]
    pub problem: Option<String>,
}

impl SearchBackendState {
    /// One line for the Settings panel.
    pub fn summary(&self) -> String {
        let name = match self.backend.as_deref() {
            Some("searxng") => "SearXNG",
            Some("brave") => "Brave Search",
            Some(other) => other,
            None => "",
        };
        let source = match self.source {
            Some(BackendSource::Settings) => " (chosen here)",
            Some(BackendSource::ConfigFile) => " (from the config file)",
            None => "",
        };
        match (
            self.configured,
            self.backend.as_deref(),
            self.url.as_deref(),
        ) {
            (false, _, _) => match &self.problem {
                Some(p) => {
                    format!("No search backend is set up; the config file's could not be used: {p}")
                }
                None => "No search backend is set up.".to_string(),
            },
            (true, Some("brave"), _) => format!("Using Brave Search with an API key{source}."),
            (true, _, Some(url)) => format!("Using {name} at {url}{source}."),
            (true, _, None) => format!("Using {name}{source}."),
        }
    }
}

/// The proxy's error code a failed call of a web skill carried, if any.
pub fn result_code(result: &ToolResult) -> Option<ApiErrorCode> {
    result.error_code.as_deref().and_then(ApiErrorCode::parse)
}

/// The body of `POST /api/fetch`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchRequest {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// The skill's domain policy, applied to the URL and every redirect.
    #[serde(default, skip_serializing_if = "DomainPolicy::is_empty")]
    pub domains: DomainPolicy,
}

/// How the proxy read a fetched document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocumentKind {
    /// HTML, converted to Markdown.
    Html,
    /// JSON, validated and pretty-printed.
    Json,
    /// Plain text (also Markdown and CSV), as sent.
    Text,
}

impl DocumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::Html => "html",
            DocumentKind::Json => "json",
            DocumentKind::Text => "text",
        }
    }
}

/// A link found in a fetched page, made absolute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub text: String,
    pub url: String,
}

/// The answer of `POST /api/fetch`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchResponse {
    /// The URL the document came from, after redirects.
    pub url: String,
    /// The URL that was asked for.
    pub requested_url: String,
    /// The host of `url`.
    pub host: String,
    /// The HTTP status of the final response (always 2xx).
    pub status: u16,
    pub kind: DocumentKind,
    /// The media type the server declared, without parameters.
    pub content_type: String,
    /// The character encoding the text was decoded from.
    pub charset: String,
    /// True when bytes invalid in that encoding were replaced by U+FFFD.
    pub lossy: bool,
    pub title: Option<String>,
    /// Markdown for HTML, pretty JSON, or the text.
    pub content: String,
    /// Links of an HTML page, absolute, at most a few hundred.
    pub links: Vec<Link>,
    /// Size of the body as received.
    pub bytes: u64,
    pub redirects: u32,
}

/// The body of `POST /api/search`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The skill's domain policy: results from refused hosts are dropped.
    #[serde(default, skip_serializing_if = "DomainPolicy::is_empty")]
    pub domains: DomainPolicy,
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub host: String,
    /// Plain text, without markup.
    pub snippet: String,
}

/// The answer of `POST /api/search`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResponse {
    pub query: String,
    /// `searxng` or `brave`.
    pub backend: String,
    pub results: Vec<SearchHit>,
    /// Results dropped by the domain policy.
    #[serde(default)]
    pub filtered: u32,
}

/// The stable error codes of the proxy's API. The proxy's error enum maps
/// each of its variants to one of these; the HTTP status of each is
/// documented there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiErrorCode {
    ForbiddenPeer,
    ForbiddenHost,
    ForbiddenOrigin,
    ForbiddenFetchSite,
    MissingToken,
    BadToken,
    PreflightRefused,
    NotFound,
    MethodNotAllowed,
    InvalidRequest,
    InvalidUrl,
    UnsupportedScheme,
    UrlHasCredentials,
    BlockedPort,
    BlockedAddress,
    BlockedDomain,
    DnsFailed,
    ConnectFailed,
    TlsFailed,
    Timeout,
    TooManyRedirects,
    BadRedirect,
    UpstreamStatus,
    UpstreamFailed,
    ResponseTooLarge,
    UnsupportedContentType,
    UnsupportedContentEncoding,
    InvalidJson,
    RateLimited,
    NoSearchBackend,
    SearchBackendFailed,
    SettingsFailed,
    Internal,
}

impl ApiErrorCode {
    pub const ALL: [ApiErrorCode; 33] = [
        ApiErrorCode::ForbiddenPeer,
        ApiErrorCode::ForbiddenHost,
        ApiErrorCode::ForbiddenOrigin,
        ApiErrorCode::ForbiddenFetchSite,
        ApiErrorCode::MissingToken,
        ApiErrorCode::BadToken,
        ApiErrorCode::PreflightRefused,
        ApiErrorCode::NotFound,
        ApiErrorCode::MethodNotAllowed,
        ApiErrorCode::InvalidRequest,
        ApiErrorCode::InvalidUrl,
        ApiErrorCode::UnsupportedScheme,
        ApiErrorCode::UrlHasCredentials,
        ApiErrorCode::BlockedPort,
        ApiErrorCode::BlockedAddress,
        ApiErrorCode::BlockedDomain,
        ApiErrorCode::DnsFailed,
        ApiErrorCode::ConnectFailed,
        ApiErrorCode::TlsFailed,
        ApiErrorCode::Timeout,
        ApiErrorCode::TooManyRedirects,
        ApiErrorCode::BadRedirect,
        ApiErrorCode::UpstreamStatus,
        ApiErrorCode::UpstreamFailed,
        ApiErrorCode::ResponseTooLarge,
        ApiErrorCode::UnsupportedContentType,
        ApiErrorCode::UnsupportedContentEncoding,
        ApiErrorCode::InvalidJson,
        ApiErrorCode::RateLimited,
        ApiErrorCode::NoSearchBackend,
        ApiErrorCode::SearchBackendFailed,
        ApiErrorCode::SettingsFailed,
        ApiErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApiErrorCode::ForbiddenPeer => "forbidden_peer",
            ApiErrorCode::ForbiddenHost => "forbidden_host",
            ApiErrorCode::ForbiddenOrigin => "forbidden_origin",
            ApiErrorCode::ForbiddenFetchSite => "forbidden_fetch_site",
            ApiErrorCode::MissingToken => "missing_token",
            ApiErrorCode::BadToken => "bad_token",
            ApiErrorCode::PreflightRefused => "preflight_refused",
            ApiErrorCode::NotFound => "not_found",
            ApiErrorCode::MethodNotAllowed => "method_not_allowed",
            ApiErrorCode::InvalidRequest => "invalid_request",
            ApiErrorCode::InvalidUrl => "invalid_url",
            ApiErrorCode::UnsupportedScheme => "unsupported_scheme",
            ApiErrorCode::UrlHasCredentials => "url_has_credentials",
            ApiErrorCode::BlockedPort => "blocked_port",
            ApiErrorCode::BlockedAddress => "blocked_address",
            ApiErrorCode::BlockedDomain => "blocked_domain",
            ApiErrorCode::DnsFailed => "dns_failed",
            ApiErrorCode::ConnectFailed => "connect_failed",
            ApiErrorCode::TlsFailed => "tls_failed",
            ApiErrorCode::Timeout => "timeout",
            ApiErrorCode::TooManyRedirects => "too_many_redirects",
            ApiErrorCode::BadRedirect => "bad_redirect",
            ApiErrorCode::UpstreamStatus => "upstream_status",
            ApiErrorCode::UpstreamFailed => "upstream_failed",
            ApiErrorCode::ResponseTooLarge => "response_too_large",
            ApiErrorCode::UnsupportedContentType => "unsupported_content_type",
            ApiErrorCode::UnsupportedContentEncoding => "unsupported_content_encoding",
            ApiErrorCode::InvalidJson => "invalid_json",
            ApiErrorCode::RateLimited => "rate_limited",
            ApiErrorCode::NoSearchBackend => "no_search_backend",
            ApiErrorCode::SearchBackendFailed => "search_backend_failed",
            ApiErrorCode::SettingsFailed => "settings_failed",
            ApiErrorCode::Internal => "internal",
        }
    }

    pub fn parse(s: &str) -> Option<ApiErrorCode> {
        ApiErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether the key was refused: the app reads its stored key again
    /// (another tab may have taken a newer one from a launch link) and
    /// tries once more.
    pub fn needs_new_session(self) -> bool {
        match self {
            ApiErrorCode::MissingToken | ApiErrorCode::BadToken => true,
            ApiErrorCode::ForbiddenPeer
            | ApiErrorCode::ForbiddenHost
            | ApiErrorCode::ForbiddenOrigin
            | ApiErrorCode::ForbiddenFetchSite
            | ApiErrorCode::PreflightRefused
            | ApiErrorCode::NotFound
            | ApiErrorCode::MethodNotAllowed
            | ApiErrorCode::InvalidRequest
            | ApiErrorCode::InvalidUrl
            | ApiErrorCode::UnsupportedScheme
            | ApiErrorCode::UrlHasCredentials
            | ApiErrorCode::BlockedPort
            | ApiErrorCode::BlockedAddress
            | ApiErrorCode::BlockedDomain
            | ApiErrorCode::DnsFailed
            | ApiErrorCode::ConnectFailed
            | ApiErrorCode::TlsFailed
            | ApiErrorCode::Timeout
            | ApiErrorCode::TooManyRedirects
            | ApiErrorCode::BadRedirect
            | ApiErrorCode::UpstreamStatus
            | ApiErrorCode::UpstreamFailed
            | ApiErrorCode::ResponseTooLarge
            | ApiErrorCode::UnsupportedContentType
            | ApiErrorCode::UnsupportedContentEncoding
            | ApiErrorCode::InvalidJson
            | ApiErrorCode::RateLimited
            | ApiErrorCode::NoSearchBackend
            | ApiErrorCode::SearchBackendFailed
            | ApiErrorCode::SettingsFailed
            | ApiErrorCode::Internal => false,
        }
    }
}

impl fmt::Display for ApiErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The body of every error answer: `{"error": {"code": …, "message": …}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    pub error: ApiErrorDetail,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorDetail {
    /// One of [`ApiErrorCode`]'s names; kept as a string so an app older
    /// than the proxy still shows the message.
    pub code: String,
    pub message: String,
}

// ---------------------------------------------------------------------------
// Failures, as the person and the model see them

/// Why a web skill call did not produce a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebFailure {
    /// The browser reports no network connection.
    Offline,
    /// Nothing answered at `/api/…`: the app was not opened from
    /// `hearth serve` (for example from a plain static file server), or the
    /// proxy stopped.
    ProxyUnreachable,
    /// The proxy answered with one of its JSON errors.
    Proxy {
        status: u16,
        code: Option<ApiErrorCode>,
        message: String,
    },
    /// Something answered, but not with the proxy's JSON.
    UnexpectedAnswer { status: u16 },
}

impl WebFailure {
    /// Reads a non-2xx answer of the proxy. A 404, 405 or 501 that is not
    /// the proxy's JSON comes from a server without the API (a static file
    /// server), so the proxy counts as unreachable.
    pub fn from_answer(status: u16, body: &str) -> Self {
        match serde_json::from_str::<ApiErrorBody>(body) {
            Ok(b) => WebFailure::Proxy {
                status,
                code: ApiErrorCode::parse(&b.error.code),
                message: b.error.message,
            },
            Err(_) if matches!(status, 404 | 405 | 501) => WebFailure::ProxyUnreachable,
            Err(_) => WebFailure::UnexpectedAnswer { status },
        }
    }

    /// The code of a proxy error, if it sent a known one.
    pub fn code(&self) -> Option<ApiErrorCode> {
        match self {
            WebFailure::Proxy { code, .. } => *code,
            WebFailure::Offline
            | WebFailure::ProxyUnreachable
            | WebFailure::UnexpectedAnswer { .. } => None,
        }
    }

    /// What the person and the model are told.
    pub fn message(&self, skill: &str) -> String {
        match self {
            WebFailure::Offline => format!(
                "You are offline, so {skill} cannot reach the network. It will work again once this \
                 device is back online; skills that run on this device still work."
            ),
            WebFailure::ProxyUnreachable => format!(
                "{skill} needs Hearth's local proxy, which is not answering. Network skills work only \
                 when Hearth is opened from `hearth serve` (for example http://127.0.0.1:8080/); a plain \
                 static file server has no proxy."
            ),
            WebFailure::Proxy { message, .. } => message.clone(),
            WebFailure::UnexpectedAnswer { status } => format!(
                "{skill}: the server that serves Hearth answered with HTTP {status} instead of the \
                 proxy's JSON; is it `hearth serve`?"
            ),
        }
    }

    /// The failure as a skill's error, carrying the proxy's code (if it
    /// sent one) so the result card can act on it without reading text.
    pub fn into_skill_error(self, skill: &str) -> SkillError {
        let mut e = SkillError::new(self.message(skill));
        e.code = self.code().map(|c| c.as_str().to_string());
        e
    }
}

/// Reads any answer of the proxy: the expected JSON on 2xx, a
/// [`WebFailure`] otherwise. A 2xx that is not the expected JSON (a dev
/// server answering every path with the app's `index.html`) also means the
/// proxy is not there.
pub fn read_answer<T: DeserializeOwned>(status: u16, body: &str) -> Result<T, WebFailure> {
    if !(200..300).contains(&status) {
        return Err(WebFailure::from_answer(status, body));
    }
    serde_json::from_str(body).map_err(|_| WebFailure::ProxyUnreachable)
}

/// The body of `POST /api/fetch` for a `web_fetch` call with `arguments`
/// (already checked against the input schema) and the skill's domain lists.
pub fn fetch_request(
    arguments: &Value,
    domains: &DomainPolicy,
) -> Result<FetchRequest, SkillError> {
    let url = arguments
        .get("url")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| SkillError::new("web_fetch needs a 'url' to read"))?;
    let max_bytes = match arguments.get("max_bytes") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| SkillError::new("max_bytes must be a positive whole number"))?,
        ),
    };
    Ok(FetchRequest {
        url: url.to_string(),
        max_bytes,
        domains: domains.clone(),
    })
}

/// The body of `POST /api/search` for a `web_search` call.
pub fn search_request(
    arguments: &Value,
    domains: &DomainPolicy,
) -> Result<SearchRequest, SkillError> {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or_else(|| SkillError::new("web_search needs a 'query'"))?;
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=MAX_SEARCH_LIMIT).contains(n))
                .ok_or_else(|| {
                    SkillError::new(format!("limit must be between 1 and {MAX_SEARCH_LIMIT}"))
                })?,
        ),
    };
    Ok(SearchRequest {
        query: query.to_string(),
        limit,
        domains: domains.clone(),
    })
}

// ---------------------------------------------------------------------------
// Formatting for cards and the model

/// What a result card shows for one page or search hit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebCard {
    pub title: String,
    /// The link the card opens.
    pub url: String,
    /// The host shown under the title.
    pub host: String,
    /// A short plain-text excerpt.
    pub excerpt: String,
    /// Further links (the page's links, for a fetched page).
    pub links: Vec<Link>,
}

/// Whether `url` may be shown as a link a person can follow: absolute
/// http or https only, so a `javascript:` or `data:` URL from a page or a
/// search backend never becomes clickable.
pub fn is_followable(url: &str) -> bool {
    let head = url.chars().take(8).collect::<String>().to_ascii_lowercase();
    // Both prefixes are ASCII, so the slices below fall on char boundaries.
    let rest = if head.starts_with("https://") {
        &url[8..]
    } else if head.starts_with("http://") {
        &url[7..]
    } else {
        return false;
    };
    !rest.is_empty() && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// Characters of the excerpt on a card.
pub const CARD_EXCERPT_CHARS: usize = 280;

/// The card of a fetched page.
pub fn fetch_card(page: &FetchResponse) -> WebCard {
    let title = page
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| page.url.clone());
    WebCard {
        title,
        url: page.url.clone(),
        host: page.host.clone(),
        excerpt: excerpt(&page.content, CARD_EXCERPT_CHARS),
        links: page.links.iter().take(20).cloned().collect(),
    }
}

/// One card per search hit.
pub fn search_cards(found: &SearchResponse) -> Vec<WebCard> {
    found
        .results
        .iter()
        .map(|hit| WebCard {
            title: if hit.title.trim().is_empty() {
                hit.url.clone()
            } else {
                hit.title.clone()
            },
            url: hit.url.clone(),
            host: hit.host.clone(),
            excerpt: excerpt(&hit.snippet, CARD_EXCERPT_CHARS),
            links: Vec::new(),
        })
        .collect()
}

/// One line of Markdown as plain prose: `[text](url)` and `![alt](url)`
/// become their text; bold and code markers go.
fn inline_plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let link = after.find("](").and_then(|close| {
            let target = &after[close + 2..];
            target
                .find(')')
                .map(|end| (&after[..close], close + 2 + end + 1))
        });
        match link {
            Some((text, used)) if !text.contains('[') => {
                let before = &rest[..open];
                out.push_str(before.strip_suffix('!').unwrap_or(before));
                out.push_str(text);
                rest = &after[used..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace("**", "").replace("__", "").replace('`', "")
}

/// A word without the `*` of emphasis around it (`*text*,` → `text,`);
/// a `*` inside a word (`2*3`) stays.
fn without_emphasis(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    chars
        .iter()
        .enumerate()
        .filter(|&(i, &c)| {
            c != '*' || !(i == 0 || chars[i + 1..].iter().all(|c| c.is_ascii_punctuation()))
        })
        .map(|(_, &c)| c)
        .collect()
}

/// The first `max` characters of `text` as one line of plain prose:
/// Markdown markers dropped (links become their text), whitespace
/// collapsed, `…` when cut.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut cut = false;
    for line in text.lines() {
        let line = line
            .trim()
            .trim_start_matches(['#', '>', '-', '*', '|', '`'])
            .trim();
        if line.is_empty() || line.chars().all(|c| matches!(c, '-' | '|' | ':' | ' ')) {
            continue;
        }
        let line = inline_plain(line);
        for word in line.split_whitespace().map(without_emphasis) {
            if word.is_empty() {
                continue;
            }
            let needed = word.chars().count() + usize::from(!out.is_empty());
            if count + needed > max {
                cut = true;
                break;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&word);
            count += needed;
        }
        if cut {
            break;
        }
    }
    if cut {
        out.push('…');
    }
    out
}

/// What the model reads of a fetched page: title, source and content, cut
/// at `max_chars` with a note saying so.
pub fn fetch_model_text(page: &FetchResponse, max_chars: usize) -> String {
    let mut out = String::new();
    if let Some(title) = page.title.as_deref().filter(|t| !t.trim().is_empty()) {
        out.push_str("# ");
        out.push_str(title.trim());
        out.push('\n');
    }
    out.push_str("Source: ");
    out.push_str(&page.url);
    out.push('\n');
    if page.url != page.requested_url {
        out.push_str("(redirected from ");
        out.push_str(&page.requested_url);
        out.push_str(")\n");
    }
    if page.lossy {
        out.push_str(&format!(
            "(some bytes were not valid {} and were replaced)\n",
            page.charset
        ));
    }
    out.push('\n');
    let (body, rest) = cut_chars(&page.content, max_chars);
    out.push_str(body);
    if rest > 0 {
        out.push_str(&format!(
            "\n\n[… {rest} more characters not shown; the whole page is in the result card]"
        ));
    }
    out
}

/// What the model reads of a search: a numbered list with links.
pub fn search_model_text(found: &SearchResponse) -> String {
    if found.results.is_empty() {
        let mut s = format!("No results for \"{}\".", found.query);
        if found.filtered > 0 {
            s.push_str(&format!(
                " {} hidden by web_search's domain lists.",
                match found.filtered {
                    1 => "1 result was".to_string(),
                    n => format!("{n} results were"),
                }
            ));
        }
        return s;
    }
    let mut out = format!("Results for \"{}\" ({}):\n", found.query, found.backend);
    for (i, hit) in found.results.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}\n   {}\n",
            i + 1,
            hit.title.trim(),
            hit.url
        ));
        let snippet = hit.snippet.trim();
        if !snippet.is_empty() {
            out.push_str("   ");
            out.push_str(snippet);
            out.push('\n');
        }
    }
    if found.filtered > 0 {
        out.push_str(&format!(
            "\n({} more {} hidden by web_search's domain lists.)\n",
            found.filtered,
            if found.filtered == 1 {
                "result"
            } else {
                "results"
            }
        ));
    }
    out
}

/// `text` cut to at most `max` characters, and how many were left out.
fn cut_chars(text: &str, max: usize) -> (&str, usize) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
        None => (text, 0),
    }
}

/// The skill output of a successful `web_fetch`: text for the model, and
/// the whole answer as JSON for the card (matching the output schema).
pub fn fetch_output(page: &FetchResponse) -> SkillOutput {
    let value = serde_json::to_value(page).unwrap_or_else(|_| json!({}));
    SkillOutput::text_and_json(fetch_model_text(page, MODEL_TEXT_MAX_CHARS), value)
}

/// The skill output of a successful `web_search`.
pub fn search_output(found: &SearchResponse) -> SkillOutput {
    let value = serde_json::to_value(found).unwrap_or_else(|_| json!({}));
    SkillOutput::text_and_json(search_model_text(found), value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use crate::schema::validate;

    fn p(s: &str) -> DomainPattern {
        DomainPattern::parse(s).unwrap()
    }

    #[test]
    fn definitions_are_network_tier_off_and_asking() {
        let mut r = Registry::new();
        for def in definitions() {
            let reg = r.register(def.clone()).unwrap();
            assert_eq!(reg.warnings, vec![], "{}", def.id);
            assert_eq!(
                (
                    def.tier,
                    def.category,
                    def.default_enabled,
                    def.requires_approval,
                    def.requires_network
                ),
                (Tier::Network, Category::Network, false, true, true),
                "{}",
                def.id
            );
            assert!(!def.icon.is_empty() && !def.examples.is_empty());
        }
        assert_eq!(web_fetch().primary_string_param(), Some("url"));
        assert_eq!(web_search().primary_string_param(), Some("query"));
    }

    #[test]
    fn input_schemas_accept_and_refuse() {
        let cases: Vec<(SkillDefinition, serde_json::Value, bool)> = vec![
            (web_fetch(), json!({"url": "https://example.com"}), true),
            (
                web_fetch(),
                json!({"url": "https://example.com", "max_bytes": 1000}),
                true,
            ),
            (web_fetch(), json!({"url": ""}), false),
            (
                web_fetch(),
                json!({"url": "x".repeat(MAX_URL_LEN + 1)}),
                false,
            ),
            (
                web_fetch(),
                json!({"url": "https://e.com", "headers": {}}),
                false,
            ),
            (web_fetch(), json!({"max_bytes": 5}), false),
            (web_search(), json!({"query": "rust"}), true),
            (web_search(), json!({"query": "rust", "limit": 20}), true),
            (web_search(), json!({"query": "rust", "limit": 21}), false),
            (web_search(), json!({"query": "rust", "limit": 0}), false),
            (web_search(), json!({"query": ""}), false),
        ];
        for (def, input, ok) in cases {
            let errors = validate(&def.input_schema, &input);
            assert_eq!(errors.is_empty(), ok, "{} {input}: {errors:?}", def.id);
        }
    }

    #[test]
    fn pattern_parsing() {
        type E = DomainPatternError;
        let cases: Vec<(&str, Result<&str, E>)> = vec![
            ("example.com", Ok("example.com")),
            ("  Example.COM.  ", Ok("example.com")),
            ("*.example.com", Ok("*.example.com")),
            ("=example.com", Ok("=example.com")),
            ("=WWW.Example.com.", Ok("=www.example.com")),
            ("localhost", Ok("localhost")),
            ("xn--bcher-kva.example", Ok("xn--bcher-kva.example")),
            ("_dmarc.example.com", Ok("_dmarc.example.com")),
            ("93.184.215.14", Ok("93.184.215.14")),
            ("=93.184.215.14", Ok("93.184.215.14")),
            ("[2001:DB8::1]", Ok("[2001:db8::1]")),
            ("2001:db8::1", Ok("[2001:db8::1]")),
            ("", Err(E::Empty)),
            ("   ", Err(E::Empty)),
            (
                "https://example.com",
                Err(E::LooksLikeUrl("https://example.com".into())),
            ),
            (
                "example.com/path",
                Err(E::LooksLikeUrl("example.com/path".into())),
            ),
            (
                "user@example.com",
                Err(E::LooksLikeUrl("user@example.com".into())),
            ),
            (
                "example.com:443",
                Err(E::LooksLikeUrl("example.com:443".into())),
            ),
            ("*", Err(E::BadWildcard("*".into()))),
            ("*example.com", Err(E::BadWildcard("*example.com".into()))),
            (
                "a.*.example.com",
                Err(E::BadWildcard("a.*.example.com".into())),
            ),
            (
                "*.*.example.com",
                Err(E::BadWildcard("*.*.example.com".into())),
            ),
            ("*.1.2.3.4", Err(E::BadWildcard("*.1.2.3.4".into()))),
            ("bücher.example", Ok("xn--bcher-kva.example")),
            ("*.BÜCHER.example", Ok("*.xn--bcher-kva.example")),
            ("=münchen.de", Ok("=xn--mnchen-3ya.de")),
            ("例え.テスト", Ok("xn--r8jz45g.xn--zckzah")),
            ("faß.de", Ok("xn--fa-hia.de")),
            ("bücher\u{3002}example", Ok("xn--bcher-kva.example")),
            (
                "ex\u{fffd}mple.com",
                Err(E::BadInternationalName("ex\u{fffd}mple.com".into())),
            ),
            ("exa mple.com", Err(E::BadLabel("exa mple.com".into()))),
            ("example..com", Err(E::BadLabel("example..com".into()))),
            (".example.com", Err(E::BadLabel(".example.com".into()))),
            ("=", Err(E::BadLabel("=".into()))),
        ];
        for (input, expected) in cases {
            let got = DomainPattern::parse(input).map(|p| p.to_string());
            assert_eq!(got, expected.map(str::to_string), "{input:?}");
        }
        let long_label = format!("{}.com", "a".repeat(64));
        assert_eq!(
            DomainPattern::parse(&long_label),
            Err(E::BadLabel(long_label.clone()))
        );
        let long_name = format!("{}a", "a.".repeat(127));
        assert_eq!(
            DomainPattern::parse(&long_name),
            Err(E::TooLong(long_name.clone()))
        );
    }

    #[test]
    fn pattern_matching_table() {
        // (pattern, host, matches)
        let cases = [
            ("example.com", "example.com", true),
            ("example.com", "EXAMPLE.com", true),
            ("example.com", "example.com.", true),
            ("example.com", "www.example.com", true),
            ("example.com", "a.b.example.com", true),
            ("example.com", "notexample.com", false),
            ("example.com", "example.com.evil.net", false),
            ("example.com", "example.co", false),
            ("example.com", "com", false),
            ("example.com", "", false),
            ("*.example.com", "example.com", false),
            ("*.example.com", "www.example.com", true),
            ("*.example.com", "a.b.example.com", true),
            ("*.example.com", "wwwexample.com", false),
            ("=example.com", "example.com", true),
            ("=example.com", "www.example.com", false),
            ("=example.com", "Example.Com.", true),
            ("93.184.215.14", "93.184.215.14", true),
            ("93.184.215.14", "93.184.215.140", false),
            ("93.184.215.14", "1.93.184.215.14", false),
            ("[2001:db8::1]", "[2001:0db8:0:0::1]", true),
            ("[2001:db8::1]", "[2001:db8::2]", false),
            ("com", "example.com", true),
        ];
        for (pattern, host, expected) in cases {
            assert_eq!(p(pattern).matches(host), expected, "{pattern} vs {host:?}");
        }
    }

    #[test]
    fn policy_decisions_table() {
        let policy = |allow: &[&str], deny: &[&str]| DomainPolicy {
            allow: allow.iter().map(|s| p(s)).collect(),
            deny: deny.iter().map(|s| p(s)).collect(),
        };
        let allowed = DomainDecision::Allowed;
        let not_listed = DomainDecision::NotAllowlisted;
        let denied = |s: &str| DomainDecision::Denied { pattern: p(s) };
        // (allow, deny, host, decision)
        let cases: Vec<(&[&str], &[&str], &str, DomainDecision)> = vec![
            (&[], &[], "anything.example", allowed.clone()),
            (&[], &["evil.com"], "evil.com", denied("evil.com")),
            (&[], &["evil.com"], "www.evil.com", denied("evil.com")),
            (&[], &["evil.com"], "notevil.com", allowed.clone()),
            (&[], &["=evil.com"], "cdn.evil.com", allowed.clone()),
            (&["docs.rs"], &[], "docs.rs", allowed.clone()),
            (&["docs.rs"], &[], "crates.io", not_listed.clone()),
            (
                &["*.wikipedia.org"],
                &[],
                "en.wikipedia.org",
                allowed.clone(),
            ),
            (
                &["*.wikipedia.org"],
                &[],
                "wikipedia.org",
                not_listed.clone(),
            ),
            // Deny wins over allow, whichever is more specific.
            (
                &["example.com"],
                &["ads.example.com"],
                "ads.example.com",
                denied("ads.example.com"),
            ),
            (
                &["=ads.example.com"],
                &["example.com"],
                "ads.example.com",
                denied("example.com"),
            ),
            (
                &["example.com"],
                &["ads.example.com"],
                "www.example.com",
                allowed.clone(),
            ),
        ];
        for (allow, deny, host, expected) in cases {
            assert_eq!(
                policy(allow, deny).decide(host),
                expected,
                "allow {allow:?} deny {deny:?} host {host}"
            );
        }
    }

    #[test]
    fn refusals_name_the_entry_and_the_fix() {
        let d = DomainDecision::Denied {
            pattern: p("*.evil.com"),
        };
        assert_eq!(
            d.refusal(WEB_FETCH, "x.evil.com").unwrap(),
            "x.evil.com is on web_fetch's denylist (entry '*.evil.com'); change the list in the Skills panel to allow it"
        );
        assert_eq!(DomainDecision::Allowed.refusal(WEB_FETCH, "a"), None);
    }

    #[test]
    fn lines_parse_with_every_error_reported() {
        assert_eq!(
            DomainPolicy::parse_lines(
                "example.com\n\n# comment\n*.docs.rs # trailing\nexample.com\n"
            ),
            Ok(vec![p("example.com"), p("*.docs.rs")])
        );
        assert_eq!(
            DomainPolicy::parse_lines("ok.com\nhttp://x\nbad..com"),
            Err(vec![
                PatternLineError {
                    line: 2,
                    error: DomainPatternError::LooksLikeUrl("http://x".into())
                },
                PatternLineError {
                    line: 3,
                    error: DomainPatternError::BadLabel("bad..com".into())
                },
            ])
        );
    }

    #[test]
    fn policy_serde_round_trips_as_strings() {
        let policy = DomainPolicy {
            allow: vec![p("example.com"), p("=a.b.c")],
            deny: vec![p("*.ads.example.com")],
        };
        let v = serde_json::to_value(&policy).unwrap();
        assert_eq!(
            v,
            json!({"allow": ["example.com", "=a.b.c"], "deny": ["*.ads.example.com"]})
        );
        assert_eq!(serde_json::from_value::<DomainPolicy>(v).unwrap(), policy);
        let bad = serde_json::from_value::<DomainPolicy>(json!({"allow": ["http://x"]}));
        assert!(bad.unwrap_err().to_string().contains("not a URL"));
        let empty: FetchRequest = serde_json::from_value(json!({"url": "https://e.com"})).unwrap();
        assert_eq!(empty.domains, DomainPolicy::default());
    }

    fn page() -> FetchResponse {
        FetchResponse {
            url: "https://example.com/b".into(),
            requested_url: "https://example.com/a".into(),
            host: "example.com".into(),
            status: 200,
            kind: DocumentKind::Html,
            content_type: "text/html".into(),
            charset: "UTF-8".into(),
            lossy: false,
            title: Some("Example".into()),
            content: "# Example\n\nSome *text* here.\n\n- [a link](https://example.com/x)\n".into(),
            links: vec![Link {
                text: "a link".into(),
                url: "https://example.com/x".into(),
            }],
            bytes: 120,
            redirects: 1,
        }
    }

    #[test]
    fn fetch_output_matches_its_schema_and_reads_well() {
        let out = fetch_output(&page());
        let structured = out.structured.clone().unwrap();
        assert_eq!(validate(&web_fetch().output_schema, &structured), vec![]);
        assert_eq!(
            fetch_model_text(&page(), 1000),
            "# Example\nSource: https://example.com/b\n(redirected from https://example.com/a)\n\n\
             # Example\n\nSome *text* here.\n\n- [a link](https://example.com/x)\n"
        );
        let mut long = page();
        long.content = "é".repeat(30);
        long.requested_url = long.url.clone();
        long.title = None;
        assert_eq!(
            fetch_model_text(&long, 10),
            format!(
                "Source: https://example.com/b\n\n{}\n\n[… 20 more characters not shown; the whole page is in the result card]",
                "é".repeat(10)
            )
        );
    }

    #[test]
    fn cards_show_title_host_and_a_short_excerpt() {
        assert_eq!(
            fetch_card(&page()),
            WebCard {
                title: "Example".into(),
                url: "https://example.com/b".into(),
                host: "example.com".into(),
                excerpt: "Example Some text here. a link".into(),
                links: page().links,
            }
        );
        assert_eq!(excerpt("one two three", 7), "one two…");
        // (Markdown, the excerpt a person reads)
        let cases = [
            (
                "Read [About this site](https://example.org/about) or the [next](/n).",
                "Read About this site or the next.",
            ),
            (
                "![a logo](logo.png) **Bold**, *soft*; `code`",
                "a logo Bold, soft; code",
            ),
            (
                "2*3 = 6 and a [bracket] alone",
                "2*3 = 6 and a [bracket] alone",
            ),
            (
                "[unclosed](https://x.com and more",
                "[unclosed](https://x.com and more",
            ),
            ("* a list item\n> a quote", "a list item a quote"),
        ];
        for (markdown, expected) in cases {
            assert_eq!(excerpt(markdown, 100), expected, "{markdown}");
        }
        assert_eq!(
            excerpt("| a | b |\n|---|---|\n| 1 | 2 |", 100),
            "a | b | 1 | 2 |"
        );
        let mut untitled = page();
        untitled.title = Some("  ".into());
        assert_eq!(fetch_card(&untitled).title, "https://example.com/b");
    }

    #[test]
    fn search_output_lists_hits_with_links() {
        let found = SearchResponse {
            query: "hearth".into(),
            backend: "searxng".into(),
            results: vec![
                SearchHit {
                    title: "Hearth".into(),
                    url: "https://en.wikipedia.org/wiki/Hearth".into(),
                    host: "en.wikipedia.org".into(),
                    snippet: "A hearth is the place in a home where a fire is kept.".into(),
                },
                SearchHit {
                    title: "".into(),
                    url: "https://example.com/".into(),
                    host: "example.com".into(),
                    snippet: "".into(),
                },
            ],
            filtered: 2,
        };
        let out = search_output(&found);
        assert_eq!(
            validate(
                &web_search().output_schema,
                out.structured.as_ref().unwrap()
            ),
            vec![]
        );
        assert_eq!(
            out.content[0],
            crate::call::Content::Text {
                text: "Results for \"hearth\" (searxng):\n\n\
                       1. Hearth\n   https://en.wikipedia.org/wiki/Hearth\n   A hearth is the place in a home where a fire is kept.\n\n\
                       2. \n   https://example.com/\n\n\
                       (2 more results hidden by web_search's domain lists.)\n"
                    .into()
            }
        );
        assert_eq!(search_cards(&found)[1].title, "https://example.com/");
        let none = SearchResponse {
            results: vec![],
            filtered: 0,
            ..found
        };
        assert_eq!(search_model_text(&none), "No results for \"hearth\".");
    }

    #[test]
    fn failures_read_the_proxy_json_or_explain_the_missing_proxy() {
        let body =
            r#"{"error":{"code":"blocked_address","message":"127.0.0.1 is a loopback address"}}"#;
        assert_eq!(
            WebFailure::from_answer(403, body),
            WebFailure::Proxy {
                status: 403,
                code: Some(ApiErrorCode::BlockedAddress),
                message: "127.0.0.1 is a loopback address".into()
            }
        );
        assert_eq!(
            WebFailure::from_answer(404, "Not found: /api/fetch\n"),
            WebFailure::ProxyUnreachable
        );
        assert_eq!(
            WebFailure::from_answer(500, "<html>"),
            WebFailure::UnexpectedAnswer { status: 500 }
        );
        let future = r#"{"error":{"code":"new_thing","message":"m"}}"#;
        assert_eq!(
            WebFailure::from_answer(400, future),
            WebFailure::Proxy {
                status: 400,
                code: None,
                message: "m".into()
            }
        );
        assert!(
            WebFailure::ProxyUnreachable
                .message(WEB_FETCH)
                .contains("hearth serve")
        );
        assert!(WebFailure::Offline.message(WEB_SEARCH).contains("offline"));
    }

    #[test]
    fn answers_are_read_or_explained() {
        let page_json = serde_json::to_string(&page()).unwrap();
        assert_eq!(read_answer::<FetchResponse>(200, &page_json), Ok(page()));
        // A dev server answering every path with the app shell.
        assert_eq!(
            read_answer::<FetchResponse>(200, "<!doctype html><html>…"),
            Err(WebFailure::ProxyUnreachable)
        );
        // python -m http.server answers POST with 501 and HTML.
        assert_eq!(
            read_answer::<FetchResponse>(501, "<html>Unsupported method</html>"),
            Err(WebFailure::ProxyUnreachable)
        );
        let refused =
            read_answer::<FetchResponse>(403, r#"{"error":{"code":"bad_token","message":"m"}}"#)
                .unwrap_err();
        assert_eq!(refused.code(), Some(ApiErrorCode::BadToken));
        assert!(refused.code().unwrap().needs_new_session());
        let session = read_answer::<Session>(
            200,
            r#"{"header":"x-hearth-token","version":"0.1.0",
                "fetch":{"default_max_bytes":1,"max_bytes":2},
                "search":{"configured":false,"backend":null}}"#,
        )
        .unwrap();
        assert_eq!(
            session,
            Session {
                header: "x-hearth-token".into(),
                version: "0.1.0".into(),
                fetch: SessionFetch {
                    default_max_bytes: 1,
                    max_bytes: 2
                },
                search: SessionSearch {
                    configured: false,
                    backend: None
                },
            }
        );
    }

    #[test]
    fn calls_become_proxy_requests() {
        let policy = DomainPolicy {
            allow: vec![],
            deny: vec![p("evil.com")],
        };
        assert_eq!(
            fetch_request(&json!({"url": " https://e.com/ ", "max_bytes": 5}), &policy),
            Ok(FetchRequest {
                url: "https://e.com/".into(),
                max_bytes: Some(5),
                domains: policy.clone(),
            })
        );
        assert_eq!(
            serde_json::to_value(
                fetch_request(&json!({"url": "https://e.com/"}), &DomainPolicy::default()).unwrap()
            )
            .unwrap(),
            json!({"url": "https://e.com/"})
        );
        assert_eq!(
            fetch_request(&json!({"url": ""}), &policy),
            Err(SkillError::new("web_fetch needs a 'url' to read"))
        );
        assert_eq!(
            fetch_request(&json!({"url": "https://e.com", "max_bytes": -1}), &policy),
            Err(SkillError::new("max_bytes must be a positive whole number"))
        );
        assert_eq!(
            search_request(&json!({"query": "rust", "limit": 3}), &policy),
            Ok(SearchRequest {
                query: "rust".into(),
                limit: Some(3),
                domains: policy.clone(),
            })
        );
        assert_eq!(
            search_request(&json!({"query": "rust", "limit": 99}), &policy),
            Err(SkillError::new("limit must be between 1 and 20"))
        );
        assert_eq!(
            search_request(&json!({}), &policy),
            Err(SkillError::new("web_search needs a 'query'"))
        );
    }

    #[test]
    fn error_codes_round_trip() {
        for code in ApiErrorCode::ALL {
            assert_eq!(ApiErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        }
        let needs: Vec<ApiErrorCode> = ApiErrorCode::ALL
            .into_iter()
            .filter(|c| c.needs_new_session())
            .collect();
        assert_eq!(
            needs,
            vec![ApiErrorCode::MissingToken, ApiErrorCode::BadToken]
        );
    }

    #[test]
    fn domain_lists_read_both_lists_and_report_each_bad_line() {
        let lists = DomainLists {
            allow: "# docs only\ndocs.rs\n*.rust-lang.org".into(),
            deny: "ads.docs.rs".into(),
        };
        assert_eq!(
            lists.policy(),
            Ok(DomainPolicy {
                allow: vec![p("docs.rs"), p("*.rust-lang.org")],
                deny: vec![p("ads.docs.rs")],
            })
        );
        assert_eq!(DomainLists::default().policy(), Ok(DomainPolicy::default()));
        let bad = DomainLists {
            allow: "ok.com\nhttps://x.com".into(),
            deny: "*\nfine.org\nbad..org".into(),
        };
        assert_eq!(
            bad.policy(),
            Err(DomainListErrors {
                allow: vec![PatternLineError {
                    line: 2,
                    error: DomainPatternError::LooksLikeUrl("https://x.com".into())
                }],
                deny: vec![
                    PatternLineError {
                        line: 1,
                        error: DomainPatternError::BadWildcard("*".into())
                    },
                    PatternLineError {
                        line: 3,
                        error: DomainPatternError::BadLabel("bad..org".into())
                    },
                ],
            })
        );
        assert_eq!(
            DomainLists::settings_key(WEB_FETCH),
            "web.domains.web_fetch"
        );
        // Stored as typed, comments included.
        assert_eq!(
            serde_json::to_value(&lists).unwrap(),
            json!({"allow": "# docs only\ndocs.rs\n*.rust-lang.org", "deny": "ads.docs.rs"})
        );
        assert_eq!(
            serde_json::from_value::<DomainLists>(json!({"deny": "x.com"})).unwrap(),
            DomainLists {
                allow: String::new(),
                deny: "x.com".into()
            }
        );
    }

    #[test]
    fn backend_settings_and_state_on_the_wire() {
        assert_eq!(
            serde_json::to_value(SearchBackendSetting::Searxng {
                url: "http://127.0.0.1:8888".into()
            })
            .unwrap(),
            json!({"backend": "searxng", "url": "http://127.0.0.1:8888"})
        );
        assert_eq!(
            serde_json::to_value(SearchBackendSetting::Brave {
                api_key: "k".into()
            })
            .unwrap(),
            json!({"backend": "brave", "api_key": "k"})
        );
        let state: SearchBackendState = serde_json::from_value(json!({
            "backend": "searxng", "url": "http://127.0.0.1:8888/", "configured": true,
            "source": "settings", "api_key_set": false, "problem": null
        }))
        .unwrap();
        assert_eq!(
            state,
            SearchBackendState {
                configured: true,
                source: Some(BackendSource::Settings),
                backend: Some("searxng".into()),
                url: Some("http://127.0.0.1:8888/".into()),
                api_key_set: false,
                problem: None,
            }
        );
        let none = SearchBackendState {
            configured: false,
            source: None,
            backend: None,
            url: None,
            api_key_set: false,
            problem: None,
        };
        // (state, summary)
        let cases = [
            (
                state.clone(),
                "Using SearXNG at http://127.0.0.1:8888/ (chosen here).",
            ),
            (
                SearchBackendState {
                    backend: Some("brave".into()),
                    url: Some(BRAVE_URL.into()),
                    api_key_set: true,
                    source: Some(BackendSource::ConfigFile),
                    ..state.clone()
                },
                "Using Brave Search with an API key (from the config file).",
            ),
            (none.clone(), "No search backend is set up."),
            (
                SearchBackendState {
                    problem: Some("BRAVE_API_KEY is not set".into()),
                    ..none
                },
                "No search backend is set up; the config file's could not be used: BRAVE_API_KEY is not set",
            ),
        ];
        for (state, summary) in cases {
            assert_eq!(state.summary(), summary);
        }
    }

    #[test]
    fn internationalised_names_match_the_hosts_urls_carry() {
        let policy = DomainLists {
            allow: "bücher.example\n=münchen.de\n".into(),
            deny: "*.shop.bücher.example".into(),
        }
        .policy()
        .unwrap();
        // (host as it reaches the policy, decision)
        let cases = [
            ("xn--bcher-kva.example", true),
            ("www.xn--bcher-kva.example", true),
            ("BÜCHER.example", true),
            ("a.shop.xn--bcher-kva.example", false),
            ("xn--mnchen-3ya.de", true),
            ("www.xn--mnchen-3ya.de", false),
            ("bucher.example", false),
        ];
        for (host, allowed) in cases {
            assert_eq!(policy.decide(host).is_allowed(), allowed, "{host}");
        }
        assert_eq!(
            serde_json::to_value(&policy).unwrap(),
            json!({"allow": ["xn--bcher-kva.example", "=xn--mnchen-3ya.de"], "deny": ["*.shop.xn--bcher-kva.example"]})
        );
        assert_eq!(
            ascii_forms(
                "# shops\nbücher.example # books\nexample.com\nb\u{fffd}d.example\n=münchen.de"
            ),
            vec![
                (
                    "bücher.example".to_string(),
                    "xn--bcher-kva.example".to_string()
                ),
                ("=münchen.de".to_string(), "=xn--mnchen-3ya.de".to_string()),
            ]
        );
    }

    const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";

    #[test]
    fn only_web_urls_become_links() {
        // (url, followable)
        let cases = [
            ("https://example.com/a?b#c", true),
            ("HTTP://EXAMPLE.COM", true),
            ("http://[::1]:8080/", true),
            ("https://bücher.example/", true),
            ("javascript:alert(1)", false),
            ("JavaScript:alert(1)", false),
            ("data:text/html,<script>alert(1)</script>", false),
            ("//example.com/", false),
            ("/relative", false),
            ("https://", false),
            ("http://", false),
            (" https://example.com", false),
            ("https://exa mple.com", false),
            ("https://example.com/\n", false),
            ("", false),
        ];
        for (url, expected) in cases {
            assert_eq!(is_followable(url), expected, "{url:?}");
        }
    }

    #[test]
    fn the_no_backend_code_travels_to_the_result() {
        let body = r#"{"error":{"code":"no_search_backend","message":"No web search backend is set up."}}"#;
        let error = WebFailure::from_answer(503, body).into_skill_error(WEB_SEARCH);
        assert_eq!(error.code.as_deref(), Some("no_search_backend"));
        assert_eq!(error.message, "No web search backend is set up.");
        let call = crate::call::ToolCall {
            id: "c1".into(),
            skill_id: id(WEB_SEARCH),
            arguments: json!({"query": "x"}),
            conversation_id: None,
            origin: crate::call::CallOrigin::Model,
        };
        let result = ToolResult::from_error(&call, error);
        assert_eq!(result_code(&result), Some(ApiErrorCode::NoSearchBackend));

        // A failure without the proxy's code carries none, and nothing is
        // guessed from the words.
        let other = ToolResult::failed(&call, "No web search backend is set up.");
        assert_eq!(result_code(&other), None);
        let unreachable = WebFailure::ProxyUnreachable.into_skill_error(WEB_SEARCH);
        assert_eq!(unreachable.code, None);
    }

    #[test]
    fn the_key_is_read_only_from_the_launch_links_shape() {
        let key = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_-01234";
        assert!(is_key_shaped(key));
        let other = "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ";
        let cases: Vec<(String, &str, Option<&str>)> = vec![
            (format!("#token={key}"), "", Some(key)),
            (format!("token={key}"), "", Some(key)),
            // Anything else any page could send the browser to: the
            // parameter leaves the address, the key is not kept.
            (format!("#/settings?token={key}"), "#/settings", None),
            (
                format!("#/chat/c1?x=1&token={other}&y=2"),
                "#/chat/c1?x=1&y=2",
                None,
            ),
            (format!("#token={key}&token={other}"), "", None),
            (format!("#token={key}&x=1"), "#?x=1", None),
            ("#token=abc_DEF-123".to_string(), "", None),
            (format!("#token={key}A"), "", None),
            (format!("#token={}", &key[..42]), "", None),
            (format!("#token={}!", &key[..42]), "", None),
            ("#/chat".to_string(), "#/chat", None),
            (String::new(), "", None),
            ("#".to_string(), "", None),
            ("#token=".to_string(), "", None),
            (
                "#/skills?tokens=abc".to_string(),
                "#/skills?tokens=abc",
                None,
            ),
        ];
        for (hash, rest, token) in cases {
            assert_eq!(
                launch_fragment(&hash),
                LaunchFragment {
                    rest: rest.to_string(),
                    token: token.map(str::to_string)
                },
                "{hash}"
            );
        }
        assert_eq!(
            launch_url("http://127.0.0.1:8080/", "k"),
            "http://127.0.0.1:8080/#token=k"
        );
        let link = launch_url("http://127.0.0.1:8080", key);
        let (_, fragment) = link.split_once('#').unwrap();
        assert_eq!(launch_fragment(fragment).token, Some(key.into()));
    }
}
