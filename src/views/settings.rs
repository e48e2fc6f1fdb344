//! Settings: version, storage use, and clearing all data.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;

use crate::runtime::use_runtime;
use crate::views::confirm::ConfirmDialog;

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
            let db = rt.db();
            spawn_local(async move {
                match db.clear_all().await {
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
                        <p class="muted">"Deletes the activity log and everything else Hearth stored in this browser."</p>
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
