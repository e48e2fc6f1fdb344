//! `web_fetch`'s pipeline: follow redirects (each hop checked again by the
//! guarded client and the skill's domain policy), read the body within the
//! size limit and undo gzip/deflate (both with the client's [`body`]
//! limits), and read the document.
//!
//! [`body`]: crate::client::body

use std::time::{Duration, Instant};

use bytes::Bytes;
use hearth_core::api::domains::DomainPolicy;
use hearth_core::api::web::FetchResponse;
use hearth_core::builtin::web::WEB_FETCH;
use hyper::header::{
    ACCEPT, ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap,
    HeaderValue, LOCATION,
};
use hyper::{Method, StatusCode};
use url::Url;

use super::content;
use crate::client::body::{decode_content_encoding, read_limited};
use crate::client::{FetchError, GuardedClient, parse_url, redact};

/// Redirects followed at most.
pub const MAX_REDIRECTS: u32 = 5;

/// Size and time limits of one fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchLimits {
    /// Used when the request does not say.
    pub default_max_bytes: u64,
    /// The most a request may ask for.
    pub max_bytes: u64,
    /// From the first byte sent to the last byte read, redirects included.
    pub total_timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            default_max_bytes: 2 * 1024 * 1024,
            max_bytes: 10 * 1024 * 1024,
            total_timeout: Duration::from_secs(20),
        }
    }
}

/// Fetches `url` and reads it as a document.
pub async fn fetch(
    client: &GuardedClient,
    url: &str,
    max_bytes: u64,
    policy: &DomainPolicy,
    limits: &FetchLimits,
) -> Result<FetchResponse, FetchError> {
    let requested = parse_url(url)?;
    let host = requested.host_str().unwrap_or_default().to_string();
    match tokio::time::timeout(
        limits.total_timeout,
        follow(client, requested, max_bytes, policy),
    )
    .await
    {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout {
            host,
            stage: "answer",
            limit: limits.total_timeout,
        }),
    }
}

async fn follow(
    client: &GuardedClient,
    requested: Url,
    max_bytes: u64,
    policy: &DomainPolicy,
) -> Result<FetchResponse, FetchError> {
    let mut url = requested.clone();
    let mut redirects = 0u32;
    loop {
        let host = url.host_str().unwrap_or_default().to_string();
        if let Some(refusal) = policy.decide(&host).refusal(WEB_FETCH, &host) {
            return Err(FetchError::BlockedDomain(refusal));
        }
        let started = Instant::now();
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static(
                "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.1",
            ),
        );
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip, deflate"));
        let res = client
            .send(Method::GET, &url, headers, Bytes::new())
            .await?;
        let status = res.status();
        tracing::debug!(
            target: "hearth::net",
            hop = redirects,
            to = %redact(&url),
            status = status.as_u16(),
            ms = started.elapsed().as_millis() as u64,
            "fetch hop"
        );
        if is_redirect(status) {
            let Some(location) = res.headers().get(LOCATION) else {
                return Err(FetchError::BadRedirect(format!(
                    "HTTP {} without a Location header",
                    status.as_u16()
                )));
            };
            if redirects >= MAX_REDIRECTS {
                return Err(FetchError::TooManyRedirects(MAX_REDIRECTS));
            }
            let location = location
                .to_str()
                .map_err(|_| FetchError::BadRedirect("the Location header is not text".into()))?;
            url = url
                .join(location)
                .map_err(|e| FetchError::BadRedirect(format!("{location:?}: {e}")))?;
            redirects += 1;
            continue;
        }
        if !status.is_success() {
            return Err(FetchError::UpstreamStatus {
                status: status.as_u16(),
                reason: status.canonical_reason(),
            });
        }
        let header = |name| {
            res.headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(CONTENT_TYPE);
        let encoding = header(CONTENT_ENCODING);
        // Refuse early what is sure to be refused, before reading it.
        if let Some(ct) = content_type.as_deref() {
            let (essence, _) = content::parse_content_type(ct);
            if !essence.is_empty() && content::kind_of(&essence).is_none() {
                return Err(FetchError::UnsupportedContentType(essence));
            }
        }
        if let Some(declared) = header(CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok())
            && declared > max_bytes
        {
            return Err(FetchError::ResponseTooLarge {
                limit: max_bytes,
                declared: Some(declared),
            });
        }
        let raw = read_limited(res.into_body(), max_bytes, &host).await?;
        let body = decode_content_encoding(encoding.as_deref(), raw, max_bytes)?;
        let bytes = body.len() as u64;
        let doc = read_blocking(&url, content_type.as_deref(), body).await?;
        return Ok(FetchResponse {
            url: url.to_string(),
            requested_url: requested.to_string(),
            host,
            status: status.as_u16(),
            kind: doc.kind,
            content_type: doc.content_type,
            charset: doc.charset,
            lossy: doc.lossy,
            title: doc.title,
            content: doc.content,
            links: doc.links,
            bytes,
            redirects,
        });
    }
}

/// Reads `body` as a document on a blocking thread, so a large page never
/// stalls the async workers and a time limit around this can answer while
/// the reading still runs.
async fn read_blocking(
    url: &Url,
    content_type: Option<&str>,
    body: impl AsRef<[u8]> + Send + 'static,
) -> Result<content::Document, FetchError> {
    let (task_url, content_type) = (url.clone(), content_type.map(str::to_string));
    tokio::task::spawn_blocking(move || {
        content::read_document(&task_url, content_type.as_deref(), body.as_ref())
    })
    .await
    .map_err(|e| FetchError::UpstreamFailed {
        host: "the proxy".into(),
        detail: format!("reading the page failed: {e}"),
    })?
}

/// Reads a body that is already here (a saved page) as a document, within
/// the fetch time limit.
pub async fn read_within(
    url: &Url,
    content_type: Option<&str>,
    body: Vec<u8>,
    limits: &FetchLimits,
) -> Result<content::Document, FetchError> {
    match tokio::time::timeout(limits.total_timeout, read_blocking(url, content_type, body)).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout {
            host: url.host_str().unwrap_or("the page").to_string(),
            stage: "be read",
            limit: limits.total_timeout,
        }),
    }
}

fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}
