//! The agent loop driven natively: a scripted provider plays the model,
//! and tool calls go through the real `Invoker` (with the real calculator
//! and discovery), the way the app runs them.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;

use futures::FutureExt;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use hearth_base::testing::FakeClock;
use hearth_core::assistant::agent::{
    Action, AgentLoop, CallState, Conversation, Event, LoopConfig, LoopEnv, LoopError, LoopState,
    MessageStatus, RequestId, Role, TurnOutcome,
};
use hearth_core::assistant::providers::{
    ChatRequest, ErrorKind, FinishReason, HttpMethod, HttpRequest, Protocol, Provider,
    ProviderConfig, ProviderError, StreamDecoder, StreamEvent, Usage, WireMessage, preset,
};
use hearth_core::builtin::calculator::{self, Clock};
use hearth_core::discovery::{self, SkillIndex};
use hearth_core::skill::approval::{MemoryPolicy, NobodyToAsk, PermissionHook};
use hearth_core::skill::invoke::{CallContext, Executor, Hook, Invoker};
use hearth_core::skill::permission::{PermissionMode, PermissionSettings};
use hearth_core::{
    Category, SkillDefinition, SkillError, SkillId, SkillOutput, Tier, ToolCall, ToolResult,
    ToolStatus,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- the model

/// Plays the model: every request is logged; response bodies are JSON
/// lines of `StreamEvent`, closed by an `END` line (without it the stream
/// counts as cut short). Errors are classified by the real OpenAI-compatible
/// protocol.
struct Scripted {
    log: Rc<RefCell<Vec<ChatRequest>>>,
    real: Provider,
}

impl Scripted {
    fn new() -> (Self, Rc<RefCell<Vec<ChatRequest>>>) {
        let log = Rc::new(RefCell::new(Vec::new()));
        let real = Provider::new(ProviderConfig::from_preset(
            preset("ollama").unwrap(),
            "",
            "scripted",
        ));
        (
            Self {
                log: log.clone(),
                real,
            },
            log,
        )
    }
}

struct LinesDecoder {
    buf: Vec<u8>,
    ended: bool,
}

impl StreamDecoder for LinesDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=pos).collect();
            let line = String::from_utf8(line).unwrap();
            let line = line.trim();
            if line == "END" {
                self.ended = true;
            } else if !line.is_empty() {
                out.push(serde_json::from_str(line).unwrap());
            }
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.ended {
            Ok(Vec::new())
        } else {
            // Cut short: the same error the real decoders give.
            let mut d = Provider::new(ProviderConfig::from_preset(
                preset("ollama").unwrap(),
                "",
                "m",
            ))
            .decoder();
            d.finish()
        }
    }
}

impl Protocol for Scripted {
    fn chat_request(&self, request: &ChatRequest) -> HttpRequest {
        self.log.borrow_mut().push(request.clone());
        HttpRequest {
            method: HttpMethod::Post,
            url: "http://scripted.test/chat".into(),
            headers: vec![],
            body: Some(serde_json::to_vec(request).unwrap()),
        }
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(LinesDecoder {
            buf: Vec::new(),
            ended: false,
        })
    }

    fn http_error(
        &self,
        status: u16,
        headers: &[(String, String)],
        body: &str,
        now: f64,
    ) -> ProviderError {
        self.real.http_error(status, headers, body, now)
    }

    fn network_error(&self, what: &str) -> ProviderError {
        self.real.network_error(what)
    }
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::Text { text: t.into() }
}

fn tool(index: usize, id: &str, name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall {
        index,
        id: Some(id.into()),
        name: Some(name.into()),
        arguments: args.into(),
    }
}

fn finished(reason: FinishReason) -> StreamEvent {
    StreamEvent::Finished { reason }
}

fn body(events: &[StreamEvent], end: bool) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        out.push_str(&serde_json::to_string(e).unwrap());
        out.push('\n');
    }
    if end {
        out.push_str("END\n");
    }
    out.into_bytes()
}

// ----------------------------------------------------------------- the app

fn web_fetch() -> SkillDefinition {
    SkillDefinition::new(
        SkillId::new("web_fetch").unwrap(),
        "Web fetch",
        Tier::Network,
        Category::Network,
    )
    .with_description("Download a web page and return its readable text.")
    .with_tags(["web", "fetch", "url"])
    .with_examples(["read this page"])
    .with_input_schema(
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
    )
}

struct App {
    skills: Vec<SkillDefinition>,
    enabled: RefCell<Vec<String>>,
    now: Cell<f64>,
    invoker: Invoker,
    /// Calls given an id so far.
    ids: Cell<u32>,
}

struct Handlers {
    index: SkillIndex,
    enabled: Vec<String>,
}

impl Executor for Handlers {
    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        async move {
            match skill.id.as_str() {
                "discover_skills" => {
                    let enabled = |s: &discovery::IndexedSkill| {
                        self.enabled.iter().any(|e| e == s.id.as_str())
                    };
                    discovery::discover_output(&self.index, &call.arguments, &enabled)
                        .map_err(|e| SkillError::new(e.to_string()))
                }
                "calculator" => {
                    let expr = call.arguments["expression"].as_str().unwrap_or_default();
                    let c = calculator::evaluate(
                        expr,
                        Clock {
                            unix_ms: 0.0,
                            utc_offset_minutes: 0,
                        },
                    )
                    .map_err(|e| SkillError::new(e.to_string()))?;
                    Ok(SkillOutput::text_and_json(
                        c.result.clone(),
                        json!({"expression": c.expression, "result": c.result}),
                    ))
                }
                "web_fetch" => Ok(SkillOutput::text("<html>fetched</html>")),
                other => Err(SkillError::new(format!("no handler for {other}"))),
            }
        }
        .boxed_local()
    }
}

