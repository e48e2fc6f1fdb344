//! The IndexedDB adapter (on the `idb` crate): one database, versioned
//! stores, explicit migrations, and every write inside a transaction that
//! either commits whole or leaves the stores as they were.
//!
//! Opening runs the upgrade itself: for each schema version newer than the
//! database, it creates the stores and indexes that version adds (changing
//! an index whose key path moved) and then runs that version's data
//! migrations ([`DATA_MIGRATIONS`]), all in the one upgrade transaction. If
//! any step fails the transaction aborts and the database stays at its old
//! version with its data untouched. Stores are never deleted implicitly.

use std::cell::RefCell;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::skill::activity::{ActivityRecord, ActivityStore};
use hearth_core::stores::{
    ACTIVITY, CONVERSATIONS, DB_NAME, MCP_SERVERS, SCHEMAS, SETTINGS, SKILL_FILES, SKILL_PACKAGES,
    Schema, USAGE, current_schema,
};
use idb::{Database, DatabaseEvent, Factory, TransactionMode, TransactionResult};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{IdbCursorWithValue, IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransaction};

/// A record transform, run when a database (or a backup) moves to
/// `version`: it gets each record of `store` as JSON (bytes and Blobs
/// tagged as `codec` writes them), with every record of the store it
/// `reads` (as they are before this step), and returns the record
/// changed, or `None` to delete it. An `Err` aborts the whole upgrade,
/// leaving the old data.
#[derive(Clone, Copy)]
pub struct DataMigration {
    pub version: u32,
    pub store: &'static str,
    /// Another store the transform reads, if any.
    pub reads: Option<&'static str>,
    /// What it does, for errors and logs.
    pub what: &'static str,
    pub transform: fn(Value, &[Value]) -> Result<Option<Value>, String>,
}

impl std::fmt::Debug for DataMigration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataMigration")
            .field("version", &self.version)
            .field("store", &self.store)
            .field("what", &self.what)
            .finish()
    }
}

/// The record transforms of every schema version, in order. Versions 2
/// and 3 only added stores; version 4 moves the commands run in each
/// conversation into it, from the Activity log, before that log can be
/// cleared.
pub const DATA_MIGRATIONS: &[DataMigration] = &[DataMigration {
    version: 4,
    store: CONVERSATIONS,
    reads: Some(ACTIVITY),
    what: "keeping each conversation's commands in it",
    transform: hearth_core::assistant::agent::conversation::commands_from_log,
}];

/// Runs the transforms for versions after `from` up to `to` over one
/// store's records, as a backup made at an older version needs; `others`
/// gives the records of a store a transform reads.
pub fn migrate_records(
    migrations: &[DataMigration],
    from: u32,
    to: u32,
    store: &str,
    records: Vec<Value>,
    others: &dyn Fn(&str) -> Vec<Value>,
) -> Result<Vec<Value>, String> {
    let mut records = records;
    for m in migrations
        .iter()
        .filter(|m| m.store == store && m.version > from && m.version <= to)
    {
        let context = m.reads.map(others).unwrap_or_default();
        let mut next = Vec::with_capacity(records.len());
        for r in records {
            if let Some(r) = (m.transform)(r, &context).map_err(|e| format!("{}: {e}", m.what))? {
                next.push(r);
            }
        }
        records = next;
    }
    Ok(records)
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StorageError {
    #[error("cannot open the browser database: {0}")]
    Open(String),
    #[error(
        "this browser's Hearth data was written by a newer version of Hearth; reload to use it"
    )]
    NewerData,
    #[error(
        "Hearth could not upgrade its storage from version {from} to {to} ({message}); your data is unchanged"
    )]
    Migration { from: u32, to: u32, message: String },
    #[error(
        "browser storage is full; nothing was changed. Free space by deleting old activity or data in Settings"
    )]
    Quota,
    #[error(
        "Hearth was updated in another tab, so this tab can no longer save; reload it. Nothing was changed"
    )]
    Closed,
    #[error("the browser database refused the change: {0}")]
    Write(String),
    #[error("cannot read from the browser database: {0}")]
    Read(String),
    #[error("a stored record could not be read: {0}")]
    Decode(String),
}

impl StorageError {
    /// Whether the message already tells the person their data is as it
    /// was, so callers need not say it again.
    pub fn says_nothing_changed(&self) -> bool {
        match self {
            StorageError::Migration { .. } | StorageError::Quota | StorageError::Closed => true,
            StorageError::Open(_)
            | StorageError::NewerData
            | StorageError::Write(_)
            | StorageError::Read(_)
            | StorageError::Decode(_) => false,
        }
    }
}

