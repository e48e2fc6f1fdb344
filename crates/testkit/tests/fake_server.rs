//! The fake model server, exercised over real HTTP on 127.0.0.1 with
//! reqwest feeding hearth-core's own parsers and agent loop, the way the
//! app in the browser will.

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use hearth_core::assistant::agent::{
    Action, AgentLoop, Conversation, Event, LoopConfig, LoopEnv, MessageStatus, TurnOutcome,
};
use hearth_core::assistant::providers::{
    AssembledCall, AssembledTurn, ChatRequest, ErrorKind, FinishReason, HttpMethod, HttpRequest,
    ImagePart, Protocol, Provider, ProviderConfig, ProviderError, ProviderKind, Retry, WireMessage,
};
use hearth_core::discovery;
use hearth_core::skill::approval::{MemoryPolicy, NobodyToAsk, PermissionHook};
use hearth_core::skill::invoke::Invoker;
use hearth_core::skill::permission::PermissionSettings;
use hearth_core::testing::{FakeClock, Skills};
use hearth_core::{SkillDefinition, SkillId, ToolResult};
use hearth_testkit::{Failure, FakeModel, Reply, Script, ScriptedCall, Turn, When};
use serde_json::{Value, json};

fn script_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

fn provider(kind: ProviderKind, server: &FakeModel, model: &str) -> Provider {
    let base = match kind {
        ProviderKind::OpenAiCompatible => server.openai_base(),
        ProviderKind::Anthropic => server.url(),
        // The model in the tab is reached through a Worker, never over
        // HTTP, so the fake server has no wire format for it.
        ProviderKind::InTab => unreachable!("the fake model server speaks HTTP only"),
    };
    let mut config = ProviderConfig::custom(kind, base, model);
    config.api_key = "test-key".into();
    Provider::new(config)
}

/// What came back for one request.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    chunks: Vec<Vec<u8>>,
}

async fn send(client: &reqwest::Client, http: &HttpRequest) -> Result<Response, reqwest::Error> {
    let method = match http.method {
        HttpMethod::Get => reqwest::Method::GET,
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Put => reqwest::Method::PUT,
        HttpMethod::Delete => reqwest::Method::DELETE,
    };
    let mut rb = client.request(method, &http.url);
    for (k, v) in &http.headers {
        rb = rb.header(k, v);
    }
    if let Some(b) = &http.body {
        rb = rb.body(b.clone());
    }
    let mut resp = rb.send().await?;
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let mut chunks = Vec::new();
    while let Some(c) = resp.chunk().await? {
        chunks.push(c.to_vec());
    }
    Ok(Response {
        status,
        headers,
        chunks,
    })
}

/// Streams a request into the provider's decoder.
async fn stream(p: &Provider, request: &ChatRequest) -> Result<AssembledTurn, ProviderError> {
    let client = reqwest::Client::new();
    let r = send(&client, &p.chat_request(request))
        .await
        .expect("the fake server answers");
    if !(200..300).contains(&r.status) {
        let body = String::from_utf8_lossy(&r.chunks.concat()).into_owned();
        return Err(p.http_error(r.status, &r.headers, &body, 0.0));
    }
    let mut decoder = p.decoder();
    let mut turn = AssembledTurn::default();
    for c in &r.chunks {
        for e in decoder.feed(c)? {
            turn.apply(&e);
        }
    }
    for e in decoder.finish()? {
        turn.apply(&e);
    }
    Ok(turn)
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        system: "test".into(),
        messages: vec![WireMessage::user(text)],
        tools: vec![],
    }
}

fn reply_script(reply: Reply) -> Script {
    Script {
        turns: vec![Turn {
            name: None,
            when: When::default(),
            reply,
            times: None,
        }],
        ..Script::default()
    }
}

// ------------------------------------------------------------- the app half

struct App {
    skills: Vec<SkillDefinition>,
    invoker: Invoker,
    /// Calls given an id so far.
    ids: Cell<u32>,
}

impl App {
    fn new() -> Self {
        let skills = vec![
            discovery::discover_skills_definition(),
            hearth_core::builtin::calculator(),
        ];
        let lookup = skills.clone();
        let invoker = Invoker::new(
            move |id: &SkillId| lookup.iter().find(|s| s.id == *id).cloned(),
            Rc::new(Skills::new(&skills, |s| s.default_enabled)),
            Rc::new(FakeClock::at(0.0)),
            Rc::new(PermissionHook::new(
                Rc::new(MemoryPolicy::new(PermissionSettings::default())),
                Rc::new(NobodyToAsk),
            )),
        );
        Self {
            skills,
            invoker,
            ids: Cell::new(0),
        }
    }
}