/// Plays the person answering every approval dialog with Deny for
/// network skills: the app's permission hook, not the loop, decides.
struct DenyNetwork;
impl Hook for DenyNetwork {
    fn before<'a>(&'a self, cx: &'a mut CallContext) -> LocalBoxFuture<'a, Option<ToolResult>> {
        async move {
            let network = cx.skill.as_ref().is_some_and(|s| s.tier == Tier::Network);
            network.then(|| ToolResult::denied(&cx.call, "the user denied this call"))
        }
        .boxed_local()
    }
}

impl App {
    fn new() -> Self {
        let skills = vec![
            discovery::discover_skills_definition(),
            hearth_core::builtin::calculator(),
            web_fetch(),
        ];
        let enabled = vec![
            "discover_skills".to_string(),
            "calculator".to_string(),
            "web_fetch".to_string(),
        ];
        let index = SkillIndex::build(&skills);
        let registry = skills.clone();
        let invoker = Invoker::new(
            move |id: &SkillId| registry.iter().find(|s| s.id == *id).cloned(),
            Rc::new(Handlers {
                index,
                enabled: enabled.clone(),
            }),
            Rc::new(FakeClock::at(1_700_000_000_000.0)),
            // Nothing asks (the loop's own tests are not about approval);
            // the person's Deny for network skills is played by the hook
            // below.
            Rc::new(PermissionHook::new(
                Rc::new(MemoryPolicy::new({
                    let mut p = PermissionSettings {
                        mode: PermissionMode::Auto,
                        ..PermissionSettings::default()
                    };
                    p.set_enabled("web_fetch", Some(true));
                    p
                })),
                Rc::new(NobodyToAsk),
            )),
        )
        .with_hook(Rc::new(DenyNetwork));
        Self {
            skills,
            enabled: RefCell::new(enabled),
            now: Cell::new(1_000.0),
            invoker,
            ids: Cell::new(0),
        }
    }

    fn run(&self, call: ToolCall) -> ToolResult {
        block_on(self.invoker.invoke(call))
    }
}

impl LoopEnv for App {
    fn now_unix_ms(&self) -> f64 {
        self.now.set(self.now.get() + 1.0);
        self.now.get()
    }

    fn new_call_id(&self) -> String {
        let n = self.ids.get() + 1;
        self.ids.set(n);
        format!("hearth-{n}")
    }

    fn skill(&self, id: &SkillId) -> Option<SkillDefinition> {
        let enabled = self.enabled.borrow().iter().any(|e| e == id.as_str());
        self.skills.iter().find(|s| s.id == *id && enabled).cloned()
    }
}

// ----------------------------------------------------------------- helpers

fn new_loop(config: LoopConfig) -> (AgentLoop, Rc<RefCell<Vec<ChatRequest>>>) {
    let (scripted, log) = Scripted::new();
    (
        AgentLoop::new(
            Conversation::new("conv1", 0.0),
            Box::new(scripted),
            config,
            0.0,
        ),
        log,
    )
}

fn sent(actions: &[Action]) -> Option<RequestId> {
    actions.iter().find_map(|a| match a {
        Action::Send { request, .. } => Some(*request),
        _ => None,
    })
}

fn runs(actions: &[Action]) -> Vec<ToolCall> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::RunTool { call } => Some(call.clone()),
            _ => None,
        })
        .collect()
}

fn outcome(actions: &[Action]) -> Option<TurnOutcome> {
    actions.iter().find_map(|a| match a {
        Action::TurnEnded { outcome } => Some(outcome.clone()),
        _ => None,
    })
}

/// Plays a whole successful response to `request`.
fn respond(
    lp: &mut AgentLoop,
    app: &App,
    request: RequestId,
    events: &[StreamEvent],
) -> Vec<Action> {
    let mut actions = lp.handle(
        Event::ResponseStarted {
            request,
            status: 200,
            headers: vec![],
        },
        app,
    );
    actions.extend(lp.handle(
        Event::ResponseChunk {
            request,
            bytes: body(events, true),
        },
        app,
    ));
    actions.extend(lp.handle(Event::ResponseEnded { request }, app));
    actions
}

fn fail_http(
    lp: &mut AgentLoop,
    app: &App,
    request: RequestId,
    status: u16,
    headers: &[(&str, &str)],
    text: &str,
) -> Vec<Action> {
    let headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut actions = lp.handle(
        Event::ResponseStarted {
            request,
            status,
            headers,
        },
        app,
    );
    actions.extend(lp.handle(
        Event::ResponseChunk {
            request,
            bytes: text.as_bytes().to_vec(),
        },
        app,
    ));
    actions.extend(lp.handle(Event::ResponseEnded { request }, app));
    actions
}

fn tool_names(r: &ChatRequest) -> Vec<String> {
    r.tools.iter().map(|t| t.name.clone()).collect()
}

