//! `/mcp/server`: the Streamable HTTP endpoint agents call.
//!
//! Each request passes, in order:
//! 1. the peer is a loopback address;
//! 2. it is no CORS preflight, and no web page's: an `Origin` other than
//!    Hearth's own, or a `Sec-Fetch-Site` other than `same-origin`, is
//!    refused, so a page can never call it through the person's browser
//!    (and no answer carries CORS headers);
//! 3. `Host` is one of the loopback `name:port` pairs `hearth serve`
//!    answers to, so a rebound name fails;
//! 4. `Authorization: Bearer` holds an agent's credential — never the
//!    app's key, which is refused here even where it is sent — with
//!    failures limited in rate;
//! 5. the agent's rate and its calls in flight are within bounds, and the
//!    body is one JSON-RPC message of at most [`MAX_BODY`] bytes.
//!
//! Then the era is chosen as the versioning page says for a dual-era
//! server (`hearth_core::mcp::server::route`) and the method served:
//! discovery, the legacy handshake, sessions and subscriptions here; tool
//! and resource requests by the tab, through the hub.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures::StreamExt;
use hearth_core::agents::AgentRecord;
use hearth_core::agents::wire::{ENDPOINT_PATH, RELAYED_METHODS, ReplyBody, codes};
use hearth_core::mcp::headers::SESSION_ID;
use hearth_core::mcp::jsonrpc::{INVALID_REQUEST, METHOD_NOT_FOUND, RequestId, RpcError};
use hearth_core::mcp::server::{
    self as protocol, Incoming, META_SUBSCRIPTION, Rejection, Route, cacheable, discover_result,
    error_message, initialize_result, modern_result, notification_message, parse_body,
    progress_token, result_message, sse_event, strip_protocol_meta,
};
use serde_json::{Value, json};

use super::hub::Relay;
use super::sessions::Change;
use super::{AgentsState, INSTRUCTIONS, InFlight, MAX_BODY, capabilities, server_info};
use crate::api::guard::TOKEN_HEADER;
use crate::api::ratelimit::retry_after_secs;

pub fn router(state: Arc<AgentsState>) -> Router {
    Router::new()
        .route(ENDPOINT_PATH, any(endpoint))
        .with_state(state)
}

/// Why a request never reached MCP. Each answers with its status and a
/// JSON-RPC error without an id.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// 403: not from this machine.
    #[error("Hearth's MCP endpoint answers only programs on this machine")]
    Peer,
    /// 403: a browser's request (a preflight, `Origin` or `Sec-Fetch-*`).
    #[error(
        "Hearth's MCP endpoint does not answer web browsers: requests from web pages are refused. Agents call it directly, with their own credential"
    )]
    Browser,
    /// 403: a Host other than the loopback address served.
    #[error("the Host {0:?} is not the address Hearth serves")]
    Host(String),
    /// 401: no credential.
    #[error(
        "this endpoint needs an agent's credential (Authorization: Bearer hearth_agent_…); connect the agent in Hearth's Settings → Agents to get one"
    )]
    NoCredential,
    /// 401: the app's own key was sent.
    #[error(
        "that is the Hearth app's own key, which never opens the MCP endpoint; connect the agent in Hearth's Settings → Agents and use the credential shown there"
    )]
    AppKey,
    /// 401: not a credential of a connected agent (or it was revoked).
    #[error(
        "this credential does not open Hearth: it is wrong, or the agent was revoked in Hearth's Settings → Agents"
    )]
    BadCredential,
    /// 429: too many requests, or too many wrong credentials.
    #[error("too many requests; try again in {0} s")]
    RateLimited(u64),
    /// 429: too many calls of this agent waiting at once.
    #[error(
        "this agent has {} calls waiting in Hearth already; wait for one to finish",
        super::MAX_IN_FLIGHT
    )]
    Busy,
    /// 413: the body is over the limit.
    #[error("the request is larger than the {} bytes Hearth accepts", MAX_BODY)]
    TooLarge,
    /// 415: not JSON.
    #[error("send the JSON-RPC message as Content-Type: application/json")]
    NotJson,
    /// 405: not POST (or GET/DELETE of a legacy session).
    #[error("this endpoint takes POST (and GET or DELETE with a 2025-11-25 session)")]
    Method,
}

