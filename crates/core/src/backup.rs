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
//! Records are JSON: the app turns bytes and Blobs into tagged values and
//! leaves file handles out before they get here ([`records`] says how).
//! Reading decodes every record once, into the values the restore plans,
//! the preview shows and the app writes: nothing is checked in one form
//! and written in another. Secrets (API keys, OAuth
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

use crate::stores::{
    ACTIVITY, ARTIFACTS, CONVERSATIONS, GRANTS, MCP_SERVERS, MEMORIES, NOTES, SETTINGS,
    SKILL_FILES, SKILL_PACKAGES, TASKS, USAGE,
};

/// What `manifest.json` says in `format`.
pub const FORMAT: &str = "hearth-backup";
/// The format this code writes, and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
pub const MANIFEST_PATH: &str = "manifest.json";
/// The most bytes one store's entry may inflate to.
pub const MAX_STORE_BYTES: u64 = 1 << 30;
/// The most bytes a whole backup may inflate to.
pub const MAX_TOTAL_BYTES: u64 = 3 << 30;
/// How much of a zip entry is inflated at a time.
const READ_CHUNK: usize = 64 * 1024;
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
    /// How bytes, Blobs and keys like the tag are written in the records
    /// ([`records::RECORD_ENCODING`]); files that do not say are version 1.
    #[serde(default = "legacy_encoding")]
    pub record_encoding: u32,
}

fn legacy_encoding() -> u32 {
    records::LEGACY_ENCODING
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

/// Fields that hold request headers (`{"Name": "value"}` or
/// `[["Name", "value"], …]`). Every value in them counts as a secret:
/// headers a person adds to a server are how it authenticates them.
fn is_headers_field(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "headers" | "http_headers" | "extra_headers"
    )
}

/// Where a walk through a record is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Within {
    Record,
    /// Inside a headers field: every value is a secret.
    Headers,
}

/// `[name, value]` with a string name: how headers are stored as pairs.
fn as_pair(value: &Value) -> Option<(&str, &Value)> {
    match value.as_array()?.as_slice() {
        [Value::String(name), v] => Some((name.as_str(), v)),
        _ => None,
    }
}

fn as_pair_mut(value: &mut Value) -> Option<(&str, &mut Value)> {
    match value.as_array_mut()?.as_mut_slice() {
        [Value::String(name), v] => Some((name.as_str(), v)),
        _ => None,
    }
}

/// Whether `value`, found under `name` (`within` some place), is a secret.
fn secret_here(name: &str, value: &Value, within: Within) -> bool {
    match (within, value) {
        (Within::Headers, Value::String(_)) => true,
        (Within::Headers | Within::Record, _) => is_secret(name, value),
    }
}

fn strip_in(value: &mut Value, within: Within) -> u64 {
    match value {
        Value::Object(map) => {
            let mut n = 0;
            for (k, v) in map.iter_mut() {
                if secret_here(k, v, within) {
                    if !is_empty_secret(v) {
                        *v = left_out(v);
                        n += 1;
                    }
                } else {
                    let inner = if is_headers_field(k) {
                        Within::Headers
                    } else {
                        within
                    };
                    n += strip_in(v, inner);
                }
            }
            n
        }
        Value::Array(items) => items
            .iter_mut()
            .map(|item| match as_pair_mut(item) {
                Some((name, v))
                    if (within == Within::Headers && v.is_string())
                        || is_secret(name, v) && v.is_string() =>
                {
                    if is_empty_secret(v) {
                        0
                    } else {
                        *v = left_out(v);
                        1
                    }
                }
                Some(_) | None => strip_in(item, within),
            })
            .sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => 0,
    }
}

/// Empties every secret in `value`; returns how many it emptied. Secrets
/// are found by field name, in `[name, value]` pairs by the name, and
/// every value inside a headers field.
pub fn strip_secrets(value: &mut Value) -> u64 {
    strip_in(value, Within::Record)
}

/// Whether `value` holds a secret that is not empty.
pub fn holds_secrets(value: &Value) -> bool {
    let mut copy = value.clone();
    strip_secrets(&mut copy) > 0
}

