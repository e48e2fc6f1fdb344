//! The session: finding out how to talk to a server (the modern probe,
//! the legacy `initialize`, the era remembered or detected), switching
//! versions when the server asks, and ending the session.

use serde_json::{Map, json};

use crate::error::McpError;
use crate::headers;
use crate::jsonrpc::{self, RpcError, UNSUPPORTED_PROTOCOL_VERSION};
use crate::model::{DiscoverResult, InitializeResult, ServerCapabilities};
use crate::transport::{HttpMethod, HttpRequest};
use crate::version::{self, Era, LEGACY_VERSIONS, ProbeOutcome, ServerMemory, Verdict};

use super::wire::{Exchange, error_body, http_error, is_message_body, read_answer};
use super::{McpClient, ServerInfo};

impl McpClient {
    /// Finds out how to talk to the server (or uses what is remembered) and
    /// returns what it says about itself.
    pub async fn connect(&self) -> Result<ServerInfo, McpError> {
        crate::url::HttpUrl::parse(self.endpoint())?;
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

    pub(super) async fn ensure_connected(&self) -> Result<(), McpError> {
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
    pub(super) async fn initialize(&self, offered: &str) -> Result<ServerInfo, McpError> {
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

    /// After `UnsupportedProtocolVersion`: switch to a version both sides
    /// speak, modern first; a legacy-only answer means initialising.
    pub(super) async fn renegotiate(&self, error: &RpcError) -> Result<(), McpError> {
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
