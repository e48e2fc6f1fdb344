//! Tasks: the same to-do list the tasks skill manages — add, complete,
//! reopen and delete, filtered the way the skill filters.

use hearth_core::builtin::tasks::{Date, Priority, Task, TaskStatus, compare};
use leptos::ev::{KeyboardEvent, SubmitEvent};
use leptos::html;
use leptos::prelude::*;
use serde_json::json;
use wasm_bindgen::JsCast;

use crate::platform::local_clock;
use crate::runtime::use_runtime;
use crate::shared::toast::{Toast, ToastBar, edit};

#[derive(Clone, Copy, PartialEq, Eq)]
enum View {
    Open,
    Overdue,
    Done,
    All,
}

impl View {
    const ALL: [View; 4] = [View::Open, View::Overdue, View::Done, View::All];
    fn label(self) -> &'static str {
        match self {
            View::Open => "Open",
            View::Overdue => "Overdue",
            View::Done => "Done",
            View::All => "All",
        }
    }
    fn shows(self, t: &Task, today: Date) -> bool {
        match self {
            View::Open => t.status == TaskStatus::Open,
            View::Overdue => t.is_overdue(today),
            View::Done => t.status == TaskStatus::Done,
            View::All => true,
        }
    }
}

fn today() -> Date {
    let (year, month, day) = local_clock().local_date();
    Date { year, month, day }
}

#[component]
pub fn TasksView() -> impl IntoView {
    let rt = use_runtime();
    let version = rt.versions().tasks;
    let view_kind = RwSignal::new(View::Open);
    let toast: RwSignal<Option<Toast>> = RwSignal::new(None);
    let title = RwSignal::new(String::new());
    let due = RwSignal::new(String::new());
    let priority = RwSignal::new("normal".to_string());

    let tasks = {
        let rt = rt.clone();
        Memo::new(move |_| {
            version.track();
            let today = today();
            let list = rt.data().tasks.borrow();
            let mut v: Vec<Task> = list
                .iter()
                .filter(|t| view_kind.get().shows(t, today))
                .cloned()
                .collect();
            v.sort_by(|a, b| compare(a, b, today));
            v
        })
    };
    let counts = {
        let rt = rt.clone();
        move |k: View| {
            version.track();
            let today = today();
            rt.data()
                .tasks
                .borrow()
                .iter()
                .filter(|t| k.shows(t, today))
                .count()
        }
    };
    let add = move |ev: SubmitEvent| {
        ev.prevent_default();
        let t = title.get_untracked();
        if t.trim().is_empty() {
            toast.set(Some(Toast::error("Give the task a title.")));
            return;
        }
        let mut args =
            json!({"action": "create", "title": t.clone(), "priority": priority.get_untracked()});
        let d = due.get_untracked();
        if !d.is_empty() {
            args["due"] = json!(d.clone());
        }
        // The fields empty once the task is stored, unless the person has
        // already started typing the next one.
        edit("tasks", args, toast, move |_| {
            if title.get_untracked() == t {
                title.set(String::new());
            }
            if due.get_untracked() == d {
                due.set(String::new());
            }
        });
    };

    view! {
        <section class="page tasks" aria-labelledby="tasks-title">
            <header class="page-head">
                <h1 id="tasks-title">"Tasks"</h1>
                <p class="muted">"The tasks skill sees and changes this same list."</p>
            </header>
            <form class="add-task" on:submit=add>
                <input aria-label="New task" placeholder="Add a task…" prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev))/>
                <input type="date" aria-label="Due date" prop:value=move || due.get() on:input=move |ev| due.set(event_target_value(&ev))/>
                <select aria-label="Priority" prop:value=move || priority.get() on:change=move |ev| priority.set(event_target_value(&ev))>
                    <option value="low">"Low"</option>
                    <option value="normal">"Normal"</option>
                    <option value="high">"High"</option>
                </select>
                <button type="submit" class="primary">"Add"</button>
            </form>
            <div class="tabs" role="tablist" aria-label="Show">
                {View::ALL.into_iter().map(|k| {
                    let counts = counts.clone();
                    view! {
                        <button role="tab" aria-selected=move || (view_kind.get() == k).to_string() on:click=move |_| view_kind.set(k)>
                            {k.label()}" "<span class="count">{move || counts(k)}</span>
                        </button>
                    }
                }).collect_view()}
            </div>
            <Show
                when=move || !tasks.with(Vec::is_empty)
                fallback=move || view! {
                    <p class="empty muted">{move || match view_kind.get() {
                        View::Open => "Nothing to do. Add a task above, or ask the assistant.",
                        View::Overdue => "Nothing overdue.",
                        View::Done => "Nothing done yet.",
                        View::All => "No tasks yet.",
                    }}</p>
                }
            >
                <ul class="task-list">
                    <For
                        each=move || tasks.get()
                        key=|t| (t.id.clone(), t.updated_ms.to_bits())
                        children=move |t| view! { <TaskRow task=t toast=toast/> }
                    />
                </ul>
            </Show>
            <ToastBar toast=toast/>
        </section>
    }
}

