//! The MCP client: protocol logic over any [`HttpTransport`], for both eras.
//!
//! - **Modern (2026-07-28)**: no handshake; every request carries the
//!   protocol version, client info and capabilities in `_meta`, plus the
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`
//!   headers; `server/discover` describes the server; `input_required`
//!   results are answered and retried; `subscriptions/listen` carries change
//!   notifications; a broken response stream means re-issuing the request.
//! - **Legacy (2025-11-25 and earlier)**: `initialize` / `initialized`, the
//!   `Mcp-Session-Id` header, re-initialising when the session is gone
//!   (404), server-to-client requests answered over POST, the GET stream
//!   resumed with `Last-Event-ID`, and DELETE on close.
//!
//! Which era a server speaks is detected on first contact as the spec's
//! backward-compatibility section says, and kept as [`ServerMemory`].
//! The client is single-threaded (`Rc`, `RefCell`) like the browser it runs
//! in; no borrow is held across an `.await`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::{Either, LocalBoxFuture, select};
use serde_json::{Map, Value, json};

use super::error::McpError;
use super::headers::{self, ParamHeader, ParamHeaderError};
use super::jsonrpc::{
    self, HEADER_MISMATCH, Message, RequestId, RpcError, UNSUPPORTED_PROTOCOL_VERSION,
};
use super::model::{
    CallToolResult, ClientCapabilities, DiscoverResult, GetPromptResult, Implementation,
    InitializeResult, InputRequest, LogMessageParams, Page, ProgressParams, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities, SubscriptionFilter, Tool,
};
use super::oauth::{AuthError, BearerChallenge, bearer_challenge};
use super::stream::MessageReader;
use super::transport::{HttpMethod, HttpRequest, HttpResponse, HttpTransport};
use super::version::{self, Era, LEGACY_VERSIONS, ProbeOutcome, ServerMemory, Verdict};

/// How many times one request may be re-sent after a fresh authorization.
pub const MAX_AUTH_ATTEMPTS: u32 = 3;
/// How many `input_required` rounds one request may take.
pub const MAX_INPUT_ROUNDS: u32 = 8;
/// How many times a legacy stream is resumed with `Last-Event-ID`.
pub const MAX_RESUMES: u32 = 5;
/// Pages beyond this are not fetched; a server that keeps paging is broken.
pub const MAX_PAGES: usize = 1000;
/// The most items one listing (all its pages together) may hold. A
/// server with more is not listed at all: every list is kept in memory and
/// listed again on each change notification.
pub const MAX_LIST_ITEMS: usize = 10_000;
/// The most bytes of JSON the items of one listing may take, all pages
/// together (each page is also capped, at [`crate::stream::MAX_MESSAGE_BYTES`]).
pub const MAX_LIST_BYTES: usize = 16 * 1024 * 1024;
/// Error bodies are read up to this size for their JSON-RPC error.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Wait before resuming a stream when the server gave no `retry`.
const DEFAULT_RETRY_MS: u64 = 1000;

/// Answers the requests a server makes of the client: elicitation,
/// sampling and roots — embedded in `input_required` results (modern) or
/// sent as requests on a stream (legacy). The capabilities it declares are
/// exactly what the client advertises.
pub trait InputHandler {
    fn capabilities(&self) -> ClientCapabilities;
    /// The result for one request (an `ElicitResult`, `CreateMessageResult`
    /// or `ListRootsResult`), or an error to send back.
    fn fulfil<'a>(
        &'a self,
        request: &'a InputRequest,
    ) -> LocalBoxFuture<'a, Result<Value, RpcError>>;
}

/// Declares nothing and refuses everything; servers must not ask.
pub struct NoInput;

impl InputHandler for NoInput {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    fn fulfil<'a>(
        &'a self,
        request: &'a InputRequest,
    ) -> LocalBoxFuture<'a, Result<Value, RpcError>> {
        let method = request.method().to_string();
        async move {
            Err(RpcError::new(
                jsonrpc::METHOD_NOT_FOUND,
                format!("Hearth does not support {method} for this server"),
            ))
        }
        .boxed_local()
    }
}

/// Supplies access tokens and reacts to challenges. `OAuthFlow` is the
/// implementation for OAuth 2.1; an app could also hand out a fixed token.
pub trait AuthProvider {
    /// The token to send now, if any; may refresh an expiring one.
    fn access_token(&self) -> LocalBoxFuture<'_, Option<String>>;
    /// The server answered 401, or 403 with `insufficient_scope`. Obtain a
    /// token that should satisfy it, or give up with an error.
    fn on_challenge(
        &self,
        status: u16,
        challenge: Option<BearerChallenge>,
    ) -> LocalBoxFuture<'_, Result<(), AuthError>>;
}

/// Something the server said outside a response.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerEvent {
    Progress(ProgressParams),
    Log(LogMessageParams),
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    ResourceUpdated {
        uri: String,
    },
    /// The server acknowledged a `subscriptions/listen` stream.
    Subscribed(SubscriptionFilter),
    Other {
        method: String,
        params: Value,
    },
}

impl ServerEvent {
    pub fn from_notification(method: &str, params: Value) -> ServerEvent {
        match method {
            "notifications/progress" => match serde_json::from_value(params.clone()) {
                Ok(p) => ServerEvent::Progress(p),
                Err(_) => ServerEvent::Other {
                    method: method.into(),
                    params,
                },
            },
            "notifications/message" => match serde_json::from_value(params.clone()) {
                Ok(p) => ServerEvent::Log(p),
                Err(_) => ServerEvent::Other {
                    method: method.into(),
                    params,
                },
            },
            "notifications/tools/list_changed" => ServerEvent::ToolsChanged,
            "notifications/prompts/list_changed" => ServerEvent::PromptsChanged,
            "notifications/resources/list_changed" => ServerEvent::ResourcesChanged,
            "notifications/resources/updated" => ServerEvent::ResourceUpdated {
                uri: params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            },
            "notifications/subscriptions/acknowledged" => ServerEvent::Subscribed(
                params
                    .get("notifications")
                    .cloned()
                    .and_then(|n| serde_json::from_value(n).ok())
                    .unwrap_or_default(),
            ),
            _ => ServerEvent::Other {
                method: method.into(),
                params,
            },
        }
    }
}

pub type EventSink = Rc<dyn Fn(ServerEvent)>;

/// What is known about a connected server, for the Servers panel.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerInfo {
    pub era: Era,
    pub protocol_version: String,
    pub implementation: Option<Implementation>,
    pub capabilities: ServerCapabilities,
    /// Shown to the person, and offered to the model with the server's tools.
    pub instructions: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The MCP endpoint, e.g. `http://127.0.0.1:3901/mcp`.
    pub endpoint: String,
    pub client_info: Implementation,
    /// Sent on every request, e.g. an API key header the person entered.
    pub headers: Vec<(String, String)>,
    /// Extensions the app supports, declared with the capabilities, e.g.
    /// `io.modelcontextprotocol/ui` with its MIME types for MCP Apps.
    pub extensions: Map<String, Value>,
}