impl LoopEnv for App {
    fn now_unix_ms(&self) -> f64 {
        0.0
    }
    fn new_call_id(&self) -> String {
        let n = self.ids.get() + 1;
        self.ids.set(n);
        format!("hearth-{n}")
    }
    fn skill(&self, id: &SkillId) -> Option<SkillDefinition> {
        self.skills.iter().find(|s| s.id == *id).cloned()
    }
}

/// Carries out the loop's actions until the turn ends, as the app does.
async fn drive(lp: &mut AgentLoop, app: &App, mut queue: Vec<Action>) -> TurnOutcome {
    let client = reqwest::Client::new();
    while !queue.is_empty() {
        let action = queue.remove(0);
        let more = match action {
            Action::Send { request, http } => match send(&client, &http).await {
                Ok(r) => {
                    let mut a = lp.handle(
                        Event::ResponseStarted {
                            request,
                            status: r.status,
                            headers: r.headers,
                        },
                        app,
                    );
                    for c in r.chunks {
                        a.extend(lp.handle(Event::ResponseChunk { request, bytes: c }, app));
                    }
                    a.extend(lp.handle(Event::ResponseEnded { request }, app));
                    a
                }
                Err(e) => lp.handle(
                    Event::RequestFailed {
                        request,
                        error: e.to_string(),
                    },
                    app,
                ),
            },
            Action::RunTool { call } => {
                let result: ToolResult = app.invoker.invoke(call).await;
                lp.handle(
                    Event::ToolFinished {
                        result: Box::new(result),
                    },
                    app,
                )
            }
            Action::RetryLater {
                request, delay_ms, ..
            } => {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                lp.handle(Event::RetryDue { request }, app)
            }
            Action::TurnEnded { outcome } => return outcome,
            Action::Abort { .. }
            | Action::CancelTool { .. }
            | Action::TextDelta { .. }
            | Action::SkillsLoaded { .. }
            | Action::Changed => Vec::new(),
        };
        queue.extend(more);
    }
    panic!("the turn never ended")
}

