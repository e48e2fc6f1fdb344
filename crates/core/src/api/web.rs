//! The bodies of `POST /api/fetch` and `POST /api/search` and their
//! answers.

use serde::{Deserialize, Serialize};

use super::domains::DomainPolicy;

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
