//! The assistant in the browser: conversations kept in step with
//! IndexedDB, the model provider's settings, and core's `AgentLoop`
//! driven by real I/O — its `Send` actions become streaming fetches, its
//! `RunTool` actions go through the runtime's call path (permission layer
//! included), and its timers become browser timers.
//!
//! The service outlives the Chat view, so a reply keeps streaming while
//! the person looks at another place.
//!
//! With the provider "In this tab", `Send` goes to the model's Worker
//! (`crate::tabmodel`) instead of `fetch`: its stream of JSON lines feeds
//! the same loop, tool calls, approvals and log as any provider.
//!
//! The loop and the providers' formats are the engine (`engine.rs`), a
//! chunk of its own: the service fetches it as soon as a provider is set,
//! and the calls that start a turn wait for it the first time.

pub mod engine;
pub mod http;
pub mod store;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use hearth_core::assistant::agent::conversation::{
    ALWAYS_LOADED_MIN_CONVERSATIONS, ALWAYS_LOADED_SHARE,
};
use hearth_core::assistant::agent::{
    Action, Conversation, Event, LoopConfig, LoopEnv, ModelLimits, RequestId, TurnOutcome,
    always_loaded_suggestion,
};
use hearth_core::assistant::providers::{
    ErrorKind, IN_TAB_URL, ImagePart, LOCAL_SERVERS_PATH, LocalServers, ModelInfo, Preset,
    ProviderConfig, ProviderError, Retry, local_presets,
};
use hearth_core::assistant::tokens::ContextEstimate;
use hearth_core::{SkillDefinition, SkillId};
use leptos::prelude::*;
use leptos::task::spawn_local;
use send_wrapper::SendWrapper;
use web_sys::AbortController;

use self::engine::Engine;
use crate::platform::new_id;
use crate::runtime::Runtime;
use crate::tabmodel::TabModels;
pub use store::AssistantSettings;

/// A local model server that answered the first-start probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    pub preset: &'static Preset,
    pub models: Vec<ModelInfo>,
}

/// The offers a remembered probe makes: the local presets that answered.
fn offers_of(probe: &store::LocalProbe) -> Vec<Offer> {
    probe
        .found
        .iter()
        .filter_map(|f| {
            local_presets()
                .find(|p| p.id == f.preset)
                .map(|preset| Offer {
                    preset,
                    models: f.models.clone(),
                })
        })
        .collect()
}

/// The local presets worth asking for their models. Served by `hearth
/// serve` (this browser holds its key), the server says which preset ports
/// accept a connection, so a port where nothing listens is never fetched
/// and the page's console stays free of refused connections. On a static
/// host, or when the server cannot answer, the browser asks every preset.
async fn presets_to_ask() -> Vec<&'static Preset> {
    let client = crate::web::ProxyClient::browser();
    if client.key_header().is_some()
        && let Ok(answer) = client.get::<LocalServers>(LOCAL_SERVERS_PATH).await
    {
        return answer.presets().collect();
    }
    local_presets().collect()
}

/// A request waiting to be retried, for the countdown in the chat.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryNotice {
    pub at_ms: f64,
    pub error: ProviderError,
}

/// A deleted conversation, kept until the toast's Undo is gone.
#[derive(Clone, Debug, PartialEq)]
pub struct Deleted {
    pub conversation: Conversation,
    /// Its artifacts, once the delete has removed them.
    pub artifacts: StoredRecords,
}

/// Records as they were stored, put back unread by an undo.
#[derive(Clone)]
pub struct StoredRecords(pub send_wrapper::SendWrapper<Vec<wasm_bindgen::JsValue>>);

impl Default for StoredRecords {
    fn default() -> Self {
        Self(send_wrapper::SendWrapper::new(Vec::new()))
    }
}

impl std::fmt::Debug for StoredRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} stored records", self.0.len())
    }
}

impl PartialEq for StoredRecords {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0.iter())
                .all(|(a, b)| js_sys::Object::is(a, b))
    }
}

/// Why an edit to a conversation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AssistantError {
    #[error("a reply is still in progress; stop it or wait for it to finish")]
    Busy,
    #[error("set up a model provider in Settings first")]
    NoProvider,
    #[error("{0}")]
    Loop(String),
    #[error("could not save: {0}")]
    Storage(String),
}

/// One conversation's running agent loop and its open requests.
struct Session {
    agent: Box<dyn engine::Session>,
    requests: HashMap<RequestId, AbortController>,
}

/// What the loop asks the platform: the clock, call ids, the enabled
/// skills, and what the runtime's skill sources add to each request. This
/// is the one place the tools offered to the model come from: core's
/// `tools_for_turn` = `discover_skills` + the conversation's loaded skills
/// (looked up here) + `extra_tools` (the sources' offers, in the order the
/// sources register).
struct Env<'a> {
    rt: &'a Runtime,
    limits: ModelLimits,
}

impl Env<'_> {
    /// Every tool the next request offers besides `discover_skills`: the
    /// loaded skills, then the sources' tools.
    fn offered(&self, conversation: &Conversation) -> Vec<SkillDefinition> {
        let mut all: Vec<SkillDefinition> = conversation
            .loaded_skills
            .iter()
            .filter_map(|id| self.skill(id))
            .collect();
        for def in self.extra_tools(conversation) {
            if !all.iter().any(|d| d.id == def.id) {
                all.push(def);
            }
        }
        all
    }
}

