//! `hearth serve` as the OAuth 2.1 authorization server of its own MCP
//! endpoint, as MCP's authorization spec asks of a server whose clients
//! support it:
//!
//! - `GET /.well-known/oauth-protected-resource[/mcp/server]`: Protected
//!   Resource Metadata (RFC 9728), named by the `resource_metadata` of
//!   the endpoint's 401;
//! - `GET /.well-known/oauth-authorization-server`: Authorization Server
//!   Metadata (RFC 8414);
//! - `POST /register`: dynamic client registration (RFC 7591);
//! - `GET /authorize`: checks the request, then sends the browser to
//!   `GET /authorize/wait`, a small page that says "Approve in your
//!   Hearth tab" and reloads itself while the tab asks the person; once
//!   they answer it sends the browser back to the client with a code, or
//!   with `error=access_denied`;
//! - `POST /token`: the authorization code with its PKCE verifier, for
//!   the access token, which is the connected agent's credential.
//!
//! Consent is given only in the tab, through the app's guarded API
//! ([`answer_consent`] at `POST /api/agents/consent`): nothing on these
//! pages approves, and an agent's credential opens none of the app's API.
//! The rules (what is checked, codes, expiry) are in
//! [`super::authorization`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hearth_base::html::escape;
use hearth_core::agents::consent::{CONSENT_PATH, ConsentAnswer, ConsentOutcome};
use hearth_core::agents::wire::{AgentUpdate, ENDPOINT_PATH};
use hearth_core::api::error::ApiErrorCode;
use hearth_core::mcp::oauth::{AuthorizationServerMetadata, ResourceMetadata};
use hearth_core::mcp::url::{form_decode, with_query};
use serde_json::{Value, json};

use super::AgentsState;
use super::authorization::{AnswerError, AuthorizeError, Standing, TokenError, check_authorize};
use super::routes::now_ms;
use crate::api::error::error_response;
use crate::api::guard::{self, AppGuard};
use crate::api::ratelimit::retry_after_secs;

/// Where the resource metadata of `/mcp/server` is.
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp/server";
const RESOURCE_METADATA_ROOT: &str = "/.well-known/oauth-protected-resource";
const SERVER_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
const REGISTER_PATH: &str = "/register";
const AUTHORIZE_PATH: &str = "/authorize";
const WAIT_PATH: &str = "/authorize/wait";
const TOKEN_PATH: &str = "/token";
/// The largest registration or token request read.
const MAX_FORM: usize = 64 * 1024;
/// How often the waiting page reloads, in seconds.
const RELOAD_SECS: u32 = 1;

/// This server's origin, e.g. `http://127.0.0.1:8080`.
fn origin(state: &AgentsState) -> &str {
    state
        .endpoint
        .strip_suffix(ENDPOINT_PATH)
        .unwrap_or(&state.endpoint)
}

/// The issuer identifier. With its trailing slash it is the same string
/// however a client renders the URL it found it at, and the `iss` the
/// authorization response carries (RFC 9207) is compared as a string.
pub fn issuer(state: &AgentsState) -> String {
    format!("{}/", origin(state))
}

/// The `WWW-Authenticate` value of the endpoint's 401: where the resource
/// metadata is, and `invalid_token` when a credential was sent but is not
/// one (RFC 6750 §3: none is named when no credential was sent).
pub fn challenge(state: &AgentsState, invalid: bool) -> Option<HeaderValue> {
    let mut value = format!(
        "Bearer realm=\"hearth\", resource_metadata=\"{}{RESOURCE_METADATA_PATH}\"",
        origin(state)
    );
    if invalid {
        value.push_str(", error=\"invalid_token\", error_description=\"connect the agent in Hearth: Settings, Agents, or sign in again\"");
    }
    HeaderValue::from_str(&value).ok()
}

pub fn router(state: Arc<AgentsState>) -> Router {
    Router::new()
        .route(RESOURCE_METADATA_PATH, get(resource_metadata))
        .route(RESOURCE_METADATA_ROOT, get(resource_metadata))
        .route(SERVER_METADATA_PATH, get(server_metadata))
        .route(REGISTER_PATH, post(register))
        .route(AUTHORIZE_PATH, get(authorize))
        .route(WAIT_PATH, get(wait))
        .route(TOKEN_PATH, post(token))
        .with_state(state)
}

/// The tab's route for its answers, behind `guard` with the app's key
/// like the rest of the app's agents API (`super::routes`).
pub fn app_router(state: Arc<AgentsState>, guard: Arc<AppGuard>) -> Router {
    guard::protect(
        Router::new()
            .route(CONSENT_PATH, post(answer_consent))
            .with_state(state),
        guard,
    )
}

