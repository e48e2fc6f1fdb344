//! The network-tier API of `hearth serve`: `web_fetch` and `web_search`
//! through a proxy that answers only the Hearth app and fetches only the
//! public internet.
//!
//! # HTTP contract
//!
//! Served on the app's own origin (e.g. `http://127.0.0.1:8080`). The
//! request and response bodies are the types of `hearth_core::builtin::web`.
//!
//! ## Who may call
//!
//! Every `/api/…` request must
//! - come over a loopback connection;
//! - carry `Host: <the loopback name:port the app is served on>`
//!   (`127.0.0.1:PORT` or `localhost:PORT`; `[::1]:PORT` when bound there);
//! - carry `Sec-Fetch-Site: same-origin` (browsers send it by themselves);
//! - carry `Origin: http://<that host>` on POST, PUT and DELETE (browsers
//!   do), and if `Origin` is sent on GET it must be that too;
//! - carry `X-Hearth-Token: <key>`, on every route. The key is in the
//!   fragment of the launch link `hearth serve` prints
//!   (`http://127.0.0.1:8080/#token=<key>`); no route hands it out;
//! - send JSON bodies as `Content-Type: application/json` (anything else is
//!   `400 invalid_request`, so a cross-site `<form>` post can never parse).
//!
//! Anything else is answered `403` with one of the codes `forbidden_peer`,
//! `forbidden_host`, `forbidden_fetch_site`, `forbidden_origin`,
//! `missing_token`, `bad_token`, and every `OPTIONS` (CORS preflight) with
//! `403 preflight_refused`. No response carries `Access-Control-Allow-*`.
//! All API responses carry `Cache-Control: no-store`.
//!
//! ## `GET /api/session` → 200 ([`Session`](hearth_core::api::session::Session))
//! ```json
//! {"header": "x-hearth-token", "version": "0.1.0",
//!  "fetch": {"default_max_bytes": 2097152, "max_bytes": 10485760},
//!  "search": {"configured": true, "backend": "searxng"}}
//! ```
//! Needs the key like every route, and never repeats it. The app keeps the
//! key from the launch link in its origin's local storage; on
//! `missing_token` / `bad_token` it reads the stored key again (another tab
//! may have taken a newer one) and otherwise tells the person to open the
//! launch link. `hearth_core::builtin::web::read_answer` reads every answer below,
//! and turns a missing proxy (a static server's 404/405/501, or a dev
//! server's `index.html`) into `WebFailure::ProxyUnreachable`.
//!
//! ## `POST /api/fetch` (`Content-Type: application/json`)
//! Request ([`FetchRequest`](hearth_core::api::web::FetchRequest)):
//! `{"url": "https://example.com/", "max_bytes": 1000000,
//!   "domains": {"allow": ["example.com"], "deny": ["*.ads.example.com"]}}`
//! — `max_bytes` (1..=`fetch.max_bytes` of the session) and `domains`
//! (the skill's domain lists, applied to the URL and every redirect) are
//! optional.
//!
//! 200 ([`FetchResponse`](hearth_core::api::web::FetchResponse)):
//! `{"url", "requested_url", "host", "status", "kind": "html"|"json"|"text",
//!   "content_type", "charset", "lossy", "title", "content", "links":
//!   [{"text", "url"}], "bytes", "redirects"}` — `content` is Markdown for
//! HTML, pretty JSON, or the text.
//!
//! ## `POST /api/search`
//! Request ([`SearchRequest`](hearth_core::api::web::SearchRequest)):
//! `{"query": "…", "limit": 5, "domains": {…}}` (`limit` 1–20, default 5).
//!
//! 200 ([`SearchResponse`](hearth_core::api::web::SearchResponse)):
//! `{"query", "backend": "searxng"|"brave", "results": [{"title", "url",
//!   "host", "snippet"}], "filtered": <hits dropped by the domain lists>}`
//!
//! ## `GET | PUT | DELETE /api/search/backend`
//! The backend chosen in the app's Settings; it takes precedence over the
//! config file's `[search]` and is kept in `search-backend.json` (0600) in
//! the config directory. PUT takes `{"backend": "searxng", "url": "…"}` or
//! `{"backend": "brave", "api_key": "…"}` (nothing else: the browser cannot
//! name environment variables or move Brave's endpoint). All three answer
//! `{"configured": bool, "source": "settings"|"config_file"|null,
//!   "backend": …, "url": …, "api_key_set": bool, "problem": …}` — never
//! the key.
//!
//! ## Errors
//! Every failure is `{"error": {"code": "<code>", "message": "<for people>"}}`
//! ([`ApiErrorBody`](hearth_core::api::error::ApiErrorBody)):
//!
//! | status | codes |
//! |---|---|
//! | 400 | `invalid_request`, `invalid_url`, `unsupported_scheme`, `url_has_credentials` |
//! | 403 | the guard's codes above; `blocked_address`, `blocked_port`, `blocked_domain` |
//! | 404 | `not_found` (no such API) |
//! | 405 | `method_not_allowed` |
//! | 415 | `unsupported_content_type` (not HTML, JSON or text) |
//! | 429 | `rate_limited`, with `Retry-After: <seconds>` |
//! | 500 | `settings_failed`, `internal` |
//! | 502 | `dns_failed`, `connect_failed`, `tls_failed`, `too_many_redirects`, `bad_redirect`, `upstream_status`, `upstream_failed`, `response_too_large`, `unsupported_content_encoding`, `invalid_json`, `search_backend_failed` |
//! | 503 | `no_search_backend` (the message says how to set one) |
//! | 504 | `timeout` |
//!
//! Each variant of [`ApiError`], [`client::FetchError`],
//! [`guard::GuardError`] and [`search::SearchError`] documents its status
//! and code.
//!
//! ## What is fetched
//! http and https only; the host is resolved by the proxy and every address
//! must be public ([`client::address`]), except destinations listed with
//! `--allow-private-fetch IP:PORT` or `[fetch] allow_private`. The checked
//! address is the one connected to. At most 5 redirects, each checked the
//! same way. Bodies over `max_bytes` and fetches over the time limits are
//! refused. Rate limits are per skill (`web_fetch`, `web_search`).

