//! The core MCP client, natively, against the real 2026-07-28 peer: a
//! server on PyPI `mcp` 2.x (`mcp-peers/modern_server.py`) started on
//! 127.0.0.1 by each test. Discovery, per-request metadata and mirrored
//! headers, input_required, progress, pagination, subscriptions,
//! cancellation, every content type, MCP Apps visibility and CORS.

mod mcp_support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::mcp::client::{
    CallOptions, ClientConfig, EventSink, InputHandler, McpClient, ServerEvent, cancellation,
};
use hearth_core::mcp::jsonrpc::RpcError;
use hearth_core::mcp::model::{
    ClientCapabilities, ContentBlock, ElicitAction, ElicitResult, InputRequest, ResourceBody,
    SubscriptionFilter,
};
use hearth_core::mcp::skills::{ServerId, catalog, to_skill_output};
use hearth_core::mcp::version::{Era, ServerMemory};
use hearth_core::mcp::{HttpMethod, HttpRequest, HttpTransport, McpError, NoInput};
use hearth_core::skill::call::{Content, SkillError};
use mcp_support::{Recording, ReqwestTransport, require_peers, runtime, start_modern};
use serde_json::{Value, json};

fn client(url: &str) -> (McpClient, Rc<Recording>) {
    let transport = Recording::new();
    (
        McpClient::new(transport.clone(), ClientConfig::new(url)),
        transport,
    )
}

fn text_of(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn the_server_is_discovered_as_modern() {
    require_peers("the_server_is_discovered_as_modern");
    let peer = start_modern();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        let info = c.connect().await.unwrap();
        assert_eq!(
            (info.era, info.protocol_version.as_str()),
            (Era::Modern, "2026-07-28")
        );
        assert_eq!(info.implementation.unwrap().name, "hearth-modern-peer");
        assert_eq!(
            info.instructions.as_deref(),
            Some("A test server for Hearth. Use echo to repeat text.")
        );
        assert!(info.capabilities.tools.is_some());
        assert_eq!(c.memory(), Some(ServerMemory::modern()));
        assert_eq!(c.session_id(), None, "no sessions in 2026-07-28");
        assert_eq!(sent.sent(), ["server/discover"]);
    });
}

#[test]
fn tools_map_to_skills_and_app_only_tools_stay_hidden() {
    require_peers("tools_map_to_skills_and_app_only_tools_stay_hidden");
    let peer = start_modern();
    runtime().block_on(async {
        let (c, _) = client(&peer.url);
        let info = c.connect().await.unwrap();
        let listing = c.list_tools().await.unwrap();
        assert_eq!(listing.rejected, vec![]);
        let cat = catalog(&ServerId::new("py").unwrap(), Some(&info), &listing);
        assert_eq!(cat.app_only, vec!["refresh_chart"]);
        let ids: Vec<&str> = cat.skills.iter().map(|s| s.id.as_str()).collect();
        assert!(
            ids.contains(&"py__echo") && ids.contains(&"py__where"),
            "{ids:?}"
        );
        assert!(!ids.contains(&"py__refresh_chart"));
        let risky = cat
            .skills
            .iter()
            .find(|s| s.id.as_str() == "py__risky")
            .unwrap();
        assert!(risky.tags.contains(&"destructive".to_string()) && risky.requires_approval);
        assert!(cat.instructions.is_some());
    });
}

