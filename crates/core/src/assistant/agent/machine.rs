//! The agent loop as a state machine, sans I/O: the app feeds it events
//! (a message typed, response bytes, tool results, stop) and carries out
//! the actions it returns (send this request, run this call, persist).
//!
//! One turn: build the request (system prompt, history, tools for this
//! turn) → stream the reply → collect its tool calls, parallel ones
//! included → hand each call out to be run through the permission layer →
//! take the results back → repeat until the model answers or the step
//! limit is reached.
//!
//! The loop never runs a skill and never answers an approval: tool calls
//! leave it only as [`Action::RunTool`], which the app passes to
//! `Invoker::invoke`, and the only way back in is the resulting
//! `ToolResult`. Stopping at any point leaves a conversation both
//! providers accept: an interrupted reply is marked cancelled with its
//! partial text, and every call handed out gets a cancelled result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conversation::{CallState, Conversation, Message, MessageStatus, ToolCallRecord};
use super::prompt::build_request_for;
use crate::assistant::providers::{
    AssembledTurn, HttpRequest, ImagePart, ModelLimits, Protocol, ProviderError, Retry,
    StreamDecoder, StreamEvent,
};
use crate::discovery::{DISCOVER_SKILLS_ID, Discovery};
use crate::skill::call::{CallOrigin, ToolCall, ToolResult, ToolStatus};
use crate::skill::{SkillDefinition, SkillId};

/// Identifies one HTTP request the loop asked for, so late events from an
/// aborted request are recognised and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RequestId(pub u64);

/// What the platform supplies: the clock, fresh ids and the skills.
pub trait LoopEnv {
    fn now_unix_ms(&self) -> f64;
    /// A fresh id for a call the model made. The loop gives each call it
    /// accepts one, and that id is the call's everywhere: the call handed
    /// out to run, its approval, its Activity record, its result card and
    /// its undo. It must not repeat across the app's log (the browser uses
    /// a random UUID); the loop still checks it against the conversation.
    fn new_call_id(&self) -> String;
    /// The skill with this id if it exists and is enabled now; loaded
    /// skills the person disabled are not offered.
    fn skill(&self, id: &SkillId) -> Option<SkillDefinition>;
    /// Tools offered besides discovery and the loaded skills, e.g. those of
    /// the conversation's active Agent Skill.
    fn extra_tools(&self, _conversation: &Conversation) -> Vec<SkillDefinition> {
        Vec::new()
    }
    /// Sections appended to the system prompt for this request, e.g. the
    /// Agent Skills catalog or the instructions of the MCP servers whose
    /// tools are loaded.
    fn system_additions(&self, _conversation: &Conversation) -> Vec<String> {
        Vec::new()
    }
    /// What the model in use can take: its context window (requests are
    /// fitted into it) and whether it can call tools at all.
    fn limits(&self) -> ModelLimits {
        ModelLimits::default()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopConfig {
    /// Model requests per turn before the loop stops and asks to continue.
    pub max_steps: u32,
    /// Automatic retries of a request that failed before showing anything.
    pub max_auto_retries: u32,
    /// Longer waits than this are not retried automatically.
    pub max_auto_wait_ms: u64,
    /// The first backoff delay; it doubles with each retry.
    pub backoff_ms: u64,
    /// Error bodies are read up to this many bytes.
    pub max_error_body: usize,
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            max_steps: 10,
            max_auto_retries: 2,
            max_auto_wait_ms: 30_000,
            backoff_ms: 1_000,
            max_error_body: 64 * 1024,
        }
    }
}

/// Input to the loop.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The response to `request` began: its status and headers.
    ResponseStarted {
        request: RequestId,
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// More of the response body.
    ResponseChunk { request: RequestId, bytes: Vec<u8> },
    /// The body ended.
    ResponseEnded { request: RequestId },
    /// The request failed without a response (offline, refused, CORS).
    RequestFailed { request: RequestId, error: String },
    /// A call the loop handed out finished (through the permission layer).
    ToolFinished { result: Box<ToolResult> },
    /// The wait the loop asked for with [`Action::RetryLater`] is over.
    RetryDue { request: RequestId },
    /// The person pressed Stop.
    Cancel,
    /// After a step limit, carry on for another round of steps.
    Continue,
}