/// The DOM exception's name and message, if `e` holds one.
fn exception(e: &idb::Error) -> Option<(String, String)> {
    let js: Option<&JsValue> = match e {
        idb::Error::DomException(d) => Some(d.as_ref()),
        idb::Error::AddFailed(v)
        | idb::Error::ClearFailed(v)
        | idb::Error::CountFailed(v)
        | idb::Error::DeleteFailed(v)
        | idb::Error::GetAllFailed(v)
        | idb::Error::GetAllKeysFailed(v)
        | idb::Error::GetFailed(v)
        | idb::Error::IndexedDbDeleteFailed(v)
        | idb::Error::IndexedDbOpenFailed(v)
        | idb::Error::ObjectStoreNotFound(v)
        | idb::Error::OpenCursorFailed(v)
        | idb::Error::TransactionAbortError(v)
        | idb::Error::TransactionCommitError(v)
        | idb::Error::TransactionOpenFailed(v)
        | idb::Error::UpdateFailed(v) => Some(v),
        _ => None,
    };
    let d = js?.dyn_ref::<web_sys::DomException>()?;
    Some((d.name(), d.message()))
}

fn describe(e: &idb::Error) -> String {
    match exception(e) {
        Some((name, message)) => format!("{name}: {message}"),
        None => e.to_string(),
    }
}

fn classify(name: &str, text: String) -> StorageError {
    match name {
        "QuotaExceededError" => StorageError::Quota,
        "InvalidStateError" if text.contains("clos") => StorageError::Closed,
        _ => StorageError::Write(text),
    }
}

fn write_error(e: idb::Error) -> StorageError {
    match exception(&e) {
        Some((name, message)) => classify(&name, format!("{name}: {message}")),
        None => {
            let text = e.to_string();
            if text.contains("QuotaExceeded") {
                StorageError::Quota
            } else {
                StorageError::Write(text)
            }
        }
    }
}

fn read_error(e: idb::Error) -> StorageError {
    match write_error(e) {
        StorageError::Closed => StorageError::Closed,
        StorageError::Write(text) => StorageError::Read(text),
        other => StorageError::Read(other.to_string()),
    }
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, StorageError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| StorageError::Write(e.to_string()))
}

fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, StorageError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| StorageError::Decode(e.to_string()))
}

/// Waits for a write transaction and reports an abort (a full disk at
/// commit, an explicit abort) as the error it was.
async fn finish(tx: idb::Transaction) -> Result<(), StorageError> {
    let raw: IdbTransaction = tx.into();
    match idb::Transaction::from(raw.clone()).await {
        Ok(TransactionResult::Committed) => Ok(()),
        Ok(TransactionResult::Aborted) => Err(match raw.error() {
            Some(d) => classify(&d.name(), format!("{}: {}", d.name(), d.message())),
            None => StorageError::Write("the change was cancelled".into()),
        }),
        Err(e) => Err(write_error(e)),
    }
}

/// Aborts `tx` after a failed request, so nothing of it is kept.
fn abort(tx: idb::Transaction) {
    let raw: IdbTransaction = tx.into();
    let _ = raw.abort();
}

/// One store's writes for [`Db::write_stores`].
#[derive(Clone, Debug)]
pub struct StoreWrite {
    pub store: String,
    /// Empty the store first.
    pub clear: bool,
    pub records: js_sys::Array,
    /// Keep browser-only values (file access handles) of records being
    /// replaced when the new record lacks them.
    pub keep_browser_only: bool,
}

/// Called when another tab opens a newer version of the database; this
/// connection is closed by then.
type VersionHook = Rc<RefCell<Option<Box<dyn Fn()>>>>;

/// A stored record that could not be read: where it is and why. It stays
/// where it was (and, in a store whose keys the app reuses, a copy is kept
/// in the settings store under [`SET_ASIDE_PREFIX`], so a later write of
/// the same key cannot lose it); every backup carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct SetAside {
    pub store: String,
    pub key: String,
    pub error: String,
}

/// Where copies of records that could not be read are kept, in the
/// settings store: `set-aside/{store}/{key}`.
pub const SET_ASIDE_PREFIX: &str = "set-aside/";

/// Stores whose keys the app writes again by name (a setting, a skill's
/// usage, a server, a package and its files): a record of theirs that
/// cannot be read is copied aside before a later write could replace it.
/// The other stores key records by fresh ids, so theirs stay untouched.
const REUSED_KEYS: [&str; 5] = [SETTINGS, USAGE, MCP_SERVERS, SKILL_PACKAGES, SKILL_FILES];

/// A stored value as [`Db::setting_read`] found it.
#[derive(Clone, Debug, PartialEq)]
pub enum Stored<T> {
    Missing,
    Found(T),
    /// There, but unreadable: set aside, so the caller uses its safe
    /// default.
    SetAside,
}

/// The records set aside so far, and who wants to know.
#[derive(Default)]
struct Aside {
    records: RefCell<Vec<(SetAside, JsValue)>>,
    listeners: RefCell<Vec<Box<dyn Fn()>>>,
}

/// An open database.
pub struct Db {
    db: Database,
    schema: Schema,
    on_newer: VersionHook,
    aside: Rc<Aside>,
}

impl Db {
    /// Opens (creating or upgrading) the app's database at the current schema.
    pub async fn open() -> Result<Db, StorageError> {
        Self::open_with(DB_NAME, current_schema()).await
    }