/// An OAuth error body (RFC 6749 §5.2), never cached.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    no_store(
        (
            status,
            Json(json!({"error": error, "error_description": description})),
        )
            .into_response(),
    )
}

fn no_store(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    res
}

fn forbidden(why: &str) -> Response {
    oauth_error(StatusCode::FORBIDDEN, "access_denied", why)
}

/// Who may reach these routes at all: a program or browser on this
/// machine, at the address served (so a rebound name fails). `browser`
/// routes are the ones a person's browser is sent to; the others are
/// called by agents, and a web page's request (it carries `Origin`) is
/// refused there, as at the endpoint.
fn admit(state: &AgentsState, req: &Request, browser: bool) -> Result<(), &'static str> {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if !peer.is_some_and(|p| p.ip().to_canonical().is_loopback()) {
        return Err("Hearth answers only programs on this machine");
    }
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or(req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("");
    if !state.guard.serves_host(host) {
        return Err("that Host is not the address Hearth serves");
    }
    if !browser && req.headers().contains_key(header::ORIGIN) {
        return Err("web pages may not call this endpoint; agents call it directly");
    }
    Ok(())
}

async fn resource_metadata(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    if let Err(why) = admit(&state, &req, true) {
        return forbidden(why);
    }
    let meta = ResourceMetadata {
        resource: state.endpoint.clone(),
        authorization_servers: vec![issuer(&state)],
        scopes_supported: None,
    };
    let mut body = serde_json::to_value(meta).unwrap_or(Value::Null);
    body["bearer_methods_supported"] = json!(["header"]);
    body["resource_name"] = json!("Hearth");
    Json(body).into_response()
}

async fn server_metadata(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    if let Err(why) = admit(&state, &req, true) {
        return forbidden(why);
    }
    let base = origin(&state);
    let meta = AuthorizationServerMetadata {
        issuer: issuer(&state),
        authorization_endpoint: format!("{base}{AUTHORIZE_PATH}"),
        token_endpoint: format!("{base}{TOKEN_PATH}"),
        registration_endpoint: Some(format!("{base}{REGISTER_PATH}")),
        scopes_supported: None,
        grant_types_supported: Some(vec!["authorization_code".into()]),
        token_endpoint_auth_methods_supported: Some(vec!["none".into()]),
        code_challenge_methods_supported: Some(vec!["S256".into()]),
        client_id_metadata_document_supported: false,
        authorization_response_iss_parameter_supported: true,
    };
    let mut body = serde_json::to_value(meta).unwrap_or(Value::Null);
    body["response_types_supported"] = json!(["code"]);
    body["response_modes_supported"] = json!(["query"]);
    Json(body).into_response()
}

/// The body, whole, if it is at most [`MAX_FORM`].
async fn read_small(body: Body) -> Option<Bytes> {
    axum::body::to_bytes(body, MAX_FORM).await.ok()
}

fn content_type_is(headers: &HeaderMap, want: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(want))
}

async fn register(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    if let Err(why) = admit(&state, &req, false) {
        return forbidden(why);
    }
    if let Err(wait) = state.limit_registration() {
        let mut res = oauth_error(
            StatusCode::TOO_MANY_REQUESTS,
            "invalid_client_metadata",
            "too many registrations; wait and try again",
        );
        if let Ok(v) = HeaderValue::from_str(&retry_after_secs(wait).to_string()) {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return res;
    }
    if !content_type_is(req.headers(), "application/json") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "send the registration as Content-Type: application/json",
        );
    }
    let Some(body) = read_small(req.into_body()).await else {
        return oauth_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_client_metadata",
            "the registration is too large",
        );
    };
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "the registration is not JSON",
        );
    };
    let client_id = match super::authorization::new_id("hearth_client_") {
        Ok(id) => id,
        Err(e) => return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &e),
    };
    let now = now_ms();
    let client = match super::authorization::read_registration(&body, client_id, now) {
        Ok(c) => c,
        Err(e) => return oauth_error(StatusCode::BAD_REQUEST, e.error, &e.description),
    };
    if let Err(e) = state.clients.add(client.clone()) {
        tracing::warn!(target: "hearth::agents", error = %e, "cannot save an OAuth client");
        return oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "cannot save the registration",
        );
    }
    tracing::info!(target: "hearth::agents", client = %client.client_id, name = %client.client_name, "an OAuth client registered");
    no_store(
        (
            StatusCode::CREATED,
            Json(json!({
                "client_id": client.client_id,
                "client_id_issued_at": now / 1000,
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            })),
        )
            .into_response(),
    )
}

