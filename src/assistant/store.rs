//! Conversations and the assistant's settings in IndexedDB: the
//! `conversations` store (schema v3) and three records of `settings`.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use hearth_core::assistant::agent::Conversation;
use hearth_core::assistant::providers::ProviderConfig;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use crate::storage::{Db, StorageError};
use hearth_core::stores::{ARTIFACTS, ARTIFACTS_BY_CONVERSATION, CONVERSATIONS, SETTINGS};

/// The settings record holding the model provider (with its API key,
/// which stays in this browser).
pub const PROVIDER_KEY: &str = "provider";
/// The settings record holding [`AssistantSettings`].
pub const ASSISTANT_KEY: &str = "assistant";
/// Set once the person dismissed the first-start offer of a local model.
pub const OFFER_DISMISSED_KEY: &str = "provider_offer_dismissed";
/// The settings record holding the last [`LocalProbe`].
pub const LOCAL_PROBE_KEY: &str = "local_server_probe";

/// What the last look for model servers on this machine found: asked once
/// and remembered, so loading the app does not knock on local ports (and
/// fill the console with refused connections) every time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalProbe {
    /// When the servers were asked.
    pub at_ms: f64,
    /// The local presets that answered, with the models they listed.
    #[serde(default)]
    pub found: Vec<FoundServer>,
}

/// A local preset that answered the probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoundServer {
    pub preset: String,
    #[serde(default)]
    pub models: Vec<hearth_core::assistant::providers::ModelInfo>,
}

/// How the assistant behaves, whatever the provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssistantSettings {
    /// Model requests per turn before the loop pauses and asks to go on.
    #[serde(default = "default_steps")]
    pub max_steps: u32,
    /// Start new conversations with the skills used in at least 30% of
    /// conversations already loaded. Off unless turned on.
    #[serde(default)]
    pub always_loaded: bool,
    /// The chosen model's context window, when its server said; the token
    /// meter fills against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

fn default_steps() -> u32 {
    10
}

impl Default for AssistantSettings {
    fn default() -> Self {
        Self {
            max_steps: default_steps(),
            always_loaded: false,
            context_window: None,
        }
    }
}

/// Every stored conversation, most recently updated first, repaired so
/// none is left "streaming" by a closed tab. Records that no longer
/// decode stay in the store and are counted.
pub async fn load_all(db: &Db, now_ms: f64) -> Result<(Vec<Conversation>, usize), StorageError> {
    let (mut list, bad) = db.all::<Conversation>(CONVERSATIONS).await?;
    for c in &mut list {
        c.repair(now_ms);
    }
    sort(&mut list);
    Ok((list, bad))
}

/// Most recently updated first.
pub fn sort(list: &mut [Conversation]) {
    list.sort_by(|a, b| b.updated_at_ms.total_cmp(&a.updated_at_ms));
}

pub async fn save(db: &Db, conversation: &Conversation) -> Result<(), StorageError> {
    db.put(CONVERSATIONS, conversation).await
}

/// Deletes a conversation and its artifacts together; returns the
/// artifacts as they were stored, so an undo can put them back unread.
pub async fn delete(db: &Rc<Db>, id: &str) -> Result<Vec<JsValue>, StorageError> {
    crate::split::enter(delete_in_chunk(db.clone(), id.to_string()), || {
        StorageError::Write(crate::split::not_loaded("deleting conversations"))
    })
    .await
}

/// Puts back the artifacts of a conversation whose delete was undone.
pub async fn restore_artifacts(db: &Rc<Db>, artifacts: Vec<JsValue>) -> Result<(), StorageError> {
    crate::split::enter(restore_in_chunk(db.clone(), artifacts), || {
        StorageError::Write(crate::split::not_loaded("restoring artifacts"))
    })
    .await
}

// Deleting a conversation with what it owns, and its undo, are rare and
// the transaction across two stores is sizeable code: the
// `conversation_delete` chunk, fetched the first time a conversation is
// deleted, keeps it out of the first load.
crate::split::split_point!(
    conversation_delete,
    fn delete_in_chunk(
        db: Rc<Db>,
        id: String,
    ) -> LocalBoxFuture<'static, Result<Vec<JsValue>, StorageError>> {
        Box::pin(async move {
            db.delete_with_owned(CONVERSATIONS, &id, ARTIFACTS, ARTIFACTS_BY_CONVERSATION)
                .await
        })
    }
);

crate::split::split_point!(
    conversation_delete,
    fn restore_in_chunk(
        db: Rc<Db>,
        artifacts: Vec<JsValue>,
    ) -> LocalBoxFuture<'static, Result<(), StorageError>> {
        Box::pin(async move {
            let entries: Vec<(&str, JsValue)> =
                artifacts.into_iter().map(|a| (ARTIFACTS, a)).collect();
            db.put_across(&entries).await
        })
    }
);

pub async fn provider(db: &Db) -> Result<Option<ProviderConfig>, StorageError> {
    db.setting(PROVIDER_KEY).await
}

pub async fn save_provider(db: &Db, config: &ProviderConfig) -> Result<(), StorageError> {
    db.set_setting(PROVIDER_KEY, config).await
}

pub async fn remove_provider(db: &Db) -> Result<(), StorageError> {
    db.delete(SETTINGS, PROVIDER_KEY).await
}

pub async fn settings(db: &Db) -> Result<AssistantSettings, StorageError> {
    Ok(db.setting(ASSISTANT_KEY).await?.unwrap_or_default())
}

pub async fn save_settings(db: &Db, settings: &AssistantSettings) -> Result<(), StorageError> {
    db.set_setting(ASSISTANT_KEY, settings).await
}

pub async fn local_probe(db: &Db) -> Result<Option<LocalProbe>, StorageError> {
    db.setting(LOCAL_PROBE_KEY).await
}

pub async fn save_local_probe(db: &Db, probe: &LocalProbe) -> Result<(), StorageError> {
    db.set_setting(LOCAL_PROBE_KEY, probe).await
}
