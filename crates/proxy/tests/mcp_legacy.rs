//! The core MCP client, natively, against the real 2025-11-25 peer:
//! `@modelcontextprotocol/server-everything` started on 127.0.0.1 by each
//! test. Sessions, SSE, progress, cancellation, resources, prompts, every
//! content type the server offers, and its tools as skills.

mod mcp_support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use hearth_core::mcp::client::{
    CallOptions, ClientConfig, EventSink, McpClient, ServerEvent, cancellation,
};
use hearth_core::mcp::model::{ContentBlock, ResourceBody, Role, SubscriptionFilter};
use hearth_core::mcp::skills::{McpExecutor, ServerId, catalog, register, to_skill_output};
use hearth_core::mcp::version::{Era, ServerMemory};
use hearth_core::mcp::{HttpMethod, HttpRequest, HttpTransport, McpError};
use hearth_core::skill::call::{CallOrigin, Content, ToolCall};
use hearth_core::skill::invoke::Executor;
use hearth_core::{SkillId, Tier};
use mcp_support::{Recording, ReqwestTransport, require_peers, runtime, start_everything};
use serde_json::{Map, Value, json};

fn client(url: &str) -> (McpClient, Rc<Recording>) {
    let transport = Recording::new();
    (
        McpClient::new(transport.clone(), ClientConfig::new(url)),
        transport,
    )
}

#[test]
fn the_era_is_detected_and_a_session_opened() {
    require_peers("the_era_is_detected_and_a_session_opened");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        let info = c.connect().await.unwrap();
        assert_eq!(
            (info.era, info.protocol_version.as_str()),
            (Era::Legacy, "2025-11-25")
        );
        assert_eq!(info.implementation.unwrap().name, "mcp-servers/everything");
        assert!(info.instructions.unwrap().contains("Everything Server"));
        assert!(c.session_id().is_some());
        assert_eq!(c.memory(), Some(ServerMemory::legacy()));
        assert_eq!(
            sent.sent(),
            ["server/discover", "initialize", "notifications/initialized"]
        );
        // Remembered, the era is not probed again.
        let sent = Recording::new();
        let again = McpClient::build(
            sent.clone(),
            ClientConfig::new(&peer.url),
            Rc::new(hearth_core::mcp::NoInput),
            None,
            None,
            c.memory(),
        );
        again.connect().await.unwrap();
        assert_eq!(sent.sent(), ["initialize", "notifications/initialized"]);
    });
}

#[test]
fn tools_become_disabled_integration_skills_that_run() {
    require_peers("tools_become_disabled_integration_skills_that_run");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, _) = client(&peer.url);
        let info = c.connect().await.unwrap();
        let listing = c.list_tools().await.unwrap();
        assert!(listing.tools.len() >= 10, "{} tools", listing.tools.len());
        let server = ServerId::new("everything").unwrap();
        let cat = catalog(&server, Some(&info), &listing);
        assert_eq!(cat.skills.len(), listing.tools.len());
        assert!(cat.instructions.is_some());
        let mut registry = hearth_core::builtin::registry().unwrap();
        let outcome = register(&mut registry, &cat);
        assert_eq!(outcome.errors, vec![]);
        assert_eq!(outcome.added, listing.tools.len());
        let echo = registry.get_str("everything__echo").unwrap().clone();
        assert_eq!(
            (echo.tier, echo.default_enabled, echo.requires_approval),
            (Tier::Integration, false, true)
        );

        let executor = McpExecutor::new();
        executor.connect(&server, c.clone());
        let call = ToolCall {
            id: "c1".into(),
            skill_id: SkillId::new("everything__echo").unwrap(),
            arguments: json!({"message": "from a skill"}),
            conversation_id: None,
            origin: CallOrigin::User,
        };
        let output = executor.execute(&echo, &call).await.unwrap();
        assert_eq!(
            output.content,
            vec![Content::Text {
                text: "Echo: from a skill".into()
            }]
        );
    });
}

