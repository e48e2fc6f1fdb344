//! Hearth's browser app: a Leptos shell over hearth-core, with the browser
//! adapters (IndexedDB, time, downloads) that core's traits ask for.

pub mod activity;
pub mod agent_skills;
pub mod agents;
pub mod app;
pub mod assistant;
pub mod backup;
pub mod codec;
pub mod enhance;
pub mod fetch;
pub mod files;
pub mod icons;
pub mod launch;
pub mod mcp;
pub mod mcp_skills;
pub mod online;
pub mod places;
pub mod platform;
pub mod pwa;
pub mod runtime;
pub mod sandbox;
pub mod shared;
pub mod skill_import;
pub mod split;
pub mod storage;
pub mod sync;
pub mod tabmodel;
pub mod theme;
pub mod version;
pub mod views;
pub mod web;

use leptos::prelude::*;

use crate::app::{App, StartupError};
use crate::runtime::Runtime;
use crate::storage::Db;

/// How long after the first render a first visit starts keeping the
/// chunks in memory, so the first interactions go first.
const WARM_AFTER_MS: u32 = 500;

/// Whether this page runs inside a frame of another page.
fn framed() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    match window.top() {
        Ok(Some(top)) => !wasm_bindgen::JsValue::from(top).eq(&wasm_bindgen::JsValue::from(window)),
        // A top that cannot be read is another page's.
        Ok(None) | Err(_) => true,
    }
}

/// Shows, in place of the app, that it does not run in a frame, with a
/// link that opens it in a tab of its own.
fn refuse_frame() {
    let href = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_else(|| "/".into());
    leptos::mount::mount_to_body(move || {
        view! {
            <main class="framed" data-framed="refused">
                <p>"Hearth does not run inside another page."</p>
                <p><a href=href target="_blank" rel="noopener noreferrer">"Open Hearth in its own tab"</a></p>
            </main>
        }
    });
}

/// Opens storage, assembles the services and mounts the app.
pub fn start() {
    console_error_panic_hook::set_once();
    // Framed by another page, Hearth does nothing: the page could lay its
    // own content over Hearth's buttons. `hearth serve` and the service
    // worker forbid framing by header; this holds on a first visit to a
    // host that sends none.
    if framed() {
        refuse_frame();
        return;
    }
    // The launch link's key leaves the address before anything reads it.
    launch::take_from_address();
    // Leptos sets up its task executor when it mounts; until then, spawn
    // on wasm-bindgen-futures directly.
    mark("hearth-start");
    wasm_bindgen_futures::spawn_local(async {
        let runtime = match Db::open().await {
            Ok(db) => {
                mark("hearth-db-open");
                Runtime::start(db).await
            }
            Err(e) => Err(e.to_string()),
        };
        mark("hearth-runtime");
        // The service worker registers once the app is up (its install
        // fetches the whole shell, which should not compete with start-up).
        let pwa = pwa::start();
        match runtime {
            Ok(rt) => {
                rt.db()
                    .on_newer_version(move || pwa.update.set(pwa::Update::ElsewhereActive));
                leptos::mount::mount_to_body(move || {
                    provide_context(pwa);
                    view! { <App runtime=rt/> }
                })
            }
            Err(message) => {
                leptos::mount::mount_to_body(move || view! { <StartupError message=message/> })
            }
        }
        mark("hearth-ready");
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            let _ = body.set_attribute("data-ready", "true");
        }
        // A first visit keeps every chunk in memory once the first screen
        // is drawn (see `places::warm_chunks`); `data-chunks-warm` says
        // when that is done.
        if !pwa::controls_this_page() {
            gloo_timers::future::TimeoutFuture::new(WARM_AFTER_MS).await;
            places::warm_chunks().await;
            if let Some(body) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.body())
            {
                let _ = body.set_attribute("data-chunks-warm", "true");
            }
        }
    });
}

/// A performance mark, so a profile or the first-render bench can tell the
/// steps of start-up apart: the module running, storage open, the services
/// assembled, the first screen mounted.
fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}
