//! Notes: the same notes the notes skill reads and writes, listed,
//! searched and edited here. Bodies are Markdown, rendered safely; the
//! artifacts pinned in a note are listed under it and open in the
//! artifact panel.

use hearth_core::builtin::artifact_pins::{pins_in, unpin, without_pins};
use hearth_core::builtin::notes::{Note, search};
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use serde_json::json;

use crate::icons::Icon;
use crate::runtime::use_runtime;
use crate::shared::toast::{Toast, ToastBar, edit};
use crate::views::cards::{ArtifactSlot, ArtifactSource};

#[component]
pub fn NotesView() -> impl IntoView {
    let rt = use_runtime();
    let version = rt.versions().notes;
    let query = RwSignal::new(String::new());
    let selected: RwSignal<Option<String>> = RwSignal::new(None);
    let toast: RwSignal<Option<Toast>> = RwSignal::new(None);
    let open: RwSignal<Option<ArtifactSource>> = RwSignal::new(None);

    let list = {
        let rt = rt.clone();
        Memo::new(move |_| {
            version.track();
            let q = query.get();
            let book = rt.data().notes.borrow();
            if q.trim().is_empty() {
                let mut all: Vec<(String, String, String)> = book
                    .iter()
                    .map(|n| (n.id.clone(), n.title.clone(), preview(&n.body)))
                    .collect();
                let order: std::collections::HashMap<&str, f64> =
                    book.iter().map(|n| (n.id.as_str(), n.updated_ms)).collect();
                all.sort_by(|a, b| order[b.0.as_str()].total_cmp(&order[a.0.as_str()]));
                all
            } else {
                search(&book, &q, 200)
                    .into_iter()
                    .map(|h| (h.id, h.title, h.snippet))
                    .collect()
            }
        })
    };
    let total = {
        let rt = rt.clone();
        move || {
            version.track();
            rt.data().notes.borrow().len()
        }
    };
    let current = {
        let rt = rt.clone();
        Memo::new(move |_| {
            version.track();
            selected
                .get()
                .and_then(|id| rt.data().notes.borrow().get(&id).cloned())
        })
    };
    let new_note = move |_| {
        edit(
            "notes",
            json!({"action": "create", "title": "Untitled note", "body": ""}),
            toast,
            move |out| {
                if let Some(id) = out
                    .structured
                    .as_ref()
                    .and_then(|v| v["note"]["id"].as_str())
                {
                    selected.set(Some(id.to_string()));
                }
            },
        );
    };

    view! {
        <section class="page notes" aria-labelledby="notes-title">
            <header class="page-head row">
                <div>
                    <h1 id="notes-title">"Notes"</h1>
                    <p class="muted">{move || match total() { 1 => "1 note. The notes skill sees and edits the same notes.".to_string(), n => format!("{n} notes. The notes skill sees and edits the same notes.") }}</p>
                </div>
                <button class="primary" on:click=new_note>"New note"</button>
            </header>
            <div class="split">
                <aside class="list-pane">
                    <input
                        type="search"
                        placeholder="Search notes"
                        aria-label="Search notes"
                        prop:value=move || query.get()
                        on:input=move |ev| query.set(event_target_value(&ev))
                    />
                    <Show
                        when=move || !list.with(Vec::is_empty)
                        fallback=move || view! {
                            <p class="empty muted">{move || if query.with(|q| q.trim().is_empty()) {
                                "No notes yet. Create one, or ask the assistant to take a note."
                            } else {
                                "No notes match."
                            }}</p>
                        }
                    >
                        <ul class="item-list" role="listbox" aria-label="Notes">
                            <For
                                each=move || list.get()
                                key=|(id, title, snippet)| (id.clone(), title.clone(), snippet.clone())
                                children=move |(id, title, snippet)| {
                                    let pick = id.clone();
                                    let is_sel = id.clone();
                                    view! {
                                        <li role="option"
                                            tabindex="0"
                                            aria-selected=move || (selected.get().as_deref() == Some(is_sel.as_str())).to_string()
                                            on:click=move |_| selected.set(Some(pick.clone()))
                                            on:keydown={
                                                let id = id.clone();
                                                move |ev: KeyboardEvent| if ev.key() == "Enter" { selected.set(Some(id.clone())) }
                                            }
                                        >
                                            <strong>{title}</strong>
                                            <span class="muted snippet">{snippet}</span>
                                        </li>
                                    }
                                }
                            />
                        </ul>
                    </Show>
                </aside>
                <div class="detail-pane">
                    {move || match current.get() {
                        Some(note) => view! { <NoteEditor note=note toast=toast open=open on_deleted=move || selected.set(None)/> }.into_any(),
                        None => view! {
                            <div class="empty-state small">
                                <Icon name="note"/>
                                <p>"Pick a note to read or edit it."</p>
                            </div>
                        }.into_any(),
                    }}
                </div>
            </div>
            <ToastBar toast=toast/>
            <ArtifactSlot source=open.into() close=Callback::new(move |()| open.set(None))/>
        </section>
    }
}

