//! Records as a backup holds them, decoded once, here, into the values
//! the restore plans, the preview shows and the app writes.
//!
//! IndexedDB records are mostly JSON already. What JSON cannot say is
//! written as a tagged object, an object with the key `$hearth`:
//!
//! ```text
//! bytes (ArrayBuffer, typed arrays)  {"$hearth": "bytes", "type": "Uint8Array", "data": base64}
//! a Blob                             {"$hearth": "blob", "mime": "text/plain", "data": base64}
//! ```
//!
//! In the record encoding this build writes ([`RECORD_ENCODING`]), a tag
//! is the only object with a `$hearth` key: a record's own key of that
//! name is written `$hearth$` (and `$hearth$` as `$hearth$$`, and so on),
//! so every other key means exactly what it says. The app's codec
//! (`src/codec.js`) turns these values into browser values and back
//! without deciding anything.
//!
//! Backups written before that (encoding 1) escaped an object with a
//! `$hearth` key as `{"$hearth": "escaped", "entries": [[key, value], …]}`,
//! which the browser then turned into a different object than the one a
//! check of the JSON saw. Such files are read here into the encoding
//! above, so what the restore checks, shows and writes is one value.

use serde_json::{Map, Value};

/// The record encoding this build writes (see the module's text).
pub const RECORD_ENCODING: u32 = 2;
/// The encoding of backups whose manifest does not say.
pub const LEGACY_ENCODING: u32 = 1;

/// The key that marks a tagged value.
pub const TAG: &str = "$hearth";

/// Byte containers a `bytes` tag may name, with their element size.
const BYTE_TYPES: [(&str, usize); 13] = [
    ("ArrayBuffer", 1),
    ("DataView", 1),
    ("Uint8Array", 1),
    ("Int8Array", 1),
    ("Uint8ClampedArray", 1),
    ("Int16Array", 2),
    ("Uint16Array", 2),
    ("Int32Array", 4),
    ("Uint32Array", 4),
    ("Float32Array", 4),
    ("Float64Array", 8),
    ("BigInt64Array", 8),
    ("BigUint64Array", 8),
];

/// Whether `key` is a record's own key that the encoding writes with one
/// `$` more: `$hearth`, `$hearth$`, `$hearth$$`…
fn is_tag_like(key: &str) -> bool {
    key.strip_prefix(TAG)
        .is_some_and(|rest| rest.bytes().all(|b| b == b'$'))
}

/// A record's own key as the encoding writes it.
pub fn escape_key(key: &str) -> String {
    if is_tag_like(key) {
        format!("{key}$")
    } else {
        key.to_string()
    }
}

/// Reads one record of a backup written in `encoding` into the current
/// encoding, checking every tag: what comes back is exactly what the app
/// will write. Fails, with what is wrong, on a tag it cannot read.
pub fn decode(record: Value, encoding: u32) -> Result<Value, String> {
    let legacy = encoding < RECORD_ENCODING;
    decode_value(record, legacy, 0)
}

/// Nesting past this is refused (serde_json's parser already stops at 128).
const MAX_DEPTH: usize = 200;

fn decode_value(value: Value, legacy: bool, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("a record is nested too deeply".into());
    }
    match value {
        Value::Array(items) => items
            .into_iter()
            .map(|v| decode_value(v, legacy, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) if map.contains_key(TAG) => decode_tagged(map, legacy, depth),
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                // A legacy file wrote a record's `$hearth$` as it was; in
                // this encoding that spelling means `$hearth`.
                let k = if legacy { escape_key(&k) } else { k };
                out.insert(k, decode_value(v, legacy, depth + 1)?);
            }
            Ok(Value::Object(out))
        }
        other @ (Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) => Ok(other),
    }
}

fn decode_tagged(map: Map<String, Value>, legacy: bool, depth: usize) -> Result<Value, String> {
    let kind = map.get(TAG).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "bytes" => {
            only(&map, &[TAG, "type", "data"], "a bytes value")?;
            let type_name = map.get("type").and_then(Value::as_str).unwrap_or_default();
            let Some((_, size)) = BYTE_TYPES.iter().find(|(t, _)| *t == type_name) else {
                return Err(format!("bytes of an unknown kind ({type_name:?})"));
            };
            let data = map.get("data").and_then(Value::as_str).unwrap_or_default();
            let len = base64_len(data).ok_or("bytes whose base64 is not canonical")?;
            if len % size != 0 {
                return Err(format!(
                    "{len} bytes cannot be a {type_name} (its items are {size} bytes)"
                ));
            }
            Ok(Value::Object(map))
        }
        "blob" => {
            only(&map, &[TAG, "mime", "data"], "a file")?;
            if !map.get("mime").is_some_and(Value::is_string) {
                return Err("a file without a type".into());
            }
            match map.get("data").and_then(Value::as_str) {
                Some(data) if base64_len(data).is_some() => Ok(Value::Object(map)),
                Some(_) => Err("a file whose base64 is not canonical".into()),
                None => Err("a file whose contents are missing".into()),
            }
        }
        "escaped" if legacy => {
            only(&map, &[TAG, "entries"], "an escaped object")?;
            let Some(Value::Array(entries)) = map.get("entries") else {
                return Err("an escaped object without its entries".into());
            };
            let mut out = Map::with_capacity(entries.len());
            for entry in entries {
                let [Value::String(k), v] = entry.as_array().map(Vec::as_slice).unwrap_or(&[])
                else {
                    return Err("an escaped object's entry is not a [key, value] pair".into());
                };
                // Object.fromEntries kept the last of two equal keys; a
                // check that saw the first would see another record.
                let key = escape_key(k);
                if out.contains_key(&key) {
                    return Err(format!("an escaped object names the key {k:?} twice"));
                }
                out.insert(key, decode_value(v.clone(), legacy, depth + 1)?);
            }
            Ok(Value::Object(out))
        }
        other => Err(format!(
            "a value tagged {other:?}, which Hearth does not know"
        )),
    }
}

