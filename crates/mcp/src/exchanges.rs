//! Recorded exchanges: the client against scripted servers, one table row
//! per situation — both eras, era fallback, session expiry, version
//! renegotiation, `input_required`, lost and resumed streams, server
//! requests, cancellation, authorization and malformed answers. Each case
//! lists the HTTP answers a server gives, in order, and the requests the
//! client must have sent; the comparison is of whole request summaries.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{Map, Value, json};

use super::client::{
    AuthProvider, CallOptions, ClientConfig, InputHandler, McpClient, ServerEvent, cancellation,
};
use super::error::McpError;
use super::jsonrpc::RpcError;
use super::model::{
    ClientCapabilities, ElicitAction, ElicitResult, InputRequest, SubscriptionFilter,
};
use super::oauth::{AuthError, BearerChallenge};
use super::transport::{HttpRequest, HttpResponse, HttpTransport, TransportError};
use super::version::{Era, ServerMemory};

/// One canned HTTP answer.
#[derive(Clone)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    /// Chunks of the body; an `Err` chunk breaks the connection there.
    chunks: Vec<Result<String, String>>,
}

fn json_answer(status: u16, body: Value) -> Answer {
    Answer {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        chunks: vec![Ok(body.to_string())],
    }
}

fn result(id: i64, result: Value) -> Answer {
    json_answer(200, json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn sse(events: &[&str]) -> Answer {
    Answer {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        chunks: events.iter().map(|e| Ok(format!("{e}\n\n"))).collect(),
    }
}

fn status(code: u16) -> Answer {
    Answer {
        status: code,
        headers: vec![],
        chunks: vec![],
    }
}

/// A request that never gets an answer.
fn hang() -> Answer {
    status(0)
}

fn with_header(mut a: Answer, name: &str, value: &str) -> Answer {
    a.headers.push((name.into(), value.into()));
    a
}

/// What the test compares about each request the client sent.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    /// `POST tools/list`, `GET`, `DELETE`, or `POST response 5` for an
    /// answer to a server's request.
    what: String,
    version: Option<String>,
    session: Option<String>,
    /// Other headers worth checking, sorted.
    extra: Vec<(String, String)>,
    /// Selected body fields.
    body: Value,
}

fn seen(what: &str) -> Seen {
    Seen {
        what: what.into(),
        version: None,
        session: None,
        extra: vec![],
        body: Value::Null,
    }
}

impl Seen {
    fn v(mut self, v: &str) -> Self {
        self.version = Some(v.into());
        self
    }
    fn s(mut self, s: &str) -> Self {
        self.session = Some(s.into());
        self
    }
    fn h(mut self, name: &str, value: &str) -> Self {
        self.extra.push((name.into(), value.into()));
        self.extra.sort();
        self
    }
    fn b(mut self, body: Value) -> Self {
        self.body = body;
        self
    }
}

/// Headers recorded in `Seen::extra`; the rest are checked elsewhere.
const TRACKED: &[&str] = &[
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "authorization",
    "mcp-param-region",
];

fn summarise(req: &HttpRequest) -> Seen {
    let body: Value = req
        .body
        .as_ref()
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Null);
    let what = match (
        req.method.as_str(),
        body.get("method").and_then(Value::as_str),
    ) {
        ("POST", Some(m)) => format!("POST {m}"),
        ("POST", None) => format!(
            "POST response {}",
            body.get("id").cloned().unwrap_or_default()
        ),
        (m, _) => m.to_string(),
    };
    let mut extra: Vec<(String, String)> = req
        .headers
        .iter()
        .filter(|(n, _)| TRACKED.contains(&n.to_ascii_lowercase().as_str()))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .collect();
    extra.sort();
    // Only the fields a case cares about: params beyond _meta, and ids.
    let mut picked = Map::new();
    if let Some(params) = body.get("params").and_then(Value::as_object) {
        for (k, v) in params {
            if k != "_meta" && k != "clientInfo" && k != "capabilities" {
                picked.insert(k.clone(), v.clone());
            }
        }
        if let Some(token) = params.get("_meta").and_then(|m| m.get("progressToken")) {
            picked.insert("progressToken".into(), token.clone());
        }
    }
    if let Some(r) = body.get("result") {
        picked.insert("result".into(), r.clone());
    }
    Seen {
        what,
        version: req.header_value("mcp-protocol-version").map(str::to_string),
        session: req.header_value("mcp-session-id").map(str::to_string),
        extra,
        body: if picked.is_empty() {
            Value::Null
        } else {
            Value::Object(picked)
        },
    }
}

#[derive(Default)]
struct Script {
    answers: RefCell<VecDeque<Answer>>,
    seen: RefCell<Vec<Seen>>,
    raw: RefCell<Vec<HttpRequest>>,
    sleeps: RefCell<Vec<u64>>,
}

impl Script {
    fn new(answers: Vec<Answer>) -> Rc<Self> {
        Rc::new(Script {
            answers: RefCell::new(answers.into()),
            ..Script::default()
        })
    }
}

