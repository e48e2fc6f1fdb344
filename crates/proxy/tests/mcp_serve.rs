//! `hearth serve`'s MCP routes as the app uses them, through the real
//! binary on a loopback socket: the stdio bridge mounted behind the
//! network tier's guard, its listing, and the CORS relay — against real
//! peers (a Python stdio server, npm server-everything, the PyPI `mcp` 2.x
//! server) and a header-echoing upstream, all started here on 127.0.0.1.
//! Attacks first: no token, a foreign origin, a preflight, relay targets
//! that are not the registered one, private addresses, smuggled headers.

mod mcp_support;
mod serve_support;

use std::net::SocketAddr;
use std::path::Path;
use std::rc::Rc;

use axum::Router;
use axum::http::{HeaderMap, header};
use axum::routing::post;
use bytes::Bytes;
use hearth_core::mcp::client::{CallOptions, ClientConfig, McpClient};
use hearth_core::mcp::hosted::RELAY_TARGET_HEADER;
use hearth_core::mcp::model::ContentBlock;
use hearth_core::mcp::version::Era;
use hearth_core::mcp::{McpError, NoInput};
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_support::{ReqwestTransport, peers_dir, require_peers, start_everything, start_modern};
use serde_json::{Value, json};
use serve_support::{Server, fake_dist};
use tokio::net::{TcpListener, TcpStream};

/// Starts `hearth serve` with `mcp-servers.json` = `stdio` in its config
/// directory, on a free port.
fn start(stdio: &str, dir: &Path) -> Server {
    let dist = fake_dist(&dir.join("dist"));
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("mcp-servers.json"), stdio).unwrap();
    serve_support::start(&[], &dist, &conf)
}

fn stdio_config() -> String {
    let script = peers_dir().join("stdio_server.py");
    format!(
        r#"{{"mcpServers": {{"py": {{"command": "python3", "args": [{script:?}], "env": {{"SECRET_KEY": "hidden"}}}}, "Bad Name": {{"command": "x"}}}}}}"#,
        script = script.display().to_string()
    )
}

/// One HTTP/1.1 request; returns status, headers and the body as JSON (or
/// as a JSON string when it is not JSON).
async fn call(
    server: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, HeaderMap, Value) {
    let stream = TcpStream::connect(server).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let body = body.map(|v| v.to_string()).unwrap_or_default();
    let res = sender
        .send_request(req.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, headers, value)
}

/// The app's same-origin headers, with the token.
struct App {
    addr: SocketAddr,
    host: String,
    origin: String,
    token: String,
}

impl App {
    /// The app as a person opens it: from the launch link `hearth serve`
    /// printed, which carries the key.
    async fn connect(server: &Server) -> App {
        let host = server.addr.to_string();
        let (_, key) = server
            .line
            .split_once("#token=")
            .unwrap_or_else(|| panic!("no key in the launch line: {}", server.line));
        App {
            addr: server.addr,
            origin: format!("http://{host}"),
            host,
            token: key.to_string(),
        }
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        vec![
            ("host", self.host.as_str()),
            ("origin", self.origin.as_str()),
            ("sec-fetch-site", "same-origin"),
            ("x-hearth-token", self.token.as_str()),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ]
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, HeaderMap, Value) {
        call(self.addr, method, path, &self.headers(), body).await
    }

    /// The core MCP client, speaking to `path` on this server as the app
    /// does (the browser adds Origin and Sec-Fetch-Site by itself); through
    /// the relay, `target` is the URL the app registered for the server.
    fn mcp(&self, path: &str) -> McpClient {
        self.mcp_to(path, None)
    }