/// Fails unless `map`'s keys are all in `allowed`.
fn only(map: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{what} with an extra field {k:?}")),
        None => Ok(()),
    }
}

/// The length of the bytes `text` holds, when it is canonical padded
/// base64 (what the browser's `btoa` writes): the standard alphabet, `=`
/// only at the end, no stray bits. Anything else could decode to other
/// bytes than a reader of the text expects.
pub fn base64_len(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let pad = b.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let value = |c: u8| -> Option<u8> {
        match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let body = &b[..b.len() - pad];
    let mut last = 0;
    for &c in body {
        last = value(c)?;
    }
    // The bits the padding leaves over must be zero.
    let spare_mask = match pad {
        1 => 0b11,
        2 => 0b1111,
        _ => 0,
    };
    if !body.is_empty() && last & spare_mask != 0 {
        return None;
    }
    Some(b.len() / 4 * 3 - pad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn legacy_escaped_objects_become_the_record_the_browser_wrote() {
        // What an encoding-1 file holds, and what the browser made of it
        // (or why it is refused).
        let cases: Vec<(Value, Result<Value, &str>)> = vec![
            // A record that shows one key and is written under another.
            (
                json!({"key": "ui.theme", "$hearth": "escaped",
                       "entries": [["key", "permissions"], ["value", {"mode": "auto"}]]}),
                Err("an escaped object with an extra field \"key\""),
            ),
            (
                json!({"$hearth": "escaped",
                       "entries": [["key", "permissions"], ["value", {"mode": "auto"}]]}),
                Ok(json!({"key": "permissions", "value": {"mode": "auto"}})),
            ),
            (
                json!({"key": "provider", "value": {"$hearth": "escaped",
                       "entries": [["base_url", "https://evil.example"], ["$hearth", "x"]]}}),
                Ok(
                    json!({"key": "provider", "value": {"base_url": "https://evil.example", "$hearth$": "x"}}),
                ),
            ),
            (
                json!({"$hearth": "escaped", "entries": [["key", "a"], ["key", "b"]]}),
                Err("an escaped object names the key \"key\" twice"),
            ),
            (
                json!({"$hearth": "escaped", "entries": [["key"]]}),
                Err("an escaped object's entry is not a [key, value] pair"),
            ),
            (
                json!({"id": "n", "$hearth$": 1}),
                Ok(json!({"id": "n", "$hearth$$": 1})),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                decode(input.clone(), LEGACY_ENCODING),
                want.map_err(str::to_string),
                "{input}"
            );
        }
    }

    #[test]
    fn the_current_encoding_has_no_escaped_objects_and_checks_every_tag() {
        let refused = [
            json!({"$hearth": "escaped", "entries": []}),
            json!({"$hearth": "bytes", "type": "Uint8Array", "data": "QR=="}),
            json!({"$hearth": "bytes", "type": "Uint8Array", "data": "QQ"}),
            json!({"$hearth": "bytes", "type": "Uint16Array", "data": "QUJD"}),
            json!({"$hearth": "bytes", "type": "Function", "data": ""}),
            json!({"$hearth": "bytes", "type": "Uint8Array", "data": "", "key": "x"}),
            json!({"$hearth": "blob", "mime": "text/plain", "size": 4}),
            json!({"$hearth": "nothing"}),
            json!({"a": [{"$hearth": 5}]}),
        ];
        for r in refused {
            assert!(decode(r.clone(), RECORD_ENCODING).is_err(), "{r}");
        }
        let kept = json!({"id": "f", "bytes": {"$hearth": "bytes", "type": "Uint8Array", "data": "QUJD"},
                          "file": {"$hearth": "blob", "mime": "", "data": ""}, "$hearth$": "own key"});
        assert_eq!(decode(kept.clone(), RECORD_ENCODING), Ok(kept));
    }

    #[test]
    fn base64_is_read_only_in_its_canonical_form() {
        for (text, len) in [
            ("", Some(0)),
            ("QQ==", Some(1)),
            ("QUI=", Some(2)),
            ("QUJD", Some(3)),
        ] {
            assert_eq!(base64_len(text), len, "{text}");
        }
        for text in [
            "QR==", "QUJ=", "Q===", "QQ", "QU JD", "QUJD\n", "-_-_", "=QUJ",
        ] {
            assert_eq!(base64_len(text), None, "{text}");
        }
    }

    #[test]
    fn own_keys_like_the_tag_get_one_dollar_more() {
        for (key, written) in [
            ("$hearth", "$hearth$"),
            ("$hearth$", "$hearth$$"),
            ("$hearthx", "$hearthx"),
            ("hearth", "hearth"),
        ] {
            assert_eq!(escape_key(key), written);
        }
    }
}
