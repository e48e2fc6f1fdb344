//! Backup and restore in the browser, over core's backup format: every
//! store read in one transaction and written into one file; a file
//! verified, brought up to the current schema and planned against this
//! browser (the preview); the plan carried out in one transaction across
//! every store, so a restore lands whole or not at all.

use std::collections::BTreeMap;

use hearth_core::assistant::agent::Conversation;
use hearth_core::assistant::agent::export::{conversation_markdown, markdown_file_name};
use hearth_core::backup::{
    self, Backup, BackupError, Consent, Known, KnownStore, Manifest, RestoreMode, RestorePlan,
    SecretsChoice, Snapshot, StoreRecords, WriteOptions,
};
use serde_json::Value;

use crate::codec;
use crate::storage::{DATA_MIGRATIONS, Db, StorageError, StoreWrite};
use hearth_core::stores::{CONVERSATIONS, Schema};

/// Why a backup or restore did not happen, in words for the person.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BackupAppError {
    #[error("{0}")]
    File(#[from] BackupError),
    #[error("{0}")]
    Storage(#[from] StorageError),
    #[error("the records could not be read: {0}")]
    Records(String),
}

/// A backup file, ready to download.
#[derive(Clone, Debug, PartialEq)]
pub struct Created {
    pub bytes: Vec<u8>,
    pub manifest: Manifest,
    pub file_name: String,
}

/// The stores this build knows, for reading a file.
pub fn known_stores(schema: &Schema) -> Vec<KnownStore<'static>> {
    schema
        .stores
        .iter()
        .map(|s| KnownStore {
            name: s.name,
            key_path: s.key_path,
        })
        .collect()
}

/// Reads every store of `db` in one transaction, as JSON records. With
/// `with_blobs`, Blob contents are read too (after the transaction).
async fn snapshot(
    db: &Db,
    with_blobs: bool,
) -> Result<(Snapshot, BTreeMap<String, u64>), BackupAppError> {
    let schema = db.schema();
    let names = schema.store_names();
    let read = db.read_stores(&names).await?;
    let mut stores = Vec::with_capacity(read.len());
    let mut left_out = BTreeMap::new();
    for (name, values) in read {
        let encoded = if with_blobs {
            codec::encode_with_blobs(&values).await
        } else {
            codec::encode(&values)
        }
        .map_err(BackupAppError::Records)?;
        let records: Vec<Value> = serde_json::from_str(&encoded.json)
            .map_err(|e| BackupAppError::Records(e.to_string()))?;
        if encoded.left_out > 0 {
            left_out.insert(name.clone(), encoded.left_out);
        }
        let key_path = schema.store(&name).map(|s| s.key_path).unwrap_or("id");
        stores.push(StoreRecords {
            name,
            key_path: key_path.to_string(),
            records,
        });
    }
    Ok((
        Snapshot {
            schema_version: schema.version,
            stores,
        },
        left_out,
    ))
}

/// Makes one backup file of everything in `db`.
pub async fn create(db: &Db, secrets: SecretsChoice) -> Result<Created, BackupAppError> {
    let (snapshot, browser_only_left_out) = snapshot(db, true).await?;
    let created_at_ms = js_sys::Date::now();
    let written = backup::write(
        snapshot,
        &WriteOptions {
            app_version: env!("CARGO_PKG_VERSION").to_string(),
            created_at_ms,
            secrets,
            browser_only_left_out,
        },
    )?;
    Ok(Created {
        bytes: written.bytes,
        manifest: written.manifest,
        file_name: format!("{}.zip", backup::file_stem(created_at_ms)),
    })
}

/// Why a backup or export made for download did not reach the person.
#[derive(Clone, Debug, PartialEq)]
pub enum OfferError {
    /// Nothing was made.
    NotMade(BackupAppError),
    /// It was made, but the browser did not take the download.
    NotSaved(String),
}

/// Makes one backup file of everything in `db` and offers it to the
/// person as a download.
pub async fn download_backup(db: &Db, secrets: SecretsChoice) -> Result<Created, OfferError> {
    let created = create(db, secrets).await.map_err(OfferError::NotMade)?;
    crate::platform::download_bytes(&created.file_name, "application/zip", &created.bytes)
        .map_err(OfferError::NotSaved)?;
    Ok(created)
}

/// Offers every stored conversation as Markdown (see
/// [`conversations_markdown`]); the file's name, or `None` when there are
/// no conversations.
pub async fn download_conversations_markdown(db: &Db) -> Result<Option<String>, OfferError> {
    match conversations_markdown(db).await {
        Ok(Some((name, data, mime))) => crate::platform::download_bytes(&name, mime, &data)
            .map(|()| Some(name))
            .map_err(OfferError::NotSaved),
        Ok(None) => Ok(None),
        Err(e) => Err(OfferError::NotMade(e)),
    }
}

/// Reads the backup file the person picked and opens it (see
/// [`open_file`]).
pub async fn open_picked(file: web_sys::File, schema: &Schema) -> Result<Backup, String> {
    let bytes = crate::files::fs::blob_bytes(&file)
        .await
        .map_err(|e| format!("the browser could not read the file ({e:?})"))?;
    open_file(&bytes, schema).map_err(|e| e.to_string())
}

