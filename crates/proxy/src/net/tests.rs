//! Attack and behaviour tests of the network-tier API: the router driven
//! with `oneshot`, upstream servers started by each test on 127.0.0.1, and
//! an injectable resolver so names like `evil.test` can point at loopback.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Query};
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use hearth_core::web::{DocumentKind, FetchResponse, Link, SearchHit, SearchResponse};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tower::ServiceExt;

use super::client::{ClientConfig, PrivateAllow};
use super::config::NetConfig;
use super::guard::{AppGuard, TOKEN_HEADER};
use super::ratelimit::BucketConfig;
use super::resolve::{Resolve, ResolveFuture, StaticResolver};
use super::search::SearchBackend;
use super::token::ApiToken;
use super::{NetState, router};

const APP_HOST: &str = "127.0.0.1:8080";
const APP_ORIGIN: &str = "http://127.0.0.1:8080";

// ---------------------------------------------------------------------------
// Harness

struct Harness {
    app: Router,
    token: String,
    dir: tempfile::TempDir,
}

fn harness_with(adjust: impl FnOnce(&mut NetConfig), resolver: Arc<dyn Resolve>) -> Harness {
    harness_tls(adjust, resolver, ClientConfig::default_tls())
}

fn harness_tls(
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

fn harness(adjust: impl FnOnce(&mut NetConfig)) -> Harness {
    harness_with(adjust, Arc::new(test_resolver()))
}

fn test_resolver() -> StaticResolver {
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

fn allow(addr: SocketAddr) -> PrivateAllow {
    PrivateAllow::parse(&addr.to_string()).unwrap()
}

/// One request to the API, as the app would send it unless changed.
#[derive(Clone)]
struct Call {
    method: Method,
    path: String,
    body: Option<Value>,
    host: Option<String>,
    origin: Option<String>,
    site: Option<String>,
    token: Option<String>,
    peer: Option<SocketAddr>,
    content_type: Option<String>,
}

impl Call {
    fn new(h: &Harness, method: Method, path: &str) -> Self {
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

    fn post(h: &Harness, path: &str, body: Value) -> Self {
        let mut c = Self::new(h, Method::POST, path);
        c.body = Some(body);
        c
    }

    fn request(&self) -> Request<Body> {
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

    async fn send(&self, h: &Harness) -> (StatusCode, HeaderMap, Value) {
        let res = h.app.clone().oneshot(self.request()).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (status, headers, value)
    }
}

fn error(code: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message}})
}

fn code_of(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("(no code)")
}

async fn fetch(h: &Harness, body: Value) -> (StatusCode, Value) {
    let (s, _, v) = Call::post(h, "/api/fetch", body).send(h).await;
    (s, v)
}

// ---------------------------------------------------------------------------
// Upstream test servers

/// Serves `app` on 127.0.0.1 on a free port.
async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// Serves raw bytes: for each connection, reads the request head, then
/// writes `head`, waits `pause`, and writes `tail`.
async fn serve_raw(head: Vec<u8>, pause: Duration, tail: Vec<u8>) -> SocketAddr {
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

const PAGE: &str = r#"<!doctype html><html><head><title>Test &amp; Page</title>
<style>body{}</style><script>alert("x")</script></head>
<body><nav><a href="/home">Home</a></nav>
<h1>Welcome</h1><p>Hello <b>world</b>. Read <a href="/docs/intro">the intro</a>.</p>
<ul><li>one</li><li>two</li></ul>
<pre><code class="language-sh">echo hi</code></pre>
<p><a href="https://example.org/x">Elsewhere</a></p></body></html>"#;

fn content(ct: &'static str, body: impl Into<Body>) -> Response {
    ([(header::CONTENT_TYPE, ct)], body.into()).into_response()
}

#[derive(serde::Deserialize)]
struct To {
    to: String,
}

async fn upstream() -> SocketAddr {
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
// Who may call

#[tokio::test]
async fn the_session_needs_the_key_and_never_repeats_it() {
    let h = harness(|_| {});
    let mut c = Call::new(&h, Method::GET, "/api/session");
    c.origin = None;
    // Every header a browser on the app sends, but no key: nothing.
    let mut keyless = c.clone();
    keyless.token = None;
    let (status, _, v) = keyless.send(&h).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "missing_token")
    );
    assert!(!v.to_string().contains(&h.token));
    let (status, headers, v) = c.send(&h).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        v,
        json!({
            "header": "x-hearth-token",
            "version": env!("CARGO_PKG_VERSION"),
            "fetch": {"default_max_bytes": 2097152, "max_bytes": 10485760},
            "search": {"configured": false, "backend": null},
        })
    );
    assert_eq!(headers[header::CACHE_CONTROL], "no-store");
    assert!(headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());

    let mut cross = c.clone();
    cross.site = Some("cross-site".into());
    cross.origin = Some("https://evil.example".into());
    let (status, headers, v) = cross.send(&h).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(code_of(&v), "forbidden_fetch_site");
    assert!(headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
    assert!(!v.to_string().contains(&h.token));

    let mut rebound = c.clone();
    rebound.host = Some("evil.example:8080".into());
    let (status, _, v) = rebound.send(&h).await;
    assert_eq!(
        (status, v),
        (
            StatusCode::FORBIDDEN,
            error(
                "forbidden_host",
                "the Host \"evil.example:8080\" is not the address Hearth serves; open the app at http://127.0.0.1:8080"
            )
        )
    );
}

#[tokio::test]
async fn strangers_are_refused_on_every_route() {
    let h = harness(|_| {});
    let routes: Vec<(Method, &str, Option<Value>)> = vec![
        (
            Method::POST,
            "/api/fetch",
            Some(json!({"url": "https://example.com/"})),
        ),
        (Method::POST, "/api/search", Some(json!({"query": "x"}))),
        (Method::GET, "/api/search/backend", None),
        (
            Method::PUT,
            "/api/search/backend",
            Some(json!({"backend": "searxng", "url": "https://s.example"})),
        ),
        (Method::DELETE, "/api/search/backend", None),
        (Method::GET, "/api/unknown", None),
    ];
    type Change = fn(&mut Call);
    let attacks: Vec<(&str, Change, &str)> = vec![
        (
            "wrong origin",
            |c| c.origin = Some("https://evil.example".into()),
            "forbidden_origin",
        ),
        (
            "null origin",
            |c| c.origin = Some("null".into()),
            "forbidden_origin",
        ),
        (
            "look-alike origin",
            |c| c.origin = Some("http://127.0.0.1:8080.evil.example".into()),
            "forbidden_origin",
        ),
        (
            "other port origin",
            |c| c.origin = Some("http://127.0.0.1:3000".into()),
            "forbidden_origin",
        ),
        (
            "wrong host",
            |c| c.host = Some("evil.example:8080".into()),
            "forbidden_host",
        ),
        ("no host", |c| c.host = None, "forbidden_host"),
        ("missing token", |c| c.token = None, "missing_token"),
        (
            "wrong token",
            |c| c.token = Some("A".repeat(43)),
            "bad_token",
        ),
        (
            "empty token",
            |c| c.token = Some(String::new()),
            "bad_token",
        ),
        (
            "cross-site",
            |c| c.site = Some("cross-site".into()),
            "forbidden_fetch_site",
        ),
        (
            "same-site",
            |c| c.site = Some("same-site".into()),
            "forbidden_fetch_site",
        ),
        (
            "typed in the address bar",
            |c| c.site = Some("none".into()),
            "forbidden_fetch_site",
        ),
        (
            "no sec-fetch-site",
            |c| c.site = None,
            "forbidden_fetch_site",
        ),
        (
            "from the LAN",
            |c| c.peer = Some("192.168.1.20:4000".parse().unwrap()),
            "forbidden_peer",
        ),
        ("no peer", |c| c.peer = None, "forbidden_peer"),
    ];
    for (method, path, body) in &routes {
        for (name, change, code) in &attacks {
            let mut c = Call::new(&h, method.clone(), path);
            c.body = body.clone();
            change(&mut c);
            let (status, headers, v) = c.send(&h).await;
            assert_eq!(
                (status, code_of(&v)),
                (StatusCode::FORBIDDEN, *code),
                "{method} {path}: {name}: {v}"
            );
            assert!(headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        }
        // A POST without Origin is not what a browser sends.
        if *method != Method::GET {
            let mut c = Call::new(&h, method.clone(), path);
            c.body = body.clone();
            c.origin = None;
            let (status, _, v) = c.send(&h).await;
            assert_eq!(
                (status, code_of(&v)),
                (StatusCode::FORBIDDEN, "forbidden_origin"),
                "{method} {path}"
            );
        }
    }
}

#[tokio::test]
async fn cors_preflights_are_refused_and_never_allowed() {
    let h = harness(|_| {});
    for path in ["/api/fetch", "/api/session", "/api/search", "/api/nothing"] {
        let mut c = Call::new(&h, Method::OPTIONS, path);
        c.origin = Some("https://evil.example".into());
        c.site = Some("cross-site".into());
        c.token = None;
        let mut req = c.request();
        req.headers_mut()
            .insert("access-control-request-method", "POST".parse().unwrap());
        req.headers_mut().insert(
            "access-control-request-headers",
            "x-hearth-token,content-type".parse().unwrap(),
        );
        req.headers_mut().insert(
            "access-control-request-private-network",
            "true".parse().unwrap(),
        );
        let res = h.app.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{path}");
        for name in [
            "access-control-allow-origin",
            "access-control-allow-headers",
            "access-control-allow-methods",
            "access-control-allow-private-network",
        ] {
            assert!(res.headers().get(name).is_none(), "{path} {name}");
        }
        let body = res.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            error(
                "preflight_refused",
                "cross-origin requests are not allowed (CORS preflight refused)"
            )
        );
    }
}

#[tokio::test]
async fn the_app_gets_json_errors_for_bad_requests() {
    let h = harness(|_| {});
    let cases: Vec<(Call, StatusCode, Value)> = vec![
        (
            Call::new(&h, Method::GET, "/api/nope"),
            StatusCode::NOT_FOUND,
            error("not_found", "there is no API at /api/nope"),
        ),
        (
            Call::new(&h, Method::GET, "/api/fetch"),
            StatusCode::METHOD_NOT_ALLOWED,
            error("method_not_allowed", "this API does not take that method"),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://example.com/", "headers": {}}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "Failed to deserialize the JSON body into the target type: headers: unknown field `headers`, expected one of `url`, `max_bytes`, `domains` at line 1 column 39",
            ),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://example.com/", "max_bytes": 0}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "max_bytes must be between 1 and 10485760",
            ),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://example.com/", "max_bytes": 10485761}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "max_bytes must be between 1 and 10485760",
            ),
        ),
        (
            Call::post(
                &h,
                "/api/fetch",
                json!({"url": "https://e.com/", "domains": {"deny": ["http://x"]}}),
            ),
            StatusCode::BAD_REQUEST,
            error(
                "invalid_request",
                "Failed to deserialize the JSON body into the target type: domains.deny[0]: write just the domain, like example.com, not a URL (\"http://x\") at line 1 column 54",
            ),
        ),
        (
            Call::post(&h, "/api/search", json!({"query": "  "})),
            StatusCode::BAD_REQUEST,
            error("invalid_request", "query must hold 1 to 400 characters"),
        ),
        (
            Call::post(&h, "/api/search", json!({"query": "x", "limit": 21})),
            StatusCode::BAD_REQUEST,
            error("invalid_request", "limit must be between 1 and 20"),
        ),
    ];
    for (call, status, expected) in cases {
        let (s, _, v) = call.send(&h).await;
        assert_eq!((s, v), (status, expected), "{} {}", call.method, call.path);
    }
    // A form post (what a cross-site <form> could send) is not JSON.
    let mut form = Call::post(&h, "/api/fetch", json!({}));
    form.content_type = Some("application/x-www-form-urlencoded".into());
    let (s, _, v) = form.send(&h).await;
    assert_eq!(
        (s, code_of(&v)),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
}