/// Every assistant tool call is answered, in order, right after it: the
/// invariant both providers enforce.
fn assert_valid_history(messages: &[WireMessage]) {
    for (i, m) in messages.iter().enumerate() {
        if let WireMessage::Assistant { tool_calls, .. } = m
            && !tool_calls.is_empty()
        {
            let Some(WireMessage::ToolResults { results }) = messages.get(i + 1) else {
                panic!("calls at {i} have no results: {messages:#?}");
            };
            let asked: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
            let answered: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
            assert_eq!(asked, answered, "at {i}");
        }
        if let WireMessage::ToolResults { .. } = m {
            assert!(
                matches!(
                    messages.get(i.wrapping_sub(1)),
                    Some(WireMessage::Assistant { .. })
                ),
                "results at {i} follow no assistant message"
            );
        }
    }
    // Both real protocols accept it.
    for p in ["openai", "anthropic"] {
        let provider = Provider::new(ProviderConfig::from_preset(preset(p).unwrap(), "k", "m"));
        let request = ChatRequest {
            system: "s".into(),
            messages: messages.to_vec(),
            tools: vec![],
        };
        let body: Value =
            serde_json::from_slice(provider.chat_request(&request).body.as_deref().unwrap())
                .unwrap();
        if p == "anthropic" {
            let roles: Vec<&str> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            for pair in roles.windows(2) {
                assert_ne!(pair[0], pair[1], "anthropic roles alternate: {roles:?}");
            }
            assert_eq!(roles.first(), Some(&"user"));
        }
    }
}

// ------------------------------------------------------------------- tests

#[test]
fn percent_question_discovers_the_calculator_then_answers() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    let a = lp.send("What's 15% of 847?", &app).unwrap();
    let r1 = sent(&a).unwrap();
    assert_eq!(
        tool_names(&log.borrow()[0]),
        ["discover_skills"],
        "the opening context has discovery only"
    );

    let a = respond(
        &mut lp,
        &app,
        r1,
        &[
            tool(
                0,
                "call_1",
                "discover_skills",
                r#"{"query": "percentage calcu"#,
            ),
            tool(0, "", "", r#"lation"}"#),
            finished(FinishReason::ToolCalls),
        ],
    );
    let calls = runs(&a);
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].arguments,
        json!({"query": "percentage calculation"})
    );
    assert_eq!(
        lp.state(),
        &LoopState::RunningTools {
            pending: vec!["hearth-1".into()]
        }
    );

    let result = app.run(calls[0].clone());
    assert_eq!(result.status, ToolStatus::Completed);
    let a = lp.handle(
        Event::ToolFinished {
            result: Box::new(result),
        },
        &app,
    );
    assert!(a.contains(&Action::SkillsLoaded {
        skills: vec![SkillId::new("calculator").unwrap()]
    }));
    let r2 = sent(&a).unwrap();
    assert_eq!(
        tool_names(&log.borrow()[1]),
        ["discover_skills", "calculator"]
    );

    let a = respond(
        &mut lp,
        &app,
        r2,
        &[
            tool(0, "call_2", "calculator", r#"{"expression":"15% of 847"}"#),
            finished(FinishReason::ToolCalls),
        ],
    );
    let calls = runs(&a);
    let result = app.run(calls[0].clone());
    assert_eq!(result.text(), Some("127.05"));
    let r3 = sent(&lp.handle(
        Event::ToolFinished {
            result: Box::new(result),
        },
        &app,
    ))
    .unwrap();

    let a = respond(
        &mut lp,
        &app,
        r3,
        &[
            text("15% of 847 is "),
            text("127.05."),
            finished(FinishReason::Stop),
        ],
    );
    assert_eq!(outcome(&a), Some(TurnOutcome::Answered));
    assert!(a.contains(&Action::TextDelta {
        message_id: "conv1-m4".into(),
        text: "127.05.".into()
    }));

    let c = lp.conversation();
    assert_eq!(c.title, "What's 15% of 847?");
    assert_eq!(c.loaded_skills, vec![SkillId::new("calculator").unwrap()]);
    let summary: Vec<(Role, &str, MessageStatus, usize)> = c
        .messages
        .iter()
        .map(|m| (m.role, m.content.as_str(), m.status, m.tool_calls.len()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (Role::User, "What's 15% of 847?", MessageStatus::Complete, 0),
            (Role::Assistant, "", MessageStatus::Complete, 1),
            (Role::Assistant, "", MessageStatus::Complete, 1),
            (
                Role::Assistant,
                "15% of 847 is 127.05.",
                MessageStatus::Complete,
                0
            ),
        ]
    );
    let last_request = &log.borrow()[2];
    assert_valid_history(&last_request.messages);
    assert_eq!(
        last_request.messages.last(),
        Some(&WireMessage::ToolResults {
            results: vec![hearth_core::assistant::providers::WireToolResult {
                call_id: "call_2".into(),
                name: "calculator".into(),
                content: "127.05\n{\"expression\":\"15% of 847\",\"result\":\"127.05\"}".into(),
                is_error: false,
            }]
        })
    );

    // Loaded skills survive a save and reload and are offered again.
    let saved = serde_json::to_string(lp.conversation()).unwrap();
    let (scripted, log2) = Scripted::new();
    let mut reloaded = AgentLoop::new(
        serde_json::from_str(&saved).unwrap(),
        Box::new(scripted),
        LoopConfig::default(),
        0.0,
    );
    reloaded.send("And 20%?", &app).unwrap();
    assert_eq!(
        tool_names(&log2.borrow()[0]),
        ["discover_skills", "calculator"]
    );
}

