//! The two protocols as the real services speak them: reading requests,
//! writing SSE frames (chunk by chunk, arguments split across events),
//! error bodies and model lists.

use serde_json::{Value, json};

use crate::script::{Failure, Reply, Seen};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    OpenAi,
    Anthropic,
}

impl Flavor {
    pub fn name(self) -> &'static str {
        match self {
            Flavor::OpenAi => "openai",
            Flavor::Anthropic => "anthropic",
        }
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Reads a Chat Completions request.
pub fn seen_openai(body: &Value) -> Seen {
    let mut seen = Seen {
        provider: "openai",
        model: body["model"].as_str().unwrap_or("").to_string(),
        ..Seen::default()
    };
    let mut names: Vec<(String, String)> = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        match m["role"].as_str() {
            Some("user") => {
                seen.last_user = text_of(&m["content"]);
                seen.results_since_user.clear();
                seen.ends_with_result = false;
            }
            Some("assistant") => {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    names.push((
                        c["id"].as_str().unwrap_or("").to_string(),
                        c["function"]["name"].as_str().unwrap_or("").to_string(),
                    ));
                }
                seen.ends_with_result = false;
            }
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap_or("");
                let name = names
                    .iter()
                    .find(|(i, _)| i == id)
                    .map(|(_, n)| n.clone())
                    .unwrap_or_default();
                seen.all_results.push(text_of(&m["content"]));
                seen.results_since_user.push((name, text_of(&m["content"])));
                seen.ends_with_result = true;
            }
            _ => {}
        }
    }
    seen.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    seen
}