impl ClientConfig {
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            client_info: Implementation {
                name: "hearth".into(),
                title: Some("Hearth".into()),
                version: env!("CARGO_PKG_VERSION").into(),
                description: None,
                website_url: None,
            },
            headers: Vec::new(),
            extensions: Map::new(),
        }
    }
}

/// Ends a request early: for a modern server the response stream is closed
/// (which is the cancellation); a legacy server is also sent
/// `notifications/cancelled`.
pub struct Canceller(oneshot::Sender<String>);

pub struct Cancellation(oneshot::Receiver<String>);

pub fn cancellation() -> (Canceller, Cancellation) {
    let (tx, rx) = oneshot::channel();
    (Canceller(tx), Cancellation(rx))
}

impl Canceller {
    pub fn cancel(self, reason: impl Into<String>) {
        let _ = self.0.send(reason.into());
    }
}

#[derive(Default)]
pub struct CallOptions {
    /// Ask for progress notifications (delivered to the event sink).
    pub progress: bool,
    pub cancel: Option<Cancellation>,
}

/// Tools from `tools/list`, and those refused with the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolListing {
    pub tools: Vec<Tool>,
    /// Tools whose `x-mcp-header` annotations break the rules; the spec
    /// requires leaving them out.
    pub rejected: Vec<(String, ParamHeaderError)>,
}

#[derive(Default)]
struct State {
    memory: Option<ServerMemory>,
    session: Option<String>,
    info: Option<ServerInfo>,
    next_id: i64,
    tools_listed: bool,
    tool_headers: HashMap<String, Vec<ParamHeader>>,
}

struct Inner {
    transport: Rc<dyn HttpTransport>,
    config: ClientConfig,
    input: Rc<dyn InputHandler>,
    auth: Option<Rc<dyn AuthProvider>>,
    events: Option<EventSink>,
    state: RefCell<State>,
}

/// One MCP server. Cheap to clone; clones share the connection state.
#[derive(Clone)]
pub struct McpClient {
    inner: Rc<Inner>,
}

/// What sending one JSON-RPC request produced.
enum Exchange {
    Answer(Result<Value, RpcError>),
    /// The response stream ended without an answer (modern): re-issue.
    Lost,
    /// The legacy session is gone (404): initialise again and re-issue.
    SessionExpired,
    /// The server does not accept this protocol version.
    WrongVersion(RpcError),
}

impl McpClient {
    pub fn new(transport: Rc<dyn HttpTransport>, config: ClientConfig) -> Self {
        Self::build(transport, config, Rc::new(NoInput), None, None, None)
    }

