//! `hearth serve` as an MCP server for agents, through the real binary on
//! a loopback socket: the endpoint's guard against every kind of caller
//! it must refuse, both protocol eras as Hearth's own client detects
//! them, and the relay to the tab — exactly one tab answers, progress and
//! cancellation pass through, revoking ends sessions at once, and with no
//! tab an agent is told to open Hearth.
//!
//! The tab here is this test holding the tab's channel with the app's
//! key and answering as scripted: what is under test is the server's
//! side. The journeys with the real tab and real SDK clients are in
//! `e2e/tests/agents.spec.mjs`.

mod mcp_support;
mod serve_support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::Duration;

use axum::http::HeaderMap;
use bytes::Bytes;
use futures::StreamExt;
use hearth_core::mcp::client::{CallOptions, ClientConfig, McpClient, ServerEvent, cancellation};
use hearth_core::mcp::version::{Era, ServerMemory};
use hearth_core::mcp::{McpError, NoInput};
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_support::ReqwestTransport;
use serde_json::{Value, json};
use serve_support::{Server, fake_dist};
use std::io::BufRead;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// `hearth serve` over a throwaway app and config directory in `dir`.
fn start(dir: &Path) -> Server {
    let dist = fake_dist(&dir.join("dist"));
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    serve_support::start(&[], &dist, &conf)
}

async fn call(
    server: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, String)],
    body: Option<String>,
) -> (StatusCode, HeaderMap, Value) {
    let stream = TcpStream::connect(server).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        req = req.header(*k, v.as_str());
    }
    let res = sender
        .send_request(
            req.body(Full::new(Bytes::from(body.unwrap_or_default())))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, headers, value)
}

impl Server {
    fn host(&self) -> String {
        self.addr.to_string()
    }

    /// The app's own headers: what the browser sends for Hearth's page.
    fn app_headers(&self) -> Vec<(&'static str, String)> {
        vec![
            ("host", self.host()),
            ("origin", format!("http://{}", self.host())),
            ("sec-fetch-site", "same-origin".into()),
            ("x-hearth-token", self.key()),
            ("content-type", "application/json".into()),
        ]
    }

    async fn app(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let (s, _, v) = call(
            self.addr,
            method,
            path,
            &self.app_headers(),
            body.map(|b| b.to_string()),
        )
        .await;
        (s, v)
    }