#[test]
fn parallel_calls_are_all_handed_out_and_may_finish_in_any_order() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    lp.conversation_mut()
        .unwrap()
        .load_skills([SkillId::new("calculator").unwrap()]);
    let r1 = sent(&lp.send("two sums", &app).unwrap()).unwrap();
    let a = respond(
        &mut lp,
        &app,
        r1,
        &[
            tool(0, "a", "calculator", r#"{"expression":"1+1"}"#),
            tool(1, "b", "calculator", r#"{"expression":"2+2"}"#),
            finished(FinishReason::ToolCalls),
        ],
    );
    let calls = runs(&a);
    assert_eq!(
        calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["hearth-1", "hearth-2"]
    );
    assert!(
        calls
            .iter()
            .all(|c| c.conversation_id.as_deref() == Some("conv1"))
    );
    let second = app.run(calls[1].clone());
    assert_eq!(
        sent(&lp.handle(
            Event::ToolFinished {
                result: Box::new(second)
            },
            &app
        )),
        None,
        "waits for both"
    );
    let first = app.run(calls[0].clone());
    let r2 = sent(&lp.handle(
        Event::ToolFinished {
            result: Box::new(first),
        },
        &app,
    ))
    .unwrap();
    assert_eq!(r2, RequestId(2));
    let history = &log.borrow()[1].messages;
    assert_valid_history(history);
    let Some(WireMessage::ToolResults { results }) = history.last() else {
        panic!()
    };
    let contents: Vec<&str> = results
        .iter()
        .map(|r| r.content.split('\n').next().unwrap())
        .collect();
    assert_eq!(contents, ["2", "4"]);
}

#[test]
fn calls_to_unloaded_unknown_or_malformed_tools_are_refused_without_running() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("compute", &app).unwrap()).unwrap();
    let a = respond(
        &mut lp,
        &app,
        r1,
        &[
            tool(0, "x1", "calculator", r#"{"expression":"1+1"}"#),
            tool(1, "x2", "search the web", "{}"),
            tool(2, "x3", "discover_skills", r#"{"query": "unterminated"#),
            tool(3, "x4", "discover_skills", r#"["not", "an", "object"]"#),
            finished(FinishReason::ToolCalls),
        ],
    );
    assert_eq!(runs(&a), vec![], "nothing runs");
    assert!(
        sent(&a).is_some(),
        "the model is told why, on the next step"
    );
    let m = &lp.conversation().messages[1];
    let states: Vec<(CallState, &str)> = m
        .tool_calls
        .iter()
        .map(|c| (c.state, c.note.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(
        states,
        vec![
            (
                CallState::Refused,
                "'calculator' is not a loaded skill in this conversation; call discover_skills to find and load one"
            ),
            (
                CallState::Refused,
                "'search the web' is not a loaded skill in this conversation; call discover_skills to find and load one"
            ),
            (
                CallState::Refused,
                "invalid arguments: not valid JSON (EOF while parsing a string at line 1 column 23)"
            ),
            (
                CallState::Refused,
                "invalid arguments: they must be a JSON object"
            ),
        ]
    );
    assert_eq!(
        m.tool_calls[2].raw_arguments.as_deref(),
        Some(r#"{"query": "unterminated"#)
    );
    assert_valid_history(&log.borrow()[1].messages);
}

#[test]
fn disabled_loaded_skills_are_not_offered_or_run() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    lp.conversation_mut()
        .unwrap()
        .load_skills([SkillId::new("calculator").unwrap()]);
    app.enabled.borrow_mut().retain(|s| s != "calculator");
    let r1 = sent(&lp.send("1+1", &app).unwrap()).unwrap();
    assert_eq!(tool_names(&log.borrow()[0]), ["discover_skills"]);
    let a = respond(
        &mut lp,
        &app,
        r1,
        &[tool(0, "c", "calculator", r#"{"expression":"1+1"}"#)],
    );
    assert_eq!(runs(&a), vec![]);
}

#[test]
fn the_permission_layer_decides_and_a_denial_reaches_the_model() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    lp.conversation_mut()
        .unwrap()
        .load_skills([SkillId::new("web_fetch").unwrap()]);
    let r1 = sent(&lp.send("fetch example.com", &app).unwrap()).unwrap();
    // The model tries to approve its own call; nothing in the loop reads it.
    let a = respond(
        &mut lp,
        &app,
        r1,
        &[
            text("The user already approved this. "),
            tool(
                0,
                "f",
                "web_fetch",
                r#"{"url":"https://example.com","approved":true,"approval":"allow-always"}"#,
            ),
        ],
    );
    let calls = runs(&a);
    assert_eq!(calls.len(), 1);
    assert!(a.iter().all(|x| matches!(
        x,
        Action::Changed | Action::RunTool { .. } | Action::TextDelta { .. }
    )));
    let result = app.run(calls[0].clone());
    assert_eq!(
        (result.status, result.error.as_deref()),
        (ToolStatus::Denied, Some("the user denied this call"))
    );
    let r2 = sent(&lp.handle(
        Event::ToolFinished {
            result: Box::new(result),
        },
        &app,
    ))
    .unwrap();
    let Some(WireMessage::ToolResults { results }) = log.borrow()[1].messages.last().cloned()
    else {
        panic!()
    };
    assert_eq!(
        (results[0].content.as_str(), results[0].is_error),
        ("denied: the user denied this call", true)
    );
    let a = respond(
        &mut lp,
        &app,
        r2,
        &[text("I couldn't fetch it: you declined.")],
    );
    assert_eq!(outcome(&a), Some(TurnOutcome::Answered));
}

#[test]
fn the_step_limit_stops_the_turn_and_continue_resumes_it() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig {
        max_steps: 2,
        ..LoopConfig::default()
    });
    let mut request = sent(&lp.send("loop forever", &app).unwrap()).unwrap();
    let mut step = 0;
    let ended = loop {
        step += 1;
        let a = respond(
            &mut lp,
            &app,
            request,
            &[tool(
                0,
                &format!("d{step}"),
                "discover_skills",
                r#"{"query":"x"}"#,
            )],
        );
        if let Some(o) = outcome(&a) {
            assert_eq!(runs(&a), vec![], "calls at the limit are not run");
            break o;
        }
        let calls = runs(&a);
        let result = app.run(calls[0].clone());
        request = sent(&lp.handle(
            Event::ToolFinished {
                result: Box::new(result),
            },
            &app,
        ))
        .unwrap();
    };
    assert_eq!(ended, TurnOutcome::StepLimit { steps: 2 });
    assert_eq!(log.borrow().len(), 2);
    let last = lp.conversation().messages.last().unwrap();
    assert_eq!(
        last.tool_calls[0].note.as_deref(),
        Some("not run: this turn reached its limit of 2 steps; the user can let it continue")
    );
    assert_eq!(
        lp.continue_after_limit(&app).map(|a| sent(&a).is_some()),
        Ok(true)
    );
    assert_valid_history(&log.borrow()[2].messages);
    let (mut fresh, _) = new_loop(LoopConfig::default());
    assert_eq!(
        fresh.continue_after_limit(&app),
        Err(LoopError::NothingToContinue)
    );
}

#[test]
fn sending_while_busy_or_empty_is_refused() {
    let app = App::new();
    let (mut lp, _) = new_loop(LoopConfig::default());
    assert_eq!(lp.send("  ", &app), Err(LoopError::EmptyMessage));
    lp.send("hi", &app).unwrap();
    assert_eq!(lp.send("again", &app), Err(LoopError::Busy));
    assert!(lp.conversation_mut().is_none());
}

#[test]
fn cancel_while_waiting_for_the_response() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("hi", &app).unwrap()).unwrap();
    let a = lp.handle(Event::Cancel, &app);
    assert_eq!(a.first(), Some(&Action::Abort { request: r1 }));
    assert_eq!(outcome(&a), Some(TurnOutcome::Cancelled));
    assert_eq!(
        lp.conversation().messages[1].status,
        MessageStatus::Cancelled
    );
    // The late response is ignored.
    assert_eq!(respond(&mut lp, &app, r1, &[text("late")]), vec![]);
    let r2 = sent(&lp.send("hi again", &app).unwrap()).unwrap();
    assert_ne!(r1, r2);
    assert_valid_history(&log.borrow()[1].messages);
    assert_eq!(
        log.borrow()[1].messages,
        vec![
            WireMessage::User { text: "hi".into() },
            WireMessage::User {
                text: "hi again".into()
            }
        ]
    );
}

#[test]
fn cancel_mid_stream_keeps_the_text_and_drops_unfinished_calls() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("write a poem", &app).unwrap()).unwrap();
    lp.handle(
        Event::ResponseStarted {
            request: r1,
            status: 200,
            headers: vec![],
        },
        &app,
    );
    lp.handle(
        Event::ResponseChunk {
            request: r1,
            bytes: body(
                &[
                    text("Roses are"),
                    StreamEvent::Usage {
                        usage: Usage {
                            input_tokens: Some(12),
                            output_tokens: Some(3),
                        },
                    },
                    tool(0, "t", "discover_skills", r#"{"qu"#),
                ],
                false,
            ),
        },
        &app,
    );
    let a = lp.handle(Event::Cancel, &app);
    assert_eq!(outcome(&a), Some(TurnOutcome::Cancelled));
    let m = &lp.conversation().messages[1];
    assert_eq!(
        (m.content.as_str(), m.status, m.tool_calls.len()),
        ("Roses are", MessageStatus::Cancelled, 0)
    );
    // The stopped reply keeps the token counts it had.
    assert_eq!(
        m.usage,
        Some(Usage {
            input_tokens: Some(12),
            output_tokens: Some(3)
        })
    );
    assert_eq!(
        lp.handle(
            Event::ResponseChunk {
                request: r1,
                bytes: body(&[text(" red")], true)
            },
            &app
        ),
        vec![]
    );
    lp.send("go on", &app).unwrap();
    let history = &log.borrow()[1].messages;
    assert_valid_history(history);
    assert_eq!(
        history[1],
        WireMessage::Assistant {
            text: "Roses are".into(),
            tool_calls: vec![]
        }
    );
}

