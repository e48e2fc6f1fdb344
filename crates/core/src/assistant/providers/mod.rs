//! Model providers, sans I/O: each protocol turns a provider-neutral
//! [`ChatRequest`] into the HTTP request the app sends, and turns the
//! response bytes back into [`StreamEvent`]s. The browser does the
//! fetching; nothing here touches the network.
//!
//! Two protocols cover the servers: OpenAI-compatible Chat Completions
//! (OpenAI, OpenRouter, Ollama, LM Studio, llama.cpp server, anything with
//! a compatible base URL) and Anthropic Messages. A third, "In this tab"
//! (`in_tab`), runs a GGUF model in a Worker of the app itself.

mod anthropic;
mod error;
pub mod images;
pub mod in_tab;
mod openai;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicDecoder};
pub use error::{
    ErrorBody, ErrorContext, ErrorKind, ProviderError, Retry, parse_http_date, retry_after_ms,
};
pub use images::{ImagePart, Vision};
pub use in_tab::{IN_TAB_URL, InTabDecoder};
pub use openai::OpenAiDecoder;

use crate::skill::SkillDefinition;

/// The two wire protocols, and the model in this tab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    OpenAiCompatible,
    Anthropic,
    /// A GGUF model run in a Worker of the app (see [`in_tab`]).
    InTab,
}

/// The request a provider asks the app to send with `fetch`: hearth-base's,
/// the one type the MCP client sends too.
pub use hearth_base::http::{HttpMethod, HttpRequest};

/// A provider Hearth knows how to set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub id: &'static str,
    pub label: &'static str,
    pub kind: ProviderKind,
    pub base_url: &'static str,
    pub needs_key: bool,
    /// Runs on this machine; probed on first start.
    pub local: bool,
    /// How to let a browser page reach it, shown when it cannot be reached.
    pub cors_hint: Option<&'static str>,
}

/// The preset id of the model in this tab.
pub const IN_TAB: &str = "in-tab";

pub const PRESETS: &[Preset] = &[
    Preset {
        id: IN_TAB,
        label: "In this tab",
        kind: ProviderKind::InTab,
        base_url: "",
        needs_key: false,
        // Nothing to probe: it is not a server.
        local: false,
        cors_hint: None,
    },
    Preset {
        id: "ollama",
        label: "Ollama",
        kind: ProviderKind::OpenAiCompatible,
        base_url: "http://localhost:11434/v1",
        needs_key: false,
        local: true,
        cors_hint: Some(
            "Ollama accepts localhost pages by default; for another origin, restart it with OLLAMA_ORIGINS set to this page's origin.",
        ),
    },
    Preset {
        id: "lmstudio",
        label: "LM Studio",
        kind: ProviderKind::OpenAiCompatible,
        base_url: "http://localhost:1234/v1",
        needs_key: false,
        local: true,
        cors_hint: Some("turn on \"Enable CORS\" in LM Studio's local server settings."),
    },
    Preset {
        id: "llamacpp",
        label: "llama.cpp server",
        kind: ProviderKind::OpenAiCompatible,
        base_url: "http://localhost:8080/v1",
        needs_key: false,
        local: true,
        cors_hint: Some(
            "llama-server allows browser requests by default; check it listens on this port (hearth serve also defaults to 8080).",
        ),
    },
    Preset {
        id: "openai",
        label: "OpenAI",
        kind: ProviderKind::OpenAiCompatible,
        base_url: "https://api.openai.com/v1",
        needs_key: true,
        local: false,
        cors_hint: None,
    },
    Preset {
        id: "openrouter",
        label: "OpenRouter",
        kind: ProviderKind::OpenAiCompatible,
        base_url: "https://openrouter.ai/api/v1",
        needs_key: true,
        local: false,
        cors_hint: None,
    },
    Preset {
        id: "anthropic",
        label: "Anthropic",
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com",
        needs_key: true,
        local: false,
        cors_hint: None,
    },
];

pub fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The presets probed on first start.
pub fn local_presets() -> impl Iterator<Item = &'static Preset> {
    PRESETS.iter().filter(|p| p.local)
}

/// The port a local preset's server listens on, from its base URL
/// (`http://localhost:11434/v1` → 11434).
pub fn preset_port(preset: &Preset) -> Option<u16> {
    let rest = preset.base_url.split_once("://")?.1;
    let host_port = rest.split('/').next()?;
    host_port.rsplit_once(':')?.1.parse().ok()
}