impl Refused {
    fn status(&self) -> StatusCode {
        match self {
            Refused::Peer | Refused::Browser | Refused::Host(_) => StatusCode::FORBIDDEN,
            Refused::NoCredential | Refused::AppKey | Refused::BadCredential => {
                StatusCode::UNAUTHORIZED
            }
            Refused::RateLimited(_) | Refused::Busy => StatusCode::TOO_MANY_REQUESTS,
            Refused::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refused::NotJson => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Refused::Method => StatusCode::METHOD_NOT_ALLOWED,
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        // Header values must be plain ASCII: `from_static` is given only
        // such literals here (a test sends every refusal).
        let error = RpcError::new(INVALID_REQUEST, self.to_string());
        let mut res = json_response(self.status(), &error_message(None, &error));
        let h = res.headers_mut();
        match &self {
            Refused::NoCredential | Refused::AppKey | Refused::BadCredential => {
                h.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        "Bearer realm=\"hearth\", error=\"invalid_token\", error_description=\"connect the agent in Hearth: Settings, Agents\"",
                    ),
                );
            }
            Refused::RateLimited(secs) => {
                if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                    h.insert(header::RETRY_AFTER, v);
                }
            }
            Refused::Method => {
                h.insert(header::ALLOW, HeaderValue::from_static("POST, GET, DELETE"));
            }
            _ => {}
        }
        res
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut res = (status, body.to_string()).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Steps 1–4 of the module's list: who may call at all.
pub fn admit(
    state: &AgentsState,
    method: &Method,
    headers: &HeaderMap,
    authority: Option<&str>,
    peer: Option<SocketAddr>,
) -> Result<AgentRecord, Refused> {
    match peer {
        Some(addr) if addr.ip().to_canonical().is_loopback() => {}
        Some(_) | None => return Err(Refused::Peer),
    }
    let foreign_origin = headers
        .get(header::ORIGIN)
        .is_some_and(|o| !o.to_str().is_ok_and(|o| state.guard.is_app_origin(o)));
    let foreign_site = headers
        .get("sec-fetch-site")
        .is_some_and(|s| s.as_bytes() != b"same-origin");
    if method == Method::OPTIONS || foreign_origin || foreign_site {
        return Err(Refused::Browser);
    }
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or(authority)
        .unwrap_or("");
    if !state.guard.serves_host(host) {
        return Err(Refused::Host(host.chars().take(100).collect()));
    }
    let fail = |refusal: Refused| -> Refused {
        match state.limit_failure() {
            Ok(()) => refusal,
            Err(wait) => Refused::RateLimited(retry_after_secs(wait)),
        }
    };
    if let Some(key) = headers.get(TOKEN_HEADER)
        && state.guard.is_app_key(key.as_bytes())
    {
        return Err(fail(Refused::AppKey));
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    let Some(credential) = bearer else {
        return Err(fail(Refused::NoCredential));
    };
    if state.guard.is_app_key(credential.as_bytes()) {
        return Err(fail(Refused::AppKey));
    }
    state
        .store
        .authenticate(credential, super::routes::now_ms())
        .ok_or_else(|| fail(Refused::BadCredential))
}

/// Past [`MAX_BODY`], a body is still read (and thrown away) up to this
/// much, so the client reads its 413 instead of a broken connection.
const DRAIN_LIMIT: usize = 8 * MAX_BODY;

/// The body, whole if it is at most [`MAX_BODY`]; `None` when it is
/// larger (read to its end, or to [`DRAIN_LIMIT`], and dropped).
async fn read_body(body: Body) -> Option<Bytes> {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut kept: Vec<u8> = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return None };
        if let Ok(data) = frame.into_data() {
            seen += data.len();
            if seen <= MAX_BODY {
                kept.extend_from_slice(&data);
            } else if seen > DRAIN_LIMIT {
                return None;
            }
        }
    }
    (seen <= MAX_BODY).then(|| Bytes::from(kept))
}

