//! "In this tab": a GGUF model run in a Worker of the app by Hearth's own
//! build of llama.cpp for WebAssembly (with its SIMD kernels and threads),
//! with no server, key or network.
//!
//! Sans I/O like the other protocols. The request is the OpenAI-compatible
//! chat body the worker hands to the engine, which applies the model's chat
//! template (tools, tool choice and sampling options mean what they mean to
//! llama-server, whose llama.cpp code the engine uses for templates, tool
//! grammars and parsing). Its URL is [`IN_TAB_URL`], which the app routes
//! to the worker instead of `fetch`.
//!
//! The response is the worker's stream: one JSON object per line, each
//! either a `chat.completion.chunk` as llama-server streams it (text in
//! `choices[0].delta.content`, tool calls in `delta.tool_calls[]`, the stop
//! in `finish_reason`, and llama.cpp's `timings` on every chunk, where
//! `prompt_n` counts the whole prompt and `cache_n` the part already in the
//! model's cache), or an `{"error": {"type", "message"}}` object when
//! loading or running failed.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::error::{ErrorBody, ErrorContext, ErrorKind, ProviderError, Retry};
use super::openai::{OpenAiDecoder, chat_body};
use super::{
    ChatRequest, HttpMethod, HttpRequest, ModelLimits, ProviderConfig, Speed, StreamDecoder,
    StreamEvent, Usage,
};
use crate::assistant::gguf::GgufInfo;
use crate::util::display;

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
    /// The name a person knows it by: the file's, without `.gguf` (it
    /// usually says the model, its size and its quantisation); the name in
    /// its header when the file's says nothing.
    pub fn name(&self) -> String {
        let f = self.file_name.trim();
        let stem = f
            .strip_suffix(".gguf")
            .or_else(|| f.strip_suffix(".GGUF"))
            .unwrap_or(f)
            .trim();
        let generic = stem.is_empty() || stem.eq_ignore_ascii_case("model");
        match self.info.name.as_deref().map(str::trim) {
            Some(meta) if generic && !meta.is_empty() => meta.to_string(),
            _ if stem.is_empty() => "Unnamed model".to_string(),
            _ => stem.to_string(),
        }
    }

    /// The quantisation's name when the engine has no WebAssembly SIMD
    /// kernel for it, so it runs several times slower than one that has.
    pub fn slow_quantisation(&self) -> Option<&'static str> {
        let file_type = self.info.file_type?;
        (!simd_kernels(file_type)).then(|| self.info.quantisation().unwrap_or("this quantisation"))
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

/// Whether llama.cpp's WebAssembly build has SIMD kernels for a file's
/// quantisation (`general.file_type`): F32, F16, the legacy Q4/Q5/Q8 types
/// and the K-quants do (`ggml-cpu/arch/wasm/quants.c` and ggml's wasm
/// vector code); BF16, the IQ and TQ types and MXFP4 run ggml's scalar
/// code. An unknown type counts as slow.
pub fn simd_kernels(file_type: u32) -> bool {
    matches!(file_type, 0..=3 | 7..=18 | 21)
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

/// A small instruction-tuned model the in-tab settings suggest to a person
/// with none yet: a GGUF file on Hugging Face, which lets a page download
/// its files (CORS), with what the person needs to choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub name: &'static str,
    /// What it is good for, in a few words.
    pub note: &'static str,
    pub url: &'static str,
    /// The file's size, roughly (the download shows the exact one).
    pub approx_bytes: u64,
    pub licence: &'static str,
    pub licence_url: &'static str,
    /// Whether its chat template calls tools, so skills work with it.
    pub tools: bool,
}

/// The suggestions, smallest first. Each quantisation has WebAssembly SIMD
/// kernels ([`simd_kernels`]).
pub const SUGGESTIONS: [Suggestion; 3] = [
    Suggestion {
        name: "SmolLM2 360M Instruct",
        note: "The smallest: quick on any laptop, for short chats.",
        url: "https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/smollm2-360m-instruct-q8_0.gguf",
        approx_bytes: 386_000_000,
        licence: "Apache 2.0",
        licence_url: "https://www.apache.org/licenses/LICENSE-2.0",
        tools: false,
    },
    Suggestion {
        name: "Qwen2.5 0.5B Instruct",
        note: "Small and able to call tools, so it can use skills.",
        url: "https://huggingface.co/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf",
        approx_bytes: 398_000_000,
        licence: "Apache 2.0",
        licence_url: "https://www.apache.org/licenses/LICENSE-2.0",
        tools: true,
    },
    Suggestion {
        name: "Llama 3.2 1B Instruct",
        note: "Better answers, still small; calls tools.",
        url: "https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf",
        approx_bytes: 808_000_000,
        licence: "Llama 3.2 Community License",
        licence_url: "https://www.llama.com/llama3_2/license/",
        tools: true,
    },
];

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

/// The request body the worker passes to the engine.
pub(super) fn chat_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let mut body = chat_body(config, request);
    body["max_tokens"] = json!(config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
    // Speed on every chunk, for the tokens-per-second figure while it answers.
    body["timings_per_token"] = json!(true);
    if let Some(map) = body.as_object_mut() {
        // Usage comes from the timings; the option is an HTTP server's.
        map.remove("stream_options");
    }
    HttpRequest {
        method: HttpMethod::Post,
        url: IN_TAB_URL.to_string(),
        headers: Vec::new(),
        body: Some(body.to_string().into_bytes()),
    }
}

