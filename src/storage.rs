//! The IndexedDB adapter (through rexie): one database, versioned stores,
//! every write inside a transaction.

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::activity::{ActivityRecord, ActivityStore};
use rexie::{Index, ObjectStore, Rexie, TransactionMode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;

pub const DB_NAME: &str = "hearth";

/// One object store: its name, key path and indexes.
#[derive(Clone, Copy, Debug)]
pub struct StoreSpec {
    pub name: &'static str,
    pub key_path: &'static str,
    /// (index name, key path)
    pub indexes: &'static [(&'static str, &'static str)],
}

/// A schema version and the stores it has. Versions only ever add stores
/// or indexes; records are migrated in place after opening when needed.
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    pub version: u32,
    pub stores: &'static [StoreSpec],
}

pub const ACTIVITY: &str = "activity";

/// Version 1, the foundation: the execution log only.
pub const SCHEMA_V1: Schema = Schema {
    version: 1,
    stores: &[StoreSpec {
        name: ACTIVITY,
        key_path: "id",
        indexes: &[("started_at", "result.started_at_ms")],
    }],
};

pub const NOTES: &str = "notes";
pub const TASKS: &str = "tasks";
pub const MEMORIES: &str = "memories";
/// Key-value records: `{key, value}`, e.g. the permission settings.
pub const SETTINGS: &str = "settings";
pub const USAGE: &str = "usage";

/// Version 2: the core skills' data, settings and usage counts.
pub const SCHEMA_V2: Schema = Schema {
    version: 2,
    stores: &[
        StoreSpec {
            name: ACTIVITY,
            key_path: "id",
            indexes: &[("started_at", "result.started_at_ms")],
        },
        StoreSpec {
            name: NOTES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: TASKS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: MEMORIES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: SETTINGS,
            key_path: "key",
            indexes: &[],
        },
        StoreSpec {
            name: USAGE,
            key_path: "skill_id",
            indexes: &[],
        },
    ],
};

pub const CONVERSATIONS: &str = "conversations";
/// Agent Skills packages (SKILL.md and metadata), keyed by skill name.
pub const SKILL_PACKAGES: &str = "skill_packages";
/// The files of those packages, keyed `package/path`.
pub const SKILL_FILES: &str = "skill_files";
pub const MCP_SERVERS: &str = "mcp_servers";
/// Folder and file grants for the file-reading skill.
pub const GRANTS: &str = "grants";
/// Files produced by code runs, kept with their conversation.
pub const ARTIFACTS: &str = "artifacts";

/// Version 3: conversations, Agent Skills packages, MCP servers, file
/// grants and code artifacts.
pub const SCHEMA_V3: Schema = Schema {
    version: 3,
    stores: &[
        StoreSpec {
            name: ACTIVITY,
            key_path: "id",
            indexes: &[("started_at", "result.started_at_ms")],
        },
        StoreSpec {
            name: NOTES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: TASKS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: MEMORIES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: SETTINGS,
            key_path: "key",
            indexes: &[],
        },
        StoreSpec {
            name: USAGE,
            key_path: "skill_id",
            indexes: &[],
        },
        StoreSpec {
            name: CONVERSATIONS,
            key_path: "id",
            indexes: &[("updated", "updated_ms")],
        },
        StoreSpec {
            name: SKILL_PACKAGES,
            key_path: "name",
            indexes: &[],
        },
        StoreSpec {
            name: SKILL_FILES,
            key_path: "key",
            indexes: &[("package", "package")],
        },
        StoreSpec {
            name: MCP_SERVERS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: GRANTS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: ARTIFACTS,
            key_path: "id",
            indexes: &[("conversation", "conversation_id")],
        },
    ],
};

/// Every schema the app has shipped, oldest first; the last is current.
pub const SCHEMAS: &[Schema] = &[SCHEMA_V1, SCHEMA_V2, SCHEMA_V3];