// ---------------------------------------------------------------------------
// What may be fetched

#[test]
fn the_url_parser_normalises_every_ip_literal_form() {
    // The WHATWG parser turns all of these into the address they mean, so
    // the address check sees 127.0.0.1 (or ::1), never a "name".
    let cases = [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0x7F.0x0.0x0.0x1/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://０x7f.1/", "127.0.0.1"),
        ("http://１２７.０.０.１/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://0x/", "0.0.0.0"),
        ("http://[::1]/", "[::1]"),
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
        ("http://[::ffff:7f00:1]/", "[::ffff:7f00:1]"),
        (
            "http://[0000:0000:0000:0000:0000:ffff:7f00:0001]/",
            "[::ffff:7f00:1]",
        ),
        ("http://[::127.0.0.1]/", "[::7f00:1]"),
    ];
    for (input, host) in cases {
        let url = url::Url::parse(input).unwrap();
        assert_eq!(url.host_str(), Some(host), "{input}");
        assert!(
            matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))),
            "{input} must be an IP host, not a domain"
        );
    }
    // Forms that look numeric but are not valid IPv4 are refused outright.
    for bad in [
        "http://127.0.0.256/",
        "http://1.2.3.4.5/",
        "http://0x7g.1/",
        "http://foo.0x7f/",
    ] {
        assert!(url::Url::parse(bad).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn every_blocked_address_class_is_refused_in_every_form() {
    let h = harness(|_| {});
    // (url, host as shown, why)
    let cases = [
        (
            "http://127.0.0.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://2130706433/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://0177.0.0.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://0x7f.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://0x7f000001:8080/admin",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://127.1/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://１２７.０.０.１/",
            "127.0.0.1",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://127.255.255.254/",
            "127.255.255.254",
            "127.255.255.254 is a loopback address (this machine)",
        ),
        (
            "http://[::1]/",
            "[::1]",
            "::1 is a loopback address (this machine)",
        ),
        (
            "http://[::ffff:127.0.0.1]/",
            "[::ffff:7f00:1]",
            "::ffff:127.0.0.1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)",
        ),
        (
            "http://[::127.0.0.1]/",
            "[::7f00:1]",
            "::7f00:1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)",
        ),
        (
            "http://[::ffff:10.0.0.1]/",
            "[::ffff:a00:1]",
            "::ffff:10.0.0.1 carries the IPv4 address 10.0.0.1, which is a private network address",
        ),
        (
            "http://[64:ff9b::7f00:1]/",
            "[64:ff9b::7f00:1]",
            "64:ff9b::7f00:1 is a NAT64 address, translated by the local network",
        ),
        (
            "http://[2002:7f00:1::1]/",
            "[2002:7f00:1::1]",
            "2002:7f00:1::1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)",
        ),
        (
            "http://0.0.0.0/",
            "0.0.0.0",
            "0.0.0.0 is the unspecified address (this machine)",
        ),
        (
            "http://0/",
            "0.0.0.0",
            "0.0.0.0 is the unspecified address (this machine)",
        ),
        (
            "http://[::]/",
            "[::]",
            ":: is the unspecified address (this machine)",
        ),
        (
            "http://10.0.0.1/",
            "10.0.0.1",
            "10.0.0.1 is a private network address",
        ),
        (
            "http://172.16.5.4/",
            "172.16.5.4",
            "172.16.5.4 is a private network address",
        ),
        (
            "http://192.168.1.1/",
            "192.168.1.1",
            "192.168.1.1 is a private network address",
        ),
        (
            "http://3232235777/",
            "192.168.1.1",
            "192.168.1.1 is a private network address",
        ),
        (
            "http://100.64.0.1/",
            "100.64.0.1",
            "100.64.0.1 is a carrier-grade NAT address (100.64.0.0/10)",
        ),
        (
            "http://169.254.1.1/",
            "169.254.1.1",
            "169.254.1.1 is a link-local address",
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "169.254.169.254 is a cloud metadata service address",
        ),
        (
            "http://0xa9fea9fe/",
            "169.254.169.254",
            "169.254.169.254 is a cloud metadata service address",
        ),
        (
            "http://[fd00:ec2::254]/",
            "[fd00:ec2::254]",
            "fd00:ec2::254 is a cloud metadata service address",
        ),
        (
            "http://100.100.100.200/",
            "100.100.100.200",
            "100.100.100.200 is a cloud metadata service address",
        ),
        (
            "http://224.0.0.1/",
            "224.0.0.1",
            "224.0.0.1 is a multicast address",
        ),
        (
            "http://255.255.255.255/",
            "255.255.255.255",
            "255.255.255.255 is the broadcast address",
        ),
        (
            "http://240.0.0.1/",
            "240.0.0.1",
            "240.0.0.1 is a reserved address",
        ),
        (
            "http://192.0.2.10/",
            "192.0.2.10",
            "192.0.2.10 is a documentation-only address",
        ),
        (
            "http://198.18.0.1/",
            "198.18.0.1",
            "198.18.0.1 is a benchmarking address (198.18.0.0/15)",
        ),
        (
            "http://[fe80::1]/",
            "[fe80::1]",
            "fe80::1 is a link-local address",
        ),
        (
            "http://[fc00::1]/",
            "[fc00::1]",
            "fc00::1 is a unique local IPv6 address (fc00::/7)",
        ),
        (
            "http://[ff02::1]/",
            "[ff02::1]",
            "ff02::1 is a multicast address",
        ),
        (
            "http://[2001:db8::1]/",
            "[2001:db8::1]",
            "2001:db8::1 is a documentation-only address",
        ),
        (
            "https://[fec0::1]/",
            "[fec0::1]",
            "fec0::1 is a site-local IPv6 address (fec0::/10)",
        ),
        // Names that resolve to such addresses.
        (
            "http://evil.test/",
            "evil.test",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://localhost:3000/",
            "localhost",
            "127.0.0.1 is a loopback address (this machine)",
        ),
        (
            "http://metadata.test/",
            "metadata.test",
            "169.254.169.254 is a cloud metadata service address",
        ),
        (
            "https://mixed.test/",
            "mixed.test",
            "10.0.0.1 is a private network address",
        ),
        (
            "http://ula.test/",
            "ula.test",
            "fd12::1 is a unique local IPv6 address (fc00::/7)",
        ),
    ];
    for (url, host, why) in cases {
        let (status, v) = fetch(&h, json!({"url": url})).await;
        assert_eq!(
            (status, v),
            (
                StatusCode::FORBIDDEN,
                error(
                    "blocked_address",
                    &format!(
                        "{host} is not on the public internet: {why}. Hearth's proxy only fetches public addresses"
                    )
                )
            ),
            "{url}"
        );
    }
}

#[tokio::test]
async fn bad_urls_schemes_credentials_and_ports_are_refused() {
    let h = harness(|_| {});
    let cases: Vec<(&str, StatusCode, Value)> = vec![
        (
            "not a url",
            StatusCode::BAD_REQUEST,
            error(
                "invalid_url",
                "\"not a url\" is not a valid URL: relative URL without a base",
            ),
        ),
        (
            "file:///etc/passwd",
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not file:",
            ),
        ),
        (
            "ftp://example.com/",
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not ftp:",
            ),
        ),
        (
            "gopher://example.com/",
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not gopher:",
            ),
        ),
        (
            "http://user:pw@example.com/",
            StatusCode::BAD_REQUEST,
            error(
                "url_has_credentials",
                "URLs with a user name or password are not fetched; remove the 'user:password@' part",
            ),
        ),
        (
            "http://93.184.215.14:25/",
            StatusCode::FORBIDDEN,
            error(
                "blocked_port",
                "port 25 is used by a non-web service and is not fetched",
            ),
        ),
        (
            "http://93.184.215.14:6379x/",
            StatusCode::BAD_REQUEST,
            error(
                "invalid_url",
                "\"http://93.184.215.14:6379x/\" is not a valid URL: invalid port number",
            ),
        ),
        (
            "http://unknown.test/",
            StatusCode::BAD_GATEWAY,
            error(
                "dns_failed",
                "cannot resolve unknown.test: unknown.test is not in the test resolver",
            ),
        ),
    ];
    for (url, status, expected) in cases {
        assert_eq!(
            fetch(&h, json!({"url": url})).await,
            (status, expected),
            "{url}"
        );
    }
}

