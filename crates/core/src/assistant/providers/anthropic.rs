//! Anthropic Messages with tools, streamed over SSE.
//!
//! A stream is `message_start` (usage.input_tokens), then per content block
//! `content_block_start` / `content_block_delta`… / `content_block_stop`
//! (`text_delta` for text, `input_json_delta` with `partial_json` for a
//! `tool_use` block's input), then `message_delta` (stop_reason, cumulative
//! usage.output_tokens) and `message_stop`. `ping` may come anywhere; an
//! `error` event can replace the rest after the 200. Unknown event and
//! delta types are ignored, as the API's versioning policy asks.
//!
//! The browser calls the API directly, which Anthropic allows only with
//! the `anthropic-dangerous-direct-browser-access: true` header.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::error::{self, ErrorBody};
use super::{
    ChatRequest, DEFAULT_MAX_TOKENS, FinishReason, HttpMethod, HttpRequest, ModelInfo, ModelList,
    ProviderConfig, ProviderError, StreamDecoder, StreamEvent, Usage, WireMessage, images, join,
};
use hearth_base::sse::{SseEvent, SseParser};

pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Tool-use ids must match `^[a-zA-Z0-9_-]+$`; ids from another provider
/// (or our own) are made to fit, the same way for the call and its result.
fn tool_id(id: &str) -> String {
    let cleaned: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "toolu_unnamed".to_string()
    } else {
        cleaned
    }
}

fn url(config: &ProviderConfig, path: &str) -> String {
    let base = config.base_url.trim_end_matches('/');
    if base.ends_with("/v1") {
        join(base, path)
    } else {
        join(base, &format!("/v1{path}"))
    }
}

fn headers(config: &ProviderConfig) -> Vec<(String, String)> {
    let mut h = vec![
        (
            "anthropic-version".to_string(),
            ANTHROPIC_VERSION.to_string(),
        ),
        (
            "anthropic-dangerous-direct-browser-access".to_string(),
            "true".to_string(),
        ),
    ];
    if !config.api_key.is_empty() {
        h.push(("x-api-key".to_string(), config.api_key.clone()));
    }
    h
}

pub(super) fn chat_body(config: &ProviderConfig, request: &ChatRequest) -> Value {
    // Anthropic wants alternating turns with non-empty content, tool
    // results in a user turn right after the assistant turn that asked,
    // and tool_result blocks before any text in that turn.
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match turns.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    };
    for m in &request.messages {
        match m {
            WireMessage::User { text, images } => {
                // Pictures go before the text that asks about them, as
                // Anthropic advises; a model that cannot see is told of
                // each in words.
                let mut blocks = Vec::new();
                let text = if config.vision().sees() {
                    for image in images {
                        blocks.push(json!({
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": image.media_type,
                                "data": image.data
                            }
                        }));
                    }
                    text.clone()
                } else {
                    images::described(text, images)
                };
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                push("user", blocks);
            }
            WireMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = if c.arguments.is_object() {
                        c.arguments.clone()
                    } else {
                        json!({})
                    };
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": tool_id(&c.id),
                        "name": c.name,
                        "input": input
                    }));
                }
                push("assistant", blocks);
            }
            WireMessage::ToolResults { results } => {
                let blocks = results
                    .iter()
                    .map(|r| {
                        let content = if r.content.is_empty() {
                            "(no output)".to_string()
                        } else {
                            r.content.clone()
                        };
                        // A result's pictures go in it, after its words,
                        // to a model that sees them.
                        let content = if !r.images.is_empty() && config.vision().sees() {
                            let mut blocks = vec![json!({"type": "text", "text": content})];
                            blocks.extend(r.images.iter().map(|image| {
                                json!({
                                    "type": "image",
                                    "source": {
                                        "type": "base64",
                                        "media_type": image.media_type,
                                        "data": image.data
                                    }
                                })
                            }));
                            Value::Array(blocks)
                        } else {
                            json!(content)
                        };
                        let mut b = json!({
                            "type": "tool_result",
                            "tool_use_id": tool_id(&r.call_id),
                            "content": content
                        });
                        if r.is_error {
                            b["is_error"] = json!(true);
                        }
                        b
                    })
                    .collect();
                push("user", blocks);
            }
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({
        "model": config.model,
        "max_tokens": config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema
                })
            })
            .collect();
    }
    if let Some(t) = config.temperature {
        body["temperature"] = json!(t);
    }
    body
}