#[component]
fn TaskRow(task: Task, toast: RwSignal<Option<Toast>>) -> impl IntoView {
    let done = task.status == TaskStatus::Done;
    let overdue = task.is_overdue(today());
    let id = task.id.clone();
    let editing = RwSignal::new(false);
    let toggle = {
        let id = id.clone();
        move |_| {
            let action = if done { "reopen" } else { "complete" };
            edit("tasks", json!({"action": action, "id": id}), toast, |_| {});
        }
    };
    let delete = {
        let id = id.clone();
        move |_| {
            edit(
                "tasks",
                json!({"action": "delete", "id": id}),
                toast,
                |_| {},
            )
        }
    };
    let priority = match task.priority {
        Priority::High => Some("High"),
        Priority::Low => Some("Low"),
        Priority::Normal => None,
    };
    let task_id = task.id.clone();
    let editor_task = task.clone();
    view! {
        <li class="task" class:done=done class:overdue=overdue class:editing=move || editing.get() data-task=task_id>
            <Show
                when=move || editing.get()
                fallback={
                    let task = task.clone();
                    let toggle = toggle.clone();
                    let delete = delete.clone();
                    move || {
                        let task = task.clone();
                        view! {
                            <input type="checkbox" prop:checked=done on:change=toggle.clone() aria-label=format!("Done: {}", task.title)/>
                            <span class="task-title">{task.title.clone()}</span>
                            {(!task.tags.is_empty()).then(|| view! {
                                <ul class="tags" aria-label="Tags">
                                    {task.tags.iter().map(|t| view! { <li class="tag">{format!("#{t}")}</li> }).collect_view()}
                                </ul>
                            })}
                            {priority.map(|p| view! { <span class=format!("chip priority-{}", p.to_lowercase())>{p}</span> })}
                            {task.due.map(|d| view! {
                                <span class="chip due" class:overdue=overdue>{if overdue { "Overdue · " } else { "Due " }}{String::from(d)}</span>
                            })}
                            <button class="small" aria-label=format!("Edit {}", task.title) on:click=move |_| editing.set(true)>"Edit"</button>
                            <button class="icon-button" aria-label=format!("Delete {}", task.title) on:click=delete.clone()>"×"</button>
                        }
                    }
                }
            >
                <TaskEditor task=editor_task.clone() toast=toast editing=editing/>
            </Show>
        </li>
    }
}

/// A task's title, due date and priority, edited in its row: Enter or
/// Save stores them, Esc or Cancel leaves them as they were.
#[component]
fn TaskEditor(
    task: Task,
    toast: RwSignal<Option<Toast>>,
    editing: RwSignal<bool>,
) -> impl IntoView {
    let title = RwSignal::new(task.title.clone());
    let due = RwSignal::new(task.due.map(String::from).unwrap_or_default());
    let priority = RwSignal::new(
        match task.priority {
            Priority::High => "high",
            Priority::Low => "low",
            Priority::Normal => "normal",
        }
        .to_string(),
    );
    let field = NodeRef::<html::Input>::new();
    Effect::new(move |_| {
        if let Some(el) = field.get() {
            let _ = el.focus();
        }
    });
    let id = task.id.clone();
    let save = move || {
        let t = title.get_untracked();
        if t.trim().is_empty() {
            toast.set(Some(Toast::error("Give the task a title.")));
            return;
        }
        // An empty due date clears it.
        let args = json!({
            "action": "update",
            "id": id,
            "title": t,
            "due": due.get_untracked(),
            "priority": priority.get_untracked(),
        });
        edit("tasks", args, toast, move |_| editing.set(false));
    };
    let on_key = {
        let save = save.clone();
        move |ev: KeyboardEvent| {
            // Enter on a button is its click.
            let on_button = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .is_some_and(|e| e.tag_name().eq_ignore_ascii_case("button"));
            match ev.key().as_str() {
                "Enter" if !on_button => {
                    ev.prevent_default();
                    save();
                }
                "Escape" => {
                    ev.prevent_default();
                    ev.stop_propagation();
                    editing.set(false);
                }
                _ => {}
            }
        }
    };
    view! {
        <div class="task-editor" on:keydown=on_key>
            <input aria-label="Title" node_ref=field prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev))/>
            <input type="date" aria-label="Due date" prop:value=move || due.get() on:input=move |ev| due.set(event_target_value(&ev))/>
            <select aria-label="Priority" prop:value=move || priority.get() on:change=move |ev| priority.set(event_target_value(&ev))>
                <option value="low">"Low"</option>
                <option value="normal">"Normal"</option>
                <option value="high">"High"</option>
            </select>
            <span class="row-actions">
                <button type="button" class="small primary" on:click={
                    let save = save.clone();
                    move |_| save()
                }>"Save"</button>
                <button type="button" class="small" on:click=move |_| editing.set(false)>"Cancel"</button>
            </span>
        </div>
    }
}
