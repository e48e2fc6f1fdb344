//! The stream parsers against recorded streams in each provider's real
//! format (tests/fixtures/streams), fed whole, in small chunks, and cut
//! at every byte offset; plus request building and model lists.

use std::path::PathBuf;

use hearth_core::assistant::providers::{
    AssembledCall, AssembledTurn, ChatRequest, ErrorKind, FinishReason, HttpMethod, Protocol,
    Provider, ProviderConfig, ProviderError, ProviderKind, Retry, StreamEvent, ToolSpec, Usage,
    WireMessage, WireToolCall, WireToolResult, preset,
};
use serde_json::{Value, json};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/streams")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn openai() -> Provider {
    Provider::new(ProviderConfig::from_preset(
        preset("openai").unwrap(),
        "sk-test",
        "gpt-4o",
    ))
}

fn ollama() -> Provider {
    Provider::new(ProviderConfig::from_preset(
        preset("ollama").unwrap(),
        "",
        "qwen3:8b",
    ))
}

fn anthropic() -> Provider {
    Provider::new(ProviderConfig::from_preset(
        preset("anthropic").unwrap(),
        "sk-ant-test",
        "claude-sonnet-4-5",
    ))
}

/// Decodes `bytes` in chunks of `size`, then finishes.
fn decode(provider: &Provider, bytes: &[u8], size: usize) -> Result<AssembledTurn, ProviderError> {
    let mut decoder = provider.decoder();
    let mut events: Vec<StreamEvent> = Vec::new();
    for chunk in bytes.chunks(size.max(1)) {
        events.extend(decoder.feed(chunk)?);
    }
    events.extend(decoder.finish()?);
    Ok(AssembledTurn::from_events(&events))
}

fn call(id: &str, name: &str, arguments: &str) -> AssembledCall {
    AssembledCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: Some(input),
        output_tokens: Some(output),
    }
}

