//! One device's copy of the synced records, and how it meets the bucket.
//!
//! What the bucket holds, each object sealed by the vault and stored under
//! the HMAC of its logical name (so the names say nothing):
//!
//! - `devices`: the devices of the vault. A device adds itself with a
//!   conditional write over the version it read, so two devices joining at
//!   once never drop each other.
//! - `changes/<device>/<seq>`: a device's changes, numbered from 1 with no
//!   gaps. Only that device writes these names, and only where nothing is
//!   yet (`If-None-Match: *`), so no write ever replaces another.
//! - `snapshot/<device>/<n>`: every document, saved whole, with the change
//!   numbers it covers for each device.
//! - `snapshot`: which snapshot is current, replaced only over the version
//!   the compacting device read.
//!
//! A device reads the snapshot when it is behind what it covers, then
//! each other device's changes from the next number it has not read,
//! until the store says there is no such object. Compaction writes a
//! snapshot, makes it current, and only then deletes the change objects
//! it covers: a change no current snapshot covers is never deleted.
//!
//! Automerge changes are idempotent, so reading one twice (from a
//! snapshot and its change object) is harmless, and changes that arrive
//! before the ones they depend on wait inside the document.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;

use automerge::ChangeHash;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::doc::{Derived, RecordDoc, kind_of, parse_change};
pub use crate::s3::Fetched;
use crate::s3::{Put, StoreError};
use crate::{Entropy, SyncError, Vault, hex};

/// The store, as sync needs it. The app implements it with `fetch` and
/// the requests of [`crate::s3`]; nothing else in this crate does I/O.
pub trait Store {
    /// The object under `name`, or `None` when there is none.
    fn get(&self, name: &str) -> impl Future<Output = Result<Option<Fetched>, StoreError>>;
    /// Writes `body` under `name`; the new version's ETag. A failed
    /// condition is [`StoreError::Conflict`].
    fn put(
        &self,
        name: &str,
        body: Vec<u8>,
        put: Put,
    ) -> impl Future<Output = Result<String, StoreError>>;
    fn delete(&self, name: &str) -> impl Future<Output = Result<(), StoreError>>;
}

/// Why a sync round stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SyncFailure {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Sync(#[from] SyncError),
    #[error("this device was removed from the vault: set sync up again to rejoin")]
    Removed,
    #[error("another device changed {0} at the same moment, over and over: try again")]
    Contended(&'static str),
}

/// A device's id: random, made when it joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(pub [u8; 16]);

impl DeviceId {
    pub fn generate(entropy: &mut dyn Entropy) -> Self {
        let mut id = [0u8; 16];
        entropy.fill(&mut id);
        DeviceId(id)
    }

    pub fn parse(s: &str) -> Option<Self> {
        crate::unhex::<16>(s).map(DeviceId)
    }
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

/// A device as the vault lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Device {
    pub id: String,
    pub name: String,
    pub added_ms: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Devices {
    devices: Vec<Device>,
    #[serde(default)]
    removed: Vec<String>,
}

/// What a device remembers between rounds; the app stores it with the
/// documents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The number of this device's next change object.
    pub next_seq: u64,
    /// For each other device, the last change object applied here.
    pub read: BTreeMap<String, u64>,
    /// For each document, the last of this device's Automerge changes
    /// that is in the bucket.
    pub uploaded: BTreeMap<String, u64>,
    /// The snapshot last read.
    pub snapshot: Option<String>,
    /// Documents changed here since their last upload: a round looks at
    /// these only, so a small edit costs the same with 10 records or
    /// 100,000, and an edit made just before the tab closed is still
    /// uploaded after it opens again.
    #[serde(default)]
    pub dirty: BTreeSet<String>,
    /// Documents other devices changed since the app last stored the
    /// record derived from them, with the heads that record shows. The
    /// app's next save of such a record is recorded against those heads,
    /// so it adds its edits to what arrived and never undoes it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shown: BTreeMap<String, Vec<String>>,
}

/// One change object's plaintext.
#[derive(Serialize, Deserialize)]
struct Bundle {
    device: String,
    seq: u64,
    /// Document id → its Automerge changes, base64.
    docs: BTreeMap<String, Vec<String>>,
}

/// A snapshot's plaintext.
#[derive(Serialize, Deserialize)]
struct Snapshot {
    covers: BTreeMap<String, u64>,
    /// Document id → the document saved whole, base64.
    docs: BTreeMap<String, String>,
}

/// The `snapshot` pointer's plaintext.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Head {
    name: String,
    covers: BTreeMap<String, u64>,
}

/// What a round did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Change objects written.
    pub pushed: usize,
    /// Change objects applied from other devices.
    pub pulled: usize,
    /// Documents another device changed: derive and store them again.
    pub changed: Vec<String>,
    /// Objects refused, by logical name, with why. Nothing of theirs was
    /// applied, and reading that device stops there until a later round.
    pub refused: Vec<(String, SyncError)>,
    /// The vault's devices, as the round read them.
    pub devices: Vec<Device>,
}

/// A change object holds at most about this much plaintext, so a first
/// sync of a large profile becomes several objects a store takes easily.
const BUNDLE_BYTES: usize = 4 << 20;
/// One record's changes in one object come to at most this much: a
/// device reads a change object whole, with its base64 and its plaintext
/// in memory at once, so a phone must be able to hold a few of these. A
/// conversation with many pictures can pass it; it is then refused by
/// name and stays waiting here, and the rest still syncs.
pub const MAX_RECORD_BYTES: usize = 64 << 20;
/// Conditional writes retried this often against other devices.
const RETRIES: usize = 8;

pub struct Replica {
    vault: Vault,
    device: DeviceId,
    name: String,
    cursor: Cursor,
    docs: BTreeMap<String, RecordDoc>,
    /// [`MAX_RECORD_BYTES`], smaller in tests.
    max_record_bytes: usize,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Replica({}, {} docs)", self.device, self.docs.len())
    }
}

