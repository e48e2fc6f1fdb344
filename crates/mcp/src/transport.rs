//! The one seam between MCP protocol logic and the platform: a small HTTP
//! transport trait. The browser implements it with `fetch` and a
//! `ReadableStream` reader; `hearth` implements it with reqwest. Everything
//! above it — eras, sessions, SSE, retries, OAuth — is shared.
//!
//! A response body is a stream of byte chunks so that SSE can be read as it
//! arrives. Dropping the stream must abort the underlying request: on
//! 2026-07-28 servers that is how a request is cancelled.

use futures::StreamExt;
use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;

/// The request is hearth-base's, the one type model providers send too.
pub use hearth_base::http::{HttpMethod, HttpRequest};

/// A chunked response body. Dropping it aborts the request.
pub type BodyStream = LocalBoxStream<'static, Result<Vec<u8>, TransportError>>;

pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: BodyStream,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The media type without parameters, lower-cased.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .and_then(|ct| ct.split(';').next())
            .map(|t| t.trim().to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// A response with a complete body, for tests and simple transports.
    pub fn with_body(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> Self {
        Self {
            status,
            headers,
            body: futures::stream::iter(vec![Ok(body)]).boxed_local(),
        }
    }

    /// Reads the whole body, refusing more than `limit` bytes.
    pub async fn read_to_end(mut self, limit: usize) -> Result<Vec<u8>, TransportError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.body.next().await {
            let chunk = chunk?;
            if out.len() + chunk.len() > limit {
                return Err(TransportError::TooLarge(limit));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

pub(crate) fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Why bytes did not move. Messages are written for the person reading the
/// Servers panel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The request never got an HTTP answer: offline, refused, DNS, TLS,
    /// or — in a browser — blocked by CORS.
    #[error("could not reach the server: {0}")]
    Unreachable(String),
    /// The connection broke while the body was arriving.
    #[error("the connection broke while reading the response: {0}")]
    Interrupted(String),
    #[error("the server took too long to answer")]
    TimedOut,
    #[error("the response is larger than {0} bytes")]
    TooLarge(usize),
    #[error("{0}")]
    Other(String),
}

/// Moves HTTP requests for the MCP client and the OAuth flow, and waits.
///
/// Implementations must:
/// - send exactly the headers given (plus what the platform adds, such as
///   `Content-Length`), and expose every response header (a browser needs
///   the server's `Access-Control-Expose-Headers` for `Mcp-Session-Id` and
///   `WWW-Authenticate`);
/// - follow redirects for GET metadata fetches as the platform does;
/// - stream the body as it arrives rather than buffering it, and abort the
///   request when the body stream is dropped;
/// - report a request that got no HTTP response as
///   [`TransportError::Unreachable`].
pub trait HttpTransport {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>>;

    /// Waits `ms` milliseconds. SSE reconnection honours the server's
    /// `retry` field with it; core has no clock of its own.
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()>;
}