#[tokio::test]
async fn allowlisted_loopback_pages_are_fetched_and_read() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let base = format!("http://{up}");
    let (status, v) = fetch(&h, json!({"url": format!("{base}/page.html")})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let page: FetchResponse = serde_json::from_value(v).unwrap();
    assert_eq!(
        page,
        FetchResponse {
            url: format!("{base}/page.html"),
            requested_url: format!("{base}/page.html"),
            host: "127.0.0.1".into(),
            status: 200,
            kind: DocumentKind::Html,
            content_type: "text/html".into(),
            charset: "UTF-8".into(),
            lossy: false,
            title: Some("Test & Page".into()),
            content: format!(
                "## Welcome\n\nHello **world**. Read [the intro]({base}/docs/intro).\n\n- one\n- two\n\n```sh\necho hi\n```\n\n[Elsewhere](https://example.org/x)"
            ),
            links: vec![
                Link {
                    text: "the intro".into(),
                    url: format!("{base}/docs/intro")
                },
                Link {
                    text: "Elsewhere".into(),
                    url: "https://example.org/x".into()
                },
            ],
            bytes: PAGE.len() as u64,
            redirects: 0,
        }
    );

    // (path, kind, content type, charset, content, title)
    let echo = up.to_string();
    let cases = [
        (
            "/data.json",
            DocumentKind::Json,
            "application/json",
            "UTF-8",
            "{\n  \"name\": \"hearth\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}",
            None,
        ),
        (
            "/text.txt",
            DocumentKind::Text,
            "text/plain",
            "UTF-8",
            "just text\n",
            None,
        ),
        (
            "/latin1",
            DocumentKind::Html,
            "text/html",
            "windows-1252",
            "crème",
            Some("Café"),
        ),
        (
            "/gzip",
            DocumentKind::Html,
            "text/html",
            "UTF-8",
            "## Zipped\n\ninside",
            None,
        ),
        (
            "/echo-host",
            DocumentKind::Text,
            "text/plain",
            "UTF-8",
            echo.as_str(),
            None,
        ),
    ];
    for (path, kind, ct, charset, text, title) in cases {
        let (status, v) = fetch(&h, json!({"url": format!("{base}{path}")})).await;
        assert_eq!(status, StatusCode::OK, "{path}: {v}");
        let page: FetchResponse = serde_json::from_value(v).unwrap();
        assert_eq!(
            (
                page.kind,
                page.content_type.as_str(),
                page.charset.as_str(),
                page.content.as_str(),
                page.title.as_deref()
            ),
            (kind, ct, charset, text, title),
            "{path}"
        );
    }
}

