//! The recovery key: 256 random bits a person writes down once, at setup,
//! and types again on a device that has lost the passphrase.
//!
//! It is shown in Crockford's base32 (no I, L, O or U, so nothing reads as
//! two letters), in groups of five behind a `HRK1` tag, with two check
//! bytes: a mistyped key is then reported as a typo, not as a key that does
//! not open the vault.

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::primitives::{KEY_LEN, hmac};
use crate::{Entropy, SyncError};

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const TAG: &str = "HRK1";
const CHECK_LEN: usize = 2;
/// Characters for 32 secret and 2 check bytes: 272 bits in 5-bit digits.
const DIGITS: usize = ((KEY_LEN + CHECK_LEN) * 8).div_ceil(5);

#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct RecoveryKey([u8; KEY_LEN]);

impl std::fmt::Debug for RecoveryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecoveryKey(…)")
    }
}

impl RecoveryKey {
    pub fn generate(entropy: &mut dyn Entropy) -> Self {
        let mut k = [0u8; KEY_LEN];
        entropy.fill(&mut k);
        RecoveryKey(k)
    }

    pub(crate) fn secret(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    fn check(secret: &[u8; KEY_LEN]) -> [u8; CHECK_LEN] {
        let mac = hmac(b"hearth-sync recovery check", secret);
        [mac[0], mac[1]]
    }

    /// The key as a person copies it: `HRK1-XXXXX-…`, eleven groups.
    pub fn display(&self) -> String {
        let mut bytes = self.0.to_vec();
        bytes.extend(Self::check(&self.0));
        let digits = to_base32(&bytes);
        bytes.zeroize();
        let mut out = String::from(TAG);
        for group in digits.as_bytes().chunks(5) {
            out.push('-');
            out.push_str(std::str::from_utf8(group).expect("base32 digits are ASCII"));
        }
        out
    }

    /// Reads a key as typed: any case, spaces or dashes anywhere, the tag
    /// optional, and O, I and L read as 0, 1 and 1.
    pub fn parse(typed: &str) -> Result<Self, SyncError> {
        let mut clean: String = typed
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if clean.starts_with(TAG) && clean.len() == TAG.len() + DIGITS {
            clean.drain(..TAG.len());
        }
        let mut bytes = from_base32(&clean).ok_or(SyncError::RecoveryKeyTypo)?;
        let secret: [u8; KEY_LEN] = bytes[..KEY_LEN].try_into().expect("length checked");
        let ok = bytes[KEY_LEN..] == Self::check(&secret);
        bytes.zeroize();
        clean.zeroize();
        if ok {
            Ok(RecoveryKey(secret))
        } else {
            Err(SyncError::RecoveryKeyTypo)
        }
    }
}

fn to_base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(DIGITS);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The 34 bytes behind exactly `DIGITS` digits, or `None` for a wrong
/// length, a character outside the alphabet or padding bits that are set.
fn from_base32(digits: &str) -> Option<Vec<u8>> {
    if digits.len() != DIGITS {
        return None;
    }
    let mut out = Vec::with_capacity(KEY_LEN + CHECK_LEN);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in digits.bytes() {
        let c = match c {
            b'O' => b'0',
            b'I' | b'L' => b'1',
            c => c,
        };
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = ((acc << 5) | v) & 0xffff;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    (acc & ((1 << bits) - 1) == 0 && out.len() == KEY_LEN + CHECK_LEN).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Seeded;

    #[test]
    fn a_displayed_key_reads_back_in_any_case_and_spacing() {
        let key = RecoveryKey::generate(&mut Seeded::new(7));
        let shown = key.display();
        assert!(shown.starts_with("HRK1-"), "{shown}");
        assert_eq!(
            shown.split('-').count(),
            12,
            "the tag and eleven groups: {shown}"
        );
        assert_eq!(RecoveryKey::parse(&shown).unwrap(), key);
        assert_eq!(RecoveryKey::parse(&shown.to_lowercase()).unwrap(), key);
        let spaced = shown.trim_start_matches("HRK1-").replace('-', " ");
        assert_eq!(RecoveryKey::parse(&format!("  {spaced} ")).unwrap(), key);
    }

    #[test]
    fn look_alike_letters_read_as_the_digits_they_resemble() {
        let key = RecoveryKey::generate(&mut Seeded::new(8));
        let shown = key.display();
        let typed = shown
            .replace("HRK1", "tag")
            .replace('0', "O")
            .replace('1', "l");
        let typed = typed.trim_start_matches("tag");
        assert_eq!(RecoveryKey::parse(typed).unwrap(), key);
    }

    #[test]
    fn any_one_character_changed_is_a_typo() {
        let key = RecoveryKey::generate(&mut Seeded::new(9));
        let shown = key.display();
        let digits: Vec<usize> = shown
            .char_indices()
            .filter(|(i, c)| *i > 4 && *c != '-')
            .map(|(i, _)| i)
            .collect();
        let mut caught = 0;
        for &i in &digits {
            let mut typo = shown.clone().into_bytes();
            typo[i] = if typo[i] == b'7' { b'8' } else { b'7' };
            let typo = String::from_utf8(typo).unwrap();
            match RecoveryKey::parse(&typo) {
                Err(SyncError::RecoveryKeyTypo) => caught += 1,
                Ok(k) => assert_ne!(k, key),
                Err(e) => panic!("{e}"),
            }
        }
        // Two check bytes miss one typo in 65,536; none of these 55 slips.
        assert_eq!(caught, digits.len());
    }

    #[test]
    fn short_long_and_foreign_input_is_a_typo() {
        let shown = RecoveryKey::generate(&mut Seeded::new(10)).display();
        let mut with_u = shown.clone().into_bytes();
        with_u[5] = b'U';
        let with_u = String::from_utf8(with_u).unwrap();
        let cut = &shown[..shown.len() - 1];
        let long = format!("{shown}7");
        for bad in ["", "HRK1", cut, &long, &with_u, "HRK1-ÄÄÄÄÄ"] {
            assert_eq!(
                RecoveryKey::parse(bad),
                Err(SyncError::RecoveryKeyTypo),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let key = RecoveryKey::generate(&mut Seeded::new(11));
        assert_eq!(format!("{key:?}"), "RecoveryKey(…)");
    }
}