async fn endpoint(State(state): State<Arc<AgentsState>>, req: Request) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let method = req.method().clone();
    let headers = req.headers().clone();
    let authority = req.uri().authority().map(|a| a.as_str().to_string());
    if !peer.is_some_and(|p| p.ip().to_canonical().is_loopback()) {
        return Refused::Peer.into_response();
    }
    // Read first, so every refusal below reaches the client whole.
    let body = read_body(req.into_body()).await;
    let agent = match admit(&state, &method, &headers, authority.as_deref(), peer) {
        Ok(a) => a,
        Err(refused) => {
            tracing::warn!(target: "hearth::agents", %method, reason = %refused, "refused a request to the MCP endpoint");
            // A 401 names where the resource metadata is, so a client that
            // supports MCP's authorization spec can sign in (RFC 9728 §5.1).
            let invalid = match refused {
                Refused::NoCredential => Some(false),
                Refused::AppKey | Refused::BadCredential => Some(true),
                Refused::Peer
                | Refused::Browser
                | Refused::Host(_)
                | Refused::RateLimited(_)
                | Refused::Busy
                | Refused::TooLarge
                | Refused::NotJson
                | Refused::Method => None,
            };
            let mut res = refused.into_response();
            if let Some(value) = invalid.and_then(|i| super::oauth::challenge(&state, i)) {
                res.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            return res;
        }
    };
    if let Err(wait) = state.limit_agent(&agent.id) {
        return Refused::RateLimited(retry_after_secs(wait)).into_response();
    }
    match method {
        Method::POST => {}
        Method::GET => return open_legacy_stream(&state, &agent, &headers),
        Method::DELETE => return end_session(&state, &agent, &headers),
        _ => return Refused::Method.into_response(),
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Refused::NotJson.into_response();
    }
    let Some(body) = body else {
        return Refused::TooLarge.into_response();
    };
    post(state, agent, headers, body).await
}

fn reject(r: Rejection) -> Response {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    json_response(status, &r.body())
}

/// How a request is answered: the era, and for legacy the session.
#[derive(Clone, Debug)]
enum Era {
    Modern,
    Legacy { session: String },
}

async fn post(
    state: Arc<AgentsState>,
    agent: AgentRecord,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let incoming = match parse_body(&body) {
        Ok(i) => i,
        Err(r) => return reject(r),
    };
    let header = |name: &str| header_text(&headers, name);
    let era = match protocol::route(&incoming, &header) {
        Ok(Route::Initialize { offered }) => {
            return initialize(&state, &agent, &incoming, &offered);
        }
        Ok(Route::Modern { .. }) => Era::Modern,
        Ok(Route::Legacy { session }) => {
            if state.sessions.check(&session, &agent.id).is_none() {
                // The legacy transport's word for "initialize again".
                let error = RpcError::new(
                    INVALID_REQUEST,
                    "Session not found: it ended (Hearth restarted, or the agent was revoked); initialize again",
                );
                return json_response(StatusCode::NOT_FOUND, &error_message(incoming.id(), &error));
            }
            Era::Legacy { session }
        }
        Err(r) => return reject(r),
    };
    let accepts_sse = header(header::ACCEPT.as_str())
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"));
    match incoming {
        Incoming::Notification { method, params } => {
            if let (Era::Legacy { session }, "notifications/cancelled") = (&era, method.as_str())
                && let Some(id) = params.get("requestId")
            {
                let reason = params
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("the agent cancelled the request");
                state.sessions.cancel(session, &id.to_string(), reason);
            }
            StatusCode::ACCEPTED.into_response()
        }
        Incoming::Request { id, method, params } => {
            serve(state, agent, era, id, &method, params, accepts_sse).await
        }
    }
}

fn initialize(
    state: &AgentsState,
    agent: &AgentRecord,
    incoming: &Incoming,
    offered: &str,
) -> Response {
    let Some(id) = incoming.id() else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let result = initialize_result(offered, &capabilities(), &server_info(), Some(INSTRUCTIONS));
    let version = result["protocolVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let session = match state.sessions.create(&agent.id, &version) {
        Ok(s) => s,
        Err(e) => {
            let error = RpcError::new(hearth_core::mcp::jsonrpc::INTERNAL_ERROR, e);
            return json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &error_message(Some(id), &error),
            );
        }
    };
    let mut res = json_response(StatusCode::OK, &result_message(id, result));
    if let Ok(v) = HeaderValue::from_str(&session) {
        res.headers_mut().insert(SESSION_ID, v);
    }
    res
}