/// The worker's stream decoder: lines of JSON, each a chunk or an error
/// object.
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
            // The input is the whole prompt; the prompt speed is over the
            // tokens read this time (the rest were in the cache).
            let prompt = count("prompt_n");
            let read = prompt.map(|p| p.saturating_sub(count("cache_n").unwrap_or(0)));
            out.push(StreamEvent::Usage {
                usage: Usage {
                    input_tokens: prompt,
                    output_tokens: count("predicted_n"),
                },
            });
            out.push(StreamEvent::Speed {
                speed: Speed {
                    prompt_tokens: read.unwrap_or(0),
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
            "This browser cannot run models in the tab here.".to_string(),
            "The engine needs WebAssembly SIMD and threads, which need a cross-origin isolated page; the details say which is missing. Use another provider here if reloading does not help.".to_string(),
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
    use crate::assistant::providers::{
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
    fn the_request_is_what_the_engine_takes() {
        let request = ChatRequest {
            system: "Be brief.".into(),
            messages: vec![WireMessage::user("Hi")],
            tools: vec![ToolSpec {
                name: "calculator".into(),
                description: "Math".into(),
                input_schema: json!({"type": "object", "properties": {}}),
            }],
        };
        let http = provider().chat_request(&request);
        assert_eq!(http.url, IN_TAB_URL);
        assert!(http.headers.is_empty());
        let body: Value = serde_json::from_slice(http.body.as_deref().unwrap()).unwrap();
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
                "This browser cannot run models in the tab here.",
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
        assert_eq!(m.name(), "SmolLM2-135M-Instruct.Q4_1");
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
    fn a_file_named_like_any_other_is_called_by_its_header() {
        let named = |file: &str, meta: Option<&str>| StoredModel {
            file_name: file.into(),
            ..stored(GgufInfo {
                name: meta.map(str::to_string),
                ..info()
            })
        };
        assert_eq!(
            named("model.gguf", Some("Smollm2 135M")).name(),
            "Smollm2 135M"
        );
        assert_eq!(named(" .gguf", Some("Smollm2 135M")).name(), "Smollm2 135M");
        assert_eq!(named("model.gguf", None).name(), "model");
        assert_eq!(named(".gguf", None).name(), "Unnamed model");
        assert_eq!(
            named("qwen2.5-0.5b-instruct-q4_k_m.GGUF", Some("Qwen")).name(),
            "qwen2.5-0.5b-instruct-q4_k_m"
        );
    }

    #[test]
    fn quantisations_without_simd_kernels_are_named() {
        for fast in [0, 1, 2, 3, 7, 8, 9, 10, 14, 15, 18, 21] {
            assert!(simd_kernels(fast), "{fast}");
        }
        for slow in [19, 20, 24, 30, 32, 36, 38, 99] {
            assert!(!simd_kernels(slow), "{slow}");
        }
        let q4_0 = stored(GgufInfo {
            file_type: Some(2),
            ..info()
        });
        assert_eq!(q4_0.slow_quantisation(), None);
        let iq = stored(GgufInfo {
            file_type: Some(20),
            ..info()
        });
        assert_eq!(iq.slow_quantisation(), Some("IQ2_XS"));
        let bf16 = stored(GgufInfo {
            file_type: Some(32),
            ..info()
        });
        assert_eq!(bf16.slow_quantisation(), Some("BF16"));
        let unknown = stored(GgufInfo {
            file_type: None,
            ..info()
        });
        assert_eq!(unknown.slow_quantisation(), None);
    }

    #[test]
    fn the_input_counts_the_whole_prompt_and_the_speed_what_was_read() {
        let lines = [
            r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}],"timings":{"prompt_n":45,"cache_n":28,"prompt_per_second":170.0,"predicted_n":1,"predicted_per_second":9.0}}"#,
            r#"{"choices":[{"index":0,"finish_reason":"stop","delta":{}}],"timings":{"prompt_n":45,"cache_n":28,"prompt_per_second":170.0,"predicted_n":2,"predicted_per_second":9.5}}"#,
        ];
        let turn = decode(&lines, 4096).unwrap();
        assert_eq!(
            turn.usage,
            Usage {
                input_tokens: Some(45),
                output_tokens: Some(2)
            }
        );
        assert_eq!(turn.speed.unwrap().prompt_tokens, 17);
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
    fn suggestions_are_gguf_files_a_page_can_download_and_run_fast() {
        for s in SUGGESTIONS {
            assert!(s.url.starts_with("https://huggingface.co/"), "{}", s.name);
            assert!(s.url.ends_with(".gguf"), "{}", s.name);
            assert!(s.licence_url.starts_with("https://"), "{}", s.name);
            assert!(s.approx_bytes < 1_000_000_000, "{} is small", s.name);
            // The file name says its quantisation; it must be one with kernels.
            let file = s.url.rsplit('/').next().unwrap().to_ascii_uppercase();
            let fast = [("Q8_0", 7), ("Q4_K_M", 15), ("Q4_0", 2)];
            let (_, file_type) = fast
                .iter()
                .find(|(q, _)| file.contains(q))
                .unwrap_or_else(|| panic!("{file}: a quantisation with SIMD kernels"));
            assert!(simd_kernels(*file_type));
        }
        assert!(
            SUGGESTIONS
                .windows(2)
                .all(|w| w[0].approx_bytes <= w[1].approx_bytes)
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
