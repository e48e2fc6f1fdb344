//! `web_search`'s backends: a SearXNG instance's JSON API, or the Brave
//! Search API with a subscription key. Requests go through the guarded
//! client, so a backend on this machine or the LAN must be allowed
//! explicitly, like any other private destination.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use hearth_core::api::domains::DomainPolicy;
use hearth_core::api::error::ApiErrorCode;
use hearth_core::api::web::{SearchHit, SearchResponse};
use hyper::header::{ACCEPT, ACCEPT_ENCODING, CONTENT_ENCODING, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use url::Url;

use super::reader::text_from_fragment;
use crate::api::error::Refusal;
use crate::client::body::{decode_content_encoding, read_limited};
use crate::client::{FetchError, GuardedClient, parse_url, redact};

/// Brave's web search endpoint.
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// The largest backend answer read.
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// A secret that never shows in `Debug` or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// A configured backend, ready to use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchBackend {
    /// A SearXNG instance; `/search?format=json` is appended to `base`.
    Searxng { base: Url },
    /// Brave Search; `endpoint` is [`BRAVE_ENDPOINT`] unless the config file
    /// says otherwise.
    Brave { api_key: Secret, endpoint: Url },
}

impl SearchBackend {
    pub fn name(&self) -> &'static str {
        match self {
            SearchBackend::Searxng { .. } => "searxng",
            SearchBackend::Brave { .. } => "brave",
        }
    }

    fn label(&self) -> &'static str {
        match self {
            SearchBackend::Searxng { .. } => "SearXNG",
            SearchBackend::Brave { .. } => "Brave Search",
        }
    }

    /// A SearXNG backend at `url` (its base; a trailing `/search` is fine).
    pub fn searxng(url: &str) -> Result<Self, String> {
        let mut base = parse_http_url(url)?;
        let path = base.path().trim_end_matches('/');
        let path = path.strip_suffix("/search").unwrap_or(path).to_string();
        base.set_path(&format!("{path}/"));
        base.set_query(None);
        base.set_fragment(None);
        Ok(SearchBackend::Searxng { base })
    }

    pub fn brave(api_key: &str, endpoint: Option<&str>) -> Result<Self, String> {
        let key = api_key.trim();
        if key.is_empty() {
            return Err("the Brave Search API key is empty".into());
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("the Brave Search API key holds characters a key cannot have".into());
        }
        let endpoint = parse_http_url(endpoint.unwrap_or(BRAVE_ENDPOINT))?;
        Ok(SearchBackend::Brave {
            api_key: Secret::new(key),
            endpoint,
        })
    }

    /// What `GET /api/search/backend` shows: never the key.
    pub fn describe(&self) -> serde_json::Value {
        match self {
            SearchBackend::Searxng { base } => {
                serde_json::json!({"backend": "searxng", "url": base.as_str()})
            }
            SearchBackend::Brave { endpoint, .. } => serde_json::json!({
                "backend": "brave",
                "url": endpoint.as_str(),
                "api_key_set": true,
            }),
        }
    }
}

fn parse_http_url(s: &str) -> Result<Url, String> {
    let url = Url::parse(s.trim()).map_err(|e| format!("{s:?} is not a URL: {e}"))?;
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(format!("{s:?}: the URL must be http or https, not {other}")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the URL must not hold a user name or password".into());
    }
    Ok(url)
}

/// A backend as the app's Settings sends it (`PUT /api/search/backend`).
/// Deliberately narrower than the config file: the browser cannot name an
/// environment variable (whose value would be sent as the key) nor move
/// Brave's endpoint (where the key would go).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "lowercase", deny_unknown_fields)]
pub enum AppBackendSetting {
    Searxng { url: String },
    Brave { api_key: String },
}