impl HttpTransport for Script {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        self.seen.borrow_mut().push(summarise(&request));
        self.raw.borrow_mut().push(request);
        let answer = self.answers.borrow_mut().pop_front();
        async move {
            let Some(a) = answer else {
                return Err(TransportError::Unreachable(
                    "the script has no more answers".into(),
                ));
            };
            if a.status == 0 {
                futures::future::pending::<()>().await;
            }
            let chunks: Vec<Result<Vec<u8>, TransportError>> = a
                .chunks
                .into_iter()
                .map(|c| {
                    c.map(String::into_bytes)
                        .map_err(TransportError::Interrupted)
                })
                .collect();
            Ok(HttpResponse {
                status: a.status,
                headers: a.headers,
                body: futures::stream::iter(chunks).boxed_local(),
            })
        }
        .boxed_local()
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'_, ()> {
        self.sleeps.borrow_mut().push(ms);
        async {}.boxed_local()
    }
}

/// Accepts every elicitation with the given content.
struct Accept(Value);

impl InputHandler for Accept {
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
            InputRequest::Elicit(_) => Ok(serde_json::to_value(ElicitResult {
                action: ElicitAction::Accept,
                content: self.0.as_object().cloned(),
            })
            .unwrap()),
            InputRequest::ListRoots => Ok(json!({"roots": []})),
            InputRequest::Sample(_) | InputRequest::Other { .. } => {
                Err(RpcError::new(-32601, "not supported"))
            }
        };
        async move { answer }.boxed_local()
    }
}

const URL: &str = "http://127.0.0.1:1/mcp";
const M: &str = "2026-07-28";
const L: &str = "2025-11-25";

fn client(script: &Rc<Script>, memory: Option<ServerMemory>) -> McpClient {
    McpClient::build(
        script.clone(),
        ClientConfig::new(URL),
        Rc::new(Accept(json!({"name": "Ada"}))),
        None,
        None,
        memory,
    )
}

fn discover(id: i64) -> Answer {
    result(
        id,
        json!({"resultType": "complete", "supportedVersions": [M], "capabilities": {"tools": {"listChanged": true}},
               "instructions": "Be nice.", "ttlMs": 0, "cacheScope": "public",
               "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "py", "version": "2"}}}),
    )
}

fn initialize(id: i64, version: &str, session: &str) -> Answer {
    with_header(
        result(
            id,
            json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "everything", "version": "1"}, "instructions": "Hi"}),
        ),
        "Mcp-Session-Id",
        session,
    )
}

fn not_initialized() -> Answer {
    json_answer(
        400,
        json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: Server not initialized"}, "id": null}),
    )
}

fn tools(id: i64, names: &[&str], next: Option<&str>) -> Answer {
    let list: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}))
        .collect();
    let mut r = json!({"tools": list});
    if let Some(c) = next {
        r["nextCursor"] = c.into();
    }
    result(id, r)
}

/// A page of `n` tools named `t{start}`…, with a cursor to the next page.
fn many_tools(id: i64, start: usize, n: usize, next: Option<&str>) -> Answer {
    let list: Vec<Value> = (start..start + n)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    let mut r = json!({"tools": list});
    if let Some(c) = next {
        r["nextCursor"] = c.into();
    }
    result(id, r)
}

fn modern(method: &str) -> Seen {
    seen(&format!("POST {method}")).v(M).h("mcp-method", method)
}

fn legacy(method: &str, session: &str) -> Seen {
    seen(&format!("POST {method}")).v(L).s(session)
}

#[test]
fn modern_servers_are_discovered_paged_and_called_with_mirrored_headers() {
    let script = Script::new(vec![
        discover(1),
        tools(2, &["a"], Some("c1")),
        tools(3, &["b"], None),
        sse(&[
            r#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":4,"progress":1,"total":2}}"#,
            r#"data: {"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}"#,
        ]),
    ]);
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    let c = McpClient::build(
        script.clone(),
        ClientConfig::new(URL),
        Rc::new(Accept(json!({}))),
        None,
        Some(Rc::new(move |e| sink.borrow_mut().push(e))),
        None,
    );
    let info = block_on(c.connect()).unwrap();
    assert_eq!(
        (info.era, info.instructions.as_deref()),
        (Era::Modern, Some("Be nice."))
    );
    assert_eq!(info.implementation.map(|i| i.name), Some("py".to_string()));
    let listing = block_on(c.list_tools()).unwrap();
    assert_eq!(
        listing
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    let r = block_on(c.call_tool(
        "b",
        json!({"region": "Hello, 世界"}),
        CallOptions {
            progress: true,
            cancel: None,
        },
    ))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap(),
        json!([{"type": "text", "text": "ok"}])
    );
    assert_eq!(
        *script.seen.borrow(),
        vec![
            modern("server/discover"),
            modern("tools/list"),
            modern("tools/list").b(json!({"cursor": "c1"})),
            modern("tools/call")
                .h("mcp-name", "b")
                .h("mcp-param-region", "=?base64?SGVsbG8sIOS4lueVjA==?=")
                .b(
                    json!({"name": "b", "arguments": {"region": "Hello, 世界"}, "progressToken": 4})
                ),
        ]
    );
    assert_eq!(
        *events.borrow(),
        vec![ServerEvent::Progress(
            serde_json::from_value(json!({"progressToken": 4, "progress": 1, "total": 2})).unwrap()
        )]
    );
    // Every modern request carries the per-request metadata.
    let body: Value =
        serde_json::from_slice(script.raw.borrow()[3].body.as_ref().unwrap()).unwrap();
    assert_eq!(
        body["params"]["_meta"],
        json!({
            "progressToken": 4,
            "io.modelcontextprotocol/protocolVersion": M,
            "io.modelcontextprotocol/clientInfo": {"name": "hearth", "title": "Hearth", "version": env!("CARGO_PKG_VERSION")},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
        })
    );
    assert_eq!(c.memory(), Some(ServerMemory::modern()));
}