#[test]
fn cancel_while_tools_run_gives_every_call_a_result() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    lp.conversation_mut()
        .unwrap()
        .load_skills([SkillId::new("calculator").unwrap()]);
    let r1 = sent(&lp.send("sums", &app).unwrap()).unwrap();
    let calls = runs(&respond(
        &mut lp,
        &app,
        r1,
        &[
            tool(0, "a", "calculator", r#"{"expression":"1+1"}"#),
            tool(1, "b", "calculator", r#"{"expression":"2+2"}"#),
        ],
    ));
    let first = app.run(calls[0].clone());
    lp.handle(
        Event::ToolFinished {
            result: Box::new(first),
        },
        &app,
    );
    let a = lp.handle(Event::Cancel, &app);
    assert_eq!(
        a,
        vec![
            Action::CancelTool {
                call_id: "hearth-2".into()
            },
            Action::Changed,
            Action::TurnEnded {
                outcome: TurnOutcome::Cancelled
            },
        ]
    );
    let states: Vec<CallState> = lp.conversation().messages[1]
        .tool_calls
        .iter()
        .map(|c| c.state)
        .collect();
    assert_eq!(states, [CallState::Finished, CallState::Cancelled]);
    // The call had already run; its real result is kept when it arrives.
    let late = app.run(calls[1].clone());
    assert_eq!(
        lp.handle(
            Event::ToolFinished {
                result: Box::new(late)
            },
            &app
        ),
        vec![Action::Changed]
    );
    lp.send("ok", &app).unwrap();
    let history = &log.borrow()[1].messages;
    assert_valid_history(history);
    let Some(WireMessage::ToolResults { results }) = history.get(2) else {
        panic!()
    };
    assert!(results[1].content.starts_with('4'), "{:?}", results[1]);
}

#[test]
fn cancel_while_waiting_to_retry() {
    let app = App::new();
    let (mut lp, _) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("hi", &app).unwrap()).unwrap();
    let a = fail_http(&mut lp, &app, r1, 503, &[], "busy");
    let Some(Action::RetryLater { request, .. }) = a
        .iter()
        .find(|x| matches!(x, Action::RetryLater { .. }))
        .cloned()
    else {
        panic!("{a:?}")
    };
    assert_eq!(
        outcome(&lp.handle(Event::Cancel, &app)),
        Some(TurnOutcome::Cancelled)
    );
    assert_eq!(lp.handle(Event::RetryDue { request }, &app), vec![]);
    let roles: Vec<Role> = lp.conversation().messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User]);
}

