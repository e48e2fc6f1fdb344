//! The CORS relay: a browser tab cannot read an MCP server that sends no
//! CORS headers, so, when the person opts in for that server, the app
//! talks to `/mcp/relay/{id}` on its own origin and `hearth serve`
//! forwards each request to the one URL registered for `{id}`.
//!
//! It is no open proxy:
//! - the target is registered per server by the app (behind the guard's
//!   token) and the request's own path and query are never looked at;
//! - every request goes through the guarded client ([`GuardedClient`]), so
//!   the SSRF rules hold: public addresses only, plus the config file's
//!   `allow_private` entries, plus — only for a server the person marked
//!   as local — the loopback address of that server's own port;
//! - redirects are not followed (a browser would leave the relay there);
//! - cookies, the app's token, `Origin` and the browser's `Sec-*` headers
//!   stay behind; of the server's answer only the headers MCP needs come
//!   back (an allow list), since the answer is served from Hearth's origin;
//! - a server marked local may be on this machine, but never on one of the
//!   Fetch standard's bad ports (mail, SSH, X11…).
//!
//! Its routes are in [`routes`].

pub mod routes;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::RwLock;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hearth_core::api::error::ApiErrorCode;
use hearth_core::mcp::hosted::{
    RELAY_TARGET_HEADER, RELAY_UPSTREAM, RELAY_UPSTREAM_HEADER, RelayDescription, RelayRegistration,
};
use hearth_core::mcp::skills::ServerId;
use url::{Host, Url};

use crate::api::error::{Refusal, error_response};
use crate::client::{ClientConfig, FetchError, GuardedClient, PrivateAllow, parse_url, redact};

/// Why the relay did not forward. Each variant names its status and code.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// 404 `not_found`: nothing is registered for this server.
    #[error(
        "no relay is set up for the MCP server {0}; reconnect it from the Servers panel, which sets it up again"
    )]
    NotSetUp(String),
    /// 400 `invalid_request`: the server name is not a valid one.
    #[error("{0:?} is not a server name: {1}")]
    BadId(String, String),
    /// 400 `invalid_request`: a server marked local must be on this machine.
    #[error(
        "a server marked as local must be at 127.0.0.1, [::1] or localhost, not {0}; for other machines leave \"local\" off"
    )]
    NotLocal(String),
    /// The status and code of the [`FetchError`] variant.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// 409 `invalid_request`: the request names another target than the
    /// one registered now (another tab pointed the server elsewhere), or
    /// none.
    #[error(
        "the relay for the MCP server {0} forwards to another address than this tab set up (it was changed, perhaps in another tab); reconnect the server"
    )]
    TargetChanged(String),
    /// 502 `bad_redirect`: the server answered with a redirect.
    #[error(
        "the MCP server redirected to {0}; the relay does not follow redirects, so change the server's URL to where it points"
    )]
    Redirected(String),
}

impl RelayError {
    fn status_and_code(&self) -> (StatusCode, ApiErrorCode) {
        match self {
            RelayError::NotSetUp(_) => (StatusCode::NOT_FOUND, ApiErrorCode::NotFound),
            RelayError::BadId(..) | RelayError::NotLocal(_) => {
                (StatusCode::BAD_REQUEST, ApiErrorCode::InvalidRequest)
            }
            RelayError::TargetChanged(_) => (StatusCode::CONFLICT, ApiErrorCode::InvalidRequest),
            RelayError::Fetch(e) => (e.status(), e.code()),
            RelayError::Redirected(_) => (StatusCode::BAD_GATEWAY, ApiErrorCode::BadRedirect),
        }
    }
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        error_response(status, code, self.to_string())
    }
}

struct Target {
    url: Url,
    local: bool,
    client: GuardedClient,
}

/// The registered relays, by server.
pub struct Relays {
    base: ClientConfig,
    targets: RwLock<HashMap<String, Target>>,
}

/// Request headers that never leave through the relay: hop-by-hop ones,
/// what identifies the browser or the app, and what the relay sets itself.
const DROPPED_REQUEST: &[&str] = &[
    "host",
    "origin",
    "referer",
    "cookie",
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "accept-encoding",
    "accept-language",
    "user-agent",
    "priority",
    "dnt",
    crate::api::guard::TOKEN_HEADER,
    RELAY_TARGET_HEADER,
];