/// A small page of Hearth's own, with no script, that no other page may
/// frame. `reload` reloads it after [`RELOAD_SECS`].
fn page(status: StatusCode, title: &str, body_html: &str, reload: Option<&str>) -> Response {
    let refresh = reload
        .map(|url| {
            format!(
                "<meta http-equiv=\"refresh\" content=\"{RELOAD_SECS};url={}\">",
                escape(url)
            )
        })
        .unwrap_or_default();
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">{refresh}<title>{title} · Hearth</title>\
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color-scheme:light dark}}h1{{font-size:1.4rem}}</style>\
</head><body><h1>{title}</h1>{body_html}</body></html>",
        title = escape(title),
    );
    let mut res = (status, html).into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    no_store(res)
}

fn see_other(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(v) => no_store((StatusCode::SEE_OTHER, [(header::LOCATION, v)], "").into_response()),
        Err(_) => page(
            StatusCode::BAD_REQUEST,
            "Cannot go back to the agent",
            "<p>The agent's address cannot be used. Start again from your agent.</p>",
            None,
        ),
    }
}

/// Revokes agents whose codes expired unused.
fn sweep(state: &AgentsState) {
    for agent in state.grants.sweep(now_ms()) {
        tracing::info!(target: "hearth::agents", %agent, "an authorization code expired unused; revoking its agent");
        let _ = state.revoke(&agent);
    }
}

async fn authorize(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    if let Err(why) = admit(&state, &req, true) {
        return forbidden(why);
    }
    sweep(&state);
    let params = form_decode(req.uri().query().unwrap_or(""));
    let request = match check_authorize(&params, &state.clients, &state.endpoint) {
        Ok(r) => r,
        Err(AuthorizeError::Page(why)) => {
            return page(
                StatusCode::BAD_REQUEST,
                "This connection request cannot be used",
                &format!("<p>{}</p>", escape(&why)),
                None,
            );
        }
        Err(AuthorizeError::Redirect {
            redirect_uri,
            state: client_state,
            error,
            description,
        }) => {
            let mut pairs = vec![
                ("error", error.to_string()),
                ("error_description", description),
            ];
            if let Some(s) = client_state {
                pairs.push(("state", s));
            }
            pairs.push(("iss", issuer(&state)));
            return see_other(&with_query(&redirect_uri, &pairs));
        }
    };
    let client = request.client.client_id.clone();
    match state.grants.begin(request, now_ms()) {
        Ok(consent) => {
            tracing::info!(target: "hearth::agents", %client, %consent, "an OAuth client asks to connect");
            see_other(&with_query(WAIT_PATH, &[("consent", consent)]))
        }
        Err(why) => page(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests are waiting",
            &format!("<p>{}</p>", escape(&why)),
            None,
        ),
    }
}

/// The page the browser waits on while the tab asks the person.
async fn wait(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    if let Err(why) = admit(&state, &req, true) {
        return forbidden(why);
    }
    sweep(&state);
    let params = form_decode(req.uri().query().unwrap_or(""));
    let consent = params
        .iter()
        .find(|(k, _)| k == "consent")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    match state.grants.standing(&consent, &issuer(&state)) {
        Standing::Gone => page(
            StatusCode::NOT_FOUND,
            "This connection request is over",
            "<p>It was answered, or it expired. If your agent is still waiting, start again from your agent.</p>",
            None,
        ),
        Standing::Done { location } => see_other(&location),
        Standing::Waiting { asked, tab } => {
            // Ask a tab if none was, or the one asked has closed.
            let tab = match tab.filter(|t| state.hub.has_tab(t)) {
                Some(t) => Some(t),
                None => {
                    let now = state.hub.ask_consent(&asked);
                    if let Some(t) = &now {
                        state.grants.asked(&consent, t);
                    }
                    now
                }
            };
            let here = with_query(WAIT_PATH, &[("consent", consent.as_str())]);
            let name = escape(&asked.client_name);
            match tab {
                Some(_) => page(
                    StatusCode::OK,
                    "Approve in your Hearth tab",
                    &format!(
                        "<p><strong>{name}</strong> wants to connect to Hearth. Switch to your Hearth tab to allow or deny it there.</p><p>This page goes on by itself once you answer.</p>"
                    ),
                    Some(&here),
                ),
                None => page(
                    StatusCode::OK,
                    "Open Hearth to approve",
                    &format!(
                        "<p><strong>{name}</strong> wants to connect to Hearth, and the person approves that in Hearth's tab, which is not open.</p><p>Open <a href=\"{origin}/\">{origin}/</a> (or reload its tab), then answer there. This page goes on by itself.</p>",
                        origin = escape(origin(&state))
                    ),
                    Some(&here),
                ),
            }
        }
    }
}

