//! The key to `hearth serve`'s API. `hearth serve` prints a launch link,
//! `http://127.0.0.1:8080/#token=…`; the app takes the key from the
//! address once at start-up, keeps it in this origin's local storage (so
//! later visits without it still work, and a backup never holds it) and
//! takes it out of the address bar and the history. Every call to `/api/…`
//! and `/mcp/…` carries it; without it `hearth serve` answers nothing.
//!
//! The key lives in the fragment, which browsers never send to a server,
//! so it is in no request line, log or `Referer`.

use hearth_core::web::launch_fragment;

/// Where the key is kept in local storage.
pub const STORAGE_KEY: &str = "hearth.server-key";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Takes the key out of the address, if it holds one: stores it and
/// rewrites the address without it (same page, no reload, no new history
/// entry). Runs before anything reads the address.
pub fn take_from_address() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let location = window.location();
    let Ok(hash) = location.hash() else { return };
    let fragment = launch_fragment(&hash);
    let Some(token) = fragment.token else { return };
    if let Some(s) = storage() {
        let _ = s.set_item(STORAGE_KEY, &token);
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
}

/// The stored key, if this browser was ever opened from a launch link.
pub fn stored() -> Option<String> {
    storage()?
        .get_item(STORAGE_KEY)
        .ok()
        .flatten()
        .filter(|k| !k.is_empty())
}
