//! The one-file backup: every store's records in a zip, with a manifest that
//! says which versions wrote it, how many records each store holds and a
//! SHA-256 of each store's bytes. Reading verifies all of it before a single
//! record is believed, and a restore is planned from the backup and the
//! profile as it is now: counts for the preview first, then the exact writes.
//!
//! The format, version 1:
//!
//! ```text
//! manifest.json        {"format": "hearth-backup", "format_version": 1, …,
//!                       "stores": [{"name", "key_path", "records", "bytes", "sha256"}]}
//! stores/<name>.json   a JSON array of that store's records
//! ```
//!
//! Records are plain JSON: the app turns browser-only values (bytes, file
//! handles) into JSON before they get here. Secrets (API keys, OAuth
//! tokens) are found by field name ([`is_secret_field`]) and left out
//! unless the person opts in; a restore then keeps the secrets this browser
//! already has for the same records.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Cursor, Read, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

/// What `manifest.json` says in `format`.
pub const FORMAT: &str = "hearth-backup";
/// The format this code writes, and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
pub const MANIFEST_PATH: &str = "manifest.json";
/// The most bytes one store's entry may inflate to.
pub const MAX_STORE_BYTES: u64 = 1 << 30;
/// The most bytes a whole backup may inflate to.
pub const MAX_TOTAL_BYTES: u64 = 3 << 30;
/// The manifest is small; anything bigger is not ours.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The zip entry that holds `store`.
pub fn store_path(store: &str) -> String {
    format!("stores/{store}.json")
}

/// One store's records, in the order storage gave them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoreRecords {
    pub name: String,
    /// The field that keys each record (`id`, `key`, …).
    pub key_path: String,
    pub records: Vec<Value>,
}

/// Every store of a profile, read in one transaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The storage schema version the records follow.
    pub schema_version: u32,
    pub stores: Vec<StoreRecords>,
}

/// A store the current storage schema has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownStore<'a> {
    pub name: &'a str,
    pub key_path: &'a str,
}

/// What this build of Hearth can restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known<'a> {
    pub schema_version: u32,
    pub stores: &'a [KnownStore<'a>],
}

/// Whether API keys and tokens go into the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SecretsChoice {
    LeaveOut,
    Include,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WriteOptions {
    pub app_version: String,
    pub created_at_ms: f64,
    pub secrets: SecretsChoice,
    /// Browser-only values the app could not put into JSON (file access
    /// handles), per store; recorded so the restore can say so.
    pub browser_only_left_out: BTreeMap<String, u64>,
}

/// What the backup did with secrets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretsInfo {
    pub included: bool,
    /// Secret fields emptied because they were left out.
    pub left_out: u64,
}

/// One store in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreEntry {
    pub name: String,
    pub key_path: String,
    pub records: u64,
    /// The entry's size, uncompressed.
    pub bytes: u64,
    /// SHA-256 of the entry's bytes, lowercase hex.
    pub sha256: String,
    /// Browser-only values left out of this store's records.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub browser_only_left_out: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub format_version: u32,
    /// The Hearth version that wrote it.
    pub app_version: String,
    /// The storage schema its records follow.
    pub schema_version: u32,
    pub created_at_ms: f64,
    pub secrets: SecretsInfo,
    pub stores: Vec<StoreEntry>,
}

impl Manifest {
    pub fn records(&self) -> u64 {
        self.stores.iter().map(|s| s.records).sum()
    }

    pub fn store(&self, name: &str) -> Option<&StoreEntry> {
        self.stores.iter().find(|s| s.name == name)
    }
}

/// A verified backup.
#[derive(Clone, Debug, PartialEq)]
pub struct Backup {
    pub manifest: Manifest,
    /// In the manifest's order.
    pub stores: Vec<StoreRecords>,
}

impl Backup {
    pub fn store(&self, name: &str) -> Option<&StoreRecords> {
        self.stores.iter().find(|s| s.name == name)
    }
}

