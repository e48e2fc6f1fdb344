//! Settings: version, theme, permissions, agents, sync, storage (use, offline, Clear all)
//! and backup and restore.

pub mod agents;
pub mod code;
pub mod files;
pub mod providers;
pub mod search;
pub mod storage;
pub mod sync;
pub mod tabmodel;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::runtime::use_runtime;
use crate::views::settings::search::SearchBackendPanel;
use crate::views::settings::storage::{BackupPanel, StoragePanel};

#[component]
pub fn SettingsView() -> impl IntoView {
    view! {
        <section class="page settings" aria-labelledby="settings-title">
            <header class="page-head">
                <h1 id="settings-title">"Settings"</h1>
            </header>
            <section class="panel">
                <h2>"About"</h2>
                <dl class="facts">
                    <dt>"Version"</dt>
                    <dd data-testid="version">{env!("CARGO_PKG_VERSION")}</dd>
                    <dt>"Build"</dt>
                    <dd data-testid="build"><code>{crate::pwa::build_id()}</code></dd>
                </dl>
            </section>
            <AppearancePanel/>
            <crate::views::settings::providers::ProviderPanel/>
            <crate::views::settings::providers::AssistantPanel/>
            <PermissionPanel/>
            <crate::views::settings::agents::AgentsPanel/>
            <SearchBackendPanel/>
            <crate::views::settings::files::GrantsPanel/>
            <crate::views::settings::code::CodeSettings/>
            <crate::views::settings::sync::SyncPanel/>
            <StoragePanel/>
            <BackupPanel/>
        </section>
    }
}

/// The colour theme: the system's, light or dark.
#[component]
fn AppearancePanel() -> impl IntoView {
    use crate::theme::{self, Theme};
    let chosen = RwSignal::new(theme::current());
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    view! {
        <section class="panel" aria-labelledby="appearance-title">
            <h2 id="appearance-title">"Appearance"</h2>
            <fieldset class="theme-choice">
                <legend>"Theme"</legend>
                {Theme::ALL.into_iter().map(|t| view! {
                    <label class="theme-option">
                        <input type="radio" name="theme" value=t.as_str()
                            prop:checked=move || chosen.get() == t
                            on:change=move |_| {
                                chosen.set(t);
                                error.set(theme::set(t).err().map(|e| format!("The theme applies now but was not kept: {e}.")));
                            }/>
                        <span>{t.label()}</span>
                    </label>
                }).collect_view()}
            </fieldset>
            <p class="muted field-hint">"System follows this device's light or dark setting."</p>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}

/// The global permission mode.
#[component]
fn PermissionPanel() -> impl IntoView {
    use hearth_core::skill::permission::PermissionMode;
    let rt = use_runtime();
    let version = rt.versions().permissions;
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let mode = {
        let rt = rt.clone();
        move || {
            version.track();
            rt.data().permissions.borrow().mode
        }
    };
    let set_mode = move |m: PermissionMode| {
        let rt = rt.clone();
        spawn_local(async move {
            if let Err(e) = rt.update_permissions(move |p| p.mode = m).await {
                error.set(Some(format!("Not saved: {e}")));
            }
        });
    };
    let explain = |m: PermissionMode| match m {
        PermissionMode::AskSensitive => {
            "Network and integration skills, and skills that need approval, ask first. The rest just run."
        }
        PermissionMode::AskEverything => {
            "Every skill call asks first, unless you chose Always allow for that skill."
        }
        PermissionMode::Auto => {
            "Nothing asks unless you set a skill to ask. Bulk deletes still ask."
        }
        PermissionMode::ChatOnly => "No skill runs at all.",
    };
    view! {
        <section class="panel">
            <h2>"Permissions"</h2>
            <p class="muted">"When skills ask before they run. Each skill can override this in Skills."</p>
            <fieldset class="modes">
                <legend class="visually-hidden">"Permission mode"</legend>
                {PermissionMode::ALL.into_iter().map(|m| {
                    let mode = mode.clone();
                    let set_mode = set_mode.clone();
                    view! {
                        <label class="mode">
                            <input type="radio" name="permission-mode" value=m.as_str()
                                prop:checked=move || mode() == m
                                on:change=move |_| set_mode(m)/>
                            <span>
                                <strong>{m.label()}</strong>
                                <span class="muted">{explain(m)}</span>
                            </span>
                        </label>
                    }
                }).collect_view()}
            </fieldset>
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </section>
    }
}
