//! The stdio bridge's routes of `hearth serve`, all behind the API guard
//! with the key, exactly like `/api/…`:
//!
//! - `POST | GET | DELETE /mcp/stdio/{name}` — the stdio bridge: each
//!   server of the local config file as a Streamable HTTP endpoint. Only
//!   that file names servers; nothing the browser sends can start a program.
//! - `GET /api/mcp/stdio` — those servers and their processes, for the
//!   Servers panel ([`StdioListing`]).
//!
//! Errors of these routes (not of the MCP servers behind them) are the
//! API's JSON errors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use hearth_core::api::error::ApiErrorCode;
use hearth_core::mcp::hosted::{StdioListing, StdioServerInfo, StdioSkipped};

use super::config::{ConfigError, StdioConfig, load};
use super::http::{Bridge, router as bridge_router};
use crate::api::error::error_response;
use crate::api::guard::{self, AppGuard};

/// The stdio servers `hearth serve` runs.
pub struct StdioState {
    bridge: Arc<Bridge>,
    config_path: PathBuf,
    problem: Option<String>,
    skipped: Vec<StdioSkipped>,
}

impl StdioState {
    /// Reads the stdio server list at `stdio_config` (a missing file means
    /// none) and starts the bridge. Must run inside a tokio runtime.
    pub fn start(stdio_config: &Path) -> Arc<StdioState> {
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
        Arc::new(StdioState {
            bridge,
            config_path: stdio_config.to_path_buf(),
            problem,
            skipped,
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
pub fn router(state: Arc<StdioState>, guard: Arc<AppGuard>) -> Router {
    let routes = Router::new()
        .route("/api/mcp/stdio", get(list_stdio))
        .with_state(state.clone())
        .nest("/mcp/stdio", bridge_router(state.bridge.clone()))
        .method_not_allowed_fallback(method_not_allowed);
    guard::protect(routes, guard)
}

async fn list_stdio(State(s): State<Arc<StdioState>>) -> Json<StdioListing> {
    Json(s.listing())
}

async fn method_not_allowed() -> Response {
    error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        ApiErrorCode::MethodNotAllowed,
        "this route does not take that method".into(),
    )
}
