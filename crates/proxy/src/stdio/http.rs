//! Each configured stdio server as a Streamable HTTP endpoint,
//! `/{name}` under wherever `hearth serve` mounts [`router`]. It speaks the
//! 2025-11-25 shape (initialize, `Mcp-Session-Id`, a GET stream, DELETE)
//! and passes 2026-07-28 requests through statelessly, so the app's one
//! client works with either kind of stdio server. Answers to requests come
//! as SSE streams, carrying the request's notifications first.
//!
//! This router has no access control of its own: `hearth serve` must put
//! it behind the network tier's guard (loopback peer, exact Host,
//! same-origin, token), the same one as `/api/…`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Map, Value, json};

use super::config::StdioConfig;
use super::process::{BridgeError, Forwarded, Initialized, StdioServer};

const SESSION: &str = "mcp-session-id";

/// All configured stdio servers.
pub struct Bridge {
    servers: HashMap<String, Arc<StdioServer>>,
}

impl Bridge {
    /// Must be called inside a tokio runtime: each server gets an idle
    /// reaper task.
    pub fn start(config: StdioConfig) -> Arc<Bridge> {
        for p in &config.problems {
            tracing::warn!(server = %p.server, "skipped in the stdio server list: {}", p.message);
        }
        let servers: HashMap<String, Arc<StdioServer>> = config
            .servers
            .into_iter()
            .map(|(name, spec)| (name.to_string(), StdioServer::new(name, spec)))
            .collect();
        for server in servers.values() {
            let server = server.clone();
            tokio::spawn(async move {
                let every = server.idle_timeout().min(Duration::from_secs(30));
                loop {
                    tokio::time::sleep(every).await;
                    server.reap_if_idle();
                }
            });
        }
        Arc::new(Bridge { servers })
    }

    pub fn server(&self, name: &str) -> Option<&Arc<StdioServer>> {
        self.servers.get(name)
    }

    /// Every configured server, by name.
    pub fn servers(&self) -> Vec<&Arc<StdioServer>> {
        let mut all: Vec<&Arc<StdioServer>> = self.servers.values().collect();
        all.sort_by(|a, b| a.name().cmp(b.name()));
        all
    }

    /// Stops every process (hearth is shutting down).
    pub fn stop_all(&self) {
        for s in self.servers.values() {
            s.stop("hearth is shutting down");
        }
    }
}

/// The routes: POST, GET and DELETE on `/{name}`.
pub fn router(bridge: Arc<Bridge>) -> Router {
    Router::new()
        .route(
            "/{name}",
            post(post_message).get(open_stream).delete(end_session),
        )
        .with_state(bridge)
}

fn rpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn bridge_error(e: BridgeError, id: Value) -> Response {
    let message = e.to_string();
    match e {
        BridgeError::Restarting { secs, .. } => {
            let mut r = rpc_error(StatusCode::SERVICE_UNAVAILABLE, id, -32000, message);
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        }
        BridgeError::NotRunning(_) => {
            rpc_error(StatusCode::SERVICE_UNAVAILABLE, id, -32000, message)
        }
        BridgeError::SpawnFailed { .. } => rpc_error(StatusCode::BAD_GATEWAY, id, -32000, message),
        // The spec's answer for a session the server no longer knows.
        BridgeError::UnknownSession(_) => {
            rpc_error(StatusCode::NOT_FOUND, Value::Null, -32001, message)
        }
    }
}

fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sse_headers(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

fn event(msg: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {msg}\n\n"))
}

/// Tells the process when a client leaves before its answer.
struct Abandon {
    server: Arc<StdioServer>,
    id: u64,
    answered: bool,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if !self.answered {
            self.server.abandon(self.id);
        }
    }
}

