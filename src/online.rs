//! Whether the browser is online, as a signal: `navigator.onLine`, kept
//! current by the window's `online` and `offline` events. Network-tier
//! skills ask [`is_online`] before they try, so offline they say so; views
//! read [`online`] to show it.

use std::cell::OnceCell;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::invoke::{CallContext, Hook};
use hearth_core::{Tier, ToolResult};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

thread_local! {
    static ONLINE: OnceCell<RwSignal<bool>> = const { OnceCell::new() };
}

fn navigator_online() -> bool {
    web_sys::window()
        .map(|w| w.navigator().on_line())
        .unwrap_or(true)
}

fn state() -> RwSignal<bool> {
    ONLINE.with(|cell| {
        *cell.get_or_init(|| {
            let signal = RwSignal::new(navigator_online());
            if let Some(w) = web_sys::window() {
                for event in ["online", "offline"] {
                    let update =
                        Closure::<dyn FnMut()>::new(move || signal.set(navigator_online()));
                    let _ =
                        w.add_event_listener_with_callback(event, update.as_ref().unchecked_ref());
                    update.forget();
                }
            }
            signal
        })
    })
}

/// The browser's online state, tracked.
pub fn online() -> Signal<bool> {
    state().into()
}

/// The browser's online state now, untracked.
pub fn is_online() -> bool {
    state().get_untracked()
}

/// What a network-tier skill answers while the browser is offline.
pub fn offline_message(skill_name: &str) -> String {
    format!(
        "You are offline, so {skill_name} cannot reach the network. It will work again once this device is back online; skills that run on this device still work."
    )
}

/// Ends a network-tier call while the browser is offline, before the
/// permission layer would ask the person about something that cannot work.
/// Nothing runs; the Activity log records the failed call like any other.
pub struct OfflineHook;

impl Hook for OfflineHook {
    fn before<'a>(&'a self, cx: &'a mut CallContext) -> LocalBoxFuture<'a, Option<ToolResult>> {
        async move {
            let skill = cx.skill.as_ref()?;
            (skill.tier == Tier::Network && !is_online())
                .then(|| ToolResult::failed(&cx.call, offline_message(&skill.name)))
        }
        .boxed_local()
    }
}
