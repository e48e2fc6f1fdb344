//! stdio MCP servers through `hearth serve`: the person lists them in a
//! local file ([`config`]); each runs as a supervised process ([`process`])
//! and is offered to the app as a Streamable HTTP endpoint ([`http`]).
//!
//! The seam with the API layer: [`http::router`] carries no access
//! control. `hearth serve` mounts it under `/mcp/stdio` inside the same
//! guard as `/api/…` (loopback peer, exact Host, same-origin, the
//! per-install token): see [`routes`].

pub mod config;
pub mod http;
pub mod local;
pub mod process;
pub mod routes;

#[cfg(test)]
mod tests {
    //! The bridge end to end: the core MCP client over HTTP, through the
    //! router, to real stdio servers — a small Python one (restarts,
    //! backoff, idle stops, stderr, id mapping) and npm's server-memory.

    use std::path::PathBuf;
    use std::rc::Rc;
    use std::sync::Arc;
    use std::time::Duration;

    use hearth_core::mcp::client::{CallOptions, ClientConfig, EventSink, McpClient, ServerEvent};
    use hearth_core::mcp::model::ContentBlock;
    use hearth_core::mcp::version::Era;
    use hearth_core::mcp::{McpError, NoInput};
    use serde_json::json;

    use super::config::parse;
    use super::http::{Bridge, router};
    use crate::mcp::transport::ReqwestTransport;