fn complete_cases() -> Vec<(&'static str, Provider, AssembledTurn)> {
    vec![
        (
            "openai_text.sse",
            openai(),
            AssembledTurn {
                text: "15% of 847 is **127.05** — ünïcødé ✓.".into(),
                reasoning: String::new(),
                calls: vec![],
                finish: Some(FinishReason::Stop),
                usage: usage(212, 14),
                speed: None,
            },
        ),
        (
            "openai_parallel_tools.sse",
            openai(),
            AssembledTurn {
                text: String::new(),
                reasoning: String::new(),
                calls: vec![
                    call(
                        "call_F9mQ2",
                        "discover_skills",
                        r#"{"query": "math calculation"}"#,
                    ),
                    call(
                        "call_Zk81p",
                        "discover_skills",
                        r#"{"query": "take notes", "category": "productivity"}"#,
                    ),
                ],
                finish: Some(FinishReason::ToolCalls),
                usage: usage(180, 48),
                speed: None,
            },
        ),
        (
            "ollama_parallel_same_index.sse",
            ollama(),
            AssembledTurn {
                text: String::new(),
                reasoning: "The user wants two things.".into(),
                calls: vec![
                    call(
                        "call_kx2vbq1m",
                        "calculator",
                        r#"{"expression":"15% of 847"}"#,
                    ),
                    call(
                        "call_9fw3d0aa",
                        "calculator",
                        r#"{"expression":"5 miles to km"}"#,
                    ),
                ],
                finish: Some(FinishReason::Stop),
                usage: usage(301, 40),
                speed: None,
            },
        ),
        (
            "openrouter_comments.sse",
            openai(),
            AssembledTurn {
                text: "Hello there.".into(),
                reasoning: String::new(),
                calls: vec![],
                finish: Some(FinishReason::Stop),
                usage: usage(9, 3),
                speed: None,
            },
        ),
        (
            "llamacpp_reasoning_noid.sse",
            ollama(),
            AssembledTurn {
                text: String::new(),
                reasoning: "Need the calculator.".into(),
                calls: vec![call("call_0", "calculator", r#"{"expression":"2^10"}"#)],
                finish: Some(FinishReason::ToolCalls),
                usage: usage(120, 31),
                speed: None,
            },
        ),
        (
            "anthropic_text.sse",
            anthropic(),
            AssembledTurn {
                text: "15% of 847 is 127.05 — ✓".into(),
                reasoning: String::new(),
                calls: vec![],
                finish: Some(FinishReason::Stop),
                usage: usage(25, 15),
                speed: None,
            },
        ),
        (
            "anthropic_tool_use.sse",
            anthropic(),
            AssembledTurn {
                text: "I'll find a skill for that.".into(),
                reasoning: String::new(),
                calls: vec![
                    call(
                        "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                        "discover_skills",
                        r#"{"query": "math calculation"}"#,
                    ),
                    call(
                        "toolu_01VjzyLdt4xTkQy3WwdRAPTq",
                        "calculator",
                        r#"{"expression": "847 * 0.15"}"#,
                    ),
                ],
                finish: Some(FinishReason::ToolCalls),
                usage: usage(472, 89),
                speed: None,
            },
        ),
        (
            "anthropic_thinking.sse",
            anthropic(),
            AssembledTurn {
                text: "127.05".into(),
                reasoning: "847 × 0.15 = 127.05".into(),
                calls: vec![],
                finish: Some(FinishReason::Stop),
                usage: usage(1040, 30),
                speed: None,
            },
        ),
    ]
}

#[test]
fn recorded_streams_decode_the_same_in_any_chunking() {
    for (name, provider, want) in complete_cases() {
        let bytes = fixture(name);
        for size in [1, 2, 3, 7, 64, bytes.len()] {
            assert_eq!(
                decode(&provider, &bytes, size).as_ref(),
                Ok(&want),
                "{name} in chunks of {size}"
            );
        }
    }
}

/// Cut anywhere, a stream either fails as truncated or, once the reply's
/// end was delivered, yields the whole reply; it never panics, never
/// claims to be malformed, and what it showed is a prefix of the reply.
#[test]
fn streams_cut_at_every_byte_offset() {
    for (name, provider, want) in complete_cases() {
        let bytes = fixture(name);
        let (mut accepted, mut truncated) = (0, 0);
        for cut in 0..=bytes.len() {
            let mut decoder = provider.decoder();
            let mut events = decoder
                .feed(&bytes[..cut])
                .unwrap_or_else(|e| panic!("{name} @{cut}: {e}"));
            let partial = AssembledTurn::from_events(&events);
            assert!(want.text.starts_with(&partial.text), "{name} @{cut}");
            match decoder.finish() {
                Ok(rest) => {
                    events.extend(rest);
                    let got = AssembledTurn::from_events(&events);
                    assert_eq!(
                        (&got.text, &got.calls, &got.finish),
                        (&want.text, &want.calls, &want.finish),
                        "{name} accepted at {cut}"
                    );
                    accepted += 1;
                }
                Err(e) => {
                    assert_eq!(e.kind, ErrorKind::TruncatedStream, "{name} @{cut}: {e}");
                    truncated += 1;
                }
            }
        }
        assert!(
            accepted > 0 && truncated > accepted,
            "{name}: {accepted} accepted, {truncated} truncated"
        );
    }
}

#[test]
fn errors_inside_a_stream_end_it_with_their_kind() {
    let cases = [
        (
            "openai_error_midstream.sse",
            openai(),
            ErrorKind::Server,
            "Let me",
        ),
        (
            "openrouter_error_midstream.sse",
            openai(),
            ErrorKind::Server,
            "Partial",
        ),
        (
            "anthropic_error.sse",
            anthropic(),
            ErrorKind::Overloaded,
            "Working",
        ),
    ];
    for (name, provider, kind, shown) in cases {
        let bytes = fixture(name);
        let mut decoder = provider.decoder();
        let mut events = Vec::new();
        let mut failure = None;
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            match decoder.feed(line) {
                Ok(e) => events.extend(e),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let failure = failure.unwrap_or_else(|| panic!("{name} should fail"));
        assert_eq!(
            (failure.kind, failure.retry),
            (kind, Retry::Backoff),
            "{name}"
        );
        assert_eq!(AssembledTurn::from_events(&events).text, shown, "{name}");
    }
}

#[test]
fn malformed_streams_are_reported_as_such() {
    let openai_cases: &[&[u8]] = &[
        b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\n",
        b"data: [1, 2]\n\n",
        b"data: {\"choices\": 5}\n\n",
    ];
    for body in openai_cases {
        let e = decode(&openai(), body, 4).unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::MalformedStream,
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    let anthropic_cases: &[&[u8]] = &[
        b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
        b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
        b"event: message_start\ndata: not json\n\n",
    ];
    for body in anthropic_cases {
        let e = decode(&anthropic(), body, 5).unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::MalformedStream,
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    // An HTML error page with a 200 is neither SSE nor JSON.
    let e = decode(&openai(), b"<html><body>Bad gateway</body></html>", 8).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TruncatedStream);
}

#[test]
fn servers_that_ignore_streaming_still_work() {
    let openai_body = br#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"1+1\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}"#;
    assert_eq!(
        decode(&openai(), openai_body, 10),
        Ok(AssembledTurn {
            text: String::new(),
            reasoning: String::new(),
            calls: vec![call("call_1", "calculator", r#"{"expression":"1+1"}"#)],
            finish: Some(FinishReason::ToolCalls),
            usage: usage(5, 6),
            speed: None,
        })
    );
    let anthropic_body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}"#;
    assert_eq!(decode(&anthropic(), anthropic_body, 10).unwrap().text, "Hi");
    let error_body =
        br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    assert_eq!(
        decode(&anthropic(), error_body, 10).unwrap_err().kind,
        ErrorKind::Overloaded
    );
}

fn sample_request() -> ChatRequest {
    ChatRequest {
        system: "You are Hearth.".into(),
        messages: vec![
            WireMessage::user("What's 15% of 847?"),
            WireMessage::Assistant {
                text: String::new(),
                tool_calls: vec![WireToolCall {
                    id: "call:1".into(),
                    name: "calculator".into(),
                    arguments: json!({"expression": "15% of 847"}),
                }],
            },
            WireMessage::ToolResults {
                results: vec![WireToolResult {
                    call_id: "call:1".into(),
                    name: "calculator".into(),
                    content: "127.05".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
            },
            WireMessage::user("Thanks"),
        ],
        tools: vec![ToolSpec {
            name: "calculator".into(),
            description: "Math".into(),
            input_schema: json!({"type": "object", "properties": {"expression": {"type": "string"}}}),
        }],
    }
}

fn body(provider: &Provider) -> Value {
    let r = provider.chat_request(&sample_request());
    serde_json::from_slice(r.body.as_deref().unwrap()).unwrap()
}

#[test]
fn openai_request_shape() {
    let r = openai().chat_request(&sample_request());
    assert_eq!(
        (r.method, r.url.as_str()),
        (
            HttpMethod::Post,
            "https://api.openai.com/v1/chat/completions"
        )
    );
    assert_eq!(r.header_value("authorization"), Some("Bearer sk-test"));
    assert_eq!(r.header_value("accept"), Some("text/event-stream"));
    assert_eq!(
        body(&openai()),
        json!({
            "model": "gpt-4o",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [
                {"role": "system", "content": "You are Hearth."},
                {"role": "user", "content": "What's 15% of 847?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call:1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\":\"15% of 847\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call:1", "content": "127.05"},
                {"role": "user", "content": "Thanks"}
            ],
            "tools": [{"type": "function", "function": {
                "name": "calculator", "description": "Math",
                "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}
            }}]
        })
    );
    // Local servers without a key get no Authorization header at all.
    let local = ollama().chat_request(&sample_request());
    assert_eq!(local.url, "http://localhost:11434/v1/chat/completions");
    assert_eq!(local.header_value("authorization"), None);
}

#[test]
fn anthropic_request_shape() {
    let r = anthropic().chat_request(&sample_request());
    assert_eq!(r.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        (
            r.header_value("x-api-key"),
            r.header_value("anthropic-version"),
            r.header_value("anthropic-dangerous-direct-browser-access"),
            r.header_value("authorization"),
        ),
        (Some("sk-ant-test"), Some("2023-06-01"), Some("true"), None)
    );
    assert_eq!(
        body(&anthropic()),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "stream": true,
            "system": "You are Hearth.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "What's 15% of 847?"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_1", "name": "calculator", "input": {"expression": "15% of 847"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "127.05"},
                    {"type": "text", "text": "Thanks"}
                ]}
            ],
            "tools": [{"name": "calculator", "description": "Math",
                "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}}}}]
        })
    );
    let with_v1 = Provider::new(ProviderConfig::custom(
        ProviderKind::Anthropic,
        "http://127.0.0.1:9999/v1/",
        "m",
    ));
    assert_eq!(
        with_v1.chat_request(&ChatRequest::default()).url,
        "http://127.0.0.1:9999/v1/messages"
    );
}

#[test]
fn model_lists() {
    let openai_list = r#"{"object":"list","data":[{"id":"gpt-4o","object":"model","created":1715367049,"owned_by":"system"},{"id":"o3-mini","object":"model","created":1,"owned_by":"system"}]}"#;
    let ollama_list = r#"{"object":"list","data":[{"id":"llama3.2:latest","object":"model","created":1730000000,"owned_by":"library"}]}"#;
    let llamacpp_list = r#"{"models":[{"name":"gemma.gguf","model":"gemma.gguf","type":"model"}],"object":"list","data":[{"id":"gemma.gguf","object":"model","created":1,"owned_by":"llamacpp","meta":{"n_ctx_train":8192}}]}"#;
    let openrouter_list = r#"{"data":[{"id":"openai/gpt-4o","name":"OpenAI: GPT-4o","context_length":128000,"pricing":{}}]}"#;
    let ids = |p: &Provider, body: &str| -> Vec<String> {
        p.parse_models(body)
            .unwrap()
            .models
            .into_iter()
            .map(|m| m.id)
            .collect()
    };
    assert_eq!(ids(&openai(), openai_list), ["gpt-4o", "o3-mini"]);
    assert_eq!(ids(&ollama(), ollama_list), ["llama3.2:latest"]);
    assert_eq!(ids(&ollama(), llamacpp_list), ["gemma.gguf"]);
    let or = openai().parse_models(openrouter_list).unwrap();
    assert_eq!(
        (or.models[0].name.as_deref(), or.models[0].context_length),
        (Some("OpenAI: GPT-4o"), Some(128_000))
    );

    let anthropic_page = r#"{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5-20250929","last_id":"claude-sonnet-4-5-20250929"}"#;
    let list = anthropic().parse_models(anthropic_page).unwrap();
    assert_eq!(list.models[0].name.as_deref(), Some("Claude Sonnet 4.5"));
    assert_eq!(
        list.next_page.as_deref(),
        Some("claude-sonnet-4-5-20250929")
    );
    let next = anthropic().models_request(list.next_page.as_deref());
    assert_eq!(
        next.url,
        "https://api.anthropic.com/v1/models?limit=1000&after_id=claude-sonnet-4-5-20250929"
    );
    assert_eq!(next.header_value("x-api-key"), Some("sk-ant-test"));
    assert_eq!(
        openai().models_request(None).url,
        "https://api.openai.com/v1/models"
    );

    assert_eq!(
        openai().parse_models("<html>").unwrap_err().kind,
        ErrorKind::MalformedStream
    );
}
