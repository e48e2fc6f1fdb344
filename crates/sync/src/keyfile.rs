//! The key file: the one object in the bucket the vault key does not seal,
//! because it is how a device gets the vault key.
//!
//! It holds the vault key twice: sealed by a key Argon2id derives from the
//! passphrase, and sealed by a key HKDF derives from the recovery key. The
//! Argon2id parameters and salt are bound into the first seal, so a file
//! edited to weaker parameters does not open. Without the passphrase or
//! the recovery key, the file gives away the vault's id, the Argon2id
//! parameters and nothing else.

use serde::{Deserialize, Serialize};

pub use crate::primitives::KdfParams;
use crate::primitives::{KEY_LEN, NONCE_LEN, argon2id, hkdf, open, seal};
use crate::recovery::RecoveryKey;
use crate::vault::{Vault, VaultId};
use crate::{Entropy, SyncError, hex, unhex, unhex_vec};

/// The newest key file format this build writes and reads.
pub const KEYFILE_FORMAT: u32 = 1;
/// The shortest passphrase sync accepts.
pub const MIN_PASSPHRASE: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Kdf {
    alg: String,
    m_kib: u32,
    t: u32,
    p: u32,
    salt: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Wrap {
    nonce: String,
    sealed: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keyfile {
    hearth_sync_keyfile: u32,
    vault: String,
    kdf: Kdf,
    passphrase: Wrap,
    recovery: Wrap,
}

fn passphrase_aad(vault: &str, kdf: &Kdf) -> Vec<u8> {
    format!(
        "hearth-sync keyfile {KEYFILE_FORMAT}\0passphrase\0{vault}\0{}\0{}\0{}\0{}\0{}",
        kdf.alg, kdf.m_kib, kdf.t, kdf.p, kdf.salt
    )
    .into_bytes()
}

fn recovery_aad(vault: &str) -> Vec<u8> {
    format!("hearth-sync keyfile {KEYFILE_FORMAT}\0recovery\0{vault}").into_bytes()
}

fn recovery_kek(key: &RecoveryKey, vault: VaultId) -> [u8; KEY_LEN] {
    hkdf(key.secret(), &vault.0, b"hearth-sync recovery wrap 1")
}

fn wrap(kek: &[u8; KEY_LEN], aad: &[u8], root: &[u8; KEY_LEN], entropy: &mut dyn Entropy) -> Wrap {
    let mut nonce = [0u8; NONCE_LEN];
    entropy.fill(&mut nonce);
    Wrap {
        nonce: hex(&nonce),
        sealed: hex(&seal(kek, &nonce, aad, root)),
    }
}

fn unwrap(kek: &[u8; KEY_LEN], aad: &[u8], w: &Wrap) -> Result<Option<[u8; KEY_LEN]>, SyncError> {
    let nonce = unhex::<NONCE_LEN>(&w.nonce)
        .ok_or_else(|| SyncError::BadKeyfile("a nonce is not 24 bytes of hex".into()))?;
    let sealed = unhex_vec(&w.sealed)
        .ok_or_else(|| SyncError::BadKeyfile("a sealed key is not hex".into()))?;
    Ok(open(kek, &nonce, aad, &sealed).and_then(|k| k.try_into().ok()))
}

fn check_passphrase(passphrase: &str) -> Result<(), SyncError> {
    if passphrase.chars().count() < MIN_PASSPHRASE {
        Err(SyncError::PassphraseTooShort(MIN_PASSPHRASE))
    } else {
        Ok(())
    }
}

impl Keyfile {
    /// A new vault: its key file, the vault itself, and the recovery key to
    /// show the person once.
    pub fn create(
        passphrase: &str,
        params: KdfParams,
        entropy: &mut dyn Entropy,
    ) -> Result<(Keyfile, Vault, RecoveryKey), SyncError> {
        check_passphrase(passphrase)?;
        params.check().map_err(SyncError::BadKeyfile)?;
        let vault = Vault::generate(entropy);
        let recovery = RecoveryKey::generate(entropy);
        let id = hex(&vault.id().0);
        let kdf = Kdf {
            alg: "argon2id".into(),
            m_kib: params.m_kib,
            t: params.t,
            p: params.p,
            salt: String::new(),
        };
        let recovery_wrap = wrap(
            &recovery_kek(&recovery, vault.id()),
            &recovery_aad(&id),
            vault.root(),
            entropy,
        );
        let file = Keyfile {
            hearth_sync_keyfile: KEYFILE_FORMAT,
            vault: id,
            kdf,
            passphrase: Wrap {
                nonce: String::new(),
                sealed: String::new(),
            },
            recovery: recovery_wrap,
        };
        let file = file.with_passphrase(&vault, passphrase, params, entropy)?;
        Ok((file, vault, recovery))
    }

    /// This key file with the passphrase's seal replaced: a new passphrase,
    /// a new salt, and the cost given. The recovery key's seal is kept.
    pub fn with_passphrase(
        &self,
        vault: &Vault,
        passphrase: &str,
        params: KdfParams,
        entropy: &mut dyn Entropy,
    ) -> Result<Keyfile, SyncError> {
        check_passphrase(passphrase)?;
        params.check().map_err(SyncError::BadKeyfile)?;
        let mut salt = [0u8; 16];
        entropy.fill(&mut salt);
        let kdf = Kdf {
            alg: "argon2id".into(),
            m_kib: params.m_kib,
            t: params.t,
            p: params.p,
            salt: hex(&salt),
        };
        let kek = argon2id(passphrase.as_bytes(), &salt, params).map_err(SyncError::BadKeyfile)?;
        let vault_hex = hex(&vault.id().0);
        let passphrase = wrap(
            &kek,
            &passphrase_aad(&vault_hex, &kdf),
            vault.root(),
            entropy,
        );
        Ok(Keyfile {
            kdf,
            passphrase,
            ..self.clone()
        })
    }

    /// Reads a key file, refusing a newer format by name before anything
    /// else is read.
    pub fn parse(bytes: &[u8]) -> Result<Keyfile, SyncError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|_| SyncError::BadKeyfile("not JSON".into()))?;
        let format = value
            .get("hearth_sync_keyfile")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| SyncError::BadKeyfile("not a Hearth sync key file".into()))?;
        if format > u64::from(KEYFILE_FORMAT) {
            return Err(SyncError::NewerFormat {
                found: u32::try_from(format).unwrap_or(u32::MAX),
                supported: KEYFILE_FORMAT,
            });
        }
        let file: Keyfile =
            serde_json::from_value(value).map_err(|e| SyncError::BadKeyfile(e.to_string()))?;
        if file.hearth_sync_keyfile == 0 {
            return Err(SyncError::BadKeyfile("format 0".into()));
        }
        file.vault_id()?;
        if file.kdf.alg != "argon2id" {
            return Err(SyncError::BadKeyfile(format!(
                "unknown key derivation {:?}",
                file.kdf.alg
            )));
        }
        file.params().check().map_err(SyncError::BadKeyfile)?;
        unhex::<16>(&file.kdf.salt)
            .ok_or_else(|| SyncError::BadKeyfile("the salt is not 16 bytes of hex".into()))?;
        Ok(file)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a key file serialises")
    }

    pub fn vault_id(&self) -> Result<VaultId, SyncError> {
        unhex::<16>(&self.vault)
            .map(VaultId)
            .ok_or_else(|| SyncError::BadKeyfile("the vault id is not 16 bytes of hex".into()))
    }

    pub fn params(&self) -> KdfParams {
        KdfParams {
            m_kib: self.kdf.m_kib,
            t: self.kdf.t,
            p: self.kdf.p,
        }
    }

    pub fn unlock_with_passphrase(&self, passphrase: &str) -> Result<Vault, SyncError> {
        let params = self.params();
        params.check().map_err(SyncError::BadKeyfile)?;
        let salt = unhex::<16>(&self.kdf.salt)
            .ok_or_else(|| SyncError::BadKeyfile("the salt is not 16 bytes of hex".into()))?;
        let kek = argon2id(passphrase.as_bytes(), &salt, params).map_err(SyncError::BadKeyfile)?;
        let root = unwrap(
            &kek,
            &passphrase_aad(&self.vault, &self.kdf),
            &self.passphrase,
        )?
        .ok_or(SyncError::WrongPassphrase)?;
        Ok(Vault::from_root(self.vault_id()?, root))
    }

    pub fn unlock_with_recovery(&self, key: &RecoveryKey) -> Result<Vault, SyncError> {
        let id = self.vault_id()?;
        let root = unwrap(
            &recovery_kek(key, id),
            &recovery_aad(&self.vault),
            &self.recovery,
        )?
        .ok_or(SyncError::WrongRecoveryKey)?;
        Ok(Vault::from_root(id, root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FAST, Seeded};

    const PASS: &str = "correct horse battery";

    fn created() -> (Keyfile, Vault, RecoveryKey) {
        Keyfile::create(PASS, FAST, &mut Seeded::new(1)).unwrap()
    }

    #[test]
    fn the_passphrase_and_the_recovery_key_each_open_the_same_vault() {
        let (file, vault, recovery) = created();
        let file = Keyfile::parse(file.to_json().as_bytes()).unwrap();
        let mut rng = Seeded::new(2);
        let sealed = vault.seal("n/1", b"hello", &mut rng);
        let by_pass = file.unlock_with_passphrase(PASS).unwrap();
        let by_key = file
            .unlock_with_recovery(&RecoveryKey::parse(&recovery.display()).unwrap())
            .unwrap();
        assert_eq!(by_pass.id(), vault.id());
        assert_eq!(by_pass.open("n/1", &sealed).unwrap(), b"hello");
        assert_eq!(by_key.open("n/1", &sealed).unwrap(), b"hello");
    }

    #[test]
    fn a_wrong_passphrase_or_recovery_key_is_named_as_such() {
        let (file, _, _) = created();
        assert_eq!(
            file.unlock_with_passphrase("correct horse battery ")
                .unwrap_err(),
            SyncError::WrongPassphrase
        );
        let other = RecoveryKey::generate(&mut Seeded::new(99));
        assert_eq!(
            file.unlock_with_recovery(&other).unwrap_err(),
            SyncError::WrongRecoveryKey
        );
    }

    #[test]
    fn a_short_passphrase_is_refused_before_anything_is_made() {
        let err = Keyfile::create("short", FAST, &mut Seeded::new(1)).unwrap_err();
        assert_eq!(err, SyncError::PassphraseTooShort(MIN_PASSPHRASE));
    }

    #[test]
    fn changing_the_passphrase_keeps_the_vault_and_the_recovery_key() {
        let (file, vault, recovery) = created();
        let changed = file
            .with_passphrase(&vault, "a new passphrase", FAST, &mut Seeded::new(3))
            .unwrap();
        assert_eq!(
            changed.unlock_with_passphrase(PASS).unwrap_err(),
            SyncError::WrongPassphrase
        );
        assert_eq!(
            changed
                .unlock_with_passphrase("a new passphrase")
                .unwrap()
                .id(),
            vault.id()
        );
        assert_eq!(
            changed.unlock_with_recovery(&recovery).unwrap().id(),
            vault.id()
        );
    }

    #[test]
    fn the_key_file_holds_no_key_in_the_clear() {
        let (file, vault, recovery) = created();
        let json = file.to_json();
        assert!(!json.contains(&hex(vault.root())));
        assert!(!json.contains(&hex(recovery.secret())));
        assert!(!json.contains(PASS));
    }

    #[test]
    fn weaker_parameters_written_into_the_file_do_not_open_it() {
        let (file, _, _) = created();
        let json = file.to_json().replace("\"t\": 1", "\"t\": 2");
        let edited = Keyfile::parse(json.as_bytes()).unwrap();
        assert_eq!(
            edited.unlock_with_passphrase(PASS).unwrap_err(),
            SyncError::WrongPassphrase
        );
    }

    #[test]
    fn a_ruinous_cost_is_refused_before_any_memory_is_taken() {
        let (file, _, _) = created();
        let json = file
            .to_json()
            .replace("\"m_kib\": 64", "\"m_kib\": 4194304");
        assert!(matches!(
            Keyfile::parse(json.as_bytes()),
            Err(SyncError::BadKeyfile(_))
        ));
        assert!(matches!(
            Keyfile::create(
                PASS,
                KdfParams {
                    m_kib: 4 << 20,
                    t: 1,
                    p: 1
                },
                &mut Seeded::new(1)
            ),
            Err(SyncError::BadKeyfile(_))
        ));
    }

    #[test]
    fn a_key_file_from_the_future_is_refused_by_name() {
        let (file, _, _) = created();
        let json = file
            .to_json()
            .replace("\"hearth_sync_keyfile\": 1", "\"hearth_sync_keyfile\": 7");
        assert_eq!(
            Keyfile::parse(json.as_bytes()).unwrap_err(),
            SyncError::NewerFormat {
                found: 7,
                supported: 1
            }
        );
    }

    #[test]
    fn malformed_key_files_are_refused_with_a_reason() {
        for bad in [
            &b"not json"[..],
            b"{}",
            b"[]",
            br#"{"hearth_sync_keyfile":1}"#,
        ] {
            assert!(
                matches!(Keyfile::parse(bad), Err(SyncError::BadKeyfile(_))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_recovery_seal_moved_into_another_vaults_file_does_not_open_it() {
        let (a, _, ra) = created();
        let (b, _, _) = Keyfile::create(PASS, FAST, &mut Seeded::new(50)).unwrap();
        let spliced = Keyfile {
            recovery: a.recovery.clone(),
            ..b
        };
        assert_eq!(
            spliced.unlock_with_recovery(&ra).unwrap_err(),
            SyncError::WrongRecoveryKey
        );
    }

    #[test]
    fn the_recommended_cost_is_rfc_9106s_second_choice_in_one_lane() {
        assert_eq!(
            KdfParams::RECOMMENDED,
            KdfParams {
                m_kib: 65536,
                t: 3,
                p: 1
            }
        );
        KdfParams::RECOMMENDED.check().unwrap();
    }
}