async fn token(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    if let Err(why) = admit(&state, &req, false) {
        return forbidden(why);
    }
    if !content_type_is(req.headers(), "application/x-www-form-urlencoded") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "send the token request as Content-Type: application/x-www-form-urlencoded",
        );
    }
    let Some(body) = read_small(req.into_body()).await else {
        return oauth_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request",
            "the token request is too large",
        );
    };
    let form = form_decode(&String::from_utf8_lossy(&body));
    let field = |k: &str| {
        form.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    match field("grant_type") {
        Some("authorization_code") => {}
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!(
                    "grant_type {other:?} is not supported; Hearth issues tokens for authorization codes only"
                ),
            );
        }
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "grant_type is missing",
            );
        }
    }
    if let Some(given) = field("resource")
        && !super::authorization::same_resource(given, &state.endpoint)
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            &format!("this server grants access to {} only", state.endpoint),
        );
    }
    let Some(code) = field("code") else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "code is missing",
        );
    };
    sweep(&state);
    let exchanged = state.grants.exchange(
        code,
        field("client_id"),
        field("redirect_uri"),
        field("code_verifier"),
        now_ms(),
    );
    match exchanged {
        Ok((agent, credential)) => {
            // The person may have revoked the agent since they allowed it.
            if !state.store.list().iter().any(|a| a.id == agent) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "the agent this code was for has been revoked",
                );
            }
            tracing::info!(target: "hearth::agents", %agent, "an OAuth client exchanged its code");
            no_store(
                Json(json!({"access_token": credential, "token_type": "Bearer"})).into_response(),
            )
        }
        Err(TokenError::Grant(why, agent)) => {
            if let Some(agent) = agent {
                tracing::warn!(target: "hearth::agents", %agent, reason = %why, "a failed code exchange; revoking its agent");
                let _ = state.revoke(&agent);
            }
            oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", &why)
        }
    }
}

/// The tab's answer to a consent, behind the app's guard and key: Allow
/// connects the agent (as Settings → Agents does, sharing what the dialog
/// chose) and issues the code; Deny sends the client `access_denied`.
pub async fn answer_consent(
    State(state): State<Arc<AgentsState>>,
    body: Result<Json<ConsentAnswer>, JsonRejection>,
) -> Response {
    let answer = match body {
        Ok(Json(a)) => a,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                ApiErrorCode::InvalidRequest,
                e.body_text(),
            );
        }
    };
    sweep(&state);
    let request = match state.grants.waiting(&answer.consent, &answer.tab) {
        Ok(r) => r,
        Err(e @ AnswerError::Unknown(_)) => {
            return error_response(StatusCode::NOT_FOUND, ApiErrorCode::NotFound, e.to_string());
        }
        Err(e @ AnswerError::OtherTab(_)) => {
            return error_response(
                StatusCode::CONFLICT,
                ApiErrorCode::InvalidRequest,
                e.to_string(),
            );
        }
    };
    if !answer.allow {
        state.grants.deny(&answer.consent);
        tracing::info!(target: "hearth::agents", client = %request.client.client_id, "the person denied an OAuth client");
        return Json(ConsentOutcome { agent: None }).into_response();
    }
    let (name, kind) = super::authorization::agent_of(&request.client);
    let (mut agent, credential) = match state.store.create(&name, kind, now_ms()) {
        Ok(made) => made,
        Err(e) => return super::routes::registry_error(e),
    };
    if let Some(shared) = answer.shared {
        let update = AgentUpdate {
            shared: Some(shared),
            ..AgentUpdate::default()
        };
        match state.store.update(&agent.id, update) {
            Ok(updated) => agent = updated,
            Err(e) => {
                let _ = state.revoke(&agent.id);
                return super::routes::registry_error(e);
            }
        }
    }
    match state
        .grants
        .allow(&answer.consent, &agent.id, credential, now_ms())
    {
        Ok(true) => {
            tracing::info!(target: "hearth::agents", agent = %agent.id, name = %agent.name, "the person allowed an OAuth client; connected an agent");
            (
                StatusCode::CREATED,
                Json(ConsentOutcome { agent: Some(agent) }),
            )
                .into_response()
        }
        Ok(false) => {
            let _ = state.revoke(&agent.id);
            error_response(
                StatusCode::NOT_FOUND,
                ApiErrorCode::NotFound,
                format!(
                    "connection request {} expired before it was answered",
                    answer.consent
                ),
            )
        }
        Err(e) => {
            let _ = state.revoke(&agent.id);
            error_response(StatusCode::INTERNAL_SERVER_ERROR, ApiErrorCode::Internal, e)
        }
    }
}