    pub fn build(
        transport: Rc<dyn HttpTransport>,
        config: ClientConfig,
        input: Rc<dyn InputHandler>,
        auth: Option<Rc<dyn AuthProvider>>,
        events: Option<EventSink>,
        memory: Option<ServerMemory>,
    ) -> Self {
        Self {
            inner: Rc::new(Inner {
                transport,
                config,
                input,
                auth,
                events,
                state: RefCell::new(State {
                    memory,
                    next_id: 1,
                    ..State::default()
                }),
            }),
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.inner.config.endpoint
    }

    /// How to talk to this server next time; persist it with the server.
    pub fn memory(&self) -> Option<ServerMemory> {
        self.inner.state.borrow().memory.clone()
    }

    pub fn info(&self) -> Option<ServerInfo> {
        self.inner.state.borrow().info.clone()
    }

    pub fn session_id(&self) -> Option<String> {
        self.inner.state.borrow().session.clone()
    }

    fn is_connected(&self) -> bool {
        self.inner.state.borrow().info.is_some()
    }

    fn era(&self) -> Era {
        self.inner
            .state
            .borrow()
            .memory
            .as_ref()
            .map(|m| m.era)
            .unwrap_or(Era::Modern)
    }

    fn version(&self) -> String {
        self.inner
            .state
            .borrow()
            .memory
            .as_ref()
            .map(|m| m.protocol_version.clone())
            .unwrap_or_else(|| version::MODERN.into())
    }

    /// What the input handler can answer, plus the app's extensions.
    fn capabilities(&self) -> ClientCapabilities {
        let mut caps = self.inner.input.capabilities();
        if !self.inner.config.extensions.is_empty() {
            let mut ext = caps.extensions.take().unwrap_or_default();
            ext.extend(self.inner.config.extensions.clone());
            caps.extensions = Some(ext);
        }
        caps
    }

    fn next_id(&self) -> RequestId {
        let mut s = self.inner.state.borrow_mut();
        let id = s.next_id;
        s.next_id += 1;
        RequestId::Number(id)
    }

    fn emit(&self, event: ServerEvent) {
        if let Some(sink) = &self.inner.events {
            sink(event);
        }
    }

    // ---- connecting -------------------------------------------------------

    /// Finds out how to talk to the server (or uses what is remembered) and
    /// returns what it says about itself.
    pub async fn connect(&self) -> Result<ServerInfo, McpError> {
        super::url::HttpUrl::parse(self.endpoint())?;
        let remembered = self.memory();
        let result = match remembered.as_ref().map(|m| m.era) {
            Some(Era::Legacy) => {
                let v = remembered
                    .map(|m| m.protocol_version)
                    .unwrap_or_else(|| version::LEGACY.into());
                match self.initialize(&v).await {
                    // The remembered era was wrong (the server was upgraded):
                    // probe again.
                    Err(McpError::Rpc(e)) if e.is_modern_only() => {
                        self.probe(version::MODERN).await
                    }
                    other => other,
                }
            }
            Some(Era::Modern) => {
                let v = remembered
                    .map(|m| m.protocol_version)
                    .unwrap_or_else(|| version::MODERN.into());
                self.probe(&v).await
            }
            None => self.probe(version::MODERN).await,
        };
        let info = result?;
        self.inner.state.borrow_mut().info = Some(info.clone());
        Ok(info)
    }

    async fn ensure_connected(&self) -> Result<(), McpError> {
        if !self.is_connected() {
            self.connect().await?;
        }
        Ok(())
    }

    /// Sends `server/discover` as a modern request and judges the answer.
    async fn probe(&self, first_version: &str) -> Result<ServerInfo, McpError> {
        let mut requested = first_version.to_string();
        for _ in 0..3 {
            let id = self.next_id();
            let params = self.modern_params(&requested, Map::new());
            let body = jsonrpc::request(&id, "server/discover", Some(params.clone()));
            let req = self.post_request(
                Era::Modern,
                &requested,
                "server/discover",
                &params,
                &body,
                None,
            );
            let response = self.send_authorized(req).await?;
            let status = response.status;
            if status >= 500 {
                return Err(http_error(response).await);
            }
            let outcome = if (200..300).contains(&status) && is_message_body(&response) {
                match read_answer(self, response, &id).await {
                    Ok(Exchange::Answer(Ok(v))) => ProbeOutcome::Result(v),
                    Ok(Exchange::Answer(Err(e))) | Ok(Exchange::WrongVersion(e)) => {
                        ProbeOutcome::Error(e)
                    }
                    Ok(Exchange::Lost | Exchange::SessionExpired) | Err(_) => {
                        ProbeOutcome::Unreadable
                    }
                }
            } else {
                match error_body(response).await {
                    Some(e) => ProbeOutcome::Error(e),
                    None => ProbeOutcome::Unreadable,
                }
            };
            let verdict = version::judge_probe(status, &outcome, &requested);
            match verdict {
                Verdict::Modern { version } => {
                    if let ProbeOutcome::Error(e) = &outcome
                        && e.code == UNSUPPORTED_PROTOCOL_VERSION
                    {
                        // Our version is among the supported ones after all:
                        // ask again to get the description.
                        requested = version;
                        continue;
                    }
                    self.remember(Era::Modern, &version);
                    let discovered = match outcome {
                        ProbeOutcome::Result(v) => serde_json::from_value::<DiscoverResult>(v).ok(),
                        ProbeOutcome::Error(_) | ProbeOutcome::Unreadable => None,
                    };
                    return Ok(modern_info(&version, discovered));
                }
                Verdict::RetryModern { version } => requested = version,
                Verdict::Legacy { version } => return self.initialize(&version).await,
                Verdict::Incompatible { supported } => {
                    return Err(McpError::Incompatible { supported });
                }
            }
        }
        Err(McpError::Protocol(
            "the server kept refusing the protocol version it said it supports".into(),
        ))
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(&self, offered: &str) -> Result<ServerInfo, McpError> {
        self.inner.state.borrow_mut().session = None;
        let id = self.next_id();
        let params = json!({
            "protocolVersion": offered,
            "capabilities": self.capabilities(),
            "clientInfo": self.inner.config.client_info,
        });
        let body = jsonrpc::request(&id, "initialize", Some(params.clone()));
        let req = self.post_request(Era::Legacy, offered, "initialize", &params, &body, None);
        let response = self.send_authorized(req).await?;
        if !(200..300).contains(&response.status) || !is_message_body(&response) {
            if let Some(e) = match response.status {
                400..=499 => error_body(response).await,
                _ => return Err(http_error(response).await),
            } {
                return Err(McpError::Rpc(e));
            }
            return Err(McpError::Protocol(
                "the server refused to initialize".into(),
            ));
        }
        if let Some(session) = response.header(headers::SESSION_ID) {
            if !session.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
                return Err(McpError::Protocol(
                    "the session id has invalid characters".into(),
                ));
            }
            self.inner.state.borrow_mut().session = Some(session.to_string());
        }
        let result = match read_answer(self, response, &id).await? {
            Exchange::Answer(Ok(v)) => v,
            Exchange::Answer(Err(e)) | Exchange::WrongVersion(e) => return Err(McpError::Rpc(e)),
            Exchange::Lost | Exchange::SessionExpired => {
                return Err(McpError::Protocol(
                    "the server closed the stream without answering initialize".into(),
                ));
            }
        };
        let init: InitializeResult = serde_json::from_value(result)
            .map_err(|e| McpError::Malformed(format!("initialize result: {e}")))?;
        if !LEGACY_VERSIONS.contains(&init.protocol_version.as_str()) {
            return Err(McpError::Incompatible {
                supported: vec![init.protocol_version],
            });
        }
        let negotiated = init.protocol_version.clone();
        self.remember(Era::Legacy, &negotiated);
        self.notify_legacy("notifications/initialized", None)
            .await?;
        Ok(ServerInfo {
            era: Era::Legacy,
            protocol_version: negotiated,
            implementation: Some(init.server_info),
            capabilities: init.capabilities,
            instructions: init.instructions,
        })
    }

    fn remember(&self, era: Era, version: &str) {
        self.inner.state.borrow_mut().memory = Some(ServerMemory {
            era,
            protocol_version: version.into(),
        });
    }

    /// Ends the session: DELETE for a legacy server with a session. Servers
    /// may refuse (405); that is not an error.
    pub async fn close(&self) -> Result<(), McpError> {
        let session = self.inner.state.borrow_mut().session.take();
        self.inner.state.borrow_mut().info = None;
        if let (Era::Legacy, Some(session)) = (self.era(), session) {
            let mut req = HttpRequest::new(HttpMethod::Delete, self.endpoint())
                .header(headers::SESSION_ID, session)
                .header(headers::PROTOCOL_VERSION, self.version());
            req.headers
                .extend(self.inner.config.headers.iter().cloned());
            let _ = self.send_authorized(req).await?;
        }
        Ok(())
    }

    // ---- building requests ----------------------------------------------

    fn modern_params(&self, version: &str, mut params: Map<String, Value>) -> Value {
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            version.into(),
        );
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            serde_json::to_value(&self.inner.config.client_info).unwrap_or(Value::Null),
        );
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            serde_json::to_value(self.capabilities()).unwrap_or(json!({})),
        );
        params.insert("_meta".into(), Value::Object(meta));
        Value::Object(params)
    }

    fn post_request(
        &self,
        era: Era,
        version: &str,
        method: &str,
        params: &Value,
        body: &Value,
        arguments: Option<&Value>,
    ) -> HttpRequest {
        let mut req = HttpRequest::new(HttpMethod::Post, self.endpoint())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        match era {
            Era::Modern => {
                req = req
                    .header(headers::PROTOCOL_VERSION, version)
                    .header(headers::METHOD, method);
                if let Some(name) = headers::name_source(method, params) {
                    req = req.header(headers::NAME, headers::encode_value(name));
                }
                if let (Some(args), Some(name)) =
                    (arguments, params.get("name").and_then(Value::as_str))
                {
                    let state = self.inner.state.borrow();
                    if let Some(hs) = state.tool_headers.get(name) {
                        req.headers.extend(headers::param_header_values(hs, args));
                    }
                }
            }
            Era::Legacy => {
                if method != "initialize" {
                    req = req.header(headers::PROTOCOL_VERSION, version);
                }
                if let Some(session) = self.session_id() {
                    req = req.header(headers::SESSION_ID, session);
                }
            }
        }
        req.headers
            .extend(self.inner.config.headers.iter().cloned());
        req.body(serde_json::to_vec(body).unwrap_or_default())
    }

    /// Sends, adding the access token, and re-sends after the auth provider
    /// has dealt with a 401 or an insufficient-scope 403.
    async fn send_authorized(&self, request: HttpRequest) -> Result<HttpResponse, McpError> {
        let mut attempts = 0;
        loop {
            let mut req = request.clone();
            if let Some(auth) = &self.inner.auth
                && let Some(token) = auth.access_token().await
            {
                req.headers
                    .push(("Authorization".into(), format!("Bearer {token}")));
            }
            let response = self.inner.transport.send(req).await?;
            if response.status != 401 && response.status != 403 {
                return Ok(response);
            }
            let values: Vec<&str> = response
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case("www-authenticate"))
                .map(|(_, v)| v.as_str())
                .collect();
            let challenge = bearer_challenge(&values);
            let status = response.status;
            drop(response);
            let recoverable = status == 401
                || challenge
                    .as_ref()
                    .is_some_and(BearerChallenge::is_insufficient_scope);
            let refused = || {
                if status == 401 {
                    McpError::Unauthorized {
                        challenge: challenge.clone(),
                    }
                } else {
                    McpError::Forbidden {
                        challenge: challenge.clone(),
                    }
                }
            };
            let Some(auth) = self.inner.auth.as_ref().filter(|_| recoverable) else {
                return Err(refused());
            };
            attempts += 1;
            if attempts > MAX_AUTH_ATTEMPTS {
                return Err(McpError::Auth(AuthError::RetryLimit(MAX_AUTH_ATTEMPTS)));
            }
            auth.on_challenge(status, challenge.clone()).await?;
        }
    }

    async fn notify_legacy(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        let body = jsonrpc::notification(method, params.clone());
        let req = self.post_request(
            Era::Legacy,
            &self.version(),
            method,
            params.as_ref().unwrap_or(&Value::Null),
            &body,
            None,
        );
        let response = self.send_authorized(req).await?;
        match response.status {
            200..=299 => Ok(()),
            _ => Err(http_error(response).await),
        }
    }

    // ---- requests ----------------------------------------------------------

    /// Sends one request and returns its `result` (which must be complete),
    /// handling session expiry, version renegotiation, lost streams,
    /// progress and cancellation.
    pub async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: CallOptions,
    ) -> Result<Value, McpError> {
        self.ensure_connected().await?;
        let in_flight = Rc::new(RefCell::new(None));
        let work = self.run_request(method, params, options.progress, in_flight.clone());
        let value = self
            .cancellable(options.cancel, in_flight, work.boxed_local())
            .await?;
        complete(value)
    }

    /// Like [`request`](Self::request), for the methods that may answer
    /// `input_required` (2026-07-28): the server's questions go to the
    /// [`InputHandler`] and the request is retried with the answers.
    pub async fn request_with_input(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: CallOptions,
    ) -> Result<Value, McpError> {
        self.ensure_connected().await?;
        let in_flight = Rc::new(RefCell::new(None));
        let work = self.run_with_input(method, params, options.progress, in_flight.clone());
        self.cancellable(options.cancel, in_flight, work.boxed_local())
            .await
    }

    async fn cancellable<'a, T>(
        &'a self,
        cancel: Option<Cancellation>,
        in_flight: Rc<RefCell<Option<RequestId>>>,
        work: LocalBoxFuture<'a, Result<T, McpError>>,
    ) -> Result<T, McpError> {
        let Some(Cancellation(rx)) = cancel else {
            return work.await;
        };
        match select(work, rx).await {
            Either::Left((result, _)) => result,
            // The canceller was dropped without cancelling: carry on.
            Either::Right((Err(_), work)) => work.await,
            Either::Right((Ok(reason), work)) => {
                // Dropping the work closes its response stream, which is how
                // a modern server learns of the cancellation.
                drop(work);
                let id = in_flight.borrow_mut().take();
                if let (Era::Legacy, Some(id)) = (self.era(), id) {
                    let _ = self
                        .notify_legacy(
                            "notifications/cancelled",
                            Some(json!({"requestId": id, "reason": reason})),
                        )
                        .await;
                }
                Err(McpError::Cancelled)
            }
        }
    }

    async fn run_with_input(
        &self,
        method: &str,
        base: Map<String, Value>,
        progress: bool,
        in_flight: Rc<RefCell<Option<RequestId>>>,
    ) -> Result<Value, McpError> {
        let mut params = base.clone();
        for _ in 0..MAX_INPUT_ROUNDS {
            let value = self
                .run_request(method, params, progress, in_flight.clone())
                .await?;
            match result_type(&value)? {
                ResultType::Complete => return Ok(value),
                ResultType::InputRequired => {
                    let requests = value.get("inputRequests").and_then(Value::as_object);
                    let state = value.get("requestState").and_then(Value::as_str);
                    if requests.is_none() && state.is_none() {
                        return Err(McpError::Protocol(
                            "an input_required result carried neither inputRequests nor requestState"
                                .into(),
                        ));
                    }
                    let mut responses = Map::new();
                    for (key, raw) in requests.into_iter().flatten() {
                        let m = raw
                            .get("method")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let p = raw.get("params").cloned().unwrap_or(Value::Null);
                        let request = InputRequest::from_method(m, p);
                        match self.inner.input.fulfil(&request).await {
                            Ok(answer) => {
                                responses.insert(key.clone(), answer);
                            }
                            Err(e) => {
                                return Err(McpError::InputRequired(format!("{m}: {}", e.message)));
                            }
                        }
                    }
                    params = base.clone();
                    if !responses.is_empty() {
                        params.insert("inputResponses".into(), Value::Object(responses));
                    }
                    if let Some(state) = state {
                        params.insert("requestState".into(), state.into());
                    }
                }
            }
        }
        Err(McpError::InputRequired(format!(
            "the server still wanted more after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    async fn run_request(
        &self,
        method: &str,
        params: Map<String, Value>,
        progress: bool,
        in_flight: Rc<RefCell<Option<RequestId>>>,
    ) -> Result<Value, McpError> {
        let (mut lost, mut reinitialised, mut renegotiated, mut relisted) = (0, 0, 0, 0);
        loop {
            let era = self.era();
            let version = self.version();
            let id = self.next_id();
            *in_flight.borrow_mut() = Some(id.clone());
            let mut p = params.clone();
            if progress {
                let mut meta = match p.remove("_meta") {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                meta.insert("progressToken".into(), json!(id));
                p.insert("_meta".into(), Value::Object(meta));
            }
            let wire = match era {
                Era::Modern => self.modern_params(&version, p),
                Era::Legacy => Value::Object(p),
            };
            let body = jsonrpc::request(&id, method, Some(wire.clone()));
            let arguments = (method == "tools/call")
                .then(|| wire.get("arguments"))
                .flatten();
            let req = self.post_request(era, &version, method, &wire, &body, arguments);
            let response = self.send_authorized(req).await?;
            match self.exchange(response, &id).await? {
                Exchange::Answer(Ok(v)) => return Ok(v),
                Exchange::Answer(Err(e))
                    if e.code == HEADER_MISMATCH
                        && method == "tools/call"
                        && era == Era::Modern
                        && relisted == 0 =>
                {
                    // The tool's schema may have changed its x-mcp-header
                    // annotations: list again, then retry.
                    relisted += 1;
                    self.list_tools().await?;
                }
                Exchange::Answer(Err(e)) => return Err(McpError::Rpc(e)),
                Exchange::WrongVersion(e) if renegotiated == 0 => {
                    renegotiated += 1;
                    self.renegotiate(&e).await?;
                }
                Exchange::WrongVersion(e) => return Err(McpError::Rpc(e)),
                Exchange::Lost if era == Era::Modern && lost == 0 => lost += 1,
                Exchange::Lost => {
                    return Err(McpError::Protocol(
                        "the server closed the response stream without answering".into(),
                    ));
                }
                Exchange::SessionExpired if reinitialised == 0 => {
                    reinitialised += 1;
                    let info = self.initialize(&version).await?;
                    self.inner.state.borrow_mut().info = Some(info);
                }
                Exchange::SessionExpired => {
                    return Err(McpError::Protocol(
                        "the server ended the session again right after it was renewed".into(),
                    ));
                }
            }
        }
    }

    /// After `UnsupportedProtocolVersion`: switch to a version both sides
    /// speak, modern first; a legacy-only answer means initialising.
    async fn renegotiate(&self, error: &RpcError) -> Result<(), McpError> {
        let supported = error.supported_versions();
        match version::judge_probe(400, &ProbeOutcome::Error(error.clone()), &self.version()) {
            Verdict::Modern { version } | Verdict::RetryModern { version } => {
                self.remember(Era::Modern, &version);
                Ok(())
            }
            Verdict::Legacy { version } => {
                let info = self.initialize(&version).await?;
                self.inner.state.borrow_mut().info = Some(info);
                Ok(())
            }
            Verdict::Incompatible { .. } => Err(McpError::Incompatible { supported }),
        }
    }

    async fn exchange(&self, response: HttpResponse, id: &RequestId) -> Result<Exchange, McpError> {
        let status = response.status;
        match status {
            202 => Err(McpError::Protocol(
                "the server accepted the request but sent no answer".into(),
            )),
            200..=299 if is_message_body(&response) => read_answer(self, response, id).await,
            200..=299 => Err(McpError::Malformed(format!(
                "unexpected content type {:?}",
                response.media_type()
            ))),
            404 if self.era() == Era::Legacy && self.session_id().is_some() => {
                Ok(Exchange::SessionExpired)
            }
            400..=499 => {
                let body = response
                    .read_to_end(MAX_ERROR_BODY)
                    .await
                    .unwrap_or_default();
                let text = String::from_utf8_lossy(&body).into_owned();
                let error = Message::parse_all(&text).ok().and_then(|ms| {
                    ms.into_iter().find_map(|m| match m {
                        Message::Error { id, error } => Some((id, error)),
                        Message::Request { .. }
                        | Message::Notification { .. }
                        | Message::Result { .. } => None,
                    })
                });
                match error {
                    // Many legacy servers answer an unknown session (after a
                    // restart, say) with 400 and an id-less error instead of
                    // the 404 the spec asks for; treat that as expiry too.
                    Some((None, e))
                        if status == 400
                            && self.era() == Era::Legacy
                            && self.session_id().is_some()
                            && mentions_session(&e.message) =>
                    {
                        Ok(Exchange::SessionExpired)
                    }
                    Some((_, e)) if e.code == UNSUPPORTED_PROTOCOL_VERSION => {
                        Ok(Exchange::WrongVersion(e))
                    }
                    Some((_, e)) => Ok(Exchange::Answer(Err(e))),
                    None => Err(McpError::Http { status, body: text }),
                }
            }
            _ => Err(http_error(response).await),
        }
    }

    /// Answers a server-to-client request that arrived on a stream (legacy).
    async fn answer_server_request(&self, id: RequestId, method: &str, params: Value) {
        let result = match method {
            "ping" => Ok(json!({})),
            _ => {
                let request = InputRequest::from_method(method, params);
                self.inner.input.fulfil(&request).await
            }
        };
        let body = match &result {
            Ok(v) => jsonrpc::result_response(&id, v.clone()),
            Err(e) => jsonrpc::error_response(&id, e),
        };
        let req = self.post_request(Era::Legacy, &self.version(), "", &Value::Null, &body, None);
        // A failure to deliver the answer surfaces as the server's error on
        // the original request; nothing else can be done with it here.
        let _ = self.send_authorized(req).await;
    }

    /// Opens the legacy GET stream, resuming after `last_event_id` if given.
    async fn open_get_stream(&self, last_event_id: Option<&str>) -> Result<HttpResponse, McpError> {
        let mut req = HttpRequest::new(HttpMethod::Get, self.endpoint())
            .header("Accept", "text/event-stream")
            .header(headers::PROTOCOL_VERSION, self.version());
        if let Some(session) = self.session_id() {
            req = req.header(headers::SESSION_ID, session);
        }
        if let Some(last) = last_event_id {
            req = req.header(headers::LAST_EVENT_ID, last);
        }
        req.headers
            .extend(self.inner.config.headers.iter().cloned());
        self.send_authorized(req).await
    }

    // ---- typed operations ------------------------------------------------

    async fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<(Value, Option<String>), McpError> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), c.into());
        }
        let value = self.request(method, params, CallOptions::default()).await?;
        let next = value
            .get("nextCursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        Ok((value, next))
    }

    /// Every item of a paginated list, following cursors, within
    /// [`MAX_LIST_ITEMS`] and [`MAX_LIST_BYTES`] in all.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, McpError> {
        let mut items = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..MAX_PAGES {
            let (value, next) = self.list_page(method, cursor.as_deref()).await?;
            match value.get(key) {
                Some(Value::Array(list)) => {
                    bytes = bytes.saturating_add(list.iter().map(json_size).sum());
                    if items.len() + list.len() > MAX_LIST_ITEMS {
                        return Err(McpError::TooLarge(format!(
                            "{method} lists more than {MAX_LIST_ITEMS} items"
                        )));
                    }
                    if bytes > MAX_LIST_BYTES {
                        return Err(McpError::TooLarge(format!(
                            "{method} lists more than {} MB",
                            MAX_LIST_BYTES / (1024 * 1024)
                        )));
                    }
                    items.extend(list.iter().cloned())
                }
                Some(_) | None => {
                    return Err(McpError::Malformed(format!(
                        "{method} result has no \"{key}\" list"
                    )));
                }
            }
            match next {
                None => return Ok(items),
                Some(c) if seen.contains(&c) => {
                    return Err(McpError::Protocol(format!(
                        "{method} repeated the page cursor {c:?}"
                    )));
                }
                Some(c) => {
                    seen.push(c.clone());
                    cursor = Some(c);
                }
            }
        }
        Err(McpError::Protocol(format!(
            "{method} has more than {MAX_PAGES} pages"
        )))
    }

    /// One page of tools, for callers that page themselves.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<Page<Tool>, McpError> {
        let (value, next_cursor) = self.list_page("tools/list", cursor).await?;
        let tools = parse_list(&value, "tools")?;
        Ok(Page {
            items: tools,
            next_cursor,
            ttl_ms: value.get("ttlMs").and_then(Value::as_u64),
        })
    }

    /// All tools, with invalid ones set aside (see [`ToolListing`]).
    pub async fn list_tools(&self) -> Result<ToolListing, McpError> {
        let raw = self.list_all("tools/list", "tools").await?;
        let check_headers = self.era() == Era::Modern;
        let mut tools = Vec::new();
        let mut rejected = Vec::new();
        let mut tool_headers = HashMap::new();
        for item in raw {
            let tool: Tool = serde_json::from_value(item)
                .map_err(|e| McpError::Malformed(format!("a tool in tools/list: {e}")))?;
            if check_headers {
                match headers::param_headers(&tool.input_schema) {
                    Ok(hs) => {
                        if !hs.is_empty() {
                            tool_headers.insert(tool.name.clone(), hs);
                        }
                    }
                    Err(e) => {
                        rejected.push((tool.name.clone(), e));
                        continue;
                    }
                }
            }
            tools.push(tool);
        }
        {
            let mut s = self.inner.state.borrow_mut();
            s.tool_headers = tool_headers;
            s.tools_listed = true;
        }
        Ok(ToolListing { tools, rejected })
    }

    /// Calls a tool. A tool's own failure is a result with `is_error`, not
    /// an `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, McpError> {
        self.ensure_connected().await?;
        if self.era() == Era::Modern && !self.inner.state.borrow().tools_listed {
            // The Mcp-Param-* headers come from the tool's schema.
            let listing = self.list_tools().await?;
            if let Some((_, why)) = listing.rejected.iter().find(|(n, _)| n == name) {
                return Err(McpError::Protocol(format!(
                    "the tool {name} is invalid: {why}"
                )));
            }
        }
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        params.insert("arguments".into(), arguments);
        let value = self
            .request_with_input("tools/call", params, options)
            .await?;
        serde_json::from_value(value)
            .map_err(|e| McpError::Malformed(format!("tools/call result: {e}")))
    }

    pub async fn list_resources(&self) -> Result<Vec<Resource>, McpError> {
        let raw = self.list_all("resources/list", "resources").await?;
        parse_items(raw, "resources/list")
    }

    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        let raw = self
            .list_all("resources/templates/list", "resourceTemplates")
            .await?;
        parse_items(raw, "resources/templates/list")
    }

    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let mut params = Map::new();
        params.insert("uri".into(), uri.into());
        let value = self
            .request_with_input("resources/read", params, CallOptions::default())
            .await?;
        serde_json::from_value(value)
            .map_err(|e| McpError::Malformed(format!("resources/read result: {e}")))
    }

    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, McpError> {
        let raw = self.list_all("prompts/list", "prompts").await?;
        parse_items(raw, "prompts/list")
    }

    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        if !arguments.is_empty() {
            params.insert("arguments".into(), Value::Object(arguments.clone()));
        }
        let value = self
            .request_with_input("prompts/get", params, CallOptions::default())
            .await?;
        serde_json::from_value(value)
            .map_err(|e| McpError::Malformed(format!("prompts/get result: {e}")))
    }

    /// Opens the stream of change notifications: `subscriptions/listen`
    /// (modern) or the GET stream plus `resources/subscribe` (legacy).
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, McpError> {
        self.ensure_connected().await?;
        let mut sub = Subscription {
            client: self.clone(),
            filter,
            reader: None,
            listen_id: None,
            last_event_id: None,
            failures: 0,
            finished: false,
        };
        if self.era() == Era::Legacy {
            for uri in sub
                .filter
                .resource_subscriptions
                .clone()
                .unwrap_or_default()
            {
                let mut params = Map::new();
                params.insert("uri".into(), uri.into());
                self.request("resources/subscribe", params, CallOptions::default())
                    .await?;
            }
        }
        sub.open().await?;
        Ok(sub)
    }
}

