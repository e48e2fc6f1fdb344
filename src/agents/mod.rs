//! The person's other agents (Claude Code, Codex, goose…) using Hearth's
//! skills over MCP: `hearth serve` takes their requests at `/mcp/server`
//! and relays them here, to the tab, over a channel the tab opens
//! (`hearth_core::agents::wire`). The tab answers through the one call
//! path: the agent is the call's origin, its grant decides what may run
//! and what asks, the approval dialog names it and Activity records it.
//!
//! Only the check below is in the first load: at start-up, under `hearth
//! serve`, the tab asks whether any agent is connected, and only then
//! fetches the chunk that opens the channel ([`channel`]), answers
//! requests ([`answer`]), shows the calls under way ([`live`]) and asks
//! the person about agents signing in through OAuth ([`consent`]).
//! Settings → Agents (`crate::views::settings::agents`) opens it too, when the first
//! agent is connected.

pub mod answer;
pub mod channel;
pub mod consent;
pub mod live;

use std::cell::Cell;

use futures::future::LocalBoxFuture;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::runtime::Runtime;
use crate::split::{enter, split_point};

thread_local! {
    /// Whether this tab's channel is open or opening.
    static OPEN: Cell<bool> = const { Cell::new(false) };
}

/// At start-up: opens the channel if `hearth serve` has agents connected,
/// or OAuth clients registered (which ask the person here to connect).
/// Under a static host, or with neither, nothing more is fetched.
///
/// An agent signing in for the first time registers while this tab is
/// already open, and sends the person to a page that says to approve in
/// Hearth; so whenever the tab is shown again without its channel, it asks
/// once more, and the consent reaches it without a reload.
pub fn start(rt: Runtime) {
    if crate::launch::stored().is_none() {
        return;
    }
    check(rt.clone());
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let shown = document.clone();
    let on_shown = Closure::<dyn Fn()>::new(move || {
        if !shown.hidden() && !is_open() {
            check(rt.clone());
        }
    });
    let _ = document
        .add_event_listener_with_callback("visibilitychange", on_shown.as_ref().unchecked_ref());
    // The tab listens for as long as it is open.
    on_shown.forget();
}

/// Opens the channel when `hearth serve` has agents or OAuth clients.
fn check(rt: Runtime) {
    leptos::task::spawn_local(async move {
        let summary: Result<Value, _> = rt.web().client.get("/api/agents/summary").await;
        let count = |key: &str| {
            summary
                .as_ref()
                .ok()
                .and_then(|s| s.get(key).and_then(Value::as_u64))
                .unwrap_or(0)
        };
        if count("agents") + count("clients") > 0 {
            open(rt).await;
        }
    });
}

/// Opens this tab's channel (once): from then on it takes agents'
/// requests until it closes.
pub async fn open(rt: Runtime) {
    if OPEN.with(|o| o.replace(true)) {
        return;
    }
    let done = enter(run_in_chunk(rt), || "not loaded".to_string()).await;
    if let Err(e) = done {
        web_sys::console::warn_1(&format!("agents: {e}").into());
    }
    OPEN.with(|o| o.set(false));
}

/// Whether this tab takes agents' requests now.
pub fn is_open() -> bool {
    OPEN.with(Cell::get)
}

split_point!(
    agents,
    fn run_in_chunk(rt: Runtime) -> LocalBoxFuture<'static, Result<(), String>> {
        Box::pin(async move {
            channel::run(rt, |channel, request| {
                Box::pin(answer::answer(channel, request))
            })
            .await;
            Ok(())
        })
    }
);