/// The answer to a method this endpoint does not have: 404 with a
/// JSON-RPC body (modern; how its clients tell it from a missing server),
/// or the error in a 200 (legacy).
fn method_not_found(era: &Era, id: &RequestId, method: &str) -> Response {
    let error = RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {method}"));
    let status = match era {
        Era::Modern => StatusCode::NOT_FOUND,
        Era::Legacy { .. } => StatusCode::OK,
    };
    json_response(status, &error_message(Some(id), &error))
}

/// A result in the era's shape; lists and reads marked cacheable.
fn finish(era: &Era, method: &str, result: Value) -> Value {
    match era {
        Era::Legacy { .. } => result,
        Era::Modern => {
            let stamped = modern_result(result, &server_info());
            match method {
                "tools/list" | "resources/list" | "resources/templates/list" => {
                    cacheable(stamped, 5_000)
                }
                "resources/read" => cacheable(stamped, 0),
                _ => stamped,
            }
        }
    }
}

async fn serve(
    state: Arc<AgentsState>,
    agent: AgentRecord,
    era: Era,
    id: RequestId,
    method: &str,
    params: Value,
    accepts_sse: bool,
) -> Response {
    match (method, &era) {
        ("server/discover", Era::Modern) => {
            let result = discover_result(&capabilities(), &server_info(), Some(INSTRUCTIONS));
            return json_response(StatusCode::OK, &result_message(&id, result));
        }
        ("ping", Era::Legacy { .. }) => {
            return json_response(StatusCode::OK, &result_message(&id, json!({})));
        }
        ("subscriptions/listen", Era::Modern) => {
            return listen(&state, &agent, id, &params);
        }
        _ => {}
    }
    if !RELAYED_METHODS.contains(&method) {
        return method_not_found(&era, &id, method);
    }
    let Some(in_flight) = state.enter(&agent.id) else {
        return Refused::Busy.into_response();
    };
    let token = progress_token(&params);
    let relay = match state.hub.send(
        &agent,
        method,
        strip_protocol_meta(&params),
        token.is_some(),
    ) {
        Ok(r) => r,
        Err(e) => return json_response(StatusCode::OK, &error_message(Some(&id), &e)),
    };
    // A legacy client cancels with a notification naming the request.
    let cancelled = match &era {
        Era::Legacy { session } => state
            .sessions
            .track(session, &json!(id).to_string())
            .map(|rx| (session.clone(), rx)),
        Era::Modern => None,
    };
    let streamed = accepts_sse && matches!(method, "tools/call" | "resources/read");
    let work = Work {
        state: state.clone(),
        era,
        id,
        method: method.to_string(),
        token,
        relay,
        cancelled,
        _in_flight: in_flight,
    };
    if streamed {
        stream_answer(work)
    } else {
        let limit = if method == "resources/read" || method == "tools/call" {
            state.timing.call
        } else {
            state.timing.list
        };
        match work.answer(limit).await {
            Some(message) => json_response(StatusCode::OK, &message),
            // Cancelled by the agent: the spec wants no answer; the
            // request's HTTP exchange still needs one.
            None => StatusCode::ACCEPTED.into_response(),
        }
    }
}

/// One relayed request on its way to an answer.
struct Work {
    state: Arc<AgentsState>,
    era: Era,
    id: RequestId,
    method: String,
    token: Option<Value>,
    relay: Relay,
    cancelled: Option<(String, tokio::sync::oneshot::Receiver<String>)>,
    _in_flight: InFlight,
}

/// What the next step of a relayed request gave.
enum Step {
    /// A message for the agent (progress, or the last one).
    Message(Value, bool),
    /// Nothing to say: progress the agent did not ask for.
    Quiet,
    /// The agent cancelled (legacy): no more messages.
    Cancelled,
    /// A keep-alive moment.
    Tick,
}

impl Work {
    fn done(&self, body: ReplyBody) -> Step {
        match body {
            ReplyBody::Progress {
                progress,
                total,
                message,
            } => match &self.token {
                Some(token) => {
                    let mut params = json!({"progressToken": token, "progress": progress});
                    if let Some(t) = total {
                        params["total"] = json!(t);
                    }
                    if let Some(m) = message {
                        params["message"] = json!(m);
                    }
                    Step::Message(
                        notification_message("notifications/progress", params),
                        false,
                    )
                }
                None => Step::Quiet,
            },
            ReplyBody::Result(result) => Step::Message(
                result_message(&self.id, finish(&self.era, &self.method, result)),
                true,
            ),
            ReplyBody::Error(error) => Step::Message(error_message(Some(&self.id), &error), true),
        }
    }

