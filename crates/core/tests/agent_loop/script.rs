//! The agent-loop tests' script runner: a scripted provider plays the
//! model, tool calls go through the real `Invoker` (with the real
//! calculator and discovery), the way the app runs them, and [`check`]
//! plays a text script against the loop and compares what the loop did,
//! rendered as text, with the expected transcript.
//!
//! A script is one command a line; lines indented under `model` or
//! `chunk` are the stream events of that response body:
//!
//! | command | what it does |
//! |---|---|
//! | `max-steps N` | (before any other line) the loop's step limit |
//! | `provider PRESET` | (before any line but `max-steps`) the real protocol of PRESET plays the model instead |
//! | `load SKILL` / `disable SKILL` | load a skill in the conversation / turn it off in the app |
//! | `ids A B ...` | the environment mints these call ids, then none |
//! | `user TEXT` | the person sends TEXT (a JSON string when quoted) |
//! | `model [#N]` | a whole 200 response with the events below it |
//! | `start [#N] STATUS` / `chunk [#N]` / `ended [#N]` | one response event each; `end` among a chunk's events closes the stream |
//! | `stream [#N] FILE` | a whole 200 response whose body is the recorded stream `tests/fixtures/streams/FILE`, fed 5 bytes at a time |
//! | `http [#N] STATUS [Name=Value ...] \| BODY` | a whole error response |
//! | `fail [#N] TEXT` / `retry-due [#N]` / `cancel` | the request failed / its retry is due / the person stops |
//! | `run ID` | runs the handed-out call ID through the call path and reports its result |
//! | `stray-result ID` | a result for a call the loop never handed out |
//! | `continue` / `retract` / `reload` | continue after the limit / take back the last message / save and reload the conversation |
//! | `show conversation` / `show request N` / `show state` | render the conversation / the Nth request sent / the loop's state |
//!
//! Events: `text "JSON"`, `call INDEX ID NAME ARGS` (ID and NAME a word or
//! a JSON string, ARGS the raw rest of the line), `usage IN OUT`,
//! `finished REASON`.
//!
//! The transcript repeats each command's first line and, indented, what
//! the loop did: every action in order (`(nothing)` when none), a result
//! for `run`, or the rendering `show` asked for (the two opening lines
//! above are settings and not repeated). Every request the loop sends to
//! the scripted model is also checked to answer every tool call right
//! after it, in a form both real protocols accept.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use futures::FutureExt;
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use hearth_core::assistant::agent::{
    Action, AgentLoop, Conversation, Event, LoopConfig, LoopEnv, LoopError, LoopState, RequestId,
    TurnOutcome,
};
use hearth_core::assistant::providers::{
    ChatRequest, FinishReason, HttpMethod, HttpRequest, Protocol, Provider, ProviderConfig,
    ProviderError, StreamDecoder, StreamEvent, Usage, Vision, WireMessage, preset,
};
use hearth_core::discovery;
use hearth_core::skill::approval::{MemoryPolicy, NobodyToAsk, PermissionHook};
use hearth_core::skill::invoke::{CallContext, Hook, Invoker};
use hearth_core::skill::permission::{PermissionMode, PermissionSettings};
use hearth_core::testing::{self, FakeClock, Skills};
use hearth_core::{SkillDefinition, SkillId, Tier, ToolCall, ToolResult};
use serde::Serialize;
use serde_json::Value;

// ---------------------------------------------------------------- the model

/// Plays the model: every request is logged; response bodies are JSON
/// lines of `StreamEvent`, closed by an `END` line (without it the stream
/// counts as cut short). Errors are classified by the real OpenAI-compatible
/// protocol.
pub struct Scripted {
    log: Rc<RefCell<Vec<ChatRequest>>>,
    real: Provider,
}

