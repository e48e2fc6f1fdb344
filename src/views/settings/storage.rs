//! Settings' storage and backup panels: how much is stored (per store and
//! in all), whether the browser may clear it, what works offline, backup
//! and restore with a preview, Markdown export, and Clear all.

use std::sync::Arc;

use hearth_core::backup::{
    Backup, Consent, RecordChange, RecordReview, RestoreMode, RestorePlan, SecretsChoice,
    StoreCounts, store_label,
};
use hearth_core::util::display::bytes;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::backup::{self, OfferError, StoreStat};
use crate::icons::Icon;
use crate::platform::{Estimate, persisted, request_persist, storage_estimate};
use crate::pwa::{Offline, PythonCache, use_pwa};
use crate::runtime::use_runtime;
use crate::shared::confirm::ConfirmDialog;
use crate::shared::modal::Modal;

/// "1 item", "12,345 items".
fn items(n: u64) -> String {
    format!("{} {}", count(n), if n == 1 { "item" } else { "items" })
}

/// "12,345".
pub fn count(n: u64) -> String {
    hearth_core::assistant::providers::in_tab::group(n)
}

fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        (part / whole * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// Whether the Python runtime is kept for offline use, with its download
/// and a way to start or retry it.
#[component]
fn PythonCacheStatus() -> impl IntoView {
    let pwa = use_pwa();
    view! {
        {move || match pwa.python.get() {
            PythonCache::Ready { bytes: b } => view! { <span>{format!("Ready offline ({}).", bytes(b))}</span> }.into_any(),
            PythonCache::Downloading { loaded, total } => view! {
                <span>
                    {format!("Downloading for offline use: {} of {}…", bytes(loaded), bytes(total))}
                    <progress max=total value=loaded aria-label="Python runtime download"></progress>
                </span>
            }.into_any(),
            PythonCache::Missing { total_bytes } => view! {
                <span>
                    {format!("Not kept offline yet ({}). ", bytes(total_bytes))}
                    <button class="small" on:click=move |_| pwa.cache_python()>"Download now"</button>
                </span>
            }.into_any(),
            PythonCache::Failed { message, .. } => view! {
                <span>
                    {format!("The download stopped ({message}). ")}
                    <button class="small" on:click=move |_| pwa.cache_python()>"Try again"</button>
                </span>
            }.into_any(),
            PythonCache::NotInBuild => view! { <span class="muted">"Not part of this build."</span> }.into_any(),
            PythonCache::Unknown => view! { <span class="muted">"Checking…"</span> }.into_any(),
        }}
    }
}

/// How many records each store holds and their size, with the totals.
#[component]
fn StoreTable(stats: RwSignal<Option<Result<Vec<StoreStat>, String>>>) -> impl IntoView {
    view! {
        {move || match stats.get() {
            None => view! { <p class="muted">"Counting…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="error" role="alert">{format!("Cannot count: {e}")}</p> }.into_any(),
            Some(Ok(rows)) => {
                let total_records: u64 = rows.iter().map(|r| r.records).sum();
                let total_bytes: u64 = rows.iter().map(|r| r.bytes).sum();
                view! {
                    <table class="store-table" data-testid="store-table">
                        <thead><tr><th scope="col">"Kind"</th><th scope="col" class="num">"Items"</th><th scope="col" class="num">"Size"</th></tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| view! {
                                <tr data-store=r.name.clone()>
                                    <th scope="row">{store_label(&r.name).to_string()}</th>
                                    <td class="num">{count(r.records)}</td>
                                    <td class="num">{if r.records == 0 { "—".to_string() } else { bytes(r.bytes as f64) }}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                        <tfoot><tr><th scope="row">"All"</th><td class="num">{count(total_records)}</td><td class="num">{bytes(total_bytes as f64)}</td></tr></tfoot>
                    </table>
                }.into_any()
            }
        }}
    }
}

/// The storage panel: use, persistence, offline readiness, per-store
/// counts and Clear all.
#[component]
pub fn StoragePanel() -> impl IntoView {
    let rt = use_runtime();
    let pwa = use_pwa();
    let data_version = rt.versions().data;
    let estimate: RwSignal<Option<Result<Estimate, String>>> = RwSignal::new(None);
    let stats: RwSignal<Option<Result<Vec<StoreStat>, String>>> = RwSignal::new(None);
    let persist: RwSignal<Option<bool>> = RwSignal::new(None);
    let persist_note: RwSignal<Option<String>> = RwSignal::new(None);

    let measure = {
        let rt = rt.clone();
        move || {
            let rt = rt.clone();
            spawn_local(async move {
                estimate.set(Some(storage_estimate().await));
                stats.set(Some(
                    backup::store_stats(&rt.db())
                        .await
                        .map_err(|e| e.to_string()),
                ));
            });
        }
    };
    {
        // Measure now and whenever the data as a whole changes.
        let measure = measure.clone();
        Effect::new(move |_| {
            data_version.track();
            measure();
        });
    }
    spawn_local(async move { persist.set(persisted().await) });
    pwa.refresh();

    let ask_persist = move |_| {
        spawn_local(async move {
            match request_persist().await {
                Some(true) => {
                    persist.set(Some(true));
                    persist_note.set(None);
                }
                Some(false) => {
                    persist.set(Some(false));
                    persist_note.set(Some(
                        "The browser said no for now. Chromium grants this to installed apps and to sites you use often: installing Hearth (the install button in the address bar) usually does it. Until then, keep a backup.".into(),
                    ));
                }
                None => persist_note.set(Some(
                    "This browser cannot promise to keep site data. Keep a backup.".into(),
                )),
            }
        });
    };

    let confirming = RwSignal::new(false);
    let notice: RwSignal<Option<String>> = RwSignal::new(None);
    let assistant = use_context::<crate::assistant::Assistant>();
    let sync = use_context::<crate::sync::Sync>();
    let clear = {
        let rt = rt.clone();
        move || {
            let rt = rt.clone();
            let assistant = assistant.clone();
            let sync = sync.clone();
            spawn_local(async move {
                // Sync first goes off here: a round after the stores are
                // empty would read every record as deleted on this device
                // and delete it on every other.
                if let Some(sync) = sync.filter(|s| s.is_on())
                    && let Err(e) = sync.turn_off().await
                {
                    notice.set(Some(format!(
                        "Nothing was deleted: sync could not be turned off first ({e})"
                    )));
                    confirming.set(false);
                    return;
                }
                match rt.clear_all().await {
                    Ok(()) => {
                        // The assistant's conversations and provider were in those stores.
                        if let Some(a) = assistant {
                            a.reload().await;
                        }
                        notice.set(Some("All data was deleted.".into()))
                    }
                    Err(e) => notice.set(Some(format!("Nothing was deleted: {e}"))),
                }
                confirming.set(false);
            });
        }
    };

    view! {
        <section class="panel storage-panel" aria-labelledby="storage-title">
            <div class="panel-head">
                <h2 id="storage-title">"Storage"</h2>
                <button class="small" on:click={
                    let measure = measure.clone();
                    move |_| measure()
                } aria-label="Measure again"><Icon name="refresh"/></button>
            </div>
            <p class="muted">"Everything Hearth knows lives in this browser, on this device."</p>
            <dl class="facts">
                <dt>"Used"</dt>
                <dd>
                    <span data-testid="storage-usage">{move || match estimate.get() {
                        None => "Measuring…".to_string(),
                        Some(Ok(e)) => format!("{} of {} available", bytes(e.usage), bytes(e.quota)),
                        Some(Err(err)) => format!("Unknown ({err})"),
                    }}</span>
                    {move || estimate.get().and_then(Result::ok).map(|e| view! {
                        <div class="meter" role="meter" aria-label="Storage used"
                            aria-valuemin="0" aria-valuemax="100"
                            aria-valuenow=format!("{:.0}", percent(e.usage, e.quota))>
                            <div class="meter-fill" style=format!("width: {:.2}%", percent(e.usage, e.quota).max(0.5))></div>
                        </div>
                    })}
                </dd>
                <dt>"Kept safe"</dt>
                <dd data-testid="persist-status">
                    {move || match persist.get() {
                        Some(true) => view! {
                            <span class="ok-text"><Icon name="shield"/>" Yes: the browser will not delete Hearth's data to free space."</span>
                        }.into_any(),
                        _ => view! {
                            <span>
                                "Not yet: when this device runs low on space, the browser may delete Hearth's data without asking. "
                                <button class="small" on:click=ask_persist>"Ask the browser to keep it"</button>
                            </span>
                        }.into_any(),
                    }}
                    <Show when=move || persist_note.get().is_some()>
                        <p class="hint">{move || persist_note.get().unwrap_or_default()}</p>
                    </Show>
                </dd>
                <dt>"Offline"</dt>
                <dd data-testid="offline-status">{move || match pwa.offline.get() {
                    Offline::Ready { files } => format!("Ready: Hearth opens and runs without a network ({files} files kept)."),
                    Offline::Installing { done, total } => format!("Getting ready: {done} of {total} files kept…"),
                    Offline::Checking => "Checking…".to_string(),
                    Offline::DevBuild => "Off in development builds (build with trunk and the precache step to turn it on).".to_string(),
                    Offline::Unsupported => "This browser cannot keep Hearth for offline use.".to_string(),
                    Offline::Failed(e) => format!("Not available: {e}"),
                }}</dd>
                <dt>"Python"</dt>
                <dd data-testid="python-cache">
                    <PythonCacheStatus/>
                </dd>
            </dl>
            <h3 class="subhead">"What is stored"</h3>
            <StoreTable stats=stats/>
            <div class="danger-zone">
                <div>
                    <h3>"Clear all data"</h3>
                    <p class="muted">"Deletes conversations, notes, tasks, memories, skills, settings, the activity log and everything else Hearth stored in this browser."</p>
                </div>
                <button class="danger" on:click=move |_| confirming.set(true)>"Clear all data…"</button>
            </div>
            <Show when=move || notice.get().is_some()>
                <p class="notice" role="status">{move || notice.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || confirming.get()>
                <ConfirmDialog
                    title="Delete all data?".to_string()
                    message="This deletes every record Hearth keeps in this browser. It cannot be undone; download a backup first if you may want it back.".to_string()
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

/// Where a restore stands.
#[derive(Clone, Debug, PartialEq)]
enum Restore {
    Idle,
    Reading(String),
    Refused(String),
    Preview { file: String, backup: Arc<Backup> },
    Done(String),
}

fn done_message(plan: &RestorePlan) -> String {
    let added = plan.total(|c| c.added);
    let updated = plan.total(|c| c.updated);
    let removed = plan.total(|c| c.removed);
    if plan.is_noop() {
        return "Restored: this browser already held everything in the backup, so nothing changed."
            .into();
    }
    let mut parts = Vec::new();
    if added > 0 {
        parts.push(format!("{} new", count(added)));
    }
    if updated > 0 {
        parts.push(format!("{} updated", count(updated)));
    }
    if removed > 0 {
        parts.push(format!("{} removed", count(removed)));
    }
    format!(
        "Restored: {} ({}).",
        items(added + updated + removed),
        parts.join(", ")
    )
}

/// The backup panel: download a backup, restore one, export conversations.
#[component]
pub fn BackupPanel() -> impl IntoView {
    let rt = use_runtime();
    let include_secrets = RwSignal::new(false);
    let busy = RwSignal::new(false);
    let backup_note: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    let restore = RwSignal::new(Restore::Idle);
    let md_note: RwSignal<Option<Result<String, String>>> = RwSignal::new(None);
    let file_input = NodeRef::<html::Input>::new();

    let make_backup = {
        let rt = rt.clone();
        move |_| {
            let rt = rt.clone();
            busy.set(true);
            backup_note.set(Some(Ok("Preparing the backup…".into())));
            spawn_local(async move {
                let secrets = if include_secrets.get_untracked() {
                    SecretsChoice::Include
                } else {
                    SecretsChoice::LeaveOut
                };
                let note = match backup::download_backup(&rt.db(), secrets).await {
                    Ok(created) => {
                        let m = &created.manifest;
                        let secrets = if m.secrets.included {
                            " API keys and sign-in tokens are in it: keep it safe.".to_string()
                        } else if m.secrets.left_out > 0 {
                            format!(
                                " {} API key{} and token{} were left out.",
                                m.secrets.left_out,
                                if m.secrets.left_out == 1 { "" } else { "s" },
                                if m.secrets.left_out == 1 { "" } else { "s" }
                            )
                        } else {
                            String::new()
                        };
                        Ok(format!(
                            "Saved {} ({}, {}).{secrets}",
                            created.file_name,
                            bytes(created.bytes.len() as f64),
                            items(m.records())
                        ))
                    }
                    Err(OfferError::NotSaved(e)) => {
                        Err(format!("The backup could not be saved: {e}"))
                    }
                    Err(OfferError::NotMade(e)) => Err(format!("No backup was made: {e}.")),
                };
                backup_note.set(Some(note));
                busy.set(false);
            });
        }
    };

    let schema = rt.db().schema();
    let on_file = move |_| {
        let Some(input) = file_input.get() else {
            return;
        };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        input.set_value("");
        let name = file.name();
        restore.set(Restore::Reading(name.clone()));
        spawn_local(async move {
            let next = match backup::open_picked(file, &schema).await {
                Ok(b) => Restore::Preview {
                    file: name,
                    backup: Arc::new(b),
                },
                Err(e) => Restore::Refused(format!("Nothing was changed: {e}.")),
            };
            restore.set(next);
        });
    };

    let export_md = {
        let rt = rt.clone();
        move |_| {
            let rt = rt.clone();
            spawn_local(async move {
                let note = match backup::download_conversations_markdown(&rt.db()).await {
                    Ok(Some(name)) => Ok(format!("Saved {name}.")),
                    Ok(None) => Ok("There are no conversations to export yet.".into()),
                    Err(OfferError::NotSaved(e)) => Err(format!("Not saved: {e}")),
                    Err(OfferError::NotMade(e)) => Err(format!("Not exported: {e}.")),
                };
                md_note.set(Some(note));
            });
        }
    };

    let note_view = |n: RwSignal<Option<Result<String, String>>>, testid: &'static str| {
        move || {
            n.get().map(|r| match r {
                Ok(text) => view! { <p class="notice" role="status" data-testid=testid>{text}</p> }
                    .into_any(),
                Err(text) => {
                    view! { <p class="error" role="alert" data-testid=testid>{text}</p> }.into_any()
                }
            })
        }
    };

    view! {
        <section class="panel backup-panel" aria-labelledby="backup-title">
            <h2 id="backup-title">"Backup and restore"</h2>
            <div class="backup-row">
                <div>
                    <h3>"Back up everything"</h3>
                    <p class="muted">"One file with your conversations, notes, tasks, memories, skills and their files, settings, file grants, permission choices and the activity log. It is checked when you restore it."</p>
                    <p class="muted" data-testid="backup-models-note">"Models for “In this tab” are not included: they are large, and can be added again from their file or link."</p>
                    <label class="check">
                        <input type="checkbox" prop:checked=move || include_secrets.get()
                            on:change=move |ev| include_secrets.set(event_target_checked(&ev))/>
                        <span>"Include API keys and sign-in tokens"</span>
                    </label>
                    <Show when=move || include_secrets.get()>
                        <p class="hint warn-text">"Anyone who has the file can use these keys. Keep it somewhere safe."</p>
                    </Show>
                </div>
                <button class="primary" on:click=make_backup disabled=move || busy.get()>
                    <Icon name="download"/>" Download backup"
                </button>
            </div>
            {note_view(backup_note, "backup-note")}
            <div class="backup-row">
                <div>
                    <h3>"Restore from a backup"</h3>
                    <p class="muted">"You see what it holds before anything changes, and choose to merge it with what is here or replace everything."</p>
                </div>
                <button on:click=move |_| {
                    if let Some(input) = file_input.get() {
                        input.click();
                    }
                }>
                    <Icon name="upload"/>" Choose a backup file…"
                </button>
                <input type="file" class="visually-hidden" accept=".zip,application/zip"
                    aria-label="Backup file" node_ref=file_input on:change=on_file tabindex="-1"/>
            </div>
            {move || match restore.get() {
                Restore::Reading(name) => Some(view! { <p class="notice" role="status">{format!("Checking {name}…")}</p> }.into_any()),
                Restore::Refused(text) => Some(view! { <p class="error" role="alert" data-testid="restore-error">{text}</p> }.into_any()),
                Restore::Done(text) => Some(view! { <p class="notice" role="status" data-testid="restore-done">{text}</p> }.into_any()),
                Restore::Idle | Restore::Preview { .. } => None,
            }}
            <div class="backup-row">
                <div>
                    <h3>"Conversations as Markdown"</h3>
                    <p class="muted">"Every conversation as a readable .md file, with its tool calls and results."</p>
                </div>
                <button on:click=export_md><Icon name="download"/>" Export conversations"</button>
            </div>
            {note_view(md_note, "markdown-note")}
            {move || match restore.get() {
                Restore::Preview { file, backup } => Some(view! {
                    <RestorePreview file=file backup=backup restore=restore/>
                }),
                _ => None,
            }}
        </section>
    }
}

/// The counts column for one store.
fn changes(c: &StoreCounts, mode: RestoreMode) -> String {
    let mut parts = Vec::new();
    if c.added > 0 {
        parts.push(format!("+{} new", count(c.added)));
    }
    if c.updated > 0 {
        parts.push(format!("{} updated", count(c.updated)));
    }
    match mode {
        RestoreMode::Merge => {
            if c.kept > 0 {
                parts.push(format!("{} kept as here", count(c.kept)));
            }
        }
        RestoreMode::Replace => {
            if c.removed > 0 {
                parts.push(format!("{} removed", count(c.removed)));
            }
        }
    }
    if c.held_back > 0 {
        parts.push(format!("{} held back", count(c.held_back)));
    }
    if parts.is_empty() {
        "no change".into()
    } else {
        parts.join(", ")
    }
}

/// "Restore this backup?": what it holds, what would change, merge or
/// replace, and the button that does it.
#[component]
fn RestorePreview(file: String, backup: Arc<Backup>, restore: RwSignal<Restore>) -> impl IntoView {
    let rt = use_runtime();
    let mode = RwSignal::new(RestoreMode::Merge);
    // Permission changes that let more run unasked need their own yes.
    let loosen = RwSignal::new(false);
    let plan: RwSignal<Option<Result<RestorePlan, String>>> = RwSignal::new(None);
    let working = RwSignal::new(false);
    let failure: RwSignal<Option<String>> = RwSignal::new(None);
    {
        let (rt, backup) = (rt.clone(), backup.clone());
        Effect::new(move |_| {
            let m = mode.get();
            let consent = Consent {
                loosen_permissions: loosen.get(),
            };
            let (rt, backup) = (rt.clone(), backup.clone());
            spawn_local(async move {
                let p = backup::preview(&rt.db(), &backup, m, consent)
                    .await
                    .map_err(|e| e.to_string());
                if mode.get_untracked() == m && loosen.get_untracked() == consent.loosen_permissions
                {
                    plan.set(Some(p));
                }
            });
        });
    }
    let cancel = move || restore.set(Restore::Idle);
    let assistant = use_context::<crate::assistant::Assistant>();
    let go = {
        let (rt, backup) = (rt.clone(), backup.clone());
        move |_| {
            let (rt, backup) = (rt.clone(), backup.clone());
            let assistant = assistant.clone();
            working.set(true);
            failure.set(None);
            spawn_local(async move {
                let m = mode.get_untracked();
                let consent = Consent {
                    loosen_permissions: loosen.get_untracked(),
                };
                match backup::restore(&rt.db(), &backup, m, consent).await {
                    Ok(done) => {
                        let _ = rt.reload_data().await;
                        if let Some(a) = assistant.clone() {
                            a.reload().await;
                        }
                        restore.set(Restore::Done(done_message(&done)));
                    }
                    Err(e) => {
                        working.set(false);
                        failure.set(Some(format!("Nothing was changed: {e}.")));
                    }
                }
            });
        }
    };
    let m = backup.manifest.clone();
    let made = hearth_core::assistant::agent::export::utc_minute(m.created_at_ms);
    let secrets_line = if m.secrets.included {
        "API keys and sign-in tokens are included and will be restored.".to_string()
    } else if m.secrets.left_out > 0 {
        "API keys and sign-in tokens were left out of it; those this browser has are kept for records that still point to the same place."
            .to_string()
    } else {
        String::new()
    };
    let browser_only: u64 = m.stores.iter().map(|s| s.browser_only_left_out).sum();
    view! {
        <Modal labelledby="restore-title" class="wide restore" on_escape=Callback::new(move |_| cancel())>
            <h2 id="restore-title">"Restore this backup?"</h2>
            <p class="muted" data-testid="restore-summary">{format!(
                "{file}: made {made} by Hearth {}, {}.",
                m.app_version,
                items(m.records())
            )}</p>
            <fieldset class="modes restore-modes">
                <legend class="visually-hidden">"How to restore"</legend>
                <label class="mode">
                    <input type="radio" name="restore-mode" value="merge" data-autofocus
                        prop:checked=move || mode.get() == RestoreMode::Merge
                        on:change=move |_| mode.set(RestoreMode::Merge)/>
                    <span><strong>"Merge"</strong>
                        <span class="muted">"Add what this browser lacks. Where both have an item, the more recently changed copy stays."</span></span>
                </label>
                <label class="mode">
                    <input type="radio" name="restore-mode" value="replace"
                        prop:checked=move || mode.get() == RestoreMode::Replace
                        on:change=move |_| mode.set(RestoreMode::Replace)/>
                    <span><strong>"Replace"</strong>
                        <span class="muted">"Make this browser hold exactly what the backup holds. Anything not in it is deleted."</span></span>
                </label>
            </fieldset>
            {move || match plan.get() {
                None => view! { <p class="muted">"Comparing with this browser…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert">{format!("Cannot compare: {e}")}</p> }.into_any(),
                Some(Ok(p)) => {
                    let mode_now = p.mode;
                    let removed = p.total(|c| c.removed);
                    let rows: Vec<StoreCounts> = p.counts.iter()
                        .filter(|c| c.in_backup > 0 || c.current > 0)
                        .cloned()
                        .collect();
                    view! {
                        <table class="store-table restore-table" data-testid="restore-table">
                            <thead><tr>
                                <th scope="col">"Kind"</th>
                                <th scope="col" class="num">"In backup"</th>
                                <th scope="col" class="num">"Here now"</th>
                                <th scope="col" class="num">"After"</th>
                                <th scope="col">"Changes"</th>
                            </tr></thead>
                            <tbody>
                                {if rows.is_empty() {
                                    view! { <tr><td colspan="5" class="muted">"The backup is empty, and so is this browser."</td></tr> }.into_any()
                                } else {
                                    rows.into_iter().map(|c| view! {
                                        <tr data-store=c.name.clone()>
                                            <th scope="row">{store_label(&c.name).to_string()}</th>
                                            <td class="num">{count(c.in_backup)}</td>
                                            <td class="num">{count(c.current)}</td>
                                            <td class="num">{count(c.after)}</td>
                                            <td class="changes">{changes(&c, mode_now)}</td>
                                        </tr>
                                    }).collect_view().into_any()
                                }}
                            </tbody>
                        </table>
                        <Show when=move || { mode_now == RestoreMode::Replace && removed > 0 }>
                            <p class="warn-box" role="note">{format!(
                                "Replace deletes {} item{} that the backup does not hold.",
                                count(removed),
                                if removed == 1 { "" } else { "s" }
                            )}</p>
                        </Show>
                        <ReviewList plan=p.clone() loosen=loosen/>
                    }.into_any()
                }
            }}
            <Show when={
                let s = secrets_line.clone();
                move || !s.is_empty()
            }>
                <p class="hint">{secrets_line.clone()}</p>
            </Show>
            <Show when=move || { browser_only > 0 }>
                <p class="hint">"Folder and file access cannot travel in a file: grant those folders again in Settings after restoring."</p>
            </Show>
            <p class="hint" data-testid="restore-models-note">"Models for “In this tab” are never part of a backup: after restoring, add them again in Settings → Model provider."</p>
            <Show when=move || failure.get().is_some()>
                <p class="error" role="alert">{move || failure.get().unwrap_or_default()}</p>
            </Show>
            <div class="modal-actions">
                <button on:click=move |_| cancel() disabled=move || working.get()>"Cancel"</button>
                <button
                    class=move || if mode.get() == RestoreMode::Replace { "danger" } else { "primary" }
                    disabled=move || working.get() || !matches!(plan.get(), Some(Ok(_)))
                    on:click=go
                >
                    {move || match (working.get(), mode.get()) {
                        (true, _) => "Restoring…",
                        (false, RestoreMode::Merge) => "Merge into this browser",
                        (false, RestoreMode::Replace) => "Replace everything here",
                    }}
                </button>
            </div>
        </Modal>
    }
}

/// What a change does to a record, as a badge.
fn change_badge(r: &RecordReview) -> (&'static str, &'static str) {
    if r.held_back {
        return ("held-back", "Not applied");
    }
    match r.change {
        RecordChange::Added => ("added", "New"),
        RecordChange::Changed => ("changed", "Changed"),
        RecordChange::Removed => ("removed", "Removed"),
    }
}

/// Settings, providers, MCP servers, permissions, file access and skill
/// packages the restore would change, field by field, with where things
/// go highlighted; and what it would loosen, behind its own checkbox.
#[component]
fn ReviewList(plan: RestorePlan, loosen: RwSignal<bool>) -> impl IntoView {
    let review = plan.review;
    let withheld = plan.secrets_withheld;
    let loosening = review.loosening.clone();
    let has_loosening = !loosening.is_empty();
    let records = review.records;
    let any = !records.is_empty();
    view! {
        {has_loosening.then(|| view! {
            <div class="warn-box loosening" role="note" data-testid="restore-loosening">
                <p><strong>"This backup would let more run without asking you:"</strong></p>
                <ul>
                    {loosening.iter().map(|l| view! { <li>{l.clone()}</li> }).collect_view()}
                </ul>
                <label class="check">
                    <input type="checkbox" prop:checked=move || loosen.get()
                        on:change=move |ev| loosen.set(event_target_checked(&ev))/>
                    <span>"Apply these permission changes too"</span>
                </label>
                <p class="hint">{move || if loosen.get() {
                    "The backup's permissions will replace yours."
                } else {
                    "Your permissions stay as they are; everything else is restored."
                }}</p>
            </div>
        })}
        {(withheld > 0).then(|| view! {
            <p class="hint" data-testid="restore-withheld">{format!(
                "The backup points {} record{} somewhere else than this browser does, so the API keys and sign-ins this browser has for {} stay out of {}.",
                count(withheld),
                if withheld == 1 { "" } else { "s" },
                if withheld == 1 { "it" } else { "them" },
                if withheld == 1 { "it" } else { "them" },
            )}</p>
        })}
        {any.then(|| view! {
            <h3 class="review-title">"Settings and connections that change"</h3>
            <div class="review-list" data-testid="restore-review">
                {records.into_iter().map(|r| {
                    let (class, badge) = change_badge(&r);
                    let more = r.more_fields;
                    let note = r.secrets_withheld.then_some(
                        "Its address changed, so this browser's key or sign-in is not carried into it.",
                    );
                    view! {
                        <section class="review-record" data-store=r.store.clone() data-key=r.key.clone()>
                            <header>
                                <span class=format!("review-badge {class}")>{badge}</span>
                                <strong>{r.label.clone()}</strong>
                            </header>
                            {note.map(|n| view! { <p class="hint warn-text">{n}</p> })}
                            <table class="review-fields">
                                <thead><tr>
                                    <th scope="col">"Field"</th>
                                    <th scope="col">"Here now"</th>
                                    <th scope="col">"From the backup"</th>
                                </tr></thead>
                                <tbody>
                                    {r.fields.into_iter().map(|f| {
                                        let dest = f.destination;
                                        view! {
                                            <tr class:destination=dest data-field=f.path.clone()>
                                                <th scope="row">
                                                    {f.path.clone()}
                                                    {dest.then(|| view! { <span class="dest-tag">"destination"</span> })}
                                                </th>
                                                <td>{f.before.unwrap_or_else(|| "—".into())}</td>
                                                <td>{match (dest, f.after) {
                                                    (true, Some(a)) => view! { <mark>{a}</mark> }.into_any(),
                                                    (false, Some(a)) => view! { <span>{a}</span> }.into_any(),
                                                    (_, None) => view! { <span>"—"</span> }.into_any(),
                                                }}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                            {(more > 0).then(|| view! { <p class="muted">{format!("and {} more field{}", count(more), if more == 1 { "" } else { "s" })}</p> })}
                        </section>
                    }
                }).collect_view()}
            </div>
        })}
    }
}