/// Why a file cannot be restored (or a backup not written). Each message
/// says what is wrong in plain words; the caller adds that nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackupError {
    #[error("the file is empty")]
    Empty,
    #[error("this file is not a Hearth backup: Hearth backups are zip files, and this is not one")]
    NotZip,
    #[error("this zip file is not a Hearth backup: {0}")]
    Foreign(String),
    #[error("this backup is damaged or incomplete: {0}")]
    Damaged(String),
    #[error(
        "this backup is damaged: the {store} in it do not match their checksum (expected {expected}, found {found})"
    )]
    Checksum {
        store: String,
        expected: String,
        found: String,
    },
    #[error(
        "this backup was made by a newer Hearth (backup format {found}; this one reads format {supported} and older). Update Hearth, then restore it"
    )]
    NewerFormat { found: u32, supported: u32 },
    #[error(
        "this backup holds data from a newer Hearth (storage version {found}; this one has version {current}). Update Hearth, then restore it"
    )]
    NewerSchema { found: u32, current: u32 },
    #[error(
        "this backup holds a kind of data this Hearth does not know ('{0}'). Update Hearth, then restore it"
    )]
    UnknownStore(String),
    #[error("this backup is too large to restore in a browser: it inflates to more than {0} bytes")]
    TooLarge(u64),
    #[error("cannot write the backup: {0}")]
    Write(String),
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// SHA-256 in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

// ---------------------------------------------------------------- secrets

/// Field names that hold secrets: provider API keys, OAuth access and
/// refresh tokens, client secrets, passwords and auth headers. Records
/// elsewhere in Hearth keep secrets under such names so backups find them.
pub fn is_secret_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    const EXACT: [&str; 11] = [
        "api_key",
        "apikey",
        "x_api_key",
        "password",
        "passphrase",
        "secret",
        "token",
        "authorization",
        "proxy_authorization",
        "cookie",
        "private_key",
    ];
    EXACT.contains(&n.as_str())
        || n.ends_with("_token")
        || n.ends_with("_secret")
        || n.ends_with("_api_key")
        || n.ends_with("_password")
}

/// Field names whose whole object is a set of secrets (an OAuth token set).
fn is_secret_object_field(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "tokens" | "oauth_tokens" | "token_set"
    )
}

/// A secret's value once left out: empty, of a shape that still reads.
fn left_out(value: &Value) -> Value {
    match value {
        Value::String(_) => Value::String(String::new()),
        _ => Value::Null,
    }
}

