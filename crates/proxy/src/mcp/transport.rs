//! The native MCP transport: hearth-core's `HttpTransport` over reqwest and
//! tokio, streaming response bodies chunk by chunk so SSE is read as it
//! arrives. Dropping a body drops the reqwest response, which closes the
//! connection — the cancellation signal for 2026-07-28 servers.

use std::time::Duration;

use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt};
use hearth_core::mcp::{HttpMethod, HttpRequest, HttpResponse, HttpTransport, TransportError};

/// Installs the ring crypto provider for rustls once per process.
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    pub fn new() -> Result<Self, TransportError> {
        install_crypto();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .user_agent(concat!("hearth/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| TransportError::Other(format!("cannot start the HTTP client: {e}")))?;
        Ok(Self { client })
    }
}

fn method(m: HttpMethod) -> reqwest::Method {
    match m {
        HttpMethod::Get => reqwest::Method::GET,
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Put => reqwest::Method::PUT,
        HttpMethod::Delete => reqwest::Method::DELETE,
    }
}

/// The full chain of causes: reqwest's top-level message alone rarely says
/// what happened ("error sending request").
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl HttpTransport for ReqwestTransport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        async move {
            let mut builder = self.client.request(method(request.method), &request.url);
            for (name, value) in &request.headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            if let Some(body) = request.body {
                builder = builder.body(body);
            }
            let response = builder.send().await.map_err(|e| {
                if e.is_timeout() {
                    TransportError::TimedOut
                } else if e.is_builder() {
                    TransportError::Other(describe(&e))
                } else {
                    TransportError::Unreachable(describe(&e))
                }
            })?;
            let status = response.status().as_u16();
            let headers = response
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let body = response
                .bytes_stream()
                .map(|chunk| {
                    chunk
                        .map(|b| b.to_vec())
                        .map_err(|e| TransportError::Interrupted(describe(&e)))
                })
                .boxed_local();
            Ok(HttpResponse {
                status,
                headers,
                body,
            })
        }
        .boxed_local()
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        tokio::time::sleep(Duration::from_millis(ms)).boxed_local()
    }
}
