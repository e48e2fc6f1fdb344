//! The guarded HTTP client: one request, one hop, to an address it checked.
//!
//! For every request it:
//! 1. accepts only `http` and `https` URLs without credentials;
//! 2. resolves the host itself (IP literals are taken as they are: the
//!    WHATWG parser of the `url` crate has already turned `2130706433`,
//!    `0x7f.1`, `0177.0.0.1` and `127.1` into `127.0.0.1`);
//! 3. checks every address against [`address::check`] — unless that exact
//!    address and port is on the explicit `allow_private` list;
//! 4. refuses the Fetch standard's bad ports;
//! 5. connects to one of the checked addresses (never resolving again),
//!    with TLS verified against the web PKI and SNI set to the URL's host;
//! 6. sends HTTP/1.1 with the URL's `Host`.
//!
//! It ignores proxy environment variables on purpose: a proxy would do its
//! own resolution, out of our sight. Redirects are the caller's business
//! (see `web::fetch`), so each hop comes back through these checks; the
//! size limits on what a response may carry are in [`body`].

pub mod address;
pub mod body;
pub mod resolve;

#[cfg(test)]
mod attacks;

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hearth_core::api::error::ApiErrorCode;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use url::{Host, Position, Url};

use self::address::BlockedAddress;
use self::resolve::Resolve;
use crate::api::error::Refusal;

/// Why a request to a remote server did not produce a usable response.
/// The HTTP status the API answers with is given for each variant.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// 400 `invalid_url`: not a URL the WHATWG parser accepts.
    #[error("{url:?} is not a valid URL: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// 400 `unsupported_scheme`: only http and https are fetched.
    #[error("only http and https URLs can be fetched, not {0}:")]
    UnsupportedScheme(String),
    /// 400 `url_has_credentials`: user:password@ in a URL is refused, so
    /// secrets never travel through (or get logged by) the proxy.
    #[error("URLs with a user name or password are not fetched; remove the 'user:password@' part")]
    UrlHasCredentials,
    /// 403 `blocked_port`: a port the Fetch standard forbids (SMTP, SSH, …).
    #[error("port {0} is used by a non-web service and is not fetched")]
    BlockedPort(u16),
    /// 403 `blocked_address`: the host is, or resolves to, an address that is
    /// not on the public internet.
    #[error(
        "{host} is not on the public internet: {blocked}. Hearth's proxy only fetches public addresses"
    )]
    BlockedAddress {
        host: String,
        blocked: BlockedAddress,
    },
    /// 403 `blocked_domain`: the skill's domain lists refuse the host.
    #[error("{0}")]
    BlockedDomain(String),
    /// 502 `dns_failed`: the host name did not resolve.
    #[error("cannot resolve {host}: {detail}")]
    DnsFailed { host: String, detail: String },
    /// 502 `connect_failed`: no checked address accepted a connection.
    #[error("cannot connect to {host}: {detail}")]
    ConnectFailed { host: String, detail: String },
    /// 502 `tls_failed`: the TLS handshake or certificate check failed.
    #[error("secure connection to {host} failed: {detail}")]
    TlsFailed { host: String, detail: String },
    /// 504 `timeout`: a time limit ran out.
    #[error("{host} took longer than {limit:?} to {stage}")]
    Timeout {
        host: String,
        stage: &'static str,
        limit: Duration,
    },
    /// 502 `too_many_redirects`: more than the redirect limit.
    #[error("more than {0} redirects; stopped following them")]
    TooManyRedirects(u32),
    /// 502 `bad_redirect`: a redirect without a usable Location.
    #[error("a redirect could not be followed: {0}")]
    BadRedirect(String),
    /// 502 `upstream_status`: the server answered with an error status.
    #[error("the server answered HTTP {status}{}", reason.map(|r| format!(" {r}")).unwrap_or_default())]
    UpstreamStatus {
        status: u16,
        reason: Option<&'static str>,
    },
    /// 502 `upstream_failed`: the HTTP exchange broke off.
    #[error("the exchange with {host} failed: {detail}")]
    UpstreamFailed { host: String, detail: String },
    /// 502 `response_too_large`: the body is larger than allowed.
    #[error("the response is larger than the {limit}-byte limit{}", declared.map(|d| format!(" (it declares {d} bytes)")).unwrap_or_default())]
    ResponseTooLarge { limit: u64, declared: Option<u64> },
    /// 415 `unsupported_content_type`: not HTML, JSON or text.
    #[error("{0} content is not supported; web_fetch reads HTML, JSON and plain text")]
    UnsupportedContentType(String),
    /// 502 `unsupported_content_encoding`: a compression we did not ask for.
    #[error("the server compressed the response with {0:?}, which is not supported")]
    UnsupportedContentEncoding(String),
    /// 502 `invalid_json`: declared JSON that does not parse.
    #[error("the server sent invalid JSON: {0}")]
    InvalidJson(String),
}