impl Scripted {
    pub fn new() -> (Self, Rc<RefCell<Vec<ChatRequest>>>) {
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

    fn vision(&self) -> Vision {
        Vision::Sees
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

pub fn text(t: &str) -> StreamEvent {
    StreamEvent::Text { text: t.into() }
}

pub fn tool(index: usize, id: &str, name: &str, args: &str) -> StreamEvent {
    StreamEvent::ToolCall {
        index,
        id: Some(id.into()),
        name: Some(name.into()),
        arguments: args.into(),
    }
}

pub fn finished(reason: FinishReason) -> StreamEvent {
    StreamEvent::Finished { reason }
}

pub fn body(events: &[StreamEvent], end: bool) -> Vec<u8> {
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

pub struct App {
    skills: Vec<SkillDefinition>,
    pub enabled: RefCell<Vec<String>>,
    now: Cell<f64>,
    invoker: Invoker,
    /// Calls given an id so far.
    ids: Cell<u32>,
    /// Ids the environment hands out instead, in turn (so a script can
    /// make it repeat itself or give none).
    minted: RefCell<Option<Vec<String>>>,
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
    pub fn new() -> Self {
        let skills = vec![
            discovery::discover_skills_definition(),
            hearth_core::builtin::calculator(),
            testing::web_fetch(),
        ];
        let enabled = vec![
            "discover_skills".to_string(),
            "calculator".to_string(),
            "web_fetch".to_string(),
        ];
        let registry = skills.clone();
        let on = enabled.clone();
        let invoker = Invoker::new(
            move |id: &SkillId| registry.iter().find(|s| s.id == *id).cloned(),
            Rc::new(Skills::new(&skills, move |s| {
                on.iter().any(|e| e == s.id.as_str())
            })),
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
            minted: RefCell::new(None),
        }
    }

    pub fn run(&self, call: ToolCall) -> ToolResult {
        block_on(self.invoker.invoke(call))
    }
}

impl LoopEnv for App {
    fn now_unix_ms(&self) -> f64 {
        self.now.set(self.now.get() + 1.0);
        self.now.get()
    }

    fn new_call_id(&self) -> String {
        if let Some(ids) = self.minted.borrow_mut().as_mut() {
            return if ids.is_empty() {
                String::new()
            } else {
                ids.remove(0)
            };
        }
        let n = self.ids.get() + 1;
        self.ids.set(n);
        format!("hearth-{n}")
    }

    fn skill(&self, id: &SkillId) -> Option<SkillDefinition> {
        let enabled = self.enabled.borrow().iter().any(|e| e == id.as_str());
        self.skills.iter().find(|s| s.id == *id && enabled).cloned()
    }
}

/// Every assistant tool call is answered, in order, right after it: the
/// invariant both providers enforce.
pub fn assert_valid_history(messages: &[WireMessage]) {
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

// ---------------------------------------------------------------- the runner

/// A loop over a fresh conversation `conv1`, with its provider's log.
pub fn new_loop(config: LoopConfig) -> (AgentLoop, Rc<RefCell<Vec<ChatRequest>>>) {
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

/// What a script ran against, for what a transcript cannot say.
pub struct Run {
    pub app: App,
    pub lp: AgentLoop,
    pub log: Rc<RefCell<Vec<ChatRequest>>>,
}

/// Plays the case `tests/agent_loop/NAME.txt` (its script, a line `----`,
/// then the transcript it should give) and compares the transcripts. A
/// mismatch fails and prints the transcript the loop gave; with
/// `UPDATE_EXPECT=1` it rewrites the file's transcript instead, for a
/// change meant to alter what the loop does (the diff then shows how).
#[track_caller]
pub fn check(name: &str) -> Run {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agent_loop")
        .join(format!("{name}.txt"));
    let case = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let (script, expect) = case
        .split_once("\n----\n")
        .unwrap_or_else(|| panic!("{} has no `----` line", path.display()));
    let (run, transcript) = play(script.trim_end());
    if transcript != expect.trim_end() {
        if std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1") {
            std::fs::write(
                &path,
                format!("{}\n----\n{transcript}\n", script.trim_end()),
            )
            .unwrap();
        } else {
            panic!(
                "{name}: the transcript differs (UPDATE_EXPECT=1 rewrites it)\n--- expected\n{}\n--- actual\n{transcript}\n---",
                expect.trim_end()
            );
        }
    }
    run
}

struct Player {
    run: Run,
    /// A real protocol plays the model: requests are read from their
    /// bodies, not the scripted provider's log.
    real: bool,
    /// The request a command without `#N` is about: the last one sent or
    /// put off for a retry.
    current: Option<RequestId>,
    /// Every call the loop handed out, by id.
    handed: HashMap<String, ToolCall>,
    out: Vec<String>,
}

fn play(script: &str) -> (Run, String) {
    let mut lines = script.lines().peekable();
    let mut config = LoopConfig::default();
    if let Some(steps) = lines.peek().and_then(|l| l.strip_prefix("max-steps ")) {
        config.max_steps = steps.trim().parse().unwrap();
        lines.next();
    }
    let (mut lp, log) = new_loop(config.clone());
    let mut real = false;
    if let Some(id) = lines.peek().and_then(|l| l.strip_prefix("provider ")) {
        let provider = Provider::new(ProviderConfig::from_preset(preset(id).unwrap(), "k", "m"));
        lp = AgentLoop::new(
            Conversation::new("conv1", 0.0),
            Box::new(provider),
            config,
            0.0,
        );
        real = true;
        lines.next();
    }
    let mut p = Player {
        real,
        run: Run {
            app: App::new(),
            lp,
            log,
        },
        current: None,
        handed: HashMap::new(),
        out: Vec::new(),
    };
    while let Some(line) = lines.next() {
        assert!(
            !line.starts_with(' '),
            "an indented line belongs under model or chunk: {line:?}"
        );
        let mut events = Vec::new();
        while let Some(next) = lines.next_if(|l| l.starts_with(' ')) {
            events.push(next.trim());
        }
        p.out.push(line.to_string());
        p.command(line, &events);
    }
    let transcript = p.out.join("\n");
    (p.run, transcript)
}

impl Player {
    fn command(&mut self, line: &str, events: &[&str]) {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let (request, rest) = self.request(rest);
        match word {
            "load" => {
                self.run
                    .lp
                    .conversation_mut()
                    .unwrap()
                    .load_skills([SkillId::new(rest).unwrap()]);
            }
            "disable" => self.run.app.enabled.borrow_mut().retain(|s| s != rest),
            "ids" => {
                *self.run.app.minted.borrow_mut() =
                    Some(rest.split_whitespace().map(String::from).collect())
            }
            "user" => {
                let text = quoted_or_word(rest).unwrap_or_else(|| rest.to_string());
                let sent = self.run.lp.send(&text, Vec::new(), &self.run.app);
                self.answer(sent);
            }
            "continue" => {
                let sent = self.run.lp.continue_after_limit(&self.run.app);
                self.answer(sent);
            }
            "model" => {
                let mut actions = self.handle(Event::ResponseStarted {
                    request,
                    status: 200,
                    headers: vec![],
                });
                let mut events = events.to_vec();
                events.push("end");
                actions.extend(self.handle(Event::ResponseChunk {
                    request,
                    bytes: stream_body(&events),
                }));
                actions.extend(self.handle(Event::ResponseEnded { request }));
                self.actions(actions);
            }
            "stream" => {
                let bytes = std::fs::read(
                    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/fixtures/streams")
                        .join(rest),
                )
                .unwrap();
                let mut actions = self.handle(Event::ResponseStarted {
                    request,
                    status: 200,
                    headers: vec![],
                });
                for chunk in bytes.chunks(5) {
                    actions.extend(self.handle(Event::ResponseChunk {
                        request,
                        bytes: chunk.to_vec(),
                    }));
                }
                actions.extend(self.handle(Event::ResponseEnded { request }));
                self.actions(actions);
            }
            "start" => {
                let status = rest.parse().unwrap();
                let a = self.handle(Event::ResponseStarted {
                    request,
                    status,
                    headers: vec![],
                });
                self.actions(a);
            }
            "chunk" => {
                let bytes = stream_body(events);
                let a = self.handle(Event::ResponseChunk { request, bytes });
                self.actions(a);
            }
            "ended" => {
                let a = self.handle(Event::ResponseEnded { request });
                self.actions(a);
            }
            "http" => {
                let (head, text) = rest.split_once('|').unwrap();
                let mut words = head.split_whitespace();
                let status = words.next().unwrap().parse().unwrap();
                let headers = words
                    .map(|h| {
                        let (k, v) = h.split_once('=').unwrap();
                        (k.to_string(), v.to_string())
                    })
                    .collect();
                let mut a = self.handle(Event::ResponseStarted {
                    request,
                    status,
                    headers,
                });
                a.extend(self.handle(Event::ResponseChunk {
                    request,
                    bytes: text.trim().as_bytes().to_vec(),
                }));
                a.extend(self.handle(Event::ResponseEnded { request }));
                self.actions(a);
            }
            "fail" => {
                let a = self.handle(Event::RequestFailed {
                    request,
                    error: rest.to_string(),
                });
                self.actions(a);
            }
            "retry-due" => {
                let a = self.handle(Event::RetryDue { request });
                self.actions(a);
            }
            "cancel" => {
                let a = self.handle(Event::Cancel);
                self.actions(a);
            }
            "run" => {
                let call = self
                    .handed
                    .get(rest)
                    .unwrap_or_else(|| panic!("no call {rest} was handed out"))
                    .clone();
                let result = self.run.app.run(call);
                self.say(format!("result {}", result_line(&result)));
                let a = self.handle(Event::ToolFinished {
                    result: Box::new(result),
                });
                self.actions(a);
            }
            "stray-result" => {
                let call = testing::call("calculator").id(rest).build();
                let a = self.handle(Event::ToolFinished {
                    result: Box::new(ToolResult::denied(&call, "x")),
                });
                self.actions(a);
            }
            "retract" => {
                let text = self
                    .run
                    .lp
                    .conversation_mut()
                    .and_then(|c| c.retract_last_user_message(0.0))
                    .map(|(text, _)| text)
                    .unwrap();
                self.say(format!("retracted {}", json(&text)));
            }
            "reload" => {
                let saved = serde_json::to_string(self.run.lp.conversation()).unwrap();
                let (scripted, log) = Scripted::new();
                self.run.lp = AgentLoop::new(
                    serde_json::from_str(&saved).unwrap(),
                    Box::new(scripted),
                    LoopConfig::default(),
                    0.0,
                );
                self.run.log = log;
            }
            "show" => self.show(rest),
            other => panic!("unknown command {other:?}"),
        }
    }

    /// Takes an optional `#N` off the front of `rest`.
    fn request<'a>(&self, rest: &'a str) -> (RequestId, &'a str) {
        if let Some(tail) = rest.strip_prefix('#') {
            let (n, tail) = tail.split_once(' ').unwrap_or((tail, ""));
            (RequestId(n.parse().unwrap()), tail)
        } else {
            (self.current.unwrap_or(RequestId(0)), rest)
        }
    }

    fn handle(&mut self, event: Event) -> Vec<Action> {
        self.run.lp.handle(event, &self.run.app)
    }

    fn answer(&mut self, sent: Result<Vec<Action>, LoopError>) {
        match sent {
            Ok(actions) => self.actions(actions),
            Err(e) => self.say(format!("refused: {e:?}")),
        }
    }

    fn say(&mut self, line: String) {
        self.out.push(format!("  {line}"));
    }

    fn actions(&mut self, actions: Vec<Action>) {
        if actions.is_empty() {
            self.say("(nothing)".into());
        }
        for action in actions {
            let line = match &action {
                Action::Send { request, http } => {
                    self.current = Some(*request);
                    if self.real {
                        format!("send #{} {}", request.0, list(body_tools(http)))
                    } else {
                        let log = self.run.log.borrow();
                        let sent = log.last().expect("a send is logged");
                        assert_valid_history(&sent.messages);
                        format!(
                            "send #{} {}",
                            request.0,
                            list(sent.tools.iter().map(|t| &t.name))
                        )
                    }
                }
                Action::Abort { request } => format!("abort #{}", request.0),
                Action::RunTool { call } => {
                    self.handed.insert(call.id.clone(), call.clone());
                    format!(
                        "run {} {} {} in {} from {}",
                        call.id,
                        call.skill_id,
                        call.arguments,
                        call.conversation_id.as_deref().unwrap_or("-"),
                        name(&call.origin)
                    )
                }
                Action::CancelTool { call_id } => format!("cancel tool {call_id}"),
                Action::RetryLater {
                    request,
                    delay_ms,
                    error,
                } => {
                    self.current = Some(*request);
                    format!(
                        "retry #{} in {delay_ms} ms: {}",
                        request.0,
                        error_line(error)
                    )
                }
                Action::TextDelta { message_id, text } => {
                    format!("text {message_id} {}", json(text))
                }
                Action::SkillsLoaded { skills } => format!("loaded {}", list(skills)),
                Action::Changed => "changed".into(),
                Action::TurnEnded { outcome } => format!(
                    "ended: {}",
                    match outcome {
                        TurnOutcome::Answered => "answered".into(),
                        TurnOutcome::StepLimit { steps } => format!("step limit {steps}"),
                        TurnOutcome::Cancelled => "cancelled".into(),
                        TurnOutcome::Failed { error } => format!("failed {}", error_line(error)),
                    }
                ),
            };
            self.say(line);
        }
    }

    fn show(&mut self, what: &str) {
        match what.split_once(' ').unwrap_or((what, "")) {
            ("conversation", _) => {
                let c = self.run.lp.conversation().clone();
                self.say(format!("title {}", json(&c.title)));
                self.say(format!("loaded {}", list(&c.loaded_skills)));
                for m in &c.messages {
                    self.say(format!(
                        "{} {} {} {}",
                        m.id,
                        name(&m.role),
                        name(&m.status),
                        json(&m.content)
                    ));
                    for t in &m.tool_calls {
                        let wire = if t.wire_id() == t.id {
                            String::new()
                        } else {
                            format!(" ({})", t.wire_id())
                        };
                        self.say(format!(
                            "  call {}{wire} {} {}",
                            t.id,
                            json(&t.name),
                            name(&t.state)
                        ));
                        if let Some(raw) = &t.raw_arguments {
                            self.say(format!("    raw {}", json(raw)));
                        }
                        if let Some(note) = &t.note {
                            self.say(format!("    note {note}"));
                        }
                    }
                    if let Some(Usage {
                        input_tokens,
                        output_tokens,
                    }) = &m.usage
                    {
                        let n = |t: &Option<u64>| t.map_or("-".into(), |t| t.to_string());
                        self.say(format!(
                            "  usage in {} out {}",
                            n(input_tokens),
                            n(output_tokens)
                        ));
                    }
                    if let Some(e) = &m.error {
                        self.say(format!("  error {}", error_line(e)));
                    }
                }
            }
            ("request", n) => {
                let n: usize = n.parse().unwrap();
                let request = self.run.log.borrow()[n - 1].clone();
                self.say(format!(
                    "tools {}",
                    list(request.tools.iter().map(|t| &t.name))
                ));
                for m in &request.messages {
                    let line = match m {
                        WireMessage::User { text, .. } => format!("user {}", json(text)),
                        WireMessage::Assistant { text, tool_calls } => format!(
                            "assistant {}{}",
                            json(text),
                            tool_calls
                                .iter()
                                .map(|c| format!(" | call {} {} {}", c.id, c.name, c.arguments))
                                .collect::<String>()
                        ),
                        WireMessage::ToolResults { results } => format!(
                            "results{}",
                            results
                                .iter()
                                .map(|r| format!(
                                    " | {} {}{} {}",
                                    r.call_id,
                                    r.name,
                                    if r.is_error { " error" } else { "" },
                                    json(&r.content)
                                ))
                                .collect::<String>()
                        ),
                    };
                    self.say(line);
                }
            }
            ("state", _) => {
                let line = match self.run.lp.state() {
                    LoopState::Idle => "idle".to_string(),
                    LoopState::Requesting { request } => format!("requesting #{}", request.0),
                    LoopState::Streaming { request } => format!("streaming #{}", request.0),
                    LoopState::ReadingError {
                        request, status, ..
                    } => {
                        format!("reading error #{} {status}", request.0)
                    }
                    LoopState::RunningTools { pending } => format!("running {}", list(pending)),
                    LoopState::WaitingToRetry { request } => {
                        format!("waiting to retry #{}", request.0)
                    }
                };
                self.say(line);
            }
            (other, _) => panic!("nothing to show called {other:?}"),
        }
    }
}

/// The tool names a real protocol's request body offers (OpenAI-compatible
/// `tools[].function.name`, Anthropic `tools[].name`).
fn body_tools(http: &HttpRequest) -> Vec<String> {
    let body: Value = serde_json::from_slice(http.body.as_deref().unwrap()).unwrap();
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            t.pointer("/function/name")
                .or(t.get("name"))
                .and_then(Value::as_str)
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A response body of stream events, one a line (see the module's table).
fn stream_body(lines: &[&str]) -> Vec<u8> {
    let mut events = Vec::new();
    let mut end = false;
    for line in lines {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "text" => events.push(text(&quoted_or_word(rest).unwrap())),
            "call" => {
                let (index, rest) = rest.split_once(' ').unwrap();
                let (id, rest) = token(rest);
                let (name, args) = token(rest);
                events.push(tool(index.parse().unwrap(), &id, &name, args));
            }
            "usage" => {
                let (i, o) = rest.split_once(' ').unwrap();
                events.push(StreamEvent::Usage {
                    usage: Usage {
                        input_tokens: Some(i.parse().unwrap()),
                        output_tokens: Some(o.parse().unwrap()),
                    },
                });
            }
            "finished" => events.push(finished(
                serde_json::from_value(Value::String(rest.into())).unwrap(),
            )),
            "end" => end = true,
            other => panic!("unknown stream event {other:?}"),
        }
    }
    body(&events, end)
}

/// One word, or a JSON string, off the front of `s`; and the rest after
/// one space.
fn token(s: &str) -> (String, &str) {
    if s.starts_with('"') {
        let mut stream = serde_json::Deserializer::from_str(s).into_iter::<String>();
        let word = stream.next().unwrap().unwrap();
        let rest = &s[stream.byte_offset()..];
        (word, rest.strip_prefix(' ').unwrap_or(rest))
    } else {
        let (word, rest) = s.split_once(' ').unwrap_or((s, ""));
        (word.to_string(), rest)
    }
}

/// `s` read as a JSON string when quoted.
fn quoted_or_word(s: &str) -> Option<String> {
    if s.starts_with('"') {
        Some(serde_json::from_str(s).unwrap())
    } else {
        (!s.is_empty()).then(|| s.to_string())
    }
}

fn result_line(r: &ToolResult) -> String {
    let mut line = format!("{} {}", r.id, name(&r.status));
    if let Some(text) = r.text() {
        line.push_str(&format!(" {}", json(text)));
    }
    if let Some(e) = &r.error {
        line.push_str(&format!(" error {}", json(e)));
    }
    line
}

fn error_line(e: &ProviderError) -> String {
    format!(
        "{} {} / {}",
        name(&e.kind),
        json(&e.message),
        json(&e.advice)
    )
}

/// A value's serde name (the enums here are plain names on the wire).
fn name(v: &impl Serialize) -> String {
    match serde_json::to_value(v).unwrap() {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items.into_iter().map(|t| t.to_string()).collect();
    format!("[{}]", items.join(", "))
}