impl LoopEnv for Env<'_> {
    fn now_unix_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    /// The id the call keeps in the conversation, its approval and the
    /// Activity log: random, like every other log record's.
    fn new_call_id(&self) -> String {
        new_id()
    }

    fn skill(&self, id: &SkillId) -> Option<SkillDefinition> {
        let def = self.rt.registry().get(id).cloned()?;
        self.rt
            .data()
            .permissions
            .borrow()
            .is_enabled(&def)
            .then_some(def)
    }

    fn extra_tools(&self, conversation: &Conversation) -> Vec<SkillDefinition> {
        let offered = self.rt.sources().turn_tools(&conversation.turn());
        // Only registered, enabled skills, as the registry defines them: a
        // source cannot smuggle in a tool the registry and the permission
        // layer do not know, nor change a registered one's definition.
        offered
            .iter()
            .filter_map(|def| self.skill(&def.id))
            .collect()
    }

    fn limits(&self) -> ModelLimits {
        self.limits
    }

    fn system_additions(&self, conversation: &Conversation) -> Vec<String> {
        let offered = self.offered(conversation);
        self.rt
            .sources()
            .turn_prompts(&conversation.turn(), &offered)
    }
}

/// What [`Assistant`] holds: the conversations, the reply in progress
/// and what the chat shows about it, behind one shared handle.
pub struct AssistantState {
    rt: Runtime,
    /// Stored conversations, most recently updated first.
    pub conversations: RwSignal<Vec<Conversation>>,
    /// The open conversation's id (stored, or the draft's).
    pub current: RwSignal<Option<String>>,
    /// A new conversation not stored until something is said in it.
    pub draft: RwSignal<Option<Conversation>>,
    pub provider: RwSignal<Option<ProviderConfig>>,
    pub settings: RwSignal<AssistantSettings>,
    /// Conversations with a turn in progress.
    pub running: RwSignal<Vec<String>>,
    /// Conversations whose turn stopped at the step limit.
    pub paused: RwSignal<Vec<String>>,
    pub retrying: RwSignal<HashMap<String, RetryNotice>>,
    pub offers: RwSignal<Vec<Offer>>,
    /// The remembered answer of the look for local model servers (`None`
    /// until one was made), and whether one is under way.
    pub local_probe: RwSignal<Option<store::LocalProbe>>,
    pub probing: RwSignal<bool>,
    pub deleted: RwSignal<Option<Deleted>>,
    /// A storage failure to show; the data in memory is intact.
    pub save_error: RwSignal<Option<String>>,
    /// Stored records that no longer decode (left in place).
    pub undecodable: RwSignal<usize>,
    pub loaded: RwSignal<bool>,
    /// The conversation the Chat view shows right now, if it is mounted;
    /// its approvals are answered inline, all others in the modal.
    pub visible: RwSignal<Option<String>>,
    sessions: RefCell<HashMap<String, Session>>,
    /// The engine, once its chunk is in (tracked, so the token meter
    /// appears when it arrives).
    engine: RwSignal<Option<Rc<dyn Engine>>, LocalStorage>,
    /// The models in this tab and their worker.
    pub tab: TabModels,
}

/// The handle components get from context.
#[derive(Clone)]
pub struct Assistant(SendWrapper<Rc<AssistantState>>);

impl std::ops::Deref for Assistant {
    type Target = AssistantState;
    fn deref(&self) -> &AssistantState {
        &self.0
    }
}

pub fn use_assistant() -> Assistant {
    expect_context::<Assistant>()
}

fn now() -> f64 {
    js_sys::Date::now()
}

impl Assistant {
    /// Creates the service and loads conversations and settings in the
    /// background; `loaded` turns true when they are in.
    pub fn new(rt: Runtime) -> Assistant {
        let a = Assistant(SendWrapper::new(Rc::new(AssistantState {
            rt,
            conversations: RwSignal::new(Vec::new()),
            current: RwSignal::new(None),
            draft: RwSignal::new(None),
            provider: RwSignal::new(None),
            settings: RwSignal::new(AssistantSettings::default()),
            running: RwSignal::new(Vec::new()),
            paused: RwSignal::new(Vec::new()),
            retrying: RwSignal::new(HashMap::new()),
            offers: RwSignal::new(Vec::new()),
            local_probe: RwSignal::new(None),
            probing: RwSignal::new(false),
            deleted: RwSignal::new(None),
            save_error: RwSignal::new(None),
            undecodable: RwSignal::new(0),
            loaded: RwSignal::new(false),
            visible: RwSignal::new(None),
            sessions: RefCell::new(HashMap::new()),
            engine: RwSignal::new_local(None),
            tab: TabModels::new(),
        })));
        let this = a.clone();
        spawn_local(async move { this.load().await });
        a
    }

    pub fn runtime(&self) -> &Runtime {
        &self.rt
    }

