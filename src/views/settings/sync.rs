//! Settings → Sync: set sync up with a bucket and a passphrase (or join
//! the vault already there), keep the recovery key shown once, see the
//! status and the devices, sync now, and turn sync off.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::platform::format_time;
use crate::shared::confirm::ConfirmDialog;
use crate::sync::{Attention, Form, Resolve, Setup, Status, use_sync};

#[component]
fn Field(
    label: &'static str,
    name: &'static str,
    value: RwSignal<String>,
    #[prop(default = "text")] kind: &'static str,
    #[prop(default = "")] placeholder: &'static str,
    #[prop(default = "")] hint: &'static str,
) -> impl IntoView {
    let id = format!("sync-{name}");
    let hint_id = format!("sync-{name}-hint");
    let described = (!hint.is_empty()).then(|| hint_id.clone());
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <input id=id type=kind name=name placeholder=placeholder autocomplete="off"
                spellcheck="false" aria-describedby=described
                prop:value=move || value.get()
                on:input=move |ev| value.set(event_target_value(&ev))/>
            {(!hint.is_empty()).then(|| view! { <span id=hint_id class="muted field-hint">{hint}</span> })}
        </div>
    }
}

#[component]
pub fn SyncPanel() -> impl IntoView {
    let sync = use_sync();
    let status = sync.status();
    let last = sync.last();
    let rounds = sync.rounds();
    let setup: RwSignal<Option<Setup>> = RwSignal::new(None);
    let on = RwSignal::new(sync.is_on());
    let refresh = {
        let sync = sync.clone();
        move || {
            let sync = sync.clone();
            spawn_local(async move {
                let s = sync.setup().await;
                on.set(sync.is_on());
                setup.set(s);
            });
        }
    };
    refresh();
    // The device list and last sync time follow each round.
    Effect::new({
        let refresh = refresh.clone();
        move |first: Option<()>| {
            last.track();
            if first.is_some() {
                refresh();
            }
        }
    });

    let endpoint = RwSignal::new(String::new());
    let region = RwSignal::new("us-east-1".to_string());
    let bucket = RwSignal::new(String::new());
    let access = RwSignal::new(String::new());
    let secret = RwSignal::new(String::new());
    let device = RwSignal::new(String::new());
    let passphrase = RwSignal::new(String::new());
    let recovery = RwSignal::new(String::new());
    let use_recovery = RwSignal::new(false);
    let busy = RwSignal::new(false);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let shown_key: RwSignal<Option<String>> = RwSignal::new(None);
    let kept = RwSignal::new(false);
    let confirming_off = RwSignal::new(false);

    let connect = {
        let sync = sync.clone();
        let refresh = refresh.clone();
        move || {
            if busy.get_untracked() {
                return;
            }
            let form = Form {
                endpoint: endpoint.get_untracked(),
                region: region.get_untracked(),
                bucket: bucket.get_untracked(),
                access_key_id: access.get_untracked(),
                secret_access_key: secret.get_untracked(),
                device_name: device.get_untracked(),
                passphrase: if use_recovery.get_untracked() {
                    String::new()
                } else {
                    passphrase.get_untracked()
                },
                recovery: if use_recovery.get_untracked() {
                    recovery.get_untracked()
                } else {
                    String::new()
                },
            };
            busy.set(true);
            error.set(None);
            let sync = sync.clone();
            let refresh = refresh.clone();
            spawn_local(async move {
                match sync.connect(form).await {
                    Ok(c) => {
                        passphrase.set(String::new());
                        recovery.set(String::new());
                        secret.set(String::new());
                        shown_key.set(c.recovery_key);
                        refresh();
                    }
                    Err(e) => error.set(Some(format!(
                        "Sync is not set up: {e}. Nothing was written."
                    ))),
                }
                busy.set(false);
            });
        }
    };
    let sync_now = {
        let sync = sync.clone();
        move |_| {
            let sync = sync.clone();
            spawn_local(async move {
                sync.sync_now().await;
            });
        }
    };
    let turn_off = {
        let sync = sync.clone();
        let refresh = refresh.clone();
        move || {
            let sync = sync.clone();
            let refresh = refresh.clone();
            spawn_local(async move {
                if let Err(e) = sync.turn_off().await {
                    error.set(Some(format!("Sync is still on: {e}")));
                }
                confirming_off.set(false);
                refresh();
            });
        }
    };

    let form_view = move || {
        let connect = connect.clone();
        view! {
            <form class="sync-form" on:submit=move |ev| { ev.prevent_default(); connect(); }>
                <p class="muted">"Keep notes, tasks and memories the same on every device, through an S3-compatible bucket you own: AWS S3, Cloudflare R2, Backblaze B2, MinIO, Garage or SeaweedFS. Everything is encrypted in this tab before it leaves; the store sees only sealed objects with random names."</p>
                <Field label="Endpoint" name="endpoint" value=endpoint placeholder="https://s3.us-east-1.amazonaws.com"
                    hint="The store's base URL. The bucket needs a CORS rule for this page's origin: hearth sync bucket sets it."/>
                <div class="field-row">
                    <Field label="Bucket" name="bucket" value=bucket/>
                    <Field label="Region" name="region" value=region/>
                </div>
                <div class="field-row">
                    <Field label="Access key ID" name="access-key" value=access/>
                    <Field label="Secret access key" name="secret-key" value=secret kind="password"/>
                </div>
                <Field label="This device's name" name="device-name" value=device placeholder="Laptop"
                    hint="How your other devices list this one."/>
                <Show when=move || !use_recovery.get() fallback=move || view! {
                    <Field label="Recovery key" name="recovery" value=recovery placeholder="HRK1-…"/>
                }>
                    <Field label="Vault passphrase" name="passphrase" value=passphrase kind="password"
                        hint="A new bucket gets a new vault with this passphrase. A bucket that has one asks for its passphrase."/>
                </Show>
                <label class="check">
                    <input type="checkbox" prop:checked=move || use_recovery.get()
                        on:change=move |ev| use_recovery.set(event_target_checked(&ev))/>
                    <span>"I have the recovery key instead of the passphrase"</span>
                </label>
                <div class="actions">
                    <button type="submit" class="primary" disabled=move || busy.get()>
                        {move || if busy.get() { "Connecting… (opening the vault takes a few seconds)" } else { "Connect" }}
                    </button>
                </div>
            </form>
        }
    };

    let answer = {
        let sync = sync.clone();
        let refresh = refresh.clone();
        move |doc: String, how: Resolve| {
            let sync = sync.clone();
            let refresh = refresh.clone();
            spawn_local(async move {
                match sync.resolve(doc, how).await {
                    Ok(()) => error.set(None),
                    Err(e) => error.set(Some(format!("Not changed: {e}"))),
                }
                refresh();
            });
        }
    };
    let status_view = move || {
        let sync_now = sync_now.clone();
        let answer = answer.clone();
        let s = setup.get();
        let waiting = s.as_ref().map(|s| s.attention.clone()).unwrap_or_default();
        view! {
            <dl class="facts">
                <dt>"Status"</dt>
                <dd data-testid="sync-state" data-rounds=move || rounds.get().to_string()>{move || match status.get() {
                    Status::Off => "Starting…".to_string(),
                    Status::Synced { at_ms } => format!("Synced at {}", format_time(at_ms)),
                    Status::Failed(why) => format!("Sync failed: {why}"),
                    Status::Waiting { count, why } => format!("{}: {why}", Status::Waiting { count, why: String::new() }.short()),
                    other => other.short(),
                }}</dd>
                <dt>"Store"</dt>
                <dd>{s.as_ref().map(|s| format!("{} at {}", s.bucket, s.endpoint)).unwrap_or_default()}</dd>
                <dt>"This device"</dt>
                <dd>{s.as_ref().map(|s| s.device_name.clone()).unwrap_or_default()}</dd>
            </dl>
            <h3>"Devices"</h3>
            <ul class="sync-devices" data-testid="sync-devices">
                {s.map(|s| s.devices).unwrap_or_default().into_iter().map(|d| view! {
                    <li>
                        <strong>{d.name}</strong>
                        {d.this_device.then(|| view! { <span class="badge">"this device"</span> })}
                        <span class="muted">{format!(" added {}", format_time(d.added_ms))}</span>
                    </li>
                }).collect_view()}
            </ul>
            {(!waiting.is_empty()).then(|| view! {
                <h3>"Waiting for you"</h3>
                <ul class="sync-attention" data-testid="sync-attention">
                    {waiting.into_iter().map(|a| attention_row(a, answer.clone())).collect_view()}
                </ul>
            })}
            {move || last.get().filter(|o| !o.refused.is_empty()).map(|o| view! {
                <div class="notice" role="status">
                    <p>"Some objects or records were refused; nothing of theirs was applied here or sent:"</p>
                    <ul>{o.refused.into_iter().map(|r| view! { <li>{r}</li> }).collect_view()}</ul>
                </div>
            })}
            <div class="actions">
                <button on:click=sync_now.clone() disabled=move || status.get() == Status::Syncing>"Sync now"</button>
                <button class="danger" on:click=move |_| confirming_off.set(true)>"Turn sync off"</button>
            </div>
        }
    };

    view! {
        <section class="panel sync-panel" aria-labelledby="sync-title">
            <h2 id="sync-title">"Sync"</h2>
            {move || shown_key.get().map(|key| view! {
                <div class="recovery-key" role="region" aria-label="Recovery key">
                    <p><strong>"Your recovery key"</strong>" opens this vault if you forget the passphrase. Hearth shows it only now: write it down or keep it in a password manager."</p>
                    <code data-testid="recovery-key">{key.clone()}</code>
                    <div class="actions">
                        <button on:click=move |_| {
                            let key = key.clone();
                            spawn_local(async move {
                                if let Some(c) = web_sys::window().map(|w| w.navigator().clipboard()) {
                                    let _ = wasm_bindgen_futures::JsFuture::from(c.write_text(&key)).await;
                                }
                            });
                        }>"Copy"</button>
                    </div>
                    <label class="check">
                        <input type="checkbox" prop:checked=move || kept.get()
                            on:change=move |ev| kept.set(event_target_checked(&ev))/>
                        <span>"I have kept my recovery key"</span>
                    </label>
                    <button class="primary" disabled=move || !kept.get()
                        on:click=move |_| { shown_key.set(None); kept.set(false); }>"Done"</button>
                </div>
            })}
            {move || if on.get() { status_view().into_any() } else { form_view().into_any() }}
            <Show when=move || error.get().is_some()>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || confirming_off.get()>
                <ConfirmDialog
                    title="Turn sync off on this device?".to_string()
                    message="This device stops syncing and forgets the vault key. Your notes, tasks and memories stay here, and the bucket and your other devices are not changed.".to_string()
                    confirm_label="Turn sync off".to_string()
                    on_confirm={
                        let turn_off = turn_off.clone();
                        move || turn_off()
                    }
                    on_cancel=move || confirming_off.set(false)
                />
            </Show>
        </section>
    }
}

