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

pub const GRANTS: &str = "grants";
pub const SANDBOX: &str = "sandbox";

/// Version 2: files the person granted (with their File System Access
/// handles) and the sandbox's preferences.
pub const SCHEMA_V2: Schema = Schema {
    version: 2,
    stores: &[
        StoreSpec {
            name: ACTIVITY,
            key_path: "id",
            indexes: &[("started_at", "result.started_at_ms")],
        },
        StoreSpec {
            name: GRANTS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: SANDBOX,
            key_path: "id",
            indexes: &[],
        },
    ],
};

/// Every schema the app has shipped, oldest first; the last is current.
pub const SCHEMAS: &[Schema] = &[SCHEMA_V1, SCHEMA_V2];

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

    /// Writes `records` to `store` in one transaction: all or none.
    pub async fn put_all<T: Serialize>(
        &self,
        store: &str,
        records: &[T],
    ) -> Result<(), StorageError> {
        let values = records.iter().map(to_js).collect::<Result<Vec<_>, _>>()?;
        let tx = self
            .rexie
            .transaction(&[store], TransactionMode::ReadWrite)
            .map_err(write_error)?;
        let s = tx.store(store).map_err(write_error)?;
        for v in &values {
            s.put(v, None).await.map_err(write_error)?;
        }
        tx.done().await.map_err(write_error)?;
        Ok(())
    }

    pub async fn put<T: Serialize>(&self, store: &str, record: &T) -> Result<(), StorageError> {
        self.put_all(store, std::slice::from_ref(record)).await
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
        tx.done().await.map_err(write_error)?;
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
        tx.done().await.map_err(write_error)?;
        Ok(())
    }
}

impl ActivityStore for Db {
    fn append<'a>(&'a self, record: &'a ActivityRecord) -> LocalBoxFuture<'a, Result<(), String>> {
        async move { self.put(ACTIVITY, record).await.map_err(|e| e.to_string()) }.boxed_local()
    }
}
