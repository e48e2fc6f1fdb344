//! The shell: navigation between the app's places, routed by the URL hash
//! so a reload keeps you where you were.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::icons::Icon;
use crate::online::provide_online;
use crate::places::{LazyPlace, Place};
use crate::runtime::Runtime;
use crate::shared::approval::ApprovalDialog;
use crate::shared::offline::OfflineIndicator;
use crate::views::chat::ChatView;

/// Whether a key press lands in something that takes text.
fn typing_in(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        .is_some_and(|el| {
            el.is_content_editable()
                || matches!(
                    el.tag_name().to_ascii_lowercase().as_str(),
                    "input" | "textarea" | "select"
                )
        })
}

/// Opens Chat when another page is shown, then focuses its composer.
fn go_to_composer(place: Place) {
    if place != Place::Chat
        && let Some(w) = web_sys::window()
    {
        let _ = w.location().set_hash("#/chat");
    }
    request_animation_frame(crate::views::chat::focus_composer);
}

fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

#[component]
pub fn App(runtime: Runtime) -> impl IntoView {
    provide_context(runtime.clone());
    provide_context(crate::enhance::Enhancer::new());
    provide_online();
    // The assistant outlives the Chat view, so replies keep
    // streaming in other places.
    let assistant = crate::assistant::Assistant::new(runtime.clone());
    // Agents connected to Hearth reach this tab once it has started.
    crate::agents::start(runtime.clone());
    // Sync's rounds start where it is on; elsewhere its code never loads.
    provide_context(crate::sync::Sync::start(runtime.clone(), assistant.clone()));
    // MCP servers connect in the background from the start.
    let mcp = crate::mcp::Mcp::start(runtime);
    provide_context(assistant);
    provide_context(mcp);
    let place = RwSignal::new(Place::from_hash(&current_hash()));

    // Follow back/forward and hand-edited hashes.
    let on_hash = Closure::<dyn FnMut()>::new(move || place.set(Place::from_hash(&current_hash())));
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("hashchange", on_hash.as_ref().unchecked_ref());
    }
    on_hash.forget();

    // `/` from anywhere, outside a text field, goes to the composer.
    let slash = window_event_listener(leptos::ev::keydown, move |ev| {
        let modifier = ev.ctrl_key() || ev.meta_key() || ev.alt_key();
        if ev.key() != "/" || modifier || ev.default_prevented() || typing_in(&ev) {
            return;
        }
        ev.prevent_default();
        go_to_composer(place.get_untracked());
    });
    on_cleanup(move || slash.remove());

    // Each place opens at its top, not where the last one was scrolled to.
    let content = NodeRef::<leptos::html::Main>::new();
    Effect::new(move |before: Option<Place>| {
        let now = place.get();
        if before.is_some_and(|b| b != now)
            && let Some(el) = content.get_untracked()
        {
            el.set_scroll_top(0.0);
        }
        now
    });

    view! {
        <div class="shell">
            // The first Tab stop: straight to the composer, from any page.
            <a
                class="skip-link"
                href="#/chat"
                on:click=move |ev| {
                    ev.prevent_default();
                    go_to_composer(place.get_untracked());
                }
            >"Skip to the composer"</a>
            <nav class="sidebar" aria-label="Main">
                <div class="brand">
                    <span class="brand-mark"><Icon name="flame"/></span>
                    <span class="brand-name">"Hearth"</span>
                </div>
                <ul>
                    {Place::ALL
                        .into_iter()
                        .map(|p| {
                            view! {
                                <li>
                                    <a
                                        href=format!("#/{}", p.slug())
                                        class:active=move || place.get() == p
                                        aria-current=move || (place.get() == p).then_some("page")
                                        data-place=p.slug()
                                        title=p.label()
                                    >
                                        <span class="nav-icon"><Icon name=p.icon()/></span>
                                        <span class="nav-label">{p.label()}</span>
                                    </a>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
                <OfflineIndicator/>
                <crate::sync::SyncIndicator/>
            </nav>
            <main class="content" node_ref=content>
                <crate::shared::offline::UpdateBanner/>
                <crate::shared::set_aside::SetAsideNotice/>
                // Chat is the first screen; every other place loads its
                // code the first time it opens.
                {move || match place.get() {
                    Place::Chat => view! { <ChatView/> }.into_any(),
                    other => view! { <LazyPlace place=other/> }.into_any(),
                }}
            </main>
            <ApprovalDialog/>
        </div>
    }
}

/// Shown when the app cannot start, e.g. IndexedDB is unavailable.
#[component]
pub fn StartupError(message: String) -> impl IntoView {
    view! {
        <div class="startup-error" role="alert">
            <h1>"Hearth could not start"</h1>
            <p>{message}</p>
            <p>"Hearth keeps everything in this browser's storage. If you are in a private window, or storage is turned off for this site, open Hearth in a normal window."</p>
        </div>
    }
}
