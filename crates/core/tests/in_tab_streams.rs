//! The adapter between the in-tab engine's stream and core's provider
//! events, on streams recorded from a real run of the test model in the
//! app's worker (`e2e/tools/record-tab-stream.mjs`): a plain answer, and a
//! tool call of `discover_skills` (the model given a chat template that
//! knows tools).
//! Fed whole, in small pieces and cut at every byte; then through the agent
//! loop, which hands the call out like any provider's.

use std::path::PathBuf;

use hearth_core::assistant::agent::{Action, AgentLoop, Conversation, Event, LoopConfig, LoopEnv};
use hearth_core::assistant::providers::{
    AssembledTurn, ErrorKind, FinishReason, IN_TAB_URL, Protocol, Provider, ProviderConfig,
    ProviderError, StreamEvent, preset,
};
use hearth_core::skill::call::{Content, ToolResult, ToolStatus};
use hearth_core::{SkillDefinition, SkillId};
use serde_json::Value;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/streams")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn provider() -> Provider {
    Provider::new(ProviderConfig::from_preset(
        preset("in-tab").unwrap(),
        "",
        "smollm2",
    ))
}

fn decode(bytes: &[u8], size: usize) -> Result<AssembledTurn, ProviderError> {
    let mut d = provider().decoder();
    let mut events: Vec<StreamEvent> = Vec::new();
    for chunk in bytes.chunks(size.max(1)) {
        events.extend(d.feed(chunk)?);
    }
    events.extend(d.finish()?);
    Ok(AssembledTurn::from_events(&events))
}

/// What the recording says, read with serde_json alone.
fn recorded_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn a_recorded_answer_decodes_the_same_in_any_pieces() {
    let bytes = fixture("in_tab_text.jsonl");
    let whole = decode(&bytes, bytes.len()).unwrap();
    assert!(!whole.text.trim().is_empty());
    assert_eq!(whole.text, recorded_text(&bytes));
    assert!(whole.calls.is_empty());
    assert!(matches!(
        whole.finish,
        Some(FinishReason::Stop | FinishReason::Length)
    ));
    let speed = whole.speed.expect("llama.cpp's timings");
    assert!(speed.prompt_tokens > 0 && speed.output_tokens > 0);
    assert!(speed.output_per_second > 0.0);
    assert_eq!(whole.usage.output_tokens, Some(speed.output_tokens));
    for size in [1, 2, 3, 7, 64, 1000] {
        assert_eq!(decode(&bytes, size).unwrap(), whole, "pieces of {size}");
    }
}

#[test]
fn a_recorded_stream_cut_short_is_an_error_never_a_panic() {
    let bytes = fixture("in_tab_text.jsonl");
    // Any cut before the last line is complete loses the finish.
    let last_line = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap();
    for cut in 0..=last_line {
        let e = decode(&bytes[..cut], 5).unwrap_err();
        assert!(
            matches!(
                e.kind,
                ErrorKind::TruncatedStream | ErrorKind::MalformedStream
            ),
            "cut at {cut}: {e:?}"
        );
    }
}

#[test]
fn a_recorded_tool_call_assembles() {
    let bytes = fixture("in_tab_tools.jsonl");
    let turn = decode(&bytes, bytes.len()).unwrap();
    assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
    assert_eq!(turn.calls.len(), 1);
    let call = &turn.calls[0];
    assert_eq!(call.name, "discover_skills");
    assert!(!call.id.is_empty());
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    assert!(
        args["query"].as_str().is_some_and(|q| !q.trim().is_empty()),
        "{args}"
    );
    for size in [1, 5, 100] {
        assert_eq!(decode(&bytes, size).unwrap(), turn, "pieces of {size}");
    }
}

struct Env;

impl LoopEnv for Env {
    fn now_unix_ms(&self) -> f64 {
        1_000.0
    }

    fn new_call_id(&self) -> String {
        "hearth-call".into()
    }

    fn skill(&self, _id: &SkillId) -> Option<SkillDefinition> {
        None
    }
}

#[test]
fn the_loop_hands_out_a_recorded_call_like_any_providers() {
    let mut agent = AgentLoop::new(
        Conversation::new("c1", 0.0),
        Box::new(provider()),
        LoopConfig::default(),
        0.0,
    );
    let actions = agent
        .send("What is 17 times 23?", Vec::new(), &Env)
        .unwrap();
    let (request, http) = actions
        .iter()
        .find_map(|a| match a {
            Action::Send { request, http } => Some((*request, http.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(http.url, IN_TAB_URL);
    let body: Value = serde_json::from_slice(http.body.as_deref().unwrap()).unwrap();
    assert_eq!(body["tools"][0]["function"]["name"], "discover_skills");
    agent.handle(
        Event::ResponseStarted {
            request,
            status: 200,
            headers: Vec::new(),
        },
        &Env,
    );
    let mut actions = agent.handle(
        Event::ResponseChunk {
            request,
            bytes: fixture("in_tab_tools.jsonl"),
        },
        &Env,
    );
    actions.extend(agent.handle(Event::ResponseEnded { request }, &Env));
    let call = actions
        .iter()
        .find_map(|a| match a {
            Action::RunTool { call } => Some(call.clone()),
            _ => None,
        })
        .expect("the call is handed out to run");
    assert_eq!(call.skill_id.as_str(), "discover_skills");
    // Its result goes back to the model in the next request, as a tool message.
    let mut result = ToolResult::for_call(&call, ToolStatus::Completed);
    result.content = vec![Content::Text {
        text: "Loaded Calculator".into(),
    }];
    let next = agent.handle(
        Event::ToolFinished {
            result: Box::new(result),
        },
        &Env,
    );
    let http = next
        .iter()
        .find_map(|a| match a {
            Action::Send { http, .. } => Some(http.clone()),
            _ => None,
        })
        .unwrap();
    let body: Value = serde_json::from_slice(http.body.as_deref().unwrap()).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let tool = messages.last().unwrap();
    assert_eq!(tool["role"], "tool");
    // The call runs under Hearth's id; the model gets its own id back.
    assert_eq!(call.id, "hearth-call");
    let record = &agent.conversation().messages[1].tool_calls[0];
    assert_eq!(record.id, call.id);
    let model_id = record.provider_id.clone().expect("the model's id is kept");
    assert_ne!(model_id, call.id);
    assert_eq!(tool["tool_call_id"], model_id.as_str());
    let asked = &messages[messages.len() - 2]["tool_calls"][0]["id"];
    assert_eq!(asked, model_id.as_str());
}
