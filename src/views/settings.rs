//! Settings: version, storage use, and clearing all data.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;

use crate::runtime::use_runtime;
use crate::views::confirm::ConfirmDialog;
use crate::views::web::SearchBackendPanel;

/// Storage used and available, as the browser reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub usage: f64,
    pub quota: f64,
}

pub async fn storage_estimate() -> Result<Estimate, String> {
    let storage = web_sys::window().ok_or("no window")?.navigator().storage();
    let promise = storage.estimate().map_err(|e| format!("{e:?}"))?;
    let value = JsFuture::from(promise)
        .await
        .map_err(|e| format!("{e:?}"))?;
    let get = |key: &str| {
        js_sys::Reflect::get(&value, &key.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    Ok(Estimate {
        usage: get("usage"),
        quota: get("quota"),
    })
}

#[component]
pub fn SettingsView() -> impl IntoView {
    let rt = use_runtime();
    let estimate: RwSignal<Option<Result<Estimate, String>>> = RwSignal::new(None);
    let refresh = move || {
        spawn_local(async move {
            estimate.set(Some(storage_estimate().await));
        })
    };
    refresh();

    let confirming = RwSignal::new(false);
    let notice: RwSignal<Option<String>> = RwSignal::new(None);
    let clear = {
        let rt = rt.clone();
        move || {
            let rt = rt.clone();
            spawn_local(async move {
                match rt.clear_all().await {
                    Ok(()) => {
                        notice.set(Some("All data was deleted.".into()));
                        estimate.set(Some(storage_estimate().await));
                    }
                    Err(e) => notice.set(Some(format!("Nothing was deleted: {e}"))),
                }
                confirming.set(false);
            });
        }
    };

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
                </dl>
            </section>
            <PermissionPanel/>
            <SearchBackendPanel/>
            <crate::views::files::GrantsPanel/>
            <crate::views::code::CodeSettings/>
            <section class="panel">
                <h2>"Storage"</h2>
                <p class="muted">"Everything Hearth knows lives in this browser, on this device."</p>
                <dl class="facts">
                    <dt>"Used"</dt>
                    <dd data-testid="storage-usage">
                        {move || match estimate.get() {
                            None => "Measuring…".to_string(),
                            Some(Ok(e)) => format!(
                                "{} of {} available",
                                hearth_core::display::bytes(e.usage),
                                hearth_core::display::bytes(e.quota)
                            ),
                            Some(Err(err)) => format!("Unknown ({err})"),
                        }}
                    </dd>
                </dl>
                <div class="danger-zone">
                    <div>
                        <h3>"Clear all data"</h3>
                        <p class="muted">"Deletes notes, tasks, memories, settings, the activity log and everything else Hearth stored in this browser."</p>
                    </div>
                    <button class="danger" on:click=move |_| confirming.set(true)>"Clear all data…"</button>
                </div>
                <Show when=move || notice.get().is_some()>
                    <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
                </Show>
            </section>
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title="Delete all data?".to_string()
                    message="This deletes every record Hearth keeps in this browser. It cannot be undone.".to_string()
                    confirm_label="Delete everything".to_string()
                    on_confirm={
                        let clear = clear.clone();
                        move || clear()
                    }
                    on_cancel=move || confirming.set(false)
                />
            </Show>
        </section>
    }
}

/// The global permission mode.
#[component]
fn PermissionPanel() -> impl IntoView {
    use hearth_core::permission::PermissionMode;
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
