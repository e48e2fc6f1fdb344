//! Pictures in a conversation: the agent loop refuses them before anything
//! is sent to a model that cannot see, and the request bodies carry them
//! as each API documents (Chat Completions' `image_url` parts with a
//! `data:` URL; Messages' base64 `image` blocks before the text). A model
//! that cannot see is told of earlier pictures in words, so switching to
//! it never breaks a conversation. A picture a tool returned goes back to a
//! model that sees, as the next request's image part.

use hearth_core::assistant::agent::{
    Action, AgentLoop, Conversation, LoopConfig, LoopEnv, LoopError, Message, MessageStatus,
    ToolCallRecord,
};
use hearth_core::assistant::providers::{
    ChatRequest, ImagePart, Protocol, Provider, ProviderConfig, Vision, WireMessage, preset,
};
use hearth_core::assistant::tokens::estimate_request;
use hearth_core::skill::call::{CallOrigin, Content, ToolCall, ToolResult, ToolStatus};
use hearth_core::{SkillDefinition, SkillId};
use serde_json::{Value, json};

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

/// A 1×1 PNG, as the tab encodes one.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn picture(alt: &str) -> ImagePart {
    ImagePart {
        media_type: "image/png".into(),
        data: PIXEL.into(),
        alt: alt.into(),
        width: 1200,
        height: 900,
    }
}

fn config(preset_id: &str, model: &str) -> ProviderConfig {
    ProviderConfig::from_preset(preset(preset_id).unwrap(), "sk-test", model)
}

fn sent_body(
    config: ProviderConfig,
    text: &str,
    images: Vec<ImagePart>,
) -> Result<Value, LoopError> {
    let mut agent = AgentLoop::new(
        Conversation::new("c1", 0.0),
        Box::new(Provider::new(config)),
        LoopConfig::default(),
        0.0,
    );
    let actions = agent.send(text, images, &Env)?;
    let http = actions
        .iter()
        .find_map(|a| match a {
            Action::Send { http, .. } => Some(http.clone()),
            _ => None,
        })
        .expect("the request is sent");
    Ok(serde_json::from_slice(http.body.as_deref().unwrap()).unwrap())
}

fn last_user(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

#[test]
fn chat_completions_get_a_text_part_and_an_image_url_per_picture() {
    let body = sent_body(
        config("openai", "gpt-4o-mini"),
        "What is on this receipt?",
        vec![picture("receipt.png"), picture("back.png")],
    )
    .unwrap();
    assert_eq!(
        last_user(&body)["content"],
        json!([
            {"type": "text", "text": "What is on this receipt?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}},
        ])
    );
    // Nothing of the picture's name or size goes with it.
    let text = body.to_string();
    assert!(
        !text.contains("receipt.png") && !text.contains("1200"),
        "{text}"
    );
}

#[test]
fn messages_get_base64_image_blocks_before_the_text() {
    let body = sent_body(
        config("anthropic", "claude-sonnet-4-5"),
        "Describe it",
        vec![picture("cat.png")],
    )
    .unwrap();
    assert_eq!(
        last_user(&body)["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
            {"type": "text", "text": "Describe it"},
        ])
    );
}

#[test]
fn a_picture_alone_is_a_message_titled_by_its_name() {
    let mut agent = AgentLoop::new(
        Conversation::new("c1", 0.0),
        Box::new(Provider::new(config("openai", "gpt-4o"))),
        LoopConfig::default(),
        0.0,
    );
    agent
        .send("", vec![picture("whiteboard.jpg")], &Env)
        .unwrap();
    assert_eq!(agent.conversation().title, "whiteboard.jpg");
    let body = sent_body(config("openai", "gpt-4o"), "  ", vec![picture("a.png")]).unwrap();
    assert_eq!(
        last_user(&body)["content"],
        json!([{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}}])
    );
    assert_eq!(
        sent_body(config("openai", "gpt-4o"), "  ", Vec::new()).unwrap_err(),
        LoopError::EmptyMessage
    );
}

