//! Whether Hearth can reach the network, as a signal. `navigator.onLine`
//! alone is not enough (it says "online" whenever a network interface is
//! up, even when Hearth's own server, which carries every network-tier
//! call, is gone), so the app also asks the server (`/healthz`, which the
//! service worker never answers from its cache). Network-tier skills ask
//! [`check`] before they try, so offline they say so; views read
//! [`online`] to show it.

use std::cell::OnceCell;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::skill::invoke::{CallContext, Guard};
use hearth_core::{Tier, ToolResult};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::JsFuture;

/// How long the server may take to answer before Hearth counts as offline.
const PROBE_TIMEOUT_MS: i32 = 3_000;
/// While offline, how often Hearth looks again.
const RECHECK_MS: u32 = 15_000;

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
                    let update = Closure::<dyn FnMut()>::new(move || {
                        wasm_bindgen_futures::spawn_local(async {
                            check().await;
                        })
                    });
                    let _ =
                        w.add_event_listener_with_callback(event, update.as_ref().unchecked_ref());
                    update.forget();
                }
                // While offline, look again now and then, so the badge
                // goes away by itself when the server is back.
                gloo_timers::callback::Interval::new(RECHECK_MS, move || {
                    if !signal.get_untracked() {
                        wasm_bindgen_futures::spawn_local(async {
                            check().await;
                        });
                    }
                })
                .forget();
                wasm_bindgen_futures::spawn_local(async {
                    check().await;
                });
            }
            signal
        })
    })
}

/// Whether Hearth's server answers `/healthz` in time; any answer counts.
async fn server_answers() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let Ok(abort) = web_sys::AbortController::new() else {
        return false;
    };
    let init = web_sys::RequestInit::new();
    init.set_cache(web_sys::RequestCache::NoStore);
    init.set_signal(Some(&abort.signal()));
    let timer = gloo_timers::callback::Timeout::new(PROBE_TIMEOUT_MS as u32, move || abort.abort());
    let answered = JsFuture::from(window.fetch_with_str_and_init("/healthz", &init))
        .await
        .is_ok();
    drop(timer);
    answered
}

/// The browser's online state, tracked.
pub fn online() -> Signal<bool> {
    state().into()
}

/// Looks now: the browser's own flag first, then Hearth's server. Updates
/// the signal and returns the answer.
pub async fn check() -> bool {
    let signal = state();
    let now = navigator_online() && server_answers().await;
    if signal.get_untracked() != now {
        signal.set(now);
    }
    now
}

/// What a network-tier skill answers while the browser is offline: the
/// same words the API client uses for a call that finds the device offline.
pub fn offline_message(skill_name: &str) -> String {
    hearth_core::builtin::web::WebFailure::Offline.message(skill_name)
}

/// Ends a network-tier call while Hearth is offline, before the permission
/// layer would ask the person about something that cannot work. Nothing
/// runs; the Activity log records the failed call like any other. It is
/// one of two offline checks, with one wording: this one covers every
/// network-tier skill (MCP servers reached directly too) and comes before
/// the approval prompt; the API client's (`ProxyClient`) covers what
/// reaches `hearth serve` outside the call path.
pub struct OfflineHook;

impl Guard for OfflineHook {
    fn check<'a>(&'a self, cx: &'a CallContext) -> LocalBoxFuture<'a, Option<ToolResult>> {
        async move {
            let skill = cx.skill.as_ref()?;
            if skill.tier != Tier::Network || check().await {
                return None;
            }
            Some(ToolResult::failed(&cx.call, offline_message(&skill.name)))
        }
        .boxed_local()
    }
}

/// The last known online state, untracked.
pub fn is_online() -> bool {
    state().get_untracked()
}

/// Starts following the online status early, so the first check runs
/// while the shell mounts. Call once, in the shell.
pub fn provide_online() {
    let _ = state();
}
