//! Sync's working half, a chunk of its own: it links Automerge, so a
//! person who never turns sync on never downloads it. Everything here is
//! reached through the split points at the bottom.
//!
//! A round: records changed here since the last round (found by comparing
//! each record's hash with the one last synced) become document changes;
//! the replica pushes them and pulls other devices'; documents another
//! device changed are derived back into records and stored. The record is
//! always derived from its document and the document fed from the record
//! in one direction each, by hash, so the two never drift apart.
//!
//! What a device keeps between visits lives in its own IndexedDB database
//! (`hearth-sync`): the documents, the cursor, the store's address and
//! keys, and the unlocked vault key, so rounds in the background need no
//! passphrase. Turning sync off deletes that database; records stay.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hearth_core::assistant::agent::Conversation;
use hearth_core::builtin::collection::{Change, Record};
use hearth_core::builtin::memory::Memory;
use hearth_core::builtin::notes::Note;
use hearth_core::builtin::tasks::Task;
use hearth_core::http::{HttpMethod, HttpRequest};
use hearth_core::stores::{CONVERSATIONS, MEMORIES, NOTES, Schema, StoreSpec, TASKS};
use hearth_sync::doc::Presence;
use hearth_sync::replica::{Cursor, Device, DeviceId, Fetched, Replica, SyncFailure};
use hearth_sync::s3::{Bucket, Credentials, Put, Request, StoreError};
use hearth_sync::{Entropy, KdfParams, Keyfile, RecoveryKey, SyncError, Vault};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::{Attention, ConflictRow, Connected, DeviceRow, Form, Outcome, Resolve};
use crate::assistant::Assistant;
use crate::runtime::Runtime;
use crate::storage::Db;
use crate::version::bump;

const SYNC_DB: &str = "hearth-sync";
const DOCS: &str = "docs";
const STATE: &str = "state";
const SYNC_SCHEMA: Schema = Schema {
    version: 1,
    stores: &[
        StoreSpec {
            name: DOCS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: STATE,
            key_path: "id",
            indexes: &[],
        },
    ],
};
const SYNC_CHAIN: &[Schema] = &[SYNC_SCHEMA];
/// The bucket's one object not sealed by the vault key: the vault key,
/// wrapped by the passphrase and by the recovery key.
const KEYFILE: &str = "keyfile";
/// A device folds the bucket into a snapshot after this many change
/// objects of its own.
const COMPACT_EVERY: u64 = 50;

/// The browser's CSPRNG.
struct BrowserEntropy;

impl Entropy for BrowserEntropy {
    fn fill(&mut self, out: &mut [u8]) {
        let crypto = web_sys::window().and_then(|w| w.crypto().ok());
        // getRandomValues fills at most 65,536 bytes a call.
        for chunk in out.chunks_mut(65_536) {
            let filled = crypto
                .as_ref()
                .is_some_and(|c| c.get_random_values_with_u8_array(chunk).is_ok());
            // Sealing with a predictable nonce would be worse than not
            // syncing: every browser Hearth runs in has a CSPRNG.
            assert!(filled, "the browser gave no random bytes");
        }
    }
}

/// The bucket, through `fetch` straight from the tab.
struct FetchStore {
    bucket: Bucket,
    creds: Credentials,
}

fn now_secs() -> u64 {
    (js_sys::Date::now() / 1000.0) as u64
}

impl FetchStore {
    async fn exchange(&self, req: Request) -> Result<(u16, String, Vec<u8>), StoreError> {
        let method = match req.method {
            "GET" => HttpMethod::Get,
            "PUT" => HttpMethod::Put,
            "DELETE" => HttpMethod::Delete,
            _ => HttpMethod::Post,
        };
        let http = HttpRequest {
            method,
            url: req.url,
            headers: req.headers,
            body: (!req.body.is_empty() || method == HttpMethod::Put).then_some(req.body),
        };
        let unreachable = |e: wasm_bindgen::JsValue| {
            let why = e
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .or_else(|| e.as_string())
                .unwrap_or_else(|| "the request failed".into());
            StoreError::Unreachable(format!("{why}; if the store is up, check its CORS rule"))
        };
        let response = match crate::fetch::send(&http, &crate::fetch::Options::default()).await {
            Ok(r) => r,
            Err(crate::fetch::SendError::Header(h)) => {
                return Err(StoreError::Unreachable(format!(
                    "the browser refused header {h}"
                )));
            }
            Err(crate::fetch::SendError::Setup(e) | crate::fetch::SendError::Browser(e)) => {
                return Err(unreachable(e));
            }
        };
        let status = response.status();
        let etag = response
            .headers()
            .get("etag")
            .ok()
            .flatten()
            .unwrap_or_default();
        let buffer = response.array_buffer().map_err(unreachable)?;
        let body = JsFuture::from(buffer).await.map_err(unreachable)?;
        Ok((status, etag, js_sys::Uint8Array::new(&body).to_vec()))
    }
}

