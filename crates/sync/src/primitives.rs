//! The primitives sync is built from, used only through these functions so
//! that each has one place where its parameters are chosen:
//! XChaCha20-Poly1305 (random 192-bit nonces are safe to draw for every
//! object), Argon2id (the passphrase's key), HKDF-SHA-256 (keys for one
//! purpose each) and HMAC-SHA-256 (names that reveal nothing).

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

pub const KEY_LEN: usize = 32;
pub const NONCE_LEN: usize = 24;
pub const TAG_LEN: usize = 16;

/// Argon2id's cost: memory in KiB, passes and lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KdfParams {
    pub m_kib: u32,
    pub t: u32,
    pub p: u32,
}

impl KdfParams {
    /// RFC 9106's second recommended choice (64 MiB, 3 passes), in one lane
    /// because a tab derives it on one thread.
    pub const RECOMMENDED: KdfParams = KdfParams {
        m_kib: 64 * 1024,
        t: 3,
        p: 1,
    };

    /// Refuses costs no device should be asked to pay, before any memory
    /// is taken: an edited key file must not make a phone allocate 4 GiB.
    pub fn check(&self) -> Result<(), String> {
        let ok = (1..=4).contains(&self.p)
            && (1..=16).contains(&self.t)
            && (8 * self.p..=1024 * 1024).contains(&self.m_kib);
        if ok {
            Ok(())
        } else {
            Err(format!("Argon2id cost out of range: {self:?}"))
        }
    }
}

/// The ciphertext of `plaintext` followed by its 16-byte tag.
pub fn seal(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN], aad: &[u8], plaintext: &[u8]) -> Vec<u8> {
    XChaCha20Poly1305::new(key.into())
        .encrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        // Encryption fails only past 2^38 bytes, far beyond any object.
        .expect("an object is shorter than XChaCha20's limit")
}

/// The plaintext, or `None` when the key, nonce, associated data or any
/// byte of `sealed` differs from what was sealed.
pub fn open(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    sealed: &[u8],
) -> Option<Vec<u8>> {
    XChaCha20Poly1305::new(key.into())
        .decrypt(XNonce::from_slice(nonce), Payload { msg: sealed, aad })
        .ok()
}

/// HKDF-SHA-256 filling `out` (RFC 5869).
pub fn hkdf_into(ikm: &[u8], salt: &[u8], info: &[u8], out: &mut [u8]) {
    hkdf::Hkdf::<Sha256>::new(Some(salt), ikm)
        .expand(info, out)
        // Only lengths over 255 × 32 bytes fail; every caller asks for less.
        .expect("HKDF output within 8160 bytes");
}

/// A 32-byte key for one purpose, named by `info`.
pub fn hkdf(ikm: &[u8], salt: &[u8], info: &[u8]) -> [u8; KEY_LEN] {
    let mut out = [0u8; KEY_LEN];
    hkdf_into(ikm, salt, info, &mut out);
    out
}

/// HMAC-SHA-256 (RFC 2104).
pub fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// Argon2id, version 1.3, with RFC 9106's optional secret and associated
/// data; sync itself passes neither (`argon2id`).
pub fn argon2id_full(
    password: &[u8],
    salt: &[u8],
    secret: &[u8],
    ad: &[u8],
    cost: KdfParams,
    out: &mut [u8],
) -> Result<(), String> {
    let mut params = argon2::ParamsBuilder::new();
    params
        .m_cost(cost.m_kib)
        .t_cost(cost.t)
        .p_cost(cost.p)
        .output_len(out.len());
    if !ad.is_empty() {
        params.data(argon2::AssociatedData::new(ad).map_err(|e| e.to_string())?);
    }
    let params = params.build().map_err(|e| e.to_string())?;
    let argon = if secret.is_empty() {
        argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
    } else {
        argon2::Argon2::new_with_secret(
            secret,
            argon2::Algorithm::Argon2id,
            argon2::Version::V0x13,
            params,
        )
        .map_err(|e| e.to_string())?
    };
    argon
        .hash_password_into(password, salt, out)
        .map_err(|e| e.to_string())
}

/// The 32-byte key Argon2id derives from a passphrase.
pub fn argon2id(password: &[u8], salt: &[u8], cost: KdfParams) -> Result<[u8; KEY_LEN], String> {
    let mut out = [0u8; KEY_LEN];
    argon2id_full(password, salt, &[], &[], cost, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{hex, unhex_vec};

    fn h(s: &str) -> Vec<u8> {
        unhex_vec(&s.replace([' ', '\n'], "")).unwrap()
    }

    // draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    const SUNSCREEN: &[u8] = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
    const XKEY: &str = "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f";
    const XNONCE: &str = "404142434445464748494a4b4c4d4e4f5051525354555657";
    const XAAD: &str = "50515253c0c1c2c3c4c5c6c7";
    const XSEALED: &str = "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
        731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
        2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
        21f9664c97637da9768812f615c68b13b52e c0875924c1c7987947deafd8780acf49";

    fn xkey() -> [u8; 32] {
        h(XKEY).try_into().unwrap()
    }
    fn xnonce() -> [u8; 24] {
        h(XNONCE).try_into().unwrap()
    }

    #[test]
    fn seal_matches_the_xchacha_draft_vector() {
        assert_eq!(
            hex(&seal(&xkey(), &xnonce(), &h(XAAD), SUNSCREEN)),
            hex(&h(XSEALED))
        );
    }

    #[test]
    fn open_reverses_the_xchacha_draft_vector_and_refuses_any_change() {
        let sealed = h(XSEALED);
        assert_eq!(
            open(&xkey(), &xnonce(), &h(XAAD), &sealed).unwrap(),
            SUNSCREEN
        );
        for i in [0, 57, sealed.len() - 1] {
            let mut bad = sealed.clone();
            bad[i] ^= 1;
            assert_eq!(
                open(&xkey(), &xnonce(), &h(XAAD), &bad),
                None,
                "byte {i} flipped"
            );
        }
        assert_eq!(
            open(&xkey(), &xnonce(), b"other", &sealed),
            None,
            "other associated data"
        );
        assert_eq!(
            open(&xkey(), &xnonce(), &h(XAAD), &sealed[..sealed.len() - 1]),
            None,
            "cut short"
        );
    }

    // RFC 5869, appendix A.1.
    #[test]
    fn hkdf_matches_rfc_5869_case_1() {
        let mut okm = [0u8; 42];
        hkdf_into(
            &[0x0b; 22],
            &h("000102030405060708090a0b0c"),
            &h("f0f1f2f3f4f5f6f7f8f9"),
            &mut okm,
        );
        assert_eq!(
            hex(&okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        );
    }

    // RFC 4231, test cases 1 and 2.
    #[test]
    fn hmac_matches_rfc_4231() {
        assert_eq!(
            hex(&hmac(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    // RFC 9106, section 5.3.
    #[test]
    fn argon2id_matches_rfc_9106() {
        let mut tag = [0u8; 32];
        argon2id_full(
            &[1; 32],
            &[2; 16],
            &[3; 8],
            &[4; 12],
            KdfParams {
                m_kib: 32,
                t: 3,
                p: 4,
            },
            &mut tag,
        )
        .unwrap();
        assert_eq!(
            hex(&tag),
            "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
        );
    }
}