/// A case: answers, what to do, the requests expected, the outcome.
struct Case {
    name: &'static str,
    memory: Option<ServerMemory>,
    answers: Vec<Answer>,
    run: fn(&McpClient) -> Result<Value, McpError>,
    requests: Vec<Seen>,
    outcome: Result<Value, McpError>,
}

fn list_tool_names(c: &McpClient) -> Result<Value, McpError> {
    let l = block_on(c.list_tools())?;
    Ok(json!(
        l.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    ))
}

fn call_echo(c: &McpClient) -> Result<Value, McpError> {
    let r = block_on(c.call_tool("echo", json!({"message": "hi"}), CallOptions::default()))?;
    Ok(serde_json::to_value(r.content).unwrap())
}

fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

#[test]
fn recorded_exchanges() {
    let cases = vec![
        Case {
            name: "legacy fallback: 400 without a modern error, then initialize",
            memory: None,
            answers: vec![not_initialized(), initialize(2, L, "S1"), status(202), tools(3, &["echo"], None)],
            run: list_tool_names,
            requests: vec![
                modern("server/discover"),
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S1"),
                legacy("tools/list", "S1"),
            ],
            outcome: Ok(json!(["echo"])),
        },
        Case {
            name: "remembered legacy: no probe; 404 expires the session, re-initialise and retry",
            memory: Some(ServerMemory::legacy()),
            answers: vec![
                initialize(1, L, "S1"),
                status(202),
                status(404),
                initialize(3, L, "S2"),
                status(202),
                result(4, json!({"content": [{"type": "text", "text": "Echo: hi"}]})),
            ],
            run: call_echo,
            requests: vec![
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S1"),
                legacy("tools/call", "S1").b(json!({"name": "echo", "arguments": {"message": "hi"}})),
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S2"),
                legacy("tools/call", "S2").b(json!({"name": "echo", "arguments": {"message": "hi"}})),
            ],
            outcome: Ok(text("Echo: hi")),
        },
        Case {
            name: "a legacy server that forgot the session answers 400 without an id: renew",
            memory: Some(ServerMemory::legacy()),
            answers: vec![
                initialize(1, L, "S1"),
                status(202),
                json_answer(400, json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}, "id": null})),
                initialize(3, L, "S2"),
                status(202),
                tools(4, &["echo"], None),
            ],
            run: list_tool_names,
            requests: vec![
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S1"),
                legacy("tools/list", "S1"),
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S2"),
                legacy("tools/list", "S2"),
            ],
            outcome: Ok(json!(["echo"])),
        },
        Case {
            name: "a 400 about the request itself is not mistaken for expiry",
            memory: Some(ServerMemory::legacy()),
            answers: vec![
                initialize(1, L, "S1"),
                status(202),
                json_answer(400, json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid params"}})),
            ],
            run: list_tool_names,
            requests: vec![
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S1"),
                legacy("tools/list", "S1"),
            ],
            outcome: Err(McpError::Rpc(RpcError::new(-32602, "Invalid params"))),
        },
        Case {
            name: "an older legacy version the server negotiated is used from then on",
            memory: Some(ServerMemory::legacy()),
            answers: vec![initialize(1, "2025-03-26", "S"), status(202), tools(2, &[], None)],
            run: list_tool_names,
            requests: vec![
                seen("POST initialize").b(json!({"protocolVersion": L})),
                seen("POST notifications/initialized").v("2025-03-26").s("S"),
                seen("POST tools/list").v("2025-03-26").s("S"),
            ],
            outcome: Ok(json!([])),
        },
        Case {
            name: "a server speaking a version Hearth does not know is refused",
            memory: Some(ServerMemory::legacy()),
            answers: vec![initialize(1, "2024-11-05", "S")],
            run: list_tool_names,
            requests: vec![seen("POST initialize").b(json!({"protocolVersion": L}))],
            outcome: Err(McpError::Incompatible {
                supported: vec!["2024-11-05".into()],
            }),
        },
        Case {
            name: "unsupported version listing ours: ask again",
            memory: None,
            answers: vec![
                json_answer(400, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": [M], "requested": M}}})),
                discover(2),
                tools(3, &[], None),
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("server/discover"), modern("tools/list")],
            outcome: Ok(json!([])),
        },
        Case {
            name: "a dual-era server supporting only legacy versions for us: initialize",
            memory: None,
            answers: vec![
                json_answer(400, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2099-01-01", L], "requested": M}}})),
                initialize(2, L, "S"),
                status(202),
                tools(3, &["x"], None),
            ],
            run: list_tool_names,
            requests: vec![
                modern("server/discover"),
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S"),
                legacy("tools/list", "S"),
            ],
            outcome: Ok(json!(["x"])),
        },
        Case {
            name: "input_required: answer the elicitation and retry with the state",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                tools(2, &["echo"], None),
                result(3, json!({"resultType": "input_required", "requestState": "opaque-1",
                    "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}}})),
                result(4, json!({"resultType": "complete", "content": [{"type": "text", "text": "Hello Ada"}]})),
            ],
            run: call_echo,
            requests: vec![
                modern("server/discover"),
                modern("tools/list"),
                modern("tools/call").h("mcp-name", "echo").b(json!({"name": "echo", "arguments": {"message": "hi"}})),
                modern("tools/call").h("mcp-name", "echo").b(json!({"name": "echo", "arguments": {"message": "hi"},
                    "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}, "requestState": "opaque-1"})),
            ],
            outcome: Ok(text("Hello Ada")),
        },
        Case {
            name: "input_required without anything to answer is a protocol error",
            memory: Some(ServerMemory::modern()),
            answers: vec![discover(1), tools(2, &["echo"], None), result(3, json!({"resultType": "input_required"}))],
            run: call_echo,
            requests: vec![
                modern("server/discover"),
                modern("tools/list"),
                modern("tools/call").h("mcp-name", "echo").b(json!({"name": "echo", "arguments": {"message": "hi"}})),
            ],
            outcome: Err(McpError::Protocol(
                "an input_required result carried neither inputRequests nor requestState".into(),
            )),
        },
        Case {
            name: "an unknown resultType is invalid",
            memory: Some(ServerMemory::modern()),
            answers: vec![discover(1), result(2, json!({"resultType": "task", "tools": []}))],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Err(McpError::Protocol("unknown resultType \"task\"".into())),
        },
        Case {
            name: "a modern stream that ends without an answer is re-issued once with a new id",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                sse(&["id: 1\ndata: "]),
                tools(3, &["late"], None),
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list"), modern("tools/list")],
            outcome: Ok(json!(["late"])),
        },
        Case {
            name: "twice lost is an error",
            memory: Some(ServerMemory::modern()),
            answers: vec![discover(1), sse(&[]), sse(&[])],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list"), modern("tools/list")],
            outcome: Err(McpError::Protocol(
                "the server closed the response stream without answering".into(),
            )),
        },
        Case {
            name: "malformed: a body that is not JSON",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                Answer {
                    status: 200,
                    headers: vec![("Content-Type".into(), "application/json".into())],
                    chunks: vec![Ok("<html>oops</html>".into())],
                },
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Err(McpError::Malformed(
                "the server sent something that is not JSON: expected value at line 1 column 1".into(),
            )),
        },
        Case {
            name: "malformed: an unexpected content type",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                Answer {
                    status: 200,
                    headers: vec![("Content-Type".into(), "text/html".into())],
                    chunks: vec![Ok("<html/>".into())],
                },
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Err(McpError::Malformed("unexpected content type \"text/html\"".into())),
        },
        Case {
            name: "malformed: a garbled SSE event before the answer is skipped",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                sse(&["data: {not json", r#"data: {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#]),
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Ok(json!([])),
        },
        Case {
            name: "malformed: a tools list that is not a list",
            memory: Some(ServerMemory::modern()),
            answers: vec![discover(1), result(2, json!({"tools": {"a": 1}}))],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Err(McpError::Malformed("tools/list result has no \"tools\" list".into())),
        },
        Case {
            name: "a listing past the item cap is refused whole",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                many_tools(2, 0, 4000, Some("p2")),
                many_tools(3, 4000, 4000, Some("p3")),
                many_tools(4, 8000, 4000, None),
            ],
            run: list_tool_names,
            requests: vec![
                modern("server/discover"),
                modern("tools/list"),
                modern("tools/list").b(json!({"cursor": "p2"})),
                modern("tools/list").b(json!({"cursor": "p3"})),
            ],
            outcome: Err(McpError::TooLarge(
                "tools/list lists more than 10000 items".into(),
            )),
        },
        Case {
            name: "a listing past the byte cap is refused whole",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                result(2, json!({"tools": [{"name": "a", "description": "x".repeat(9 << 20)}], "nextCursor": "p2"})),
                result(3, json!({"tools": [{"name": "b", "description": "x".repeat(9 << 20)}]})),
            ],
            run: list_tool_names,
            requests: vec![
                modern("server/discover"),
                modern("tools/list"),
                modern("tools/list").b(json!({"cursor": "p2"})),
            ],
            outcome: Err(McpError::TooLarge("tools/list lists more than 16 MB".into())),
        },
        Case {
            name: "a repeated cursor stops paging",
            memory: Some(ServerMemory::modern()),
            answers: vec![discover(1), tools(2, &["a"], Some("same")), tools(3, &["b"], Some("same"))],
            run: list_tool_names,
            requests: vec![
                modern("server/discover"),
                modern("tools/list"),
                modern("tools/list").b(json!({"cursor": "same"})),
            ],
            outcome: Err(McpError::Protocol("tools/list repeated the page cursor \"same\"".into())),
        },
        Case {
            name: "a JSON-RPC error answer",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                json_answer(404, json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}})),
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Err(McpError::Rpc(RpcError::new(-32601, "Method not found"))),
        },
        Case {
            name: "a server error with a plain body",
            memory: Some(ServerMemory::modern()),
            answers: vec![
                discover(1),
                Answer {
                    status: 502,
                    headers: vec![],
                    chunks: vec![Ok("Bad gateway".into())],
                },
            ],
            run: list_tool_names,
            requests: vec![modern("server/discover"), modern("tools/list")],
            outcome: Err(McpError::Http {
                status: 502,
                body: "Bad gateway".into(),
            }),
        },
        Case {
            name: "401 without an auth provider reports the challenge",
            memory: None,
            answers: vec![with_header(status(401), "WWW-Authenticate", r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#)],
            run: list_tool_names,
            requests: vec![modern("server/discover")],
            outcome: Err(McpError::Unauthorized {
                challenge: Some(BearerChallenge {
                    resource_metadata: Some("http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp".into()),
                    ..BearerChallenge::default()
                }),
            }),
        },
        Case {
            name: "legacy: a ping on the response stream is answered, then the result",
            memory: Some(ServerMemory::legacy()),
            answers: vec![
                initialize(1, L, "S"),
                status(202),
                sse(&[
                    r#"data: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#,
                    r#"data: {"jsonrpc":"2.0","id":"srv-2","method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}}"#,
                    r#"data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}"#,
                ]),
                status(202),
                status(202),
            ],
            run: call_echo,
            requests: vec![
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S"),
                legacy("tools/call", "S").b(json!({"name": "echo", "arguments": {"message": "hi"}})),
                seen("POST response \"srv-1\"").v(L).s("S").b(json!({"result": {}})),
                seen("POST response \"srv-2\"").v(L).s("S").b(json!({"result": {"action": "accept", "content": {"name": "Ada"}}})),
            ],
            outcome: Ok(text("done")),
        },
        Case {
            name: "legacy: a broken stream is resumed with Last-Event-ID after the retry delay",
            memory: Some(ServerMemory::legacy()),
            answers: vec![
                initialize(1, L, "S"),
                status(202),
                sse(&["id: e1\nretry: 500\ndata: "]),
                sse(&[r#"id: e2
data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"resumed"}]}}"#]),
            ],
            run: call_echo,
            requests: vec![
                seen("POST initialize").b(json!({"protocolVersion": L})),
                legacy("notifications/initialized", "S"),
                legacy("tools/call", "S").b(json!({"name": "echo", "arguments": {"message": "hi"}})),
                seen("GET").v(L).s("S").h("last-event-id", "e1"),
            ],
            outcome: Ok(text("resumed")),
        },
    ];
    for case in cases {
        let script = Script::new(case.answers);
        let c = client(&script, case.memory);
        let got = (case.run)(&c);
        assert_eq!(got, case.outcome, "outcome of: {}", case.name);
        assert_eq!(
            *script.seen.borrow(),
            case.requests,
            "requests of: {}",
            case.name
        );
        assert!(
            script.answers.borrow().is_empty(),
            "unused answers in: {}",
            case.name
        );
    }
}

#[test]
fn the_retry_delay_is_honoured() {
    let script = Script::new(vec![
        initialize(1, L, "S"),
        status(202),
        sse(&["id: e1\nretry: 500\ndata: "]),
        sse(&[r#"data: {"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#]),
    ]);
    let c = client(&script, Some(ServerMemory::legacy()));
    call_echo(&c).unwrap();
    assert_eq!(*script.sleeps.borrow(), vec![500]);
}

#[test]
fn cancelling_a_legacy_call_tells_the_server() {
    let script = Script::new(vec![
        initialize(1, L, "S"),
        status(202),
        hang(),
        status(202),
    ]);
    let c = client(&script, Some(ServerMemory::legacy()));
    block_on(c.connect()).unwrap();
    // The tools/call never gets an answer; Stop was pressed already.
    let (canceller, cancel) = cancellation();
    canceller.cancel("the person pressed Stop");
    let r = block_on(c.call_tool(
        "echo",
        json!({}),
        CallOptions {
            progress: false,
            cancel: Some(cancel),
        },
    ));
    assert_eq!(r, Err(McpError::Cancelled));
    assert_eq!(
        script.seen.borrow()[2..],
        [
            legacy("tools/call", "S").b(json!({"name": "echo", "arguments": {}})),
            legacy("notifications/cancelled", "S")
                .b(json!({"requestId": 2, "reason": "the person pressed Stop"})),
        ]
    );
}

#[test]
fn a_dropped_canceller_does_not_cancel() {
    let script = Script::new(vec![
        discover(1),
        tools(2, &["echo"], None),
        result(3, json!({"content": [{"type": "text", "text": "fine"}]})),
    ]);
    let c = client(&script, None);
    let (canceller, cancel) = cancellation();
    drop(canceller);
    let r = block_on(c.call_tool(
        "echo",
        json!({}),
        CallOptions {
            progress: false,
            cancel: Some(cancel),
        },
    ))
    .unwrap();
    assert_eq!(serde_json::to_value(r.content).unwrap(), text("fine"));
}

/// Hands out a token only after a challenge.
struct StaticToken {
    token: RefCell<Option<String>>,
    challenges: RefCell<Vec<(u16, Option<String>)>>,
}

impl AuthProvider for StaticToken {
    fn access_token(&self) -> LocalBoxFuture<'_, Option<String>> {
        let t = self.token.borrow().clone();
        async move { t }.boxed_local()
    }
    fn on_challenge(
        &self,
        status: u16,
        challenge: Option<BearerChallenge>,
    ) -> LocalBoxFuture<'_, Result<(), AuthError>> {
        self.challenges
            .borrow_mut()
            .push((status, challenge.and_then(|c| c.scope)));
        *self.token.borrow_mut() = Some(format!("t{}", self.challenges.borrow().len()));
        async { Ok(()) }.boxed_local()
    }
}

#[test]
fn challenges_go_to_the_auth_provider_and_the_request_is_resent() {
    let script = Script::new(vec![
        with_header(status(401), "WWW-Authenticate", r#"Bearer scope="a""#),
        discover(1),
        with_header(
            status(403),
            "WWW-Authenticate",
            r#"Bearer error="insufficient_scope", scope="b""#,
        ),
        tools(2, &[], None),
        // A 403 that is not about scope is final.
        with_header(
            status(403),
            "WWW-Authenticate",
            r#"Bearer error="invalid_token""#,
        ),
    ]);
    let auth = Rc::new(StaticToken {
        token: RefCell::new(None),
        challenges: RefCell::new(vec![]),
    });
    let c = McpClient::build(
        script.clone(),
        ClientConfig::new(URL),
        Rc::new(Accept(json!({}))),
        Some(auth.clone()),
        None,
        None,
    );
    assert_eq!(list_tool_names(&c), Ok(json!([])));
    assert_eq!(
        list_tool_names(&c),
        Err(McpError::Forbidden {
            challenge: Some(BearerChallenge {
                error: Some("invalid_token".into()),
                ..BearerChallenge::default()
            })
        })
    );
    assert_eq!(
        *auth.challenges.borrow(),
        vec![(401, Some("a".to_string())), (403, Some("b".to_string()))]
    );
    let auths: Vec<Option<String>> = script
        .seen
        .borrow()
        .iter()
        .map(|s| {
            s.extra
                .iter()
                .find(|(n, _)| n == "authorization")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(
        auths,
        vec![
            None,
            Some("Bearer t1".into()),
            Some("Bearer t1".into()),
            Some("Bearer t2".into()),
            Some("Bearer t2".into())
        ]
    );
}

#[test]
fn modern_subscriptions_are_acknowledged_then_stream_changes() {
    let script = Script::new(vec![
        discover(1),
        sse(&[
            r#"data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2},"notifications":{"toolsListChanged":true}}}"#,
            r#"data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}"#,
            r#"data: {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}"#,
        ]),
    ]);
    let c = client(&script, None);
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut sub = block_on(c.listen(filter.clone())).unwrap();
    let mut got = Vec::new();
    while let Some(e) = block_on(sub.next()) {
        got.push(e.unwrap());
    }
    assert_eq!(
        got,
        vec![ServerEvent::Subscribed(filter), ServerEvent::ToolsChanged]
    );
    assert_eq!(
        *script.seen.borrow(),
        vec![
            modern("server/discover"),
            modern("subscriptions/listen").b(json!({"notifications": {"toolsListChanged": true}})),
        ]
    );
}

#[test]
fn app_extensions_are_declared_with_the_capabilities() {
    let script = Script::new(vec![discover(1)]);
    let mut config = ClientConfig::new(URL);
    config.extensions.insert(
        "io.modelcontextprotocol/ui".into(),
        json!({"mimeTypes": ["text/html;profile=mcp-app"]}),
    );
    let c = McpClient::build(
        script.clone(),
        config,
        Rc::new(Accept(json!({}))),
        None,
        None,
        None,
    );
    block_on(c.connect()).unwrap();
    let body: Value =
        serde_json::from_slice(script.raw.borrow()[0].body.as_ref().unwrap()).unwrap();
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    );
}

#[test]
fn legacy_close_deletes_the_session() {
    let script = Script::new(vec![initialize(1, L, "S"), status(202), status(405)]);
    let c = client(&script, Some(ServerMemory::legacy()));
    block_on(c.connect()).unwrap();
    block_on(c.close()).unwrap();
    assert_eq!(
        script.seen.borrow().last().unwrap(),
        &seen("DELETE").v(L).s("S")
    );
    assert_eq!(c.session_id(), None);
}

mod sign_in {
    //! The OAuth flow end to end over a scripted transport: a 401, the
    //! metadata documents, dynamic registration, the authorization step,
    //! the token exchange, the retried request, and a later refresh.

    use super::*;
    use crate::authorize::{Authorizer, OAuthConfig, OAuthFlow, Randomness};
    use crate::oauth::{AuthState, ClientMetadata, s256};
    use crate::url::form_decode;
    use hearth_base::testing::FakeClock;
    use std::cell::Cell;

    struct Counter(Cell<u8>);
    impl Randomness for Counter {
        fn fill(&self, buf: &mut [u8]) {
            for b in buf {
                *b = self.0.get();
                self.0.set(self.0.get().wrapping_add(1));
            }
        }
    }

    /// Approves at once, as a person clicking "Allow" would, and records
    /// the authorization URL.
    struct Approve {
        urls: RefCell<Vec<String>>,
        iss: &'static str,
    }
    impl Authorizer for Approve {
        fn authorize<'a>(&'a self, url: &'a str) -> LocalBoxFuture<'a, Result<String, AuthError>> {
            self.urls.borrow_mut().push(url.to_string());
            let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
            let state = form_decode(query)
                .into_iter()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v)
                .unwrap_or_default();
            let callback = format!(
                "http://localhost:3000/callback?code=the-code&state={state}&iss={}",
                self.iss
            );
            async move { Ok(callback) }.boxed_local()
        }
    }

    fn params(url: &str) -> Vec<(String, String)> {
        form_decode(url.split_once('?').map(|(_, q)| q).unwrap_or(url))
    }

    fn get(pairs: &[(String, String)], key: &str) -> Option<String> {
        pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    const AS: &str = "http://127.0.0.1:2";

    fn as_metadata() -> Answer {
        json_answer(
            200,
            json!({
                "issuer": AS,
                "authorization_endpoint": format!("{AS}/authorize"),
                "token_endpoint": format!("{AS}/token"),
                "registration_endpoint": format!("{AS}/register"),
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true,
                "scopes_supported": ["mcp:read", "offline_access"]
            }),
        )
    }

    fn flow(script: &Rc<Script>, clock: Rc<FakeClock>, approve: Rc<Approve>) -> Rc<OAuthFlow> {
        Rc::new(OAuthFlow::new(
            script.clone(),
            approve,
            Rc::new(Counter(Cell::new(0))),
            clock,
            OAuthConfig {
                server_url: URL.into(),
                client: ClientMetadata {
                    client_name: "Hearth".into(),
                    redirect_uris: vec!["http://localhost:3000/callback".into()],
                    application_type: "native".into(),
                    want_refresh: true,
                },
                metadata_document_url: None,
                preregistered: vec![],
            },
            AuthState::default(),
        ))
    }

    #[test]
    fn a_401_leads_through_sign_in_to_the_retried_request_and_tokens_refresh() {
        let script = Script::new(vec![
            with_header(
                status(401),
                "WWW-Authenticate",
                r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", scope="mcp:read""#,
            ),
            json_answer(200, json!({"resource": URL, "authorization_servers": [AS]})),
            as_metadata(),
            json_answer(201, json!({"client_id": "registered-id"})),
            json_answer(
                200,
                json!({"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-1"}),
            ),
            discover(1),
            json_answer(
                200,
                json!({"access_token": "at-2", "token_type": "Bearer", "expires_in": 3600}),
            ),
            tools(2, &[], None),
        ]);
        let clock = Rc::new(FakeClock::at(1_000_000.0));
        let approve = Rc::new(Approve {
            urls: RefCell::new(vec![]),
            iss: "http%3A%2F%2F127.0.0.1%3A2",
        });
        let oauth = flow(&script, clock.clone(), approve.clone());
        let c = McpClient::build(
            script.clone(),
            ClientConfig::new(URL),
            Rc::new(Accept(json!({}))),
            Some(oauth.clone()),
            None,
            None,
        );
        block_on(c.connect()).unwrap();

        let raw = script.raw.borrow().clone();
        let lines: Vec<String> = raw
            .iter()
            .map(|r| format!("{} {}", r.method.as_str(), r.url))
            .collect();
        assert_eq!(
            lines,
            [
                format!("POST {URL}"),
                "GET http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp".to_string(),
                format!("GET {AS}/.well-known/oauth-authorization-server"),
                format!("POST {AS}/register"),
                format!("POST {AS}/token"),
                format!("POST {URL}"),
            ]
        );
        let registration: Value = serde_json::from_slice(raw[3].body.as_ref().unwrap()).unwrap();
        assert_eq!(registration["application_type"], "native");
        assert_eq!(
            registration["grant_types"],
            json!(["authorization_code", "refresh_token"])
        );

        let authorization = params(&approve.urls.borrow()[0]);
        let token = form_decode(std::str::from_utf8(raw[4].body.as_ref().unwrap()).unwrap());
        assert_eq!(
            get(&authorization, "client_id").as_deref(),
            Some("registered-id")
        );
        assert_eq!(
            get(&authorization, "scope").as_deref(),
            Some("mcp:read offline_access")
        );
        assert_eq!(get(&authorization, "resource").as_deref(), Some(URL));
        assert_eq!(get(&token, "resource").as_deref(), Some(URL));
        assert_eq!(get(&token, "code").as_deref(), Some("the-code"));
        let verifier = get(&token, "code_verifier").unwrap();
        assert_eq!(get(&authorization, "code_challenge"), Some(s256(&verifier)));
        assert_eq!(raw[5].header_value("authorization"), Some("Bearer at-1"));
        assert_eq!(raw[0].header_value("authorization"), None);

        // An hour later the token is refreshed before it is sent.
        clock.advance(3_590_000.0);
        assert_eq!(list_tool_names(&c), Ok(json!([])));
        let raw = script.raw.borrow().clone();
        let refresh = form_decode(std::str::from_utf8(raw[6].body.as_ref().unwrap()).unwrap());
        assert_eq!(
            get(&refresh, "grant_type").as_deref(),
            Some("refresh_token")
        );
        assert_eq!(get(&refresh, "refresh_token").as_deref(), Some("rt-1"));
        assert_eq!(raw[7].header_value("authorization"), Some("Bearer at-2"));
        let state = oauth.state();
        assert_eq!(
            state.tokens.unwrap().refresh_token.as_deref(),
            Some("rt-1"),
            "kept when not rotated"
        );
        assert_eq!(state.clients[AS].client_id, "registered-id");
    }

    #[test]
    fn a_forged_issuer_stops_before_the_code_is_redeemed() {
        let script = Script::new(vec![
            with_header(status(401), "WWW-Authenticate", "Bearer"),
            // No resource_metadata in the challenge: the well-known URL.
            json_answer(200, json!({"resource": URL, "authorization_servers": [AS]})),
            as_metadata(),
            json_answer(201, json!({"client_id": "registered-id"})),
        ]);
        let clock = Rc::new(FakeClock::at(0.0));
        let approve = Rc::new(Approve {
            urls: RefCell::new(vec![]),
            iss: "https%3A%2F%2Fevil.example.com",
        });
        let c = McpClient::build(
            script.clone(),
            ClientConfig::new(URL),
            Rc::new(Accept(json!({}))),
            Some(flow(&script, clock, approve)),
            None,
            None,
        );
        assert_eq!(
            block_on(c.connect()).unwrap_err(),
            McpError::Auth(AuthError::IssMismatch {
                expected: AS.into(),
                found: "https://evil.example.com".into()
            })
        );
        let urls: Vec<String> = script.raw.borrow().iter().map(|r| r.url.clone()).collect();
        assert_eq!(
            urls[1],
            "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"
        );
        assert!(
            !urls.iter().any(|u| u.ends_with("/token")),
            "no token request: {urls:?}"
        );
    }

    /// Saved tokens whose resource is not the server's address (a restored
    /// backup pointed the server somewhere new but kept the sign-in) are
    /// never sent: the token stays home and the server must ask again.
    #[test]
    fn tokens_saved_for_one_server_are_never_sent_to_another() {
        use crate::client::AuthProvider;
        use crate::oauth::TokenSet;
        let saved = |resource: &str| AuthState {
            tokens: Some(TokenSet {
                access_token: "the-persons-token".into(),
                token_type: "Bearer".into(),
                refresh_token: Some("the-persons-refresh".into()),
                expires_at_ms: None,
                scope: None,
            }),
            token_issuer: Some(AS.into()),
            token_endpoint: Some(format!("{AS}/token")),
            resource: Some(resource.into()),
            ..AuthState::default()
        };
        let script = Script::new(vec![]);
        let token_for = |server_url: &str, resource: &str| {
            let f = OAuthFlow::new(
                script.clone(),
                Rc::new(Approve {
                    urls: RefCell::new(vec![]),
                    iss: "",
                }),
                Rc::new(Counter(Cell::new(0))),
                Rc::new(FakeClock::at(0.0)),
                OAuthConfig {
                    server_url: server_url.into(),
                    client: ClientMetadata {
                        client_name: "Hearth".into(),
                        redirect_uris: vec!["http://localhost:3000/callback".into()],
                        application_type: "native".into(),
                        want_refresh: true,
                    },
                    metadata_document_url: None,
                    preregistered: vec![],
                },
                saved(resource),
            );
            block_on(f.access_token())
        };
        let mine = Some("the-persons-token".to_string());
        assert_eq!(token_for(URL, URL), mine);
        assert_eq!(token_for(URL, "http://127.0.0.1:1/"), mine);
        for (server, resource) in [
            ("https://evil.example/mcp", URL),
            ("http://127.0.0.1:2/mcp", URL),
            ("http://127.0.0.1:1/other", URL),
            ("http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp/deeper"),
            (URL, "not a url"),
        ] {
            assert_eq!(
                token_for(server, resource),
                None,
                "{server} with {resource}"
            );
        }
        assert_eq!(script.raw.borrow().len(), 0, "a token was sent somewhere");
    }

    #[test]
    fn metadata_for_another_resource_is_refused() {
        let script = Script::new(vec![
            with_header(status(401), "WWW-Authenticate", "Bearer"),
            json_answer(
                200,
                json!({"resource": "https://evil.example.com/mcp", "authorization_servers": [AS]}),
            ),
        ]);
        let approve = Rc::new(Approve {
            urls: RefCell::new(vec![]),
            iss: "",
        });
        let c = McpClient::build(
            script.clone(),
            ClientConfig::new(URL),
            Rc::new(Accept(json!({}))),
            Some(flow(&script, Rc::new(FakeClock::at(0.0)), approve.clone())),
            None,
            None,
        );
        assert_eq!(
            block_on(c.connect()).unwrap_err(),
            McpError::Auth(AuthError::ResourceMismatch {
                resource: "https://evil.example.com/mcp".into(),
                server: URL.into()
            })
        );
        assert!(
            approve.urls.borrow().is_empty(),
            "the person was never sent to sign in"
        );
    }
}