impl Replica {
    /// A device with nothing synced yet. `name` is how other devices list
    /// it ("Laptop").
    pub fn new(vault: Vault, device: DeviceId, name: &str) -> Self {
        Replica {
            vault,
            device,
            name: name.to_string(),
            cursor: Cursor {
                next_seq: 1,
                ..Cursor::default()
            },
            docs: BTreeMap::new(),
            max_record_bytes: MAX_RECORD_BYTES,
        }
    }

    /// A device as it was stored: its cursor and its documents, saved.
    pub fn resume(
        vault: Vault,
        device: DeviceId,
        name: &str,
        cursor: Cursor,
        docs: impl IntoIterator<Item = (String, Vec<u8>)>,
    ) -> Result<Self, SyncError> {
        let mut r = Replica::new(vault, device, name);
        r.cursor = cursor;
        for (id, bytes) in docs {
            let kind = kind_of(&id).ok_or_else(|| SyncError::BadDocument(id.clone()))?;
            r.docs.insert(id, RecordDoc::load(kind, &device.0, &bytes)?);
        }
        Ok(r)
    }

    pub fn device(&self) -> DeviceId {
        self.device
    }

    pub fn cursor(&self) -> &Cursor {
        &self.cursor
    }

    pub fn doc_ids(&self) -> impl Iterator<Item = &str> {
        self.docs.keys().map(String::as_str)
    }

    /// A document saved whole, for the app's storage.
    pub fn save(&mut self, id: &str) -> Option<Vec<u8>> {
        self.docs.get_mut(id).map(RecordDoc::save)
    }

    /// A document about to be changed here.
    fn edit(&mut self, id: &str) -> Result<&mut RecordDoc, SyncError> {
        self.cursor.dirty.insert(id.to_string());
        self.doc(id)
    }

    fn doc(&mut self, id: &str) -> Result<&mut RecordDoc, SyncError> {
        let kind = kind_of(id).ok_or_else(|| SyncError::BadDocument(format!("no kind {id}")))?;
        let device = self.device;
        Ok(self
            .docs
            .entry(id.to_string())
            .or_insert_with(|| RecordDoc::new(kind, &device.0)))
    }

    /// The heads the app's record of `id` shows, when other devices'
    /// changes arrived after it was stored.
    fn shown(&self, id: &str) -> Option<Vec<ChangeHash>> {
        self.cursor
            .shown
            .get(id)?
            .iter()
            .map(|h| h.parse().ok())
            .collect()
    }

    /// Notes what the app's record of `id` shows before another device's
    /// changes land in its document. A document new here has no record
    /// yet, so there is nothing to note.
    fn before_arrival(&mut self, id: &str) {
        if self.cursor.shown.contains_key(id) {
            return;
        }
        if let Some(doc) = self.docs.get_mut(id) {
            let heads = doc.heads().iter().map(ToString::to_string).collect();
            self.cursor.shown.insert(id.to_string(), heads);
        }
    }

    /// The app saved a record.
    pub fn put(&mut self, id: &str, record: &Json) -> Result<(), SyncError> {
        match self.shown(id) {
            None => self.edit(id)?.update(record),
            Some(base) => {
                let heads = self.edit(id)?.update_from(record, &base)?;
                let heads = heads.iter().map(ToString::to_string).collect();
                self.cursor.shown.insert(id.to_string(), heads);
                Ok(())
            }
        }
    }

    /// The app deleted a record.
    pub fn delete(&mut self, id: &str) -> Result<(), SyncError> {
        if !self.docs.contains_key(id) {
            return Ok(());
        }
        match self.shown(id) {
            None => self.edit(id)?.delete(),
            Some(base) => self.edit(id)?.delete_having_seen(&base),
        }
    }

    /// The app stored the record [`Replica::derive`] gave for `id`: the
    /// record shows the whole document again.
    pub fn settled(&mut self, id: &str) {
        self.cursor.shown.remove(id);
    }

    pub fn restore(&mut self, id: &str) -> Result<(), SyncError> {
        self.edit(id)?.restore()
    }

    pub fn choose(&mut self, id: &str, path: &[String], value: &Json) -> Result<(), SyncError> {
        self.edit(id)?.choose(path, value)
    }

    /// The record the app should store for `id`.
    pub fn derive(&mut self, id: &str) -> Result<Option<Derived>, SyncError> {
        self.docs.get_mut(id).map(RecordDoc::derive).transpose()
    }

    /// Documents with changes not in the bucket yet.
    pub fn waiting(&mut self) -> usize {
        let mut waiting = 0;
        for id in &self.cursor.dirty {
            let after = self.cursor.uploaded.get(id).copied().unwrap_or(0);
            if let Some(doc) = self.docs.get_mut(id)
                && !doc.local_changes_after(after).0.is_empty()
            {
                waiting += 1;
            }
        }
        waiting
    }

    fn sealed_name(&self, logical: &str) -> String {
        self.vault.object_name(logical)
    }

    async fn read<S: Store>(
        &self,
        store: &S,
        logical: &str,
    ) -> Result<Option<(Vec<u8>, String)>, SyncFailure> {
        let name = self.sealed_name(logical);
        match store.get(&name).await? {
            None => Ok(None),
            Some(f) => Ok(Some((self.vault.open(&name, &f.body)?, f.etag))),
        }
    }

    async fn write<S: Store>(
        &self,
        store: &S,
        logical: &str,
        plaintext: &[u8],
        put: Put,
        entropy: &mut dyn Entropy,
    ) -> Result<String, StoreError> {
        let name = self.sealed_name(logical);
        let sealed = self.vault.seal(&name, plaintext, entropy);
        store.put(&name, sealed, put).await
    }

