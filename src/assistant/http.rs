//! Streaming HTTP for model providers: `fetch` with an abort signal, and
//! the response body read chunk by chunk from its `ReadableStream`, so
//! tokens reach core's decoder as they arrive.
//!
//! Error texts here never include request headers (the API key travels in
//! one); they are the browser's own words about the failure.

use hearth_core::assistant::providers::{HttpRequest, Method};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, Headers, ReadableStreamDefaultReader, RequestInit, Response,
};

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
    reader: Option<ReadableStreamDefaultReader>,
}

impl StreamingResponse {
    /// Wraps a response (from `fetch`, or built in a test).
    pub fn new(response: &Response) -> Result<StreamingResponse, FetchError> {
        let mut headers = Vec::new();
        if let Ok(Some(iter)) = js_sys::try_iter(&response.headers()) {
            for entry in iter.flatten() {
                let pair: js_sys::Array = entry.unchecked_into();
                if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                    headers.push((k, v));
                }
            }
        }
        let reader = match response.body() {
            Some(body) => Some(
                body.get_reader()
                    .dyn_into::<ReadableStreamDefaultReader>()
                    .map_err(|_| FetchError::Network("cannot read the response body".into()))?,
            ),
            None => None,
        };
        Ok(StreamingResponse {
            status: response.status(),
            headers,
            reader,
        })
    }

    /// The next piece of the body; `None` at its end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, FetchError> {
        let Some(reader) = &self.reader else {
            return Ok(None);
        };
        let result = JsFuture::from(reader.read())
            .await
            .map_err(|e| describe(&e))?;
        let done = Reflect::get(&result, &"done".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(true);
        if done {
            self.reader = None;
            return Ok(None);
        }
        let value = Reflect::get(&result, &"value".into()).unwrap_or(JsValue::UNDEFINED);
        Ok(Some(Uint8Array::new(&value).to_vec()))
    }

    /// Stops reading; the browser drops the rest of the body.
    pub fn cancel(&mut self) {
        if let Some(reader) = self.reader.take() {
            // On an aborted stream the promise rejects; that is expected,
            // so it is awaited here rather than left unhandled.
            let done = JsFuture::from(reader.cancel());
            wasm_bindgen_futures::spawn_local(async move {
                let _ = done.await;
            });
        }
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
    let window = web_sys::window().ok_or_else(|| FetchError::Network("no window".into()))?;
    let init = RequestInit::new();
    init.set_method(match request.method {
        Method::Get => "GET",
        Method::Post => "POST",
    });
    let headers = Headers::new().map_err(|e| describe(&e))?;
    for (k, v) in &request.headers {
        // A header the browser refuses is reported by name only.
        headers
            .append(k, v)
            .map_err(|_| FetchError::Network(format!("the browser refused the header '{k}'")))?;
    }
    init.set_headers(&headers);
    if let Some(body) = &request.body {
        init.set_body(&JsValue::from_str(body));
    }
    // Model servers are other origins; the provider's key must not leak
    // to referrers.
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_referrer_policy(web_sys::ReferrerPolicy::NoReferrer);
    init.set_cache(web_sys::RequestCache::NoStore);
    if let Some(signal) = signal {
        init.set_signal(Some(signal));
    }
    let response = JsFuture::from(window.fetch_with_str_and_init(&request.url, &init))
        .await
        .map_err(|e| describe(&e))?;
    let response: Response = response
        .dyn_into()
        .map_err(|_| FetchError::Network("the browser returned no response".into()))?;
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