#[test]
fn every_content_type_and_tool_errors_map_to_skill_results() {
    require_peers("every_content_type_and_tool_errors_map_to_skill_results");
    let peer = start_modern();
    runtime().block_on(async {
        let (c, _) = client(&peer.url);
        let r = c
            .call_tool("every_content", json!({}), CallOptions::default())
            .await
            .unwrap();
        let output = to_skill_output(r).unwrap();
        let kinds: Vec<&str> = output
            .content
            .iter()
            .map(|c| match c {
                Content::Text { .. } => "text",
                Content::Image { .. } => "image",
                Content::Audio { .. } => "audio",
                Content::ResourceLink { .. } => "resource_link",
                Content::Resource { .. } => "resource",
                Content::Json { .. } => "json",
                Content::Artifact { .. } => "artifact",
            })
            .collect();
        assert_eq!(
            kinds,
            ["text", "image", "audio", "resource_link", "resource"]
        );
        assert_eq!(output.structured, Some(json!({"kinds": 5})));

        let failed = c
            .call_tool(
                "fail",
                json!({"reason": "the test said so"}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(
            to_skill_output(failed),
            Err(SkillError::new("failed because the test said so"))
        );

        let sum = c
            .call_tool("add", json!({"a": 2, "b": 3.5}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(sum.structured_content, Some(json!({"sum": 5.5})));
    });
}

#[test]
fn parameters_are_mirrored_into_headers_the_server_checks() {
    require_peers("parameters_are_mirrored_into_headers_the_server_checks");
    let peer = start_modern();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        for (region, header) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ] {
            let r = c
                .call_tool("where", json!({"region": region}), CallOptions::default())
                .await
                .unwrap();
            assert_eq!(
                text_of(&r.content[0]),
                format!("region {region}, header {header}")
            );
        }
        // The tool list was fetched first, for the annotations.
        assert_eq!(
            sent.sent(),
            ["server/discover", "tools/list", "tools/call", "tools/call"]
        );

        // A server that validates headers refuses a call without them.
        let raw = ReqwestTransport::new().unwrap();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "where", "arguments": {"region": "x"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        let r = raw
            .send(
                HttpRequest::new(HttpMethod::Post, &peer.url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "tools/call")
                    .header("Mcp-Name", "where")
                    .body(body.to_string()),
            )
            .await
            .unwrap();
        assert_eq!(r.status, 400, "the peer enforces Mcp-Param-Region");
    });
}

/// Answers the greeting tool's question.
struct Ada;

impl InputHandler for Ada {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: Some(json!({"form": {}})),
            ..ClientCapabilities::default()
        }
    }
    fn fulfil<'a>(
        &'a self,
        request: &'a InputRequest,
    ) -> LocalBoxFuture<'a, Result<Value, RpcError>> {
        let answer = match request {
            InputRequest::Elicit(e) => {
                assert_eq!(e.message, "What is your name?");
                Ok(serde_json::to_value(ElicitResult {
                    action: ElicitAction::Accept,
                    content: json!({"name": "Ada"}).as_object().cloned(),
                })
                .unwrap())
            }
            other => Err(RpcError::new(
                -32601,
                format!("unexpected {}", other.method()),
            )),
        };
        async move { answer }.boxed_local()
    }
}

#[test]
fn input_required_is_answered_and_retried() {
    require_peers("input_required_is_answered_and_retried");
    let peer = start_modern();
    runtime().block_on(async {
        let sent = Recording::new();
        let c = McpClient::build(
            sent.clone(),
            ClientConfig::new(&peer.url),
            Rc::new(Ada),
            None,
            None,
            None,
        );
        let r = c
            .call_tool("greet", json!({}), CallOptions::default())
            .await
            .unwrap();
        assert!(text_of(&r.content[0]).starts_with("Hello, Ada"), "{r:?}");
        assert_eq!(
            sent.sent(),
            ["server/discover", "tools/list", "tools/call", "tools/call"]
        );

        // Without a way to answer, the failure says what was asked.
        let (plain, _) = client(&peer.url);
        assert!(matches!(
            plain.call_tool("greet", json!({}), CallOptions::default()).await,
            Err(McpError::InputRequired(m)) if m.starts_with("elicitation/create")
        ));
    });
}