pub mod config;
pub mod content;
pub mod fetch;
pub mod reader;
pub mod search;

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use axum::body::HttpBody;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{any, get, post};
use axum::{Json, Router};
use hearth_core::api::session::{Session, SessionFetch, SessionSearch};
use hearth_core::api::web::{FetchRequest, FetchResponse, SearchRequest, SearchResponse};
use hearth_core::builtin::web::{
    DEFAULT_SEARCH_LIMIT, MAX_QUERY_LEN, MAX_SEARCH_LIMIT, WEB_FETCH, WEB_SEARCH,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use self::config::{FALLBACK_RATE_LIMIT, NetConfig, SEARCH_SETTINGS_FILE};
use self::fetch::FetchLimits;
use self::search::{AppBackendSetting, SearchBackend, SearchError};
use crate::api::error::{ApiError, Refusal};
use crate::api::guard::{self, AppGuard, TOKEN_HEADER};
use crate::api::ratelimit::{RateLimiter, retry_after_secs};
use crate::client::resolve::Resolve;
use crate::client::{self, ClientConfig, GuardedClient, parse_url, redact};

/// The User-Agent of every outgoing request.
pub const USER_AGENT: &str = concat!(
    "Hearth/",
    env!("CARGO_PKG_VERSION"),
    " (web_fetch; local-first assistant)"
);

/// Everything the API's handlers share.
pub struct NetState {
    guard: Arc<AppGuard>,
    client: GuardedClient,
    limits: FetchLimits,
    limiter: RateLimiter,
    in_flight: Semaphore,
    file_search: Option<SearchBackend>,
    search_problem: Option<String>,
    app_search: RwLock<Option<SearchBackend>>,
    settings_path: PathBuf,
    config_path: PathBuf,
}

impl NetState {
    /// The state for `config`, answering only callers `guard` lets through,
    /// resolving names with `resolver` and trusting `tls`'s roots.
    pub fn new(
        config: NetConfig,
        guard: AppGuard,
        resolver: Arc<dyn Resolve>,
        tls: Arc<rustls::ClientConfig>,
    ) -> Self {
        let settings_path = config.state_dir.join(SEARCH_SETTINGS_FILE);
        let app_search = load_app_search(&settings_path);
        let client = GuardedClient::new(ClientConfig {
            connect_timeout: config.connect_timeout,
            allow_private: config.allow_private.clone(),
            resolver,
            tls,
            user_agent: HeaderValue::from_static(USER_AGENT),
        });
        Self {
            guard: Arc::new(guard),
            client,
            limits: config.limits,
            limiter: RateLimiter::new(config.rate_limits, FALLBACK_RATE_LIMIT),
            in_flight: Semaphore::new(config.max_concurrent),
            file_search: config.search,
            search_problem: config.search_problem,
            app_search: RwLock::new(app_search),
            settings_path,
            config_path: config.config_path,
        }
    }

    pub fn guard(&self) -> Arc<AppGuard> {
        self.guard.clone()
    }

    fn search_backend(&self) -> (Option<SearchBackend>, Option<&'static str>) {
        let app = self
            .app_search
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match (app, &self.file_search) {
            (Some(b), _) => (Some(b), Some("settings")),
            (None, Some(b)) => (Some(b.clone()), Some("config_file")),
            (None, None) => (None, None),
        }
    }

    /// A place among the fetches in flight, waiting at most the fetch time
    /// limit for one.
    async fn permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>, client::FetchError> {
        match tokio::time::timeout(self.limits.total_timeout, self.in_flight.acquire()).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) => Err(client::FetchError::UpstreamFailed {
                host: "the proxy".into(),
                detail: "it is shutting down".into(),
            }),
            Err(_) => Err(client::FetchError::Timeout {
                host: "the proxy".into(),
                stage: "start the request (too many in flight)",
                limit: self.limits.total_timeout,
            }),
        }
    }

    fn rate_limit(&self, skill: &str) -> Result<(), ApiError> {
        self.limiter
            .check(skill)
            .map_err(|wait| ApiError::RateLimited {
                skill: skill.to_string(),
                retry_after_secs: retry_after_secs(wait),
            })
    }
}