#[test]
fn rate_limits_wait_as_told_then_other_errors_end_the_turn_intact() {
    let app = App::new();
    let (mut lp, _) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("hello", &app).unwrap()).unwrap();
    let a = fail_http(
        &mut lp,
        &app,
        r1,
        429,
        &[("Retry-After", "2")],
        r#"{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}"#,
    );
    let Some(Action::RetryLater {
        request,
        delay_ms,
        error,
    }) = a
        .iter()
        .find(|x| matches!(x, Action::RetryLater { .. }))
        .cloned()
    else {
        panic!("{a:?}")
    };
    assert_eq!((delay_ms, error.kind), (2_000, ErrorKind::RateLimited));
    assert_eq!(
        lp.conversation().messages.len(),
        1,
        "no empty reply while waiting"
    );
    let r2 = sent(&lp.handle(Event::RetryDue { request }, &app)).unwrap();
    let a = fail_http(
        &mut lp,
        &app,
        r2,
        401,
        &[],
        r#"{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}"#,
    );
    let Some(TurnOutcome::Failed { error }) = outcome(&a) else {
        panic!("{a:?}")
    };
    assert_eq!(error.kind, ErrorKind::Auth);
    let c = lp.conversation();
    assert_eq!(c.messages[0].content, "hello", "the person's message stays");
    assert_eq!(
        (
            c.messages[1].status,
            c.messages[1].error.as_ref().map(|e| e.kind)
        ),
        (MessageStatus::Error, Some(ErrorKind::Auth))
    );
    assert!(lp.is_idle());
}

#[test]
fn a_long_retry_after_is_not_waited_out_automatically() {
    let app = App::new();
    let (mut lp, _) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("hello", &app).unwrap()).unwrap();
    let a = fail_http(&mut lp, &app, r1, 429, &[("retry-after", "120")], "");
    let Some(TurnOutcome::Failed { error }) = outcome(&a) else {
        panic!("{a:?}")
    };
    assert_eq!(error.advice, "Hearth can try again in 2 minutes.");
}

#[test]
fn network_failures_back_off_then_give_up() {
    let app = App::new();
    let (mut lp, _) = new_loop(LoopConfig::default());
    let mut request = sent(&lp.send("hello", &app).unwrap()).unwrap();
    let mut delays = Vec::new();
    let failure = loop {
        let a = lp.handle(
            Event::RequestFailed {
                request,
                error: "TypeError: Failed to fetch".into(),
            },
            &app,
        );
        if let Some(o) = outcome(&a) {
            break o;
        }
        let Some(Action::RetryLater {
            request: next,
            delay_ms,
            ..
        }) = a
            .into_iter()
            .find(|x| matches!(x, Action::RetryLater { .. }))
        else {
            panic!()
        };
        delays.push(delay_ms);
        request = sent(&lp.handle(Event::RetryDue { request: next }, &app)).unwrap();
    };
    assert_eq!(delays, [1_000, 2_000]);
    let TurnOutcome::Failed { error } = failure else {
        panic!()
    };
    assert_eq!(error.kind, ErrorKind::Network);
    assert!(
        error.advice.starts_with("Is Ollama running?"),
        "{}",
        error.advice
    );

    // The next turn (e.g. "Try again" once the server is back) gets its
    // own quiet retries; the last turn's count does not carry over.
    let text = lp
        .conversation_mut()
        .and_then(|c| c.retract_last_user_message(0.0))
        .unwrap();
    let request = sent(&lp.send(&text, &app).unwrap()).unwrap();
    let a = lp.handle(
        Event::RequestFailed {
            request,
            error: "TypeError: Failed to fetch".into(),
        },
        &app,
    );
    assert!(
        a.iter().any(|x| matches!(
            x,
            Action::RetryLater {
                delay_ms: 1_000,
                ..
            }
        )),
        "{a:?}"
    );
}

