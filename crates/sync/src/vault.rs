//! An unlocked vault. The vault key never seals anything itself: HKDF
//! derives one key per purpose from it, so a key that names objects can
//! never be confused with one that seals them.

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::object;
use crate::primitives::{KEY_LEN, hkdf, hmac};
use crate::{Entropy, SyncError, hex};

/// A vault's public identity: random, and bound into every object sealed
/// in it, so an object from another vault does not open here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VaultId(pub [u8; 16]);

impl std::fmt::Display for VaultId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

#[derive(Zeroize, ZeroizeOnDrop)]
pub struct Vault {
    #[zeroize(skip)]
    id: VaultId,
    root: [u8; KEY_LEN],
    objects: [u8; KEY_LEN],
    names: [u8; KEY_LEN],
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Vault({})", self.id)
    }
}

impl Vault {
    pub(crate) fn from_root(id: VaultId, root: [u8; KEY_LEN]) -> Self {
        Vault {
            id,
            objects: hkdf(&root, &id.0, b"hearth-sync objects 1"),
            names: hkdf(&root, &id.0, b"hearth-sync names 1"),
            root,
        }
    }

    pub(crate) fn generate(entropy: &mut dyn Entropy) -> Self {
        let mut id = [0u8; 16];
        entropy.fill(&mut id);
        let mut root = [0u8; KEY_LEN];
        entropy.fill(&mut root);
        Vault::from_root(VaultId(id), root)
    }

    pub(crate) fn root(&self) -> &[u8; KEY_LEN] {
        &self.root
    }

    pub fn id(&self) -> VaultId {
        self.id
    }

    /// The unlocked vault as this device keeps it between visits, so a
    /// round in the background needs no passphrase: the vault id and key,
    /// in hex. It is as secret as the passphrase; the app stores it only
    /// in this browser profile, next to the plaintext records it guards.
    pub fn export_local(&self) -> String {
        format!("{}:{}", hex(&self.id.0), hex(&self.root))
    }

    /// A vault from [`Vault::export_local`]'s text.
    pub fn import_local(text: &str) -> Result<Vault, SyncError> {
        let bad = || SyncError::BadKeyfile("this device's stored vault key is damaged".into());
        let (id, root) = text.split_once(':').ok_or_else(bad)?;
        let id = crate::unhex::<16>(id).ok_or_else(bad)?;
        let root = crate::unhex::<KEY_LEN>(root).ok_or_else(bad)?;
        Ok(Vault::from_root(VaultId(id), root))
    }

    /// The name an object about `id` is stored under: 128 bits of HMAC, so
    /// the bucket shows neither the id nor a title, and the same id always
    /// lands on the same name within this vault.
    pub fn object_name(&self, id: &str) -> String {
        hex(&hmac(&self.names, id.as_bytes())[..16])
    }

    /// `plaintext` sealed for storage under `name`.
    pub fn seal(&self, name: &str, plaintext: &[u8], entropy: &mut dyn Entropy) -> Vec<u8> {
        object::seal(&self.objects, &self.id.0, name, plaintext, entropy)
    }

    /// The plaintext of an object read from `name`, or why it was refused.
    pub fn open(&self, name: &str, sealed: &[u8]) -> Result<Vec<u8>, SyncError> {
        object::open(&self.objects, &self.id.0, name, sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Seeded;

    #[test]
    fn names_are_stable_per_vault_and_reveal_nothing_of_the_id() {
        let v = Vault::generate(&mut Seeded::new(1));
        let w = Vault::generate(&mut Seeded::new(2));
        let name = v.object_name("note:groceries");
        assert_eq!(name, v.object_name("note:groceries"));
        assert_ne!(name, v.object_name("note:groceries "));
        assert_ne!(
            name,
            w.object_name("note:groceries"),
            "another vault, another name"
        );
        assert_eq!(name.len(), 32);
        assert!(name.bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
        assert!(!name.contains("groceries"));
    }

    #[test]
    fn purposes_get_different_keys() {
        let v = Vault::generate(&mut Seeded::new(3));
        assert_ne!(v.objects, v.names);
        assert_ne!(&v.objects, v.root());
        assert_ne!(&v.names, v.root());
    }

    #[test]
    fn a_vault_kept_on_the_device_comes_back_the_same() {
        let v = Vault::generate(&mut Seeded::new(5));
        let back = Vault::import_local(&v.export_local()).unwrap();
        assert_eq!(back.id(), v.id());
        let sealed = v.seal("n", b"text", &mut Seeded::new(6));
        assert_eq!(back.open("n", &sealed).unwrap(), b"text");
        for damaged in [
            "",
            "zz",
            &v.export_local()[..40],
            &v.export_local().replace(':', ""),
        ] {
            assert!(Vault::import_local(damaged).is_err(), "{damaged}");
        }
    }

    #[test]
    fn debug_output_shows_the_id_and_no_key() {
        let v = Vault::generate(&mut Seeded::new(4));
        assert_eq!(format!("{v:?}"), format!("Vault({})", v.id()));
    }
}
