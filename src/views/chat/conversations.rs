//! The conversation list beside the chat: new chat, search (core's
//! `agent::search`), open, rename, export (Markdown or JSON) and delete
//! with undo. Keyboard: arrows move between conversations, F2 renames,
//! Delete deletes; the export menu's items take arrows and Esc.

use hearth_core::assistant::agent::export::{
    conversation_json, conversation_markdown, json_file_name, markdown_file_name,
};
use hearth_core::assistant::agent::search;
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::assistant::use_assistant;
use crate::icons::Icon;
use crate::runtime::use_runtime;

/// "14:05" today, "12 Mar" earlier this year, "12 Mar 2024" before.
fn when(ms: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms));
    let today = js_sys::Date::new_0();
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS[(d.get_month() as usize).min(11)];
    if d.get_full_year() == today.get_full_year()
        && d.get_month() == today.get_month()
        && d.get_date() == today.get_date()
    {
        crate::platform::format_time(ms)
    } else if d.get_full_year() == today.get_full_year() {
        format!("{} {month}", d.get_date())
    } else {
        format!("{} {month} {}", d.get_date(), d.get_full_year())
    }
}

/// One row as the list shows it.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    id: String,
    title: String,
    detail: String,
    running: bool,
    asking: bool,
}

fn focus_row(offset: isize) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(rows) = doc.query_selector_all(".conversation-list .conversation-open") else {
        return;
    };
    let active = doc.active_element();
    let n = rows.length() as isize;
    let mut at = -1;
    for i in 0..n {
        let same = rows
            .item(i as u32)
            .zip(active.clone())
            .is_some_and(|(r, a)| r.is_same_node(Some(&a)));
        if same {
            at = i;
        }
    }
    let next = (at + offset).clamp(0, n - 1);
    if let Some(el) = rows
        .item(next as u32)
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// The two ways a conversation is exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Markdown,
    Json,
}

/// Offers conversation `id` as a file; says which, or why not.
fn export(a: &crate::assistant::Assistant, id: &str, format: Format) -> Result<String, String> {
    let c = a
        .conversations
        .with_untracked(|l| l.iter().find(|c| c.id == id).cloned())
        .ok_or("That conversation is not saved yet: say or run something in it first.")?;
    let (name, text, mime) = match format {
        Format::Markdown => (
            markdown_file_name(&c),
            conversation_markdown(&c),
            "text/markdown",
        ),
        Format::Json => (
            json_file_name(&c),
            conversation_json(&c),
            "application/json",
        ),
    };
    crate::platform::download_text(&name, mime, &text)
        .map(|()| name)
        .map_err(|e| format!("The export could not be saved: {e}"))
}