    fn mcp_to(&self, path: &str, target: Option<&str>) -> McpClient {
        let mut config = ClientConfig::new(format!("http://{}{path}", self.host));
        config.headers = vec![
            ("Origin".into(), self.origin.clone()),
            ("Sec-Fetch-Site".into(), "same-origin".into()),
            ("X-Hearth-Token".into(), self.token.clone()),
        ];
        if let Some(t) = target {
            config
                .headers
                .push((RELAY_TARGET_HEADER.into(), t.to_string()));
        }
        McpClient::build(
            Rc::new(ReqwestTransport::new().unwrap()),
            config,
            Rc::new(NoInput),
            None,
            None,
            None,
        )
    }
}

fn text(r: &hearth_core::mcp::model::CallToolResult) -> String {
    match &r.content[0] {
        ContentBlock::Text { text, .. } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("(no code)")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test(flavor = "current_thread")]
async fn stdio_servers_are_reached_only_through_the_guard() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&stdio_config(), dir.path());
    let app = App::connect(&server).await;
    let init: Value = serde_json::from_str(INITIALIZE).unwrap();

    // Attacks: each is refused before a process is started.
    let host = app.host.as_str();
    let origin = app.origin.as_str();
    /// (what, method, headers, the guard's code)
    type Attack<'a> = (&'a str, Method, Vec<(&'a str, &'a str)>, &'a str);
    let attacks: Vec<Attack> = vec![
        (
            "no token",
            Method::POST,
            vec![
                ("host", host),
                ("origin", origin),
                ("sec-fetch-site", "same-origin"),
                ("content-type", "application/json"),
            ],
            "missing_token",
        ),
        (
            "a wrong token",
            Method::POST,
            vec![
                ("host", host),
                ("origin", origin),
                ("sec-fetch-site", "same-origin"),
                ("x-hearth-token", "guessed"),
            ],
            "bad_token",
        ),
        (
            "another site's page",
            Method::POST,
            vec![
                ("host", host),
                ("origin", "https://evil.example"),
                ("sec-fetch-site", "cross-site"),
                ("x-hearth-token", app.token.as_str()),
            ],
            "forbidden_fetch_site",
        ),
        (
            "a DNS-rebound name",
            Method::POST,
            vec![
                ("host", "evil.example:80"),
                ("origin", "http://evil.example:80"),
                ("sec-fetch-site", "same-origin"),
                ("x-hearth-token", app.token.as_str()),
            ],
            "forbidden_host",
        ),
        (
            "a CORS preflight",
            Method::OPTIONS,
            vec![
                ("host", host),
                ("origin", "https://evil.example"),
                ("access-control-request-method", "POST"),
            ],
            "preflight_refused",
        ),
    ];
    for (what, method, headers, want) in attacks {
        let (status, _, body) = call(
            server.addr,
            method,
            "/mcp/stdio/py",
            &headers,
            Some(init.clone()),
        )
        .await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::FORBIDDEN, want),
            "{what}: {body}"
        );
        let (status, _, body) =
            call(server.addr, Method::GET, "/api/mcp/stdio", &headers, None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{what} (listing): {body}");
    }

    // Nothing ran for them.
    let (status, _, listing) = app.send(Method::GET, "/api/mcp/stdio", None).await;
    assert_eq!(status, StatusCode::OK, "{listing}");
    assert_eq!(listing["servers"][0]["name"], "py");
    assert_eq!(listing["servers"][0]["running"], false);
    assert_eq!(listing["servers"][0]["env_keys"], json!(["SECRET_KEY"]));
    assert!(
        !listing.to_string().contains("hidden"),
        "env values stay on disk"
    );
    assert_eq!(
        listing["skipped"],
        json!([{"server": "Bad Name", "message": "a server name may hold only a-z, 0-9 and '-', not 'B'"}])
    );
    assert!(
        listing["config_path"]
            .as_str()
            .unwrap()
            .ends_with("mcp-servers.json")
    );

    // The app's own client goes through, and the process starts.
    let client = app.mcp("/mcp/stdio/py");
    let info = client.connect().await.unwrap();
    assert_eq!(info.era, Era::Legacy);
    let echo = client
        .call_tool(
            "echo",
            json!({"message": "through the guard"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echo), "Echo: through the guard");
    let (_, _, listing) = app.send(Method::GET, "/api/mcp/stdio", None).await;
    assert_eq!(listing["servers"][0]["running"], true, "{listing}");

    // An unknown server is a JSON-RPC error, not a process.
    let missing = app.mcp("/mcp/stdio/nobody").connect().await;
    assert!(
        matches!(&missing, Err(McpError::Rpc(e)) if e.message.contains("no stdio server named")),
        "{missing:?}"
    );
    // The browser cannot add a server: there is no route that takes one.
    let (status, _, _) = app
        .send(
            Method::PUT,
            "/api/mcp/stdio",
            Some(json!({"name": "evil", "command": "sh"})),
        )
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

/// An upstream that answers with the headers it received, and sets a
/// cookie and CORS headers the relay must not pass back.
async fn echo_upstream() -> SocketAddr {
    let app = Router::new().route(
        "/mcp",
        post(|headers: HeaderMap, body: Bytes| async move {
            let mut seen: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                .collect();
            seen.sort();
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::SET_COOKIE, "session=stolen"),
                    (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                    (header::HeaderName::from_static("mcp-session-id"), "abc"),
                    // Headers that would act on Hearth's own origin.
                    (header::HeaderName::from_static("clear-site-data"), "\"*\""),
                    (header::REFRESH, "0; url=https://evil.example/"),
                    (header::LINK, "<https://evil.example/x.js>; rel=preload"),
                    (
                        header::HeaderName::from_static("service-worker-allowed"),
                        "/",
                    ),
                ],
                json!({"headers": seen, "body": String::from_utf8_lossy(&body)}).to_string(),
            )
        })
        .get(|| async {
            (
                StatusCode::FOUND,
                [(header::LOCATION, "http://169.254.169.254/")],
            )
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

#[tokio::test(flavor = "current_thread")]
async fn the_relay_forwards_only_to_the_registered_url_under_the_ssrf_rules() {
    let dir = tempfile::tempdir().unwrap();
    let server = start("{}", dir.path());
    let app = App::connect(&server).await;
    let up = echo_upstream().await;
    let up_url = format!("http://{up}/mcp");

    // Without the token nothing is registered.
    let (status, _, body) = call(
        server.addr,
        Method::PUT,
        "/api/mcp/relay/up",
        &[
            ("host", app.host.as_str()),
            ("origin", app.origin.as_str()),
            ("sec-fetch-site", "same-origin"),
            ("content-type", "application/json"),
        ],
        Some(json!({"url": up_url})),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::FORBIDDEN, "missing_token")
    );

    // Registrations the SSRF rules and the local rule refuse.
    let refused: Vec<(Value, StatusCode, &str)> = vec![
        (
            json!({"url": up_url}),
            StatusCode::FORBIDDEN,
            "blocked_address",
        ),
        (
            json!({"url": "http://169.254.169.254/latest", "local": true}),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            json!({"url": "http://10.0.0.8:3000/mcp"}),
            StatusCode::FORBIDDEN,
            "blocked_address",
        ),
        (
            json!({"url": format!("http://user:pw@{up}/mcp"), "local": true}),
            StatusCode::BAD_REQUEST,
            "url_has_credentials",
        ),
        (
            json!({"url": "file:///etc/passwd", "local": true}),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            json!({"url": "ftp://127.0.0.1/x", "local": true}),
            StatusCode::BAD_REQUEST,
            "unsupported_scheme",
        ),
        (
            json!({"url": "http://127.0.0.1:22/", "local": false}),
            StatusCode::FORBIDDEN,
            "blocked_address",
        ),
        // A local server still may not be a mail, SSH or X11 port: the
        // Fetch standard's bad ports hold for the relay too.
        (
            json!({"url": "http://127.0.0.1:25/mcp", "local": true}),
            StatusCode::FORBIDDEN,
            "blocked_port",
        ),
        (
            json!({"url": "http://localhost:6000/mcp", "local": true}),
            StatusCode::FORBIDDEN,
            "blocked_port",
        ),
        (
            json!({"url": "http://[::1]:22/mcp", "local": true}),
            StatusCode::FORBIDDEN,
            "blocked_port",
        ),
        (
            json!({"url": up_url, "target": "http://evil"}),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
    ];
    for (registration, want_status, want_code) in refused {
        let (status, _, body) = app
            .send(Method::PUT, "/api/mcp/relay/up", Some(registration.clone()))
            .await;
        assert_eq!(
            (status, code(&body)),
            (want_status, want_code),
            "{registration}: {body}"
        );
    }
    let (status, _, body) = app
        .send(
            Method::PUT,
            "/api/mcp/relay/Not_A_Name",
            Some(json!({"url": up_url, "local": true})),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_REQUEST, "invalid_request"),
        "{body}"
    );
    // Nothing registered: nothing forwarded.
    let (status, _, body) = app
        .send(Method::POST, "/mcp/relay/up", Some(json!({})))
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "not_found"),
        "{body}"
    );

    // Marked local, the loopback upstream may be reached.
    let (status, _, body) = app
        .send(
            Method::PUT,
            "/api/mcp/relay/up",
            Some(json!({"url": up_url, "local": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"id": "up", "url": up_url, "local": true}));

    // The request's path and query choose nothing; the browser's and the
    // app's own headers stay behind; the caller's Authorization goes on.
    let mut headers = app.headers();
    headers.extend([
        ("cookie", "hearth=secret"),
        ("authorization", "Bearer for-the-server"),
        ("x-api-key", "k"),
        ("mcp-protocol-version", "2025-11-25"),
        (RELAY_TARGET_HEADER, up_url.as_str()),
    ]);
    let (status, got, body) = call(
        server.addr,
        Method::POST,
        "/mcp/relay/up?url=http://169.254.169.254/",
        &headers,
        Some(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let seen: Vec<String> = body["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap().to_string())
        .collect();
    for gone in [
        "cookie",
        "x-hearth-token",
        "origin",
        "sec-fetch-site",
        RELAY_TARGET_HEADER,
    ] {
        assert!(
            !seen.iter().any(|s| s == gone),
            "{gone} was forwarded: {seen:?}"
        );
    }
    for kept in [
        "authorization",
        "x-api-key",
        "mcp-protocol-version",
        "content-type",
    ] {
        assert!(
            seen.iter().any(|s| s == kept),
            "{kept} was dropped: {seen:?}"
        );
    }
    assert_eq!(
        body["headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p[0] == "host")
            .map(|p| p[1].clone()),
        Some(json!(up.to_string())),
        "Host names the upstream"
    );
    let forwarded: Value = serde_json::from_str(body["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        forwarded,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    );
    for gone in [
        "set-cookie",
        "access-control-allow-origin",
        "clear-site-data",
        "refresh",
        "link",
        "service-worker-allowed",
    ] {
        assert_eq!(got.get(gone), None, "{gone} came back through the relay");
    }
    assert_eq!(got.get("mcp-session-id").unwrap(), "abc");
    assert_eq!(got.get("x-hearth-relay").unwrap(), "upstream");
    assert_eq!(got.get("cache-control").unwrap(), "no-store");

    // No paths below the relay, and no redirects followed.
    let (status, _, _) = app
        .send(
            Method::POST,
            "/mcp/relay/up/../../api/session",
            Some(json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let mut aimed = app.headers();
    aimed.push((RELAY_TARGET_HEADER, up_url.as_str()));
    let (status, _, body) = call(server.addr, Method::GET, "/mcp/relay/up", &aimed, None).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::BAD_GATEWAY, "bad_redirect"),
        "{body}"
    );

    // Forgotten, it forwards nothing again.
    let (status, _, body) = app.send(Method::DELETE, "/api/mcp/relay/up", None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"removed": true})));
    let (status, _, _) = app
        .send(Method::POST, "/mcp/relay/up", Some(json!({})))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "current_thread")]
async fn a_token_never_follows_a_relay_that_another_tab_pointed_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let server = start("{}", dir.path());
    let app = App::connect(&server).await;
    let first = echo_upstream().await;
    let second = echo_upstream().await;
    let (first_url, second_url) = (
        format!("http://{first}/mcp"),
        format!("http://{second}/mcp"),
    );
    let register = |url: String| {
        let app = &app;
        async move {
            let (status, _, body) = app
                .send(
                    Method::PUT,
                    "/api/mcp/relay/docs",
                    Some(json!({"url": url, "local": true})),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    };
    let through = |target: Option<&str>| {
        let mut headers = app.headers();
        headers.push(("authorization", "Bearer issued-for-the-first-server"));
        if let Some(t) = target {
            headers.push((RELAY_TARGET_HEADER, t));
        }
        headers
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    };
    let post = |headers: Vec<(String, String)>| {
        let addr = server.addr;
        async move {
            let refs: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            call(
                addr,
                Method::POST,
                "/mcp/relay/docs",
                &refs,
                Some(json!({})),
            )
            .await
        }
    };

    // The first tab registers its server and talks to it with its token.
    register(first_url.clone()).await;
    let (status, _, body) = post(through(Some(&first_url))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A second tab points the same server somewhere else.
    register(second_url.clone()).await;
    // The first tab's next request, token and all, is refused: it never
    // reaches the new address.
    let (status, _, body) = post(through(Some(&first_url))).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "invalid_request"),
        "{body}"
    );
    // Nor does a request that names no target, or names it differently.
    for target in [None, Some("http://127.0.0.1:1/mcp"), Some("not a url")] {
        let (status, _, body) = post(through(target)).await;
        assert_eq!(status, StatusCode::CONFLICT, "{target:?}: {body}");
    }
    // The second tab's own requests go where it registered.
    let (status, _, body) = post(through(Some(&second_url))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p[0] == "host")
            .map(|p| p[1].clone()),
        Some(json!(second.to_string()))
    );
}

#[test]
fn both_eras_work_through_the_relay() {
    require_peers("both_eras_work_through_the_relay");
    let everything = start_everything();
    let modern = start_modern();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = start("{}", dir.path());
        let app = App::connect(&server).await;
        for (id, url) in [("everything", &everything.url), ("modern", &modern.url)] {
            let (status, _, body) = app
                .send(
                    Method::PUT,
                    &format!("/api/mcp/relay/{id}"),
                    Some(json!({"url": url, "local": true})),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }

        // 2025-11-25: a session, SSE answers, pagination, and DELETE.
        let legacy = app.mcp_to("/mcp/relay/everything", Some(&everything.url));
        let info = legacy.connect().await.unwrap();
        assert_eq!(info.era, Era::Legacy);
        assert!(legacy.session_id().is_some(), "Mcp-Session-Id came through");
        let echo = legacy
            .call_tool(
                "echo",
                json!({"message": "relayed"}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(text(&echo), "Echo: relayed");
        let resources = legacy.list_resources().await.unwrap();
        assert!(
            resources
                .iter()
                .any(|r| r.uri == "demo://resource/static/document/architecture.md"),
            "{resources:?}"
        );
        legacy.close().await.unwrap();

        // 2026-07-28: stateless, with the Mcp-* headers mirrored.
        let stateless = app.mcp_to("/mcp/relay/modern", Some(&modern.url));
        let info = stateless.connect().await.unwrap();
        assert_eq!(info.era, Era::Modern);
        let r = stateless
            .call_tool(
                "where",
                json!({"region": "eu-west"}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(text(&r), "region eu-west, header eu-west");
    });
}