/// Where `hearth serve` answers which local presets are listening.
pub const LOCAL_SERVERS_PATH: &str = "/api/local-servers";

/// The answer of `hearth serve`'s `GET /api/local-servers`: the ids of the
/// local presets whose port accepts a connection on this machine, so the
/// app asks only those for their models.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalServers {
    pub listening: Vec<String>,
}

impl LocalServers {
    /// The local presets this answer names, in preset order; ids it does
    /// not know are ignored.
    pub fn presets(&self) -> impl Iterator<Item = &'static Preset> + '_ {
        local_presets().filter(|p| self.listening.iter().any(|id| id == p.id))
    }
}

/// What Hearth knows about the model in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelLimits {
    /// Tokens the model can hold (prompt and reply), when known.
    pub context_window: Option<u64>,
    /// The longest reply asked for, kept free in the window.
    pub max_output: Option<u64>,
    /// Whether the model can call tools. When it cannot, the loop offers
    /// none and the system prompt does not mention them.
    pub tools: bool,
}

impl Default for ModelLimits {
    fn default() -> Self {
        Self {
            context_window: None,
            max_output: None,
            tools: true,
        }
    }
}

/// The person's provider settings, stored in this browser only.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// A preset id, or `None` for a custom base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    pub base_url: String,
    #[serde(default)]
    pub api_key: String,
    pub model: String,
    /// Required by Anthropic; optional for OpenAI-compatible servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Ask OpenAI-compatible servers for a usage chunk at the end of the
    /// stream (`stream_options.include_usage`). A few old servers reject it.
    #[serde(default = "yes")]
    pub include_usage: bool,
    /// The context window to run the model in this tab with; `None` lets
    /// Hearth choose from the model file (see `in_tab::context_to_load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    /// Whether the model sees pictures, as the person set it; `None` lets
    /// Hearth judge by the model's name (see [`ProviderConfig::vision`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
}

fn yes() -> bool {
    true
}

/// The key never reaches a log through `{:?}`.
impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("preset", &self.preset)
            .field("base_url", &self.base_url)
            .field(
                "api_key",
                &if self.api_key.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("include_usage", &self.include_usage)
            .field("context_length", &self.context_length)
            .finish()
    }
}

/// Anthropic requires `max_tokens`; this is what Hearth asks for when the
/// person has not chosen.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

