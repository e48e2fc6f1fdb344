//! Seals that tie an undo to the device that made its call. An undo is a
//! call made as the person, so one read back from storage — a restored
//! backup, a synced record — must not be able to name any skill and any
//! arguments and have the person run them with one click. When this
//! device's call path makes a result, it seals the result's undo with a
//! key only this browser holds (an HMAC-SHA256 over the undo's label,
//! skill and arguments); an undo whose seal does not check out is never
//! offered, and never run. The undo itself still goes through the
//! permission layer like any call.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::skill::call::UndoAction;

const BLOCK: usize = 64;

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// `value` as JSON with every object's keys sorted and every number
/// written as the f64 it is, so the text does not depend on the order or
/// number form a trip through the browser's storage leaves.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) => out.push_str(&f.to_string()),
            None => out.push_str(&n.to_string()),
        },
        Value::Null | Value::Bool(_) | Value::String(_) => out.push_str(&value.to_string()),
    }
}

fn message(undo: &UndoAction) -> Vec<u8> {
    // Each part is JSON text, so no part can run into the next.
    format!(
        "hearth-undo\n{}\n{}\n{}",
        Value::String(undo.label.clone()),
        Value::String(undo.skill_id.to_string()),
        canonical_json(&undo.arguments)
    )
    .into_bytes()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl UndoAction {
    /// Seals this undo under `key` (replacing any seal it had).
    pub fn seal_with(&mut self, key: &[u8]) {
        self.seal = Some(hex(&hmac_sha256(key, &message(self))));
    }

    /// Whether this undo carries a seal made under `key` for exactly this
    /// label, skill and arguments.
    pub fn sealed_by(&self, key: &[u8]) -> bool {
        let Some(seal) = &self.seal else {
            return false;
        };
        let want = hex(&hmac_sha256(key, &message(self)));
        // Compared in time independent of where the first difference is.
        seal.len() == want.len()
            && seal
                .bytes()
                .zip(want.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::SkillId;
    use serde_json::json;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test cases 1, 2 and 6 (a key longer than the block).
        let cases: [(&[u8], &[u8], &str); 3] = [
            (
                &[0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe",
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
        ];
        for (key, message, want) in cases {
            assert_eq!(hex(&hmac_sha256(key, message)), want);
        }
    }

    fn undo(arguments: Value) -> UndoAction {
        UndoAction::new(
            "Undo: bring them back",
            SkillId::new("notes").unwrap(),
            arguments,
        )
    }

    #[test]
    fn only_the_key_that_sealed_an_undo_opens_it_and_nothing_in_it_can_change() {
        let key = [7u8; 32];
        let mut u = undo(json!({"action": "restore", "notes": [{"id": "a", "n": 5.0}]}));
        assert!(!u.sealed_by(&key), "an unsealed undo is never ours");
        u.seal_with(&key);
        assert!(u.sealed_by(&key));
        assert!(!u.sealed_by(&[8u8; 32]), "another device's key");

        let mut other_skill = u.clone();
        other_skill.skill_id = SkillId::new("run_javascript").unwrap();
        let mut other_args = u.clone();
        other_args.arguments = json!({"action": "delete", "ids": ["a", "b"]});
        let mut other_label = u.clone();
        other_label.label = "Undo: delete note".into();
        let mut forged = u.clone();
        forged.seal = Some("0".repeat(64));
        for changed in [other_skill, other_args, other_label, forged] {
            assert!(!changed.sealed_by(&key), "{changed:?}");
        }

        // A trip through the browser's storage may reorder keys and write
        // 5.0 as 5; the seal still holds.
        let mut back = u.clone();
        back.arguments = json!({"notes": [{"n": 5, "id": "a"}], "action": "restore"});
        assert!(back.sealed_by(&key));
    }
}
