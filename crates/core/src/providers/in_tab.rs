//! "In this tab": a GGUF model run by llama.cpp compiled to WebAssembly
//! (wllama) in a Worker of the app, with no server, key or network.
//!
//! Sans I/O like the other protocols. The request is the OpenAI-compatible
//! chat body that the worker hands to wllama's `createChatCompletion`
//! (wllama runs llama-server's own request handling, so tools, tool
//! choice and sampling options mean what they mean there). Its URL is
//! [`IN_TAB_URL`], which the app routes to the worker instead of `fetch`.
//!
//! The response is the worker's stream: one JSON object per line, each
//! either a `chat.completion.chunk` exactly as wllama yields it (text in
//! `choices[0].delta.content`, tool calls in `delta.tool_calls[]`, the stop
//! in `finish_reason`, and — because the request asks for
//! `timings_per_token` — llama.cpp's `timings` on every chunk), or an
//! `{"error": {"type", "message"}}` object when loading or running failed.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::error::{ErrorBody, ErrorContext, ErrorKind, ProviderError, Retry};
use super::openai::{OpenAiDecoder, chat_body};
use super::{
    ChatRequest, HttpRequest, Method, ModelLimits, ProviderConfig, Speed, StreamDecoder,
    StreamEvent, Usage,
};
use crate::display;
use crate::gguf::GgufInfo;

/// The address the app sends in-tab requests to; never fetched.
pub const IN_TAB_URL: &str = "hearth-tab:chat/completions";

/// The longest answer, in tokens, when the person has not chosen.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The context Hearth runs a model with when the person has not chosen:
/// the model's own length, capped so the KV cache stays a reasonable size
/// in a browser tab.
pub const DEFAULT_CONTEXT_CAP: u64 = 4096;

/// The context to load a model with: the person's choice, else the model's
/// trained length capped at [`DEFAULT_CONTEXT_CAP`], never more than the
/// model was trained for, and at least 512 tokens.
pub fn context_to_load(trained: Option<u64>, chosen: Option<u64>) -> u64 {
    let trained = trained.filter(|n| *n > 0);
    let want = chosen.unwrap_or_else(|| trained.unwrap_or(2048).min(DEFAULT_CONTEXT_CAP));
    trained.map_or(want, |t| want.min(t)).max(512)
}

/// A model file stored in this browser (the origin private file system),
/// as the model list shows it. Kept beside the file as JSON, written only
/// once the whole file is in place.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredModel {
    /// Names the stored file (`models/<id>.gguf`); letters, digits and dashes.
    pub id: String,
    /// The name the file had when it was added.
    pub file_name: String,
    pub size: u64,
    pub added_at_ms: f64,
    /// Where it was downloaded from, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
    pub info: GgufInfo,
}

impl StoredModel {
    /// The model's own name, else the file's without `.gguf`.
    pub fn name(&self) -> String {
        self.info
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| {
                let f = self.file_name.as_str();
                f.strip_suffix(".gguf").unwrap_or(f).to_string()
            })
    }

    /// Size, quantisation, trained context and architecture, for the list.
    pub fn facts(&self) -> Vec<String> {
        let mut out = vec![display::bytes(self.size as f64)];
        out.push(
            self.info
                .quantisation()
                .map(str::to_string)
                .unwrap_or_else(|| "unknown quantisation".into()),
        );
        out.push(match self.info.context_length {
            Some(n) => format!("{} token context", group(n)),
            None => "context length not stated".into(),
        });
        out.push(
            self.info
                .architecture
                .clone()
                .unwrap_or_else(|| "unknown architecture".into()),
        );
        out
    }

    /// Whether its chat template lets it call tools.
    pub fn can_call_tools(&self) -> bool {
        self.info.template_tools
    }

    /// The context it runs with under `config`.
    pub fn context(&self, config: &ProviderConfig) -> u64 {
        context_to_load(self.info.context_length, config.context_length)
    }

    /// What the agent loop may send it.
    pub fn limits(&self, config: &ProviderConfig) -> ModelLimits {
        ModelLimits {
            context_window: Some(self.context(config)),
            max_output: Some(u64::from(config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS))),
            tools: self.can_call_tools(),
        }
    }
}