#[tokio::test]
async fn other_content_is_refused_with_a_clear_message() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let base = format!("http://{up}");
    let cases = [
        (
            "/doc.pdf",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error(
                "unsupported_content_type",
                "application/pdf content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
        ),
        (
            "/blob",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            error(
                "unsupported_content_type",
                "application/octet-stream content is not supported; web_fetch reads HTML, JSON and plain text",
            ),
        ),
        (
            "/bad.json",
            StatusCode::BAD_GATEWAY,
            error(
                "invalid_json",
                "the server sent invalid JSON: key must be a string at line 1 column 2",
            ),
        ),
        (
            "/error",
            StatusCode::BAD_GATEWAY,
            error("upstream_status", "the server answered HTTP 404 Not Found"),
        ),
    ];
    for (path, status, expected) in cases {
        assert_eq!(
            fetch(&h, json!({"url": format!("{base}{path}")})).await,
            (status, expected),
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_allowlist_is_exact_and_loopback_stays_refused_by_default() {
    let up = upstream().await;
    let url = format!("http://{up}/text.txt");
    // Default: refused.
    let h = harness(|_| {});
    let (status, v) = fetch(&h, json!({"url": url})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "blocked_address")
    );
    // Another port of the same address: refused.
    let other: SocketAddr = format!("127.0.0.1:{}", up.port() ^ 1).parse().unwrap();
    let h = harness(|c| c.allow_private = vec![allow(other)]);
    let (status, v) = fetch(&h, json!({"url": url})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "blocked_address")
    );
    // A name that resolves to the allowed address and port: fetched.
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://evil.test:{}/text.txt", up.port())}),
    )
    .await;
    assert_eq!(
        (status, v["content"].clone()),
        (StatusCode::OK, json!("just text\n"))
    );
}