    async fn step(&mut self, tick: Option<Duration>) -> Step {
        // A cancellation is the agent's `notifications/cancelled`. A
        // session that ended (its sender dropped, as revoking the agent
        // does) is not one: the call's own answer (for a revocation, the
        // hub's error) still comes through the relay and is sent.
        let cancel = async {
            match &mut self.cancelled {
                Some((_, rx)) => match rx.await {
                    Ok(reason) => reason,
                    Err(_) => std::future::pending().await,
                },
                None => std::future::pending().await,
            }
        };
        let sleep = async {
            match tick {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            body = self.relay.next() => match body {
                Some(body) => self.done(body),
                None => Step::Message(
                    error_message(Some(&self.id), &RpcError::new(codes::TAB_GONE, "the Hearth tab stopped answering")),
                    true,
                ),
            },
            reason = cancel => {
                self.cancelled = None;
                self.relay_cancel(&reason);
                Step::Cancelled
            }
            _ = sleep => Step::Tick,
        }
    }

    fn relay_cancel(&mut self, reason: &str) {
        self.relay.cancel(reason);
    }

    /// Waits for the one message a JSON answer carries (progress is
    /// dropped: a JSON answer has room for nothing else).
    async fn answer(mut self, limit: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                self.relay_cancel("Hearth stopped waiting for its tab");
                return Some(timeout(&self.id));
            }
            match self.step(Some(left)).await {
                Step::Message(m, true) => {
                    self.untrack();
                    return Some(m);
                }
                Step::Message(_, false) | Step::Quiet | Step::Tick => {}
                Step::Cancelled => {
                    self.untrack();
                    return None;
                }
            }
        }
    }

    fn untrack(&self) {
        if let Some((session, _)) = &self.cancelled {
            self.state
                .sessions
                .untrack(session, &json!(self.id).to_string());
        }
    }
}

fn timeout(id: &RequestId) -> Value {
    error_message(
        Some(id),
        &RpcError::new(
            codes::TAB_GONE,
            "Hearth's tab did not answer in time (an approval may still be waiting there); try again",
        ),
    )
}

