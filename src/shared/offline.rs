//! The app's connection and version signals: the "new version" banner
//! (the only way a waiting version activates), the shell's "Offline"
//! badge, and the Skills place's note on the network tier while offline.

use leptos::prelude::*;

use crate::icons::Icon;
use crate::pwa::{Update, use_pwa};

/// "A new version is ready — Reload to update", or, when another tab
/// already switched, a note that this tab runs the old version.
#[component]
pub fn UpdateBanner() -> impl IntoView {
    let pwa = use_pwa();
    let dismissed = RwSignal::new(false);
    let shown = move || pwa.update.get() != Update::None && !dismissed.get();
    view! {
        <Show when=shown>
            <div class="update-banner" role="status" data-testid="update-banner">
                <Icon name="refresh"/>
                <span>{move || match pwa.update.get() {
                    Update::Ready => "A new version of Hearth is ready.",
                    Update::ElsewhereActive => "Hearth was updated in another tab. Reload this tab to use the new version; until then it may not save.",
                    Update::None => "",
                }}</span>
                <button class="primary small" on:click=move |_| pwa.apply_update()>
                    {move || match pwa.update.get() {
                        Update::Ready => "Reload to update",
                        Update::ElsewhereActive | Update::None => "Reload",
                    }}
                </button>
                <Show when=move || pwa.update.get() == Update::Ready>
                    <button class="small" on:click=move |_| dismissed.set(true)>"Later"</button>
                </Show>
            </div>
        </Show>
    }
}

/// A quiet note in the shell while the device is offline.
#[component]
pub fn OfflineIndicator() -> impl IntoView {
    let online = crate::online::online();
    view! {
        <Show when=move || !online.get()>
            <div class="offline-indicator" role="status" title="No network connection. Everything local works; web skills wait until you are back online.">
                <Icon name="offline"/>
                <span>"Offline"</span>
            </div>
        </Show>
    }
}

/// The Skills panel's note on the network tier while offline.
#[component]
pub fn OfflineNote() -> impl IntoView {
    let online = crate::online::online();
    view! {
        <Show when=move || !online.get()>
            <p class="offline-note" role="status">
                <Icon name="offline"/>
                " You are offline. Network skills cannot reach the web until you reconnect; if they are called, they say so."
            </p>
        </Show>
    }
}