fn is_empty_secret(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

fn is_secret(name: &str, value: &Value) -> bool {
    match value {
        Value::String(_) => is_secret_field(name),
        Value::Object(_) => is_secret_field(name) || is_secret_object_field(name),
        Value::Array(_) => is_secret_field(name),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Empties every secret in `value`; returns how many it emptied.
pub fn strip_secrets(value: &mut Value) -> u64 {
    match value {
        Value::Object(map) => {
            let mut n = 0;
            for (k, v) in map.iter_mut() {
                if is_secret(k, v) {
                    if !is_empty_secret(v) {
                        *v = left_out(v);
                        n += 1;
                    }
                } else {
                    n += strip_secrets(v);
                }
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(strip_secrets).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => 0,
    }
}

/// Fills secrets that `incoming` lacks (left out of a backup) from
/// `current`, the same record as this browser has it; returns how many.
pub fn carry_secrets(incoming: &mut Value, current: &Value) -> u64 {
    match (incoming, current) {
        (Value::Object(inc), Value::Object(cur)) => {
            let mut n = 0;
            for (k, v) in inc.iter_mut() {
                let Some(c) = cur.get(k) else { continue };
                if is_secret(k, c) {
                    if is_empty_secret(v) && !is_empty_secret(c) {
                        *v = c.clone();
                        n += 1;
                    }
                } else {
                    n += carry_secrets(v, c);
                }
            }
            n
        }
        (Value::Array(inc), Value::Array(cur)) if inc.len() == cur.len() => inc
            .iter_mut()
            .zip(cur)
            .map(|(i, c)| carry_secrets(i, c))
            .sum(),
        _ => 0,
    }
}

// ---------------------------------------------------------------- writing

/// A written backup: the file's bytes and its manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    pub bytes: Vec<u8>,
    pub manifest: Manifest,
}

/// Writes `snapshot` as one backup file.
pub fn write(mut snapshot: Snapshot, options: &WriteOptions) -> Result<Written, BackupError> {
    let mut left_out = 0;
    if options.secrets == SecretsChoice::LeaveOut {
        for store in &mut snapshot.stores {
            for record in &mut store.records {
                left_out += strip_secrets(record);
            }
        }
    }
    let mut entries = Vec::with_capacity(snapshot.stores.len());
    let mut bodies = Vec::with_capacity(snapshot.stores.len());
    for store in &snapshot.stores {
        let body =
            serde_json::to_vec(&store.records).map_err(|e| BackupError::Write(e.to_string()))?;
        entries.push(StoreEntry {
            name: store.name.clone(),
            key_path: store.key_path.clone(),
            records: store.records.len() as u64,
            bytes: body.len() as u64,
            sha256: sha256_hex(&body),
            browser_only_left_out: options
                .browser_only_left_out
                .get(&store.name)
                .copied()
                .unwrap_or(0),
        });
        bodies.push(body);
    }
    let manifest = Manifest {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        app_version: options.app_version.clone(),
        schema_version: snapshot.schema_version,
        created_at_ms: options.created_at_ms,
        secrets: SecretsInfo {
            included: options.secrets == SecretsChoice::Include,
            left_out,
        },
        stores: entries,
    };
    let manifest_json =
        serde_json::to_vec_pretty(&manifest).map_err(|e| BackupError::Write(e.to_string()))?;
    let w = |e: zip::result::ZipError| BackupError::Write(e.to_string());
    let io = |e: std::io::Error| BackupError::Write(e.to_string());
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    // Deflate at a middling level: JSON shrinks 5–10×, and level 9 costs
    // several times the time for a few percent more.
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(5))
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644)
        .large_file(false);
    zip.start_file(MANIFEST_PATH, options).map_err(w)?;
    zip.write_all(&manifest_json).map_err(io)?;
    for (store, body) in manifest.stores.iter().zip(&bodies) {
        let opts = if body.len() as u64 > u32::MAX as u64 {
            options.large_file(true)
        } else {
            options
        };
        zip.start_file(store_path(&store.name), opts).map_err(w)?;
        zip.write_all(body).map_err(io)?;
    }
    let bytes = zip.finish().map_err(w)?.into_inner();
    Ok(Written { bytes, manifest })
}

// ---------------------------------------------------------------- reading

fn read_entry(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, BackupError> {
    let mut entry = match archive.by_name(name) {
        Ok(e) => e,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(BackupError::Damaged(format!("{name}: {e}"))),
    };
    if entry.size() > limit {
        return Err(BackupError::TooLarge(limit));
    }
    let mut data = Vec::with_capacity(entry.size() as usize);
    (&mut entry)
        .take(limit + 1)
        .read_to_end(&mut data)
        .map_err(|e| BackupError::Damaged(format!("{name}: {e}")))?;
    if data.len() as u64 > limit {
        return Err(BackupError::TooLarge(limit));
    }
    Ok(Some(data))
}

/// A record's key, as IndexedDB sees it: a string or a number.
fn record_key(record: &Value, key_path: &str) -> Option<String> {
    match record.as_object()?.get(key_path)? {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) => Some(format!("n:{n}")),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Reads and verifies a backup: the container, the manifest, every
/// store's checksum and records. Nothing in it is trusted before this
/// returns `Ok`.
pub fn read(bytes: &[u8], known: &Known<'_>) -> Result<Backup, BackupError> {
    if bytes.is_empty() {
        return Err(BackupError::Empty);
    }
    if !bytes.starts_with(b"PK") {
        return Err(BackupError::NotZip);
    }
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| BackupError::Damaged(format!("the zip cannot be read ({e})")))?;
    let manifest_bytes = read_entry(&mut archive, MANIFEST_PATH, MAX_MANIFEST_BYTES)?
        .ok_or_else(|| BackupError::Foreign("it has no manifest.json".into()))?;
    let raw: Value = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| BackupError::Foreign(format!("its manifest.json is not JSON ({e})")))?;
    if raw.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(BackupError::Foreign(
            "its manifest.json does not describe a Hearth backup".into(),
        ));
    }
    match raw.get("format_version").and_then(Value::as_u64) {
        Some(v) if v > u64::from(FORMAT_VERSION) => {
            return Err(BackupError::NewerFormat {
                found: u32::try_from(v).unwrap_or(u32::MAX),
                supported: FORMAT_VERSION,
            });
        }
        Some(v) if v >= 1 => {}
        Some(_) | None => {
            return Err(BackupError::Foreign(
                "its manifest.json has no valid format_version".into(),
            ));
        }
    }
    let manifest: Manifest = serde_json::from_value(raw)
        .map_err(|e| BackupError::Damaged(format!("manifest.json: {e}")))?;
    if manifest.schema_version > known.schema_version {
        return Err(BackupError::NewerSchema {
            found: manifest.schema_version,
            current: known.schema_version,
        });
    }
    let mut seen = HashSet::new();
    let mut total = 0u64;
    for entry in &manifest.stores {
        let Some(k) = known.stores.iter().find(|k| k.name == entry.name) else {
            return Err(BackupError::UnknownStore(entry.name.clone()));
        };
        if k.key_path != entry.key_path {
            return Err(BackupError::Damaged(format!(
                "the {} are keyed by '{}', but Hearth keys them by '{}'",
                entry.name, entry.key_path, k.key_path
            )));
        }
        if !seen.insert(entry.name.as_str()) {
            return Err(BackupError::Damaged(format!(
                "the manifest lists {} twice",
                entry.name
            )));
        }
        total = total.saturating_add(entry.bytes);
        if entry.bytes > MAX_STORE_BYTES {
            return Err(BackupError::TooLarge(MAX_STORE_BYTES));
        }
    }
    if total > MAX_TOTAL_BYTES {
        return Err(BackupError::TooLarge(MAX_TOTAL_BYTES));
    }
    // Every entry must be one the manifest accounts for.
    let expected: HashSet<String> = manifest
        .stores
        .iter()
        .map(|s| store_path(&s.name))
        .chain([MANIFEST_PATH.to_string()])
        .collect();
    for name in archive.file_names() {
        if !expected.contains(name) {
            return Err(BackupError::Damaged(format!(
                "it holds a file the manifest does not list ({})",
                name.escape_debug()
            )));
        }
    }
    let mut stores = Vec::with_capacity(manifest.stores.len());
    for entry in &manifest.stores {
        let path = store_path(&entry.name);
        let body = read_entry(&mut archive, &path, entry.bytes)?
            .ok_or_else(|| BackupError::Damaged(format!("{path} is missing")))?;
        let found = sha256_hex(&body);
        if body.len() as u64 != entry.bytes || found != entry.sha256 {
            return Err(BackupError::Checksum {
                store: entry.name.clone(),
                expected: entry.sha256.clone(),
                found,
            });
        }
        let records: Vec<Value> = serde_json::from_slice(&body)
            .map_err(|e| BackupError::Damaged(format!("{path} is not a list of records ({e})")))?;
        if records.len() as u64 != entry.records {
            return Err(BackupError::Damaged(format!(
                "{path} holds {} records, the manifest says {}",
                records.len(),
                entry.records
            )));
        }
        let mut keys = HashSet::with_capacity(records.len());
        for (i, record) in records.iter().enumerate() {
            let key = record_key(record, &entry.key_path).ok_or_else(|| {
                BackupError::Damaged(format!(
                    "record {} of the {} has no '{}'",
                    i + 1,
                    entry.name,
                    entry.key_path
                ))
            })?;
            if !keys.insert(key) {
                return Err(BackupError::Damaged(format!(
                    "two {} share the same '{}'",
                    entry.name, entry.key_path
                )));
            }
        }
        stores.push(StoreRecords {
            name: entry.name.clone(),
            key_path: entry.key_path.clone(),
            records,
        });
    }
    Ok(Backup { manifest, stores })
}

// ---------------------------------------------------------------- restoring

/// How a restore treats what the profile already holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestoreMode {
    /// Add what this browser lacks; where both have the same record, keep
    /// the more recently changed copy (this browser's when neither says).
    Merge,
    /// Make this browser hold exactly what the backup holds.
    Replace,
}