/// The list's snippet: the note's text, or the titles of what is pinned
/// in it when that is all it holds.
fn preview(body: &str) -> String {
    let text = without_pins(body);
    let flat = if text.trim().is_empty() {
        let titles: Vec<String> = pins_in(body).into_iter().map(|p| p.title).collect();
        if titles.is_empty() {
            String::new()
        } else {
            format!("Pinned: {}", titles.join(", "))
        }
    } else {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let mut p: String = flat.chars().take(90).collect();
    if flat.chars().count() > 90 {
        p.push('…');
    }
    p
}

#[component]
fn NoteEditor(
    note: Note,
    toast: RwSignal<Option<Toast>>,
    open: RwSignal<Option<ArtifactSource>>,
    on_deleted: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let id = note.id.clone();
    let title = RwSignal::new(note.title.clone());
    let tags = RwSignal::new(note.tags.join(", "));
    let body = RwSignal::new(note.body.clone());
    let editing = RwSignal::new(note.body.is_empty());
    let dirty = {
        let note = note.clone();
        move || {
            title.get() != note.title
                || body.get() != note.body
                || tags.get() != note.tags.join(", ")
        }
    };
    let save = {
        let id = id.clone();
        move || {
            let tag_list: Vec<String> = tags
                .get_untracked()
                .split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect();
            edit(
                "notes",
                json!({"action": "update", "id": id, "title": title.get_untracked(), "body": body.get_untracked(), "tags": tag_list}),
                toast,
                move |_| editing.set(false),
            );
        }
    };
    let delete = {
        let id = id.clone();
        move |_| {
            edit(
                "notes",
                json!({"action": "delete", "id": id}),
                toast,
                move |_| on_deleted(),
            )
        }
    };
    let rendered = move || hearth_markdown::to_safe_html(&without_pins(&body.get()));
    let pins = move || pins_in(&body.get());
    let unpin_at = {
        let id = id.clone();
        move |span: std::ops::Range<usize>| {
            let left = unpin(&body.get_untracked(), span);
            edit(
                "notes",
                json!({"action": "update", "id": id, "body": left}),
                toast,
                |_| {},
            );
        }
    };
    let note_id = id.clone();
    let save_key = save.clone();
    let save_click = save.clone();
    let dirty_btn = dirty.clone();
    view! {
        <article class="note-editor" data-note=id.clone()
            on:keydown=move |ev: KeyboardEvent| {
                if (ev.ctrl_key() || ev.meta_key()) && ev.key() == "s" {
                    ev.prevent_default();
                    save_key();
                }
            }
        >
            <input class="title-input" aria-label="Title" prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev))/>
            <input class="tags-input" aria-label="Tags" placeholder="Tags, separated by commas" prop:value=move || tags.get() on:input=move |ev| tags.set(event_target_value(&ev))/>
            <div class="editor-tabs" role="tablist">
                <button role="tab" aria-selected=move || editing.get().to_string() on:click=move |_| editing.set(true)>"Write"</button>
                <button role="tab" aria-selected=move || (!editing.get()).to_string() on:click=move |_| editing.set(false)>"Preview"</button>
            </div>
            <Show
                when=move || editing.get()
                fallback=move || {
                    let unpin_at = unpin_at.clone();
                    let note_id = note_id.clone();
                    view! {
                        // A note that holds only pins shows only their list.
                        <Show when=move || pins().is_empty() || !without_pins(&body.get()).trim().is_empty()>
                            <div class="markdown" inner_html=rendered on:click=crate::shared::markdown::copy_code></div>
                        </Show>
                        <Show when=move || !pins().is_empty()>
                            <section class="note-pins" aria-label="Pinned artifacts">
                                <h3>"Pinned artifacts"</h3>
                                <ul>
                                    {
                                        let unpin_at = unpin_at.clone();
                                        let note_id = note_id.clone();
                                        move || pins().into_iter().enumerate().map(|(i, pin)| {
                                            let artifact = pin.as_artifact(format!("{note_id}#{i}"));
                                            let span = pin.span.clone();
                                            let unpin_at = unpin_at.clone();
                                            view! {
                                                <li class="note-pin">
                                                    <Icon name="artifact"/>
                                                    <span class="note-pin-title">{pin.title.clone()}</span>
                                                    <span class="muted">{pin.kind.label()}</span>
                                                    <button type="button" class="small"
                                                        aria-label=format!("Open {}", pin.title)
                                                        on:click=move |_| open.set(Some(ArtifactSource::Pinned(Box::new(artifact.clone()))))>
                                                        "Open"
                                                    </button>
                                                    <button type="button" class="small ghost"
                                                        aria-label=format!("Unpin {}", pin.title)
                                                        on:click=move |_| unpin_at(span.clone())>
                                                        "Unpin"
                                                    </button>
                                                </li>
                                            }
                                        }).collect_view()
                                    }
                                </ul>
                            </section>
                        </Show>
                    }
                }
            >
                <textarea class="body-input" aria-label="Body (Markdown)" prop:value=move || body.get() on:input=move |ev| body.set(event_target_value(&ev))></textarea>
            </Show>
            <div class="editor-actions">
                <button class="danger-outline" on:click=delete>"Delete"</button>
                <span class="muted">{move || if dirty() { "Unsaved changes · Ctrl+S saves" } else { "Saved" }}</span>
                <button class="primary" disabled=move || !dirty_btn() on:click=move |_| save_click()>"Save"</button>
            </div>
        </article>
    }
}