pub(super) fn chat_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let mut h = headers(config);
    h.push(("content-type".to_string(), "application/json".to_string()));
    h.push(("accept".to_string(), "text/event-stream".to_string()));
    HttpRequest {
        method: HttpMethod::Post,
        url: url(config, "/messages"),
        headers: h,
        body: Some(chat_body(config, request).to_string().into_bytes()),
    }
}

pub(super) fn models_request(config: &ProviderConfig, page: Option<&str>) -> HttpRequest {
    let mut u = url(config, "/models?limit=1000");
    if let Some(after) = page {
        let safe: String = after
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        u.push_str("&after_id=");
        u.push_str(&safe);
    }
    HttpRequest {
        method: HttpMethod::Get,
        url: u,
        headers: headers(config),
        body: None,
    }
}

/// `{"data": [{"type": "model", "id", "display_name", "created_at"}],
/// "has_more", "first_id", "last_id"}`.
pub(super) fn parse_models(
    cx: &error::ErrorContext<'_>,
    body: &str,
) -> Result<ModelList, ProviderError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| error::malformed(cx, format!("the model list is not JSON: {e}")))?;
    let list = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| error::malformed(cx, "the model list has no 'data' array"))?;
    let models = list
        .iter()
        .filter_map(|m| {
            Some(ModelInfo {
                id: m.get("id").and_then(Value::as_str)?.to_string(),
                name: m
                    .get("display_name")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                context_length: None,
            })
        })
        .collect();
    let more = v.get("has_more").and_then(Value::as_bool) == Some(true);
    Ok(ModelList {
        models,
        next_page: more
            .then(|| v.get("last_id").and_then(Value::as_str).map(str::to_string))
            .flatten(),
    })
}

#[derive(Debug, Clone)]
enum Block {
    Text,
    Thinking,
    /// A tool_use block: our call index, its input from the start event
    /// (used only if no deltas follow), and whether deltas came.
    ToolUse {
        call: usize,
        initial: Option<String>,
        streamed: bool,
    },
    Other,
}

/// The Messages stream decoder.
#[derive(Debug)]
pub struct AnthropicDecoder {
    config: ProviderConfig,
    sse: SseParser,
    started: bool,
    stopped: bool,
    stop_reason: bool,
    saw_event: bool,
    raw: Vec<u8>,
    blocks: HashMap<u64, Block>,
    calls: usize,
}

const RAW_KEEP: usize = 1 << 20;

impl AnthropicDecoder {
    pub fn new(config: &ProviderConfig) -> Self {
        Self {
            config: config.clone(),
            sse: SseParser::new(),
            started: false,
            stopped: false,
            stop_reason: false,
            saw_event: false,
            raw: Vec::new(),
            blocks: HashMap::new(),
            calls: 0,
        }
    }