/// Output of the loop, for the app to carry out in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Send this request and report on it with `request`'s events.
    Send {
        request: RequestId,
        http: HttpRequest,
    },
    /// Stop reading this request's response.
    Abort { request: RequestId },
    /// Run this call through `Invoker::invoke` (permission, validation,
    /// activity log) and send back [`Event::ToolFinished`].
    RunTool { call: ToolCall },
    /// The person stopped the turn; abandon this call if it is still
    /// waiting (e.g. close its approval dialog).
    CancelTool { call_id: String },
    /// Send [`Event::RetryDue`] for `request` after `delay_ms`.
    RetryLater {
        request: RequestId,
        delay_ms: u64,
        error: ProviderError,
    },
    /// Text arrived for a message (for cheap incremental rendering).
    TextDelta { message_id: String, text: String },
    /// Skills were loaded into the conversation.
    SkillsLoaded { skills: Vec<SkillId> },
    /// The conversation changed: save it and re-render.
    Changed,
    /// The turn is over.
    TurnEnded { outcome: TurnOutcome },
}

#[derive(Clone, Debug, PartialEq)]
pub enum TurnOutcome {
    /// The model answered.
    Answered,
    /// The step limit was reached; [`Event::Continue`] carries on.
    StepLimit {
        steps: u32,
    },
    Cancelled,
    Failed {
        error: ProviderError,
    },
}

/// The person tried to send while a turn is running.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoopError {
    #[error("a reply is still in progress; stop it or wait")]
    Busy,
    #[error("an empty message cannot be sent")]
    EmptyMessage,
    #[error("there is nothing to continue")]
    NothingToContinue,
    /// The message has pictures and the model cannot be shown them.
    #[error("{0}")]
    CannotSee(String),
}

/// Where the loop is.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopState {
    Idle,
    /// Waiting for the response to begin.
    Requesting {
        request: RequestId,
    },
    /// Reading a successful response.
    Streaming {
        request: RequestId,
    },
    /// Reading an error response's body.
    ReadingError {
        request: RequestId,
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// Waiting for these calls' results.
    RunningTools {
        pending: Vec<String>,
    },
    /// Waiting before trying the request again.
    WaitingToRetry {
        request: RequestId,
    },
}

pub struct AgentLoop {
    conversation: Conversation,
    provider: Box<dyn Protocol>,
    config: LoopConfig,
    state: LoopState,
    next_request: u64,
    steps: u32,
    retries: u32,
    decoder: Option<Box<dyn StreamDecoder>>,
    turn: AssembledTurn,
    error_body: Vec<u8>,
    /// The tool names offered on the request in flight.
    offered: Vec<String>,
    /// The index of the assistant message being written.
    current: Option<usize>,
    stopped_by_limit: bool,
}

impl AgentLoop {
    /// Takes over a conversation (repairing one that was interrupted).
    pub fn new(
        mut conversation: Conversation,
        provider: Box<dyn Protocol>,
        config: LoopConfig,
        now_unix_ms: f64,
    ) -> Self {
        conversation.repair(now_unix_ms);
        Self {
            conversation,
            provider,
            config,
            state: LoopState::Idle,
            next_request: 0,
            steps: 0,
            retries: 0,
            decoder: None,
            turn: AssembledTurn::default(),
            error_body: Vec::new(),
            offered: Vec::new(),
            current: None,
            stopped_by_limit: false,
        }
    }

    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// Changes made outside the loop (rename, unloading a skill chip).
    /// Refused while a turn runs, so the turn's view stays consistent.
    pub fn conversation_mut(&mut self) -> Option<&mut Conversation> {
        self.is_idle().then_some(&mut self.conversation)
    }