/// A stream of change notifications. It reconnects by itself after an
/// abrupt close (resuming with `Last-Event-ID` on legacy servers) and ends
/// when the server closes it gracefully.
pub struct Subscription {
    client: McpClient,
    filter: SubscriptionFilter,
    reader: Option<MessageReader>,
    listen_id: Option<RequestId>,
    last_event_id: Option<String>,
    failures: u32,
    finished: bool,
}

impl Subscription {
    async fn open(&mut self) -> Result<(), McpError> {
        let c = &self.client;
        let response = match c.era() {
            Era::Modern => {
                let version = c.version();
                let id = c.next_id();
                let mut params = Map::new();
                params.insert(
                    "notifications".into(),
                    serde_json::to_value(&self.filter).unwrap_or(json!({})),
                );
                let wire = c.modern_params(&version, params);
                let body = jsonrpc::request(&id, "subscriptions/listen", Some(wire.clone()));
                let req = c.post_request(
                    Era::Modern,
                    &version,
                    "subscriptions/listen",
                    &wire,
                    &body,
                    None,
                );
                self.listen_id = Some(id);
                c.send_authorized(req).await?
            }
            Era::Legacy => {
                let response = c.open_get_stream(self.last_event_id.as_deref()).await?;
                if response.status == 404 && c.session_id().is_some() {
                    let info = c.initialize(&c.version()).await?;
                    c.inner.state.borrow_mut().info = Some(info);
                    c.open_get_stream(None).await?
                } else {
                    response
                }
            }
        };
        if !(200..300).contains(&response.status) {
            return Err(http_error(response).await);
        }
        if response.media_type() != "text/event-stream" {
            // A JSON answer to a listen request is its end (or an error).
            let mut reader = MessageReader::new(response);
            while let Some(m) = reader.next().await {
                if let Ok(Message::Error { error, .. }) = m {
                    return Err(McpError::Rpc(error));
                }
            }
            self.finished = true;
            return Ok(());
        }
        self.reader = Some(MessageReader::new(response));
        Ok(())
    }