#[test]
fn progress_and_cancellation() {
    require_peers("progress_and_cancellation");
    let peer = start_modern();
    runtime().block_on(async {
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink_events = events.clone();
        let sink: EventSink = Rc::new(move |e| sink_events.borrow_mut().push(e));
        let c = McpClient::build(
            Rc::new(ReqwestTransport::new().unwrap()),
            ClientConfig::new(&peer.url),
            Rc::new(NoInput),
            None,
            Some(sink),
            None,
        );
        let r = c
            .call_tool(
                "count",
                json!({"steps": 3}),
                CallOptions {
                    progress: true,
                    cancel: None,
                },
            )
            .await
            .unwrap();
        assert_eq!(text_of(&r.content[0]), "counted to 3");
        let progress: Vec<(f64, Option<String>)> = events
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ServerEvent::Progress(p) => Some((p.progress, p.message.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            progress,
            [
                (1.0, Some("step 1".into())),
                (2.0, Some("step 2".into())),
                (3.0, Some("step 3".into()))
            ]
        );

        let (canceller, cancel) = cancellation();
        let started = std::time::Instant::now();
        let call = c.call_tool(
            "wait",
            json!({"seconds": 10}),
            CallOptions {
                progress: false,
                cancel: Some(cancel),
            },
        );
        let stop = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            canceller.cancel("stopped");
        };
        let (result, ()) = futures::join!(call, stop);
        assert_eq!(result.unwrap_err(), McpError::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(5));
    });
}

#[test]
fn resources_follow_cursors_and_prompts_render() {
    require_peers("resources_follow_cursors_and_prompts_render");
    let peer = start_modern();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        let resources = c.list_resources().await.unwrap();
        assert_eq!(resources.len(), 7);
        let pages = sent
            .sent()
            .iter()
            .filter(|m| *m == "resources/list")
            .count();
        assert_eq!(pages, 3, "three resources per page");
        let page = c.list_tools_page(None).await.unwrap();
        assert_eq!(page.next_cursor, None);

        let text = c.read_resource("test://static/hello").await.unwrap();
        assert_eq!(
            text.contents[0].body,
            ResourceBody::Text("Hello, world".into())
        );
        let blob = c.read_resource("test://static/blob").await.unwrap();
        assert_eq!(blob.contents[0].body, ResourceBody::Blob("AAEC".into()));
        let item = c.read_resource("test://items/42").await.unwrap();
        assert_eq!(item.contents[0].body, ResourceBody::Text("item 42".into()));
        let templates = c.list_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "test://items/{item_id}");
        assert!(matches!(
            c.read_resource("test://nowhere").await,
            Err(McpError::Rpc(e)) if e.code == -32602 || e.code == -32002
        ));

        let prompts = c.list_prompts().await.unwrap();
        assert_eq!(
            prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["simple", "topic"]
        );
        let got = c
            .get_prompt(
                "topic",
                &serde_json::from_value(json!({"subject": "tea"})).unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(
            text_of(&got.messages[0].content),
            "Write about tea in a plain tone."
        );
    });
}

#[test]
fn subscriptions_report_list_changes() {
    require_peers("subscriptions_report_list_changes");
    let peer = start_modern();
    runtime().block_on(async {
        let (c, _) = client(&peer.url);
        let info = c.connect().await.unwrap();
        let filter = SubscriptionFilter::all_list_changes(&info.capabilities);
        let mut sub = c
            .listen(SubscriptionFilter {
                tools_list_changed: Some(true),
                ..filter
            })
            .await
            .unwrap();
        let first = tokio::time::timeout(Duration::from_secs(10), sub.next()).await.unwrap();
        assert!(matches!(&first, Some(Ok(ServerEvent::Subscribed(f))) if f.tools_list_changed == Some(true)), "{first:?}");
        let before = c.list_tools().await.unwrap().tools.len();
        let grown = c.call_tool("grow", json!({}), CallOptions::default()).await.unwrap();
        assert!(text_of(&grown.content[0]).starts_with("added grown_"));
        let next = tokio::time::timeout(Duration::from_secs(10), sub.next()).await.unwrap();
        assert_eq!(next, Some(Ok(ServerEvent::ToolsChanged)));
        assert_eq!(c.list_tools().await.unwrap().tools.len(), before + 1);
    });
}

#[test]
fn a_browser_origin_may_call_it() {
    require_peers("a_browser_origin_may_call_it");
    let peer = start_modern();
    runtime().block_on(async {
        let raw = ReqwestTransport::new().unwrap();
        let preflight = raw
            .send(
                HttpRequest::new(HttpMethod::Post, &peer.url)
                    .header("Origin", "http://127.0.0.1:8080")
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "server/discover")
                    .body(
                        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
                            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {}}}})
                        .to_string(),
                    ),
            )
            .await
            .unwrap();
        assert_eq!(preflight.status, 200);
        assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
    });
}