#[tokio::test]
async fn redirects_are_checked_at_every_hop() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let base = format!("http://{up}");
    let redirect = |to: &str| json!({"url": format!("{base}/redirect?to={}", urlencode(to))});
    let other_port = format!("http://127.0.0.1:{}/", up.port() ^ 1);
    let cases: Vec<(String, StatusCode, Value)> = vec![
        (
            "http://10.0.0.1/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "10.0.0.1 is not on the public internet: 10.0.0.1 is a private network address. Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            other_port.clone(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "127.0.0.1 is not on the public internet: 127.0.0.1 is a loopback address (this machine). Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "http://[::1]/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "[::1] is not on the public internet: ::1 is a loopback address (this machine). Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "http://169.254.169.254/latest/meta-data/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "169.254.169.254 is not on the public internet: 169.254.169.254 is a cloud metadata service address. Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "http://2130706433/".into(),
            StatusCode::FORBIDDEN,
            error(
                "blocked_address",
                "127.0.0.1 is not on the public internet: 127.0.0.1 is a loopback address (this machine). Hearth's proxy only fetches public addresses",
            ),
        ),
        (
            "file:///etc/passwd".into(),
            StatusCode::BAD_REQUEST,
            error(
                "unsupported_scheme",
                "only http and https URLs can be fetched, not file:",
            ),
        ),
    ];
    for (to, status, expected) in cases {
        assert_eq!(
            fetch(&h, redirect(&to)).await,
            (status, expected),
            "redirect to {to}"
        );
    }
    // Five redirects are followed; the sixth is not.
    let (status, v) = fetch(&h, json!({"url": format!("{base}/chain/5")})).await;
    assert_eq!(
        (
            status,
            v["content"].clone(),
            v["redirects"].clone(),
            v["url"].clone(),
            v["requested_url"].clone()
        ),
        (
            StatusCode::OK,
            json!("end of chain"),
            json!(5),
            json!(format!("{base}/chain/0")),
            json!(format!("{base}/chain/5"))
        )
    );
    assert_eq!(
        fetch(&h, json!({"url": format!("{base}/chain/6")})).await,
        (
            StatusCode::BAD_GATEWAY,
            error(
                "too_many_redirects",
                "more than 5 redirects; stopped following them"
            )
        )
    );
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn domain_lists_hold_on_the_url_and_on_redirects() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let port = up.port();
    let deny = json!({"deny": ["blocked.test"]});
    // Straight to a denied host.
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://blocked.test:{port}/text.txt"), "domains": deny})
        )
        .await,
        (
            StatusCode::FORBIDDEN,
            error(
                "blocked_domain",
                "blocked.test is on web_fetch's denylist (entry 'blocked.test'); change the list in the Skills panel to allow it"
            )
        )
    );
    // Through a redirect from an allowed host.
    let to = urlencode(&format!("http://blocked.test:{port}/text.txt"));
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://evil.test:{port}/redirect?to={to}"), "domains": deny})
        )
        .await,
        (
            StatusCode::FORBIDDEN,
            error(
                "blocked_domain",
                "blocked.test is on web_fetch's denylist (entry 'blocked.test'); change the list in the Skills panel to allow it"
            )
        )
    );
    // An allowlist admits only its hosts.
    let only = json!({"allow": ["evil.test"]});
    let (status, _) = fetch(
        &h,
        json!({"url": format!("http://evil.test:{port}/text.txt"), "domains": only}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://127.0.0.1:{port}/text.txt"), "domains": only})
        )
        .await,
        (
            StatusCode::FORBIDDEN,
            error(
                "blocked_domain",
                "127.0.0.1 is not on web_fetch's allowlist; add it in the Skills panel to allow it"
            )
        )
    );
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let up = upstream().await;
    let chunked = serve_raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec(),
        Duration::ZERO,
        {
            let mut body = Vec::new();
            for _ in 0..64 {
                body.extend_from_slice(format!("{:x}\r\n", 1024).as_bytes());
                body.extend_from_slice(&[b'b'; 1024]);
                body.extend_from_slice(b"\r\n");
            }
            body.extend_from_slice(b"0\r\n\r\n");
            body
        },
    )
    .await;
    let h = harness(|c| c.allow_private = vec![allow(up), allow(chunked)]);
    // Declared too large: refused before reading.
    assert_eq!(
        fetch(&h, json!({"url": format!("http://{up}/big")})).await,
        (
            StatusCode::BAD_GATEWAY,
            error(
                "response_too_large",
                "the response is larger than the 2097152-byte limit (it declares 3145728 bytes)"
            )
        )
    );
    // Undeclared, streamed past the limit.
    assert_eq!(
        fetch(
            &h,
            json!({"url": format!("http://{chunked}/"), "max_bytes": 10000})
        )
        .await,
        (
            StatusCode::BAD_GATEWAY,
            error(
                "response_too_large",
                "the response is larger than the 10000-byte limit"
            )
        )
    );
    // Within a larger limit, the same body is read.
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://{chunked}/"), "max_bytes": 100000}),
    )
    .await;
    assert_eq!((status, v["bytes"].clone()), (StatusCode::OK, json!(65536)));
}