    /// The vault's devices, with this one added if it is not listed yet.
    pub async fn join<S: Store>(
        &self,
        store: &S,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> Result<Vec<Device>, SyncFailure> {
        let me = self.device.to_string();
        for _ in 0..RETRIES {
            let (mut list, put) = match self.read(store, "devices").await? {
                None => (Devices::default(), Put::IfAbsent),
                Some((bytes, etag)) => (
                    serde_json::from_slice::<Devices>(&bytes)
                        .map_err(|e| SyncError::BadDocument(format!("devices: {e}")))?,
                    Put::IfUnchanged(etag),
                ),
            };
            if list.removed.contains(&me) {
                return Err(SyncFailure::Removed);
            }
            if list.devices.iter().any(|d| d.id == me) {
                return Ok(list.devices);
            }
            list.devices.push(Device {
                id: me.clone(),
                name: self.name.clone(),
                added_ms: now_ms,
            });
            let body = serde_json::to_vec(&list).expect("devices serialize");
            match self.write(store, "devices", &body, put, entropy).await {
                Ok(_) => return Ok(list.devices),
                Err(StoreError::Conflict) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(SyncFailure::Contended("the device list"))
    }

    /// Uploads this device's waiting changes, then applies every other
    /// device's new ones.
    pub async fn sync<S: Store>(
        &mut self,
        store: &S,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> Result<Report, SyncFailure> {
        let devices = self.join(store, now_ms, entropy).await?;
        let mut report = Report {
            ..Report::default()
        };
        report.pushed = self.push(store, entropy, &mut report.refused).await?;
        self.pull(store, &devices, &mut report).await?;
        report.devices = devices;
        Ok(report)
    }

    async fn push<S: Store>(
        &mut self,
        store: &S,
        entropy: &mut dyn Entropy,
        refused: &mut Vec<(String, SyncError)>,
    ) -> Result<usize, SyncFailure> {
        let mut pending: Vec<(String, Vec<String>, u64)> = Vec::new();
        let dirty: Vec<String> = self.cursor.dirty.iter().cloned().collect();
        for id in dirty {
            let Some(doc) = self.docs.get_mut(&id) else {
                self.cursor.dirty.remove(&id);
                continue;
            };
            let after = self.cursor.uploaded.get(&id).copied().unwrap_or(0);
            let (changes, newest) = doc.local_changes_after(after);
            if changes.is_empty() {
                self.cursor.dirty.remove(&id);
            } else {
                let encoded: Vec<String> = changes.iter().map(|c| B64.encode(c)).collect();
                let bytes: usize = encoded.iter().map(String::len).sum();
                if bytes > self.max_record_bytes {
                    // Left dirty: it waits, counted, until it is smaller.
                    let mb = format!("{:.1}", bytes as f64 / f64::from(1 << 20));
                    let limit_mb = self.max_record_bytes >> 20;
                    refused.push((id, SyncError::TooLarge { mb, limit_mb }));
                    continue;
                }
                pending.push((id, encoded, newest));
            }
        }
        let mut pushed = 0;
        let mut batch: Vec<(String, Vec<String>, u64)> = Vec::new();
        let mut size = 0;
        let total = pending.len();
        for (i, item) in pending.into_iter().enumerate() {
            size += item.0.len() + item.1.iter().map(String::len).sum::<usize>();
            batch.push(item);
            if size >= BUNDLE_BYTES || i + 1 == total {
                // A failed write leaves its documents dirty for the next
                // round.
                self.push_bundle(store, std::mem::take(&mut batch), entropy)
                    .await?;
                pushed += 1;
                size = 0;
            }
        }
        Ok(pushed)
    }

    async fn push_bundle<S: Store>(
        &mut self,
        store: &S,
        batch: Vec<(String, Vec<String>, u64)>,
        entropy: &mut dyn Entropy,
    ) -> Result<(), SyncFailure> {
        let seq = self.cursor.next_seq;
        let bundle = Bundle {
            device: self.device.to_string(),
            seq,
            docs: batch
                .iter()
                .map(|(id, changes, _)| (id.clone(), changes.clone()))
                .collect(),
        };
        let body = serde_json::to_vec(&bundle).expect("bundle serializes");
        let logical = format!("changes/{}/{seq}", self.device);
        self.write(store, &logical, &body, Put::IfAbsent, entropy)
            .await?;
        self.cursor.next_seq = seq + 1;
        for (id, _, newest) in batch {
            self.cursor.dirty.remove(&id);
            self.cursor.uploaded.insert(id, newest);
        }
        Ok(())
    }

    async fn pull<S: Store>(
        &mut self,
        store: &S,
        devices: &[Device],
        report: &mut Report,
    ) -> Result<(), SyncFailure> {
        if let Some((bytes, _)) = self.read(store, "snapshot").await? {
            let head: Head = serde_json::from_slice(&bytes)
                .map_err(|e| SyncError::BadDocument(format!("snapshot pointer: {e}")))?;
            let me = self.device.to_string();
            let behind = head
                .covers
                .iter()
                .any(|(d, &seq)| *d != me && self.cursor.read.get(d).copied().unwrap_or(0) < seq);
            if behind && self.cursor.snapshot.as_deref() != Some(head.name.as_str()) {
                self.load_snapshot(store, &head, report).await?;
            }
        }
        let me = self.device.to_string();
        for device in devices.iter().filter(|d| d.id != me) {
            let mut seq = self.cursor.read.get(&device.id).copied().unwrap_or(0) + 1;
            loop {
                let logical = format!("changes/{}/{seq}", device.id);
                let bytes = match self.read(store, &logical).await {
                    Ok(Some((bytes, _))) => bytes,
                    Ok(None) => break,
                    Err(SyncFailure::Sync(e)) => {
                        report.refused.push((logical, e));
                        break;
                    }
                    Err(e) => return Err(e),
                };
                if let Err(e) = self.apply_bundle(&bytes, &device.id, seq, report) {
                    report.refused.push((logical, e));
                    break;
                }
                self.cursor.read.insert(device.id.clone(), seq);
                report.pulled += 1;
                seq += 1;
            }
        }
        report.changed.sort();
        report.changed.dedup();
        Ok(())
    }

    /// Applies one change object, all or nothing: every change is checked
    /// before the first is applied.
    fn apply_bundle(
        &mut self,
        bytes: &[u8],
        device: &str,
        seq: u64,
        report: &mut Report,
    ) -> Result<(), SyncError> {
        let bundle: Bundle = serde_json::from_slice(bytes)
            .map_err(|e| SyncError::BadDocument(format!("a change object: {e}")))?;
        if bundle.device != device || bundle.seq != seq {
            return Err(SyncError::Tampered);
        }
        let mut decoded = Vec::with_capacity(bundle.docs.len());
        for (id, changes) in bundle.docs {
            if kind_of(&id).is_none() {
                return Err(SyncError::BadDocument(format!(
                    "unknown kind of record: {id}"
                )));
            }
            let mut parsed = Vec::with_capacity(changes.len());
            for c in &changes {
                let bytes = B64
                    .decode(c)
                    .map_err(|e| SyncError::BadDocument(e.to_string()))?;
                parsed.push(parse_change(bytes)?);
            }
            decoded.push((id, parsed));
        }
        for (id, changes) in decoded {
            self.before_arrival(&id);
            self.doc(&id)?.apply_parsed(changes)?;
            report.changed.push(id);
        }
        Ok(())
    }

    async fn load_snapshot<S: Store>(
        &mut self,
        store: &S,
        head: &Head,
        report: &mut Report,
    ) -> Result<(), SyncFailure> {
        let Some((bytes, _)) = self.read(store, &head.name).await? else {
            // Replaced while this round read it; the next round takes the
            // new one.
            return Ok(());
        };
        let snapshot: Snapshot = serde_json::from_slice(&bytes)
            .map_err(|e| SyncError::BadDocument(format!("a snapshot: {e}")))?;
        let mut decoded = Vec::with_capacity(snapshot.docs.len());
        for (id, saved) in &snapshot.docs {
            kind_of(id).ok_or_else(|| SyncError::BadDocument(format!("unknown kind {id}")))?;
            let saved = B64
                .decode(saved)
                .map_err(|e| SyncError::BadDocument(e.to_string()))?;
            decoded.push((id.clone(), saved));
        }
        for (id, saved) in decoded {
            self.before_arrival(&id);
            match self.docs.get_mut(&id) {
                Some(doc) => doc.merge_saved(&saved)?,
                None => {
                    // Loading whole is much cheaper than merging into an
                    // empty document, and a joining device does it for
                    // every record.
                    let kind = kind_of(&id).expect("checked above");
                    let doc = RecordDoc::load(kind, &self.device.0, &saved)?;
                    self.docs.insert(id.clone(), doc);
                }
            }
            report.changed.push(id);
        }
        let me = self.device.to_string();
        for (device, &seq) in &snapshot.covers {
            if *device != me {
                let read = self.cursor.read.entry(device.clone()).or_insert(0);
                *read = (*read).max(seq);
            }
        }
        self.cursor.snapshot = Some(head.name.clone());
        Ok(())
    }

    /// Folds every change object into one snapshot and deletes what it
    /// covers. Runs a round first, so the snapshot holds everything in
    /// the bucket; gives up without deleting anything when another device
    /// compacts at the same moment.
    pub async fn compact<S: Store>(
        &mut self,
        store: &S,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> Result<Compacted, SyncFailure> {
        let round = self.sync(store, now_ms, entropy).await?;
        if !round.refused.is_empty() {
            // A device's changes could not all be read: a snapshot now
            // would claim to cover what it does not hold.
            return Ok(Compacted::Skipped);
        }
        let (old, put) = match self.read(store, "snapshot").await? {
            None => (None, Put::IfAbsent),
            Some((bytes, etag)) => (
                Some(
                    serde_json::from_slice::<Head>(&bytes)
                        .map_err(|e| SyncError::BadDocument(format!("snapshot pointer: {e}")))?,
                ),
                Put::IfUnchanged(etag),
            ),
        };
        let mut covers = self.cursor.read.clone();
        covers.insert(self.device.to_string(), self.cursor.next_seq - 1);
        let mut docs = BTreeMap::new();
        for (id, doc) in self.docs.iter_mut() {
            docs.insert(id.clone(), B64.encode(doc.save()));
        }
        let mut n = [0u8; 8];
        entropy.fill(&mut n);
        let name = format!("snapshot/{}/{}", self.device, hex(&n));
        let body = serde_json::to_vec(&Snapshot {
            covers: covers.clone(),
            docs,
        })
        .expect("snapshot serializes");
        self.write(store, &name, &body, Put::IfAbsent, entropy)
            .await?;
        let head = Head {
            name: name.clone(),
            covers: covers.clone(),
        };
        let head_body = serde_json::to_vec(&head).expect("head serializes");
        match self
            .write(store, "snapshot", &head_body, put, entropy)
            .await
        {
            Ok(_) => {}
            Err(StoreError::Conflict) => {
                store.delete(&self.sealed_name(&name)).await?;
                return Ok(Compacted::Skipped);
            }
            Err(e) => return Err(e.into()),
        }
        self.cursor.snapshot = Some(name);
        // The snapshot is current: what it covers can go, and only that.
        let floor = old.as_ref().map(|h| h.covers.clone()).unwrap_or_default();
        let mut deleted = 0;
        for (device, &upto) in &covers {
            let from = floor.get(device).copied().unwrap_or(0) + 1;
            for seq in from..=upto {
                store
                    .delete(&self.sealed_name(&format!("changes/{device}/{seq}")))
                    .await?;
                deleted += 1;
            }
        }
        if let Some(old) = old {
            store.delete(&self.sealed_name(&old.name)).await?;
        }
        Ok(Compacted::Done {
            deleted_changes: deleted,
        })
    }
}

/// What compaction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compacted {
    Done {
        deleted_changes: usize,
    },
    /// Another device compacted at the same moment, or a change object
    /// could not be read; nothing was deleted.
    Skipped,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Keyfile;
    use crate::doc::Presence;
    use crate::testing::{FAST, MemoryStore, Seeded, block_on};
    use automerge::{ROOT, ReadDoc};
    use serde_json::json;

    /// A vault and two devices' copies of its key, as after setup and
    /// joining with the passphrase.
    fn vault_pair() -> (Vault, Vault, Vault) {
        let mut e = Seeded::new(11);
        let (keyfile, _, _) = Keyfile::create("correct horse battery", FAST, &mut e).unwrap();
        let open = || {
            keyfile
                .unlock_with_passphrase("correct horse battery")
                .unwrap()
        };
        (open(), open(), open())
    }

    fn note(id: &str, title: &str, body: &str, at: f64) -> Json {
        json!({"id": id, "title": title, "body": body, "tags": [], "created_ms": 1.0, "updated_ms": at})
    }

    fn replicas() -> (Replica, Replica, Replica) {
        let (va, vb, vc) = vault_pair();
        let mut e = Seeded::new(12);
        (
            Replica::new(va, DeviceId::generate(&mut e), "Laptop"),
            Replica::new(vb, DeviceId::generate(&mut e), "Desktop"),
            Replica::new(vc, DeviceId::generate(&mut e), "Phone"),
        )
    }

    fn round(r: &mut Replica, store: &MemoryStore, e: &mut Seeded) -> Report {
        block_on(r.sync(store, 1_000, e)).unwrap()
    }

    fn body(r: &mut Replica, id: &str) -> String {
        r.derive(id).unwrap().unwrap().record["body"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn two_devices_editing_apart_converge_through_the_store() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(1);
        let (mut a, mut b, _) = replicas();
        a.put("note:1", &note("1", "Trip", "Pack the tent.", 1.0))
            .unwrap();
        round(&mut a, &store, &mut e);
        let got = round(&mut b, &store, &mut e);
        assert_eq!(got.changed, vec!["note:1".to_string()]);
        assert_eq!(body(&mut b, "note:1"), "Pack the tent.");

        // Both edit the same note's text, and each adds a note, offline.
        a.put("note:1", &note("1", "Trip", "Pack the big tent.", 2.0))
            .unwrap();
        b.put("note:1", &note("1", "Trip", "Pack the tent. Buy gas.", 3.0))
            .unwrap();
        a.put("note:a", &note("a", "From A", "", 2.0)).unwrap();
        b.put("note:b", &note("b", "From B", "", 2.0)).unwrap();
        assert_eq!(a.waiting(), 2);
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        assert_eq!(a.waiting(), 0);
        for id in ["note:1", "note:a", "note:b"] {
            assert_eq!(a.derive(id).unwrap(), b.derive(id).unwrap(), "{id}");
        }
        assert_eq!(body(&mut a, "note:1"), "Pack the big tent. Buy gas.");
    }

    #[test]
    fn nothing_readable_reaches_the_store() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(2);
        let (mut a, _, _) = replicas();
        a.put(
            "note:secret",
            &note("secret", "Marker-Title-Q7", "marker-body-zx81", 1.0),
        )
        .unwrap();
        round(&mut a, &store, &mut e);
        block_on(a.compact(&store, 2_000, &mut e)).unwrap();
        for (name, body) in store.objects() {
            assert!(
                name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit()),
                "{name}"
            );
            for needle in [
                "Marker-Title-Q7",
                "marker-body-zx81",
                "note:secret",
                "Laptop",
                "changes/",
            ] {
                assert!(
                    !body.windows(needle.len()).any(|w| w == needle.as_bytes()),
                    "{needle} is readable in {name}"
                );
            }
        }
    }

    #[test]
    fn a_third_device_gets_everything_from_the_snapshot_and_what_came_after() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(3);
        let (mut a, mut b, mut c) = replicas();
        for i in 0..20 {
            a.put(&format!("note:{i}"), &note(&i.to_string(), "t", "x", 1.0))
                .unwrap();
            round(&mut a, &store, &mut e);
        }
        b.put(
            "task:1",
            &json!({"id": "1", "title": "Call", "status": "open", "updated_ms": 1.0}),
        )
        .unwrap();
        round(&mut b, &store, &mut e);
        let before = store.len();
        let done = block_on(a.compact(&store, 2_000, &mut e)).unwrap();
        assert_eq!(
            done,
            Compacted::Done {
                deleted_changes: 21
            }
        );
        assert!(
            store.len() < before,
            "{} objects, {before} before",
            store.len()
        );
        // After the snapshot: one more change on each side.
        a.put("note:late", &note("late", "t", "after the snapshot", 2.0))
            .unwrap();
        round(&mut a, &store, &mut e);
        let got = round(&mut c, &store, &mut e);
        assert!(got.refused.is_empty(), "{:?}", got.refused);
        assert_eq!(c.doc_ids().count(), 22);
        assert_eq!(body(&mut c, "note:late"), "after the snapshot");
        assert_eq!(c.derive("task:1").unwrap().unwrap().record["title"], "Call");
    }

    #[test]
    fn compaction_never_deletes_a_change_its_snapshot_does_not_hold() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(4);
        let (mut a, mut b, mut c) = replicas();
        a.put("note:1", &note("1", "t", "a1", 1.0)).unwrap();
        round(&mut a, &store, &mut e);
        b.put("note:2", &note("2", "t", "b1", 1.0)).unwrap();
        round(&mut b, &store, &mut e);
        // b's next change object, made against a copy of the bucket, lands
        // while a compacts: after a read everything, before a deletes.
        let elsewhere = store.fork();
        b.put("note:3", &note("3", "t", "b2", 1.0)).unwrap();
        round(&mut b, &elsewhere, &mut e);
        let late = a.sealed_name(&format!("changes/{}/2", b.device()));
        store.slip_in_after_put_to(
            &a.sealed_name("snapshot"),
            &late,
            elsewhere.get_raw(&late).unwrap(),
        );
        let compacted = block_on(a.compact(&store, 2_000, &mut e)).unwrap();
        assert_eq!(compacted, Compacted::Done { deleted_changes: 2 });
        assert!(
            store.get_raw(&late).is_some(),
            "the change the snapshot lacks survives"
        );
        round(&mut c, &store, &mut e);
        for id in ["note:1", "note:2", "note:3"] {
            assert!(
                c.derive(id).unwrap().is_some(),
                "{id} reached the third device"
            );
        }
    }

    #[test]
    fn two_devices_compacting_at_once_delete_nothing_the_winner_lacks() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(5);
        let (mut a, mut b, mut c) = replicas();
        a.put("note:1", &note("1", "t", "a", 1.0)).unwrap();
        round(&mut a, &store, &mut e);
        b.put("note:2", &note("2", "t", "b", 1.0)).unwrap();
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        // a's pointer write races b's: b wins the pointer first.
        block_on(b.compact(&store, 2_000, &mut e)).unwrap();
        let objects = store.len();
        store.fail_next_put_to(&a.sealed_name("snapshot"));
        let second = block_on(a.compact(&store, 2_000, &mut e)).unwrap();
        assert_eq!(second, Compacted::Skipped);
        assert_eq!(store.len(), objects, "the loser's snapshot is taken back");
        round(&mut c, &store, &mut e);
        assert!(c.derive("note:1").unwrap().is_some());
        assert!(c.derive("note:2").unwrap().is_some());
    }