    /// Connects an agent as the Agents panel does; its credential.
    async fn connect_agent(&self, name: &str) -> (String, String) {
        let (status, v) = self
            .app(
                Method::POST,
                "/api/agents",
                Some(json!({"name": name, "client": "claude-code"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
        (
            v["agent"]["id"].as_str().unwrap().to_string(),
            v["credential"].as_str().unwrap().to_string(),
        )
    }

    /// A modern request to /mcp/server with the agent's headers.
    fn agent_headers(&self, credential: &str, method: &str) -> Vec<(&'static str, String)> {
        vec![
            ("host", self.host()),
            ("authorization", format!("Bearer {credential}")),
            ("content-type", "application/json".into()),
            ("accept", "application/json, text/event-stream".into()),
            ("mcp-protocol-version", "2026-07-28".into()),
            ("mcp-method", method.into()),
        ]
    }

    /// Hearth's own MCP client, as an agent with `credential`.
    fn client(&self, credential: &str, memory: Option<ServerMemory>) -> McpClient {
        self.client_with(credential, memory, None)
    }

    fn client_with(
        &self,
        credential: &str,
        memory: Option<ServerMemory>,
        events: Option<hearth_core::mcp::client::EventSink>,
    ) -> McpClient {
        let mut config = ClientConfig::new(format!("http://{}/mcp/server", self.host()));
        config
            .headers
            .push(("Authorization".into(), format!("Bearer {credential}")));
        McpClient::build(
            Rc::new(ReqwestTransport::new().unwrap()),
            config,
            Rc::new(NoInput),
            None,
            events,
            memory,
        )
    }
}

fn modern_body(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// A scripted tab: holds the channel with the app's key and hands out
/// what arrives on it.
struct Tab {
    name: String,
    events: mpsc::UnboundedReceiver<(String, Value)>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Tab {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Tab {
    async fn open(server: &Server) -> Tab {
        mcp_support::transport::install_crypto();
        let client = reqwest::Client::new();
        let mut req = client.get(format!("http://{}/api/agents/channel", server.host()));
        for (k, v) in server.app_headers() {
            if k != "host" && k != "content-type" {
                req = req.header(k, v);
            }
        }
        let response = req.send().await.unwrap();
        assert_eq!(response.status(), 200);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut parser = hearth_core::sse::SseParser::new();
            let mut body = response.bytes_stream();
            while let Some(Ok(chunk)) = body.next().await {
                for ev in parser.feed(&chunk).unwrap() {
                    let data = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
                    let _ = tx.send((ev.event_type().to_string(), data));
                }
            }
        });
        let (kind, hello) = rx.recv().await.unwrap();
        assert_eq!(kind, "hello");
        Tab {
            name: hello["tab"].as_str().unwrap().to_string(),
            events: rx,
            task,
        }
    }

    async fn next(&mut self) -> (String, Value) {
        tokio::time::timeout(Duration::from_secs(10), self.events.recv())
            .await
            .expect("the tab heard nothing within 10 s")
            .unwrap()
    }

    async fn request(&mut self) -> Value {
        let (kind, v) = self.next().await;
        assert_eq!(kind, "request", "{v}");
        v
    }

    async fn reply(&self, server: &Server, relay: &str, body: Value) -> StatusCode {
        let mut reply = json!({"relay": relay, "tab": self.name});
        for (k, v) in body.as_object().unwrap() {
            reply[k] = v.clone();
        }
        server
            .app(Method::POST, "/api/agents/reply", Some(reply))
            .await
            .0
    }
}

fn tools_result() -> Value {
    json!({"tools": [{"name": "notes", "title": "Notes", "description": "Keep notes", "inputSchema": {"type": "object"}}]})
}

/// One refused request: what it is, its method, headers, body, and the
/// status it must get.
type Case = (
    &'static str,
    Method,
    Vec<(&'static str, String)>,
    Option<String>,
    StatusCode,
);

#[tokio::test(flavor = "current_thread")]
async fn strangers_browsers_and_the_apps_own_key_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_, credential) = server.connect_agent("Claude Code").await;
    let body = modern_body("server/discover", json!({}));
    let good = server.agent_headers(&credential, "server/discover");
    let (status, _, v) = call(
        server.addr,
        Method::POST,
        "/mcp/server",
        &good,
        Some(body.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["resultType"], "complete");

    let with = |extra: &[(&'static str, String)], drop: &[&str]| -> Vec<(&'static str, String)> {
        let mut h: Vec<(&'static str, String)> = good
            .iter()
            .filter(|(k, _)| !drop.contains(k))
            .cloned()
            .collect();
        h.extend(extra.iter().cloned());
        h
    };
    let cases: Vec<Case> = vec![
        (
            "no credential",
            Method::POST,
            with(&[], &["authorization"]),
            Some(body.clone()),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "a wrong credential",
            Method::POST,
            with(
                &[("authorization", "Bearer hearth_agent_nope".into())],
                &["authorization"],
            ),
            Some(body.clone()),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "the app's key as a bearer",
            Method::POST,
            with(
                &[("authorization", format!("Bearer {}", server.key()))],
                &["authorization"],
            ),
            Some(body.clone()),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "the app's key in its own header",
            Method::POST,
            with(&[("x-hearth-token", server.key())], &["authorization"]),
            Some(body.clone()),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "a rebinding Host",
            Method::POST,
            with(&[("host", "evil.example:80".into())], &["host"]),
            Some(body.clone()),
            StatusCode::FORBIDDEN,
        ),
        (
            "a page of another origin",
            Method::POST,
            with(&[("origin", "https://evil.example".into())], &[]),
            Some(body.clone()),
            StatusCode::FORBIDDEN,
        ),
        (
            "a cross-site fetch",
            Method::POST,
            with(&[("sec-fetch-site", "cross-site".into())], &[]),
            Some(body.clone()),
            StatusCode::FORBIDDEN,
        ),
        (
            "a CORS preflight",
            Method::OPTIONS,
            with(
                &[
                    ("origin", "https://evil.example".into()),
                    ("access-control-request-method", "POST".into()),
                ],
                &[],
            ),
            None,
            StatusCode::FORBIDDEN,
        ),
        (
            "not JSON",
            Method::POST,
            with(&[("content-type", "text/plain".into())], &["content-type"]),
            Some(body.clone()),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            "oversized",
            Method::POST,
            good.clone(),
            Some(format!("{{\"x\":\"{}\"}}", "a".repeat(2 * 1024 * 1024))),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            "malformed JSON-RPC",
            Method::POST,
            good.clone(),
            Some("{\"jsonrpc\":\"2.0\",\"id\":1,".into()),
            StatusCode::BAD_REQUEST,
        ),
        (
            "a batch",
            Method::POST,
            good.clone(),
            Some(format!("[{body}]")),
            StatusCode::BAD_REQUEST,
        ),
        (
            "a PUT",
            Method::PUT,
            good.clone(),
            Some(body.clone()),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
    ];
    for (what, method, headers, body, want) in cases {
        let (status, h, v) = call(server.addr, method, "/mcp/server", &headers, body).await;
        assert_eq!(status, want, "{what}: {v}");
        assert!(h.get("access-control-allow-origin").is_none(), "{what}");
        assert!(
            v["error"]["message"].is_string(),
            "{what}: a readable JSON-RPC error, not {v}"
        );
        if want == StatusCode::UNAUTHORIZED {
            assert!(h.get("www-authenticate").is_some(), "{what}");
        }
    }
    // The app's key never opens the endpoint; the agent's credential never
    // opens the app's API (not even to approve its own calls).
    let agent = |path: &str| -> Vec<(&'static str, String)> {
        let _ = path;
        vec![
            ("host", server.host()),
            ("authorization", format!("Bearer {credential}")),
            ("content-type", "application/json".into()),
        ]
    };
    for (method, path, body) in [
        (Method::GET, "/api/agents", None),
        (
            Method::PUT,
            "/api/agents/whatever",
            Some(json!({"always": ["notes"]}).to_string()),
        ),
        (
            Method::POST,
            "/api/agents/reply",
            Some(json!({"relay": "r1", "tab": "tab-1", "result": {}}).to_string()),
        ),
        (Method::GET, "/api/agents/channel", None),
    ] {
        let (status, _, v) = call(server.addr, method, path, &agent(path), body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {v}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn both_eras_are_spoken_and_with_no_tab_the_agent_is_told_to_open_hearth() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_, credential) = server.connect_agent("Codex").await;
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            // No tab: a clear error naming what to do.
            let modern = server.client(&credential, None);
            let info = modern.connect().await.unwrap();
            assert_eq!(
                info.era,
                Era::Modern,
                "Hearth's own client detects the modern era"
            );
            assert_eq!(info.implementation.unwrap().name, "hearth");
            assert!(info.capabilities.tools.is_some());
            match modern.list_tools().await {
                Err(McpError::Rpc(e)) => {
                    assert!(
                        e.message.starts_with("open Hearth to use its skills"),
                        "{e}"
                    )
                }
                other => panic!("{other:?}"),
            }

            // With a tab, the tab answers, in either era.
            let mut tab = Tab::open(&server).await;
            let listing = tokio::join!(modern.list_tools(), async {
                let req = tab.request().await;
                assert_eq!(req["method"], "tools/list");
                assert_eq!(req["agent"]["name"], "Codex");
                assert_eq!(req["agent"]["shared"], json!(["notes", "tasks", "memory"]));
                tab.reply(
                    &server,
                    req["relay"].as_str().unwrap(),
                    json!({"result": tools_result()}),
                )
                .await
            });
            assert_eq!(listing.0.unwrap().tools[0].name, "notes");
            assert_eq!(listing.1, StatusCode::OK);

            let legacy = server.client(&credential, Some(ServerMemory::legacy()));
            let info = legacy.connect().await.unwrap();
            assert_eq!(info.era, Era::Legacy);
            assert!(legacy.session_id().is_some());
            let listing = tokio::join!(legacy.list_tools(), async {
                let req = tab.request().await;
                tab.reply(
                    &server,
                    req["relay"].as_str().unwrap(),
                    json!({"result": tools_result()}),
                )
                .await
            });
            assert_eq!(listing.0.unwrap().tools.len(), 1);
            legacy.close().await.unwrap();
        })
        .await;
}

#[tokio::test(flavor = "current_thread")]
async fn exactly_one_tab_answers_and_progress_and_cancellation_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_, credential) = server.connect_agent("goose").await;
    let mut older = Tab::open(&server).await;
    let mut newer = Tab::open(&server).await;
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let heard: Rc<std::cell::RefCell<Vec<String>>> = Rc::default();
            let sink = {
                let heard = heard.clone();
                Rc::new(move |e: ServerEvent| {
                    if let ServerEvent::Progress(p) = e {
                        heard.borrow_mut().push(p.message.unwrap_or_default());
                    }
                }) as hearth_core::mcp::client::EventSink
            };
            let client = server.client_with(&credential, None, Some(sink));
            client.connect().await.unwrap();
            // Listing first (the modern client reads tools' headers).
            let (_, _) = tokio::join!(client.list_tools(), async {
                let req = newer.request().await;
                newer
                    .reply(&server, req["relay"].as_str().unwrap(), json!({"result": tools_result()}))
                    .await
            });
            let options = CallOptions {
                progress: true,
                cancel: None,
            };
            let (result, _) = tokio::join!(
                client.call_tool("notes", json!({"action": "list"}), options),
                async {
                    let req = newer.request().await;
                    assert_eq!(req["method"], "tools/call");
                    assert_eq!(req["progress"], true);
                    assert_eq!(req["params"]["name"], "notes");
                    assert!(req["params"].get("_meta").is_none(), "protocol metadata stays behind");
                    let relay = req["relay"].as_str().unwrap().to_string();
                    // The older tab was sent nothing and may not answer.
                    assert_eq!(
                        older.reply(&server, &relay, json!({"result": {}})).await,
                        StatusCode::CONFLICT
                    );
                    newer
                        .reply(&server, &relay, json!({"progress": {"progress": 0.5, "message": "Waiting for the person"}}))
                        .await;
                    newer
                        .reply(&server, &relay, json!({"result": {"content": [{"type": "text", "text": "3 notes"}], "isError": false}}))
                        .await
                }
            );
            let result = result.unwrap();
            assert_eq!(result.is_error, Some(false));
            assert_eq!(heard.borrow().as_slice(), ["Waiting for the person"]);
            assert!(older.events.try_recv().is_err(), "the older tab heard nothing");

            // The agent cancels (2026-07-28: it closes the stream): the tab
            // is told, so a question still waiting goes away.
            let (canceller, cancel) = cancellation();
            let (result, _) = tokio::join!(
                client.call_tool(
                    "notes",
                    json!({"action": "create", "title": "x"}),
                    CallOptions { progress: false, cancel: Some(cancel) }
                ),
                async {
                    let req = newer.request().await;
                    canceller.cancel("changed my mind");
                    let (kind, v) = newer.next().await;
                    assert_eq!(kind, "cancel");
                    assert_eq!(v["relay"], req["relay"]);
                }
            );
            assert!(matches!(result, Err(McpError::Cancelled)));

            // The newer tab closes: the older one answers from then on.
            drop(newer);
            tokio::time::sleep(Duration::from_millis(200)).await;
            let (result, _) = tokio::join!(client.list_tools(), async {
                let req = older.request().await;
                older
                    .reply(&server, req["relay"].as_str().unwrap(), json!({"result": tools_result()}))
                    .await
            });
            assert!(result.is_ok());
        })
        .await;
}

#[tokio::test(flavor = "current_thread")]
async fn revoking_ends_sessions_and_streams_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (id, credential) = server.connect_agent("Claude Desktop").await;
    let (_, other) = server.connect_agent("Codex").await;
    let mut tab = Tab::open(&server).await;
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let legacy = server.client(&credential, Some(ServerMemory::legacy()));
            legacy.connect().await.unwrap();
            let modern = server.client(&credential, None);
            modern.connect().await.unwrap();
            let mut listening = modern
                .listen(hearth_core::mcp::model::SubscriptionFilter {
                    tools_list_changed: Some(true),
                    resources_list_changed: Some(true),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert!(matches!(
                listening.next().await,
                Some(Ok(ServerEvent::Subscribed(_)))
            ));
            // A change in the tab reaches the listener.
            let (status, _) = server
                .app(
                    Method::POST,
                    "/api/agents/notify",
                    Some(json!({"resources": true})),
                )
                .await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(
                listening.next().await.unwrap().unwrap(),
                ServerEvent::ResourcesChanged
            );

            // A call waits in the tab when the person revokes the agent.
            let waiting = legacy.list_tools();
            let revoke = async {
                let req = tab.request().await;
                let (status, _) = server
                    .app(Method::DELETE, &format!("/api/agents/{id}"), None)
                    .await;
                assert_eq!(status, StatusCode::OK);
                let (kind, v) = tab.next().await;
                assert_eq!((kind.as_str(), &v["relay"]), ("cancel", &req["relay"]));
            };
            let (waited, _) = tokio::join!(waiting, revoke);
            match waited {
                Err(McpError::Rpc(e)) => assert!(e.message.contains("revoked"), "{e}"),
                other => panic!("{other:?}"),
            }
            // Its stream ends, and nothing it sends is taken any more.
            assert_eq!(listening.next().await, None);
            let after = legacy.list_tools().await;
            assert!(
                matches!(after, Err(McpError::Unauthorized { .. })),
                "{after:?}"
            );
            assert!(matches!(
                server.client(&credential, None).connect().await,
                Err(McpError::Unauthorized { .. })
            ));
            // Another agent is untouched.
            assert!(server.client(&other, None).connect().await.is_ok());
        })
        .await;
}

// ---- OAuth: an agent whose client supports MCP's authorization spec ----

impl Tab {
    /// The next event, which must be a consent request.
    async fn consent(&mut self) -> Value {
        let (kind, v) = self.next().await;
        assert_eq!(kind, "consent", "{v}");
        v
    }

    /// Answers a consent as the tab's dialog does.
    async fn answer(&self, server: &Server, consent: &Value, allow: bool) -> (StatusCode, Value) {
        server
            .app(
                Method::POST,
                "/api/agents/consent",
                Some(json!({"consent": consent["consent"], "tab": self.name, "allow": allow})),
            )
            .await
    }
}

/// The Python SDK's OAuth client (`mcp-peers/oauth_client.py`), signing
/// in to `server` and then running `steps`.
struct PyOAuth {
    child: Child,
    lines: mpsc::UnboundedReceiver<Value>,
}

impl Drop for PyOAuth {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PyOAuth {
    fn start(server: &Server, steps: Value) -> PyOAuth {
        let dir = mcp_support::peers_dir();
        let mut child = Command::new(dir.join(".venv/bin/python"))
            .arg(dir.join("oauth_client.py"))
            .arg(format!("http://{}/mcp/server", server.host()))
            .arg(steps.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python SDK's OAuth client");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        PyOAuth { child, lines }
    }

    /// The next line whose step is `step`, skipping pages.
    async fn next(&mut self, step: &str) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!("the Python client said nothing within 60 s (waiting for {step})")
                })
                .unwrap_or_else(|| panic!("the Python client ended (waiting for {step})"));
            if line["step"] == step {
                return line;
            }
            assert!(
                line["step"] == "page" || line["step"] == "authorize",
                "waiting for {step}, got {line}"
            );
        }
    }