#[test]
fn every_content_type_the_server_offers_is_read() {
    require_peers("every_content_type_the_server_offers_is_read");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, _) = client(&peer.url);
        let call = |name: &'static str, args: Value| {
            let c = c.clone();
            async move { c.call_tool(name, args, CallOptions::default()).await.unwrap() }
        };
        let image = call("get-tiny-image", json!({})).await;
        assert!(matches!(&image.content[1], ContentBlock::Image { mime_type, data, .. } if mime_type == "image/png" && data.len() > 100));

        let links = call("get-resource-links", json!({"count": 2})).await;
        let uris: Vec<&str> = links
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ResourceLink(r) => Some(r.uri.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(uris, ["demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"]);

        let embedded = call("get-resource-reference", json!({"resourceType": "Text", "resourceId": 3})).await;
        assert!(embedded.content.iter().any(|b| matches!(b,
            ContentBlock::Resource { resource, .. }
                if resource.uri == "demo://resource/dynamic/text/3"
                    && matches!(&resource.body, ResourceBody::Text(t) if t.contains("Resource 3")))));

        let structured = call("get-structured-content", json!({"location": "Chicago"})).await;
        let value = structured.structured_content.clone().unwrap();
        assert!(value.get("temperature").is_some() && value.get("conditions").is_some());

        let annotated = call("get-annotated-message", json!({"messageType": "error", "includeImage": true})).await;
        assert!(annotated.content.iter().any(|b| matches!(b, ContentBlock::Text { annotations: Some(a), .. } if a.priority.is_some())));

        // And all of it maps onto what the activity log and the model see.
        let output = to_skill_output(structured).unwrap();
        assert_eq!(output.structured, Some(value));
        assert!(matches!(to_skill_output(image).unwrap().content[1], Content::Image { .. }));
    });
}

#[test]
fn progress_arrives_on_the_response_stream() {
    require_peers("progress_arrives_on_the_response_stream");
    let peer = start_everything();
    runtime().block_on(async {
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink_events = events.clone();
        let sink: EventSink = Rc::new(move |e| sink_events.borrow_mut().push(e));
        let c = McpClient::build(
            Rc::new(ReqwestTransport::new().unwrap()),
            ClientConfig::new(&peer.url),
            Rc::new(hearth_core::mcp::NoInput),
            None,
            Some(sink),
            None,
        );
        let r = c
            .call_tool(
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 3}),
                CallOptions {
                    progress: true,
                    cancel: None,
                },
            )
            .await
            .unwrap();
        assert!(
            matches!(&r.content[0], ContentBlock::Text { text, .. } if text.contains("completed"))
        );
        let progress: Vec<(f64, Option<f64>)> = events
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ServerEvent::Progress(p) => Some((p.progress, p.total)),
                _ => None,
            })
            .collect();
        assert_eq!(
            progress,
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
        );
    });
}

#[test]
fn a_cancelled_call_stops_early_and_the_session_goes_on() {
    require_peers("a_cancelled_call_stops_early_and_the_session_goes_on");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        c.connect().await.unwrap();
        let (canceller, cancel) = cancellation();
        let started = std::time::Instant::now();
        let call = c.call_tool(
            "trigger-long-running-operation",
            json!({"duration": 10, "steps": 10}),
            CallOptions {
                progress: false,
                cancel: Some(cancel),
            },
        );
        let stop = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            canceller.cancel("stopped by the test");
        };
        let (result, ()) = futures::join!(call, stop);
        assert_eq!(result.unwrap_err(), McpError::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(sent.sent().last().unwrap(), "notifications/cancelled");
        let echo = c
            .call_tool("echo", json!({"message": "still here"}), CallOptions::default())
            .await
            .unwrap();
        assert!(matches!(&echo.content[0], ContentBlock::Text { text, .. } if text == "Echo: still here"));
    });
}

#[test]
fn an_ended_session_is_renewed() {
    require_peers("an_ended_session_is_renewed");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        c.connect().await.unwrap();
        let old = c.session_id().unwrap();
        // End the session behind the client's back.
        let raw = ReqwestTransport::new().unwrap();
        let ended = raw
            .send(
                HttpRequest::new(HttpMethod::Delete, &peer.url)
                    .header("Mcp-Session-Id", &old)
                    .header("MCP-Protocol-Version", "2025-11-25"),
            )
            .await
            .unwrap();
        assert_eq!(ended.status, 200);
        drop(ended);
        let listing = c.list_tools().await.unwrap();
        assert!(!listing.tools.is_empty());
        let new = c.session_id().unwrap();
        assert_ne!(old, new);
        assert_eq!(
            sent.sent()[3..],
            [
                "tools/list",
                "initialize",
                "notifications/initialized",
                "tools/list"
            ]
        );
    });
}