fn carry_in(incoming: &mut Value, current: &Value, within: Within) -> u64 {
    match (incoming, current) {
        (Value::Object(inc), Value::Object(cur)) => {
            let mut n = 0;
            for (k, v) in inc.iter_mut() {
                let Some(c) = cur.get(k) else { continue };
                if secret_here(k, c, within) {
                    if is_empty_secret(v) && !is_empty_secret(c) {
                        *v = c.clone();
                        n += 1;
                    }
                } else {
                    let inner = if is_headers_field(k) {
                        Within::Headers
                    } else {
                        within
                    };
                    n += carry_in(v, c, inner);
                }
            }
            n
        }
        (Value::Array(inc), Value::Array(cur)) if inc.len() == cur.len() => inc
            .iter_mut()
            .zip(cur)
            .map(|(i, c)| {
                let pair = match (as_pair(c), as_pair_mut(i)) {
                    (Some((cn, cv)), Some((iname, iv)))
                        if cn.eq_ignore_ascii_case(iname)
                            && cv.is_string()
                            && (within == Within::Headers || is_secret(cn, cv)) =>
                    {
                        Some((iv, cv))
                    }
                    _ => None,
                };
                match pair {
                    Some((iv, cv)) => {
                        if is_empty_secret(iv) && !is_empty_secret(cv) {
                            *iv = cv.clone();
                            1
                        } else {
                            0
                        }
                    }
                    None => carry_in(i, c, within),
                }
            })
            .sum(),
        _ => 0,
    }
}

/// Fills secrets that `incoming` lacks (left out of a backup) from
/// `current`, the same record as this browser has it; returns how many.
/// Only call it for records whose [`destinations`] are the same: a secret
/// never follows its record somewhere new.
pub fn carry_secrets(incoming: &mut Value, current: &Value) -> u64 {
    carry_in(incoming, current, Within::Record)
}

/// Field names that say where a record's requests go, or what runs:
/// addresses, endpoints, issuers, commands, and what picks among them.
pub fn is_destination_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    const EXACT: [&str; 20] = [
        "url", "uri", "base_url", "endpoint", "host", "hostname", "port", "origin", "address",
        "server", "source", "issuer", "resource", "audience", "command", "args", "cwd", "kind",
        "preset", "relay",
    ];
    EXACT.contains(&n.as_str())
        || n == "local"
        || n.ends_with("_url")
        || n.ends_with("_uri")
        || n.ends_with("_endpoint")
        || n.ends_with("_issuer")
        || n.ends_with("_host")
}

/// Whether a string looks like an address something could be sent to.
fn looks_like_address(s: &str) -> bool {
    s.contains("://")
}

fn collect_destinations(value: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let at = format!("{path}/{k}");
                if is_secret(k, v) || is_headers_field(k) {
                    continue;
                }
                if looks_like_address(k) {
                    out.push((at.clone(), String::new()));
                }
                if is_destination_field(k) {
                    out.push((at, v.to_string()));
                } else {
                    collect_destinations(v, &at, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_destinations(v, &format!("{path}/{i}"), out);
            }
        }
        Value::String(s) if looks_like_address(s) => out.push((path.to_string(), s.clone())),
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Where a record sends things: every destination field and every
/// address-like value in it (secrets and headers aside), by position. Two
/// records with equal destinations send their secrets to the same place.
pub fn destinations(record: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect_destinations(record, "", &mut out);
    out.sort();
    out
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
        record_encoding: records::RECORD_ENCODING,
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
    // The size an entry declares is only a claim: read in chunks and grow
    // with what actually inflates, up to the limit, so a file that claims
    // a gigabyte costs what it holds.
    let mut data = Vec::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut source = (&mut entry).take(limit + 1);
    loop {
        let n = source
            .read(&mut chunk)
            .map_err(|e| BackupError::Damaged(format!("{name}: {e}")))?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(&chunk[..n]);
        if data.len() as u64 > limit {
            return Err(BackupError::TooLarge(limit));
        }
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
    if manifest.record_encoding > records::RECORD_ENCODING {
        return Err(BackupError::Damaged(format!(
            "its records are written in encoding {}, which only a newer Hearth reads (this one reads {}); update Hearth, then restore it",
            manifest.record_encoding,
            records::RECORD_ENCODING
        )));
    }
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
        // Decoded once, here: the keys checked below, the plan, the
        // preview and the app's writes all see these values.
        let records = records
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                records::decode(r, manifest.record_encoding).map_err(|e| {
                    BackupError::Damaged(format!("record {} of the {}: {e}", i + 1, entry.name))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
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
    /// Records of the backup not applied because the person did not agree
    /// to what they loosen (only ever the permission settings).
    #[serde(default)]
    pub held_back: u64,
}

/// One store's writes, for one transaction over all stores.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreWrites {
    pub name: String,
    /// Empty the store first.
    pub clear: bool,
    pub puts: Vec<Value>,
}

/// What the person agreed to beyond the restore itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Consent {
    /// Apply the backup's permission settings even where they let more run
    /// without asking. Without it, this browser's permissions stay.
    pub loosen_permissions: bool,
}

/// What happens to one reviewed record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordChange {
    Added,
    Changed,
    Removed,
}

/// One field of a reviewed record, before and after, as text. Secrets are
/// never shown: only whether one is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldChange {
    /// `base_url`, `headers.Authorization`, `skills.web_fetch.approval`…
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Says where requests go or what runs: shown highlighted.
    pub destination: bool,
}