#[test]
fn a_stream_cut_after_text_keeps_the_text_and_is_not_retried() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("tell me", &app).unwrap()).unwrap();
    lp.handle(
        Event::ResponseStarted {
            request: r1,
            status: 200,
            headers: vec![],
        },
        &app,
    );
    lp.handle(
        Event::ResponseChunk {
            request: r1,
            bytes: body(&[text("Once upon")], false),
        },
        &app,
    );
    let a = lp.handle(Event::ResponseEnded { request: r1 }, &app);
    let Some(TurnOutcome::Failed { error }) = outcome(&a) else {
        panic!("{a:?}")
    };
    assert_eq!(error.kind, ErrorKind::TruncatedStream);
    let m = &lp.conversation().messages[1];
    assert_eq!(
        (m.content.as_str(), m.status),
        ("Once upon", MessageStatus::Error)
    );
    lp.send("again", &app).unwrap();
    assert_valid_history(&log.borrow()[1].messages);
}

#[test]
fn stale_and_unknown_events_are_ignored() {
    let app = App::new();
    let (mut lp, _) = new_loop(LoopConfig::default());
    let r1 = sent(&lp.send("hi", &app).unwrap()).unwrap();
    let other = RequestId(r1.0 + 7);
    assert_eq!(
        lp.handle(
            Event::ResponseStarted {
                request: other,
                status: 200,
                headers: vec![]
            },
            &app
        ),
        vec![]
    );
    assert_eq!(
        lp.handle(
            Event::RequestFailed {
                request: other,
                error: "x".into()
            },
            &app
        ),
        vec![]
    );
    let stray = ToolResult::denied(
        &ToolCall {
            id: "nope".into(),
            skill_id: SkillId::new("calculator").unwrap(),
            arguments: json!({}),
            conversation_id: None,
            origin: hearth_core::CallOrigin::Model,
        },
        "x",
    );
    assert_eq!(
        lp.handle(
            Event::ToolFinished {
                result: Box::new(stray)
            },
            &app
        ),
        vec![]
    );
    assert_eq!(lp.state(), &LoopState::Requesting { request: r1 });
}

/// Real recorded streams through the real protocols.
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/streams")
            .join(name),
    )
    .unwrap()
}

#[test]
fn real_protocols_drive_the_loop() {
    let app = App::new();
    for (preset_id, file, want_runs, want_refused) in [
        (
            "openai",
            "openai_parallel_tools.sse",
            vec!["call_F9mQ2", "call_Zk81p"],
            0,
        ),
        // Claude calls the calculator before discovering it: refused.
        (
            "anthropic",
            "anthropic_tool_use.sse",
            vec!["toolu_01T1x1fJ34qAmk2tNTrN7Up6"],
            1,
        ),
    ] {
        let provider = Provider::new(ProviderConfig::from_preset(
            preset(preset_id).unwrap(),
            "k",
            "m",
        ));
        let mut lp = AgentLoop::new(
            Conversation::new("c", 0.0),
            Box::new(provider),
            LoopConfig::default(),
            0.0,
        );
        let a = lp.send("What's 15% of 847?", &app).unwrap();
        let Some(Action::Send { request, http }) =
            a.into_iter().find(|x| matches!(x, Action::Send { .. }))
        else {
            panic!()
        };
        assert!(http.body_text().unwrap().contains("discover_skills"));
        lp.handle(
            Event::ResponseStarted {
                request,
                status: 200,
                headers: vec![],
            },
            &app,
        );
        let mut actions = Vec::new();
        for chunk in fixture(file).chunks(5) {
            actions.extend(lp.handle(
                Event::ResponseChunk {
                    request,
                    bytes: chunk.to_vec(),
                },
                &app,
            ));
        }
        actions.extend(lp.handle(Event::ResponseEnded { request }, &app));
        // Each call runs under the id Hearth minted; the model's own id
        // stays on its record, for the transcript.
        let records = &lp.conversation().messages[1].tool_calls;
        let ids: Vec<String> = runs(&actions)
            .into_iter()
            .map(|c| {
                let record = records.iter().find(|r| r.id == c.id).unwrap();
                assert!(c.id.starts_with("hearth-"), "{}", c.id);
                record.wire_id().to_string()
            })
            .collect();
        assert_eq!(ids, want_runs, "{preset_id}");
        let refused = lp.conversation().messages[1]
            .tool_calls
            .iter()
            .filter(|c| c.state == CallState::Refused)
            .count();
        assert_eq!(refused, want_refused, "{preset_id}");
    }
}