#[test]
fn a_model_that_cannot_see_refuses_before_sending() {
    // The model in this tab reads text only.
    let tab = ProviderConfig::from_preset(preset("in-tab").unwrap(), "", "smollm2");
    let err = sent_body(tab, "What is this?", vec![picture("a.png")]).unwrap_err();
    let LoopError::CannotSee(why) = err else {
        panic!("{err:?}")
    };
    assert!(why.contains("reads text only"), "{why}");
    // A model Hearth cannot judge by name says how to tell it.
    let err = sent_body(
        config("ollama", "llama3.1:8b"),
        "hi",
        vec![picture("a.png")],
    )
    .unwrap_err();
    let LoopError::CannotSee(why) = err else {
        panic!("{err:?}")
    };
    assert!(
        why.contains("llama3.1:8b") && why.contains("Sees pictures"),
        "{why}"
    );
    // The person's word outranks the name, both ways.
    let mut told = config("ollama", "llama3.1:8b");
    told.vision = Some(true);
    assert!(sent_body(told, "hi", vec![picture("a.png")]).is_ok());
    let mut told = config("openai", "gpt-4o");
    told.vision = Some(false);
    assert!(matches!(
        sent_body(told, "hi", vec![picture("a.png")]),
        Err(LoopError::CannotSee(_))
    ));
    // Text alone goes to any model.
    assert!(sent_body(config("ollama", "llama3.1:8b"), "hi", Vec::new()).is_ok());
}

#[test]
fn a_model_that_cannot_see_is_told_of_earlier_pictures_in_words() {
    let request = ChatRequest {
        system: String::new(),
        messages: vec![
            WireMessage::User {
                text: "What is this?".into(),
                images: vec![picture("cat.png")],
            },
            WireMessage::Assistant {
                text: "A cat.".into(),
                tool_calls: Vec::new(),
            },
            WireMessage::user("Thanks"),
        ],
        tools: Vec::new(),
    };
    for blind in [
        config("ollama", "llama3.1:8b"),
        ProviderConfig::from_preset(preset("in-tab").unwrap(), "", "smollm2"),
    ] {
        let http = Provider::new(blind).chat_request(&request);
        let body: Value = serde_json::from_slice(http.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            "What is this?\n[a picture the person attached: cat.png]"
        );
        assert!(!body.to_string().contains(PIXEL));
    }
    let mut anthropic = config("anthropic", "claude-haiku-4-5");
    anthropic.vision = Some(false);
    let http = Provider::new(anthropic).chat_request(&request);
    let body: Value = serde_json::from_slice(http.body.as_deref().unwrap()).unwrap();
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "text", "text": "What is this?\n[a picture the person attached: cat.png]"}])
    );
}

#[test]
fn pictures_are_kept_with_the_message_and_counted_in_the_context() {
    let mut agent = AgentLoop::new(
        Conversation::new("c1", 0.0),
        Box::new(Provider::new(config("openai", "gpt-4o"))),
        LoopConfig::default(),
        0.0,
    );
    agent.send("look", vec![picture("a.png")], &Env).unwrap();
    let conversation = agent.conversation().clone();
    assert_eq!(conversation.messages[0].images, vec![picture("a.png")]);
    assert_eq!(conversation.title, "look");
    // Stored and read back whole, as a backup holds it.
    let json = serde_json::to_string(&conversation).unwrap();
    let back: Conversation = serde_json::from_str(&json).unwrap();
    assert_eq!(back, conversation);
    // A message without pictures stores no field for them.
    let plain = serde_json::to_value(Conversation::new("c2", 0.0)).unwrap();
    assert!(!plain.to_string().contains("images"));
    // "Edit and resend" gets the pictures back with the text.
    let mut c = back;
    let (text, images) = c.retract_last_user_message(2.0).unwrap();
    assert_eq!((text.as_str(), images.len()), ("look", 1));
    // A 1200×900 picture costs about 1,440 tokens.
    let with = ChatRequest {
        system: String::new(),
        messages: vec![WireMessage::User {
            text: "look".into(),
            images: vec![picture("a.png")],
        }],
        tools: Vec::new(),
    };
    let without = ChatRequest {
        messages: vec![WireMessage::user("look")],
        ..with.clone()
    };
    assert_eq!(
        estimate_request(&with).total() - estimate_request(&without).total(),
        1440
    );
}