    async fn load(&self) {
        let db = self.rt.db();
        match store::load_all(&db, now()).await {
            Ok((list, bad)) => {
                self.conversations.set(list);
                self.undecodable.set(bad);
            }
            Err(e) => self
                .save_error
                .set(Some(format!("Conversations could not be read: {e}"))),
        }
        let provider = store::provider(&db).await.ok().flatten();
        if provider.is_some() {
            self.warm_engine();
        }
        self.provider.set(provider.clone());
        if let Ok(s) = store::settings(&db).await {
            self.settings.set(s);
        }
        if self.current.get_untracked().is_none() {
            let first = self
                .conversations
                .with_untracked(|l| l.first().map(|c| c.id.clone()));
            match first {
                Some(id) => self.current.set(Some(id)),
                None => self.new_conversation(),
            }
        }
        let remembered = store::local_probe(&db).await.ok().flatten();
        self.local_probe.set(remembered.clone());
        self.loaded.set(true);
        if provider.is_none() {
            let dismissed = db
                .setting::<bool>(store::OFFER_DISMISSED_KEY)
                .await
                .ok()
                .flatten()
                .unwrap_or(false);
            if !dismissed {
                match remembered {
                    // Asked before: offer what answered then, without
                    // asking again.
                    Some(probe) => self.offers.set(offers_of(&probe)),
                    None => self.probe_local().await,
                }
            }
        }
    }

    /// Asks the local presets for their models, remembers which answered,
    /// and offers those while no provider is set. Settings' "Look again"
    /// calls this; loading the app only does when nothing is remembered.
    pub async fn probe_local(&self) {
        if self.probing.get_untracked() {
            return;
        }
        self.probing.set(true);
        let probes = presets_to_ask().await.into_iter().map(|preset| async move {
            let config = ProviderConfig::from_preset(preset, "", "");
            fetch_models(&config, 1_500)
                .await
                .ok()
                .map(|models| store::FoundServer {
                    preset: preset.id.to_string(),
                    models,
                })
        });
        let found: Vec<store::FoundServer> = futures::future::join_all(probes)
            .await
            .into_iter()
            .flatten()
            .collect();
        let probe = store::LocalProbe {
            at_ms: now(),
            found,
        };
        // Not remembering only means asking again on the next load.
        let _ = store::save_local_probe(&self.rt.db(), &probe).await;
        if self.provider.get_untracked().is_none() {
            self.offers.set(offers_of(&probe));
        }
        self.local_probe.set(Some(probe));
        self.probing.set(false);
    }

    /// Hides the first-start offer for good.
    pub fn dismiss_offers(&self) {
        self.offers.set(Vec::new());
        let db = self.rt.db();
        spawn_local(async move {
            let _ = db.set_setting(store::OFFER_DISMISSED_KEY, &true).await;
        });
    }

    // ----- conversations -----

    /// The open conversation (stored or draft).
    pub fn current_conversation(&self) -> Option<Conversation> {
        let id = self.current.get()?;
        self.conversation(&id)
    }

    pub fn conversation(&self, id: &str) -> Option<Conversation> {
        self.conversations
            .with(|l| l.iter().find(|c| c.id == id).cloned())
            .or_else(|| self.draft.with(|d| d.clone().filter(|c| c.id == id)))
    }

    /// The same, without subscribing (for event handlers and the loop).
    fn find(&self, id: &str) -> Option<Conversation> {
        self.conversations
            .with_untracked(|l| l.iter().find(|c| c.id == id).cloned())
            .or_else(|| {
                self.draft
                    .with_untracked(|d| d.clone().filter(|c| c.id == id))
            })
    }

    pub fn is_running(&self, id: &str) -> bool {
        self.running.with(|r| r.iter().any(|x| x == id))
    }

    pub fn running_now(&self, id: &str) -> bool {
        self.running.with_untracked(|r| r.iter().any(|x| x == id))
    }

    /// Opens a new, empty conversation (stored once something is said).
    /// With "always loaded" on, it starts with the usual skills.
    pub fn new_conversation(&self) {
        let mut c = Conversation::new(new_id(), now());
        if self.settings.get_untracked().always_loaded {
            let usual = self.conversations.with_untracked(|l| {
                always_loaded_suggestion(l, ALWAYS_LOADED_SHARE, ALWAYS_LOADED_MIN_CONVERSATIONS)
            });
            c.load_skills(usual.into_iter().map(|u| u.skill_id));
        }
        self.current.set(Some(c.id.clone()));
        self.draft.set(Some(c));
    }

    pub fn open(&self, id: &str) {
        if self.current.get_untracked().as_deref() == Some(id) {
            return;
        }
        let stored = self
            .conversations
            .with_untracked(|l| l.iter().any(|c| c.id == id));
        if stored {
            self.draft.set(None);
            self.current.set(Some(id.to_string()));
        }
    }

    /// Puts a conversation (new or changed) into the list and stores it.
    fn store(&self, mut conversation: Conversation) {
        if let Some(key) = self
            .provider
            .with_untracked(|p| p.as_ref().map(|p| p.api_key.clone()))
        {
            for m in &mut conversation.messages {
                if let Some(e) = &mut m.error {
                    e.redact(&key);
                }
            }
        }
        if self
            .draft
            .with_untracked(|d| d.as_ref().is_some_and(|d| d.id == conversation.id))
        {
            self.draft.set(None);
        }
        let snapshot = conversation.clone();
        self.conversations.update(|l| {
            match l.iter_mut().find(|c| c.id == conversation.id) {
                Some(c) => *c = conversation,
                None => l.push(conversation),
            }
            store::sort(l);
        });
        let db = self.rt.db();
        let errors = self.save_error;
        spawn_local(async move {
            if let Err(e) = store::save(&db, &snapshot).await {
                errors.set(Some(format!(
                    "The conversation could not be saved: {e}. It stays on screen; free some space and it will be saved with the next change."
                )));
            }
        });
    }