impl Refusal for FetchError {
    fn code(&self) -> ApiErrorCode {
        match self {
            FetchError::InvalidUrl { .. } => ApiErrorCode::InvalidUrl,
            FetchError::UnsupportedScheme(_) => ApiErrorCode::UnsupportedScheme,
            FetchError::UrlHasCredentials => ApiErrorCode::UrlHasCredentials,
            FetchError::BlockedPort(_) => ApiErrorCode::BlockedPort,
            FetchError::BlockedAddress { .. } => ApiErrorCode::BlockedAddress,
            FetchError::BlockedDomain(_) => ApiErrorCode::BlockedDomain,
            FetchError::DnsFailed { .. } => ApiErrorCode::DnsFailed,
            FetchError::ConnectFailed { .. } => ApiErrorCode::ConnectFailed,
            FetchError::TlsFailed { .. } => ApiErrorCode::TlsFailed,
            FetchError::Timeout { .. } => ApiErrorCode::Timeout,
            FetchError::TooManyRedirects(_) => ApiErrorCode::TooManyRedirects,
            FetchError::BadRedirect(_) => ApiErrorCode::BadRedirect,
            FetchError::UpstreamStatus { .. } => ApiErrorCode::UpstreamStatus,
            FetchError::UpstreamFailed { .. } => ApiErrorCode::UpstreamFailed,
            FetchError::ResponseTooLarge { .. } => ApiErrorCode::ResponseTooLarge,
            FetchError::UnsupportedContentType(_) => ApiErrorCode::UnsupportedContentType,
            FetchError::UnsupportedContentEncoding(_) => ApiErrorCode::UnsupportedContentEncoding,
            FetchError::InvalidJson(_) => ApiErrorCode::InvalidJson,
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            FetchError::InvalidUrl { .. }
            | FetchError::UnsupportedScheme(_)
            | FetchError::UrlHasCredentials => StatusCode::BAD_REQUEST,
            FetchError::BlockedPort(_)
            | FetchError::BlockedAddress { .. }
            | FetchError::BlockedDomain(_) => StatusCode::FORBIDDEN,
            FetchError::UnsupportedContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            FetchError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            FetchError::DnsFailed { .. }
            | FetchError::ConnectFailed { .. }
            | FetchError::TlsFailed { .. }
            | FetchError::TooManyRedirects(_)
            | FetchError::BadRedirect(_)
            | FetchError::UpstreamStatus { .. }
            | FetchError::UpstreamFailed { .. }
            | FetchError::ResponseTooLarge { .. }
            | FetchError::UnsupportedContentEncoding(_)
            | FetchError::InvalidJson(_) => StatusCode::BAD_GATEWAY,
        }
    }
}

/// One destination that may be fetched although it is not public, e.g. a
/// test server or a local SearXNG. Written `IP:PORT`, `[IPv6]:PORT`, or a
/// bare address for any port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrivateAllow {
    pub ip: IpAddr,
    /// `None`: every port.
    pub port: Option<u16>,
}

