//! The Files panel in Settings: grant a folder or files, see what is
//! granted and whether the browser still allows reading it, allow again
//! after a reload, and revoke.

use hearth_core::builtin::code::grant::{GrantKind, GrantSource};
use leptos::prelude::*;
use leptos::task::spawn_local;

use std::rc::Rc;

use crate::files::Files;
use crate::files::grants::{self, Access, Grant};
use crate::files::picker::{self, Pick};
use crate::icons::Icon;
use crate::runtime::use_runtime;
use crate::shared::confirm::ConfirmDialog;

/// A grant with whether it can be read now.
#[derive(Clone)]
struct Row {
    grant: Grant,
    access: Access,
}

async fn load_rows(files: &Files) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for grant in files.grants().await.map_err(|e| e.to_string())? {
        let access = grants::access(&grant).await;
        rows.push(Row { grant, access });
    }
    Ok(rows)
}

fn summary(row: &Row) -> String {
    let r = &row.grant.record;
    let what = match r.kind {
        GrantKind::Directory => format!(
            "folder · {}{} file{}, {}",
            r.files,
            if r.counted_all { "" } else { "+" },
            if r.files == 1 { "" } else { "s" },
            hearth_core::util::display::bytes(r.bytes as f64)
        ),
        GrantKind::File => format!(
            "file · {}",
            hearth_core::util::display::bytes(r.bytes as f64)
        ),
    };
    let how = match r.source {
        GrantSource::Handle => "live: Hearth reads the files where they are",
        GrantSource::Copy => "a copy kept in this browser",
    };
    format!("{what} · {how}")
}

#[component]
pub fn GrantsPanel() -> impl IntoView {
    let rows: RwSignal<Vec<Row>, LocalStorage> = RwSignal::new_local(Vec::new());
    let loaded = RwSignal::new(false);
    let busy = RwSignal::new(false);
    let notice: RwSignal<Option<String>> = RwSignal::new(None);
    let confirming: RwSignal<Option<Row>, LocalStorage> = RwSignal::new_local(None);
    let service: StoredValue<Rc<Files>, LocalStorage> =
        StoredValue::new_local(use_runtime().files());

    let refresh = move || {
        let files = service.get_value();
        spawn_local(async move {
            match load_rows(&files).await {
                Ok(r) => rows.set(r),
                Err(e) => notice.set(Some(format!("Could not read the grants: {e}"))),
            }
            loaded.set(true);
        });
    };
    refresh();

    let grant = move |what: Pick| {
        busy.set(true);
        notice.set(None);
        let files = service.get_value();
        spawn_local(async move {
            match files.pick(what).await {
                Ok(picked) if picked.granted.is_empty() => {}
                Ok(picked) => {
                    let names: Vec<String> =
                        picked.granted.iter().map(|g| g.name.clone()).collect();
                    let mut text = format!("Granted {}.", names.join(", "));
                    if picked.skipped > 0 {
                        text.push_str(&format!(
                            " {} with names Hearth cannot use safely {} left out.",
                            hearth_core::util::display::count(picked.skipped, "file", "files"),
                            if picked.skipped == 1 { "was" } else { "were" }
                        ));
                    }
                    notice.set(Some(text));
                }
                Err(e) => notice.set(Some(format!("Nothing was granted: {e}"))),
            }
            busy.set(false);
            refresh();
        });
    };

    let allow_again = move |row: Row| {
        spawn_local(async move {
            match grants::request_access(&row.grant).await {
                Access::Granted => notice.set(Some(format!(
                    "Hearth can read {} again.",
                    row.grant.record.name
                ))),
                Access::Prompt | Access::Denied => notice.set(Some(format!(
                    "The browser did not allow reading {}.",
                    row.grant.record.name
                ))),
            }
            refresh();
        });
    };

    let revoke = move || {
        let Some(row) = confirming.get_untracked() else {
            return;
        };
        confirming.set(None);
        let files = service.get_value();
        spawn_local(async move {
            match files.revoke(&row.grant.record.id).await {
                Ok(()) => notice.set(Some(format!("Revoked {}.", row.grant.record.name))),
                Err(e) => notice.set(Some(format!(
                    "Could not revoke {}: {e}",
                    row.grant.record.name
                ))),
            }
            refresh();
        });
    };

    let how = if picker::has_pickers() {
        "Hearth reads granted files where they are; after a reload the browser asks you again."
    } else {
        "This browser cannot give live access to folders, so Hearth keeps a private copy of what you grant."
    };

    view! {
        <section class="panel files-panel" aria-labelledby="files-title">
            <h2 id="files-title">"Files"</h2>
            <p class="muted">"Folders and files you grant can be read by the file skills and handed to code as /mnt/data. Hearth sees nothing else on this device."</p>
            <div class="panel-actions">
                <button type="button" class="primary" disabled=move || busy.get() on:click=move |_| grant(Pick::Folder)>
                    <Icon name="folder"/>" Grant a folder…"
                </button>
                <button type="button" disabled=move || busy.get() on:click=move |_| grant(Pick::Files)>
                    <Icon name="file"/>" Grant files…"
                </button>
            </div>
            <p class="hint">{how}</p>
            <Show when=move || busy.get()>
                <p class="notice" role="status">"Granting… large folders take a moment while Hearth reads them."</p>
            </Show>
            <Show when=move || loaded.get() && rows.with(Vec::is_empty)>
                <p class="muted empty">"Nothing granted yet."</p>
            </Show>
            <ul class="grant-list" aria-label="Granted files and folders">
                {move || rows.get().into_iter().map(|row| {
                    let icon = match row.grant.record.kind {
                        GrantKind::Directory => "folder",
                        GrantKind::File => "file",
                    };
                    let (status_class, status_text) = match row.access {
                        Access::Granted => ("status status-completed", "Allowed"),
                        Access::Prompt => ("status status-input-required", "Needs permission"),
                        Access::Denied => ("status status-failed", "Blocked"),
                    };
                    let name = row.grant.record.name.clone();
                    let for_allow = row.clone();
                    let for_revoke = row.clone();
                    view! {
                        <li class="file-grant" data-grant=name.clone()>
                            <span class="card-icon"><Icon name=icon/></span>
                            <div class="grant-main">
                                <strong class="grant-name">{name.clone()}</strong>
                                <span class="muted grant-summary">{summary(&row)}</span>
                            </div>
                            <span class=status_class>{status_text}</span>
                            {(row.access == Access::Prompt).then(|| view! {
                                <button type="button" on:click=move |_| allow_again(for_allow.clone())>"Allow again"</button>
                            })}
                            <button type="button" aria-label=format!("Revoke {name}") on:click=move |_| confirming.set(Some(for_revoke.clone()))>"Revoke…"</button>
                        </li>
                    }
                }).collect_view()}
            </ul>
            <Show when=move || notice.get().is_some()>
                <p class="notice" role="status" data-testid="files-notice">{move || notice.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || confirming.with(Option::is_some)>
                {move || confirming.get().map(|row| {
                    let name = row.grant.record.name.clone();
                    let message = match row.grant.record.source {
                        GrantSource::Copy => format!("Hearth deletes its copy of '{name}'. Your original files are not touched."),
                        GrantSource::Handle => format!("Hearth forgets '{name}' and can no longer read it. Your files are not touched."),
                    };
                    view! {
                        <ConfirmDialog
                            title=format!("Revoke access to {name}?")
                            message=message
                            confirm_label="Revoke".to_string()
                            on_confirm=revoke
                            on_cancel=move || confirming.set(None)
                        />
                    }
                })}
            </Show>
        </section>
    }
}
