//! The app's routes for agents, behind the API guard with the app's key
//! (the contract is `hearth_core::agents::wire`): the Agents panel's
//! credentials, and the channel the tab takes agents' requests on.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use hearth_core::agents::wire::{
    AGENTS_PATH, AgentUpdate, AgentsListing, CHANNEL_PATH, ChangeNotice, CreatedAgent, NOTIFY_PATH,
    NewAgent, REPLY_PATH, RelayReply, TabHello,
};
use hearth_core::api::error::ApiErrorCode;
use serde_json::json;

use super::AgentsState;
use super::hub::{ReplyError, TabEvent};
use super::registry::RegistryError;
use super::sessions::Change;
use crate::api::error::error_response;
use crate::api::guard::{self, AppGuard};

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The routes over `state`, each behind `guard` with the app's key.
pub fn router(state: Arc<AgentsState>, guard: Arc<AppGuard>) -> Router {
    let routes = Router::new()
        .route(AGENTS_PATH, get(list).post(create))
        .route("/api/agents/summary", get(summary))
        .route(CHANNEL_PATH, get(channel))
        .route("/api/agents/channel/{tab}", delete(close_channel))
        .route(REPLY_PATH, post(reply))
        .route(NOTIFY_PATH, post(notify))
        .route("/api/agents/{id}", put(update).delete(revoke))
        .with_state(state)
        .method_not_allowed_fallback(|| async {
            error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                ApiErrorCode::MethodNotAllowed,
                "this route does not take that method".into(),
            )
        });
    guard::protect(routes, guard)
}

pub(super) fn registry_error(e: RegistryError) -> Response {
    let (status, code) = match &e {
        RegistryError::BadName | RegistryError::TooMany | RegistryError::BadSkill(_) => {
            (StatusCode::BAD_REQUEST, ApiErrorCode::InvalidRequest)
        }
        RegistryError::NoSuchAgent(_) => (StatusCode::NOT_FOUND, ApiErrorCode::NotFound),
        RegistryError::Save(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            ApiErrorCode::SettingsFailed,
        ),
        RegistryError::Random(_) => (StatusCode::INTERNAL_SERVER_ERROR, ApiErrorCode::Internal),
    };
    error_response(status, code, e.to_string())
}

fn bad_body(e: JsonRejection) -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        ApiErrorCode::InvalidRequest,
        e.body_text(),
    )
}

fn listing(state: &AgentsState) -> AgentsListing {
    AgentsListing {
        agents: state.store.list(),
        endpoint: state.endpoint.clone(),
        command: state.command.clone(),
        tabs: state.hub.tabs(),
    }
}

async fn list(State(state): State<Arc<AgentsState>>) -> Json<AgentsListing> {
    Json(listing(&state))
}

/// How many agents there are, and OAuth clients that may ask to connect:
/// all the app asks at start-up, to know whether to open its channel.
async fn summary(State(state): State<Arc<AgentsState>>) -> Response {
    Json(json!({
        "agents": state.store.list().len(),
        "clients": state.clients.len(),
        "tabs": state.hub.tabs(),
    }))
    .into_response()
}

async fn create(
    State(state): State<Arc<AgentsState>>,
    body: Result<Json<NewAgent>, JsonRejection>,
) -> Response {
    let new = match body {
        Ok(Json(n)) => n,
        Err(e) => return bad_body(e),
    };
    match state.store.create(&new.name, new.client, now_ms()) {
        Ok((agent, credential)) => {
            tracing::info!(target: "hearth::agents", agent = %agent.id, name = %agent.name, "connected an agent");
            (
                StatusCode::CREATED,
                Json(CreatedAgent { agent, credential }),
            )
                .into_response()
        }
        Err(e) => registry_error(e),
    }
}

async fn update(
    State(state): State<Arc<AgentsState>>,
    UrlPath(id): UrlPath<String>,
    body: Result<Json<AgentUpdate>, JsonRejection>,
) -> Response {
    let update = match body {
        Ok(Json(u)) => u,
        Err(e) => return bad_body(e),
    };
    let changes_tools = update.shared.is_some();
    match state.store.update(&id, update) {
        Ok(agent) => {
            if changes_tools {
                state
                    .sessions
                    .publish(Change::Tools(Some(agent.id.clone())));
                state.sessions.publish(Change::Resources);
            }
            Json(agent).into_response()
        }
        Err(e) => registry_error(e),
    }
}

async fn revoke(State(state): State<Arc<AgentsState>>, UrlPath(id): UrlPath<String>) -> Response {
    match state.revoke(&id) {
        Ok(()) => {
            tracing::info!(target: "hearth::agents", agent = %id, "revoked an agent");
            Json(json!({"revoked": true})).into_response()
        }
        Err(e) => registry_error(e),
    }
}

/// One SSE event.
fn event(name: &str, data: &impl serde::Serialize) -> String {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "null".into());
    format!("event: {name}\ndata: {data}\n\n")
}

/// The tab's channel: `hello`, then agents' requests and cancellations,
/// with a comment now and then so a closed tab is noticed.
async fn channel(State(state): State<Arc<AgentsState>>) -> Response {
    let (tab, rx) = state.hub.open_tab();
    tracing::info!(target: "hearth::agents", tab = %tab.id, "a Hearth tab opened its agents channel");
    let hello = event(
        "hello",
        &TabHello {
            tab: tab.id.clone(),
        },
    );
    let every = state.timing.stream_keepalive;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stream = futures::stream::unfold(
        (Some(hello), rx, tick, tab),
        |(first, mut rx, mut tick, tab)| async move {
            if let Some(hello) = first {
                return Some((Ok::<_, Infallible>(hello), (None, rx, tick, tab)));
            }
            let text = tokio::select! {
                ev = rx.recv() => match ev? {
                    TabEvent::Request(r) => event("request", &r),
                    TabEvent::Cancel(c) => event("cancel", &c),
                    TabEvent::Consent(c) => event("consent", &c),
                },
                _ = tick.tick() => ": keep-alive\n\n".to_string(),
            };
            Some((Ok(text), (None, rx, tick, tab)))
        },
    );
    let mut response = Body::from_stream(stream).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The tab is going away (it says so as it unloads).
async fn close_channel(
    State(state): State<Arc<AgentsState>>,
    UrlPath(tab): UrlPath<String>,
) -> Response {
    state.hub.close_tab(&tab);
    Json(json!({})).into_response()
}

async fn reply(
    State(state): State<Arc<AgentsState>>,
    body: Result<Json<RelayReply>, JsonRejection>,
) -> Response {
    let reply = match body {
        Ok(Json(r)) => r,
        Err(e) => return bad_body(e),
    };
    match state.hub.reply(reply) {
        Ok(()) => Json(json!({})).into_response(),
        // The agent left or the request was cancelled: nothing to do.
        Err(e @ ReplyError::Unknown(_)) => {
            error_response(StatusCode::NOT_FOUND, ApiErrorCode::NotFound, e.to_string())
        }
        Err(e @ ReplyError::OtherTab(_)) => error_response(
            StatusCode::CONFLICT,
            ApiErrorCode::InvalidRequest,
            e.to_string(),
        ),
    }
}

async fn notify(
    State(state): State<Arc<AgentsState>>,
    body: Result<Json<ChangeNotice>, JsonRejection>,
) -> Response {
    let notice = match body {
        Ok(Json(n)) => n,
        Err(e) => return bad_body(e),
    };
    if notice.tools {
        state.sessions.publish(Change::Tools(None));
    }
    if notice.resources {
        state.sessions.publish(Change::Resources);
    }
    Json(json!({})).into_response()
}
