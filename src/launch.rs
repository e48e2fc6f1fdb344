//! The key to `hearth serve`'s API. `hearth serve` prints a launch link,
//! `http://127.0.0.1:8080/#token=…`; the app takes the key from the
//! address once at start-up, keeps it in this origin's local storage (so
//! later visits without it still work, and a backup never holds it) and
//! takes it out of the address bar and the history. Every call to `/api/…`
//! and `/mcp/…` carries it; without it `hearth serve` answers nothing.
//!
//! The key lives in the fragment, which browsers never send to a server,
//! so it is in no request line, log or `Referer`.
//!
//! Any page can send the browser to the app with a fragment of its
//! choosing, so a key is taken only from the launch link's exact shape
//! (`hearth_core::api::launch_fragment`), and never replaces a stored key
//! unless `hearth serve` answers it: a working key is not swapped for one
//! that fails.

use hearth_core::api::{TOKEN_HEADER, launch_fragment};
use wasm_bindgen::JsCast;

/// Where the key is kept in local storage.
pub const STORAGE_KEY: &str = "hearth.server-key";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Takes the key out of the address, if it holds one: rewrites the address
/// without it (same page, no reload, no new history entry), and keeps it
/// when this browser has no key yet or `hearth serve` accepts it. Runs
/// before anything reads the address.
pub fn take_from_address() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let location = window.location();
    let Ok(hash) = location.hash() else { return };
    let fragment = launch_fragment(&hash);
    let body = hash.strip_prefix('#').unwrap_or(&hash);
    let rest_body = fragment.rest.strip_prefix('#').unwrap_or(&fragment.rest);
    if fragment.token.is_none() && rest_body == body {
        return;
    }
    let path = location.pathname().unwrap_or_else(|_| "/".into());
    let search = location.search().unwrap_or_default();
    let rest = if fragment.rest.is_empty() {
        "#/chat".to_string()
    } else {
        fragment.rest
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}{search}{rest}")),
        );
    }
    let Some(candidate) = fragment.token else {
        return;
    };
    match stored() {
        Some(current) if current == candidate => {}
        Some(_) => wasm_bindgen_futures::spawn_local(async move {
            // Replaced only by a key `hearth serve` answers.
            if answers(&candidate).await {
                keep(&candidate);
            } else {
                web_sys::console::warn_1(
                    &"a key in the address was not kept: Hearth's server does not accept it".into(),
                );
            }
        }),
        None => keep(&candidate),
    }
}

fn keep(key: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(STORAGE_KEY, key);
    }
}

/// Whether `hearth serve` on this origin answers `GET /api/session` with
/// `key`.
async fn answers(key: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_credentials(web_sys::RequestCredentials::SameOrigin);
    init.set_cache(web_sys::RequestCache::NoStore);
    let Ok(headers) = web_sys::Headers::new() else {
        return false;
    };
    if headers.set(TOKEN_HEADER, key).is_err() {
        return false;
    }
    init.set_headers(&headers);
    let Ok(answer) =
        wasm_bindgen_futures::JsFuture::from(window.fetch_with_str_and_init("/api/session", &init))
            .await
    else {
        return false;
    };
    answer.dyn_into::<web_sys::Response>().is_ok_and(|r| r.ok())
}

/// The stored key, if this browser was ever opened from a launch link.
pub fn stored() -> Option<String> {
    storage()?
        .get_item(STORAGE_KEY)
        .ok()
        .flatten()
        .filter(|k| !k.is_empty())
}
