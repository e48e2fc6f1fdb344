//! The test harness of the API and its features: the web routes behind
//! the guard, driven with `oneshot`; upstream servers started by each test
//! on 127.0.0.1; an injectable resolver so names like `evil.test` can point
//! at loopback; and a test PKI for TLS. The layers' tests share it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Query};
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::api::guard::{AppGuard, TOKEN_HEADER};
use crate::api::ratelimit::BucketConfig;
use crate::api::token::ApiToken;
use crate::client::resolve::{Resolve, StaticResolver};
use crate::client::{ClientConfig, PrivateAllow};
use crate::web::config::NetConfig;
use crate::web::{NetState, router};

pub(crate) const APP_HOST: &str = "127.0.0.1:8080";
pub(crate) const APP_ORIGIN: &str = "http://127.0.0.1:8080";

// ---------------------------------------------------------------------------
// Harness

pub(crate) struct Harness {
    pub(crate) app: Router,
    pub(crate) token: String,
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) fn harness_with(
    adjust: impl FnOnce(&mut NetConfig),
    resolver: Arc<dyn Resolve>,
) -> Harness {
    harness_tls(adjust, resolver, ClientConfig::default_tls())
}

pub(crate) fn harness_tls(
    adjust: impl FnOnce(&mut NetConfig),
    resolver: Arc<dyn Resolve>,
    tls: Arc<rustls::ClientConfig>,
) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mut config = NetConfig::defaults(dir.path().to_path_buf());
    // Tests make many calls; the ones about rate limits set their own.
    for bucket in config.rate_limits.values_mut() {
        *bucket = BucketConfig {
            per_minute: 1e6,
            burst: 1000,
        };
    }
    adjust(&mut config);
    let token = ApiToken::load_or_create(dir.path()).unwrap();
    let guard = AppGuard::for_bound_address(APP_HOST.parse().unwrap(), token.clone());
    let state = Arc::new(NetState::new(config, guard, resolver, tls));
    Harness {
        app: router(state),
        token: token.as_str().to_string(),
        dir,
    }
}

pub(crate) fn harness(adjust: impl FnOnce(&mut NetConfig)) -> Harness {
    harness_with(adjust, Arc::new(test_resolver()))
}

pub(crate) fn test_resolver() -> StaticResolver {
    let lo: IpAddr = "127.0.0.1".parse().unwrap();
    StaticResolver::new()
        .with("evil.test", &[lo])
        .with("localhost", &[lo, "::1".parse().unwrap()])
        .with("metadata.test", &["169.254.169.254".parse().unwrap()])
        .with(
            "mixed.test",
            &[
                "93.184.215.14".parse().unwrap(),
                "10.0.0.1".parse().unwrap(),
            ],
        )
        .with("ula.test", &["fd12::1".parse().unwrap()])
        .with("blocked.test", &[lo])
        .with("tls.test", &[lo])
        .with("other.test", &[lo])
}

pub(crate) fn allow(addr: SocketAddr) -> PrivateAllow {
    PrivateAllow::parse(&addr.to_string()).unwrap()
}

/// One request to the API, as the app would send it unless changed.
#[derive(Clone)]
pub(crate) struct Call {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) body: Option<Value>,
    pub(crate) host: Option<String>,
    pub(crate) origin: Option<String>,
    pub(crate) site: Option<String>,
    pub(crate) token: Option<String>,
    pub(crate) peer: Option<SocketAddr>,
    pub(crate) content_type: Option<String>,
}

impl Call {
    pub(crate) fn new(h: &Harness, method: Method, path: &str) -> Self {
        Self {
            method,
            path: path.to_string(),
            body: None,
            host: Some(APP_HOST.into()),
            origin: Some(APP_ORIGIN.into()),
            site: Some("same-origin".into()),
            token: Some(h.token.clone()),
            peer: Some("127.0.0.1:50000".parse().unwrap()),
            content_type: Some("application/json".into()),
        }
    }

    pub(crate) fn post(h: &Harness, path: &str, body: Value) -> Self {
        let mut c = Self::new(h, Method::POST, path);
        c.body = Some(body);
        c
    }

    pub(crate) fn request(&self) -> Request<Body> {
        let mut b = Request::builder()
            .method(self.method.clone())
            .uri(&self.path);
        let pairs = [
            (header::HOST.as_str(), &self.host),
            (header::ORIGIN.as_str(), &self.origin),
            ("sec-fetch-site", &self.site),
            (TOKEN_HEADER, &self.token),
            (header::CONTENT_TYPE.as_str(), &self.content_type),
        ];
        for (name, value) in pairs {
            if let Some(v) = value {
                b = b.header(name, v);
            }
        }
        let mut req = b
            .body(match &self.body {
                Some(v) => Body::from(v.to_string()),
                None => Body::empty(),
            })
            .unwrap();
        if let Some(peer) = self.peer {
            req.extensions_mut().insert(ConnectInfo(peer));
        }
        req
    }