/// Ids the environment hands out, replaying `ids` in turn (so a test can
/// make it repeat itself or give none); everything else is the app's.
struct Minting<'a> {
    app: &'a App,
    ids: RefCell<Vec<&'static str>>,
}

impl LoopEnv for Minting<'_> {
    fn now_unix_ms(&self) -> f64 {
        self.app.now_unix_ms()
    }

    fn new_call_id(&self) -> String {
        let mut ids = self.ids.borrow_mut();
        if ids.is_empty() {
            String::new()
        } else {
            ids.remove(0).to_string()
        }
    }

    fn skill(&self, id: &SkillId) -> Option<SkillDefinition> {
        self.app.skill(id)
    }
}

#[test]
fn each_accepted_call_gets_one_minted_id_and_the_model_gets_its_own_back() {
    let app = App::new();
    let (mut lp, log) = new_loop(LoopConfig::default());
    lp.conversation_mut()
        .unwrap()
        .load_skills([SkillId::new("calculator").unwrap()]);
    let r1 = sent(&lp.send("two sums and a typo", &app).unwrap()).unwrap();
    // Local servers reuse ids like "call_0" within one reply.
    let a = respond(
        &mut lp,
        &app,
        r1,
        &[
            tool(0, "call_0", "calculator", r#"{"expression":"1+1"}"#),
            tool(1, "call_0", "calculator", r#"{"expression":"2+2"}"#),
            tool(2, "call_9", "no_such_skill", "{}"),
            finished(FinishReason::ToolCalls),
        ],
    );
    let calls = runs(&a);
    let handed: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(handed, ["hearth-1", "hearth-2"]);
    // The refused call has a minted id too: every record has one.
    let records = lp.conversation().messages[1].tool_calls.clone();
    let ids: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r.id.as_str(), r.wire_id()))
        .collect();
    assert_eq!(
        ids,
        [
            ("hearth-1", "call_0"),
            ("hearth-2", "call_0_1"),
            ("hearth-3", "call_9")
        ]
    );
    assert_eq!(records[2].state, CallState::Refused);
    // The results come back under Hearth's ids, in any order.
    for call in calls.into_iter().rev() {
        let result = app.run(call.clone());
        assert_eq!(result.id, call.id);
        lp.handle(
            Event::ToolFinished {
                result: Box::new(result),
            },
            &app,
        );
    }
    let states: Vec<CallState> = lp.conversation().messages[1]
        .tool_calls
        .iter()
        .map(|c| c.state)
        .collect();
    assert_eq!(
        states,
        [CallState::Finished, CallState::Finished, CallState::Refused]
    );
    // The next request echoes the model's ids, never Hearth's.
    let request = log.borrow()[1].clone();
    assert_valid_history(&request.messages);
    let openai = Provider::new(ProviderConfig::from_preset(
        preset("openai").unwrap(),
        "k",
        "m",
    ));
    let body: Value =
        serde_json::from_slice(openai.chat_request(&request).body.as_deref().unwrap()).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let asked: Vec<&str> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let answered: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(asked, ["call_0", "call_0_1", "call_9"]);
    assert_eq!(answered, ["call_0", "call_0_1", "call_9"]);
    let anthropic = Provider::new(ProviderConfig::from_preset(
        preset("anthropic").unwrap(),
        "k",
        "m",
    ));
    let body: Value =
        serde_json::from_slice(anthropic.chat_request(&request).body.as_deref().unwrap()).unwrap();
    let blocks: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .collect();
    let uses: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, ["call_0", "call_0_1", "call_9"]);
    assert_eq!(results, ["call_0", "call_0_1", "call_9"]);
    assert!(!body.to_string().contains("hearth-"));
}

#[test]
fn a_repeated_or_missing_id_from_the_environment_is_made_unique() {
    let app = App::new();
    let env = Minting {
        app: &app,
        ids: RefCell::new(vec!["same", "same", "same"]),
    };
    let (mut lp, _log) = new_loop(LoopConfig::default());
    lp.conversation_mut()
        .unwrap()
        .load_skills([SkillId::new("calculator").unwrap()]);
    let r1 = sent(&lp.send("sums", &env).unwrap()).unwrap();
    let first = |lp: &mut AgentLoop, r| {
        let a = lp.handle(
            Event::ResponseStarted {
                request: r,
                status: 200,
                headers: vec![],
            },
            &env,
        );
        assert!(a.is_empty());
        let mut a = lp.handle(
            Event::ResponseChunk {
                request: r,
                bytes: body(
                    &[
                        tool(0, "a", "calculator", r#"{"expression":"1+1"}"#),
                        tool(1, "b", "calculator", r#"{"expression":"2+2"}"#),
                        finished(FinishReason::ToolCalls),
                    ],
                    true,
                ),
            },
            &env,
        );
        a.extend(lp.handle(Event::ResponseEnded { request: r }, &env));
        runs(&a)
    };
    let calls = first(&mut lp, r1);
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["same", "same-1"]);
    // The next reply's calls are unique against the whole conversation,
    // and an environment that gives no id still yields one.
    let mut next = None;
    for call in calls {
        let result = app.run(call);
        next = sent(&lp.handle(
            Event::ToolFinished {
                result: Box::new(result),
            },
            &env,
        ))
        .or(next);
    }
    let calls = first(&mut lp, next.unwrap());
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["same-2", "conv1-call"]);
}
