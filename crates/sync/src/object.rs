//! Sealed objects, the only form in which Hearth's data reaches the
//! bucket.
//!
//! Layout: `HSYN`, the format version (u16, little-endian), the id of the
//! key that sealed it (u32; every vault has key 0 until keys rotate), a
//! random 24-byte nonce, then the ciphertext and its 16-byte tag. The
//! header, the vault's id and the object's name are the associated data:
//! changing any byte, cutting the object short, copying it to another
//! name or into another vault makes it fail to open. The version is read
//! before anything else, so a newer format is refused by name, never
//! misread.

use crate::primitives::{KEY_LEN, NONCE_LEN, TAG_LEN, open as aead_open, seal as aead_seal};
use crate::{Entropy, SyncError};

/// The newest object format this build writes and reads.
pub const FORMAT: u32 = 1;
const MAGIC: &[u8; 4] = b"HSYN";
const KEY_ID: u32 = 0;
const HEADER: usize = MAGIC.len() + 2 + 4 + NONCE_LEN;

fn associated_data(header: &[u8], vault: &[u8; 16], name: &str) -> Vec<u8> {
    let mut aad = Vec::with_capacity(header.len() + 16 + name.len());
    aad.extend_from_slice(header);
    aad.extend_from_slice(vault);
    aad.extend_from_slice(name.as_bytes());
    aad
}

pub(crate) fn seal(
    key: &[u8; KEY_LEN],
    vault: &[u8; 16],
    name: &str,
    plaintext: &[u8],
    entropy: &mut dyn Entropy,
) -> Vec<u8> {
    let mut nonce = [0u8; NONCE_LEN];
    entropy.fill(&mut nonce);
    let mut out = Vec::with_capacity(HEADER + plaintext.len() + TAG_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(FORMAT as u16).to_le_bytes());
    out.extend_from_slice(&KEY_ID.to_le_bytes());
    out.extend_from_slice(&nonce);
    let sealed = aead_seal(key, &nonce, &associated_data(&out, vault, name), plaintext);
    out.extend_from_slice(&sealed);
    out
}

pub(crate) fn open(
    key: &[u8; KEY_LEN],
    vault: &[u8; 16],
    name: &str,
    bytes: &[u8],
) -> Result<Vec<u8>, SyncError> {
    if bytes.len() < MAGIC.len() + 2 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(SyncError::NotAnObject);
    }
    let format = u32::from(u16::from_le_bytes([bytes[4], bytes[5]]));
    if format == 0 {
        return Err(SyncError::NotAnObject);
    }
    if format > FORMAT {
        return Err(SyncError::NewerFormat {
            found: format,
            supported: FORMAT,
        });
    }
    if bytes.len() < HEADER + TAG_LEN {
        return Err(SyncError::Tampered);
    }
    let key_id = u32::from_le_bytes(bytes[6..10].try_into().expect("4 bytes"));
    if key_id != KEY_ID {
        return Err(SyncError::UnknownKey(key_id));
    }
    let nonce: [u8; NONCE_LEN] = bytes[10..HEADER].try_into().expect("24 bytes");
    aead_open(
        key,
        &nonce,
        &associated_data(&bytes[..HEADER], vault, name),
        &bytes[HEADER..],
    )
    .ok_or(SyncError::Tampered)
}

#[cfg(test)]
mod tests {
    use crate::SyncError;
    use crate::testing::Seeded;
    use crate::vault::Vault;

    const NOTE: &[u8] = br#"{"title":"Plum jam","body":"marker-words: quince, cardamom"}"#;

    fn sealed() -> (Vault, Vec<u8>) {
        let mut rng = Seeded::new(42);
        let v = Vault::generate(&mut rng);
        let bytes = v.seal("n/1", NOTE, &mut rng);
        (v, bytes)
    }

    #[test]
    fn an_object_opens_under_its_own_name_and_shows_no_plaintext() {
        let (v, bytes) = sealed();
        assert_eq!(v.open("n/1", &bytes).unwrap(), NOTE);
        for word in [&b"Plum"[..], b"quince", b"cardamom", b"title"] {
            assert!(
                !bytes.windows(word.len()).any(|w| w == word),
                "{}",
                String::from_utf8_lossy(word)
            );
        }
    }

    #[test]
    fn the_same_plaintext_sealed_twice_differs() {
        let mut rng = Seeded::new(5);
        let v = Vault::generate(&mut rng);
        assert_ne!(v.seal("n/1", NOTE, &mut rng), v.seal("n/1", NOTE, &mut rng));
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        let (v, bytes) = sealed();
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x20;
            let err = v.open("n/1", &bad).unwrap_err();
            assert!(
                matches!(
                    err,
                    SyncError::Tampered
                        | SyncError::NotAnObject
                        | SyncError::NewerFormat { .. }
                        | SyncError::UnknownKey(_)
                ),
                "byte {i}: {err}"
            );
        }
    }

    #[test]
    fn a_truncated_object_is_refused() {
        let (v, bytes) = sealed();
        for len in [0, 3, 6, 20, 34, 49, bytes.len() - 1] {
            assert!(v.open("n/1", &bytes[..len]).is_err(), "cut to {len}");
        }
        assert_eq!(
            v.open("n/1", &bytes[..bytes.len() - 1]),
            Err(SyncError::Tampered)
        );
    }

    #[test]
    fn an_object_replayed_under_another_name_is_refused() {
        let (v, bytes) = sealed();
        assert_eq!(v.open("n/2", &bytes), Err(SyncError::Tampered));
    }

    #[test]
    fn an_object_from_another_vault_is_refused() {
        let (_, bytes) = sealed();
        let other = Vault::generate(&mut Seeded::new(43));
        assert_eq!(other.open("n/1", &bytes), Err(SyncError::Tampered));
    }

    #[test]
    fn a_format_from_the_future_is_refused_by_name() {
        let (v, mut bytes) = sealed();
        bytes[4] = 2;
        let err = v.open("n/1", &bytes).unwrap_err();
        assert_eq!(
            err,
            SyncError::NewerFormat {
                found: 2,
                supported: 1
            }
        );
        assert!(err.to_string().contains("update Hearth"), "{err}");
    }

    #[test]
    fn something_else_entirely_is_not_an_object() {
        let (v, _) = sealed();
        assert_eq!(
            v.open("n/1", br#"{"title":"Plum jam"}"#),
            Err(SyncError::NotAnObject)
        );
        assert_eq!(v.open("n/1", b""), Err(SyncError::NotAnObject));
    }
}