/// A record of a reviewed store the restore writes or removes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordReview {
    pub store: String,
    pub key: String,
    /// What the person calls it: "Model provider", "MCP server docs"…
    pub label: String,
    pub change: RecordChange,
    /// Changed fields, at most [`MAX_REVIEWED_FIELDS`].
    pub fields: Vec<FieldChange>,
    /// Changed fields not listed.
    pub more_fields: u64,
    /// This browser's secrets for the record stay behind because the
    /// backup's copy points somewhere else.
    pub secrets_withheld: bool,
    /// The backup's copy is not applied (the person did not agree to what
    /// it loosens).
    pub held_back: bool,
}

/// The changes a person must see before a restore: every written or
/// removed record of the stores that decide where data goes and what may
/// run, and what the backup would loosen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Review {
    pub records: Vec<RecordReview>,
    /// How the backup's permission settings let more run unasked, in
    /// words; empty when they do not.
    pub loosening: Vec<String>,
}

/// Stores whose changes are reviewed record by record.
pub const REVIEWED_STORES: [&str; 4] = [SETTINGS, MCP_SERVERS, GRANTS, SKILL_PACKAGES];
/// The most fields listed per reviewed record.
pub const MAX_REVIEWED_FIELDS: usize = 40;
/// Values longer than this are cut in the review.
const MAX_SHOWN_CHARS: usize = 160;

