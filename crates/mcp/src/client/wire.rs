//! Below the rest of the client: building one HTTP request (the `_meta`
//! and headers of each era), sending it with the access token and
//! re-sending after a challenge, and reading the messages of a response
//! until the answer, resuming a broken legacy stream.

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};

use crate::error::McpError;
use crate::headers;
use crate::jsonrpc::{self, Message, RequestId, RpcError};
use crate::oauth::{AuthError, BearerChallenge, bearer_challenge};
use crate::stream::MessageReader;
use crate::transport::{HttpMethod, HttpRequest, HttpResponse};
use crate::version::Era;

use super::{McpClient, ServerEvent};

/// How many times one request may be re-sent after a fresh authorization.
pub const MAX_AUTH_ATTEMPTS: u32 = 3;
/// How many times a legacy stream is resumed with `Last-Event-ID`.
pub const MAX_RESUMES: u32 = 5;
/// Error bodies are read up to this size for their JSON-RPC error.
pub(super) const MAX_ERROR_BODY: usize = 64 * 1024;
/// Wait before resuming a stream when the server gave no `retry`.
pub(super) const DEFAULT_RETRY_MS: u64 = 1000;

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

/// What sending one JSON-RPC request produced.
pub(super) enum Exchange {
    Answer(Result<Value, RpcError>),
    /// The response stream ended without an answer (modern): re-issue.
    Lost,
    /// The legacy session is gone (404): initialise again and re-issue.
    SessionExpired,
    /// The server does not accept this protocol version.
    WrongVersion(RpcError),
}

impl McpClient {
    pub(super) fn modern_params(&self, version: &str, mut params: Map<String, Value>) -> Value {
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

    pub(super) fn post_request(
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
    pub(super) async fn send_authorized(
        &self,
        request: HttpRequest,
    ) -> Result<HttpResponse, McpError> {
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

    pub(super) async fn notify_legacy(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), McpError> {
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

    /// Opens the legacy GET stream, resuming after `last_event_id` if given.
    pub(super) async fn open_get_stream(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<HttpResponse, McpError> {
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
}

pub(super) fn is_message_body(response: &HttpResponse) -> bool {
    matches!(
        response.media_type().as_str(),
        "application/json" | "text/event-stream"
    )
}

pub(super) async fn http_error(response: HttpResponse) -> McpError {
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
pub(super) async fn error_body(response: HttpResponse) -> Option<RpcError> {
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
pub(super) async fn read_answer(
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