#[tokio::test]
async fn slow_servers_run_into_the_time_limit() {
    let up = upstream().await;
    let dribble = serve_raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhello".to_vec(),
        Duration::from_secs(30),
        b"world".to_vec(),
    )
    .await;
    let h = harness(|c| {
        c.allow_private = vec![allow(up), allow(dribble)];
        c.limits.total_timeout = Duration::from_millis(300);
    });
    let host = "127.0.0.1";
    for url in [format!("http://{up}/slow"), format!("http://{dribble}/")] {
        assert_eq!(
            fetch(&h, json!({"url": url})).await,
            (
                StatusCode::GATEWAY_TIMEOUT,
                error(
                    "timeout",
                    &format!("{host} took longer than 300ms to answer")
                )
            ),
            "{url}"
        );
    }
}

#[tokio::test]
async fn https_to_a_server_that_is_not_tls_fails_cleanly() {
    let up = upstream().await;
    let h = harness(|c| c.allow_private = vec![allow(up)]);
    let (status, v) = fetch(
        &h,
        json!({"url": format!("https://127.0.0.1:{}/text.txt", up.port())}),
    )
    .await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::BAD_GATEWAY, "tls_failed"),
        "{v}"
    );
}

/// Answers `first` on the first lookup and `later` afterwards, counting
/// lookups: a rebinding DNS server.
struct RebindingResolver {
    first: IpAddr,
    later: IpAddr,
    lookups: AtomicUsize,
}

impl Resolve for RebindingResolver {
    fn resolve<'a>(&'a self, _host: &'a str) -> ResolveFuture<'a> {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let ip = if n == 0 { self.first } else { self.later };
        Box::pin(async move { Ok(vec![ip]) })
    }
}

#[tokio::test]
async fn the_checked_address_is_the_one_connected_to() {
    // The name first resolves to the allowed test server, then to an
    // address that is not allowed. A client that resolved again to connect
    // would reach 127.0.0.2 (nothing listens there) and fail.
    let up = upstream().await;
    let resolver = Arc::new(RebindingResolver {
        first: "127.0.0.1".parse().unwrap(),
        later: "127.0.0.2".parse().unwrap(),
        lookups: AtomicUsize::new(0),
    });
    let h = harness_with(|c| c.allow_private = vec![allow(up)], resolver.clone());
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://rebind.test:{}/echo-host", up.port())}),
    )
    .await;
    assert_eq!(
        (status, v["content"].clone()),
        (StatusCode::OK, json!(format!("rebind.test:{}", up.port())))
    );
    assert_eq!(resolver.lookups.load(Ordering::SeqCst), 1);
    // A second fetch resolves again and is refused: 127.0.0.2 is loopback.
    let (status, v) = fetch(
        &h,
        json!({"url": format!("http://rebind.test:{}/echo-host", up.port())}),
    )
    .await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::FORBIDDEN, "blocked_address")
    );
}

#[tokio::test]
async fn the_rate_limit_holds_per_skill_and_strangers_cannot_spend_it() {
    let up = upstream().await;
    let h = harness(|c| {
        c.allow_private = vec![allow(up)];
        c.rate_limits.insert(
            "web_fetch".into(),
            BucketConfig {
                per_minute: 1.0,
                burst: 2,
            },
        );
    });
    let url = json!({"url": format!("http://{up}/text.txt")});
    // Refused callers do not use up the bucket.
    for _ in 0..5 {
        let mut c = Call::post(&h, "/api/fetch", url.clone());
        c.token = None;
        assert_eq!(c.send(&h).await.0, StatusCode::FORBIDDEN);
    }
    assert_eq!(fetch(&h, url.clone()).await.0, StatusCode::OK);
    assert_eq!(fetch(&h, url.clone()).await.0, StatusCode::OK);
    let (status, headers, v) = Call::post(&h, "/api/fetch", url.clone()).send(&h).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((59..=60).contains(&retry), "{retry}");
    assert_eq!(
        v,
        error(
            "rate_limited",
            &format!("web_fetch was called too often; try again in {retry} s")
        )
    );
    // web_search has its own bucket: it gets past the limiter to the
    // missing-backend answer.
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::SERVICE_UNAVAILABLE, "no_search_backend")
    );
}

// ---------------------------------------------------------------------------
// Search

fn searxng_server(log: Arc<Mutex<Vec<String>>>) -> Router {
    Router::new().route(
        "/search",
        get(move |uri: axum::http::Uri| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(uri.query().unwrap_or("").to_string());
                let q: Vec<(String, String)> = url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                    .into_owned()
                    .collect();
                if !q.contains(&("format".into(), "json".into())) {
                    return (StatusCode::FORBIDDEN, "json format only").into_response();
                }
                let query = q.iter().find(|(k, _)| k == "q").map(|(_, v)| v.clone()).unwrap_or_default();
                axum::Json(json!({
                    "query": query,
                    "number_of_results": 3,
                    "results": [
                        {"url": "https://en.wikipedia.org/wiki/Hearth", "title": "Hearth - Wikipedia", "content": "A hearth is a place for a fire.", "engine": "wikipedia"},
                        {"url": "https://ads.example.com/buy", "title": "Buy hearths", "content": "Sale!", "engine": "x"},
                        {"url": "https://example.org/fire", "title": "Fire & <b>home</b>", "content": "", "engine": "y"}
                    ]
                }))
                .into_response()
            }
        }),
    )
}