fn load_app_search(path: &std::path::Path) -> Option<SearchBackend> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the search backend chosen in Settings; ignoring it");
            return None;
        }
    };
    match serde_json::from_str::<AppBackendSetting>(&text)
        .map_err(|e| e.to_string())
        .and_then(|s| s.to_backend())
    {
        Ok(b) => Some(b),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "the search backend chosen in Settings is unreadable; ignoring it (the file is left as it is)");
            None
        }
    }
}

/// The `/api` routes, each behind the guard.
pub fn router(state: Arc<NetState>) -> Router {
    let guard = state.guard();
    let api = Router::new()
        .route("/api/session", get(session))
        .route("/api/fetch", post(fetch_handler))
        .route("/api/search", post(search_handler))
        .route(
            "/api/search/backend",
            get(get_backend).put(put_backend).delete(delete_backend),
        )
        .route("/api", any(not_found))
        .route("/api/{*rest}", any(not_found))
        .method_not_allowed_fallback(method_not_allowed);
    let api = guard::protect(api, guard).layer(DefaultBodyLimit::max(64 * 1024));
    api.layer(middleware::from_fn(log_requests))
        .with_state(state)
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

async fn not_found(req: Request) -> ApiError {
    ApiError::NotFound(req.uri().path().to_string())
}

/// Logs method, path, status, size and duration of every API call; never
/// bodies, query strings or headers.
async fn log_requests(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut res = next.run(req).await;
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let bytes = res.body().size_hint().exact();
    tracing::info!(
        target: "hearth::net",
        %method,
        path,
        status = res.status().as_u16(),
        bytes,
        ms = started.elapsed().as_millis() as u64,
        "api"
    );
    res
}

async fn session(State(s): State<Arc<NetState>>) -> Json<Session> {
    let (backend, _) = s.search_backend();
    Json(Session {
        header: TOKEN_HEADER.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        fetch: SessionFetch {
            default_max_bytes: s.limits.default_max_bytes,
            max_bytes: s.limits.max_bytes,
        },
        search: SessionSearch {
            configured: backend.is_some(),
            backend: backend.as_ref().map(|b| b.name().to_string()),
        },
    })
}

fn json_body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    body.map(|Json(v)| v)
        .map_err(|e| ApiError::InvalidRequest(e.body_text()))
}

async fn fetch_handler(
    State(s): State<Arc<NetState>>,
    body: Result<Json<FetchRequest>, JsonRejection>,
) -> Result<Json<FetchResponse>, ApiError> {
    let req = json_body(body)?;
    s.rate_limit(WEB_FETCH)?;
    let max_bytes = req.max_bytes.unwrap_or(s.limits.default_max_bytes);
    if max_bytes == 0 || max_bytes > s.limits.max_bytes {
        return Err(ApiError::InvalidRequest(format!(
            "max_bytes must be between 1 and {}",
            s.limits.max_bytes
        )));
    }
    let logged = parse_url(&req.url)
        .map(|u| redact(&u))
        .unwrap_or_else(|_| "(not a URL)".into());
    let started = Instant::now();
    let result = async {
        let _permit = s.permit().await?;
        fetch::fetch(&s.client, &req.url, max_bytes, &req.domains, &s.limits).await
    }
    .await;
    let ms = started.elapsed().as_millis() as u64;
    match result {
        Ok(page) => {
            tracing::info!(
                target: "hearth::net",
                skill = WEB_FETCH,
                to = %logged,
                status = page.status,
                bytes = page.bytes,
                redirects = page.redirects,
                kind = page.kind.as_str(),
                ms,
                "fetched"
            );
            Ok(Json(page))
        }
        Err(e) => {
            tracing::warn!(target: "hearth::net", skill = WEB_FETCH, to = %logged, code = e.code().as_str(), ms, "fetch refused or failed");
            Err(e.into())
        }
    }
}

