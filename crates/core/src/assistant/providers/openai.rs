//! OpenAI-compatible Chat Completions with tools, streamed over SSE.
//!
//! Each SSE `data:` line is a `chat.completion.chunk`; text arrives in
//! `choices[0].delta.content`, tool calls in `choices[0].delta.tool_calls[]`
//! keyed by `index` with `function.arguments` split across chunks, the
//! stop in `finish_reason`, token counts in a final chunk with empty
//! `choices` and a `usage` object, and the end as `data: [DONE]`. Errors
//! after the 200 arrive as a chunk holding an `error` object.
//!
//! Local servers bend the format in known ways, all handled here: Ollama
//! gives every parallel call `index` 0 and tells them apart only by id;
//! some servers omit ids, send `arguments` as an object, or skip `[DONE]`;
//! a few ignore `stream: true` and answer with one JSON completion.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::error::{self, ErrorBody};
use super::{
    ChatRequest, FinishReason, HttpMethod, HttpRequest, ImagePart, ModelInfo, ModelList,
    ProviderConfig, ProviderError, StreamDecoder, StreamEvent, Usage, WireMessage, images, join,
};
use hearth_base::sse::{SseEvent, SseParser};

pub(super) fn chat_body(config: &ProviderConfig, request: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        match m {
            WireMessage::User { text, images } => messages
                .push(json!({"role": "user", "content": user_content(config, text, images)})),
            WireMessage::Assistant { text, tool_calls } => {
                let mut msg = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()}
                            })
                        })
                        .collect();
                }
                messages.push(msg);
            }
            WireMessage::ToolResults { results } => {
                for r in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": r.call_id,
                        "content": r.content
                    }));
                }
                // A tool message holds text only, so the pictures the
                // results hold follow them as a user message of their own.
                let pictures: Vec<&ImagePart> = results.iter().flat_map(|r| &r.images).collect();
                if !pictures.is_empty() && config.vision().sees() {
                    let mut parts = vec![json!({
                        "type": "text",
                        "text": "The pictures the tool results above hold, in order:"
                    })];
                    for image in pictures {
                        parts.push(
                            json!({"type": "image_url", "image_url": {"url": image.data_url()}}),
                        );
                    }
                    messages.push(json!({"role": "user", "content": parts}));
                }
            }
        }
    }
    let mut body = json!({
        "model": config.model,
        "messages": messages,
        "stream": true,
    });
    if config.include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema
                    }
                })
            })
            .collect();
    }
    if let Some(max) = config.max_tokens {
        body["max_tokens"] = json!(max);
    }
    if let Some(t) = config.temperature {
        body["temperature"] = json!(t);
    }
    body
}

/// A user message's content: its text, or, with pictures a model can see,
/// a text part and an `image_url` part per picture, each a `data:` URL, as
/// Chat Completions takes them. A model that cannot see is told of each
/// picture in words, so an earlier message with pictures never breaks a
/// request to it.
fn user_content(config: &ProviderConfig, text: &str, images: &[ImagePart]) -> Value {
    if images.is_empty() {
        return json!(text);
    }
    if !config.vision().sees() {
        return json!(images::described(text, images));
    }
    let mut parts = Vec::new();
    if !text.trim().is_empty() {
        parts.push(json!({"type": "text", "text": text}));
    }
    for image in images {
        parts.push(json!({"type": "image_url", "image_url": {"url": image.data_url()}}));
    }
    Value::Array(parts)
}

fn headers(config: &ProviderConfig, accept: &str) -> Vec<(String, String)> {
    let mut h = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), accept.to_string()),
    ];
    if !config.api_key.is_empty() {
        h.push((
            "authorization".to_string(),
            format!("Bearer {}", config.api_key),
        ));
    }
    h
}

pub(super) fn chat_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    HttpRequest {
        method: HttpMethod::Post,
        url: join(&config.base_url, "/chat/completions"),
        headers: headers(config, "text/event-stream"),
        body: Some(chat_body(config, request).to_string().into_bytes()),
    }
}

pub(super) fn models_request(config: &ProviderConfig) -> HttpRequest {
    let mut h = headers(config, "application/json");
    h.retain(|(k, _)| k != "content-type");
    HttpRequest {
        method: HttpMethod::Get,
        url: join(&config.base_url, "/models"),
        headers: h,
        body: None,
    }
}

/// `{"object": "list", "data": [{"id": …}]}`, as OpenAI, OpenRouter,
/// Ollama, LM Studio and llama.cpp answer `GET /models`.
pub(super) fn parse_models(
    cx: &error::ErrorContext<'_>,
    body: &str,
) -> Result<ModelList, ProviderError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| error::malformed(cx, format!("the model list is not JSON: {e}")))?;
    let list = v
        .get("data")
        .or_else(|| v.get("models"))
        .and_then(Value::as_array)
        .ok_or_else(|| error::malformed(cx, "the model list has no 'data' array"))?;
    let models = list
        .iter()
        .filter_map(|m| {
            let id = m
                .get("id")
                .or_else(|| m.get("model"))
                .or_else(|| m.get("name"))
                .and_then(Value::as_str)?;
            Some(ModelInfo {
                id: id.to_string(),
                name: m
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| *n != id)
                    .map(str::to_string),
                context_length: m.get("context_length").and_then(Value::as_u64),
            })
        })
        .collect();
    Ok(ModelList {
        models,
        next_page: None,
    })
}

#[derive(Debug, Default)]
struct Slot {
    id: Option<String>,
    has_name: bool,
    arguments: String,
}

/// The Chat Completions stream decoder.
#[derive(Debug)]
pub struct OpenAiDecoder {
    config: ProviderConfig,
    sse: SseParser,
    done: bool,
    finished: bool,
    saw_event: bool,
    /// The start of a body that had no SSE events, in case it is plain JSON.
    raw: Vec<u8>,
    slots: Vec<Slot>,
    /// The provider's `index` → our slot for the call now open there.
    by_index: HashMap<u64, usize>,
}