    /// Applies a change made outside the loop (rename, a chip removed,
    /// a retracted message) to the stored copy and to the idle session.
    fn edit<T>(&self, id: &str, f: impl Fn(&mut Conversation) -> T) -> Result<T, AssistantError> {
        if self.running_now(id) {
            return Err(AssistantError::Busy);
        }
        let mut c = self
            .find(id)
            .ok_or_else(|| AssistantError::Loop("that conversation no longer exists".into()))?;
        let out = f(&mut c);
        if let Some(s) = self.sessions.borrow_mut().get_mut(id)
            && let Some(sc) = s.agent.conversation_mut()
        {
            f(sc);
        }
        self.store(c);
        Ok(out)
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<(), AssistantError> {
        self.edit(id, |c| c.rename(title, now()))?
            .map_err(|e| AssistantError::Loop(e.to_string()))
    }

    /// Removes a skill chip: the skill is no longer sent as a tool.
    pub fn unload_skill(&self, id: &str, skill: &SkillId) -> Result<(), AssistantError> {
        self.edit(id, |c| {
            c.unload_skill(skill);
        })
    }

    /// Deletes a conversation; [`Assistant::undo_delete`] brings it back.
    pub fn delete(&self, id: &str) {
        if self.running_now(id) {
            self.stop(id);
        }
        self.sessions.borrow_mut().remove(id);
        let removed = self
            .conversations
            .with_untracked(|l| l.iter().position(|c| c.id == id));
        let Some(pos) = removed else {
            if self.current.get_untracked().as_deref() == Some(id) {
                self.new_conversation();
            }
            return;
        };
        let mut gone = None;
        self.conversations.update(|l| gone = Some(l.remove(pos)));
        if self.current.get_untracked().as_deref() == Some(id) {
            let next = self.conversations.with_untracked(|l| {
                l.get(pos.min(l.len().saturating_sub(1)))
                    .map(|c| c.id.clone())
            });
            match next {
                Some(n) => self.open(&n),
                None => self.new_conversation(),
            }
        }
        self.deleted.set(gone.map(|conversation| Deleted {
            conversation,
            artifacts: StoredRecords::default(),
        }));
        let db = self.rt.db();
        let errors = self.save_error;
        let deleted = self.deleted;
        let id = id.to_string();
        spawn_local(async move {
            match store::delete(&db, &id).await {
                Ok(artifacts) if !artifacts.is_empty() => deleted.update(|d| {
                    if let Some(d) = d.as_mut().filter(|d| d.conversation.id == id) {
                        d.artifacts = StoredRecords(send_wrapper::SendWrapper::new(artifacts));
                    }
                }),
                Ok(_) => {}
                Err(e) => {
                    errors.set(Some(format!("The conversation could not be deleted: {e}")));
                }
            }
        });
    }

    pub fn undo_delete(&self) {
        if let Some(d) = self.deleted.get_untracked() {
            self.deleted.set(None);
            let id = d.conversation.id.clone();
            self.store(d.conversation);
            if !d.artifacts.0.is_empty() {
                let db = self.rt.db();
                let errors = self.save_error;
                spawn_local(async move {
                    if let Err(e) = store::restore_artifacts(&db, d.artifacts.0.take()).await {
                        errors.set(Some(format!("The artifacts could not be restored: {e}")));
                    }
                });
            }
            self.open(&id);
        }
    }

    /// Stores the draft (when the open conversation is one) before the
    /// first thing is said in it; returns the open conversation's id.
    pub fn commit_current(&self, first_line: &str) -> Option<String> {
        let id = self.current.get_untracked()?;
        if let Some(mut d) = self.draft.get_untracked().filter(|d| d.id == id) {
            d.title = hearth_core::assistant::agent::title_from_first_message(first_line);
            if d.title.is_empty() {
                d.title = hearth_core::assistant::agent::conversation::UNTITLED.to_string();
            }
            d.updated_at_ms = now();
            self.store(d);
        }
        Some(id)
    }

    /// Keeps a command the person ran in conversation `id` as one of its
    /// messages, and stores the conversation (now the most recently used).
    /// A turn may be running there: its loop takes the command too, so the
    /// loop's next save keeps it and its next request tells the model.
    pub fn record_command(
        &self,
        id: &str,
        line: &str,
        call: hearth_core::assistant::agent::ToolCallRecord,
        from_form: bool,
    ) {
        let at = now();
        let in_session = {
            let mut sessions = self.sessions.borrow_mut();
            sessions.get_mut(id).map(|s| {
                s.agent.push_command(line, call.clone(), from_form, at);
                s.agent.conversation().clone()
            })
        };
        let updated = match in_session {
            Some(c) => Some(c),
            None => self.find(id).map(|mut c| {
                c.push_command(line, call, from_form, at);
                c
            }),
        };
        match updated {
            Some(c) => self.store(c),
            None => self.save_error.set(Some(
                "The command ran, but its conversation was deleted, so its result is only in Activity."
                    .to_string(),
            )),
        }
    }

    /// The estimated context of the next request in `conversation`, once
    /// the engine is in (tracked).
    pub fn context_estimate(&self, conversation: &Conversation) -> Option<ContextEstimate> {
        let engine = self.engine.get()?;
        let env = Env {
            rt: &self.rt,
            limits: self.limits(),
        };
        Some(engine.estimate(conversation, &env))
    }

    /// What the loop may send the model in use: for the model in this tab,
    /// its context and whether its template knows tools; for a server, the
    /// context window its model list gave.
    pub fn limits(&self) -> ModelLimits {
        let Some(config) = self.provider.get_untracked() else {
            return ModelLimits::default();
        };
        if config.in_tab() {
            return self.tab.limits(&config);
        }
        ModelLimits {
            context_window: self.settings.get_untracked().context_window,
            max_output: config.max_tokens.map(u64::from),
            tools: true,
        }
    }

    /// The context window the token meter fills against (tracked).
    pub fn context_window(&self) -> Option<u64> {
        let in_tab = self
            .provider
            .with(|p| p.as_ref().is_some_and(|p| p.in_tab()));
        if in_tab {
            self.tab.models.track();
            self.limits().context_window
        } else {
            self.settings.with(|s| s.context_window)
        }
    }

    /// Whether the model in use can call tools (tracked): a model in this
    /// tab whose chat template has no tools cannot.
    /// The provider and model the chat names: a model in this tab by its
    /// stored name, never its id.
    pub fn model_label(&self) -> Option<String> {
        let config = self.provider.get()?;
        let model = if config.in_tab() {
            self.tab.models.with(|l| {
                l.iter()
                    .find(|m| m.id == config.model)
                    .map(|m| m.name())
                    .unwrap_or_else(|| "a model that is no longer stored".into())
            })
        } else {
            config.model.clone()
        };
        Some(format!("{} · {model}", config.label()))
    }

    pub fn tools_available(&self) -> bool {
        let in_tab = self
            .provider
            .with(|p| p.as_ref().is_some_and(|p| p.in_tab()));
        if in_tab {
            self.tab.models.track();
        }
        self.limits().tools
    }

    // ----- the provider and settings -----

    pub async fn save_provider(&self, config: ProviderConfig) -> Result<(), AssistantError> {
        store::save_provider(&self.rt.db(), &config)
            .await
            .map_err(|e| AssistantError::Storage(e.to_string()))?;
        for s in self.sessions.borrow_mut().values_mut() {
            s.agent.set_provider(config.clone());
        }
        self.warm_engine();
        if !config.in_tab() {
            self.free_tab_model();
        }
        self.provider.set(Some(config));
        self.offers.set(Vec::new());
        Ok(())
    }

    /// Lets go of the model loaded in this tab (its memory is freed).
    fn free_tab_model(&self) {
        let tab = self.tab.clone();
        spawn_local(async move {
            tab.worker.unload().await;
            tab.runtime.set(crate::tabmodel::Runtime::Idle);
        });
    }

    /// Back to the command bar alone; the key is deleted from storage.
    pub async fn remove_provider(&self) -> Result<(), AssistantError> {
        store::remove_provider(&self.rt.db())
            .await
            .map_err(|e| AssistantError::Storage(e.to_string()))?;
        self.provider.set(None);
        self.free_tab_model();
        Ok(())
    }

    pub async fn save_settings(&self, settings: AssistantSettings) -> Result<(), AssistantError> {
        store::save_settings(&self.rt.db(), &settings)
            .await
            .map_err(|e| AssistantError::Storage(e.to_string()))?;
        self.settings.set(settings);
        Ok(())
    }

    /// Forgets everything in memory after "Clear all data".
    /// Forgets what is in memory and reads conversations, the provider and
    /// the settings again (after a restore or Clear all replaced them).
    pub async fn reload(&self) {
        self.reset();
        self.current.set(None);
        self.load().await;
    }

    pub fn reset(&self) {
        // Not loaded until `load` reads them again: sync must not read the
        // empty list in between as every conversation deleted.
        self.loaded.set(false);
        let ids: Vec<String> = self.running.get_untracked();
        for id in &ids {
            self.stop(id);
        }
        self.sessions.borrow_mut().clear();
        self.conversations.set(Vec::new());
        self.provider.set(None);
        self.settings.set(AssistantSettings::default());
        self.paused.set(Vec::new());
        self.retrying.set(HashMap::new());
        self.deleted.set(None);
        self.save_error.set(None);
        self.offers.set(Vec::new());
        self.local_probe.set(None);
        self.new_conversation();
    }

    // ----- sync -----

    /// The stored conversations for sync to read, or `None` until they
    /// are loaded (an empty list then would read as all of them deleted).
    pub fn synced_conversations<R>(&self, f: impl FnOnce(&[Conversation]) -> R) -> Option<R> {
        if !self.loaded.get_untracked() {
            return None;
        }
        Some(self.conversations.with_untracked(|l| f(l)))
    }

    /// Stored conversation `id` as it is in memory now.
    pub fn stored_conversation(&self, id: &str) -> Option<Conversation> {
        self.conversations
            .with_untracked(|l| l.iter().find(|c| c.id == id).cloned())
    }

    /// Takes in conversations another device changed, as sync derived
    /// them: the list, the open conversation and an idle session show
    /// them at once, and the session's next turn starts from them. Sync
    /// brings none in while a turn runs in it.
    pub fn take_synced(&self, puts: &[Conversation], deletes: &[String]) {
        {
            let mut sessions = self.sessions.borrow_mut();
            for c in puts {
                if let Some(s) = sessions.get_mut(&c.id)
                    && let Some(sc) = s.agent.conversation_mut()
                {
                    *sc = c.clone();
                }
            }
            for id in deletes {
                sessions.remove(id);
            }
        }
        self.conversations.update(|l| {
            for c in puts {
                match l.iter_mut().find(|x| x.id == c.id) {
                    Some(x) => *x = c.clone(),
                    None => l.push(c.clone()),
                }
            }
            l.retain(|c| !deletes.contains(&c.id));
            store::sort(l);
        });
        let open = self.current.get_untracked();
        if open.as_ref().is_some_and(|id| deletes.contains(id)) {
            let first = self
                .conversations
                .with_untracked(|l| l.first().map(|c| c.id.clone()));
            match first {
                Some(id) => self.open(&id),
                None => self.new_conversation(),
            }
        }
    }

    // ----- the agent loop -----

    /// Ready to start a turn: a provider is set (checked first, so no
    /// chunk is fetched for nothing) and the engine is in.
    async fn ready_for_turn(&self) -> Result<(), AssistantError> {
        if self.provider.with_untracked(Option::is_none) {
            return Err(AssistantError::NoProvider);
        }
        self.engine().await.map(|_| ())
    }

    /// The engine, fetching its chunk the first time.
    async fn engine(&self) -> Result<Rc<dyn Engine>, AssistantError> {
        if let Some(e) = self.engine.get_untracked() {
            return Ok(e);
        }
        let e = engine::load()
            .await
            .map_err(|_| AssistantError::Loop(crate::split::not_loaded("the assistant")))?;
        self.engine.set(Some(e.clone()));
        Ok(e)
    }

    /// Starts fetching the engine, so the first message does not wait.
    fn warm_engine(&self) {
        if self.engine.with_untracked(Option::is_some) {
            return;
        }
        let this = self.clone();
        spawn_local(async move {
            let _ = this.engine().await;
        });
    }

    fn config(&self) -> LoopConfig {
        LoopConfig {
            max_steps: self.settings.get_untracked().max_steps.max(1),
            ..LoopConfig::default()
        }
    }

    /// Runs `f` on the conversation's session, creating it if needed.
    fn with_session<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Session, &Env<'_>) -> T,
    ) -> Result<T, AssistantError> {
        let config = self
            .provider
            .get_untracked()
            .ok_or(AssistantError::NoProvider)?;
        let mut sessions = self.sessions.borrow_mut();
        if !sessions.contains_key(id) {
            let engine = self
                .engine
                .get_untracked()
                .ok_or_else(|| AssistantError::Loop(crate::split::not_loaded("the assistant")))?;
            let c = self
                .find(id)
                .ok_or_else(|| AssistantError::Loop("that conversation no longer exists".into()))?;
            let agent = engine.session(c, config, self.config(), now());
            sessions.insert(
                id.to_string(),
                Session {
                    agent,
                    requests: HashMap::new(),
                },
            );
        }
        let session = sessions.get_mut(id).ok_or(AssistantError::Busy)?;
        let env = Env {
            rt: &self.rt,
            limits: self.limits(),
        };
        Ok(f(session, &env))
    }