    /// Opens database `name` at `schema` (one of [`SCHEMAS`]), upgrading
    /// through every version in between; tests use older schemas to prove
    /// upgrades keep data.
    pub async fn open_with(name: &str, schema: Schema) -> Result<Db, StorageError> {
        Self::open_with_migrations(name, schema, SCHEMAS, DATA_MIGRATIONS).await
    }

    /// Like [`open_with`](Self::open_with), with the schema chain and data
    /// migrations given, so tests can prove the mechanism with their own.
    pub async fn open_with_migrations(
        name: &str,
        schema: Schema,
        chain: &'static [Schema],
        migrations: &'static [DataMigration],
    ) -> Result<Db, StorageError> {
        let factory = Factory::new().map_err(|e| StorageError::Open(describe(&e)))?;
        let mut request = factory
            .open(name, Some(schema.version))
            .map_err(|e| StorageError::Open(describe(&e)))?;
        let failure: Rc<RefCell<Option<(u32, String)>>> = Rc::new(RefCell::new(None));
        let keep: Keep = Rc::new(RefCell::new(Vec::new()));
        {
            let failure = failure.clone();
            let keep = keep.clone();
            request.on_upgrade_needed(move |event| {
                let raw: web_sys::IdbVersionChangeEvent = event.into();
                let old = raw.old_version() as u32;
                let Some(req) = raw
                    .target()
                    .and_then(|t| t.dyn_into::<IdbOpenDbRequest>().ok())
                else {
                    *failure.borrow_mut() = Some((old, "no open request".into()));
                    return;
                };
                if let Err(message) = upgrade(&req, old, schema, chain, migrations, &failure, &keep)
                {
                    *failure.borrow_mut() = Some((old, message));
                    if let Some(tx) = req.transaction() {
                        let _ = tx.abort();
                    }
                }
            });
        }
        let opened = request.await;
        drop(keep);
        let mut db = match opened {
            Ok(db) => db,
            Err(e) => {
                if let Some((from, message)) = failure.borrow_mut().take() {
                    return Err(StorageError::Migration {
                        from,
                        to: schema.version,
                        message,
                    });
                }
                return Err(match exception(&e) {
                    Some((name, _)) if name == "VersionError" => StorageError::NewerData,
                    _ => StorageError::Open(describe(&e)),
                });
            }
        };
        let on_newer: VersionHook = Rc::new(RefCell::new(None));
        {
            let on_newer = on_newer.clone();
            db.on_version_change(move |event| {
                if let Ok(db) = event.database() {
                    db.close();
                }
                if let Some(f) = on_newer.borrow().as_ref() {
                    f();
                }
            });
        }
        Ok(Db {
            db,
            schema,
            on_newer,
            aside: Rc::new(Aside::default()),
        })
    }

    /// Deletes database `name` entirely. Open connections must be closed.
    pub async fn delete_database(name: &str) -> Result<(), StorageError> {
        let factory = Factory::new().map_err(|e| StorageError::Open(describe(&e)))?;
        factory
            .delete(name)
            .map_err(write_error)?
            .await
            .map_err(write_error)
    }

    pub fn close(self) {
        self.db.close();
    }

    pub fn version(&self) -> u32 {
        self.schema.version
    }

    pub fn schema(&self) -> Schema {
        self.schema
    }

    pub fn store_names(&self) -> Vec<String> {
        self.db.store_names()
    }

    /// Calls `f` when another tab opens a newer version of the database
    /// (this connection is closed by then, so writes fail with
    /// [`StorageError::Closed`]).
    pub fn on_newer_version(&self, f: impl Fn() + 'static) {
        *self.on_newer.borrow_mut() = Some(Box::new(f));
    }

    fn transaction(
        &self,
        stores: &[&str],
        mode: TransactionMode,
    ) -> Result<idb::Transaction, StorageError> {
        self.db.transaction(stores, mode).map_err(write_error)
    }

    /// Puts `puts` and deletes `deletes` in one transaction: all or none.
    pub async fn apply<T: Serialize>(
        &self,
        store: &str,
        puts: &[T],
        deletes: &[String],
    ) -> Result<(), StorageError> {
        let values = puts.iter().map(to_js).collect::<Result<Vec<_>, _>>()?;
        let tx = self.transaction(&[store], TransactionMode::ReadWrite)?;
        let s = tx.object_store(store).map_err(write_error)?;
        let run = async {
            for v in &values {
                s.put(v, None)
                    .map_err(write_error)?
                    .await
                    .map_err(write_error)?;
            }
            for id in deletes {
                s.delete(JsValue::from_str(id))
                    .map_err(write_error)?
                    .await
                    .map_err(write_error)?;
            }
            Ok::<(), StorageError>(())
        };
        match run.await {
            Ok(()) => finish(tx).await,
            Err(e) => {
                abort(tx);
                Err(e)
            }
        }
    }

