//! Browser facts core asks for through traits: time, ids, downloads, this
//! browser's own key; and the storage the browser grants the app.

use hearth_core::builtin::calculator::Clock;
use hearth_core::skill::invoke::TimeSource;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// `Date.now()` for wall time, `performance.now()` for durations.
#[derive(Clone, Copy, Debug, Default)]
pub struct BrowserTime;

impl TimeSource for BrowserTime {
    fn now_unix_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn monotonic_ms(&self) -> f64 {
        web_sys::window()
            .and_then(|w| w.performance())
            .map(|p| p.now())
            .unwrap_or_else(js_sys::Date::now)
    }
}

/// The local clock for the calculator's `today`.
pub fn local_clock() -> Clock {
    let now = js_sys::Date::new_0();
    Clock {
        unix_ms: now.get_time(),
        // getTimezoneOffset is minutes *west* of UTC.
        utc_offset_minutes: -(now.get_timezone_offset() as i32),
    }
}

/// A random UUID from the browser's CSPRNG.
pub fn new_id() -> String {
    web_sys::window()
        .and_then(|w| w.crypto().ok())
        .map(|c| c.random_uuid())
        .unwrap_or_else(|| format!("id-{}-{}", js_sys::Date::now(), js_sys::Math::random()))
}

/// Where this browser's own key is kept: local storage, which no backup,
/// export or sync carries.
const DEVICE_KEY: &str = "hearth.device-key";

thread_local! {
    static KEY: std::cell::OnceCell<std::rc::Rc<[u8]>> = const { std::cell::OnceCell::new() };
}

/// 32 random bytes only this browser holds, made on first use: what seals
/// the undos of calls made here (`hearth_core::skill::seal`). Where local storage
/// is unavailable, a key for this page's life.
pub fn device_key() -> std::rc::Rc<[u8]> {
    KEY.with(|cell| {
        cell.get_or_init(|| {
            let storage = web_sys::window().and_then(|w| w.local_storage().ok().flatten());
            let stored = storage
                .as_ref()
                .and_then(|s| s.get_item(DEVICE_KEY).ok().flatten())
                .and_then(|hex| decode_hex(&hex))
                .filter(|k| k.len() == 32);
            if let Some(k) = stored {
                return k.into();
            }
            let mut fresh = [0u8; 32];
            let filled = web_sys::window()
                .and_then(|w| w.crypto().ok())
                .is_some_and(|c| c.get_random_values_with_u8_array(&mut fresh).is_ok());
            if !filled {
                // No CSPRNG: a key nobody can know, for this page only.
                let id = new_id();
                fresh.copy_from_slice(&sha256_of(id.as_bytes()));
                return fresh.to_vec().into();
            }
            if let Some(s) = storage {
                let hex: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
                let _ = s.set_item(DEVICE_KEY, &hex);
            }
            fresh.to_vec().into()
        })
        .clone()
    })
}

fn sha256_of(bytes: &[u8]) -> [u8; 32] {
    hearth_core::skill::seal::hmac_sha256(b"hearth-device-key", bytes)
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The type a download is offered as: markup a browser would render (and
/// run) if the file were opened from its URL goes as plain bytes.
fn download_type(mime: &str) -> &str {
    let base = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match base.as_str() {
        "text/html"
        | "application/xhtml+xml"
        | "image/svg+xml"
        | "text/xml"
        | "application/xml" => "application/octet-stream",
        _ => mime,
    }
}

/// A file name as offered: no folder separators.
fn download_name(name: &str) -> String {
    name.replace(['/', '\\'], "_")
}

/// Offers `text` to the person as a file download.
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), String> {
    download_bytes(filename, mime, text.as_bytes())
}

/// Offers `bytes` to the person as a file download. Every download of the
/// app goes through here or [`download_text`].
pub fn download_bytes(filename: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let blob =
        blob(bytes, download_type(mime)).map_err(|e| format!("cannot build the file: {e:?}"))?;
    download_blob(filename, &blob)
}

/// `bytes` as a Blob of type `mime`.
pub fn blob(bytes: &[u8], mime: &str) -> Result<web_sys::Blob, wasm_bindgen::JsValue> {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
}

fn download_blob(filename: &str, blob: &web_sys::Blob) -> Result<(), String> {
    let url = web_sys::Url::create_object_url_with_blob(blob)
        .map_err(|e| format!("cannot offer the file: {e:?}"))?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|e| format!("{e:?}"))?
        .unchecked_into();
    a.set_href(&url);
    a.set_download(&download_name(filename));
    a.click();
    // Revoked later: some browsers read the URL after click() returns.
    gloo_timers::callback::Timeout::new(60_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
    Ok(())
}

/// A local time of day such as "14:05".
pub fn format_time(unix_ms: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms));
    format!("{:02}:{:02}", d.get_hours(), d.get_minutes())
}

/// Storage used and available, as the browser reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub usage: f64,
    pub quota: f64,
}

pub async fn storage_estimate() -> Result<Estimate, String> {
    let storage = web_sys::window().ok_or("no window")?.navigator().storage();
    let promise = storage.estimate().map_err(|e| format!("{e:?}"))?;
    let value = JsFuture::from(promise)
        .await
        .map_err(|e| format!("{e:?}"))?;
    let get = |key: &str| {
        js_sys::Reflect::get(&value, &key.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    Ok(Estimate {
        usage: get("usage"),
        quota: get("quota"),
    })
}

/// Whether the browser promised to keep Hearth's data.
pub async fn persisted() -> Option<bool> {
    let storage = web_sys::window()?.navigator().storage();
    JsFuture::from(storage.persisted().ok()?)
        .await
        .ok()?
        .as_bool()
}

/// Asks the browser to keep Hearth's data; the answer.
pub async fn request_persist() -> Option<bool> {
    let storage = web_sys::window()?.navigator().storage();
    JsFuture::from(storage.persist().ok()?)
        .await
        .ok()?
        .as_bool()
}