    fn started(&self, id: &str) {
        self.running.update(|r| {
            if !r.iter().any(|x| x == id) {
                r.push(id.to_string());
            }
        });
        self.paused.update(|p| p.retain(|x| x != id));
    }

    /// Sends a message in conversation `id` and runs the turn (fetching
    /// the engine first if it is not in yet).
    pub async fn send(
        &self,
        id: &str,
        text: &str,
        images: Vec<ImagePart>,
    ) -> Result<(), AssistantError> {
        self.ready_for_turn().await?;
        self.send_now(id, text, images)
    }

    fn send_now(&self, id: &str, text: &str, images: Vec<ImagePart>) -> Result<(), AssistantError> {
        let actions = self.with_session(id, |s, env| s.agent.send(text, images, env))?;
        let actions = actions.map_err(|e| AssistantError::Loop(e.to_string()))?;
        self.started(id);
        self.carry_out(id, actions);
        Ok(())
    }

    /// Replaces the last user message (and what followed) with `text`
    /// and sends it again.
    pub async fn edit_and_resend(&self, id: &str, text: &str) -> Result<(), AssistantError> {
        let pictures = self.last_pictures(id)?;
        if text.trim().is_empty() && pictures == 0 {
            return Err(AssistantError::Loop(
                "an empty message cannot be sent".into(),
            ));
        }
        // The engine first: nothing is retracted if it cannot arrive.
        self.ready_for_turn().await?;
        let images = self
            .edit(id, |c| c.retract_last_user_message(now()))?
            .map(|(_, images)| images)
            .unwrap_or_default();
        self.send_now(id, text, images)
    }

