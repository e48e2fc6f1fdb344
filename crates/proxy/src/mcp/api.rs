//! The MCP routes of `hearth serve`, all behind the network tier's guard
//! with the key, exactly like `/api/…`:
//!
//! - `POST | GET | DELETE /mcp/stdio/{name}` — the stdio bridge: each
//!   server of the local config file as a Streamable HTTP endpoint. Only
//!   that file names servers; nothing the browser sends can start a program.
//! - `GET /api/mcp/stdio` — those servers and their processes, for the
//!   Servers panel ([`StdioListing`]).
//! - `PUT | GET | DELETE /api/mcp/relay/{id}` — the CORS relay's target for
//!   server `{id}` ([`RelayRegistration`] in, [`RelayDescription`] out).
//! - `POST | GET | DELETE /mcp/relay/{id}` — the relay itself.
//!
//! Errors of these routes (not of the MCP servers behind them) are the
//! network tier's JSON errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, put};
use axum::{Json, Router};
use hearth_core::mcp::hosted::{
    RelayDescription, RelayRegistration, StdioListing, StdioServerInfo, StdioSkipped,
};
use hearth_core::web::ApiErrorCode;
use serde_json::json;

use super::relay::{RelayError, Relays};
use super::stdio::config::{ConfigError, StdioConfig, load};
use super::stdio::http::{Bridge, router as bridge_router};
use crate::net::client::ClientConfig;
use crate::net::error::error_response;
use crate::net::guard::{self, AppGuard};

/// The stdio servers and relays `hearth serve` runs.
pub struct McpState {
    bridge: Arc<Bridge>,
    config_path: PathBuf,
    problem: Option<String>,
    skipped: Vec<StdioSkipped>,
    relays: Relays,
}

impl McpState {
    /// Reads the stdio server list at `stdio_config` (a missing file means
    /// none) and starts the bridge. Must run inside a tokio runtime.
    pub fn start(stdio_config: &Path, relay_client: ClientConfig) -> Arc<McpState> {
        let (config, problem) = match load(stdio_config) {
            Ok(c) => (c, None),
            Err(ConfigError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                (empty(), None)
            }
            Err(e) => {
                tracing::warn!(target: "hearth::mcp", "no stdio MCP servers: {e}");
                (empty(), Some(e.to_string()))
            }
        };
        let skipped = config
            .problems
            .iter()
            .map(|p| StdioSkipped {
                server: p.server.clone(),
                message: p.message.clone(),
            })
            .collect();
        let bridge = Bridge::start(config);
        for s in bridge.servers() {
            tracing::info!(target: "hearth::mcp", server = %s.name(), "stdio MCP server available");
        }
        Arc::new(McpState {
            bridge,
            config_path: stdio_config.to_path_buf(),
            problem,
            skipped,
            relays: Relays::new(relay_client),
        })
    }

    /// Stops every stdio process (the server is shutting down).
    pub fn stop(&self) {
        self.bridge.stop_all();
    }

    pub fn listing(&self) -> StdioListing {
        StdioListing {
            config_path: self.config_path.display().to_string(),
            problem: self.problem.clone(),
            servers: self
                .bridge
                .servers()
                .into_iter()
                .map(|s| {
                    let status = s.status();
                    let spec = s.spec();
                    StdioServerInfo {
                        name: s.name().clone(),
                        command: spec.command.clone(),
                        args: spec.args.clone(),
                        env_keys: spec.env.keys().cloned().collect(),
                        running: status.running,
                        pid: status.pid,
                        crashes: status.crashes,
                        last_exit: status.last_exit,
                        stderr_tail: status.stderr_tail,
                    }
                })
                .collect(),
            skipped: self.skipped.clone(),
        }
    }
}

fn empty() -> StdioConfig {
    StdioConfig {
        servers: Vec::new(),
        problems: Vec::new(),
    }
}

/// The routes, each behind `guard` with the token.
pub fn router(state: Arc<McpState>, guard: Arc<AppGuard>) -> Router {
    let routes = Router::new()
        .route("/api/mcp/stdio", get(list_stdio))
        .route(
            "/api/mcp/relay/{id}",
            put(register_relay).get(describe_relay).delete(remove_relay),
        )
        .route(
            "/mcp/relay/{id}",
            axum::routing::post(forward).get(forward).delete(forward),
        )
        .route("/mcp/relay/{id}/{*rest}", any(no_such_route))
        .with_state(state.clone())
        .nest("/mcp/stdio", bridge_router(state.bridge.clone()))
        .method_not_allowed_fallback(method_not_allowed);
    guard::protect(routes, guard)
}

async fn list_stdio(State(s): State<Arc<McpState>>) -> Json<StdioListing> {
    Json(s.listing())
}

async fn register_relay(
    State(s): State<Arc<McpState>>,
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
    match s.relays.register(&id, registration).await {
        Ok(d) => Json::<RelayDescription>(d).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn describe_relay(
    State(s): State<Arc<McpState>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<RelayDescription>, RelayError> {
    s.relays.describe(&id).map(Json)
}

async fn remove_relay(State(s): State<Arc<McpState>>, UrlPath(id): UrlPath<String>) -> Response {
    Json(json!({"removed": s.relays.remove(&id)})).into_response()
}

async fn forward(
    State(s): State<Arc<McpState>>,
    UrlPath(id): UrlPath<String>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match s.relays.forward(&id, method, &headers, body).await {
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
