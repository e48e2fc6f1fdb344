//! `hearth mcp serve --stdio`: Hearth's MCP endpoint for agents that
//! start a command (Claude Desktop, goose, Codex). It reads one JSON-RPC
//! message per line from stdin and makes each an HTTP request to
//! `hearth serve`'s `/mcp/server`, with the agent's credential from the
//! environment, and writes every message that comes back as one line on
//! stdout. It holds no state of the protocol's but what the transport
//! needs:
//!
//! - a 2026-07-28 request gets the headers its `_meta` and method name
//!   (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`);
//! - a legacy `initialize` opens a session whose id goes on every later
//!   request, with the agreed version; the session's notification stream
//!   is read once the client says `notifications/initialized`; closing
//!   stdin ends the session;
//! - `notifications/cancelled` closes the named request's HTTP exchange
//!   (how 2026-07-28 cancels), and is passed on for a legacy session.
//!
//! Nothing but MCP messages is written to stdout; what goes wrong is said
//! on stderr and, for a request, as its JSON-RPC error.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use hearth_core::mcp::headers::{
    METHOD, NAME, PROTOCOL_VERSION, SESSION_ID, encode_value, name_source,
};
use hearth_core::mcp::jsonrpc::{INTERNAL_ERROR, RequestId, RpcError};
use hearth_core::mcp::server::{META_VERSION, error_message};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::task::AbortHandle;

/// What the bridge knows of the agent's connection.
#[derive(Default)]
struct Shared {
    /// The legacy session and its agreed version.
    session: Option<(String, String)>,
    /// Requests in flight, by their id as JSON text.
    in_flight: HashMap<String, AbortHandle>,
}

struct Bridge {
    url: String,
    credential: String,
    client: reqwest::Client,
    shared: Mutex<Shared>,
    out: tokio::sync::Mutex<tokio::io::Stdout>,
}

impl Bridge {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn write(&self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        let mut out = self.out.lock().await;
        if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
            // Nobody reads stdout any more: the agent is gone.
            std::process::exit(0);
        }
    }

    fn post(&self, message: &Value) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Authorization", format!("Bearer {}", self.credential))
            .body(message.to_string());
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let modern = params
            .get("_meta")
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str);
        if let Some(version) = modern {
            req = req.header(PROTOCOL_VERSION, version).header(METHOD, method);
            if let Some(name) = name_source(method, &params) {
                req = req.header(NAME, encode_value(name));
            }
        } else if method != "initialize"
            && let Some((session, version)) = self.lock().session.clone()
        {
            req = req
                .header(SESSION_ID, session)
                .header(PROTOCOL_VERSION, version);
        }
        req
    }

    /// Sends one request and writes what comes back; errors of the
    /// transport become the request's JSON-RPC error.
    async fn request(self: Arc<Self>, id: RequestId, message: Value) {
        let initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
        let fail = |text: String| error_message(Some(&id), &RpcError::new(INTERNAL_ERROR, text));
        let response = match self.post(&message).send().await {
            Ok(r) => r,
            Err(e) => {
                self.write(&fail(format!(
                    "cannot reach Hearth at {} ({e}); is `hearth serve` running?",
                    self.url
                )))
                .await;
                return;
            }
        };
        if initialize
            && response.status().is_success()
            && let Some(session) = response
                .headers()
                .get(SESSION_ID)
                .and_then(|v| v.to_str().ok())
        {
            // The version is read from the answer below.
            self.lock().session = Some((session.to_string(), String::new()));
        }
        let status = response.status();
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if sse {
            let mut parser = hearth_base::sse::SseParser::new();
            let mut body = response.bytes_stream();
            while let Some(chunk) = body.next().await {
                let Ok(chunk) = chunk else { break };
                let Ok(events) = parser.feed(&chunk) else {
                    break;
                };
                for event in events {
                    if let Ok(v) = serde_json::from_str::<Value>(&event.data) {
                        self.write(&v).await;
                    }
                }
            }
        } else {
            let text = response.text().await.unwrap_or_default();
            match serde_json::from_str::<Value>(&text) {
                Ok(mut v) if v.get("result").is_some() || v.get("error").is_some() => {
                    if v.get("id").is_none_or(Value::is_null) {
                        v["id"] = serde_json::json!(id);
                    }
                    if initialize
                        && let Some(version) = v["result"]["protocolVersion"].as_str()
                        && let Some((_, agreed)) = self.lock().session.as_mut()
                    {
                        *agreed = version.to_string();
                    }
                    self.write(&v).await;
                }
                _ if status == reqwest::StatusCode::ACCEPTED => {}
                _ => {
                    self.write(&fail(format!(
                        "Hearth answered HTTP {status}: {}",
                        text.trim()
                    )))
                    .await
                }
            }
        }
        self.lock()
            .in_flight
            .remove(&serde_json::json!(id).to_string());
    }

    /// Sends a notification; only a legacy cancellation also stops the
    /// request here.
    async fn notify(self: Arc<Self>, message: Value) {
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        if method == "notifications/cancelled"
            && let Some(id) = message.get("params").and_then(|p| p.get("requestId"))
            && let Some(task) = self.lock().in_flight.remove(&id.to_string())
        {
            task.abort();
        }
        let legacy = self.lock().session.is_some();
        if !legacy {
            // 2026-07-28 over HTTP has no client notifications: closing
            // the request's exchange was the cancellation.
            return;
        }
        let _ = self.post(&message).send().await;
        if method == "notifications/initialized" {
            tokio::spawn(self.clone().listen_legacy());
        }
    }

    /// The legacy session's GET stream: its notifications go to stdout.
    async fn listen_legacy(self: Arc<Self>) {
        let Some((session, version)) = self.lock().session.clone() else {
            return;
        };
        let Ok(response) = self
            .client
            .get(&self.url)
            .header("Accept", "text/event-stream")
            .header("Authorization", format!("Bearer {}", self.credential))
            .header(SESSION_ID, session)
            .header(PROTOCOL_VERSION, version)
            .send()
            .await
        else {
            return;
        };
        if !response.status().is_success() {
            return;
        }
        let mut parser = hearth_base::sse::SseParser::new();
        let mut body = response.bytes_stream();
        while let Some(Ok(chunk)) = body.next().await {
            let Ok(events) = parser.feed(&chunk) else {
                break;
            };
            for event in events {
                if let Ok(v) = serde_json::from_str::<Value>(&event.data) {
                    self.write(&v).await;
                }
            }
        }
    }

    async fn end(&self) {
        let session = self.lock().session.take();
        if let Some((session, version)) = session {
            let _ = self
                .client
                .delete(&self.url)
                .header("Authorization", format!("Bearer {}", self.credential))
                .header(SESSION_ID, session)
                .header(PROTOCOL_VERSION, version)
                .timeout(Duration::from_secs(2))
                .send()
                .await;
        }
    }
}