    /// Asks again for a reply to the last user message.
    pub async fn regenerate(&self, id: &str) -> Result<(), AssistantError> {
        self.last_pictures(id)?;
        self.ready_for_turn().await?;
        let (text, images) = self
            .edit(id, |c| c.retract_last_user_message(now()))?
            .ok_or_else(|| AssistantError::Loop("there is no message to answer".into()))?;
        self.send_now(id, &text, images)
    }

    /// How many pictures the last user message in `id` has, refused when
    /// the model in use cannot see them: checked before that message is
    /// taken back to be sent again, so it is never lost.
    fn last_pictures(&self, id: &str) -> Result<usize, AssistantError> {
        let count = self
            .conversation(id)
            .and_then(|c| {
                c.messages
                    .iter()
                    .rev()
                    .find(|m| m.role == hearth_core::assistant::agent::Role::User)
                    .map(|m| m.images.len())
            })
            .unwrap_or(0);
        if count > 0
            && let Some(why) = self.provider.with_untracked(|p| {
                p.as_ref()
                    .and_then(|p| p.vision().refusal().map(str::to_string))
            })
        {
            return Err(AssistantError::Loop(why));
        }
        Ok(count)
    }

    /// After the step limit, lets the turn go on.
    pub async fn continue_turn(&self, id: &str) -> Result<(), AssistantError> {
        self.ready_for_turn().await?;
        let actions = self.with_session(id, |s, env| s.agent.continue_after_limit(env))?;
        let actions = actions.map_err(|e| AssistantError::Loop(e.to_string()))?;
        self.started(id);
        self.carry_out(id, actions);
        Ok(())
    }

