//! The relay's routes of `hearth serve`, all behind the API guard with the
//! key, like `/api/…`:
//!
//! - `PUT | GET | DELETE /api/mcp/relay/{id}` — the relay's target for
//!   server `{id}` ([`RelayRegistration`] in, [`RelayDescription`] out).
//! - `POST | GET | DELETE /mcp/relay/{id}` — the relay itself.
//!
//! Errors of these routes (not of the MCP servers behind them) are the
//! API's JSON errors.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, put};
use axum::{Json, Router};
use hearth_core::api::error::ApiErrorCode;
use hearth_core::mcp::hosted::{RelayDescription, RelayRegistration};
use serde_json::json;

use super::{RelayError, Relays};
use crate::api::error::error_response;
use crate::api::guard::{self, AppGuard};

/// The routes over `relays`, each behind `guard` with the token.
pub fn router(relays: Arc<Relays>, guard: Arc<AppGuard>) -> Router {
    let routes = Router::new()
        .route(
            "/api/mcp/relay/{id}",
            put(register_relay).get(describe_relay).delete(remove_relay),
        )
        .route(
            "/mcp/relay/{id}",
            axum::routing::post(forward).get(forward).delete(forward),
        )
        .route("/mcp/relay/{id}/{*rest}", any(no_such_route))
        .with_state(relays)
        .method_not_allowed_fallback(method_not_allowed);
    guard::protect(routes, guard)
}

async fn register_relay(
    State(relays): State<Arc<Relays>>,
    UrlPath(id): UrlPath<String>,
    body: Result<Json<RelayRegistration>, JsonRejection>,
) -> Response {
    let registration = match body {
        Ok(Json(r)) => r,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                ApiErrorCode::InvalidRequest,
                e.body_text(),
            );
        }
    };
    match relays.register(&id, registration).await {
        Ok(d) => Json::<RelayDescription>(d).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn describe_relay(
    State(relays): State<Arc<Relays>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<RelayDescription>, RelayError> {
    relays.describe(&id).map(Json)
}

async fn remove_relay(State(relays): State<Arc<Relays>>, UrlPath(id): UrlPath<String>) -> Response {
    Json(json!({"removed": relays.remove(&id)})).into_response()
}

async fn forward(
    State(relays): State<Arc<Relays>>,
    UrlPath(id): UrlPath<String>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match relays.forward(&id, method, &headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn no_such_route() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        ApiErrorCode::NotFound,
        "the relay forwards only to the server's registered URL; there are no paths below it"
            .into(),
    )
}

async fn method_not_allowed() -> Response {
    error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        ApiErrorCode::MethodNotAllowed,
        "this route does not take that method".into(),
    )
}