/// `n` with thousands separated: "8,192".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Why a model cannot be stored now.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "Not enough storage: the model needs {} and this browser lets Hearth use {} more. Delete a model or other data, or pick a smaller file.",
    display::bytes(*need as f64),
    display::bytes(*free)
)]
pub struct NoSpace {
    pub need: u64,
    pub free: f64,
}

/// Whether a file of `need` bytes fits in what the browser allows
/// (`navigator.storage.estimate()`), keeping 64 MB spare for everything
/// else Hearth stores.
pub fn space_check(need: u64, usage: f64, quota: f64) -> Result<(), NoSpace> {
    const SPARE: f64 = 64.0 * 1024.0 * 1024.0;
    let free = (quota - usage - SPARE).max(0.0);
    if (need as f64) <= free {
        Ok(())
    } else {
        Err(NoSpace { need, free })
    }
}

/// The request body the worker passes to wllama.
pub(super) fn chat_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let mut body = chat_body(config, request);
    body["max_tokens"] = json!(config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
    // Speed on every chunk, for the tokens-per-second figure while it answers.
    body["timings_per_token"] = json!(true);
    if let Some(map) = body.as_object_mut() {
        // Usage comes from the timings; the option is llama-server's HTTP one.
        map.remove("stream_options");
    }
    HttpRequest {
        method: Method::Post,
        url: IN_TAB_URL.to_string(),
        headers: Vec::new(),
        body: Some(body.to_string()),
    }
}

/// The worker's stream decoder: lines of JSON, each a wllama chunk or an
/// error object.
#[derive(Debug)]
pub struct InTabDecoder {
    config: ProviderConfig,
    chunks: OpenAiDecoder,
    line: Vec<u8>,
}

impl InTabDecoder {
    pub fn new(config: &ProviderConfig) -> Self {
        Self {
            config: config.clone(),
            chunks: OpenAiDecoder::new(config),
            line: Vec::new(),
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(text).map_err(|e| {
            failure(
                &self.config,
                ErrorKind::MalformedStream,
                &format!("a line from the worker was not JSON ({e})"),
            )
        })?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(error_from_worker(&self.config, &ErrorBody::from_value(&v)));
        }
        if let Some(t) = v.get("timings").filter(|t| t.is_object()) {
            let n = |k: &str| t.get(k).and_then(Value::as_f64).filter(|x| x.is_finite());
            let count = |k: &str| t.get(k).and_then(Value::as_u64);
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: count("prompt_n"),
                    output_tokens: count("predicted_n"),
                },
            });
            out.push(StreamEvent::Speed {
                speed: Speed {
                    prompt_tokens: count("prompt_n").unwrap_or(0),
                    prompt_per_second: n("prompt_per_second").unwrap_or(0.0),
                    output_tokens: count("predicted_n").unwrap_or(0),
                    output_per_second: n("predicted_per_second").unwrap_or(0.0),
                },
            });
        }
        self.chunks.chunk_value(&v, out)
    }
}

impl StreamDecoder for InTabDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut out = Vec::new();
        for &b in chunk {
            if b == b'\n' {
                let line = std::mem::take(&mut self.line);
                self.line(&line, &mut out)?;
            } else {
                self.line.push(b);
            }
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.line);
        self.line(&rest, &mut out)?;
        if self.chunks.has_finished() {
            Ok(out)
        } else {
            Err(failure(
                &self.config,
                ErrorKind::TruncatedStream,
                "the model stopped before it finished its reply",
            ))
        }
    }
}

/// The name errors and the chat use.
pub const LABEL: &str = "The model in this tab";