    fn malformed(&self, what: impl Into<String>) -> ProviderError {
        error::malformed(&self.config.error_context(), what)
    }

    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if ev.data.trim().is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
            self.malformed(format!(
                "a '{}' event was not valid JSON ({e})",
                ev.event_type()
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event_type())
            .to_string();
        if self.stopped {
            return Ok(());
        }
        let index = || v.get("index").and_then(Value::as_u64);
        match kind.as_str() {
            "message_start" => {
                self.started = true;
                if let Some(u) = v.get("message").and_then(|m| m.get("usage")) {
                    let input = [
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    ]
                    .iter()
                    .filter_map(|k| u.get(*k).and_then(Value::as_u64))
                    .sum::<u64>();
                    out.push(StreamEvent::Usage {
                        usage: Usage {
                            input_tokens: Some(input),
                            output_tokens: None,
                        },
                    });
                }
            }
            "content_block_start" => {
                let i =
                    index().ok_or_else(|| self.malformed("a block started without an index"))?;
                let block = v
                    .get("content_block")
                    .ok_or_else(|| self.malformed("a block started without content"))?;
                let b = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str)
                            && !t.is_empty()
                        {
                            out.push(StreamEvent::Text {
                                text: t.to_string(),
                            });
                        }
                        Block::Text
                    }
                    Some("thinking") => Block::Thinking,
                    Some("tool_use") => {
                        let call = self.calls;
                        self.calls += 1;
                        out.push(StreamEvent::ToolCall {
                            index: call,
                            id: block.get("id").and_then(Value::as_str).map(str::to_string),
                            name: block
                                .get("name")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                            arguments: String::new(),
                        });
                        let initial = block
                            .get("input")
                            .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                            .map(Value::to_string);
                        Block::ToolUse {
                            call,
                            initial,
                            streamed: false,
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(i, b);
            }
            "content_block_delta" => {
                let i = index().ok_or_else(|| self.malformed("a delta without an index"))?;
                let block = self.blocks.get_mut(&i).ok_or_else(|| {
                    error::malformed(
                        &self.config.error_context(),
                        format!("a delta for block {i}, which never started"),
                    )
                })?;
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                let str_of = |k: &str| {
                    delta
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                match (delta.get("type").and_then(Value::as_str), block) {
                    (Some("text_delta"), _) => {
                        let text = str_of("text");
                        if !text.is_empty() {
                            out.push(StreamEvent::Text { text });
                        }
                    }
                    (Some("thinking_delta"), _) => {
                        let text = str_of("thinking");
                        if !text.is_empty() {
                            out.push(StreamEvent::Reasoning { text });
                        }
                    }
                    (Some("input_json_delta"), Block::ToolUse { call, streamed, .. }) => {
                        *streamed = true;
                        out.push(StreamEvent::ToolCall {
                            index: *call,
                            id: None,
                            name: None,
                            arguments: str_of("partial_json"),
                        });
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(Block::ToolUse {
                    call,
                    initial: Some(input),
                    streamed: false,
                }) = index().and_then(|i| self.blocks.get(&i)).cloned()
                {
                    out.push(StreamEvent::ToolCall {
                        index: call,
                        id: None,
                        name: None,
                        arguments: input,
                    });
                }
            }
            "message_delta" => {
                if let Some(reason) = v
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = true;
                    out.push(StreamEvent::Finished {
                        reason: match reason {
                            "end_turn" | "stop_sequence" => FinishReason::Stop,
                            "tool_use" => FinishReason::ToolCalls,
                            "max_tokens" => FinishReason::Length,
                            "refusal" => FinishReason::ContentFilter,
                            other => FinishReason::Other(other.to_string()),
                        },
                    });
                }
                if let Some(n) = v
                    .get("usage")
                    .and_then(|u| u.get("output_tokens"))
                    .and_then(Value::as_u64)
                {
                    out.push(StreamEvent::Usage {
                        usage: Usage {
                            input_tokens: None,
                            output_tokens: Some(n),
                        },
                    });
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                return Err(error::classify_stream_error(
                    &self.config.error_context(),
                    &ErrorBody::from_value(&v),
                ));
            }
            // ping, and event types added after this was written.
            _ => {}
        }
        if !self.started && kind != "ping" {
            return Err(
                self.malformed(format!("the stream began with '{kind}', not message_start"))
            );
        }
        Ok(())
    }

    /// A whole Message (a server that ignored `stream: true`).
    fn whole_message(
        &mut self,
        v: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if v.get("type").and_then(Value::as_str) == Some("error") || v.get("error").is_some() {
            return Err(error::classify_stream_error(
                &self.config.error_context(),
                &ErrorBody::from_value(v),
            ));
        }
        let Some(content) = v.get("content").and_then(Value::as_array) else {
            return Ok(());
        };
        for block in content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => out.push(StreamEvent::Text {
                    text: block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                }),
                Some("tool_use") => {
                    let call = self.calls;
                    self.calls += 1;
                    out.push(StreamEvent::ToolCall {
                        index: call,
                        id: block.get("id").and_then(Value::as_str).map(str::to_string),
                        name: block
                            .get("name")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        arguments: block.get("input").map(Value::to_string).unwrap_or_default(),
                    });
                }
                _ => {}
            }
        }
        if let Some(reason) = v.get("stop_reason").and_then(Value::as_str) {
            self.stop_reason = true;
            out.push(StreamEvent::Finished {
                reason: match reason {
                    "end_turn" | "stop_sequence" => FinishReason::Stop,
                    "tool_use" => FinishReason::ToolCalls,
                    "max_tokens" => FinishReason::Length,
                    other => FinishReason::Other(other.to_string()),
                },
            });
        }
        Ok(())
    }
}

impl StreamDecoder for AnthropicDecoder {
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
            self.event(ev, &mut out)?;
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
            let raw = std::mem::take(&mut self.raw);
            if let Ok(v) = serde_json::from_slice::<Value>(&raw) {
                self.whole_message(&v, &mut out)?;
            }
        }
        if self.stopped || self.stop_reason {
            Ok(out)
        } else {
            Err(error::truncated(&self.config.error_context()))
        }
    }
}
