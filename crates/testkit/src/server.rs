//! The fake model server: one axum router speaking both protocols, with
//! CORS so the app in a browser can call it, and a record of what it was
//! sent so tests can check the requests too.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::script::{Reply, Script, Seen};
use crate::wire::{self, Flavor, RenderInput};

/// A request the server received.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names lowercased; credential values are replaced.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    /// The turn that answered, by name or index.
    pub turn: Option<String>,
}

struct Inner {
    script: Script,
    uses: Vec<u32>,
    log: Vec<RecordedRequest>,
    serial: u64,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Inner> {
    // A panicking handler must not wedge every later test request.
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// The router, for tests that prefer `oneshot` to a socket.
pub fn router(script: Script) -> Router {
    let uses = vec![0; script.turns.len()];
    let state: Shared = Arc::new(Mutex::new(Inner {
        script,
        uses,
        log: Vec::new(),
        serial: 0,
    }));
    Router::new()
        .route("/v1/chat/completions", post(openai_chat))
        .route("/chat/completions", post(openai_chat))
        .route("/v1/messages", post(anthropic_chat))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .route("/_fake/requests", get(recorded))
        .route("/_fake/reset", post(reset))
        .fallback(unknown)
        .layer(middleware::from_fn(cors))
        .with_state(state)
}

/// Lets a page on any origin call the server, as local model servers with
/// CORS on do; preflights are answered here.
async fn cors(request: Request, next: Next) -> Response {
    let asked = request
        .headers()
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned();
    let mut response = if request.method() == Method::OPTIONS {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    let h = response.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        asked.unwrap_or(HeaderValue::from_static(
            "authorization, content-type, accept, x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access",
        )),
    );
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("retry-after, retry-after-ms, request-id"),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

fn flavor_of(headers: &HeaderMap) -> Flavor {
    if headers.contains_key("anthropic-version") || headers.contains_key("x-api-key") {
        Flavor::Anthropic
    } else {
        Flavor::OpenAi
    }
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(k, v)| {
            let name = k.as_str().to_ascii_lowercase();
            let value = if name == "authorization" || name == "x-api-key" {
                "<redacted>".to_string()
            } else {
                v.to_str().unwrap_or("<binary>").to_string()
            };
            (name, value)
        })
        .collect()
}

fn json_response(status: u16, body: Value, retry_after: Option<&str>) -> Response {
    let mut r = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Some(v) = retry_after.and_then(|v| HeaderValue::from_str(v).ok()) {
        r.headers_mut().insert(header::RETRY_AFTER, v);
    }
    r
}

async fn models(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let flavor = flavor_of(&headers);
    let inner = lock(&state);
    if let Some(denied) = auth_failure(&inner.script, flavor, &headers) {
        return denied;
    }
    let models = if inner.script.models.is_empty() {
        vec!["hearth-fake".to_string()]
    } else {
        inner.script.models.clone()
    };
    json_response(200, wire::models_body(flavor, &models), None)
}

async fn recorded(State(state): State<Shared>) -> Response {
    let log = lock(&state).log.clone();
    json_response(200, json!(log), None)
}

async fn reset(State(state): State<Shared>) -> Response {
    let mut inner = lock(&state);
    inner.log.clear();
    inner.uses.iter_mut().for_each(|u| *u = 0);
    StatusCode::NO_CONTENT.into_response()
}

async fn unknown(method: Method, uri: axum::http::Uri) -> Response {
    json_response(
        404,
        json!({"error": format!("Unexpected endpoint or method. ({method} {})", uri.path())}),
        None,
    )
}

fn auth_failure(script: &Script, flavor: Flavor, headers: &HeaderMap) -> Option<Response> {
    let want = script.api_key.as_deref()?;
    let given = match flavor {
        Flavor::OpenAi => headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ")),
        Flavor::Anthropic => headers.get("x-api-key").and_then(|v| v.to_str().ok()),
    };
    if given == Some(want) {
        return None;
    }
    let (status, body) = wire::error_response(flavor, crate::script::Failure::Auth, "", 0);
    Some(json_response(status, body, None))
}

async fn openai_chat(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    chat(state, Flavor::OpenAi, "/v1/chat/completions", headers, body).await
}

async fn anthropic_chat(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    chat(state, Flavor::Anthropic, "/v1/messages", headers, body).await
}

fn invalid(flavor: Flavor, message: &str) -> Response {
    let body = match flavor {
        Flavor::OpenAi => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
        Flavor::Anthropic => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
    };
    json_response(400, body, None)
}

async fn chat(
    state: Shared,
    flavor: Flavor,
    path: &str,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let body: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => return invalid(flavor, &format!("the body is not valid JSON: {e}")),
    };
    let mut record = RecordedRequest {
        method: "POST".into(),
        path: path.into(),
        headers: header_map(&headers),
        body: body.clone(),
        turn: None,
    };
    let seen = match flavor {
        Flavor::OpenAi => wire::seen_openai(&body),
        Flavor::Anthropic => wire::seen_anthropic(&body),
    };
    let mut inner = lock(&state);
    inner.serial += 1;
    let serial = inner.serial;

    // The checks the real services make before anything else.
    if flavor == Flavor::Anthropic {
        let problem = if !headers.contains_key("anthropic-version") {
            Some(invalid(flavor, "anthropic-version: header is required"))
        } else if headers.contains_key(header::ORIGIN)
            && headers
                .get("anthropic-dangerous-direct-browser-access")
                .and_then(|v| v.to_str().ok())
                != Some("true")
        {
            Some(json_response(
                401,
                json!({"type": "error", "error": {"type": "authentication_error",
                    "message": "CORS requests must set 'anthropic-dangerous-direct-browser-access' header"}}),
                None,
            ))
        } else if body.get("max_tokens").and_then(Value::as_u64).is_none() {
            Some(invalid(flavor, "max_tokens: Field required"))
        } else {
            None
        };
        if let Some(r) = problem {
            inner.log.push(record);
            return r;
        }
    }
    if let Some(denied) = auth_failure(&inner.script, flavor, &headers) {
        inner.log.push(record);
        return denied;
    }
    if !inner.script.models.is_empty() && !inner.script.models.contains(&seen.model) {
        inner.log.push(record);
        let (status, body) = wire::error_response(
            flavor,
            crate::script::Failure::ModelNotFound,
            &seen.model,
            0,
        );
        return json_response(status, body, None);
    }

    let mut chosen: Option<(String, Reply)> = None;
    for i in 0..inner.script.turns.len() {
        let turn = &inner.script.turns[i];
        let available = turn.times.is_none_or(|t| inner.uses[i] < t);
        if available && turn.when.matches(&seen) {
            let label = turn.name.clone().unwrap_or_else(|| format!("turn {i}"));
            chosen = Some((label, wire::fill_arguments(turn.reply.clone(), &seen)));
            inner.uses[i] += 1;
            break;
        }
    }
    let (label, reply) = chosen.unwrap_or_else(|| {
        let reply = inner.script.fallback.clone().unwrap_or_else(|| Reply {
            text: Some(format!("No scripted reply matched: {}", seen.last_user)),
            ..Reply::default()
        });
        ("fallback".to_string(), reply)
    });
    record.turn = Some(label);
    inner.log.push(record);
    drop(inner);

    let prompt_tokens =
        hearth_core::assistant::tokens::estimate_tokens(&String::from_utf8_lossy(&raw)) as u64;
    if let (Some(failure), None) = (reply.error, reply.error_after_events) {
        let (status, body) = wire::error_response(flavor, failure, &seen.model, prompt_tokens);
        return json_response(status, body, reply.retry_after.as_deref());
    }
    let input = RenderInput {
        reply: &reply,
        seen: &seen,
        serial,
        created: 1_730_000_000 + serial,
        prompt_tokens,
        include_usage: body["stream_options"]["include_usage"] == json!(true),
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    if !streaming {
        return match flavor {
            Flavor::OpenAi => json_response(200, wire::openai_completion(&input), None),
            Flavor::Anthropic => json_response(200, anthropic_message(&input), None),
        };
    }
    let frames = match flavor {
        Flavor::OpenAi => wire::render_openai(&input),
        Flavor::Anthropic => wire::render_anthropic(&input),
    };
    let out = shape_stream(frames, &reply, flavor, &seen);
    sse(out, reply.delay_ms.unwrap_or(0))
}

/// Applies the script's mishaps to a well-formed stream.
fn shape_stream(frames: wire::Frames, reply: &Reply, flavor: Flavor, seen: &Seen) -> Vec<String> {
    let mut body = frames.body;
    if reply.malformed {
        body.insert(
            1.min(body.len()),
            "data: {\"choices\": [{\"delta\": {\"content\": \"oops\"}\n\n".into(),
        );
    }
    if let (Some(n), Some(failure)) = (reply.error_after_events, reply.error) {
        body.truncate(n);
        body.push(wire::midstream_error(flavor, failure, &seen.model));
        return body;
    }
    if let Some(n) = reply.truncate_after_events {
        let cut = body.get(n).map(|next| {
            let half: String = next.chars().take(next.chars().count() / 2).collect();
            half
        });
        body.truncate(n);
        body.extend(cut);
        return body;
    }
    body.extend(frames.end);
    body
}

fn sse(frames: Vec<String>, delay_ms: u64) -> Response {
    let stream =
        futures::stream::iter(frames.into_iter().enumerate()).then(move |(i, frame)| async move {
            if i > 0 && delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            }
            Ok::<Bytes, std::io::Error>(Bytes::from(frame))
        });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn anthropic_message(input: &RenderInput<'_>) -> Value {
    let text = wire::reply_text(input.reply, input.seen).unwrap_or_default();
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for (i, c) in input.reply.tool_calls.iter().enumerate() {
        let id =
            c.id.clone()
                .unwrap_or_else(|| format!("toolu_fake_{}_{i}", input.serial));
        content.push(json!({"type": "tool_use", "id": id, "name": c.name, "input": c.arguments}));
    }
    json!({
        "id": format!("msg_fake_{}", input.serial), "type": "message", "role": "assistant",
        "model": input.seen.model, "content": content,
        "stop_reason": if input.reply.tool_calls.is_empty() { "end_turn" } else { "tool_use" },
        "stop_sequence": null,
        "usage": {"input_tokens": input.prompt_tokens, "output_tokens": 1}
    })
}

/// A running fake model server.
pub struct FakeModel {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// Starts on 127.0.0.1 with a free port.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        Self::start_on(script, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    pub async fn start_on(script: Script, addr: SocketAddr) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let app = router(script);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, the Anthropic-style base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, the OpenAI-compatible base URL.
    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Stops the server and waits for it.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
