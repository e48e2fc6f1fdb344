//! Whether the browser is online: `navigator.onLine`, kept current by the
//! window's `online` and `offline` events, as a signal the shell and the
//! Skills panel read. Network-tier skills ask [`is_online`] at call time.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// What the browser says right now. A browser that cannot tell counts as
/// online, so a skill then tries and reports what actually happened.
pub fn is_online() -> bool {
    web_sys::window()
        .map(|w| w.navigator().on_line())
        .unwrap_or(true)
}

/// The online status as a signal, provided through context by the shell.
#[derive(Clone, Copy)]
pub struct Online(pub ReadSignal<bool>);

/// Starts following the online status and provides it to the components
/// below. Call once, in the shell.
pub fn provide_online() -> Online {
    let (online, set_online) = signal(is_online());
    if let Some(w) = web_sys::window() {
        for event in ["online", "offline"] {
            let update = Closure::<dyn FnMut()>::new(move || set_online.set(is_online()));
            let _ = w.add_event_listener_with_callback(event, update.as_ref().unchecked_ref());
            // The shell lives as long as the page, and so do its listeners.
            update.forget();
        }
    }
    let status = Online(online);
    provide_context(status);
    status
}

/// The online status; online when no shell provided one (e.g. a component
/// mounted alone in a test).
pub fn use_online() -> Signal<bool> {
    match use_context::<Online>() {
        Some(Online(s)) => s.into(),
        None => Signal::derive(|| true),
    }
}