    /// Writes a record that is already a JS value, for records serde
    /// cannot describe (a grant's File System Access handle).
    pub async fn put_value(&self, store: &str, value: &JsValue) -> Result<(), StorageError> {
        let tx = self.transaction(&[store], TransactionMode::ReadWrite)?;
        let s = tx.object_store(store).map_err(write_error)?;
        let put = async {
            s.put(value, None)
                .map_err(write_error)?
                .await
                .map_err(write_error)
        };
        match put.await {
            Ok(_) => finish(tx).await,
            Err(e) => {
                abort(tx);
                Err(e)
            }
        }
    }

    /// Reads a key-value record from the settings store; one that cannot
    /// be read is set aside and reads as absent (see
    /// [`setting_read`](Self::setting_read) to tell the two apart).
    pub async fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StorageError> {
        Ok(match self.setting_read(key).await? {
            Stored::Found(v) => Some(v),
            Stored::Missing | Stored::SetAside => None,
        })
    }

    /// Reads a key-value record from the settings store, saying whether it
    /// was there but unreadable (then it is set aside and reported, and the
    /// caller falls back to its safe default).
    pub async fn setting_read<T: DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Stored<T>, StorageError> {
        #[derive(serde::Deserialize)]
        struct Entry<T> {
            value: T,
        }
        let Some(raw) = self.get_raw(SETTINGS, key).await? else {
            return Ok(Stored::Missing);
        };
        match from_js::<Entry<T>>(raw.clone()) {
            Ok(e) => Ok(Stored::Found(e.value)),
            Err(e) => {
                self.set_aside(SETTINGS, &raw, &e.to_string()).await;
                Ok(Stored::SetAside)
            }
        }
    }

    /// The records that could not be read since this database was opened.
    pub fn set_aside_records(&self) -> Vec<SetAside> {
        self.aside
            .records
            .borrow()
            .iter()
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Those records as they are stored, for the person to download.
    pub fn set_aside_values(&self) -> Vec<(SetAside, JsValue)> {
        self.aside.records.borrow().clone()
    }

    /// Calls `f` whenever a record is set aside.
    pub fn on_set_aside(&self, f: impl Fn() + 'static) {
        self.aside.listeners.borrow_mut().push(Box::new(f));
    }

    /// Keeps a record of `store` that could not be read (`why`): it stays
    /// where it is, is copied aside when its store reuses keys, is counted
    /// for the notice and logged. Never fails: a record the app cannot read
    /// must not stop it.
    pub async fn set_aside(&self, store: &str, record: &JsValue, why: &str) {
        let key = self
            .schema
            .store(store)
            .map(|s| crate::codec::key_of(record, s.key_path))
            .map(|k| {
                k.as_string()
                    .or_else(|| k.as_f64().map(|n| n.to_string()))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let entry = SetAside {
            store: store.to_string(),
            key: key.clone(),
            error: why.to_string(),
        };
        {
            let mut records = self.aside.records.borrow_mut();
            if records
                .iter()
                .any(|(s, _)| s.store == entry.store && s.key == entry.key)
            {
                return;
            }
            records.push((entry, record.clone()));
        }
        web_sys::console::warn_1(
            &format!("a {store} record ({key}) could not be read and was set aside: {why}").into(),
        );
        let copy_of_a_copy = store == SETTINGS && key.starts_with(SET_ASIDE_PREFIX);
        if REUSED_KEYS.contains(&store) && !copy_of_a_copy {
            let copy = js_sys::Object::new();
            let value = js_sys::Object::new();
            let set = |o: &js_sys::Object, k: &str, v: &JsValue| {
                let _ = js_sys::Reflect::set(o, &k.into(), v);
            };
            set(&value, "store", &store.into());
            set(&value, "key", &key.as_str().into());
            set(&value, "error", &why.into());
            set(&value, "set_aside_ms", &js_sys::Date::now().into());
            set(&value, "record", record);
            set(
                &copy,
                "key",
                &format!("{SET_ASIDE_PREFIX}{store}/{key}").into(),
            );
            set(&copy, "value", &value);
            if let Err(e) = self.put_value(SETTINGS, &copy).await {
                web_sys::console::warn_1(&format!("the copy could not be kept: {e}").into());
            }
        }
        for f in self.aside.listeners.borrow().iter() {
            f();
        }
    }

    pub async fn set_setting<T: Serialize>(
        &self,
        key: &str,
        value: &T,
    ) -> Result<(), StorageError> {
        #[derive(Serialize)]
        struct Entry<'a, T> {
            key: &'a str,
            value: &'a T,
        }
        self.put(SETTINGS, &Entry { key, value }).await
    }

    pub async fn put<T: Serialize>(&self, store: &str, record: &T) -> Result<(), StorageError> {
        self.apply(store, std::slice::from_ref(record), &[]).await
    }

    /// The record of `store` at `key`; one that cannot be read is set
    /// aside and reads as absent.
    pub async fn get<T: DeserializeOwned>(
        &self,
        store: &str,
        key: &str,
    ) -> Result<Option<T>, StorageError> {
        let Some(raw) = self.get_raw(store, key).await? else {
            return Ok(None);
        };
        match from_js(raw.clone()) {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                self.set_aside(store, &raw, &e.to_string()).await;
                Ok(None)
            }
        }
    }

    async fn get_raw(&self, store: &str, key: &str) -> Result<Option<JsValue>, StorageError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let s = tx.object_store(store).map_err(read_error)?;
        s.get(JsValue::from_str(key))
            .map_err(read_error)?
            .await
            .map_err(read_error)
    }