    /// Adds a command the person ran in this conversation, also while a
    /// turn runs: it goes after everything so far, which leaves the reply
    /// being written where it is, and the next request of the turn tells
    /// the model about it. Returns the message's id.
    pub fn push_command(
        &mut self,
        line: &str,
        call: ToolCallRecord,
        from_form: bool,
        now_ms: f64,
    ) -> String {
        self.conversation
            .push_command(line, call, from_form, now_ms)
    }

    pub fn into_conversation(self) -> Conversation {
        self.conversation
    }

    pub fn state(&self) -> &LoopState {
        &self.state
    }

    pub fn is_idle(&self) -> bool {
        self.state == LoopState::Idle
    }

    /// Steps taken in the current (or last) turn.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The estimated context of the next request, for the meter.
    pub fn context_estimate(&self, env: &dyn LoopEnv) -> crate::assistant::tokens::ContextEstimate {
        let extra = env.extra_tools(&self.conversation);
        let lookup = |id: &SkillId| env.skill(id);
        let additions = env.system_additions(&self.conversation);
        let (request, _) = build_request_for(
            &self.conversation,
            &lookup,
            &extra,
            &additions,
            &env.limits(),
        );
        crate::assistant::tokens::estimate_request(&request)
    }

    pub fn set_provider(&mut self, provider: Box<dyn Protocol>) {
        self.provider = provider;
    }

    fn max_steps(&self) -> u32 {
        self.conversation
            .settings
            .max_steps
            .unwrap_or(self.config.max_steps)
            .max(1)
    }

    /// The person sends a message, with any pictures they attached: the
    /// turn starts. Pictures a model cannot see are refused here, before
    /// anything is stored or sent.
    pub fn send(
        &mut self,
        text: &str,
        images: Vec<ImagePart>,
        env: &dyn LoopEnv,
    ) -> Result<Vec<Action>, LoopError> {
        if !self.is_idle() {
            return Err(LoopError::Busy);
        }
        if text.trim().is_empty() && images.is_empty() {
            return Err(LoopError::EmptyMessage);
        }
        if !images.is_empty()
            && let Some(why) = self.provider.vision().refusal()
        {
            return Err(LoopError::CannotSee(why.to_string()));
        }
        let now = env.now_unix_ms();
        let id = self.conversation.next_message_id();
        let mut message = Message::user(id, text, now);
        message.images = images;
        self.conversation.messages.push(message);
        self.conversation.auto_title();
        self.conversation.updated_at_ms = now;
        self.steps = 0;
        // A new turn gets its own quiet retries.
        self.retries = 0;
        self.stopped_by_limit = false;
        Ok(self.start_request(env))
    }

    /// Handles everything but a new message. Events for requests or calls
    /// the loop is no longer waiting for are ignored.
    pub fn handle(&mut self, event: Event, env: &dyn LoopEnv) -> Vec<Action> {
        match event {
            Event::ResponseStarted {
                request,
                status,
                headers,
            } => self.response_started(request, status, headers),
            Event::ResponseChunk { request, bytes } => self.response_chunk(request, &bytes, env),
            Event::ResponseEnded { request } => self.response_ended(request, env),
            Event::RequestFailed { request, error } => {
                if self.in_flight() != Some(request) {
                    return Vec::new();
                }
                let e = self.provider.network_error(&error);
                self.fail(e, env)
            }
            Event::ToolFinished { result } => self.tool_finished(*result, env),
            Event::RetryDue { request } => match self.state {
                LoopState::WaitingToRetry { request: r } if r == request => {
                    self.retries += 1;
                    self.start_request(env)
                }
                _ => Vec::new(),
            },
            Event::Cancel => self.cancel(env),
            Event::Continue => self.continue_after_limit(env).unwrap_or_default(),
        }
    }