/// The requests the server answered, as it recorded them.
async fn recorded(server: &FakeModel) -> Vec<Value> {
    let text = reqwest::get(format!("{}/_fake/requests", server.url()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

// -------------------------------------------------------------------- tests

#[tokio::test(flavor = "current_thread")]
async fn a_picture_reaches_the_server_as_each_protocol_documents() {
    let script = Script::load(&script_file("pictures.json")).unwrap();
    let server = FakeModel::start(script).await.unwrap();
    let picture = ImagePart {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        alt: "chart.png".into(),
        width: 640,
        height: 480,
    };
    for (kind, model) in [
        (ProviderKind::OpenAiCompatible, "gpt-4o-mini"),
        (ProviderKind::Anthropic, "claude-sonnet-4-5"),
    ] {
        let app = App::new();
        let mut lp = AgentLoop::new(
            Conversation::new("c", 0.0),
            Box::new(provider(kind, &server, model)),
            LoopConfig::default(),
            0.0,
        );
        let first = lp
            .send("Read the chart", vec![picture.clone()], &app)
            .unwrap();
        assert_eq!(
            drive(&mut lp, &app, first).await,
            TurnOutcome::Answered,
            "{kind:?}"
        );
        assert_eq!(
            lp.conversation().messages.last().unwrap().content,
            "I can see the picture you sent."
        );
    }
    let log = recorded(&server).await;
    let user = |i: usize| {
        log[i]["body"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .clone()
    };
    assert_eq!(
        user(0),
        json!([
            {"type": "text", "text": "Read the chart"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ])
    );
    assert_eq!(
        user(1),
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "text", "text": "Read the chart"}
        ])
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_percent_scenario_runs_end_to_end_in_both_protocols() {
    let script = Script::load(&script_file("percent.json")).unwrap();
    let server = FakeModel::start(script).await.unwrap();
    for kind in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
        let app = App::new();
        let p = provider(kind, &server, "hearth-fake");
        let mut lp = AgentLoop::new(
            Conversation::new("c", 0.0),
            Box::new(p),
            LoopConfig::default(),
            0.0,
        );
        let first = lp.send("What's 15% of 847?", Vec::new(), &app).unwrap();
        let outcome = drive(&mut lp, &app, first).await;
        assert_eq!(outcome, TurnOutcome::Answered, "{kind:?}");
        let c = lp.conversation();
        let last = c.messages.last().unwrap();
        assert_eq!(
            (last.content.as_str(), last.status),
            ("15% of 847 is 127.05.", MessageStatus::Complete),
            "{kind:?}"
        );
        assert_eq!(c.loaded_skills, vec![SkillId::new("calculator").unwrap()]);
        let calls: Vec<(&str, Value)> = c
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .map(|t| (t.name.as_str(), t.arguments.clone()))
            .collect();
        assert_eq!(
            calls,
            vec![
                (
                    "discover_skills",
                    json!({"query": "percentage calculation"})
                ),
                ("calculator", json!({"expression": "15% of 847"})),
            ]
        );
    }
    let log = recorded(&server).await;
    let turns: Vec<&str> = log.iter().map(|r| r["turn"].as_str().unwrap()).collect();
    assert_eq!(
        turns,
        [
            "discover",
            "calculate",
            "answer",
            "discover",
            "calculate",
            "answer"
        ]
    );
    // The Anthropic requests carried the headers direct browser access needs.
    let anthropic = &log[3]["headers"];
    assert_eq!(
        (
            anthropic["anthropic-version"].as_str(),
            anthropic["anthropic-dangerous-direct-browser-access"].as_str()
        ),
        (Some("2023-06-01"), Some("true"))
    );
    assert_eq!(anthropic["x-api-key"], "<redacted>");
    // The first request offered discovery only; the third, the calculator too.
    let tool_names = |r: &Value| -> Vec<String> {
        r["body"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["function"]["name"]
                    .as_str()
                    .or(t["name"].as_str())
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(tool_names(&log[0]), ["discover_skills"]);
    assert_eq!(tool_names(&log[2]), ["discover_skills", "calculator"]);
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn streams_split_arguments_across_events_and_parse_back_whole() {
    let reply = Reply {
        text: Some("Calling two tools — ✓".into()),
        tool_calls: vec![
            ScriptedCall {
                id: Some("call_a".into()),
                name: "calculator".into(),
                arguments: json!({"expression": "2^10 + 15% of 847"}),
            },
            ScriptedCall {
                id: None,
                name: "discover_skills".into(),
                arguments: json!({"query": "weather"}),
            },
        ],
        chunk_chars: Some(3),
        ..Reply::default()
    };
    let server = FakeModel::start(reply_script(reply)).await.unwrap();
    for kind in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
        let turn = stream(&provider(kind, &server, "m"), &ask("go"))
            .await
            .unwrap();
        let second_id = match kind {
            ProviderKind::OpenAiCompatible => "call_fake_",
            ProviderKind::Anthropic => "toolu_fake_",
            ProviderKind::InTab => unreachable!("only HTTP providers are looped over"),
        };
        assert_eq!(turn.text, "Calling two tools — ✓");
        assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
        assert_eq!(
            turn.calls[0],
            AssembledCall {
                id: "call_a".into(),
                name: "calculator".into(),
                arguments: r#"{"expression":"2^10 + 15% of 847"}"#.into()
            }
        );
        assert!(
            turn.calls[1].id.starts_with(second_id),
            "{:?}",
            turn.calls[1]
        );
        assert_eq!(turn.calls[1].arguments, r#"{"query":"weather"}"#);
        assert!(
            turn.usage.input_tokens.unwrap_or(0) > 0 && turn.usage.output_tokens.unwrap_or(0) > 0,
            "{kind:?} {:?}",
            turn.usage
        );
    }
    // The raw stream really splits the arguments.
    let client = reqwest::Client::new();
    let p = provider(ProviderKind::OpenAiCompatible, &server, "m");
    let raw = String::from_utf8(
        send(&client, &p.chat_request(&ask("go")))
            .await
            .unwrap()
            .chunks
            .concat(),
    )
    .unwrap();
    assert!(raw.matches("\"arguments\":\"").count() > 5, "{raw}");
    assert!(raw.ends_with("data: [DONE]\n\n"));
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn simulated_failures_look_like_the_real_ones() {
    type Case = (Reply, ErrorKind, Retry);
    let cases: Vec<Case> = vec![
        (
            Reply {
                error: Some(Failure::Auth),
                ..Reply::default()
            },
            ErrorKind::Auth,
            Retry::Never,
        ),
        (
            Reply {
                error: Some(Failure::RateLimit),
                retry_after: Some("3".into()),
                ..Reply::default()
            },
            ErrorKind::RateLimited,
            Retry::After { ms: 3_000 },
        ),
        (
            Reply {
                error: Some(Failure::Server),
                ..Reply::default()
            },
            ErrorKind::Server,
            Retry::Backoff,
        ),
        (
            Reply {
                error: Some(Failure::Overloaded),
                ..Reply::default()
            },
            ErrorKind::Overloaded,
            Retry::Backoff,
        ),
        (
            Reply {
                error: Some(Failure::ContextTooLong),
                ..Reply::default()
            },
            ErrorKind::ContextTooLong,
            Retry::Never,
        ),
        (
            Reply {
                text: Some("a long answer that never ends".into()),
                truncate_after_events: Some(3),
                ..Reply::default()
            },
            ErrorKind::TruncatedStream,
            Retry::Backoff,
        ),
        (
            Reply {
                text: Some("garbled".into()),
                malformed: true,
                ..Reply::default()
            },
            ErrorKind::MalformedStream,
            Retry::Backoff,
        ),
        (
            Reply {
                text: Some("half and then".into()),
                error: Some(Failure::Overloaded),
                error_after_events: Some(3),
                ..Reply::default()
            },
            ErrorKind::Overloaded,
            Retry::Backoff,
        ),
    ];
    for (reply, kind, retry) in cases {
        let server = FakeModel::start(reply_script(reply.clone())).await.unwrap();
        for flavor in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
            let e = stream(&provider(flavor, &server, "m"), &ask("hi"))
                .await
                .unwrap_err();
            assert_eq!((e.kind, e.retry), (kind, retry), "{flavor:?} {reply:?}");
        }
        server.stop().await;
    }
    // An unknown model is the provider's 404.
    let script = Script {
        models: vec!["only-this".into()],
        ..Script::default()
    };
    let server = FakeModel::start(script).await.unwrap();
    for flavor in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
        let e = stream(&provider(flavor, &server, "llama9"), &ask("hi"))
            .await
            .unwrap_err();
        assert_eq!(
            (e.kind, e.status),
            (ErrorKind::ModelNotFound, Some(404)),
            "{flavor:?}"
        );
        assert_eq!(
            e.message,
            // Messages start a sentence, so the generic name is capitalized.
            "The model server has no model called 'llama9'.".replace(
                "The model server",
                if flavor == ProviderKind::Anthropic {
                    "Anthropic"
                } else {
                    "The model server"
                }
            )
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn api_keys_and_anthropic_headers_are_checked_like_the_real_services() {
    let script = Script {
        api_key: Some("right".into()),
        ..reply_script(Reply {
            text: Some("ok".into()),
            ..Reply::default()
        })
    };
    let server = FakeModel::start(script).await.unwrap();
    for flavor in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
        let mut p = provider(flavor, &server, "m");
        assert_eq!(
            stream(&p, &ask("hi")).await.unwrap_err().kind,
            ErrorKind::Auth
        );
        p.config.api_key = "right".into();
        assert_eq!(stream(&p, &ask("hi")).await.unwrap().text, "ok");
    }
    let client = reqwest::Client::new();
    let body = json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], "stream": true}).to_string();
    let without_version = client
        .post(format!("{}/v1/messages", server.url()))
        .header("x-api-key", "right")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(without_version.status(), 400);
    let from_a_page = client
        .post(format!("{}/v1/messages", server.url()))
        .header("x-api-key", "right")
        .header("anthropic-version", "2023-06-01")
        .header("origin", "http://127.0.0.1:8080")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(from_a_page.status(), 401);
    assert!(
        from_a_page
            .text()
            .await
            .unwrap()
            .contains("anthropic-dangerous-direct-browser-access")
    );
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn browsers_may_call_it_cors_preflight_included() {
    let server = FakeModel::start(Script::default()).await.unwrap();
    let client = reqwest::Client::new();
    let pre = client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/messages", server.url()),
        )
        .header("origin", "http://127.0.0.1:8080")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "x-api-key,anthropic-version,anthropic-dangerous-direct-browser-access,content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), 204);
    let h = pre.headers();
    assert_eq!(h["access-control-allow-origin"], "*");
    assert_eq!(
        h["access-control-allow-headers"],
        "x-api-key,anthropic-version,anthropic-dangerous-direct-browser-access,content-type"
    );
    assert!(
        h["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    let models = client
        .get(format!("{}/v1/models", server.url()))
        .header("origin", "http://x")
        .send()
        .await
        .unwrap();
    assert_eq!(models.headers()["access-control-allow-origin"], "*");
    assert!(
        models.headers()["access-control-expose-headers"]
            .to_str()
            .unwrap()
            .contains("retry-after")
    );
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn model_lists_in_both_shapes() {
    let script = Script {
        models: vec!["alpha".into(), "beta".into()],
        ..Script::default()
    };
    let server = FakeModel::start(script).await.unwrap();
    let client = reqwest::Client::new();
    for flavor in [ProviderKind::OpenAiCompatible, ProviderKind::Anthropic] {
        let p = provider(flavor, &server, "alpha");
        let r = send(&client, &p.models_request(None)).await.unwrap();
        assert_eq!(r.status, 200);
        let list = p
            .parse_models(&String::from_utf8(r.chunks.concat()).unwrap())
            .unwrap();
        let ids: Vec<String> = list.models.into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["alpha", "beta"], "{flavor:?}");
        assert_eq!(list.next_page, None);
    }
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn slow_tokens_arrive_incrementally_and_an_aborted_stream_harms_nothing() {
    let reply = Reply {
        text: Some("one two three four five six seven eight".into()),
        chunk_chars: Some(4),
        delay_ms: Some(60),
        ..Reply::default()
    };
    let server = FakeModel::start(reply_script(reply)).await.unwrap();
    let p = provider(ProviderKind::OpenAiCompatible, &server, "m");
    let http = p.chat_request(&ask("talk slowly"));
    let client = reqwest::Client::new();
    let mut resp = client
        .post(&http.url)
        .body(http.body.clone().unwrap())
        .send()
        .await
        .unwrap();
    let first = String::from_utf8(resp.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    assert!(
        first.starts_with("data: ") && !first.contains("[DONE]"),
        "{first}"
    );
    drop(resp); // the person pressed Stop mid-reply
    // The server is unharmed, and a full reply arrives in many pieces.
    let r = send(&client, &http).await.unwrap();
    assert!(r.chunks.len() >= 3, "{} chunks", r.chunks.len());
    let again = stream(&p, &ask("still there?")).await.unwrap();
    assert_eq!(again.text, "one two three four five six seven eight");
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn non_streaming_requests_get_a_whole_completion() {
    let reply = Reply {
        text: Some("whole".into()),
        ..Reply::default()
    };
    let server = FakeModel::start(reply_script(reply)).await.unwrap();
    let client = reqwest::Client::new();
    let r = client
        .post(format!("{}/chat/completions", server.openai_base()))
        .body(json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).to_string())
        .send()
        .await
        .unwrap();
    let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "whole");
    server.stop().await;
}

#[test]
fn the_binary_serves_a_script_file_on_a_port_it_reports() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth-fake-model"))
        .args(["--port", "0", "--script"])
        .arg(script_file("percent.json"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("hearth-fake-model listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = rt.block_on(async {
        reqwest::get(format!("{url}/v1/models"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    // Stop the child we started, by its handle.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(body.contains("hearth-fake"), "{body}");

    let bad = Command::new(env!("CARGO_BIN_EXE_hearth-fake-model"))
        .args(["--script", "/nonexistent/script.json"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot read the script"));
}

#[test]
fn every_bundled_script_loads() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        Script::load(&path).unwrap_or_else(|e| panic!("{e}"));
        names.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "agent-skill.json",
            "approval.json",
            "artifacts-bench.json",
            "artifacts.json",
            "errors.json",
            "links.json",
            "mcp-echo.json",
            "percent.json",
            "pictures.json",
            "rich.json",
            "runaway.json",
            "self-approve.json",
            "skill-discovery.json",
            "slow.json",
            "stream.json"
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_flaky_provider_is_retried_by_the_loop_and_then_answers() {
    let server = FakeModel::start(Script::load(&script_file("errors.json")).unwrap())
        .await
        .unwrap();
    let app = App::new();
    let p = provider(ProviderKind::Anthropic, &server, "m");
    let mut lp = AgentLoop::new(
        Conversation::new("c", 0.0),
        Box::new(p),
        LoopConfig::default(),
        0.0,
    );
    let first = lp.send("are you flaky?", Vec::new(), &app).unwrap();
    assert_eq!(drive(&mut lp, &app, first).await, TurnOutcome::Answered);
    assert_eq!(
        lp.conversation().messages.last().unwrap().content,
        "Fine, thank you."
    );
    assert_eq!(
        lp.conversation().messages.len(),
        2,
        "the failed attempt left no trace"
    );
    server.stop().await;
}