    /// Every record of `store` in key order. Records that no longer decode
    /// are left in place, set aside and counted, never dropped.
    pub async fn all<T: DeserializeOwned>(
        &self,
        store: &str,
    ) -> Result<(Vec<T>, usize), StorageError> {
        let values = self.all_values(store).await?;
        let mut out = Vec::with_capacity(values.len());
        let mut undecodable = 0;
        for v in values {
            match from_js(v.clone()) {
                Ok(record) => out.push(record),
                Err(e) => {
                    undecodable += 1;
                    self.set_aside(store, &v, &e.to_string()).await;
                }
            }
        }
        Ok((out, undecodable))
    }

    /// Every record of `store` as JS values, in key order.
    pub async fn all_values(&self, store: &str) -> Result<Vec<JsValue>, StorageError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let s = tx.object_store(store).map_err(read_error)?;
        s.get_all(None, None)
            .map_err(read_error)?
            .await
            .map_err(read_error)
    }

    /// Every record of each of `stores`, read in one transaction so they
    /// are consistent with each other.
    pub async fn read_stores(
        &self,
        stores: &[&str],
    ) -> Result<Vec<(String, js_sys::Array)>, StorageError> {
        let tx = self.transaction(stores, TransactionMode::ReadOnly)?;
        let mut out = Vec::with_capacity(stores.len());
        for name in stores {
            let s = tx.object_store(name).map_err(read_error)?;
            let values = s
                .get_all(None, None)
                .map_err(read_error)?
                .await
                .map_err(read_error)?;
            out.push((name.to_string(), values.into_iter().collect()));
        }
        Ok(out)
    }

    /// Applies writes to several stores in one transaction: every store's
    /// clear and puts commit together, or (on any failure, a full disk
    /// included) none of them do.
    pub async fn write_stores(&self, writes: &[StoreWrite]) -> Result<(), StorageError> {
        let names: Vec<String> = writes.iter().map(|w| w.store.clone()).collect();
        self.read_modify_write(&names, false, |_| Ok(writes.to_vec()))
            .await
    }

    /// One read-write transaction over `stores`: reads every record of each
    /// (when `read` is set), hands them to `plan`, which says what to write,
    /// and writes it. Everything happens in the one transaction, so the plan
    /// sees exactly what it replaces and the writes land together or not at
    /// all. `plan` runs synchronously inside the transaction.
    pub async fn read_modify_write<T: AsRef<str>>(
        &self,
        stores: &[T],
        read: bool,
        plan: impl FnOnce(&[(String, js_sys::Array)]) -> Result<Vec<StoreWrite>, StorageError>,
    ) -> Result<(), StorageError> {
        if stores.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = stores.iter().map(|s| s.as_ref()).collect();
        let tx = self.transaction(&names, TransactionMode::ReadWrite)?;
        let run = async {
            let mut current: Vec<(String, js_sys::Array)> = Vec::new();
            if read {
                for name in &names {
                    let s = tx.object_store(name).map_err(write_error)?;
                    let values = s
                        .get_all(None, None)
                        .map_err(write_error)?
                        .await
                        .map_err(write_error)?;
                    current.push((name.to_string(), values.into_iter().collect()));
                }
            }
            let writes = plan(&current)?;
            for w in &writes {
                let s = tx.object_store(&w.store).map_err(write_error)?;
                let key_path = self
                    .schema
                    .store(&w.store)
                    .map(|spec| spec.key_path)
                    .ok_or_else(|| StorageError::Write(format!("no store {}", w.store)))?;
                // Browser-only values of the records about to be replaced.
                let mut kept: Vec<(JsValue, JsValue)> = Vec::new();
                if w.keep_browser_only {
                    let existing: js_sys::Array = match current.iter().find(|(n, _)| *n == w.store)
                    {
                        Some((_, values)) => values.clone(),
                        None => s
                            .get_all(None, None)
                            .map_err(write_error)?
                            .await
                            .map_err(write_error)?
                            .into_iter()
                            .collect(),
                    };
                    for record in existing.iter() {
                        let extra = crate::codec::browser_only(&record);
                        if !extra.is_undefined() {
                            kept.push((crate::codec::key_of(&record, key_path), extra));
                        }
                    }
                }
                if w.clear {
                    s.clear().map_err(write_error)?.await.map_err(write_error)?;
                }
                for record in w.records.iter() {
                    if !kept.is_empty() {
                        let key = crate::codec::key_of(&record, key_path);
                        if let Some((_, extra)) =
                            kept.iter().find(|(k, _)| js_sys::Object::is(k, &key))
                        {
                            crate::codec::attach(&record, extra);
                        }
                    }
                    s.put(&record, None)
                        .map_err(write_error)?
                        .await
                        .map_err(write_error)?;
                }
            }
            Ok::<(), StorageError>(())
        };
        match run.await {
            Ok(()) => finish(tx).await,
            Err(e) => {
                abort(tx);
                Err(e)
            }
        }
    }

    /// The records of `store` whose index `index` holds `key`, as JS
    /// values in key order.
    pub async fn values_by_index(
        &self,
        store: &str,
        index: &str,
        key: &str,
    ) -> Result<Vec<JsValue>, StorageError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let s = tx.object_store(store).map_err(read_error)?;
        s.index(index)
            .map_err(read_error)?
            .get_all(Some(idb::Query::Key(JsValue::from_str(key))), None)
            .map_err(read_error)?
            .await
            .map_err(read_error)
    }

    /// The records of `store` whose index `index` holds `key`; one that
    /// cannot be read is set aside and left out.
    pub async fn by_index<T: DeserializeOwned>(
        &self,
        store: &str,
        index: &str,
        key: &str,
    ) -> Result<Vec<T>, StorageError> {
        let mut out = Vec::new();
        for v in self.values_by_index(store, index, key).await? {
            match from_js(v.clone()) {
                Ok(record) => out.push(record),
                Err(e) => self.set_aside(store, &v, &e.to_string()).await,
            }
        }
        Ok(out)
    }

    /// Deletes the record `key` of `store` and every record of `owned`
    /// whose index `index` holds that key, in one transaction; returns
    /// the owned records deleted, so an undo can put them back.
    pub async fn delete_with_owned(
        &self,
        store: &str,
        key: &str,
        owned: &str,
        index: &str,
    ) -> Result<Vec<JsValue>, StorageError> {
        let tx = self.transaction(&[store, owned], TransactionMode::ReadWrite)?;
        let run = async {
            let o = tx.object_store(owned).map_err(write_error)?;
            let query = || Some(idb::Query::Key(JsValue::from_str(key)));
            let ix = o.index(index).map_err(write_error)?;
            let removed = ix
                .get_all(query(), None)
                .map_err(write_error)?
                .await
                .map_err(write_error)?;
            let keys = ix
                .get_all_keys(query(), None)
                .map_err(write_error)?
                .await
                .map_err(write_error)?;
            for k in keys {
                o.delete(k)
                    .map_err(write_error)?
                    .await
                    .map_err(write_error)?;
            }
            let s = tx.object_store(store).map_err(write_error)?;
            s.delete(JsValue::from_str(key))
                .map_err(write_error)?
                .await
                .map_err(write_error)?;
            Ok::<Vec<JsValue>, StorageError>(removed)
        };
        match run.await {
            Ok(removed) => finish(tx).await.map(|()| removed),
            Err(e) => {
                abort(tx);
                Err(e)
            }
        }
    }

    pub async fn count(&self, store: &str) -> Result<u32, StorageError> {
        let tx = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let s = tx.object_store(store).map_err(read_error)?;
        s.count(None).map_err(read_error)?.await.map_err(read_error)
    }

    pub async fn delete(&self, store: &str, key: &str) -> Result<(), StorageError> {
        self.apply::<()>(store, &[], &[key.to_string()]).await
    }

    /// Empties one store.
    pub async fn clear(&self, store: &str) -> Result<(), StorageError> {
        self.clear_stores(&[store]).await
    }

    /// Empties every store of the schema in one transaction.
    pub async fn clear_all(&self) -> Result<(), StorageError> {
        let names = self.schema.store_names();
        self.clear_stores(&names).await
    }

    async fn clear_stores(&self, names: &[&str]) -> Result<(), StorageError> {
        let tx = self.transaction(names, TransactionMode::ReadWrite)?;
        let run = async {
            for name in names {
                tx.object_store(name)
                    .map_err(write_error)?
                    .clear()
                    .map_err(write_error)?
                    .await
                    .map_err(write_error)?;
            }
            Ok::<(), StorageError>(())
        };
        match run.await {
            Ok(()) => finish(tx).await,
            Err(e) => {
                abort(tx);
                Err(e)
            }
        }
    }
}