/// Why an allow entry was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrivateAllowError {
    #[error(
        "{0:?} is not an address: write IP:PORT, [IPv6]:PORT or a bare IP (host names are not accepted, because what is checked is the resolved address)"
    )]
    NotAnAddress(String),
    #[error("{0:?}: the unspecified, broadcast and multicast addresses cannot be allowed")]
    Meaningless(String),
}

impl PrivateAllow {
    pub fn parse(s: &str) -> Result<Self, PrivateAllowError> {
        let s = s.trim();
        let parsed = if let Ok(sa) = s.parse::<SocketAddr>() {
            Self {
                ip: address::canonical(sa.ip()),
                port: Some(sa.port()),
            }
        } else if let Ok(ip) = s
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(s)
            .parse::<IpAddr>()
        {
            Self {
                ip: address::canonical(ip),
                port: None,
            }
        } else {
            return Err(PrivateAllowError::NotAnAddress(s.to_string()));
        };
        let meaningless = match parsed.ip {
            IpAddr::V4(v4) => v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast(),
            IpAddr::V6(v6) => v6.is_unspecified() || v6.is_multicast(),
        };
        if meaningless {
            return Err(PrivateAllowError::Meaningless(s.to_string()));
        }
        Ok(parsed)
    }

    pub fn matches(&self, ip: IpAddr, port: u16) -> bool {
        self.ip == address::canonical(ip) && self.port.is_none_or(|p| p == port)
    }
}

impl fmt::Display for PrivateAllow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.ip, self.port) {
            (IpAddr::V4(ip), Some(port)) => write!(f, "{ip}:{port}"),
            (IpAddr::V6(ip), Some(port)) => write!(f, "[{ip}]:{port}"),
            (ip, None) => write!(f, "{ip}"),
        }
    }
}

/// What the client is allowed to do.
#[derive(Clone)]
pub struct ClientConfig {
    pub connect_timeout: Duration,
    pub allow_private: Vec<PrivateAllow>,
    pub resolver: Arc<dyn Resolve>,
    pub tls: Arc<rustls::ClientConfig>,
    pub user_agent: HeaderValue,
}

impl ClientConfig {
    /// The web PKI roots (Mozilla's list), HTTP/1.1 only.
    pub fn default_tls() -> Arc<rustls::ClientConfig> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        Self::tls_with_roots(roots)
    }

    /// A TLS configuration trusting `roots` only.
    pub fn tls_with_roots(roots: rustls::RootCertStore) -> Arc<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap_or_else(|e| panic!("ring supports the default TLS versions: {e}"))
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

/// A URL that passed the checks, with the addresses to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedTarget {
    /// The host as the URL carries it (`example.com`, `1.2.3.4`, `[::1]`).
    pub host: String,
    pub port: u16,
    pub addrs: Vec<SocketAddr>,
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// The client. Cheap to clone.
#[derive(Clone)]
pub struct GuardedClient {
    config: Arc<ClientConfig>,
}

/// `scheme://host[:port]/path` of `url`: what may be logged. User names,
/// passwords, query strings and fragments can hold secrets and are left
/// out (built from the parts, never sliced, so userinfo cannot slip in).
pub fn redact(url: &Url) -> String {
    let mut s = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        s.push_str(&format!(":{port}"));
    }
    s.push_str(url.path());
    s
}