pub fn current_schema() -> Schema {
    SCHEMAS[SCHEMAS.len() - 1]
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StorageError {
    #[error("cannot open the browser database: {0}")]
    Open(String),
    #[error(
        "browser storage is full; nothing was changed. Free space by deleting old activity or data in Settings"
    )]
    Quota,
    /// The browser aborted the transaction when committing it; with
    /// nothing else wrong, that is storage running out.
    #[error(
        "the browser refused to store the change, most likely because storage is full; nothing was changed. Free space by deleting old activity or data in Settings"
    )]
    Aborted,
    #[error("the browser database refused the change: {0}")]
    Write(String),
    #[error("cannot read from the browser database: {0}")]
    Read(String),
    #[error("a stored record could not be read: {0}")]
    Decode(String),
}

/// An open database.
pub struct Db {
    rexie: Rexie,
    schema: Schema,
}

fn describe(e: &rexie::Error) -> String {
    match e {
        rexie::Error::IdbError(inner) => inner.to_string(),
        other => other.to_string(),
    }
}

fn write_error(e: rexie::Error) -> StorageError {
    let text = describe(&e);
    if text.contains("QuotaExceeded") || text.to_lowercase().contains("quota") {
        StorageError::Quota
    } else {
        StorageError::Write(text)
    }
}