/// An error the worker reported, in plain words.
fn error_from_worker(config: &ProviderConfig, body: &ErrorBody) -> ProviderError {
    let kind = match body.kind.as_deref() {
        Some("model_missing") => ErrorKind::ModelNotFound,
        Some("unsupported") => ErrorKind::BadRequest,
        Some("out_of_memory") => ErrorKind::Overloaded,
        _ if body.says_context_too_long() => ErrorKind::ContextTooLong,
        _ => ErrorKind::Server,
    };
    failure(config, kind, body.message.as_deref().unwrap_or(""))
}

/// The worker could not be started or stopped answering.
pub(super) fn network_error(config: &ProviderConfig, what: &str) -> ProviderError {
    error_from_worker(config, &ErrorBody::parse(what))
}

pub(super) fn error_context(config: &ProviderConfig) -> ErrorContext<'_> {
    ErrorContext {
        provider: LABEL,
        model: &config.model,
        base_url: "",
        local: true,
        cors_hint: None,
        ollama: false,
    }
}

fn failure(config: &ProviderConfig, kind: ErrorKind, detail: &str) -> ProviderError {
    let detail = detail.trim();
    let name = if config.model.is_empty() {
        "the model".to_string()
    } else {
        format!("'{}'", config.model)
    };
    let (message, advice) = match kind {
        ErrorKind::ModelNotFound => (
            format!("The model {name} is not stored in this browser."),
            "Add it again in Settings → Model provider, or pick another. Models are not part of backups, so a restored backup needs its models added again.".to_string(),
        ),
        ErrorKind::ContextTooLong => (
            "The conversation no longer fits the context this model runs with.".to_string(),
            "Start a new conversation, or raise the context length in Settings → Model provider if the model allows it.".to_string(),
        ),
        ErrorKind::BadRequest => (
            "This browser cannot run models in the tab.".to_string(),
            "It needs WebAssembly with JSPI and 64-bit memory, as in a current Chromium; use another provider here.".to_string(),
        ),
        ErrorKind::Overloaded => (
            "The model ran out of memory in this tab.".to_string(),
            "Close other tabs, lower the context length, or pick a smaller model.".to_string(),
        ),
        ErrorKind::TruncatedStream => (
            "The model in this tab stopped before it finished.".to_string(),
            "Try again; the model is loaded afresh if its worker failed.".to_string(),
        ),
        ErrorKind::MalformedStream => (
            "The model's worker sent something Hearth cannot read.".to_string(),
            "Reload the page and try again.".to_string(),
        ),
        ErrorKind::Auth
        | ErrorKind::Forbidden
        | ErrorKind::EndpointNotFound
        | ErrorKind::RateLimited
        | ErrorKind::QuotaExceeded
        | ErrorKind::Server
        | ErrorKind::Network => (
            "The model in this tab failed.".to_string(),
            "Try again; the details say what went wrong. If it keeps failing, remove the model and add it again.".to_string(),
        ),
    };
    ProviderError {
        kind,
        status: None,
        message,
        advice,
        // Nothing is far away: waiting does not change a local failure.
        retry: Retry::Never,
        detail: (!detail.is_empty()).then(|| detail.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{
        AssembledCall, AssembledTurn, FinishReason, Protocol, Provider, ToolSpec, WireMessage,
        preset,
    };

    fn provider() -> Provider {
        let mut c = ProviderConfig::from_preset(preset("in-tab").unwrap(), "", "smollm2.gguf");
        c.max_tokens = Some(64);
        Provider::new(c)
    }

    fn decode(lines: &[&str], size: usize) -> Result<AssembledTurn, ProviderError> {
        let bytes: Vec<u8> = lines
            .iter()
            .flat_map(|l| format!("{l}\n").into_bytes())
            .collect();
        let mut d = provider().decoder();
        let mut events = Vec::new();
        for c in bytes.chunks(size) {
            events.extend(d.feed(c)?);
        }
        events.extend(d.finish()?);
        Ok(AssembledTurn::from_events(&events))
    }

    #[test]
    fn the_request_is_what_wllama_takes() {
        let request = ChatRequest {
            system: "Be brief.".into(),
            messages: vec![WireMessage::User { text: "Hi".into() }],
            tools: vec![ToolSpec {
                name: "calculator".into(),
                description: "Math".into(),
                input_schema: json!({"type": "object", "properties": {}}),
            }],
        };
        let http = provider().chat_request(&request);
        assert_eq!(http.url, IN_TAB_URL);
        assert!(http.headers.is_empty());
        let body: Value = serde_json::from_str(http.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "smollm2.gguf",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"}
                ],
                "stream": true,
                "max_tokens": 64,
                "timings_per_token": true,
                "tools": [{"type": "function", "function": {
                    "name": "calculator", "description": "Math",
                    "parameters": {"type": "object", "properties": {}}
                }}]
            })
        );
    }

    #[test]
    fn chunks_become_text_speed_and_a_stop() {
        let lines = [
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}"#,
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Paris"}}],"object":"chat.completion.chunk","timings":{"prompt_n":37,"prompt_per_second":7.5,"predicted_n":1,"predicted_per_second":2.0}}"#,
            r#"{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"object":"chat.completion.chunk","timings":{"prompt_n":37,"prompt_per_second":7.5,"predicted_n":2,"predicted_per_second":4.25}}"#,
        ];
        for size in [1, 7, 4096] {
            let turn = decode(&lines, size).unwrap();
            assert_eq!(turn.text, "Paris");
            assert_eq!(turn.finish, Some(FinishReason::Stop));
            assert_eq!(
                turn.usage,
                Usage {
                    input_tokens: Some(37),
                    output_tokens: Some(2)
                }
            );
            assert_eq!(
                turn.speed,
                Some(Speed {
                    prompt_tokens: 37,
                    prompt_per_second: 7.5,
                    output_tokens: 2,
                    output_per_second: 4.25
                })
            );
        }
    }

    #[test]
    fn tool_call_chunks_assemble() {
        let lines = [
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"abc","type":"function","function":{"name":"calculator","arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"expression\": \"2+2\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"finish_reason":"tool_calls","delta":{}}]}"#,
        ];
        let turn = decode(&lines, 3).unwrap();
        assert_eq!(
            turn.calls,
            vec![AssembledCall {
                id: "abc".into(),
                name: "calculator".into(),
                arguments: r#"{"expression": "2+2"}"#.into()
            }]
        );
        assert_eq!(turn.finish, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn worker_errors_read_plainly() {
        let cases = [
            (
                r#"{"error":{"type":"model_missing","message":"no file smollm2.gguf"}}"#,
                ErrorKind::ModelNotFound,
                "The model 'smollm2.gguf' is not stored in this browser.",
            ),
            (
                r#"{"error":{"type":"inference_error","message":"the request exceeds the available context size, try increasing it"}}"#,
                ErrorKind::ContextTooLong,
                "The conversation no longer fits the context this model runs with.",
            ),
            (
                r#"{"error":{"type":"unsupported","message":"no JSPI"}}"#,
                ErrorKind::BadRequest,
                "This browser cannot run models in the tab.",
            ),
            (
                r#"{"error":{"type":"load_error","message":"bad magic"}}"#,
                ErrorKind::Server,
                "The model in this tab failed.",
            ),
        ];
        for (line, kind, message) in cases {
            let e = decode(&[line], 5).unwrap_err();
            assert_eq!((e.kind, e.message.as_str()), (kind, message), "{line}");
            assert_eq!(e.retry, Retry::Never);
        }
        let e = provider().network_error(r#"{"error":{"type":"model_missing","message":"x"}}"#);
        assert_eq!(e.kind, ErrorKind::ModelNotFound);
        let e = provider().network_error("the worker could not start");
        assert_eq!(
            (e.kind, e.detail.as_deref()),
            (ErrorKind::Server, Some("the worker could not start"))
        );
    }

    #[test]
    fn a_stream_that_stops_early_or_garbled_says_so() {
        let cut = decode(
            &[r#"{"choices":[{"index":0,"delta":{"content":"Par"}}]}"#],
            4096,
        )
        .unwrap_err();
        assert_eq!(cut.kind, ErrorKind::TruncatedStream);
        let garbled = decode(&["not json"], 4096).unwrap_err();
        assert_eq!(garbled.kind, ErrorKind::MalformedStream);
    }

    fn stored(info: GgufInfo) -> StoredModel {
        StoredModel {
            id: "m1".into(),
            file_name: "SmolLM2-135M-Instruct.Q4_1.gguf".into(),
            size: 98_362_432,
            added_at_ms: 0.0,
            source_url: None,
            info,
        }
    }

    fn info() -> GgufInfo {
        GgufInfo {
            version: 3,
            tensor_count: 272,
            architecture: Some("llama".into()),
            name: Some("Smollm2 135M".into()),
            size_label: Some("135M".into()),
            file_type: Some(3),
            context_length: Some(8192),
            template_tools: false,
            has_chat_template: true,
            header_len: 1_769_507,
        }
    }

    #[test]
    fn the_model_list_shows_what_the_header_says() {
        let m = stored(info());
        assert_eq!(m.name(), "Smollm2 135M");
        assert_eq!(
            m.facts(),
            ["98.4 MB", "Q4_1", "8,192 token context", "llama"]
        );
        let bare = stored(GgufInfo {
            name: None,
            architecture: None,
            file_type: None,
            context_length: None,
            ..info()
        });
        assert_eq!(bare.name(), "SmolLM2-135M-Instruct.Q4_1");
        assert_eq!(
            bare.facts(),
            [
                "98.4 MB",
                "unknown quantisation",
                "context length not stated",
                "unknown architecture"
            ]
        );
    }

    #[test]
    fn limits_follow_the_model_and_the_settings() {
        let mut config = ProviderConfig::from_preset(preset("in-tab").unwrap(), "", "m1");
        let m = stored(info());
        assert_eq!(
            m.limits(&config),
            ModelLimits {
                context_window: Some(4096),
                max_output: Some(u64::from(DEFAULT_MAX_TOKENS)),
                tools: false
            }
        );
        config.context_length = Some(8192);
        config.max_tokens = Some(64);
        let tools = stored(GgufInfo {
            template_tools: true,
            ..info()
        });
        assert_eq!(
            tools.limits(&config),
            ModelLimits {
                context_window: Some(8192),
                max_output: Some(64),
                tools: true
            }
        );
    }

    #[test]
    fn storage_is_checked_before_a_model_is_stored() {
        let mb = 1024.0 * 1024.0;
        assert_eq!(
            space_check(100 * 1024 * 1024, 10.0 * mb, 1000.0 * mb),
            Ok(())
        );
        let e = space_check(100 * 1024 * 1024, 900.0 * mb, 1000.0 * mb).unwrap_err();
        assert_eq!(e.free, 36.0 * mb);
        assert_eq!(
            e.to_string(),
            "Not enough storage: the model needs 104.9 MB and this browser lets Hearth use 37.7 MB more. Delete a model or other data, or pick a smaller file."
        );
        assert!(space_check(1, 1000.0 * mb, 1000.0 * mb).is_err());
    }

    #[test]
    fn context_to_load_follows_the_model() {
        let cases = [
            (Some(8192), None, 4096),
            (Some(2048), None, 2048),
            (Some(8192), Some(8192), 8192),
            (Some(2048), Some(8192), 2048),
            (None, None, 2048),
            (Some(0), None, 2048),
            (Some(128), None, 512),
        ];
        for (trained, chosen, want) in cases {
            assert_eq!(
                context_to_load(trained, chosen),
                want,
                "{trained:?} {chosen:?}"
            );
        }
    }
}
