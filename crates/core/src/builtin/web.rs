//! The network-tier web skills: `web_fetch` and `web_search`.
//!
//! This module holds everything about them that is not I/O:
//! - their definitions (network tier: off by default, approval required);
//! - the requests they make of the proxy (the wire types themselves are
//!   the API contract's, in `crate::api::web`, and the domain lists the
//!   proxy enforces are in `crate::api::domains`);
//! - the formatting of results for cards and for the model, and of the
//!   proxy's failures as messages a person can act on.
//!
//! The app's executor only has to POST the call's arguments (plus the
//! skill's [`DomainPolicy`]) to the proxy and hand the answer to
//! [`fetch_output`] / [`search_output`] or [`WebFailure`].

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::domains::DomainPolicy;
use crate::api::error::{ApiErrorBody, ApiErrorCode};
use crate::api::web::{FetchRequest, FetchResponse, Link, SearchRequest, SearchResponse};
use crate::skill::call::{SkillError, SkillOutput, ToolResult};
use crate::skill::command_forms::{CommandForm, TextShape};
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

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

/// The proxy's error code a failed call of a web skill carried, if any.
pub fn result_code(result: &ToolResult) -> Option<ApiErrorCode> {
    result.error_code.as_deref().and_then(ApiErrorCode::parse)
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
    use crate::api::domains::DomainPattern;
    use crate::api::session::{Session, SessionFetch, SessionSearch};
    use crate::api::web::{DocumentKind, SearchHit};
    use crate::schema::validate;
    use crate::skill::registry::Registry;

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
            crate::skill::call::Content::Text {
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
            deny: vec![DomainPattern::parse("evil.com").unwrap()],
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
        let call = crate::skill::call::ToolCall {
            id: "c1".into(),
            skill_id: id(WEB_SEARCH),
            arguments: json!({"query": "x"}),
            conversation_id: None,
            origin: crate::skill::call::CallOrigin::Model,
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
}