    pub(crate) async fn send(&self, h: &Harness) -> (StatusCode, HeaderMap, Value) {
        let res = h.app.clone().oneshot(self.request()).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (status, headers, value)
    }
}

pub(crate) fn error(code: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message}})
}

pub(crate) fn code_of(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("(no code)")
}

pub(crate) async fn fetch(h: &Harness, body: Value) -> (StatusCode, Value) {
    let (s, _, v) = Call::post(h, "/api/fetch", body).send(h).await;
    (s, v)
}

// ---------------------------------------------------------------------------
// Upstream test servers

/// Serves `app` on 127.0.0.1 on a free port.
pub(crate) async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// Serves raw bytes: for each connection, reads the request head, then
/// writes `head`, waits `pause`, and writes `tail`.
pub(crate) async fn serve_raw(head: Vec<u8>, pause: Duration, tail: Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let (head, tail) = (head.clone(), tail.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = sock.write_all(&head).await;
                tokio::time::sleep(pause).await;
                let _ = sock.write_all(&tail).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    addr
}

pub(crate) const PAGE: &str = r#"<!doctype html><html><head><title>Test &amp; Page</title>
<style>body{}</style><script>alert("x")</script></head>
<body><nav><a href="/home">Home</a></nav>
<h1>Welcome</h1><p>Hello <b>world</b>. Read <a href="/docs/intro">the intro</a>.</p>
<ul><li>one</li><li>two</li></ul>
<pre><code class="language-sh">echo hi</code></pre>
<p><a href="https://example.org/x">Elsewhere</a></p></body></html>"#;

pub(crate) fn content(ct: &'static str, body: impl Into<Body>) -> Response {
    ([(header::CONTENT_TYPE, ct)], body.into()).into_response()
}

#[derive(serde::Deserialize)]
pub(crate) struct To {
    pub(crate) to: String,
}

pub(crate) async fn upstream() -> SocketAddr {
    let app = Router::new()
        .route(
            "/page.html",
            get(|| async { content("text/html; charset=utf-8", PAGE) }),
        )
        .route(
            "/data.json",
            get(|| async { content("application/json", r#"{"name":"hearth","tags":["a","b"]}"#) }),
        )
        .route(
            "/text.txt",
            get(|| async { content("text/plain", "just text\n") }),
        )
        .route(
            "/doc.pdf",
            get(|| async { content("application/pdf", &b"%PDF-1.7 ..."[..]) }),
        )
        .route(
            "/blob",
            get(|| async { content("application/octet-stream", &b"\x00\x01\x02"[..]) }),
        )
        .route(
            "/bad.json",
            get(|| async { content("application/json", "{nope") }),
        )
        .route(
            "/latin1",
            get(|| async {
                content(
                    "text/html; charset=iso-8859-1",
                    &b"<title>Caf\xe9</title><p>cr\xe8me</p>"[..],
                )
            }),
        )
        .route(
            "/gzip",
            get(|| async {
                use std::io::Write;
                let mut gz =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                gz.write_all(b"<h2>Zipped</h2><p>inside</p>").unwrap();
                (
                    [
                        (header::CONTENT_TYPE, "text/html"),
                        (header::CONTENT_ENCODING, "gzip"),
                    ],
                    gz.finish().unwrap(),
                )
                    .into_response()
            }),
        )
        .route(
            "/big",
            get(|| async { content("text/plain", vec![b'a'; 3 * 1024 * 1024]) }),
        )
        .route(
            "/redirect",
            get(|Query(q): Query<To>| async move { Redirect::temporary(&q.to) }),
        )
        .route(
            "/chain/{n}",
            get(
                |axum::extract::Path(n): axum::extract::Path<u32>| async move {
                    if n == 0 {
                        content("text/plain", "end of chain").into_response()
                    } else {
                        Redirect::to(&format!("/chain/{}", n - 1)).into_response()
                    }
                },
            ),
        )
        .route(
            "/error",
            get(|| async { (StatusCode::NOT_FOUND, "missing") }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }),
        )
        .route(
            "/echo-host",
            get(|headers: HeaderMap| async move {
                content(
                    "text/plain",
                    headers
                        .get(header::HOST)
                        .map(|v| v.to_str().unwrap().to_string())
                        .unwrap_or_default(),
                )
            }),
        );
    serve(app).await
}

// ---------------------------------------------------------------------------
// TLS

/// A test CA and a TLS server config for a leaf certificate naming `names`.
pub(crate) fn test_pki(names: &[&str]) -> (rustls::RootCertStore, Arc<rustls::ServerConfig>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "Hearth test CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf =
        rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der().clone()], key)
    .unwrap();
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    (roots, Arc::new(server))
}

/// An HTTPS server answering every request with the SNI name it saw.
pub(crate) async fn serve_tls(config: Arc<rustls::ServerConfig>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else {
                    return;
                };
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let body = format!("sni={}", tls.get_ref().1.server_name().unwrap_or("(none)"));
                let res = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(res.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    addr
}