    /// After the step limit, grants another round of steps.
    pub fn continue_after_limit(&mut self, env: &dyn LoopEnv) -> Result<Vec<Action>, LoopError> {
        if !self.is_idle() {
            return Err(LoopError::Busy);
        }
        if !self.stopped_by_limit {
            return Err(LoopError::NothingToContinue);
        }
        self.stopped_by_limit = false;
        self.steps = 0;
        self.retries = 0;
        Ok(self.start_request(env))
    }

    fn in_flight(&self) -> Option<RequestId> {
        match &self.state {
            LoopState::Requesting { request }
            | LoopState::Streaming { request }
            | LoopState::ReadingError { request, .. } => Some(*request),
            LoopState::Idle | LoopState::RunningTools { .. } | LoopState::WaitingToRetry { .. } => {
                None
            }
        }
    }

    fn start_request(&mut self, env: &dyn LoopEnv) -> Vec<Action> {
        self.steps += 1;
        let now = env.now_unix_ms();
        let extra = env.extra_tools(&self.conversation);
        let lookup = |id: &SkillId| env.skill(id);
        let additions = env.system_additions(&self.conversation);
        let (request, note) = build_request_for(
            &self.conversation,
            &lookup,
            &extra,
            &additions,
            &env.limits(),
        );
        self.offered = request.tools.iter().map(|t| t.name.clone()).collect();
        let http = self.provider.chat_request(&request);
        let id = self.conversation.next_message_id();
        let mut reply = Message::assistant(id, now);
        reply.context_note = note;
        self.conversation.messages.push(reply);
        self.current = Some(self.conversation.messages.len() - 1);
        self.conversation.updated_at_ms = now;
        self.turn = AssembledTurn::default();
        self.decoder = None;
        self.error_body.clear();
        self.next_request += 1;
        let request = RequestId(self.next_request);
        self.state = LoopState::Requesting { request };
        vec![Action::Changed, Action::Send { request, http }]
    }