impl AppBackendSetting {
    pub fn to_backend(&self) -> Result<SearchBackend, String> {
        match self {
            AppBackendSetting::Searxng { url } => SearchBackend::searxng(url),
            AppBackendSetting::Brave { api_key } => SearchBackend::brave(api_key, None),
        }
    }
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// 503 `no_search_backend`: nothing is configured (or the configuration
    /// is unusable, as `problem` says).
    #[error(
        "No web search backend is set up{}. Choose one in Hearth's Settings (Web search), or add to {config_path}:\n\n\
         [search]\nbackend = \"searxng\"\nurl = \"https://searxng.example.org\"\n\n\
         or\n\n[search]\nbackend = \"brave\"\napi_key_env = \"BRAVE_API_KEY\"\n\n\
         and restart `hearth serve`. A SearXNG instance must have the json format enabled (search.formats in its settings.yml).",
        problem.as_ref().map(|p| format!(" ({p})")).unwrap_or_default()
    )]
    NoBackend {
        problem: Option<String>,
        config_path: String,
    },
    /// 502 `search_backend_failed`: the backend could not be reached or
    /// refused the request's destination.
    #[error("{backend} at {at} could not be reached: {source}{}", hint.as_ref().map(|h| format!(". {h}")).unwrap_or_default())]
    Unreachable {
        backend: &'static str,
        at: String,
        source: FetchError,
        hint: Option<String>,
    },
    /// 502 `search_backend_failed`: the backend answered with an error.
    #[error("{backend} answered HTTP {status}{}", hint.as_ref().map(|h| format!(": {h}")).unwrap_or_default())]
    Status {
        backend: &'static str,
        status: u16,
        hint: Option<String>,
    },
    /// 502 `search_backend_failed`: the answer is not what the backend's
    /// API returns.
    #[error("{backend}'s answer could not be read: {detail}")]
    BadAnswer {
        backend: &'static str,
        detail: String,
    },
}

impl Refusal for SearchError {
    fn code(&self) -> ApiErrorCode {
        match self {
            SearchError::NoBackend { .. } => ApiErrorCode::NoSearchBackend,
            SearchError::Unreachable { .. }
            | SearchError::Status { .. }
            | SearchError::BadAnswer { .. } => ApiErrorCode::SearchBackendFailed,
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            SearchError::NoBackend { .. } => StatusCode::SERVICE_UNAVAILABLE,
            SearchError::Unreachable { .. }
            | SearchError::Status { .. }
            | SearchError::BadAnswer { .. } => StatusCode::BAD_GATEWAY,
        }
    }
}

#[derive(Deserialize)]
struct SearxngAnswer {
    #[serde(default)]
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
struct SearxngResult {
    #[serde(default)]
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    #[serde(default)]
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
}

/// The request URL and headers for `query`.
pub fn build_request(backend: &SearchBackend, query: &str, limit: u32) -> (Url, HeaderMap) {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
    let url = match backend {
        SearchBackend::Searxng { base } => {
            let mut url = base.join("search").unwrap_or_else(|_| base.clone());
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            url
        }
        SearchBackend::Brave { api_key, endpoint } => {
            let mut url = endpoint.clone();
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &limit.min(20).to_string());
            if let Ok(mut v) = HeaderValue::from_str(api_key.expose()) {
                v.set_sensitive(true);
                headers.insert("x-subscription-token", v);
            }
            url
        }
    };
    (url, headers)
}

/// Runs `query` on `backend`, keeps at most `limit` results the domain
/// policy allows.
pub async fn search(
    client: &GuardedClient,
    backend: &SearchBackend,
    query: &str,
    limit: u32,
    policy: &DomainPolicy,
    timeout: Duration,
    config_path: &str,
) -> Result<SearchResponse, SearchError> {
    let (url, headers) = build_request(backend, query, limit);
    let at = redact(&url);
    let unreachable = |source: FetchError| {
        let hint = match &source {
            FetchError::BlockedAddress { blocked, .. } => Some(format!(
                "A search backend on this machine or your network must be allowed explicitly: add \
                 allow_private = [\"{}\"] under [fetch] in {config_path}, or start hearth serve with \
                 --allow-private-fetch {}",
                socket_text(blocked.address, url.port_or_known_default().unwrap_or(80)),
                socket_text(blocked.address, url.port_or_known_default().unwrap_or(80)),
            )),
            _ => None,
        };
        SearchError::Unreachable {
            backend: backend.label(),
            at: at.clone(),
            source,
            hint,
        }
    };
    let exchange = async {
        let res = client
            .send(Method::GET, &url, headers, Bytes::new())
            .await
            .map_err(unreachable)?;
        let status = res.status();
        if !status.is_success() {
            return Err(SearchError::Status {
                backend: backend.label(),
                status: status.as_u16(),
                hint: status_hint(backend, status),
            });
        }
        let encoding = res
            .headers()
            .get(CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let host = url.host_str().unwrap_or_default().to_string();
        let raw = read_limited(res.into_body(), MAX_ANSWER_BYTES, &host)
            .await
            .map_err(unreachable)?;
        decode_content_encoding(encoding.as_deref(), raw, MAX_ANSWER_BYTES).map_err(unreachable)
    };
    let body = match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(unreachable(FetchError::Timeout {
                host: url.host_str().unwrap_or_default().to_string(),
                stage: "answer",
                limit: timeout,
            }));
        }
    };
    let raw_hits = parse_answer(backend, &body)?;
    Ok(select_hits(query, backend, raw_hits, limit, policy))
}

