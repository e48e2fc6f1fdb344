//! hearth-sync: what sync needs that is pure. Every object Hearth puts in
//! the person's bucket is sealed here, and every object it reads back is
//! opened here, so the storage provider sees only ciphertext, sizes and
//! timing.
//!
//! - [`primitives`]: the four primitives, each checked against its
//!   published test vectors: XChaCha20-Poly1305, Argon2id, HKDF-SHA-256
//!   and HMAC-SHA-256.
//! - [`keyfile`]: the vault key, wrapped by a key derived from the
//!   passphrase and by the recovery key; the only object in the bucket
//!   that is not sealed by the vault key itself.
//! - [`recovery`]: the recovery key as a person copies it, with a check
//!   that tells a typo from a wrong key.
//! - [`vault`]: an unlocked vault: the keys derived from the vault key
//!   for one purpose each, and the names objects are stored under.
//! - [`object`]: sealed objects. Each carries its format version, and its
//!   name and vault are bound in as associated data, so an object copied
//!   to another name or from another vault does not open.
//!
//! - [`doc`]: a record as an Automerge document, and the record derived
//!   back from it: how fields merge, conflicts, deletes and restores.
//! - [`replica`]: one device's copy of the synced records, and the
//!   rounds that push its changes to the bucket, pull the others', and
//!   compact them into snapshots.
//! - [`s3`]: the S3 requests sync sends, signed with Signature Version 4,
//!   and the answers it reads.
//!
//! Nothing here touches the network, storage or a clock, and randomness is
//! handed in ([`Entropy`]): the app gives the browser's
//! `crypto.getRandomValues`, tests a seeded source.

pub mod doc;
pub mod keyfile;
pub mod object;
pub mod primitives;
pub mod recovery;
pub mod replica;
pub mod s3;
pub mod vault;

pub use keyfile::{KdfParams, Keyfile};
pub use object::FORMAT;
pub use recovery::RecoveryKey;
pub use vault::{Vault, VaultId};

/// Cryptographically secure random bytes, from the platform.
pub trait Entropy {
    fn fill(&mut self, out: &mut [u8]);
}

/// Why sync refused something. Each message says what happened in words a
/// person can act on; none of them echoes key material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    #[error("this is not a Hearth sync object")]
    NotAnObject,
    #[error(
        "this object was written by a newer Hearth (sync format {found}; this one reads up to {supported}): update Hearth on this device"
    )]
    NewerFormat { found: u32, supported: u32 },
    #[error(
        "this object failed its integrity check: it was changed, cut short, or copied from another name or another vault"
    )]
    Tampered,
    #[error("this object is sealed with key {0}, which this device does not hold")]
    UnknownKey(u32),
    #[error("that passphrase does not open this vault")]
    WrongPassphrase,
    #[error("that recovery key does not open this vault")]
    WrongRecoveryKey,
    #[error("the recovery key has a typo: check each group against the copy you kept")]
    RecoveryKeyTypo,
    #[error("the passphrase needs at least {0} characters")]
    PassphraseTooShort(usize),
    #[error("the vault's key file is unreadable: {0}")]
    BadKeyfile(String),
    #[error("a synced record could not be read: {0}")]
    BadDocument(String),
    #[error(
        "too large to sync: its changes come to {mb} MB, more than the {limit_mb} MB one object may hold; it stays on this device (pictures are the usual cause: remove some, or start a new conversation)"
    )]
    TooLarge { mb: String, limit_mb: usize },
}

/// Lowercase hex, for the key file's JSON and for object names.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The bytes of `N` bytes' worth of lowercase or uppercase hex.
pub(crate) fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != N * 2 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