impl ActivityStore for Db {
    fn append<'a>(&'a self, record: &'a ActivityRecord) -> LocalBoxFuture<'a, Result<(), String>> {
        async move { self.put(ACTIVITY, record).await.map_err(|e| e.to_string()) }.boxed_local()
    }
}

// ---------------------------------------------------------------- upgrade

/// Callbacks that must live until the upgrade transaction ends.
type Keep = Rc<RefCell<Vec<Closure<dyn FnMut(web_sys::Event)>>>>;

fn js_text(e: &JsValue) -> String {
    e.dyn_ref::<web_sys::DomException>()
        .map(|d| format!("{}: {}", d.name(), d.message()))
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|x| String::from(x.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

fn names(list: &web_sys::DomStringList) -> Vec<String> {
    (0..list.length()).filter_map(|i| list.item(i)).collect()
}

/// The structural steps of every version after `old`, then its data
/// migrations, inside the upgrade transaction.
fn upgrade(
    req: &IdbOpenDbRequest,
    old: u32,
    target: Schema,
    chain: &[Schema],
    migrations: &'static [DataMigration],
    failure: &Rc<RefCell<Option<(u32, String)>>>,
    keep: &Keep,
) -> Result<(), String> {
    let db: IdbDatabase = req
        .result()
        .map_err(|e| js_text(&e))?
        .dyn_into()
        .map_err(|_| "the open request holds no database".to_string())?;
    let tx = req.transaction().ok_or("no upgrade transaction")?;
    for schema in chain
        .iter()
        .filter(|s| s.version > old && s.version <= target.version)
    {
        for spec in schema.stores {
            let existing = names(&db.object_store_names());
            let store = if existing.iter().any(|n| n == spec.name) {
                tx.object_store(spec.name).map_err(|e| js_text(&e))?
            } else {
                let params = web_sys::IdbObjectStoreParameters::new();
                params.set_key_path(&JsValue::from_str(spec.key_path));
                db.create_object_store_with_optional_parameters(spec.name, &params)
                    .map_err(|e| format!("creating {}: {}", spec.name, js_text(&e)))?
            };
            for (index, path) in spec.indexes {
                let present = names(&store.index_names());
                if present.iter().any(|n| n == index) {
                    let current = store
                        .index(index)
                        .and_then(|i| i.key_path())
                        .ok()
                        .and_then(|p| p.as_string());
                    if current.as_deref() == Some(*path) {
                        continue;
                    }
                    store
                        .delete_index(index)
                        .map_err(|e| format!("moving index {index}: {}", js_text(&e)))?;
                }
                store
                    .create_index_with_str(index, path)
                    .map_err(|e| format!("creating index {index}: {}", js_text(&e)))?;
            }
        }
    }
    let steps: Vec<&'static DataMigration> = migrations
        .iter()
        .filter(|m| m.version > old && m.version <= target.version)
        .collect();
    run_data_migrations(tx, old, Rc::new(steps), 0, failure.clone(), keep.clone());
    Ok(())
}

/// Runs `steps[i..]` one after the other, each over its store with a cursor:
/// a changed record is updated in place, `None` deletes it, an error aborts.
/// A step that reads another store gets that store's records first.
fn run_data_migrations(
    tx: IdbTransaction,
    old: u32,
    steps: Rc<Vec<&'static DataMigration>>,
    i: usize,
    failure: Rc<RefCell<Option<(u32, String)>>>,
    keep: Keep,
) {
    let Some(step) = steps.get(i).copied() else {
        return;
    };
    let fail = {
        let tx = tx.clone();
        let failure = failure.clone();
        move |message: String| {
            if failure.borrow().is_none() {
                *failure.borrow_mut() = Some((old, message));
            }
            let _ = tx.abort();
        }
    };
    let Some(reads) = step.reads else {
        return run_step(tx, old, steps, i, Rc::new(Vec::new()), failure, keep);
    };
    let request: IdbRequest = match tx.object_store(reads).and_then(|s| s.get_all()) {
        Ok(r) => r,
        Err(e) => return fail(format!("{}: reading {reads}: {}", step.what, js_text(&e))),
    };
    let on_read = {
        let request = request.clone();
        let keep2 = keep.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_e: web_sys::Event| {
            let read = request
                .result()
                .map_err(|e| js_text(&e))
                .and_then(|v| crate::codec::to_values(&v))
                .map(|(values, _)| values);
            match read {
                Ok(values) => run_step(
                    tx.clone(),
                    old,
                    steps.clone(),
                    i,
                    Rc::new(values),
                    failure.clone(),
                    keep2.clone(),
                ),
                Err(message) => fail(format!("{}: reading {reads}: {message}", step.what)),
            }
        })
    };
    request.set_onsuccess(Some(on_read.as_ref().unchecked_ref()));
    keep.borrow_mut().push(on_read);
}

/// One step's cursor over its store, with what it reads in `context`;
/// the next step starts when the cursor is done.
fn run_step(
    tx: IdbTransaction,
    old: u32,
    steps: Rc<Vec<&'static DataMigration>>,
    i: usize,
    context: Rc<Vec<Value>>,
    failure: Rc<RefCell<Option<(u32, String)>>>,
    keep: Keep,
) {
    let Some(step) = steps.get(i).copied() else {
        return;
    };
    let fail = {
        let tx = tx.clone();
        let failure = failure.clone();
        move |message: String| {
            if failure.borrow().is_none() {
                *failure.borrow_mut() = Some((old, message));
            }
            let _ = tx.abort();
        }
    };
    let store = match tx.object_store(step.store) {
        Ok(s) => s,
        Err(e) => return fail(format!("{}: {}", step.what, js_text(&e))),
    };
    let request: IdbRequest = match store.open_cursor() {
        Ok(r) => r,
        Err(e) => return fail(format!("{}: {}", step.what, js_text(&e))),
    };
    let on_success = {
        let request = request.clone();
        let (tx, steps, failure, keep2) =
            (tx.clone(), steps.clone(), failure.clone(), keep.clone());
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_e: web_sys::Event| {
            let cursor = match request.result() {
                Ok(c) if !c.is_null() && !c.is_undefined() => c,
                Ok(_) => {
                    run_data_migrations(
                        tx.clone(),
                        old,
                        steps.clone(),
                        i + 1,
                        failure.clone(),
                        keep2.clone(),
                    );
                    return;
                }
                Err(e) => return fail(format!("{}: {}", step.what, js_text(&e))),
            };
            let cursor: IdbCursorWithValue = cursor.unchecked_into();
            let outcome = (|| -> Result<(), String> {
                let value = cursor.value().map_err(|e| js_text(&e))?;
                let (mut records, _) = crate::codec::to_values(&js_sys::Array::of1(&value))?;
                let record = records.pop().ok_or("an empty record")?;
                match (step.transform)(record, &context)? {
                    Some(next) => {
                        let back = crate::codec::from_values(&[next])?;
                        cursor.update(&back.get(0)).map_err(|e| js_text(&e))?;
                    }
                    None => {
                        cursor.delete().map_err(|e| js_text(&e))?;
                    }
                }
                cursor.continue_().map_err(|e| js_text(&e))
            })();
            if let Err(message) = outcome {
                fail(format!("{}: {message}", step.what));
            }
        })
    };
    request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
    keep.borrow_mut().push(on_success);
}

