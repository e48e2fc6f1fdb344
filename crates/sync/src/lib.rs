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