/// The preview of one store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreCounts {
    pub name: String,
    pub in_backup: u64,
    pub current: u64,
    /// Records only the backup has.
    pub added: u64,
    /// Records both have, where the backup's copy will be written.
    pub updated: u64,
    /// Records both have, where this browser's copy stays.
    pub kept: u64,
    /// Records both have, identical.
    pub unchanged: u64,
    /// This browser's records that will be gone afterwards.
    pub removed: u64,
    pub after: u64,
}

/// One store's writes, for one transaction over all stores.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreWrites {
    pub name: String,
    /// Empty the store first.
    pub clear: bool,
    pub puts: Vec<Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RestorePlan {
    pub mode: RestoreMode,
    /// Every store of the current schema, in its order.
    pub counts: Vec<StoreCounts>,
    /// Only stores with something to do.
    pub writes: Vec<StoreWrites>,
    /// Secrets the backup left out that this browser's copies supply.
    pub secrets_kept: u64,
}

impl RestorePlan {
    /// Whether the restore changes nothing.
    pub fn is_noop(&self) -> bool {
        self.writes.is_empty()
    }

    pub fn total(&self, f: impl Fn(&StoreCounts) -> u64) -> u64 {
        self.counts.iter().map(f).sum()
    }
}

/// Fields that say when a record last changed, in the order they are
/// looked for.
const CHANGED_FIELDS: [&str; 3] = ["updated_ms", "updated_at_ms", "last_used_ms"];