/// Runs the bridge until stdin closes.
pub fn run(url: String, key_env: &str) -> ExitCode {
    let credential = match std::env::var(key_env) {
        Ok(k) if !k.trim().is_empty() => k.trim().to_string(),
        _ => {
            eprintln!(
                "error: set {key_env} to the agent's credential from Hearth's Settings → Agents (the snippet there sets it for you)"
            );
            return ExitCode::FAILURE;
        }
    };
    super::transport::install_crypto();
    let client = match reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("hearth-stdio-bridge/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot start the HTTP client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(rt) = crate::cli_runtime() else {
        return ExitCode::FAILURE;
    };
    let bridge = Arc::new(Bridge {
        url,
        credential,
        client,
        shared: Mutex::new(Shared::default()),
        out: tokio::sync::Mutex::new(tokio::io::stdout()),
    });
    rt.block_on(async move {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            let message: Value = match serde_json::from_str(&line) {
                Ok(v) => v,
                Err(e) => {
                    bridge
                        .write(&error_message(
                            None,
                            &RpcError::new(
                                hearth_core::mcp::jsonrpc::PARSE_ERROR,
                                format!("Parse error: {e}"),
                            ),
                        ))
                        .await;
                    continue;
                }
            };
            let id = match message.get("id") {
                Some(Value::Number(n)) => n.as_i64().map(RequestId::Number),
                Some(Value::String(s)) => Some(RequestId::String(s.clone())),
                _ => None,
            };
            match (id, message.get("method").is_some()) {
                (Some(id), true) => {
                    let key = serde_json::json!(id).to_string();
                    let task = tokio::spawn(bridge.clone().request(id, message));
                    bridge.lock().in_flight.insert(key, task.abort_handle());
                }
                (None, true) => {
                    bridge.clone().notify(message).await;
                }
                // Responses: Hearth asks nothing of its clients.
                (_, false) => {}
            }
        }
        bridge.end().await;
    });
    ExitCode::SUCCESS
}