/// The only response headers that come back through the relay: what the
/// MCP protocol and its HTTP transport need. The answer is served from
/// Hearth's own origin, so anything else (`Clear-Site-Data`, `Set-Cookie`,
/// `Refresh`, `Link`, `Service-Worker-Allowed`, a CSP…) could act on the
/// app itself; an allow list keeps headers not yet invented out too.
const FORWARDED_RESPONSE: &[&str] = &[
    "content-type",
    "content-encoding",
    "www-authenticate",
    "retry-after",
    "cache-control",
    "etag",
    "last-modified",
];

fn dropped_request(name: &HeaderName) -> bool {
    let n = name.as_str();
    DROPPED_REQUEST.contains(&n) || n.starts_with("sec-")
}

fn dropped_response(name: &HeaderName) -> bool {
    let n = name.as_str();
    !(FORWARDED_RESPONSE.contains(&n) || n.starts_with("mcp-"))
}

/// The loopback addresses a local server's URL may reach, or why not.
fn loopback_allowances(url: &Url) -> Result<Vec<PrivateAllow>, RelayError> {
    let port = url.port_or_known_default();
    let ips: Vec<IpAddr> = match url.host() {
        Some(Host::Ipv4(v4)) if v4.is_loopback() => vec![IpAddr::V4(v4)],
        Some(Host::Ipv6(v6)) if v6.is_loopback() => vec![IpAddr::V6(v6)],
        Some(Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => vec![
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ],
        _ => return Err(RelayError::NotLocal(redact(url))),
    };
    Ok(ips
        .into_iter()
        .map(|ip| PrivateAllow { ip, port })
        .collect())
}

impl Relays {
    /// Relays whose clients start from `base`: its resolver, TLS roots,
    /// timeouts and `allow_private` list.
    pub fn new(base: ClientConfig) -> Self {
        Self {
            base,
            targets: RwLock::new(HashMap::new()),
        }
    }

    /// Sets the one URL server `id`'s relay forwards to, after checking it
    /// as any request through it will be checked.
    pub async fn register(
        &self,
        id: &str,
        registration: RelayRegistration,
    ) -> Result<RelayDescription, RelayError> {
        let id = ServerId::new(id).map_err(|e| RelayError::BadId(id.into(), e.to_string()))?;
        let mut url = parse_url(&registration.url)?;
        url.set_fragment(None);
        let mut config = self.base.clone();
        if registration.local {
            config.allow_private.extend(loopback_allowances(&url)?);
        }
        let client = GuardedClient::new(config);
        let target = client.check_target(&url).await?;
        // The loopback allowance lifts the address rule for this one
        // server; the port rule still holds.
        if registration.local && crate::client::address::is_bad_port(target.port) {
            return Err(RelayError::Fetch(FetchError::BlockedPort(target.port)));
        }
        let description = RelayDescription {
            id: id.clone(),
            url: url.to_string(),
            local: registration.local,
        };
        tracing::info!(target: "hearth::mcp", server = %id, to = %redact(&url), local = registration.local, "relay set up");
        self.write().insert(
            id.to_string(),
            Target {
                url,
                local: registration.local,
                client,
            },
        );
        Ok(description)
    }

    pub fn describe(&self, id: &str) -> Result<RelayDescription, RelayError> {
        let targets = self.read();
        let target = targets
            .get(id)
            .ok_or_else(|| RelayError::NotSetUp(id.into()))?;
        Ok(RelayDescription {
            id: ServerId::new(id).map_err(|e| RelayError::BadId(id.into(), e.to_string()))?,
            url: target.url.to_string(),
            local: target.local,
        })
    }

    /// Forgets the relay of server `id`; `false` if there was none.
    pub fn remove(&self, id: &str) -> bool {
        self.write().remove(id).is_some()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Target>> {
        self.targets.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Target>> {
        self.targets.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Forwards one request to server `id`'s URL and streams the answer
    /// back, marked with [`RELAY_UPSTREAM_HEADER`].
    pub async fn forward(
        &self,
        id: &str,
        method: Method,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response, RelayError> {
        let (url, client) = {
            let targets = self.read();
            let target = targets
                .get(id)
                .ok_or_else(|| RelayError::NotSetUp(id.into()))?;
            (target.url.clone(), target.client.clone())
        };
        // The sender says where it means its request (and any token in it)
        // to go; the registration may have moved since.
        let meant = headers
            .get(RELAY_TARGET_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_url(v).ok())
            .map(|mut u| {
                u.set_fragment(None);
                u
            });
        if meant.as_ref() != Some(&url) {
            return Err(RelayError::TargetChanged(id.into()));
        }
        let mut outgoing = HeaderMap::new();
        for (name, value) in headers {
            if !dropped_request(name) {
                outgoing.append(name.clone(), value.clone());
            }
        }
        let started = Instant::now();
        let upstream = client.send(method.clone(), &url, outgoing, body).await?;
        let status = upstream.status();
        tracing::info!(
            target: "hearth::mcp",
            server = id,
            %method,
            to = %redact(&url),
            status = status.as_u16(),
            ms = started.elapsed().as_millis() as u64,
            "relayed"
        );
        if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
            let location = upstream
                .headers()
                .get(axum::http::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .unwrap_or("another address")
                .chars()
                .take(200)
                .collect();
            return Err(RelayError::Redirected(location));
        }
        let (parts, incoming) = upstream.into_parts();
        let mut response = Response::new(Body::new(incoming));
        *response.status_mut() = parts.status;
        let h = response.headers_mut();
        for (name, value) in &parts.headers {
            if !dropped_response(name) {
                h.append(name.clone(), value.clone());
            }
        }
        h.insert(
            RELAY_UPSTREAM_HEADER,
            HeaderValue::from_static(RELAY_UPSTREAM),
        );
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_urls_can_be_local() {
        let table: Vec<(&str, Result<Vec<&str>, ()>)> = vec![
            ("http://127.0.0.1:3901/mcp", Ok(vec!["127.0.0.1:3901"])),
            ("http://[::1]:3901/mcp", Ok(vec!["[::1]:3901"])),
            (
                "http://localhost:8000/mcp",
                Ok(vec!["127.0.0.1:8000", "[::1]:8000"]),
            ),
            ("http://LOCALHOST/mcp", Ok(vec!["127.0.0.1:80", "[::1]:80"])),
            ("http://10.0.0.5:3901/mcp", Err(())),
            ("http://192.168.1.2/mcp", Err(())),
            ("http://localhost.evil.example/mcp", Err(())),
            ("http://127.0.0.1.nip.io/mcp", Err(())),
            ("https://example.com/mcp", Err(())),
        ];
        for (url, want) in table {
            let got = loopback_allowances(&Url::parse(url).unwrap())
                .map(|v| v.iter().map(|a| a.to_string()).collect::<Vec<_>>())
                .map_err(|_| ());
            assert_eq!(
                got,
                want.map(|v| v.into_iter().map(str::to_string).collect()),
                "{url}"
            );
        }
    }

    #[test]
    fn browser_and_app_headers_stay_behind() {
        let table = [
            ("cookie", true),
            ("x-hearth-token", true),
            ("origin", true),
            ("sec-fetch-site", true),
            ("sec-ch-ua", true),
            ("host", true),
            ("authorization", false),
            ("mcp-session-id", false),
            ("mcp-protocol-version", false),
            ("x-api-key", false),
            ("last-event-id", false),
            ("content-type", false),
        ];
        for (name, dropped) in table {
            assert_eq!(
                dropped_request(&HeaderName::from_static(name)),
                dropped,
                "{name}"
            );
        }
        // Only what the MCP protocol needs comes back; anything else could
        // act on Hearth's own origin, which the answer is served from.
        let table = [
            ("set-cookie", true),
            ("access-control-allow-origin", true),
            ("content-security-policy", true),
            ("clear-site-data", true),
            ("refresh", true),
            ("link", true),
            ("service-worker-allowed", true),
            ("content-disposition", true),
            ("permissions-policy", true),
            ("report-to", true),
            ("reporting-endpoints", true),
            ("nel", true),
            ("origin-agent-cluster", true),
            ("x-dns-prefetch-control", true),
            ("supports-loading-mode", true),
            ("location", true),
            ("x-made-up", true),
            ("mcp-session-id", false),
            ("mcp-protocol-version", false),
            ("www-authenticate", false),
            ("retry-after", false),
            ("content-type", false),
            ("content-encoding", false),
        ];
        for (name, dropped) in table {
            assert_eq!(
                dropped_response(&HeaderName::from_static(name)),
                dropped,
                "{name}"
            );
        }
    }
}