impl ProviderConfig {
    pub fn from_preset(
        preset: &Preset,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            kind: preset.kind,
            preset: Some(preset.id.to_string()),
            base_url: preset.base_url.to_string(),
            api_key: api_key.into(),
            model: model.into(),
            max_tokens: None,
            temperature: None,
            include_usage: true,
            context_length: None,
            vision: None,
        }
    }

    pub fn custom(
        kind: ProviderKind,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            preset: None,
            base_url: base_url.into(),
            api_key: String::new(),
            model: model.into(),
            max_tokens: None,
            temperature: None,
            include_usage: true,
            context_length: None,
            vision: None,
        }
    }

    fn preset_info(&self) -> Option<&'static Preset> {
        self.preset.as_deref().and_then(preset)
    }

    /// The name errors use: the preset's label, or a generic one.
    pub fn display_name(&self) -> &str {
        match self.preset_info() {
            Some(p) => p.label,
            None => match self.kind {
                ProviderKind::OpenAiCompatible => "the model server",
                ProviderKind::Anthropic => "Anthropic",
                ProviderKind::InTab => in_tab::LABEL,
            },
        }
    }

    /// The name a person sees beside the model: the preset's label, or
    /// the custom server's host ("127.0.0.1", "Anthropic at proxy.lan").
    pub fn label(&self) -> String {
        match (self.preset_info(), self.kind) {
            (Some(p), _) => p.label.to_string(),
            (None, ProviderKind::InTab) => "In this tab".to_string(),
            (None, ProviderKind::OpenAiCompatible) => host_of(&self.base_url),
            (None, ProviderKind::Anthropic) => format!("Anthropic at {}", host_of(&self.base_url)),
        }
    }

    /// Whether the model can be shown pictures: never in this tab (its
    /// engine reads text only), otherwise as the person set it, or else
    /// by the model's name.
    pub fn vision(&self) -> Vision {
        let model = if self.model.is_empty() {
            "This model"
        } else {
            self.model.as_str()
        };
        if self.in_tab() {
            return Vision::Blind(
                "The model in this tab reads text only. Remove the pictures to send, or choose a model that sees pictures in Settings → Model provider."
                    .into(),
            );
        }
        match self.vision {
            Some(true) => Vision::Sees,
            Some(false) => Vision::Blind(format!(
                "{model} is set as a model that does not see pictures (Settings → Model provider). Remove the pictures to send."
            )),
            None if images::sees_by_name(&self.model) => Vision::Sees,
            None => Vision::Unknown(format!(
                "Hearth cannot tell whether {model} sees pictures. If it does, set “Sees pictures” in Settings → Model provider; otherwise remove the pictures to send."
            )),
        }
    }

    /// Whether the model runs in this tab.
    pub fn in_tab(&self) -> bool {
        self.kind == ProviderKind::InTab
    }

    /// Whether the base URL points at this machine (the model in this tab
    /// always does).
    pub fn is_local(&self) -> bool {
        if self.in_tab() {
            return true;
        }
        let host = host_of(&self.base_url);
        host == "localhost"
            || host.ends_with(".localhost")
            || host.starts_with("127.")
            || host == "[::1]"
            || host == "0.0.0.0"
    }

    /// Problems worth telling the person before they save these settings.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.in_tab() {
            if self.model.trim().is_empty() {
                out.push("Add a model file, or pick one of the models stored here.".to_string());
            }
            return out;
        }
        let lower = self.base_url.trim().to_ascii_lowercase();
        if lower.is_empty() {
            out.push("Enter the server's base URL, such as http://localhost:8000/v1.".to_string());
        } else if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            out.push("The base URL must start with http:// or https://.".to_string());
        } else if lower.starts_with("http://") && !self.is_local() && !self.api_key.is_empty() {
            out.push(format!(
                "The API key would travel unencrypted to {}; use https:// for remote servers.",
                host_of(&self.base_url)
            ));
        }
        if self.model.trim().is_empty() {
            out.push("Pick a model.".to_string());
        }
        if self.preset_info().is_some_and(|p| p.needs_key) && self.api_key.trim().is_empty() {
            out.push(format!("{} needs an API key.", self.display_name()));
        }
        out
    }

    pub fn error_context(&self) -> ErrorContext<'_> {
        if self.in_tab() {
            return in_tab::error_context(self);
        }
        let preset = self.preset_info();
        ErrorContext {
            provider: self.display_name(),
            model: &self.model,
            base_url: &self.base_url,
            local: self.is_local(),
            cors_hint: preset.and_then(|p| p.cors_hint),
            ollama: preset.is_some_and(|p| p.id == "ollama"),
        }
    }
}

/// The host part of a URL, lowercased (`[::1]` keeps its brackets).
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if authority.starts_with('[') {
        authority
            .split_once(']')
            .map(|(h, _)| format!("{h}]"))
            .unwrap_or_else(|| authority.to_string())
    } else {
        authority.split(':').next().unwrap_or("").to_string()
    };
    host.to_ascii_lowercase()
}

fn join(base: &str, path: &str) -> String {
    format!("{}{}", base.trim_end_matches('/'), path)
}

/// A tool as offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolSpec {
    pub fn from_skill(skill: &SkillDefinition) -> Self {
        let mut schema = skill.input_schema.clone();
        // Both protocols want an object schema with a type.
        if let Value::Object(map) = &mut schema {
            map.entry("type")
                .or_insert_with(|| Value::String("object".into()));
            map.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
        } else {
            schema = serde_json::json!({"type": "object", "properties": {}});
        }
        Self {
            name: skill.id.to_string(),
            description: skill.description.clone(),
            input_schema: schema,
        }
    }
}

/// A tool call as it stands in the history sent back to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireToolCall {
    pub id: String,
    pub name: String,
    /// Always an object; arguments that were not valid JSON are sent as
    /// `{}` and their result explains the problem.
    pub arguments: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireToolResult {
    pub call_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
    /// Pictures the result holds (a tool's image, a chart code drew), for
    /// a model that sees them; `content` names them in words either way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
}