/// Parses `input` as the WHATWG URL standard does.
pub fn parse_url(input: &str) -> Result<Url, FetchError> {
    Url::parse(input.trim()).map_err(|e| FetchError::InvalidUrl {
        url: shorten(input),
        reason: e.to_string(),
    })
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

impl GuardedClient {
    pub fn new(config: ClientConfig) -> Self {
        Self {
            config: Arc::new(config),
        }
    }

    /// Checks `url`'s scheme, credentials, host and port, resolving the host
    /// and checking every address. Nothing is connected to.
    pub async fn check_target(&self, url: &Url) -> Result<CheckedTarget, FetchError> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(FetchError::UnsupportedScheme(other.to_string())),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(FetchError::UrlHasCredentials);
        }
        let port = url
            .port_or_known_default()
            .ok_or_else(|| FetchError::InvalidUrl {
                url: redact(url),
                reason: "no port".into(),
            })?;
        let host_str = url.host_str().unwrap_or_default().to_string();
        let ips: Vec<IpAddr> = match url.host() {
            Some(Host::Ipv4(v4)) => vec![IpAddr::V4(v4)],
            Some(Host::Ipv6(v6)) => vec![IpAddr::V6(v6)],
            Some(Host::Domain(name)) => {
                let resolved = tokio::time::timeout(
                    self.config.connect_timeout,
                    self.config.resolver.resolve(name),
                )
                .await
                .map_err(|_| FetchError::Timeout {
                    host: host_str.clone(),
                    stage: "resolve",
                    limit: self.config.connect_timeout,
                })?
                .map_err(|e| FetchError::DnsFailed {
                    host: host_str.clone(),
                    detail: e.to_string(),
                })?;
                if resolved.is_empty() {
                    return Err(FetchError::DnsFailed {
                        host: host_str,
                        detail: "no addresses".into(),
                    });
                }
                resolved
            }
            None => {
                return Err(FetchError::InvalidUrl {
                    url: redact(url),
                    reason: "no host".into(),
                });
            }
        };
        let mut all_allowlisted = true;
        for ip in &ips {
            let allowlisted = self
                .config
                .allow_private
                .iter()
                .any(|a| a.matches(*ip, port));
            all_allowlisted &= allowlisted;
            if !allowlisted && let Err(blocked) = address::check(*ip) {
                return Err(FetchError::BlockedAddress {
                    host: host_str,
                    blocked,
                });
            }
        }
        if !all_allowlisted && address::is_bad_port(port) {
            return Err(FetchError::BlockedPort(port));
        }
        Ok(CheckedTarget {
            host: host_str,
            port,
            addrs: ips
                .into_iter()
                .map(|ip| SocketAddr::new(address::canonical(ip), port))
                .collect(),
        })
    }

    /// Sends one request to `url` (no redirects followed) and returns the
    /// response head with its body still to be read. `headers` are sent as
    /// given, except `Host`, which always comes from `url`; `User-Agent`
    /// defaults to the client's.
    pub async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<Incoming>, FetchError> {
        let target = self.check_target(url).await?;
        let io = self.connect(url, &target).await?;
        let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
            .handshake::<_, Full<Bytes>>(TokioIo::new(io))
            .await
            .map_err(|e| FetchError::UpstreamFailed {
                host: target.host.clone(),
                detail: e.to_string(),
            })?;
        tokio::spawn(async move {
            // Ends when the response body is read or dropped.
            let _ = conn.await;
        });
        let host_header = &url[Position::BeforeHost..Position::AfterPort];
        let path = &url[Position::BeforePath..Position::AfterQuery];
        let mut req = Request::builder()
            .method(method)
            .uri(if path.is_empty() { "/" } else { path })
            .body(Full::new(body))
            .map_err(|e| FetchError::InvalidUrl {
                url: redact(url),
                reason: e.to_string(),
            })?;
        let h = req.headers_mut();
        *h = headers;
        h.insert(
            HOST,
            HeaderValue::from_str(host_header).map_err(|e| FetchError::InvalidUrl {
                url: redact(url),
                reason: e.to_string(),
            })?,
        );
        h.entry(hyper::header::USER_AGENT)
            .or_insert_with(|| self.config.user_agent.clone());
        sender
            .send_request(req)
            .await
            .map_err(|e| FetchError::UpstreamFailed {
                host: target.host.clone(),
                detail: e.to_string(),
            })
    }

    async fn connect(&self, url: &Url, target: &CheckedTarget) -> Result<Box<dyn Io>, FetchError> {
        let limit = self.config.connect_timeout;
        let tcp = tokio::time::timeout(limit, async {
            let mut last: Option<std::io::Error> = None;
            for addr in &target.addrs {
                match TcpStream::connect(addr).await {
                    Ok(s) => return Ok(s),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| std::io::Error::other("no address")))
        })
        .await
        .map_err(|_| FetchError::Timeout {
            host: target.host.clone(),
            stage: "connect",
            limit,
        })?
        .map_err(|e| FetchError::ConnectFailed {
            host: target.host.clone(),
            detail: e.to_string(),
        })?;
        let _ = tcp.set_nodelay(true);
        if url.scheme() != "https" {
            return Ok(Box::new(tcp));
        }
        let server_name = match url.host() {
            Some(Host::Domain(d)) => {
                ServerName::try_from(d.to_string()).map_err(|e| FetchError::TlsFailed {
                    host: target.host.clone(),
                    detail: e.to_string(),
                })?
            }
            Some(Host::Ipv4(v4)) => ServerName::IpAddress(IpAddr::V4(v4).into()),
            Some(Host::Ipv6(v6)) => ServerName::IpAddress(IpAddr::V6(v6).into()),
            None => {
                return Err(FetchError::InvalidUrl {
                    url: redact(url),
                    reason: "no host".into(),
                });
            }
        };
        let connector = tokio_rustls::TlsConnector::from(self.config.tls.clone());
        let tls = tokio::time::timeout(limit, connector.connect(server_name, tcp))
            .await
            .map_err(|_| FetchError::Timeout {
                host: target.host.clone(),
                stage: "complete the TLS handshake",
                limit,
            })?
            .map_err(|e| FetchError::TlsFailed {
                host: target.host.clone(),
                detail: e.to_string(),
            })?;
        Ok(Box::new(tls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_urls_hold_no_secrets() {
        let cases = [
            (
                "http://user:pw@host.example:81/p/a?token=secret#frag",
                "http://host.example:81/p/a",
            ),
            (
                "https://example.com/reset?key=abc",
                "https://example.com/reset",
            ),
            ("https://[2001:db8::1]/x", "https://[2001:db8::1]/x"),
            ("http://example.com", "http://example.com/"),
        ];
        for (url, logged) in cases {
            assert_eq!(redact(&Url::parse(url).unwrap()), logged);
        }
    }

    #[test]
    fn private_allow_entries() {
        let cases: Vec<(&str, Result<&str, PrivateAllowError>)> = vec![
            ("127.0.0.1:8888", Ok("127.0.0.1:8888")),
            (" [::1]:9000 ", Ok("[::1]:9000")),
            ("[::ffff:127.0.0.1]:80", Ok("127.0.0.1:80")),
            ("10.0.0.5", Ok("10.0.0.5")),
            ("[fd00::1]", Ok("fd00::1")),
            (
                "localhost:80",
                Err(PrivateAllowError::NotAnAddress("localhost:80".into())),
            ),
            (
                "0.0.0.0:80",
                Err(PrivateAllowError::Meaningless("0.0.0.0:80".into())),
            ),
            (
                "[::]:80",
                Err(PrivateAllowError::Meaningless("[::]:80".into())),
            ),
            (
                "224.0.0.1",
                Err(PrivateAllowError::Meaningless("224.0.0.1".into())),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                PrivateAllow::parse(input).map(|a| a.to_string()),
                expected.map(str::to_string),
                "{input}"
            );
        }
        let a = PrivateAllow::parse("127.0.0.1:8888").unwrap();
        let any_port = PrivateAllow::parse("127.0.0.1").unwrap();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(
            [
                a.matches(lo, 8888),
                a.matches(lo, 8889),
                a.matches(mapped, 8888),
                any_port.matches(lo, 1)
            ],
            [true, false, true, true]
        );
    }
}
