//! The guard in front of every `/api/…` route: only the app, in a browser
//! on this machine, may call the proxy.
//!
//! A proxy on 127.0.0.1 can be reached by every page the user visits and by
//! every DNS-rebinding trick, so each request must pass, in this order:
//! 1. the peer is a loopback address (`ConnectInfo`; absent means refuse);
//! 2. it is not a CORS preflight (`OPTIONS`): CORS is never opened;
//! 3. `Host` is exactly one of the loopback `name:port` pairs we serve, so a
//!    rebound `evil.example` name fails;
//! 4. `Sec-Fetch-Site` is `same-origin`;
//! 5. `Origin`, when sent, is the app's origin — and it must be sent on
//!    anything but GET and HEAD, as browsers do for same-origin requests;
//! 6. `X-Hearth-Token` carries the per-install key.
//!
//! Steps 1–5 keep web pages out; they are no defence against a program on
//! this machine, which can set any header it likes. The key is: it is
//! handed out over no route at all. `hearth serve` prints it in the launch
//! link's fragment (`http://127.0.0.1:8080/#token=…`, never sent to a
//! server), the app keeps it in its origin's storage, and it sits in a
//! 0600 file that other users cannot read.
//!
//! It is a plain axum middleware so other same-origin services (the MCP
//! stdio bridge and CORS relay) reuse it as is:
//! `router.layer(axum::middleware::from_fn_with_state(guard, guard::require_token))`,
//! or [`protect`]. No response of the API carries
//! `Access-Control-Allow-Origin`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hearth_core::api::error::ApiErrorCode;

use super::token::ApiToken;

/// The header carrying the key (see [`hearth_core::api::TOKEN_HEADER`]).
pub const TOKEN_HEADER: &str = hearth_core::api::TOKEN_HEADER;

/// Why a request was turned away. Every variant answers 403.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// 403 `forbidden_peer`: the connection does not come from this machine.
    #[error("Hearth's network-tier API answers only the app running on this machine")]
    ForbiddenPeer,
    /// 403 `forbidden_host`: the Host header is not the address we serve.
    #[error("the Host {0:?} is not the address Hearth serves; open the app at {1}")]
    ForbiddenHost(String, String),
    /// 403 `forbidden_origin`: the Origin is not the app's, or is missing on
    /// a request that changes something.
    #[error("requests from origin {0:?} are refused; only the Hearth app may call this API")]
    ForbiddenOrigin(String),
    /// 403 `forbidden_fetch_site`: `Sec-Fetch-Site` is missing or not
    /// `same-origin`.
    #[error(
        "only same-origin requests from the Hearth app are answered (Sec-Fetch-Site was {0:?})"
    )]
    ForbiddenFetchSite(String),
    /// 403 `missing_token`: no `X-Hearth-Token`.
    #[error(
        "the key to Hearth's local server is missing: open Hearth once from the link `hearth serve` printed when it started (…/#token=…); this browser keeps the key"
    )]
    MissingToken,
    /// 403 `bad_token`: the key is not this install's.
    #[error(
        "the key to Hearth's local server does not match: open Hearth again from the link `hearth serve` printed when it started (…/#token=…)"
    )]
    BadToken,
    /// 403 `preflight_refused`: CORS preflights are never granted.
    #[error("cross-origin requests are not allowed (CORS preflight refused)")]
    PreflightRefused,
}

impl GuardError {
    pub fn code(&self) -> ApiErrorCode {
        match self {
            GuardError::ForbiddenPeer => ApiErrorCode::ForbiddenPeer,
            GuardError::ForbiddenHost(..) => ApiErrorCode::ForbiddenHost,
            GuardError::ForbiddenOrigin(_) => ApiErrorCode::ForbiddenOrigin,
            GuardError::ForbiddenFetchSite(_) => ApiErrorCode::ForbiddenFetchSite,
            GuardError::MissingToken => ApiErrorCode::MissingToken,
            GuardError::BadToken => ApiErrorCode::BadToken,
            GuardError::PreflightRefused => ApiErrorCode::PreflightRefused,
        }
    }
}

/// Who may call: the loopback hosts and origins of this server, and the
/// token.
#[derive(Clone, Debug)]
pub struct AppGuard {
    /// `127.0.0.1:8080`, `localhost:8080`, … (lower case).
    hosts: Vec<String>,
    /// `http://` + each host.
    origins: Vec<String>,
    token: ApiToken,
}

