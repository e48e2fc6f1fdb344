//! The browser's side of core's `HttpTransport`: the app's one streaming
//! fetch (`src/fetch.rs`, so SSE arrives as it is sent), an
//! `AbortController` that aborts the request when the body stream is
//! dropped (how a 2026-07-28 request is cancelled), and `setTimeout` for
//! waiting.
//!
//! Requests to `hearth serve` (a stdio server, or the CORS relay) carry the
//! key from the launch link; the proxy's own JSON errors are told apart
//! from the MCP server's answers and turned into plain words.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt};
use hearth_core::api::error::ApiErrorBody;
use hearth_core::mcp::hosted::{RELAY_UPSTREAM, RELAY_UPSTREAM_HEADER};
use hearth_core::mcp::transport::BodyStream;
use hearth_core::mcp::{HttpRequest, HttpResponse, HttpTransport, TransportError};
use js_sys::Reflect;
use wasm_bindgen::JsValue;
use web_sys::{AbortController, RequestCredentials, RequestRedirect};

use super::proxy::HearthProxy;
use crate::fetch::{self, BodyReader, SendError};

/// Proxy error bodies are read up to this size.
const MAX_PROXY_ERROR: usize = 64 * 1024;

/// `fetch` for one MCP server. With `hearth`, every request carries the
/// proxy's token.
#[derive(Clone)]
pub struct FetchTransport {
    hearth: Option<Rc<HearthProxy>>,
}

impl FetchTransport {
    /// For a server the browser reaches directly.
    pub fn direct() -> Self {
        Self { hearth: None }
    }

    /// For a server reached through `hearth serve`.
    pub fn through(hearth: Rc<HearthProxy>) -> Self {
        Self {
            hearth: Some(hearth),
        }
    }
}

/// Why `fetch` gave no response, in words that say what to do.
pub fn fetch_failure(error: &JsValue, through_hearth: bool) -> TransportError {
    let name = Reflect::get(error, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default();
    let message = Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("{error:?}"));
    match name.as_str() {
        "AbortError" => TransportError::Other("the request was stopped".into()),
        "TypeError" if through_hearth => TransportError::Unreachable(
            "Hearth's local server (hearth serve) is not answering; start it again and reload"
                .into(),
        ),
        "TypeError" => TransportError::Unreachable(format!(
            "the browser got no answer ({message}). The server may be down, or it does not allow \
             requests from this page (CORS). If it is running, turn on \"Connect through Hearth\" \
             for this server"
        )),
        _ => TransportError::Other(format!("{name}: {message}")),
    }
}

/// Aborts the request when the last part of it (the body) is dropped.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The chunks of `body` (none without one); dropping the stream aborts
/// through `controller`.
pub fn body_stream(body: Option<BodyReader>, controller: AbortController) -> BodyStream {
    let state = (body, AbortOnDrop(controller));
    futures::stream::unfold(state, |(body, guard)| async move {
        let mut body = body?;
        match body.next_chunk().await {
            Ok(Some(bytes)) => Some((Ok(bytes), (Some(body), guard))),
            Ok(None) => None,
            Err(e) => {
                let message = Reflect::get(&e, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_else(|| format!("{e:?}"));
                Some((Err(TransportError::Interrupted(message)), (None, guard)))
            }
        }
    })
    .boxed_local()
}

async fn fetch_once(
    request: &HttpRequest,
    token: Option<(&str, &str)>,
    through_hearth: bool,
) -> Result<HttpResponse, TransportError> {
    let other = |e: JsValue| TransportError::Other(format!("{e:?}"));
    let controller = AbortController::new().map_err(other)?;
    let signal = controller.signal();
    let options = fetch::Options {
        signal: Some(&signal),
        extra_header: token,
        credentials: Some(RequestCredentials::Omit),
        redirect: Some(RequestRedirect::Follow),
        ..fetch::Options::default()
    };
    let response = match fetch::send(request, &options).await {
        Ok(response) => response,
        Err(SendError::Header(name)) => {
            return Err(TransportError::Other(format!(
                "the header {name} cannot be sent from a browser"
            )));
        }
        Err(SendError::Setup(e)) => {
            return Err(TransportError::Other(
                e.as_string().unwrap_or_else(|| format!("{e:?}")),
            ));
        }
        Err(SendError::Browser(e)) => return Err(fetch_failure(&e, through_hearth)),
    };
    Ok(HttpResponse {
        status: response.status(),
        headers: fetch::header_pairs(&response.headers()),
        body: body_stream(BodyReader::new(&response), controller),
    })
}

/// Reads the proxy's own error out of `response`, if that is what it is;
/// otherwise gives the response back whole.
async fn proxy_error(
    response: HttpResponse,
) -> Result<Result<HttpResponse, ApiErrorBody>, TransportError> {
    let own = response.status >= 400
        && response.header(RELAY_UPSTREAM_HEADER) != Some(RELAY_UPSTREAM)
        && response.media_type() == "application/json";
    if !own {
        return Ok(Ok(response));
    }
    let (status, headers) = (response.status, response.headers.clone());
    let body = response.read_to_end(MAX_PROXY_ERROR).await?;
    match serde_json::from_slice::<ApiErrorBody>(&body) {
        Ok(e) => Ok(Err(e)),
        Err(_) => Ok(Ok(HttpResponse::with_body(status, headers, body))),
    }
}

impl HttpTransport for FetchTransport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        async move {
            // The token goes to Hearth's own origin and nowhere else.
            let own = format!("{}/", super::proxy::app_origin());
            let Some(hearth) = self
                .hearth
                .as_ref()
                .filter(|_| request.url.starts_with(&own))
            else {
                return fetch_once(&request, None, false).await;
            };
            let token = hearth.key_header();
            let key = token.as_ref().map(|(h, t)| (h.as_str(), t.as_str()));
            let response = fetch_once(&request, key, true).await?;
            match proxy_error(response).await? {
                Ok(r) => Ok(r),
                Err(e) => Err(TransportError::Other(format!(
                    "Hearth's local server refused: {}",
                    e.error.message
                ))),
            }
        }
        .boxed_local()
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        gloo_timers::future::TimeoutFuture::new(ms.min(u32::MAX as u64) as u32).boxed_local()
    }
}