#[tokio::test]
async fn searxng_results_come_back_filtered_by_the_domain_lists() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let searx = serve(searxng_server(log.clone())).await;
    let h = harness(|c| {
        c.allow_private = vec![allow(searx)];
        c.search = Some(SearchBackend::searxng(&format!("http://{searx}/")).unwrap());
    });
    let (status, _, v) = Call::post(
        &h,
        "/api/search",
        json!({"query": "hearth fire", "limit": 5, "domains": {"deny": ["ads.example.com"]}}),
    )
    .send(&h)
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let found: SearchResponse = serde_json::from_value(v).unwrap();
    assert_eq!(
        found,
        SearchResponse {
            query: "hearth fire".into(),
            backend: "searxng".into(),
            results: vec![
                SearchHit {
                    title: "Hearth - Wikipedia".into(),
                    url: "https://en.wikipedia.org/wiki/Hearth".into(),
                    host: "en.wikipedia.org".into(),
                    snippet: "A hearth is a place for a fire.".into(),
                },
                SearchHit {
                    title: "Fire & home".into(),
                    url: "https://example.org/fire".into(),
                    host: "example.org".into(),
                    snippet: "".into(),
                },
            ],
            filtered: 1,
        }
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec!["q=hearth+fire&format=json".to_string()]
    );
    // limit cuts the list.
    let (_, _, v) = Call::post(&h, "/api/search", json!({"query": "hearth", "limit": 1}))
        .send(&h)
        .await;
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_local_search_backend_must_be_allowlisted() {
    let searx = serve(searxng_server(Arc::new(Mutex::new(Vec::new())))).await;
    let h =
        harness(|c| c.search = Some(SearchBackend::searxng(&format!("http://{searx}")).unwrap()));
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    let config_path = h.dir.path().join("config.toml").display().to_string();
    assert_eq!(
        (status, v),
        (
            StatusCode::BAD_GATEWAY,
            error(
                "search_backend_failed",
                &format!(
                    "SearXNG at http://{searx}/search could not be reached: 127.0.0.1 is not on the public internet: \
                     127.0.0.1 is a loopback address (this machine). Hearth's proxy only fetches public addresses. \
                     A search backend on this machine or your network must be allowed explicitly: add \
                     allow_private = [\"{searx}\"] under [fetch] in {config_path}, or start hearth serve with \
                     --allow-private-fetch {searx}"
                )
            )
        )
    );
}

#[derive(Clone, Debug, Default, PartialEq)]
struct SeenBrave {
    token: Option<String>,
    accept: Option<String>,
    query: Vec<(String, String)>,
}

#[tokio::test]
async fn brave_requests_carry_the_key_and_results_are_read() {
    let seen: Arc<Mutex<Vec<SeenBrave>>> = Arc::default();
    let log = seen.clone();
    let brave = serve(Router::new().route(
        "/res/v1/web/search",
        get(move |headers: HeaderMap, uri: axum::http::Uri| {
            let log = log.clone();
            async move {
                let h = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_string());
                log.lock().unwrap().push(SeenBrave {
                    token: h("x-subscription-token"),
                    accept: h("accept"),
                    query: url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect(),
                });
                if h("x-subscription-token").as_deref() != Some("test-key") {
                    return (StatusCode::UNAUTHORIZED, axum::Json(json!({"type": "ErrorResponse"}))).into_response();
                }
                axum::Json(json!({
                    "type": "search",
                    "web": {"results": [
                        {"title": "The <strong>Rust</strong> Language", "url": "https://www.rust-lang.org/", "description": "A language empowering <strong>everyone</strong>."}
                    ]}
                }))
                .into_response()
            }
        }),
    ))
    .await;
    let endpoint = format!("http://{brave}/res/v1/web/search");
    let h = harness(|c| {
        c.allow_private = vec![allow(brave)];
        c.search = Some(SearchBackend::brave("test-key", Some(&endpoint)).unwrap());
    });
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "rust lang", "limit": 3}))
        .send(&h)
        .await;
    assert_eq!(
        (status, v),
        (
            StatusCode::OK,
            json!({
                "query": "rust lang",
                "backend": "brave",
                "results": [{"title": "The Rust Language", "url": "https://www.rust-lang.org/", "host": "www.rust-lang.org", "snippet": "A language empowering everyone."}],
                "filtered": 0
            })
        )
    );
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![SeenBrave {
            token: Some("test-key".into()),
            accept: Some("application/json".into()),
            query: vec![
                ("q".into(), "rust lang".into()),
                ("count".into(), "3".into())
            ],
        }]
    );
    // A refused key says so.
    let h = harness(|c| {
        c.allow_private = vec![allow(brave)];
        c.search = Some(SearchBackend::brave("wrong", Some(&endpoint)).unwrap());
    });
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    assert_eq!(
        (status, v),
        (
            StatusCode::BAD_GATEWAY,
            error(
                "search_backend_failed",
                "Brave Search answered HTTP 401: the API key was refused; check it in Settings or the config file"
            )
        )
    );
}

#[tokio::test]
async fn without_a_backend_the_error_says_how_to_set_one() {
    let h = harness(|c| {
        c.search_problem = Some("the environment variable K named by api_key_env is not set".into())
    });
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    let path = h.dir.path().join("config.toml").display().to_string();
    assert_eq!(
        (status, v),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            error(
                "no_search_backend",
                &format!(
                    "No web search backend is set up (the environment variable K named by api_key_env is not set). \
                     Choose one in Hearth's Settings (Web search), or add to {path}:\n\n\
                     [search]\nbackend = \"searxng\"\nurl = \"https://searxng.example.org\"\n\n\
                     or\n\n[search]\nbackend = \"brave\"\napi_key_env = \"BRAVE_API_KEY\"\n\n\
                     and restart `hearth serve`. A SearXNG instance must have the json format enabled (search.formats in its settings.yml)."
                )
            )
        )
    );
}