    fn peers() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-peers")
    }

    fn config(extra: &str) -> String {
        let script = peers().join("stdio_server.py");
        format!(
            r#"{{"mcpServers": {{"py": {{"command": "python3", "args": [{script:?}], "idleTimeoutSecs": 1}}{extra}}}}}"#,
            script = script.display().to_string()
        )
    }

    /// Serves the bridge on a free port and returns its base URL.
    async fn serve(cfg: &str) -> (Arc<Bridge>, String) {
        let bridge = Bridge::start(parse(cfg).unwrap());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/mcp/stdio", listener.local_addr().unwrap());
        let app = axum::Router::new().nest("/mcp/stdio", router(bridge.clone()));
        tokio::spawn(async move { axum::serve(listener, app).await });
        (bridge, base)
    }

    fn client(url: &str, events: Option<EventSink>) -> McpClient {
        McpClient::build(
            Rc::new(ReqwestTransport::new().unwrap()),
            ClientConfig::new(url),
            Rc::new(NoInput),
            None,
            events,
            None,
        )
    }

    fn text(r: &hearth_core::mcp::model::CallToolResult) -> String {
        match &r.content[0] {
            ContentBlock::Text { text, .. } => text.clone(),
            other => panic!("not text: {other:?}"),
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_stdio_server_is_spoken_to_over_http_with_ids_mapped() {
        runtime().block_on(async {
            let (bridge, base) = serve(&config("")).await;
            let events = Rc::new(std::cell::RefCell::new(Vec::new()));
            let sink = events.clone();
            let a = client(
                &format!("{base}/py"),
                Some(Rc::new(move |e| sink.borrow_mut().push(e))),
            );
            let info = a.connect().await.unwrap();
            assert_eq!(
                info.era,
                Era::Legacy,
                "a stdio server that refuses server/discover is legacy"
            );
            assert_eq!(info.instructions.as_deref(), Some("A stdio test server."));
            let echo = a
                .call_tool("echo", json!({"message": "hi"}), CallOptions::default())
                .await
                .unwrap();
            assert_eq!(text(&echo), "Echo: hi");
            let counted = a
                .call_tool(
                    "count",
                    json!({"n": 2}),
                    CallOptions {
                        progress: true,
                        cancel: None,
                    },
                )
                .await
                .unwrap();
            assert_eq!(text(&counted), "counted to 2");
            let tokens: Vec<serde_json::Value> = events
                .borrow()
                .iter()
                .filter_map(|e| match e {
                    ServerEvent::Progress(p) => Some(p.progress_token.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(tokens.len(), 2);
            assert!(
                tokens.iter().all(|t| t == &json!(4)),
                "the client's own token comes back: {tokens:?}"
            );

            // A second client shares the process; its ids collide with the
            // first's, and the bridge keeps them apart.
            let b = client(&format!("{base}/py"), None);
            let pid_a = text(
                &a.call_tool("pid", json!({}), CallOptions::default())
                    .await
                    .unwrap(),
            );
            let pid_b = text(
                &b.call_tool("pid", json!({}), CallOptions::default())
                    .await
                    .unwrap(),
            );
            assert_eq!(pid_a, pid_b);
            assert_ne!(a.session_id(), b.session_id());
            let status = bridge.server("py").unwrap().status();
            assert!(status.running);
            assert!(
                status.stderr_tail.iter().any(|l| l.ends_with("ready")),
                "{:?}",
                status.stderr_tail
            );
        });
    }

    #[test]
    fn a_crashed_server_restarts_after_its_backoff_and_an_idle_one_stops() {
        runtime().block_on(async {
            let (bridge, base) = serve(&config("")).await;
            let c = client(&format!("{base}/py"), None);
            let first = text(
                &c.call_tool("pid", json!({}), CallOptions::default())
                    .await
                    .unwrap(),
            );
            let crash = c
                .call_tool("crash", json!({}), CallOptions::default())
                .await;
            assert!(
                matches!(&crash, Err(McpError::Rpc(e)) if e.message.contains("exited")),
                "{crash:?}"
            );
            let status = bridge.server("py").unwrap().status();
            assert_eq!((status.running, status.crashes), (false, 1));
            assert!(
                status
                    .stderr_tail
                    .iter()
                    .any(|l| l == "crashing on purpose")
            );
            // Within the backoff the bridge says when to come back.
            let early = c.call_tool("pid", json!({}), CallOptions::default()).await;
            assert!(
                matches!(&early, Err(McpError::Http { status: 503, .. })),
                "{early:?}"
            );
            tokio::time::sleep(Duration::from_millis(1200)).await;
            // After it, the process starts again and the client's session,
            // which died with the old process, is renewed.
            let second = text(
                &c.call_tool("pid", json!({}), CallOptions::default())
                    .await
                    .unwrap(),
            );
            assert_ne!(first, second);

            // Idle for longer than its timeout (1 s): stopped.
            tokio::time::sleep(Duration::from_millis(2500)).await;
            assert!(!bridge.server("py").unwrap().status().running);
            let third = text(
                &c.call_tool("pid", json!({}), CallOptions::default())
                    .await
                    .unwrap(),
            );
            assert_ne!(second, third, "started again on demand");
        });
    }

    #[test]
    fn unknown_servers_and_programs_fail_clearly() {
        runtime().block_on(async {
            let (_, base) = serve(&config(r#", "ghost": {"command": "/nonexistent/mcp-server"}"#)).await;
            let missing = client(&format!("{base}/nobody"), None).connect().await;
            assert!(
                matches!(&missing, Err(McpError::Rpc(e)) if e.message == "no stdio server named \"nobody\" is configured"),
                "{missing:?}"
            );
            let ghost = client(&format!("{base}/ghost"), None).connect().await;
            assert!(
                matches!(&ghost, Err(McpError::Http { status: 502, body }) if body.contains("could not be started")),
                "{ghost:?}"
            );
        });
    }

    #[test]
    fn server_memory_from_npm_works_through_the_bridge() {
        let memory = peers().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
        let node = peers().join("node_modules/.bin/node");
        if !memory.exists() || !node.exists() {
            eprintln!(
                "\n=========== SKIPPED server_memory_from_npm_works_through_the_bridge ===========\n\
                 npm server-memory is not installed; run sh crates/proxy/tests/mcp-peers/install.sh\n"
            );
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let cfg = format!(
            r#"{{"mcpServers": {{"memory": {{"command": {node:?}, "args": [{memory:?}], "env": {{"MEMORY_FILE_PATH": {file:?}}}}}}}}}"#,
            node = node.display().to_string(),
            memory = memory.display().to_string(),
            file = dir.path().join("memory.jsonl").display().to_string(),
        );
        runtime().block_on(async {
            let (_, base) = serve(&cfg).await;
            let c = client(&format!("{base}/memory"), None);
            let tools = c.list_tools().await.unwrap();
            assert!(tools.tools.iter().any(|t| t.name == "create_entities"));
            c.call_tool(
                "create_entities",
                json!({"entities": [{"name": "Hearth", "entityType": "project", "observations": ["runs in a tab"]}]}),
                CallOptions::default(),
            )
            .await
            .unwrap();
            let graph = c.call_tool("read_graph", json!({}), CallOptions::default()).await.unwrap();
            assert!(text(&graph).contains("runs in a tab"), "{}", text(&graph));
        });
    }
}
