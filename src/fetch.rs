//! Streaming fetch: the one place the app sends hearth-base's
//! `HttpRequest` with `fetch` and reads the response body chunk by chunk
//! from its `ReadableStream`, so model tokens and MCP's SSE arrive as
//! they are sent. The model providers (`assistant/http.rs`) and the MCP
//! transport (`mcp/transport.rs`) both call it; each keeps its own request
//! settings and turns the browser's errors into its own words.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortSignal, Headers, ReadableStreamDefaultReader, ReferrerPolicy, RequestCache,
    RequestCredentials, RequestInit, RequestMode, RequestRedirect, Response,
};

use hearth_core::http::HttpRequest;

/// How a request is sent, beyond what it says itself. Every request is a
/// CORS request that skips the HTTP cache; what is left unset here is the
/// browser's default.
#[derive(Default)]
pub struct Options<'a> {
    /// Aborts the request, before or while its body is read.
    pub signal: Option<&'a AbortSignal>,
    /// A header set on top of the request's own (the proxy's key).
    pub extra_header: Option<(&'a str, &'a str)>,
    pub credentials: Option<RequestCredentials>,
    pub referrer_policy: Option<ReferrerPolicy>,
    pub redirect: Option<RequestRedirect>,
}

/// Why no response came.
pub enum SendError {
    /// The browser refused to send this header (by name; values may be
    /// secrets).
    Header(String),
    /// The request could not be put together (no window, no headers).
    Setup(JsValue),
    /// `fetch` rejected: an abort, a network failure, CORS.
    Browser(JsValue),
}

/// Sends `request` and returns once the response has begun.
pub async fn send(request: &HttpRequest, options: &Options<'_>) -> Result<Response, SendError> {
    let window = web_sys::window().ok_or_else(|| SendError::Setup("no window".into()))?;
    let init = RequestInit::new();
    init.set_method(request.method.as_str());
    let headers = Headers::new().map_err(SendError::Setup)?;
    for (name, value) in &request.headers {
        headers
            .append(name, value)
            .map_err(|_| SendError::Header(name.to_string()))?;
    }
    if let Some((name, value)) = options.extra_header {
        headers.set(name, value).map_err(SendError::Setup)?;
    }
    init.set_headers(&headers);
    if let Some(body) = &request.body {
        init.set_body(&Uint8Array::from(body.as_slice()));
    }
    init.set_mode(RequestMode::Cors);
    init.set_cache(RequestCache::NoStore);
    if let Some(credentials) = options.credentials {
        init.set_credentials(credentials);
    }
    if let Some(policy) = options.referrer_policy {
        init.set_referrer_policy(policy);
    }
    if let Some(redirect) = options.redirect {
        init.set_redirect(redirect);
    }
    if let Some(signal) = options.signal {
        init.set_signal(Some(signal));
    }
    let response = JsFuture::from(window.fetch_with_str_and_init(&request.url, &init))
        .await
        .map_err(SendError::Browser)?;
    response
        .dyn_into()
        .map_err(|_| SendError::Setup("the browser returned no response".into()))
}

/// Every header of `headers` the browser exposes (CORS limits
/// cross-origin ones to those the server lists in
/// `Access-Control-Expose-Headers`).
pub fn header_pairs(headers: &Headers) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(Some(iter)) = js_sys::try_iter(headers) {
        for entry in iter.flatten() {
            let pair: js_sys::Array = entry.unchecked_into();
            if let (Some(n), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                out.push((n, v));
            }
        }
    }
    out
}

/// A response body read as it arrives.
pub struct BodyReader {
    reader: Option<ReadableStreamDefaultReader>,
}

impl BodyReader {
    /// The reader of `response`'s body (one with nothing to read for a
    /// body-less response); `None` only when the browser hands back no
    /// default reader.
    pub fn new(response: &Response) -> Option<BodyReader> {
        let reader = match response.body() {
            Some(body) => Some(body.get_reader().dyn_into().ok()?),
            None => None,
        };
        Some(BodyReader { reader })
    }

    /// The next piece of the body; `None` at its end. The error is the
    /// browser's (an abort, a broken connection).
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, JsValue> {
        let Some(reader) = &self.reader else {
            return Ok(None);
        };
        let result = JsFuture::from(reader.read()).await?;
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
}