/// One message of the history, in the shape both protocols can express.
/// Tool results follow the assistant message whose calls they answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum WireMessage {
    User {
        text: String,
        /// Pictures the person attached. A model that cannot see them is
        /// told of each in words instead (see [`ImagePart::stand_in`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImagePart>,
    },
    Assistant {
        text: String,
        tool_calls: Vec<WireToolCall>,
    },
    ToolResults {
        results: Vec<WireToolResult>,
    },
}

impl WireMessage {
    /// A user message of text alone.
    pub fn user(text: impl Into<String>) -> Self {
        WireMessage::User {
            text: text.into(),
            images: Vec::new(),
        }
    }
}

/// A provider-neutral request: the model and limits come from the config.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<WireMessage>,
    pub tools: Vec<ToolSpec>,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    /// A complete answer.
    Stop,
    /// It wants tools run.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// The provider filtered the output.
    ContentFilter,
    Other(String),
}

/// Token counts the provider reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
}

impl Usage {
    fn merge(&mut self, other: Usage) {
        if other.input_tokens.is_some() {
            self.input_tokens = other.input_tokens;
        }
        if other.output_tokens.is_some() {
            self.output_tokens = other.output_tokens;
        }
    }
}

/// How fast a model read the prompt and wrote its reply, as the model in
/// this tab reports it (llama.cpp's timings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub prompt_tokens: u64,
    pub prompt_per_second: f64,
    pub output_tokens: u64,
    pub output_per_second: f64,
}

/// What a stream says, in either protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    Text {
        text: String,
    },
    /// Thinking the model shows (reasoning models); never sent back.
    Reasoning {
        text: String,
    },
    /// Part of tool call number `index` (in the order calls appear):
    /// its id and name when first seen, then pieces of its JSON arguments.
    ToolCall {
        index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        arguments: String,
    },
    Usage {
        usage: Usage,
    },
    /// Reading and writing speed so far (the model in this tab).
    Speed {
        speed: Speed,
    },
    Finished {
        reason: FinishReason,
    },
}

/// Turns a response body into events, chunk by chunk. `finish` is called
/// when the body ends and reports a reply cut short.
pub trait StreamDecoder {
    fn feed(&mut self, chunk: &[u8]) -> Result<Vec<StreamEvent>, ProviderError>;
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError>;
}

/// A model offered by a server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
}

/// One page of a model list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelList {
    pub models: Vec<ModelInfo>,
    /// Anthropic pages its list; pass this to `models_request` for more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page: Option<String>,
}

/// A wire protocol, sans I/O. The agent loop drives one of these.
pub trait Protocol {
    fn chat_request(&self, request: &ChatRequest) -> HttpRequest;
    fn decoder(&self) -> Box<dyn StreamDecoder>;
    /// The error for a non-2xx response, given its complete body.
    fn http_error(
        &self,
        status: u16,
        headers: &[(String, String)],
        body: &str,
        now_unix_ms: f64,
    ) -> ProviderError;
    /// The error for a request that never got a response.
    fn network_error(&self, what: &str) -> ProviderError;
    /// Whether the model can be shown pictures.
    fn vision(&self) -> Vision;
}

/// A configured provider: either protocol, talking to one base URL.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    pub config: ProviderConfig,
}

impl Provider {
    pub fn new(config: ProviderConfig) -> Self {
        Self { config }
    }

    /// Lists the server's models (`GET /models`, `GET /v1/models`).
    /// `page` continues an Anthropic list.
    /// The model in this tab has no server to ask: its models are the
    /// files stored in the browser, which the app lists itself.
    pub fn models_request(&self, page: Option<&str>) -> HttpRequest {
        match self.config.kind {
            ProviderKind::OpenAiCompatible | ProviderKind::InTab => {
                openai::models_request(&self.config)
            }
            ProviderKind::Anthropic => anthropic::models_request(&self.config, page),
        }
    }

    pub fn parse_models(&self, body: &str) -> Result<ModelList, ProviderError> {
        let cx = self.config.error_context();
        match self.config.kind {
            ProviderKind::OpenAiCompatible | ProviderKind::InTab => openai::parse_models(&cx, body),
            ProviderKind::Anthropic => anthropic::parse_models(&cx, body),
        }
    }
}