impl hearth_sync::replica::Store for FetchStore {
    async fn get(&self, name: &str) -> Result<Option<Fetched>, StoreError> {
        let (status, etag, body) = self
            .exchange(self.bucket.get(&self.creds, now_secs(), name))
            .await?;
        self.bucket.got(status, etag, body)
    }

    async fn put(&self, name: &str, body: Vec<u8>, put: Put) -> Result<String, StoreError> {
        let (status, etag, body) = self
            .exchange(self.bucket.put(&self.creds, now_secs(), name, body, put))
            .await?;
        self.bucket.stored(status, etag, &body)
    }

    async fn delete(&self, name: &str) -> Result<(), StoreError> {
        let (status, _, body) = self
            .exchange(self.bucket.delete(&self.creds, now_secs(), name))
            .await?;
        self.bucket.deleted(status, &body)
    }
}

/// What this device keeps in its sync database, besides the documents.
#[derive(Clone, Serialize, Deserialize)]
struct Saved {
    id: String,
    endpoint: String,
    region: String,
    bucket: String,
    access_key_id: String,
    secret_access_key: String,
    /// The unlocked vault ([`Vault::export_local`]).
    vault: String,
    device: String,
    device_name: String,
    cursor: Cursor,
    /// Each synced record's hash as last stored here, by document id: a
    /// record whose hash differs was changed here since.
    synced: BTreeMap<String, String>,
    /// Documents whose record could not be stored yet: derived again next
    /// round.
    #[serde(default)]
    stale: BTreeSet<String>,
    #[serde(default)]
    devices: Vec<DeviceRow>,
    #[serde(default)]
    last_ok_ms: Option<f64>,
    /// Records waiting for the person: deleted on one device while edited
    /// on another, or a field set apart on two.
    #[serde(default)]
    attention: BTreeMap<String, Attention>,
}

#[derive(Serialize, Deserialize)]
struct SavedDoc {
    id: String,
    bytes: String,
}

struct Engine {
    db: Rc<Db>,
    replica: Replica,
    store: FetchStore,
    saved: Saved,
}

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

async fn open_db() -> Result<Db, String> {
    Db::open_with_migrations(SYNC_DB, SYNC_SCHEMA, SYNC_CHAIN, &[])
        .await
        .map_err(|e| format!("sync's storage did not open: {e}"))
}

fn store_of(saved: &Saved) -> FetchStore {
    FetchStore {
        bucket: Bucket {
            endpoint: saved.endpoint.trim_end_matches('/').to_string(),
            region: saved.region.clone(),
            name: saved.bucket.clone(),
        },
        creds: Credentials {
            access_key_id: saved.access_key_id.clone(),
            secret_access_key: saved.secret_access_key.clone(),
        },
    }
}

/// The engine as this device stored it, or `None` when sync is off.
async fn load() -> Result<Option<Engine>, String> {
    let db = open_db().await?;
    let Some(saved) = db
        .get::<Saved>(STATE, STATE)
        .await
        .map_err(|e| e.to_string())?
    else {
        db.close();
        return Ok(None);
    };
    let (docs, _) = db.all::<SavedDoc>(DOCS).await.map_err(|e| e.to_string())?;
    let docs = docs
        .into_iter()
        .filter_map(|d| B64.decode(d.bytes).ok().map(|b| (d.id, b)));
    let vault = Vault::import_local(&saved.vault).map_err(|e| e.to_string())?;
    let device = DeviceId::parse(&saved.device).ok_or("this device's sync id is damaged")?;
    let replica = Replica::resume(
        vault,
        device,
        &saved.device_name,
        saved.cursor.clone(),
        docs,
    )
    .map_err(|e| e.to_string())?;
    Ok(Some(Engine {
        db: Rc::new(db),
        store: store_of(&saved),
        replica,
        saved,
    }))
}

