//! Streaming HTTP for model providers: the app's one streaming fetch
//! (`src/fetch.rs`) with an abort signal and no referrer, so tokens reach
//! core's decoder as they arrive, and its errors in the providers' words.
//!
//! Error texts here never include request headers (the API key travels in
//! one); they are the browser's own words about the failure.

use hearth_core::assistant::providers::HttpRequest;
use js_sys::Reflect;
use wasm_bindgen::JsValue;
use web_sys::{AbortController, AbortSignal, ReferrerPolicy, Response};

use crate::fetch::{self, BodyReader, SendError};

/// Why a request or its body failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The request was aborted (Stop, or a timeout).
    #[error("the request was stopped")]
    Aborted,
    /// The browser could not complete it: offline, refused, CORS, reset.
    #[error("{0}")]
    Network(String),
}

/// The browser's message for a rejected promise, without anything else.
fn describe(e: &JsValue) -> FetchError {
    let name = Reflect::get(e, &"name".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    if name == "AbortError" {
        return FetchError::Aborted;
    }
    let message = Reflect::get(e, &"message".into())
        .ok()
        .and_then(|v| v.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the request failed".to_string());
    FetchError::Network(message)
}

/// A response whose body is read as it arrives.
pub struct StreamingResponse {
    pub status: u16,
    /// The headers the browser exposes (CORS limits cross-origin ones to
    /// those the server lists in `Access-Control-Expose-Headers`).
    pub headers: Vec<(String, String)>,
    body: BodyReader,
}

impl StreamingResponse {
    /// Wraps a response (from `fetch`, or built in a test).
    pub fn new(response: &Response) -> Result<StreamingResponse, FetchError> {
        let body = BodyReader::new(response)
            .ok_or_else(|| FetchError::Network("cannot read the response body".into()))?;
        Ok(StreamingResponse {
            status: response.status(),
            headers: fetch::header_pairs(&response.headers()),
            body,
        })
    }

    /// The next piece of the body; `None` at its end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, FetchError> {
        self.body.next_chunk().await.map_err(|e| describe(&e))
    }

    /// Stops reading; the browser drops the rest of the body.
    pub fn cancel(&mut self) {
        self.body.cancel();
    }

    /// The whole body as text, up to `limit` bytes (the rest is dropped).
    pub async fn text(mut self, limit: usize) -> Result<String, FetchError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.next_chunk().await? {
            let room = limit.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if bytes.len() >= limit {
                self.cancel();
                break;
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Drop for StreamingResponse {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Sends `request` and returns once the response has begun. `signal`
/// aborts it, before or while the body is read.
pub async fn send(
    request: &HttpRequest,
    signal: Option<&AbortSignal>,
) -> Result<StreamingResponse, FetchError> {
    let options = fetch::Options {
        signal,
        // Model servers are other origins; the provider's key must not
        // leak to referrers.
        referrer_policy: Some(ReferrerPolicy::NoReferrer),
        ..fetch::Options::default()
    };
    let response = fetch::send(request, &options).await.map_err(|e| match e {
        // A header the browser refuses is reported by name only.
        SendError::Header(k) => {
            FetchError::Network(format!("the browser refused the header '{k}'"))
        }
        SendError::Setup(e) | SendError::Browser(e) => describe(&e),
    })?;
    StreamingResponse::new(&response)
}

/// An abort controller that aborts itself after `ms` unless dropped first.
pub struct Deadline {
    pub controller: AbortController,
    _timer: gloo_timers::callback::Timeout,
}

impl Deadline {
    pub fn after(ms: u32) -> Option<Deadline> {
        let controller = AbortController::new().ok()?;
        let c = controller.clone();
        let timer = gloo_timers::callback::Timeout::new(ms, move || c.abort());
        Some(Deadline {
            controller,
            _timer: timer,
        })
    }

    pub fn signal(&self) -> AbortSignal {
        self.controller.signal()
    }
}

/// Sends a short request (a model list) and reads it whole, giving up
/// after `timeout_ms`.
pub async fn get_text(
    request: &HttpRequest,
    timeout_ms: u32,
    limit: usize,
) -> Result<(u16, Vec<(String, String)>, String), FetchError> {
    let deadline = Deadline::after(timeout_ms);
    let signal = deadline.as_ref().map(Deadline::signal);
    let response = send(request, signal.as_ref()).await?;
    let (status, headers) = (response.status, response.headers.clone());
    let body = response.text(limit).await?;
    drop(deadline);
    Ok((status, headers, body))
}