/// What kind of record a document holds, as the person calls it.
fn kind_name(doc: &str) -> &'static str {
    match doc.split_once(':').map(|(k, _)| k) {
        Some("note") => "Note",
        Some("task") => "Task",
        Some("memory") => "Memory",
        Some("conversation") => "Conversation",
        _ => "Record",
    }
}

/// One record that waits: what happened, and the answers.
fn attention_row(
    a: Attention,
    answer: impl Fn(String, Resolve) + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let doc = a.doc.clone();
    let deleted = a.deleted_while_edited.then(|| {
        let (keep, delete) = (answer.clone(), answer.clone());
        let (d1, d2) = (doc.clone(), doc.clone());
        view! {
            <p>"Deleted on one device while it was edited on another. It is kept until you choose."</p>
            <div class="actions">
                <button class="primary" on:click=move |_| keep(d1.clone(), Resolve::Keep)>"Keep it"</button>
                <button class="danger" on:click=move |_| delete(d2.clone(), Resolve::Delete)>"Delete it"</button>
            </div>
        }
    });
    let conflicts = a.conflicts.into_iter().map(|c| {
        let field = c.field.join(".");
        let choices = c.values.into_iter().map(|v| {
            let answer = answer.clone();
            let doc = doc.clone();
            let path = c.field.clone();
            let shown = v.clone();
            view! {
                <button on:click=move |_| answer(doc.clone(), Resolve::Choose { field: path.clone(), value: v.clone() })>
                    "Keep " <code>{shown}</code>
                </button>
            }
        }).collect_view();
        view! {
            <p>"Changed on two devices: choose the " <strong>{field}</strong> " to keep."</p>
            <div class="actions wrap">{choices}</div>
        }
    }).collect_view();
    let kind = kind_name(&a.doc);
    view! {
        <li class="sync-attention-item">
            <span class="sync-kind" data-testid="sync-kind">{kind}</span> " "
            <strong>{a.title}</strong>
            {deleted}
            {conflicts}
        </li>
    }
}