// ------------------------------------------------- several stores at once

impl Db {
    /// A record as IndexedDB stores it.
    pub fn value<T: Serialize>(record: &T) -> Result<JsValue, StorageError> {
        to_js(record)
    }

    /// Puts one record into each of several stores in one transaction (the
    /// activity log and the usage counters of a call), all or none, and
    /// returns once it has committed. Every put is placed at once and the
    /// transaction is told to commit straight after, so the commit waits on
    /// no round trip through this page per record: a call's records reach
    /// the disk in one commit, as soon as the database can make it.
    pub async fn put_across(&self, entries: &[(&str, JsValue)]) -> Result<(), StorageError> {
        let mut stores: Vec<&str> = entries.iter().map(|(s, _)| *s).collect();
        stores.sort_unstable();
        stores.dedup();
        if stores.is_empty() {
            return Ok(());
        }
        let tx = self.transaction(&stores, TransactionMode::ReadWrite)?;
        let placed = entries.iter().try_for_each(|(store, value)| {
            tx.object_store(store)
                .map_err(write_error)?
                .put(value, None)
                .map(drop)
                .map_err(write_error)
        });
        if let Err(e) = placed {
            abort(tx);
            return Err(e);
        }
        // A put that fails later (a full disk) aborts the transaction, and
        // `finish` reports why.
        let raw: IdbTransaction = tx.into();
        // Marked deprecated in web-sys (an older spec draft dropped it);
        // every current browser has `IDBTransaction.commit()`. Where one
        // did not, the transaction would still commit by itself.
        #[allow(deprecated)]
        let _ = raw.commit();
        finish(idb::Transaction::from(raw)).await
    }