/// Hex of any length, for sealed payloads.
pub(crate) fn unhex_vec(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;

    use crate::KdfParams;
    use crate::replica::{Fetched, Store};

    /// An Argon2id cost cheap enough for a debug build; the recommended
    /// cost is checked on its own.
    pub const FAST: KdfParams = KdfParams {
        m_kib: 64,
        t: 1,
        p: 1,
    };
    use crate::s3::{Put, StoreError};

    /// Runs a future that never waits: the in-memory store answers at
    /// once.
    pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(out) => out,
            std::task::Poll::Pending => panic!("the in-memory store never waits"),
        }
    }

    /// A bucket in memory, with S3's conditional-write rules, for the
    /// rules of the rounds. The same rounds run against a real SeaweedFS
    /// in hearth-proxy's `sync_store` tests.
    #[derive(Default)]
    pub struct MemoryStore {
        objects: RefCell<BTreeMap<String, (Vec<u8>, u64)>>,
        version: Cell<u64>,
        fail_put_to: RefCell<Option<String>>,
        slip_in: RefCell<Option<(String, String, Vec<u8>)>>,
    }

    impl MemoryStore {
        pub fn objects(&self) -> Vec<(String, Vec<u8>)> {
            let objects = self.objects.borrow();
            objects
                .iter()
                .map(|(k, (b, _))| (k.clone(), b.clone()))
                .collect()
        }
        pub fn len(&self) -> usize {
            self.objects.borrow().len()
        }
        pub fn get_raw(&self, name: &str) -> Option<Vec<u8>> {
            self.objects.borrow().get(name).map(|(b, _)| b.clone())
        }
        /// Changes an object's bytes behind the devices' backs.
        pub fn mutate(&self, name: &str, f: impl FnOnce(&mut Vec<u8>)) {
            let mut objects = self.objects.borrow_mut();
            let entry = objects.get_mut(name).expect("the object exists");
            f(&mut entry.0);
        }
        /// The next conditional write to `name` loses, as if another
        /// device wrote there just before it.
        pub fn fail_next_put_to(&self, name: &str) {
            *self.fail_put_to.borrow_mut() = Some(name.to_string());
        }
    }

    impl MemoryStore {
        /// A copy of the bucket as it is now.
        pub fn fork(&self) -> MemoryStore {
            let fork = MemoryStore::default();
            *fork.objects.borrow_mut() = self.objects.borrow().clone();
            fork.version.set(self.version.get());
            fork
        }
        /// When something writes `trigger`, `object` appears right after:
        /// another device's write landing in the middle of a round.
        pub fn slip_in_after_put_to(&self, trigger: &str, object: &str, body: Vec<u8>) {
            *self.slip_in.borrow_mut() = Some((trigger.into(), object.into(), body));
        }
    }

    impl Store for MemoryStore {
        async fn get(&self, name: &str) -> Result<Option<Fetched>, StoreError> {
            Ok(self.objects.borrow().get(name).map(|(body, v)| Fetched {
                body: body.clone(),
                etag: v.to_string(),
            }))
        }
        async fn put(&self, name: &str, body: Vec<u8>, put: Put) -> Result<String, StoreError> {
            let mut objects = self.objects.borrow_mut();
            let current = objects.get(name).map(|(_, v)| v.to_string());
            let allowed = match &put {
                Put::Always => true,
                Put::IfAbsent => current.is_none(),
                Put::IfUnchanged(etag) => current.as_deref() == Some(etag.as_str()),
            };
            let mut fail = self.fail_put_to.borrow_mut();
            if put != Put::Always && fail.as_deref() == Some(name) {
                *fail = None;
                return Err(StoreError::Conflict);
            }
            if !allowed {
                return Err(StoreError::Conflict);
            }
            self.version.set(self.version.get() + 1);
            objects.insert(name.to_string(), (body, self.version.get()));
            let written = self.version.get().to_string();
            let mut slip = self.slip_in.borrow_mut();
            if slip.as_ref().is_some_and(|(trigger, _, _)| trigger == name) {
                let (_, object, body) = slip.take().expect("checked");
                self.version.set(self.version.get() + 1);
                objects.insert(object, (body, self.version.get()));
            }
            Ok(written)
        }
        async fn delete(&self, name: &str) -> Result<(), StoreError> {
            self.objects.borrow_mut().remove(name);
            Ok(())
        }
    }

    /// A deterministic stand-in for the platform's randomness: a counter
    /// run through HMAC, so tests repeat exactly and no two draws match.
    pub struct Seeded {
        seed: u64,
        counter: u64,
    }

    impl Seeded {
        pub fn new(seed: u64) -> Self {
            Seeded { seed, counter: 0 }
        }
    }

    impl super::Entropy for Seeded {
        fn fill(&mut self, out: &mut [u8]) {
            for chunk in out.chunks_mut(32) {
                self.counter += 1;
                let mut msg = self.seed.to_le_bytes().to_vec();
                msg.extend(self.counter.to_le_bytes());
                let block = super::primitives::hmac(b"hearth-sync test entropy", &msg);
                chunk.copy_from_slice(&block[..chunk.len()]);
            }
        }
    }
}