fn changed_at(record: &Value) -> Option<f64> {
    let map = record.as_object()?;
    CHANGED_FIELDS
        .iter()
        .find_map(|f| map.get(*f).and_then(Value::as_f64))
}

/// Plans a restore of `backup` into the profile `current` (every store of
/// the current schema, read in one transaction).
pub fn plan(backup: &Backup, current: &Snapshot, mode: RestoreMode) -> RestorePlan {
    let carry = !backup.manifest.secrets.included;
    let mut counts = Vec::new();
    let mut writes = Vec::new();
    let mut secrets_kept = 0;
    let empty = Vec::new();
    for store in &current.stores {
        let incoming = backup
            .store(&store.name)
            .map(|s| &s.records)
            .unwrap_or(&empty);
        let mut by_key: HashMap<String, &Value> = HashMap::with_capacity(store.records.len());
        for r in &store.records {
            if let Some(k) = record_key(r, &store.key_path) {
                by_key.insert(k, r);
            }
        }
        let mut c = StoreCounts {
            name: store.name.clone(),
            in_backup: incoming.len() as u64,
            current: store.records.len() as u64,
            ..StoreCounts::default()
        };
        let mut puts = Vec::new();
        let mut matched = 0u64;
        for record in incoming {
            let key = record_key(record, &store.key_path);
            let existing = key.as_ref().and_then(|k| by_key.get(k)).copied();
            let mut record = record.clone();
            if let (true, Some(existing)) = (carry, existing) {
                secrets_kept += carry_secrets(&mut record, existing);
            }
            match (mode, existing) {
                (_, None) => {
                    c.added += 1;
                    puts.push(record);
                }
                (RestoreMode::Replace, Some(existing)) => {
                    matched += 1;
                    if *existing == record {
                        c.unchanged += 1;
                    } else {
                        c.updated += 1;
                    }
                    puts.push(record);
                }
                (RestoreMode::Merge, Some(existing)) => {
                    matched += 1;
                    if *existing == record {
                        c.unchanged += 1;
                    } else {
                        let newer = match (changed_at(&record), changed_at(existing)) {
                            (Some(b), Some(h)) => b > h,
                            (Some(_), None) | (None, Some(_)) | (None, None) => false,
                        };
                        if newer {
                            c.updated += 1;
                            puts.push(record);
                        } else {
                            c.kept += 1;
                        }
                    }
                }
            }
        }
        match mode {
            RestoreMode::Merge => {
                c.after = c.current + c.added;
            }
            RestoreMode::Replace => {
                c.removed = c.current - matched;
                c.after = c.in_backup;
            }
        }
        let clear = mode == RestoreMode::Replace && (c.current > 0);
        // Replacing with identical records changes nothing; skip the writes.
        let nothing = c.added == 0 && c.updated == 0 && c.removed == 0;
        if !nothing {
            writes.push(StoreWrites {
                name: store.name.clone(),
                clear,
                puts,
            });
        }
        counts.push(c);
    }
    RestorePlan {
        mode,
        counts,
        writes,
        secrets_kept,
    }
}

/// What the person calls each store.
pub fn store_label(name: &str) -> &str {
    match name {
        "conversations" => "Conversations",
        "notes" => "Notes",
        "tasks" => "Tasks",
        "memories" => "Memories",
        "skill_packages" => "Skill packages",
        "skill_files" => "Skill files",
        "mcp_servers" => "MCP servers",
        "settings" => "Settings",
        "grants" => "File grants",
        "artifacts" => "Files from code",
        "usage" => "Skill usage",
        "activity" => "Activity log",
        "sandbox" => "Code settings",
        other => other,
    }
}

/// The file name (without extension) of a backup made at `created_at_ms`:
/// `hearth-backup-YYYY-MM-DD`, the date in UTC.
pub fn file_stem(created_at_ms: f64) -> String {
    format!("hearth-backup-{}", utc_date(created_at_ms))
}

/// `unix_ms` as a UTC date, `YYYY-MM-DD`.
pub fn utc_date(unix_ms: f64) -> String {
    let (y, m, d) = crate::calculator::civil_from_days((unix_ms / 86_400_000.0).floor() as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests;