#[derive(Clone, Debug, PartialEq)]
pub struct RestorePlan {
    pub mode: RestoreMode,
    /// Every store of the current schema, in its order.
    pub counts: Vec<StoreCounts>,
    /// Only stores with something to do.
    pub writes: Vec<StoreWrites>,
    /// Secrets the backup left out that this browser's copies supply.
    pub secrets_kept: u64,
    /// Records whose secrets this browser keeps to itself, because the
    /// backup points them somewhere else.
    pub secrets_withheld: u64,
    pub review: Review,
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

/// A record's key as the person reads it.
fn plain_key(record: &Value, key_path: &str) -> String {
    match record.get(key_path) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// What the person calls one record of a reviewed store.
pub fn record_label(store: &str, record: &Value, key: &str) -> String {
    match store {
        SETTINGS => setting_label(key),
        MCP_SERVERS => format!("MCP server {key}"),
        GRANTS => match record.get("name").and_then(Value::as_str) {
            Some(name) => format!("File access “{name}”"),
            None => format!("File access {key}"),
        },
        SKILL_PACKAGES => format!("Skill package {key}"),
        other => format!("{} {key}", store_label(other)),
    }
}

/// What the person calls a record of the settings store.
pub fn setting_label(key: &str) -> String {
    if let Some(server) = key.strip_prefix("mcp.oauth.") {
        return format!("Sign-in to MCP server {server}");
    }
    if let Some(skill) = key.strip_prefix("web.domains.") {
        return format!("Domain lists of {skill}");
    }
    match key {
        "provider" => "Model provider".into(),
        crate::skill::permission::SETTINGS_KEY => "Permissions".into(),
        "assistant" => "Assistant settings".into(),
        "provider_offer_dismissed" => "Local model offer".into(),
        "local_server_probe" => "Local model servers found".into(),
        "command_skills" => "Active skills of the command bar".into(),
        "sandbox.python" => "Python settings".into(),
        other => format!("Setting {other}"),
    }
}

/// The leaves of a record, by path, as the review shows them. Settings
/// records show their value's fields; `[name, value]` pairs read as
/// `name`; secrets read as set or not.
fn leaves(value: &Value, path: &str, within: Within, out: &mut Vec<(String, String, bool)>) {
    let at = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let p = at(k);
                if secret_here(k, v, within) {
                    out.push((p, secret_shown(v), false));
                } else if is_destination_field(k) && !v.is_object() {
                    out.push((p, shown(v), true));
                } else {
                    let inner = if is_headers_field(k) {
                        Within::Headers
                    } else {
                        within
                    };
                    let dest = is_destination_field(k);
                    let start = out.len();
                    leaves(v, &p, inner, out);
                    if dest {
                        for leaf in &mut out[start..] {
                            leaf.2 = true;
                        }
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(|i| as_pair(i).is_some()) => {
            for item in items {
                if let Some((name, v)) = as_pair(item) {
                    let p = at(name);
                    if within == Within::Headers || is_secret(name, v) {
                        out.push((p, secret_shown(v), false));
                    } else {
                        leaves(v, &p, within, out);
                    }
                }
            }
        }
        Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
            for (i, item) in items.iter().enumerate() {
                leaves(item, &at(&i.to_string()), within, out);
            }
        }
        other => {
            let destination = other.as_str().is_some_and(looks_like_address);
            out.push((path.to_string(), shown(other), destination));
        }
    }
}

fn secret_shown(v: &Value) -> String {
    if is_empty_secret(v) {
        "(none)".into()
    } else {
        "(secret)".into()
    }
}

fn shown(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".into(),
        other => other.to_string(),
    };
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn record_leaves(store: &str, record: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    // A settings record is {key, value}: its value is what matters.
    match (store, record.get("value")) {
        (SETTINGS, Some(v)) => leaves(v, "", Within::Record, &mut out),
        _ => leaves(record, "", Within::Record, &mut out),
    }
    out
}

/// The fields that differ between `before` and `after`.
fn field_changes(store: &str, before: Option<&Value>, after: Option<&Value>) -> Vec<FieldChange> {
    let b = before.map(|r| record_leaves(store, r)).unwrap_or_default();
    let a = after.map(|r| record_leaves(store, r)).unwrap_or_default();
    let bm: BTreeMap<&str, (&str, bool)> = b
        .iter()
        .map(|(p, v, d)| (p.as_str(), (v.as_str(), *d)))
        .collect();
    let am: BTreeMap<&str, (&str, bool)> = a
        .iter()
        .map(|(p, v, d)| (p.as_str(), (v.as_str(), *d)))
        .collect();
    let mut paths: Vec<&str> = Vec::new();
    for (p, _, _) in a.iter().chain(b.iter()) {
        if !paths.contains(&p.as_str()) {
            paths.push(p);
        }
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let (bv, bd) = bm.get(p).map_or((None, false), |(v, d)| (Some(*v), *d));
            let (av, ad) = am.get(p).map_or((None, false), |(v, d)| (Some(*v), *d));
            (bv != av).then(|| FieldChange {
                path: p.to_string(),
                before: bv.map(str::to_string),
                after: av.map(str::to_string),
                destination: bd || ad,
            })
        })
        .collect()
}

fn review_of(
    store: &str,
    key: String,
    before: Option<&Value>,
    after: Option<&Value>,
) -> RecordReview {
    let change = match (before, after) {
        (None, _) => RecordChange::Added,
        (Some(_), Some(_)) => RecordChange::Changed,
        (Some(_), None) => RecordChange::Removed,
    };
    let record = after.or(before).unwrap_or(&Value::Null);
    let mut fields = field_changes(store, before, after);
    let more = fields.len().saturating_sub(MAX_REVIEWED_FIELDS);
    fields.truncate(MAX_REVIEWED_FIELDS);
    RecordReview {
        store: store.to_string(),
        label: record_label(store, record, &key),
        key,
        change,
        fields,
        more_fields: more as u64,
        secrets_withheld: false,
        held_back: false,
    }
}

/// The permission settings a settings record holds, as the app reads
/// them: the defaults when there is none, "ask for everything" when it
/// cannot be read.
fn permissions_in(record: Option<&Value>) -> crate::skill::permission::PermissionSettings {
    match record {
        None => crate::skill::permission::PermissionSettings::default(),
        Some(r) => r
            .get("value")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_else(crate::skill::permission::PermissionSettings::unreadable),
    }
}

fn is_permissions(store: &str, key: &str) -> bool {
    store == SETTINGS && key == crate::skill::permission::SETTINGS_KEY
}

/// Plans a restore of `backup` into the profile `current` (every store of
/// the current schema, read in one transaction).
///
/// A secret the backup left out is filled from this browser's copy of the
/// record only when both send it to the same place ([`destinations`]).
/// Permission settings that would let more run without asking are applied
/// only with `consent`; otherwise this browser's stay. Every record of the
/// [`REVIEWED_STORES`] the restore writes or removes is in the plan's
/// [`Review`].
pub fn plan(
    backup: &Backup,
    current: &Snapshot,
    mode: RestoreMode,
    consent: Consent,
) -> RestorePlan {
    let carry = !backup.manifest.secrets.included;
    let mut counts = Vec::new();
    let mut writes = Vec::new();
    let mut secrets_kept = 0;
    let mut secrets_withheld = 0;
    let mut review = Review::default();
    let empty = Vec::new();
    for store in &current.stores {
        let reviewed = REVIEWED_STORES.contains(&store.name.as_str());
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
        let mut matched: HashSet<String> = HashSet::new();
        let mut saw_permissions = false;
        for record in incoming {
            let key = record_key(record, &store.key_path);
            let plain = plain_key(record, &store.key_path);
            let existing = key.as_ref().and_then(|k| by_key.get(k)).copied();
            let mut record = record.clone();
            let mut withheld = false;
            if let (true, Some(existing)) = (carry, existing) {
                if destinations(&record) == destinations(existing) {
                    secrets_kept += carry_secrets(&mut record, existing);
                } else if holds_secrets(existing) {
                    withheld = true;
                    secrets_withheld += 1;
                }
            }
            if let Some(k) = &key
                && existing.is_some()
            {
                matched.insert(k.clone());
            }
            // Permissions: applied only if they loosen nothing, or the
            // person agreed.
            if is_permissions(&store.name, &plain) {
                saw_permissions = true;
                let loosened = crate::skill::permission::loosenings(
                    &permissions_in(existing),
                    &permissions_in(Some(&record)),
                );
                if !loosened.is_empty() {
                    review.loosening.extend(loosened);
                    if !consent.loosen_permissions {
                        let mut r = review_of(&store.name, plain, existing, Some(&record));
                        r.held_back = true;
                        review.records.push(r);
                        c.held_back += 1;
                        if let Some(existing) = existing {
                            c.kept += 1;
                            if mode == RestoreMode::Replace {
                                puts.push(existing.clone());
                            }
                        }
                        continue;
                    }
                }
            }
            let write = match (mode, existing) {
                (_, None) => {
                    c.added += 1;
                    true
                }
                (RestoreMode::Replace, Some(existing)) => {
                    if *existing == record {
                        c.unchanged += 1;
                    } else {
                        c.updated += 1;
                    }
                    true
                }
                (RestoreMode::Merge, Some(existing)) => {
                    if *existing == record {
                        c.unchanged += 1;
                        false
                    } else {
                        let newer = match (changed_at(&record), changed_at(existing)) {
                            (Some(b), Some(h)) => b > h,
                            (Some(_), None) | (None, Some(_)) | (None, None) => false,
                        };
                        if newer {
                            c.updated += 1;
                        } else {
                            c.kept += 1;
                        }
                        newer
                    }
                }
            };
            if write {
                if reviewed && existing != Some(&record) {
                    let mut r = review_of(&store.name, plain, existing, Some(&record));
                    r.secrets_withheld = withheld;
                    review.records.push(r);
                }
                puts.push(record);
            }
        }
        if mode == RestoreMode::Replace {
            for r in &store.records {
                let Some(k) = record_key(r, &store.key_path) else {
                    continue;
                };
                if matched.contains(&k) {
                    continue;
                }
                let plain = plain_key(r, &store.key_path);
                // Dropping the permission record means the defaults, which
                // may be looser than what is here.
                if is_permissions(&store.name, &plain) && !saw_permissions {
                    let loosened = crate::skill::permission::loosenings(
                        &permissions_in(Some(r)),
                        &crate::skill::permission::PermissionSettings::default(),
                    );
                    if !loosened.is_empty() {
                        review.loosening.extend(loosened);
                        if !consent.loosen_permissions {
                            let mut rr = review_of(&store.name, plain, Some(r), None);
                            rr.held_back = true;
                            review.records.push(rr);
                            c.held_back += 1;
                            c.kept += 1;
                            puts.push(r.clone());
                            continue;
                        }
                    }
                }
                c.removed += 1;
                if reviewed {
                    review
                        .records
                        .push(review_of(&store.name, plain, Some(r), None));
                }
            }
        }
        match mode {
            RestoreMode::Merge => {
                c.after = c.current + c.added;
            }
            RestoreMode::Replace => {
                c.after = puts.len() as u64;
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
        secrets_withheld,
        review,
    }
}

/// What the person calls each store.
pub fn store_label(name: &str) -> &str {
    match name {
        CONVERSATIONS => "Conversations",
        NOTES => "Notes",
        TASKS => "Tasks",
        MEMORIES => "Memories",
        SKILL_PACKAGES => "Skill packages",
        SKILL_FILES => "Skill files",
        MCP_SERVERS => "MCP servers",
        SETTINGS => "Settings",
        GRANTS => "File grants",
        ARTIFACTS => "Artifacts",
        USAGE => "Skill usage",
        ACTIVITY => "Activity log",
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
    let (y, m, d) = crate::util::dates::civil_from_days((unix_ms / 86_400_000.0).floor() as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

pub mod records;

#[cfg(test)]
mod tests;