    /// Stop: aborts the stream and denies the conversation's waiting
    /// approvals; the conversation stays consistent.
    pub fn stop(&self, id: &str) {
        // Code the turn is running stops with it, rather than at its limit.
        self.rt.sandbox().stop_in(Some(id));
        self.handle(id, Event::Cancel);
        self.rt.approver().deny_conversation(id);
        self.retrying.update(|r| {
            r.remove(id);
        });
        self.running.update(|r| r.retain(|x| x != id));
    }

    fn handle(&self, id: &str, event: Event) {
        let actions = {
            let mut sessions = self.sessions.borrow_mut();
            let Some(s) = sessions.get_mut(id) else {
                return;
            };
            let env = Env {
                rt: &self.rt,
                limits: self.limits(),
            };
            s.agent.handle(event, &env)
        };
        self.carry_out(id, actions);
    }

    fn snapshot(&self, id: &str) -> Option<Conversation> {
        self.sessions
            .borrow()
            .get(id)
            .map(|s| s.agent.conversation().clone())
    }

    /// Carries out the loop's actions in order.
    fn carry_out(&self, id: &str, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Send { request, http } => {
                    let Ok(controller) = AbortController::new() else {
                        self.handle(
                            id,
                            Event::RequestFailed {
                                request,
                                error: "the browser cannot make requests here".into(),
                            },
                        );
                        continue;
                    };
                    let signal = controller.signal();
                    if let Some(s) = self.sessions.borrow_mut().get_mut(id) {
                        s.requests.insert(request, controller);
                    }
                    let this = self.clone();
                    let id = id.to_string();
                    if http.url == IN_TAB_URL {
                        spawn_local(
                            async move { this.stream_in_tab(&id, request, http, signal).await },
                        );
                    } else {
                        spawn_local(async move { this.stream(&id, request, http, signal).await });
                    }
                }
                Action::Abort { request } => {
                    let controller = self
                        .sessions
                        .borrow_mut()
                        .get_mut(id)
                        .and_then(|s| s.requests.remove(&request));
                    if let Some(c) = controller {
                        c.abort();
                    }
                }
                Action::RunTool { call } => {
                    let this = self.clone();
                    let id = id.to_string();
                    spawn_local(async move {
                        let result = this.rt.invoke_call(call).await;
                        this.handle(
                            &id,
                            Event::ToolFinished {
                                result: Box::new(result),
                            },
                        );
                    });
                }
                Action::CancelTool { call_id } => {
                    self.rt.approver().deny_call(&call_id);
                }
                Action::RetryLater {
                    request,
                    delay_ms,
                    error,
                } => {
                    let at_ms = now() + delay_ms as f64;
                    self.retrying.update(|r| {
                        r.insert(id.to_string(), RetryNotice { at_ms, error });
                    });
                    let this = self.clone();
                    let id = id.to_string();
                    spawn_local(async move {
                        gloo_timers::future::TimeoutFuture::new(
                            delay_ms.min(u32::MAX as u64) as u32
                        )
                        .await;
                        this.retrying.update(|r| {
                            r.remove(&id);
                        });
                        this.handle(&id, Event::RetryDue { request });
                    });
                }
                Action::TextDelta { .. } | Action::SkillsLoaded { .. } => {
                    if let Some(c) = self.snapshot(id) {
                        self.show(c);
                    }
                }
                Action::Changed => {
                    if let Some(c) = self.snapshot(id) {
                        self.store(c);
                    }
                }
                Action::TurnEnded { outcome } => {
                    self.running.update(|r| r.retain(|x| x != id));
                    self.retrying.update(|r| {
                        r.remove(id);
                    });
                    match outcome {
                        TurnOutcome::StepLimit { .. } => {
                            self.paused.update(|p| p.push(id.to_string()))
                        }
                        TurnOutcome::Answered
                        | TurnOutcome::Cancelled
                        | TurnOutcome::Failed { .. } => {}
                    }
                }
            }
        }
    }

    /// Updates what is on screen without storing (streamed text).
    fn show(&self, conversation: Conversation) {
        self.conversations.update(|l| {
            if let Some(c) = l.iter_mut().find(|c| c.id == conversation.id) {
                *c = conversation;
            }
        });
    }

    /// Sends one request and feeds its response to the loop as it comes.
    async fn stream(
        &self,
        id: &str,
        request: RequestId,
        http_request: hearth_core::assistant::providers::HttpRequest,
        signal: web_sys::AbortSignal,
    ) {
        let mut response = match http::send(&http_request, Some(&signal)).await {
            Ok(r) => r,
            Err(http::FetchError::Aborted) => return,
            Err(http::FetchError::Network(error)) => {
                self.forget_request(id, request);
                self.handle(id, Event::RequestFailed { request, error });
                return;
            }
        };
        self.handle(
            id,
            Event::ResponseStarted {
                request,
                status: response.status,
                headers: response.headers.clone(),
            },
        );
        loop {
            if signal.aborted() {
                response.cancel();
                return;
            }
            match response.next_chunk().await {
                Ok(Some(bytes)) => self.handle(id, Event::ResponseChunk { request, bytes }),
                Ok(None) => {
                    self.forget_request(id, request);
                    self.handle(id, Event::ResponseEnded { request });
                    return;
                }
                Err(http::FetchError::Aborted) => return,
                Err(http::FetchError::Network(error)) => {
                    self.forget_request(id, request);
                    self.handle(id, Event::RequestFailed { request, error });
                    return;
                }
            }
        }
    }

    /// Runs one request on the model in this tab: the worker loads the
    /// model if needed (its progress shows in the chat) and sends the
    /// reply as JSON lines, which the loop decodes like any stream. Stop
    /// aborts `signal`, which tells the worker to stop at the next token.
    async fn stream_in_tab(
        &self,
        id: &str,
        request: RequestId,
        http_request: hearth_core::assistant::providers::HttpRequest,
        signal: web_sys::AbortSignal,
    ) {
        use futures::StreamExt;
        use wasm_bindgen::JsCast;
        use wasm_bindgen::closure::Closure;

        let config = self.provider.get_untracked();
        let load = config.as_ref().and_then(|c| self.tab.load_for(c));
        self.handle(
            id,
            Event::ResponseStarted {
                request,
                status: 200,
                headers: Vec::new(),
            },
        );
        let Some(load) = load else {
            let missing = serde_json::json!({"error": {
                "type": "model_missing",
                "message": "the chosen model is not among the stored ones"
            }});
            self.handle(
                id,
                Event::ResponseChunk {
                    request,
                    bytes: format!("{missing}\n").into_bytes(),
                },
            );
            self.forget_request(id, request);
            self.handle(id, Event::ResponseEnded { request });
            return;
        };
        let body = http_request.body_text().unwrap_or_default().to_string();
        let (worker_id, mut events) = self.tab.worker.chat(&load, &body);
        let tab = self.tab.clone();
        let on_abort = Closure::<dyn FnMut()>::new(move || tab.worker.stop(worker_id));
        signal.set_onabort(Some(on_abort.as_ref().unchecked_ref()));
        if signal.aborted() {
            self.tab.worker.stop(worker_id);
        }
        while let Some(event) = events.next().await {
            self.tab.observe(&load.model, &event);
            match event {
                crate::tabmodel::Event::Progress { .. } | crate::tabmodel::Event::Loaded { .. } => {
                }
                crate::tabmodel::Event::Line(line) => {
                    if signal.aborted() {
                        continue;
                    }
                    let mut bytes = line.into_bytes();
                    bytes.push(b'\n');
                    self.handle(id, Event::ResponseChunk { request, bytes });
                }
                crate::tabmodel::Event::Done => break,
            }
        }
        signal.set_onabort(None);
        drop(on_abort);
        if signal.aborted() {
            return;
        }
        self.forget_request(id, request);
        self.handle(id, Event::ResponseEnded { request });
    }

    fn forget_request(&self, id: &str, request: RequestId) {
        if let Some(s) = self.sessions.borrow_mut().get_mut(id) {
            s.requests.remove(&request);
        }
    }
}

/// Lists a provider's models (every page, up to five), or says in plain
/// words why it could not.
pub async fn fetch_models(
    config: &ProviderConfig,
    timeout_ms: u32,
) -> Result<Vec<ModelInfo>, ProviderError> {
    let engine = engine::load().await.map_err(|_| ProviderError {
        kind: ErrorKind::Network,
        status: None,
        message: crate::split::not_loaded("model providers"),
        advice: String::new(),
        retry: Retry::Never,
        detail: None,
    })?;
    engine.fetch_models(config.clone(), timeout_ms).await
}