    fn response_started(
        &mut self,
        request: RequestId,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> Vec<Action> {
        if self.state != (LoopState::Requesting { request }) {
            return Vec::new();
        }
        if (200..300).contains(&status) {
            self.decoder = Some(self.provider.decoder());
            self.state = LoopState::Streaming { request };
        } else {
            self.state = LoopState::ReadingError {
                request,
                status,
                headers,
            };
        }
        Vec::new()
    }

    fn response_chunk(
        &mut self,
        request: RequestId,
        bytes: &[u8],
        env: &dyn LoopEnv,
    ) -> Vec<Action> {
        match &self.state {
            LoopState::Streaming { request: r } if *r == request => {
                let Some(decoder) = self.decoder.as_mut() else {
                    return Vec::new();
                };
                match decoder.feed(bytes) {
                    Ok(events) => self.apply(&events, env),
                    Err(e) => {
                        let mut actions = vec![Action::Abort { request }];
                        actions.extend(self.fail(e, env));
                        actions
                    }
                }
            }
            LoopState::ReadingError { request: r, .. } if *r == request => {
                let room = self
                    .config
                    .max_error_body
                    .saturating_sub(self.error_body.len());
                self.error_body
                    .extend_from_slice(&bytes[..bytes.len().min(room)]);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn response_ended(&mut self, request: RequestId, env: &dyn LoopEnv) -> Vec<Action> {
        match std::mem::replace(&mut self.state, LoopState::Idle) {
            LoopState::Streaming { request: r } if r == request => {
                self.state = LoopState::Streaming { request };
                let finished = match self.decoder.as_mut() {
                    Some(d) => d.finish(),
                    None => Ok(Vec::new()),
                };
                match finished {
                    Ok(events) => {
                        let mut actions = self.apply(&events, env);
                        actions.extend(self.complete(env));
                        actions
                    }
                    Err(e) => self.fail(e, env),
                }
            }
            LoopState::ReadingError {
                request: r,
                status,
                headers,
            } if r == request => {
                self.state = LoopState::ReadingError {
                    request,
                    status,
                    headers: headers.clone(),
                };
                let body = String::from_utf8_lossy(&self.error_body).into_owned();
                let e = self
                    .provider
                    .http_error(status, &headers, &body, env.now_unix_ms());
                self.fail(e, env)
            }
            other => {
                self.state = other;
                Vec::new()
            }
        }
    }

    fn current_message(&mut self) -> Option<&mut Message> {
        let i = self.current?;
        self.conversation.messages.get_mut(i)
    }

    fn apply(&mut self, events: &[StreamEvent], env: &dyn LoopEnv) -> Vec<Action> {
        let mut actions = Vec::new();
        let now = env.now_unix_ms();
        for e in events {
            self.turn.apply(e);
            let text = match e {
                StreamEvent::Text { text } => Some(text.clone()),
                StreamEvent::Reasoning { .. }
                | StreamEvent::ToolCall { .. }
                | StreamEvent::Usage { .. }
                | StreamEvent::Speed { .. }
                | StreamEvent::Finished { .. } => None,
            };
            let reasoning = self.turn.reasoning.clone();
            let speed = self.turn.speed;
            if let Some(m) = self.current_message() {
                m.reasoning = reasoning;
                m.speed = speed;
                m.updated_at_ms = now;
                if let Some(text) = text {
                    m.content.push_str(&text);
                    let message_id = m.id.clone();
                    actions.push(Action::TextDelta { message_id, text });
                }
            }
        }
        actions
    }

    /// A response failed. Retry it quietly when nothing has been shown
    /// yet and waiting makes sense; otherwise keep what arrived, mark the
    /// reply failed and end the turn.
    fn fail(&mut self, error: ProviderError, env: &dyn LoopEnv) -> Vec<Action> {
        let now = env.now_unix_ms();
        self.decoder = None;
        let shown_nothing = self.turn.text.is_empty() && self.turn.calls.is_empty();
        let delay = match error.retry {
            Retry::Never => None,
            Retry::After { ms } => Some(ms),
            Retry::Backoff => Some(
                self.config
                    .backoff_ms
                    .saturating_mul(1 << self.retries.min(16)),
            ),
        };
        if let Some(delay_ms) = delay
            && shown_nothing
            && self.retries < self.config.max_auto_retries
            && delay_ms <= self.config.max_auto_wait_ms
        {
            // The empty placeholder goes; the retry makes a new one.
            if let Some(i) = self.current.take() {
                self.conversation.messages.remove(i);
            }
            self.steps = self.steps.saturating_sub(1);
            self.next_request += 1;
            let request = RequestId(self.next_request);
            self.state = LoopState::WaitingToRetry { request };
            return vec![
                Action::Changed,
                Action::RetryLater {
                    request,
                    delay_ms,
                    error,
                },
            ];
        }
        let finish = self.turn.finish.clone();
        let usage = self.turn.usage;
        if let Some(m) = self.current_message() {
            m.status = MessageStatus::Error;
            m.error = Some(error.clone());
            m.finish = finish;
            m.usage = Some(usage).filter(|u| u.input_tokens.is_some() || u.output_tokens.is_some());
            m.updated_at_ms = now;
        }
        self.end(TurnOutcome::Failed { error }, now)
    }

    fn end(&mut self, outcome: TurnOutcome, now: f64) -> Vec<Action> {
        self.state = LoopState::Idle;
        self.current = None;
        self.decoder = None;
        self.conversation.updated_at_ms = now;
        vec![Action::Changed, Action::TurnEnded { outcome }]
    }

    /// The reply is complete: record its calls and hand out the runnable
    /// ones, or end the turn.
    fn complete(&mut self, env: &dyn LoopEnv) -> Vec<Action> {
        let now = env.now_unix_ms();
        self.decoder = None;
        self.retries = 0;
        let at_limit = self.steps >= self.max_steps();
        let turn = std::mem::take(&mut self.turn);
        let mut records = Vec::new();
        let mut runs = Vec::new();
        let mut seen_ids: Vec<String> = Vec::new();
        let mut minted: Vec<String> = Vec::new();
        for (i, call) in turn.calls.iter().enumerate() {
            // The provider's id stays unique within the reply, as both
            // protocols require when it is echoed back.
            let mut provider_id = call.id.clone();
            if seen_ids.contains(&provider_id) {
                provider_id = format!("{provider_id}_{i}");
            }
            seen_ids.push(provider_id.clone());
            let id = self.mint_call_id(env, &minted);
            minted.push(id.clone());
            let (arguments, raw, bad_args) = parse_arguments(&call.arguments);
            let mut record = ToolCallRecord {
                id: id.clone(),
                name: call.name.clone(),
                arguments: arguments.clone(),
                raw_arguments: raw,
                state: CallState::Refused,
                result: None,
                note: None,
                provider_id: Some(provider_id),
            };
            let skill = SkillId::new(call.name.clone()).ok();
            record.note = if at_limit {
                Some(format!(
                    "not run: this turn reached its limit of {} steps; the user can let it continue",
                    self.max_steps()
                ))
            } else if skill.is_none() || !self.offered.contains(&call.name) {
                Some(format!(
                    "'{}' is not a loaded skill in this conversation; call discover_skills to find and load one",
                    call.name
                ))
            } else {
                bad_args
            };
            if record.note.is_none()
                && let Some(skill_id) = skill
            {
                record.state = CallState::Waiting;
                runs.push(ToolCall {
                    id,
                    skill_id,
                    arguments,
                    conversation_id: Some(self.conversation.id.clone()),
                    origin: CallOrigin::Model,
                });
            }
            records.push(record);
        }
        let has_calls = !records.is_empty();
        if let Some(m) = self.current_message() {
            m.status = MessageStatus::Complete;
            m.tool_calls = records;
            m.finish = turn.finish.clone();
            m.usage =
                Some(turn.usage).filter(|u| u.input_tokens.is_some() || u.output_tokens.is_some());
            m.updated_at_ms = now;
        }
        if !has_calls {
            return self.end(TurnOutcome::Answered, now);
        }
        if at_limit {
            self.stopped_by_limit = true;
            let steps = self.steps;
            return self.end(TurnOutcome::StepLimit { steps }, now);
        }
        if runs.is_empty() {
            // Every call was refused; the model reads why on the next step.
            let mut actions = vec![Action::Changed];
            actions.extend(self.start_request(env));
            return actions;
        }
        self.state = LoopState::RunningTools {
            pending: runs.iter().map(|c| c.id.clone()).collect(),
        };
        let mut actions = vec![Action::Changed];
        actions.extend(runs.into_iter().map(|call| Action::RunTool { call }));
        actions
    }

    /// The id a newly accepted call gets: the environment's, made unique
    /// within the conversation (and among `minted`, this reply's calls so
    /// far) should the environment ever repeat one or give none.
    fn mint_call_id(&self, env: &dyn LoopEnv, minted: &[String]) -> String {
        let taken = |id: &str| {
            id.is_empty()
                || minted.iter().any(|m| m == id)
                || self
                    .conversation
                    .messages
                    .iter()
                    .flat_map(|m| &m.tool_calls)
                    .any(|c| c.id == id)
        };
        let mut base = env.new_call_id();
        if base.is_empty() {
            base = format!("{}-call", self.conversation.id);
        }
        if !taken(&base) {
            return base;
        }
        (1u64..)
            .map(|n| format!("{base}-{n}"))
            .find(|id| !taken(id))
            .unwrap_or(base)
    }

    fn tool_finished(&mut self, result: ToolResult, env: &dyn LoopEnv) -> Vec<Action> {
        let now = env.now_unix_ms();
        let mut actions = Vec::new();
        let LoopState::RunningTools { pending } = &mut self.state else {
            // A result after Stop: keep the truth if the call was cancelled.
            return self.late_result(result);
        };
        let Some(pos) = pending.iter().position(|id| *id == result.id) else {
            return self.late_result(result);
        };
        pending.remove(pos);
        let done = pending.is_empty();
        let Some(record) = self.find_call(&result.id, CallState::Waiting) else {
            return Vec::new();
        };
        let loads = discovered_skills(record, &result);
        record.state = CallState::Finished;
        record.result = Some(result);
        if !loads.is_empty() {
            let added = self.conversation.load_skills(loads);
            if !added.is_empty() {
                actions.push(Action::SkillsLoaded { skills: added });
            }
        }
        self.conversation.updated_at_ms = now;
        actions.push(Action::Changed);
        if done {
            if self.steps >= self.max_steps() {
                self.stopped_by_limit = true;
                let steps = self.steps;
                actions.extend(self.end(TurnOutcome::StepLimit { steps }, now));
            } else {
                actions.extend(self.start_request(env));
            }
        }
        actions
    }

    fn late_result(&mut self, result: ToolResult) -> Vec<Action> {
        let Some(record) = self.find_call(&result.id, CallState::Cancelled) else {
            return Vec::new();
        };
        if record.result.is_some() {
            return Vec::new();
        }
        let loads = discovered_skills(record, &result);
        record.result = Some(result);
        self.conversation.load_skills(loads);
        vec![Action::Changed]
    }

    fn find_call(&mut self, id: &str, state: CallState) -> Option<&mut ToolCallRecord> {
        self.conversation
            .messages
            .iter_mut()
            .rev()
            .flat_map(|m| m.tool_calls.iter_mut())
            .find(|c| c.id == id && c.state == state)
    }

    fn cancel(&mut self, env: &dyn LoopEnv) -> Vec<Action> {
        let now = env.now_unix_ms();
        let mut actions = Vec::new();
        match std::mem::replace(&mut self.state, LoopState::Idle) {
            LoopState::Idle => return Vec::new(),
            LoopState::Requesting { request }
            | LoopState::Streaming { request }
            | LoopState::ReadingError { request, .. } => {
                actions.push(Action::Abort { request });
                // Calls still being written were never run; the text stays,
                // and so do the token counts that came with it.
                let usage = self.turn.usage;
                if let Some(m) = self.current_message() {
                    m.status = MessageStatus::Cancelled;
                    m.usage = Some(usage)
                        .filter(|u| u.input_tokens.is_some() || u.output_tokens.is_some());
                    m.updated_at_ms = now;
                }
            }
            LoopState::RunningTools { pending } => {
                for id in pending {
                    if let Some(record) = self.find_call(&id, CallState::Waiting) {
                        record.state = CallState::Cancelled;
                        record.note =
                            Some("cancelled: the user stopped this before it finished".into());
                    }
                    actions.push(Action::CancelTool { call_id: id });
                }
            }
            LoopState::WaitingToRetry { .. } => {}
        }
        self.turn = AssembledTurn::default();
        actions.extend(self.end(TurnOutcome::Cancelled, now));
        actions
    }
}

/// Parses streamed arguments: `{}` for none, the object when valid, and
/// otherwise `{}` plus the raw text and a note for the model.
fn parse_arguments(raw: &str) -> (Value, Option<String>, Option<String>) {
    if raw.trim().is_empty() {
        return (Value::Object(Default::default()), None, None);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => (v, None, None),
        Ok(_) => (
            Value::Object(Default::default()),
            Some(raw.to_string()),
            Some("invalid arguments: they must be a JSON object".to_string()),
        ),
        Err(e) => (
            Value::Object(Default::default()),
            Some(raw.to_string()),
            Some(format!("invalid arguments: not valid JSON ({e})")),
        ),
    }
}

/// The skills a finished `discover_skills` call found.
fn discovered_skills(record: &ToolCallRecord, result: &ToolResult) -> Vec<SkillId> {
    if record.name != DISCOVER_SKILLS_ID || result.status != ToolStatus::Completed {
        return Vec::new();
    }
    result
        .json()
        .and_then(Discovery::from_json)
        .map(|d| d.skill_ids())
        .unwrap_or_default()
}