    /// Every record of `store` as IndexedDB holds it (Agent Skills files
    /// keep their bytes as Uint8Arrays).
    pub async fn all_raw(&self, store: &str) -> Result<Vec<JsValue>, StorageError> {
        self.all_values(store).await
    }

    /// Deletes `deletes` (store, key) and then puts `puts` (store, record)
    /// across several stores in one transaction: all or none.
    pub async fn apply_raw(
        &self,
        puts: &[(&str, JsValue)],
        deletes: &[(&str, String)],
    ) -> Result<(), StorageError> {
        let mut stores: Vec<&str> = puts
            .iter()
            .map(|(s, _)| *s)
            .chain(deletes.iter().map(|(s, _)| *s))
            .collect();
        stores.sort_unstable();
        stores.dedup();
        if stores.is_empty() {
            return Ok(());
        }
        let tx = self.transaction(&stores, TransactionMode::ReadWrite)?;
        let run = async {
            for (store, key) in deletes {
                tx.object_store(store)
                    .map_err(write_error)?
                    .delete(JsValue::from_str(key))
                    .map_err(write_error)?
                    .await
                    .map_err(write_error)?;
            }
            for (store, value) in puts {
                tx.object_store(store)
                    .map_err(write_error)?
                    .put(value, None)
                    .map_err(write_error)?
                    .await
                    .map_err(write_error)?;
            }
            Ok::<(), StorageError>(())
        };
        match run.await {
            Ok(()) => finish(tx).await,
            Err(e) => {
                abort(tx);
                Err(e)
            }
        }
    }
}