#[test]
fn vision_is_judged_for_each_kind_of_provider() {
    assert_eq!(
        config("anthropic", "claude-opus-4-1").vision(),
        Vision::Sees
    );
    assert_eq!(
        config("openrouter", "google/gemma-3-27b-it").vision(),
        Vision::Sees
    );
    assert!(matches!(
        config("lmstudio", "qwen2.5-7b-instruct").vision(),
        Vision::Unknown(_)
    ));
    let tab = ProviderConfig::from_preset(preset("in-tab").unwrap(), "", "smollm2");
    assert!(matches!(tab.vision(), Vision::Blind(_)));
    // Even when the person says otherwise: its engine has no image input.
    let mut tab = tab;
    tab.vision = Some(true);
    assert!(matches!(tab.vision(), Vision::Blind(_)));
}

/// A conversation where a tool returned a picture, then the person asks
/// about it.
fn after_a_tool_picture() -> Conversation {
    let call = ToolCall {
        id: "hearth-1".into(),
        skill_id: SkillId::new("everything__get-tiny-image").unwrap(),
        arguments: json!({}),
        conversation_id: Some("c1".into()),
        origin: CallOrigin::Model,
    };
    let mut result = ToolResult::for_call(&call, ToolStatus::Completed);
    result.content = vec![
        Content::Text {
            text: "Here is a tiny image".into(),
        },
        Content::Image {
            mime_type: "image/png".into(),
            data: PIXEL.into(),
        },
    ];
    let mut conversation = Conversation::new("c1", 0.0);
    conversation
        .messages
        .push(Message::user("m1".into(), "Show me a tiny image", 1.0));
    let mut reply = Message::assistant("m2".into(), 2.0);
    reply.status = MessageStatus::Complete;
    reply.tool_calls = vec![ToolCallRecord::ran(&call, result)];
    conversation.messages.push(reply);
    conversation
}

fn body_after_tool_picture(config: ProviderConfig) -> Value {
    let mut agent = AgentLoop::new(
        after_a_tool_picture(),
        Box::new(Provider::new(config)),
        LoopConfig::default(),
        0.0,
    );
    let actions = agent.send("What colour is it?", Vec::new(), &Env).unwrap();
    let http = actions
        .iter()
        .find_map(|a| match a {
            Action::Send { http, .. } => Some(http.clone()),
            _ => None,
        })
        .unwrap();
    serde_json::from_slice(http.body.as_deref().unwrap()).unwrap()
}

#[test]
fn a_tools_picture_goes_back_to_a_model_that_sees_it() {
    // Chat Completions: the tool message is text; the picture follows it
    // as a user message of its own, before the next question.
    let body = body_after_tool_picture(config("openai", "gpt-4o"));
    let messages = body["messages"].as_array().unwrap();
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(
        messages[tool]["content"]
            .as_str()
            .unwrap()
            .contains("Here is a tiny image")
    );
    assert_eq!(
        messages[tool + 1]["content"][1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PIXEL}")}})
    );
    assert_eq!(messages[tool + 2]["content"], "What colour is it?");

    // Messages: the picture is in the tool_result, after its words.
    let body = body_after_tool_picture(config("anthropic", "claude-sonnet-4-5"));
    let result = body["messages"][2]["content"][0].clone();
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][0]["type"], "text");
    assert_eq!(
        result["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}})
    );

    // A model that cannot see gets the words alone.
    let body = body_after_tool_picture(config("ollama", "llama3.1:8b"));
    assert!(!body.to_string().contains(PIXEL), "{body}");
    assert!(body.to_string().contains("[image image/png]"), "{body}");
}