    /// The next notification, or `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<Result<ServerEvent, McpError>> {
        loop {
            if self.finished {
                return None;
            }
            let Some(reader) = self.reader.as_mut() else {
                if let Err(e) = self.reconnect().await {
                    self.finished = true;
                    return Some(Err(e));
                }
                continue;
            };
            match reader.next().await {
                Some(Ok(Message::Notification { method, params })) => {
                    if let Some(id) = reader.last_event_id() {
                        self.last_event_id = Some(id.to_string());
                    }
                    self.failures = 0;
                    return Some(Ok(ServerEvent::from_notification(&method, params)));
                }
                Some(Ok(Message::Request { id, method, params })) => {
                    self.client.answer_server_request(id, &method, params).await;
                }
                Some(Ok(Message::Result { id, .. })) if Some(&id) == self.listen_id.as_ref() => {
                    self.finished = true;
                    return None;
                }
                Some(Ok(Message::Error { error, .. })) => {
                    self.finished = true;
                    return Some(Err(McpError::Rpc(error)));
                }
                Some(Ok(Message::Result { .. })) => {}
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    if let Some(id) = reader.last_event_id() {
                        self.last_event_id = Some(id.to_string());
                    }
                    let wait = reader.retry_ms().unwrap_or(DEFAULT_RETRY_MS);
                    self.reader = None;
                    self.failures += 1;
                    if self.failures > MAX_RESUMES {
                        self.finished = true;
                        return Some(Err(McpError::Protocol(
                            "the notification stream keeps breaking".into(),
                        )));
                    }
                    self.client.inner.transport.sleep(wait).await;
                }
            }
        }
    }

    async fn reconnect(&mut self) -> Result<(), McpError> {
        self.open().await
    }

    /// Stops listening; dropping the subscription does the same.
    pub fn close(self) {}
}