fn fnv(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A record as sync sees it: its JSON and the hash of that JSON.
fn json_of<T: Serialize>(record: &T) -> Option<(Json, String)> {
    let text = serde_json::to_string(record).ok()?;
    let hash = fnv(&text);
    Some((serde_json::from_str(&text).ok()?, hash))
}

/// Feeds one kind's records changed here into their documents. With
/// `deletes` off, a synced record missing here is not sent as deleted
/// (the list may lack records it could not read).
fn feed<'a, T: Record + 'a>(
    e: &mut Engine,
    kind: &str,
    records: impl Iterator<Item = &'a T>,
    deletes: bool,
) -> Result<(), String> {
    let prefix = format!("{kind}:");
    let mut here = BTreeSet::new();
    for r in records {
        let id = format!("{prefix}{}", r.id());
        let Some((json, hash)) = json_of(r) else {
            continue;
        };
        if e.saved.synced.get(&id) != Some(&hash) {
            e.replica.put(&id, &json).map_err(|e| e.to_string())?;
            e.saved.synced.insert(id.clone(), hash);
        }
        here.insert(id);
    }
    if !deletes {
        return Ok(());
    }
    let gone: Vec<String> = e
        .saved
        .synced
        .keys()
        .filter(|id| id.starts_with(&prefix) && !here.contains(*id))
        .cloned()
        .collect();
    for id in gone {
        e.replica.delete(&id).map_err(|e| e.to_string())?;
        e.saved.synced.remove(&id);
    }
    Ok(())
}

/// One kind's records to store here, derived from their documents.
struct Derived<T> {
    puts: Vec<T>,
    deletes: Vec<String>,
    /// The documents these came from, to mark settled once stored.
    docs: Vec<String>,
}

impl<T> Default for Derived<T> {
    fn default() -> Self {
        Derived {
            puts: Vec::new(),
            deletes: Vec::new(),
            docs: Vec::new(),
        }
    }
}

fn derive_into<T: Record>(
    e: &mut Engine,
    id: &str,
    out: &mut Derived<T>,
    problems: &mut Vec<String>,
) -> Result<(), SyncError> {
    let Some(derived) = e.replica.derive(id)? else {
        return Ok(());
    };
    let record_id = id.split_once(':').map(|(_, r)| r).unwrap_or(id);
    let asks = derived.presence == Presence::DeletedWhileEdited || !derived.conflicts.is_empty();
    if asks {
        let title = ["title", "text"]
            .iter()
            .find_map(|k| derived.record.get(*k).and_then(Json::as_str))
            .unwrap_or(record_id);
        let title: String = title.chars().take(80).collect();
        e.saved.attention.insert(
            id.to_string(),
            Attention {
                doc: id.to_string(),
                title,
                deleted_while_edited: derived.presence == Presence::DeletedWhileEdited,
                conflicts: derived
                    .conflicts
                    .iter()
                    .map(|c| ConflictRow {
                        field: c.path.clone(),
                        values: c.values.iter().map(Json::to_string).collect(),
                    })
                    .collect(),
            },
        );
    } else {
        e.saved.attention.remove(id);
    }
    match derived.presence {
        Presence::Deleted => {
            out.deletes.push(record_id.to_string());
            out.docs.push(id.to_string());
            e.saved.synced.remove(id);
        }
        // Deleted on one device while edited on another: the record stays,
        // so nothing is lost.
        Presence::Live | Presence::DeletedWhileEdited => {
            match serde_json::from_value::<T>(derived.record) {
                Ok(record) => {
                    if let Some((_, hash)) = json_of(&record) {
                        e.saved.synced.insert(id.to_string(), hash);
                    }
                    out.puts.push(record);
                    out.docs.push(id.to_string());
                }
                Err(err) => problems.push(format!("{id}: {err}")),
            }
        }
    }
    Ok(())
}

/// Stores one kind's derived records here, then applies them in memory.
async fn store_kind<T: Record, C: hearth_core::builtin::collection::Store<T>>(
    db: &Db,
    store: &str,
    collection: &RefCell<C>,
    version: leptos::prelude::RwSignal<u64>,
    derived: Derived<T>,
) -> Result<(), String> {
    if derived.puts.is_empty() && derived.deletes.is_empty() {
        return Ok(());
    }
    db.apply(store, &derived.puts, &derived.deletes)
        .await
        .map_err(|e| e.to_string())?;
    let changes: Vec<Change<T>> = derived
        .puts
        .into_iter()
        .map(Change::Put)
        .chain(derived.deletes.into_iter().map(Change::Delete))
        .collect();
    collection.borrow_mut().apply_changes(&changes);
    bump(version);
    Ok(())
}

/// Stores the conversations derived here. The assistant takes them in
/// first, then they are written: a save the person makes after this
/// builds on them, and its write lands after this one.
async fn store_conversations(
    db: &Db,
    assistant: &Assistant,
    derived: &Derived<Conversation>,
) -> Result<(), String> {
    if derived.puts.is_empty() && derived.deletes.is_empty() {
        return Ok(());
    }
    assistant.take_synced(&derived.puts, &derived.deletes);
    db.apply(CONVERSATIONS, &derived.puts, &derived.deletes)
        .await
        .map_err(|e| e.to_string())
}

/// Whether conversation document `id` must wait for a later round: a
/// turn runs in it (its loop holds its own copy and saves it as the turn
/// goes), the conversations are not loaded, or it changed here since this
/// round fed it. Deriving it now would replace what is in memory with a
/// record that lacks the newest local edit.
fn conversation_busy(e: &Engine, assistant: &Assistant, id: &str) -> bool {
    let record_id = id.split_once(':').map(|(_, r)| r).unwrap_or(id);
    if assistant.synced_conversations(|_| ()).is_none() || assistant.running_now(record_id) {
        return true;
    }
    let here = assistant
        .stored_conversation(record_id)
        .and_then(|c| json_of(&c))
        .map(|(_, hash)| hash);
    here.as_ref() != e.saved.synced.get(id)
}

/// Derives the documents named into records and stores them here. A
/// failed write, or a conversation busy here, leaves them to be derived
/// again next round.
async fn settle(
    rt: &Runtime,
    assistant: &Assistant,
    e: &mut Engine,
    ids: &BTreeSet<String>,
) -> (Result<(), String>, Vec<String>) {
    let mut notes = Derived::<Note>::default();
    let mut tasks = Derived::<Task>::default();
    let mut memories = Derived::<Memory>::default();
    let mut conversations = Derived::<Conversation>::default();
    let mut problems = Vec::new();
    for id in ids {
        let kind = id.split_once(':').map(|(k, _)| k).unwrap_or("");
        let derived = match kind {
            "note" => derive_into(e, id, &mut notes, &mut problems),
            "task" => derive_into(e, id, &mut tasks, &mut problems),
            "memory" => derive_into(e, id, &mut memories, &mut problems),
            "conversation" if conversation_busy(e, assistant, id) => {
                e.saved.stale.insert(id.clone());
                Ok(())
            }
            "conversation" => derive_into(e, id, &mut conversations, &mut problems),
            _ => Ok(()),
        };
        if let Err(err) = derived {
            problems.push(format!("{id}: {err}"));
        }
    }
    let db = rt.db();
    let d = rt.data();
    let v = d.versions;
    let docs: Vec<String> = [
        &notes.docs,
        &tasks.docs,
        &memories.docs,
        &conversations.docs,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    let stored = async {
        store_kind(&db, NOTES, &d.notes, v.notes, notes).await?;
        store_kind(&db, TASKS, &d.tasks, v.tasks, tasks).await?;
        store_kind(&db, MEMORIES, &d.memories, v.memories, memories).await?;
        store_conversations(&db, assistant, &conversations).await
    }
    .await;
    match stored {
        // The records stored here now show their whole documents.
        Ok(()) => docs.iter().for_each(|id| e.replica.settled(id)),
        Err(_) => e.saved.stale.extend(ids.iter().cloned()),
    }
    (stored, problems)
}

/// Saves the documents named, and the state, in the sync database.
async fn persist(e: &mut Engine, ids: &BTreeSet<String>) -> Result<(), String> {
    let docs: Vec<SavedDoc> = ids
        .iter()
        .filter_map(|id| {
            e.replica.save(id).map(|bytes| SavedDoc {
                id: id.clone(),
                bytes: B64.encode(bytes),
            })
        })
        .collect();
    e.db.apply(DOCS, &docs, &[])
        .await
        .map_err(|e| format!("sync's storage: {e}"))?;
    e.saved.cursor = e.replica.cursor().clone();
    e.db.put(STATE, &e.saved)
        .await
        .map_err(|e| format!("sync's storage: {e}"))
}

async fn run_round(rt: &Runtime, assistant: &Assistant, e: &mut Engine) -> Outcome {
    let data = rt.data();
    // Conversations that no longer decode are not in the list; while there
    // are any, a missing conversation is not sent as deleted.
    let readable = leptos::prelude::GetUntracked::get_untracked(&assistant.undecodable) == 0;
    let fed = (|| {
        feed(e, "note", data.notes.borrow().iter(), true)?;
        feed(e, "task", data.tasks.borrow().iter(), true)?;
        feed(e, "memory", data.memories.borrow().iter(), true)?;
        assistant
            .synced_conversations(|l| feed(e, "conversation", l.iter(), readable))
            .unwrap_or(Ok(()))
    })();
    let mut touched: BTreeSet<String> = e.replica.cursor().dirty.clone();
    if let Err(err) = fed {
        return Outcome::failed(err, e.replica.waiting());
    }
    let own_before = e.replica.cursor().next_seq;
    let result = e
        .replica
        .sync(&e.store, js_sys::Date::now() as u64, &mut BrowserEntropy)
        .await;
    let report = match result {
        Ok(r) => r,
        Err(failure) => {
            let waiting = e.replica.waiting();
            // What changed here stays queued for the next round.
            let kept = persist(e, &touched).await;
            let message = match (failure, kept) {
                (f, Ok(())) => describe(&f),
                (f, Err(k)) => format!("{}; {k}", describe(&f)),
            };
            let offline = message.contains("did not answer");
            return Outcome {
                error: Some(message),
                offline,
                waiting,
                ..Outcome::default()
            };
        }
    };
    e.saved.devices = device_rows(&report.devices, &e.replica.device().to_string());
    let mut to_derive: BTreeSet<String> = std::mem::take(&mut e.saved.stale);
    to_derive.extend(report.changed.iter().cloned());
    let (stored, mut problems) = settle(rt, assistant, e, &to_derive).await;
    touched.extend(to_derive);
    let mut compact_note = None;
    let compact_due = own_before / COMPACT_EVERY != e.replica.cursor().next_seq / COMPACT_EVERY;
    if report.pushed > 0
        && compact_due
        && let Err(f) = e
            .replica
            .compact(&e.store, js_sys::Date::now() as u64, &mut BrowserEntropy)
            .await
    {
        compact_note = Some(format!("compaction waits: {}", describe(&f)));
    }
    let now = js_sys::Date::now();
    e.saved.last_ok_ms = Some(now);
    let kept = persist(e, &touched).await;
    let mut refused: Vec<String> = report
        .refused
        .iter()
        .map(|(name, why)| format!("{}: {why}", refused_name(e, name)))
        .collect();
    refused.append(&mut problems);
    refused.extend(compact_note);
    let error = match (stored, kept) {
        (Ok(()), Ok(())) => None,
        (Err(a), _) => Some(format!("records from other devices were not stored: {a}")),
        (_, Err(b)) => Some(b),
    };
    Outcome {
        error,
        offline: false,
        waiting: e.replica.waiting(),
        pushed: report.pushed,
        pulled: report.pulled,
        changed: report.changed.len(),
        refused,
        last_ok_ms: e.saved.last_ok_ms,
        devices: e.saved.devices.clone(),
        attention: e.saved.attention.values().cloned().collect(),
    }
}

/// What a refusal names, as the person knows it: a record of this device
/// (one too large to send) by its kind and title, an object by its name.
fn refused_name(e: &mut Engine, name: &str) -> String {
    let Some((kind, _)) = name.split_once(':') else {
        return name.to_string();
    };
    let title = e.replica.derive(name).ok().flatten().and_then(|d| {
        ["title", "text"]
            .iter()
            .find_map(|k| d.record.get(*k).and_then(Json::as_str).map(str::to_string))
    });
    let kind = match kind {
        "conversation" => "Conversation",
        "note" => "Note",
        "task" => "Task",
        "memory" => "Memory",
        _ => return name.to_string(),
    };
    match title {
        Some(t) => format!("{kind} “{}”", t.chars().take(80).collect::<String>()),
        None => kind.to_string(),
    }
}

/// The vault's devices as Settings lists them.
fn device_rows(devices: &[Device], me: &str) -> Vec<DeviceRow> {
    devices
        .iter()
        .map(|d| DeviceRow {
            this_device: d.id == me,
            name: d.name.clone(),
            added_ms: d.added_ms as f64,
        })
        .collect()
}

fn describe(f: &SyncFailure) -> String {
    f.to_string()
}

pub(super) async fn round(rt: Runtime, assistant: Assistant) -> Outcome {
    let taken = ENGINE.with(|c| c.borrow_mut().take());
    let mut engine = match taken {
        Some(e) => e,
        None => match load().await {
            Ok(Some(e)) => e,
            Ok(None) => return Outcome::failed("sync is off on this device".into(), 0),
            Err(e) => return Outcome::failed(e, 0),
        },
    };
    let outcome = run_round(&rt, &assistant, &mut engine).await;
    ENGINE.with(|c| *c.borrow_mut() = Some(engine));
    outcome
}

fn check_form(form: &Form) -> Result<(), String> {
    let endpoint = form.endpoint.trim();
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return Err("the endpoint is a URL starting with https:// (or http:// for a store on this machine or your network)".into());
    }
    for (value, what) in [
        (&form.bucket, "the bucket's name"),
        (&form.access_key_id, "the access key ID"),
        (&form.secret_access_key, "the secret access key"),
    ] {
        if value.trim().is_empty() {
            return Err(format!("fill in {what}"));
        }
    }
    if form.passphrase.is_empty() && form.recovery.trim().is_empty() {
        return Err("fill in the vault's passphrase".into());
    }
    Ok(())
}

/// Sets sync up on this device: a new vault in an empty bucket, or this
/// device joined to the vault already there. Nothing is written to the
/// bucket until the passphrase (or recovery key) has opened the vault.
pub(super) async fn connect(form: Form) -> Result<Connected, String> {
    check_form(&form)?;
    let mut saved = Saved {
        id: STATE.into(),
        endpoint: form.endpoint.trim().trim_end_matches('/').to_string(),
        region: if form.region.trim().is_empty() {
            "us-east-1".into()
        } else {
            form.region.trim().to_string()
        },
        bucket: form.bucket.trim().to_string(),
        access_key_id: form.access_key_id.trim().to_string(),
        secret_access_key: form.secret_access_key.trim().to_string(),
        vault: String::new(),
        device: String::new(),
        device_name: if form.device_name.trim().is_empty() {
            "This browser".into()
        } else {
            form.device_name.trim().to_string()
        },
        cursor: Cursor::default(),
        synced: BTreeMap::new(),
        stale: BTreeSet::new(),
        devices: Vec::new(),
        last_ok_ms: None,
        attention: BTreeMap::new(),
    };
    let store = store_of(&saved);
    use hearth_sync::replica::Store as _;
    let found = store.get(KEYFILE).await.map_err(|e| e.to_string())?;
    let mut entropy = BrowserEntropy;
    let (vault, recovery) = match found {
        None if !form.recovery.trim().is_empty() => {
            return Err(
                "this bucket holds no vault yet, so there is nothing a recovery key could open"
                    .into(),
            );
        }
        None => {
            let (file, vault, recovery) =
                Keyfile::create(&form.passphrase, KdfParams::RECOMMENDED, &mut entropy)
                    .map_err(|e| e.to_string())?;
            match store
                .put(KEYFILE, file.to_json().into_bytes(), Put::IfAbsent)
                .await
            {
                Ok(_) => {}
                Err(StoreError::Conflict) => {
                    return Err("another device set up a vault in this bucket at the same moment: connect again to join it".into());
                }
                Err(e) => return Err(e.to_string()),
            }
            (vault, Some(recovery.display()))
        }
        Some(fetched) => {
            let file = Keyfile::parse(&fetched.body).map_err(|e| e.to_string())?;
            let vault = if form.recovery.trim().is_empty() {
                file.unlock_with_passphrase(&form.passphrase)
            } else {
                RecoveryKey::parse(&form.recovery).and_then(|k| file.unlock_with_recovery(&k))
            }
            .map_err(|e| e.to_string())?;
            (vault, None)
        }
    };
    let device = DeviceId::generate(&mut entropy);
    saved.vault = vault.export_local();
    saved.device = device.to_string();
    let replica = Replica::new(vault, device, &saved.device_name);
    let devices = replica
        .join(&store, js_sys::Date::now() as u64, &mut entropy)
        .await
        .map_err(|f| describe(&f))?;
    saved.devices = device_rows(&devices, &saved.device);
    saved.cursor = replica.cursor().clone();
    let db = open_db().await?;
    db.clear(DOCS).await.map_err(|e| e.to_string())?;
    db.put(STATE, &saved).await.map_err(|e| e.to_string())?;
    let joined = devices.len();
    ENGINE.with(|c| {
        *c.borrow_mut() = Some(Engine {
            db: Rc::new(db),
            replica,
            store,
            saved,
        })
    });
    Ok(Connected {
        recovery_key: recovery,
        devices: joined,
    })
}

/// The person's answer for a record that waits: keep it (a restore), let
/// the delete stand, or choose one of a field's values. The record is
/// derived and stored at once; the next round sends the answer.
pub(super) async fn resolve(
    rt: Runtime,
    assistant: Assistant,
    doc: String,
    how: Resolve,
) -> Result<(), String> {
    let taken = ENGINE.with(|c| c.borrow_mut().take());
    let mut e = match taken {
        Some(e) => e,
        None => load().await?.ok_or("sync is off on this device")?,
    };
    let answered = match &how {
        Resolve::Keep => e.replica.restore(&doc),
        Resolve::Delete => e.replica.delete(&doc),
        Resolve::Choose { field, value } => serde_json::from_str::<Json>(value)
            .map_err(|err| SyncError::BadDocument(err.to_string()))
            .and_then(|v| e.replica.choose(&doc, field, &v)),
    }
    .map_err(|err| err.to_string());
    let result = match answered {
        Ok(()) => {
            let ids = BTreeSet::from([doc.clone()]);
            let (stored, problems) = settle(&rt, &assistant, &mut e, &ids).await;
            let kept = persist(&mut e, &ids).await;
            stored.and(kept).and_then(|()| match problems.first() {
                Some(p) => Err(p.clone()),
                None => Ok(()),
            })
        }
        Err(err) => Err(err),
    };
    ENGINE.with(|c| *c.borrow_mut() = Some(e));
    result
}

/// Forgets sync on this device: its documents, keys and cursor. The
/// records stay, as ordinary local records.
pub(super) async fn turn_off() -> Result<(), String> {
    // The database cannot be deleted while this tab holds it open.
    if let Some(e) = ENGINE.with(|c| c.borrow_mut().take())
        && let Ok(db) = Rc::try_unwrap(e.db)
    {
        db.close();
    }
    Db::delete_database(SYNC_DB)
        .await
        .map_err(|e| format!("sync's storage was not removed: {e}"))
}

/// What Settings shows about this device's sync: where it syncs, and the
/// devices last listed.
pub(super) async fn describe_setup() -> Option<super::Setup> {
    let summary = |s: &Saved| super::Setup {
        endpoint: s.endpoint.clone(),
        bucket: s.bucket.clone(),
        device_name: s.device_name.clone(),
        devices: s.devices.clone(),
        last_ok_ms: s.last_ok_ms,
        attention: s.attention.values().cloned().collect(),
    };
    if let Some(s) = ENGINE.with(|c| c.borrow().as_ref().map(|e| summary(&e.saved))) {
        return Some(s);
    }
    let db = open_db().await.ok()?;
    let saved = db.get::<Saved>(STATE, STATE).await.ok().flatten();
    db.close();
    saved.as_ref().map(summary)
}