/// Reads a Messages request.
pub fn seen_anthropic(body: &Value) -> Seen {
    let mut seen = Seen {
        provider: "anthropic",
        model: body["model"].as_str().unwrap_or("").to_string(),
        ..Seen::default()
    };
    let mut names: Vec<(String, String)> = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => Vec::new(),
        };
        match m["role"].as_str() {
            Some("assistant") => {
                for b in &blocks {
                    if b["type"] == "tool_use" {
                        names.push((
                            b["id"].as_str().unwrap_or("").to_string(),
                            b["name"].as_str().unwrap_or("").to_string(),
                        ));
                    }
                }
                seen.ends_with_result = false;
            }
            Some("user") => {
                for b in &blocks {
                    match b["type"].as_str() {
                        Some("tool_result") => {
                            let id = b["tool_use_id"].as_str().unwrap_or("");
                            let name = names
                                .iter()
                                .find(|(i, _)| i == id)
                                .map(|(_, n)| n.clone())
                                .unwrap_or_default();
                            seen.all_results.push(text_of(&b["content"]));
                            seen.results_since_user.push((name, text_of(&b["content"])));
                            seen.ends_with_result = true;
                        }
                        Some("text") => {
                            seen.last_user = b["text"].as_str().unwrap_or("").to_string();
                            seen.results_since_user.clear();
                            seen.ends_with_result = false;
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    seen.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    seen
}

/// Splits `s` into pieces of at most `n` characters.
pub fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

/// The reply with each tool call's `{{word_after:TEXT}}` argument filled
/// in from the conversation's tool results (left as it is when none has
/// `TEXT`).
pub fn fill_arguments(mut reply: Reply, seen: &Seen) -> Reply {
    fn fill(v: &mut Value, seen: &Seen) {
        match v {
            Value::String(s) => {
                let Some(text) = s
                    .strip_prefix("{{word_after:")
                    .and_then(|r| r.strip_suffix("}}"))
                else {
                    return;
                };
                let found = seen.all_results.iter().rev().find_map(|r| {
                    let (_, after) = r.split_once(text)?;
                    let word: String = after
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                        .collect();
                    (!word.is_empty()).then_some(word)
                });
                if let Some(word) = found {
                    *s = word;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| fill(i, seen)),
            Value::Object(map) => map.values_mut().for_each(|i| fill(i, seen)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    for call in &mut reply.tool_calls {
        fill(&mut call.arguments, seen);
    }
    reply
}

/// The reply's text with `{{tool_result}}` filled in.
pub fn reply_text(reply: &Reply, seen: &Seen) -> Option<String> {
    let text = reply.text.as_ref()?;
    if !text.contains("{{tool_result}}") {
        return Some(text.clone());
    }
    let result = seen
        .results_since_user
        .last()
        .map(|(_, c)| c.lines().next().unwrap_or("").to_string())
        .unwrap_or_default();
    Some(text.replace("{{tool_result}}", &result))
}

fn data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn event(name: &str, v: &Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

/// A stream: its frames, then the frames that close it properly.
pub struct Frames {
    pub body: Vec<String>,
    pub end: Vec<String>,
}

pub struct RenderInput<'a> {
    pub reply: &'a Reply,
    pub seen: &'a Seen,
    /// Numbers ids (`chatcmpl-fake-7`, `call_fake_7_0`).
    pub serial: u64,
    pub created: u64,
    pub prompt_tokens: u64,
    pub include_usage: bool,
}

fn call_ids(input: &RenderInput<'_>, prefix: &str) -> Vec<String> {
    input
        .reply
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            c.id.clone()
                .unwrap_or_else(|| format!("{prefix}{}_{i}", input.serial))
        })
        .collect()
}

fn completion_tokens(text: &str, input: &RenderInput<'_>) -> u64 {
    let args: String = input
        .reply
        .tool_calls
        .iter()
        .map(|c| c.arguments.to_string())
        .collect();
    (hearth_core::assistant::tokens::estimate_tokens(text)
        + hearth_core::assistant::tokens::estimate_tokens(&args)) as u64
        + 1
}

pub fn render_openai(input: &RenderInput<'_>) -> Frames {
    let n = input.reply.chunk_chars.unwrap_or(8);
    let id = format!("chatcmpl-fake-{}", input.serial);
    let model = &input.seen.model;
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": input.created,
            "model": model, "system_fingerprint": "fp_hearth_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        })
    };
    let mut body = vec![data(&chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    ))];
    let text = reply_text(input.reply, input.seen).unwrap_or_default();
    for p in pieces(&text, n).iter().filter(|p| !p.is_empty()) {
        body.push(data(&chunk(json!({"content": p}), Value::Null)));
    }
    let ids = call_ids(input, "call_fake_");
    for (i, (call, cid)) in input.reply.tool_calls.iter().zip(&ids).enumerate() {
        body.push(data(&chunk(
            json!({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        )));
        for p in pieces(&call.arguments.to_string(), n) {
            body.push(data(&chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                Value::Null,
            )));
        }
    }
    let finish = if input.reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    body.push(data(&chunk(json!({}), json!(finish))));
    let mut end = Vec::new();
    if input.include_usage {
        let completion = completion_tokens(&text, input);
        end.push(data(&json!({
            "id": id, "object": "chat.completion.chunk", "created": input.created,
            "model": model, "system_fingerprint": "fp_hearth_fake", "choices": [],
            "usage": {"prompt_tokens": input.prompt_tokens, "completion_tokens": completion,
                      "total_tokens": input.prompt_tokens + completion}
        })));
    }
    end.push("data: [DONE]\n\n".to_string());
    Frames { body, end }
}

/// The same reply as one non-streamed completion.
pub fn openai_completion(input: &RenderInput<'_>) -> Value {
    let text = reply_text(input.reply, input.seen).unwrap_or_default();
    let ids = call_ids(input, "call_fake_");
    let calls: Vec<Value> = input
        .reply
        .tool_calls
        .iter()
        .zip(&ids)
        .map(|(c, id)| json!({"id": id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }, "refusal": null});
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    let completion = completion_tokens(&text, input);
    json!({
        "id": format!("chatcmpl-fake-{}", input.serial), "object": "chat.completion",
        "created": input.created, "model": input.seen.model,
        "choices": [{"index": 0, "message": message, "logprobs": null,
                     "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": input.prompt_tokens, "completion_tokens": completion,
                  "total_tokens": input.prompt_tokens + completion}
    })
}

pub fn render_anthropic(input: &RenderInput<'_>) -> Frames {
    let n = input.reply.chunk_chars.unwrap_or(8);
    let text = reply_text(input.reply, input.seen).unwrap_or_default();
    let mut body = vec![
        event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{}", input.serial), "type": "message", "role": "assistant",
                "model": input.seen.model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input.prompt_tokens, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 0, "output_tokens": 1}
            }}),
        ),
        event("ping", &json!({"type": "ping"})),
    ];
    let mut index = 0;
    if !text.is_empty() {
        body.push(event("content_block_start", &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
        for p in pieces(&text, n) {
            body.push(event("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})));
        }
        body.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let ids = call_ids(input, "toolu_fake_");
    for (call, cid) in input.reply.tool_calls.iter().zip(&ids) {
        body.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": cid, "name": call.name, "input": {}}}),
        ));
        body.push(event("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}})));
        for p in pieces(&call.arguments.to_string(), n) {
            body.push(event("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}})));
        }
        body.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if input.reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    body.push(event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": completion_tokens(&text, input)}}),
    ));
    Frames {
        body,
        end: vec![event("message_stop", &json!({"type": "message_stop"}))],
    }
}

/// A failure as the provider answers it: status and JSON body.
pub fn error_response(
    flavor: Flavor,
    failure: Failure,
    model: &str,
    prompt_tokens: u64,
) -> (u16, Value) {
    match flavor {
        Flavor::OpenAi => {
            let (status, message, kind, code) = match failure {
                Failure::Auth => (
                    401,
                    "Incorrect API key provided.".to_string(),
                    "invalid_request_error",
                    json!("invalid_api_key"),
                ),
                Failure::ModelNotFound => (
                    404,
                    format!("The model `{model}` does not exist or you do not have access to it."),
                    "invalid_request_error",
                    json!("model_not_found"),
                ),
                Failure::RateLimit => (
                    429,
                    format!(
                        "Rate limit reached for {model} on requests per min (RPM): Limit 3, Used 3, Requested 1."
                    ),
                    "requests",
                    json!("rate_limit_exceeded"),
                ),
                Failure::Server => (
                    500,
                    "The server had an error while processing your request. Sorry about that!"
                        .to_string(),
                    "server_error",
                    Value::Null,
                ),
                Failure::Overloaded => (
                    503,
                    "The engine is currently overloaded, please try again later.".to_string(),
                    "server_error",
                    Value::Null,
                ),
                Failure::ContextTooLong => (
                    400,
                    format!(
                        "This model's maximum context length is 8192 tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.",
                        prompt_tokens.max(8193)
                    ),
                    "invalid_request_error",
                    json!("context_length_exceeded"),
                ),
            };
            (
                status,
                json!({"error": {"message": message, "type": kind, "param": null, "code": code}}),
            )
        }
        Flavor::Anthropic => {
            let (status, kind, message) = match failure {
                Failure::Auth => (401, "authentication_error", "invalid x-api-key".to_string()),
                Failure::ModelNotFound => (404, "not_found_error", format!("model: {model}")),
                Failure::RateLimit => (
                    429,
                    "rate_limit_error",
                    "Number of request tokens has exceeded your per-minute rate limit".to_string(),
                ),
                Failure::Server => (500, "api_error", "Internal server error".to_string()),
                Failure::Overloaded => (529, "overloaded_error", "Overloaded".to_string()),
                Failure::ContextTooLong => (
                    400,
                    "invalid_request_error",
                    format!(
                        "prompt is too long: {} tokens > 200000 maximum",
                        prompt_tokens.max(200_001)
                    ),
                ),
            };
            (
                status,
                json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}),
            )
        }
    }
}

/// The frame a provider sends when a stream fails after its 200.
pub fn midstream_error(flavor: Flavor, failure: Failure, model: &str) -> String {
    let (_, body) = error_response(flavor, failure, model, 0);
    match flavor {
        Flavor::OpenAi => data(&body),
        Flavor::Anthropic => event("error", &json!({"type": "error", "error": body["error"]})),
    }
}

pub fn models_body(flavor: Flavor, models: &[String]) -> Value {
    match flavor {
        Flavor::OpenAi => json!({
            "object": "list",
            "data": models.iter().map(|m| json!({"id": m, "object": "model", "created": 1_730_000_000, "owned_by": "hearth-fake"})).collect::<Vec<_>>()
        }),
        Flavor::Anthropic => json!({
            "data": models.iter().map(|m| json!({"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"})).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_can_name_what_an_earlier_result_made() {
        let body = json!({"messages": [
            {"role": "user", "content": "make a page"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "create_artifact"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Created the page (id 7f3a-9b); shown."},
            {"role": "user", "content": "make it blue"}
        ]});
        let seen = seen_openai(&body);
        let reply = Reply {
            tool_calls: vec![crate::ScriptedCall {
                id: None,
                name: "update_artifact".into(),
                arguments: json!({"id": "{{word_after:(id }}", "other": "{{word_after:nowhere}}"}),
            }],
            ..Reply::default()
        };
        let filled = fill_arguments(reply, &seen);
        assert_eq!(
            filled.tool_calls[0].arguments,
            json!({"id": "7f3a-9b", "other": "{{word_after:nowhere}}"})
        );
    }

    #[test]
    fn requests_are_read_in_both_protocols() {
        let openai = json!({"model": "m", "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "What's 15% of 847?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "discover_skills", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "found calculator"}
        ], "tools": [{"type": "function", "function": {"name": "discover_skills"}}]});
        let anthropic = json!({"model": "m", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What's 15% of 847?"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "discover_skills", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "found calculator"}]}
        ], "tools": [{"name": "discover_skills"}]});
        for (seen, provider) in [
            (seen_openai(&openai), "openai"),
            (seen_anthropic(&anthropic), "anthropic"),
        ] {
            assert_eq!(
                seen,
                Seen {
                    provider,
                    model: "m".into(),
                    last_user: "What's 15% of 847?".into(),
                    results_since_user: vec![("discover_skills".into(), "found calculator".into())],
                    all_results: vec!["found calculator".into()],
                    ends_with_result: true,
                    tools: vec!["discover_skills".into()],
                }
            );
        }
    }

    #[test]
    fn pieces_respect_characters() {
        assert_eq!(pieces("añb✓c", 2), ["añ", "b✓", "c"]);
        assert_eq!(pieces("", 3), Vec::<String>::new());
    }
}
