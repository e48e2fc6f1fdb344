//! The assistant's engine: core's agent loop and the providers' wire
//! formats (request building, stream decoding, error reading, model
//! lists). In a split build this is its own chunk, so a person who only
//! uses the command bar never downloads it; the service fetches it when a
//! provider is set up, before the first message needs it.
//!
//! The engine hands back trait objects made inside the chunk, so every
//! call the service makes afterwards runs there synchronously: events of
//! one conversation are handled in the order they arrive, as before.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use hearth_core::assistant::agent::prompt::build_request_for;
use hearth_core::assistant::agent::{
    Action, AgentLoop, Conversation, Event, LoopConfig, LoopEnv, LoopError, ToolCallRecord,
};
use hearth_core::assistant::providers::{
    ImagePart, ModelInfo, Protocol, Provider, ProviderConfig, ProviderError,
};
use hearth_core::assistant::tokens::{ContextEstimate, estimate_turn};

use super::http;
use crate::split::split_point;

/// What the service asks of the engine.
pub trait Engine {
    /// A loop that takes over `conversation`, talking to `provider`.
    fn session(
        &self,
        conversation: Conversation,
        provider: ProviderConfig,
        config: LoopConfig,
        now_ms: f64,
    ) -> Box<dyn Session>;

    /// The estimated context of the next request in `conversation`.
    fn estimate(&self, conversation: &Conversation, env: &dyn LoopEnv) -> ContextEstimate;

    /// Lists a provider's models (every page, up to five), or says in
    /// plain words why it could not.
    fn fetch_models(
        &self,
        config: ProviderConfig,
        timeout_ms: u32,
    ) -> LocalBoxFuture<'static, Result<Vec<ModelInfo>, ProviderError>>;
}

/// One conversation's agent loop: events in, actions out.
pub trait Session {
    fn send(
        &mut self,
        text: &str,
        images: Vec<ImagePart>,
        env: &dyn LoopEnv,
    ) -> Result<Vec<Action>, LoopError>;
    fn continue_after_limit(&mut self, env: &dyn LoopEnv) -> Result<Vec<Action>, LoopError>;
    fn handle(&mut self, event: Event, env: &dyn LoopEnv) -> Vec<Action>;
    fn conversation(&self) -> &Conversation;
    /// The conversation to change outside the loop; `None` while a turn runs.
    fn conversation_mut(&mut self) -> Option<&mut Conversation>;
    /// Adds a command the person ran, also while a turn runs.
    fn push_command(&mut self, line: &str, call: ToolCallRecord, from_form: bool, now_ms: f64);
    fn set_provider(&mut self, provider: ProviderConfig);
}

/// Fetches the engine's chunk (once; later calls answer at once).
pub async fn load() -> Result<Rc<dyn Engine>, crate::split::LoadError> {
    engine_in_chunk().await
}

split_point!(
    assistant_engine,
    fn engine_in_chunk() -> Rc<dyn Engine> {
        Rc::new(LoopEngine)
    }
);

struct LoopEngine;

impl Engine for LoopEngine {
    fn session(
        &self,
        conversation: Conversation,
        provider: ProviderConfig,
        config: LoopConfig,
        now_ms: f64,
    ) -> Box<dyn Session> {
        Box::new(AgentLoop::new(
            conversation,
            Box::new(Provider::new(provider)),
            config,
            now_ms,
        ))
    }

    fn estimate(&self, conversation: &Conversation, env: &dyn LoopEnv) -> ContextEstimate {
        let lookup = |id: &hearth_core::SkillId| env.skill(id);
        let extra = env.extra_tools(conversation);
        let additions = env.system_additions(conversation);
        let (request, _) =
            build_request_for(conversation, &lookup, &extra, &additions, &env.limits());
        estimate_turn(&request, &additions)
    }

    fn fetch_models(
        &self,
        config: ProviderConfig,
        timeout_ms: u32,
    ) -> LocalBoxFuture<'static, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(async move { list_models(&config, timeout_ms).await })
    }
}

impl Session for AgentLoop {
    fn send(
        &mut self,
        text: &str,
        images: Vec<ImagePart>,
        env: &dyn LoopEnv,
    ) -> Result<Vec<Action>, LoopError> {
        AgentLoop::send(self, text, images, env)
    }

    fn continue_after_limit(&mut self, env: &dyn LoopEnv) -> Result<Vec<Action>, LoopError> {
        AgentLoop::continue_after_limit(self, env)
    }

    fn handle(&mut self, event: Event, env: &dyn LoopEnv) -> Vec<Action> {
        AgentLoop::handle(self, event, env)
    }

    fn conversation(&self) -> &Conversation {
        AgentLoop::conversation(self)
    }

    fn conversation_mut(&mut self) -> Option<&mut Conversation> {
        AgentLoop::conversation_mut(self)
    }

    fn push_command(&mut self, line: &str, call: ToolCallRecord, from_form: bool, now_ms: f64) {
        AgentLoop::push_command(self, line, call, from_form, now_ms);
    }

    fn set_provider(&mut self, provider: ProviderConfig) {
        AgentLoop::set_provider(self, Box::new(Provider::new(provider)))
    }
}

async fn list_models(
    config: &ProviderConfig,
    timeout_ms: u32,
) -> Result<Vec<ModelInfo>, ProviderError> {
    let provider = Provider::new(config.clone());
    let mut models = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..5 {
        let request = provider.models_request(page.as_deref());
        let (status, headers, body) = match http::get_text(&request, timeout_ms, 4 << 20).await {
            Ok(r) => r,
            Err(e) => {
                let mut err = provider.network_error(&e.to_string());
                err.redact(&config.api_key);
                return Err(err);
            }
        };
        if !(200..300).contains(&status) {
            let mut err = provider.http_error(status, &headers, &body, js_sys::Date::now());
            err.redact(&config.api_key);
            return Err(err);
        }
        let list = provider.parse_models(&body).map_err(|mut e| {
            e.redact(&config.api_key);
            e
        })?;
        models.extend(list.models);
        match list.next_page {
            Some(next) => page = Some(next),
            None => break,
        }
    }
    Ok(models)
}