#[tokio::test]
async fn the_app_can_choose_the_backend_and_never_reads_the_key_back() {
    let searx = serve(searxng_server(Arc::new(Mutex::new(Vec::new())))).await;
    let h = harness(|c| c.allow_private = vec![allow(searx)]);
    let get_backend = || Call::new(&h, Method::GET, "/api/search/backend");
    let none = json!({"configured": false, "source": null, "backend": null, "url": null, "api_key_set": false, "problem": null});
    assert_eq!(get_backend().send(&h).await.2, none);

    let mut put = Call::new(&h, Method::PUT, "/api/search/backend");
    put.body = Some(json!({"backend": "brave", "api_key": "sekrit-key"}));
    let (status, _, v) = put.send(&h).await;
    assert_eq!(
        (status, v.clone()),
        (
            StatusCode::OK,
            json!({"configured": true, "source": "settings", "backend": "brave", "url": "https://api.search.brave.com/res/v1/web/search", "api_key_set": true, "problem": null})
        )
    );
    assert!(!v.to_string().contains("sekrit"));
    let file = h.dir.path().join("search-backend.json");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("sekrit-key")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // The session reports it, without the key.
    let mut session = Call::new(&h, Method::GET, "/api/session");
    session.origin = None;
    let (_, _, v) = session.send(&h).await;
    assert_eq!(v["search"], json!({"configured": true, "backend": "brave"}));
    assert!(!v.to_string().contains("sekrit"));

    // The browser cannot name an environment variable or move Brave.
    for body in [
        json!({"backend": "brave", "api_key_env": "HOME"}),
        json!({"backend": "brave", "api_key": "k", "url": "https://evil.example/"}),
    ] {
        put.body = Some(body.clone());
        let (status, _, v) = put.send(&h).await;
        assert_eq!(
            (status, code_of(&v)),
            (StatusCode::BAD_REQUEST, "invalid_request"),
            "{body}"
        );
    }

    // Switch to the local SearXNG, which is used at once.
    put.body = Some(json!({"backend": "searxng", "url": format!("http://{searx}")}));
    assert_eq!(put.send(&h).await.0, StatusCode::OK);
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "hearth"}))
        .send(&h)
        .await;
    assert_eq!(
        (status, v["backend"].clone()),
        (StatusCode::OK, json!("searxng"))
    );

    let (status, _, v) = Call::new(&h, Method::DELETE, "/api/search/backend")
        .send(&h)
        .await;
    assert_eq!((status, v), (StatusCode::OK, none));
    assert!(!file.exists());
}

/// The app reads these answers with core's types and sends core's setting,
/// so the two halves of the contract cannot drift apart.
#[tokio::test]
async fn the_app_side_types_read_and_write_the_backend_routes() {
    use hearth_core::web::{
        ApiErrorCode, BackendSource, SearchBackendSetting, SearchBackendState, WebFailure,
    };
    let h = harness(|_| {});
    let mut put = Call::new(&h, Method::PUT, "/api/search/backend");
    put.body = Some(
        serde_json::to_value(SearchBackendSetting::Searxng {
            url: "http://127.0.0.1:8888/search".into(),
        })
        .unwrap(),
    );
    let (status, _, v) = put.send(&h).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_value::<SearchBackendState>(v).unwrap(),
        SearchBackendState {
            configured: true,
            source: Some(BackendSource::Settings),
            backend: Some("searxng".into()),
            url: Some("http://127.0.0.1:8888/".into()),
            api_key_set: false,
            problem: None,
        }
    );
    let (_, _, v) = Call::new(&h, Method::DELETE, "/api/search/backend")
        .send(&h)
        .await;
    assert_eq!(
        serde_json::from_value::<SearchBackendState>(v).unwrap(),
        SearchBackendState {
            configured: false,
            source: None,
            backend: None,
            url: None,
            api_key_set: false,
            problem: None,
        }
    );
    let (status, _, v) = Call::post(&h, "/api/search", json!({"query": "x"}))
        .send(&h)
        .await;
    let failure = WebFailure::from_answer(status.as_u16(), &v.to_string());
    assert_eq!(failure.code(), Some(ApiErrorCode::NoSearchBackend), "{v}");
}

// ---------------------------------------------------------------------------
// Served with the app

#[tokio::test]
async fn the_api_is_served_beside_the_app_with_its_headers() {
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("index.html"), "<!doctype html><p>app</p>").unwrap();
    let h = harness(|_| {});
    let app = crate::serve::router_with(
        &crate::serve::ServeConfig {
            dist: dist.path().to_path_buf(),
            extra_connect_src: vec![],
        },
        h.app.clone(),
    )
    .unwrap();
    let served = Harness {
        app,
        token: h.token.clone(),
        dir: tempfile::tempdir().unwrap(),
    };
    let mut session = Call::new(&served, Method::GET, "/api/session");
    session.origin = None;
    let (status, headers, _) = session.send(&served).await;
    assert_eq!(status, StatusCode::OK);
    for (name, value) in [
        ("cache-control", "no-store"),
        ("cross-origin-resource-policy", "same-origin"),
        ("cross-origin-opener-policy", "same-origin"),
        ("x-content-type-options", "nosniff"),
    ] {
        assert_eq!(headers[name], value, "{name}");
    }
    let mut index = Call::new(&served, Method::GET, "/");
    index.token = None;
    let (status, headers, body) = index.send(&served).await;
    assert_eq!(
        (status, headers["cache-control"].to_str().unwrap()),
        (StatusCode::OK, "no-cache")
    );
    assert_eq!(body, json!("<!doctype html><p>app</p>"));
}

// ---------------------------------------------------------------------------
// TLS

/// A test CA and a TLS server config for a leaf certificate naming `names`.
fn test_pki(names: &[&str]) -> (rustls::RootCertStore, Arc<rustls::ServerConfig>) {
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
async fn serve_tls(config: Arc<rustls::ServerConfig>) -> SocketAddr {
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

#[tokio::test]
async fn https_is_verified_against_the_host_name() {
    let (roots, server) = test_pki(&["tls.test"]);
    let tls_up = serve_tls(server).await;
    let port = tls_up.port();
    let h = harness_tls(
        |c| c.allow_private = vec![allow(tls_up)],
        Arc::new(test_resolver()),
        ClientConfig::tls_with_roots(roots),
    );
    // The right name: verified, and sent as SNI.
    let (status, v) = fetch(&h, json!({"url": format!("https://tls.test:{port}/")})).await;
    assert_eq!(
        (status, v["content"].clone()),
        (StatusCode::OK, json!("sni=tls.test")),
        "{v}"
    );
    // Another name for the same address: the certificate does not cover it.
    let (status, v) = fetch(&h, json!({"url": format!("https://other.test:{port}/")})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::BAD_GATEWAY, "tls_failed"),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("certificate"),
        "{v}"
    );
    // The web PKI does not know the test CA.
    let h = harness(|c| c.allow_private = vec![allow(tls_up)]);
    let (status, v) = fetch(&h, json!({"url": format!("https://tls.test:{port}/")})).await;
    assert_eq!(
        (status, code_of(&v)),
        (StatusCode::BAD_GATEWAY, "tls_failed"),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("UnknownIssuer"),
        "{v}"
    );
}