/// Verifies a file and brings a backup made at an older schema up to this
/// one with the same data migrations an upgrade runs.
pub fn open_file(bytes: &[u8], schema: &Schema) -> Result<Backup, BackupError> {
    let stores = known_stores(schema);
    let mut b = backup::read(
        bytes,
        &Known {
            schema_version: schema.version,
            stores: &stores,
        },
    )?;
    let from = b.manifest.schema_version;
    if from < schema.version {
        // The stores a transform reads, as the file holds them.
        let read: Vec<(String, Vec<serde_json::Value>)> = b
            .stores
            .iter()
            .filter(|s| {
                DATA_MIGRATIONS
                    .iter()
                    .any(|m| m.reads == Some(s.name.as_str()))
            })
            .map(|s| (s.name.clone(), s.records.clone()))
            .collect();
        let others = |name: &str| {
            read.iter()
                .find(|(n, _)| n == name)
                .map(|(_, r)| r.clone())
                .unwrap_or_default()
        };
        for store in &mut b.stores {
            let records = std::mem::take(&mut store.records);
            store.records = crate::storage::migrate_records(
                DATA_MIGRATIONS,
                from,
                schema.version,
                &store.name,
                records,
                &others,
            )
            .map_err(|e| {
                BackupError::Damaged(format!(
                    "its {} could not be brought up to date ({e})",
                    store.name
                ))
            })?;
        }
        b.manifest.schema_version = schema.version;
    }
    Ok(b)
}

/// What a restore would do, against this browser as it is now. Blob
/// contents are read too, so a file holding the same Blob counts as
/// unchanged. ([`restore`] plans inside its transaction, where Blobs cannot
/// be read: there a Blob record of the file is written again even when the
/// same, which changes nothing but counts as "updated".)
pub async fn preview(
    db: &Db,
    b: &Backup,
    mode: RestoreMode,
    consent: Consent,
) -> Result<RestorePlan, BackupAppError> {
    let (current, _) = snapshot(db, true).await?;
    Ok(backup::plan(b, &current, mode, consent))
}

/// Plans and carries out a restore in one transaction over every store:
/// the plan is made from the records that transaction reads, so it is
/// exactly what gets replaced. Returns the plan that was carried out.
pub async fn restore(
    db: &Db,
    b: &Backup,
    mode: RestoreMode,
    consent: Consent,
) -> Result<RestorePlan, BackupAppError> {
    let schema = db.schema();
    let names = schema.store_names();
    let mut done: Option<RestorePlan> = None;
    db.read_modify_write(&names, true, |current| {
        let mut stores = Vec::with_capacity(current.len());
        for (name, values) in current {
            let (records, _) = codec::to_values(values).map_err(StorageError::Decode)?;
            stores.push(StoreRecords {
                name: name.clone(),
                key_path: schema
                    .store(name)
                    .map(|s| s.key_path)
                    .unwrap_or("id")
                    .to_string(),
                records,
            });
        }
        let plan = backup::plan(
            b,
            &Snapshot {
                schema_version: schema.version,
                stores,
            },
            mode,
            consent,
        );
        let mut writes = Vec::with_capacity(plan.writes.len());
        for w in &plan.writes {
            writes.push(StoreWrite {
                store: w.name.clone(),
                clear: w.clear,
                records: codec::from_values(&w.puts).map_err(StorageError::Write)?,
                keep_browser_only: true,
            });
        }
        done = Some(plan);
        Ok(writes)
    })
    .await?;
    done.ok_or_else(|| BackupAppError::Records("the restore did not run".into()))
}

/// Every stored conversation as a Markdown file, ready to download: one
/// `.md` file alone, several in a zip. `None` when there are none.
pub async fn conversations_markdown(
    db: &Db,
) -> Result<Option<(String, Vec<u8>, &'static str)>, BackupAppError> {
    let (conversations, _) = db.all::<Conversation>(CONVERSATIONS).await?;
    match conversations.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some((
            markdown_file_name(one),
            conversation_markdown(one).into_bytes(),
            "text/markdown",
        ))),
        many => {
            let files: Vec<(String, String)> = many
                .iter()
                .map(|c| (markdown_file_name(c), conversation_markdown(c)))
                .collect();
            let zip = hearth_core::assistant::agent::export::markdown_zip(&files)
                .map_err(BackupAppError::Records)?;
            Ok(Some((
                format!(
                    "hearth-conversations-{}.zip",
                    backup::utc_date(js_sys::Date::now())
                ),
                zip,
                "application/zip",
            )))
        }
    }
}

/// One conversation as Markdown, for a button in the chat view.
pub fn conversation_file(c: &Conversation) -> (String, String) {
    (markdown_file_name(c), conversation_markdown(c))
}

/// One store's size, for the storage panel.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreStat {
    pub name: String,
    pub records: u64,
    /// The records' size as JSON; close to what a backup holds.
    pub bytes: u64,
}

/// Counts and sizes of every store, read in one transaction.
pub async fn store_stats(db: &Db) -> Result<Vec<StoreStat>, BackupAppError> {
    let names = db.schema().store_names();
    let read = db.read_stores(&names).await?;
    let mut out = Vec::with_capacity(read.len());
    for (name, values) in read {
        let encoded = codec::encode(&values).map_err(BackupAppError::Records)?;
        out.push(StoreStat {
            name,
            records: u64::from(values.length()),
            bytes: encoded.json.len() as u64,
        });
    }
    Ok(out)
}