fn socket_text(ip: std::net::IpAddr, port: u16) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => format!("{v4}:{port}"),
        std::net::IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    }
}

fn status_hint(backend: &SearchBackend, status: StatusCode) -> Option<String> {
    match (backend, status.as_u16()) {
        (SearchBackend::Searxng { .. }, 403) => Some(
            "the instance does not offer JSON results; add json to search.formats in its settings.yml".into(),
        ),
        (SearchBackend::Searxng { .. }, 429) => {
            Some("the instance is rate limiting; try again later or use your own instance".into())
        }
        (SearchBackend::Brave { .. }, 401 | 403) => {
            Some("the API key was refused; check it in Settings or the config file".into())
        }
        (SearchBackend::Brave { .. }, 422) => Some("the request or key was not accepted".into()),
        (SearchBackend::Brave { .. }, 429) => {
            Some("the plan's rate limit or quota is used up; try again later".into())
        }
        (SearchBackend::Searxng { .. } | SearchBackend::Brave { .. }, _) => None,
    }
}

/// (title, url, snippet) as the backend sent them.
type RawHit = (String, String, String);

fn parse_answer(backend: &SearchBackend, body: &[u8]) -> Result<Vec<RawHit>, SearchError> {
    let bad = |e: serde_json::Error| SearchError::BadAnswer {
        backend: backend.label(),
        detail: e.to_string(),
    };
    Ok(match backend {
        SearchBackend::Searxng { .. } => serde_json::from_slice::<SearxngAnswer>(body)
            .map_err(bad)?
            .results
            .into_iter()
            .map(|r| (r.title, r.url, r.content))
            .collect(),
        SearchBackend::Brave { .. } => serde_json::from_slice::<BraveAnswer>(body)
            .map_err(bad)?
            .web
            .map(|w| w.results)
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.title, r.url, r.description))
            .collect(),
    })
}

