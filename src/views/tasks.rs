//! Tasks: the same to-do list the tasks skill manages — add, complete,
//! reopen and delete, filtered the way the skill filters.

use hearth_core::tasks::{Date, Priority, Task, TaskStatus, compare};
use leptos::ev::SubmitEvent;
use leptos::prelude::*;
use serde_json::json;

use crate::platform::local_clock;
use crate::runtime::use_runtime;
use crate::views::toast::{Toast, ToastBar, edit};

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
    let toggle = {
        let id = id.clone();
        move |_| {
            let action = if done { "reopen" } else { "complete" };
            edit("tasks", json!({"action": action, "id": id}), toast, |_| {});
        }
    };
    let delete = move |_| {
        edit(
            "tasks",
            json!({"action": "delete", "id": id}),
            toast,
            |_| {},
        )
    };
    let priority = match task.priority {
        Priority::High => Some("High"),
        Priority::Low => Some("Low"),
        Priority::Normal => None,
    };
    view! {
        <li class="task" class:done=done class:overdue=overdue data-task=task.id.clone()>
            <input type="checkbox" prop:checked=done on:change=toggle aria-label=format!("Done: {}", task.title)/>
            <span class="task-title">{task.title.clone()}</span>
            {priority.map(|p| view! { <span class=format!("chip priority-{}", p.to_lowercase())>{p}</span> })}
            {task.due.map(|d| view! {
                <span class="chip due" class:overdue=overdue>{if overdue { "Overdue · " } else { "Due " }}{String::from(d)}</span>
            })}
            <button class="icon-button" aria-label=format!("Delete {}", task.title) on:click=delete>"×"</button>
        </li>
    }
}