fn mentions_session(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("session") || m.contains("not initialized")
}

enum ResultType {
    Complete,
    InputRequired,
}

fn result_type(value: &Value) -> Result<ResultType, McpError> {
    // Servers before 2026-07-28 send no resultType: that means complete.
    match value.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => Ok(ResultType::Complete),
        Some("input_required") => Ok(ResultType::InputRequired),
        Some(other) => Err(McpError::Protocol(format!("unknown resultType {other:?}"))),
    }
}

fn complete(value: Value) -> Result<Value, McpError> {
    match result_type(&value)? {
        ResultType::Complete => Ok(value),
        ResultType::InputRequired => Err(McpError::Protocol(
            "input_required is not allowed for this request".into(),
        )),
    }
}

/// About how many bytes `value` takes as JSON, counted without writing it.
fn json_size(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|v| json_size(v) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
        }
    }
}

fn parse_list<T: serde::de::DeserializeOwned>(
    value: &Value,
    key: &str,
) -> Result<Vec<T>, McpError> {
    match value.get(key) {
        Some(Value::Array(list)) => parse_items(list.clone(), key),
        Some(_) | None => Err(McpError::Malformed(format!(
            "the result has no \"{key}\" list"
        ))),
    }
}

fn parse_items<T: serde::de::DeserializeOwned>(
    raw: Vec<Value>,
    what: &str,
) -> Result<Vec<T>, McpError> {
    raw.into_iter()
        .map(|v| {
            serde_json::from_value(v)
                .map_err(|e| McpError::Malformed(format!("an item of {what}: {e}")))
        })
        .collect()
}