fn sse_headers(res: &mut Response) {
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

/// Streams a relayed call's answer: a comment at once (the headers go
/// out), progress as it comes, the answer last. A comment every second
/// in between notices an agent that hung up, whose call is then
/// cancelled in the tab (closing the stream is how a 2026-07-28 agent
/// cancels).
fn stream_answer(work: Work) -> Response {
    let keepalive = work.state.timing.call_keepalive;
    let limit = work.state.timing.call;
    let deadline = tokio::time::Instant::now() + limit;
    let stream = futures::stream::unfold((Some(work), true), move |(work, first)| async move {
        let mut work = work?;
        if first {
            return Some((
                Ok::<_, Infallible>(": hearth is working\n\n".to_string()),
                (Some(work), false),
            ));
        }
        loop {
            if tokio::time::Instant::now() >= deadline {
                work.relay_cancel("Hearth stopped waiting for its tab");
                let text = sse_event(&timeout(&work.id));
                work.untrack();
                return Some((Ok(text), (None, false)));
            }
            match work.step(Some(keepalive)).await {
                Step::Message(m, last) => {
                    let text = sse_event(&m);
                    if last {
                        work.untrack();
                        return Some((Ok(text), (None, false)));
                    }
                    return Some((Ok(text), (Some(work), false)));
                }
                Step::Quiet => continue,
                Step::Tick => return Some((Ok(": waiting\n\n".to_string()), (Some(work), false))),
                Step::Cancelled => {
                    work.untrack();
                    return None;
                }
            }
        }
    });
    let mut res = Body::from_stream(stream).into_response();
    sse_headers(&mut res);
    res
}

/// `subscriptions/listen`: the change notifications the agent opted in
/// to, acknowledged first, until it hangs up or is revoked (then the
/// request is answered, which ends the subscription gracefully).
fn listen(
    state: &Arc<AgentsState>,
    agent: &AgentRecord,
    id: RequestId,
    params: &Value,
) -> Response {
    let wanted = params.get("notifications").cloned().unwrap_or(json!({}));
    let tools = wanted.get("toolsListChanged").and_then(Value::as_bool) == Some(true);
    let resources = wanted.get("resourcesListChanged").and_then(Value::as_bool) == Some(true);
    let mut honoured = serde_json::Map::new();
    if tools {
        honoured.insert("toolsListChanged".into(), true.into());
    }
    if resources {
        honoured.insert("resourcesListChanged".into(), true.into());
    }
    let sub_id = json!(id);
    let ack = notification_message(
        "notifications/subscriptions/acknowledged",
        json!({"_meta": {META_SUBSCRIPTION: sub_id}, "notifications": honoured}),
    );
    let feed = state.sessions.subscribe();
    let agent_id = agent.id.clone();
    let every = state.timing.stream_keepalive;
    let stream = futures::stream::unfold(
        (Some(sse_event(&ack)), feed, false),
        move |(first, mut feed, ended)| {
            let agent_id = agent_id.clone();
            let sub_id = sub_id.clone();
            let id = id.clone();
            async move {
                if ended {
                    return None;
                }
                if let Some(text) = first {
                    return Some((Ok::<_, Infallible>(text), (None, feed, false)));
                }
                loop {
                    let change = tokio::select! {
                        c = feed.recv() => c,
                        _ = tokio::time::sleep(every) => {
                            return Some((Ok(": keep-alive\n\n".to_string()), (None, feed, false)));
                        }
                    };
                    let method = match change {
                        Ok(Change::Tools(who))
                            if tools && who.as_ref().is_none_or(|w| *w == agent_id) =>
                        {
                            "notifications/tools/list_changed"
                        }
                        Ok(Change::Resources) if resources => {
                            "notifications/resources/list_changed"
                        }
                        Ok(Change::Revoked(who)) if who == agent_id => {
                            let end = result_message(
                                &id,
                                json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION: sub_id}}),
                            );
                            return Some((Ok(sse_event(&end)), (None, feed, true)));
                        }
                        Ok(_) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                    };
                    let note =
                        notification_message(method, json!({"_meta": {META_SUBSCRIPTION: sub_id}}));
                    return Some((Ok(sse_event(&note)), (None, feed, false)));
                }
            }
        },
    );
    let mut res = Body::from_stream(stream).into_response();
    sse_headers(&mut res);
    res
}

/// The legacy GET stream of a session: list changes, until the session
/// ends or the agent is revoked. Without a session, GET is not part of
/// 2026-07-28: 405.
fn open_legacy_stream(
    state: &Arc<AgentsState>,
    agent: &AgentRecord,
    headers: &HeaderMap,
) -> Response {
    let Some(session) = header_text(headers, SESSION_ID) else {
        return Refused::Method.into_response();
    };
    if state.sessions.check(&session, &agent.id).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let feed = state.sessions.subscribe();
    let agent_id = agent.id.clone();
    let every = state.timing.stream_keepalive;
    let stream = futures::stream::unfold(feed, move |mut feed| {
        let agent_id = agent_id.clone();
        async move {
            loop {
                let change = tokio::select! {
                    c = feed.recv() => c,
                    _ = tokio::time::sleep(every) => return Some((Ok::<_, Infallible>(": keep-alive\n\n".to_string()), feed)),
                };
                let method = match change {
                    Ok(Change::Tools(who)) if who.as_ref().is_none_or(|w| *w == agent_id) => {
                        "notifications/tools/list_changed"
                    }
                    Ok(Change::Resources) => "notifications/resources/list_changed",
                    Ok(Change::Revoked(who)) if who == agent_id => return None,
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                };
                return Some((
                    Ok(sse_event(&notification_message(method, json!({})))),
                    feed,
                ));
            }
        }
    });
    let mut res = Body::from_stream(stream.boxed()).into_response();
    sse_headers(&mut res);
    res
}

fn end_session(state: &AgentsState, agent: &AgentRecord, headers: &HeaderMap) -> Response {
    match header_text(headers, SESSION_ID) {
        Some(session) if state.sessions.end(&session, &agent.id) => StatusCode::OK.into_response(),
        Some(_) => StatusCode::NOT_FOUND.into_response(),
        None => Refused::Method.into_response(),
    }
}
