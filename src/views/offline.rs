//! The app's offline signals: the "new version" banner (the only way a
//! waiting version activates) and the sidebar's "Offline" badge.

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