fn stream_answer(
    server: Arc<StdioServer>,
    forwarded: Forwarded,
    client_id: Value,
    session: Option<String>,
) -> Response {
    let guard = Abandon {
        server,
        id: forwarded.id,
        answered: false,
    };
    let stream = futures::stream::unfold(
        (forwarded.messages, guard, client_id, false),
        |(mut rx, mut guard, client_id, finished)| async move {
            if finished {
                return None;
            }
            let msg = rx.recv().await?;
            let answer = msg.get("method").is_none() && msg.get("id") == Some(&client_id);
            if answer {
                guard.answered = true;
            }
            Some((
                Ok::<_, Infallible>(event(&msg)),
                (rx, guard, client_id, answer),
            ))
        },
    );
    let mut response = Body::from_stream(stream).into_response();
    sse_headers(&mut response);
    if let Some(s) = session.and_then(|s| HeaderValue::from_str(&s).ok()) {
        response.headers_mut().insert(SESSION, s);
    }
    response
}

async fn post_message(
    State(bridge): State<Arc<Bridge>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(server) = bridge.server(&name).cloned() else {
        return rpc_error(
            StatusCode::NOT_FOUND,
            Value::Null,
            -32000,
            format!("no stdio server named {name:?} is configured"),
        );
    };
    let msg: Map<String, Value> = match serde_json::from_slice(&body) {
        Ok(Value::Object(m)) => m,
        Ok(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32600,
                "send one JSON-RPC message per request".into(),
            );
        }
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                format!("Parse error: {e}"),
            );
        }
    };
    let session = headers
        .get(SESSION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let id = msg.get("id").cloned();
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    match (method.as_deref(), id) {
        (Some("initialize"), Some(id)) => {
            let session = new_session_id();
            match server.initialize(&session, msg) {
                Ok(Initialized::Cached(answer)) => {
                    let mut r = (
                        StatusCode::OK,
                        [(header::CONTENT_TYPE, "application/json")],
                        answer.to_string(),
                    )
                        .into_response();
                    if let Ok(v) = HeaderValue::from_str(&session) {
                        r.headers_mut().insert(SESSION, v);
                    }
                    r
                }
                Ok(Initialized::Forwarded(f)) => stream_answer(server, f, id, Some(session)),
                Err(e) => bridge_error(e, id),
            }
        }
        (Some(_), Some(id)) => match server.request(session.as_deref(), msg) {
            Ok(f) => stream_answer(server, f, id, None),
            Err(e) => bridge_error(e, id),
        },
        (Some(_), None) => {
            if let Some(s) = &session
                && !server.has_session(s)
            {
                return bridge_error(BridgeError::UnknownSession(name), Value::Null);
            }
            match server.notify(session.as_deref(), msg) {
                Ok(()) => StatusCode::ACCEPTED.into_response(),
                Err(e) => bridge_error(e, Value::Null),
            }
        }
        (None, Some(_)) => {
            server.respond(Value::Object(msg));
            StatusCode::ACCEPTED.into_response()
        }
        (None, None) => rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32600,
            "not a JSON-RPC message".into(),
        ),
    }
}

async fn open_stream(
    State(bridge): State<Arc<Bridge>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(server) = bridge.server(&name).cloned() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let Some(session) = headers.get(SESSION).and_then(|v| v.to_str().ok()) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32000,
            "a session is needed for the stream".into(),
        );
    };
    let rx = match server.listen(session) {
        Ok(rx) => rx,
        Err(e) => return bridge_error(e, Value::Null),
    };
    let tick = tokio::time::interval(Duration::from_secs(15));
    let stream = futures::stream::unfold((rx, tick), |(mut rx, mut tick)| async move {
        tokio::select! {
            msg = rx.recv() => msg.map(|m| (Ok::<_, Infallible>(event(&m)), (rx, tick))),
            _ = tick.tick() => Some((Ok(Bytes::from_static(b": keepalive\n\n")), (rx, tick))),
        }
    });
    let mut response = Body::from_stream(stream).into_response();
    sse_headers(&mut response);
    response
}

async fn end_session(
    State(bridge): State<Arc<Bridge>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(server) = bridge.server(&name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match headers.get(SESSION).and_then(|v| v.to_str().ok()) {
        Some(s) if server.end_session(s) => StatusCode::OK.into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}