#[test]
fn close_deletes_the_session() {
    require_peers("close_deletes_the_session");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        c.connect().await.unwrap();
        let session = c.session_id().unwrap();
        c.close().await.unwrap();
        assert_eq!(sent.sent().last().unwrap(), "DELETE");
        // The server no longer knows the session (server-everything says
        // so with 400 rather than the 404 the spec asks for).
        let raw = ReqwestTransport::new().unwrap();
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string();
        let r = raw
            .send(
                HttpRequest::new(HttpMethod::Post, &peer.url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("Mcp-Session-Id", &session)
                    .header("MCP-Protocol-Version", "2025-11-25")
                    .body(body),
            )
            .await
            .unwrap();
        assert!(r.status == 400 || r.status == 404, "status {}", r.status);
    });
}

#[test]
fn resources_templates_and_prompts() {
    require_peers("resources_templates_and_prompts");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, _) = client(&peer.url);
        let resources = c.list_resources().await.unwrap();
        assert!(resources.iter().any(|r| r.uri == "demo://resource/static/document/architecture.md"));
        let read = c.read_resource(&resources[0].uri).await.unwrap();
        assert!(matches!(&read.contents[0].body, ResourceBody::Text(t) if !t.is_empty()));
        let templates = c.list_resource_templates().await.unwrap();
        assert!(templates.iter().any(|t| t.uri_template.contains("{")));
        let blob = c.read_resource("demo://resource/dynamic/blob/1").await.unwrap();
        assert!(matches!(&blob.contents[0].body, ResourceBody::Blob(b) if !b.is_empty()));

        let prompts = c.list_prompts().await.unwrap();
        let args_prompt = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
        assert_eq!(
            args_prompt
                .arguments
                .iter()
                .map(|a| (a.name.as_str(), a.required == Some(true)))
                .collect::<Vec<_>>(),
            [("city", true), ("state", false)]
        );
        let mut args = Map::new();
        args.insert("city".into(), json!("Lisbon"));
        let got = c.get_prompt("args-prompt", &args).await.unwrap();
        assert_eq!(got.messages[0].role, Role::User);
        assert!(matches!(&got.messages[0].content, ContentBlock::Text { text, .. } if text.contains("Lisbon")));
        let embedded = c
            .get_prompt(
                "resource-prompt",
                &serde_json::from_value(json!({"resourceType": "Text", "resourceId": "2"})).unwrap(),
            )
            .await
            .unwrap();
        assert!(embedded
            .messages
            .iter()
            .any(|m| matches!(&m.content, ContentBlock::Resource { .. })));
    });
}

#[test]
fn the_get_stream_delivers_server_notifications() {
    require_peers("the_get_stream_delivers_server_notifications");
    let peer = start_everything();
    runtime().block_on(async {
        let (c, sent) = client(&peer.url);
        c.connect().await.unwrap();
        let uri = "demo://resource/static/document/features.md".to_string();
        let mut sub = c
            .listen(SubscriptionFilter {
                resource_subscriptions: Some(vec![uri.clone()]),
                ..SubscriptionFilter::default()
            })
            .await
            .unwrap();
        c.call_tool(
            "toggle-subscriber-updates",
            json!({}),
            CallOptions::default(),
        )
        .await
        .unwrap();
        let event = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match sub.next().await {
                    Some(Ok(ServerEvent::ResourceUpdated { uri })) => return uri,
                    Some(Ok(_)) => {}
                    other => panic!("the stream ended: {other:?}"),
                }
            }
        })
        .await
        .expect("a resource update within 20 s");
        assert_eq!(event, uri);
        assert!(sent.sent().contains(&"resources/subscribe".to_string()));
        assert!(sent.sent().contains(&"GET".to_string()));
    });
}