/// A write transaction's end: committed, or the reason it was not.
fn committed(done: Result<rexie::TransactionResult, rexie::Error>) -> Result<(), StorageError> {
    match done.map_err(write_error)? {
        rexie::TransactionResult::Committed => Ok(()),
        rexie::TransactionResult::Aborted => Err(StorageError::Aborted),
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

impl Db {
    /// Opens (creating or upgrading) the app's database at the current schema.
    pub async fn open() -> Result<Db, StorageError> {
        Self::open_with(DB_NAME, current_schema()).await
    }

    /// Opens database `name` at `schema`; tests use older schemas to prove
    /// upgrades keep data.
    pub async fn open_with(name: &str, schema: Schema) -> Result<Db, StorageError> {
        let mut builder = Rexie::builder(name).version(schema.version);
        for spec in schema.stores {
            let mut store = ObjectStore::new(spec.name).key_path(spec.key_path);
            for (index, path) in spec.indexes {
                store = store.add_index(Index::new(index, path));
            }
            builder = builder.add_object_store(store);
        }
        let rexie = builder
            .build()
            .await
            .map_err(|e| StorageError::Open(describe(&e)))?;
        Ok(Db { rexie, schema })
    }

    /// Deletes database `name` entirely. Open connections must be closed.
    pub async fn delete_database(name: &str) -> Result<(), StorageError> {
        Rexie::delete(name)
            .await
            .map_err(|e| StorageError::Write(describe(&e)))
    }

    pub fn close(self) {
        self.rexie.close();
    }

    pub fn version(&self) -> u32 {
        self.schema.version
    }

    pub fn store_names(&self) -> Vec<String> {
        self.rexie.store_names()
    }

    /// Puts `puts` and deletes `deletes` in one transaction: all or none.
    pub async fn apply<T: Serialize>(
        &self,
        store: &str,
        puts: &[T],
        deletes: &[String],
    ) -> Result<(), StorageError> {
        let values = puts.iter().map(to_js).collect::<Result<Vec<_>, _>>()?;
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadWrite)
            .map_err(write_error)?;
        let s = tx.store(store).map_err(write_error)?;
        for v in &values {
            s.put(v, None).await.map_err(write_error)?;
        }
        for id in deletes {
            s.delete(JsValue::from_str(id)).await.map_err(write_error)?;
        }
        committed(tx.done().await)?;
        Ok(())
    }

    /// Reads a key-value record from the settings store.
    pub async fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StorageError> {
        #[derive(serde::Deserialize)]
        struct Entry<T> {
            value: T,
        }
        Ok(self.get::<Entry<T>>(SETTINGS, key).await?.map(|e| e.value))
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

    pub async fn get<T: DeserializeOwned>(
        &self,
        store: &str,
        key: &str,
    ) -> Result<Option<T>, StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadOnly)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let s = tx
            .store(store)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let value = s
            .get(JsValue::from_str(key))
            .await
            .map_err(|e| StorageError::Read(describe(&e)))?;
        value.map(from_js).transpose()
    }

    /// Every record of `store` in key order. Records that no longer decode
    /// are left in place and counted, never dropped.
    pub async fn all<T: DeserializeOwned>(
        &self,
        store: &str,
    ) -> Result<(Vec<T>, usize), StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadOnly)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let s = tx
            .store(store)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let values = s
            .get_all(None, None)
            .await
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let mut out = Vec::with_capacity(values.len());
        let mut undecodable = 0;
        for v in values {
            match from_js(v) {
                Ok(record) => out.push(record),
                Err(e) => {
                    undecodable += 1;
                    web_sys::console::warn_1(&format!("skipping a {store} record: {e}").into());
                }
            }
        }
        Ok((out, undecodable))
    }

    pub async fn count(&self, store: &str) -> Result<u32, StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadOnly)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let s = tx
            .store(store)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        s.count(None)
            .await
            .map_err(|e| StorageError::Read(describe(&e)))
    }

    pub async fn delete(&self, store: &str, key: &str) -> Result<(), StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadWrite)
            .map_err(write_error)?;
        let s = tx.store(store).map_err(write_error)?;
        s.delete(JsValue::from_str(key))
            .await
            .map_err(write_error)?;
        committed(tx.done().await)?;
        Ok(())
    }

    /// Empties one store.
    pub async fn clear(&self, store: &str) -> Result<(), StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadWrite)
            .map_err(write_error)?;
        tx.store(store)
            .map_err(write_error)?
            .clear()
            .await
            .map_err(write_error)?;
        committed(tx.done().await)?;
        Ok(())
    }

    /// Writes a record that is already a JS value, for records serde
    /// cannot describe (a grant's File System Access handle).
    pub async fn put_value(&self, store: &str, value: &JsValue) -> Result<(), StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadWrite)
            .map_err(write_error)?;
        let s = tx.store(store).map_err(write_error)?;
        s.put(value, None).await.map_err(write_error)?;
        tx.done().await.map_err(write_error)?;
        Ok(())
    }

    /// Every record of `store` as JS values, in key order.
    pub async fn all_values(&self, store: &str) -> Result<Vec<JsValue>, StorageError> {
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadOnly)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        let s = tx
            .store(store)
            .map_err(|e| StorageError::Read(describe(&e)))?;
        s.get_all(None, None)
            .await
            .map_err(|e| StorageError::Read(describe(&e)))
    }

    /// Empties every store in one transaction.
    pub async fn clear_all(&self) -> Result<(), StorageError> {
        let names: Vec<&str> = self.schema.stores.iter().map(|s| s.name).collect();
        let tx = self
            .rexie
            .transaction(&names, TransactionMode::ReadWrite)
            .map_err(write_error)?;
        for name in &names {
            tx.store(name)
                .map_err(write_error)?
                .clear()
                .await
                .map_err(write_error)?;
        }
        committed(tx.done().await)?;
        Ok(())
    }
}

impl ActivityStore for Db {
    fn append<'a>(&'a self, record: &'a ActivityRecord) -> LocalBoxFuture<'a, Result<(), String>> {
        async move { self.put(ACTIVITY, record).await.map_err(|e| e.to_string()) }.boxed_local()
    }
}

impl Db {
    /// Puts one record into each of several stores in one transaction.
    pub async fn put_across(&self, entries: &[(&str, JsValue)]) -> Result<(), StorageError> {
        let stores: Vec<&str> = entries.iter().map(|(s, _)| *s).collect();
        let tx = self
            .rexie
            .transaction(&stores, TransactionMode::ReadWrite)
            .map_err(write_error)?;
        for (store, value) in entries {
            tx.store(store)
                .map_err(write_error)?
                .put(value, None)
                .await
                .map_err(write_error)?;
        }
        committed(tx.done().await)?;
        Ok(())
    }

    /// A record as IndexedDB stores it.
    pub fn value<T: Serialize>(record: &T) -> Result<JsValue, StorageError> {
        to_js(record)
    }
}
