//! Memory: what Hearth remembers about you — the same facts the memory
//! skill recalls. Add, edit, search and forget them here.

use hearth_core::builtin::memory::{Memory, recall};
use leptos::ev::{KeyboardEvent, SubmitEvent};
use leptos::html;
use leptos::prelude::*;
use serde_json::json;

use crate::runtime::use_runtime;
use crate::shared::toast::{Toast, ToastBar, edit};

#[component]
pub fn MemoryView() -> impl IntoView {
    let rt = use_runtime();
    let version = rt.versions().memories;
    let toast: RwSignal<Option<Toast>> = RwSignal::new(None);
    let query = RwSignal::new(String::new());
    let fact = RwSignal::new(String::new());

    let shown = {
        let rt = rt.clone();
        Memo::new(move |_| {
            version.track();
            let q = query.get();
            let all = rt.data().memories.borrow();
            if q.trim().is_empty() {
                let mut v: Vec<(Memory, Option<f64>)> =
                    all.iter().cloned().map(|m| (m, None)).collect();
                v.sort_by(|a, b| b.0.updated_ms.total_cmp(&a.0.updated_ms));
                v
            } else {
                recall(&all, &q, 50)
                    .into_iter()
                    .filter_map(|r| all.get(&r.id).cloned().map(|m| (m, Some(r.score))))
                    .collect()
            }
        })
    };
    let add = move |ev: SubmitEvent| {
        ev.prevent_default();
        let text = fact.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        // Emptied once stored, unless the person is already typing more.
        edit(
            "memory",
            json!({"action": "remember", "text": text.clone()}),
            toast,
            move |_| {
                if fact.get_untracked() == text {
                    fact.set(String::new());
                }
            },
        );
    };

    view! {
        <section class="page memory" aria-labelledby="memory-title">
            <header class="page-head">
                <h1 id="memory-title">"Memory"</h1>
                <p class="muted">"What Hearth remembers about you. The assistant can recall these when they help; edit or delete anything."</p>
            </header>
            <form class="add-task" on:submit=add>
                <input aria-label="Something to remember" placeholder="Remember that…" prop:value=move || fact.get() on:input=move |ev| fact.set(event_target_value(&ev))/>
                <button type="submit" class="primary">"Remember"</button>
            </form>
            <input type="search" class="wide-search" aria-label="Search memories" placeholder="Search what Hearth remembers" prop:value=move || query.get() on:input=move |ev| query.set(event_target_value(&ev))/>
            <Show
                when=move || !shown.with(Vec::is_empty)
                fallback=move || view! {
                    <p class="empty muted">{move || if query.with(|q| q.trim().is_empty()) {
                        "Hearth doesn't remember anything about you yet."
                    } else {
                        "Nothing remembered matches."
                    }}</p>
                }
            >
                <ul class="memory-list">
                    <For
                        each=move || shown.get()
                        key=|(m, s)| (m.id.clone(), m.updated_ms.to_bits(), s.map(f64::to_bits))
                        children=move |(m, score)| view! { <MemoryRow memory=m score=score toast=toast/> }
                    />
                </ul>
            </Show>
            <ToastBar toast=toast/>
        </section>
    }
}

#[component]
fn MemoryRow(memory: Memory, score: Option<f64>, toast: RwSignal<Option<Toast>>) -> impl IntoView {
    let editing = RwSignal::new(false);
    let text = RwSignal::new(memory.text.clone());
    let id = memory.id.clone();
    let field = NodeRef::<html::Input>::new();
    let edit_button = NodeRef::<html::Button>::new();
    // The field takes the keyboard when editing starts.
    Effect::new(move |_| {
        if editing.get()
            && let Some(el) = field.get()
        {
            let _ = el.focus();
            el.select();
        }
    });
    // Leaving the field without saving puts the text back and the
    // keyboard on Edit again.
    let original = memory.text.clone();
    let cancel = move || {
        text.set(original.clone());
        editing.set(false);
        request_animation_frame(move || {
            if let Some(b) = edit_button.get_untracked() {
                let _ = b.focus();
            }
        });
    };
    let save = {
        let id = id.clone();
        move || {
            let now = text.get_untracked();
            if now.trim().is_empty() {
                toast.set(Some(Toast::error(
                    "A memory needs some text; use Forget to remove it.",
                )));
                return;
            }
            edit(
                "memory",
                json!({"action": "update", "id": id, "text": now}),
                toast,
                move |_| editing.set(false),
            )
        }
    };
    let forget = move |_| {
        edit(
            "memory",
            json!({"action": "forget", "id": id}),
            toast,
            |_| {},
        )
    };
    let on_key = {
        let save = save.clone();
        let cancel = cancel.clone();
        move |ev: KeyboardEvent| match ev.key().as_str() {
            "Enter" => {
                ev.prevent_default();
                save();
            }
            "Escape" => {
                ev.prevent_default();
                ev.stop_propagation();
                cancel();
            }
            _ => {}
        }
    };
    view! {
        <li class="memory-item" data-memory=memory.id.clone()>
            <Show
                when=move || editing.get()
                fallback=move || view! { <span class="memory-text">{move || text.get()}</span> }
            >
                <input class="memory-edit" aria-label="Edit memory" node_ref=field prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    on:keydown=on_key.clone()/>
            </Show>
            {(!memory.tags.is_empty()).then(|| view! {
                <ul class="tags">{memory.tags.iter().map(|t| view! { <li class="tag">{t.clone()}</li> }).collect_view()}</ul>
            })}
            {score.map(|s| view! { <span class="chip" title="How well it matches">{format!("{:.0}%", s * 100.0)}</span> })}
            <span class="row-actions">
                <Show
                    when=move || editing.get()
                    fallback=move || view! { <button class="small" node_ref=edit_button on:click=move |_| editing.set(true)>"Edit"</button> }
                >
                    <button class="small primary" on:click={
                        let save = save.clone();
                        move |_| save()
                    }>"Save"</button>
                    <button class="small" on:click={
                        let cancel = cancel.clone();
                        move |_| cancel()
                    }>"Cancel"</button>
                </Show>
                <button class="small danger-outline" on:click=forget>"Forget"</button>
            </span>
        </li>
    }
}