/// Drops results that are not http(s), repeat a URL, or that the domain
/// policy refuses; cleans markup out of titles and snippets.
fn select_hits(
    query: &str,
    backend: &SearchBackend,
    raw: Vec<RawHit>,
    limit: u32,
    policy: &DomainPolicy,
) -> SearchResponse {
    let mut results: Vec<SearchHit> = Vec::new();
    let mut filtered = 0u32;
    for (title, url, snippet) in raw {
        if results.len() >= limit as usize {
            break;
        }
        let Ok(parsed) = parse_url(&url) else {
            continue;
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            continue;
        }
        let host = parsed.host_str().unwrap_or_default().to_string();
        if !policy.decide(&host).is_allowed() {
            filtered += 1;
            continue;
        }
        let url = parsed.to_string();
        if results.iter().any(|h| h.url == url) {
            continue;
        }
        results.push(SearchHit {
            title: text_from_fragment(&title),
            url,
            host,
            snippet: text_from_fragment(&snippet),
        });
    }
    SearchResponse {
        query: query.to_string(),
        backend: backend.name().to_string(),
        results,
        filtered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::api::domains::DomainPattern;

    #[test]
    fn searxng_base_urls_are_normalised() {
        let cases = [
            (
                "http://127.0.0.1:8888",
                "http://127.0.0.1:8888/search?q=a+b&format=json",
            ),
            (
                "http://127.0.0.1:8888/",
                "http://127.0.0.1:8888/search?q=a+b&format=json",
            ),
            (
                "https://s.example/searx",
                "https://s.example/searx/search?q=a+b&format=json",
            ),
            (
                "https://s.example/searx/search?x=1",
                "https://s.example/searx/search?q=a+b&format=json",
            ),
        ];
        for (base, expected) in cases {
            let backend = SearchBackend::searxng(base).unwrap();
            assert_eq!(
                build_request(&backend, "a b", 5).0.as_str(),
                expected,
                "{base}"
            );
        }
        assert!(SearchBackend::searxng("ftp://x").is_err());
        assert!(SearchBackend::searxng("http://u:p@x").is_err());
    }

    #[test]
    fn brave_requests_carry_the_key_and_count() {
        let backend = SearchBackend::brave("KEY123", None).unwrap();
        let (url, headers) = build_request(&backend, "rust lang", 50);
        assert_eq!(
            url.as_str(),
            "https://api.search.brave.com/res/v1/web/search?q=rust+lang&count=20"
        );
        assert_eq!(headers["x-subscription-token"], "KEY123");
        assert!(headers["x-subscription-token"].is_sensitive());
        assert_eq!(headers[ACCEPT], "application/json");
        assert!(!format!("{backend:?}").contains("KEY123"));
        assert!(SearchBackend::brave("  ", None).is_err());
        assert!(SearchBackend::brave("a\nb", None).is_err());
    }

    #[test]
    fn answers_are_read_filtered_and_cleaned() {
        let brave = SearchBackend::brave("k", None).unwrap();
        let body = br#"{"web":{"results":[
            {"title":"The <strong>Hearth</strong>","url":"https://en.wikipedia.org/wiki/Hearth","description":"A <strong>hearth</strong> &amp; home"},
            {"title":"Ads","url":"https://ads.example.com/x","description":"buy"},
            {"title":"Dup","url":"https://en.wikipedia.org/wiki/Hearth","description":""},
            {"title":"JS","url":"javascript:alert(1)","description":""},
            {"title":"Third","url":"https://example.org/","description":"x"}
        ]}}"#;
        let raw = parse_answer(&brave, body).unwrap();
        let policy = DomainPolicy {
            allow: vec![],
            deny: vec![DomainPattern::parse("ads.example.com").unwrap()],
        };
        assert_eq!(
            select_hits("hearth", &brave, raw, 5, &policy),
            SearchResponse {
                query: "hearth".into(),
                backend: "brave".into(),
                results: vec![
                    SearchHit {
                        title: "The Hearth".into(),
                        url: "https://en.wikipedia.org/wiki/Hearth".into(),
                        host: "en.wikipedia.org".into(),
                        snippet: "A hearth & home".into(),
                    },
                    SearchHit {
                        title: "Third".into(),
                        url: "https://example.org/".into(),
                        host: "example.org".into(),
                        snippet: "x".into(),
                    },
                ],
                filtered: 1,
            }
        );
        let searx = SearchBackend::searxng("http://127.0.0.1:1").unwrap();
        let err = parse_answer(&searx, b"<html>").unwrap_err();
        assert_eq!(err.code(), ApiErrorCode::SearchBackendFailed);
        assert_eq!(parse_answer(&brave, b"{}").unwrap(), vec![]);
    }

    #[test]
    fn app_settings_cannot_name_env_vars_or_move_brave() {
        let refused = [
            r#"{"backend":"brave","api_key_env":"AWS_SECRET_ACCESS_KEY"}"#,
            r#"{"backend":"brave","api_key":"k","url":"https://evil.example/"}"#,
            r#"{"backend":"searxng","url":"https://s.example","extra":1}"#,
            r#"{"backend":"google","url":"x"}"#,
        ];
        for body in refused {
            assert!(
                serde_json::from_str::<AppBackendSetting>(body).is_err(),
                "{body}"
            );
        }
        let ok: AppBackendSetting =
            serde_json::from_str(r#"{"backend":"brave","api_key":"k"}"#).unwrap();
        assert_eq!(
            ok.to_backend().unwrap(),
            SearchBackend::brave("k", None).unwrap()
        );
    }

    #[test]
    fn no_backend_message_says_how_to_set_one() {
        let e = SearchError::NoBackend {
            problem: None,
            config_path: "/home/u/.config/hearth/config.toml".into(),
        };
        let m = e.to_string();
        assert!(m.starts_with("No web search backend is set up. Choose one in Hearth's Settings (Web search), or add to /home/u/.config/hearth/config.toml:"), "{m}");
        assert!(m.contains("backend = \"searxng\""));
        assert!(m.contains("api_key_env = \"BRAVE_API_KEY\""));
        assert_eq!(
            (e.code(), e.status()),
            (
                ApiErrorCode::NoSearchBackend,
                StatusCode::SERVICE_UNAVAILABLE
            )
        );
    }
}