const RAW_KEEP: usize = 1 << 20;

impl OpenAiDecoder {
    pub fn new(config: &ProviderConfig) -> Self {
        Self {
            config: config.clone(),
            sse: SseParser::new(),
            done: false,
            finished: false,
            saw_event: false,
            raw: Vec::new(),
            slots: Vec::new(),
            by_index: HashMap::new(),
        }
    }

    fn malformed(&self, what: impl Into<String>) -> ProviderError {
        error::malformed(&self.config.error_context(), what)
    }

    /// Which call a tool-call delta belongs to. A fresh id at an index
    /// whose call is already complete starts a new call (Ollama numbers
    /// every parallel call 0); a fresh id on a call still being written is
    /// the same call (some servers repeat ids that change).
    fn slot_for(&mut self, raw: u64, id: Option<&str>) -> usize {
        if let Some(&slot) = self.by_index.get(&raw) {
            let current = &self.slots[slot];
            let different = match (id, current.id.as_deref()) {
                (Some(new), Some(old)) => new != old,
                _ => false,
            };
            let complete = current.has_name
                && serde_json::from_str::<Value>(&current.arguments).is_ok_and(|v| v.is_object());
            if !(different && complete) {
                return slot;
            }
        }
        let slot = self.slots.len();
        self.slots.push(Slot {
            id: id.map(str::to_string),
            ..Slot::default()
        });
        self.by_index.insert(raw, slot);
        slot
    }

    fn chunk(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if self.done {
            // Nothing counts after [DONE].
            return Ok(());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| self.malformed(format!("a chunk was not valid JSON ({e})")))?;
        self.value(&v, out)
    }

    /// One chunk that arrived some other way than SSE (the in-tab
    /// model's worker sends the same chunks as JSON lines).
    pub(super) fn chunk_value(
        &mut self,
        v: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        self.saw_event = true;
        self.value(v, out)
    }

    /// Whether a chunk carried a `finish_reason`.
    pub(super) fn has_finished(&self) -> bool {
        self.finished
    }

    fn value(&mut self, v: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let is_error_object = v.get("object").and_then(Value::as_str) == Some("error");
        if v.get("error").is_some_and(|e| !e.is_null()) || is_error_object {
            return Err(error::classify_stream_error(
                &self.config.error_context(),
                &ErrorBody::from_value(v),
            ));
        }
        if !v.is_object() {
            return Err(self.malformed("a chunk was not a JSON object"));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
                    output_tokens: u.get("completion_tokens").and_then(Value::as_u64),
                },
            });
        }
        let Some(choices) = v.get("choices") else {
            return Ok(());
        };
        let choices = choices
            .as_array()
            .ok_or_else(|| self.malformed("'choices' is not an array"))?;
        // Hearth never asks for n > 1; the first choice is the reply.
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        // A non-streamed completion carries `message` instead of `delta`.
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(delta) = delta {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta.get(key).and_then(Value::as_str)
                    && !text.is_empty()
                {
                    out.push(StreamEvent::Reasoning {
                        text: text.to_string(),
                    });
                    break;
                }
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push(StreamEvent::Text {
                    text: text.to_string(),
                });
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (pos, tc) in calls.iter().enumerate() {
                    let raw = tc
                        .get("index")
                        .and_then(Value::as_u64)
                        .unwrap_or(pos as u64);
                    let id = tc
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty());
                    let function = tc.get("function");
                    let name = function
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty());
                    let arguments = match function.and_then(|f| f.get("arguments")) {
                        Some(Value::String(s)) => s.clone(),
                        Some(v @ Value::Object(_)) => v.to_string(),
                        _ => String::new(),
                    };
                    let slot = self.slot_for(raw, id);
                    let s = &mut self.slots[slot];
                    if s.id.is_none() {
                        s.id = id.map(str::to_string);
                    }
                    s.has_name |= name.is_some();
                    s.arguments.push_str(&arguments);
                    out.push(StreamEvent::ToolCall {
                        index: slot,
                        id: id.map(str::to_string),
                        name: name.map(str::to_string),
                        arguments,
                    });
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finished = true;
            out.push(StreamEvent::Finished {
                reason: match reason {
                    "stop" | "end_turn" => FinishReason::Stop,
                    "tool_calls" | "function_call" => FinishReason::ToolCalls,
                    "length" => FinishReason::Length,
                    "content_filter" => FinishReason::ContentFilter,
                    other => FinishReason::Other(other.to_string()),
                },
            });
        }
        Ok(())
    }
}

impl StreamDecoder for OpenAiDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
        if !self.saw_event && self.raw.len() < RAW_KEEP {
            self.raw.extend_from_slice(chunk);
        }
        let events = self
            .sse
            .feed(chunk)
            .map_err(|e| self.malformed(e.to_string()))?;
        let mut out = Vec::new();
        for ev in &events {
            self.saw_event = true;
            self.chunk(ev, &mut out)?;
        }
        if self.saw_event {
            self.raw = Vec::new();
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        self.sse.finish();
        let mut out = Vec::new();
        if !self.saw_event {
            // Not SSE at all: an error object, or a server that ignored
            // `stream: true` and sent the whole completion.
            let raw = std::mem::take(&mut self.raw);
            if let Ok(v) = serde_json::from_slice::<Value>(&raw) {
                self.value(&v, &mut out)?;
                if self.finished {
                    return Ok(out);
                }
            }
        }
        if self.done || self.finished {
            Ok(out)
        } else {
            Err(error::truncated(&self.config.error_context()))
        }
    }
}
