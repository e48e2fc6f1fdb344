//! One request to its answer: re-issuing after a lost stream, an expired
//! session or a version change; cancellation; and the server's questions
//! (`input_required` rounds, legacy server-to-client requests) answered
//! through the [`InputHandler`].

use std::cell::RefCell;
use std::rc::Rc;

use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::{Either, LocalBoxFuture, select};
use serde_json::{Map, Value, json};

use crate::error::McpError;
use crate::jsonrpc::{
    self, HEADER_MISMATCH, Message, RequestId, RpcError, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::model::{ClientCapabilities, InputRequest};
use crate::transport::HttpResponse;
use crate::version::Era;

use super::McpClient;
use super::wire::{Exchange, MAX_ERROR_BODY, http_error, is_message_body, read_answer};

/// How many `input_required` rounds one request may take.
pub const MAX_INPUT_ROUNDS: u32 = 8;

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

impl McpClient {
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
    pub(super) async fn answer_server_request(&self, id: RequestId, method: &str, params: Value) {
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