async fn search_handler(
    State(s): State<Arc<NetState>>,
    body: Result<Json<SearchRequest>, JsonRejection>,
) -> Result<Json<SearchResponse>, ApiError> {
    let req = json_body(body)?;
    let query = req.query.trim();
    if query.is_empty() || query.chars().count() > MAX_QUERY_LEN {
        return Err(ApiError::InvalidRequest(format!(
            "query must hold 1 to {MAX_QUERY_LEN} characters"
        )));
    }
    let limit = req.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
        return Err(ApiError::InvalidRequest(format!(
            "limit must be between 1 and {MAX_SEARCH_LIMIT}"
        )));
    }
    let (backend, _) = s.search_backend();
    let Some(backend) = backend else {
        return Err(SearchError::NoBackend {
            problem: s.search_problem.clone(),
            config_path: s.config_path.display().to_string(),
        }
        .into());
    };
    s.rate_limit(WEB_SEARCH)?;
    let started = Instant::now();
    let _permit = s.permit().await?;
    let result = search::search(
        &s.client,
        &backend,
        query,
        limit,
        &req.domains,
        s.limits.total_timeout,
        &s.config_path.display().to_string(),
    )
    .await;
    let ms = started.elapsed().as_millis() as u64;
    match result {
        Ok(found) => {
            tracing::info!(target: "hearth::net", skill = WEB_SEARCH, backend = backend.name(), results = found.results.len(), filtered = found.filtered, ms, "searched");
            Ok(Json(found))
        }
        Err(e) => {
            tracing::warn!(target: "hearth::net", skill = WEB_SEARCH, backend = backend.name(), code = e.code().as_str(), ms, "search failed");
            Err(e.into())
        }
    }
}

fn describe_backend(s: &NetState) -> Value {
    let (backend, source) = s.search_backend();
    let mut v = match &backend {
        Some(b) => b.describe(),
        None => json!({"backend": null, "url": null}),
    };
    if let Value::Object(m) = &mut v {
        m.insert("configured".into(), json!(backend.is_some()));
        m.insert("source".into(), json!(source));
        m.entry("api_key_set").or_insert(json!(false));
        m.insert(
            "problem".into(),
            json!(if backend.is_none() {
                s.search_problem.clone()
            } else {
                None
            }),
        );
    }
    v
}

async fn get_backend(State(s): State<Arc<NetState>>) -> Json<Value> {
    Json(describe_backend(&s))
}

async fn put_backend(
    State(s): State<Arc<NetState>>,
    body: Result<Json<AppBackendSetting>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let setting = json_body(body)?;
    let backend = setting.to_backend().map_err(ApiError::InvalidRequest)?;
    let text = serde_json::to_string(&setting).map_err(|e| ApiError::Internal(e.to_string()))?;
    if let Some(dir) = s.settings_path.parent() {
        crate::api::token::create_private_dir(dir)
            .map_err(|e| ApiError::Settings(e.to_string()))?;
    }
    crate::api::token::replace_private(&s.settings_path, &text)
        .map_err(|e| ApiError::Settings(e.to_string()))?;
    *s.app_search.write().unwrap_or_else(|p| p.into_inner()) = Some(backend);
    tracing::info!(target: "hearth::net", backend = setting_name(&setting), "search backend set from the app");
    Ok(Json(describe_backend(&s)))
}

fn setting_name(s: &AppBackendSetting) -> &'static str {
    match s {
        AppBackendSetting::Searxng { .. } => "searxng",
        AppBackendSetting::Brave { .. } => "brave",
    }
}

async fn delete_backend(State(s): State<Arc<NetState>>) -> Result<Json<Value>, ApiError> {
    match std::fs::remove_file(&s.settings_path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(ApiError::Settings(e.to_string())),
    }
    *s.app_search.write().unwrap_or_else(|p| p.into_inner()) = None;
    Ok(Json(describe_backend(&s)))
}
