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
use std::io::BufRead;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

struct Server {
    child: Child,
    addr: SocketAddr,
    key: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path) -> Server {
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("index.html"),
        "<!doctype html><title>Hearth</title>",
    )
    .unwrap();
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["serve", "--port", "0", "--dist"])
        .arg(&dist)
        .arg("--config-dir")
        .arg(&conf)
        .env_remove("HEARTH_CONFIG")
        .env_remove("HEARTH_CONFIG_DIR")
        .env_remove("HEARTH_MCP_SERVERS")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(stdout).lines();
        if let Some(Ok(first)) = lines.next() {
            let _ = tx.send(first);
        }
        for _ in lines {}
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("hearth serve did not start within 30 s");
    let url = line.strip_prefix("Hearth is running at http://").unwrap();
    let (authority, rest) = url.split_once('/').unwrap();
    let key = rest.split_once("#token=").unwrap().1.to_string();
    Server {
        child,
        addr: authority.parse().unwrap(),
        key,
    }
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
            ("x-hearth-token", self.key.clone()),
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
                &[("authorization", format!("Bearer {}", server.key))],
                &["authorization"],
            ),
            Some(body.clone()),
            StatusCode::UNAUTHORIZED,
        ),
        (
            "the app's key in its own header",
            Method::POST,
            with(
                &[("x-hearth-token", server.key.clone())],
                &["authorization"],
            ),
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