impl AppGuard {
    /// The guard for a server bound to `bound`. Loopback and unspecified
    /// binds accept the loopback names of `bound`'s port; any other bind
    /// (a LAN address) accepts nothing, because its peers are not loopback.
    pub fn for_bound_address(bound: SocketAddr, token: ApiToken) -> Self {
        let port = bound.port();
        let hosts = match bound.ip() {
            IpAddr::V4(v4) if v4.is_loopback() => {
                vec![format!("{v4}:{port}"), format!("localhost:{port}")]
            }
            IpAddr::V6(v6) if v6.is_loopback() => {
                vec![format!("[::1]:{port}"), format!("localhost:{port}")]
            }
            ip if ip.is_unspecified() => vec![
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
            ],
            IpAddr::V4(_) | IpAddr::V6(_) => Vec::new(),
        };
        Self::with_hosts(hosts, token)
    }

    /// A guard accepting exactly `hosts` (`name:port`). On port 80 the
    /// forms without a port are accepted too, since browsers leave the
    /// default port out of `Host` and `Origin`.
    pub fn with_hosts(hosts: Vec<String>, token: ApiToken) -> Self {
        let mut all: Vec<String> = Vec::new();
        for h in hosts {
            let h = h.to_ascii_lowercase();
            let bare = h.strip_suffix(":80").map(str::to_string);
            all.push(h);
            all.extend(bare);
        }
        let hosts = all;
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Self {
            hosts,
            origins,
            token,
        }
    }

    #[cfg(test)]
    pub fn token(&self) -> &ApiToken {
        &self.token
    }

    /// Whether `host` (a `Host` header) is one this server answers to.
    pub fn serves_host(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Whether `origin` is the app's own (`http://` + a host served).
    pub fn is_app_origin(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// Whether `candidate` is this install's key: routes that must never
    /// take it (the agents' MCP endpoint) refuse it by name.
    pub fn is_app_key(&self, candidate: &[u8]) -> bool {
        self.token.matches(candidate)
    }

    /// Where the app should be opened, for messages.
    pub fn app_origin(&self) -> &str {
        self.origins
            .first()
            .map(String::as_str)
            .unwrap_or("http://127.0.0.1")
    }

    /// Checks one request; see the module documentation for the order.
    pub fn check(
        &self,
        method: &Method,
        headers: &HeaderMap,
        authority: Option<&str>,
        peer: Option<SocketAddr>,
    ) -> Result<(), GuardError> {
        match peer {
            Some(addr) if addr.ip().to_canonical().is_loopback() => {}
            Some(_) | None => return Err(GuardError::ForbiddenPeer),
        }
        if method == Method::OPTIONS {
            return Err(GuardError::PreflightRefused);
        }
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .or(authority)
            .unwrap_or("");
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err(GuardError::ForbiddenHost(
                shorten(host),
                self.app_origin().to_string(),
            ));
        }
        let site = headers
            .get("sec-fetch-site")
            .map(|v| v.to_str().unwrap_or("(not text)"));
        if site != Some("same-origin") {
            return Err(GuardError::ForbiddenFetchSite(shorten(
                site.unwrap_or("(missing)"),
            )));
        }
        match headers.get(header::ORIGIN).map(|v| v.to_str()) {
            Some(Ok(origin)) if self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) => {}
            Some(Ok(origin)) => return Err(GuardError::ForbiddenOrigin(shorten(origin))),
            Some(Err(_)) => return Err(GuardError::ForbiddenOrigin("(not text)".into())),
            None if method == Method::GET || method == Method::HEAD => {}
            None => return Err(GuardError::ForbiddenOrigin("(missing)".into())),
        }
        match headers.get(TOKEN_HEADER) {
            None => Err(GuardError::MissingToken),
            Some(v) if self.token.matches(v.as_bytes()) => Ok(()),
            Some(_) => Err(GuardError::BadToken),
        }
    }