    fn resume(&mut self) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_python_sdks_oauth_client_signs_in_with_consent_in_the_tab_and_revoking_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let mut tab = Tab::open(&server).await;
    let mut py = PyOAuth::start(
        &server,
        json!([
            {"do": "list_tools"},
            {"do": "pause"},
            {"do": "call", "name": "notes", "arguments": {"action": "list"}}
        ]),
    );

    // Discovery and registration happened; the browser is sent to
    // /authorize with PKCE S256 and the resource.
    let authorize = py.next("authorize").await;
    let url = authorize["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://{}/authorize?", server.host())),
        "{url}"
    );
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    assert!(url.contains("resource=http"), "{url}");

    // The tab is asked, naming the client, where the answer goes and what
    // it would see; the browser's page says to answer there.
    let consent = tab.consent().await;
    assert_eq!(consent["client_name"], "Claude Code");
    assert_eq!(consent["client"], "claude-code");
    assert!(
        consent["redirect_host"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:"),
        "{consent}"
    );
    assert_eq!(consent["shared"], json!(["notes", "tasks", "memory"]));
    let page = py.next("page").await;
    assert_eq!(page["title"], "Approve in your Hearth tab");

    let (status, outcome) = tab.answer(&server, &consent, true).await;
    assert_eq!(status, StatusCode::CREATED, "{outcome}");
    let agent = outcome["agent"]["id"].as_str().unwrap().to_string();
    assert_eq!(outcome["agent"]["name"], "Claude Code");

    // Token, then MCP: the request reaches the tab as that agent's.
    py.next("connected").await;
    let req = tab.request().await;
    assert_eq!(req["method"], "tools/list");
    assert_eq!(req["agent"]["id"], agent.as_str());
    tab.reply(
        &server,
        req["relay"].as_str().unwrap(),
        json!({"result": tools_result()}),
    )
    .await;
    assert_eq!(py.next("list_tools").await["tools"], json!(["notes"]));
    py.next("pause").await;

    // The agent shows in Settings → Agents like any other; revoking it
    // ends its OAuth session at once: the next request is a 401, the
    // client signs in again, and this time the person denies it.
    let (_, listing) = server.app(Method::GET, "/api/agents", None).await;
    assert_eq!(listing["agents"][0]["id"], agent.as_str());
    let (status, _) = server
        .app(Method::DELETE, &format!("/api/agents/{agent}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    py.resume();
    let again = tab.consent().await;
    let (status, outcome) = tab.answer(&server, &again, false).await;
    assert_eq!((status, &outcome), (StatusCode::OK, &json!({})));
    // The SDK ends the session on a denied sign-in.
    let denied = py.next("failed").await;
    assert!(
        denied["error"].as_str().unwrap().contains("access_denied"),
        "{denied}"
    );
    let (_, listing) = server.app(Method::GET, "/api/agents", None).await;
    assert_eq!(listing["agents"], json!([]), "Deny connects no agent");
}

const REDIRECT: &str = "http://127.0.0.1:9/callback";

impl Server {
    /// An agent's plain request (no browser headers) to this server.
    async fn plain(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: String,
    ) -> (StatusCode, HeaderMap, Value) {
        call(
            self.addr,
            method,
            path,
            &[("host", self.host()), ("content-type", content_type.into())],
            Some(body),
        )
        .await
    }

    async fn register(&self, redirect: &str) -> (StatusCode, Value) {
        let (s, _, v) = self
            .plain(
                Method::POST,
                "/register",
                "application/json",
                json!({"client_name": "Test agent", "redirect_uris": [redirect]}).to_string(),
            )
            .await;
        (s, v)
    }

    /// A browser's GET of an OAuth page: its status, and where it sends
    /// the browser next.
    async fn browse(&self, path: &str) -> (StatusCode, String, Value) {
        let (s, h, v) = call(self.addr, Method::GET, path, &[("host", self.host())], None).await;
        let location = h
            .get("location")
            .map(|l| l.to_str().unwrap().to_string())
            .unwrap_or_default();
        (s, location, v)
    }

    async fn exchange(&self, form: &[(&str, &str)]) -> (StatusCode, Value) {
        let (s, _, v) = self
            .plain(
                Method::POST,
                "/token",
                "application/x-www-form-urlencoded",
                hearth_core::mcp::url::form_encode(form),
            )
            .await;
        (s, v)
    }

    /// The status `/mcp/server` gives `token` (for a request it answers
    /// itself, so no tab is asked).
    async fn endpoint_status(&self, token: &str) -> StatusCode {
        let (s, _, _) = call(
            self.addr,
            Method::POST,
            "/mcp/server",
            &self.agent_headers(token, "server/discover"),
            Some(modern_body("server/discover", json!({}))),
        )
        .await;
        s
    }
}

fn query_of(location: &str) -> std::collections::HashMap<String, String> {
    hearth_core::mcp::url::form_decode(location.split_once('?').map_or("", |(_, q)| q))
        .into_iter()
        .collect()
}

/// Runs /authorize for `client` with the S256 challenge of `verifier`,
/// the tab allowing: the code.
async fn allowed_code(server: &Server, tab: &mut Tab, client: &str, verifier: &str) -> String {
    let challenge = hearth_core::mcp::oauth::s256(verifier);
    let resource = format!("http://{}/mcp/server", server.host());
    let query = hearth_core::mcp::url::form_encode(&[
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", REDIRECT),
        ("state", "s1"),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("resource", resource.as_str()),
    ]);
    let (status, wait, _) = server.browse(&format!("/authorize?{query}")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(wait.starts_with("/authorize/wait?consent="), "{wait}");
    let (status, _, page) = server.browse(&wait).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.as_str()
            .unwrap()
            .contains("Approve in your Hearth tab")
    );
    let consent = tab.consent().await;
    assert_eq!(
        tab.answer(server, &consent, true).await.0,
        StatusCode::CREATED
    );
    let (status, back, _) = server.browse(&wait).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(back.starts_with(REDIRECT), "{back}");
    let q = query_of(&back);
    assert_eq!(q["state"], "s1");
    assert_eq!(q["iss"], format!("http://{}/", server.host()));
    q["code"].clone()
}

const VERIFIER: &str = "a-verifier-of-forty-three-characters-or-more_0123";

#[tokio::test(flavor = "current_thread")]
async fn oauth_attacks_are_refused_and_a_code_is_single_use_and_bound() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let host = server.host();

    // The 401 and both metadata documents point the client at Hearth.
    let (status, headers, _) = call(
        server.addr,
        Method::POST,
        "/mcp/server",
        &[
            ("host", host.clone()),
            ("content-type", "application/json".into()),
        ],
        Some(modern_body("tools/list", json!({}))),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = headers["www-authenticate"].to_str().unwrap();
    let prm_url = format!("http://{host}/.well-known/oauth-protected-resource/mcp/server");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{prm_url}\"")),
        "{challenge}"
    );
    let (_, _, prm) = server
        .browse("/.well-known/oauth-protected-resource/mcp/server")
        .await;
    assert_eq!(prm["resource"], format!("http://{host}/mcp/server"));
    assert_eq!(
        prm["authorization_servers"],
        json!([format!("http://{host}/")])
    );
    let (_, _, asm) = server
        .browse("/.well-known/oauth-authorization-server")
        .await;
    assert_eq!(asm["issuer"], format!("http://{host}/"));
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        asm["registration_endpoint"],
        format!("http://{host}/register")
    );

    // Registration: only loopback or https redirect URIs, never from a
    // web page.
    let (status, v) = server.register("http://evil.example/callback").await;
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri"))
    );
    let (status, _, _) = call(
        server.addr,
        Method::POST,
        "/register",
        &[
            ("host", host.clone()),
            ("origin", "http://evil.example".into()),
            ("content-type", "application/json".into()),
        ],
        Some(json!({"redirect_uris": [REDIRECT]}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, client) = server.register(REDIRECT).await;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    let client = client["client_id"].as_str().unwrap().to_string();
    let mut tab = Tab::open(&server).await;

    // Plain PKCE is refused back to the client, without asking the tab;
    // a redirect URI the client did not register is never redirected to.
    let plain = hearth_core::mcp::url::form_encode(&[
        ("response_type", "code"),
        ("client_id", client.as_str()),
        ("redirect_uri", REDIRECT),
        ("state", "s"),
        ("code_challenge", VERIFIER),
        ("code_challenge_method", "plain"),
    ]);
    let (status, back, _) = server.browse(&format!("/authorize?{plain}")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let q = query_of(&back);
    assert_eq!(
        (q["error"].as_str(), q["state"].as_str()),
        ("invalid_request", "s")
    );
    let elsewhere = plain
        .replace("%3A9%2Fcallback", "%3A9%2Fother")
        .replace("plain", "S256");
    let (status, back, _) = server.browse(&format!("/authorize?{elsewhere}")).await;
    assert_eq!((status, back.as_str()), (StatusCode::BAD_REQUEST, ""));

    // A consent answered by anything but the app, with its key, from its
    // own page, is refused; the tab's answer then goes through.
    let challenge = hearth_core::mcp::oauth::s256(VERIFIER);
    let request = hearth_core::mcp::url::form_encode(&[
        ("response_type", "code"),
        ("client_id", client.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ]);
    let (_, wait, _) = server.browse(&format!("/authorize?{request}")).await;
    server.browse(&wait).await;
    let consent = tab.consent().await;
    let (_, bearer) = server.connect_agent("Already connected").await;
    let forged = json!({"consent": consent["consent"], "tab": tab.name, "allow": true}).to_string();
    let mut from_evil = server.app_headers();
    from_evil.retain(|(k, _)| *k != "origin");
    from_evil.push(("origin", "http://evil.example".into()));
    let mut as_agent = server.agent_headers(&bearer, "tools/list");
    as_agent.push(("origin", format!("http://{host}")));
    as_agent.push(("sec-fetch-site", "same-origin".into()));
    for (who, headers, want) in [
        ("the agent's credential", as_agent, StatusCode::FORBIDDEN),
        ("another origin", from_evil, StatusCode::FORBIDDEN),
    ] {
        let (status, _, v) = call(
            server.addr,
            Method::POST,
            "/api/agents/consent",
            &headers,
            Some(forged.clone()),
        )
        .await;
        assert_eq!(status, want, "{who}: {v}");
    }
    let (status, _, page) = server.browse(&wait).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "still waiting for the person: {page}"
    );
    assert_eq!(tab.answer(&server, &consent, false).await.0, StatusCode::OK);
    let (_, back, _) = server.browse(&wait).await;
    assert_eq!(query_of(&back)["error"], "access_denied");

    // A wrong verifier fails, spends the code and revokes its agent.
    let code = allowed_code(&server, &mut tab, &client, VERIFIER).await;
    let wrong = "b".repeat(43);
    let exchange = |code: &str, verifier: &str, redirect: &str| {
        vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code.to_string()),
            ("client_id", client.clone()),
            ("redirect_uri", redirect.to_string()),
            ("code_verifier", verifier.to_string()),
        ]
    };
    let send = |form: Vec<(&'static str, String)>| {
        let server = &server;
        async move {
            let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            server.exchange(&pairs).await
        }
    };
    let (status, v) = send(exchange(&code, &wrong, REDIRECT)).await;
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let (status, _) = send(exchange(&code, VERIFIER, REDIRECT)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the code is spent");

    // A redirect URI other than the authorization's fails.
    let code = allowed_code(&server, &mut tab, &client, VERIFIER).await;
    let (status, v) = send(exchange(&code, VERIFIER, "http://127.0.0.1:9/other")).await;
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    // The right exchange gives the agent's credential; a reused code
    // fails and revokes what it gave.
    let code = allowed_code(&server, &mut tab, &client, VERIFIER).await;
    let (status, token) = send(exchange(&code, VERIFIER, REDIRECT)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(token["token_type"], "Bearer");
    let access = token["access_token"].as_str().unwrap().to_string();
    assert_eq!(server.endpoint_status(&access).await, StatusCode::OK);
    let (status, v) = send(exchange(&code, VERIFIER, REDIRECT)).await;
    assert_eq!(
        (status, v["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(
        server.endpoint_status(&access).await,
        StatusCode::UNAUTHORIZED
    );

    // A token of an agent the person revoked opens nothing.
    let code = allowed_code(&server, &mut tab, &client, VERIFIER).await;
    let (_, token) = send(exchange(&code, VERIFIER, REDIRECT)).await;
    let access = token["access_token"].as_str().unwrap().to_string();
    assert_eq!(server.endpoint_status(&access).await, StatusCode::OK);
    let (_, listing) = server.app(Method::GET, "/api/agents", None).await;
    let agents = listing["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2, "the bearer agent and this one: {listing}");
    let id = agents.iter().find(|a| a["name"] == "Test agent").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    server
        .app(Method::DELETE, &format!("/api/agents/{id}"), None)
        .await;
    let (status, headers, _) = call(
        server.addr,
        Method::POST,
        "/mcp/server",
        &server.agent_headers(&access, "tools/list"),
        Some(modern_body("tools/list", json!({}))),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("error=\"invalid_token\"")
    );

    // The token endpoint takes no request from a web page.
    let (status, _, _) = call(
        server.addr,
        Method::POST,
        "/token",
        &[
            ("host", host.clone()),
            ("origin", "http://evil.example".into()),
            ("content-type", "application/x-www-form-urlencoded".into()),
        ],
        Some("grant_type=authorization_code&code=x".into()),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