    #[test]
    fn devices_joining_at_once_are_both_listed() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(6);
        let (a, b, _) = replicas();
        block_on(a.join(&store, 1, &mut e)).unwrap();
        store.fail_next_put_to(&b.sealed_name("devices"));
        let listed = block_on(b.join(&store, 2, &mut e)).unwrap();
        let names: Vec<&str> = listed.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["Laptop", "Desktop"]);
    }

    /// Each attack on a change object: the round reports it, applies
    /// nothing of it, and the local records are unchanged.
    #[test]
    fn tampered_truncated_replayed_and_foreign_objects_are_refused() {
        type Attack = Box<dyn Fn(&MemoryStore, &str, &str)>;
        let attacks: Vec<(&str, Attack)> = vec![
            (
                "a flipped byte",
                Box::new(|s, name, _| {
                    s.mutate(name, |b| {
                        let i = b.len() / 2;
                        b[i] ^= 1;
                    })
                }),
            ),
            (
                "a truncated object",
                Box::new(|s, name, _| s.mutate(name, |b| b.truncate(b.len() - 7))),
            ),
            (
                "an object replayed under another name",
                Box::new(|s, name, first| {
                    let other = s.get_raw(first).unwrap();
                    s.mutate(name, |b| *b = other.clone());
                }),
            ),
            (
                "a format from the future",
                Box::new(|s, name, _| s.mutate(name, |b| b[4] = 9)),
            ),
        ];
        for (what, attack) in attacks {
            let store = MemoryStore::default();
            let mut e = Seeded::new(7);
            let (mut a, mut b, _) = replicas();
            a.put("note:1", &note("1", "t", "first", 1.0)).unwrap();
            round(&mut a, &store, &mut e);
            round(&mut b, &store, &mut e);
            a.put("note:1", &note("1", "t", "second", 2.0)).unwrap();
            round(&mut a, &store, &mut e);
            let first = a.sealed_name(&format!("changes/{}/1", a.device()));
            let second = a.sealed_name(&format!("changes/{}/2", a.device()));
            attack(&store, &second, &first);
            let got = round(&mut b, &store, &mut e);
            assert_eq!(got.refused.len(), 1, "{what}: {got:?}");
            assert_eq!(body(&mut b, "note:1"), "first", "{what}: nothing applied");
            if what.contains("future") {
                assert!(
                    matches!(got.refused[0].1, SyncError::NewerFormat { .. }),
                    "{what}"
                );
            }
        }
    }

    #[test]
    fn an_object_from_another_vault_is_refused() {
        let store = MemoryStore::default();
        let other = MemoryStore::default();
        let mut e = Seeded::new(8);
        let (mut a, mut b, _) = replicas();
        let (keyfile, _, _) = Keyfile::create("another vault entirely", FAST, &mut e).unwrap();
        let stranger_vault = keyfile
            .unlock_with_passphrase("another vault entirely")
            .unwrap();
        let mut stranger = Replica::new(stranger_vault, a.device(), "Laptop");
        a.put("note:1", &note("1", "t", "mine", 1.0)).unwrap();
        round(&mut a, &store, &mut e);
        stranger
            .put("note:1", &note("1", "t", "theirs", 1.0))
            .unwrap();
        stranger
            .put("note:1", &note("1", "t", "theirs 2", 2.0))
            .unwrap();
        round(&mut stranger, &other, &mut e);
        // The stranger's first change object, copied over a's own.
        let theirs = other.get_raw(&stranger.sealed_name(&format!("changes/{}/1", a.device())));
        store.mutate(&a.sealed_name(&format!("changes/{}/1", a.device())), |b| {
            *b = theirs.clone().unwrap()
        });
        let got = round(&mut b, &store, &mut e);
        assert_eq!(got.refused.len(), 1, "{got:?}");
        assert!(b.derive("note:1").unwrap().is_none());
    }

    #[test]
    fn a_removed_device_is_told_so() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(9);
        let (a, _, _) = replicas();
        block_on(a.join(&store, 1, &mut e)).unwrap();
        let name = a.sealed_name("devices");
        let sealed = store.get_raw(&name).unwrap();
        let mut list: Devices =
            serde_json::from_slice(&a.vault.open(&name, &sealed).unwrap()).unwrap();
        list.removed.push(a.device().to_string());
        let resealed = a
            .vault
            .seal(&name, &serde_json::to_vec(&list).unwrap(), &mut e);
        store.mutate(&name, |b| *b = resealed.clone());
        assert_eq!(
            block_on(a.join(&store, 2, &mut e)),
            Err(SyncFailure::Removed)
        );
    }

    #[test]
    fn a_device_resumes_from_what_it_stored() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(10);
        let (mut a, mut b, _) = replicas();
        a.put("note:1", &note("1", "t", "one", 1.0)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        let cursor = b.cursor().clone();
        let saved: Vec<(String, Vec<u8>)> = b
            .doc_ids()
            .map(str::to_string)
            .collect::<Vec<_>>()
            .into_iter()
            .map(|id| {
                let bytes = b.save(&id).unwrap();
                (id, bytes)
            })
            .collect();
        let (_, vb, _) = vault_pair();
        let mut b2 = Replica::resume(vb, b.device(), "Desktop", cursor, saved).unwrap();
        assert_eq!(b2.waiting(), 0, "nothing is uploaded twice");
        a.put("note:1", &note("1", "t", "two", 2.0)).unwrap();
        round(&mut a, &store, &mut e);
        let got = round(&mut b2, &store, &mut e);
        assert_eq!(got.pulled, 1, "only the new change object is read");
        assert_eq!(body(&mut b2, "note:1"), "two");
    }

    #[test]
    fn an_edit_stored_before_the_tab_closed_is_uploaded_after() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(13);
        let (mut a, mut b, _) = replicas();
        a.put("note:1", &note("1", "t", "kept offline", 1.0))
            .unwrap();
        let saved = vec![("note:1".to_string(), a.save("note:1").unwrap())];
        let (va, _, _) = vault_pair();
        let mut a2 = Replica::resume(va, a.device(), "Laptop", a.cursor().clone(), saved).unwrap();
        assert_eq!(a2.waiting(), 1);
        round(&mut a2, &store, &mut e);
        round(&mut b, &store, &mut e);
        assert_eq!(body(&mut b, "note:1"), "kept offline");
    }

    /// A conversation as the app stores it: `messages` are (id, role,
    /// content, when).
    fn conversation(title: &str, messages: &[(&str, &str, &str, f64)], next_seq: u64) -> Json {
        let updated = messages.iter().map(|m| m.3).fold(1.0, f64::max);
        let messages: Vec<Json> = messages
            .iter()
            .map(|(id, role, content, at)| {
                json!({"id": id, "role": role, "content": content, "created_at_ms": at,
                    "updated_at_ms": at, "status": "done"})
            })
            .collect();
        json!({"id": "c", "title": title, "title_is_custom": false, "created_at_ms": 1.0,
            "updated_at_ms": updated, "loaded_skills": [], "settings": {},
            "messages": messages, "next_seq": next_seq})
    }

    const C: &str = "conversation:c";

    /// The record the app derives and stores, as the app does after a
    /// round.
    fn take(r: &mut Replica, id: &str) -> crate::doc::Derived {
        let d = r.derive(id).unwrap().unwrap();
        r.settled(id);
        d
    }

    fn contents(record: &Json) -> Vec<String> {
        let mut out: Vec<String> = record["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect();
        out.sort();
        out
    }

    fn ids(record: &Json) -> Vec<String> {
        record["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Two devices holding the same two-message conversation.
    fn shared_conversation(store: &MemoryStore, e: &mut Seeded) -> (Replica, Replica) {
        let (mut a, mut b, _) = replicas();
        let start = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
        ];
        a.put(C, &conversation("Trip", &start, 2)).unwrap();
        round(&mut a, store, e);
        round(&mut b, store, e);
        assert_eq!(take(&mut b, C).record, conversation("Trip", &start, 2));
        (a, b)
    }

    #[test]
    fn a_conversation_continued_on_two_devices_keeps_both_sides_messages() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(20);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        let base = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
        ];
        // Each device numbers its next messages alike: c-m3 and c-m4.
        let mut on_a = base.to_vec();
        on_a.extend([
            ("c-m3", "user", "By the sea", 10.0),
            ("c-m4", "assistant", "Try Brittany", 11.0),
        ]);
        let mut on_b = base.to_vec();
        on_b.extend([
            ("c-m3", "user", "In the mountains", 20.0),
            ("c-m4", "assistant", "Try the Alps", 21.0),
        ]);
        a.put(C, &conversation("Trip", &on_a, 4)).unwrap();
        b.put(C, &conversation("Trip", &on_b, 4)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        let (da, db) = (take(&mut a, C), take(&mut b, C));
        assert_eq!(da, db, "both devices converge");
        assert!(da.conflicts.is_empty(), "{:?}", da.conflicts);
        assert_eq!(
            contents(&da.record),
            [
                "By the sea",
                "In the mountains",
                "Plan a trip",
                "Try Brittany",
                "Try the Alps",
                "Where to?"
            ]
        );
        let mut unique = ids(&da.record);
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 6, "every message has an id of its own");
        assert_eq!(da.record["updated_at_ms"], 21.0, "the newest time wins");
        assert_eq!(da.record["next_seq"], 4);

        // The app stores that record and goes on: the next message lands
        // after all six, and the ids given to tell messages apart stay.
        let mut next = da.record.clone();
        let m5 = json!({"id": "c-m5", "role": "user", "content": "Both, then",
            "created_at_ms": 30.0, "updated_at_ms": 30.0, "status": "done"});
        next["messages"].as_array_mut().unwrap().push(m5);
        next["next_seq"] = json!(5);
        next["updated_at_ms"] = json!(30.0);
        a.put(C, &next).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        assert_eq!(take(&mut b, C).record, next);
        assert_eq!(take(&mut a, C).record, next);
    }

    #[test]
    fn a_title_renamed_on_one_device_while_a_message_is_added_on_the_other() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(21);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        let base = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
        ];
        let mut renamed = conversation("Summer trip", &base, 2);
        renamed["title_is_custom"] = json!(true);
        renamed["updated_at_ms"] = json!(5.0);
        a.put(C, &renamed).unwrap();
        let mut more = base.to_vec();
        more.push(("c-m3", "user", "In July", 6.0));
        b.put(C, &conversation("Trip", &more, 3)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        let d = take(&mut a, C);
        assert_eq!(d, take(&mut b, C));
        let mut want = conversation("Summer trip", &more, 3);
        want["title_is_custom"] = json!(true);
        assert_eq!(d.record, want);
        assert!(d.conflicts.is_empty(), "{:?}", d.conflicts);
    }

    #[test]
    fn a_title_renamed_on_both_devices_waits_for_a_choice() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(25);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        let base = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
        ];
        a.put(C, &conversation("Sea trip", &base, 2)).unwrap();
        b.put(C, &conversation("Alps trip", &base, 2)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        let d = take(&mut a, C);
        assert_eq!(d.conflicts.len(), 1, "{:?}", d.conflicts);
        assert_eq!(d.conflicts[0].path, ["title"]);
        a.choose(C, &["title".into()], &json!("Alps trip")).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        let d = take(&mut b, C);
        assert!(d.conflicts.is_empty());
        assert_eq!(d.record["title"], "Alps trip");
    }

    #[test]
    fn a_conversation_deleted_on_one_device_and_continued_on_the_other_offers_restore() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(22);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        a.delete(C).unwrap();
        let more = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
            ("c-m3", "user", "Still going?", 9.0),
        ];
        b.put(C, &conversation("Trip", &more, 3)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        for r in [&mut a, &mut b] {
            assert_eq!(take(r, C).presence, Presence::DeletedWhileEdited);
        }
        a.restore(C).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        let d = take(&mut b, C);
        assert_eq!(d.presence, Presence::Live);
        assert_eq!(d.record, conversation("Trip", &more, 3));
    }

    #[test]
    fn the_same_message_from_two_devices_is_one_message() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(23);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        // Both devices come to hold one message (one id, the same
        // content) apart, as when each took it from the same source.
        let more = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
            ("c-m3", "user", "Same words", 7.0),
        ];
        a.put(C, &conversation("Trip", &more, 3)).unwrap();
        b.put(C, &conversation("Trip", &more, 3)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        let want = conversation("Trip", &more, 3);
        assert_eq!(take(&mut a, C).record, want);
        assert_eq!(take(&mut b, C).record, want);

        // Saving that record drops the second copy from the document too.
        let mut next = want.clone();
        next["title"] = json!("Trip, again");
        a.put(C, &next).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        assert_eq!(take(&mut b, C).record, next);
        let doc = b.docs.get_mut(C).unwrap();
        let (_, messages) = doc.doc_for_tests().get(ROOT, "messages").unwrap().unwrap();
        assert_eq!(doc.doc_for_tests().length(&messages), 3);
    }

    #[test]
    fn a_save_of_a_record_from_before_arrivals_keeps_what_arrived() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(24);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        let base = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
        ];
        let mut on_b = base.to_vec();
        on_b.push(("c-m3", "user", "From the desktop", 5.0));
        b.put(C, &conversation("Trip", &on_b, 3)).unwrap();
        round(&mut b, &store, &mut e);
        // A reads B's message, but its app has not stored it yet (a reply
        // was streaming there) and saves what it holds.
        round(&mut a, &store, &mut e);
        let mut on_a = base.to_vec();
        on_a.push(("c-m3", "user", "From the laptop", 6.0));
        a.put(C, &conversation("Trip", &on_a, 3)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        let d = take(&mut a, C);
        assert_eq!(d, take(&mut b, C));
        assert_eq!(
            contents(&d.record),
            [
                "From the desktop",
                "From the laptop",
                "Plan a trip",
                "Where to?"
            ]
        );
    }

    #[test]
    fn a_record_too_large_for_one_object_is_refused_by_name_and_the_rest_syncs() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(27);
        let (mut a, mut b, _) = replicas();
        a.max_record_bytes = 1 << 20;
        // Random bytes, as a photo's are: Automerge compresses repetition.
        let mut raw = vec![0u8; 1_600_000];
        e.fill(&mut raw);
        let picture = B64.encode(&raw);
        let mut big = conversation("Photos", &[("c-m1", "user", "Look", 2.0)], 1);
        big["messages"][0]["images"] = json!([{"media_type": "image/png", "data": picture}]);
        a.put(C, &big).unwrap();
        a.put("note:1", &note("1", "Small", "fits", 1.0)).unwrap();
        let report = round(&mut a, &store, &mut e);
        assert_eq!(report.refused.len(), 1, "{:?}", report.refused);
        let (name, why) = &report.refused[0];
        assert_eq!(name, C);
        assert!(
            why.to_string()
                .starts_with("too large to sync: its changes come to 2.0 MB, more than the 1 MB"),
            "{why}"
        );
        assert_eq!(a.waiting(), 1, "the large record waits");
        round(&mut b, &store, &mut e);
        assert_eq!(body(&mut b, "note:1"), "fits");
        assert!(b.derive(C).unwrap().is_none());
    }

    #[test]
    fn regenerating_on_one_device_while_the_other_continues() {
        let store = MemoryStore::default();
        let mut e = Seeded::new(26);
        let (mut a, mut b) = shared_conversation(&store, &mut e);
        // A replaces the reply; B answers the old reply.
        let regenerated = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m3", "assistant", "Where would you like to go?", 8.0),
        ];
        a.put(C, &conversation("Trip", &regenerated, 3)).unwrap();
        let continued = [
            ("c-m1", "user", "Plan a trip", 2.0),
            ("c-m2", "assistant", "Where to?", 3.0),
            ("c-m3", "user", "Rome", 9.0),
        ];
        b.put(C, &conversation("Trip", &continued, 3)).unwrap();
        round(&mut a, &store, &mut e);
        round(&mut b, &store, &mut e);
        round(&mut a, &store, &mut e);
        let d = take(&mut a, C);
        assert_eq!(d, take(&mut b, C));
        assert!(d.conflicts.is_empty(), "{:?}", d.conflicts);
        // The replaced reply goes; both new messages stay.
        assert_eq!(
            contents(&d.record),
            ["Plan a trip", "Rome", "Where would you like to go?"]
        );
    }
}