impl Protocol for Provider {
    fn chat_request(&self, request: &ChatRequest) -> HttpRequest {
        match self.config.kind {
            ProviderKind::OpenAiCompatible => openai::chat_request(&self.config, request),
            ProviderKind::Anthropic => anthropic::chat_request(&self.config, request),
            ProviderKind::InTab => in_tab::chat_request(&self.config, request),
        }
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        match self.config.kind {
            ProviderKind::OpenAiCompatible => Box::new(OpenAiDecoder::new(&self.config)),
            ProviderKind::Anthropic => Box::new(AnthropicDecoder::new(&self.config)),
            ProviderKind::InTab => Box::new(InTabDecoder::new(&self.config)),
        }
    }

    fn http_error(
        &self,
        status: u16,
        headers: &[(String, String)],
        body: &str,
        now_unix_ms: f64,
    ) -> ProviderError {
        error::classify_http(
            &self.config.error_context(),
            status,
            headers,
            body,
            now_unix_ms,
        )
    }

    fn network_error(&self, what: &str) -> ProviderError {
        if self.config.in_tab() {
            return in_tab::network_error(&self.config, what);
        }
        error::network(&self.config.error_context(), what)
    }

    fn vision(&self) -> Vision {
        self.config.vision()
    }
}

/// A tool call put together from its stream pieces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssembledCall {
    pub id: String,
    pub name: String,
    /// The raw JSON text of the arguments, as streamed.
    pub arguments: String,
}

/// A reply put together from its stream events.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssembledTurn {
    pub text: String,
    pub reasoning: String,
    pub calls: Vec<AssembledCall>,
    pub finish: Option<FinishReason>,
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<Speed>,
}