fn modern_info(version: &str, discovered: Option<DiscoverResult>) -> ServerInfo {
    match discovered {
        Some(d) => ServerInfo {
            era: Era::Modern,
            protocol_version: version.into(),
            implementation: d
                .meta
                .as_ref()
                .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
                .cloned()
                .and_then(|v| serde_json::from_value(v).ok()),
            capabilities: d.capabilities,
            instructions: d.instructions,
        },
        None => ServerInfo {
            era: Era::Modern,
            protocol_version: version.into(),
            implementation: None,
            capabilities: ServerCapabilities::default(),
            instructions: None,
        },
    }
}

fn is_message_body(response: &HttpResponse) -> bool {
    matches!(
        response.media_type().as_str(),
        "application/json" | "text/event-stream"
    )
}

async fn http_error(response: HttpResponse) -> McpError {
    let status = response.status;
    let body = response
        .read_to_end(MAX_ERROR_BODY)
        .await
        .unwrap_or_default();
    McpError::Http {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The JSON-RPC error in an error response's body, if there is one.
async fn error_body(response: HttpResponse) -> Option<RpcError> {
    let body = response.read_to_end(MAX_ERROR_BODY).await.ok()?;
    let text = String::from_utf8_lossy(&body);
    Message::parse_all(&text)
        .ok()?
        .into_iter()
        .find_map(|m| match m {
            Message::Error { error, .. } => Some(error),
            Message::Request { .. } | Message::Notification { .. } | Message::Result { .. } => None,
        })
}

/// Reads a response body until the answer to `id`, dealing with whatever
/// else arrives first; resumes a broken legacy stream with `Last-Event-ID`.
async fn read_answer(
    client: &McpClient,
    response: HttpResponse,
    id: &RequestId,
) -> Result<Exchange, McpError> {
    let mut reader = MessageReader::new(response);
    let mut last_event_id: Option<String> = None;
    let mut resumes = 0;
    let mut malformed: Option<McpError> = None;
    loop {
        match reader.next().await {
            Some(Ok(message)) => match message {
                Message::Result { id: rid, result } if &rid == id => {
                    return Ok(Exchange::Answer(Ok(result)));
                }
                Message::Error {
                    id: Some(rid),
                    error,
                } if &rid == id => {
                    return Ok(Exchange::Answer(Err(error)));
                }
                Message::Error { id: None, error } => return Ok(Exchange::Answer(Err(error))),
                Message::Notification { method, params } => {
                    client.emit(ServerEvent::from_notification(&method, params));
                }
                Message::Request {
                    id: sid,
                    method,
                    params,
                } => client.answer_server_request(sid, &method, params).await,
                // An answer to some earlier, abandoned request.
                Message::Result { .. } | Message::Error { .. } => {}
            },
            Some(Err(e)) => {
                malformed.get_or_insert(e);
            }
            None => {
                if let Some(last) = reader.last_event_id() {
                    last_event_id = Some(last.to_string());
                }
                let resumable =
                    client.era() == Era::Legacy && reader.is_sse() && resumes < MAX_RESUMES;
                if let (true, Some(last)) = (resumable, last_event_id.clone()) {
                    resumes += 1;
                    let wait = reader.retry_ms().unwrap_or(DEFAULT_RETRY_MS);
                    client.inner.transport.sleep(wait).await;
                    let resumed = client.open_get_stream(Some(&last)).await?;
                    if resumed.status == 200 && resumed.media_type() == "text/event-stream" {
                        reader = MessageReader::new(resumed);
                        continue;
                    }
                }
                if let Some(e) = malformed {
                    return Err(e);
                }
                return Ok(Exchange::Lost);
            }
        }
    }
}