    fn check_request(&self, req: &Request) -> Result<(), GuardError> {
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        self.check(
            req.method(),
            req.headers(),
            req.uri().authority().map(|a| a.as_str()),
            peer,
        )
    }
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

async fn guarded(guard: &AppGuard, req: Request, next: Next) -> Response {
    match guard.check_request(&req) {
        Ok(()) => next.run(req).await,
        Err(e) => {
            tracing::warn!(
                target: "hearth::net",
                method = %req.method(),
                path = req.uri().path(),
                code = e.code().as_str(),
                "refused a request that is not from the app"
            );
            e.into_response()
        }
    }
}

/// Middleware: same-origin checks and the key.
pub async fn require_token(
    State(guard): State<Arc<AppGuard>>,
    req: Request,
    next: Next,
) -> Response {
    guarded(&guard, req, next).await
}

/// `router` with every route behind the guard.
pub fn protect<S: Clone + Send + Sync + 'static>(
    router: Router<S>,
    guard: Arc<AppGuard>,
) -> Router<S> {
    router.layer(middleware::from_fn_with_state(guard, require_token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard() -> AppGuard {
        AppGuard::for_bound_address(
            "127.0.0.1:8080".parse().unwrap(),
            ApiToken::generate().unwrap(),
        )
    }

    #[test]
    fn hosts_follow_the_bound_address() {
        let token = ApiToken::generate().unwrap();
        let cases: Vec<(&str, Vec<&str>)> = vec![
            ("127.0.0.1:8080", vec!["127.0.0.1:8080", "localhost:8080"]),
            ("127.0.0.2:81", vec!["127.0.0.2:81", "localhost:81"]),
            ("[::1]:9000", vec!["[::1]:9000", "localhost:9000"]),
            (
                "0.0.0.0:8080",
                vec!["127.0.0.1:8080", "localhost:8080", "[::1]:8080"],
            ),
            ("192.168.1.5:8080", vec![]),
            (
                "127.0.0.1:80",
                vec!["127.0.0.1:80", "127.0.0.1", "localhost:80", "localhost"],
            ),
        ];
        for (bound, hosts) in cases {
            let g = AppGuard::for_bound_address(bound.parse().unwrap(), token.clone());
            assert_eq!(g.hosts, hosts, "{bound}");
        }
    }

    /// (method, host, sec-fetch-site, origin, token?, peer) → result
    #[test]
    fn decision_table() {
        let g = guard();
        let good = g.token().as_str().to_string();
        let local: SocketAddr = "127.0.0.1:5555".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:5555".parse().unwrap();
        let lan: SocketAddr = "192.168.1.9:5555".parse().unwrap();
        let app = Some("http://127.0.0.1:8080");
        type Case<'a> = (
            Method,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
            Option<SocketAddr>,
            Result<(), GuardError>,
        );
        let cases: Vec<Case> = vec![
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                app,
                Some(&good),
                Some(local),
                Ok(()),
            ),
            (
                Method::POST,
                Some("LOCALHOST:8080"),
                Some("same-origin"),
                Some("http://localhost:8080"),
                Some(&good),
                Some(mapped),
                Ok(()),
            ),
            (
                Method::GET,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                None,
                None,
                Some(local),
                Err(GuardError::MissingToken),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                app,
                Some("nope"),
                Some(local),
                Err(GuardError::BadToken),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                app,
                Some(&good),
                Some(lan),
                Err(GuardError::ForbiddenPeer),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                app,
                Some(&good),
                None,
                Err(GuardError::ForbiddenPeer),
            ),
            (
                Method::OPTIONS,
                Some("127.0.0.1:8080"),
                None,
                Some("https://evil.example"),
                None,
                Some(local),
                Err(GuardError::PreflightRefused),
            ),
            (
                Method::POST,
                Some("evil.example:8080"),
                Some("same-origin"),
                Some("http://evil.example:8080"),
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenHost(
                    "evil.example:8080".into(),
                    "http://127.0.0.1:8080".into(),
                )),
            ),
            (
                Method::POST,
                Some("127.0.0.1:9999"),
                Some("same-origin"),
                app,
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenHost(
                    "127.0.0.1:9999".into(),
                    "http://127.0.0.1:8080".into(),
                )),
            ),
            (
                Method::POST,
                None,
                Some("same-origin"),
                app,
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenHost(
                    "".into(),
                    "http://127.0.0.1:8080".into(),
                )),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("cross-site"),
                app,
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenFetchSite("cross-site".into())),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-site"),
                app,
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenFetchSite("same-site".into())),
            ),
            (
                Method::GET,
                Some("127.0.0.1:8080"),
                Some("none"),
                None,
                None,
                Some(local),
                Err(GuardError::ForbiddenFetchSite("none".into())),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                None,
                app,
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenFetchSite("(missing)".into())),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                Some("https://evil.example"),
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenOrigin("https://evil.example".into())),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                Some("null"),
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenOrigin("null".into())),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                Some("http://localhost:8080"),
                Some(&good),
                Some(local),
                Ok(()),
            ),
            (
                Method::POST,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                None,
                Some(&good),
                Some(local),
                Err(GuardError::ForbiddenOrigin("(missing)".into())),
            ),
            (
                Method::GET,
                Some("127.0.0.1:8080"),
                Some("same-origin"),
                Some("http://127.0.0.1:8080.evil.example"),
                None,
                Some(local),
                Err(GuardError::ForbiddenOrigin(
                    "http://127.0.0.1:8080.evil.example".into(),
                )),
            ),
        ];
        for (i, (method, host, site, origin, token, peer, expected)) in
            cases.into_iter().enumerate()
        {
            let mut h = HeaderMap::new();
            if let Some(v) = host {
                h.insert(header::HOST, HeaderValue::from_str(v).unwrap());
            }
            if let Some(v) = site {
                h.insert("sec-fetch-site", HeaderValue::from_str(v).unwrap());
            }
            if let Some(v) = origin {
                h.insert(header::ORIGIN, HeaderValue::from_str(v).unwrap());
            }
            if let Some(v) = token {
                h.insert(TOKEN_HEADER, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(g.check(&method, &h, None, peer), expected, "case {i}");
        }
    }
}