impl AssembledTurn {
    /// Applies one event. Calls without an id (some local servers omit
    /// it) get `call_<n>`.
    pub fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Text { text } => self.text.push_str(text),
            StreamEvent::Reasoning { text } => self.reasoning.push_str(text),
            StreamEvent::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                while self.calls.len() <= *index {
                    let n = self.calls.len();
                    self.calls.push(AssembledCall {
                        id: format!("call_{n}"),
                        name: String::new(),
                        arguments: String::new(),
                    });
                }
                let call = &mut self.calls[*index];
                if let Some(id) = id.as_deref().filter(|s| !s.is_empty()) {
                    call.id = id.to_string();
                }
                if let Some(name) = name.as_deref().filter(|s| !s.is_empty())
                    && call.name.is_empty()
                {
                    call.name = name.to_string();
                }
                call.arguments.push_str(arguments);
            }
            StreamEvent::Usage { usage } => self.usage.merge(*usage),
            StreamEvent::Speed { speed } => self.speed = Some(*speed),
            StreamEvent::Finished { reason } => self.finish = Some(reason.clone()),
        }
    }

    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a StreamEvent>) -> Self {
        let mut turn = Self::default();
        for e in events {
            turn.apply(e);
        }
        turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_local_preset_names_its_port() {
        let ports: Vec<(&str, Option<u16>)> =
            local_presets().map(|p| (p.id, preset_port(p))).collect();
        assert_eq!(
            ports,
            [
                ("ollama", Some(11434)),
                ("lmstudio", Some(1234)),
                ("llamacpp", Some(8080))
            ]
        );
    }

    #[test]
    fn a_local_servers_answer_names_only_known_local_presets() {
        let answer = LocalServers {
            listening: vec![
                "llamacpp".into(),
                "openai".into(),
                "nonsense".into(),
                "ollama".into(),
            ],
        };
        let ids: Vec<&str> = answer.presets().map(|p| p.id).collect();
        assert_eq!(ids, ["ollama", "llamacpp"]);
        assert_eq!(LocalServers::default().presets().count(), 0);
    }

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let mut config =
            ProviderConfig::from_preset(preset("openai").unwrap(), "sk-secret-123", "gpt-4o");
        config.temperature = Some(0.2);
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        let request = Provider::new(config).chat_request(&ChatRequest::default());
        assert_eq!(
            request.header_value("authorization"),
            Some("Bearer sk-secret-123")
        );
        let shown = format!("{request:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
    }

    #[test]
    fn the_key_goes_only_to_the_configured_host() {
        let config =
            ProviderConfig::from_preset(preset("anthropic").unwrap(), "sk-ant-1", "claude-x");
        let p = Provider::new(config);
        for r in [
            p.chat_request(&ChatRequest::default()),
            p.models_request(None),
        ] {
            assert!(
                r.url.starts_with("https://api.anthropic.com/v1/"),
                "{}",
                r.url
            );
        }
    }

    #[test]
    fn labels_name_the_preset_or_the_host() {
        let cases = [
            (
                ProviderConfig::from_preset(preset("ollama").unwrap(), "", "m"),
                "Ollama",
            ),
            (
                ProviderConfig::custom(
                    ProviderKind::OpenAiCompatible,
                    "http://127.0.0.1:8080/v1",
                    "m",
                ),
                "127.0.0.1",
            ),
            (
                ProviderConfig::custom(ProviderKind::Anthropic, "https://Proxy.lan/", "m"),
                "Anthropic at proxy.lan",
            ),
        ];
        for (config, want) in cases {
            assert_eq!(config.label(), want);
        }
    }

    #[test]
    fn settings_warnings() {
        let ok = ProviderConfig::from_preset(preset("ollama").unwrap(), "", "llama3.2");
        assert_eq!(ok.warnings(), Vec::<String>::new());
        assert!(ok.is_local());
        let mut remote = ProviderConfig::custom(
            ProviderKind::OpenAiCompatible,
            "http://10.0.0.5:8000/v1",
            "m",
        );
        remote.api_key = "k".into();
        assert_eq!(
            remote.warnings(),
            vec!["The API key would travel unencrypted to 10.0.0.5; use https:// for remote servers.".to_string()]
        );
        let keyless = ProviderConfig::from_preset(preset("openrouter").unwrap(), "", "");
        assert_eq!(
            keyless.warnings(),
            vec![
                "Pick a model.".to_string(),
                "OpenRouter needs an API key.".to_string()
            ]
        );
        // A custom provider starts with no URL: saving it says what is missing.
        let unset = ProviderConfig::custom(ProviderKind::OpenAiCompatible, "", "m");
        assert_eq!(
            unset.warnings(),
            vec!["Enter the server's base URL, such as http://localhost:8000/v1.".to_string()]
        );
        let cases = [
            ("http://127.0.0.1:1234/v1", true),
            ("http://[::1]:8080/v1", true),
            ("http://user@localhost/v1", true),
            ("https://api.openai.com/v1", false),
            ("https://localhost.evil.com/v1", false),
        ];
        for (url, local) in cases {
            assert_eq!(
                ProviderConfig::custom(ProviderKind::OpenAiCompatible, url, "m").is_local(),
                local,
                "{url}"
            );
        }
    }

    #[test]
    fn calls_assemble_from_pieces() {
        let events = [
            StreamEvent::ToolCall {
                index: 0,
                id: Some("a".into()),
                name: Some("calculator".into()),
                arguments: String::new(),
            },
            StreamEvent::ToolCall {
                index: 1,
                id: None,
                name: Some("notes_create".into()),
                arguments: "{\"b".into(),
            },
            StreamEvent::ToolCall {
                index: 0,
                id: None,
                name: Some("ignored".into()),
                arguments: "{\"expression\":".into(),
            },
            StreamEvent::ToolCall {
                index: 0,
                id: None,
                name: None,
                arguments: "\"1+1\"}".into(),
            },
            StreamEvent::ToolCall {
                index: 1,
                id: None,
                name: None,
                arguments: "ody\":\"x\"}".into(),
            },
            StreamEvent::Usage {
                usage: Usage {
                    input_tokens: Some(10),
                    output_tokens: None,
                },
            },
            StreamEvent::Usage {
                usage: Usage {
                    input_tokens: None,
                    output_tokens: Some(3),
                },
            },
            StreamEvent::Finished {
                reason: FinishReason::ToolCalls,
            },
        ];
        assert_eq!(
            AssembledTurn::from_events(&events),
            AssembledTurn {
                text: String::new(),
                reasoning: String::new(),
                calls: vec![
                    AssembledCall {
                        id: "a".into(),
                        name: "calculator".into(),
                        arguments: "{\"expression\":\"1+1\"}".into()
                    },
                    AssembledCall {
                        id: "call_1".into(),
                        name: "notes_create".into(),
                        arguments: "{\"body\":\"x\"}".into()
                    },
                ],
                finish: Some(FinishReason::ToolCalls),
                usage: Usage {
                    input_tokens: Some(10),
                    output_tokens: Some(3)
                },
                speed: None,
            }
        );
    }
}