/// Moves focus among the open export menu's items.
fn focus_item(from: &web_sys::EventTarget, offset: isize) {
    let Some(menu) = from
        .dyn_ref::<web_sys::Element>()
        .and_then(|e| e.closest(".export-menu").ok().flatten())
    else {
        return;
    };
    let Ok(items) = menu.query_selector_all("[role=menuitem]") else {
        return;
    };
    let n = items.length() as isize;
    let at = (0..n)
        .find(|&i| {
            items
                .item(i as u32)
                .is_some_and(|it| it.is_same_node(from.dyn_ref::<web_sys::Node>()))
        })
        .unwrap_or(0);
    if let Some(el) = items
        .item((at + offset).rem_euclid(n.max(1)) as u32)
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

#[component]
pub fn ConversationList() -> impl IntoView {
    let assistant = use_assistant();
    let rt = use_runtime();
    let query = RwSignal::new(String::new());
    let renaming: RwSignal<Option<String>> = RwSignal::new(None);
    let rename_error: RwSignal<Option<String>> = RwSignal::new(None);
    // The conversation whose export menu is open, and what the last
    // export said.
    let exporting: RwSignal<Option<String>> = RwSignal::new(None);
    let exported: RwSignal<Option<String>> = RwSignal::new(None);
    let queue = rt.approver().queue;
    let (list, running) = (assistant.conversations, assistant.running);
    let rows = Memo::new(move |_| {
        let q = query.get();
        let running = running.get();
        let asking: Vec<String> = queue.with(|q| {
            q.iter()
                .filter_map(|p| p.request.call.conversation_id.clone())
                .collect()
        });
        let row = |id: &str, title: &str, detail: String| Row {
            id: id.to_string(),
            title: title.to_string(),
            detail,
            running: running.iter().any(|r| r == id),
            asking: asking.iter().any(|a| a == id),
        };
        list.with(|l| {
            if q.trim().is_empty() {
                l.iter()
                    .map(|c| row(&c.id, &c.title, when(c.updated_at_ms)))
                    .collect::<Vec<_>>()
            } else {
                search(l, &q)
                    .into_iter()
                    .map(|h| row(&h.conversation_id, &h.title, h.snippet))
                    .collect()
            }
        })
    });

    let new_chat = {
        let a = assistant.clone();
        move |_| a.new_conversation()
    };

    view! {
        <aside class="conversations" aria-label="Conversations">
            <div class="conversations-head">
                <button class="new-chat" on:click=new_chat title="New chat (Ctrl+Shift+O)">
                    <Icon name="plus"/>" New chat"
                </button>
            </div>
            <input
                type="search"
                class="conversation-search"
                placeholder="Search conversations"
                aria-label="Search conversations"
                prop:value=move || query.get()
                on:input=move |ev| query.set(event_target_value(&ev))
                on:keydown=move |ev: KeyboardEvent| {
                    if ev.key() == "ArrowDown" {
                        ev.prevent_default();
                        focus_row(0);
                    } else if ev.key() == "Escape" {
                        query.set(String::new());
                    }
                }
            />
            <Show when=move || rename_error.get().is_some()>
                <p class="inline-error" role="alert">{move || rename_error.get().unwrap_or_default()}</p>
            </Show>
            <Show when=move || exported.get().is_some()>
                <p class="muted export-status" role="status">{move || exported.get().unwrap_or_default()}</p>
            </Show>
            <ul class="conversation-list">
                <For
                    each=move || rows.get()
                    key=|r| (r.id.clone(), r.title.clone(), r.detail.clone(), r.running, r.asking)
                    children=move |r| view! {
                        <ConversationRow row=r renaming=renaming rename_error=rename_error exporting=exporting exported=exported/>
                    }
                />
            </ul>
            <Show when=move || list.with(Vec::is_empty) && query.with(String::is_empty)>
                <p class="muted conversations-empty">"No conversations yet. What you say or run here is kept in this browser."</p>
            </Show>
            <Show when=move || !query.with(|q| q.trim().is_empty()) && rows.with(Vec::is_empty)>
                <p class="muted conversations-empty">{move || format!("Nothing matches “{}”.", query.get().trim())}</p>
            </Show>
        </aside>
    }
}

/// The title being renamed: focused and selected on open; Enter or
/// leaving the field saves, Esc cancels.
/// One conversation in the list: open it, rename it (F2), export it or
/// delete it (Delete), with arrows moving between rows.
#[component]
fn ConversationRow(
    row: Row,
    renaming: RwSignal<Option<String>>,
    rename_error: RwSignal<Option<String>>,
    exporting: RwSignal<Option<String>>,
    exported: RwSignal<Option<String>>,
) -> impl IntoView {
    let assistant = use_assistant();
    let current = assistant.current;
    let r = row;
    let a = assistant.clone();
    let id = r.id.clone();
    let selected = {
        let id = id.clone();
        move || current.get().as_deref() == Some(id.as_str())
    };
    let is_renaming = {
        let id = id.clone();
        move || renaming.get().as_deref() == Some(id.as_str())
    };
    let (open_id, del_id, ren_id, key_id, save_id) =
        (id.clone(), id.clone(), id.clone(), id.clone(), id.clone());
    let (a_open, a_del, a_key, a_save) = (a.clone(), a.clone(), a.clone(), a.clone());
    let a_export = a.clone();
    let menu_id = id.clone();
    let menu_open = {
        let id = id.clone();
        move || exporting.get().as_deref() == Some(id.as_str())
    };
    let title = r.title.clone();
    let title_for_input = r.title.clone();
    let save = move |value: String| match a_save.rename(&save_id, &value) {
        Ok(()) => {
            rename_error.set(None);
            renaming.set(None);
        }
        Err(e) => rename_error.set(Some(e.to_string())),
    };
    view! {
        <li class="conversation" class:selected=selected.clone() data-id=id.clone()>
            <Show
                when=is_renaming
                fallback={
                    let title = title.clone();
                    let detail = r.detail.clone();
                    let open_id = open_id.clone();
                    let a_open = a_open.clone();
                    let selected = selected.clone();
                    let key_id = key_id.clone();
                    let a_key = a_key.clone();
                    let ren_id = ren_id.clone();
                    move || {
                        let open_id = open_id.clone();
                        let a_open = a_open.clone();
                        let key_id = key_id.clone();
                        let a_key = a_key.clone();
                        let ren_id = ren_id.clone();
                        view! {
                            <button
                                class="conversation-open"
                                aria-current=selected().then_some("true")
                                on:click=move |_| a_open.open(&open_id)
                                on:keydown=move |ev: KeyboardEvent| match ev.key().as_str() {
                                    "ArrowDown" => { ev.prevent_default(); focus_row(1); }
                                    "ArrowUp" => { ev.prevent_default(); focus_row(-1); }
                                    "F2" => { ev.prevent_default(); renaming.set(Some(ren_id.clone())); }
                                    "Delete" => { ev.prevent_default(); a_key.delete(&key_id); }
                                    _ => {}
                                }
                            >
                                <span class="conversation-title" title=title.clone()>{title.clone()}</span>
                                <span class="conversation-detail muted">{detail.clone()}</span>
                                {r.running.then(|| view! { <span class="conversation-badge running">"Replying…"</span> })}
                                {r.asking.then(|| view! { <span class="conversation-badge asking">"Needs approval"</span> })}
                            </button>
                        }
                    }
                }
            >
                <RenameInput
                    title=title_for_input.clone()
                    on_save=Callback::new(save.clone())
                    on_cancel=Callback::new(move |_| {
                        rename_error.set(None);
                        renaming.set(None);
                    })
                />
            </Show>
            <div class="conversation-actions" class:open=menu_open.clone()>
                <button class="icon-button" title="Export" aria-label=format!("Export {}", r.title)
                    aria-haspopup="menu"
                    aria-expanded={
                        let menu_open = menu_open.clone();
                        move || menu_open().to_string()
                    }
                    on:click={
                        let id = id.clone();
                        move |_| {
                            exporting.update(|e| {
                                *e = if e.as_deref() == Some(id.as_str()) { None } else { Some(id.clone()) };
                            });
                            // The menu's first item takes the keyboard.
                            request_animation_frame(|| {
                                if let Some(el) = web_sys::window()
                                    .and_then(|w| w.document())
                                    .and_then(|d| d.query_selector(".export-menu [role=menuitem]").ok().flatten())
                                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                                {
                                    let _ = el.focus();
                                }
                            });
                        }
                    }>
                    <Icon name="download"/>
                </button>
                <button class="icon-button" title="Rename (F2)" aria-label=format!("Rename {}", r.title)
                    on:click={
                        let id = id.clone();
                        move |_| renaming.set(Some(id.clone()))
                    }>
                    <Icon name="pencil"/>
                </button>
                <button class="icon-button" title="Delete (Del)" aria-label=format!("Delete {}", r.title)
                    on:click={
                        let id = del_id.clone();
                        let a = a_del.clone();
                        move |_| a.delete(&id)
                    }>
                    <Icon name="trash"/>
                </button>
            </div>
            <Show when=menu_open.clone()>
                {
                    let id = menu_id.clone();
                    let a = a_export.clone();
                    let pick = move |format: Format| {
                        exporting.set(None);
                        exported.set(Some(match export(&a, &id, format) {
                            Ok(name) => format!("Saved {name}."),
                            Err(e) => e,
                        }));
                    };
                    let (pick_md, pick_json) = (pick.clone(), pick);
                    view! {
                        <div class="export-menu" role="menu" aria-label="Export as"
                            on:keydown=move |ev: KeyboardEvent| match ev.key().as_str() {
                                "Escape" => {
                                    ev.prevent_default();
                                    ev.stop_propagation();
                                    // Back to the button that opened it.
                                    let opener = ev
                                        .target()
                                        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                                        .and_then(|t| t.closest("li").ok().flatten())
                                        .and_then(|li| li.query_selector("[aria-haspopup=menu]").ok().flatten())
                                        .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok());
                                    exporting.set(None);
                                    if let Some(b) = opener {
                                        let _ = b.focus();
                                    }
                                }
                                "ArrowDown" | "ArrowRight" => { ev.prevent_default(); if let Some(t) = ev.target() { focus_item(&t, 1); } }
                                "ArrowUp" | "ArrowLeft" => { ev.prevent_default(); if let Some(t) = ev.target() { focus_item(&t, -1); } }
                                _ => {}
                            }
                        >
                            <button role="menuitem" on:click=move |_| pick_md(Format::Markdown)>
                                "Markdown (.md)"
                            </button>
                            <button role="menuitem" on:click=move |_| pick_json(Format::Json)>
                                "JSON (.json)"
                            </button>
                        </div>
                    }
                }
            </Show>
        </li>
    }
}

#[component]
fn RenameInput(title: String, on_save: Callback<String>, on_cancel: Callback<()>) -> impl IntoView {
    let input = NodeRef::<leptos::html::Input>::new();
    let done = StoredValue::new(false);
    Effect::new(move |_| {
        if let Some(el) = input.get() {
            let _ = el.focus();
            el.select();
        }
    });
    view! {
        <input
            node_ref=input
            class="rename-input"
            aria-label="Conversation title"
            value=title
            on:keydown=move |ev: KeyboardEvent| match ev.key().as_str() {
                "Enter" => {
                    ev.prevent_default();
                    done.set_value(true);
                    on_save.run(event_target_value(&ev));
                }
                "Escape" => {
                    ev.prevent_default();
                    ev.stop_propagation();
                    done.set_value(true);
                    on_cancel.run(());
                }
                _ => {}
            }
            on:blur=move |ev| {
                if !done.get_value() {
                    on_save.run(event_target_value(&ev));
                }
            }
        />
    }
}
