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
//!
//! The client is split by role: `session` finds out how to talk to a
//! server (probe, `initialize`, the era) and ends the session; `exchange`
//! carries one request to its answer (retries, cancellation, the server's
//! questions); `operations` are the typed calls and the paged lists;
//! `subscription` is the stream of change notifications; `wire`, below
//! them all, builds and sends the HTTP requests and reads the messages back.

mod exchange;
mod operations;
mod session;
mod subscription;
mod wire;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Value};

use super::headers::ParamHeader;
use super::jsonrpc::RequestId;
use super::model::{
    ClientCapabilities, Implementation, LogMessageParams, ProgressParams, ServerCapabilities,
    SubscriptionFilter,
};
use super::transport::HttpTransport;
use super::version::{self, Era, ServerMemory};

pub use exchange::{
    CallOptions, Cancellation, Canceller, InputHandler, MAX_INPUT_ROUNDS, NoInput, cancellation,
};
pub use operations::{MAX_LIST_BYTES, MAX_LIST_ITEMS, MAX_PAGES, ToolListing};
pub use subscription::Subscription;
pub use wire::{AuthProvider, MAX_AUTH_ATTEMPTS, MAX_RESUMES};
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
}
