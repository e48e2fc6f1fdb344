//! The notice of stored records Hearth could not read: which they are,
//! that safe defaults stand in for them, and that they are kept (every
//! backup carries them, and they can be downloaded here).

use hearth_core::backup::{store_label, utc_date};
use leptos::prelude::*;
use serde_json::{Value, json};

use crate::icons::Icon;
use crate::runtime::use_runtime;
use crate::storage::SetAside;

/// "Settings: permissions, Notes (2)".
fn listed(records: &[SetAside]) -> String {
    let mut by_store: Vec<(String, Vec<&str>)> = Vec::new();
    for r in records {
        match by_store.iter_mut().find(|(s, _)| *s == r.store) {
            Some((_, keys)) => keys.push(&r.key),
            None => by_store.push((r.store.clone(), vec![r.key.as_str()])),
        }
    }
    by_store
        .iter()
        .map(|(store, keys)| match (store.as_str(), keys.as_slice()) {
            ("settings", keys) => format!("{}: {}", store_label(store), keys.join(", ")),
            (_, [_]) => store_label(store).to_string(),
            (_, keys) => format!("{} ({})", store_label(store), keys.len()),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Offers the records as one JSON file. The runtime is passed in: this
/// runs in a task, outside the component that has it in context.
async fn download(rt: crate::runtime::Runtime) -> Result<(), String> {
    let values = rt.db().set_aside_values();
    let array = js_sys::Array::new();
    for (_, v) in &values {
        array.push(v);
    }
    let encoded = crate::codec::encode_with_blobs(&array.into()).await?;
    let records: Vec<Value> = serde_json::from_str(&encoded.json).map_err(|e| e.to_string())?;
    let out: Vec<Value> = values
        .iter()
        .zip(records)
        .map(|((s, _), record)| json!({"store": s.store, "key": s.key, "error": s.error, "record": record}))
        .collect();
    let text = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    let name = format!(
        "hearth-unreadable-records-{}.json",
        utc_date(js_sys::Date::now())
    );
    crate::platform::download_text(&name, "application/json", &text)
}

#[component]
pub fn SetAsideNotice() -> impl IntoView {
    let rt = use_runtime();
    let version = rt.versions().set_aside;
    // How many records the person has seen and dismissed.
    let dismissed = RwSignal::new(0usize);
    let failure = RwSignal::new(None::<String>);
    let records = {
        let rt = rt.clone();
        Memo::new(move |_| {
            version.track();
            rt.db().set_aside_records()
        })
    };
    let shown = move || records.with(|r| r.len() > dismissed.get());
    view! {
        <Show when=shown>
            <div class="update-banner set-aside-notice" role="status" data-testid="set-aside-notice">
                <Icon name="shield"/>
                <span>{move || records.with(|r| {
                    let n = r.len();
                    format!(
                        "Hearth could not read {} of what it stored ({}). It uses safe defaults in {} place{} — \
                         unreadable permissions mean every skill asks first — and keeps {}: {} in every backup, \
                         and you can download {} here.",
                        if n == 1 { "one record".to_string() } else { format!("{n} records") },
                        listed(r),
                        if n == 1 { "its" } else { "their" },
                        if n == 1 { "" } else { "s" },
                        if n == 1 { "it" } else { "them" },
                        if n == 1 { "it is" } else { "they are" },
                        if n == 1 { "it" } else { "them" },
                    )
                })}</span>
                <button class="small" on:click={
                    let rt = rt.clone();
                    move |_| {
                        let rt = rt.clone();
                        leptos::task::spawn_local(async move {
                            failure.set(download(rt).await.err());
                        });
                    }
                }>"Download"</button>
                <button class="small" on:click=move |_| dismissed.set(records.with(Vec::len))>"Dismiss"</button>
                {move || failure.get().map(|e| view! { <p class="error" role="alert">{format!("The download failed: {e}")}</p> })}
            </div>
        </Show>
    }
}
