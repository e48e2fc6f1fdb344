//! IndexedDB records as JSON and back, for backups and data migrations:
//! bytes and Blobs become tagged JSON objects, browser-only values (file
//! access handles) are left out and counted. The walking happens in
//! `codec.js`, where `JSON.stringify`/`parse` do it natively and fast.

use serde_json::Value;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/codec.js")]
extern "C" {
    #[wasm_bindgen(js_name = encodeRecords, catch)]
    fn encode_records_js(records: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = encodeRecordsWithBlobs)]
    fn encode_records_with_blobs_js(records: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = decodeRecords, catch)]
    fn decode_records_js(json: &str) -> Result<js_sys::Array, JsValue>;
    #[wasm_bindgen(js_name = browserOnly)]
    pub fn browser_only(record: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = attach)]
    pub fn attach(record: &JsValue, extra: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = keyOf)]
    pub fn key_of(record: &JsValue, key_path: &str) -> JsValue;
}

/// Records as JSON text, with how many browser-only values were left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub json: String,
    pub left_out: u64,
}

fn message(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|err| String::from(err.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

fn encoded(v: &JsValue) -> Result<Encoded, String> {
    let json = js_sys::Reflect::get(v, &"json".into())
        .ok()
        .and_then(|j| j.as_string())
        .ok_or("the records could not be turned into JSON")?;
    let left_out = js_sys::Reflect::get(v, &"leftOut".into())
        .ok()
        .and_then(|n| n.as_f64())
        .unwrap_or(0.0) as u64;
    Ok(Encoded { json, left_out })
}

/// Encodes an array of records synchronously (safe inside a transaction);
/// Blobs keep only their type and size.
pub fn encode(records: &JsValue) -> Result<Encoded, String> {
    encoded(&encode_records_js(records).map_err(|e| message(&e))?)
}

/// Encodes an array of records with every Blob's bytes.
pub async fn encode_with_blobs(records: &JsValue) -> Result<Encoded, String> {
    let v = wasm_bindgen_futures::JsFuture::from(encode_records_with_blobs_js(records))
        .await
        .map_err(|e| message(&e))?;
    encoded(&v)
}

/// Encodes records into JSON values.
pub fn to_values(records: &JsValue) -> Result<(Vec<Value>, u64), String> {
    let e = encode(records)?;
    let values = serde_json::from_str(&e.json).map_err(|e| e.to_string())?;
    Ok((values, e.left_out))
}

/// Decodes JSON values back into records.
pub fn from_values(values: &[Value]) -> Result<js_sys::Array, String> {
    let json = serde_json::to_string(values).map_err(|e| e.to_string())?;
    decode_records_js(&json).map_err(|e| message(&e))
}
