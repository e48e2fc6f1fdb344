//! `hearth serve` as a user runs it: the real binary, its flags and config
//! file, the token file on disk, and the network-tier API over real
//! loopback sockets, against upstream servers this test starts.

mod serve_support;

use std::net::SocketAddr;
use std::process::Command;

use axum::Router;
use axum::http::header;
use axum::routing::get;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use serve_support::{fake_dist, start};
use tokio::net::{TcpListener, TcpStream};

async fn upstream() -> SocketAddr {
    let app = Router::new()
        .route(
            "/page",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html")],
                    "<title>Loopback page</title><h1>Hi</h1><p>From a <a href='/x'>test</a> server.</p>",
                )
            }),
        )
        .route(
            "/search",
            get(|| async {
                axum::Json(json!({"results": [{"url": "https://example.org/", "title": "Example", "content": "snippet"}]}))
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// One HTTP/1.1 request; returns status and JSON (or text as a JSON string).
async fn call(
    server: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, Value) {
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
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_the_guarded_api() {
    let up = upstream().await;
    let dist_dir = tempfile::tempdir().unwrap();
    fake_dist(dist_dir.path());
    let config_dir = tempfile::tempdir().unwrap();
    let conf = config_dir.path().join("hearth");
    std::fs::create_dir(&conf).unwrap();
    std::fs::write(
        conf.join("config.toml"),
        format!("[search]\nbackend = \"searxng\"\nurl = \"http://{up}\"\n\n[rate_limit.web_fetch]\nper_minute = 600\nburst = 50\n"),
    )
    .unwrap();
    let server = start(
        &["--allow-private-fetch", &up.to_string()],
        dist_dir.path(),
        &conf,
    );
    let host = server.addr.to_string();
    let origin = format!("http://{host}");

    // The key: in the launch link, and in an owner-only file.
    let (_, token) = server.line.split_once("#token=").unwrap();
    let token = token.to_string();
    let on_disk = std::fs::read_to_string(conf.join("api-token")).unwrap();
    assert_eq!(on_disk.trim(), token);
    let (status, session) = call(
        server.addr,
        Method::GET,
        "/api/session",
        &[
            ("host", &host),
            ("sec-fetch-site", "same-origin"),
            ("x-hearth-token", &token),
        ],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{session}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(conf.join("api-token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(
        session["search"],
        json!({"configured": true, "backend": "searxng"})
    );

    let app = [
        ("host", host.as_str()),
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("x-hearth-token", token.as_str()),
        ("content-type", "application/json"),
    ];

    // A loopback page the flag allows is fetched and read.
    let (status, page) = call(
        server.addr,
        Method::POST,
        "/api/fetch",
        &app,
        Some(json!({"url": format!("http://{up}/page")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["title"], "Loopback page");
    assert_eq!(
        page["content"],
        // Readability makes the page's headings one level lower.
        format!("## Hi\n\nFrom a [test](http://{up}/x) server.")
    );

    // The proxy itself, or any other loopback port, is refused.
    let (status, v) = call(
        server.addr,
        Method::POST,
        "/api/fetch",
        &app,
        Some(json!({"url": format!("http://{host}/api/session")})),
    )
    .await;
    assert_eq!(
        (status, v["error"]["code"].clone()),
        (StatusCode::FORBIDDEN, json!("blocked_address"))
    );

    // Search through the configured backend (allowed by the same flag).
    let (status, found) = call(
        server.addr,
        Method::POST,
        "/api/search",
        &app,
        Some(json!({"query": "example"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["results"][0]["url"], "https://example.org/");

    // A rebound name, a foreign page, a missing token: refused.
    let mut rebound = app;
    rebound[0] = ("host", "evil.example");
    let mut foreign = app;
    foreign[1] = ("origin", "https://evil.example");
    foreign[2] = ("sec-fetch-site", "cross-site");
    let no_token = &app[..3];
    for (name, headers, code) in [
        ("rebound host", &rebound[..], "forbidden_host"),
        ("foreign page", &foreign[..], "forbidden_fetch_site"),
        ("no token", no_token, "missing_token"),
    ] {
        let (status, v) = call(
            server.addr,
            Method::POST,
            "/api/fetch",
            headers,
            Some(json!({"url": format!("http://{up}/page")})),
        )
        .await;
        assert_eq!(
            (status, v["error"]["code"].clone()),
            (StatusCode::FORBIDDEN, json!(code)),
            "{name}"
        );
    }
    drop(server);
}

#[test]
fn a_broken_config_stops_serve_with_a_clear_message() {
    let dist_dir = tempfile::tempdir().unwrap();
    fake_dist(dist_dir.path());
    let conf = tempfile::tempdir().unwrap();
    std::fs::write(conf.path().join("config.toml"), "[fetch]\nmax_byte = 5\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["serve", "--port", "0", "--dist"])
        .arg(dist_dir.path())
        .arg("--config-dir")
        .arg(conf.path())
        .env_remove("HEARTH_CONFIG")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml is not valid"), "{err}");
    assert!(err.contains("unknown field `max_byte`"), "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["serve", "--port", "0", "--dist"])
        .arg(dist_dir.path())
        .arg("--config-dir")
        .arg(tempfile::tempdir().unwrap().path())
        .args(["--allow-private-fetch", "localhost:8888"])
        .env_remove("HEARTH_CONFIG")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-private-fetch: \"localhost:8888\" is not an address"),
        "{err}"
    );
}

/// A program on this machine can set any header it likes: Host, Origin,
/// Sec-Fetch-Site. None of that gets it the key or an answer; only the
/// key from the launch link does, and the key never travels over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_process_forging_browser_headers_gets_no_key_and_no_answer() {
    let dist_dir = tempfile::tempdir().unwrap();
    fake_dist(dist_dir.path());
    let config_dir = tempfile::tempdir().unwrap();
    let conf = config_dir.path().join("hearth");
    std::fs::create_dir(&conf).unwrap();
    std::fs::write(
        conf.join("mcp-servers.json"),
        r#"{"mcpServers": {"files": {"command": "cat"}}}"#,
    )
    .unwrap();
    let server = start(&[], dist_dir.path(), &conf);
    let host = server.addr.to_string();
    let origin = format!("http://{host}");
    let key = std::fs::read_to_string(conf.join("api-token"))
        .unwrap()
        .trim()
        .to_string();
    // The launch link carries the key, in the fragment (never sent to a
    // server, never in a log or a Referer).
    assert_eq!(
        server.line,
        format!("Hearth is running at http://{host}/#token={key}")
    );
    let forged = [
        ("host", host.as_str()),
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("sec-fetch-mode", "cors"),
        ("content-type", "application/json"),
    ];
    let routes: [(Method, &str); 11] = [
        (Method::GET, "/api/session"),
        (Method::GET, "/api/local-servers"),
        (Method::GET, "/api/search/backend"),
        (Method::PUT, "/api/search/backend"),
        (Method::POST, "/api/fetch"),
        (Method::POST, "/api/search"),
        (Method::GET, "/api/mcp/stdio"),
        (Method::POST, "/mcp/stdio/files"),
        (Method::PUT, "/api/mcp/relay/x"),
        (Method::GET, "/api/mcp/relay/x"),
        (Method::POST, "/mcp/relay/x"),
    ];
    for (method, path) in routes {
        let (status, v) = call(server.addr, method.clone(), path, &forged, Some(json!({}))).await;
        assert_eq!(
            (status, v["error"]["code"].clone()),
            (StatusCode::FORBIDDEN, json!("missing_token")),
            "{method} {path}: {v}"
        );
        assert!(
            !v.to_string().contains(&key),
            "{method} {path} gave the key away"
        );
    }
    // With the key, the same request is answered, and the session does
    // not repeat the key.
    let mut with_key = forged.to_vec();
    with_key.push(("x-hearth-token", key.as_str()));
    let (status, session) = call(server.addr, Method::GET, "/api/session", &with_key, None).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert!(!session.to_string().contains(&key), "{session}");
    let (status, local) = call(
        server.addr,
        Method::GET,
        "/api/local-servers",
        &with_key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{local}");
    assert!(local["listening"].is_array(), "{local}");
    drop(server);
}
